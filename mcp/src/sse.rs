//! Streamable HTTP sessions and Server-Sent Events: the table of `Mcp-Session-Id` sessions
//! (initialize era), the streams a session's notifications travel on, and the framing of one
//! JSON-RPC message as one SSE event.
//!
//! A session is minted by a successful `initialize` POST: 128 random bits in hex. It holds the
//! connection state an MCP stdio process would hold (the [`Session`]: negotiated revision,
//! client capabilities, log level, approvals, subscriptions) and the [`Pending`] table where
//! the client's responses to our requests arrive (each on a POST of its own). The table is
//! bounded: at most [`MAX_SESSIONS`] live at once, one unused for [`IDLE`] expires, and when
//! the table is full a new `initialize` takes the place of the session unused the longest
//! that has no stream open and no call in flight (else it is refused, 503). Streams (GET
//! streams and streamed calls) hold a connection each that is never evicted, so at most half
//! of the server's connections may be streams: past that, a GET is refused (503) and a call
//! is answered as JSON.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::link::{Pending, Sink};
use crate::live::Feed;
use crate::model::Session;

/// The most sessions alive at once.
pub const MAX_SESSIONS: usize = seneschal_access::limits::MCP_SESSIONS;
/// How long a session may go unused (no request, no open stream) before it expires.
pub const IDLE: Duration = Duration::from_secs(seneschal_access::limits::MCP_SESSION_IDLE_SECS);
/// The most standalone (GET) streams one session may hold open.
pub const MAX_STREAMS: usize = seneschal_access::limits::MCP_STREAMS;
/// How often an idle stream sends a comment, so that a client gone away is noticed.
pub const KEEPALIVE: Duration =
    Duration::from_secs(seneschal_access::limits::MCP_SSE_KEEPALIVE_SECS);

/// One JSON-RPC message as one SSE event.
pub fn event(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    out
}

/// 128 random bits, in hex: a session id no other local process can guess.
fn fresh_id() -> String {
    seneschal_access::text::hex(&seneschal_access::text::random::<16>())
}

/// A session's standalone streams: each message goes on exactly one of them (the newest
/// still open), never broadcast.
#[derive(Default)]
pub struct Streams {
    open: Mutex<Vec<(u64, mpsc::Sender<Vec<u8>>)>>,
    next: AtomicU64,
}

impl Sink for Streams {
    fn send(&self, message: &[u8]) -> bool {
        let mut open = self.open.lock().expect("not poisoned");
        while let Some((_, tx)) = open.last() {
            if tx.send(message.to_vec()).is_ok() {
                return true;
            }
            open.pop();
        }
        false
    }
}

/// One Streamable HTTP session.
pub struct HttpSession {
    /// The connection state, copied out for each request and merged back after it.
    state: Mutex<Session>,
    /// Where the client's responses to our requests, and its cancellations, arrive.
    pub pending: Arc<Pending>,
    /// The standalone (GET) streams.
    pub streams: Arc<Streams>,
    last_used: Mutex<Instant>,
    in_flight: AtomicUsize,
    /// Whether a request after `initialize` named the session: a session minted and never
    /// used again is the first to make room.
    used: std::sync::atomic::AtomicBool,
}

/// Marks a session busy while a request of it runs.
pub struct Busy(Arc<HttpSession>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.0.touch();
    }
}

impl HttpSession {
    fn touch(&self) {
        *self.last_used.lock().expect("not poisoned") = Instant::now();
    }

