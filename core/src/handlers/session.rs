//! Handlers of the `session.*` group: notes held in this process's memory, never in a file.

use serde_json::json;

use crate::context::{Call, Note};
use crate::registry::types::{session_note_add, session_note_list};
use seneschal_access::error::CapabilityError;

fn notes<'a>(ctx: &'a Call<'_>) -> std::sync::MutexGuard<'a, Vec<Note>> {
    // A panic elsewhere while the lock was held leaves the notes themselves intact.
    ctx.notes
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub use seneschal_access::limits::MAX_NOTES;

/// `session.note.add`: appends a note; the same text twice makes two notes.
pub fn note_add(
    ctx: &Call,
    input: session_note_add::Input,
) -> Result<session_note_add::Output, CapabilityError> {
    let at_ms = u64::try_from(ctx.started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut notes = notes(ctx);
    if notes.len() >= MAX_NOTES {
        return Err(CapabilityError::refused(format!(
            "this process already holds {MAX_NOTES} notes, the most it keeps; \
             a new session (process) starts with none"
        ))
        .with_data(json!({ "rule": "note_cap", "limit": MAX_NOTES })));
    }
    let note = Note {
        id: notes.last().map_or(1, |n| n.id + 1),
        text: input.text.to_string(),
        at_ms,
    };
    notes.push(note.clone());
    Ok(session_note_add::Output {
        id: nonzero(note.id)?,
        text: note.text,
        at_ms: note.at_ms,
        count: nonzero(notes.len() as u64)?,
    })
}

/// `session.note.list`: the notes of this process, oldest first.
pub fn note_list(
    ctx: &Call,
    _input: session_note_list::Input,
) -> Result<session_note_list::Output, CapabilityError> {
    let notes = notes(ctx)
        .iter()
        .map(|n| {
            Ok(session_note_list::OutputNotesItem {
                id: nonzero(n.id)?,
                text: n.text.clone(),
                at_ms: n.at_ms,
            })
        })
        .collect::<Result<_, CapabilityError>>()?;
    Ok(session_note_list::Output { notes })
}

/// A count or id that starts at 1; zero would be a fault of this module.
fn nonzero(n: u64) -> Result<std::num::NonZeroU64, CapabilityError> {
    std::num::NonZeroU64::new(n).ok_or_else(|| CapabilityError::internal("a note id or count is 0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use crate::execute::{execute, Transport};
    use seneschal_model::policy::Effect;

    #[test]
    fn the_same_text_twice_makes_two_notes() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), Effect::ProcessState);
        let add = || {
            execute(
                &ctx,
                "session.note.add",
                json!({"text": "same"}),
                Transport::Cli,
            )
        };
        let first = add().unwrap();
        let second = add().unwrap();
        assert_eq!(first["id"], 1);
        assert_eq!(second["id"], 2);
        assert_eq!(second["count"], 2);
        let list = execute(&ctx, "session.note.list", json!({}), Transport::Cli).unwrap();
        let texts: Vec<&str> = list["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["same", "same"]);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no file is written"
        );
    }

    #[test]
    fn a_read_only_profile_refuses_to_add() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), Effect::Read);
        let e = execute(
            &ctx,
            "session.note.add",
            json!({"text": "x"}),
            Transport::Cli,
        )
        .unwrap_err();
        assert_eq!(e.code.as_str(), "refused");
        assert!(ctx.notes.lock().unwrap().is_empty());
    }

    #[test]
    fn a_process_holds_at_most_max_notes() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), Effect::ProcessState);
        for i in 0..MAX_NOTES {
            let r = execute(
                &ctx,
                "session.note.add",
                json!({"text": format!("note {i}")}),
                Transport::Cli,
            );
            assert_eq!(r.unwrap()["count"], i + 1);
        }
        let e = execute(
            &ctx,
            "session.note.add",
            json!({"text": "one more"}),
            Transport::Cli,
        )
        .unwrap_err();
        assert_eq!(e.code.as_str(), "refused");
        assert_eq!(e.data.as_ref().unwrap()["rule"], "note_cap");
        let list = execute(&ctx, "session.note.list", json!({}), Transport::Cli).unwrap();
        assert_eq!(list["notes"].as_array().unwrap().len(), MAX_NOTES);
        assert_eq!(
            list["notes"][MAX_NOTES - 1]["text"],
            format!("note {}", MAX_NOTES - 1)
        );
    }

    #[test]
    fn an_empty_note_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), Effect::ProcessState);
        let e = execute(
            &ctx,
            "session.note.add",
            json!({"text": ""}),
            Transport::Cli,
        )
        .unwrap_err();
        assert_eq!(e.code.as_str(), "invalid_input");
        assert_eq!(e.pointer.as_deref(), Some("/text"));
    }
}
