//! Black-box tests of `seneschal mcp` over pipes: both eras' methods and version negotiation,
//! every JSON-RPC error class, tool-result errors, and the stdio transport's promises (EOF →
//! exit 0, stdout carries protocol lines only, a panic is survived, overlong lines skipped).

use crate::support::mcp::{code, modern_meta, Mcp, MODERN};
use serde_json::{json, Value};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn uris(answer: &Value) -> Vec<String> {
    answer["result"]["resources"]
        .as_array()
        .expect("a resources array")
        .iter()
        .map(|r| r["uri"].as_str().expect("a uri").to_string())
        .collect()
}

#[test]
fn initialize_echoes_each_supported_revision_and_answers_the_latest_otherwise() {
    for v in LEGACY {
        let mut mcp = Mcp::start(&[]);
        let a = mcp.initialize(v);
        assert_eq!(a["result"]["protocolVersion"], v, "{a}");
        assert_eq!(a["result"]["serverInfo"]["name"], "seneschal");
        assert_eq!(
            a["result"]["serverInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert!(a["result"]["capabilities"]["tools"].is_object());
        assert!(a["result"]["capabilities"]["resources"].is_object());
        assert!(a["result"]["capabilities"]["prompts"].is_object());
        assert!(
            a["result"].get("resultType").is_none(),
            "legacy results carry no resultType"
        );
        let (status, rest, _) = mcp.finish();
        assert!(status.success());
        assert_eq!(rest, "", "notifications/initialized is not answered");
    }
    for unknown in ["2099-01-01", "2026-07-28", "draft"] {
        let mut mcp = Mcp::start(&[]);
        let a = mcp.initialize(unknown);
        assert_eq!(a["result"]["protocolVersion"], "2025-11-25", "{a}");
    }
    let mut mcp = Mcp::start(&[]);
    let a = mcp.request("initialize", json!({"capabilities": {}}));
    assert_eq!(
        code(&a),
        Some(-32602),
        "initialize without protocolVersion: {a}"
    );
}

#[test]
fn instructions_name_the_writers_or_say_there_are_none() {
    let writers: Vec<&str> = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect == seneschal::policy::Effect::RepositoryWrite)
        .filter_map(|d| d.mcp_tool)
        .collect();
    let mut mcp = Mcp::start(&[]);
    let init = mcp.initialize("2025-11-25");
    let discover = mcp.modern("server/discover", json!({}));
    for text in [
        &init["result"]["instructions"],
        &discover["result"]["instructions"],
    ] {
        let text = text.as_str().expect("instructions");
        if writers.is_empty() {
            assert!(text.contains("No tool writes to the repository"), "{text}");
        }
        for w in &writers {
            assert!(text.contains(w), "{text} does not name {w}");
        }
        assert!(text.contains("skills are its prompts"));
    }
}

#[test]
fn legacy_era_serves_every_method() {
    let mut mcp = Mcp::start(&[]);
    let a = mcp.request("ping", json!({}));
    assert_eq!(a["result"], json!({}), "ping before initialize: {a}");
    mcp.initialize("2025-06-18");
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));

    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "capabilities_list"));
    assert!(tools.iter().any(|t| t["name"] == "mcp_projection"));
    assert!(list["result"].get("resultType").is_none());
    assert!(list["result"].get("nextCursor").is_none());

    let call = mcp.request(
        "tools/call",
        json!({"name": "capabilities_list", "arguments": {"effect": "read"}}),
    );
    let r = &call["result"];
    assert_eq!(r["isError"], false, "{call}");
    // The text block is the answer as compact text, not a second copy of the JSON (ADR 0007):
    // every capability's id is in it, as it is.
    let text = r["content"][0]["text"].as_str().expect("text");
    assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
    let caps = r["structuredContent"]["capabilities"]
        .as_array()
        .expect("capabilities");
    for c in caps {
        let id = c["id"].as_str().expect("id");
        assert!(text.contains(id), "{id}: {text}");
    }
    assert!(
        text.len()
            < serde_json::to_string(&r["structuredContent"])
                .unwrap()
                .len(),
        "the text block is shorter than the JSON"
    );
    assert!(r["structuredContent"]["capabilities"]
        .as_array()
        .expect("array")
        .iter()
        .all(|c| c["effect"] == "read"));

    let res = mcp.request("resources/list", json!({}));
    let listed = uris(&res);
    for uri in [
        "seneschal://capabilities",
        "seneschal://mcp/projection",
        "seneschal://docs/architecture",
        "seneschal://server/status",
    ] {
        assert!(
            listed.iter().any(|u| u == uri),
            "{uri} missing from {listed:?}"
        );
    }
    let read = mcp.request("resources/read", json!({"uri": "seneschal://capabilities"}));
    let c = &read["result"]["contents"][0];
    assert_eq!(c["uri"], "seneschal://capabilities");
    assert_eq!(c["mimeType"], "application/json");
    let body: Value = serde_json::from_str(c["text"].as_str().expect("text")).expect("JSON");
    assert!(body["capabilities"].is_array());
    let doc = mcp.request(
        "resources/read",
        json!({"uri": "seneschal://docs/architecture"}),
    );
    assert_eq!(doc["result"]["contents"][0]["mimeType"], "text/markdown");
    assert!(
        doc["result"]["contents"][0]["text"]
            .as_str()
            .expect("text")
            .len()
            > 10
    );

    let templates = mcp.request("resources/templates/list", json!({}));
    assert!(
        templates["result"]["resourceTemplates"].is_array(),
        "{templates}"
    );

    let missing = mcp.request("resources/read", json!({"uri": "seneschal://no/such"}));
    assert_eq!(
        code(&missing),
        Some(-32002),
        "legacy resource not found: {missing}"
    );
    assert_eq!(missing["error"]["data"]["uri"], "seneschal://no/such");

    let (status, rest, _) = mcp.finish();
    assert!(status.success());
    assert_eq!(rest, "");
}

