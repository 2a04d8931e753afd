//! Hostile audit: the state folder `.seneschal/` planted with links, folders and FIFOs; kill -9
//! between any two syscalls of a write; a truncated, emptied or deleted log; a chain
//! recomputed without the key. Every write is recorded before it happens (intent), settled
//! after a crash, and `seneschal audit verify` sees what each mode can detect.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support;
use seneschal::store::canonical;

/// Runs the binary in `dir` with `args` and `env`, killed if it has not ended within 60 s
/// (a FIFO read would hang forever; the bound is for that, not for a slow machine).
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(support::bin());
    cmd.args(args)
        .env_remove("SENESCHAL_AUDIT_KEY")
        .envs(env.iter().copied())
        .current_dir(dir);
    support::output_within(cmd, Duration::from_secs(60))
}

/// `seneschal call ID --yes --input JSON` in `dir`.
fn call(dir: &Path, id: &str, input: &Value, env: &[(&str, &str)]) -> Output {
    run(
        dir,
        &["call", id, "--yes", "--input", &input.to_string()],
        env,
    )
}

fn ok(dir: &Path, id: &str, input: &Value) -> Value {
    let o = call(dir, id, input, &[]);
    assert!(o.status.success(), "{id} {input}: {}", support::stderr(&o));
    support::json(&o)
}

fn adr(title: &str) -> Value {
    json!({ "title": title, "status": "proposed", "date": "2026-11-30" })
}

fn create(title: &str) -> Value {
    json!({ "kind": "adr", "front_matter": adr(title) })
}

fn verify(dir: &Path, env: &[(&str, &str)]) -> Output {
    run(dir, &["audit", "verify"], env)
}

