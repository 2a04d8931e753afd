//! `files.read` and `files.search` through the built binary: windows, binary files, the size
//! cap, redaction, `.gitignore`, and one test per confinement rule.

use std::path::Path;
use std::process::Output;

use crate::support::{call, git, json, run_in, scratch_repo, stderr};
use serde_json::{json, Value};

/// The error code printed on stderr (`error[code]: ...`), or "ok" on success.
fn outcome(o: &Output) -> String {
    if o.status.success() {
        return "ok".into();
    }
    let e = stderr(o);
    e.strip_prefix("error[")
        .and_then(|r| r.split_once(']'))
        .map(|(c, _)| c.to_string())
        .unwrap_or_else(|| panic!("no error code on stderr: {e}"))
}

/// Asserts that reading `path` is refused by `rule`.
fn assert_refused(dir: &Path, path: &str, rule: &str) {
    let o = call(dir, "files.read", json!({ "path": path }));
    assert_eq!(outcome(&o), "refused", "{path}: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(4), "{path}");
    assert!(
        stderr(&o).contains(&format!("\"rule\":\"{rule}\"")),
        "{path} should break {rule}: {}",
        stderr(&o)
    );
}

fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn private_key_block() -> String {
    // Built at run time so that this source file itself holds no key block.
    let kind = "RSA PRIVATE KEY";
    format!(
        "-----BEGIN {kind}-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END {kind}-----\n"
    )
}

#[test]
fn read_returns_a_window_and_where_to_continue() {
    let repo = scratch_repo();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    write(repo.path(), "docs/ten.txt", &text);
    let v = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "./docs/ten.txt", "offset": 3, "limit": 2}),
    ));
    assert_eq!(v["path"], "docs/ten.txt");
    assert_eq!(v["content"], "line 3\nline 4\n");
    assert_eq!(v["lines"], 2);
    assert_eq!(v["total_lines"], 10);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], 5);
    let all = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "docs/ten.txt"}),
    ));
    assert_eq!(all["content"], text);
    assert_eq!(all["truncated"], false);
    assert_eq!(all["next_offset"], Value::Null);
    let past = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "docs/ten.txt", "offset": 50}),
    ));
    assert_eq!(past["lines"], 0);
    assert_eq!(past["content"], "");
}

#[test]
fn read_reports_binary_files_without_their_bytes() {
    let repo = scratch_repo();
    write(
        repo.path(),
        "img.bin",
        b"\x89PNG\x00\x01\x02secretish-bytes",
    );
    let v = json(&call(repo.path(), "files.read", json!({"path": "img.bin"})));
    assert_eq!(v["binary"], true);
    assert_eq!(v["content"], Value::Null);
    assert_eq!(v["size"], 22);
}

#[test]
fn read_answers_not_found_and_rejects_directories() {
    let repo = scratch_repo();
    let o = call(repo.path(), "files.read", json!({"path": "no/such.txt"}));
    assert_eq!(outcome(&o), "not_found");
    assert_eq!(o.status.code(), Some(3));
    std::fs::create_dir(repo.path().join("dir")).unwrap();
    let o = call(repo.path(), "files.read", json!({"path": "dir"}));
    assert_eq!(outcome(&o), "invalid_input");
    let o = call(
        repo.path(),
        "files.read",
        json!({"path": "README.md", "limit": 0}),
    );
    assert_eq!(outcome(&o), "invalid_input");
}

#[test]
fn read_caps_the_file_size_and_the_answer() {
    let repo = scratch_repo();
    let big = vec![b'a'; 8 * 1024 * 1024 + 1];
    write(repo.path(), "big.txt", &big);
    assert_refused(repo.path(), "big.txt", "size_cap");
    // 300 KiB in lines of 1 KiB: one answer stops at 256 KiB and says where to go on.
    let line = format!("{}\n", "b".repeat(1023));
    write(repo.path(), "wide.txt", line.repeat(300));
    let v = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "wide.txt"}),
    ));
    assert_eq!(v["lines"], 256);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], 257);
}

