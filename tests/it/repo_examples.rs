//! Every example of the repository queries, run through `seneschal call` in this very
//! repository, ends with the outcome its manifest declares.

use crate::support::{json, run, stderr};

const IDS: [&str; 7] = [
    "repo.identity",
    "repo.status",
    "repo.log",
    "files.read",
    "files.search",
    "session.note.add",
    "session.note.list",
];

#[test]
fn every_example_has_its_declared_outcome() {
    let mut checked = 0;
    for id in IDS {
        let show = json(&run(&[
            "call",
            "capabilities.show",
            "--input",
            &format!("{{\"id\":\"{id}\"}}"),
        ]));
        let examples = show["examples"].as_array().expect("examples");
        assert!(!examples.is_empty(), "{id} has no example");
        for ex in examples {
            let o = run(&["call", id, "--input", &ex["input"].to_string()]);
            let got = if o.status.success() {
                "ok".to_string()
            } else {
                let e = stderr(&o);
                e.strip_prefix("error[")
                    .and_then(|r| r.split_once(']'))
                    .map(|(c, _)| c.to_string())
                    .unwrap_or(e)
            };
            assert_eq!(
                got,
                ex["outcome"].as_str().unwrap(),
                "{id} example `{}`: {}",
                ex["title"],
                stderr(&o)
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} examples");
}

#[test]
fn declared_effects_and_hints() {
    let proj = json(&run(&["call", "capabilities.projections"]));
    let find = |id: &str| {
        proj["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id}"))
    };
    for id in [
        "repo.identity",
        "repo.status",
        "repo.log",
        "files.read",
        "files.search",
        "session.note.list",
    ] {
        let c = find(id);
        assert_eq!(c["effect"], "read", "{id}");
        assert_eq!(c["readOnlyHint"], true, "{id}");
        assert_eq!(
            c["approval"], "session",
            "{id} discloses repository content"
        );
    }
    let add = find("session.note.add");
    assert_eq!(add["effect"], "process_state");
    assert_eq!(add["readOnlyHint"], false);
    assert_eq!(add["idempotentHint"], false);
    assert_eq!(add["destructiveHint"], false);
    assert_eq!(add["http"], "POST /api/v1/session/notes");
}
