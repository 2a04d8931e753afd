//! Projections: each a pure, deterministic function of the typed registry, one file each.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::policy::Effect;

pub mod cli_reference;
pub mod cockpit;
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

/// A JSON document assembled from owned values and values borrowed from parts rendered once
/// (a tool, an operation), so that one profile's document costs its serialization only.
/// Serializes exactly as the `Value` it stands for (maps sorted by key, like serde_json's).
pub enum Part<'a> {
    /// An owned value.
    Owned(Value),
    /// A value rendered once and shared by every profile.
    Borrowed(&'a Value),
    /// An object.
    Map(BTreeMap<String, Part<'a>>),
    /// An array.
    List(Vec<Part<'a>>),
}

impl<'a> Part<'a> {
    /// The object `value` (an object) as a map of owned parts, to which borrowed ones are added.
    pub fn object(value: Value) -> BTreeMap<String, Part<'a>> {
        match value {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k, Part::Owned(v))).collect(),
            _ => panic!("Part::object takes an object"),
        }
    }
}

impl Serialize for Part<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Part::Owned(v) => v.serialize(s),
            Part::Borrowed(v) => v.serialize(s),
            Part::Map(m) => m.serialize(s),
            Part::List(l) => l.serialize(s),
        }
    }
}

/// [`json_text`] of a [`Part`]: the same bytes as for the value it stands for.
pub fn part_text(part: &Part) -> String {
    let mut s = serde_json::to_string_pretty(part).expect("JSON parts serialize");
    s.push('\n');
    s
}

/// The effects a process started with `--allow-effects max` executes, weakest first.
pub fn allowed_effects(max: Effect) -> Vec<&'static str> {
    Effect::ALL
        .iter()
        .filter(|e| **e <= max)
        .map(|e| e.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_serializes_as_the_value_it_stands_for() {
        let shared = json!({"b": [1, {"z": null, "a": "x"}], "a": {}});
        let value = json!({"top": [shared.clone(), shared.clone()], "empty": [], "k": 1});
        let mut map = Part::object(json!({"k": 1, "empty": []}));
        map.insert(
            "top".into(),
            Part::List(vec![Part::Borrowed(&shared), Part::Owned(shared.clone())]),
        );
        assert_eq!(part_text(&Part::Map(map)), json_text(&value));
    }
}
