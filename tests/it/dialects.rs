//! Schema dialects (ADR 0008): every default tool's input schema, as `mcp --schema-dialect`
//! lists it, checked against the subset each function-calling API publishes, and calls made
//! in that rendering answered as the published schema's calls.
//!
//! The two checkers below are written from the providers' documents, not from seneschal's
//! renderer (`seneschal_model::dialect`), so that a renderer that drifts from a subset fails:
//!
//! - OpenAI, "Structured model outputs", section "Supported schemas"
//!   (<https://developers.openai.com/api/docs/guides/structured-outputs#supported-schemas>),
//!   which strict function calling (`"strict": true`) applies to a function's `parameters`:
//!   the supported types; the supported properties (strings: `pattern`, `format` of a listed
//!   set; numbers: `multipleOf`, `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`;
//!   arrays: `minItems`, `maxItems`); "all fields must be required" (an optional one is a union
//!   with `null`); "`additionalProperties: false` must always be set in objects"; the root
//!   "must be an object" and not `anyOf`; at most 5,000 properties and 10 levels of nesting,
//!   1,000 enum values; `allOf`, `not`, `dependentRequired`, `dependentSchemas`, `if`, `then`,
//!   `else` not supported.
//! - Gemini, `FunctionDeclaration.parameters`, "a select subset of an OpenAPI 3.0 schema
//!   object": the fields of `Schema` (<https://ai.google.dev/api/caching#Schema>: `type`,
//!   `format`, `title`, `description`, `nullable`, `enum`, `maxItems`, `minItems`,
//!   `properties`, `required`, `minProperties`, `maxProperties`, `minLength`, `maxLength`,
//!   `pattern`, `example`, `anyOf`, `propertyOrdering`, `default`, `items`, `minimum`,
//!   `maximum`), `type` one `Type` name (`STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`,
//!   `OBJECT`, `NULL`), `enum` for strings; an unknown field is a 400 error; a function "with
//!   no parameters" leaves them unset (a root with no properties), while a nested `OBJECT`
//!   must name its properties ("should be non-empty for OBJECT type").

use serde_json::{json, Value};

use crate::support::mcp::Mcp;
use crate::support::scratch_repo;

const OPENAI_TYPES: &[&str] = &[
    "string", "number", "boolean", "integer", "object", "array", "null",
];
const OPENAI_KEYWORDS: &[&str] = &[
    // Structure.
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$defs",
    "$ref",
    "description",
    // Supported properties.
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// What OpenAI's strict mode refuses in a function's `parameters`, one sentence each.
fn openai_violations(root: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if root["type"] != "object" || root.get("anyOf").is_some() {
        out.push("the root is not an object".into());
    }
    let mut properties = 0;
    let mut enums = 0;
    openai_node(root, "", 1, &mut properties, &mut enums, &mut out);
    if properties > 5000 {
        out.push(format!("{properties} properties, over 5000"));
    }
    if enums > 1000 {
        out.push(format!("{enums} enum values, over 1000"));
    }
    out
}

fn openai_node(
    s: &Value,
    at: &str,
    depth: usize,
    props: &mut usize,
    enums: &mut usize,
    out: &mut Vec<String>,
) {
    let Some(obj) = s.as_object() else {
        out.push(format!("{at}: not a schema object"));
        return;
    };
    if depth > 10 {
        out.push(format!("{at}: nested deeper than 10 levels"));
    }
    for key in obj.keys() {
        if !OPENAI_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: `{key}` is not supported"));
        }
    }
    let types: Vec<&str> = match &obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    for t in &types {
        if !OPENAI_TYPES.contains(t) {
            out.push(format!("{at}: type `{t}` is not supported"));
        }
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str) {
        if !OPENAI_FORMATS.contains(&f) {
            out.push(format!("{at}: format `{f}` is not supported"));
        }
    }
    if let Some(e) = obj.get("enum").and_then(Value::as_array) {
        *enums += e.len();
    }
    if types.contains(&"object") {
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(format!(
                "{at}: an object without `additionalProperties: false`"
            ));
        }
        let names: Vec<&String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for n in &names {
            if !required.contains(&n.as_str()) {
                out.push(format!("{at}/{n}: not required"));
            }
        }
        *props += names.len();
    }
    if let Some(p) = obj.get("properties").and_then(Value::as_object) {
        for (n, sub) in p {
            openai_node(sub, &format!("{at}/{n}"), depth + 1, props, enums, out);
        }
    }
    if let Some(items) = obj.get("items") {
        openai_node(items, &format!("{at}/items"), depth + 1, props, enums, out);
    }
    for (i, b) in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        openai_node(b, &format!("{at}/anyOf/{i}"), depth + 1, props, enums, out);
    }
}

const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const GEMINI_TYPES: &[&str] = &[
    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
];

/// What Gemini refuses in a function declaration's `parameters`, one sentence each.
fn gemini_violations(root: &Value) -> Vec<String> {
    let mut out = Vec::new();
    gemini_node(root, "", true, &mut out);
    out
}

