//! Fuzz target: one parsed HTTP request (method, path, query, headers, body) into the guard
//! and the router, through `seneschal::http::InMemory` (the same `answer` the server runs
//! after tiny_http has parsed the head; no sockets).
//!
//! Invariants:
//! - the status is one of the documented ones;
//! - every problem body (`application/problem+json`) is JSON with a stable `code` and the
//!   same `status`, and its status is the code's status, from the codes table;
//! - `/mcp` answers JSON-RPC 2.0 (as JSON, or as SSE events that each carry one message; or
//!   202 with no body for a notification);
//! - a request whose `Host` does not name the server never reaches a route (403 or 400);
//! - no handler panics (libfuzzer-sys aborts on any panic, even one the server catches).

#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

use seneschal::codes::ErrorCode;
use seneschal::context::Context;
use seneschal::http::{InMemory, Options};
use seneschal::policy::Effect;

/// The statuses the HTTP projection documents.
const STATUSES: &[u16] = &[200, 202, 304, 400, 403, 404, 405, 409, 413, 500, 501];

/// Paths worth starting from; the fuzzer mutates the rest.
const PATHS: &[&str] = &[
    "/",
    "/openapi.json",
    "/docs",
    "/docs/assets/swagger-ui.css",
    "/.well-known/mcp/server-card.json",
    "/mcp/server-card",
    "/mcp",
    "/api/v1/capabilities",
    "/api/v1/files/read",
    "/api/v1/files/search",
    "/api/v1/session/notes",
    "/api/v1/server/status",
];

const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

/// The request as the fuzzer shapes it.
#[derive(Debug, Arbitrary)]
struct Req {
    method: u8,
    odd_method: Option<String>,
    path: u8,
    path_suffix: String,
    query: String,
    /// 0: the right Host; 1: none; 2: the fuzzer's own.
    host: u8,
    odd_host: String,
    origin: Option<String>,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

const ADDR: &str = "127.0.0.1:7878";

fn server() -> &'static InMemory {
    static SERVER: OnceLock<InMemory> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("seneschal-fuzz-http-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("scratch dir");
        std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").expect("a file");
        std::fs::write(dir.join(".env"), "TOKEN=abcdefghijkl\n").expect("a file");
        std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").expect("a file");
        let options = Options {
            bind: ADDR.parse().expect("an address"),
            allow_remote: false,
            max_effect: Effect::RepositoryWrite,
            approval: Default::default(),
            approval_timeout: Duration::from_secs(1),
            toolsets: seneschal::toolset::Toolsets::ALL,
            max_body: 4096,
            timeout: Duration::from_secs(1),
            request_timeout: Duration::from_secs(1),
            workers: 1,
            max_connections: 1,
            desk_secret: None,
        };
        let ctx = Arc::new(Context::new(dir, Effect::RepositoryWrite));
        InMemory::new(ctx, options.bind, &options)
    })
}

fuzz_target!(|r: Req| {
    let method = match &r.odd_method {
        Some(m) if r.method >= 200 => m.clone(),
        _ => METHODS[r.method as usize % METHODS.len()].to_string(),
    };
    let mut path = PATHS[r.path as usize % PATHS.len()].to_string();
    path.push_str(&r.path_suffix);
    let url = if r.query.is_empty() {
        path.clone()
    } else {
        format!("{path}?{}", r.query)
    };
    let mut headers: Vec<(String, String)> = Vec::new();
    let good_host = r.host % 3 == 0;
    match r.host % 3 {
        0 => headers.push(("host".into(), ADDR.into())),
        1 => {}
        _ => headers.push(("host".into(), r.odd_host.clone())),
    }
    if let Some(o) = &r.origin {
        headers.push(("origin".into(), o.clone()));
    }
    if let Some(ct) = &r.content_type {
        headers.push(("content-type".into(), ct.clone()));
    }
    headers.extend(
        r.headers
            .iter()
            .filter(|(n, _)| n != "host")
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone())),
    );

    // The path the server routes on: a `?` in the fuzzed suffix starts the query early.
    let path = url
        .split_once('?')
        .map_or(url.as_str(), |(p, _)| p)
        .to_string();
    let (status, reply_headers, body) = server().answer(&method, &url, &headers, &r.body);

    assert!(STATUSES.contains(&status), "undocumented status {status}");
    let content_type = reply_headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.as_str());
    let named = ["127.0.0.1:7878", "localhost:7878", "[::1]:7878"]
        .contains(&r.odd_host.trim().to_ascii_lowercase().as_str());
    if !good_host && !(r.host % 3 == 2 && named) {
        assert!(
            matches!(status, 400 | 403),
            "a foreign Host reached a route: {status}"
        );
    }
    if content_type == Some("application/problem+json") {
        let p: Value = serde_json::from_slice(&body).expect("a problem is JSON");
        let code = p["code"].as_str().expect("a problem carries its code");
        let code = ErrorCode::ALL
            .iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| panic!("unknown code {code}"));
        assert_eq!(p["status"], status, "{p}");
        assert_eq!(status, code.http_status(), "{p}");
        assert!(p["detail"].as_str().is_some_and(|d| !d.is_empty()), "{p}");
    } else if status >= 400 && path != "/mcp" {
        panic!("an error without a problem body: {status}");
    }
    if path == "/mcp"
        && method == "POST"
        && status != 413
        && content_type != Some("application/problem+json")
    {
        if status == 202 {
            assert!(body.is_empty());
        } else if content_type == Some("text/event-stream") {
            // A streamed call: every event carries one JSON-RPC 2.0 message.
            let text = std::str::from_utf8(&body).expect("an SSE stream is text");
            for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
                let v: Value = serde_json::from_str(data).expect("an event carries JSON");
                assert_eq!(v["jsonrpc"], "2.0", "{v}");
            }
        } else {
            let v: Value = serde_json::from_slice(&body).expect("/mcp answers JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
        }
    }
});
