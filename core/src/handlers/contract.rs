//! Handlers of the `contract.*` group: the contract lock compiled into this binary.

use serde_json::{Map, Value};

use crate::context::Call;
use crate::registry::projections::CONTRACT_LOCK;
use crate::registry::types::contract_digest;
use seneschal_access::error::CapabilityError;

/// `contract.digest`: the digest, the section hashes, and optionally the whole lock.
pub fn digest(
    _ctx: &Call,
    input: contract_digest::Input,
) -> Result<contract_digest::Output, CapabilityError> {
    let bad = |what: &str| CapabilityError::internal(format!("the compiled contract lock {what}"));
    let lock: Map<String, Value> =
        serde_json::from_str(CONTRACT_LOCK).map_err(|e| bad(&format!("does not parse: {e}")))?;
    let text = |key: &str| {
        lock.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(&format!("has no string `{key}`")))
    };
    let (digest, version) = (text("digest")?, text("version")?);
    let capabilities = lock
        .get("capabilities")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(id, entry)| {
            let sections = entry
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(name, section)| {
                    let hash = section.get("sha256")?.as_str()?;
                    Some((name.clone(), hash.to_string()))
                })
                .collect();
            (id.clone(), sections)
        })
        .collect();
    Ok(contract_digest::Output {
        digest,
        version,
        capabilities,
        lock: if input.include_lock == Some(true) {
            lock
        } else {
            Map::new()
        },
    })
}
