//! The audit log `.seneschal/audit.jsonl`, its anchor `.seneschal/audit.anchor` and the
//! optional keyed chain.
//!
//! * **Chain.** Each record is one line of canonical JSON; `prev` is the previous record's
//!   `hash`, `hash` the sha256 of the record without `hash` and `mac`, `seq` its line number.
//! * **Anchor.** The anchor is a file of lines, each a canonical JSON object; the last one that
//!   reads is the anchor. A line is appended after every append (never synced: a lost line
//!   only lags), and the file is rewritten to its last line past [`ANCHOR_COMPACT`] bytes. A
//!   line holds `count` and `last` (the records the disk holds: synced before the line was
//!   written) and, when the newest records are not synced yet, `written`, `written_last` and
//!   the `boot` it was written in (`/proc/sys/kernel/random/boot_id`). Within the same boot
//!   nothing the kernel held is lost, so the log must hold `written` records; after a reboot
//!   only `count`. A log shorter than its anchor, or absent while the anchor exists, fails
//!   [`verify`]. Before the first record an anchor of zero records is written, so a missing
//!   anchor always means one was removed.
//! * **Keyed chain.** With a key (a file outside the repository named by
//!   `SENESCHAL_AUDIT_KEY`), each record also carries `mac` = HMAC-SHA256(key, previous mac ‖
//!   `\n` ‖ hash), and an anchor line `anchor_mac` over all it holds, so a chain recomputed
//!   or an anchor rewritten without the key fails `verify` with it.
//! * **Torn tail.** A crash mid-append leaves a last line without its newline; it was never
//!   acknowledged (nothing acts on a record before it is synced), so the next append cuts it
//!   off.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use serde_json::{json, Value};

use seneschal_access::confine::Rule;
use seneschal_access::error::CapabilityError;
use seneschal_access::text::hex;

use super::fs::{self, io_err, Mode};
use super::{canonical, digest, GENESIS};

/// The audit log's name in the state folder.
pub const LOG_NAME: &str = "audit.jsonl";
/// The anchor's name in the state folder.
pub const ANCHOR_NAME: &str = "audit.anchor";
/// The anchor, relative to the repository root.
pub const ANCHOR: &str = ".seneschal/audit.anchor";
/// The environment variable naming the audit key file (kept outside the repository).
pub const KEY_ENV: &str = "SENESCHAL_AUDIT_KEY";
/// The rule of a write refused because the log is shorter than its anchor.
pub const RULE_TRUNCATED: &str = Rule::LogTruncated.as_str();
/// The anchor's size past which its next line replaces it (rewritten whole, as one line).
pub const ANCHOR_COMPACT: u64 = 64 * 1024;
/// How much of the anchor's end is read for its last line.
const ANCHOR_TAIL: u64 = 8 * 1024;
/// How much of the log's end a writer reads to continue the chain.
const TAIL_WINDOW: u64 = 32 * 1024;
/// The MAC chained before the first record.
const MAC_GENESIS: &str =
    "hmac-sha256:0000000000000000000000000000000000000000000000000000000000000000";

pub use seneschal_access::text::hmac_sha256;

fn record_mac(key: &[u8], prev_mac: &str, hash: &str) -> String {
    let msg = format!("{prev_mac}\n{hash}");
    format!("hmac-sha256:{}", hex(&hmac_sha256(key, msg.as_bytes())))
}

/// The MAC of an anchor line, over all it holds: its synced count and hash, and, when it names
/// records written and not synced, those and its boot too, so that no part can be dropped or
/// changed alone. A line naming synced records only is MACed as anchors always were.
fn line_mac(key: &[u8], line: &Value) -> String {
    let count = line["count"].as_u64().unwrap_or_default();
    let last = line["last"].as_str().unwrap_or_default();
    let msg = match line["written"].as_u64() {
        None => format!("seneschal-audit-anchor\n{count}\n{last}"),
        Some(written) => format!(
            "seneschal-audit-anchor-written\n{count}\n{last}\n{written}\n{}\n{}",
            line["written_last"].as_str().unwrap_or_default(),
            line["boot"].as_str().unwrap_or_default()
        ),
    };
    format!("hmac-sha256:{}", hex(&hmac_sha256(key, msg.as_bytes())))
}

