//! seneschal: a repository steward for AI agents and the people beside them.
//!
//! Every capability is declared once, in a YAML manifest under `capabilities/`; `core/build.rs`
//! (through the `seneschal-codegen` crate) compiles the manifests into the typed dispatch
//! table of [`registry`] and into every projection. This package is the command line
//! ([`cli`]); the rest lives in one crate a room, each importing only those below it:
//! `seneschal-model`, `seneschal-access` (repository access), `seneschal-knowledge`,
//! `seneschal-core` (registry, executor, handlers, store, desk), `seneschal-mcp`,
//! `seneschal-http` and `seneschal-devtools`. Their modules are re-exported here under the
//! names they had in one crate. See docs/ARCHITECTURE.md for the code map and its invariants.

pub mod cli;

pub use seneschal_access::{
    confine, display, error, gate, git, gitdir, keep, limits, redact, rootfs, rules, text,
    transport, udiff,
};
pub use seneschal_core::{context, execute, interact, registry, store};
pub use seneschal_devtools::{conformance, contract, generate};
pub use seneschal_http as http;
pub use seneschal_knowledge as knowledge;
pub use seneschal_mcp as mcp;
pub use seneschal_model::{codes, flags, policy, toolset, versions};
