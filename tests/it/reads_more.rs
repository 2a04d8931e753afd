//! The reads agents asked for: `files.read` at a revision and of several paths (with the
//! file's digest, and its text as the MCP text block, redacted), `files.find` (a recursive
//! name search), and `repo.log` of a revision, a range and a window of dates, through the
//! built binary over the CLI, MCP stdio and HTTP (`support::Three`).

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::{git, mcp, scratch_repo, Three};

/// Commits everything in `dir` with `message`, author and committer dated `date` (RFC 2822 or
/// ISO 8601, as git takes it).
fn commit_at(dir: &Path, message: &str, date: &str) {
    git(dir, &["add", "-A"]);
    let o = std::process::Command::new("git")
        .args(["commit", "-q", "--allow-empty", "-m", message])
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// A private key block, spelled so no scanner of this file takes it for one.
fn key_block() -> String {
    let kind = ["RSA", "PRIVATE", "KEY"].join(" ");
    format!("-----BEGIN {kind}-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END {kind}-----\n")
}

#[test]
fn files_read_at_a_revision_answers_the_old_text_and_gates_it() {
    let repo = scratch_repo();
    let dir = repo.path();
    write(dir, "notes.txt", "old line\n");
    write(dir, "keys/deploy.txt", &key_block());
    commit_at(dir, "old", "2024-01-01T10:00:00Z");
    write(dir, "notes.txt", "new line\nsecond\n");
    std::fs::remove_file(dir.join("keys/deploy.txt")).unwrap();
    commit_at(dir, "new", "2024-01-02T10:00:00Z");
    let mut t = Three::new(dir);

    let now = t.ok("files.read", json!({"path": "notes.txt"}));
    assert_eq!(now["content"], "new line\nsecond\n");
    assert_eq!(now["digest"], sha256(b"new line\nsecond\n"));
    assert!(now.get("commit").is_none(), "{now}");

    let old = t.ok("files.read", json!({"path": "notes.txt", "rev": "HEAD~1"}));
    assert_eq!(old["content"], "old line\n");
    assert_eq!(old["digest"], sha256(b"old line\n"));
    assert_eq!(old["total_lines"], 1);
    let head1 = git(dir, &["rev-parse", "HEAD~1"]);
    assert_eq!(old["commit"], head1.trim());

    // A file holding a private key is refused at a revision as in the working tree.
    let m = t.err(
        "files.read",
        json!({"path": "keys/deploy.txt", "rev": "HEAD~1"}),
        "refused",
    );
    assert!(m.contains("secret_content"), "{m}");
    assert!(!m.contains("MIIE"), "{m}");
    // A secret-bearing name, a missing file, a bad revision, an option.
    t.err(
        "files.read",
        json!({"path": ".env", "rev": "HEAD"}),
        "refused",
    );
    t.err(
        "files.read",
        json!({"path": ".git/config", "rev": "HEAD"}),
        "refused",
    );
    t.err(
        "files.read",
        json!({"path": "keys/deploy.txt", "rev": "HEAD"}),
        "not_found",
    );
    t.err(
        "files.read",
        json!({"path": "notes.txt", "rev": "no-such"}),
        "not_found",
    );
    let m = t.err(
        "files.read",
        json!({"path": "notes.txt", "rev": "--output=/tmp/x"}),
        "invalid_input",
    );
    assert!(m.contains("cannot begin with `-`"), "{m}");
    t.err("files.read", json!({}), "invalid_input");
    t.err(
        "files.read",
        json!({"path": "notes.txt", "paths": ["notes.txt"]}),
        "invalid_input",
    );
    t.finish();
}

#[test]
fn files_read_of_several_paths_answers_each_one() {
    let repo = scratch_repo();
    let dir = repo.path();
    write(dir, "a.txt", "alpha\n");
    write(dir, "b.txt", "beta\nbeta two\n");
    write(dir, ".env", "TOKEN=x\n");
    let mut t = Three::new(dir);
    let v = t.ok(
        "files.read",
        json!({"paths": ["a.txt", ".env", "missing.txt", "b.txt"], "limit": 1}),
    );
    let files = v["files"].as_array().expect("files");
    assert_eq!(files.len(), 4, "{v}");
    assert_eq!(files[0]["path"], "a.txt");
    assert_eq!(files[0]["content"], "alpha\n");
    assert_eq!(files[0]["digest"], sha256(b"alpha\n"));
    assert_eq!(files[1]["path"], ".env");
    assert_eq!(files[1]["error"]["code"], "refused", "{v}");
    assert!(files[1].get("content").is_none(), "{v}");
    assert_eq!(files[2]["error"]["code"], "not_found", "{v}");
    assert_eq!(files[3]["content"], "beta\n");
    assert_eq!(files[3]["truncated"], true);
    assert_eq!(files[3]["next_offset"], 2);
    // The top level sums the call up.
    assert_eq!(v["path"], "");
    assert_eq!(v["content"], Value::Null);
    assert_eq!(v["digest"], Value::Null);
    assert_eq!(v["lines"], 2);
    assert_eq!(v["size"], 6 + 14);
    assert_eq!(v["truncated"], true);

    // The same at a revision: the committed files only.
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "a"]);
    let v = t.ok(
        "files.read",
        json!({"paths": ["a.txt", "b.txt", "README.md"], "rev": "HEAD"}),
    );
    let files = v["files"].as_array().expect("files");
    assert_eq!(files[0]["content"], "alpha\n");
    assert_eq!(files[1]["error"]["code"], "not_found", "{v}");
    assert_eq!(files[2]["content"], "# scratch\n");
    t.finish();
}

