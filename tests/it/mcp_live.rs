//! MCP over stdio while a request runs, through the built binary: log messages at the level
//! the client set, progress notifications of a long call, cancellation of a running call,
//! requests to the client (elicitation, sampling) answered over the same pipes, and client
//! responses nobody waits for. The requests to the client are made by the conformance
//! fixtures (`core/src/handlers/fixtures/live.rs`), in the fixture build.

use std::path::Path;

use serde_json::{json, Value};

use crate::rich_content::fixture_bin;
use crate::support::mcp::{code, Mcp};

/// Opens the initialize era declaring the client capabilities `caps`.
fn open(mcp: &mut Mcp, caps: Value) {
    let a = mcp.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "live-test", "version": "0"}}),
    );
    assert_eq!(a["result"]["capabilities"]["logging"], json!({}), "{a}");
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

/// Reads messages until the answer to `id`; returns the messages before it and the answer.
fn until_answer(mcp: &mut Mcp, id: &Value) -> (Vec<Value>, Value) {
    let mut before = Vec::new();
    loop {
        let m = mcp.recv();
        if m.get("method").is_none() && m["id"] == *id {
            return (before, m);
        }
        before.push(m);
    }
}

fn call(mcp: &mut Mcp, id: u64, tool: &str, args: Value, meta: Option<Value>) {
    let mut params = json!({"name": tool, "arguments": args});
    if let Some(m) = meta {
        params["_meta"] = m;
    }
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
}

/// A folder of `n` small text files, in folders of 500.
fn tree(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    // A repository: seneschal serves no folder that is in none unless `--repo` names it.
    crate::support::git(dir.path(), &["init", "-q"]);
    for i in 0..n {
        let sub = dir.path().join(format!("d{}", i / 500));
        if i % 500 == 0 {
            std::fs::create_dir(&sub).expect("mkdir");
        }
        std::fs::write(sub.join(format!("f{i}.txt")), "nothing to see\n").expect("write");
    }
    dir
}

