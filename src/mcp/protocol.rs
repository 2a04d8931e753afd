//! The dual-era JSON-RPC core: one message in, at most one answer out, whatever the transport.
//!
//! A request is sorted in this order: JSON → JSON-RPC shape (-32600) → the METHODS tables
//! (-32601) → its era (modern when its `_meta` carries the `io.modelcontextprotocol/` keys,
//! legacy otherwise) → the era's own checks (-32022, -32602) → the method. Nothing here knows
//! a capability's behaviour: tools and resources go through [`crate::execute`], and
//! `tools/list` is served from the bytes the build produced.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::wire;
use crate::context::Context;
use crate::error::{CapabilityError, ErrorCode};
use crate::execute::execute_index;
use crate::policy::{Determinism, Disclosure, Effect};
use crate::registry::{self, projections, Kind, CAPABILITIES};
use crate::transport::Transport;
use crate::versions::{MCP_ALL_VERSIONS, MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS, SERVER_NAME};

/// JSON-RPC: the text is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method is not in the era's METHODS table.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the parameters are wrong (unknown tool, bad cursor, missing `_meta`).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: a fault inside seneschal.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP 2026-07-28: HTTP headers disagree with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28: the request's protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// MCP 2025-11-25 and earlier: resource not found (2026-07-28 uses -32602).
pub const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;

/// The `_meta` key of the per-request protocol version (modern era).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the per-request client capabilities (modern era).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The result `_meta` key of the contract digest (`generated/contract.lock`), in the
/// `initialize` and `server/discover` results, as on the HTTP server card.
pub const META_DIGEST: &str = "seneschal/digest";
/// The result `_meta` key naming the server (modern era).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

pub use crate::versions::{LEGACY_METHODS, MODERN_METHODS, NOT_SERVED};

/// How long a client may cache lists and reads that depend on the binary alone.
pub const TTL_STATIC_MS: u64 = 300_000;

/// How many items one page of `resources/list` or `resources/templates/list` holds.
pub const PAGE: usize = crate::limits::PAGE_ITEMS;

/// Which protocol generation a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, 2024-11-05 … 2025-11-25.
    Legacy,
    /// Per-request `_meta`, 2026-07-28.
    Modern,
}

/// The state one connection keeps: only the legacy era has any.
#[derive(Debug, Default, Clone)]
pub struct Session {
    /// The legacy revision negotiated by `initialize`, if any.
    pub legacy_version: Option<&'static str>,
}

impl Session {
    /// A session that behaves as if `initialize` had negotiated `version` (stateless HTTP).
    pub fn assumed(version: &'static str) -> Session {
        Session {
            legacy_version: Some(version),
        }
    }
}

/// One JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// One sentence.
    pub message: String,
    /// Details.
    pub data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }
}

