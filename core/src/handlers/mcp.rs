//! Handler of `mcp.projection`: how seneschal answers over MCP, and whether the repository's
//! MCP client configurations launch it.
//!
//! The eras, methods and hints are read from the MCP module's tables and the registry, never
//! restated; the tools and resources are those the process's effect profile executes
//! (`registry::served`); the client configurations are read from the repository's files, and
//! a configuration is `wired` only when its command resolves to this very binary.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::same_variants;
use crate::context::Call;
use crate::registry;
use crate::registry::types::mcp_projection;
use seneschal_access::error::CapabilityError;
use seneschal_model::policy::{Approval, Effect};
use seneschal_model::versions::{
    LEGACY_METHODS, MCP_HTTP_PATH, MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS, MODERN_METHODS,
    NOT_SERVED, SERVER_NAME,
};

/// One MCP server entry of a client configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    command: String,
    args: Vec<String>,
}

/// True when `s` names the seneschal program: its last path component is `seneschal`.
fn is_seneschal(s: &str) -> bool {
    let base = s.rsplit(['/', '\\']).next().unwrap_or(s);
    base == SERVER_NAME || base == format!("{SERVER_NAME}.exe")
}

impl Entry {
    /// True when the entry means to start seneschal: it is named `seneschal`, or its command
    /// or one of its arguments names the program (a runner such as
    /// `cargo run --bin seneschal -- mcp`).
    fn aims_at_seneschal(&self) -> bool {
        self.name == SERVER_NAME
            || is_seneschal(&self.command)
            || self.args.iter().any(|a| is_seneschal(a))
    }

    /// True when the arguments ask for the MCP server.
    fn runs_mcp(&self) -> bool {
        self.args.iter().any(|a| a == "mcp")
    }

    /// The command line as configured, for messages.
    fn command_line(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// This binary, as a file: its canonical path and, on Unix, its device and inode (a hard link
/// to it is it).
#[derive(Debug, Clone)]
struct ThisBinary {
    path: PathBuf,
    #[cfg(unix)]
    file: (u64, u64),
}

impl ThisBinary {
    /// The running executable (`std::env::current_exe`), canonicalized; `None` when it cannot
    /// be known (e.g. the file was removed since the process started).
    fn current() -> Option<ThisBinary> {
        let path = std::env::current_exe().ok()?.canonicalize().ok()?;
        ThisBinary::at(&path)
    }

    fn at(path: &Path) -> Option<ThisBinary> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        #[cfg(not(unix))]
        let _ = meta;
        Some(ThisBinary {
            path: path.to_path_buf(),
            #[cfg(unix)]
            file: {
                use std::os::unix::fs::MetadataExt;
                (meta.dev(), meta.ino())
            },
        })
    }

    fn is(&self, path: &Path, meta: &std::fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if (meta.dev(), meta.ino()) == self.file {
                return true;
            }
        }
        let _ = meta;
        path == self.path
    }
}

/// Where a configured command leads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolved {
    /// This binary, found at that path.
    This(PathBuf),
    /// An existing executable file that is not this binary (canonical path).
    Other(PathBuf),
    /// Nothing that can be executed: why.
    Unresolved(String),
}

