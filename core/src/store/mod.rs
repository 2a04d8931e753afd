//! The one store every repository write goes through.
//!
//! * **Lock.** A call holds `.seneschal/lock` exclusively (`flock`, which is what the
//!   standard library's `File::lock` does from Rust 1.89, above this crate's MSRV) from its
//!   digest check to its outcome record, so two processes on one repository serialize their
//!   writes.
//! * **State by handle.** `.seneschal/` is opened from a handle of the root with
//!   `O_NOFOLLOW | O_DIRECTORY`, and the lock, the audit log, its anchor and the keys relative
//!   to that handle with `O_NOFOLLOW`, each checked by `fstat` to be a regular file with one
//!   link (`fs.rs`): a link, a folder or a FIFO in their place is refused, and nothing outside
//!   the repository is created, read or written.
//! * **Whole files.** A file is written to a temporary name in its own folder, fsynced, renamed
//!   over the target and the folder fsynced: a reader (or a crash) sees the old version or the
//!   new one, never a mix.
//! * **No check-then-use race.** Paths pass [`seneschal_access::confine::confine`] first, then every
//!   operation is relative to a directory descriptor opened one component at a time from the
//!   repository root with `O_NOFOLLOW | O_DIRECTORY` (`openat`, `mkdirat`, `renameat`,
//!   `unlinkat` through `libc`). A symbolic link swapped into the path after the check makes
//!   the open fail, so a write never leaves the repository; writes never follow links at all.
//! * **Write-ahead audit.** A write appends and fsyncs an *intent* record (targets with their
//!   digests before and after, the request digest, the idempotency key's hash) before anything
//!   is renamed, reserves its idempotency key, applies, and appends an *outcome* record. If the
//!   intent cannot be appended nothing is written. Every session under the lock first
//!   **settles** the intents left without an outcome (a kill between two syscalls) by
//!   comparing each target's digest with the intent's: `applied` (the key's answer is
//!   confirmed) or `not_applied` (the key is released). Every attempt leaves a record; dry runs
//!   are not attempts. The log, its anchor and the keyed chain are in [`audit`].
//! * **Durability, in two waits.** A power loss keeps only what was synced, in any order, so
//!   a write orders its syncs: (1) the intent appended and every new file staged under a
//!   temporary name, then the log and the staged files synced together, one wait — nothing is
//!   renamed before its intent and its bytes are durable (a rename outliving its intent would
//!   be unaudited, a rename outliving its bytes torn); (2) the renames, then each touched
//!   folder synced once — the renames are durable before the answer. Then the outcome is
//!   appended and an anchor line written, neither synced: the line counts as synced the
//!   records up to the intent and names the outcome as written in this boot, so a verifier in
//!   the same boot (nothing the kernel held is lost) holds the log to the outcome, and after a
//!   restart to the intent, which the next session settles `applied` from the digests. The
//!   next write's first sync makes the outcome durable. A keyed write syncs its intent alone
//!   first (its key's reservation names it). `docs/ROBUSTNESS.md` ("Durability") has the table.
//! * **Idempotency keys** live in `.seneschal/idempotency/<sha256 of key>.json` (`keys.rs`):
//!   the normalized request digest, the answer and an expiry (24 h), read and written under
//!   the lock, so they hold across processes. Every keyed write deletes the expired ones.
//!
//! How a call arrived and how it was approved are recorded from its [`CallRecord`], which
//! the executor hands down with the call (`Call::record`); a handler passes it on and never
//! reads it.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use seneschal_access::error::CapabilityError;
use seneschal_access::text::hex;
use seneschal_access::transport::Transport;

pub mod audit;
pub mod desk;
mod fs;
mod keys;
mod target;

pub use audit::{records, verify, Verified, ANCHOR, KEY_ENV};
pub use fs::{exists, read, remove, write, write_mode};
use fs::{io_err, Mode};
pub use target::{tree_writes, BranchName, GitFile, Target, TreePath, Write};

