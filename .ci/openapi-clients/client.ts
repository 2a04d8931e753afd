// A client of seneschal's HTTP API typed by `openapi-typescript` from generated/openapi.json
// (.ci/openapi-clients.sh). It type-checks with `tsc --strict` and calls seven operations of a
// live server on a scratch repository, using each answer through its generated type.
//
//   node client.js http://127.0.0.1:PORT
import type { paths } from "./schema.js";

declare const process: { argv: string[]; env: Record<string, string | undefined>; exitCode?: number };

type Op<P extends keyof paths, M extends "get" | "post"> = paths[P] extends Record<M, infer O>
  ? O
  : never;
type Ok<O> = O extends { responses: { 200: { content: { "application/json": infer J } } } }
  ? J
  : never;
type Query<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type Body<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : never;
type Header<O> = O extends { parameters: { header?: infer H } } ? H : never;
type Gets = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type Posts = { [P in keyof paths]: paths[P] extends { post: object } ? P : never }[keyof paths];

const base = process.argv[2];

async function answer<J>(method: string, url: string, response: Response): Promise<J> {
  if (response.status !== 200) {
    throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  }
  return (await response.json()) as J;
}

async function get<P extends Gets>(path: P, query?: Query<Op<P, "get">>): Promise<Ok<Op<P, "get">>> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    params.append(k, String(v));
  }
  const url = `${base}${path}?${params}`;
  return answer("GET", url, await fetch(url));
}

async function send<P extends Posts>(
  path: P,
  body: Body<Op<P, "post">>,
  header?: Header<Op<P, "post">>,
): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...((header ?? {}) as Record<string, string>) },
    body: JSON.stringify(body),
  });
}

async function post<P extends Posts>(
  path: P,
  body: Body<Op<P, "post">>,
  header?: Header<Op<P, "post">>,
): Promise<Ok<Op<P, "post">>> {
  return answer("POST", `${base}${path}`, await send(path, body, header));
}

function expect(what: string, ok: boolean): void {
  if (!ok) {
    throw new Error(`unexpected answer: ${what}`);
  }
  console.log(`ok: ${what}`);
}

async function main(): Promise<void> {
  const status = await get("/api/v1/repo/status");
  const branch: string | null = status.branch;
  expect(`repo.status: branch ${branch}, clean ${status.clean}`, branch === "main" && status.clean);

  const log = await get("/api/v1/repo/log", { limit: 5 });
  const subjects: string[] = log.commits.map((c) => c.subject);
  expect(`repo.log: ${subjects.join(", ")}`, subjects[0] === "initial" && !log.truncated);

  const file = await get("/api/v1/files/read", { path: "README.md" });
  const content: string | null = file.content;
  const total: number | null = file.total_lines;
  expect(`files.read: ${total} lines`, content !== null && content.startsWith("# scratch"));

  // The front matter is a free-form object: a Record<string, unknown>, not Record<string, never>.
  const frontMatter: Record<string, unknown> = { title: "Releasing", status: "draft" };
  const guide: Body<Op<"/api/v1/knowledge/create", "post">> = {
    kind: "guide",
    id: "releasing",
    front_matter: frontMatter,
    body: "# Releasing\n\nTag, then publish.\n",
  };
  // The person's own script: the desk secret approves, the token of the dry run pins the plan
  // reviewed; a token of another request is refused.
  const dry = await send("/api/v1/knowledge/create", { ...guide, dry_run: true });
  const token = dry.headers.get("Seneschal-Approval-Token");
  expect(`knowledge.create dry run: status ${dry.status}, a token`, dry.status === 200 && token !== null);
  const approval: Header<Op<"/api/v1/knowledge/create", "post">> = {
    "Seneschal-Approval": token ?? "",
    "Seneschal-Desk-Secret": process.env.SENESCHAL_DESK_SECRET ?? "",
  };
  const other = await send("/api/v1/knowledge/create", { ...guide, id: "other" }, approval);
  const problem = (await other.json()) as { code?: string };
  expect(`knowledge.create with another request's token: ${other.status} ${problem.code}`, other.status === 403 && problem.code === "not_approved");
  const created = await post("/api/v1/knowledge/create", guide, approval);
  const digest: string | null = created.digest;
  expect(`knowledge.create: ${created.uri} (${created.plan.counts.create} created)`, created.applied && digest !== null);

  const listed = await get("/api/v1/knowledge/list", { kind: "guide" });
  const statuses: (string | null)[] = listed.objects.map((o) => o.status);
  expect(`knowledge.list: ${listed.total} guide(s)`, listed.objects.some((o) => o.uri === created.uri) && statuses.includes("draft"));

  const got = await get("/api/v1/knowledge/get", { uri: created.uri });
  const title: unknown = got.front_matter["title"];
  expect(`knowledge.get: front matter title ${String(title)}`, title === "Releasing");

  const note = await post("/api/v1/session/notes", { text: "written by the TypeScript client" });
  const id: number = note.id;
  const notes = await get("/api/v1/session/notes");
  const texts: string[] = notes.notes.map((n) => n.text);
  expect(`session.note.add then session.note.list: note ${id}`, texts.includes("written by the TypeScript client"));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
