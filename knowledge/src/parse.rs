//! The parse of one knowledge file's bytes into an object or findings: size, UTF-8, front
//! matter, kind, schema, id, title and description. Pure: no I/O (the fuzz target's entry).

use std::sync::Arc;

use serde_json::Value;

use super::front_matter::{simple_mapping, split_front_matter, yaml_mapping};
use super::kinds::{Dialect, Format, Kind, Kinds};
pub(super) use super::result::is_valid_id;
pub use super::result::{shorten, FileResult};
use super::{escape_pointer, Finding, Object, MAX_FILE_BYTES, URI_PREFIX};

/// The first Markdown heading of a body, for objects without a title.
fn first_heading(body: &str) -> Option<String> {
    body.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("# ").map(|h| h.trim().to_string()))
        .filter(|h| !h.is_empty())
}

/// The first paragraph of a body, shortened, for objects without a description.
fn first_paragraph(body: &str) -> String {
    let mut para = String::new();
    for line in body.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with("```") {
            if para.is_empty() {
                continue;
            }
            break;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(line);
        if para.len() > 240 {
            break;
        }
    }
    shorten(&para, 200)
}

/// Whether an ADR's front matter is seneschal's own: it has a `title`, and every key is one
/// of the kind's schema (MADR's front matter has no title and keys of its own).
fn is_seneschal_front_matter(
    kind: &Kind,
    fields: &serde_json::Map<String, Value>,
    present: bool,
) -> bool {
    let known = kind.schema.get("properties").and_then(Value::as_object);
    present
        && fields.contains_key("title")
        && fields
            .keys()
            .all(|k| known.is_some_and(|p| p.contains_key(k)))
}

/// The finding of a file over the cap.
pub(super) fn over_cap(len: u64) -> String {
    format!(
        "is {len} bytes, over the {MAX_FILE_BYTES} byte (1 MiB) cap for knowledge objects; it is not read"
    )
}

