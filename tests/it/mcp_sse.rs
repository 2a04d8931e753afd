//! Streamable HTTP sessions, SSE streams and live resources, over loopback HTTP against the
//! built binary: `initialize` mints an `Mcp-Session-Id`, a wrong id is 404, `DELETE` ends a
//! session; a call with a progress token is answered as an SSE stream of its progress and
//! then its result, and a request to the client is answered by a second POST while the call
//! waits (on a server with one worker: the waiting stream holds none); a subscriber's GET
//! stream hears of an edit on disk; the session table is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support;
use crate::support::http::Serve;

/// How long a test waits for an event it expects: a bound for a defect, not for a slow
/// machine.
const DEADLINE: Duration = Duration::from_secs(60);

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"0"}}}"#;

/// One HTTP exchange whose body is read as it comes: the status, the headers, then events.
struct Exchange {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// Decoded body bytes not yet consumed.
    pending: Vec<u8>,
    ended: bool,
}

fn open(s: &Serve, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Exchange {
    let mut stream = TcpStream::connect(s.addr).expect("connect");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
        s.host(),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("a status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut l = String::new();
        reader.read_line(&mut l).unwrap();
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked");
    let mut ex = Exchange {
        status,
        headers,
        reader,
        chunked,
        pending: Vec::new(),
        ended: false,
    };
    if !chunked {
        let n: usize = ex
            .header("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut b = vec![0; n];
        ex.reader.read_exact(&mut b).unwrap();
        ex.pending = b;
        ex.ended = true;
    }
    ex
}

impl Exchange {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.pending).expect("a JSON body")
    }

    /// Reads one more chunk; false at the end of the body.
    fn chunk(&mut self) -> bool {
        if self.ended {
            return false;
        }
        let mut size = String::new();
        self.reader.read_line(&mut size).expect("a chunk size");
        let n = usize::from_str_radix(size.trim(), 16).expect("hex");
        let mut b = vec![0; n + 2];
        self.reader.read_exact(&mut b).expect("a chunk");
        if n == 0 {
            self.ended = true;
            return false;
        }
        self.pending.extend_from_slice(&b[..n]);
        true
    }

    /// The next SSE event's data, as JSON (comments skipped); `None` when the stream ends.
    fn event(&mut self) -> Option<Value> {
        assert!(self.chunked, "not a stream");
        let start = Instant::now();
        loop {
            if let Some(i) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.pending.drain(..i + 2).collect();
                let text = String::from_utf8(block).unwrap();
                let data: String = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Some(serde_json::from_str(&data).expect("JSON data"));
            }
            assert!(start.elapsed() < DEADLINE, "no event within {DEADLINE:?}");
            if !self.chunk() {
                return None;
            }
        }
    }
}

fn post(s: &Serve, session: Option<&str>, body: &Value) -> Exchange {
    post_with(s, session, body, &[])
}

fn post_with(s: &Serve, session: Option<&str>, body: &Value, extra: &[(&str, &str)]) -> Exchange {
    let text = body.to_string();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
    }
    headers.extend_from_slice(extra);
    open(s, "POST", &headers, text.as_bytes())
}

fn initialize(s: &Serve) -> String {
    let r = open(
        s,
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        INIT.as_bytes(),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    let id = r
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let note = post(
        s,
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(note.status, 202);
    id
}

#[test]
fn initialize_mints_a_session_a_wrong_id_is_404_and_delete_ends_it() {
    let repo = support::scratch_repo();
    let s = Serve::start(repo.path(), &[]);
    let id = initialize(&s);
    assert_eq!(id.len(), 32, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_ne!(initialize(&s), id, "each initialize mints its own");

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = post(&s, Some(&id), &list);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.json()["result"]["tools"].is_array());

    let r = post(&s, Some("0123456789abcdef0123456789abcdef"), &list);
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["code"], -32001);

    let del = |id: &str| open(&s, "DELETE", &[("Mcp-Session-Id", id)], b"").status;
    assert_eq!(del(&id), 204);
    assert_eq!(post(&s, Some(&id), &list).status, 404);
    assert_eq!(del(&id), 404);
    assert_eq!(open(&s, "DELETE", &[], b"").status, 405);
    // No session, no standalone stream; and a request without an id stays stateless.
    assert_eq!(
        open(&s, "GET", &[("Accept", "text/event-stream")], b"").status,
        405
    );
    assert_eq!(post(&s, None, &list).status, 200);
    // A call that can send nothing before its answer (no progress token, no session whose
    // client may be asked) is answered as JSON even when the client accepts a stream.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "capabilities_list", "arguments": {}}});
    let r = post(&s, None, &call);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["isError"], false);
}