/// This boot's identity (`/proc/sys/kernel/random/boot_id`), read once; `None` where the
/// kernel does not say, and then every anchor line counts synced records only.
pub fn boot() -> Option<&'static str> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s.len() <= 64)
    })
    .as_deref()
}

/// Where the whole lines of a window read from byte `start` of a file begin: a window that
/// starts mid-file starts after its first newline.
fn whole_lines_from(window: &[u8], start: u64) -> usize {
    if start == 0 {
        return 0;
    }
    window
        .iter()
        .position(|&b| b == b'\n')
        .map_or(window.len(), |i| i + 1)
}

/// The last line of the anchor's bytes that reads as an object with a `count`;
/// `Some(Value::Null)` when no line does (an unreadable anchor), `None` for no bytes at all.
fn last_anchor(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return Some(Value::Null);
    }
    Some(
        bytes
            .split(|&b| b == b'\n')
            .rev()
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .find(|v| v["count"].is_u64())
            .unwrap_or(Value::Null),
    )
}

/// What an anchor line holds the log to, in this boot: the records written when the line was
/// written in this boot, else the records synced.
fn anchored(a: &Value) -> Option<(u64, &str)> {
    let written = a["written"].as_u64();
    if written.is_some() && boot().is_some() && a["boot"].as_str() == boot() {
        return Some((written?, a["written_last"].as_str().unwrap_or_default()));
    }
    Some((a["count"].as_u64()?, a["last"].as_str().unwrap_or_default()))
}

/// The anchor of `state`: its last readable line (see [`last_anchor`]), `None` when absent.
/// Only its end is read.
fn read_anchor(state: &OwnedFd) -> Result<Option<Value>, CapabilityError> {
    let Some(mut f) = fs::open_state_file(state, ANCHOR_NAME, ANCHOR, Mode::Read)? else {
        return Ok(None);
    };
    let len = f
        .metadata()
        .map_err(|e| io_err(&format!("cannot stat `{ANCHOR}`"), e))?
        .len();
    let start = len.saturating_sub(ANCHOR_TAIL);
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(start))
        .and_then(|_| f.read_to_end(&mut bytes))
        .map_err(|e| io_err(&format!("cannot read `{ANCHOR}`"), e))?;
    Ok(last_anchor(&bytes[whole_lines_from(&bytes, start)..]))
}

/// Reads the key file at `path`: it must lie outside the repository `root`, and hold bytes.
pub fn load_key(root: &Path, path: &Path) -> Result<Vec<u8>, CapabilityError> {
    let shown = path.display();
    let abs = std::fs::canonicalize(path)
        .map_err(|e| io_err(&format!("the audit key `{shown}` cannot be opened"), e))?;
    let repo = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if abs.starts_with(&repo) {
        return Err(CapabilityError::refused(format!(
            "the audit key `{shown}` lies inside the repository; keep it outside (anyone who can write the repository could read it)"
        )));
    }
    let mut bytes = Vec::new();
    File::open(&abs)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| io_err(&format!("the audit key `{shown}` cannot be read"), e))?;
    if bytes.is_empty() {
        return Err(CapabilityError::refused(format!(
            "the audit key `{shown}` is empty"
        )));
    }
    Ok(bytes)
}

/// The key named by `SENESCHAL_AUDIT_KEY`, if set.
pub fn env_key(root: &Path) -> Result<Option<Vec<u8>>, CapabilityError> {
    match std::env::var_os(KEY_ENV) {
        Some(p) if !p.is_empty() => load_key(root, Path::new(&p)).map(Some),
        _ => Ok(None),
    }
}

/// The hash of a record: its canonical JSON without `hash` and `mac`.
pub fn record_hash(record: &Value) -> String {
    let mut r = record.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("hash");
        m.remove("mac");
    }
    digest(canonical(&r).as_bytes())
}

