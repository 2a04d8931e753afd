//! Hostile neighbour over HTTP: connections that trickle their request heads or bodies, fill
//! the connection cap, or pipeline a framing error, and a well-behaved client beside them that
//! must still be answered, in request order.
//!
//! Each attack runs against the built binary (`seneschal serve`) from plain sockets; the
//! attackers stop by themselves when the test ends (or panics).
//!
//! Nothing here is timed but the deadlines under test. "Not locked out" is told apart from
//! "let in once a neighbour's deadline freed a place" by giving the neighbours an hour
//! ([`PATIENT`]): a client answered within [`BOUND`] was let in beside them. How fast it is
//! answered is a benchmark's question.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support::http::{Resp, Serve};

/// How long a well-behaved client waits for an answer: a bound for a defect, not for a slow
/// machine, and far below the hour its hostile neighbours are given.
const BOUND: Duration = Duration::from_secs(60);

/// The idle timeout and request deadline of a server whose neighbours must not lock a client
/// out: an hour, so that only the server's own room-making lets a client in within [`BOUND`].
const PATIENT: [&str; 4] = ["--timeout", "3600", "--request-timeout", "3600"];

fn start(extra: &[&str]) -> Serve {
    Serve::start_args(Path::new(env!("CARGO_MANIFEST_DIR")), extra, &[])
}