#[test]
fn a_call_streams_its_progress_and_its_question_then_its_answer_on_one_worker() {
    let repo = support::scratch_repo();
    let s = Serve::start_args(
        repo.path(),
        &["--workers", "1"],
        &[("SENESCHAL_MCP_DEBUG_ASK", "capabilities_list")],
    );
    let id = initialize(&s);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "capabilities_list", "arguments": {}, "_meta": {"progressToken": "p1"}}});
    let mut stream = post(&s, Some(&id), &call);
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));

    let first = stream.event().expect("progress");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "p1");
    assert_eq!(first["params"]["progress"], 1.0);
    assert_eq!(first["params"]["total"], 2.0);

    let ask = stream.event().expect("the question");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    // The answer travels on a POST of its own, served while the call waits for it.
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
        "result": {"action": "accept", "content": {"go": true}}});
    assert_eq!(post(&s, Some(&id), &answer).status, 202);

    let second = stream.event().expect("progress");
    assert_eq!(second["params"]["progress"], 2.0, "{second}");
    let done = stream.event().expect("the answer");
    assert_eq!(done["id"], 7, "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["asked"]["answered"],
        json!({"action": "accept", "content": {"go": true}})
    );
    assert!(stream.event().is_none(), "the stream ends with the answer");

    // Without a session, the stream carries notifications but no question.
    let mut stream = post(&s, None, &call);
    assert_eq!(stream.event().expect("progress")["params"]["progress"], 1.0);
    assert_eq!(stream.event().expect("progress")["params"]["progress"], 2.0);
    let done = stream.event().expect("the answer");
    assert!(
        done["result"]["structuredContent"]["asked"]
            .get("answered")
            .is_none(),
        "{done}"
    );
}

#[test]
fn a_subscriber_hears_an_edit_on_disk_and_a_write_on_its_get_stream() {
    let repo = support::knowledge_fixture("kinds");
    let p = repo.path();
    let uri = "seneschal://knowledge/guide/onboarding";
    let s = Serve::start(p, &[]);
    let id = initialize(&s);
    let mut events = open(
        &s,
        "GET",
        &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &id)],
        b"",
    );
    assert_eq!(events.status, 200);
    assert_eq!(events.header("content-type"), Some("text/event-stream"));

    let sub = |method: &str| {
        let r = post(
            &s,
            Some(&id),
            &json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"uri": uri}}),
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["result"], json!({}), "{method}");
    };
    // Edits by hand replace the file whole (as editors do): a plain write truncates first,
    // and a look between the truncation and the bytes sees the guide vanish and return (an
    // update and a list change more), which would blur which event answers which edit.
    let edit = |rel: &str, text: &str| {
        let tmp = p.join("edit.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, p.join(rel)).unwrap();
    };
    sub("resources/subscribe");
    edit(
        "docs/guides/onboarding.md",
        "---\ntitle: Onboarding, revised\n---\nNew text.\n",
    );
    let updated = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}});
    assert_eq!(events.event().expect("an update"), updated);

    // A write through seneschal (here its HTTP API) is heard the same way.
    let (status, got) = s.json(
        "GET",
        &format!("/api/v1/knowledge/get?uri={}", support::http::enc(uri)),
        None,
    );
    assert_eq!(status, 200, "{got}");
    let (status, wrote) = s.json(
        "POST",
        "/api/v1/knowledge/update",
        Some(&json!({"uri": uri, "expected_digest": got["digest"], "body": "Written through seneschal.\n"})),
    );
    assert_eq!((status, &wrote["applied"]), (200, &json!(true)), "{wrote}");
    assert_eq!(events.event().expect("an update"), updated);

    // Unsubscribed: the next edit is not heard; a new object changes the list. The look that
    // sees the new object sees the edit made before it too (in that look or an earlier one),
    // and a look sends its updates before its list change: an update heard for the edit
    // would come first.
    sub("resources/unsubscribe");
    edit(
        "docs/guides/onboarding.md",
        "---\ntitle: Onboarding, revised twice\n---\nNewer text.\n",
    );
    edit(
        "docs/guides/deploying.md",
        "---\ntitle: Deploying\n---\nShip it.\n",
    );
    let heard = events.event().expect("a list change");
    assert_eq!(
        heard["method"], "notifications/resources/list_changed",
        "{heard}"
    );

    // DELETE ends the session and its stream.
    assert_eq!(
        open(&s, "DELETE", &[("Mcp-Session-Id", &id)], b"").status,
        204
    );
    assert!(events.event().is_none());
}

