//! The repository's git directory, pinned to the root and isolated from its own configuration:
//! what makes `git` obey seneschal, not the repository.
//!
//! A repository travels as a tarball or a copy, so its `.git` is untrusted content like any
//! file. git reads the configuration of the repository it runs in, and that configuration can
//! name programs (`filter.*.clean|smudge|process`, `diff.*.textconv`, `diff.external`,
//! `core.fsmonitor`, `core.pager`, `core.sshCommand`, `credential.helper`, hooks, ...; every
//! release may add one) and reach outside the root (`core.worktree`, `include.path`, a `.git`
//! file, `commondir`, alternates). A deny-list of such keys cannot hold, so git never reads the
//! repository's configuration at all:
//!
//! * every git run gets `GIT_DIR=<root>/.git`, `GIT_WORK_TREE=<root>` and
//!   `GIT_COMMON_DIR=<private>`, a folder of this user's (mode 0700, under the temporary
//!   folder) whose `config` seneschal writes and whose `objects`, `refs`, `packed-refs`,
//!   `logs`, `shallow`, `reftable` and `info/exclude` are links to the repository's own. The
//!   per-worktree files (`HEAD`, `index`) are read from `<root>/.git` itself. There are no
//!   hooks and no `info/attributes` in the private folder, so none is read;
//! * a **linked worktree** (`git worktree add`: `<root>/.git` a file `gitdir: <main>/.git/
//!   worktrees/<name>`) is served only when [`locate`] proves git's own two-way link: the
//!   gitfile names a folder `<common>/worktrees/<name>` whose `gitdir` names `<root>/.git`
//!   back and whose `commondir` names `<common>`, every one of those paths free of symbolic
//!   links, and `<common>` a git folder of its own (no `commondir`). Git is then pinned to
//!   exactly those two places: `GIT_DIR` the worktree's folder (its `HEAD` and index), the
//!   private folder's links to `<common>`'s shared entries, the configuration derived from
//!   `<common>/config`; links inside either may lead only into the main repository (the
//!   common folder's parent, or the common folder itself when it is bare). The store writes
//!   `.git/HEAD` and `.git/index` into the worktree's folder and `.git/refs/…` into the common
//!   one, each opened by its proven path without following a link and checked to be the same
//!   folder (device and inode) the proof saw (`store/fs.rs` `git_folder`). Anything else a
//!   gitfile names is refused: another repository's `.git` (no `worktrees/<name>`), a folder
//!   whose `gitdir` names another checkout, a `commondir` that leads elsewhere, a path through
//!   a link. A **submodule's checkout** (`gitdir: <super>/.git/modules/<name>`) is refused
//!   too: its only back-link is `core.worktree` in the module's own `config`, a key of
//!   repository content with no second witness (git's worktree proof has two files git
//!   writes, the submodule's one setting anyone can write), so a submodule is served from a
//!   clone of its own;
//! * that `config` holds an **allow-list** of the repository's keys, copied by value
//!   ([`HONOURED`]: object format, file-system traits, line-ending conversion, remotes and
//!   branch upstreams), then seneschal's own settings ([`OURS`]): no fsmonitor, no submodule
//!   recursion, no auto-gc, no transport. A key that is not on the list is not honoured: it is
//!   never seen by git. `.gitattributes` may still name a filter or diff driver, but with no
//!   driver configured git applies none;
//! * the environment is cleared ([`std::process::Command::env_clear`]) and rebuilt: `PATH`,
//!   `LC_ALL=C`, no system or global configuration (`GIT_CONFIG_NOSYSTEM`,
//!   `GIT_CONFIG_GLOBAL=/dev/null`), no system attributes, no lazy fetch, no replace refs, no
//!   prompt, `HOME` the private folder;
//! * before every run, [`pin`] checks the layout and refuses (code `refused`, rule
//!   `git_pinned`) a `.git` that is a link or a gitfile the two-way link does not prove, a
//!   `commondir` in a main git folder, a `core.worktree` or an `include.path` that leads
//!   outside the root, alternates outside the root, and any of the linked entries that is a
//!   symbolic link out of the root (for a linked worktree: out of the main repository).
//!
//! What is left: git still follows a symbolic link planted deeper in `.git` (a loose object or
//! a ref file); such a file is only ever parsed as an object or a ref, and git's messages about
//! it never reach a client (the git door answers in seneschal's words). A process that can rewrite
//! `.git` while seneschal runs is outside this promise: the check and git's reads are two
//! moments.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::error::CapabilityError;
use crate::rules::Rule;

