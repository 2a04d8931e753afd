//! seneschal: a repository steward for AI agents and the people beside them.
//!
//! Every capability is declared once, in a YAML manifest under `capabilities/`; `build.rs`
//! (through the `seneschal-codegen` crate) compiles the manifests into the typed dispatch
//! table of [`registry`] and into every projection. This library holds the runtime: the one
//! [`execute`] path, the [`policy`] that derives what a caller may assume, the [`handlers`],
//! and the transports ([`cli`]) that adapt argv, JSON-RPC or HTTP to the executor.
//! See docs/ARCHITECTURE.md for the code map and its invariants.

pub mod cli;
pub mod codes;
pub mod confine;
pub mod conformance;
pub mod context;
pub mod contract;
pub mod display;
pub mod error;
pub mod execute;
pub mod flags;
pub mod gate;
pub mod generate;
pub mod git;
pub mod gitdir;
pub mod gitwrite;
pub mod handlers;
pub mod http;
pub mod interact;
pub mod keep;
pub mod knowledge;
pub mod limits;
pub mod mcp;
pub mod policy;
pub mod redact;
pub mod registry;
pub mod rootfs;
pub mod rules;
pub mod store;
pub mod text;
pub mod toolset;
pub mod transport;
pub mod udiff;
pub mod versions;
