//! Freshness: the committed projections under `generated/` equal what this build produced.
//! On mismatch the test names the command that regenerates them; `SENESCHAL_BLESS=1`
//! rewrites them instead (STYLE 5).

use std::path::Path;

use seneschal::registry::projections::COMMITTED;

#[test]
fn committed_projections_are_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    let bless = std::env::var_os("SENESCHAL_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, bytes) in COMMITTED {
        let path = dir.join(name);
        let current = std::fs::read(&path).unwrap_or_default();
        if current != bytes.as_bytes() {
            if bless {
                std::fs::write(&path, bytes).expect("write");
            } else {
                stale.push(format!("generated/{name}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale projections: {}\nregenerate with `cargo run -- generate` (or SENESCHAL_BLESS=1 cargo test --test freshness) and commit",
        stale.join(", ")
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
