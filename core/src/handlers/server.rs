//! Handlers of the `server.*` group: this process describing itself.

use super::same_variants;
use crate::context::Call;
use crate::interact::ApprovalPolicy;
use crate::registry::types::server_status;
use crate::registry::CAPABILITIES;
use seneschal_access::error::CapabilityError;
use seneschal_model::policy::{Effect, Stability};

/// `server.status`: version, pid, uptime, repository, profile and capability counts.
pub fn status(
    ctx: &Call,
    _input: server_status::Input,
) -> Result<server_status::Output, CapabilityError> {
    let count = |f: &dyn Fn(&crate::registry::Descriptor) -> bool| {
        CAPABILITIES.iter().filter(|d| f(d)).count() as u64
    };
    let allowed = Effect::ALL
        .iter()
        .filter(|e| **e <= ctx.max_effect)
        .map(|e| (*e).into())
        .collect();
    Ok(server_status::Output {
        name: seneschal_model::versions::SERVER_NAME.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        pid: u64::from(std::process::id()),
        uptime_ms: u64::try_from(ctx.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        repository: ctx.repo.to_string_lossy().into_owned(),
        allowed_effects: allowed,
        approval: match ctx.approval {
            ApprovalPolicy::Ask => server_status::OutputApproval::Ask,
            ApprovalPolicy::TrustClient => server_status::OutputApproval::TrustClient,
            ApprovalPolicy::Deny => server_status::OutputApproval::Deny,
        },
        capabilities: server_status::OutputCapabilities {
            total: count(&|_| true),
            executable: count(&|d| d.executable()),
            planned: count(&|d| d.stability == Stability::Planned),
            read: count(&|d| d.effect == Effect::Read),
            process_state: count(&|d| d.effect == Effect::ProcessState),
            repository_write: count(&|d| d.effect == Effect::RepositoryWrite),
        },
    })
}

same_variants!(Effect => server_status::OutputAllowedEffectsItem { Read, ProcessState, RepositoryWrite });
