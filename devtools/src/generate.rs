//! `seneschal generate [--check]`: the committed projections, from the bytes compiled in.
//!
//! [`check`] is the one comparison between `generated/` and this build: `generate --check`
//! and `tests/it/freshness.rs` both call it, so the test fails exactly when the command does.

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

use crate::contract::Version;
use seneschal_core::registry::projections::COMMITTED;
use seneschal_model::codes::{ErrorCode, EXIT_STALE};

/// The folder of `generated/` that holds the release locks `contract release` records and
/// `contract check` reads; the only entry besides the [`COMMITTED`] files.
pub const RELEASES: &str = "releases";

/// How a path under `generated/` differs from this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    /// A committed projection whose bytes differ from the compiled-in ones.
    Stale,
    /// A committed projection that is absent (or unreadable).
    Missing,
    /// A file no command writes there: neither a projection nor a release lock.
    Extra,
}

/// One difference between `generated/` and this build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong.
    pub drift: Drift,
    /// The path, as `dir` joined with the entry's name.
    pub path: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.drift {
            Drift::Stale => write!(f, "stale: {}", self.path),
            Drift::Missing => write!(f, "stale: {} (missing)", self.path),
            Drift::Extra => write!(f, "extra: {} (no projection or release lock)", self.path),
        }
    }
}

/// What to do about findings: the commands that regenerate, and what to remove.
pub const REMEDY: &str =
    "regenerate with `cargo run -- generate` (or a `cargo build` without CI set), \
remove every extra file, and commit generated/";

/// Every difference between `dir` and the compiled projections: each committed projection
/// that is stale or missing, then each extra entry, sorted by path: anything but the
/// projections and the files of `releases/` that `contract check` reads (`<version>.lock`,
/// as `contract release` writes `v0.2.0.lock`).
pub fn check(dir: &Path) -> Vec<Finding> {
    let show = |p: &Path| p.to_string_lossy().into_owned();
    let mut findings: Vec<Finding> = COMMITTED
        .iter()
        .filter_map(|(name, bytes)| {
            let drift = match std::fs::read(dir.join(name)) {
                Ok(b) if b == bytes.as_bytes() => return None,
                Ok(_) => Drift::Stale,
                Err(_) => Drift::Missing,
            };
            Some(Finding {
                drift,
                path: show(&dir.join(name)),
            })
        })
        .collect();
    let mut extra = Vec::new();
    for (name, is_dir) in entries(dir) {
        if name == RELEASES && is_dir {
            let releases = dir.join(RELEASES);
            for (lock, is_dir) in entries(&releases) {
                let read_by_contract_check = !is_dir
                    && lock
                        .strip_suffix(".lock")
                        .is_some_and(|v| Version::parse(v).is_some());
                if !read_by_contract_check {
                    extra.push(show(&releases.join(lock)));
                }
            }
        } else if is_dir || !COMMITTED.iter().any(|(c, _)| *c == name) {
            extra.push(show(&dir.join(name)));
        }
    }
    extra.sort();
    findings.extend(extra.into_iter().map(|path| Finding {
        drift: Drift::Extra,
        path,
    }));
    findings
}

/// The entries of `dir` as `(name, is a directory, not through a symlink)`; none when it
/// cannot be listed (every projection is then reported missing).
fn entries(dir: &Path) -> Vec<(String, bool)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .collect()
}

/// Writes (or, with `check`, compares) every committed projection under `dir`.
pub fn run(dir: &Path, check: bool) -> ExitCode {
    if check {
        let findings = self::check(dir);
        if findings.is_empty() {
            println!(
                "{} projections in {} are fresh",
                COMMITTED.len(),
                dir.display()
            );
            return ExitCode::SUCCESS;
        }
        for f in &findings {
            eprintln!("{f}");
        }
        eprintln!("{REMEDY}");
        return ExitCode::from(EXIT_STALE);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error[internal]: cannot create {}: {e}", dir.display());
        return ExitCode::from(ErrorCode::Internal.exit_code());
    }
    for (name, bytes) in COMMITTED {
        let path = dir.join(name);
        let same = std::fs::read(&path)
            .map(|b| b == bytes.as_bytes())
            .unwrap_or(false);
        if !same {
            if let Err(e) = std::fs::write(&path, bytes) {
                eprintln!("error[internal]: cannot write {}: {e}", path.display());
                return ExitCode::from(ErrorCode::Internal.exit_code());
            }
            println!("wrote {}", path.display());
        }
    }
    // Writing cannot make an extra file fresh: name it, so `--check` holds no surprise.
    for f in self::check(dir) {
        eprintln!("{f}: remove it");
    }
    ExitCode::SUCCESS
}
