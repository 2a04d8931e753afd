//! `mcp.projection` and `seneschal mcp --inspect`: the same answer through every projection,
//! and client configurations read from a scratch repository as wired, foreign or absent.

use crate::support;
use crate::support::mcp::Mcp;
use crate::support::{json, run_in, scratch_repo, stdout};
use serde_json::{json, Value};

fn clients(projection: &Value) -> Vec<(String, String)> {
    projection["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_string(),
                c["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn inspect_reports_each_client_configuration() {
    let repo = scratch_repo();
    let dir = repo.path();
    // Wired: the command is this binary (tests/it/hostile/surfaces.rs covers the commands that
    // are not).
    std::fs::write(
        dir.join(".mcp.json"),
        json!({"mcpServers": {"seneschal": {"command": support::bin(), "args": ["mcp", "--allow-effects", "read"]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    std::fs::write(
        dir.join(".codex/config.toml"),
        "# codex\n[mcp_servers.seneschal]\ncommand = \"python\"\nargs = [\"server.py\"]\n",
    )
    .unwrap();
    let o = run_in(dir, &["mcp", "--inspect"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let p = json(&o);
    assert_eq!(
        clients(&p),
        vec![
            (".mcp.json".into(), "wired".into()),
            (".codex/config.toml".into(), "foreign".into()),
            (".gemini/settings.json".into(), "absent".into()),
            (".vscode/mcp.json".into(), "absent".into()),
            (".cursor/mcp.json".into(), "absent".into()),
        ]
    );
    let codex = &p["clients"][1];
    assert!(
        codex["detail"].as_str().unwrap().contains("python"),
        "{codex}"
    );
    assert!(codex["fix"]
        .as_str()
        .unwrap()
        .contains("[mcp_servers.seneschal]"));
    assert_eq!(p["clients"][0]["fix"], Value::Null);
    assert!(p["clients"][2]["fix"]
        .as_str()
        .unwrap()
        .contains("mcpServers"));

    // A configuration that does not parse is foreign, with the reason.
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    std::fs::write(dir.join(".gemini/settings.json"), "{ not json").unwrap();
    let p = json(&run_in(dir, &["mcp", "--inspect", "--json"]));
    assert_eq!(p["clients"][2]["state"], "foreign");
    assert!(p["clients"][2]["detail"]
        .as_str()
        .unwrap()
        .contains("does not parse"));
}

#[test]
fn the_projection_describes_the_served_surface() {
    let repo = scratch_repo();
    let p = json(&run_in(repo.path(), &["mcp", "--inspect"]));
    assert_eq!(p["server"]["name"], "seneschal");
    assert_eq!(p["prompts"], true);
    assert_eq!(p["eras"][0]["era"], "legacy");
    assert_eq!(
        p["eras"][0]["versions"],
        json!(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
    );
    assert_eq!(p["eras"][1]["era"], "modern");
    assert_eq!(p["eras"][1]["versions"], json!(["2026-07-28"]));
    assert!(p["eras"][1]["methods"]
        .as_array()
        .unwrap()
        .contains(&json!("server/discover")));
    assert!(!p["eras"][1]["methods"]
        .as_array()
        .unwrap()
        .contains(&json!("ping")));
    let not_served: Vec<&str> = p["not_served"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert!(!not_served.contains(&"logging/setLevel"));
    assert!(!not_served.contains(&"prompts/list"));
    let writers: Vec<&str> = seneschal::registry::CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect == seneschal::policy::Effect::RepositoryWrite)
        .filter_map(|d| d.mcp_tool)
        .collect();
    assert_eq!(p["writers"], json!(writers));
    let tool = p["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp_projection")
        .expect("itself");
    assert_eq!(tool["effect"], "read");
    assert_eq!(tool["readOnlyHint"], true);
    assert!(p["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == "seneschal://mcp/projection"));
    assert_eq!(p["transports"].as_array().unwrap().len(), 2);
}

#[test]
fn every_projection_of_mcp_projection_agrees() {
    let repo = scratch_repo();
    let dir = repo.path();
    let inspect = json(&run_in(dir, &["mcp", "--inspect"]));
    let cli = json(&run_in(dir, &["server", "mcp"]));
    let call = json(&run_in(dir, &["call", "mcp.projection"]));
    assert_eq!(inspect, cli);
    assert_eq!(inspect, call);
    let mut mcp = Mcp::start_with(dir, &[], &[]);
    mcp.initialize("2025-11-25");
    let tool = mcp.request(
        "tools/call",
        json!({"name": "mcp_projection", "arguments": {}}),
    );
    assert_eq!(tool["result"]["structuredContent"], inspect);
    let read = mcp.request(
        "resources/read",
        json!({"uri": "seneschal://mcp/projection"}),
    );
    let text: Value =
        serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, inspect);
    let bad = mcp.request(
        "tools/call",
        json!({"name": "mcp_projection", "arguments": {"verbose": true}}),
    );
    assert_eq!(bad["result"]["isError"], true);
    assert_eq!(
        bad["result"]["_meta"]["seneschal/error"]["code"],
        "invalid_input"
    );
}

#[test]
fn the_human_rendering_names_every_section() {
    let repo = scratch_repo();
    let p = json(&run_in(repo.path(), &["mcp", "--inspect"]));
    let text = seneschal::mcp::inspect::human(&p);
    for needle in [
        "MCP server: seneschal",
        "2026-07-28",
        "server/discover",
        "prompts/list",
        "mcp_projection",
        "Writers:",
        "seneschal://mcp/projection",
        "Prompts: yes",
        ".codex/config.toml",
        "absent",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    assert!(!stdout(&run_in(repo.path(), &["mcp", "--inspect"])).is_empty());
}
