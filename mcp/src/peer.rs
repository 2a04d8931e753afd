//! The peer of a call made over MCP: what [`seneschal_core::interact`] reaches while a `tools/call`
//! (or any method that runs the executor) is served — the client's declared capabilities,
//! the request's progress token and cancellation, the session's log level and approvals,
//! and the [`Link`] back to the client.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::feature::Call;
use super::link::{Link, ANSWER_TIMEOUT};
use super::model::{Era, META_CLIENT_CAPABILITIES};
use super::mrtr::Round;
use seneschal_core::interact::{capability_of, Asked, Declared, LogLevel, Peer};

/// The `_meta` key of a 2026-07-28 request's log level: the least severe log message the
/// client wants about that request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The peer of one MCP request.
pub struct McpPeer {
    era: Era,
    link: Link,
    id: Value,
    /// Which capabilities asked with the client declared (its whole declaration is not
    /// copied for every call).
    client: Declared,
    progress_token: Option<Value>,
    log_level: Option<LogLevel>,
    approved: Arc<Mutex<HashSet<String>>>,
    round: Option<Arc<Round>>,
    vouched: bool,
    remembers: bool,
    client_info: Option<Value>,
}

/// The `name` and `version` of a client's `clientInfo` (an `initialize` parameter, or the
/// 2026-07-28 `_meta` key): what the desk shows of who asked, each bounded.
pub fn client_info(info: Option<&Value>) -> Option<Value> {
    let info = info?.as_object()?;
    let field = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .map(|s| s.chars().take(80).collect::<String>())
    };
    let name = field("name")?;
    Some(serde_json::json!({"name": name, "version": field("version")}))
}

/// The 2026-07-28 `_meta` key of a request's client information.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

impl McpPeer {
    /// The peer of the request `call` serves.
    pub fn of(call: &Call<'_>) -> McpPeer {
        let meta = call.params.get("_meta").and_then(Value::as_object);
        let client = match call.era {
            Era::Legacy => Declared::of(&call.session.client_capabilities),
            Era::Modern => meta
                .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
                .and_then(Value::as_object)
                .map(Declared::of)
                .unwrap_or_default(),
        };
        McpPeer {
            era: call.era,
            link: call.link.clone(),
            id: call.id.clone(),
            client,
            progress_token: meta.and_then(|m| m.get("progressToken")).cloned(),
            // The initialize era sets it per connection (`logging/setLevel`); 2026-07-28 per
            // request, in `_meta`.
            log_level: match call.era {
                Era::Legacy => call.session.log_level,
                Era::Modern => meta
                    .and_then(|m| m.get(META_LOG_LEVEL))
                    .and_then(Value::as_str)
                    .and_then(LogLevel::parse),
            },
            approved: Arc::clone(&call.session.approved),
            round: None,
            vouched: call.session.vouched,
            remembers: call.session.remembers,
            client_info: match call.era {
                Era::Legacy => call.session.client_info.clone(),
                Era::Modern => client_info(meta.and_then(|m| m.get(META_CLIENT_INFO))),
            },
        }
    }

    /// The same peer, asking through the input-required round `round` (the modern era's
    /// way to ask: without one, a modern request cannot ask its client anything).
    pub fn asking_through(mut self, round: Arc<Round>) -> McpPeer {
        self.round = Some(round);
        self
    }
}

impl Peer for McpPeer {
    fn vouched(&self) -> bool {
        self.vouched
    }

    fn remembers(&self) -> bool {
        self.remembers
    }

    fn remembered(&self, prefix: &str) -> Vec<String> {
        self.approved
            .lock()
            .expect("not poisoned")
            .iter()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn client_info(&self) -> Option<Value> {
        self.client_info.clone()
    }

    fn approver(&self) -> &'static str {
        match self.era {
            Era::Legacy => "elicitation",
            Era::Modern => "input",
        }
    }

    fn ask(&self, key: &str, method: &str, params: Value) -> Asked {
        // A modern request carries its answers: one given is used whatever was declared.
        let round = match self.era {
            Era::Legacy => None,
            Era::Modern => match &self.round {
                None => {
                    return Asked::Unavailable(
                        "this request cannot carry an input-required result".to_string(),
                    )
                }
                Some(round) => match round.answer(key) {
                    Some(answer) => return Asked::Answered(answer),
                    None => Some(round),
                },
            },
        };
        if let Some(cap) = capability_of(method) {
            if !self.offers(cap) {
                if let Some(round) = round {
                    round.lacks(cap);
                }
                return Asked::Unavailable(format!(
                    "the client did not declare the `{cap}` capability"
                ));
            }
        }
        match round {
            None => match self.link.request(method, params, ANSWER_TIMEOUT) {
                Ok(v) => Asked::Answered(v),
                Err(why) => Asked::Failed(why),
            },
            Some(round) => {
                round.defer(key, method, params);
                Asked::Deferred
            }
        }
    }

    fn notify(&self, method: &str, params: Value) {
        self.link.notify(method, params);
    }

    fn cancelled(&self) -> bool {
        // Asking means listening: a cancellation reaches only a request the reader serves.
        self.link.sink.listen();
        self.link.pending.is_cancelled(&self.id)
    }

    fn offers(&self, name: &str) -> bool {
        self.client.contains(name)
    }

    fn progress_token(&self) -> Option<Value> {
        self.progress_token.clone()
    }

    fn approved_before(&self, id: &str) -> bool {
        self.approved.lock().expect("not poisoned").contains(id)
    }

    fn remember_approval(&self, id: &str) {
        self.approved
            .lock()
            .expect("not poisoned")
            .insert(id.to_string());
    }

    fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }
}
