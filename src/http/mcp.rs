//! Streamable HTTP semantics of `POST /mcp`: one JSON-RPC message per POST, answered with
//! `application/json`; notifications → 202 with no body; the 2026-07-28 header checks.
//!
//! The HTTP server has already validated Origin and Host and answers GET/DELETE with 405 itself.
//! This is the one place where a JSON-RPC answer gets its HTTP status (the statuses the MCP
//! specification gives the binding); a capability error keeps its own code inside the
//! JSON-RPC result.
//! Each POST is stateless: a legacy request is served as if `initialize` had negotiated
//! the revision named by its `MCP-Protocol-Version` header (2025-03-26 when absent, as the
//! transport allows), and no session id is minted.

use serde_json::{Map, Value};

use crate::context::Context;
use crate::mcp::dispatch::{self, Answer};
use crate::mcp::model::{
    Era, Session, HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::mcp::wire;
use crate::versions::{MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS};

/// The revision a legacy POST without `MCP-Protocol-Version` is taken to speak.
const LEGACY_DEFAULT: &str = "2025-03-26";

/// An HTTP answer from the MCP projection, for the server to send as it is.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Extra headers (Content-Type included).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn json_reply(status: u16, answer: Answer) -> HttpReply {
    HttpReply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: answer.bytes,
    }
}

