//! The annotation table of DESIGN §3, checked for every tool `seneschal mcp` lists against
//! its manifest, and a guard that no protocol code writes an annotation value itself.

use std::path::{Path, PathBuf};

use crate::support::mcp::Mcp;
use seneschal::policy::{Approval, Disclosure, Effect, ExecutionPolicy, Hints};
use serde_json::{json, Value};

/// A top-level scalar of a manifest, read from the YAML text itself (not from the registry
/// the build produced), so that the test would catch a codegen that drifts from manifests;
/// `None` when the manifest omits it.
fn manifest_scalar(id: &str, field: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("capabilities")
        .join(format!("{id}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| {
            v.split('#')
                .next()
                .unwrap_or_default()
                .trim()
                .trim_matches('\'')
                .trim_matches('"')
                .to_string()
        })
}

/// A top-level scalar every manifest has.
fn manifest_field(id: &str, field: &str) -> String {
    manifest_scalar(id, field).unwrap_or_else(|| panic!("{id}.yaml has no top-level `{field}`"))
}

#[test]
fn every_listed_tool_carries_the_policy_of_its_manifest() {
    let mut mcp = Mcp::start(&[]);
    let init = mcp.initialize("2025-11-25");
    let instructions = init["result"]["instructions"]
        .as_str()
        .expect("instructions")
        .to_string();
    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let exposed = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.mcp_tool.is_some())
        .count();
    assert_eq!(
        tools.len(),
        exposed,
        "every executable tool is listed under the full profile"
    );
    for t in tools {
        let name = t["name"].as_str().expect("name");
        let id = seneschal::registry::CAPABILITIES
            .iter()
            .find(|d| d.mcp_tool == Some(name))
            .map(|d| d.id)
            .expect("a listed tool is a capability's");
        assert_eq!(manifest_field(id, "kind"), "query", "{name}");
        let effect = Effect::parse(&manifest_field(id, "effect")).expect("a known effect");
        let disclosure =
            Disclosure::parse(&manifest_field(id, "disclosure")).expect("a known disclosure");
        // Optional in a manifest: absent means false.
        let additive = manifest_scalar(id, "additive").as_deref() == Some("true");
        let determinism = seneschal::policy::Determinism::parse(&manifest_field(id, "determinism"))
            .expect("a known determinism");
        let h = ExecutionPolicy::hints(effect, additive, determinism);
        let a = &t["annotations"];
        // What a client reads: MCP's default for each hint the entry leaves out.
        let read = Hints::as_read(|k| a.get(k).and_then(Value::as_bool));
        assert_eq!(read, h, "{name}: {a}");
        assert_eq!(
            a.as_object().map(|o| o.len()),
            Some(h.stated().len()),
            "{name}: {a}"
        );
        // The effect and approval are the instructions' to say, once (ADR 0007): the lists of
        // writes and process-state tools name it under its effect, and a read that needs no
        // approval is named as such.
        assert!(t.get("_meta").is_none(), "{name}: {t}");
        let approval = ExecutionPolicy::approval(effect, disclosure);
        let listed_under = |label: &str| {
            instructions
                .split(label)
                .nth(1)
                .and_then(|rest| rest.split('.').next())
                .is_some_and(|list| list.split(", ").any(|n| n.trim_start_matches(": ") == name))
        };
        match effect {
            Effect::RepositoryWrite => assert!(listed_under("(confirm each call)"), "{name}"),
            Effect::ProcessState => assert!(listed_under("(approved once a session)"), "{name}"),
            Effect::Read => {
                let free = instructions
                    .split("approved once a session (")
                    .nth(1)
                    .and_then(|rest| rest.split(" need").next())
                    .is_some_and(|list| list.split(", ").any(|n| n == name));
                assert_eq!(free, approval == Approval::None, "{name}");
            }
        }
        let (_, d) = seneschal::registry::find(id).expect("in the registry");
        assert_eq!(d.mcp_tool, Some(name));
        // The title is for people (OpenAPI, the reference); the entry leaves it out (ADR 0007).
        assert!(t.get("title").is_none(), "{name}");
        assert_eq!(t["description"], d.description);
        let input: Value = serde_json::from_str(d.input_schema).expect("schema");
        let output: Value = serde_json::from_str(d.output_schema).expect("schema");
        // The manifest's schemas, in the portable form every surface publishes.
        let published = seneschal_codegen::project::openapi::published_schema;
        let mut shared_bare = published(&input);
        for (shared, _) in seneschal::toolset::SHARED_INPUTS {
            if let Some(p) = shared_bare["properties"].get_mut(shared) {
                let p = p.as_object_mut().expect("a property is a schema");
                assert!(p.remove("description").is_some(), "{name}: {shared}");
                assert!(instructions.contains(shared), "{shared}");
            }
        }
        assert_eq!(t["inputSchema"], shared_bare, "{name}");
        // The output's top-level fields (ADR 0006): the whole schema is the capability's.
        let top = seneschal_codegen::project::mcp_tools::top_level;
        assert_eq!(t["outputSchema"], top(&published(&output)), "{name}");
        assert_eq!(t["inputSchema"]["type"], "object");
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every place in `text` where an annotation name is followed by a boolean literal (JSON,
/// `json!`, a struct field or a map insert), as `(line, snippet)`.
fn annotation_literals(text: &str) -> Vec<(usize, String)> {
    const NAMES: [&str; 4] = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for name in NAMES {
            let mut rest = line;
            while let Some(i) = rest.find(name) {
                let after = &rest[i + name.len()..];
                let tail: String = after
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .take(32)
                    .collect();
                let tail = tail.trim_start_matches(['"', '\'', ')']);
                let tail = tail
                    .trim_start_matches(".into(")
                    .trim_start_matches(".to_string(")
                    .trim_start_matches(')');
                let tail = tail.trim_start_matches([':', '=', ',', '>']);
                let tail = tail
                    .trim_start_matches("json!(")
                    .trim_start_matches("Value::Bool(");
                if tail.starts_with("true") || tail.starts_with("false") {
                    hits.push((n + 1, line.trim().to_string()));
                }
                rest = after;
            }
        }
    }
    hits
}

#[test]
fn the_literal_detector_finds_literals_and_spares_derived_values() {
    assert_eq!(
        annotation_literals(r#"json!({"readOnlyHint": true})"#).len(),
        1
    );
    assert_eq!(annotation_literals(r#"{"destructiveHint":false}"#).len(), 1);
    assert_eq!(
        annotation_literals(r#"t.insert("idempotentHint".into(), json!(false));"#).len(),
        1
    );
    assert_eq!(annotation_literals("openWorldHint = true").len(), 1);
    assert!(
        annotation_literals(r#"t.insert("readOnlyHint".into(), json!(h.read_only));"#).is_empty()
    );
    assert!(annotation_literals(r#""readOnlyHint": h.read_only,"#).is_empty());
}

#[test]
fn no_annotation_value_is_a_literal_in_protocol_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("mcp/src"), &mut files);
    files.push(root.join("core/src/handlers/mcp.rs"));
    assert!(files.len() >= 3, "the MCP sources are found");
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        // Unit tests may spell out expected values; only the code that answers is checked.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (line, snippet) in annotation_literals(code) {
            found.push(format!("{}:{line}: {snippet}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "annotation literals in protocol code:\n{}",
        found.join("\n")
    );
}