/// The state folder, relative to the repository root.
pub const STATE_DIR: &str = ".seneschal";
/// The audit log, relative to the repository root.
pub const AUDIT_LOG: &str = ".seneschal/audit.jsonl";
/// How long an idempotency key holds.
pub const KEY_TTL: Duration = Duration::from_secs(24 * 3600);
/// The `prev` of the first audit record.
pub const GENESIS: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// The exit code of `seneschal audit verify` when the chain is broken (the codes table's).
pub use seneschal_model::codes::EXIT_BROKEN;
/// What `.seneschal/.gitignore` says: everything there is per-machine state, never committed
/// and never shown as untracked (the file itself included), but the repository's own content
/// kept there (its kinds, their schemas, its knowledge objects).
const GITIGNORE: &str = "# Written by seneschal: per-machine write state, never committed.\n*\n!kinds.yaml\n!schemas/\n!schemas/**\n!knowledge/\n!knowledge/**\n";
/// What `.seneschal/.gitignore` said in earlier versions (rewritten when found): before the
/// anchor existed, before the approval desk, and before it ignored everything.
const GITIGNORE_OLD: [&str; 3] = [
    "# Written by seneschal: per-machine write state, never committed.\nlock\nidempotency/\naudit.jsonl\n",
    "# Written by seneschal: per-machine write state, never committed.\nlock\nidempotency/\naudit.jsonl\naudit.anchor\n",
    "# Written by seneschal: per-machine write state, never committed.\nlock\nidempotency/\naudit.jsonl\naudit.anchor\ndesk/\n",
];

/// The call a write is made for, as its records name it: how it arrived and how it was
/// approved. The executor hands it down with the call ([`crate::context::Call::record`]);
/// nothing of it is kept per thread.
#[derive(Debug, Clone, Copy)]
pub struct CallRecord {
    /// How the call arrived.
    pub transport: Transport,
    /// How it was approved (`elicitation`, `desk`, `grant`, …; `None`: not asked).
    pub approved_by: Option<&'static str>,
}

impl CallRecord {
    /// `r` with `approved_by` when the call was approved.
    fn stamp(self, mut r: Value) -> Value {
        if let Some(by) = self.approved_by {
            r["approved_by"] = json!(by);
        }
        r
    }
}

/// `sha256:<hex>` of bytes.
pub fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// A JSON value with every object's keys sorted, serialized compactly.
pub fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).expect("JSON serializes")
}

/// The normalized digest of a request: capability and input, without `dry_run` and
/// `idempotency_key`, keys sorted.
pub fn request_digest(capability: &str, input: &Value) -> String {
    let mut i = input.clone();
    if let Some(m) = i.as_object_mut() {
        m.remove("idempotency_key");
        m.remove("dry_run");
    }
    digest(canonical(&json!({ "capability": capability, "input": i })).as_bytes())
}

// ---------------------------------------------------------------------------------------------
// The lock.

/// The held repository lock and the handle of the state folder; released when dropped.
pub struct Locked {
    _file: File,
    root: PathBuf,
    state: OwnedFd,
}

/// Takes the repository's write lock, creating `.seneschal/` (with its `.gitignore`) first.
/// The folder and the lock are opened through handles without following links: a link, a
/// folder or a FIFO in place of either is refused, and nothing is created outside.
pub fn lock(root: &Path) -> Result<Locked, CapabilityError> {
    Ok(lock_state(root, true)?.expect("created"))
}

