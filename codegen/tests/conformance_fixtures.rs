//! The conformance fixtures (tests/fixtures/mcp-conformance/) join the registry only when asked
//! (the cargo feature `conformance-fixtures`, seen by the build script as
//! `CARGO_FEATURE_CONFORMANCE_FIXTURES`), and never reach the committed `generated/` files.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use seneschal_codegen::{
    build, generate, generate_with, report, Inputs, FIXTURES_DIR, FIXTURES_FEATURE,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("codegen/ sits in the repository")
        .to_path_buf()
}

/// The version of the `seneschal` package (the projections carry it), from the root
/// Cargo.toml: this crate's own version is not that one.
fn seneschal_version() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("the root Cargo.toml");
    manifest
        .split("[package]")
        .nth(1)
        .and_then(|package| package.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim().trim_matches('"').to_string())
        .expect("a [package] version")
}

fn ids(out: &seneschal_codegen::Outputs) -> Vec<String> {
    out.registry
        .capabilities
        .iter()
        .map(|c| c.id.clone())
        .collect()
}

fn committed<'a>(out: &'a seneschal_codegen::Outputs, name: &str) -> &'a str {
    &out.committed
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1
}

#[test]
fn the_fixtures_join_only_when_their_folder_is_given() {
    let root = root();
    let inputs = Inputs::standard(&root, &seneschal_version());
    let plain = generate(&inputs).unwrap_or_else(|d| panic!("{}", report(&d)));
    let with = generate_with(&inputs, &[root.join(FIXTURES_DIR)])
        .unwrap_or_else(|d| panic!("{}", report(&d)));
    let fixture_ids: Vec<String> = ids(&with)
        .into_iter()
        .filter(|id| !ids(&plain).contains(id))
        .collect();
    // Exactly the folder's manifests join, each under its file's id.
    let mut in_folder: Vec<String> =
        std::fs::read_dir(root.join(FIXTURES_DIR).join("capabilities"))
            .expect("the fixtures' manifests")
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .filter_map(|n| n.strip_suffix(".yaml").map(str::to_string))
            .collect();
    in_folder.sort();
    assert!(in_folder.len() >= 10, "{in_folder:?}");
    assert_eq!(fixture_ids, in_folder);
    assert!(ids(&plain).iter().all(|id| !id.starts_with("conformance.")));
    // The suite's names are served, and only by the fixture build.
    let tools = committed(&with, "mcp-tools.json");
    for name in [
        "test_simple_text",
        "test_error_handling",
        "test_logging_tool",
    ] {
        assert!(tools.contains(&format!("\"{name}\"")), "{name}");
        assert!(
            !committed(&plain, "mcp-tools.json").contains(name),
            "{name}"
        );
    }
    // The fixture handlers are compiled in as a module of their own, declared by hand under
    // the feature (the module list is checked against the manifests with and without it: both
    // generations above passed that check), and nothing lists handler files in OUT_DIR.
    let mod_rs = std::fs::read_to_string(root.join("core/src/handlers/mod.rs")).expect("mod.rs");
    assert!(
        mod_rs.contains(
            "#[cfg(feature = \"conformance-fixtures\")]\n\
             #[path = \"fixtures/conformance.rs\"]\n\
             pub mod conformance;"
        ),
        "{mod_rs}"
    );
    for o in [&plain, &with] {
        assert!(o.out_dir.iter().all(|(n, _)| *n != "handlers.rs"));
    }
    // The plain registry is the committed one: generated/ holds no fixture.
    for (name, content) in &plain.committed {
        let on_disk = std::fs::read_to_string(root.join("generated").join(name)).expect(name);
        assert_eq!(&on_disk, content, "generated/{name} is stale");
        assert!(!on_disk.contains("test_simple_text"), "{name}");
    }
}

#[test]
fn a_fixture_build_writes_out_dir_and_leaves_generated_alone() {
    let root = root();
    let out = std::env::temp_dir().join(format!("seneschal-fixture-build-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let generated = root.join("generated");
    let before: Vec<(PathBuf, Vec<u8>, SystemTime)> = std::fs::read_dir(&generated)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let m = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p.clone(), std::fs::read(&p).unwrap(), m)
        })
        .collect();
    // This test file holds the only test that sets the variable, and it reads it at once.
    std::env::set_var(FIXTURES_FEATURE, "1");
    let result = build(&root, &out, &seneschal_version());
    std::env::remove_var(FIXTURES_FEATURE);
    result.unwrap_or_else(|e| panic!("{e}"));
    let tools = std::fs::read_to_string(out.join("mcp-tools.json")).unwrap();
    assert!(tools.contains("\"test_simple_text\""));
    let digest = std::fs::read_to_string(out.join("digest.txt")).unwrap();
    for (path, bytes, modified) in before {
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{}", path.display());
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            modified,
            "{} was rewritten",
            path.display()
        );
    }
    // The fixture registry is a different contract: its digest is not the committed one.
    let lock = std::fs::read_to_string(generated.join("contract.lock")).unwrap();
    assert!(
        !lock.contains(&digest),
        "the fixture digest leaked into contract.lock"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
