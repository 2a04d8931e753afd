//! seneschal's core: the capability [`registry`] compiled from the manifests (by `build.rs`
//! through `seneschal-codegen`), the one [`execute`] path every transport calls, the handlers
//! (private: only the generated dispatch calls them), the write [`store`] with its audit and
//! approval desk, and what a call in flight can do with whoever made it ([`interact`]).
//!
//! Its doors are [`execute::execute_index`] (with [`context::Context`]) and the desk
//! ([`store::desk`], [`interact`]'s decisions); the transports (`seneschal-mcp`,
//! `seneschal-http`, the command line) are crates above it and nothing here names them. Repository access is `seneschal-access`,
//! knowledge `seneschal-knowledge`. See docs/ARCHITECTURE.md.

pub mod context;
pub mod execute;
mod gitwrite;
mod handlers;
pub mod interact;
pub mod parts;
pub mod registry;
pub mod store;
