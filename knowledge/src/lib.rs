//! The knowledge layer: kinds, front-matter contracts, the index, search and findings
//! (DESIGN §5).
//!
//! A *kind* ([`kinds`]) says where its files live, how an object's id is read and which JSON
//! Schema its front matter must satisfy. Every file a kind's globs match is read ([`scan`]):
//! a valid one becomes an [`Object`] served at `seneschal://knowledge/{kind}/{id}`; an invalid
//! one becomes a [`Finding`] `{file, pointer, message}` — never a crash, never skipped.
//!
//! The [`Index`] lives in the process context (`crate::context::Context`, which this module
//! does not import: callers pass the index and the repository root) and caches a [`Snapshot`]. An access
//! re-lists the kinds' folders and compares each file's stamp (length, modification time,
//! inode) with the cached one, so an edit, an addition or a removal is seen by the next call;
//! only changed files are read again. While inotify ([`watch`]) reports that nothing under
//! those folders changed, the sweep is skipped; any doubt sends it back to the sweep.
//!
//! The MCP projection lists and reads knowledge objects through [`resources`], [`read`] and
//! [`templates`]; these signatures are the contract between the two modules.

pub mod adr;
pub mod front_matter;
pub mod glob;
pub mod hidden;
pub mod kinds;
pub mod parse;
pub mod prompts;
pub mod result;
pub mod scan;
pub mod search;
pub mod stamp;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use glob::Candidate;
use kinds::{Kind, Kinds};
use parse::FileResult;
use seneschal_access::rootfs::{Follow, Root};
use stamp::Stamp;

/// Every knowledge URI starts with this.
pub const URI_PREFIX: &str = "seneschal://knowledge/";
/// Files larger than this (1 MiB) are findings, not objects: knowledge is prose, not data.
pub const MAX_FILE_BYTES: u64 = seneschal_access::limits::KNOWLEDGE_FILE_BYTES;
/// The grammar of an object id (it becomes a URI segment).
pub const ID_GRAMMAR: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$";
/// The folder where objects of any kind may live, naming their kind in a `kind` field.
pub const GENERIC_GLOB: &str = ".seneschal/knowledge/*.md";
/// The exit code of `seneschal knowledge check` when there are findings (the codes table's).
pub use seneschal_model::codes::EXIT_FINDINGS;

/// Something wrong with a knowledge file, precise enough to fix it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    /// Repository-relative path with `/` separators.
    pub file: String,
    /// JSON pointer into the file's front matter (or declaration); empty for the whole file.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// One valid knowledge object.
#[derive(Debug)]
pub struct Object {
    /// `seneschal://knowledge/{kind}/{id}`.
    pub uri: String,
    /// The kind's name.
    pub kind: String,
    /// The id within the kind.
    pub id: String,
    /// Repository-relative path.
    pub file: String,
    /// Title: front matter `title`, else the first heading, else `name`, else the id.
    pub title: String,
    /// Front matter `description`, else the body's first paragraph.
    pub description: String,
    /// Front matter `tags`.
    pub tags: Vec<String>,
    /// Front matter `status`.
    pub status: Option<String>,
    /// The whole front matter, as JSON.
    pub front_matter: Value,
    /// Media type of the text.
    pub mime_type: String,
    /// `sha256:<hex>` of the file's bytes.
    pub digest: String,
    /// Where the body starts in `text`.
    pub body_start: usize,
    /// The whole file.
    pub text: String,
}

impl Object {
    /// The Markdown body after the front matter.
    pub fn body(&self) -> &str {
        &self.text[self.body_start..]
    }
}

/// One consistent view of a repository's knowledge.
#[derive(Debug)]
pub struct Snapshot {
    /// The kinds.
    pub kinds: Arc<Kinds>,
    /// Every valid object, sorted by URI (each URI once).
    pub objects: Vec<Arc<Object>>,
    /// Every finding, sorted by file, pointer and message.
    pub findings: Vec<Finding>,
    /// The search index over `objects`, built on the first search of this snapshot.
    search: std::sync::OnceLock<search::SearchIndex>,
}

impl Snapshot {
    /// The snapshot of a repository whose root cannot be opened: one finding says why.
    fn unreadable(root: &Path, e: &std::io::Error) -> Snapshot {
        Snapshot {
            kinds: Arc::new(Kinds {
                all: kinds::distributed().to_vec(),
                findings: Vec::new(),
            }),
            objects: Vec::new(),
            findings: vec![Finding {
                file: root.display().to_string(),
                pointer: String::new(),
                message: format!("the repository root cannot be opened: {e}"),
            }],
            search: std::sync::OnceLock::new(),
        }
    }