/// True when `meta` is a file with an execute bit (on Unix; any file elsewhere).
fn executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Resolves `command` the way a shell would start it: a command with a `/` is a path
/// (relative ones from the repository root, where clients start their servers); any other is
/// looked up in the directories of `path_var` (this process's `PATH`), first executable file
/// wins. Symlinks are followed; the file found is compared with `this`. Nothing is executed or
/// opened: only metadata is read.
fn resolve(
    command: &str,
    repo: &Path,
    path_var: Option<&OsStr>,
    this: Option<&ThisBinary>,
) -> Resolved {
    let classify = |candidate: &Path| -> Result<Resolved, String> {
        let meta = std::fs::metadata(candidate).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{} does not exist", candidate.display()),
            _ => format!("{} cannot be examined: {e}", candidate.display()),
        })?;
        if !executable(&meta) {
            return Err(format!("{} is not an executable file", candidate.display()));
        }
        let real = candidate
            .canonicalize()
            .unwrap_or_else(|_| candidate.to_path_buf());
        Ok(match this {
            Some(t) if t.is(&real, &meta) => Resolved::This(real),
            _ => Resolved::Other(real),
        })
    };
    if command.is_empty() {
        return Resolved::Unresolved("the command is empty".into());
    }
    if command.contains('/') {
        let path = Path::new(command);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            repo.join(path)
        };
        return classify(&path).unwrap_or_else(Resolved::Unresolved);
    }
    let Some(dirs) = path_var else {
        return Resolved::Unresolved(format!("`{command}` is not a path and PATH is not set"));
    };
    for dir in std::env::split_paths(dirs) {
        // An empty PATH entry means the working directory: the repository root.
        let dir = if dir.as_os_str().is_empty() {
            repo.to_path_buf()
        } else {
            dir
        };
        if let Ok(found) = classify(&dir.join(command)) {
            return found;
        }
    }
    Resolved::Unresolved(format!("`{command}` is not found on PATH"))
}

/// A client whose configuration file may wire seneschal.
struct Client {
    name: &'static str,
    file: &'static str,
    parse: fn(&str) -> Result<Vec<Entry>, String>,
    fix: &'static str,
}

const CLIENTS: &[Client] = &[
    Client {
        name: "claude-code",
        file: ".mcp.json",
        parse: parse_json_servers,
        fix: "add to \"mcpServers\" in .mcp.json: \"seneschal\": {\"command\": \"seneschal\", \"args\": [\"mcp\"]}",
    },
    Client {
        name: "codex",
        file: ".codex/config.toml",
        parse: parse_codex_toml,
        fix: "add to .codex/config.toml:\n[mcp_servers.seneschal]\ncommand = \"seneschal\"\nargs = [\"mcp\"]",
    },
    Client {
        name: "gemini-cli",
        file: ".gemini/settings.json",
        parse: parse_json_servers,
        fix: "add to \"mcpServers\" in .gemini/settings.json: \"seneschal\": {\"command\": \"seneschal\", \"args\": [\"mcp\"]}",
    },
    Client {
        name: "vscode",
        file: ".vscode/mcp.json",
        parse: parse_vscode_servers,
        fix: "add to \"servers\" in .vscode/mcp.json: \"seneschal\": {\"type\": \"stdio\", \"command\": \"seneschal\", \"args\": [\"mcp\"]}",
    },
    Client {
        name: "cursor",
        file: ".cursor/mcp.json",
        parse: parse_json_servers,
        fix: "add to \"mcpServers\" in .cursor/mcp.json: \"seneschal\": {\"command\": \"seneschal\", \"args\": [\"mcp\"]}",
    },
];

/// The `mcpServers` map of a Claude Code, Gemini CLI or Cursor configuration.
fn parse_json_servers(text: &str) -> Result<Vec<Entry>, String> {
    json_servers(text, "mcpServers")
}

/// The `servers` map of a VS Code configuration.
fn parse_vscode_servers(text: &str) -> Result<Vec<Entry>, String> {
    json_servers(text, "servers")
}

