//! Handlers of the `files.*` group: confined reading and searching of repository files.
//!
//! Both open every file through the confined root ([`seneschal_access::rootfs::Root`]) and read it through
//! the handle it was checked on: `files.read` refuses a path that breaks a rule
//! ([`seneschal_access::confine`]), and `files.search` never enters `.git`, never opens a secret-bearing
//! file and never follows a symbolic link. Text leaves through [`seneschal_access::redact`]; the search
//! matches the redacted text. The search walks the tree with ripgrep's `ignore` crate (so
//! `.gitignore`, `.ignore` and `.git/info/exclude` are honoured) on every core, and matches with
//! ripgrep's `grep-searcher` and `grep-regex`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use grep_matcher::Matcher;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};

use crate::context::Call;
use crate::registry::types::{files_read, files_search};
use seneschal_access::confine::{self, refusal, Rule};
use seneschal_access::error::CapabilityError;
use seneschal_access::gate;
use seneschal_access::redact::{redact, redact_lines, redact_lines_where};
use seneschal_access::rootfs::{Denied, Follow, Root};

pub use seneschal_access::limits::{CONTENT_CAP, FILE_CAP, LINE_CAP};
/// How far into a file a NUL byte makes it binary (as git and ripgrep do).
pub const BINARY_PROBE: usize = 8 * 1024;
/// How far past a cut text is kept for redaction, so that a secret straddling the cut is
/// still seen whole (and redacted) before the text is cut.
const REDACT_MARGIN: usize = 512;

/// Redacts `text` seen up to `max + REDACT_MARGIN` bytes, then cuts it to `max`.
fn redact_cut(text: &str, max: usize) -> (String, usize) {
    let (red, n) = redact(cut(text, max + REDACT_MARGIN));
    (cut(&red, max).to_string(), n)
}

/// Cuts `s` to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The repository root, held open for one call.
fn open_root(ctx: &Call) -> Result<Root, CapabilityError> {
    Root::open(&ctx.repo).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })
}

/// One file read: the fields of a single-path `files.read` answer.
struct Window {
    path: String,
    size: u64,
    binary: bool,
    content: Option<String>,
    lines: u64,
    total_lines: Option<u64>,
    truncated: bool,
    next_offset: Option<std::num::NonZeroU64>,
    redactions: u64,
    digest: String,
}

/// The working-tree file at `path` read whole through the confined root, and its confined
/// path; the content gate has passed it.
fn worktree_bytes(
    root: &Root,
    path: &str,
    field: &str,
) -> Result<(String, Vec<u8>), CapabilityError> {
    let rel = confine::lexical_relative(path, field)?;
    let mut bytes = Vec::new();
    root.open_file(&rel, Follow::Inside)
        .and_then(|mut file| file.read_capped(FILE_CAP, &mut bytes))
        .map_err(|denied| match denied {
            Denied::Refused(rule, why) => refusal(rule, path, &why, field),
            Denied::NotFound => {
                CapabilityError::not_found(format!("`{path}` does not exist")).at(field)
            }
            Denied::IsDir => CapabilityError::invalid_input(format!(
                "`{path}` is a directory; files.find, files.list or files.search list files"
            ))
            .at(field),
            other => CapabilityError::not_found(format!("`{path}` {other}")).at(field),
        })?;
    Ok((rel, gate::checked(bytes, path, field)?))
}

/// One path's read: its confined path and its whole bytes, or the error that refused it.
type Read = Result<(String, Vec<u8>), CapabilityError>;

