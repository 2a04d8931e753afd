//! `repo.diff`, `repo.show`, `repo.blame` and `repo.branches` through the built binary on
//! scratch repositories, each answer compared over the CLI, MCP stdio and HTTP: what they
//! report, that a planted secret is redacted and a secret-bearing file left out, that a
//! revision that looks like an option is refused before git sees it, that a cut patch says so,
//! and that a diff never rewrites `.git/index`.

use crate::support;
use std::path::Path;

use crate::support::{git, run_in, scratch_repo, stderr, Three};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

fn commit_as(dir: &Path, who: &str, file: &str, text: &str, message: &str) {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", "-A"]);
    let author = format!("{who} <{}@example.invalid>", who.to_lowercase());
    git(dir, &["commit", "-q", "--author", &author, "-m", message]);
}

fn hash(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

const TOKEN: &str = "ghp_Zq7Lm2XpZq7Lm2XpZq7Lm2XpZq7Lm2XpWd9K";

#[test]
fn diff_shows_working_tree_and_staged_changes_redacted_without_secret_files() {
    let repo = scratch_repo();
    let dir = repo.path();
    commit_as(dir, "Ann", "notes.txt", "one\ntwo\n", "notes");
    std::fs::write(dir.join(".env"), "API=1\n").unwrap();
    git(dir, &["add", "-f", ".env"]);
    git(dir, &["commit", "-q", "-m", "env"]);
    // A modified file (with a planted token), a staged file, a changed secret-bearing file.
    std::fs::write(
        dir.join("notes.txt"),
        format!("one\ntwo\ntoken = {TOKEN}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("staged.txt"), "staged line\n").unwrap();
    git(dir, &["add", "staged.txt"]);
    std::fs::write(dir.join(".env"), "API=2\n").unwrap();
    let mut t = Three::new(dir);

    let work = t.ok("repo.diff", json!({}));
    let files: Vec<&str> = work["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["notes.txt"], "{work}");
    assert_eq!(work["files"][0]["change"], "modified");
    assert_eq!(work["files"][0]["additions"], 1);
    assert_eq!(
        work["skipped_secret_files"], 1,
        "the .env change is left out"
    );
    let patch = work["patch"].as_str().unwrap();
    assert!(patch.contains("+token = [REDACTED]"), "{patch}");
    assert!(!work.to_string().contains(TOKEN), "{work}");
    assert!(!patch.contains("API="), "{patch}");
    assert!(work["redactions"].as_u64().unwrap() >= 1, "{work}");
    assert_eq!(work["truncated"], false);
    assert_eq!((&work["from"], &work["to"]), (&Value::Null, &Value::Null));

    let staged = t.ok("repo.diff", json!({"staged": true}));
    assert_eq!(staged["files"][0]["path"], "staged.txt", "{staged}");
    assert_eq!(staged["files"][0]["change"], "added");
    assert_eq!(staged["files"].as_array().unwrap().len(), 1);
    assert!(staged["patch"].as_str().unwrap().contains("+staged line"));

    // Against HEAD: both the staged and the unstaged change; stat mode has no patch.
    let stat = t.ok("repo.diff", json!({"from": "HEAD", "stat": true}));
    assert_eq!(stat["files"].as_array().unwrap().len(), 2, "{stat}");
    assert_eq!(stat["patch"], Value::Null);
    let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(stat["from"], head);

    // Between two revisions, one path.
    let between = t.ok(
        "repo.diff",
        json!({"from": "HEAD~2", "to": "HEAD~1", "paths": ["notes.txt"], "context": 0}),
    );
    assert_eq!(between["files"][0]["change"], "added", "{between}");
    assert!(between["patch"].as_str().unwrap().contains("+two"));

    // A secret-bearing path asked for by name is refused, not diffed.
    let why = t.err("repo.diff", json!({"paths": [".env"]}), "refused");
    assert!(why.contains("secret_file"), "{why}");
    t.err("repo.diff", json!({"paths": ["../elsewhere"]}), "refused");
    t.err("repo.diff", json!({"to": "HEAD"}), "invalid_input");
    t.finish();
}

#[test]
fn a_revision_that_looks_like_an_option_is_refused_before_git_runs() {
    let repo = scratch_repo();
    let dir = repo.path();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("written");
    let hostile = format!("--output={}", target.display());
    let mut t = Three::new(dir);
    for (id, field) in [
        ("repo.diff", "from"),
        ("repo.show", "rev"),
        ("repo.blame", "rev"),
    ] {
        let mut input = json!({ field: hostile });
        if id == "repo.blame" {
            input["path"] = json!("README.md");
        }
        let why = t.err(id, input, "invalid_input");
        assert!(why.contains("cannot begin with `-`"), "{id}: {why}");
        assert!(why.contains(&format!("/{field}")), "{id}: {why}");
    }
    t.err(
        "repo.diff",
        json!({"from": "HEAD", "to": "-p"}),
        "invalid_input",
    );
    assert!(!target.exists(), "git was handed the option");
    // A revision that names nothing is not_found, on every transport.
    t.err("repo.show", json!({"rev": "no-such-branch"}), "not_found");
    t.err("repo.diff", json!({"from": "no-such-branch"}), "not_found");
    // Of two revisions, the one that names nothing is the one the error points at.
    let why = t.err(
        "repo.diff",
        json!({"from": "HEAD", "to": "no-such-branch"}),
        "not_found",
    );
    assert!(why.contains("at: /to"), "{why}");
    t.finish();
}

#[test]
fn a_patch_above_max_bytes_is_cut_on_a_line_and_says_so() {
    let repo = scratch_repo();
    let dir = repo.path();
    let long: String = (0..2000).map(|i| format!("line number {i}\n")).collect();
    std::fs::write(dir.join("big.txt"), &long).unwrap();
    let mut t = Three::new(dir);
    git(dir, &["add", "big.txt"]);
    let cut = t.ok("repo.diff", json!({"staged": true, "max_bytes": 2048}));
    let patch = cut["patch"].as_str().unwrap();
    assert_eq!(cut["truncated"], true, "{cut}");
    assert!(patch.len() <= 2048 && patch.len() > 1500, "{}", patch.len());
    assert!(patch.ends_with('\n'), "cut on a line boundary");
    assert_eq!(cut["files"][0]["additions"], 2000, "the file list is whole");
    let whole = t.ok("repo.diff", json!({"staged": true, "max_bytes": 1_048_576}));
    assert_eq!(whole["truncated"], false);
    assert!(whole["patch"].as_str().unwrap().len() > 30_000);
    git(dir, &["commit", "-q", "-m", "big"]);
    let show = t.ok("repo.show", json!({"patch": true, "max_bytes": 4096}));
    assert_eq!(show["truncated"], true, "{show}");
    assert!(show["patch"].as_str().unwrap().len() <= 4096);
    t.finish();
}

#[test]
fn a_diff_never_rewrites_the_index() {
    let repo = scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "a"]);
    // Stat data that no longer matches the index: a plain `git diff` would refresh it.
    let f = std::fs::File::options()
        .write(true)
        .open(dir.join("a.txt"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    std::fs::write(dir.join("README.md"), "# changed\n").unwrap();
    let index = dir.join(".git/index");
    let before = hash(&index);
    let mut t = Three::new(dir);
    let v = t.ok("repo.diff", json!({}));
    assert_eq!(hash(&index), before, ".git/index was rewritten");
    // The file whose stat data alone changed is no change.
    assert_eq!(v["files"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["files"][0]["path"], "README.md");
    t.ok("repo.diff", json!({"from": "HEAD"}));
    assert_eq!(hash(&index), before);
    t.finish();
}

#[test]
fn show_reports_one_commit_with_its_files() {
    let repo = scratch_repo();
    let dir = repo.path();
    commit_as(
        dir,
        "Bea",
        "feature.txt",
        "alpha\nbeta\n",
        "Add the feature\n\nWith a body line.",
    );
    git(dir, &["mv", "README.md", "READ.md"]);
    git(dir, &["commit", "-q", "-m", "rename"]);
    let mut t = Three::new(dir);
    let v = t.ok("repo.show", json!({"rev": "HEAD~1", "patch": true}));
    let sha = git(dir, &["rev-parse", "HEAD~1"]).trim().to_string();
    assert_eq!(v["sha"], sha);
    assert_eq!(v["author_name"], "Bea");
    assert_eq!(v["author_email"], "bea@example.invalid");
    assert_eq!(v["subject"], "Add the feature");
    assert_eq!(v["message"], "Add the feature\n\nWith a body line.");
    assert_eq!(v["parents"].as_array().unwrap().len(), 1);
    assert_eq!(v["files"][0]["path"], "feature.txt", "{v}");
    assert_eq!(v["files"][0]["change"], "added");
    assert_eq!(v["files"][0]["additions"], 2);
    assert!(v["patch"].as_str().unwrap().contains("+beta"));
    let renamed = t.ok("repo.show", json!({}));
    assert_eq!(renamed["files"][0]["change"], "renamed", "{renamed}");
    assert_eq!(renamed["files"][0]["from"], "README.md");
    assert_eq!(renamed["files"][0]["path"], "READ.md");
    assert_eq!(renamed["patch"], Value::Null);
    // The root commit: every file it holds, against the empty tree.
    let root = t.ok("repo.show", json!({"rev": "HEAD~2"}));
    assert_eq!(root["parents"], json!([]));
    assert_eq!(root["files"][0]["path"], "README.md");
    t.finish();
}

#[test]
fn blame_names_the_author_of_each_line_in_a_range() {
    let repo = scratch_repo();
    let dir = repo.path();
    commit_as(dir, "Ann", "poem.txt", "one\ntwo\nthree\n", "first lines");
    commit_as(
        dir,
        "Bob",
        "poem.txt",
        "one\nTWO\nthree\nfour\n",
        "second lines",
    );
    let mut t = Three::new(dir);
    let v = t.ok("repo.blame", json!({"path": "poem.txt"}));
    // A line names its commit; each commit is described once, in the order of its first line.
    let commits = v["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 2, "{v}");
    let author_of = |l: &Value| -> String {
        let c = commits
            .iter()
            .find(|c| c["commit"] == l["commit"])
            .expect("described");
        c["author"].as_str().unwrap().to_string()
    };
    let authors: Vec<String> = v["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(author_of)
        .collect();
    assert_eq!(authors, ["Ann", "Bob", "Ann", "Bob"], "{v}");
    assert_eq!(v["lines"][1]["text"], "TWO");
    assert_eq!(
        v["lines"][1].as_object().unwrap().len(),
        3,
        "line, commit, text: {v}"
    );
    assert_eq!(commits[0]["summary"], "first lines");
    assert_eq!(commits[1]["summary"], "second lines");
    assert_eq!(commits[1]["author_email"], "bob@example.invalid");
    assert_eq!(commits[1]["commit"], v["lines"][1]["commit"]);
    assert_eq!(v["truncated"], false);
    let range = t.ok(
        "repo.blame",
        json!({"path": "poem.txt", "start": 2, "end": 3}),
    );
    let lines: Vec<u64> = range["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3]);
    let limited = t.ok("repo.blame", json!({"path": "poem.txt", "limit": 2}));
    assert_eq!(limited["lines"].as_array().unwrap().len(), 2);
    assert_eq!(limited["truncated"], true);
    // At an older revision: three lines, all Ann's.
    let old = t.ok("repo.blame", json!({"path": "poem.txt", "rev": "HEAD~1"}));
    assert_eq!(old["lines"].as_array().unwrap().len(), 3);
    assert_eq!(old["commits"].as_array().unwrap().len(), 1, "{old}");
    assert_eq!(old["commits"][0]["author"], "Ann");
    t.err(
        "repo.blame",
        json!({"path": "poem.txt", "start": 9}),
        "invalid_input",
    );
    t.err("repo.blame", json!({"path": "missing.txt"}), "not_found");
    t.err("repo.blame", json!({"path": ".env"}), "refused");
    t.finish();
}

#[test]
fn branches_lists_local_and_remote_branches_with_upstreams() {
    let origin = scratch_repo();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let o = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(origin.path())
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    git(dir, &["config", "user.email", "test@example.invalid"]);
    git(dir, &["config", "user.name", "Test"]);
    commit_as(dir, "Ann", "ahead.txt", "x\n", "ahead by one");
    git(dir, &["branch", "feature"]);
    let mut t = Three::new(dir);
    let v = t.ok("repo.branches", json!({}));
    let names: Vec<&str> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["feature", "main", "origin/main"], "{v}");
    let main = &v["branches"][1];
    assert_eq!(main["current"], true);
    assert_eq!(main["kind"], "local");
    assert_eq!(main["upstream"], "origin/main");
    assert_eq!((&main["ahead"], &main["behind"]), (&json!(1), &json!(0)));
    assert_eq!(main["subject"], "ahead by one");
    assert_eq!(main["head"], git(dir, &["rev-parse", "HEAD"]).trim());
    assert_eq!(v["branches"][0]["upstream"], Value::Null);
    assert_eq!(v["branches"][0]["ahead"], Value::Null);
    assert_eq!(v["branches"][2]["kind"], "remote");
    let local = t.ok("repo.branches", json!({"remote": false, "limit": 1}));
    assert_eq!(local["branches"].as_array().unwrap().len(), 1);
    assert_eq!(local["truncated"], true);
    t.finish();
}

#[test]
fn outside_a_repository_nothing_is_diffed() {
    // `git diff a b` outside a repository compares the two files (`--no-index`): the readers
    // answer not_found before any git run instead.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("b"), "beta\n").unwrap();
    for (id, input) in [
        ("repo.diff", json!({"paths": ["a", "b"]})),
        ("repo.show", json!({})),
        ("repo.blame", json!({"path": "a"})),
        ("repo.branches", json!({})),
    ] {
        let o = run_in(dir.path(), &["call", id, "--input", &input.to_string()]);
        assert_eq!(o.status.code(), Some(3), "{id}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("no git repository"),
            "{id}: {}",
            stderr(&o)
        );
        assert!(!support::stdout(&o).contains("alpha"), "{id}");
    }
}
