//! `seneschal serve` over loopback: every route, every error class, every guard rule, the
//! connection burst, and parity with the command line.
//!
//! Each test starts the built binary with `--bind 127.0.0.1:0` and stdin piped, reads the bound
//! address from its first stdout line, and talks HTTP/1.1 to it with the client of `tests/transports`.
//! Dropping the [`Serve`] closes its stdin, and the server exits by itself.

use crate::support;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::http::{enc, query_of, Conn, Serve};
use serde_json::Value;

/// Starts `seneschal serve` in the crate root with extra arguments.
fn start(extra: &[&str]) -> Serve {
    Serve::start_args(Path::new(env!("CARGO_MANIFEST_DIR")), extra, &[])
}

/// Every capability descriptor, as `capabilities.show` returns them over HTTP.
fn descriptors(s: &Serve) -> Vec<Value> {
    let list = s.get("/api/v1/capabilities").json();
    list["capabilities"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| {
            let id = c["id"].as_str().expect("an id");
            let r = s.get(&format!("/api/v1/capabilities/show?id={}", enc(id)));
            assert_eq!(r.status, 200, "{}", r.text());
            r.json()
        })
        .collect()
}

fn status_of(code: &str) -> u16 {
    match code {
        "invalid_input" => 400,
        "not_found" => 404,
        "refused" => 403,
        "conflict" => 409,
        "unsupported" => 501,
        "internal" => 500,
        other => panic!("unknown code {other}"),
    }
}

#[test]
fn announces_the_bound_address_on_stdout_and_the_urls_on_stderr() {
    let s = start(&[]);
    let line = s.banner.clone();
    assert!(line.starts_with("listening on http://127.0.0.1:"), "{line}");
    assert_ne!(s.addr.port(), 0);
    let r = s.get("/api/v1/server/status");
    assert_eq!(r.status, 200);
    let base = format!("http://{}", s.addr);
    let (status, err) = s.finish_status();
    for url in [
        format!("{base}/"),
        format!("{base}/docs"),
        format!("{base}/mcp"),
    ] {
        assert!(err.contains(&url), "stderr lacks {url}: {err}");
    }
    assert!(status.success());
}

