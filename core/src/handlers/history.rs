//! Handlers of the history part of the `repo.*` group: log, diff, show, blame and branches,
//! read through `git` ([`seneschal_access::git`], its one command builder).
//!
//! Everything a client names is untrusted: a revision is resolved to a commit id before it
//! reaches a diff ([`git::resolve_commit`]: one that begins with `-` is `invalid_input`, one
//! that names nothing `not_found`), and every path is confined ([`seneschal_access::confine::confine`])
//! and passed after `--` (the builder also sets `--literal-pathspecs`). Changes of `.git` and
//! of secret-bearing files are left out of diffs by name, as `files.search` leaves them out,
//! and counted. The files and the patch come from one git run ([`git::diff_with_patch`]),
//! the patch kept up to a byte cap and cut on a line boundary (git's output past it counted for
//! the files' line counts, a cap's worth more kept); when a file was left out, its section is
//! taken out and the cap filled again from what was kept, or, when too little was, the patch
//! is read again naming only the files shown.
//! The whole blobs of the YAML and JSON files shown are read while git still writes the patch,
//! as soon as its records name them, and the content gate judges the patch as git writes it
//! (each section once whole, [`git::Judging`]), the blobs of the files it flags read on a thread
//! while git goes on. These handlers apply the content gate to a patch (each
//! hunk redacted as its whole file reads) and otherwise leave disclosure to the executor: every answer of the
//! group is `repository` disclosure, so the executor redacts it whole before any transport
//! (see [`crate::execute`]).

use crate::context::Call;
use crate::registry::types::{repo_blame, repo_branches, repo_diff, repo_log, repo_show};
use seneschal_access::confine;
use seneschal_access::error::CapabilityError;
use seneschal_access::git::{self, DiffSpec, FileDiff, LogSpec};

/// The smallest patch cap (the schema's minimum of `max_bytes`).
const MIN_PATCH_CAP: usize = 1024;

/// Whether the content gate withholds `path` by name ([`seneschal_access::gate::name`]).
fn hidden(path: &str) -> bool {
    seneschal_access::gate::name(path).is_some()
}

/// The files of `spec` under `paths` with a hidden name left out, and how many were.
fn shown(all: Vec<FileDiff>) -> (Vec<FileDiff>, u64) {
    let before = all.len();
    let shown: Vec<FileDiff> = all.into_iter().filter(is_shown).collect();
    let skipped = (before - shown.len()) as u64;
    (shown, skipped)
}

/// Whether a diff shows the file: neither side's name is hidden.
fn is_shown(f: &FileDiff) -> bool {
    !hidden(&f.path) && !f.from.as_deref().is_some_and(hidden)
}

/// What a diff answers: the files shown, how many were left out, and (unless `stat`) the patch
/// and whether it was cut. One git run gives the files and the patch; when a file was left
/// out, its section goes and the cap is filled from the patch read past it, or the patch is
/// read again naming the files shown one by one (both sides of a rename), so nothing hidden
/// reaches it.
struct Diffed {
    files: Vec<FileDiff>,
    skipped: u64,
    patch: Option<String>,
    truncated: bool,
    /// Secrets the content gate replaced in the patch (the executor adds its own).
    redactions: u64,
}