/// [`lock`], creating `.seneschal/` only when `create` is set (`None` when it is absent).
fn lock_state(root: &Path, create: bool) -> Result<Option<Locked>, CapabilityError> {
    let Some(state) = fs::open_state(root, create)? else {
        return Ok(None);
    };
    let ignore = ".gitignore";
    let rewrite = if fs::exists_at(&state, ignore) {
        fs::read_state(&state, ignore, ".seneschal/.gitignore")
            .ok()
            .flatten()
            .is_some_and(|b| GITIGNORE_OLD.iter().any(|old| b == old.as_bytes()))
    } else {
        true
    };
    if rewrite {
        let _ = fs::write_at(
            &state,
            ignore,
            ".seneschal/.gitignore",
            GITIGNORE.as_bytes(),
        );
    }
    let file =
        fs::open_state_file(&state, "lock", ".seneschal/lock", Mode::Create)?.expect("created");
    // `flock(LOCK_EX)`: what `File::lock` does, which needs Rust 1.89 (the MSRV is 1.85).
    loop {
        // SAFETY: `file` is an open descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(io_err("cannot lock .seneschal/lock", e));
        }
    }
    Ok(Some(Locked {
        _file: file,
        root: root.to_path_buf(),
        state,
    }))
}

fn now() -> SystemTime {
    SystemTime::now()
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// RFC 3339 UTC time with seconds (its one home is [`seneschal_access::text::rfc3339`]).
pub use seneschal_access::text::rfc3339;

// ---------------------------------------------------------------------------------------------
// A session: the lock, the open log, the settlement of interrupted writes.

/// The spelling of a missing file in an intent's digests.
const ABSENT: &str = "absent";

struct Session {
    locked: Locked,
    log: audit::Log,
    /// The repository's digest key ([`DIGEST_KEY`]).
    key: [u8; 32],
}

/// The key of the digests an intent records (`.seneschal/digest.key`, 32 random bytes made
/// by the first write; a secret-bearing name, so no reader serves it). The audit log is
/// readable repository content: a plain hash of a file holding a secret there would let a
/// guess at the secret be confirmed offline; a keyed one confirms nothing without the key.
pub const DIGEST_KEY: &str = ".seneschal/digest.key";

/// The repository's digest key, made on first use.
fn digest_key(state: &OwnedFd) -> Result<[u8; 32], CapabilityError> {
    let name = "digest.key";
    if let Some(bytes) = fs::read_state(state, name, DIGEST_KEY)? {
        if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
            return Ok(key);
        }
    }
    let key = seneschal_access::text::random::<32>();
    fs::write_at(state, name, DIGEST_KEY, &key)?;
    Ok(key)
}

/// `hmac-sha256:<hex>` of `bytes` under the repository's digest key: what an intent records
/// of a target, before and after.
fn keyed_digest(key: &[u8; 32], bytes: &[u8]) -> String {
    format!(
        "hmac-sha256:{}",
        hex(&seneschal_access::text::hmac_sha256(key, bytes))
    )
}

impl Session {
    /// Takes the lock, opens the log (with the key of `SENESCHAL_AUDIT_KEY`, if set) and
    /// settles every intent left without an outcome.
    fn open(root: &Path) -> Result<Session, CapabilityError> {
        Ok(Session::open_if(root, true)?.expect("created"))
    }

    /// [`Session::open`], or `None` when `.seneschal/` is absent and `create` is not set.
    fn open_if(root: &Path, create: bool) -> Result<Option<Session>, CapabilityError> {
        let Some(locked) = lock_state(root, create)? else {
            return Ok(None);
        };
        let key = audit::env_key(root)?;
        let log = audit::Log::open(&locked.state, key)?;
        let key = digest_key(&locked.state)?;
        let mut s = Session { locked, log, key };
        s.settle()?;
        Ok(Some(s))
    }

    fn append(&mut self, record: Value) -> Result<Value, CapabilityError> {
        self.log.append(&self.locked.state, record)
    }

    fn append_unanchored(&mut self, record: Value) -> Result<Value, CapabilityError> {
        self.log.append_unanchored(record)
    }

