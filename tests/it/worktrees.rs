//! A linked worktree (`git worktree add`) served like a main checkout: every git reader over
//! the CLI, MCP stdio and HTTP, and every git write (stage, unstage, commit, branch, switch,
//! restore) landing where git itself keeps the state of a linked worktree: `HEAD` and the
//! index in the worktree's own git folder (`<main>/.git/worktrees/<name>`), refs and objects
//! in the main repository's. The main checkout's `HEAD` and index are never touched. The
//! hostile layouts (a gitfile that git's two-way link does not prove) are in
//! `hostile/git.rs`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::{self, git, scratch_repo, Three};

/// A main repository with two commits on `main` and a linked worktree on a new branch `feat`.
struct Linked {
    _base: tempfile::TempDir,
    main: PathBuf,
    wt: PathBuf,
}

fn linked() -> Linked {
    let base = tempfile::tempdir().unwrap();
    let main = base.path().join("main");
    std::fs::create_dir(&main).unwrap();
    let repo = scratch_repo();
    support::copy_tree(repo.path(), &main);
    std::fs::write(main.join("a.txt"), "one\n").unwrap();
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "a"]);
    std::fs::write(main.join("a.txt"), "one\ntwo\n").unwrap();
    git(&main, &["commit", "-q", "-am", "two"]);
    let wt = base.path().join("wt");
    git(
        &main,
        &["worktree", "add", "-q", "-b", "feat", wt.to_str().unwrap()],
    );
    Linked {
        _base: base,
        main,
        wt,
    }
}

/// A write through the CLI in `dir`, approved; its answer.
fn write(dir: &Path, id: &str, input: serde_json::Value) -> serde_json::Value {
    let o = support::call(dir, id, input.clone());
    assert!(o.status.success(), "{id} {input}: {}", support::stderr(&o));
    support::json(&o)
}

