//! seneschal patch 7: the server seneschal runs, built so that no neighbour can lock others out.
//!
//! Upstream reads each connection on a thread of its own and hands every parsed head, with a
//! reader over the socket, to worker threads; the workers then read the bodies and write the
//! answers, ordered by a chain of channels. A slow body therefore held a worker, a per-read
//! timeout let a trickling client hold its connection forever, every request cost two thread
//! hand-offs, and a framing error skipped the chain and was answered before the requests
//! pipelined ahead of it. Here:
//!
//! - **Each connection runs its requests in order on its own thread**: it reads the head and
//!   the whole body (at most [`Limits::max_body`] bytes, in memory), then takes one of
//!   [`Limits::workers`] permits to run the handler, which answers into memory, then releases
//!   the permit and writes the answer. So at most `workers` handlers run at once, a slow body
//!   or a slow reader never holds a permit, answers leave in request order (an error answer
//!   too, after the answers before it), and a request costs no thread hand-off.
//! - **A deadline per request**: from its first byte, the head and the body must arrive within
//!   [`Limits::request_timeout`] (each read waits only for the time left), else 408 and close;
//!   the answer must be written within the same time. Between requests a connection may stay
//!   idle for [`Limits::idle_timeout`].
//! - **At most [`Limits::max_connections`] connections; at the cap the server makes room**:
//!   when another client connects, the connection that has been idle, or stuck in an
//!   incomplete head or body, the longest is closed and the newcomer takes its place. One whose
//!   request is complete (waiting for a permit, running, or being answered) is never closed,
//!   nor is one whose next request, pipelined, is already at the server (patch 12). When every
//!   connection is busy that way, the newcomer waits for one to finish.

use std::collections::VecDeque;
use std::io::{Error as IoError, ErrorKind, Result as IoResult, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use crate::client::{parse_request_line, MAX_HEADERS, MAX_LINE};
use crate::common::{HTTPVersion, Header};
use crate::connection::{Connection, Listener};
use crate::request::{check_framing, complete_request};
use crate::util::TaskPool;
use crate::Request;

/// The bounds of [`serve`].
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections open at once (each holds a thread).
    pub max_connections: usize,
    /// Handlers running at once.
    pub workers: usize,
    /// The largest request body read; a larger one is handed over cut at `max_body + 1` bytes
    /// (with its declared length, if any) and the connection is closed after the answer.
    pub max_body: usize,
    /// From a request's first byte to its last, and for writing its answer.
    pub request_timeout: Duration,
    /// How long a connection may wait, idle, for its next request.
    pub idle_timeout: Duration,
}

/// Serves `listener` on a thread of its own (returned) and calls `handler` once per complete
/// request, on the request's connection thread, at most `limits.workers` at a time. The
/// listener's own socket options (`SO_RCVTIMEO`, `TCP_NODELAY`, ...) are inherited by accepted
/// sockets; the read timeout should be `limits.idle_timeout`, the first wait of a connection.
pub fn serve<F>(listener: Listener, limits: Limits, handler: F) -> IoResult<JoinHandle<()>>
where
    F: Fn(Request) + Send + Sync + 'static,
{
    let shared = Arc::new(Shared {
        permits: Permits::new(limits.workers.max(1)),
        limits,
        handler: Box::new(handler),
        epoch: Instant::now(),
    });
    thread::Builder::new()
        .name("http-accept".into())
        .spawn(move || accept_loop(listener, shared))
}

struct Shared {
    limits: Limits,
    handler: Box<dyn Fn(Request) + Send + Sync>,
    permits: Permits,
    /// The origin of the slots' timestamps.
    epoch: Instant,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}

// ---------------------------------------------------------------------------------------------
// The accept loop and the connection slots.

/// A slot is free, or holds one connection in one of these states. The state and the time it
/// was entered share one atomic word (`since_ms << 3 | state`), so the accept loop can choose
/// and claim a victim with one compare-and-swap that races with nothing the connection does.
const FREE: u64 = 0;
/// Waiting for the first byte of a request, since the answer before it (or the accept).
const IDLE: u64 = 1;
/// Reading an incomplete head or body, since the request's first byte.
const READING: u64 = 2;
/// The request is complete: waiting for a permit, running or being answered. Never evicted.
const BUSY: u64 = 3;
/// Evicted or ending: its thread is leaving and will free the slot.
const CLOSING: u64 = 4;

