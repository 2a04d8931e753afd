//! The command line: argv → the executor, and answers → text or JSON.
//!
//! **Architecture invariant:** only this module knows argv. Each capability's `expose.cli`
//! path becomes a subcommand built from the registry at start-up, with flags derived from
//! its input schema (see [`args`]); no subcommand is written per capability.

pub mod args;
pub mod checkout;
pub mod contract;
pub use crate::flags;
pub mod render;
pub mod scaffold;
pub mod servers;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;

use crate::codes::{ErrorCode, COMMAND_EXITS, EXIT_STALE};
use crate::context::Context;
use crate::error::CapabilityError;
use crate::execute::{execute_index, Transport};
use crate::registry::{Descriptor, CAPABILITIES};

/// The exit-code table printed at the end of `--help`: success, each error code's status,
/// then every command's own ([`COMMAND_EXITS`]).
pub fn exit_codes_help() -> String {
    let mut s = String::from("Exit codes:\n  0   success\n");
    let mut codes: Vec<ErrorCode> = ErrorCode::ALL.to_vec();
    codes.sort_by_key(|c| c.exit_code());
    for c in codes {
        s.push_str(&format!(
            "  {:<3} {} — {}\n",
            c.exit_code(),
            c.as_str(),
            c.meaning()
        ));
    }
    for e in COMMAND_EXITS {
        s.push_str(&format!(
            "  {:<3} {}: {}\n",
            e.statuses(),
            e.command,
            e.meaning
        ));
    }
    s
}

/// The section of `--help` that lists the maintainer commands ([`checkout`]), hidden from
/// the main list.
fn maintainer_help() -> String {
    let mut s = format!(
        "{} — elsewhere they exit {}:\n",
        checkout::HEADING,
        checkout::EXIT_NOT_CHECKOUT
    );
    for (name, what) in checkout::LISTED {
        s.push_str(&format!("  {name:<17} {what}\n"));
    }
    s
}

/// The top of the command tree: the program's name and its global arguments, without
/// subcommands or the texts only its own `--help` shows (see [`command`]).
fn root() -> Command {
    Command::new("seneschal")
        .version(env!("CARGO_PKG_VERSION"))
        .disable_version_flag(true)
        .arg(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::SetTrue)
                .help("Print the version (with --verbose: the contract digest and MCP revisions)"),
        )
        .arg(
            Arg::new("verbose")
                .long("verbose")
                .action(ArgAction::SetTrue)
                .requires("version")
                .help("With --version: print the digest and protocol revisions too"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print JSON (the default when stdout is not a terminal)"),
        )
        .arg(
            Arg::new("yes")
                .long("yes")
                .short('y')
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Approve the write this command makes without asking (asked y/N on a terminal, refused `not_approved` elsewhere)"),
        )
        .arg(
            Arg::new("repo")
                .long("repo")
                .global(true)
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The repository to steward [default: the one holding the current directory]"),
        )
}

/// The help of `approvals approve|decline ID`.
const APPROVAL_ID_HELP: &str =
    "The id `approvals list` shows: its first 8 or more hex digits, or all 32";

/// The root with the built-in commands (every one named in [`BUILT_IN`]), without the
/// capabilities' subcommands.
fn built_in() -> Command {
    root()
        .about("A repository steward for AI agents: knowledge, queries and writes over MCP, HTTP and this command line")
        .subcommand(
            Command::new("call")
                .about("Call any capability by canonical id with a JSON input")
                .arg(Arg::new("id").required(true).help("Canonical id, e.g. capabilities.list"))
                .arg(Arg::new("input").long("input").value_name("JSON").default_value("{}").help(
                    "The input, a JSON object; `-` reads it from standard input (for inputs longer than one argument may be)",
                ))
                .arg(servers::effect_arg(servers::EFFECT_HELP)),
        )
        .subcommand(
            Command::new("generate")
                .about("Write the committed projections compiled into this binary to generated/")
                .hide(true)
                .arg(Arg::new("check").long("check").action(ArgAction::SetTrue).help(format!(
                    "Compare instead of writing; exit {EXIT_STALE} naming each stale file"
                )))
                .arg(
                    Arg::new("dir")
                        .long("dir")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .default_value("generated")
                        .help("The folder of the committed projections"),
                ),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(Arg::new("shell").required(true).value_parser(["bash", "zsh", "fish"])),
        )
        .subcommand(Command::new("man").about("Print the man page (roff)"))
        .subcommand(
            Command::new("audit")
                .about("The write audit log")
                .subcommand_required(true)
                .subcommand(
                    Command::new("verify")
                        .about("Check .seneschal/audit.jsonl: the hash chain, its anchor (a dropped tail, an emptied or deleted log) and, with a key, every MAC; exits 12 naming the first problem")
                        .arg(
                            Arg::new("key")
                                .long("key")
                                .value_name("FILE")
                                .value_parser(clap::value_parser!(PathBuf))
                                .help("The audit key file (outside the repository) the writers used [default: $SENESCHAL_AUDIT_KEY]"),
                        ),
                ),
        )
        .subcommand(
            Command::new("approvals")
                .about("The approval desk: the writes waiting for the person's decision (agents on stdio and HTTP, under --approval ask)")
                .subcommand_required(true)
                .subcommand(Command::new("list").about("List the pending approvals, oldest first: short id, capability, review sentence and diff (JSON with --json or when piped)"))
                .subcommand(
                    Command::new("approve")
                        .about("Approve a pending write: the waiting call applies it")
                        .arg(Arg::new("id").required(true).help(APPROVAL_ID_HELP)),
                )
                .subcommand(
                    Command::new("decline")
                        .about("Decline a pending write: the waiting call answers not_approved")
                        .arg(Arg::new("id").required(true).help(APPROVAL_ID_HELP)),
                ),
        )
        .subcommand(contract::command())
        .subcommand(
            Command::new("conformance")
                .about("Try to falsify every annotation: run each capability's examples in a scratch repository and observe what changed")
                .hide(true)
                .arg(
                    Arg::new("fixture")
                        .long("fixture")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The template repository [default: the repository seneschal stands in]"),
                )
                .arg(
                    Arg::new("only")
                        .long("only")
                        .value_name("ID")
                        .action(ArgAction::Append)
                        .help("Check only this capability (repeatable)"),
                ),
        )
        .subcommand(scaffold::command().hide(true))
        .subcommand(servers::mcp())
        .subcommand(servers::serve())
        .after_help(format!("{}\n{}", maintainer_help(), exit_codes_help()))
}

