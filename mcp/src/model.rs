//! The typed model of the MCP projection: JSON-RPC error codes, the reserved `_meta` keys,
//! eras, the per-connection session, errors, result bodies, and the params and results of
//! every method served, as serde structs.
//!
//! Params are read into these structs once, at the edge ([`parse`]); a method never picks a
//! `serde_json::Value` apart. Free-form parts (tool arguments, schemas) stay `Value` inside
//! them. Results serialize through `serde_json::Value`, whose maps are sorted by key, so the
//! bytes do not depend on the order of the fields declared here.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use seneschal_model::versions::SERVER_NAME;

/// JSON-RPC: the text is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method is not in the era's METHODS table.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the parameters are wrong (unknown tool, bad cursor, missing `_meta`).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: a fault inside seneschal.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP 2026-07-28: HTTP headers disagree with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability its `_meta` does not declare
/// (`data.requiredCapabilities` names it).
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// MCP 2026-07-28: the request's protocol version is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// MCP 2025-11-25 and earlier: resource not found (2026-07-28 uses -32602).
pub const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;
/// Streamable HTTP: the `Mcp-Session-Id` names no session (never minted, ended or expired).
pub const SESSION_NOT_FOUND: i64 = -32001;

/// The `_meta` key of the per-request protocol version (modern era).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the per-request client capabilities (modern era).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The result `_meta` key of the contract digest (`generated/contract.lock`), in the
/// `initialize` and `server/discover` results, as on the HTTP server card.
pub const META_DIGEST: &str = "seneschal/digest";
/// The result `_meta` key naming the server (modern era).
pub use seneschal_model::versions::META_SERVER_INFO;
/// The result `_meta` key of a failed tool call's stable error.
pub const META_ERROR: &str = "seneschal/error";

pub use seneschal_model::versions::{LEGACY_METHODS, MODERN_METHODS, NOT_SERVED};

/// How long a client may cache lists and reads that depend on the binary alone.
pub use seneschal_model::versions::MCP_TTL_STATIC_MS as TTL_STATIC_MS;

/// How many items one page of `resources/list` or `resources/templates/list` holds.
pub const PAGE: usize = seneschal_access::limits::PAGE_ITEMS;

/// Which protocol generation a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, 2024-11-05 … 2025-11-25.
    Legacy,
    /// Per-request `_meta`, 2026-07-28.
    Modern,
}

/// The state one connection keeps: only the legacy era has any.
#[derive(Debug, Default, Clone)]
pub struct Session {
    /// The legacy revision negotiated by `initialize`, if any.
    pub legacy_version: Option<&'static str>,
    /// The `capabilities` the client declared in `initialize` (`{}` before it).
    pub client_capabilities: Map<String, Value>,
    /// The least severe level of log messages the client asked for (`logging/setLevel`).
    pub log_level: Option<seneschal_core::interact::LogLevel>,
    /// The capabilities approved for the rest of the session (`session`-level approval).
    pub approved: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// The resources the client subscribed to and where their notifications go
    /// (`resources/subscribe`).
    pub live: std::sync::Arc<super::live::Subscriptions>,
    /// Whether the client's answer to an approval question is the person's decision
    /// ([`seneschal_core::interact::Peer::vouched`]): on stdio, always (the process that started
    /// seneschal); over HTTP, for a request that carries the desk secret. No by default.
    pub vouched: bool,
    /// Whether the session outlives one request (stdio, an `/mcp` session with its id), so
    /// that what it remembers (a consent, a grant) holds for its next calls.
    pub remembers: bool,
    /// The client's name and version from `initialize`'s `clientInfo`, as the desk shows them.
    pub client_info: Option<Value>,
}

impl Session {
    /// A session that behaves as if `initialize` had negotiated `version` (stateless HTTP).
    pub fn assumed(version: &'static str) -> Session {
        Session {
            legacy_version: Some(version),
            ..Session::default()
        }
    }
}

/// One JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// One sentence.
    pub message: String,
    /// Details.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// Adds details.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The JSON-RPC `error` member.
    pub fn to_json(&self) -> Value {
        let mut err = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            err["data"] = d.clone();
        }
        err
    }
}

