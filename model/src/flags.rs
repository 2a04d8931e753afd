//! The flags a capability's input schema gives its CLI command.
//!
//! One home for the derivation: the runtime CLI builds clap arguments from these specs, and
//! the build-time codegen renders `generated/cli.md` from the same specs.

use serde_json::Value;

/// The value type of a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagType {
    /// `--flag` or `--flag=false`.
    Boolean,
    /// A whole number.
    Integer,
    /// A number.
    Number,
    /// Text, optionally limited to `choices`.
    Text,
    /// A JSON value (objects and untyped properties).
    Json,
}

/// One flag of a capability command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSpec {
    /// The input property.
    pub property: String,
    /// The long flag, without dashes: `dry_run` → `dry-run`.
    pub long: String,
    /// The value type (of each item, for repeatable flags).
    pub ty: FlagType,
    /// Repeatable: the property is an array.
    pub repeated: bool,
    /// Required by the schema.
    pub required: bool,
    /// Allowed values, from an `enum`.
    pub choices: Vec<String>,
    /// The help text: the property's description, with its default.
    pub help: String,
}

impl FlagSpec {
    /// The placeholder shown in usage lines.
    pub fn value_name(&self) -> &'static str {
        match self.ty {
            FlagType::Boolean => "BOOL",
            FlagType::Integer => "INT",
            FlagType::Number => "NUMBER",
            FlagType::Text => "TEXT",
            FlagType::Json => "JSON",
        }
    }

    /// A usage fragment, e.g. `--limit <INT>` or `[--tag <TEXT>]...`.
    pub fn usage(&self) -> String {
        let core = match self.ty {
            FlagType::Boolean => format!("--{}[=<BOOL>]", self.long),
            _ => format!("--{} <{}>", self.long, self.value_name()),
        };
        match (self.required, self.repeated) {
            (true, false) => core,
            (true, true) => format!("{core}..."),
            (false, false) => format!("[{core}]"),
            (false, true) => format!("[{core}]..."),
        }
    }
}

/// The JSON type a schema asks for: its `type` (the first non-null one of a list), `string` for
/// a bare `enum`, or `json` when it names none. Also used by the HTTP query coercion.
pub fn type_of(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ if schema.get("enum").is_some() => "string",
        _ => "json",
    }
}

fn flag_type(t: &str) -> FlagType {
    match t {
        "boolean" => FlagType::Boolean,
        "integer" => FlagType::Integer,
        "number" => FlagType::Number,
        "string" => FlagType::Text,
        _ => FlagType::Json,
    }
}

/// The flags of an input schema, in property order (sorted by name).
pub fn flags(input_schema: &Value) -> Vec<FlagSpec> {
    let required: Vec<&str> = input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let t = type_of(prop);
            let (item, repeated) = if t == "array" {
                (prop.get("items").cloned().unwrap_or(Value::Null), true)
            } else {
                (prop.clone(), false)
            };
            let ty = flag_type(type_of(&item));
            let choices = item
                .get("enum")
                .and_then(Value::as_array)
                .map(|vs| {
                    vs.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let mut help = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string();
            if let Some(default) = prop.get("default") {
                help.push_str(&format!(" [default: {default}]"));
            }
            if repeated {
                help.push_str(" (repeatable)");
            }
            FlagSpec {
                property: name.clone(),
                long: name.replace('_', "-"),
                ty,
                repeated,
                required: required.contains(&name.as_str()),
                choices,
                help: help.trim().to_string(),
            }
        })
        .collect()
}