/// Reads the bytes of one knowledge file as an object of `kind` (`None`: the file lives in the
/// generic folder and names its kind in its front matter). `file` is the repository-relative
/// path findings name; `file_name` its last segment, where a kind may read the id.
///
/// Pure: no I/O. Every input, however malformed, becomes an object or findings naming `file`.
pub fn parse_bytes(
    file: &str,
    file_name: &str,
    bytes: Vec<u8>,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> FileResult {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return FileResult::bad(file, "", over_cap(bytes.len() as u64));
    }
    let digest = seneschal_access::keep::shown_digest(&bytes);
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return FileResult::bad(
                file,
                "",
                format!(
                    "is not UTF-8 (invalid byte sequence at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        }
    };
    // Invisible characters are shown in what is served; hidden content is reported.
    let (text, invisible) = super::hidden::reveal(text);
    let hidden = if kind.map(|k| k.format) == Some(Format::Yaml) {
        None
    } else {
        super::hidden::finding(file, &text, &invisible)
    };
    let mut result = parse_text(file, file_name, text, digest, kind, kinds);
    if let (Some(_), Some(h)) = (&result.object, hidden) {
        result.findings.push(h);
    }
    result
}

/// [`parse_bytes`] after the bytes are text.
fn parse_text(
    file: &str,
    file_name: &str,
    text: String,
    digest: String,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> FileResult {
    let format = kind.map(|k| k.format).unwrap_or(Format::Markdown);
    let dialect = kind.and_then(|k| k.dialect);
    // A kind with a dialect reads files without front matter too.
    let opens_front_matter = text
        .trim_start_matches('\u{feff}')
        .lines()
        .next()
        .is_some_and(|l| l.trim_end() == "---");
    let (fm_text, first_line, body_start) = match format {
        Format::Markdown if dialect.is_some() && !opens_front_matter => ("", 1, 0),
        Format::Markdown => match split_front_matter(&text) {
            Ok(parts) => parts,
            Err(message) => return FileResult::bad(file, "", message),
        },
        Format::Yaml => (text.as_str(), 1, text.len()),
    };
    // Most front matter is a flat mapping of simple strings: read that directly, and let
    // serde_yaml read everything else (and word every error).
    let mut fields = match simple_mapping(fm_text) {
        Some(fields) => fields,
        None => match yaml_mapping(fm_text, first_line) {
            Ok(fields) => fields,
            Err(message) => return FileResult::bad(file, "", message),
        },
    };
    // `kind` is read by seneschal, not by the kind's schema.
    let declared = fields.remove("kind");
    let kind: Arc<Kind> = match (&declared, kind) {
        (Some(Value::String(name)), Some(k)) if *name != k.name => {
            return FileResult::bad(
                file,
                "/kind",
                format!(
                    "says kind `{name}` but lives in the files of kind `{}`",
                    k.name
                ),
            )
        }
        (Some(v), _) if !v.is_string() => {
            return FileResult::bad(file, "/kind", "`kind` must be a string")
        }
        (_, Some(k)) => k.clone(),
        (Some(Value::String(name)), None) => match kinds.get(name) {
            Some(k) => k.clone(),
            None => {
                return FileResult::bad(
                    file,
                    "/kind",
                    format!(
                        "unknown kind `{name}`; knowledge.kinds lists the kinds of this repository"
                    ),
                )
            }
        },
        (_, None) => {
            return FileResult::bad(
                file,
                "/kind",
                "names no `kind`; objects under .seneschal/knowledge/ must say their kind",
            )
        }
    };
    if kind.format == Format::Yaml && format == Format::Markdown {
        return FileResult::bad(
            file,
            "/kind",
            format!("kind `{}` is read from YAML files, not Markdown", kind.name),
        );
    }
    // An ADR in another tool's format (anything but seneschal's front matter: a `title` and
    // only the schema's own keys) is read leniently.
    if kind.dialect == Some(Dialect::Adr)
        && !is_seneschal_front_matter(&kind, &fields, opens_front_matter)
    {
        if let Some(declared) = declared {
            fields.insert("kind".to_string(), declared);
        }
        return super::adr::read(
            file,
            file_name,
            text,
            digest,
            fields,
            opens_front_matter,
            body_start,
            &kind,
        );
    }
    // A status of seneschal's ADR front matter is matched without case and mapped where
    // certain (`Accepted`, `Approved`); the text as written stays in the file, and the served
    // front matter keeps to the schema's keys, so that it can be written back as it is.
    if kind.dialect == Some(Dialect::Adr) {
        if let Some(Value::String(s)) = fields.get("status") {
            let read = super::adr::read_status(s);
            if let (false, Some(c), true) = (
                super::adr::STATUSES.contains(&s.as_str()),
                read.canonical,
                read.relations.is_empty(),
            ) {
                fields.insert("status".into(), Value::String(c.into()));
            }
        }
    }
    let mut checked = Value::Object(fields);
    // A key written with no value (`description:`, Cursor's own default) is an absent key
    // to the schema; it is served as written.
    let without_nulls = match (&checked, kind.dialect) {
        (Value::Object(f), Some(Dialect::Plain)) if f.values().any(Value::is_null) => {
            Some(Value::Object(
                f.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ))
        }
        _ => None,
    };
    let judged = without_nulls.as_ref().unwrap_or(&checked);
    // Valid front matter is the common case: `is_valid` answers it without building errors.
    let mut findings: Vec<Finding> = Vec::new();
    if !kind.validator.is_valid(judged) {
        let errors: Vec<_> = kind.validator.iter_errors(judged).collect();
        // Only lengths over a spec's limit (a skill description of 1,100 characters, which
        // the clients read all the same): served, with a finding for each.
        let soft = errors.iter().all(|e| {
            matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::MaxLength { .. }
            )
        });
        findings = errors
            .iter()
            .map(|e| Finding {
                file: file.to_string(),
                pointer: e.instance_path().as_str().to_string(),
                message: if let (true, jsonschema::error::ValidationErrorKind::MaxLength { limit }) =
                    (soft, e.kind())
                {
                    format!(
                        "is {} characters, over the limit of {limit} (schema of kind `{}`); it is served all the same, but clients that hold to the limit may cut or refuse it",
                        e.instance().as_str().map_or(0, |s| s.chars().count()),
                        kind.name
                    )
                } else {
                    format!("{e} (schema of kind `{}`)", kind.name)
                },
            })
            .collect();
        if !soft {
            return FileResult {
                object: None,
                findings,
            };
        }
    }
    // A prompt kind's object must declare arguments a prompt can take, whatever its schema.
    if kind.prompt {
        if let Some((pointer, message)) = super::prompts::front_matter_problem(&checked) {
            return FileResult::bad(file, pointer, message);
        }
    }
    // The id: the front-matter field first, then the file name.
    let mut id: Option<String> = None;
    if let Some(field) = &kind.id.field {
        match checked.get(field) {
            Some(Value::String(s)) => id = Some(s.clone()),
            Some(_) => {
                return FileResult::bad(
                    file,
                    format!("/{}", escape_pointer(field)),
                    format!("the id field `{field}` must be a string"),
                )
            }
            None => {}
        }
    }
    let from_name = kind.id_from_name(file_name);
    match (&id, &from_name, &kind.id.field) {
        // Both say an id and they disagree: one of them is a mistake.
        (Some(a), Some(b), Some(field)) if a != b => {
            return FileResult::bad(
                file,
                format!("/{}", escape_pointer(field)),
                format!(
                    "the `{field}` field says `{a}` but the file name says `{b}`; make them agree"
                ),
            )
        }
        (None, _, _) => id = from_name,
        _ => {}
    }
    let Some(id) = id else {
        let how = match (&kind.id.field, &kind.id.file_pattern) {
            (Some(f), Some(p)) => format!("no `{f}` field, and the file name does not match {p}"),
            (Some(f), None) => format!("no `{f}` field"),
            (None, Some(p)) => format!("the file name does not match {p}"),
            (None, None) => "the kind reads no id".into(),
        };
        findings.push(Finding {
            file: file.to_string(),
            pointer: kind
                .id
                .field
                .as_ref()
                .map(|f| format!("/{}", escape_pointer(f)))
                .unwrap_or_default(),
            message: format!("no id: {how}"),
        });
        return FileResult {
            object: None,
            findings,
        };
    };
    if !is_valid_id(&id) {
        return FileResult::bad(
            file,
            kind.id
                .field
                .as_ref()
                .map(|f| format!("/{}", escape_pointer(f)))
                .unwrap_or_default(),
            format!(
                "id `{id}` must match {} (it becomes a URI segment)",
                super::ID_GRAMMAR
            ),
        );
    }
    let body = &text[body_start..];
    let str_field = |name: &str| {
        checked
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let title = str_field("title")
        .or_else(|| first_heading(body))
        .or_else(|| str_field("name"))
        .unwrap_or_else(|| id.clone());
    let description = str_field("description").unwrap_or_else(|| first_paragraph(body));
    let tags: Vec<String> = checked
        .get("tags")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let status = str_field("status");
    // The object keeps the whole front matter, `kind` included.
    if let (Value::Object(fields), Some(declared)) = (&mut checked, declared) {
        fields.insert("kind".to_string(), declared);
    }
    FileResult {
        object: Some(Arc::new(Object {
            uri: format!("{URI_PREFIX}{}/{id}", kind.name),
            kind: kind.name.clone(),
            id,
            file: file.to_string(),
            title,
            description: description.trim().to_string(),
            tags,
            status,
            front_matter: checked,
            mime_type: kind.format.mime_type().to_string(),
            digest,
            body_start,
            text,
        })),
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_grammar_is_the_regex() {
        let re = regex::Regex::new(super::super::ID_GRAMMAR).unwrap();
        let long = "a".repeat(128);
        let too_long = "a".repeat(129);
        for id in [
            "a", "A9", "0001-x", "a.b_c-d", "-a", ".a", "_a", "", "a b", "a/b", "é", "aé", "a\n",
            &long, &too_long, "a$", "Z-",
        ] {
            assert_eq!(is_valid_id(id), re.is_match(id), "{id:?}");
        }
    }

    #[test]
    fn shorten_counts_characters() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("ab cd", 4), "ab…");
        assert_eq!(shorten("ab cd", 3), "ab…");
        assert_eq!(shorten("ééé", 3), "ééé");
        assert_eq!(shorten("é ééé", 4), "é…");
        // A cut word goes whole: no head of a secret is left for no rule to recognise.
        assert_eq!(shorten("abcd", 3), "…");
        assert_eq!(shorten("see ghp_abcdefgh", 8), "see…");
    }
}
