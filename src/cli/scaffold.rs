//! `seneschal new <id>`: the scaffold of a capability in the workspace of seneschal itself.
//!
//! It writes `capabilities/<id>.yaml` (every required field, a commented example for the
//! others, exposures derived from the id) and, for a query, the handler with the exact
//! signature and generated type paths in its group file `core/src/handlers/<group>.rs` (created
//! when new, with its `pub mod <group>;` line added to `core/src/handlers/mod.rs`). The untouched
//! scaffold builds, and the capability answers on every transport.

use std::path::{Path, PathBuf};

use clap::{Arg, ArgMatches, Command};

use crate::error::CapabilityError;
use crate::policy::Effect;

/// The `new` subcommand.
pub fn command() -> Command {
    Command::new("new")
        .about("Scaffold a capability: its manifest and, for a query, its handler (in the workspace of seneschal itself)")
        .arg(
            Arg::new("id")
                .required(true)
                .value_name("ID")
                .help("Canonical id, dot-separated lower-case segments: `files.list`; the first is the handler group"),
        )
        .arg(
            Arg::new("effect")
                .long("effect")
                .value_name("EFFECT")
                .value_parser(Effect::ALL.map(|e| e.as_str()))
                .default_value("read")
                .help("What a call may change"),
        )
        .arg(
            Arg::new("kind")
                .long("kind")
                .value_name("KIND")
                .value_parser(["query", "resource"])
                .default_value("query")
                .help("A query runs a handler; a resource serves a file embedded at build time"),
        )
        .arg(
            Arg::new("workspace")
                .long("workspace")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The workspace of seneschal [default: the one holding the current directory]"),
        )
}

/// What `new` wrote, relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Files created.
    pub created: Vec<String>,
    /// Files changed.
    pub changed: Vec<String>,
}

/// Runs `new` from its matches in the workspace `ws` (seneschal's own checkout, which the
/// caller found: [`super::checkout::require`]).
pub fn run(m: &ArgMatches, ws: &Path) -> Result<String, CapabilityError> {
    let id = m.get_one::<String>("id").expect("required");
    let effect = Effect::parse(m.get_one::<String>("effect").expect("defaulted"))
        .expect("clap checked the effect");
    let kind = m.get_one::<String>("kind").expect("defaulted");
    let written = scaffold(ws, id, effect, kind == "resource")?;
    let mut s = String::new();
    for f in &written.created {
        s.push_str(&format!("created {f}\n"));
    }
    for f in &written.changed {
        s.push_str(&format!("changed {f}\n"));
    }
    s.push_str(&format!(
        "next: fill in {}, then `cargo build` and `cargo test`; bump the version in Cargo.toml as the release gate in `cargo test` asks (a new capability is a minor change; README, \"Adding a capability\")\n",
        written.created.first().map_or("the manifest", String::as_str)
    ));
    Ok(s)
}

