//! Contracts through the built binary: one fixture pair per classification rule, the release
//! gate, and one digest everywhere.

use std::path::Path;

use crate::support::{json, run, stderr, stdout};
use serde_json::Value;

const BASE: &str = r#"id: demo.echo
kind: query
title: Echo a word
description: Returns the word it was given.
handler: demo::echo
effect: read
disclosure: none
determinism: input
stability: stable
toolset: files
input:
  type: object
  additionalProperties: false
  required: [word]
  properties:
    word: { type: string }
    times: { type: integer, minimum: 1, maximum: 3 }
    mode: { type: string, enum: [plain, loud] }
output:
  type: object
  additionalProperties: false
  required: [echo, length]
  properties:
    echo: { type: string }
    length: { type: integer }
errors: [not_found]
expose:
  mcp_tool: demo_echo
  http: { method: POST, path: /api/v1/demo/echo }
  cli: [demo, echo]
review: 'Echo "{word}"'
examples:
  - title: one word
    input: { word: hello }
    outcome: ok
"#;

/// Renders the contract lock of a registry holding the given manifests.
fn lock(manifests: &[(&str, String)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("capabilities")).unwrap();
    for (name, text) in manifests {
        std::fs::write(dir.path().join("capabilities").join(name), text).unwrap();
    }
    let inputs = seneschal_codegen::Inputs {
        root: dir.path().to_path_buf(),
        capabilities: dir.path().join("capabilities"),
        handlers: None,
        version: "0.1.0".into(),
    };
    let reg = seneschal_codegen::load_registry(&inputs)
        .unwrap_or_else(|d| panic!("{}", seneschal_codegen::report(&d)));
    let (files, _) = seneschal_codegen::committed_projections(&reg);
    files
        .into_iter()
        .find(|(n, _)| *n == "contract.lock")
        .unwrap()
        .1
}

fn base() -> Vec<(&'static str, String)> {
    vec![("demo.echo.yaml", BASE.to_string())]
}

fn changed(from: &str, to: &str) -> Vec<(&'static str, String)> {
    assert!(BASE.contains(from), "{from}");
    vec![("demo.echo.yaml", BASE.replace(from, to))]
}

