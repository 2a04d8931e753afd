//! The prose check: documentation may name only the tools, resource URIs, routes and CLI
//! paths that the registry projects. Anything tool-shaped that the registry does not hold is a
//! finding with its line, so docs cannot promise a surface that does not exist.
//!
//! A hypothetical example (such as the README's "add a capability" walkthrough) is fenced
//! between `<!-- prose-check: off -->` and `<!-- prose-check: on -->`.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::registry::CAPABILITIES;

/// One name the registry does not project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line.
    pub line: usize,
    /// The name as written.
    pub name: String,
    /// What kind of name it is and why it is refused.
    pub message: String,
}

/// Commands of seneschal itself (not capabilities).
const BUILT_IN: &[&[&str]] = &[
    &["call"],
    &["generate"],
    &["mcp"],
    &["serve"],
    &["completions"],
    &["man"],
    &["conformance"],
    &["new"],
    &["audit", "verify"],
    &["help"],
    &["contract", "diff"],
    &["contract", "check"],
    &["contract", "release"],
];

fn collect_properties(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            for x in m.values() {
                collect_properties(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_properties(x, out)),
        _ => {}
    }
}

/// What the registry projects, and the field names that merely look like tools.
struct Known {
    tools: BTreeSet<&'static str>,
    groups: BTreeSet<&'static str>,
    resources: BTreeSet<&'static str>,
    routes: BTreeSet<&'static str>,
    cli: Vec<Vec<&'static str>>,
    fields: BTreeSet<String>,
}

fn known() -> Known {
    let mut fields = BTreeSet::new();
    let manifest_schema: Value =
        serde_json::from_str(include_str!("../share/schemas/capability.schema.json"))
            .expect("the manifest schema parses");
    collect_properties(&manifest_schema, &mut fields);
    for d in CAPABILITIES.iter() {
        for schema in [d.input_schema, d.output_schema] {
            if let Ok(v) = serde_json::from_str::<Value>(schema) {
                collect_properties(&v, &mut fields);
            }
        }
    }
    let executable = || CAPABILITIES.iter().filter(|d| d.executable());
    let mut cli: Vec<Vec<&'static str>> = executable()
        .filter(|d| !d.cli.is_empty())
        .map(|d| d.cli.to_vec())
        .collect();
    cli.extend(BUILT_IN.iter().map(|p| p.to_vec()));
    Known {
        tools: executable().filter_map(|d| d.mcp_tool).collect(),
        groups: CAPABILITIES
            .iter()
            .filter_map(|d| d.id.split('.').next())
            .collect(),
        resources: executable().filter_map(|d| d.mcp_resource).collect(),
        routes: executable()
            .filter_map(|d| d.http.map(|h| h.path))
            .collect(),
        cli,
        fields,
    }
}

fn is_tool_shaped(token: &str) -> bool {
    let mut parts = token.split('_');
    let first = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    !first.is_empty()
        && !rest.is_empty()
        && first.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && token
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && rest.iter().all(|p| !p.is_empty())
}

/// Checks one document's text.
pub fn check(text: &str) -> Vec<Finding> {
    let k = known();
    let mut out = Vec::new();
    let mut enabled = true;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.contains("<!-- prose-check: off -->") {
            enabled = false;
        }
        if line.contains("<!-- prose-check: on -->") {
            enabled = true;
            continue;
        }
        if !enabled {
            continue;
        }
        // Resource URIs.
        for (pos, _) in line.match_indices("seneschal://") {
            let uri: String = line[pos..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !"`)\"'>,]".contains(*c))
                .collect();
            let uri = uri.trim_end_matches(['.', ':', ';']);
            if !k.resources.contains(uri) && !uri.starts_with("seneschal://knowledge/") {
                out.push(Finding {
                    line: n,
                    name: uri.to_string(),
                    message: "resource URI the registry does not serve".into(),
                });
            }
        }
        // Routes.
        for (pos, _) in line.match_indices("/api/v1/") {
            let route: String = line[pos..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_/-".contains(*c))
                .collect();
            let route = route.trim_end_matches('/');
            if !k.routes.contains(route) {
                out.push(Finding {
                    line: n,
                    name: route.to_string(),
                    message: "HTTP route the registry does not declare".into(),
                });
            }
        }
        // Code spans: tool names and CLI paths.
        for (j, span) in line.split('`').enumerate() {
            if j % 2 == 0 {
                continue;
            }
            let span = span.trim();
            if is_tool_shaped(span)
                && k.groups.contains(span.split('_').next().unwrap_or(""))
                && !k.tools.contains(span)
                && !k.fields.contains(span)
            {
                out.push(Finding {
                    line: n,
                    name: span.to_string(),
                    message: "MCP tool the registry does not list".into(),
                });
            }
            if let Some(rest) = span.strip_prefix("seneschal ") {
                let words: Vec<&str> = rest
                    .split_whitespace()
                    .take_while(|w| {
                        !w.starts_with('-')
                            && !w.is_empty()
                            && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    })
                    .collect();
                if words.is_empty() {
                    continue;
                }
                // The words name a whole path (then perhaps its arguments), or a group prefix.
                let ok = k.cli.iter().any(|p| {
                    let n = p.len().min(words.len());
                    p[..n] == words[..n]
                });
                if !ok {
                    out.push(Finding {
                        line: n,
                        name: format!("seneschal {}", words.join(" ")),
                        message: "CLI path the registry does not project".into(),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_names_pass_and_invented_ones_are_found() {
        let ok = "Call `capabilities_list` or `seneschal capabilities list --json`, read `seneschal://capabilities`, GET `/api/v1/capabilities`; the `mcp_tool` field.";
        assert_eq!(check(ok), vec![]);
        let bad = "Try `repo_teleport`\nor seneschal://nowhere\nor /api/v1/nowhere\nor `seneschal teleport now`";
        let found: Vec<(usize, String)> =
            check(bad).into_iter().map(|f| (f.line, f.name)).collect();
        assert_eq!(
            found,
            vec![
                (1, "repo_teleport".to_string()),
                (2, "seneschal://nowhere".to_string()),
                (3, "/api/v1/nowhere".to_string()),
                (4, "seneschal teleport now".to_string()),
            ]
        );
        let fenced = "<!-- prose-check: off -->\n`repo_teleport`\n<!-- prose-check: on -->\n";
        assert_eq!(check(fenced), vec![]);
    }
}
