//! `seneschal mcp --inspect`: the `mcp.projection` capability, through the executor, as text
//! for people on a terminal or as JSON for machines.

use std::fmt::Write as _;

use serde_json::{json, Value};

use seneschal_access::error::CapabilityError;
use seneschal_access::transport::Transport;
use seneschal_core::context::Context;
use seneschal_core::execute::execute;

/// The projection as `seneschal mcp --inspect` prints it: pretty JSON when `json`, text
/// otherwise.
pub fn render(ctx: &Context, json: bool) -> Result<String, CapabilityError> {
    let v = execute(ctx, "mcp.projection", json!({}), Transport::Cli)?;
    Ok(if json {
        let mut s = serde_json::to_string_pretty(&v).expect("values serialize");
        s.push('\n');
        s
    } else {
        human(&v)
    })
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn yes(v: &Value) -> &'static str {
    if v.as_bool() == Some(true) {
        "yes"
    } else {
        "no"
    }
}

/// The projection as text for a terminal.
pub fn human(p: &Value) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "MCP server: {} {}",
        p["server"]["name"].as_str().unwrap_or_default(),
        p["server"]["version"].as_str().unwrap_or_default()
    );
    s.push_str("\nEras\n");
    for e in p["eras"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<7} {}  ({})",
            e["era"].as_str().unwrap_or_default(),
            strs(&e["versions"]).join(", "),
            e["opening"].as_str().unwrap_or_default()
        );
        let _ = writeln!(s, "          methods: {}", strs(&e["methods"]).join(", "));
    }
    s.push_str("\nTransports\n");
    for t in p["transports"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<16} {}",
            t["name"].as_str().unwrap_or_default(),
            t["how"].as_str().unwrap_or_default()
        );
    }
    s.push_str("\nNot served (-32601)\n");
    for n in p["not_served"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<24} {}",
            n["method"].as_str().unwrap_or_default(),
            n["reason"].as_str().unwrap_or_default()
        );
    }
    s.push_str("\nTools\n");
    s.push_str(&format!(
        "  {:<26} {:<17} {:<9} {:<9} {:<12} {:<11} {}\n",
        "name", "effect", "approval", "readOnly", "destructive", "idempotent", "openWorld"
    ));
    for t in p["tools"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<26} {:<17} {:<9} {:<9} {:<12} {:<11} {}",
            t["name"].as_str().unwrap_or_default(),
            t["effect"].as_str().unwrap_or_default(),
            t["approval"].as_str().unwrap_or_default(),
            yes(&t["readOnlyHint"]),
            yes(&t["destructiveHint"]),
            yes(&t["idempotentHint"]),
            yes(&t["openWorldHint"]),
        );
    }
    let writers = strs(&p["writers"]);
    let _ = writeln!(
        s,
        "\nWriters: {}",
        if writers.is_empty() {
            "none (no tool writes to the repository)".to_string()
        } else {
            writers.join(", ")
        }
    );
    s.push_str("\nResources\n");
    for r in p["resources"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<32} {:<20} {}",
            r["uri"].as_str().unwrap_or_default(),
            r["id"].as_str().unwrap_or_default(),
            r["mimeType"].as_str().unwrap_or_default()
        );
    }
    let _ = writeln!(s, "\nPrompts: {}", yes(&p["prompts"]));
    s.push_str("\nClient configurations\n");
    for c in p["clients"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:<12} {:<24} {:<15} {}",
            c["client"].as_str().unwrap_or_default(),
            c["file"].as_str().unwrap_or_default(),
            c["state"].as_str().unwrap_or_default(),
            c["detail"].as_str().unwrap_or_default()
        );
        if let Some(fix) = c["fix"].as_str() {
            for line in fix.lines() {
                let _ = writeln!(s, "      {line}");
            }
        }
    }
    s
}
