//! `generated/openapi.json`: OpenAPI 3.1 of every HTTP route the registry declares, and the
//! narrower documents of `--allow-effects read` and `process_state` (OUT_DIR only).

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use super::{allowed_effects, part_text, template, Part, Seg, GENERATED_BY};
use crate::codes::ErrorCode;
use crate::model::{hints_json, Capability, Registry};
use crate::policy::{Approval, Effect, APPROVAL_HEADER, APPROVAL_TOKEN_HEADER, DESK_SECRET_HEADER};

/// Keywords that describe a schema rather than constrain it: they stay on the outer schema
/// when a nullable type is split into `anyOf` branches.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords whose value is one subschema.
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an array of subschemas.
const SUBSCHEMA_LISTS: &[&str] = &["prefixItems", "anyOf", "oneOf", "allOf"];

/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
];

/// A manifest schema as every surface publishes it (OpenAPI operations and MCP tool entries),
/// in the forms code generators and single-type schema dialects read the same way:
///
/// - a type list (`type: [string, "null"]`) becomes `anyOf` with one single-type branch per
///   type (`anyOf: [{type: string, …}, {type: "null"}]`), the form the MCP Inspector's
///   `type-union` portability rule asks for; annotations stay on the outer schema;
/// - an object schema that names no property and says nothing of the others (a free-form
///   object) says `additionalProperties: true`, so generators type it as a map of anything
///   (`openapi-typescript` would otherwise type it `Record<string, never>`).
///
/// Both rewrites keep the set of valid instances unchanged. The manifests keep their form:
/// typify reads those (a type list with `null` is an `Option`).
pub fn published_schema(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        let v = if SUBSCHEMA.contains(&k.as_str()) {
            published_schema(v)
        } else if SUBSCHEMA_LISTS.contains(&k.as_str()) {
            match v {
                Value::Array(items) => Value::Array(items.iter().map(published_schema).collect()),
                other => other.clone(),
            }
        } else if SUBSCHEMA_MAPS.contains(&k.as_str()) {
            match v {
                Value::Object(items) => Value::Object(
                    items
                        .iter()
                        .map(|(name, s)| (name.clone(), published_schema(s)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else {
            v.clone()
        };
        out.insert(k.clone(), v);
    }
    if let Some(Value::Array(types)) = out.get("type").cloned() {
        out.remove("type");
        let constraints: Map<String, Value> = out
            .iter()
            .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for k in constraints.keys() {
            out.remove(k);
        }
        let branches: Vec<Value> = types
            .iter()
            .map(|t| {
                let mut branch = Map::new();
                branch.insert("type".into(), t.clone());
                if t != "null" {
                    branch.extend(constraints.clone());
                }
                free_form(&mut branch);
                Value::Object(branch)
            })
            .collect();
        out.insert("anyOf".into(), Value::Array(branches));
    }
    free_form(&mut out);
    Value::Object(out)
}

/// Adds `additionalProperties: true` to an object schema that constrains no property.
fn free_form(schema: &mut Map<String, Value>) {
    let says_properties = [
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
    ]
    .iter()
    .any(|k| schema.contains_key(*k));
    if schema.get("type") == Some(&json!("object")) && !says_properties {
        schema.insert("additionalProperties".into(), json!(true));
    }
}

/// What a success answers: the output, and where the capability's bytes travel as base64.
fn success_description(c: &Capability) -> String {
    if c.binary() {
        format!(
            "Success: the resource, its {} bytes base64-encoded in `blob`.",
            c.mime_type
        )
    } else if !c.content_blocks.is_empty() {
        format!(
            "Success: the output of the capability; its `content` array holds the MCP content blocks it declares ({}), bytes base64-encoded.",
            c.content_blocks.join(", ")
        )
    } else {
        "Success: the output of the capability.".into()
    }
}

/// The operation object of one capability.
pub fn operation(c: &Capability) -> Value {
    let (input, output) = (published_schema(&c.input), published_schema(&c.output));
    let h = c
        .expose
        .http
        .as_ref()
        .expect("only routed capabilities have operations");
    let mut op = Map::new();
    op.insert("operationId".into(), json!(c.id));
    op.insert("summary".into(), json!(c.title));
    // The description, then the maintainer's detail (never in the MCP tool list).
    let description = match &c.details {
        Some(details) => format!("{}\n\n{details}", c.description),
        None => c.description.clone(),
    };
    op.insert("description".into(), json!(description));
    let group = c.id.split('.').next().unwrap_or("").to_string();
    let mut tags = vec![group.clone()];
    tags.extend(c.tags.iter().filter(|t| **t != group).cloned());
    op.insert("tags".into(), json!(tags));
    let ok_examples: Vec<&crate::model::Example> =
        c.examples.iter().filter(|e| e.outcome == "ok").collect();
    if h.method == "GET" {
        let props = input
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = input
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let params: Vec<Value> = props
            .iter()
            .map(|(name, schema)| {
                let mut p = json!({
                    "name": name,
                    "in": "query",
                    "required": required.contains(&name.as_str()),
                    "schema": schema,
                });
                if let Some(d) = schema.get("description") {
                    p["description"] = d.clone();
                }
                if schema.get("type") == Some(&json!("array")) {
                    p["style"] = json!("form");
                    p["explode"] = json!(true);
                }
                if let Some(ex) = ok_examples.iter().find_map(|e| e.input.get(name)) {
                    p["example"] = ex.clone();
                }
                p
            })
            .collect();
        if !params.is_empty() {
            op.insert("parameters".into(), json!(params));
        }
    } else {
        // The request examples are the examples of a success, only: a client or a fuzzer
        // that reads `examples` sends them expecting 200. The examples of a refusal are in
        // `x-seneschal-negative-examples` (below), each with the code it answers.
        let mut examples = Map::new();
        for (i, e) in c.examples.iter().enumerate() {
            if e.outcome == "ok" {
                examples.insert(
                    format!("example{i}"),
                    json!({"summary": e.title, "value": e.input}),
                );
            }
        }
        let mut media = json!({"schema": input});
        if !examples.is_empty() {
            media["examples"] = Value::Object(examples);
        }
        // A missing or blank body is the empty object `{}`: the body is required only when
        // the input names a required field, which `{}` lacks (then it answers 400).
        let required = input
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        op.insert(
            "requestBody".into(),
            json!({"required": required, "content": {"application/json": media}}),
        );
    }
    let mut ok = json!({"description": success_description(c), "content": {"application/json": {"schema": output}}});
    if c.approval() == Approval::PerCall {
        // The approval gate: the person approves (the desk, or the desk secret); the dry
        // run's token pins the plan reviewed (tests/it/approval.rs, tests/it/desk.rs).
        let token = json!({
            "name": APPROVAL_HEADER,
            "in": "header",
            "required": false,
            "schema": {"type": "string"},
            "description": format!(
                "The plan this call applies: the `{APPROVAL_TOKEN_HEADER}` header its dry run \
                 (`dry_run: true`) answered, valid ten minutes, once. A token of another \
                 request or plan, or one presented before, is refused `not_approved` at once. \
                 The token approves nothing: the person does (see `{DESK_SECRET_HEADER}`)."
            ),
        });
        let secret = json!({
            "name": DESK_SECRET_HEADER,
            "in": "header",
            "required": false,
            "schema": {"type": "string"},
            "description": "The desk secret `seneschal serve` printed on its terminal: the \
                 person's own call, approved. Without it, under `--approval ask` the call waits \
                 on the approval desk until the person approves or declines it (the cockpit, \
                 or `seneschal approvals`), at most `--approval-timeout`; under `deny` it is \
                 refused `not_approved`; under `trust-client` nothing is asked.",
        });
        match op.get_mut("parameters").and_then(Value::as_array_mut) {
            Some(params) => params.extend([token, secret]),
            None => {
                op.insert("parameters".into(), json!([token, secret]));
            }
        }
        if c.input.pointer("/properties/dry_run").is_some() {
            ok["headers"] = json!({APPROVAL_TOKEN_HEADER: {
                "description": format!(
                    "With `dry_run: true`: the confirmation token the applying call presents in \
                     `{APPROVAL_HEADER}` (bound to the capability and the input without \
                     `dry_run`, valid ten minutes, for this server process)."
                ),
                "schema": {"type": "string"},
            }});
        }
    }
    let mut responses = Map::new();
    responses.insert("200".into(), ok);
    // One response per status: codes that share one (`refused` and `not_approved`, 403)
    // share a response named by both.
    let mut by_status: std::collections::BTreeMap<u16, Vec<&str>> = Default::default();
    let mut codes = c.all_errors();
    if h.method != "GET" {
        // A body over `serve --max-body` is refused before the capability runs.
        codes.push(ErrorCode::TooLarge);
    }
    for code in codes {
        by_status
            .entry(code.http_status())
            .or_default()
            .push(code.as_str());
    }
    for (status, codes) in by_status {
        responses.insert(
            status.to_string(),
            json!({"$ref": format!("#/components/responses/{}", codes.join("_or_"))}),
        );
    }
    // What the server loop answers before any route: a request that never became one.
    for (status, name) in LOOP_RESPONSES {
        responses.insert(
            status.to_string(),
            json!({"$ref": format!("#/components/responses/{name}")}),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
    // The examples of a refusal, each with the code and status it answers: kept out of
    // `examples`, which hold what succeeds. Some break the schema on purpose (an empty note
    // under `minLength: 1`); a query's are sent as its parameters.
    let negative: Vec<Value> = c
        .examples
        .iter()
        .filter(|e| e.outcome != "ok")
        .map(|e| {
            let status = ErrorCode::parse(&e.outcome).map(ErrorCode::http_status);
            json!({"summary": e.title, "value": e.input, "code": e.outcome, "status": status})
        })
        .collect();
    if !negative.is_empty() {
        op.insert("x-seneschal-negative-examples".into(), json!(negative));
    }
    op.insert("x-seneschal-effect".into(), json!(c.effect.as_str()));
    if c.additive {
        op.insert("x-seneschal-additive".into(), json!(true));
    }
    op.insert("x-seneschal-hints".into(), hints_json(c.hints()));
    op.insert("x-seneschal-approval".into(), json!(c.approval().as_str()));
    op.insert(
        "x-seneschal-disclosure".into(),
        json!(c.disclosure.as_str()),
    );
    op.insert(
        "x-seneschal-determinism".into(),
        json!(c.determinism.as_str()),
    );
    op.insert("x-seneschal-stability".into(), json!(c.stability.as_str()));
    op.insert("x-seneschal-review".into(), json!(c.review));
    Value::Object(op)
}

/// The statuses the HTTP server loop answers, with no body, to a request that never reached a
/// route (`vendor/tiny_http/src/serve.rs`): `(status, component name)`.
const LOOP_RESPONSES: [(u16, &str); 4] = [
    (408, "request_timeout"),
    (417, "expectation_failed"),
    (431, "head_too_large"),
    (505, "http_version_not_supported"),
];

/// The problem+json schema, one shared response per error code, and the server loop's own.
fn components() -> Value {
    let mut responses = Map::new();
    responses.insert(
        "request_timeout".into(),
        json!({"description": "The request's head and body did not arrive within `serve --request-timeout` of its first byte; the connection is closed, with no body."}),
    );
    responses.insert(
        "head_too_large".into(),
        json!({"description": "The request line or a header is over the server's head limit, or there are too many headers (a query string too long for the request line among them); answered before any route, with no body."}),
    );
    responses.insert(
        "expectation_failed".into(),
        json!({"description": "The request carries an `Expect` header other than `100-continue`; answered before any route, with no body, and the connection is closed."}),
    );
    responses.insert(
        "http_version_not_supported".into(),
        json!({"description": "The request line names an HTTP version above 1.1 (the server speaks HTTP/1.0 and 1.1); answered before any route, with no body, and the connection is closed."}),
    );
    for code in ErrorCode::ALL {
        responses.insert(
            code.as_str().into(),
            json!({
                "description": format!("`{}`: {}.", code.as_str(), code.meaning()),
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
            }),
        );
    }
    // The status two codes share on a gated operation.
    let (refused, not_approved) = (ErrorCode::Refused, ErrorCode::NotApproved);
    responses.insert(
        format!("{}_or_{}", refused.as_str(), not_approved.as_str()),
        json!({
            "description": format!(
                "`{}`: {}; or `{}`: {} (see the `code` member).",
                refused.as_str(), refused.meaning(), not_approved.as_str(), not_approved.meaning()
            ),
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
        }),
    );
    json!({
        "schemas": {
            "Problem": {
                "type": "object",
                "description": "An RFC 9457 problem with seneschal's stable error code.",
                "required": ["type", "title", "status", "code"],
                "properties": {
                    "type": {"type": "string"},
                    "title": {"type": "string"},
                    "status": {"type": "integer", "minimum": 100, "maximum": 599, "description": "The HTTP status of the answer."},
                    "detail": {"type": "string"},
                    "code": {"type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()},
                    "pointer": {"type": "string", "description": "JSON pointer of the failing input field."},
                    "data": {"type": "object", "additionalProperties": true, "description": "Machine-readable details of the refusal."}
                }
            }
        },
        "responses": responses,
    })
}

/// Every routed, executable capability's operation, rendered once; a profile's document
/// borrows from it.
pub struct Operations<'r> {
    all: Vec<(&'r Capability, Value)>,
}

impl<'r> Operations<'r> {
    /// Renders every routed, executable capability's operation once.
    pub fn new(reg: &'r Registry) -> Operations<'r> {
        Operations {
            all: reg
                .served(Effect::RepositoryWrite)
                .filter(|c| c.expose.http.is_some())
                .map(|c| (c, operation(c)))
                .collect(),
        }
    }

    /// Every operation by capability id.
    pub fn by_id(&self) -> HashMap<&'r str, &Value> {
        self.all.iter().map(|(c, op)| (c.id.as_str(), op)).collect()
    }

    /// The document of a process started with `--allow-effects max_effect`: the operations of
    /// [`Registry::served`], the planned capabilities within the profile, and the effects it
    /// executes (`info.x-seneschal-allowed-effects`). The digest is the server's: the same
    /// binary, the same contract, whatever the profile.
    pub fn render(&self, reg: &Registry, digest: &str, max_effect: Effect) -> String {
        part_text(&self.document(reg, digest, max_effect))
    }

    /// The template of [`Operations::render`]: each path, tag and planned capability marked
    /// with the toolsets it belongs to, so a process of fewer toolsets lists only theirs.
    pub fn template(&self, reg: &Registry, digest: &str, max_effect: Effect) -> Vec<Seg> {
        let mut segs = template(&self.document(reg, digest, max_effect), true);
        if let Some(Seg::Lit(last)) = segs.last_mut() {
            last.push('\n');
        }
        segs
    }

    fn document(&self, reg: &Registry, digest: &str, max_effect: Effect) -> Part<'_> {
        // Each path with its methods and the toolset they belong to (one per path: the
        // registry's check), each tag with the toolsets of the operations that use it.
        let mut paths: BTreeMap<String, (u8, BTreeMap<String, Part>)> = BTreeMap::new();
        // Every tag an operation uses, defined once: its id group (`repo` of `repo.log`) or a
        // manifest tag.
        let served = || self.all.iter().filter(|(c, _)| c.served_by(max_effect));
        let groups: std::collections::BTreeSet<&str> = served()
            .map(|(c, _)| c.id.split('.').next().unwrap_or(""))
            .collect();
        let mut tags: BTreeMap<String, (u8, String)> = BTreeMap::new();
        for (c, op) in served() {
            let bit = c.toolset.bit();
            for t in op["tags"].as_array().into_iter().flatten() {
                let t = t.as_str().unwrap_or_default();
                let description = if groups.contains(t) {
                    format!("The capabilities whose id starts with `{t}.`.")
                } else {
                    format!("The capabilities whose manifest carries the tag `{t}`.")
                };
                tags.entry(t.to_string()).or_insert((0, description)).0 |= bit;
            }
            let h = c.expose.http.as_ref().expect("only routed operations");
            let entry = paths
                .entry(h.path.clone())
                .or_insert_with(|| (0, BTreeMap::new()));
            entry.0 |= bit;
            entry.1.insert(h.method.to_lowercase(), Part::Borrowed(op));
        }
        let planned: Vec<Part> = reg
            .within(max_effect)
            .filter(|c| !c.executable())
            .map(|c| Part::Select(c.toolset.bit(), Box::new(Part::Owned(json!(c.id)))))
            .collect();
        let mut info = Part::object(json!({
            "title": "seneschal",
            "version": reg.version,
            "description": "The HTTP projection of seneschal's capability registry. Every operation is declared once, in a manifest under capabilities/; its operationId is the capability's canonical id.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
            "x-seneschal-digest": digest,
            "x-seneschal-allowed-effects": allowed_effects(max_effect),
        }));
        info.insert("x-seneschal-planned".into(), Part::List(planned));
        let mut doc = Part::object(json!({
            "openapi": "3.1.0",
            // Relative: the document is served by the server it describes, on whatever port it
            // was bound, so Swagger UI's "Try it out" reaches the right origin.
            "servers": [{"url": "/", "description": "the server that serves this document (`seneschal serve`, by default http://127.0.0.1:7878)"}],
            // No authentication, said explicitly: the server binds loopback and guards Host and
            // Origin.
            "security": [],
            "components": components(),
            "x-generated-by": GENERATED_BY,
        }));
        doc.insert("info".into(), Part::Map(info));
        doc.insert(
            "tags".into(),
            Part::List(
                tags.into_iter()
                    .map(|(name, (mask, description))| {
                        Part::Select(
                            mask,
                            Box::new(Part::Owned(
                                json!({"name": name, "description": description}),
                            )),
                        )
                    })
                    .collect(),
            ),
        );
        doc.insert(
            "paths".into(),
            Part::Map(
                paths
                    .into_iter()
                    .map(|(path, (mask, methods))| {
                        (path, Part::Select(mask, Box::new(Part::Map(methods))))
                    })
                    .collect(),
            ),
        );
        Part::Map(doc)
    }
}

/// The whole document of the full profile (the committed one).
pub fn render(reg: &Registry, digest: &str) -> String {
    Operations::new(reg).render(reg, digest, Effect::RepositoryWrite)
}

#[cfg(test)]
mod tests {
    use super::published_schema;
    use serde_json::json;

    #[test]
    fn a_type_list_becomes_single_type_branches_and_a_free_form_object_says_so() {
        let manifest = json!({
            "type": "object",
            "properties": {
                "why": {"type": ["string", "null"], "minLength": 1, "description": "d"},
                "meta": {"type": ["object", "null"], "description": "m"},
                "front_matter": {"type": "object"},
                "list": {"type": "array", "items": {"type": ["integer", "null"]}}
            }
        });
        let published = published_schema(&manifest);
        assert_eq!(
            published["properties"]["why"],
            json!({"description": "d", "anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]})
        );
        assert_eq!(
            published["properties"]["meta"],
            json!({"description": "m", "anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}]})
        );
        assert_eq!(
            published["properties"]["front_matter"],
            json!({"type": "object", "additionalProperties": true})
        );
        assert_eq!(
            published["properties"]["list"]["items"],
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
        );
        // An object that names its properties keeps its form.
        assert!(published.get("additionalProperties").is_none());
        // The same instances validate against both forms.
        let (a, b) = (
            jsonschema::draft202012::new(&manifest).unwrap(),
            jsonschema::draft202012::new(&published).unwrap(),
        );
        for instance in [
            json!({"why": null, "meta": null, "list": [1, null]}),
            json!({"why": "x", "meta": {"k": 1}, "front_matter": {"a": [1]}}),
            json!({"why": ""}),
            json!({"why": 3}),
            json!({"list": ["x"]}),
            json!({"meta": 1}),
        ] {
            assert_eq!(a.is_valid(&instance), b.is_valid(&instance), "{instance}");
        }
    }
}