    /// Settles each pending intent: the key first (confirmed when applied, released
    /// otherwise), then the outcome record, so a crash in between settles it again the same way.
    fn settle(&mut self) -> Result<(), CapabilityError> {
        for intent in std::mem::take(&mut self.log.pending) {
            let status = evaluate(&self.locked.root, &self.key, &intent["targets"]);
            for t in intent["targets"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                fs::sweep_temporaries_of(&self.locked.root, t["path"].as_str().unwrap_or_default());
            }
            if let Some(h) = intent["key_hash"].as_str() {
                keys::settle(&self.locked, h, status)?;
            }
            let mut r = outcome_record(
                intent["capability"].as_str().unwrap_or_default(),
                intent["transport"].as_str().unwrap_or("unknown"),
                intent["input_digest"].as_str().unwrap_or_default(),
                &intent["paths"],
                intent["seq"].as_u64(),
                status,
                None,
            );
            r["recovered"] = json!(true);
            self.append(r)?;
        }
        Ok(())
    }
}

/// Where the targets of an intent stand: `applied` (every one holds its new digest),
/// `not_applied` (every one its old digest) or `indeterminate` (something else changed them).
fn evaluate(root: &Path, key: &[u8; 32], targets: &Value) -> &'static str {
    let (mut new, mut old) = (true, true);
    for t in targets.as_array().map(Vec::as_slice).unwrap_or_default() {
        let now = match read(root, t["path"].as_str().unwrap_or_default()) {
            // Intents of earlier versions recorded plain digests.
            Ok(Some(b))
                if t["after"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("sha256:")) =>
            {
                digest(&b)
            }
            Ok(Some(b)) => keyed_digest(key, &b),
            Ok(None) => ABSENT.to_string(),
            Err(_) => return "indeterminate",
        };
        new &= t["after"].as_str() == Some(now.as_str());
        old &= t["before"].as_str() == Some(now.as_str());
    }
    if new {
        "applied"
    } else if old {
        "not_applied"
    } else {
        "indeterminate"
    }
}

fn record(phase: &str, capability: &str, transport: &str, request: &str, paths: &Value) -> Value {
    json!({
        "phase": phase,
        "time": rfc3339(unix(now())),
        "capability": capability,
        "transport": transport,
        "input_digest": request,
        "paths": paths,
        "server_digest": crate::registry::projections::DIGEST.trim(),
    })
}

fn outcome_record(
    capability: &str,
    transport: &str,
    request: &str,
    paths: &Value,
    intent: Option<u64>,
    outcome: &str,
    err: Option<&CapabilityError>,
) -> Value {
    let mut r = record("outcome", capability, transport, request, paths);
    r["outcome"] = json!(outcome);
    r["code"] = err.map_or(Value::Null, |e| json!(e.code.as_str()));
    r["intent"] = json!(intent);
    r
}

/// Records a write attempt refused before it reached a handler (the effect profile, an input
/// that is not an object or breaks the schema). Best effort: when the state folder or the
/// log is itself refused there is nowhere to record, and the refusal stands anyway.
///
/// `may_create` is false in a process whose effect profile forbids repository writes: such a
/// process records into an existing `.seneschal/` but never creates one (creating it would
/// be the very write its profile forbids).
pub fn audit_rejected(
    root: &Path,
    transport: Transport,
    capability: &str,
    input: &Value,
    err: &CapabilityError,
    may_create: bool,
    attempted: &str,
) {
    if let Ok(Some(mut s)) = Session::open_if(root, may_create) {
        let mut r = outcome_record(
            capability,
            transport.as_str(),
            &request_digest(capability, input),
            &json!([]),
            None,
            "refused",
            Some(err),
        );
        // What was attempted, as a person reads it (the review sentence, redacted and
        // bounded by the caller): a refused write names itself on the feed.
        if !attempted.is_empty() {
            r["review"] = json!(attempted);
        }
        let _ = s.append(r);
    }
}

/// What a write does, for the plan and the audit.
#[derive(Debug, Default, Clone)]
pub struct Effects {
    /// Files created.
    pub create: Vec<String>,
    /// Files changed.
    pub change: Vec<String>,
    /// Files deleted.
    pub delete: Vec<String>,
}

