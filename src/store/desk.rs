//! The approval desk: the pending approvals of every seneschal process serving one
//! repository, in `.seneschal/desk/`, where the person decides them (the cockpit of
//! `seneschal serve`, or `seneschal approvals` in a terminal).
//!
//! A process whose call needs an approval nobody can give through the client **submits** it:
//! `<id>.json` (the capability, the review sentence, the binding of the request and its plan,
//! the dry run's diff, the waiting process's pid and the time it gives up). The person
//! **decides** it: `<id>.decision` (`approve` or `decline`, and where), written once under
//! the lock. The waiting process polls for the decision and **withdraws** the pending file
//! under the lock when it has its answer, gives up or is cancelled, so a decision either
//! reaches the waiting call or is refused as too late: never both, never silently lost.
//!
//! Every file is reached through the state folder's handle without following a link (the
//! store's rules), and an id is 32 lowercase hex digits before it names a file.

use std::path::Path;

use serde_json::{json, Value};

use crate::error::{CapabilityError, ErrorCode};

use super::fs::{self};
use super::{lock, now, rfc3339, unix, STATE_DIR};

/// The folder of the desk, in the state folder.
const DESK_DIR: &str = "desk";

fn rel(name: &str) -> String {
    format!("{STATE_DIR}/{DESK_DIR}/{name}")
}

/// Whether `id` is a desk id (32 lowercase hex digits): only such an id names a file.
pub fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn check_id(id: &str) -> Result<(), CapabilityError> {
    if is_id(id) {
        Ok(())
    } else {
        Err(CapabilityError::invalid_input(format!(
            "`{id}` is not a pending approval's id (32 lowercase hex digits; `seneschal approvals list` names them)"
        )))
    }
}

/// Where a decision was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// The cockpit of `seneschal serve`, holding the desk secret.
    Cockpit,
    /// `seneschal approvals approve|decline` in the person's terminal.
    Terminal,
}

impl Where {
    /// Its name in decisions and in the audit's `approved_by`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Where::Cockpit => "cockpit",
            Where::Terminal => "terminal",
        }
    }

    fn parse(s: &str) -> Option<Where> {
        [Where::Cockpit, Where::Terminal]
            .into_iter()
            .find(|w| w.as_str() == s)
    }
}

/// A person's decision on one pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Approved (`true`) or declined.
    pub approve: bool,
    /// Where it was made.
    pub by: Where,
}

fn parse_decision(bytes: &[u8]) -> Option<Decision> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let approve = match v.get("decision")?.as_str()? {
        "approve" => true,
        "decline" => false,
        _ => return None,
    };
    Some(Decision {
        approve,
        by: Where::parse(v.get("by")?.as_str()?)?,
    })
}

/// Submits a pending approval (`record`: what the person is shown; `id`, `created` and
/// `pid` are added) and answers its id.
pub fn submit(root: &Path, mut record: Value) -> Result<String, CapabilityError> {
    let l = lock(root)?;
    let dir = fs::open_state_dir(&l.state, DESK_DIR, true)?.expect("created");
    let id = crate::text::hex(&crate::text::random::<16>());
    record["id"] = json!(id);
    record["created"] = json!(rfc3339(unix(now())));
    record["pid"] = json!(std::process::id());
    let name = format!("{id}.json");
    fs::write_at(&dir, &name, &rel(&name), record.to_string().as_bytes())?;
    Ok(id)
}

/// The decision on `id`, if the person made one (read without the lock: a decision file is
/// written whole, by rename).
pub fn decision(root: &Path, id: &str) -> Result<Option<Decision>, CapabilityError> {
    check_id(id)?;
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(None);
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(None);
    };
    let name = format!("{id}.decision");
    Ok(fs::read_state(&dir, &name, &rel(&name))?.and_then(|b| parse_decision(&b)))
}

