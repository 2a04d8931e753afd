//! The git writes (`repo.stage`, `repo.unstage`, `repo.commit`, `repo.branch.create`,
//! `repo.switch`, `repo.restore`) driven through the built binary over the CLI, MCP stdio and
//! HTTP on scratch repositories, checked with plain git and the audit log: the commit's
//! identity is the user's own, no hook runs, a switch that would lose work refuses, restore
//! discards, secrets are never staged, and a keyed commit retried after kill -9 applies once.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{self, http::Serve, mcp::Mcp};

/// The user's own identity, in the `HOME/.gitconfig` every seneschal process here gets.
const NAME: &str = "Home User";
const EMAIL: &str = "home.user@example.invalid";

/// A scratch repository whose own `.git/config` plants another identity and a hooks path, with
/// hooks that leave a marker when they run; and a `HOME` holding the user's identity.
struct Fixture {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
    markers: PathBuf,
}

const HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
];

fn fixture() -> Fixture {
    let repo = support::scratch_repo();
    let dir = repo.path();
    support::git(dir, &["config", "user.name", "Planted Name"]);
    support::git(dir, &["config", "user.email", "planted@repo.invalid"]);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!("[user]\n\tname = {NAME}\n\temail = {EMAIL}\n"),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join("xdg")).unwrap();
    let markers = home.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    let hook_dir = home.path().join("hooks-path");
    std::fs::create_dir_all(&hook_dir).unwrap();
    for folder in [dir.join(".git/hooks"), hook_dir.clone()] {
        std::fs::create_dir_all(&folder).unwrap();
        for h in HOOKS {
            let script = format!("#!/bin/sh\ntouch '{}/{h}'\n", markers.display());
            let path = folder.join(h);
            std::fs::write(&path, script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    support::git(
        dir,
        &["config", "core.hooksPath", hook_dir.to_str().unwrap()],
    );
    Fixture {
        repo,
        home,
        markers,
    }
}

impl Fixture {
    fn dir(&self) -> &Path {
        self.repo.path()
    }

    /// The environment of every seneschal process: the user's HOME, an empty XDG folder.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home.path().display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                self.home.path().join("xdg").display().to_string(),
            ),
        ]
    }

    /// `seneschal serve` in the repository, with the user's environment.
    fn serve(&self) -> Serve {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Serve::start(self.dir(), &env)
    }

    fn hooks_ran(&self) -> Vec<String> {
        std::fs::read_dir(&self.markers)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Plain git in the repository, run by the test itself: hooks off, so a marker can only
    /// come from seneschal's runs (git status and friends run `post-index-change` otherwise).
    fn git(&self, args: &[&str]) -> String {
        let mut all = vec!["-c", "core.hooksPath=/dev/null"];
        all.extend_from_slice(args);
        support::git(self.dir(), &all).trim().to_string()
    }

    /// `git status --porcelain` without seneschal's own untracked state folder.
    fn status(&self) -> Vec<String> {
        support::git(
            self.dir(),
            &["-c", "core.hooksPath=/dev/null", "status", "--porcelain"],
        )
        .lines()
        .filter(|l| !l.starts_with("?? .seneschal/"))
        .map(str::to_string)
        .collect()
    }

    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir().join(".seneschal/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// A seneschal process to call through.
enum Via {
    Cli,
    Mcp(Mcp),
    Http(Serve),
}

impl Via {
    fn name(&self) -> &'static str {
        match self {
            Via::Cli => "cli",
            Via::Mcp(_) => "mcp",
            Via::Http(_) => "http",
        }
    }

    /// One call: the answer, or the error code.
    fn call(&mut self, f: &Fixture, id: &str, input: Value) -> Result<Value, String> {
        match self {
            Via::Cli => {
                let mut cmd = Command::new(support::bin());
                cmd.args(["call", id, "--yes", "--input", &input.to_string()])
                    .current_dir(f.dir());
                cmd.env_remove("GIT_AUTHOR_NAME")
                    .env_remove("GIT_AUTHOR_EMAIL")
                    .env_remove("GIT_COMMITTER_NAME")
                    .env_remove("GIT_COMMITTER_EMAIL");
                for (k, v) in f.env() {
                    cmd.env(k, v);
                }
                let o = cmd.output().unwrap();
                if o.status.success() {
                    Ok(support::json(&o))
                } else {
                    let e = support::stderr(&o);
                    Err(e
                        .strip_prefix("error[")
                        .and_then(|r| r.split_once(']'))
                        .map(|(c, _)| c.to_string())
                        .unwrap_or(e))
                }
            }
            Via::Mcp(m) => {
                let a = m.request(
                    "tools/call",
                    json!({"name": id.replace('.', "_"), "arguments": input}),
                );
                if a["result"]["isError"] == true {
                    Err(a["result"]["_meta"]["seneschal/error"]["code"]
                        .as_str()
                        .unwrap_or("?")
                        .to_string())
                } else {
                    Ok(a["result"]["structuredContent"].clone())
                }
            }
            Via::Http(s) => {
                let path = format!("/api/v1/{}", id.replace('.', "/"));
                let (status, body) = s.json("POST", &path, Some(&input));
                if status == 200 {
                    Ok(body)
                } else {
                    Err(body["code"].as_str().unwrap_or("?").to_string())
                }
            }
        }
    }
}

fn start(f: &Fixture, transport: &str) -> Via {
    match transport {
        "cli" => Via::Cli,
        "mcp" => {
            let env = f.env();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let mut m = Mcp::start_with(f.dir(), &[], &env);
            m.initialize("2025-11-25");
            Via::Mcp(m)
        }
        _ => Via::Http(f.serve()),
    }
}

fn ok(via: &mut Via, f: &Fixture, id: &str, input: Value) -> Value {
    via.call(f, id, input.clone())
        .unwrap_or_else(|code| panic!("{} {id} {input}: {code}", via.name()))
}

fn plan_paths(answer: &Value) -> Vec<String> {
    let mut out: Vec<String> = ["create", "change", "delete"]
        .iter()
        .flat_map(|k| answer["plan"][k].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn edit_stage_commit_on_a_branch_and_switch_back_over_every_transport() {
    for transport in ["cli", "mcp", "http"] {
        let f = fixture();
        let mut via = start(&f, transport);
        let main_head = f.git(&["rev-parse", "HEAD"]);

        let switched = ok(
            &mut via,
            &f,
            "repo.switch",
            json!({"branch": "work", "create": true}),
        );
        assert_eq!(switched["previous"], "main", "{transport}: {switched}");
        assert_eq!(f.git(&["symbolic-ref", "--short", "HEAD"]), "work");
        assert_eq!(f.git(&["rev-parse", "work"]), main_head);

        std::fs::write(f.dir().join("README.md"), "# scratch\n\nEdited.\n").unwrap();
        std::fs::write(f.dir().join("notes.txt"), "new file\n").unwrap();
        let staged = ok(
            &mut via,
            &f,
            "repo.stage",
            json!({"paths": ["README.md", "notes.txt"]}),
        );
        assert_eq!(
            staged["staged"],
            json!([{"path": "README.md", "change": "modified"}, {"path": "notes.txt", "change": "added"}]),
            "{transport}"
        );
        assert_eq!(staged["plan"]["change"], json!([".git/index"]));
        assert_eq!(f.status(), ["M  README.md", "A  notes.txt"], "{transport}");

        // Unstage one, then stage it again.
        let un = ok(
            &mut via,
            &f,
            "repo.unstage",
            json!({"paths": ["notes.txt"]}),
        );
        assert_eq!(
            un["unstaged"],
            json!([{"path": "notes.txt", "change": "deleted"}])
        );
        assert_eq!(f.status(), ["M  README.md", "?? notes.txt"], "{transport}");
        ok(&mut via, &f, "repo.stage", json!({"paths": ["notes.txt"]}));

        // A dry run plans the commit and changes nothing under .git.
        let objects = count_objects(f.dir());
        let dry = ok(
            &mut via,
            &f,
            "repo.commit",
            json!({"message": "Edit the readme", "dry_run": true}),
        );
        assert_eq!(
            (dry["applied"].clone(), dry["commit"].clone()),
            (json!(false), Value::Null)
        );
        assert_eq!(
            count_objects(f.dir()),
            objects,
            "{transport}: a dry run made objects"
        );
        assert_eq!(f.git(&["rev-parse", "HEAD"]), main_head);

        let c = ok(
            &mut via,
            &f,
            "repo.commit",
            json!({"message": "Edit the readme\n\nAnd add notes.", "idempotency_key": "k1"}),
        );
        assert_eq!(c["applied"], true);
        assert_eq!(c["branch"], "work");
        assert_eq!(c["parent"], main_head.as_str());
        assert_eq!(
            c["commit"],
            f.git(&["rev-parse", "HEAD"]).as_str(),
            "{transport}"
        );
        assert_eq!(c["short"], &f.git(&["rev-parse", "HEAD"])[..12]);
        assert_eq!(
            c["counts"],
            json!({"files": 2, "additions": 3, "deletions": 0})
        );
        assert_eq!(
            c["review"], "Commit 2 staged file(s) to work: Edit the readme",
            "{transport}"
        );
        assert_eq!(c["plan"]["change"], json!([".git/refs/heads/work"]));
        assert_eq!(
            f.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"]),
            format!("{NAME} <{EMAIL}>|{NAME} <{EMAIL}>|Edit the readme"),
            "{transport}: the user's identity, never the repository's planted one"
        );
        assert_eq!(f.git(&["log", "-1", "--format=%b"]), "And add notes.");
        assert_eq!(f.git(&["rev-list", "--count", "HEAD"]), "2");
        assert!(f.status().is_empty(), "{transport}: {:?}", f.status());

        // The same key again replays: no second commit.
        let again = ok(
            &mut via,
            &f,
            "repo.commit",
            json!({"message": "Edit the readme\n\nAnd add notes.", "idempotency_key": "k1"}),
        );
        assert_eq!(
            (again["replayed"].clone(), again["commit"].clone()),
            (json!(true), c["commit"].clone())
        );
        assert_eq!(f.git(&["rev-list", "--count", "HEAD"]), "2");

        let back = ok(&mut via, &f, "repo.switch", json!({"branch": "main"}));
        assert_eq!(back["previous"], "work");
        assert_eq!(back["commit"], main_head.as_str());
        assert_eq!(
            plan_paths(&back),
            [".git/HEAD", ".git/index", "README.md", "notes.txt"],
            "{transport}: {back}"
        );
        assert_eq!(back["plan"]["delete"], json!(["notes.txt"]));
        assert_eq!(f.git(&["symbolic-ref", "--short", "HEAD"]), "main");
        assert_eq!(
            std::fs::read_to_string(f.dir().join("README.md")).unwrap(),
            "# scratch\n"
        );
        assert!(!f.dir().join("notes.txt").exists());
        assert!(f.status().is_empty(), "{transport}: {:?}", f.status());
        assert_eq!(f.git(&["rev-parse", "work"]), c["commit"].as_str().unwrap());

        // A branch made without switching.
        let b = ok(
            &mut via,
            &f,
            "repo.branch.create",
            json!({"name": "topic/one", "from": "work"}),
        );
        assert_eq!(b["commit"], c["commit"]);
        assert_eq!(
            f.git(&["rev-parse", "topic/one"]),
            c["commit"].as_str().unwrap()
        );
        assert_eq!(
            via.call(&f, "repo.branch.create", json!({"name": "work"})),
            Err("conflict".to_string())
        );
        drop(via);

        // The audit log names every applied write with its transport, and its paths are the
        // answers' plans.
        let applied: Vec<Value> = f
            .audit()
            .into_iter()
            .filter(|r| r["phase"] == "intent")
            .collect();
        let caps: Vec<&str> = applied
            .iter()
            .map(|r| r["capability"].as_str().unwrap())
            .collect();
        assert_eq!(
            caps,
            [
                "repo.switch",
                "repo.stage",
                "repo.unstage",
                "repo.stage",
                "repo.commit",
                "repo.switch",
                "repo.branch.create"
            ],
            "{transport}"
        );
        assert!(applied.iter().all(|r| r["transport"] == transport));
        let mut commit_paths: Vec<String> = applied[4]["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        commit_paths.sort();
        assert_eq!(commit_paths, plan_paths(&c));
        let mut switch_paths: Vec<String> = applied[5]["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        switch_paths.sort();
        assert_eq!(switch_paths, plan_paths(&back));
        let outcomes = f
            .audit()
            .iter()
            .filter(|r| r["phase"] == "outcome" && r["outcome"] == "applied")
            .count();
        assert_eq!(outcomes, applied.len());
        let v = support::run_in(f.dir(), &["audit", "verify"]);
        assert!(v.status.success(), "{}", support::stderr(&v));

        assert!(
            f.hooks_ran().is_empty(),
            "{transport}: hooks ran: {:?}",
            f.hooks_ran()
        );
    }
}

fn count_objects(dir: &Path) -> usize {
    fn walk(d: &Path) -> usize {
        std::fs::read_dir(d)
            .map(|rd| {
                rd.flatten()
                    .map(|e| {
                        if e.path().is_dir() {
                            walk(&e.path())
                        } else {
                            1
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    walk(&dir.join(".git/objects"))
}

/// Every file of the working tree and `.git` (but the store's state), with its bytes.
fn everything(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if rel == ".seneschal" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_switch_that_would_lose_work_refuses_naming_the_files_and_changes_nothing() {
    let f = fixture();
    let mut via = Via::Cli;
    // main gains carry.txt; `other`, from there, changes README.md and adds new.txt.
    let plain = |args: &[&str]| {
        let mut all = vec!["-c", "core.hooksPath=/dev/null"];
        all.extend_from_slice(args);
        support::git(f.dir(), &all);
    };
    std::fs::write(f.dir().join("carry.txt"), "tracked\n").unwrap();
    plain(&["add", "carry.txt"]);
    plain(&["commit", "-q", "-m", "carry"]);
    plain(&["switch", "-q", "-c", "other"]);
    std::fs::write(f.dir().join("README.md"), "# other\n").unwrap();
    std::fs::write(f.dir().join("new.txt"), "from other\n").unwrap();
    plain(&["add", "-A"]);
    plain(&["commit", "-q", "-m", "other"]);
    plain(&["switch", "-q", "main"]);

    // An uncommitted change to a file the switch rewrites.
    std::fs::write(f.dir().join("README.md"), "# local work\n").unwrap();
    let before = everything(f.dir());
    let o = cli_raw(&f, "repo.switch", json!({"branch": "other"}));
    let err = support::stderr(&o);
    assert!(err.starts_with("error[conflict]"), "{err}");
    assert!(err.contains("README.md (uncommitted changes)"), "{err}");
    assert_eq!(
        everything(f.dir()),
        before,
        "a refused switch changed nothing"
    );

    // A staged change refuses too.
    plain(&["add", "README.md"]);
    let before = everything(f.dir());
    assert_eq!(
        via.call(&f, "repo.switch", json!({"branch": "other"})),
        Err("conflict".to_string())
    );
    assert_eq!(everything(f.dir()), before);
    plain(&["reset", "-q", "--hard"]);

    // An untracked file where the branch has one.
    std::fs::write(f.dir().join("new.txt"), "untracked here\n").unwrap();
    let before = everything(f.dir());
    let o = cli_raw(&f, "repo.switch", json!({"branch": "other"}));
    let err = support::stderr(&o);
    assert!(
        err.contains("new.txt (an untracked file would be overwritten)"),
        "{err}"
    );
    assert_eq!(everything(f.dir()), before);
    std::fs::remove_file(f.dir().join("new.txt")).unwrap();

    // A local change to a file the switch does not touch is carried over.
    std::fs::write(f.dir().join("carry.txt"), "changed locally\n").unwrap();
    let a = ok(&mut via, &f, "repo.switch", json!({"branch": "other"}));
    assert_eq!(a["carried"], json!(["carry.txt"]), "{a}");
    assert_eq!(f.git(&["symbolic-ref", "--short", "HEAD"]), "other");
    assert_eq!(
        std::fs::read_to_string(f.dir().join("carry.txt")).unwrap(),
        "changed locally\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.dir().join("README.md")).unwrap(),
        "# other\n"
    );
    assert_eq!(f.status(), [" M carry.txt"]);

    // A missing branch.
    assert_eq!(
        via.call(&f, "repo.switch", json!({"branch": "nope"})),
        Err("not_found".to_string())
    );
    assert!(f.hooks_ran().is_empty(), "{:?}", f.hooks_ran());
}

fn cli_raw(f: &Fixture, id: &str, input: Value) -> std::process::Output {
    let mut cmd = Command::new(support::bin());
    cmd.args(["call", id, "--yes", "--input", &input.to_string()])
        .current_dir(f.dir())
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL");
    for (k, v) in f.env() {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn restore_discards_a_change_and_secrets_are_never_staged() {
    let f = fixture();
    let mut via = Via::Cli;
    std::fs::write(f.dir().join("README.md"), "# scribbled over\n").unwrap();
    let a = ok(
        &mut via,
        &f,
        "repo.restore",
        json!({"paths": ["README.md"], "dry_run": true}),
    );
    assert_eq!(a["restored"], json!(["README.md"]));
    assert_eq!(
        std::fs::read_to_string(f.dir().join("README.md")).unwrap(),
        "# scribbled over\n",
        "a dry run changes nothing"
    );
    let a = ok(&mut via, &f, "repo.restore", json!({"paths": ["."]}));
    assert_eq!(a["restored"], json!(["README.md"]), "{a}");
    assert_eq!(a["source"], "index");
    assert_eq!(
        std::fs::read_to_string(f.dir().join("README.md")).unwrap(),
        "# scratch\n"
    );
    assert!(f.status().is_empty(), "{:?}", f.status());
    let a = ok(
        &mut via,
        &f,
        "repo.restore",
        json!({"paths": ["README.md"]}),
    );
    assert_eq!(
        (a["restored"].clone(), a["unchanged"].clone()),
        (json!([]), json!(["README.md"]))
    );
    assert_eq!(a["applied"], false);

    // Staging a secret-bearing file, by name or inside a folder, or a private key block.
    std::fs::write(f.dir().join(".env"), "TOKEN=1\n").unwrap();
    let index = std::fs::read(f.dir().join(".git/index")).unwrap();
    assert_eq!(
        via.call(&f, "repo.stage", json!({"paths": [".env"]})),
        Err("refused".to_string())
    );
    assert_eq!(
        via.call(&f, "repo.stage", json!({"paths": ["."]})),
        Err("refused".to_string())
    );
    std::fs::remove_file(f.dir().join(".env")).unwrap();
    std::fs::write(
        f.dir().join("deploy.txt"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    let o = cli_raw(&f, "repo.stage", json!({"paths": ["deploy.txt"]}));
    assert!(
        support::stderr(&o).starts_with("error[refused]"),
        "{}",
        support::stderr(&o)
    );
    assert_eq!(std::fs::read(f.dir().join(".git/index")).unwrap(), index);
    assert_eq!(
        via.call(&f, "repo.stage", json!({"paths": [".git/config"]})),
        Err("refused".to_string())
    );
    assert_eq!(
        via.call(&f, "repo.commit", json!({"message": "nothing"})),
        Err("invalid_input".to_string())
    );
    assert_eq!(
        via.call(&f, "repo.commit", json!({"message": "  \n"})),
        Err("invalid_input".to_string())
    );
    assert_eq!(f.git(&["rev-list", "--count", "HEAD"]), "1");
}

#[test]
fn no_identity_refuses_the_commit_saying_how_to_set_one() {
    let f = fixture();
    std::fs::remove_file(f.home.path().join(".gitconfig")).unwrap();
    std::fs::write(f.dir().join("README.md"), "# edited\n").unwrap();
    let mut via = Via::Cli;
    ok(&mut via, &f, "repo.stage", json!({"paths": ["README.md"]}));
    let o = cli_raw(&f, "repo.commit", json!({"message": "who am I"}));
    let err = support::stderr(&o);
    assert!(err.starts_with("error[refused]"), "{err}");
    assert!(err.contains("user.name"), "{err}");
    assert_eq!(f.git(&["rev-list", "--count", "HEAD"]), "1");
}

#[test]
fn a_keyed_commit_retried_after_kill_9_applies_once() {
    let f = fixture();
    let mut via = Via::Cli;
    for round in 0..12u64 {
        let count: u64 = f.git(&["rev-list", "--count", "HEAD"]).parse().unwrap();
        std::fs::write(
            f.dir().join("README.md"),
            format!("# round {round}\n{}\n", "line\n".repeat(200)),
        )
        .unwrap();
        ok(&mut via, &f, "repo.stage", json!({"paths": ["README.md"]}));
        let input = json!({"message": format!("Round {round}"), "idempotency_key": format!("round-{round}")});
        let mut cmd = Command::new(support::bin());
        cmd.args([
            "call",
            "repo.commit",
            "--yes",
            "--input",
            &input.to_string(),
        ])
        .current_dir(f.dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        for (k, v) in f.env() {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5 + (round * 11) % 60));
        let _ = child.kill();
        let _ = child.wait();
        // The retry with the same key answers once, whether or not the first call landed.
        let a = ok(&mut via, &f, "repo.commit", input.clone());
        let head = f.git(&["rev-parse", "HEAD"]);
        assert_eq!(a["commit"], head.as_str(), "round {round}: {a}");
        assert_eq!(
            f.git(&["rev-list", "--count", "HEAD"])
                .parse::<u64>()
                .unwrap(),
            count + 1,
            "round {round}: exactly one commit"
        );
        assert_eq!(
            f.git(&["log", "-1", "--format=%s"]),
            format!("Round {round}")
        );
        let v = support::run_in(f.dir(), &["audit", "verify"]);
        assert!(v.status.success(), "round {round}: {}", support::stderr(&v));
        assert!(f.status().is_empty(), "round {round}: {:?}", f.status());
    }
    assert!(f.hooks_ran().is_empty(), "{:?}", f.hooks_ran());
}

/// A file named like a commit does not make the switch fail: the trees are compared by their
/// commits alone (`git diff-tree A B --`), never read as paths (found by schemathesis, which
/// wrote such a file through files.write).
#[test]
fn a_file_named_like_the_commit_does_not_break_a_switch() {
    let f = fixture();
    let head = f.git(&["rev-parse", "HEAD"]);
    f.git(&["branch", "side"]);
    std::fs::write(f.dir().join(&head), "a file named like the commit\n").unwrap();
    std::fs::write(f.dir().join("side"), "and one named like the branch\n").unwrap();
    let mut via = Via::Cli;
    let switched = ok(&mut via, &f, "repo.switch", json!({"branch": "side"}));
    assert_eq!(switched["previous"], "main", "{switched}");
    assert_eq!(f.git(&["symbolic-ref", "--short", "HEAD"]), "side");
}

/// A path no file system holds (a name over 255 bytes) is bad input, answered 400
/// `invalid_input` at its field, not a fault (found by schemathesis through repo.stage).
#[test]
fn a_path_name_over_255_bytes_is_invalid_input_not_a_fault() {
    let f = fixture();
    let s = Serve::start(f.dir(), &[]);
    let long = "n".repeat(300);
    for route in ["/api/v1/repo/stage", "/api/v1/repo/unstage"] {
        let (status, problem) = s.json("POST", route, Some(&json!({"paths": [long]})));
        assert_eq!(status, 400, "{route}: {problem}");
        assert_eq!(problem["code"], "invalid_input", "{route}: {problem}");
        assert_eq!(problem["pointer"], "/paths/0", "{route}: {problem}");
    }
    s.finish();
}

/// Git keeps no NUL byte in a commit message (`commit-tree` fails on one): a message holding
/// one is `invalid_input` at `/message`, naming where, not a fault, and nothing is committed
/// (found by schemathesis through POST /api/v1/repo/commit).
#[test]
fn a_nul_byte_in_a_commit_message_is_invalid_input_not_a_fault() {
    let f = fixture();
    let head = f.git(&["rev-parse", "HEAD"]);
    let s = f.serve();
    let input = json!({"message": "subject\u{0}body", "allow_empty": true});
    let problem = s
        .request(
            "POST",
            "/api/v1/repo/commit",
            &[("Content-Type", "application/json")],
            input.to_string().as_bytes(),
        )
        .problem(400, "invalid_input");
    assert_eq!(problem["pointer"], "/message", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("NUL byte (character 7)"),
        "{problem}"
    );
    s.finish();
    let out = cli_raw(&f, "repo.commit", input);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[invalid_input]"), "{stderr}");
    assert_eq!(f.git(&["rev-parse", "HEAD"]), head, "nothing was committed");
}

/// A revision is not a branch name: `repo.switch` to `main~1` (or `main^`, `main@{0}`,
/// `x^{commit}`) once set HEAD to `refs/heads/main~1`, a ref git ignores. Every name passes
/// git's ref name rules before it reaches git, for an existing branch as for a new one:
/// `invalid_input` at the field, naming why, and HEAD and the refs stay as they were.
#[test]
fn a_revision_is_not_a_branch_name() {
    let f = fixture();
    std::fs::write(f.dir().join("second.txt"), "two\n").unwrap();
    f.git(&["add", "second.txt"]);
    f.git(&["commit", "-q", "-m", "second"]);
    f.git(&["branch", "x"]);
    let refs = || f.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
    let (head, before) = (f.git(&["rev-parse", "HEAD"]), refs());
    let s = Serve::start(f.dir(), &[]);
    let refused = |route: &str, input: Value, field: &str| {
        let (status, problem) = s.json("POST", route, Some(&input));
        assert_eq!(status, 400, "{route} {input}: {problem}");
        assert_eq!(problem["code"], "invalid_input", "{input}: {problem}");
        assert_eq!(problem["pointer"], field, "{input}: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .is_some_and(|d| d.contains("is not a branch name: ")),
            "{input}: {problem}"
        );
    };
    for name in [
        "main~1",
        "main^",
        "main@{0}",
        "x^{commit}",
        "HEAD",
        "@",
        "a..b",
    ] {
        refused("/api/v1/repo/switch", json!({"branch": name}), "/branch");
        refused(
            "/api/v1/repo/switch",
            json!({"branch": name, "create": true}),
            "/branch",
        );
        refused("/api/v1/repo/branch/create", json!({"name": name}), "/name");
    }
    s.finish();
    assert_eq!(f.git(&["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(f.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(refs(), before, "no ref was made or moved");
    // A branch name git takes is still one.
    let mut via = Via::Cli;
    let switched = ok(&mut via, &f, "repo.switch", json!({"branch": "x"}));
    assert_eq!(switched["branch"], "x", "{switched}");
}

/// seneschal's own state is never staged, even when the repository's copy of
/// `.seneschal/.gitignore` no longer hides it: staging the whole tree leaves the audit log,
/// the lock and the keys out of the index.
#[test]
fn staging_everything_never_stages_the_state_folder() {
    let f = fixture();
    let mut via = Via::Cli;
    std::fs::write(f.dir().join("notes.txt"), "a note\n").unwrap();
    // A first write makes the state folder; then its ignore file is emptied.
    ok(&mut via, &f, "repo.stage", json!({"paths": ["notes.txt"]}));
    assert!(f.dir().join(".seneschal/audit.jsonl").exists());
    std::fs::write(f.dir().join(".seneschal/.gitignore"), "").unwrap();
    std::fs::write(f.dir().join("more.txt"), "more\n").unwrap();
    ok(&mut via, &f, "repo.stage", json!({"paths": ["."]}));
    let staged = f.git(&["diff", "--cached", "--name-only"]);
    assert!(staged.contains("more.txt"), "{staged}");
    assert!(!staged.contains(".seneschal"), "{staged}");
}

#[test]
fn staging_a_path_git_refuses_names_it_and_stages_nothing() {
    // The paths go to `git add` as given; when git refuses one (nothing matches it, or
    // .gitignore ignores it) the write takes the long way, which names the path, and the
    // other paths git may have added to its copy of the index are not written.
    let f = fixture();
    std::fs::write(f.dir().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(f.dir().join("fine.txt"), "fine\n").unwrap();
    std::fs::write(f.dir().join("noise.log"), "noise\n").unwrap();
    let index = std::fs::read(f.dir().join(".git/index")).unwrap();
    for (paths, named) in [
        (json!(["fine.txt", "noise.log"]), "noise.log"),
        (json!(["fine.txt", "absent.txt"]), "absent.txt"),
    ] {
        let o = cli_raw(&f, "repo.stage", json!({ "paths": paths }));
        let err = support::stderr(&o);
        assert!(err.starts_with("error[not_found]"), "{err}");
        assert!(
            err.contains(&format!("`{named}` matches no file to stage")),
            "{err}"
        );
        assert_eq!(
            std::fs::read(f.dir().join(".git/index")).unwrap(),
            index,
            "{paths}: nothing is staged"
        );
    }
    // A tracked file the working tree lost is staged as deleted, beside a new one.
    std::fs::remove_file(f.dir().join("README.md")).unwrap();
    let a = ok(
        &mut Via::Cli,
        &f,
        "repo.stage",
        json!({"paths": ["README.md", "fine.txt"]}),
    );
    assert_eq!(
        a["staged"],
        json!([
            {"path": "README.md", "change": "deleted"},
            {"path": "fine.txt", "change": "added"}
        ]),
        "{a}"
    );
    assert_eq!(f.status(), ["D  README.md", "A  fine.txt", "?? .gitignore"]);
}