fn diffed(
    root: &std::path::Path,
    spec: &DiffSpec,
    paths: &[String],
    stat: bool,
    context: i64,
    max_bytes: i64,
) -> Result<Diffed, CapabilityError> {
    if stat {
        let (files, skipped) = shown(git::diff_files(root, spec, paths)?);
        return Ok(Diffed {
            files,
            skipped,
            patch: None,
            truncated: false,
            redactions: 0,
        });
    }
    let cap = usize::try_from(max_bytes)
        .unwrap_or(usize::MAX)
        .max(MIN_PATCH_CAP);
    let context = u64::try_from(context).unwrap_or(0);
    // The blobs of the YAML and JSON files shown, whose hunks are redacted by the whole file's
    // redaction: read while git still writes the patch, as soon as its records name them.
    let whole_ids = |all: &[FileDiff]| -> Vec<String> {
        all.iter()
            .filter(|f| is_shown(f) && seneschal_access::gate::spans_lines(&f.path))
            .flat_map(|f| [f.ids.0.clone(), f.ids.1.clone()])
            .flatten()
            .collect()
    };
    // The blobs of the files whose sections the gate judges by content: the patch is judged
    // as git writes it (each section once it is whole, the rest at the cap), and the blobs of
    // the files flagged are read on a thread while git goes on (one read at a time, each
    // taking every blob flagged since the last began).
    let fetch = |ids: Vec<String>| {
        move || {
            let mut cache = git::BlobCache::default();
            cache.fetch(root, &ids).map(|()| cache)
        }
    };
    let mut judging = git::Judging::default();
    // The patch gate's redaction of each section, also done as git writes them (each once
    // whole), but for the YAML and JSON files', which the whole file's redaction goes through
    // first.
    let mut gated = seneschal_access::gate::GatedSections::default();
    let mut gated_to = 0;
    let (diffed, mut cache) = std::thread::scope(|scope| {
        // The files shown, as soon as git's records name them, and their section headers.
        let records: std::cell::RefCell<Option<(Vec<FileDiff>, git::Headers)>> = Default::default();
        let mut early = None;
        let mut reads: Vec<std::thread::ScopedJoinHandle<'_, _>> = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut asked: std::collections::HashSet<String> = Default::default();
        // Up to a cap's worth of the patch past the cap is kept, so that sections the gate
        // leaves out are replaced from it, not by asking git again.
        let diffed = git::diff_with_patch(
            root,
            spec,
            paths,
            context,
            cap,
            cap,
            &mut |all| {
                let ids = whole_ids(&all);
                if !ids.is_empty() {
                    early = Some(scope.spawn(fetch(ids)));
                }
                let shown: Vec<FileDiff> = all.into_iter().filter(is_shown).collect();
                let headers = git::Headers::of(&shown);
                *records.borrow_mut() = Some((shown, headers));
            },
            &mut |patch, at_cap| {
                let records = records.borrow();
                let Some((shown, headers)) = records.as_ref() else {
                    return;
                };
                let flagged = if at_cap {
                    judging.rest(patch)
                } else {
                    judging.whole_sections(patch)
                };
                let whole_file = |header: &[u8]| {
                    headers.named(header).is_none_or(|named| {
                        named
                            .iter()
                            .any(|&i| seneschal_access::gate::spans_lines(&shown[i].path))
                    })
                };
                gated_to = gated.add_whole(patch, gated_to, &whole_file);
                if !flagged.is_empty() {
                    let ids = git::judged_blobs(shown, &headers.files_of(&flagged)).0;
                    pending.extend(ids.into_iter().filter(|id| asked.insert(id.clone())));
                }
                let idle = reads.last().is_none_or(|r| r.is_finished());
                if !pending.is_empty() && (idle || at_cap) {
                    reads.push(scope.spawn(fetch(std::mem::take(&mut pending))));
                }
            },
        );
        // Every read lands in one cache; a blob any missed is read when the gate asks.
        let mut cache = git::BlobCache::default();
        for read in early.into_iter().chain(reads) {
            if let Ok(Ok(more)) = read.join() {
                cache.merge(more);
            }
        }
        (diffed, cache)
    });
    let (all, read) = diffed?;
    let (mut patch, mut truncated) = (read.shown, read.truncated);
    let known: std::collections::HashSet<String> = all.iter().map(FileDiff::patch_header).collect();
    // Two files sharing a header (two renames can) leave no way to tell their sections apart.
    let distinct = known.len() == all.len();
    let whole_ids = whole_ids(&all);
    let (mut files, mut skipped) = shown(all);
    // The content gate: a file whose whole blob (either side) holds a private key is left
    // out of the patch like a secret-bearing name, and counted with them.
    let worktree = !spec.cached && spec.to.is_none();
    // Every blob the gate reads is read once: those read while git ran (above), and in one
    // more git run any the gate judges that were not. The sections judged while git ran are
    // not judged again, unless the patch shown is not the bytes judged (invalid UTF-8
    // replaced).
    if !read.exact {
        judging = git::Judging::default();
    }
    judging.rest(patch.as_bytes());
    let flagged = judging.flagged(&files);
    let withheld =
        git::withheld_by_content(root, &files, &flagged, worktree, &mut cache, &whole_ids)?;
    if !withheld.is_empty() {
        skipped += withheld.len() as u64;
        let mut i = 0;
        files.retain(|_| {
            i += 1;
            !withheld.contains(&(i - 1))
        });
    }
    if skipped > 0 {
        // The files shown keep their sections of the patch already read, the cap filled again
        // from what was read past it; only a section no file claims, or a cut patch whose
        // shown sections are fewer bytes than the cap holds, asks git again, naming the files
        // shown.
        let kept: std::collections::HashSet<String> =
            files.iter().map(FileDiff::patch_header).collect();
        let cut = if distinct {
            patch.push_str(&read.beyond);
            git::keep_sections(&patch, &kept, &known).and_then(|sections| {
                let (shown, cut) = git::cut_patch(sections, cap);
                (cut || read.whole).then_some((shown, cut))
            })
        } else {
            None
        };
        (patch, truncated) = if let Some(cut) = cut {
            cut
        } else if files.is_empty() {
            (String::new(), false)
        } else {
            let named: Vec<String> = files
                .iter()
                .flat_map(|f| std::iter::once(f.path.clone()).chain(f.from.clone()))
                .collect();
            git::diff_patch(root, spec, &named, context, cap)?
        };
    }
    // Each hunk redacted as its file reads (the content gate), before the executor's pass:
    // YAML and JSON files by the whole file's redaction, every hunk by its two sides (the
    // sections gated while git wrote them taken as they were gated).
    let (mut patch, mut redactions) = (patch, 0u64);
    let whole: Vec<&FileDiff> = files
        .iter()
        .filter(|f| seneschal_access::gate::spans_lines(&f.path))
        .collect();
    if !whole.is_empty() {
        let (text, n) = git::redact_by_whole_files(root, &whole, &patch, worktree, &mut cache)?;
        patch = text;
        redactions += n as u64;
    }
    if let Some((text, n)) = gated.redacted(&patch) {
        patch = text;
        redactions += n as u64;
    }
    Ok(Diffed {
        files,
        skipped,
        patch: Some(patch),
        truncated,
        redactions,
    })
}