/// The names of the root's built-in subcommands ([`built_in`]) and of clap's `help`: an argv
/// whose first word is one of them is parsed by the whole tree (a capability path may begin
/// with one of them: `contract digest`). A test holds this list to [`built_in`].
const BUILT_IN: &[&str] = &[
    "call",
    "generate",
    "completions",
    "man",
    "audit",
    "approvals",
    "contract",
    "conformance",
    "new",
    "mcp",
    "serve",
    "help",
];

/// The capabilities that have a CLI path, in the order of their paths.
fn cli_capabilities() -> Vec<&'static Descriptor> {
    let mut paths: Vec<&'static Descriptor> = CAPABILITIES
        .iter()
        .filter(|d| d.executable() && !d.cli.is_empty())
        .collect();
    paths.sort_by_key(|d| d.cli);
    paths
}

/// The whole command tree: built-in commands plus one subcommand per capability CLI path.
pub fn command() -> Command {
    let mut cmd = built_in();
    // One subcommand per capability CLI path, grouped by its leading words.
    for d in cli_capabilities() {
        cmd = insert(cmd, d, d.cli);
    }
    cmd
}

/// Where the first word of `args` (argv, program name first) stands when only the global
/// `--json` and `--repo DIR` come before it; `None` for any other shape of argv.
fn first_word(args: &[OsString]) -> Option<usize> {
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        match arg.to_str()? {
            "--json" => {}
            "--repo" => {
                // A missing value or one that looks like a flag is the whole tree's error.
                i += 1;
                if args.get(i)?.to_str()?.starts_with('-') {
                    return None;
                }
            }
            s if s.starts_with("--repo=") => {}
            _ => return Some(i),
        }
        i += 1;
    }
    None
}

/// The server subcommand (`mcp` or `serve`) that `args` (argv, program name first) names
/// before anything else, when only the global `--json` and `--repo DIR` come before it.
///
/// A long-running server does not need the other subcommands: building the whole tree
/// parses every capability's input schema and touches code and data that would then stay
/// resident for the life of the server (docs/PERFORMANCE.md, Memory). Any other shape of argv
/// answers `None` and is parsed by the whole tree.
fn server_subcommand(args: &[OsString]) -> Option<&'static str> {
    match args[first_word(args)?].to_str()? {
        "mcp" => Some("mcp"),
        "serve" => Some("serve"),
        _ => None,
    }
}

/// The capabilities a reduced tree holds when `args` names a capability's whole CLI path
/// right after the global arguments (`seneschal --repo . repo diff --stat`): that capability,
/// any whose path is a prefix of it, and any below it. `None` (the whole tree) when argv
/// begins otherwise, with a built-in command ([`BUILT_IN`]) or with no capability's whole
/// path.
///
/// A one-shot call then builds one capability's flags instead of every capability's (each
/// parses its input schema): about a sixth of the instructions of a small call.
fn named_capabilities(args: &[OsString]) -> Option<Vec<&'static Descriptor>> {
    let start = first_word(args)?;
    if BUILT_IN.contains(&args[start].to_str()?) {
        return None;
    }
    let words: Vec<&str> = args[start..]
        .iter()
        .map_while(|a| a.to_str())
        .take_while(|w| !w.starts_with('-'))
        .collect();
    let all = cli_capabilities();
    let named = all
        .iter()
        .filter(|d| words.starts_with(d.cli))
        .max_by_key(|d| d.cli.len())?;
    Some(
        all.iter()
            .copied()
            .filter(|d| named.cli.starts_with(d.cli) || d.cli.starts_with(named.cli))
            .collect(),
    )
}

/// The command tree that parses `args`: the root with only the server subcommand when argv
/// names one ([`server_subcommand`]), the root with only the named capability when argv names
/// one ([`named_capabilities`]), the whole tree otherwise. Each parses such an argv to the
/// same matches, help and errors as the whole tree (checked by the tests below).
fn command_for_args(args: &[OsString]) -> Command {
    match server_subcommand(args) {
        Some("mcp") => return root().subcommand(servers::mcp()),
        Some(_) => return root().subcommand(servers::serve()),
        None => {}
    }
    match named_capabilities(args) {
        Some(named) => named
            .into_iter()
            .fold(root(), |cmd, d| insert(cmd, d, d.cli)),
        None => command(),
    }
}

