//! Logging: `logging/setLevel` (initialize era) sets the least severe level of the log
//! messages (`notifications/message`) the connection receives; calls send them through
//! `seneschal_core::interact::log`, which drops those below the level, and sends none before the
//! client asks for a level.

use serde_json::{json, Value};

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::model::{Body, EmptyResult, RpcError};
use seneschal_core::interact::LogLevel;

/// Log messages about calls, at the level the client sets.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "logging",
        value: |_| json!({}),
    }),
    methods: &[Method {
        name: "logging/setLevel",
        answer: set_level,
    }],
    notifications: &[],
};

fn set_level(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let level = call
        .params
        .get("level")
        .and_then(Value::as_str)
        .and_then(LogLevel::parse)
        .ok_or_else(|| {
            let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
            RpcError::invalid_params(format!(
                "invalid params: `logging/setLevel` needs `params.level`, one of {}",
                names.join(", ")
            ))
        })?;
    call.session.log_level = Some(level);
    Ok(Body::of(&EmptyResult {}))
}

/// Logs a failed tool call to the client (when it asked for log messages): an internal
/// failure at `error`, any other refusal or failure at `warning`.
pub fn call_failed(
    peer: &dyn seneschal_core::interact::Peer,
    tool: &str,
    e: &seneschal_access::error::CapabilityError,
) {
    let level = if e.code == seneschal_access::error::ErrorCode::Internal {
        LogLevel::Error
    } else {
        LogLevel::Warning
    };
    peer.log(
        level,
        json!({"tool": tool, "code": e.code.as_str(), "message": e.message}),
    );
}