/// The repository keys git is shown, by `section.key` (lower case), or `section.*.key` for a
/// key of any subsection. Everything else in `.git/config` is left unread by git.
pub const HONOURED: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.checkstat",
    "core.trustctime",
    "core.logallrefupdates",
    "extensions.objectformat",
    "extensions.compatobjectformat",
    "extensions.refstorage",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.pushremote",
];

/// seneschal's own settings, after the honoured keys (a later value wins in git).
pub const OURS: &str = "[core]\n\tbare = false\n\tfsmonitor = false\n\tuntrackedCache = false\n\
[diff]\n\tignoreSubmodules = all\n\
[status]\n\tsubmoduleSummary = false\n\
[submodule]\n\trecurse = false\n\
[gc]\n\tauto = 0\n\
[maintenance]\n\tauto = false\n\
[protocol]\n\tallow = never\n\
[log]\n\tshowSignature = false\n\
[color]\n\tui = false\n";

/// The entries of `<root>/.git` the private folder links to (shared, non-worktree state).
const LINKED: &[&str] = &[
    "objects",
    "refs",
    "packed-refs",
    "logs",
    "shallow",
    "reftable",
];

/// The entries of `<root>/.git` that git reads and that must not lead out of the root.
const CHECKED: &[&str] = &[
    "config",
    "HEAD",
    "index",
    "objects",
    "objects/info",
    "objects/info/alternates",
    "refs",
    "packed-refs",
    "logs",
    "shallow",
    "reftable",
    "info",
    "info/exclude",
];

/// The largest `.git/config` (or alternates file) read: a real one is a few KiB.
pub const CONFIG_CAP: u64 = crate::limits::GIT_CONFIG_CAP;

/// The largest `.git` file, `gitdir` or `commondir` read: each holds one path.
pub const POINTER_CAP: u64 = crate::limits::GIT_POINTER_CAP;

/// Where a checkout's git state lives, as [`locate`] proved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The per-worktree git folder (`HEAD`, `index`): `<root>/.git`, or for a linked worktree
    /// `<common>/worktrees/<name>`.
    pub private: PathBuf,
    /// The shared git folder (objects, refs, `config`, `info/exclude`): `<root>/.git`, or for
    /// a linked worktree the main repository's git folder.
    pub common: PathBuf,
    /// The folder the links inside those two may lead into: the root, or for a linked
    /// worktree the main repository (the common folder's parent when it is a `.git`, else
    /// the common folder itself: a bare repository).
    pub bound: PathBuf,
    /// The root, resolved.
    pub real_root: PathBuf,
    /// Whether this is a linked worktree (a gitfile proven by the two-way link).
    pub linked: bool,
    /// The `(device, inode)` of `private` and `common` when they were proven (linked only):
    /// a folder opened later by path is checked to be the same one.
    pub ids: [(u64, u64); 2],
}