/// Inserts the capability's command at `path` below `parent`, creating groups as needed.
fn insert(parent: Command, d: &'static Descriptor, path: &'static [&'static str]) -> Command {
    if path.len() == 1 {
        return parent.subcommand(
            args::command_for(d, path[0]).arg(servers::effect_arg(servers::EFFECT_HELP)),
        );
    }
    let name = path[0];
    let parent = if parent.find_subcommand(name).is_none() {
        parent.subcommand(
            Command::new(name)
                .about(format!("Capabilities under `{name}`"))
                .subcommand_required(true)
                .arg_required_else_help(true),
        )
    } else {
        parent
    };
    parent.mut_subcommand(name, |group| insert(group, d, &path[1..]))
}

/// `seneschal --version [--verbose]`.
pub fn version_text(verbose: bool) -> String {
    let mut s = format!("seneschal {}\n", env!("CARGO_PKG_VERSION"));
    if verbose {
        s.push_str(&format!(
            "digest: {}\n",
            crate::registry::projections::DIGEST
        ));
        s.push_str(&format!(
            "capabilities: {}\n",
            crate::registry::CAPABILITIES.len()
        ));
        s.push_str(&format!(
            "mcp: {}\n",
            crate::versions::MCP_ALL_VERSIONS.join(", ")
        ));
    }
    s
}

/// Renders the man page: the top command, then one section per subcommand, depth first, so
/// every capability path appears.
fn man_page(out: &mut Vec<u8>) -> std::io::Result<()> {
    let cmd = command();
    clap_mangen::Man::new(cmd.clone()).render(out)?;
    fn walk(cmd: &Command, prefix: &str, out: &mut Vec<u8>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands() {
            let name = format!("{prefix} {}", sub.get_name());
            let man = clap_mangen::Man::new(sub.clone().name(name.clone()));
            writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
            man.render_synopsis_section(out)?;
            man.render_description_section(out)?;
            if sub.get_arguments().any(|a| !a.is_hide_set()) {
                man.render_options_section(out)?;
            }
            walk(sub, &name, out)?;
        }
        Ok(())
    }
    walk(&cmd, "seneschal", out)
}

/// The leaf matches of a capability path and its descriptor, if argv chose one.
fn capability_matches(m: &ArgMatches) -> Option<(&'static Descriptor, &ArgMatches)> {
    let mut path = Vec::new();
    let mut cur = m;
    while let Some((name, sub)) = cur.subcommand() {
        path.push(name.to_string());
        cur = sub;
    }
    CAPABILITIES
        .iter()
        .find(|d| !d.cli.is_empty() && d.cli.iter().copied().eq(path.iter().map(String::as_str)))
        .map(|d| (d, cur))
}

/// Where output goes and in which form.
struct Output {
    json: bool,
}

impl Output {
    fn answer(&self, value: &Value) -> ExitCode {
        let text = if self.json {
            let mut s = serde_json::to_string_pretty(value).expect("JSON values serialize");
            s.push('\n');
            s
        } else {
            render::human(value)
        };
        print_stdout(&text)
    }
}

/// Writes to stdout; a closed pipe (`seneschal ... | head`) is a quiet success.
pub fn print_stdout(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error[internal]: cannot write to stdout: {e}");
            ExitCode::from(ErrorCode::Internal.exit_code())
        }
    }
}

/// Reports a capability error on stderr and returns its exit code.
pub fn fail(e: &CapabilityError) -> ExitCode {
    eprintln!("error[{}]: {}", e.code.as_str(), e.message);
    if let Some(p) = &e.pointer {
        if !p.is_empty() {
            eprintln!("  at: {p}");
        }
    }
    if let Some(d) = &e.data {
        eprintln!("  data: {d}");
    }
    ExitCode::from(e.code.exit_code())
}

/// The repository root chosen by `--repo` or found from the current directory: the nearest
/// folder at or above it that holds a `.git`. Without `--repo`, a folder in no repository is
/// refused rather than served (started from `/`, seneschal would otherwise serve the whole
/// machine); `--repo DIR` may name a folder that is not a repository (its `repo.*` readers then
/// answer `not_found`). `/` and the home folder are never a root.
pub fn repo_root(m: &ArgMatches) -> Result<PathBuf, CapabilityError> {
    let named = m.get_one::<PathBuf>("repo").cloned();
    let root = match &named {
        Some(dir) => dir
            .canonicalize()
            .map_err(|e| CapabilityError::not_found(format!("--repo {}: {e}", dir.display())))?,
        None => {
            let here = std::env::current_dir().map_err(|e| {
                CapabilityError::not_found(format!("the current folder cannot be read: {e}"))
            })?;
            Context::discover(&here).ok_or_else(|| {
                CapabilityError::not_found(format!(
                    "{} is in no git repository: run seneschal inside the repository to serve, \
                     or name its folder with --repo DIR",
                    here.display()
                ))
            })?
        }
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    if root.parent().is_none() || Some(&root) == home.as_ref() {
        return Err(CapabilityError::refused(format!(
            "{} is never served as a repository root (it is the file system's root or the \
             home folder): run seneschal inside a repository, or name one with --repo DIR",
            root.display()
        )));
    }
    Ok(root)
}

/// The value of a fallible step of a command, or the command's exit with its error.
macro_rules! or_fail {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return fail(&e),
        }
    };
}