#[test]
fn every_http_example_matches_the_command_line() {
    let s = start(&[]);
    let mut checked = 0;
    for d in descriptors(&s) {
        let Some(http) = d["expose"]["http"].as_object() else {
            continue;
        };
        if http["method"] != "GET" || d["stability"] == "planned" {
            continue;
        }
        let path = http["path"].as_str().expect("a path");
        let id = d["id"].as_str().expect("an id");
        for ex in d["examples"].as_array().expect("examples") {
            let input = &ex["input"];
            let q = query_of(input);
            let url = if q.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{q}")
            };
            let r = s.get(&url);
            let outcome = ex["outcome"].as_str().expect("an outcome");
            if outcome != "ok" {
                r.problem(status_of(outcome), outcome);
                checked += 1;
                continue;
            }
            assert_eq!(r.status, 200, "{id} {url}: {}", r.text());
            assert_eq!(r.header("content-type"), Some("application/json"));
            if d["determinism"] == "process" {
                // Exempt from parity by declaration (uptime, pid): same keys only.
                let cli =
                    support::json(&support::run(&["call", id, "--input", &input.to_string()]));
                let keys = |v: &Value| {
                    v.as_object()
                        .map(|o| o.keys().cloned().collect::<Vec<_>>())
                        .unwrap_or_default()
                };
                assert_eq!(keys(&r.json()), keys(&cli), "{id}");
            } else {
                let out = support::run(&["call", id, "--input", &input.to_string()]);
                assert!(out.status.success(), "{}", support::stderr(&out));
                assert_eq!(
                    r.json(),
                    support::json(&out),
                    "{id} {url}: HTTP and CLI differ"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} examples checked");
}

#[test]
fn invalid_input_is_400_with_the_json_pointer() {
    let s = start(&[]);
    let p = s
        .get("/api/v1/capabilities?effect=teleport")
        .problem(400, "invalid_input");
    assert_eq!(p["pointer"], "/effect");
    // A parameter the schema does not know, a repeated scalar, and a broken escape.
    let p = s
        .get("/api/v1/capabilities?colour=red")
        .problem(400, "invalid_input");
    assert!(p["detail"].as_str().unwrap().contains("colour"), "{p}");
    let p = s
        .get("/api/v1/capabilities/show?id=a&id=b")
        .problem(400, "invalid_input");
    assert_eq!(p["pointer"], "/id");
    let p = s
        .get("/api/v1/capabilities/show?id=%zz")
        .problem(400, "invalid_input");
    assert_eq!(p["pointer"], "");
    // A required parameter missing.
    s.get("/api/v1/capabilities/show")
        .problem(400, "invalid_input");
}

#[test]
fn not_found_and_method_not_allowed() {
    let s = start(&[]);
    s.get("/api/v1/nothing/here").problem(404, "not_found");
    s.get("/docs/assets/nope.js").problem(404, "not_found");
    let p = s
        .get("/api/v1/capabilities/show?id=no.such")
        .problem(404, "not_found");
    assert_eq!(p["pointer"], "/id");
    for (method, path, allow) in [
        ("POST", "/api/v1/capabilities", "GET, HEAD"),
        ("DELETE", "/api/v1/server/status", "GET, HEAD"),
        ("PUT", "/openapi.json", "GET, HEAD"),
        ("POST", "/", "GET, HEAD"),
        ("POST", "/.well-known/mcp/server-card.json", "GET, HEAD"),
        ("GET", "/mcp", "POST"),
        ("DELETE", "/mcp", "POST"),
    ] {
        let r = s.request(method, path, &[], b"");
        r.problem(405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
    }
}

#[test]
fn an_effect_profile_refuses_what_is_above_it() {
    let s = start(&["--allow-effects", "read"]);
    let mut above = 0;
    for d in descriptors(&s) {
        let Some(http) = d["expose"]["http"].as_object() else {
            continue;
        };
        if d["stability"] == "planned" {
            continue;
        }
        let (method, path) = (
            http["method"].as_str().unwrap(),
            http["path"].as_str().unwrap(),
        );
        let r = s.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            if method == "POST" { b"{}" } else { b"" },
        );
        if d["effect"] == "read" {
            assert_ne!(r.status, 403, "{path} is a read: {}", r.text());
        } else {
            r.problem(403, "refused");
            above += 1;
        }
    }
    // The profile is visible to callers too.
    let status = s.get("/api/v1/server/status").json();
    assert_eq!(status["allowed_effects"], serde_json::json!(["read"]));
    eprintln!("{above} capabilities above `read` refused");
}

#[test]
fn openapi_is_the_committed_bytes() {
    let s = start(&[]);
    let r = s.get("/openapi.json");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let committed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/generated/openapi.json"
    ))
    .expect("generated/openapi.json");
    assert!(
        r.body == committed,
        "/openapi.json differs from generated/openapi.json"
    );
    let etag = r.header("etag").expect("an ETag").to_string();
    let r = s.request("GET", "/openapi.json", &[("If-None-Match", &etag)], b"");
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
}

#[test]
fn head_answers_headers_without_a_body() {
    let s = start(&[]);
    let committed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/generated/openapi.json"
    ))
    .expect("generated/openapi.json");
    let mut c = s.connect();
    let r = c.send(&s.host(), "HEAD", "/openapi.json", &[], b"");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-length"),
        Some(committed.len().to_string().as_str())
    );
    // The connection is still in step: the next answer is the next request's.
    let r = c.send(&s.host(), "GET", "/api/v1/server/status", &[], b"");
    assert_eq!(r.status, 200);
    assert!(r.json()["pid"].is_u64());
}

#[test]
fn the_server_card_is_cacheable_with_an_etag() {
    let s = start(&[]);
    let committed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/generated/server-card.json"
    ))
    .expect("generated/server-card.json");
    let mut etags = Vec::new();
    for path in ["/.well-known/mcp/server-card.json", "/mcp/server-card"] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(
            r.header("content-type"),
            Some("application/mcp-server-card+json")
        );
        assert_eq!(r.header("cache-control"), Some("public, max-age=300"));
        assert!(
            r.body == committed,
            "{path} differs from generated/server-card.json"
        );
        let card = r.json();
        assert_eq!(card["remotes"][0]["type"], "streamable-http");
        assert_eq!(card["remotes"][0]["url"], "/mcp");
        let etag = r.header("etag").expect("an ETag").to_string();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() > 10,
            "{etag}"
        );
        let again = s.request("GET", path, &[("If-None-Match", &etag)], b"");
        assert_eq!(again.status, 304, "{path}");
        assert!(again.body.is_empty());
        assert_eq!(again.header("etag"), Some(etag.as_str()));
        assert_eq!(again.header("cache-control"), Some("public, max-age=300"));
        let other = s.request("GET", path, &[("If-None-Match", "\"nope\"")], b"");
        assert_eq!(other.status, 200);
        etags.push(etag);
    }
    assert_eq!(etags[0], etags[1], "one card, one ETag");
}

