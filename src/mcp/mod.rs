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