/// The server map under `key` of a JSON configuration.
fn json_servers(text: &str, key: &str) -> Result<Vec<Entry>, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("does not parse as JSON: {e}"))?;
    let Some(servers) = v.get(key) else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_object()
        .ok_or_else(|| format!("\"{key}\" is not an object"))?;
    Ok(servers
        .iter()
        .map(|(name, s)| Entry {
            name: name.clone(),
            command: s
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            args: s
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect())
}

/// For each line of `text` (as `str::lines` cuts it), whether it starts in TOML code, not
/// inside a multi-line string (`"""…"""`, `'''…'''`): only such a line can open a table or
/// set a key. Comments and one-line strings are skipped as the scanner reads them, so a `#`
/// or a quote inside either opens nothing.
pub(crate) fn code_lines(text: &str) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum S {
        Code,
        Comment,
        Basic,
        Literal,
        MultiBasic,
        MultiLiteral,
    }
    let b = text.as_bytes();
    let run = |i: usize, q: u8| b[i..].iter().take_while(|c| **c == q).count();
    let mut out = Vec::new();
    if !b.is_empty() {
        out.push(true);
    }
    let (mut state, mut i) = (S::Code, 0);
    while i < b.len() {
        let c = b[i];
        i += 1;
        match (state, c) {
            (_, b'\n') => {
                state = match state {
                    S::MultiBasic | S::MultiLiteral => state,
                    _ => S::Code,
                };
                if i < b.len() {
                    out.push(state == S::Code);
                }
            }
            (S::Code, b'#') => state = S::Comment,
            (S::Code, q @ (b'"' | b'\'')) => {
                let multi = run(i - 1, q) >= 3;
                state = match (q, multi) {
                    (b'"', true) => S::MultiBasic,
                    (b'"', false) => S::Basic,
                    (_, true) => S::MultiLiteral,
                    _ => S::Literal,
                };
                if multi {
                    i += 2;
                }
            }
            // An escape takes the next character, but never the line's end.
            (S::Basic | S::MultiBasic, b'\\') if b.get(i) != Some(&b'\n') => i += 1,
            (S::Basic, b'"') | (S::Literal, b'\'') => state = S::Code,
            (S::MultiBasic, b'"') | (S::MultiLiteral, b'\'') => {
                // Three close it; up to two more before them belong to the string.
                let n = 1 + run(i, c);
                if n >= 3 {
                    state = S::Code;
                    i += n - 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// Removes a `#` comment that is outside any string (of a Codex TOML line).
pub(crate) fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

/// The TOML strings of a value: a basic or literal string, or an array of them.
fn toml_strings(value: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = value.trim().chars().peekable();
    let array = chars.peek() == Some(&'[');
    if array {
        chars.next();
    }
    loop {
        match chars.next() {
            None => break,
            Some(c) if c.is_whitespace() || c == ',' || c == ']' => continue,
            Some(q @ ('"' | '\'')) => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => return Err("an unterminated string".into()),
                        Some(c) if c == q => break,
                        Some('\\') if q == '"' => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(c) => s.push(c),
                            None => return Err("an unterminated string".into()),
                        },
                        Some(c) => s.push(c),
                    }
                }
                out.push(s);
                if !array {
                    break;
                }
            }
            Some(c) => return Err(format!("a value this reader does not take (at `{c}`)")),
        }
    }
    Ok(out)
}

/// The `[mcp_servers.<name>]` tables of a Codex configuration: a minimal TOML reader for
/// table headers and `command`/`args` keys (strings and arrays of strings, arrays may span
/// lines). Other keys and tables are skipped.
fn parse_codex_toml(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut current: Option<usize> = None;
    let code = code_lines(text);
    let mut lines = text.lines().enumerate();
    while let Some((n, raw)) = lines.next() {
        if !code[n] {
            continue;
        }
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']').trim();
            current = header.strip_prefix("mcp_servers.").map(|name| {
                let name = name.trim().trim_matches('"').trim_matches('\'').to_string();
                match entries.iter().position(|e| e.name == name) {
                    Some(i) => i,
                    None => {
                        entries.push(Entry {
                            name,
                            command: String::new(),
                            args: Vec::new(),
                        });
                        entries.len() - 1
                    }
                }
            });
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected `key = value`", n + 1));
        };
        let key = key.trim();
        let mut value = value.trim().to_string();
        if value.starts_with('[') {
            while !strip_comment(&value).trim_end().ends_with(']') {
                let Some((_, more)) = lines.next() else {
                    return Err(format!("line {}: an unterminated array", n + 1));
                };
                value.push(' ');
                value.push_str(strip_comment(more).trim());
            }
        }
        let Some(i) = current else { continue };
        match key {
            "command" => {
                entries[i].command = toml_strings(&value)
                    .map_err(|e| format!("line {}: {e}", n + 1))?
                    .into_iter()
                    .next()
                    .unwrap_or_default()
            }
            "args" => {
                entries[i].args =
                    toml_strings(&value).map_err(|e| format!("line {}: {e}", n + 1))?
            }
            _ => {}
        }
    }
    Ok(entries)
}