struct Slot {
    word: AtomicU64,
    /// The connection, to shut it down when it is evicted.
    conn: Mutex<Option<Arc<Connection>>>,
}

impl Slot {
    fn state(word: u64) -> u64 {
        word & 7
    }

    fn since(word: u64) -> u64 {
        word >> 3
    }

    fn pack(state: u64, since: u64) -> u64 {
        since << 3 | state
    }

    /// Moves to `state` from any state but CLOSING; false when the slot was evicted meanwhile.
    fn enter(&self, state: u64, now_ms: u64) -> bool {
        let mut cur = self.word.load(Ordering::Acquire);
        loop {
            if Slot::state(cur) == CLOSING {
                return false;
            }
            match self.word.compare_exchange_weak(
                cur,
                Slot::pack(state, now_ms),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }
}

/// Frees the slot when the connection's thread ends, however it ends.
struct Occupied(Arc<Slot>);

impl Drop for Occupied {
    fn drop(&mut self) {
        if let Ok(mut c) = self.0.conn.lock() {
            *c = None;
        }
        self.0.word.store(FREE, Ordering::Release);
    }
}

fn accept_loop(listener: Listener, shared: Arc<Shared>) {
    let pool = TaskPool::new();
    let mut slots: Vec<Arc<Slot>> = Vec::new();
    let cap = shared.limits.max_connections.max(1);
    loop {
        let (conn, remote) = match listener.accept() {
            Ok(c) => c,
            Err(e) => {
                // seneschal patch 5: an accept error is transient (the listener's inherited
                // timeout, an aborted handshake, EMFILE): retry, after a pause unless it was a
                // timeout.
                if !matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) {
                    thread::sleep(Duration::from_millis(20));
                }
                continue;
            }
        };
        let slot = place(&mut slots, cap);
        let conn = Arc::new(conn);
        *slot.conn.lock().expect("slot lock") = Some(Arc::clone(&conn));
        slot.word
            .store(Slot::pack(IDLE, shared.now_ms()), Ordering::Release);
        let shared = Arc::clone(&shared);
        let mut task = Some((slot, conn));
        pool.spawn(Box::new(move || {
            if let Some((slot, conn)) = task.take() {
                let occupied = Occupied(slot);
                Client::new(&shared, &occupied.0, &conn, remote).run();
                // The socket closes (with the slot's handle) before the slot is free again.
                drop(conn);
                drop(occupied);
            }
        }));
    }
}

/// A free slot for a new connection: a free one, a new one under the cap, or at the cap the
/// place of the connection idle or stuck the longest (waiting while every one is busy).
fn place(slots: &mut Vec<Arc<Slot>>, cap: usize) -> Arc<Slot> {
    loop {
        if let Some(s) = slots
            .iter()
            .find(|s| s.word.load(Ordering::Acquire) == FREE)
        {
            return Arc::clone(s);
        }
        if slots.len() < cap {
            let s = Arc::new(Slot {
                word: AtomicU64::new(FREE),
                conn: Mutex::new(None),
            });
            slots.push(Arc::clone(&s));
            return s;
        }
        match evict(slots) {
            Some(victim) => {
                // Its thread wakes from its read at once (EOF) and frees the slot.
                let until = Instant::now() + Duration::from_secs(1);
                while victim.word.load(Ordering::Acquire) != FREE && Instant::now() < until {
                    thread::sleep(Duration::from_micros(200));
                }
            }
            None => thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Closes the connection idle or stuck in an incomplete request the longest; `None` when every
/// connection is busy (or already closing).
fn evict(slots: &[Arc<Slot>]) -> Option<Arc<Slot>> {
    loop {
        let (victim, word) = slots
            .iter()
            .map(|s| (s, s.word.load(Ordering::Acquire)))
            .filter(|(_, w)| matches!(Slot::state(*w), IDLE | READING))
            .min_by_key(|(_, w)| Slot::since(*w))?;
        // The claim fails if the connection moved on meanwhile (then choose again).
        if victim
            .word
            .compare_exchange(
                word,
                Slot::pack(CLOSING, Slot::since(word)),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            if let Some(c) = victim.conn.lock().expect("slot lock").as_ref() {
                let _ = c.shutdown(Shutdown::Both);
            }
            return Some(Arc::clone(victim));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Permits: the worker bound, first come first served.

struct Permits {
    state: Mutex<PermitState>,
    /// `state.free`, readable without the lock (a hint: the lock decides).
    free: AtomicUsize,
}

/// How many times a thread finding no permit yields before it sleeps in line.
const SPINS: usize = 8;

struct PermitState {
    free: usize,
    waiting: VecDeque<Arc<Waiter>>,
}

struct Waiter {
    thread: Thread,
    granted: AtomicBool,
}

/// A held permit, given back when dropped (a panicking handler gives it back too).
struct Permit<'a>(&'a Permits);

impl Permits {
    fn new(n: usize) -> Permits {
        Permits {
            state: Mutex::new(PermitState {
                free: n,
                waiting: VecDeque::new(),
            }),
            free: AtomicUsize::new(n),
        }
    }

    fn acquire(&self) -> Permit<'_> {
        // A handler runs for microseconds, so a permit taken now is usually free again sooner
        // than a thread can sleep and be woken: retry a few times first, yielding the CPU to
        // the holder (with more connection threads than cores, it is often the one waiting
        // for this CPU). Sleeping at once cost about one context switch per request more.
        for _ in 0..SPINS {
            if self.free.load(Ordering::Relaxed) > 0 {
                let mut s = self.state.lock().expect("permits lock");
                if s.free > 0 && s.waiting.is_empty() {
                    s.free -= 1;
                    self.free.store(s.free, Ordering::Relaxed);
                    return Permit(self);
                }
            }
            thread::yield_now();
        }
        let waiter = {
            let mut s = self.state.lock().expect("permits lock");
            if s.free > 0 && s.waiting.is_empty() {
                s.free -= 1;
                self.free.store(s.free, Ordering::Relaxed);
                return Permit(self);
            }
            let w = Arc::new(Waiter {
                thread: thread::current(),
                granted: AtomicBool::new(false),
            });
            s.waiting.push_back(Arc::clone(&w));
            w
        };
        while !waiter.granted.load(Ordering::Acquire) {
            thread::park();
        }
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut s = match self.0.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        match s.waiting.pop_front() {
            // Handed straight to the next in line.
            Some(w) => {
                w.granted.store(true, Ordering::Release);
                w.thread.unpark();
            }
            None => {
                s.free += 1;
                self.0.free.store(s.free, Ordering::Relaxed);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// seneschal patch 11: a handler that waits holds no permit.

thread_local! {
    /// The server whose permit the handler running on this thread holds.
    static HELD: std::cell::RefCell<Option<Arc<Shared>>> = const { std::cell::RefCell::new(None) };
}

/// Marks the handler on this thread as holding a permit of `shared` until dropped.
struct Held(Option<Arc<Shared>>);

impl Held {
    fn enter(shared: Arc<Shared>) -> Held {
        Held(HELD.with(|h| h.borrow_mut().replace(shared)))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let before = self.0.take();
        HELD.with(|h| *h.borrow_mut() = before);
    }
}

/// Takes a permit back when dropped (after `idle`'s wait, or its panic), for the handler's
/// own permit guard to give back when the handler returns.
struct Retake(Arc<Shared>);

impl Drop for Retake {
    fn drop(&mut self) {
        std::mem::forget(self.0.permits.acquire());
    }
}

/// Runs `wait` without the worker permit of the handler on this thread: a handler that waits
/// for something outside the server (a person's decision) holds no worker meanwhile, so every
/// other request still runs; the permit is taken again (in line with every other request)
/// before `idle` returns. Outside a handler of [`serve`] it just runs `wait`.
pub fn idle<R>(wait: impl FnOnce() -> R) -> R {
    let Some(shared) = HELD.with(|h| h.borrow_mut().take()) else {
        return wait();
    };
    // The permit this handler holds, given back now.
    drop(Permit(&shared.permits));
    let retake = Retake(Arc::clone(&shared));
    let out = wait();
    drop(retake);
    HELD.with(|h| *h.borrow_mut() = Some(shared));
    out
}

// ---------------------------------------------------------------------------------------------
// One connection.

/// The largest answer buffer a connection keeps between requests, in bytes.
const ANSWER_KEPT: usize = 64 * 1024;

/// How long a closing connection reads and drops what its client still sends.
const LINGER: Duration = Duration::from_millis(500);

/// Why a connection stops reading.
enum Stop {
    /// The client closed, or the connection was evicted, or an I/O error: close, no answer.
    Closed,
    /// The request deadline passed: 408.
    Timeout,
    /// A head line or the header count is over its limit: 431.
    TooLarge,
    /// Not HTTP we can frame: 400.
    Malformed,
    /// Bytes that are not ASCII in the head: close without an answer (as upstream).
    NotAscii,
    /// An `Expect` other than `100-continue`: 417.
    Expectation,
    /// An HTTP version above 1.1: 505.
    Version,
}

/// How long the next read may wait.
#[derive(Clone, Copy)]
enum Wait {
    /// For a first byte, up to the idle timeout.
    Idle,
    /// Until the request deadline.
    Until(Instant),
}

/// The answer buffer a request's writer fills.
#[derive(Clone)]
struct Answer(Arc<Mutex<Vec<u8>>>);

impl Write for Answer {
    fn write(&mut self, buf: &[u8]) -> IoResult<usize> {
        self.0.lock().expect("answer lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> IoResult<()> {
        Ok(())
    }
}

struct Client<'a> {
    shared: &'a Arc<Shared>,
    slot: &'a Slot,
    conn: &'a Connection,
    remote: Option<SocketAddr>,
    /// Received bytes: `buf[pos..end]` is not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The read timeout now set on the socket.
    read_timeout: Duration,
    /// The write timeout now set on the socket (`None`: the inherited one).
    write_timeout: Option<Duration>,
    answer: Answer,
    /// seneschal patch 9: the producer of a streamed answer, left by the handler.
    stream: crate::request::StreamSlot,
    /// seneschal patch 12: when the request now read began, while the slot still shows the
    /// connection busy with the request before it (a pipelined request, whose bytes were
    /// already here); `None` once the slot shows it reading.
    reading: Option<u64>,
}

/// seneschal patch 9: the socket as a streamed body's writer: each write leaves whole within
/// the request timeout, or fails, and after a failure every write fails.
struct Streamed<'c, 'a> {
    client: &'c mut Client<'a>,
    failed: bool,
}

impl Write for Streamed<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> IoResult<usize> {
        if self.failed {
            return Err(IoError::new(ErrorKind::BrokenPipe, "the stream has ended"));
        }
        let deadline = Instant::now() + self.client.shared.limits.request_timeout;
        match self.client.write_all(buf, deadline) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> IoResult<()> {
        if self.failed {
            return Err(IoError::new(ErrorKind::BrokenPipe, "the stream has ended"));
        }
        Ok(())
    }
}

/// A request head, parsed.
struct Head {
    method: crate::Method,
    path: String,
    version: HTTPVersion,
    headers: Vec<Header>,
}

impl<'a> Client<'a> {
    fn new(
        shared: &'a Arc<Shared>,
        slot: &'a Slot,
        conn: &'a Connection,
        remote: Option<SocketAddr>,
    ) -> Client<'a> {
        Client {
            shared,
            slot,
            conn,
            remote,
            buf: vec![0; 4096],
            pos: 0,
            end: 0,
            read_timeout: shared.limits.idle_timeout,
            write_timeout: None,
            answer: Answer(Arc::new(Mutex::new(Vec::with_capacity(4096)))),
            stream: Arc::new(Mutex::new(None)),
            reading: None,
        }
    }

    /// Serves requests until the client closes, a deadline passes, an error closes the
    /// connection or it is evicted.
    fn run(mut self) {
        let mut answered = false;
        loop {
            // seneschal patch 12: idle until the next request's first byte. A request pipelined
            // behind the one answered, already here (in the buffer, or waiting in the socket),
            // keeps the connection busy: it is never idle between the two, so a newcomer at
            // the cap cannot take its place there.
            let pipelined = self.pos < self.end || (answered && self.conn.readable_now());
            if !pipelined {
                if !self.slot.enter(IDLE, self.shared.now_ms())
                    || self.fill(Wait::Idle).is_err()
                    || !self.slot.enter(READING, self.shared.now_ms())
                {
                    return;
                }
                self.reading = None;
            } else {
                // Shown as reading only if the rest of it must be waited for.
                self.reading = Some(self.shared.now_ms());
            }
            let deadline = Instant::now() + self.shared.limits.request_timeout;
            let status = match self.request(deadline) {
                Ok(true) => {
                    answered = true;
                    continue;
                }
                Ok(false) => return self.linger(),
                Err(Stop::Closed) => return,
                Err(Stop::NotAscii) => return self.linger(),
                Err(Stop::Timeout) => 408,
                Err(Stop::TooLarge) => 431,
                Err(Stop::Malformed) => 400,
                Err(Stop::Expectation) => 417,
                Err(Stop::Version) => 505,
            };
            // An error answer is the last on this connection; the answers to the requests
            // before it have been written already (requests run in order).
            let reason = crate::StatusCode(status).default_reason_phrase();
            let text = format!(
                "HTTP/1.1 {status} {reason}\r\nDate: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                crate::response::http_date()
            );
            let deadline = Instant::now() + self.shared.limits.request_timeout;
            if self.write_all(text.as_bytes(), deadline).is_ok() {
                self.linger();
            }
            return;
        }
    }

    /// Closes after a last answer: stop sending, then read and drop what the client still
    /// sends for a moment, so that unread bytes do not turn the close into a reset that could
    /// destroy the answer before the client reads it. Evictable meanwhile.
    fn linger(&mut self) {
        if !self.slot.enter(IDLE, self.shared.now_ms()) {
            return;
        }
        let _ = self.conn.shutdown(Shutdown::Write);
        let until = Instant::now() + LINGER;
        let mut sink = [0u8; 4096];
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left < Duration::from_millis(1) || self.conn.set_read_timeout(left).is_err() {
                return;
            }
            match self.conn.read_shared(&mut sink) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Reads, runs and answers one request; `Ok(keep_alive)`.
    fn request(&mut self, deadline: Instant) -> Result<bool, Stop> {
        let wait = Wait::Until(deadline);
        let head = self.head(wait)?;
        if head.version > HTTPVersion(1, 1) {
            return Err(Stop::Version);
        }
        check_framing(&head.headers).map_err(|_| Stop::Malformed)?;
        fn header<'h>(headers: &'h [Header], name: &str) -> Option<&'h str> {
            headers
                .iter()
                .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
                .map(|h| h.value.as_str())
        }
        let find = |name: &str| header(&head.headers, name);
        let chunked = find("Transfer-Encoding").is_some();
        let length: Option<usize> = find("Content-Length").and_then(|v| v.trim().parse().ok());
        let expects_continue = match find("Expect") {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("100-continue") => true,
            Some(_) => return Err(Stop::Expectation),
        };
        let connection = find("Connection").map(|v| v.to_ascii_lowercase());
        let mut keep_alive = match connection.as_deref() {
            Some(v) if v.contains("close") || v.contains("upgrade") => false,
            Some(v) if head.version == HTTPVersion(1, 0) => v.contains("keep-alive"),
            None if head.version == HTTPVersion(1, 0) => false,
            _ => true,
        };

        // The body, whole, before the request takes a permit.
        let max = self.shared.limits.max_body;
        let body = if let Some(n) = length {
            if n > max {
                // Refused on its declared length; the body is never read.
                keep_alive = false;
                Vec::new()
            } else {
                if expects_continue && self.end - self.pos < n {
                    self.write_all(b"HTTP/1.1 100 Continue\r\n\r\n", deadline)
                        .map_err(|_| Stop::Closed)?;
                }
                self.body_exact(n, wait)?
            }
        } else if chunked {
            if expects_continue && self.pos == self.end {
                self.write_all(b"HTTP/1.1 100 Continue\r\n\r\n", deadline)
                    .map_err(|_| Stop::Closed)?;
            }
            let (body, complete) = self.body_chunked(max, wait)?;
            keep_alive &= complete;
            body
        } else {
            Vec::new()
        };

        if !self.slot.enter(BUSY, self.shared.now_ms()) {
            return Err(Stop::Closed);
        }
        let writer = Box::new(self.answer.clone());
        let http10 = head.version < HTTPVersion(1, 1);
        let request = complete_request(
            head.method,
            head.path,
            head.version,
            head.headers,
            self.remote,
            body,
            length,
            writer,
            Arc::clone(&self.stream),
            crate::request::Gone::of(self.conn.tcp_duplicate()),
        );
        {
            let _permit = self.shared.permits.acquire();
            // seneschal patch 11: the handler may give its permit back while it waits (`idle`).
            let _held = Held::enter(Arc::clone(self.shared));
            (self.shared.handler)(request);
        }
        let bytes = std::mem::take(&mut *self.answer.0.lock().expect("answer lock"));
        let written = self.write_all(&bytes, Instant::now() + self.shared.limits.request_timeout);
        // seneschal patch 9: a streamed body, produced now, without a permit.
        let produce = self.stream.lock().expect("stream slot").take();
        if let Some(produce) = produce {
            if written.is_err() {
                return Err(Stop::Closed);
            }
            let mut out = Streamed {
                client: self,
                failed: false,
            };
            produce(&mut out);
            let failed = out.failed;
            // HTTP/1.0 streams end with the connection.
            if failed || http10 {
                return Err(Stop::Closed);
            }
        }
        // Keep the buffer for the next answer, unless a large answer grew it: an idle
        // connection holds no more than [`ANSWER_KEPT`].
        let mut bytes = bytes;
        bytes.clear();
        if bytes.capacity() > ANSWER_KEPT {
            bytes = Vec::new();
        }
        *self.answer.0.lock().expect("answer lock") = bytes;
        written.map_err(|_| Stop::Closed)?;
        Ok(keep_alive)
    }

    /// seneschal patch 12: before a pipelined request waits for its rest (none of it waits in
    /// the socket), the slot shows the connection reading it since it began (evictable, as any
    /// incomplete request).
    fn show_reading(&mut self) -> Result<(), Stop> {
        if let Some(since) = self.reading {
            if self.conn.readable_now() {
                return Ok(());
            }
            self.reading = None;
            if !self.slot.enter(READING, since) {
                return Err(Stop::Closed);
            }
        }
        Ok(())
    }

    /// Reads more bytes into the buffer (at least one).
    fn fill(&mut self, wait: Wait) -> Result<(), Stop> {
        if self.end == self.buf.len() {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            if self.end == self.buf.len() {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
        }
        loop {
            let timeout = match wait {
                Wait::Idle => self.shared.limits.idle_timeout,
                Wait::Until(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left < Duration::from_millis(1) {
                        return Err(Stop::Timeout);
                    }
                    left
                }
            };
            if let Wait::Until(_) = wait {
                self.show_reading()?;
            }
            if timeout != self.read_timeout {
                self.conn
                    .set_read_timeout(timeout)
                    .map_err(|_| Stop::Closed)?;
                self.read_timeout = timeout;
            }
            match self.conn.read_shared(&mut self.buf[self.end..]) {
                Ok(0) => return Err(Stop::Closed),
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    match wait {
                        Wait::Idle => return Err(Stop::Closed),
                        // The loop measures what is left (and answers 408 when nothing is).
                        Wait::Until(_) => continue,
                    }
                }
                Err(_) => return Err(Stop::Closed),
            }
        }
    }

    /// The next line ending in CRLF (without it), at most `max` bytes; consumed.
    fn line(&mut self, max: usize, wait: Wait) -> Result<(usize, usize), Stop> {
        let mut scanned = self.pos;
        loop {
            if let Some(i) = self.buf[scanned..self.end]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                let start = self.pos;
                let end = scanned + i;
                self.pos = end + 2;
                if end - start > max {
                    return Err(Stop::TooLarge);
                }
                return Ok((start, end));
            }
            if self.end - self.pos > max + 1 {
                return Err(Stop::TooLarge);
            }
            scanned = self.end.saturating_sub(1).max(self.pos);
            let before = self.pos;
            self.fill(wait)?;
            // `fill` may have moved the unconsumed bytes to the front.
            scanned -= before - self.pos;
        }
    }

    /// The line `(start, end)` as ASCII text.
    fn text(&self, (start, end): (usize, usize)) -> Result<&str, Stop> {
        let bytes = &self.buf[start..end];
        if !bytes.is_ascii() {
            return Err(Stop::NotAscii);
        }
        std::str::from_utf8(bytes).map_err(|_| Stop::NotAscii)
    }

    /// The request line and the header lines.
    fn head(&mut self, wait: Wait) -> Result<Head, Stop> {
        let line = self.line(MAX_LINE, wait)?;
        let (method, path, version) =
            parse_request_line(self.text(line)?.trim()).map_err(|_| Stop::Malformed)?;
        let mut headers = Vec::new();
        loop {
            let line = self.line(MAX_LINE, wait)?;
            if line.0 == line.1 {
                break;
            }
            if headers.len() >= MAX_HEADERS {
                return Err(Stop::TooLarge);
            }
            let header = self
                .text(line)?
                .trim()
                .parse()
                .map_err(|_| Stop::Malformed)?;
            headers.push(header);
        }
        Ok(Head {
            method,
            path,
            version,
            headers,
        })
    }

    /// Exactly `n` body bytes.
    fn body_exact(&mut self, n: usize, wait: Wait) -> Result<Vec<u8>, Stop> {
        // Zeroed lazily by the allocator: a declared length costs memory only as it arrives.
        let mut body = vec![0u8; n];
        let here = (self.end - self.pos).min(n);
        body[..here].copy_from_slice(&self.buf[self.pos..self.pos + here]);
        self.pos += here;
        let mut got = here;
        while got < n {
            // Straight from the socket into the body.
            let timeout = match wait {
                Wait::Until(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left < Duration::from_millis(1) {
                        return Err(Stop::Timeout);
                    }
                    left
                }
                Wait::Idle => self.shared.limits.idle_timeout,
            };
            if let Wait::Until(_) = wait {
                self.show_reading()?;
            }
            if timeout != self.read_timeout {
                self.conn
                    .set_read_timeout(timeout)
                    .map_err(|_| Stop::Closed)?;
                self.read_timeout = timeout;
            }
            match self.conn.read_shared(&mut body[got..]) {
                Ok(0) => return Err(Stop::Closed),
                Ok(k) => got += k,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::WouldBlock | ErrorKind::TimedOut
                    ) =>
                {
                    continue
                }
                Err(_) => return Err(Stop::Closed),
            }
        }
        Ok(body)
    }

    /// A chunked body, decoded, at most `max + 1` bytes: `(body, complete)`; an incomplete one
    /// (over `max`) is cut there and its connection closes after the answer.
    fn body_chunked(&mut self, max: usize, wait: Wait) -> Result<(Vec<u8>, bool), Stop> {
        let mut body = Vec::new();
        loop {
            let line = self.line(1024, wait)?;
            let text = self.text(line).map_err(|_| Stop::Malformed)?;
            let size = text.split(';').next().unwrap_or("").trim();
            if size.is_empty() || size.len() > 16 {
                return Err(Stop::Malformed);
            }
            let size = usize::from_str_radix(size, 16).map_err(|_| Stop::Malformed)?;
            if size == 0 {
                // Trailer fields, then the empty line.
                for _ in 0..=MAX_HEADERS {
                    let line = self.line(MAX_LINE, wait)?;
                    if line.0 == line.1 {
                        return Ok((body, true));
                    }
                }
                return Err(Stop::TooLarge);
            }
            if body.len().saturating_add(size) > max {
                // Over the limit: keep `max + 1` bytes so the handler sees it, read no more.
                let want = max + 1 - body.len();
                let chunk = self.body_exact(want, wait)?;
                body.extend_from_slice(&chunk);
                return Ok((body, false));
            }
            let chunk = self.body_exact(size, wait)?;
            body.extend_from_slice(&chunk);
            while self.end - self.pos < 2 {
                self.fill(wait)?;
            }
            if &self.buf[self.pos..self.pos + 2] != b"\r\n" {
                return Err(Stop::Malformed);
            }
            self.pos += 2;
        }
    }

    /// Writes `bytes` whole by `deadline`.
    fn write_all(&mut self, mut bytes: &[u8], deadline: Instant) -> IoResult<()> {
        let mut first = true;
        while !bytes.is_empty() {
            if !first {
                let left = deadline.saturating_duration_since(Instant::now());
                if left < Duration::from_millis(1) {
                    return Err(IoError::new(ErrorKind::TimedOut, "answer deadline"));
                }
                if self.write_timeout != Some(left) {
                    self.conn.set_write_timeout(left)?;
                    self.write_timeout = Some(left);
                }
            }
            first = false;
            match self.conn.write_shared(bytes) {
                Ok(0) => return Err(IoError::new(ErrorKind::WriteZero, "closed")),
                Ok(n) => bytes = &bytes[n..],
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::WouldBlock | ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
