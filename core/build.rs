//! Compiles the capability manifests into typed dispatch and every projection.
//! All the work is in the `seneschal-codegen` crate; see docs/ARCHITECTURE.md.

use std::path::PathBuf;

fn main() {
    // The manifests, schemas and generated/ are the workspace's, one folder up.
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .parent()
            .expect("core is a folder of the workspace")
            .to_path_buf();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    if let Err(message) = seneschal_codegen::build(&root, &out, &version) {
        // `cargo::error` (Cargo 1.84, below the MSRV) shows each line first, as an error of
        // its own, and fails the build: no `rerun-if-changed` lines or panic block above it.
        for line in message.lines() {
            println!("cargo::error={line}");
        }
    }
}