/// Whether `.git/<name>` is per-worktree state (in [`Located::private`]) rather than shared
/// (in [`Located::common`]), as git splits them: `HEAD`, the index (and its lock), `HEAD`'s
/// reflog and the per-worktree ref folders.
pub fn per_worktree(name: &str) -> bool {
    matches!(name, "HEAD" | "index" | "index.lock" | "logs/HEAD")
        || ["refs/bisect/", "refs/worktree/", "refs/rewritten/"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Where `.git/<name>` lives for `root`, to look at (a lock, the reftable, the index's time);
/// `<root>/.git/<name>` when the layout is not proven (every writer has pinned it first).
pub fn git_path(root: &Path, name: &str) -> PathBuf {
    match locate(root) {
        Ok(l) if per_worktree(name) => l.private.join(name),
        Ok(l) => l.common.join(name),
        Err(_) => root.join(".git").join(name),
    }
}

/// Finds where `root`'s git state lives, or says why it is not served.
///
/// `<root>/.git` a folder (not a link) is the whole answer. `<root>/.git` a regular file (a
/// gitfile, `gitdir: <path>`) is served only as git's own linked worktree, proven both ways:
/// it names a folder `<common>/worktrees/<name>` by a path with no symbolic link on it, whose
/// `gitdir` names `<root>/.git` back and whose `commondir` names `<common>`, again with no
/// link on the way, and `<common>` is a git folder of its own (no `commondir`). Anything else
/// a gitfile names (another repository's `.git`, a submodule's `modules/<name>`, a folder
/// whose back-link names another checkout) is refused.
pub fn locate(root: &Path) -> Result<Located, Unpinned> {
    let dot_git = root.join(".git");
    let meta = match std::fs::symlink_metadata(&dot_git) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unpinned::NoRepository),
        Err(e) => return Err(Unpinned::Internal(format!(".git cannot be read: {e}"))),
    };
    if meta.file_type().is_symlink() {
        return Err(Unpinned::Refused(
            ".git is a symbolic link; seneschal serves only a repository whose git folder is \
             <root>/.git itself, or a linked worktree whose .git file git wrote"
                .into(),
        ));
    }
    let real_root = root
        .canonicalize()
        .map_err(|e| Unpinned::Internal(format!("the root cannot be resolved: {e}")))?;
    if meta.is_dir() {
        return Ok(Located {
            private: dot_git.clone(),
            common: dot_git,
            bound: real_root.clone(),
            real_root,
            linked: false,
            ids: [(0, 0); 2],
        });
    }
    let refused = |why: &str| Err(Unpinned::Refused(format!(".git is a file that {why}")));
    if !meta.is_file() {
        return refused("is neither a folder nor a regular file");
    }
    let text = read_pointer(&dot_git)?;
    let Some(named) = text.strip_prefix("gitdir:").map(str::trim) else {
        return refused("does not start with `gitdir:`");
    };
    let Some(private) = unlinked(&real_root, named) else {
        return refused(
            "names a git folder that does not exist or is reached through a symbolic link",
        );
    };
    let (Some(worktrees), Some(_)) = (private.parent(), private.file_name()) else {
        return refused("names no linked worktree's git folder");
    };
    let Some(common) = worktrees.parent().map(Path::to_path_buf) else {
        return refused("names no linked worktree's git folder");
    };
    match worktrees.file_name().and_then(|n| n.to_str()) {
        Some("worktrees") => {}
        Some("modules") => {
            return refused(
                "points to a submodule's git folder (<super>/.git/modules/<name>); seneschal \
                 serves a gitfile only for a linked worktree (<main>/.git/worktrees/<name>), \
                 so a submodule is served from a clone of its own",
            )
        }
        _ => {
            return refused(
                "points to a git folder elsewhere that is not a linked worktree's \
                 (<main>/.git/worktrees/<name>); seneschal serves only <root>/.git or a linked \
                 worktree git made",
            )
        }
    }
    // The back-link: `gitdir` in the worktree's folder names this checkout's `.git`.
    let back = private.join("gitdir");
    if !std::fs::symlink_metadata(&back).is_ok_and(|m| m.is_file()) {
        return refused("names a worktree folder with no `gitdir` file naming this checkout");
    }
    let back_text = read_pointer(&back)?;
    if unlinked(&private, back_text.trim()).as_deref() != Some(dot_git_real(&real_root).as_path()) {
        return refused(
            "names a worktree folder whose `gitdir` does not name this checkout back (git's \
             two-way link is broken or forged)",
        );
    }
    // `commondir` names the main git folder, the one `worktrees/` is in.
    let cd = private.join("commondir");
    if !std::fs::symlink_metadata(&cd).is_ok_and(|m| m.is_file()) {
        return refused("names a worktree folder with no `commondir` file");
    }
    let cd_text = read_pointer(&cd)?;
    if unlinked(&private, cd_text.trim()).as_deref() != Some(common.as_path()) {
        return refused(
            "names a worktree folder whose `commondir` leads elsewhere than the folder it is in",
        );
    }
    if std::fs::symlink_metadata(common.join("commondir")).is_ok() {
        return refused("leads to a main git folder that has a `commondir` of its own");
    }
    let id = |p: &Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_dir())
            .map(|m| (m.dev(), m.ino()))
    };
    let (Some(private_id), Some(common_id)) = (id(&private), id(&common)) else {
        return refused("names a git folder that is not a folder");
    };
    let bound = if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        common.clone()
    };
    Ok(Located {
        private,
        common,
        bound,
        real_root,
        linked: true,
        ids: [private_id, common_id],
    })
}

