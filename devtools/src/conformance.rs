//! The behaviour-conformance harness: every annotation is a claim, and this module tries to
//! falsify each one by running the capability's declared examples in a scratch repository and
//! observing what actually changed.
//!
//! For each executable capability it works in a fresh scratch copy of a template repository
//! and snapshots, before and after every call, the working tree (content hashes), `.git`
//! (HEAD, refs, index, object count), the `.seneschal/` state and the process state (through
//! `session.note.list` when the registry has it). The matrix: each example with its declared
//! outcome; a byte-identical repeat; a missing resource; a malformed field; two identical calls
//! at once; an interrupted call retried with its idempotency key (writers that take one).
//! The claims checked: `readOnlyHint` → nothing changed by any call; `idempotentHint` → the
//! repeat added no effect; `destructiveHint: false` (an additive writer) → no call changed or
//! removed an existing file (every file is hashed before and after each call);
//! `process_state` → no file changed; `repository_write` → at least one example shows its
//! effect, and `.git` untouched unless the manifest declares `git_state` (then at least one
//! example changes `.git`: the index, a ref, HEAD or the objects).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use seneschal_core::context::Context;
use seneschal_core::execute::{execute_index, Transport};
use seneschal_core::registry::{Descriptor, CAPABILITIES};
use seneschal_model::policy::{Effect, Hints};

/// What one check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The claim held.
    Pass,
    /// The claim was falsified.
    Fail,
    /// The check does not apply to this capability.
    NotApplicable,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::NotApplicable => "n/a",
        }
    }
}

/// One cell of the report: capability × check.
#[derive(Debug, Clone)]
pub struct Row {
    /// Canonical id.
    pub capability: &'static str,
    /// The check's name.
    pub check: &'static str,
    /// Its conclusion.
    pub status: Status,
    /// What was observed (what changed, where; or why it does not apply).
    pub evidence: String,
}

/// The checks, in report order.
pub const CHECKS: [&str; 7] = [
    "examples",
    "repeat",
    "missing",
    "malformed",
    "concurrent",
    "retry",
    "claims",
];

/// Everything observable about a scratch repository and its process.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    tree: BTreeMap<String, String>,
    git: BTreeMap<String, String>,
    state: BTreeMap<String, String>,
    process: String,
}

fn sha(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    seneschal_access::text::hex(&d[..8])
}

fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if skip.iter().any(|s| rel == *s) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.insert(rel, format!("link:{target}"));
        } else if meta.is_dir() {
            walk(root, &path, skip, out);
        } else {
            out.insert(rel, sha(&std::fs::read(&path).unwrap_or_default()));
        }
    }
}

impl Snapshot {
    /// Takes a snapshot of `repo` and of the process behind `ctx`.
    pub fn take(repo: &Path, ctx: &Context) -> Snapshot {
        let mut tree = BTreeMap::new();
        walk(repo, repo, &[".git", ".seneschal"], &mut tree);
        let mut git = BTreeMap::new();
        let g = repo.join(".git");
        for name in ["HEAD", "index", "packed-refs", "config"] {
            if let Ok(bytes) = std::fs::read(g.join(name)) {
                git.insert(name.to_string(), sha(&bytes));
            }
        }
        let mut refs = BTreeMap::new();
        walk(&g, &g.join("refs"), &[], &mut refs);
        git.extend(refs);
        let mut objects = BTreeMap::new();
        walk(&g, &g.join("objects"), &[], &mut objects);
        git.insert("objects (count)".into(), objects.len().to_string());
        let mut state = BTreeMap::new();
        let s = repo.join(".seneschal");
        walk(&s, &s, &[], &mut state);
        Snapshot {
            tree,
            git,
            state,
            process: process_state(ctx),
        }
    }