    /// The state a request starts from, and the mark that the session is busy until the
    /// returned guard drops.
    pub fn begin(self: &Arc<Self>) -> (Session, Busy) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.used.store(true, Ordering::Release);
        self.touch();
        let state = self.state.lock().expect("not poisoned").clone();
        (state, Busy(Arc::clone(self)))
    }

    /// Keeps what a request changed in the state it started from (`before`); a field the
    /// request left alone keeps whatever another request of the session set meanwhile.
    pub fn merge(&self, before: &Session, after: Session) {
        let mut state = self.state.lock().expect("not poisoned");
        if after.legacy_version != before.legacy_version {
            state.legacy_version = after.legacy_version;
        }
        if after.client_capabilities != before.client_capabilities {
            state.client_capabilities = after.client_capabilities;
        }
        if after.log_level != before.log_level {
            state.log_level = after.log_level;
        }
        if after.client_info != before.client_info {
            state.client_info = after.client_info;
        }
    }

    /// Opens a standalone stream: its receiving end, and a guard that closes it.
    pub fn open_stream(self: &Arc<Self>) -> Option<(mpsc::Receiver<Vec<u8>>, StreamGuard)> {
        let mut open = self.streams.open.lock().expect("not poisoned");
        if open.len() >= MAX_STREAMS {
            return None;
        }
        let (tx, rx) = mpsc::channel();
        let id = self.streams.next.fetch_add(1, Ordering::Relaxed);
        open.push((id, tx));
        drop(open);
        let live = Arc::clone(&self.state.lock().expect("not poisoned").live);
        live.listen();
        self.touch();
        Some((
            rx,
            StreamGuard {
                session: Arc::clone(self),
                id,
            },
        ))
    }

    fn streams_open(&self) -> usize {
        self.streams.open.lock().expect("not poisoned").len()
    }

    /// Ends every stream of the session (their producers see the channel close).
    fn end(&self) {
        self.streams.open.lock().expect("not poisoned").clear();
    }
}

/// Closes a standalone stream when its producer ends.
pub struct StreamGuard {
    session: Arc<HttpSession>,
    id: u64,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.session
            .streams
            .open
            .lock()
            .expect("not poisoned")
            .retain(|(id, _)| *id != self.id);
        let live = Arc::clone(&self.session.state.lock().expect("not poisoned").live);
        live.unlisten();
        self.session.touch();
    }
}

/// The sessions of one server.
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    cap: usize,
    idle: Duration,
    /// Streams open now (GET streams and streamed calls), and how many may be: each holds a
    /// connection that is never evicted, so they may fill only part of the server's slots.
    streams: Arc<AtomicUsize>,
    stream_cap: usize,
    /// The feed that tells the sessions' streams of changed resources.
    pub feed: Arc<Feed>,
}

/// One open stream's place in the server's budget, given back when dropped.
pub struct Budget(Arc<AtomicUsize>);

impl Drop for Budget {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why no session was minted.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

impl Sessions {
    /// An empty table holding at most `cap` sessions, each expiring after `idle` unused, and
    /// at most `stream_cap` streams open at once.
    pub fn new(cap: usize, idle: Duration, stream_cap: usize) -> Sessions {
        Sessions {
            map: Mutex::new(HashMap::new()),
            cap,
            idle,
            streams: Arc::new(AtomicUsize::new(0)),
            stream_cap,
            feed: Arc::new(Feed::default()),
        }
    }

    /// A place for one more stream, held until the returned guard drops; `None` when the
    /// server holds as many as it may.
    pub fn stream_budget(&self) -> Option<Budget> {
        self.streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.stream_cap).then_some(n + 1)
            })
            .ok()?;
        Some(Budget(Arc::clone(&self.streams)))
    }

    /// The live session `id`.
    pub fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let mut map = self.map.lock().expect("not poisoned");
        self.expire(&mut map);
        map.get(id).cloned()
    }

    /// Mints a session holding `state`; its id. When the table is full, a session with no
    /// stream open and no call in flight is ended to make room: one never used after its
    /// `initialize` first (a flood of `initialize` evicts its own kind), else the one unused
    /// the longest.
    pub fn mint(&self, state: Session) -> Result<String, Full> {
        let mut map = self.map.lock().expect("not poisoned");
        self.expire(&mut map);
        if map.len() >= self.cap {
            let victim = map
                .iter()
                .filter(|(_, s)| s.streams_open() == 0 && s.in_flight.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, s)| {
                    (
                        s.used.load(Ordering::Acquire),
                        *s.last_used.lock().expect("not poisoned"),
                    )
                })
                .map(|(id, _)| id.clone())
                .ok_or(Full)?;
            if let Some(s) = map.remove(&victim) {
                s.end();
            }
        }
        let id = fresh_id();
        let session = Arc::new(HttpSession {
            streams: Arc::new(Streams::default()),
            pending: Arc::new(Pending::default()),
            last_used: Mutex::new(Instant::now()),
            in_flight: AtomicUsize::new(0),
            used: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(state),
        });
        {
            let state = session.state.lock().expect("not poisoned");
            state.live.set_sink(session.streams.clone());
            self.feed.register(&state.live);
        }
        map.insert(id.clone(), session);
        Ok(id)
    }

    /// Ends the session `id`; false when there is none.
    pub fn end(&self, id: &str) -> bool {
        let removed = self.map.lock().expect("not poisoned").remove(id);
        match removed {
            Some(s) => {
                s.end();
                true
            }
            None => false,
        }
    }

    /// Drops the sessions unused for longer than the idle timeout (none with a stream open
    /// or a call in flight).
    fn expire(&self, map: &mut HashMap<String, Arc<HttpSession>>) {
        let now = Instant::now();
        map.retain(|_, s| {
            let keep = s.streams_open() > 0
                || s.in_flight.load(Ordering::Acquire) > 0
                || now.duration_since(*s.last_used.lock().expect("not poisoned")) < self.idle;
            if !keep {
                s.end();
            }
            keep
        });
    }
}