/// Whether the branch `refs/heads/<branch>` is checked out by another worktree of `root`'s
/// repository (the main checkout's `HEAD`, or a `worktrees/<name>/HEAD` other than `root`'s
/// own): git refuses to switch a second worktree to it, and so does seneschal.
pub fn checked_out_elsewhere(root: &Path, branch: &str) -> bool {
    let Ok(located) = locate(root) else {
        return false;
    };
    let wanted = format!("ref: refs/heads/{branch}");
    let names = |p: &Path| read_pointer(p).is_ok_and(|t| t.trim() == wanted);
    if located.linked
        && located.common.file_name().is_some_and(|n| n == ".git")
        && names(&located.common.join("HEAD"))
    {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(located.common.join("worktrees")) else {
        return false;
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| *p != located.private)
        .any(|p| names(&p.join("HEAD")))
}

/// `<real_root>/.git`.
fn dot_git_real(real_root: &Path) -> PathBuf {
    real_root.join(".git")
}

/// One path read from a pointer file (`.git`, `gitdir`, `commondir`): a regular file, not a
/// link, at most [`POINTER_CAP`] bytes, its one line.
fn read_pointer(path: &Path) -> Result<String, Unpinned> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|_| {
            Unpinned::Refused(format!("{} cannot be read as a file", pointer_name(path)))
        })?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Unpinned::Refused(format!(
            "{} is not a regular file",
            pointer_name(path)
        )));
    }
    let mut bytes = Vec::new();
    file.take(POINTER_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Unpinned::Internal(format!("a git file cannot be read: {e}")))?;
    if bytes.len() as u64 > POINTER_CAP {
        return Err(Unpinned::Refused(format!(
            "{} is larger than {POINTER_CAP} bytes",
            pointer_name(path)
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Unpinned::Refused(format!("{} is not UTF-8", pointer_name(path))))?;
    Ok(text.lines().next().unwrap_or_default().to_string())
}

/// The name of a pointer file for messages (no machine path leaves).
fn pointer_name(path: &Path) -> String {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(".git") => ".git".into(),
        Some(n) => format!("the worktree's `{n}` file"),
        None => "a git file".into(),
    }
}

/// `named` (absolute, or relative to `base`) when it exists and no symbolic link is on its
/// way: its lexical form is its resolved form.
fn unlinked(base: &Path, named: &str) -> Option<PathBuf> {
    if named.is_empty() || named.contains('\0') {
        return None;
    }
    let joined = base.join(named);
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            std::path::Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let real = lexical.canonicalize().ok()?;
    (real == lexical).then_some(real)
}

/// A repository's git directory as git will be run on it.
#[derive(Debug)]
pub struct Pinned {
    /// The per-worktree git folder: `<root>/.git`, or a linked worktree's
    /// `<main>/.git/worktrees/<name>` ([`Located::private`]).
    pub git_dir: PathBuf,
    /// The repository's shared git folder ([`Located::common`]): its objects, refs, `config`.
    pub shared: PathBuf,
    /// The root.
    pub work_tree: PathBuf,
    /// The private common folder (its `config` is seneschal's).
    pub common: PathBuf,
}

/// Why a repository is not run: there is none, or its layout is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpinned {
    /// `<root>/.git` does not exist.
    NoRepository,
    /// The layout breaks the rule `git_pinned`: the sentence says how.
    Refused(String),
    /// The private folder cannot be made.
    Internal(String),
}

impl Unpinned {
    /// The capability error about `what`.
    pub fn into_error(self, what: &str) -> CapabilityError {
        match self {
            Unpinned::NoRepository => CapabilityError::not_found(format!(
                "{what}: there is no git repository here (no .git folder at the root)"
            )),
            Unpinned::Refused(why) => CapabilityError::refused(format!(
                "{what}: the repository is refused: {why} (rule {})",
                Rule::GitPinned.as_str()
            ))
            .with_data(json!({ "rule": Rule::GitPinned.as_str() })),
            Unpinned::Internal(why) => CapabilityError::internal(format!("{what}: {why}")),
        }
    }
}

/// What [`pin`] keeps per root: the stamp of the `.git/config` it derived the private
/// `config` from.
struct Kept {
    root: PathBuf,
    stamp: Stamp,
    located: Located,
    pinned: Arc<Pinned>,
}

