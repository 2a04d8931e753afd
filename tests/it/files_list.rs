//! `files.list` through the built binary on scratch repositories, each answer compared over the
//! CLI, MCP stdio and HTTP: entries with kind and size, the ignore rules `files.search`
//! honours, `.git` and secret-bearing names left out, links listed and never followed, and the
//! folder confined like every repository path.

use crate::support;

use crate::support::{run_in, scratch_repo, Three};
use serde_json::{json, Value};

fn names(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn entries_leave_out_what_files_search_leaves_out() {
    let repo = scratch_repo();
    let dir = repo.path();
    let w = |p: &str, text: &str| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(".gitignore", "build/\n*.log\n");
    w("src/main.rs", "fn main() {}\n");
    w("src/lib.rs", "");
    w("src/notes.md", "notes\n");
    w("src/debug.log", "ignored by *.log\n");
    w("src/.ignore", "private.rs\n");
    w("src/private.rs", "ignored by src/.ignore\n");
    w("build/out.bin", "ignored folder\n");
    w(".env", "API=1\n");
    w("id_rsa", "key\n");
    w(".git/info/exclude", "excluded.txt\n");
    w("excluded.txt", "excluded\n");
    std::os::unix::fs::symlink("src/main.rs", dir.join("link.rs")).unwrap();
    let mut t = Three::new(dir);

    let root = t.ok("files.list", json!({}));
    assert_eq!(root["path"], "");
    assert_eq!(
        names(&root),
        [".gitignore", "README.md", "link.rs", "src"],
        "{root}"
    );
    let by_name = |v: &Value, n: &str| -> Value {
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        by_name(&root, "README.md"),
        json!({"name": "README.md", "path": "README.md", "kind": "file", "size": 10})
    );
    assert_eq!(by_name(&root, "src")["kind"], "dir");
    assert_eq!(by_name(&root, "src")["size"], Value::Null);
    assert_eq!(by_name(&root, "link.rs")["kind"], "symlink");

    let src = t.ok("files.list", json!({"path": "src"}));
    assert_eq!(
        names(&src),
        [".ignore", "lib.rs", "main.rs", "notes.md"],
        "{src}"
    );
    assert_eq!(by_name(&src, "main.rs")["path"], "src/main.rs");
    assert_eq!(by_name(&src, "lib.rs")["size"], 0);

    // The glob, as files.search takes it; the limit.
    let rs = t.ok("files.list", json!({"path": "src", "glob": "*.rs"}));
    assert_eq!(names(&rs), ["lib.rs", "main.rs"]);
    let one = t.ok("files.list", json!({"path": "src", "limit": 1}));
    assert_eq!(names(&one), [".ignore"]);
    assert_eq!(one["truncated"], true);
    assert_eq!(src["truncated"], false);

    // An ignored folder has no entry to show.
    let build = t.ok("files.list", json!({"path": "build"}));
    assert_eq!(build["entries"], json!([]));
    // And files.search agrees on what is searchable in src/.
    let search = support::json(&run_in(
        dir,
        &[
            "call",
            "files.search",
            "--input",
            &json!({"pattern": "ignored"}).to_string(),
        ],
    ));
    assert_eq!(search["matches"], json!([]), "{search}");

    t.err("files.list", json!({"path": ".git"}), "refused");
    t.err("files.list", json!({"path": "../"}), "refused");
    t.err("files.list", json!({"path": "nowhere"}), "not_found");
    t.err("files.list", json!({"path": "README.md"}), "invalid_input");
    t.err("files.list", json!({"glob": "src/["}), "invalid_input");
    t.finish();
}

#[test]
fn a_link_out_of_the_repository_is_refused_and_a_link_inside_is_followed() {
    let repo = scratch_repo();
    let dir = repo.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("outside-secret.txt"), "x").unwrap();
    std::fs::create_dir(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/a.md"), "a").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("out")).unwrap();
    std::os::unix::fs::symlink("docs", dir.join("docs-link")).unwrap();
    let mut t = Three::new(dir);
    let why = t.err("files.list", json!({"path": "out"}), "refused");
    assert!(why.contains("symlink_escape"), "{why}");
    assert!(!why.contains("outside-secret"), "{why}");
    let inside = t.ok("files.list", json!({"path": "docs-link"}));
    assert_eq!(names(&inside), ["a.md"]);
    assert_eq!(inside["entries"][0]["path"], "docs-link/a.md");
    t.finish();
}
