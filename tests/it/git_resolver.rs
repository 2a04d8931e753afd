//! The resident revision resolver (`access/src/git.rs`, one `git cat-file --batch-check` per
//! repository) through the built binary: a served `repo.diff` between revisions runs one git
//! process per call, not two; a commit made, refs packed, objects repacked between calls are
//! seen by the next call; a resolver killed under the server is started again; a name that is
//! no commit still gets `rev-parse`'s `not_found`. git is reached through a logging wrapper
//! first on the server's `PATH`, so the test sees every git process the server starts.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::mcp::Mcp;
use crate::support::{git, scratch_repo};

/// The git the tests run, found on `PATH`.
fn real_git() -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH is set");
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git is on PATH")
}

/// A folder holding a `git` that appends `PID ARGS` to `log`, then becomes the real git.
fn logging_git(dir: &Path, log: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\necho \"$$ $*\" >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        real_git().display()
    );
    let path = dir.join("git");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The git runs logged so far whose arguments hold the subcommand `sub`: their pids.
fn runs(log: &Path, sub: &str) -> Vec<i32> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter(|l| l.split(' ').any(|w| w == sub))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

fn commit(dir: &Path, file: &str, text: &str) -> String {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", file]);
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

fn diff(mcp: &mut Mcp, from: &str, to: &str) -> Value {
    let answer = mcp.request(
        "tools/call",
        json!({"name": "repo_diff", "arguments": {"from": from, "to": to, "stat": true}}),
    );
    answer["result"].clone()
}

#[test]
fn a_served_diff_between_revisions_runs_one_git_and_sees_every_ref_move() {
    let repo = scratch_repo();
    let dir = repo.path();
    let first = commit(dir, "a.txt", "one\n");
    let second = commit(dir, "a.txt", "one\ntwo\n");
    let wrap = tempfile::tempdir().unwrap();
    let log = wrap.path().join("git.log");
    logging_git(wrap.path(), &log);
    let path = format!(
        "{}:{}",
        wrap.path().display(),
        std::env::var("PATH").unwrap()
    );
    let mut mcp = Mcp::start_with(dir, &[], &[("PATH", &path)]);
    mcp.initialize("2025-06-18");

    let r = diff(&mut mcp, "HEAD~1", "HEAD");
    assert_eq!(r["structuredContent"]["from"], first.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["to"], second.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["files"][0]["additions"], 1, "{r}");

    // A new commit: HEAD moved, the resident resolver must see it.
    let third = commit(dir, "b.txt", "three\n");
    let r = diff(&mut mcp, "HEAD~1", "HEAD");
    assert_eq!(r["structuredContent"]["from"], second.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["to"], third.as_str(), "{r}");

    // Refs packed, objects repacked (the loose ones removed), then one more commit.
    git(dir, &["pack-refs", "--all"]);
    git(dir, &["gc", "-q", "--prune=now"]);
    let fourth = commit(dir, "c.txt", "four\n");
    let r = diff(&mut mcp, "main~2", "main");
    assert_eq!(r["structuredContent"]["from"], second.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["to"], fourth.as_str(), "{r}");

    assert_eq!(
        runs(&log, "rev-parse"),
        Vec::<i32>::new(),
        "no second process per call"
    );
    assert_eq!(runs(&log, "cat-file").len(), 1, "one resident resolver");
    assert_eq!(runs(&log, "diff").len(), 3, "one diff per call");

    // The resolver killed under the server: the next call starts another.
    let resident = runs(&log, "cat-file")[0];
    assert!(std::process::Command::new("kill")
        .args(["-9", &resident.to_string()])
        .status()
        .unwrap()
        .success());
    let r = diff(&mut mcp, &first, "HEAD");
    assert_eq!(r["structuredContent"]["from"], first.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["to"], fourth.as_str(), "{r}");
    assert_eq!(runs(&log, "cat-file").len(), 2, "a new resolver");

    // A name that is no commit: `rev-parse` decides, and says which field.
    let r = diff(&mut mcp, "no-such-branch", "HEAD");
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["seneschal/error"]["code"], "not_found", "{r}");
    assert_eq!(r["_meta"]["seneschal/error"]["pointer"], "/from", "{r}");
    assert!(!runs(&log, "rev-parse").is_empty());
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

/// A FIFO planted where a ref should be stalls the git that reads it, for ever. Every git run
/// is watched: past its deadline (shortened here to 5 s over HTTP, 1.5 s on the command line)
/// it is killed and the call fails with `internal`, over HTTP and on the command line. Over
/// HTTP, whose workers answer calls side by side, the stalled call also holds up no other: the
/// resident resolver it holds is not waited for, the next call resolves with `rev-parse` and
/// answers while the stalled one still waits (the test holds the FIFO's writing end open, so
/// only the deadline ends the stall).
#[test]
fn a_git_stalled_on_a_planted_fifo_is_stopped_and_stalls_no_other_call() {
    use crate::support::http::Serve;
    let repo = scratch_repo();
    let dir = repo.path();
    let first = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
    let second = commit(dir, "a.txt", "one\n");
    let fifo = dir.join(".git/refs/heads/stuck");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let deadline = [("SENESCHAL_GIT_DEADLINE_MS", "5000")];
    let serve = Serve::start(dir, &deadline);
    let diff = |from: &str| format!("/api/v1/repo/diff?from={from}&to=HEAD&stat=true");
    // The first call starts the resolver; the second gets it stuck on the FIFO.
    let (status, ok) = serve.json("GET", &diff("HEAD~1"), None);
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok["to"], second.as_str(), "{ok}");
    let (host, target) = (serve.host(), diff("stuck"));
    let mut stuck = serve.connect();
    let waiting = std::thread::spawn(move || {
        stuck.send(&host, "GET", &target, &[("Connection", "close")], b"")
    });
    // Git stalls on the FIFO once it opened it to read: a writer's non-blocking open succeeds
    // from then on (ENXIO before). The writing end stays open, so that neither the stalled git
    // nor the `rev-parse` after it sees an end of file.
    let writer = {
        use std::os::unix::fs::OpenOptionsExt;
        let open = || {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            match open() {
                Ok(w) => break w,
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    assert!(
                        std::time::Instant::now() < until && !waiting.is_finished(),
                        "no git opened the FIFO"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("the FIFO: {e}"),
            }
        }
    };
    let (status, ok) = serve.json("GET", &diff("HEAD~1"), None);
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok["from"], first.as_str(), "{ok}");
    assert_eq!(ok["to"], second.as_str(), "{ok}");
    assert!(
        !waiting.is_finished(),
        "the next call answered while the stalled one waits for its deadline"
    );
    // The resolver is killed at its deadline, `rev-parse` stalls on the FIFO in turn and is
    // killed at its own: the call answers `internal`, saying why.
    let stalled = waiting.join().unwrap();
    drop(writer);
    let body = String::from_utf8_lossy(&stalled.body).into_owned();
    assert_eq!(stalled.status, 500, "{body}");
    assert!(body.contains("\"internal\""), "{body}");
    assert!(body.contains("did not finish within 5 s"), "{body}");
    // And the server goes on: a new resolver answers.
    let (status, ok) = serve.json("GET", &diff("HEAD~1"), None);
    assert_eq!(status, 200, "{ok}");
    serve.finish();

    // The command line: the same stop, exit 1.
    let mut cli = std::process::Command::new(crate::support::bin());
    cli.args(["repo", "diff", "--from", "stuck", "--to", "HEAD", "--stat"])
        .current_dir(dir)
        .env("SENESCHAL_GIT_DEADLINE_MS", "1500");
    let o = crate::support::output_within(cli, std::time::Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", crate::support::stderr(&o));
    assert!(
        crate::support::stderr(&o).contains("error[internal]"),
        "{}",
        crate::support::stderr(&o)
    );
}

/// `repo.show` names a commit's first parent through the resolver and reads the commit and its
/// diff side by side: a merge is shown against its first parent, a root commit against the
/// empty tree of its repository's object format (SHA-1 and SHA-256), on every transport.
#[test]
fn show_diffs_a_merge_against_its_first_parent_and_a_root_against_its_empty_tree() {
    use crate::support::Three;
    let repo = scratch_repo();
    let dir = repo.path();
    git(dir, &["checkout", "-q", "-b", "side"]);
    commit(dir, "side.txt", "side\n");
    git(dir, &["checkout", "-q", "main"]);
    let before = commit(dir, "main.txt", "main\n");
    git(dir, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    let mut t = Three::new(dir);
    let merge = t.ok("repo.show", json!({"rev": "HEAD"}));
    assert_eq!(merge["parents"][0], before.as_str(), "{merge}");
    assert_eq!(merge["parents"].as_array().unwrap().len(), 2, "{merge}");
    let files: Vec<&str> = merge["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["side.txt"], "against the first parent: {merge}");
    t.finish();

    let sha256 = tempfile::tempdir().unwrap();
    let d = sha256.path();
    git(d, &["init", "-q", "--object-format=sha256", "-b", "main"]);
    git(d, &["config", "user.email", "test@example.invalid"]);
    git(d, &["config", "user.name", "Test"]);
    let root = commit(d, "only.txt", "one\ntwo\n");
    assert_eq!(root.len(), 64);
    let mut t = Three::new(d);
    let shown = t.ok("repo.show", json!({"patch": true}));
    assert_eq!(shown["sha"], root.as_str(), "{shown}");
    assert_eq!(shown["parents"], json!([]), "{shown}");
    assert_eq!(shown["files"][0]["path"], "only.txt", "{shown}");
    assert_eq!(shown["files"][0]["change"], "added", "{shown}");
    assert_eq!(shown["files"][0]["additions"], 2, "{shown}");
    assert!(shown["patch"].as_str().unwrap().contains("+two"), "{shown}");
    t.finish();
}
