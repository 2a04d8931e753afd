//! The flags of a capability command, from the model crate the build shares: see
//! [`seneschal_model::flags`].

pub use seneschal_model::flags::*;