#[test]
fn set_level_sends_log_messages_at_and_above_it_and_none_below() {
    let mut mcp = Mcp::start(&[]);
    open(&mut mcp, json!({}));
    // Before any level is set, a failed call logs nothing.
    call(&mut mcp, 10, "files_search", json!({}), None);
    let (before, answer) = until_answer(&mut mcp, &json!(10));
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    let bad = mcp.request("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(code(&bad), Some(-32602), "{bad}");
    let ok = mcp.request("logging/setLevel", json!({"level": "warning"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    // A refused call (invalid input) is logged at warning, before its answer.
    call(&mut mcp, 11, "files_search", json!({}), None);
    let (before, answer) = until_answer(&mut mcp, &json!(11));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["method"], "notifications/message");
    assert_eq!(before[0]["params"]["level"], "warning");
    assert_eq!(before[0]["params"]["data"]["tool"], "files_search");
    assert_eq!(before[0]["params"]["data"]["code"], "invalid_input");

    // At error, the same warning is no longer sent.
    mcp.request("logging/setLevel", json!({"level": "error"}));
    call(&mut mcp, 12, "files_search", json!({}), None);
    let (before, _) = until_answer(&mut mcp, &json!(12));
    assert!(before.is_empty(), "{before:?}");
    let (status, rest, _) = mcp.finish();
    assert!(status.success() && rest.is_empty(), "{rest}");
}

#[test]
fn a_long_search_reports_progress_to_its_token_only() {
    let dir = tree(1600);
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    open(&mut mcp, json!({}));
    let args = json!({"pattern": "needle"});
    call(
        &mut mcp,
        1,
        "files_search",
        args.clone(),
        Some(json!({"progressToken": "p-1"})),
    );
    let (before, answer) = until_answer(&mut mcp, &json!(1));
    assert_eq!(
        answer["result"]["structuredContent"]["files_searched"], 1600,
        "{answer}"
    );
    let figures: Vec<f64> = before
        .iter()
        .map(|m| {
            assert_eq!(m["method"], "notifications/progress", "{m}");
            assert_eq!(m["params"]["progressToken"], "p-1", "{m}");
            m["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    // The walker's threads count side by side: a figure reported late, after a higher one,
    // is dropped, so the promise is a rising run of the figures every 500 files, the highest
    // always among them (no later one can pass it).
    assert!(
        figures.windows(2).all(|w| w[0] < w[1])
            && figures.iter().all(|f| [500.0, 1000.0, 1500.0].contains(f))
            && figures.last() == Some(&1500.0),
        "{figures:?}"
    );
    // Without a token, no progress.
    call(&mut mcp, 2, "files_search", args, None);
    let (before, _) = until_answer(&mut mcp, &json!(2));
    assert!(before.is_empty(), "{before:?}");
}

#[test]
fn a_cancelled_search_stops_unanswered_and_the_next_request_is_served() {
    let dir = tree(40_000);
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    open(&mut mcp, json!({}));
    call(
        &mut mcp,
        7,
        "files_search",
        json!({"pattern": "needle"}),
        Some(json!({"progressToken": 7})),
    );
    // The search runs: its first progress arrives, then the client cancels it.
    let first = mcp.recv();
    assert_eq!(first["method"], "notifications/progress", "{first}");
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "enough"}}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    // Answers come in order: had the search answered, its answer would come before the ping's.
    let (before, ping) = until_answer(&mut mcp, &json!(8));
    assert_eq!(ping["result"], json!({}), "{ping}");
    for m in &before {
        assert_eq!(
            m["method"], "notifications/progress",
            "the search answered: {m}"
        );
        assert!(m["params"]["progress"].as_f64().unwrap() < 40_000.0, "{m}");
    }
    let (status, rest, _) = mcp.finish();
    assert!(status.success(), "{rest}");
    assert!(!rest.contains("\"id\":7"), "{rest}");
}

#[test]
fn a_client_response_nobody_waits_for_is_ignored() {
    let mut mcp = Mcp::start(&[]);
    open(&mut mcp, json!({}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": "seneschal-99", "result": {"action": "accept"}}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "stray"}}));
    let ping = mcp.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let (status, rest, _) = mcp.finish();
    assert!(status.success() && rest.is_empty(), "{rest}");
}

fn fixtures() -> Mcp {
    Mcp::start_bin(
        fixture_bin(),
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[],
        &[],
    )
}

/// Takes the server's request of `method`, checks it and answers it with `result`.
/// A fixture server whose call 1 (`test_elicitation`) waits for its client's answer, and the
/// `elicitation/create` request it sent.
fn waiting_for_an_elicitation() -> (Mcp, Value) {
    let mut mcp = fixtures();
    open(&mut mcp, json!({"elicitation": {}}));
    call(
        &mut mcp,
        1,
        "test_elicitation",
        json!({"message": "?"}),
        None,
    );
    let asked = mcp.recv();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    (mcp, asked)
}

fn answer_request(mcp: &mut Mcp, method: &str, result: Value) -> Value {
    let asked = mcp.recv();
    assert_eq!(asked["method"], method, "{asked}");
    assert!(asked["id"].is_string(), "{asked}");
    mcp.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": result}));
    asked
}

#[test]
fn an_elicitation_and_a_sampling_request_are_asked_and_answered_over_the_pipes() {
    let mut mcp = fixtures();
    open(&mut mcp, json!({"elicitation": {}, "sampling": {}}));
    call(
        &mut mcp,
        1,
        "test_elicitation",
        json!({"message": "Who are you?"}),
        None,
    );
    let asked = answer_request(
        &mut mcp,
        "elicitation/create",
        json!({"action": "accept", "content": {"username": "ann", "email": "ann@example.invalid"}}),
    );
    assert_eq!(asked["params"]["message"], "Who are you?");
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    let (_, a) = until_answer(&mut mcp, &json!(1));
    let text = a["result"]["structuredContent"]["text"].as_str().unwrap();
    assert!(text.starts_with("User response: action=accept"), "{a}");
    assert!(text.contains("ann@example.invalid"), "{a}");

    call(
        &mut mcp,
        2,
        "test_sampling",
        json!({"prompt": "Say hi"}),
        None,
    );
    let asked = answer_request(
        &mut mcp,
        "sampling/createMessage",
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}),
    );
    assert_eq!(asked["params"]["messages"][0]["content"]["text"], "Say hi");
    let (_, a) = until_answer(&mut mcp, &json!(2));
    assert_eq!(
        a["result"]["structuredContent"]["text"], "LLM response: hi",
        "{a}"
    );

    // A client that answers with an error: the call fails with it.
    call(
        &mut mcp,
        3,
        "test_sampling",
        json!({"prompt": "again"}),
        None,
    );
    let asked = mcp.recv();
    mcp.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "user said no"}}));
    let (_, a) = until_answer(&mut mcp, &json!(3));
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(
        a["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("user said no"),
        "{a}"
    );
    let (status, rest, _) = mcp.finish();
    assert!(status.success() && rest.is_empty(), "{rest}");
}

#[test]
fn nothing_is_asked_of_a_client_that_did_not_declare_the_capability() {
    let mut mcp = fixtures();
    open(&mut mcp, json!({"sampling": {}}));
    call(
        &mut mcp,
        1,
        "test_elicitation",
        json!({"message": "?"}),
        None,
    );
    let (before, a) = until_answer(&mut mcp, &json!(1));
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(
        a["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`elicitation` capability"),
        "{a}"
    );
}

#[test]
fn the_fixture_tools_log_and_report_progress_while_they_run() {
    let mut mcp = fixtures();
    open(&mut mcp, json!({}));
    mcp.request("logging/setLevel", json!({"level": "debug"}));
    call(&mut mcp, 1, "test_tool_with_logging", json!({}), None);
    let (before, _) = until_answer(&mut mcp, &json!(1));
    let data: Vec<&Value> = before.iter().map(|m| &m["params"]["data"]).collect();
    assert_eq!(
        data,
        [
            &json!("Tool execution started"),
            &json!("Tool processing data"),
            &json!("Tool execution completed")
        ]
    );
    call(
        &mut mcp,
        2,
        "test_tool_with_progress",
        json!({}),
        Some(json!({"progressToken": "t"})),
    );
    let (before, _) = until_answer(&mut mcp, &json!(2));
    let figures: Vec<&Value> = before.iter().map(|m| &m["params"]["progress"]).collect();
    assert_eq!(figures, [&json!(0.0), &json!(50.0), &json!(100.0)]);
}

#[test]
fn end_of_input_while_the_server_waits_for_the_client_ends_the_call_and_the_process() {
    let (mcp, _) = waiting_for_an_elicitation();
    // The client goes away instead of answering: the call fails at once and is answered.
    let (status, rest, _) = mcp.finish();
    assert!(status.success(), "{rest}");
    let a: Value = serde_json::from_str(rest.trim()).expect("one answer");
    assert_eq!(a["id"], 1);
    assert!(
        a["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("closed the connection"),
        "{a}"
    );
}

#[test]
fn initialize_is_answered_even_when_the_client_cancels_it() {
    let mut mcp = Mcp::start(&[]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    mcp.send_raw(format!("{init}\n{cancel}\n").as_bytes());
    let a = mcp.recv();
    assert_eq!(a["id"], 1, "{a}");
    assert_eq!(a["result"]["protocolVersion"], "2025-11-25", "{a}");
}

/// Both eras announce `logging`: the log messages a call sends reach a 2026-07-28 client too
/// (its request's `_meta` names the level), so `server/discover` says so, as `initialize` does.
#[test]
fn server_discover_announces_logging_as_initialize_does() {
    let mut mcp = Mcp::start(&[]);
    let d = mcp.modern("server/discover", json!({}));
    assert_eq!(d["result"]["capabilities"]["logging"], json!({}), "{d}");
    let mut mcp = Mcp::start(&[]);
    open(&mut mcp, json!({}));
}

#[test]
fn a_modern_request_gets_log_messages_at_the_level_its_meta_names() {
    let mut mcp = Mcp::start(&[]);
    let mut meta = crate::support::mcp::modern_meta(crate::support::mcp::MODERN);
    call(&mut mcp, 1, "files_search", json!({}), Some(meta.clone()));
    let (before, _) = until_answer(&mut mcp, &json!(1));
    assert!(before.is_empty(), "{before:?}");
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    call(&mut mcp, 2, "files_search", json!({}), Some(meta.clone()));
    let (before, answer) = until_answer(&mut mcp, &json!(2));
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["params"]["level"], "warning", "{before:?}");
    meta["io.modelcontextprotocol/logLevel"] = json!("critical");
    call(&mut mcp, 3, "files_search", json!({}), Some(meta));
    let (before, _) = until_answer(&mut mcp, &json!(3));
    assert!(before.is_empty(), "{before:?}");
}

#[test]
fn requests_beyond_the_queue_while_the_server_waits_for_the_client_are_refused_not_stuck() {
    let (mut mcp, asked) = waiting_for_an_elicitation();
    // 32 requests wait in the queue; the 33rd is refused at once, and the answer behind them
    // still reaches the waiting call.
    let pings: String = (100..133)
        .map(|i| format!("{}\n", json!({"jsonrpc": "2.0", "id": i, "method": "ping"})))
        .collect();
    mcp.send_raw(pings.as_bytes());
    let busy = mcp.recv();
    assert_eq!(busy["id"], 132, "{busy}");
    assert_eq!(code(&busy), Some(-32603), "{busy}");
    assert!(
        busy["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server busy"),
        "{busy}"
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}));
    let a = mcp.recv();
    assert_eq!(a["id"], 1, "{a}");
    assert!(
        a["result"]["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .contains("action=decline"),
        "{a}"
    );
    for i in 100..132 {
        let p = mcp.recv();
        assert_eq!(p["id"], i, "{p}");
        assert_eq!(p["result"], json!({}), "{p}");
    }
}

/// An ADR repository whose first ADR holds a planted key, and the key.
fn planted_key_repo() -> (tempfile::TempDir, String) {
    let d = crate::support::adr_repo();
    let key = format!("AKIA{}", "QWERTYUIOPASDFGH");
    std::fs::write(
        d.path().join("docs/adr/0001-first.md"),
        format!(
            "---\nid: \"0001\"\ntitle: First\nstatus: accepted\ndate: 2026-11-30\n---\n# First\n\nWe keep aws_key = {key} out of the repository.\n"
        ),
    )
    .expect("plant the key");
    (d, key)
}

/// In the 2026-07-28 era a request to the client travels inside the call's input-required
/// result, not on the link: it is redacted all the same.
#[test]
fn a_modern_sampling_request_quoting_a_planted_secret_leaves_redacted() {
    let (d, key) = planted_key_repo();
    let mut mcp = Mcp::start_with(d.path(), &[], &[]);
    let mut meta = crate::support::mcp::modern_meta(crate::support::mcp::MODERN);
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let answer = mcp.request(
        "tools/call",
        json!({"name": "knowledge_summarize",
               "arguments": {"uri": "seneschal://knowledge/adr/0001"},
               "_meta": meta}),
    );
    let r = &answer["result"];
    assert_eq!(r["resultType"], "input_required", "{answer}");
    let asked = r["inputRequests"].to_string();
    assert!(asked.contains("sampling/createMessage"), "{answer}");
    assert!(!asked.contains(&key), "{asked}");
    assert!(asked.contains("out of the repository"), "{asked}");
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

/// What the server asks its client is redacted like an answer: `knowledge.summarize` sends an
/// ADR holding a planted key to the client's model, and the key never reaches the pipe, while
/// the rest of the ADR does (a bypass of `link::outgoing` would show the key here).
#[test]
fn a_sampling_request_quoting_a_planted_secret_leaves_redacted() {
    let (d, key) = planted_key_repo();
    let mut mcp = Mcp::start_with(d.path(), &[], &[]);
    open(&mut mcp, json!({"sampling": {}}));
    call(
        &mut mcp,
        1,
        "knowledge_summarize",
        json!({"uri": "seneschal://knowledge/adr/0001"}),
        None,
    );
    let asked = answer_request(
        &mut mcp,
        "sampling/createMessage",
        json!({"role": "assistant", "content": {"type": "text", "text": "A decision."}, "model": "m"}),
    );
    let sent = asked.to_string();
    assert!(!sent.contains(&key), "{sent}");
    assert!(sent.contains("out of the repository"), "{sent}");
    let (_, a) = until_answer(&mut mcp, &json!(1));
    assert_eq!(
        a["result"]["structuredContent"]["summary"], "A decision.",
        "{a}"
    );
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}
