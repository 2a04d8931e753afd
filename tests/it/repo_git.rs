//! `repo.identity`, `repo.status` and `repo.log` through the built binary, on scratch
//! repositories: what they report, that credentials in remotes never come back, and that
//! `repo.status` leaves `.git/index` byte for byte as it was.

use std::path::Path;
use std::process::Command;

use crate::support::{call, git, json, run_in, scratch_repo, stderr};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

fn ok(dir: &Path, id: &str, input: Value) -> Value {
    let o = call(dir, id, input);
    assert!(o.status.success(), "{id}: {}", stderr(&o));
    json(&o)
}

fn hash(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    format!("{:x}", Sha256::digest(bytes))
}

fn commit(dir: &Path, file: &str, text: &str, message: &str) {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

#[test]
fn identity_reports_branch_head_and_redacted_remotes() {
    let repo = scratch_repo();
    let dir = repo.path();
    git(
        dir,
        &[
            "remote",
            "add",
            "origin",
            "https://alice:s3cretPassw0rd@example.com/o/r.git",
        ],
    );
    git(dir, &["remote", "add", "mirror", "git@example.com:o/r.git"]);
    git(
        dir,
        &[
            "config",
            "remote.mirror.pushurl",
            "https://example.com/o/r.git?private_token=qwertyuiop123",
        ],
    );
    let v = ok(dir, "repo.identity", json!({}));
    let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(v["branch"], "main");
    assert_eq!(v["head"], head);
    assert_eq!(v["detached"], false);
    assert_eq!(
        v["root"],
        dir.canonicalize().unwrap().to_string_lossy().as_ref()
    );
    let text = v.to_string();
    assert!(
        !text.contains("s3cretPassw0rd") && !text.contains("alice"),
        "{text}"
    );
    assert!(!text.contains("qwertyuiop123"), "{text}");
    assert_eq!(v["remotes"][0]["name"], "mirror");
    assert_eq!(v["remotes"][0]["url"], "git@example.com:o/r.git");
    assert_eq!(v["remotes"][0]["redacted"], true);
    assert_eq!(
        v["remotes"][1]["url"],
        "https://[REDACTED]@example.com/o/r.git"
    );
    assert_eq!(v["remotes"][1]["push_url"], Value::Null);

    git(dir, &["checkout", "-q", "--detach"]);
    let v = ok(dir, "repo.identity", json!({}));
    assert_eq!(v["branch"], Value::Null);
    assert_eq!(v["detached"], true);
}

#[test]
fn identity_before_the_first_commit_and_outside_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let o = call(dir.path(), "repo.identity", json!({}));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error[not_found]"), "{}", stderr(&o));
    for id in ["repo.status", "repo.log"] {
        let o = call(dir.path(), id, json!({}));
        assert_eq!(o.status.code(), Some(3), "{id}: {}", stderr(&o));
    }
    git(dir.path(), &["init", "-q", "-b", "trunk"]);
    let v = ok(dir.path(), "repo.identity", json!({}));
    assert_eq!(v["branch"], "trunk");
    assert_eq!(v["head"], Value::Null);
    assert_eq!(v["detached"], false);
    let log = ok(dir.path(), "repo.log", json!({}));
    assert_eq!(log["commits"], json!([]));
    let st = ok(dir.path(), "repo.status", json!({}));
    assert_eq!(st["head"], Value::Null);
}

#[test]
fn status_lists_staged_unstaged_and_untracked() {
    let repo = scratch_repo();
    let dir = repo.path();
    commit(dir, "a.txt", "a\n", "add a");
    std::fs::write(dir.join("staged.txt"), "s\n").unwrap();
    git(dir, &["add", "staged.txt"]);
    std::fs::write(dir.join("a.txt"), "changed\n").unwrap();
    git(dir, &["mv", "README.md", "READ.md"]);
    std::fs::create_dir(dir.join("new dir")).unwrap();
    std::fs::write(dir.join("new dir/u.txt"), "u\n").unwrap();
    let v = ok(dir, "repo.status", json!({}));
    assert_eq!(v["branch"], "main");
    assert_eq!(v["clean"], false);
    assert_eq!(
        v["staged"],
        json!([
            {"path": "READ.md", "change": "renamed", "from": "README.md"},
            {"path": "staged.txt", "change": "added", "from": null}
        ])
    );
    assert_eq!(
        v["unstaged"],
        json!([{"path": "a.txt", "change": "modified", "from": null}])
    );
    assert_eq!(v["untracked"], json!(["new dir/u.txt"]));
    git(dir, &["commit", "-qam", "all"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "rest"]);
    let v = ok(dir, "repo.status", json!({}));
    assert_eq!(v["clean"], true);
}

