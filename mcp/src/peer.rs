//! The peer of a call made over MCP: what [`seneschal_core::interact`] reaches while a `tools/call`
//! (or any method that runs the executor) is served — the client's declared capabilities,
//! the request's progress token and cancellation, the session's log level and approvals,
//! and the [`Link`] back to the client.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::feature::Call;
use super::link::{Link, ANSWER_TIMEOUT};
use super::model::{Era, META_CLIENT_CAPABILITIES};
use super::mrtr::Round;
use seneschal_core::interact::{Answer, Asked, LogLevel, Peer, Question, Sampled, Sampling};

/// The MCP client capability a server-to-client request needs.
pub fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The client capabilities a server asks with ([`capability_of`] each request it may send).
pub const ASKED_WITH: [&str; 3] = ["elicitation", "sampling", "roots"];

/// Which of [`ASKED_WITH`] a client declared: all a peer needs of its capabilities, kept
/// without copying them (a peer is made for every call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared(u8);

impl Declared {
    /// What the client capabilities `declared` (an MCP `ClientCapabilities` object) offer.
    pub fn of(declared: &serde_json::Map<String, Value>) -> Declared {
        Declared(
            ASKED_WITH
                .iter()
                .enumerate()
                .filter(|(_, name)| declared.contains_key(**name))
                .fold(0, |bits, (i, _)| bits | 1 << i),
        )
    }

    /// Whether the client declared `name`, one of [`ASKED_WITH`] (no other name is kept).
    pub fn contains(self, name: &str) -> bool {
        ASKED_WITH
            .iter()
            .position(|n| *n == name)
            .is_some_and(|i| self.0 & 1 << i != 0)
    }
}

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
    fn approve(&self, question: &Question) -> Answer {
        approve_by_elicitation(self, question)
    }

    fn sample(&self, key: &str, request: &Sampling) -> Sampled {
        sample_by_request(self, key, request)
    }

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

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(token) = &self.progress_token {
            self.link.notify(
                "notifications/progress",
                progress_notification(token, progress, total, message),
            );
        }
    }

    fn log(&self, level: LogLevel, data: Value) {
        if let Some(params) = log_notification(self.log_level, level, data) {
            self.link.notify("notifications/message", params);
        }
    }

    fn cancelled(&self) -> bool {
        // Asking means listening: a cancellation reaches only a request the reader serves.
        self.link.sink.listen();
        self.link.pending.is_cancelled(&self.id)
    }

    fn offers(&self, name: &str) -> bool {
        self.client.contains(name)
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
}