/// Withdraws `id` under the lock (its waiting call has its answer, gave up or was
/// cancelled): the decision made before the withdrawal, if any, is answered, and a decision
/// tried later finds nothing to decide.
pub fn withdraw(root: &Path, id: &str) -> Result<Option<Decision>, CapabilityError> {
    check_id(id)?;
    let l = lock(root)?;
    let Some(dir) = fs::open_state_dir(&l.state, DESK_DIR, false)? else {
        return Ok(None);
    };
    let (pending, decided) = (format!("{id}.json"), format!("{id}.decision"));
    let made = fs::read_state(&dir, &decided, &rel(&decided))?.and_then(|b| parse_decision(&b));
    fs::remove_at(&dir, &pending, &rel(&pending))?;
    fs::remove_at(&dir, &decided, &rel(&decided))?;
    Ok(made)
}

/// Whether the process `pid` is alive (`kill(pid, 0)`: a process of another user answers
/// EPERM and is alive); a zombie (killed, not yet reaped by its parent) is not.
fn alive(pid: u64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 checks for the process's existence only.
    let exists = pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
    // `/proc/<pid>/stat` is `pid (comm) state …`; the command may hold parentheses.
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    exists && !zombie
}

/// The pending approvals no one has decided, oldest first. A pending file whose process is
/// gone (killed while it waited) or whose wait is over is removed as it is found.
pub fn list(root: &Path) -> Result<Vec<Value>, CapabilityError> {
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(Vec::new());
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(Vec::new());
    };
    let names = fs::list(&dir);
    let mut out = Vec::new();
    let now = unix(now());
    for name in &names {
        let Some(id) = name.strip_suffix(".json").filter(|id| is_id(id)) else {
            continue;
        };
        let Ok(Some(bytes)) = fs::read_state(&dir, name, &rel(name)) else {
            continue;
        };
        let Ok(record) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let stale = !record["pid"].as_u64().is_some_and(alive)
            || record["expires"].as_u64().is_some_and(|t| t < now);
        if stale {
            let _ = fs::remove_at(&dir, name, &rel(name));
            let decided = format!("{id}.decision");
            let _ = fs::remove_at(&dir, &decided, &rel(&decided));
            continue;
        }
        if names.iter().any(|n| *n == format!("{id}.decision")) {
            continue;
        }
        out.push(record);
    }
    out.sort_by(|a, b| {
        (a["created"].as_str(), a["id"].as_str()).cmp(&(b["created"].as_str(), b["id"].as_str()))
    });
    Ok(out)
}

/// Records the person's decision on `id` once, under the lock, and answers the pending
/// approval it decided: `not_found` when nothing waits under that id (decided, withdrawn,
/// timed out or never submitted), `conflict` when it was decided already.
pub fn decide(root: &Path, id: &str, approve: bool, by: Where) -> Result<Value, CapabilityError> {
    check_id(id)?;
    let gone = || {
        CapabilityError::not_found(format!(
            "no approval waits under `{id}`: it was decided, its call gave up or was cancelled, or it never existed (`seneschal approvals list` names those that wait)"
        ))
    };
    let l = lock(root)?;
    let dir = fs::open_state_dir(&l.state, DESK_DIR, false)?.ok_or_else(gone)?;
    let (pending, decided) = (format!("{id}.json"), format!("{id}.decision"));
    let record = fs::read_state(&dir, &pending, &rel(&pending))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .ok_or_else(gone)?;
    if fs::exists_at(&dir, &decided) {
        return Err(CapabilityError::new(
            ErrorCode::Conflict,
            format!("the approval `{id}` was decided already"),
        ));
    }
    let decision = json!({
        "decision": if approve { "approve" } else { "decline" },
        "by": by.as_str(),
        "time": rfc3339(unix(now())),
    });
    fs::write_at(
        &dir,
        &decided,
        &rel(&decided),
        decision.to_string().as_bytes(),
    )?;
    let mut answer = record;
    answer["decision"] = decision;
    Ok(answer)
}
