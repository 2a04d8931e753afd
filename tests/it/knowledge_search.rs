//! Search quality through the built binary: on a fixture of 35 documents (32 guides, 3 ADRs),
//! the expected document ranks first for each query, and bad queries are refused.

use crate::support;
use std::path::Path;

use crate::support::{json, run_in, stderr};
use serde_json::Value;

/// The search fixture copied into a fresh scratch repository.
fn corpus() -> tempfile::TempDir {
    support::knowledge_fixture("search")
}

fn search(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--repo", dir.to_str().unwrap(), "knowledge", "search"];
    all.extend_from_slice(args);
    run_in(dir, &all)
}

fn hits(o: &std::process::Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", stderr(o));
    json(o)["hits"].as_array().unwrap().clone()
}

/// Queries written the way a person or agent would ask, not copied from titles, with the one
/// document that must come first.
const CASES: &[(&str, &str)] = &[
    ("where do secret tokens go", "guide/security-secrets"),
    ("accept changed snapshots", "guide/snapshot-tests"),
    ("rollback safe migration", "guide/database-migrations"),
    ("pager escalation", "guide/on-call"),
    ("stale cache invalidation", "guide/caching"),
    ("flamegraph hot path", "guide/profiling"),
    ("DNS rebinding", "adr/0003"),
    ("BM25 ranking", "adr/0002"),
    ("screen reader keyboard", "guide/accessibility"),
    ("truncating multi-byte characters", "guide/unicode-handling"),
    ("stdout protocol logs", "guide/logging"),
    ("point-in-time recovery restore drill", "guide/backups"),
    (
        "new capability manifest handler",
        "guide/writing-capabilities",
    ),
    ("prometheus histogram", "guide/metrics"),
    ("translators plural forms", "guide/translations"),
    ("postmortem", "guide/incident-response"),
    ("readOnlyHint destructive", "guide/effects-and-approval"),
    ("squash fixup commits", "guide/commit-messages"),
    ("symlink outside the repository", "guide/symlinks"),
    ("redefine a distributed kind", "guide/knowledge-kinds"),
    ("cargo audit advisories", "guide/dependency-updates"),
    ("OpenAPI problem documents", "guide/http-api"),
];

#[test]
fn the_expected_document_ranks_first() {
    let repo = corpus();
    let mut misses = Vec::new();
    for (query, expected) in CASES {
        let found = hits(&search(repo.path(), &["--query", query, "--limit", "3"]));
        let first = found
            .first()
            .and_then(|h| h["uri"].as_str())
            .unwrap_or("(nothing)");
        if first != format!("seneschal://knowledge/{expected}") {
            misses.push(format!("{query:?}: expected {expected}, got {first}"));
        }
    }
    assert!(
        misses.is_empty(),
        "{} of {} queries missed:\n{}",
        misses.len(),
        CASES.len(),
        misses.join("\n")
    );
}

#[test]
fn hits_are_ranked_with_snippets_and_filtered_by_kind() {
    let repo = corpus();
    let found = hits(&search(repo.path(), &["--query", "release"]));
    assert!(found.len() > 2);
    let scores: Vec<f64> = found.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // Title words weigh most: the guide titled "Cutting a release" beats mere mentions.
    assert_eq!(
        found[0]["uri"],
        "seneschal://knowledge/guide/release-process"
    );
    assert_eq!(found[0]["title"], "Cutting a release");
    assert!(
        found[0]["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("release"),
        "{}",
        found[0]
    );

    let limited = hits(&search(
        repo.path(),
        &["--query", "release", "--limit", "2"],
    ));
    assert_eq!(limited.len(), 2);
    let adrs = hits(&search(
        repo.path(),
        &["--query", "search security", "--kind", "adr"],
    ));
    assert!(!adrs.is_empty());
    assert!(adrs.iter().all(|h| h["kind"] == "adr"), "{adrs:?}");
    // Inflections meet: "caches" finds the guide that says "cached" and "cache".
    assert_eq!(
        hits(&search(repo.path(), &["--query", "caches"]))[0]["uri"],
        "seneschal://knowledge/guide/caching"
    );
    // A word nobody wrote finds nothing, which is not an error.
    assert!(hits(&search(repo.path(), &["--query", "zeppelin"])).is_empty());
}

#[test]
fn queries_without_words_and_unknown_kinds_are_invalid_input() {
    let repo = corpus();
    for args in [
        &["--query", "the of and"][..],
        &["--query", "?!"],
        &["--query", "cache", "--kind", "recipe"],
    ] {
        let o = search(repo.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).starts_with("error[invalid_input]"),
            "{}",
            stderr(&o)
        );
    }
    let o = run_in(
        repo.path(),
        &[
            "--repo",
            repo.path().to_str().unwrap(),
            "call",
            "knowledge.search",
            "--input",
            "{\"query\":\"\"}",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
}
