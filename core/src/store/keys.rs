//! Idempotency keys: `.seneschal/idempotency/<sha256 of key>.json`, read and written under
//! the lock through the handle of the state folder.
//!
//! A key is **reserved** (`pending`: the seq of its intent, with the answer the write gives)
//! after the intent is appended and before the write is applied; it is **confirmed** (pending
//! dropped) before the outcome `applied` is appended, **released** (deleted) before the
//! outcome `not_applied`/`failed`, or kept as a refusal when the outcome is `indeterminate`. So after any crash the key and the log agree once the intent
//! is settled, and a keyed retry answers the first outcome.

use std::os::fd::OwnedFd;
use std::time::SystemTime;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use seneschal_access::error::CapabilityError;
use seneschal_access::text::hex;

use super::fs::{self, Mode};
use super::{canonical, now, unix, Locked, KEY_TTL, STATE_DIR};

/// The folder of the stored keys, in the state folder.
const KEY_DIR_NAME: &str = "idempotency";

/// The hash a record carries for `key` (`sha256:<hex>`; the key file is `<hex>.json`).
pub(super) fn key_hash(key: &str) -> String {
    format!("sha256:{}", hex(&Sha256::digest(key.as_bytes())))
}

fn file_of(hash: &str) -> Option<String> {
    let h = hash.strip_prefix("sha256:")?;
    (h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())).then(|| format!("{h}.json"))
}

fn rel(name: &str) -> String {
    format!("{STATE_DIR}/{KEY_DIR_NAME}/{name}")
}

fn dir(l: &Locked, create: bool) -> Result<Option<OwnedFd>, CapabilityError> {
    fs::open_state_dir(&l.state, KEY_DIR_NAME, create)
}

fn read(l: &Locked, hash: &str) -> Result<Option<Value>, CapabilityError> {
    let (Some(d), Some(name)) = (dir(l, false)?, file_of(hash)) else {
        return Ok(None);
    };
    Ok(fs::read_state(&d, &name, &rel(&name))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok()))
}

/// What a stored key says about a new request.
pub(super) enum Replay {
    None,
    Same(Value),
}

/// Looks `key` up for `request`: a confirmed, unexpired key of the same request replays its
/// answer; of another request it is a conflict. A reservation (only ever left when its intent
/// was not applied: settlement confirms the others first) does not answer.
pub(super) fn check(l: &Locked, key: &str, request: &str) -> Result<Replay, CapabilityError> {
    let Some(stored) = read(l, &key_hash(key))? else {
        return Ok(Replay::None);
    };
    if stored["expires"].as_u64().unwrap_or(0) <= unix(now()) || !stored["pending"].is_null() {
        return Ok(Replay::None);
    }
    if let Some(seq) = stored["indeterminate"].as_u64() {
        return Err(CapabilityError::conflict(format!(
            "the first attempt with this idempotency key was interrupted and its target changed since \
             (audit record {seq}: indeterminate); it is not applied again: read the object and retry with a new key"
        ))
        .at("/idempotency_key")
        .with_data(json!({ "intent": seq })));
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

fn store(l: &Locked, hash: &str, record: &Value) -> Result<(), CapabilityError> {
    let name = file_of(hash).expect("a key hash");
    let d = dir(l, true)?.expect("created");
    fs::write_at(&d, &name, &rel(&name), canonical(record).as_bytes())
}

/// Reserves `key` for the intent `intent` with the answer the write will give.
pub(super) fn reserve(
    l: &Locked,
    key: &str,
    request: &str,
    answer: &Value,
    intent: u64,
) -> Result<(), CapabilityError> {
    let record = json!({
        "request": request,
        "result": answer,
        "expires": unix(now() + KEY_TTL),
        "pending": intent,
    });
    store(l, &key_hash(key), &record)
}

/// Confirms the reservation of the key whose hash is `hash` (the write was applied).
fn confirm(l: &Locked, hash: &str) -> Result<(), CapabilityError> {
    let Some(mut record) = read(l, hash)? else {
        return Ok(());
    };
    if let Some(m) = record.as_object_mut() {
        if m.remove("pending").is_none() {
            return Ok(());
        }
    }
    store(l, hash, &record)?;
    sweep_expired(l);
    Ok(())
}

/// Settles the reservation of the key whose hash is `hash` after its intent's `status`:
/// confirmed when `applied`, released when `not_applied`, and when `indeterminate` (the target
/// changed to something else) kept as a refusal, so that a retry neither replays an answer
/// that may be false nor applies the write a second time.
pub(super) fn settle(l: &Locked, hash: &str, status: &str) -> Result<(), CapabilityError> {
    match status {
        "applied" => confirm(l, hash),
        "not_applied" => release(l, hash),
        _ => {
            let Some(mut record) = read(l, hash)? else {
                return Ok(());
            };
            let Some(seq) = record.get("pending").cloned().filter(|p| !p.is_null()) else {
                return Ok(());
            };
            if let Some(m) = record.as_object_mut() {
                m.remove("pending");
                m.insert("indeterminate".into(), seq);
            }
            store(l, hash, &record)
        }
    }
}

/// Deletes the reservation of the key whose hash is `hash` (the write was not applied).
fn release(l: &Locked, hash: &str) -> Result<(), CapabilityError> {
    let (Some(d), Some(name)) = (dir(l, false)?, file_of(hash)) else {
        return Ok(());
    };
    match fs::read_state(&d, &name, &rel(&name))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    {
        Some(r) if !r["pending"].is_null() => fs::remove_at(&d, &name, &rel(&name)).map(|_| ()),
        _ => Ok(()),
    }
}

/// Deletes the stored keys that have expired, under the lock, so the folder holds at most a
/// day of keyed writes. A file is a candidate when it was last written more than [`KEY_TTL`]
/// ago (one `fstat` each); it is deleted when its own `expires` says so, or when it is not a
/// key record at all (it would never be read as one). Failures are left for the next sweep:
/// an expired key is ignored when read anyway.
fn sweep_expired(l: &Locked) {
    let Ok(Some(d)) = dir(l, false) else {
        return;
    };
    let now: SystemTime = now();
    for name in fs::list(&d) {
        let is_key = name.len() == 64 + ".json".len()
            && name.ends_with(".json")
            && name[..64].bytes().all(|b| b.is_ascii_hexdigit());
        if !is_key {
            continue;
        }
        let Ok(Some(mut f)) = fs::open_state_file(&d, &name, &rel(&name), Mode::Read) else {
            continue;
        };
        let old = f
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t + KEY_TTL <= now);
        if !old {
            continue;
        }
        let mut bytes = Vec::new();
        let expired = std::io::Read::read_to_end(&mut f, &mut bytes).is_ok()
            && serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| v["expires"].as_u64())
                .is_none_or(|e| e <= unix(now));
        if expired {
            let _ = fs::remove_at(&d, &name, &rel(&name));
        }
    }
}