#[test]
fn docs_serve_swagger_ui_offline() {
    let s = start(&[]);
    let r = s.get("/docs");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let html = r.text();
    assert!(html.contains("/openapi.json"), "{html}");
    assert!(!html.contains("src=\"http"), "no CDN: {html}");
    assert!(!html.contains("href=\"http"), "no CDN: {html}");
    for asset in [
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
        "swagger-ui.css",
        "index.css",
    ] {
        let path = format!("/docs/assets/{asset}");
        assert!(html.contains(&path), "the page does not load {path}");
        let r = s.get(&path);
        assert_eq!(r.status, 200, "{path}");
        assert!(r.body.len() > 100, "{path} is empty");
    }
}

#[test]
fn the_cockpit_page_reads_the_registry_routes() {
    let s = start(&[]);
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let html = r.text();
    for needle in [
        "id=\"capabilities\"",
        "capabilities.projections",
        "/openapi.json",
        "/mcp/server-card",
        "/docs",
    ] {
        assert!(html.contains(needle), "the cockpit lacks {needle}");
    }
    // What the cockpit fetches is served.
    let p = s.get("/api/v1/capabilities/projections").json();
    assert!(p["capabilities"].as_array().is_some_and(|c| !c.is_empty()));
}

/// A browser asks for `/favicon.ico` unasked, and the cockpit links `/favicon.svg`: both are
/// the server's icon (an ICO of one 16×16 image, an SVG), cacheable, and answer GET and HEAD
/// only, like every fixed page.
#[test]
fn the_icon_is_served_where_browsers_look_and_the_cockpit_links_it() {
    let s = start(&[]);
    let ico = s.get("/favicon.ico");
    assert_eq!(ico.status, 200);
    assert_eq!(ico.header("content-type"), Some("image/x-icon"));
    assert_eq!(ico.header("cache-control"), Some("public, max-age=86400"));
    // ICONDIR (reserved 0, type 1: an icon, one image), then its entry: 16×16.
    assert_eq!(&ico.body[..6], &[0, 0, 1, 0, 1, 0], "an ICO of one image");
    assert_eq!(&ico.body[6..8], &[16, 16]);
    let svg = s.get("/favicon.svg");
    assert_eq!(svg.status, 200);
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    assert!(
        svg.text()
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{}",
        svg.text()
    );
    let head = s.request("HEAD", "/favicon.ico", &[], b"");
    assert_eq!((head.status, head.body.len()), (200, 0));
    for path in ["/favicon.ico", "/favicon.svg"] {
        let r = s.request("POST", path, &[], b"");
        r.problem(405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{path}");
    }
    let html = s.get("/").text();
    assert!(
        html.contains(r#"<link rel="icon" href="/favicon.svg" type="image/svg+xml">"#),
        "the cockpit links its icon"
    );
}

/// A page of the cockpit in a transparent frame on another loopback port turns a click there
/// into the person's decision: every HTML page forbids framing, by CSP and by the older header.
#[test]
fn no_html_page_can_be_framed() {
    let s = start(&[]);
    for (method, path) in [
        ("GET", "/"),
        ("HEAD", "/"),
        ("GET", "/capabilities"),
        ("GET", "/docs"),
        ("GET", "/docs/"),
    ] {
        let r = s.request(method, path, &[], b"");
        assert_eq!(r.status, 200, "{method} {path}");
        assert!(
            r.header("content-type").unwrap().starts_with("text/html"),
            "{method} {path}"
        );
        assert_eq!(
            r.header("content-security-policy"),
            Some("frame-ancestors 'none'"),
            "{method} {path}"
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{method} {path}");
    }
}

#[test]
fn host_headers_that_are_not_loopback_names_are_refused() {
    let s = start(&[]);
    let port = s.addr.port();
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "127.0.0.1".to_string(),
        format!("localhost.evil.example:{port}"),
    ] {
        s.request("GET", "/api/v1/server/status", &[("Host", &host)], b"")
            .problem(403, "refused");
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let r = s.request("GET", "/api/v1/server/status", &[("Host", &host)], b"");
        assert_eq!(r.status, 200, "{host}: {}", r.text());
    }
    // HTTP/1.0 without a Host header.
    let mut c = s.connect();
    c.write(b"GET /api/v1/server/status HTTP/1.0\r\n\r\n");
    c.read(false).problem(400, "invalid_input");
}

#[test]
fn a_foreign_origin_is_refused_before_any_handler() {
    let s = start(&[]);
    let own = format!("http://{}", s.addr);
    let json = ("Content-Type", "application/json");
    for origin in [
        "http://evil.example",
        "null",
        "https://127.0.0.1",
        "http://localhost:1",
    ] {
        // On /mcp the MCP handler is not reached: the answer is the guard's problem.
        s.request("POST", "/mcp", &[("Origin", origin), json], b"{}")
            .problem(403, "refused");
        // On a GET-only route, 403 comes before 405: the guard runs first.
        s.request("POST", "/api/v1/capabilities", &[("Origin", origin)], b"")
            .problem(403, "refused");
        s.request("DELETE", "/mcp", &[("Origin", origin)], b"")
            .problem(403, "refused");
        // Reads are not state-changing: a foreign Origin may read.
        let r = s.request("GET", "/api/v1/capabilities", &[("Origin", origin)], b"");
        assert_eq!(r.status, 200);
    }
    // The server's own origin, and no Origin at all, reach the MCP handler.
    for headers in [vec![("Origin", own.as_str()), json], vec![json]] {
        let r = s.request("POST", "/mcp", &headers, b"{}");
        assert_ne!(
            r.header("content-type"),
            Some("application/problem+json"),
            "the guard stopped a POST it should pass: {}",
            r.text()
        );
    }
}

#[test]
fn post_mcp_reaches_the_mcp_projection() {
    let s = start(&[]);
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let r = s.request(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body,
    );
    // Whatever MCP answers, it answers JSON-RPC, not a problem from this layer.
    let v: Value = serde_json::from_slice(&r.body).expect("JSON");
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
}

#[test]
fn bodies_over_the_limit_are_413() {
    let s = start(&[]);
    // Declared over the default 1 MiB: refused before a byte of the body is read.
    let mut c = s.connect();
    c.write(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            s.host(),
            1024 * 1024 + 1
        )
        .as_bytes(),
    );
    c.read(false).problem(413, "too_large");

    let s = start(&["--max-body", "16"]);
    let r = s.request(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        &[b' '; 17],
    );
    r.problem(413, "too_large");
    // A chunked body is counted as it is read.
    let mut c = s.connect();
    c.write(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n{}\r\n0\r\n\r\n",
            s.host(),
            " ".repeat(20)
        )
        .as_bytes(),
    );
    c.read(false).problem(413, "too_large");
    // At the limit it passes the guard.
    let r = s.request(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        &[b' '; 16],
    );
    assert_ne!(r.status, 413);
}