/// A result body: a JSON value, or bytes already serialized (compact JSON) that are sent as
/// they are, whatever the era (they carry the era's fields already).
#[derive(Debug)]
pub enum Body {
    /// A result object; the modern era's fields are added to it on the way out.
    Value(Value),
    /// Bytes the build produced.
    Raw(&'static str),
    /// Bytes assembled for this answer.
    Owned(String),
}

impl Body {
    /// The body of a typed result.
    pub fn of<T: Serialize>(result: &T) -> Body {
        Body::Value(serde_json::to_value(result).expect("results serialize"))
    }
}

/// Reads a method's params into its typed form; any mismatch is `-32602` with `message`.
pub fn parse<T: DeserializeOwned>(params: &Value, message: &str) -> Result<T, RpcError> {
    T::deserialize(params).map_err(|_| RpcError::invalid_params(message))
}

/// `serverInfo`: who answers.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    /// [`SERVER_NAME`].
    pub name: &'static str,
    /// The name for people.
    pub title: &'static str,
    /// The package version.
    pub version: &'static str,
}

impl ServerInfo {
    /// This server.
    pub const THIS: ServerInfo = ServerInfo {
        name: SERVER_NAME,
        title: seneschal_model::versions::SERVER_TITLE,
        version: env!("CARGO_PKG_VERSION"),
    };
}

/// The JSON of `T`'s default: a capability's value with each of its options off.
pub fn default_json<T: Serialize + Default>() -> Value {
    serde_json::to_value(T::default()).expect("capabilities serialize")
}

/// A capability that may announce list changes (by default, it does not).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChanged {
    /// Whether `notifications/*/list_changed` is sent.
    pub list_changed: bool,
}

/// The `resources` capability (by default, neither subscriptions nor list changes).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is served.
    pub subscribe: bool,
    /// Whether `notifications/resources/list_changed` is sent.
    pub list_changed: bool,
}

/// The `_meta` of `initialize` and `server/discover`: the contract digest.
#[derive(Debug, Clone, Serialize)]
pub struct DigestMeta {
    /// [`META_DIGEST`].
    #[serde(rename = "seneschal/digest")]
    pub digest: &'static str,
}

/// `initialize` params (initialize era).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The revision the client asks for.
    pub protocol_version: String,
    /// What the client offers (elicitation, sampling, roots, ...).
    #[serde(default)]
    pub capabilities: Map<String, Value>,
}

/// `initialize` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated revision.
    pub protocol_version: &'static str,
    /// What this server offers: each feature's member.
    pub capabilities: Map<String, Value>,
    /// Who answers.
    pub server_info: ServerInfo,
    /// How to use this server.
    pub instructions: &'static str,
    /// The contract digest.
    #[serde(rename = "_meta")]
    pub meta: DigestMeta,
}

/// `server/discover` result (2026-07-28).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every revision served, newest first.
    pub supported_versions: Vec<&'static str>,
    /// What this server offers: each feature's member.
    pub capabilities: Map<String, Value>,
    /// How to use this server.
    pub instructions: &'static str,
    /// Cache hint.
    pub ttl_ms: u64,
    /// Cache hint.
    pub cache_scope: &'static str,
    /// The contract digest.
    #[serde(rename = "_meta")]
    pub meta: DigestMeta,
}

/// The params of a paginated list (`tools/list`, `resources/list`, ...).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListParams {
    /// The opaque cursor of the page asked for; any JSON, so that a wrong one is named.
    pub cursor: Option<Value>,
}

impl ListParams {
    /// The params of a list request (an object). Reading them cannot fail, since a cursor may
    /// be any JSON: a wrong one is refused by the list it does not name.
    pub fn of(params: &Value) -> ListParams {
        ListParams::deserialize(params).unwrap_or_default()
    }
}

/// `tools/call` params.
#[derive(Debug, Clone, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its input, validated by the executor against the manifest's schema.
    pub arguments: Option<Value>,
}

/// One content block of a tool result.
#[derive(Debug, Clone, Serialize)]
pub struct TextContent {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The text.
    pub text: String,
}

/// A failed `CallToolResult`: the message as text, the stable error in `_meta`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolError {
    /// The message, once.
    pub content: [TextContent; 1],
    /// Always true.
    pub is_error: bool,
    /// `{"seneschal/error": {code, pointer?, data?}}`.
    #[serde(rename = "_meta")]
    pub meta: Map<String, Value>,
}

/// `resources/read` params.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadResourceParams {
    /// The resource.
    pub uri: String,
}

