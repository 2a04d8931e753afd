//! A small door to `git`: run it as a child process, read its porcelain output.
//!
//! Every invocation sets `GIT_OPTIONAL_LOCKS=0` and passes `--no-optional-locks`, so no read
//! ever takes the index lock or rewrites the index behind a running git command; `LC_ALL=C`
//! keeps messages and dates stable; `core.fsmonitor=false` keeps a repository's configuration
//! from starting a program of its own choosing; no terminal prompt is ever shown. Every run
//! the server waits for is watched: one that outlasts [`GIT_DEADLINE_SECS`] (a FIFO planted in
//! `.git` blocks git for ever) is killed, and fails. Machine
//! output is read in `-z` forms (NUL-separated, never quoted). Disclosure is not
//! decided here: git's error text and everything read reach the executor, which redacts the
//! answers and errors of every `repository` capability whole. What is done here is the
//! content gate's part of a patch (hunks of a YAML or JSON file redacted as the whole file
//! reads, [`redact_by_whole_files`]) and a remote URL's shaping, which the executor's pass
//! cannot do line by line.
//!
//! Shelling out costs a process per call; git2 and gix cost 100–190 s of cold build on a
//! 2-core machine for no gain here. Naming revisions would cost a second process (`rev-parse`)
//! per call: a resident `cat-file --batch-check` per repository answers them instead (see
//! [`resolve_commits`]).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::CapabilityError;

/// A `git` command for the repository at `repo`, pinned and isolated by [`crate::gitdir`]: the
/// repository's git folder is `<repo>/.git`, its configuration is never read (git reads the
/// allow-listed copy seneschal writes), the environment is rebuilt from scratch. A layout that
/// leads outside the root is a [`Failure`] that never ran git.
pub fn command(repo: &Path) -> Result<Command, Failure> {
    #[cfg(test)]
    tests::RUNS.with(|r| r.set(r.get() + 1));
    let pinned = crate::gitdir::pin(repo).map_err(Failure::unpinned)?;
    let mut c = Command::new(program());
    crate::gitdir::isolate(&mut c, &pinned);
    c.current_dir(repo)
        .args([
            "--no-optional-locks",
            "--no-pager",
            "--literal-pathspecs",
            "--no-replace-objects",
        ])
        .stdin(Stdio::null());
    Ok(c)
}

/// The `git` the child would find on `PATH` (kept as is by [`crate::gitdir::isolate`]), as a
/// path: the first `git` file with an execute bit in a folder of `PATH`, in order, as `execvp`
/// searches; `git` itself when none is found (the run then fails as it would have). A command
/// that sets `PATH` and names its program without a folder is started by the standard library
/// with `fork`, which copies the whole server's page tables and makes every page it writes next
/// fault once; a program named by its path is started with `posix_spawn` (`vfork`), whose cost
/// does not grow with the server's memory.
/// Searched once a process (the process's own `PATH` does not change), not once a git run.
fn program() -> &'static std::path::Path {
    use std::os::unix::fs::PermissionsExt;
    static GIT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    GIT.get_or_init(|| {
        let found = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join("git"))
                .find(|git| {
                    std::fs::metadata(git)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                })
        });
        found.unwrap_or_else(|| "git".into())
    })
}

/// A `git init` of a folder seneschal made itself (a scratch, which has no `.git` to pin yet),
/// with no system or global configuration.
pub fn init_command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
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
    /// Whether the run outlasted its deadline and was stopped.
    pub stopped: bool,
    /// Why git was not run at all: no repository, or a layout [`crate::gitdir::pin`] refused.
    pub unpinned: Option<crate::gitdir::Unpinned>,
}

impl Failure {
    /// A run that failed with `status` and the error text `stderr`.
    pub fn exited(status: Option<i32>, stderr: String) -> Failure {
        Failure {
            status,
            stderr,
            stopped: false,
            unpinned: None,
        }
    }

    /// A run that never started: [`crate::gitdir::pin`] said why.
    pub fn unpinned(why: crate::gitdir::Unpinned) -> Failure {
        Failure {
            unpinned: Some(why),
            ..Failure::exited(None, String::new())
        }
    }

    /// The capability error this failure means: `refused` for a layout the pin refused,
    /// `not_found` outside a repository, else `internal`. git's own words never reach a
    /// client (they may quote a file git read, inside or outside the root): they go to this
    /// process's stderr, and the answer says what failed in seneschal's words.
    pub fn into_error(self, what: &str) -> CapabilityError {
        if let Some(why) = self.unpinned {
            return why.into_error(what);
        }
        if is_not_a_repo(&self) {
            return crate::gitdir::Unpinned::NoRepository.into_error(what);
        }
        if self.stopped || self.status.is_none() {
            // seneschal's own words (the deadline, a start or read error, the size cap).
            return CapabilityError::internal(format!("{what}: {}", self.stderr));
        }
        if !self.stderr.is_empty() {
            eprintln!("seneschal: {what}: git failed: {}", self.stderr);
        }
        let status = match self.status {
            Some(code) => format!("exit status {code}"),
            None => "no exit status".to_string(),
        };
        CapabilityError::internal(format!(
            "{what}: git failed ({status}); its message is in the server's log"
        ))
    }
}

/// How long one git run may take, in seconds, before it is stopped: a FIFO planted where git
/// reads a ref or an object, or a file system that stops answering, would otherwise hold the
/// call (and its HTTP worker, or its stdio connection) for ever. `SENESCHAL_GIT_DEADLINE_MS`
/// shortens it (the tests of the stop do).
pub const GIT_DEADLINE_SECS: u64 = crate::limits::GIT_DEADLINE_SECS;