    /// What changed from `self` to `after`, as sentences; empty when nothing did.
    pub fn delta(&self, after: &Snapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (area, a, b) in [
            ("tree", &self.tree, &after.tree),
            (".git", &self.git, &after.git),
            (".seneschal", &self.state, &after.state),
        ] {
            for (k, v) in b {
                match a.get(k) {
                    None => out.push(format!("{area}: added {k}")),
                    Some(old) if old != v => out.push(format!("{area}: changed {k}")),
                    _ => {}
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                out.push(format!("{area}: removed {k}"));
            }
        }
        if self.process != after.process {
            out.push("process: session state changed".into());
        }
        out
    }

    /// Whether only the process state differs.
    fn files_changed(delta: &[String]) -> Vec<String> {
        delta
            .iter()
            .filter(|d| !d.starts_with("process:"))
            .cloned()
            .collect()
    }
}

/// The process state, read through `session.note.list` when the registry has it.
fn process_state(ctx: &Context) -> String {
    if let Some((index, _)) = seneschal_core::registry::find("session.note.list") {
        match harness_call(ctx, index, json!({})) {
            Ok(v) => return v.to_string(),
            Err(e) => return format!("error:{}", e.code.as_str()),
        }
    }
    let notes = ctx.notes.lock().map(|n| n.len()).unwrap_or(0);
    format!("notes:{notes}")
}

static SCRATCH: AtomicU64 = AtomicU64::new(0);

/// A scratch copy of the template repository, removed on drop.
pub struct Scratch {
    /// The scratch repository root.
    pub path: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    // The scratch is seneschal's own; `init` makes its `.git`, every later run is pinned.
    let mut cmd = if args.first() == Some(&"init") {
        seneschal_access::git::init_command(dir)
    } else {
        seneschal_access::git::command(dir).map_err(|f| f.into_error("the scratch").message)?
    };
    let out = cmd
        .args(args)
        .env("GIT_AUTHOR_NAME", "seneschal conformance")
        .env("GIT_AUTHOR_EMAIL", "conformance@seneschal.invalid")
        .env("GIT_COMMITTER_NAME", "seneschal conformance")
        .env("GIT_COMMITTER_EMAIL", "conformance@seneschal.invalid")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn copy_tree(from: &Path, to: &Path, skip: &[&str]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&src, &dst, skip)?;
        } else if ty.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Makes a scratch git repository from `template`: the files git tracks there (or every file
/// but `.git` and `target` when it is no repository), committed once.
pub fn scratch(template: &Path) -> Result<Scratch, String> {
    let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("seneschal-conformance-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let scratch = Scratch { path: path.clone() };
    match git(template, &["ls-files", "-z"]) {
        Ok(list) if template.join(".git").exists() => {
            for rel in list.split('\0').filter(|s| !s.is_empty()) {
                let (src, dst) = (template.join(rel), path.join(rel));
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                if src.is_file() {
                    std::fs::copy(&src, &dst).map_err(|e| format!("cannot copy {rel}: {e}"))?;
                }
            }
        }
        _ => copy_tree(template, &path, &[".git", "target"])
            .map_err(|e| format!("cannot copy the template: {e}"))?,
    }
    // No hook templates, and the objects in one pack: copies of the base stay cheap.
    git(&path, &["init", "-q", "--template=", "-b", "main"])?;
    git(&path, &["add", "-A"])?;
    git(
        &path,
        &["commit", "-q", "--allow-empty", "-m", "conformance fixture"],
    )?;
    git(&path, &["repack", "-a", "-d", "-q"])?;
    git(&path, &["prune-packed"])?;
    Ok(scratch)
}

fn outcome(result: &Result<Value, seneschal_access::error::CapabilityError>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => e.code.as_str().into(),
    }
}

fn examples(d: &Descriptor) -> Vec<(String, Value, String)> {
    let v: Value = serde_json::from_str(d.examples_json).unwrap_or(Value::Null);
    v.as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["title"].as_str().unwrap_or("").to_string(),
                e["input"].clone(),
                e["outcome"].as_str().unwrap_or("ok").to_string(),
            )
        })
        .collect()
}

