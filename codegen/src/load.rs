//! Loading: every manifest under `capabilities/` is parsed, validated against
//! `share/schemas/capability.schema.json`, and turned into a typed [`Capability`].
//!
//! Every problem becomes a [`Diagnostic`] naming the file, the line where it can be found,
//! the JSON pointer of the field and a message; loading reports all of them, not the first.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::codes::ErrorCode;
use crate::model::{Capability, Kind, Manifest};
use crate::policy::{Class, Determinism, Disclosure, Effect, Stability};
use crate::toolset::Toolset;

/// One problem found in the registry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The manifest (or other input file), relative to the crate root.
    pub file: String,
    /// 1-based line, when it could be located.
    pub line: Option<usize>,
    /// JSON pointer of the field, empty for the whole file.
    pub pointer: String,
    /// What is wrong, naming the other side when two files clash.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, ": {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The manifest schema, embedded so the loader needs no path to find it.
pub const CAPABILITY_SCHEMA: &str = include_str!("../../share/schemas/capability.schema.json");

/// The schema a resource's content answer has: resources declare no input or output. A
/// textual resource answers its `text`, a binary one its bytes as `blob` (base64).
pub fn resource_output_schema(binary: bool) -> Value {
    let (field, about, of) = if binary {
        (
            "blob",
            "The content, as embedded at build time, base64-encoded.",
            "The media type of the bytes.",
        )
    } else {
        (
            "text",
            "The content, as embedded at build time.",
            "The media type of the text.",
        )
    };
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["uri", "mimeType", field],
        "properties": {
            "uri": {"type": "string", "description": "The resource URI."},
            "mimeType": {"type": "string", "description": of},
            field: {"type": "string", "description": about}
        }
    })
}

/// The output field that carries a query's declared content blocks.
pub const CONTENT_FIELD: &str = "content";

/// The schema of the `content` array a query declaring `content_blocks` answers: each item one
/// MCP content block of a declared type, in MCP's wire shape (bytes as base64). One variant per
/// block type, told apart by `type`.
pub fn content_schema(blocks: &[String]) -> Value {
    let base64 = |about: &str| serde_json::json!({"type": "string", "contentEncoding": "base64", "description": about});
    let string = |about: &str| serde_json::json!({"type": "string", "description": about});
    let variant = |kind: &str| -> Value {
        let mut props = serde_json::Map::new();
        props.insert("type".into(), serde_json::json!({"const": kind}));
        let required: &[&str] = match kind {
            "text" => {
                props.insert("text".into(), string("The text."));
                &["type", "text"]
            }
            "image" | "audio" => {
                props.insert("data".into(), base64("The bytes, base64-encoded."));
                props.insert("mimeType".into(), string("The media type of the bytes."));
                &["type", "data", "mimeType"]
            }
            "resource_link" => {
                props.insert("uri".into(), string("The linked resource's URI."));
                props.insert("name".into(), string("The linked resource's name."));
                props.insert("description".into(), string("What the resource is."));
                props.insert("mimeType".into(), string("The resource's media type."));
                &["type", "uri", "name"]
            }
            _ => {
                props.insert(
                    "resource".into(),
                    serde_json::json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["uri", "mimeType"],
                        "properties": {
                            "uri": string("The embedded resource's URI."),
                            "mimeType": string("Its media type."),
                            "text": string("Its content, when textual."),
                            "blob": base64("Its content, when binary: base64-encoded.")
                        }
                    }),
                );
                &["type", "resource"]
            }
        };
        serde_json::json!({
            "type": "object",
            "additionalProperties": false,
            "required": required,
            "properties": props,
        })
    };
    // Always a `oneOf`, so that the Rust type is an enum tagged by `type` whatever the count.
    let items: Vec<Value> = blocks.iter().map(|b| variant(b)).collect();
    let items = serde_json::json!({"oneOf": items});
    serde_json::json!({
        "type": "array",
        "description": format!("MCP content blocks ({}): MCP tools/call answers them after the JSON text block.", blocks.join(", ")),
        "items": items,
    })
}

/// The input schema of a resource: no arguments.
pub fn resource_input_schema() -> Value {
    serde_json::json!({"type": "object", "additionalProperties": false, "properties": {}})
}

/// The compiled manifest schema, built once per process.
fn manifest_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value =
            serde_json::from_str(CAPABILITY_SCHEMA).expect("the manifest schema is JSON");
        jsonschema::draft202012::new(&schema).expect("the manifest schema compiles")
    })
}