/// The deadline of one git run: [`GIT_DEADLINE_SECS`], or `SENESCHAL_GIT_DEADLINE_MS`.
fn deadline() -> std::time::Duration {
    static DEADLINE: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *DEADLINE.get_or_init(|| {
        std::env::var("SENESCHAL_GIT_DEADLINE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis)
            .unwrap_or(std::time::Duration::from_secs(GIT_DEADLINE_SECS))
    })
}

/// The watch over one running git: a handle on the process (a pidfd, which names that process
/// and no later one with the same pid) that one watchdog thread signals when its deadline
/// passes, unless the run ended first and dropped the watch.
struct Watch {
    pidfd: std::sync::Mutex<Option<rustix::fd::OwnedFd>>,
    fired: std::sync::atomic::AtomicBool,
}

/// The watches of the runs in flight, each with its deadline, and the watchdog's wake-up.
static WATCHES: std::sync::Mutex<Vec<(std::time::Instant, std::sync::Weak<Watch>)>> =
    std::sync::Mutex::new(Vec::new());
static WATCHDOG: std::sync::Condvar = std::sync::Condvar::new();

impl Watch {
    /// Whether one run at most is in flight (the caller's own).
    fn alone() -> bool {
        let watches = WATCHES.lock().unwrap_or_else(|e| e.into_inner());
        watches.iter().filter(|(_, w)| w.strong_count() > 0).count() <= 1
    }

    /// Watches `child` until the returned watch is dropped; `None` when the process cannot be
    /// held (a kernel without pidfds), and then it runs unwatched.
    fn over(child: &std::process::Child) -> Option<std::sync::Arc<Watch>> {
        static STARTED: std::sync::Once = std::sync::Once::new();
        let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).ok()?)?;
        let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
        let watch = std::sync::Arc::new(Watch {
            pidfd: std::sync::Mutex::new(Some(pidfd)),
            fired: std::sync::atomic::AtomicBool::new(false),
        });
        STARTED.call_once(|| {
            let _ = std::thread::Builder::new()
                .name("git-watchdog".into())
                .spawn(watchdog);
        });
        let mut watches = WATCHES.lock().unwrap_or_else(|e| e.into_inner());
        // Runs that ended are forgotten here, so the list holds the runs in flight. Deadlines
        // come in order: the watchdog, asleep until an earlier one, is woken only when it has
        // nothing to wait for.
        watches.retain(|(_, w)| w.strong_count() > 0);
        let idle = watches.is_empty();
        watches.push((
            std::time::Instant::now() + deadline(),
            std::sync::Arc::downgrade(&watch),
        ));
        if idle {
            WATCHDOG.notify_one();
        }
        Some(watch)
    }

    /// Whether the watchdog stopped the process.
    fn fired(this: &Option<std::sync::Arc<Watch>>) -> bool {
        this.as_ref()
            .is_some_and(|w| w.fired.load(std::sync::atomic::Ordering::Acquire))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // The run is over: nothing is signalled through this handle any more.
        self.pidfd.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// The watchdog: sleeps until the earliest deadline, then kills every run past its own.
fn watchdog() {
    let mut watches = WATCHES.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = std::time::Instant::now();
        watches.retain(|(due, watch)| {
            let Some(watch) = watch.upgrade() else {
                return false;
            };
            if *due > now {
                return true;
            }
            if let Some(fd) = watch
                .pidfd
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
            {
                watch
                    .fired
                    .store(true, std::sync::atomic::Ordering::Release);
                let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::KILL);
            }
            false
        });
        watches = match watches.iter().map(|(due, _)| *due).min() {
            Some(due) => {
                let wait = due.saturating_duration_since(std::time::Instant::now());
                WATCHDOG
                    .wait_timeout(watches, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => WATCHDOG.wait(watches).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// The failure of a run the watchdog stopped.
fn stopped() -> Failure {
    Failure {
        stopped: true,
        ..Failure::exited(
            None,
            format!(
                "git did not finish within {} s and was stopped (a FIFO or an unanswering file system in the repository?)",
                deadline().as_secs_f64()
            ),
        )
    }
}

/// The most bytes [`run`] reads of one git answer. A reader that can answer part of a larger
/// one reads it with [`run_capped`] and says `truncated`; past this cap [`run`] fails
/// (`size_cap`) rather than hold an unbounded answer in memory.
pub const RUN_CAP: usize = crate::limits::GIT_RUN_CAP;

/// Runs git with `args`; stdout on success. The run is watched: one that outlasts the
/// deadline is stopped and fails; one that answers more than [`RUN_CAP`] bytes is stopped and
/// fails too.
pub fn run(repo: &Path, args: &[&str]) -> Result<Vec<u8>, Failure> {
    let (out, more) = run_capped(repo, args, RUN_CAP)?;
    if more {
        return Err(Failure::exited(
            None,
            format!("git's answer is larger than {RUN_CAP} bytes"),
        ));
    }
    Ok(out)
}

/// Like [`run`], mapping a failure to a capability error about `what`.
pub fn output(repo: &Path, args: &[&str], what: &str) -> Result<Vec<u8>, CapabilityError> {
    run(repo, args).map_err(|f| f.into_error(what))
}

/// The fields of `bytes` split at NUL, the empty tail dropped.
pub fn split_z(bytes: &[u8]) -> Vec<String> {
    // Checked as UTF-8 once, the whole output (git's is nearly always), each field copied out
    // as it is; else field by field, an invalid sequence replaced.
    let mut fields: Vec<String> = match std::str::from_utf8(bytes) {
        Ok(text) => text.split('\0').map(str::to_string).collect(),
        Err(_) => bytes
            .split(|b| *b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect(),
    };
    if fields.last().is_some_and(String::is_empty) {
        fields.pop();
    }
    fields
}

/// The commit HEAD names, or `None` before the first commit.
pub fn head(repo: &Path) -> Result<Option<String>, CapabilityError> {
    if let Some(id) = resident_commit(repo, "HEAD^{commit}") {
        return Ok(Some(id));
    }
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
            "--ignore-submodules=dirty",
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

/// What [`log`] walks, every part already checked: the revisions (commit ids, or ranges of
/// commit ids `a..b` / `a...b`; none: HEAD), the committer-date bounds in a form git reads
/// exactly ([`log_date`]), and the confined path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSpec<'a> {
    /// Commit ids or ranges of commit ids; empty for HEAD.
    pub revs: Vec<String>,
    /// `--since`: commits committed at or after this time.
    pub since: Option<String>,
    /// `--until`: commits committed at or before this time.
    pub until: Option<String>,
    /// Only commits that touched this path.
    pub path: Option<&'a str>,
}

/// A client's ISO 8601 date (`2024-05-01`) or date-time (`2024-05-01T12:00:00Z`, `T` or a
/// space, seconds and fraction optional, `Z` or `±HH:MM` or `±HHMM`, UTC without a zone) as
/// `YYYY-MM-DD HH:MM:SS ±HHMM`, which git's date parser reads exactly (git guesses at anything
/// else, `yesterday` included, and fills a date's missing time from the clock). A date alone
/// is the start of its day, or its end when `end_of_day`. `None`: not such a date.
pub fn log_date(text: &str, end_of_day: bool) -> Option<String> {
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Option<u32> {
        let part = b.get(from..from + n)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| std::str::from_utf8(part).ok()?.parse().ok())
            .flatten()
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month) || !(1..=days).contains(&day) || year < 1970 {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if b.len() == 10 {
        let time = if end_of_day { "23:59:59" } else { "00:00:00" };
        return Some(format!("{date} {time} +0000"));
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute) = (digits(11, 2)?, digits(14, 2)?);
    if b.get(13) != Some(&b':') || hour > 23 || minute > 59 {
        return None;
    }
    let mut at = 16;
    let mut second = 0;
    if b.get(at) == Some(&b':') {
        second = digits(at + 1, 2)?;
        if second > 60 {
            return None;
        }
        at += 3;
        if b.get(at) == Some(&b'.') {
            at += 1;
            let start = at;
            while b.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            if at == start {
                return None;
            }
        }
    }
    let zone = match &b[at..] {
        [] | [b'Z' | b'z'] => "+0000".to_string(),
        [sign @ (b'+' | b'-'), h1, h2, rest @ ..] => {
            let mm = match rest {
                [b':', m1, m2] | [m1, m2] => [*m1, *m2],
                _ => return None,
            };
            let hh = [*h1, *h2];
            if !hh.iter().chain(&mm).all(u8::is_ascii_digit) {
                return None;
            }
            let (hh, mm) = (
                std::str::from_utf8(&hh).ok()?,
                std::str::from_utf8(&mm).ok()?,
            );
            if hh > "14" || mm > "59" {
                return None;
            }
            format!("{}{hh}{mm}", char::from(*sign))
        }
        _ => return None,
    };
    Some(format!("{date} {hour:02}:{minute:02}:{second:02} {zone}"))
}

/// The words of a relative date ([`log_date_at`]) and each unit's length in seconds; a month
/// and a year are calendar steps instead (0 here).
const DATE_UNITS: &[(&str, u64)] = &[
    ("second", 1),
    ("minute", 60),
    ("hour", 3600),
    ("day", 86_400),
    ("week", 7 * 86_400),
    ("month", 0),
    ("year", 0),
];

/// What [`log_date_at`] reads, for an error to name.
pub const LOG_DATE_FORMS: &str = "an ISO 8601 date (`2024-05-01`), an RFC 3339 date-time \
     (`2024-05-01T12:00:00Z`), `now`, `today`, `yesterday`, or `N UNITS ago` with a unit of \
     seconds, minutes, hours, days, weeks, months or years (`2 weeks ago`, `an hour ago`), \
     relative to now in UTC";

/// A client's date as [`log_date`] reads it, or one of the forms people type, read against
/// `now` (seconds since the epoch) in UTC: `now`; `today` and `yesterday`, days like an ISO
/// date (their start, or their end when `end_of_day`); `N UNITS ago` (`N` a number, `a`, `an`
/// or `one`; a unit of seconds to years, singular or plural; words apart by blanks or dots as
/// in `2.weeks.ago`), the instant that long before `now`, months and years counted on the
/// calendar (the day kept, or the month's last). Case does not matter; an instant before
/// 1970 is 1970's first. `None`: none of these ([`LOG_DATE_FORMS`]).
pub fn log_date_at(text: &str, end_of_day: bool, now: u64) -> Option<String> {
    if let Some(date) = log_date(text, end_of_day) {
        return Some(date);
    }
    let lower = text.trim().to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_ascii_whitespace() || c == '.')
        .filter(|w| !w.is_empty())
        .collect();
    let instant = |secs: u64| {
        let (y, m, d) = crate::text::civil_from_days((secs / 86_400) as i64);
        let rem = secs % 86_400;
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} +0000",
            rem / 3600,
            (rem / 60) % 60,
            rem % 60
        )
    };
    let day = |days_back: u64| {
        let start = (now / 86_400).saturating_sub(days_back) * 86_400;
        instant(if end_of_day { start + 86_399 } else { start })
    };
    match words.as_slice() {
        ["now"] => Some(instant(now)),
        ["today"] => Some(day(0)),
        ["yesterday"] => Some(day(1)),
        [n, unit, "ago"] => {
            let n: u64 = match *n {
                "a" | "an" | "one" => 1,
                digits if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    digits.parse().ok()?
                }
                _ => return None,
            };
            let (name, secs) = DATE_UNITS
                .iter()
                .find(|(name, _)| *unit == *name || unit.strip_suffix('s') == Some(name))?;
            if *secs > 0 {
                return Some(instant(now.saturating_sub(n.saturating_mul(*secs))));
            }
            // Months and years: the same day and time that many calendar months before.
            let months = if *name == "year" {
                n.checked_mul(12)?
            } else {
                n
            };
            let (y, m, d) = crate::text::civil_from_days((now / 86_400) as i64);
            let index = (y * 12 + i64::from(m) - 1).checked_sub(i64::try_from(months).ok()?)?;
            let (y, m) = (index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
            if y < 1970 {
                return Some(instant(0));
            }
            let last = match m {
                2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            let days = crate::text::days_from_civil(y, m, d.min(last));
            Some(instant(days as u64 * 86_400 + now % 86_400))
        }
        _ => None,
    }
}

/// The longest subject a log answer carries, in bytes; a longer one is cut (on a character
/// boundary) and the answer says `truncated`.
pub const SUBJECT_CAP: usize = 4096;

/// The longest commit message `repo.show` carries, in bytes (cut likewise).
pub const MESSAGE_CAP: usize = 1024 * 1024;

/// `text` cut to at most `cap` bytes on a character boundary, and whether it was cut.
fn cut(text: &mut String, cap: usize) -> bool {
    if text.len() <= cap {
        return false;
    }
    let mut at = cap;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    true
}

/// The last `limit` commits of `spec` (HEAD when it names no revision), newest first, each
/// given to `each` as soon as git has written it and the next byte (so a commit is never given
/// that a cut would leave out), and whether the answer was cut: git's answer read to
/// [`RUN_CAP`] bytes (whole records kept; a first record larger than that keeps its fields,
/// its subject cut), each subject to [`SUBJECT_CAP`]. None before the first commit, when no
/// revision is named. On an error, the commits given so far are no answer. `each` runs on
/// one CPU while git runs on the others (`Apart`): it must start no thread or process.
pub fn log(
    repo: &Path,
    limit: u64,
    spec: &LogSpec<'_>,
    each: &mut dyn FnMut(Commit),
) -> Result<bool, CapabilityError> {
    let n = format!("-n{limit}");
    let since = spec.since.as_ref().map(|d| format!("--since={d}"));
    let until = spec.until.as_ref().map(|d| format!("--until={d}"));
    let mut args = vec![
        "log",
        "-z",
        "--no-color",
        "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s",
        n.as_str(),
    ];
    args.extend(since.as_deref());
    args.extend(until.as_deref());
    args.push("--end-of-options");
    if spec.revs.is_empty() {
        args.push("HEAD");
    }
    args.extend(spec.revs.iter().map(String::as_str));
    args.push("--");
    if let Some(p) = spec.path {
        args.push(p);
    }
    let mut records = LogRecords::new(RUN_CAP);
    let mut cut_any = false;
    let mut give = |mut c: Commit| {
        cut_any |= cut(&mut c.subject, SUBJECT_CAP);
        each(c);
    };
    let read = run_capped_feeding(
        repo,
        &args,
        RUN_CAP,
        &mut |bytes| records.feed(bytes, &mut give),
        true,
    );
    let more = match read {
        Ok((_, more)) => more,
        // Before the first commit HEAD names nothing: the log is empty. Asked only when git
        // fails, so a log pays for no question beside its own run.
        Err(_) if spec.revs.is_empty() && head(repo)?.is_none() => return Ok(false),
        Err(f) => return Err(f.into_error("the log")),
    };
    records.finish(more, &mut give)?;
    Ok(cut_any || more)
}

/// [`log`]'s records parsed as git writes them: fed git's bytes in pieces (those past `cap`
/// ignored, as [`run_capped`] keeps none), it gives each record once the byte after it was
/// read, and [`LogRecords::finish`] settles the rest as the whole answer read at once would
/// (`log_records_fed_in_pieces_answer_as_the_whole`): every record when git ended, the whole
/// records before the last field read when it was cut, or the first record with its subject
/// cut when none is whole.
struct LogRecords {
    /// The bytes after the last record given.
    tail: Vec<u8>,
    /// How many bytes of `tail` were searched for field ends, and the ends found (each just
    /// after its NUL), fewer than a record's.
    searched: usize,
    ends: Vec<usize>,
    /// A whole record not yet followed by a byte.
    held: Option<Commit>,
    /// How many records were given, and how many more bytes are kept.
    given: usize,
    room: usize,
}

impl LogRecords {
    fn new(cap: usize) -> Self {
        LogRecords {
            tail: Vec::new(),
            searched: 0,
            ends: Vec::with_capacity(LOG_FIELDS),
            held: None,
            given: 0,
            room: cap,
        }
    }

    fn feed(&mut self, bytes: &[u8], each: &mut dyn FnMut(Commit)) {
        let bytes = &bytes[..bytes.len().min(self.room)];
        self.room -= bytes.len();
        if bytes.is_empty() {
            return;
        }
        if let Some(c) = self.held.take() {
            self.given += 1;
            each(c);
        }
        self.tail.extend_from_slice(bytes);
        let mut start = 0;
        loop {
            for at in memchr::memchr_iter(0, &self.tail[self.searched..]) {
                self.ends.push(self.searched + at + 1);
                if self.ends.len() == LOG_FIELDS {
                    break;
                }
            }
            if self.ends.len() < LOG_FIELDS {
                self.searched = self.tail.len();
                break;
            }
            let end = self.ends[LOG_FIELDS - 1];
            let mut from = start;
            let text: [String; LOG_FIELDS] = std::array::from_fn(|i| {
                let to = self.ends[i];
                // As it is when it is UTF-8, else each invalid sequence replaced.
                let field = String::from_utf8_lossy(&self.tail[from..to - 1]).into_owned();
                from = to;
                field
            });
            let commit = commit_of(text);
            self.ends.clear();
            self.searched = end;
            start = end;
            if end < self.tail.len() {
                self.given += 1;
                each(commit);
            } else {
                self.held = Some(commit);
            }
        }
        self.tail.drain(..start);
        self.searched -= start;
        self.ends.iter_mut().for_each(|e| *e -= start);
    }

    /// The end of git's answer: `more` when it was cut at the cap.
    fn finish(mut self, more: bool, each: &mut dyn FnMut(Commit)) -> Result<(), CapabilityError> {
        if more {
            // The last field read is cut: the records before it were given; a record followed
            // by nothing read is not whole. None whole: the first record, its subject cut.
            if self.given > 0 {
                return Ok(());
            }
            if let Some(c) = self.held.take() {
                each(c);
                return Ok(());
            }
            let mut fields = split_z(&self.tail);
            fields.truncate(LOG_FIELDS);
            parse_fields(fields)?.into_iter().for_each(each);
            return Ok(());
        }
        if let Some(c) = self.held.take() {
            each(c);
        }
        parse_fields(split_z(&self.tail))?
            .into_iter()
            .for_each(each);
        Ok(())
    }
}

/// The commit of one record's six fields, in [`log`]'s format's order.
fn commit_of(
    [sha, parents, author_name, author_email, authored_at, subject]: [String; LOG_FIELDS],
) -> Commit {
    Commit {
        sha: match sha.strip_prefix('\n') {
            Some(rest) => rest.trim_start_matches('\n').to_string(),
            None => sha,
        },
        parents: parents.split_whitespace().map(str::to_string).collect(),
        author_name,
        author_email,
        authored_at,
        subject,
    }
}

/// The commits of the NUL-separated fields of [`log`]'s format (records end in NUL too).
fn parse_fields(fields: Vec<String>) -> Result<Vec<Commit>, CapabilityError> {
    if fields.len() % LOG_FIELDS != 0 {
        return Err(CapabilityError::internal(
            "unexpected git log output: a record is incomplete",
        ));
    }
    let mut commits = Vec::with_capacity(fields.len() / LOG_FIELDS);
    let mut f = fields.into_iter();
    // Each field moves into its commit: read once, never copied.
    while let (Some(a), Some(b), Some(c), Some(d), Some(e), Some(g)) =
        (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
    {
        commits.push(commit_of([a, b, c, d, e, g]));
    }
    Ok(commits)
}

/// Runs git with `args`, reading at most `cap` bytes of stdout: the bytes read, and whether
/// git had more to say (then the child is killed, never read to its end). stderr is read on a
/// thread of its own, so a chatty git never blocks on a full pipe.
pub fn run_capped(repo: &Path, args: &[&str], cap: usize) -> Result<(Vec<u8>, bool), Failure> {
    run_capped_feeding(repo, args, cap, &mut |_| {}, false)
}

/// [`run_capped`], each piece of git's output also given to `feed` as it is read (those past
/// the cap too: the reader counts); with `apart`, git and this thread kept on different CPUs
/// while git runs ([`Apart`]: `feed` must then start no thread or process).
fn run_capped_feeding(
    repo: &Path,
    args: &[&str],
    cap: usize,
    feed: &mut dyn FnMut(&[u8]),
    apart: bool,
) -> Result<(Vec<u8>, bool), Failure> {
    // An empty marker is found at once: the cap counts from the first byte.
    let past = Past {
        feed,
        read_on: 0,
        keep: 0,
        seen: &mut |_, _| {},
        step: 0,
        apart,
    };
    run_capped_after(repo, args, b"", cap, cap, &mut |_| {}, past)
        .map(|(bytes, more, _)| (bytes, more))
}

/// A revision from a client, refused as input when it could be read as an option.
pub fn check_revision(rev: &str, field: &str) -> Result<(), CapabilityError> {
    if rev.starts_with('-') {
        return Err(CapabilityError::invalid_input(format!(
            "`{rev}` is not a revision: a revision cannot begin with `-`"
        ))
        .at(field));
    }
    if rev.contains('\0') || rev.chars().any(char::is_control) {
        return Err(
            CapabilityError::invalid_input("a revision cannot hold a control character").at(field),
        );
    }
    Ok(())
}

/// Resolves a client's revision to a commit id: [`check_revision`], then the resident
/// resolver (below); when it finds no commit, `rev-parse --verify --end-of-options`, so the
/// text is never read as an option, and `not_found` when it names no commit.
pub fn resolve_commit(repo: &Path, rev: &str, field: &str) -> Result<String, CapabilityError> {
    check_revision(rev, field)?;
    let spec = format!("{rev}^{{commit}}");
    if let Some(id) = resident_commit(repo, &spec) {
        return Ok(id);
    }
    rev_parse_commit(repo, rev, &spec, field)
}

/// [`resolve_commit`]'s `rev-parse` path, for `spec` (`rev^{commit}`).
fn rev_parse_commit(
    repo: &Path,
    rev: &str,
    spec: &str,
    field: &str,
) -> Result<String, CapabilityError> {
    match run(
        repo,
        &["rev-parse", "--verify", "-q", "--end-of-options", spec],
    ) {
        Ok(out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
        Err(f) if f.status == Some(1) || (f.status == Some(128) && !is_not_a_repo(&f)) => {
            Err(CapabilityError::not_found(format!("`{rev}` names no commit")).at(field))
        }
        Err(f) => Err(f.into_error("the revision")),
    }
}

/// Resolves several revisions at once, as [`resolve_commit`] resolves each (the checks first,
/// then one question to the resident resolver, else one `rev-parse` for all); when neither
/// answers one commit id per revision, each is resolved alone, so an error names its own field.
pub fn resolve_commits(repo: &Path, revs: &[(&str, &str)]) -> Result<Vec<String>, CapabilityError> {
    for (rev, field) in revs {
        check_revision(rev, field)?;
    }
    if revs.is_empty() {
        return Ok(Vec::new());
    }
    let specs: Vec<String> = revs
        .iter()
        .map(|(r, _)| format!("{r}^{{commit}}"))
        .collect();
    if let Some(found) = resident_resolve(repo, &specs) {
        if let Some(ids) = found.into_iter().collect::<Option<Vec<String>>>() {
            return Ok(ids);
        }
    }
    if revs.len() > 1 {
        let mut args = vec!["rev-parse", "--revs-only", "--end-of-options"];
        args.extend(specs.iter().map(String::as_str));
        match run(repo, &args) {
            Ok(out) => {
                let ids: Vec<String> = String::from_utf8_lossy(&out)
                    .lines()
                    .map(str::to_string)
                    .collect();
                if ids.len() == revs.len() && ids.iter().all(|s| is_object_id(s)) {
                    return Ok(ids);
                }
            }
            // Stopped at its deadline: a run per revision would only stall again.
            Err(f) if f.stopped => return Err(f.into_error("the revision")),
            Err(_) => {}
        }
    }
    revs.iter()
        .zip(&specs)
        .map(|((rev, field), spec)| rev_parse_commit(repo, rev, spec, field))
        .collect()
}

/// The resident resolvers: one `git cat-file --batch-check` per repository root, started on
/// the first resolution and kept for the life of the process, so a served call that names
/// revisions (`repo.diff` with `from`/`to`, `repo.show`, `repo.blame` at a revision) costs one
/// git process, not two. git reads the refs and the object store afresh for each name it is
/// given (a loose ref is read from its file, `packed-refs` again when its stat changes, the
/// packs again when a name is not found in those it knows), so a commit made or a ref moved
/// between two calls is seen by the second. The resolver answers found commits only: a name
/// it reports missing or ambiguous, a resolver that cannot be started or stops answering, all
/// take the `rev-parse` path of [`resolve_commit`], whose errors are the contract. At most
/// [`RESIDENT_ROOTS`] roots keep one (the oldest is stopped first); a process serves one
/// repository, so in practice there is one.
static RESIDENT: std::sync::Mutex<Vec<(std::path::PathBuf, Resident)>> =
    std::sync::Mutex::new(Vec::new());

/// The most repository roots that keep a resident resolver at once.
pub const RESIDENT_ROOTS: usize = 4;

/// A running `git cat-file --batch-check` and its pipes.
struct Resident {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Resident {
    fn start(repo: &Path) -> Option<Resident> {
        let mut child = command(repo)
            .ok()?
            .args(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = std::io::BufReader::new(child.stdout.take()?);
        Some(Resident {
            child,
            stdin,
            stdout,
        })
    }

    /// The commit each of `specs` (each already `<rev>^{commit}`) names, or `None` for one
    /// git did not resolve to a commit; `Err` when the resolver failed (it is then stopped).
    fn ask(&mut self, specs: &[String]) -> std::io::Result<Vec<Option<String>>> {
        let mut question = String::new();
        for s in specs {
            question.push_str(s);
            question.push('\n');
        }
        // Watched while it answers: one stalled past the deadline is killed, its pipe ends,
        // and the caller stops it and asks `rev-parse`.
        let watch = Watch::over(&self.child);
        let answers = self.exchange(&question, specs);
        if answers.is_err() && Watch::fired(&watch) {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        answers
    }

    /// Writes `question` (the `specs`, a line each) and reads an answer per spec.
    fn exchange(
        &mut self,
        question: &str,
        specs: &[String],
    ) -> std::io::Result<Vec<Option<String>>> {
        use std::io::{BufRead, Write};
        self.stdin.write_all(question.as_bytes())?;
        self.stdin.flush()?;
        let mut answers = Vec::with_capacity(specs.len());
        for spec in specs {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 || !line.ends_with('\n') {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            answers.push(batch_answer(spec, line.trim_end_matches('\n'))?);
        }
        Ok(answers)
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `--batch-check=%(objectname) %(objecttype)` answer about `spec`: the commit id, `None`
/// when git reports the name missing or ambiguous, an error for anything else (the resolver
/// is then out of step with its questions and is stopped).
fn batch_answer(spec: &str, line: &str) -> std::io::Result<Option<String>> {
    if let Some(rest) = line.strip_prefix(spec) {
        if rest == " missing" || rest == " ambiguous" {
            return Ok(None);
        }
    }
    match line.split_once(' ') {
        Some((id, "commit")) if is_object_id(id) => Ok(Some(id.to_string())),
        _ => Err(std::io::Error::other(format!(
            "unexpected resolver answer: {line}"
        ))),
    }
}

/// A full object id: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The commit `spec` names, when the resident resolver of `repo` finds one.
fn resident_commit(repo: &Path, spec: &str) -> Option<String> {
    resident_resolve(repo, &[spec.to_string()])?.pop().flatten()
}

/// Asks the resident resolver of `repo` (starting it if need be, once more if it failed)
/// about `specs`; `None` when no resolver answers. A resolver busy with another call is not
/// waited for: that call resolves with `rev-parse`, so calls in parallel never queue behind one
/// another, and a resolver stuck on the repository (a FIFO planted where a ref should be)
/// stalls the call that met it, not every later one.
fn resident_resolve(repo: &Path, specs: &[String]) -> Option<Vec<Option<String>>> {
    let mut table = match RESIDENT.try_lock() {
        Ok(table) => table,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    for _ in 0..2 {
        let at = match table.iter().position(|(root, _)| root == repo) {
            Some(at) => at,
            None => {
                if table.len() >= RESIDENT_ROOTS {
                    table.remove(0);
                }
                table.push((repo.to_path_buf(), Resident::start(repo)?));
                table.len() - 1
            }
        };
        match table[at].1.ask(specs) {
            Ok(answers) => return Some(answers),
            // Stalled past the deadline: a new resolver would stall on the same name.
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                table.remove(at);
                return None;
            }
            // Dead (stopped from outside, or never answering): one more, once.
            Err(_) => {
                table.remove(at);
            }
        }
    }
    None
}

fn is_not_a_repo(f: &Failure) -> bool {
    f.stderr.contains("not a git repository")
}

/// What [`blobs`] found for one object name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
    /// The name names no blob (missing, or another kind of object).
    Missing,
    /// A blob larger than the cap: its size, its bytes never read.
    TooLarge(u64),
    /// The blob's bytes.
    Bytes(Vec<u8>),
}

/// The blobs one answer has read for its content gate, by id, each read once: the gate's
/// judgement (a key anywhere in the file) and the whole-file redaction of a YAML or JSON
/// file's hunks share them ([`withheld_by_content`], [`redact_by_whole_files`]).
#[derive(Debug, Default)]
pub struct BlobCache {
    read: std::collections::HashMap<String, Blob>,
}

impl BlobCache {
    /// Reads the blobs of `names` not read yet (at most [`crate::gate::WHOLE_CAP`] bytes
    /// each), all in one [`blobs`] run.
    pub fn fetch(&mut self, repo: &Path, names: &[String]) -> Result<(), CapabilityError> {
        let mut missing: Vec<String> = names
            .iter()
            .filter(|n| !self.read.contains_key(*n))
            .cloned()
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let found = blobs(repo, &missing, crate::gate::WHOLE_CAP)?;
        self.read.extend(missing.into_iter().zip(found));
        Ok(())
    }

    /// Takes the blobs `other` read (as read there: one name is one object's bytes).
    pub fn merge(&mut self, other: BlobCache) {
        self.read.extend(other.read);
    }

    /// The blob `name` names, once fetched.
    pub fn get(&self, name: &str) -> Option<&Blob> {
        self.read.get(name)
    }
}

/// The blobs `names` name (`<id>`, or `<commit>:<path>`), each read whole when it is at most
/// `cap` bytes: one `git cat-file --batch-command --buffer` run in two rounds, every object's
/// size first (`info`, all asked at once), then the bytes (`contents`, all asked at once, by
/// the id the first round found, so a name that moves between the rounds cannot change the
/// answer's size) of those under the cap. A blob of any size costs at most `cap` bytes of
/// memory and the whole set two round trips, not two a blob. The requests are written on a
/// thread of their own while the answers are read, so neither pipe can fill and stall the
/// other; a reader that fails stops git, so the writer is never left blocked. A name git
/// cannot be asked whole (empty, holding a newline or a NUL, or ending in a carriage return,
/// which git's line reader drops) is [`Blob::Missing`]. For the content gate
/// ([`crate::gate`]).
pub fn blobs(repo: &Path, names: &[String], cap: u64) -> Result<Vec<Blob>, CapabilityError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let failed = |e: std::io::Error| {
        CapabilityError::internal(format!("the blobs cannot be read from git: {e}"))
    };
    let mut child = command(repo)
        .map_err(|f| f.into_error("the blobs"))?
        .args(["cat-file", "--batch-command", "--buffer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(failed)?;
    let watch = Watch::over(&child);
    let stdin = child.stdin.take().expect("piped");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
    let result = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<String>>();
        let asked: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| askable(n))
            .collect();
        let writer = scope.spawn(move || batch_requests(stdin, &asked, &rx));
        let read = batch_answers(stdout, names, cap, &tx);
        drop(tx);
        if read.is_err() {
            // The writer may be blocked on a pipe git no longer reads.
            let _ = child.kill();
        }
        let wrote = writer
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writer of the requests failed")));
        let found = read?;
        wrote?;
        Ok(found)
    });
    let _ = child.kill();
    let _ = child.wait();
    if Watch::fired(&watch) {
        return Err(stopped().into_error("the blobs"));
    }
    result.map_err(failed)
}

/// Whether `name` reaches `git cat-file --batch-command` whole as one request line.
fn askable(name: &str) -> bool {
    !name.is_empty() && !name.contains(['\n', '\0']) && !name.ends_with('\r')
}

/// The requests of [`blobs`]: `info` of each of `asked` and a flush, then, once the reader
/// sends the ids under the cap, `contents` of each and a flush; closing the pipe ends git.
fn batch_requests(
    stdin: std::process::ChildStdin,
    asked: &[&str],
    second: &std::sync::mpsc::Receiver<Vec<String>>,
) -> std::io::Result<()> {
    use std::io::Write;
    let mut stdin = std::io::BufWriter::with_capacity(64 * 1024, stdin);
    for name in asked {
        writeln!(stdin, "info {name}")?;
    }
    writeln!(stdin, "flush")?;
    stdin.flush()?;
    if let Ok(ids) = second.recv() {
        for id in ids {
            writeln!(stdin, "contents {id}")?;
        }
        writeln!(stdin, "flush")?;
        stdin.flush()?;
    }
    Ok(())
}

/// One `info` answer, `<id> <type> <size>`: the id and size of a blob, `None` for a name git
/// reports missing or ambiguous, or an object of another kind.
fn blob_info(line: &str) -> Option<(&str, u64)> {
    let mut parts = line.split(' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(id), Some("blob"), Some(size), None) if is_object_id(id) => {
            Some((id, size.parse().ok()?))
        }
        _ => None,
    }
}

/// The answers of [`blobs`] to the requests of [`batch_requests`], in the order of `names`.
fn batch_answers(
    mut stdout: impl std::io::BufRead,
    names: &[String],
    cap: u64,
    second: &std::sync::mpsc::Sender<Vec<String>>,
) -> std::io::Result<Vec<Blob>> {
    fn next_line(stdout: &mut impl std::io::BufRead, line: &mut String) -> std::io::Result<()> {
        line.clear();
        if stdout.read_line(line)? == 0 || !line.ends_with('\n') {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        line.pop();
        Ok(())
    }
    let mut line = String::new();
    // The first round: a size (and id) per name asked.
    let mut sizes: Vec<Option<(String, u64)>> = Vec::with_capacity(names.len());
    for name in names {
        if !askable(name) {
            sizes.push(None);
            continue;
        }
        next_line(&mut stdout, &mut line)?;
        sizes.push(blob_info(&line).map(|(id, size)| (id.to_string(), size)));
    }
    let wanted: Vec<String> = sizes
        .iter()
        .flatten()
        .filter(|(_, size)| *size <= cap)
        .map(|(id, _)| id.clone())
        .collect();
    let _ = second.send(wanted);
    // The second round: the bytes of each blob under the cap, in the same order.
    let mut found = Vec::with_capacity(names.len());
    for size in sizes {
        found.push(match size {
            None => Blob::Missing,
            Some((_, size)) if size > cap => Blob::TooLarge(size),
            Some((id, size)) => {
                next_line(&mut stdout, &mut line)?;
                if blob_info(&line) != Some((id.as_str(), size)) {
                    // An object that vanished between the rounds (`<id> missing`, nothing
                    // follows), or an answer out of step (then nothing after it is read).
                    if line == format!("{id} missing") {
                        found.push(Blob::Missing);
                        continue;
                    }
                    return Err(std::io::Error::other(format!(
                        "unexpected answer to `contents {id}`: {line}"
                    )));
                }
                let mut bytes = vec![0u8; usize::try_from(size).map_err(std::io::Error::other)?];
                stdout.read_exact(&mut bytes)?;
                let mut end = [0u8; 1];
                stdout.read_exact(&mut end)?;
                if end != *b"\n" {
                    return Err(std::io::Error::other(
                        "a blob's bytes not ended by a newline",
                    ));
                }
                Blob::Bytes(bytes)
            }
        });
    }
    Ok(found)
}

/// The blob at `path` in `commit`, whole, or `None` when the commit has no such file; a blob
/// over `cap` is refused ([`crate::rules::Rule::SizeCap`]).
pub fn blob_at(
    repo: &Path,
    commit: &str,
    path: &str,
    cap: u64,
) -> Result<Option<Vec<u8>>, CapabilityError> {
    match blobs(repo, &[format!("{commit}:{path}")], cap)?.pop() {
        Some(Blob::Bytes(b)) => Ok(Some(b)),
        Some(Blob::TooLarge(size)) => Err(crate::confine::refusal(
            crate::rules::Rule::SizeCap,
            path,
            &format!("it is {size} bytes at that revision, over the cap of {cap}"),
            "/path",
        )),
        _ => Ok(None),
    }
}

/// The first parent of the commit `sha` (an id), `None` for a root commit (or the boundary of
/// a shallow clone): asked of the resident resolver (`sha^1`), else read from `git log`.
pub fn first_parent(repo: &Path, sha: &str) -> Result<Option<String>, CapabilityError> {
    if let Some(mut answers) = resident_resolve(repo, &[format!("{sha}^1^{{commit}}")]) {
        return Ok(answers.pop().flatten());
    }
    Ok(commit_detail(repo, sha)?.commit.parents.into_iter().next())
}

/// The id of the empty tree (what a root commit is compared against) in the object format of
/// the id `like`, one of this repository's: known for SHA-1 and SHA-256, else asked of git.
pub fn empty_tree(repo: &Path, like: &str) -> Result<String, CapabilityError> {
    match like.len() {
        40 => return Ok("4b825dc642cb6eb9a060e54bf8d69288fbee4904".into()),
        64 => return Ok("6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321".into()),
        _ => {}
    }
    let out = output(
        repo,
        &["hash-object", "-t", "tree", "--stdin"],
        "the empty tree",
    )?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// What a diff compares: the working tree or the index (`cached`) against the index, HEAD or
/// `from`; or `from` against `to`. Commit ids only (resolved by [`resolve_commit`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffSpec {
    /// `--cached`: the index instead of the working tree.
    pub cached: bool,
    /// The first commit.
    pub from: Option<String>,
    /// The second commit (with `from`).
    pub to: Option<String>,
}

impl DiffSpec {
    /// The `git diff` arguments of every diff: no external driver, no textconv, fixed
    /// prefixes and renames found whatever the repository's configuration says, and no
    /// automatic index refresh (`git diff` would otherwise rewrite the index's stat data, a
    /// write behind a read; a file whose stat data alone changed then has no line counts, and
    /// [`parse_raw_numstat`] leaves it out).
    fn args(&self, head: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = [
            "-c",
            "diff.autoRefreshIndex=false",
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
        ]
        .iter()
        .chain(head)
        .map(|s| s.to_string())
        .collect();
        a.extend(
            [
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "--find-renames",
                "--no-relative",
                "--ignore-submodules=dirty",
            ]
            .map(String::from),
        );
        if self.cached {
            a.push("--cached".into());
        }
        a.extend(self.from.iter().cloned());
        a.extend(self.to.iter().cloned());
        a
    }
}

/// One changed file of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path (after a rename or copy).
    pub path: String,
    /// The former path of a rename or copy.
    pub from: Option<String>,
    /// `added`, `modified`, `deleted`, `renamed`, `copied`, `type_changed` or `unmerged`.
    pub change: &'static str,
    /// Added lines; `None` for a binary file.
    pub additions: Option<u64>,
    /// Deleted lines; `None` for a binary file.
    pub deletions: Option<u64>,
    /// The blob ids of the two sides, `None` where git names none (an added or deleted side,
    /// or a working-tree file git has not hashed).
    pub ids: (Option<String>, Option<String>),
}

impl FileDiff {
    /// The header line of this file's section of a patch (`diff --git a/FROM b/PATH`, with the
    /// fixed prefixes [`DiffSpec`] asks for).
    pub fn patch_header(&self) -> String {
        format!(
            "diff --git a/{} b/{}",
            self.from.as_deref().unwrap_or(&self.path),
            self.path
        )
    }
}

/// The files `spec` changes under `paths` (already confined), sorted by path.
pub fn diff_files(
    repo: &Path,
    spec: &DiffSpec,
    paths: &[String],
) -> Result<Vec<FileDiff>, CapabilityError> {
    let mut args = spec.args(&["--raw", "--numstat", "-z"]);
    args.push("--".into());
    args.extend(paths.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = output(repo, &args, "the diff")?;
    parse_raw_numstat(&out)
}

/// The unified patch of `spec` under `paths` with `context` lines, at most `cap` bytes: the
/// text, cut on a line boundary, and whether it was cut.
pub fn diff_patch(
    repo: &Path,
    spec: &DiffSpec,
    paths: &[String],
    context: u64,
    cap: usize,
) -> Result<(String, bool), CapabilityError> {
    let unified = format!("--unified={context}");
    let mut args = spec.args(&[unified.as_str()]);
    args.push("--".into());
    args.extend(paths.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut bytes, cut) = run_capped(repo, &args, cap).map_err(|f| f.into_error("the diff"))?;
    if cut {
        // Whole lines only: the partial last line is dropped.
        bytes.truncate(cut_at(&bytes, bytes.len()));
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

/// A patch read under a cap, with what was read beyond it ([`diff_with_patch`]).
#[derive(Debug)]
pub struct CappedPatch {
    /// The patch cut to at most the cap's bytes on a line boundary.
    pub shown: String,
    /// Whether it was cut.
    pub truncated: bool,
    /// The patch from the end of `shown` on, as far as it was kept (on a line boundary).
    pub beyond: String,
    /// Whether `shown` and `beyond` together are the whole patch.
    pub whole: bool,
    /// Whether `shown` is git's bytes as they were read (no invalid UTF-8 replaced), so that
    /// what a reader saw of them while git ran is a prefix of it.
    pub exact: bool,
}

/// The files and the patch of `spec` under `paths` from one git run (`--raw -z --patch`: the
/// records, an empty field, then the patch): the files and the patch
/// ([`CappedPatch`]: cut to at most `cap` bytes on a line boundary, and up to `keep` bytes
/// past the cap kept, so that a caller that leaves sections out can fill the cap again from
/// them without asking git a second time). The records are read whole, up to
/// [`DIFF_RECORDS_CAP`] bytes (more is `invalid_input`: too many files to list). Each file's
/// line counts are those of its section of the patch (counted as it comes: git computes each
/// file's diff once, not once for `--numstat` and again for the patch). Past the cap git is
/// read on to its end, the patch counted and not kept; when it goes on past
/// [`DIFF_READ_ON_CAP`] more bytes, or a record's section cannot be told for sure, a second
/// run reads the counts with `--numstat` ([`diff_files`]). `early` is given the records' files (without their line counts) as soon
/// as they are read, while git goes on to the patch.
/// `reading` is given the patch read so far (`false`) every [`DIFF_SEEN_STEP`] bytes while it
/// is within the cap, and the patch as it will be shown (the cap's bytes cut on a line
/// boundary: `true`) as soon as git writes past the cap, while git goes on to the patch's end.
#[allow(clippy::too_many_arguments)]
pub fn diff_with_patch(
    repo: &Path,
    spec: &DiffSpec,
    paths: &[String],
    context: u64,
    cap: usize,
    keep: usize,
    early: &mut dyn FnMut(Vec<FileDiff>),
    reading: &mut dyn FnMut(&[u8], bool),
) -> Result<(Vec<FileDiff>, CappedPatch), CapabilityError> {
    let unified = format!("--unified={context}");
    let mut args = spec.args(&["--raw", "-z", "--patch", unified.as_str()]);
    args.push("--".into());
    args.extend(paths.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut records_read = |records: &[u8]| {
        if let Ok(files) = parse_raw(records) {
            early(files);
        }
    };
    // Every byte of the patch is counted, those past the cap too: git reads on to its end
    // (up to DIFF_READ_ON_CAP more bytes), so its line counts need no second run.
    let mut counter = PatchCounter::default();
    let mut seen = |bytes: &[u8], at_cap: bool| {
        if at_cap {
            reading(&bytes[..cut_at(bytes, cap)], true)
        } else {
            reading(bytes, false)
        }
    };
    let past = Past {
        feed: &mut |piece| counter.feed(piece),
        read_on: DIFF_READ_ON_CAP,
        keep,
        seen: &mut seen,
        step: DIFF_SEEN_STEP,
        // The patch's judging reads blobs on threads while git runs.
        apart: false,
    };
    let (bytes, more, whole) = run_capped_after(
        repo,
        &args,
        b"\0\0",
        DIFF_RECORDS_CAP,
        cap,
        &mut records_read,
        past,
    )
    .map_err(|f| f.into_error("the diff"))?;
    let (records, patch) = match memchr::memmem::find(&bytes, b"\0\0") {
        Some(at) => (&bytes[..at + 1], &bytes[at + 2..]),
        None if more => {
            return Err(CapabilityError::invalid_input(format!(
                "the diff changes too many files to list (more than {DIFF_RECORDS_CAP} bytes of records); name paths to narrow it"
            ))
            .at("/paths"))
        }
        None => (&bytes[..], &[][..]),
    };
    let counted = if whole {
        counter.files(parse_raw(records)?)
    } else {
        None
    };
    let files = match counted {
        Some(files) => sorted(files),
        None => diff_files(repo, spec, paths)?,
    };
    let mut patch = patch.to_vec();
    if more {
        patch.truncate(cut_at(&patch, patch.len()));
    }
    // The patch as text, without a copy when it is UTF-8 (a patch almost always is); an invalid
    // sequence becomes U+FFFD.
    let (mut shown, exact) = match String::from_utf8(patch) {
        Ok(text) => (text, true),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), false),
    };
    // The cap's share, cut on a line boundary as git's run cut at the cap is; the rest kept.
    let (beyond, truncated) = if shown.len() > cap {
        let end = cut_at(shown.as_bytes(), cap);
        (shown.split_off(end), true)
    } else {
        (String::new(), more)
    };
    let patch = CappedPatch {
        shown,
        truncated,
        beyond,
        whole: !more,
        exact,
    };
    Ok((files, patch))
}

/// Where a patch longer than `cap` bytes is cut: after its last line break within them.
fn cut_at(patch: &[u8], cap: usize) -> usize {
    patch[..cap.min(patch.len())]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
}

/// `patch` cut to at most `cap` bytes on a line boundary, and whether it was cut.
pub fn cut_patch(mut patch: String, cap: usize) -> (String, bool) {
    if patch.len() <= cap {
        return (patch, false);
    }
    patch.truncate(cut_at(patch.as_bytes(), cap));
    (patch, true)
}

/// Whether git writes `path` in a patch's `diff --git` line as it is (no C-style quoting
/// whatever `core.quotePath` says): printable ASCII other than `"` and `\`.
fn plain_in_patch(path: &str) -> bool {
    path.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

/// The raw records' files (in git's order, which is the patch's) with the line counts of their
/// sections of the whole `patch`, as `--numstat` counts them: the `+` and `-` lines of the
/// hunks, none for a binary file. A record without a section changed in its stat data only
/// and is left out, as [`parse_raw_numstat`] leaves it out. `None` (count with `--numstat`
/// instead) when a record's section cannot be told for sure: a path git would quote, a type
/// change (two sections) or an unmerged path (a combined diff), or a section no record claims.
pub fn counts_from_patch(raw: Vec<FileDiff>, patch: &[u8]) -> Option<Vec<FileDiff>> {
    let mut counter = PatchCounter::default();
    counter.feed(patch);
    counter.files(raw)
}

/// The sections of a patch read in pieces, as they come from git ([`counts_from_patch`] reads
/// a whole patch through it; [`diff_with_patch`] the part past its cap too, which it does not
/// keep): each `diff --git` header with the `+` and `-` lines of its hunks, and whether it is
/// binary. A line cut between two pieces is joined; only its first [`PatchCounter::KEPT`]
/// bytes are kept (all a line is told by).
#[derive(Default)]
struct PatchCounter {
    sections: Vec<Counted>,
    in_hunk: bool,
    /// The start of the line the last piece left unfinished (empty when none is).
    partial: Vec<u8>,
    /// A line before the first section: the patch cannot be told for sure.
    unsure: bool,
}

/// One section of a patch as [`PatchCounter`] counts it.
struct Counted {
    header: Vec<u8>,
    additions: u64,
    deletions: u64,
    binary: bool,
}

impl PatchCounter {
    /// The most bytes of one line kept (a header names two paths of at most 4 KiB each).
    const KEPT: usize = 8 * 1024 + 64;

    /// Reads the next piece of the patch.
    fn feed(&mut self, piece: &[u8]) {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', piece) {
            if self.partial.is_empty() {
                self.line(&piece[start..end]);
            } else {
                self.keep(&piece[start..end]);
                let line = std::mem::take(&mut self.partial);
                self.line(&line);
            }
            start = end + 1;
        }
        // An unfinished line keeps at least its first byte, so `partial` says there is one.
        self.keep(&piece[start..]);
    }

    /// Keeps the start of an unfinished line, up to [`Self::KEPT`] bytes: a header longer than
    /// that is cut, matches no record, and leaves the counts to `--numstat`.
    fn keep(&mut self, bytes: &[u8]) {
        let room = Self::KEPT.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn line(&mut self, line: &[u8]) {
        if let Some(header) = line.strip_prefix(b"diff --git ") {
            self.sections.push(Counted {
                header: header.to_vec(),
                additions: 0,
                deletions: 0,
                binary: false,
            });
            self.in_hunk = false;
            return;
        }
        let Some(section) = self.sections.last_mut() else {
            self.unsure |= !line.is_empty();
            return;
        };
        if line.starts_with(b"@@") {
            self.in_hunk = true;
        } else if self.in_hunk {
            match line.first() {
                Some(b'+') => section.additions += 1,
                Some(b'-') => section.deletions += 1,
                _ => {}
            }
        } else if line.starts_with(b"Binary files ") || line.starts_with(b"GIT binary patch") {
            section.binary = true;
        }
    }

    /// The raw records' files (in git's order, which is the patch's) with the line counts of
    /// their sections, as [`counts_from_patch`] answers.
    fn files(mut self, raw: Vec<FileDiff>) -> Option<Vec<FileDiff>> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        if self.unsure
            || raw.iter().any(|f| {
                matches!(f.change, "type_changed" | "unmerged")
                    || !plain_in_patch(&f.path)
                    || !f.from.as_deref().is_none_or(plain_in_patch)
            })
        {
            return None;
        }
        let mut next = self.sections.into_iter().peekable();
        let mut files = Vec::with_capacity(raw.len());
        for mut f in raw {
            let expected = f.patch_header();
            let expected = &expected.as_bytes()["diff --git ".len()..];
            if next.peek().is_some_and(|s| s.header == expected) {
                let s = next.next()?;
                (f.additions, f.deletions) = if s.binary {
                    (None, None)
                } else {
                    (Some(s.additions), Some(s.deletions))
                };
                files.push(f);
            }
        }
        next.peek().is_none().then_some(files)
    }
}

/// The sections of a patch the content gate judges by content, found as the patch is read
/// (the blobs of their files can then be read while git still writes the rest): each section
/// that may hold key material ([`crate::gate::fragment_may_hold_key`]) names its `diff --git`
/// line, or, when no file claims it (a path git quotes), every file. Judging a patch in
/// pieces ([`Judging::whole_sections`] as it grows, [`Judging::rest`] at its end) flags what
/// judging it whole does (`judging_in_pieces_flags_what_judging_whole_does`).
#[derive(Debug, Default)]
pub struct Judging {
    /// Where the first section not judged yet begins.
    to: usize,
    /// The header lines of the sections flagged so far.
    headers: std::collections::HashSet<Vec<u8>>,
}

impl Judging {
    /// Judges the sections of `patch` (the patch read so far) that are whole (the next one has
    /// begun) and not yet judged; returns the header lines of those flagged.
    pub fn whole_sections(&mut self, patch: &[u8]) -> Vec<Vec<u8>> {
        let last = memchr::memmem::rfind_iter(&patch[self.to.min(patch.len())..], b"diff --git ")
            .map(|at| self.to + at)
            .find(|&at| at == 0 || patch[at - 1] == b'\n');
        match last {
            Some(end) if end > self.to => self.judge(&patch[..end]),
            _ => Vec::new(),
        }
    }

    /// Judges the rest of `patch` (the whole patch, its last section as it stands).
    pub fn rest(&mut self, patch: &[u8]) -> Vec<Vec<u8>> {
        self.judge(patch)
    }

    /// The files of `files` flagged so far (indices): [`Headers::files_of`] its headers.
    pub fn flagged(&self, files: &[FileDiff]) -> Vec<usize> {
        Headers::of(files).files_of(&self.headers)
    }

    /// Judges the sections of `patch` from the first not judged to its end.
    fn judge(&mut self, patch: &[u8]) -> Vec<Vec<u8>> {
        let mut starts = crate::gate::section_starts(patch, self.to.min(patch.len()));
        // Text before the first section of a piece belongs to the section judged last (a
        // patch read from its start opens with one).
        starts.push(patch.len());
        let mut new = Vec::new();
        for pair in starts.windows(2) {
            let section = &patch[pair[0]..pair[1]];
            if !crate::gate::fragment_may_hold_key(section) {
                continue;
            }
            let header = section.split(|b| *b == b'\n').next().unwrap_or_default();
            if self.headers.insert(header.to_vec()) {
                new.push(header.to_vec());
            }
        }
        self.to = patch.len();
        new
    }
}

/// The section header lines of a diff's files (`diff --git a/… b/…`), each with the files
/// (indices) that have it: two files can share one (two renames: `a/p b/q b/r` is `p` to
/// `q b/r` and `p b/q` to `r`).
#[derive(Debug, Default)]
pub struct Headers {
    files: usize,
    named: std::collections::HashMap<Vec<u8>, Vec<usize>>,
}

impl Headers {
    /// The headers of `files`.
    pub fn of(files: &[FileDiff]) -> Headers {
        let mut named: std::collections::HashMap<Vec<u8>, Vec<usize>> = Default::default();
        for (i, f) in files.iter().enumerate() {
            named
                .entry(f.patch_header().into_bytes())
                .or_default()
                .push(i);
        }
        Headers {
            files: files.len(),
            named,
        }
    }

    /// The files (indices) whose header line is `header`, if any has it.
    pub fn named(&self, header: &[u8]) -> Option<&[usize]> {
        self.named.get(header).map(Vec::as_slice)
    }

    /// The files (indices, in order) whose header lines are `headers`, every file when one of
    /// them is no file's (a path git quotes).
    pub fn files_of<'h>(&self, headers: impl IntoIterator<Item = &'h Vec<u8>>) -> Vec<usize> {
        let mut named = vec![false; self.files];
        for header in headers {
            let Some(files) = self.named.get(header) else {
                return (0..self.files).collect();
            };
            for &i in files {
                named[i] = true;
            }
        }
        (0..self.files).filter(|&i| named[i]).collect()
    }
}

/// The blob ids of the files `flagged` (both sides, those git names), each with its file.
pub fn judged_blobs(files: &[FileDiff], flagged: &[usize]) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for &i in flagged {
        let (old, new) = &files[i].ids;
        for id in [old, new].into_iter().flatten() {
            names.push(id.clone());
            owner.push(i);
        }
    }
    (names, owner)
}

/// The files of `files` (indices) that the content gate withholds from a patch: of each file
/// `flagged` (whose section may hold key material: [`Judging`]), both
/// whole sides are judged ([`crate::gate::content`]): the blobs by id, the working-tree file
/// through the confined root when `worktree` (the diff's new side) and git named no blob. A
/// blob too large to judge is withheld.
/// The blobs read go into `cache`, with those of `also` (ids the caller reads next, in the
/// same git run).
pub fn withheld_by_content(
    repo: &Path,
    files: &[FileDiff],
    flagged: &[usize],
    worktree: bool,
    cache: &mut BlobCache,
    also: &[String],
) -> Result<Vec<usize>, CapabilityError> {
    if flagged.is_empty() {
        return Ok(Vec::new());
    }
    let (mut names, owner) = judged_blobs(files, flagged);
    let mut withheld: Vec<usize> = Vec::new();
    names.extend(also.iter().cloned());
    cache.fetch(repo, &names)?;
    for (name, &i) in names.iter().zip(&owner) {
        let keyed = match cache.get(name) {
            Some(Blob::Bytes(b)) => crate::gate::content(b).is_some(),
            Some(Blob::TooLarge(_)) => true,
            Some(Blob::Missing) | None => false,
        };
        if keyed {
            withheld.push(i);
        }
    }
    if worktree {
        for &i in flagged {
            let f = &files[i];
            if f.ids.1.is_none() && f.change != "deleted" {
                let judged = crate::gate::worktree_file(repo, &f.path, &f.path, "/paths");
                if judged.is_err_and(|e| e.code == seneschal_model::codes::ErrorCode::Refused) {
                    withheld.push(i);
                }
            }
        }
    }
    withheld.sort_unstable();
    withheld.dedup();
    Ok(withheld)
}

/// `patch` with only the sections whose `diff --git` line is in `kept`: the patch of the
/// files shown, cut from the one git run that gave every file's (no second run of the whole
/// diff for the files a gate left out). `None` when a section's line is not in `known` (the
/// headers of every file of the diff: a path git quotes, a section no record claims) or text
/// stands before the first section; the caller then asks git again, naming the files shown.
/// No line of a section's body starts with `diff --git ` (hunk lines start with ` `, `+`, `-`
/// or `\`), so the sections are cut exactly where git began them.
pub fn keep_sections(
    patch: &str,
    kept: &std::collections::HashSet<String>,
    known: &std::collections::HashSet<String>,
) -> Option<String> {
    let mut starts = crate::gate::section_starts(patch.as_bytes(), 0);
    if starts.first().is_some_and(|s| *s != 0) || (starts.is_empty() && !patch.is_empty()) {
        return None;
    }
    starts.push(patch.len());
    let mut out = String::with_capacity(patch.len());
    for pair in starts.windows(2) {
        let section = &patch[pair[0]..pair[1]];
        let header = section.split('\n').next().unwrap_or_default();
        if !known.contains(header) {
            return None;
        }
        if kept.contains(header) {
            out.push_str(section);
        }
    }
    Some(out)
}

/// `patch` with the hunks of `files` taken from their whole files' redaction
/// ([`crate::gate::redacted_lines`], [`crate::gate::map_whole`]): both sides read whole (the
/// blobs by id, the working-tree file when `worktree` and git named no new blob). How many
/// lines changed, and the patch. A blob already in `cache` is not read again.
pub fn redact_by_whole_files(
    repo: &Path,
    files: &[&FileDiff],
    patch: &str,
    worktree: bool,
    cache: &mut BlobCache,
) -> Result<(String, usize), CapabilityError> {
    let names: Vec<String> = files
        .iter()
        .flat_map(|f| [f.ids.0.clone(), f.ids.1.clone()])
        .flatten()
        .collect();
    cache.fetch(repo, &names)?;
    let mut text = patch.to_string();
    let mut changed = 0;
    for f in files {
        let side = |id: &Option<String>| match id.as_deref().and_then(|id| cache.get(id)) {
            Some(Blob::Bytes(bytes)) => crate::gate::redacted_lines(bytes),
            _ => None,
        };
        let old = side(&f.ids.0);
        let mut new = side(&f.ids.1);
        if f.ids.1.is_none() && worktree && f.change != "deleted" {
            new = crate::gate::worktree_file(repo, &f.path, &f.path, "/paths")
                .ok()
                .and_then(|b| crate::gate::redacted_lines(&b));
        }
        if old.is_none() && new.is_none() {
            continue;
        }
        let (t, n) =
            crate::gate::map_whole(&text, &f.patch_header(), old.as_deref(), new.as_deref());
        text = t;
        changed += n;
    }
    Ok((text, changed))
}

/// The raw records of `git diff --raw -z` (`:modes ids status\0path\0`, a second path for a
/// rename or copy), in git's order, without line counts.
pub fn parse_raw(out: &[u8]) -> Result<Vec<FileDiff>, CapabilityError> {
    let fields = split_z(out);
    let mut it = fields.into_iter();
    let mut files: Vec<FileDiff> = Vec::new();
    while let Some(rec) = it.next() {
        let raw = rec.strip_prefix(':').ok_or_else(|| raw_error(&rec))?;
        files.push(raw_record(raw, &rec, &mut it)?);
    }
    Ok(files)
}

/// The error of a `git diff --raw -z` record that is not one.
fn raw_error(what: &str) -> CapabilityError {
    CapabilityError::internal(format!("unexpected git diff record: {what}"))
}

/// One `--raw -z` record (`raw`: `modes ids status`, without its `:`), its path and, for a
/// rename or copy, its second path taken from `fields`.
fn raw_record(
    raw: &str,
    rec: &str,
    fields: &mut impl Iterator<Item = String>,
) -> Result<FileDiff, CapabilityError> {
    let status = raw.rsplit(' ').next().unwrap_or("");
    let letter = status.bytes().next().ok_or_else(|| raw_error(rec))?;
    let first = fields
        .next()
        .ok_or_else(|| raw_error("a record without its path"))?;
    let (path, from) = if matches!(letter, b'R' | b'C') {
        let to = fields
            .next()
            .ok_or_else(|| raw_error("a rename without its target"))?;
        (to, Some(first))
    } else {
        (first, None)
    };
    let mut words = raw.split(' ');
    let side = |w: Option<&str>| {
        w.filter(|id| id.bytes().any(|b| b != b'0'))
            .map(str::to_string)
    };
    let (old, new) = (side(words.nth(2)), side(words.next()));
    Ok(FileDiff {
        path,
        from,
        change: raw_change(letter),
        additions: None,
        deletions: None,
        ids: (old, new),
    })
}

/// The files sorted by path, a path's repeated record of the same change once.
fn sorted(mut files: Vec<FileDiff>) -> Vec<FileDiff> {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path && a.change == b.change);
    files
}

/// The most bytes of file records [`diff_with_patch`] reads.
pub const DIFF_RECORDS_CAP: usize = 32 * 1024 * 1024;

/// How many bytes of a patch past its cap [`diff_with_patch`] reads on (counted, not kept)
/// for the line counts, before it stops git and counts with a second run (`--numstat`).
pub const DIFF_READ_ON_CAP: usize = 256 * 1024 * 1024;

/// How many more bytes of a patch within its cap [`diff_with_patch`] reads between two looks
/// of its caller at the patch so far (the content gate's judging, while git writes the rest).
pub const DIFF_SEEN_STEP: usize = 256 * 1024;

/// What [`run_capped_after`] does with git's output past the marker.
struct Past<'a> {
    /// Given every byte after the marker, in order, kept or not.
    feed: &'a mut dyn FnMut(&[u8]),
    /// How many bytes past the cap are read on (given to `feed`, not kept) before git is
    /// stopped; 0: stopped at the cap.
    read_on: usize,
    /// How many of the bytes read on are kept after the cap's (the answer may then pass the
    /// cap by this much).
    keep: usize,
    /// Given the bytes after the marker read so far (`false`) each time `step` more were
    /// read, while they are within the cap; then the cap's bytes once (`true`), as soon as git
    /// writes past them.
    seen: &'a mut dyn FnMut(&[u8], bool),
    /// How many bytes more are read between two calls of `seen` with `false`; 0: none.
    step: usize,
    /// Whether git and the reader are kept apart while git runs ([`Apart`]): only for a
    /// reader whose `feed` and `seen` start no thread or process.
    apart: bool,
}

/// While one git runs alone, git and the thread reading its output kept on different CPUs:
/// git on every CPU the process may use but the reader's, the reader on its own. Left to the
/// scheduler they often share one: git starts on the CPU of the thread that started it, and a
/// pipe's writer wakes its reader as about to sleep, which draws the reader to the writer's
/// CPU. git never sleeps, so a reader that parses, redacts and renders what it reads (a log's
/// commits) then takes its time from git's (`repo.log` 1,000: git ran 5 to 20 % slower under
/// seneschal than under a server that only reads it; kept apart, 1 to 2 %). Only for a reader
/// that starts no thread or process while pinned (they would inherit its one CPU), only with
/// two CPUs or more, and only when no other git run is in flight (two runs pinned apart would
/// share CPUs worse than the scheduler does: `repo.show` runs two at once). Dropped, the
/// reader's CPUs are what they were; git's end with git.
struct Apart(Option<rustix::thread::CpuSet>);

impl Apart {
    fn of(child: &std::process::Child) -> Apart {
        Apart::unless_shared(child, !Watch::alone())
    }

    /// [`Apart::of`], `shared` saying whether another git run is in flight.
    fn unless_shared(child: &std::process::Child, shared: bool) -> Apart {
        use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};
        if shared {
            return Apart(None);
        }
        let Ok(allowed) = sched_getaffinity(None) else {
            return Apart(None);
        };
        let here = sched_getcpu();
        if here >= CpuSet::MAX_CPU || !allowed.is_set(here) || allowed.count() < 2 {
            return Apart(None);
        }
        let mut others = allowed;
        others.unset(here);
        let mut mine = CpuSet::new();
        mine.set(here);
        let pinned = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|git| sched_setaffinity(Some(git), &others).is_ok())
            && sched_setaffinity(None, &mine).is_ok();
        Apart(pinned.then_some(allowed))
    }
}

impl Drop for Apart {
    fn drop(&mut self) {
        if let Some(allowed) = &self.0 {
            let _ = rustix::thread::sched_setaffinity(None, allowed);
        }
    }
}

/// The pipe git writes its answer into: the end read here, and the end given to git as its
/// stdout, widened to [`crate::limits::GIT_STDOUT_PIPE`] (or left as it is where the system
/// refuses). The thread that starts git runs again only some time after git's `exec`, often
/// behind git on its CPU; git meanwhile writes on into the wide pipe instead of waiting
/// on a full one.
fn stdout_pipe() -> std::io::Result<(std::fs::File, Stdio)> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let _ = rustix::pipe::fcntl_setpipe_size(&write, crate::limits::GIT_STDOUT_PIPE);
    Ok((std::fs::File::from(read), Stdio::from(write)))
}

/// Like [`run_capped`], with the cap counted from the end of the first `marker` (the marker
/// itself and what precedes it may take `head_cap` bytes): the bytes read (at most the cap
/// past the marker), whether git had more to say, and whether git was read to its end (it had
/// no more, or it was read on to its end: see [`Past`]). `at_marker` is given what precedes
/// the marker as soon as it is read, while git goes on.
fn run_capped_after(
    repo: &Path,
    args: &[&str],
    marker: &[u8],
    head_cap: usize,
    cap: usize,
    at_marker: &mut dyn FnMut(&[u8]),
    past: Past<'_>,
) -> Result<(Vec<u8>, bool, bool), Failure> {
    use std::io::Read;
    let started = |e: std::io::Error| Failure::exited(None, format!("git cannot be started: {e}"));
    let (mut stdout, write_end) = stdout_pipe().map_err(started)?;
    let mut child = command(repo)?
        .args(args)
        .stdout(write_end)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(started)?;
    let watch = Watch::over(&child);
    let mut stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.by_ref().take(64 * 1024).read_to_end(&mut text);
            let _ = std::io::copy(e, &mut std::io::sink());
        }
        text
    });
    // After the run's threads are started (its stderr's reader, the watchdog the first time):
    // they would inherit the reader's one CPU.
    let apart = past.apart.then(|| Apart::of(&child));
    let mut out: Vec<u8> = Vec::new();
    let mut more = false;
    let mut limit: Option<usize> = None;
    // Where the bytes after the marker begin, whether `seen` was given the cap's bytes, and
    // how many had been read when it was last given them so far.
    let mut body = 0;
    let mut capped = false;
    let mut seen_at = 0;
    // Past the cap: how many more bytes may be read on, and whether git was stopped.
    let mut read_on: Option<usize> = None;
    let mut killed = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match stdout.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(started(e)),
        };
        if let Some(left) = read_on.as_mut() {
            // Read on, not kept: only `feed` sees these bytes.
            (past.feed)(&chunk[..n]);
            *left = left.saturating_sub(n);
            if *left == 0 {
                let _ = child.kill();
                killed = true;
                break;
            }
            continue;
        }
        let from = out.len().saturating_sub(marker.len());
        let before = out.len();
        out.extend_from_slice(&chunk[..n]);
        if limit.is_none() {
            if let Some(at) = memchr::memmem::find(&out[from..], marker) {
                body = from + at + marker.len();
                limit = Some(body + cap);
                at_marker(&out[..from + at]);
                (past.feed)(&out[body..]);
            }
        } else {
            (past.feed)(&out[before..]);
        }
        if let Some(l) = limit.filter(|l| !capped && out.len() > *l) {
            capped = true;
            (past.seen)(&out[body..l], true);
        } else if let Some(l) = limit.filter(|_| !capped) {
            // Within the cap: once git writes past it, the cap's look was the last.
            if past.step > 0 && out.len() - seen_at >= past.step {
                seen_at = out.len();
                (past.seen)(&out[body..out.len().min(l)], false);
            }
        }
        let bound = limit.map_or(head_cap, |l| l + past.keep);
        if out.len() > bound {
            out.truncate(bound);
            more = true;
            if limit.is_some() && past.read_on > 0 {
                read_on = Some(past.read_on);
                continue;
            }
            let _ = child.kill();
            killed = true;
            break;
        }
    }
    drop(apart);
    let status = child.wait().map_err(started)?;
    let text = errors.join().unwrap_or_default();
    if Watch::fired(&watch) {
        return Err(stopped());
    }
    if killed || status.success() {
        Ok((out, more, !killed))
    } else {
        Err(Failure::exited(
            status.code(),
            String::from_utf8_lossy(&text).trim().to_string(),
        ))
    }
}

