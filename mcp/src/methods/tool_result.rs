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
pub(super) fn success_bytes(
    v: &Value,
    blocks: Option<&Value>,
    era: Era,
    early: Option<&Early>,
) -> String {
    let rows = early.map(|e| {
        e.0.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    let rows = rows.as_deref().and_then(|r| r.of(v));
    let out = assemble(v, blocks, era, rows);
    // What was rendered early is what the answer renders to: every debug build (every test
    // that reads a result) holds the two equal.
    #[cfg(debug_assertions)]
    if rows.is_some() {
        // Said short: the two renderings may be megabytes, and a panic's message is written
        // to stderr and into the call's error.
        let whole = assemble(v, blocks, era, None);
        if let Some(at) = out.bytes().zip(whole.bytes()).position(|(a, b)| a != b) {
            panic!("early rows differ from the whole rendering at byte {at}");
        }
        assert_eq!(out.len(), whole.len(), "early rows differ in length");
    }
    out
}

/// [`success_bytes`], the field `rows` were rendered for written from them.
fn assemble(v: &Value, blocks: Option<&Value>, era: Era, rows: Option<(&str, &Rows)>) -> String {
    let blocks: &[Value] = blocks.and_then(Value::as_array).map_or(&[], Vec::as_slice);
    // A capability whose declared blocks open with text speaks for itself: its blocks are the
    // content, and its JSON is the structured content alone.
    let own_text = blocks
        .first()
        .is_some_and(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    // Every part is written into one buffer: the text rendering escaped as it is rendered
    // ([`Escaped`]), the structured content after it ([`crate::json`]); a large answer's
    // structured content is written on a thread of its own meanwhile. Room for the text
    // rendering and the JSON (each about the answer's strings), their escapes, the fields around
    // them and the envelope of the answer (put in front of these bytes without a copy when it
    // fits: `dispatch::response`).
    // Rows rendered early are measured as they are, not walked again.
    let early = rows.zip(v.as_object());
    let strings = match early {
        Some(((at, rows), map)) => {
            let rest: usize = map
                .iter()
                .filter(|(k, _)| *k != at)
                .map(|(k, v)| k.len() + strings_len(v))
                .sum();
            rest + (rows.json.len() + rows.text.as_ref().map_or(0, String::len)) / 2
        }
        None => strings_len(v),
    };
    let fields = 96
        + if era == Era::Modern {
            64 + server_info().len()
        } else {
            0
        };
    let mut out = String::with_capacity(2 * strings + strings / 2 + 1024 + fields + ENVELOPE);
    std::thread::scope(|scope| {
        let apart = (early.is_none() && strings >= seneschal_access::limits::MCP_RENDER_APART)
            .then(|| {
                scope.spawn(|| {
                    let mut json = String::with_capacity(strings + strings / 4 + 1024);
                    crate::json::write_value(&mut json, v);
                    json
                })
            });
        out.push('{');
        if era == Era::Modern {
            out.push_str("\"resultType\":\"complete\",\"_meta\":{\"");
            out.push_str(META_SERVER_INFO);
            out.push_str("\":");
            out.push_str(server_info());
            out.push_str("},");
        }
        out.push_str("\"content\":[");
        if !own_text {
            out.push_str("{\"type\":\"text\",\"text\":\"");
            let mut text = Escaped::new(&mut out);
            match early {
                Some(((at, rows), map)) if rows.text.is_some() => {
                    for (k, item) in map {
                        if k == at {
                            text.push_str(k);
                            text.push(':');
                            text.push_str(&table_head(rows.count, &rows.cols));
                            text.escaped(rows.text.as_deref().unwrap_or_default());
                        } else {
                            field(k, item, 0, &mut text);
                        }
                    }
                }
                _ => render(v, &mut text),
            }
            text.trim_end();
            out.push_str("\"}");
        }
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 || !own_text {
                out.push(',');
            }
            crate::json::write_value(&mut out, block);
        }
        out.push_str("],\"structuredContent\":");
        match (apart, early) {
            (Some(json), _) => out.push_str(&json.join().expect("writing JSON does not panic")),
            (None, Some(((at, rows), map))) => {
                crate::json::write_object_with(&mut out, map, at, &rows.json)
            }
            (None, None) => crate::json::write_value(&mut out, v),
        }
        out.push_str(",\"isError\":false}");
    });
    out
}

/// The bytes of the strings of `v`, object keys included: what its renderings are about.
fn strings_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(strings_len).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + strings_len(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

/// An answer's items rendered as the executor discloses them, while the handler reads on
/// ([`seneschal_core::parts::Rendition`]): each item's JSON, and, while every item fits the
/// table the first one opens (its keys, each value a cell), the table's rows, escaped as a
/// JSON string's contents. [`success_bytes`] writes them in place of the answer's array when
/// it holds exactly the items given (its field, their number), and renders the whole answer
/// otherwise; the bytes are the same either way.
#[derive(Default)]
pub(super) struct Early(std::sync::Mutex<Rows>);

#[derive(Default)]
pub(super) struct Rows {
    field: Option<&'static str>,
    count: usize,
    /// The table's columns: the first item's keys.
    cols: Vec<String>,
    /// The rows, each `  cell | cell` and an escaped line break; none once an item does not
    /// fit the table.
    text: Option<String>,
    /// The items as JSON, separated by commas.
    json: String,
    /// Whether items of a second array were given: nothing is used then.
    mixed: bool,
}

impl Rows {
    /// The field these rows render in `v`, when `v` holds them there: an array of exactly the
    /// items given.
    fn of(&self, v: &Value) -> Option<(&'static str, &Rows)> {
        let field = self.field.filter(|_| !self.mixed)?;
        let held = v.get(field)?.as_array()?;
        (self.count > 0 && held.len() == self.count).then_some((field, self))
    }
}

impl Early {
    /// Whether any item was given.
    pub(super) fn held(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .count
            > 0
    }
}

/// Drops `v` on a thread kept for it: freeing an answer of thousands of records (`repo.log`'s
/// 1,000 commits are about 15,000 allocations) is work the answer's write need not wait for.
pub(super) fn drop_apart(v: Value) {
    static APART: OnceLock<Option<std::sync::mpsc::Sender<Value>>> = OnceLock::new();
    let apart = APART.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<Value>();
        std::thread::Builder::new()
            .name("seneschal-drop".into())
            .spawn(move || receive.into_iter().for_each(drop))
            .ok()
            .map(|_| send)
    });
    if let Some(Err(back)) = apart.as_ref().map(|send| send.send(v)) {
        drop(back.0);
    }
}

impl seneschal_core::parts::Rendition for Early {
    fn disclosed(&self, at: &'static str, items: &[Value]) {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Rows {
            field,
            count,
            cols,
            text,
            json,
            mixed,
        } = &mut *guard;
        if field.is_some_and(|f| f != at) || *mixed {
            // Items of a second array: the answer fails (`Parts::settle`), nothing is used.
            *mixed = true;
            return;
        }
        *field = Some(at);
        let mut row = String::new();
        for item in items {
            if *count > 0 {
                json.push(',');
            } else if let Some(map) = item.as_object() {
                *cols = map.keys().cloned().collect();
                *text = Some(String::new());
            }
            crate::json::write_value(json, item);
            match (item.as_object(), text.as_mut()) {
                (Some(map), Some(rows)) if same_keys(map, cols) && map.values().all(is_cell) => {
                    row.clear();
                    row.push_str("  ");
                    cells_into(map, &mut row);
                    row.push('\n');
                    crate::json::write_contents(rows, &row, "");
                }
                _ => *text = None,
            }
            *count += 1;
        }
    }
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
#[cfg(test)]
pub(super) fn text_of(v: &Value) -> String {
    let mut out = String::new();
    render(v, &mut out);
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Where a text rendering is written: a `String` as it is, or, [`Escaped`], into a JSON
/// string's contents as it is written (the rendering then is never a text of its own).
trait Sink {
    fn push_str(&mut self, s: &str);

    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// The lines of `s` (less one final line break), each after `prefix` and followed by a
    /// line break.
    fn block(&mut self, s: &str, prefix: &str) {
        for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
            self.push_str(prefix);
            self.push_str(line);
            self.push('\n');
        }
    }
}

impl Sink for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
}

