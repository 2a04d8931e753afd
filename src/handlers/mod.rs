//! Handlers: plain typed functions, one module per capability group.
//!
//! Each file under `src/handlers/` is a module, found by build.rs rather than listed here, so
//! a new capability group needs its manifest and its handler file and nothing else. A
//! handler takes `&Context` and its generated `Input`, and returns its `Output` or a
//! `CapabilityError`; it never sees a transport.

include!(concat!(env!("OUT_DIR"), "/handlers.rs"));

use crate::error::CapabilityError;

/// Converts a JSON answer into a handler's typed output; a mismatch is a fault of seneschal.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, CapabilityError> {
    serde_json::from_value(value).map_err(|e| {
        CapabilityError::internal(format!("handler output does not match its schema: {e}"))
    })
}
