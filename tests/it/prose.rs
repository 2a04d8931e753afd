//! The prose check over this repository's documentation: README, docs/**/*.md and the
//! generated references may name only what the registry projects.

use std::path::{Path, PathBuf};

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            markdown_under(&p, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("md") {
            out.push(p);
        }
    }
}

fn findings(files: &[PathBuf]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for finding in check::check(&text) {
            let rel = f.strip_prefix(root).unwrap_or(f).display();
            out.push(format!(
                "{rel}:{}: {}: `{}`",
                finding.line, finding.message, finding.name
            ));
        }
    }
    out
}

#[test]
fn documentation_names_only_what_the_registry_projects() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("README.md"),
        root.join("generated/capabilities.md"),
        root.join("generated/cli.md"),
    ];
    markdown_under(&root.join("docs"), &mut files);
    assert!(files.len() >= 5);
    let found = findings(&files);
    assert!(
        found.is_empty(),
        "documentation names what the registry does not project:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_document_naming_a_missing_tool_fails_with_file_and_line() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prose/invented.md");
    let found = findings(&[fixture]);
    assert_eq!(
        found,
        vec![
            "tests/fixtures/prose/invented.md:5: MCP tool the registry does not list: `repo_teleport`".to_string(),
            "tests/fixtures/prose/invented.md:7: CLI path the registry does not project: `seneschal repo teleport`".to_string(),
            "tests/fixtures/prose/invented.md:9: HTTP route the registry does not declare: `/api/v1/repo/teleport`".to_string(),
            "tests/fixtures/prose/invented.md:11: resource URI the registry does not serve: `seneschal://repo/teleport`".to_string(),
        ]
    );
}

/// Every test a document names as the one holding a claim exists: `tests/<file>.rs::<fn>` is a
/// function of that file, and `<module>::tests::<fn>` (or `<module>::<fn>`, for a module's unit
/// tests written as `module::tests::name`) a function of `src/<module>.rs` or
/// `src/<module>/mod.rs`. A renamed or removed test makes the document's claim unheld: this
/// fails and names the line.
#[test]
fn documentation_names_only_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_under(&root.join("docs"), &mut files);
    let integration =
        regex::Regex::new(r"((?:[A-Za-z0-9_-]+/)*tests/[A-Za-z0-9_/]+\.rs)::([A-Za-z0-9_]+)")
            .unwrap();
    let unit =
        regex::Regex::new(r"`([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)::tests::([A-Za-z0-9_]+)`")
            .unwrap();
    let has_fn = |file: &Path, name: &str| {
        std::fs::read_to_string(file)
            .map(|t| t.contains(&format!("fn {name}(")))
            .unwrap_or(false)
    };
    let mut named = 0;
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(root).unwrap_or(f).display().to_string();
        for (n, line) in text.lines().enumerate() {
            for c in integration.captures_iter(line) {
                named += 1;
                let (file, name) = (&c[1], &c[2]);
                // A test crate of several files: its functions may live in any of them.
                let path = root.join(file);
                let found = has_fn(&path, name)
                    || path.parent().is_some_and(|dir| {
                        dir != root.join("tests")
                            && std::fs::read_dir(dir)
                                .into_iter()
                                .flatten()
                                .flatten()
                                .any(|e| has_fn(&e.path(), name))
                    });
                if !found {
                    missing.push(format!("{rel}:{}: {file}::{name}", n + 1));
                }
            }
            for c in unit.captures_iter(line) {
                named += 1;
                let (module, name) = (c[1].replace("::", "/"), &c[2]);
                let module = module.strip_prefix("seneschal/").unwrap_or(&module);
                let found = module_files(module)
                    .iter()
                    .any(|p| has_fn(&root.join(p), name));
                if !found {
                    missing.push(format!("{rel}:{}: {}::tests::{name}", n + 1, &c[1]));
                }
            }
        }
    }
    assert!(
        named > 20,
        "the documents name {named} tests: the patterns no longer match them"
    );
    assert!(
        missing.is_empty(),
        "documents name tests that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The lines of `text` outside the `<!-- prose-check: off -->` fences, numbered from 1.
fn checked_lines(text: &str) -> Vec<(usize, &str)> {
    let mut enabled = true;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.contains("<!-- prose-check: off -->") {
            enabled = false;
        } else if line.contains("<!-- prose-check: on -->") {
            enabled = true;
        } else if enabled {
            out.push((i + 1, line));
        }
    }
    out
}

