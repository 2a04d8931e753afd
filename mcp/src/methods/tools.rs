//! Tools: `tools/list` from the bytes the build produced for the profile and era, and
//! `tools/call` through the executor (a capability error is a tool result, never a
//! JSON-RPC error).

use std::sync::Arc;

use serde_json::Value;

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::model::{
    default_json, parse, Body, CallToolParams, Era, ListChanged, ListParams, RpcError,
};
use super::no_cursor;
pub(super) use super::tool_result::{drop_apart, error_result, success_bytes, Early};
use crate::mrtr::Round;
use crate::peer::McpPeer;
use seneschal_access::transport::Transport;
use seneschal_core::execute::execute_index;
use seneschal_core::registry::{self, projections};
use seneschal_model::dialect::Dialect;

/// Tools: the list is fixed for the binary, so no change is announced.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "tools",
        value: |_| default_json::<ListChanged>(),
    }),
    methods: &[
        Method {
            name: "tools/list",
            answer: list,
        },
        Method {
            name: "tools/call",
            answer: call,
        },
    ],
    notifications: &[],
};

/// `tools/list`: the build's compact bytes of this profile and era, sent as they are.
fn list(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params = ListParams::of(call.params);
    // Every tool fits on one page, so no cursor of ours exists.
    no_cursor(params.cursor.as_ref(), "tools/list")?;
    let profile = call.ctx.profile();
    let bytes = match call.era {
        Era::Legacy => projections::mcp_tools_legacy(profile),
        Era::Modern => projections::mcp_tools_modern(profile),
    };
    Ok(Body::Raw(match call.ctx.schema_dialect {
        None => bytes,
        Some(dialect) => in_dialect(bytes, dialect),
    }))
}

