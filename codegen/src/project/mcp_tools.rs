//! `generated/mcp-tools.json`: exactly the MCP `tools/list` result, built at build time.

use serde_json::{json, Value};

use super::{json_text, GENERATED_BY};
use crate::model::{hints_json, Capability, Registry};
use crate::policy::Effect;

/// One MCP tool entry. Every annotation comes from `ExecutionPolicy::hints(effect)`.
pub fn tool(c: &Capability, tool_name: &str) -> Value {
    let mut annotations = hints_json(c.hints());
    annotations["title"] = json!(c.title);
    json!({
        "name": tool_name,
        "title": c.title,
        "description": c.description,
        "inputSchema": c.input,
        "outputSchema": c.output,
        "annotations": annotations,
        "_meta": {
            "seneschal/id": c.id,
            "seneschal/effect": c.effect.as_str(),
            "seneschal/approval": c.approval().as_str(),
            "seneschal/disclosure": c.disclosure.as_str(),
            "seneschal/stability": c.stability.as_str(),
            "seneschal/review": c.review,
        }
    })
}

/// The tools a profile allows: those whose effect is at most `max_effect`.
pub fn tools(reg: &Registry, max_effect: Effect) -> Vec<Value> {
    reg.executable()
        .filter(|c| c.effect <= max_effect)
        .filter_map(|c| c.expose.mcp_tool.as_ref().map(|t| tool(c, t)))
        .collect()
}

/// The `tools/list` result for a profile, as committed (full profile) or compiled in.
pub fn render(reg: &Registry, max_effect: Effect) -> String {
    json_text(&json!({
        "tools": tools(reg, max_effect),
        "_meta": { "seneschal/generated-by": GENERATED_BY },
    }))
}
