//! `generated/server-card.json`: the MCP server card (SEP-2127 shape), from the registry, and
//! the narrower cards of `--allow-effects read` and `process_state` (OUT_DIR only).

use serde_json::{json, Value};

use super::{allowed_effects, mcp_tools::Tools, part_text, Part, Seg, GENERATED_BY};
use crate::model::{Capability, Registry};
use crate::policy::Effect;
use crate::versions::{
    MCP_ALL_VERSIONS, MCP_CAPABILITIES, MCP_HTTP_PATH, SERVER_CARD_NAME, SERVER_NAME,
};

/// The distributed knowledge kinds (`share/kinds.yaml`, the file the binary embeds too).
const KINDS_YAML: &str = include_str!("../../../share/kinds.yaml");

/// The prefix of a knowledge object's URI; a kind's template is `{prefix}{kind}/{id}`.
const KNOWLEDGE_URI_PREFIX: &str = crate::check::KNOWLEDGE_URI_PREFIX;

/// The resource templates every server answers in `resources/templates/list`: one per
/// distributed kind, in name order, shaped like the MCP `ResourceTemplate`. A repository may
/// add kinds of its own (`.seneschal/kinds.yaml`); those are its content, listed at runtime only.
pub fn resource_templates() -> Vec<Value> {
    let doc: Value = serde_yaml::from_str(KINDS_YAML).expect("share/kinds.yaml parses");
    let kinds = doc["kinds"]
        .as_object()
        .expect("share/kinds.yaml maps kind names to kinds");
    let mut out: Vec<Value> = kinds
        .iter()
        .map(|(name, k)| {
            let mime = match k["format"].as_str() {
                Some("yaml") => "application/yaml",
                _ => "text/markdown",
            };
            json!({
                "uriTemplate": format!("{KNOWLEDGE_URI_PREFIX}{name}/{{id}}"),
                "name": name,
                "description": k["description"].as_str().unwrap_or_default().trim(),
                "mimeType": mime,
            })
        })
        .collect();
    out.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    out
}

/// The card of a process started with `--allow-effects max_effect`. It lists only tools and
/// resources that process executes ([`Registry::served`]), so it cannot announce a surface
/// that does not exist or that the process refuses. The digest is the server's, whatever the
/// profile; `_meta["seneschal/allowed-effects"]` says which profile the card describes.
pub fn render_profile(reg: &Registry, digest: &str, tools: &Tools, max_effect: Effect) -> String {
    part_text(&document(reg, digest, tools, max_effect))
}

/// The template of [`render_profile`]: each tool, resource, resource template and count
/// marked with its toolset, so a process of fewer toolsets announces only theirs.
pub fn template(reg: &Registry, digest: &str, tools: &Tools, max_effect: Effect) -> Vec<Seg> {
    let mut segs = super::template(&document(reg, digest, tools, max_effect), true);
    if let Some(Seg::Lit(last)) = segs.last_mut() {
        last.push('\n');
    }
    segs
}

fn document<'t>(reg: &Registry, digest: &str, tools: &'t Tools, max_effect: Effect) -> Part<'t> {
    let select = |c: &Capability, v: Value| Part::Select(c.toolset.bit(), Box::new(Part::Owned(v)));
    let summary: Vec<Part> = tools
        .of(max_effect)
        .map(|(c, t)| {
            let mut s = json!({"name": t["name"], "id": c.id, "effect": c.effect.as_str(), "approval": c.approval().as_str()});
            c.mark_additive(&mut s, "additive");
            select(c, s)
        })
        .collect();
    let resources: Vec<Part> = reg
        .served(max_effect)
        .filter_map(|c| {
            c.expose.mcp_resource.as_ref().map(|u| {
                select(c, json!({"uri": u, "name": c.id, "title": c.title, "description": c.description, "mimeType": if c.content.is_some() { c.mime_type.as_str() } else { "application/json" }}))
            })
        })
        .collect();
    let writers: Vec<Part> = tools
        .of(max_effect)
        .filter(|(c, _)| c.effect == Effect::RepositoryWrite)
        .map(|(c, t)| select(c, t["name"].clone()))
        .collect();
    // The knowledge kinds are the knowledge toolset's.
    let knowledge = crate::toolset::Toolset::Knowledge.bit();
    let templates: Vec<Part> = resource_templates()
        .into_iter()
        .map(|t| Part::Select(knowledge, Box::new(Part::Owned(t))))
        .collect();
    let mut meta = Part::object(json!({
        "seneschal/generated-by": GENERATED_BY,
        "seneschal/digest": digest,
        "seneschal/allowed-effects": allowed_effects(max_effect),
        "seneschal/resource-templates": "resourceTemplates lists the distributed knowledge kinds; resources/templates/list adds the kinds a repository declares in .seneschal/kinds.yaml",
    }));
    meta.insert("seneschal/tools".into(), Part::List(summary));
    meta.insert("seneschal/writers".into(), Part::List(writers));
    meta.insert(
        "seneschal/capabilities".into(),
        Part::Count(reg.within(max_effect).map(|c| c.toolset.bit()).collect()),
    );
    let mut card = Part::object(json!({
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
        "capabilities": serde_json::from_str::<Value>(MCP_CAPABILITIES)
            .expect("MCP_CAPABILITIES is JSON"),
        "prompts": [],
    }));
    card.insert("_meta".into(), Part::Map(meta));
    card.insert("resources".into(), Part::List(resources));
    card.insert("resourceTemplates".into(), Part::List(templates));
    card.insert(
        "tools".into(),
        Part::List(
            tools
                .of(max_effect)
                .map(|(c, t)| Part::Select(c.toolset.bit(), Box::new(Part::Borrowed(t))))
                .collect(),
        ),
    );
    Part::Map(card)
}

/// The card of the full profile (the committed one).
pub fn render(reg: &Registry, digest: &str) -> String {
    render_profile(reg, digest, &Tools::new(reg), Effect::RepositoryWrite)
}
