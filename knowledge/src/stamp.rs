//! What the knowledge layer's readers share below them: the [`Stamp`] that identifies one
//! version of a file (listing, reading and the index's freshness compare it) and the finding's
//! message for a file the confined file system would not open. `glob`, `kinds` and `scan`
//! import it; it imports none of them, so they do not import each other both ways.

use seneschal_access::confine::Rule;
use seneschal_access::rootfs::{Denied, Follow, Meta, Root};

/// What identifies one version of a file: an edit, a replacement or a truncation changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified_ns: i128,
    inode: u64,
}

impl Stamp {
    /// The length the stamp records, in bytes.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// The stamp of a file that is there but refused (a link out of the repository, a FIFO,
    /// ...): it differs from any file's, so a repaired file is seen.
    pub const REFUSED: Stamp = Stamp {
        len: u64::MAX,
        modified_ns: i128::MIN,
        inode: 0,
    };

    /// The stamp of what `fstat` (or a listing's `fstatat`) said.
    pub fn of_meta(m: &Meta) -> Stamp {
        Stamp {
            len: m.len,
            modified_ns: m.mtime_ns,
            inode: m.ino,
        }
    }

    /// The stamp of the regular file at `rel`, opened under the root (`None`: it cannot be).
    pub fn of_file(root: &Root, rel: &str) -> Option<Stamp> {
        root.open_file(rel, Follow::Inside)
            .ok()
            .map(|f| Stamp::of_meta(f.meta()))
    }
}

/// A finding's message for a file the confined file system would not open.
pub fn denied_message(denied: &Denied) -> String {
    match denied {
        Denied::Refused(Rule::SizeCap, _) => {
            "is over the 1 MiB cap for knowledge objects; it is not read".into()
        }
        Denied::Refused(rule, why) => format!("is not read: {why} (rule {})", rule.as_str()),
        Denied::IsDir => "is a folder, not a file".into(),
        other => other.to_string(),
    }
}
