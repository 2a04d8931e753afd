//! Resources: the registry's resources and queries, and the knowledge objects (through the
//! executor's `knowledge_*` functions, which redact them), listed in pages and read; and
//! subscriptions to them (initialize era), whose notifications [`super::super::live`] sends.

use serde_json::json;

use super::super::feature::{Call, Capability, Feature, Method};
use super::super::live::MAX_SUBSCRIPTIONS;
use super::super::model::{
    parse, Body, Era, ListParams, ListResourcesResult, ListTemplatesResult, ReadResourceParams,
    ReadResourceResult, Resource, ResourceBody, ResourceContents, ResourceTemplate,
    ResourcesCapability, RpcError, INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY,
    TTL_STATIC_MS,
};
use super::super::model::{EmptyResult, SubscribeParams};
use super::page;
use seneschal_access::error::{CapabilityError, ErrorCode};
use seneschal_access::transport::Transport;
use seneschal_core::execute::{
    execute_index, knowledge_read, knowledge_resources, knowledge_templates,
};
use seneschal_core::registry::{self, Kind};
use seneschal_model::policy::{Determinism, Disclosure};

/// Resources: read on demand; subscribed to by a connection that can hear notifications
/// (stdio, a Streamable HTTP session), which then hears of their changes.
pub const FEATURE: Feature = Feature {
    capability: Some(Capability {
        name: "resources",
        // Subscriptions are of the initialize era (`resources/subscribe`); a 2026-07-28 client
        // would need `subscriptions/listen`, which is not served, so it is promised neither.
        value: |era| {
            let live = era == Era::Legacy;
            serde_json::to_value(ResourcesCapability {
                subscribe: live,
                list_changed: live,
            })
            .expect("capabilities serialize")
        },
    }),
    methods: &[
        Method {
            name: "resources/list",
            answer: list,
        },
        Method {
            name: "resources/read",
            answer: read,
        },
        Method {
            name: "resources/templates/list",
            answer: templates,
        },
        Method {
            name: "resources/subscribe",
            answer: subscribe,
        },
        Method {
            name: "resources/unsubscribe",
            answer: unsubscribe,
        },
    ],
    notifications: &[],
};

fn list(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params = ListParams::of(call.params);
    // A client that listed the resources hears when the list changes.
    call.session.live.interest(call.ctx);
    let mut items: Vec<Resource> = registry::served_in(call.ctx.profile())
        .filter_map(|(_, d)| {
            d.mcp_resource
                .filter(|uri| !registry::is_template(uri))
                .map(|uri| Resource {
                    uri: uri.into(),
                    name: d.id.into(),
                    title: d.title.into(),
                    description: d.description.into(),
                    mime_type: d.resource_mime().into(),
                })
        })
        .collect();
    items.extend(knowledge_resources(call.ctx));
    let (resources, next_cursor) = page(items, params.cursor.as_ref(), "resources/list")?;
    Ok(Body::of(&ListResourcesResult {
        resources,
        next_cursor,
    }))
}

/// `resources/subscribe`: any URI may be subscribed to (one that is not an object yet hears
/// of its creation); the connection must be one that notifications can reach.
fn subscribe(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let SubscribeParams { uri } = parse(
        call.params,
        "invalid params: `resources/subscribe` needs `params.uri`, a string",
    )?;
    let live = &call.session.live;
    if !live.can_hear() {
        return Err(RpcError::invalid_params(
            "invalid params: this connection cannot receive notifications: subscribe over \
             stdio, or in a Streamable HTTP session (the `Mcp-Session-Id` that `initialize` \
             answers)",
        ));
    }
    if !live.subscribe(call.ctx, &uri) {
        return Err(RpcError::invalid_params(format!(
            "invalid params: this connection holds {MAX_SUBSCRIPTIONS} subscriptions already"
        )));
    }
    Ok(Body::of(&EmptyResult {}))
}

/// `resources/unsubscribe`: idempotent.
fn unsubscribe(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let SubscribeParams { uri } = parse(
        call.params,
        "invalid params: `resources/unsubscribe` needs `params.uri`, a string",
    )?;
    call.session.live.unsubscribe(&uri);
    Ok(Body::of(&EmptyResult {}))
}

