//! What a call in flight can do with whoever made it: be confirmed before it runs, ask for
//! input, report progress and log lines, and notice that it was cancelled.
//!
//! Each transport implements [`Peer`] for the calls it carries (MCP over stdio and over
//! Streamable HTTP in each era, the HTTP API, the command line) and enters a [`Scope`] around
//! [`crate::execute::execute_index`]; the executor and the handlers reach the peer of the call
//! on their thread through the free functions here, never through a transport. A call made
//! without a scope has [`NoPeer`]: it cannot ask anyone, so whatever needs an answer falls
//! to the process's approval policy — the safe side.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;

/// What asking the client produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The client's answer: the `result` of its response to the request.
    Answered(Value),
    /// The request travels with the call's answer (an MCP 2026-07-28 input-required result):
    /// the call must stop now, and it is made again carrying the answer.
    Deferred,
    /// The client cannot be asked (it declared no such capability, or the transport has no
    /// way back to it); the reason, for an error message.
    Unavailable(String),
    /// The client answered with an error, or did not answer in time; the reason.
    Failed(String),
}

/// The MCP client capability a server-to-client request needs.
pub fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The other end of one call.
pub trait Peer: Send + Sync {
    /// Sends the server-to-client request `method` with `params` (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`) and waits for its answer. `key` names the
    /// request within the call: a call that runs again (2026-07-28 input-required results)
    /// finds the answer to the same key.
    fn ask(&self, key: &str, method: &str, params: Value) -> Asked {
        let _ = (key, params);
        Asked::Unavailable(format!(
            "this transport cannot send `{method}` to its client"
        ))
    }

    /// Sends a notification about the call (`notifications/progress`,
    /// `notifications/message`); dropped when nobody listens.
    fn notify(&self, method: &str, params: Value) {
        let _ = (method, params);
    }

    /// Whether the call was cancelled (`notifications/cancelled`, `tasks/cancel`, a closed
    /// connection): long work checks it between steps and stops.
    fn cancelled(&self) -> bool {
        false
    }

    /// Whether the client declared the capability `name` (`elicitation`, `sampling`, `roots`).
    fn offers(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// The progress token the caller attached to the call, if any.
    fn progress_token(&self) -> Option<Value> {
        None
    }

    /// Whether the capability `id` was approved earlier in this session (MCP connection or
    /// HTTP session), so that a `session`-level approval is asked once.
    fn approved_before(&self, id: &str) -> bool {
        let _ = id;
        false
    }

    /// Remembers for the rest of the session that the capability `id` was approved.
    fn remember_approval(&self, id: &str) {
        let _ = id;
    }

    /// The least severe log level the client wants to receive (`logging/setLevel`), if it
    /// asked for log messages at all.
    fn log_level(&self) -> Option<LogLevel> {
        None
    }
}

/// The peer of a call nobody can be asked about.
pub struct NoPeer;

impl Peer for NoPeer {}

/// The syslog severities of MCP's `logging/setLevel` and `notifications/message`, least
/// severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Its spelling on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level of a wire spelling.
    pub fn parse(s: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Peer>>> = const { RefCell::new(None) };
}

/// Makes `peer` the peer of the calls executed on this thread until dropped.
pub struct Scope(Option<Arc<dyn Peer>>);

impl Scope {
    /// Enters a call whose other end is `peer`.
    pub fn enter(peer: Arc<dyn Peer>) -> Scope {
        Scope(CURRENT.with(|c| c.borrow_mut().replace(peer)))
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let before = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = before);
    }
}

/// The peer of the call on this thread ([`NoPeer`] outside any scope).
pub fn current() -> Arc<dyn Peer> {
    CURRENT
        .with(|c| c.borrow().clone())
        .unwrap_or_else(|| Arc::new(NoPeer))
}

/// Asks the peer of the current call (see [`Peer::ask`]).
pub fn ask(key: &str, method: &str, params: Value) -> Asked {
    current().ask(key, method, params)
}

/// Whether the current call was cancelled.
pub fn cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|p| p.cancelled()))
}

/// Reports progress of the current call, when its caller attached a progress token:
/// `progress` so far, of `total` when known, with an optional message.
pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    let Some(peer) = CURRENT.with(|c| c.borrow().clone()) else {
        return;
    };
    let Some(token) = peer.progress_token() else {
        return;
    };
    let mut params = serde_json::json!({"progressToken": token, "progress": progress});
    if let Some(t) = total {
        params["total"] = t.into();
    }
    if let Some(m) = message {
        params["message"] = m.into();
    }
    peer.notify("notifications/progress", params);
}

/// Sends a log message about the current call at `level`, when the client asked for that
/// level (`logging/setLevel`).
pub fn log(level: LogLevel, data: Value) {
    let Some(peer) = CURRENT.with(|c| c.borrow().clone()) else {
        return;
    };
    if peer.log_level().is_some_and(|min| level >= min) {
        peer.notify(
            "notifications/message",
            serde_json::json!({"level": level.as_str(), "logger": "seneschal", "data": data}),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<(String, Value)>>);

    impl Peer for Recorder {
        fn notify(&self, method: &str, params: Value) {
            self.0.lock().unwrap().push((method.into(), params));
        }
        fn progress_token(&self) -> Option<Value> {
            Some(Value::from(7))
        }
        fn log_level(&self) -> Option<LogLevel> {
            Some(LogLevel::Warning)
        }
    }

    #[test]
    fn a_scope_reaches_its_peer_and_outside_one_nobody_is_asked() {
        assert!(matches!(
            ask("k", "elicitation/create", Value::Null),
            Asked::Unavailable(_)
        ));
        let rec = Arc::new(Recorder::default());
        {
            let _scope = Scope::enter(rec.clone());
            progress(1.0, Some(2.0), None);
            log(LogLevel::Info, Value::from("dropped: below warning"));
            log(LogLevel::Error, Value::from("sent"));
        }
        progress(2.0, None, None);
        let sent = rec.0.lock().unwrap();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_eq!(sent[0].0, "notifications/progress");
        assert_eq!(sent[0].1["progressToken"], 7);
        assert_eq!(sent[1].1["level"], "error");
    }
}