    /// The object at `uri`.
    pub fn get(&self, uri: &str) -> Option<&Arc<Object>> {
        self.objects
            .binary_search_by(|o| o.uri.as_str().cmp(uri))
            .ok()
            .map(|i| &self.objects[i])
    }

    /// The search index over [`Snapshot::objects`]: built on first use, so listing, reading
    /// and checking never pay for it, and an edit costs a rebuild only when someone searches.
    pub fn search(&self) -> &search::SearchIndex {
        self.search
            .get_or_init(|| search::SearchIndex::build(&self.objects))
    }
}

/// A file claimed by the kinds' globs: which kind reads it (`None`: the generic folder).
#[derive(Debug, Clone)]
struct Listed {
    file: Candidate,
    claim: Result<Option<String>, Vec<String>>,
}

impl PartialEq for Listed {
    fn eq(&self, other: &Listed) -> bool {
        self.file.rel == other.file.rel
            && self.file.stamp == other.file.stamp
            && self.claim == other.claim
    }
}

#[derive(Default)]
struct State {
    root: Option<PathBuf>,
    config: Vec<(String, Option<Stamp>)>,
    kinds: Option<Arc<Kinds>>,
    listing: Vec<Listed>,
    /// The findings of Markdown files in knowledge folders that no kind reads.
    unread: Vec<Finding>,
    /// What each file of `listing` read as, in the same order; empty when nothing can be
    /// reused (nothing read yet, or the kinds changed).
    parsed: Vec<Arc<FileResult>>,
    snapshot: Option<Arc<Snapshot>>,
    /// Change notification; `None` when unavailable (then every access sweeps).
    watcher: Option<watch::Watcher>,
    /// Whether the watcher covers every folder of the last sweep, so that silence means
    /// nothing changed.
    trusted: bool,
}

/// The process's knowledge index (kept in the core's `Context`): a cached [`Snapshot`] that is
/// checked against the files on every access.
#[derive(Default)]
pub struct Index {
    state: Mutex<State>,
    hooks: Hooks,
}

/// What the index asks of the process that keeps it, without knowing it: which URIs the
/// process's built-in resources take (a knowledge object cannot take one).
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// Whether a built-in resource takes `uri`.
    pub reserved: fn(uri: &str) -> bool,
}

impl Default for Hooks {
    /// No URI reserved.
    fn default() -> Hooks {
        Hooks {
            reserved: |_| false,
        }
    }
}

/// Where a long read reports its progress (`progress` of `total`, with a message): to the
/// caller of the call that reads.
pub type Progress<'a> = &'a (dyn Fn(f64, Option<f64>, Option<&str>) + Sync);

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let objects = self
            .state
            .lock()
            .ok()
            .and_then(|s| s.snapshot.as_ref().map(|s| s.objects.len()));
        f.debug_struct("Index").field("objects", &objects).finish()
    }
}

/// The stamps of the repository's kind declarations and schemas, taken on the handles the
/// loader would read through ([`kinds::load`]).
fn config_stamps(root: &Root) -> Vec<(String, Option<Stamp>)> {
    let stamp = |rel: &str| match root.open_file(rel, Follow::Inside) {
        Ok(f) => (rel.to_string(), Some(Stamp::of_meta(f.meta()))),
        Err(seneschal_access::rootfs::Denied::NotFound) => (rel.to_string(), None),
        Err(_) => (rel.to_string(), Some(Stamp::REFUSED)),
    };
    let mut out = vec![stamp(kinds::REPO_KINDS)];
    let repo_kinds = out[0].1.is_some();
    // The ADR kind's folders: `.adr-dir`, and which of the usual folders exist.
    out.push(stamp(kinds::ADR_DIR_FILE));
    for (folder, present) in kinds::ADR_FOLDERS
        .iter()
        .zip(kinds::usual_folders_present(root))
    {
        out.push((folder.to_string(), present.then_some(Stamp::REFUSED)));
    }
    // The folders found by the shape of their files.
    for folder in kinds::discover_adr_folders(root) {
        out.push((folder, Some(Stamp::REFUSED)));
    }
    if repo_kinds {
        if let Ok(entries) = root
            .open_dir(kinds::REPO_SCHEMAS, Follow::Inside)
            .and_then(|d| d.entries())
        {
            let mut names: Vec<(String, Option<Stamp>)> = entries
                .iter()
                .map(|e| {
                    stamp(&format!(
                        "{}/{}",
                        kinds::REPO_SCHEMAS,
                        e.name.to_string_lossy()
                    ))
                })
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0));
            out.extend(names);
        }
    }
    out
}

/// Escapes a JSON pointer token (RFC 6901).
pub fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

impl Index {
    /// An empty index that asks `hooks` what only its process knows.
    pub fn with_hooks(hooks: Hooks) -> Index {
        Index {
            state: Mutex::default(),
            hooks,
        }
    }

