//! Handlers of the `contract.*` group: the contract lock compiled into this binary.

use serde_json::{json, Map, Value};

use super::typed;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::projections::CONTRACT_LOCK;
use crate::registry::types::contract_digest;

/// `contract.digest`: the digest, the section hashes, and optionally the whole lock.
pub fn digest(
    _ctx: &Context,
    input: contract_digest::Input,
) -> Result<contract_digest::Output, CapabilityError> {
    let lock: Value = serde_json::from_str(CONTRACT_LOCK).map_err(|e| {
        CapabilityError::internal(format!("the compiled contract lock does not parse: {e}"))
    })?;
    let mut capabilities = Map::new();
    for (id, entry) in lock["capabilities"].as_object().into_iter().flatten() {
        let mut sections = Map::new();
        for (name, section) in entry.as_object().into_iter().flatten() {
            if let Some(hash) = section.get("sha256") {
                sections.insert(name.clone(), hash.clone());
            }
        }
        capabilities.insert(id.clone(), Value::Object(sections));
    }
    let mut out = json!({
        "digest": lock["digest"],
        "version": lock["version"],
        "capabilities": capabilities,
    });
    if input.include_lock == Some(true) {
        out["lock"] = lock;
    }
    typed(out)
}