/// The input of a call whose named resource does not exist, if the capability names one.
fn missing_input(d: &Descriptor) -> Option<Value> {
    if !d
        .errors
        .contains(&seneschal_model::codes::ErrorCode::NotFound)
    {
        return None;
    }
    let (_, input, _) = examples(d).into_iter().find(|(_, _, o)| o == "ok")?;
    let key = ["uri", "id", "path", "name"]
        .into_iter()
        .find(|k| input.get(*k).is_some_and(Value::is_string))?;
    let mut input = input;
    let old = input[key].as_str().unwrap_or("").to_string();
    let missing = match old.rfind('/') {
        Some(i) => format!("{}/seneschal-conformance-missing", &old[..i]),
        None => "seneschal-conformance-missing".into(),
    };
    input[key] = Value::String(missing);
    Some(input)
}

/// The first ok example's input with one field of the wrong type (or an unknown field).
fn malformed_input(d: &Descriptor) -> Value {
    let schema: Value = serde_json::from_str(d.input_schema).unwrap_or(Value::Null);
    let mut input = examples(d)
        .into_iter()
        .find(|(_, _, o)| o == "ok")
        .map(|(_, i, _)| i)
        .unwrap_or_else(|| json!({}));
    match schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.iter().next())
    {
        Some((name, prop)) => {
            let wrong = if prop.get("type") == Some(&json!("string")) {
                json!(12345)
            } else {
                json!("seneschal-conformance-wrong-type")
            };
            input[name.as_str()] = wrong;
        }
        None => input["seneschal_conformance_unknown"] = json!(true),
    }
    input
}

/// Hands out fresh scratch repositories: the template is copied and committed once (the
/// base); a check gets a scratch whose snapshot equals the base's — the previous check's, when
/// that one changed nothing (most capabilities are reads), or a new copy of the base.
struct Probe {
    base: Scratch,
    base_snapshot: Snapshot,
    spare: std::cell::RefCell<Option<Scratch>>,
}

/// A scratch repository lent to one check; it goes back to the probe when dropped.
struct Lease<'a> {
    probe: &'a Probe,
    scratch: Option<Scratch>,
    path: PathBuf,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        *self.probe.spare.borrow_mut() = self.scratch.take();
    }
}

impl Probe {
    fn new(base: Scratch) -> Probe {
        let ctx = Context::scratch(base.path.clone(), Effect::RepositoryWrite);
        let base_snapshot = Snapshot::take(&base.path, &ctx);
        Probe {
            base,
            base_snapshot,
            spare: std::cell::RefCell::new(None),
        }
    }