/// Lists the manifest files of a folder, sorted by name (deterministic order).
pub fn manifest_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str());
        if path.is_file() && matches!(ext, Some("yaml") | Some("yml")) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Loads every manifest of `dir`. `root` is the crate root, used to print relative paths.
pub fn load_dir(dir: &Path, root: &Path) -> Result<Vec<Capability>, Vec<Diagnostic>> {
    let files = manifest_files(dir).map_err(|e| {
        vec![Diagnostic {
            file: display_path(dir, root),
            line: None,
            pointer: String::new(),
            message: format!("cannot list manifests: {e}"),
        }]
    })?;
    let mut caps = Vec::new();
    let mut diags = Vec::new();
    for file in files {
        let rel = display_path(&file, root);
        match std::fs::read_to_string(&file) {
            Ok(text) => match load_manifest(&text, &rel) {
                Ok(cap) => caps.push(cap),
                Err(mut d) => diags.append(&mut d),
            },
            Err(e) => diags.push(Diagnostic {
                file: rel,
                line: None,
                pointer: String::new(),
                message: format!("cannot read: {e}"),
            }),
        }
    }
    if diags.is_empty() {
        Ok(caps)
    } else {
        Err(diags)
    }
}

/// A path relative to the crate root, with forward slashes.
pub fn display_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Parses and checks one manifest's text. `file` is the name used in diagnostics.
pub fn load_manifest(text: &str, file: &str) -> Result<Capability, Vec<Diagnostic>> {
    let diag = |line: Option<usize>, pointer: &str, message: String| Diagnostic {
        file: file.to_string(),
        line,
        pointer: pointer.to_string(),
        message,
    };
    let value: Value = match serde_yaml::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) => {
            let line = e.location().map(|l| l.line());
            return Err(vec![diag(line, "", format!("malformed YAML: {e}"))]);
        }
    };
    let validator = manifest_validator();
    let mut diags: Vec<Diagnostic> = validator
        .iter_errors(&value)
        .map(|e| {
            let mut pointer = e.instance_path().as_str().to_string();
            let mut message = e.to_string();
            // An unexpected key is located at the key itself, not at its parent, with the
            // field it was probably meant to be.
            if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
                e.kind()
            {
                if let Some(first) = unexpected.first() {
                    let known = manifest_fields(&pointer);
                    let known: Vec<&str> = known.iter().map(String::as_str).collect();
                    if let Some(near) = nearest(first, &known) {
                        message = format!("`{first}` is not a field here: did you mean `{near}`?");
                    }
                    pointer = format!("{pointer}/{first}");
                }
            }
            diag(line_of(text, &pointer), &pointer, message)
        })
        .collect();
    if !diags.is_empty() {
        diags.sort();
        diags.dedup();
        return Err(diags);
    }
    let manifest: Manifest = serde_json::from_value(value).map_err(|e| {
        vec![diag(
            None,
            "",
            format!("does not match the manifest model: {e}"),
        )]
    })?;
    let stem = Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    if stem != manifest.id {
        diags.push(diag(
            line_of(text, "/id"),
            "/id",
            format!(
                "id `{}` differs from the file name `{stem}`: name the file after its id",
                manifest.id
            ),
        ));
    }
    let kind = if manifest.kind == "query" {
        Kind::Query
    } else {
        Kind::Resource
    };
    let handler = manifest.handler.as_ref().map(|h| {
        let (m, f) = h
            .split_once("::")
            .expect("the schema checks module::function");
        (m.to_string(), f.to_string())
    });
    let stability = Stability::parse(&manifest.stability).expect("schema-checked");
    if kind == Kind::Query && stability != Stability::Planned && handler.is_none() {
        diags.push(diag(
            line_of(text, "/kind"),
            "/handler",
            format!(
                "query `{}` is executable but names no handler (add `handler: module::function`)",
                manifest.id
            ),
        ));
    }
    let errors: Vec<ErrorCode> = manifest
        .errors
        .iter()
        .map(|c| ErrorCode::parse(c).expect("schema-checked"))
        .collect();
    for (i, ex) in manifest.examples.iter().enumerate() {
        let code = ErrorCode::parse(&ex.outcome);
        if let Some(code) = code {
            if !ErrorCode::UNIVERSAL.contains(&code) && !errors.contains(&code) {
                let ptr = format!("/examples/{i}/outcome");
                diags.push(diag(
                    line_of(text, &ptr),
                    &ptr,
                    format!("example `{}` expects `{}`, which the manifest does not declare in `errors`", ex.title, ex.outcome),
                ));
            }
        }
    }
    let (input, output) = match kind {
        Kind::Query => (
            manifest
                .input
                .clone()
                .expect("schema requires input for queries"),
            manifest
                .output
                .clone()
                .expect("schema requires output for queries"),
        ),
        Kind::Resource => {
            let mime = manifest.mime_type.as_deref().unwrap_or("text/markdown");
            (
                resource_input_schema(),
                resource_output_schema(!crate::model::textual(mime)),
            )
        }
    };
    if manifest.task_asks_first && manifest.task.is_none() {
        diags.push(diag(
            line_of(text, "/task_asks_first"),
            "/task_asks_first",
            "`task_asks_first` needs `task`: remove it or declare the task support".into(),
        ));
    }
    // A task is a way to run a tool call: only a query exposed as an MCP tool has one.
    if manifest.task.is_some() && (kind != Kind::Query || manifest.expose.mcp_tool.is_none()) {
        diags.push(diag(
            line_of(text, "/task"),
            "/task",
            "`task` needs a query exposed as an MCP tool (`expose.mcp_tool`): remove it or expose the tool".into(),
        ));
    }
    // Declared content blocks add the `content` array to the output schema (its one home).
    let mut output = output;
    if !manifest.content_blocks.is_empty() {
        let props = output.get("properties").and_then(Value::as_object);
        if props.is_some_and(|p| p.contains_key(CONTENT_FIELD)) {
            let ptr = format!("/output/properties/{CONTENT_FIELD}");
            diags.push(diag(
                line_of(text, &ptr),
                &ptr,
                "`content_blocks` declares the `content` output field: remove this one".into(),
            ));
        } else if let Some(obj) = output.as_object_mut() {
            obj.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()))
                .as_object_mut()
                .map(|p| {
                    p.insert(
                        CONTENT_FIELD.into(),
                        content_schema(&manifest.content_blocks),
                    )
                });
            let required = obj
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(r) = required.as_array_mut() {
                r.push(CONTENT_FIELD.into());
            }
        }
    }
    // Every key of a schema object must be a draft 2020-12 keyword: an unknown one is a typo
    // (answered with the nearest keyword) or a YAML accident (a comma in a flow-style
    // description splits it into a stray key). Each is reported at its own line.
    for (ptr, schema) in [("/input", &input), ("/output", &output)] {
        let mut unknown = Vec::new();
        unknown_keywords(schema, ptr, &mut unknown);
        for (at, key) in unknown {
            diags.push(diag(line_of(text, &at), &at, unknown_keyword_message(&key)));
        }
        for (at, message) in mcp_header_problems(schema, ptr) {
            diags.push(diag(line_of(text, &at), &at, message));
        }
    }
    // Each schema must itself be a valid draft 2020-12 schema; the input validator is
    // compiled once and kept to check the examples.
    let input_validator = match jsonschema::draft202012::new(&input) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(diag(
                line_of(text, "/input"),
                "/input",
                format!("not a valid JSON Schema: {e}"),
            ));
            None
        }
    };
    if let Err(e) = jsonschema::draft202012::new(&output) {
        diags.push(diag(
            line_of(text, "/output"),
            "/output",
            format!("not a valid JSON Schema: {e}"),
        ));
    }
    // Examples must satisfy the input schema when they expect success.
    if let Some(v) = input_validator {
        for (i, ex) in manifest.examples.iter().enumerate() {
            if ex.outcome == "ok" {
                if let Some(err) = v.iter_errors(&ex.input).next() {
                    let ptr = format!("/examples/{i}/input");
                    diags.push(diag(
                        line_of(text, &ptr),
                        &ptr,
                        format!(
                            "example `{}` expects ok but its input fails the input schema: {err}",
                            ex.title
                        ),
                    ));
                }
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Capability {
        id: manifest.id.clone(),
        source: PathBuf::from(file),
        kind,
        title: manifest.title,
        description: manifest.description.trim_end().to_string(),
        details: manifest.details.map(|d| d.trim_end().to_string()),
        handler,
        content: manifest.content,
        content_blocks: manifest.content_blocks,
        task: manifest.task,
        task_asks_first: manifest.task_asks_first,
        mime_type: manifest
            .mime_type
            .unwrap_or_else(|| "text/markdown".to_string()),
        class: Class {
            effect: Effect::parse(&manifest.effect).expect("schema-checked"),
            additive: manifest.additive,
            disclosure: Disclosure::parse(&manifest.disclosure).expect("schema-checked"),
            determinism: Determinism::parse(&manifest.determinism).expect("schema-checked"),
            stability,
            toolset: Toolset::parse(&manifest.toolset).expect("schema-checked"),
        },
        git_state: manifest.git_state,
        tags: manifest.tags,
        input,
        output,
        errors,
        expose: manifest.expose,
        review: manifest.review.trim_end().to_string(),
        examples: manifest.examples,
    })
}

/// The fields the manifest schema declares for the object at `pointer` of a manifest (its
/// `properties`, followed through `properties` and `items`); empty where it cannot tell.
fn manifest_fields(pointer: &str) -> Vec<String> {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let mut at = SCHEMA.get_or_init(|| {
        serde_json::from_str(CAPABILITY_SCHEMA).expect("the manifest schema is JSON")
    });
    for seg in pointer.split('/').skip(1) {
        let next = if seg.parse::<usize>().is_ok() {
            at.get("items")
        } else {
            at.get("properties").and_then(|p| p.get(seg))
        };
        match next {
            Some(v) => at = v,
            None => return Vec::new(),
        }
    }
    at.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The keywords of JSON Schema draft 2020-12 (core, applicator, unevaluated, validation,
/// meta-data, format and content vocabularies).
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "prefixItems",
    "items",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The message for a key of a schema that is no keyword: "did you mean" the nearest keyword
/// when one is close, the flow-style comma hint when the key reads like prose (a space or a
/// sentence's punctuation), and the plain fact otherwise.
pub fn unknown_keyword_message(key: &str) -> String {
    if let Some(near) = nearest(key, KEYWORDS) {
        return format!("`{key}` is not a JSON Schema keyword: did you mean `{near}`?");
    }
    let prose = key
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '.' | ',' | ';' | '!' | '?' | '(' | ')' | '\''));
    if prose {
        format!("`{key}` is not a JSON Schema keyword: it reads like prose, as when a comma in a flow-style description splits it into a stray key (quote the description)")
    } else {
        format!("`{key}` is not a JSON Schema keyword (draft 2020-12): remove it, or move it into `description`")
    }
}

/// The candidate nearest to `word` when it is close: an edit distance (insertions, deletions,
/// substitutions and swaps of two neighbours) of at most a third of its length, at least one;
/// ties go to the first candidate. Case differences count as edits but a candidate equal
/// ignoring case always wins.
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if let Some(same) = candidates.iter().find(|c| c.eq_ignore_ascii_case(word)) {
        return Some(same);
    }
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The optimal string alignment distance between two strings (Levenshtein plus the swap of
/// two neighbouring characters, the commonest typo).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The extension keyword marking an input property carried in an HTTP header too (MCP
/// SEP-2243): `x-mcp-header: <Name>` on a property of the input object, whose value then also
/// travels in the Streamable HTTP header `Mcp-Param-<Name>` (published as it is in `tools/list`).
pub const MCP_HEADER: &str = "x-mcp-header";

/// Where `x-mcp-header` is misplaced or malformed in a capability's schema `schema` (at
/// `at`, `/input` or `/output`): `(pointer, message)`. It may stand only on a top-level
/// property of the input, of a primitive type, with a header-name token (letters, digits
/// and `-`) unique without regard to case.
fn mcp_header_problems(schema: &Value, at: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    find_mcp_headers(schema, at, &mut found);
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (ptr, value) in found {
        let here = format!("{ptr}/{MCP_HEADER}");
        let parent = ptr.rsplit_once('/').map(|(p, _)| p);
        if at != "/input" || parent != Some("/input/properties") {
            out.push((
                here,
                format!("`{MCP_HEADER}` marks a top-level property of `input` only"),
            ));
            continue;
        }
        let name = value.as_str().unwrap_or_default();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            out.push((
                here,
                format!("`{MCP_HEADER}` must be a header name: letters, digits and `-`"),
            ));
            continue;
        }
        if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            out.push((here, format!("`{MCP_HEADER}: {name}` is declared twice")));
            continue;
        }
        seen.push(name.to_string());
        let prop = schema
            .pointer(&ptr[at.len()..])
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        if !matches!(prop, Some("string" | "number" | "integer" | "boolean")) {
            out.push((
                here,
                format!(
                    "`{MCP_HEADER}` needs a property of type string, number, integer or boolean"
                ),
            ));
        }
    }
    out
}