/// A text rendering written as the contents of a JSON string, escaped as it goes, its final
/// line breaks counted so that [`Escaped::trim_end`] takes them off as [`text_of`] does.
struct Escaped<'a> {
    out: &'a mut String,
    newlines: usize,
}

impl<'a> Escaped<'a> {
    fn new(out: &'a mut String) -> Self {
        Escaped { out, newlines: 0 }
    }

    /// Appends `escaped`, already a JSON string's contents, which ends in one line break.
    fn escaped(&mut self, escaped: &str) {
        self.out.push_str(escaped);
        self.newlines = 1;
    }

    /// Takes off the final line breaks (`\n` each, escaped).
    fn trim_end(self) {
        let len = self.out.len() - 2 * self.newlines;
        self.out.truncate(len);
    }
}

impl Sink for Escaped<'_> {
    fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        crate::json::write_contents(self.out, s, "");
        let kept = s.trim_end_matches('\n').len();
        self.newlines = if kept == 0 {
            self.newlines + s.len()
        } else {
            s.len() - kept
        };
    }

    fn block(&mut self, s: &str, prefix: &str) {
        // Each line break of the block escaped with the next line's prefix after it: one pass
        // over the block's bytes.
        crate::json::write_contents(self.out, prefix, "");
        crate::json::write_contents(self.out, s.strip_suffix('\n').unwrap_or(s), prefix);
        self.out.push_str("\\n");
        self.newlines = 1;
    }
}

