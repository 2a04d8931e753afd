//! Golden fixtures: the projections of a fixture registry, and one invalid registry per
//! invariant with its expected diagnostics (insta snapshots; STYLE 6).

use std::path::{Path, PathBuf};

use seneschal_codegen::{generate, report, Inputs};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn inputs(root: &Path) -> Inputs {
    Inputs::standard(root, "9.9.9")
}

#[test]
fn fixture_registry_projections() {
    let root = fixtures().join("registry");
    let out = generate(&inputs(&root)).unwrap_or_else(|d| panic!("{}", report(&d)));
    let ids: Vec<&str> = out
        .registry
        .capabilities
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["demo.echo", "demo.forget", "demo.later", "demo.readme"]
    );
    for (name, content) in &out.committed {
        insta::assert_snapshot!(format!("registry__{name}"), content);
    }
    let tools = out
        .out_dir
        .iter()
        .find(|(n, _)| *n == "mcp-tools.read.json")
        .expect("read profile");
    insta::assert_snapshot!("registry__mcp-tools.read.json", tools.1);
}

#[test]
fn projections_are_deterministic() {
    let root = fixtures().join("registry");
    let a = generate(&inputs(&root)).expect("valid").committed;
    let b = generate(&inputs(&root)).expect("valid").committed;
    assert_eq!(a, b);
    for (name, content) in &a {
        assert!(
            !content.contains(root.to_str().unwrap()),
            "{name} carries an absolute path"
        );
        assert!(
            content.contains("seneschal-codegen"),
            "{name} does not name its generator"
        );
    }
}

#[test]
fn every_invalid_fixture_fails_with_its_diagnostics() {
    let dir = fixtures().join("invalid");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 20,
        "expected one fixture per invariant and bad input, found {}",
        cases.len()
    );
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let diags = match generate(&inputs(&case)) {
            Ok(_) => panic!("fixture {name} was accepted"),
            Err(d) => d,
        };
        for d in &diags {
            assert!(
                d.file.starts_with("capabilities/"),
                "{name}: diagnostic does not name a manifest: {d}"
            );
        }
        insta::assert_snapshot!(format!("invalid__{name}"), report(&diags));
    }
}