/// A result body: a JSON value, or bytes already serialized (compact JSON).
#[derive(Debug)]
enum Body {
    Value(Value),
    Raw(&'static str),
    Owned(String),
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
        Ok(Body::Raw(raw)) => {
            bytes.extend_from_slice(br#","result":"#);
            bytes.extend_from_slice(raw.as_bytes());
            None
        }
        Ok(Body::Owned(raw)) => {
            bytes.extend_from_slice(br#","result":"#);
            bytes.extend_from_slice(raw.as_bytes());
            None
        }
        Ok(Body::Value(v)) => {
            bytes.extend_from_slice(br#","result":"#);
            serde_json::to_writer(&mut bytes, &v).expect("values serialize");
            None
        }
        Err(e) => {
            let mut err = json!({"code": e.code, "message": e.message});
            if let Some(d) = e.data {
                err["data"] = d;
            }
            bytes.extend_from_slice(br#","error":"#);
            serde_json::to_writer(&mut bytes, &err).expect("values serialize");
            Some(e.code)
        }
    };
    bytes.push(b'}');
    Answer { bytes, error, era }
}

/// An error answer to a message whose id could not be read.
pub fn error_answer(code: i64, message: impl Into<String>) -> Answer {
    response(&Value::Null, Err(RpcError::new(code, message)), None)
}

/// The error answer of a header check (Streamable HTTP), echoing the request id.
pub fn error_for(id: &Value, code: i64, message: impl Into<String>) -> Answer {
    response(id, Err(RpcError::new(code, message)), Some(Era::Modern))
}

/// Answers one line of text (stdio) or one body (HTTP). `None` for notifications and for
/// responses sent by the client.
pub fn handle_bytes(ctx: &Context, session: &mut Session, text: &[u8]) -> Option<Answer> {
    match serde_json::from_slice::<Value>(text) {
        Ok(v) => handle_value(ctx, session, v),
        Err(e) => Some(error_answer(PARSE_ERROR, format!("parse error: {e}"))),
    }
}

/// Answers one parsed message.
pub fn handle_value(ctx: &Context, session: &mut Session, message: Value) -> Option<Answer> {
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
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(response(
            &reply_id,
            Err(RpcError::new(
                INVALID_REQUEST,
                "invalid request: `jsonrpc` must be \"2.0\"",
            )),
            None,
        ));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) => m.as_str(),
        Some(_) => {
            return Some(response(
                &reply_id,
                Err(RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: `method` must be a string",
                )),
                None,
            ))
        }
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            // A response from the client: this server sends no requests, so there is nothing
            // to match it with.
            return None;
        }
        None => {
            return Some(response(
                &reply_id,
                Err(RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: `method` is missing",
                )),
                None,
            ))
        }
    };
    let empty = Map::new();
    let params = match obj.get("params") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => {
            return id.map(|id| {
                response(
                    &id,
                    Err(RpcError::new(
                        INVALID_PARAMS,
                        "invalid params: `params` must be an object",
                    )),
                    None,
                )
            })
        }
    };
    let Some(id) = id else {
        notification(session, method);
        return None;
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| request(ctx, session, method, params)));
    let (era, body) = match outcome {
        Ok((era, body)) => (era, body),
        Err(panic) => {
            let why = crate::text::panic_message(panic.as_ref(), "a panic");
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

/// Notifications change nothing but the legacy handshake state and are never answered.
fn notification(session: &mut Session, method: &str) {
    if method == "notifications/initialized" && session.legacy_version.is_none() {
        eprintln!("seneschal mcp: notifications/initialized before initialize; ignored");
    }
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
            Err(RpcError::new(
                INVALID_PARAMS,
                format!(
                    "invalid params: `{method}` needs `params._meta` with `{META_PROTOCOL_VERSION}` and `{META_CLIENT_CAPABILITIES}`"
                ),
            )),
        );
    }
    if session.legacy_version.is_none() && !matches!(method, "initialize" | "ping") {
        return (
            None,
            Err(RpcError::new(
                INVALID_PARAMS,
                format!(
                    "invalid params: `params._meta` must carry `{META_PROTOCOL_VERSION}` ({}) and `{META_CLIENT_CAPABILITIES}`, or the connection must open with `initialize`",
                    MCP_MODERN_VERSIONS.join(", ")
                ),
            )),
        );
    }
    (Some(Era::Legacy), Ok(()))
}

fn check_modern(method: &str, meta: &Map<String, Value>) -> Result<(), RpcError> {
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.as_str(),
        Some(_) => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!("invalid params: `_meta[\"{META_PROTOCOL_VERSION}\"]` must be a string"),
            ))
        }
        None => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!("invalid params: `_meta` lacks `{META_PROTOCOL_VERSION}`"),
            ))
        }
    };
    if !MCP_MODERN_VERSIONS.contains(&version) {
        let hint = if MCP_LEGACY_VERSIONS.contains(&version) {
            format!("; {version} is an initialize-era revision: open with `initialize` instead")
        } else {
            String::new()
        };
        let supported = supported_versions();
        return Err(RpcError::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported protocol version `{version}`{hint}"),
        )
        .with_data(json!({"supported": supported, "requested": version})));
    }
    if !MODERN_METHODS.contains(&method) {
        return Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: `{method}` is not a method of MCP {version}"),
        ));
    }
    match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(RpcError::new(
            INVALID_PARAMS,
            format!("invalid params: `_meta[\"{META_CLIENT_CAPABILITIES}\"]` must be an object"),
        )),
        None => Err(RpcError::new(
            INVALID_PARAMS,
            format!("invalid params: `_meta` lacks `{META_CLIENT_CAPABILITIES}`"),
        )),
    }
}

