//! The cockpit's surface (OUT_DIR only, one per effect profile): the rows of the capability
//! table of `/`, which the server splices into `share/cockpit/index.html`, so the page a
//! process serves names only what that process executes.

use serde_json::{json, Value};

use super::allowed_effects;
use crate::model::Registry;
use crate::policy::Effect;

/// Where the surface goes in the page: the template holds this comment once.
pub const MARKER: &str = "<!-- seneschal:surface -->";

/// The surface of a process started with `--allow-effects max_effect`, as compact JSON safe
/// inside `<script type="application/json">` (every `<` is escaped). Rows are the capabilities
/// within the profile ([`Registry::within`]): the served ones, and the planned ones marked as
/// not executable.
pub fn render(reg: &Registry, max_effect: Effect) -> String {
    let rows: Vec<Value> = reg
        .within(max_effect)
        .map(|c| {
            let h = c.hints();
            let e = &c.expose;
            let mut row = json!({
                "id": c.id,
                "title": c.title,
                "executable": c.executable(),
                "effect": c.effect.as_str(),
                "approval": c.approval().as_str(),
                "readOnlyHint": h.read_only,
                "destructiveHint": h.destructive,
                "idempotentHint": h.idempotent,
                "openWorldHint": h.open_world,
                "mcp_tool": e.mcp_tool,
                "mcp_resource": e.mcp_resource,
                "http": e.http.as_ref().map(|h| format!("{} {}", h.method, h.path)),
                "cli": e.cli.as_ref().map(|p| p.join(" ")),
            });
            c.mark_additive(&mut row, "additive");
            row
        })
        .collect();
    let text = serde_json::to_string(&json!({
        "allowed_effects": allowed_effects(max_effect),
        "capabilities": rows,
    }))
    .expect("JSON values serialize");
    // `<` only occurs inside JSON strings, where `\u003c` reads the same.
    text.replace('<', "\\u003c")
}