/// `resources/subscribe` and `resources/unsubscribe` params.
#[derive(Debug, Clone, Deserialize)]
pub struct SubscribeParams {
    /// The resource.
    pub uri: String,
}

/// One entry of `resources/list`: a registry resource or a knowledge object.
pub use seneschal_knowledge::Resource;

/// One entry of `resources/templates/list`: a kind's URI template.
pub use seneschal_knowledge::Template as ResourceTemplate;

/// `resources/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// One page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/templates/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTemplatesResult {
    /// One page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The contents of one resource: text, or bytes as `blob` (base64).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// Its URI.
    pub uri: String,
    /// Its media type.
    pub mime_type: String,
    /// Its text or its bytes.
    #[serde(flatten)]
    pub body: ResourceBody,
}

/// What a resource holds: `text`, or `blob` (base64) for a binary resource.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ResourceBody {
    /// Textual content.
    Text(String),
    /// Binary content, base64-encoded.
    Blob(String),
}

/// `resources/read` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The one resource read.
    pub contents: [ResourceContents; 1],
    /// Cache hint (modern era only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache hint (modern era only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<&'static str>,
}

/// The `prompts` capability: no list changes are announced.
pub type PromptsCapability = ListChanged;

/// One entry of `prompts/list`: an object of a kind declared `prompt: true`.
pub use seneschal_knowledge::prompts::Prompt;

/// A rendered prompt's description and messages (`prompts/get`).
pub use seneschal_knowledge::prompts::Rendered as RenderedPrompt;

/// `prompts/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// One page.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `prompts/get` params.
#[derive(Debug, Clone, Deserialize)]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Its arguments; each value must be a string (checked when rendered, so that the error
    /// names the argument).
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
}

/// The `completions` capability (an empty object).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompletionsCapability {}

/// What `completion/complete` completes.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// A prompt's argument.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt.
        name: String,
    },
    /// A resource template's variable.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template (`seneschal://knowledge/{kind}/{id}` or a kind's own).
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Arguments already given (`context.arguments`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CompletionContext {
    /// Earlier arguments by name.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// `completion/complete` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteParams {
    /// What is completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument.
    pub argument: CompletionArgument,
    /// Earlier arguments.
    #[serde(default)]
    pub context: Option<CompletionContext>,
}

/// The values offered.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most [`MAX_COMPLETIONS`] values, sorted.
    pub values: Vec<String>,
    /// How many match in all.
    pub total: usize,
    /// Whether more match than are sent.
    pub has_more: bool,
}

/// The most values one completion sends (the protocol's cap).
pub const MAX_COMPLETIONS: usize = seneschal_access::limits::MCP_COMPLETIONS;

/// `completion/complete` result.
#[derive(Debug, Clone, Serialize)]
pub struct CompleteResult {
    /// The values.
    pub completion: Completion,
}

/// The empty result (`ping`).
#[derive(Debug, Clone, Serialize)]
pub struct EmptyResult {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_read_once_with_the_method_s_message() {
        let ok = json!({"name": "t", "arguments": 5, "_meta": {}});
        let p: CallToolParams = parse(&ok, "m").unwrap();
        assert_eq!((p.name.as_str(), p.arguments), ("t", Some(json!(5))));
        let bad = json!({"name": 5});
        let e = parse::<CallToolParams>(&bad, "needs a name").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (INVALID_PARAMS, "needs a name")
        );
        let none = json!({"cursor": null});
        assert!(ListParams::of(&none).cursor.is_none());
        assert_eq!(ListParams::of(&json!({"cursor": 5})).cursor, Some(json!(5)));
    }

    #[test]
    fn resource_contents_carry_text_or_blob() {
        let text = ResourceContents {
            uri: "a://b".into(),
            mime_type: "text/plain".into(),
            body: ResourceBody::Text("hi".into()),
        };
        assert_eq!(
            serde_json::to_value(text).unwrap(),
            json!({"uri": "a://b", "mimeType": "text/plain", "text": "hi"})
        );
        let blob = ResourceContents {
            uri: "a://c".into(),
            mime_type: "image/png".into(),
            body: ResourceBody::Blob("AAE=".into()),
        };
        assert_eq!(
            serde_json::to_value(blob).unwrap(),
            json!({"uri": "a://c", "mimeType": "image/png", "blob": "AAE="})
        );
    }
}