/// Runs `contract diff OLD NEW --json` and returns (highest class, findings as text lines).
fn classify(old: &str, new: &str) -> (Option<String>, Vec<String>, i32) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("old.lock"), dir.path().join("new.lock"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let o = run(&[
        "--json",
        "contract",
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let v = json(&o);
    let findings = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}: {}: {}",
                f["class"].as_str().unwrap(),
                f["capability"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    (
        v["highest"].as_str().map(str::to_string),
        findings,
        o.status.code().unwrap(),
    )
}

fn assert_class(new: Vec<(&'static str, String)>, class: &str, finding: &str) {
    let (highest, findings, code) = classify(&lock(&base()), &lock(&new));
    assert_eq!(highest.as_deref(), Some(class), "{findings:?}");
    assert!(
        findings.iter().any(|f| f == finding),
        "expected `{finding}` in {findings:?}"
    );
    let expected_code = match class {
        "wire" => 20,
        "patch" => 21,
        "minor" => 22,
        _ => 23,
    };
    assert_eq!(code, expected_code);
}

#[test]
fn identical_locks_have_no_change() {
    let (highest, findings, code) = classify(&lock(&base()), &lock(&base()));
    assert_eq!((highest, findings.len(), code), (None, 0, 0));
}

#[test]
fn removing_a_capability_is_breaking() {
    let other = BASE
        .replace("demo.echo", "demo.other")
        .replace("demo_echo", "demo_other")
        .replace("/demo/echo", "/demo/other")
        .replace("[demo, echo]", "[demo, other]");
    let mut both = base();
    both.push(("demo.other.yaml", other));
    let (highest, findings, _) = classify(&lock(&both), &lock(&base()));
    assert_eq!(highest.as_deref(), Some("breaking"));
    assert_eq!(findings, ["breaking: demo.other: capability removed"]);
    // and adding one is minor
    let (highest, findings, _) = classify(&lock(&base()), &lock(&both));
    assert_eq!(highest.as_deref(), Some("minor"));
    assert_eq!(findings, ["minor: demo.other: capability added"]);
}

#[test]
fn renaming_or_removing_an_exposure_is_breaking() {
    assert_class(
        changed("mcp_tool: demo_echo", "mcp_tool: demo_say"),
        "breaking",
        "breaking: demo.echo: mcp_tool exposure renamed from \"demo_echo\" to \"demo_say\"",
    );
    assert_class(
        changed("  http: { method: POST, path: /api/v1/demo/echo }\n", ""),
        "breaking",
        "breaking: demo.echo: http exposure \"POST /api/v1/demo/echo\" removed",
    );
    assert_class(
        changed("  cli: [demo, echo]\n", ""),
        "breaking",
        "breaking: demo.echo: cli exposure \"demo echo\" removed",
    );
    assert_class(
        changed(
            "  mcp_tool: demo_echo\n",
            "  mcp_tool: demo_echo\n  mcp_resource: demo://echo\n",
        )
        .into_iter()
        .map(|(n, t)| {
            (
                n,
                t.replace(
                    "  required: [word]\n  properties:\n    word",
                    "  properties:\n    word",
                )
                .replace("input: { word: hello }", "input: {}"),
            )
        })
        .collect(),
        "minor",
        "minor: demo.echo: mcp_resource exposure \"demo://echo\" added",
    );
}

#[test]
fn a_new_required_input_is_breaking_and_an_optional_one_minor() {
    assert_class(
        changed("required: [word]", "required: [word, lang]\n  x-unused: 0")
            .into_iter()
            .map(|(n, t)| {
                (
                    n,
                    t.replace("\n  x-unused: 0", "")
                        .replace("    mode:", "    lang: { type: string }\n    mode:")
                        .replace("input: { word: hello }", "input: { word: hello, lang: en }"),
                )
            })
            .collect(),
        "breaking",
        "breaking: demo.echo: required input `lang` added",
    );
    assert_class(
        changed("    mode:", "    lang: { type: string }\n    mode:"),
        "minor",
        "minor: demo.echo: optional input `lang` added",
    );
}

#[test]
fn a_narrowed_input_is_breaking_and_a_widened_one_minor() {
    assert_class(
        changed("maximum: 3", "maximum: 2"),
        "breaking",
        "breaking: demo.echo: input `times` narrowed",
    );
    assert_class(
        changed("enum: [plain, loud]", "enum: [plain]"),
        "breaking",
        "breaking: demo.echo: input `mode` narrowed",
    );
    assert_class(
        changed("enum: [plain, loud]", "enum: [plain, loud, whisper]"),
        "minor",
        "minor: demo.echo: input `mode` widened",
    );
    assert_class(
        changed(
            "    word: { type: string }",
            "    word: { type: integer, maximum: 9 }",
        )
        .into_iter()
        .map(|(n, t)| (n, t.replace("input: { word: hello }", "input: { word: 7 }")))
        .collect(),
        "breaking",
        "breaking: demo.echo: input `word` narrowed",
    );
}

#[test]
fn a_removed_output_field_is_breaking_and_an_added_one_minor() {
    assert_class(
        changed("required: [echo, length]", "required: [echo]")
            .into_iter()
            .map(|(n, t)| (n, t.replace("    length: { type: integer }\n", "")))
            .collect(),
        "breaking",
        "breaking: demo.echo: output field `length` removed",
    );
    assert_class(
        changed(
            "    length: { type: integer }\n",
            "    length: { type: integer }\n    lang: { type: string }\n",
        ),
        "minor",
        "minor: demo.echo: output field `lang` added",
    );
}

#[test]
fn an_escalated_effect_is_breaking() {
    assert_class(
        changed("effect: read", "effect: repository_write"),
        "breaking",
        "breaking: demo.echo: effect escalated from read to repository_write",
    );
    let (highest, findings, _) = classify(
        &lock(&changed("effect: read", "effect: process_state")),
        &lock(&base()),
    );
    assert_eq!(highest.as_deref(), Some("minor"));
    assert!(
        findings
            .contains(&"minor: demo.echo: effect relaxed from process_state to read".to_string()),
        "{findings:?}"
    );
}

#[test]
fn error_codes_removed_are_breaking_and_added_minor() {
    assert_class(
        changed("errors: [not_found]", "errors: []"),
        "breaking",
        "breaking: demo.echo: error code `not_found` removed",
    );
    assert_class(
        changed("errors: [not_found]", "errors: [not_found, conflict]"),
        "minor",
        "minor: demo.echo: error code `conflict` added",
    );
}

#[test]
fn prose_and_examples_are_patch() {
    assert_class(
        changed(
            "description: Returns the word it was given.",
            "description: Returns the given word.",
        ),
        "patch",
        "patch: demo.echo: description changed",
    );
    assert_class(
        changed("title: Echo a word", "title: Echo one word"),
        "patch",
        "patch: demo.echo: title changed",
    );
    assert_class(
        changed("title: one word", "title: a single word"),
        "patch",
        "patch: demo.echo: examples or review sentence changed",
    );
    assert_class(
        changed(
            "    word: { type: string }",
            "    word: { type: string, description: The word. }",
        ),
        "patch",
        "patch: demo.echo: input `word` documentation changed",
    );
}

#[test]
fn a_projection_hash_moving_alone_is_wire() {
    let old = lock(&base());
    let mut v: Value = serde_json::from_str(&old).unwrap();
    v["capabilities"]["demo.echo"]["projections"]["openapi"] = Value::String("sha256:0000".into());
    let (highest, findings, code) = classify(&serde_json::to_string(&v).unwrap(), &old);
    assert_eq!(highest.as_deref(), Some("wire"));
    assert_eq!(findings, ["wire: demo.echo: the generator changed the rendering of openapi while every section stayed"]);
    assert_eq!(code, 20);
}

#[test]
fn the_release_gate_fails_until_the_version_is_bumped() {
    let current: Value =
        serde_json::from_str(seneschal::registry::projections::CONTRACT_LOCK).unwrap();
    // Same version, breaking change: the gate fails.
    let dir = tempfile::tempdir().unwrap();
    let releases = dir.path().join("releases");
    std::fs::create_dir_all(&releases).unwrap();
    // A release in which `capabilities.list` could also answer `not_found`: today's binary
    // removed that code, a breaking change.
    let mut release_lock = current.clone();
    release_lock["capabilities"]["capabilities.list"]["behaviour"]["value"]["effect"] =
        Value::String("read".into());
    release_lock["capabilities"]["capabilities.list"]["behaviour"]["sha256"] =
        Value::String("sha256:older".into());
    release_lock["capabilities"]["capabilities.list"]["errors"]["value"] =
        serde_json::json!(["internal", "invalid_input", "not_found", "refused"]);
    release_lock["capabilities"]["capabilities.list"]["errors"]["sha256"] =
        Value::String("sha256:older".into());
    let version = env!("CARGO_PKG_VERSION");
    std::fs::write(
        releases.join(format!("v{version}.lock")),
        serde_json::to_string(&release_lock).unwrap(),
    )
    .unwrap();
    let o = run(&[
        "contract",
        "check",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(24), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("breaking: capabilities.list: error code `not_found` removed"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("requires a minor bump"),
        "{}",
        stderr(&o)
    );
    // The same lock recorded as an older release (0.0.x → 0.1.0 is a minor bump): it passes.
    std::fs::remove_file(releases.join(format!("v{version}.lock"))).unwrap();
    std::fs::write(
        releases.join("v0.0.9.lock"),
        serde_json::to_string(&release_lock).unwrap(),
    )
    .unwrap();
    let o = run(&[
        "contract",
        "check",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("contract check passed: breaking change since v0.0.9"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn release_records_the_lock_and_refuses_to_overwrite_another() {
    let dir = tempfile::tempdir().unwrap();
    let releases = dir.path().join("r");
    let o = run(&[
        "contract",
        "release",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let path = releases.join(format!("v{}.lock", env!("CARGO_PKG_VERSION")));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        seneschal::registry::projections::CONTRACT_LOCK
    );
    std::fs::write(&path, "{}").unwrap();
    let o = run(&[
        "contract",
        "release",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let o = run(&[
        "contract",
        "check",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a broken release lock is invalid input: {}",
        stderr(&o)
    );
}

#[test]
fn diff_refuses_what_is_not_a_lock() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.lock");
    std::fs::write(&p, "not json").unwrap();
    let o = run(&["contract", "diff", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a contract lock"));
    let o = run(&["contract", "diff", "no-such-revision-or-file"]);
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn one_digest_everywhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lock: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("generated/contract.lock")).unwrap(),
    )
    .unwrap();
    let digest = lock["digest"].as_str().unwrap().to_string();
    assert!(digest.starts_with("sha256:") && digest.len() == 71);
    let card: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("generated/server-card.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(card["_meta"]["seneschal/digest"], digest.as_str());
    let openapi: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("generated/openapi.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(openapi["info"]["x-seneschal-digest"], digest.as_str());
    let o = run(&["--version", "--verbose"]);
    assert!(
        stdout(&o).contains(&format!("digest: {digest}\n")),
        "{}",
        stdout(&o)
    );
    let v = json(&run(&["contract", "digest"]));
    assert_eq!(v["digest"], digest.as_str());
    let v = json(&run(&["contract", "digest", "--include-lock"]));
    assert_eq!(v["lock"], lock);
}

#[test]
fn an_escalated_effect_fails_the_gate_until_the_version_is_bumped_accordingly() {
    use seneschal::contract::{diff, gate, Version};
    let old: Value = serde_json::from_str(&lock(&base())).unwrap();
    let new: Value =
        serde_json::from_str(&lock(&changed("effect: read", "effect: repository_write"))).unwrap();
    let findings = diff(&old, &new);
    let v = |s| Version::parse(s).unwrap();
    assert!(gate(v("0.1.0"), v("0.1.0"), &findings).is_err());
    let err = gate(v("0.1.0"), v("0.1.1"), &findings).unwrap_err();
    assert!(
        err.contains("breaking change since v0.1.0 requires a minor bump"),
        "{err}"
    );
    assert!(gate(v("0.1.0"), v("0.2.0"), &findings).is_ok());
    assert!(gate(v("1.4.2"), v("1.5.0"), &findings).is_err());
    assert!(gate(v("1.4.2"), v("2.0.0"), &findings).is_ok());
    // A description change needs only a patch bump.
    let prose: Value = serde_json::from_str(&lock(&changed(
        "description: Returns the word it was given.",
        "description: Echoes.",
    )))
    .unwrap();
    let findings = diff(&old, &prose);
    assert!(gate(v("0.1.0"), v("0.1.0"), &findings).is_err());
    assert!(gate(v("0.1.0"), v("0.1.1"), &findings).is_ok());
}

/// `cargo test` runs the gate CI runs (`.ci/run`): this build's lock against the last release
/// lock under `generated/releases/`, with the version in Cargo.toml. A surface change without
/// the bump it needs fails here, locally, naming the bump; the gate's failing side is
/// `the_release_gate_fails_until_the_version_is_bumped`.
#[test]
fn this_build_passes_the_release_gate_ci_runs() {
    let releases = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/releases");
    let o = run(&[
        "contract",
        "check",
        "--releases",
        releases.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "{}{}the surface changed more than the version in Cargo.toml says: bump it as the line above asks (README, \"Adding a capability\", step 5)",
        stdout(&o),
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("contract check passed"),
        "{}",
        stdout(&o)
    );
}
