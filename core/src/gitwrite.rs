//! The plumbing of the git writes (`repo.stage`, `repo.unstage`, `repo.commit`,
//! `repo.branch.create`, `repo.switch`, `repo.restore`): every one becomes an ordinary store
//! write of files (the working tree, `.git/index`, a ref file, `.git/HEAD`), so it takes the
//! repository lock, the intent-first audit, the idempotency keys and the crash settlement of
//! [`crate::store::transact`].
//!
//! * **The index** is never written by git: `.git/index` is copied into a private temporary
//!   folder (mode 0700, outside the repository), git runs on the copy (`GIT_INDEX_FILE`), and
//!   the copy's bytes become the planned write of `.git/index`. A `.git/index.lock` (a git
//!   process at work) is a `conflict`.
//! * **Index entries** are read from the index's bytes in process ([`index_entries`]: versions
//!   2 to 4, SHA-1 and SHA-256 ids, every bound checked, a cut or flipped byte never a panic);
//!   a split or sparse index, or bytes that do not parse to their end, are left to
//!   `git ls-files`. `repo.stage` gives `git add` the paths themselves and reads the entries
//!   before and after from the copy's bytes: one git process beside the content gate's.
//! * **Objects** are inert: `git add`, `write-tree` and `commit-tree` may create them before
//!   the intent. A dry run sends them to a temporary object folder instead
//!   (`GIT_OBJECT_DIRECTORY`, the repository's objects as an alternate), so it leaves `.git`
//!   alone.
//! * **Refs** are loose ref files (`.git/refs/heads/<branch>` ← `<id>\n`; a loose ref overrides
//!   `packed-refs`), `.git/HEAD` for a detached HEAD or a switch. No reflog line is appended:
//!   the store writes whole files, and the audit log records every ref write with its digests
//!   before and after. A `reftable` repository is refused.
//! * **No hook runs**: only plumbing runs (no porcelain that would look for hooks), under
//!   seneschal's private configuration ([`seneschal_access::gitdir`]), which has no hooks path.
//! * **The identity** of a commit is the user's own: `GIT_AUTHOR_*` / `GIT_COMMITTER_*` from
//!   seneschal's environment, else `user.name` / `user.email` of `$XDG_CONFIG_HOME/git/config`
//!   and `~/.gitconfig` (read with `git config --file`), never the repository's configuration.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::store;
use seneschal_access::error::CapabilityError;
use seneschal_access::git::{self, Failure};

/// The largest blob a switch or a restore writes into the working tree.
pub const BLOB_CAP: u64 = 64 * 1024 * 1024;

static SCRATCH: AtomicU64 = AtomicU64::new(0);

