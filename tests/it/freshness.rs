//! Freshness: the committed projections under `generated/` equal the ones compiled into this
//! build, and `generated/` holds nothing else but the release locks. Under `CI` the build
//! script leaves `generated/` alone (`seneschal_codegen::writes_generated`), so this compares
//! what is committed with what the manifests produce; a local build rewrites it first.
//! On mismatch the test names the command that regenerates them; `SENESCHAL_BLESS=1`
//! rewrites the stale ones instead (STYLE 5). The comparison is the library's
//! `seneschal::generate::check`, the one `seneschal generate --check` runs.

use std::path::Path;
use std::process::Command;

use seneschal::codes::EXIT_STALE;
use seneschal::generate::{check, Drift, Finding, RELEASES, REMEDY};
use seneschal::registry::projections::COMMITTED;

fn committed_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("generated")
}

#[test]
fn committed_projections_are_fresh() {
    let dir = committed_dir();
    if std::env::var_os("SENESCHAL_BLESS").is_some() {
        for (name, bytes) in COMMITTED {
            let path = dir.join(name);
            if std::fs::read(&path).map_or(true, |b| b != bytes.as_bytes()) {
                std::fs::write(&path, bytes).expect("write");
            }
        }
    }
    let findings = check(&dir);
    assert!(
        findings.is_empty(),
        "generated/ differs from this build:\n{}\n{REMEDY} \
         (or SENESCHAL_BLESS=1 cargo test --test it freshness:: for the stale ones)",
        findings
            .iter()
            .map(|f| format!("  {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_committed_projection_names_its_generator() {
    for (name, bytes) in COMMITTED {
        assert!(
            bytes.contains("seneschal-codegen"),
            "{name} does not name its generator"
        );
        assert!(
            !bytes.contains(env!("CARGO_MANIFEST_DIR")),
            "{name} carries an absolute path"
        );
    }
}

/// A fresh copy of `generated/` under `root`: this build's projections and the committed
/// release locks.
fn fresh_copy(root: &Path) -> std::path::PathBuf {
    let dir = root.join("generated");
    std::fs::create_dir_all(dir.join(RELEASES)).unwrap();
    for (name, bytes) in COMMITTED {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let releases = committed_dir().join(RELEASES);
    let mut locks = 0;
    for entry in std::fs::read_dir(&releases).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(RELEASES).join(entry.file_name())).unwrap();
        locks += 1;
    }
    assert!(locks > 0, "generated/releases/ holds the release locks");
    dir
}

/// Tampers with `dir`: one projection edited, one removed, and four entries no command
/// writes (a file, a folder, a stray file among the release locks, a folder there).
/// Returns the findings the check must report, sorted as it sorts them.
fn tamper(dir: &Path) -> Vec<Finding> {
    let openapi = dir.join("openapi.json");
    let text = std::fs::read_to_string(&openapi).unwrap();
    std::fs::write(&openapi, text.replacen("\"3.1.0\"", "\"3.0.0\"", 1)).unwrap();
    std::fs::remove_file(dir.join("cli.md")).unwrap();
    std::fs::write(dir.join("notes.md"), "hand-written\n").unwrap();
    std::fs::create_dir(dir.join("old")).unwrap();
    std::fs::write(dir.join(RELEASES).join("draft.txt"), "not a lock\n").unwrap();
    std::fs::create_dir(dir.join(RELEASES).join("v9.9.9.lock")).unwrap();
    let at = |p: &str| dir.join(p).to_string_lossy().into_owned();
    let finding = |drift, p: &str| Finding { drift, path: at(p) };
    vec![
        finding(Drift::Missing, "cli.md"),
        finding(Drift::Stale, "openapi.json"),
        finding(Drift::Extra, "notes.md"),
        finding(Drift::Extra, "old"),
        finding(Drift::Extra, "releases/draft.txt"),
        finding(Drift::Extra, "releases/v9.9.9.lock"),
    ]
}

#[test]
fn a_tampered_copy_fails_the_check_naming_each_stale_and_extra_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_copy(tmp.path());
    assert_eq!(check(&dir), Vec::new(), "a fresh copy passes");
    let expected = tamper(&dir);
    assert_eq!(check(&dir), expected);
}

#[test]
fn generate_check_exits_10_on_a_tampered_copy_naming_each_stale_and_extra_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fresh_copy(tmp.path());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_seneschal"))
            .args(args)
            .arg("--dir")
            .arg(&dir)
            // A maintainer command: it runs in this checkout, on the copy --dir names.
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("the binary runs")
    };
    let o = run(&["generate", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let expected = tamper(&dir);
    let o = run(&["generate", "--check"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(i32::from(EXIT_STALE)), "{err}");
    for f in &expected {
        assert!(err.contains(&format!("{f}\n")), "{f} not reported:\n{err}");
    }
    assert_eq!(
        err.lines().filter(|l| l.starts_with("stale: ")).count(),
        2,
        "{err}"
    );
    assert!(err.contains("cargo run -- generate"), "{err}");
    // Writing restores the projections; the extra entries stay until removed, and are named.
    let o = run(&["generate"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("extra: "));
    assert_eq!(
        run(&["generate", "--check"]).status.code(),
        Some(i32::from(EXIT_STALE))
    );
    std::fs::remove_file(dir.join("notes.md")).unwrap();
    std::fs::remove_dir(dir.join("old")).unwrap();
    std::fs::remove_file(dir.join(RELEASES).join("draft.txt")).unwrap();
    std::fs::remove_dir(dir.join(RELEASES).join("v9.9.9.lock")).unwrap();
    let o = run(&["generate", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}
