//! Handlers of the file writes: `files.write`, `files.edit`, `files.move` and `files.delete`.
//!
//! Each write is prepared under the repository lock (every path through `target`, the one
//! confinement of the file writes; the digest compared; the new bytes built) and then either
//! answered as a plan with its diff (`dry_run`) or applied through [`crate::store::transact`],
//! which records the intent in the audit log before it renames anything, exactly as the
//! knowledge writes do. Nothing here follows a symbolic link: the file is read through the
//! root's handle without following any ([`Follow::Never`]) and the store writes through
//! directory handles opened with `O_NOFOLLOW`.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::context::Call;
use crate::registry::types::{files_delete, files_edit, files_move, files_write};
use crate::store::{self, Effects};
use seneschal_access::confine::{self, refusal, Rule};
use seneschal_access::error::CapabilityError;
use seneschal_access::keep::shown_digest;
use seneschal_access::rootfs::{Denied, Follow, Root};
use seneschal_access::udiff::{self, Unified};

/// seneschal's own state folder: never a target of a file write.
const STATE: &str = crate::store::STATE_DIR;

/// A file a write names, checked and read.
struct Target {
    /// The confined repository-relative path.
    rel: String,
    /// Its bytes now; `None` when it does not exist.
    old: Option<Vec<u8>>,
}

/// The one confinement of the file writes: the readers' rules ([`confine::confine`]: no
/// absolute path, no `..`, nothing under `.git`, no secret-bearing name, no link that leads
/// out), then seneschal's state folder refused, then the file read through the root's handle
/// following no link at all (a link as the file or on the way is refused, as are FIFOs,
/// devices, folders and hard-linked files), over [`seneschal_access::gate::WHOLE_CAP`] refused, and bytes
/// holding a private key block refused.
fn target(root: &Path, path: &str, field: &str) -> Result<Target, CapabilityError> {
    let rel = confine::confine(root, path, field)?.rel;
    if rel.is_empty() {
        return Err(CapabilityError::invalid_input(format!(
            "`{path}` names the repository root, not a file"
        ))
        .at(field));
    }
    if rel
        .split('/')
        .next()
        .is_some_and(|first| first.eq_ignore_ascii_case(STATE))
    {
        return Err(refusal(
            Rule::StateDir,
            path,
            "seneschal's own state (lock, audit log, keys) is written by seneschal alone",
            field,
        ));
    }
    let handle = Root::open(root).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?;
    let mut bytes = Vec::new();
    let read = handle
        .open_file(&rel, Follow::Never)
        .and_then(|mut f| f.read_capped(seneschal_access::gate::WHOLE_CAP, &mut bytes));
    let old = match read {
        Ok(()) => Some(seneschal_access::gate::checked(bytes, path, field)?),
        Err(Denied::NotFound) => None,
        Err(Denied::Link) => {
            return Err(refusal(
                Rule::SymlinkEscape,
                path,
                "a symbolic link is on the way or is the file; writes never go through links",
                field,
            ))
        }
        Err(Denied::IsDir) => {
            return Err(refusal(
                Rule::SpecialFile,
                path,
                "it is a folder; the file writes take regular files only",
                field,
            ))
        }
        Err(Denied::NotDir) => {
            return Err(CapabilityError::invalid_input(format!(
                "a part of `{path}` is a file, not a folder"
            ))
            .at(field))
        }
        Err(Denied::Refused(rule, why)) => return Err(refusal(rule, path, &why, field)),
        Err(Denied::Io(e)) => {
            return Err(CapabilityError::internal(format!(
                "`{path}` cannot be read: {e}"
            )))
        }
    };
    Ok(Target { rel, old })
}

/// The digest check: a given `expected` must be the file's current digest (a missing file has
/// none).
fn compare(t: &Target, path: &str, expected: Option<&str>) -> Result<(), CapabilityError> {
    let Some(expected) = expected else {
        return Ok(());
    };
    match &t.old {
        Some(old) if shown_digest(old) == expected => Ok(()),
        Some(old) => Err(CapabilityError::conflict(format!(
            "`{path}` changed since it was read: its digest is now {}",
            shown_digest(old)
        ))
        .at("/expected_digest")
        .with_data(json!({"digest": shown_digest(old)}))),
        None => Err(CapabilityError::conflict(format!(
            "`{path}` does not exist, so it has no digest to compare"
        ))
        .at("/expected_digest")),
    }
}