fn accepted() -> HttpReply {
    HttpReply {
        status: 202,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// The HTTP status of an answer.
fn status_of(answer: &Answer) -> u16 {
    match (answer.error, answer.era) {
        (None, _) => 200,
        (
            Some(
                PARSE_ERROR
                | INVALID_REQUEST
                | HEADER_MISMATCH
                | UNSUPPORTED_PROTOCOL_VERSION
                | MISSING_CLIENT_CAPABILITY,
            ),
            _,
        ) => 400,
        (Some(METHOD_NOT_FOUND), Some(Era::Modern)) => 404,
        (Some(_), _) => 200,
    }
}

/// The 2026-07-28 checks of `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the
/// body; the message of the first mismatch.
fn header_mismatch(
    headers: &[(String, String)],
    method: &str,
    params: &Map<String, Value>,
) -> Option<String> {
    let meta_version = params
        .get("_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    match (header(headers, "mcp-protocol-version"), meta_version) {
        (None, _) => return Some("header mismatch: MCP-Protocol-Version header is missing".into()),
        (Some(h), Some(b)) if h != b => {
            return Some(format!(
                "header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{b}'"
            ))
        }
        _ => {}
    }
    match header(headers, "mcp-method") {
        None => return Some("header mismatch: Mcp-Method header is missing".into()),
        Some(h) if h != method => {
            return Some(format!(
            "header mismatch: Mcp-Method header value '{h}' does not match body value '{method}'"
        ))
        }
        _ => {}
    }
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    let body = params
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header(headers, "mcp-name").map(wire::header_value) {
        None => Some("header mismatch: Mcp-Name header is missing".into()),
        Some(None) => Some("header mismatch: Mcp-Name header is not valid Base64 of UTF-8".into()),
        Some(Some(h)) if h != body => Some(format!(
            "header mismatch: Mcp-Name header value '{h}' does not match body value '{body}'"
        )),
        Some(Some(_)) if method == "tools/call" => param_header_mismatch(headers, body, params),
        Some(Some(_)) => None,
    }
}

/// The SEP-2243 check of a tool's header-carried arguments: every argument its input schema
/// marks `x-mcp-header: <Name>` that the body gives must come in the header `Mcp-Param-<Name>`
/// with the same value (a number or a boolean as its JSON text), and a header needs its
/// argument. Inside the `=?base64?…?=` wrapper the value is strict Base64 (padded, standard
/// alphabet); without the whole wrapper it is literal.
fn param_header_mismatch(
    headers: &[(String, String)],
    tool: &str,
    params: &Map<String, Value>,
) -> Option<String> {
    let (_, d) = crate::registry::by_tool(tool)?;
    if !d.input_schema.contains("x-mcp-header") {
        return None;
    }
    let schema: Value = serde_json::from_str(d.input_schema).ok()?;
    let arguments = params.get("arguments").and_then(Value::as_object);
    for (property, s) in schema.get("properties")?.as_object()? {
        let Some(name) = s.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let body = match arguments.and_then(|a| a.get(property)) {
            None | Some(Value::Null) => None,
            Some(Value::String(v)) => Some(v.clone()),
            Some(v) => Some(v.to_string()),
        };
        let raw = header(headers, &format!("mcp-param-{name}"));
        let why = match (raw, body) {
            (None, None) => continue,
            (None, Some(_)) => {
                format!("Mcp-Param-{name} header is missing while the body gives `{property}`")
            }
            (Some(_), None) => {
                format!("Mcp-Param-{name} header is present while the body gives no `{property}`")
            }
            (Some(raw), Some(b)) => match strict_header_value(raw) {
                None => format!("Mcp-Param-{name} header is not valid padded Base64 of UTF-8"),
                Some(h) if h != b => {
                    format!("Mcp-Param-{name} header value '{h}' does not match body value '{b}'")
                }
                Some(_) => continue,
            },
        };
        return Some(format!("header mismatch: {why}"));
    }
    None
}

/// A header value as [`wire::header_value`] reads it, but refusing Base64 that is not
/// canonically padded (length a multiple of 4, `=` only at the end).
fn strict_header_value(raw: &str) -> Option<String> {
    if let Some(inner) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        let data = inner.trim_end_matches('=');
        if inner.len() % 4 != 0 || inner.len() - data.len() > 2 || data.contains('=') {
            return None;
        }
    }
    wire::header_value(raw)
}

/// Answers one `POST /mcp`.
pub fn post(ctx: &Context, headers: &[(String, String)], body: &[u8]) -> HttpReply {
    let message: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return json_reply(
                400,
                dispatch::error_answer(PARSE_ERROR, format!("parse error: {e}")),
            )
        }
    };
    let is_request = message.get("method").is_some() && message.get("id").is_some();
    if is_request {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let empty = Map::new();
        let params = message
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let modern = params
            .get("_meta")
            .and_then(Value::as_object)
            .is_some_and(|m| {
                m.contains_key(META_PROTOCOL_VERSION) || m.contains_key(META_CLIENT_CAPABILITIES)
            });
        let header_version = header(headers, "mcp-protocol-version");
        if modern && method != "initialize" {
            if let Some(why) = header_mismatch(headers, method, params) {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                return json_reply(400, dispatch::error_for(&id, HEADER_MISMATCH, why));
            }
        } else if let Some(v) = header_version {
            if !MCP_LEGACY_VERSIONS.contains(&v) && !MCP_MODERN_VERSIONS.contains(&v) {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let mut a = dispatch::error_for(
                    &id,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    format!(
                        "unsupported protocol version `{v}` in the MCP-Protocol-Version header"
                    ),
                );
                a.era = None;
                return json_reply(400, a);
            }
        }
        let assumed = header_version
            .and_then(|v| MCP_LEGACY_VERSIONS.iter().copied().find(|l| *l == v))
            .or_else(|| header_version.is_none().then_some(LEGACY_DEFAULT));
        let mut session = match assumed {
            Some(v) if method != "initialize" => Session::assumed(v),
            _ => Session::default(),
        };
        // A 2026-07-28 request whose `_meta` is missing or incomplete is a bad request
        // (400), not merely a failed call: the envelope, not the method, is wrong.
        let envelope_invalid = matches!(
            dispatch::classify(&session, method, params),
            (Some(Era::Modern), Err(ref e)) if e.code == INVALID_PARAMS
        );
        let answer = dispatch::handle_value(
            ctx,
            &mut session,
            &crate::mcp::link::Link::closed(),
            message,
        )
        .expect("a request is always answered");
        let status = if envelope_invalid {
            400
        } else {
            status_of(&answer)
        };
        return json_reply(status, answer);
    }
    let mut session = Session::default();
    match dispatch::handle_value(
        ctx,
        &mut session,
        &crate::mcp::link::Link::closed(),
        message,
    ) {
        // Notifications and client responses are accepted without a body.
        None => accepted(),
        // A message that is neither a request nor a notification is a bad request.
        Some(answer) => json_reply(400, answer),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::post as http_post;
    use super::*;
    use crate::policy::Effect;

    fn ctx(effect: Effect) -> Arc<Context> {
        Arc::new(Context::new(std::env::temp_dir(), effect))
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn modern(id: u64, method: &str, mut params: Value) -> Vec<u8> {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
        });
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .unwrap()
    }

    fn body(r: &HttpReply) -> Value {
        serde_json::from_slice(&r.body).unwrap()
    }

    fn content_type(r: &HttpReply) -> Option<&str> {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_modern_call_with_matching_headers_is_answered_as_json() {
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "capabilities_list"),
        ]);
        let r = http_post(
            &ctx(Effect::RepositoryWrite),
            &hs,
            &modern(1, "tools/call", json!({"name": "capabilities_list"})),
        );
        assert_eq!(r.status, 200);
        assert_eq!(content_type(&r), Some("application/json"));
        let b = body(&r);
        assert_eq!(b["id"], 1);
        assert_eq!(b["result"]["resultType"], "complete");
        assert_eq!(b["result"]["isError"], false);
    }

    #[test]
    fn a_base64_name_header_is_decoded_before_comparison() {
        // "capabilities_list" in Base64.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?Y2FwYWJpbGl0aWVzX2xpc3Q=?="),
        ]);
        let r = http_post(
            &ctx(Effect::RepositoryWrite),
            &hs,
            &modern(2, "tools/call", json!({"name": "capabilities_list"})),
        );
        assert_eq!(r.status, 200, "{:?}", body(&r));
    }

    #[test]
    fn header_mismatches_are_400_with_32020() {
        let c = ctx(Effect::RepositoryWrite);
        type Case = (Vec<(String, String)>, Vec<u8>, &'static str);
        let cases: Vec<Case> = vec![
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list"),
                ]),
                modern(3, "tools/call", json!({"name": "capabilities_list"})),
                "Mcp-Method",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "server_status"),
                ]),
                modern(4, "tools/call", json!({"name": "capabilities_list"})),
                "Mcp-Name",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "resources/read"),
                ]),
                modern(
                    5,
                    "resources/read",
                    json!({"uri": "seneschal://capabilities"}),
                ),
                "Mcp-Name header is missing",
            ),
            (
                h(&[("mcp-method", "tools/list")]),
                modern(6, "tools/list", json!({})),
                "MCP-Protocol-Version header is missing",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("mcp-method", "tools/list"),
                ]),
                modern(7, "tools/list", json!({})),
                "does not match body value '2026-07-28'",
            ),
        ];
        for (hs, b, needle) in cases {
            let r = http_post(&c, &hs, &b);
            let v = body(&r);
            assert_eq!(r.status, 400, "{v}");
            assert_eq!(v["error"]["code"], HEADER_MISMATCH, "{v}");
            assert!(
                v["error"]["message"].as_str().unwrap().contains(needle),
                "{v} lacks {needle}"
            );
            assert!(v["id"].is_number());
        }
    }

    #[test]
    fn statuses_follow_the_error_class() {
        let c = ctx(Effect::RepositoryWrite);
        let r = http_post(&c, &[], b"{not json");
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (400, Some(PARSE_ERROR))
        );

        let mut b: Value = serde_json::from_slice(&modern(8, "tools/list", json!({}))).unwrap();
        b["params"]["_meta"][META_PROTOCOL_VERSION] = json!("1900-01-01");
        let hs = h(&[
            ("mcp-protocol-version", "1900-01-01"),
            ("mcp-method", "tools/list"),
        ]);
        let r = http_post(&c, &hs, &serde_json::to_vec(&b).unwrap());
        let v = body(&r);
        assert_eq!(
            (r.status, v["error"]["code"].as_i64()),
            (400, Some(UNSUPPORTED_PROTOCOL_VERSION))
        );
        // The list itself is pinned by tests/it/mcp_stdio.rs.
        assert_eq!(
            v["error"]["data"]["supported"],
            json!(dispatch::supported_versions())
        );
        assert_eq!(v["error"]["data"]["requested"], "1900-01-01");

        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "logging/setLevel"),
        ]);
        let r = http_post(
            &c,
            &hs,
            &modern(9, "logging/setLevel", json!({"level": "info"})),
        );
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (404, Some(METHOD_NOT_FOUND))
        );
    }

    #[test]
    fn an_incomplete_modern_meta_is_400_and_a_removed_method_is_404() {
        // Found by the conformance suite (server-stateless, SEP-2575).
        let c = ctx(Effect::RepositoryWrite);
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ]);
        for meta in [
            None,
            Some(json!({META_CLIENT_CAPABILITIES: {}})),
            Some(json!({META_PROTOCOL_VERSION: "2026-07-28"})),
        ] {
            let mut params = json!({});
            if let Some(m) = &meta {
                params["_meta"] = m.clone();
            }
            let b =
                json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": params});
            let r = http_post(&c, &hs, &serde_json::to_vec(&b).unwrap());
            let v = body(&r);
            assert_eq!(
                (r.status, v["error"]["code"].as_i64()),
                (400, Some(INVALID_PARAMS)),
                "{meta:?}: {v}"
            );
            assert_eq!(v["id"], 101);
        }
        // A failed call inside a well-formed request stays a 200 answer.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "no_such_tool"),
        ]);
        let r = http_post(
            &c,
            &hs,
            &modern(3, "tools/call", json!({"name": "no_such_tool"})),
        );
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (200, Some(INVALID_PARAMS))
        );
        // `initialize` with only the modern `_meta` is a removed method of 2026-07-28.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "initialize"),
        ]);
        let r = http_post(&c, &hs, &modern(4, "initialize", json!({})));
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (404, Some(METHOD_NOT_FOUND))
        );
        // With its `protocolVersion` it is still the legacy handshake.
        let b = json!({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}});
        let r = http_post(&c, &[], &serde_json::to_vec(&b).unwrap());
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["result"]["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn notifications_are_202_with_an_empty_body() {
        let c = ctx(Effect::RepositoryWrite);
        let r = http_post(
            &c,
            &[],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(r.status, 202);
        assert!(r.body.is_empty());
        let r = http_post(
            &c,
            &[],
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        assert_eq!(r.status, 202);
    }

    #[test]
    fn legacy_posts_are_served_without_a_session() {
        let c = ctx(Effect::RepositoryWrite);
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let r = http_post(&c, &[], init);
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["result"]["protocolVersion"], "2025-06-18");
        assert!(!r
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")));

        let hs = h(&[("mcp-protocol-version", "2025-06-18")]);
        let r = http_post(
            &c,
            &hs,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        );
        assert_eq!(r.status, 200);
        let v = body(&r);
        assert!(v["result"]["tools"].is_array());
        assert!(v["result"].get("resultType").is_none());

        let hs = h(&[("mcp-protocol-version", "1999-01-01")]);
        let r = http_post(
            &c,
            &hs,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        );
        assert_eq!(r.status, 400);
    }

    #[test]
    fn a_narrow_profile_lists_only_what_it_allows() {
        let hs = h(&[("mcp-protocol-version", "2025-11-25")]);
        let r = http_post(
            &ctx(Effect::Read),
            &hs,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        let v = body(&r);
        for t in v["result"]["tools"].as_array().unwrap() {
            assert_eq!(t["_meta"]["seneschal/effect"], "read");
        }
    }
}
