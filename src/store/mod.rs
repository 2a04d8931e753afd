//! The one store every repository write goes through.
//!
//! * **Lock.** A call holds `.seneschal/lock` exclusively (`flock`, which is what the
//!   standard library's `File::lock` does from Rust 1.89, above this crate's MSRV) from its
//!   digest check to its audit record, so two processes on one repository serialize their
//!   writes.
//! * **Whole files.** A file is written to a temporary name in its own folder, fsynced, renamed
//!   over the target and the folder fsynced: a reader (or a crash) sees the old version or the
//!   new one, never a mix.
//! * **No check-then-use race.** Paths pass [`crate::confine::confine`] first, then every
//!   operation is relative to a directory descriptor opened one component at a time from the
//!   repository root with `O_NOFOLLOW | O_DIRECTORY` (`openat`, `mkdirat`, `renameat`,
//!   `unlinkat` through `libc`). A symbolic link swapped into the path after the check makes
//!   the open fail, so a write never leaves the repository; writes never follow links at all.
//! * **Idempotency keys** live in `.seneschal/idempotency/<sha256 of key>.json`:
//!   the normalized request digest, the answer and an expiry (24 h), read and written under
//!   the lock, so they hold across processes. Every keyed write deletes the expired ones.
//! * **Audit.** Every write attempt that reaches the store, applied or refused, appends one
//!   JSON line to `.seneschal/audit.jsonl`, hash-chained (`prev` is the previous record's
//!   `hash`; `hash` is the sha256 of the record's canonical JSON without `hash`). Dry runs are
//!   not write attempts and are not recorded. [`verify`] checks the chain.
//!
//! The transport is recorded but never handed to a handler: the executor sets it for the
//! duration of a call in a thread-local ([`TransportScope`]) that only this module reads.

use std::cell::Cell;
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::confine::{refusal, Rule};
use crate::error::CapabilityError;
use crate::execute::Transport;
use crate::knowledge::scan::hex;

/// The state folder, relative to the repository root.
pub const STATE_DIR: &str = ".seneschal";
/// The audit log, relative to the repository root.
pub const AUDIT_LOG: &str = ".seneschal/audit.jsonl";
/// How long an idempotency key holds.
pub const KEY_TTL: Duration = Duration::from_secs(24 * 3600);
/// The `prev` of the first audit record.
pub const GENESIS: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// The exit code of `seneschal audit verify` when the chain is broken.
pub const EXIT_BROKEN: u8 = 12;
/// What `.seneschal/.gitignore` says: the store's state is never committed.
const GITIGNORE: &str = "# Written by seneschal: per-machine write state, never committed.\nlock\nidempotency/\naudit.jsonl\n";

thread_local! {
    static TRANSPORT: Cell<Option<Transport>> = const { Cell::new(None) };
}

/// Sets the transport of the current call on this thread until dropped (the executor holds it
/// around the dispatch; handlers never see it).
pub struct TransportScope(Option<Transport>);

impl TransportScope {
    /// Enters a call that arrived over `t`.
    pub fn enter(t: Transport) -> TransportScope {
        TransportScope(TRANSPORT.with(|c| c.replace(Some(t))))
    }
}

impl Drop for TransportScope {
    fn drop(&mut self) {
        TRANSPORT.with(|c| c.set(self.0));
    }
}

fn transport() -> &'static str {
    TRANSPORT
        .with(|c| c.get())
        .map_or("unknown", Transport::as_str)
}

fn io_err(what: &str, e: impl std::fmt::Display) -> CapabilityError {
    CapabilityError::internal(format!("{what}: {e}"))
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
// Directory-relative file operations.

fn cstr(name: &str) -> Result<CString, CapabilityError> {
    CString::new(name).map_err(|_| CapabilityError::invalid_input("a path holds a NUL byte"))
}

/// Opens `name` under `dir` as a directory without following a link.
fn open_dir_at(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    let c = CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: `dir` is an open descriptor and `c` a NUL-terminated string.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_root(root: &Path) -> Result<OwnedFd, CapabilityError> {
    let f = File::open(root).map_err(|e| io_err("the repository root cannot be opened", e))?;
    Ok(OwnedFd::from(f))
}

/// The descriptor of the folder holding `rel` (repository-relative), opened component by
/// component without following links; missing folders are created when `create` is set.
fn parent_dir(root: &Path, rel: &str, create: bool) -> Result<(OwnedFd, String), CapabilityError> {
    let mut parts: Vec<&str> = rel.split('/').collect();
    let name = parts.pop().unwrap_or_default().to_string();
    let mut dir = open_root(root)?;
    for part in parts {
        let next = match open_dir_at(&dir, part) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                let c = cstr(part)?;
                // SAFETY: as in open_dir_at.
                let r = unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) };
                if r != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(io_err(&format!("cannot create the folder of `{rel}`"), e));
                    }
                }
                open_dir_at(&dir, part).map_err(|e| link_refusal(rel, e))?
            }
            Err(e) => return Err(link_refusal(rel, e)),
        };
        dir = next;
    }
    Ok((dir, name))
}

