//! Knowledge from the repositories people actually have: the ADR folders of public
//! repositories (adr-tools/Nygard, MADR 2–4, log4brains), reduced to their knowledge folders
//! under `tests/fixtures/knowledge-real/<owner>-<name>/` (each with its licence, a `SOURCE.md`
//! naming the repository and commit, and an `expected.json`), each copied into a scratch git
//! repository and read by the built binary. Every record is served with its title, status and
//! date; no README, index or template file is served; every Markdown file of an ADR folder
//! that no kind reads is reported by `knowledge check`; search ranks the record a person would
//! pick first.

use std::path::{Path, PathBuf};

use crate::support::{self, json, run_in, stderr};
use serde_json::Value;

/// The real fixtures, by folder name.
const FIXTURES: &[&str] = &[
    "npryce-adr-tools",
    "alphagov-verify-service-provider",
    "Midnighter-structurizr-python",
    "adr-madr",
    "thomvaill-log4brains",
    "JabRef-jabref",
    "nats-io-nats-architecture-and-design",
    "celestiaorg-celestia-app",
    "s3gw-tech-s3gw",
];

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/knowledge-real")
        .join(name)
}

/// The fixture copied into a fresh scratch git repository.
fn repo_of(name: &str) -> tempfile::TempDir {
    let repo = support::scratch_repo();
    support::copy_tree(&fixture_dir(name), repo.path());
    repo
}

