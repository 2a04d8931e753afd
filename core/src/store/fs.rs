//! Directory-relative file operations: every path is opened one component at a time from a
//! handle of the repository root with `O_NOFOLLOW`, so a symbolic link swapped in after a
//! check makes the operation fail instead of leaving the repository.
//!
//! The state folder `.seneschal/` is reached the same way, and each of its files (the lock,
//! the audit log, its anchor, the idempotency keys) is opened relative to the folder's handle
//! with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` to be a regular file with one link.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use seneschal_access::confine::{refusal, Rule};
use seneschal_access::error::CapabilityError;

use super::STATE_DIR;

pub(super) fn io_err(what: &str, e: impl std::fmt::Display) -> CapabilityError {
    CapabilityError::internal(format!("{what}: {e}"))
}

pub(super) fn cstr(name: &str) -> Result<CString, CapabilityError> {
    CString::new(name).map_err(|_| CapabilityError::invalid_input("a path holds a NUL byte"))
}

/// Opens `name` under `dir` as a directory without following a link.
pub(super) fn open_dir_at(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    let c = CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: `dir` is an open descriptor and `c` a NUL-terminated string.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Creates the folder `name` under `dir` (an existing one is fine) and opens it.
fn make_dir_at(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    match open_dir_at(dir, name) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            let c = CString::new(name).map_err(std::io::Error::other)?;
            // SAFETY: as in open_dir_at.
            if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(e);
                }
            } else {
                // The new folder's entry is durable before anything is renamed into it: the
                // sync of the folder that receives a file makes its rename durable, not the
                // folder's own name in its parent. An empty folder is no change to audit.
                // SAFETY: `dir` is an open descriptor.
                if unsafe { libc::fsync(dir.as_raw_fd()) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            open_dir_at(dir, name)
        }
        other => other,
    }
}

pub(super) fn open_root(root: &Path) -> Result<OwnedFd, CapabilityError> {
    let f = File::open(root).map_err(|e| io_err("the repository root cannot be opened", e))?;
    Ok(OwnedFd::from(f))
}

/// The descriptor of the folder holding `rel` (repository-relative), opened component by
/// component without following links; missing folders are created when `create` is set.
pub(super) fn parent_dir(
    root: &Path,
    rel: &str,
    create: bool,
) -> Result<(OwnedFd, String), CapabilityError> {
    // Every path here is repository-relative and normalized (confine made it so, or it came
    // from the audit log, which is repository content): `..`, `.`, empty components and
    // absolute paths are refused, so no descriptor walk leaves the root.
    if rel
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err(refusal(
            Rule::ParentDir,
            rel,
            "the store takes only normalized repository-relative paths",
            "",
        ));
    }
    let (mut dir, walk) = match rel.strip_prefix(".git/") {
        Some(rest) => (git_folder(root, rest, rel)?, rest),
        None => (open_root(root)?, rel),
    };
    let mut parts: Vec<&str> = walk.split('/').collect();
    let name = parts.pop().unwrap_or_default().to_string();
    for part in parts {
        cstr(part)?;
        let next = if create {
            make_dir_at(&dir, part)
        } else {
            open_dir_at(&dir, part)
        };
        dir = next.map_err(|e| link_refusal(rel, e))?;
    }
    Ok((dir, name))
}

/// The git folder `.git/<rest>` lives in, opened without following a link: `<root>/.git`, or
/// in a linked worktree the worktree's own git folder for its `HEAD` and index and the main
/// repository's for the rest ([`seneschal_access::gitdir::per_worktree`]), each checked to be the very
/// folder [`seneschal_access::gitdir::locate`] proved (same device and inode). These two are the only
/// places outside the root the store writes.
fn git_folder(root: &Path, rest: &str, rel: &str) -> Result<OwnedFd, CapabilityError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let located = match seneschal_access::gitdir::locate(root) {
        Ok(l) => l,
        Err(seneschal_access::gitdir::Unpinned::NoRepository) => {
            return Err(CapabilityError::not_found(format!(
                "`{rel}` does not exist"
            )))
        }
        Err(u) => return Err(u.into_error("the repository")),
    };
    if !located.linked {
        return open_dir_at(&open_root(root)?, ".git").map_err(|e| link_refusal(rel, e));
    }
    let (path, id) = if seneschal_access::gitdir::per_worktree(rest) {
        (&located.private, located.ids[0])
    } else {
        (&located.common, located.ids[1])
    };
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| link_refusal(rel, e))?;
    let same = f.metadata().is_ok_and(|m| (m.dev(), m.ino()) == id);
    if !same {
        return Err(seneschal_access::gitdir::Unpinned::Refused(
            "the git folder changed between its check and its use".into(),
        )
        .into_error("the repository"));
    }
    Ok(OwnedFd::from(f))
}

