//! The confined file system: every file the process reads under the repository root is opened
//! through here, relative to a directory handle of the root, and read through the handle it was
//! checked on.
//!
//! * A path is walked from the root's handle one name at a time with `O_NOFOLLOW`: no symbolic
//!   link is ever followed by the kernel. A link met on the way is read (`readlinkat`) and its
//!   target walked lexically inside the root, from the folder holding it: an absolute target, a
//!   `..` above the root or more than [`MAX_LINKS`] links is [`Rule::SymlinkEscape`], a target
//!   that does not resolve too (a dangling link). On Linux, `openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS)` answers the common case (no link at all) in one call; any link sends
//!   the path to the walk.
//! * Every name met, including the names a link leads through, is checked against the `.git`
//!   and secret-file rules ([`crate::confine::name_rule`]): `adr/0001.md -> ../.env.production`
//!   is [`Rule::SecretFile`].
//! * The last name is opened `O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY` (a FIFO opens
//!   without waiting for a writer), then `fstat` on that handle refuses whatever is not a
//!   regular file ([`Rule::SpecialFile`]) and a file with more than one name
//!   ([`Rule::HardLink`]: another name may lie outside the repository). Its bytes are read
//!   through that same handle, never more than the reader's cap plus one.
//! * Folders are listed through a handle opened the same way ([`Root::open_dir`]), so a glob
//!   never lists a folder outside the repository.
//!
//! What a handle already held still sees: a folder moved out of the repository while it is
//! being listed keeps its entries (which were inside the repository a moment before).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::rules::{name_rule, Rule};

/// How many symbolic links one path may pass through (the kernel's own limit).
pub const MAX_LINKS: usize = 40;

/// Why a path could not be opened.
#[derive(Debug)]
pub enum Denied {
    /// A confinement rule refuses it: the rule and why, in words that name no outside path.
    Refused(Rule, String),
    /// Nothing has that name (or a folder on the way is a file).
    NotFound,
    /// A folder where a file was wanted.
    IsDir,
    /// A file (or something else) where a folder was wanted.
    NotDir,
    /// A symbolic link on the way, for a reader that follows none ([`Follow::Never`]).
    Link,
    /// The system refused (permissions, I/O).
    Io(std::io::Error),
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Denied::Refused(rule, why) => write!(f, "refused: {why} (rule {})", rule.as_str()),
            Denied::NotFound => f.write_str("does not exist"),
            Denied::IsDir => f.write_str("is a folder"),
            Denied::NotDir => f.write_str("is not a folder"),
            Denied::Link => {
                f.write_str("is reached through a symbolic link, which is not followed")
            }
            Denied::Io(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

impl From<Errno> for Denied {
    fn from(e: Errno) -> Denied {
        Denied::Io(e.into())
    }
}

/// Whether symbolic links inside the repository are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Links are resolved inside the repository (and refused when they lead out).
    Inside,
    /// Any link on the way is [`Denied::Link`].
    Never,
}

/// What an open handle's `fstat` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Length in bytes.
    pub len: u64,
    /// Number of names (hard links).
    pub nlink: u64,
    /// Inode number.
    pub ino: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// The kind of file.
    pub kind: FileType,
}

impl Meta {
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    fn of(st: &rfs::Stat) -> Meta {
        Meta {
            len: st.st_size as u64,
            nlink: st.st_nlink as u64,
            ino: st.st_ino as u64,
            mtime_ns: st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128,
            kind: FileType::from_raw_mode(st.st_mode as _),
        }
    }
}

/// A regular file with one name, opened under the root; read it through [`File::read_capped`].
#[derive(Debug)]
pub struct File {
    file: std::fs::File,
    meta: Meta,
}

impl File {
    /// What `fstat` said of the handle when it was opened.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Reads the whole file into `buf` (cleared first), refusing it ([`Rule::SizeCap`]) when
    /// its handle says it is longer than `cap`, and reading never more than `cap + 1` bytes (a
    /// file that grows past the cap while read is refused too).
    pub fn read_capped(&mut self, cap: u64, buf: &mut Vec<u8>) -> Result<(), Denied> {
        buf.clear();
        if self.meta.len > cap {
            return Err(over_cap(self.meta.len, cap));
        }
        buf.reserve(self.meta.len as usize + 1);
        (&mut self.file)
            .take(cap + 1)
            .read_to_end(buf)
            .map_err(Denied::Io)?;
        if buf.len() as u64 > cap {
            return Err(over_cap(buf.len() as u64, cap));
        }
        Ok(())
    }

