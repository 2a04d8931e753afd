//! Hostile redaction: secrets planted in every place a repository can hold them (a guide's body,
//! title and description, an ADR tag, a searched paragraph, a commit subject, remote URLs, a
//! repository kind's description, YAML and JSON files with indented or JSON-escaped private
//! keys, PGP and OpenSSH keys) and handed to the servers in their environment under names that
//! only the new rules know (`OPENAI_KEY`, `DB_PASS`, `GITHUB_PAT`, `SIGNING_KEY`, written into
//! a guide as plain prose). Every answer of every repository read over the command line, MCP
//! stdio and HTTP (and `POST /mcp`) must hold none of them, byte for byte, and say
//! `[REDACTED]` where they were.
//!
//! The knowledge handlers never redact: only the executor's disclosure stands between those
//! files and the answers, so removing it fails `knowledge_answers_are_redacted_on_every_transport`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::support::http::{query_of, Serve};
use crate::support::mcp::Mcp;
use crate::support::{bin, git, scratch_repo, stderr, stdout};

/// Planted secrets: what was planted where, and the environment the servers get.
struct Planted {
    repo: tempfile::TempDir,
    /// Every secret string; none may appear in any answer.
    secrets: Vec<(&'static str, String)>,
    env: Vec<(&'static str, String)>,
    guide: &'static str,
    adr: &'static str,
}

impl Planted {
    fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }

    /// Panics when any secret is in `bytes`, naming the place it was planted.
    fn assert_clean(&self, what: &str, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        for (place, secret) in &self.secrets {
            assert!(
                !text.contains(secret.as_str()),
                "{what}: the secret planted in {place} leaked:\n{text}"
            );
        }
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A key block of `kind` (built here, so no source file holds one), its lines prefixed with
/// `indent` and joined with `nl`; and the key material to look for.
fn key_block(kind: &str, indent: &str, nl: &str, material: &str) -> String {
    [
        format!("-----BEGIN {kind}-----"),
        format!("MIIEvQIBADANBgkqhkiG9w0B{material}"),
        format!("AQEFAASCBKcwggSjAgEAAoIB{material}"),
        format!("-----END {kind}-----"),
    ]
    .iter()
    .map(|l| format!("{indent}{l}"))
    .collect::<Vec<_>>()
    .join(nl)
}

fn plant() -> Planted {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let u = format!("{nanos:x}{:x}", std::process::id());
    // Token shapes, each unique to this run.
    let gh_body = format!(
        "ghp_{}",
        format!("Bo{u}{}", "dY7x".repeat(10)).get(..36).unwrap()
    );
    let glpat_desc = format!("glpat-Desc{u}xyz");
    let sk_title = format!("sk-Title{u}abcdefgh");
    let tag = format!("glpat-tag{u}abcdefgh").to_ascii_lowercase();
    let akia = format!(
        "AKIA{}",
        format!("{u}QWERTYUIOPASDFGH")
            .to_ascii_uppercase()
            .get(..16)
            .unwrap()
    );
    let subject_pw = format!("hunter2{u}");
    let subject_gh = format!(
        "ghp_{}",
        format!("Su{u}{}", "kL3m".repeat(10)).get(..36).unwrap()
    );
    let remote_pw = format!("remotepw{u}");
    let remote_path = format!(
        "ghp_{}",
        format!("Re{u}{}", "pQ9z".repeat(10)).get(..36).unwrap()
    );
    let kind_desc = format!("xoxb-{u}-kinddesc");
    let yaml_pw = format!("yamlpw{u}");
    let key_yaml = format!("YamlKey{u}");
    let key_json = format!("JsonKey{u}");
    let key_pgp = format!("PgpKey{u}");
    let key_ssh = format!("SshKey{u}");
    let key_guide = format!("GuideKey{u}");
    let broken = format!(
        "ghp_{}",
        format!("Br{u}{}", "wE5r".repeat(10)).get(..36).unwrap()
    );
    // Environment values no shape rule knows: only their names mark them.
    let env = vec![
        ("OPENAI_KEY", format!("openai-{u}-value")),
        ("DB_PASS", format!("dbpass-{u}-value")),
        ("GITHUB_PAT", format!("pat-{u}-value")),
        ("SIGNING_KEY", format!("signing-{u}-value")),
    ];

    let repo = scratch_repo();
    let root = repo.path();
    let guide_body = format!(
        "The deploy token is {gh_body}, do not share it.\n\n\
         The OpenAI value is {} and the database one {}; the PAT {} signs with {}.\n\n\
         The zebrafish paragraph: search finds this one, with {akia} inside.\n",
        env[0].1, env[1].1, env[2].1, env[3].1,
    );
    // A guide holding a private key block is refused whole by the confined reader (a finding,
    // as files.read refuses it): no answer carries any of it.
    write(
        root,
        "docs/guides/pasted-key.md",
        &format!(
            "---\ntitle: Pasted key\n---\nA private key pasted by mistake:\n\n{}\n",
            key_block("OPENSSH PRIVATE KEY", "    ", "\n", &key_guide)
        ),
    );
    write(
        root,
        "docs/guides/deploy.md",
        &format!(
            "---\ntitle: Deploying with {sk_title}\ndescription: How to deploy with {glpat_desc}.\n---\n{guide_body}"
        ),
    );
    // An invalid guide: the finding's message quotes the value that breaks the schema.
    write(
        root,
        "docs/guides/broken.md",
        &format!("---\ntitle: Broken\ntags: {broken}\n---\nBody.\n"),
    );
    write(
        root,
        "docs/adr/0001-tokens.md",
        &format!(
            "---\ntitle: Tokens\nstatus: accepted\ndate: 2026-11-30\ntags: [security, {tag}]\n---\nWe keep tokens out.\n"
        ),
    );
    write(
        root,
        ".seneschal/kinds.yaml",
        &format!(
            "kinds:\n  runbook:\n    description: Runbooks, the token is {kind_desc}.\n    files: [\"runbooks/*.md\"]\n    id: {{ file_pattern: \"^(.+)\\\\.md$\" }}\n    schema: runbook.schema.json\n"
        ),
    );
    write(
        root,
        ".seneschal/schemas/runbook.schema.json",
        r#"{"type":"object","required":["title"]}"#,
    );
    write(
        root,
        "config/app.yaml",
        &format!(
            "db:\n  password: {yaml_pw}\ntls:\n  key: |\n{}\n",
            key_block("PRIVATE KEY", "    ", "\n", &key_yaml)
        ),
    );
    write(
        root,
        "config/app.json",
        &format!(
            "{{\"tls\": {{\"key\": \"{}\"}}}}\n",
            key_block("RSA PRIVATE KEY", "", "\\n", &key_json)
        ),
    );
    write(
        root,
        "notes/pgp.txt",
        &format!(
            "exported:\n{}\n",
            key_block("PGP PRIVATE KEY BLOCK", "", "\n", &key_pgp)
        ),
    );
    write(
        root,
        "notes/ssh.txt",
        &format!(
            "exported:\n{}\n",
            key_block("OPENSSH PRIVATE KEY", "  ", "\n", &key_ssh)
        ),
    );
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "commit",
            "-q",
            "-m",
            &format!("fix login password={subject_pw}"),
        ],
    );
    git(
        root,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("rotate {subject_gh}"),
        ],
    );
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://deploy:{remote_pw}@example.invalid/r.git"),
        ],
    );
    git(
        root,
        &[
            "config",
            "remote.origin.pushurl",
            &format!("https://example.invalid/{remote_path}/r.git"),
        ],
    );
    let mut secrets = vec![
        ("a guide's body (GitHub token)", gh_body),
        ("a guide's description", glpat_desc),
        ("a guide's title", sk_title),
        ("an ADR tag", tag),
        ("a searched paragraph", akia),
        ("a commit subject (password=)", subject_pw),
        ("a commit subject (token)", subject_gh),
        ("a remote's userinfo", remote_pw),
        ("a remote's path", remote_path),
        ("a repository kind's description", kind_desc),
        ("a YAML password", yaml_pw),
        ("an indented key in YAML", key_yaml),
        ("a JSON-escaped key", key_json),
        ("a PGP key", key_pgp),
        ("an OpenSSH key", key_ssh),
        ("an indented key in a guide", key_guide),
        ("an invalid guide's front matter", broken),
    ];
    for (name, value) in &env {
        secrets.push((*name, value.clone()));
    }
    Planted {
        repo,
        secrets,
        env,
        guide: "seneschal://knowledge/guide/deploy",
        adr: "seneschal://knowledge/adr/0001",
    }
}