fn link_refusal(rel: &str, e: std::io::Error) -> CapabilityError {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => refusal(
            Rule::SymlinkEscape,
            rel,
            "a folder on the way is a symbolic link or not a folder; writes never follow links",
            "",
        ),
        Some(libc::ENOENT) => CapabilityError::not_found(format!("`{rel}` does not exist")),
        _ => io_err(&format!("cannot open the folder of `{rel}`"), e),
    }
}

/// The bytes of `rel`, or `None` when it does not exist (links are not followed).
pub fn read(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, CapabilityError> {
    let Some(mut f) = open_regular(root, rel)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| io_err(&format!("cannot read `{rel}`"), e))?;
    Ok(Some(bytes))
}

/// Whether `rel` exists, with the refusals of [`read`] (a link, a FIFO, a device) but without
/// reading its bytes: what a plan asks of a large file it replaces (`.git/index`).
pub fn exists(root: &Path, rel: &str) -> Result<bool, CapabilityError> {
    Ok(open_regular(root, rel)?.is_some())
}

/// `rel` opened for reading if it is a regular file, `None` when it does not exist; a link on
/// the way or at the end, and anything but a regular file, is refused.
fn open_regular(root: &Path, rel: &str) -> Result<Option<File>, CapabilityError> {
    let (dir, name) = match parent_dir(root, rel, false) {
        Ok(x) => x,
        Err(e) if e.code == seneschal_model::codes::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let c = cstr(&name)?;
    // SAFETY: as in open_dir_at.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(None),
            _ => Err(link_refusal(rel, e)),
        };
    }
    // SAFETY: freshly opened, owned here.
    let f = unsafe { File::from_raw_fd(fd) };
    // A FIFO or a device opened without blocking is refused before any read that would.
    if !f.metadata().is_ok_and(|m| m.file_type().is_file()) {
        return Err(state_refusal(
            rel,
            Rule::SpecialFile,
            "it is not a regular file (a folder, a FIFO or a device)",
        ));
    }
    Ok(Some(f))
}

/// Writes `bytes` to `rel` whole: a temporary file in the same folder, fsync, rename, fsync
/// of the folder.
pub fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), CapabilityError> {
    write_mode(root, rel, bytes, None)
}

/// [`write()`] with the permission bits the new file gets: `None` keeps those of the file it
/// replaces (a new file gets 0644 less the umask), `Some(mode)` sets them exactly (the
/// executable bit of a blob git checks out).
pub fn write_mode(
    root: &Path,
    rel: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<(), CapabilityError> {
    let (dir, name) = parent_dir(root, rel, true)?;
    let mode = mode.or_else(|| existing_mode(&dir, &name));
    write_at_mode(&dir, &name, rel, bytes, mode)
}

/// The permission bits of the regular file `name` under `dir` (links are not followed).
fn existing_mode(dir: &OwnedFd, name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is open, `c` NUL-terminated, `st` a valid out-parameter.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG).then_some(st.st_mode & 0o7777)
}

/// Writes `bytes` to `name` under `dir` whole (temporary file, fsync, rename, folder fsync);
/// `rel` names it in errors. A link at `name` is replaced, never followed.
pub(super) fn write_at(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    bytes: &[u8],
) -> Result<(), CapabilityError> {
    write_at_mode(dir, name, rel, bytes, None)
}

