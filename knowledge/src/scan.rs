//! Reading object files: file stamps for freshness, and the read of one listed file through
//! the confined file system into an object or findings ([`super::parse`] parses the bytes).
//!
//! A file is opened under the root's handle and read through the handle `fstat` checked. A
//! link escape, a secret-bearing name (whatever name or link leads there), a FIFO, socket or
//! device, a file with several names (hard link), a file holding a private key block or over
//! the cap is a finding naming the file, never content and never a wait.
//!
//! Nothing here returns an error: whatever is wrong with a file becomes a [`super::Finding`].

use std::sync::Arc;

use super::glob::Candidate;
use super::kinds::{Kind, Kinds};
use super::parse::{over_cap, parse_bytes, FileResult};
pub use super::stamp::{denied_message, Stamp};
use super::MAX_FILE_BYTES;
use seneschal_access::confine::Rule;
use seneschal_access::rootfs::{Follow, Root};

/// Reads the file of `cand` as an object of `kind` (`None`: the file is in the generic
/// folder and names its kind in its front matter), and answers the stamp of the version it
/// read: the stamp of the handle it read through, so that a file replaced between the listing
/// and the read is recorded as the version actually read. A file that is not read keeps the
/// listing's stamp (the listing stamps every file it can tell will not be read).
pub fn read_object(
    root: &Root,
    cand: &Candidate,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> (FileResult, Option<Stamp>) {
    let file = cand.rel.as_str();
    let early = |message: String| (FileResult::bad(file, "", message), cand.stamp);
    if !cand.utf8 {
        return early("the path is not UTF-8; rename the file (ids and URIs are text)".into());
    }
    // A listed length over the cap: the file is never opened.
    if let Some(len) = cand
        .stamp
        .filter(|_| !cand.via_symlink)
        .map(|s| s.size())
        .filter(|&len| len > MAX_FILE_BYTES)
    {
        return early(over_cap(len));
    }
    let (bytes, handle_stamp) = read_settled(root, &cand.rel);
    let stamp = handle_stamp.or(cand.stamp);
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(message) => return (FileResult::bad(file, "", message), stamp),
    };
    if seneschal_access::redact::holds_private_key(&bytes) {
        return (
            FileResult::bad(
                file,
                "",
                format!(
                    "holds a private key block (rule {}); it is not read",
                    Rule::SecretContent.as_str()
                ),
            ),
            stamp,
        );
    }
    let file_name = cand.rel.rsplit('/').next().unwrap_or(file);
    (parse_bytes(file, file_name, bytes, kind, kinds), stamp)
}

/// The bytes of the file at `rel`, opened under the root and read through that one handle,
/// whose own length (not the listing's, which a writer's rename may have outdated) says where
/// the end is, and the stamp of that handle (`None` when no regular file could be opened). A
/// file that another process is still appending to in place is read again, a few times, until
/// one read sees the length the handle reported.
pub fn read_settled(root: &Root, rel: &str) -> (Result<Vec<u8>, String>, Option<Stamp>) {
    const ATTEMPTS: usize = 4;
    let mut stamp = None;
    for _ in 0..ATTEMPTS {
        let mut handle = match root.open_file(rel, Follow::Inside) {
            Ok(h) => h,
            Err(e) => return (Err(denied_message(&e)), stamp),
        };
        let meta = *handle.meta();
        stamp = Some(Stamp::of_meta(&meta));
        if meta.len > MAX_FILE_BYTES {
            return (Err(over_cap(meta.len)), stamp);
        }
        // One byte more than the length, so that growth shows without a second read.
        let mut bytes = Vec::new();
        if let Err(e) = handle.read_at_most(meta.len + 1, &mut bytes) {
            return (Err(denied_message(&e)), stamp);
        }
        if bytes.len() as u64 <= meta.len {
            return (Ok(bytes), stamp);
        }
    }
    (
        Err(
            "kept growing while being read; it is read again on the next call once it settles"
                .into(),
        ),
        stamp,
    )
}