pub use seneschal_access::limits::CONFIG_CAP;

/// Why a client configuration could not be read.
enum Unreadable {
    /// Nothing is there.
    Absent,
    /// Something is there that is not read: why.
    Refused(String),
}

/// Reads a client configuration of the repository as untrusted content, through the confined
/// file system as every reader of repository files: no link out of the repository, no secret
/// or `.git` name, no FIFO to wait on, a regular file of one name and at most [`CONFIG_CAP`]
/// bytes, read through the handle that was checked.
fn read_config(repo: &Path, file: &str) -> Result<String, Unreadable> {
    use seneschal_access::rootfs::{Denied, Follow, Root};
    let mut bytes = Vec::new();
    let read = Root::open(repo).map_err(Denied::Io).and_then(|root| {
        root.open_file(file, Follow::Inside)
            .and_then(|mut f| f.read_capped(CONFIG_CAP, &mut bytes))
    });
    match read {
        Err(Denied::NotFound) => Err(Unreadable::Absent),
        Err(e) => Err(Unreadable::Refused(format!("is not read: {e}"))),
        Ok(()) => String::from_utf8(bytes).map_err(|_| Unreadable::Refused("is not UTF-8".into())),
    }
}

/// The fix of a configuration whose seneschal entry does not start this binary.
fn point_at_this_binary(c: &Client, e: &Entry, this: Option<&ThisBinary>) -> String {
    match this {
        Some(t) => format!(
            "set the command of server \"{}\" in {} to {} (this binary), or put this binary on PATH as `{SERVER_NAME}`",
            e.name,
            c.file,
            serde_json::to_string(&t.path.to_string_lossy()).expect("strings serialize"),
        ),
        None => c.fix.to_string(),
    }
}

