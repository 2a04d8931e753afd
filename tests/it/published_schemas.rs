//! The schemas and examples the surfaces publish, as a client generator reads them from the
//! built binary: every OpenAPI tag defined, no type list (`type: [X, "null"]`) and no
//! free-form object without `additionalProperties` in the OpenAPI document or the MCP tool
//! list, every request example accepted by its schema, live answers (null fields included)
//! valid against the published output schemas, and the server card's resource templates equal
//! to what `resources/templates/list` answers.

use std::collections::BTreeSet;

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use crate::support::scratch_repo;
use serde_json::{json, Value};

/// Every schema of `v` (and every other object) that spells a type as a list, or is an object
/// schema that says nothing of its properties: `(pointer, what)`.
fn unportable(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.get("type").is_some_and(Value::is_array) {
                out.push(format!("{at}: type list {}", m["type"]));
            }
            let says = ["properties", "patternProperties", "additionalProperties"]
                .iter()
                .any(|k| m.contains_key(*k));
            if m.get("type") == Some(&json!("object")) && !says {
                out.push(format!(
                    "{at}: free-form object without additionalProperties"
                ));
            }
            for (k, sub) in m {
                if !["examples", "example", "default", "enum", "const"].contains(&k.as_str()) {
                    unportable(sub, &format!("{at}/{k}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                unportable(sub, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("{e}: {schema}"))
}

#[test]
fn the_served_openapi_document_defines_its_tags_and_publishes_portable_schemas_and_valid_examples()
{
    let repo = scratch_repo();
    let s = Serve::start(repo.path(), &[]);
    let (status, doc) = s.json("GET", "/openapi.json", None);
    assert_eq!(status, 200);
    let defined: BTreeSet<&str> = doc["tags"]
        .as_array()
        .expect("a tags list")
        .iter()
        .map(|t| t["name"].as_str().expect("a tag name"))
        .collect();
    let mut problems = Vec::new();
    unportable(&doc, "", &mut problems);
    let mut request_examples = 0;
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            for t in op["tags"].as_array().expect("tags") {
                if !defined.contains(t.as_str().unwrap()) {
                    problems.push(format!("{method} {path}: tag {t} is not defined"));
                }
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                if let Some(ex) = p.get("example") {
                    if !validator(&p["schema"]).is_valid(ex) {
                        problems.push(format!("{method} {path}: parameter example {ex}"));
                    }
                }
            }
            let media = &op["requestBody"]["content"]["application/json"];
            for (name, ex) in media["examples"].as_object().into_iter().flatten() {
                request_examples += 1;
                if !validator(&media["schema"]).is_valid(&ex["value"]) {
                    problems.push(format!("{method} {path}: request example {name}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(request_examples > 0, "no request example was checked");
    // The empty note is an example of invalid_input: never a request example.
    let notes = &doc["paths"]["/api/v1/session/notes"]["post"]["requestBody"]["content"]
        ["application/json"]["examples"];
    assert!(!notes.to_string().contains(r#""text":"""#), "{notes}");
    assert_eq!(
        doc["components"]["schemas"]["Problem"]["properties"]["data"]["additionalProperties"],
        true
    );
    s.finish();
}

/// Every integer schema under `v` without an upper bound: its pointer.
fn unbounded(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.get("type") == Some(&json!("integer"))
                && !m.contains_key("maximum")
                && !m.contains_key("exclusiveMaximum")
            {
                out.push(at.to_string());
            }
            for (k, sub) in m {
                unbounded(sub, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                unbounded(sub, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The document says what the server does: an operation with a body declares 413 (and a body
/// over `--max-body` gets it), every request example is one of success (the refusals are in
/// `x-seneschal-negative-examples`, each with its code and status), what can only answer 501
/// over HTTP is not published, and every integer a client sends has a `maximum`.
#[test]
fn the_openapi_document_declares_what_the_server_answers_and_only_what_succeeds_as_examples() {
    let repo = scratch_repo();
    let s = Serve::start_args(repo.path(), &["--max-body", "64"], &[]);
    let (status, doc) = s.json("GET", "/openapi.json", None);
    assert_eq!(status, 200);
    let mut problems = Vec::new();
    let mut negatives = 0;
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let id = op["operationId"].as_str().unwrap();
            let declared = |status: &str| op["responses"].get(status).is_some();
            for status in ["400", "403", "408", "417", "431", "500", "505"] {
                if !declared(status) {
                    problems.push(format!("{method} {path}: no {status}"));
                }
            }
            if method == "post" && !declared("413") {
                problems.push(format!("{method} {path}: no 413"));
            }
            if declared("501") {
                problems.push(format!("{method} {path}: published, yet it answers 501"));
            }
            let examples = &op["requestBody"]["content"]["application/json"]["examples"];
            for (name, ex) in examples.as_object().into_iter().flatten() {
                if ex["summary"].as_str().unwrap_or("").contains("answers `") {
                    problems.push(format!("{method} {path}: refusal {name} in examples"));
                }
            }
            for n in op["x-seneschal-negative-examples"]
                .as_array()
                .into_iter()
                .flatten()
            {
                negatives += 1;
                let code = n["code"].as_str().unwrap_or_default();
                let want = seneschal::error::ErrorCode::parse(code).map(|c| c.http_status());
                if code == "ok" || n["status"].as_u64() != want.map(u64::from) {
                    problems.push(format!("{id}: negative example {n}"));
                }
            }
        }
    }
    let mut open = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            for part in ["parameters", "requestBody"] {
                unbounded(&op[part], &format!("{method} {path} {part}"), &mut open);
            }
        }
    }
    problems.extend(
        open.into_iter()
            .map(|p| format!("{p}: an integer without maximum")),
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(negatives > 0, "no negative example was published");
    assert!(doc["paths"].get("/api/v1/knowledge/summarize").is_none());
    // A body over --max-body is the 413 the document declares.
    let big = json!({"text": "x".repeat(200)});
    let (status, problem) = s.json("POST", "/api/v1/session/notes", Some(&big));
    assert_eq!(status, 413, "{problem}");
    assert_eq!(problem["code"], "too_large", "{problem}");
    s.finish();
}

#[test]
fn the_tool_list_publishes_portable_schemas_that_live_answers_satisfy() {
    let repo = scratch_repo();
    let mut mcp = Mcp::start_with(repo.path(), &[], &[]);
    mcp.initialize("2025-11-25");
    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let mut problems = Vec::new();
    unportable(&list["result"], "", &mut problems);
    assert!(problems.is_empty(), "{problems:#?}");
    // repo.status on a repository with no upstream answers null fields: the published
    // (anyOf) output schema accepts them.
    let schema = &tools
        .iter()
        .find(|t| t["name"] == "repo_status")
        .expect("repo_status")["outputSchema"];
    assert!(
        schema["properties"]["upstream"]["anyOf"].is_array(),
        "{schema}"
    );
    let answer = mcp.request(
        "tools/call",
        json!({"name": "repo_status", "arguments": {}}),
    );
    let out = &answer["result"]["structuredContent"];
    assert_eq!(out["upstream"], Value::Null, "{answer}");
    let errors: Vec<String> = validator(schema)
        .iter_errors(out)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}: {out}");
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

#[test]
fn the_server_card_lists_the_resource_templates_every_server_answers() {
    let repo = scratch_repo();
    let s = Serve::start(repo.path(), &[]);
    let (status, card) = s.json("GET", "/.well-known/mcp/server-card.json", None);
    assert_eq!(status, 200);
    s.finish();
    let mut mcp = Mcp::start_with(repo.path(), &[], &[]);
    mcp.initialize("2025-11-25");
    let listed = mcp.request("resources/templates/list", json!({}));
    let (status, _, _) = mcp.finish();
    assert!(status.success());
    let templates = card["resourceTemplates"]
        .as_array()
        .expect("resourceTemplates");
    let names: Vec<&str> = templates
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["adr", "guide", "instructions", "skill"]);
    assert_eq!(
        card["resourceTemplates"], listed["result"]["resourceTemplates"],
        "the card and resources/templates/list disagree on a repository with no kinds of its own"
    );
}
