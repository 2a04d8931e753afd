//! A small door to `git`: run it as a child process, read its porcelain output.
//!
//! Every invocation sets `GIT_OPTIONAL_LOCKS=0` and passes `--no-optional-locks`, so no read
//! ever takes the index lock or rewrites the index behind a running git command; `LC_ALL=C`
//! keeps messages and dates stable; `core.fsmonitor=false` keeps a repository's configuration
//! from starting a program of its own choosing; no terminal prompt is ever shown. Machine
//! output is read in `-z` forms (NUL-separated, never quoted). Nothing here redacts for
//! disclosure: git's error text and everything read reach the executor, which redacts the
//! answers and errors of every `repository` capability (see [`crate::execute`]).
//!
//! Shelling out costs a process per call; git2 and gix cost 100–190 s of cold build on a
//! 2-core machine for no gain here.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::CapabilityError;

/// A `git` command for the repository at `repo`, with the environment described above.
pub fn command(repo: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(repo)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_NAMESPACE")
        .args([
            "--no-optional-locks",
            "--no-pager",
            "--literal-pathspecs",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "log.showSignature=false",
            "-c",
            "color.ui=false",
        ])
        .stdin(Stdio::null());
    c
}

/// A failed git run: its exit status and its error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit code, if git exited.
    pub status: Option<i32>,
    /// stderr, trimmed.
    pub stderr: String,
}

impl Failure {
    /// The capability error this failure means: `not_found` outside a repository, else
    /// `internal`.
    pub fn into_error(self, what: &str) -> CapabilityError {
        if self.stderr.contains("not a git repository") {
            CapabilityError::not_found(format!("{what}: there is no git repository here"))
        } else {
            CapabilityError::internal(format!("{what}: git failed: {}", self.stderr))
        }
    }
}

/// Runs git with `args`; stdout on success.
pub fn run(repo: &Path, args: &[&str]) -> Result<Vec<u8>, Failure> {
    let out = command(repo).args(args).output().map_err(|e| Failure {
        status: None,
        stderr: format!("git cannot be started: {e}"),
    })?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let text = String::from_utf8_lossy(&out.stderr);
        Err(Failure {
            status: out.status.code(),
            stderr: text.trim().to_string(),
        })
    }
}

/// Like [`run`], mapping a failure to a capability error about `what`.
pub fn output(repo: &Path, args: &[&str], what: &str) -> Result<Vec<u8>, CapabilityError> {
    run(repo, args).map_err(|f| f.into_error(what))
}

/// The fields of `bytes` split at NUL, the empty tail dropped.
pub fn split_z(bytes: &[u8]) -> Vec<String> {
    let mut fields: Vec<String> = bytes
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    if fields.last().is_some_and(String::is_empty) {
        fields.pop();
    }
    fields
}

/// The commit HEAD names, or `None` before the first commit.
pub fn head(repo: &Path) -> Result<Option<String>, CapabilityError> {
    match run(repo, &["rev-parse", "--verify", "-q", "HEAD^{commit}"]) {
        Ok(out) => Ok(Some(String::from_utf8_lossy(&out).trim().to_string())),
        Err(f) if f.status == Some(1) => Ok(None),
        Err(f) => Err(f.into_error("HEAD")),
    }
}

/// The branch HEAD is on, or `None` when detached.
pub fn branch(repo: &Path) -> Result<Option<String>, CapabilityError> {
    match run(repo, &["symbolic-ref", "-q", "--short", "HEAD"]) {
        Ok(out) => Ok(Some(String::from_utf8_lossy(&out).trim().to_string())),
        Err(f) if f.status == Some(1) => Ok(None),
        Err(f) => Err(f.into_error("the current branch")),
    }
}

/// One configured remote, with its URLs as configured (not yet redacted).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Remote {
    /// The remote's name.
    pub name: String,
    /// `remote.<name>.url`.
    pub url: Option<String>,
    /// `remote.<name>.pushurl`.
    pub push_url: Option<String>,
}

/// A remote URL as shown: shaped by [`crate::redact::redact_url`] (credentials, every query
/// value and the fragment blanked, which no remote needs to show), and whether that removed
/// anything. A shaping rule of `repo.identity`, not the guarantee: the executor redacts the
/// whole answer anyway.
pub fn shown_url(url: &str) -> (String, bool) {
    crate::redact::redact_url(url)
}

/// The configured remotes, sorted by name.
pub fn remotes(repo: &Path) -> Result<Vec<Remote>, CapabilityError> {
    let out = match run(
        repo,
        &[
            "config",
            "-z",
            "--get-regexp",
            r"^remote\..*\.(url|pushurl)$",
        ],
    ) {
        Ok(out) => out,
        // Exit 1: no key matched, that is, no remote.
        Err(f) if f.status == Some(1) => return Ok(Vec::new()),
        Err(f) => return Err(f.into_error("the remotes")),
    };
    Ok(parse_remotes(&out))
}

