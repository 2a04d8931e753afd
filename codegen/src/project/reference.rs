//! `generated/capabilities.md`: the human reference, one section per capability.

use std::fmt::Write;

use super::GENERATED_BY;
use crate::codes::{ErrorCode, EXIT_STALE};
use crate::model::{Capability, Registry};

fn yes(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// One capability's section.
pub fn section(c: &Capability) -> String {
    let mut s = String::new();
    let h = c.hints();
    let _ = writeln!(s, "## `{}` — {}\n", c.id, c.title);
    let _ = writeln!(s, "{}\n", c.description);
    if let Some(details) = &c.details {
        let _ = writeln!(s, "{details}\n");
    }
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| kind | {} |", c.kind_str());
    let _ = writeln!(s, "| stability | {} |", c.stability.as_str());
    let _ = writeln!(
        s,
        "| toolset | `{}` ({}) |",
        c.toolset.as_str(),
        c.toolset.about()
    );
    if let Some(name) = &c.expose.mcp_tool {
        use super::mcp_tools::{cost, tool, BYTES_PER_TOKEN, TOOL_BUDGET_BYTES};
        let bytes = cost(&tool(c, name));
        let _ = writeln!(
            s,
            "| listing cost | {bytes} bytes in `tools/list`, about {} tokens (a token per {BYTES_PER_TOKEN} bytes); budget {TOOL_BUDGET_BYTES} bytes |",
            bytes.div_ceil(BYTES_PER_TOKEN)
        );
    }
    let additive = if c.additive {
        ", additive: adds files, never changes or removes an existing one"
    } else {
        ""
    };
    let git_state = if c.git_state {
        ", git state: changes the index, refs or HEAD under `.git/`"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "| effect | `{}`{additive}{git_state} |",
        c.effect.as_str()
    );
    let _ = writeln!(
        s,
        "| hints | readOnlyHint={} destructiveHint={} idempotentHint={} openWorldHint={} |",
        yes(h.read_only),
        yes(h.destructive),
        yes(h.idempotent),
        yes(h.open_world)
    );
    let _ = writeln!(s, "| approval | `{}` |", c.approval().as_str());
    let _ = writeln!(s, "| disclosure | `{}` |", c.disclosure.as_str());
    let _ = writeln!(s, "| determinism | `{}` |", c.determinism.as_str());
    if !c.tags.is_empty() {
        let _ = writeln!(s, "| tags | {} |", c.tags.join(", "));
    }
    if let Some((m, f)) = &c.handler {
        let _ = writeln!(s, "| handler | `core/src/handlers/{m}.rs` `{f}` |");
    }
    if let Some(content) = &c.content {
        if c.binary() {
            let _ = writeln!(
                s,
                "| content | `{content}` ({}, binary: read as `blob`, base64) |",
                c.mime_type
            );
        } else {
            let _ = writeln!(s, "| content | `{content}` ({}) |", c.mime_type);
        }
    }
    if !c.content_blocks.is_empty() {
        let _ = writeln!(
            s,
            "| content blocks | {}: the answer's `content` array; MCP `tools/call` sends them after the JSON text block, HTTP and the CLI answer them in the JSON (bytes base64) |",
            c.content_blocks.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(t) = &c.task {
        let _ = writeln!(
            s,
            "| MCP task | `{t}`: a 2026-07-28 client that declares the tasks extension (`io.modelcontextprotocol/tasks`) gets a task to poll with `tasks/get`{} |",
            if t == "required" { "; any other client is refused (-32021)" } else { "; any other client gets the answer itself" }
        );
    }
    let _ = writeln!(
        s,
        "| manifest | `{}` |",
        c.source.to_string_lossy().replace('\\', "/")
    );
    let _ = writeln!(s, "| review | {} |\n", c.review.replace('|', "\\|"));
    let _ = writeln!(s, "**Exposures**\n");
    let e = &c.expose;
    let none = "—".to_string();
    let _ = writeln!(
        s,
        "- MCP tool: {}",
        e.mcp_tool
            .as_ref()
            .map(|t| format!("`{t}`"))
            .unwrap_or(none.clone())
    );
    let _ = writeln!(
        s,
        "- MCP resource: {}",
        e.mcp_resource
            .as_ref()
            .map(|t| format!("`{t}`"))
            .unwrap_or(none.clone())
    );
    let _ = writeln!(
        s,
        "- HTTP: {}",
        e.http
            .as_ref()
            .map(|h| format!("`{} {}`", h.method, h.path))
            .unwrap_or(none.clone())
    );
    let _ = writeln!(
        s,
        "- CLI: {}\n",
        e.cli
            .as_ref()
            .map(|p| format!("`seneschal {}`", p.join(" ")))
            .unwrap_or(none)
    );
    let _ = writeln!(s, "**Errors**\n");
    for code in c.all_errors() {
        let _ = writeln!(
            s,
            "- `{}` (HTTP {}, exit {}): {}",
            code.as_str(),
            code.http_status(),
            code.exit_code(),
            code.meaning()
        );
    }
    let _ = writeln!(
        s,
        "\n**Input schema**\n\n```json\n{}\n```\n",
        pretty(&c.input)
    );
    let _ = writeln!(
        s,
        "**Output schema**\n\n```json\n{}\n```\n",
        pretty(&c.output)
    );
    if !c.examples.is_empty() {
        let _ = writeln!(s, "**Examples**\n");
        for ex in &c.examples {
            let _ = writeln!(
                s,
                "- {} — input `{}` → `{}`",
                ex.title,
                serde_json::to_string(&ex.input).unwrap_or_default(),
                ex.outcome
            );
        }
        let _ = writeln!(s);
    }
    s
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The "Rust types" part of a capability's section (outside [`section`], which the contract
/// lock hashes: the Rust types are no part of the wire contract).
pub fn rust_section(c: &Capability) -> String {
    match crate::project::rust::rust_types(c) {
        Some(text) => {
            let mut s = format!(
                "**Rust types** (`crate::registry::types::{}`, generated into `OUT_DIR/registry.rs`; the handler takes `Input` and returns `Output`)\n\n```rust\n{}```\n\n",
                c.module_name(),
                text
            );
            for (name, which) in [("Input", "input"), ("Output", "output")] {
                if text.contains(&format!("pub type {name} = serde_json::Value;")) {
                    let _ = writeln!(
                        s,
                        "typify cannot type the {which} schema, so `{name}` is a `serde_json::Value`: every keyword of the schema still holds, because the executor validates the {which} against the full schema (JSON Schema 2020-12).\n"
                    );
                }
            }
            s
        }
        None => String::new(),
    }
}

/// The whole reference.
pub fn render(reg: &Registry, digest: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<!-- Generated by {GENERATED_BY}. -->\n");
    let _ = writeln!(s, "# seneschal capability reference\n");
    let _ = writeln!(
        s,
        "Version {}. Every capability below is declared once, in its manifest under `capabilities/`; \
the MCP tools, HTTP routes, CLI commands and this page are projections of it.\n\n\
Surface digest: `{digest}` (see `generated/contract.lock`).\n",
        reg.version
    );
    let _ = writeln!(s, "| id | title | effect | stability | MCP tool | HTTP | CLI |\n|---|---|---|---|---|---|---|");
    for c in &reg.capabilities {
        let e = &c.expose;
        let _ = writeln!(
            s,
            "| [`{}`](#{}) | {} | `{}` | {} | {} | {} | {} |",
            c.id,
            anchor(c),
            c.title,
            c.effect.as_str(),
            c.stability.as_str(),
            e.mcp_tool
                .as_ref()
                .map(|t| format!("`{t}`"))
                .unwrap_or_default(),
            e.http
                .as_ref()
                .map(|h| format!("`{} {}`", h.method, h.path))
                .unwrap_or_default(),
            e.cli
                .as_ref()
                .map(|p| format!("`{}`", p.join(" ")))
                .unwrap_or_default(),
        );
    }
    let _ = writeln!(s, "\n## Error codes\n\nEvery transport reads the same code: HTTP answers `application/problem+json` with a `code` member and the status below; MCP answers a tool result with `isError: true` and `_meta[\"seneschal/error\"].code`; the command line prints `error[code]: message` on stderr and exits with the code below.\n");
    let _ = writeln!(s, "| code | HTTP | exit | meaning |\n|---|---|---|---|");
    for code in ErrorCode::ALL {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            code.as_str(),
            code.http_status(),
            code.exit_code(),
            code.meaning()
        );
    }
    let _ = writeln!(
        s,
        "\n`seneschal generate --check` exits {EXIT_STALE} when a committed projection is stale.\n"
    );
    for c in &reg.capabilities {
        s.push_str(&section(c));
        s.push_str(&rust_section(c));
    }
    s
}

/// The GitHub-style anchor of a section heading.
fn anchor(c: &Capability) -> String {
    let heading = format!("{} — {}", c.id, c.title);
    heading
        .to_lowercase()
        .chars()
        .filter_map(|ch| match ch {
            'a'..='z' | '0'..='9' | '-' | '_' => Some(ch),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}
