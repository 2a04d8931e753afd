//! `generated/server-card.json`: the MCP server card (SEP-2127 shape), from the registry.

use serde_json::json;

use super::{json_text, mcp_tools, GENERATED_BY};
use crate::model::Registry;
use crate::policy::Effect;
use crate::versions::{MCP_ALL_VERSIONS, MCP_HTTP_PATH, SERVER_CARD_NAME, SERVER_NAME};

/// The card. It lists only tools and resources the registry holds, so it cannot announce a
/// surface that does not exist.
pub fn render(reg: &Registry, digest: &str) -> String {
    let tools = mcp_tools::tools(reg, Effect::RepositoryWrite);
    let summary: Vec<_> = reg
        .executable()
        .filter_map(|c| {
            c.expose.mcp_tool.as_ref().map(|t| {
                json!({"name": t, "id": c.id, "effect": c.effect.as_str(), "approval": c.approval().as_str()})
            })
        })
        .collect();
    let resources: Vec<_> = reg
        .executable()
        .filter_map(|c| {
            c.expose.mcp_resource.as_ref().map(|u| {
                json!({"uri": u, "name": c.id, "title": c.title, "description": c.description, "mimeType": if c.content.is_some() { c.mime_type.as_str() } else { "application/json" }})
            })
        })
        .collect();
    let writers: Vec<_> = reg
        .executable()
        .filter(|c| c.effect == Effect::RepositoryWrite)
        .filter_map(|c| c.expose.mcp_tool.clone())
        .collect();
    json_text(&json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": SERVER_CARD_NAME,
        "title": SERVER_NAME,
        "version": reg.version,
        "description": "A repository steward for AI agents: the repository's knowledge and a small set of queries and writes, every interface derived from one capability registry.",
        "remotes": [{
            "type": "streamable-http",
            "url": MCP_HTTP_PATH,
            "supportedProtocolVersions": MCP_ALL_VERSIONS,
        }],
        "capabilities": {
            "tools": {"listChanged": false},
            "resources": {"listChanged": false, "subscribe": false},
        },
        "tools": tools,
        "resources": resources,
        "prompts": [],
        "_meta": {
            "seneschal/generated-by": GENERATED_BY,
            "seneschal/digest": digest,
            "seneschal/tools": summary,
            "seneschal/writers": writers,
            "seneschal/capabilities": reg.capabilities.len(),
        },
    }))
}