#[test]
fn read_redacts_known_secret_patterns() {
    let repo = scratch_repo();
    let token = format!("ghp_{}", "Ab12".repeat(9));
    write(
        repo.path(),
        "config.toml",
        format!("remote = \"https://bob:hunter2pass@example.com/x.git\"\ntoken = \"{token}\"\n"),
    );
    let o = call(repo.path(), "files.read", json!({"path": "config.toml"}));
    let v = json(&o);
    let content = v["content"].as_str().unwrap();
    assert!(!content.contains(&token), "{content}");
    assert!(!content.contains("hunter2pass"), "{content}");
    assert_eq!(v["redactions"], 2);
}

#[test]
fn every_confinement_rule_refuses() {
    let repo = scratch_repo();
    let root = repo.path();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "loot.txt", "outside");
    write(root, "docs/a.md", "a");
    write(root, ".env", "A=1");
    write(root, "keys/private.txt", private_key_block());
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    link(outside.path(), "outdir");
    link(&outside.path().join("loot.txt"), "outfile");
    link(Path::new(".git"), "gitlink");
    link(Path::new(".env"), "envlink");
    link(Path::new("docs"), "docslink");

    assert_refused(root, "/etc/passwd", "absolute_path");
    assert_refused(
        root,
        &outside.path().join("loot.txt").to_string_lossy(),
        "absolute_path",
    );
    assert_refused(root, "../loot.txt", "parent_dir");
    assert_refused(root, "docs/../README.md", "parent_dir");
    assert_refused(root, "outfile", "symlink_escape");
    assert_refused(root, "outdir/loot.txt", "symlink_escape");
    assert_refused(root, ".git/config", "git_dir");
    assert_refused(root, ".git/HEAD", "git_dir");
    assert_refused(root, ".GIT/config", "git_dir");
    assert_refused(root, "gitlink/config", "git_dir");
    assert_refused(root, "envlink", "secret_file");
    assert_refused(root, "keys/private.txt", "secret_content");
    for name in [
        ".env",
        ".env.production",
        "server.pem",
        "tls.key",
        "id_rsa",
        "id_rsa.pub",
        "id_ed25519",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        "secrets.yaml",
        "home/.ssh/config",
    ] {
        write(root, name, "x");
        assert_refused(root, name, "secret_file");
    }
    // A link that stays inside, to an ordinary file, is followed.
    let v = json(&call(root, "files.read", json!({"path": "docslink/a.md"})));
    assert_eq!(v["content"], "a");
}

#[test]
fn search_honours_gitignore_and_skips_what_it_must() {
    let repo = scratch_repo();
    let root = repo.path();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "loot.txt", "needle outside\n");
    write(root, ".gitignore", "ignored/\n*.log\n");
    write(root, "src/a.rs", "fn a() {}\n// needle one\n");
    write(root, "src/b.md", "needle two\n");
    write(root, ".github/ci.yml", "needle hidden\n");
    write(root, "ignored/c.rs", "needle ignored\n");
    write(root, "x.log", "needle log\n");
    write(root, ".env", "needle env\n");
    write(root, "deploy.key", "needle key\n");
    write(root, "bin.dat", b"needle\x00binary\n");
    write(
        root,
        "keys/k.txt",
        format!("needle\n{}", private_key_block()),
    );
    std::fs::write(root.join(".git/needle.txt"), "needle git\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("loot.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();

    let v = json(&call(root, "files.search", json!({"pattern": "needle"})));
    let found: Vec<(String, u64)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            (".github/ci.yml".to_string(), 1),
            ("src/a.rs".to_string(), 2),
            ("src/b.md".to_string(), 1)
        ]
    );
    assert_eq!(v["skipped_secret_files"], 1);
    assert_eq!(v["files_matched"], 3);
    assert_eq!(v["truncated"], false);

    let only_md = json(&call(
        root,
        "files.search",
        json!({"pattern": "needle", "glob": "*.md"}),
    ));
    assert_eq!(only_md["matches"].as_array().unwrap().len(), 1);
    assert_eq!(only_md["matches"][0]["path"], "src/b.md");
    let sneaky = json(&call(
        root,
        "files.search",
        json!({"pattern": "needle", "glob": ".env"}),
    ));
    assert_eq!(sneaky["matches"], json!([]));
}