/// The parameters of `notifications/progress` for the request whose progress token is `token`.
pub fn progress_notification(
    token: &Value,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Value {
    let mut params = json!({"progressToken": token, "progress": progress});
    if let Some(t) = total {
        params["total"] = t.into();
    }
    if let Some(m) = message {
        params["message"] = m.into();
    }
    params
}

/// The parameters of `notifications/message` for a log line at `level`, when the client asked
/// for that level or a less severe one (`min`); `None` otherwise.
pub fn log_notification(min: Option<LogLevel>, level: LogLevel, data: Value) -> Option<Value> {
    min.is_some_and(|min| level >= min)
        .then(|| json!({"level": level.as_str(), "logger": "seneschal", "data": data}))
}

/// The `elicitation/create` parameters (an MCP 2025-11-25 form request) of an approval
/// `question`: its text as the message, and the capability, level, binding and scope in
/// `_meta`. With a grant offered, the form has one optional boolean field, `grant`: checked
/// with an accept, the session's other writes are approved for that many minutes.
pub fn elicitation_of(question: &Question) -> Value {
    let mut meta = json!({
        "seneschal/approval": question.level.as_str(),
        "seneschal/capability": question.capability,
        "seneschal/binding": question.binding,
    });
    if let Some(scope) = question.scope {
        meta["seneschal/scope"] = json!(scope);
    }
    let properties = match question.grant_minutes {
        Some(minutes) => json!({"grant": {
            "type": "boolean",
            "title": format!("Also approve this session's other writes for {minutes} minutes"),
            "description": "Each is still planned, shown on the desk's feed, audited with its diff and undoable; the desk revokes the grant.",
            "default": false,
        }}),
        None => json!({}),
    };
    json!({
        "mode": "form",
        "message": question.text,
        "requestedSchema": {"type": "object", "properties": properties},
        "_meta": meta,
    })
}

/// An approval asked through `peer`'s raw MCP door: the question as an elicitation form
/// ([`elicitation_of`]), the client's result read back as an [`Answer`].
pub fn approve_by_elicitation(peer: &dyn Peer, question: &Question) -> Answer {
    match peer.ask(
        &question.key,
        "elicitation/create",
        elicitation_of(question),
    ) {
        Asked::Answered(result) => match result.get("action").and_then(Value::as_str) {
            Some("accept") => Answer::Approved {
                grant: result.pointer("/content/grant") == Some(&Value::Bool(true)),
            },
            other => Answer::Refused(other.map(str::to_string)),
        },
        Asked::Deferred => Answer::Deferred,
        Asked::Unavailable(why) => Answer::Unavailable(why),
        Asked::Failed(why) => Answer::Failed(why),
    }
}

/// A completion asked through `peer`'s raw MCP door (`sampling/createMessage`), its text
/// blocks read back (one block up to 2025-06-18, a list from 2025-11-25).
pub fn sample_by_request(peer: &dyn Peer, key: &str, request: &Sampling) -> Sampled {
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": request.text}}],
        "systemPrompt": request.system,
        "includeContext": "none",
        "maxTokens": request.max_tokens,
    });
    let answer = match peer.ask(key, "sampling/createMessage", params) {
        Asked::Answered(v) => v,
        Asked::Deferred => return Sampled::Deferred,
        Asked::Unavailable(why) => return Sampled::Unavailable(why),
        Asked::Failed(why) => return Sampled::Failed(why),
    };
    let blocks = match answer.get("content") {
        Some(Value::Array(a)) => a.clone(),
        Some(b) => vec![b.clone()],
        None => Vec::new(),
    };
    let text: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if text.is_empty() {
        return Sampled::Failed("its answer held no text".to_string());
    }
    let field = |k: &str| answer.get(k).and_then(Value::as_str).map(str::to_string);
    Sampled::Text {
        text: text.join("\n"),
        model: field("model"),
        stop_reason: field("stopReason"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seneschal_model::policy::Approval;

    #[test]
    fn declared_capabilities_are_the_ones_asked_with() {
        for method in ["elicitation/create", "sampling/createMessage", "roots/list"] {
            let cap = capability_of(method).expect("a request to the client");
            assert!(ASKED_WITH.contains(&cap), "{cap}");
            let one = json!({ cap: {} });
            let d = Declared::of(one.as_object().unwrap());
            for other in ASKED_WITH {
                assert_eq!(
                    d.contains(other),
                    other == cap,
                    "{cap} declared, {other} asked"
                );
            }
        }
        let all = json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}, "experimental": {}});
        let d = Declared::of(all.as_object().unwrap());
        assert!(ASKED_WITH.iter().all(|c| d.contains(c)));
        assert!(
            !d.contains("experimental"),
            "only the capabilities asked with are kept"
        );
        assert_eq!(Declared::of(&serde_json::Map::new()), Declared::default());
        assert!(!Declared::default().contains("elicitation"));
    }

    #[test]
    fn progress_and_log_lines_are_sent_as_the_client_asked() {
        let p = progress_notification(&json!(7), 1.0, Some(2.0), None);
        assert_eq!(
            p,
            json!({"progressToken": 7, "progress": 1.0, "total": 2.0})
        );
        let min = Some(LogLevel::Warning);
        assert_eq!(
            log_notification(min, LogLevel::Info, json!("dropped")),
            None
        );
        assert_eq!(
            log_notification(None, LogLevel::Error, json!("unasked")),
            None
        );
        let sent = log_notification(min, LogLevel::Error, json!("sent")).expect("sent");
        assert_eq!(sent["level"], "error");
    }

    /// The approval form says the question and pins its plan in `_meta`; a grant offered is
    /// its one optional field, and a client's accept with it checked takes the grant.
    #[test]
    fn an_approval_question_is_an_elicitation_form_and_its_result_an_answer() {
        let mut q = Question {
            key: "approval:x".into(),
            capability: "demo.write".into(),
            level: Approval::PerCall,
            text: "Write demo".into(),
            binding: "sha256:b".into(),
            scope: None,
            grant_minutes: None,
        };
        let sent = elicitation_of(&q);
        assert_eq!(sent["mode"], "form");
        assert_eq!(sent["message"], "Write demo");
        assert_eq!(
            sent["requestedSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(sent["_meta"]["seneschal/approval"], "per_call");
        assert_eq!(sent["_meta"]["seneschal/capability"], "demo.write");
        assert_eq!(sent["_meta"]["seneschal/binding"], "sha256:b");
        q.grant_minutes = Some(15);
        let sent = elicitation_of(&q);
        assert_eq!(
            sent["requestedSchema"]["properties"]["grant"]["type"],
            "boolean"
        );
        struct Client(Value);
        impl Peer for Client {
            fn ask(&self, _key: &str, method: &str, _params: Value) -> Asked {
                assert_eq!(method, "elicitation/create");
                Asked::Answered(self.0.clone())
            }
        }
        let accept = Client(json!({"action": "accept", "content": {"grant": true}}));
        assert_eq!(
            approve_by_elicitation(&accept, &q),
            Answer::Approved { grant: true }
        );
        let decline = Client(json!({"action": "decline"}));
        assert_eq!(
            approve_by_elicitation(&decline, &q),
            Answer::Refused(Some("decline".into()))
        );
    }
}