fn raw_change(letter: u8) -> &'static str {
    match letter {
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'T' => "type_changed",
        b'U' => "unmerged",
        _ => "modified",
    }
}

/// Parses `git diff --raw --numstat -z`: the raw records (`:modes ids status\0path\0`, a
/// second path for a rename or copy), then the numstat records (`added\tdeleted\tpath\0`, or
/// `added\tdeleted\t\0from\0to\0`; `-` counts for a binary file). A raw record without
/// numstat is a change of stat data alone, left out.
pub fn parse_raw_numstat(out: &[u8]) -> Result<Vec<FileDiff>, CapabilityError> {
    let bad = |what: &str| CapabilityError::internal(format!("unexpected git diff record: {what}"));
    let fields = split_z(out);
    let mut it = fields.into_iter();
    let mut files: Vec<FileDiff> = Vec::new();
    let mut counts: std::collections::HashMap<String, (Option<u64>, Option<u64>)> =
        Default::default();
    while let Some(rec) = it.next() {
        if let Some(raw) = rec.strip_prefix(':') {
            files.push(raw_record(raw, &rec, &mut it)?);
            continue;
        }
        let mut parts = rec.splitn(3, '\t');
        let (added, deleted, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(d), Some(p)) => (a, d, p.to_string()),
            _ => return Err(bad(&rec)),
        };
        let path = if path.is_empty() {
            // A rename: the origin, then the target, as fields of their own.
            let _from = it
                .next()
                .ok_or_else(|| bad("a rename without its origin"))?;
            it.next()
                .ok_or_else(|| bad("a rename without its target"))?
        } else {
            path
        };
        counts.insert(path, (added.parse().ok(), deleted.parse().ok()));
    }
    // A file without line counts changed in its stat data only (the index is not refreshed):
    // no change at all. Unmerged paths are kept whatever their counts.
    files.retain(|f| f.change == "unmerged" || counts.contains_key(&f.path));
    for f in &mut files {
        if let Some((a, d)) = counts.get(&f.path) {
            f.additions = *a;
            f.deletions = *d;
        }
    }
    Ok(sorted(files))
}