/// A private temporary folder for one git write: the index copy, and a dry run's objects.
/// Removed when dropped.
pub struct Work {
    repo: PathBuf,
    dir: PathBuf,
    dry: bool,
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> CapabilityError {
    CapabilityError::internal(format!("{what}: {e}"))
}

impl Work {
    /// A new private folder (mode 0700, created fresh: an existing name is never reused) for
    /// a write in `repo`; a dry run's objects go into it.
    pub fn new(repo: &Path, dry: bool) -> Result<Work, CapabilityError> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "seneschal-gitwrite-{}-{nanos}-{}",
            std::process::id(),
            SCRATCH.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| internal("no private folder for the git write", e))?;
        let work = Work {
            repo: repo.to_path_buf(),
            dir,
            dry,
        };
        if dry {
            std::fs::create_dir(work.dir.join("objects"))
                .map_err(|e| internal("no private object folder", e))?;
        }
        Ok(work)
    }

    /// Whether this is a dry run's folder (objects go into it, not the repository).
    pub fn is_dry(&self) -> bool {
        self.dry
    }

    /// The path of the private index copy.
    pub fn index(&self) -> PathBuf {
        self.dir.join("index")
    }

    fn env(
        &self,
        index: Option<&Path>,
        extra: &[(&'static str, OsString)],
    ) -> Vec<(&str, OsString)> {
        let mut env: Vec<(&str, OsString)> = Vec::new();
        if let Some(i) = index {
            env.push(("GIT_INDEX_FILE", i.as_os_str().to_owned()));
        }
        if self.dry {
            env.push((
                "GIT_OBJECT_DIRECTORY",
                self.dir.join("objects").into_os_string(),
            ));
            env.push((
                "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                seneschal_access::gitdir::git_path(&self.repo, "objects").into_os_string(),
            ));
        }
        env.extend(extra.iter().cloned());
        env
    }

    /// Runs git on the repository (on the index copy when `index` is set), the failure as is.
    pub fn try_git(
        &self,
        args: &[&str],
        index: Option<&Path>,
        extra: &[(&'static str, OsString)],
        input: &[u8],
    ) -> Result<Vec<u8>, Failure> {
        let env = self.env(index, extra);
        let env: Vec<(&str, &OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        git::run_with(&self.repo, args, &env, input)
    }

    /// [`Work::try_git`], a failure said as a capability error about `what`.
    pub fn git(
        &self,
        args: &[&str],
        index: Option<&Path>,
        what: &str,
    ) -> Result<Vec<u8>, CapabilityError> {
        self.try_git(args, index, &[], b"")
            .map_err(|f| f.into_error(what))
    }

    /// Copies `.git/index` (read without following links) to the private index, with the
    /// original's modification time: git tells a racily clean entry (a file changed in the
    /// second the index was written) by comparing entry and index times, so a copy stamped
    /// "now" would hide such a change. The bytes, `None` when the repository has no index yet.
    pub fn copy_index(&self) -> Result<Option<Vec<u8>>, CapabilityError> {
        let modified =
            std::fs::symlink_metadata(seneschal_access::gitdir::git_path(&self.repo, "index"))
                .and_then(|m| m.modified())
                .ok();
        let bytes = store::read(&self.repo, ".git/index")?;
        if let Some(b) = &bytes {
            std::fs::write(self.index(), b).map_err(|e| internal("the index copy", e))?;
            // Without the original's time, no entry may pass as clean by its stat data alone:
            // the copy is stamped as old as can be, so git re-reads every entry's file.
            let stamp =
                modified.unwrap_or(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1));
            std::fs::File::options()
                .write(true)
                .open(self.index())
                .and_then(|f| f.set_modified(stamp))
                .map_err(|e| internal("the index copy's time", e))?;
        }
        Ok(bytes)
    }

    /// The private index's bytes after git ran on it.
    pub fn read_index(&self) -> Result<Option<Vec<u8>>, CapabilityError> {
        match std::fs::read(self.index()) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(internal("the index copy", e)),
        }
    }

    /// The entries of the private index under the repository-relative paths `under` (`.` for
    /// all), by path: a write reads only the entries its paths can change, so its memory and
    /// time follow the paths, not the size of the index. Read in process where
    /// [`index_entries`] can, else by `git ls-files -s`.
    pub fn entries(&self, under: &[String]) -> Result<BTreeMap<String, Entry>, CapabilityError> {
        let Some(bytes) = self.read_index()? else {
            return Ok(BTreeMap::new());
        };
        if let Some(found) = index_entries(&bytes, under) {
            return Ok(found);
        }
        let mut args = vec!["ls-files", "-s", "-z", "--"];
        args.extend(under.iter().map(String::as_str));
        let out = self.git(&args, Some(&self.index()), "the index")?;
        Ok(parse_entries(&out))
    }
}

/// One index entry: mode, object id, stage (0, or 1–3 for a conflict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `100644`, `100755`, `120000` or `160000`.
    pub mode: String,
    /// The blob (or commit) id.
    pub oid: String,
    /// The merge stage.
    pub stage: u8,
}

/// Parses `git ls-files -s -z` (`mode oid stage\tpath\0`); a conflicted path keeps its
/// highest stage.
pub fn parse_entries(out: &[u8]) -> BTreeMap<String, Entry> {
    git::split_z(out)
        .iter()
        .filter_map(|rec| entry(rec))
        .collect()
}

/// One record of `ls-files -s` (`mode oid stage\tpath`) as its path and entry.
fn entry(rec: &str) -> Option<(String, Entry)> {
    let (head, path) = rec.split_once('\t')?;
    let mut parts = head.split(' ');
    let (mode, oid, stage) = (parts.next()?, parts.next()?, parts.next()?);
    Some((
        path.to_string(),
        Entry {
            mode: mode.to_string(),
            oid: oid.to_string(),
            stage: stage.parse().unwrap_or(0),
        },
    ))
}

/// The entries of an index file under the paths `under` (repository-relative, `.` for all),
/// read in process from its bytes; `None` for what this reader leaves to git: a version other
/// than 2 to 4, a split index (`link`) or a sparse one (`sdir`, directory entries), a file
/// that does not parse to its end, or one that parses both with SHA-1 and with SHA-256 ids
/// (git's reading of the file, which checks its trailer, decides then).
pub fn index_entries(bytes: &[u8], under: &[String]) -> Option<BTreeMap<String, Entry>> {
    match (read_index(bytes, under, 20), read_index(bytes, under, 32)) {
        (Some(m), None) | (None, Some(m)) => Some(m),
        _ => None,
    }
}

/// [`index_entries`] with object ids of `id_len` bytes.
fn read_index(b: &[u8], under: &[String], id_len: usize) -> Option<BTreeMap<String, Entry>> {
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(8)?;
    let end = b.len().checked_sub(id_len)?;
    let mut at = 12usize;
    let mut name: Vec<u8> = Vec::new();
    let mut out = BTreeMap::new();
    for _ in 0..count {
        // ctime, mtime, dev, ino, mode, uid, gid, size (4 bytes each but times: 8), the id, flags.
        let fixed = 40 + id_len + 2;
        if at.checked_add(fixed)? > end {
            return None;
        }
        let mode = be32(at + 24)?;
        let id = &b[at + 40..at + 40 + id_len];
        let flags = u16::from_be_bytes([b[at + 40 + id_len], b[at + 41 + id_len]]);
        let mut p = at + fixed;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            p += 2;
        }
        if version == 4 {
            let (strip, used) = varint(b.get(p..end)?)?;
            p += used;
            let nul = b.get(p..end)?.iter().position(|&c| c == 0)?;
            let keep = name.len().checked_sub(usize::try_from(strip).ok()?)?;
            name.truncate(keep);
            name.extend_from_slice(&b[p..p + nul]);
            at = p + nul + 1;
        } else {
            let nul = b.get(p..end)?.iter().position(|&c| c == 0)?;
            name.clear();
            name.extend_from_slice(&b[p..p + nul]);
            // Padded with one to eight NULs to a multiple of eight bytes.
            at += ((p - at) + nul + 8) & !7;
        }
        if at > end || mode & 0o170000 == 0o040000 {
            return None;
        }
        if under.iter().any(|r| name_under(&name, r.as_bytes())) {
            out.insert(
                String::from_utf8_lossy(&name).into_owned(),
                Entry {
                    mode: format!("{mode:06o}"),
                    oid: seneschal_access::text::hex(id),
                    stage: ((flags >> 12) & 3) as u8,
                },
            );
        }
    }
    while at < end {
        let sig = b.get(at..at + 4)?;
        if sig == b"link" || sig == b"sdir" {
            return None;
        }
        at = at.checked_add(8)?.checked_add(be32(at + 4)? as usize)?;
    }
    (at == end).then_some(out)
}

