//! YAML front matter: splitting it from the Markdown body, reading it with serde_yaml, and
//! [`simple_mapping`], the fast reader of flat front matter that answers `None` for anything
//! it is not sure serde_yaml reads the same.

use serde_json::{Map, Value};

/// Splits Markdown into (front matter text, its first line number, body offset), or says why not.
pub(super) fn split_front_matter(text: &str) -> Result<(&str, usize, usize), String> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err("has no YAML front matter: the file must start with a `---` line".into());
    }
    let fm_start = start + first.len();
    let mut pos = fm_start;
    for line in lines {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Ok((&text[fm_start..pos], 2, pos + line.len()));
        }
        pos += line.len();
    }
    Err("front matter is not closed: no `---` line after the opening one".into())
}

/// A YAML parse error as a message whose line counts from the top of the file.
fn yaml_message(e: &serde_yaml::Error, first_line: usize) -> String {
    let text = e.to_string();
    let base = text.split(" at line ").next().unwrap_or(&text).to_string();
    match e.location() {
        Some(loc) => format!(
            "malformed YAML front matter: {base} (line {}, column {})",
            loc.line() + first_line - 1,
            loc.column()
        ),
        None => format!("malformed YAML front matter: {base}"),
    }
}

/// Front matter read by serde_yaml: a mapping as JSON, or the message of a finding.
pub(super) fn yaml_mapping(text: &str, first_line: usize) -> Result<Map<String, Value>, String> {
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| yaml_message(&e, first_line))?;
    match serde_json::to_value(&yaml) {
        Ok(Value::Null) => Ok(Map::new()),
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err("front matter must be a mapping of field names to values".into()),
        Err(e) => Err(format!("front matter cannot be read as JSON: {e}")),
    }
}