/// Every schema object holding `x-mcp-header`, with its pointer and the keyword's value.
fn find_mcp_headers<'a>(schema: &'a Value, at: &str, out: &mut Vec<(String, &'a Value)>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(v) = obj.get(MCP_HEADER) {
        out.push((at.to_string(), v));
    }
    for (key, value) in obj {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        for (pointer, sub) in subschemas(key, value, &here) {
            find_mcp_headers(sub, &pointer, out);
        }
    }
}

/// Collects `(pointer, key)` for every key of a schema object that is no keyword, walking
/// only into subschemas (not into `const`, `enum`, `default` or `examples` data).
fn unknown_keywords(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    for (key, value) in obj {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        if key == MCP_HEADER {
            // An extension keyword, checked where it may stand by `mcp_header_problems`.
            continue;
        }
        if !KEYWORDS.contains(&key.as_str()) {
            out.push((here, key.clone()));
            continue;
        }
        for (pointer, sub) in subschemas(key, value, &here) {
            unknown_keywords(sub, &pointer, out);
        }
    }
}

/// The sub-schemas held by the keyword `key` (whose value is `value`, at the JSON pointer
/// `here`), each with its JSON pointer: the one walk of a schema's children, for every check
/// that descends into them.
pub fn subschemas<'a>(key: &str, value: &'a Value, here: &str) -> Vec<(String, &'a Value)> {
    match key {
        "properties" | "patternProperties" | "$defs" | "dependentSchemas" => value
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, sub)| {
                let name = name.replace('~', "~0").replace('/', "~1");
                (format!("{here}/{name}"), sub)
            })
            .collect(),
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => value
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, sub)| (format!("{here}/{i}"), sub))
            .collect(),
        "items"
        | "contains"
        | "not"
        | "if"
        | "then"
        | "else"
        | "additionalProperties"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => vec![(here.to_string(), value)],
        _ => Vec::new(),
    }
}