fn sen(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--repo", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    run_in(dir, &all)
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture_dir(name).join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every object of kind `adr`, all pages.
fn adrs(dir: &Path) -> Vec<Value> {
    let o = sen(
        dir,
        &["knowledge", "list", "--kind", "adr", "--limit", "500"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let list = json(&o);
    assert_eq!(list["next_cursor"], Value::Null);
    list["objects"].as_array().unwrap().clone()
}

fn check(dir: &Path) -> Value {
    let o = sen(dir, &["knowledge", "check"]);
    json(&o)
}

#[test]
fn every_record_of_every_real_fixture_is_served_with_its_title_status_and_date() {
    let mut served_counts = Vec::new();
    for name in FIXTURES {
        let source = std::fs::read_to_string(fixture_dir(name).join("SOURCE.md")).unwrap();
        assert!(
            source.contains("https://github.com/"),
            "{name}: SOURCE.md names no repository"
        );
        assert!(
            std::fs::read_dir(fixture_dir(name)).unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("LICENSE")),
            "{name}: no licence file"
        );
        let want = expected(name);
        let records = want["records"].as_array().unwrap();
        assert!(!records.is_empty(), "{name}: expected.json lists no record");
        let repo = repo_of(name);
        let got = adrs(repo.path());
        let ids = |v: &[Value]| -> Vec<String> {
            v.iter()
                .map(|o| o["id"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(ids(&got), ids(records), "{name}: the records served");
        for (o, e) in got.iter().zip(records) {
            let at = format!("{name} {}", e["id"]);
            assert_eq!(o["file"], e["file"], "{at}");
            assert_eq!(o["title"], e["title"], "{at}");
            assert_eq!(o["status"], e["status"], "{at}");
            assert!(
                !o["description"].as_str().unwrap().starts_with("Date:"),
                "{at}: {}",
                o["description"]
            );
            // Date, format and relations live in the served front matter.
            let uri = o["uri"].as_str().unwrap();
            let full = json(&sen(repo.path(), &["knowledge", "get", "--uri", uri]));
            let fm = &full["front_matter"];
            assert_eq!(fm.get("date").unwrap_or(&Value::Null), &e["date"], "{at}");
            assert_eq!(fm["adr_format"], e["format"], "{at}");
            for key in ["supersedes", "superseded_by", "amends", "amended_by"] {
                assert_eq!(
                    fm.get(key).unwrap_or(&Value::Null),
                    e.get(key).unwrap_or(&Value::Null),
                    "{at} {key}"
                );
            }
        }
        // No README, index or template file is served, under any kind.
        let all = json(&sen(repo.path(), &["knowledge", "list", "--limit", "500"]));
        let files: Vec<&str> = all["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["file"].as_str().unwrap())
            .collect();
        for f in want["not_served"].as_array().unwrap() {
            assert!(
                !files.contains(&f.as_str().unwrap()),
                "{name}: {f} is served"
            );
        }
        // Each fixture's own Markdown files are all read or recognised: no unread-files
        // finding; the other findings are the statuses and dates the files write their own way,
        // and the HTML comments and unused link definitions a rendered view hides.
        let c = check(repo.path());
        for f in c["findings"].as_array().unwrap() {
            let pointer = f["pointer"].as_str().unwrap();
            assert!(
                pointer == "/status"
                    || pointer == "/date"
                    || (pointer == "/body"
                        && f["message"]
                            .as_str()
                            .unwrap()
                            .starts_with("holds hidden content")),
                "{name}: unexpected finding {f}"
            );
        }
        served_counts.push((name, got.len()));
    }
    let total: usize = served_counts.iter().map(|(_, n)| n).sum();
    assert_eq!(total, 241, "{served_counts:?}");
}

#[test]
fn statuses_are_mapped_where_certain_and_otherwise_reported_and_served() {
    // adr/madr 0003 says `status: on hold`: served as written, and a finding lists the set.
    let repo = repo_of("adr-madr");
    let c = check(repo.path());
    let f: Vec<&Value> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "docs/decisions/0003-provide-own-madr-tools.md")
        .collect();
    assert_eq!(f.len(), 1, "{c}");
    assert_eq!(f[0]["pointer"], "/status");
    let message = f[0]["message"].as_str().unwrap();
    for status in [
        "proposed",
        "accepted",
        "superseded",
        "deprecated",
        "rejected",
    ] {
        assert!(message.contains(status), "{message}");
    }
    let on_hold = sen(repo.path(), &["knowledge", "list", "--status", "on hold"]);
    assert_eq!(json(&on_hold)["total"], 1);

    // A synonym and an emphasis are mapped, the text as written kept beside the status.
    let dir = repo.path().join("docs/decisions");
    std::fs::write(
        dir.join("0019-approved-thing.md"),
        "---\nstatus: Approved\ndate: 2024-01-02\nnav_order: 19\n---\n# Approved thing\n\n## Context and Problem Statement\n\nWe needed one.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("0020-replaced.md"),
        "# Replaced\n\n* Status: **Superseded by [ADR-0019](0019-approved-thing.md)**\n* Date: 2024-01-03\n\n## Context and Problem Statement\n\nOld.\n",
    )
    .unwrap();
    let got = json(&sen(
        repo.path(),
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/adr/0019",
        ],
    ));
    assert_eq!(got["front_matter"]["status"], "accepted");
    assert_eq!(got["front_matter"]["status_text"], "Approved");
    assert_eq!(
        got["front_matter"]["nav_order"], 19,
        "unknown keys are kept"
    );
    let got = json(&sen(
        repo.path(),
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/adr/0020",
        ],
    ));
    assert_eq!(got["front_matter"]["status"], "superseded");
    assert_eq!(got["front_matter"]["superseded_by"], "0019");
    assert_eq!(got["front_matter"]["adr_format"], "madr2");
    // seneschal's own front matter keeps its contract, its status matched without case.
    std::fs::write(
        dir.join("0021-own.md"),
        "---\ntitle: Our own format\nstatus: Accepted\ndate: 2024-01-04\n---\nBody.\n",
    )
    .unwrap();
    let got = json(&sen(
        repo.path(),
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/adr/0021",
        ],
    ));
    assert_eq!(
        got["front_matter"],
        serde_json::json!({"title": "Our own format", "status": "accepted", "date": "2024-01-04"})
    );
    std::fs::write(
        dir.join("0022-own-bad.md"),
        "---\ntitle: Our own format, no date\nstatus: accepted\n---\nBody.\n",
    )
    .unwrap();
    let c = check(repo.path());
    assert!(
        c["findings"].as_array().unwrap().iter().any(|f| f["file"]
            == "docs/decisions/0022-own-bad.md"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("\"date\" is a required property")),
        "{c}"
    );
    let accepted = json(&sen(
        repo.path(),
        &["knowledge", "list", "--status", "accepted"],
    ));
    assert!(
        accepted["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["id"] == "0019"),
        "{accepted}"
    );
}

#[test]
fn markdown_files_no_kind_reads_are_reported_by_check() {
    let repo = repo_of("npryce-adr-tools");
    let p = repo.path();
    std::fs::create_dir_all(p.join("doc/adr/drafts")).unwrap();
    std::fs::write(p.join("doc/adr/drafts/0010-maybe.md"), "# 10. Maybe\n").unwrap();
    std::fs::write(p.join("doc/adr/0011-long-name.markdown"), "# 11. Long\n").unwrap();
    std::fs::write(p.join("doc/adr/README.md"), "# Decisions\n").unwrap();
    std::fs::write(p.join("doc/adr/notes.txt"), "not Markdown\n").unwrap();
    let o = sen(p, &["knowledge", "check"]);
    assert_eq!(o.status.code(), Some(11), "{}", stderr(&o));
    let c = json(&o);
    let unread: Vec<&Value> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "doc/adr")
        .collect();
    assert_eq!(unread.len(), 1, "{c}");
    assert_eq!(
        unread[0]["message"],
        "2 Markdown files in doc/adr were not read: 0011-long-name.markdown, drafts/0010-maybe.md; \
         no kind's files match them (list them under `files:` in .seneschal/kinds.yaml)"
    );
    // The README is recognised, not served and not reported; the nine records still are.
    assert_eq!(adrs(p).len(), 9);
    // Naming the files in the repository's kinds.yaml reads them.
    std::fs::create_dir_all(p.join(".seneschal")).unwrap();
    std::fs::write(
        p.join(".seneschal/kinds.yaml"),
        "files:\n  adr: [\"doc/adr/*.md\", \"doc/adr/*.markdown\", \"doc/adr/drafts/*.md\"]\n",
    )
    .unwrap();
    let c = check(p);
    assert_eq!(c["findings"], serde_json::json!([]), "{c}");
    assert_eq!(adrs(p).len(), 11);
}

#[test]
fn adr_folders_come_from_adr_dir_or_the_usual_places() {
    // structurizr-python keeps its records where its `.adr-dir` says, no usual place.
    let repo = repo_of("Midnighter-structurizr-python");
    let p = repo.path();
    assert_eq!(adrs(p).len(), 9);
    let kinds = json(&sen(p, &["knowledge", "kinds"]));
    let adr = kinds["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "adr")
        .unwrap()
        .clone();
    assert_eq!(
        adr["files"],
        serde_json::json!(["docs/development/adr/*.md"])
    );
    // Without `.adr-dir`, that folder is still found by the shape of its files (numbered
    // records in a folder named `adr`); a usual one is read too, when it appears.
    std::fs::remove_file(p.join(".adr-dir")).unwrap();
    assert_eq!(adrs(p).len(), 9);
    std::fs::remove_dir_all(p.join("docs/development/adr")).unwrap();
    assert_eq!(adrs(p).len(), 0);
    std::fs::create_dir_all(p.join("architecture/decisions")).unwrap();
    std::fs::write(
        p.join("architecture/decisions/0001-one.md"),
        "# 1. One\n\nDate: 2020-01-01\n\n## Status\n\nAccepted\n\n## Context\n\nWhy one.\n",
    )
    .unwrap();
    let got = adrs(p);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["title"], "One");
    assert_eq!(got[0]["description"], "Why one.");
    // An `.adr-dir` that leaves the repository is a finding, not a folder.
    std::fs::write(p.join(".adr-dir"), "../elsewhere\n").unwrap();
    let c = check(p);
    assert!(
        c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == ".adr-dir"),
        "{c}"
    );
}

#[test]
fn log4brains_records_of_one_day_keep_distinct_slug_ids() {
    let repo = repo_of("thomvaill-log4brains");
    let got = adrs(repo.path());
    let same_day: Vec<&str> = got
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .filter(|id| id.starts_with("20200925-"))
        .collect();
    assert_eq!(
        same_day,
        [
            "20200925-multi-packages-architecture-in-a-monorepo-with-yarn-and-lerna",
            "20200925-use-prettier-eslint-airbnb-for-the-code-style"
        ]
    );
}

/// Queries a person would type, the record they would pick first, and why.
const SEARCHES: &[(&str, &str, &str, &str)] = &[
    (
        "npryce-adr-tools",
        "date format",
        "adr/0008",
        "0008 decides the ISO 8601 format of dates; no other record is about dates",
    ),
    (
        "alphagov-verify-service-provider",
        "dependency injection",
        "adr/0009",
        "0009 is the decision not to use a dependency injection framework",
    ),
    (
        "thomvaill-log4brains",
        "full-text search",
        "adr/20201103-use-lunr-for-search",
        "the Lunr record is the one that chose the search engine",
    ),
    (
        "adr-madr",
        "license",
        "adr/0001",
        "0001 dual-licenses the work (CC0 or MIT); the others mention no licence",
    ),
    (
        "JabRef-jabref",
        "logging framework",
        "adr/0002",
        "0002 chose SLF4J with log4j2 for logging",
    ),
];

#[test]
fn search_ranks_the_record_a_person_would_pick_first() {
    let mut misses = Vec::new();
    for (fixture, query, want, why) in SEARCHES {
        let repo = repo_of(fixture);
        let o = sen(repo.path(), &["knowledge", "search", "--query", query]);
        assert!(o.status.success(), "{}", stderr(&o));
        let hits = json(&o)["hits"].as_array().unwrap().clone();
        let first = hits
            .first()
            .and_then(|h| h["uri"].as_str())
            .unwrap_or("(none)")
            .to_string();
        if first != format!("seneschal://knowledge/{want}") {
            misses.push(format!(
                "{fixture}: {query:?} → {first}, wanted {want} ({why})"
            ));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}

#[test]
fn agent_instruction_files_and_skill_folders_are_served() {
    use crate::support::mcp::Mcp;
    let repo = support::scratch_repo();
    let p = repo.path();
    let write = |rel: &str, text: &str| {
        let f = p.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    write(
        "AGENTS.md",
        "# Working in this repository\n\nRun the tests before every commit.\n",
    );
    write("CLAUDE.md", "See AGENTS.md.\n");
    write(
        ".github/copilot-instructions.md",
        "# Copilot\n\nPrefer small functions.\n",
    );
    write(
        ".cursor/rules/style.mdc",
        "---\ndescription: House style for Rust\nglobs: \"src/**/*.rs\"\nalwaysApply: false\n---\nUse rustfmt.\n",
    );
    write(
        ".claude/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write the release notes from the merged pull requests.\nmodel: any\n---\n# Release notes\n\nList the merged pull requests.\n",
    );
    let c = check(p);
    assert_eq!(c["findings"], serde_json::json!([]), "{c}");
    let list = json(&sen(p, &["knowledge", "list", "--kind", "instructions"]));
    let got: Vec<(String, String)> = list["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["uri"].as_str().unwrap().to_string(),
                o["title"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let k = |id: &str, t: &str| {
        (
            format!("seneschal://knowledge/instructions/{id}"),
            t.to_string(),
        )
    };
    assert_eq!(
        got,
        [
            k("AGENTS.md", "Working in this repository"),
            k("CLAUDE.md", "CLAUDE.md"),
            k("copilot-instructions.md", "Copilot"),
            k("style.mdc", "style.mdc"),
        ]
    );
    let rule = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/instructions/style.mdc",
        ],
    ));
    assert_eq!(rule["front_matter"]["globs"], "src/**/*.rs");
    assert_eq!(rule["body"], "Use rustfmt.\n");
    // The skill, with a key of another tool kept, is a resource and a prompt.
    let skill = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/skill/release-notes",
        ],
    ));
    assert_eq!(skill["file"], ".claude/skills/release-notes/SKILL.md");
    assert_eq!(skill["front_matter"]["model"], "any");
    let mut mcp = Mcp::start_with(p, &[], &[]);
    mcp.initialize("2025-11-25");
    let prompts = mcp.request("prompts/list", serde_json::json!({}));
    let resources = mcp.request("resources/list", serde_json::json!({}));
    let (status, _, _) = mcp.finish();
    assert!(status.success());
    let names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["release-notes"], "{prompts}");
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"seneschal://knowledge/instructions/AGENTS.md")
            && uris.contains(&"seneschal://knowledge/skill/release-notes"),
        "{uris:?}"
    );
}