/// The state of one client configuration of the repository: `wired` when an entry's command
/// resolves to this binary and asks for `mcp`; `unresolved` or `not_this_binary` when the
/// entry meant for seneschal starts nothing or another program; `foreign` or `absent`
/// otherwise.
fn client_state(
    repo: &Path,
    c: &Client,
    this: Option<&ThisBinary>,
) -> mcp_projection::OutputClientsItem {
    use mcp_projection::OutputClientsItemState as State;
    let path_var = std::env::var_os("PATH");
    let (state, detail, fix) = match read_config(repo, c.file) {
        Err(Unreadable::Absent) => (
            State::Absent,
            format!("{} does not exist", c.file),
            Some(c.fix.to_string()),
        ),
        Err(Unreadable::Refused(why)) => (
            State::Foreign,
            format!("{} {why}", c.file),
            Some(c.fix.to_string()),
        ),
        Ok(text) => match (c.parse)(&text) {
            Err(why) => (
                State::Foreign,
                format!("{} {why}", c.file),
                Some(c.fix.to_string()),
            ),
            Ok(entries) => {
                let resolved: Vec<(&Entry, Resolved)> = entries
                    .iter()
                    .map(|e| (e, resolve(&e.command, repo, path_var.as_deref(), this)))
                    .collect();
                let wired = resolved
                    .iter()
                    .find(|(e, r)| e.runs_mcp() && matches!(r, Resolved::This(_)));
                let aimed = resolved.iter().find(|(e, _)| e.aims_at_seneschal());
                match (wired, aimed) {
                    (Some((e, Resolved::This(at))), _) => (
                        State::Wired,
                        format!(
                            "server \"{}\" runs `{}`; `{}` is this binary ({})",
                            e.name,
                            e.command_line(),
                            e.command,
                            at.display()
                        ),
                        None,
                    ),
                    (_, Some((e, r))) if e.runs_mcp() => {
                        let runner = if is_seneschal(&e.command) {
                            ""
                        } else {
                            "; a runner that builds or finds seneschal itself cannot be checked to start this binary"
                        };
                        match r {
                            Resolved::Unresolved(why) => (
                                State::Unresolved,
                                format!("server \"{}\" runs `{}`, but {why}", e.name, e.command_line()),
                                Some(point_at_this_binary(c, e, this)),
                            ),
                            Resolved::Other(at) | Resolved::This(at) => (
                                State::NotThisBinary,
                                format!(
                                    "server \"{}\" runs `{}`, but `{}` is {}, not this binary ({}){runner}",
                                    e.name,
                                    e.command_line(),
                                    e.command,
                                    at.display(),
                                    this.map_or_else(|| "whose path is unknown".to_string(), |t| t.path.display().to_string()),
                                ),
                                Some(point_at_this_binary(c, e, this)),
                            ),
                        }
                    }
                    (_, Some((e, _))) => (
                        State::Foreign,
                        format!(
                            "server \"{}\" runs `{}`, not `seneschal mcp`",
                            e.name,
                            e.command_line()
                        ),
                        Some(c.fix.to_string()),
                    ),
                    (_, None) => {
                        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
                        let detail = if names.is_empty() {
                            "no MCP server is configured".to_string()
                        } else {
                            format!("configures other servers only: {}", names.join(", "))
                        };
                        (State::Foreign, detail, Some(c.fix.to_string()))
                    }
                }
            }
        },
    };
    mcp_projection::OutputClientsItem {
        client: c.name.to_string(),
        file: c.file.to_string(),
        state,
        detail,
        fix,
    }
}

