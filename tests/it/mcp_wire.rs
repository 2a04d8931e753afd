//! `seneschal mcp wire` (capability `mcp.wire`) through the built binary on scratch
//! repositories: a configuration that already holds another server keeps it byte for byte
//! beside the new entry, a second run changes nothing, `mcp --inspect` then calls every client
//! wired, the audit log holds the write, a dry run writes nothing, a file it cannot edit is
//! refused and left alone, and MCP and HTTP reach the same capability.

use crate::support;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use crate::support::{json, scratch_repo, stderr};
use serde_json::{json, Value};

const FILES: [&str; 5] = [
    ".mcp.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".vscode/mcp.json",
    ".cursor/mcp.json",
];

/// The binary run in `dir` with this binary's folder first on PATH, so `seneschal` names it;
/// the write is approved (`--yes`).
fn run(dir: &Path, args: &[&str]) -> Output {
    let bin = support::bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(&bin)
        .args(args)
        .arg("--yes")
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("the binary runs")
}

fn ok(dir: &Path, args: &[&str]) -> Value {
    let o = run(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    json(&o)
}

fn files(dir: &Path) -> BTreeMap<String, Option<String>> {
    FILES
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(dir.join(f)).ok()))
        .collect()
}

const OTHER_JSON: &str = "{\n  \"mcpServers\": {\n    \"other\": { \"command\": \"npx\", \"args\": [\"-y\", \"other-server\"] }\n  },\n  \"zzz\": true\n}\n";
const OTHER_TOML: &str =
    "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"uvx\"\nargs = [\"other\"]\n";

