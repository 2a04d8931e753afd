//! `generated/openapi.json`: OpenAPI 3.1 of every HTTP route the registry declares, and the
//! narrower documents of `--allow-effects read` and `process_state` (OUT_DIR only).

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use super::{allowed_effects, part_text, Part, GENERATED_BY};
use crate::codes::ErrorCode;
use crate::model::{hints_json, Capability, Registry};
use crate::policy::Effect;

/// The operation object of one capability.
pub fn operation(c: &Capability) -> Value {
    let h = c
        .expose
        .http
        .as_ref()
        .expect("only routed capabilities have operations");
    let mut op = Map::new();
    op.insert("operationId".into(), json!(c.id));
    op.insert("summary".into(), json!(c.title));
    op.insert("description".into(), json!(c.description));
    let group = c.id.split('.').next().unwrap_or("").to_string();
    let mut tags = vec![group.clone()];
    tags.extend(c.tags.iter().filter(|t| **t != group).cloned());
    op.insert("tags".into(), json!(tags));
    let ok_examples: Vec<&crate::model::Example> =
        c.examples.iter().filter(|e| e.outcome == "ok").collect();
    if h.method == "GET" {
        let props = c
            .input
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = c
            .input
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
        let mut examples = Map::new();
        for (i, e) in c.examples.iter().enumerate() {
            examples.insert(
                format!("example{i}"),
                json!({"summary": e.title, "value": e.input}),
            );
        }
        let mut media = json!({"schema": c.input});
        if !examples.is_empty() {
            media["examples"] = Value::Object(examples);
        }
        op.insert(
            "requestBody".into(),
            json!({"required": true, "content": {"application/json": media}}),
        );
    }
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({"description": "Success: the output of the capability.", "content": {"application/json": {"schema": c.output}}}),
    );
    for code in c.all_errors() {
        responses.insert(
            code.http_status().to_string(),
            json!({"$ref": format!("#/components/responses/{}", code.as_str())}),
        );
    }
    op.insert("responses".into(), Value::Object(responses));
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

/// The problem+json schema and one shared response per error code.
fn components() -> Value {
    let mut responses = Map::new();
    for code in ErrorCode::ALL {
        responses.insert(
            code.as_str().into(),
            json!({
                "description": format!("`{}`: {}.", code.as_str(), code.meaning()),
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
            }),
        );
    }
    json!({
        "schemas": {
            "Problem": {
                "type": "object",
                "description": "An RFC 9457 problem with seneschal's stable error code.",
                "required": ["type", "title", "status", "code"],
                "properties": {
                    "type": {"type": "string"},
                    "title": {"type": "string"},
                    "status": {"type": "integer"},
                    "detail": {"type": "string"},
                    "code": {"type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()},
                    "pointer": {"type": "string", "description": "JSON pointer of the failing input field."},
                    "data": {"type": "object", "description": "Machine-readable details of the refusal."}
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
        let mut paths: BTreeMap<String, Part> = BTreeMap::new();
        for (c, op) in self.all.iter().filter(|(c, _)| c.served_by(max_effect)) {
            let h = c.expose.http.as_ref().expect("only routed operations");
            let entry = paths
                .entry(h.path.clone())
                .or_insert_with(|| Part::Map(BTreeMap::new()));
            if let Part::Map(methods) = entry {
                methods.insert(h.method.to_lowercase(), Part::Borrowed(op));
            }
        }
        let planned: Vec<&str> = reg
            .within(max_effect)
            .filter(|c| !c.executable())
            .map(|c| c.id.as_str())
            .collect();
        let mut doc = Part::object(json!({
            "openapi": "3.1.0",
            "info": {
                "title": "seneschal",
                "version": reg.version,
                "description": "The HTTP projection of seneschal's capability registry. Every operation is declared once, in a manifest under capabilities/; its operationId is the capability's canonical id.",
                "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
                "x-seneschal-planned": planned,
                "x-seneschal-digest": digest,
                "x-seneschal-allowed-effects": allowed_effects(max_effect),
            },
            // Relative: the document is served by the server it describes, on whatever port it
            // was bound, so Swagger UI's "Try it out" reaches the right origin.
            "servers": [{"url": "/", "description": "the server that serves this document (`seneschal serve`, by default http://127.0.0.1:7878)"}],
            // No authentication, said explicitly: the server binds loopback and guards Host and
            // Origin.
            "security": [],
            "components": components(),
            "x-generated-by": GENERATED_BY,
        }));
        doc.insert("paths".into(), Part::Map(paths));
        part_text(&Part::Map(doc))
    }
}

/// The whole document of the full profile (the committed one).
pub fn render(reg: &Registry, digest: &str) -> String {
    Operations::new(reg).render(reg, digest, Effect::RepositoryWrite)
}