#[test]
fn ambiguous_framing_is_400_and_closes_the_connection() {
    let s = start(&[]);
    let host = s.host();
    for framing in [
        "Transfer-Encoding: chunked\r\nContent-Length: 5",
        "Content-Length: 5\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: gzip",
        "Transfer-Encoding: gzip, chunked",
        "Content-Length: 5\r\nContent-Length: 6",
        "Content-Length: abc",
        "Content-Length: -1",
    ] {
        let mut c = s.connect();
        c.write(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{framing}\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: {host}\r\n\r\n"
            )
            .as_bytes(),
        );
        let r = c.read(false);
        assert_eq!(r.status, 400, "{framing:?}");
        assert!(c.closed(), "{framing:?}: the connection stays open");
    }
}

#[test]
fn oversized_request_heads_are_431() {
    let s = start(&[]);
    let host = s.host();
    let mut c = s.connect();
    c.write(
        format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nX-Big: {}\r\n\r\n",
            "a".repeat(10_000)
        )
        .as_bytes(),
    );
    assert_eq!(c.read(false).status, 431);
    assert!(c.closed());
    let mut c = s.connect();
    let many: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    c.write(format!("GET / HTTP/1.1\r\nHost: {host}\r\n{many}\r\n").as_bytes());
    assert_eq!(c.read(false).status, 431);
    let mut c = s.connect();
    c.write(
        format!(
            "GET /{} HTTP/1.1\r\nHost: {host}\r\n\r\n",
            "a".repeat(10_000)
        )
        .as_bytes(),
    );
    assert_eq!(c.read(false).status, 431);
}