/// [`write_at`], the new file's permission bits set to `mode` when given.
fn write_at_mode(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<(), CapabilityError> {
    replace_at(dir, name, rel, bytes, mode)?;
    sync_dir(dir, rel)
}

/// [`write_at`] without the folder's fsync: the new file is whole before the rename (its own
/// fsync), but a crash may keep the old one. Only for the audit's anchor, which may lag behind
/// the log (a log longer than its anchor is no truncation) but never be torn.
pub(super) fn write_at_lagging(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    bytes: &[u8],
) -> Result<(), CapabilityError> {
    replace_at(dir, name, rel, bytes, None)
}

/// A temporary file written, fsynced and renamed over `name`.
fn replace_at(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<(), CapabilityError> {
    let dir = dir
        .try_clone()
        .map_err(|e| io_err(&format!("cannot write next to `{rel}`"), e))?;
    let staged = stage_at(dir, name, rel, bytes, mode)?;
    staged.sync()?;
    staged.commit().map(drop)
}

/// A whole new file written under a temporary name beside its target, neither synced nor
/// renamed yet: a write stages all its files, syncs them together with its intent
/// ([`Staged::sync`]), then renames each over its target ([`Staged::commit`]). Dropped
/// uncommitted, the temporary file is removed.
pub(super) struct Staged {
    dir: OwnedFd,
    tmp: CString,
    name: CString,
    rel: String,
    file: File,
    committed: bool,
}

/// Stages `bytes` for the repository-relative `rel` (its missing folders created), with the
/// permission bits `mode`, else those of the file it replaces (see [`write_mode`]).
pub(super) fn stage(
    root: &Path,
    rel: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<Staged, CapabilityError> {
    let (dir, name) = parent_dir(root, rel, true)?;
    let mode = mode.or_else(|| existing_mode(&dir, &name));
    stage_at(dir, &name, rel, bytes, mode)
}

impl Staged {
    /// Makes the temporary file's bytes durable (`fsync`).
    pub(super) fn sync(&self) -> Result<(), CapabilityError> {
        self.file
            .sync_all()
            .map_err(|e| io_err(&format!("cannot write `{}`", self.rel), e))
    }

    /// Renames the temporary file over its target; answers the handle of their folder, whose
    /// fsync makes the rename durable.
    pub(super) fn commit(mut self) -> Result<OwnedFd, CapabilityError> {
        // SAFETY: as in open_dir_at.
        let r = unsafe {
            libc::renameat(
                self.dir.as_raw_fd(),
                self.tmp.as_ptr(),
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
            )
        };
        if r != 0 {
            return Err(io_err(
                &format!("cannot move the new `{}` into place", self.rel),
                std::io::Error::last_os_error(),
            ));
        }
        self.committed = true;
        let dir = self
            .dir
            .try_clone()
            .map_err(|e| io_err(&format!("cannot sync the folder of `{}`", self.rel), e))?;
        Ok(dir)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            // SAFETY: as in open_dir_at.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.tmp.as_ptr(), 0) };
        }
    }
}

/// [`stage`] under the folder handle `dir`.
pub(super) fn stage_at(
    dir: OwnedFd,
    name: &str,
    rel: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<Staged, CapabilityError> {
    let cname = cstr(name)?;
    sweep_temporaries(&dir, name);
    let tmp = format!(
        ".{name}.seneschal-{}-{}.tmp",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    let ctmp = cstr(&tmp)?;
    // SAFETY: as in open_dir_at.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            ctmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io_err(
            &format!("cannot write next to `{rel}`"),
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: freshly opened, owned here.
    let mut f = unsafe { File::from_raw_fd(fd) };
    let chmod = |f: &File| match mode {
        Some(m) => {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(m))
        }
        None => Ok(()),
    };
    let written = chmod(&f).and_then(|()| f.write_all(bytes));
    let staged = Staged {
        dir,
        tmp: ctmp,
        name: cname,
        rel: rel.to_string(),
        file: f,
        committed: false,
    };
    // An error drops `staged`, which removes the temporary file.
    written.map_err(|e| io_err(&format!("cannot write `{rel}`"), e))?;
    Ok(staged)
}

/// The entry names of the folder `dir` (without `.` and `..`), read through its handle.
pub(super) fn list(dir: &OwnedFd) -> Vec<String> {
    // A fresh descriptor of the same folder: the listing owns (and closes) it.
    // SAFETY: as in open_dir_at; "." is a NUL-terminated literal.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c".".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Vec::new();
    }
    // SAFETY: `fd` is an open folder descriptor; on success the stream owns it.
    let stream = unsafe { libc::fdopendir(fd) };
    if stream.is_null() {
        // SAFETY: `fd` is still ours.
        unsafe { libc::close(fd) };
        return Vec::new();
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: `stream` is an open directory stream used by this thread only.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: `d_name` is a NUL-terminated name inside the entry readdir returned.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if let Ok(n) = name.to_str() {
            if n != "." && n != ".." {
                names.push(n.to_string());
            }
        }
    }
    // SAFETY: `stream` is open; this closes it and its descriptor.
    unsafe { libc::closedir(stream) };
    names
}

/// Removes temporary files of `name` left by a writer that died between creating and renaming
/// them. Only lock holders write, so under the lock every such file is an orphan. The folder
/// is listed and the files removed through its handle.
fn sweep_temporaries(dir: &OwnedFd, name: &str) {
    let prefix = format!(".{name}.seneschal-");
    for n in list(dir) {
        if n.starts_with(&prefix) && n.ends_with(".tmp") {
            if let Ok(c) = CString::new(n) {
                // SAFETY: as in open_dir_at.
                unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) };
            }
        }
    }
}

