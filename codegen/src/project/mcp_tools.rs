//! `generated/mcp-tools.json`: exactly the MCP `tools/list` result, built at build time, and
//! the narrower lists of `--allow-effects read` and `process_state` (OUT_DIR only), pretty for
//! people; and the bytes the server sends ([`WIRE`], OUT_DIR only): compact, one per profile
//! and protocol era, so that the server sends them as they are.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{json_text, part_text, Part, GENERATED_BY};
use crate::model::{hints_json, Capability, Registry};
use crate::policy::Effect;
use crate::versions::{MCP_TTL_STATIC_MS, META_SERVER_INFO, SERVER_NAME, SERVER_TITLE};

/// The OUT_DIR files of the served `tools/list` bytes: per profile, the initialize era's and
/// the 2026-07-28 era's.
pub const WIRE: [(Effect, [&str; 2]); 3] = [
    (
        Effect::Read,
        ["mcp-wire.legacy.read.json", "mcp-wire.modern.read.json"],
    ),
    (
        Effect::ProcessState,
        [
            "mcp-wire.legacy.process_state.json",
            "mcp-wire.modern.process_state.json",
        ],
    ),
    (
        Effect::RepositoryWrite,
        [
            "mcp-wire.legacy.repository_write.json",
            "mcp-wire.modern.repository_write.json",
        ],
    ),
];

/// One MCP tool entry. Every annotation comes from `ExecutionPolicy::hints(effect)`; the
/// schemas are published in the portable form of [`super::openapi::published_schema`].
pub fn tool(c: &Capability, tool_name: &str) -> Value {
    let mut annotations = hints_json(c.hints());
    annotations["title"] = json!(c.title);
    let mut tool = json!({
        "name": tool_name,
        "title": c.title,
        "description": c.description,
        "inputSchema": super::openapi::published_schema(&c.input),
        "outputSchema": super::openapi::published_schema(&c.output),
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
    if let Some(t) = &c.task {
        tool["execution"] = json!({ "taskSupport": t });
    }
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

    /// The `tools/list` result of a profile, with this `_meta`.
    fn document(&self, max_effect: Effect, meta: Value) -> Part<'_> {
        let mut doc = Part::object(json!({ "_meta": meta }));
        doc.insert(
            "tools".into(),
            Part::List(
                self.of(max_effect)
                    .map(|(_, t)| Part::Borrowed(t))
                    .collect(),
            ),
        );
        Part::Map(doc)
    }

    /// The `tools/list` result of a profile, pretty.
    pub fn render(&self, max_effect: Effect) -> String {
        part_text(&self.document(
            max_effect,
            json!({ "seneschal/generated-by": GENERATED_BY }),
        ))
    }

    /// The `tools/list` result of a profile as the initialize era sends it: [`Tools::render`],
    /// compact.
    pub fn legacy_wire(&self, max_effect: Effect) -> String {
        let doc = self.document(
            max_effect,
            json!({ "seneschal/generated-by": GENERATED_BY }),
        );
        serde_json::to_string(&doc).expect("JSON parts serialize")
    }

    /// The `tools/list` result of a profile as MCP 2026-07-28 sends it: `resultType` and the
    /// cache hints first, then the same members with the server (`version`) in `_meta`.
    pub fn modern_wire(&self, max_effect: Effect, version: &str) -> String {
        let doc = self.document(
            max_effect,
            json!({
                "seneschal/generated-by": GENERATED_BY,
                META_SERVER_INFO: {"name": SERVER_NAME, "title": SERVER_TITLE, "version": version},
            }),
        );
        let members = serde_json::to_string(&doc).expect("JSON parts serialize");
        format!(
            "{{\"resultType\":\"complete\",\"ttlMs\":{MCP_TTL_STATIC_MS},\"cacheScope\":\"public\",{}",
            &members[1..]
        )
    }

    /// Every file of [`WIRE`] with its bytes.
    pub fn wire(&self, version: &str) -> Vec<(&'static str, String)> {
        WIRE.iter()
            .flat_map(|(effect, [legacy, modern])| {
                [
                    (*legacy, self.legacy_wire(*effect)),
                    (*modern, self.modern_wire(*effect, version)),
                ]
            })
            .collect()
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
