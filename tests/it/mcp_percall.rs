//! The per-call path of MCP over stdio, through the binary: a well-formed request is read
//! without parsing the whole message (`dispatch::Request::read`) and its result is answered
//! in its own buffer (`dispatch::in_place`); every message that is not plainly a request is
//! parsed whole and answered as before. Each case below is one a shortcut could get wrong.

use serde_json::{json, Value};

use crate::support;

/// The answers of `seneschal mcp` to `lines` (after `initialize`), by id.
fn answers(lines: &[&str]) -> Vec<Value> {
    let init = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut input = format!("{init}\n");
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    let repo = support::scratch_repo();
    let out = support::run_with_stdin(repo.path(), &["mcp"], input.as_bytes());
    assert!(out.status.success(), "{}", support::stderr(&out));
    let all: Vec<Value> = support::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each answer is one JSON line"))
        .collect();
    assert_eq!(all[0]["id"], "init");
    all[1..].to_vec()
}

#[test]
fn odd_requests_meet_the_same_checks_as_before() {
    let got = answers(&[
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}"#,
        // A duplicate member: the last one counts, as for any parsed message.
        r#"{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":null,"extra":{"a":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools\/call","params":{"name":"no_such_tool"}}"#,
    ]);
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(
        (&got[0]["id"], &got[0]["error"]["code"]),
        (&Value::Null, &json!(-32600))
    );
    assert_eq!(
        (&got[1]["id"], &got[1]["error"]["code"]),
        (&json!(2), &json!(-32600))
    );
    assert_eq!(
        (&got[2]["id"], &got[2]["error"]["code"]),
        (&json!(3), &json!(-32602))
    );
    assert_eq!((&got[3]["id"], &got[3]["result"]), (&json!(5), &json!({})));
    assert_eq!((&got[4]["id"], &got[4]["result"]), (&json!(6), &json!({})));
    assert_eq!(got[5]["id"], "a\"b");
    assert_eq!(got[5]["error"]["code"], -32602);
}

#[test]
fn tool_results_answered_in_place_keep_their_ids_and_bytes() {
    let long_id = "x".repeat(300);
    let call = |id: &Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "capabilities_show", "arguments": {"id": "server.status"}}})
            .to_string()
    };
    let ids = [json!(1), json!("two"), json!(long_id), json!(-4.5)];
    let lines: Vec<String> = ids.iter().map(call).collect();
    let got = answers(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(got.len(), ids.len());
    for (answer, id) in got.iter().zip(&ids) {
        assert_eq!(&answer["id"], id);
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        assert_eq!(result["structuredContent"]["id"], "server.status");
        // The text block is the structured content as compact text (ADR 0007).
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("id: server.status"), "{text}");
    }
    assert_eq!(got[0]["result"], got[3]["result"]);
}

/// The names of the threads of process `pid`.
fn threads(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("a Linux /proc")
        .map(|t| {
            let comm = t.expect("a task").path().join("comm");
            std::fs::read_to_string(comm)
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn the_stdin_listener_starts_with_the_first_request_that_asks_the_client() {
    use std::io::{BufRead, BufReader, Write};
    let repo = support::scratch_repo();
    let mut child = support::spawn_piped(
        &support::bin(),
        repo.path(),
        &["mcp"],
        &[("SENESCHAL_MCP_DEBUG_ASK", "capabilities_list")],
    );
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut exchange = |line: Value| -> Value {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).expect("a JSON line")
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "0"}}});
    assert!(exchange(init)["result"].is_object());
    let status = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "server_status", "arguments": {}}});
    assert_eq!(exchange(status)["result"]["isError"], false);
    assert!(
        !threads(pid).iter().any(|t| t == "mcp-stdin"),
        "nothing asked the client yet: {:?}",
        threads(pid)
    );
    // The call asks its client: the question comes out, then the listener reads the answer.
    let ask = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "capabilities_list", "arguments": {}}}));
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let done = exchange(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}));
    assert_eq!(done["id"], 2, "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["asked"]["answered"],
        json!({"action": "accept"})
    );
    assert_eq!(
        threads(pid).iter().filter(|t| *t == "mcp-stdin").count(),
        1,
        "{:?}",
        threads(pid)
    );
    drop(stdin);
    assert!(child.wait().expect("exits").success());
}

/// A knowledge resource is confirmed as `knowledge_get` is: in the initialize
/// era, with a client that declares elicitation, `resources/read` of an ADR asks (the
/// question names `knowledge.get`), a decline answers an error carrying `not_approved` and no
/// byte of the ADR, and the decline is kept for the session (not asked again); in a new session
/// an accept reads it, and the session does not ask again — not for the resource, not for
/// `knowledge_get`.
#[test]
fn a_knowledge_resource_is_confirmed_like_knowledge_get() {
    use std::io::{BufRead, BufReader, Write};
    let repo = support::adr_repo();
    let session = || {
        let mut child = support::spawn_piped(&support::bin(), repo.path(), &["mcp"], &[]);
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        (child, stdin, stdout)
    };
    let exchange = |stdin: &mut std::process::ChildStdin,
                    stdout: &mut BufReader<std::process::ChildStdout>,
                    line: Value|
     -> Value {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).expect("a JSON line")
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "0"}}});
    let read = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
            "params": {"uri": "seneschal://knowledge/adr/0001"}})
    };

    let (mut child, mut stdin, mut stdout) = session();
    assert!(exchange(&mut stdin, &mut stdout, init.clone())["result"].is_object());
    let ask = exchange(&mut stdin, &mut stdout, read(1));
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(
        ask["params"]["_meta"]["seneschal/capability"], "knowledge.get",
        "{ask}"
    );
    let refused = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}),
    );
    assert_eq!(refused["id"], 1, "{refused}");
    assert_eq!(
        refused["error"]["data"]["seneschal/error"]["code"], "not_approved",
        "{refused}"
    );
    assert!(!refused.to_string().contains("# First"), "{refused}");
    // The decline is kept for the session: the next read is refused without a question.
    let kept = exchange(&mut stdin, &mut stdout, read(2));
    assert_eq!(
        kept["id"], 2,
        "a declined consent is not asked again: {kept}"
    );
    assert_eq!(
        kept["error"]["data"]["seneschal/error"]["code"], "not_approved",
        "{kept}"
    );
    assert!(
        kept.to_string().contains("declined") && !kept.to_string().contains("# First"),
        "{kept}"
    );
    drop(stdin);
    assert!(child.wait().expect("exits").success());

    // A new session asks again; accepted, it asks no more.
    let (mut child, mut stdin, mut stdout) = session();
    assert!(exchange(&mut stdin, &mut stdout, init)["result"].is_object());
    let ask = exchange(&mut stdin, &mut stdout, read(1));
    assert_eq!(
        ask["method"], "elicitation/create",
        "a new session asks: {ask}"
    );
    let done = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}),
    );
    assert_eq!(done["id"], 1, "{done}");
    assert!(done["result"]["contents"][0]["text"].is_string(), "{done}");
    // Approved once for the session: the resource and the tool ask no more.
    let again = exchange(&mut stdin, &mut stdout, read(3));
    assert_eq!(again["id"], 3, "{again}");
    let tool = exchange(
        &mut stdin,
        &mut stdout,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "knowledge_get", "arguments": {"uri": "seneschal://knowledge/adr/0001"}}}),
    );
    assert_eq!(tool["id"], 4, "{tool}");
    assert_eq!(tool["result"]["isError"], false, "{tool}");
    drop(stdin);
    assert!(child.wait().expect("exits").success());
}