/// The open log of a locked session: where the chain stands and which intents wait for an
/// outcome.
pub(super) struct Log {
    file: File,
    prev: String,
    prev_mac: String,
    next_seq: u64,
    /// The records the disk holds (synced): their count and the last one's hash.
    synced: (u64, String),
    key: Option<Vec<u8>>,
    /// Intent records with no outcome yet, in order.
    pub pending: Vec<Value>,
}

/// The refusal of a write over a log shorter than its anchor (appending would re-anchor it).
fn truncated(why: String) -> CapabilityError {
    fs::state_refusal(
        super::AUDIT_LOG,
        Rule::LogTruncated,
        &format!("{why}; writes stop until the log is restored (`seneschal audit verify` names what is missing)"),
    )
}

impl Log {
    /// Opens (creating) the log under the held lock, cuts a torn last line, and writes the
    /// zero anchor before the first record.
    pub fn open(state: &OwnedFd, key: Option<Vec<u8>>) -> Result<Log, CapabilityError> {
        let anchor = read_anchor(state)?;
        let held = anchor.as_ref().and_then(anchored);
        let anchored_count = held.map(|(n, _)| n);
        if anchored_count.is_some_and(|n| n > 0) && !fs::exists_at(state, LOG_NAME) {
            return Err(truncated(format!(
                "the log is missing but its anchor {ANCHOR} counts {} record(s)",
                anchored_count.unwrap_or_default()
            )));
        }
        let file =
            fs::open_state_file(state, LOG_NAME, super::AUDIT_LOG, Mode::Append)?.expect("created");
        let len = file
            .metadata()
            .map_err(|e| io_err("cannot stat the audit log", e))?
            .len();
        let mut log = Log {
            file,
            prev: GENESIS.to_string(),
            prev_mac: MAC_GENESIS.to_string(),
            next_seq: 1,
            synced: (0, GENESIS.to_string()),
            key,
            pending: Vec::new(),
        };
        // The tail is enough: the last record continues the chain, and an intent without an
        // outcome can only be the last record (every session settles before it appends). The
        // whole log is read when the anchored record is not in the tail.
        let mut start = len.saturating_sub(TAIL_WINDOW);
        let (anchored_hash, phased) = loop {
            let mut bytes = Vec::new();
            log.file
                .seek(SeekFrom::Start(start))
                .and_then(|_| log.file.read_to_end(&mut bytes))
                .map_err(|e| io_err("cannot read the audit log", e))?;
            let skip = whole_lines_from(&bytes, start);
            let body = &bytes[skip..];
            let complete = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            if complete < body.len() {
                // A torn last line: never acknowledged, never anchored.
                log.file
                    .set_len(start + (skip + complete) as u64)
                    .and_then(|()| log.file.sync_data())
                    .map_err(|e| io_err("cannot cut the torn last line of the audit log", e))?;
            }
            let found = log.scan(&body[..complete], anchored_count);
            let anchored_missing = anchored_count.is_some_and(|n| n > 0) && found.0.is_none();
            if start > 0 && (anchored_missing || log.next_seq == 1) {
                log = Log {
                    pending: Vec::new(),
                    ..log
                };
                start = 0;
                continue;
            }
            break found;
        };
        let count = log.next_seq - 1;
        match (&anchor, held) {
            (Some(_), Some((n, _))) if n > count => {
                return Err(truncated(format!(
                    "the log holds {count} record(s) but its anchor {ANCHOR} counts {n}"
                )))
            }
            (Some(_), Some((n, last))) if n > 0 && anchored_hash.as_deref() != Some(last) => {
                return Err(truncated(format!(
                    "record {n} is not the record the anchor {ANCHOR} holds"
                )))
            }
            (Some(_), Some(_)) => {}
            (Some(_), None) => return Err(truncated(format!("the anchor {ANCHOR} is unreadable"))),
            (None, _) if phased => {
                return Err(truncated(format!(
                    "the anchor {ANCHOR} is missing while the log holds {count} record(s)"
                )))
            }
            (None, _) if count == 0 => fs::write_at(
                state,
                ANCHOR_NAME,
                ANCHOR,
                &log.anchor_text(0, GENESIS, None),
            )?,
            // A log written before anchors existed: the next append anchors it.
            (None, _) => {}
        }
        Ok(log)
    }

