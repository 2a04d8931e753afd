//! Completion: `completion/complete` offers the values of a prompt's argument (its `enum`,
//! else its `examples`) and of a knowledge URI template's variables (kind names, ids from the
//! index), through the executor's `knowledge_*_completion` functions, which redact them.

use serde_json::json;

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::model::{
    default_json, parse, Body, CompleteParams, CompleteResult, Completion, CompletionRef,
    CompletionsCapability, RpcError, MAX_COMPLETIONS,
};
use seneschal_core::execute::{knowledge_prompt_completion, knowledge_template_completion};

/// Completion of prompt arguments and resource-template variables.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "completions",
        value: |_| default_json::<CompletionsCapability>(),
    }),
    methods: &[Method {
        name: "completion/complete",
        answer: complete,
    }],
    notifications: &[],
};

fn complete(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let CompleteParams {
        reference,
        argument,
        context,
    } = parse(
        call.params,
        "invalid params: `completion/complete` needs `params.ref` ({\"type\": \"ref/prompt\", \"name\"} or {\"type\": \"ref/resource\", \"uri\"}) and `params.argument` ({\"name\", \"value\"}), strings",
    )?;
    let context = context.unwrap_or_default().arguments;
    let found = match &reference {
        CompletionRef::Prompt { name } => {
            knowledge_prompt_completion(call.ctx, name, &argument.name, &argument.value).ok_or_else(
                || {
                    RpcError::invalid_params(format!(
                        "invalid params: no prompt `{name}` with an argument `{}`",
                        argument.name
                    ))
                },
            )
        }
        CompletionRef::Resource { uri } => {
            knowledge_template_completion(call.ctx, uri, &argument.name, &argument.value, &context)
                .ok_or_else(|| {
                    RpcError::invalid_params(format!(
                        "invalid params: no resource template `{uri}` with a variable `{}`",
                        argument.name
                    ))
                })
        }
    };
    let mut values = found.map_err(|e| e.with_data(json!({"argument": argument.name})))?;
    let total = values.len();
    values.truncate(MAX_COMPLETIONS);
    Ok(Body::of(&CompleteResult {
        completion: Completion {
            has_more: total > values.len(),
            total,
            values,
        },
    }))
}
