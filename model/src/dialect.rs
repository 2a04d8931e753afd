//! Schema dialects: an input schema as two function-calling APIs accept it, and a call's
//! arguments back in the published schema's terms (ADR 0008).
//!
//! A tool's published input schema is JSON Schema 2020-12 in a portable form (no type lists:
//! `anyOf` branches). Two APIs agents call tools through take less:
//!
//! - **OpenAI strict function calling** (Structured Outputs): every property required,
//!   `additionalProperties: false` on every object, and only the keywords the guide lists
//!   (`pattern`, `format`; `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`; `minItems`, `maxItems`; `enum`, `const`, `anyOf`, `$defs`, `$ref`). An
//!   optional property becomes a required one that also takes `null`.
//! - **Gemini function declarations** (`parameters`, "a select subset of an OpenAPI 3.0 schema
//!   object"): the `Schema` fields `type` (a `Type` name), `format`, `title`,
//!   `description`, `nullable`, `enum` (of strings), `maxItems`, `minItems`, `properties`,
//!   `required`, `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//!   `example`, `anyOf`, `propertyOrdering`, `default`, `items`, `minimum`, `maximum`; no
//!   `additionalProperties`, and an `OBJECT` needs properties.
//!
//! [`Dialect::render`] keeps every bound the dialect can state and writes the others into the
//! description (the server still enforces each one); a free-form object, which neither can
//! state, becomes a string holding its JSON. [`Dialect::arguments`] undoes both on a call: a
//! `null` for an optional property is the property left out, and such a string is parsed.

use serde_json::{Map, Value};

/// A function-calling API's schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI strict function calling (Structured Outputs' subset).
    OpenAi,
    /// Gemini function declarations (`parameters`: an OpenAPI 3.0 `Schema` subset).
    Gemini,
}

/// The keywords of a schema node OpenAI's strict mode accepts.
const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$defs",
    "$ref",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The fields of Gemini's `Schema` object.
const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 2] = [Dialect::OpenAi, Dialect::Gemini];

    /// The dialect's name on the command line (`--schema-dialect`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::Gemini => "gemini",
        }
    }

    /// The dialect of a name.
    pub fn parse(s: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The rendering of a published input schema (an object schema) in this dialect.
    pub fn render(self, schema: &Value) -> Value {
        self.node(schema, true)
    }

    /// One schema node; `required` says whether its property is required (or it is the root or
    /// an item), which in OpenAI's dialect decides whether it also takes `null`.
    fn node(self, schema: &Value, required: bool) -> Value {
        let Some(obj) = schema.as_object() else {
            return schema.clone();
        };
        let mut notes: Vec<String> = Vec::new();
        let mut out = Map::new();
        if free_form(obj) {
            // Neither dialect states an object of any fields: its JSON, as a string.
            out.insert("type".into(), Value::String("string".into()));
            notes.push("a JSON object, as text".into());
            let desc = describe(obj.get("description"), &notes);
            out.insert("description".into(), Value::String(desc));
            return self.finish(out, required);
        }
        for (key, value) in obj {
            let kept = match self {
                Dialect::OpenAi => OPENAI_KEYWORDS.contains(&key.as_str()),
                Dialect::Gemini => GEMINI_FIELDS.contains(&key.as_str()),
            };
            match key.as_str() {
                "description" => {}
                "properties" => {
                    let req = required_names(obj);
                    let props: Map<String, Value> = value
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(name, p)| (name.clone(), self.node(p, req.contains(&name.as_str()))))
                        .collect();
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" => {
                    out.insert(key.clone(), self.node(value, true));
                }
                "anyOf" => {
                    let branches = value.as_array().into_iter().flatten();
                    let branches = branches.map(|b| self.node(b, true)).collect();
                    out.insert(key.clone(), Value::Array(branches));
                }
                "additionalProperties" | "required" => {}
                "enum" if self == Dialect::Gemini && obj.get("type") != Some(&"string".into()) => {
                    notes.push(format!("one of {}", list(value)));
                }
                _ if kept => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {
                    if let Some(note) = bound_note(key, value) {
                        notes.push(note);
                    }
                }
            }
        }
        if obj.get("type") == Some(&Value::String("object".into())) {
            let names: Vec<Value> = obj
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(name, _)| Value::String(name.clone()))
                .collect();
            match self {
                // Every property required; the optional ones also take null.
                Dialect::OpenAi => {
                    out.insert("required".into(), Value::Array(names));
                    out.insert("additionalProperties".into(), Value::Bool(false));
                }
                Dialect::Gemini => {
                    if let Some(r) = obj.get("required") {
                        out.insert("required".into(), r.clone());
                    }
                }
            }
        }
        if obj.contains_key("description") || !notes.is_empty() {
            let desc = describe(obj.get("description"), &notes);
            out.insert("description".into(), Value::String(desc));
        }
        self.finish(out, required)
    }

    /// The last touch of a node: OpenAI's `null` for an optional property. (Type names stay
    /// lower-case: MCP requires `"type": "object"` at the root, and Gemini takes its `Type`
    /// names in either case.)
    fn finish(self, mut out: Map<String, Value>, required: bool) -> Value {
        match self {
            Dialect::OpenAi if !required => {
                if let Some(Value::String(t)) = out.get("type").cloned() {
                    out.insert("type".into(), serde_json::json!([t, "null"]));
                    if let Some(Value::Array(values)) = out.get_mut("enum") {
                        values.push(Value::Null);
                    }
                } else if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
                    branches.push(serde_json::json!({"type": "null"}));
                }
            }
            Dialect::OpenAi | Dialect::Gemini => {}
        }
        Value::Object(out)
    }

    /// A call's arguments, given in this dialect's rendering of `schema`, in the published
    /// schema's terms: a `null` for an optional property is that property left out, and a
    /// free-form object given as its JSON text is that object. A text that is not a JSON object
    /// is an error naming the argument's JSON pointer.
    pub fn arguments(self, schema: &Value, args: Value) -> Result<Value, (String, String)> {
        arguments_at(schema, args, "")
    }
}