/// Serves one request; returns its era (when known) and its result.
fn request(
    ctx: &Context,
    session: &mut Session,
    method: &str,
    params: &Map<String, Value>,
) -> (Option<Era>, Result<Body, RpcError>) {
    let (era, verdict) = classify(session, method, params);
    if let Err(e) = verdict {
        return (era, Err(e));
    }
    let era = era.expect("a request that passes its checks has an era");
    #[cfg(debug_assertions)]
    debug_panic(method);
    let body = match method {
        "initialize" => initialize(ctx, session, params),
        "ping" => Ok(Body::Value(json!({}))),
        "server/discover" => Ok(Body::Value(discover(ctx))),
        "tools/list" => tools_list(ctx, era, params),
        "tools/call" => tools_call(ctx, era, params),
        "resources/list" => resources_list(ctx, params).map(Body::Value),
        "resources/read" => resources_read(ctx, era, params).map(Body::Value),
        "resources/templates/list" => templates_list(ctx, params).map(Body::Value),
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: `{other}`"),
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
    static TARGET: OnceLock<Option<String>> = OnceLock::new();
    let target = TARGET.get_or_init(|| std::env::var("SENESCHAL_MCP_DEBUG_PANIC").ok());
    if target.as_deref() == Some(method) {
        panic!("SENESCHAL_MCP_DEBUG_PANIC asked `{method}` to panic");
    }
}

/// Adds the modern fields every result carries: `resultType`, the server in `_meta`, and
/// the cache hints of lists and reads.
fn modern_result(method: &str, mut v: Value) -> Value {
    let obj = v.as_object_mut().expect("results are objects");
    obj.insert("resultType".into(), json!("complete"));
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("_meta is an object");
    meta.insert(META_SERVER_INFO.into(), server_info());
    if !obj.contains_key("ttlMs") && method.ends_with("/list") {
        // Lists that depend on the repository may change at any time.
        obj.insert("ttlMs".into(), json!(0));
        obj.insert("cacheScope".into(), json!("private"));
    }
    v
}

/// Every revision served, newest first: a dual-era server names its initialize-era
/// revisions too, so that a dual-era client knows it may fall back to `initialize`.
pub fn supported_versions() -> Vec<&'static str> {
    MCP_ALL_VERSIONS.iter().rev().copied().collect()
}

fn server_info() -> Value {
    json!({"name": SERVER_NAME, "title": "seneschal", "version": env!("CARGO_PKG_VERSION")})
}

fn initialize(
    ctx: &Context,
    session: &mut Session,
    params: &Map<String, Value>,
) -> Result<Body, RpcError> {
    let requested = match params.get("protocolVersion") {
        Some(Value::String(v)) => v.as_str(),
        _ => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "invalid params: `initialize` needs `params.protocolVersion`, a string",
            ))
        }
    };
    let latest = MCP_LEGACY_VERSIONS[MCP_LEGACY_VERSIONS.len() - 1];
    let chosen = MCP_LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(latest);
    session.legacy_version = Some(chosen);
    Ok(Body::Value(json!({
        "protocolVersion": chosen,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": instructions(ctx.max_effect),
        "_meta": {META_DIGEST: crate::registry::projections::DIGEST},
    })))
}

fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": false},
        "resources": {"subscribe": false, "listChanged": false},
    })
}

fn discover(ctx: &Context) -> Value {
    let supported = supported_versions();
    json!({
        "supportedVersions": supported,
        "capabilities": capabilities(),
        "instructions": instructions(ctx.max_effect),
        "ttlMs": TTL_STATIC_MS,
        "cacheScope": "public",
        "_meta": {META_DIGEST: crate::registry::projections::DIGEST},
    })
}