/// The files `paths` (each with the field that names it) as they are in `commit`, read
/// through one git run: each confined by its text (no `..`, no absolute path), refused by
/// name as the working-tree read refuses it (`.git`, secret-bearing names), then by its blob's
/// content (the content gate), over [`FILE_CAP`] by size; `not_found` when the commit has no
/// such file.
fn blob_bytes(
    repo: &Path,
    commit: &str,
    paths: &[(&str, String)],
) -> Result<Vec<Read>, CapabilityError> {
    let mut out: Vec<Read> = Vec::new();
    let mut names = Vec::new();
    for (path, field) in paths {
        let checked =
            confine::lexical_relative(path, field).and_then(|rel| match gate::name(&rel) {
                Some(rule) => Err(refusal(rule, path, gate::why(rule), field)),
                None if rel.is_empty() => Err(CapabilityError::invalid_input(
                    "the repository root is a folder, not a file",
                )
                .at(field.as_str())),
                None => Ok(rel),
            });
        if let Ok(rel) = &checked {
            names.push(format!("{commit}:{rel}"));
        }
        out.push(checked.map(|rel| (rel, Vec::new())));
    }
    let mut blobs = seneschal_access::git::blobs(repo, &names, FILE_CAP)?.into_iter();
    for ((path, field), slot) in paths.iter().zip(out.iter_mut()) {
        let Ok((rel, _)) = slot else { continue };
        let rel = std::mem::take(rel);
        *slot = match blobs.next() {
            Some(seneschal_access::git::Blob::Bytes(bytes)) => {
                gate::checked(bytes, path, field).map(|b| (rel, b))
            }
            Some(seneschal_access::git::Blob::TooLarge(size)) => Err(refusal(
                Rule::SizeCap,
                path,
                &format!("it is {size} bytes at that revision, over the cap of {FILE_CAP}"),
                field,
            )),
            _ => Err(
                CapabilityError::not_found(format!("`{path}` is no file at that revision"))
                    .at(field.as_str()),
            ),
        };
    }
    Ok(out)
}

/// The window of `limit` lines from line `offset` of the file `rel` whose whole bytes are
/// `bytes`, redacted.
fn window(rel: String, bytes: &[u8], offset: u64, limit: u64) -> Window {
    let size = bytes.len() as u64;
    let digest = seneschal_access::keep::shown_digest(bytes);
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE)]).is_some() {
        return Window {
            path: rel,
            size,
            binary: true,
            content: None,
            lines: 0,
            total_lines: None,
            truncated: false,
            next_offset: None,
            redactions: 0,
            digest,
        };
    }
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let total = all.len() as u64;
    let start = usize::try_from(offset - 1)
        .unwrap_or(usize::MAX)
        .min(all.len());
    let want = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut content = String::new();
    let mut taken = 0usize;
    let mut long_line = false;
    for line in all[start..].iter().take(want) {
        if content.len() + line.len() > CONTENT_CAP {
            if taken == 0 {
                // One line longer than the cap: its head, cut on a character boundary.
                content.push_str(line);
                long_line = true;
                taken = 1;
            }
            break;
        }
        content.push_str(line);
        taken += 1;
    }
    let end = start + taken;
    let more = end < all.len();
    let (content, redactions) = if long_line {
        redact_cut(&content, CONTENT_CAP)
    } else {
        let (c, n) = redact(&content);
        (c.into_owned(), n)
    };
    Window {
        path: rel,
        size,
        binary: false,
        content: Some(content),
        lines: taken as u64,
        total_lines: Some(total),
        truncated: more || long_line,
        next_offset: if more {
            std::num::NonZeroU64::new(end as u64 + 1)
        } else {
            None
        },
        redactions: redactions as u64,
        digest,
    }
}

/// The most paths one `files.read` call takes (the schema's `maxItems`).
pub const MAX_PATHS: usize = 50;