/// `(?i)` folds case the Unicode way (regex-syntax's simple case folding, vendored with its
/// table laid out without pointers: vendor/regex-syntax/PATCHES.md): Greek final sigma, the
/// Kelvin sign and the long s are found by their plain letters, and nothing unrelated is.
#[test]
fn search_folds_case_the_unicode_way() {
    let repo = scratch_repo();
    let root = repo.path();
    write(root, "greek.txt", "ΟΔΥΣΣΕΥΣ\nother\n");
    write(root, "kelvin.txt", "300 \u{212A}\n");
    write(root, "long-s.txt", "Congre\u{17F}s\n");
    write(root, "plain.txt", "nothing here\n");
    let found = |pattern: &str| -> Vec<String> {
        let v = json(&call(root, "files.search", json!({"pattern": pattern})));
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m["path"].as_str().unwrap(),
                    m["text"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(found("(?i)οδυσσευς"), ["greek.txt:ΟΔΥΣΣΕΥΣ"]);
    assert_eq!(found("(?i)οδυσσευσ"), ["greek.txt:ΟΔΥΣΣΕΥΣ"]);
    assert_eq!(found("(?i)300 k$"), ["kelvin.txt:300 \u{212A}"]);
    assert_eq!(found("(?i)congress"), ["long-s.txt:Congre\u{17F}s"]);
    assert_eq!(found("οδυσσευς"), Vec::<String>::new());
    assert_eq!(found("(?i)nothing h[e]re"), ["plain.txt:nothing here"]);
}

#[test]
fn search_limits_sorts_and_redacts() {
    let repo = scratch_repo();
    let root = repo.path();
    let token = format!("AKIA{}", "ABCDEFGHIJ234567");
    for f in ["b.txt", "a.txt", "c.txt"] {
        write(root, f, format!("hit 1 {token}\nhit 2\nhit 3\n"));
    }
    let v = json(&call(
        root,
        "files.search",
        json!({"pattern": "^hit", "limit": 4}),
    ));
    let m = v["matches"].as_array().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(v["truncated"], true);
    let order: Vec<String> = m
        .iter()
        .map(|x| format!("{}:{}", x["path"].as_str().unwrap(), x["line"]))
        .collect();
    assert_eq!(order, ["a.txt:1", "a.txt:2", "a.txt:3", "b.txt:1"]);
    assert!(!v.to_string().contains(&token));
    assert_eq!(v["redactions"], 2);
    assert_eq!(m[0]["text"], "hit 1 [REDACTED]");
}

#[test]
fn search_rejects_bad_patterns_and_globs() {
    let repo = scratch_repo();
    let o = call(repo.path(), "files.search", json!({"pattern": "fn ("}));
    assert_eq!(outcome(&o), "invalid_input");
    assert!(stderr(&o).contains("/pattern"), "{}", stderr(&o));
    let o = call(
        repo.path(),
        "files.search",
        json!({"pattern": "x", "glob": "src/["}),
    );
    assert_eq!(outcome(&o), "invalid_input");
    assert!(stderr(&o).contains("/glob"), "{}", stderr(&o));
    let o = call(repo.path(), "files.search", json!({"pattern": ""}));
    assert_eq!(outcome(&o), "invalid_input");
}

#[test]
fn the_cli_paths_reach_the_same_handlers() {
    let repo = scratch_repo();
    git(repo.path(), &["status"]);
    let o = run_in(repo.path(), &["files", "read", "--path", "README.md"]);
    assert_eq!(json(&o)["content"], "# scratch\n");
    let o = run_in(
        repo.path(),
        &["files", "search", "--pattern", "scr.tch", "--limit", "1"],
    );
    assert_eq!(json(&o)["matches"][0]["path"], "README.md");
    let o = run_in(repo.path(), &["files", "read", "--path", ".env"]);
    assert_eq!(outcome(&o), "refused");
}

#[test]
fn a_secret_across_the_line_cut_is_redacted_not_halved() {
    let repo = scratch_repo();
    let body = "Qz7k".repeat(9);
    let line = format!("{} ghp_{body} tail\n", "x".repeat(990));
    write(repo.path(), "long.txt", &line);
    let v = json(&call(
        repo.path(),
        "files.search",
        json!({"pattern": "tail"}),
    ));
    let text = v["matches"][0]["text"].as_str().unwrap();
    assert!(text.len() <= 1000, "{}", text.len());
    assert!(
        !text.contains(&body[..6]),
        "half a token survived the cut: {text}"
    );
    assert_eq!(v["redactions"], 1);
}

#[test]
fn a_line_longer_than_the_answer_cap_is_cut_and_said_so() {
    let repo = scratch_repo();
    write(repo.path(), "one-line.min.js", "c".repeat(300 * 1024));
    let v = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "one-line.min.js"}),
    ));
    assert_eq!(v["content"].as_str().unwrap().len(), 256 * 1024);
    assert_eq!(v["lines"], 1);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], Value::Null);
}