/// The producer of a standalone stream: each message as an event, a comment every
/// [`KEEPALIVE`] while none comes, until the session ends or the client goes away.
pub fn pump(rx: mpsc::Receiver<Vec<u8>>, guard: StreamGuard, out: &mut dyn Write) {
    loop {
        let bytes = match rx.recv_timeout(KEEPALIVE) {
            Ok(message) => event(&message),
            Err(mpsc::RecvTimeoutError::Timeout) => b": keepalive\n\n".to_vec(),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if out.write_all(&bytes).is_err() {
            break;
        }
    }
    drop(guard);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = fresh_id();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, fresh_id());
    }

    #[test]
    fn a_full_table_evicts_the_session_unused_longest_and_spares_a_streaming_one() {
        let t = Sessions::new(2, IDLE, 8);
        let first = t.mint(Session::default()).unwrap();
        let second = t.mint(Session::default()).unwrap();
        // The first is the oldest but holds a stream: the second goes.
        let s1 = t.get(&first).unwrap();
        let (_rx, guard) = s1.open_stream().unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let third = t.mint(Session::default()).unwrap();
        assert!(t.get(&first).is_some());
        assert!(t.get(&second).is_none());
        assert!(t.get(&third).is_some());
        // Every session busy: refused.
        let s3 = t.get(&third).unwrap();
        let (_state, busy) = s3.begin();
        assert_eq!(t.mint(Session::default()), Err(Full));
        drop((busy, guard));
        assert!(t.mint(Session::default()).is_ok());
    }

    #[test]
    fn idle_sessions_expire_and_ended_ones_close_their_streams() {
        let t = Sessions::new(8, Duration::from_millis(1), 8);
        let id = t.mint(Session::default()).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(t.get(&id).is_none());

        let t = Sessions::new(8, IDLE, 8);
        let id = t.mint(Session::default()).unwrap();
        let s = t.get(&id).unwrap();
        let (rx, _guard) = s.open_stream().unwrap();
        assert!(s.streams.send(b"{}"));
        assert_eq!(rx.recv().unwrap(), b"{}");
        assert!(t.end(&id));
        assert!(!t.end(&id));
        assert!(rx.recv().is_err(), "the stream ends with its session");
        assert!(!s.streams.send(b"{}"));
    }

    #[test]
    fn the_server_s_streams_are_budgeted() {
        let t = Sessions::new(8, IDLE, 2);
        let a = t.stream_budget().unwrap();
        let _b = t.stream_budget().unwrap();
        assert!(t.stream_budget().is_none());
        drop(a);
        assert!(t.stream_budget().is_some());
    }

    #[test]
    fn streams_are_capped_per_session() {
        let t = Sessions::new(8, IDLE, 8);
        let s = t.get(&t.mint(Session::default()).unwrap()).unwrap();
        let held: Vec<_> = (0..MAX_STREAMS).map(|_| s.open_stream().unwrap()).collect();
        assert!(s.open_stream().is_none());
        drop(held);
        assert!(s.open_stream().is_some());
    }
}
