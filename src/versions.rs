//! Names and protocol versions every projection announces.
//!
//! Dependency-free: the build-time codegen crate compiles this file too (through a `#[path]`
//! include), so the server card and the MCP server cannot disagree on them.

/// The server's name on every surface (MCP `serverInfo.name`, the card's title).
pub const SERVER_NAME: &str = "seneschal";

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