fn arguments_at(schema: &Value, args: Value, at: &str) -> Result<Value, (String, String)> {
    let Some(obj) = schema.as_object() else {
        return Ok(args);
    };
    if free_form(obj) {
        return match args {
            Value::String(text) => match serde_json::from_str::<Value>(&text) {
                Ok(v @ Value::Object(_)) => Ok(v),
                _ => Err((
                    at.to_string(),
                    "is not the text of a JSON object".to_string(),
                )),
            },
            other => Ok(other),
        };
    }
    match args {
        Value::Object(map) => {
            let props = obj.get("properties").and_then(Value::as_object);
            let req = required_names(obj);
            let mut out = Map::new();
            for (name, v) in map {
                let here = format!("{at}/{name}");
                match props.and_then(|p| p.get(&name)) {
                    Some(_) if v.is_null() && !req.contains(&name.as_str()) => {}
                    Some(p) => {
                        out.insert(name, arguments_at(p, v, &here)?);
                    }
                    None => {
                        out.insert(name, v);
                    }
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => {
            let item = obj.get("items").unwrap_or(&Value::Null);
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| arguments_at(item, v, &format!("{at}/{i}")))
                .collect::<Result<_, _>>()?;
            Ok(Value::Array(items))
        }
        other => Ok(other),
    }
}

/// An object schema that names no property: any fields.
fn free_form(obj: &Map<String, Value>) -> bool {
    obj.get("type") == Some(&Value::String("object".into())) && !obj.contains_key("properties")
}

fn required_names(obj: &Map<String, Value>) -> Vec<&str> {
    obj.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The sentence a bound the dialect cannot state leaves in the description.
fn bound_note(key: &str, value: &Value) -> Option<String> {
    Some(match key {
        "minLength" if value == &Value::from(1) => "not empty".to_string(),
        "minLength" => format!("at least {value} characters"),
        "maxLength" => format!("at most {value} characters"),
        "minimum" => format!("at least {value}"),
        "maximum" => format!("at most {value}"),
        "exclusiveMinimum" => format!("above {value}"),
        "exclusiveMaximum" => format!("below {value}"),
        "minItems" => format!("at least {value} items"),
        "maxItems" => format!("at most {value} items"),
        "uniqueItems" if value == &Value::Bool(true) => "no item twice".to_string(),
        "pattern" => format!("matching {value}"),
        "default" => format!("default {value}"),
        "const" => format!("always {value}"),
        "multipleOf" => format!("a multiple of {value}"),
        _ => return None,
    })
}

fn list(values: &Value) -> String {
    let items: Vec<String> = values
        .as_array()
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    items.join(", ")
}

/// A description with the notes of the bounds it gained, in parentheses.
fn describe(description: Option<&Value>, notes: &[String]) -> String {
    let base = description.and_then(Value::as_str).unwrap_or_default();
    if notes.is_empty() {
        return base.to_string();
    }
    let notes = notes.join("; ");
    if base.is_empty() {
        format!("({notes})")
    } else {
        format!("{base} ({notes})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_requires_every_property_and_lets_an_optional_one_be_null() {
        let s = json!({"type": "object", "additionalProperties": false, "required": ["path"],
            "properties": {"path": {"type": "string", "minLength": 1},
                           "limit": {"type": "integer", "minimum": 1, "default": 20}}});
        let r = Dialect::OpenAi.render(&s);
        assert_eq!(r["required"], json!(["limit", "path"]));
        assert_eq!(r["additionalProperties"], false);
        assert_eq!(
            r["properties"]["path"],
            json!({"type": "string", "description": "(not empty)"})
        );
        assert_eq!(r["properties"]["limit"]["type"], json!(["integer", "null"]));
        assert_eq!(r["properties"]["limit"]["minimum"], 1);
        assert_eq!(r["properties"]["limit"]["description"], "(default 20)");
        let args = Dialect::OpenAi
            .arguments(&s, json!({"path": "a", "limit": null}))
            .unwrap();
        assert_eq!(args, json!({"path": "a"}));
    }

    #[test]
    fn a_free_form_object_travels_as_its_json_text() {
        let s = json!({"type": "object", "properties": {"fm": {"type": "object", "additionalProperties": true}}});
        for d in Dialect::ALL {
            let r = d.render(&s);
            let t = &r["properties"]["fm"]["type"];
            assert!(t == "string" || t == &json!(["string", "null"]), "{r}");
            let args = d.arguments(&s, json!({"fm": "{\"a\": 1}"})).unwrap();
            assert_eq!(args, json!({"fm": {"a": 1}}));
            let err = d.arguments(&s, json!({"fm": "[1]"})).unwrap_err();
            assert_eq!(err.0, "/fm");
        }
    }
}
