//! The conformance harness over the real registry: every executable capability's claims hold
//! when its examples run in a scratch copy of this repository.

use crate::support::{json, run, stderr};

#[test]
fn every_capability_of_the_registry_keeps_its_claims() {
    let o = run(&["--json", "conformance"]);
    let report = json(&o);
    let failures: Vec<String> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "FAIL")
        .map(|r| format!("{} {}: {}", r["capability"], r["check"], r["evidence"]))
        .collect();
    assert!(
        failures.is_empty(),
        "falsified claims:\n{}\n{}",
        failures.join("\n"),
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(0));
    // Every executable capability was examined, with all seven checks.
    let executable = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable())
        .count();
    assert_eq!(
        report["rows"].as_array().unwrap().len(),
        executable * seneschal::conformance::CHECKS.len()
    );
    // The process_state capabilities were observed changing process state and nothing else.
    for d in seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.effect == seneschal::policy::Effect::ProcessState)
    {
        let claims = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["capability"] == d.id && r["check"] == "claims")
            .unwrap();
        assert_eq!(claims["status"], "pass", "{}", claims);
    }
}

#[test]
fn the_table_names_every_check() {
    let o = run(&["conformance", "--only", "capabilities.show"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    // Piped stdout is JSON by convention; the human table is asked for through the library.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["passed"], true);
    let rows = seneschal::conformance::run(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        &["capabilities.show".to_string()],
    );
    let table = seneschal::conformance::table(&rows);
    for check in seneschal::conformance::CHECKS {
        assert!(table.lines().next().unwrap().contains(check), "{table}");
    }
    assert!(table.contains("capabilities.show"));
    assert!(table.contains("0 failed"), "{table}");
}

#[test]
fn example_digests_match_the_objects_they_name() {
    // Writer examples carry the digest of a real object of this repository: when the object is
    // edited, the manifest must be updated too, and this says exactly where.
    for d in seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable())
    {
        let examples: serde_json::Value = serde_json::from_str(d.examples_json).unwrap();
        for ex in examples
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["outcome"] == "ok")
        {
            let (Some(uri), Some(digest)) = (
                ex["input"]["uri"].as_str(),
                ex["input"]["expected_digest"].as_str(),
            ) else {
                continue;
            };
            let got = json(&run(&[
                "call",
                "knowledge.get",
                "--input",
                &serde_json::json!({"uri": uri}).to_string(),
            ]));
            assert_eq!(
                got["digest"].as_str(),
                Some(digest),
                "capabilities/{}.yaml, example `{}`: expected_digest is stale; the current digest of {uri} is {}: update the manifest",
                d.id,
                ex["title"],
                got["digest"]
            );
        }
    }
}