    /// The current snapshot of the repository at `root`, refreshed from disk as needed.
    pub fn snapshot(&self, root: &Path) -> Arc<Snapshot> {
        self.snapshot_reporting(root, &|_, _, _| {})
    }

    /// [`Index::snapshot`], reporting the progress of a long read to `progress`.
    pub fn snapshot_reporting(&self, root: &Path, progress: Progress<'_>) -> Arc<Snapshot> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| {
            let mut s = poisoned.into_inner();
            *s = State::default();
            s
        });
        if state.root.as_deref() != Some(root) {
            *state = State {
                root: Some(root.to_path_buf()),
                ..State::default()
            };
        }
        // Silence from the watcher, when it covers everything, means nothing changed.
        let quiet = match state.watcher.as_mut() {
            Some(w) => !w.changed(),
            None => false,
        };
        if quiet && state.trusted {
            if let Some(s) = &state.snapshot {
                return s.clone();
            }
        }
        // Every file is listed and read under the root's handle (seneschal_access::rootfs).
        let handle = match Root::open(root) {
            Ok(h) => h,
            Err(e) => return Arc::new(Snapshot::unreadable(root, &e)),
        };
        let config = config_stamps(&handle);
        let mut kinds_changed = false;
        if state.kinds.is_none() || state.config != config {
            state.kinds = Some(Arc::new(kinds::load(&handle)));
            state.config = config;
            state.parsed.clear();
            kinds_changed = true;
        }
        let kinds = state.kinds.clone().expect("loaded above");
        let mut dirs = vec![
            root.to_path_buf(),
            root.join(".seneschal"),
            root.join(kinds::REPO_SCHEMAS),
        ];
        // With nothing to reuse every file is read, and its reader stamps it through the
        // handle it opens: the listing need not stamp it first.
        let cold = state.parsed.is_empty();
        let mut listing = list(&handle, root, &kinds, &mut dirs, !cold);
        let unread = unread(&handle, root, &kinds, &listing, &mut dirs);
        // A usual ADR folder created later changes where the ADR kind reads.
        for folder in kinds::ADR_FOLDERS {
            dirs.push(root.join(folder));
            if let Some((parent, _)) = folder.rsplit_once('/') {
                dirs.push(root.join(parent));
            }
        }
        state.trusted =
            watch_all(&mut state, &mut dirs) && !listing.iter().any(|l| l.file.via_symlink);
        if !kinds_changed && state.listing == listing && state.unread == unread {
            if let Some(s) = &state.snapshot {
                return s.clone();
            }
        }
        let old_results = std::mem::take(&mut state.parsed);
        let (snapshot, results) = build(
            &handle,
            &kinds,
            &mut listing,
            &state.listing,
            old_results,
            &unread,
            self.hooks,
            progress,
        );
        state.unread = unread;
        let snapshot = Arc::new(snapshot);
        state.parsed = results;
        state.listing = listing;
        state.snapshot = Some(snapshot.clone());
        snapshot
    }
}

/// Watches every folder of a sweep; true when all were already watched (so the next silence
/// can be trusted).
fn watch_all(state: &mut State, dirs: &mut Vec<PathBuf>) -> bool {
    dirs.sort();
    dirs.dedup();
    if state.watcher.is_none() {
        state.watcher = watch::Watcher::new();
    }
    let Some(w) = state.watcher.as_mut() else {
        return false;
    };
    let mut all_known = true;
    for d in dirs {
        if !d.is_dir() {
            continue;
        }
        match w.watch(d) {
            Some(false) => {}
            Some(true) | None => all_known = false,
        }
    }
    all_known
}

/// Lists every file the kinds claim, sorted by path; with its stamp, unless `stamp` is false
/// (plain files are then stamped by their reader, see [`glob::expand_stamping`]).
fn list(
    root: &Root,
    root_path: &Path,
    kinds: &Kinds,
    dirs: &mut Vec<PathBuf>,
    stamp: bool,
) -> Vec<Listed> {
    let mut found: Vec<(Candidate, Option<&str>)> = Vec::new();
    let mut batch = Vec::new();
    for k in &kinds.all {
        let records_only = k.dialect == Some(kinds::Dialect::Adr);
        for glob in &k.files {
            glob::expand_stamping(root, root_path, glob, &mut batch, dirs, stamp);
            // README, index and template files in an ADR folder are not records.
            if records_only {
                batch.retain(|c| !adr::is_not_a_record(c.rel.rsplit('/').next().unwrap_or("")));
            }
            found.extend(batch.drain(..).map(|c| (c, Some(k.name.as_str()))));
        }
    }
    glob::expand_stamping(root, root_path, GENERIC_GLOB, &mut batch, dirs, stamp);
    found.extend(batch.drain(..).map(|c| (c, None)));
    found.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    let mut listing: Vec<Listed> = Vec::with_capacity(found.len());
    let mut names: Vec<Option<&str>> = Vec::new();
    let mut iter = found.into_iter().peekable();
    while let Some((file, name)) = iter.next() {
        names.clear();
        names.push(name);
        while let Some((next, other)) = iter.peek() {
            if next.rel != file.rel {
                break;
            }
            if !names.contains(other) {
                names.push(*other);
            }
            iter.next();
        }
        let claim = if names.len() == 1 {
            Ok(names[0].map(str::to_string))
        } else {
            Err(names
                .iter()
                .map(|n| n.unwrap_or(GENERIC_GLOB).to_string())
                .collect())
        };
        listing.push(Listed { file, claim });
    }
    listing
}

