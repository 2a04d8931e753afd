//! The cockpit's surface (OUT_DIR only, one per effect profile): the rows of the capability
//! table of `/`, which the server splices into `share/cockpit/index.html`, so the page a
//! process serves names only what that process executes.

use serde_json::json;

use super::{allowed_effects, Part, Seg};
use crate::model::Registry;
use crate::policy::Effect;

/// Where the surface goes in the page: the template holds this comment once.
pub const MARKER: &str = "<!-- seneschal:surface -->";

/// The surface of a process started with `--allow-effects max_effect`, as compact JSON safe
/// inside `<script type="application/json">` (every `<` is escaped). Rows are the capabilities
/// within the profile ([`Registry::within`]): the served ones, and the planned ones marked as
/// not executable.
pub fn render(reg: &Registry, max_effect: Effect) -> String {
    super::render_all(&template(reg, max_effect))
}

/// The template of [`render`]: each row marked with its capability's toolset.
pub fn template(reg: &Registry, max_effect: Effect) -> Vec<Seg> {
    let rows: Vec<Part> = reg
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
            Part::Select(c.toolset.bit(), Box::new(Part::Owned(row)))
        })
        .collect();
    let mut doc = Part::object(json!({ "allowed_effects": allowed_effects(max_effect) }));
    doc.insert("capabilities".into(), Part::List(rows));
    // `<` only occurs inside JSON strings, where `\u003c` reads the same.
    let safe = |s: &mut String| *s = s.replace('<', "\\u003c");
    let mut segs = super::template(&Part::Map(doc), false);
    for seg in &mut segs {
        match seg {
            Seg::Lit(s) => safe(s),
            Seg::Items { items, .. } => items.iter_mut().for_each(|(_, s)| safe(s)),
            Seg::Count(_) => {}
        }
    }
    segs
}
