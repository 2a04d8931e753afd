//! Unified diffs of text: what a write's dry run shows, and what the audit records of it.
//!
//! The diff is `similar`'s Myers diff over lines, rendered as `git diff` and the reference
//! filesystem server's `edit_file` render theirs: `--- a/PATH`, `+++ b/PATH`, hunks with three
//! lines of context, `\ No newline at end of file` where a side lacks its last newline. A
//! created file diffs against `/dev/null`, a deleted one to it.

use similar::{ChangeTag, TextDiff};

/// A unified diff and its line counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unified {
    /// The diff text; empty when both sides are equal.
    pub text: String,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
}

/// The lines of context around each change.
pub const CONTEXT: usize = 3;

/// The diff from `old` (at `old_path`, `None`: the file is created) to `new` (at `new_path`,
/// `None`: the file is deleted).
pub fn unified(old_path: Option<&str>, new_path: Option<&str>, old: &str, new: &str) -> Unified {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Unified::default();
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => out.added += 1,
            ChangeTag::Delete => out.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    if out.added == 0 && out.removed == 0 {
        return out;
    }
    // A path is shown on its header line whole, its hidden characters escaped: a newline in
    // it would draw a line of its own (git quotes such a path; this escapes it).
    let shown = |p: &str| crate::display::for_person(p, p.len());
    let a = old_path.map_or_else(|| "/dev/null".to_string(), |p| format!("a/{}", shown(p)));
    let b = new_path.map_or_else(|| "/dev/null".to_string(), |p| format!("b/{}", shown(p)));
    out.text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .missing_newline_hint(true)
        .header(&a, &b)
        .to_string();
    out
}

/// Text of bytes a diff can show: UTF-8 without a NUL byte, or `None` (a binary file).
pub fn text(bytes: &[u8]) -> Option<&str> {
    if memchr::memchr(0, bytes).is_some() {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_reads_as_git_writes_it() {
        let d = unified(Some("f.txt"), Some("f.txt"), "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            d.text,
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!((d.added, d.removed), (1, 1));
    }

    #[test]
    fn created_deleted_equal_and_a_missing_newline() {
        let c = unified(None, Some("n.txt"), "", "x\n");
        assert!(
            c.text.starts_with("--- /dev/null\n+++ b/n.txt\n"),
            "{}",
            c.text
        );
        let d = unified(Some("n.txt"), None, "x\n", "");
        assert!(
            d.text.contains("+++ /dev/null") && d.removed == 1,
            "{}",
            d.text
        );
        assert_eq!(
            unified(Some("s"), Some("s"), "same\n", "same\n"),
            Unified::default()
        );
        let m = unified(Some("m"), Some("m"), "a\n", "a");
        assert!(
            m.text.contains("\\ No newline at end of file"),
            "{}",
            m.text
        );
        assert_eq!(text(b"a\0b"), None);
        assert_eq!(text(b"plain"), Some("plain"));
    }
}
