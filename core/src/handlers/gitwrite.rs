//! Handlers of the git writes: `repo.stage`, `repo.unstage`, `repo.commit`,
//! `repo.branch.create`, `repo.switch` and `repo.restore`.
//!
//! Each prepares the files it writes (working-tree files, `.git/index`, a ref file,
//! `.git/HEAD`) with the plumbing of [`crate::gitwrite`], then either answers the plan
//! (`dry_run`, with any object git makes sent to a private folder) or applies it through
//! [`crate::store::transact`]: under the repository lock, the intent in the audit log first,
//! idempotency keys and the settlement of an interrupted write as for every other write.

use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::context::Call;
use crate::gitwrite::{self, Work};
use crate::registry::types::{
    repo_branch_create, repo_commit, repo_restore, repo_stage, repo_switch, repo_unstage,
};
use crate::store::{self, BranchName, Effects, GitFile, Target};
use seneschal_access::confine;
use seneschal_access::error::CapabilityError;

/// A git write ready to apply.
struct Prepared {
    writes: Vec<store::Write>,
    modes: Vec<(String, u32)>,
    effects: Effects,
    /// The capability's own answer fields.
    fields: Value,
    /// The arguments of the review sentence.
    review: Value,
}

impl Prepared {
    fn new(fields: Value, review: Value) -> Prepared {
        Prepared {
            writes: Vec::new(),
            modes: Vec::new(),
            effects: Effects::default(),
            fields,
            review,
        }
    }

    /// Plans `bytes` (`None`: delete) at the working-tree file `path` (from a tree or an
    /// index: [`Target::tree`] refuses `.git` and `.seneschal/` in every spelling), created or
    /// changed as the file stands now.
    fn write(
        &mut self,
        ctx: &Call,
        path: &str,
        bytes: Option<Vec<u8>>,
    ) -> Result<(), CapabilityError> {
        self.plan(ctx, Target::tree(path, "/paths")?, bytes)
    }

    /// Plans `bytes` at a git file the store writes itself.
    fn git(
        &mut self,
        ctx: &Call,
        file: GitFile,
        bytes: Option<Vec<u8>>,
    ) -> Result<(), CapabilityError> {
        self.plan(ctx, Target::Git(file), bytes)
    }

    fn plan(
        &mut self,
        ctx: &Call,
        target: Target,
        bytes: Option<Vec<u8>>,
    ) -> Result<(), CapabilityError> {
        let path = target.rel();
        let exists = store::exists(&ctx.repo, &path)?;
        match (&bytes, exists) {
            (None, _) => self.effects.delete.push(path),
            (Some(_), true) => self.effects.change.push(path),
            (Some(_), false) => self.effects.create.push(path),
        }
        self.writes.push((target, bytes));
        Ok(())
    }
}

fn answer(id: &str, p: &Prepared, applied: bool, dry_run: bool) -> Value {
    let d = crate::registry::find(id)
        .expect("a registered capability")
        .1;
    let mut v = p.fields.clone();
    v["applied"] = json!(applied);
    v["dry_run"] = json!(dry_run);
    v["replayed"] = json!(false);
    v["plan"] = p.effects.plan();
    v["review"] = json!(d.render_review(&p.review));
    v
}

/// Runs a prepared git write: the plan alone (a dry run, whose objects go to a private
/// folder), or under the lock through the store, whose answer (kept for an idempotency key)
/// is read back into the output type.
fn run<I: Serialize, T: DeserializeOwned>(
    ctx: &Call,
    id: &str,
    input: &I,
    dry_run: bool,
    prepare: impl Fn(&Work) -> Result<Prepared, CapabilityError>,
) -> Result<T, CapabilityError> {
    let raw = serde_json::to_value(input).map_err(|e| CapabilityError::internal(e.to_string()))?;
    let value = super::plan_or_apply(ctx, id, &raw, dry_run, |dry| {
        let work = Work::new(&ctx.repo, dry)?;
        let p = prepare(&work)?;
        let answer = answer(id, &p, !dry && !p.writes.is_empty(), dry);
        Ok(store::Plan {
            writes: p.writes,
            modes: p.modes,
            effects: p.effects,
            answer,
        })
    })?;
    serde_json::from_value(value).map_err(|e| {
        CapabilityError::internal(format!(
            "the answer of `{id}` does not match its output type: {e}"
        ))
    })
}

