//! The file writes (`files.write`, `files.edit`, `files.move`, `files.delete`) driven through
//! the built binary: the same sequence over the CLI (`call --yes`), MCP stdio and HTTP with the
//! files on disk and the audit log checked against every answer; links never followed; `.git/`,
//! `.seneschal/`, secret names, secret content, folders, FIFOs and hard links refused with
//! nothing written; CRLF, the executable bit and the final newline kept; stale digests and
//! ambiguous edits; and a keyed edit killed mid-call applied once by its retry.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support;
use crate::support::http::Serve;
use crate::support::mcp::Mcp;

const STALE: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// One transport of one repository.
enum Via {
    Cli,
    Mcp(Mcp),
    Http(Serve),
}

impl Via {
    fn open(name: &str, dir: &Path) -> Via {
        match name {
            "cli" => Via::Cli,
            "mcp" => {
                let mut m = Mcp::start_with(dir, &[], &[]);
                m.initialize("2025-11-25");
                Via::Mcp(m)
            }
            _ => Via::Http(Serve::start(dir, &[])),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Via::Cli => "cli",
            Via::Mcp(_) => "mcp",
            Via::Http(_) => "http",
        }
    }

    /// The answer, or the error as `{code, text}` (`text`: everything the transport said).
    fn call(&mut self, dir: &Path, id: &str, input: &Value) -> Result<Value, Value> {
        match self {
            Via::Cli => {
                let o = support::call(dir, id, input);
                if o.status.success() {
                    return Ok(support::json(&o));
                }
                let err = support::stderr(&o);
                let code = err
                    .strip_prefix("error[")
                    .and_then(|r| r.split(']').next())
                    .unwrap_or("?")
                    .to_string();
                Err(json!({ "code": code, "text": err }))
            }
            Via::Mcp(m) => {
                let r = m.request(
                    "tools/call",
                    json!({"name": id.replace('.', "_"), "arguments": input}),
                );
                let result = &r["result"];
                if result["isError"] == false {
                    return Ok(result["structuredContent"].clone());
                }
                let e = &result["_meta"]["seneschal/error"];
                Err(json!({ "code": e["code"], "text": r.to_string() }))
            }
            Via::Http(s) => {
                let path = format!("/api/v1/{}", id.replace('.', "/"));
                let (status, body) = s.json("POST", &path, Some(input));
                if status == 200 {
                    return Ok(body);
                }
                Err(json!({ "code": body["code"], "text": body.to_string() }))
            }
        }
    }

    fn ok(&mut self, dir: &Path, id: &str, input: Value) -> Value {
        let name = self.name();
        self.call(dir, id, &input)
            .unwrap_or_else(|e| panic!("{name} {id} {input}: {e}"))
    }

    /// The error's text, after checking its code.
    fn err(&mut self, dir: &Path, id: &str, input: Value, code: &str) -> String {
        let name = self.name();
        match self.call(dir, id, &input) {
            Ok(a) => panic!("{name} {id} {input}: expected {code}, answered {a}"),
            Err(e) => {
                assert_eq!(e["code"], code, "{name} {id} {input}: {e}");
                e["text"].as_str().unwrap_or_default().to_string()
            }
        }
    }
}

