//! The way back to an MCP client: notifications and server-to-client requests sent while a
//! request is served, and the client's responses routed to whoever waits for them.
//!
//! A [`Link`] is a [`Sink`] (where this request's outgoing messages go: stdout for stdio, the
//! SSE stream of the POST for Streamable HTTP) and the connection's [`Pending`] table (the
//! requests sent and not yet answered, and the requests the client cancelled). A transport's
//! reader hands every message from the client to [`Pending::take`] before dispatching it:
//! responses and `notifications/cancelled` are consumed there, by the reader, so that they
//! reach a call that is still running.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// How long a server-to-client request waits for its response.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(seneschal_access::limits::MCP_ANSWER_SECS);

/// A request or notification the server sends its client, its params redacted: a sampling
/// request can quote a repository file and a log line or a progress message can name one,
/// and no secret leaves the process. Every message the server starts passes here, however it
/// travels: written on a [`Link`] (`outgoing`), carried in a 2026-07-28 input-required
/// result (`mrtr::Round::defer`), or held by a task for `tasks/result` (`tasks`).
pub fn to_client(method: &str, params: Value) -> Value {
    json!({"method": method, "params": redacted(params)})
}

/// `params` of a message to the client, redacted: the one redaction every message the server
/// starts passes ([`to_client`], [`outgoing`]).
fn redacted(mut params: Value) -> Value {
    seneschal_access::redact::redact_value(&mut params);
    params
}

/// One message the server starts, serialized as a JSON-RPC message, its params
/// [`redacted`].
pub(super) fn outgoing(id: Option<&Value>, method: &str, params: Value) -> Vec<u8> {
    let params = redacted(params);
    let message = match id {
        Some(id) => json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        None => json!({"jsonrpc": "2.0", "method": method, "params": params}),
    };
    serde_json::to_vec(&message).expect("values serialize")
}

/// Where a request's outgoing messages go.
pub trait Sink: Send + Sync {
    /// Sends one JSON-RPC message (compact JSON, no newline); false when nobody can receive
    /// it any more (the stream or the pipe is closed) or the sink cannot carry it.
    fn send(&self, message: &[u8]) -> bool;

    /// The request needs the client's messages while it runs (the answer to a request it
    /// sends, a cancellation): a transport that reads its client only between requests
    /// starts reading now.
    fn listen(&self) {}
}

/// A sink that carries nothing: the request cannot reach its client until it answers.
pub struct Closed;

impl Sink for Closed {
    fn send(&self, _: &[u8]) -> bool {
        false
    }
}

/// What one server-to-client request got back.
type Response = Result<Value, String>;

/// The requests of one connection (or HTTP session) that wait for the client, and the ids of
/// the client's requests it cancelled.
///
/// A cancellation is forgotten when its request is answered ([`Pending::finished`]) or when a
/// new request reuses its id ([`Pending::begin`]); one that arrives after its answer stays
/// until then, and the table keeps at most [`MAX_CANCELLED`] of them. While nothing is
/// cancelled, every question about a request costs an atomic load.
#[derive(Default)]
pub struct Pending {
    waiters: Mutex<HashMap<String, mpsc::Sender<Response>>>,
    next: AtomicU64,
    cancelled: Mutex<HashSet<String>>,
    /// How many ids `cancelled` holds.
    n_cancelled: AtomicUsize,
    closed: AtomicBool,
}

/// The most cancellations remembered at once; a client that cancels more requests than it
/// has in flight forgets its older cancellations.
pub const MAX_CANCELLED: usize = seneschal_access::limits::MCP_CANCELLED;

/// The key of a JSON-RPC id in the tables.
fn key(id: &Value) -> String {
    id.to_string()
}

