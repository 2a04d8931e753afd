//! MCP: the dual-era JSON-RPC projection over stdio and Streamable HTTP (see issue 3).
//!
//! **Architecture invariant:** only this module knows JSON-RPC. [`protocol`] sorts and
//! answers messages for both eras; [`stdio`] and [`http`] only move bytes; tools and
//! resources run through [`crate::execute`], and `tools/list` is the build's bytes.

pub mod http;
pub mod inspect;
pub mod protocol;
pub mod stdio;
pub mod wire;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::codes::ErrorCode;
use crate::context::Context;
use crate::policy::Effect;

/// The `seneschal mcp` subcommand's arguments.
pub fn command() -> Command {
    Command::new("mcp")
        .about("Serve MCP over stdio (newline-delimited JSON-RPC; logs on stderr)")
        .long_about(
            "Serve MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, logs on stderr, \
             exit 0 at end of input. Both eras are served: initialize-era clients (2024-11-05 … \
             2025-11-25) and 2026-07-28 clients (server/discover, per-request _meta).",
        )
        .arg(
            Arg::new("allow-effects")
                .long("allow-effects")
                .value_name("EFFECT")
                .value_parser(Effect::ALL.map(Effect::as_str))
                .default_value(Effect::RepositoryWrite.as_str())
                .help("List and execute only tools whose effect is at most this one (least privilege)"),
        )
        .arg(
            Arg::new("inspect")
                .long("inspect")
                .action(ArgAction::SetTrue)
                .help("Print the MCP projection (capability mcp.projection) and exit"),
        )
}

/// Runs `seneschal mcp`.
pub fn cli_main(repo: std::path::PathBuf, m: &ArgMatches) -> ExitCode {
    let max = m
        .get_one::<String>("allow-effects")
        .and_then(|e| Effect::parse(e))
        .unwrap_or(Effect::RepositoryWrite);
    let ctx = Context::new(repo, max);
    if m.get_flag("inspect") {
        let json = m
            .try_get_one::<bool>("json")
            .ok()
            .flatten()
            .copied()
            .unwrap_or(false)
            || !std::io::stdout().is_terminal();
        return inspect::run(&ctx, json);
    }
    eprintln!(
        "seneschal mcp: serving {} over stdio (--allow-effects {})",
        ctx.repo.display(),
        max.as_str()
    );
    match stdio::serve(
        &ctx,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        stdio::MAX_LINE,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error[internal]: stdio failed: {e}");
            ExitCode::from(ErrorCode::Internal.exit_code())
        }
    }
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
pub fn http_post(ctx: &Arc<Context>, headers: &[(String, String)], body: &[u8]) -> HttpReply {
    http::post(ctx, headers, body)
}
