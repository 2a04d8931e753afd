//! Query strings bound to a capability's input: `?a=1&b=x&b=y` becomes `{"a": 1, "b": ["x", "y"]}`.
//!
//! Each value is coerced by the property's type in the input schema (integer, number, boolean,
//! array of those, object as JSON text); a value that does not parse is `invalid_input` naming
//! the parameter's JSON pointer. Names the schema does not know stay strings, so the executor's
//! schema check reports them with their pointer.

use serde_json::{Map, Value};

use seneschal_access::error::CapabilityError;

/// Decodes `%XX` escapes and `+` (a space in form encoding); invalid UTF-8 is `invalid_input`.
pub fn percent_decode(s: &str) -> Result<String, CapabilityError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        return Err(CapabilityError::invalid_input(format!(
                            "the query string has a malformed escape near {:?}",
                            // Three characters, not three bytes: a multi-byte character
                            // after `%` must not be split (a worker panic before).
                            s[i..].chars().take(3).collect::<String>()
                        ))
                        .at(""));
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| {
        CapabilityError::invalid_input("the query string is not UTF-8 once decoded").at("")
    })
}

/// The decoded `(name, value)` pairs of a query string, in order.
pub fn pairs(query: &str) -> Result<Vec<(String, String)>, CapabilityError> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((percent_decode(k)?, percent_decode(v)?))
        })
        .collect()
}

fn json_pointer(name: &str) -> String {
    format!("/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// One home for reading a schema's type: the CLI's flag derivation (`json` when untyped).
fn schema_type(schema: &Value) -> &str {
    seneschal_model::flags::type_of(schema)
}

/// Coerces one text value to the JSON the schema expects.
fn coerce(name: &str, text: &str, schema: &Value) -> Result<Value, CapabilityError> {
    let bad = |what: &str| {
        CapabilityError::invalid_input(format!("query parameter `{name}`: {text:?} is not {what}"))
            .at(json_pointer(name))
    };
    match schema_type(schema) {
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| bad("an integer")),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| bad("a number")),
        "boolean" => match text {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(bad("a boolean (true or false)")),
        },
        "object" | "json" => match serde_json::from_str::<Value>(text) {
            Ok(v) if schema_type(schema) == "json" || v.is_object() => Ok(v),
            _ if schema_type(schema) == "json" => Ok(Value::String(text.to_string())),
            _ => Err(bad("a JSON object")),
        },
        _ => Ok(Value::String(text.to_string())),
    }
}

/// Binds the query string to a JSON input for the capability whose input schema is `schema`.
pub fn bind(query: &str, schema: &Value) -> Result<Value, CapabilityError> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut input = Map::new();
    for (name, text) in pairs(query)? {
        let prop = props.and_then(|p| p.get(&name));
        match prop {
            Some(prop) if schema_type(prop) == "array" => {
                let items = prop.get("items").cloned().unwrap_or(Value::Null);
                let v = coerce(&name, &text, &items)?;
                match input
                    .entry(name.clone())
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(a) => a.push(v),
                    _ => unreachable!("array parameters only hold arrays"),
                }
            }
            _ => {
                if input.contains_key(&name) {
                    return Err(CapabilityError::invalid_input(format!(
                        "query parameter `{name}` is given more than once but is not an array"
                    ))
                    .at(json_pointer(&name)));
                }
                let v = match prop {
                    Some(prop) => coerce(&name, &text, prop)?,
                    None => Value::String(text),
                };
                input.insert(name, v);
            }
        }
    }
    Ok(Value::Object(input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "f": {"type": "number"}, "b": {"type": "boolean"},
            "s": {"type": "string"}, "e": {"enum": ["x", "y"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ns": {"type": "array", "items": {"type": "integer"}},
            "opt": {"type": ["integer", "null"]}
        }})
    }

    #[test]
    fn coerces_by_schema_type() {
        let v = bind(
            "n=3&f=1.5&b=true&s=a+b%21&e=x&tags=p&tags=q&ns=1&ns=2&opt=7",
            &schema(),
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"n": 3, "f": 1.5, "b": true, "s": "a b!", "e": "x", "tags": ["p", "q"], "ns": [1, 2], "opt": 7})
        );
    }

    #[test]
    fn a_bad_value_names_its_pointer() {
        let e = bind("n=three", &schema()).unwrap_err();
        assert_eq!(e.code.as_str(), "invalid_input");
        assert_eq!(e.pointer.as_deref(), Some("/n"));
        let e = bind("ns=1&ns=x", &schema()).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/ns"));
        let e = bind("b=yes", &schema()).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/b"));
    }

    #[test]
    fn repeats_and_escapes_are_checked() {
        assert_eq!(
            bind("s=a&s=b", &schema()).unwrap_err().pointer.as_deref(),
            Some("/s")
        );
        assert!(bind("s=%zz", &schema()).is_err());
        assert!(bind("s=%ff", &schema()).is_err());
        assert_eq!(bind("", &schema()).unwrap(), json!({}));
        assert_eq!(bind("other=1", &schema()).unwrap(), json!({"other": "1"}));
    }
}