/// The identity of a file's content as `stat` tells it (all zero for no file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamp {
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_ns: i64,
    ctime: i64,
    ctime_ns: i64,
}

impl Stamp {
    fn of(meta: Option<&std::fs::Metadata>) -> Stamp {
        match meta {
            None => Stamp::default(),
            Some(m) => Stamp {
                ino: m.ino(),
                size: m.size(),
                mtime: m.mtime(),
                mtime_ns: m.mtime_nsec(),
                ctime: m.ctime(),
                ctime_ns: m.ctime_nsec(),
            },
        }
    }
}

static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// The most roots whose private folder is remembered at once.
const KEPT_ROOTS: usize = 8;

/// Checks the layout of `root`'s git directory ([`locate`], then every entry git reads) and
/// returns how git is to be run on it: the private common folder, its `config` derived afresh
/// when the repository's `config` changed.
pub fn pin(root: &Path) -> Result<Arc<Pinned>, Unpinned> {
    let located = locate(root)?;
    if !located.linked && std::fs::symlink_metadata(located.common.join("commondir")).is_ok() {
        return Err(Unpinned::Refused(
            ".git/commondir points to a git folder elsewhere; seneschal serves only \
             <root>/.git or a linked worktree git made"
                .into(),
        ));
    }
    for name in CHECKED {
        let base = if per_worktree(name) {
            &located.private
        } else {
            &located.common
        };
        check_inside(&base.join(name), &located.bound, name)?;
    }
    check_alternates(&located.common, &located.bound)?;
    let config_meta = std::fs::metadata(located.common.join("config")).ok();
    let stamp = Stamp::of(config_meta.as_ref());
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = kept
        .iter()
        .find(|k| k.root == root && k.stamp == stamp && k.located == located)
    {
        return Ok(Arc::clone(&k.pinned));
    }
    let text = read_capped(&located.common.join("config"))?;
    let entries = parse_config(&text);
    check_config(&entries, &located.common, &located.bound)?;
    let common = private_folder(&located.real_root)?;
    write_private(&common, &located.common, &derived_config(&entries))?;
    let pinned = Arc::new(Pinned {
        git_dir: located.private.clone(),
        shared: located.common.clone(),
        work_tree: root.to_path_buf(),
        common,
    });
    kept.retain(|k| k.root != root);
    if kept.len() >= KEPT_ROOTS {
        kept.remove(0);
    }
    kept.push(Kept {
        root: root.to_path_buf(),
        stamp,
        located,
        pinned: Arc::clone(&pinned),
    });
    Ok(pinned)
}

/// Refuses `path` when it is a symbolic link whose target lies outside `real_root`.
fn check_inside(path: &Path, real_root: &Path, name: &str) -> Result<(), Unpinned> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_symlink() {
        return Ok(());
    }
    match path.canonicalize() {
        Ok(target) if target.starts_with(real_root) => Ok(()),
        _ => Err(Unpinned::Refused(format!(
            ".git/{name} is a symbolic link that leads outside the repository"
        ))),
    }
}

/// Refuses alternates (other object stores git would read) outside `real_root`.
fn check_alternates(git_dir: &Path, real_root: &Path) -> Result<(), Unpinned> {
    let file = git_dir.join("objects/info/alternates");
    if std::fs::symlink_metadata(&file).is_err() {
        return Ok(());
    }
    let text = read_capped(&file)?;
    let base = git_dir.join("objects");
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let inside = base
            .join(line.trim_matches('"'))
            .canonicalize()
            .is_ok_and(|p| p.starts_with(real_root));
        if !inside {
            return Err(Unpinned::Refused(
                ".git/objects/info/alternates names an object store outside the repository".into(),
            ));
        }
    }
    Ok(())
}