/// `knowledge.create` through the command line, approved.
fn create(dir: &Path, input: Value) -> Value {
    let o = support::call(dir, "knowledge.create", input);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

#[test]
fn a_new_record_is_written_in_the_repository_s_own_format_folder_and_numbering() {
    // adr-tools: the next number, `# N. Title`, a `Date:` line and a `## Status` section.
    let repo = repo_of("npryce-adr-tools");
    let p = repo.path();
    let made = create(
        p,
        serde_json::json!({"kind": "adr", "front_matter": {"title": "Use JSON for output", "status": "Proposed"},
               "body": "## Context\n\nScripts parse the output.\n\n## Decision\n\nJSON.\n"}),
    );
    assert_eq!(made["file"], "doc/adr/0010-use-json-for-output.md");
    let text = std::fs::read_to_string(p.join("doc/adr/0010-use-json-for-output.md")).unwrap();
    let today = &json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/adr/0010",
        ],
    ))["front_matter"]["date"];
    assert_eq!(
        text,
        format!(
            "# 10. Use JSON for output\n\nDate: {}\n\n## Status\n\nProposed\n\n## Context\n\nScripts parse the output.\n\n## Decision\n\nJSON.\n",
            today.as_str().unwrap()
        )
    );
    // An update keeps the format: superseding 0004 rewrites its status section with a link.
    let uri = "seneschal://knowledge/adr/0004";
    let before = json(&sen(p, &["knowledge", "get", "--uri", uri]));
    let mut front = before["front_matter"].clone();
    front["status"] = "superseded".into();
    front["superseded_by"] = "0010".into();
    let o = support::call(
        p,
        "knowledge.update",
        serde_json::json!({"uri": uri, "expected_digest": before["digest"], "front_matter": front}),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(p.join("doc/adr/0004-markdown-format.md")).unwrap();
    assert!(
        text.starts_with(
            "# 4. Markdown format\n\nDate: 2016-02-12\n\n## Status\n\nSuperseded by [10. Use JSON for output](0010-use-json-for-output.md)\n\n## Context\n"
        ),
        "{text}"
    );
    let after = json(&sen(p, &["knowledge", "get", "--uri", uri]));
    assert_eq!(after["front_matter"]["status"], "superseded");
    assert_eq!(after["front_matter"]["superseded_by"], "0010");
    assert_eq!(after["front_matter"]["adr_format"], "nygard");
    assert_eq!(after["title"], "Markdown format");
    // A status outside the set is refused before anything is written, naming the set.
    let o = support::call(
        p,
        "knowledge.create",
        serde_json::json!({"kind": "adr", "front_matter": {"title": "Maybe", "status": "pondering"}}),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("proposed, accepted, superseded, deprecated, rejected"),
        "{}",
        stderr(&o)
    );

    // log4brains: a date-named file, `- Status:` and `- Date:` bullets.
    let repo = repo_of("thomvaill-log4brains");
    let p = repo.path();
    let made = create(
        p,
        serde_json::json!({"kind": "adr", "front_matter": {"title": "Use pnpm", "status": "accepted", "date": "2021-02-01"},
               "body": "## Context and Problem Statement\n\nInstalls are slow.\n"}),
    );
    assert_eq!(made["uri"], "seneschal://knowledge/adr/20210201-use-pnpm");
    assert_eq!(
        std::fs::read_to_string(p.join("docs/adr/20210201-use-pnpm.md")).unwrap(),
        "# Use pnpm\n\n- Status: accepted\n- Date: 2021-02-01\n\n## Context and Problem Statement\n\nInstalls are slow.\n"
    );

    // MADR: its front matter keys, the title as the heading.
    let repo = repo_of("adr-madr");
    let p = repo.path();
    let made = create(
        p,
        serde_json::json!({"kind": "adr", "front_matter": {"title": "Use a changelog", "parent": "Decisions", "nav_order": 19, "status": "accepted"},
               "body": "## Context and Problem Statement\n\nReleases need notes.\n"}),
    );
    assert_eq!(made["file"], "docs/decisions/0019-use-a-changelog.md");
    let got = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/adr/0019",
        ],
    ));
    assert_eq!(got["title"], "Use a changelog");
    assert_eq!(got["front_matter"]["nav_order"], 19);
    assert_eq!(got["front_matter"]["status"], "accepted");
    assert_eq!(got["front_matter"]["adr_format"], "madr");
    assert_eq!(
        std::fs::read_to_string(p.join("docs/decisions/0019-use-a-changelog.md")).unwrap(),
        "---\nnav_order: 19\nparent: Decisions\nstatus: accepted\n---\n# Use a changelog\n\n## Context and Problem Statement\n\nReleases need notes.\n"
    );
}