/// Whether a file name is a Markdown file's.
fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".md", ".markdown", ".mdx"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The Markdown files in the ADR kinds' folders (and one level below) that no kind reads and
/// that are not README, index or template files: one finding per folder, naming them.
fn unread(
    root: &Root,
    root_path: &Path,
    kinds: &Kinds,
    listing: &[Listed],
    dirs: &mut Vec<PathBuf>,
) -> Vec<Finding> {
    let mut folders: Vec<&str> = kinds
        .all
        .iter()
        .filter(|k| k.dialect == Some(kinds::Dialect::Adr))
        .flat_map(|k| k.files.iter())
        .filter_map(|g| g.rsplit_once('/').map(|(d, _)| d))
        .filter(|d| !d.contains(['*', '?']))
        .collect();
    folders.sort_unstable();
    folders.dedup();
    let read = |rel: &str| {
        listing
            .binary_search_by(|l| l.file.rel.as_str().cmp(rel))
            .is_ok()
    };
    let mut out = Vec::new();
    // Folders whose files look like ADRs but that the ADR kind does not read (it reads the
    // folder `.adr-dir` or `.seneschal/kinds.yaml` names): check says so, never nothing.
    for found in kinds::discover_adr_folders(root) {
        if folders.contains(&found.as_str()) {
            continue;
        }
        let Ok(entries) = root
            .open_dir(&found, Follow::Inside)
            .and_then(|d| d.entries())
        else {
            continue;
        };
        let mut names: Vec<String> = entries
            .iter()
            .filter_map(|e| e.name.to_str())
            .filter(|n| kinds::is_adr_shaped(n, true))
            .map(str::to_string)
            .collect();
        names.sort();
        out.push(Finding {
            file: found.clone(),
            pointer: String::new(),
            message: format!(
                "{} ADR-shaped files in {found} are not read: {}; the ADR kind reads {} (name the folder in {} or under `files:` in {})",
                names.len(),
                names.join(", "),
                if folders.is_empty() { "no folder".to_string() } else { folders.join(", ") },
                kinds::ADR_DIR_FILE,
                kinds::REPO_KINDS,
            ),
        });
    }
    for folder in folders {
        let Ok(dir) = root.open_dir(folder, Follow::Inside) else {
            continue;
        };
        let Ok(entries) = dir.entries() else { continue };
        let mut names: Vec<String> = Vec::new();
        for entry in entries {
            let Some(name) = entry.name.to_str() else {
                continue;
            };
            if name.starts_with('.') || seneschal_access::rules::is_git_name(&entry.name) {
                continue;
            }
            let rel = format!("{folder}/{name}");
            if entry.kind == rustix::fs::FileType::Directory {
                let Ok(sub) = root.open_dir(&rel, Follow::Inside) else {
                    continue;
                };
                dirs.push(root_path.join(&rel));
                let Ok(inner) = sub.entries() else { continue };
                for e in inner {
                    let Some(n) = e.name.to_str() else { continue };
                    let r = format!("{rel}/{n}");
                    if !n.starts_with('.')
                        && is_markdown(n)
                        && !adr::is_not_a_record(n)
                        && !read(&r)
                    {
                        names.push(format!("{name}/{n}"));
                    }
                }
            } else if is_markdown(name) && !adr::is_not_a_record(name) && !read(&rel) {
                names.push(name.to_string());
            }
        }
        if names.is_empty() {
            continue;
        }
        names.sort();
        out.push(Finding {
            file: folder.to_string(),
            pointer: String::new(),
            message: format!(
                "{} Markdown file{} in {folder} {} not read: {}; no kind's files match {} (list them under `files:` in {})",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                if names.len() == 1 { "was" } else { "were" },
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" },
                kinds::REPO_KINDS,
            ),
        });
    }
    out
}

