//! Handlers: plain typed functions, one module per capability group.
//!
//! The list below is written by hand, so rustfmt, clippy and rust-analyzer see every handler
//! file as the ordinary module it is. The build checks it against the manifests both ways
//! (`codegen/src/project/rust.rs`, `check_handler_modules`): each module a manifest's
//! `handler` names is declared here, each module declared here is named by a manifest, and
//! each file of this folder is declared; a missing line is reported with the line to add. A
//! new capability group is its manifest, its handler file and its line here. A handler takes
//! `&Call` (the process's context with the call's metadata, [`crate::context::Call`]) and its
//! generated `Input`, and returns its `Output` or a `CapabilityError`; it reaches its caller
//! only through the call's peer, and never names a transport.

pub mod capabilities;
pub mod contract;
pub mod edit;
pub mod files;
pub mod gitwrite;
pub mod history;
pub mod knowledge;
pub mod listing;
pub mod mcp;
pub mod repo;
pub mod server;
pub mod session;
pub mod wire;
pub mod writes;

/// The handlers of the MCP conformance suite's fixture capabilities (the
/// `conformance-fixtures` feature adds their manifests to the registry).
#[cfg(feature = "conformance-fixtures")]
#[path = "fixtures/conformance.rs"]
pub mod conformance;
/// The conformance fixtures of the live scenarios (logging, progress, requests to the client).
#[cfg(feature = "conformance-fixtures")]
#[path = "fixtures/live.rs"]
pub mod live;

/// A planned write's answer, the one way every writer runs: with `dry_run`, the answer of
/// `prepare(true)` (nothing locked, nothing written); while the executor's approval gate plans
/// the call ([`crate::context::Call::is_planning`]), the plan of `prepare(false)` (or the
/// answer its idempotency key already holds) handed to the gate, which shows it and applies
/// that very plan ([`crate::store::apply_planned`]); otherwise `prepare(false)` runs under the lock and
/// its plan is applied through [`crate::store::transact`]. The stored answer (JSON, so that an
/// idempotency key can replay it) is read back into the output type.
pub(crate) fn plan_or_apply<T: serde::Serialize + serde::de::DeserializeOwned>(
    ctx: &crate::context::Call,
    id: &str,
    raw: &serde_json::Value,
    dry_run: bool,
    prepare: impl Fn(bool) -> Result<crate::store::Plan<T>, seneschal_access::error::CapabilityError>,
) -> Result<T, seneschal_access::error::CapabilityError> {
    use seneschal_access::error::CapabilityError;
    if dry_run {
        return Ok(prepare(true)?.answer);
    }
    let encode = |p: crate::store::Plan<T>| -> Result<crate::store::Plan, CapabilityError> {
        let answer = serde_json::to_value(p.answer).map_err(|e| {
            CapabilityError::internal(format!("the answer of `{id}` does not encode: {e}"))
        })?;
        Ok(crate::store::Plan {
            writes: p.writes,
            modes: p.modes,
            effects: p.effects,
            answer,
        })
    };
    if ctx.is_planning() {
        use crate::store::{Captured, Planned};
        if let Some(answer) = crate::store::replayed(&ctx.repo, ctx.record(), id, raw)? {
            return Err(ctx.hand_over(Captured::Replay(answer)));
        }
        // Planned under the lock, as `transact` plans: the bytes `prepare` judged and the
        // digests the plan records are of one moment no other writer of the repository can
        // fall between (a write applied in between would otherwise be overwritten).
        let locked = crate::store::lock(&ctx.repo)?;
        let planned = Planned::new(&ctx.repo, raw, encode(prepare(false)?)?)?;
        drop(locked);
        return Err(ctx.hand_over(Captured::Plan(planned)));
    }
    let stored = crate::store::transact(&ctx.repo, ctx.record(), id, raw, |_locked| {
        encode(prepare(false)?)
    })?;
    serde_json::from_value(stored).map_err(|e| {
        CapabilityError::internal(format!(
            "the stored answer of `{id}` does not match its output type: {e}"
        ))
    })
}

/// Maps an enum of the policy model onto a generated output enum with the same variants, by
/// name and exhaustively: a variant of the model that the output schema lacks is a compile
/// error, as is a generated enum whose variants changed.
macro_rules! same_variants {
    ($from:ty => $to:ty { $($v:ident),+ $(,)? }) => {
        impl From<$from> for $to {
            fn from(value: $from) -> Self {
                type From_ = $from;
                type To_ = $to;
                match value {
                    $(From_::$v => To_::$v,)+
                }
            }
        }
    };
}
pub(crate) use same_variants;