/// The instructions of `initialize` and `server/discover`, derived from the registry: the
/// tools that write to the repository, those that change only this process, the profile.
pub fn instructions(max_effect: Effect) -> &'static str {
    static TEXT: [OnceLock<String>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = &TEXT[Effect::ALL
        .iter()
        .position(|e| *e == max_effect)
        .expect("an effect")];
    slot.get_or_init(|| {
        let tools_with = |effect: Effect| -> Vec<&'static str> {
            CAPABILITIES
                .iter()
                .filter(|d| d.executable() && d.effect == effect)
                .filter_map(|d| d.mcp_tool)
                .collect()
        };
        let mut s = String::from(
            "seneschal stewards one git repository: its knowledge, queries about it and writes to it. \
             Each tool states what it changes in _meta[\"seneschal/effect\"], the approval it deserves in \
             _meta[\"seneschal/approval\"] and a sentence for confirmation in _meta[\"seneschal/review\"]. \
             A failed call is a tool result with isError and a stable code in _meta[\"seneschal/error\"].code.",
        );
        let writers = tools_with(Effect::RepositoryWrite);
        if writers.is_empty() {
            s.push_str(" No tool writes to the repository in this build.");
        } else if Effect::RepositoryWrite > max_effect {
            s.push_str(&format!(
                " The tools that write to the repository ({}) are disabled in this process (--allow-effects {}).",
                writers.join(", "),
                max_effect.as_str()
            ));
        } else {
            s.push_str(&format!(
                " Tools that write to the repository (confirm each call): {}.",
                writers.join(", ")
            ));
        }
        let process = tools_with(Effect::ProcessState);
        if !process.is_empty() {
            if Effect::ProcessState > max_effect {
                s.push_str(&format!(
                    " The tools that change this process's memory ({}) are disabled (--allow-effects {}).",
                    process.join(", "),
                    max_effect.as_str()
                ));
            } else {
                s.push_str(&format!(
                    " Tools that change only this process's memory: {}.",
                    process.join(", ")
                ));
            }
        }
        s.push_str(" Every other tool only reads. Prompts are not served; mcp_projection describes this server.");
        s
    })
}

/// The pre-serialized `tools/list` bytes of a profile, compacted once per process, and the
/// same with the modern fields spliced in front.
fn tools_bytes(max_effect: Effect, era: Era) -> &'static str {
    static CACHE: [OnceLock<(String, String)>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let i = Effect::ALL
        .iter()
        .position(|e| *e == max_effect)
        .expect("an effect");
    let (legacy, modern) = CACHE[i].get_or_init(|| {
        let source = match max_effect {
            Effect::Read => projections::MCP_TOOLS_READ,
            Effect::ProcessState => projections::MCP_TOOLS_PROCESS_STATE,
            Effect::RepositoryWrite => projections::MCP_TOOLS,
        };
        let legacy = wire::compact_json(source);
        (legacy.clone(), splice_modern(&legacy))
    });
    match era {
        Era::Legacy => legacy,
        Era::Modern => modern,
    }
}

/// Splices `resultType`, the cache hints and the server's identity into a compact result
/// object, by bytes.
pub fn splice_modern(compact: &str) -> String {
    let info = serde_json::to_string(&server_info()).expect("serializes");
    let head = format!(
        "{{\"resultType\":\"complete\",\"ttlMs\":{TTL_STATIC_MS},\"cacheScope\":\"public\","
    );
    let rest = compact.strip_prefix('{').expect("a result object");
    match rest.strip_prefix("\"_meta\":{") {
        Some(after) => format!("{head}\"_meta\":{{\"{META_SERVER_INFO}\":{info},{after}"),
        None => format!("{head}\"_meta\":{{\"{META_SERVER_INFO}\":{info}}},{rest}"),
    }
}