/// How long a client waits for an event: a bound for a defect, not for a slow machine.
const BOUND: Duration = Duration::from_secs(60);

#[test]
fn a_stalled_client_times_out() {
    let s = start(&["--timeout", "1"]);
    let mut c = s.connect();
    c.write(b"GET / HTTP/1.1\r\nHost: ");
    let r = c.read(false);
    assert_eq!(r.status, 408);
    assert!(c.closed());
    // An idle keep-alive connection is closed after the timeout too (the read waits for it).
    let mut c = s.connect();
    let r = c.send(&s.host(), "GET", "/api/v1/server/status", &[], b"");
    assert_eq!(r.status, 200);
    assert!(c.closed());
    // The listener shares the timeout (accepted sockets inherit it); idle past it, the server
    // still accepts. The idleness is the condition under test: this pause is not a wait for
    // anything.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(s.get("/api/v1/server/status").status, 200);
}

#[test]
fn burst_of_32_keepalive_connections_all_answered() {
    let s = start(&[]);
    let host = s.host();
    let mut held = Vec::new();
    // Three bursts of 32 connects; earlier connections stay open (idle keep-alive) meanwhile.
    for round in 0..3 {
        let mut conns: Vec<Conn> = (0..32).map(|_| s.connect()).collect();
        let req = format!("GET /api/v1/capabilities HTTP/1.1\r\nHost: {host}\r\n\r\n");
        for c in &mut conns {
            c.write(req.as_bytes());
        }
        for (i, c) in conns.iter_mut().enumerate() {
            let r = c.read(false);
            assert_eq!(r.status, 200, "round {round}, connection {i}");
        }
        // Each connection is kept alive and serves a second request.
        for c in &mut conns {
            let r = c.send(&host, "GET", "/api/v1/server/status", &[], b"");
            assert_eq!(r.status, 200, "round {round}: keep-alive reuse");
        }
        held.extend(conns);
    }
    assert_eq!(held.len(), 96);
}

#[test]
fn a_non_loopback_bind_needs_allow_remote() {
    let out = support::run(&["serve", "--bind", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(4), "{}", support::stderr(&out));
    assert!(support::stderr(&out).contains("--allow-remote"));
    let out = support::run(&["serve", "--bind", "not-an-address"]);
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    assert!(support::stderr(&out).contains("--bind"));

    let s = start(&["--bind", "0.0.0.0:0", "--allow-remote"]);
    let line = s.banner.clone();
    assert!(line.starts_with("listening on http://0.0.0.0:"), "{line}");
    let port = s.addr.port();
    let local: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut c = Conn::new(local);
    let r = c.send(&local.to_string(), "GET", "/api/v1/server/status", &[], b"");
    assert_eq!(r.status, 200);
    let (_, err) = s.finish_status();
    assert!(err.contains("warning:"), "{err}");
}

#[test]
fn bad_serve_flags_exit_with_invalid_input() {
    for args in [
        &["serve", "--max-body", "lots"][..],
        &["serve", "--workers", "0"],
        &["serve", "--timeout", "0"],
        &["serve", "--request-timeout", "0"],
        &["serve", "--allow-effects", "everything"],
    ] {
        let out = support::run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            support::stderr(&out)
        );
    }
}

