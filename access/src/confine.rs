//! Path confinement and the secret-file rules: which repository paths a capability may touch.
//!
//! Every path a client names goes through [`confine`] before any file is opened; the
//! repository writes reuse it. A path is refused (code `refused`, with the [`Rule`] in the
//! message and in `data.rule`) when it:
//!
//! * is absolute ([`Rule::AbsolutePath`]);
//! * has a `..` component ([`Rule::ParentDir`]), even one that would stay inside;
//! * passes through a symbolic link that resolves outside the repository, or cannot be
//!   resolved at all ([`Rule::SymlinkEscape`]); every component is checked, not only the last;
//! * names, or resolves through a link into, a `.git` entry at any depth ([`Rule::GitDir`]);
//! * names, or resolves into, a secret-bearing file or folder ([`Rule::SecretFile`], see
//!   [`is_secret_name`]).
//!
//! Names are compared without regard to ASCII case, so `.GIT/config` and `.ENV` are refused on
//! case-insensitive file systems too. The readers, which open every file through
//! [`crate::rootfs`], add [`Rule::SpecialFile`] (a FIFO, socket or device), [`Rule::HardLink`] (a
//! file with more than one name), [`Rule::SecretContent`] (a file holding a private key block)
//! and [`Rule::SizeCap`].
//!
//! [`confine`] only answers whether a path passes; nothing opens the path it checked. Readers
//! open through [`crate::rootfs::Root`], which applies the same rules on the handles it reads.

use std::ffi::OsStr;
use std::path::{Component, Path};

use serde_json::json;

use crate::error::CapabilityError;

pub use crate::rules::{is_git_name, is_secret_name, name_rule, Rule};

/// A `refused` error naming the path, the rule and why, pointing at the input `field`.
pub fn refusal(rule: Rule, path: &str, why: &str, field: &str) -> CapabilityError {
    CapabilityError::refused(format!(
        "`{path}` is refused: {why} (rule {})",
        rule.as_str()
    ))
    .at(field)
    .with_data(json!({ "rule": rule.as_str() }))
}

/// A path that passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    /// The normalized repository-relative path, `/`-separated (`""` for the root).
    pub rel: String,
}

fn name_why(rule: Rule) -> &'static str {
    match rule {
        Rule::GitDir => "nothing under .git/ is served",
        _ => "secret-bearing files are never served",
    }
}

/// The longest name of one path component, in bytes (Linux's `NAME_MAX`, and the most the
/// common file systems hold).
const NAME_MAX: usize = 255;
/// A path is shorter than this, in bytes (Linux's `PATH_MAX`, its NUL included).
const PATH_MAX: usize = 4096;

/// The lexical rules alone: lengths no file system holds, absolute paths, `..`, `.git` and
/// secret names. Returns the normal components.
pub fn check_lexical<'p>(input: &'p str, field: &str) -> Result<Vec<&'p OsStr>, CapabilityError> {
    if input.contains('\0') {
        return Err(CapabilityError::invalid_input("a path cannot hold a NUL byte").at(field));
    }
    // What no file system holds: a path is refused as input, not failed on as a fault.
    if input.len() >= PATH_MAX {
        return Err(CapabilityError::invalid_input(format!(
            "a path is shorter than {PATH_MAX} bytes; this one has {}",
            input.len()
        ))
        .at(field));
    }
    let path = Path::new(input);
    if path.is_absolute() || input.starts_with('/') || input.starts_with('\\') || has_drive(input) {
        return Err(refusal(
            Rule::AbsolutePath,
            input,
            "paths are relative to the repository root",
            field,
        ));
    }
    let mut names = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => {
                if name.len() > NAME_MAX {
                    return Err(CapabilityError::invalid_input(format!(
                        "a path's names are at most {NAME_MAX} bytes each; `{}…` has {}",
                        name.to_string_lossy().chars().take(16).collect::<String>(),
                        name.len()
                    ))
                    .at(field));
                }
                if let Some(rule) = name_rule(name) {
                    return Err(refusal(rule, input, name_why(rule), field));
                }
                names.push(name);
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(refusal(
                    Rule::ParentDir,
                    input,
                    "`..` components are not accepted",
                    field,
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(refusal(
                    Rule::AbsolutePath,
                    input,
                    "paths are relative to the repository root",
                    field,
                ))
            }
        }
    }
    Ok(names)
}

