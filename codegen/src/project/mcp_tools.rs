//! `generated/mcp-tools.json`: exactly the MCP `tools/list` result of every toolset, built at
//! build time, pretty for people; and the templates of the bytes the server sends (OUT_DIR
//! only): compact, one per effect profile and protocol era, each tool marked with its toolset,
//! so that a process sends its own profile's list from pre-derived bytes alone.
//!
//! A tool entry is what an agent pays for in context on every session, so it carries what a
//! client needs to choose and call the tool and no more: the description, the whole input
//! schema, an output schema of the answer's top-level fields (every answer conforms; the full
//! schema is in OpenAPI, the reference and `capabilities_show`) and the annotations that
//! differ from MCP's defaults. What the server's `instructions` say once is not repeated in
//! every entry: the tools of each effect and the approval each deserves (no `_meta` on a tool),
//! and the inputs every write takes alike ([`SHARED_INPUTS`], published without their
//! description). Its size is held to [`TOOL_BUDGET_BYTES`].

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{json_text, part_text, template, Part, Seg, GENERATED_BY};
use crate::model::{Capability, Registry};
use crate::policy::Effect;
use crate::policy::Hints;
use crate::toolset::SHARED_INPUTS;
use crate::versions::{MCP_TTL_STATIC_MS, META_SERVER_INFO, SERVER_NAME, SERVER_TITLE};

/// The most bytes one tool entry may cost in the compact `tools/list` (what the server
/// sends); a manifest over it fails the build, naming what costs most.
pub const TOOL_BUDGET_BYTES: usize = 1900;
/// The most characters a tool's description may have.
pub const DESCRIPTION_BUDGET_CHARS: usize = 300;
/// The stated estimate of a listing's tokens: one token for every four bytes of JSON.
pub const BYTES_PER_TOKEN: usize = 4;

/// One MCP tool entry. Every annotation comes from `ExecutionPolicy::hints(effect)`; the
/// input schema is published in the portable form of [`super::openapi::published_schema`],
/// the output schema as its [`top_level`] fields.
pub fn tool(c: &Capability, tool_name: &str) -> Value {
    let mut tool = json!({
        "name": tool_name,
        "description": c.description,
        "inputSchema": input_schema(c),
        "outputSchema": top_level(&super::openapi::published_schema(&c.output)),
        "annotations": stated_hints(c.hints()),
    });
    if let Some(t) = &c.task {
        tool["execution"] = json!({ "taskSupport": t });
    }
    tool
}

/// The input schema a tool entry carries: the portable form of
/// [`super::openapi::published_schema`], with every bound, less the descriptions of the
/// [`SHARED_INPUTS`], which the server's `instructions` give once.
fn input_schema(c: &Capability) -> Value {
    let mut schema = super::openapi::published_schema(&c.input);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, _) in SHARED_INPUTS {
            if let Some(p) = props.get_mut(name).and_then(Value::as_object_mut) {
                p.remove("description");
            }
        }
    }
    schema
}

/// The annotations a tool entry carries: the hints that differ from what MCP tells a client
/// to assume ([`Hints::stated`]); a client that applies MCP's defaults reads the policy's.
pub fn stated_hints(h: Hints) -> Value {
    Value::Object(
        h.stated()
            .into_iter()
            .map(|(name, v)| (name.to_string(), Value::Bool(v)))
            .collect(),
    )
}

/// The output schema a tool entry carries: the object's top-level fields with their types and
/// which are required. Every answer that validates against `schema` validates against it.
pub fn top_level(schema: &Value) -> Value {
    let Some(props) = schema["properties"].as_object() else {
        return schema.clone();
    };
    let fields: serde_json::Map<String, Value> = props
        .iter()
        .map(|(name, p)| {
            // The portable form of `published_schema`: a union is one branch per type, an
            // object whose fields are not listed says it is free-form (the MCP Inspector's
            // portability rule, and single-type dialects, read no type list).
            let shallow = |b: &Value| match b.get("type") {
                Some(t) if t == "object" => {
                    Some(json!({"type": "object", "additionalProperties": true}))
                }
                Some(t) => Some(json!({ "type": t })),
                None => None,
            };
            let field = match p["anyOf"].as_array() {
                Some(branches) if p.get("type").is_none() => {
                    let types: Option<Vec<Value>> = branches.iter().map(shallow).collect();
                    types.map_or_else(|| json!({}), |t| json!({ "anyOf": t }))
                }
                _ => shallow(p).unwrap_or_else(|| json!({})),
            };
            (name.clone(), field)
        })
        .collect();
    let mut out = json!({"type": "object", "properties": fields});
    if let Some(required) = schema.get("required") {
        out["required"] = required.clone();
    }
    out
}

/// The compact bytes of a tool entry: what it costs in the listing the server sends.
pub fn cost(tool: &Value) -> usize {
    serde_json::to_string(tool)
        .expect("JSON values serialize")
        .len()
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
                    .map(|(c, t)| Part::Select(c.toolset.bit(), Box::new(Part::Borrowed(t))))
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

    /// The template of the `tools/list` result of a profile as the initialize era sends it:
    /// [`Tools::render`], compact.
    pub fn legacy_wire(&self, max_effect: Effect) -> Vec<Seg> {
        let doc = self.document(
            max_effect,
            json!({ "seneschal/generated-by": GENERATED_BY }),
        );
        template(&doc, false)
    }

    /// The template of the `tools/list` result of a profile as MCP 2026-07-28 sends it:
    /// `resultType` and the cache hints first, then the same members with the server
    /// (`version`) in `_meta`.
    pub fn modern_wire(&self, max_effect: Effect, version: &str) -> Vec<Seg> {
        let doc = self.document(
            max_effect,
            json!({
                "seneschal/generated-by": GENERATED_BY,
                META_SERVER_INFO: {"name": SERVER_NAME, "title": SERVER_TITLE, "version": version},
            }),
        );
        let mut segs = template(&doc, false);
        match segs.first_mut() {
            Some(Seg::Lit(first)) if first.starts_with('{') => {
                *first = format!(
                    "{{\"resultType\":\"complete\",\"ttlMs\":{MCP_TTL_STATIC_MS},\"cacheScope\":\"public\",{}",
                    &first[1..]
                );
            }
            _ => unreachable!("a tools/list result opens with its _meta"),
        }
        segs
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
