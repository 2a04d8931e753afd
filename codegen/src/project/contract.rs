//! `generated/contract.lock`: per capability, hashed sections and the hash of each
//! projection's rendering of it, and one server digest over all of it.
//!
//! Each section hash is the SHA-256 of the section's RFC 8785 (JCS) canonical JSON. The lock
//! keeps each section's material beside its hash, so `seneschal contract diff` can classify a
//! change from two locks alone.

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::{cli_reference, json_text, mcp_tools, openapi, reference, GENERATED_BY};
use crate::model::{hints_json, Capability, Registry};

/// `sha256:<hex>` of the canonical JSON of `value`.
pub fn hash_json(value: &Value) -> String {
    let canonical = serde_json_canonicalizer::to_vec(value).expect("JSON values canonicalize");
    hash_bytes(&canonical)
}

/// `sha256:<hex>` of bytes.
pub fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::from("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn section(value: Value) -> Value {
    json!({ "sha256": hash_json(&value), "value": value })
}

/// The sections of one capability, given its tool entry and OpenAPI operation as the other
/// projections rendered them (`None` when it has none: not exposed, or planned).
pub fn capability_entry(c: &Capability, tool: Option<&Value>, operation: Option<&Value>) -> Value {
    let e = &c.expose;
    let surface = json!({
        "name": c.id,
        "title": c.title,
        "description": c.description,
        "input": c.input,
        "output": c.output,
    });
    let mut behaviour = json!({
        "effect": c.effect.as_str(),
        "hints": hints_json(c.hints()),
        "approval": c.approval().as_str(),
        "disclosure": c.disclosure.as_str(),
        "determinism": c.determinism.as_str(),
        "stability": c.stability.as_str(),
    });
    c.mark_additive(&mut behaviour, "additive");
    // Like `additive`, present only when declared, so that older locks stay equal.
    if let Some(t) = &c.task {
        behaviour["task"] = json!(t);
    }
    let errors = json!(c
        .all_errors()
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>());
    let exposures = json!({
        "mcp_tool": e.mcp_tool,
        "mcp_resource": e.mcp_resource,
        "http": e.http.as_ref().map(|h| format!("{} {}", h.method, h.path)),
        "cli": e.cli.as_ref().map(|p| p.join(" ")),
        "toolset": c.toolset.as_str(),
    });
    let examples = json!({ "review": c.review, "examples": c.examples });
    let executable = c.executable();
    let projections = json!({
        "mcp_tool": tool.map(hash_json),
        "openapi": operation.map(hash_json),
        "cli": e.cli.as_ref().filter(|_| executable).map(|_| hash_bytes(cli_reference::section(c).as_bytes())),
        "reference": hash_bytes(reference::section(c).as_bytes()),
        // What the tool costs an agent's context in every session's `tools/list`.
        "mcp_tool_bytes": tool.map(mcp_tools::cost),
    });
    json!({
        "surface": section(surface),
        "behaviour": section(behaviour),
        "errors": section(errors),
        "exposures": section(exposures),
        "examples": section(examples),
        "projections": projections,
    })
}

/// The server digest: the hash of every capability's section and projection hashes. The
/// package version is not part of it, so it names the surface, not the release.
pub fn digest(entries: &Map<String, Value>) -> String {
    let mut hashes = Map::new();
    for (id, entry) in entries {
        let mut h = Map::new();
        for (name, sec) in entry.as_object().expect("entries are objects") {
            let v = if name == "projections" {
                sec.clone()
            } else {
                sec["sha256"].clone()
            };
            h.insert(name.clone(), v);
        }
        hashes.insert(id.clone(), Value::Object(h));
    }
    hash_json(&Value::Object(hashes))
}

/// The lock and its digest.
pub fn render(reg: &Registry) -> (String, String) {
    render_with(
        reg,
        &mcp_tools::Tools::new(reg),
        &openapi::Operations::new(reg),
    )
}

/// [`render`] hashing the tool entries and operations already rendered for the other
/// projections instead of rendering them again.
pub fn render_with(
    reg: &Registry,
    tools: &mcp_tools::Tools,
    operations: &openapi::Operations,
) -> (String, String) {
    let tools: HashMap<&str, &Value> = tools.by_id();
    let operations: HashMap<&str, &Value> = operations.by_id();
    let entries: Map<String, Value> = reg
        .capabilities
        .iter()
        .map(|c| {
            let id = c.id.as_str();
            let entry = capability_entry(c, tools.get(id).copied(), operations.get(id).copied());
            (c.id.clone(), entry)
        })
        .collect();
    let digest = digest(&entries);
    let text = json_text(&json!({
        "x-generated-by": GENERATED_BY,
        "lock_version": 1,
        "version": reg.version,
        "digest": digest,
        "capabilities": entries,
    }));
    (text, digest)
}
