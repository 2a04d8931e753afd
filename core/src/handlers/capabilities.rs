//! Handlers of the `capabilities.*` group: the registry describing itself.

use super::same_variants;
use crate::context::Call;
use crate::registry::types::{capabilities_list, capabilities_projections, capabilities_show};
use crate::registry::{Descriptor, Kind, CAPABILITIES};
use seneschal_access::error::CapabilityError;
use seneschal_model::policy::{Approval, Effect, Stability};

fn route(d: &Descriptor) -> Option<String> {
    d.http.map(|h| format!("{} {}", h.method, h.path))
}

fn cli_path(d: &Descriptor) -> Option<String> {
    (!d.cli.is_empty()).then(|| d.cli.join(" "))
}

/// `capabilities.list`: every capability, filtered by tag, effect or stability; executable
/// when this process executes it (a narrowed process lists what it refuses as not executable).
pub fn list(
    ctx: &Call,
    input: capabilities_list::Input,
) -> Result<capabilities_list::Output, CapabilityError> {
    let capabilities = CAPABILITIES
        .iter()
        .filter(|d| {
            input
                .tag
                .as_ref()
                .is_none_or(|t| d.tags.contains(&t.as_str()))
        })
        .filter(|d| {
            input
                .effect
                .is_none_or(|e| e.to_string() == d.effect.as_str())
        })
        .filter(|d| {
            input
                .stability
                .is_none_or(|s| s.to_string() == d.stability.as_str())
        })
        .map(|d| capabilities_list::OutputCapabilitiesItem {
            id: d.id.to_string(),
            title: d.title.to_string(),
            kind: d.kind.into(),
            effect: d.effect.into(),
            stability: d.stability.into(),
            executable: ctx.profile().serves(d),
            tags: d.tags.iter().map(|t| t.to_string()).collect(),
            mcp_tool: d.mcp_tool.map(str::to_string),
            http: route(d),
            cli: cli_path(d),
        })
        .collect();
    Ok(capabilities_list::Output { capabilities })
}

same_variants!(Kind => capabilities_list::OutputCapabilitiesItemKind { Query, Resource });
same_variants!(Effect => capabilities_list::OutputCapabilitiesItemEffect { Read, ProcessState, RepositoryWrite });
same_variants!(Stability => capabilities_list::OutputCapabilitiesItemStability { Stable, Experimental, Planned });

/// `capabilities.show`: the whole descriptor of one capability, read from the descriptor
/// compiled into the binary (the one the projections publish) straight into its type.
pub fn show(
    _ctx: &Call,
    input: capabilities_show::Input,
) -> Result<capabilities_show::Output, CapabilityError> {
    let (_, d) = crate::registry::find(&input.id).ok_or_else(|| {
        CapabilityError::not_found(format!("no capability has the id `{}`", input.id)).at("/id")
    })?;
    serde_json::from_str(d.descriptor_json).map_err(|e| {
        CapabilityError::internal(format!(
            "compiled descriptor does not match its output type: {e}"
        ))
    })
}

/// `capabilities.projections`: where each interface exposes each capability; executable when
/// this process executes it.
pub fn projections(
    ctx: &Call,
    _input: capabilities_projections::Input,
) -> Result<capabilities_projections::Output, CapabilityError> {
    let capabilities = CAPABILITIES
        .iter()
        .map(|d| {
            let h = d.hints();
            capabilities_projections::OutputCapabilitiesItem {
                id: d.id.to_string(),
                executable: ctx.profile().serves(d),
                effect: d.effect.into(),
                approval: d.approval().into(),
                read_only_hint: h.read_only,
                destructive_hint: h.destructive,
                idempotent_hint: h.idempotent,
                open_world_hint: h.open_world,
                mcp_tool: d.mcp_tool.map(str::to_string),
                mcp_resource: d.mcp_resource.map(str::to_string),
                http: route(d),
                cli: cli_path(d),
            }
        })
        .collect();
    Ok(capabilities_projections::Output { capabilities })
}

same_variants!(Effect => capabilities_projections::OutputCapabilitiesItemEffect { Read, ProcessState, RepositoryWrite });
same_variants!(Approval => capabilities_projections::OutputCapabilitiesItemApproval { None, Session, PerCall });

#[cfg(test)]
mod tests {
    use super::*;

    /// `capabilities.show` answers the compiled descriptor read into its output type: every
    /// descriptor of the registry must read (a policy value its schema lacks would not).
    #[test]
    fn every_compiled_descriptor_is_a_capabilities_show_answer() {
        let process = crate::context::Context::new(std::env::temp_dir(), Effect::Read);
        let ctx = Call::unasked(&process, seneschal_access::transport::Transport::Cli);
        for d in CAPABILITIES.iter() {
            let input = capabilities_show::Input {
                id: d.id.to_string(),
            };
            if let Err(e) = show(&ctx, input) {
                panic!("{}: {}", d.id, e.message);
            }
        }
    }

    /// `same_variants!` maps by variant name; the answer must keep the policy's spelling.
    #[test]
    fn mapped_enums_are_spelled_as_the_policy_spells_them() {
        let spelled = |v: serde_json::Value| v.as_str().expect("a string").to_string();
        for e in Effect::ALL {
            let out = capabilities_list::OutputCapabilitiesItemEffect::from(e);
            assert_eq!(spelled(serde_json::to_value(out).unwrap()), e.as_str());
            let out = capabilities_projections::OutputCapabilitiesItemEffect::from(e);
            assert_eq!(spelled(serde_json::to_value(out).unwrap()), e.as_str());
        }
        for s in [
            Stability::Stable,
            Stability::Experimental,
            Stability::Planned,
        ] {
            let out = capabilities_list::OutputCapabilitiesItemStability::from(s);
            assert_eq!(spelled(serde_json::to_value(out).unwrap()), s.as_str());
        }
        for a in [Approval::None, Approval::Session, Approval::PerCall] {
            let out = capabilities_projections::OutputCapabilitiesItemApproval::from(a);
            assert_eq!(spelled(serde_json::to_value(out).unwrap()), a.as_str());
        }
        for (k, word) in [(Kind::Query, "query"), (Kind::Resource, "resource")] {
            let out = capabilities_list::OutputCapabilitiesItemKind::from(k);
            assert_eq!(spelled(serde_json::to_value(out).unwrap()), word);
        }
    }
}
