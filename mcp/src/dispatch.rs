//! The dual-era JSON-RPC core: one message in, at most one answer out, whatever the transport.
//!
//! A request is sorted in this order: JSON → JSON-RPC shape (-32600) → the METHODS tables
//! (-32601) → its era (modern when its `_meta` carries the `io.modelcontextprotocol/` keys,
//! legacy otherwise) → the era's own checks (-32022, -32602) → the method, found in
//! [`FEATURES`]. Nothing here knows a method's params or a capability's behaviour: each
//! feature (its methods, its notifications, the capability it announces) is a module of
//! [`super::methods`], and tools and resources go through [`seneschal_core::execute`].

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::{json, Map, Value};

pub use super::feature::{
    modern_result, supported_versions, Call, Capability, Feature, Method, Notification,
};
use super::link::Link;
use super::methods::{completion, lifecycle, logging, prompts, resources, tasks, tools};
use super::model::{
    Body, Era, RpcError, Session, INTERNAL_ERROR, INVALID_REQUEST, LEGACY_METHODS,
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, METHOD_NOT_FOUND, MODERN_METHODS, NOT_SERVED,
    PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
};
use seneschal_access::error::ErrorCode;
use seneschal_core::context::Context;
use seneschal_model::versions::{MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS};

/// Every feature served, one per module of [`super::methods`]: a new feature (prompts,
/// completion, subscriptions, logging) is a module with its `FEATURE` and one line here, and
/// its method names in the METHODS tables of [`seneschal_model::versions`].
pub const FEATURES: &[&Feature] = &[
    &lifecycle::FEATURE,
    &tools::FEATURE,
    &resources::FEATURE,
    &prompts::FEATURE,
    &completion::FEATURE,
    &tasks::FEATURE,
    &logging::FEATURE,
];

/// The server's `capabilities` as one era announces them ([`super::feature::capabilities_in`]
/// over [`FEATURES`]).
pub fn capabilities_in(era: Era) -> Map<String, Value> {
    super::feature::capabilities_in(FEATURES, era)
}

/// The request method of this name, if one is served.
fn find(name: &str) -> Option<&'static Method> {
    FEATURES
        .iter()
        .flat_map(|f| f.methods)
        .find(|m| m.name == name)
}

/// The server's `capabilities`: each feature's member, as the initialize era, which serves
/// the most, announces it (the server card's).
pub fn capabilities() -> Map<String, Value> {
    FEATURES
        .iter()
        .filter_map(|f| f.capability.as_ref())
        .map(|c| (c.name.to_string(), (c.value)(Era::Legacy)))
        .collect()
}

/// The answer to one message.
#[derive(Debug)]
pub struct Answer {
    /// The whole JSON-RPC response, compact, without a trailing newline.
    pub bytes: Vec<u8>,
    /// The JSON-RPC error code, when the answer is an error.
    pub error: Option<i64>,
    /// The era the request was served in, when it got that far.
    pub era: Option<Era>,
}