/// The line of the node a JSON pointer names or, when that node cannot be located (flow
/// style, or a missing field), of its nearest ancestor that can: every diagnostic points as
/// close to the mistake as the text allows.
pub fn line_of(text: &str, pointer: &str) -> Option<usize> {
    let mut at = pointer;
    loop {
        if let Some(line) = pointer_line(text, at) {
            return Some(line);
        }
        match at.rfind('/') {
            Some(i) => at = &at[..i],
            None => return None,
        }
    }
}

/// Finds the line of a JSON pointer in block-style YAML text, by walking key lines with
/// growing indentation. Returns `None` when the field cannot be located (flow style, or the
/// field is missing, as for a `required` violation at the parent).
pub fn pointer_line(text: &str, pointer: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut start = 0usize;
    let mut min_indent = 0usize;
    let mut found = None;
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        let mut hit = None;
        if let Ok(index) = seg.parse::<usize>() {
            // The index-th list item at the next indentation level.
            let mut count = 0usize;
            let mut item_indent = None;
            for (i, line) in lines.iter().enumerate().skip(start) {
                let indent = line.len() - line.trim_start().len();
                let t = line.trim_start();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                if i > start && indent < min_indent {
                    break;
                }
                if t.starts_with("- ") || t == "-" {
                    if item_indent.is_none() {
                        item_indent = Some(indent);
                    }
                    if Some(indent) == item_indent {
                        if count == index {
                            hit = Some((i, indent + 2));
                            break;
                        }
                        count += 1;
                    }
                }
            }
        } else {
            for (i, line) in lines.iter().enumerate().skip(start) {
                let indent = line.len() - line.trim_start().len();
                let t = line.trim_start().trim_start_matches("- ");
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                if i > start && indent < min_indent && found.is_some() {
                    break;
                }
                if t.starts_with(&format!("{seg}:")) || t.starts_with(&format!("\"{seg}\":")) {
                    let key_col = line.len() - t.len();
                    if key_col >= min_indent {
                        hit = Some((i, key_col + 1));
                        break;
                    }
                }
            }
        }
        let (i, indent) = hit?;
        found = Some(i + 1);
        start = i;
        min_indent = indent;
    }
    found.or(if pointer.is_empty() { Some(1) } else { None })
}