/// The repository reads of the test, with their inputs.
fn calls(p: &Planted) -> Vec<(&'static str, Value)> {
    vec![
        ("knowledge.get", json!({"uri": p.guide})),
        ("knowledge.get", json!({"uri": p.adr})),
        ("knowledge.list", json!({})),
        ("knowledge.list", json!({"kind": "guide"})),
        ("knowledge.search", json!({"query": "zebrafish"})),
        ("knowledge.search", json!({"query": "deploy token"})),
        ("knowledge.kinds", json!({})),
        ("knowledge.check", json!({})),
        ("repo.log", json!({})),
        ("repo.identity", json!({})),
        ("repo.status", json!({})),
        ("files.read", json!({"path": "config/app.yaml"})),
        ("files.read", json!({"path": "config/app.json"})),
        ("files.read", json!({"path": "notes/pgp.txt"})),
        ("files.read", json!({"path": "notes/ssh.txt"})),
        ("files.read", json!({"path": "docs/guides/deploy.md"})),
        ("files.search", json!({"pattern": "zebrafish"})),
    ]
}

fn cli(p: &Planted, id: &str, input: &Value) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(["call", id, "--input", &input.to_string()])
        .current_dir(p.repo.path());
    for (k, v) in &p.env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// Every answer over the three transports, as (what, raw bytes); JSON answers parsed too.