/// One commit's metadata and whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitDetail {
    /// The fields of [`Commit`].
    pub commit: Commit,
    /// Committer name.
    pub committer_name: String,
    /// Committer email.
    pub committer_email: String,
    /// Committer date, strict ISO 8601.
    pub committed_at: String,
    /// The whole message, up to [`MESSAGE_CAP`].
    pub message: String,
    /// Whether the message or the subject was cut at its cap.
    pub truncated: bool,
}

/// The metadata of the commit `sha` (already resolved).
pub fn commit_detail(repo: &Path, sha: &str) -> Result<CommitDetail, CapabilityError> {
    let (out, more) = run_capped(
        repo,
        &[
            "log",
            "-1",
            "--no-color",
            "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%cn%x00%ce%x00%cI%x00%B",
            sha,
            "--",
        ],
        MESSAGE_CAP + 64 * 1024,
    )
    .map_err(|f| f.into_error("the commit"))?;
    let text = String::from_utf8_lossy(&out);
    let mut f: Vec<&str> = text.splitn(10, '\0').collect();
    // Cut inside its first fields (a subject of many MiB): the fields not read are empty.
    while more && f.len() < 10 {
        f.push("");
    }
    if f.len() != 10 {
        return Err(CapabilityError::internal(
            "unexpected git log output: a record is incomplete",
        ));
    }
    // The message without the newlines git ends it (and the record) with, cut at its cap.
    let mut message = f[9].trim_end_matches('\n').to_string();
    let cut_message = cut(&mut message, MESSAGE_CAP) || more;
    let mut subject = f[5].to_string();
    let cut_subject = cut(&mut subject, SUBJECT_CAP);
    Ok(CommitDetail {
        commit: Commit {
            sha: f[0].to_string(),
            parents: f[1].split_whitespace().map(str::to_string).collect(),
            author_name: f[2].to_string(),
            author_email: f[3].to_string(),
            authored_at: f[4].to_string(),
            subject,
        },
        truncated: cut_message || cut_subject,
        committer_name: f[6].to_string(),
        committer_email: f[7].to_string(),
        committed_at: f[8].to_string(),
        message,
    })
}