#[test]
fn subscribing_needs_a_session() {
    let repo = support::scratch_repo();
    let s = Serve::start(repo.path(), &[]);
    let r = post(
        &s,
        None,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
            "params": {"uri": "seneschal://capabilities"}}),
    );
    let v = r.json();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id"),
        "{v}"
    );
}

#[test]
fn the_session_table_is_bounded_and_evicts_the_session_unused_longest() {
    let repo = support::scratch_repo();
    let s = Serve::start_args(repo.path(), &["--max-connections", "8"], &[]);
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    let first = initialize(&s);
    let second = initialize(&s);
    // The first is used again: the second is now the one unused the longest.
    assert_eq!(post(&s, Some(&first), &ping).status, 200);
    // 128 sessions beside one per connection (8) at most: 135 more make room by ending the
    // second.
    let mut last = String::new();
    for _ in 0..135 {
        last = initialize(&s);
    }
    assert_eq!(post(&s, Some(&second), &ping).status, 404);
    assert_eq!(post(&s, Some(&first), &ping).status, 200);
    assert_eq!(post(&s, Some(&last), &ping).status, 200);
}

/// A neighbour's flood of sessions evicts no session in use and locks no client out: a
/// thousand bare `initialize` POSTs end only sessions never used after their `initialize`
/// (the flood's own), and sessions holding every stream the server allows leave room for a
/// new `initialize`.
#[test]
fn a_flood_of_sessions_evicts_no_session_in_use_and_locks_no_client_out() {
    let repo = support::scratch_repo();
    let s = Serve::start_args(repo.path(), &["--max-connections", "8"], &[]);
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    let mine = initialize(&s);
    assert_eq!(post(&s, Some(&mine), &ping).status, 200);
    // Sessions that hold every stream the server allows (half its connections).
    let holders: Vec<String> = (0..4).map(|_| initialize(&s)).collect();
    let held: Vec<_> = holders
        .iter()
        .map(|id| {
            open(
                &s,
                "GET",
                &[("Accept", "text/event-stream"), ("Mcp-Session-Id", id)],
                b"",
            )
        })
        .collect();
    assert!(held.iter().all(|e| e.status == 200));
    for n in 0..1000 {
        let r = open(
            &s,
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "flood", "version": "0"}}})
            .to_string()
            .as_bytes(),
        );
        assert_eq!(r.status, 200, "initialize {n} of the flood was refused");
    }
    assert_eq!(
        post(&s, Some(&mine), &ping).status,
        200,
        "the session in use survived the flood"
    );
    for id in &holders {
        assert_eq!(post(&s, Some(id), &ping).status, 200);
    }
    drop(held);
}