/// Whether `id` is a canonical id: dot-separated segments of `[a-z][a-z0-9_]*`, at least two.
fn valid_id(id: &str) -> bool {
    let segments: Vec<&str> = id.split('.').collect();
    segments.len() >= 2
        && segments.iter().all(|s| {
            let mut c = s.chars();
            c.next().is_some_and(|f| f.is_ascii_lowercase())
                && c.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Writes the scaffold of `id` into the workspace `ws`.
pub fn scaffold(
    ws: &Path,
    id: &str,
    effect: Effect,
    resource: bool,
) -> Result<Written, CapabilityError> {
    if !valid_id(id) {
        return Err(CapabilityError::invalid_input(format!(
            "`{id}` is not a canonical id: dot-separated lower-case segments (letters, digits, `_`), at least two, such as `files.list`"
        ))
        .at("/id"));
    }
    if resource && effect != Effect::Read {
        return Err(CapabilityError::invalid_input(
            "a resource is read-only: `--kind resource` takes no --effect but read",
        )
        .at("/effect"));
    }
    let manifest = ws.join("capabilities").join(format!("{id}.yaml"));
    if manifest.exists() {
        return Err(CapabilityError::conflict(format!(
            "capabilities/{id}.yaml exists already: choose another id"
        )));
    }
    let (group, rest) = id.split_once('.').expect("valid ids have two segments");
    let function = rest.replace('.', "_");
    let types = id.replace('.', "_");
    let mut written = Written {
        created: vec![format!("capabilities/{id}.yaml")],
        changed: Vec::new(),
    };
    if resource {
        let content = format!("docs/{id}.md");
        let path = ws.join(&content);
        if !path.exists() {
            write(
                &path,
                &format!(
                    "# {}\n\nThe content of this resource, embedded at build time.\n",
                    title(id)
                ),
            )?;
            written.created.push(content.clone());
        }
        write(&manifest, &resource_manifest(id, &content))?;
        return Ok(written);
    }
    let handlers = ws.join("core/src/handlers");
    let group_file = handlers.join(format!("{group}.rs"));
    if group_file.exists() {
        let text = read(&group_file)?;
        let needle = format!("fn {function}(");
        let taken = text.lines().any(|l| {
            let code = l.trim_start();
            code.starts_with(&needle) || code.starts_with(&format!("pub {needle}"))
        });
        if taken {
            return Err(CapabilityError::conflict(format!(
                "core/src/handlers/{group}.rs has a `fn {function}` already: choose another id"
            )));
        }
        let mut text = text;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&handler(id, &function, &types, true));
        write(&group_file, &text)?;
        written
            .changed
            .push(format!("core/src/handlers/{group}.rs"));
    } else {
        let text = format!(
            "//! Handlers of the `{group}.*` group.\n\nuse crate::context::Call;\nuse seneschal_access::error::CapabilityError;\nuse crate::registry::types::{types};\n\n{}",
            handler(id, &function, &types, false)
        );
        write(&group_file, &text)?;
        written
            .created
            .push(format!("core/src/handlers/{group}.rs"));
        let mod_rs = handlers.join("mod.rs");
        let text = read(&mod_rs)?;
        write(&mod_rs, &with_module(&text, group))?;
        written.changed.push("core/src/handlers/mod.rs".to_string());
    }
    write(&manifest, &query_manifest(id, group, &function, effect))?;
    // Formatted as rustfmt would (long type paths wrap): best effort, the file is valid Rust.
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2021"])
        .arg(&group_file)
        .stderr(std::process::Stdio::null())
        .status();
    Ok(written)
}

fn read(path: &Path) -> Result<String, CapabilityError> {
    std::fs::read_to_string(path)
        .map_err(|e| CapabilityError::internal(format!("cannot read {}: {e}", path.display())))
}

fn write(path: &Path, text: &str) -> Result<(), CapabilityError> {
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(path, text)
        .map_err(|e| CapabilityError::internal(format!("cannot write {}: {e}", path.display())))
}

/// `files.list` → `Files list`.
fn title(id: &str) -> String {
    let words = id.replace(['.', '_'], " ");
    let mut c = words.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => words,
    }
}

/// `mod.rs` with `pub mod <group>;` among its plain declarations, in alphabetical order.
fn with_module(text: &str, group: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let plain = |i: usize| {
        let l = lines[i];
        l.starts_with("pub mod ")
            && l.ends_with(';')
            && (i == 0 || !lines[i - 1].trim_start().starts_with("#["))
    };
    let name = |i: usize| lines[i]["pub mod ".len()..lines[i].len() - 1].to_string();
    let declared: Vec<usize> = (0..lines.len()).filter(|&i| plain(i)).collect();
    let at = declared
        .iter()
        .find(|&&i| name(i).as_str() > group)
        .copied()
        .or_else(|| declared.last().map(|i| i + 1))
        .unwrap_or(lines.len());
    let line = format!("pub mod {group};");
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(&line);
    out.extend(&lines[at..]);
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// The handler function of a scaffolded query; `qualified` writes full paths (for a file
/// whose `use` items are not ours to edit).
fn handler(id: &str, function: &str, types: &str, qualified: bool) -> String {
    let (ctx, error, module) = if qualified {
        (
            "crate::context::Call",
            "seneschal_access::error::CapabilityError",
            format!("crate::registry::types::{types}"),
        )
    } else {
        ("Call", "CapabilityError", types.to_string())
    };
    format!(
        "/// `{id}`: replace this body with what the capability does. `{types}::Input` and\n/// `Output` are generated from the manifest's schemas (see the reference,\n/// generated/capabilities.md).\npub fn {function}(\n    _ctx: &{ctx},\n    _input: {module}::Input,\n) -> Result<{module}::Output, {error}> {{\n    Ok({module}::Output {{ ok: true }})\n}}\n"
    )
}

/// The manifest of a scaffolded query.
fn query_manifest(id: &str, group: &str, function: &str, effect: Effect) -> String {
    let tool = id.replace('.', "_");
    let path = id.replace('.', "/");
    let cli: Vec<String> = id.split('.').map(|s| s.replace('_', "-")).collect();
    let method = if effect == Effect::Read {
        "GET"
    } else {
        "POST"
    };
    let title = title(id);
    let effect = effect.as_str();
    format!(
        r#"id: {id}
kind: query
title: {title}
description: >-
  What `{id}` answers, for whom, and what it leaves unchanged. (Written by `seneschal new`:
  replace this text.)
{handler_line}# pub fn {function} in core/src/handlers/{group}.rs
{effect_line}# read | process_state | repository_write
disclosure: none               # none | metadata | repository (the executor redacts every answer)
determinism: input             # input | repository | process
stability: experimental        # stable | experimental | planned (planned: no exposure, no handler)
{toolset_line}# files | history | git | knowledge | session | introspection
tags: [{group}]
input:
  type: object
  additionalProperties: false
  properties: {{}}
  # An argument, e.g.:
  # required: [name]
  # properties:
  #   name: {{ type: string, minLength: 1, description: "The name to look up." }}
output:
  type: object
  additionalProperties: false
  required: [ok]
  properties:
    ok: {{ type: boolean, description: "True when the call succeeded." }}
errors: []                     # the stable codes it may answer besides the universal ones, e.g. [not_found]
expose:
  mcp_tool: {tool}
  http: {{ method: {method}, path: /api/v1/{path} }}
  cli: [{cli}]
  # mcp_resource: seneschal://{path}   (a read query with no required argument)
{review_line}# the one line a reviewer approves; {{name}} inserts an argument
examples:
  - title: the scaffold answers
    input: {{}}
    outcome: ok
  # An example of an error it declares, e.g.:
  # - title: an unknown name
  #   input: {{ name: nobody }}
  #   outcome: not_found
"#,
        cli = cli.join(", "),
        handler_line = padded(&format!("handler: {group}::{function}")),
        toolset_line = padded(&format!("toolset: {}", toolset_of(group))),
        effect_line = padded(&format!("effect: {effect}")),
        review_line = padded(&format!("review: '{title}'")),
    )
}

/// The toolset a new capability of `group` starts in: the one its group's capabilities are
/// in (`repo` reads are history), else session; the manifest's comment lists the others.
fn toolset_of(group: &str) -> &'static str {
    let same = crate::registry::CAPABILITIES
        .iter()
        .find(|d| d.id.split('.').next() == Some(group));
    match same {
        Some(d) if d.id.starts_with("repo.") => "history",
        Some(d) => d.toolset.as_str(),
        None => "session",
    }
}

/// A manifest line padded to the column of the comments.
fn padded(line: &str) -> String {
    format!("{line:<30} ")
}

/// The manifest of a scaffolded resource.
fn resource_manifest(id: &str, content: &str) -> String {
    let path = id.replace('.', "/");
    let cli: Vec<String> = id.split('.').map(|s| s.replace('_', "-")).collect();
    let title = title(id);
    format!(
        r#"id: {id}
kind: resource
title: {title}
description: >-
  What `{id}` holds, embedded at build time from {content}. (Written by `seneschal new`:
  replace this text.)
content: {content}
mime_type: text/markdown
effect: read
disclosure: none               # none | metadata | repository
determinism: input
stability: experimental        # stable | experimental | planned
{toolset_line}# files | history | git | knowledge | session | introspection
tags: [{group}]
errors: []
expose:
  mcp_resource: seneschal://{path}
  http: {{ method: GET, path: /api/v1/{path} }}
  cli: [{cli}]
review: 'Read {title}'
examples:
  - title: the content
    input: {{}}
    outcome: ok
"#,
        group = id.split('.').next().unwrap_or_default(),
        toolset_line = padded(&format!(
            "toolset: {}",
            toolset_of(id.split('.').next().unwrap_or_default())
        )),
        cli = cli.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_and_titles_derived() {
        assert!(valid_id("files.list"));
        assert!(valid_id("session.note_count.all"));
        assert!(!valid_id("files"));
        assert!(!valid_id("Files.list"));
        assert!(!valid_id("files..list"));
        assert_eq!(title("files.list_all"), "Files list all");
    }

    #[test]
    fn a_new_group_line_lands_in_alphabetical_order_outside_the_gated_modules() {
        let text = "//! Handlers.\n\npub mod alpha;\npub mod gamma;\n\n#[cfg(feature = \"x\")]\npub mod zeta;\n";
        assert_eq!(
            with_module(text, "beta"),
            "//! Handlers.\n\npub mod alpha;\npub mod beta;\npub mod gamma;\n\n#[cfg(feature = \"x\")]\npub mod zeta;\n"
        );
        assert_eq!(
            with_module(text, "omega"),
            "//! Handlers.\n\npub mod alpha;\npub mod gamma;\npub mod omega;\n\n#[cfg(feature = \"x\")]\npub mod zeta;\n"
        );
    }
}