/// A commit `git blame --porcelain` names, with the fields it gives the first time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlameCommit {
    /// The commit (all zeros: not committed yet).
    pub commit: String,
    /// Author name.
    pub author: String,
    /// Author email, without the angle brackets.
    pub author_email: String,
    /// Author time, seconds since the epoch.
    pub author_time: u64,
    /// The commit's subject.
    pub summary: String,
}

/// One line of `git blame --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameLine {
    /// The line number in the file blamed.
    pub line: u64,
    /// The index of the commit that last changed it in [`Blame::commits`].
    pub commit: usize,
    /// The line's text.
    pub text: String,
}

/// `git blame --porcelain`: the lines in order, and each commit once, in the order of its
/// first line (the order git gives a commit's fields in).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blame {
    /// The commits.
    pub commits: Vec<BlameCommit>,
    /// The lines.
    pub lines: Vec<BlameLine>,
}

/// `git blame --porcelain` of lines `start..=end` of `path` (already confined), in the working
/// tree or at `rev` (already resolved).
pub fn blame(
    repo: &Path,
    path: &str,
    rev: Option<&str>,
    start: u64,
    end: u64,
) -> Result<Blame, Failure> {
    let range = format!("{start},{end}");
    let mut args = vec!["blame", "--porcelain", "-L", range.as_str()];
    args.extend(rev);
    args.extend(["--", path]);
    run(repo, &args).map(|out| parse_blame(&out))
}