/// Parses `git config -z --get-regexp` output: `key\nvalue\0` records.
pub fn parse_remotes(out: &[u8]) -> Vec<Remote> {
    let mut by_name: std::collections::BTreeMap<String, Remote> = Default::default();
    for record in split_z(out) {
        let (key, value) = record.split_once('\n').unwrap_or((&record, ""));
        let Some(rest) = key.strip_prefix("remote.") else {
            continue;
        };
        let (name, field) = match rest.rsplit_once('.') {
            Some(p) => p,
            None => continue,
        };
        let r = by_name.entry(name.to_string()).or_insert_with(|| Remote {
            name: name.to_string(),
            ..Remote::default()
        });
        // The first value wins, as for `git remote get-url`.
        match field.to_ascii_lowercase().as_str() {
            "url" if r.url.is_none() => r.url = Some(value.to_string()),
            "pushurl" if r.push_url.is_none() => r.push_url = Some(value.to_string()),
            _ => {}
        }
    }
    by_name.into_values().collect()
}

/// A change of one path, from `git status --porcelain=v2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path.
    pub path: String,
    /// `modified`, `added`, `deleted`, `renamed`, `copied` or `type_changed`.
    pub change: &'static str,
    /// The former path of a rename or copy.
    pub from: Option<String>,
}

/// The parsed `git status --porcelain=v2 --branch -z`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    /// `branch.head`, unless detached.
    pub branch: Option<String>,
    /// `branch.oid`, unless `(initial)`.
    pub head: Option<String>,
    /// `branch.upstream`.
    pub upstream: Option<String>,
    /// From `branch.ab`.
    pub ahead: Option<u64>,
    /// From `branch.ab`.
    pub behind: Option<u64>,
    /// Index changes.
    pub staged: Vec<Change>,
    /// Working tree changes.
    pub unstaged: Vec<Change>,
    /// Unmerged paths.
    pub conflicted: Vec<String>,
    /// Untracked paths.
    pub untracked: Vec<String>,
}

fn change_word(letter: char) -> Option<&'static str> {
    Some(match letter {
        'M' => "modified",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type_changed",
        _ => return None,
    })
}

/// Runs `git status` without taking any lock and parses it.
pub fn status(repo: &Path) -> Result<Status, CapabilityError> {
    let out = output(
        repo,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=none",
        ],
        "the status",
    )?;
    parse_status(&out)
}

/// Parses `git status --porcelain=v2 --branch -z`.
pub fn parse_status(out: &[u8]) -> Result<Status, CapabilityError> {
    let bad =
        |what: &str| CapabilityError::internal(format!("unexpected git status record: {what}"));
    let mut s = Status::default();
    let fields = split_z(out);
    let mut it = fields.into_iter();
    while let Some(rec) = it.next() {
        if let Some(header) = rec.strip_prefix("# ") {
            let (key, value) = header.split_once(' ').unwrap_or((header, ""));
            match key {
                "branch.oid" if value != "(initial)" => s.head = Some(value.to_string()),
                "branch.head" if value != "(detached)" => s.branch = Some(value.to_string()),
                "branch.upstream" => s.upstream = Some(value.to_string()),
                "branch.ab" => {
                    let mut parts = value.split(' ');
                    s.ahead = parts
                        .next()
                        .and_then(|a| a.trim_start_matches('+').parse().ok());
                    s.behind = parts
                        .next()
                        .and_then(|b| b.trim_start_matches('-').parse().ok());
                }
                _ => {}
            }
            continue;
        }
        let kind = rec.chars().next().unwrap_or(' ');
        match kind {
            '1' | '2' => {
                // 1 XY sub mH mI mW hH hI path
                // 2 XY sub mH mI mW hH hI Xscore path, then the original path as a field.
                let n = if kind == '1' { 9 } else { 10 };
                let parts: Vec<&str> = rec.splitn(n, ' ').collect();
                if parts.len() != n {
                    return Err(bad(&rec));
                }
                let path = parts[n - 1].to_string();
                let from = if kind == '2' {
                    Some(
                        it.next()
                            .ok_or_else(|| bad("a rename without its origin"))?,
                    )
                } else {
                    None
                };
                let mut xy = parts[1].chars();
                let (x, y) = (xy.next().unwrap_or('.'), xy.next().unwrap_or('.'));
                if let Some(change) = change_word(x) {
                    s.staged.push(Change {
                        path: path.clone(),
                        change,
                        from: from.clone(),
                    });
                }
                if let Some(change) = change_word(y) {
                    s.unstaged.push(Change {
                        path,
                        change,
                        from: None,
                    });
                }
            }
            'u' => {
                let parts: Vec<&str> = rec.splitn(11, ' ').collect();
                if parts.len() != 11 {
                    return Err(bad(&rec));
                }
                s.conflicted.push(parts[10].to_string());
            }
            '?' => s.untracked.push(rec[2..].to_string()),
            '!' => {}
            _ => return Err(bad(&rec)),
        }
    }
    Ok(s)
}