#[test]
fn modern_era_serves_every_method_with_result_type_and_cache_hints() {
    let mut mcp = Mcp::start(&[]);
    let d = mcp.modern("server/discover", json!({}));
    let r = &d["result"];
    assert_eq!(
        r["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ]),
        "{d}"
    );
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].as_u64().is_some());
    assert!(matches!(
        r["cacheScope"].as_str(),
        Some("public" | "private")
    ));
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "seneschal"
    );
    assert!(r["capabilities"]["tools"].is_object());
    assert!(r.get("protocolVersion").is_none());

    for (method, params) in [
        ("tools/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "seneschal://capabilities"})),
    ] {
        let a = mcp.modern(method, params);
        let r = &a["result"];
        assert_eq!(r["resultType"], "complete", "{method}: {a}");
        assert!(r["ttlMs"].as_u64().is_some(), "{method}: {a}");
        assert!(
            matches!(r["cacheScope"].as_str(), Some("public" | "private")),
            "{method}: {a}"
        );
        assert_eq!(
            r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "seneschal",
            "{method}"
        );
    }
    let call = mcp.modern(
        "tools/call",
        json!({"name": "server_status", "arguments": {}}),
    );
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    assert_eq!(call["result"]["isError"], false);
    assert_eq!(call["result"]["structuredContent"]["name"], "seneschal");

    let missing = mcp.modern("resources/read", json!({"uri": "seneschal://no/such"}));
    assert_eq!(
        code(&missing),
        Some(-32602),
        "modern resource not found: {missing}"
    );
    assert_eq!(missing["error"]["data"]["uri"], "seneschal://no/such");

    // The era removed the handshake and ping.
    for removed in ["ping", "logging/setLevel", "resources/subscribe"] {
        let a = mcp.modern(removed, json!({}));
        assert_eq!(code(&a), Some(-32601), "{removed}: {a}");
    }
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

#[test]
fn modern_requests_need_their_meta_and_a_served_version() {
    let mut mcp = Mcp::start(&[]);
    let a = mcp.request("server/discover", json!({}));
    assert_eq!(code(&a), Some(-32602), "no _meta: {a}");
    let a = mcp.request("tools/list", json!({}));
    assert_eq!(code(&a), Some(-32602), "no _meta and no initialize: {a}");
    let a = mcp.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
    );
    assert_eq!(code(&a), Some(-32602), "no clientCapabilities: {a}");
    assert!(a["error"]["message"]
        .as_str()
        .expect("message")
        .contains("clientCapabilities"));
    let a = mcp.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(code(&a), Some(-32602), "no protocolVersion: {a}");

    for bad in ["1900-01-01", "2025-11-25"] {
        let a = mcp.request("tools/list", json!({"_meta": modern_meta(bad)}));
        assert_eq!(code(&a), Some(-32022), "{bad}: {a}");
        assert_eq!(
            a["error"]["data"]["supported"],
            json!([
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ])
        );
        assert_eq!(a["error"]["data"]["requested"], bad);
    }
    let a = mcp.request(
        "server/discover",
        json!({"_meta": modern_meta("2099-12-31")}),
    );
    assert_eq!(code(&a), Some(-32022), "{a}");
}

#[test]
fn both_eras_can_share_one_process() {
    let mut mcp = Mcp::start(&[]);
    mcp.initialize("2025-11-25");
    let legacy = mcp.request("tools/list", json!({}));
    let modern = mcp.modern("tools/list", json!({}));
    assert_eq!(legacy["result"]["tools"], modern["result"]["tools"]);
    assert!(legacy["result"].get("resultType").is_none());
    assert_eq!(modern["result"]["resultType"], "complete");
}