#[test]
fn streams_fill_at_most_half_the_connections_and_never_lock_a_client_out() {
    let repo = support::scratch_repo();
    let s = Serve::start_args(repo.path(), &["--max-connections", "4"], &[]);
    let id = initialize(&s);
    let get = || {
        open(
            &s,
            "GET",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &id)],
            b"",
        )
    };
    let held = [get(), get()];
    assert!(held.iter().all(|e| e.status == 200));
    let refused = get();
    assert_eq!(refused.status, 503);
    // The other connections still serve, and a call that would stream answers as JSON.
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(post(&s, Some(&id), &ping).status, 200);
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "capabilities_list", "arguments": {}, "_meta": {"progressToken": 1}}});
    let r = post(&s, Some(&id), &call);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["result"]["isError"], false);
    // A stream that ends gives its place back.
    assert_eq!(
        open(&s, "DELETE", &[("Mcp-Session-Id", &id)], b"").status,
        204
    );
    drop(held);
    let id = initialize(&s);
    let until = Instant::now() + DEADLINE;
    loop {
        let e = open(
            &s,
            "GET",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &id)],
            b"",
        );
        if e.status == 200 {
            break;
        }
        assert!(Instant::now() < until, "no stream place came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The desk secret of the servers below (`SENESCHAL_DESK_SECRET`, at least 32 characters).
const SECRET: &str = "a-desk-secret-the-person-gave-the-client-0123";

/// Any local process reaches `/mcp`: a session whose client declares elicitation but whose
/// request does not carry the desk secret is never asked, and its write waits on the desk
/// (here until a short timeout: `not_approved`, nothing written); the same client carrying
/// the secret (`Authorization: Bearer`, as an MCP client's HTTP configuration sends it) is
/// asked, and its answer applies the write.
#[test]
fn a_client_on_mcp_approves_its_own_write_only_with_the_desk_secret() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    let s = Serve::start_args(
        dir,
        &["--approval", "ask", "--approval-timeout", "1"],
        &[("SENESCHAL_DESK_SECRET", SECRET)],
    );
    let id = initialize(&s);
    let write = |n: u64, path: &str| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
            "name": "files_write", "arguments": {"path": path, "content": "hello\n"}}})
    };
    // A stranger: never asked, the write waits on the desk and times out.
    let mut stream = post(&s, Some(&id), &write(7, "stranger.txt"));
    let done = loop {
        let e = stream.event().expect("an answer");
        assert_ne!(
            e["method"], "elicitation/create",
            "a stranger is asked: {e}"
        );
        if e.get("id") == Some(&json!(7)) {
            break e;
        }
    };
    assert_eq!(
        done["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{done}"
    );
    assert!(!dir.join("stranger.txt").exists());
    // The person's client: asked, and its accept applies the write.
    let bearer = format!("Bearer {SECRET}");
    let mut stream = post_with(
        &s,
        Some(&id),
        &write(8, "person.txt"),
        &[("Authorization", bearer.as_str())],
    );
    let ask = stream.event().expect("the question");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}});
    assert_eq!(post(&s, Some(&id), &answer).status, 202);
    let done = stream.event().expect("the answer");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(
        std::fs::read_to_string(dir.join("person.txt")).unwrap(),
        "hello\n"
    );
    // A wrong secret proves nothing.
    let mut stream = post_with(
        &s,
        Some(&id),
        &write(9, "wrong.txt"),
        &[(
            "Authorization",
            "Bearer not-the-secret-not-the-secret-not-it",
        )],
    );
    let done = loop {
        let e = stream.event().expect("an answer");
        assert_ne!(e["method"], "elicitation/create", "{e}");
        if e.get("id") == Some(&json!(9)) {
            break e;
        }
    };
    assert_eq!(
        done["result"]["_meta"]["seneschal/error"]["code"],
        "not_approved"
    );
    assert!(!dir.join("wrong.txt").exists());
    s.finish();
}
