//! A `tools/call` result as the wire carries it: a success assembled by bytes, a failure as a
//! tool result (never a JSON-RPC error). `tools` answers calls with it and `tasks` a task's
//! outcome, and it imports neither, so the two do not import each other both ways.

use std::sync::OnceLock;

use serde_json::Value;

use super::super::model::{
    CallToolError, Era, ServerInfo, TextContent, META_ERROR, META_SERVER_INFO,
};
use crate::error::CapabilityError;

/// A successful `CallToolResult` assembled by bytes: the answer is serialized once and used
/// both as `structuredContent` and, escaped, as the first text block (the modern era's fields
/// in front, as the dispatcher would add them). The content blocks a capability declares
/// (its answer's `content` array, each item in MCP's wire shape) follow that text block.
pub(super) fn success_bytes(v: &Value, blocks: Option<&Value>, era: Era) -> String {
    let text = serde_json::to_string(v).expect("values serialize");
    // Room for the text twice, its quotes escaped (a JSON text rarely has one in two bytes a
    // quote), the fields around them and the envelope of the answer (put in front of these
    // bytes without a copy when it fits: `dispatch::response`).
    let fields = 96
        + if era == Era::Modern {
            64 + server_info().len()
        } else {
            0
        };
    let mut out = String::with_capacity(2 * text.len() + text.len() / 2 + fields + ENVELOPE);
    out.push('{');
    if era == Era::Modern {
        out.push_str("\"resultType\":\"complete\",\"_meta\":{\"");
        out.push_str(META_SERVER_INFO);
        out.push_str("\":");
        out.push_str(server_info());
        out.push_str("},");
    }
    let blocks: &[Value] = blocks.and_then(Value::as_array).map_or(&[], Vec::as_slice);
    // A capability whose declared blocks open with text speaks for itself: its blocks are the
    // content, and its JSON is the structured content alone.
    let own_text = blocks
        .first()
        .is_some_and(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    out.push_str("\"content\":[");
    if !own_text {
        out.push_str("{\"type\":\"text\",\"text\":");
        push_json_text_as_string(&mut out, &text);
        out.push('}');
    }
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 || !own_text {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(block).expect("values serialize"));
    }
    out.push_str("],\"structuredContent\":");
    out.push_str(&text);
    out.push_str(",\"isError\":false}");
    out
}

/// The room a result leaves for the envelope of its answer: `{"jsonrpc":"2.0","id":…,
/// "result":` and `}` (an id of up to 90 bytes), and the newline of stdio.
const ENVELOPE: usize = crate::limits::MCP_ENVELOPE;

/// This server's `ServerInfo` as JSON, serialized once.
fn server_info() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| serde_json::to_string(&ServerInfo::THIS).expect("serializes"))
}

/// Appends `text`, compact JSON as serde_json writes it, as a JSON string: the bytes
/// `serde_json::to_string(text)` gives, in one search for the two bytes to escape. Such a
/// text holds no control character (serde_json writes each inside a string as an escape, and
/// compact JSON has no whitespace between tokens), so `"` and `\` are all there is to escape.
pub(super) fn push_json_text_as_string(out: &mut String, text: &str) {
    debug_assert!(
        !text.bytes().any(|b| b < 0x20),
        "compact JSON has no control byte"
    );
    out.push('"');
    let mut from = 0;
    for at in memchr::memchr2_iter(b'"', b'\\', text.as_bytes()) {
        out.push_str(&text[from..at]);
        out.push('\\');
        from = at;
    }
    out.push_str(&text[from..]);
    out.push('"');
}

/// A failed `CallToolResult`: the message as its text, and in `_meta["seneschal/error"]` the
/// error's JSON ([`CapabilityError::to_json`]) without the message it already shows.
pub(super) fn error_result(e: CapabilityError) -> CallToolError {
    let Value::Object(mut error) = e.to_json() else {
        unreachable!("a capability error is an object")
    };
    error.remove("message");
    CallToolError {
        content: [TextContent {
            kind: "text",
            text: e.message,
        }],
        is_error: true,
        meta: [(META_ERROR.to_string(), Value::Object(error))]
            .into_iter()
            .collect(),
    }
}