fn response(id: &Value, body: Result<Body, RpcError>, era: Option<Era>) -> Answer {
    // An owned body with room to spare (a tool's result, built with it) becomes the answer in
    // place: the envelope goes in front of it, and nothing is allocated or copied twice.
    let body = match body {
        Ok(Body::Owned(raw)) => match in_place(id, raw) {
            Ok(bytes) => {
                return Answer {
                    bytes,
                    error: None,
                    era,
                }
            }
            Err(raw) => Ok(Body::Owned(raw)),
        },
        other => other,
    };
    // Room for the whole answer and the newline a transport may add, so that a large served
    // body (a `tools/list` is tens of KiB) is copied once, never moved by a reallocation.
    let raw_len = match &body {
        Ok(Body::Raw(raw)) => raw.len(),
        Ok(Body::Owned(raw)) => raw.len(),
        _ => 0,
    };
    let mut bytes = Vec::with_capacity(raw_len + 256);
    bytes.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut bytes, id).expect("ids serialize");
    let error = match body {
        Ok(body) => {
            bytes.extend_from_slice(br#","result":"#);
            match body {
                Body::Raw(raw) => bytes.extend_from_slice(raw.as_bytes()),
                Body::Owned(raw) => bytes.extend_from_slice(raw.as_bytes()),
                Body::Value(v) => serde_json::to_writer(&mut bytes, &v).expect("values serialize"),
            }
            None
        }
        Err(e) => {
            bytes.extend_from_slice(br#","error":"#);
            serde_json::to_writer(&mut bytes, &e.to_json()).expect("values serialize");
            Some(e.code)
        }
    };
    bytes.push(b'}');
    Answer { bytes, error, era }
}

/// The answer around the result `raw`, in `raw`'s own buffer when it has room for the
/// envelope (an id of any length fits beside a result built with spare room); `raw` back
/// otherwise.
fn in_place(id: &Value, raw: String) -> Result<Vec<u8>, String> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const RESULT: &[u8] = br#","result":"#;
    // The envelope, on the stack; an id too long for it takes the copying way.
    let mut buf = [0u8; 128];
    let mut w: &mut [u8] = &mut buf;
    let written = w.write_all(HEAD).is_ok()
        && serde_json::to_writer(&mut w, id).is_ok()
        && w.write_all(RESULT).is_ok();
    let free = w.len();
    let head = &buf[..buf.len() - free];
    // The envelope, its closing brace and the newline a transport may add.
    if !written || raw.capacity() - raw.len() < head.len() + 2 {
        return Err(raw);
    }
    let mut bytes = raw.into_bytes();
    let len = bytes.len();
    bytes.resize(len + head.len(), 0);
    bytes.copy_within(..len, head.len());
    bytes[..head.len()].copy_from_slice(head);
    bytes.push(b'}');
    Ok(bytes)
}

/// An error answer to a message whose id could not be read.
pub fn error_answer(code: i64, message: impl Into<String>) -> Answer {
    response(&Value::Null, Err(RpcError::new(code, message)), None)
}

/// The error answer of a header check (Streamable HTTP), echoing the request id.
pub fn error_for(id: &Value, code: i64, message: impl Into<String>) -> Answer {
    response(id, Err(RpcError::new(code, message)), Some(Era::Modern))
}

/// A well-formed request read without building the whole message as a [`Value`]: only its
/// params are one (a request's `jsonrpc`, `method` and `id` are read in place).
#[derive(Debug)]
pub struct Request {
    /// Its id, a string or a number.
    pub id: Value,
    /// Its method.
    pub method: String,
    /// Its params: an object, or `None` when it has none (or `null`).
    pub params: Option<Value>,
}

/// The members of a message [`Request::read`] looks at, the others skipped unread.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "is_there")]
    result: bool,
    #[serde(default, deserialize_with = "is_there")]
    error: bool,
}

/// A member that is there, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Whether a member is there, its value skipped.
fn is_there<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| true)
}

impl Request {
    /// The request `text` holds, when it is one that [`handle_value`] would serve as such: a
    /// JSON object with `"jsonrpc": "2.0"`, a string or number `id`, a string `method` other
    /// than `notifications/cancelled` (which the link's [`Pending`](super::link::Pending)
    /// takes), no `result` nor `error`, and params that are an object or none. Anything else
    /// (a duplicate member included) is `None`, for the reader to parse whole and hand to
    /// [`handle_value`], which answers it as before.
    pub fn read(text: &[u8]) -> Option<Request> {
        let e: Envelope<'_> = serde_json::from_slice(text).ok()?;
        let id = e.id.filter(|id| id.is_string() || id.is_number())?;
        let method = e.method?;
        let well_formed = e.jsonrpc.as_deref() == Some("2.0")
            && method != "notifications/cancelled"
            && !e.result
            && !e.error
            && e.params
                .as_ref()
                .is_none_or(|p| p.is_object() || p.is_null());
        well_formed.then(|| Request {
            id,
            method: method.into_owned(),
            params: e.params.filter(Value::is_object),
        })
    }
}

/// Answers a request read by [`Request::read`], exactly as [`handle_value`] answers the same
/// message parsed whole.
pub fn handle_request(
    ctx: &Context,
    session: &mut Session,
    link: &Link,
    request: Request,
) -> Option<Answer> {
    let no_params = Value::Object(Map::new());
    let params = request.params.as_ref().unwrap_or(&no_params);
    serve(ctx, session, link, request.id, &request.method, params)
}