fn link_refusal(rel: &str, e: std::io::Error) -> CapabilityError {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => refusal(
            Rule::SymlinkEscape,
            rel,
            "a folder on the way is a symbolic link or not a folder; writes never follow links",
            "",
        ),
        Some(libc::ENOENT) => CapabilityError::not_found(format!("`{rel}` does not exist")),
        _ => io_err(&format!("cannot open the folder of `{rel}`"), e),
    }
}

/// The bytes of `rel`, or `None` when it does not exist (links are not followed).
pub fn read(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, CapabilityError> {
    let (dir, name) = match parent_dir(root, rel, false) {
        Ok(x) => x,
        Err(e) if e.code == crate::codes::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let c = cstr(&name)?;
    // SAFETY: as in open_dir_at.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(None),
            _ => Err(link_refusal(rel, e)),
        };
    }
    // SAFETY: freshly opened, owned here.
    let mut f = unsafe { File::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| io_err(&format!("cannot read `{rel}`"), e))?;
    Ok(Some(bytes))
}

/// Writes `bytes` to `rel` whole: a temporary file in the same folder, fsync, rename, fsync
/// of the folder.
pub fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), CapabilityError> {
    let (dir, name) = parent_dir(root, rel, true)?;
    sweep_temporaries(root, rel, &dir, &name);
    let tmp = format!(
        ".{name}.seneschal-{}-{}.tmp",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    let ctmp = cstr(&tmp)?;
    // SAFETY: as in open_dir_at.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            ctmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io_err(
            &format!("cannot write next to `{rel}`"),
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: freshly opened, owned here.
    let mut f = unsafe { File::from_raw_fd(fd) };
    let cleanup = |e: CapabilityError| {
        // SAFETY: as in open_dir_at.
        unsafe { libc::unlinkat(dir.as_raw_fd(), ctmp.as_ptr(), 0) };
        e
    };
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| cleanup(io_err(&format!("cannot write `{rel}`"), e)))?;
    drop(f);
    let cname = cstr(&name)?;
    // SAFETY: as in open_dir_at.
    let r = unsafe {
        libc::renameat(
            dir.as_raw_fd(),
            ctmp.as_ptr(),
            dir.as_raw_fd(),
            cname.as_ptr(),
        )
    };
    if r != 0 {
        return Err(cleanup(io_err(
            &format!("cannot move the new `{rel}` into place"),
            std::io::Error::last_os_error(),
        )));
    }
    sync_dir(&dir, rel)
}

/// Removes temporary files of `name` left by a writer that died between creating and renaming
/// them. Only lock holders write, so under the lock every such file is an orphan. Names are
/// listed by path but removed relative to the folder's descriptor.
fn sweep_temporaries(root: &Path, rel: &str, dir: &OwnedFd, name: &str) {
    let folder = root
        .join(rel)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let prefix = format!(".{name}.seneschal-");
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with(&prefix) && n.ends_with(".tmp") {
            if let Ok(c) = CString::new(n) {
                // SAFETY: as in open_dir_at.
                unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) };
            }
        }
    }
}

/// Removes `rel` and fsyncs its folder.
pub fn remove(root: &Path, rel: &str) -> Result<(), CapabilityError> {
    let (dir, name) = parent_dir(root, rel, false)?;
    let c = cstr(&name)?;
    // SAFETY: as in open_dir_at.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
        return Err(io_err(
            &format!("cannot delete `{rel}`"),
            std::io::Error::last_os_error(),
        ));
    }
    sync_dir(&dir, rel)
}