struct Answers {
    raw: Vec<(String, Vec<u8>)>,
}

impl Answers {
    fn json(&self, prefix: &str) -> Value {
        let (_, bytes) = self
            .raw
            .iter()
            .find(|(w, _)| w.starts_with(prefix))
            .unwrap_or_else(|| panic!("no answer {prefix}"));
        serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{prefix}: {e}"))
    }
}

fn every_answer(p: &Planted) -> Answers {
    let dir = p.repo.path();
    let env = p.env();
    let mut raw = Vec::new();
    for (id, input) in calls(p) {
        let o = cli(p, id, &input);
        raw.push((format!("cli {id} {input} stdout"), o.stdout.clone()));
        raw.push((format!("cli {id} {input} stderr"), o.stderr.clone()));
        assert!(
            o.status.success() || id == "files.read" || id == "knowledge.check",
            "cli {id} {input}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
    let mut mcp = Mcp::start_with(dir, &[], &env);
    mcp.initialize("2025-11-25");
    for (id, input) in calls(p) {
        let (_, d) = seneschal::registry::find(id).expect("a registered id");
        let tool = d.mcp_tool.expect("an MCP tool");
        let a = mcp.request("tools/call", json!({"name": tool, "arguments": input}));
        raw.push((format!("mcp {id} {input}"), a.to_string().into_bytes()));
    }
    let list = mcp.request("resources/list", json!({}));
    raw.push(("mcp resources/list".into(), list.to_string().into_bytes()));
    let templates = mcp.request("resources/templates/list", json!({}));
    raw.push((
        "mcp resources/templates/list".into(),
        templates.to_string().into_bytes(),
    ));
    for uri in [p.guide, p.adr, "seneschal://repo/identity"] {
        let a = mcp.request("resources/read", json!({"uri": uri}));
        assert!(a["result"]["contents"].is_array(), "{uri}: {a}");
        raw.push((
            format!("mcp resources/read {uri}"),
            a.to_string().into_bytes(),
        ));
    }
    let (status, rest, err) = mcp.finish();
    assert!(status.success(), "{err}");
    raw.push(("mcp stdout after the calls".into(), rest.into_bytes()));
    raw.push(("mcp stderr".into(), err.into_bytes()));

    let server = Serve::start(dir, &env);
    for (id, input) in calls(p) {
        let (_, d) = seneschal::registry::find(id).expect("a registered id");
        let route = d.http.expect("an HTTP route");
        let (status, body) = if route.method == "GET" {
            let q = query_of(&input);
            server.send("GET", &format!("{}?{q}", route.path), None)
        } else {
            server.send(route.method, route.path, Some(&input))
        };
        raw.push((format!("http {id} {input} ({status})"), body));
        let tool = d.mcp_tool.expect("an MCP tool");
        let (_, body) = server.send(
            "POST",
            "/mcp",
            Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": input}})),
        );
        raw.push((format!("http POST /mcp {id} {input}"), body));
    }
    for (method, params) in [
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": p.guide})),
    ] {
        let (_, body) = server.send(
            "POST",
            "/mcp",
            Some(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})),
        );
        raw.push((format!("http POST /mcp {method}"), body));
    }
    raw.push(("serve stderr".into(), server.finish().into_bytes()));
    Answers { raw }
}

