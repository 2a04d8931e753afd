//! Handler of `mcp.projection`: how seneschal answers over MCP, and whether the repository's
//! MCP client configurations launch it.
//!
//! The eras, methods and hints are read from the MCP module's tables and the registry, never
//! restated; the client configurations are read from the repository's files.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::typed;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::mcp::protocol::{LEGACY_METHODS, MODERN_METHODS, NOT_SERVED};
use crate::policy::Effect;
use crate::registry::types::mcp_projection;
use crate::registry::{Kind, CAPABILITIES};
use crate::versions::{MCP_HTTP_PATH, MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS, SERVER_NAME};

/// One MCP server entry of a client configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    command: String,
    args: Vec<String>,
}

impl Entry {
    /// True when the entry starts `seneschal mcp` (directly, or through a runner that names
    /// the seneschal binary, e.g. `cargo run --bin seneschal -- mcp`).
    fn launches_seneschal(&self) -> bool {
        let is_seneschal = |s: &str| {
            let base = s.rsplit(['/', '\\']).next().unwrap_or(s);
            base == SERVER_NAME || base == format!("{SERVER_NAME}.exe")
        };
        (is_seneschal(&self.command) || self.args.iter().any(|a| is_seneschal(a)))
            && self.args.iter().any(|a| a == "mcp")
    }
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
];

/// The `mcpServers` map of a Claude Code or Gemini CLI configuration.
fn parse_json_servers(text: &str) -> Result<Vec<Entry>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("does not parse as JSON: {e}"))?;
    let Some(servers) = v.get("mcpServers") else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_object()
        .ok_or_else(|| "\"mcpServers\" is not an object".to_string())?;
    Ok(servers
        .iter()
        .map(|(name, s)| Entry {
            name: name.clone(),
            command: s.get("command").and_then(Value::as_str).unwrap_or_default().to_string(),
            args: s
                .get("args")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
        })
        .collect())
}

/// Removes a `#` comment that is outside any string.
fn strip_comment(line: &str) -> &str {
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
    let mut lines = text.lines().enumerate();
    while let Some((n, raw)) = lines.next() {
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
            "args" => entries[i].args = toml_strings(&value).map_err(|e| format!("line {}: {e}", n + 1))?,
            _ => {}
        }
    }
    Ok(entries)
}

/// The state of one client configuration of the repository.
fn client_state(repo: &Path, c: &Client) -> Value {
    // Through the confined file system, as every reader of repository files: no link out of the
    // repository, no FIFO to wait on, 1 MiB at most.
    let read = crate::rootfs::Root::open(repo)
        .map_err(crate::rootfs::Denied::Io)
        .and_then(|root| {
            let mut bytes = Vec::new();
            root.open_file(c.file, crate::rootfs::Follow::Inside)
                .and_then(|mut f| f.read_capped(1024 * 1024, &mut bytes))
                .map(|()| String::from_utf8_lossy(&bytes).into_owned())
        });
    let (state, detail, fix) = match read {
        Err(crate::rootfs::Denied::NotFound) => (
            "absent",
            format!("{} does not exist", c.file),
            Some(c.fix.to_string()),
        ),
        Err(e) => ("foreign", format!("{} is not read: {e}", c.file), Some(c.fix.to_string())),
        Ok(text) => match (c.parse)(&text) {
            Err(why) => ("foreign", format!("{} {why}", c.file), Some(c.fix.to_string())),
            Ok(entries) => match entries.iter().find(|e| e.launches_seneschal()) {
                Some(e) => (
                    "wired",
                    format!("server \"{}\" runs `{} {}`", e.name, e.command, e.args.join(" ")),
                    None,
                ),
                None => {
                    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
                    let detail = match entries.iter().find(|e| e.name == SERVER_NAME) {
                        Some(e) => format!(
                            "server \"{}\" runs `{} {}`, not `seneschal mcp`",
                            e.name,
                            e.command,
                            e.args.join(" ")
                        ),
                        None if names.is_empty() => "no MCP server is configured".to_string(),
                        None => format!("configures other servers only: {}", names.join(", ")),
                    };
                    ("foreign", detail, Some(c.fix.to_string()))
                }
            },
        },
    };
    json!({"client": c.name, "file": c.file, "state": state, "detail": detail, "fix": fix})
}

