//! Every declared example of every executable capability, run through the executor in a
//! scratch copy of this repository, ends with the outcome its manifest declares: a handler
//! that contradicts its examples fails here in seconds, not in the whole conformance matrix
//! (`seneschal conformance`, which also checks the effect claims).

use std::path::Path;

use seneschal::context::Context;
use seneschal::execute::{execute_index, Transport};
use seneschal::policy::Effect;
use seneschal::registry::{Descriptor, CAPABILITIES};
use serde_json::Value;

/// One declared example: `(title, input, declared outcome)`.
type Example = (String, Value, String);

/// The examples of `d`.
fn examples(d: &Descriptor) -> Vec<Example> {
    let v: Value = serde_json::from_str(d.examples_json).expect("examples are JSON");
    v.as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["title"].as_str().unwrap_or_default().to_string(),
                e["input"].clone(),
                e["outcome"].as_str().unwrap_or("ok").to_string(),
            )
        })
        .collect()
}

/// The contradictions of the examples of the capability at `index`, run in `repo` (a
/// writer's examples each in a fresh copy of it, so no example sees another's effect).
fn contradictions(index: usize, declared: &[Example], repo: &Path) -> Vec<String> {
    let d = &CAPABILITIES[index];
    let mut out = Vec::new();
    for (title, input, expected) in declared {
        let copy;
        let root = if d.effect == Effect::RepositoryWrite {
            copy = tempfile::tempdir().unwrap();
            copy_tree(repo, copy.path());
            copy.path().to_path_buf()
        } else {
            repo.to_path_buf()
        };
        let ctx = Context::scratch(root, Effect::RepositoryWrite);
        // The runner approves what it runs, as the conformance harness does.
        let harness = std::sync::Arc::new(seneschal::interact::Accepting("harness"));
        let got = match execute_index(
            &ctx,
            index,
            input.clone(),
            seneschal::execute::Caller::new(Transport::Conformance, harness),
        ) {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("{} ({})", e.code.as_str(), e.message),
        };
        if got.split(' ').next() != Some(expected.as_str()) {
            out.push(format!(
                "{}: example `{title}` declares {expected}, the handler answered {got}",
                d.id
            ));
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The scratch base: the files git tracks here, committed once in a repository of their own.
fn base() -> seneschal::conformance::Scratch {
    seneschal::conformance::scratch(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("a scratch copy")
}

#[test]
fn every_example_ends_with_its_declared_outcome() {
    let base = base();
    let runs: Vec<(usize, Vec<Example>)> = CAPABILITIES
        .iter()
        .enumerate()
        .filter(|(_, d)| d.executable())
        .map(|(i, d)| (i, examples(d)))
        .collect();
    let checked: usize = runs.iter().map(|(_, e)| e.len()).sum();
    // Capabilities are independent (a writer's examples run in copies): four at a time, as
    // the calls mostly wait on git and the file system.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .chunks(runs.len().div_ceil(4))
            .map(|part| {
                let root = &base.path;
                scope.spawn(move || {
                    part.iter()
                        .flat_map(|(i, declared)| contradictions(*i, declared, root))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an example thread panicked"))
            .collect()
    });
    assert!(checked > 20, "only {checked} examples were run");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The check fails when a handler contradicts an example: the same call declared with the
/// other outcome is reported, naming the capability, the example and both outcomes.
#[test]
fn a_contradicted_example_is_reported() {
    let base = base();
    let index = CAPABILITIES
        .iter()
        .position(|d| d.id == "capabilities.show")
        .expect("capabilities.show");
    let lie = vec![(
        "an unknown id".to_string(),
        serde_json::json!({"id": "no.such.capability"}),
        "ok".to_string(),
    )];
    let found = contradictions(index, &lie, &base.path);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "capabilities.show: example `an unknown id` declares ok, the handler answered not_found"
        ),
        "{found:?}"
    );
}