/// New bytes refused by the content gate (a private key block) or over the size cap.
fn admit(bytes: Vec<u8>, path: &str, field: &str) -> Result<Vec<u8>, CapabilityError> {
    if bytes.len() as u64 > seneschal_access::gate::WHOLE_CAP {
        return Err(refusal(
            Rule::SizeCap,
            path,
            "the new file would be larger than 8 MiB",
            field,
        ));
    }
    seneschal_access::gate::checked(bytes, path, field)
}

/// Text for the diff: `None` for a binary side.
fn text(bytes: Option<&[u8]>) -> Option<&str> {
    bytes.map_or(Some(""), udiff::text)
}

/// A write ready to apply, with what a person judges it by.
struct Prepared {
    path: String,
    from: Option<String>,
    writes: Vec<(String, Option<Vec<u8>>)>,
    modes: Vec<(String, u32)>,
    effects: Effects,
    /// The bytes the answer's digest is of (`None`: deleted).
    result: Option<Vec<u8>>,
    diff: Unified,
    /// The review's own values (beyond the diff's line counts).
    review: Value,
}

fn review(id: &str, p: &Prepared) -> String {
    let d = crate::registry::find(id)
        .expect("a registered capability")
        .1;
    let mut values = p.review.clone();
    values["added"] = json!(p.diff.added);
    values["removed"] = json!(p.diff.removed);
    d.render_review(&values)
}

/// The answer of a prepared write in the output type of the capability module `$m` (the four
/// writes answer one shape, and so four generated types of one shape).
macro_rules! answer {
    ($m:ident) => {
        |id: &str, p: &Prepared, applied: bool, dry_run: bool| $m::Output {
            applied,
            dry_run,
            replayed: false,
            path: p.path.clone(),
            from: p.from.clone(),
            digest: p.result.as_deref().map(shown_digest),
            diff: p.diff.text.clone(),
            lines: $m::OutputLines {
                added: p.diff.added,
                removed: p.diff.removed,
            },
            plan: $m::OutputPlan {
                create: p.effects.create.clone(),
                change: p.effects.change.clone(),
                delete: p.effects.delete.clone(),
                counts: $m::OutputPlanCounts {
                    create: p.effects.create.len() as u64,
                    change: p.effects.change.len() as u64,
                    delete: p.effects.delete.len() as u64,
                },
            },
            review: review(id, p),
        }
    };
}

/// Runs a prepared write through [`super::plan_or_apply`].
fn run<T: Serialize + DeserializeOwned>(
    ctx: &Call,
    id: &str,
    raw: Value,
    dry_run: bool,
    answer: impl Fn(&str, &Prepared, bool, bool) -> T,
    prepare: impl Fn() -> Result<Prepared, CapabilityError>,
) -> Result<T, CapabilityError> {
    super::plan_or_apply(ctx, id, &raw, dry_run, |dry| {
        let p = prepare()?;
        let answer = answer(id, &p, !dry, dry);
        Ok(store::Plan {
            writes: store::tree_writes(&ctx.repo, p.writes)?,
            modes: p.modes,
            effects: p.effects,
            answer,
        })
    })
}

/// The line ending a text uses throughout: `\r\n` when every line feed follows a carriage
/// return (and there is one), else `\n`.
fn crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && text.matches("\r\n").count() == lf
}

/// `files.write`: create, or replace a file whose digest is given.
pub fn write(
    ctx: &Call,
    input: files_write::Input,
) -> Result<files_write::Output, CapabilityError> {
    let raw = json!(input);
    let prepare = || {
        let t = target(&ctx.repo, input.path.as_str(), "/path")?;
        if t.old.is_some() && input.expected_digest.is_none() {
            let digest = t.old.as_deref().map(shown_digest).unwrap_or_default();
            return Err(CapabilityError::conflict(format!(
                "`{}` exists: pass its digest {digest} as expected_digest to replace it, or edit it \
                 with files.edit",
                input.path.as_str()
            ))
            .at("/expected_digest")
            .with_data(json!({"digest": digest})));
        }
        compare(
            &t,
            input.path.as_str(),
            input.expected_digest.as_ref().map(|d| d.as_str()),
        )?;
        let mut content = input.content.to_string();
        if let Some(old) = t.old.as_deref().and_then(udiff::text) {
            // The file's line endings and final newline are kept.
            if crlf(old) && !content.contains("\r\n") {
                content = content.replace('\n', "\r\n");
            }
            let eol = if crlf(old) { "\r\n" } else { "\n" };
            if old.ends_with('\n') && !content.is_empty() && !content.ends_with('\n') {
                content.push_str(eol);
            }
            // Text read with its secrets shown redacted gets them back where they stood.
            content = seneschal_access::keep::keep(old, &content)
                .map_err(|l| l.error(input.path.as_str(), "/content"))?
                .into_owned();
        }
        let bytes = admit(content.into_bytes(), input.path.as_str(), "/content")?;
        let diff = match (text(t.old.as_deref()), udiff::text(&bytes)) {
            (Some(a), Some(b)) => {
                udiff::unified(t.old.as_ref().map(|_| t.rel.as_str()), Some(&t.rel), a, b)
            }
            _ => Unified::default(),
        };
        let mut effects = Effects::default();
        let change = if t.old.is_some() {
            effects.change.push(t.rel.clone());
            "replace"
        } else {
            effects.create.push(t.rel.clone());
            "new file"
        };
        Ok(Prepared {
            path: t.rel.clone(),
            from: None,
            writes: vec![(t.rel.clone(), Some(bytes.clone()))],
            modes: Vec::new(),
            effects,
            result: Some(bytes),
            diff,
            review: json!({"path": t.rel, "change": change}),
        })
    };
    run(
        ctx,
        "files.write",
        raw,
        input.dry_run.unwrap_or(false),
        answer!(files_write),
        prepare,
    )
}