/// The repository's top folder: the context's root, where `.git` is, pinned
/// ([`seneschal_access::gitdir::pin`]) before anything of the call is read: no `.git` is `not_found`, a
/// layout that leads outside the root is `refused`. No git run: a call pays for the git
/// commands that answer it, not for one that finds the root.
fn top(ctx: &Call) -> Result<std::path::PathBuf, CapabilityError> {
    seneschal_access::gitdir::pin(&ctx.repo).map_err(|u| u.into_error("the repository"))?;
    Ok(ctx.repo.clone())
}

/// A change kind of [`git`]'s spelling as the generated enum of an answer (the enums spell
/// them alike); a kind the schema does not know reads as modified.
fn change<C: std::str::FromStr>(kind: &str, modified: C) -> C {
    kind.parse().unwrap_or(modified)
}

/// `repo.diff`: the working tree or the index against the index, HEAD, a revision, or two
/// revisions against each other.
pub fn diff(ctx: &Call, input: repo_diff::Input) -> Result<repo_diff::Output, CapabilityError> {
    if input.to.is_some() && input.from.is_none() {
        return Err(CapabilityError::invalid_input(
            "`to` needs `from`: the diff goes from one to the other",
        )
        .at("/to"));
    }
    if input.to.is_some() && input.staged {
        return Err(CapabilityError::invalid_input(
            "`staged` compares the index; with `to` both sides are revisions",
        )
        .at("/staged"));
    }
    let mut paths = Vec::new();
    for (i, p) in input.paths.iter().enumerate() {
        let confined = confine::confine(&ctx.repo, p, &format!("/paths/{i}"))?;
        if confined.rel.is_empty() {
            // The root: the whole tree, as no path at all.
            paths.clear();
            break;
        }
        paths.push(confined.rel);
    }
    let root = top(ctx)?;
    let mut revs: Vec<(&str, &str)> = Vec::new();
    revs.extend(input.from.as_deref().map(|r| (r.as_str(), "/from")));
    revs.extend(input.to.as_deref().map(|r| (r.as_str(), "/to")));
    let mut ids = git::resolve_commits(&root, &revs)?.into_iter();
    let from = input.from.as_ref().and_then(|_| ids.next());
    let to = input.to.as_ref().and_then(|_| ids.next());
    let spec = DiffSpec {
        cached: input.staged,
        from: from.clone(),
        to: to.clone(),
    };
    let d = diffed(
        &root,
        &spec,
        &paths,
        input.stat,
        input.context,
        input.max_bytes,
    )?;
    Ok(repo_diff::Output {
        from,
        to,
        files: d
            .files
            .into_iter()
            .map(|f| repo_diff::OutputFilesItem {
                binary: f.additions.is_none(),
                additions: f.additions.unwrap_or(0),
                deletions: f.deletions.unwrap_or(0),
                change: change(f.change, repo_diff::OutputFilesItemChange::Modified),
                from: f.from,
                path: f.path,
            })
            .collect(),
        skipped_secret_files: d.skipped,
        patch: d.patch,
        truncated: d.truncated,
        redactions: d.redactions,
    })
}

