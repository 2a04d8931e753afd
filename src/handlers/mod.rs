//! Handlers: plain typed functions, one module per capability group.
//!
//! The list below is written by hand, so rustfmt, clippy and rust-analyzer see every handler
//! file as the ordinary module it is. The build checks it against the manifests both ways
//! (`codegen/src/project/rust.rs`, `check_handler_modules`): each module a manifest's
//! `handler` names is declared here, each module declared here is named by a manifest, and
//! each file of this folder is declared; a missing line is reported with the line to add. A
//! new capability group is its manifest, its handler file and its line here. A handler takes
//! `&Context` and its generated `Input`, and returns its `Output` or a `CapabilityError`; it
//! never sees a transport.

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
#[path = "../../tests/fixtures/mcp-conformance/handlers/conformance.rs"]
pub mod conformance;
/// The conformance fixtures of the live scenarios (logging, progress, requests to the client).
#[cfg(feature = "conformance-fixtures")]
#[path = "../../tests/fixtures/mcp-conformance/handlers/live.rs"]
pub mod live;

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