impl Pending {
    /// Takes a message from the client that is not for the dispatcher: a response to one of
    /// our requests, or `notifications/cancelled`. True when it was consumed here.
    pub fn take(&self, message: &Value) -> bool {
        let Some(obj) = message.as_object() else {
            return false;
        };
        if obj.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            if let Some(id) = obj.get("params").and_then(|p| p.get("requestId")) {
                self.cancel(id);
            }
            return true;
        }
        if obj.contains_key("method") || !(obj.contains_key("result") || obj.contains_key("error"))
        {
            return false;
        }
        let Some(id) = obj.get("id") else {
            return false;
        };
        let waiter = self.waiters.lock().expect("not poisoned").remove(&key(id));
        if let Some(w) = waiter {
            let response = match (obj.get("result"), obj.get("error")) {
                (Some(r), _) => Ok(r.clone()),
                (None, Some(e)) => Err(format!(
                    "the client answered with an error: {}",
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)")
                )),
                (None, None) => unreachable!("checked above"),
            };
            let _ = w.send(response);
        }
        true
    }

    /// Answers our request `id` as the client would answer it with an error saying `why` (the
    /// stream that carried it closed, say): the call waiting for it stops waiting.
    pub fn fail(&self, id: &Value, why: &str) {
        let waiter = self.waiters.lock().expect("not poisoned").remove(&key(id));
        if let Some(w) = waiter {
            let _ = w.send(Err(format!("the client answered with an error: {why}")));
        }
    }

    /// Marks the client's request `id` cancelled, as its `notifications/cancelled` does (the
    /// client closed the request, say).
    pub fn cancel(&self, id: &Value) {
        let mut cancelled = self.cancelled.lock().expect("not poisoned");
        if cancelled.len() >= MAX_CANCELLED {
            cancelled.clear();
        }
        cancelled.insert(key(id));
        self.n_cancelled.store(cancelled.len(), Ordering::SeqCst);
    }

    /// Whether the client cancelled its request `id`.
    pub fn is_cancelled(&self, id: &Value) -> bool {
        self.n_cancelled.load(Ordering::SeqCst) > 0
            && self
                .cancelled
                .lock()
                .expect("not poisoned")
                .contains(&key(id))
    }

    /// Forgets the cancellation of `id`, if any.
    fn forget(&self, id: &Value) {
        if self.n_cancelled.load(Ordering::SeqCst) > 0 {
            let mut cancelled = self.cancelled.lock().expect("not poisoned");
            cancelled.remove(&key(id));
            self.n_cancelled.store(cancelled.len(), Ordering::SeqCst);
        }
    }

    /// Notes a new request `id` as it is read, before it is served: a cancellation left from
    /// an earlier request with the same id no longer applies.
    pub fn begin(&self, id: &Value) {
        self.forget(id);
    }

    /// Forgets a request that has been answered (or dropped), and its cancellation.
    pub fn finished(&self, id: &Value) {
        self.forget(id);
    }

    /// Whether a request of ours waits for the client's response.
    pub fn waiting(&self) -> bool {
        !self.waiters.lock().expect("not poisoned").is_empty()
    }

    /// The client can answer no more (its input ended): every waiting request fails now, and
    /// every later one at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.waiters.lock().expect("not poisoned").clear();
    }
}

/// The way back to the client of one request.
#[derive(Clone)]
pub struct Link {
    /// Where this request's messages go.
    pub sink: Arc<dyn Sink>,
    /// The connection's table of waiting requests.
    pub pending: Arc<Pending>,
}

impl Link {
    /// A link that carries nothing.
    pub fn closed() -> Link {
        Link {
            sink: Arc::new(Closed),
            pending: Arc::new(Pending::default()),
        }
    }

    /// Sends a notification; false when it could not be sent.
    pub fn notify(&self, method: &str, params: Value) -> bool {
        self.sink.send(&outgoing(None, method, params))
    }