/// `repo.show`: one commit, its files against its first parent, and optionally its patch.
pub fn show(ctx: &Call, input: repo_show::Input) -> Result<repo_show::Output, CapabilityError> {
    let root = top(ctx)?;
    let sha = git::resolve_commit(&root, input.rev.as_str(), "/rev")?;
    // The commit's fields and its diff against its first parent come from two git runs, run
    // side by side.
    let base = match git::first_parent(&root, &sha)? {
        Some(parent) => parent,
        None => git::empty_tree(&root, &sha)?,
    };
    let spec = DiffSpec {
        cached: false,
        from: Some(base),
        to: Some(sha.clone()),
    };
    let (detail, d) = std::thread::scope(|s| {
        let detail = s.spawn(|| git::commit_detail(&root, &sha));
        let d = diffed(
            &root,
            &spec,
            &[],
            !input.patch,
            input.context,
            input.max_bytes,
        );
        let detail = detail
            .join()
            .unwrap_or_else(|_| Err(CapabilityError::internal("reading the commit failed")));
        (detail, d)
    });
    let (detail, d) = (detail?, d?);
    let c = detail.commit;
    let detail_truncated = detail.truncated;
    Ok(repo_show::Output {
        sha: c.sha,
        parents: c.parents,
        author_name: c.author_name,
        author_email: c.author_email,
        authored_at: c.authored_at,
        committer_name: detail.committer_name,
        committer_email: detail.committer_email,
        committed_at: detail.committed_at,
        subject: c.subject,
        message: detail.message,
        files: d
            .files
            .into_iter()
            .map(|f| repo_show::OutputFilesItem {
                binary: f.additions.is_none(),
                additions: f.additions.unwrap_or(0),
                deletions: f.deletions.unwrap_or(0),
                change: change(f.change, repo_show::OutputFilesItemChange::Modified),
                from: f.from,
                path: f.path,
            })
            .collect(),
        skipped_secret_files: d.skipped,
        patch: d.patch,
        truncated: d.truncated || detail_truncated,
        redactions: d.redactions,
    })
}