    /// Reads at most `max` bytes (from the current position) into `buf`, cleared first.
    pub fn read_at_most(&mut self, max: u64, buf: &mut Vec<u8>) -> Result<(), Denied> {
        buf.clear();
        buf.reserve(max.min(16 << 20) as usize);
        (&mut self.file)
            .take(max)
            .read_to_end(buf)
            .map_err(Denied::Io)?;
        Ok(())
    }
}

fn over_cap(len: u64, cap: u64) -> Denied {
    Denied::Refused(
        Rule::SizeCap,
        format!("it holds {len} bytes, above the cap of {cap}"),
    )
}

/// One entry of a folder listing.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The name.
    pub name: OsString,
    /// What the listing says it is (a symbolic link is [`FileType::Symlink`], never its target).
    pub kind: FileType,
}

/// A folder opened under the root.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// The folder's entries, `.` and `..` left out, in the order the file system gives.
    pub fn entries(&self) -> Result<Vec<Entry>, Denied> {
        let mut dir = rfs::Dir::read_from(&self.fd)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let mut kind = entry.file_type();
            if kind == FileType::Unknown {
                kind = rfs::statat(&self.fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| Meta::of(&st).kind)
                    .unwrap_or(FileType::Unknown);
            }
            out.push(Entry {
                name: OsString::from_vec(name.to_vec()),
                kind,
            });
        }
        Ok(out)
    }

    /// `fstatat` of an entry, without following a link: for freshness stamps only (never a
    /// reason to open anything).
    pub fn stat(&self, name: &OsStr) -> Option<Meta> {
        rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| Meta::of(&st))
    }
}

/// The repository root, held open: every confined open starts from this handle.
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
}

/// One name still to walk, and whether a symbolic link's target put it there.
struct Step {
    name: OsString,
    from_link: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    File,
    Dir,
}

fn final_flags(want: Want) -> OFlags {
    let common = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    match want {
        Want::File => common | OFlags::NOCTTY,
        Want::Dir => common | OFlags::DIRECTORY,
    }
}

/// A folder on the way: opened only to look up the next name.
fn middle_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let base = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let base = OFlags::RDONLY;
    base | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn why_name(rule: Rule, through_link: bool) -> String {
    let why = match rule {
        Rule::GitDir => "nothing under .git/ is served",
        _ => "secret-bearing files are never served",
    };
    if through_link {
        format!("through a symbolic link: {why}")
    } else {
        why.to_string()
    }
}

fn escape(why: &str) -> Denied {
    Denied::Refused(Rule::SymlinkEscape, why.to_string())
}

/// The names of a repository-relative path (`/`-separated; empty and `.` segments dropped).
fn names_of(rel: &str) -> Vec<&OsStr> {
    rel.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(OsStr::new)
        .collect()
}

/// Checks an open handle: a regular file with one name.
fn checked_file(fd: OwnedFd) -> Result<File, Denied> {
    let meta = Meta::of(&rfs::fstat(&fd)?);
    match meta.kind {
        FileType::RegularFile => {}
        FileType::Directory => return Err(Denied::IsDir),
        other => {
            let what = match other {
                FileType::Fifo => "a FIFO",
                FileType::Socket => "a socket",
                FileType::CharacterDevice | FileType::BlockDevice => "a device",
                _ => "not a file",
            };
            return Err(Denied::Refused(
                Rule::SpecialFile,
                format!("it is {what}, not a regular file"),
            ));
        }
    }
    if meta.nlink > 1 {
        return Err(Denied::Refused(
            Rule::HardLink,
            format!(
                "it has {} names (hard links); another may lie outside the repository",
                meta.nlink
            ),
        ));
    }
    Ok(File {
        file: std::fs::File::from(fd),
        meta,
    })
}