#[test]
fn unserved_methods_are_not_found_in_either_era() {
    let mut mcp = Mcp::start(&[]);
    mcp.initialize("2025-11-25");
    let method = "subscriptions/listen";
    let a = mcp.request(method, json!({}));
    assert_eq!(code(&a), Some(-32601), "{method}: {a}");
    let a = mcp.modern(method, json!({}));
    assert_eq!(code(&a), Some(-32601), "{method} (modern): {a}");
    let a = mcp.request("no/such/method", json!({}));
    assert_eq!(code(&a), Some(-32601));
}

#[test]
fn malformed_and_invalid_messages_get_their_jsonrpc_codes() {
    let mut mcp = Mcp::start(&[]);
    mcp.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\n");
    let a = mcp.recv();
    assert_eq!(code(&a), Some(-32700), "{a}");
    assert_eq!(a["id"], Value::Null);
    mcp.send_raw(b"not json at all\n");
    assert_eq!(code(&mcp.recv()), Some(-32700));

    let cases = [
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            Value::Null,
        ),
        (json!("a string"), Value::Null),
        (
            json!({"jsonrpc": "1.0", "id": 5, "method": "ping"}),
            json!(5),
        ),
        (json!({"id": 6, "method": "ping"}), json!(6)),
        (
            json!({"jsonrpc": "2.0", "id": {"no": 1}, "method": "ping"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "id": 7, "method": 42}), json!(7)),
        (json!({"jsonrpc": "2.0", "id": 8}), json!(8)),
    ];
    for (message, id) in cases {
        mcp.send(&message);
        let a = mcp.recv();
        assert_eq!(code(&a), Some(-32600), "{message}: {a}");
        assert_eq!(a["id"], id, "{message}: {a}");
    }
    mcp.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": [1, 2]}));
    assert_eq!(code(&mcp.recv()), Some(-32602));
    // The server still serves after all of that.
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn tool_errors_are_results_and_unknown_tools_are_protocol_errors() {
    let mut mcp = Mcp::start(&[]);
    mcp.initialize("2025-11-25");
    let a = mcp.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_eq!(code(&a), Some(-32602), "{a}");
    let a = mcp.request("tools/call", json!({"arguments": {}}));
    assert_eq!(code(&a), Some(-32602), "{a}");

    let check = |a: &Value, expected: &str| {
        let r = &a["result"];
        assert_eq!(r["isError"], true, "{a}");
        assert_eq!(r["_meta"]["seneschal/error"]["code"], expected, "{a}");
        assert!(
            r.get("structuredContent").is_none(),
            "no structuredContent on error: {a}"
        );
        assert_eq!(r["content"][0]["type"], "text");
        assert!(!r["content"][0]["text"].as_str().expect("text").is_empty());
    };
    let a = mcp.request(
        "tools/call",
        json!({"name": "capabilities_list", "arguments": {"effect": "teleport"}}),
    );
    check(&a, "invalid_input");
    assert_eq!(
        a["result"]["_meta"]["seneschal/error"]["pointer"],
        "/effect"
    );
    let a = mcp.request(
        "tools/call",
        json!({"name": "capabilities_show", "arguments": {}}),
    );
    check(&a, "invalid_input");
    let a = mcp.request(
        "tools/call",
        json!({"name": "capabilities_show", "arguments": "not an object"}),
    );
    check(&a, "invalid_input");
    let a = mcp.request(
        "tools/call",
        json!({"name": "capabilities_show", "arguments": {"id": "no.such"}}),
    );
    check(&a, "not_found");
    assert_eq!(
        a["result"]["content"][0]["text"],
        "no capability has the id `no.such`"
    );
    // The same in the modern era.
    let a = mcp.modern(
        "tools/call",
        json!({"name": "capabilities_show", "arguments": {"id": "no.such"}}),
    );
    check(&a, "not_found");
    assert_eq!(a["result"]["resultType"], "complete");
}

#[test]
fn a_panicking_handler_is_internal_and_the_server_keeps_serving() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut mcp = Mcp::start_with(dir, &[], &[("SENESCHAL_MCP_DEBUG_PANIC", "mcp.projection")]);
    mcp.initialize("2025-11-25");
    let a = mcp.request(
        "tools/call",
        json!({"name": "mcp_projection", "arguments": {}}),
    );
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert_eq!(a["result"]["_meta"]["seneschal/error"]["code"], "internal");
    assert!(a["result"].get("structuredContent").is_none());
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));

    // A panic in the protocol layer itself is a JSON-RPC internal error, and is survived too.
    let mut mcp = Mcp::start_with(dir, &[], &[("SENESCHAL_MCP_DEBUG_PANIC", "tools/list")]);
    mcp.initialize("2025-11-25");
    let a = mcp.request("tools/list", json!({}));
    assert_eq!(code(&a), Some(-32603), "{a}");
    assert_eq!(a["error"]["data"]["seneschal/error"]["code"], "internal");
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
    let (status, rest, err) = mcp.finish();
    assert!(status.success());
    assert_eq!(rest, "");
    assert!(
        err.contains("panicked"),
        "the panic is logged on stderr: {err}"
    );
}

