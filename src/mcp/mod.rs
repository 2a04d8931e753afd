//! MCP: the dual-era JSON-RPC projection over stdio and Streamable HTTP (see issue 3).
//!
//! **Architecture invariant:** only this module knows JSON-RPC.

use std::process::ExitCode;

use clap::{ArgMatches, Command};

/// The `seneschal mcp` subcommand's arguments.
pub fn command() -> Command {
    Command::new("mcp").about("Serve MCP over stdio (newline-delimited JSON-RPC; logs on stderr)")
}

/// Runs `seneschal mcp`.
pub fn cli_main(_repo: std::path::PathBuf, _m: &ArgMatches) -> ExitCode {
    eprintln!("error[unsupported]: the MCP server is not built yet");
    ExitCode::from(crate::codes::ErrorCode::Unsupported.exit_code())
}

/// An HTTP answer from the MCP projection, for `http/` to send as it is.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Extra headers (Content-Type included).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// Answers one `POST /mcp` (Streamable HTTP) after `http/` has checked Origin and Host.
/// `headers` are the request headers, names lower-cased.
pub fn http_post(
    _ctx: &std::sync::Arc<crate::context::Context>,
    _headers: &[(String, String)],
    _body: &[u8],
) -> HttpReply {
    HttpReply {
        status: 501,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"MCP is not built yet"}}"#.to_vec(),
    }
}