    fn fresh(&self) -> Result<(Lease<'_>, Context), String> {
        let spare = self.spare.borrow_mut().take();
        if let Some(s) = spare {
            let ctx = Context::scratch(s.path.clone(), Effect::RepositoryWrite);
            if Snapshot::take(&s.path, &ctx) == self.base_snapshot {
                let path = s.path.clone();
                return Ok((
                    Lease {
                        probe: self,
                        scratch: Some(s),
                        path,
                    },
                    ctx,
                ));
            }
        }
        let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("seneschal-conformance-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        let s = Scratch { path: path.clone() };
        copy_tree(&self.base.path, &s.path, &[])
            .map_err(|e| format!("cannot copy the scratch base: {e}"))?;
        let ctx = Context::scratch(s.path.clone(), Effect::RepositoryWrite);
        Ok((
            Lease {
                probe: self,
                scratch: Some(s),
                path,
            },
            ctx,
        ))
    }
}

/// Runs the whole matrix over every executable capability, using `template` as the fixture
/// repository.
/// `only` limits the run to those canonical ids (all executable capabilities when empty).
pub fn run(template: &Path, only: &[String]) -> Vec<Row> {
    let mut rows = Vec::new();
    let probe = match scratch(template) {
        Ok(base) => Probe::new(base),
        Err(e) => {
            rows.push(Row {
                capability: "(harness)",
                check: "examples",
                status: Status::Fail,
                evidence: e,
            });
            return rows;
        }
    };
    for (index, d) in CAPABILITIES
        .iter()
        .enumerate()
        .filter(|(_, d)| d.executable() && (only.is_empty() || only.iter().any(|o| o == d.id)))
    {
        match run_one(&probe, index, d) {
            Ok(mut r) => rows.append(&mut r),
            Err(e) => rows.push(Row {
                capability: d.id,
                check: "examples",
                status: Status::Fail,
                evidence: format!("harness error: {e}"),
            }),
        }
    }
    rows
}

/// A writer records every refused attempt in its audit log (seneschal_core::store): for a
/// `repository_write` capability, changes to the store's own state (lock, .gitignore, audit log
/// and its anchor, the key of its digests) are the record of the refusal, not an effect of it.
fn audit_excluded(d: &Descriptor, delta: &[String]) -> Vec<String> {
    delta
        .iter()
        .filter(|c| {
            d.effect != Effect::RepositoryWrite
                || !matches!(
                    c.rsplit(' ').next(),
                    Some("audit.jsonl" | "audit.anchor" | "lock" | ".gitignore" | "digest.key")
                )
                || !c.starts_with(".seneschal:")
        })
        .cloned()
        .collect()
}

/// One call of capability `index`, through the executor, reduced to its outcome.
fn call(ctx: &Context, index: usize, input: &Value) -> String {
    outcome(&harness_call(ctx, index, input.clone()))
}

/// One call through the executor with the harness as its peer: the harness approves what it
/// runs (its peer accepts every approval request, and the audit records `harness`).
fn harness_call(
    ctx: &Context,
    index: usize,
    input: Value,
) -> Result<Value, seneschal_access::error::CapabilityError> {
    let harness = std::sync::Arc::new(seneschal_core::interact::Accepting("harness"));
    execute_index(
        ctx,
        index,
        input,
        seneschal_core::execute::Caller::new(Transport::Conformance, harness),
    )
}

/// Runs `f` in the scratch copy `root` and returns its result and everything that changed
/// around it (files, `.git`, `.seneschal`, process state).
fn around<T>(root: &Path, ctx: &Context, f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let before = Snapshot::take(root, ctx);
    let result = f();
    (result, before.delta(&Snapshot::take(root, ctx)))
}

/// `; changed: …` for a delta, or `none` when nothing changed.
fn changes(delta: &[String], none: &str) -> String {
    if delta.is_empty() {
        none.to_string()
    } else {
        format!("; changed: {}", delta.join(", "))
    }
}

fn verdict(ok: bool) -> Status {
    if ok {
        Status::Pass
    } else {
        Status::Fail
    }
}

/// One capability's pass through the matrix: the checks in report order, each adding its row
/// and the deltas it observed (for the claims, judged last over all of them).
struct Run<'p> {
    probe: &'p Probe,
    index: usize,
    d: &'static Descriptor,
    hints: Hints,
    examples: Vec<(String, Value, String)>,
    rows: Vec<Row>,
    /// Every delta observed by any call, with what made it.
    deltas: Vec<(String, Vec<String>)>,
    /// How many examples changed files.
    example_effects: usize,
}

fn run_one(probe: &Probe, index: usize, d: &'static Descriptor) -> Result<Vec<Row>, String> {
    let mut run = Run {
        probe,
        index,
        d,
        hints: d.hints(),
        examples: examples(d),
        rows: Vec::new(),
        deltas: Vec::new(),
        example_effects: 0,
    };
    run.examples()?;
    run.repeat()?;
    run.missing()?;
    run.malformed()?;
    run.concurrent()?;
    run.retry()?;
    let (status, evidence) = claims(d, run.hints, &run.deltas, run.example_effects);
    run.row("claims", status, evidence);
    Ok(run.rows)
}