/// `files.read`: a window of lines of one confined file (`path`) or of several (`paths`), in
/// the working tree or at a revision (`rev`).
///
/// With `paths`, each file answers in `files` (its window, or the `error` that refused it,
/// so one refused path does not fail the others), and the top-level fields sum the call up:
/// `path` empty, `content`, `total_lines`, `next_offset` and `digest` null, `size`, `lines`
/// and `redactions` the sums, `truncated` when any file was.
pub fn read(ctx: &Call, input: files_read::Input) -> Result<files_read::Output, CapabilityError> {
    let paths: Vec<(&str, String)> = match (&input.path, input.paths.is_empty()) {
        (Some(p), true) => vec![(p.as_str(), "/path".to_string())],
        (None, false) => input
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), format!("/paths/{i}")))
            .collect(),
        (Some(_), false) => {
            return Err(CapabilityError::invalid_input(
                "give `path` (one file) or `paths` (several), not both",
            )
            .at("/paths"))
        }
        (None, true) => {
            return Err(CapabilityError::invalid_input(
                "`path` (one file) or `paths` (several) is required",
            )
            .at("/path"))
        }
    };
    if paths.len() > MAX_PATHS {
        return Err(CapabilityError::invalid_input(format!(
            "at most {MAX_PATHS} paths are read in one call"
        ))
        .at("/paths"));
    }
    let (offset, limit) = (input.offset.get(), input.limit.get());
    let (commit, read) = match input.rev.as_deref() {
        Some(rev) => {
            seneschal_access::gitdir::pin(&ctx.repo).map_err(|u| u.into_error("the repository"))?;
            let commit = seneschal_access::git::resolve_commit(&ctx.repo, rev, "/rev")?;
            let read = blob_bytes(&ctx.repo, &commit, &paths)?;
            (Some(commit), read)
        }
        None => {
            let root = open_root(ctx)?;
            let read = paths
                .iter()
                .map(|(p, field)| worktree_bytes(&root, p, field))
                .collect();
            (None, read)
        }
    };
    let windows = read
        .into_iter()
        .map(|r| r.map(|(rel, bytes)| window(rel, &bytes, offset, limit)));
    if input.path.is_some() {
        let w = windows
            .into_iter()
            .next()
            .unwrap_or_else(|| Err(CapabilityError::internal("no file was read")))?;
        return Ok(files_read::Output {
            path: w.path,
            size: w.size,
            binary: w.binary,
            content: w.content,
            offset: input.offset,
            lines: w.lines,
            total_lines: w.total_lines,
            truncated: w.truncated,
            next_offset: w.next_offset,
            redactions: w.redactions,
            digest: Some(w.digest),
            commit,
            files: Vec::new(),
        });
    }
    let mut answer = files_read::Output {
        path: String::new(),
        size: 0,
        binary: false,
        content: None,
        offset: input.offset,
        lines: 0,
        total_lines: None,
        truncated: false,
        next_offset: None,
        redactions: 0,
        digest: None,
        commit,
        files: Vec::new(),
    };
    for (r, (asked, _)) in windows.zip(&paths) {
        answer.files.push(match r {
            Ok(w) => {
                answer.size += w.size;
                answer.lines += w.lines;
                answer.redactions += w.redactions;
                answer.truncated |= w.truncated;
                files_read::OutputFilesItem {
                    path: w.path,
                    size: Some(w.size),
                    binary: Some(w.binary),
                    content: w.content,
                    offset: Some(input.offset),
                    lines: Some(w.lines),
                    total_lines: w.total_lines,
                    truncated: Some(w.truncated),
                    next_offset: w.next_offset,
                    redactions: Some(w.redactions),
                    digest: Some(w.digest),
                    error: None,
                }
            }
            // Only a path's own verdicts answer in its item; a failure of the call fails it.
            Err(e) if e.code == seneschal_model::codes::ErrorCode::Internal => return Err(e),
            Err(e) => files_read::OutputFilesItem {
                path: asked.to_string(),
                size: None,
                binary: None,
                content: None,
                offset: None,
                lines: None,
                total_lines: None,
                truncated: None,
                next_offset: None,
                redactions: None,
                digest: None,
                error: Some(files_read::OutputFilesItemError {
                    code: e.code.as_str().to_string(),
                    message: e.message,
                }),
            },
        });
    }
    Ok(answer)
}

/// The matches of one file.
struct FileHits {
    path: String,
    lines: Vec<(u64, String, usize)>,
    /// More lines matched than were kept.
    more: bool,
}

