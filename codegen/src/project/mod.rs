//! Projections: each a pure, deterministic function of the typed registry, one file each.

pub mod cli_reference;
pub mod contract;
pub mod mcp_tools;
pub mod openapi;
pub mod reference;
pub mod rust;
pub mod server_card;

/// The sentence every generated file carries, naming its generator and how to remake it.
pub const GENERATED_BY: &str =
    "seneschal-codegen from capabilities/*.yaml; do not edit by hand: run `cargo build` or `cargo run -- generate`";

/// Pretty JSON with a final newline; keys are sorted because serde_json's map is a BTreeMap.
pub fn json_text(value: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON values serialize");
    s.push('\n');
    s
}