fn sync_dir(dir: &OwnedFd, rel: &str) -> Result<(), CapabilityError> {
    // SAFETY: `dir` is an open descriptor.
    if unsafe { libc::fsync(dir.as_raw_fd()) } != 0 {
        return Err(io_err(
            &format!("cannot sync the folder of `{rel}`"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The lock, the keys and the audit.

/// The held repository lock; released when dropped.
pub struct Locked {
    _file: File,
    root: PathBuf,
}

/// Takes the repository's write lock, creating `.seneschal/` (with its `.gitignore`) first.
pub fn lock(root: &Path) -> Result<Locked, CapabilityError> {
    let state = root.join(STATE_DIR);
    if std::fs::symlink_metadata(&state).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refusal(
            Rule::SymlinkEscape,
            STATE_DIR,
            "the state folder is a symbolic link; seneschal does not write through it",
            "",
        ));
    }
    std::fs::create_dir_all(&state).map_err(|e| io_err("cannot create .seneschal/", e))?;
    let ignore = state.join(".gitignore");
    if !ignore.exists() {
        let _ = write(root, ".seneschal/.gitignore", GITIGNORE.as_bytes());
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state.join("lock"))
        .map_err(|e| io_err("cannot open .seneschal/lock", e))?;
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
    Ok(Locked {
        _file: file,
        root: root.to_path_buf(),
    })
}

fn now() -> SystemTime {
    SystemTime::now()
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// RFC 3339 UTC time with seconds.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn key_path(key: &str) -> String {
    format!("{KEY_DIR}/{}.json", hex(&Sha256::digest(key.as_bytes())))
}

/// What a stored key says about a new request.
enum Replay {
    None,
    Same(Value),
}

fn check_key(l: &Locked, key: &str, request: &str) -> Result<Replay, CapabilityError> {
    let Some(bytes) = read(&l.root, &key_path(key))? else {
        return Ok(Replay::None);
    };
    let Ok(stored) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(Replay::None);
    };
    if stored["expires"].as_u64().unwrap_or(0) <= unix(now()) {
        return Ok(Replay::None);
    }
    if stored["request"].as_str() != Some(request) {
        return Err(CapabilityError::conflict(
            "this idempotency key was used for a different request in the last 24 hours; use a new key",
        )
        .at("/idempotency_key")
        .with_data(json!({ "stored_request": stored["request"], "this_request": request })));
    }
    Ok(Replay::Same(stored["result"].clone()))
}

fn store_key(l: &Locked, key: &str, request: &str, result: &Value) -> Result<(), CapabilityError> {
    let record = json!({
        "request": request,
        "result": result,
        "expires": unix(now() + KEY_TTL),
    });
    write(&l.root, &key_path(key), canonical(&record).as_bytes())?;
    sweep_expired_keys(l);
    Ok(())
}

/// The folder of the stored idempotency keys.
const KEY_DIR: &str = ".seneschal/idempotency";

/// Deletes the stored keys that have expired, under the lock, so the folder holds at most a
/// day of keyed writes. A file is a candidate when it was last written more than [`KEY_TTL`]
/// ago (one `stat` each); it is deleted when its own `expires` says so, or when it is not a
/// key record at all (it would never be read as one). Failures are left for the next sweep:
/// an expired key is ignored when read anyway.
fn sweep_expired_keys(l: &Locked) {
    let Ok(entries) = std::fs::read_dir(l.root.join(KEY_DIR)) else {
        return;
    };
    let now = now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let is_key = name.len() == 64 + ".json".len()
            && name.ends_with(".json")
            && name[..64].bytes().all(|b| b.is_ascii_hexdigit());
        if !is_key {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t + KEY_TTL <= now);
        if !old {
            continue;
        }
        let rel = format!("{KEY_DIR}/{name}");
        let expired = match read(&l.root, &rel) {
            Ok(Some(bytes)) => serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v["expires"].as_u64())
                .is_none_or(|e| e <= unix(now)),
            _ => false,
        };
        if expired {
            let _ = remove(&l.root, &rel);
        }
    }
}

/// The hash of the last audit record (or [`GENESIS`]) and the next sequence number.
fn audit_tail(root: &Path) -> Result<(String, u64), CapabilityError> {
    let Some(bytes) = read(root, AUDIT_LOG)? else {
        return Ok((GENESIS.to_string(), 1));
    };
    let text = String::from_utf8_lossy(&bytes);
    // A torn last line (a crash mid-append) is not part of the chain.
    let last = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["hash"].is_string());
    Ok(match last {
        Some(v) => (
            v["hash"].as_str().unwrap_or(GENESIS).to_string(),
            v["seq"].as_u64().unwrap_or(0) + 1,
        ),
        None => (GENESIS.to_string(), 1),
    })
}

fn record_hash(record: &Value) -> String {
    let mut r = record.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("hash");
    }
    digest(canonical(&r).as_bytes())
}

