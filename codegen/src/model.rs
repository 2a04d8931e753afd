//! The typed registry: what a manifest says once it has been parsed and checked.
//!
//! Projections read these structures, never raw YAML (STYLE 2).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codes::ErrorCode;
use crate::policy::{Approval, Class, Effect, Hints, Stability};

/// One manifest file as written (after the schema check, so every field is well typed).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub id: String,
    pub kind: String,
    pub title: String,
    pub description: String,
    #[serde(default)]
    pub handler: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Queries only: the MCP content blocks the answer carries (see
    /// [`crate::load::content_schema`]).
    #[serde(default)]
    pub content_blocks: Vec<String>,
    /// Queries exposed as MCP tools only: `optional` or `required` task support (the MCP
    /// tasks extension); never a task when absent.
    #[serde(default)]
    pub task: Option<String>,
    /// With `task` only: the call's questions are asked through MCP 2026-07-28 input-required
    /// rounds before its task is created, and the task runs with the answers.
    #[serde(default)]
    pub task_asks_first: bool,
    pub effect: String,
    /// Only with `effect: repository_write`: the capability adds files and never changes an
    /// existing byte (a create that refuses to overwrite), so it is not destructive.
    #[serde(default)]
    pub additive: bool,
    /// Only with `effect: repository_write`: the capability changes the repository's git
    /// state (the index, refs, HEAD, objects under `.git/`), through the same store.
    #[serde(default)]
    pub git_state: bool,
    pub disclosure: String,
    pub determinism: String,
    pub stability: String,
    /// The toolset the capability belongs to (`--toolsets`).
    pub toolset: String,
    /// Maintainer-level detail: the reference and OpenAPI only, never the MCP tool list.
    #[serde(default)]
    pub details: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub input: Option<Value>,
    #[serde(default)]
    pub output: Option<Value>,
    #[serde(default)]
    pub errors: Vec<String>,
    pub expose: Expose,
    pub review: String,
    #[serde(default)]
    pub examples: Vec<Example>,
}

/// The exposures a manifest declares; each explicit, none derived.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expose {
    #[serde(default)]
    pub mcp_tool: Option<String>,
    #[serde(default)]
    pub mcp_resource: Option<String>,
    #[serde(default)]
    pub http: Option<HttpRoute>,
    #[serde(default)]
    pub cli: Option<Vec<String>>,
}

/// An HTTP method and path.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HttpRoute {
    pub method: String,
    pub path: String,
}

/// A declared example: feeds the reference, OpenAPI and the conformance harness.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub title: String,
    pub input: Value,
    pub outcome: String,
}

/// Whether a handler runs or repository content is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Query,
    Resource,
}

/// One capability of the registry, fully typed. It dereferences to its [`Class`] (effect,
/// disclosure, determinism, stability): `c.effect`, `c.hints()`, `c.approval()`,
/// `c.within(max)` and `c.served_by(max)` are the model's one implementation.
#[derive(Debug, Clone)]
pub struct Capability {
    pub id: String,
    /// The manifest file, relative to the crate root (for messages and docs).
    pub source: PathBuf,
    pub kind: Kind,
    pub title: String,
    pub description: String,
    /// Maintainer-level detail (the manifest's `details`), for the reference and OpenAPI.
    pub details: Option<String>,
    /// `(module, function)` under `core/src/handlers/`.
    pub handler: Option<(String, String)>,
    /// Repository-relative content file of a resource.
    pub content: Option<String>,
    pub mime_type: String,
    /// The MCP content blocks a query's answer carries in its `content` field (empty: none).
    pub content_blocks: Vec<String>,
    /// Task support over MCP (`optional` or `required`); `None`: never a task.
    pub task: Option<String>,
    /// The call's questions come before its task (`task_asks_first`).
    pub task_asks_first: bool,
    /// What the manifest declares about the capability's behaviour.
    pub class: Class,
    /// The capability changes the repository's git state (index, refs, HEAD) under `.git/`.
    pub git_state: bool,
    pub tags: Vec<String>,
    pub input: Value,
    pub output: Value,
    pub errors: Vec<ErrorCode>,
    pub expose: Expose,
    pub review: String,
    pub examples: Vec<Example>,
}

impl std::ops::Deref for Capability {
    type Target = Class;

    fn deref(&self) -> &Class {
        &self.class
    }
}

impl Capability {
    /// Every error code a call can return: the universal ones plus the declared ones.
    pub fn all_errors(&self) -> Vec<ErrorCode> {
        let mut all: Vec<ErrorCode> = ErrorCode::UNIVERSAL.to_vec();
        if self.stability == Stability::Planned {
            all.push(ErrorCode::Unsupported);
        }
        all.extend(self.errors.iter().copied());
        all.push(ErrorCode::Refused); // the effect policy may refuse any call
        if self.approval() != Approval::None {
            all.push(ErrorCode::NotApproved); // the approval gate may refuse it
        }
        all.sort();
        all.dedup();
        all
    }

