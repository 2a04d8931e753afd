//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), 2026-07-28 requests only:
//! a `tools/call` of a tool whose manifest declares `task` runs as a task when the request
//! declares the extension in its `_meta` client capabilities ([`intercept`]); `tasks/get`
//! polls it (the result inlined once it is done), `tasks/update` answers its input requests,
//! `tasks/cancel` stops it. The table and the peer of a running task are [`crate::tasks`].
//!
//! Which tools may run as tasks is the manifests' business (`task: optional|required`,
//! listed as `execution.taskSupport`); the server creates a task whenever the client declared
//! the extension and the tool supports it, and answers the call itself otherwise (a `required`
//! tool refuses a client that did not declare it, -32021).

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Map, Value};

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::model::{
    Body, Era, RpcError, ServerInfo, INTERNAL_ERROR, META_CLIENT_CAPABILITIES, META_SERVER_INFO,
    MISSING_CLIENT_CAPABILITY,
};
use super::super::mrtr::Round;
use super::super::tasks::{Outcome, Table, Task, TaskPeer, MAX_TASKS};
use super::tool_result;
use seneschal_access::error::ErrorCode;
use seneschal_access::transport::Transport;
use seneschal_core::context::Context;
use seneschal_core::execute::execute_index;
use seneschal_core::registry::Descriptor;

/// The extension's identifier, as servers announce it and clients declare it.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The extension: announced under `capabilities.extensions`; its three methods.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "extensions",
        value: |_| json!({ EXTENSION: {} }),
    }),
    methods: &[
        Method {
            name: "tasks/get",
            answer: get,
        },
        Method {
            name: "tasks/update",
            answer: update,
        },
        Method {
            name: "tasks/cancel",
            answer: cancel,
        },
    ],
    notifications: &[],
};

/// The client capabilities a 2026-07-28 request declares in its `_meta`.
fn client_capabilities(params: &Value) -> Map<String, Value> {
    params
        .get("_meta")
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Whether those capabilities declare the extension.
fn declares(client: &Map<String, Value>) -> bool {
    client
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// -32021: the request needs the extension its client did not declare.
fn missing_extension(what: &str) -> RpcError {
    RpcError::new(
        MISSING_CLIENT_CAPABILITY,
        format!("missing required client capability: {what} needs the `{EXTENSION}` extension declared in `_meta[\"{META_CLIENT_CAPABILITIES}\"].extensions`"),
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}}))
}

/// The hook of `tools/call`: `Some` answer when the call is the extension's business — a
/// `CreateTaskResult` for a task now running, or the refusal of a `required` tool — and
/// `None` when `tools/call` answers it itself.
pub fn intercept(
    call: &Call<'_>,
    index: usize,
    d: &Descriptor,
    args: &Value,
) -> Option<Result<Body, RpcError>> {
    let support = d.task?;
    let client = client_capabilities(call.params);
    if call.era != Era::Modern || !declares(&client) {
        return (support == "required").then(|| {
            Err(missing_extension(&format!(
                "the tool `{}`",
                d.mcp_tool.unwrap_or(d.id)
            )))
        });
    }
    // A tool whose questions come first asks them in input-required rounds (the plain
    // tools/call path); the round that brings the answers creates the task, which keeps them.
    let answers = match (d.task_asks_first, Round::continues(call.params)) {
        (false, _) => Map::new(),
        (true, false) => return None,
        (true, true) => {
            let name = d.mcp_tool.unwrap_or(d.id);
            match Round::open("tools/call", name, args, call.params) {
                Ok(round) => round.answers().clone(),
                Err(e) => return Some(Err(e)),
            }
        }
    };
    let Some(task) = Table::global().create() else {
        // A full table creates no task: an optional one is answered now.
        return (support == "required").then(|| {
            Err(RpcError::new(
                INTERNAL_ERROR,
                format!("{MAX_TASKS} tasks are kept already: wait for one to finish and expire, or cancel one"),
            ))
        });
    };
    let ctx = shared_context(call.ctx);
    let peer = Arc::new(
        TaskPeer::new(Arc::clone(&task), client)
            .answered(answers)
            .vouched(call.session.vouched),
    );
    let running = Arc::clone(&task);
    let args = args.clone();
    let blocks = !d.content_blocks.is_empty();
    let spawned = std::thread::Builder::new()
        .name(format!("task {}", task.id()))
        .spawn(move || {
            running.finish(outcome(
                execute_index(
                    ctx,
                    index,
                    args,
                    seneschal_core::execute::Caller::new(Transport::Mcp, peer),
                ),
                blocks,
            ));
        });
    if let Err(e) = spawned {
        task.finish(Outcome::Error(
            RpcError::new(INTERNAL_ERROR, format!("the task could not start: {e}")).to_json(),
        ));
    }
    Some(Ok(Body::Owned(create_task_result(&task))))
}

