//! Session notes through the CLI: each CLI call is a process of its own, so its note list
//! starts empty, the same text added twice makes two separate first notes, and no file of
//! the repository changes. (Two notes within one process are tested on the handler, in
//! core/src/handlers/session.rs, until a long-lived transport can carry them here.)

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{json, run_in, scratch_repo, stderr};
use sha2::{Digest, Sha256};

/// Every file under `dir` (`.git` included) with its length, mtime and content hash.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                let bytes = std::fs::read(e.path()).unwrap();
                out.insert(
                    e.path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    format!(
                        "{} {:?} {:x}",
                        meta.len(),
                        meta.modified().unwrap(),
                        Sha256::digest(bytes)
                    ),
                );
            }
        }
    }
    out
}

#[test]
fn each_cli_call_starts_empty_and_changes_no_file() {
    let repo = scratch_repo();
    let before = snapshot(repo.path());
    for _ in 0..2 {
        let o = run_in(
            repo.path(),
            &["session", "note", "add", "--text", "same text"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["id"], 1, "a fresh process holds no earlier note");
        assert_eq!(v["count"], 1);
        assert_eq!(v["text"], "same text");
    }
    let list = json(&run_in(repo.path(), &["session", "note", "list"]));
    assert_eq!(list["notes"], serde_json::json!([]));
    assert_eq!(
        snapshot(repo.path()),
        before,
        "a session note touched a file"
    );
}

#[test]
fn a_read_only_profile_refuses_to_add_a_note() {
    let repo = scratch_repo();
    let o = run_in(
        repo.path(),
        &[
            "session",
            "note",
            "add",
            "--text",
            "x",
            "--allow-effects",
            "read",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let o = run_in(
        repo.path(),
        &["session", "note", "list", "--allow-effects", "read"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}
