//! Toolsets (ADR 0006): the default surface an agent gets, `--toolsets` and
//! `$SENESCHAL_TOOLSETS` narrowing every projection and the executor, over stdio and HTTP, and
//! the context budget of every listed tool.

use serde_json::{json, Value};

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use crate::support::{self, scratch_repo};

/// The tools of `seneschal mcp ARGS` (env `SENESCHAL_TOOLSETS` as given) and the compact size
/// of its `tools/list` result.
fn listed(dir: &std::path::Path, args: &[&str], env: Option<&str>) -> (Vec<Value>, usize) {
    let mut mcp = Mcp::start_with(
        dir,
        args,
        &[("SENESCHAL_TOOLSETS", env.unwrap_or("default"))],
    );
    mcp.initialize("2025-11-25");
    let answer = mcp.request("tools/list", json!({}));
    let bytes = serde_json::to_string(&answer["result"]).unwrap().len();
    let tools = answer["result"]["tools"].as_array().expect("tools").clone();
    (tools, bytes)
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_default_lists_every_toolset_but_introspection_within_the_context_budget() {
    let repo = scratch_repo();
    let (tools, bytes) = listed(repo.path(), &["--toolsets", "default"], None);
    let names = names(&tools);
    for own in [
        "capabilities_list",
        "capabilities_show",
        "capabilities_projections",
        "contract_digest",
        "mcp_projection",
        "mcp_wire",
    ] {
        assert!(
            !names.contains(&own.to_string()),
            "{own} is opt-in: {names:?}"
        );
    }
    for agent in [
        "files_read",
        "files_edit",
        "repo_status",
        "repo_commit",
        "knowledge_list",
        "session_note_add",
    ] {
        assert!(names.contains(&agent.to_string()), "{agent}: {names:?}");
    }
    let (all, all_bytes) = listed(repo.path(), &["--toolsets", "all"], None);
    assert_eq!(all.len(), tools.len() + 6, "{:?}", self::names(&all));
    // Every tool within the budget the build enforces (codegen/src/check.rs), and the list
    // of the default smaller than every toolset's.
    for t in &all {
        let cost = serde_json::to_string(t).unwrap().len();
        assert!(cost <= 1900, "{} costs {cost} bytes", t["name"]);
        assert!(
            t["description"].as_str().unwrap().chars().count() <= 300,
            "{}",
            t["name"]
        );
        // The lean entry: top-level output fields; the effect and approval are the
        // instructions' (ADR 0007).
        assert!(t["outputSchema"]["properties"].is_object(), "{}", t["name"]);
        assert!(t.get("_meta").is_none(), "{}", t["name"]);
    }
    assert!(bytes < all_bytes);
    // The default list costs no more a tool than the reference filesystem server's (930 bytes
    // a tool, docs/PERFORMANCE.md, "Reference servers"; ADR 0007).
    assert!(
        bytes <= 930 * tools.len(),
        "the default tools/list costs {bytes} bytes for {} tools ({} a tool), over 930 a tool",
        tools.len(),
        bytes / tools.len()
    );
    println!(
        "tools/list: default {} tools, {bytes} bytes ({} a tool); all {} tools, {all_bytes} bytes",
        tools.len(),
        bytes / tools.len(),
        all.len()
    );
}

#[test]
fn a_narrowed_process_lists_only_its_toolsets_and_refuses_the_rest_with_the_flag_that_serves_it() {
    let repo = scratch_repo();
    let (tools, _) = listed(repo.path(), &["--toolsets", "files"], None);
    let files = names(&tools);
    assert!(
        !files.is_empty() && files.iter().all(|n| n.starts_with("files_")),
        "{files:?}"
    );
    // The variable chooses when the flag does not; the flag wins over it.
    let (history, _) = listed(repo.path(), &[], Some("history"));
    assert!(
        names(&history).iter().all(|n| n.starts_with("repo_")),
        "{:?}",
        names(&history)
    );
    let (flag, _) = listed(repo.path(), &["--toolsets", "files"], Some("history"));
    assert_eq!(names(&flag), files);

    let mut mcp = Mcp::start_with(repo.path(), &["--toolsets", "files"], &[]);
    mcp.initialize("2025-11-25");
    let r = mcp.request(
        "tools/call",
        json!({"name": "repo_status", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["_meta"]["seneschal/error"]["code"], "refused",
        "{r}"
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("--toolsets files,history"), "{text}");
    // Knowledge outside tools/call goes with the knowledge toolset: no prompts, no resources.
    let prompts = mcp.request("prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
    let ok = mcp.request("tools/call", json!({"name": "files_list", "arguments": {}}));
    assert_eq!(ok["result"]["isError"], false, "{ok}");
}

#[test]
fn serve_narrows_openapi_the_card_the_cockpit_and_the_routes_alike() {
    let repo = scratch_repo();
    let serve = Serve::start_args(repo.path(), &["--toolsets", "history"], &[]);
    let (status, openapi) = serve.json("GET", "/openapi.json", None);
    assert_eq!(status, 200);
    let ops: Vec<&str> = openapi["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|m| m.as_object().unwrap().values())
        .map(|op| op["operationId"].as_str().unwrap())
        .collect();
    assert!(
        !ops.is_empty() && ops.iter().all(|id| id.starts_with("repo.")),
        "{ops:?}"
    );
    assert!(
        !ops.contains(&"repo.commit"),
        "repo.commit is git, not history: {ops:?}"
    );
    let (_, card) = serve.json("GET", "/.well-known/mcp/server-card.json", None);
    let tools: Vec<&str> = card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.iter().all(|t| t.starts_with("repo_")), "{tools:?}");
    assert_eq!(card["resourceTemplates"], json!([]), "no knowledge toolset");
    assert_eq!(
        card["_meta"]["seneschal/capabilities"].as_u64().unwrap() as usize,
        tools.len()
    );
    // A route of another toolset is refused by the executor, naming the flag.
    let (status, body) = serve.json("GET", "/api/v1/files/list", None);
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "refused", "{body}");
    let (status, _) = serve.json("GET", "/api/v1/repo/status", None);
    assert_eq!(status, 200);
    serve.finish();
}

#[test]
fn an_unknown_toolset_is_a_usage_error_naming_the_toolsets() {
    let repo = scratch_repo();
    let o = std::process::Command::new(support::bin())
        .args(["mcp", "--toolsets", "files,repos"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    let err = support::stderr(&o);
    assert!(
        err.contains("`repos`") && err.contains("introspection"),
        "{err}"
    );
    // The command line runs every toolset whatever the variable says.
    let o = std::process::Command::new(support::bin())
        .args(["call", "capabilities.list", "--input", "{}"])
        .env("SENESCHAL_TOOLSETS", "files")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", support::stderr(&o));
}
