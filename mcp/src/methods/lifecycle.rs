//! The lifecycle: `initialize` and `ping` (initialize era), `server/discover` (2026-07-28),
//! and the instructions both announce.

use std::sync::Mutex;

use super::super::feature::{
    capabilities_in, supported_versions, Call, Feature, Method, Notification,
};
use super::super::model::{
    parse, Body, DigestMeta, DiscoverResult, EmptyResult, Era, InitializeParams, InitializeResult,
    RpcError, ServerInfo, TTL_STATIC_MS,
};
use seneschal_core::registry::{projections, served_in, served_tools};
use seneschal_model::policy::Approval;
use seneschal_model::policy::Effect;
use seneschal_model::toolset::{Profile, Toolset, SHARED_INPUTS};
use seneschal_model::versions::MCP_LEGACY_VERSIONS;

/// The lifecycle: no capability of its own; the handshake, `ping` and `server/discover`.
pub const FEATURE: Feature = Feature {
    capability: None,
    methods: &[
        Method {
            name: "initialize",
            answer: initialize,
        },
        Method {
            name: "ping",
            answer: |_| Ok(Body::of(&EmptyResult {})),
        },
        Method {
            name: "server/discover",
            answer: |call| Ok(Body::of(&discover(call.features, call.ctx.profile()))),
        },
    ],
    notifications: &[
        Notification {
            name: "notifications/initialized",
            note: |_, session| {
                if session.legacy_version.is_none() {
                    eprintln!(
                        "seneschal mcp: notifications/initialized before initialize; ignored"
                    );
                }
            },
        },
        // Taken by the transport's reader before dispatch (`link::Pending::take`), so that
        // it reaches a request still running; nothing is left to do here.
        Notification {
            name: "notifications/cancelled",
            note: |_, _| {},
        },
    ],
};

fn initialize(call: &mut Call<'_>) -> Result<Body, RpcError> {
    let params: InitializeParams = parse(
        call.params,
        "invalid params: `initialize` needs `params.protocolVersion`, a string",
    )?;
    let latest = MCP_LEGACY_VERSIONS[MCP_LEGACY_VERSIONS.len() - 1];
    let chosen = MCP_LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == params.protocol_version)
        .unwrap_or(latest);
    call.session.legacy_version = Some(chosen);
    call.session.client_capabilities = params.capabilities;
    call.session.client_info = crate::peer::client_info(call.params.get("clientInfo"));
    Ok(Body::of(&InitializeResult {
        protocol_version: chosen,
        capabilities: capabilities_in(call.features, Era::Legacy),
        server_info: ServerInfo::THIS,
        instructions: instructions(call.ctx.profile()),
        meta: DigestMeta {
            digest: projections::DIGEST,
        },
    }))
}

fn discover(features: &[&Feature], profile: Profile) -> DiscoverResult {
    DiscoverResult {
        supported_versions: supported_versions(),
        capabilities: capabilities_in(features, Era::Modern),
        instructions: instructions(profile),
        ttl_ms: TTL_STATIC_MS,
        cache_scope: "public",
        meta: DigestMeta {
            digest: projections::DIGEST,
        },
    }
}

/// The instructions of `initialize` and `server/discover`, derived from the registry: the
/// tools that write to the repository, those that change only this process, the profile.
/// Computed once per profile, for the life of the process.
pub fn instructions(profile: Profile) -> &'static str {
    static TEXT: Mutex<Vec<(Profile, &'static str)>> = Mutex::new(Vec::new());
    let mut done = TEXT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, text)) = done.iter().find(|(p, _)| *p == profile) {
        return text;
    }
    let text: &'static str = Box::leak(instructions_text(profile).into_boxed_str());
    done.push((profile, text));
    text
}