/// Every file outside `.git/` and `.seneschal/` with its bytes (links as their target text).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".seneschal" {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(format!("{rel} ->"), t.to_string_lossy().as_bytes().to_vec());
            } else if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &p, out);
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap());
            } else {
                out.insert(format!("{rel} (special)"), Vec::new());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn audit(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join(".seneschal/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn verify(dir: &Path) {
    let v = support::run_in(dir, &["audit", "verify"]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

/// The intent of an applied write of `capability` over `transport` whose target `path` ends
/// with digest `after`, and its `applied` outcome, are in the log.
fn audited(records: &[Value], capability: &str, transport: &str, path: &str, after: &str) {
    let intent = records
        .iter()
        .find(|r| {
            r["phase"] == "intent"
                && r["capability"] == capability
                && r["transport"] == transport
                && r["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["path"] == path && t["after"] == after)
        })
        .unwrap_or_else(|| panic!("no intent of {capability} {path} -> {after} over {transport}"));
    let seq = intent["seq"].as_u64().unwrap();
    assert!(
        records.iter().any(|r| r["phase"] == "outcome"
            && r["intent"] == seq
            && r["outcome"] == "applied"
            && r["approved_by"].is_string()),
        "the intent {seq} of {capability} has an applied, approved outcome"
    );
}

#[test]
fn write_edit_move_delete_over_every_transport_agree_with_the_disk_and_the_audit_log() {
    for transport in ["cli", "mcp", "http"] {
        let d = support::scratch_repo();
        let dir = d.path();
        let mut via = Via::open(transport, dir);
        let text = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";

        // A new file in a new folder.
        let w = via.ok(
            dir,
            "files.write",
            json!({"path": "notes/new.txt", "content": text}),
        );
        let on_disk = std::fs::read(dir.join("notes/new.txt")).unwrap();
        assert_eq!(on_disk, text.as_bytes(), "{transport}");
        assert_eq!(
            (&w["applied"], &w["dry_run"], &w["replayed"]),
            (&json!(true), &json!(false), &json!(false))
        );
        assert_eq!(w["digest"], digest_of(&on_disk), "{transport}");
        assert_eq!(w["plan"]["create"], json!(["notes/new.txt"]));
        assert_eq!(
            w["plan"]["counts"],
            json!({"create": 1, "change": 0, "delete": 0})
        );
        assert_eq!(w["lines"], json!({"added": 8, "removed": 0}));
        assert!(
            w["diff"]
                .as_str()
                .unwrap()
                .starts_with("--- /dev/null\n+++ b/notes/new.txt\n@@ -0,0 +1,8 @@\n+one\n"),
            "{w}"
        );
        assert_eq!(w["review"], "Write notes/new.txt (new file): +8 -0 lines");

        // The edit's dry run: the diff, nothing changed.
        let edit = json!({"path": "notes/new.txt", "expected_digest": w["digest"],
            "edits": [{"old": "four\n", "new": "FOUR\n"}, {"old": "eight", "new": "EIGHT"}]});
        let mut dry_input = edit.clone();
        dry_input["dry_run"] = json!(true);
        let dry = via.ok(dir, "files.edit", dry_input);
        let expected_diff = "--- a/notes/new.txt\n+++ b/notes/new.txt\n@@ -1,8 +1,8 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n seven\n-eight\n+EIGHT\n";
        assert_eq!(dry["diff"], expected_diff, "{transport}: {dry}");
        assert_eq!(
            (&dry["applied"], &dry["dry_run"]),
            (&json!(false), &json!(true))
        );
        assert_eq!(
            dry["review"],
            "Edit notes/new.txt: 2 replacement(s), +2 -2 lines"
        );
        assert_eq!(std::fs::read(dir.join("notes/new.txt")).unwrap(), on_disk);
        // Applied: the same diff, the new bytes on disk.
        let e = via.ok(dir, "files.edit", edit);
        let edited = std::fs::read(dir.join("notes/new.txt")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&edited),
            text.replace("four", "FOUR").replace("eight", "EIGHT")
        );
        assert_eq!(e["diff"], expected_diff);
        assert_eq!(e["digest"], digest_of(&edited));
        assert_eq!(
            e["digest"], dry["digest"],
            "the dry run named the digest it writes"
        );
        assert_eq!(e["plan"]["change"], json!(["notes/new.txt"]));

        // A move into another new folder: the emptied folder goes.
        let m = via.ok(
            dir,
            "files.move",
            json!({"from": "notes/new.txt", "to": "docs/moved/new.txt", "expected_digest": e["digest"]}),
        );
        assert!(
            !dir.join("notes").exists(),
            "{transport}: the emptied folder is removed"
        );
        assert_eq!(
            std::fs::read(dir.join("docs/moved/new.txt")).unwrap(),
            edited
        );
        assert_eq!(
            (&m["from"], &m["path"], &m["digest"]),
            (
                &json!("notes/new.txt"),
                &json!("docs/moved/new.txt"),
                &e["digest"]
            )
        );
        assert_eq!(m["plan"]["create"], json!(["docs/moved/new.txt"]));
        assert_eq!(m["plan"]["delete"], json!(["notes/new.txt"]));
        assert_eq!(m["review"], "Move notes/new.txt to docs/moved/new.txt");

        // A delete: the file and its emptied folders go; the diff shows the removed lines.
        let del = via.ok(
            dir,
            "files.delete",
            json!({"path": "docs/moved/new.txt", "expected_digest": m["digest"]}),
        );
        assert!(
            !dir.join("docs").exists(),
            "{transport}: the emptied folders are removed"
        );
        assert_eq!(del["digest"], Value::Null);
        assert_eq!(del["lines"], json!({"added": 0, "removed": 8}));
        let diff = del["diff"].as_str().unwrap();
        assert!(
            diff.starts_with("--- a/docs/moved/new.txt\n+++ /dev/null\n@@ -1,8 +0,0 @@\n-one\n"),
            "{diff}"
        );
        assert!(
            diff.contains("-FOUR\n") && diff.ends_with("-EIGHT\n"),
            "{diff}"
        );
        assert_eq!(del["review"], "Delete docs/moved/new.txt: -8 lines");
        assert_eq!(
            tree(dir).keys().collect::<Vec<_>>(),
            ["README.md"],
            "{transport}: only the scratch README is left"
        );

        drop(via);
        // The log agrees with every answer: an intent with the digests written, then applied.
        let records = audit(dir);
        // The answers carry the digest of the text as shown; the log, its keyed digest.
        assert_eq!(w["digest"], digest_of(&on_disk));
        assert_eq!(m["digest"], digest_of(&edited));
        audited(
            &records,
            "files.write",
            transport,
            "notes/new.txt",
            &support::audit_digest(dir, &on_disk),
        );
        audited(
            &records,
            "files.edit",
            transport,
            "notes/new.txt",
            &support::audit_digest(dir, &edited),
        );
        audited(
            &records,
            "files.move",
            transport,
            "docs/moved/new.txt",
            &support::audit_digest(dir, &edited),
        );
        audited(&records, "files.move", transport, "notes/new.txt", "absent");
        audited(
            &records,
            "files.delete",
            transport,
            "docs/moved/new.txt",
            "absent",
        );
        let intents = records.iter().filter(|r| r["phase"] == "intent").count();
        assert_eq!(
            intents, 4,
            "{transport}: the dry run is not an attempt: {records:?}"
        );
        // `audit.list` serves the same records.
        let listed = support::json(&support::run_in(
            dir,
            &["call", "audit.list", "--input", "{}"],
        ));
        assert_eq!(listed["total"], records.len(), "{listed}");
        verify(dir);
    }
}

#[test]
fn links_are_never_followed_and_nothing_outside_changes() {
    let d = support::scratch_repo();
    let dir = d.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
    link(&outside.path().join("victim.txt"), "out.txt");
    link(outside.path(), "outdir");
    link(Path::new("README.md"), "inside.md");
    std::fs::create_dir(dir.join("real")).unwrap();
    link(Path::new("real"), "real-link");
    let victim = digest_of(b"outside\n");
    let readme = digest_of(b"# scratch\n");
    let before = tree(dir);
    let mut via = Via::open("cli", dir);
    let cases = [
        // The link as the target.
        ("files.write", json!({"path": "out.txt", "content": "x\n"})),
        (
            "files.write",
            json!({"path": "out.txt", "content": "x\n", "expected_digest": victim}),
        ),
        (
            "files.edit",
            json!({"path": "out.txt", "edits": [{"old": "outside", "new": "x"}]}),
        ),
        ("files.delete", json!({"path": "out.txt"})),
        ("files.move", json!({"from": "out.txt", "to": "mine.txt"})),
        // A link inside the repository is not followed either.
        (
            "files.write",
            json!({"path": "inside.md", "content": "x\n", "expected_digest": readme}),
        ),
        (
            "files.edit",
            json!({"path": "inside.md", "edits": [{"old": "scratch", "new": "x"}]}),
        ),
        ("files.delete", json!({"path": "inside.md"})),
        // The link as a folder on the way.
        (
            "files.write",
            json!({"path": "outdir/new.txt", "content": "x\n"}),
        ),
        (
            "files.write",
            json!({"path": "outdir/deeper/new.txt", "content": "x\n"}),
        ),
        (
            "files.write",
            json!({"path": "outdir/victim.txt", "content": "x\n", "expected_digest": victim}),
        ),
        (
            "files.write",
            json!({"path": "real-link/new.txt", "content": "x\n"}),
        ),
        (
            "files.move",
            json!({"from": "README.md", "to": "outdir/README.md"}),
        ),
        ("files.delete", json!({"path": "outdir/victim.txt"})),
    ];
    for (id, input) in cases {
        let text = via.err(dir, id, input.clone(), "refused");
        assert!(text.contains("symlink_escape"), "{id} {input}: {text}");
    }
    assert_eq!(tree(dir), before, "nothing in the repository changed");
    let outside_now: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(outside_now, ["victim.txt"], "nothing was created outside");
    assert_eq!(
        std::fs::read(outside.path().join("victim.txt")).unwrap(),
        b"outside\n"
    );
    let records = audit(dir);
    assert!(
        records
            .iter()
            .all(|r| r["phase"] == "outcome" && r["outcome"] == "refused"),
        "{records:?}"
    );
    verify(dir);
}

#[test]
fn git_state_secret_and_special_files_are_refused_and_nothing_is_written() {
    let d = support::scratch_repo();
    let dir = d.path();
    std::fs::write(dir.join(".env"), "TOKEN=1\n").unwrap();
    std::fs::write(dir.join("shared.txt"), "two names\n").unwrap();
    std::fs::hard_link(dir.join("shared.txt"), dir.join("second-name.txt")).unwrap();
    std::fs::create_dir(dir.join("folder")).unwrap();
    std::fs::write(dir.join("folder/kept.txt"), "kept\n").unwrap();
    let fifo = std::ffi::CString::new(dir.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // One write first, so the state folder exists to be aimed at.
    support::call(
        dir,
        "files.write",
        json!({"path": "first.txt", "content": "1\n"}),
    );
    let git_config = std::fs::read(dir.join(".git/config")).unwrap();
    let log_before = std::fs::read(dir.join(".seneschal/audit.jsonl")).unwrap();
    let before = tree(dir);
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n";
    let mut via = Via::open("mcp", dir);
    let cases = [
        (
            "files.write",
            json!({"path": ".git/config", "content": "[core]\n"}),
            "git_dir",
        ),
        (
            "files.write",
            json!({"path": ".GIT/hooks/pre-commit", "content": "x\n"}),
            "git_dir",
        ),
        (
            "files.write",
            json!({"path": "sub/.Git/config", "content": "x\n"}),
            "git_dir",
        ),
        (
            "files.edit",
            json!({"path": ".git/config", "edits": [{"old": "[core]", "new": "[x]"}]}),
            "git_dir",
        ),
        ("files.delete", json!({"path": ".git/HEAD"}), "git_dir"),
        (
            "files.move",
            json!({"from": "first.txt", "to": ".git/first.txt"}),
            "git_dir",
        ),
        (
            "files.write",
            json!({"path": ".seneschal/audit.jsonl", "content": "{}\n"}),
            "state_dir",
        ),
        (
            "files.write",
            json!({"path": ".Seneschal/lock", "content": "x\n"}),
            "state_dir",
        ),
        (
            "files.delete",
            json!({"path": ".seneschal/audit.jsonl"}),
            "state_dir",
        ),
        (
            "files.move",
            json!({"from": ".seneschal/audit.jsonl", "to": "log.jsonl"}),
            "state_dir",
        ),
        (
            "files.write",
            json!({"path": ".env", "content": "TOKEN=2\n"}),
            "secret_file",
        ),
        (
            "files.write",
            json!({"path": "tls/server.pem", "content": "x\n"}),
            "secret_file",
        ),
        (
            "files.write",
            json!({"path": "id_rsa", "content": "x\n"}),
            "secret_file",
        ),
        (
            "files.edit",
            json!({"path": ".env", "edits": [{"old": "1", "new": "2"}]}),
            "secret_file",
        ),
        (
            "files.move",
            json!({"from": ".env", "to": "env.txt"}),
            "secret_file",
        ),
        (
            "files.move",
            json!({"from": "first.txt", "to": "deploy/.env.production"}),
            "secret_file",
        ),
        ("files.delete", json!({"path": ".env"}), "secret_file"),
        (
            "files.write",
            json!({"path": "notes/key.txt", "content": key}),
            "secret_content",
        ),
        (
            "files.edit",
            json!({"path": "first.txt", "edits": [{"old": "1\n", "new": key}]}),
            "secret_content",
        ),
        (
            "files.write",
            json!({"path": "folder", "content": "x\n"}),
            "special_file",
        ),
        ("files.delete", json!({"path": "folder"}), "special_file"),
        (
            "files.move",
            json!({"from": "folder", "to": "other"}),
            "special_file",
        ),
        (
            "files.write",
            json!({"path": "pipe", "content": "x\n"}),
            "special_file",
        ),
        ("files.delete", json!({"path": "pipe"}), "special_file"),
        (
            "files.edit",
            json!({"path": "shared.txt", "edits": [{"old": "two", "new": "2"}]}),
            "hard_link",
        ),
        (
            "files.delete",
            json!({"path": "second-name.txt"}),
            "hard_link",
        ),
        (
            "files.write",
            json!({"path": "../outside.txt", "content": "x\n"}),
            "parent_dir",
        ),
        (
            "files.write",
            json!({"path": "/tmp/outside.txt", "content": "x\n"}),
            "absolute_path",
        ),
    ];
    for (id, input, rule) in &cases {
        let text = via.err(dir, id, input.clone(), "refused");
        assert!(text.contains(rule), "{id} {input}: {text}");
    }
    drop(via);
    assert_eq!(tree(dir), before, "no refusal changed a file");
    assert_eq!(std::fs::read(dir.join(".git/config")).unwrap(), git_config);
    let log = std::fs::read(dir.join(".seneschal/audit.jsonl")).unwrap();
    assert!(log.starts_with(&log_before), "the log only grew");
    let records = audit(dir);
    let refused = records
        .iter()
        .filter(|r| r["outcome"] == "refused" && r["transport"] == "mcp")
        .count();
    assert_eq!(refused, cases.len(), "every refusal is audited");
    // A binary file is not edited; content over 8 MiB (in bytes) is not written.
    std::fs::write(dir.join("blob.bin"), b"a\0b").unwrap();
    let o = support::call(
        dir,
        "files.edit",
        json!({"path": "blob.bin", "edits": [{"old": "a", "new": "c"}]}),
    );
    assert!(
        support::stderr(&o).starts_with("error[invalid_input]")
            && support::stderr(&o).contains("binary"),
        "{}",
        support::stderr(&o)
    );
    let big = json!({"path": "big.txt", "content": "é".repeat(4_200_000)}).to_string();
    let o = support::run_with_stdin(
        dir,
        &["call", "files.write", "--yes", "--input", "-"],
        big.as_bytes(),
    );
    assert!(
        support::stderr(&o).contains("size_cap"),
        "{}",
        support::stderr(&o)
    );
    assert!(!dir.join("big.txt").exists());
    verify(dir);
}

#[test]
fn crlf_the_executable_bit_and_the_final_newline_are_kept() {
    let d = support::scratch_repo();
    let dir = d.path();
    std::fs::write(dir.join("win.txt"), "alpha\r\nbeta\r\ngamma\r\n").unwrap();
    std::fs::write(dir.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mode = |p: &str| std::fs::metadata(dir.join(p)).unwrap().permissions().mode() & 0o777;
    let mut via = Via::open("http", dir);
    // An edit given with LF breaks matches a CRLF file and writes CRLF.
    let e = via.ok(dir, "files.edit", json!({"path": "win.txt", "edits": [{"old": "beta\ngamma\n", "new": "BETA\nGAMMA\ndelta\n"}]}));
    assert_eq!(
        std::fs::read(dir.join("win.txt")).unwrap(),
        b"alpha\r\nBETA\r\nGAMMA\r\ndelta\r\n"
    );
    assert_eq!(e["lines"], json!({"added": 3, "removed": 2}), "{e}");
    // A write of LF-only content over a CRLF file writes CRLF, with its final break.
    let w = via.ok(
        dir,
        "files.write",
        json!({"path": "win.txt", "content": "one\ntwo", "expected_digest": e["digest"]}),
    );
    let bytes = std::fs::read(dir.join("win.txt")).unwrap();
    assert_eq!(bytes, b"one\r\ntwo\r\n");
    assert_eq!(
        w["digest"],
        digest_of(&bytes),
        "the digest is of the bytes on disk"
    );
    // The executable bit survives an edit, a write and a move.
    let e = via.ok(
        dir,
        "files.edit",
        json!({"path": "run.sh", "edits": [{"old": "hi", "new": "hello"}]}),
    );
    assert_eq!(mode("run.sh"), 0o755);
    // A file that ended with a newline keeps one; one that did not, does not get one.
    let w = via.ok(
        dir,
        "files.write",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho bye", "expected_digest": e["digest"]}),
    );
    assert_eq!(
        std::fs::read(dir.join("run.sh")).unwrap(),
        b"#!/bin/sh\necho bye\n"
    );
    assert_eq!(mode("run.sh"), 0o755);
    via.ok(
        dir,
        "files.move",
        json!({"from": "run.sh", "to": "bin/run.sh", "expected_digest": w["digest"]}),
    );
    assert_eq!(mode("bin/run.sh"), 0o755);
    std::fs::write(dir.join("bare.txt"), "no newline").unwrap();
    let b = digest_of(b"no newline");
    via.ok(
        dir,
        "files.write",
        json!({"path": "bare.txt", "content": "still none", "expected_digest": b}),
    );
    assert_eq!(std::fs::read(dir.join("bare.txt")).unwrap(), b"still none");
    // A new file is written as given.
    via.ok(
        dir,
        "files.write",
        json!({"path": "new.txt", "content": "as given"}),
    );
    assert_eq!(std::fs::read(dir.join("new.txt")).unwrap(), b"as given");
    assert_eq!(mode("new.txt") & 0o111, 0, "a new file is not executable");
}

#[test]
fn stale_digests_conflict_and_failing_edits_name_the_edit_and_the_count() {
    let d = support::scratch_repo();
    let dir = d.path();
    std::fs::write(dir.join("a.txt"), "x = 1\ny = 1\nz = 2\n").unwrap();
    let now = digest_of(b"x = 1\ny = 1\nz = 2\n");
    let before = tree(dir);
    for transport in ["cli", "mcp", "http"] {
        let mut via = Via::open(transport, dir);
        // A replace without the digest, and with a stale one: conflict, the current digest said.
        for input in [
            json!({"path": "a.txt", "content": "new\n"}),
            json!({"path": "a.txt", "content": "new\n", "expected_digest": STALE}),
        ] {
            let text = via.err(dir, "files.write", input, "conflict");
            assert!(
                text.contains(&now),
                "{transport}: the conflict names the digest: {text}"
            );
        }
        // A digest for a file that does not exist.
        via.err(
            dir,
            "files.write",
            json!({"path": "none.txt", "content": "x", "expected_digest": now}),
            "conflict",
        );
        for (id, input) in [
            (
                "files.edit",
                json!({"path": "a.txt", "expected_digest": STALE, "edits": [{"old": "z", "new": "w"}]}),
            ),
            (
                "files.delete",
                json!({"path": "a.txt", "expected_digest": STALE}),
            ),
            (
                "files.move",
                json!({"from": "a.txt", "to": "b.txt", "expected_digest": STALE}),
            ),
        ] {
            let text = via.err(dir, id, input, "conflict");
            assert!(text.contains(&now), "{transport} {id}: {text}");
        }
        // A move onto an existing file.
        via.err(
            dir,
            "files.move",
            json!({"from": "a.txt", "to": "README.md"}),
            "conflict",
        );
        // Ambiguous: the second edit's `old` occurs twice once the first has run.
        let text = via.err(
            dir,
            "files.edit",
            json!({"path": "a.txt", "edits": [{"old": "z = 2", "new": "z = 1"}, {"old": "= 1", "new": "= 3"}]}),
            "invalid_input",
        );
        assert!(text.contains("/edits/1/old"), "{transport}: {text}");
        assert!(
            text.contains("edit 1") && text.contains("3 times"),
            "{transport}: {text}"
        );
        // No match.
        let text = via.err(
            dir,
            "files.edit",
            json!({"path": "a.txt", "edits": [{"old": "w = 9", "new": "x"}]}),
            "invalid_input",
        );
        assert!(
            text.contains("/edits/0/old") && text.contains("does not occur"),
            "{transport}: {text}"
        );
        assert!(
            text.contains("\"matches\":0") || text.contains("\"matches\": 0"),
            "{transport}: {text}"
        );
        // Missing files.
        via.err(
            dir,
            "files.edit",
            json!({"path": "none.txt", "edits": [{"old": "a", "new": "b"}]}),
            "not_found",
        );
        via.err(
            dir,
            "files.delete",
            json!({"path": "none.txt"}),
            "not_found",
        );
        via.err(
            dir,
            "files.move",
            json!({"from": "none.txt", "to": "b.txt"}),
            "not_found",
        );
    }
    assert_eq!(tree(dir), before, "no refusal changed a file");
    verify(dir);
}

#[test]
fn a_keyed_edit_killed_mid_call_is_applied_once_by_its_retry() {
    let d = support::scratch_repo();
    let dir = d.path();
    let n = 16;
    for i in 0..n {
        std::fs::write(dir.join(format!("f{i}.txt")), "line\n").unwrap();
    }
    // An edit that a second application would show: `line\n` still occurs once after it.
    let input = |i: usize| {
        json!({"path": format!("f{i}.txt"), "edits": [{"old": "line\n", "new": "line\nadded\n"}],
            "idempotency_key": format!("edit-{i}")})
    };
    // One unkeyed write to learn how long a call takes, so the kills land across its span.
    let t = Instant::now();
    let o = support::call(
        dir,
        "files.write",
        json!({"path": "warm.txt", "content": "w\n"}),
    );
    assert!(o.status.success(), "{}", support::stderr(&o));
    let span = t.elapsed().as_micros().max(2_000) as u64;
    for i in 0..n {
        let mut child = Command::new(support::bin())
            .args([
                "call",
                "files.edit",
                "--yes",
                "--input",
                &input(i).to_string(),
            ])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Spread over the call's span and a little past it, where the lock, the intent, the
        // rename and the outcome are.
        std::thread::sleep(Duration::from_micros(
            span / 3 + (i as u64 * span) / n as u64,
        ));
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut replayed = 0;
    for i in 0..n {
        let o = support::call(dir, "files.edit", input(i));
        assert!(o.status.success(), "edit-{i}: {}", support::stderr(&o));
        let a = support::json(&o);
        replayed += usize::from(a["replayed"] == true);
        let bytes = std::fs::read(dir.join(format!("f{i}.txt"))).unwrap();
        assert_eq!(bytes, b"line\nadded\n", "edit-{i} applied exactly once");
        assert_eq!(a["digest"], digest_of(&bytes), "edit-{i}: {a}");
        // A third call with the key replays, writing nothing.
        let again = support::json(&support::call(dir, "files.edit", input(i)));
        assert_eq!(again["replayed"], true, "edit-{i}: {again}");
        assert_eq!(std::fs::read(dir.join(format!("f{i}.txt"))).unwrap(), bytes);
    }
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(names, Vec::<String>::new(), "no temporary file is left");
    let records = audit(dir);
    let intents = records.iter().filter(|r| r["phase"] == "intent").count();
    let settled = records
        .iter()
        .filter(|r| r["phase"] == "outcome" && r["intent"].is_u64())
        .count();
    assert_eq!(intents, settled, "every intent has its outcome");
    eprintln!("{n} kills; {replayed} retries replayed the first outcome");
    verify(dir);
}
