//! The secrets test: a unique token is planted in the server process's environment, in a
//! remote URL, in `.env` files, in files under `.git/`, in secret-named files, in a private
//! key block and behind symbolic links that lead outside the repository. Every read
//! capability is then called through the CLI (`seneschal call`, and the capability's own
//! command path) with each of its examples and with inputs aimed at each planted place; the
//! token must appear in no stdout and no stderr.
//!
//! MCP (`seneschal mcp`, tools/call and resources/read over pipes) and HTTP (`seneschal
//! serve`, each capability's route and `POST /mcp`) reach the same executor: the same calls
//! run over them too, and the token must appear in no response and no stderr of either server.

use crate::support;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::{bin, git, json, scratch_repo, stderr, stdout};
use serde_json::{json, Value};

/// A token no redaction rule knows by shape: only confinement can keep it in. Upper case and
/// digits only: a value that also mixes in lower case looks random to the environment rule,
/// which would then blank it everywhere and hide a confinement leak.
fn unique_token() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("PLANTED{:X}Q{:X}", nanos, std::process::id())
}

/// Runs the binary in `dir` with the token in a neutral environment variable.
fn seneschal(dir: &Path, token: &str, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("SENESCHAL_PLANTED", token)
        .output()
        .expect("the binary runs")
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

struct Planted {
    repo: tempfile::TempDir,
    outside: tempfile::TempDir,
    token: String,
}

fn plant() -> Planted {
    let token = unique_token();
    let repo = scratch_repo();
    let outside = tempfile::tempdir().unwrap();
    let root = repo.path();
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://user:{token}@example.invalid/repo.git"),
        ],
    );
    git(
        root,
        &[
            "remote",
            "add",
            "bare",
            &format!("https://{token}@example.invalid/bare.git"),
        ],
    );
    git(
        root,
        &[
            "config",
            "remote.origin.pushurl",
            &format!("https://example.invalid/repo.git?token={token}"),
        ],
    );
    write(root, ".env", &format!("API_KEY={token}\n"));
    write(root, "config/.env.local", &format!("DB_PASSWORD={token}\n"));
    write(root, ".git/planted.txt", &format!("{token}\n"));
    write(root, "id_rsa", &format!("{token}\n"));
    write(root, "deploy/server.pem", &format!("{token}\n"));
    write(root, ".ssh/config", &format!("IdentityFile {token}\n"));
    let kind = "OPENSSH PRIVATE KEY";
    write(
        root,
        "notes/deploy.txt",
        &format!("needle\n-----BEGIN {kind}-----\nb3BlbnNzaC1rZXktdjEAAAAA{token}\n-----END {kind}-----\n"),
    );
    write(outside.path(), "loot.txt", &format!("needle {token}\n"));
    std::os::unix::fs::symlink(outside.path().join("loot.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
    // The plantings are real: the token sits in each of these places.
    assert!(std::fs::read_to_string(root.join(".git/config"))
        .unwrap()
        .contains(&token));
    assert!(std::fs::read_to_string(root.join("link.txt"))
        .unwrap()
        .contains(&token));
    Planted {
        repo,
        outside,
        token,
    }
}

/// Every executable read capability, from the registry itself.
fn read_capabilities(dir: &Path, token: &str) -> Vec<String> {
    let v = json(&seneschal(
        dir,
        token,
        &[
            "call",
            "capabilities.list",
            "--input",
            r#"{"effect":"read"}"#,
        ],
    ));
    v["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["executable"] == true)
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn examples(dir: &Path, token: &str, id: &str) -> Vec<Value> {
    let v = json(&seneschal(
        dir,
        token,
        &[
            "call",
            "capabilities.show",
            "--input",
            &json!({"id": id}).to_string(),
        ],
    ));
    v["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["input"].clone())
        .collect()
}

/// Inputs aimed at each planted place.
fn aimed(id: &str, p: &Planted) -> Vec<Value> {
    let probe = &p.token[..12];
    let outside_abs = p
        .outside
        .path()
        .join("loot.txt")
        .to_string_lossy()
        .into_owned();
    let depth = p.repo.path().components().count();
    let climb = format!(
        "{}{}",
        "../".repeat(depth),
        outside_abs.trim_start_matches('/')
    );
    match id {
        "files.read" => [
            ".env",
            "config/.env.local",
            ".git/planted.txt",
            ".git/config",
            ".GIT/config",
            "./.git/config",
            "id_rsa",
            "deploy/server.pem",
            ".ssh/config",
            "notes/deploy.txt",
            "link.txt",
            "linkdir/loot.txt",
            outside_abs.as_str(),
            climb.as_str(),
        ]
        .iter()
        .map(|path| json!({ "path": path }))
        .collect(),
        "files.search" => vec![
            json!({ "pattern": probe }),
            json!({ "pattern": probe, "glob": ".env" }),
            json!({ "pattern": probe, "glob": ".git/**" }),
            json!({ "pattern": probe, "glob": "link*" }),
            json!({ "pattern": probe, "glob": "**" }),
            json!({ "pattern": "needle" }),
            json!({ "pattern": ".", "limit": 10000 }),
        ],
        "repo.log" => vec![
            json!({ "limit": 1000 }),
            json!({ "path": ".env" }),
            json!({ "path": ".git/config" }),
            json!({ "path": "link.txt" }),
        ],
        _ => vec![json!({})],
    }
}

fn assert_clean(o: &Output, token: &str, what: &str) {
    assert!(
        !stdout(o).contains(token),
        "{what}: the token leaked on stdout:\n{}",
        stdout(o)
    );
    assert!(
        !stderr(o).contains(token),
        "{what}: the token leaked on stderr:\n{}",
        stderr(o)
    );
}

#[test]
fn no_planted_secret_reaches_any_output() {
    let p = plant();
    let dir = p.repo.path();
    let ids = read_capabilities(dir, &p.token);
    for must in [
        "repo.identity",
        "repo.status",
        "repo.log",
        "files.read",
        "files.search",
        "session.note.list",
    ] {
        assert!(
            ids.iter().any(|i| i == must),
            "{must} is not an executable read capability"
        );
    }
    let mut calls = 0;
    for id in &ids {
        let mut inputs = examples(dir, &p.token, id);
        inputs.extend(aimed(id, &p));
        for input in inputs {
            let o = seneschal(dir, &p.token, &["call", id, "--input", &input.to_string()]);
            assert_clean(&o, &p.token, &format!("{id} {input}"));
            calls += 1;
        }
    }
    // The commands of the CLI tree reach the same executor; a few of them directly too.
    for args in [
        vec!["repo", "identity"],
        vec!["repo", "status", "--json"],
        vec!["files", "read", "--path", "link.txt"],
        vec!["files", "search", "--pattern", &p.token[..12]],
    ] {
        let o = seneschal(dir, &p.token, &args);
        assert_clean(&o, &p.token, &args.join(" "));
        calls += 1;
    }
    assert!(calls >= 40, "only {calls} calls");
    // The search saw the planted files it may see, and held back the key block.
    let o = seneschal(
        dir,
        &p.token,
        &["call", "files.search", "--input", r#"{"pattern":"needle"}"#],
    );
    let v = json(&o);
    assert_eq!(v["skipped_secret_files"], 1, "{v}");
    assert_eq!(v["matches"], json!([]));
}

#[test]
fn secrets_handed_in_the_environment_are_redacted_wherever_they_turn_up() {
    let repo = scratch_repo();
    let token = unique_token();
    write(
        repo.path(),
        "docs/notes.md",
        &format!("copied by mistake: {token}\n"),
    );
    let o = Command::new(bin())
        .args([
            "call",
            "files.read",
            "--input",
            r#"{"path":"docs/notes.md"}"#,
        ])
        .current_dir(repo.path())
        .env("DEPLOY_TOKEN", &token)
        .output()
        .unwrap();
    assert_clean(&o, &token, "files.read with DEPLOY_TOKEN set");
    let v = json(&o);
    assert_eq!(v["content"], "copied by mistake: [REDACTED]\n");
    assert_eq!(v["redactions"], 1);
    // The same file, without the variable, is read as it is: the redaction came from it.
    let o = Command::new(bin())
        .args([
            "call",
            "files.read",
            "--input",
            r#"{"path":"docs/notes.md"}"#,
        ])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(stdout(&o).contains(&token));
}

/// Every call of the CLI test, over MCP and HTTP, with the token in both servers' environment.
#[test]
fn no_planted_secret_reaches_any_mcp_or_http_output() {
    let p = plant();
    let dir = p.repo.path();
    let token = p.token.as_str();
    let env = [("SENESCHAL_PLANTED", token)];
    let ids = read_capabilities(dir, token);
    let server = support::http::Serve::start(dir, &env);
    let mut mcp = support::mcp::Mcp::start_with(dir, &[], &env);
    let init = mcp.initialize("2025-11-25");
    assert!(!init.to_string().contains(token));
    let clean = |what: &str, text: &str| {
        assert!(!text.contains(token), "{what}: the token leaked:\n{text}");
    };
    let (mut over_mcp, mut over_http) = (0, 0);
    for id in &ids {
        let (_, d) = seneschal::registry::find(id).expect("a registered id");
        let mut inputs = examples(dir, token, id);
        inputs.extend(aimed(id, &p));
        for input in inputs {
            let what = format!("{id} {input}");
            if let Some(tool) = d.mcp_tool {
                let a = mcp.request("tools/call", json!({"name": tool, "arguments": input}));
                clean(&format!("MCP tools/call {what}"), &a.to_string());
                over_mcp += 1;
            }
            if let Some(route) = d.http {
                let (status, body) =
                    support::http::http_call(&server, route.method, route.path, &input);
                clean(&format!("HTTP {what} ({status})"), &body.to_string());
                over_http += 1;
                // The same call through Streamable HTTP.
                if let Some(tool) = d.mcp_tool {
                    let (_, body) = server.json(
                        "POST",
                        "/mcp",
                        Some(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": tool, "arguments": input}})),
                    );
                    clean(&format!("POST /mcp {what}"), &body.to_string());
                    assert!(body["result"].is_object(), "POST /mcp {what}: {body}");
                    over_http += 1;
                }
            }
        }
    }
    // Every resource and every list, too.
    for method in ["tools/list", "resources/list", "resources/templates/list"] {
        let a = mcp.request(method, json!({}));
        clean(method, &a.to_string());
    }
    let resources = mcp.request("resources/list", json!({}));
    for r in resources["result"]["resources"]
        .as_array()
        .expect("resources")
    {
        let uri = r["uri"].as_str().expect("a uri");
        let a = mcp.request("resources/read", json!({"uri": uri}));
        assert!(a["result"]["contents"].is_array(), "{uri}: {a}");
        clean(&format!("resources/read {uri}"), &a.to_string());
        over_mcp += 1;
    }
    for path in ["/", "/openapi.json", "/.well-known/mcp/server-card.json"] {
        let (_, body) = server.send("GET", path, None);
        clean(path, &String::from_utf8_lossy(&body));
    }
    assert!(over_mcp >= 40, "only {over_mcp} MCP calls");
    assert!(over_http >= 60, "only {over_http} HTTP calls");
    let (status, rest, err) = mcp.finish();
    assert!(status.success(), "{err}");
    clean("MCP stdout after the calls", &rest);
    clean("MCP stderr", &err);
    clean("serve stderr", &server.finish());
}
