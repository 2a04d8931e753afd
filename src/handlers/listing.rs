//! The `files.list` handler: the entries of one confined folder.
//!
//! The folder is opened through the confined root ([`crate::rootfs::Root::open_dir`], links
//! followed only inside the repository, every name checked against the `.git` and secret-file
//! rules) and listed through that handle; sizes come from `fstatat` on the same handle, never
//! following a link. Entries are left out as `files.search` leaves them out: the same ignore
//! rules, read through the confined root (`files::IgnoreRules`: `.ignore`, `.gitignore`,
//! `.git/info/exclude`), and the same names (`.git`, secret-bearing files). No handler here
//! redacts: the answer is `repository` disclosure, redacted by the executor.

use std::sync::Arc;

use ignore::overrides::OverrideBuilder;
use rustix::fs::FileType;

use super::files::IgnoreRules;
use crate::confine::{self, refusal};
use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::types::files_list;
use crate::rootfs::{Denied, Follow, Root};

/// `files.list`: the entries of one folder, sorted by name.
pub fn list(
    ctx: &Context,
    input: files_list::Input,
) -> Result<files_list::Output, CapabilityError> {
    let path = input.path.as_str();
    let rel = confine::lexical_relative(path, "/path")?;
    let root_path = ctx.repo.canonicalize().map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be resolved: {e}"))
    })?;
    let glob = match input.glob.as_deref() {
        Some(g) => {
            let bad = |e: ignore::Error| {
                CapabilityError::invalid_input(format!("the glob does not compile: {e}"))
                    .at("/glob")
            };
            let mut ob = OverrideBuilder::new(&root_path);
            ob.add(g).map_err(bad)?;
            Some(ob.build().map_err(bad)?)
        }
        None => None,
    };
    let root = Arc::new(Root::open(&ctx.repo).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?);
    let dir = root
        .open_dir(&rel, Follow::Inside)
        .map_err(|denied| match denied {
            Denied::Refused(rule, why) => refusal(rule, path, &why, "/path"),
            Denied::NotFound => {
                CapabilityError::not_found(format!("`{path}` does not exist")).at("/path")
            }
            Denied::NotDir | Denied::IsDir => CapabilityError::invalid_input(format!(
                "`{path}` is not a folder; files.read reads a file"
            ))
            .at("/path"),
            other => CapabilityError::not_found(format!("`{path}` {other}")).at("/path"),
        })?;
    let rules = IgnoreRules::new(root.clone(), root_path.clone());
    // An ignored folder (or one inside an ignored folder) has no entry files.search would see.
    let mut prefix = String::new();
    for name in rel.split('/').filter(|n| !n.is_empty()) {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(name);
        if rules.ignored(&root_path.join(&prefix), true) {
            return Ok(files_list::Output {
                path: rel,
                entries: Vec::new(),
                truncated: false,
            });
        }
    }
    let entries = dir
        .entries()
        .map_err(|e| CapabilityError::internal(format!("`{path}` cannot be listed: {e}")))?;
    let mut shown: Vec<files_list::OutputEntriesItem> = Vec::new();
    for entry in entries {
        if confine::name_rule(&entry.name).is_some() {
            continue;
        }
        let name = entry.name.to_string_lossy().into_owned();
        let entry_rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let abs = root_path.join(&entry_rel);
        let is_dir = entry.kind == FileType::Directory;
        if rules.ignored(&abs, is_dir) {
            continue;
        }
        if glob
            .as_ref()
            .is_some_and(|ov| ov.matched(&abs, is_dir).is_ignore())
        {
            continue;
        }
        let (kind, size) = match entry.kind {
            FileType::RegularFile => (
                files_list::OutputEntriesItemKind::File,
                dir.stat(&entry.name).map(|m| m.len),
            ),
            FileType::Directory => (files_list::OutputEntriesItemKind::Dir, None),
            FileType::Symlink => (files_list::OutputEntriesItemKind::Symlink, None),
            _ => (files_list::OutputEntriesItemKind::Other, None),
        };
        shown.push(files_list::OutputEntriesItem {
            name,
            path: entry_rel,
            kind,
            size,
        });
    }
    shown.sort_by(|a, b| a.name.cmp(&b.name));
    let limit = usize::try_from(input.limit.get()).unwrap_or(usize::MAX);
    let truncated = shown.len() > limit;
    shown.truncate(limit);
    Ok(files_list::Output {
        path: rel,
        entries: shown,
        truncated,
    })
}
