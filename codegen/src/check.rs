//! The registry invariants of DESIGN §1, checked at build time.
//!
//! Each violation is a [`Diagnostic`] that names both manifests and the clashing value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::load::Diagnostic;
use crate::model::{Capability, Kind};
use crate::policy::{Effect, Stability};

/// Command paths that belong to seneschal itself, not to a capability. A capability path may
/// neither start with one nor be a prefix of one; it may live beside them in a group
/// (`contract digest` next to `contract diff`).
pub const RESERVED_CLI: &[&[&str]] = &[
    &["audit"],
    &["call"],
    &["completions"],
    &["conformance"],
    &["contract", "check"],
    &["contract", "diff"],
    &["contract", "release"],
    &["generate"],
    &["help"],
    &["man"],
    &["mcp"],
    &["serve"],
];

/// The URI prefix of runtime knowledge objects; no built-in resource may take it.
pub const KNOWLEDGE_URI_PREFIX: &str = "seneschal://knowledge/";

/// Checks every cross-manifest invariant. `handlers_dirs` are `src/handlers` (and, with the
/// conformance fixtures, their `handlers/`), whose files are parsed to prove that each named
/// handler exists (none: the check is skipped); `repo_root` resolves resource content.
pub fn check_registry(
    caps: &[Capability],
    handlers_dirs: &[PathBuf],
    repo_root: &Path,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let file = |c: &Capability| c.source.to_string_lossy().replace('\\', "/");
    let mut unique =
        |what: &str, key: String, c: &Capability, seen: &mut BTreeMap<String, String>| {
            if let Some(other) = seen.get(&key) {
                diags.push(Diagnostic {
                    file: file(c),
                    line: None,
                    pointer: String::new(),
                    message: format!("duplicate {what} `{key}`: also declared by {other}"),
                });
            } else {
                seen.insert(key, format!("{} ({})", file(c), c.id));
            }
        };
    let (mut ids, mut tools, mut uris, mut routes, mut clis) = (
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
    );
    for c in caps {
        unique("capability id", c.id.clone(), c, &mut ids);
        if let Some(t) = &c.expose.mcp_tool {
            unique("MCP tool name", t.clone(), c, &mut tools);
        }
        if let Some(u) = &c.expose.mcp_resource {
            unique("MCP resource URI", u.clone(), c, &mut uris);
        }
        if let Some(h) = &c.expose.http {
            unique(
                "HTTP route",
                format!("{} {}", h.method, h.path),
                c,
                &mut routes,
            );
        }
        if let Some(p) = &c.expose.cli {
            unique("CLI path", p.join(" "), c, &mut clis);
        }
    }
    let err = |c: &Capability, pointer: &str, message: String| Diagnostic {
        file: file(c),
        line: None,
        pointer: pointer.to_string(),
        message,
    };
    // CLI paths: none is a prefix of another, none starts with a reserved word.
    let paths: Vec<(&Capability, &Vec<String>)> = caps
        .iter()
        .filter_map(|c| c.expose.cli.as_ref().map(|p| (c, p)))
        .collect();
    for (c, p) in &paths {
        for reserved in RESERVED_CLI {
            let n = reserved.len().min(p.len());
            if p[..n]
                .iter()
                .map(String::as_str)
                .eq(reserved[..n].iter().copied())
            {
                diags.push(err(
                    c,
                    "/expose/cli",
                    format!(
                        "CLI path `{}` collides with `seneschal {}`, a command of seneschal itself",
                        p.join(" "),
                        reserved.join(" ")
                    ),
                ));
            }
        }
        for (d, q) in &paths {
            if q.len() > p.len() && q[..p.len()] == p[..] {
                diags.push(err(
                    c,
                    "/expose/cli",
                    format!("CLI path `{}` is a prefix of `{}` declared by {} ({}): a command cannot also be a group", p.join(" "), q.join(" "), file(d), d.id),
                ));
            }
        }
    }
    // Each handler file is parsed once, however many capabilities it serves.
    let mut handler_files: BTreeMap<String, Result<Vec<String>, String>> = BTreeMap::new();
    for c in caps {
        let planned = c.stability == Stability::Planned;
        let e = &c.expose;
        if planned {
            let mut exec = Vec::new();
            if let Some(t) = &e.mcp_tool {
                exec.push(format!("mcp_tool `{t}`"));
            }
            if let Some(u) = &e.mcp_resource {
                exec.push(format!("mcp_resource `{u}`"));
            }
            if let Some(h) = &e.http {
                exec.push(format!("http `{} {}`", h.method, h.path));
            }
            if let Some(p) = &e.cli {
                exec.push(format!("cli `{}`", p.join(" ")));
            }
            if !exec.is_empty() {
                diags.push(err(
                    c,
                    "/expose",
                    format!(
                        "planned capability `{}` carries an executable exposure: {}",
                        c.id,
                        exec.join(", ")
                    ),
                ));
            }
        } else if c.examples.is_empty() {
            diags.push(err(
                c,
                "/examples",
                format!("executable capability `{}` declares no example", c.id),
            ));
        }
        if let Some(u) = &e.mcp_resource {
            if u.starts_with(KNOWLEDGE_URI_PREFIX) {
                diags.push(err(c, "/expose/mcp_resource", format!("resource URI `{u}` lies under `{KNOWLEDGE_URI_PREFIX}`, which belongs to knowledge objects")));
            }
            let zero_arg = c
                .input
                .get("required")
                .and_then(|r| r.as_array())
                .is_none_or(|r| r.is_empty());
            if c.kind == Kind::Query && (c.effect != Effect::Read || !zero_arg) {
                diags.push(err(c, "/expose/mcp_resource", format!("only a read query with no required argument may be an MCP resource; `{}` is {} with required arguments: {}", c.id, c.effect.as_str(), !zero_arg)));
            }
        }
        if let Some(h) = &e.http {
            if h.method == "GET" && c.effect != Effect::Read {
                diags.push(err(
                    c,
                    "/expose/http/method",
                    format!(
                        "GET must be safe, but `{}` has effect {}: use POST",
                        c.id,
                        c.effect.as_str()
                    ),
                ));
            }
        }
        if let Some(content) = &c.content {
            let p = repo_root.join(content);
            if !p.is_file() {
                diags.push(err(
                    c,
                    "/content",
                    format!("content file `{content}` does not exist"),
                ));
            }
        }
        // A module lives in the first handler folder that has its file (fixtures come last).
        let handlers_dir = c.handler.as_ref().and_then(|(module, _)| {
            handlers_dirs
                .iter()
                .find(|d| d.join(format!("{module}.rs")).is_file())
                .or(handlers_dirs.first())
        });
        if let (Some((module, function)), Some(dir), false) = (&c.handler, handlers_dir, planned) {
            let functions = handler_files
                .entry(module.clone())
                .or_insert_with(|| public_functions(dir, module));
            let problem = match functions {
                Err(message) => Some(message.replace("{function}", function)),
                Ok(names) if !names.iter().any(|n| n == function) => Some(format!(
                    "src/handlers/{module}.rs has no `pub fn {function}`"
                )),
                Ok(_) => None,
            };
            if let Some(message) = problem {
                diags.push(err(
                    c,
                    "/handler",
                    format!("handler `{module}::{function}` of `{}`: {message}", c.id),
                ));
            }
        }
    }
    diags.extend(published_examples(caps, repo_root));
    diags.sort();
    diags.dedup();
    diags
}

