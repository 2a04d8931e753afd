//! Diagnostics at the mistake: each fixture under `tests/fixtures/diagnostics/` holds one
//! contributor's mistake, and its report (a golden snapshot) names the file and line where
//! the mistake is, with what to write instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use seneschal_codegen::{generate, report, Inputs};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diagnostics")
        .join(name)
}

/// The report of a fixture that must fail.
fn failure(root: &Path) -> String {
    match generate(&Inputs::standard(root, "9.9.9")) {
        Ok(_) => panic!("{} was accepted", root.display()),
        Err(diags) => report(&diags),
    }
}

/// The handler signature is checked against the manifest before rustc sees generated code:
/// each mistake is reported at the handler's file and line with the expected signature.
#[test]
fn handler_signature_mistakes_are_reported_at_the_handler() {
    for (case, file_line) in [
        ("input_type", "core/src/handlers/demo.rs:7:"),
        ("swapped_arguments", "core/src/handlers/demo.rs:7:"),
        ("missing_pub", "core/src/handlers/demo.rs:7:"),
        ("output_type", "core/src/handlers/demo.rs:7:"),
    ] {
        let text = failure(&fixture(case));
        assert!(text.contains(file_line), "{case}: {text}");
        assert!(
            text.contains("pub fn echo(ctx: &crate::context::Call, input: crate::registry::types::demo_echo::Input) -> Result<crate::registry::types::demo_echo::Output, seneschal_access::error::CapabilityError>"),
            "{case} does not give the expected signature: {text}"
        );
        insta::assert_snapshot!(format!("signature__{case}"), text);
    }
}

/// A misspelled keyword deep in a nested schema is reported at its own line, with the
/// keyword it was meant to be.
#[test]
fn a_misspelled_nested_keyword_is_reported_at_its_line() {
    let text = failure(&fixture("misspelled_keyword"));
    assert!(
        text.contains("capabilities/demo.echo.yaml:19: /input/properties/word/minLenght"),
        "{text}"
    );
    assert!(
        text.contains(
            "capabilities/demo.echo.yaml:31: /output/properties/echo/properties/text/maxLenght"
        ),
        "{text}"
    );
    assert!(text.contains("did you mean `minLength`"), "{text}");
    assert!(!text.contains("flow-style"), "{text}");
    insta::assert_snapshot!("misspelled_keyword", text);
}

/// A clash is reported on the file changed last (the one being added), even when it sorts
/// first, with the line of the clashing field, the other file's line and the fix.
#[test]
fn a_clash_leads_with_the_file_being_added() {
    let src = fixture("clash");
    let root = std::env::temp_dir().join(format!("seneschal-clash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for rel in [
        "capabilities/demo.echo.yaml",
        "capabilities/demo.added.yaml",
        "core/src/handlers/mod.rs",
        "core/src/handlers/demo.rs",
    ] {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), root.join(rel)).unwrap();
    }
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(root.join("capabilities/demo.echo.yaml"))
        .and_then(|f| f.set_modified(old))
        .unwrap();
    let text = failure(&root);
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        text.contains("  capabilities/demo.added.yaml:26: /expose/mcp_tool: MCP tool name `demo_echo` is already declared by capabilities/demo.echo.yaml:26 (demo.echo)"),
        "{text}"
    );
    insta::assert_snapshot!("clash", text);
}

/// A name the check cannot place (a local alias, a glob import, a renamed `use`) is left to
/// rustc: the check reports only what it can prove wrong.
#[test]
fn names_the_check_cannot_place_are_left_to_rustc() {
    if let Err(diags) = generate(&Inputs::standard(&fixture("placed_by_rustc"), "9.9.9")) {
        panic!("{}", report(&diags));
    }
}