/// The fewest hex digits of an approval's id a person types (`approvals approve 6f1c09a2`),
/// and the fewest the list shows: a prefix this long names one of the few pending approvals
/// all but surely, so a decision typed from the list does not land on another write that
/// came meanwhile.
const SHORT_ID: usize = 8;

/// The id each of `ids` is shown by: its first [`SHORT_ID`] digits, more where another of
/// `ids` begins alike (as git abbreviates).
fn short_ids<'a>(ids: &[&'a str]) -> Vec<&'a str> {
    ids.iter()
        .map(|id| {
            let mut n = SHORT_ID.min(id.len());
            while n < id.len()
                && ids
                    .iter()
                    .any(|o| o != id && o.len() >= n && o[..n] == id[..n])
            {
                n += 1;
            }
            &id[..n]
        })
        .collect()
}

/// The pending approval `typed` names among `pending` (the desk's list): a whole id as it
/// is, or a unique prefix of at least [`SHORT_ID`] lowercase hex digits. An unknown prefix is
/// `not_found`, an ambiguous one `invalid_input`, each naming the approvals that wait.
fn resolve_approval(pending: &[Value], typed: &str) -> Result<String, CapabilityError> {
    let waiting: Vec<(&str, &str)> = pending
        .iter()
        .filter_map(|p| {
            Some((
                p["id"].as_str()?,
                p["capability"].as_str().unwrap_or_default(),
            ))
        })
        .collect();
    let ids: Vec<&str> = waiting.iter().map(|(id, _)| *id).collect();
    let shorts = short_ids(&ids);
    let named = |which: &dyn Fn(&str) -> bool| -> String {
        let listed: Vec<String> = waiting
            .iter()
            .zip(&shorts)
            .filter(|((id, _), _)| which(id))
            .map(|((_, capability), short)| format!("{short} ({capability})"))
            .collect();
        listed.join(", ")
    };
    let hex = typed
        .bytes()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if hex && typed.len() == 32 {
        // A whole id: the desk itself answers whether it waits.
        return Ok(typed.to_string());
    }
    if !hex || typed.len() < SHORT_ID || typed.len() > 32 {
        return Err(CapabilityError::invalid_input(format!(
            "`{typed}` is not a pending approval's id: its first {SHORT_ID} or more of 32 \
             lowercase hex digits, as `seneschal approvals list` shows them"
        ))
        .at("/id"));
    }
    let matching: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| id.starts_with(typed))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.to_string()),
        [] if waiting.is_empty() => Err(CapabilityError::not_found(format!(
            "no approval waits under `{typed}`: none waits at all"
        ))),
        [] => Err(CapabilityError::not_found(format!(
            "no approval waits under `{typed}`; those that wait: {}",
            named(&|_| true)
        ))),
        _ => Err(CapabilityError::invalid_input(format!(
            "`{typed}` begins {} pending approvals' ids: {}; type more of the one you mean",
            matching.len(),
            named(&|id| id.starts_with(typed))
        ))
        .at("/id")),
    }
}

/// `seneschal approvals list|approve|decline`: the person's desk in a terminal, JSON
/// elsewhere (`--json`, or standard output not a terminal), as every command answers.
fn approvals(root: &std::path::Path, m: &ArgMatches, json: bool) -> ExitCode {
    use crate::interact::{decide, pending_approvals, DecidedAt};
    let (verb, sub) = m.subcommand().expect("a subcommand is required");
    let pending = or_fail!(pending_approvals(root));
    if verb == "list" {
        if json {
            let text = serde_json::to_string_pretty(&serde_json::json!({ "pending": pending }))
                .expect("JSON values serialize");
            return print_stdout(&format!("{text}\n"));
        }
        if pending.is_empty() {
            return print_stdout("no approval waits\n");
        }
        let ids: Vec<&str> = pending
            .iter()
            .map(|p| p["id"].as_str().unwrap_or_default())
            .collect();
        let mut text = String::new();
        for (p, short) in pending.iter().zip(short_ids(&ids)) {
            text.push_str(&format!(
                "{}  {}  over {} (pid {}), since {}\n  {}\n",
                short,
                p["capability"].as_str().unwrap_or_default(),
                p["transport"].as_str().unwrap_or("unknown"),
                p["pid"],
                p["created"].as_str().unwrap_or_default(),
                p["review"].as_str().unwrap_or_default(),
            ));
            if let Some(message) = p.pointer("/detail/message").and_then(Value::as_str) {
                text.push_str("  the whole message:\n");
                for line in message.lines() {
                    text.push_str(&format!("    {line}\n"));
                }
            }
            if let Some(diff) = p.pointer("/detail/diff").and_then(Value::as_str) {
                for line in diff.lines() {
                    text.push_str(&format!("    {line}\n"));
                }
            }
        }
        text.push_str(
            "approve with `seneschal approvals approve ID`, decline with `seneschal approvals decline ID`\n",
        );
        return print_stdout(&text);
    }
    let typed = sub.get_one::<String>("id").expect("required");
    let id = or_fail!(resolve_approval(&pending, typed));
    let decided = or_fail!(decide(
        root,
        &id,
        verb == "approve",
        DecidedAt::Terminal,
        None
    ));
    if json {
        return print_stdout(&format!("{decided}\n"));
    }
    print_stdout(&format!(
        "{} {}: {}\n",
        if verb == "approve" {
            "approved"
        } else {
            "declined"
        },
        &id[..SHORT_ID],
        decided["review"].as_str().unwrap_or_default()
    ))
}

