//! Black-box tests of the repository writes over the command line: create, update and delete
//! with digests, dry-run plans, schema validation, confinement, idempotency keys, the audit
//! chain and `seneschal audit verify`, concurrent writers and kill -9 during writes.

use crate::support;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A scratch repository holding one ADR.
fn repo() -> tempfile::TempDir {
    support::adr_repo()
}

/// `seneschal call ID --input JSON --repo DIR`: (exit code, stdout JSON or Null, stderr).
fn call(dir: &Path, id: &str, input: &Value) -> (i32, Value, String) {
    let o = support::call(dir, id, input);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), v, support::stderr(&o))
}

fn ok(dir: &Path, id: &str, input: &Value) -> Value {
    let (code, v, err) = call(dir, id, input);
    assert_eq!(code, 0, "{id} {input}: {err}");
    v
}

/// Every file of the tree outside .git and .seneschal, by path, with its sha256.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".seneschal" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(
                    rel,
                    format!("{:x}", Sha256::digest(std::fs::read(&p).unwrap())),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The full state, `.seneschal/` included.
fn full_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut t = tree(dir);
    if dir.join(".seneschal").exists() {
        for e in std::fs::read_dir(dir.join(".seneschal")).unwrap().flatten() {
            if e.path().is_file() {
                t.insert(
                    format!(".seneschal/{}", e.file_name().to_string_lossy()),
                    format!("{:x}", Sha256::digest(std::fs::read(e.path()).unwrap())),
                );
            }
        }
    }
    t
}

fn get(dir: &Path, uri: &str) -> Value {
    ok(dir, "knowledge.get", &json!({ "uri": uri }))
}

fn adr(title: &str) -> Value {
    json!({ "title": title, "status": "proposed", "date": "2026-11-30" })
}

fn verify(dir: &Path) -> std::process::Output {
    Command::new(support::bin())
        .args(["audit", "verify", "--repo"])
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn create_update_delete_round_trip_with_digests() {
    let d = repo();
    let dir = d.path();
    let c = ok(
        dir,
        "knowledge.create",
        &json!({"kind": "adr", "front_matter": adr("Use flock"), "body": "# Use flock\n"}),
    );
    assert_eq!(c["uri"], "seneschal://knowledge/adr/0002");
    assert_eq!(c["file"], "docs/adr/0002-use-flock.md");
    assert_eq!(c["applied"], true);
    let g = get(dir, "seneschal://knowledge/adr/0002");
    assert_eq!(g["digest"], c["digest"]);
    assert_eq!(g["front_matter"]["title"], "Use flock");
    assert_eq!(g["body"], "# Use flock\n");

    let u = ok(
        dir,
        "knowledge.update",
        &json!({"uri": g["uri"], "expected_digest": g["digest"], "body": "# Changed\n"}),
    );
    assert_eq!(u["plan"]["change"], json!(["docs/adr/0002-use-flock.md"]));
    let g2 = get(dir, "seneschal://knowledge/adr/0002");
    assert_eq!(g2["body"], "# Changed\n");
    assert_eq!(
        g2["front_matter"]["title"], "Use flock",
        "the front matter is kept"
    );
    assert_eq!(g2["digest"], u["digest"]);

    // The old digest is stale now: conflict, carrying the current one.
    let (code, _, err) = call(
        dir,
        "knowledge.update",
        &json!({"uri": g["uri"], "expected_digest": g["digest"], "body": "x\n"}),
    );
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains("error[conflict]") && err.contains(g2["digest"].as_str().unwrap()),
        "{err}"
    );
    let (code, _, err) = call(
        dir,
        "knowledge.delete",
        &json!({"uri": g["uri"], "expected_digest": g["digest"]}),
    );
    assert!(code != 0 && err.contains("error[conflict]"), "{err}");

    let del = ok(
        dir,
        "knowledge.delete",
        &json!({"uri": g["uri"], "expected_digest": g2["digest"]}),
    );
    assert_eq!(
        del["review"],
        "Delete 1 knowledge object: adr/0002 (docs/adr/0002-use-flock.md)"
    );
    assert!(!dir.join("docs/adr/0002-use-flock.md").exists());
    let (code, _, err) = call(
        dir,
        "knowledge.get",
        &json!({"uri": "seneschal://knowledge/adr/0002"}),
    );
    assert!(code != 0 && err.contains("not_found"), "{err}");
    let (code, _, err) = call(
        dir,
        "knowledge.delete",
        &json!({"uri": g["uri"], "expected_digest": g2["digest"]}),
    );
    assert!(code != 0 && err.contains("error[not_found]"), "{err}");

    // Every attempt, applied or refused, is in the chain: an applied write as its intent
    // (written before it) and its outcome, a refused one as its outcome.
    let v = verify(dir);
    assert!(v.status.success(), "{}", support::stderr(&v));
    let log = ok(dir, "audit.list", &json!({}));
    let outcomes: Vec<&Value> = log["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] == "outcome")
        .collect();
    let words: Vec<&str> = outcomes
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        ["applied", "applied", "refused", "refused", "applied", "refused"]
    );
    assert_eq!(log["total"], 9, "three applied writes have an intent each");
    assert_eq!(log["records"][0]["phase"], "intent");
    assert_eq!(log["records"][0]["transport"], "cli");
    assert_eq!(outcomes[2]["code"], "conflict");
    let page = ok(dir, "audit.list", &json!({"limit": 2}));
    assert_eq!(page["records"].as_array().unwrap().len(), 2);
    assert_eq!(page["next_after"], 2);
    let rest = ok(dir, "audit.list", &json!({"after": 2, "limit": 10}));
    assert_eq!(rest["records"][0]["seq"], 3);
    assert_eq!(rest["next_after"], Value::Null);
    // The state stays out of git.
    let status = support::git(dir, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        !status.contains("audit.jsonl") && !status.contains("lock"),
        "{status}"
    );
}