impl Root {
    /// Opens the repository root (the one path opened by name: it is the operator's choice).
    pub fn open(path: &Path) -> std::io::Result<Root> {
        let dir = rfs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root { dir })
    }

    /// Opens the regular file at `rel` (repository-relative, `/`-separated) under every rule
    /// of this module.
    pub fn open_file(&self, rel: &str, follow: Follow) -> Result<File, Denied> {
        let fd = self.walk(&names_of(rel), Want::File, follow, false)?;
        checked_file(fd)
    }

    /// [`Root::open_file`] for a relative path whose names need not be UTF-8 (as a walker
    /// lists them).
    pub fn open_path(&self, rel: &Path, follow: Follow) -> Result<File, Denied> {
        let names: Vec<&OsStr> = rel
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        if names.len()
            != rel
                .components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .count()
        {
            // `..`, a root or a prefix: not a path under the root.
            return Err(Denied::NotFound);
        }
        let fd = self.walk(&names, Want::File, follow, false)?;
        checked_file(fd)
    }

    /// Opens `rel` under the repository's `.git` folder (e.g. `info/exclude`) under the same
    /// rules, `.git` itself excepted, and no link followed.
    pub fn open_git_file(&self, rel: &str) -> Result<File, Denied> {
        let mut names = vec![OsStr::new(".git")];
        names.extend(names_of(rel));
        let fd = self.walk(&names, Want::File, Follow::Never, true)?;
        checked_file(fd)
    }

    /// [`Root::open_git_file`] for a file of the shared git folder, which in a linked worktree
    /// is the main repository's ([`crate::gitdir::locate`]): opened there by the proven path,
    /// the last component not followed.
    pub fn open_shared_git_file(&self, root_path: &Path, rel: &str) -> Result<File, Denied> {
        use std::os::unix::fs::OpenOptionsExt;
        match crate::gitdir::locate(root_path) {
            Ok(l) if l.linked => {
                let f = std::fs::File::options()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(l.common.join(rel))
                    .map_err(|_| Denied::NotFound)?;
                checked_file(OwnedFd::from(f))
            }
            _ => self.open_git_file(rel),
        }
    }

    /// Opens the folder at `rel` (`""`: the root itself) for listing.
    pub fn open_dir(&self, rel: &str, follow: Follow) -> Result<Dir, Denied> {
        let fd = self.walk(&names_of(rel), Want::Dir, follow, false)?;
        Ok(Dir { fd })
    }

    /// Opens the folder `name` of `parent` (whose path is `parent_rel`): one `openat` relative
    /// to the parent's handle, or, when `name` is a symbolic link, the walk from the root.
    pub fn open_dir_in(
        &self,
        parent: &Dir,
        parent_rel: &str,
        name: &OsStr,
        follow: Follow,
    ) -> Result<Dir, Denied> {
        if let Some(rule) = name_rule(name) {
            return Err(Denied::Refused(rule, why_name(rule, false)));
        }
        match rfs::openat(&parent.fd, name, final_flags(Want::Dir), Mode::empty()) {
            Ok(fd) => Ok(Dir { fd }),
            Err(Errno::NOENT) => Err(Denied::NotFound),
            Err(Errno::LOOP | Errno::NOTDIR | Errno::MLINK) => {
                let mut rel = parent_rel.to_string();
                if !rel.is_empty() {
                    rel.push('/');
                }
                rel.push_str(&name.to_string_lossy());
                self.open_dir(&rel, follow)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `rel` resolves under every rule: `Ok(true)` when something is there,
    /// `Ok(false)` when the rest of the path does not exist (a writer may create it).
    pub fn probe(&self, rel: &str) -> Result<bool, Denied> {
        match self.walk(&names_of(rel), Want::File, Follow::Inside, false) {
            Ok(_) | Err(Denied::IsDir) => Ok(true),
            Err(Denied::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Walks `names` from the root and opens the last one; `git_ok`: the first name may be
    /// `.git`.
    fn walk(
        &self,
        names: &[&OsStr],
        want: Want,
        follow: Follow,
        git_ok: bool,
    ) -> Result<OwnedFd, Denied> {
        for (i, name) in names.iter().enumerate() {
            if git_ok && i == 0 && crate::rules::is_git_name(name) {
                continue;
            }
            if let Some(rule) = name_rule(name) {
                return Err(Denied::Refused(rule, why_name(rule, false)));
            }
        }
        if names.is_empty() {
            return match want {
                Want::Dir => Ok(rfs::openat(
                    &self.dir,
                    ".",
                    final_flags(Want::Dir),
                    Mode::empty(),
                )?),
                Want::File => Err(Denied::IsDir),
            };
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // The common case in one call: beneath the root, no symbolic link anywhere. Any
            // link (ELOOP), an older kernel (ENOSYS) or a doubt goes to the walk.
            let mut path = Vec::with_capacity(64);
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    path.push(b'/');
                }
                path.extend_from_slice(name.as_bytes());
            }
            let resolve = rfs::ResolveFlags::BENEATH
                | rfs::ResolveFlags::NO_SYMLINKS
                | rfs::ResolveFlags::NO_MAGICLINKS;
            match rfs::openat2(
                &self.dir,
                OsStr::from_bytes(&path),
                final_flags(want),
                Mode::empty(),
                resolve,
            ) {
                Ok(fd) => return Ok(fd),
                Err(Errno::NOENT) => return Err(Denied::NotFound),
                Err(Errno::ACCESS | Errno::PERM) => {
                    return Err(Denied::Io(Errno::ACCESS.into()));
                }
                Err(_) => {}
            }
        }
        self.walk_slowly(names, want, follow, git_ok)
    }

    /// The walk one name at a time (see the module documentation).
    fn walk_slowly(
        &self,
        names: &[&OsStr],
        want: Want,
        follow: Follow,
        git_ok: bool,
    ) -> Result<OwnedFd, Denied> {
        let mut queue: VecDeque<Step> = names
            .iter()
            .map(|n| Step {
                name: n.to_os_string(),
                from_link: false,
            })
            .collect();
        // The folders below the root on the way to the current one.
        let mut stack: Vec<OwnedFd> = Vec::new();
        let mut links = 0usize;
        let mut through_link = false;
        while let Some(step) = queue.pop_front() {
            let name = step.name.as_os_str();
            if name.is_empty() || name == "." {
                if queue.is_empty() {
                    return self.end_at_folder(&stack, want);
                }
                continue;
            }
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(escape(
                        "it passes through a symbolic link that resolves outside the repository",
                    ));
                }
                if queue.is_empty() {
                    return self.end_at_folder(&stack, want);
                }
                continue;
            }
            let git_first = git_ok && stack.is_empty() && !step.from_link && name == ".git";
            if let Some(rule) = name_rule(name).filter(|_| !git_first) {
                return Err(Denied::Refused(rule, why_name(rule, through_link)));
            }
            let last = queue.is_empty();
            let cur: BorrowedFd<'_> = stack.last().map_or(self.dir.as_fd(), |f| f.as_fd());
            let flags = if last {
                final_flags(want)
            } else {
                middle_flags()
            };
            let err = match rfs::openat(cur, name, flags, Mode::empty()) {
                Ok(fd) if last => return Ok(fd),
                Ok(fd) => {
                    stack.push(fd);
                    continue;
                }
                Err(e) => e,
            };
            match err {
                Errno::NOENT if step.from_link => {
                    return Err(escape("it passes through a dangling symbolic link"))
                }
                Errno::NOENT => return Err(Denied::NotFound),
                Errno::LOOP | Errno::NOTDIR | Errno::MLINK => {}
                e => return Err(e.into()),
            }
            // A symbolic link, or a file where a folder was wanted.
            match rfs::readlinkat(cur, name, Vec::new()) {
                Ok(target) => {
                    if follow == Follow::Never {
                        return Err(Denied::Link);
                    }
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(escape("it passes through more than 40 symbolic links"));
                    }
                    let target = target.into_bytes();
                    if target.first() == Some(&b'/') {
                        return Err(escape(
                            "it passes through a symbolic link that resolves outside the repository",
                        ));
                    }
                    if target.is_empty() {
                        return Err(escape("it passes through a dangling symbolic link"));
                    }
                    through_link = true;
                    for part in target.split(|&b| b == b'/').rev() {
                        queue.push_front(Step {
                            name: OsString::from_vec(part.to_vec()),
                            from_link: true,
                        });
                    }
                }
                Err(Errno::INVAL) if err == Errno::LOOP => {
                    // It was a link a moment ago and is not any more: look again, within the
                    // same budget.
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(escape("it changed too often while being resolved"));
                    }
                    queue.push_front(step);
                }
                Err(Errno::INVAL) if last && want == Want::Dir => return Err(Denied::NotDir),
                Err(Errno::INVAL) => return Err(Denied::NotFound),
                Err(Errno::NOENT) => return Err(Denied::NotFound),
                Err(e) => return Err(e.into()),
            }
        }
        self.end_at_folder(&stack, want)
    }

    /// A walk that ends on a folder (`.` or `..` last).
    fn end_at_folder(&self, stack: &[OwnedFd], want: Want) -> Result<OwnedFd, Denied> {
        match want {
            Want::File => Err(Denied::IsDir),
            Want::Dir => {
                let cur = stack.last().map_or(self.dir.as_fd(), |f| f.as_fd());
                Ok(rfs::openat(
                    cur,
                    ".",
                    final_flags(Want::Dir),
                    Mode::empty(),
                )?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn rule(d: Result<File, Denied>) -> String {
        match d {
            Err(Denied::Refused(rule, _)) => rule.as_str().to_string(),
            Err(other) => format!("{other:?}"),
            Ok(_) => "ok".into(),
        }
    }

    fn read(root: &Root, rel: &str) -> String {
        let mut f = root.open_file(rel, Follow::Inside).unwrap();
        let mut buf = Vec::new();
        f.read_capped(1 << 20, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    /// Every guard, each shown refusing what it guards.
    #[test]
    fn each_rule_refuses_what_it_guards() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("loot.txt"), "OUTSIDE").unwrap();
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        std::fs::create_dir_all(r.join("docs/adr")).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/config"), "git").unwrap();
        std::fs::write(r.join("docs/adr/0001.md"), "inside").unwrap();
        std::fs::write(r.join(".env.production"), "TOKEN=1").unwrap();
        std::fs::write(r.join("big.txt"), "0123456789").unwrap();
        symlink("../../.env.production", r.join("docs/adr/0002.md")).unwrap();
        symlink("../.git/config", r.join("docs/gitlink")).unwrap();
        symlink(outside.path().join("loot.txt"), r.join("abs-link")).unwrap();
        symlink("../../../loot.txt", r.join("docs/adr/up-link")).unwrap();
        symlink("nowhere/x", r.join("dangling")).unwrap();
        symlink("loop-b", r.join("loop-a")).unwrap();
        symlink("loop-a", r.join("loop-b")).unwrap();
        symlink("adr", r.join("docs/adr-link")).unwrap();
        symlink("../docs/adr/0001.md", r.join("docs/file-link")).unwrap();
        std::fs::hard_link(r.join("big.txt"), r.join("hard.txt")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            r.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let root = Root::open(r).unwrap();

        // Links inside are followed, from the folder holding them.
        assert_eq!(read(&root, "docs/adr-link/0001.md"), "inside");
        assert_eq!(read(&root, "docs/file-link"), "inside");
        for (rel, expected) in [
            ("docs/adr/0002.md", "secret_file"),
            ("docs/gitlink", "git_dir"),
            (".git/config", "git_dir"),
            (".env.production", "secret_file"),
            ("abs-link", "symlink_escape"),
            ("docs/adr/up-link", "symlink_escape"),
            ("dangling", "symlink_escape"),
            ("loop-a", "symlink_escape"),
            ("hard.txt", "hard_link"),
            ("big.txt", "hard_link"),
            ("fifo", "special_file"),
            ("docs/adr", "IsDir"),
            ("docs/none.md", "NotFound"),
            ("docs/adr/0001.md/x", "NotFound"),
        ] {
            assert_eq!(rule(root.open_file(rel, Follow::Inside)), expected, "{rel}");
        }
        assert!(matches!(
            root.open_file("docs/adr-link/0001.md", Follow::Never),
            Err(Denied::Link)
        ));
        // The size cap holds on the handle, and reads stop at cap + 1.
        std::fs::remove_file(r.join("hard.txt")).unwrap();
        let mut f = root.open_file("big.txt", Follow::Never).unwrap();
        let mut buf = Vec::new();
        let e = f.read_capped(4, &mut buf).unwrap_err();
        assert!(matches!(e, Denied::Refused(Rule::SizeCap, _)), "{e:?}");
        // Listing goes through the handle, and a folder link is resolved the same way.
        let dir = root.open_dir("docs/adr-link", Follow::Inside).unwrap();
        let mut names: Vec<String> = dir
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| e.name.to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["0001.md", "0002.md", "up-link"]);
        symlink(outside.path(), r.join("outdir")).unwrap();
        assert!(matches!(
            root.open_dir("outdir", Follow::Inside),
            Err(Denied::Refused(Rule::SymlinkEscape, _))
        ));
        // A walker's path: names that are not UTF-8 open; `..` or an absolute path do not.
        let latin1 = OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(r.join("docs").join(latin1), "x").unwrap();
        assert!(root
            .open_path(&Path::new("docs").join(latin1), Follow::Never)
            .is_ok());
        for p in ["docs/../big.txt", "/etc/passwd"] {
            assert!(
                matches!(
                    root.open_path(Path::new(p), Follow::Never),
                    Err(Denied::NotFound)
                ),
                "{p}"
            );
        }
        let docs = root.open_dir("docs", Follow::Never).unwrap();
        assert!(root
            .open_dir_in(&docs, "docs", OsStr::new("adr-link"), Follow::Inside)
            .is_ok());
        assert!(matches!(
            root.open_dir_in(&docs, "docs", OsStr::new("adr-link"), Follow::Never),
            Err(Denied::Link)
        ));
    }
}