impl Run<'_> {
    fn row(&mut self, check: &'static str, status: Status, evidence: String) {
        self.rows.push(Row {
            capability: self.d.id,
            check,
            status,
            evidence,
        });
    }

    /// One call in a fresh scratch repository, with everything it changed.
    fn call_fresh(&self, input: &Value) -> Result<(String, Vec<String>), String> {
        let (s, ctx) = self.probe.fresh()?;
        Ok(around(&s.path, &ctx, || call(&ctx, self.index, input)))
    }

    /// 1. Each example, with its declared outcome.
    fn examples(&mut self) -> Result<(), String> {
        let mut failures = Vec::new();
        for (title, input, expected) in self.examples.clone() {
            let (got, delta) = self.call_fresh(&input)?;
            if !Snapshot::files_changed(&delta).is_empty() {
                self.example_effects += 1;
            }
            if got != expected {
                failures.push(format!("`{title}`: declared {expected}, got {got}"));
            }
            self.deltas.push((format!("example `{title}`"), delta));
        }
        let evidence = if failures.is_empty() {
            format!(
                "{} example(s) gave their declared outcome",
                self.examples.len()
            )
        } else {
            failures.join("; ")
        };
        self.row("examples", verdict(failures.is_empty()), evidence);
        Ok(())
    }

    /// 2. The first example again, with byte-identical arguments.
    fn repeat(&mut self) -> Result<(), String> {
        let Some((title, input, _)) = self.examples.first().cloned() else {
            self.row("repeat", Status::NotApplicable, "no example".into());
            return Ok(());
        };
        let (s, ctx) = self.probe.fresh()?;
        let _ = call(&ctx, self.index, &input);
        let (first, delta) = around(&s.path, &ctx, || call(&ctx, self.index, &input));
        let evidence = if delta.is_empty() {
            format!("the repeat of `{title}` ({first}) changed nothing")
        } else {
            format!("the repeat of `{title}` changed: {}", delta.join(", "))
        };
        self.row(
            "repeat",
            verdict(!self.hints.idempotent || delta.is_empty()),
            evidence,
        );
        self.deltas.push((format!("repeat of `{title}`"), delta));
        Ok(())
    }

    /// 3. A missing resource.
    fn missing(&mut self) -> Result<(), String> {
        let Some(input) = missing_input(self.d) else {
            self.row(
                "missing",
                Status::NotApplicable,
                "the input names no resource, or not_found is not declared".into(),
            );
            return Ok(());
        };
        let (got, delta) = self.call_fresh(&input)?;
        let ok = got == "not_found"
            && Snapshot::files_changed(&audit_excluded(self.d, &delta)).is_empty();
        self.row(
            "missing",
            verdict(ok),
            format!("input {input} → {got}{}", changes(&delta, "")),
        );
        self.deltas.push(("missing resource".into(), delta));
        Ok(())
    }

    /// 4. A malformed field.
    fn malformed(&mut self) -> Result<(), String> {
        let input = malformed_input(self.d);
        let (got, delta) = self.call_fresh(&input)?;
        let ok = got == "invalid_input" && audit_excluded(self.d, &delta).is_empty();
        self.row(
            "malformed",
            verdict(ok),
            format!(
                "input {input} → {got}{}",
                changes(&delta, ", nothing changed")
            ),
        );
        Ok(())
    }

    /// 5. Two identical calls at once.
    fn concurrent(&mut self) -> Result<(), String> {
        let Some((title, input, expected)) = self.examples.first().cloned() else {
            self.row("concurrent", Status::NotApplicable, "no example".into());
            return Ok(());
        };
        let (s, ctx) = self.probe.fresh()?;
        let index = self.index;
        let ((a, b), delta) = around(&s.path, &ctx, || {
            std::thread::scope(|scope| {
                let h1 = scope.spawn(|| call(&ctx, index, &input));
                let h2 = scope.spawn(|| call(&ctx, index, &input));
                (
                    h1.join().unwrap_or_else(|_| "panic".into()),
                    h2.join().unwrap_or_else(|_| "panic".into()),
                )
            })
        });
        let declared = if self.hints.read_only {
            a == expected && b == expected
        } else {
            a == expected || b == expected
        };
        let ok = declared && (a == b || !self.hints.idempotent);
        self.row(
            "concurrent",
            verdict(ok),
            format!("`{title}` twice at once → {a}, {b}{}", changes(&delta, "")),
        );
        self.deltas.push(("concurrent calls".into(), delta));
        Ok(())
    }

    /// 6. An interrupted call retried with its idempotency key.
    fn retry(&mut self) -> Result<(), String> {
        let schema: Value = serde_json::from_str(self.d.input_schema).unwrap_or(Value::Null);
        if self.d.effect != Effect::RepositoryWrite
            || schema["properties"].get("idempotency_key").is_none()
        {
            self.row(
                "retry",
                Status::NotApplicable,
                "not a writer that takes an idempotency key".into(),
            );
            return Ok(());
        }
        let Some((title, input, _)) = self.examples.iter().find(|(_, _, o)| o == "ok").cloned()
        else {
            self.row(
                "retry",
                Status::Fail,
                "a writer with an idempotency key has no ok example".into(),
            );
            return Ok(());
        };
        let (s, ctx) = self.probe.fresh()?;
        let mut keyed = input;
        keyed["idempotency_key"] = json!("seneschal-conformance-retry");
        // The first call is received and applied, but its answer is lost.
        let (_, first) = around(&s.path, &ctx, || call(&ctx, self.index, &keyed));
        let (retry, second) = around(&s.path, &ctx, || call(&ctx, self.index, &keyed));
        let only_audit = second.iter().all(|c| c.contains("audit"));
        self.row(
            "retry",
            verdict(retry == "ok" && only_audit),
            format!(
                "`{title}` applied ({}), retried with the same key → {retry}; the retry changed: {}",
                first.join(", "),
                if second.is_empty() {
                    "nothing".into()
                } else {
                    second.join(", ")
                }
            ),
        );
        Ok(())
    }
}