/// Answers one line of text (stdio) or one body (HTTP). `None` for notifications and for
/// responses sent by the client.
pub fn handle_bytes(
    ctx: &Context,
    session: &mut Session,
    link: &Link,
    text: &[u8],
) -> Option<Answer> {
    match serde_json::from_slice::<Value>(text) {
        Ok(v) => handle_value(ctx, session, link, v),
        Err(e) => Some(error_answer(PARSE_ERROR, format!("parse error: {e}"))),
    }
}

/// Answers one parsed message.
pub fn handle_value(
    ctx: &Context,
    session: &mut Session,
    link: &Link,
    message: Value,
) -> Option<Answer> {
    let Value::Object(obj) = message else {
        let what = if message.is_array() {
            "a JSON-RPC batch (arrays are not served since MCP 2025-06-18)"
        } else {
            "not a JSON-RPC object"
        };
        return Some(error_answer(
            INVALID_REQUEST,
            format!("invalid request: {what}"),
        ));
    };
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        Some(_) => {
            return Some(error_answer(
                INVALID_REQUEST,
                "invalid request: `id` must be a string or a number",
            ))
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    let invalid = |why: &str| {
        Some(response(
            &reply_id,
            Err(RpcError::new(
                INVALID_REQUEST,
                format!("invalid request: {why}"),
            )),
            None,
        ))
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.as_str(),
        Some(_) => return invalid("`method` must be a string"),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            // A response from the client, to a request of ours that may still wait for it.
            link.pending.take(&Value::Object(obj));
            return None;
        }
        None => return invalid("`method` is missing"),
    };
    // The `params` of a request that has none.
    let no_params = Value::Object(Map::new());
    let params = match obj.get("params") {
        None | Some(Value::Null) => &no_params,
        Some(p @ Value::Object(_)) => p,
        Some(_) => {
            return id.map(|id| {
                response(
                    &id,
                    Err(RpcError::invalid_params(
                        "invalid params: `params` must be an object",
                    )),
                    None,
                )
            })
        }
    };
    let Some(id) = id else {
        if method == "notifications/cancelled" {
            link.pending.take(&Value::Object(obj.clone()));
        }
        // Notifications are never answered; an unknown one is ignored.
        if let Some(n) = FEATURES
            .iter()
            .flat_map(|f| f.notifications)
            .find(|n| n.name == method)
        {
            (n.note)(ctx, session);
        }
        return None;
    };
    serve(ctx, session, link, id, method, params)
}

/// Serves the request `id` of `method` with `params` (an object) and makes its answer; none
/// when the client cancelled it.
fn serve(
    ctx: &Context,
    session: &mut Session,
    link: &Link,
    id: Value,
    method: &str,
    params: &Value,
) -> Option<Answer> {
    // A request the client cancelled is not served, or not answered when it was cancelled
    // while it ran (the receiver of a cancellation should not respond); `initialize` cannot
    // be cancelled.
    let cancelled = |id: &Value| method != "initialize" && link.pending.is_cancelled(id);
    if cancelled(&id) {
        link.pending.finished(&id);
        return None;
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        request(ctx, session, link, &id, method, params)
    }));
    let was_cancelled = cancelled(&id);
    link.pending.finished(&id);
    if was_cancelled {
        return None;
    }
    let (era, body) = match outcome {
        Ok((era, body)) => (era, body),
        Err(panic) => {
            let why = seneschal_access::text::panic_message(panic.as_ref(), "a panic");
            eprintln!("seneschal mcp: `{method}` panicked: {why}");
            (
                None,
                Err(RpcError::new(
                    INTERNAL_ERROR,
                    format!("internal error: `{method}` failed: {why}"),
                )
                .with_data(json!({"seneschal/error": {"code": ErrorCode::Internal.as_str()}}))),
            )
        }
    };
    Some(response(&id, body, era))
}

/// The modern `_meta` of a request, when it carries either reserved key.
fn modern_meta(params: &Map<String, Value>) -> Option<&Map<String, Value>> {
    params.get("_meta").and_then(Value::as_object).filter(|m| {
        m.contains_key(META_PROTOCOL_VERSION) || m.contains_key(META_CLIENT_CAPABILITIES)
    })
}