#[test]
fn cursors_are_opaque_and_strangers_are_refused() {
    let mut mcp = Mcp::start(&[]);
    mcp.initialize("2025-11-25");
    for method in ["tools/list", "resources/list", "resources/templates/list"] {
        for cursor in [
            json!("bogus"),
            json!(42),
            json!("7265736f75726365732f6c6973743a39393939"),
        ] {
            let a = mcp.request(method, json!({"cursor": cursor}));
            assert_eq!(code(&a), Some(-32602), "{method} {cursor}: {a}");
        }
    }
}

#[test]
fn notifications_and_client_responses_are_never_answered() {
    let mut mcp = Mcp::start(&[]);
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/unknown"}));
    mcp.send(&json!({"jsonrpc": "2.0", "method": "tools/list"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    let a = mcp.request("ping", json!({}));
    assert_eq!(a["result"], json!({}));
}

#[test]
fn eof_exits_zero_and_stdout_carries_protocol_lines_only() {
    let mut mcp = Mcp::start(&[]);
    mcp.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
    for id in 2..50 {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    }
    let (status, rest, err) = mcp.finish();
    assert_eq!(status.code(), Some(0));
    let lines: Vec<&str> = rest.lines().collect();
    assert_eq!(lines.len(), 49, "one answer per request, in order");
    for (i, line) in lines.iter().enumerate() {
        let v: Value = serde_json::from_str(line).expect("every stdout line is JSON-RPC");
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], i + 1);
    }
    assert!(
        err.contains("seneschal mcp"),
        "the log goes to stderr: {err}"
    );
}

/// A pipe on stdout is widened to 1 MiB (the most an unprivileged process may ask for by
/// default), so a large answer is written in one call and read in one; a lower system limit
/// leaves it as it was.
#[test]
fn a_pipe_on_stdout_is_widened_for_large_answers() {
    let mut mcp = Mcp::start(&[]);
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .expect("a Linux pipe limit")
        .trim()
        .parse()
        .expect("a number");
    let size = mcp.stdout_pipe_size();
    if max >= 1 << 20 {
        assert_eq!(size, 1 << 20);
    } else {
        assert!(size <= max, "{size} past the system's {max}");
    }
}

#[test]
fn an_overlong_line_is_refused_and_serving_goes_on() {
    let mut mcp = Mcp::start(&[]);
    let mut long = Vec::with_capacity(5 << 20);
    long.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#);
    long.resize(long.len() + (4 << 20) + 16, b'a');
    long.extend_from_slice(b"\"}}\n");
    mcp.send_raw(&long);
    let a = mcp.recv();
    assert_eq!(code(&a), Some(-32600), "{a}");
    assert!(a["error"]["message"]
        .as_str()
        .expect("message")
        .contains("exceeds"));
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let mut mcp = Mcp::start(&[]);
    mcp.initialize("2025-11-25");
    let mut batch = Vec::new();
    for id in 100..1100 {
        let method = if id % 2 == 0 { "ping" } else { "tools/list" };
        batch.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\"}}\n").as_bytes(),
        );
    }
    // A writer thread, so that neither side blocks on a full pipe.
    let stdin_bytes = batch;
    let mut writer = mcp;
    let handle = std::thread::spawn(move || {
        writer.send_raw(&stdin_bytes);
        writer
    });
    let mut mcp = handle.join().expect("writer");
    for id in 100..1100 {
        let a = mcp.recv();
        assert_eq!(a["id"], id);
        assert!(a.get("result").is_some());
    }
}

#[test]
fn allow_effects_read_lists_and_runs_only_reads() {
    let mut mcp = Mcp::start(&["--allow-effects", "read"]);
    mcp.initialize("2025-11-25");
    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert!(!tools.is_empty());
    for t in tools {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }
    let expected: Vec<&str> = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect == seneschal::policy::Effect::Read)
        .filter_map(|d| d.mcp_tool)
        .collect();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, expected);
    let a = mcp.request(
        "tools/call",
        json!({"name": "server_status", "arguments": {}}),
    );
    assert_eq!(
        a["result"]["structuredContent"]["allowed_effects"],
        json!(["read"]),
        "{a}"
    );

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_seneschal"))
        .args(["mcp", "--allow-effects", "everything"])
        .output()
        .expect("runs");
    assert_eq!(
        bad.status.code(),
        Some(2),
        "an unknown profile is invalid_input"
    );
}
