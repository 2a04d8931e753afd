//! The `mcp.wire` handler: writes or merges the project-scope MCP configuration of the common
//! clients so that each starts `seneschal mcp`.
//!
//! Each configuration is read through the confined root ([`seneschal_access::rootfs`], at most
//! [`CONFIG_CAP`] bytes) and edited as text: only the value of the server named `seneschal`
//! is inserted or replaced, so every other server, key, comment and byte stays as it was (the
//! crate's JSON maps are sorted, so a parse-and-print would reorder a user's file; and no TOML
//! crate is in the tree, so the Codex table is edited line by line). Each JSON edit is checked
//! by parsing the result: it must equal the old document with that one entry set. A file whose
//! entry already starts the command is left untouched, so a second run writes nothing. The
//! write goes through [`crate::store::transact`] (lock, write-ahead audit, idempotency keys).

use serde_json::{json, Map, Value};

use crate::context::Call;
use crate::registry::types::mcp_wire;
use crate::store::{self, Effects};
use seneschal_access::error::CapabilityError;
use seneschal_access::rootfs::{Denied, Follow, Root};

use seneschal_access::limits::CONFIG_CAP;
/// The name of the server entry written.
const NAME: &str = "seneschal";

/// How a client's file holds its servers.
#[derive(Clone, Copy)]
enum Format {
    /// A JSON object under `key`; `typed`: each entry says `"type": "stdio"` (VS Code).
    Json { key: &'static str, typed: bool },
    /// Codex's `[mcp_servers.<name>]` TOML tables.
    CodexToml,
}

struct Target {
    client: mcp_wire::OutputClientsItemClient,
    name: &'static str,
    file: &'static str,
    format: Format,
}

const TARGETS: [Target; 5] = [
    Target {
        client: mcp_wire::OutputClientsItemClient::ClaudeCode,
        name: "claude-code",
        file: ".mcp.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
    Target {
        client: mcp_wire::OutputClientsItemClient::Codex,
        name: "codex",
        file: ".codex/config.toml",
        format: Format::CodexToml,
    },
    Target {
        client: mcp_wire::OutputClientsItemClient::GeminiCli,
        name: "gemini-cli",
        file: ".gemini/settings.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
    Target {
        client: mcp_wire::OutputClientsItemClient::Vscode,
        name: "vscode",
        file: ".vscode/mcp.json",
        format: Format::Json {
            key: "servers",
            typed: true,
        },
    },
    Target {
        client: mcp_wire::OutputClientsItemClient::Cursor,
        name: "cursor",
        file: ".cursor/mcp.json",
        format: Format::Json {
            key: "mcpServers",
            typed: false,
        },
    },
];

/// The text of `rel`, `None` when absent; read under every rule of the confined root.
fn read_config(root: &std::path::Path, rel: &str) -> Result<Option<String>, CapabilityError> {
    seneschal_access::confine::confine(root, rel, "")?;
    let handle = Root::open(root).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?;
    let mut bytes = Vec::new();
    match handle
        .open_file(rel, Follow::Never)
        .and_then(|mut f| f.read_capped(CONFIG_CAP, &mut bytes))
    {
        Ok(()) => String::from_utf8(bytes).map(Some).map_err(|_| {
            CapabilityError::refused(format!("`{rel}` is not UTF-8; it is left alone"))
        }),
        Err(Denied::NotFound) => Ok(None),
        Err(Denied::Refused(rule, why)) => {
            Err(seneschal_access::confine::refusal(rule, rel, &why, ""))
        }
        Err(other) => Err(CapabilityError::refused(format!(
            "`{rel}` {other}; it is left alone"
        ))),
    }
}

// ---- JSON, edited as text -------------------------------------------------------------------

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at `i` (a `"`).
fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// The end (exclusive) of the value starting at `i`, in text already known to be JSON.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

/// One member of an object: its key and where its key and value lie.
struct Member {
    key: String,
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// The members of the object whose `{` is at `open`.
fn members(b: &[u8], open: usize) -> Vec<Member> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, open + 1);
    while i < b.len() && b[i] == b'"' {
        let key_end = string_end(b, i);
        let key = serde_json::from_slice::<String>(&b[i..key_end]).unwrap_or_default();
        let colon = skip_ws(b, key_end);
        let value_start = skip_ws(b, colon + 1);
        let end = value_end(b, value_start);
        out.push(Member {
            key,
            key_start: i,
            value_start,
            value_end: end,
        });
        i = skip_ws(b, end);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    out
}

/// The indentation of the line holding `pos`.
fn indent_at(text: &str, pos: usize) -> String {
    let start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// A value on one line: `{"k": v, ...}` with the keys in the order given.
fn one_line(entry: &[(String, Value)]) -> String {
    let fields: Vec<String> = entry
        .iter()
        .map(|(k, v)| format!("{}: {}", json!(k), v))
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// Inserts the member `"key": value` (value already rendered) into the object at `open`, as
/// the last member, spaced as the object's members are.
fn insert_member(text: &str, open: usize, key: &str, value: &str) -> String {
    let b = text.as_bytes();
    let list = members(b, open);
    let member = format!("{}: {value}", json!(key));
    match (list.first(), list.last()) {
        (Some(first), Some(last)) => {
            let sep = &text[open + 1..first.key_start];
            format!(
                "{},{sep}{member}{}",
                &text[..last.value_end],
                &text[last.value_end..]
            )
        }
        _ => {
            let close = value_end(b, open) - 1;
            let indent = indent_at(text, open);
            format!(
                "{}{{\n{indent}  {member}\n{indent}}}{}",
                &text[..open],
                &text[close + 1..]
            )
        }
    }
}

/// The text of a JSON configuration with the server `NAME` set to `entry` under `key`;
/// `None` when it already is.
fn merge_json(
    old: Option<&str>,
    file: &str,
    key: &str,
    desired: &[(String, Value)],
) -> Result<Option<String>, CapabilityError> {
    let refuse = |why: String| {
        CapabilityError::refused(format!("`{file}` {why}; it is left alone, edit it by hand"))
    };
    let text = match old {
        Some(t) if !t.trim().is_empty() => t,
        _ => {
            let doc = format!(
                "{{\n  {}: {{\n    {}: {}\n  }}\n}}\n",
                json!(key),
                json!(NAME),
                one_line(desired)
            );
            return Ok(Some(doc));
        }
    };
    let mut doc: Value =
        serde_json::from_str(text).map_err(|e| refuse(format!("does not parse as JSON: {e}")))?;
    let Some(top) = doc.as_object_mut() else {
        return Err(refuse("is not a JSON object".into()));
    };
    let servers = top
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(refuse(format!("holds a `{key}` that is not an object")));
    };
    let existing = servers.get(NAME).cloned();
    let mut entry: Vec<(String, Value)> = desired.to_vec();
    if let Some(old_entry) = &existing {
        let Some(fields) = old_entry.as_object() else {
            return Err(refuse(format!(
                "holds a server `{NAME}` that is not an object"
            )));
        };
        if desired.iter().all(|(k, v)| fields.get(k) == Some(v)) {
            return Ok(None);
        }
        // Its other keys (env, cwd, ...) are kept.
        for (k, v) in fields {
            if !desired.iter().any(|(d, _)| d == k) {
                entry.push((k.clone(), v.clone()));
            }
        }
    }
    servers.insert(
        NAME.to_string(),
        Value::Object(entry.iter().cloned().collect()),
    );
    let b = text.as_bytes();
    let top_open = skip_ws(b, 0);
    let top_members = members(b, top_open);
    let new_text = match top_members.iter().rev().find(|m| m.key == key) {
        None => {
            let indent = {
                let list = &top_members;
                match list.first() {
                    Some(first) => indent_at(text, first.key_start),
                    None => format!("{}  ", indent_at(text, top_open)),
                }
            };
            let value = format!(
                "{{\n{indent}  {}: {}\n{indent}}}",
                json!(NAME),
                one_line(&entry)
            );
            insert_member(text, top_open, key, &value)
        }
        Some(m) if b.get(m.value_start) == Some(&b'{') => {
            match members(b, m.value_start)
                .iter()
                .rev()
                .find(|s| s.key == NAME)
            {
                Some(s) => format!(
                    "{}{}{}",
                    &text[..s.value_start],
                    one_line(&entry),
                    &text[s.value_end..]
                ),
                None => insert_member(text, m.value_start, NAME, &one_line(&entry)),
            }
        }
        Some(_) => return Err(refuse(format!("holds a `{key}` that is not an object"))),
    };
    // The edit must mean exactly the old document with the one entry set.
    match serde_json::from_str::<Value>(&new_text) {
        Ok(v) if v == doc => Ok(Some(new_text)),
        _ => {
            let mut s = serde_json::to_string_pretty(&doc).expect("JSON values serialize");
            s.push('\n');
            Ok(Some(s))
        }
    }
}

// ---- Codex TOML, edited line by line --------------------------------------------------------

use super::mcp::{code_lines, strip_comment};

/// The strings of a TOML value (a string or an array of strings); `None` for anything else.
fn toml_strings(value: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = value.trim().chars().peekable();
    let array = chars.peek() == Some(&'[');
    if array {
        chars.next();
    }
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() || c == ',' || c == ']' => {}
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        q if q == c => break,
                        '\\' if c == '"' => match chars.next()? {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            other => s.push(other),
                        },
                        other => s.push(other),
                    }
                }
                out.push(s);
                if !array {
                    break;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Whether `header` (a trimmed line) opens the table `[mcp_servers.seneschal]`.
fn is_our_header(header: &str) -> bool {
    let Some(inner) = header.strip_prefix('[').and_then(|h| h.strip_suffix(']')) else {
        return false;
    };
    if inner.starts_with('[') {
        return false;
    }
    let parts: Vec<&str> = inner.split('.').map(str::trim).collect();
    parts.len() == 2
        && parts[0] == "mcp_servers"
        && matches!(parts[1], "seneschal" | "\"seneschal\"" | "'seneschal'")
}

/// The Codex configuration with `[mcp_servers.seneschal]` starting `command mcp`; `None`
/// when it already does.
fn merge_codex(
    old: Option<&str>,
    file: &str,
    command: &str,
) -> Result<Option<String>, CapabilityError> {
    let refuse = |why: &str| {
        CapabilityError::refused(format!("`{file}` {why}; it is left alone, edit it by hand"))
    };
    let command_line = format!("command = {}", json!(command));
    let args_line = "args = [\"mcp\"]".to_string();
    let text = old.unwrap_or("");
    let lines: Vec<&str> = text.lines().collect();
    let code = code_lines(text);
    let mut table: Option<usize> = None;
    let mut in_servers = false;
    for (n, raw) in lines.iter().enumerate() {
        if !code[n] {
            continue;
        }
        let line = strip_comment(raw).trim();
        if line.starts_with('[') {
            in_servers = line.trim_start_matches('[').trim_end_matches(']').trim() == "mcp_servers";
            if is_our_header(line) {
                if table.is_some() {
                    return Err(refuse("declares [mcp_servers.seneschal] twice"));
                }
                table = Some(n);
            }
            continue;
        }
        let key = line.split('=').next().unwrap_or("").trim();
        let dotted = key.replace(' ', "");
        if dotted.starts_with("mcp_servers.seneschal")
            || dotted.starts_with("mcp_servers.\"seneschal\"")
            || (in_servers && (key == NAME || key == "\"seneschal\""))
        {
            return Err(refuse(
                "writes the seneschal server as a dotted key or an inline table",
            ));
        }
    }
    let Some(header) = table else {
        let mut s = text.to_string();
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        if !s.trim().is_empty() {
            s.push('\n');
        }
        s.push_str(&format!(
            "[mcp_servers.{NAME}]\n{command_line}\n{args_line}\n"
        ));
        return Ok(Some(s));
    };
    // The table's lines, up to the next header; a multi-line array is one key.
    let mut spans: Vec<(usize, usize, String, String)> = Vec::new();
    let mut n = header + 1;
    while n < lines.len() {
        if !code[n] {
            n += 1;
            continue;
        }
        let line = strip_comment(lines[n]).trim();
        if line.starts_with('[') {
            break;
        }
        let start = n;
        let Some((key, value)) = line.split_once('=') else {
            n += 1;
            continue;
        };
        // A value in a multi-line string: its lines are the key's too.
        while n + 1 < lines.len() && !code[n + 1] {
            n += 1;
        }
        let mut value = value.trim().to_string();
        if value.starts_with('[') {
            while !value.trim_end().ends_with(']') && n + 1 < lines.len() {
                n += 1;
                value.push(' ');
                value.push_str(strip_comment(lines[n]).trim());
            }
        }
        spans.push((start, n, key.trim().to_string(), value));
        n += 1;
    }
    let current = |k: &str| {
        spans
            .iter()
            .find(|(_, _, key, _)| key == k)
            .and_then(|(_, _, _, v)| toml_strings(v))
    };
    if current("command") == Some(vec![command.to_string()])
        && current("args") == Some(vec!["mcp".to_string()])
    {
        return Ok(None);
    }
    let ours: Vec<&(usize, usize, String, String)> = spans
        .iter()
        .filter(|(_, _, k, _)| k == "command" || k == "args")
        .collect();
    let at = ours.first().map_or(header + 1, |s| s.0);
    let mut out: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i == at {
            out.push(command_line.clone());
            out.push(args_line.clone());
        }
        if ours.iter().any(|(s, e, _, _)| (*s..=*e).contains(&i)) {
            continue;
        }
        out.push(line.to_string());
    }
    if at >= lines.len() {
        out.push(command_line);
        out.push(args_line);
    }
    let mut s = out.join("\n");
    s.push('\n');
    Ok(Some(s))
}

// ---- The capability -------------------------------------------------------------------------

fn action_word(a: mcp_wire::OutputClientsItemAction) -> &'static str {
    match a {
        mcp_wire::OutputClientsItemAction::Create => "create",
        mcp_wire::OutputClientsItemAction::Change => "change",
        mcp_wire::OutputClientsItemAction::Unchanged => "unchanged",
    }
}

/// What the call does: each client's file and action, the new bytes of each file it writes.
struct Prepared {
    clients: Vec<mcp_wire::OutputClientsItem>,
    writes: Vec<(String, Option<Vec<u8>>)>,
    effects: Effects,
}

fn prepare(
    root: &std::path::Path,
    targets: &[&Target],
    command: &str,
) -> Result<Prepared, CapabilityError> {
    let mut p = Prepared {
        clients: Vec::new(),
        writes: Vec::new(),
        effects: Effects::default(),
    };
    for t in targets {
        let old = read_config(root, t.file)?;
        let new = match t.format {
            Format::Json { key, typed } => {
                let mut desired = Vec::new();
                if typed {
                    desired.push(("type".to_string(), json!("stdio")));
                }
                desired.push(("command".to_string(), json!(command)));
                desired.push(("args".to_string(), json!(["mcp"])));
                merge_json(old.as_deref(), t.file, key, &desired)?
            }
            Format::CodexToml => merge_codex(old.as_deref(), t.file, command)?,
        };
        let action = match (&old, &new) {
            (_, None) => mcp_wire::OutputClientsItemAction::Unchanged,
            (None, Some(_)) => mcp_wire::OutputClientsItemAction::Create,
            (Some(_), Some(_)) => mcp_wire::OutputClientsItemAction::Change,
        };
        match action_word(action) {
            "create" => p.effects.create.push(t.file.to_string()),
            "change" => p.effects.change.push(t.file.to_string()),
            _ => {}
        }
        if let Some(bytes) = new {
            p.writes
                .push((t.file.to_string(), Some(bytes.into_bytes())));
        }
        p.clients.push(mcp_wire::OutputClientsItem {
            client: t.client,
            file: t.file.to_string(),
            action,
        });
    }
    Ok(p)
}

/// Whether `name` (no `/`) is an executable file in a folder of `$PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The command the clients are given for `asked`, and why it differs or fails, if it does: a
/// bare `seneschal` that is not on PATH becomes the absolute path of this binary (a client
/// would otherwise fail to spawn it); another command that does not resolve is kept, said.
fn resolve(asked: &str) -> (String, Option<String>) {
    if asked.contains('/') {
        let runs = std::fs::metadata(asked).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        let note = (!runs).then(|| {
            format!("`{asked}` is not an executable file: the clients will fail to start it")
        });
        return (asked.to_string(), note);
    }
    if on_path(asked) {
        return (asked.to_string(), None);
    }
    if asked == NAME {
        if let Ok(exe) = std::env::current_exe().and_then(|p| p.canonicalize()) {
            let path = exe.to_string_lossy().into_owned();
            let note = format!(
                "`{NAME}` is not on PATH, so the clients start this binary by its path, {path}; \
                 install it (`cargo install --locked --path .` in seneschal's checkout) and wire \
                 again to write the name"
            );
            return (path, Some(note));
        }
    }
    (
        asked.to_string(),
        Some(format!(
            "`{asked}` is not on PATH: the clients will fail to start it until it is"
        )),
    )
}

fn output(
    p: &Prepared,
    command: &str,
    note: Option<&str>,
    applied: bool,
    dry_run: bool,
) -> Result<mcp_wire::Output, CapabilityError> {
    let files: Vec<&str> = p.clients.iter().map(|c| c.file.as_str()).collect();
    let review = crate::registry::find("mcp.wire")
        .expect("a registered capability")
        .1
        .render_review(&json!({ "command": command, "files": files.join(", ") }));
    let plan: mcp_wire::OutputPlan = serde_json::from_value(p.effects.plan())
        .map_err(|e| CapabilityError::internal(format!("the plan does not fit its schema: {e}")))?;
    Ok(mcp_wire::Output {
        applied,
        dry_run,
        replayed: false,
        command: command.to_string(),
        note: note.map(str::to_string),
        clients: p.clients.clone(),
        plan,
        review,
    })
}

/// `mcp.wire`: wires the clients asked for, through the store.
pub fn wire(ctx: &Call, input: mcp_wire::Input) -> Result<mcp_wire::Output, CapabilityError> {
    let raw = serde_json::to_value(&input).map_err(|e| CapabilityError::internal(e.to_string()))?;
    if input.command.as_str().chars().any(char::is_control) {
        return Err(
            CapabilityError::invalid_input("the command cannot hold a control character")
                .at("/command"),
        );
    }
    let (command, note) = resolve(input.command.as_str());
    let note = note.as_deref();
    let asked: Vec<String> = input
        .clients
        .iter()
        .map(|c| {
            serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    let targets: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| asked.is_empty() || asked.iter().any(|a| a == t.name))
        .collect();
    super::plan_or_apply(ctx, "mcp.wire", &raw, input.dry_run, |dry| {
        let p = prepare(&ctx.repo, &targets, &command)?;
        let answer = output(&p, &command, note, !dry && !p.writes.is_empty(), dry)?;
        Ok(store::Plan {
            writes: store::tree_writes(&ctx.repo, p.writes)?,
            modes: Vec::new(),
            effects: p.effects,
            answer,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desired() -> Vec<(String, Value)> {
        vec![
            ("command".into(), json!("seneschal")),
            ("args".into(), json!(["mcp"])),
        ]
    }

    #[test]
    fn json_edits_touch_only_the_seneschal_entry() {
        let old = "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    }\n}\n";
        let new = merge_json(Some(old), "f", "mcpServers", &desired())
            .unwrap()
            .unwrap();
        assert_eq!(
            new,
            "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"seneschal\": {\"command\": \"seneschal\", \"args\": [\"mcp\"]}\n    }\n}\n"
        );
        assert_eq!(
            merge_json(Some(&new), "f", "mcpServers", &desired()).unwrap(),
            None
        );
        // A stale entry is replaced, its other keys kept.
        let stale =
            "{\"mcpServers\": {\"seneschal\": {\"command\": \"old\", \"env\": {\"A\": \"1\"}}}}";
        let fixed = merge_json(Some(stale), "f", "mcpServers", &desired())
            .unwrap()
            .unwrap();
        assert_eq!(
            fixed,
            "{\"mcpServers\": {\"seneschal\": {\"command\": \"seneschal\", \"args\": [\"mcp\"], \"env\": {\"A\":\"1\"}}}}"
        );
        // No servers key yet, an empty object, no file.
        for old in ["{\"a\": [1, {\"b\": \"}\"}]}", "{}", "", "{ }"] {
            let v: Value = serde_json::from_str(
                &merge_json(Some(old), "f", "mcpServers", &desired())
                    .unwrap()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(
                v["mcpServers"]["seneschal"]["args"],
                json!(["mcp"]),
                "{old}"
            );
        }
        for bad in [
            "[1]",
            "{\"mcpServers\": 3}",
            "{nope",
            "{\"mcpServers\": {\"seneschal\": 1}}",
        ] {
            let e = merge_json(Some(bad), "f", "mcpServers", &desired()).unwrap_err();
            assert_eq!(e.code.as_str(), "refused", "{bad}");
        }
    }

    #[test]
    fn codex_tables_are_added_or_set_in_place() {
        let old = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let new = merge_codex(Some(old), "f", "seneschal").unwrap().unwrap();
        assert_eq!(
            new,
            "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[mcp_servers.seneschal]\ncommand = \"seneschal\"\nargs = [\"mcp\"]\n"
        );
        assert_eq!(merge_codex(Some(&new), "f", "seneschal").unwrap(), None);
        let stale = "[mcp_servers.seneschal]\ncommand = \"cargo\"\nargs = [\n  \"run\",\n  \"mcp\",\n]\nenv = { A = \"1\" }\n\n[other]\nx = 1\n";
        let fixed = merge_codex(Some(stale), "f", "/opt/seneschal")
            .unwrap()
            .unwrap();
        assert_eq!(
            fixed,
            "[mcp_servers.seneschal]\ncommand = \"/opt/seneschal\"\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n\n[other]\nx = 1\n"
        );
        assert_eq!(
            merge_codex(None, "f", "seneschal")
                .unwrap()
                .unwrap()
                .lines()
                .count(),
            3
        );
        for bad in [
            "mcp_servers.seneschal.command = \"x\"\n",
            "[mcp_servers]\nseneschal = { command = \"x\" }\n",
            "[mcp_servers.seneschal]\n[mcp_servers.seneschal]\n",
        ] {
            assert_eq!(
                merge_codex(Some(bad), "f", "seneschal")
                    .unwrap_err()
                    .code
                    .as_str(),
                "refused",
                "{bad}"
            );
        }
    }
}