#[test]
fn wiring_keeps_other_servers_is_idempotent_audited_and_inspected_as_wired() {
    let repo = scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join(".mcp.json"), OTHER_JSON).unwrap();
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    std::fs::write(dir.join(".codex/config.toml"), OTHER_TOML).unwrap();

    // A dry run plans and writes nothing.
    let before = files(dir);
    let plan = ok(dir, &["mcp", "wire", "--dry-run"]);
    assert_eq!(plan["applied"], false);
    assert_eq!(
        plan["plan"]["counts"],
        json!({"create": 3, "change": 2, "delete": 0})
    );
    assert_eq!(files(dir), before);
    assert!(!dir.join(".seneschal/audit.jsonl").exists());

    let first = ok(dir, &["mcp", "wire"]);
    assert_eq!(first["applied"], true, "{first}");
    let actions: Vec<&str> = first["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["change", "change", "create", "create", "create"]);

    // Both servers are there, and the other one's bytes are untouched.
    let claude = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
    assert!(
        claude
            .contains("\"other\": { \"command\": \"npx\", \"args\": [\"-y\", \"other-server\"] }"),
        "{claude}"
    );
    let v: Value = serde_json::from_str(&claude).unwrap();
    assert_eq!(v["mcpServers"]["other"]["command"], "npx");
    assert_eq!(v["zzz"], true);
    assert_eq!(
        v["mcpServers"]["seneschal"],
        json!({"command": "seneschal", "args": ["mcp"]})
    );
    let codex = std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap();
    assert!(codex.starts_with(OTHER_TOML), "{codex}");
    assert!(
        codex.ends_with("[mcp_servers.seneschal]\ncommand = \"seneschal\"\nargs = [\"mcp\"]\n"),
        "{codex}"
    );
    let vscode: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".vscode/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(vscode["servers"]["seneschal"]["type"], "stdio");

    // A second run changes nothing.
    let wired = files(dir);
    let second = ok(dir, &["mcp", "wire"]);
    assert_eq!(second["applied"], false, "{second}");
    assert!(second["clients"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["action"] == "unchanged"));
    assert_eq!(files(dir), wired);

    // mcp --inspect says every client is wired.
    let p = ok(dir, &["mcp", "--inspect", "--json"]);
    let states: Vec<(&str, &str)> = p["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["file"].as_str().unwrap(), c["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states.len(), 5, "{p}");
    for (file, state) in &states {
        assert_eq!(*state, "wired", "{file}: {p}");
    }

    // The audit log has the write: an intent naming the files, then its applied outcome; and
    // the chain verifies.
    let log = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl")).unwrap();
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let intent = records
        .iter()
        .find(|r| r["capability"] == "mcp.wire" && r["phase"] == "intent")
        .expect("an intent");
    let paths: Vec<&str> = intent["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for f in FILES {
        assert!(paths.contains(&f), "{f} in {paths:?}");
    }
    assert!(records.iter().any(|r| r["phase"] == "outcome"
        && r["outcome"] == "applied"
        && r["intent"] == intent["seq"]));
    let verify = run(dir, &["audit", "verify"]);
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn a_stale_entry_is_set_and_a_file_it_cannot_edit_is_left_alone() {
    let repo = scratch_repo();
    let dir = repo.path();
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"seneschal": {"command": "cargo", "args": ["run", "--", "mcp"], "env": {"A": "1"}}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    std::fs::write(dir.join(".gemini/settings.json"), "{ not json").unwrap();
    let o = run(
        dir,
        &[
            "mcp",
            "wire",
            "--clients",
            "claude-code",
            "--clients",
            "gemini-cli",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[refused]"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".gemini/settings.json"),
        "{}",
        stderr(&o)
    );
    // Refused as a whole: nothing was written, not even the file it could edit.
    assert_eq!(
        std::fs::read_to_string(dir.join(".gemini/settings.json")).unwrap(),
        "{ not json"
    );
    assert!(std::fs::read_to_string(dir.join(".mcp.json"))
        .unwrap()
        .contains("cargo"));
    let fixed = ok(dir, &["mcp", "wire", "--clients", "claude-code"]);
    assert_eq!(fixed["clients"][0]["action"], "change");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["seneschal"],
        json!({"command": "seneschal", "args": ["mcp"], "env": {"A": "1"}})
    );
    // A link in place of a configuration is never followed.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("mcp.json"), "{}").unwrap();
    std::fs::create_dir_all(dir.join(".cursor")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("mcp.json"),
        dir.join(".cursor/mcp.json"),
    )
    .unwrap();
    let o = run(dir, &["mcp", "wire", "--clients", "cursor"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(outside.path().join("mcp.json")).unwrap(),
        "{}"
    );
    // Under --allow-effects read the write is refused before it is attempted.
    let o = run(dir, &["mcp", "wire", "--allow-effects", "read"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
}

#[test]
fn mcp_and_http_wire_the_same_files_as_the_cli() {
    let by_cli = scratch_repo();
    let by_mcp = scratch_repo();
    let by_http = scratch_repo();
    for d in [&by_cli, &by_mcp, &by_http] {
        std::fs::write(d.path().join(".mcp.json"), OTHER_JSON).unwrap();
    }
    ok(by_cli.path(), &["mcp", "wire"]);
    // The servers see the same PATH as the command line: `seneschal` names this binary.
    let path = format!(
        "{}:{}",
        support::bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [("PATH", path.as_str())];
    let mut mcp = Mcp::start_with(by_mcp.path(), &[], &env);
    mcp.initialize("2025-11-25");
    let r = mcp.request("tools/call", json!({"name": "mcp_wire", "arguments": {}}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(r["result"]["structuredContent"]["applied"], true);
    let (status, _, err) = mcp.finish();
    assert!(status.success(), "{err}");
    let server = Serve::start(by_http.path(), &env);
    let (code, body) = server.json("POST", "/api/v1/mcp/wire", Some(&json!({})));
    assert_eq!(code, 200, "{body}");
    server.finish();
    assert_eq!(files(by_mcp.path()), files(by_cli.path()));
    assert_eq!(files(by_http.path()), files(by_cli.path()));
}

/// Wired where `seneschal` is not on PATH (a checkout run with `cargo run`, a binary copied
/// somewhere), the clients are given this binary's absolute path instead of a name they would
/// fail to spawn, and the answer says why; `mcp --inspect` (on the same PATH) then finds every
/// client wired to a command that resolves. A command asked that resolves nowhere is written
/// as asked, and said.
#[test]
fn without_seneschal_on_path_the_clients_are_given_this_binary_s_path() {
    let d = scratch_repo();
    let dir = d.path();
    let bin = support::bin().canonicalize().unwrap();
    let bare = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(dir)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("the binary runs")
    };
    let o = bare(&["--json", "mcp", "wire", "--yes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = json(&o);
    assert_eq!(a["command"], bin.to_str().unwrap(), "{a}");
    let note = a["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("not on PATH") && note.contains("cargo install"),
        "{a}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["seneschal"]["command"],
        bin.to_str().unwrap()
    );
    let o = bare(&["--json", "mcp", "--inspect"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = json(&o);
    for c in p["clients"].as_array().unwrap() {
        assert_eq!(c["state"], "wired", "{p}");
    }
    // On PATH, the name is written again, with no note.
    let a = ok(dir, &["--json", "mcp", "wire"]);
    assert_eq!(a["command"], "seneschal", "{a}");
    assert!(a.get("note").is_none_or(Value::is_null), "{a}");
    // A command that resolves nowhere is kept, and said.
    let a = ok(
        dir,
        &[
            "--json",
            "mcp",
            "wire",
            "--command",
            "no-such-seneschal-build",
        ],
    );
    assert_eq!(a["command"], "no-such-seneschal-build");
    assert!(a["note"].as_str().unwrap().contains("not on PATH"), "{a}");
}

/// A Codex configuration whose multi-line strings hold `[mcp_servers.seneschal]` and a
/// `command` line: they are text, not a table, and stay byte for byte; the real table is
/// added after them, and a second run finds it and changes nothing.
#[test]
fn a_table_inside_a_multi_line_string_is_text() {
    let repo = scratch_repo();
    let dir = repo.path();
    let old = concat!(
        "model = \"o3\"\n",
        "notes = \"\"\"\n",
        "[mcp_servers.seneschal]\n",
        "command = \"elsewhere\"\n",
        "\"\"\"\n",
        "quoted = '''\n",
        "[mcp_servers.seneschal]\n",
        "args = [\"not\", \"this\"]'''\n",
        "\n",
        "[mcp_servers.other]\n",
        "command = \"uvx\" # [mcp_servers.seneschal]\n",
    );
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    std::fs::write(dir.join(".codex/config.toml"), old).unwrap();
    let first = ok(dir, &["mcp", "wire", "--clients", "codex"]);
    assert_eq!(first["clients"][0]["action"], "change", "{first}");
    let codex = std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap();
    assert_eq!(
        codex,
        format!("{old}\n[mcp_servers.seneschal]\ncommand = \"seneschal\"\nargs = [\"mcp\"]\n")
    );
    let again = ok(dir, &["mcp", "wire", "--clients", "codex"]);
    assert_eq!(again["applied"], false, "{again}");
    assert_eq!(
        std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap(),
        codex
    );
    let p = ok(dir, &["mcp", "--inspect", "--json"]);
    let state = p["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == ".codex/config.toml")
        .map(|c| c["state"].clone());
    assert_eq!(state, Some(json!("wired")), "{p}");
}