#[test]
fn dry_run_changes_nothing_and_names_what_the_real_call_changes() {
    let d = repo();
    let dir = d.path();
    let g = get(dir, "seneschal://knowledge/adr/0001");
    let cases = [
        (
            "knowledge.create",
            json!({"kind": "guide", "id": "releasing", "front_matter": {"title": "Releasing"}, "body": "Tag.\n"}),
        ),
        (
            "knowledge.update",
            json!({"uri": g["uri"], "expected_digest": g["digest"], "body": "# New\n"}),
        ),
    ];
    for (id, input) in cases {
        let before = full_tree(dir);
        let mut dry = input.clone();
        dry["dry_run"] = json!(true);
        let plan = ok(dir, id, &dry);
        assert_eq!(plan["applied"], false);
        assert_eq!(
            full_tree(dir),
            before,
            "{id}: a dry run leaves everything byte-identical"
        );
        let real = ok(dir, id, &input);
        assert_eq!(real["plan"], plan["plan"], "{id}");
        assert_eq!(real["digest"], plan["digest"], "{id}");
        let after = tree(dir);
        let before = before
            .into_iter()
            .filter(|(k, _)| !k.starts_with(".seneschal"))
            .collect::<BTreeMap<_, _>>();
        let mut changed: Vec<String> = after
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
            .collect();
        changed.extend(before.keys().filter(|k| !after.contains_key(*k)).cloned());
        let mut named: Vec<String> = ["create", "change", "delete"]
            .iter()
            .flat_map(|k| {
                plan["plan"][k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
            })
            .collect();
        named.sort();
        changed.sort();
        assert_eq!(changed, named, "{id}");
    }
    let g = get(dir, "seneschal://knowledge/adr/0001");
    let before = full_tree(dir);
    let plan = ok(
        dir,
        "knowledge.delete",
        &json!({"uri": g["uri"], "expected_digest": g["digest"], "dry_run": true}),
    );
    assert_eq!(full_tree(dir), before);
    assert_eq!(plan["plan"]["delete"], json!(["docs/adr/0001-first.md"]));
    assert_eq!(plan["plan"]["counts"]["delete"], 1);
    assert_eq!(
        plan["review"],
        "Delete 1 knowledge object: adr/0001 (docs/adr/0001-first.md)"
    );
    // A dry run is not a write attempt: the audit log holds the two real calls only (an
    // intent and an outcome each).
    assert_eq!(ok(dir, "audit.list", &json!({}))["total"], 4);
}

#[test]
fn invalid_front_matter_writes_nothing() {
    let d = repo();
    let dir = d.path();
    let before = tree(dir);
    let (code, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "adr", "front_matter": {"title": "No status"}}),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error[invalid_input]") && err.contains("status"),
        "{err}"
    );
    let (_, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "nope", "front_matter": {}}),
    );
    assert!(
        err.contains("error[invalid_input]") && err.contains("/kind"),
        "{err}"
    );
    let g = get(dir, "seneschal://knowledge/adr/0001");
    let (_, _, err) = call(
        dir,
        "knowledge.update",
        &json!({"uri": g["uri"], "expected_digest": g["digest"], "front_matter": {"title": "T", "status": "maybe", "date": "2026-11-30"}}),
    );
    assert!(
        err.contains("error[invalid_input]") && err.contains("/front_matter/status"),
        "{err}"
    );
    let (_, _, err) = call(
        dir,
        "knowledge.update",
        &json!({"uri": g["uri"], "expected_digest": g["digest"], "front_matter": {"id": "0009", "title": "T", "status": "accepted", "date": "2026-11-30"}}),
    );
    assert!(
        err.contains("error[invalid_input]") && err.contains("cannot change"),
        "{err}"
    );
    // Schema-invalid input (the executor's check) is refused and recorded too.
    let (code, _, err) = call(
        dir,
        "knowledge.update",
        &json!({"uri": g["uri"], "expected_digest": "md5:1"}),
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(tree(dir), before, "nothing was written");
    let log = ok(dir, "audit.list", &json!({}));
    assert_eq!(log["total"], 5);
    assert!(log["records"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["outcome"] == "refused" && r["code"] == "invalid_input"));
}