fn no_cursor(params: &Map<String, Value>, list: &str) -> Result<(), RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(c) => Err(invalid_cursor(c, list)),
    }
}

fn invalid_cursor(c: &Value, list: &str) -> RpcError {
    RpcError::new(
        INVALID_PARAMS,
        format!("invalid params: {c} is not a cursor of {list}"),
    )
}

fn tools_list(ctx: &Context, era: Era, params: &Map<String, Value>) -> Result<Body, RpcError> {
    // Every tool fits on one page, so no cursor of ours exists.
    no_cursor(params, "tools/list")?;
    Ok(Body::Raw(tools_bytes(ctx.max_effect, era)))
}

/// `tools/call`: an unknown tool is a protocol error; every capability error is a tool result.
fn tools_call(ctx: &Context, era: Era, params: &Map<String, Value>) -> Result<Body, RpcError> {
    let name = match params.get("name") {
        Some(Value::String(n)) => n.as_str(),
        _ => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "invalid params: `tools/call` needs `params.name`, a string",
            ))
        }
    };
    let Some((index, _)) = registry::by_tool(name) else {
        return Err(
            RpcError::new(INVALID_PARAMS, format!("unknown tool: `{name}`"))
                .with_data(json!({"name": name})),
        );
    };
    let args = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    match execute_index(ctx, index, args, Transport::Mcp) {
        Ok(v) => Ok(Body::Owned(success_bytes(&v, era))),
        Err(e) => Ok(Body::Value(tool_result(Err(e)))),
    }
}

/// A successful `CallToolResult` assembled by bytes: the answer is serialized once and used
/// both as `structuredContent` and, escaped, as the text block. Same JSON as [`tool_result`].
fn success_bytes(v: &Value, era: Era) -> String {
    let text = serde_json::to_string(v).expect("values serialize");
    let escaped = serde_json::to_string(&text).expect("strings serialize");
    let mut out = String::with_capacity(text.len() + escaped.len() + 160);
    out.push('{');
    if era == Era::Modern {
        out.push_str("\"resultType\":\"complete\",\"_meta\":{\"");
        out.push_str(META_SERVER_INFO);
        out.push_str("\":");
        out.push_str(&serde_json::to_string(&server_info()).expect("serializes"));
        out.push_str("},");
    }
    out.push_str("\"content\":[{\"type\":\"text\",\"text\":");
    out.push_str(&escaped);
    out.push_str("}],\"structuredContent\":");
    out.push_str(&text);
    out.push_str(",\"isError\":false}");
    out
}

/// A `CallToolResult` from the executor's answer.
pub fn tool_result(result: Result<Value, CapabilityError>) -> Value {
    match result {
        Ok(v) => {
            let text = serde_json::to_string(&v).expect("values serialize");
            json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": v,
                "isError": false,
            })
        }
        Err(e) => {
            let mut error = json!({"code": e.code.as_str()});
            if let Some(p) = &e.pointer {
                error["pointer"] = json!(p);
            }
            if let Some(d) = &e.data {
                error["data"] = d.clone();
            }
            json!({
                "content": [{"type": "text", "text": e.message}],
                "isError": true,
                "_meta": {"seneschal/error": error},
            })
        }
    }
}

/// A page of `items` from the request's cursor.
fn page(
    items: Vec<Value>,
    params: &Map<String, Value>,
    list: &str,
) -> Result<(Vec<Value>, Option<String>), RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => wire::decode_cursor(c, list, items.len())
            .ok_or_else(|| invalid_cursor(&json!(c), list))?,
        Some(c) => return Err(invalid_cursor(c, list)),
    };
    let end = (start + PAGE).min(items.len());
    let next = (end < items.len()).then(|| wire::encode_cursor(list, end));
    Ok((items[start..end].to_vec(), next))
}

fn resource_mime(d: &registry::Descriptor) -> &'static str {
    match d.kind {
        Kind::Resource => d.mime_type,
        Kind::Query => "application/json",
    }
}

