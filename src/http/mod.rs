//! HTTP: the loopback API, OpenAPI, Swagger UI, server card and cockpit (see issue 12).
//!
//! **Architecture invariant:** only this module knows HTTP.

use std::process::ExitCode;

use clap::{ArgMatches, Command};

/// The `seneschal serve` subcommand's arguments.
pub fn command() -> Command {
    Command::new("serve")
        .about("Serve the HTTP API, Swagger UI, the server card and MCP at /mcp on loopback")
}

/// Runs `seneschal serve`.
pub fn cli_main(_repo: std::path::PathBuf, _m: &ArgMatches) -> ExitCode {
    eprintln!("error[unsupported]: the HTTP server is not built yet");
    ExitCode::from(crate::codes::ErrorCode::Unsupported.exit_code())
}