/// Parses `git blame --porcelain`: a header `<sha> <orig> <final> [<n>]`, the commit's fields
/// the first time the commit is met, then the line after a tab. A commit's fields are read
/// once; a line names its commit by index.
pub fn parse_blame(out: &[u8]) -> Blame {
    let mut blame = Blame::default();
    let mut index: std::collections::HashMap<&[u8], usize> = Default::default();
    // The commit and line number of the header read last, until its line.
    let mut current: Option<(usize, u64)> = None;
    for raw in out.split(|b| *b == b'\n') {
        if let Some(content) = raw.strip_prefix(b"\t") {
            if let Some((commit, line)) = current.take() {
                blame.lines.push(BlameLine {
                    line,
                    commit,
                    text: String::from_utf8_lossy(content).into_owned(),
                });
            }
            continue;
        }
        match current {
            None => {
                let mut parts = raw.split(|b| *b == b' ');
                if let (Some(sha), Some(_), Some(fin)) = (parts.next(), parts.next(), parts.next())
                {
                    let n = std::str::from_utf8(fin).ok().and_then(|f| f.parse().ok());
                    if let Some(n) = n {
                        let at = *index.entry(sha).or_insert_with(|| {
                            blame.commits.push(BlameCommit {
                                commit: String::from_utf8_lossy(sha).into_owned(),
                                ..BlameCommit::default()
                            });
                            blame.commits.len() - 1
                        });
                        current = Some((at, n));
                    }
                }
            }
            Some((at, _)) => {
                let text = String::from_utf8_lossy(raw);
                let (key, value) = text.split_once(' ').unwrap_or((&text, ""));
                let c = &mut blame.commits[at];
                match key {
                    "author" => c.author = value.to_string(),
                    "author-mail" => {
                        c.author_email = value.trim_start_matches('<').trim_end_matches('>').into()
                    }
                    "author-time" => c.author_time = value.parse().unwrap_or(0),
                    "summary" => c.summary = value.to_string(),
                    _ => {}
                }
            }
        }
    }
    blame
}

/// One branch of `git for-each-ref`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// Short name.
    pub name: String,
    /// True for `refs/remotes/`.
    pub remote: bool,
    /// Its commit.
    pub head: String,
    /// That commit's subject.
    pub subject: String,
    /// HEAD is on it.
    pub current: bool,
    /// Its upstream (short name).
    pub upstream: Option<String>,
    /// Ahead of the upstream.
    pub ahead: Option<u64>,
    /// Behind the upstream.
    pub behind: Option<u64>,
}

/// The local branches, and the remote-tracking ones with `remote`, sorted by full ref name
/// (local first); symbolic refs (`origin/HEAD`) left out.
pub fn branches(repo: &Path, remote: bool) -> Result<Vec<Branch>, CapabilityError> {
    let mut args = vec![
        "for-each-ref",
        "--format=%(refname)%00%(refname:short)%00%(objectname)%00%(HEAD)%00%(symref)%00%(upstream:short)%00%(upstream:track,nobracket)%00%(contents:subject)",
        "refs/heads/",
    ];
    if remote {
        args.push("refs/remotes/");
    }
    let out = output(repo, &args, "the branches")?;
    Ok(parse_branches(&out))
}

/// Parses [`branches`]' format, one ref a line.
pub fn parse_branches(out: &[u8]) -> Vec<Branch> {
    let text = String::from_utf8_lossy(out);
    let mut list = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(8, '\0').collect();
        if f.len() != 8 || !f[4].is_empty() {
            continue;
        }
        let upstream = Some(f[5].to_string()).filter(|u| !u.is_empty());
        let (mut ahead, mut behind) = (None, None);
        if upstream.is_some() && f[6] != "gone" {
            ahead = Some(0);
            behind = Some(0);
            for part in f[6].split(", ") {
                if let Some(n) = part.strip_prefix("ahead ") {
                    ahead = n.parse().ok();
                } else if let Some(n) = part.strip_prefix("behind ") {
                    behind = n.parse().ok();
                }
            }
        }
        list.push(Branch {
            name: f[1].to_string(),
            remote: f[0].starts_with("refs/remotes/"),
            head: f[2].to_string(),
            subject: f[7].to_string(),
            current: f[3] == "*",
            upstream,
            ahead,
            behind,
        });
    }
    list
}

// ---------------------------------------------------------------------------------------------
// Runs with extra environment and input, for the git writes (core/src/gitwrite.rs).