/// What reading one file gives: the result and the file's stamp.
type ReadFile = (Arc<FileResult>, Option<Stamp>);

/// How many threads read files: twice the cores (at most 8). Reading is as much system calls
/// and page faults as computation, so more readers than cores keep the cores busy while one
/// waits (for the disk, when the files are not cached, or for the scheduler on a shared
/// machine); `benches/optimizations.md` records what 2 and 4 readers measured on 2 cores.
/// `SENESCHAL_KNOWLEDGE_READERS` overrides the count (1 to 64), for such measurements.
fn reader_threads() -> usize {
    std::env::var("SENESCHAL_KNOWLEDGE_READERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| (n.get() * 2).min(8)))
}

/// Grows the calling thread's malloc arena once, by about `bytes`, before it allocates them
/// piece by piece. glibc extends a thread's arena one page at a time, with one `mprotect` per
/// extension (about 7,000 of them for 10,000 files, serialised on the process's memory map
/// lock); memory allocated in large blocks and freed at once leaves the arena's mapping
/// extended (the pages themselves are given back), so the later small allocations grow into it
/// without system calls. Elsewhere this does nothing.
fn pregrow_arena(bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // Below glibc's default mmap threshold (128 KiB), so the blocks come from the arena.
        const BLOCK: usize = 60 << 10;
        let blocks = bytes.min(32 << 20) / BLOCK;
        let pad: Vec<Vec<u8>> = (0..blocks).map(|_| Vec::with_capacity(BLOCK)).collect();
        drop(std::hint::black_box(pad));
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

/// Reads what changed and assembles a snapshot; answers it with what each file of `listing`
/// read as (in the same order). `old` and `old_results` are the previous listing and what its
/// files read as (empty when nothing can be reused). Each file read writes the stamp of the
/// version it read into `listing` (a cold listing leaves plain files unstamped for that).
#[allow(clippy::too_many_arguments)]
fn build(
    root: &Root,
    kinds: &Arc<Kinds>,
    listing: &mut [Listed],
    old: &[Listed],
    old_results: Vec<Arc<FileResult>>,
    unread: &[Finding],
    hooks: Hooks,
    progress: Progress<'_>,
) -> (Snapshot, Vec<Arc<FileResult>>) {
    let mut findings: Vec<Finding> = kinds.findings.clone();
    findings.extend(unread.iter().cloned());
    let read = |l: &Listed| -> ReadFile {
        match &l.claim {
            Err(names) => {
                let result = FileResult {
                    object: None,
                    findings: vec![Finding {
                        file: l.file.rel.clone(),
                        pointer: String::new(),
                        message: format!(
                            "is claimed by more than one kind ({}); it is not read",
                            names.join(", ")
                        ),
                    }],
                };
                let stamp = l.file.stamp.or_else(|| Stamp::of_file(root, &l.file.rel));
                (Arc::new(result), stamp)
            }
            Ok(name) => {
                let kind: Option<&Arc<Kind>> = name.as_ref().and_then(|n| kinds.get(n));
                let (result, stamp) = scan::read_object(root, &l.file, kind, kinds);
                (Arc::new(result), stamp)
            }
        }
    };
    // Reuse what did not change (both listings are sorted by path, so one merge finds the
    // previous version of each file); read the rest, on every core when there is much to read.
    let mut results: Vec<Option<Arc<FileResult>>> = Vec::with_capacity(listing.len());
    if old.len() == old_results.len() {
        let mut previous = old.iter().zip(old_results).peekable();
        for l in listing.iter() {
            while previous
                .peek()
                .is_some_and(|(o, _)| o.file.rel < l.file.rel)
            {
                previous.next();
            }
            let reused = match previous.peek() {
                Some((o, _)) if *o == l && l.file.stamp.is_some() => {
                    previous.next().map(|(_, r)| r)
                }
                _ => None,
            };
            results.push(reused);
        }
    } else {
        results.resize(listing.len(), None);
    }
    let todo: Vec<usize> = (0..listing.len())
        .filter(|&i| results[i].is_none())
        .collect();
    let threads = reader_threads();
    let mut done: Vec<(usize, ReadFile)> = Vec::with_capacity(todo.len());
    if todo.len() >= 256 && threads > 1 {
        // Workers (the calling thread among them) take batches from a shared counter, so a
        // worker the scheduler holds back delays only its current batch.
        const BATCH: usize = 32;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (todo, next, read, listed) = (&todo, &next, &read, &*listing);
        let work = move || {
            let mut out = Vec::with_capacity(todo.len() / threads + BATCH);
            loop {
                let start = next.fetch_add(BATCH, std::sync::atomic::Ordering::Relaxed);
                if start >= todo.len() {
                    break out;
                }
                progress(
                    start as f64,
                    Some(todo.len() as f64),
                    Some("knowledge files read"),
                );
                for &i in &todo[start..(start + BATCH).min(todo.len())] {
                    out.push((i, read(&listed[i])));
                }
            }
        };
        // What one worker will keep, roughly: 4 KiB per file (text, front matter, metadata).
        let share = todo.len() / threads * 4096;
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads)
                .map(|_| {
                    scope.spawn(move || {
                        pregrow_arena(share);
                        work()
                    })
                })
                .collect();
            done.extend(work());
            for w in workers {
                done.extend(w.join().expect("a knowledge reader panicked"));
            }
        });
    } else {
        done.extend(todo.iter().map(|&i| (i, read(&listing[i]))));
    }
    for (i, (result, stamp)) in done {
        results[i] = Some(result);
        listing[i].file.stamp = stamp;
    }
    let results: Vec<Arc<FileResult>> = results
        .into_iter()
        .map(|r| r.expect("every file was read or reused"))
        .collect();
    let mut objects: Vec<Arc<Object>> = Vec::with_capacity(results.len());
    for result in &results {
        findings.extend(result.findings.iter().cloned());
        if let Some(o) = &result.object {
            objects.push(o.clone());
        }
    }
    // Sorted by URI; a stable sort keeps the files of one URI in path order.
    objects.sort_by(|a, b| a.uri.cmp(&b.uri));
    // Duplicate URIs: every file involved is a finding and none is served.
    let mut served: Vec<Arc<Object>> = Vec::with_capacity(objects.len());
    for group in objects.chunk_by(|a, b| a.uri == b.uri) {
        let uri = group[0].uri.as_str();
        if group.len() > 1 {
            let files: Vec<&str> = group.iter().map(|o| o.file.as_str()).collect();
            for o in group {
                findings.push(Finding {
                    file: o.file.clone(),
                    pointer: String::new(),
                    message: format!(
                        "duplicate id `{}` of kind `{}`: {} all claim {uri}; none is served until one is renamed",
                        o.id,
                        o.kind,
                        files.join(", ")
                    ),
                });
            }
        } else if (hooks.reserved)(uri) {
            findings.push(Finding {
                file: group[0].file.clone(),
                pointer: String::new(),
                message: format!(
                    "{uri} is the URI of a built-in resource; a knowledge object cannot take it"
                ),
            });
        } else {
            served.push(group[0].clone());
        }
    }
    findings.sort();
    findings.dedup();
    let snapshot = Snapshot {
        kinds: kinds.clone(),
        objects: served,
        findings,
        search: std::sync::OnceLock::new(),
    };
    (snapshot, results)
}