#[test]
fn adr_folders_are_found_by_the_shape_of_their_files_and_check_names_those_it_does_not_read() {
    // celestia-app keeps `adr-NNN-*.md` in docs/architecture, no usual place: found and read.
    let repo = repo_of("celestiaorg-celestia-app");
    let p = repo.path();
    assert_eq!(adrs(p).len(), 27);
    assert_eq!(
        check(p)["adr_folders"],
        serde_json::json!(["docs/architecture"])
    );
    // With an `.adr-dir` naming another folder, those files are named as not read.
    std::fs::create_dir_all(p.join("doc/records")).unwrap();
    std::fs::write(p.join(".adr-dir"), "doc/records\n").unwrap();
    let c = check(p);
    let f: Vec<&Value> = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "docs/architecture")
        .collect();
    assert_eq!(f.len(), 1, "{c}");
    let message = f[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "26 ADR-shaped files in docs/architecture are not read: adr-001-abci++-adoption.md,"
        ) && message.ends_with("the ADR kind reads doc/records (name the folder in .adr-dir or under `files:` in .seneschal/kinds.yaml)"),
        "{message}"
    );
    assert!(!message.contains("adr-template"), "{message}");
    // Templates are never records, under any of their usual names.
    std::fs::remove_file(p.join(".adr-dir")).unwrap();
    for t in [
        "adr.template.md",
        "template.md",
        "adr-template.md",
        "x-template.md",
        "_template.md",
    ] {
        std::fs::write(
            p.join("docs/architecture").join(t),
            "# ADR {NUMBER}: {TITLE}\n\n## Status\n\nProposed\n",
        )
        .unwrap();
    }
    assert_eq!(adrs(p).len(), 27);
}

