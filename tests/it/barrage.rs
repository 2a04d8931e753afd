//! The bad-input barrage: the classic hostile inputs and the limits of `access/src/limits.rs`, replayed
//! against ONE `seneschal mcp` process and ONE `seneschal serve` process (and the command line),
//! each with its expected code; then the same two processes must still answer `ping` and a read
//! capability correctly.
//!
//! The cases stored under `tests/fixtures/barrage/` (fuzz findings and hand-made frames) are
//! replayed too: every stdio frame there must get exactly one well-formed JSON-RPC answer.

use crate::support;
use serde_json::{json, Value};

use crate::support::http::{Resp, Serve};
use seneschal::limits;

/// One `seneschal mcp` over pipes (the client of `tests/it/support/mcp.rs`), with the checks every
/// answer of the barrage must pass.
struct Mcp(support::mcp::Mcp);

impl Mcp {
    fn start() -> Mcp {
        Mcp(support::mcp::Mcp::start(&[]))
    }

    /// Sends raw bytes followed by a newline.
    fn send(&mut self, bytes: &[u8]) {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        self.0.send_raw(&line);
    }

    /// Reads the next answer; it must be one well-formed JSON-RPC 2.0 response.
    fn answer(&mut self) -> Value {
        let v = self.0.recv();
        well_formed(&v);
        v
    }

    /// Sends one frame and returns its answer.
    fn call(&mut self, bytes: &[u8]) -> Value {
        self.send(bytes);
        self.answer()
    }

    /// Sends one frame that must get an error with `code` and this `id`.
    fn error(&mut self, bytes: &[u8], code: i64, id: Value) -> Value {
        let v = self.call(bytes);
        assert_eq!(
            v["error"]["code"],
            code,
            "frame {:?} got {v}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(120)])
        );
        assert_eq!(v["id"], id, "{v}");
        v
    }

    /// A `tools/call` in the legacy session; returns the result.
    fn tool(&mut self, id: u64, name: &str, args: Value) -> Value {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
        let v = self.call(frame.to_string().as_bytes());
        assert_eq!(v["id"], id, "{v}");
        v["result"].clone()
    }
}

/// Asserts the shape every answer must have: `jsonrpc` 2.0, an `id`, and exactly one of
/// `result` or `error` (with an integer code and a message).
fn well_formed(v: &Value) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("id").is_some(), "no id: {v}");
    match (v.get("result"), v.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "{v}");
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        }
        _ => panic!("not exactly one of result and error: {v}"),
    }
}

/// The seneschal error code of a failed tool result.
fn tool_code(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["_meta"]["seneschal/error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no code: {result}"))
}

/// The path-traversal spellings every transport must refuse or not find, never serve.
/// `(spelling, expected code when taken literally)`.
const TRAVERSALS: &[(&str, &str)] = &[
    ("../Cargo.toml", "refused"),
    ("..%2fCargo.toml", "not_found"),
    ("%2e%2e/Cargo.toml", "not_found"),
    ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", "not_found"),
    ("..\\Cargo.toml", "not_found"),
    ("src\\..\\..\\Cargo.toml", "not_found"),
    ("/etc/passwd", "refused"),
    ("\\etc\\passwd", "refused"),
    ("\\\\?\\C:\\Windows\\win.ini", "refused"),
    ("C:\\Windows\\win.ini", "refused"),
    ("src/../../Cargo.toml", "refused"),
    (".git/config", "refused"),
    (".GIT/config", "refused"),
];