/// `C:` or `C:\...`: a Windows drive, absolute on that system even when read on this one.
fn has_drive(input: &str) -> bool {
    let b = input.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// The lexical rules, then the normal components joined with `/`: the relative path a reader
/// opens under the root's handle.
pub fn lexical_relative(input: &str, field: &str) -> Result<String, CapabilityError> {
    Ok(check_lexical(input, field)?
        .iter()
        .map(|n| n.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

/// Confines `input` to the repository at `root`: the lexical rules, then every component
/// walked on disk through [`crate::rootfs::Root`] (a symbolic link must resolve inside the
/// repository, and not into `.git` or a secret-bearing file). A path whose rest does not exist
/// passes (a writer may create it). `field` is the JSON pointer of the input, for the error.
pub fn confine(root: &Path, input: &str, field: &str) -> Result<Confined, CapabilityError> {
    let rel = lexical_relative(input, field)?;
    let handle = crate::rootfs::Root::open(root).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?;
    match handle.probe(&rel) {
        Ok(_) => Ok(Confined { rel }),
        Err(crate::rootfs::Denied::Refused(rule, why)) => Err(refusal(rule, input, &why, field)),
        Err(e) => Err(CapabilityError::internal(format!(
            "`{input}` cannot be resolved: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(e: &CapabilityError) -> &str {
        e.data
            .as_ref()
            .and_then(|d| d["rule"].as_str())
            .unwrap_or("")
    }

    #[test]
    fn names_and_paths_no_file_system_holds_are_invalid_input() {
        let long = "é".repeat(128);
        for input in [format!("docs/{long}"), "a/".repeat(2048)] {
            let e = check_lexical(&input, "/path").unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::InvalidInput, "{e}");
        }
        assert!(check_lexical(&format!("docs/{}", "x".repeat(255)), "/path").is_ok());
    }

    #[test]
    fn secret_names() {
        for n in [
            ".env",
            ".env.local",
            ".ENV",
            "server.pem",
            "tls.KEY",
            "id_rsa",
            "id_rsa.pub",
            "id_ed25519",
            ".netrc",
            ".git-credentials",
            "credentials",
            "secrets.yaml",
            "prod.tfvars",
            ".ssh",
        ] {
            assert!(is_secret_name(OsStr::new(n)), "{n}");
        }
        for n in [
            "README.md",
            "env.rs",
            "keyboard.rs",
            "monkey",
            "environment.md",
            "key.rs",
        ] {
            assert!(!is_secret_name(OsStr::new(n)), "{n}");
        }
    }

    #[test]
    fn lexical_rules() {
        let cases = [
            ("/etc/passwd", "absolute_path"),
            ("C:\\x", "absolute_path"),
            ("../x", "parent_dir"),
            ("a/../b", "parent_dir"),
            (".git/config", "git_dir"),
            ("sub/.Git/HEAD", "git_dir"),
            (".env", "secret_file"),
            ("deploy/.ssh/config", "secret_file"),
        ];
        for (p, rule) in cases {
            let e = check_lexical(p, "/path").unwrap_err();
            assert_eq!(e.code.as_str(), "refused", "{p}");
            assert_eq!(rule_of(&e), rule, "{p}");
            assert_eq!(e.pointer.as_deref(), Some("/path"));
        }
        assert_eq!(
            check_lexical("a\0b", "/path").unwrap_err().code.as_str(),
            "invalid_input"
        );
        assert_eq!(check_lexical("./src/lib.rs", "/p").unwrap().len(), 2);
    }

    #[test]
    #[cfg(unix)]
    fn symlinks_are_resolved_component_by_component() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("docs/a.md"), "a").unwrap();
        std::fs::write(root.join(".env"), "T=1").unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).unwrap();
        };
        link(outside.path(), "outdir");
        link(&outside.path().join("secret.txt"), "outfile");
        link(Path::new("docs"), "docs-link");
        link(Path::new(".git"), "gitlink");
        link(Path::new(".env"), "envlink");
        link(Path::new("nowhere"), "dangling");

        let ok = confine(root, "docs-link/a.md", "/path").unwrap();
        assert_eq!(ok.rel, "docs-link/a.md");
        let missing = confine(root, "docs/none/deeper.md", "/path").unwrap();
        assert_eq!(missing.rel, "docs/none/deeper.md");
        for (p, rule) in [
            ("outdir/secret.txt", "symlink_escape"),
            ("outfile", "symlink_escape"),
            ("dangling", "symlink_escape"),
            ("gitlink/config", "git_dir"),
            ("envlink", "secret_file"),
        ] {
            let e = confine(root, p, "/path").unwrap_err();
            assert_eq!(rule_of(&e), rule, "{p}: {e}");
            assert!(
                !e.message.contains(&*outside.path().to_string_lossy()),
                "the target is not echoed: {}",
                e.message
            );
        }
    }
}
