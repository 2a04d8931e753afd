//! The MCP tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) through the built
//! binary: a `tools/call` of a tool whose manifest declares `task` (files_search) from a
//! client that declares the extension answers a task, polled to completion with `tasks/get`
//! over loopback HTTP and over stdio; a client that does not declare it gets the answer
//! itself and `tasks/*` refused with -32021; the table holds at most 64 tasks.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::http::Serve;
use crate::support::mcp::{modern_meta, Mcp, MODERN};
use crate::support::scratch_repo;

const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` of a 2026-07-28 request, declaring the tasks extension or not.
fn meta(with_tasks: bool) -> Value {
    let mut m = modern_meta(MODERN);
    if with_tasks {
        m["io.modelcontextprotocol/clientCapabilities"] = json!({"extensions": {EXTENSION: {}}});
    }
    m
}

/// A 2026-07-28 request POSTed to `/mcp` with the headers the binding requires; the HTTP
/// status and the JSON-RPC answer.
fn post(s: &Serve, method: &str, mut params: Value, with_tasks: bool) -> (u16, Value) {
    params["_meta"] = meta(with_tasks);
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ];
    if let Some(n) = &name {
        headers.push(("Mcp-Name", n.as_str()));
    }
    let r = s.request("POST", "/mcp", &headers, body.to_string().as_bytes());
    (r.status, r.json())
}

/// A repository with a few lines for files_search to find.
fn repo_with_lines() -> tempfile::TempDir {
    let repo = scratch_repo();
    for i in 0..5 {
        std::fs::write(
            repo.path().join(format!("f{i}.txt")),
            format!("needle {i}\nhay\n"),
        )
        .unwrap();
    }
    repo
}

fn search_args() -> Value {
    json!({"name": "files_search", "arguments": {"pattern": "needle"}})
}

/// How long a test waits for a task to move: a bound for a defect, not for a slow machine.
const BOUND: Duration = Duration::from_secs(60);

/// Polls `get` until the task is terminal; panics after [`BOUND`].
fn poll(mut get: impl FnMut() -> Value) -> Value {
    let deadline = Instant::now() + BOUND;
    loop {
        let t = get();
        let status = t["result"]["status"]
            .as_str()
            .unwrap_or_else(|| panic!("{t}"));
        if ["completed", "failed", "cancelled"].contains(&status) {
            return t["result"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "the task finishes within {BOUND:?}: {t}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_declaring_client_gets_a_task_polled_to_the_answer_a_sync_call_gives() {
    let repo = repo_with_lines();
    let s = Serve::start(repo.path(), &[]);
    // The extension is announced, and files_search says it may run as a task.
    let (_, discover) = post(&s, "server/discover", json!({}), false);
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][EXTENSION],
        json!({})
    );
    let (_, list) = post(&s, "tools/list", json!({}), false);
    let tools = list["result"]["tools"].as_array().unwrap();
    let search = tools.iter().find(|t| t["name"] == "files_search").unwrap();
    assert_eq!(search["execution"]["taskSupport"], "optional");
    let read = tools.iter().find(|t| t["name"] == "files_read").unwrap();
    assert!(read.get("execution").is_none(), "{read}");

    // Without the extension: the answer itself.
    let (status, sync) = post(&s, "tools/call", search_args(), false);
    assert_eq!(status, 200);
    assert_eq!(sync["result"]["resultType"], "complete", "{sync}");
    assert!(sync["result"].get("taskId").is_none());
    let answer = &sync["result"]["structuredContent"];
    assert_eq!(
        answer["matches"].as_array().map(Vec::len),
        Some(5),
        "{sync}"
    );

    // With it: a CreateTaskResult, flat, then the same answer inlined by tasks/get.
    let (status, created) = post(&s, "tools/call", search_args(), true);
    assert_eq!(status, 200);
    let c = &created["result"];
    assert_eq!(c["resultType"], "task", "{created}");
    assert_eq!(c["status"], "working");
    assert_eq!(c["ttlMs"], 300_000);
    assert!(c["pollIntervalMs"].as_u64().is_some_and(|p| p > 0));
    for absent in ["task", "result", "error", "inputRequests", "requestState"] {
        assert!(c.get(absent).is_none(), "{absent} in {c}");
    }
    let id = c["taskId"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32, "128 random bits, hex");
    let done = poll(|| post(&s, "tasks/get", json!({"taskId": id}), true).1);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["taskId"], id.as_str());
    assert_eq!(done["result"]["isError"], false);
    assert_eq!(&done["result"]["structuredContent"], answer);

    // Cancelling a finished task is an empty ack that changes nothing.
    let (_, ack) = post(&s, "tasks/cancel", json!({"taskId": id}), true);
    let ack = &ack["result"];
    assert_eq!(ack["resultType"], "complete", "{ack}");
    for absent in ["taskId", "status", "result"] {
        assert!(ack.get(absent).is_none(), "{absent} in {ack}");
    }
    let (_, again) = post(&s, "tasks/get", json!({"taskId": id}), true);
    assert_eq!(again["result"]["status"], "completed");
}

#[test]
fn tasks_methods_need_the_extension_and_a_known_task() {
    let repo = repo_with_lines();
    let s = Serve::start(repo.path(), &[]);
    for (method, extra) in [
        ("tasks/get", json!({})),
        ("tasks/cancel", json!({})),
        ("tasks/update", json!({"inputResponses": {}})),
    ] {
        let mut params = extra.clone();
        params["taskId"] = json!("abc");
        // Undeclared: -32021 naming the extension, HTTP 400.
        let (status, refused) = post(&s, method, params.clone(), false);
        assert_eq!(status, 400, "{method}: {refused}");
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
        assert_eq!(
            refused["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION],
            json!({})
        );
        // Declared, unknown task: -32602.
        let (_, unknown) = post(&s, method, params, true);
        assert_eq!(unknown["error"]["code"], -32602, "{method}: {unknown}");
    }
    // The removed methods of the first tasks design are not served.
    for method in ["tasks/result", "tasks/list"] {
        let (_, gone) = post(&s, method, json!({"taskId": "abc"}), true);
        assert_eq!(gone["error"]["code"], -32601, "{method}: {gone}");
    }
    // Mcp-Name must carry the taskId.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": {"taskId": "abc", "_meta": meta(true)}});
    let r = s.request(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tasks/get"),
            ("Mcp-Name", "another"),
        ],
        body.to_string().as_bytes(),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32020);
}

#[test]
fn the_table_holds_64_tasks_and_then_answers_calls_itself() {
    let repo = repo_with_lines();
    let s = Serve::start(repo.path(), &[]);
    let mut ids = Vec::new();
    for _ in 0..64 {
        let (_, created) = post(&s, "tools/call", search_args(), true);
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        ids.push(created["result"]["taskId"].as_str().unwrap().to_string());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 64, "every task has its own id");
    // Full: no 65th task (each is kept for its ttlMs), the optional tool answers directly.
    let (_, direct) = post(&s, "tools/call", search_args(), true);
    assert_eq!(direct["result"]["resultType"], "complete", "{direct}");
    assert!(direct["result"].get("taskId").is_none());
    assert_eq!(
        direct["result"]["structuredContent"]["matches"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    // The first tasks are still there.
    let (_, first) = post(&s, "tasks/get", json!({"taskId": ids[0]}), true);
    assert_eq!(first["result"]["taskId"], ids[0].as_str(), "{first}");
}

#[test]
fn over_stdio_a_task_is_created_and_polled_and_the_initialize_era_gets_no_task() {
    let repo = repo_with_lines();
    let mut m = Mcp::start_with(repo.path(), &[], &[]);
    let mut params = search_args();
    params["_meta"] = meta(true);
    let created = m.request("tools/call", params);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let done = poll(|| m.request("tasks/get", json!({"taskId": id, "_meta": meta(true)})));
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["matches"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
    let (status, _, _) = m.finish();
    assert!(status.success());

    // The initialize era: the tool answers, even from a client that lists the extension.
    let mut legacy = Mcp::start_with(repo.path(), &[], &[]);
    let init = legacy.request(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {EXTENSION: {}}},
            "clientInfo": {"name": "pipe-test", "version": "0"},
        }),
    );
    // That era serves no tasks/* method, so its handshake announces no tasks extension.
    let caps = &init["result"]["capabilities"];
    assert!(
        caps.get("tools").is_some() && caps.get("extensions").is_none(),
        "{init}"
    );
    legacy.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let answer = legacy.request("tools/call", search_args());
    assert!(answer["result"].get("taskId").is_none(), "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let (status, _, _) = legacy.finish();
    assert!(status.success());
}

/// The binary with the conformance fixtures (slow_compute, confirm_delete, failing_job,
/// protocol_error_job), served from the workspace.
fn fixture_server() -> Serve {
    Serve::start_bin(
        crate::rich_content::fixture_bin(),
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[],
        &[],
    )
}

/// Creates a task of `tool` with `arguments`; its id.
fn create(s: &Serve, tool: &str, arguments: Value, client: Value) -> String {
    let mut params = json!({"name": tool, "arguments": arguments});
    params["_meta"] = meta(true);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = client;
    let (_, created) = post_raw(s, "tools/call", params);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_string()
}

/// [`post`] with `params` carrying their own `_meta`.
fn post_raw(s: &Serve, method: &str, params: Value) -> (u16, Value) {
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = s.request(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", method),
            ("Mcp-Name", &name),
        ],
        body.to_string().as_bytes(),
    );
    (r.status, r.json())
}

fn get(s: &Serve, id: &str) -> Value {
    post(s, "tasks/get", json!({"taskId": id}), true).1
}

/// Polls until the task reaches `status` (or a terminal one); panics after [`BOUND`].
fn poll_until(s: &Serve, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + BOUND;
    loop {
        let t = get(s, id)["result"].clone();
        let now = t["status"].as_str().unwrap_or_else(|| panic!("{t}"));
        if now == status || ["completed", "failed", "cancelled"].contains(&now) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "the task reaches {status} within {BOUND:?}: {t}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_running_task_is_cancelled_and_stays_cancelled() {
    let s = fixture_server();
    let id = create(
        &s,
        "slow_compute",
        json!({"seconds": 60}),
        json!({"extensions": {EXTENSION: {}}}),
    );
    assert_eq!(get(&s, &id)["result"]["status"], "working");
    let (_, ack) = post(&s, "tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none());
    let t = get(&s, &id)["result"].clone();
    assert_eq!(t["status"], "cancelled", "{t}");
    assert!(t.get("result").is_none() && t.get("error").is_none(), "{t}");
    // The call stops at its next check, and whenever it ends the task stays cancelled (a late
    // result never undoes a cancel: `mcp::tasks::tests::cancel_is_terminal_and_a_late_result_does_not_undo_it`).
    assert_eq!(get(&s, &id)["result"]["status"], "cancelled");
}

#[test]
fn an_input_request_parks_the_task_until_tasks_update_answers_it() {
    let s = fixture_server();
    let both = json!({"elicitation": {}, "extensions": {EXTENSION: {}}});
    let id = create(
        &s,
        "confirm_delete",
        json!({"filename": "a.txt"}),
        both.clone(),
    );
    let parked = poll_until(&s, &id, "input_required");
    assert_eq!(parked["status"], "input_required", "{parked}");
    let request = &parked["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create", "{parked}");
    assert_eq!(request["params"]["message"], "Delete a.txt?");
    // An unknown key is ignored; the task waits on.
    let (_, ack) = post(
        &s,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"other": {}}}),
        true,
    );
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(get(&s, &id)["result"]["status"], "input_required");
    let answer = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    post(
        &s,
        "tasks/update",
        json!({"taskId": id, "inputResponses": answer}),
        true,
    );
    let done = poll_until(&s, &id, "completed");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["text"],
        "confirmed: a.txt would be deleted (nothing is)"
    );
    // A client that declared no elicitation is not asked: the tool fails as a tool.
    let id = create(
        &s,
        "confirm_delete",
        json!({"filename": "b.txt"}),
        json!({"extensions": {EXTENSION: {}}}),
    );
    let done = poll_until(&s, &id, "completed");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        done["result"]["_meta"]["seneschal/error"]["code"],
        "refused"
    );
}

#[test]
fn a_tool_error_completes_a_task_and_a_server_failure_fails_it() {
    let s = fixture_server();
    let ext = json!({"extensions": {EXTENSION: {}}});
    let id = create(&s, "failing_job", json!({}), ext.clone());
    let done = poll_until(&s, &id, "completed");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true);
    let id = create(&s, "protocol_error_job", json!({}), ext);
    let failed = poll_until(&s, &id, "failed");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed.get("result").is_none());
    // A tool that runs only as a task refuses a client without the extension.
    let (status, refused) = post(
        &s,
        "tools/call",
        json!({"name": "failing_job", "arguments": {}}),
        false,
    );
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

/// A read refused when called directly is refused as a task too: under `--approval deny`,
/// from a client that cannot be asked, `files_search` answers `not_approved` and so does the
/// task it runs as (a task once ran under the default policy, whatever the process's), with
/// no match in either answer.
#[test]
fn a_read_refused_directly_is_refused_as_a_task() {
    let repo = repo_with_lines();
    let s = Serve::start_args(repo.path(), &["--approval", "deny"], &[]);
    let (_, direct) = post(&s, "tools/call", search_args(), false);
    let r = &direct["result"];
    assert_eq!(r["isError"], true, "{direct}");
    assert_eq!(
        r["_meta"]["seneschal/error"]["code"], "not_approved",
        "{direct}"
    );
    let (_, created) = post(&s, "tools/call", search_args(), true);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let done = poll(|| post(&s, "tasks/get", json!({"taskId": id}), true).1);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        done["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{done}"
    );
    assert!(!done.to_string().contains("needle 1"), "{done}");
    s.finish();
}