    /// The Rust module name of this capability's generated types.
    pub fn module_name(&self) -> String {
        self.id.replace('.', "_")
    }

    /// The kind's spelling.
    pub fn kind_str(&self) -> &'static str {
        match self.kind {
            Kind::Query => "query",
            Kind::Resource => "resource",
        }
    }

    /// A resource whose media type is not textual ([`textual`]): embedded as bytes, read as
    /// `blob` (base64).
    pub fn binary(&self) -> bool {
        self.kind == Kind::Resource && !textual(&self.mime_type)
    }

    /// The whole descriptor as JSON: what `capabilities.show` returns.
    pub fn descriptor(&self) -> Value {
        let hints = self.hints();
        let mut d = serde_json::json!({
            "id": self.id,
            "kind": self.kind_str(),
            "title": self.title,
            "description": self.description,
            "handler": self.handler.as_ref().map(|(m, f)| format!("{m}::{f}")),
            "content": self.content,
            "mime_type": if self.kind == Kind::Resource { Some(self.mime_type.clone()) } else { None },
            "effect": self.effect.as_str(),
            "disclosure": self.disclosure.as_str(),
            "determinism": self.determinism.as_str(),
            "stability": self.stability.as_str(),
            "toolset": self.toolset.as_str(),
            "tags": self.tags,
            "input": self.input,
            "output": self.output,
            "errors": self.all_errors().iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            "hints": hints_json(hints),
            "approval": self.approval().as_str(),
            "expose": {
                "mcp_tool": self.expose.mcp_tool,
                "mcp_resource": self.expose.mcp_resource,
                "http": self.expose.http.as_ref().map(|h| serde_json::json!({"method": h.method, "path": h.path})),
                "cli": self.expose.cli,
            },
            "review": self.review,
            "examples": self.examples,
            "source": self.source.to_string_lossy().replace('\\', "/"),
        });
        self.mark_additive(&mut d, "additive");
        if self.git_state {
            d["git_state"] = serde_json::json!(true);
        }
        if let Some(details) = &self.details {
            d["details"] = serde_json::json!(details);
        }
        if !self.content_blocks.is_empty() {
            d["content_blocks"] = serde_json::json!(self.content_blocks);
        }
        if let Some(t) = &self.task {
            d["task"] = serde_json::json!(t);
        }
        if self.task_asks_first {
            d["task_asks_first"] = serde_json::json!(true);
        }
        d
    }

    /// Adds `key: true` to the object `v` when the capability is additive; like the manifest,
    /// every surface says so only when it is (absent means false).
    pub fn mark_additive(&self, v: &mut Value, key: &str) {
        if self.additive {
            v[key] = Value::Bool(true);
        }
    }
}

/// Whether content of this media type is text: `text/*`, JSON, XML, YAML, JavaScript, TOML,
/// or a `+json` / `+xml` suffix. A resource of any other type is binary.
pub fn textual(mime: &str) -> bool {
    let (top, sub) = mime.split_once('/').unwrap_or((mime, ""));
    top == "text"
        || sub.ends_with("+json")
        || sub.ends_with("+xml")
        || (top == "application"
            && matches!(
                sub,
                "json" | "xml" | "yaml" | "x-yaml" | "javascript" | "toml"
            ))
}

/// The four MCP annotations as JSON, in their wire spelling.
pub fn hints_json(h: Hints) -> Value {
    serde_json::json!({
        "readOnlyHint": h.read_only,
        "destructiveHint": h.destructive,
        "idempotentHint": h.idempotent,
        "openWorldHint": h.open_world,
    })
}

/// The whole registry, sorted by canonical id.
#[derive(Debug, Clone)]
pub struct Registry {
    pub capabilities: Vec<Capability>,
    /// The package version the projections announce.
    pub version: String,
}

impl Registry {
    /// Capabilities that are executable through some projection.
    pub fn executable(&self) -> impl Iterator<Item = &Capability> {
        self.capabilities.iter().filter(|c| c.executable())
    }

    /// What a process started with `--allow-effects max` executes: the executable
    /// capabilities whose effect is at most `max`. Every per-profile projection (tools, card,
    /// OpenAPI, cockpit) lists these and nothing else.
    pub fn served(&self, max: Effect) -> impl Iterator<Item = &Capability> {
        self.capabilities.iter().filter(move |c| c.served_by(max))
    }

    /// What a profile may mention: the capabilities whose effect is at most `max`, planned
    /// ones included (listed as planned, never as executable).
    pub fn within(&self, max: Effect) -> impl Iterator<Item = &Capability> {
        self.capabilities.iter().filter(move |c| c.within(max))
    }
}