#[test]
fn status_never_rewrites_the_index() {
    let repo = scratch_repo();
    let dir = repo.path();
    let index = dir.join(".git/index");
    // Give the tracked file a new mtime with the same content: its cached stat data is now
    // stale, which a locking `git status` repairs by rewriting the index.
    let touch = || {
        let s = Command::new("touch")
            .args(["-d", "2001-02-03 04:05:06", "README.md"])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(s.success());
    };
    touch();
    let before = hash(&index);
    for _ in 0..3 {
        let v = ok(dir, "repo.status", json!({}));
        assert_eq!(v["clean"], true);
    }
    assert_eq!(hash(&index), before, "repo.status changed .git/index");
    assert!(!dir.join(".git/index.lock").exists());
    // The setup is sensitive: a plain `git status` does rewrite this index.
    git(dir, &["status", "--porcelain"]);
    assert_ne!(
        hash(&index),
        before,
        "plain git status should have refreshed the index"
    );
}

#[test]
fn log_limits_filters_by_path_and_refuses_bad_paths() {
    let repo = scratch_repo();
    let dir = repo.path();
    commit(dir, "a.txt", "1\n", "first a");
    commit(dir, "b.txt", "1\n", "only b");
    commit(dir, "a.txt", "2\n", "second a");
    let v = ok(dir, "repo.log", json!({"limit": 2}));
    let subjects = crate::support::subjects(&v);
    assert_eq!(subjects, ["second a", "only b"]);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["commits"][0]["author_name"], "Test");
    assert_eq!(v["commits"][0]["parents"].as_array().unwrap().len(), 1);
    let v = ok(dir, "repo.log", json!({"path": "a.txt"}));
    let subjects = crate::support::subjects(&v);
    assert_eq!(subjects, ["second a", "first a"]);
    assert_eq!(v["truncated"], false);
    // A deleted path keeps its history; a glob character is taken literally.
    git(dir, &["rm", "-q", "b.txt"]);
    git(dir, &["commit", "-qm", "drop b"]);
    let v = ok(dir, "repo.log", json!({"path": "b.txt"}));
    assert_eq!(v["commits"].as_array().unwrap().len(), 2);
    let v = ok(dir, "repo.log", json!({"path": "*.txt"}));
    assert_eq!(v["commits"], json!([]));
    for (path, rule) in [
        ("../x", "parent_dir"),
        ("/etc", "absolute_path"),
        (".git/HEAD", "git_dir"),
        (".env", "secret_file"),
    ] {
        let o = call(dir, "repo.log", json!({"path": path}));
        assert_eq!(o.status.code(), Some(4), "{path}");
        assert!(stderr(&o).contains(rule), "{path}: {}", stderr(&o));
    }
    let o = call(dir, "repo.log", json!({"limit": 0}));
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn log_subjects_are_redacted() {
    let repo = scratch_repo();
    let dir = repo.path();
    let token = format!("ghp_{}", "Zx98".repeat(9));
    commit(dir, "a.txt", "1\n", &format!("oops, pasted {token}"));
    let v = ok(dir, "repo.log", json!({"limit": 1}));
    assert_eq!(v["commits"][0]["subject"], "oops, pasted [REDACTED]");
}

#[test]
fn the_cli_paths_reach_the_same_handlers() {
    let repo = scratch_repo();
    let o = run_in(repo.path(), &["repo", "log", "--limit", "1"]);
    assert_eq!(json(&o)["commits"][0]["subject"], "initial");
    let o = run_in(repo.path(), &["repo", "status"]);
    assert_eq!(json(&o)["clean"], true);
    let o = run_in(repo.path(), &["repo", "identity"]);
    assert_eq!(json(&o)["branch"], "main");
}
