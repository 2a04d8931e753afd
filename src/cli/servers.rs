//! The two long-running commands, `seneschal mcp` and `seneschal serve`: their arguments and
//! the typed options they parse to. The transports ([`crate::mcp`], [`crate::http`]) take
//! those options and know nothing of argv.

use std::net::SocketAddr;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::error::CapabilityError;
use crate::http::{DEFAULT_BIND, DEFAULT_TIMEOUT_SECS};
use crate::interact::ApprovalPolicy;
use crate::policy::Effect;
use crate::toolset::{Toolset, Toolsets};

/// `--allow-effects EFFECT`, the one definition every command shares: its values are
/// [`Effect::ALL`], its default the strongest, and it parses to an [`Effect`].
pub fn effect_arg(help: &'static str) -> Arg {
    let names: Vec<&'static str> = Effect::ALL.iter().map(|e| e.as_str()).collect();
    Arg::new("allow-effects")
        .long("allow-effects")
        .value_name("EFFECT")
        .value_parser(
            PossibleValuesParser::new(names)
                .map(|s: String| Effect::parse(&s).expect("one of the possible values")),
        )
        .default_value(Effect::RepositoryWrite.as_str())
        .help(help)
}

/// The help of `--allow-effects` on every command that executes capabilities.
pub const EFFECT_HELP: &str =
    "Execute only capabilities whose effect is at most this one (least privilege)";

/// The effect `--allow-effects` chose (the strongest when the command has no such flag).
pub fn max_effect(m: &ArgMatches) -> Effect {
    m.try_get_one::<Effect>("allow-effects")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(Effect::RepositoryWrite)
}

/// `--toolsets LIST`, the one definition `mcp` and `serve` share: which toolsets the process
/// lists and executes ([`Toolsets::parse`]), by default [`Toolsets::DEFAULT`].
pub fn toolsets_arg() -> Arg {
    Arg::new("toolsets")
        .long("toolsets")
        .value_name("LIST")
        .value_parser(|s: &str| Toolsets::parse(s))
        .env(TOOLSETS_ENV)
        .default_value("default")
        .help(toolsets_help())
}

/// The environment variable `--toolsets` falls back on (a client configuration's `env` can
/// set it where its `args` cannot be changed).
pub const TOOLSETS_ENV: &str = "SENESCHAL_TOOLSETS";

/// The help of `--toolsets`: every toolset with what it holds.
fn toolsets_help() -> String {
    let each: Vec<String> = Toolset::ALL
        .iter()
        .map(|t| format!("{} ({})", t.as_str(), t.about()))
        .collect();
    format!(
        "Serve only these toolsets, comma-separated: {}; `default` is all but introspection, `all` is every one (e.g. default,introspection)",
        each.join("; ")
    )
}

/// The toolsets `--toolsets` chose (every toolset when the command has no such flag).
pub fn toolsets(m: &ArgMatches) -> Toolsets {
    m.try_get_one::<Toolsets>("toolsets")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(Toolsets::ALL)
}

/// `--approval POLICY`, the one definition `mcp` and `serve` share: what a call that needs
/// approval meets when its client cannot be asked ([`ApprovalPolicy`]).
pub fn approval_arg() -> Arg {
    let names: Vec<&'static str> = ApprovalPolicy::ALL.iter().map(|p| p.as_str()).collect();
    Arg::new("approval")
        .long("approval")
        .value_name("POLICY")
        .value_parser(
            PossibleValuesParser::new(names)
                .map(|s: String| ApprovalPolicy::parse(&s).expect("one of the possible values")),
        )
        .default_value(ApprovalPolicy::default().as_str())
        .help(APPROVAL_HELP)
}

/// The help of `--approval`.
pub const APPROVAL_HELP: &str = "When a call needs approval (writes per call, repository reads and session state once per session) and the client cannot be asked: `ask` puts a write on the approval desk for the person (the cockpit of `seneschal serve`, or `seneschal approvals`), answers at once that it is pending, and applies it when the agent makes the same call again after the person approved; the rest runs, `trust-client` asks nothing and trusts the client's own confirmation, `deny` refuses both. A client that can be asked is asked under `ask` and `deny`";