/// One request on a fresh connection (`Connection: close`); fails unless the answer begins
/// within [`BOUND`]. Returns the answer and how long it took.
fn prompt(
    s: &Serve,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (Resp, Duration) {
    let started = Instant::now();
    let mut c = s.connect();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        s.host()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    c.write(&bytes);
    assert!(
        c.answered_within(BOUND),
        "{method} {path}: no answer within {BOUND:?}"
    );
    let r = c.read(method == "HEAD");
    (r, started.elapsed())
}

/// Connections that each send one more byte of a request that never ends, every `period`,
/// and reconnect as soon as the server closes them (a hostile neighbour does).
struct Tricklers {
    stop: Arc<AtomicBool>,
    /// How many times a trickler found its connection closed and opened another.
    reconnects: Arc<AtomicUsize>,
    thread: Option<JoinHandle<Vec<Option<TcpStream>>>>,
}

/// Whether the server has closed this (non-blocking) connection.
fn closed_by_peer(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    match s.peek(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

impl Tricklers {
    /// `n` connections sending `prefix` and then, one byte per `period`, an endless header.
    fn start(addr: SocketAddr, n: usize, prefix: String, period: Duration) -> Tricklers {
        let stop = Arc::new(AtomicBool::new(false));
        let reconnects = Arc::new(AtomicUsize::new(0));
        let open = move |prefix: &str| -> Option<TcpStream> {
            let mut s = TcpStream::connect(addr).ok()?;
            s.set_nodelay(true).ok()?;
            s.write_all(prefix.as_bytes()).ok()?;
            if prefix.contains(CONTINUE) {
                // The server has read the head and waits for the body.
                let mut answer = [0u8; CONTINUED.len()];
                s.set_read_timeout(Some(BOUND)).ok()?;
                std::io::Read::read_exact(&mut s, &mut answer).ok()?;
                assert_eq!(&answer, CONTINUED);
            }
            s.set_nonblocking(true).ok()?;
            Some(s)
        };
        let mut conns: Vec<Option<TcpStream>> = (0..n).map(|_| open(&prefix)).collect();
        assert!(conns.iter().all(Option::is_some), "the tricklers connect");
        let (stop2, reconnects2) = (Arc::clone(&stop), Arc::clone(&reconnects));
        let thread = std::thread::spawn(move || {
            let mut next_byte = Instant::now() + period;
            while !stop2.load(Ordering::Relaxed) {
                let send = Instant::now() >= next_byte;
                if send {
                    next_byte += period;
                }
                for slot in conns.iter_mut() {
                    let alive = slot.as_mut().is_some_and(|s| {
                        !closed_by_peer(s) && (!send || s.write_all(b"a").is_ok())
                    });
                    if !alive {
                        reconnects2.fetch_add(1, Ordering::Relaxed);
                        *slot = open(&prefix);
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            conns
        });
        Tricklers {
            stop,
            reconnects,
            thread: Some(thread),
        }
    }

    /// Waits until a trickler has found its connection closed and opened another more than
    /// `seen` times.
    fn wait_for_reconnect(&self, seen: usize) -> usize {
        let until = Instant::now() + BOUND;
        loop {
            let now = self.reconnects.load(Ordering::Relaxed);
            if now > seen {
                return now;
            }
            assert!(Instant::now() < until, "no trickler came back");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops trickling; returns how many connections the server closed (those found closed
    /// and reopened on the way, and those closed now).
    fn closed_by_server(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let conns = self
            .thread
            .take()
            .expect("running")
            .join()
            .expect("the trickler");
        let closed_now = conns.iter().flatten().filter(|s| closed_by_peer(s)).count();
        self.reconnects.load(Ordering::Relaxed) + closed_now
    }
}

impl Drop for Tricklers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A trickling request head: never complete (one header line that grows a byte at a time).
fn endless_head(s: &Serve) -> String {
    format!("GET / HTTP/1.1\r\nHost: {}\r\nX-Trickle: ", s.host())
}

/// A POST whose head is complete and whose declared body trickles in a byte at a time.
fn endless_body(s: &Serve) -> String {
    format!(
        "POST /api/v1/session/notes HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
        s.host()
    )
}

/// The header that asks the server to say when it has read a head and waits for the body,
/// and what it then says: a trickler whose prefix holds it connects once that was said.
const CONTINUE: &str = "Expect: 100-continue";
const CONTINUED: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// [`endless_body`], its head read by the server before the trickling starts.
fn endless_body_read(s: &Serve) -> String {
    endless_body(s).replace("\r\n\r\n", &format!("\r\n{CONTINUE}\r\n\r\n"))
}

/// The well-behaved client's mix: a page, a GET capability, a POST capability, MCP ping.
fn well_behaved_round(s: &Serve, i: usize) -> Duration {
    let json = [("Content-Type", "application/json")];
    let mcp = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let note = format!(r#"{{"text":"note {i}"}}"#);
    let (r, took) = match i % 4 {
        0 => prompt(s, "GET", "/", &[], b""),
        1 => prompt(s, "GET", "/api/v1/server/status", &[], b""),
        2 => prompt(s, "POST", "/api/v1/session/notes", &json, note.as_bytes()),
        _ => prompt(
            s,
            "POST",
            "/mcp",
            &mcp,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ),
    };
    assert_eq!(r.status, 200, "request {i}: {}", r.text());
    took
}

/// 256 connections trickling request heads (a byte a second each, reconnecting when closed)
/// and two POSTs trickling their bodies fill the default cap of 256, with an hour to finish
/// their requests; a client beside them makes 20 requests and each is answered.
#[test]
fn tricklers_at_the_cap_do_not_lock_out_a_client() {
    let s = start(
        &[
            &["--max-connections", "256", "--workers", "2"][..],
            &PATIENT,
        ]
        .concat(),
    );
    let heads = Tricklers::start(s.addr, 256, endless_head(&s), Duration::from_secs(1));
    let bodies = Tricklers::start(s.addr, 2, endless_body(&s), Duration::from_secs(1));
    let mut slowest = Duration::ZERO;
    let mut seen = 0;
    for i in 0..20 {
        slowest = slowest.max(well_behaved_round(&s, i));
        // The tricklers come back in between and fill the cap again (258 of them for 256
        // places: each one closed to make room comes back and closes another).
        seen = heads.wait_for_reconnect(seen);
    }
    // The cap was full each time: to make room for the two slow bodies and each of the 20
    // requests, the server closed a trickling connection.
    let closed = heads.closed_by_server() + bodies.closed_by_server();
    eprintln!("slowest answer {slowest:?}; trickling connections closed {closed}");
    assert!(
        closed >= 20,
        "the server closed {closed} trickling connections"
    );
}

/// Two POSTs trickling their bodies (with an hour to finish), with two workers: every route,
/// `GET /` included, is still answered, because a body is read by its connection before the
/// request takes a worker.
#[test]
fn slow_bodies_do_not_hold_the_workers() {
    let s = start(&[&["--workers", "2"][..], &PATIENT].concat());
    // The server reads the bodies' heads first (it says `100 Continue`).
    let bodies = Tricklers::start(s.addr, 2, endless_body_read(&s), Duration::from_millis(300));
    for i in 0..8 {
        well_behaved_round(&s, i);
    }
    assert_eq!(
        bodies.closed_by_server(),
        0,
        "below the cap nothing is closed"
    );
}

/// A small cap filled with idle connections (with an hour before their idle timeout): the
/// first has sent nothing since it was accepted, the three after it have had an answer each and
/// send nothing more. A new client is served, and it is the connection idle the longest, the
/// first, that makes room.
///
/// The first is idle since its accept, stamped by the accept loop before it takes the next
/// connection: whatever the scheduler does, the others turn idle later (a connection that has
/// had an answer turns idle only once its thread runs again after writing it, so the order of
/// answers alone would not decide).
#[test]
fn at_the_cap_the_longest_idle_connection_makes_room() {
    let s = start(&[&["--max-connections", "4"][..], &PATIENT].concat());
    let host = s.host();
    let status = "/api/v1/server/status";
    let mut held = vec![s.connect()];
    for _ in 1..4 {
        let mut c = s.connect();
        assert_eq!(c.send(&host, "GET", status, &[], b"").status, 200);
        held.push(c);
    }
    let (r, _) = prompt(&s, "GET", status, &[], b"");
    assert_eq!(r.status, 200);
    // The oldest idle connection was closed; the three younger ones still serve.
    assert!(
        held[0].closed(),
        "the longest idle connection is still open"
    );
    for c in &mut held[1..] {
        assert_eq!(c.send(&host, "GET", status, &[], b"").status, 200);
    }
}

/// A complete request with the start of another pipelined behind it: once the first is
/// answered, the second is an incomplete request like any other, and makes room at the cap
/// (it is not held busy, as a pipelined request read whole from the buffer is).
#[test]
fn a_pipelined_incomplete_request_makes_room_at_the_cap() {
    let s = start(&[&["--max-connections", "1"][..], &PATIENT].concat());
    let host = s.host();
    let status = "/api/v1/server/status";
    let mut c = s.connect();
    c.write(
        format!("GET {status} HTTP/1.1\r\nHost: {host}\r\n\r\nGET {status} HTTP/1.1\r\nHo")
            .as_bytes(),
    );
    assert_eq!(c.read(false).status, 200);
    let (r, _) = prompt(&s, "GET", status, &[], b"");
    assert_eq!(r.status, 200);
    assert!(
        c.at_end(),
        "the connection reading an incomplete request was not closed for the newcomer"
    );
}

/// Two good requests and a framing error sent in one write: the two answers leave first, in
/// order, then the 400, then the connection closes.
#[test]
fn a_pipelined_framing_error_is_answered_after_the_requests_before_it() {
    let s = start(&[]);
    let host = s.host();
    for _ in 0..5 {
        let mut c = s.connect();
        c.write(
            format!(
                "GET /api/v1/capabilities HTTP/1.1\r\nHost: {host}\r\n\r\n\
                 GET /api/v1/server/status HTTP/1.1\r\nHost: {host}\r\n\r\n\
                 POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            )
            .as_bytes(),
        );
        let first = c.read(false);
        assert_eq!(first.status, 200, "{}", first.text());
        assert!(first.json()["capabilities"].is_array(), "{}", first.text());
        let second = c.read(false);
        assert_eq!(second.status, 200, "{}", second.text());
        assert!(second.json()["pid"].is_number(), "{}", second.text());
        assert_eq!(c.read(false).status, 400);
        assert!(
            c.closed(),
            "the connection stays open after a framing error"
        );
    }
}

/// Sends `prefix`, then one byte every 100 ms for up to `budget`; returns the status of the
/// answer (0: closed without one) and when it began. The client is still trickling when the
/// server answers.
fn trickle_until_answered(s: &Serve, prefix: &str, budget: Duration) -> (u16, Duration) {
    let started = Instant::now();
    let mut c = TcpStream::connect(s.addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    c.write_all(prefix.as_bytes()).expect("write");
    let mut peek = [0u8; 16];
    while started.elapsed() < budget {
        match c.peek(&mut peek) {
            Ok(0) => return (0, started.elapsed()),
            Ok(n) if n >= 12 => {
                let line = String::from_utf8_lossy(&peek[..n]);
                let status = line[9..12].parse().expect("a status line");
                return (status, started.elapsed());
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(5)),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // The server may have closed its end already; the next peek tells.
                let _ = c.write_all(b"a");
            }
            Err(e) => panic!("read: {e}"),
        }
    }
    panic!("no answer within {budget:?} of trickling");
}

/// A head or a body that keeps trickling (a byte every 100 ms, so no single read ever times
/// out) is answered 408 at the request deadline, while the client still trickles (within
/// [`BOUND`], not never). When is the server's clock's business: a client's clock saw a 408
/// come 0.2 ms before two seconds.
#[test]
fn a_trickling_request_is_408_at_the_deadline() {
    let s = start(&["--request-timeout", "2"]);
    let (status, at) = trickle_until_answered(&s, &endless_head(&s), BOUND);
    assert_eq!(status, 408, "head, after {at:?}");
    let (status, at) = trickle_until_answered(&s, &endless_body(&s), BOUND);
    assert_eq!(status, 408, "body, after {at:?}");
    // The server still serves.
    assert_eq!(s.get("/api/v1/server/status").status, 200);
}

/// Asks for `n` copies of the 1.4 MB Swagger UI bundle, pipelined, on a connection whose
/// client reads nothing: far more than the socket buffers hold, so the server is left
/// writing an answer.
fn unread_answers(s: &Serve, n: usize) -> TcpStream {
    let mut c = TcpStream::connect(s.addr).expect("connect");
    let ask = format!(
        "GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: {}\r\n\r\n",
        s.host()
    );
    c.write_all(ask.repeat(n).as_bytes()).expect("write");
    c
}

/// Two clients that do not read their (large) answers, with two workers and an hour to write
/// an answer: other requests are still answered, because an answer is written after its
/// request gave back the worker.
#[test]
fn slow_readers_do_not_hold_the_workers() {
    let s = start(&[&["--workers", "2"][..], &PATIENT].concat());
    let readers = [unread_answers(&s, 20), unread_answers(&s, 20)];
    // Each is being answered (the first bytes of its answer are here) before the others ask.
    for r in &readers {
        r.set_read_timeout(Some(BOUND)).expect("timeout");
        assert!(r.peek(&mut [0u8; 1]).expect("an answer begins") > 0);
    }
    for i in 0..8 {
        well_behaved_round(&s, i);
    }
}

/// An answer the client does not read is abandoned at the request deadline: the connection
/// closes (not never) before every answer was written.
#[test]
fn an_unread_answer_is_dropped_at_the_deadline() {
    // One place: a second client is let in once the server has given the unread one up (a
    // connection being answered is never made to make room).
    let s = start(&["--request-timeout", "2", "--max-connections", "1"]);
    let mut c = unread_answers(&s, 20);
    c.set_read_timeout(Some(BOUND)).expect("timeout");
    assert!(c.peek(&mut [0u8; 1]).expect("an answer begins") > 0);
    let (r, _) = prompt(&s, "GET", "/api/v1/server/status", &[], b"");
    assert_eq!(r.status, 200);
    // Drain what was sent: the server has closed, so the end comes.
    c.set_read_timeout(Some(BOUND)).expect("timeout");
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let ended = loop {
        match std::io::Read::read(&mut c, &mut buf) {
            Ok(0) => break true,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break false
            }
            Err(_) => break true,
        }
    };
    assert!(
        ended,
        "the connection is still open after {} bytes",
        got.len()
    );
    assert!(
        got.len() < 20 * 1_400_000,
        "every answer was written: {} bytes",
        got.len()
    );
}