/// git's variable-length integer of index version 4 (each continuation adds one before the
/// shift): the value and the bytes it took.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut val = u64::from(c & 127);
    while c & 128 != 0 {
        i += 1;
        val = val.checked_add(1)?;
        if val >> 57 != 0 {
            return None;
        }
        c = *b.get(i)?;
        val = (val << 7) + u64::from(c & 127);
    }
    Some((val, i + 1))
}

/// Whether the path `name` is `rel` or under it, as bytes (`.` holds everything).
fn name_under(name: &[u8], rel: &[u8]) -> bool {
    rel == b"."
        || name
            .strip_prefix(rel)
            .is_some_and(|r| r.is_empty() || r[0] == b'/')
}

/// Parses `git ls-files -z -t -s -c -o` (one read of the index for both): the index entries
/// (`<tag> mode oid stage\tpath`, a conflicted path keeping its highest stage) and the other
/// files (`? path`). The tag is git's, written before the path, so no file name can pass for
/// an entry.
pub fn parse_tagged(out: &[u8]) -> (BTreeMap<String, Entry>, Vec<String>) {
    let mut entries = BTreeMap::new();
    let mut others = Vec::new();
    for rec in git::split_z(out) {
        match rec.split_once(' ') {
            Some(("?", path)) => others.push(path.to_string()),
            Some((_, rest)) => entries.extend(entry(rest)),
            None => {}
        }
    }
    (entries, others)
}

/// The paths whose entries differ between two indexes: `added`, `modified` or `deleted`, by
/// path.
pub fn changed(
    old: &BTreeMap<String, Entry>,
    new: &BTreeMap<String, Entry>,
) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (p, e) in new {
        match old.get(p) {
            None => out.push((p.clone(), "added")),
            Some(o) if o != e => out.push((p.clone(), "modified")),
            _ => {}
        }
    }
    for p in old.keys().filter(|p| !new.contains_key(*p)) {
        out.push((p.clone(), "deleted"));
    }
    out.sort();
    out
}

