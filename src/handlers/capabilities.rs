//! Handlers of the `capabilities.*` group: the registry describing itself.

use serde_json::{json, Value};

use super::typed;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::types::{capabilities_list, capabilities_projections, capabilities_show};
use crate::registry::{Descriptor, CAPABILITIES};

fn route(d: &Descriptor) -> Value {
    d.http
        .map(|h| json!(format!("{} {}", h.method, h.path)))
        .unwrap_or(Value::Null)
}

fn cli_path(d: &Descriptor) -> Value {
    if d.cli.is_empty() {
        Value::Null
    } else {
        json!(d.cli.join(" "))
    }
}

/// `capabilities.list`: every capability, filtered by tag, effect or stability; executable
/// when this process executes it (a narrowed process lists what it refuses as not executable).
pub fn list(
    ctx: &Context,
    input: capabilities_list::Input,
) -> Result<capabilities_list::Output, CapabilityError> {
    let items: Vec<Value> = CAPABILITIES
        .iter()
        .filter(|d| input.tag.as_ref().is_none_or(|t| d.tags.contains(&t.as_str())))
        .filter(|d| input.effect.is_none_or(|e| e.to_string() == d.effect.as_str()))
        .filter(|d| input.stability.is_none_or(|s| s.to_string() == d.stability.as_str()))
        .map(|d| {
            json!({
                "id": d.id,
                "title": d.title,
                "kind": match d.kind { crate::registry::Kind::Query => "query", crate::registry::Kind::Resource => "resource" },
                "effect": d.effect.as_str(),
                "stability": d.stability.as_str(),
                "executable": d.served_by(ctx.max_effect),
                "tags": d.tags,
                "mcp_tool": d.mcp_tool,
                "http": route(d),
                "cli": cli_path(d),
            })
        })
        .collect();
    typed(json!({ "capabilities": items }))
}

/// `capabilities.show`: the whole descriptor of one capability.
pub fn show(
    _ctx: &Context,
    input: capabilities_show::Input,
) -> Result<capabilities_show::Output, CapabilityError> {
    let (_, d) = crate::registry::find(&input.id).ok_or_else(|| {
        CapabilityError::not_found(format!("no capability has the id `{}`", input.id)).at("/id")
    })?;
    let descriptor: Value = serde_json::from_str(d.descriptor_json).map_err(|e| {
        CapabilityError::internal(format!("compiled descriptor does not parse: {e}"))
    })?;
    typed(descriptor)
}

/// `capabilities.projections`: where each interface exposes each capability; executable when
/// this process executes it.
pub fn projections(
    ctx: &Context,
    _input: capabilities_projections::Input,
) -> Result<capabilities_projections::Output, CapabilityError> {
    let items: Vec<Value> = CAPABILITIES
        .iter()
        .map(|d| {
            let h = d.hints();
            json!({
                "id": d.id,
                "executable": d.served_by(ctx.max_effect),
                "effect": d.effect.as_str(),
                "approval": d.approval().as_str(),
                "readOnlyHint": h.read_only,
                "destructiveHint": h.destructive,
                "idempotentHint": h.idempotent,
                "openWorldHint": h.open_world,
                "mcp_tool": d.mcp_tool,
                "mcp_resource": d.mcp_resource,
                "http": route(d),
                "cli": cli_path(d),
            })
        })
        .collect();
    typed(json!({ "capabilities": items }))
}
