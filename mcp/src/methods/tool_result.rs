//! A `tools/call` result as the wire carries it: a success assembled by bytes, a failure as a
//! tool result (never a JSON-RPC error). `tools` answers calls with it and `tasks` a task's
//! outcome, and it imports neither, so the two do not import each other both ways.

use std::sync::OnceLock;

use serde_json::Value;

use super::super::model::{
    CallToolError, Era, ServerInfo, TextContent, META_ERROR, META_SERVER_INFO,
};
use seneschal_access::error::CapabilityError;

/// A successful `CallToolResult` assembled by bytes: the answer serialized once as
/// `structuredContent`, and its compact text rendering ([`text_of`]) as the first text block
/// (the modern era's fields in front, as the dispatcher would add them). The content blocks a capability declares
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
        out.push_str(&serde_json::to_string(&text_of(v)).expect("strings serialize"));
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
const ENVELOPE: usize = seneschal_access::limits::MCP_ENVELOPE;

/// This server's `ServerInfo` as JSON, serialized once.
fn server_info() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| serde_json::to_string(&ServerInfo::THIS).expect("serializes"))
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

/// The text block of an answer (ADR 0007): its structured content in a compact text an agent
/// reads, not a second copy of the JSON. One `key: value` line a field, nested fields indented
/// two spaces; a string as it is (quoted as JSON only where it would read as something else),
/// a multi-line one as an indented block after `key: |` (`|-` when it has no final newline);
/// an array of scalars as JSON; an array of records with one-line values as a table:
/// `key: N × a | b | c`, then one indented row a record (a field it lacks, an empty cell);
/// other items each after `- `.
pub(super) fn text_of(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(map) => fields(map, 0, &mut out),
        other => field("", other, 0, &mut out),
    }
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

fn fields(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (k, v) in map {
        field(k, v, indent, out);
    }
}

fn field(key: &str, v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let head = |out: &mut String| {
        out.push_str(&pad);
        if !key.is_empty() {
            out.push_str(key);
            out.push(':');
        }
    };
    match v {
        Value::String(s) if s.contains('\n') => {
            head(out);
            out.push_str(if s.ends_with('\n') { " |\n" } else { " |-\n" });
            for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                out.push_str(&pad);
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        Value::Object(map) if !map.is_empty() => {
            head(out);
            out.push('\n');
            fields(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() && items.iter().any(|i| !is_scalar(i)) => {
            head(out);
            if let Some(cols) = table_columns(items) {
                out.push_str(&format!(" {} × {}\n", items.len(), cols.join(" | ")));
                for item in items {
                    out.push_str(&pad);
                    out.push_str("  ");
                    // A field the record lacks is an empty cell (an empty string is `""`).
                    let cells: Vec<String> = cols
                        .iter()
                        .map(|c| item.get(c.as_str()).map(scalar).unwrap_or_default())
                        .collect();
                    out.push_str(&cells.join(" | "));
                    out.push('\n');
                }
            } else {
                out.push('\n');
                for item in items {
                    // `- ` opens an item, its first line on the same line.
                    let mut one = String::new();
                    match item {
                        Value::Object(map) => fields(map, indent + 4, &mut one),
                        other => field("", other, indent + 4, &mut one),
                    }
                    out.push_str(&pad);
                    out.push_str("  - ");
                    out.push_str(one.trim_start_matches(' '));
                }
            }
        }
        other => {
            head(out);
            if !key.is_empty() {
                out.push(' ');
            }
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
        && !v.as_str().is_some_and(|s| s.contains('\n'))
}

/// A value that fits a table's cell: a one-line scalar, or an array of them (as JSON).
fn is_cell(v: &Value) -> bool {
    is_scalar(v) || v.as_array().is_some_and(|a| a.iter().all(is_scalar))
}

/// The columns of an array of records that reads as a table: every item an object whose
/// fields are cells; the columns are every field any record has, in order.
fn table_columns(items: &[Value]) -> Option<Vec<String>> {
    let mut cols: Vec<String> = Vec::new();
    for item in items {
        for (k, v) in item.as_object()? {
            if !is_cell(v) {
                return None;
            }
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    Some(cols)
}

/// A scalar (or an empty or all-scalar array or object) on one line: a string as it is when
/// it cannot be read as anything else, JSON otherwise.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s)
            if !s.is_empty()
                && s.trim() == s
                && !s.contains(" | ")
                && !s.starts_with(['"', '[', '{', '|', '-'])
                && serde_json::from_str::<Value>(s).is_err() =>
        {
            s.clone()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::text_of;

    #[test]
    fn an_answer_reads_as_fields_tables_and_blocks() {
        let v = json!({
            "path": "src/a.rs", "truncated": false, "next": null, "tags": ["x", "y"],
            "lines": [{"line": 1, "text": "fn main() {"}, {"line": 2, "text": "}"}],
            "patch": "@@ -1 +1 @@\n-a\n+b\n", "tail": "no newline\nat end",
            "nested": {"count": 2, "empty": {}}, "looks": "true", "quote": "\"q\"", "blank": "",
        });
        let text = text_of(&v);
        let expected = "blank: \"\"\n\
                        lines: 2 × line | text\n  1 | fn main() {\n  2 | }\n\
                        looks: \"true\"\n\
                        nested:\n  count: 2\n  empty: {}\n\
                        next: null\n\
                        patch: |\n  @@ -1 +1 @@\n  -a\n  +b\n\
                        path: src/a.rs\n\
                        quote: \"\\\"q\\\"\"\n\
                        tags: [\"x\",\"y\"]\n\
                        tail: |-\n  no newline\n  at end\n\
                        truncated: false";
        assert_eq!(text, expected);
    }

    #[test]
    fn records_that_differ_are_items_not_a_table() {
        let v = json!({"files": [{"path": "a", "error": {"code": "not_found"}}, {"path": "b"}]});
        assert_eq!(
            text_of(&v),
            "files:\n  - error:\n      code: not_found\n    path: a\n  - path: b"
        );
        let v = json!({"rows": [{"a": 1, "b": ""}, {"a": 2}]});
        assert_eq!(text_of(&v), "rows: 2 × a | b\n  1 | \"\"\n  2 | ");
    }
}