/// How a call's answer ends its task: its `CallToolResult` (`isError` for a capability
/// error), except that `internal` — the server failed, not the tool — fails the task with
/// the JSON-RPC error `tools/call` would have answered.
fn outcome(
    answer: Result<Value, seneschal_access::error::CapabilityError>,
    blocks: bool,
) -> Outcome {
    match answer {
        Ok(v) => {
            let text = tool_result::success_bytes(
                &v,
                blocks.then(|| v.get("content")).flatten(),
                Era::Legacy,
                None,
            );
            Outcome::Result(serde_json::from_str(&text).expect("results are JSON"))
        }
        Err(e) if e.code == ErrorCode::Internal => Outcome::Error(
            RpcError::new(INTERNAL_ERROR, format!("internal error: {}", e.message))
                .with_data(json!({"seneschal/error": {"code": ErrorCode::Internal.as_str()}}))
                .to_json(),
        ),
        Err(e) => {
            Outcome::Result(serde_json::to_value(tool_result::error_result(e)).expect("serializes"))
        }
    }
}

/// The `CreateTaskResult`: the task's fields at the top level with `resultType: "task"`, sent
/// as they are (the dispatcher's `resultType: "complete"` is for every other answer).
fn create_task_result(task: &Task) -> String {
    let mut m = Map::new();
    m.insert("resultType".into(), json!("task"));
    m.extend(task.created());
    m.insert(
        "_meta".into(),
        json!({ META_SERVER_INFO: ServerInfo::THIS }),
    );
    serde_json::to_string(&Value::Object(m)).expect("values serialize")
}

/// The context tasks run with: the executor needs one that outlives the request, so each
/// process keeps one per served repository and profile (its own knowledge index; the session
/// notes of `process_state` capabilities are the request's process's only when no task
/// writes them, which is why no such capability declares `task`).
fn shared_context(ctx: &Context) -> &'static Context {
    static CONTEXTS: OnceLock<Mutex<Vec<&'static Context>>> = OnceLock::new();
    let mut all = CONTEXTS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(c) = all.iter().find(|c| c.same_settings(ctx)) {
        return c;
    }
    // Everything that decides what a call may do travels with the task (a task once ran
    // under the default `ask` whatever the process was started with): `sibling` carries
    // every setting, so a new one cannot be left behind here.
    let c: &'static Context = Box::leak(Box::new(ctx.sibling()));
    all.push(c);
    c
}

/// The task a `tasks/*` request names, once its client declared the extension: -32021
/// without it, -32602 for a missing or unknown `taskId`.
fn named_task(call: &Call<'_>, method: &str) -> Result<Arc<Task>, RpcError> {
    if !declares(&client_capabilities(call.params)) {
        return Err(missing_extension(&format!("`{method}`")));
    }
    let id = call
        .params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params(format!(
                "invalid params: `{method}` needs `params.taskId`, a string"
            ))
        })?;
    Table::global().get(id).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "invalid params: no task `{id}` (unknown, or expired after its ttlMs)"
        ))
        .with_data(json!({"taskId": id}))
    })
}

/// `tasks/get`: the task now (`DetailedTask`).
fn get(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let task = named_task(call, "tasks/get")?;
    Ok(Body::Value(Value::Object(task.detailed())))
}

/// `tasks/update`: hands the answers to the task's pending input requests; an empty ack.
fn update(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let task = named_task(call, "tasks/update")?;
    let responses = match call.params.get("inputResponses") {
        Some(Value::Object(r)) => r.clone(),
        _ => {
            return Err(RpcError::invalid_params(
                "invalid params: `tasks/update` needs `params.inputResponses`, an object",
            ))
        }
    };
    task.update(&responses);
    Ok(Body::Value(json!({})))
}

/// `tasks/cancel`: cancels the task (a finished task stays as it is); an empty ack.
fn cancel(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let task = named_task(call, "tasks/cancel")?;
    task.cancel();
    Ok(Body::Value(json!({})))
}