#[test]
fn agent_files_as_published_are_served_with_a_finding_for_what_breaks_a_spec() {
    // langfuse: Cursor rules with an empty `description:` (Cursor's default), AGENTS.md,
    // CLAUDE.md and skills under .agents/skills.
    let repo = repo_of("langfuse-langfuse");
    let p = repo.path();
    let c = check(p);
    assert_eq!(c["findings"], serde_json::json!([]), "{c}");
    let list = json(&sen(p, &["knowledge", "list", "--limit", "100"]));
    let uris: Vec<&str> = list["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["uri"].as_str().unwrap())
        .collect();
    for uri in [
        "seneschal://knowledge/instructions/global.mdc",
        "seneschal://knowledge/instructions/general-info.mdc",
        "seneschal://knowledge/instructions/tests.mdc",
        "seneschal://knowledge/instructions/AGENTS.md",
        "seneschal://knowledge/instructions/CLAUDE.md",
        "seneschal://knowledge/skill/turborepo",
    ] {
        assert!(uris.contains(&uri), "{uri} not served: {uris:?}");
    }
    assert_eq!(uris.len(), 14, "{uris:?}");
    let rule = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/instructions/global.mdc",
        ],
    ));
    assert_eq!(rule["front_matter"]["description"], Value::Null);
    assert_eq!(rule["front_matter"]["alwaysApply"], true);
    // A new skill goes where the house keeps its skills.
    let made = create(
        p,
        serde_json::json!({"kind": "skill", "front_matter": {"name": "release-notes",
            "description": "Write the release notes from the merged pull requests. Use when preparing a release."},
            "body": "# Release notes\n\nList the merged pull requests.\n"}),
    );
    assert_eq!(made["file"], ".agents/skills/release-notes/SKILL.md");
    // anthropics/skills: a description of 1,068 characters is served, with a finding.
    let repo = repo_of("anthropics-skills");
    let p = repo.path();
    let c = check(p);
    let findings = c["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{c}");
    assert_eq!(findings[0]["pointer"], "/description");
    assert!(
        findings[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("is 1068 characters, over the limit of 1024"),
        "{c}"
    );
    let skill = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/skill/claude-api",
        ],
    ));
    assert_eq!(skill["file"], "skills/claude-api/SKILL.md");
}

