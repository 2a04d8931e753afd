//! Writes are no secret oracle and lose no secret: `files.edit` matches the text the agent was
//! shown (a guessed secret matches nothing, not even in a dry run), a digest confirms nothing
//! about redacted bytes (files.read, the writes' answers, the audit log's keyed digests), and
//! a file read with its secrets shown as the marker, changed and written back, keeps its
//! secrets — or the write is refused naming the line. Through the built binary, on the
//! command line and over MCP stdio.

use serde_json::{json, Value};

use crate::support::{self, mcp::Mcp};

const CONFIG: &str = "name: app\npassword: hunter2hunter2\nport: 80\n";

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn read(dir: &std::path::Path) -> Value {
    let o = support::call(dir, "files.read", json!({"path": "config.yml"}));
    assert!(o.status.success(), "{}", support::stderr(&o));
    support::json(&o)
}

#[test]
fn an_edit_matches_what_was_shown_so_a_guess_confirms_nothing() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("config.yml"), CONFIG).unwrap();
    for guess in ["password: hunter2hunter2", "hunter2", "password: h"] {
        let o = support::call(
            dir,
            "files.edit",
            json!({"path": "config.yml", "dry_run": true,
                "edits": [{"old": guess, "new": "x"}]}),
        );
        assert!(
            !o.status.success(),
            "{guess} matched: {}",
            support::stdout(&o)
        );
        assert!(
            support::stderr(&o).contains("does not occur"),
            "{guess}: {}",
            support::stderr(&o)
        );
    }
    // What was shown matches.
    let o = support::call(
        dir,
        "files.edit",
        json!({"path": "config.yml", "dry_run": true,
            "edits": [{"old": "password: [REDACTED]\nport: 80", "new": "password: [REDACTED]\nport: 81"}]}),
    );
    assert!(o.status.success(), "{}", support::stderr(&o));
}

#[test]
fn a_digest_confirms_nothing_about_a_redacted_secret() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("config.yml"), CONFIG).unwrap();
    let first = read(dir)["digest"].clone();
    assert_ne!(
        first,
        json!(sha256(CONFIG.as_bytes())),
        "a plain hash of the file"
    );
    std::fs::write(
        dir.join("config.yml"),
        CONFIG.replace("hunter2hunter2", "another-secret-7"),
    )
    .unwrap();
    assert_eq!(
        read(dir)["digest"],
        first,
        "the digest moved with the secret"
    );
    // A file with nothing redacted keeps the digest of its bytes.
    std::fs::write(dir.join("plain.txt"), "plain\n").unwrap();
    let o = support::call(dir, "files.read", json!({"path": "plain.txt"}));
    assert_eq!(support::json(&o)["digest"], json!(sha256(b"plain\n")));
    // The audit log records keyed digests only.
    let o = support::call(
        dir,
        "files.edit",
        json!({"path": "config.yml", "edits": [{"old": "port: 80", "new": "port: 81"}]}),
    );
    assert!(o.status.success(), "{}", support::stderr(&o));
    let log = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl")).unwrap();
    let now = std::fs::read(dir.join("config.yml")).unwrap();
    assert!(!log.contains(&sha256(&now)), "{log}");
    assert!(log.contains("hmac-sha256:"), "{log}");
    // No reader serves the key.
    let o = support::call(dir, "files.read", json!({"path": ".seneschal/digest.key"}));
    assert!(!o.status.success());
}

#[test]
fn a_read_written_back_keeps_its_secrets_or_is_refused_naming_the_line() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("config.yml"), CONFIG).unwrap();
    let shown = read(dir);
    let content = shown["content"].as_str().unwrap().to_string();
    assert!(content.contains("password: [REDACTED]"), "{content}");
    // Over MCP stdio: the whole file written back with one line changed.
    let mut mcp = Mcp::start_with(dir, &["--approval", "trust-client"], &[]);
    mcp.initialize("2025-06-18");
    let answer = mcp.request(
        "tools/call",
        json!({"name": "files_write", "arguments": {"path": "config.yml",
            "content": content.replace("port: 80", "port: 8080"),
            "expected_digest": shown["digest"]}}),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        std::fs::read_to_string(dir.join("config.yml")).unwrap(),
        "name: app\npassword: hunter2hunter2\nport: 8080\n"
    );
    // An edit next to the secret, on its line.
    let answer = mcp.request(
        "tools/call",
        json!({"name": "files_edit", "arguments": {"path": "config.yml",
            "edits": [{"old": "password: [REDACTED]", "new": "password: [REDACTED] # rotate"}]}}),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        std::fs::read_to_string(dir.join("config.yml")).unwrap(),
        "name: app\npassword: hunter2hunter2 # rotate\nport: 8080\n"
    );
    // A marker that cannot be put back: refused, naming the line, nothing written.
    let before = std::fs::read(dir.join("config.yml")).unwrap();
    let digest = read(dir)["digest"].clone();
    let answer = mcp.request(
        "tools/call",
        json!({"name": "files_write", "arguments": {"path": "config.yml",
            "content": "name: app\npw: [REDACTED] and [REDACTED]\nport: 8080\n",
            "expected_digest": digest}}),
    );
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("line 2"), "{text}");
    assert_eq!(std::fs::read(dir.join("config.yml")).unwrap(), before);
    mcp.finish();
}