/// The words of the first shell command in `line` (as sh splits them: `'…'`, `"…"`, `$'…'`,
/// backslashes), up to a comment, a redirection, a pipe or a command separator.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '<' | '>' | '|' | ';' | '&' => break,
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '\'' => break,
                        '\\' => match chars.next() {
                            Some('n') => word.push('\n'),
                            Some('t') => word.push('\t'),
                            Some(o) => word.push(o),
                            None => {}
                        },
                        _ => word.push(q),
                    }
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `seneschal …` command `text` shows, with its line: each command of a shell block
/// (also after `&&`), and each code span that begins with `seneschal `.
fn commands_shown(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut fence: Option<bool> = None; // Some(is a shell block) inside a fence
    for (n, line) in checked_lines(text) {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(matches!(
                    trimmed.trim_start_matches('`'),
                    "sh" | "bash" | "shell" | "console"
                )),
            };
            continue;
        }
        match fence {
            Some(true) => {
                for part in trimmed.split("&&") {
                    let words = shell_words(part.trim());
                    if words.first().map(String::as_str) == Some("seneschal") {
                        out.push((n, words));
                    }
                }
            }
            Some(false) => {}
            None => {
                for (j, span) in line.split('`').enumerate() {
                    if j % 2 == 1 && span.starts_with("seneschal ") {
                        out.push((n, shell_words(span)));
                    }
                }
            }
        }
    }
    out
}

/// Every `seneschal …` command the README shows exists as written: the built binary's own
/// parser takes its words and flags (`<command> --help` exits 0), so a command, a subcommand or
/// a flag the binary does not have fails here, naming the line.
#[test]
fn every_command_the_readme_shows_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let shown = commands_shown(&readme);
    assert!(
        shown.len() > 30,
        "the README shows {} commands: the scan no longer finds them",
        shown.len()
    );
    let mut missing = Vec::new();
    for (line, words) in &shown {
        let mut args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        if !args.iter().any(|a| *a == "--help" || *a == "-h") {
            args.push("--help");
        }
        let o = crate::support::run(&args);
        if o.status.code() != Some(0) {
            let err = crate::support::stderr(&o);
            missing.push(format!(
                "README.md:{line}: `{}`: {}",
                words.join(" "),
                err.lines().next().unwrap_or("")
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "the README shows commands the binary does not have:\n{}",
        missing.join("\n")
    );
}

/// The statuses of a Markdown exit-code table in `text` (the table whose header begins
/// `| exit |`): its first cells, a range such as `20–23` counted whole.
fn table_statuses(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("| exit |") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cell = line
            .trim_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        out.extend(statuses_of(cell));
    }
    out
}

/// `10` → [10]; `20-23` or `20–23` → [20, 21, 22, 23]; anything else → [].
fn statuses_of(cell: &str) -> Vec<u8> {
    let cell = cell.replace('–', "-");
    match cell.split_once('-') {
        Some((a, b)) => match (a.parse::<u8>(), b.parse::<u8>()) {
            (Ok(a), Ok(b)) => (a..=b).collect(),
            _ => vec![],
        },
        None => cell.parse().into_iter().collect(),
    }
}

/// The statuses `seneschal --help` lists after `Exit codes:`.
fn help_statuses(help: &str) -> Vec<u8> {
    let table = help.split_once("Exit codes:").map_or("", |(_, t)| t);
    table
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .flat_map(statuses_of)
        .collect()
}

/// Every exit status the binary can return: success, each error code's, each command's of
/// the codes table, and every `const EXIT_…` written in the sources (which must be the
/// table's, so a status added beside it is counted here too).
fn exit_statuses() -> std::collections::BTreeSet<u8> {
    use seneschal::codes::{ErrorCode, COMMAND_EXITS};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all: std::collections::BTreeSet<u8> = [0].into_iter().collect();
    all.extend(ErrorCode::ALL.iter().map(|c| c.exit_code()));
    all.extend(COMMAND_EXITS.iter().flat_map(|e| e.first..=e.last));
    let constant = regex::Regex::new(r"const EXIT_[A-Z_]+: u8 = (\d+);").unwrap();
    let mut sources = Vec::new();
    for dir in CRATE_SOURCES {
        rust_under(&root.join(dir), &mut sources);
    }
    for f in sources {
        let text = std::fs::read_to_string(&f).unwrap();
        all.extend(
            constant
                .captures_iter(&text)
                .map(|c| c[1].parse::<u8>().unwrap()),
        );
    }
    all
}

fn rust_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_under(&p, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("rs") {
            out.push(p);
        }
    }
}