/// Refuses a write while a git process holds the index (`.git/index.lock`).
pub fn index_unlocked(repo: &Path) -> Result<(), CapabilityError> {
    if std::fs::symlink_metadata(seneschal_access::gitdir::git_path(repo, "index.lock")).is_ok() {
        return Err(CapabilityError::conflict(
            ".git/index.lock exists: a git process is changing the index; retry when it is done \
             (or remove the lock if no git process is running)",
        ));
    }
    Ok(())
}

/// Refuses a repository whose refs live in a reftable (the store writes loose ref files).
pub fn loose_refs(repo: &Path) -> Result<(), CapabilityError> {
    if std::fs::symlink_metadata(seneschal_access::gitdir::git_path(repo, "reftable")).is_ok() {
        return Err(CapabilityError::refused(
            "this repository stores its refs in a reftable (extensions.refStorage=reftable); \
             seneschal writes refs only as loose ref files, so it changes no ref here",
        ));
    }
    Ok(())
}

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch (`refs/heads/<name>`), whether or not it has a commit yet.
    Branch(String),
    /// Detached at a commit.
    Detached(String),
}

impl Head {
    /// The branch, if any.
    pub fn branch(&self) -> Option<&str> {
        match self {
            Head::Branch(b) => Some(b),
            Head::Detached(_) => None,
        }
    }

    /// The file a commit moves: the branch's loose ref, or `.git/HEAD` when detached.
    pub fn ref_file(&self) -> String {
        match self {
            Head::Branch(b) => format!(".git/refs/heads/{b}"),
            Head::Detached(_) => ".git/HEAD".into(),
        }
    }

    /// [`Head::ref_file`] as the store's typed door: a branch name `.git/HEAD` holds is
    /// repository content, checked before a path is spelled with it.
    pub fn ref_target(&self) -> Result<store::GitFile, CapabilityError> {
        Ok(match self {
            Head::Branch(b) => store::GitFile::Branch(store::BranchName::new(b, "")?),
            Head::Detached(_) => store::GitFile::Head,
        })
    }
}

/// Reads `.git/HEAD` (without following links).
pub fn head(repo: &Path) -> Result<Head, CapabilityError> {
    let bytes = store::read(repo, ".git/HEAD")?
        .ok_or_else(|| CapabilityError::not_found("the repository has no .git/HEAD"))?;
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    if let Some(r) = text.strip_prefix("ref:") {
        let r = r.trim();
        return match r.strip_prefix("refs/heads/") {
            Some(b) if !b.is_empty() => Ok(Head::Branch(b.to_string())),
            _ => Err(CapabilityError::refused(format!(
                "HEAD points at `{r}`, not a branch under refs/heads/; seneschal moves only branches"
            ))),
        };
    }
    if text.len() >= 40 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Head::Detached(text));
    }
    Err(CapabilityError::internal(
        ".git/HEAD is neither a ref nor a commit id",
    ))
}

/// The commit `refname` (a full ref name) names, `None` when it does not exist.
pub fn ref_commit(repo: &Path, refname: &str) -> Result<Option<String>, CapabilityError> {
    match git::run(
        repo,
        &[
            "rev-parse",
            "--verify",
            "-q",
            "--end-of-options",
            &format!("{refname}^{{commit}}"),
        ],
    ) {
        Ok(out) => Ok(Some(String::from_utf8_lossy(&out).trim().to_string())),
        Err(f) if f.status == Some(1) || f.status == Some(128) => {
            if f.unpinned.is_some() {
                Err(f.into_error(refname))
            } else {
                Ok(None)
            }
        }
        Err(f) => Err(f.into_error(refname)),
    }
}

/// The commit HEAD names, `None` before the first commit.
pub fn head_commit(repo: &Path, head: &Head) -> Result<Option<String>, CapabilityError> {
    match head {
        Head::Branch(b) => ref_commit(repo, &format!("refs/heads/{b}")),
        Head::Detached(id) => Ok(Some(id.clone())),
    }
}