/// The era of a request and the error that stops it before its method runs, if any.
pub fn classify(
    session: &Session,
    method: &str,
    params: &Map<String, Value>,
) -> (Option<Era>, Result<(), RpcError>) {
    // The METHODS tables are consulted before anything else about the request.
    if !LEGACY_METHODS.contains(&method) && !MODERN_METHODS.contains(&method) {
        let why = NOT_SERVED
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, why)| format!(": {why}"))
            .unwrap_or_default();
        let era = modern_meta(params).map(|_| Era::Modern);
        return (
            era,
            Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: `{method}`{why}"),
            )),
        );
    }
    // `initialize` is a legacy request when it names its `protocolVersion`; carrying only the
    // modern `_meta` it is a 2026-07-28 request for a method that revision removed (-32601).
    if method != "initialize" || !params.contains_key("protocolVersion") {
        if let Some(meta) = modern_meta(params) {
            return (Some(Era::Modern), check_modern(method, meta));
        }
    }
    if !LEGACY_METHODS.contains(&method) {
        return (
            Some(Era::Modern),
            Err(RpcError::invalid_params(format!(
                "invalid params: `{method}` needs `params._meta` with `{META_PROTOCOL_VERSION}` and `{META_CLIENT_CAPABILITIES}`"
            ))),
        );
    }
    if session.legacy_version.is_none() && !matches!(method, "initialize" | "ping") {
        return (
            None,
            Err(RpcError::invalid_params(format!(
                "invalid params: `params._meta` must carry `{META_PROTOCOL_VERSION}` ({}) and `{META_CLIENT_CAPABILITIES}`, or the connection must open with `initialize`",
                MCP_MODERN_VERSIONS.join(", ")
            ))),
        );
    }
    (Some(Era::Legacy), Ok(()))
}

fn check_modern(method: &str, meta: &Map<String, Value>) -> Result<(), RpcError> {
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.as_str(),
        Some(_) => {
            return Err(RpcError::invalid_params(format!(
                "invalid params: `_meta[\"{META_PROTOCOL_VERSION}\"]` must be a string"
            )))
        }
        None => {
            return Err(RpcError::invalid_params(format!(
                "invalid params: `_meta` lacks `{META_PROTOCOL_VERSION}`"
            )))
        }
    };
    if !MCP_MODERN_VERSIONS.contains(&version) {
        let hint = if MCP_LEGACY_VERSIONS.contains(&version) {
            format!("; {version} is an initialize-era revision: open with `initialize` instead")
        } else {
            String::new()
        };
        return Err(RpcError::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported protocol version `{version}`{hint}"),
        )
        .with_data(json!({"supported": supported_versions(), "requested": version})));
    }
    if !MODERN_METHODS.contains(&method) {
        return Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: `{method}` is not a method of MCP {version}"),
        ));
    }
    match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(RpcError::invalid_params(format!(
            "invalid params: `_meta[\"{META_CLIENT_CAPABILITIES}\"]` must be an object"
        ))),
        None => Err(RpcError::invalid_params(format!(
            "invalid params: `_meta` lacks `{META_CLIENT_CAPABILITIES}`"
        ))),
    }
}

/// Serves one request; returns its era (when known) and its result.
fn request(
    ctx: &Context,
    session: &mut Session,
    link: &Link,
    id: &Value,
    method: &str,
    params: &Value,
) -> (Option<Era>, Result<Body, RpcError>) {
    let (era, verdict) = classify(
        session,
        method,
        params.as_object().expect("params are an object"),
    );
    if let Err(e) = verdict {
        return (era, Err(e));
    }
    let era = era.expect("a request that passes its checks has an era");
    #[cfg(debug_assertions)]
    debug_panic(method);
    let mut call = Call {
        ctx,
        session,
        era,
        params,
        id,
        link,
        features: FEATURES,
    };
    #[cfg(debug_assertions)]
    if let Some(body) = (method == "tools/call")
        .then_some(())
        .and_then(|()| debug_ask(&mut call))
    {
        return (Some(era), Ok(body));
    }
    let body = match find(method) {
        Some(m) => (m.answer)(&mut call),
        None => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: `{method}`"),
        )),
    };
    let body = match (era, body) {
        (Era::Modern, Ok(Body::Value(v))) => Ok(Body::Value(modern_result(method, v))),
        (_, b) => b,
    };
    (Some(era), body)
}