/// [`text_of`]'s rendering of `v` into `out`, its final line breaks kept.
fn render(v: &Value, out: &mut impl Sink) {
    match v {
        Value::Object(map) => fields(map, 0, out),
        other => field("", other, 0, out),
    }
}

fn fields(map: &serde_json::Map<String, Value>, indent: usize, out: &mut impl Sink) {
    for (k, v) in map {
        field(k, v, indent, out);
    }
}

fn field(key: &str, v: &Value, indent: usize, out: &mut impl Sink) {
    let pad = " ".repeat(indent);
    let head = |out: &mut dyn FnMut(&str)| {
        out(&pad);
        if !key.is_empty() {
            out(key);
            out(":");
        }
    };
    match v {
        Value::String(s) if has_newline(s) => {
            head(&mut |t| out.push_str(t));
            out.push_str(if s.ends_with('\n') { " |\n" } else { " |-\n" });
            out.block(s, &format!("{pad}  "));
        }
        Value::Object(map) if !map.is_empty() => {
            head(&mut |t| out.push_str(t));
            out.push('\n');
            fields(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() && items.iter().any(|i| !is_scalar(i)) => {
            head(&mut |t| out.push_str(t));
            if let Some((cols, uniform)) = table_columns(items) {
                out.push_str(&table_head(items.len(), &cols));
                let mut row = String::new();
                for item in items {
                    // A row is rendered whole, then written: one write a row.
                    row.clear();
                    row.push_str(&pad);
                    row.push_str("  ");
                    // A field the record lacks is an empty cell (an empty string is `""`).
                    let map = item.as_object().expect("a table's rows are records");
                    if uniform || same_keys(map, &cols) {
                        cells_into(map, &mut row);
                    } else {
                        for (i, c) in cols.iter().enumerate() {
                            if i > 0 {
                                row.push_str(" | ");
                            }
                            if let Some(cell) = map.get(c.as_str()) {
                                scalar_into(cell, &mut row);
                            }
                        }
                    }
                    row.push('\n');
                    out.push_str(&row);
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
            head(&mut |t| out.push_str(t));
            if !key.is_empty() {
                out.push(' ');
            }
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// What follows a table's key: its number of rows and its columns, then a line break.
fn table_head(rows: usize, cols: &[String]) -> String {
    format!(" {rows} × {}\n", cols.join(" | "))
}

/// A record's cells, its values in order, separated by ` | `.
fn cells_into(map: &serde_json::Map<String, Value>, row: &mut String) {
    for (i, cell) in map.values().enumerate() {
        if i > 0 {
            row.push_str(" | ");
        }
        scalar_into(cell, row);
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_)) && !v.as_str().is_some_and(has_newline)
}

/// A value that fits a table's cell: a one-line scalar, or an array of them (as JSON).
fn is_cell(v: &Value) -> bool {
    is_scalar(v) || v.as_array().is_some_and(|a| a.iter().all(is_scalar))
}

/// The columns of an array of records that reads as a table: every item an object whose
/// fields are cells; the columns are every field any record has, in order. And whether every
/// record has exactly those fields, in that order (the usual table: each row's cells are then
/// its values as they are).
fn table_columns(items: &[Value]) -> Option<(Vec<String>, bool)> {
    let mut cols: Vec<String> = Vec::new();
    let mut uniform = true;
    for (i, item) in items.iter().enumerate() {
        let map = item.as_object()?;
        if !map.values().all(is_cell) {
            return None;
        }
        // Records of one shape (the usual table) add no column.
        if !same_keys(map, &cols) {
            uniform = i == 0;
            for k in map.keys() {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
    }
    Some((cols, uniform))
}

/// Whether `s` holds a line break, found by the `memchr` crate (`str::contains`, asked of
/// every cell, was 7 % of the server's time after git exits for `repo.log` 1,000).
fn has_newline(s: &str) -> bool {
    memchr::memchr(b'\n', s.as_bytes()).is_some()
}

/// Whether `map`'s fields are `cols`, in order.
fn same_keys(map: &serde_json::Map<String, Value>, cols: &[String]) -> bool {
    map.len() == cols.len() && map.keys().zip(cols).all(|(k, c)| k == c)
}

/// A scalar (or an empty or all-scalar array or object) on one line: a string as it is when
/// it cannot be read as anything else, JSON otherwise.
fn scalar(v: &Value) -> String {
    let mut out = String::new();
    scalar_into(v, &mut out);
    out
}

/// [`scalar`], written at the end of `out`.
fn scalar_into(v: &Value, out: &mut String) {
    match v {
        Value::String(s)
            if !s.is_empty()
                && s.trim() == s
                && !holds_bar(s)
                && !s.starts_with(['"', '[', '{', '|', '-'])
                && !reads_as_json(s) =>
        {
            out.push_str(s)
        }
        Value::Number(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        // JSON, as `Value`'s `Display` writes it (`crate::json` is held to serde_json).
        other => crate::json::write_value(out, other),
    }
}

/// Whether `s` holds ` | `, the separator of a table's cells (found from its rare `|`: a
/// search of the three bytes is set up anew for every cell, and costs more than the cell).
fn holds_bar(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr_iter(b'|', b).any(|i| i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' '))
}

/// Whether `s` (trimmed, not opening a string, an array, an object or a negative number) is
/// JSON: a literal or a number (`0`, `12.5`, `1e-3`). The grammar of RFC 8259 less the sign,
/// which [`scalar_into`] has already ruled out (`reads_as_json_as_serde_json_parses` holds it
/// against serde_json's parser; a number past f64's range, which that parser refuses, reads as
/// a number here too, and is quoted).
fn reads_as_json(s: &str) -> bool {
    if matches!(s, "true" | "false" | "null") {
        return true;
    }
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    let Some(mut i) = (match b.first() {
        Some(b'0') => Some(1),
        Some(b'1'..=b'9') => digits(0),
        _ => None,
    }) else {
        return false;
    };
    if b.get(i) == Some(&b'.') {
        let Some(j) = digits(i + 1) else {
            return false;
        };
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let Some(j) = digits(i) else {
            return false;
        };
        i = j;
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{success_bytes, text_of, Era};

    /// The text block a result carries, rendered escaped as it is written, is the text
    /// rendering of the answer ([`text_of`]), and its structured content the answer, written
    /// on a thread or not: blocks with and without a final line break, empty lines, escapes,
    /// tables, items, nesting, and an answer large enough to be written apart.
    #[test]
    fn the_text_written_escaped_is_the_text_rendering() {
        let patch = "diff --git a/x b/x\n@@ -1 +1 @@\n-\"a\"\t\\n\n+b\u{1}é\n";
        let big = patch.repeat(seneschal_access::limits::MCP_RENDER_APART / patch.len() + 1);
        let values = [
            json!({"patch": patch, "files": [{"path": "x", "n": 1}, {"path": "y\\n", "n": 2}]}),
            json!({"a": "ends\n\n", "b": "\n", "c": "\n\nx", "d": "no break", "e": "x\n\n\n"}),
            json!({"items": [{"text": "two\nlines", "k": [1, 2]}, {"other": true}], "z": {}}),
            json!({"nested": {"deep": {"s": "a\r\nb\\", "t": ""}}, "list": ["a", "b\\"]}),
            json!({"trailing": "back\\"}),
            json!("top\nlevel\n"),
            json!({"patch": big, "rows": [{"a": "x", "b": "y"}, {"a": "\"", "b": "|"}]}),
        ];
        for v in &values {
            for era in [Era::Legacy, Era::Modern] {
                let result: Value =
                    serde_json::from_str(&success_bytes(v, None, era, None)).unwrap();
                assert_eq!(
                    result["content"][0]["text"],
                    Value::String(text_of(v)),
                    "{v}"
                );
                assert_eq!(&result["structuredContent"], v);
            }
        }
    }

    /// Items rendered as they are disclosed ([`super::Early`]) are written in place of the
    /// answer's array, and the result is the same bytes as the whole answer rendered after:
    /// a table of one shape (its rows used), a later row of another shape or a cell that is
    /// no cell (its JSON used, the text rendered whole), fewer items given than the answer
    /// holds or another field (nothing used).
    #[test]
    fn items_rendered_early_answer_as_the_whole_answer() {
        use seneschal_core::parts::Rendition;
        let commit =
            |i: usize| json!({"id": format!("{i:040x}"), "subject": format!("step | {i}"), "n": i});
        let table: Vec<Value> = (0..70).map(commit).collect();
        let mut reshaped = table.clone();
        reshaped[40] = json!({"id": "x", "extra": "column"});
        let mut multiline = table.clone();
        multiline[3]["subject"] = json!("two\nlines");
        let cases = [
            (table.clone(), "commits", 70, true, true),
            (reshaped, "commits", 70, true, false),
            (multiline, "commits", 70, true, false),
            (table.clone(), "commits", 69, false, false),
            (table.clone(), "other", 70, false, false),
        ];
        for (items, field, given, used, rows) in cases {
            let v = json!({"a": "before\n", "commits": items, "truncated": false, "z": [1]});
            let early = super::Early::default();
            for batch in items[..given].chunks(32) {
                early.disclosed(field, batch);
            }
            let guard = early.0.lock().unwrap();
            assert_eq!(guard.of(&v).is_some(), used, "{field} {given}");
            assert_eq!(guard.text.is_some() && used, rows, "{field} {given}");
            drop(guard);
            for era in [Era::Legacy, Era::Modern] {
                assert_eq!(
                    success_bytes(&v, None, era, Some(&early)),
                    success_bytes(&v, None, era, None)
                );
            }
        }
        // Items of a second array after the first (the executor then fails the call): no
        // item given is used, even when the answer holds as many as the first array's.
        let v = json!({"commits": table[..40].to_vec()});
        let early = super::Early::default();
        early.disclosed("commits", &table[..32]);
        early.disclosed("other", &table[32..36]);
        early.disclosed("commits", &table[36..40]);
        assert!(early.0.lock().unwrap().of(&v).is_none());
    }

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

    /// The cheap test of a cell that would read as JSON agrees with serde_json's parser on
    /// every string a cell can be (trimmed, not opening with a quote, a bracket, a brace or a
    /// minus).
    /// The cell separator is found from its `|` exactly where a substring search finds it:
    /// at either end, doubled, beside other blanks, after text outside ASCII.
    #[test]
    fn holds_bar_answers_as_a_substring_search() {
        for s in [
            "", "|", " | ", "a | b", "a|b", "a |b", "a| b", " |", "| ", "||", " || ", " | | ",
            "a  |  b", "\t|\t", "é | x", "x |", "| x", "a ||| b", "a || b",
        ] {
            assert_eq!(super::holds_bar(s), s.contains(" | "), "{s:?}");
        }
    }

    #[test]
    fn reads_as_json_as_serde_json_parses() {
        let mut samples: Vec<String> = [
            "0",
            "00",
            "01",
            "1",
            "10",
            "1.",
            "1.5",
            "1.5.5",
            ".5",
            "1e5",
            "1E+5",
            "1e-5",
            "1e",
            "1e+",
            "0.0e0",
            "0x10",
            "1_000",
            "12a",
            "true",
            "false",
            "null",
            "True",
            "nul",
            "truex",
            "NaN",
            "Infinity",
            "abc",
            "1 2",
            "2026-12-05",
            "v1.2",
            "1,2",
            "٣",
            "１",
            "18446744073709551616",
            "1e400",
            "0e",
            "0.e1",
            "9.99E-99",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every string of up to three characters from those a number is made of.
        let alphabet = ["0", "1", "9", ".", "e", "E", "+", "-", "x"];
        let mut level: Vec<String> = vec![String::new()];
        for _ in 0..3 {
            level = level
                .iter()
                .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
                .collect();
            samples.extend(level.iter().cloned());
        }
        for s in samples.iter().filter(|s| !s.starts_with('-')) {
            // serde_json refuses a number past f64's range; it reads as a number all the same,
            // so the cell quotes it.
            let parsed = serde_json::from_str::<serde_json::Value>(s).is_ok() || s == "1e400";
            assert_eq!(super::reads_as_json(s), parsed, "{s:?}");
        }
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
        // A field that comes later makes a column every earlier row has empty; an array cell
        // is written as JSON.
        let v = json!({"rows": [{"a": 1}, {"a": 2, "b": 3}, {"a": 4}]});
        assert_eq!(text_of(&v), "rows: 3 × a | b\n  1 | \n  2 | 3\n  4 | ");
        let v = json!({"rows": [{"a": 1, "b": [2, "x"]}, {"a": 3, "b": []}]});
        assert_eq!(text_of(&v), "rows: 2 × a | b\n  1 | [2,\"x\"]\n  3 | []");
    }
}