/// `repo.blame`: who last changed each line of a range of one confined file.
pub fn blame(ctx: &Call, input: repo_blame::Input) -> Result<repo_blame::Output, CapabilityError> {
    let path = input.path.as_str();
    let root = top(ctx)?;
    let rel = confine::confine(&ctx.repo, path, "/path")?.rel;
    let rev = match input.rev.as_deref() {
        Some(r) => Some(git::resolve_commit(&root, r, "/rev")?),
        None => None,
    };
    if rel.is_empty() {
        return Err(
            CapabilityError::invalid_input("the repository root is a folder, not a file")
                .at("/path"),
        );
    }
    // The content gate judges the whole file before git cuts it into lines: a key file is
    // refused whole, at a revision as in the working tree.
    let whole = match rev.as_deref() {
        None => seneschal_access::gate::worktree_file(&root, &rel, path, "/path")?,
        Some(commit) => {
            let blob = git::blob_at(&root, commit, &rel, seneschal_access::gate::WHOLE_CAP)?
                .ok_or_else(|| {
                    CapabilityError::not_found(format!("`{path}` does not exist at that revision"))
                        .at("/path")
                })?;
            seneschal_access::gate::checked(blob, path, "/path")?
        }
    };
    let redacted = seneschal_access::gate::redacted_lines(&whole);
    drop(whole);
    let start = input.start.get();
    let limit = input.limit.get();
    let last = start.saturating_add(limit - 1);
    let (end, wanted_more) = match input.end.map(|e| e.get()) {
        Some(e) if e < start => {
            return Err(CapabilityError::invalid_input(format!(
                "the range ends at line {e}, before its start at line {start}"
            ))
            .at("/end"))
        }
        Some(e) if e > last => (last, true),
        Some(e) => (e, false),
        // One line more than the limit tells whether the file goes on.
        None => (last.saturating_add(1), false),
    };
    let mut blame = git::blame(&root, &rel, rev.as_deref(), start, end).map_err(|f| {
        if f.stderr.contains("has only") {
            CapabilityError::invalid_input(format!("`{path}` has fewer than {start} lines"))
                .at("/start")
        } else if f.stderr.contains("no such path") || f.stderr.contains("no such file") {
            CapabilityError::not_found(format!("`{path}` does not exist at that revision"))
                .at("/path")
        } else {
            f.into_error("the blame")
        }
    })?;
    let keep = usize::try_from(limit).unwrap_or(usize::MAX);
    let truncated = wanted_more || blame.lines.len() > keep;
    blame.lines.truncate(keep);
    // Each line as the whole file's redaction shows it (the content gate's reading); a line
    // number names one line, so its text is taken, not copied.
    if let Some(mut whole) = redacted {
        for l in &mut blame.lines {
            let at = usize::try_from(l.line).unwrap_or(usize::MAX);
            if let Some(text) = at.checked_sub(1).and_then(|i| whole.get_mut(i)) {
                l.text = std::mem::take(text);
            }
        }
    }
    // Each commit once, in the order of its first line (git's order of the commits' fields):
    // those of the lines kept are the first ones. A line names its commit alone.
    let used = blame.lines.iter().map(|l| l.commit + 1).max().unwrap_or(0);
    blame.commits.truncate(used);
    let items = blame
        .lines
        .into_iter()
        .filter_map(|l| {
            Some(repo_blame::OutputLinesItem {
                line: std::num::NonZeroU64::new(l.line)?,
                commit: blame.commits[l.commit].commit.clone(),
                text: l.text,
            })
        })
        .collect();
    let commits = blame
        .commits
        .into_iter()
        .map(|c| repo_blame::OutputCommitsItem {
            authored_at: crate::store::rfc3339(c.author_time),
            commit: c.commit,
            author: c.author,
            author_email: c.author_email,
            summary: c.summary,
        })
        .collect();
    Ok(repo_blame::Output {
        path: rel,
        lines: items,
        commits,
        truncated,
    })
}

/// `repo.branches`: local and remote-tracking branches with heads and upstreams.
pub fn branches(
    ctx: &Call,
    input: repo_branches::Input,
) -> Result<repo_branches::Output, CapabilityError> {
    let root = top(ctx)?;
    let mut list = git::branches(&root, input.remote)?;
    let limit = usize::try_from(input.limit.get()).unwrap_or(usize::MAX);
    let truncated = list.len() > limit;
    list.truncate(limit);
    Ok(repo_branches::Output {
        branches: list
            .into_iter()
            .map(|b| repo_branches::OutputBranchesItem {
                kind: if b.remote {
                    repo_branches::OutputBranchesItemKind::Remote
                } else {
                    repo_branches::OutputBranchesItemKind::Local
                },
                name: b.name,
                head: b.head,
                subject: b.subject,
                current: b.current,
                upstream: b.upstream,
                ahead: b.ahead,
                behind: b.behind,
            })
            .collect(),
        truncated,
    })
}