    /// Sends the request `method` and waits up to `timeout` for its response: the `result`,
    /// or why there is none.
    pub fn request(&self, method: &str, params: Value, timeout: Duration) -> Response {
        let closed = || {
            Err(format!(
                "`{method}` got no answer: the client closed the connection"
            ))
        };
        let n = self.pending.next.fetch_add(1, Ordering::Relaxed);
        let id = Value::String(format!("seneschal-{n}"));
        let (tx, rx) = mpsc::channel();
        self.pending
            .waiters
            .lock()
            .expect("not poisoned")
            .insert(key(&id), tx);
        // Checked after the waiter is in the table: a close either saw it (and dropped it) or
        // happened before this load.
        if self.pending.closed.load(Ordering::SeqCst) {
            self.pending
                .waiters
                .lock()
                .expect("not poisoned")
                .remove(&key(&id));
            return closed();
        }
        self.sink.listen();
        if !self.sink.send(&outgoing(Some(&id), method, params)) {
            self.pending
                .waiters
                .lock()
                .expect("not poisoned")
                .remove(&key(&id));
            return Err(format!(
                "`{method}` cannot reach the client on this transport"
            ));
        }
        let got = rx.recv_timeout(timeout);
        self.pending
            .waiters
            .lock()
            .expect("not poisoned")
            .remove(&key(&id));
        match got {
            Ok(response) => response,
            Err(mpsc::RecvTimeoutError::Disconnected) => closed(),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "the client did not answer `{method}` within {} s",
                timeout.as_secs()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_server_sends_its_client_is_redacted() {
        let key = "AKIA".to_string() + "ABCDEFGHIJKLMNOP";
        let params = json!({"messages": [{"content": {"type": "text", "text": format!("aws_key = {key}")}}]});
        let sent = String::from_utf8(outgoing(
            Some(&json!("s-1")),
            "sampling/createMessage",
            params,
        ))
        .unwrap();
        assert!(!sent.contains(&key), "{sent}");
        let sent = String::from_utf8(outgoing(
            None,
            "notifications/message",
            json!({"data": key}),
        ))
        .unwrap();
        assert!(!sent.contains(&key), "{sent}");
    }

    /// A sink that answers every request it carries through the pending table.
    struct Echo(Arc<Pending>, Mutex<Vec<Value>>);

    impl Sink for Echo {
        fn send(&self, message: &[u8]) -> bool {
            let m: Value = serde_json::from_slice(message).unwrap();
            self.1.lock().unwrap().push(m.clone());
            if let Some(id) = m.get("id") {
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept"}});
                let pending = Arc::clone(&self.0);
                std::thread::spawn(move || assert!(pending.take(&answer)));
            }
            true
        }
    }

    #[test]
    fn a_request_gets_its_response_and_a_closed_sink_says_why() {
        let pending = Arc::new(Pending::default());
        let echo = Arc::new(Echo(Arc::clone(&pending), Mutex::default()));
        let link = Link {
            sink: echo.clone(),
            pending: Arc::clone(&pending),
        };
        let r = link.request("elicitation/create", json!({}), Duration::from_secs(60));
        assert_eq!(r, Ok(json!({"action": "accept"})));
        assert!(link.notify("notifications/progress", json!({"progress": 1})));
        assert_eq!(echo.1.lock().unwrap().len(), 2);
        let err = Link::closed()
            .request("sampling/createMessage", json!({}), Duration::from_secs(60))
            .unwrap_err();
        assert!(err.contains("cannot reach"), "{err}");
    }

    #[test]
    fn cancellations_and_stray_responses_are_taken_and_requests_are_not() {
        let p = Pending::default();
        let cancel_4 = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}});
        p.begin(&json!(4));
        assert!(!p.is_cancelled(&json!(4)));
        assert!(p.take(&cancel_4));
        assert!(p.is_cancelled(&json!(4)));
        assert!(!p.is_cancelled(&json!("4")));
        p.finished(&json!(4));
        assert!(!p.is_cancelled(&json!(4)));
        assert!(p.take(&json!({"jsonrpc": "2.0", "id": "x", "result": {}})));
        assert!(!p.take(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})));
        // A cancellation after the answer is not kept for a later request with the same id.
        assert!(p.take(&cancel_4));
        p.begin(&json!(4));
        assert!(!p.is_cancelled(&json!(4)));
        // Cancellations of requests never seen are bounded.
        for i in 0..MAX_CANCELLED + 5 {
            p.take(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}}));
        }
        assert!(p.cancelled.lock().unwrap().len() <= MAX_CANCELLED);
    }

    #[test]
    fn a_closed_table_fails_waiting_and_later_requests() {
        struct Quiet;
        impl Sink for Quiet {
            fn send(&self, _: &[u8]) -> bool {
                true
            }
        }
        let pending = Arc::new(Pending::default());
        let link = Link {
            sink: Arc::new(Quiet),
            pending: Arc::clone(&pending),
        };
        let waiting = {
            let link = link.clone();
            std::thread::spawn(move || link.request("roots/list", json!({}), ANSWER_TIMEOUT))
        };
        while !pending.waiting() {
            std::thread::yield_now();
        }
        pending.close();
        let err = waiting.join().unwrap().unwrap_err();
        assert!(err.contains("closed the connection"), "{err}");
        let err = link
            .request("roots/list", json!({}), ANSWER_TIMEOUT)
            .unwrap_err();
        assert!(err.contains("closed the connection"), "{err}");
    }
}