#[test]
fn hidden_content_is_shown_in_what_is_served_and_reported_by_check() {
    // s3gw 0011 opens with an HTML comment; a rendered view hides it.
    let repo = repo_of("s3gw-tech-s3gw");
    let p = repo.path();
    let c = check(p);
    assert!(
        c["findings"].as_array().unwrap().iter().any(|f| f["file"]
            == "docs/decisions/0011-sfs-timestamps.md"
            && f["pointer"] == "/body"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("1 HTML comment (line 2)")),
        "{c}"
    );
    // Invisible characters in an instruction file: served visibly, reported.
    std::fs::write(
        p.join("AGENTS.md"),
        "# Rules\n\nRun the tests.\u{200B}\u{E0049}\u{E0047}\u{202E}\n\n[unused]: https://example.invalid\n",
    )
    .unwrap();
    let got = json(&sen(
        p,
        &[
            "knowledge",
            "get",
            "--uri",
            "seneschal://knowledge/instructions/AGENTS.md",
        ],
    ));
    let body = got["body"].as_str().unwrap();
    assert!(
        body.contains("Run the tests.[U+200B][U+E0049][U+E0047][U+202E]"),
        "{body}"
    );
    assert!(!body.chars().any(|c| c == '\u{200B}' || c == '\u{202E}'));
    let c = check(p);
    let f = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "AGENTS.md")
        .unwrap_or_else(|| panic!("{c}"))
        .clone();
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("4 invisible characters"), "{message}");
    assert!(message.contains("[unused]"), "{message}");
}