/// A desk secret the person sets shorter than 32 characters is refused when `serve` starts,
/// naming the variable and the minimum, and nothing is served; an empty one means "unset" (a
/// random secret), and one of 32 characters serves.
#[test]
fn a_short_desk_secret_is_refused_at_start_naming_the_variable_and_the_minimum() {
    let serve = |secret: &str| {
        let mut child = support::spawn_piped(
            &support::bin(),
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &["serve", "--bind", "127.0.0.1:0"],
            &[("SENESCHAL_DESK_SECRET", secret)],
        );
        // Closed stdin: a server that started stops at once.
        drop(child.stdin.take());
        child.wait_with_output().expect("serve ends")
    };
    for short in [
        "hunter2",
        "   ",
        &"x".repeat(31),
        &format!(" {} ", "é".repeat(31)),
    ] {
        let out = serve(short);
        let err = support::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{short:?}: {err}");
        assert!(
            err.starts_with("error[invalid_input]: $SENESCHAL_DESK_SECRET is too short")
                && err.contains("at least 32"),
            "{short:?}: {err}"
        );
        assert!(
            !err.contains(short.trim()) || short.trim().is_empty(),
            "{err}"
        );
        assert_eq!(support::stdout(&out), "", "nothing was served: {short:?}");
    }
    for accepted in ["", &"x".repeat(32)] {
        let out = serve(accepted);
        let err = support::stderr(&out);
        assert!(out.status.success(), "{accepted:?}: {err}");
        assert!(
            support::stdout(&out).starts_with("listening on http://127.0.0.1:"),
            "{accepted:?}: {err}"
        );
        if !accepted.is_empty() {
            assert!(err.contains(&format!("/#desk={accepted}")), "{err}");
        }
    }
}

#[test]
fn serve_exits_when_stdin_closes() {
    let s = start(&[]);
    let addr = s.addr;
    assert_eq!(s.get("/api/v1/server/status").status, 200);
    let (status, _) = s.finish_status();
    assert!(status.success());
    assert!(TcpStream::connect(addr).is_err(), "the port still answers");
}

/// The threads of a process, from /proc.
fn threads(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("the server's status")
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a thread count")
}

