//! Toolsets and profiles, from the model crate the build shares: see
//! [`seneschal_model::toolset`].

pub use seneschal_model::toolset::*;