/// `mcp.projection`: how seneschal answers over MCP.
pub fn projection(
    ctx: &Call,
    _input: mcp_projection::Input,
) -> Result<mcp_projection::Output, CapabilityError> {
    // Debug builds (the tests') can make this handler panic, so that the executor's recovery
    // is exercised through every transport.
    #[cfg(debug_assertions)]
    if std::env::var("SENESCHAL_MCP_DEBUG_PANIC").as_deref() == Ok("mcp.projection") {
        panic!("SENESCHAL_MCP_DEBUG_PANIC asked mcp.projection to panic");
    }
    // Only what this process executes: a narrowed process (`--allow-effects`) does not list
    // the tools it would refuse.
    let served = || registry::served_in(ctx.profile()).map(|(_, d)| d);
    let tools = served()
        .filter_map(|d| {
            let h = d.hints();
            Some(mcp_projection::OutputToolsItem {
                name: d.mcp_tool?.to_string(),
                id: d.id.to_string(),
                effect: d.effect.into(),
                approval: d.approval().into(),
                read_only_hint: h.read_only,
                destructive_hint: h.destructive,
                idempotent_hint: h.idempotent,
                open_world_hint: h.open_world,
            })
        })
        .collect();
    let writers = registry::served_tools(ctx.profile(), Effect::RepositoryWrite)
        .map(str::to_string)
        .collect();
    let resources = served()
        .filter_map(|d| {
            let uri = d.mcp_resource?;
            Some(mcp_projection::OutputResourcesItem {
                uri: uri.to_string(),
                id: d.id.to_string(),
                mime_type: d.resource_mime().to_string(),
            })
        })
        .collect();
    let not_served = NOT_SERVED
        .iter()
        .map(|(m, why)| mcp_projection::OutputNotServedItem {
            method: m.to_string(),
            reason: why.to_string(),
        })
        .collect();
    let this = ThisBinary::current();
    let clients = CLIENTS
        .iter()
        .map(|c| client_state(&ctx.repo, c, this.as_ref()))
        .collect();
    let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
    Ok(mcp_projection::Output {
        server: mcp_projection::OutputServer {
            name: SERVER_NAME.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        eras: vec![
            mcp_projection::OutputErasItem {
                era: mcp_projection::OutputErasItemEra::Legacy,
                versions: strings(MCP_LEGACY_VERSIONS),
                opening: "initialize negotiates the revision (an unknown one gets the latest); serverInfo and instructions in its result".to_string(),
                methods: strings(LEGACY_METHODS),
            },
            mcp_projection::OutputErasItem {
                era: mcp_projection::OutputErasItemEra::Modern,
                versions: strings(MCP_MODERN_VERSIONS),
                opening: "every request carries _meta io.modelcontextprotocol/protocolVersion and clientCapabilities; server/discover is optional; serverInfo in result _meta".to_string(),
                methods: strings(MODERN_METHODS),
            },
        ],
        transports: vec![
            mcp_projection::OutputTransportsItem {
                name: mcp_projection::OutputTransportsItemName::Stdio,
                how: "seneschal mcp [--allow-effects EFFECT]: newline-delimited JSON-RPC, logs on stderr".to_string(),
            },
            mcp_projection::OutputTransportsItem {
                name: mcp_projection::OutputTransportsItemName::StreamableHttp,
                how: format!("seneschal serve: POST {MCP_HTTP_PATH} answered with application/json, or an SSE stream when the call sends progress, logs or questions; in an initialize-era session (Mcp-Session-Id) GET opens the session's stream and DELETE ends it"),
            },
        ],
        not_served,
        tools,
        writers,
        resources,
        prompts: true,
        clients,
    })
}

same_variants!(Effect => mcp_projection::OutputToolsItemEffect { Read, ProcessState, RepositoryWrite });
same_variants!(Approval => mcp_projection::OutputToolsItemApproval { None, Session, PerCall });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lines_outside_multi_line_strings_are_code() {
        let text = [
            r#"a = """"#,
            r#"[x]"#,
            r#"""""#,
            r#"b = '''"#,
            r#"[y]'''''"#,
            r#"# """"#,
            r#"c = "\"""" # """"#,
            r#"[z]"#,
            r#"d = """\"#,
            r#"\""""""#,
            r#"[w]"#,
        ]
        .join("\n");
        let text = text.as_str();
        assert_eq!(
            code_lines(text),
            [true, false, false, true, false, true, true, true, true, false, true]
        );
        assert_eq!(code_lines(""), Vec::<bool>::new());
        assert_eq!(code_lines("x\n"), [true]);
    }

    #[test]
    fn codex_toml_tables_are_read() {
        let text = r#"
model = "o3" # a comment
[mcp_servers.other]
command = "npx"
args = ["-y", "other-server"]

[mcp_servers."seneschal"]
command = '/usr/local/bin/seneschal' # path
args = [
  "mcp", # serve stdio
  "--allow-effects", "read",
]
[profiles.x]
command = "ignored"
"#;
        let entries = parse_codex_toml(text).unwrap();
        assert_eq!(entries.len(), 2);
        assert!(!entries[0].aims_at_seneschal());
        assert_eq!(entries[1].name, "seneschal");
        assert_eq!(entries[1].args, ["mcp", "--allow-effects", "read"]);
        assert!(entries[1].aims_at_seneschal() && entries[1].runs_mcp());
        assert!(parse_codex_toml("[mcp_servers.x]\ncommand = \"unterminated\n").is_err());
        assert!(parse_codex_toml("[mcp_servers.x]\nnot a pair\n").is_err());
    }

    #[test]
    fn runners_that_name_the_binary_aim_at_it() {
        let e = Entry {
            name: "s".into(),
            command: "cargo".into(),
            args: ["run", "--bin", "seneschal", "--", "mcp"]
                .map(String::from)
                .to_vec(),
        };
        assert!(e.aims_at_seneschal() && e.runs_mcp());
        let e = Entry {
            name: "s".into(),
            command: "seneschal".into(),
            args: vec!["serve".into()],
        };
        assert!(e.aims_at_seneschal() && !e.runs_mcp());
    }

    /// A scratch folder with an executable `prog`, a link `link` to it, a hard link `hard`,
    /// a plain file `data` and a folder `bin` holding `tool`.
    fn layout() -> (tempfile::TempDir, ThisBinary) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let exec = |p: &Path| {
            std::fs::write(p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        exec(&d.join("prog"));
        std::os::unix::fs::symlink(d.join("prog"), d.join("link")).unwrap();
        std::fs::hard_link(d.join("prog"), d.join("hard")).unwrap();
        std::fs::write(d.join("data"), "x").unwrap();
        std::fs::create_dir(d.join("bin")).unwrap();
        exec(&d.join("bin/tool"));
        let this = ThisBinary::at(&d.join("prog").canonicalize().unwrap()).unwrap();
        (dir, this)
    }

    #[test]
    fn a_command_resolves_like_a_shell_and_is_compared_with_this_binary() {
        let (dir, this) = layout();
        let d = dir.path().canonicalize().unwrap();
        let path = std::env::join_paths([d.join("bin"), d.clone()]).unwrap();
        let r = |cmd: &str| resolve(cmd, &d, Some(&path), Some(&this));
        assert_eq!(
            r(d.join("prog").to_str().unwrap()),
            Resolved::This(d.join("prog"))
        );
        // Relative paths start at the repository; symlinks and hard links are the same file.
        assert_eq!(r("./link"), Resolved::This(d.join("prog")));
        assert!(matches!(r("./hard"), Resolved::This(_)));
        // A bare name is looked up on PATH, first match wins.
        assert_eq!(r("prog"), Resolved::This(d.join("prog")));
        assert_eq!(r("tool"), Resolved::Other(d.join("bin/tool")));
        assert_eq!(r("./bin/tool"), Resolved::Other(d.join("bin/tool")));
        for missing in [
            "",
            "nonexistent",
            "./nonexistent",
            "/nonexistent/seneschal",
            "./data",
            "./bin",
        ] {
            assert!(
                matches!(r(missing), Resolved::Unresolved(_)),
                "{missing:?}: {:?}",
                r(missing)
            );
        }
        // Without PATH a bare name starts nothing; without this binary nothing is it.
        assert!(matches!(
            resolve("prog", &d, None, Some(&this)),
            Resolved::Unresolved(_)
        ));
        assert_eq!(
            resolve("./prog", &d, None, None),
            Resolved::Other(d.join("prog"))
        );
    }

    #[test]
    fn only_a_command_that_is_this_binary_is_wired() {
        let (dir, this) = layout();
        let d = dir.path().canonicalize().unwrap();
        let state = |command: &str, args: &str| {
            std::fs::write(
                d.join(".mcp.json"),
                format!(r#"{{"mcpServers": {{"seneschal": {{"command": {command:?}, "args": {args}}}}}}}"#),
            )
            .unwrap();
            let v = serde_json::to_value(client_state(&d, &CLIENTS[0], Some(&this))).unwrap();
            (v["state"].as_str().unwrap().to_string(), v)
        };
        assert_eq!(state("./prog", r#"["mcp"]"#).0, "wired");
        assert_eq!(state("./prog", r#"["serve"]"#).0, "foreign");
        assert_eq!(state("./missing", r#"["mcp"]"#).0, "unresolved");
        let (s, v) = state("./bin/tool", r#"["mcp"]"#);
        assert_eq!(s, "not_this_binary");
        assert!(
            v["fix"]
                .as_str()
                .unwrap()
                .contains(d.join("prog").to_str().unwrap()),
            "{v}"
        );
        // Without a known binary, nothing is wired.
        let v = serde_json::to_value(client_state(&d, &CLIENTS[0], None)).unwrap();
        assert_eq!(v["state"], "not_this_binary", "{v}");
    }
}