/// The context a command runs in: the repository of `m` (the top matches) and the effect
/// `--allow-effects` chose on `sub` (its own matches).
fn context(m: &ArgMatches, sub: &ArgMatches) -> Result<Context, CapabilityError> {
    Ok(Context::new(repo_root(m)?, servers::max_effect(sub)))
}

/// The other end of a command-line call: the person who typed it. The invocation itself
/// approves a `session`-level call; a `per_call` one (a repository write) is accepted by
/// `--yes`, else asked y/N on the terminal when standard input and standard error are one,
/// else it cannot be asked (and the gate refuses it `not_approved`, naming `--yes`).
struct Terminal {
    yes: bool,
}

impl crate::interact::Peer for Terminal {
    fn approve(&self, question: &crate::interact::Question) -> crate::interact::Answer {
        use crate::interact::Answer;
        if self.yes {
            return Answer::Approved { grant: false };
        }
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Answer::Unavailable(
                "pass --yes to approve it (there is no terminal to ask on)".into(),
            );
        }
        eprint!("{}\nApprove? [y/N] ", question.text);
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line).is_err() {
            return Answer::Failed("standard input could not be read".into());
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Answer::Approved { grant: false },
            _ => Answer::Refused(Some("decline".into())),
        }
    }

    fn approved_before(&self, _id: &str) -> bool {
        true
    }

    fn vouched(&self) -> bool {
        // The person's own command line: `--yes`, or their answer at their terminal.
        true
    }

    fn approver(&self) -> &'static str {
        if self.yes {
            "yes"
        } else {
            "terminal"
        }
    }
}

/// Runs one capability for the command line, its peer the terminal ([`Terminal`]).
fn run(
    ctx: &Context,
    m: &ArgMatches,
    index: usize,
    input: Value,
) -> Result<Value, CapabilityError> {
    let yes = m
        .try_get_one::<bool>("yes")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false);
    let terminal = std::sync::Arc::new(Terminal { yes });
    execute_index(
        ctx,
        index,
        input,
        crate::execute::Caller::new(Transport::Cli, terminal),
    )
}

/// Parses argv completely, then acts. Returns the process exit code.
/// Tells glibc's malloc to keep what an answer frees for the next one: blocks up to 16 MiB
/// come from the heap rather than a memory map of their own, and the heap is given back to
/// the system only past 32 MiB free at its top. By default a large answer (a blame, a diff, a
/// log as JSON, each held two or three times over) is mapped, written page by page (a fault
/// each) and unmapped on every call, and the heap trimmed after it: about a sixth of a
/// resident server's time on `repo.blame` of 2,000 lines. Nothing is allocated at start-up
/// for it, so the memory at rest is the same.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` sets two of malloc's parameters; it is called first thing in `main`,
    // and malloc takes its own lock for it.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 16 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 32 << 20);
    }
}

pub fn main() -> ExitCode {
    // The command line's edge: a panic anywhere in a command (past the executor's own, which
    // answers a handler's panic as `internal`) ends it with the `internal` status and a line
    // that says so, never with the runtime's abort status.
    match std::panic::catch_unwind(run_command) {
        Ok(code) => code,
        Err(panic) => {
            let why = crate::text::panic_message(panic.as_ref(), "a panic");
            eprintln!("error[internal]: seneschal stopped: {why}");
            ExitCode::from(ErrorCode::Internal.exit_code())
        }
    }
}