/// At the cap, a new client takes the place of the connection idle (or stuck in an incomplete
/// request) the longest (`tests/it/hostile/http.rs` proves that side); while every connection is
/// busy with a complete request, here answering clients that do not read, it waits for one to
/// finish. Idle connections never start threads beyond the cap.
#[test]
fn connections_over_the_cap_wait_for_a_free_one() {
    let s = start(&["--max-connections", "2"]);
    let host = s.host();
    let status = "/api/v1/server/status";
    // Two clients ask for 20 × the 1.4 MB Swagger UI bundle and read nothing: far more than the
    // socket buffers hold, so both connections stay busy writing an answer.
    let big = format!("GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: {host}\r\n\r\n")
        .repeat(20);
    let mut a = s.connect();
    a.write(big.as_bytes());
    let mut b = s.connect();
    b.write(big.as_bytes());
    // Both are busy once their answers begin.
    assert!(a.answered_within(BOUND) && b.answered_within(BOUND));
    // A third client is not served while both are busy: its request waits, unanswered (for
    // as long as the test looks).
    let mut c = s.connect();
    c.write(format!("GET {status} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
    assert!(
        !c.answered_within(Duration::from_millis(700)),
        "a third connection was served while two were busy"
    );
    // One goes away; the waiting client is served.
    drop(a);
    assert_eq!(c.read(false).status, 200);
    drop(b);

    // Idle connections do not start threads beyond the cap, and do not keep a client out.
    let before = threads(s.pid());
    let mut idle: Vec<Conn> = (0..40).map(|_| s.connect()).collect();
    // The server has taken them all once it has closed all but two: each one it takes at the
    // cap closes the one idle the longest.
    let until = Instant::now() + BOUND;
    loop {
        let closed = idle
            .iter_mut()
            .map(|c| c.answered_within(Duration::from_millis(1)))
            .filter(|&closed| closed)
            .count();
        if closed >= 38 {
            break;
        }
        assert!(
            Instant::now() < until,
            "{closed} of 40 idle connections closed"
        );
    }
    let during = threads(s.pid());
    assert!(
        during <= before + 2,
        "{before} threads before 40 idle connections, {during} during"
    );
    assert_eq!(s.get(status).status, 200);
    drop(idle);
}

/// Sends `pipeline` (requests for the status, one write) on a first connection of a server at
/// its cap of one, then, once its first answer begins, asks on a second: the second must wait
/// for the first's answers. The number of answers the first connection read before it was
/// closed. The pipeline is kept under 64 KiB, TCP's first receive window on loopback, so that
/// every byte of it is at the server (its buffer or its socket) when the second client
/// connects: a connection whose bytes are still on their way is idle, and may make room.
fn answers_of_a_pipeline_at_the_cap(s: &Serve, pipeline: &str) -> usize {
    assert!(pipeline.len() < 60 * 1024, "{} bytes", pipeline.len());
    let host = s.host();
    let mut a = s.connect();
    a.write(pipeline.as_bytes());
    assert!(a.answered_within(BOUND), "the pipeline was not answered");
    let reader = std::thread::spawn(move || {
        let mut answered = 0;
        // An evicted connection ends: EOF before the next answer.
        while a.answered_within(BOUND) && !a.at_end() {
            assert_eq!(a.read(false).status, 200);
            answered += 1;
        }
        answered
    });
    let mut b = s.connect();
    b.write(format!("GET /api/v1/server/status HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
    assert_eq!(b.read(false).status, 200);
    reader.join().expect("the pipeline's reader")
}

/// A request pipelined behind the one being answered is never idle between the two, so a
/// newcomer at the cap waits for the whole pipeline instead of taking the connection's place
/// between two of its answers (it did, now and then, when each answer left the connection
/// idle for a moment: the test above then saw a third client served). First 800 short
/// requests, read by the server in one piece; then, forty times, 16 requests of 3 KB each,
/// which reach the server's buffer in many pieces: a request whose bytes wait in the socket,
/// not yet in the buffer, keeps the connection busy too.
#[test]
fn a_pipeline_keeps_its_connection_at_the_cap() {
    let s = start(&["--max-connections", "1"]);
    let host = s.host();
    let short = format!("GET /api/v1/server/status HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let answered = answers_of_a_pipeline_at_the_cap(&s, &short.repeat(800));
    assert_eq!(answered, 800, "closed after {answered} of 800 answers");
    let filler = "f".repeat(3000);
    let long =
        format!("GET /api/v1/server/status HTTP/1.1\r\nHost: {host}\r\nX-Filler: {filler}\r\n\r\n");
    for round in 0..40 {
        let answered = answers_of_a_pipeline_at_the_cap(&s, &long.repeat(16));
        assert_eq!(
            answered, 16,
            "round {round}: closed after {answered} of 16 answers"
        );
    }
}

/// A chunked body is decoded whole (chunk extensions and trailer fields allowed) before the
/// request runs, and the request pipelined after it is read from where the body ended; a
/// malformed chunk size is 400 and closes.
#[test]
fn chunked_bodies_are_decoded_and_pipelining_resumes_after_them() {
    let s = start(&[]);
    let host = s.host();
    let mut c = s.connect();
    c.write(
        format!(
            "POST /api/v1/session/notes HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
             5;ext=1\r\n{{\"tex\r\n4\r\nt\":\"\r\na\r\nchunked!\"}}\r\n0\r\nX-Trailer: yes\r\n\r\n\
             GET /api/v1/session/notes HTTP/1.1\r\nHost: {host}\r\n\r\n"
        )
        .as_bytes(),
    );
    let added = c.read(false);
    assert_eq!(added.status, 200, "{}", added.text());
    assert_eq!(added.json()["text"], "chunked!", "{}", added.text());
    let listed = c.read(false);
    assert_eq!(listed.status, 200, "{}", listed.text());
    assert!(listed.text().contains("chunked!"), "{}", listed.text());

    let mut c = s.connect();
    c.write(
        format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
            .as_bytes(),
    );
    assert_eq!(c.read(false).status, 400);
    assert!(c.closed());
}

/// `Expect: 100-continue` is answered `100 Continue` before the body is read, then the
/// request is answered.
#[test]
fn expect_100_continue_is_honoured() {
    use std::io::{Read, Write};
    let s = start(&[]);
    let body = r#"{"text":"after continue"}"#;
    let mut c = TcpStream::connect(s.addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    c.write_all(
        format!(
            "POST /api/v1/session/notes HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
            s.host(),
            body.len()
        )
        .as_bytes(),
    )
    .expect("write");
    let mut interim = [0u8; 25];
    c.read_exact(&mut interim).expect("an interim answer");
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    c.write_all(body.as_bytes()).expect("write");
    let mut rest = String::new();
    c.read_to_string(&mut rest).expect("the answer");
    assert!(rest.starts_with("HTTP/1.1 200 "), "{rest}");
    assert!(rest.contains(r#""text":"after continue""#), "{rest}");
}
