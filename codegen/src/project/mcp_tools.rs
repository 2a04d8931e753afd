//! `generated/mcp-tools.json`: exactly the MCP `tools/list` result, built at build time, and
//! the narrower lists of `--allow-effects read` and `process_state` (OUT_DIR only).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{json_text, part_text, Part, GENERATED_BY};
use crate::model::{hints_json, Capability, Registry};
use crate::policy::Effect;

/// One MCP tool entry. Every annotation comes from `ExecutionPolicy::hints(effect)`.
pub fn tool(c: &Capability, tool_name: &str) -> Value {
    let mut annotations = hints_json(c.hints());
    annotations["title"] = json!(c.title);
    let mut tool = json!({
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
    });
    c.mark_additive(&mut tool["_meta"], "seneschal/additive");
    tool
}

/// Every tool of the full profile, each rendered once; a profile's list borrows from it.
pub struct Tools<'r> {
    all: Vec<(&'r Capability, Value)>,
}

impl<'r> Tools<'r> {
    /// Renders every executable capability's tool entry once.
    pub fn new(reg: &'r Registry) -> Tools<'r> {
        Tools {
            all: reg
                .served(Effect::RepositoryWrite)
                .filter_map(|c| c.expose.mcp_tool.as_ref().map(|t| (c, tool(c, t))))
                .collect(),
        }
    }

    /// The tools a profile serves, in registry order: those of [`Registry::served`].
    pub fn of(&self, max_effect: Effect) -> impl Iterator<Item = (&'r Capability, &Value)> {
        self.all
            .iter()
            .filter(move |(c, _)| c.served_by(max_effect))
            .map(|(c, t)| (*c, t))
    }

    /// Every tool entry by capability id.
    pub fn by_id(&self) -> HashMap<&'r str, &Value> {
        self.all.iter().map(|(c, t)| (c.id.as_str(), t)).collect()
    }

    /// The `tools/list` result of a profile.
    pub fn render(&self, max_effect: Effect) -> String {
        let mut doc = Part::object(json!({"_meta": { "seneschal/generated-by": GENERATED_BY }}));
        doc.insert(
            "tools".into(),
            Part::List(
                self.of(max_effect)
                    .map(|(_, t)| Part::Borrowed(t))
                    .collect(),
            ),
        );
        part_text(&Part::Map(doc))
    }
}

/// The tools a profile allows: those whose effect is at most `max_effect`.
pub fn tools(reg: &Registry, max_effect: Effect) -> Vec<Value> {
    reg.served(max_effect)
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
