//! What a feature of the protocol is made of — the request methods, the notifications and the
//! `capabilities` member a module of [`super::methods`] declares, and the [`Call`] a method is
//! handed — with the few helpers every feature shares. [`super::dispatch`] lists the features
//! and routes each message to one; the features import this module, never the dispatcher, so
//! the two do not import each other.

use serde_json::{json, Map, Value};

use super::link::Link;
use super::model::{
    Body, Era, RpcError, ServerInfo, Session, LEGACY_METHODS, META_SERVER_INFO, MODERN_METHODS,
};
use seneschal_core::context::Context;
use seneschal_model::versions::MCP_ALL_VERSIONS;

/// What a method is handed: the process, the connection, the request's era and its params
/// (an object; `{}` when the request has none).
pub struct Call<'a> {
    /// The process context.
    pub ctx: &'a Context,
    /// The connection's state (the legacy handshake).
    pub session: &'a mut Session,
    /// The era the request speaks.
    pub era: Era,
    /// The request's `params`, an object.
    pub params: &'a Value,
    /// The request's id.
    pub id: &'a Value,
    /// The way back to the client while the request is served.
    pub link: &'a Link,
    /// Every feature served ([`super::dispatch::FEATURES`]), for the lifecycle's announcement
    /// of the server's `capabilities`.
    pub features: &'static [&'static Feature],
}

/// One request method: its name and the function that answers it. Which era serves it is
/// the METHODS tables' business ([`seneschal_model::versions`]), checked before the method is found.
pub struct Method {
    /// The JSON-RPC method name.
    pub name: &'static str,
    /// Answers one request.
    pub answer: fn(&mut Call<'_>) -> Result<Body, RpcError>,
}

/// One notification a client may send: its name and what it changes (never answered).
pub struct Notification {
    /// The JSON-RPC method name, `notifications/...`.
    pub name: &'static str,
    /// Takes note of one notification.
    pub note: fn(&Context, &mut Session),
}

/// A member of the server's `capabilities`: its name and its value.
pub struct Capability {
    /// The member's name (`tools`, `resources`, ...).
    pub name: &'static str,
    /// Its value.
    /// Its value in an era.
    pub value: fn(Era) -> Value,
}

/// One feature of the protocol: the member it adds to the server's `capabilities` (in
/// `initialize` and `server/discover`), its requests and its notifications.
pub struct Feature {
    /// The `capabilities` member and its value, when the feature announces one.
    pub capability: Option<Capability>,
    /// The requests it answers.
    pub methods: &'static [Method],
    /// The notifications it takes.
    pub notifications: &'static [Notification],
}

/// The server's `capabilities` as one era announces them: the members of the `features` whose
/// methods that era's METHODS table lists (the tasks extension, served to 2026-07-28 requests
/// only, is not announced by `initialize`).
pub fn capabilities_in(features: &[&Feature], era: Era) -> Map<String, Value> {
    let table = match era {
        Era::Legacy => LEGACY_METHODS,
        Era::Modern => MODERN_METHODS,
    };
    features
        .iter()
        .filter(|f| {
            f.methods.is_empty()
                || f.methods.iter().any(|m| table.contains(&m.name))
                || f.capability
                    .as_ref()
                    .is_some_and(|c| SENT_IN_EVERY_ERA.contains(&c.name))
        })
        .filter_map(|f| f.capability.as_ref())
        .map(|c| (c.name.to_string(), (c.value)(era)))
        .collect()
}

/// The `capabilities` members that announce what the server sends rather than what it answers,
/// so every era announces them whether it serves their methods or not: `logging` (the log
/// messages of a call, `notifications/message`; a 2026-07-28 request names its level in its
/// own `_meta`, an initialize-era connection sets it with `logging/setLevel`).
const SENT_IN_EVERY_ERA: &[&str] = &["logging"];

/// Adds the modern fields every result carries: `resultType`, the server in `_meta`, and
/// the cache hints of lists and reads.
pub fn modern_result(method: &str, mut v: Value) -> Value {
    let obj = v.as_object_mut().expect("results are objects");
    obj.insert("resultType".into(), json!("complete"));
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("_meta is an object");
    meta.insert(
        META_SERVER_INFO.into(),
        serde_json::to_value(ServerInfo::THIS).expect("serializes"),
    );
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
