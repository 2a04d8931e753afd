//! Every refusal path of the repository writes, over MCP (`seneschal mcp` on pipes), HTTP
//! (`seneschal serve` on loopback) and the CLI: the same input gets the same error code on each,
//! changes no file, and is recorded in the audit log with its transport.

use crate::support;
use std::path::Path;

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use serde_json::{json, Value};

const STALE: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn repo() -> tempfile::TempDir {
    support::adr_repo()
}

/// The refusals: (capability, input, expected code). The setup makes the last two meaningful.
fn refusals(dir: &Path) -> Vec<(&'static str, Value, &'static str)> {
    let digest = support::json(&support::run_in(
        dir,
        &[
            "call",
            "knowledge.get",
            "--input",
            r#"{"uri":"seneschal://knowledge/adr/0001"}"#,
        ],
    ))["digest"]
        .clone();
    vec![
        (
            "knowledge.create",
            json!({"kind": "adr", "front_matter": {"title": "No status"}}),
            "invalid_input",
        ),
        (
            "knowledge.create",
            json!({"kind": "adr", "id": "0001", "front_matter": {"title": "T", "status": "proposed", "date": "2026-11-30"}}),
            "conflict",
        ),
        (
            "knowledge.create",
            json!({"kind": "guide", "id": "escape", "front_matter": {"title": "Escape"}}),
            "refused",
        ),
        (
            "knowledge.update",
            json!({"uri": "seneschal://knowledge/adr/0001", "expected_digest": STALE, "body": "x\n"}),
            "conflict",
        ),
        (
            "knowledge.update",
            json!({"uri": "seneschal://knowledge/adr/0001", "expected_digest": digest, "front_matter": {"title": "T"}}),
            "invalid_input",
        ),
        (
            "knowledge.update",
            json!({"uri": "seneschal://knowledge/adr/0404", "expected_digest": STALE}),
            "not_found",
        ),
        (
            "knowledge.delete",
            json!({"uri": "seneschal://knowledge/adr/0001", "expected_digest": STALE}),
            "conflict",
        ),
        (
            "knowledge.delete",
            json!({"uri": "seneschal://knowledge/adr/0001", "expected_digest": "nope"}),
            "invalid_input",
        ),
        // The key was used (below, before these run) for another request.
        (
            "knowledge.create",
            json!({"kind": "adr", "front_matter": {"title": "Other", "status": "proposed", "date": "2026-11-30"}, "idempotency_key": "used"}),
            "conflict",
        ),
    ]
}

/// Prepares a repository: a kind folder that is a link outside, and a used idempotency key.
fn prepare() -> (tempfile::TempDir, tempfile::TempDir) {
    let d = repo();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("docs/guides")).unwrap();
    let o = support::run_in(
        d.path(),
        &[
            "call",
            "knowledge.create",
            "--yes",
            "--input",
            r#"{"kind":"adr","front_matter":{"title":"Keyed","status":"proposed","date":"2026-11-30"},"idempotency_key":"used"}"#,
        ],
    );
    assert!(o.status.success(), "{}", support::stderr(&o));
    (d, outside)
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir.join("docs/adr")).unwrap().flatten() {
        out.push((
            e.file_name().to_string_lossy().into_owned(),
            std::fs::read(e.path()).unwrap(),
        ));
    }
    out.sort();
    out
}

fn audit_tail(dir: &Path, n: usize) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl")).unwrap();
    let all: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    all[all.len() - n..].to_vec()
}