fn resources_list(ctx: &Context, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let mut items: Vec<Value> = CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect <= ctx.max_effect)
        .filter_map(|d| {
            d.mcp_resource.map(|uri| {
                json!({
                    "uri": uri,
                    "name": d.id,
                    "title": d.title,
                    "description": d.description,
                    "mimeType": resource_mime(d),
                })
            })
        })
        .collect();
    items.extend(
        crate::execute::knowledge_resources(ctx)
            .into_iter()
            .map(|r| {
                json!({
                    "uri": r.uri,
                    "name": r.name,
                    "title": r.title,
                    "description": r.description,
                    "mimeType": r.mime_type,
                })
            }),
    );
    let (items, next) = page(items, params, "resources/list")?;
    let mut out = json!({ "resources": items });
    if let Some(n) = next {
        out["nextCursor"] = json!(n);
    }
    Ok(out)
}

fn templates_list(ctx: &Context, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let items: Vec<Value> = crate::execute::knowledge_templates(ctx)
        .into_iter()
        .map(|t| {
            json!({
                "uriTemplate": t.uri_template,
                "name": t.name,
                "description": t.description,
                "mimeType": t.mime_type,
            })
        })
        .collect();
    let (items, next) = page(items, params, "resources/templates/list")?;
    let mut out = json!({ "resourceTemplates": items });
    if let Some(n) = next {
        out["nextCursor"] = json!(n);
    }
    Ok(out)
}

/// Cache hints of a read, from what the answer is a function of and what it reveals.
fn read_cache(determinism: Determinism, disclosure: Disclosure) -> (u64, &'static str) {
    let ttl = match determinism {
        Determinism::Input => TTL_STATIC_MS,
        Determinism::Repository | Determinism::Process => 0,
    };
    let scope = match disclosure {
        Disclosure::Repository => "private",
        Disclosure::None | Disclosure::Metadata => "public",
    };
    (ttl, scope)
}

fn resources_read(ctx: &Context, era: Era, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let uri = match params.get("uri") {
        Some(Value::String(u)) => u.as_str(),
        _ => {
            return Err(RpcError::new(
                INVALID_PARAMS,
                "invalid params: `resources/read` needs `params.uri`, a string",
            ))
        }
    };
    let (contents, (ttl, scope)) = if let Some((index, d)) = registry::by_resource(uri) {
        let out = execute_index(ctx, index, json!({}), Transport::Mcp)
            .map_err(|e| capability_rpc_error(era, uri, e))?;
        let text = match d.kind {
            Kind::Resource => out
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Kind::Query => serde_json::to_string(&out).expect("values serialize"),
        };
        (
            json!({"uri": uri, "mimeType": resource_mime(d), "text": text}),
            read_cache(d.determinism, d.disclosure),
        )
    } else if let Some((mime, text)) = crate::execute::knowledge_read(ctx, uri) {
        (
            json!({"uri": uri, "mimeType": mime, "text": text}),
            read_cache(Determinism::Repository, Disclosure::Repository),
        )
    } else {
        return Err(not_found(era, uri));
    };
    let mut out = json!({ "contents": [contents] });
    if era == Era::Modern {
        out["ttlMs"] = json!(ttl);
        out["cacheScope"] = json!(scope);
    }
    Ok(out)
}

/// Resource not found: -32002 in the initialize era, -32602 from 2026-07-28 on.
fn not_found(era: Era, uri: &str) -> RpcError {
    let code = match era {
        Era::Legacy => RESOURCE_NOT_FOUND_LEGACY,
        Era::Modern => INVALID_PARAMS,
    };
    RpcError::new(code, format!("resource not found: `{uri}`")).with_data(json!({"uri": uri}))
}

