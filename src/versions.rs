//! Names, protocol versions and MCP methods, from the model crate the build shares: see
//! [`seneschal_model::versions`].

pub use seneschal_model::versions::*;
