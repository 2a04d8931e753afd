//! The stable error codes, from the model crate the build shares: see [`seneschal_model::codes`].

pub use seneschal_model::codes::*;
