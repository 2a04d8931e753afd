//! What the parse of one file answers and the small rules the parsers share (the id grammar,
//! the cut of a long text): `parse` and `adr` import it, and it imports neither, so the two do
//! not import each other both ways.

use std::sync::Arc;

use super::{Finding, Object};

/// The result of reading one file.
#[derive(Debug, Default)]
pub struct FileResult {
    /// The object, when the file is valid.
    pub object: Option<Arc<Object>>,
    /// Everything wrong with the file.
    pub findings: Vec<Finding>,
}

impl FileResult {
    /// The result of one finding and no object.
    pub(super) fn bad(
        file: &str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> FileResult {
        FileResult {
            object: None,
            findings: vec![Finding {
                file: file.to_string(),
                pointer: pointer.into(),
                message: message.into(),
            }],
        }
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut. The cut never halves a word
/// (a run of non-whitespace): the head of a secret cut in two would match no redaction rule,
/// so a cut word is dropped whole.
pub fn shorten(s: &str, max: usize) -> String {
    // Never more characters than bytes: a short text needs no count.
    if s.len() <= max || s.chars().count() <= max {
        return s.to_string();
    }
    let mut cut = s
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(s.len(), |(i, _)| i);
    if !s[cut..].starts_with(char::is_whitespace) {
        cut = s[..cut]
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + s[i..].chars().next().map_or(1, char::len_utf8));
    }
    let mut out = String::with_capacity(cut + '…'.len_utf8());
    out.push_str(s[..cut].trim_end());
    out.push('…');
    out
}

/// Whether `id` matches [`super::ID_GRAMMAR`] (`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`), checked
/// by hand: it is asked once per object (the test `the_id_grammar_is_the_regex` compares it with
/// the expression).
pub(super) fn is_valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}
