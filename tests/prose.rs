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