/// Collects up to `cap` matching lines of one file: number, text cut at [`LINE_CAP`], and how
/// many redaction markers the whole line carries.
struct Collect {
    cap: usize,
    lines: Vec<(u64, String, usize)>,
    more: bool,
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        if self.lines.len() >= self.cap {
            self.more = true;
            return Ok(false);
        }
        let raw = String::from_utf8_lossy(m.bytes());
        let line = raw.trim_end_matches(['\n', '\r']);
        // The line is already redacted: its markers are the secrets it held.
        let markers = line.matches(seneschal_access::redact::MARKER).count();
        self.lines.push((
            m.line_number().unwrap_or(0),
            cut(line, LINE_CAP).to_string(),
            markers,
        ));
        Ok(true)
    }
}

/// The largest ignore file read (`.gitignore`, `.ignore`, `.git/info/exclude`).
const IGNORE_FILE_CAP: u64 = 1024 * 1024;

/// The ignore files of the repository, read through the confined root (never by the walker,
/// which would open them by path and wait forever on a FIFO): `.ignore` and `.gitignore` of
/// every folder, loaded once per folder, and `.git/info/exclude`. A path is decided by the
/// deepest `.ignore` that matches it, else the deepest `.gitignore`, else the exclude file, as
/// ripgrep decides; nothing above the repository root is read.
pub(crate) struct IgnoreRules {
    root: Arc<Root>,
    root_path: std::path::PathBuf,
    folders: RwLock<HashMap<String, Arc<[Option<Gitignore>; 2]>>>,
    exclude: Option<Gitignore>,
}

impl IgnoreRules {
    pub(crate) fn new(root: Arc<Root>, root_path: std::path::PathBuf) -> IgnoreRules {
        let exclude = read_rules(
            &root_path,
            root.open_shared_git_file(&root_path, "info/exclude"),
        );
        IgnoreRules {
            root,
            root_path,
            folders: RwLock::new(HashMap::new()),
            exclude,
        }
    }

    /// The `.ignore` and `.gitignore` rules of the folder at `rel`.
    fn folder(&self, rel: &str) -> Arc<[Option<Gitignore>; 2]> {
        if let Some(f) = self
            .folders
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(rel)
        {
            return f.clone();
        }
        let base = self.root_path.join(rel);
        let load = |name: &str| {
            let file = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            read_rules(&base, self.root.open_file(&file, Follow::Never))
        };
        let rules = Arc::new([load(".ignore"), load(".gitignore")]);
        self.folders
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(rel.to_string(), rules.clone());
        rules
    }

    /// Whether the walked entry at `path` (under the root) is ignored.
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let rel = rel_path(&self.root_path, path);
        // The folders holding the entry, deepest first.
        let folders: Vec<_> = rel
            .rmatch_indices('/')
            .map(|(i, _)| &rel[..i])
            .chain(std::iter::once(""))
            .map(|d| self.folder(d))
            .collect();
        for kind in 0..2 {
            for f in &folders {
                if let Some(rules) = &f[kind] {
                    let m = rules.matched(path, is_dir);
                    if m.is_ignore() {
                        return true;
                    }
                    if m.is_whitelist() {
                        return false;
                    }
                }
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|rules| rules.matched(path, is_dir).is_ignore())
    }
}

