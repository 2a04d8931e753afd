//! Where a planned write lands: a working-tree file ([`TreePath`]) or one of the git files the
//! store writes itself ([`GitFile`]), never a path an input, an index entry or a tree names
//! directly.
//!
//! **The one confinement of every write.** A [`TreePath`] is made only by [`TreePath::new`],
//! which refuses what git itself refuses in a tree (`verify_path` with `core.protectNTFS` and
//! `core.protectHFS`): an empty, `.` or `..` component, an absolute path, a NUL or a
//! backslash, and `.git` in any spelling ([`seneschal_access::rules::is_git_name`]: any case, trailing
//! dots or spaces, `git~1`, an NTFS stream, HFS-ignorable code points) at any depth; and
//! seneschal's own state folder `.seneschal/` at the top (the audit log, its anchor, the keys,
//! the desk), but for the repository's own content kept there (an allow-list:
//! `kinds.yaml`, `schemas/`, `knowledge/`). The store takes nothing else for the working tree, so a file named by a client,
//! listed by `git ls-tree` from a crafted commit or by `git read-tree` into an index reaches
//! the disk only through here. `.git/index`, `.git/HEAD` and a branch's loose ref are
//! [`GitFile`]s: their paths are spelled by this module alone, a branch name checked first.
//! Those names are logical, as git spells them: in a linked worktree the store opens
//! `.git/HEAD` and `.git/index` in the worktree's own git folder and `.git/refs/…` in the
//! main repository's, both proven by [`seneschal_access::gitdir::locate`] (`fs.rs` `git_folder`).

use std::ffi::OsStr;

use seneschal_access::confine::{refusal, Rule};
use seneschal_access::error::CapabilityError;

/// A working-tree path that passed [`TreePath::new`]: normalized, `/`-separated,
/// repository-relative, nowhere in `.git` or `.seneschal/`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreePath(String);

impl TreePath {
    /// Checks `path` (from a client, an index or a tree) against the rules of the module; the
    /// refusal names the path, the rule and `field`.
    pub fn new(path: &str, field: &str) -> Result<TreePath, CapabilityError> {
        let bad = |rule: Rule, why: &str| Err(refusal(rule, path, why, field));
        if path.is_empty() || path.starts_with('/') {
            return bad(
                Rule::AbsolutePath,
                "a write takes a repository-relative file path",
            );
        }
        if path.contains('\0') || path.contains('\\') {
            return bad(
                Rule::ParentDir,
                "a path a file is written to holds no NUL and no backslash (git refuses both in a tree)",
            );
        }
        for (i, part) in path.split('/').enumerate() {
            if part.is_empty() || part == "." || part == ".." {
                return bad(
                    Rule::ParentDir,
                    "the store takes only normalized repository-relative paths",
                );
            }
            let name = OsStr::new(part);
            if seneschal_access::rules::is_git_name(name) {
                return bad(
                    Rule::GitDir,
                    "nothing is written into .git from a path, an index or a tree",
                );
            }
            if i == 0
                && seneschal_access::rules::is_state_name(name)
                && !is_content_of_state_dir(path)
            {
                return bad(
                    Rule::StateDir,
                    "seneschal's own state (audit log, keys, desk) is never written from a path, an index or a tree",
                );
            }
        }
        Ok(TreePath(path.to_string()))
    }