#[test]
fn writes_stay_inside_their_kind_and_never_follow_links() {
    let d = repo();
    let dir = d.path();
    let outside = tempfile::tempdir().unwrap();
    // A kind folder that is a link leading outside the repository.
    std::os::unix::fs::symlink(outside.path(), dir.join("docs/guides")).unwrap();
    let (code, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "guide", "id": "escape", "front_matter": {"title": "Escape"}}),
    );
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("error[refused]") && err.contains("symlink_escape"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written outside"
    );
    // A link inside the repository is refused too: writes never follow links.
    std::fs::remove_file(dir.join("docs/guides")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("docs/guides")).unwrap();
    let (code, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "guide", "id": "inside", "front_matter": {"title": "In"}}),
    );
    assert_eq!(code, 4, "{err}");
    assert_eq!(std::fs::read_dir(dir.join("elsewhere")).unwrap().count(), 0);
    // An id cannot climb out: the id grammar refuses separators and `..`.
    let (code, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "adr", "id": "../../x", "front_matter": adr("X")}),
    );
    assert_eq!(code, 2, "{err}");
    // An existing object cannot be created again.
    let (code, _, err) = call(
        dir,
        "knowledge.create",
        &json!({"kind": "adr", "id": "0001", "front_matter": adr("Again")}),
    );
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn idempotency_key_retry_creates_one_object_and_a_different_request_conflicts() {
    let d = repo();
    let dir = d.path();
    let input = json!({"kind": "adr", "front_matter": adr("Keyed"), "idempotency_key": "retry-1"});
    let first = ok(dir, "knowledge.create", &input);
    // The answer was "lost" (a simulated timeout); the client retries with the same key.
    let again = ok(dir, "knowledge.create", &input);
    assert_eq!(again["replayed"], true);
    assert_eq!(again["uri"], first["uri"]);
    let list = ok(dir, "knowledge.list", &json!({"kind": "adr"}));
    assert_eq!(list["total"], 2, "one object created, not two: {list}");
    let mut other = input.clone();
    other["front_matter"]["title"] = json!("Other");
    let (code, _, err) = call(dir, "knowledge.create", &other);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("idempotency key"), "{err}");
    assert_eq!(
        ok(dir, "knowledge.list", &json!({"kind": "adr"}))["total"],
        2
    );
    let outcomes: Vec<String> = ok(dir, "audit.list", &json!({}))["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["phase"] == "outcome")
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["applied", "replayed", "refused"]);
}

