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

use std::os::fd::OwnedFd;
use std::path::Path;

use serde_json::{json, Value};

use seneschal_access::error::{CapabilityError, ErrorCode};

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
    /// With an approval, the minutes for which the person also approved the other writes of
    /// the session that asked ([`GRANT_MINUTES`]), if they chose to.
    pub grant: Option<u64>,
}

/// The grants a person may give with an approval, in minutes: the session's other writes are
/// approved for that long (each still planned, shown on the desk's feed and audited).
pub const GRANT_MINUTES: [u64; 3] = [15, 60, 240];

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
        grant: v
            .get("grant_minutes")
            .and_then(Value::as_u64)
            .filter(|m| approve && GRANT_MINUTES.contains(m)),
    })
}

/// Submits a pending approval (`record`: what the person is shown, and the `key` of the
/// question it asks; `id`, `created` and `pid` are added) and answers its id. A process has
/// at most `most` approvals pending at once: one more is refused `refused`.
pub fn submit(root: &Path, mut record: Value, most: usize) -> Result<String, CapabilityError> {
    let l = lock(root)?;
    let dir = fs::open_state_dir(&l.state, DESK_DIR, true)?.expect("created");
    let pid = u64::from(std::process::id());
    let mine = records(&dir)
        .filter(|(_, r)| r["pid"].as_u64() == Some(pid))
        .count();
    if mine >= most {
        return Err(CapabilityError::new(
            ErrorCode::NotApproved,
            format!(
                "not put on the approval desk: {mine} approvals of this process wait there \
                 already; the person decides them first"
            ),
        ));
    }
    let id = seneschal_access::text::hex(&seneschal_access::text::random::<16>());
    record["id"] = json!(id);
    record["created"] = json!(rfc3339(unix(now())));
    record["pid"] = json!(std::process::id());
    let name = format!("{id}.json");
    fs::write_at(&dir, &name, &rel(&name), record.to_string().as_bytes())?;
    Ok(id)
}

/// The pending approvals in the desk folder `dir`: each `<id>.json` with its record.
fn records(dir: &OwnedFd) -> impl Iterator<Item = (String, Value)> + '_ {
    fs::list(dir).into_iter().filter_map(move |name| {
        let id = name
            .strip_suffix(".json")
            .filter(|id| is_id(id))?
            .to_string();
        let bytes = fs::read_state(dir, &name, &rel(&name)).ok()??;
        Some((id, serde_json::from_slice::<Value>(&bytes).ok()?))
    })
}

/// The approval this process submitted for the question `key` and has not withdrawn, decided
/// or not, while it is open (its id and when its time is over, in Unix seconds): a call made again finds the approval its first call left on the
/// desk. An approval whose time is over is withdrawn as it is found.
pub fn find(root: &Path, key: &str) -> Result<Option<(String, u64)>, CapabilityError> {
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(None);
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(None);
    };
    let pid = u64::from(std::process::id());
    let found = records(&dir)
        .find(|(_, r)| r["pid"].as_u64() == Some(pid) && r["key"].as_str() == Some(key));
    match found {
        Some((id, r)) if r["expires"].as_u64().is_some_and(|t| t < unix(now())) => {
            withdraw(root, &id)?;
            Ok(None)
        }
        Some((id, r)) => Ok(Some((id, r["expires"].as_u64().unwrap_or(0)))),
        None => Ok(None),
    }
}