/// `mcp.projection`: how seneschal answers over MCP.
pub fn projection(
    ctx: &Context,
    _input: mcp_projection::Input,
) -> Result<mcp_projection::Output, CapabilityError> {
    // Debug builds (the tests') can make this handler panic, so that the executor's recovery
    // is exercised through every transport.
    #[cfg(debug_assertions)]
    if std::env::var("SENESCHAL_MCP_DEBUG_PANIC").as_deref() == Ok("mcp.projection") {
        panic!("SENESCHAL_MCP_DEBUG_PANIC asked mcp.projection to panic");
    }
    let tools: Vec<Value> = CAPABILITIES
        .iter()
        .filter(|d| d.executable())
        .filter_map(|d| {
            let name = d.mcp_tool?;
            let h = d.hints();
            let mut t = Map::new();
            t.insert("name".into(), json!(name));
            t.insert("id".into(), json!(d.id));
            t.insert("effect".into(), json!(d.effect.as_str()));
            t.insert("approval".into(), json!(d.approval().as_str()));
            t.insert("readOnlyHint".into(), json!(h.read_only));
            t.insert("destructiveHint".into(), json!(h.destructive));
            t.insert("idempotentHint".into(), json!(h.idempotent));
            t.insert("openWorldHint".into(), json!(h.open_world));
            Some(Value::Object(t))
        })
        .collect();
    let writers: Vec<&str> = CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect == Effect::RepositoryWrite)
        .filter_map(|d| d.mcp_tool)
        .collect();
    let resources: Vec<Value> = CAPABILITIES
        .iter()
        .filter(|d| d.executable())
        .filter_map(|d| {
            let uri = d.mcp_resource?;
            let mime = match d.kind {
                Kind::Resource => d.mime_type,
                Kind::Query => "application/json",
            };
            Some(json!({"uri": uri, "id": d.id, "mimeType": mime}))
        })
        .collect();
    let not_served: Vec<Value> = NOT_SERVED
        .iter()
        .map(|(m, why)| json!({"method": m, "reason": why}))
        .collect();
    let clients: Vec<Value> = CLIENTS.iter().map(|c| client_state(&ctx.repo, c)).collect();
    typed(json!({
        "server": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
        "eras": [
            {
                "era": "legacy",
                "versions": MCP_LEGACY_VERSIONS,
                "opening": "initialize negotiates the revision (an unknown one gets the latest); serverInfo and instructions in its result",
                "methods": LEGACY_METHODS,
            },
            {
                "era": "modern",
                "versions": MCP_MODERN_VERSIONS,
                "opening": "every request carries _meta io.modelcontextprotocol/protocolVersion and clientCapabilities; server/discover is optional; serverInfo in result _meta",
                "methods": MODERN_METHODS,
            },
        ],
        "transports": [
            {"name": "stdio", "how": "seneschal mcp [--allow-effects EFFECT]: newline-delimited JSON-RPC, logs on stderr"},
            {"name": "streamable-http", "how": format!("seneschal serve: POST {MCP_HTTP_PATH} answered with application/json; GET and DELETE 405")},
        ],
        "not_served": not_served,
        "tools": tools,
        "writers": writers,
        "resources": resources,
        "prompts": false,
        "clients": clients,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!entries[0].launches_seneschal());
        assert_eq!(entries[1].name, "seneschal");
        assert_eq!(entries[1].args, ["mcp", "--allow-effects", "read"]);
        assert!(entries[1].launches_seneschal());
        assert!(parse_codex_toml("[mcp_servers.x]\ncommand = \"unterminated\n").is_err());
        assert!(parse_codex_toml("[mcp_servers.x]\nnot a pair\n").is_err());
    }

    #[test]
    fn runners_that_name_the_binary_count_as_wired() {
        let e = Entry {
            name: "s".into(),
            command: "cargo".into(),
            args: ["run", "--bin", "seneschal", "--", "mcp"].map(String::from).to_vec(),
        };
        assert!(e.launches_seneschal());
        let e = Entry {
            name: "s".into(),
            command: "seneschal".into(),
            args: vec!["serve".into()],
        };
        assert!(!e.launches_seneschal());
    }
}