/// Gitignore rules read from a confined open (`None`: no such file, or one that is refused).
fn read_rules(
    base: &Path,
    opened: Result<seneschal_access::rootfs::File, Denied>,
) -> Option<Gitignore> {
    let mut bytes = Vec::new();
    opened
        .and_then(|mut f| f.read_capped(IGNORE_FILE_CAP, &mut bytes))
        .ok()?;
    let mut builder = GitignoreBuilder::new(base);
    for line in String::from_utf8_lossy(&bytes).lines() {
        // A line that does not compile is skipped, as git and ripgrep skip it.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// A search reports its progress each time it has searched this many more files.
const PROGRESS_EVERY: u64 = 500;

/// True for a walked entry the search must never enter or open, by name.
fn excluded(name: &std::ffi::OsStr) -> bool {
    confine::name_rule(name).is_some()
}

fn rel_path(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether no match of `pattern` can hold a byte of [`seneschal_access::redact::MARKER`] or depend on
/// what surrounds it (no look-around: `^`, `$`, `\b`). Then a match in the redacted text is a
/// match in the raw text: redaction only replaces spans with the marker, so every run of the
/// redacted text free of the marker's bytes is a run of the raw text, and a pattern without
/// look-around that matches inside a run matches the raw text there too. So a file whose raw
/// text has no match has none once redacted, and is not redacted (`marker_blind_patterns_
/// never_match_redacted_text_alone`). `None` from the parser (a syntax it does not take): not
/// blind.
fn marker_blind(pattern: &str) -> bool {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn blind(h: &Hir, marker: &[u8]) -> bool {
        match h.kind() {
            HirKind::Empty => true,
            HirKind::Literal(l) => !l.0.iter().any(|b| marker.contains(b)),
            HirKind::Class(Class::Unicode(c)) => !c.ranges().iter().any(|r| {
                marker
                    .iter()
                    .any(|&b| (r.start()..=r.end()).contains(&char::from(b)))
            }),
            HirKind::Class(Class::Bytes(c)) => !c
                .ranges()
                .iter()
                .any(|r| marker.iter().any(|b| (r.start()..=r.end()).contains(b))),
            HirKind::Look(_) => false,
            HirKind::Repetition(r) => blind(&r.sub, marker),
            HirKind::Capture(c) => blind(&c.sub, marker),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().all(|h| blind(h, marker)),
        }
    }
    regex_syntax::Parser::new()
        .parse(pattern)
        .is_ok_and(|h| blind(&h, seneschal_access::redact::MARKER.as_bytes()))
}

/// The counts of one search, which depend on the files and never on the pattern.
#[derive(Default)]
struct Tally {
    searched: AtomicU64,
    secret: AtomicU64,
    large: AtomicU64,
}

/// `files.search`: matching lines of every searchable file, sorted by path and line.
///
/// Each file is opened through the confined root ([`Root::open_file`], no symbolic link
/// followed), read whole through that handle (at most [`FILE_CAP`] bytes: a larger file is
/// never read, only counted), and redacted before it is matched: every figure of the answer
/// depends on the redacted text only, so the pattern cannot probe a secret. A file holding a
/// private key block is counted whatever the pattern. The redaction is that of
/// [`seneschal_access::redact::redact`], done only where it can change the answer: for a marker-blind
/// pattern (`marker_blind`), a file without a match in its raw text has none once redacted,
/// and only the lines the pattern matches are redacted; for any other pattern, every line that
/// holds a rule's gate ([`seneschal_access::redact::redact_lines`]).
pub fn search(
    ctx: &Call,
    input: files_search::Input,
) -> Result<files_search::Output, CapabilityError> {
    let root_path = ctx.repo.canonicalize().map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be resolved: {e}"))
    })?;
    let root = Arc::new(open_root(ctx)?);
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(input.pattern.as_str())
        .map_err(|e| {
            CapabilityError::invalid_input(format!(
                "the pattern is not a valid regular expression: {e}"
            ))
            .at("/pattern")
        })?;
    let blind = marker_blind(input.pattern.as_str());
    let limit = usize::try_from(input.limit.get()).unwrap_or(usize::MAX);
    // The walker lists folders only: it reads no ignore file itself (see IgnoreRules).
    let rules = IgnoreRules::new(root.clone(), root_path.clone());
    let mut walk = WalkBuilder::new(&root_path);
    walk.standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            e.depth() == 0
                || !(excluded(e.file_name())
                    || rules.ignored(e.path(), e.file_type().is_some_and(|t| t.is_dir())))
        });
    if let Some(glob) = input.glob.as_deref() {
        let mut ob = OverrideBuilder::new(&root_path);
        ob.add(glob).map_err(|e| {
            CapabilityError::invalid_input(format!("the glob does not compile: {e}")).at("/glob")
        })?;
        let ov = ob.build().map_err(|e| {
            CapabilityError::invalid_input(format!("the glob does not compile: {e}")).at("/glob")
        })?;
        walk.overrides(ov);
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    walk.threads(threads);

    let hits: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let tally = Tally::default();
    // The walker's threads reach the call's peer (cancellation) and report in turn, each
    // figure above the last.
    let (peer, reported, stopped) = (
        &*ctx.peer,
        crate::interact::Rising::new(&*ctx.peer),
        AtomicBool::new(false),
    );
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::none())
            .line_number(true)
            .build();
        let (hits, tally, root, root_path) = (&hits, &tally, &*root, &root_path);
        let (peer, reported, stopped) = (&peer, &reported, &stopped);
        let mut buf: Vec<u8> = Vec::new();
        Box::new(move |entry| {
            if peer.cancelled() {
                stopped.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            // Only regular files: a symbolic link is never followed, even to a file.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            let read = root
                .open_path(path.strip_prefix(root_path).unwrap_or(path), Follow::Never)
                .and_then(|mut f| f.read_capped(FILE_CAP, &mut buf));
            match read {
                Ok(()) => {}
                Err(Denied::Refused(Rule::SizeCap, _)) => {
                    tally.large.fetch_add(1, Ordering::Relaxed);
                    return WalkState::Continue;
                }
                // A link, a FIFO, a hard link, a secret name, a file gone: never read.
                Err(_) => return WalkState::Continue,
            }
            // A file holding a private key block is a secret, whatever its name.
            if gate::content(&buf).is_some() {
                tally.secret.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            }
            let searched = tally.searched.fetch_add(1, Ordering::Relaxed) + 1;
            if searched % PROGRESS_EVERY == 0 {
                reported.report(searched as f64, None, Some("files searched"));
            }
            if memchr::memchr(0, &buf).is_some() {
                return WalkState::Continue;
            }
            // Valid UTF-8 is checked on the fast path; only invalid text is copied.
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => std::borrow::Cow::Borrowed(t),
                Err(_) => String::from_utf8_lossy(&buf),
            };
            // No match in the raw text: none in the redacted text either (see marker_blind).
            if blind && !matcher.is_match(text.as_bytes()).unwrap_or(true) {
                return WalkState::Continue;
            }
            // And a line it does not match in the raw text it cannot match once redacted: only
            // the lines it matches need redacting (when no rule spans lines).
            let (text, _) = if blind {
                redact_lines_where(&text, &|line| {
                    matcher.is_match(line.as_bytes()).unwrap_or(true)
                })
            } else {
                redact_lines(&text)
            };
            let mut sink = Collect {
                cap: limit,
                lines: Vec::new(),
                more: false,
            };
            if searcher
                .search_slice(&matcher, text.as_bytes(), &mut sink)
                .is_err()
                || sink.lines.is_empty()
            {
                return WalkState::Continue;
            }
            let found = FileHits {
                path: rel_path(root_path, path),
                lines: sink.lines,
                more: sink.more,
            };
            hits.lock().unwrap_or_else(|p| p.into_inner()).push(found);
            WalkState::Continue
        })
    });
    if stopped.into_inner() {
        return Err(CapabilityError::refused("the client cancelled the search"));
    }
    let mut files = hits.into_inner().unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let files_matched = files.len();
    let mut truncated = false;
    let mut redactions = 0usize;
    let mut matches = Vec::new();
    for f in &files {
        truncated |= f.more;
        for (line, text, markers) in &f.lines {
            if matches.len() >= limit {
                truncated = true;
                break;
            }
            redactions += markers;
            matches.push(files_search::OutputMatchesItem {
                path: f.path.clone(),
                line: std::num::NonZeroU64::new(*line).ok_or_else(|| {
                    CapabilityError::internal("a match is on line 0; lines count from 1")
                })?,
                text: text.clone(),
            });
        }
    }
    Ok(files_search::Output {
        matches,
        files_searched: tally.searched.into_inner(),
        files_matched: files_matched as u64,
        skipped_secret_files: tally.secret.into_inner(),
        skipped_large_files: tally.large.into_inner(),
        truncated,
        redactions: redactions as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> regex::Regex {
        regex::Regex::new(p).unwrap()
    }

    /// Texts with secrets of every kind, joined at random: for a pattern judged blind, a text
    /// whose raw form has no match has none once redacted. Patterns that can see the marker or
    /// the text around it are not blind, and for each a text shows why.
    #[test]
    fn marker_blind_patterns_never_match_redacted_text_alone() {
        let kind = "RSA PRIVATE KEY";
        let pieces = [
            format!("github_token = ghp_{}", "Zq7Lm2Xp".repeat(4) + "Wd9K"),
            "remote https://alice:s3cr3tvalue@example.com/r.git".into(),
            "https://h/p?x=1&access_token=abcdef123&y=2".into(),
            "password: hunter2hunter2".into(),
            "xpassword=hunter2hunter2y".into(),
            "ſecret=abcdefgh1234".into(),
            format!("Bearer\n  {}", "Tok3n.value".repeat(2)),
            format!("-----BEGIN {kind}-----\nMIIEowIBAAKCAQEAu1SU1Lf\n-----END {kind}-----"),
            format!("sk-{}", "Qw3r".repeat(8)),
            "id AKIAIOSFODNN7EXAMPLE here".into(),
            "fn main() { let key = 1; }".into(),
            "[REDACTED]".into(),
            "xoxb-1234567890_value".into(),
            "value".into(),
            "a".into(),
        ];
        let seps = ["\n", " ", "", "\r\n", "x"];
        let blind = [
            "fn [a-z_]+\\(",
            "ZZZ_no_such_QQQ",
            "hunter",
            "[a-z]+=[0-9a-z]+",
            "token|secret",
            "ghp_[a-z0-9]+",
            "://[a-z.]+",
            "s://@",
            "x@",
            ":@",
            "[0-9]+",
            "y",
            "e ",
        ];
        // The first five are each seen matching a redacted text whose raw form they miss.
        let seeing = [
            "REDACTED",
            "\\[",
            "(?i)red",
            "\\b_value",
            "] ",
            ".",
            "^value",
            "[^a]",
            "\\w+",
        ];
        for p in blind {
            assert!(marker_blind(p), "{p}");
        }
        for p in seeing {
            assert!(!marker_blind(p), "{p}");
        }
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let blind_res: Vec<_> = blind.iter().map(|p| (p, re(p))).collect();
        let seeing_res: Vec<_> = seeing[..5].iter().map(|p| re(p)).collect();
        let mut changed = 0;
        let mut seen = [false; 5];
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..1 + next(5) {
                text.push_str(&pieces[next(pieces.len())]);
                text.push_str(seps[next(seps.len())]);
            }
            let (red, n) = redact(&text);
            changed += usize::from(n > 0);
            for (p, r) in &blind_res {
                assert!(
                    r.is_match(&text) || !r.is_match(&red),
                    "{p} matches {red:?} but not {text:?}"
                );
                // Redacting only the lines the pattern matches gives the same matching lines.
                let matched = |t: &str| -> Vec<(usize, String)> {
                    t.split('\n')
                        .enumerate()
                        .filter(|(_, l)| r.is_match(l))
                        .map(|(i, l)| (i, l.to_string()))
                        .collect()
                };
                let (some, _) = redact_lines_where(&text, &|l| r.is_match(l));
                assert_eq!(matched(&some), matched(&red), "{p}: {text:?}");
            }
            for (i, r) in seeing_res.iter().enumerate() {
                seen[i] |= !r.is_match(&text) && r.is_match(&red);
            }
        }
        assert!(changed > 1000, "{changed}");
        // Each pattern judged not blind does match a redacted text whose raw form it misses.
        assert_eq!(seen, [true; 5], "{seeing:?}");
    }
}