#[test]
fn a_new_record_follows_the_house_of_each_new_fixture() {
    let input = serde_json::json!({"kind": "adr",
        "front_matter": {"title": "Stream snapshots", "status": "proposed", "author": "@someone", "tags": ["jetstream"]},
        "body": "## Context\n\nStreams need snapshots.\n\n## Decision\n\nTake them.\n"});
    // nats: `ADR-61.md`, the metadata table of its newest records, a date (every record has one).
    let repo = repo_of("nats-io-nats-architecture-and-design");
    let p = repo.path();
    let made = create(p, input.clone());
    assert_eq!(made["file"], "adr/ADR-61.md");
    let got = json(&sen(
        p,
        &["knowledge", "get", "--uri", "seneschal://knowledge/adr/61"],
    ));
    let date = got["front_matter"]["date"].as_str().unwrap().to_string();
    assert_eq!(
        std::fs::read_to_string(p.join("adr/ADR-61.md")).unwrap(),
        format!(
            "# Stream snapshots\n\n| Metadata | Value      |\n|----------|------------|\n| Date     | {date} |\n| Author   | @someone   |\n| Status   | Proposed   |\n| Tags     | jetstream  |\n\n## Context\n\nStreams need snapshots.\n\n## Decision\n\nTake them.\n"
        )
    );
    assert_eq!(got["front_matter"]["status"], "proposed");
    assert_eq!(got["front_matter"]["adr_format"], "table");
    // An update changes the table's status row and keeps the body's own `## Status` section.
    let uri = "seneschal://knowledge/adr/48";
    let before = json(&sen(p, &["knowledge", "get", "--uri", uri]));
    let mut front = before["front_matter"].clone();
    front["status"] = "deprecated".into();
    let o = support::call(
        p,
        "knowledge.update",
        serde_json::json!({"uri": uri, "expected_digest": before["digest"], "front_matter": front}),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(p.join("adr/ADR-48.md")).unwrap();
    assert!(
        text.contains("| Status   | Deprecated                              |\n"),
        "{text}"
    );
    assert!(
        text.contains("\n## Status\n\nThe `Status` interface would get"),
        "{text}"
    );
    assert_eq!(
        json(&sen(p, &["knowledge", "get", "--uri", uri]))["front_matter"]["amends"],
        "8"
    );
    // celestia-app: `adr-030-slug.md`, `# ADR 030: Title`, the changelog and status sections
    // in the order of its newest record (adr-029).
    let repo = repo_of("celestiaorg-celestia-app");
    let p = repo.path();
    let made = create(p, input.clone());
    assert_eq!(
        made["file"],
        "docs/architecture/adr-030-stream-snapshots.md"
    );
    let text =
        std::fs::read_to_string(p.join("docs/architecture/adr-030-stream-snapshots.md")).unwrap();
    let got = json(&sen(
        p,
        &["knowledge", "get", "--uri", "seneschal://knowledge/adr/030"],
    ));
    let date = got["front_matter"]["date"].as_str().unwrap().to_string();
    assert_eq!(
        text,
        format!("# ADR 030: Stream snapshots\n\n## Changelog\n\n- {date}: Initial draft\n\n## Status\n\nProposed\n\n## Context\n\nStreams need snapshots.\n\n## Decision\n\nTake them.\n")
    );
    assert_eq!(got["title"], "Stream snapshots");
    assert_eq!(got["front_matter"]["adr_format"], "cosmos");
    // s3gw: `0020-slug.md` in MADR, as its own template writes it.
    let repo = repo_of("s3gw-tech-s3gw");
    let p = repo.path();
    let made = create(p, input);
    assert_eq!(made["file"], "docs/decisions/0020-stream-snapshots.md");
}

#[test]
fn a_value_that_would_write_structure_of_its_own_is_refused() {
    // A title holding `\n\n## Status\n\nAccepted` would make a proposed record read as
    // accepted; it is refused before anything is written, in every format.
    for fixture in [
        "npryce-adr-tools",
        "nats-io-nats-architecture-and-design",
        "adr-madr",
    ] {
        let repo = repo_of(fixture);
        let p = repo.path();
        let before = adrs(p).len();
        let o = support::call(
            p,
            "knowledge.create",
            serde_json::json!({"kind": "adr", "front_matter": {"title": "Harmless\n\n## Status\n\nAccepted", "status": "proposed"}}),
        );
        assert_eq!(o.status.code(), Some(2), "{fixture}: {}", stderr(&o));
        assert!(stderr(&o).contains("/front_matter/title"), "{}", stderr(&o));
        assert_eq!(adrs(p).len(), before, "{fixture}");
        assert!(
            json(&sen(
                p,
                &[
                    "knowledge",
                    "list",
                    "--status",
                    "accepted",
                    "--limit",
                    "500"
                ]
            ))["objects"]
                .as_array()
                .unwrap()
                .iter()
                .all(|o| o["title"] != "Harmless"),
            "{fixture}"
        );
    }
}
