//! The knowledge layer through the built binary: each kind, repository kinds, every bad input
//! as a finding, `knowledge.get`/`list`/`kinds`/`check`, and edits seen between calls.

use crate::support;
use std::path::Path;

use crate::support::{json, run_in, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Runs `seneschal --repo <dir> <args>`.
fn sen(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--repo", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    run_in(dir, &all)
}

fn uris(list: &Value) -> Vec<String> {
    list["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["uri"].as_str().unwrap().to_string())
        .collect()
}

/// `(file, pointer)` of every finding.
fn finding_places(check: &Value) -> Vec<(String, String)> {
    check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn each_distributed_and_repository_kind_is_served() {
    let repo = support::knowledge_fixture("kinds");
    let check = sen(repo.path(), &["knowledge", "check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    assert_eq!(json(&check)["findings"], serde_json::json!([]));
    assert_eq!(json(&check)["objects"], 9);

    let list = json(&sen(repo.path(), &["knowledge", "list"]));
    let k = |s: &str| format!("seneschal://knowledge/{s}");
    assert_eq!(
        uris(&list),
        [
            k("adr/0001"),
            k("adr/0002"),
            k("adr/0003"),
            k("guide/onboarding"),
            k("runbook/database-failover"),
            k("runbook/queue-backlog"),
            k("skill/release-notes"),
            k("skill/triage"),
            k("term/outbox"),
        ]
    );
    assert_eq!(list["total"], 9);
    assert_eq!(list["next_cursor"], Value::Null);

    // The skill id comes from `name`; the guide id from the file name; the ADR id 0002 from the
    // file name's leading number because its front matter has no `id`.
    let adr2 = json(&sen(
        repo.path(),
        &["knowledge", "get", "--uri", &k("adr/0002")],
    ));
    assert_eq!(adr2["file"], "docs/adr/0002-drop-the-message-bus.md");
    assert_eq!(adr2["front_matter"]["superseded_by"], "0003");
    let skill = json(&sen(
        repo.path(),
        &["knowledge", "get", "--uri", &k("skill/triage")],
    ));
    assert_eq!(skill["file"], ".seneschal/skills/triage/SKILL.md");
    // A repository kind in its own folder and in the generic folder; a YAML kind.
    let backlog = json(&sen(
        repo.path(),
        &["knowledge", "get", "--uri", &k("runbook/queue-backlog")],
    ));
    assert_eq!(backlog["file"], ".seneschal/knowledge/queue-backlog.md");
    assert_eq!(backlog["front_matter"]["severity"], "high");
    let term = json(&sen(
        repo.path(),
        &["knowledge", "get", "--uri", &k("term/outbox")],
    ));
    assert_eq!(term["mime_type"], "application/yaml");
    assert_eq!(term["body"], "");
    assert_eq!(term["title"], "outbox");

    let kinds = json(&sen(repo.path(), &["knowledge", "kinds"]));
    let by_name = |n: &str| {
        kinds["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name("adr")["origin"], "distributed");
    assert_eq!(
        by_name("adr")["uri_template"],
        "seneschal://knowledge/adr/{id}"
    );
    assert_eq!(
        by_name("adr")["schema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(by_name("runbook")["origin"], "repository");
    assert_eq!(by_name("term")["format"], "yaml");
    assert_eq!(kinds["kinds"].as_array().unwrap().len(), 6);
}

#[test]
fn get_returns_front_matter_body_and_digest_or_not_found() {
    let repo = support::knowledge_fixture("kinds");
    let uri = "seneschal://knowledge/adr/0001";
    let got = json(&sen(repo.path(), &["knowledge", "get", "--uri", uri]));
    let bytes = std::fs::read(repo.path().join("docs/adr/0001-use-postgres.md")).unwrap();
    let expected: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(got["digest"], format!("sha256:{expected}"));
    assert_eq!(got["front_matter"]["status"], "accepted");
    assert_eq!(
        got["front_matter"]["tags"],
        serde_json::json!(["storage", "database"])
    );
    assert!(got["body"]
        .as_str()
        .unwrap()
        .starts_with("\n# Use PostgreSQL for the order store\n"));
    assert_eq!(got["title"], "Use PostgreSQL for the order store");

    for missing in [
        "seneschal://knowledge/adr/9999",
        "seneschal://docs/architecture",
        "nonsense",
    ] {
        let o = sen(repo.path(), &["knowledge", "get", "--uri", missing]);
        assert_eq!(o.status.code(), Some(3), "{missing}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error[not_found]: "),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn list_filters_and_paginates_with_an_opaque_cursor() {
    let repo = support::knowledge_fixture("kinds");
    let p = repo.path();
    let adrs = json(&sen(p, &["knowledge", "list", "--kind", "adr"]));
    assert_eq!(adrs["total"], 3);
    let storage = json(&sen(p, &["knowledge", "list", "--tag", "storage"]));
    assert_eq!(
        uris(&storage),
        [
            "seneschal://knowledge/adr/0001",
            "seneschal://knowledge/adr/0003"
        ]
    );
    let proposed = json(&sen(p, &["knowledge", "list", "--status", "proposed"]));
    assert_eq!(uris(&proposed), ["seneschal://knowledge/adr/0003"]);

    // Walk every page of two.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = vec!["knowledge", "list", "--limit", "2"];
        if let Some(c) = &cursor {
            args.extend_from_slice(&["--cursor", c]);
        }
        let page = json(&sen(p, &args));
        assert_eq!(page["total"], 9);
        seen.extend(uris(&page));
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    assert_eq!(seen, uris(&json(&sen(p, &["knowledge", "list"]))));

    let bad = sen(p, &["knowledge", "list", "--cursor", "not-a-cursor"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("error[invalid_input]") && stderr(&bad).contains("at: /cursor"),
        "{}",
        stderr(&bad)
    );
    let bad = sen(p, &["knowledge", "list", "--kind", "recipe"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("no kind is named `recipe`"),
        "{}",
        stderr(&bad)
    );
    let bad = sen(p, &["knowledge", "list", "--limit", "0"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn redefining_a_distributed_kind_is_a_finding_not_an_override() {
    let repo = support::knowledge_fixture("redefine");
    let o = sen(repo.path(), &["knowledge", "check"]);
    assert_eq!(o.status.code(), Some(11));
    let check = json(&o);
    let places = finding_places(&check);
    assert!(
        places.contains(&(".seneschal/kinds.yaml".into(), "/kinds/adr".into())),
        "{places:?}"
    );
    // The distributed contract still judges the ADR: the looser schema was not taken.
    assert!(
        places.contains(&("docs/adr/0001-loose.md".into(), "".into())),
        "{places:?}"
    );
    let message = &check["findings"][0]["message"];
    assert!(
        message
            .as_str()
            .unwrap()
            .contains("redefines the distributed kind `adr`"),
        "{message}"
    );
    let kinds = json(&sen(repo.path(), &["knowledge", "kinds"]));
    let adr = kinds["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "adr")
        .unwrap();
    assert_eq!(adr["origin"], "distributed");
    assert_eq!(adr["schema_file"], "adr.schema.json");
}

#[test]
fn every_bad_input_is_a_finding_and_check_exits_non_zero() {
    let repo = support::knowledge_fixture("bad");
    let p = repo.path();
    // Inputs a fixture cannot hold in git: bytes that are not UTF-8, a file over the 1 MiB cap,
    // a symbolic link out of the repository and one to nowhere.
    std::fs::write(
        p.join("docs/guides/latin1.md"),
        b"---\ntitle: Caf\xe9\n---\n",
    )
    .unwrap();
    let mut huge = b"---\ntitle: Huge\n---\n".to_vec();
    huge.resize(1024 * 1024 + 1, b'x');
    std::fs::write(p.join("docs/guides/huge.md"), huge).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.md"),
        "---\ntitle: Secret\n---\nDo not serve.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        p.join("docs/guides/escape.md"),
    )
    .unwrap();
    // Links are resolved inside the repository from the folder holding them: their targets are
    // relative (an absolute target is refused as leaving the repository).
    std::os::unix::fs::symlink("nowhere.md", p.join("docs/guides/dangling.md")).unwrap();
    // A file name that is not UTF-8.
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
        std::fs::write(p.join("docs/guides").join(name), "---\ntitle: Caf\n---\n").unwrap();
    }
    // A link that stays inside the repository is an ordinary object.
    std::os::unix::fs::symlink("good.md", p.join("docs/guides/alias.md")).unwrap();

    let o = sen(p, &["knowledge", "check"]);
    assert_eq!(o.status.code(), Some(11), "{}", stderr(&o));
    let check = json(&o);
    assert_eq!(check["ok"], false);
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        finding_places(&check),
        [
            s(".seneschal/knowledge/recipe.md", "/kind"),
            s("docs/adr/0001-malformed.md", ""),
            s("docs/adr/0002-wrong-types.md", "/id"),
            s("docs/adr/0002-wrong-types.md", "/tags"),
            s("docs/adr/0007-first.md", ""),
            s("docs/adr/0007-second.md", ""),
            s("docs/adr/0009-mismatch.md", "/id"),
            s("docs/guides/caf\u{fffd}.md", ""),
            s("docs/guides/dangling.md", ""),
            s("docs/guides/escape.md", ""),
            s("docs/guides/huge.md", ""),
            s("docs/guides/latin1.md", ""),
            s("docs/guides/no-front-matter.md", ""),
        ]
    );
    let messages: Vec<&str> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    for expected in [
        "unknown kind `recipe`",
        "malformed YAML front matter",
        "is not of type \"string\"",
        "is not of type \"array\"",
        "duplicate id `0007`",
        "dangling symbolic link",
        "resolves outside the repository",
        "over the 1048576 byte (1 MiB) cap",
        "is not UTF-8",
        "has no YAML front matter",
        "the path is not UTF-8",
        "the `id` field says `0010` but the file name says `0009`",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "no finding says {expected:?}: {messages:#?}"
        );
    }
    // The secret behind the link is never read; the valid neighbours are served.
    assert!(!stdout(&o).contains("Do not serve"));
    let list = json(&sen(p, &["knowledge", "list"]));
    assert_eq!(
        uris(&list),
        [
            "seneschal://knowledge/guide/alias",
            "seneschal://knowledge/guide/good"
        ]
    );
    // The command line prints `file: pointer: message` lines for CI logs.
    let err = stderr(&o);
    assert!(
        err.contains("docs/adr/0002-wrong-types.md: /id: 2 is not of type \"string\""),
        "{err}"
    );
    assert!(
        err.contains("docs/guides/latin1.md: /: is not UTF-8"),
        "{err}"
    );
    assert!(err.contains("13 finding(s)"), "{err}");
}

#[test]
fn broken_repository_kind_declarations_are_findings() {
    let repo = support::scratch_repo();
    let p = repo.path();
    std::fs::create_dir_all(p.join(".seneschal/schemas")).unwrap();
    std::fs::write(
        p.join(".seneschal/kinds.yaml"),
        concat!(
            "kinds:\n",
            "  nofile:\n    description: d\n    files: [\"a/*.md\"]\n    id: { field: id }\n    schema: missing.schema.json\n",
            "  deep:\n    description: d\n    files: [\"a/**/*.md\"]\n    id: { field: id }\n    schema: ok.schema.json\n",
            "  typo:\n    description: d\n    files: [\"a/*.md\"]\n    idd: { field: id }\n    schema: ok.schema.json\n",
            "  broken:\n    description: d\n    files: [\"b/*.md\"]\n    id: { field: id }\n    schema: broken.schema.json\n",
            "  Bad_Name:\n    description: d\n    files: [\"c/*.md\"]\n    id: { field: id }\n    schema: ok.schema.json\n",
            "  unclosed:\n    description: d\n    files: [\"d/*.md\"]\n    id: { file_pattern: \"^(.+\" }\n    schema: ok.schema.json\n",
            "  lookahead:\n    description: d\n    files: [\"e/*.md\"]\n    id: { file_pattern: \"^(?!x)(.+)\\\\.md$\" }\n    schema: ok.schema.json\n",
        ),
    )
    .unwrap();
    std::fs::write(
        p.join(".seneschal/schemas/ok.schema.json"),
        "{\"type\":\"object\"}",
    )
    .unwrap();
    std::fs::write(
        p.join(".seneschal/schemas/broken.schema.json"),
        "{\"type\":\"no-such-type\"}",
    )
    .unwrap();
    let o = sen(p, &["knowledge", "check"]);
    assert_eq!(o.status.code(), Some(11));
    let s = |a: &str| (".seneschal/kinds.yaml".to_string(), a.to_string());
    assert_eq!(
        finding_places(&json(&o)),
        [
            s("/kinds/Bad_Name"),
            s("/kinds/broken/schema"),
            s("/kinds/deep/files/0"),
            s("/kinds/lookahead/id/file_pattern"),
            s("/kinds/nofile/schema"),
            s("/kinds/typo"),
            s("/kinds/unclosed/id/file_pattern")
        ]
    );
    let kinds = json(&sen(p, &["knowledge", "kinds"]));
    assert_eq!(
        kinds["kinds"].as_array().unwrap().len(),
        4,
        "only the distributed kinds load"
    );
}

#[test]
fn edits_additions_and_removals_are_seen_between_calls() {
    let repo = support::knowledge_fixture("kinds");
    let p = repo.path();
    let uri = "seneschal://knowledge/guide/onboarding";
    let before = json(&sen(p, &["knowledge", "get", "--uri", uri]));
    std::fs::write(
        p.join("docs/guides/onboarding.md"),
        "---\ntitle: Onboarding, revised\n---\nNew text.\n",
    )
    .unwrap();
    let after = json(&sen(p, &["knowledge", "get", "--uri", uri]));
    assert_eq!(after["title"], "Onboarding, revised");
    assert_ne!(after["digest"], before["digest"]);

    std::fs::write(
        p.join("docs/guides/deploying.md"),
        "---\ntitle: Deploying\n---\nShip it.\n",
    )
    .unwrap();
    let hits = json(&sen(p, &["knowledge", "search", "--query", "deploying"]));
    assert_eq!(
        hits["hits"][0]["uri"],
        "seneschal://knowledge/guide/deploying"
    );

    std::fs::remove_file(p.join("docs/guides/onboarding.md")).unwrap();
    assert_eq!(
        sen(p, &["knowledge", "get", "--uri", uri]).status.code(),
        Some(3)
    );
}

#[test]
fn this_repository_passes_its_own_check() {
    let o = support::run(&["knowledge", "check"]);
    assert!(
        o.status.success(),
        "knowledge check fails here:\n{}",
        stderr(&o)
    );
    let list = json(&support::run(&["knowledge", "list", "--kind", "adr"]));
    assert!(
        uris(&list).contains(&"seneschal://knowledge/adr/0001".to_string()),
        "{list}"
    );
    let guides = json(&support::run(&["knowledge", "list", "--kind", "guide"]));
    assert!(
        uris(&guides).contains(&"seneschal://knowledge/guide/writing-knowledge".to_string()),
        "{guides}"
    );
}

#[test]
fn resources_templates_and_read_serve_the_objects() {
    use seneschal::context::Context;
    use seneschal::policy::Effect;
    let repo = support::knowledge_fixture("kinds");
    let ctx = Context::new(repo.path().to_path_buf(), Effect::Read);
    let resources = seneschal::knowledge::resources(&ctx.knowledge, &ctx.repo);
    assert_eq!(resources.len(), 9);
    let adr = &resources[0];
    assert_eq!(adr.uri, "seneschal://knowledge/adr/0001");
    assert_eq!(adr.name, "0001");
    assert_eq!(adr.title, "Use PostgreSQL for the order store");
    assert_eq!(adr.mime_type, "text/markdown");
    // Without a description, the first paragraph of the body stands in.
    assert_eq!(
        adr.description,
        "We need transactions across orders and payments."
    );
    let (mime, text) = seneschal::knowledge::read(&ctx.knowledge, &ctx.repo, &adr.uri).unwrap();
    assert_eq!(mime, "text/markdown");
    assert_eq!(
        text,
        std::fs::read_to_string(repo.path().join("docs/adr/0001-use-postgres.md")).unwrap()
    );
    assert!(seneschal::knowledge::read(
        &ctx.knowledge,
        &ctx.repo,
        "seneschal://knowledge/adr/0404"
    )
    .is_none());
    let templates = seneschal::knowledge::templates(&ctx.knowledge, &ctx.repo);
    let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["adr", "guide", "instructions", "runbook", "skill", "term"]
    );
    assert_eq!(templates[0].uri_template, "seneschal://knowledge/adr/{id}");
    assert_eq!(templates[5].mime_type, "application/yaml");
}