/// Appends one audit record under the held lock.
fn append_audit(
    l: &Locked,
    capability: &str,
    input_digest: &str,
    paths: &[String],
    outcome: &Result<Value, CapabilityError>,
    replayed: bool,
) -> Result<(), CapabilityError> {
    let (prev, seq) = audit_tail(&l.root)?;
    let (outcome_word, code) = match outcome {
        Ok(_) if replayed => ("replayed", Value::Null),
        Ok(_) => ("applied", Value::Null),
        Err(e) => ("refused", json!(e.code.as_str())),
    };
    let mut record = json!({
        "seq": seq,
        "time": rfc3339(unix(now())),
        "capability": capability,
        "transport": transport(),
        "input_digest": input_digest,
        "paths": paths,
        "outcome": outcome_word,
        "code": code,
        "server_digest": crate::registry::projections::DIGEST.trim(),
        "prev": prev,
    });
    let hash = record_hash(&record);
    record["hash"] = json!(hash);
    let mut line = canonical(&record);
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(l.root.join(AUDIT_LOG))
        .map_err(|e| io_err("cannot open the audit log", e))?;
    f.write_all(line.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(|e| io_err("cannot append to the audit log", e))
}

/// Records a write attempt refused before it reached a handler (its input broke the schema).
pub fn audit_rejected(root: &Path, capability: &str, input: &Value, err: &CapabilityError) {
    if let Ok(l) = lock(root) {
        let _ = append_audit(
            &l,
            capability,
            &request_digest(capability, input),
            &[],
            &Err(err.clone()),
            false,
        );
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

/// Runs one write: takes the lock, answers a replayed idempotency key, runs `apply` (which
/// returns the answer and the paths it touched), records the attempt in the audit log and
/// stores the answer under the key. `apply` receives the lock as proof it is held.
pub fn transact(
    root: &Path,
    capability: &str,
    input: &Value,
    apply: impl FnOnce(&Locked) -> (Result<Value, CapabilityError>, Effects),
) -> Result<Value, CapabilityError> {
    let l = lock(root)?;
    let request = request_digest(capability, input);
    let key = input.get("idempotency_key").and_then(Value::as_str);
    if let Some(key) = key {
        match check_key(&l, key, &request) {
            Ok(Replay::Same(mut result)) => {
                result["replayed"] = json!(true);
                let r = Ok(result);
                append_audit(&l, capability, &request, &[], &r, true)?;
                return r;
            }
            Ok(Replay::None) => {}
            Err(e) => {
                let r = Err(e);
                append_audit(&l, capability, &request, &[], &r, false)?;
                return r;
            }
        }
    }
    let (result, effects) = apply(&l);
    append_audit(&l, capability, &request, &effects.paths(), &result, false)?;
    if let (Some(key), Ok(v)) = (key, &result) {
        store_key(&l, key, &request, v)?;
    }
    result
}

// ---------------------------------------------------------------------------------------------
// Reading the audit log.

/// Every record of the audit log, in order (unparseable lines are skipped).
pub fn records(root: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(root.join(AUDIT_LOG)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// Checks the chain: `Ok(count)` or `Err((line number, why))` for the first broken record.
pub fn verify(root: &Path) -> Result<usize, (usize, String)> {
    let text = match std::fs::read(root.join(AUDIT_LOG)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err((0, format!("the audit log cannot be read: {e}"))),
    };
    let text = String::from_utf8_lossy(&text);
    let mut prev = GENESIS.to_string();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut count = 0;
    for (i, raw) in lines.iter().enumerate() {
        let n = i + 1;
        let torn = !raw.ends_with('\n');
        let line = raw.trim_end_matches('\n');
        if torn && i + 1 == lines.len() && serde_json::from_str::<Value>(line).is_err() {
            // A crash mid-append leaves a torn last line; it was never acknowledged.
            break;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| (n, format!("record {n} is not JSON: {e}")))?;
        let stated = v["hash"].as_str().unwrap_or_default();
        if v["prev"].as_str() != Some(prev.as_str()) {
            return Err((
                n,
                format!(
                    "record {n} does not follow record {}: its prev is not that record's hash",
                    n - 1
                ),
            ));
        }
        if record_hash(&v) != stated || canonical(&v) != line {
            return Err((
                n,
                format!("record {n} was altered: its content does not match its hash"),
            ));
        }
        prev = stated.to_string();
        count += 1;
    }
    Ok(count)
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