/// Removes the temporary files a killed writer left next to `rel` (settlement calls this for
/// each target of an interrupted write).
pub(super) fn sweep_temporaries_of(root: &Path, rel: &str) {
    if let Ok((dir, name)) = parent_dir(root, rel, false) {
        sweep_temporaries(&dir, &name);
    }
}

/// Removes `rel` and fsyncs its folder, then removes the folders the removal left empty (git
/// keeps no empty folder, and neither does a delete), never the root.
pub fn remove(root: &Path, rel: &str) -> Result<(), CapabilityError> {
    let (dir, name) = parent_dir(root, rel, false)?;
    if !remove_at(&dir, &name, rel)? {
        return Err(io_err(
            &format!("cannot delete `{rel}`"),
            std::io::Error::from_raw_os_error(libc::ENOENT),
        ));
    }
    drop(dir);
    let mut folder = rel;
    while let Some((up, _)) = folder.rsplit_once('/') {
        folder = up;
        let Ok((dir, name)) = parent_dir(root, folder, false) else {
            break;
        };
        let Ok(c) = CString::new(name) else { break };
        // SAFETY: as in open_dir_at; AT_REMOVEDIR removes only an empty folder (a link or a
        // file there fails with ENOTDIR, a full folder with ENOTEMPTY: both end the walk).
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
            break;
        }
        let _ = sync_dir(&dir, folder);
    }
    Ok(())
}

/// Removes `name` under `dir` and fsyncs the folder; `false` when it did not exist.
pub(super) fn remove_at(dir: &OwnedFd, name: &str, rel: &str) -> Result<bool, CapabilityError> {
    let c = cstr(name)?;
    // SAFETY: as in open_dir_at.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Ok(false);
        }
        return Err(io_err(&format!("cannot delete `{rel}`"), e));
    }
    sync_dir(dir, rel).map(|()| true)
}

