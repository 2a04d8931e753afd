//! `seneschal generate [--check]`: the committed projections, from the bytes compiled in.

use std::path::Path;
use std::process::ExitCode;

use crate::codes::{ErrorCode, EXIT_STALE};
use crate::registry::projections::COMMITTED;

/// The files under `dir` that differ from the compiled projections (missing ones included).
pub fn stale(dir: &Path) -> Vec<String> {
    COMMITTED
        .iter()
        .filter(|(name, bytes)| {
            std::fs::read(dir.join(name))
                .map(|b| b != bytes.as_bytes())
                .unwrap_or(true)
        })
        .map(|(name, _)| dir.join(name).to_string_lossy().into_owned())
        .collect()
}

/// Writes (or, with `check`, compares) every committed projection under `dir`.
pub fn run(dir: &Path, check: bool) -> ExitCode {
    if check {
        let stale = stale(dir);
        if stale.is_empty() {
            println!(
                "{} projections in {} are fresh",
                COMMITTED.len(),
                dir.display()
            );
            return ExitCode::SUCCESS;
        }
        for f in &stale {
            eprintln!("stale: {f}");
        }
        eprintln!("run `cargo run -- generate` (or `cargo build`) and commit the result");
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
    ExitCode::SUCCESS
}