impl Effects {
    /// Every path.
    pub fn paths(&self) -> Vec<String> {
        self.create
            .iter()
            .chain(&self.change)
            .chain(&self.delete)
            .cloned()
            .collect()
    }

    /// The plan as JSON.
    pub fn plan(&self) -> Value {
        json!({
            "create": self.create, "change": self.change, "delete": self.delete,
            "counts": { "create": self.create.len(), "change": self.change.len(), "delete": self.delete.len() },
        })
    }
}

pub use seneschal_access::limits::DIFF_CAP;

/// What an intent record shows of its change, for the person reading the audit (the cockpit's
/// activity feed): the unified diff of every text file it writes outside `.git/`, redacted,
/// with its line counts. A file the content gate withholds (a secret-bearing name, a private
/// key block on either side) and a binary file are named, never shown.
#[derive(Default)]
struct Shown {
    diff: String,
    added: u64,
    removed: u64,
    withheld: Vec<String>,
    truncated: bool,
}

impl Shown {
    /// Whether a diff of `path` is shown at all (nothing under `.git/` is).
    fn shows(path: &str) -> bool {
        !(path == ".git" || path.starts_with(".git/"))
    }

    fn add(&mut self, path: &str, old: Option<&[u8]>, new: Option<&[u8]>) {
        if !Shown::shows(path) {
            return;
        }
        let gated = seneschal_access::gate::name(path).is_some()
            || old.is_some_and(|b| seneschal_access::gate::content(b).is_some())
            || new.is_some_and(|b| seneschal_access::gate::content(b).is_some());
        let (Some(a), Some(b), false) = (as_text(old), as_text(new), gated) else {
            self.withheld.push(path.to_string());
            return;
        };
        let d = seneschal_access::udiff::unified(old.map(|_| path), new.map(|_| path), a, b);
        self.added += d.added;
        self.removed += d.removed;
        let (text, _) = seneschal_access::redact::redact(&d.text);
        if self.diff.len() + text.len() > DIFF_CAP {
            let room = DIFF_CAP.saturating_sub(self.diff.len());
            let cut = (0..=room)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            self.diff.push_str(&text[..cut]);
            self.truncated = true;
        } else {
            self.diff.push_str(&text);
        }
    }

    fn into_record(self, r: &mut Value) {
        if self.diff.is_empty() && self.withheld.is_empty() {
            return;
        }
        r["diff"] = json!(self.diff);
        r["lines"] = json!({"added": self.added, "removed": self.removed});
        if self.truncated {
            r["diff_truncated"] = json!(true);
        }
        if !self.withheld.is_empty() {
            r["diff_withheld"] = json!(self.withheld);
        }
    }
}

/// A side of a diff as text: an absent file is empty, a binary one `None`.
fn as_text(b: Option<&[u8]>) -> Option<&str> {
    b.map_or(Some(""), seneschal_access::udiff::text)
}

/// A prepared write: the files to replace (`None` deletes), what it does, and its answer.
pub struct Plan<A = Value> {
    /// Where each write lands and its new bytes (`None`: delete). A replaced file keeps its
    /// permission bits unless `modes` names its path.
    pub writes: Vec<Write>,
    /// Exact permission bits for some of the written paths (a checked-out executable).
    pub modes: Vec<(String, u32)>,
    /// What the write does.
    pub effects: Effects,
    /// The answer once applied.
    pub answer: A,
}

/// A write planned before the person was asked about it: the plan itself (what the question
/// showed) and the digest each target had when it was planned (`absent` for a missing file).
/// [`apply_planned`] applies exactly this plan, and only while every target still has that
/// digest.
pub struct Planned {
    plan: Plan,
    before: Vec<String>,
    /// The request as the write's runner keys and audits it.
    input: Value,
}