#[cfg(test)]
mod tests {
    use super::{
        line_of, mcp_header_problems, nearest, pointer_line, unknown_keyword_message, KEYWORDS,
    };
    use serde_json::json;

    #[test]
    fn x_mcp_header_stands_only_on_a_primitive_input_property_with_a_header_name() {
        let good = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "Count-2"}}});
        assert_eq!(mcp_header_problems(&good, "/input"), vec![]);
        let bad = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Has Space"},
            "b": {"type": "object", "x-mcp-header": "B"},
            "c": {"type": "string", "x-mcp-header": "b"},
            "d": {"type": "object", "properties": {"e": {"type": "string", "x-mcp-header": "E"}}}}});
        let problems: Vec<String> = mcp_header_problems(&bad, "/input")
            .into_iter()
            .map(|(at, m)| format!("{at}: {m}"))
            .collect();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems[0].starts_with("/input/properties/a/x-mcp-header: ")
                && problems[0].contains("header name")
        );
        assert!(problems[1].contains("/b/") && problems[1].contains("type string"));
        assert!(problems[2].contains("/c/") && problems[2].contains("declared twice"));
        assert!(problems[3].contains("/d/properties/e/") && problems[3].contains("top-level"));
        let output =
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}});
        assert_eq!(mcp_header_problems(&output, "/output").len(), 1);
    }

    #[test]
    fn a_nested_pointer_is_found_at_its_own_line_or_its_nearest_ancestor() {
        let text = "id: a.b\ninput:\n  type: object\n  properties:\n    name:\n      type: string\n      minLenght: 1\n    flow: { type: string, maxLenght: 2 }\n";
        assert_eq!(line_of(text, "/input/properties/name/minLenght"), Some(7));
        assert_eq!(line_of(text, "/input/properties/flow/maxLenght"), Some(8));
        assert_eq!(line_of(text, "/input/required"), Some(2));
        assert_eq!(line_of(text, "/nowhere"), Some(1));
    }

    #[test]
    fn a_misspelled_manifest_field_gets_the_field_it_was_meant_to_be() {
        let text = "id: demo.echo\nkind: resource\ntitle: T\ndescription: D\ncontent: x.md\neffect: read\ndisclosure: none\ndeterminism: input\nstability: stable\nexpose:\n  mcp_resorce: demo://x\nreview: R\nexamples: []\nrevew: R\n";
        let diags = super::load_manifest(text, "capabilities/demo.echo.yaml").unwrap_err();
        let shown: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert!(
            shown.contains(&"capabilities/demo.echo.yaml:11: /expose/mcp_resorce: `mcp_resorce` is not a field here: did you mean `mcp_resource`?".to_string()),
            "{shown:?}"
        );
        assert!(
            shown.contains(&"capabilities/demo.echo.yaml:14: /revew: `revew` is not a field here: did you mean `review`?".to_string()),
            "{shown:?}"
        );
    }

    #[test]
    fn unknown_keywords_get_the_nearest_keyword_or_the_comma_hint_only_for_prose() {
        assert_eq!(nearest("minLenght", KEYWORDS), Some("minLength"));
        assert_eq!(
            nearest("additionalproperties", KEYWORDS),
            Some("additionalProperties")
        );
        assert_eq!(nearest("requird", KEYWORDS), Some("required"));
        assert_eq!(nearest("colour", KEYWORDS), None);
        assert!(unknown_keyword_message("minLenght").contains("did you mean `minLength`"));
        assert!(unknown_keyword_message("to echo.").contains("flow-style description"));
        let plain = unknown_keyword_message("colour");
        assert!(
            !plain.contains("flow-style") && !plain.contains("did you mean"),
            "{plain}"
        );
    }

    #[test]
    fn pointer_lines_are_found_in_block_yaml() {
        let text = "id: a.b\nexpose:\n  http:\n    method: PUT\n    path: /x\nexamples:\n  - title: one\n    input: {}\n  - title: two\n    outcome: nope\n";
        assert_eq!(line_of(text, "/id"), Some(1));
        assert_eq!(pointer_line(text, "/expose/http/method"), Some(4));
        assert_eq!(pointer_line(text, "/examples/1/outcome"), Some(10));
        assert_eq!(pointer_line(text, "/examples/0"), Some(7));
        assert_eq!(pointer_line(text, "/missing"), None);
    }
}
