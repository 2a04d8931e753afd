//! Prompts: the objects of every knowledge kind declared `prompt: true` (skills), listed in
//! pages and rendered with their arguments, through the executor's `knowledge_prompt*`
//! functions, which redact them.

use serde_json::{json, Map};

use super::super::dispatch::{Call, Capability, Feature, Method};
use super::super::model::{
    default_json, parse, Body, GetPromptParams, ListParams, ListPromptsResult, PromptsCapability,
    RpcError, INTERNAL_ERROR,
};
use super::page;
use crate::execute::{knowledge_prompt, knowledge_prompts};
use crate::knowledge::prompts::PromptError;

/// Prompts: rendered on demand; no list changes are announced.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "prompts",
        value: default_json::<PromptsCapability>,
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
    let arguments = arguments.unwrap_or_else(Map::new);
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