/// Refuses a name that is not a branch name: git's ref name rules for `refs/heads/<name>`
/// ([`branch_name_fault`]), checked before the name reaches git, so that a revision such as
/// `main~1` or `main@{0}` never becomes a ref; `field` is the input's pointer. `repo` is not
/// read: the rules are git's, applied here.
pub fn check_branch_name(repo: &Path, name: &str, field: &str) -> Result<(), CapabilityError> {
    let _ = repo;
    match branch_name_fault(name) {
        None => Ok(()),
        Some(why) => Err(CapabilityError::invalid_input(format!(
            "`{}` is not a branch name: {why} (git check-ref-format --branch)",
            seneschal_access::display::for_person(name, 200)
        ))
        .at(field)),
    }
}

/// Why `name` is not a branch name by `git check-ref-format --branch` (its rules for
/// `refs/heads/<name>`, stricter on `@`, which git reads as HEAD), or `None` when it is one.
pub fn branch_name_fault(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.starts_with('-') {
        return Some("it cannot begin with `-`");
    }
    if name == "HEAD" || name == "@" {
        return Some("`HEAD` and `@` name the current commit, not a branch");
    }
    if let Some(c) = name.chars().find(|c| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    }) {
        return Some(match c {
            '~' | '^' | ':' => "`~`, `^` and `:` make a revision of it",
            '?' | '*' | '[' => "`?`, `*` and `[` make a pattern of it",
            '\\' => "it cannot hold `\\`",
            ' ' => "it cannot hold a space",
            _ => "it cannot hold a control character",
        });
    }
    if name.contains("@{") {
        return Some("`@{` makes a revision of it (a reflog entry)");
    }
    if name.contains("..") {
        return Some("`..` makes a range of it");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Some("it cannot begin or end with `/` or hold an empty part (`//`)");
    }
    if name.ends_with('.') {
        return Some("it cannot end with `.`");
    }
    if name.split('/').any(|part| part.starts_with('.')) {
        return Some("no part of it can begin with `.`");
    }
    if name.split('/').any(|part| part.ends_with(".lock")) {
        return Some("no part of it can end with `.lock`");
    }
    None
}

/// Refuses a branch name taken by a branch, by a folder of branches (`name/…`) or by a branch
/// that would be its folder (`a` for `a/b`).
pub fn branch_free(repo: &Path, name: &str, field: &str) -> Result<(), CapabilityError> {
    if ref_commit(repo, &format!("refs/heads/{name}"))?.is_some()
        || store::read(repo, &format!(".git/refs/heads/{name}"))
            .ok()
            .flatten()
            .is_some()
    {
        return Err(
            CapabilityError::conflict(format!("the branch `{name}` already exists")).at(field),
        );
    }
    let parts: Vec<&str> = name.split('/').collect();
    for i in 1..parts.len() {
        let prefix = parts[..i].join("/");
        if ref_commit(repo, &format!("refs/heads/{prefix}"))?.is_some() {
            return Err(CapabilityError::conflict(format!(
                "the branch `{prefix}` exists, so no branch can be named `{name}` (a ref cannot \
                 be a folder of refs too)"
            ))
            .at(field));
        }
    }
    let under = git::output(
        repo,
        &[
            "for-each-ref",
            "--count=1",
            "--format=%(refname)",
            &format!("refs/heads/{name}/"),
        ],
        "the branches",
    )?;
    if !under.is_empty() {
        return Err(CapabilityError::conflict(format!(
            "branches named `{name}/…` exist, so no branch can be named `{name}`"
        ))
        .at(field));
    }
    Ok(())
}

/// A person of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The name.
    pub name: String,
    /// The e-mail address.
    pub email: String,
}

/// The author and the committer of a commit seneschal makes: the user's own identity, from
/// the environment, then the user's git configuration files; `refused` when there is none.
pub fn identity(
    repo: &Path,
    stand_in: Option<&(String, String)>,
) -> Result<(Person, Person), CapabilityError> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let mut files: Vec<PathBuf> = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => files.push(PathBuf::from(x).join("git/config")),
        None => {
            if let Some(h) = &home {
                files.push(h.join(".config/git/config"));
            }
        }
    }
    if let Some(h) = &home {
        files.push(h.join(".gitconfig"));
    }
    // git reads the XDG file first and ~/.gitconfig after: the later one wins.
    let from_files = |key: &str| -> Option<String> {
        let mut found = None;
        for f in files.iter().filter(|f| f.is_file()) {
            let path = f.to_string_lossy().into_owned();
            if let Ok(out) = git::run(repo, &["config", "--file", &path, "--get", key]) {
                let v = String::from_utf8_lossy(&out).trim().to_string();
                if !v.is_empty() {
                    found = Some(v);
                }
            }
        }
        found
    };
    let (mut user_name, mut user_email) = (from_files("user.name"), from_files("user.email"));
    if let (None, None, Some((name, email))) = (&user_name, &user_email, stand_in) {
        user_name = Some(name.clone());
        user_email = Some(email.clone());
    }
    let person = |name_env: &str, email_env: &str| -> Option<Person> {
        Some(Person {
            name: env(name_env).or_else(|| user_name.clone())?,
            email: env(email_env).or_else(|| user_email.clone())?,
        })
    };
    match (
        person("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"),
        person("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"),
    ) {
        (Some(a), Some(c)) => Ok((a, c)),
        _ => Err(CapabilityError::refused(
            "no identity to commit as: set user.name and user.email in your own git \
             configuration (git config --global user.name \"Your Name\"; git config --global \
             user.email you@example.com) or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL (and \
             GIT_COMMITTER_*) in seneschal's environment; the repository's .git/config is \
             never read for it",
        )),
    }
}