fn gemini_node(s: &Value, at: &str, root: bool, out: &mut Vec<String>) {
    let Some(obj) = s.as_object() else {
        out.push(format!("{at}: not a schema object"));
        return;
    };
    for key in obj.keys() {
        if !GEMINI_FIELDS.contains(&key.as_str()) {
            out.push(format!("{at}: unknown field `{key}`"));
        }
    }
    let t = match obj.get("type") {
        None if obj.contains_key("anyOf") => String::new(),
        Some(Value::String(t)) if GEMINI_TYPES.contains(&t.to_uppercase().as_str()) => {
            t.to_uppercase()
        }
        other => {
            out.push(format!("{at}: type {other:?} is not one Type name"));
            String::new()
        }
    };
    if let Some(e) = obj.get("enum") {
        let strings = e.as_array().is_some_and(|v| v.iter().all(Value::is_string));
        if t != "STRING" || !strings {
            out.push(format!("{at}: an enum that is not of strings"));
        }
    }
    let props = obj.get("properties").and_then(Value::as_object);
    if t == "OBJECT" && !root && props.is_none_or(|p| p.is_empty()) {
        out.push(format!("{at}: an OBJECT without properties"));
    }
    if t == "ARRAY" && !obj.contains_key("items") {
        out.push(format!("{at}: an ARRAY without items"));
    }
    for r in obj
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if props.is_none_or(|p| !p.contains_key(r.as_str().unwrap_or_default())) {
            out.push(format!("{at}: `{r}` is required but not a property"));
        }
    }
    for (n, sub) in props.into_iter().flatten() {
        gemini_node(sub, &format!("{at}/{n}"), false, out);
    }
    if let Some(items) = obj.get("items") {
        gemini_node(items, &format!("{at}/items"), false, out);
    }
    for (i, b) in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        gemini_node(b, &format!("{at}/anyOf/{i}"), false, out);
    }
}

/// The default tools as `seneschal mcp --toolsets default ARGS` lists them.
fn listed(args: &[&str]) -> Vec<Value> {
    let repo = scratch_repo();
    let mut argv = vec!["--toolsets", "default"];
    argv.extend_from_slice(args);
    let mut mcp = Mcp::start_with(repo.path(), &argv, &[]);
    mcp.initialize("2025-11-25");
    let list = mcp.request("tools/list", json!({}));
    list["result"]["tools"].as_array().expect("tools").clone()
}

#[test]
fn every_default_tool_s_input_schema_in_each_dialect_is_in_its_published_subset() {
    type Checker = fn(&Value) -> Vec<String>;
    for (dialect, check) in [
        ("openai", openai_violations as Checker),
        ("gemini", gemini_violations),
    ] {
        let tools = listed(&["--schema-dialect", dialect]);
        assert_eq!(tools.len(), listed(&[]).len(), "{dialect}: the same tools");
        for t in &tools {
            let found = check(&t["inputSchema"]);
            assert!(
                found.is_empty(),
                "{dialect} refuses {}: {found:#?}",
                t["name"]
            );
            // Still an MCP tool: an object schema at the root.
            assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
        }
    }
    // The published schemas (optional inputs, lengths, free-form objects) are not in either
    // subset as they stand: what the dialect profile is for.
    let published = listed(&[]);
    let refused = |check: fn(&Value) -> Vec<String>| {
        published
            .iter()
            .filter(|t| !check(&t["inputSchema"]).is_empty())
            .count()
    };
    assert!(refused(openai_violations) > published.len() / 2);
    assert!(refused(gemini_violations) > published.len() / 2);
}

#[test]
fn a_call_in_a_dialect_reads_null_as_left_out_and_json_text_as_its_object() {
    let repo = scratch_repo();
    std::fs::write(repo.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mut mcp = Mcp::start_with(repo.path(), &["--schema-dialect", "openai"], &[]);
    mcp.initialize("2025-11-25");
    let call = |mcp: &mut Mcp, name: &str, args: Value| {
        mcp.request("tools/call", json!({"name": name, "arguments": args}))["result"].clone()
    };
    // OpenAI's strict mode sends every property, null for the ones it leaves out.
    let read = call(
        &mut mcp,
        "files_read",
        json!({"path": "a.txt", "paths": null, "rev": null, "offset": null, "limit": null}),
    );
    assert_eq!(read["isError"], false, "{read}");
    assert_eq!(read["structuredContent"]["content"], "one\ntwo\n");
    // A free-form object (front matter) travels as its JSON text.
    let fm = json!({"title": "Use a dialect", "status": "accepted", "date": "2026-12-04"});
    let args = json!({"kind": "adr", "front_matter": fm.to_string(), "body": "# Use a dialect\n", "dry_run": true,
        "id": null, "idempotency_key": null});
    let made = call(&mut mcp, "knowledge_create", args.clone());
    assert_eq!(made["isError"], false, "{made}");
    let mut bad = args;
    bad["front_matter"] = json!("[1, 2]");
    let refused = call(&mut mcp, "knowledge_create", bad);
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["_meta"]["seneschal/error"]["code"], "invalid_input");
    assert_eq!(
        refused["_meta"]["seneschal/error"]["pointer"],
        "/front_matter"
    );
    // Without the dialect, a null is what it is: not a string.
    let mut plain = Mcp::start_with(repo.path(), &[], &[]);
    plain.initialize("2025-11-25");
    let strict = call(
        &mut plain,
        "files_read",
        json!({"path": "a.txt", "rev": null}),
    );
    assert_eq!(strict["isError"], true, "{strict}");
}