fn instructions_text(profile: Profile) -> String {
    let max_effect = profile.max_effect;
    {
        // Every tool of an effect, served or not: a narrowed process names what it disables.
        let tools_with = |effect: Effect| -> Vec<&'static str> {
            let every_effect = Profile {
                max_effect: Effect::RepositoryWrite,
                toolsets: profile.toolsets,
            };
            served_tools(every_effect, effect).collect()
        };
        let mut s = String::from(
            "seneschal stewards one git repository: its knowledge, queries about it and writes to it. \
             Paths are repository-relative; a revision is a commit id, branch, tag or an expression \
             such as HEAD~2. A failed call is a tool result with isError and a stable code in _meta[\"seneschal/error\"].code.",
        );
        // The tools of an effect: disabled above the profile, listed otherwise.
        let sentence = |effect: Effect, what: &str, disabled_where: &str, enabled: &str| {
            let tools = tools_with(effect).join(", ");
            if effect > max_effect {
                format!(
                    " The tools that {what} ({tools}) are disabled{disabled_where} (--allow-effects {}).",
                    max_effect.as_str()
                )
            } else {
                format!(" {enabled}: {tools}.")
            }
        };
        if tools_with(Effect::RepositoryWrite).is_empty() {
            s.push_str(" No tool writes to the repository in this build.");
        } else {
            s.push_str(&sentence(
                Effect::RepositoryWrite,
                "write to the repository",
                " in this process",
                "Tools that write to the repository (confirm each call)",
            ));
        }
        if max_effect >= Effect::RepositoryWrite && !tools_with(Effect::RepositoryWrite).is_empty()
        {
            // Said once here, not in every tool entry (`SHARED_INPUTS`).
            let each: Vec<String> = SHARED_INPUTS
                .iter()
                .map(|(name, what)| format!("{name} {what}"))
                .collect();
            s.push_str(&format!(" In every write, {}.", each.join("; ")));
        }
        if !tools_with(Effect::ProcessState).is_empty() {
            s.push_str(&sentence(
                Effect::ProcessState,
                "change this process's memory",
                "",
                "Tools that change only this process's memory (approved once a session)",
            ));
        }
        // The approval of a read: once a session for one that shows repository content.
        let free: Vec<&str> = served_in(profile)
            .filter(|(_, d)| d.effect == Effect::Read && d.approval() == Approval::None)
            .filter_map(|(_, d)| d.mcp_tool)
            .collect();
        s.push_str(" Every other tool only reads, approved once a session");
        if !free.is_empty() {
            let need = if free.len() == 1 { "needs" } else { "need" };
            s.push_str(&format!(" ({} {need} no approval)", free.join(", ")));
        }
        s.push_str(". The repository's skills are its prompts.");
        let off: Vec<&str> = Toolset::ALL
            .iter()
            .filter(|t| !profile.toolsets.contains(**t))
            .map(|t| t.as_str())
            .collect();
        if !off.is_empty() {
            s.push_str(&format!(
                " Toolsets not served here: {} (--toolsets {}).",
                off.join(", "),
                profile.toolsets.spelling()
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::dispatch::FEATURES;
    use super::super::super::feature::modern_result;
    use super::super::super::model::{Era, Session, META_DIGEST, META_SERVER_INFO};
    use super::*;
    use seneschal_core::context::Context;
    use seneschal_core::registry::CAPABILITIES;
    use seneschal_model::versions::SERVER_NAME;

    #[test]
    fn the_digest_is_in_initialize_and_discover() {
        let ctx = Context::new(std::env::temp_dir(), Effect::RepositoryWrite);
        let mut session = Session::default();
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}});
        let mut call = Call {
            ctx: &ctx,
            session: &mut session,
            era: Era::Legacy,
            params: &params,
            id: &serde_json::Value::from(1),
            link: &crate::link::Link::closed(),
            features: FEATURES,
        };
        let Ok(Body::Value(v)) = initialize(&mut call) else {
            panic!("initialize answers a value");
        };
        assert_eq!(v["_meta"][META_DIGEST], projections::DIGEST);
        assert_eq!(session.legacy_version, Some("2025-11-25"));
        let d = modern_result(
            "server/discover",
            serde_json::to_value(discover(FEATURES, Profile::FULL)).unwrap(),
        );
        assert_eq!(d["_meta"][META_DIGEST], projections::DIGEST);
        assert_eq!(d["_meta"][META_SERVER_INFO]["name"], SERVER_NAME);
    }

    #[test]
    fn instructions_say_when_nothing_writes() {
        let text = instructions(Profile::FULL);
        let writers: Vec<&str> = CAPABILITIES
            .iter()
            .filter(|d| d.executable() && d.effect == Effect::RepositoryWrite)
            .filter_map(|d| d.mcp_tool)
            .collect();
        if writers.is_empty() {
            assert!(text.contains("No tool writes to the repository"), "{text}");
        } else {
            for w in writers {
                assert!(text.contains(w), "{text} lacks {w}");
            }
        }
    }
}