impl Planned {
    /// `plan` of the request `input` (as its runner keys and audits it), as the files stand
    /// now.
    pub fn new(root: &Path, input: &Value, plan: Plan) -> Result<Planned, CapabilityError> {
        let before = plan
            .writes
            .iter()
            .map(|(t, _)| {
                Ok(read(root, &t.rel())?.map_or_else(|| ABSENT.to_string(), |b| digest(&b)))
            })
            .collect::<Result<_, CapabilityError>>()?;
        Ok(Planned {
            plan,
            before,
            input: input.clone(),
        })
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The unified diff of every text file the plan writes outside `.git/`, redacted and cut
    /// at [`DIFF_CAP`] (a secret-bearing or binary file named, never shown): what the
    /// question shows, from the same bytes the store applies.
    pub fn diff(&self, root: &Path) -> Value {
        let mut shown = Shown::default();
        for (target, bytes) in &self.plan.writes {
            let path = target.rel();
            if !Shown::shows(&path) {
                continue;
            }
            let old = read(root, &path).ok().flatten();
            shown.add(&path, old.as_deref(), bytes.as_deref());
        }
        let mut r = json!({});
        shown.into_record(&mut r);
        r
    }
}

/// What planning a write (a planning [`crate::context::Call`]) produced instead of applying
/// it.
pub enum Captured {
    /// The write, planned.
    Plan(Planned),
    /// The answer its idempotency key already holds: nothing to ask, nothing to apply.
    Replay(Value),
}

/// The answer a keyed write already has ([`transact`]'s replay, audited as `replayed`), or
/// `None` when the input carries no key or its key is new. A key reused for another request
/// is the error (`conflict`), which the executor audits as the refusal it is.
pub fn replayed(
    root: &Path,
    call: CallRecord,
    capability: &str,
    input: &Value,
) -> Result<Option<Value>, CapabilityError> {
    let Some(key) = input.get("idempotency_key").and_then(Value::as_str) else {
        return Ok(None);
    };
    let mut s = Session::open(root)?;
    replay(
        &mut s,
        call,
        capability,
        &request_digest(capability, input),
        key,
    )
}

/// The answer `key` already holds for `request`, audited as `replayed`; `None` for a new key;
/// `conflict` for a key of another request (the caller audits the refusal).
fn replay(
    s: &mut Session,
    call: CallRecord,
    capability: &str,
    request: &str,
    key: &str,
) -> Result<Option<Value>, CapabilityError> {
    match keys::check(&s.locked, key, request)? {
        keys::Replay::Same(mut result) => {
            result["replayed"] = json!(true);
            s.append(call.stamp(outcome_record(
                capability,
                call.transport.as_str(),
                request,
                &json!([]),
                None,
                "replayed",
                None,
            )))?;
            Ok(Some(result))
        }
        keys::Replay::None => Ok(None),
    }
}

/// Applies a write planned before its question ([`Planned`]) as [`transact`] applies one
/// planned under the lock, after one more check under the lock: every target still has the
/// digest it had when it was planned. Anything changed since is a `conflict`, and nothing is
/// written: the person approved that plan, on those bytes.
pub fn apply_planned(
    root: &Path,
    call: CallRecord,
    capability: &str,
    planned: Planned,
) -> Result<Value, CapabilityError> {
    let Planned {
        plan,
        before,
        input,
    } = planned;
    run(root, call, capability, &input, Some(&before), |_| Ok(plan))
}

/// Runs one write under the lock: settles interrupted writes, answers a replayed idempotency
/// key, runs `prepare` (which checks digests and builds the new bytes), appends the intent
/// (nothing is written when that fails), reserves the key, applies, confirms the key and
/// appends the outcome. `prepare` receives the lock as proof it is held.
pub fn transact(
    root: &Path,
    call: CallRecord,
    capability: &str,
    input: &Value,
    prepare: impl FnOnce(&Locked) -> Result<Plan, CapabilityError>,
) -> Result<Value, CapabilityError> {
    run(root, call, capability, input, None, prepare)
}

/// The size above which a target's two digests are computed at once, on two threads.
const PARALLEL_DIGEST: usize = 1 << 20;

/// [`transact`], with the digests every target must still have (`expected`, in the order of
/// the plan's writes) when the plan was made before the lock.
fn run(
    root: &Path,
    call: CallRecord,
    capability: &str,
    input: &Value,
    expected: Option<&[String]>,
    prepare: impl FnOnce(&Locked) -> Result<Plan, CapabilityError>,
) -> Result<Value, CapabilityError> {
    let mut s = Session::open(root)?;
    let request = request_digest(capability, input);
    let key = input.get("idempotency_key").and_then(Value::as_str);
    let t = call.transport.as_str();
    let refused = |s: &mut Session, e: CapabilityError| {
        s.append(outcome_record(
            capability,
            t,
            &request,
            &json!([]),
            None,
            "refused",
            Some(&e),
        ))?;
        Err(e)
    };
    if let Some(key) = key {
        match replay(&mut s, call, capability, &request, key) {
            Ok(Some(result)) => return Ok(result),
            Ok(None) => {}
            Err(e) => return refused(&mut s, e),
        }
    }
    let plan = match prepare(&s.locked) {
        Ok(p) => p,
        Err(e) => return refused(&mut s, e),
    };
    let paths = json!(plan.effects.paths());
    let mut targets = Vec::new();
    let mut shown = Shown::default();
    for (target, bytes) in &plan.writes {
        let path = &target.rel();
        let old = match read(root, path) {
            Ok(b) => b,
            Err(e) => return refused(&mut s, e),
        };
        let key = s.key;
        let keyed =
            |b: Option<&[u8]>| b.map_or_else(|| ABSENT.to_string(), |b| keyed_digest(&key, b));
        // The two digests of a large file (an index of a big repository) on two threads.
        let (recorded, after) = if old
            .as_ref()
            .zip(bytes.as_ref())
            .is_some_and(|(o, n)| o.len().min(n.len()) > PARALLEL_DIGEST)
        {
            std::thread::scope(|scope| {
                let after = scope.spawn(|| keyed(bytes.as_deref()));
                let recorded = keyed(old.as_deref());
                (
                    recorded,
                    after.join().unwrap_or_else(|_| keyed(bytes.as_deref())),
                )
            })
        } else {
            (keyed(old.as_deref()), keyed(bytes.as_deref()))
        };
        if let Some(then) = expected.and_then(|e| e.get(targets.len())) {
            // The plain digest only where a planned write is checked against it.
            let before = old.as_deref().map_or_else(|| ABSENT.to_string(), digest);
            if *then != before {
                return refused(
                    &mut s,
                    CapabilityError::conflict(format!(
                        "`{path}` changed after the write was planned and shown for approval: \
                         nothing was written; make the call again to plan it on the file as it \
                         is now"
                    ))
                    .with_data(json!({"path": path})),
                );
            }
        }
        shown.add(path, old.as_deref(), bytes.as_deref());
        targets.push(json!({ "path": path, "before": recorded, "after": after }));
    }
    let targets = Value::Array(targets);
    let mut intent = record("intent", capability, t, &request, &paths);
    intent["targets"] = targets.clone();
    shown.into_record(&mut intent);
    // The sentence a person approved (or would have), redacted: what the audit's reader (the
    // cockpit's activity feed) shows of a write whose files are all under `.git/`.
    if let Some(review) = plan.answer.get("review").and_then(Value::as_str) {
        intent["review"] = json!(seneschal_access::redact::redact(review).0);
    }
    intent["key_hash"] = key.map_or(Value::Null, |k| json!(keys::key_hash(k)));
    // Write-ahead: nothing is renamed into place before the intent is durable. A keyed
    // write syncs it at once (the key's reservation names it); otherwise it is synced
    // together with the staged files and the anchor, in `apply`.
    let seq = if key.is_some() {
        s.append_unanchored(call.stamp(intent))?
    } else {
        s.log.append_unsynced(call.stamp(intent))?
    }["seq"]
        .as_u64()
        .expect("a seq");
    let outcome = |s: &mut Session, word: &str, e: Option<&CapabilityError>| {
        s.append(call.stamp(outcome_record(
            capability,
            t,
            &request,
            &paths,
            Some(seq),
            word,
            e,
        )))
    };
    if let Some(k) = key {
        if let Err(e) = keys::reserve(&s.locked, k, &request, &plan.answer, seq) {
            outcome(&mut s, "failed", Some(&e))?;
            return Err(e);
        }
    }
    let applied = apply(root, &mut s, &plan);
    let status = match &applied {
        Ok(()) => "applied",
        Err(_) => evaluate(root, &s.key, &targets),
    };
    if status == "applied" {
        // The key is confirmed before the outcome: if that fails the intent stays pending
        // and the next session settles it (confirming the key then).
        if let Some(h) = key.map(keys::key_hash) {
            if keys::settle(&s.locked, &h, "applied").is_err() {
                return Ok(plan.answer);
            }
        }
        // The write is applied, its intent durable and its renames too: the outcome is
        // appended and anchored as written in this boot, not synced (the next write's sync
        // makes it durable; a power loss before that leaves the intent for the next session
        // to settle `applied` from the digests). A failing append leaves the intent the same
        // way, and the answer stands.
        let record = call.stamp(outcome_record(
            capability,
            t,
            &request,
            &paths,
            Some(seq),
            "applied",
            None,
        ));
        if s.log.append_unsynced(record).is_ok() {
            let _ = s.log.anchor(&s.locked.state);
        }
        return Ok(plan.answer);
    }
    let e = applied.expect_err("not applied means an error");
    if let Some(h) = key.map(keys::key_hash) {
        keys::settle(&s.locked, &h, status)?;
    }
    let word = if e.code == seneschal_model::codes::ErrorCode::Refused {
        "refused"
    } else {
        "failed"
    };
    outcome(&mut s, word, Some(&e))?;
    Err(e)
}

/// Applies a plan whose intent is appended (synced or not): every new file is staged beside
/// its target, then the log and every staged file are synced at once, on as many threads;
/// only then is each file renamed over its target (a deletion unlinked) in the plan's order,
/// and each touched folder synced once, so that the renames are durable before the outcome
/// that records them.
fn apply(root: &Path, s: &mut Session, plan: &Plan) -> Result<(), CapabilityError> {
    let mut staged = Vec::new();
    for (target, bytes) in &plan.writes {
        if let Some(b) = bytes {
            let path = target.rel();
            let mode = plan.modes.iter().find(|(p, _)| *p == path).map(|(_, m)| *m);
            staged.push(fs::stage(root, &path, b, mode)?);
        }
    }
    std::thread::scope(|scope| {
        let others: Vec<_> = staged
            .iter()
            .map(|f| scope.spawn(move || f.sync()))
            .collect();
        let log = s.log.sync();
        others
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io_err("a sync", "panicked")))
            })
            .fold(log, Result::and)
    })?;
    let mut staged = staged.into_iter();
    let mut folders: Vec<(String, OwnedFd)> = Vec::new();
    for (target, bytes) in &plan.writes {
        let path = target.rel();
        if bytes.is_none() {
            remove(root, &path)?;
            continue;
        }
        let dir = staged.next().expect("one staged file a write").commit()?;
        let folder = path.rsplit_once('/').map_or("", |(f, _)| f).to_string();
        if !folders.iter().any(|(f, _)| *f == folder) {
            folders.push((folder, dir));
        }
    }
    for (folder, dir) in &folders {
        fs::sync_dir(dir, folder)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn request_digest_ignores_key_order_dry_run_and_key() {
        let a = json!({"b": 1, "a": {"y": 2, "x": 1}, "idempotency_key": "k"});
        let b = json!({"a": {"x": 1, "y": 2}, "b": 1, "dry_run": false});
        assert_eq!(request_digest("c", &a), request_digest("c", &b));
        assert_ne!(request_digest("c", &a), request_digest("d", &a));
    }
}