#[test]
fn knowledge_answers_are_redacted_on_every_transport() {
    let p = plant();
    // The plantings are real: each secret sits in the repository or the environment.
    let tree = |rel: &str| std::fs::read_to_string(p.repo.path().join(rel)).unwrap();
    assert!(tree("docs/guides/deploy.md").contains(&p.env[0].1));
    assert!(git(p.repo.path(), &["log", "-2", "--format=%s"]).contains("password=hunter2"));

    let answers = every_answer(&p);
    assert!(
        answers.raw.len() >= 90,
        "only {} answers",
        answers.raw.len()
    );
    for (what, bytes) in &answers.raw {
        p.assert_clean(what, bytes);
    }

    // And the answers say where the secrets were.
    let get =
        answers.json("cli knowledge.get {\"uri\":\"seneschal://knowledge/guide/deploy\"} stdout");
    let body = get["body"].as_str().unwrap();
    assert_eq!(body.matches("[REDACTED]").count(), 6, "{body}");
    assert!(
        get["title"].as_str().unwrap().contains("[REDACTED]"),
        "{get}"
    );
    assert!(
        get["front_matter"]["description"]
            .as_str()
            .unwrap()
            .contains("[REDACTED]"),
        "{get}"
    );
    let list = answers.json("cli knowledge.list {} stdout");
    let descriptions: Vec<&str> = list["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["description"].as_str())
        .collect();
    assert!(
        descriptions.iter().any(|d| d.contains("[REDACTED]")),
        "{list}"
    );
    let adr = answers.json("cli knowledge.get {\"uri\":\"seneschal://knowledge/adr/0001\"} stdout");
    assert_eq!(
        adr["front_matter"]["tags"],
        json!(["security", "[REDACTED]"])
    );
    let search = answers.json("cli knowledge.search {\"query\":\"zebrafish\"} stdout");
    assert!(
        search["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("[REDACTED]"),
        "{search}"
    );
    let log = answers.json("cli repo.log {} stdout");
    let subjects = crate::support::subjects(&log);
    assert_eq!(
        subjects[..2],
        ["rotate [REDACTED]", "fix login password=[REDACTED]"]
    );
    let identity = answers.json("cli repo.identity {} stdout");
    assert_eq!(
        identity["remotes"][0]["url"],
        "https://[REDACTED]@example.invalid/r.git"
    );
    assert_eq!(
        identity["remotes"][0]["push_url"],
        "https://example.invalid/[REDACTED]/r.git"
    );
    // The same answer over every transport.
    let mcp = answers.json("mcp knowledge.get {\"uri\":\"seneschal://knowledge/guide/deploy\"}");
    assert_eq!(mcp["result"]["structuredContent"]["body"], get["body"]);
    let http = answers.json("http knowledge.get {\"uri\":\"seneschal://knowledge/guide/deploy\"}");
    assert_eq!(http["body"], get["body"]);
    let check = answers.json("cli knowledge.check {} stdout");
    assert_eq!(
        check["findings"][0]["message"],
        "\"[REDACTED]\" is not of type \"array\" (schema of kind `guide`)",
        "{check}"
    );
    let read = answers.json("mcp resources/read seneschal://knowledge/guide/deploy");
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("The deploy token is [REDACTED]"), "{text}");
    let templates = answers.json("mcp resources/templates/list");
    assert!(
        templates.to_string().contains("the token is [REDACTED]"),
        "{templates}"
    );
}

#[test]
fn files_with_keys_are_refused_or_redacted_and_counted() {
    let p = plant();
    for path in [
        "config/app.yaml",
        "config/app.json",
        "notes/pgp.txt",
        "notes/ssh.txt",
    ] {
        let o = cli(&p, "files.read", &json!({ "path": path }));
        p.assert_clean(path, &o.stdout);
        p.assert_clean(path, &o.stderr);
        // Every armour and form is recognised as a key: the file is refused whole, so no
        // window of its lines can show the key material either.
        assert!(!o.status.success(), "{path}: {}", stdout(&o));
        assert!(stderr(&o).contains("private key"), "{path}: {}", stderr(&o));
    }
    // A file whose only secret is an assignment is read, redacted and counted.
    write(
        p.repo.path(),
        "config/db.yaml",
        "db:\n  host: localhost\n  password: s3cret-db-value\n",
    );
    let o = cli(&p, "files.read", &json!({ "path": "config/db.yaml" }));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        v["content"],
        "db:\n  host: localhost\n  password: [REDACTED]\n"
    );
    assert_eq!(v["redactions"], 1);
    // An environment value written in a file is counted once, whoever replaced it.
    write(
        p.repo.path(),
        "notes/env.txt",
        &format!("signing with {}\n", p.env[3].1),
    );
    let o = cli(&p, "files.read", &json!({ "path": "notes/env.txt" }));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["content"], "signing with [REDACTED]\n");
    assert_eq!(v["redactions"], 1);
}