#[test]
fn search_is_deterministic_and_honours_every_ignore_file() {
    let repo = scratch_repo();
    let root = repo.path();
    write(root, ".ignore", "skipped-by-ignore/\n");
    std::fs::write(root.join(".git/info/exclude"), "excluded.txt\n").unwrap();
    write(root, "skipped-by-ignore/a.txt", "needle\n");
    write(root, "excluded.txt", "needle\n");
    for i in 0..40 {
        write(
            root,
            &format!("d{}/f{i}.txt", i % 7),
            "needle\nneedle again\n",
        );
    }
    let first = call(
        root,
        "files.search",
        json!({"pattern": "needle", "limit": 50}),
    );
    let v = json(&first);
    assert_eq!(v["files_matched"], 40, "{v}");
    assert_eq!(v["matches"].as_array().unwrap().len(), 50);
    assert_eq!(v["truncated"], true);
    assert!(
        !v.to_string().contains("excluded.txt") && !v.to_string().contains("skipped-by-ignore")
    );
    for _ in 0..3 {
        let again = call(
            root,
            "files.search",
            json!({"pattern": "needle", "limit": 50}),
        );
        assert_eq!(
            again.stdout, first.stdout,
            "the same tree gave another answer"
        );
    }
}

/// The refusal of a secret-bearing file says why in the project's own words, whole, on every
/// transport: the errors of `files.read` pass redaction, which once took `secret_file:
/// secret-bearing` for an assignment and put its marker over the reason.
#[test]
fn a_secret_file_refusal_says_why_unredacted_on_every_transport() {
    let repo = scratch_repo();
    write(repo.path(), ".env", "API_TOKEN=abcdef0123456789abcdef\n");
    write(repo.path(), "keys/private.txt", private_key_block());
    let mut three = crate::support::Three::new(repo.path());
    for (path, why) in [
        (
            ".env",
            "`.env` is refused: secret-bearing files are never served (rule secret_file)",
        ),
        (
            "keys/private.txt",
            "`keys/private.txt` is refused: it holds a private key block (rule secret_content)",
        ),
    ] {
        let input = json!({ "path": path });
        let cli = three.err("files.read", input.clone(), "refused");
        let mcp = three.mcp_error("files.read", &input);
        let http = three.http_error("files.read", &input);
        for (transport, text) in [("cli", &cli), ("mcp", &mcp), ("http", &http)] {
            assert!(text.contains(why), "{transport}: {text}");
            assert!(!text.contains("[REDACTED]"), "{transport}: {text}");
        }
    }
    three.finish();
}