/// One commit of `git log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The commit id.
    pub sha: String,
    /// Its parents.
    pub parents: Vec<String>,
    /// Author name.
    pub author_name: String,
    /// Author email.
    pub author_email: String,
    /// Author date, strict ISO 8601.
    pub authored_at: String,
    /// The subject line.
    pub subject: String,
}

const LOG_FIELDS: usize = 6;

/// The last `limit` commits reachable from HEAD, touching `path` when given (already
/// confined). Empty before the first commit.
pub fn log(repo: &Path, limit: u64, path: Option<&str>) -> Result<Vec<Commit>, CapabilityError> {
    if head(repo)?.is_none() {
        return Ok(Vec::new());
    }
    let n = format!("-n{limit}");
    let mut args = vec![
        "log",
        "-z",
        "--no-color",
        "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s",
        n.as_str(),
        "HEAD",
        "--",
    ];
    if let Some(p) = path {
        args.push(p);
    }
    let out = output(repo, &args, "the log")?;
    parse_log(&out)
}

/// Parses the NUL-separated fields of [`log`]'s format (records end in NUL too).
pub fn parse_log(out: &[u8]) -> Result<Vec<Commit>, CapabilityError> {
    let fields = split_z(out);
    if fields.len() % LOG_FIELDS != 0 {
        return Err(CapabilityError::internal(
            "unexpected git log output: a record is incomplete",
        ));
    }
    Ok(fields
        .chunks(LOG_FIELDS)
        .map(|f| Commit {
            sha: f[0].trim_start_matches('\n').to_string(),
            parents: f[1].split_whitespace().map(str::to_string).collect(),
            author_name: f[2].clone(),
            author_email: f[3].clone(),
            authored_at: f[4].clone(),
            subject: f[5].clone(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_are_parsed() {
        let out = b"# branch.oid 1234abcd\0# branch.head main\0# branch.upstream origin/main\0# branch.ab +2 -1\0\
1 M. N... 100644 100644 100644 aaa bbb staged.txt\0\
1 .M N... 100644 100644 100644 aaa aaa work tree.txt\0\
2 R. N... 100644 100644 100644 aaa aaa R100 new.txt\0old.txt\0\
u UU N... 100644 100644 100644 100644 a b c both.txt\0\
? new dir/file.txt\0";
        let s = parse_status(out).unwrap();
        assert_eq!(s.branch.as_deref(), Some("main"));
        assert_eq!(s.head.as_deref(), Some("1234abcd"));
        assert_eq!(s.upstream.as_deref(), Some("origin/main"));
        assert_eq!((s.ahead, s.behind), (Some(2), Some(1)));
        assert_eq!(s.staged.len(), 2);
        assert_eq!(s.staged[1].change, "renamed");
        assert_eq!(s.staged[1].from.as_deref(), Some("old.txt"));
        assert_eq!(s.unstaged[0].path, "work tree.txt");
        assert_eq!(s.conflicted, vec!["both.txt"]);
        assert_eq!(s.untracked, vec!["new dir/file.txt"]);
    }

    #[test]
    fn initial_and_detached_heads_are_none() {
        let s = parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0").unwrap();
        assert_eq!((s.head, s.branch), (None, None));
        assert!(parse_status(b"Z nonsense\0").is_err());
    }

    #[test]
    fn remotes_are_grouped_by_name() {
        let out = b"remote.origin.url\nhttps://h/r.git\0remote.a.b.pushurl\nssh://h/p\0remote.a.b.url\nhttps://h/a\0";
        let r = parse_remotes(out);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "a.b");
        assert_eq!(r[0].push_url.as_deref(), Some("ssh://h/p"));
        assert_eq!(r[1].url.as_deref(), Some("https://h/r.git"));
    }

    #[test]
    fn log_records_are_parsed() {
        let out = b"abc\0p1 p2\0Ann\0a@x\x002026-01-01T00:00:00+00:00\0subject one\0\ndef\0\0Bob\0b@x\x002026-01-02T00:00:00+00:00\0two\0";
        let c = parse_log(out).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].parents, vec!["p1", "p2"]);
        assert_eq!(c[1].sha, "def");
        assert!(c[1].parents.is_empty());
        assert!(parse_log(b"abc\0p\0").is_err());
    }
}