/// A knowledge object as an MCP resource (an entry of `resources/list`, as it is serialized).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// `seneschal://knowledge/{kind}/{id}`
    pub uri: String,
    /// Short name (the id).
    pub name: String,
    /// Title from the front matter.
    pub title: String,
    /// Description from the front matter.
    pub description: String,
    /// Media type, `text/markdown` for Markdown objects.
    pub mime_type: String,
}

impl Resource {
    /// Every field, each repository content (the executor redacts them all).
    pub fn fields_mut(&mut self) -> [&mut String; 5] {
        [
            &mut self.uri,
            &mut self.name,
            &mut self.title,
            &mut self.description,
            &mut self.mime_type,
        ]
    }
}

/// A kind's URI template (an entry of `resources/templates/list`, as it is serialized).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    /// `seneschal://knowledge/{kind}/{id}` with the kind filled in.
    pub uri_template: String,
    /// The kind's name.
    pub name: String,
    /// What objects of the kind are.
    pub description: String,
    /// Media type of the objects.
    pub mime_type: String,
}

impl Template {
    /// Every field, each repository content when the kind is the repository's own.
    pub fn fields_mut(&mut self) -> [&mut String; 4] {
        [
            &mut self.uri_template,
            &mut self.name,
            &mut self.description,
            &mut self.mime_type,
        ]
    }
}

/// Every valid knowledge object of the repository, sorted by URI, unredacted: the MCP
/// projection lists them through `crate::execute::knowledge_resources`, which discloses them.
pub fn resources(index: &Index, repo: &Path) -> Vec<Resource> {
    index
        .snapshot(repo)
        .objects
        .iter()
        .map(|o| Resource {
            uri: o.uri.clone(),
            name: o.id.clone(),
            title: o.title.clone(),
            description: o.description.clone(),
            mime_type: o.mime_type.clone(),
        })
        .collect()
}

