//! Change notification for the index (Linux inotify): when nothing under the watched folders
//! has changed since the last sweep, the index answers without stamping every file again.
//!
//! The watcher only ever says "something may have changed"; the sweep of stamps stays the
//! source of truth. Anything doubtful — an event of any kind, a queue overflow, a folder that
//! could not be watched, a folder watched for the first time, a symbolic link among the files,
//! a platform without inotify — means "sweep".

use std::path::Path;

/// Watches folders; [`Watcher::changed`] says whether any event arrived since the last call.
#[derive(Debug)]
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// Watch descriptors seen so far: a new one means a folder was (re)created.
    known: std::collections::HashSet<i32>,
}

#[cfg(target_os = "linux")]
impl Watcher {
    /// A new watcher, or `None` when the system refuses one.
    pub fn new() -> Option<Watcher> {
        use std::os::fd::FromRawFd;
        // SAFETY: inotify_init1 has no memory-safety preconditions; a non-negative result is a
        // fresh descriptor that this value then owns.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        Some(Watcher {
            // SAFETY: `fd` was just returned by inotify_init1 and is owned by nobody else.
            fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) },
            known: Default::default(),
        })
    }

    /// Watches `dir` (idempotent). `Some(true)`: a folder not watched before; `None`: failure.
    pub fn watch(&mut self, dir: &Path) -> Option<bool> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        let mask = libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_MODIFY
            | libc::IN_ATTRIB
            | libc::IN_CLOSE_WRITE
            | libc::IN_MOVED_FROM
            | libc::IN_MOVED_TO
            | libc::IN_DELETE_SELF
            | libc::IN_MOVE_SELF;
        // SAFETY: the descriptor is open and `path` is a NUL-terminated string that outlives
        // the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), path.as_ptr(), mask) };
        if wd < 0 {
            return None;
        }
        Some(self.known.insert(wd))
    }

    /// Drains every pending event; true when there was any (or the queue could not be read).
    pub fn changed(&mut self) -> bool {
        use std::os::fd::AsRawFd;
        let mut any = false;
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: `buf` is valid for writes of its whole length for the duration of the call.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                any = true;
                continue;
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
                return any;
            }
            // End of file or a real error: trust nothing.
            return true;
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Watcher {
    /// Without inotify there is no watcher: every access sweeps.
    pub fn new() -> Option<Watcher> {
        None
    }

    /// Never called without a watcher.
    pub fn watch(&mut self, _dir: &Path) -> Option<bool> {
        None
    }

    /// Never called without a watcher.
    pub fn changed(&mut self) -> bool {
        true
    }
}

/// What the live-resources feed saw at its last look at an index: the snapshot and each
/// object's digest, by URI.
#[derive(Debug, Default)]
pub struct Seen {
    snapshot: Option<std::sync::Arc<super::Snapshot>>,
    digests: std::collections::BTreeMap<String, String>,
}

impl Seen {
    /// Whether a first look was taken.
    pub fn primed(&self) -> bool {
        self.snapshot.is_some()
    }
}

/// What changed between two looks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// The URIs whose object changed, appeared or vanished, sorted.
    pub updated: Vec<String>,
    /// Whether the set of URIs changed.
    pub listed: bool,
}

/// Looks at `index` (refreshing it as every access does) and says what changed since `seen`,
/// which it then updates; the first look reports nothing. An unchanged tree is the very same
/// snapshot, compared without reading an object.
pub fn changes(index: &super::Index, root: &Path, seen: &mut Seen) -> Changes {
    let now = index.snapshot(root);
    if seen
        .snapshot
        .as_ref()
        .is_some_and(|s| std::sync::Arc::ptr_eq(s, &now))
    {
        return Changes::default();
    }
    let digests: std::collections::BTreeMap<String, String> = now
        .objects
        .iter()
        .map(|o| (o.uri.clone(), o.digest.clone()))
        .collect();
    let first = seen.snapshot.is_none();
    let mut out = Changes::default();
    if !first {
        let before = &seen.digests;
        out.updated = before
            .keys()
            .chain(digests.keys())
            .filter(|u| before.get(*u) != digests.get(*u))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        out.listed = !before.keys().eq(digests.keys());
    }
    seen.snapshot = Some(now);
    seen.digests = digests;
    out
}
