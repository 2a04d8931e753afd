//! Names, protocol versions and MCP methods every projection announces.
//!
//! The build-time codegen renders the server card from these and the MCP server answers from
//! them, so the two cannot disagree.

/// The server's name on every surface (MCP `serverInfo.name`, the card's title).
pub const SERVER_NAME: &str = "seneschal";

/// The server's title for people (MCP `serverInfo.title`).
pub const SERVER_TITLE: &str = "seneschal";

/// The MCP result `_meta` key naming the server (2026-07-28).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long an MCP client may cache lists and reads that depend on the binary alone (ms).
pub const MCP_TTL_STATIC_MS: u64 = 300_000;

/// The card's reverse-DNS name (SEP-2127 requires exactly one slash).
pub const SERVER_CARD_NAME: &str = "io.github.seneschal/seneschal";

/// MCP revisions of the `initialize` era, oldest first.
pub const MCP_LEGACY_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// MCP revisions of the modern era (no handshake; `server/discover`), oldest first.
pub const MCP_MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// Every MCP revision served, oldest first.
pub const MCP_ALL_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Where the Streamable HTTP endpoint lives.
pub const MCP_HTTP_PATH: &str = "/mcp";

/// The server's MCP `capabilities`, as `initialize`, `server/discover` and the server card
/// announce them: one member per feature served (the MCP server's features are checked
/// against it, so the card cannot promise what the server does not serve).
pub const MCP_CAPABILITIES: &str = r#"{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"logging":{},"prompts":{"listChanged":false},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":false}}"#;

/// The methods of the `initialize` era (2024-11-05 … 2025-11-25).
pub const LEGACY_METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// The methods of the modern era (2026-07-28): no handshake, no ping.
pub const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "notifications/cancelled",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Methods a client may expect that are deliberately not served, with the reason.
pub const NOT_SERVED: &[(&str, &str)] = &[
    (
        "tasks/result",
        "the tasks extension (io.modelcontextprotocol/tasks) inlines a finished task's result in tasks/get",
    ),
    (
        "tasks/list",
        "the tasks extension (io.modelcontextprotocol/tasks) lists no tasks: a task is known to whoever created it",
    ),
    (
        "subscriptions/listen",
        "no change notifications are sent: the tool list is fixed for the binary",
    ),
];