/// The words YAML 1.2 (as serde_yaml reads it) resolves to null or a boolean.
fn is_yaml_word(s: &str) -> bool {
    matches!(
        s,
        "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    )
}

/// Whether `c` may appear in a scalar this reader accepts: printable to YAML, neither a tab
/// nor anything libyaml treats as a line break or a byte-order mark.
fn is_plain_char(c: char) -> bool {
    match c {
        ' '..='~' => true,
        '\u{a0}'..='\u{d7ff}' => c != '\u{2028}' && c != '\u{2029}',
        '\u{e000}'..='\u{fffd}' => c != '\u{feff}',
        '\u{10000}'..='\u{10ffff}' => true,
        _ => false,
    }
}

/// A `YYYY-MM-DD` date: serde_yaml reads it as a string (YAML 1.2 has no timestamps).
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// A plain scalar that serde_yaml reads as this very string, in block context (`flow`
/// false) or inside a flow sequence (`flow` true). Conservative: it starts with a letter
/// (so it is no number, indicator or special float) or is a date, and holds nothing that
/// could end it or start a comment.
fn simple_scalar(s: &str, flow: bool) -> bool {
    let Some(first) = s.bytes().next() else {
        return false;
    };
    if is_date(s) {
        return true;
    }
    if !first.is_ascii_alphabetic() || is_yaml_word(s) || s.ends_with([':', ' ']) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || !s.chars().all(is_plain_char) {
        return false;
    }
    !flow || !s.contains([',', '[', ']', '{', '}', ':', '#', '"', '\''])
}

/// The fast reader of front matter: a flat mapping whose lines are each `key: value`, where
/// a value is a plain or quoted string without escapes, a date, or a one-line flow sequence
/// of plain strings; blank lines and `#` comment lines are skipped. Anything else (nesting,
/// numbers, booleans, nulls, multi-line scalars, escapes, anchors, tags, duplicate keys…)
/// answers `None`, and serde_yaml reads the text instead. Whatever this reader accepts,
/// serde_yaml reads as the same mapping (the test `the_fast_reader_agrees_with_serde_yaml`
/// checks it against generated inputs, and the fuzz target `fuzz/fuzz_targets/knowledge_file.rs`
/// against whatever it finds; that is why it is public).
pub fn simple_mapping(text: &str) -> Option<Map<String, Value>> {
    if text.contains(['\r', '\t']) {
        return None;
    }
    let mut fields = Map::new();
    for line in text.split('\n') {
        if line.trim_start_matches(' ').is_empty() {
            continue;
        }
        // A comment is skipped, but libyaml refuses one that holds a character YAML does not
        // print (a NUL, say) as it refuses any other.
        if line.starts_with('#') {
            if !line.chars().all(is_plain_char) {
                return None;
            }
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let kb = key.as_bytes();
        if kb.is_empty()
            || kb.len() > 128
            || !kb[0].is_ascii_alphabetic() && kb[0] != b'_'
            || !kb
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
            || is_yaml_word(key)
        {
            return None;
        }
        let value = rest.strip_prefix(' ')?.trim_matches(' ');
        let parsed = if let Some(inner) = value.strip_prefix('"') {
            let inner = inner.strip_suffix('"')?;
            if inner.contains(['"', '\\']) || !inner.chars().all(is_plain_char) {
                return None;
            }
            Value::String(inner.to_string())
        } else if let Some(inner) = value.strip_prefix('\'') {
            let inner = inner.strip_suffix('\'')?;
            if inner.contains('\'') || !inner.chars().all(is_plain_char) {
                return None;
            }
            Value::String(inner.to_string())
        } else if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']')?;
            let mut items = Vec::new();
            if !inner.trim_matches(' ').is_empty() {
                for item in inner.split(',') {
                    let item = item.trim_matches(' ');
                    if !simple_scalar(item, true) {
                        return None;
                    }
                    items.push(Value::String(item.to_string()));
                }
            }
            Value::Array(items)
        } else if simple_scalar(value, false) {
            Value::String(value.to_string())
        } else {
            return None;
        };
        if fields.insert(key.to_string(), parsed).is_some() {
            return None;
        }
    }
    if fields.is_empty() {
        return None;
    }
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: what serde_yaml makes of a text (`None`: a finding).
    fn reference(text: &str) -> Option<Map<String, Value>> {
        yaml_mapping(text, 2).ok()
    }

    #[test]
    fn the_fast_reader_reads_common_front_matter() {
        let text = "title: Set up the workstation\ntags: [setup, tools]\n\n# a comment\nstatus: 'current'\ndate: 2026-11-30\nsummary: \"Why: because\"\nurl: https://example.com/a,b\n";
        let fast = simple_mapping(text).expect("the common shape is read without serde_yaml");
        assert_eq!(Some(&fast), reference(text).as_ref());
        assert_eq!(fast["tags"], serde_json::json!(["setup", "tools"]));
        assert_eq!(fast["date"], "2026-11-30");
        // Shapes it leaves to serde_yaml.
        for other in [
            "count: 3\n",
            "draft: true\n",
            "owner: null\n",
            "title: a: b\n",
            "title: a #note\n",
            "title: first\n  continued\n",
            "meta:\n  a: b\n",
            "title: x\ntitle: y\n",
            "title: \"a\\tb\"\n",
            "tags: [a, true]\n",
            "tags: [a, [b]]\n",
            "title: &a x\n",
            "title: x\r\n",
            "title: x\n# a NUL \u{0} in a comment\n",
            "",
            "- a\n",
        ] {
            assert!(simple_mapping(other).is_none(), "{other:?}");
        }
    }

    /// Generated front matter: whatever the fast reader accepts, serde_yaml reads the same.
    #[test]
    fn the_fast_reader_agrees_with_serde_yaml() {
        let keys = [
            "title", "tags", "kind", "a-b", "_x", "Title", "null", "True", "x y", "1a", "é",
        ];
        let seps = [": ", ":", ":  ", " : ", ":\t"];
        let values = [
            "plain words",
            "foo: bar",
            "foo:bar",
            "foo:",
            "foo #c",
            "foo#c",
            "a, b",
            "a [b] {c}",
            "[a, b]",
            "[a,b,]",
            "[]",
            "[ ]",
            "[a b, c.d/e]",
            "[a: b]",
            "[a:b]",
            "[a, 'b']",
            "[null, x]",
            "[x, ~]",
            "[-x]",
            "\"x: y\"",
            "\"a # b\"",
            "'it''s'",
            "'a: b'",
            "\"a\\\"b\"",
            "\"\"",
            "''",
            "null",
            "Null",
            "~",
            "true",
            "FALSE",
            "2026-11-30",
            "2026-1-30",
            "0x10",
            "1e3",
            "12",
            "012",
            "+1",
            "-1",
            "inf",
            ".inf",
            "nan",
            ".NaN",
            "yes",
            "no",
            "on",
            "-x",
            "x-",
            "a:b",
            "é accent",
            "日本語",
            "a\u{2028}b",
            "a\u{85}b",
            "a\u{feff}",
            "a\u{7f}",
            "{a: b}",
            "*alias",
            "&anchor x",
            "!tag x",
            "!!str 1",
            "|",
            ">",
            "@x",
            "`x",
            "%x",
            "x'y",
            "x\"y",
            "a  b",
            "trailing ",
            "? x",
            "x\\n",
            "Infinity",
            "e5",
            "a\u{0}b",
        ];
        let extras = [
            "",
            "\n",
            "  \n",
            "# comment\n",
            "  indented: x\n",
            "---\n",
            "...\n",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let (mut accepted, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..1 + next(4) {
                if next(6) == 0 {
                    text.push_str(extras[next(extras.len())]);
                }
                let key = if next(3) == 0 {
                    keys[next(keys.len())]
                } else {
                    keys[next(3)]
                };
                let sep = if next(4) == 0 {
                    seps[next(seps.len())]
                } else {
                    ": "
                };
                text.push_str(key);
                text.push_str(sep);
                text.push_str(values[next(values.len())]);
                text.push('\n');
            }
            total += 1;
            if let Some(fast) = simple_mapping(&text) {
                accepted += 1;
                assert_eq!(Some(fast), reference(&text), "{text:?}");
            }
        }
        // Both paths are exercised.
        assert!(
            accepted > total / 20 && accepted < total,
            "{accepted} of {total}"
        );
    }

    #[test]
    fn front_matter_splits() {
        let (fm, line, body) = split_front_matter("---\ntitle: x\n---\nbody\n").unwrap();
        assert_eq!((fm, line), ("title: x\n", 2));
        assert_eq!(&"---\ntitle: x\n---\nbody\n"[body..], "body\n");
        assert!(split_front_matter("# no front matter\n").is_err());
        assert!(split_front_matter("---\ntitle: x\n").is_err());
    }
}
