//! Prompts: the objects of every knowledge kind declared `prompt: true` (skills), listed in
//! pages and rendered with their arguments, through the executor's `knowledge_prompt*`
//! functions, which redact them. In the 2026-07-28 era, a prompt's missing required arguments
//! are asked of a client that can be elicited, through an input-required result.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::model::{
    default_json, parse, Body, Era, GetPromptParams, ListParams, ListPromptsResult,
    PromptsCapability, RpcError, INTERNAL_ERROR,
};
use super::page;
use crate::mrtr::Round;
use crate::peer::McpPeer;
use seneschal_core::execute::{knowledge_prompt, knowledge_prompts};
use seneschal_core::interact::{self, Asked};
use seneschal_knowledge::prompts::PromptError;

/// Prompts: rendered on demand; no list changes are announced.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "prompts",
        value: |_| default_json::<PromptsCapability>(),
    }),
    methods: &[
        Method {
            name: "prompts/list",
            answer: list,
        },
        Method {
            name: "prompts/get",
            answer: get,
        },
    ],
    notifications: &[],
};

fn list(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params = ListParams::of(call.params);
    let (prompts, next_cursor) = page(
        knowledge_prompts(call.ctx),
        params.cursor.as_ref(),
        "prompts/list",
    )?;
    Ok(Body::of(&ListPromptsResult {
        prompts,
        next_cursor,
    }))
}

fn get(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let GetPromptParams { name, arguments } = parse(
        call.params,
        "invalid params: `prompts/get` needs `params.name`, a string, and `params.arguments`, if any, an object",
    )?;
    let mut arguments = arguments.unwrap_or_else(Map::new);
    if call.era == Era::Modern {
        let round = Arc::new(Round::open(
            "prompts/get",
            &name,
            &Value::Object(arguments.clone()),
            call.params,
        )?);
        let peer = McpPeer::of(call).asking_through(Arc::clone(&round));
        ask_missing_arguments(call, &peer, &name, &mut arguments);
        if let Some(asking) = round.input_required() {
            return Ok(Body::Owned(asking));
        }
    }
    match knowledge_prompt(call.ctx, &name, &arguments) {
        Ok(rendered) => Ok(Body::of(&rendered)),
        Err(PromptError::Unknown(m)) => {
            Err(RpcError::invalid_params(format!("invalid params: {m}"))
                .with_data(json!({"name": name})))
        }
        Err(PromptError::Arguments(m)) => {
            Err(RpcError::invalid_params(format!("invalid params: {m}"))
                .with_data(json!({"name": name})))
        }
        Err(PromptError::Reference(m)) => Err(RpcError::new(INTERNAL_ERROR, m)),
    }
}

/// The key under which a prompt's missing arguments are asked.
const ARGUMENTS_KEY: &str = "arguments";

/// Asks the client, by a form elicitation, for the required arguments of the prompt `name`
/// that `arguments` lacks, and adds the accepted values. Declined, unanswerable or deferred
/// (an input-required result follows), the arguments stay as they are: rendering then names
/// what is missing.
fn ask_missing_arguments(
    call: &Call<'_>,
    peer: &dyn interact::Peer,
    name: &str,
    arguments: &mut Map<String, Value>,
) {
    let Some(prompt) = knowledge_prompts(call.ctx)
        .into_iter()
        .find(|p| p.name == name)
    else {
        return;
    };
    let missing: Vec<_> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !arguments.contains_key(&a.name))
        .collect();
    if missing.is_empty() {
        return;
    }
    let properties: Map<String, Value> = missing
        .iter()
        .map(|a| {
            let mut schema = json!({"type": "string", "title": a.name});
            if let Some(d) = &a.description {
                schema["description"] = json!(d);
            }
            (a.name.clone(), schema)
        })
        .collect();
    let names: Vec<&str> = missing.iter().map(|a| a.name.as_str()).collect();
    let request = json!({
        "mode": "form",
        "message": format!("The prompt `{name}` needs: {}.", names.join(", ")),
        "requestedSchema": {"type": "object", "properties": properties, "required": names},
    });
    if let Asked::Answered(answer) = peer.ask(ARGUMENTS_KEY, "elicitation/create", request) {
        if answer.get("action").and_then(Value::as_str) == Some("accept") {
            let content = answer.get("content").and_then(Value::as_object);
            for (k, v) in content.into_iter().flatten() {
                if names.contains(&k.as_str()) && v.is_string() {
                    arguments.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