    /// The path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The repository's own content kept under `.seneschal/` (an allow-list: every other name
/// there is seneschal's state): its kinds (`kinds.yaml`), their schemas (`schemas/`) and its
/// generic knowledge objects (`knowledge/`), spelled exactly so.
const STATE_DIR_CONTENT: [&str; 3] = [
    ".seneschal/kinds.yaml",
    ".seneschal/schemas/",
    ".seneschal/knowledge/",
];

fn is_content_of_state_dir(path: &str) -> bool {
    STATE_DIR_CONTENT.iter().any(|c| {
        if c.ends_with('/') {
            path.starts_with(c) && path.len() > c.len()
        } else {
            path == *c
        }
    })
}

/// A branch name that passed git's ref-name rules for a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchName(String);

impl BranchName {
    /// A branch name the caller has checked with `crate::gitwrite::check_branch_name` (or
    /// read from a ref that exists); the store checks it again, lexically, before it spells a
    /// path with it.
    pub fn new(name: &str, field: &str) -> Result<BranchName, CapabilityError> {
        let refused = || {
            Err(CapabilityError::invalid_input(format!(
                "`{name}` is not a branch name the store writes a ref for"
            ))
            .at(field))
        };
        if name.is_empty()
            || name.starts_with('-')
            || name.ends_with('/')
            || name.ends_with('.')
            || name.contains("..")
            || name.contains("@{")
            || name == "@"
            || name.chars().any(|c| {
                c.is_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
            })
        {
            return refused();
        }
        for part in name.split('/') {
            if part.is_empty() || part.starts_with('.') || part.ends_with(".lock") {
                return refused();
            }
        }
        Ok(BranchName(name.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A file of the repository's git folder the store writes itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitFile {
    /// `.git/index`.
    Index,
    /// `.git/HEAD`.
    Head,
    /// `.git/refs/heads/<branch>`.
    Branch(BranchName),
}

/// Where one planned write lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A working-tree file.
    Tree(TreePath),
    /// A git file.
    Git(GitFile),
}

impl Target {
    /// A working-tree file, checked ([`TreePath::new`]).
    pub fn tree(path: &str, field: &str) -> Result<Target, CapabilityError> {
        TreePath::new(path, field).map(Target::Tree)
    }

    /// The repository-relative path the store opens, records and shows.
    pub fn rel(&self) -> String {
        match self {
            Target::Tree(p) => p.0.clone(),
            Target::Git(GitFile::Index) => ".git/index".into(),
            Target::Git(GitFile::Head) => ".git/HEAD".into(),
            Target::Git(GitFile::Branch(b)) => format!(".git/refs/heads/{}", b.0),
        }
    }

    /// Whether it is a file of the git folder.
    pub fn is_git(&self) -> bool {
        matches!(self, Target::Git(_))
    }
}

/// One planned write: where it lands and its new bytes (`None`: delete).
pub type Write = (Target, Option<Vec<u8>>);

/// The writes of text an agent sent (the file writes, the knowledge writes, `mcp.wire`), named
/// by path: each path checked ([`TreePath::new`]), and each new text checked against the file
/// it replaces in `root` ([`seneschal_access::keep::keep`]): a write that would put the redaction marker
/// where the file holds a secret is refused here, whatever handler built it.
pub fn tree_writes(
    root: &std::path::Path,
    writes: Vec<(String, Option<Vec<u8>>)>,
) -> Result<Vec<Write>, CapabilityError> {
    writes
        .into_iter()
        .map(|(path, bytes)| {
            let target = Target::tree(&path, "")?;
            if let Some(new) = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                let old = super::read(root, &path)?;
                if let Some(old) = old.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                    let kept =
                        seneschal_access::keep::keep(old, new).map_err(|l| l.error(&path, ""))?;
                    if kept != new {
                        return Err(seneschal_access::keep::Lost {
                            line: first_difference(&kept, new),
                        }
                        .error(&path, ""));
                    }
                }
            }
            Ok((target, bytes))
        })
        .collect()
}

/// The 1-based line where two texts first differ.
fn first_difference(a: &str, b: &str) -> usize {
    a.split_inclusive('\n')
        .zip(b.split_inclusive('\n'))
        .take_while(|(x, y)| x == y)
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(path: &str) -> String {
        match TreePath::new(path, "/p") {
            Ok(_) => "ok".into(),
            Err(e) => e.data.as_ref().unwrap()["rule"]
                .as_str()
                .unwrap()
                .to_string(),
        }
    }

    #[test]
    fn git_s_own_refusals_hold_for_every_spelling() {
        for p in [
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".Git/config",
            "sub/.git/config",
            ".git./hooks/x",
            ".git /hooks/x",
            ".git. . /x",
            "GIT~1/config",
            "git~1/config",
            ".git::$INDEX_ALLOCATION/hooks/x",
            ".g\u{200c}it/hooks/x",
            "\u{feff}.git/config",
            "a/.gi\u{200d}t/x",
        ] {
            assert_eq!(rule(p), "git_dir", "{p:?}");
        }
        for p in [
            ".seneschal/audit.jsonl",
            ".SENESCHAL/desk/x",
            ".seneschal./lock",
            ".seneschal/AUDIT.jsonl",
            ".seneschal/idempotency/x.json",
            ".seneschal/.gitignore",
            ".SENESCHAL/knowledge/x.md",
            ".seneschal/knowledge",
            ".seneschal/kinds.yaml/x",
        ] {
            assert_eq!(rule(p), "state_dir", "{p:?}");
        }
        for p in ["", "/etc/passwd"] {
            assert_eq!(rule(p), "absolute_path", "{p:?}");
        }
        for p in [
            "a//b",
            "./a",
            "a/../b",
            "a\\..\\b",
            ".git\\hooks\\x",
            "a\0b",
        ] {
            assert_eq!(rule(p), "parent_dir", "{p:?}");
        }
        for p in [
            "src/lib.rs",
            ".github/workflows/ci.yml",
            ".gitignore",
            ".gitmodules",
            "docs/.seneschal/x",
            ".seneschal/knowledge/queue.md",
            ".seneschal/kinds.yaml",
            ".seneschal/schemas/recipe.schema.json",
            "gitweb/x",
            ".gitx",
            "legit/x",
            "digit~1",
        ] {
            assert_eq!(rule(p), "ok", "{p:?}");
        }
    }

    #[test]
    fn a_revision_is_not_a_branch_name() {
        for n in [
            "main~1",
            "main^",
            "main@{0}",
            "x^{commit}",
            "-x",
            "a..b",
            "a/",
            "a.",
            ".a",
            "a/.b",
            "a.lock",
            "a b",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "@",
            "",
        ] {
            assert!(BranchName::new(n, "/b").is_err(), "{n:?}");
        }
        for n in ["main", "feature/x", "v1.2", "a-b_c"] {
            assert!(BranchName::new(n, "/b").is_ok(), "{n:?}");
        }
    }
}