/// The text after one edit: `old` must occur exactly once (a CRLF file matches `old` and
/// writes `new` with its own line endings when they were given with `\n`).
fn apply_edit(
    text: &str,
    i: usize,
    old: &str,
    new: &str,
    path: &str,
) -> Result<String, CapabilityError> {
    let mut tries = vec![(old.to_string(), new.to_string())];
    if crlf(text) && !old.contains("\r\n") && old.contains('\n') {
        tries.push((old.replace('\n', "\r\n"), new.replace('\n', "\r\n")));
    }
    let mut counts = Vec::new();
    for (o, n) in &tries {
        let count = text.matches(o.as_str()).count();
        if count == 1 {
            let n = if crlf(text) && !n.contains("\r\n") {
                n.replace('\n', "\r\n")
            } else {
                n.clone()
            };
            return Ok(text.replacen(o.as_str(), &n, 1));
        }
        counts.push(count);
    }
    let count = counts.into_iter().max().unwrap_or(0);
    let why = if count == 0 {
        "does not occur".to_string()
    } else {
        format!("occurs {count} times; add surrounding lines so that it occurs once")
    };
    Err(CapabilityError::invalid_input(format!(
        "edit {i}: its `old` text {why} in `{path}` (as the edits before it left the file)"
    ))
    .at(format!("/edits/{i}/old"))
    .with_data(json!({"edit": i, "matches": count})))
}

/// `files.edit`: exact-text replacements.
pub fn edit(ctx: &Call, input: files_edit::Input) -> Result<files_edit::Output, CapabilityError> {
    let raw = json!(input);
    let prepare = || {
        let t = target(&ctx.repo, input.path.as_str(), "/path")?;
        let Some(old) = t.old.as_deref() else {
            return Err(CapabilityError::not_found(format!(
                "`{}` does not exist",
                input.path.as_str()
            ))
            .at("/path"));
        };
        compare(
            &t,
            input.path.as_str(),
            input.expected_digest.as_ref().map(|d| d.as_str()),
        )?;
        let Some(before) = udiff::text(old) else {
            return Err(CapabilityError::invalid_input(format!(
                "`{}` is a binary file; files.edit changes text",
                input.path.as_str()
            ))
            .at("/path"));
        };
        // Edits match the text as the agent was shown it (secrets redacted): matching the
        // raw bytes would let a dry run confirm a guess at a secret. The secrets come back
        // where they stood.
        let mut after = seneschal_access::keep::shown(before).into_owned();
        for (i, e) in input.edits.iter().enumerate() {
            after = apply_edit(&after, i, &e.old, &e.new, input.path.as_str())?;
        }
        let after = seneschal_access::keep::keep(before, &after)
            .map_err(|l| l.error(input.path.as_str(), "/edits"))?
            .into_owned();
        let bytes = admit(after.into_bytes(), input.path.as_str(), "/edits")?;
        let diff = udiff::unified(
            Some(&t.rel),
            Some(&t.rel),
            before,
            std::str::from_utf8(&bytes).unwrap_or_default(),
        );
        let effects = Effects {
            change: vec![t.rel.clone()],
            ..Effects::default()
        };
        Ok(Prepared {
            path: t.rel.clone(),
            from: None,
            writes: vec![(t.rel.clone(), Some(bytes.clone()))],
            modes: Vec::new(),
            effects,
            result: Some(bytes),
            diff,
            review: json!({"path": t.rel, "count": input.edits.len()}),
        })
    };
    run(
        ctx,
        "files.edit",
        raw,
        input.dry_run.unwrap_or(false),
        answer!(files_edit),
        prepare,
    )
}