fn after_all(dir: &Path, outside: &Path, before: &[(String, Vec<u8>)], n: usize, transport: &str) {
    assert_eq!(
        snapshot(dir),
        before,
        "{transport}: no refusal changed a file"
    );
    assert_eq!(std::fs::read_dir(outside).unwrap().count(), 0);
    for r in audit_tail(dir, n) {
        assert_eq!(r["outcome"], "refused", "{r}");
        assert_eq!(r["transport"], transport, "{r}");
    }
    let v = support::run_in(dir, &["audit", "verify"]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

#[test]
fn refusals_over_the_cli() {
    let (d, outside) = prepare();
    let dir = d.path();
    let before = snapshot(dir);
    let cases = refusals(dir);
    for (id, input, code) in &cases {
        let o = support::run_in(dir, &["call", id, "--yes", "--input", &input.to_string()]);
        let err = support::stderr(&o);
        assert!(
            err.starts_with(&format!("error[{code}]")),
            "{id} {input}: {err}"
        );
        let expected = match *code {
            "invalid_input" => 2,
            "not_found" => 3,
            "refused" => 4,
            _ => 5,
        };
        assert_eq!(o.status.code(), Some(expected), "{id}: {err}");
    }
    after_all(dir, outside.path(), &before, cases.len(), "cli");
}

#[test]
fn refusals_over_mcp() {
    let (d, outside) = prepare();
    let dir = d.path();
    let before = snapshot(dir);
    let cases = refusals(dir);
    let mut mcp = Mcp::start_with(dir, &[], &[]);
    mcp.initialize("2025-11-25");
    for (id, input, code) in &cases {
        let a = mcp.request(
            "tools/call",
            json!({"name": id.replace('.', "_"), "arguments": input}),
        );
        assert_eq!(a["result"]["isError"], true, "{id} {input}: {a}");
        assert_eq!(
            a["result"]["_meta"]["seneschal/error"]["code"], *code,
            "{id} {input}: {a}"
        );
    }
    // A conflict carries the current digest.
    let a = mcp.request(
        "tools/call",
        json!({"name": "knowledge_update", "arguments": cases[3].1}),
    );
    assert!(a.to_string().contains("current_digest"), "{a}");
    let _ = mcp.finish();
    after_all(dir, outside.path(), &before, cases.len() + 1, "mcp");
    // A read-only process lists no writer and refuses one by name, writing nothing.
    let mut ro = Mcp::start_with(dir, &["--allow-effects", "read"], &[]);
    ro.initialize("2025-11-25");
    let a = ro.request(
        "tools/call",
        json!({"name": "knowledge_delete", "arguments": cases[6].1}),
    );
    let text = a.to_string();
    assert!(text.contains("refused") || a["error"].is_object(), "{a}");
    let _ = ro.finish();
    assert_eq!(snapshot(dir), before);
}

fn post(s: &Serve, path: &str, body: &Value) -> (u16, Value) {
    s.json("POST", path, Some(body))
}

#[test]
fn refusals_over_http() {
    let (d, outside) = prepare();
    let dir = d.path();
    let before = snapshot(dir);
    let cases = refusals(dir);
    let s = Serve::start(dir, &[]);
    for (id, input, code) in &cases {
        let path = format!(
            "/api/v1/knowledge/{}",
            id.strip_prefix("knowledge.").unwrap()
        );
        let (status, problem) = post(&s, &path, input);
        assert_eq!(problem["code"], *code, "{id} {input}: {status} {problem}");
        let expected = match *code {
            "invalid_input" => 400,
            "not_found" => 404,
            "refused" => 403,
            _ => 409,
        };
        assert_eq!(status, expected, "{id}: {problem}");
    }
    // An applied write over HTTP is recorded with its transport.
    let (status, created) = post(
        &s,
        "/api/v1/knowledge/create",
        &json!({"kind": "adr", "front_matter": {"title": "Over HTTP", "status": "proposed", "date": "2026-11-30"}}),
    );
    assert_eq!(status, 200, "{created}");
    drop(s);
    let last = audit_tail(dir, 1).remove(0);
    assert_eq!(
        (last["outcome"].as_str(), last["transport"].as_str()),
        (Some("applied"), Some("http"))
    );
    std::fs::remove_file(dir.join(created["file"].as_str().unwrap())).unwrap();
    // The refusals, then the applied write's intent and outcome.
    let tail = audit_tail(dir, cases.len() + 2);
    assert!(tail[..cases.len()]
        .iter()
        .all(|r| r["outcome"] == "refused" && r["transport"] == "http"));
    assert_eq!(snapshot(dir), before);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