/// The existing files a delta changed or removed (an addition is not among them).
fn overwritten(delta: &[String]) -> Vec<&str> {
    delta
        .iter()
        .filter(|c| c.starts_with("tree: changed ") || c.starts_with("tree: removed "))
        .map(String::as_str)
        .collect()
}

/// The claims of a capability's hints and effect, judged over every delta its calls made:
/// `readOnlyHint` → nothing changed; `destructiveHint: false` → no existing file's bytes
/// changed and none removed (every file of the tree is hashed before and after each call: an
/// additive writer may only add); `process_state` → no file changed; `repository_write` →
/// at least one example shows an effect, and `.git` untouched without `git_state`, changed by
/// at least one example with it.
fn claims(
    d: &Descriptor,
    hints: Hints,
    deltas: &[(String, Vec<String>)],
    example_effects: usize,
) -> (Status, String) {
    let mut broken = Vec::new();
    for (what, delta) in deltas {
        if hints.read_only && !delta.is_empty() {
            broken.push(format!(
                "readOnlyHint, but {what} changed: {}",
                delta.join(", ")
            ));
        }
        let overwritten = overwritten(delta);
        if !hints.read_only && !hints.destructive && !overwritten.is_empty() {
            broken.push(format!(
                "destructiveHint false, but {what} changed existing files: {}",
                overwritten.join(", ")
            ));
        }
        if d.effect == Effect::ProcessState && !Snapshot::files_changed(delta).is_empty() {
            broken.push(format!(
                "process_state, but {what} changed files: {}",
                Snapshot::files_changed(delta).join(", ")
            ));
        }
        if d.effect == Effect::RepositoryWrite
            && !d.git_state
            && delta.iter().any(|c| c.starts_with(".git:"))
        {
            broken.push(format!(
                "repository_write without git_state must not touch .git, but {what} did"
            ));
        }
    }
    if d.effect == Effect::RepositoryWrite && example_effects == 0 {
        broken.push("repository_write, but no example shows an effect".into());
    }
    let git_examples = deltas
        .iter()
        .filter(|(what, delta)| {
            what.starts_with("example ") && delta.iter().any(|c| c.starts_with(".git:"))
        })
        .count();
    if d.git_state && git_examples == 0 {
        broken.push("git_state, but no example changes .git".into());
    }
    if broken.is_empty() {
        let additive = if d.additive { " additive" } else { "" };
        let git_state = if d.git_state { " git_state" } else { "" };
        (
            Status::Pass,
            format!(
                "effect {}{additive}{git_state}: readOnly={} idempotent={} destructive={} held over {} call(s)",
                d.effect.as_str(),
                hints.read_only,
                hints.idempotent,
                hints.destructive,
                deltas.len()
            ),
        )
    } else {
        (Status::Fail, broken.join("; "))
    }
}