/// In debug builds (the tests'), `SENESCHAL_MCP_DEBUG_PANIC=<method>` makes that method panic,
/// so that the recovery path is exercised through the real binary.
#[cfg(debug_assertions)]
fn debug_panic(method: &str) {
    static TARGET: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| std::env::var("SENESCHAL_MCP_DEBUG_PANIC").ok());
    if target.as_deref() == Some(method) {
        panic!("SENESCHAL_MCP_DEBUG_PANIC asked `{method}` to panic");
    }
}

/// In debug builds (the tests'), `SENESCHAL_MCP_DEBUG_ASK=<tool>` makes a `tools/call` of
/// that tool, inside the peer of the call, report progress 1 of 2, ask the client
/// `elicitation/create`, report progress 2 of 2, and answer with what the asking gave
/// (`structuredContent.asked`): the way back to the client is exercised through the real
/// binary without a capability that needs it.
#[cfg(debug_assertions)]
fn debug_ask(call: &mut Call<'_>) -> Option<Body> {
    static TARGET: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| std::env::var("SENESCHAL_MCP_DEBUG_ASK").ok());
    let name = call.params.get("name").and_then(Value::as_str);
    if target.is_none() || name != target.as_deref() {
        return None;
    }
    use seneschal_core::interact::{Asked, Peer};
    let peer = super::peer::McpPeer::of(call);
    peer.progress(1.0, Some(2.0), Some("asking"));
    let asked = peer.ask(
        "debug",
        "elicitation/create",
        json!({"mode": "form", "message": "Go on?", "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}}}),
    );
    peer.progress(2.0, Some(2.0), Some("asked"));
    let asked = match asked {
        Asked::Answered(v) => json!({"answered": v}),
        Asked::Deferred => json!({"deferred": true}),
        Asked::Unavailable(why) => json!({"unavailable": why}),
        Asked::Failed(why) => json!({"failed": why}),
    };
    Some(Body::Value(json!({
        "content": [{"type": "text", "text": asked.to_string()}],
        "structuredContent": {"asked": asked},
        "isError": false,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a method reaches repository content: through the executor's named entries (the
    /// one gate: profile, schema, approval, redaction, audit), or not at all, and why.
    enum Door {
        Executor(&'static [&'static str]),
        NoContent(&'static str),
    }

    /// Every door a client has into this server, by method: a new method in either era's
    /// METHODS table, or in a feature, that is not classified here fails
    /// `every_door_is_classified_and_the_gated_ones_call_the_executor`.
    const DOORS: &[(&str, Door)] = &[
        (
            "initialize",
            Door::NoContent("the handshake: server info and capabilities"),
        ),
        (
            "server/discover",
            Door::NoContent("the server's info and capabilities"),
        ),
        ("ping", Door::NoContent("an empty answer")),
        (
            "notifications/initialized",
            Door::NoContent("a notification: session state only"),
        ),
        (
            "notifications/cancelled",
            Door::NoContent("a notification: marks a request cancelled"),
        ),
        (
            "logging/setLevel",
            Door::NoContent("session state: the log level"),
        ),
        (
            "tools/list",
            Door::NoContent("the registry's tool list, compiled in"),
        ),
        ("tools/call", Door::Executor(&["execute_index"])),
        ("resources/list", Door::Executor(&["knowledge_resources"])),
        (
            "resources/read",
            Door::Executor(&["execute_index", "knowledge_read"]),
        ),
        (
            "resources/templates/list",
            Door::Executor(&["knowledge_templates"]),
        ),
        (
            "resources/subscribe",
            Door::NoContent("records a URI; its updates are read by execute::knowledge_changes"),
        ),
        ("resources/unsubscribe", Door::NoContent("forgets a URI")),
        ("prompts/list", Door::Executor(&["knowledge_prompts"])),
        ("prompts/get", Door::Executor(&["knowledge_prompt"])),
        (
            "completion/complete",
            Door::Executor(&[
                "knowledge_prompt_completion",
                "knowledge_template_completion",
            ]),
        ),
        ("tasks/get", Door::Executor(&["execute_index"])),
        ("tasks/update", Door::Executor(&["execute_index"])),
        ("tasks/cancel", Door::Executor(&["execute_index"])),
    ];

    /// The source of each module of [`FEATURES`], in its order.
    const SOURCES: &[&str] = &[
        include_str!("methods/lifecycle.rs"),
        include_str!("methods/tools.rs"),
        include_str!("methods/resources.rs"),
        include_str!("methods/prompts.rs"),
        include_str!("methods/completion.rs"),
        include_str!("methods/tasks.rs"),
        include_str!("methods/logging.rs"),
    ];

    /// What is wrong with `doors` for the methods `served` (name, source of the module that
    /// serves it): a method without a door, a door without a method, a gated door whose
    /// module does not call its executor entry.
    fn door_problems(served: &[(&str, &str)], doors: &[(&str, Door)]) -> Vec<String> {
        let mut out = Vec::new();
        for (name, source) in served {
            match doors.iter().find(|(n, _)| n == name) {
                None => out.push(format!(
                    "{name}: no door says how it reaches repository content"
                )),
                Some((_, Door::Executor(entries))) => {
                    for e in *entries {
                        if !source.contains(&format!("{e}(")) {
                            out.push(format!("{name}: its module does not call execute::{e}"));
                        }
                    }
                }
                Some((_, Door::NoContent(""))) => {
                    out.push(format!("{name}: a door without content must say why"))
                }
                Some((_, Door::NoContent(_))) => {}
            }
        }
        for (name, _) in doors {
            if !served.iter().any(|(n, _)| n == name) {
                out.push(format!("{name}: a door for a method nobody serves"));
            }
        }
        out
    }

    fn served() -> Vec<(&'static str, &'static str)> {
        assert_eq!(SOURCES.len(), FEATURES.len(), "one source per feature");
        let mut out: Vec<(&str, &str)> = Vec::new();
        for (f, source) in FEATURES.iter().zip(SOURCES) {
            for m in f.methods {
                out.push((m.name, source));
            }
            for n in f.notifications {
                out.push((n.name, source));
            }
        }
        for name in LEGACY_METHODS.iter().chain(MODERN_METHODS) {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name, ""));
            }
        }
        out
    }

    #[test]
    fn every_door_is_classified_and_the_gated_ones_call_the_executor() {
        let problems = door_problems(&served(), DOORS);
        assert!(problems.is_empty(), "{problems:#?}");
        // The check fails on a method without a door, and on a gated door whose module reads
        // around the executor.
        let mut planted = served();
        planted.push(("resources/peek", "fn peek() { read_the_file_directly() }"));
        let p = door_problems(&planted, DOORS);
        assert!(
            p.iter().any(|e| e.starts_with("resources/peek: no door")),
            "{p:?}"
        );
        let bypass = [("prompts/get", "fn get() { seneschal_knowledge::render() }")];
        let door = DOORS.iter().find(|(n, _)| *n == "prompts/get").unwrap();
        let p = door_problems(&bypass, std::slice::from_ref(door));
        assert_eq!(
            p,
            ["prompts/get: its module does not call execute::knowledge_prompt"]
        );
    }

    #[test]
    fn a_request_read_in_place_is_answered_as_the_message_parsed_whole() {
        let ctx = Context::new(
            std::env::temp_dir(),
            seneschal_model::policy::Effect::RepositoryWrite,
        );
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let served = [
            init,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"s\"q","method":"ping","params":null}"#,
            r#"{"method":"tools\/call","id":2.5,"params":{"name":"server_status","arguments":{}},"jsonrpc":"2.0","extra":[1]}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ];
        let (mut whole, mut fast) = (Session::default(), Session::default());
        let link = Link::closed();
        for text in served {
            let request = Request::read(text.as_bytes()).expect(text);
            let a = handle_request(&ctx, &mut fast, &link, request).expect("answered");
            let b = handle_bytes(&ctx, &mut whole, &link, text.as_bytes()).expect("answered");
            let strip = |bytes: &[u8]| {
                let mut v: Value = serde_json::from_slice(bytes).unwrap();
                // server.status reports the process's uptime.
                if let Some(sc) = v.pointer_mut("/result/structuredContent") {
                    sc.as_object_mut().unwrap().remove("uptime_ms");
                }
                if let Some(c) = v.pointer_mut("/result/content") {
                    *c = Value::Null;
                }
                v
            };
            assert_eq!(strip(&a.bytes), strip(&b.bytes), "{text}");
            assert_eq!((a.error, a.era), (b.error, b.era), "{text}");
        }
        // Whatever is not plainly a request is parsed whole, to be answered (or taken) as such.
        for text in [
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","error":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
        ] {
            assert!(Request::read(text.as_bytes()).is_none(), "{text}");
        }
    }

    #[test]
    fn an_owned_result_answered_in_place_is_the_copied_answer() {
        let long_id = Value::from("i".repeat(200));
        for id in [json!(1), json!("a\"b"), json!(-7.5), long_id] {
            for spare in [0, 1, 40, 300] {
                let raw = r#"{"content":[],"isError":false}"#;
                let mut owned = String::with_capacity(raw.len() + spare);
                owned.push_str(raw);
                let answer = response(&id, Ok(Body::Owned(owned)), Some(Era::Legacy));
                let copied = response(&id, Ok(Body::Raw(raw)), Some(Era::Legacy));
                assert_eq!(
                    answer.bytes, copied.bytes,
                    "id {id}, {spare} bytes to spare"
                );
                assert_eq!((answer.error, answer.era), (None, Some(Era::Legacy)));
            }
        }
        // Room enough is answered in place, in the buffer it came in.
        let mut owned = String::with_capacity(512);
        owned.push_str("{}");
        let at = owned.as_ptr();
        let bytes = in_place(&json!(12), owned).expect("room enough");
        assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":12,"result":{}}"#);
        assert_eq!(bytes.as_ptr(), at);
        // Too little room, or an id longer than the envelope's buffer: the body comes back.
        assert!(in_place(&json!(12), "{}".to_string()).is_err());
        let mut roomy = String::with_capacity(4096);
        roomy.push_str("{}");
        assert!(in_place(&Value::from("i".repeat(200)), roomy).is_err());
    }

    #[test]
    fn initialize_is_modern_only_without_its_protocol_version() {
        let meta = json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}});
        let modern = json!({"_meta": meta});
        let (era, verdict) = classify(
            &Session::default(),
            "initialize",
            modern.as_object().unwrap(),
        );
        assert_eq!(era, Some(Era::Modern));
        assert_eq!(verdict.unwrap_err().code, METHOD_NOT_FOUND);
        // A legacy initialize that also carries the modern keys is still the handshake.
        let both = json!({"protocolVersion": "2025-11-25", "_meta": meta});
        let (era, verdict) = classify(&Session::default(), "initialize", both.as_object().unwrap());
        assert_eq!((era, verdict), (Some(Era::Legacy), Ok(())));
    }

    #[test]
    fn the_capabilities_are_the_features_members() {
        // What the server card announces (the build renders it from MCP_CAPABILITIES).
        let announced: Value =
            serde_json::from_str(seneschal_model::versions::MCP_CAPABILITIES).expect("JSON");
        assert_eq!(Value::Object(capabilities()), announced);
        assert_eq!(
            announced,
            json!({
                "tools": {"listChanged": false},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": false},
                "completions": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}},
                "logging": {},
            })
        );
    }

    #[test]
    fn each_era_announces_the_features_it_serves() {
        // logging/setLevel is of the initialize era; a 2026-07-28 request names its level in
        // its own `_meta`, and is sent log messages all the same: both eras announce it.
        let mut modern = capabilities();
        // Subscriptions are the initialize era's (`subscriptions/listen` is not served).
        modern.insert(
            "resources".into(),
            json!({"subscribe": false, "listChanged": false}),
        );
        assert_eq!(capabilities_in(Era::Modern), modern);
        let mut legacy = capabilities();
        legacy.remove("extensions");
        assert_eq!(capabilities_in(Era::Legacy), legacy);
    }

    #[test]
    fn the_features_answer_exactly_the_methods_tables() {
        let mut served: Vec<&str> = FEATURES
            .iter()
            .flat_map(|f| {
                f.methods
                    .iter()
                    .map(|m| m.name)
                    .chain(f.notifications.iter().map(|n| n.name))
            })
            .collect();
        let count = served.len();
        served.sort_unstable();
        served.dedup();
        assert_eq!(served.len(), count, "a method is in the table twice");
        let mut announced: Vec<&str> = LEGACY_METHODS
            .iter()
            .chain(MODERN_METHODS)
            .copied()
            .collect();
        announced.sort_unstable();
        announced.dedup();
        assert_eq!(served, announced);
        for (m, _) in NOT_SERVED {
            assert!(find(m).is_none(), "{m} is served and listed as not served");
        }
    }
}