/// The permission bits of `rel` (no link followed), to carry through a move.
fn mode_of(root: &Path, rel: &str) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(root.join(rel))
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o7777)
}

/// `files.move`: a file to a new path.
pub fn move_file(
    ctx: &Call,
    input: files_move::Input,
) -> Result<files_move::Output, CapabilityError> {
    let raw = json!(input);
    let prepare = || {
        let from = target(&ctx.repo, input.from.as_str(), "/from")?;
        let Some(bytes) = from.old.clone() else {
            return Err(CapabilityError::not_found(format!(
                "`{}` does not exist",
                input.from.as_str()
            ))
            .at("/from"));
        };
        compare(
            &from,
            input.from.as_str(),
            input.expected_digest.as_ref().map(|d| d.as_str()),
        )?;
        let to = target(&ctx.repo, input.to.as_str(), "/to")?;
        if to.rel == from.rel {
            return Err(CapabilityError::invalid_input(format!(
                "`{}` and `{}` are the same path",
                input.from.as_str(),
                input.to.as_str()
            ))
            .at("/to"));
        }
        if to.old.is_some() {
            return Err(CapabilityError::conflict(format!(
                "`{}` exists; a move never replaces a file (delete it first, or choose another path)",
                input.to.as_str()
            ))
            .at("/to"));
        }
        let effects = Effects {
            create: vec![to.rel.clone()],
            delete: vec![from.rel.clone()],
            ..Effects::default()
        };
        let modes = mode_of(&ctx.repo, &from.rel)
            .map(|m| vec![(to.rel.clone(), m)])
            .unwrap_or_default();
        Ok(Prepared {
            path: to.rel.clone(),
            from: Some(from.rel.clone()),
            writes: vec![
                (to.rel.clone(), Some(bytes.clone())),
                (from.rel.clone(), None),
            ],
            modes,
            effects,
            result: Some(bytes),
            diff: Unified::default(),
            review: json!({"from": from.rel, "to": to.rel}),
        })
    };
    run(
        ctx,
        "files.move",
        raw,
        input.dry_run.unwrap_or(false),
        answer!(files_move),
        prepare,
    )
}

/// `files.delete`: one file.
pub fn delete(
    ctx: &Call,
    input: files_delete::Input,
) -> Result<files_delete::Output, CapabilityError> {
    let raw = json!(input);
    let prepare = || {
        let t = target(&ctx.repo, input.path.as_str(), "/path")?;
        let Some(old) = t.old.as_deref() else {
            return Err(CapabilityError::not_found(format!(
                "`{}` does not exist",
                input.path.as_str()
            ))
            .at("/path"));
        };
        compare(
            &t,
            input.path.as_str(),
            input.expected_digest.as_ref().map(|d| d.as_str()),
        )?;
        let diff = udiff::text(old)
            .map(|a| udiff::unified(Some(&t.rel), None, a, ""))
            .unwrap_or_default();
        Ok(Prepared {
            path: t.rel.clone(),
            from: None,
            writes: vec![(t.rel.clone(), None)],
            modes: Vec::new(),
            effects: Effects {
                delete: vec![t.rel.clone()],
                ..Effects::default()
            },
            result: None,
            diff,
            review: json!({"path": t.rel}),
        })
    };
    run(
        ctx,
        "files.delete",
        raw,
        input.dry_run.unwrap_or(false),
        answer!(files_delete),
        prepare,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_must_match_once_and_keeps_crlf() {
        assert_eq!(apply_edit("a\nb\n", 0, "b", "c", "f").unwrap(), "a\nc\n");
        let e = apply_edit("x x", 2, "x", "y", "f").unwrap_err();
        assert!(
            e.message.contains("edit 2") && e.message.contains("2 times"),
            "{}",
            e.message
        );
        assert_eq!(e.pointer.as_deref(), Some("/edits/2/old"));
        let e = apply_edit("abc", 0, "zzz", "y", "f").unwrap_err();
        assert!(e.message.contains("does not occur"), "{}", e.message);
        assert_eq!(
            apply_edit("one\r\ntwo\r\n", 0, "one\ntwo", "uno\ndos", "f").unwrap(),
            "uno\r\ndos\r\n"
        );
        assert!(crlf("a\r\nb\r\n") && !crlf("a\nb\r\n") && !crlf("no newline"));
    }
}