/// Exit code of `seneschal conformance` when a claim was falsified (the codes table's).
pub use seneschal_model::codes::EXIT_FALSIFIED;

/// Whether every row passed or does not apply.
pub fn passed(rows: &[Row]) -> bool {
    rows.iter().all(|r| r.status != Status::Fail)
}

/// The report as a table (capability × check), then the evidence of every failure.
pub fn table(rows: &[Row]) -> String {
    let mut ids: Vec<&str> = rows.iter().map(|r| r.capability).collect();
    ids.dedup();
    let width = ids.iter().map(|i| i.len()).max().unwrap_or(10).max(10);
    let mut s = format!("{:<width$}", "capability");
    for c in CHECKS {
        let _ = write!(s, "  {c:<10}");
    }
    s = s.trim_end().to_string();
    s.push('\n');
    for id in &ids {
        let mut line = format!("{id:<width$}");
        for c in CHECKS {
            let st = rows
                .iter()
                .find(|r| r.capability == *id && r.check == c)
                .map_or("-", |r| r.status.as_str());
            let _ = write!(line, "  {st:<10}");
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    let failures: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Fail).collect();
    let _ = writeln!(
        s,
        "\n{} capabilities, {} checks: {} passed, {} failed, {} not applicable",
        ids.len(),
        rows.len(),
        rows.iter().filter(|r| r.status == Status::Pass).count(),
        failures.len(),
        rows.iter()
            .filter(|r| r.status == Status::NotApplicable)
            .count()
    );
    for r in failures {
        let _ = writeln!(s, "FAIL {} {}: {}", r.capability, r.check, r.evidence);
    }
    s
}

/// The report as JSON.
pub fn to_json(rows: &[Row]) -> Value {
    json!({
        "passed": passed(rows),
        "rows": rows.iter().map(|r| json!({
            "capability": r.capability, "check": r.check, "status": r.status.as_str(), "evidence": r.evidence,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claims over what a stand-in handler did to a scratch folder.
    fn judged(d: &Descriptor, dir: &Path, act: impl FnOnce()) -> (Status, String) {
        let ctx = Context::new(dir.to_path_buf(), Effect::RepositoryWrite);
        let ((), delta) = around(dir, &ctx, act);
        claims(d, d.hints(), &[("the call".into(), delta)], 1)
    }

    #[test]
    fn the_harness_approves_the_writes_it_runs_and_the_audit_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf(), Effect::RepositoryWrite);
        let (index, _) = seneschal_core::registry::find("knowledge.create").expect("registered");
        let input =
            json!({"kind": "guide", "id": "h", "front_matter": {"title": "H", "status": "draft"}});
        // Outside the harness nobody approves the write.
        let e = execute_index(
            &ctx,
            index,
            input.clone(),
            seneschal_core::execute::Caller::unasked(Transport::Conformance),
        )
        .unwrap_err();
        assert_eq!(e.code, seneschal_model::codes::ErrorCode::NotApproved);
        assert!(!dir.path().join("docs/guides/h.md").exists());
        harness_call(&ctx, index, input).expect("the harness approves what it runs");
        assert!(dir.path().join("docs/guides/h.md").is_file());
        let records = seneschal_core::store::records(dir.path()).unwrap();
        let last = records.last().unwrap();
        assert_eq!(
            (&last["outcome"], &last["approved_by"]),
            (&json!("applied"), &json!("harness")),
            "{last}"
        );
    }

    #[test]
    fn an_additive_writer_that_changes_an_existing_file_is_caught() {
        let d = CAPABILITIES
            .iter()
            .find(|d| d.additive && !d.git_state)
            .expect("the registry has an additive writer");
        assert!(!d.hints().destructive && d.effect == Effect::RepositoryWrite);
        let dir = tempfile::tempdir().expect("temp dir");
        let (kept, new) = (dir.path().join("kept.md"), dir.path().join("new.md"));
        std::fs::write(&kept, "old bytes").expect("write");

        // Adding a file keeps the claim.
        let (status, evidence) = judged(d, dir.path(), || std::fs::write(&new, "x").unwrap());
        assert_eq!(status, Status::Pass, "{evidence}");
        assert!(evidence.contains("additive"), "{evidence}");

        // Rewriting an existing file, even to the same length, is caught and named.
        let (status, evidence) = judged(d, dir.path(), || {
            std::fs::write(&kept, "new bytes").unwrap()
        });
        assert_eq!(status, Status::Fail);
        assert_eq!(
            evidence,
            "destructiveHint false, but the call changed existing files: tree: changed kept.md"
        );

        // Removing one is caught too.
        let (status, evidence) = judged(d, dir.path(), || std::fs::remove_file(&new).unwrap());
        assert_eq!(status, Status::Fail);
        assert!(evidence.contains("tree: removed new.md"), "{evidence}");

        // The same rewrite by a destructive writer breaks no claim.
        let destructive = CAPABILITIES
            .iter()
            .find(|d| d.effect == Effect::RepositoryWrite && !d.additive && !d.git_state)
            .expect("the registry has a destructive writer");
        let (status, evidence) = judged(destructive, dir.path(), || {
            std::fs::write(&kept, "other bytes").unwrap()
        });
        assert_eq!(status, Status::Pass, "{evidence}");
    }

    /// A writer without `git_state` that touches `.git` breaks its claim; one with it must
    /// change `.git` in an example, and may.
    #[test]
    fn git_state_is_held_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/refs/heads")).unwrap();
        let plain = CAPABILITIES
            .iter()
            .find(|d| d.effect == Effect::RepositoryWrite && !d.git_state)
            .expect("a writer of files");
        let gitted = CAPABILITIES
            .iter()
            .find(|d| d.git_state)
            .expect("a writer of git state");
        let touch = || {
            std::fs::write(dir.path().join(".git/refs/heads/x"), "0\n").unwrap();
        };
        let (status, evidence) = judged(plain, dir.path(), touch);
        assert_eq!(status, Status::Fail);
        assert!(evidence.contains("without git_state"), "{evidence}");
        // The label of `judged` is no example: a git writer whose examples leave .git alone fails.
        let (status, evidence) = judged(gitted, dir.path(), || {
            std::fs::write(dir.path().join(".git/refs/heads/y"), "0\n").unwrap();
        });
        assert_eq!(status, Status::Fail);
        assert!(evidence.contains("no example changes .git"), "{evidence}");
        let ctx = Context::new(dir.path().to_path_buf(), Effect::RepositoryWrite);
        let ((), delta) = around(dir.path(), &ctx, || {
            std::fs::write(dir.path().join(".git/refs/heads/z"), "0\n").unwrap();
        });
        let (status, evidence) =
            claims(gitted, gitted.hints(), &[("example `z`".into(), delta)], 1);
        assert_eq!(status, Status::Pass, "{evidence}");
    }
}