    /// Reads complete lines into the chain's state; answers the hash of the record numbered
    /// `anchored` (if met) and whether any record has a phase (written since anchors exist).
    ///
    /// Only the records it needs are parsed: the last one (the chain continues from it), the
    /// anchored one, and the intents no outcome settles. The others are read by their
    /// top-level fields in canonical JSON (`"phase":"intent"`, `"seq":N`, an outcome's
    /// `"intent":N`), which a string value cannot imitate: its quotes are escaped.
    fn scan(&mut self, bytes: &[u8], anchored: Option<u64>) -> (Option<String>, bool) {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let mut phased = false;
        let mut waiting: Vec<(u64, usize)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("\"phase\":\"") {
                phased = true;
            }
            if line.contains("\"phase\":\"intent\"") {
                if let Some(seq) = top_u64(line, "\"seq\":") {
                    waiting.push((seq, i));
                }
            } else if line.contains("\"phase\":\"outcome\"") {
                if let Some(n) = top_u64(line, "\"intent\":") {
                    waiting.retain(|(seq, _)| *seq != n);
                }
            }
        }
        let parse = |line: &str| serde_json::from_str::<Value>(line).ok();
        // The chain continues from the last record that has a hash.
        for line in lines.iter().rev() {
            let Some(v) = parse(line) else { continue };
            let Some(hash) = v["hash"].as_str() else {
                continue;
            };
            self.prev = hash.to_string();
            self.prev_mac = v["mac"].as_str().unwrap_or(MAC_GENESIS).to_string();
            self.next_seq = v["seq"].as_u64().unwrap_or(0) + 1;
            break;
        }
        let anchored_hash = anchored.and_then(|n| {
            lines
                .iter()
                .rev()
                .filter(|l| top_u64(l, "\"seq\":") == Some(n))
                .find_map(|l| {
                    let v = parse(l)?;
                    (v["seq"].as_u64() == Some(n))
                        .then(|| v["hash"].as_str().map(str::to_string))
                        .flatten()
                })
        });
        self.pending = waiting
            .into_iter()
            .filter_map(|(_, i)| parse(lines[i]))
            .filter(|v| v["hash"].is_string() && v["phase"] == "intent")
            .collect();
        (anchored_hash, phased)
    }

    /// Completes `record` (seq, prev, hash, mac), appends it, syncs, and anchors it.
    /// Answers the record as written.
    pub fn append(&mut self, state: &OwnedFd, record: Value) -> Result<Value, CapabilityError> {
        let record = self.append_unsynced(record)?;
        self.seal(state)?;
        Ok(record)
    }

    /// Makes every record appended so far durable, then anchors them: the anchor never counts
    /// a record a crash can take back.
    pub fn seal(&mut self, state: &OwnedFd) -> Result<(), CapabilityError> {
        self.sync()?;
        self.anchor(state)
    }

    /// Appends the anchor line of the log as it stands: `count` and `last` name the synced
    /// records; records written since are named too (`written`, `written_last`) with this
    /// boot, which holds the log to them only as long as the machine has not restarted
    /// (nothing the kernel holds is lost before). Without a known boot only synced records
    /// are named. The line is not synced: a lost line leaves the anchor lagging, which is no
    /// truncation.
    pub fn anchor(&self, state: &OwnedFd) -> Result<(), CapabilityError> {
        let written = self.next_seq - 1;
        let unsynced = (written > self.synced.0)
            .then(boot)
            .flatten()
            .map(|b| (written, self.prev.as_str(), b));
        let line = self.anchor_text(self.synced.0, &self.synced.1, unsynced);
        let mut file =
            fs::open_state_file(state, ANCHOR_NAME, ANCHOR, Mode::Append)?.expect("created");
        let len = file
            .metadata()
            .map_err(|e| io_err(&format!("cannot stat `{ANCHOR}`"), e))?
            .len();
        if len >= ANCHOR_COMPACT {
            // Rewritten whole as its newest line: a lost rename keeps the old lines, which
            // lag.
            return fs::write_at_lagging(state, ANCHOR_NAME, ANCHOR, &line);
        }
        // A line a crash cut short is ended first, so that the new line stands on its own.
        let mut last = [b'\n'];
        if len > 0 {
            std::os::unix::fs::FileExt::read_exact_at(&file, &mut last, len - 1)
                .map_err(|e| io_err(&format!("cannot read the anchor {ANCHOR}"), e))?;
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        if last[0] != b'\n' {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(&line);
        file.write_all(&bytes)
            .map_err(|e| io_err(&format!("cannot write the anchor {ANCHOR}"), e))
    }

    /// [`Log::append`] without anchoring: a keyed write's intent, synced at once (its key's
    /// reservation names it); the write's outcome anchors both.
    pub fn append_unanchored(&mut self, record: Value) -> Result<Value, CapabilityError> {
        let record = self.append_unsynced(record)?;
        self.sync()?;
        Ok(record)
    }

    /// Makes every record appended so far durable (`fdatasync`).
    pub fn sync(&mut self) -> Result<(), CapabilityError> {
        self.file.sync_data().map_err(|e| {
            io_err(
                &format!("cannot append to the audit log {}", super::AUDIT_LOG),
                e,
            )
        })?;
        self.synced = (self.next_seq - 1, self.prev.clone());
        Ok(())
    }

    /// [`Log::append_unanchored`] without the sync: the record is in the file (a killed
    /// process loses nothing the kernel holds) but durable only once the log is synced, by
    /// [`Log::sync`] or [`Log::seal`]. A write's intent is synced together with its staged
    /// files, before anything is renamed; its outcome is anchored as written in this boot.
    pub fn append_unsynced(&mut self, mut record: Value) -> Result<Value, CapabilityError> {
        let seq = self.next_seq;
        record["seq"] = json!(seq);
        record["prev"] = json!(self.prev);
        let hash = record_hash(&record);
        record["hash"] = json!(hash);
        let mac = self
            .key
            .as_deref()
            .map(|k| record_mac(k, &self.prev_mac, &hash));
        if let Some(m) = &mac {
            record["mac"] = json!(m);
        }
        let mut line = canonical(&record);
        line.push('\n');
        self.file.write_all(line.as_bytes()).map_err(|e| {
            io_err(
                &format!("cannot append to the audit log {}", super::AUDIT_LOG),
                e,
            )
        })?;
        self.prev = hash;
        self.prev_mac = mac.unwrap_or_else(|| MAC_GENESIS.to_string());
        self.next_seq = seq + 1;
        Ok(record)
    }

    /// An anchor line: the first `count` records, the last of which hashes to `last`, and the
    /// records written in `boot` beyond them (`written`, the last hashing to `written_last`).
    fn anchor_text(&self, count: u64, last: &str, unsynced: Option<(u64, &str, &str)>) -> Vec<u8> {
        let mut anchor = json!({ "count": count, "last": last });
        if let Some((written, written_last, boot)) = unsynced {
            anchor["written"] = json!(written);
            anchor["written_last"] = json!(written_last);
            anchor["boot"] = json!(boot);
        }
        if let Some(k) = &self.key {
            anchor["anchor_mac"] = json!(line_mac(k, &anchor));
        }
        let mut text = canonical(&anchor);
        text.push('\n');
        text.into_bytes()
    }
}

/// The number after the top-level key `key` (given with its quotes and colon) of a record in
/// canonical JSON: the last occurrence that follows `{` or `,` (inside a string value the
/// key's quotes are escaped: `\\"key\\":`). `None` when absent or not a number.
fn top_u64(line: &str, key: &str) -> Option<u64> {
    let at = line
        .match_indices(key)
        .filter(|(i, _)| *i > 0 && matches!(line.as_bytes()[i - 1], b'{' | b','))
        .last()?
        .0
        + key.len();
    let rest = &line[at..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Every record of the audit log, in order (unparseable lines are skipped), read through the
/// handle of the state folder: a link or a folder in place of the log is refused.
pub fn records(root: &Path) -> Result<Vec<Value>, CapabilityError> {
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(Vec::new());
    };
    let Some(bytes) = fs::read_state(&state, LOG_NAME, super::AUDIT_LOG)? else {
        return Ok(Vec::new());
    };
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.is_object())
        .collect())
}