/// The commit ids a client's `rev` names for a log: one revision, or a range `a..b` or
/// `a...b` (an empty side is HEAD, as git reads it), each side resolved to a commit id
/// ([`git::resolve_commits`]: one that begins with `-` is `invalid_input`, one that names no
/// commit `not_found`), so git is handed ids alone.
fn log_revs(root: &std::path::Path, rev: &str) -> Result<String, CapabilityError> {
    git::check_revision(rev, "/rev")?;
    let (a, dots, b) = match rev.find("..") {
        Some(at) if rev[at..].starts_with("...") => (&rev[..at], "...", &rev[at + 3..]),
        Some(at) => (&rev[..at], "..", &rev[at + 2..]),
        None => return git::resolve_commit(root, rev, "/rev"),
    };
    let side = |s: &'_ str| {
        if s.is_empty() {
            "HEAD".to_string()
        } else {
            s.to_string()
        }
    };
    let (a, b) = (side(a), side(b));
    let ids = git::resolve_commits(root, &[(a.as_str(), "/rev"), (b.as_str(), "/rev")])?;
    Ok(format!("{}{dots}{}", ids[0], ids[1]))
}

/// A client's `since` or `until` as git reads it exactly ([`git::log_date_at`]: an ISO date,
/// or a form people type read against the clock now, in UTC), or `invalid_input` naming the
/// forms it reads.
fn log_bound(
    text: Option<&str>,
    end_of_day: bool,
    field: &str,
) -> Result<Option<String>, CapabilityError> {
    let Some(text) = text else { return Ok(None) };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    git::log_date_at(text, end_of_day, now)
        .map(Some)
        .ok_or_else(|| {
            CapabilityError::invalid_input(format!(
                "`{text}` is not a date seneschal reads: it takes {}",
                git::LOG_DATE_FORMS
            ))
            .at(field)
        })
}

/// `repo.log`: the last commits of HEAD, of a revision or of a range, optionally of one
/// confined path and between two committer dates.
pub fn log(ctx: &Call, input: repo_log::Input) -> Result<repo_log::Output, CapabilityError> {
    let since = log_bound(input.since.as_deref().map(|s| s.as_str()), false, "/since")?;
    let until = log_bound(input.until.as_deref().map(|s| s.as_str()), true, "/until")?;
    if let Some(rev) = input.rev.as_deref() {
        git::check_revision(rev, "/rev")?;
    }
    let path = match input.path.as_deref() {
        Some(p) => {
            let confined = confine::confine(&ctx.repo, p, "/path")?;
            // The root itself (`.`) means the whole history.
            Some(confined.rel).filter(|r| !r.is_empty())
        }
        None => None,
    };
    let root = top(ctx)?;
    let revs = match input.rev.as_deref() {
        Some(rev) => vec![log_revs(&root, rev)?],
        None => Vec::new(),
    };
    let spec = LogSpec {
        revs,
        since,
        until,
        path: path.as_deref(),
    };
    let limit = input.limit.get();
    // One commit more than asked tells whether the history goes on. Each commit is given to
    // the executor as git writes the next (encoded and disclosed meanwhile): the answer's
    // `commits` is filled there.
    let mut read: u64 = 0;
    let cut = git::log(&root, limit.saturating_add(1), &spec, &mut |c| {
        read += 1;
        if read <= limit {
            ctx.part(
                "commits",
                &repo_log::OutputCommitsItem {
                    sha: c.sha,
                    parents: c.parents,
                    author_name: c.author_name,
                    author_email: c.author_email,
                    authored_at: c.authored_at,
                    subject: c.subject,
                },
            );
        }
    })?;
    let truncated = cut || read > limit;
    let commits = Vec::new();
    Ok(repo_log::Output { commits, truncated })
}