/// `--approval-timeout SECS`, shared by `mcp` and `serve`: how long a write waits on the
/// approval desk under `ask`.
pub fn approval_timeout_arg() -> Arg {
    Arg::new("approval-timeout")
        .long("approval-timeout")
        .value_name("SECS")
        .value_parser(clap::value_parser!(u64).range(1..=86_400))
        .default_value(crate::limits::APPROVAL_WAIT_SECS_DEFAULT.to_string())
        .help("How long an approval a write left on the desk (--approval ask, no client that can confirm it) stays open for the person's decision; then it is withdrawn. The write is answered at once that it is pending; made again, it waits up to 25 s for the decision")
}

/// The wait `--approval-timeout` chose.
pub fn approval_timeout(m: &ArgMatches) -> Duration {
    Duration::from_secs(
        m.try_get_one::<u64>("approval-timeout")
            .ok()
            .flatten()
            .copied()
            .unwrap_or(crate::limits::APPROVAL_WAIT_SECS_DEFAULT),
    )
}

/// The policy `--approval` chose (the default when the command has no such flag).
pub fn approval(m: &ArgMatches) -> ApprovalPolicy {
    m.try_get_one::<ApprovalPolicy>("approval")
        .ok()
        .flatten()
        .copied()
        .unwrap_or_default()
}

/// The `seneschal mcp` subcommand's arguments.
pub fn mcp() -> Command {
    Command::new("mcp")
        .about("Serve MCP over stdio (newline-delimited JSON-RPC; logs on stderr)")
        .long_about(
            "Serve MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, logs on stderr, \
             exit 0 at end of input. Both eras are served: initialize-era clients (2024-11-05 … \
             2025-11-25) and 2026-07-28 clients (server/discover, per-request _meta).",
        )
        .arg(effect_arg(
            "List and execute only tools whose effect is at most this one (least privilege)",
        ))
        .arg(toolsets_arg())
        .arg(approval_arg())
        .arg(approval_timeout_arg())
        .arg(
            Arg::new("schema-dialect")
                .long("schema-dialect")
                .value_name("DIALECT")
                .value_parser(["openai", "gemini"])
                .help("List input schemas as this function-calling API accepts them (openai: strict function calling; gemini: function declarations), and read calls' arguments back from that form (ADR 0008)"),
        )
        .arg(
            Arg::new("inspect")
                .long("inspect")
                .action(ArgAction::SetTrue)
                .help("Print the MCP projection (capability mcp.projection) and exit"),
        )
        .subcommand(wire())
}

/// The capability `seneschal mcp wire` runs.
pub const WIRE: &str = "mcp.wire";

/// `seneschal mcp wire`: the command of the capability [`WIRE`], its flags derived from its
/// input schema like every capability's.
fn wire() -> Command {
    let d = crate::registry::find(WIRE)
        .expect("mcp.wire is a registered capability")
        .1;
    super::args::command_for(d, "wire").arg(effect_arg(EFFECT_HELP))
}