/// The client's paths confined (`.` for the root), none in `.git/` or `.seneschal/`.
fn confined<P: std::ops::Deref<Target = String>>(
    ctx: &Call,
    paths: &[P],
) -> Result<Vec<String>, CapabilityError> {
    let mut out = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let field = format!("/paths/{i}");
        let rel = confine::confine(&ctx.repo, p, &field)?.rel;
        if rel == store::STATE_DIR || rel.starts_with(".seneschal/") {
            return Err(CapabilityError::refused(format!(
                "`{}` is in .seneschal/, seneschal's own state: it is never staged or restored",
                p.as_str()
            ))
            .at(field));
        }
        out.push(if rel.is_empty() { ".".into() } else { rel });
    }
    Ok(out)
}

/// Whether `path` is `rel` or under it (`.` holds everything).
fn under(path: &str, rel: &str) -> bool {
    rel == "." || path == rel || path.strip_prefix(rel).is_some_and(|r| r.starts_with('/'))
}

fn list(paths: &[String]) -> String {
    if paths.is_empty() {
        "none".into()
    } else {
        paths.join(", ")
    }
}

/// Plans the write of `.git/index` when the private copy's bytes differ from `before`.
fn plan_index(
    ctx: &Call,
    work: &Work,
    before: &Option<Vec<u8>>,
    p: &mut Prepared,
) -> Result<(), CapabilityError> {
    let after = work.read_index()?;
    if after.is_some() && &after != before {
        p.git(ctx, GitFile::Index, after)?;
    }
    Ok(())
}