/// The stored key files of a repository, by file name.
fn key_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(".seneschal/idempotency"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Sets a file's modification time `secs` seconds into the past.
fn age(path: &Path, secs: u64) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn expired_idempotency_keys_are_deleted_by_the_next_keyed_write() {
    let d = repo();
    let dir = d.path();
    let keyed = |title: &str, key: &str| {
        ok(
            dir,
            "knowledge.create",
            &json!({"kind": "adr", "front_matter": adr(title), "idempotency_key": key}),
        );
        key_files(dir)
    };
    let first = keyed("Expired", "old");
    assert_eq!(first.len(), 1);
    let keys = dir.join(".seneschal/idempotency");
    let expired = keys.join(&first[0]);
    // Two days ago: its own expiry has passed and its file is older than a day.
    let mut record: Value = serde_json::from_slice(&std::fs::read(&expired).unwrap()).unwrap();
    record["expires"] = json!(1);
    std::fs::write(&expired, record.to_string()).unwrap();
    age(&expired, 2 * 86_400);
    // A file named like a key that is not a record, and one whose clock disagrees (an old file
    // whose expiry is still ahead): the first goes, the second stays.
    let junk = keys.join(format!("{}.json", "a".repeat(64)));
    std::fs::write(&junk, "not a record").unwrap();
    age(&junk, 2 * 86_400);
    let skewed_name = keyed("Skewed", "skewed")
        .into_iter()
        .find(|n| *n != first[0] && !n.starts_with("aaaa"))
        .unwrap();
    age(&keys.join(&skewed_name), 2 * 86_400);
    // A file that is not a key at all is never touched.
    std::fs::write(keys.join("README"), "kept").unwrap();
    age(&keys.join("README"), 2 * 86_400);

    let after = keyed("Fresh", "fresh");
    assert!(
        !after.contains(&first[0]),
        "the expired key is still there: {after:?}"
    );
    assert!(
        !junk.exists(),
        "a stale file named like a key is still there"
    );
    assert!(
        after.contains(&skewed_name),
        "a key within its expiry was deleted"
    );
    assert!(after.contains(&"README".to_string()));
    assert_eq!(after.len(), 3, "{after:?}");
    // The expired key no longer answers: the same request with it creates again.
    let again = ok(
        dir,
        "knowledge.create",
        &json!({"kind": "adr", "front_matter": adr("Expired"), "idempotency_key": "old"}),
    );
    assert_eq!(again["replayed"], false, "{again}");
}

#[test]
fn editing_one_byte_of_the_audit_log_fails_verify_naming_the_record() {
    let d = repo();
    let dir = d.path();
    for t in ["A", "B", "C"] {
        ok(
            dir,
            "knowledge.create",
            &json!({"kind": "adr", "front_matter": adr(t)}),
        );
    }
    let v = verify(dir);
    assert!(v.status.success());
    assert!(
        support::stdout(&v).contains("6 record(s)"),
        "{}",
        support::stdout(&v)
    );
    let log = dir.join(".seneschal/audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let second = text.find('\n').unwrap() + 1;
    // Change one byte inside record 2 (its time's last digit).
    let pos = second + text[second..].find("Z\"").unwrap() - 1;
    let mut bytes = text.into_bytes();
    bytes[pos] = if bytes[pos] == b'0' { b'1' } else { b'0' };
    std::fs::write(&log, &bytes).unwrap();
    let v = verify(dir);
    assert_eq!(v.status.code(), Some(12));
    let err = support::stderr(&v);
    assert!(err.contains("record 2"), "{err}");
}

/// 4 processes × 50 read-then-update calls on one object.
#[test]
fn two_hundred_concurrent_updates_lose_nothing() {
    let d = repo();
    let dir = d.path().to_path_buf();
    let uri = "seneschal://knowledge/adr/0001";
    let results: Vec<(usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|w| {
                let dir = dir.clone();
                s.spawn(move || {
                    let (mut applied, mut conflicts) = (0, 0);
                    for i in 0..50 {
                        // A reader never misses the object while writers replace its file:
                        // the knowledge reader takes the length from the handle it opened.
                        let (code, g, err) = call(&dir, "knowledge.get", &json!({ "uri": uri }));
                        assert_eq!(code, 0, "knowledge.get during the writes: {err}");
                        let body = format!("{}writer {w} call {i}\n", g["body"].as_str().unwrap());
                        let (code, v, err) = call(
                            &dir,
                            "knowledge.update",
                            &json!({"uri": uri, "expected_digest": g["digest"], "body": body}),
                        );
                        match code {
                            0 => {
                                assert_eq!(v["applied"], true);
                                applied += 1;
                            }
                            5 => {
                                assert!(err.contains("error[conflict]"), "{err}");
                                conflicts += 1;
                            }
                            other => panic!("exit {other}: {err}"),
                        }
                    }
                    (applied, conflicts)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let applied: usize = results.iter().map(|r| r.0).sum();
    let conflicts: usize = results.iter().map(|r| r.1).sum();
    assert_eq!(applied + conflicts, 200);
    let body = get(&dir, uri)["body"].as_str().unwrap().to_string();
    // No update is lost: every applied update appended its own line onto the one before.
    let lines = body.lines().filter(|l| l.starts_with("writer ")).count();
    assert_eq!(lines, applied, "applied {applied}, conflicts {conflicts}");
    let log = ok(&dir, "audit.list", &json!({"limit": 500}));
    // One outcome per call, and an intent before each applied one.
    assert_eq!(log["total"], 200 + applied);
    let v = verify(&dir);
    assert!(v.status.success(), "{}", support::stderr(&v));
    eprintln!("200 updates from 4 processes: {applied} applied, {conflicts} conflicts");
}

#[test]
fn kill_9_during_writes_leaves_files_parseable_and_the_chain_verifiable() {
    let d = repo();
    let dir = d.path();
    let uri = "seneschal://knowledge/adr/0001";
    for i in 0..40u64 {
        let g = get(dir, uri);
        let body = format!("# Round {i}\n{}\n", "text ".repeat(2000));
        let mut child = Command::new(support::bin())
            .args(["call", "knowledge.update", "--yes", "--input"])
            .arg(json!({"uri": uri, "expected_digest": g["digest"], "body": body}).to_string())
            .arg("--repo")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2 + (i * 7) % 40));
        let _ = child.kill();
        let _ = child.wait();
        let check = ok(dir, "knowledge.check", &json!({}));
        assert_eq!(check["ok"], true, "round {i}: {check}");
        let v = verify(dir);
        assert!(v.status.success(), "round {i}: {}", support::stderr(&v));
    }
    // The object still reads, and the next write sweeps any orphaned temporary file.
    let g = get(dir, uri);
    assert_eq!(g["front_matter"]["title"], "First");
    ok(
        dir,
        "knowledge.update",
        &json!({"uri": uri, "expected_digest": g["digest"], "body": "# Last\n"}),
    );
    let names: Vec<String> = std::fs::read_dir(dir.join("docs/adr"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["0001-first.md"]);
}