/// The environment of `commit-tree` for an author and a committer.
pub fn identity_env(author: &Person, committer: &Person) -> Vec<(&'static str, OsString)> {
    let mut env = vec![
        ("GIT_AUTHOR_NAME", OsString::from(&author.name)),
        ("GIT_AUTHOR_EMAIL", OsString::from(&author.email)),
        ("GIT_COMMITTER_NAME", OsString::from(&committer.name)),
        ("GIT_COMMITTER_EMAIL", OsString::from(&committer.email)),
    ];
    for k in ["GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"] {
        if let Some(v) = std::env::var_os(k) {
            env.push((k, v));
        }
    }
    env
}

/// One path two trees differ at (`git diff-tree -r --raw --no-renames`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    /// The path.
    pub path: String,
    /// The mode in the first tree (`000000` when absent).
    pub old_mode: String,
    /// The mode in the second tree (`000000` when absent).
    pub new_mode: String,
    /// The blob in the second tree.
    pub new_oid: String,
    /// `A`, `D`, `M` or `T`.
    pub status: char,
}

/// The paths the trees of the commits `a` and `b` differ at.
pub fn diff_trees(repo: &Path, a: &str, b: &str) -> Result<Vec<TreeChange>, CapabilityError> {
    let out = git::output(
        repo,
        &[
            "diff-tree",
            "-r",
            "--raw",
            "-z",
            "--no-renames",
            "--end-of-options",
            a,
            b,
            // No path: without `--`, a file named like `a` or `b` makes git refuse them as
            // ambiguous.
            "--",
        ],
        "the trees' difference",
    )?;
    let fields = git::split_z(&out);
    let mut it = fields.into_iter();
    let mut found = Vec::new();
    while let Some(rec) = it.next() {
        let Some(raw) = rec.strip_prefix(':') else {
            continue;
        };
        let parts: Vec<&str> = raw.split(' ').collect();
        let path = it.next().unwrap_or_default();
        if parts.len() < 5 {
            return Err(CapabilityError::internal("unexpected git diff-tree record"));
        }
        found.push(TreeChange {
            path,
            old_mode: parts[0].to_string(),
            new_mode: parts[1].to_string(),
            new_oid: parts[3].to_string(),
            status: parts[4].chars().next().unwrap_or('M'),
        });
    }
    Ok(found)
}

/// The permission bits a checked-out blob of `mode` gets.
pub fn file_mode(mode: &str) -> u32 {
    if mode == "100755" {
        0o755
    } else {
        0o644
    }
}

/// Refuses a mode the store cannot write (a symbolic link, a submodule).
pub fn writable_mode(path: &str, mode: &str) -> Result<(), CapabilityError> {
    match mode {
        "120000" => Err(CapabilityError::refused(format!(
            "`{path}` is a symbolic link in git; seneschal writes no links (use git itself)"
        ))),
        "160000" => Err(CapabilityError::refused(format!(
            "`{path}` is a submodule; seneschal does not check out submodules (use git itself)"
        ))),
        _ => Ok(()),
    }
}

