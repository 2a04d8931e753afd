//! The prose check over this repository's documentation: README, docs/**/*.md and the
//! generated references may name only what the registry projects.

use std::path::{Path, PathBuf};

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            markdown_under(&p, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("md") {
            out.push(p);
        }
    }
}

fn findings(files: &[PathBuf]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for finding in seneschal::prose::check(&text) {
            let rel = f.strip_prefix(root).unwrap_or(f).display();
            out.push(format!(
                "{rel}:{}: {}: `{}`",
                finding.line, finding.message, finding.name
            ));
        }
    }
    out
}

#[test]
fn documentation_names_only_what_the_registry_projects() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("README.md"),
        root.join("generated/capabilities.md"),
        root.join("generated/cli.md"),
    ];
    markdown_under(&root.join("docs"), &mut files);
    assert!(files.len() >= 5);
    let found = findings(&files);
    assert!(
        found.is_empty(),
        "documentation names what the registry does not project:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_document_naming_a_missing_tool_fails_with_file_and_line() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prose/invented.md");
    let found = findings(&[fixture]);
    assert_eq!(
        found,
        vec![
            "tests/fixtures/prose/invented.md:5: MCP tool the registry does not list: `repo_teleport`".to_string(),
            "tests/fixtures/prose/invented.md:7: CLI path the registry does not project: `seneschal repo teleport`".to_string(),
            "tests/fixtures/prose/invented.md:9: HTTP route the registry does not declare: `/api/v1/repo/teleport`".to_string(),
            "tests/fixtures/prose/invented.md:11: resource URI the registry does not serve: `seneschal://repo/teleport`".to_string(),
        ]
    );
}

/// Every test a document names as the one holding a claim exists: `tests/<file>.rs::<fn>` is a
/// function of that file, and `<module>::tests::<fn>` (or `<module>::<fn>`, for a module's unit
/// tests written as `module::tests::name`) a function of `src/<module>.rs` or
/// `src/<module>/mod.rs`. A renamed or removed test makes the document's claim unheld: this
/// fails and names the line.
#[test]
fn documentation_names_only_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_under(&root.join("docs"), &mut files);
    let integration =
        regex::Regex::new(r"((?:[A-Za-z0-9_-]+/)*tests/[A-Za-z0-9_/]+\.rs)::([A-Za-z0-9_]+)")
            .unwrap();
    let unit =
        regex::Regex::new(r"`([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)::tests::([A-Za-z0-9_]+)`")
            .unwrap();
    let has_fn = |file: &Path, name: &str| {
        std::fs::read_to_string(file)
            .map(|t| t.contains(&format!("fn {name}(")))
            .unwrap_or(false)
    };
    let mut named = 0;
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root).unwrap_or(f).display().to_string();
        for (n, line) in text.lines().enumerate() {
            for c in integration.captures_iter(line) {
                named += 1;
                let (file, name) = (&c[1], &c[2]);
                // A test crate of several files: its functions may live in any of them.
                let path = root.join(file);
                let found = has_fn(&path, name)
                    || path.parent().is_some_and(|dir| {
                        dir != root.join("tests")
                            && std::fs::read_dir(dir)
                                .into_iter()
                                .flatten()
                                .flatten()
                                .any(|e| has_fn(&e.path(), name))
                    });
                if !found {
                    missing.push(format!("{rel}:{}: {file}::{name}", n + 1));
                }
            }
            for c in unit.captures_iter(line) {
                named += 1;
                let (module, name) = (c[1].replace("::", "/"), &c[2]);
                let module = module.strip_prefix("seneschal/").unwrap_or(&module);
                let found = [format!("src/{module}.rs"), format!("src/{module}/mod.rs")]
                    .iter()
                    .any(|p| has_fn(&root.join(p), name));
                if !found {
                    missing.push(format!("{rel}:{}: {}::tests::{name}", n + 1, &c[1]));
                }
            }
        }
    }
    assert!(
        named > 20,
        "the documents name {named} tests: the patterns no longer match them"
    );
    assert!(
        missing.is_empty(),
        "documents name tests that do not exist:\n{}",
        missing.join("\n")
    );
}