/// The content of one knowledge object: `(mime type, text)`, or `None` when no object has
/// this URI; unredacted: the MCP projection reads it through
/// `crate::execute::knowledge_read`, which discloses it.
pub fn read(index: &Index, repo: &Path, uri: &str) -> Option<(String, String)> {
    let snapshot = index.snapshot(repo);
    snapshot
        .get(uri)
        .map(|o| (o.mime_type.clone(), o.text.clone()))
}

/// One URI template per kind, unredacted (a repository's own kinds are its content): the MCP
/// projection lists them through `crate::execute::knowledge_templates`.
pub fn templates(index: &Index, repo: &Path) -> Vec<Template> {
    let snapshot = index.snapshot(repo);
    let mut out: Vec<Template> = snapshot
        .kinds
        .all
        .iter()
        .map(|k| Template {
            uri_template: k.uri_template(),
            name: k.name.clone(),
            description: k.description.clone(),
            mime_type: k.format.mime_type().to_string(),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The command line's verdict on a `knowledge.check` answer: `file: pointer: message` lines on
/// stderr and exit code [`EXIT_FINDINGS`] when there are findings; `None` for any other
/// capability or a clean repository. (The answer itself is printed as usual.)
pub fn cli_verdict(capability: &str, answer: &Value) -> Option<std::process::ExitCode> {
    if capability != "knowledge.check" {
        return None;
    }
    let findings = answer.get("findings")?.as_array()?;
    if findings.is_empty() {
        return None;
    }
    let field = |f: &Value, k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    for f in findings {
        let pointer = field(f, "pointer");
        eprintln!(
            "{}: {}: {}",
            field(f, "file"),
            if pointer.is_empty() { "/" } else { &pointer },
            field(f, "message")
        );
    }
    eprintln!("{} finding(s)", findings.len());
    Some(std::process::ExitCode::from(EXIT_FINDINGS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn the_index_sees_edits_additions_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "docs/guides/setup.md",
            "---\ntitle: Set up\n---\nInstall things.\n",
        );
        let index = Index::default();
        let first = index.snapshot(root);
        assert_eq!(first.objects.len(), 1);
        assert_eq!(first.objects[0].title, "Set up");
        // An unchanged tree returns the very same snapshot.
        assert!(Arc::ptr_eq(&first, &index.snapshot(root)));

        write(
            root,
            "docs/guides/setup.md",
            "---\ntitle: Set up the workstation\n---\nInstall more things.\n",
        );
        let edited = index.snapshot(root);
        assert_eq!(edited.objects[0].title, "Set up the workstation");
        assert_ne!(edited.objects[0].digest, first.objects[0].digest);

        write(
            root,
            "docs/guides/release.md",
            "---\ntitle: Release\n---\nTag it.\n",
        );
        let added = index.snapshot(root);
        assert_eq!(added.objects.len(), 2);
        assert!(added.get("seneschal://knowledge/guide/release").is_some());

        fs::remove_file(root.join("docs/guides/setup.md")).unwrap();
        let removed = index.snapshot(root);
        assert_eq!(removed.objects.len(), 1);
        assert!(removed.get("seneschal://knowledge/guide/setup").is_none());

        write(
            root,
            "docs/guides/release.md",
            "---\ntitle: [unclosed\n---\nTag it.\n",
        );
        let broken = index.snapshot(root);
        assert!(broken.objects.is_empty());
        assert_eq!(broken.findings.len(), 1, "{:?}", broken.findings);
        assert_eq!(broken.findings[0].file, "docs/guides/release.md");
    }

    #[test]
    fn a_large_cold_index_reads_in_parallel_and_stamps_what_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Enough files for the parallel readers, with one invalid file and one duplicate id.
        for i in 0..600 {
            write(
                root,
                &format!("docs/guides/g-{i:04}.md"),
                &format!("---\ntitle: Guide {i}\ntags: [a, b]\n---\nBody {i}.\n"),
            );
        }
        write(
            root,
            "docs/guides/broken.md",
            "---\ntitle: [unclosed\n---\n",
        );
        write(
            root,
            "docs/adr/0001-first.md",
            "---\ntitle: One\nstatus: accepted\ndate: 2026-11-30\n---\nA.\n",
        );
        write(
            root,
            "docs/adr/0001-again.md",
            "---\ntitle: Again\nstatus: accepted\ndate: 2026-11-30\n---\nB.\n",
        );
        let index = Index::default();
        let first = index.snapshot(root);
        assert_eq!(first.objects.len(), 600);
        let files: Vec<&str> = first.findings.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "docs/adr/0001-again.md",
                "docs/adr/0001-first.md",
                "docs/guides/broken.md"
            ],
            "{:?}",
            first.findings
        );
        assert!(first.objects.windows(2).all(|w| w[0].uri < w[1].uri));
        let g = first.get("seneschal://knowledge/guide/g-0042").unwrap();
        assert_eq!(g.title, "Guide 42");
        assert_eq!(g.front_matter["tags"], serde_json::json!(["a", "b"]));
        // The stamps the readers took equal the ones a sweep takes: nothing is read again.
        let again = index.snapshot(root);
        assert!(Arc::ptr_eq(&first, &again));
        // An edit re-reads that file and reuses the others.
        write(
            root,
            "docs/guides/g-0042.md",
            "---\ntitle: Guide forty-two\n---\nBody.\n",
        );
        let edited = index.snapshot(root);
        let g2 = edited.get("seneschal://knowledge/guide/g-0042").unwrap();
        assert_eq!(g2.title, "Guide forty-two");
        let same = |uri: &str| Arc::ptr_eq(first.get(uri).unwrap(), edited.get(uri).unwrap());
        assert!(same("seneschal://knowledge/guide/g-0041"));
        assert!(!same("seneschal://knowledge/guide/g-0042"));
    }

    #[test]
    fn a_quiet_watcher_never_hides_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "skills/a/SKILL.md",
            "---\nname: a\ndescription: First.\n---\nA.\n",
        );
        let index = Index::default();
        // Enough calls for the watcher to cover every folder and be trusted.
        for _ in 0..3 {
            assert_eq!(index.snapshot(root).objects.len(), 1);
        }
        let trusted = || index.state.lock().unwrap().trusted;
        assert_eq!(
            trusted(),
            cfg!(target_os = "linux"),
            "the fast path is what this test is about"
        );
        // A new folder with a new object.
        write(
            root,
            "skills/b/SKILL.md",
            "---\nname: b\ndescription: Second.\n---\nB.\n",
        );
        assert_eq!(index.snapshot(root).objects.len(), 2);
        for _ in 0..2 {
            index.snapshot(root);
        }
        assert_eq!(trusted(), cfg!(target_os = "linux"));
        // An edit inside the new folder, of the same length.
        write(
            root,
            "skills/b/SKILL.md",
            "---\nname: b\ndescription: Secnd.\n---\nBB\n",
        );
        let s = index.snapshot(root);
        assert_eq!(
            s.get("seneschal://knowledge/skill/b").unwrap().description,
            "Secnd."
        );
        // A removed folder, then a repository kind declared later.
        fs::remove_dir_all(root.join("skills/a")).unwrap();
        assert_eq!(index.snapshot(root).objects.len(), 1);
        index.snapshot(root);
        assert_eq!(trusted(), cfg!(target_os = "linux"));
        write(root, ".seneschal/kinds.yaml", "kinds:\n  bad: 1\n");
        assert_eq!(index.snapshot(root).findings.len(), 1);
    }

    /// A kinds.yaml planted as a link out of the repository (or any file the confined file
    /// system refuses) is a finding from the next call on, and its target is never read.
    #[test]
    #[cfg(unix)]
    fn a_refused_kinds_file_is_seen_and_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "docs/guides/a.md", "---\ntitle: A\n---\nA.\n");
        fs::write(
            outside.path().join("kinds.yaml"),
            "kinds:\n  loot:\n    description: OUTSIDE\n    files: [\"*\"]\n    id: { field: id }\n    schema: x.json\n",
        )
        .unwrap();
        let index = Index::default();
        assert!(index.snapshot(root).findings.is_empty());
        fs::create_dir_all(root.join(".seneschal")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("kinds.yaml"),
            root.join(kinds::REPO_KINDS),
        )
        .unwrap();
        let s = index.snapshot(root);
        assert_eq!(s.findings.len(), 1, "{:?}", s.findings);
        assert_eq!(s.findings[0].file, kinds::REPO_KINDS);
        assert!(
            s.findings[0].message.contains("symlink_escape"),
            "{:?}",
            s.findings
        );
        assert!(s.kinds.get("loot").is_none());
    }

    #[test]
    fn repository_kinds_are_reloaded_when_declared() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "runbooks/db.md",
            "---\ntitle: Database\n---\nRestart it.\n",
        );
        let index = Index::default();
        assert!(index.snapshot(root).objects.is_empty());
        write(
            root,
            ".seneschal/kinds.yaml",
            "kinds:\n  runbook:\n    description: Runbooks.\n    files: [\"runbooks/*.md\"]\n    id: { file_pattern: \"^(.+)\\\\.md$\" }\n    schema: runbook.schema.json\n",
        );
        write(
            root,
            ".seneschal/schemas/runbook.schema.json",
            r#"{"type":"object","required":["title"]}"#,
        );
        let s = index.snapshot(root);
        assert!(s.findings.is_empty(), "{:?}", s.findings);
        assert_eq!(s.objects[0].uri, "seneschal://knowledge/runbook/db");
    }
}