/// Runs git with `args` and the extra environment `env` (a temporary index, an object folder,
/// an identity), feeding `input` to its stdin: stdout on success. Watched like [`run`], and
/// failing past [`RUN_CAP`] bytes of answer.
pub fn run_with(
    repo: &Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    input: &[u8],
) -> Result<Vec<u8>, Failure> {
    use std::io::{Read, Write};
    let started = |e: std::io::Error| Failure::exited(None, format!("git cannot be started: {e}"));
    let mut cmd = command(repo)?;
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(started)?;
    let watch = Watch::over(&child);
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.by_ref().take(64 * 1024).read_to_end(&mut text);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        text
    });
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .expect("piped")
        .take(RUN_CAP as u64 + 1)
        .read_to_end(&mut out);
    if out.len() > RUN_CAP {
        let _ = child.kill();
    }
    let status = child.wait().map_err(started)?;
    let _ = feeder.join();
    let text = errors.join().unwrap_or_default();
    if Watch::fired(&watch) {
        return Err(stopped());
    }
    read.map_err(started)?;
    if out.len() > RUN_CAP {
        return Err(Failure::exited(
            None,
            format!("git's answer is larger than {RUN_CAP} bytes"),
        ));
    }
    if status.success() {
        Ok(out)
    } else {
        Err(Failure::exited(
            status.code(),
            String::from_utf8_lossy(&text).trim().to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_dates_are_iso_8601_and_read_exactly_by_git() {
        use super::log_date;
        let d = |t: &str, end: bool| log_date(t, end);
        assert_eq!(d("2024-05-01", false).unwrap(), "2024-05-01 00:00:00 +0000");
        assert_eq!(d("2024-05-01", true).unwrap(), "2024-05-01 23:59:59 +0000");
        assert_eq!(d("2024-02-29", true).unwrap(), "2024-02-29 23:59:59 +0000");
        assert_eq!(
            d("2024-05-01T12:30:05Z", true).unwrap(),
            "2024-05-01 12:30:05 +0000"
        );
        assert_eq!(
            d("2024-05-01 12:30", false).unwrap(),
            "2024-05-01 12:30:00 +0000"
        );
        assert_eq!(
            d("2024-05-01T12:30:05.123-05:30", false).unwrap(),
            "2024-05-01 12:30:05 -0530"
        );
        assert_eq!(
            d("2024-05-01T12:30:05+0200", false).unwrap(),
            "2024-05-01 12:30:05 +0200"
        );
        for bad in [
            "yesterday",
            "2024-5-01",
            "2023-02-29",
            "2024-13-01",
            "2024-04-31",
            "2024-05-01T24:00",
            "2024-05-01T12:60",
            "2024-05-01T12:30:05.",
            "2024-05-01T12:30:05+2",
            "2024-05-01T12:30:05+15:00",
            "2024-05-01T12:30:05 +0200",
            "2024-05-01x",
            "1969-12-31",
            "--since=2024",
            "２０２４-05-01",
        ] {
            assert_eq!(d(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn relative_dates_are_read_against_now_in_utc() {
        use super::log_date_at;
        // 2026-03-31T10:20:30Z.
        let now = 1_774_952_430;
        assert_eq!(crate::text::rfc3339(now), "2026-03-31T10:20:30Z");
        let d = |t: &str, end: bool| log_date_at(t, end, now);
        let cases = [
            ("now", false, "2026-03-31 10:20:30 +0000"),
            ("today", false, "2026-03-31 00:00:00 +0000"),
            ("today", true, "2026-03-31 23:59:59 +0000"),
            ("yesterday", false, "2026-03-30 00:00:00 +0000"),
            (" Yesterday ", true, "2026-03-30 23:59:59 +0000"),
            ("30 seconds ago", false, "2026-03-31 10:20:00 +0000"),
            ("1 minute ago", false, "2026-03-31 10:19:30 +0000"),
            ("an hour ago", true, "2026-03-31 09:20:30 +0000"),
            ("3 days ago", false, "2026-03-28 10:20:30 +0000"),
            ("2 weeks ago", false, "2026-03-17 10:20:30 +0000"),
            ("2.weeks.ago", false, "2026-03-17 10:20:30 +0000"),
            ("2  Weeks  AGO", false, "2026-03-17 10:20:30 +0000"),
            ("a week ago", false, "2026-03-24 10:20:30 +0000"),
            // A calendar month back from the 31st lands on February's last day.
            ("1 month ago", false, "2026-02-28 10:20:30 +0000"),
            ("13 months ago", false, "2025-02-28 10:20:30 +0000"),
            ("2 years ago", false, "2024-03-31 10:20:30 +0000"),
            ("100 years ago", false, "1970-01-01 00:00:00 +0000"),
            (
                "99999999999999 days ago",
                false,
                "1970-01-01 00:00:00 +0000",
            ),
            (
                "99999999999999999 years ago",
                false,
                "1970-01-01 00:00:00 +0000",
            ),
            ("2026-12-01", false, "2026-12-01 00:00:00 +0000"),
            ("2026-12-01T10:00:00Z", false, "2026-12-01 10:00:00 +0000"),
        ];
        for (text, end, expected) in cases {
            assert_eq!(d(text, end).as_deref(), Some(expected), "{text:?} {end}");
        }
        let leap = 1_709_208_000; // 2024-02-29T12:00:00Z
        assert_eq!(
            log_date_at("1 year ago", false, leap).as_deref(),
            Some("2023-02-28 12:00:00 +0000")
        );
        for bad in [
            "",
            "yesterday-ish",
            "2 weeks",
            "weeks ago",
            "-2 weeks ago",
            "2 fortnights ago",
            "2 weeks from now",
            "tomorrow",
            "1.5 days ago",
            "2 wks ago",
            "last week",
            "99999999999999999999 days ago",
            "２ days ago",
        ] {
            assert_eq!(d(bad, false), None, "{bad:?}");
        }
    }

    #[test]
    fn a_resolver_answer_is_a_commit_a_miss_or_out_of_step() {
        use super::batch_answer;
        let id = "0123456789abcdef0123456789abcdef01234567";
        let commit = format!("{id} commit");
        assert_eq!(
            batch_answer("HEAD^{commit}", &commit).unwrap(),
            Some(id.to_string())
        );
        assert_eq!(
            batch_answer("x^{commit}", "x^{commit} missing").unwrap(),
            None
        );
        assert_eq!(
            batch_answer("ab^{commit}", "ab^{commit} ambiguous").unwrap(),
            None
        );
        // A name that ends like a verdict is still read as a name.
        assert_eq!(
            batch_answer("a missing^{commit}", "a missing^{commit} missing").unwrap(),
            None
        );
        // Anything else means the resolver answers another question: it is stopped.
        for wrong in [
            format!("{id} tree"),
            "HEAD^{commit} missing".to_string(),
            format!("{} commit", &id[..39]),
            String::new(),
        ] {
            assert!(batch_answer("other^{commit}", &wrong).is_err(), "{wrong}");
        }
    }

    use super::*;

    /// A reader kept apart from its git runs on the one CPU it was on, git on every other it
    /// may use; dropped, the reader has its CPUs back. Not when another run is in flight, nor
    /// with one CPU. Fails when the reader is not given its CPUs back, or is never pinned.
    #[test]
    fn a_reader_kept_apart_from_git_gets_its_cpus_back() {
        use rustix::process::Pid;
        use rustix::thread::sched_getaffinity;
        let before = sched_getaffinity(None).unwrap();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        let apart = Apart::unless_shared(&child, false);
        let (mine, git) = (
            sched_getaffinity(None).unwrap(),
            sched_getaffinity(Some(pid)).unwrap(),
        );
        if before.count() >= 2 {
            assert!(apart.0.is_some());
            assert_eq!(mine.count(), 1);
            assert_eq!(git.count(), before.count() - 1);
            assert!((0..rustix::thread::CpuSet::MAX_CPU)
                .all(|c| before.is_set(c) == (mine.is_set(c) || git.is_set(c))
                    && !(mine.is_set(c) && git.is_set(c))));
        } else {
            assert!(apart.0.is_none());
            assert_eq!(
                (mine.count(), git.count()),
                (before.count(), before.count())
            );
        }
        drop(apart);
        assert!(sched_getaffinity(None).unwrap() == before);
        let shared = Apart::unless_shared(&child, true);
        assert!(shared.0.is_none());
        assert!(sched_getaffinity(None).unwrap() == before);
        // Two runs watched: neither is alone (other tests' runs may add to them).
        let mut other = Command::new("sleep").arg("30").spawn().unwrap();
        let watches = (Watch::over(&child), Watch::over(&other));
        if watches.0.is_some() && watches.1.is_some() {
            assert!(!Watch::alone());
        }
        drop(watches);
        for c in [&mut child, &mut other] {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The second round's answers are checked against the first's: a blob gone between them
    /// is missing, an answer out of step (another size, no newline after the bytes) is an
    /// error, never bytes read across two answers.
    #[test]
    fn batch_answers_hold_to_the_first_round() {
        let id = "a".repeat(40);
        let answers = |text: &str| {
            let (tx, rx) = std::sync::mpsc::channel();
            let read = batch_answers(text.as_bytes(), &[id.clone(), id.clone()], 10, &tx);
            (read, rx.recv().unwrap())
        };
        let (read, asked) = answers(&format!("{id} blob 3\n{id} tree 5\n{id} blob 3\nabc\n"));
        assert_eq!(asked, std::slice::from_ref(&id));
        assert_eq!(read.unwrap(), [Blob::Bytes(b"abc".to_vec()), Blob::Missing]);
        let (read, _) = answers(&format!("{id} blob 3\n{id} blob 30\n{id} missing\n"));
        assert_eq!(read.unwrap(), [Blob::Missing, Blob::TooLarge(30)]);
        for bad in [
            format!("{id} blob 3\n{id} missing\n{id} blob 4\nabcd\n"),
            format!("{id} blob 3\n{id} missing\n{id} blob 3\nabcd\n"),
            format!("{id} blob 3\n{id} missing\n{id} blob 3\nab"),
        ] {
            assert!(answers(&bad).0.is_err(), "{bad:?}");
        }
    }

    /// The sections of the files kept are cut from the patch as git wrote them; a section no
    /// file claims, or text before the first, asks for git again.
    #[test]
    fn sections_are_kept_by_their_header_alone() {
        let patch = "diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+diff --git a/k b/k\n\
                     diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-S=1\n+S=2\n\
                     diff --git a/c b/d\nsimilarity index 90%\nrename from c\nrename to d\n";
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        let known = set(&[
            "diff --git a/a b/a",
            "diff --git a/.env b/.env",
            "diff --git a/c b/d",
        ]);
        let kept = set(&["diff --git a/a b/a", "diff --git a/c b/d"]);
        let cut = keep_sections(patch, &kept, &known).unwrap();
        assert!(!cut.contains("S=") && !cut.contains(".env"), "{cut}");
        assert!(
            cut.contains("+diff --git a/k b/k\n") && cut.contains("rename to d\n"),
            "{cut}"
        );
        assert_eq!(
            cut.len(),
            patch.len()
                - patch
                    .find("diff --git a/.env")
                    .map(|s| { patch[s..].find("diff --git a/c").unwrap() })
                    .unwrap()
        );
        let fewer = set(&["diff --git a/a b/a", "diff --git a/c b/d"]);
        assert_eq!(keep_sections(patch, &kept, &fewer), None);
        assert_eq!(
            keep_sections(&format!("junk\n{patch}"), &kept, &known),
            None
        );
        assert_eq!(keep_sections("", &kept, &known).as_deref(), Some(""));
    }

    /// One batched run answers every name in its order, whatever the mix: blobs under and
    /// over the cap, names of no blob, a name with a newline, and more requests and answers
    /// than a pipe holds (the requests are written beside the reads, so neither side stalls);
    /// the cache reads a name once.
    #[test]
    fn blobs_are_read_in_one_batch_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        let mut init = init_command(root);
        init.env("GIT_DIR", root.join(".git")).args(["init", "-q"]);
        assert!(init.output().unwrap().status.success());
        let hash = |bytes: &[u8]| {
            let mut c = command(root).unwrap();
            c.args(["hash-object", "-w", "--stdin"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped());
            let mut child = c.spawn().unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes).unwrap();
            let out = child.wait_with_output().unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        let small = hash(b"small\n");
        let large = hash(&vec![b'x'; 200_000]);
        let mut names = Vec::new();
        for i in 0..3000 {
            names.push(match i % 4 {
                0 => small.clone(),
                1 => large.clone(),
                2 => format!("{:040x}", i),
                _ => format!("{small}\ninfo {large}"),
            });
        }
        let found = blobs(root, &names, 100_000).unwrap();
        assert_eq!(found.len(), names.len());
        for (i, b) in found.iter().enumerate() {
            let want = match i % 4 {
                0 => Blob::Bytes(b"small\n".to_vec()),
                1 => Blob::TooLarge(200_000),
                _ => Blob::Missing,
            };
            assert_eq!(*b, want, "name {i}");
        }
        // Names git would read otherwise than written, or not at all: missing, never another
        // object (a trailing carriage return is dropped by git's line reader).
        let odd = [
            String::new(),
            format!("{small}\r"),
            format!("{small}\0"),
            "4b825dc642cb6eb9a060e54bf8d69288fbe4904c".to_string(),
        ];
        let found = blobs(root, &odd, 100_000).unwrap();
        assert!(found.iter().all(|b| *b == Blob::Missing), "{found:?}");
        let everything = blobs(root, &[large.clone(), small.clone()], u64::MAX).unwrap();
        assert_eq!(everything[0], Blob::Bytes(vec![b'x'; 200_000]));
        let mut cache = BlobCache::default();
        cache.fetch(root, &[small.clone(), small.clone()]).unwrap();
        assert_eq!(cache.read.len(), 1);
        assert_eq!(cache.get(&small), Some(&Blob::Bytes(b"small\n".to_vec())));
    }

    /// On a repository with every kind of change the counts read from the patch are those of
    /// `--numstat`, file by file (a touched file, changed in its stat data alone, is in
    /// neither); a path git would quote, a cut patch or a stray section asks for `--numstat`.
    /// The content gate's judging of a patch as former releases did it, whole at once: each
    /// section that may hold key material flags the files its header names, or every file
    /// when it names none. Kept as the reference [`Judging`] answers to.
    fn judged_whole(files: &[FileDiff], patch: &[u8]) -> Vec<usize> {
        let mut flagged: Vec<usize> = Vec::new();
        let mut starts: Vec<usize> = memchr::memmem::find_iter(patch, b"diff --git ")
            .filter(|at| *at == 0 || patch[at - 1] == b'\n')
            .collect();
        starts.push(patch.len());
        for pair in starts.windows(2) {
            let section = &patch[pair[0]..pair[1]];
            if !crate::gate::fragment_may_hold_key(section) {
                continue;
            }
            let header = section.split(|b| *b == b'\n').next().unwrap_or_default();
            let claimed: Vec<usize> = (0..files.len())
                .filter(|&i| header == files[i].patch_header().as_bytes())
                .collect();
            if claimed.is_empty() {
                flagged = (0..files.len()).collect();
                break;
            }
            flagged.extend(claimed);
        }
        flagged.sort_unstable();
        flagged.dedup();
        flagged
    }

    #[test]
    fn a_header_names_every_file_that_has_it_and_an_unknown_one_every_file() {
        let renamed = |from: &str, to: &str| FileDiff {
            path: to.into(),
            from: Some(from.into()),
            change: "renamed",
            additions: Some(0),
            deletions: Some(0),
            ids: (None, None),
        };
        // `p` to `q b/r` and `p b/q` to `r` share the line `diff --git a/p b/q b/r`.
        let files = [
            renamed("p", "q b/r"),
            renamed("p b/q", "r"),
            renamed("x", "y"),
        ];
        let headers = Headers::of(&files);
        let line = |s: &str| s.as_bytes().to_vec();
        assert_eq!(headers.files_of(&[line("diff --git a/p b/q b/r")]), [0, 1]);
        assert_eq!(headers.files_of(&[line("diff --git a/x b/y")]), [2]);
        assert_eq!(
            headers.files_of(&[line("diff --git a/x b/y"), line("diff --git \"a/\\t\" b/t")]),
            [0, 1, 2]
        );
        assert!(headers.files_of(&[]).is_empty());
    }

    #[test]
    fn judging_in_pieces_flags_what_judging_whole_does() {
        let file = |path: &str| FileDiff {
            path: path.into(),
            from: None,
            change: "modified",
            additions: Some(1),
            deletions: Some(1),
            ids: (Some(format!("{path}-old")), Some(format!("{path}-new"))),
        };
        let files = [file("a.txt"), file("b.pem"), file("c.rs"), file("d.md")];
        let section = |path: &str, lines: &[&str]| {
            let mut s = format!("diff --git a/{path} b/{path}\nindex 1..2 100644\n--- a/{path}\n+++ b/{path}\n@@ -1,9 +1,9 @@\n");
            for l in lines {
                s.push_str(l);
                s.push('\n');
            }
            s
        };
        // A key line late in a long section (a look at the section before it arrives finds
        // nothing), an armour line, a quiet section, a header no file has.
        let key = "+MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let quiet = [" fn main() {", "-    old();", "+    new();", " }"];
        let late: Vec<&str> = quiet.iter().copied().chain(quiet).chain([key]).collect();
        let patches = [
            [
                section("a.txt", &quiet),
                section("b.pem", &late),
                section("c.rs", &quiet),
            ]
            .concat(),
            [
                section("a.txt", &["+-----BEGIN PRIVATE KEY-----"]),
                section("d.md", &quiet),
            ]
            .concat(),
            [
                section("c.rs", &quiet),
                section("zz", &[key]),
                section("d.md", &late),
            ]
            .concat(),
            [section("d.md", &late), section("a.txt", &quiet)].concat(),
            section("c.rs", &quiet),
        ];
        for patch in &patches {
            let patch = patch.as_bytes();
            let whole = judged_whole(&files, patch);
            let mut at_once = Judging::default();
            at_once.rest(patch);
            assert_eq!(at_once.flagged(&files), whole);
            for step in 1..patch.len() {
                let mut judging = Judging::default();
                let mut at = step;
                while at < patch.len() {
                    judging.whole_sections(&patch[..at]);
                    at += step;
                }
                judging.rest(patch);
                assert_eq!(judging.flagged(&files), whole, "step {step}");
            }
        }
        // The headers each look returns name the files flagged by then, once.
        let patch = patches[0].as_bytes();
        let mut judging = Judging::default();
        let cut = patch.len() - 10;
        assert!(judging
            .whole_sections(&patch[..cut])
            .iter()
            .any(|h| h.ends_with(b"b.pem")));
        assert!(judging.rest(patch).is_empty());
    }

    #[test]
    fn counts_from_the_patch_are_those_of_numstat() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        let git = |args: &[&str]| {
            let mut cmd = match args.first() {
                // `init` fills the empty .git folder; every later run is pinned to it.
                Some(&"init") => {
                    let mut c = init_command(root);
                    c.env("GIT_DIR", root.join(".git"));
                    c
                }
                _ => command(root).unwrap(),
            };
            let out = cmd
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            out.stdout
        };
        git(&["init", "-q"]);
        let write = |p: &str, b: &[u8]| std::fs::write(root.join(p), b).unwrap();
        write("keep", b"a\nb\nc\n");
        write("edit", b"one\ntwo\nthree\nfour\n");
        write("gone", b"x\ny\n");
        write("moved", &b"long enough line to be found again\n".repeat(20));
        write("bin", b"a\0b");
        write("mode", b"m\n");
        write("touched", b"t\n");
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        write("edit", b"one\n-- two\nthree\n+ more\nfour\n");
        std::fs::remove_file(root.join("gone")).unwrap();
        std::fs::rename(root.join("moved"), root.join("renamed")).unwrap();
        write("bin", b"a\0c");
        write("new", b"n\n\n");
        write("empty", b"");
        let mut perm = std::fs::metadata(root.join("mode")).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(root.join("mode"), perm).unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "two"]);
        write("keep", b"a\nB\nc\nd\n");
        write("touched", b"u\n");
        git(&["add", "touched"]);
        write("touched", b"t\n");
        // A file whose stat data alone changed: a raw record, no line counts, no section.
        std::fs::File::options()
            .append(true)
            .open(root.join("mode"))
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30))
            .unwrap();
        let specs = [
            DiffSpec::default(),
            DiffSpec {
                cached: true,
                ..DiffSpec::default()
            },
            DiffSpec {
                from: Some(
                    String::from_utf8(git(&["rev-parse", "HEAD~1"]))
                        .unwrap()
                        .trim()
                        .into(),
                ),
                to: Some(
                    String::from_utf8(git(&["rev-parse", "HEAD"]))
                        .unwrap()
                        .trim()
                        .into(),
                ),
                ..DiffSpec::default()
            },
        ];
        for spec in specs {
            let numstat = diff_files(root, &spec, &[]).unwrap();
            let mut args = spec.args(&["--raw", "-z", "--patch", "--unified=1"]);
            args.push("--".into());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = git(&args);
            let at = memchr::memmem::find(&out, b"\0\0").unwrap();
            let raw = parse_raw(&out[..at + 1]).unwrap();
            let patch = &out[at + 2..];
            let counted = sorted(counts_from_patch(raw.clone(), patch).unwrap());
            assert_eq!(counted, numstat, "{spec:?}");
            // Read in pieces of any size (a line, a header cut anywhere): the same counts.
            for size in [1, 2, 3, 5, 11, 12, 64, 4096] {
                let mut counter = PatchCounter::default();
                patch.chunks(size).for_each(|piece| counter.feed(piece));
                let pieces = counter.files(raw.clone()).map(sorted);
                assert_eq!(
                    pieces.as_ref(),
                    Some(&counted),
                    "{spec:?} in pieces of {size}"
                );
            }
            if spec == DiffSpec::default() {
                assert!(raw.iter().any(|f| f.path == "mode"), "{raw:?}");
                assert!(!numstat.iter().any(|f| f.path == "mode"), "{numstat:?}");
            }
            assert!(!numstat.is_empty());
            // What cannot be told for sure is counted by numstat.
            let mut quoted = raw.clone();
            quoted[0].path = "tab\there".into();
            assert_eq!(counts_from_patch(quoted, patch), None);
            let stray = [patch, b"diff --git a/zz b/zz\n"].concat();
            assert_eq!(counts_from_patch(raw, &stray), None);
        }
        // Through the one run: the same files as numstat's.
        let (files, _, cut) = diff_with_patch(
            root,
            &DiffSpec::default(),
            &[],
            3,
            1 << 20,
            0,
            &mut |_| {},
            &mut |_, _| {},
        )
        .map(|(files, patch)| (files, patch.shown, patch.truncated))
        .unwrap();
        assert!(!cut);
        assert_eq!(files, diff_files(root, &DiffSpec::default(), &[]).unwrap());
        // A patch cut at its cap is read on and counted: one git run, the counts numstat's.
        let last = specs_last(root);
        let before = RUNS.with(std::cell::Cell::get);
        let (files, patch) =
            diff_with_patch(root, &last, &[], 3, 1, 0, &mut |_| {}, &mut |_, _| {}).unwrap();
        let cut = patch.truncated;
        assert_eq!(RUNS.with(std::cell::Cell::get) - before, 1, "one git run");
        assert!(cut);
        assert_eq!(files, diff_files(root, &last, &[]).unwrap());
    }

    thread_local! {
        /// The git commands this thread built ([`command`]).
        pub(super) static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn specs_last(root: &Path) -> DiffSpec {
        let id = |r: &str| resolve_commit(root, r, "/r").unwrap();
        DiffSpec {
            from: Some(id("HEAD~1")),
            to: Some(id("HEAD")),
            ..DiffSpec::default()
        }
    }

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
        let c = log_read_whole(out, false).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].parents, vec!["p1", "p2"]);
        assert_eq!(c[1].sha, "def");
        assert!(c[1].parents.is_empty());
        assert!(log_read_whole(b"abc\0p\0", false).is_err());
    }

    /// The records of a whole answer read at once, `more` when it was cut: the reference
    /// [`LogRecords`] is held to.
    fn log_read_whole(out: &[u8], more: bool) -> Result<Vec<Commit>, CapabilityError> {
        let mut fields = split_z(out);
        if more {
            let whole = fields.len().saturating_sub(1) / LOG_FIELDS;
            fields.truncate(if whole == 0 {
                LOG_FIELDS
            } else {
                whole * LOG_FIELDS
            });
        }
        parse_fields(fields)
    }

    #[test]
    fn log_records_fed_in_pieces_answer_as_the_whole() {
        let answers: [&[u8]; 4] = [
            b"abc\0p1 p2\0Ann\0a@x\x002026-01-01T00:00:00+00:00\0subject one\0\ndef\0\0Bob\0b@x\x002026-01-02T00:00:00+00:00\0\0ghi\0abc\0C\xffd\0c@x\0t\0three\0",
            // The last record without its terminator, then one field short.
            b"abc\0\0A\0a@x\0t\0one\0def\0abc\0B\0b@x\0t\0two",
            b"abc\0\0A\0a@x\0t\0one\0def\0abc\0B\0",
            b"",
        ];
        for out in answers {
            for cap in 0..=out.len() + 1 {
                let more = out.len() > cap;
                let kept = &out[..out.len().min(cap)];
                let reference = log_read_whole(kept, more);
                for piece in [1, 2, 3, 5, 7, 13, 64] {
                    let mut records = LogRecords::new(cap);
                    let mut given = Vec::new();
                    for p in out.chunks(piece) {
                        records.feed(p, &mut |c| given.push(c));
                    }
                    let answer = records.finish(more, &mut |c| given.push(c)).map(|()| given);
                    match (&answer, &reference) {
                        (Ok(a), Ok(r)) => assert_eq!(a, r, "cap {cap}, pieces of {piece}"),
                        (Err(_), Err(_)) => {}
                        _ => {
                            panic!("cap {cap}, pieces of {piece}: {answer:?} against {reference:?}")
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn raw_and_numstat_records_are_joined() {
        let out = b":100644 100644 aaa bbb M\0a.txt\0:100644 100644 ccc ccc M\0stat-only.txt\0\
:100644 100644 ddd eee R087\0old name.txt\0new name.txt\0:000000 100644 000 fff A\0img.png\0\
2\t1\ta.txt\0\
0\t3\t\0old name.txt\0new name.txt\0\
-\t-\timg.png\0";
        let f = parse_raw_numstat(out).unwrap();
        let paths: Vec<&str> = f.iter().map(|f| f.path.as_str()).collect();
        // The stat-only record has no numstat: no change.
        assert_eq!(paths, ["a.txt", "img.png", "new name.txt"]);
        assert_eq!((f[0].additions, f[0].deletions), (Some(2), Some(1)));
        assert_eq!((f[1].change, f[1].additions), ("added", None));
        assert_eq!(f[2].change, "renamed");
        assert_eq!(f[2].from.as_deref(), Some("old name.txt"));
        assert_eq!(f[2].deletions, Some(3));
        assert!(parse_raw_numstat(b":100644 100644 a b R100\0only-one\0").is_err());
    }

    #[test]
    fn blame_porcelain_repeats_commit_fields_from_the_first_line() {
        let out =
            b"abc 1 1 2\nauthor Ann\nauthor-mail <ann@x>\nauthor-time 86400\nauthor-tz +0000\n\
summary first\nfilename f\n\tone\nabc 2 2\n\ttwo\ndef 3 3 1\nauthor Bob\nauthor-mail <bob@x>\n\
author-time 0\nsummary second\nfilename f\n\t\tindented\nabc 4 4 1\n\tfour\n";
        let b = parse_blame(out);
        let lines: Vec<(u64, usize, &str)> = b
            .lines
            .iter()
            .map(|l| (l.line, l.commit, l.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (1, 0, "one"),
                (2, 0, "two"),
                (3, 1, "\tindented"),
                (4, 0, "four")
            ]
        );
        assert_eq!(
            b.commits.len(),
            2,
            "each commit once, in the order of its first line"
        );
        assert_eq!(
            (b.commits[0].commit.as_str(), b.commits[0].author.as_str()),
            ("abc", "Ann")
        );
        assert_eq!(b.commits[0].author_time, 86400);
        assert_eq!(b.commits[0].summary, "first");
        assert_eq!(b.commits[1].author_email, "bob@x");
    }

    #[test]
    fn branch_records_carry_upstream_and_counts() {
        let out = b"refs/heads/main\0main\0aaa\0*\0\0origin/main\0ahead 2, behind 1\0subject one\n\
refs/heads/gone\0gone\0bbb\0 \0\0origin/gone\0gone\0two\n\
refs/remotes/origin/HEAD\0origin\0aaa\0 \0refs/remotes/origin/main\0\0\0s\n\
refs/remotes/origin/main\0origin/main\0ccc\0 \0\0\0\0three\n";
        let b = parse_branches(out);
        assert_eq!(b.len(), 3, "the symbolic origin/HEAD is left out");
        assert!(b[0].current && !b[0].remote);
        assert_eq!((b[0].ahead, b[0].behind), (Some(2), Some(1)));
        assert_eq!((b[1].ahead, b[1].behind), (None, None));
        assert!(b[2].remote && b[2].upstream.is_none());
    }

    #[test]
    fn revisions_that_look_like_options_are_refused() {
        for bad in ["--output=/tmp/x", "-p", "a\nb"] {
            assert_eq!(
                check_revision(bad, "/rev").unwrap_err().code.as_str(),
                "invalid_input",
                "{bad}"
            );
        }
        check_revision("HEAD~2", "/rev").unwrap();
        check_revision("v1.0^{commit}", "/rev").unwrap();
    }
}
