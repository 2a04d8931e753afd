//! A clone whose branches carry trees no checkout should write: `.git/hooks/pre-commit`,
//! `.git/config` in other spellings, and seneschal's own `.seneschal/audit.jsonl`, made with
//! git's plumbing as any crafted commit can be. `repo.restore` from such a branch and
//! `repo.switch` to it are refused whole, on the command line and over MCP stdio, and nothing
//! lands in `.git/` or `.seneschal/`: every working-tree path a git write takes from a tree or
//! an index passes the store's one confinement (`store::TreePath`).

use std::path::Path;

use serde_json::json;

use crate::support::{self, git, mcp::Mcp};

/// Runs `git ARGS` in `dir` with `input` on its standard input; its output, trimmed.
fn git_with_input(dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut c = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A tree object holding `path` (a `/`-separated path, created folder by folder) as an
/// executable blob of `content`, beside the entries of `base` (a tree id) at the top.
fn tree_with(dir: &Path, base: &str, path: &str, content: &str) -> String {
    let blob = git_with_input(dir, &["hash-object", "-w", "--stdin"], content);
    let parts: Vec<&str> = path.split('/').collect();
    let mut entry = format!("100755 blob {blob}\t{}\n", parts[parts.len() - 1]);
    for name in parts[..parts.len() - 1].iter().rev() {
        let id = mktree(dir, &entry);
        entry = format!("040000 tree {id}\t{name}\n");
    }
    let mut top = git(dir, &["ls-tree", base]);
    top.push_str(&entry);
    mktree(dir, &top)
}

fn mktree(dir: &Path, entries: &str) -> String {
    git_with_input(dir, &["mktree", "--missing"], entries)
}

/// The paths a crafted tree carries: each refused in its own branch.
const HOSTILE: &[(&str, &str)] = &[
    (".git/hooks/pre-commit", "git_dir"),
    (".GIT/config", "git_dir"),
    (".git./hooks/post-checkout", "git_dir"),
    ("GIT~1/config", "git_dir"),
    ("sub/.Git/hooks/pre-commit", "git_dir"),
    (".seneschal/audit.jsonl", "state_dir"),
    (".Seneschal/desk/forged.json", "state_dir"),
];

const PAYLOAD: &str = "#!/bin/sh\ntouch /tmp/seneschal-hostile-tree-ran\n";

/// A scratch repository with one branch `evil-N` per hostile path (HEAD's tree plus it).
fn hostile_repo() -> tempfile::TempDir {
    let repo = support::scratch_repo();
    let dir = repo.path();
    let base = git(dir, &["rev-parse", "HEAD^{tree}"]).trim().to_string();
    for (i, (path, _)) in HOSTILE.iter().enumerate() {
        let tree = tree_with(dir, &base, path, PAYLOAD);
        let commit = git(
            dir,
            &["commit-tree", &tree, "-p", "HEAD", "-m", "a crafted commit"],
        )
        .trim()
        .to_string();
        git(
            dir,
            &["update-ref", &format!("refs/heads/evil-{i}"), &commit],
        );
    }
    repo
}

/// Nothing of any crafted tree is on disk, and HEAD is still `main`.
fn nothing_landed(dir: &Path) {
    for (path, _) in HOSTILE {
        let on_disk = dir.join(path);
        assert!(
            std::fs::read(&on_disk).map_or(true, |b| b != PAYLOAD.as_bytes()),
            "{path} was written from a tree"
        );
    }
    assert!(!dir.join(".git/hooks/pre-commit").exists());
    assert!(!dir.join(".GIT").exists() && !dir.join(".git.").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join(".git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
}

#[test]
fn a_crafted_tree_writes_nothing_into_git_or_seneschal_state_on_restore_or_switch() {
    let repo = hostile_repo();
    let dir = repo.path();
    for (i, (path, rule)) in HOSTILE.iter().enumerate() {
        let branch = format!("evil-{i}");
        for (id, input) in [
            (
                "repo.restore",
                json!({"paths": ["."], "source": branch.as_str()}),
            ),
            ("repo.switch", json!({"branch": branch.as_str()})),
        ] {
            let out = support::call(dir, id, &input);
            assert!(!out.status.success(), "{id} {path}: it applied");
            let err = support::stderr(&out);
            // Refused whole, naming the path and its rule.
            assert!(err.starts_with("error[refused]"), "{id} {path}: {err}");
            assert!(
                err.contains(&format!("\"rule\":\"{rule}\"")),
                "{id} {path}: {err}"
            );
            nothing_landed(dir);
        }
    }
    // Over MCP stdio, a client that approves everything meets the same refusal.
    let mut mcp = Mcp::start_with(dir, &["--approval", "trust-client"], &[]);
    mcp.initialize("2025-06-18");
    let answer = mcp.request(
        "tools/call",
        json!({"name": "repo_restore", "arguments": {"paths": ["."], "source": "evil-0"}}),
    );
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["seneschal/error"]["code"],
        json!("refused"),
        "{answer}"
    );
    nothing_landed(dir);
    mcp.finish();
}

#[test]
fn a_branch_named_in_git_s_head_is_checked_before_a_ref_path_is_spelled() {
    // `.git/HEAD` is repository content: a branch name that climbs out of refs/heads/ is
    // refused before a commit spells `.git/refs/heads/<name>` with it.
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(dir, &["add", "a.txt"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    std::fs::create_dir_all(dir.join(".git/refs/heads/x")).unwrap();
    std::fs::write(dir.join(".git/refs/heads/x/..lock"), head.as_bytes()).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/x/..lock\n").unwrap();
    let out = support::call(dir, "repo.commit", json!({"message": "m"}));
    assert!(!out.status.success(), "{}", support::stdout(&out));
    assert!(!dir.join(".git/refs/heads/x/..lock.lock").exists());
}