/// The bytes of the blobs `oids`, each whole (at most [`BLOB_CAP`]).
pub fn blob_bytes(repo: &Path, oids: &[String]) -> Result<Vec<Vec<u8>>, CapabilityError> {
    git::blobs(repo, oids, BLOB_CAP)?
        .into_iter()
        .zip(oids)
        .map(|(b, oid)| match b {
            git::Blob::Bytes(b) => Ok(b),
            git::Blob::TooLarge(size) => Err(CapabilityError::refused(format!(
                "the blob {oid} is {size} bytes, over the {BLOB_CAP} bytes seneschal writes"
            ))),
            git::Blob::Missing => Err(CapabilityError::internal(format!(
                "the blob {oid} is missing from the object store"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the differential test: revisions, patterns and every rule's edge.
    const NAMES: &[&str] = &[
        "main",
        "feature/x",
        "a.b",
        "é",
        "a@b",
        "a{b",
        "a@",
        "@a",
        "a/@",
        "a/HEAD",
        "head",
        "refs/heads/x",
        "x-y_z",
        "v1.2.3",
        "main~1",
        "main^",
        "main^2",
        "main@{0}",
        "x^{commit}",
        "HEAD",
        "-x",
        "a..b",
        "a/.b",
        ".a",
        "a/..",
        "a.lock",
        "lock.lock",
        "a.lock/b",
        "a/b.lock/c",
        "a.locked",
        "a/",
        "/a",
        "a//b",
        "a.",
        "x.",
        "foo/.",
        "a b",
        "a:b",
        "a?b",
        "a*b",
        "a[b",
        "a]b",
        "a\\b",
        "a\tb",
        "a\nb",
        "a\u{7f}b",
        "a\u{202e}b",
        "main:README",
        "",
    ];

    #[test]
    fn branch_names_follow_git_check_ref_format() {
        // git itself, run the way seneschal runs it, in an empty repository made by hand.
        let dir = std::env::temp_dir().join(format!("seneschal-refname-{}", std::process::id()));
        for folder in [".git/objects", ".git/refs/heads"] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
        }
        std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            dir.join(".git/config"),
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
        )
        .unwrap();
        let git_ok = |name: &str| git::run(&dir, &["check-ref-format", "--branch", name]).is_ok();
        assert!(git_ok("main"), "git runs in the repository made by hand");
        for name in NAMES {
            assert_eq!(
                branch_name_fault(name).is_none(),
                git_ok(name),
                "{name:?}: {:?}",
                branch_name_fault(name)
            );
        }
        // Stricter than git on `@`, which a revision reads as HEAD.
        assert!(git_ok("@") && branch_name_fault("@").is_some());
        assert!(branch_name_fault("@{-1}").is_some());
        std::fs::remove_dir_all(&dir).ok();
        let e = check_branch_name(Path::new("."), "main~1", "/branch").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.pointer.as_deref()),
            ("invalid_input", Some("/branch"))
        );
        assert!(e.message.contains("revision"), "{}", e.message);
        let e = check_branch_name(Path::new("."), "a\nApprove", "/name").unwrap_err();
        assert!(e.message.contains("`a\\nApprove`"), "{}", e.message);
    }

    #[test]
    fn index_entries_are_parsed_and_compared() {
        let old = parse_entries(b"100644 aaaa 0\ta.txt\x00100755 bbbb 0\tb.sh\0");
        let new = parse_entries(b"100644 aaab 0\ta.txt\x00100644 cccc 0\tc.txt\0");
        assert_eq!(old["b.sh"].mode, "100755");
        assert_eq!(
            changed(&old, &new),
            vec![
                ("a.txt".to_string(), "modified"),
                ("b.sh".to_string(), "deleted"),
                ("c.txt".to_string(), "added")
            ]
        );
    }

    /// The in-process index reader answers what `git ls-files -s` answers, on indexes git
    /// wrote: versions 2, 3 (an intent-to-add entry) and 4, conflict stages, SHA-256 ids;
    /// it leaves a split index to git.
    #[test]
    fn the_index_read_in_process_matches_git_ls_files() {
        let sh_in = |dir: &Path, args: &[&str], input: &[u8]| {
            use std::io::Write;
            let mut c = git::init_command(dir);
            c.args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
                .args([
                    "-c",
                    "init.defaultBranch=main",
                    "-c",
                    "core.splitIndex=false",
                ])
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped());
            let mut child = c.spawn().unwrap();
            child.stdin.take().unwrap().write_all(input).unwrap();
            child.wait_with_output().unwrap().stdout
        };
        let sh = |dir: &Path, args: &[&str]| sh_in(dir, args, b"");
        let under = ["a".to_string(), "b/c.txt".to_string(), "d".to_string()];
        let all = [".".to_string()];
        let check = |dir: &Path, what: &str, version: u8| {
            let bytes = std::fs::read(dir.join(".git/index")).unwrap();
            assert_eq!(bytes[7], version, "{what}: the index version");
            let mut args = vec!["ls-files", "-s", "-z", "--"];
            args.extend(under.iter().map(String::as_str));
            let git = parse_entries(&sh(dir, &args));
            assert!(!git.is_empty(), "{what}: git lists entries");
            assert_eq!(index_entries(&bytes, &under), Some(git), "{what}");
        };
        for format in ["sha1", "sha256"] {
            let t = tempfile::tempdir().unwrap();
            let dir = t.path();
            sh(dir, &["init", "-q", &format!("--object-format={format}")]);
            for (f, body) in [
                ("a/x.txt", "x\n"),
                ("a/long-name-of-a-file-in-a-folder.md", "y\n"),
                ("b/c.txt", "c\n"),
                ("b/not.txt", "n\n"),
                ("d", "d\n"),
                ("da", "e\n"),
            ] {
                std::fs::create_dir_all(dir.join(f).parent().unwrap()).unwrap();
                std::fs::write(dir.join(f), body).unwrap();
            }
            sh(dir, &["add", "-A"]);
            sh(dir, &["commit", "-qm", "one"]);
            check(dir, &format!("{format} v2"), 2);
            let every = index_entries(&std::fs::read(dir.join(".git/index")).unwrap(), &all);
            assert_eq!(every.map(|m| m.len()), Some(6), "`.` holds every entry");
            std::fs::write(dir.join("a/new.txt"), "new\n").unwrap();
            sh(dir, &["add", "-N", "a/new.txt"]);
            check(dir, &format!("{format} v3, intent to add"), 3);
            sh(dir, &["reset", "-q"]);
            // A conflict: stages 1 to 3 for d, as a merge leaves them.
            let id = |body: &str| {
                let out = sh_in(dir, &["hash-object", "-w", "--stdin"], body.as_bytes());
                String::from_utf8(out).unwrap().trim().to_string()
            };
            let zero = "0".repeat(id("x").len());
            let mut info = format!("0 {zero}\td\n");
            for (stage, body) in [(1, "base\n"), (2, "ours\n"), (3, "theirs\n")] {
                info.push_str(&format!("100644 {} {stage}\td\n", id(body)));
            }
            sh_in(dir, &["update-index", "--index-info"], info.as_bytes());
            assert_eq!(
                index_entries(&std::fs::read(dir.join(".git/index")).unwrap(), &under).unwrap()
                    ["d"]
                    .stage,
                3
            );
            check(dir, &format!("{format} conflict"), 2);
            sh(dir, &["update-index", "--index-version", "4"]);
            check(dir, &format!("{format} v4"), 4);
            // Cut or flipped anywhere (an index is repository content), it parses or is left
            // to git, never a panic.
            let bytes = std::fs::read(dir.join(".git/index")).unwrap();
            for cut in 0..bytes.len() {
                let _ = index_entries(&bytes[..cut], &all);
                let mut flipped = bytes.clone();
                flipped[cut] ^= 0xff;
                let _ = index_entries(&flipped, &all);
            }
            sh(dir, &["update-index", "--split-index"]);
            let bytes = std::fs::read(dir.join(".git/index")).unwrap();
            assert_eq!(index_entries(&bytes, &under), None, "{format} split index");
        }
        assert_eq!(index_entries(b"DIRC\0\0\0\x02\0\0\0\x05", &under), None);
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
    }

    /// Entries and other files come from one tagged listing; an untracked file named like an
    /// entry stays a file, because the tag before it is git's.
    #[test]
    fn a_tagged_listing_parts_entries_from_other_files() {
        let (entries, others) = parse_tagged(
            b"? new.txt\0H 100644 aaaa 0\ta.txt\0? 100644 bbbb 0\tforged\0M 100644 cccc 2\tc.txt\0",
        );
        assert_eq!(others, vec!["new.txt", "100644 bbbb 0\tforged"]);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries["a.txt"].oid, "aaaa");
        assert_eq!(entries["c.txt"].stage, 2);
        assert!(!entries.contains_key("forged"));
    }

    #[test]
    fn modes_map_to_permission_bits() {
        assert_eq!(file_mode("100755"), 0o755);
        assert_eq!(file_mode("100644"), 0o644);
        assert!(writable_mode("l", "120000").is_err());
        assert!(writable_mode("s", "160000").is_err());
        assert!(writable_mode("f", "100644").is_ok());
    }
}
