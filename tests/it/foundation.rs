//! Black-box tests of the foundation through the built binary: the registry commands, `call`
//! and its error codes, and `generate [--check]`.

use crate::support::{json, run, run_in, stderr, stdout};
use seneschal::codes::ErrorCode;

fn code(o: &std::process::Output) -> i32 {
    o.status.code().expect("exited normally")
}

#[test]
fn capabilities_list_names_every_capability_of_the_registry() {
    let o = run(&["capabilities", "list"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    let ids: Vec<&str> = v["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = seneschal::registry::CAPABILITIES
        .iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(ids, expected);
    // Each entry says whether it executes, as the registry does: a planned capability is
    // listed, not executable.
    for (c, d) in v["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .zip(seneschal::registry::CAPABILITIES.iter())
    {
        assert_eq!(c["executable"], d.executable(), "{}", d.id);
        assert_eq!(c["stability"], d.stability.as_str(), "{}", d.id);
    }
}

#[test]
fn capabilities_list_filters_by_effect_and_rejects_unknown_effects() {
    let o = run(&["capabilities", "list", "--effect", "read"]);
    assert_eq!(code(&o), 0);
    assert!(json(&o)["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["effect"] == "read"));
    let o = run(&["capabilities", "list", "--effect", "teleport"]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(stderr(&o).contains("teleport"), "{}", stderr(&o));
}

#[test]
fn capabilities_show_returns_the_descriptor_or_not_found() {
    let o = run(&["capabilities", "show", "--id", "capabilities.list"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["id"], "capabilities.list");
    assert_eq!(v["hints"]["readOnlyHint"], true);
    assert_eq!(v["expose"]["mcp_tool"], "capabilities_list");
    assert_eq!(v["source"], "capabilities/capabilities.list.yaml");
    let o = run(&["capabilities", "show", "--id", "no.such"]);
    assert_eq!(code(&o), i32::from(ErrorCode::NotFound.exit_code()));
    assert!(
        stderr(&o).starts_with("error[not_found]:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_required_flag_is_invalid_input() {
    let o = run(&["capabilities", "show"]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(stderr(&o).contains("--id"), "{}", stderr(&o));
}

#[test]
fn projections_report_hints_derived_from_effects() {
    let v = json(&run(&["capabilities", "projections"]));
    for c in v["capabilities"].as_array().unwrap() {
        let effect = seneschal::policy::Effect::parse(c["effect"].as_str().unwrap()).unwrap();
        let (_, d) = seneschal::registry::find(c["id"].as_str().unwrap()).unwrap();
        let h = seneschal::policy::ExecutionPolicy::hints(effect, d.additive, d.determinism);
        assert_eq!(c["readOnlyHint"], h.read_only, "{}", c["id"]);
        assert_eq!(c["destructiveHint"], h.destructive, "{}", c["id"]);
        assert_eq!(c["idempotentHint"], h.idempotent, "{}", c["id"]);
        assert_eq!(c["openWorldHint"], h.open_world, "{}", c["id"]);
    }
}

#[test]
fn call_runs_any_capability_through_the_executor() {
    let o = run(&["call", "server.status"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["name"], "seneschal");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        v["capabilities"]["total"],
        seneschal::registry::CAPABILITIES.len()
    );
    let o = run(&["call", "docs.architecture"]);
    assert_eq!(code(&o), 0);
    let v = json(&o);
    assert_eq!(v["uri"], "seneschal://docs/architecture");
    assert_eq!(
        v["text"],
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ARCHITECTURE.md"))
            .unwrap()
    );
}

#[test]
fn call_with_malformed_json_is_invalid_input() {
    let o = run(&["call", "capabilities.show", "--input", "{id: nope"]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(
        stderr(&o).contains("error[invalid_input]: --input is not JSON"),
        "{}",
        stderr(&o)
    );
    let o = run(&["call", "capabilities.show", "--input", "[1, 2]"]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(
        stderr(&o).contains("must be a JSON object"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn call_with_schema_violating_input_names_the_pointer() {
    let o = run(&["call", "capabilities.show", "--input", r#"{"id": 7}"#]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    let err = stderr(&o);
    assert!(err.contains("error[invalid_input]: /id:"), "{err}");
    assert!(err.contains("at: /id"), "{err}");
    let o = run(&[
        "call",
        "capabilities.list",
        "--input",
        r#"{"colour": "blue"}"#,
    ]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(stderr(&o).contains("colour"), "{}", stderr(&o));
    let o = run(&["call", "capabilities.show", "--input", "{}"]);
    assert_eq!(code(&o), i32::from(ErrorCode::InvalidInput.exit_code()));
    assert!(stderr(&o).contains("id"), "{}", stderr(&o));
}

#[test]
fn planned_and_unknown_capabilities_are_refused_with_their_codes() {
    for d in seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| !d.executable())
    {
        let o = run(&["call", d.id, "--input", &example_input(d)]);
        assert_eq!(code(&o), i32::from(ErrorCode::Unsupported.exit_code()));
        assert!(stderr(&o).contains("error[unsupported]"), "{}", stderr(&o));
    }
    let o = run(&["call", "no.such"]);
    assert_eq!(code(&o), i32::from(ErrorCode::NotFound.exit_code()));
}

#[test]
fn allow_effects_refuses_capabilities_above_the_profile() {
    // Every capability is refused under a profile weaker than its effect; with only readers
    // in the registry, check the policy order with the strongest profile allowed and the
    // executor's refusal path through a profile below an existing effect when one exists.
    let stronger: Vec<_> = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect > seneschal::policy::Effect::Read)
        .collect();
    for d in stronger {
        let o = run(&[
            "call",
            d.id,
            "--allow-effects",
            "read",
            "--input",
            &example_input(d),
        ]);
        assert_eq!(
            code(&o),
            i32::from(ErrorCode::Refused.exit_code()),
            "{}: {}",
            d.id,
            stderr(&o)
        );
    }
    let o = run(&["call", "server.status", "--allow-effects", "read"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["allowed_effects"], serde_json::json!(["read"]));
}

fn example_input(d: &seneschal::registry::Descriptor) -> String {
    let examples: serde_json::Value = serde_json::from_str(d.examples_json).unwrap();
    examples[0]["input"].to_string()
}

#[test]
fn every_example_of_every_capability_has_its_declared_outcome() {
    // In a scratch copy of the tracked files: a writer's example refused by its schema leaves
    // its audit record, which must not land in the checkout.
    let scratch = seneschal::conformance::scratch(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
        .expect("a scratch copy");
    for d in seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable())
    {
        let examples: serde_json::Value = serde_json::from_str(d.examples_json).unwrap();
        for ex in examples.as_array().unwrap() {
            // Writers are asked for their plan only (a dry run checks everything a real call
            // checks and writes nothing); conformance runs them for real.
            let mut input = ex["input"].clone();
            if d.effect == seneschal::policy::Effect::RepositoryWrite {
                input["dry_run"] = serde_json::json!(true);
            }
            let o = run_in(
                &scratch.path,
                &["call", d.id, "--input", &input.to_string()],
            );
            let outcome = ex["outcome"].as_str().unwrap();
            let expected = if outcome == "ok" {
                0
            } else {
                i32::from(ErrorCode::parse(outcome).unwrap().exit_code())
            };
            assert_eq!(
                code(&o),
                expected,
                "{} / {}: {}",
                d.id,
                ex["title"],
                stderr(&o)
            );
        }
    }
}

#[test]
fn human_output_is_a_table_and_json_is_opt_in() {
    // Stdout is a pipe here, so the default is JSON; the renderer itself is tested directly.
    let v = json(&run(&["capabilities", "list"]));
    let table = seneschal::cli::render::human(&v);
    let header = table.lines().next().unwrap();
    assert!(header.starts_with("ID"), "{header}");
    assert!(header.contains("EFFECT"), "{header}");
    assert!(table.contains("capabilities.list"));
}

#[test]
fn help_documents_every_exit_code() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), 0);
    let help = stdout(&o);
    for c in ErrorCode::ALL {
        assert!(
            help.contains(&format!("{:<3} {}", c.exit_code(), c.as_str())),
            "{help}"
        );
    }
    assert!(help.contains("10  generate --check"), "{help}");
}

#[test]
fn generate_check_passes_on_the_committed_projections() {
    let o = run(&["generate", "--check"]);
    assert_eq!(
        code(&o),
        0,
        "stale projections: {} — run `cargo run -- generate` and commit",
        stderr(&o)
    );
}

#[test]
fn generate_check_exits_10_on_a_tampered_copy_and_names_the_file() {
    // `generate` is a maintainer command: it runs in this checkout, writing where --dir says.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let o = run(&["generate", "--dir", out_arg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(&["generate", "--check", "--dir", out_arg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let path = out.join("openapi.json");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replace("\"openapi\": \"3.1.0\"", "\"openapi\": \"3.0.0\"");
    std::fs::write(&path, text).unwrap();
    std::fs::remove_file(out.join("capabilities.md")).unwrap();
    let o = run(&["generate", "--check", "--dir", out_arg]);
    assert_eq!(code(&o), i32::from(seneschal::codes::EXIT_STALE));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("stale: {out_arg}/openapi.json")),
        "{err}"
    );
    assert!(
        err.contains(&format!("stale: {out_arg}/capabilities.md")),
        "{err}"
    );
    assert!(!err.contains("mcp-tools.json"), "{err}");
    let o = run(&["generate", "--dir", out_arg]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains(&format!("{out_arg}/openapi.json")));
    assert_eq!(code(&run(&["generate", "--check", "--dir", out_arg])), 0);
}