/// Every file under `dir` (links as their target text, folders as entries), for
/// byte-identity checks.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.insert(
                    rel,
                    format!("-> {}", std::fs::read_link(&p).unwrap().display()),
                );
            } else if t.is_dir() {
                if rel != ".git" {
                    out.insert(rel.clone(), "dir".into());
                    walk(root, &p, out);
                }
            } else if t.is_file() {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(rel, format!("{:x}", Sha256::digest(bytes)));
            } else {
                out.insert(rel, "special".into());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The audit log of `dir` as a crash after its last write's intent leaves it: the last of its
/// `count` records (the outcome) cut off, the anchor counting the records up to `intent`.
fn drop_the_outcome(dir: &Path, count: usize, intent: &Value) {
    let text = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl")).unwrap();
    let kept: String = text
        .lines()
        .take(count - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join(".seneschal/audit.jsonl"), kept).unwrap();
    let anchor = json!({ "count": count - 1, "last": intent["hash"] });
    std::fs::write(
        dir.join(".seneschal/audit.anchor"),
        canonical(&anchor) + "\n",
    )
    .unwrap();
}

/// The records of the log, read directly.
fn log(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join(".seneschal/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A repository with one ADR and one applied write (so the state folder, the log, its
/// anchor and a key exist).
fn repo_with_state() -> tempfile::TempDir {
    let d = support::adr_repo();
    let mut input = create("Seed");
    input["idempotency_key"] = json!("seed");
    ok(d.path(), "knowledge.create", &input);
    for f in ["lock", "audit.jsonl", "audit.anchor", "idempotency"] {
        assert!(d.path().join(".seneschal").join(f).exists(), "{f}");
    }
    d
}

const PLANTED: &str = "OUTSIDE-SECRET-7f3a";

/// An outside folder holding files a planted link points at.
fn outside() -> tempfile::TempDir {
    let o = tempfile::tempdir().unwrap();
    for f in ["lock", "audit.jsonl", "audit.anchor"] {
        std::fs::write(
            o.path().join(f),
            format!("{{\"planted\":\"{PLANTED}\",\"seq\":1,\"count\":1}}\n"),
        )
        .unwrap();
    }
    std::fs::create_dir(o.path().join("idempotency")).unwrap();
    // A key record that, if followed, would replay a planted answer.
    std::fs::write(
        o.path().join(seed_key_file()),
        json!({"request": "any", "result": {"planted": PLANTED}, "expires": u64::MAX / 2})
            .to_string(),
    )
    .unwrap();
    o
}

/// The key file of the key `seed`, relative to `.seneschal/`.
fn seed_key_file() -> String {
    format!("idempotency/{:x}.json", Sha256::digest(b"seed"))
}

/// How the state entry is replaced.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// A link to an existing file (or folder) outside.
    LinkExisting,
    /// A link to a name outside that does not exist yet (an open with O_CREAT would make it).
    LinkDangling,
    /// A folder in place of a file, or a file in place of the keys folder.
    WrongType,
    /// A FIFO (a reader that opened it would block).
    Fifo,
    /// A hard link to a file outside.
    HardLink,
}

fn plant(dir: &Path, out: &Path, name: &str, how: Plant) {
    let at = dir.join(".seneschal").join(name);
    if at.is_dir() {
        std::fs::remove_dir_all(&at).unwrap();
    } else {
        std::fs::remove_file(&at).unwrap();
    }
    match how {
        Plant::LinkExisting => std::os::unix::fs::symlink(out.join(name), &at).unwrap(),
        Plant::LinkDangling => {
            std::os::unix::fs::symlink(out.join(format!("new-{name}")), &at).unwrap()
        }
        Plant::WrongType if name == "idempotency" => std::fs::write(&at, "not a folder").unwrap(),
        Plant::WrongType => std::fs::create_dir(&at).unwrap(),
        Plant::Fifo => {
            let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        Plant::HardLink => std::fs::hard_link(out.join(name), &at).unwrap(),
    }
}

#[test]
fn planted_state_entries_refuse_the_write_and_nothing_outside_is_created_or_read() {
    let seed_key = seed_key_file();
    let cases: &[(&str, &[Plant])] = &[
        (
            "lock",
            &[
                Plant::LinkExisting,
                Plant::LinkDangling,
                Plant::WrongType,
                Plant::Fifo,
                Plant::HardLink,
            ],
        ),
        (
            "audit.jsonl",
            &[
                Plant::LinkExisting,
                Plant::LinkDangling,
                Plant::WrongType,
                Plant::Fifo,
                Plant::HardLink,
            ],
        ),
        (
            "audit.anchor",
            &[
                Plant::LinkExisting,
                Plant::LinkDangling,
                Plant::WrongType,
                Plant::Fifo,
                Plant::HardLink,
            ],
        ),
        (
            "idempotency",
            &[Plant::LinkExisting, Plant::LinkDangling, Plant::WrongType],
        ),
        (
            &seed_key,
            &[
                Plant::LinkExisting,
                Plant::WrongType,
                Plant::Fifo,
                Plant::HardLink,
            ],
        ),
    ];
    let mut checked = 0;
    for (name, plants) in cases {
        for how in *plants {
            let d = repo_with_state();
            let dir = d.path();
            let o = outside();
            plant(dir, o.path(), name, *how);
            let outside_before = snapshot(o.path());
            let repo_before = snapshot(dir);
            let what = format!("{name} as {how:?}");

            // A keyed write (it reaches every state entry) is refused, naming the entry.
            let mut input = create(&format!("Planted {checked}"));
            input["idempotency_key"] = json!(format!("k{checked}"));
            if name.starts_with("idempotency/") {
                // The request the planted key file would answer.
                input["idempotency_key"] = json!("seed");
            }
            let w = call(dir, "knowledge.create", &input, &[]);
            let err = support::stderr(&w);
            assert!(
                !support::stdout(&w).contains(PLANTED),
                "{what}: replayed a planted answer"
            );
            assert_eq!(w.status.code(), Some(4), "{what}: {err}");
            assert!(
                err.contains("error[refused]") && err.contains(name),
                "{what}: {err}"
            );
            assert!(
                err.contains("symlink_escape")
                    || err.contains("special_file")
                    || err.contains("hard_link"),
                "{what}: the refusal names its rule: {err}"
            );

            // The readers of the log never read outside either.
            let l = call(dir, "audit.list", &json!({}), &[]);
            let v = verify(dir, &[]);
            for (who, out) in [("audit.list", &l), ("audit verify", &v)] {
                let text = format!("{}{}", support::stdout(out), support::stderr(out));
                assert!(
                    !text.contains(PLANTED),
                    "{what}: {who} read outside: {text}"
                );
            }
            if *name == "audit.jsonl" || *name == "audit.anchor" {
                assert_eq!(v.status.code(), Some(12), "{what}: {}", support::stderr(&v));
            }
            if *name == "audit.jsonl" {
                assert_eq!(l.status.code(), Some(4), "{what}: {}", support::stderr(&l));
            }

            assert_eq!(
                snapshot(o.path()),
                outside_before,
                "{what}: outside changed"
            );
            // Only the log and its anchor may change (the refusal's own record, when the
            // planted entry is the keys folder).
            let outside_log = |m: BTreeMap<String, String>| -> BTreeMap<String, String> {
                m.into_iter()
                    .filter(|(k, _)| {
                        !name.starts_with("idempotency")
                            || !(k.starts_with(".seneschal/audit.")
                                || k.starts_with(".seneschal/.audit.anchor"))
                    })
                    .collect()
            };
            assert_eq!(
                outside_log(snapshot(dir)),
                outside_log(repo_before),
                "{what}: the repository changed"
            );
            checked += 1;
        }
    }
    // The state folder itself as a link outside.
    let d = repo_with_state();
    let o = outside();
    std::fs::rename(d.path().join(".seneschal"), o.path().join("state")).unwrap();
    std::os::unix::fs::symlink(o.path().join("state"), d.path().join(".seneschal")).unwrap();
    let outside_before = snapshot(o.path());
    let w = call(d.path(), "knowledge.create", &create("Through"), &[]);
    assert_eq!(w.status.code(), Some(4), "{}", support::stderr(&w));
    assert!(support::stderr(&w).contains("symlink_escape"));
    let l = call(d.path(), "audit.list", &json!({}), &[]);
    assert_eq!(l.status.code(), Some(4), "audit.list follows no link");
    assert_eq!(verify(d.path(), &[]).status.code(), Some(12));
    assert_eq!(snapshot(o.path()), outside_before);
    assert!(!d.path().join("docs/adr/0003-through.md").exists());
    eprintln!("{} planted state entries refused", checked + 1);
}

#[test]
fn a_log_that_cannot_take_the_intent_applies_nothing_and_a_keyed_retry_after_repair_applies_once() {
    let d = repo_with_state();
    let dir = d.path();
    let state = dir.join(".seneschal");
    std::fs::rename(state.join("audit.jsonl"), dir.join("log.bak")).unwrap();
    std::fs::create_dir(state.join("audit.jsonl")).unwrap();
    let before = snapshot(dir);
    let mut input = create("Keyed");
    input["idempotency_key"] = json!("after-repair");
    let w = call(dir, "knowledge.create", &input, &[]);
    let err = support::stderr(&w);
    assert_eq!(w.status.code(), Some(4), "{err}");
    assert!(
        err.contains(".seneschal/audit.jsonl"),
        "the error names the log: {err}"
    );
    assert_eq!(snapshot(dir), before, "nothing was written");
    // Repair, retry with the same key: applied once; again: replayed.
    std::fs::remove_dir(state.join("audit.jsonl")).unwrap();
    std::fs::rename(dir.join("log.bak"), state.join("audit.jsonl")).unwrap();
    let first = ok(dir, "knowledge.create", &input);
    assert_eq!(
        (first["applied"].clone(), first["replayed"].clone()),
        (json!(true), json!(false))
    );
    let again = ok(dir, "knowledge.create", &input);
    assert_eq!(again["replayed"], true);
    assert_eq!(again["file"], first["file"]);
    let keyed = std::fs::read_dir(dir.join("docs/adr"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("keyed"))
        .count();
    assert_eq!(keyed, 1);
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

/// The digest of a file as the log spells it (keyed: `.seneschal/digest.key`).
fn digest_of(dir: &Path, path: &Path) -> String {
    support::audit_digest(dir, &std::fs::read(path).unwrap())
}

/// A small deterministic generator (xorshift), seeded from the clock and printed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn kill_9_between_any_two_syscalls_leaves_no_unaudited_and_no_double_applied_write() {
    let d = support::adr_repo();
    let dir = d.path();
    // One create to learn how long a write takes, so the kills land across its whole span.
    let t = Instant::now();
    ok(dir, "knowledge.create", &create("Warm"));
    let span = t.elapsed().as_micros().max(2_000) as u64;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill loop: seed {seed}, one write takes {span} µs");
    let mut rng = Rng(seed);
    let n = 60;
    let started = Instant::now();
    for i in 0..n {
        let mut input = create(&format!("Killed {i}"));
        input["idempotency_key"] = json!(format!("key-{i}"));
        let mut child = Command::new(support::bin())
            .args([
                "call",
                "knowledge.create",
                "--yes",
                "--input",
                &input.to_string(),
            ])
            .env_remove("SENESCHAL_AUDIT_KEY")
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Most of a write's span is the process starting: the kills land in its last two
        // thirds and a little after, where the lock, the intent, the rename and the outcome are.
        std::thread::sleep(Duration::from_micros(span / 3 + rng.next() % span));
        let _ = child.kill();
        let _ = child.wait();
    }
    let killed = started.elapsed();
    // Every retry (over one long-lived MCP process, whose first write settles what the last
    // kill left) answers the first outcome: one object per key, never two.
    let mut m = crate::support::mcp::Mcp::start_with(dir, &[], &[]);
    m.initialize("2025-06-18");
    let mut replayed = 0;
    for i in 0..n {
        let mut input = create(&format!("Killed {i}"));
        input["idempotency_key"] = json!(format!("key-{i}"));
        let r = m.request(
            "tools/call",
            json!({"name": "knowledge_create", "arguments": input}),
        )["result"]
            .clone();
        assert_ne!(r["isError"], true, "key-{i}: {r}");
        let a = r["structuredContent"].clone();
        replayed += usize::from(a["replayed"] == true);
        let slug = format!("-killed-{i}.md");
        let files: Vec<String> = std::fs::read_dir(dir.join("docs/adr"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(&slug))
            .collect();
        assert_eq!(
            files.len(),
            1,
            "key-{i} applied {} times: {files:?}",
            files.len()
        );
        assert_eq!(a["file"], format!("docs/adr/{}", files[0]), "key-{i}: {a}");
    }
    drop(m);
    // Every object file is covered by an intent with its digest and an `applied` outcome.
    let records = log(dir);
    let applied: Vec<u64> = records
        .iter()
        .filter(|r| r["phase"] == "outcome" && r["outcome"] == "applied")
        .filter_map(|r| r["intent"].as_u64())
        .collect();
    let mut unaudited = Vec::new();
    for e in std::fs::read_dir(dir.join("docs/adr")).unwrap().flatten() {
        let rel = format!("docs/adr/{}", e.file_name().to_string_lossy());
        assert!(
            !rel.ends_with(".tmp"),
            "settlement sweeps a killed write's temporary file: {rel}"
        );
        if rel == "docs/adr/0001-first.md" {
            continue;
        }
        let d = digest_of(dir, &e.path());
        let covered = records.iter().any(|r| {
            r["phase"] == "intent"
                && applied.contains(&r["seq"].as_u64().unwrap())
                && r["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["path"] == rel && t["after"] == d)
        });
        if !covered {
            unaudited.push(rel);
        }
    }
    assert_eq!(unaudited, Vec::<String>::new(), "applied but unaudited");
    let intents = records.iter().filter(|r| r["phase"] == "intent").count();
    let settled = records
        .iter()
        .filter(|r| r["phase"] == "outcome" && r["intent"].is_u64())
        .count();
    assert_eq!(
        intents, settled,
        "every intent has its outcome after settlement"
    );
    let recovered: Vec<&str> = records
        .iter()
        .filter(|r| r["recovered"] == true)
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    eprintln!(
        "kill loop: {n} kills in {killed:?}; {replayed} retries replayed the first outcome; \
         {} intents settled after a kill ({} applied, {} not applied); 0 unaudited, 0 double",
        recovered.len(),
        recovered.iter().filter(|o| **o == "applied").count(),
        recovered.iter().filter(|o| **o == "not_applied").count(),
    );
}

#[test]
fn a_dropped_tail_an_emptied_log_and_a_deleted_log_fail_verify() {
    let d = support::adr_repo();
    let dir = d.path();
    for t in ["A", "B", "C"] {
        ok(dir, "knowledge.create", &create(t));
    }
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        support::stdout(&v).contains("anchor matches"),
        "{}",
        support::stdout(&v)
    );
    let path = dir.join(".seneschal/audit.jsonl");
    let good = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let dropped = lines[..lines.len() - 1].join("\n") + "\n";
    let cases = [
        ("the last record dropped", Some(dropped.clone()), "dropped"),
        ("the log emptied", Some(String::new()), "dropped"),
        ("the log deleted", None, "missing"),
    ];
    for (what, content, says) in cases {
        match &content {
            Some(c) => std::fs::write(&path, c).unwrap(),
            None => std::fs::remove_file(&path).unwrap(),
        }
        let v = verify(dir, &[]);
        let err = support::stderr(&v);
        assert_eq!(v.status.code(), Some(12), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        // The store refuses to write over a truncated log (it would re-anchor it).
        let w = call(dir, "knowledge.create", &create("Over"), &[]);
        assert_eq!(w.status.code(), Some(4), "{what}: {}", support::stderr(&w));
        assert!(
            support::stderr(&w).contains("log_truncated"),
            "{}",
            support::stderr(&w)
        );
        assert!(!dir.join("docs/adr/0005-over.md").exists());
        std::fs::write(&path, &good).unwrap();
        let v = verify(dir, &[]);
        assert!(
            v.status.success(),
            "{what} restored: {}",
            support::stderr(&v)
        );
    }
    // The last write's outcome is not synced: its anchor line holds the log to it only in the
    // boot that wrote it. The same cut under a line of another boot is what a power loss can
    // leave (the outcome lost, the intent synced): a lag, which the next write settles.
    let good_anchor = std::fs::read(dir.join(".seneschal/audit.anchor")).unwrap();
    let anchor = last_anchor(dir);
    assert_eq!(
        anchor["written"].as_u64(),
        Some(lines.len() as u64),
        "the last line counts the written records: {anchor}"
    );
    assert_eq!(
        anchor["count"].as_u64(),
        Some(lines.len() as u64 - 1),
        "and as synced, the records up to the last intent: {anchor}"
    );
    std::fs::write(&path, &dropped).unwrap();
    std::fs::write(
        dir.join(".seneschal/audit.anchor"),
        anchor_of_boot(dir, "00000000-0000-0000-0000-000000000000"),
    )
    .unwrap();
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        support::stdout(&v).contains("1 write intent(s) wait"),
        "{}",
        support::stdout(&v)
    );
    ok(dir, "knowledge.create", &create("After a restart"));
    let settled = log(dir);
    assert!(
        settled
            .iter()
            .any(|r| r["phase"] == "outcome" && r["recovered"] == json!(true)),
        "the next write settles the intent: {settled:#?}"
    );
    assert!(verify(dir, &[]).status.success());
    std::fs::write(&path, &good).unwrap();
    std::fs::write(dir.join(".seneschal/audit.anchor"), &good_anchor).unwrap();

    // The anchor deleted while the log holds records.
    std::fs::remove_file(dir.join(".seneschal/audit.anchor")).unwrap();
    let v = verify(dir, &[]);
    assert_eq!(v.status.code(), Some(12));
    assert!(
        support::stderr(&v).contains("anchor"),
        "{}",
        support::stderr(&v)
    );
}

/// Rewrites the log from record `from` on with `edit`, recomputing every hash (what anyone
/// can do without the key) and the anchor to match.
fn recompute(dir: &Path, records: &[Value], edit: impl Fn(usize, &mut Value)) {
    let mut prev =
        "sha256:0000000000000000000000000000000000000000000000000000000000000000".to_string();
    let mut text = String::new();
    for (i, r) in records.iter().enumerate() {
        let mut r = r.clone();
        edit(i, &mut r);
        r["prev"] = json!(prev);
        let mut bare = r.clone();
        bare.as_object_mut().unwrap().remove("hash");
        bare.as_object_mut().unwrap().remove("mac");
        let h = format!("sha256:{:x}", Sha256::digest(canonical(&bare).as_bytes()));
        r["hash"] = json!(h);
        prev = h;
        text.push_str(&canonical(&r));
        text.push('\n');
    }
    std::fs::write(dir.join(".seneschal/audit.jsonl"), text).unwrap();
    let anchor_path = dir.join(".seneschal/audit.anchor");
    let mut anchor = last_anchor(dir);
    for unsynced in ["written", "written_last", "boot"] {
        anchor.as_object_mut().unwrap().remove(unsynced);
    }
    anchor["count"] = json!(records.len());
    anchor["last"] = json!(prev);
    std::fs::write(anchor_path, canonical(&anchor) + "\n").unwrap();
}

/// The anchor's last line: the anchor in force.
fn last_anchor(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join(".seneschal/audit.anchor")).unwrap();
    serde_json::from_str(text.lines().last().expect("an anchor line")).unwrap()
}

/// The anchor `dir` holds, its last line's boot replaced by `boot`.
fn anchor_of_boot(dir: &Path, boot: &str) -> String {
    let mut anchor = last_anchor(dir);
    anchor["boot"] = json!(boot);
    canonical(&anchor) + "\n"
}

#[test]
fn with_the_key_a_chain_recomputed_without_it_fails_verify() {
    let d = support::adr_repo();
    let dir = d.path();
    let keys = tempfile::tempdir().unwrap();
    let key: PathBuf = keys.path().join("audit.key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef").unwrap();
    let key_s = key.to_str().unwrap();
    let env = [("SENESCHAL_AUDIT_KEY", key_s)];
    for t in ["A", "B", "C"] {
        let o = call(dir, "knowledge.create", &create(t), &env);
        assert!(o.status.success(), "{}", support::stderr(&o));
    }
    let records = log(dir);
    assert!(
        records.iter().all(|r| r["mac"].is_string()),
        "every record carries a MAC"
    );
    let keyed = verify(dir, &env);
    assert!(keyed.status.success(), "{}", support::stderr(&keyed));
    assert!(
        support::stdout(&keyed).contains("MAC"),
        "{}",
        support::stdout(&keyed)
    );
    let with_flag = run(dir, &["audit", "verify", "--key", key_s], &[]);
    assert!(
        with_flag.status.success(),
        "{}",
        support::stderr(&with_flag)
    );
    let good = std::fs::read(dir.join(".seneschal/audit.jsonl")).unwrap();
    let good_anchor = std::fs::read(dir.join(".seneschal/audit.anchor")).unwrap();

    // Record 2 rewritten (another capability) and the chain and anchor recomputed.
    recompute(dir, &records, |i, r| {
        if i == 1 {
            r["capability"] = json!("knowledge.delete");
        }
    });
    let plain = verify(dir, &[]);
    assert!(
        plain.status.success(),
        "the plain chain cannot see a consistent recomputation: {}",
        support::stderr(&plain)
    );
    let v = verify(dir, &env);
    let err = support::stderr(&v);
    assert_eq!(v.status.code(), Some(12), "{err}");
    assert!(err.contains("record 2") && err.contains("MAC"), "{err}");

    // The tail dropped and the anchor rewritten to match: the anchor's MAC gives it away.
    std::fs::write(dir.join(".seneschal/audit.jsonl"), &good).unwrap();
    std::fs::write(dir.join(".seneschal/audit.anchor"), &good_anchor).unwrap();
    recompute(dir, &records[..records.len() - 1], |_, _| {});
    assert!(
        verify(dir, &[]).status.success(),
        "the plain anchor was rewritten consistently"
    );
    let v = verify(dir, &env);
    assert_eq!(v.status.code(), Some(12), "{}", support::stderr(&v));

    // The last outcome dropped and the anchor's boot changed so that it counts only the
    // synced records (what a restart would leave): the MAC of its unsynced part covers its boot.
    std::fs::write(dir.join(".seneschal/audit.jsonl"), &good).unwrap();
    std::fs::write(dir.join(".seneschal/audit.anchor"), &good_anchor).unwrap();
    assert!(verify(dir, &env).status.success());
    let other = anchor_of_boot(dir, "00000000-0000-0000-0000-000000000000");
    let text = String::from_utf8(good.clone()).unwrap();
    let kept: String = text
        .lines()
        .take(records.len() - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join(".seneschal/audit.jsonl"), kept).unwrap();
    std::fs::write(dir.join(".seneschal/audit.anchor"), other).unwrap();
    let v = verify(dir, &env);
    let err = support::stderr(&v);
    assert_eq!(v.status.code(), Some(12), "{err}");
    assert!(err.contains("MAC"), "{err}");

    // A key inside the repository is refused.
    std::fs::write(dir.join("inside.key"), b"k").unwrap();
    let inside = dir.join("inside.key");
    let o = call(
        dir,
        "knowledge.create",
        &create("D"),
        &[("SENESCHAL_AUDIT_KEY", inside.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(4), "{}", support::stderr(&o));
    assert!(support::stderr(&o).contains("inside the repository"));
}

#[test]
fn refusals_by_the_effect_profile_and_by_a_non_object_input_leave_a_record() {
    let d = support::adr_repo();
    let dir = d.path();
    let read_only = |dir: &Path| {
        let input = create("Profile");
        let args = [
            "call",
            "knowledge.create",
            "--allow-effects",
            "read",
            "--input",
        ];
        let o = run(
            dir,
            &[&args[..], &[input.to_string().as_str()]].concat(),
            &[],
        );
        assert_eq!(o.status.code(), Some(4), "{}", support::stderr(&o));
    };
    // A read-only process never creates the state folder (that would be a write).
    read_only(dir);
    assert!(!dir.join(".seneschal").exists());
    // Where the state exists, it records its refusals; so does a non-object input.
    ok(dir, "knowledge.create", &create("Seed"));
    let applied = log(dir).len();
    read_only(dir);
    let o = run(dir, &["call", "knowledge.delete", "--input", "[1, 2]"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    let records = log(dir);
    let seen: Vec<(&str, &str, &str)> = records[applied..]
        .iter()
        .map(|r| {
            (
                r["capability"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
                r["code"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("knowledge.create", "refused", "refused"),
            ("knowledge.delete", "refused", "invalid_input")
        ]
    );
    assert!(records.iter().all(|r| r["transport"] == "cli"));
    assert!(!dir.join("docs/adr/0003-profile.md").exists());
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

/// Rewinds a repository to the instant a kill would leave after the last keyed write's
/// intent: its outcome record is gone (the anchor counts the intent last, as after a kill
/// before the outcome's append) and its key is back to a reservation.
fn interrupt_last_write(dir: &Path) {
    let records = log(dir);
    let (outcome, intent) = (&records[records.len() - 1], &records[records.len() - 2]);
    assert_eq!(
        (outcome["phase"].as_str(), intent["phase"].as_str()),
        (Some("outcome"), Some("intent"))
    );
    drop_the_outcome(dir, records.len(), intent);
    let hash = intent["key_hash"]
        .as_str()
        .unwrap()
        .strip_prefix("sha256:")
        .unwrap();
    let key_file = dir.join(format!(".seneschal/idempotency/{hash}.json"));
    let mut key: Value = serde_json::from_slice(&std::fs::read(&key_file).unwrap()).unwrap();
    key["pending"] = intent["seq"].clone();
    std::fs::write(&key_file, key.to_string()).unwrap();
}

#[test]
fn settlement_decides_from_the_digests_applied_not_applied_or_indeterminate() {
    let d = support::adr_repo();
    let dir = d.path();
    let keyed = |title: &str| {
        let mut i = create(title);
        i["idempotency_key"] = json!(title);
        i
    };
    let last_recovered = |dir: &Path| {
        let r = log(dir)
            .into_iter()
            .rfind(|r| r["recovered"] == true)
            .unwrap();
        r["outcome"].as_str().unwrap().to_string()
    };
    // Killed after the rename: the retry replays the first answer, once.
    let first = ok(dir, "knowledge.create", &keyed("After"));
    interrupt_last_write(dir);
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        support::stdout(&v).contains("1 write intent(s) wait"),
        "{}",
        support::stdout(&v)
    );
    let again = ok(dir, "knowledge.create", &keyed("After"));
    assert_eq!(
        (again["replayed"].clone(), again["file"].clone()),
        (json!(true), first["file"].clone())
    );
    assert_eq!(last_recovered(dir), "applied");

    // Killed before the rename: the retry applies it, once.
    let first = ok(dir, "knowledge.create", &keyed("Before"));
    interrupt_last_write(dir);
    std::fs::remove_file(dir.join(first["file"].as_str().unwrap())).unwrap();
    let again = ok(dir, "knowledge.create", &keyed("Before"));
    assert_eq!(
        (again["replayed"].clone(), again["file"].clone()),
        (json!(false), first["file"].clone())
    );
    assert_eq!(log(dir)[log(dir).len() - 3]["outcome"], "not_applied");

    // Killed after the rename, then the file changed by someone else: indeterminate, and the
    // retry is refused rather than replayed or applied twice.
    let first = ok(dir, "knowledge.create", &keyed("Changed"));
    interrupt_last_write(dir);
    let file = dir.join(first["file"].as_str().unwrap());
    std::fs::write(
        &file,
        "---\ntitle: Changed by hand\nstatus: proposed\ndate: 2026-11-30\n---\n",
    )
    .unwrap();
    let o = call(dir, "knowledge.create", &keyed("Changed"), &[]);
    let err = support::stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(err.contains("indeterminate"), "{err}");
    assert_eq!(last_recovered(dir), "indeterminate");
    let changed = std::fs::read_dir(dir.join("docs/adr"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("changed"))
        .count();
    assert_eq!(changed, 1, "not applied a second time");

    // Killed after the rename, then a FIFO put in place of the file: settlement does not block
    // on it (it is not a regular file) and the outcome is indeterminate.
    let first = ok(dir, "knowledge.create", &keyed("Fifo"));
    interrupt_last_write(dir);
    let file = dir.join(first["file"].as_str().unwrap());
    std::fs::remove_file(&file).unwrap();
    let c = std::ffi::CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = call(dir, "knowledge.create", &keyed("Fifo"), &[]);
    assert_eq!(o.status.code(), Some(5), "{}", support::stderr(&o));
    assert_eq!(last_recovered(dir), "indeterminate");
    std::fs::remove_file(&file).unwrap();
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

#[test]
fn a_planted_intent_naming_a_path_outside_is_settled_without_leaving_the_repository() {
    let d = repo_with_state();
    let dir = d.path();
    let o = tempfile::tempdir().unwrap();
    // A file the settlement's sweep of temporary files would delete, were it to follow the path.
    let bait = o.path().join(".victim.seneschal-1-2.tmp");
    std::fs::write(&bait, "kept").unwrap();
    let before = snapshot(o.path());
    let up = "../".repeat(dir.components().count());
    let target = format!(
        "{up}{}/victim",
        o.path().display().to_string().trim_start_matches('/')
    );
    // Append a chain-valid intent (no key is needed to extend a plain chain) and anchor it.
    let records = log(dir);
    let last = records.last().unwrap();
    let mut intent = last.clone();
    let m = intent.as_object_mut().unwrap();
    m.clear();
    m.insert("phase".into(), json!("intent"));
    m.insert("capability".into(), json!("knowledge.create"));
    m.insert("transport".into(), json!("cli"));
    m.insert("input_digest".into(), json!("sha256:00"));
    m.insert("paths".into(), json!([target]));
    m.insert(
        "targets".into(),
        json!([{ "path": target, "before": "absent", "after": "absent" }]),
    );
    m.insert("key_hash".into(), Value::Null);
    m.insert("seq".into(), json!(records.len() + 1));
    m.insert("prev".into(), last["hash"].clone());
    let h = format!("sha256:{:x}", Sha256::digest(canonical(&intent).as_bytes()));
    intent["hash"] = json!(h);
    let mut text = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl")).unwrap();
    text.push_str(&(canonical(&intent) + "\n"));
    std::fs::write(dir.join(".seneschal/audit.jsonl"), text).unwrap();
    let anchor = json!({ "count": records.len() + 1, "last": h });
    std::fs::write(
        dir.join(".seneschal/audit.anchor"),
        canonical(&anchor) + "\n",
    )
    .unwrap();
    assert!(verify(dir, &[]).status.success());

    // The next write settles it: the path is refused, the outcome indeterminate, nothing
    // outside read or removed, and the write itself applies.
    let w = ok(dir, "knowledge.create", &create("After the plant"));
    assert_eq!(w["applied"], true);
    let settled = log(dir)
        .into_iter()
        .find(|r| r["intent"] == json!(records.len() + 1))
        .unwrap();
    assert_eq!(settled["outcome"], "indeterminate", "{settled}");
    assert_eq!(
        snapshot(o.path()),
        before,
        "the outside folder is byte-identical"
    );
    assert!(bait.exists());
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

#[test]
fn an_intent_that_cannot_be_appended_writes_nothing_and_its_torn_line_is_cut() {
    use std::os::unix::process::CommandExt;
    let d = repo_with_state();
    let dir = d.path();
    let log_path = dir.join(".seneschal/audit.jsonl");
    let size = std::fs::metadata(&log_path).unwrap().len();
    let before = snapshot(dir);
    // The log may grow by 100 bytes only: the intent's append is cut short (EFBIG; SIGXFSZ
    // ignored, as its disposition survives exec), after the lock and the anchor were opened.
    let limit = size + 100;
    let mut input = create("Too big for the log");
    input["idempotency_key"] = json!("efbig");
    let mut cmd = Command::new(support::bin());
    cmd.args([
        "call",
        "knowledge.create",
        "--yes",
        "--input",
        &input.to_string(),
    ])
    .env_remove("SENESCHAL_AUDIT_KEY")
    .current_dir(dir);
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let err = support::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error[internal]") && err.contains(".seneschal/audit.jsonl"),
        "the error names the log: {err}"
    );
    // Nothing but the torn intent: no object, no key, the anchor unchanged.
    let after = snapshot(dir);
    let changed: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(changed, [".seneschal/audit.jsonl"], "{err}");
    let torn = std::fs::read(&log_path).unwrap();
    assert_eq!(torn.len() as u64, limit, "the append was cut at the limit");
    assert_ne!(torn.last(), Some(&b'\n'));
    // The next write cuts the torn line and applies the retry once.
    let a = ok(dir, "knowledge.create", &input);
    assert_eq!(
        (a["applied"].clone(), a["replayed"].clone()),
        (json!(true), json!(false))
    );
    let again = ok(dir, "knowledge.create", &input);
    assert_eq!(again["replayed"], true);
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

#[test]
fn a_crash_between_staging_and_renaming_is_settled_not_applied_and_its_temporaries_swept() {
    // A write appends its intent, stages its new files beside their targets (temporary
    // names), syncs the log and those files together, and only then renames. A crash after
    // the staging leaves the intent without an outcome, the targets as they were and the
    // temporaries: the next write settles the intent as not applied and removes them.
    let d = support::adr_repo();
    let dir = d.path();
    let input = json!({ "path": "notes/staged.md", "content": "staged\n" });
    ok(dir, "files.write", &input);
    let records = log(dir);
    let intent = records[records.len() - 2].clone();
    assert_eq!(
        (
            intent["phase"].as_str(),
            records[records.len() - 1]["phase"].as_str()
        ),
        (Some("intent"), Some("outcome"))
    );
    assert_eq!(intent["key_hash"], Value::Null, "an unkeyed write");
    // Rewind to the crash: no outcome, the anchor counting the intent, the file not renamed
    // into place but staged beside it.
    drop_the_outcome(dir, records.len(), &intent);
    std::fs::remove_file(dir.join("notes/staged.md")).unwrap();
    let staged = dir.join("notes/.staged.md.seneschal-1-1.tmp");
    std::fs::write(&staged, "staged\n").unwrap();
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        support::stdout(&v).contains("1 write intent(s) wait"),
        "{}",
        support::stdout(&v)
    );
    ok(
        dir,
        "files.write",
        &json!({ "path": "notes/next.md", "content": "next\n" }),
    );
    let settled = log(dir)
        .into_iter()
        .find(|r| r["phase"] == "outcome" && r["intent"] == intent["seq"])
        .expect("the intent is settled");
    assert_eq!(
        (settled["outcome"].as_str(), settled["recovered"].as_bool()),
        (Some("not_applied"), Some(true))
    );
    assert!(!staged.exists(), "the staged temporary is swept");
    assert!(!dir.join("notes/staged.md").exists());
    let v = verify(dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        !support::stdout(&v).contains("wait"),
        "{}",
        support::stdout(&v)
    );
}

/// One completed syscall of a traced write: what it was (`fsync`, `rename`, …), the path its
/// first descriptor names (`strace -y`), the name it renamed from, and its line.
#[derive(Debug)]
struct Call {
    name: String,
    fd_path: String,
    from: String,
    line: String,
}

/// `seneschal call ID` in `dir` under `strace -f -y`, its completed syscalls in the order
/// they returned (a syscall another thread interleaved is placed at its return, where its
/// effect is done).
fn traced(dir: &Path, id: &str, input: &Value) -> Vec<Call> {
    let out = tempfile::NamedTempFile::new().unwrap();
    let o = Command::new("strace")
        .args(["-f", "-qq", "-y", "-s", "65536", "-o"])
        .arg(out.path())
        .args([
            "-e",
            "trace=write,fsync,fdatasync,rename,renameat,renameat2,mkdir,mkdirat",
        ])
        .arg(support::bin())
        .args(["call", id, "--yes", "--input", &input.to_string()])
        .env_remove("SENESCHAL_AUDIT_KEY")
        .current_dir(dir)
        .output()
        .expect("this test traces a write with strace (Debian: apt-get install strace)");
    assert!(o.status.success(), "{}", support::stderr(&o));
    let text = std::fs::read_to_string(out.path()).unwrap();
    let mut unfinished: BTreeMap<String, String> = BTreeMap::new();
    let mut calls = Vec::new();
    for raw in text.lines() {
        let (pid, rest) = raw.split_once(' ').unwrap_or(("", raw));
        let rest = rest.trim_start();
        let line = if let Some(start) = rest.strip_suffix(" <unfinished ...>") {
            unfinished.insert(pid.to_string(), start.to_string());
            continue;
        } else if rest.starts_with("<... ") {
            let Some(start) = unfinished.remove(pid) else {
                continue;
            };
            let end = rest.split_once("resumed>").map_or("", |(_, e)| e);
            format!("{start}{end}")
        } else {
            rest.to_string()
        };
        let Some((name, args)) = line.split_once('(') else {
            continue;
        };
        if !line.trim_end().ends_with("= 0") && !name.starts_with("write") {
            continue;
        }
        // The first descriptor's path: `5</repo/.seneschal/audit.jsonl>`.
        let fd_path = args
            .split_once('<')
            .and_then(|(_, p)| p.split_once('>'))
            .map_or("", |(p, _)| p)
            .to_string();
        let from = args.split('"').nth(1).unwrap_or_default().to_string();
        let name = match name {
            "renameat" | "renameat2" => "rename",
            "fdatasync" => "fsync",
            "mkdirat" => "mkdir",
            n => n,
        };
        calls.push(Call {
            name: name.to_string(),
            fd_path,
            from,
            line: line.clone(),
        });
    }
    calls
}

#[test]
fn a_write_renames_nothing_before_its_intent_and_bytes_are_synced_nor_records_before_its_renames_are(
) {
    // The order a power loss needs (docs/ROBUSTNESS.md, "Durability"), read off the syscalls
    // of real writes: a new file in new folders, then a replacement. Each step names the
    // guard it checks.
    let d = repo_with_state();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let log_path = dir.join(".seneschal/audit.jsonl").display().to_string();
    let state = dir.join(".seneschal").display().to_string();
    let new = json!({ "path": "deep/er/new.md", "content": "new\n" });
    let old = std::fs::read(dir.join("docs/adr/0001-first.md")).unwrap();
    let digest = format!("sha256:{:x}", Sha256::digest(&old));
    let replace = json!({
        "path": "docs/adr/0001-first.md",
        "content": "---\nid: \"0001\"\ntitle: First\nstatus: accepted\ndate: 2026-11-30\n---\n# Replaced\n",
        "expected_digest": digest,
    });
    for (input, folder) in [
        (&new, dir.join("deep/er")),
        (&replace, dir.join("docs/adr")),
    ] {
        let calls = traced(&dir, "files.write", input);
        let at = |pred: &dyn Fn(&Call) -> bool| calls.iter().position(pred);
        let is_log_write = |c: &Call, phase: &str| {
            c.name == "write"
                && c.fd_path == log_path
                && c.line.contains(&format!(r#"\"phase\":\"{phase}\""#))
        };
        let synced = |path: &str, from: usize, to: usize| {
            calls[from..to]
                .iter()
                .any(|c| c.name == "fsync" && c.fd_path == path)
        };
        let intent = at(&|c| is_log_write(c, "intent")).expect("an intent is written");
        let outcome = at(&|c| is_log_write(c, "outcome")).expect("an outcome is written");
        let folder = folder.display().to_string();
        let rename = at(&|c| c.name == "rename" && c.fd_path == folder && c.from.ends_with(".tmp"))
            .unwrap_or_else(|| panic!("the file is renamed into {folder}: {calls:#?}"));
        let staged = format!("{folder}/{}", calls[rename].from);
        // Guard 1: the intent is durable before the rename (else an unaudited change).
        assert!(
            synced(&log_path, intent, rename),
            "the log is synced between the intent and the rename: {calls:#?}"
        );
        // Guard 2: the new bytes are durable before the rename (else a torn file).
        assert!(
            synced(&staged, 0, rename),
            "the staged file is synced before its rename: {calls:#?}"
        );
        // Guard 3: the rename is durable before the outcome that says `applied`.
        assert!(
            synced(&folder, rename, outcome),
            "the folder is synced between the rename and the outcome: {calls:#?}"
        );
        // Guard 4: a folder the write created is durable in its parent before the outcome.
        for (i, mkdir) in calls.iter().enumerate().filter(|(_, c)| c.name == "mkdir") {
            if mkdir.fd_path.starts_with(&state) {
                continue;
            }
            assert!(
                synced(&mkdir.fd_path, i, outcome),
                "the parent of a created folder is synced before the outcome: {mkdir:?} {calls:#?}"
            );
        }
        // Guard 5: the anchor line written after the outcome counts as synced only the records
        // up to the intent (synced before the rename); the outcome, not synced, it names as
        // written in this boot.
        let anchor_path = format!("{state}/audit.anchor");
        let anchor = calls
            .iter()
            .rposition(|c| c.name == "write" && c.fd_path == anchor_path)
            .unwrap_or_else(|| panic!("an anchor line is written: {calls:#?}"));
        assert!(outcome < anchor, "{calls:#?}");
        let number = |c: &Call, key: &str| -> u64 {
            let pattern = format!(r#"\"{key}\":"#);
            let at = c.line.rfind(&pattern).unwrap_or_else(|| {
                panic!("{key} in {}", c.line);
            }) + pattern.len();
            c.line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap()
        };
        let last_sync = calls[..anchor]
            .iter()
            .rposition(|c| c.name == "fsync" && c.fd_path == log_path)
            .expect("the log is synced before the anchor line");
        assert!(
            intent < last_sync && last_sync < outcome,
            "the last sync before the anchor line holds the intent, not the outcome: {calls:#?}"
        );
        assert_eq!(
            number(&calls[anchor], "count"),
            number(&calls[intent], "seq"),
            "the anchor counts as synced the records up to the intent: {calls:#?}"
        );
        assert_eq!(
            number(&calls[anchor], "written"),
            number(&calls[outcome], "seq"),
            "and names the outcome as written: {calls:#?}"
        );
        assert!(calls[anchor].line.contains(r#"\"boot\":"#), "{calls:#?}");
    }
    let v = verify(&dir, &[]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

#[test]
fn a_verify_that_a_write_overtakes_reports_no_truncation() {
    // `audit verify` takes no lock: a write landing between its reads of the anchor and of
    // the log must not read as records dropped. A debug build pauses between the two reads.
    let d = support::adr_repo();
    let dir = d.path();
    ok(dir, "knowledge.create", &create("Before"));
    let verifying = Command::new(support::bin())
        .args(["audit", "verify"])
        .env("SENESCHAL_DEBUG_VERIFY_PAUSE_MS", "1500")
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    ok(dir, "knowledge.create", &create("Meanwhile"));
    let v = verifying.wait_with_output().unwrap();
    assert!(v.status.success(), "{}", support::stderr(&v));
    assert!(
        support::stdout(&v).contains("anchor matches"),
        "{}",
        support::stdout(&v)
    );
}
