//! Handlers of the `repo.*` group: identity and status, read through `git` (the history
//! readers, `repo.log` among them, are in [`super::history`]).
//!
//! No handler here redacts: every answer of the group is `repository` disclosure, so the
//! executor redacts it whole before any transport (see [`crate::execute`]). Remote URLs are
//! shaped by [`git::shown_url`] (no query value, no fragment), which also tells whether a
//! credential was removed.

use crate::context::Call;
use crate::registry::types::{repo_identity, repo_status};
use seneschal_access::error::CapabilityError;
use seneschal_access::git;

/// The repository root: the context's, which every git run is pinned to
/// ([`seneschal_access::gitdir::pin`] refuses a layout that leads elsewhere).
fn root(ctx: &Call) -> Result<std::path::PathBuf, CapabilityError> {
    seneschal_access::gitdir::pin(&ctx.repo).map_err(|u| u.into_error("the repository root"))?;
    Ok(ctx.repo.clone())
}

/// `repo.identity`: root, branch, HEAD and remotes, their URLs shaped.
pub fn identity(
    ctx: &Call,
    _input: repo_identity::Input,
) -> Result<repo_identity::Output, CapabilityError> {
    let root = root(ctx)?;
    let branch = git::branch(&root)?;
    let head = git::head(&root)?;
    let remotes = git::remotes(&root)?
        .into_iter()
        .map(|r| {
            let url = r.url.as_deref().map(git::shown_url);
            let push = r
                .push_url
                .as_deref()
                .filter(|p| Some(*p) != r.url.as_deref())
                .map(git::shown_url);
            let redacted = url.as_ref().is_some_and(|u| u.1) || push.as_ref().is_some_and(|p| p.1);
            repo_identity::OutputRemotesItem {
                name: r.name,
                url: url.map(|u| u.0),
                push_url: push.map(|p| p.0),
                redacted,
            }
        })
        .collect();
    Ok(repo_identity::Output {
        root: root.to_string_lossy().into_owned(),
        detached: branch.is_none() && head.is_some(),
        branch,
        head,
        remotes,
    })
}

/// The changes of one list of `git::Change`, each kind parsed into the output's enum of one
/// list (`staged`, `unstaged`: two generated types of one shape).
macro_rules! changes {
    ($list:expr, $item:ident, $kind:ident) => {
        $list
            .iter()
            .map(|c| {
                Ok(repo_status::$item {
                    path: c.path.clone(),
                    from: c.from.clone(),
                    change: repo_status::$kind::try_from(c.change).map_err(|_| {
                        CapabilityError::internal(format!(
                            "git reported a change kind `{}` outside the schema",
                            c.change
                        ))
                    })?,
                })
            })
            .collect::<Result<Vec<_>, CapabilityError>>()?
    };
}

/// `repo.status`: staged, unstaged, conflicted and untracked files, without any lock.
pub fn status(
    ctx: &Call,
    _input: repo_status::Input,
) -> Result<repo_status::Output, CapabilityError> {
    let s = git::status(&ctx.repo)?;
    let clean = s.staged.is_empty()
        && s.unstaged.is_empty()
        && s.conflicted.is_empty()
        && s.untracked.is_empty();
    Ok(repo_status::Output {
        staged: changes!(s.staged, OutputStagedItem, OutputStagedItemChange),
        unstaged: changes!(s.unstaged, OutputUnstagedItem, OutputUnstagedItemChange),
        branch: s.branch,
        head: s.head,
        upstream: s.upstream,
        ahead: s.ahead,
        behind: s.behind,
        conflicted: s.conflicted,
        untracked: s.untracked,
        clean,
    })
}