#[test]
fn files_read_over_mcp_answers_the_file_text_as_its_text_block_redacted() {
    let repo = scratch_repo();
    let dir = repo.path();
    let key = format!("AKIA{}", "ABCDEFGHIJ234567");
    let text = format!("[db]\npassword = \"hunter2hunter2\"\naws = {key}\nplain line\n");
    write(dir, "app.toml", &text);
    write(dir, "plain.txt", "just \"quoted\" text\\n\n");
    std::fs::write(dir.join("img.bin"), b"\x89PNG\0\0\0rest").unwrap();
    let mut m = mcp::Mcp::start_with(dir, &[], &[]);
    m.initialize("2025-11-25");
    let mut call = |args: Value| {
        let r = m.request(
            "tools/call",
            json!({"name": "files_read", "arguments": args}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"].clone()
    };

    let r = call(json!({"path": "plain.txt"}));
    assert_eq!(r["content"][0]["type"], "text");
    assert_eq!(r["content"][0]["text"], "just \"quoted\" text\\n\n");
    assert_eq!(r["content"][0]["text"], r["structuredContent"]["content"]);
    // The second block is the answer without its text, for clients that show blocks alone.
    let meta: Value = serde_json::from_str(r["content"][1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(meta["digest"], sha256(b"just \"quoted\" text\\n\n"));
    assert!(meta.get("content").is_none(), "{meta}");

    let r = call(json!({"path": "app.toml"}));
    let block = r["content"][0]["text"].as_str().expect("text");
    assert_eq!(block, r["structuredContent"]["content"], "{r}");
    assert!(!block.contains("hunter2hunter2"), "{block}");
    assert!(!block.contains(&key), "{block}");
    assert!(
        block.contains("[REDACTED]") && block.contains("plain line"),
        "{block}"
    );
    assert!(!r.to_string().contains("hunter2hunter2"), "{r}");
    assert!(!r.to_string().contains(&key), "{r}");

    let r = call(json!({"path": "img.bin"}));
    let block = r["content"][0]["text"].as_str().expect("text");
    assert!(block.starts_with("A binary file of 11 bytes"), "{block}");

    // Several paths: a block per file, named, the refused one by its sentence.
    let r = call(json!({"paths": ["plain.txt", ".env", "app.toml"]}));
    let blocks = r["content"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 4, "{r}");
    assert_eq!(
        blocks[0]["text"],
        "==> plain.txt <==\njust \"quoted\" text\\n\n"
    );
    assert!(blocks[1]["text"]
        .as_str()
        .unwrap()
        .starts_with("==> .env <==\n"));
    assert!(
        !blocks[2]["text"].as_str().unwrap().contains("hunter2"),
        "{r}"
    );
    let (status, _, err) = m.finish();
    assert!(status.success(), "{err}");
}

#[test]
fn files_find_globs_kinds_ignores_and_never_follows_links() {
    let repo = scratch_repo();
    let dir = repo.path();
    write(dir, "src/main.rs", "fn main() {}\n");
    write(dir, "src/a/mod.rs", "\n");
    write(dir, "src/a/b/mod.rs", "\n");
    write(dir, "tests/test_one.py", "\n");
    write(dir, "tests/deep/test_two.py", "\n");
    write(dir, "tests/deep/other.py", "\n");
    write(dir, "build/out.rs", "\n");
    write(dir, ".gitignore", "build/\n*.log\n");
    write(dir, "debug.log", "\n");
    write(dir, ".env", "X=1\n");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "loot.rs", "\n");
    std::os::unix::fs::symlink(outside.path(), dir.join("outlink")).unwrap();
    std::os::unix::fs::symlink("src/main.rs", dir.join("main_link.rs")).unwrap();
    let mut t = Three::new(dir);
    let paths = |v: &Value| -> Vec<String> {
        v["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_string())
            .collect()
    };

    let v = t.ok("files.find", json!({"pattern": "*.rs"}));
    assert_eq!(
        paths(&v),
        [
            "main_link.rs",
            "src/a/b/mod.rs",
            "src/a/mod.rs",
            "src/main.rs"
        ],
        "{v}"
    );
    assert_eq!(v["truncated"], false);
    let main = &v["matches"][3];
    assert_eq!(main["kind"], "file");
    assert_eq!(main["size"], 13);
    let modified = main["modified"].as_str().unwrap();
    assert!(
        modified.len() == 20 && modified.ends_with('Z') && &modified[10..11] == "T",
        "{modified}"
    );
    assert_eq!(v["matches"][0]["kind"], "symlink");
    assert_eq!(v["matches"][0]["size"], Value::Null);

    let v = t.ok("files.find", json!({"pattern": "**/test_*.py"}));
    assert_eq!(
        paths(&v),
        ["tests/deep/test_two.py", "tests/test_one.py"],
        "{v}"
    );
    let v = t.ok("files.find", json!({"pattern": "src/**/mod.rs"}));
    assert_eq!(paths(&v), ["src/a/b/mod.rs", "src/a/mod.rs"], "{v}");
    // Under a folder, of one kind.
    let v = t.ok(
        "files.find",
        json!({"pattern": "*", "path": "src", "kind": "dir"}),
    );
    assert_eq!(paths(&v), ["src/a", "src/a/b"], "{v}");
    let v = t.ok("files.find", json!({"pattern": "*", "kind": "symlink"}));
    assert_eq!(paths(&v), ["main_link.rs", "outlink"], "{v}");

    // Everything: nothing ignored, nothing of .git, no secret name, nothing behind a link.
    let v = t.ok("files.find", json!({"pattern": "*", "limit": 5000}));
    let all = paths(&v);
    assert!(all.contains(&".gitignore".to_string()), "{all:?}");
    for p in &all {
        assert!(!p.starts_with(".git/") && p != ".git", "{p}");
        assert!(!p.starts_with("build") && !p.ends_with(".log"), "{p}");
        assert!(!p.starts_with("outlink/") && p != ".env", "{p}");
    }

    // Truncation.
    let v = t.ok("files.find", json!({"pattern": "*.py", "limit": 2}));
    assert_eq!(v["truncated"], true);
    assert_eq!(paths(&v).len(), 2);
    let v = t.ok("files.find", json!({"pattern": "*.py", "limit": 3}));
    assert_eq!(v["truncated"], false);

    t.err(
        "files.find",
        json!({"pattern": "*", "path": "outlink"}),
        "refused",
    );
    t.err(
        "files.find",
        json!({"pattern": "*", "path": ".git"}),
        "refused",
    );
    t.err(
        "files.find",
        json!({"pattern": "*", "path": "nope"}),
        "not_found",
    );
    t.err("files.find", json!({"pattern": "src/["}), "invalid_input");
    // An ignored folder holds nothing to find.
    let v = t.ok("files.find", json!({"pattern": "*", "path": "build"}));
    assert_eq!(paths(&v), Vec::<String>::new());
    t.finish();
}

/// A diff cut at its cap, with files the gate leaves out (one by its name, one by a key block
/// in it, both before the files shown), shows the patch of the files shown alone, cut at the same cap: the window is filled
/// again from what git wrote past the cap, or by asking git again when too little was kept;
/// never short, never holding a section left out, on every transport.
#[test]
fn a_cut_diff_without_its_hidden_files_is_the_diff_of_the_files_shown() {
    let repo = scratch_repo();
    let dir = repo.path();
    let lines = |tag: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!("{tag} line {i} of the file\n"))
            .collect()
    };
    for (small, big) in [(3, 40), (3, 400)] {
        write(dir, ".env", &lines("env", small));
        write(dir, "b.txt", &lines("b", 60));
        write(dir, "a.txt", &format!("{}{}", key_block(), lines("a", big)));
        write(dir, "d.txt", &lines("d", 60));
        commit_at(dir, "before", "2024-03-01T12:00:00Z");
        write(dir, ".env", &lines("ENV", small));
        write(dir, "b.txt", &lines("B", 60));
        write(dir, "a.txt", &format!("{}{}", key_block(), lines("A", big)));
        write(dir, "d.txt", &lines("D", 60));
        commit_at(dir, "after", "2024-03-02T12:00:00Z");
        let mut t = Three::new(dir);
        for cap in [1024, 2048, 3000, 4096, 8192, 65536] {
            let ask = json!({"from": "HEAD~1", "to": "HEAD", "max_bytes": cap});
            let all = t.ok("repo.diff", ask.clone());
            assert_eq!(all["skipped_secret_files"], json!(2), "{all}");
            let shown: Vec<Value> = all["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].clone())
                .collect();
            assert_eq!(shown, [json!("b.txt"), json!("d.txt")], "{all}");
            let mut alone = ask.clone();
            alone["paths"] = json!(shown);
            let alone = t.ok("repo.diff", alone);
            assert_eq!(
                all["patch"], alone["patch"],
                "cap {cap}, {big} lines of a.txt"
            );
            assert_eq!(all["truncated"], alone["truncated"], "cap {cap}");
            let patch = all["patch"].as_str().unwrap();
            assert!(patch.len() <= cap, "{} > {cap}", patch.len());
            assert!(
                !patch.contains("a.txt") && !patch.contains(".env"),
                "{patch}"
            );
        }
        t.finish();
    }
}

/// Before the first commit the log is empty on every transport (git's own run fails, and only
/// then is HEAD asked about); a revision that names nothing is still `not_found`.
#[test]
fn repo_log_before_the_first_commit_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    let mut t = Three::new(dir.path());
    let v = t.ok("repo.log", json!({}));
    assert_eq!(v["commits"], json!([]), "{v}");
    assert_eq!(v["truncated"], json!(false), "{v}");
    t.err("repo.log", json!({"rev": "HEAD"}), "not_found");
    t.finish();
}

#[test]
fn repo_log_takes_ranges_and_dates_and_refuses_options() {
    let repo = scratch_repo();
    let dir = repo.path();
    // Every commit dated, the first one included, so the history's dates are all known.
    let o = std::process::Command::new("git")
        .args(["commit", "-q", "--amend", "--no-edit", "--reset-author"])
        .env("GIT_AUTHOR_DATE", "2024-02-28T12:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-02-28T12:00:00Z")
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(o.status.success());
    for (i, day) in ["2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04"]
        .iter()
        .enumerate()
    {
        write(dir, "n.txt", &format!("{i}\n"));
        commit_at(dir, &format!("c{i}"), &format!("{day}T12:00:00Z"));
    }
    let mut t = Three::new(dir);

    let v = t.ok("repo.log", json!({"rev": "HEAD~3..HEAD"}));
    assert_eq!(subjects(&v), ["c3", "c2", "c1"], "{v}");
    let v = t.ok("repo.log", json!({"rev": "HEAD~2"}));
    assert_eq!(subjects(&v), ["c1", "c0", "initial"], "{v}");
    let v = t.ok("repo.log", json!({"rev": "HEAD~1...HEAD~3"}));
    assert_eq!(subjects(&v), ["c2", "c1"], "{v}");
    let v = t.ok("repo.log", json!({"rev": "HEAD~1.."}));
    assert_eq!(subjects(&v), ["c3"], "{v}");

    // Dates: a day alone is its whole day, a date-time is exact, a zone is honoured.
    let v = t.ok(
        "repo.log",
        json!({"since": "2024-03-02", "until": "2024-03-03"}),
    );
    assert_eq!(subjects(&v), ["c2", "c1"], "{v}");
    let v = t.ok("repo.log", json!({"since": "2024-03-03T12:00:00Z"}));
    assert_eq!(subjects(&v), ["c3", "c2"], "{v}");
    let v = t.ok("repo.log", json!({"since": "2024-03-03T12:00:01Z"}));
    assert_eq!(subjects(&v), ["c3"], "{v}");
    let v = t.ok("repo.log", json!({"until": "2024-03-01T13:30:00+02:00"}));
    assert_eq!(subjects(&v), ["initial"], "{v}");
    let v = t.ok(
        "repo.log",
        json!({"rev": "HEAD~3..HEAD", "since": "2024-03-03", "path": "n.txt"}),
    );
    assert_eq!(subjects(&v), ["c3", "c2"], "{v}");
    assert_eq!(v["commits"][0]["authored_at"], "2024-03-04T12:00:00Z");

    for rev in ["--all", "-n1", "HEAD..--output=x", "--output=x..HEAD"] {
        let m = t.err("repo.log", json!({ "rev": rev }), "invalid_input");
        assert!(m.contains("cannot begin with `-`"), "{rev}: {m}");
    }
    for bad in [
        "yesterday-ish",
        "2024-02-30",
        "2024-03-01T25:00:00Z",
        "-2024-03-01",
    ] {
        t.err("repo.log", json!({ "since": bad }), "invalid_input");
    }
    let m = t.err("repo.log", json!({"rev": "no-such..HEAD"}), "not_found");
    assert!(m.contains("`no-such` names no commit"), "{m}");
    assert!(!m.contains("fatal"), "{m}");
    let mcp = t.mcp_error("repo.log", &json!({"rev": "no-such"}));
    assert!(
        !mcp.contains("fatal") && !mcp.contains("ambiguous"),
        "{mcp}"
    );
    t.finish();
}

/// `since` and `until` read the dates people type — `today`, `yesterday`, `N UNITS ago` —
/// against the clock, in UTC, on every transport and as `repo log --since` flags; anything else
/// is `invalid_input` naming the forms it reads.
#[test]
fn repo_log_reads_the_dates_people_type_against_now_in_utc() {
    let repo = scratch_repo();
    let dir = repo.path();
    // The history's dates, as far from every boundary the test asks about as a day: each a
    // number of days before the wall clock now (the fixture's dates, not a timing).
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let now = wall();
    let days_ago = |d: u64| format!("@{} +0000", now - d * 86_400);
    let o = std::process::Command::new("git")
        .args(["commit", "-q", "--amend", "--no-edit", "--reset-author"])
        .env("GIT_AUTHOR_DATE", days_ago(50))
        .env("GIT_COMMITTER_DATE", days_ago(50))
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(o.status.success());
    commit_at(dir, "forty days ago", &days_ago(40));
    commit_at(dir, "ten days ago", &days_ago(10));
    commit_at(dir, "two days ago", &days_ago(2));
    commit_at(dir, "now", &days_ago(0));
    let mut t = Three::new(dir);
    for (input, expected) in [
        (
            json!({"since": "2 weeks ago"}),
            &["now", "two days ago", "ten days ago"][..],
        ),
        (
            json!({"since": "2.weeks.ago"}),
            &["now", "two days ago", "ten days ago"],
        ),
        (json!({"since": "3 days ago"}), &["now", "two days ago"]),
        (
            json!({"since": "1 month ago"}),
            &["now", "two days ago", "ten days ago"],
        ),
        (
            json!({"since": "6 weeks ago", "until": "a week ago"}),
            &["ten days ago", "forty days ago"],
        ),
    ] {
        let v = t.ok("repo.log", input.clone());
        assert_eq!(subjects(&v), expected, "{input}: {v}");
    }
    // The days are UTC days: the commit made now is today's, the one of two days ago is
    // yesterday's or before (unless the UTC day turned while the test ran).
    let today = t.ok("repo.log", json!({"since": "Today"}));
    let until_yesterday = t.ok("repo.log", json!({"until": "yesterday"}));
    if wall() / 86_400 == now / 86_400 {
        assert_eq!(subjects(&today), ["now"], "{today}");
        assert_eq!(
            subjects(&until_yesterday),
            ["two days ago", "ten days ago", "forty days ago", "initial"],
            "{until_yesterday}"
        );
    }
    for bad in ["last tuesday", "2 weeks", "tomorrow", "yesterday-ish"] {
        let m = t.err("repo.log", json!({ "since": bad }), "invalid_input");
        assert!(
            m.contains(&format!("`{bad}` is not a date seneschal reads"))
                && m.contains("`2024-05-01`")
                && m.contains("`yesterday`")
                && m.contains("`N UNITS ago`"),
            "{bad}: {m}"
        );
    }
    t.finish();
    // The command line's flags take the same words.
    let o = crate::support::run_in(dir, &["repo", "log", "--since", "3 days ago"]);
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
    assert_eq!(subjects(&crate::support::json(&o)), ["now", "two days ago"]);
    let o = crate::support::run_in(dir, &["repo", "log", "--until", "last week"]);
    assert_eq!(o.status.code(), Some(2), "{}", crate::support::stderr(&o));
    assert!(crate::support::stderr(&o).contains("at: /until"));
}

/// The subjects of a `repo.log` answer, newest first.
fn subjects(v: &Value) -> Vec<String> {
    v["commits"]
        .as_array()
        .expect("commits")
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_string())
        .collect()
}