/// The differences of a table from the statuses the binary returns, as text (empty when none).
fn table_drift(name: &str, listed: &[u8], all: &std::collections::BTreeSet<u8>) -> Vec<String> {
    let listed: std::collections::BTreeSet<u8> = listed.iter().copied().collect();
    let mut out = Vec::new();
    for s in all.difference(&listed) {
        out.push(format!("{name}: exit {s} is missing"));
    }
    for s in listed.difference(all) {
        out.push(format!(
            "{name}: exit {s} is listed but no command returns it"
        ));
    }
    out
}

/// The exit-code tables of the README, of `seneschal --help` and of `generated/cli.md` list
/// exactly the statuses the binary returns: one missing, or one listed that nothing returns,
/// fails here, naming the table and the status.
#[test]
fn every_exit_status_is_in_the_readme_and_help_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = exit_statuses();
    assert!(all.len() >= 18, "{all:?}");
    // `contract diff`'s statuses are the table's.
    for class in [
        seneschal::contract::Class::Wire,
        seneschal::contract::Class::Breaking,
    ] {
        assert!(all.contains(&class.exit_code()));
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let cli_md = std::fs::read_to_string(root.join("generated/cli.md")).unwrap();
    let help = crate::support::stdout(&crate::support::run(&["--help"]));
    let mut drift = table_drift("README.md", &table_statuses(&readme), &all);
    drift.extend(table_drift("seneschal --help", &help_statuses(&help), &all));
    drift.extend(table_drift(
        "generated/cli.md",
        &table_statuses(&cli_md),
        &all,
    ));
    assert!(drift.is_empty(), "{}", drift.join("\n"));
    // No status is returned as a bare number: each comes from the codes table.
    let bare = regex::Regex::new(r"ExitCode::from\(\s*\d|process::exit\(").unwrap();
    let mut sources = Vec::new();
    for dir in CRATE_SOURCES {
        rust_under(&root.join(dir), &mut sources);
    }
    for f in sources {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !bare.is_match(&text),
            "{} returns an exit status that is not the codes table's",
            f.display()
        );
    }
}

/// The prose check: documentation may name only the tools, resource URIs, routes and CLI
/// paths that the registry projects. Anything tool-shaped that the registry does not hold is a
/// finding with its line, so docs cannot promise a surface that does not exist.
///
/// A hypothetical example (such as the README's "add a capability" walkthrough) is fenced
/// between `<!-- prose-check: off -->` and `<!-- prose-check: on -->`.
mod check {

    use std::collections::BTreeSet;

    use serde_json::Value;

    use seneschal::registry::CAPABILITIES;

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
        &["approvals"],
        &["approvals", "list"],
        &["approvals", "approve"],
        &["approvals", "decline"],
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
        let manifest_schema: Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/share/schemas/capability.schema.json"
        )))
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
                    .take_while(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || "_/-".contains(*c)
                    })
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

/// The source folders of the workspace's crates (codegen aside).
const CRATE_SOURCES: &[&str] = &[
    "src",
    "model/src",
    "access/src",
    "knowledge/src",
    "core/src",
    "mcp/src",
    "http/src",
    "devtools/src",
];

/// The files a module path written as one crate's (`redact`, `handlers/files`,
/// `mcp/methods/tools`) may be, now that each room is a crate.
fn module_files(module: &str) -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["src", "model/src", "access/src", "core/src", "devtools/src"] {
        out.push(format!("{dir}/{module}.rs"));
        out.push(format!("{dir}/{module}/mod.rs"));
    }
    let (first, rest) = module.split_once('/').unwrap_or((module, ""));
    if ["knowledge", "mcp", "http"].contains(&first) {
        if rest.is_empty() {
            out.push(format!("{first}/src/lib.rs"));
        } else {
            out.push(format!("{first}/src/{rest}.rs"));
            out.push(format!("{first}/src/{rest}/mod.rs"));
        }
    }
    out
}
