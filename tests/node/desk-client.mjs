// A client without elicitation at the approval desk: the TypeScript SDK (npm
// `@modelcontextprotocol/client`, 2.x) with its defaults (no elicitation handler; a 60 s
// request timeout) over stdio under `--approval ask`. Its write is answered at once, inside
// that timeout, that its approval is pending (the approval's id, where the person decides);
// the person approves it in their terminal (`seneschal approvals approve`); the same call made
// again applies it. Prints how long the first answer took.
// Usage: node desk-client.mjs path/to/seneschal REPO
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [bin, repo] = process.argv.slice(2);
const fail = (why) => { console.error("desk-client: " + why); process.exit(1); };
const client = new Client({ name: "ts-desk-check", version: "1" });
await client.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--approval", "ask"], cwd: repo }));
const call = { name: "files_write", arguments: { path: "notes/ts.md", content: "written through the TypeScript SDK\n" } };
const started = Date.now();
const first = await client.callTool(call);
const took = Date.now() - started;
const error = (first._meta || {})["seneschal/error"] || {};
if (!first.isError || !error.data || error.data.pending !== true) fail("the first answer is not a pending approval: " + JSON.stringify(first));
const text = first.content[0].text;
if (!text.includes(error.data.desk.slice(0, 8)) || !text.includes("same call again")) fail("the answer does not say what to do: " + text);
if (existsSync(repo + "/notes/ts.md")) fail("a pending write wrote");
execFileSync(bin, ["approvals", "approve", error.data.desk], { cwd: repo, stdio: "inherit" });
const second = await client.callTool(call);
if (second.isError) fail("the approved write failed: " + JSON.stringify(second));
if (readFileSync(repo + "/notes/ts.md", "utf8") !== call.arguments.content) fail("the file is not what was approved");
await client.close();
console.log(`ok TypeScript SDK without elicitation: pending answered in ${took} ms (its request timeout: 60,000 ms), applied when made again after the person approved`);