/// A file of `.git` read whole, up to [`CONFIG_CAP`]; a missing file reads empty.
fn read_capped(path: &Path) -> Result<String, Unpinned> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => {
            return Err(Unpinned::Internal(format!(
                "a git file cannot be read: {e}"
            )))
        }
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Unpinned::Refused(format!(
            "{} is not a regular file",
            shown(path)
        )));
    }
    let mut bytes = Vec::new();
    file.take(CONFIG_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Unpinned::Internal(format!("a git file cannot be read: {e}")))?;
    if bytes.len() as u64 > CONFIG_CAP {
        return Err(Unpinned::Refused(format!(
            "{} is larger than {CONFIG_CAP} bytes",
            shown(path)
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `.git/<name>` for a path under the git folder, for messages (no machine path leaves).
fn shown(path: &Path) -> String {
    let s = path.to_string_lossy();
    match s.find("/.git/") {
        Some(at) => s[at + 1..].to_string(),
        None => "a git file".to_string(),
    }
}

/// One `section[.subsection].key = value` of a git configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The section, lower case.
    pub section: String,
    /// The subsection, as written (case kept), if any.
    pub subsection: Option<String>,
    /// The key, lower case.
    pub key: String,
    /// The value; `None` for a bare key (boolean true).
    pub value: Option<String>,
}

/// Reads a git configuration file leniently: a line that cannot be read is skipped (nothing
/// on it is honoured). Comments (`#`, `;`), quoting, escapes and continued lines are read as
/// git reads them.
pub fn parse_config(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut section = String::new();
    let mut subsection: Option<String> = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut rest = line.trim_start();
        if let Some(head) = rest.strip_prefix('[') {
            let Some((name, after)) = parse_header(head) else {
                section.clear();
                continue;
            };
            (section, subsection) = name;
            rest = after.trim_start();
        }
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') || section.is_empty() {
            continue;
        }
        let key_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        let key = rest[..key_end].to_ascii_lowercase();
        if key.is_empty() || !key.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let after = rest[key_end..].trim_start();
        let value = if after.is_empty() || after.starts_with('#') || after.starts_with(';') {
            None
        } else if let Some(v) = after.strip_prefix('=') {
            let mut raw = v.to_string();
            // A value continued on the next line ends with an unescaped backslash.
            while ends_continued(&raw) {
                raw.pop();
                match lines.next() {
                    Some(next) => raw.push_str(next),
                    None => break,
                }
            }
            match parse_value(&raw) {
                Some(v) => Some(v),
                None => continue,
            }
        } else {
            continue;
        };
        entries.push(Entry {
            section: section.clone(),
            subsection: subsection.clone(),
            key,
            value,
        });
    }
    entries
}

/// A section header after its `[`: the section and subsection, and the rest of the line.
fn parse_header(head: &str) -> Option<((String, Option<String>), &str)> {
    let end_name = head.find(|c: char| c == ']' || c.is_whitespace())?;
    let name = &head[..end_name];
    let rest = &head[end_name..];
    if let Some(after) = rest.strip_prefix(']') {
        // `[section]` or the old `[section.subsection]` (lower-cased by git).
        return match name.split_once('.') {
            Some((s, sub)) => Some((
                (s.to_ascii_lowercase(), Some(sub.to_ascii_lowercase())),
                after,
            )),
            None => Some(((name.to_ascii_lowercase(), None), after)),
        };
    }
    let quoted = rest.trim_start().strip_prefix('"')?;
    let mut sub = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => sub.push(chars.next()?.1),
            '"' => {
                let after = quoted[i + 1..].strip_prefix(']')?;
                return Some(((name.to_ascii_lowercase(), Some(sub)), after));
            }
            _ => sub.push(c),
        }
    }
    None
}

fn ends_continued(raw: &str) -> bool {
    let trailing = raw.bytes().rev().take_while(|b| *b == b'\\').count();
    trailing % 2 == 1
}

/// A value as git reads it: quotes removed, escapes applied, an unquoted comment cut,
/// unquoted whitespace at the ends trimmed. `None` for a malformed value.
fn parse_value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push_str(&pending_space);
                pending_space.clear();
                quoted = !quoted;
            }
            '\\' => {
                out.push_str(&pending_space);
                pending_space.clear();
                match chars.next()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'b' => {
                        out.pop();
                    }
                    '\\' => out.push('\\'),
                    '"' => out.push('"'),
                    _ => return None,
                }
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => pending_space.push(c),
            c => {
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(c);
            }
        }
    }
    if quoted {
        return None;
    }
    Some(out)
}