#[test]
fn every_git_reader_serves_a_linked_worktree() {
    let l = linked();
    std::fs::write(l.wt.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(l.wt.join("new.txt"), "new\n").unwrap();
    let mut three = Three::new(&l.wt);
    let status = three.ok("repo.status", json!({}));
    assert_eq!(status["branch"], "feat", "{status}");
    assert!(status.to_string().contains("new.txt"), "{status}");
    let diff = three.ok("repo.diff", json!({}));
    assert!(diff["patch"].as_str().unwrap().contains("+three"), "{diff}");
    let from = three.ok("repo.diff", json!({"from": "HEAD~1"}));
    assert!(from["patch"].as_str().unwrap().contains("+two"), "{from}");
    let log = three.ok("repo.log", json!({"limit": 5}));
    let subjects = crate::support::subjects(&log);
    assert_eq!(subjects, ["two", "a", "initial"], "{log}");
    let show = three.ok("repo.show", json!({"rev": "HEAD"}));
    assert_eq!(show["subject"], "two", "{show}");
    assert_eq!(show["files"][0]["path"], "a.txt", "{show}");
    let blame = three.ok("repo.blame", json!({"path": "a.txt"}));
    // The worktree's own file: two committed lines and the one written here.
    let commit = blame["lines"][1]["commit"].clone();
    let named = blame["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["commit"] == commit)
        .unwrap_or_else(|| panic!("{blame}"));
    assert_eq!(named["summary"], "two", "{blame}");
    assert_eq!(blame["lines"][2]["text"], "three", "{blame}");
    let branches = three.ok("repo.branches", json!({}));
    let text = branches.to_string();
    assert!(text.contains("feat") && text.contains("main"), "{branches}");
    three.ok("repo.identity", json!({}));
    let read = three.ok("files.read", json!({"paths": ["a.txt"], "rev": "HEAD~1"}));
    assert!(read.to_string().contains("one"), "{read}");
    three.finish();
}

#[test]
fn git_writes_in_a_linked_worktree_land_in_its_own_git_folder_and_the_shared_refs() {
    let l = linked();
    let common = l.main.join(".git");
    let private = common.join("worktrees/wt");
    let main_head = std::fs::read(common.join("HEAD")).unwrap();
    let main_index = std::fs::read(common.join("index")).unwrap();
    let wt_index = std::fs::read(private.join("index")).unwrap();

    std::fs::write(l.wt.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(l.wt.join("b.txt"), "bee\n").unwrap();
    // A dry run leaves every git file alone (its objects go to a private folder).
    let dry = write(
        &l.wt,
        "repo.stage",
        json!({"paths": ["a.txt", "b.txt"], "dry_run": true}),
    );
    assert_eq!(dry["applied"], false, "{dry}");
    assert_eq!(std::fs::read(private.join("index")).unwrap(), wt_index);

    let staged = write(&l.wt, "repo.stage", json!({"paths": ["a.txt", "b.txt"]}));
    assert_eq!(staged["plan"]["change"], json!([".git/index"]), "{staged}");
    assert_ne!(std::fs::read(private.join("index")).unwrap(), wt_index);
    let unstaged = write(&l.wt, "repo.unstage", json!({"paths": ["b.txt"]}));
    assert_eq!(unstaged["applied"], true, "{unstaged}");
    write(&l.wt, "repo.stage", json!({"paths": ["b.txt"]}));
    let commit = write(&l.wt, "repo.commit", json!({"message": "three"}));
    let id = commit["commit"].as_str().unwrap().to_string();
    assert_eq!(commit["branch"], "feat", "{commit}");
    // The branch moved in the shared refs; plain git agrees from both checkouts.
    let feat = std::fs::read_to_string(common.join("refs/heads/feat")).unwrap();
    assert_eq!(feat.trim(), id);
    assert_eq!(git(&l.wt, &["rev-parse", "HEAD"]).trim(), id);
    assert_eq!(git(&l.main, &["rev-parse", "feat"]).trim(), id);
    assert_eq!(git(&l.wt, &["status", "--porcelain"]), "");

    // A new branch is a shared ref; a switch rewrites the worktree's own HEAD and index.
    write(
        &l.wt,
        "repo.branch.create",
        json!({"name": "side", "from": "HEAD~1"}),
    );
    assert!(common.join("refs/heads/side").is_file());
    let switched = write(&l.wt, "repo.switch", json!({"branch": "side"}));
    assert_eq!(switched["branch"], "side", "{switched}");
    assert_eq!(
        std::fs::read_to_string(private.join("HEAD")).unwrap(),
        "ref: refs/heads/side\n"
    );
    assert_eq!(
        std::fs::read_to_string(l.wt.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert!(!l.wt.join("b.txt").exists());
    assert_eq!(git(&l.wt, &["status", "--porcelain"]), "");

    // Restore rewrites the working tree of the worktree only.
    std::fs::write(l.wt.join("a.txt"), "junk\n").unwrap();
    write(&l.wt, "repo.restore", json!({"paths": ["a.txt"]}));
    assert_eq!(
        std::fs::read_to_string(l.wt.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );

    // A branch checked out in the main checkout is not switched to here (as git refuses).
    let o = support::call(&l.wt, "repo.switch", json!({"branch": "main"}));
    assert!(
        support::stderr(&o).contains("error[conflict]"),
        "{}",
        support::stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(private.join("HEAD")).unwrap(),
        "ref: refs/heads/side\n"
    );

    // The main checkout's HEAD and index never moved, the worktree's `.git` is still git's
    // file, and the audit names the logical git files.
    assert_eq!(std::fs::read(common.join("HEAD")).unwrap(), main_head);
    assert_eq!(std::fs::read(common.join("index")).unwrap(), main_index);
    assert!(std::fs::symlink_metadata(l.wt.join(".git"))
        .unwrap()
        .is_file());
    assert_eq!(git(&l.main, &["status", "--porcelain"]), "");
    let audit = std::fs::read_to_string(l.wt.join(".seneschal/audit.jsonl")).unwrap();
    assert!(audit.contains("\".git/HEAD\""), "{audit}");
    assert!(!audit.contains("worktrees/wt"), "{audit}");
}
