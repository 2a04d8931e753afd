//! The `files.list` handler: the entries of one confined folder.
//!
//! The folder is opened through the confined root ([`seneschal_access::rootfs::Root::open_dir`], links
//! followed only inside the repository, every name checked against the `.git` and secret-file
//! rules) and listed through that handle; sizes come from `fstatat` on the same handle, never
//! following a link. Entries are left out as `files.search` leaves them out: the same ignore
//! rules, read through the confined root (`files::IgnoreRules`: `.ignore`, `.gitignore`,
//! `.git/info/exclude`), and the same names (`.git`, secret-bearing files). `files.find` walks
//! the tree below a folder the same way, one folder handle at a time: each subfolder opened
//! from its parent's handle without following a link ([`Root::open_dir_in`]), so a folder
//! swapped for a link while the walk runs is skipped, never entered. No handler here redacts:
//! the answer is `repository` disclosure, redacted by the executor.

use std::sync::Arc;

use ignore::overrides::OverrideBuilder;
use rustix::fs::FileType;

use super::files::IgnoreRules;
use crate::context::Call;
use crate::registry::types::{files_find, files_list};
use seneschal_access::confine::{self, refusal};
use seneschal_access::error::CapabilityError;
use seneschal_access::rootfs::{Denied, Dir, Follow, Root};

/// `files.list`: the entries of one folder, sorted by name.
pub fn list(ctx: &Call, input: files_list::Input) -> Result<files_list::Output, CapabilityError> {
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
    let dir = folder(&root, &rel, path)?;
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

/// The confined folder at `rel` (asked as `path`), opened for listing, or the error that
/// refuses it.
fn folder(root: &Root, rel: &str, path: &str) -> Result<Dir, CapabilityError> {
    root.open_dir(rel, Follow::Inside)
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
        })
}

/// The walk of `files.find`: what it matches, what it skips, and what it found.
struct Find<'a> {
    root: &'a Root,
    root_path: &'a std::path::Path,
    rules: &'a IgnoreRules,
    glob: &'a ignore::overrides::Override,
    kind: Option<files_find::InputKind>,
    /// One more than the limit: finding it says the answer is cut.
    want: usize,
    found: Vec<files_find::OutputMatchesItem>,
}

impl Find<'_> {
    /// Walks the folder `dir` at `rel`, depth first, its entries by name; stops once `want`
    /// matches are found.
    fn walk(&mut self, dir: &Dir, rel: &str) {
        let Ok(mut entries) = dir.entries() else {
            return;
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries {
            if self.found.len() >= self.want {
                return;
            }
            if confine::name_rule(&entry.name).is_some() {
                continue;
            }
            let name = entry.name.to_string_lossy();
            let entry_rel = if rel.is_empty() {
                name.into_owned()
            } else {
                format!("{rel}/{name}")
            };
            let abs = self.root_path.join(&entry_rel);
            let is_dir = entry.kind == FileType::Directory;
            if self.rules.ignored(&abs, is_dir) {
                continue;
            }
            let (kind, wanted) = match entry.kind {
                FileType::RegularFile => (
                    files_find::OutputMatchesItemKind::File,
                    Some(files_find::InputKind::File),
                ),
                FileType::Directory => (
                    files_find::OutputMatchesItemKind::Dir,
                    Some(files_find::InputKind::Dir),
                ),
                FileType::Symlink => (
                    files_find::OutputMatchesItemKind::Symlink,
                    Some(files_find::InputKind::Symlink),
                ),
                _ => (files_find::OutputMatchesItemKind::Other, None),
            };
            let kind_ok = self.kind.is_none_or(|k| Some(k) == wanted);
            if kind_ok && self.glob.matched(&abs, is_dir).is_whitelist() {
                let meta = dir.stat(&entry.name);
                self.found.push(files_find::OutputMatchesItem {
                    path: entry_rel.clone(),
                    kind,
                    size: meta
                        .filter(|_| entry.kind == FileType::RegularFile)
                        .map(|m| m.len),
                    modified: meta.and_then(|m| {
                        u64::try_from(m.mtime_ns.div_euclid(1_000_000_000))
                            .ok()
                            .map(seneschal_access::text::rfc3339)
                    }),
                });
            }
            if is_dir {
                // From the parent's handle, never through a link (one swapped in is skipped).
                if let Ok(sub) = self.root.open_dir_in(dir, rel, &entry.name, Follow::Never) {
                    self.walk(&sub, &entry_rel);
                }
            }
        }
    }
}

/// `files.find`: the files and folders under a folder whose repository-relative path matches
/// a glob, depth first, each folder's entries by name.
pub fn find(ctx: &Call, input: files_find::Input) -> Result<files_find::Output, CapabilityError> {
    let path = input.path.as_str();
    let rel = confine::lexical_relative(path, "/path")?;
    let root_path = ctx.repo.canonicalize().map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be resolved: {e}"))
    })?;
    let bad = |e: ignore::Error| {
        CapabilityError::invalid_input(format!("the pattern is not a glob that compiles: {e}"))
            .at("/pattern")
    };
    let mut ob = OverrideBuilder::new(&root_path);
    ob.add(input.pattern.as_str()).map_err(bad)?;
    let glob = ob.build().map_err(bad)?;
    let root = Arc::new(Root::open(&ctx.repo).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?);
    let dir = folder(&root, &rel, path)?;
    let rules = IgnoreRules::new(root.clone(), root_path.clone());
    let limit = usize::try_from(input.limit.get()).unwrap_or(usize::MAX);
    let mut walk = Find {
        root: &root,
        root_path: &root_path,
        rules: &rules,
        glob: &glob,
        kind: input.kind,
        want: limit.saturating_add(1),
        found: Vec::new(),
    };
    // A folder inside an ignored folder holds nothing the walk would see.
    let mut prefix = String::new();
    let mut hidden = false;
    for name in rel.split('/').filter(|n| !n.is_empty()) {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(name);
        hidden |= rules.ignored(&root_path.join(&prefix), true);
    }
    if !hidden {
        walk.walk(&dir, &rel);
    }
    let mut matches = walk.found;
    let truncated = matches.len() > limit;
    matches.truncate(limit);
    Ok(files_find::Output { matches, truncated })
}