#[test]
fn the_mcp_stdio_server_survives_the_barrage() {
    let mut m = Mcp::start();
    let init = m.call(
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"barrage","version":"1"}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    m.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // Bytes that are not JSON: -32700 with a null id.
    m.error(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xe2\x82\"}}",
        -32700,
        Value::Null,
    );
    m.error(b"\xff\xfe{}", -32700, Value::Null);
    m.error(b"{\"jsonrpc\":\"2.0\",\x00\"id\":1}", -32700, Value::Null);
    m.error(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x00ng\"}",
        -32700,
        Value::Null,
    );
    m.error(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"meth", -32700, Value::Null);
    m.error(b"\x00\x00\x00", -32700, Value::Null);
    // An escaped NUL is valid JSON: the method is simply unknown.
    m.error(
        br#"{"jsonrpc":"2.0","id":2,"method":"ping\u0000"}"#,
        -32601,
        json!(2),
    );

    // A 10 MB single line: over the stdio cap, skipped whole, -32600 with a null id.
    let mut huge = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":""#.to_vec();
    huge.resize(10 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}");
    let v = m.error(&huge, -32600, Value::Null);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&limits::STDIO_LINE.to_string()),
        "{v}"
    );
    // Exactly at the cap is still accepted (the line without its newline).
    let mut edge = br#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":""#.to_vec();
    edge.resize(limits::STDIO_LINE - 3, b'b');
    edge.extend_from_slice(b"\"}}");
    assert_eq!(edge.len(), limits::STDIO_LINE);
    assert_eq!(m.call(&edge)["result"], json!({}));

    // Deep nesting: at the depth limit it parses, beyond it (and at 100,000) it is -32700.
    let nest = |n: usize, inner: &str| format!("{}{inner}{}", "[".repeat(n), "]".repeat(n));
    m.error(nest(100_000, "").as_bytes(), -32700, Value::Null);
    m.error(
        nest(limits::JSON_DEPTH + 1, "").as_bytes(),
        -32700,
        Value::Null,
    );
    let deep_args = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"capabilities_list","arguments":{{"x":{}}}}}}}"#,
        nest(limits::JSON_DEPTH - 4, "1")
    );
    let r = m.call(deep_args.as_bytes());
    assert_eq!(r["id"], 5, "{r}");
    assert_eq!(tool_code(&r["result"]), "invalid_input", "{r}");
    let v = m.error(
        format!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"x":{}}}}}"#,
            nest(200, "")
        )
        .as_bytes(),
        -32700,
        Value::Null,
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("recursion limit"),
        "{v}"
    );

    // Duplicate keys: the last one wins (serde_json), and the answer says which id it served.
    let v = m.call(br#"{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/list","method":"ping"}"#);
    assert_eq!(
        (v["id"].clone(), v["result"].clone()),
        (json!(8), json!({}))
    );

    // Numbers beyond i64 and f64.
    m.error(
        br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        -32700,
        Value::Null,
    );
    let v = m.call(br#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"}"#);
    assert_eq!(v["result"], json!({}), "{v}");
    assert!(v["id"].is_f64(), "{v}");
    let v = m.call(br#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#);
    assert!(v["id"].is_f64(), "{v}");
    let r = m.tool(
        9,
        "files_read",
        json!({"path": "Cargo.toml", "limit": 1e300}),
    );
    assert_eq!(tool_code(&r), "invalid_input");
    let r = m.tool(
        10,
        "files_read",
        json!({"path": "Cargo.toml", "limit": u64::MAX}),
    );
    assert_eq!(tool_code(&r), "invalid_input");

    // Wrong `jsonrpc`: -32600, echoing a readable id.
    for bad in [
        r#"{"jsonrpc":"1.0","id":11,"method":"ping"}"#,
        r#"{"jsonrpc":2.0,"id":11,"method":"ping"}"#,
        r#"{"id":11,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0 ","id":11,"method":"ping"}"#,
    ] {
        m.error(bad.as_bytes(), -32600, json!(11));
    }

    // Ids of every JSON type: strings and numbers (integer or not) are echoed; the others are
    // -32600 with a null id.
    for id in [
        json!("s"),
        json!(""),
        json!(12),
        json!(-1),
        json!(1.5),
        json!(0),
    ] {
        let v = m.call(
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
                .to_string()
                .as_bytes(),
        );
        assert_eq!((v["id"].clone(), v["result"].clone()), (id, json!({})));
    }
    for id in [json!(null), json!(true), json!({"a": 1}), json!([1])] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string();
        m.error(frame.as_bytes(), -32600, Value::Null);
    }

    // Batches: arrays are not served (MCP 2025-06-18 removed them) in either era: -32600.
    m.error(
        br#"[{"jsonrpc":"2.0","id":13,"method":"ping"}]"#,
        -32600,
        Value::Null,
    );
    m.error(b"[]", -32600, Value::Null);
    let modern_meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let batch = json!([{"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": {"_meta": modern_meta}}]);
    m.error(batch.to_string().as_bytes(), -32600, Value::Null);
    // Scalars and strings are not requests either.
    for frame in ["1", "\"ping\"", "null", "true"] {
        m.error(frame.as_bytes(), -32600, Value::Null);
    }

    // A notification gets no answer, even a malformed-params one: the ping after it is next.
    m.send(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#);
    m.send(br#"{"jsonrpc":"2.0","method":"tools/list","params":[1]}"#);
    let v = m.call(br#"{"jsonrpc":"2.0","id":15,"method":"ping"}"#);
    assert_eq!(v["id"], 15, "a notification was answered: {v}");

    // Path traversal spellings over MCP: refused or not found, never read.
    for (i, (path, code)) in TRAVERSALS.iter().enumerate() {
        let r = m.tool(100 + i as u64, "files_read", json!({"path": path}));
        assert_eq!(tool_code(&r), *code, "{path}: {r}");
    }
    // A NUL inside a path is refused or not found, never a crash.
    let r = m.tool(200, "files_read", json!({"path": "Cargo.toml\u{0}.txt"}));
    assert!(
        matches!(tool_code(&r), "invalid_input" | "refused" | "not_found"),
        "{r}"
    );

    // The stored cases: every frame gets exactly one well-formed answer.
    for (name, frame) in fixture_frames() {
        let v = m.call(&frame);
        assert!(
            v.get("result").is_some() || v.get("error").is_some(),
            "{name}: {v}"
        );
    }

    // The session note cap: 1,000 notes (pipelined), then the next is refused, and the list
    // holds exactly the cap.
    let cap = seneschal::limits::MAX_NOTES;
    let mut frames = Vec::new();
    for i in 0..=cap {
        let f = json!({"jsonrpc": "2.0", "id": 10_000 + i, "method": "tools/call",
            "params": {"name": "session_note_add", "arguments": {"text": format!("note {i}")}}});
        frames.extend_from_slice(f.to_string().as_bytes());
        frames.push(b'\n');
    }
    m.0.send_raw(&frames);
    for i in 0..=cap {
        let v = m.answer();
        assert_eq!(v["id"], 10_000 + i, "{v}");
        let r = &v["result"];
        if i < cap {
            assert_eq!(r["structuredContent"]["count"], i + 1, "{v}");
        } else {
            assert_eq!(tool_code(r), "refused", "{v}");
            assert_eq!(
                r["_meta"]["seneschal/error"]["data"]["rule"], "note_cap",
                "{v}"
            );
        }
    }
    let r = m.tool(998, "session_note_list", json!({}));
    assert_eq!(
        r["structuredContent"]["notes"].as_array().map(Vec::len),
        Some(cap)
    );

    // The same process still answers ping and a read capability correctly.
    let v = m.call(br#"{"jsonrpc":"2.0","id":"last-ping","method":"ping"}"#);
    assert_eq!(
        (v["id"].clone(), v["result"].clone()),
        (json!("last-ping"), json!({}))
    );
    let r = m.tool(999, "capabilities_list", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    let ids: Vec<&str> = r["structuredContent"]["capabilities"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(ids.contains(&"files.read"), "{ids:?}");
    // End of input ends the process cleanly, with nothing more to say.
    let (status, rest, _) = m.0.finish();
    assert!(status.success(), "{status}");
    assert_eq!(rest, "", "answers nobody asked for");
}

/// Every non-empty line of the `*.jsonl` files under tests/fixtures/barrage/, raw.
fn fixture_frames() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/barrage");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the fixture directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {dir}");
    for f in files {
        let bytes = std::fs::read(&f).expect("a fixture");
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            out.push((format!("{}:{}", f.display(), i + 1), line.to_vec()));
        }
    }
    out
}

/// One `seneschal serve` on a free loopback port, in the crate root.
fn http() -> Serve {
    Serve::start(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), &[])
}

#[test]
fn the_http_server_survives_the_barrage() {
    let s = http();
    let read = |q: &str| s.request("GET", &format!("/api/v1/files/read?{q}"), &[], b"");

    // Path traversal spellings in the query string are decoded first, then confined.
    for q in [
        "path=..%2fCargo.toml",
        "path=%2e%2e%2fCargo.toml",
        "path=%2E%2E/Cargo.toml",
        "path=src%2f..%2f..%2fCargo.toml",
        "path=%2fetc%2fpasswd",
        "path=/etc/passwd",
        "path=%5cetc%5cpasswd",
        "path=%5c%5c%3f%5cC:%5cWindows%5cwin.ini",
        "path=C:%5cWindows%5cwin.ini",
        "path=.git%2fconfig",
    ] {
        let p = read(q).problem(403, "refused");
        assert!(p["data"]["rule"].is_string(), "{q}: {p}");
    }
    for q in ["path=..%5cCargo.toml", "path=%252e%252e%252fCargo.toml"] {
        read(q).problem(404, "not_found");
    }
    // Traversal in the request path itself reaches no file: there is no file route.
    for target in [
        "/../../etc/passwd",
        "/api/v1/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/v1/files/read/..%2f..%2fetc%2fpasswd",
        "\\..\\..\\etc\\passwd",
    ] {
        let r = s.request("GET", target, &[], b"");
        assert!(matches!(r.status, 400 | 404), "{target}: {}", r.status);
    }

    // Broken query strings: malformed escapes, truncated UTF-8, NUL, multi-byte after `%`.
    read("path=%").problem(400, "invalid_input");
    read("path=%zz").problem(400, "invalid_input");
    read("path=%E2%82").problem(400, "invalid_input");
    read("path=%ff%fe").problem(400, "invalid_input");
    let r = read("path=Cargo.toml%00.txt");
    assert!(matches!(r.status, 400 | 403 | 404), "{}", r.status);
    read("path=Cargo.toml&limit=1e400").problem(400, "invalid_input");
    read("path=Cargo.toml&limit=99999999999999999999999").problem(400, "invalid_input");
    read("path=Cargo.toml&limit=100001").problem(400, "invalid_input");
    read("path=Cargo.toml&limit=-1").problem(400, "invalid_input");

    // Overlong heads: a request line, a header line over 8 KiB, more than 100 headers: 431.
    let long = "a".repeat(limits::HTTP_HEAD_LINE + 10);
    let r = s.request("GET", &format!("/api/v1/capabilities?x={long}"), &[], b"");
    assert_eq!(r.status, 431);
    let r = s.request("GET", "/api/v1/capabilities", &[("X-Long", &long)], b"");
    assert_eq!(r.status, 431);
    let many: Vec<(String, String)> = (0..=limits::HTTP_HEAD_LINES)
        .map(|i| (format!("X-H{i}"), "v".to_string()))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(
        s.request("GET", "/api/v1/capabilities", &many, b"").status,
        431
    );
    // A NUL in the head is answered; an empty head is 400.
    s.raw(b"GET /api/v1/capabilities\x00 HTTP/1.1\r\nHost: x\r\n\r\n")
        .problem(403, "refused");
    assert_eq!(s.raw(b"\r\n\r\nGET").status, 400);
    // Bytes that are not ASCII in the request line or a header (raw UTF-8, truncated UTF-8,
    // 0xFF) make tiny_http close the connection without an answer; the server lives on.
    let host = s.addr.to_string();
    for raw in [
        format!("GET /api/v1/files/read?path=%\u{1F600} HTTP/1.1\r\nHost: {host}\r\n\r\n")
            .into_bytes(),
        format!("GET /api/v1/files/read?path=\u{e9} HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes(),
        b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /\xe2\x82 HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nX-A: \u{e9}\r\n\r\n").into_bytes(),
    ] {
        assert!(
            s.closed_without_answer(&raw),
            "{}",
            String::from_utf8_lossy(&raw)
        );
    }

    // Oversize bodies: declared over the limit is 413 before a byte is read, at /mcp and on
    // a capability route; conflicting framing is 400.
    let over = (limits::HTTP_BODY_DEFAULT + 1).to_string();
    let head = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {over}\r\nConnection: close\r\n\r\n",
            s.addr
        )
    };
    s.raw(head("/mcp").as_bytes()).problem(413, "too_large");
    s.raw(head("/api/v1/session/notes").as_bytes())
        .problem(413, "too_large");
    let big = vec![b' '; limits::HTTP_BODY_DEFAULT + 1];
    s.request(
        "POST",
        "/api/v1/session/notes",
        &[("Content-Type", "application/json")],
        &big,
    )
    .problem(413, "too_large");
    let r = s.raw(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{{}}",
            s.addr
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 400);

    // Bad JSON bodies on a capability route: 400 invalid_input at the root pointer.
    let post = |body: &[u8]| {
        s.request(
            "POST",
            "/api/v1/session/notes",
            &[("Content-Type", "application/json")],
            body,
        )
    };
    for body in [
        "[".repeat(100_000).into_bytes(),
        b"{\"text\":\"\xe2\x82\"}".to_vec(),
        b"{\"text\":\x00}".to_vec(),
        b"{\"text\":1e400}".to_vec(),
        b"{\"text\":".to_vec(),
    ] {
        let p = post(&body).problem(400, "invalid_input");
        assert_eq!(p["pointer"], "", "{p}");
    }
    // Duplicate keys: the last wins, then the schema decides.
    post(br#"{"text":"a","text":5}"#).problem(400, "invalid_input");

    // MCP over HTTP: the same sorting as stdio, JSON-RPC answers (never a crash).
    let jr = |r: &Resp| {
        let v = r.json();
        well_formed(&v);
        v
    };
    let v = jr(&s.mcp("[".repeat(100_000).as_bytes()));
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let v = jr(&s.mcp(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xe2\x82\"}"));
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let v = jr(&s.mcp(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    let v = jr(&s.mcp(br#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#));
    assert_eq!(
        (v["error"]["code"].clone(), v["id"].clone()),
        (json!(-32600), json!(2))
    );
    for id in [json!(true), json!({"a": 1}), json!([1]), json!(null)] {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string();
        let v = jr(&s.mcp(frame.as_bytes()));
        assert_eq!(v["error"]["code"], -32600, "{v}");
    }
    for (path, code) in TRAVERSALS {
        let frame = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "files_read", "arguments": {"path": path}}});
        let v = jr(&s.mcp(frame.to_string().as_bytes()));
        assert_eq!(tool_code(&v["result"]), *code, "{path}: {v}");
    }

    // The session note cap, over one keep-alive connection.
    let cap = seneschal::limits::MAX_NOTES;
    let mut c = s.connect();
    for i in 0..=cap {
        let body = json!({ "text": format!("note {i}") }).to_string();
        let r = c.send(
            &s.host(),
            "POST",
            "/api/v1/session/notes",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        if i < cap {
            assert_eq!(r.status, 200, "{}", r.text());
        } else {
            let p = r.problem(403, "refused");
            assert_eq!(p["data"]["rule"], "note_cap", "{p}");
        }
    }

    // The same process still answers ping and a read capability correctly.
    let v = jr(&s.mcp(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#));
    assert_eq!(v["result"], json!({}), "{v}");
    let r = s.request("GET", "/api/v1/capabilities", &[], b"");
    assert_eq!(r.status, 200);
    let list = r.json();
    assert!(
        list["capabilities"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["id"] == "files.read")),
        "{list}"
    );
    let r = read("path=Cargo.toml&limit=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["path"], "Cargo.toml");
}

#[test]
fn the_command_line_refuses_the_same_spellings() {
    for (path, code) in TRAVERSALS {
        let out = support::run(&["files", "read", "--path", path, "--json"]);
        let err = support::stderr(&out);
        assert!(err.contains(&format!("error[{code}]")), "{path}: {err}");
        assert!(!out.status.success());
    }
    let out = support::run(&["files", "read", "--path", "Cargo.toml", "--limit", "100001"]);
    assert!(support::stderr(&out).contains("error[invalid_input]"));
}

/// A value refused for its schema is named short, not echoed whole: a query of 600 characters
/// (its `maxLength` is 500) is `invalid_input` on every transport, the message quoting its
/// first characters and its length (`limits::ERROR_ECHO`), never the 600 characters.
#[test]
fn a_long_refused_value_is_named_not_echoed_on_every_transport() {
    let long = "q".repeat(600);
    let named = "… (602 bytes of JSON) is longer than 500 characters";
    let short = |message: &str| {
        assert!(message.contains(named), "{message}");
        assert!(!message.contains(&long), "echoed whole: {message}");
        assert!(message.len() < 2 * limits::ERROR_ECHO, "{message}");
    };

    let mut m = Mcp::start();
    m.0.initialize("2025-11-25");
    let r = m.tool(1, "knowledge_search", json!({"query": long}));
    assert_eq!(tool_code(&r), "invalid_input", "{r}");
    short(r["content"][0]["text"].as_str().unwrap());
    m.0.finish();

    let s = http();
    let (status, problem) = s.json(
        "GET",
        &format!("/api/v1/knowledge/search?query={long}"),
        None,
    );
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["code"], "invalid_input", "{problem}");
    short(problem["detail"].as_str().unwrap());
    s.finish();

    let out = support::run(&["knowledge", "search", "--query", &long]);
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert!(err.contains("error[invalid_input]"), "{err}");
    short(&err);
}

/// A repository for the knowledge limit: one ADR, one guide exactly at the 1 MiB cap, and one
/// a byte over it.
fn knowledge_repo() -> tempfile::TempDir {
    let dir = support::adr_repo();
    let p = dir.path();
    std::fs::create_dir_all(p.join("docs/guides")).unwrap();
    let cap = seneschal::knowledge::MAX_FILE_BYTES as usize;
    for (name, len) in [("at-cap.md", cap), ("over-cap.md", cap + 1)] {
        let mut text = b"---\ntitle: Big\n---\n".to_vec();
        text.resize(len, b'x');
        std::fs::write(p.join("docs/guides").join(name), text).unwrap();
    }
    dir
}

/// The knowledge file size limit, on every transport: a file over the cap is a finding (never
/// an object, never a crash) and a write that would make one is refused before anything is
/// written. The file exactly at the cap is served.
#[test]
fn the_knowledge_file_cap_holds_on_every_transport() {
    let d = knowledge_repo();
    let dir = d.path();
    let over = "seneschal://knowledge/guide/over-cap";
    let at = "seneschal://knowledge/guide/at-cap";
    let cap_message = "over the 1048576 byte (1 MiB) cap";
    // A body of 350,000 three-byte characters: within the schema's 1,000,000 characters, but
    // 1,050,000 bytes once written.
    let body = "\u{20ac}".repeat(350_000);
    let big_write = json!({"kind": "guide", "id": "too-big", "front_matter": {"title": "Too big"}, "body": body});
    let audit = dir.join(".seneschal/audit.jsonl");

    // The command line.
    let check = support::run_in(dir, &["knowledge", "check", "--json"]);
    assert_eq!(check.status.code(), Some(11), "{}", support::stderr(&check));
    let findings = support::json(&check)["findings"].clone();
    let f = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "docs/guides/over-cap.md")
        .unwrap_or_else(|| panic!("no finding for the file over the cap: {findings}"));
    assert!(f["message"].as_str().unwrap().contains(cap_message), "{f}");
    assert_eq!(findings.as_array().unwrap().len(), 1, "{findings}");
    let get = support::run_in(dir, &["knowledge", "get", "--uri", over, "--json"]);
    assert_eq!(get.status.code(), Some(3), "{}", support::stderr(&get));
    assert!(support::stderr(&get).contains("error[not_found]"));
    let get = support::run_in(dir, &["knowledge", "get", "--uri", at, "--json"]);
    assert!(get.status.success(), "{}", support::stderr(&get));
    assert_eq!(support::json(&get)["title"], "Big");

    // The write, through `call --input -` (one argument cannot carry a megabyte).
    let out = support::run_with_stdin(
        dir,
        &["call", "knowledge.create", "--yes", "--input", "-"],
        big_write.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(
        err.contains("error[invalid_input]") && err.contains("/body"),
        "{err}"
    );
    assert!(err.contains("cap for knowledge objects"), "{err}");

    // MCP over stdio.
    let mut m = support::mcp::Mcp::start_with(dir, &[], &[]);
    m.initialize("2025-06-18");
    let call = |m: &mut support::mcp::Mcp, name: &str, args: Value| {
        m.request("tools/call", json!({"name": name, "arguments": args}))["result"].clone()
    };
    let r = call(&mut m, "knowledge_check", json!({}));
    assert_eq!(r["structuredContent"]["findings"], findings, "{r}");
    let r = call(&mut m, "knowledge_get", json!({ "uri": over }));
    assert_eq!(tool_code(&r), "not_found", "{r}");
    let r = call(&mut m, "knowledge_create", big_write.clone());
    assert_eq!(tool_code(&r), "invalid_input", "{r}");
    let err = &r["_meta"]["seneschal/error"];
    assert_eq!(err["pointer"], "/body", "{r}");
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("cap for knowledge objects"), "{r}");
    let r = m.request("ping", json!({}));
    assert_eq!(r["result"], json!({}), "{r}");
    drop(m);

    // HTTP, with a body limit above the write so that the handler's own check is reached.
    let s = support::http::Serve::start_args(dir, &["--max-body", "4194304"], &[]);
    let (status, v) = s.json("GET", "/api/v1/knowledge/check", None);
    assert_eq!((status, &v["findings"]), (200, &findings), "{v}");
    let (status, v) = s.json(
        "GET",
        &format!("/api/v1/knowledge/get?uri={}", support::http::enc(over)),
        None,
    );
    assert_eq!(
        (status, v["code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
    let (status, v) = s.json("POST", "/api/v1/knowledge/create", Some(&big_write));
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    assert_eq!(v["pointer"], "/body", "{v}");
    drop(s);

    // Nothing was written; the audit log records the three refusals, touching no path.
    assert!(!dir.join("docs/guides/too-big.md").exists());
    let log = std::fs::read_to_string(&audit).unwrap();
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{log}");
    for (r, transport) in records.iter().zip(["cli", "mcp", "http"]) {
        assert_eq!(r["capability"], "knowledge.create", "{r}");
        assert_eq!(r["outcome"], "refused", "{r}");
        assert_eq!(r["code"], "invalid_input", "{r}");
        assert_eq!(r["paths"], json!([]), "{r}");
        assert_eq!(r["transport"], transport, "{r}");
    }
}