/// Parses argv and runs the command it names.
fn run_command() -> ExitCode {
    // A debug build stops here on purpose when asked, so that a test drives the edge above.
    #[cfg(debug_assertions)]
    if std::env::var_os("SENESCHAL_DEBUG_PANIC").is_some() {
        panic!("SENESCHAL_DEBUG_PANIC is set");
    }
    keep_freed_memory();
    let args: Vec<OsString> = std::env::args_os().collect();
    let matches = match command_for_args(&args).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => 0,
                _ => ErrorCode::InvalidInput.exit_code(),
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let out = Output {
        json: matches.get_flag("json") || !std::io::stdout().is_terminal(),
    };
    if matches.get_flag("version") {
        return print_stdout(&version_text(matches.get_flag("verbose")));
    }
    // A maintainer command outside seneschal's own checkout stops here, naming the folder.
    let start = checkout::start(matches.get_one::<PathBuf>("repo"));
    if let Some(("contract", m)) = matches.subcommand() {
        if let Some((name, _)) = m
            .subcommand()
            .filter(|(n, _)| checkout::CONTRACT.contains(n))
        {
            let own = match checkout::require(&format!("contract {name}"), &start) {
                Ok(dir) => dir,
                Err(code) => return code,
            };
            let repo = repo_root(&matches).unwrap_or(own);
            if let Some(code) = contract::run(m, &repo, matches.get_flag("json")) {
                return code;
            }
        }
    }
    match matches.subcommand() {
        Some(("call", m)) => {
            let ctx = or_fail!(context(&matches, m));
            let id = m.get_one::<String>("id").expect("required");
            let mut text = m.get_one::<String>("input").expect("defaulted").clone();
            if text == "-" {
                text.clear();
                if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    return fail(
                        &CapabilityError::invalid_input(format!(
                            "--input -: standard input is not readable text: {e}"
                        ))
                        .at(""),
                    );
                }
            }
            let input: Value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    return fail(
                        &CapabilityError::invalid_input(format!("--input is not JSON: {e}")).at(""),
                    )
                }
            };
            let result = crate::registry::find(id)
                .ok_or_else(|| {
                    CapabilityError::not_found(format!("no capability has the id `{id}`"))
                })
                .and_then(|(index, _)| run(&ctx, m, index, input));
            match result {
                Ok(v) => out.answer(&v),
                Err(e) => fail(&e),
            }
        }
        Some(("mcp", m)) => {
            if let Some(("wire", leaf)) = m.subcommand() {
                let (index, d) = crate::registry::find(servers::WIRE).expect("registered");
                let ctx = or_fail!(context(&matches, leaf));
                return match args::input_from(d, leaf)
                    .and_then(|input| run(&ctx, leaf, index, input))
                {
                    Ok(v) => out.answer(&v),
                    Err(e) => fail(&e),
                };
            }
            let options = servers::mcp_options(m);
            if m.get_flag("inspect") {
                let json = m
                    .try_get_one::<bool>("json")
                    .ok()
                    .flatten()
                    .copied()
                    .unwrap_or(false)
                    || !std::io::stdout().is_terminal();
                let ctx = Context::new(or_fail!(repo_root(&matches)), options.max_effect)
                    .with_toolsets(options.toolsets);
                return match crate::mcp::inspect::render(&ctx, json) {
                    Ok(text) => print_stdout(&text),
                    Err(e) => fail(&e),
                };
            }
            crate::mcp::serve_stdio(or_fail!(repo_root(&matches)), &options)
        }
        Some(("serve", m)) => {
            match servers::serve_options(m)
                .and_then(|options| crate::http::serve(repo_root(&matches)?, &options))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            }
        }
        Some(("conformance", m)) => {
            let template = match m.get_one::<PathBuf>("fixture") {
                Some(dir) => checkout::require_exact("conformance --fixture", dir),
                None => checkout::require("conformance", &start),
            };
            let template = match template {
                Ok(dir) => dir,
                Err(code) => return code,
            };
            let only: Vec<String> = m
                .get_many::<String>("only")
                .map(|v| v.cloned().collect())
                .unwrap_or_default();
            let rows = crate::conformance::run(&template, &only);
            let text = if out.json {
                let mut s = serde_json::to_string_pretty(&crate::conformance::to_json(&rows))
                    .expect("serializes");
                s.push('\n');
                s
            } else {
                crate::conformance::table(&rows)
            };
            let code = print_stdout(&text);
            if crate::conformance::passed(&rows) {
                code
            } else {
                ExitCode::from(crate::conformance::EXIT_FALSIFIED)
            }
        }
        Some(("new", m)) => {
            let start = m.get_one::<PathBuf>("workspace").cloned().unwrap_or(start);
            match checkout::require("new", &start) {
                Ok(ws) => match scaffold::run(m, &ws) {
                    Ok(text) => print_stdout(&text),
                    Err(e) => fail(&e),
                },
                Err(code) => code,
            }
        }
        Some(("completions", m)) => {
            let shell = match m.get_one::<String>("shell").map(String::as_str) {
                Some("zsh") => clap_complete::Shell::Zsh,
                Some("fish") => clap_complete::Shell::Fish,
                _ => clap_complete::Shell::Bash,
            };
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut command(), "seneschal", &mut buf);
            print_stdout(&String::from_utf8_lossy(&buf))
        }
        Some(("audit", m)) => {
            let root = or_fail!(repo_root(&matches));
            let key_file = m
                .subcommand_matches("verify")
                .and_then(|v| v.get_one::<PathBuf>("key").cloned())
                .or_else(|| {
                    std::env::var_os(crate::store::KEY_ENV)
                        .filter(|p| !p.is_empty())
                        .map(PathBuf::from)
                });
            let key = match key_file.map(|f| crate::store::audit::load_key(&root, &f)) {
                None => None,
                Some(Ok(k)) => Some(k),
                Some(Err(e)) => return fail(&e),
            };
            match crate::store::verify(&root, key.as_deref()) {
                Ok(v) => {
                    let mut text =
                        format!("audit log verified: {} record(s), chain intact", v.count);
                    if v.anchored {
                        text.push_str(", anchor matches");
                    }
                    if v.keyed {
                        text.push_str(", every MAC checked with the key");
                    }
                    if v.pending > 0 {
                        text.push_str(&format!(
                            "; {} write intent(s) wait for their outcome (the next write settles them)",
                            v.pending
                        ));
                    }
                    text.push('\n');
                    print_stdout(&text)
                }
                Err((line, why)) => {
                    let at = if line > 0 {
                        format!(" (line {line} of {})", crate::store::AUDIT_LOG)
                    } else {
                        String::new()
                    };
                    eprintln!("error[audit]: {why}{at}");
                    ExitCode::from(crate::store::EXIT_BROKEN)
                }
            }
        }
        Some(("approvals", m)) => {
            let root = or_fail!(repo_root(&matches));
            approvals(&root, m, out.json)
        }
        Some(("man", _)) => {
            let mut buf = Vec::new();
            match man_page(&mut buf) {
                Ok(()) => print_stdout(&String::from_utf8_lossy(&buf)),
                Err(e) => fail(&CapabilityError::internal(format!(
                    "cannot render the man page: {e}"
                ))),
            }
        }
        Some(("generate", m)) => match checkout::require("generate", &start) {
            Ok(_) => crate::generate::run(
                m.get_one::<PathBuf>("dir").expect("defaulted"),
                m.get_flag("check"),
            ),
            Err(code) => code,
        },
        _ => match capability_matches(&matches) {
            Some((d, leaf)) => {
                let ctx = or_fail!(context(&matches, leaf));
                let index = CAPABILITIES
                    .iter()
                    .position(|c| std::ptr::eq(c, d))
                    .expect("from the table");
                let result =
                    args::input_from(d, leaf).and_then(|input| run(&ctx, leaf, index, input));
                match result {
                    Ok(v) => {
                        let code = out.answer(&v);
                        crate::knowledge::cli_verdict(d.id, &v).unwrap_or(code)
                    }
                    Err(e) => fail(&e),
                }
            }
            None => {
                let _ = command().print_help();
                ExitCode::from(ErrorCode::InvalidInput.exit_code())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("seneschal")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// What a parse produced, rendered so two trees can be compared: the error text (help
    /// included), or the chosen subcommand with every argument's values.
    fn outcome(cmd: Command, args: &[OsString]) -> String {
        match cmd.try_get_matches_from(args) {
            Err(e) => format!("{:?} {}", e.kind(), e.render()),
            Ok(m) => {
                let mut s = format!(
                    "json={} repo={:?}",
                    m.get_flag("json"),
                    m.get_one::<PathBuf>("repo")
                );
                let (name, sub) = m.subcommand().expect("a subcommand");
                s.push_str(&format!(" {name}:"));
                let mut ids: Vec<_> = sub.ids().map(|i| i.as_str().to_string()).collect();
                ids.sort();
                for id in ids {
                    let raw: Vec<_> = sub.get_raw(&id).map(|v| v.collect()).unwrap_or_default();
                    s.push_str(&format!(" {id}={raw:?}@{:?}", sub.value_source(&id)));
                }
                s
            }
        }
    }

    #[test]
    fn approvals_are_shown_by_eight_digits_or_as_many_as_tell_them_apart() {
        let a = "6f1c09a2aaaaaaaaaaaaaaaaaaaaaaaa";
        let b = "6f1c09a2abbbbbbbbbbbbbbbbbbbbbbb";
        let c = "0123456789abcdef0123456789abcdef";
        assert_eq!(short_ids(&[a, c]), vec!["6f1c09a2", "01234567"]);
        assert_eq!(
            short_ids(&[a, b, c]),
            vec!["6f1c09a2aa", "6f1c09a2ab", "01234567"]
        );
        assert_eq!(short_ids(&[]), Vec::<&str>::new());
    }

    #[test]
    fn a_typed_approval_id_is_a_whole_id_or_a_unique_prefix_of_eight_digits_or_more() {
        let pending: Vec<Value> = [
            ("6f1c09a2aaaaaaaaaaaaaaaaaaaaaaaa", "files.edit"),
            ("6f1c09a2abbbbbbbbbbbbbbbbbbbbbbb", "repo.commit"),
            ("0123456789abcdef0123456789abcdef", "files.write"),
        ]
        .iter()
        .map(|(id, c)| serde_json::json!({"id": id, "capability": c}))
        .collect();
        let ok = |typed: &str| resolve_approval(&pending, typed).unwrap();
        assert_eq!(ok("01234567"), "0123456789abcdef0123456789abcdef");
        assert_eq!(ok("6f1c09a2ab"), "6f1c09a2abbbbbbbbbbbbbbbbbbbbbbb");
        // A whole id passes as typed: the desk answers whether it waits.
        assert_eq!(
            ok("ffffffffffffffffffffffffffffffff"),
            "ffffffffffffffffffffffffffffffff"
        );
        let err = |typed: &str| resolve_approval(&pending, typed).unwrap_err();
        let e = err("6f1c09a2");
        assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
        assert!(
            e.message
                .contains("6f1c09a2aa (files.edit), 6f1c09a2ab (repo.commit)")
                && !e.message.contains("files.write"),
            "{}",
            e.message
        );
        let e = err("deadbeef");
        assert_eq!(e.code, ErrorCode::NotFound, "{}", e.message);
        assert!(
            e.message.contains(
                "6f1c09a2aa (files.edit), 6f1c09a2ab (repo.commit), 01234567 (files.write)"
            ),
            "{}",
            e.message
        );
        for bad in [
            "6f1c",
            "6f1c09a",
            "6F1C09A2",
            "../../x",
            "6f1c09a2-",
            &"0".repeat(33),
        ] {
            let e = err(bad);
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}: {}", e.message);
            assert!(e.message.contains("first 8 or more"), "{}", e.message);
        }
        let e = resolve_approval(&[], "deadbeef").unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message.contains("none waits"), "{}", e.message);
    }

    #[test]
    fn the_server_subcommands_are_found_only_in_plain_argv() {
        assert_eq!(server_subcommand(&argv(&["mcp"])), Some("mcp"));
        assert_eq!(
            server_subcommand(&argv(&["--json", "--repo", "/x", "serve"])),
            Some("serve")
        );
        assert_eq!(
            server_subcommand(&argv(&["--repo=/x", "mcp", "--inspect"])),
            Some("mcp")
        );
        assert_eq!(server_subcommand(&argv(&[])), None);
        assert_eq!(server_subcommand(&argv(&["help", "mcp"])), None);
        assert_eq!(server_subcommand(&argv(&["--repo", "--json", "mcp"])), None);
        assert_eq!(server_subcommand(&argv(&["--repo"])), None);
        assert_eq!(server_subcommand(&argv(&["-V", "mcp"])), None);
        assert_eq!(server_subcommand(&argv(&["call", "mcp"])), None);
    }

    #[test]
    fn the_built_in_list_names_every_built_in_command() {
        let tree = built_in();
        let mut names: Vec<&str> = tree
            .get_subcommands()
            .map(|c| c.get_name())
            .chain(["help"])
            .collect();
        names.sort_unstable();
        let mut listed = BUILT_IN.to_vec();
        listed.sort_unstable();
        assert_eq!(names, listed);
    }

    #[test]
    fn a_capability_is_found_only_by_its_whole_path_after_the_globals() {
        let ids = |words: &[&str]| {
            named_capabilities(&argv(words)).map(|v| v.iter().map(|d| d.id).collect::<Vec<_>>())
        };
        assert_eq!(ids(&["repo", "diff"]), Some(vec!["repo.diff"]));
        assert_eq!(
            ids(&[
                "--repo",
                "/x",
                "--json",
                "files",
                "search",
                "--pattern",
                "p"
            ]),
            Some(vec!["files.search"])
        );
        assert_eq!(
            ids(&["session", "note", "add"]),
            Some(vec!["session.note.add"])
        );
        assert_eq!(ids(&["repo"]), None);
        assert_eq!(ids(&["repo", "dif"]), None);
        assert_eq!(ids(&["repo", "--json", "diff"]), None);
        assert_eq!(ids(&["contract", "digest"]), None);
        assert_eq!(ids(&["help", "repo", "diff"]), None);
        assert_eq!(ids(&["-V", "repo", "diff"]), None);
        assert_eq!(ids(&["--repo", "--json", "repo", "diff"]), None);
        assert_eq!(ids(&[]), None);
    }

    #[test]
    fn the_reduced_tree_parses_capability_argv_exactly_as_the_whole_tree() {
        let cases: &[&[&str]] = &[
            &["repo", "diff"],
            &["repo", "diff", "--help"],
            &["repo", "diff", "-h"],
            &[
                "--repo", "/tmp", "repo", "diff", "--from", "HEAD~1", "--to", "HEAD",
            ],
            &["--json", "repo", "diff", "--stat", "--max-bytes", "1024"],
            &["repo", "diff", "--stat=maybe"],
            &["repo", "diff", "--max-bytes", "x"],
            &["repo", "diff", "--bogus"],
            &["repo", "diff", "--form", "HEAD"],
            &["repo", "diff", "extra"],
            &["repo", "diff", "--repo"],
            &["repo", "diff", "-V"],
            &["repo", "diff", "--allow-effects", "read"],
            &[
                "files",
                "search",
                "--pattern",
                "fn [a-z_]+\\(",
                "--limit",
                "10000",
            ],
            &["files", "search"],
            &[
                "--repo=/tmp",
                "session",
                "note",
                "add",
                "--text",
                "hi",
                "--json",
            ],
            &["knowledge", "search", "--query", "a b"],
            &["capabilities", "show", "--id", "repo.diff"],
        ];
        for words in cases {
            let args = argv(words);
            assert!(named_capabilities(&args).is_some(), "{words:?}");
            let whole = outcome(command(), &args);
            let reduced = outcome(command_for_args(&args), &args);
            assert_eq!(reduced, whole, "{words:?}");
        }
    }

    #[test]
    fn the_reduced_tree_parses_server_argv_exactly_as_the_whole_tree() {
        let cases: &[&[&str]] = &[
            &["mcp"],
            &["mcp", "--help"],
            &["mcp", "-h"],
            &["--json", "mcp", "--inspect"],
            &["mcp", "--inspect", "--json"],
            &["--repo", "/tmp", "mcp", "--allow-effects", "read"],
            &["--repo=/tmp", "mcp", "--allow-effects=process_state"],
            &["mcp", "--allow-effects", "bogus"],
            &["mcp", "--allow-effect", "read"],
            &["mcp", "--bogus"],
            &["mcp", "extra"],
            &["mcp", "-V"],
            &["mcp", "--repo"],
            &["serve"],
            &["serve", "--help"],
            &["--json", "serve", "--bind", "127.0.0.1:0", "--allow-remote"],
            &["serve", "--max-body", "x"],
            &["serve", "--bnd", "127.0.0.1:0"],
        ];
        for words in cases {
            let args = argv(words);
            assert!(server_subcommand(&args).is_some(), "{words:?}");
            let whole = outcome(command(), &args);
            let reduced = outcome(command_for_args(&args), &args);
            assert_eq!(reduced, whole, "{words:?}");
        }
    }
}
