//! `CapabilityError`: the one error every handler and the executor return.
//!
//! It carries a stable [`ErrorCode`]; each transport maps the code (HTTP status, MCP
//! `_meta["seneschal/error"]`, CLI exit code) and never inspects the message.

use std::fmt;

use serde_json::Value;

pub use seneschal_model::codes::{ErrorCode, EXIT_STALE};

/// A refusal or fault with a stable code, a message for people, and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct CapabilityError {
    /// The stable one-word code.
    pub code: ErrorCode,
    /// A sentence for people; never parsed by a client.
    pub message: String,
    /// JSON pointer of the failing input field, for `invalid_input`.
    pub pointer: Option<String>,
    /// Machine-readable details (for example the current digest of a `conflict`).
    pub data: Option<Value>,
}

impl CapabilityError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CapabilityError {
            code,
            message: message.into(),
            pointer: None,
            data: None,
        }
    }

    /// `invalid_input`.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// `refused`.
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Refused, message)
    }

    /// `conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// `unsupported`.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unsupported, message)
    }

    /// `internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// Adds the JSON pointer of the failing field.
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Adds machine-readable details.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error as a JSON object: `{code, message, pointer?, data?}`.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({"code": self.code.as_str(), "message": self.message});
        if let Some(p) = &self.pointer {
            v["pointer"] = Value::String(p.clone());
        }
        if let Some(d) = &self.data {
            v["data"] = d.clone();
        }
        v
    }
}

impl fmt::Display for CapabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)?;
        if let Some(p) = &self.pointer {
            write!(f, " (at {p})")?;
        }
        Ok(())
    }
}

impl std::error::Error for CapabilityError {}
