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
    // Every narrowed surface and every cockpit surface (OUT_DIR only).
    let mut profiles: Vec<&str> = Vec::new();
    for (name, content) in &out.out_dir {
        if name.starts_with("mcp-tools.")
            || name.starts_with("openapi.")
            || name.starts_with("server-card.")
            || name.starts_with("cockpit.")
        {
            insta::assert_snapshot!(format!("registry__{name}"), content);
            profiles.push(name);
        }
    }
    assert_eq!(profiles.len(), 9, "{profiles:?}");
}

#[test]
fn a_narrowed_surface_lists_nothing_above_its_profile() {
    let root = fixtures().join("registry");
    let out = generate(&inputs(&root)).unwrap_or_else(|d| panic!("{}", report(&d)));
    let file = |name: &str| {
        out.out_dir
            .iter()
            .chain(out.committed.iter())
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.as_str())
            .unwrap_or_else(|| panic!("{name}"))
    };
    // demo.forget writes to the repository, demo.later (planned) changes the process: the
    // narrowed surfaces never name what their profile refuses; the full ones do.
    for profile in ["read", "process_state"] {
        for kind in ["mcp-tools", "openapi", "server-card", "cockpit"] {
            let name = format!("{kind}.{profile}.json");
            assert!(
                !file(&name).contains("demo.forget"),
                "{name} lists demo.forget"
            );
            assert!(file(&name).contains("demo.echo"), "{name} lacks demo.echo");
        }
        let mentions_later = file(&format!("cockpit.{profile}.json")).contains("demo.later");
        assert_eq!(mentions_later, profile == "process_state");
    }
    for name in [
        "mcp-tools.json",
        "openapi.json",
        "server-card.json",
        "cockpit.json",
    ] {
        assert!(
            file(name).contains("demo.forget"),
            "{name} lacks demo.forget"
        );
    }
    // One digest, whatever the profile.
    let digest = |name: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(file(name)).unwrap();
        v["info"]["x-seneschal-digest"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(digest("openapi.read.json"), digest("openapi.json"));
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