/// Every example a surface publishes validates against the schema published beside it: the
/// `examples` and `default` values inside the input and output schemas (in the MCP tool entries,
/// the OpenAPI operations and the reference), each checked against the published form of the
/// schema that holds it, and every example of an OpenAPI operation (a query parameter's
/// `example`, a request or response body's `examples`), checked against its schema. An
/// example of a refusal lives in the manifest's `examples` with its expected outcome and is
/// published as such, never as a request example.
pub fn published_examples(caps: &[Capability], repo_root: &Path) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for c in caps {
        let file = c.source.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(repo_root.join(&c.source)).unwrap_or_default();
        let mut found = Vec::new();
        schema_examples(&c.input, "/input", &mut found);
        schema_examples(&c.output, "/output", &mut found);
        for (pointer, schema, value) in found {
            let published = crate::project::openapi::published_schema(&schema);
            if let Some(problem) = first_error(&published, &value) {
                diags.push(Diagnostic {
                    file: file.clone(),
                    line: crate::load::pointer_line(&text, &pointer),
                    pointer,
                    message: format!(
                        "a published example fails the schema that holds it: {problem}"
                    ),
                });
            }
        }
        if c.expose.http.is_some() && c.executable() {
            let op = crate::project::openapi::operation(c);
            let mut found = Vec::new();
            operation_examples(&op, "", &mut found);
            for (pointer, schema, value) in found {
                if let Some(problem) = first_error(&schema, &value) {
                    diags.push(Diagnostic {
                        file: file.clone(),
                        line: None,
                        pointer: String::new(),
                        message: format!(
                            "the OpenAPI operation `{}` publishes an example that fails its schema at {pointer}: {problem}",
                            c.id
                        ),
                    });
                }
            }
        }
    }
    diags
}