fn templates(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params = ListParams::of(call.params);
    // The queries read through a URI template, then the knowledge kinds.
    let mut items: Vec<ResourceTemplate> = registry::served_in(call.ctx.profile())
        .filter_map(|(_, d)| {
            let template = d.mcp_resource.filter(|uri| registry::is_template(uri))?;
            Some(ResourceTemplate {
                uri_template: template.into(),
                name: d.id.into(),
                description: d.description.into(),
                mime_type: d.resource_mime().into(),
            })
        })
        .collect();
    items.extend(knowledge_templates(call.ctx));
    let (resource_templates, next_cursor) =
        page(items, params.cursor.as_ref(), "resources/templates/list")?;
    Ok(Body::of(&ListTemplatesResult {
        resource_templates,
        next_cursor,
    }))
}

/// Cache hints of a read, from what the answer is a function of and what it reveals.
fn read_cache(determinism: Determinism, disclosure: Disclosure) -> (u64, &'static str) {
    let ttl = match determinism {
        Determinism::Input => TTL_STATIC_MS,
        Determinism::Repository | Determinism::Process | Determinism::Client => 0,
    };
    let scope = match disclosure {
        Disclosure::Repository => "private",
        Disclosure::None | Disclosure::Metadata => "public",
    };
    (ttl, scope)
}

fn read(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let ReadResourceParams { uri } = parse(
        call.params,
        "invalid params: `resources/read` needs `params.uri`, a string",
    )?;
    let era = call.era;
    // The peer of the request lasts to the answer: a read that needs approval (a registry
    // resource of disclosure `repository`, a knowledge object as knowledge.get) asks through it.
    let peer: std::sync::Arc<dyn seneschal_core::interact::Peer> =
        std::sync::Arc::new(crate::peer::McpPeer::of(call));
    let caller = seneschal_core::execute::Caller::new(Transport::Mcp, peer);
    let found = registry::by_resource(&uri)
        .map(|(index, d)| (index, d, json!({})))
        .or_else(|| registry::by_resource_template(&uri));
    let (mime_type, text, (ttl, scope)) = if let Some((index, d, args)) = found {
        let out = execute_index(call.ctx, index, args, caller.clone())
            .map_err(|e| capability_rpc_error(era, &uri, e))?;
        let field = |name: &str| {
            out.get(name)
                .and_then(|t| t.as_str())
                .map(|t| t.to_string())
        };
        let text = match d.kind {
            Kind::Resource => match field("blob") {
                Some(blob) => ResourceBody::Blob(blob),
                None => ResourceBody::Text(field("text").unwrap_or_default()),
            },
            Kind::Query => {
                ResourceBody::Text(serde_json::to_string(&out).expect("values serialize"))
            }
        };
        (
            d.resource_mime().to_string(),
            text,
            read_cache(d.determinism, d.disclosure),
        )
    } else if let Some((mime, text)) =
        knowledge_read(call.ctx, &uri, &caller).map_err(|e| capability_rpc_error(era, &uri, e))?
    {
        (
            mime,
            ResourceBody::Text(text),
            read_cache(Determinism::Repository, Disclosure::Repository),
        )
    } else {
        return Err(not_found(era, &uri));
    };
    let modern = era == Era::Modern;
    Ok(Body::of(&ReadResourceResult {
        contents: [ResourceContents {
            uri,
            mime_type,
            body: text,
        }],
        ttl_ms: modern.then_some(ttl),
        cache_scope: modern.then_some(scope),
    }))
}

/// Resource not found: -32002 in the initialize era, -32602 from 2026-07-28 on.
fn not_found(era: Era, uri: &str) -> RpcError {
    let code = match era {
        Era::Legacy => RESOURCE_NOT_FOUND_LEGACY,
        Era::Modern => INVALID_PARAMS,
    };
    RpcError::new(code, format!("resource not found: `{uri}`")).with_data(json!({"uri": uri}))
}

/// A capability error met outside `tools/call` (a resource read) as a JSON-RPC error.
fn capability_rpc_error(era: Era, uri: &str, e: CapabilityError) -> RpcError {
    if e.code == ErrorCode::NotFound {
        return not_found(era, uri);
    }
    let code = match e.code {
        ErrorCode::InvalidInput => INVALID_PARAMS,
        _ => INTERNAL_ERROR,
    };
    RpcError::new(code, e.message.clone()).with_data(json!({"seneschal/error": e.to_json()}))
}