/// Refuses a configuration that would take git outside the root: `core.worktree` other than
/// the root, an include whose file lies outside it.
fn check_config(entries: &[Entry], git_dir: &Path, real_root: &Path) -> Result<(), Unpinned> {
    for e in entries {
        let named = |p: &str| -> PathBuf {
            match p.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default()
                    .join(rest),
                None => git_dir.join(p),
            }
        };
        let Some(value) = &e.value else { continue };
        if e.section == "core" && e.subsection.is_none() && e.key == "worktree" {
            let at_root = named(value)
                .canonicalize()
                .is_ok_and(|p| p.as_path() == real_root);
            if !at_root {
                return Err(Unpinned::Refused(
                    "core.worktree in .git/config names a work tree other than the root".into(),
                ));
            }
        }
        if (e.section == "include" || e.section == "includeif") && e.key == "path" {
            // A file that does not exist includes nothing, inside or out; one that resolves
            // outside the root is refused. Inside ones are not followed either.
            let target = named(value);
            let outside = match target.canonicalize() {
                Ok(p) => !p.starts_with(real_root),
                Err(_) => !target.starts_with(git_dir),
            };
            if outside {
                return Err(Unpinned::Refused(
                    "an include in .git/config names a file outside the repository".into(),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `e` is on [`HONOURED`].
fn honoured(e: &Entry) -> bool {
    HONOURED.iter().any(|k| {
        let mut parts = k.split('.');
        let (Some(s), Some(mid), last) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        match last {
            None => e.section == s && e.subsection.is_none() && e.key == mid,
            Some(key) => mid == "*" && e.section == s && e.subsection.is_some() && e.key == key,
        }
    })
}

/// The private `config`: the honoured keys of `entries`, then [`OURS`].
pub fn derived_config(entries: &[Entry]) -> String {
    let mut out = String::from(
        "# Written by seneschal (access/src/gitdir.rs): the only configuration git reads.\n",
    );
    for e in entries.iter().filter(|e| honoured(e)) {
        let Some(value) = &e.value else { continue };
        if value.chars().any(char::is_control)
            || e.subsection
                .as_deref()
                .is_some_and(|s| s.chars().any(char::is_control))
        {
            continue;
        }
        match &e.subsection {
            Some(sub) => out.push_str(&format!("[{} \"{}\"]\n", e.section, escape(sub))),
            None => out.push_str(&format!("[{}]\n", e.section)),
        }
        out.push_str(&format!("\t{} = \"{}\"\n", e.key, escape(value)));
    }
    out.push_str(OURS);
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// This user's folder of private git folders, made 0700 and checked to be ours.
fn private_base() -> Result<PathBuf, Unpinned> {
    let uid = rustix::process::geteuid().as_raw();
    let base = std::env::temp_dir().join(format!("seneschal-{uid}"));
    match std::fs::create_dir(&base) {
        Ok(()) => {
            let _ = std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Unpinned::Internal(format!("no private git folder: {e}"))),
    }
    let meta = std::fs::symlink_metadata(&base)
        .map_err(|e| Unpinned::Internal(format!("no private git folder: {e}")))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(Unpinned::Internal(format!(
            "the private git folder {} is not this user's alone (mode 0700)",
            base.display()
        )));
    }
    Ok(base)
}

/// The private common folder of the repository at `real_root`.
fn private_folder(real_root: &Path) -> Result<PathBuf, Unpinned> {
    let digest = {
        use sha2::Digest;
        crate::text::hex(&sha2::Sha256::digest(
            real_root.as_os_str().as_encoded_bytes(),
        ))
    };
    let dir = private_base()?.join(&digest[..24]);
    if let Err(e) = std::fs::create_dir(&dir) {
        if !dir.is_dir() {
            return Err(Unpinned::Internal(format!("no private git folder: {e}")));
        }
    }
    Ok(dir)
}

/// Lays out the private folder: the links to `git_dir`'s shared entries, `info/exclude`, and
/// `config` (replaced atomically when its text differs).
fn write_private(common: &Path, git_dir: &Path, config: &str) -> Result<(), Unpinned> {
    let fail = |e: std::io::Error| Unpinned::Internal(format!("the private git folder: {e}"));
    for name in LINKED {
        link(&git_dir.join(name), &common.join(name)).map_err(fail)?;
    }
    std::fs::create_dir_all(common.join("info")).map_err(fail)?;
    link(&git_dir.join("info/exclude"), &common.join("info/exclude")).map_err(fail)?;
    let path = common.join("config");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(config) {
        let tmp = common.join(format!("config.{}.tmp", std::process::id()));
        std::fs::write(&tmp, config).map_err(fail)?;
        std::fs::rename(&tmp, &path).map_err(fail)?;
    }
    Ok(())
}

/// Makes `at` a symbolic link to `target` (replacing a different one).
fn link(target: &Path, at: &Path) -> std::io::Result<()> {
    if std::fs::read_link(at).is_ok_and(|t| t == target) {
        return Ok(());
    }
    let tmp = at.with_extension(format!("{}.link", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, at)
}

/// Sets `cmd` up to run git on `pinned` only: the environment cleared and rebuilt. git also
/// writes its output in blocks (`GIT_FLUSH=0`): into a pipe it would otherwise flush after
/// every commit of a log (a write and a wake-up of the reader each), and every reader here
/// takes git's whole answer; `cat-file`'s batch modes, which the resident readers talk to a
/// line at a time, flush by their own rule (`--buffer` and its `flush` command).
pub fn isolate(cmd: &mut std::process::Command, pinned: &Pinned) {
    cmd.env_clear();
    for keep in ["PATH", "TMPDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            cmd.env(keep, v);
        }
    }
    cmd.env("LC_ALL", "C")
        .env("HOME", &pinned.common)
        .env("XDG_CONFIG_HOME", &pinned.common)
        .env("GIT_DIR", &pinned.git_dir)
        .env("GIT_WORK_TREE", &pinned.work_tree)
        .env("GIT_COMMON_DIR", &pinned.common)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_FLUSH", "0");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_is_read_as_git_reads_it() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true ; c\n\
                    [remote \"or\\\"igin\"]\n\turl = \"https://x/y\" # c\n\
                    [filter \"x\"] clean = touch /tmp/m\n\
                    [diff.y]\n\ttextconv = a \\\n b\n\tbare\n";
        let e = parse_config(text);
        let find = |s: &str, k: &str| e.iter().find(|e| e.section == s && e.key == k).cloned();
        assert_eq!(
            find("core", "filemode").unwrap().value.as_deref(),
            Some("true")
        );
        let remote = find("remote", "url").unwrap();
        assert_eq!(remote.subsection.as_deref(), Some("or\"igin"));
        assert_eq!(remote.value.as_deref(), Some("https://x/y"));
        assert_eq!(
            find("filter", "clean").unwrap().value.as_deref(),
            Some("touch /tmp/m")
        );
        assert_eq!(
            find("diff", "textconv").unwrap().value.as_deref(),
            Some("a  b")
        );
        assert_eq!(find("diff", "bare").unwrap().value, None);
    }

    #[test]
    fn only_honoured_keys_reach_the_derived_config() {
        let text = "[core]\n\tfsmonitor = evil\n\tpager = evil\n\tignorecase = true\n\
                    [filter \"x\"]\n\tclean = evil\n\tprocess = evil\n\
                    [diff \"y\"]\n\ttextconv = evil\n[diff]\n\texternal = evil\n\
                    [remote \"o\"]\n\turl = https://h/r\n\tuploadpack = evil\n\
                    [include]\n\tpath = evil\n[credential]\n\thelper = evil\n\
                    [core]\n\tsshCommand = evil\n\thooksPath = evil\n";
        let derived = derived_config(&parse_config(text));
        assert!(!derived.contains("evil"), "{derived}");
        assert!(derived.contains("ignorecase = \"true\""), "{derived}");
        assert!(
            derived.contains("[remote \"o\"]\n\turl = \"https://h/r\""),
            "{derived}"
        );
        // The derived text reads back to the same honoured entries.
        let back = parse_config(&derived);
        assert!(back
            .iter()
            .any(|e| e.key == "url" && e.value.as_deref() == Some("https://h/r")));
    }

    #[test]
    fn a_value_cannot_break_out_of_its_line_in_the_derived_config() {
        let entries = vec![Entry {
            section: "remote".into(),
            subsection: Some("a\"]\n[core]\n\tfsmonitor = x".into()),
            key: "url".into(),
            value: Some("u\"\n[diff]\n\texternal = evil".into()),
        }];
        let derived = derived_config(&entries);
        assert!(!derived.contains("evil"), "{derived}");
        let back = parse_config(&derived);
        assert!(back
            .iter()
            .all(|e| e.section != "diff" || e.key != "external" || e.value.as_deref() == Some("")));
    }
}