/// A `tools/list` result with each input schema rendered in `dialect` (ADR 0008), made once
/// a process from the build's bytes and kept for the process's life, like those bytes.
fn in_dialect(bytes: &'static str, dialect: Dialect) -> &'static str {
    type Rendered = Vec<(usize, Dialect, &'static str)>;
    static DONE: std::sync::Mutex<Rendered> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    // The build's bytes of a profile and era are one static string each: its address names it.
    let key = bytes.as_ptr() as usize;
    if let Some((_, _, text)) = done.iter().find(|(k, d, _)| *k == key && *d == dialect) {
        return text;
    }
    let mut list: Value = serde_json::from_str(bytes).expect("the build's tools/list is JSON");
    for tool in list["tools"].as_array_mut().into_iter().flatten() {
        let schema = dialect.render(&tool["inputSchema"]);
        tool["inputSchema"] = schema;
    }
    let text: &'static str = Box::leak(list.to_string().into_boxed_str());
    done.push((key, dialect, text));
    text
}

/// `tools/call`: an unknown tool is a protocol error; every capability error is a tool result.
fn call(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params: CallToolParams = parse(
        call.params,
        "invalid params: `tools/call` needs `params.name`, a string",
    )?;
    let Some((index, d)) = registry::by_tool(&params.name) else {
        return Err(
            RpcError::invalid_params(format!("unknown tool: `{}`", params.name))
                .with_data(serde_json::json!({"name": params.name})),
        );
    };
    let mut args = params
        .arguments
        .unwrap_or_else(|| Value::Object(Default::default()));
    // Arguments given in a dialect's rendering, read back in the published schema's terms.
    if let Some(dialect) = call.ctx.schema_dialect {
        let schema: Value = serde_json::from_str(d.input_schema).expect("schemas are JSON");
        args = match dialect.arguments(&schema, args) {
            Ok(a) => a,
            Err((pointer, what)) => {
                let e = seneschal_access::error::CapabilityError::invalid_input(format!(
                    "the argument at {pointer} {what}"
                ))
                .at(&pointer);
                return Ok(Body::of(&error_result(e)));
            }
        };
    }
    if let Some(answer) = super::tasks::intercept(call, index, d, &args) {
        return answer;
    }
    // A modern call asks its client through an input-required result (SEP-2322).
    let round = match call.era {
        Era::Legacy => None,
        Era::Modern => Some(Arc::new(Round::open(
            "tools/call",
            &params.name,
            &args,
            call.params,
        )?)),
    };
    let peer = match &round {
        None => McpPeer::of(call),
        Some(r) => McpPeer::of(call).asking_through(Arc::clone(r)),
    };
    // The call's peer is passed to the executor, and kept to the answer, so that a failure
    // is logged to the client through it.
    let peer: Arc<dyn seneschal_core::interact::Peer> = Arc::new(peer);
    // The answer's items are rendered as the executor discloses them (`Early`).
    let early = Arc::new(Early::default());
    let outcome = execute_index(
        call.ctx,
        index,
        args,
        seneschal_core::execute::Caller::new(Transport::Mcp, Arc::clone(&peer))
            .rendering(Arc::clone(&early) as _),
    );
    // Whatever the call made of an answer it lacks, the client is asked for it.
    if let Some(round) = round.as_deref() {
        if let Some(asking) = round.input_required() {
            return Ok(Body::Owned(asking));
        }
        // A call that failed for want of a capability the client did not declare: -32021,
        // except an approval nobody could be asked for, which is the tool result of its
        // refusal (`isError`, code `not_approved`): what a tool error is for, and what a
        // client reads without knowing the extension's error (the TypeScript SDK 2.x lost
        // the code of a -32021).
        if let Some(e) = outcome
            .as_ref()
            .err()
            .filter(|cause| cause.code != seneschal_access::error::ErrorCode::NotApproved)
            .and_then(|cause| round.missing_capabilities(cause))
        {
            return Err(e);
        }
    }
    match outcome {
        Ok(v) => {
            let own = file_text_blocks(d.id, &v);
            let blocks = own.as_ref().or_else(|| {
                (!d.content_blocks.is_empty())
                    .then(|| v.get(CONTENT_FIELD))
                    .flatten()
            });
            let bytes = success_bytes(&v, blocks, call.era, Some(&early));
            // An answer of items given apart (thousands of records) is freed while it travels.
            if early.held() {
                drop_apart(v);
            }
            Ok(Body::Owned(bytes))
        }
        Err(e) => {
            super::logging::call_failed(&*peer, &params.name, &e);
            Ok(Body::of(&error_result(e)))
        }
    }
}

/// The output field holding the content blocks a capability declares (`content_blocks`).
const CONTENT_FIELD: &str = "content";

/// The content blocks of a `files.read` answer (already redacted, as every answer the
/// executor returns): a text block holding the file's text itself, or a sentence for a binary
/// file, then the answer without its text as JSON (path, digest, window, `next_offset`), for a
/// client that shows its model the blocks alone. With `paths`, a block per file, opened by a
/// `==> path <==` line, then the JSON. `structuredContent` stays the whole answer.
fn file_text_blocks(id: &str, v: &Value) -> Option<Value> {
    if id != "files.read" {
        return None;
    }
    let text_of = |f: &Value| -> String {
        if let Some(text) = f.get("content").and_then(Value::as_str) {
            return text.to_string();
        }
        if let Some(message) = f.pointer("/error/message").and_then(Value::as_str) {
            return message.to_string();
        }
        let size = f.get("size").and_then(Value::as_u64).unwrap_or(0);
        format!("A binary file of {size} bytes: its content is not shown.")
    };
    let block = |text: String| serde_json::json!({"type": "text", "text": text});
    let mut blocks = Vec::new();
    let mut rest = v.clone();
    match v.get("files").and_then(Value::as_array) {
        Some(files) if !files.is_empty() => {
            for f in files {
                let path = f.get("path").and_then(Value::as_str).unwrap_or_default();
                blocks.push(block(format!("==> {path} <==\n{}", text_of(f))));
            }
            if let Some(files) = rest.get_mut("files").and_then(Value::as_array_mut) {
                for f in files.iter_mut().filter_map(Value::as_object_mut) {
                    f.remove("content");
                }
            }
        }
        _ => blocks.push(block(text_of(v))),
    }
    if let Some(o) = rest.as_object_mut() {
        o.remove("content");
    }
    blocks.push(block(serde_json::to_string(&rest).ok()?));
    Some(Value::Array(blocks))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::feature::modern_result;
    use super::super::super::model::META_SERVER_INFO;
    use super::*;
    use seneschal_access::error::CapabilityError;
    use seneschal_access::error::ErrorCode;
    use seneschal_model::policy::Effect;
    use seneschal_model::versions::SERVER_NAME;

    #[test]
    fn byte_assembled_success_equals_the_value_form() {
        let v = json!({"a": "quote \" and \\ and \n", "b": [1, 2, {"c": null}]});
        let value_form = json!({
            "content": [{"type": "text", "text": super::super::tool_result::text_of(&v)}],
            "structuredContent": v,
            "isError": false,
        });
        let legacy: Value =
            serde_json::from_str(&success_bytes(&v, None, Era::Legacy, None)).unwrap();
        assert_eq!(legacy, value_form);
        let modern: Value =
            serde_json::from_str(&success_bytes(&v, None, Era::Modern, None)).unwrap();
        assert_eq!(modern, modern_result("tools/call", value_form));
    }

    #[test]
    fn a_success_leaves_room_for_the_envelope_of_its_answer() {
        // What the stdio answer puts in front of the result, for a long id.
        let envelope =
            r#"{"jsonrpc":"2.0","id":"0123456789012345678901234567890123456789","result":}"#;
        let status = json!({"name": "seneschal", "allowed_effects": ["read", "process_state"],
            "capabilities": {"total": 60, "by_effect": {"read": 40}}, "uptime_ms": 12, "repo": "/a/b"});
        for era in [Era::Legacy, Era::Modern] {
            for v in [status.clone(), json!({}), json!({"q": "\"\"\"\"\"\"\"\""})] {
                let out = success_bytes(&v, None, era, None);
                assert!(out.capacity() - out.len() > envelope.len(), "{out}");
            }
        }
    }

    #[test]
    fn declared_blocks_that_open_with_text_stand_for_the_json_text_block() {
        let v = json!({"content": [{"type": "text", "text": "Hello, World!"}], "n": 1});
        let r: Value =
            serde_json::from_str(&success_bytes(&v, v.get("content"), Era::Legacy, None)).unwrap();
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": "Hello, World!"}])
        );
        assert_eq!(r["structuredContent"], v);
    }

    #[test]
    fn declared_blocks_follow_the_json_text_block() {
        let image = json!({"type": "image", "data": "AAE=", "mimeType": "image/png"});
        let resource = json!({"type": "resource", "resource": {"uri": "a://b", "mimeType": "text/plain", "text": "t"}});
        let v = json!({"content": [image, resource]});
        let r: Value =
            serde_json::from_str(&success_bytes(&v, v.get("content"), Era::Legacy, None)).unwrap();
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": super::super::tool_result::text_of(&v)}, image, resource])
        );
        assert_eq!(r["structuredContent"], v);
    }

    #[test]
    fn every_capability_error_becomes_an_is_error_result() {
        // refused, unsupported and conflict cannot be reached over pipes while every tool is a
        // read; the mapping is the same function for every code, checked here for each.
        for code in ErrorCode::ALL {
            let e = CapabilityError::new(code, format!("why {}", code.as_str()))
                .at("/field")
                .with_data(json!({"current": "abc"}));
            let r = serde_json::to_value(error_result(e)).unwrap();
            assert_eq!(r["isError"], true);
            assert_eq!(r["content"][0]["text"], format!("why {}", code.as_str()));
            assert_eq!(
                r["_meta"]["seneschal/error"],
                json!({"code": code.as_str(), "pointer": "/field", "data": {"current": "abc"}})
            );
            assert!(r.get("structuredContent").is_none());
        }
        let r = serde_json::to_value(error_result(CapabilityError::refused("no"))).unwrap();
        assert_eq!(r["_meta"]["seneschal/error"], json!({"code": "refused"}));
    }

    #[test]
    fn each_era_lists_the_same_tools_with_its_own_fields() {
        for effect in Effect::ALL {
            let profile = seneschal_model::toolset::Profile::of_effect(effect);
            let legacy = projections::mcp_tools_legacy(profile);
            let modern = projections::mcp_tools_modern(profile);
            let l: Value = serde_json::from_str(legacy).unwrap();
            let m: Value = serde_json::from_str(modern).unwrap();
            // The full profile's legacy bytes are the committed projection, compacted.
            if effect == Effect::RepositoryWrite {
                let pretty = projections::MCP_TOOLS;
                assert_eq!(l, serde_json::from_str::<Value>(pretty).unwrap());
            }
            assert_eq!(legacy, serde_json::to_string(&l).unwrap());
            assert_eq!(l["tools"], m["tools"]);
            assert_eq!(
                m,
                modern_result(
                    "tools/list",
                    json!({"tools": l["tools"], "_meta": l["_meta"], "ttlMs": 300_000, "cacheScope": "public"})
                )
            );
            assert_eq!(m["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
            assert!(modern.starts_with("{\"resultType\":\"complete\",\"ttlMs\":300000,"));
            assert!(!modern.contains('\n') && !legacy.contains('\n'));
        }
    }
}