/// The `seneschal serve` subcommand's arguments.
pub fn serve() -> Command {
    Command::new("serve")
        .about("Serve the HTTP API, Swagger UI, the server card and MCP at /mcp on loopback")
        .long_about(
            "Serve the HTTP API (every capability's route), /openapi.json, Swagger UI at /docs, \
             the MCP server card, MCP Streamable HTTP at /mcp and a cockpit page at /.\n\n\
             Prints `listening on http://ADDR` on stdout once the socket is bound (use \
             `--bind 127.0.0.1:0` for a free port) and the URLs on stderr. When stdin is a pipe, \
             the server exits when stdin closes.",
        )
        .arg(
            Arg::new("bind")
                .long("bind")
                .value_name("ADDR")
                .default_value(DEFAULT_BIND)
                .help("The address to listen on, IP:PORT (port 0 picks a free port)"),
        )
        .arg(
            Arg::new("allow-remote")
                .long("allow-remote")
                .action(ArgAction::SetTrue)
                .help("Allow a non-loopback --bind address (prints a warning: there is no authentication)"),
        )
        .arg(effect_arg(EFFECT_HELP))
        .arg(toolsets_arg())
        .arg(approval_arg())
        .arg(approval_timeout_arg())
        .arg(
            Arg::new("max-body")
                .long("max-body")
                .value_name("BYTES")
                .value_parser(clap::value_parser!(u64).range(0..=(1u64 << 32)))
                .default_value(crate::limits::HTTP_BODY_DEFAULT.to_string())
                .help("The largest request body accepted; a larger one is answered 413"),
        )
        .arg(
            Arg::new("timeout")
                .long("timeout")
                .value_name("SECS")
                .value_parser(clap::value_parser!(u64).range(1..=3600))
                .default_value(DEFAULT_TIMEOUT_SECS.to_string())
                .help("How long a connection may stay idle between requests; no request's deadline is longer"),
        )
        .arg(
            Arg::new("request-timeout")
                .long("request-timeout")
                .value_name("SECS")
                .value_parser(clap::value_parser!(u64).range(1..=3600))
                .default_value(crate::limits::HTTP_REQUEST_SECS_DEFAULT.to_string())
                .help("A request's head and body must arrive within it from its first byte (else 408), and its answer must be written within it"),
        )
        .arg(
            Arg::new("workers")
                .long("workers")
                .value_name("N")
                .value_parser(clap::value_parser!(u64).range(1..=256))
                .help("Worker threads running requests [default: the number of cores, 2 to 16]"),
        )
        .arg(
            Arg::new("max-connections")
                .long("max-connections")
                .value_name("N")
                .value_parser(clap::value_parser!(u64).range(1..=65536))
                .default_value(crate::limits::HTTP_CONNECTIONS_DEFAULT.to_string())
                .help("Connections open at once (each holds a thread); at the cap, a new client takes the place of the connection idle or stuck the longest"),
        )
}

/// What `seneschal mcp` was asked for.
pub fn mcp_options(m: &ArgMatches) -> crate::mcp::Options {
    crate::mcp::Options {
        max_effect: max_effect(m),
        toolsets: toolsets(m),
        approval: approval(m),
        approval_timeout: approval_timeout(m),
        schema_dialect: m
            .get_one::<String>("schema-dialect")
            .and_then(|d| seneschal_model::dialect::Dialect::parse(d)),
    }
}

/// What `seneschal serve` was asked for, parsed and checked: a bad `--bind` is
/// `invalid_input`; a non-loopback address without `--allow-remote` is `refused`
/// ([`crate::http::Options::check`]).
pub fn serve_options(m: &ArgMatches) -> Result<crate::http::Options, CapabilityError> {
    let text = m.get_one::<String>("bind").expect("defaulted");
    let bind: SocketAddr = text.parse().map_err(|e| {
        CapabilityError::invalid_input(format!(
            "--bind {text:?} is not an IP:PORT address ({e}); for example {DEFAULT_BIND}"
        ))
    })?;
    let timeout = Duration::from_secs(*m.get_one::<u64>("timeout").expect("defaulted"));
    let options = crate::http::Options {
        bind,
        allow_remote: m.get_flag("allow-remote"),
        max_effect: max_effect(m),
        toolsets: toolsets(m),
        approval: approval(m),
        approval_timeout: approval_timeout(m),
        max_body: *m.get_one::<u64>("max-body").expect("defaulted") as usize,
        timeout,
        request_timeout: Duration::from_secs(
            *m.get_one::<u64>("request-timeout").expect("defaulted"),
        )
        .min(timeout),
        workers: match m.get_one::<u64>("workers") {
            Some(n) => *n as usize,
            None => crate::http::default_workers(),
        },
        max_connections: *m.get_one::<u64>("max-connections").expect("defaulted") as usize,
        desk_secret: crate::http::DeskSecret::from_env()?,
    };
    options.check()?;
    Ok(options)
}