/// The first error of `value` against `schema`; `None` when it validates, or when the schema
/// does not compile on its own (the manifest's whole schema was checked when loading).
fn first_error(schema: &serde_json::Value, value: &serde_json::Value) -> Option<String> {
    let validator = jsonschema::draft202012::new(schema).ok()?;
    let error = validator.iter_errors(value).next()?;
    Some(error.to_string())
}

/// `(pointer, schema without its examples, example)` of every `examples` item and `default`
/// of `schema` and its subschemas.
fn schema_examples(
    schema: &serde_json::Value,
    at: &str,
    out: &mut Vec<(String, serde_json::Value, serde_json::Value)>,
) {
    use serde_json::Value;
    let Some(obj) = schema.as_object() else {
        return;
    };
    let mut bare = obj.clone();
    bare.remove("examples");
    bare.remove("default");
    for (i, ex) in obj
        .get("examples")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        out.push((
            format!("{at}/examples/{i}"),
            Value::Object(bare.clone()),
            ex.clone(),
        ));
    }
    if let Some(d) = obj.get("default") {
        out.push((
            format!("{at}/default"),
            Value::Object(bare.clone()),
            d.clone(),
        ));
    }
    for (key, value) in obj {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    let name = name.replace('~', "~0").replace('/', "~1");
                    schema_examples(sub, &format!("{here}/{name}"), out);
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    schema_examples(sub, &format!("{here}/{i}"), out);
                }
            }
            "items"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else"
            | "additionalProperties"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                schema_examples(value, &here, out);
            }
            _ => {}
        }
    }
}

/// `(pointer, schema, example)` of every example of an OpenAPI operation: a parameter's
/// `example`, and each media type's `example` and `examples.*.value`.
fn operation_examples(
    op: &serde_json::Value,
    at: &str,
    out: &mut Vec<(String, serde_json::Value, serde_json::Value)>,
) {
    use serde_json::Value;
    let esc = |k: &str| k.replace('~', "~0").replace('/', "~1");
    for (i, p) in op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let (Some(schema), Some(ex)) = (p.get("schema"), p.get("example")) {
            out.push((
                format!("{at}/parameters/{i}/example"),
                schema.clone(),
                ex.clone(),
            ));
        }
    }
    let mut bodies: Vec<(String, &Value)> = Vec::new();
    if let Some(body) = op.get("requestBody") {
        bodies.push((format!("{at}/requestBody"), body));
    }
    for (status, response) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        bodies.push((format!("{at}/responses/{}", esc(status)), response));
    }
    for (here, body) in bodies {
        for (media, m) in body
            .get("content")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let Some(schema) = m.get("schema") else {
                continue;
            };
            let here = format!("{here}/content/{}", esc(media));
            if let Some(ex) = m.get("example") {
                out.push((format!("{here}/example"), schema.clone(), ex.clone()));
            }
            for (name, ex) in m
                .get("examples")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if let Some(value) = ex.get("value") {
                    out.push((
                        format!("{here}/examples/{}/value", esc(name)),
                        schema.clone(),
                        value.clone(),
                    ));
                }
            }
        }
    }
}

/// The public functions of `dir/module.rs`, found by parsing the file. An error message may
/// contain `{function}`, replaced by the caller with the function it looked for.
pub fn public_functions(dir: &Path, module: &str) -> Result<Vec<String>, String> {
    let path = dir.join(format!("{module}.rs"));
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!("src/handlers/{module}.rs does not exist (create it with `pub fn {{function}}`)")
    })?;
    let file = syn::parse_file(&text)
        .map_err(|e| format!("src/handlers/{module}.rs does not parse: {e}"))?;
    Ok(file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                Some(f.sig.ident.to_string())
            }
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::operation_examples;
    use serde_json::json;

    #[test]
    fn every_example_of_an_operation_is_found_beside_its_schema() {
        let op = json!({
            "parameters": [{"name": "n", "schema": {"type": "integer"}, "example": "x"}],
            "requestBody": {"content": {"application/json": {
                "schema": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}}},
                "examples": {"empty": {"summary": "an empty note", "value": {"text": ""}}}
            }}},
            "responses": {"200": {"content": {"application/json": {
                "schema": {"type": "string"}, "example": 1
            }}}}
        });
        let mut found = Vec::new();
        operation_examples(&op, "", &mut found);
        let failing: Vec<&str> = found
            .iter()
            .filter(|(_, schema, value)| super::first_error(schema, value).is_some())
            .map(|(pointer, _, _)| pointer.as_str())
            .collect();
        assert_eq!(
            failing,
            [
                "/parameters/0/example",
                "/requestBody/content/application~1json/examples/empty/value",
                "/responses/200/content/application~1json/example",
            ]
        );
    }
}
