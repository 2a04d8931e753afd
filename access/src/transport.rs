//! How a call arrived: a leaf every layer may name (the executor records it, the store
//! audits it, each transport passes its own), importing nothing of the crate.

/// How a call arrived; recorded (audit), never passed to a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The command line.
    Cli,
    /// MCP over stdio or Streamable HTTP.
    Mcp,
    /// The HTTP API.
    Http,
    /// The behaviour-conformance harness.
    Conformance,
}

impl Transport {
    /// Its spelling in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Cli => "cli",
            Transport::Mcp => "mcp",
            Transport::Http => "http",
            Transport::Conformance => "conformance",
        }
    }
}
