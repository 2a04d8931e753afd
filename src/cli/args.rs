//! Clap arguments from a capability's flag specs ([`super::flags`]), and the JSON input back
//! from the parsed flags: nothing here is written per capability.

use clap::{builder::PossibleValuesParser, Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use super::flags::{flags, FlagType};
use crate::error::CapabilityError;
use crate::registry::Descriptor;

fn schema(d: &Descriptor) -> Value {
    serde_json::from_str(d.input_schema).expect("compiled input schema parses")
}

/// The subcommand of one capability, with one flag per input property.
pub fn command_for(d: &'static Descriptor, leaf: &'static str) -> Command {
    let mut cmd = Command::new(leaf).about(d.title).long_about(format!(
        "{}\n\nCapability `{}`: effect {}, approval {}.",
        d.description,
        d.id,
        d.effect.as_str(),
        d.approval().as_str()
    ));
    for f in flags(&schema(d)) {
        let mut arg = Arg::new(f.property.clone())
            .long(f.long.clone())
            .required(f.required)
            .help(f.help.clone());
        if f.repeated {
            arg = arg.action(ArgAction::Append);
        }
        arg = match f.ty {
            FlagType::Boolean if !f.repeated => arg
                .num_args(0..=1)
                .default_missing_value("true")
                .require_equals(true)
                .value_parser(clap::value_parser!(bool)),
            FlagType::Boolean => arg.value_parser(clap::value_parser!(bool)),
            FlagType::Integer => arg.value_parser(clap::value_parser!(i64)),
            FlagType::Number => arg.value_parser(clap::value_parser!(f64)),
            FlagType::Text if !f.choices.is_empty() => {
                arg.value_parser(PossibleValuesParser::new(f.choices.clone()))
            }
            FlagType::Text | FlagType::Json => arg,
        };
        cmd = cmd.arg(arg.value_name(f.value_name()));
    }
    cmd
}

/// Builds the JSON input of a capability from its parsed flags.
pub fn input_from(d: &Descriptor, m: &ArgMatches) -> Result<Value, CapabilityError> {
    let mut input = Map::new();
    for f in flags(&schema(d)) {
        let name = f.property.as_str();
        let value = if f.repeated {
            let items: Option<Vec<Value>> = match f.ty {
                FlagType::Boolean => m
                    .get_many::<bool>(name)
                    .map(|vs| vs.map(|b| Value::Bool(*b)).collect()),
                FlagType::Integer => m
                    .get_many::<i64>(name)
                    .map(|vs| vs.map(|n| Value::from(*n)).collect()),
                FlagType::Number => m
                    .get_many::<f64>(name)
                    .map(|vs| vs.map(|n| Value::from(*n)).collect()),
                FlagType::Text => m
                    .get_many::<String>(name)
                    .map(|vs| vs.map(|s| Value::String(s.clone())).collect()),
                FlagType::Json => match m.get_many::<String>(name) {
                    Some(vs) => Some(
                        vs.map(|s| parse_json(&f.long, name, s))
                            .collect::<Result<_, _>>()?,
                    ),
                    None => None,
                },
            };
            items.map(Value::Array)
        } else {
            match f.ty {
                FlagType::Boolean => m.get_one::<bool>(name).map(|b| Value::Bool(*b)),
                FlagType::Integer => m.get_one::<i64>(name).map(|n| Value::from(*n)),
                FlagType::Number => m.get_one::<f64>(name).map(|n| Value::from(*n)),
                FlagType::Text => m.get_one::<String>(name).map(|s| Value::String(s.clone())),
                FlagType::Json => match m.get_one::<String>(name) {
                    Some(s) => Some(parse_json(&f.long, name, s)?),
                    None => None,
                },
            }
        };
        if let Some(v) = value {
            input.insert(name.to_string(), v);
        }
    }
    Ok(Value::Object(input))
}

fn parse_json(long: &str, name: &str, text: &str) -> Result<Value, CapabilityError> {
    serde_json::from_str(text).map_err(|e| {
        CapabilityError::invalid_input(format!("--{long} takes JSON: {e}")).at(format!("/{name}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Class, Determinism, Disclosure, Effect, Stability};
    use crate::registry::Kind;

    const SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"required":["name"],"properties":{
        "name":{"type":"string","description":"A name."},
        "limit":{"type":"integer"},
        "ratio":{"type":"number"},
        "dry_run":{"type":"boolean"},
        "mode":{"type":"string","enum":["fast","slow"]},
        "tags":{"type":"array","items":{"type":"string"}},
        "sizes":{"type":"array","items":{"type":"integer"}},
        "meta":{"type":"object"}}}"#;

    static DEMO: Descriptor = Descriptor {
        id: "demo.flags",
        kind: Kind::Query,
        title: "Flags",
        description: "Every flag type.",
        handler: None,
        class: Class {
            effect: Effect::Read,
            additive: false,
            disclosure: Disclosure::None,
            determinism: Determinism::Input,
            stability: Stability::Stable,
            toolset: crate::toolset::Toolset::Files,
        },
        git_state: false,
        tags: &[],
        errors: &[],
        mcp_tool: None,
        mcp_resource: None,
        http: None,
        cli: &["demo", "flags"],
        review: "",
        input_schema: SCHEMA,
        output_schema: "{}",
        descriptor_json: "{}",
        examples_json: "[]",
        content: None,
        blob: None,
        mime_type: "",
        content_blocks: &[],
        task: None,
        task_asks_first: false,
    };

    fn parse(args: &[&str]) -> Result<Value, String> {
        let cmd = command_for(&DEMO, "flags");
        let m = cmd
            .try_get_matches_from(std::iter::once("flags").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        input_from(&DEMO, &m).map_err(|e| e.to_string())
    }

    #[test]
    fn every_flag_type_parses_into_its_json_type() {
        let v = parse(&[
            "--name",
            "x",
            "--limit",
            "5",
            "--ratio",
            "0.5",
            "--dry-run",
            "--mode",
            "slow",
            "--tags",
            "a",
            "--tags",
            "b",
            "--sizes",
            "1",
            "--sizes",
            "2",
            "--meta",
            r#"{"k": 1}"#,
        ])
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"name": "x", "limit": 5, "ratio": 0.5, "dry_run": true, "mode": "slow",
                "tags": ["a", "b"], "sizes": [1, 2], "meta": {"k": 1}})
        );
        assert_eq!(
            parse(&["--name", "x", "--dry-run=false"]).unwrap(),
            serde_json::json!({"name": "x", "dry_run": false})
        );
        assert_eq!(
            parse(&["--name", "x"]).unwrap(),
            serde_json::json!({"name": "x"})
        );
    }

    #[test]
    fn wrong_types_and_missing_required_flags_are_refused_by_name() {
        assert!(parse(&[]).unwrap_err().contains("--name"));
        assert!(parse(&["--name", "x", "--limit", "five"])
            .unwrap_err()
            .contains("--limit"));
        assert!(parse(&["--name", "x", "--mode", "medium"])
            .unwrap_err()
            .contains("medium"));
        assert!(parse(&["--name", "x", "--sizes", "one"])
            .unwrap_err()
            .contains("--sizes"));
        assert!(parse(&["--name", "x", "--meta", "{nope"])
            .unwrap_err()
            .contains("--meta takes JSON"));
    }
}