#[test]
fn a_secret_cut_by_a_snippet_or_a_description_shows_no_head() {
    let repo = scratch_repo();
    let root = repo.path();
    let token = format!("ghp_{}", "Hd4tZq9w".repeat(5).get(..36).unwrap());
    // The token straddles the 200-character cut of snippets and first-paragraph descriptions.
    let words = "word ".repeat(37);
    let line = format!("{words}lorem {token} tail");
    assert!(line.find(&token).unwrap() < 199 && line.find(&token).unwrap() + token.len() > 200);
    write(
        root,
        "docs/guides/cut.md",
        &format!("---\ntitle: Cut\n---\n{line}\n"),
    );
    let head = &token[..6];
    let check = |what: &str, o: &Output| {
        assert!(o.status.success(), "{what}: {}", stderr(o));
        assert!(
            !stdout(o).contains(head),
            "{what}: the head of a cut secret leaked: {}",
            stdout(o)
        );
    };
    let o = Command::new(bin())
        .args([
            "call",
            "knowledge.search",
            "--input",
            r#"{"query":"lorem"}"#,
        ])
        .current_dir(root)
        .output()
        .unwrap();
    check("knowledge.search snippet", &o);
    assert!(stdout(&o).contains("word lorem"), "{}", stdout(&o));
    let o = Command::new(bin())
        .args(["call", "knowledge.list", "--input", "{}"])
        .current_dir(root)
        .output()
        .unwrap();
    check("knowledge.list description", &o);
    let mut mcp = Mcp::start_with(root, &[], &[]);
    mcp.initialize("2025-11-25");
    let list = mcp.request("resources/list", json!({}));
    assert!(!list.to_string().contains(head), "resources/list: {list}");
    mcp.finish();
}

#[test]
fn a_secret_in_a_file_name_leaves_no_trace_in_list_cursors() {
    let repo = scratch_repo();
    let root = repo.path();
    let token = format!("ghp_{}", "Fn7kW2".repeat(6));
    for name in ["a", token.as_str(), "z"] {
        write(
            root,
            &format!("docs/guides/{name}.md"),
            "---\ntitle: A guide\n---\nBody.\n",
        );
    }
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    let mut input = json!({"limit": 1});
    let mut uris = Vec::new();
    for _ in 0..3 {
        let o = Command::new(bin())
            .args(["call", "knowledge.list", "--input", &input.to_string()])
            .current_dir(root)
            .output()
            .unwrap();
        let text = stdout(&o);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!text.contains(&token) && !text.contains(&hex), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        uris.push(v["objects"][0]["uri"].as_str().unwrap().to_string());
        input = json!({"limit": 1, "cursor": v["next_cursor"]});
    }
    // Every page was served, in order, the middle one under its redacted URI.
    assert_eq!(
        uris,
        [
            "seneschal://knowledge/guide/a",
            "seneschal://knowledge/guide/[REDACTED]",
            "seneschal://knowledge/guide/z"
        ]
    );
    assert_eq!(input["cursor"], Value::Null);
}

/// `repo.log` gives its commits to the executor as git writes them, and the executor redacts
/// them in batches while git goes on (`parts::Parts`): a secret in the first batch, in a
/// middle one and in the last (the one settled after git ends) is replaced on every transport,
/// and every other subject is as it was written.
#[test]
fn a_long_log_is_redacted_in_every_batch_on_every_transport() {
    let repo = scratch_repo();
    let dir = repo.path();
    let token = format!("ghp_{}", "A1b2C3d4".repeat(5));
    let subject = |k: usize| match k {
        70 => format!("rotate {token}"),
        36 => format!("fix login password=hunter2-{k}-x"),
        2 => format!("note: a token={token}"),
        _ => format!("step {k}"),
    };
    for k in 1..=70 {
        git(dir, &["commit", "-q", "--allow-empty", "-m", &subject(k)]);
    }
    let mut three = crate::support::Three::new(dir);
    let log = three.ok("repo.log", json!({"limit": 100}));
    three.finish();
    let text = log.to_string();
    assert!(
        !text.contains(&token) && !text.contains("hunter2"),
        "{text}"
    );
    let subjects = crate::support::subjects(&log);
    assert_eq!(subjects.len(), 71, "{text}");
    assert_eq!(log["truncated"], false);
    // Newest first: commit 70 is the first item, 36 the 35th, 2 the 69th.
    assert_eq!(subjects[0], "rotate [REDACTED]");
    assert_eq!(subjects[34], "fix login password=[REDACTED]");
    assert_eq!(subjects[68], "note: a token=[REDACTED]");
    for (i, s) in subjects.iter().enumerate() {
        if ![0, 34, 68, 70].contains(&i) {
            assert_eq!(*s, subject(70 - i), "item {i}");
        }
    }
    assert_eq!(subjects[70], "initial");
}
