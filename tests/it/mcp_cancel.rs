//! Cancellation over Streamable HTTP, through the built binary: a long `files_search` whose
//! client closes its request (the MCP 2026-07-28 cancellation: closing the request is the
//! signal), answered as JSON or as an SSE stream, and one cancelled by `notifications/cancelled`
//! in an initialize-era session, stops: the server's CPU falls to nothing within a second
//! while the same search left alone runs for seconds more.

use std::io::{Read, Write};

use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support;
use crate::support::http::Serve;

/// A slow pattern over 80 MB of text: seconds of work on two cores in a debug build.
const PATTERN: &str = r"(?i)\w+zz\w+";

fn big_repo() -> tempfile::TempDir {
    let d = support::scratch_repo();
    let line = "fn alpha_beta_gamma(x: u32) -> u32 { x.wrapping_mul(2654435761) ^ 0xdead_beef } // filler text\n";
    let body = line.repeat(400);
    for m in 0..20 {
        let dir = d.path().join(format!("src/m{m}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}.rs")), &body).unwrap();
        }
    }
    d
}

/// The CPU time the process `pid` has used (user and system), from `/proc/<pid>/stat`.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(')').unwrap().1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime 14 and stime 15 (1-based, whole line).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// The CPU the server uses from half a second after `since` for one second.
fn cpu_after(s: &Serve, since: Instant) -> Duration {
    std::thread::sleep(
        (since + Duration::from_millis(500)).saturating_duration_since(Instant::now()),
    );
    let before = cpu(s.pid());
    std::thread::sleep(Duration::from_secs(1));
    cpu(s.pid()) - before
}

/// Sends a POST to `/mcp` and leaves the connection open, unread.
fn send(s: &Serve, headers: &[(&str, &str)], body: &Value) -> TcpStream {
    let mut stream = TcpStream::connect(s.addr).unwrap();
    let text = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        s.host(),
        text.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(text.as_bytes()).unwrap();
    stream
}

fn modern_search(id: u64, progress: bool) -> Value {
    let mut meta = support::mcp::modern_meta("2026-07-28");
    if progress {
        meta["progressToken"] = json!("p");
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "files_search", "arguments": {"pattern": PATTERN, "limit": 5}, "_meta": meta}})
}

fn modern_headers() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "files_search"),
    ]
}

fn serve(dir: &Path) -> Serve {
    Serve::start(dir, &[])
}

#[test]
fn a_search_whose_client_closes_its_request_stops() {
    let d = big_repo();
    let s = serve(d.path());
    // Left alone, the search still works a second and a half in: it is long enough to tell.
    let started = Instant::now();
    let alone = send(&s, &modern_headers(), &modern_search(1, false));
    let busy = cpu_after(&s, started);
    assert!(
        busy > Duration::from_millis(300),
        "the search left alone used only {busy:?} of CPU in its second second: not long enough to tell"
    );
    drop(alone);
    std::thread::sleep(Duration::from_millis(500));
    // Closed as JSON and as an SSE stream: the server stops.
    for progress in [false, true] {
        let stream = send(&s, &modern_headers(), &modern_search(2, progress));
        std::thread::sleep(Duration::from_millis(300));
        drop(stream);
        let closed = Instant::now();
        let used = cpu_after(&s, closed);
        assert!(
            used < Duration::from_millis(150),
            "after its client closed the request (progress: {progress}), the server used {used:?} of CPU in a second"
        );
    }
    // The server still answers.
    let (status, body) = s.json("GET", "/api/v1/server/status", None);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_search_cancelled_in_an_initialize_era_session_stops() {
    let d = big_repo();
    let s = serve(d.path());
    let init = send(
        &s,
        &[],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
    );
    let mut head = String::new();
    let mut reader = std::io::BufReader::new(init);
    let mut session = String::new();
    loop {
        head.clear();
        std::io::BufRead::read_line(&mut reader, &mut head).unwrap();
        if let Some(v) = head
            .to_ascii_lowercase()
            .strip_prefix("mcp-session-id:")
            .map(|v| v.trim().to_string())
        {
            session = v;
        }
        if head == "\r\n" {
            break;
        }
    }
    assert!(!session.is_empty());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "files_search", "arguments": {"pattern": PATTERN, "limit": 5}}});
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let running = send(&s, &headers, &call);
    std::thread::sleep(Duration::from_millis(200));
    let before = cpu(s.pid());
    std::thread::sleep(Duration::from_millis(500));
    let busy = cpu(s.pid()) - before;
    assert!(
        busy > Duration::from_millis(150),
        "the search used only {busy:?} of CPU in half a second: it is not running"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the user moved on"}});
    let mut note = send(&s, &headers, &cancel);
    let cancelled = Instant::now();
    let mut reply = [0u8; 12];
    note.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"HTTP/1.1 202", "the notification is accepted");
    let used = cpu_after(&s, cancelled);
    assert!(
        used < Duration::from_millis(150),
        "after notifications/cancelled, the server used {used:?} of CPU in a second"
    );
    drop(running);
}
