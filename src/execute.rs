//! The one executor: look up → policy → validate → handler → result.
//!
//! **Architecture invariant:** every transport (CLI, MCP, HTTP) calls [`execute`]; nothing
//! else calls a handler, and there is no transport-only branch below this line.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::context::Context;
use crate::error::CapabilityError;
use crate::policy::Stability;
use crate::registry::{self, Descriptor, Kind, CAPABILITIES};

/// How a call arrived; recorded (audit), never passed to a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The command line.
    Cli,
    /// MCP over stdio or Streamable HTTP.
    Mcp,
    /// The HTTP API.
    Http,
    /// The behaviour-conformance harness.
    Conformance,
}

impl Transport {
    /// Its spelling in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Cli => "cli",
            Transport::Mcp => "mcp",
            Transport::Http => "http",
            Transport::Conformance => "conformance",
        }
    }
}

/// Compiled input validators, one per capability, built on first use.
fn validator(
    index: usize,
    schema: &'static str,
) -> Result<&'static jsonschema::Validator, CapabilityError> {
    static VALIDATORS: OnceLock<Vec<OnceLock<Result<jsonschema::Validator, String>>>> =
        OnceLock::new();
    let all = VALIDATORS.get_or_init(|| (0..CAPABILITIES.len()).map(|_| OnceLock::new()).collect());
    let compiled = all[index].get_or_init(|| {
        let schema: Value = serde_json::from_str(schema).map_err(|e| e.to_string())?;
        jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())
    });
    compiled
        .as_ref()
        .map_err(|e| CapabilityError::internal(format!("input schema does not compile: {e}")))
}

/// Checks `input` against the capability's input schema; the first failure names its pointer.
pub fn validate_input(
    index: usize,
    d: &'static Descriptor,
    input: &Value,
) -> Result<(), CapabilityError> {
    let v = validator(index, d.input_schema)?;
    // The common case first: `is_valid` stops at the first failure and builds no error values.
    if v.is_valid(input) {
        return Ok(());
    }
    let mut errors = v.iter_errors(input);
    if let Some(first) = errors.next() {
        let pointer = first.instance_path().as_str().to_string();
        let shown = if pointer.is_empty() {
            "/".to_string()
        } else {
            pointer.clone()
        };
        let mut message = format!("{shown}: {first}");
        let more = errors.count();
        if more > 0 {
            message.push_str(&format!(" (and {more} more)"));
        }
        return Err(CapabilityError::invalid_input(message).at(pointer));
    }
    Ok(())
}

/// Executes the capability `id` with `input`.
pub fn execute(
    ctx: &Context,
    id: &str,
    input: Value,
    transport: Transport,
) -> Result<Value, CapabilityError> {
    let (index, _) = registry::find(id)
        .ok_or_else(|| CapabilityError::not_found(format!("no capability has the id `{id}`")))?;
    execute_index(ctx, index, input, transport)
}

/// Executes the capability at `index` of the table.
pub fn execute_index(
    ctx: &Context,
    index: usize,
    input: Value,
    transport: Transport,
) -> Result<Value, CapabilityError> {
    let d = &CAPABILITIES[index];
    if d.stability == Stability::Planned {
        return Err(CapabilityError::unsupported(format!(
            "`{}` is planned: listed, not executable yet",
            d.id
        )));
    }
    // The transport reaches the store's audit through a per-call thread-local; handlers
    // never see it.
    let _scope = crate::store::TransportScope::enter(transport);
    // A write attempt refused here leaves its audit record, as one refused by the schema (a
    // process whose profile forbids writes records into an existing state folder only).
    let writer = ctx.max_effect >= crate::policy::Effect::RepositoryWrite;
    let refuse = |e: CapabilityError| {
        if d.effect == crate::policy::Effect::RepositoryWrite {
            crate::store::audit_rejected(&ctx.repo, d.id, &input, &e, writer);
        }
        Err(e)
    };
    if d.effect > ctx.max_effect {
        return refuse(CapabilityError::refused(format!(
            "`{}` has effect {}, above this process's profile (--allow-effects {})",
            d.id,
            d.effect.as_str(),
            ctx.max_effect.as_str()
        )));
    }
    if !input.is_object() {
        return refuse(CapabilityError::invalid_input("the input must be a JSON object").at(""));
    }
    if let Err(e) = validate_input(index, d, &input) {
        if d.effect == crate::policy::Effect::RepositoryWrite {
            crate::store::audit_rejected(&ctx.repo, d.id, &input, &e, writer);
        }
        return Err(e);
    }
    let output = match d.kind {
        Kind::Resource => json!({
            "uri": d.mcp_resource.unwrap_or(d.id),
            "mimeType": d.mime_type,
            "text": d.content.unwrap_or_default(),
        }),
        Kind::Query => {
            match catch_unwind(AssertUnwindSafe(|| registry::dispatch(index, ctx, input))) {
                Ok(result) => result?,
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a handler panicked".into());
                    return Err(CapabilityError::internal(format!(
                        "`{}` failed: {why}",
                        d.id
                    )));
                }
            }
        }
    };
    #[cfg(debug_assertions)]
    check_output(d, &output)?;
    Ok(output)
}

/// In debug builds (and so in every test), an answer that breaks its own output schema is a
/// fault, not a success: the schema the surfaces publish must be true.
#[cfg(debug_assertions)]
fn check_output(d: &Descriptor, output: &Value) -> Result<(), CapabilityError> {
    let schema: Value =
        serde_json::from_str(d.output_schema).expect("compiled output schema parses");
    let v = jsonschema::draft202012::new(&schema).expect("compiled output schema compiles");
    if let Some(e) = v.iter_errors(output).next() {
        return Err(CapabilityError::internal(format!(
            "`{}` answered outside its output schema at {}: {e}",
            d.id,
            e.instance_path().as_str()
        )));
    }
    Ok(())
}
