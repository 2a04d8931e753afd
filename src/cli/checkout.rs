//! The maintainer commands and the one place that says where they work.
//!
//! `generate`, `contract diff|check|release`, `conformance` and `new` act on seneschal's own
//! sources (its `generated/`, its release locks, the examples of its manifests, its
//! `capabilities/` and handlers), so they work only in seneschal's own checkout: a folder that
//! holds `capabilities/` and a `Cargo.toml` whose package is `seneschal`. Run anywhere else,
//! each exits [`EXIT_NOT_CHECKOUT`] with `error[not_seneschal_checkout]`, naming the folder,
//! before it reads or writes anything.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use crate::codes::EXIT_NOT_CHECKOUT;

/// The heading of the maintainer commands in `--help` and the README.
pub const HEADING: &str = "Maintainer commands (seneschal's own checkout)";

/// The stable code a maintainer command prints outside the checkout: `error[CODE]: …`.
pub const CODE: &str = "not_seneschal_checkout";

/// The top-level maintainer commands, hidden from the main list of `--help` and shown under
/// [`HEADING`] ([`LISTED`]); `contract` stays in the main list for its `digest`, a capability
/// that works anywhere.
pub const TOP_LEVEL: &[&str] = &["generate", "conformance", "new"];

/// The `contract` subcommands that are maintainer commands.
pub const CONTRACT: &[&str] = &["diff", "check", "release"];

/// Every maintainer command as `--help` lists it under [`HEADING`], in the order `.ci/run`
/// runs them, with one short line each (a test holds this list to [`TOP_LEVEL`] and
/// [`CONTRACT`]).
pub const LISTED: &[(&str, &str)] = &[
    ("generate", "write generated/, or compare it (--check)"),
    (
        "contract diff",
        "classify the changes between two contract locks",
    ),
    (
        "contract check",
        "gate the version on the changes since the last release",
    ),
    (
        "contract release",
        "record this binary's lock under generated/releases/",
    ),
    (
        "conformance",
        "run every example and try to falsify each annotation",
    ),
    ("new", "scaffold a capability's manifest and handler"),
];

/// Whether `dir` is seneschal's own checkout: it holds `capabilities/` and a `Cargo.toml`
/// whose `[package]` is named `seneschal`.
pub fn is_checkout(dir: &Path) -> bool {
    if !dir.join("capabilities").is_dir() {
        return false;
    }
    let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
        return false;
    };
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(value) = line.strip_prefix("name").map(str::trim_start) {
                if let Some(value) = value.strip_prefix('=') {
                    return value.trim().trim_matches(['"', '\'']) == "seneschal";
                }
            }
        }
    }
    false
}

/// The checkout holding `start`: `start` or the nearest folder above it that
/// [`is_checkout`].
pub fn find(start: &Path) -> Option<PathBuf> {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .find(|d| is_checkout(d))
        .map(Path::to_path_buf)
}

/// The folder a maintainer command starts from: `--repo DIR` when given, else the current one.
pub fn start(named: Option<&PathBuf>) -> PathBuf {
    named
        .cloned()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The error of `seneschal <command>` run in `here`, which is no checkout (or inside none).
fn refuse(command: &str, here: &Path) -> ExitCode {
    eprintln!(
        "error[{CODE}]: `seneschal {command}` is a maintainer command: it works in seneschal's own \
         checkout (a folder with capabilities/ and a Cargo.toml of package `seneschal`); you are \
         in {}, which is not inside one",
        here.display()
    );
    eprintln!("  the commands for a repository you work in are listed by `seneschal --help`");
    ExitCode::from(EXIT_NOT_CHECKOUT)
}

/// The checkout holding `start` ([`find`]), or the refusal of `command` there.
pub fn require(command: &str, start: &Path) -> Result<PathBuf, ExitCode> {
    find(start).ok_or_else(|| refuse(command, &start.canonicalize().unwrap_or(start.into())))
}

/// `dir` itself when it is a checkout ([`is_checkout`]), or the refusal of `command` there.
pub fn require_exact(command: &str, dir: &Path) -> Result<PathBuf, ExitCode> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if is_checkout(&dir) {
        Ok(dir)
    } else {
        Err(refuse(command, &dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_is_capabilities_beside_the_seneschal_package() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(!is_checkout(d));
        std::fs::create_dir(d.join("capabilities")).unwrap();
        assert!(!is_checkout(d), "capabilities/ alone");
        std::fs::write(d.join("Cargo.toml"), "[package]\nname = \"other\"\n").unwrap();
        assert!(!is_checkout(d), "another package");
        std::fs::write(
            d.join("Cargo.toml"),
            "[workspace]\nname = \"seneschal\"\n[package]\nversion = \"1\"\n",
        )
        .unwrap();
        assert!(!is_checkout(d), "a name outside [package]");
        std::fs::write(
            d.join("Cargo.toml"),
            "[package]\nversion = \"1\"\nname = \"seneschal\"\n",
        )
        .unwrap();
        assert!(is_checkout(d));
        std::fs::create_dir_all(d.join("core/src/handlers")).unwrap();
        assert_eq!(
            find(&d.join("core/src/handlers")),
            Some(d.canonicalize().unwrap())
        );
        assert!(require_exact("conformance", &d.join("src")).is_err());
        assert!(is_checkout(Path::new(env!("CARGO_MANIFEST_DIR"))));
    }

    #[test]
    fn the_listed_commands_are_exactly_the_guarded_ones() {
        let mut guarded: Vec<String> = TOP_LEVEL.iter().map(|c| c.to_string()).collect();
        guarded.extend(CONTRACT.iter().map(|c| format!("contract {c}")));
        guarded.sort();
        let mut listed: Vec<String> = LISTED.iter().map(|(c, _)| c.to_string()).collect();
        listed.sort();
        assert_eq!(listed, guarded);
    }
}
