//! Cancellation over Streamable HTTP, through the built binary: a long `files_search` whose
//! client closes its request (the MCP 2026-07-28 cancellation: closing the request is the
//! signal), answered as JSON or as an SSE stream, and one cancelled by `notifications/cancelled`
//! in an initialize-era session, stops and is not answered, while the same search left alone
//! answers with its result.
//!
//! Nothing here is timed. The client half-closes its side (its FIN is what "closing the request"
//! looks like to the server) and keeps reading: the connection then ends only once the call has
//! returned (a streamed call's thread is joined before its stream ends), and a call that
//! noticed its cancellation is not answered, so "ended without an answer" is the event that says
//! the call ended cancelled. In the initialize-era session the stream stays open to the end of
//! the call, and its progress shows the search stopped short of its last file. A search left
//! alone takes seconds; the close is sent with the request, or as soon as the search reports its
//! first progress.

use std::io::{BufRead, BufReader, Read, Write};

use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support;
use crate::support::http::Serve;

/// A slow pattern over 80 MB of text: seconds of work on two cores in a debug build.
const PATTERN: &str = r"(?i)\w+zz\w+";

/// How long a read waits for the server: a bound for a defect, not for a slow machine.
const BOUND: Duration = Duration::from_secs(300);

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

/// One response read as it arrives: its status and headers, then its body, whole (JSON) or
/// event by event (SSE, chunked).
struct Answer {
    reader: BufReader<TcpStream>,
    status: u16,
    chunked: bool,
    length: Option<usize>,
    pending: String,
}

impl Answer {
    /// Reads the head of the answer on `stream`; `None` when the server closed the connection
    /// without a byte of answer.
    fn read(stream: &TcpStream) -> Option<Answer> {
        let stream = stream.try_clone().unwrap();
        stream.set_read_timeout(Some(BOUND)).unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        if reader
            .read_line(&mut line)
            .expect("a status line or the end")
            == 0
        {
            return None;
        }
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
        let (mut chunked, mut length) = (false, None);
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let h = line.trim_end().to_ascii_lowercase();
            if h.is_empty() {
                break;
            }
            chunked |= h == "transfer-encoding: chunked";
            if let Some(n) = h.strip_prefix("content-length:") {
                length = n.trim().parse().ok();
            }
        }
        Some(Answer {
            reader,
            status,
            chunked,
            length,
            pending: String::new(),
        })
    }

    /// The next JSON-RPC message of an SSE body; `None` at its end (or the connection's).
    fn next_event(&mut self) -> Option<Value> {
        assert!(self.chunked, "an SSE stream is chunked");
        loop {
            if let Some((event, rest)) = self.pending.split_once("\n\n") {
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                self.pending = rest.to_string();
                if data.is_empty() {
                    continue;
                }
                return Some(serde_json::from_str(&data).unwrap());
            }
            let mut size = String::new();
            if self
                .reader
                .read_line(&mut size)
                .expect("a chunk or the end")
                == 0
            {
                return None;
            }
            let n = usize::from_str_radix(size.trim(), 16).expect("hex size");
            let mut chunk = vec![0; n + 2];
            self.reader.read_exact(&mut chunk).unwrap();
            if n == 0 {
                return None;
            }
            self.pending
                .push_str(std::str::from_utf8(&chunk[..n]).unwrap());
        }
    }

    /// Every message left in an SSE body, until it ends.
    fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next_event()).collect()
    }

    /// The whole body of a JSON answer.
    fn json(mut self) -> Value {
        let mut body = vec![0; self.length.expect("a Content-Length")];
        self.reader.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }
}

/// Whether `message` is the answer to the request `id`.
fn answers(message: &Value, id: u64) -> bool {
    message["id"] == id && message.get("method").is_none()
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
    // Left alone, the search answers with its result (and its client hears it).
    let alone = send(&s, &modern_headers(), &modern_search(1, false));
    let answer = Answer::read(&alone).expect("the search left alone is answered");
    assert_eq!(answer.status, 200);
    let result = answer.json();
    assert_eq!(result["result"]["isError"], json!(false), "{result}");
    // Closed as JSON: the client's FIN travels with its request; the call notices, stops, and
    // is not answered. The connection ends once the call has returned.
    let closed = send(&s, &modern_headers(), &modern_search(2, false));
    closed.shutdown(Shutdown::Write).unwrap();
    if let Some(answer) = Answer::read(&closed) {
        let status = answer.status;
        panic!(
            "a search whose client closed its request was answered: {status} {}",
            answer.json()
        );
    }
    // Closed as an SSE stream, once the search has reported progress (it is running): the
    // stream ends (the call's thread has returned) and carries no answer.
    let stream = send(&s, &modern_headers(), &modern_search(3, true));
    let mut answer = Answer::read(&stream).expect("an SSE stream");
    assert_eq!(answer.status, 200);
    let first = answer.next_event().expect("a first event");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    stream.shutdown(Shutdown::Write).unwrap();
    let rest = answer.rest();
    assert!(
        !rest.iter().any(|m| answers(m, 3)),
        "a search whose client closed its stream was answered: {rest:?}"
    );
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
        "name": "files_search", "arguments": {"pattern": PATTERN, "limit": 5},
        "_meta": {"progressToken": "p"}}});
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    // The search runs once it reports progress: a cancellation is for a request in flight
    // (one that arrives before its request is forgotten when the request begins).
    let running = send(&s, &headers, &call);
    let mut answer = Answer::read(&running).expect("an SSE stream");
    assert_eq!(answer.status, 200);
    let first = answer.next_event().expect("a first event");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the user moved on"}});
    let note = send(&s, &headers, &cancel);
    let accepted = Answer::read(&note).expect("an answer to the notification");
    assert_eq!(accepted.status, 202, "the notification is accepted");
    // The stream ends (the call has returned) without an answer: a cancelled request is not
    // answered.
    let rest = answer.rest();
    assert!(
        !rest.iter().any(|m| answers(m, 7)),
        "a cancelled search was answered: {rest:?}"
    );
    // And it stopped: the stream stays open to the end of the call, and a search that went on
    // to the last of its 2,000 files would have reported it (the highest figure always
    // leaves). The cancellation left as soon as 500 were searched.
    let highest = rest
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter_map(|m| m["params"]["progress"].as_f64())
        .fold(0.0, f64::max);
    assert!(
        highest < 2000.0,
        "the cancelled search searched every file: {rest:?}"
    );
}