/// A capability error met outside `tools/call` (a resource read) as a JSON-RPC error.
fn capability_rpc_error(era: Era, uri: &str, e: CapabilityError) -> RpcError {
    if e.code == ErrorCode::NotFound {
        return not_found(era, uri);
    }
    let code = match e.code {
        ErrorCode::InvalidInput => INVALID_PARAMS,
        _ => INTERNAL_ERROR,
    };
    RpcError::new(code, e.message.clone()).with_data(json!({"seneschal/error": e.to_json()}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_splice_yields_one_meta_and_the_same_tools() {
        let legacy = tools_bytes(Effect::RepositoryWrite, Era::Legacy);
        let modern = tools_bytes(Effect::RepositoryWrite, Era::Modern);
        let l: Value = serde_json::from_str(legacy).unwrap();
        let m: Value = serde_json::from_str(modern).unwrap();
        assert_eq!(l["tools"], m["tools"]);
        assert_eq!(m["resultType"], "complete");
        assert_eq!(m["cacheScope"], "public");
        assert_eq!(m["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
        assert_eq!(
            m["_meta"]["seneschal/generated-by"],
            l["_meta"]["seneschal/generated-by"]
        );
        assert!(modern.starts_with("{\"resultType\""));
        assert!(!modern.contains('\n') && !legacy.contains('\n'));
        // The splice also works on a result that has no `_meta` yet.
        let spliced: Value = serde_json::from_str(&splice_modern(r#"{"tools":[]}"#)).unwrap();
        assert_eq!(spliced["tools"], json!([]));
        assert_eq!(spliced["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
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
    fn the_digest_is_in_initialize_and_discover() {
        let ctx = Context::new(std::env::temp_dir(), Effect::RepositoryWrite);
        let mut session = Session::default();
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}});
        let Ok(Body::Value(v)) = initialize(&ctx, &mut session, init.as_object().unwrap()) else {
            panic!("initialize answers a value");
        };
        assert_eq!(
            v["_meta"][META_DIGEST],
            crate::registry::projections::DIGEST
        );
        let d = modern_result("server/discover", discover(&ctx));
        assert_eq!(
            d["_meta"][META_DIGEST],
            crate::registry::projections::DIGEST
        );
        assert_eq!(d["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
    }

    #[test]
    fn byte_assembled_success_equals_the_value_form() {
        let v = json!({"a": "quote \" and \\ and \n", "b": [1, 2, {"c": null}]});
        let legacy: Value = serde_json::from_str(&success_bytes(&v, Era::Legacy)).unwrap();
        assert_eq!(legacy, tool_result(Ok(v.clone())));
        let modern: Value = serde_json::from_str(&success_bytes(&v, Era::Modern)).unwrap();
        assert_eq!(modern, modern_result("tools/call", tool_result(Ok(v))));
    }

    #[test]
    fn every_capability_error_becomes_an_is_error_result() {
        // refused, unsupported and conflict cannot be reached over pipes while every tool is a
        // read; the mapping is the same function for every code, checked here for each.
        for code in ErrorCode::ALL {
            let e = CapabilityError::new(code, format!("why {}", code.as_str()))
                .at("/field")
                .with_data(json!({"current": "abc"}));
            let r = tool_result(Err(e));
            assert_eq!(r["isError"], true);
            assert_eq!(r["content"][0]["text"], format!("why {}", code.as_str()));
            assert_eq!(r["_meta"]["seneschal/error"]["code"], code.as_str());
            assert_eq!(r["_meta"]["seneschal/error"]["pointer"], "/field");
            assert_eq!(r["_meta"]["seneschal/error"]["data"]["current"], "abc");
            assert!(r.get("structuredContent").is_none());
        }
        let r = tool_result(Err(CapabilityError::refused("no")));
        assert!(r["_meta"]["seneschal/error"].get("pointer").is_none());
    }

    #[test]
    fn instructions_say_when_nothing_writes() {
        let text = instructions(Effect::RepositoryWrite);
        let writers: Vec<&str> = CAPABILITIES
            .iter()
            .filter(|d| d.executable() && d.effect == Effect::RepositoryWrite)
            .filter_map(|d| d.mcp_tool)
            .collect();
        if writers.is_empty() {
            assert!(text.contains("No tool writes to the repository"), "{text}");
        } else {
            for w in writers {
                assert!(text.contains(w), "{text} lacks {w}");
            }
        }
    }
}