/// What [`verify`] found in an intact log.
#[derive(Debug, Default)]
pub struct Verified {
    /// Records in the chain.
    pub count: usize,
    /// Intents not settled yet (a write was interrupted; the next write settles them).
    pub pending: usize,
    /// True when the MACs were checked with a key.
    pub keyed: bool,
    /// True when an anchor was checked.
    pub anchored: bool,
}

/// Checks the log: the chain, the sequence numbers, intents and outcomes, the anchor, and with
/// `key` every MAC. `Err((record number or 0, why))` names the first problem.
pub fn verify(root: &Path, key: Option<&[u8]>) -> Result<Verified, (usize, String)> {
    let state = fs::open_state(root, false).map_err(|e| (0, e.message))?;
    let Some(state) = state else {
        return Ok(Verified {
            keyed: key.is_some(),
            ..Verified::default()
        });
    };
    // The anchor before the log, without the lock: a write between the two reads only adds
    // records after what the anchor read counts (the other order would count a write's records
    // in the anchor and not in the log read before them).
    let anchor = match read_anchor(&state).map_err(|e| (0, e.message))? {
        Some(Value::Null) => {
            return Err((0, format!("the anchor {ANCHOR} holds no readable line")))
        }
        a => a,
    };
    // A debug build waits here when asked, so that a test writes between the two reads.
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("SENESCHAL_DEBUG_VERIFY_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let log = fs::read_state(&state, LOG_NAME, super::AUDIT_LOG).map_err(|e| (0, e.message))?;
    let (count, hashes, pending, phased) = match &log {
        None => (0, Vec::new(), 0, false),
        Some(bytes) => chain(bytes, key)?,
    };
    let mut out = Verified {
        count,
        pending,
        keyed: key.is_some(),
        anchored: anchor.is_some(),
    };
    match anchor {
        None if phased => {
            return Err((
                0,
                format!(
                    "the anchor {ANCHOR} is missing while the log holds {count} record(s): it was deleted"
                ),
            ))
        }
        // A log written before anchors existed (no record has a phase) has none.
        None => {}
        Some(a) => {
            let (n, last) = anchored(&a).ok_or((0, format!("the anchor {ANCHOR} holds no count")))?;
            let n = n as usize;
            if log.is_none() && n > 0 {
                return Err((
                    0,
                    format!("the audit log is missing, but its anchor counts {n} record(s): it was deleted"),
                ));
            }
            if n > count {
                return Err((
                    count + 1,
                    format!(
                        "the log ends after record {count} but its anchor counts {n}: records {} to {n} were dropped",
                        count + 1
                    ),
                ));
            }
            let expected = if n == 0 { GENESIS } else { hashes[n - 1].as_str() };
            if last != expected {
                return Err((
                    n,
                    format!("record {n} is not the record the anchor holds: the log was rewritten"),
                ));
            }
            if let Some(k) = key {
                // Checked whatever boot the line names: a part dropped or a boot changed fails.
                let mac = line_mac(k, &a);
                if a["anchor_mac"].as_str() != Some(mac.as_str()) {
                    return Err((
                        0,
                        format!("the anchor {ANCHOR} does not carry this key's MAC: it was rewritten without the key, or another key was used"),
                    ));
                }
            }
            out.anchored = true;
        }
    }
    Ok(out)
}

/// Walks the chain: the count, each record's hash, and the intents left without an outcome.
#[allow(clippy::type_complexity)]
fn chain(
    bytes: &[u8],
    key: Option<&[u8]>,
) -> Result<(usize, Vec<String>, usize, bool), (usize, String)> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut prev = GENESIS.to_string();
    let mut prev_mac = MAC_GENESIS.to_string();
    let mut hashes = Vec::new();
    let mut pending: Vec<u64> = Vec::new();
    let mut phased = false;
    for (i, raw) in lines.iter().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\n');
        if !raw.ends_with('\n')
            && i + 1 == lines.len()
            && serde_json::from_str::<Value>(line).is_err()
        {
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
        if v["seq"].as_u64() != Some(n as u64) {
            return Err((
                n,
                format!("record {n} carries the sequence number {}", v["seq"]),
            ));
        }
        if let Some(k) = key {
            let expected = record_mac(k, &prev_mac, stated);
            if v["mac"].as_str() != Some(expected.as_str()) {
                return Err((
                    n,
                    format!("record {n} does not carry this key's MAC: it was written or recomputed without the key"),
                ));
            }
            prev_mac = expected;
        }
        phased |= v["phase"].is_string();
        match v["phase"].as_str() {
            Some("intent") => pending.push(n as u64),
            Some("outcome") => {
                if let Some(s) = v["intent"].as_u64() {
                    let Some(at) = pending.iter().position(|p| *p == s) else {
                        return Err((n, format!("record {n} settles record {s}, which is not an intent waiting for an outcome")));
                    };
                    pending.remove(at);
                }
            }
            _ => {}
        }
        prev = stated.to_string();
        hashes.push(prev.clone());
    }
    Ok((hashes.len(), hashes, pending.len(), phased))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anchor_is_its_last_readable_line_and_is_compacted_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let state = OwnedFd::from(File::open(dir.path()).unwrap());
        let mut log = Log::open(&state, None).unwrap();
        let anchor = dir.path().join(ANCHOR_NAME);
        assert_eq!(std::fs::read_to_string(&anchor).unwrap().lines().count(), 1);
        log.append(&state, json!({ "phase": "outcome" })).unwrap();
        log.append_unsynced(json!({ "phase": "outcome" })).unwrap();
        log.anchor(&state).unwrap();
        let text = std::fs::read_to_string(&anchor).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        let last = last_anchor(text.as_bytes()).unwrap();
        assert_eq!(
            (last["count"].as_u64(), last["written"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(
            anchored(&last).map(|(n, _)| n),
            Some(2),
            "this boot holds the log to 2"
        );
        let mut other = last.clone();
        other["boot"] = json!("another boot");
        assert_eq!(
            anchored(&other).map(|(n, _)| n),
            Some(1),
            "another boot to 1"
        );
        // A torn line (a power loss mid-append, or zeros) is passed over; no line reads: null.
        let torn = format!("{text}{{\"count\":9,\"la\0\0");
        assert_eq!(last_anchor(torn.as_bytes()), Some(last.clone()));
        assert_eq!(last_anchor(b"garbage\n"), Some(Value::Null));
        // The next line after a torn one stands on its own line.
        std::fs::write(&anchor, &torn).unwrap();
        log.append_unsynced(json!({ "phase": "outcome" })).unwrap();
        log.anchor(&state).unwrap();
        let after = read_anchor(&state).unwrap().unwrap();
        assert_eq!(after["written"].as_u64(), Some(3), "{after} over {last}");
        std::fs::write(&anchor, &text).unwrap();
        // Past its bound the anchor is rewritten as its newest line.
        std::fs::write(
            &anchor,
            text.repeat(1 + ANCHOR_COMPACT as usize / text.len()),
        )
        .unwrap();
        log.seal(&state).unwrap();
        let compacted = std::fs::read_to_string(&anchor).unwrap();
        assert_eq!(compacted.lines().count(), 1, "{compacted}");
        assert_eq!(
            read_anchor(&state).unwrap().unwrap()["count"].as_u64(),
            Some(3)
        );
        drop(log);
        assert_eq!(Log::open(&state, None).unwrap().next_seq, 4);
    }

    #[test]
    fn a_long_log_continues_from_its_tail_and_a_dropped_tail_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = OwnedFd::from(File::open(dir.path()).unwrap());
        // 1,200 records written at once (as `append` chains them, without its fsyncs), the last
        // an intent left without an outcome.
        let pad = "x".repeat(300);
        let (mut prev, mut text) = (GENESIS.to_string(), String::new());
        let mut last = Value::Null;
        for seq in 1..=1200u64 {
            let phase = if seq == 1200 { "intent" } else { "outcome" };
            let mut r = json!({ "phase": phase, "pad": pad, "seq": seq, "prev": prev });
            prev = record_hash(&r);
            r["hash"] = json!(prev);
            text.push_str(&canonical(&r));
            text.push('\n');
            last = r;
        }
        std::fs::write(dir.path().join(LOG_NAME), &text).unwrap();
        let anchor = json!({ "count": 1200, "last": prev });
        std::fs::write(dir.path().join(ANCHOR_NAME), canonical(&anchor) + "\n").unwrap();
        let len = std::fs::metadata(dir.path().join(LOG_NAME)).unwrap().len();
        assert!(
            len > 2 * TAIL_WINDOW,
            "the log is longer than the window: {len}"
        );
        let again = Log::open(&state, None).unwrap();
        assert_eq!(again.next_seq, 1201);
        assert_eq!(again.prev, last["hash"].as_str().unwrap());
        assert_eq!(
            again.pending.len(),
            1,
            "the interrupted intent is found in the tail"
        );
        drop(again);
        // A torn last line is cut; the anchor still matches.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(LOG_NAME))
            .unwrap();
        f.write_all(b"{\"torn\":").unwrap();
        assert_eq!(Log::open(&state, None).unwrap().next_seq, 1201);
        assert_eq!(
            std::fs::metadata(dir.path().join(LOG_NAME)).unwrap().len(),
            len
        );
        // The last record dropped: the anchored record is not in the tail nor anywhere.
        let text = std::fs::read_to_string(dir.path().join(LOG_NAME)).unwrap();
        let cut = text[..text.len() - 1].rfind('\n').unwrap() + 1;
        std::fs::write(dir.path().join(LOG_NAME), &text[..cut]).unwrap();
        let e = Log::open(&state, None).err().expect("refused");
        assert!(e.message.contains(RULE_TRUNCATED), "{}", e.message);
    }

    #[test]
    fn the_tail_scan_reads_top_level_fields_only_never_a_string_s_text() {
        let dir = tempfile::tempdir().unwrap();
        let state = OwnedFd::from(File::open(dir.path()).unwrap());
        // An outcome whose diff text spells an intent and a sequence number, then an intent
        // whose text spells an outcome settling it: only the real fields count.
        let (mut prev, mut text) = (GENESIS.to_string(), String::new());
        let bodies = [
            json!({"phase": "outcome", "intent": null, "diff": "\"phase\":\"intent\",\"seq\":99"}),
            json!({"phase": "intent", "review": ",\"phase\":\"outcome\",\"intent\":2"}),
        ];
        for (i, body) in bodies.iter().enumerate() {
            let mut r = body.clone();
            r["seq"] = json!(i + 1);
            r["prev"] = json!(prev);
            prev = record_hash(&r);
            r["hash"] = json!(prev);
            text.push_str(&canonical(&r));
            text.push('\n');
        }
        assert!(text.contains("\\\"seq\\\":99"), "{text}");
        assert_eq!(top_u64(text.lines().next().unwrap(), "\"seq\":"), Some(1));
        std::fs::write(dir.path().join(LOG_NAME), &text).unwrap();
        let anchor = json!({ "count": 2, "last": prev });
        std::fs::write(dir.path().join(ANCHOR_NAME), canonical(&anchor) + "\n").unwrap();
        let log = Log::open(&state, None).unwrap();
        assert_eq!(log.next_seq, 3);
        let pending: Vec<_> = log.pending.iter().map(|p| p["seq"].clone()).collect();
        assert_eq!(
            pending,
            vec![json!(2)],
            "the intent waits; the text settles nothing"
        );
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // Test case 1.
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_chain_recomputed_without_the_key_fails_with_it() {
        let key = b"k".as_slice();
        let mut r = json!({"seq": 1, "prev": GENESIS, "phase": "outcome"});
        let h = record_hash(&r);
        r["hash"] = json!(h);
        r["mac"] = json!(record_mac(key, MAC_GENESIS, &h));
        let line = format!("{}\n", canonical(&r));
        assert!(chain(line.as_bytes(), Some(key)).is_ok());
        r["mac"] = json!(record_mac(b"other", MAC_GENESIS, &h));
        let line = format!("{}\n", canonical(&r));
        assert!(chain(line.as_bytes(), None).is_ok());
        assert!(chain(line.as_bytes(), Some(key)).is_err());
    }
}