/// `repo.stage`: `git add -A` of the paths on a copy of the index, the copy written back.
pub fn stage(ctx: &Call, input: repo_stage::Input) -> Result<repo_stage::Output, CapabilityError> {
    let rels = confined(ctx, &input.paths)?;
    let dry = input.dry_run.unwrap_or(false);
    run(ctx, "repo.stage", &input, dry, |work| {
        gitwrite::index_unlocked(&ctx.repo)?;
        let before = work.copy_index()?;
        let add = |work: &Work, files: &mut dyn Iterator<Item = &String>| {
            let mut spec = Vec::new();
            for f in files {
                spec.extend_from_slice(f.as_bytes());
                spec.push(0);
            }
            work.try_git(
                &["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
                Some(&work.index()),
                &[],
                &spec,
            )
        };
        // One git process where it can: the entries under the paths read from the index's
        // bytes, and git given the paths themselves (none of them holds `.seneschal/`, which
        // only `.` does). git refusing a path (nothing matches it, .gitignore ignores it) sends
        // the write the long way, which says which path and why.
        let fast = match &before {
            _ if rels.iter().any(|r| r == ".") => None,
            None => Some(BTreeMap::new()),
            Some(b) => gitwrite::index_entries(b, &rels),
        };
        let old = match fast {
            Some(old) if add(work, &mut rels.iter()).is_ok() => old,
            fast => {
                if fast.is_some() {
                    // git may have added the other paths before it refused one.
                    work.copy_index()?;
                }
                slow_listing(work, &input, &rels, |files| add(work, files))?
            }
        };
        let after = work.read_index()?;
        let new = match after.as_deref().map(|b| gitwrite::index_entries(b, &rels)) {
            Some(Some(new)) => new,
            _ => work.entries(&rels)?,
        };
        let changes = gitwrite::changed(&old, &new);
        let mut blobs = Vec::new();
        for (path, change) in &changes {
            if *change == "deleted" {
                continue;
            }
            if let Some(rule) = seneschal_access::gate::name(path) {
                return Err(confine::refusal(
                    rule,
                    path,
                    "secret-bearing files are never staged",
                    "/paths",
                ));
            }
            blobs.push((path.clone(), new[path].oid.clone()));
        }
        let oids: Vec<String> = blobs.iter().map(|(_, o)| o.clone()).collect();
        let found = if work.is_dry() {
            Vec::new()
        } else {
            seneschal_access::git::blobs(&ctx.repo, &oids, seneschal_access::gate::WHOLE_CAP)?
        };
        for ((path, _), blob) in blobs.iter().zip(found) {
            if let seneschal_access::git::Blob::Bytes(b) = blob {
                if let Some(rule) = seneschal_access::gate::content(&b) {
                    return Err(confine::refusal(
                        rule,
                        path,
                        "a file holding a private key block is never staged",
                        "/paths",
                    ));
                }
            }
        }
        if work.is_dry() {
            for (path, _) in &blobs {
                let bytes = store::read(&ctx.repo, path)?.unwrap_or_default();
                if let Some(rule) = seneschal_access::gate::content(&bytes) {
                    return Err(confine::refusal(
                        rule,
                        path,
                        "a file holding a private key block is never staged",
                        "/paths",
                    ));
                }
            }
        }
        let staged: Vec<Value> = changes
            .iter()
            .map(|(p, c)| json!({ "path": p, "change": c }))
            .collect();
        let names: Vec<String> = changes.iter().map(|(p, _)| p.clone()).collect();
        let mut p = Prepared::new(
            json!({ "staged": staged }),
            json!({ "count": names.len(), "files": list(&names) }),
        );
        if after.is_some() && after != before {
            p.git(ctx, GitFile::Index, after)?;
        }
        Ok(p)
    })
}

/// The long way of `repo.stage`: the entries under the paths and the files to stage in one
/// read of the index copy by git (every entry its pathspecs match, so that a file the index
/// lists and the working tree lost is staged as deleted, and every other file they match,
/// never one in `.seneschal/`), a path matching none of them refused by name, then `add`
/// given the files. Answers the entries before.
fn slow_listing(
    work: &Work,
    input: &repo_stage::Input,
    rels: &[String],
    add: impl FnOnce(
        &mut dyn Iterator<Item = &String>,
    ) -> Result<Vec<u8>, seneschal_access::git::Failure>,
) -> Result<BTreeMap<String, gitwrite::Entry>, CapabilityError> {
    let index = work.index();
    let mut args = vec![
        "ls-files",
        "-z",
        "-t",
        "-s",
        "-c",
        "-o",
        "--exclude-standard",
        "--",
    ];
    args.extend(rels.iter().map(String::as_str));
    let listed = work.git(&args, Some(&index), "the files to stage")?;
    let (old, others) = gitwrite::parse_tagged(&listed);
    let mut files: BTreeSet<String> = others.into_iter().collect();
    files.extend(old.keys().cloned());
    files.retain(|f| !f.starts_with(".seneschal/"));
    for (i, rel) in rels.iter().enumerate() {
        if !files.iter().any(|f| under(f, rel)) {
            return Err(CapabilityError::not_found(format!(
                "`{}` matches no file to stage (it does not exist, or .gitignore ignores it)",
                *input.paths[i]
            ))
            .at(format!("/paths/{i}")));
        }
    }
    add(&mut files.iter()).map_err(|f| f.into_error("git add"))?;
    Ok(old)
}

/// `repo.unstage`: the paths' index entries back to HEAD's (removed before the first commit).
pub fn unstage(
    ctx: &Call,
    input: repo_unstage::Input,
) -> Result<repo_unstage::Output, CapabilityError> {
    let rels = confined(ctx, &input.paths)?;
    let dry = input.dry_run.unwrap_or(false);
    run(ctx, "repo.unstage", &input, dry, |work| {
        gitwrite::index_unlocked(&ctx.repo)?;
        let head = gitwrite::head(&ctx.repo)?;
        let commit = gitwrite::head_commit(&ctx.repo, &head)?;
        let before = work.copy_index()?;
        let old = work.entries(&rels)?;
        let index = work.index();
        let mut spec = Vec::new();
        for r in &rels {
            spec.extend_from_slice(r.as_bytes());
            spec.push(0);
        }
        if before.is_some() {
            let args: Vec<&str> = match &commit {
                Some(c) => vec![
                    "reset",
                    "-q",
                    c.as_str(),
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                None => vec![
                    "rm",
                    "--cached",
                    "-r",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
            };
            work.try_git(&args, Some(&index), &[], &spec)
                .map_err(|f| f.into_error("git reset"))?;
        }
        let new = work.entries(&rels)?;
        let changes = gitwrite::changed(&old, &new);
        let unstaged: Vec<Value> = changes
            .iter()
            .map(|(p, c)| json!({ "path": p, "change": c }))
            .collect();
        let names: Vec<String> = changes.iter().map(|(p, _)| p.clone()).collect();
        let mut p = Prepared::new(
            json!({ "unstaged": unstaged }),
            json!({ "count": names.len(), "files": list(&names) }),
        );
        plan_index(ctx, work, &before, &mut p)?;
        Ok(p)
    })
}

/// `repo.commit`: `write-tree` and `commit-tree` of the index, then the branch's ref file (or
/// `.git/HEAD` when detached) moved to the new commit. No hook runs.
pub fn commit(
    ctx: &Call,
    input: repo_commit::Input,
) -> Result<repo_commit::Output, CapabilityError> {
    let text = input.message.trim_end();
    if text.trim().is_empty() {
        return Err(CapabilityError::invalid_input(
            "the commit message is empty: give a subject line",
        )
        .at("/message"));
    }
    if let Some(at) = text.find('\0') {
        let at = text[..at].chars().count();
        return Err(CapabilityError::invalid_input(format!(
            "the commit message holds a NUL byte (character {at}): git keeps none in a message"
        ))
        .at("/message"));
    }
    let message = format!("{text}\n");
    let subject = text
        .trim_start()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let dry = input.dry_run.unwrap_or(false);
    let allow_empty = input.allow_empty.unwrap_or(false);
    run(ctx, "repo.commit", &input, dry, |work| {
        gitwrite::loose_refs(&ctx.repo)?;
        gitwrite::index_unlocked(&ctx.repo)?;
        let head = gitwrite::head(&ctx.repo)?;
        let ref_file = head.ref_file();
        if std::fs::symlink_metadata(ctx.repo.join(format!("{ref_file}.lock"))).is_ok() {
            return Err(CapabilityError::conflict(format!(
                "{ref_file}.lock exists: a git process is moving the ref; retry when it is done"
            )));
        }
        let parent = gitwrite::head_commit(&ctx.repo, &head)?;
        let (author, committer) = gitwrite::identity(&ctx.repo, ctx.stand_in_identity.as_ref())?;
        work.copy_index()?;
        let index = work.index();
        let tree =
            String::from_utf8_lossy(&work.git(&["write-tree"], Some(&index), "git write-tree")?)
                .trim()
                .to_string();
        let parent_tree = match &parent {
            Some(c) => String::from_utf8_lossy(&seneschal_access::git::output(
                &ctx.repo,
                &[
                    "rev-parse",
                    "--verify",
                    "--end-of-options",
                    &format!("{c}^{{tree}}"),
                ],
                "the parent's tree",
            )?)
            .trim()
            .to_string(),
            None => seneschal_access::git::empty_tree(&ctx.repo, &tree)?,
        };
        if tree == parent_tree && !allow_empty {
            return Err(CapabilityError::invalid_input(
                "nothing is staged: stage files with repo.stage first (or set allow_empty)",
            ));
        }
        let diff = work.git(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--raw",
                "--numstat",
                "--no-renames",
                &parent_tree,
                &tree,
            ],
            None,
            "the committed files",
        )?;
        let files = seneschal_access::git::parse_raw_numstat(&diff)?;
        let (mut adds, mut dels) = (0u64, 0u64);
        let listed: Vec<Value> = files
            .iter()
            .map(|f| {
                adds += f.additions.unwrap_or(0);
                dels += f.deletions.unwrap_or(0);
                json!({ "path": f.path, "change": f.change, "additions": f.additions, "deletions": f.deletions })
            })
            .collect();
        let sha = if dry {
            None
        } else {
            let mut args = vec!["commit-tree", tree.as_str()];
            if let Some(pc) = &parent {
                args.extend(["-p", pc.as_str()]);
            }
            let env = gitwrite::identity_env(&author, &committer);
            let out = work
                .try_git(&args, None, &env, message.as_bytes())
                .map_err(|f| f.into_error("git commit-tree"))?;
            Some(String::from_utf8_lossy(&out).trim().to_string())
        };
        let branch = head.branch().map(str::to_string);
        let mut p = Prepared::new(
            json!({
                "commit": sha,
                "short": sha.as_ref().map(|s| s[..12.min(s.len())].to_string()),
                "branch": branch,
                "parent": parent,
                "subject": subject,
                "files": listed,
                "counts": { "files": files.len(), "additions": adds, "deletions": dels },
            }),
            json!({
                "count": files.len(),
                "branch": branch.clone().unwrap_or_else(|| "the detached HEAD".into()),
                "subject": subject,
            }),
        );
        let bytes = match &sha {
            Some(s) => format!("{s}\n").into_bytes(),
            // A dry run plans the same file with a stand-in (its digest is not the commit's).
            None => b"(the new commit)\n".to_vec(),
        };
        p.git(ctx, head.ref_target()?, Some(bytes))?;
        Ok(p)
    })
}

/// `repo.branch.create`: a new loose ref at a commit.
pub fn branch_create(
    ctx: &Call,
    input: repo_branch_create::Input,
) -> Result<repo_branch_create::Output, CapabilityError> {
    let dry = input.dry_run.unwrap_or(false);
    let name: String = input.name.to_string();
    let from: Option<String> = input.from.as_ref().map(|f| f.to_string());
    run(ctx, "repo.branch.create", &input, dry, |_work| {
        gitwrite::loose_refs(&ctx.repo)?;
        gitwrite::check_branch_name(&ctx.repo, &name, "/name")?;
        gitwrite::branch_free(&ctx.repo, &name, "/name")?;
        let commit = match &from {
            Some(rev) => {
                seneschal_access::git::resolve_commit(&ctx.repo, rev, "/from").map_err(|e| {
                    if e.code == seneschal_model::codes::ErrorCode::NotFound {
                        CapabilityError::invalid_input(format!("`from`: `{rev}` names no commit"))
                            .at("/from")
                    } else {
                        e
                    }
                })?
            }
            None => {
                let head = gitwrite::head(&ctx.repo)?;
                gitwrite::head_commit(&ctx.repo, &head)?.ok_or_else(|| {
                    CapabilityError::invalid_input(
                        "HEAD has no commit yet: commit first, or name one in `from`",
                    )
                    .at("/from")
                })?
            }
        };
        let mut p = Prepared::new(
            json!({ "branch": name, "commit": commit }),
            json!({ "branch": name, "short": &commit[..12.min(commit.len())] }),
        );
        p.git(
            ctx,
            GitFile::Branch(BranchName::new(&name, "/name")?),
            Some(format!("{commit}\n").into_bytes()),
        )?;
        Ok(p)
    })
}

/// `repo.switch`: the differing files, the index and HEAD, refused when it would lose work.
pub fn switch(
    ctx: &Call,
    input: repo_switch::Input,
) -> Result<repo_switch::Output, CapabilityError> {
    let dry = input.dry_run.unwrap_or(false);
    let create = input.create.unwrap_or(false);
    let name: String = input.branch.to_string();
    run(ctx, "repo.switch", &input, dry, |work| {
        // A branch to switch to or to create: a revision (`main~1`) is not one.
        gitwrite::check_branch_name(&ctx.repo, &name, "/branch")?;
        gitwrite::loose_refs(&ctx.repo)?;
        gitwrite::index_unlocked(&ctx.repo)?;
        let head = gitwrite::head(&ctx.repo)?;
        let previous = head.branch().map(str::to_string);
        let current = gitwrite::head_commit(&ctx.repo, &head)?.ok_or_else(|| {
            CapabilityError::refused("HEAD has no commit yet: there is nothing to switch from")
        })?;
        let target = if create {
            gitwrite::branch_free(&ctx.repo, &name, "/branch")?;
            current.clone()
        } else {
            gitwrite::ref_commit(&ctx.repo, &format!("refs/heads/{name}"))?.ok_or_else(|| {
                CapabilityError::not_found(format!(
                    "no branch is named `{name}`; repo.branches lists them (create: true makes it)"
                ))
                .at("/branch")
            })?
        };
        if previous.as_deref() != Some(name.as_str())
            && seneschal_access::gitdir::checked_out_elsewhere(&ctx.repo, &name)
        {
            return Err(CapabilityError::conflict(format!(
                "the branch `{name}` is checked out in another worktree of this repository; \
                 a branch is checked out in one worktree at a time (as git keeps it)"
            ))
            .at("/branch"));
        }
        let status = seneschal_access::git::status(&ctx.repo)?;
        let mut dirty: BTreeSet<String> = BTreeSet::new();
        for c in status.staged.iter().chain(&status.unstaged) {
            dirty.insert(c.path.clone());
            if let Some(f) = &c.from {
                dirty.insert(f.clone());
            }
        }
        dirty.extend(status.conflicted.iter().cloned());
        let fields = |carried: &BTreeSet<String>| json!({ "branch": name, "previous": previous, "commit": target, "carried": carried });
        if !create && previous.as_deref() == Some(name.as_str()) {
            return Ok(Prepared::new(
                fields(&dirty),
                json!({ "branch": name, "count": 0 }),
            ));
        }
        let changes = gitwrite::diff_trees(&ctx.repo, &current, &target)?;
        let deleted: BTreeSet<&str> = changes
            .iter()
            .filter(|c| c.status == 'D')
            .map(|c| c.path.as_str())
            .collect();
        let mut blocked: Vec<String> = Vec::new();
        for c in &changes {
            // Refused before git reads the tree into an index: a crafted commit's path into
            // `.git` or `.seneschal/` is named with its rule.
            Target::tree(&c.path, "/branch")?;
            for mode in [&c.old_mode, &c.new_mode] {
                if mode.as_str() != "000000" {
                    gitwrite::writable_mode(&c.path, mode)?;
                }
            }
            if dirty.contains(&c.path) {
                blocked.push(format!("{} (uncommitted changes)", c.path));
                continue;
            }
            if c.old_mode == "000000" {
                let at = ctx.repo.join(&c.path);
                if std::fs::symlink_metadata(&at).is_ok() {
                    blocked.push(format!(
                        "{} (an untracked file would be overwritten)",
                        c.path
                    ));
                    continue;
                }
                // An untracked file where the new file's folder must go.
                let parts: Vec<&str> = c.path.split('/').collect();
                for i in 1..parts.len() {
                    let prefix = parts[..i].join("/");
                    let m = std::fs::symlink_metadata(ctx.repo.join(&prefix));
                    if m.is_ok_and(|m| !m.is_dir()) && !deleted.contains(prefix.as_str()) {
                        blocked.push(format!(
                            "{prefix} (an untracked file is in the way of {})",
                            c.path
                        ));
                        break;
                    }
                }
            }
        }
        if !blocked.is_empty() {
            return Err(CapabilityError::conflict(format!(
                "switching to `{name}` would lose work in: {}; commit, stash or restore them first",
                blocked.join(", ")
            ))
            .with_data(json!({ "files": blocked })));
        }
        let before = work.copy_index()?;
        let index = work.index();
        work.try_git(&["update-index", "-q", "--refresh"], Some(&index), &[], b"")
            .ok();
        work.git(
            &["read-tree", "-m", &current, &target],
            Some(&index),
            "the new index (git read-tree -m)",
        )?;
        let written: Vec<&gitwrite::TreeChange> =
            changes.iter().filter(|c| c.status != 'D').collect();
        let oids: Vec<String> = written.iter().map(|c| c.new_oid.clone()).collect();
        let bytes = gitwrite::blob_bytes(&ctx.repo, &oids)?;
        let carried: BTreeSet<String> = dirty;
        let mut p = Prepared::new(
            fields(&carried),
            json!({ "branch": name, "count": changes.len() }),
        );
        for c in changes.iter().filter(|c| c.status == 'D') {
            p.write(ctx, &c.path, None)?;
        }
        for (c, b) in written.iter().zip(bytes) {
            p.write(ctx, &c.path, Some(b))?;
            p.modes
                .push((c.path.clone(), gitwrite::file_mode(&c.new_mode)));
        }
        let after = work.read_index()?;
        if after.is_some() && after != before {
            p.git(ctx, GitFile::Index, after)?;
        }
        let branch = BranchName::new(&name, "/branch")?;
        if create {
            p.git(
                ctx,
                GitFile::Branch(branch.clone()),
                Some(format!("{target}\n").into_bytes()),
            )?;
        }
        p.git(
            ctx,
            GitFile::Head,
            Some(format!("ref: refs/heads/{}\n", branch.as_str()).into_bytes()),
        )?;
        Ok(p)
    })
}

/// `repo.restore`: working-tree files back to their staged version (or `source`'s).
pub fn restore(
    ctx: &Call,
    input: repo_restore::Input,
) -> Result<repo_restore::Output, CapabilityError> {
    let rels = confined(ctx, &input.paths)?;
    let dry = input.dry_run.unwrap_or(false);
    let source = match input.source.as_deref() {
        Some(rev) => Some(seneschal_access::git::resolve_commit(
            &ctx.repo, rev, "/source",
        )?),
        None => None,
    };
    run(ctx, "repo.restore", &input, dry, |work| {
        let mut args: Vec<&str> = match &source {
            Some(c) => vec!["ls-tree", "-r", "-z", "--full-tree", c.as_str(), "--"],
            None => vec!["ls-files", "-s", "-z", "--"],
        };
        args.extend(rels.iter().map(String::as_str));
        let out = work.git(&args, None, "the files to restore")?;
        let entries = match &source {
            Some(_) => parse_tree(&out),
            None => gitwrite::parse_entries(&out),
        };
        for (i, rel) in rels.iter().enumerate() {
            if !entries.keys().any(|f| under(f, rel)) {
                return Err(CapabilityError::not_found(format!(
                    "`{}` matches no file {}",
                    *input.paths[i],
                    if source.is_some() {
                        "at that revision"
                    } else {
                        "in the index"
                    }
                ))
                .at(format!("/paths/{i}")));
            }
        }
        let mut conflicted = Vec::new();
        for (path, e) in &entries {
            gitwrite::writable_mode(path, &e.mode)?;
            if e.stage != 0 {
                conflicted.push(path.clone());
            }
        }
        if !conflicted.is_empty() {
            return Err(CapabilityError::conflict(format!(
                "unmerged (conflicted) in the index: {}; resolve and stage them, or name a source",
                conflicted.join(", ")
            )));
        }
        let paths: Vec<&String> = entries.keys().collect();
        let oids: Vec<String> = entries.values().map(|e| e.oid.clone()).collect();
        let bytes = gitwrite::blob_bytes(&ctx.repo, &oids)?;
        let (mut restored, mut unchanged) = (Vec::new(), Vec::new());
        let mut plan = Vec::new();
        for ((path, b), e) in paths.into_iter().zip(bytes).zip(entries.values()) {
            let want = gitwrite::file_mode(&e.mode);
            let now = store::read(&ctx.repo, path)?;
            let exec = |m: u32| m & 0o111 != 0;
            let mode_now = {
                use std::os::unix::fs::PermissionsExt;
                std::fs::symlink_metadata(ctx.repo.join(path))
                    .map(|m| m.permissions().mode())
                    .unwrap_or(want)
            };
            if now.as_deref() == Some(b.as_slice()) && exec(mode_now) == exec(want) {
                unchanged.push(path.clone());
            } else {
                restored.push(path.clone());
                plan.push((path.clone(), b, want));
            }
        }
        let mut p = Prepared::new(
            json!({
                "restored": restored,
                "unchanged": unchanged,
                "source": source.clone().unwrap_or_else(|| "index".into()),
            }),
            json!({ "count": restored.len(), "files": list(&restored) }),
        );
        for (path, b, mode) in plan {
            p.write(ctx, &path, Some(b))?;
            p.modes.push((path, mode));
        }
        Ok(p)
    })
}

/// Parses `git ls-tree -r -z` (`mode type oid\tpath\0`) as index entries of stage 0.
fn parse_tree(out: &[u8]) -> std::collections::BTreeMap<String, gitwrite::Entry> {
    let mut m = std::collections::BTreeMap::new();
    for rec in seneschal_access::git::split_z(out) {
        let Some((head, path)) = rec.split_once('\t') else {
            continue;
        };
        let parts: Vec<&str> = head.split(' ').collect();
        if parts.len() >= 3 {
            m.insert(
                path.to_string(),
                gitwrite::Entry {
                    mode: parts[0].to_string(),
                    oid: parts[2].to_string(),
                    stage: 0,
                },
            );
        }
    }
    m
}
