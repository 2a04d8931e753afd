"""An agent on MCP stdio whose client cannot be asked (no elicitation): it asks for two writes
under --approval ask, one after the other; answered that a write's approval is pending, it makes
the same call again, and prints each write's final answer (a JSON line) once the person decided
it.
Usage: python desk-agent.py path/to/seneschal REPO"""
import json
import subprocess
import sys

agent = subprocess.Popen([sys.argv[1], "mcp", "--approval", "ask"], cwd=sys.argv[2],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(message):
    agent.stdin.write(json.dumps(message) + "\n")
    agent.stdin.flush()


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "desk-check", "version": "0"}}})
agent.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
ids = iter(range(2, 10_000))
for path, text in [("notes/desk.md", "# Desk\n\nApproved in a browser.\n"),
                   ("notes/declined.md", "# Declined\n\nDeclined in a browser.\n")]:
    while True:
        n = next(ids)
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
            "name": "files_write", "arguments": {"path": path, "content": text}}})
        for line in agent.stdout:
            m = json.loads(line)
            if m.get("id") == n:
                break
        error = m.get("result", {}).get("_meta", {}).get("seneschal/error", {})
        if not error.get("data", {}).get("pending"):
            print(json.dumps(m), flush=True)
            break
agent.stdin.close()
agent.wait()
