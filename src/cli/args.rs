//! Flags derived from a capability's input schema: nothing here is written per capability.

use clap::{builder::PossibleValuesParser, Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use crate::registry::Descriptor;

/// The flag name of a schema property: `dry_run` → `dry-run`.
pub fn flag_name(property: &str) -> String {
    property.replace('_', "-")
}

fn schema_type(schema: &Value) -> &str {
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

fn enum_values(schema: &Value) -> Option<Vec<String>> {
    schema.get("enum").and_then(Value::as_array).map(|vs| {
        vs.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    })
}

/// The subcommand of one capability, with one flag per input property.
pub fn command_for(d: &'static Descriptor, leaf: &'static str) -> Command {
    let schema: Value = serde_json::from_str(d.input_schema).expect("compiled input schema parses");
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut cmd = Command::new(leaf).about(d.title).long_about(format!(
        "{}\n\nCapability `{}`: effect {}, approval {}.",
        d.description,
        d.id,
        d.effect.as_str(),
        d.approval().as_str()
    ));
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let id: &'static str = Box::leak(name.clone().into_boxed_str());
            let long: &'static str = Box::leak(flag_name(name).into_boxed_str());
            let mut arg = Arg::new(id)
                .long(long)
                .required(required.contains(&name.as_str()));
            let mut help = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if let Some(default) = prop.get("default") {
                help.push_str(&format!(" [default: {default}]"));
            }
            let ty = schema_type(prop);
            arg = match ty {
                "boolean" => arg
                    .num_args(0..=1)
                    .default_missing_value("true")
                    .require_equals(true)
                    .value_parser(clap::value_parser!(bool))
                    .value_name("BOOL"),
                "integer" => arg.value_parser(clap::value_parser!(i64)).value_name("INT"),
                "number" => arg
                    .value_parser(clap::value_parser!(f64))
                    .value_name("NUMBER"),
                "array" => {
                    let items = prop.get("items").cloned().unwrap_or(Value::Null);
                    let arg = arg.action(ArgAction::Append).value_name("VALUE");
                    help.push_str(" (repeatable)");
                    match schema_type(&items) {
                        "integer" => arg.value_parser(clap::value_parser!(i64)),
                        "number" => arg.value_parser(clap::value_parser!(f64)),
                        "boolean" => arg.value_parser(clap::value_parser!(bool)),
                        _ => match enum_values(&items) {
                            Some(vs) => arg.value_parser(PossibleValuesParser::new(vs)),
                            None => arg,
                        },
                    }
                }
                "object" | "json" => arg.value_name("JSON"),
                _ => match enum_values(prop) {
                    Some(vs) => arg.value_parser(PossibleValuesParser::new(vs)),
                    None => arg.value_name("TEXT"),
                },
            };
            cmd = cmd.arg(arg.help(help));
        }
    }
    cmd
}

/// Builds the JSON input of a capability from its parsed flags.
pub fn input_from(d: &Descriptor, m: &ArgMatches) -> Result<Value, crate::error::CapabilityError> {
    let schema: Value = serde_json::from_str(d.input_schema).expect("compiled input schema parses");
    let mut input = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(Value::Object(input));
    };
    for (name, prop) in props {
        let value = match schema_type(prop) {
            "boolean" => m.get_one::<bool>(name).map(|b| Value::Bool(*b)),
            "integer" => m.get_one::<i64>(name).map(|n| Value::from(*n)),
            "number" => m.get_one::<f64>(name).map(|n| Value::from(*n)),
            "array" => {
                let items = prop.get("items").cloned().unwrap_or(Value::Null);
                match schema_type(&items) {
                    "integer" => m
                        .get_many::<i64>(name)
                        .map(|vs| vs.map(|n| Value::from(*n)).collect()),
                    "number" => m
                        .get_many::<f64>(name)
                        .map(|vs| vs.map(|n| Value::from(*n)).collect()),
                    "boolean" => m
                        .get_many::<bool>(name)
                        .map(|vs| vs.map(|b| Value::Bool(*b)).collect()),
                    _ => m
                        .get_many::<String>(name)
                        .map(|vs| vs.map(|s| Value::String(s.clone())).collect()),
                }
            }
            "object" | "json" => match m.get_one::<String>(name) {
                Some(text) => Some(serde_json::from_str(text).map_err(|e| {
                    crate::error::CapabilityError::invalid_input(format!(
                        "--{} takes JSON: {e}",
                        flag_name(name)
                    ))
                    .at(format!("/{name}"))
                })?),
                None => None,
            },
            _ => m.get_one::<String>(name).map(|s| Value::String(s.clone())),
        };
        if let Some(v) = value {
            input.insert(name.clone(), v);
        }
    }
    Ok(Value::Object(input))
}
