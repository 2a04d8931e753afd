//! Fuzz target: a capability manifest's text into the codegen loader and validator
//! (`seneschal_codegen::load::load_manifest`), as build.rs reads `capabilities/*.yaml`.
//!
//! Invariants: it never panics; every failure is a non-empty list of diagnostics, each naming
//! the file it was given and saying what is wrong; a JSON pointer, when given, is one.

#![no_main]

use libfuzzer_sys::fuzz_target;

const FILE: &str = "capabilities/fuzz.yaml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // build.rs reads manifests as UTF-8 text; other bytes never reach the loader.
        return;
    };
    match seneschal_codegen::load::load_manifest(text, FILE) {
        Ok(_) => {}
        Err(diags) => {
            assert!(!diags.is_empty(), "a failure without a diagnostic");
            for d in &diags {
                assert_eq!(d.file, FILE, "{d}");
                assert!(!d.message.trim().is_empty(), "{d}");
                assert!(d.pointer.is_empty() || d.pointer.starts_with('/'), "{d}");
                assert!(d.to_string().contains(FILE), "{d}");
            }
        }
    }
});
