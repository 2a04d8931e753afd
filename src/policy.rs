//! The execution policy, from the model crate the build shares: see [`seneschal_model::policy`].

pub use seneschal_model::policy::*;