/// Whether the approval `id` is still open: submitted, not withdrawn, its time not over.
pub fn open(root: &Path, id: &str) -> Result<bool, CapabilityError> {
    check_id(id)?;
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(false);
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(false);
    };
    let name = format!("{id}.json");
    Ok(fs::read_state(&dir, &name, &rel(&name))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|r| r["expires"].as_u64().is_none_or(|t| t >= unix(now()))))
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
/// timed out or never submitted), `conflict` when it was decided already. `grant`, with an
/// approval, also approves the asking session's other writes for that many minutes (one of
/// [`GRANT_MINUTES`]); `invalid_input` when the approval's session cannot hold a grant (it
/// has none: each call of a stateless client stands alone) or the minutes are not offered.
pub fn decide(
    root: &Path,
    id: &str,
    approve: bool,
    by: Where,
    grant: Option<u64>,
) -> Result<Value, CapabilityError> {
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
    if let Some(m) = grant {
        if !approve || !GRANT_MINUTES.contains(&m) || record["can_grant"] != json!(true) {
            return Err(CapabilityError::invalid_input(format!(
                "a grant goes with an approval, for {} minutes, to a session that can hold one \
                 (this approval's `can_grant` is {})",
                GRANT_MINUTES.map(|m| m.to_string()).join(", "),
                record["can_grant"]
            ))
            .at("/grant_minutes"));
        }
    }
    let mut decision = json!({
        "decision": if approve { "approve" } else { "decline" },
        "by": by.as_str(),
        "time": rfc3339(unix(now())),
    });
    if let Some(m) = grant {
        decision["grant_minutes"] = json!(m);
    }
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

/// The extension of a grant's file in the desk folder.
const GRANT_EXT: &str = ".grant";

/// Records a grant (`record`: the session it was given to, its client, where it was given
/// and `expires`; `id`, `created` and `pid` are added) and answers its id. The process that
/// holds the session keeps the id; the grant holds while its file does (the person revokes
/// it by removing it) and its time is not over.
pub fn grant(root: &Path, mut record: Value) -> Result<String, CapabilityError> {
    let l = lock(root)?;
    let dir = fs::open_state_dir(&l.state, DESK_DIR, true)?.expect("created");
    let id = seneschal_access::text::hex(&seneschal_access::text::random::<16>());
    record["id"] = json!(id);
    record["created"] = json!(rfc3339(unix(now())));
    record["pid"] = json!(std::process::id());
    let name = format!("{id}{GRANT_EXT}");
    fs::write_at(&dir, &name, &rel(&name), record.to_string().as_bytes())?;
    Ok(id)
}

/// Whether the grant `id` holds: its file is there and its time is not over.
pub fn grant_holds(root: &Path, id: &str) -> Result<bool, CapabilityError> {
    check_id(id)?;
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(false);
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(false);
    };
    let name = format!("{id}{GRANT_EXT}");
    Ok(fs::read_state(&dir, &name, &rel(&name))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|r| r["expires"].as_u64().is_some_and(|t| t >= unix(now()))))
}

/// The grants that hold, oldest first; one whose process is gone or whose time is over is
/// removed as it is found.
pub fn grants(root: &Path) -> Result<Vec<Value>, CapabilityError> {
    let Some(state) = fs::open_state(root, false)? else {
        return Ok(Vec::new());
    };
    let Some(dir) = fs::open_state_dir(&state, DESK_DIR, false)? else {
        return Ok(Vec::new());
    };
    let now = unix(now());
    let mut out = Vec::new();
    for name in fs::list(&dir) {
        if !name.strip_suffix(GRANT_EXT).is_some_and(is_id) {
            continue;
        }
        let Ok(Some(bytes)) = fs::read_state(&dir, &name, &rel(&name)) else {
            continue;
        };
        let Ok(record) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if !record["pid"].as_u64().is_some_and(alive)
            || record["expires"].as_u64().is_none_or(|t| t < now)
        {
            let _ = fs::remove_at(&dir, &name, &rel(&name));
            continue;
        }
        out.push(record);
    }
    out.sort_by(|a, b| {
        (a["created"].as_str(), a["id"].as_str()).cmp(&(b["created"].as_str(), b["id"].as_str()))
    });
    Ok(out)
}

/// Revokes the grant `id` under the lock: the session's next write is asked again.
/// `not_found` when no grant holds under that id.
pub fn revoke(root: &Path, id: &str) -> Result<Value, CapabilityError> {
    check_id(id)?;
    let gone = || {
        CapabilityError::not_found(format!(
            "no grant holds under `{id}`: it was revoked, its time is over, or its session ended (`seneschal approvals list` names those that hold)"
        ))
    };
    let l = lock(root)?;
    let dir = fs::open_state_dir(&l.state, DESK_DIR, false)?.ok_or_else(gone)?;
    let name = format!("{id}{GRANT_EXT}");
    let record = fs::read_state(&dir, &name, &rel(&name))?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .ok_or_else(gone)?;
    fs::remove_at(&dir, &name, &rel(&name))?;
    Ok(record)
}