pub(super) fn sync_dir(dir: &OwnedFd, rel: &str) -> Result<(), CapabilityError> {
    // SAFETY: `dir` is an open descriptor.
    if unsafe { libc::fsync(dir.as_raw_fd()) } != 0 {
        return Err(io_err(
            &format!("cannot sync the folder of `{rel}`"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The state folder.

/// A `refused` error about the state entry `rel` under `rule` (the readers' rules: a link is
/// `symlink_escape`, anything but a regular file `special_file`, a second name `hard_link`).
pub(super) fn state_refusal(rel: &str, rule: Rule, why: &str) -> CapabilityError {
    refusal(rule, rel, why, "")
}

/// The handle of `.seneschal/`, opened from a handle of the root without following a link;
/// created when `create` is set, `None` when absent otherwise.
pub(super) fn open_state(root: &Path, create: bool) -> Result<Option<OwnedFd>, CapabilityError> {
    let r = open_root(root)?;
    let opened = if create {
        make_dir_at(&r, STATE_DIR)
    } else {
        open_dir_at(&r, STATE_DIR)
    };
    match opened {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && !create => Ok(None),
        Err(e) => Err(state_dir_error(&r, STATE_DIR, STATE_DIR, e)),
    }
}

/// Opens (creating when `create`) the folder `name` of the state folder.
pub(super) fn open_state_dir(
    state: &OwnedFd,
    name: &str,
    create: bool,
) -> Result<Option<OwnedFd>, CapabilityError> {
    let rel = format!("{STATE_DIR}/{name}");
    let opened = if create {
        make_dir_at(state, name)
    } else {
        open_dir_at(state, name)
    };
    match opened {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && !create => Ok(None),
        Err(e) => Err(state_dir_error(state, name, &rel, e)),
    }
}

fn state_dir_error(parent: &OwnedFd, name: &str, rel: &str, e: std::io::Error) -> CapabilityError {
    // `O_DIRECTORY | O_NOFOLLOW` on a link answers ELOOP or ENOTDIR depending on the kernel.
    let link = e.raw_os_error() == Some(libc::ELOOP)
        || (e.raw_os_error() == Some(libc::ENOTDIR) && is_link_at(parent, name));
    match e.raw_os_error() {
        _ if link => state_refusal(
            rel,
            Rule::SymlinkEscape,
            "it is a symbolic link; seneschal never follows links in its state folder",
        ),
        Some(libc::ENOTDIR) => state_refusal(rel, Rule::SpecialFile, "it is not a folder"),
        _ => io_err(&format!("cannot open `{rel}`"), e),
    }
}

/// How a state file is opened.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Read only; absent is `None`.
    Read,
    /// Read and append, created when absent.
    Append,
    /// Read and write, created when absent (the lock).
    Create,
}

/// Opens the file `name` (`rel` in messages) under `dir` without following a link and checks
/// that it is a regular file with one link: anything else is refused, and nothing outside the
/// folder is created, read or written.
pub(super) fn open_state_file(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    mode: Mode,
) -> Result<Option<File>, CapabilityError> {
    let c = cstr(name)?;
    let base = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    let flags = match mode {
        Mode::Read => libc::O_RDONLY,
        Mode::Append => libc::O_RDWR | libc::O_APPEND | libc::O_CREAT,
        Mode::Create => libc::O_RDWR | libc::O_CREAT,
    };
    // SAFETY: as in open_dir_at.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            base | flags,
            0o600 as libc::c_uint,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) if mode == Mode::Read => Ok(None),
            Some(libc::ELOOP) => Err(state_refusal(
                rel,
                Rule::SymlinkEscape,
                "it is a symbolic link; seneschal never follows links in its state folder",
            )),
            Some(libc::EISDIR) | Some(libc::ENXIO) => Err(state_refusal(
                rel,
                Rule::SpecialFile,
                "it is not a regular file",
            )),
            _ => Err(io_err(&format!("cannot open `{rel}`"), e)),
        };
    }
    // SAFETY: freshly opened, owned here.
    let f = unsafe { File::from_raw_fd(fd) };
    let meta = f
        .metadata()
        .map_err(|e| io_err(&format!("cannot stat `{rel}`"), e))?;
    if !meta.file_type().is_file() {
        return Err(state_refusal(
            rel,
            Rule::SpecialFile,
            "it is not a regular file (a folder, a FIFO or a device)",
        ));
    }
    if std::os::unix::fs::MetadataExt::nlink(&meta) != 1 {
        return Err(state_refusal(
            rel,
            Rule::HardLink,
            "it has more than one link (a hard link shares it with a file elsewhere)",
        ));
    }
    Ok(Some(f))
}

/// The bytes of the state file `name` under `dir`, or `None` when absent.
pub(super) fn read_state(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
) -> Result<Option<Vec<u8>>, CapabilityError> {
    let Some(mut f) = open_state_file(dir, name, rel, Mode::Read)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| io_err(&format!("cannot read `{rel}`"), e))?;
    Ok(Some(bytes))
}

/// True when `name` under `dir` is a symbolic link.
fn is_link_at(dir: &OwnedFd, name: &str) -> bool {
    stat_at(dir, name).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// True when `name` exists under `dir` (as anything, links not followed).
pub(super) fn exists_at(dir: &OwnedFd, name: &str) -> bool {
    stat_at(dir, name).is_some()
}

/// `fstatat(AT_SYMLINK_NOFOLLOW)` of `name` under `dir`.
fn stat_at(dir: &OwnedFd, name: &str) -> Option<libc::stat> {
    let c = CString::new(name).ok()?;
    // SAFETY: `stat` is plain data; all zeroes is a valid value, overwritten by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as in open_dir_at; `st` is a valid place for the answer.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (r == 0).then_some(st)
}
