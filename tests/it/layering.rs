//! The rules the crates cannot hold. The crate edges hold the layering between rooms (a crate
//! names only the crates below it in its Cargo.toml, and cargo refuses a cycle):
//! [`the_crates_depend_only_on_the_rooms_below`] pins those edges, and which crates may use
//! argv (clap) or git's generator. Inside the crates, every `crate::X` path (and every
//! `seneschal_<crate>::X` path, read as the module it names) in the crates' sources (comments
//! and literals skipped) is an edge from the file's top-level module to `X`: the graph has no
//! cycle, no two files import each other, no module but the generated dispatch calls a
//! handler, no transport reaches the knowledge layer or the store past the executor (the edges
//! that only name a type or a constant are listed with their reason), and the leaves import
//! nothing. A failure names the offending edge and the file that makes it.
//!
//! The generated dispatch (`OUT_DIR/registry.rs`, included by `core/src/registry.rs`) is not read:
//! it is the registry calling the handlers, which by construction read the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules that import nothing of the crate.
const LEAVES: &[&str] = &[
    "codes",
    "display",
    "flags",
    "limits",
    "policy",
    "rules",
    "text",
    "transport",
    "versions",
];

/// Each crate's source folder, and the module its files form when the crate is one module
/// (`None`: its top-level modules are the crate's own).
const CRATE_DIRS: &[(&str, Option<&str>)] = &[
    ("model/src/", None),
    ("access/src/", None),
    ("knowledge/src/", Some("knowledge")),
    ("core/src/", None),
    ("mcp/src/", Some("mcp")),
    ("http/src/", Some("http")),
    ("devtools/src/", None),
    ("src/", None),
];

/// How a path names another crate's module, read as the module it is.
const CRATE_PATHS: &[(&str, &str)] = &[
    ("seneschal_model::", "crate::"),
    ("seneschal_access::", "crate::"),
    ("seneschal_knowledge", "crate::knowledge"),
    ("seneschal_core::", "crate::"),
    ("seneschal_mcp", "crate::mcp"),
    ("seneschal_http", "crate::http"),
    ("seneschal_devtools::", "crate::"),
];

/// A repository path as the module path it had when the crates were one:
/// `core/src/handlers/files.rs` → `handlers/files.rs`, `mcp/src/lib.rs` → `mcp/mod.rs`.
fn logical(path: &str) -> String {
    for (dir, module) in CRATE_DIRS {
        if let Some(rest) = path.strip_prefix(dir) {
            return match module {
                Some(m) if rest == "lib.rs" => format!("{m}/mod.rs"),
                Some(m) => format!("{m}/{rest}"),
                None => rest.to_string(),
            };
        }
    }
    path.to_string()
}

/// The top-level module of a repository path.
fn module_of(path: &str) -> String {
    let logical = logical(path);
    let first = logical.split('/').next().unwrap_or_default();
    first.strip_suffix(".rs").unwrap_or(first).to_string()
}

/// Every Rust source of the crates (codegen aside, which the build runs): `(repository path,
/// raw text)`.
fn raw_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for (dir, _) in CRATE_DIRS {
        rust_files(&root.join(dir), &mut paths);
    }
    paths.sort();
    paths.dedup();
    paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root).expect("under the root");
            (
                rel.to_string_lossy().into_owned(),
                std::fs::read_to_string(p).expect("readable source"),
            )
        })
        .collect()
}

/// `code` with every path into another crate (and, in a crate that is one module, into its
/// own) written as the `crate::` path it had when the crates were one.
fn as_one_crate(path: &str, code: &str) -> String {
    let mut code = code.to_string();
    if let Some((_, Some(m))) = CRATE_DIRS.iter().find(|(d, _)| path.starts_with(d)) {
        code = code.replace("crate::", &format!("crate::{m}::"));
    }
    for (from, to) in CRATE_PATHS {
        code = code.replace(from, to);
    }
    code
}

/// The transports: argv, MCP, HTTP.
const TRANSPORTS: &[&str] = &["cli", "http", "mcp"];

/// What a transport reaches only through the executor: the handlers, the knowledge layer and
/// the store (`execute` calls the generated dispatch, reads knowledge resources and hands the
/// store its transport).
const BEHIND_THE_EXECUTOR: &[&str] = &["handlers", "knowledge", "store"];

/// The edges to a module behind the executor that are allowed, each with its reason: such an
/// edge may name only types and constants (a path whose last segment starts with a capital
/// letter) and the few functions it lists; any other path through it is a call past the
/// executor.
const NAMED_ONLY: &[(&str, &str, &[&str], &str)] = &[
    (
        "cli",
        "knowledge",
        &["cli_verdict"],
        "the exit statuses of `knowledge check`",
    ),
    (
        "cli",
        "store",
        &["audit::load_key", "verify"],
        "the built-in `audit verify` checks the log file itself, no capability",
    ),
    (
        "mcp",
        "knowledge",
        &[],
        "the types of the resource and prompt entries the executor fills",
    ),
    (
        "limits",
        "handlers",
        &[],
        "the handlers' caps, named where they live",
    ),
];

/// Every path `code` names under `crate::<module>::`, without that prefix: `a::B`, and each
/// item of a group, `crate::<module>::{a::B, C}` or `crate::<module>::a::{B, C}`.
fn paths_into(code: &str, module: &str) -> Vec<String> {
    let needle = format!("crate::{module}::");
    let path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for (at, _) in code.match_indices(&needle) {
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + needle.len()..];
        let prefix: String = rest.chars().take_while(|c| path_char(*c)).collect();
        if let Some(group) = rest[prefix.len()..].strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(
                group
                    .split(',')
                    .map(|i| i.split_whitespace().next().unwrap_or(""))
                    .filter(|i| !i.is_empty())
                    .map(|i| format!("{prefix}{i}")),
            );
        } else {
            out.push(prefix.trim_end_matches(':').to_string());
        }
    }
    out
}

/// The paths of an allowed edge that are neither a type, a constant nor a listed function.
fn calls_through(code: &str, to: &str, functions: &[&str]) -> Vec<String> {
    paths_into(code, to)
        .into_iter()
        .filter(|p| {
            let last = p.rsplit("::").next().unwrap_or(p);
            !last.starts_with(|c: char| c.is_ascii_uppercase()) && !functions.contains(&p.as_str())
        })
        .collect()
}

/// One import: from a top-level module to another, made in `file`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    file: String,
}

/// Rust source with comments, string, byte-string and char literals blanked out (newlines
/// kept), so that only code remains for the path scan.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|c| if *c == b'\n' { b'\n' } else { b' ' }))
    };
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, 0usize);
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if let Some(len) = raw_string_len(rest) {
            blank(&mut out, &rest[..len]);
            i += len;
        } else if rest[0] == b'"' || rest.starts_with(b"b\"") {
            let mut j = if rest[0] == b'"' { 1 } else { 2 };
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let len = (j + 1).min(rest.len());
            blank(&mut out, &rest[..len]);
            i += len;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', 'é'), else a lifetime or label.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|c| *c == b'\'').map(|p| p + 3)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            let len = len.unwrap_or(1);
            if len > 1 {
                blank(&mut out, &rest[..len]);
            } else {
                out.push(b'\'');
            }
            i += len;
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("ASCII blanks keep UTF-8 valid")
}

/// The length of a raw (byte) string literal at the start of `s`: `r"…"`, `r#"…"#`, `br"…"`.
fn raw_string_len(s: &[u8]) -> Option<usize> {
    let start = if s.starts_with(b"br") {
        2
    } else if s.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = s[start..].iter().take_while(|c| **c == b'#').count();
    if s.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = start + hashes + 1;
    let end = s[body..].windows(close.len()).position(|w| w == close)?;
    Some(body + end + close.len())
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The top-level modules `code` names through `crate::`: `crate::x::…`, `crate::x` and each
/// first segment of a `crate::{x, y::z}` group.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let b = code.as_bytes();
    let mut found = BTreeSet::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("crate::") {
        let at = from + p;
        from = at + 7;
        // `$crate::` (macros) and `foo_crate::` are not this crate's paths.
        if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b'$') {
            continue;
        }
        let rest = code[at + 7..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // The first segment of each comma-separated item at depth one.
            let mut depth = 1;
            let mut item_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && depth == 1 && (c.is_alphanumeric() || c == '_') => {
                        let name: String = group[k..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        found.insert(name);
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of the crates as `(repository path, top-level module, code)`, its
/// paths read as one crate's ([`as_one_crate`]); the crate roots are not modules.
fn sources() -> Vec<(String, String, String)> {
    raw_sources()
        .into_iter()
        .filter(|(rel, _)| {
            let l = logical(rel);
            l != "lib.rs" && l != "main.rs"
        })
        .map(|(rel, text)| {
            let module = module_of(&rel);
            let code = as_one_crate(&rel, &code_only(&text));
            (rel, module, code)
        })
        .collect()
}

/// The top-level modules of the crates: those their roots declare, and the crates that are
/// one module each.
fn modules() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out: BTreeSet<String> = ["knowledge", "mcp", "http"].map(String::from).into();
    for lib in [
        "model/src/lib.rs",
        "access/src/lib.rs",
        "core/src/lib.rs",
        "devtools/src/lib.rs",
        "src/lib.rs",
    ] {
        let text = std::fs::read_to_string(root.join(lib)).expect("a crate root");
        out.extend(
            code_only(&text)
                .lines()
                .filter_map(|l| {
                    let l = l.trim();
                    l.strip_prefix("pub mod ")
                        .or_else(|| l.strip_prefix("mod "))
                })
                .map(|m| m.trim_end_matches(';').trim().to_string()),
        );
    }
    out
}

/// The edges between distinct top-level modules, each with the first file that makes it.
fn edges(files: &[(String, String, String)], modules: &BTreeSet<String>) -> Vec<Edge> {
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    for (rel, from, code) in files {
        for to in crate_paths(code) {
            if &to != from && modules.contains(&to) {
                seen.entry((from.clone(), to))
                    .or_insert_with(|| rel.clone());
            }
        }
    }
    seen.into_iter()
        .map(|((from, to), file)| Edge { from, to, file })
        .collect()
}

/// One cycle of the graph, as its edges, if there is any.
fn find_cycle(edges: &[Edge]) -> Option<Vec<Edge>> {
    let mut out: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
    for e in edges {
        out.entry(&e.from).or_default().push(e);
    }
    // Depth-first search; `stack` holds the edges from the root to the current node.
    fn visit<'a>(
        node: &'a str,
        out: &BTreeMap<&'a str, Vec<&'a Edge>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a Edge>,
    ) -> Option<Vec<Edge>> {
        state.insert(node, 1);
        for e in out.get(node).into_iter().flatten() {
            match state.get(e.to.as_str()) {
                Some(1) => {
                    let start = stack
                        .iter()
                        .position(|s| s.from == e.to)
                        .unwrap_or(stack.len());
                    let mut cycle: Vec<Edge> =
                        stack[start..].iter().map(|s| (*s).clone()).collect();
                    cycle.push((*e).clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    stack.push(e);
                    if let Some(c) = visit(&e.to, out, state, stack) {
                        return Some(c);
                    }
                    stack.pop();
                }
            }
        }
        state.insert(node, 2);
        None
    }
    let mut state = BTreeMap::new();
    let nodes: Vec<&str> = out.keys().copied().collect();
    for n in nodes {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, &out, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn show(edges: &[Edge]) -> String {
    edges
        .iter()
        .map(|e| format!("{} -> {} ({})", e.from, e.to, e.file))
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// The layering rules broken by `edges` and `files`, each naming its edge or file.
fn violations(files: &[(String, String, String)], edges: &[Edge]) -> Vec<String> {
    let mut bad = Vec::new();
    for e in edges {
        if LEAVES.contains(&e.from.as_str()) {
            bad.push(format!(
                "the leaf {} imports {} ({}): leaves import nothing of the crate",
                e.from, e.to, e.file
            ));
        }
    }
    for e in edges {
        if let Some((from, to, functions, _)) = NAMED_ONLY
            .iter()
            .find(|(from, to, _, _)| e.from == *from && e.to == *to)
        {
            for (rel, _, code) in files.iter().filter(|(_, module, _)| module == from) {
                for path in calls_through(code, to, functions) {
                    bad.push(format!(
                        "{rel} reaches crate::{to}::{path}: an allowed edge names only \
                         types, constants and its listed functions; call it through execute"
                    ));
                }
            }
            continue;
        }
        if e.to == "handlers" && e.from != "handlers" {
            bad.push(format!(
                "{} calls a handler ({}): only the generated dispatch does, through execute",
                e.from, e.file
            ));
        }
        if TRANSPORTS.contains(&e.from.as_str()) && BEHIND_THE_EXECUTOR.contains(&e.to.as_str()) {
            bad.push(format!(
                "the transport {} reaches {} ({}): transports go through execute",
                e.from, e.to, e.file
            ));
        }
    }
    bad
}

#[test]
fn the_module_graph_has_no_cycle() {
    let files = sources();
    let modules = modules();
    let edges = edges(&files, &modules);
    // The scan sees the graph: the transports reach the executor, the executor the registry.
    for (from, to) in [
        ("cli", "execute"),
        ("mcp", "execute"),
        ("http", "execute"),
        ("execute", "registry"),
    ] {
        assert!(
            edges.iter().any(|e| e.from == from && e.to == to),
            "the scan missed {from} -> {to}; it found:\n  {}",
            show(&edges)
        );
    }
    if let Some(cycle) = find_cycle(&edges) {
        panic!("the module graph has a cycle:\n  {}", show(&cycle));
    }
}

#[test]
fn the_layering_rules_hold() {
    let files = sources();
    let modules = modules();
    for leaf in LEAVES.iter().chain(TRANSPORTS) {
        assert!(
            modules.contains(*leaf),
            "no crate declares the module {leaf}"
        );
    }
    let bad = violations(&files, &edges(&files, &modules));
    assert!(
        bad.is_empty(),
        "layering rules broken:\n  {}",
        bad.join("\n  ")
    );
}

/// The checks fail when what they guard is broken: a cycle, a leaf that imports, a transport
/// that calls a handler or the store past the executor.
#[test]
fn the_checks_catch_a_planted_break() {
    let file = |rel: &str, module: &str, text: &str| {
        (rel.to_string(), module.to_string(), code_only(text))
    };
    let files = vec![
        file(
            "src/a.rs",
            "a",
            "use crate::b::X;\n// crate::c is a comment\nlet s = \"crate::c\";",
        ),
        file(
            "src/b/mod.rs",
            "b",
            "use crate::{a, text::hex};\nfn f<'a>(x: &'a str) -> char { 'c' }",
        ),
        file("access/src/text.rs", "text", "pub fn hex() { crate::codes::X }"),
        file(
            "http/src/routes.rs",
            "http",
            "crate::handlers::files::read(ctx, input)",
        ),
        file("mcp/src/x.rs", "mcp", "crate::store::transact(ctx)"),
        file(
            "mcp/src/methods/y.rs",
            "mcp",
            "use crate::knowledge::{Resource, scan};\nlet o = crate::knowledge::scan::read_object(r);",
        ),
    ];
    let modules: BTreeSet<String> = [
        "a",
        "b",
        "c",
        "codes",
        "handlers",
        "http",
        "knowledge",
        "mcp",
        "store",
        "text",
    ]
    .map(String::from)
    .into();
    let edges = edges(&files, &modules);
    assert!(
        !edges.iter().any(|e| e.to == "c"),
        "comments and strings are not imports: {edges:?}"
    );
    let cycle = find_cycle(&edges).expect("a -> b -> a is a cycle");
    assert_eq!(show(&cycle), "a -> b (src/a.rs)\n  b -> a (src/b/mod.rs)");
    let bad = violations(&files, &edges).join("\n");
    assert!(
        bad.contains("the leaf text imports codes (access/src/text.rs)"),
        "{bad}"
    );
    assert!(
        bad.contains("http calls a handler (http/src/routes.rs)"),
        "{bad}"
    );
    assert!(
        bad.contains("the transport mcp reaches store (mcp/src/x.rs)"),
        "{bad}"
    );
    assert!(
        bad.contains("mcp/src/methods/y.rs reaches crate::knowledge::scan::read_object"),
        "{bad}"
    );
    assert!(
        bad.contains("mcp/src/methods/y.rs reaches crate::knowledge::scan:"),
        "{bad}"
    );
    assert!(!bad.contains("crate::knowledge::Resource"), "{bad}");
}

/// Pieces with one home each: `(needle, the one file allowed to hold it, what it is)`.
const ONE_HOME: &[(&str, &str, &str)] = &[
    (
        "Command::new(\"git\")",
        "access/src/git.rs",
        "a git command (its environment is set once, in git::command)",
    ),
    (
        "downcast_ref::<String>",
        "access/src/text.rs",
        "a panic's text (text::panic_message)",
    ),
    (":02x}", "access/src/text.rs", "a hex encoder (text::hex)"),
    (
        "abcdefghijklmnopqrstuvwxyz0123456789+/",
        "access/src/text.rs",
        "a base64 encoder (text::base64)",
    ),
    (
        "getrandom",
        "access/src/text.rs",
        "a random source (text::random)",
    ),
    (
        "/dev/urandom",
        "access/src/text.rs",
        "a random source (text::random)",
    ),
    ("0x5c", "access/src/text.rs", "an HMAC (text::hmac_sha256)"),
];

/// Each file of `files` (`(path under src/, raw text)`) that holds a piece outside its home.
fn second_homes(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        for (needle, home, what) in ONE_HOME {
            if rel != home && text.contains(needle) {
                bad.push(format!("{rel} holds {what}: `{needle}` lives in {home}"));
            }
        }
    }
    bad
}

#[test]
fn shared_pieces_have_one_home() {
    let files = raw_sources();
    // The homes hold their piece (text::hex uses a digit table, not `{:02x}`).
    for (needle, home, _) in &ONE_HOME[..2] {
        let (_, text) = files
            .iter()
            .find(|(rel, _)| rel == home)
            .unwrap_or_else(|| panic!("{home} exists"));
        assert!(text.contains(needle), "{home} no longer holds `{needle}`");
    }
    let bad = second_homes(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Planted: a second git command and a second hex encoder are caught.
    let planted = [
        (
            "devtools/src/conformance.rs".to_string(),
            "let c = Command::new(\"git\");".to_string(),
        ),
        (
            "mcp/src/wire.rs".to_string(),
            "s.bytes().map(|b| format!(\"{b:02x}\"))".to_string(),
        ),
    ];
    let caught = second_homes(&planted).join("\n");
    assert!(
        caught.contains("devtools/src/conformance.rs holds a git command"),
        "{caught}"
    );
    assert!(
        caught.contains("mcp/src/wire.rs holds a hex encoder"),
        "{caught}"
    );
}

/// What the model crate (`model/`, `seneschal-model`) may depend on: it is compiled by the
/// build script and the binary alike, so it stays small.
const MODEL_DEPENDENCIES: &[&str] = &["serde_json"];

/// The crate a repository path belongs to (tests/ and its fixtures are the binary's).
fn crate_of(path: &str) -> String {
    let first = path.split('/').next().unwrap_or_default();
    if MEMBERS.contains(&first) && !first.is_empty() {
        format!("seneschal-{first}")
    } else {
        "seneschal".to_string()
    }
}

/// The repository path a `#[path]` of `file` names (relative to the file's folder).
fn resolve(file: &str, target: &str) -> String {
    let mut parts: Vec<&str> = file.split('/').collect();
    parts.pop();
    for seg in target.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The ways `files` (`(path, raw text)`) break the one-model rule: a `#[path]` include that
/// reaches out of its crate (the way codes, flags, policy and versions were once compiled
/// twice), or a model dependency beyond [`MODEL_DEPENDENCIES`] (`model/Cargo.toml`).
fn model_breaks(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        if rel.ends_with("Cargo.toml") {
            for name in dependencies(text) {
                if !MODEL_DEPENDENCIES.contains(&name.as_str()) {
                    bad.push(format!("{rel}: the model depends on {name}"));
                }
            }
            continue;
        }
        for line in text.lines() {
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            let Some(target) = squashed
                .split_once("#[path=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(target, _)| target)
            else {
                continue;
            };
            let included = resolve(rel, target);
            if crate_of(&included) != crate_of(rel) {
                bad.push(format!(
                    "{rel} includes a file of another crate ({included}): {}",
                    line.trim()
                ));
            }
        }
    }
    bad
}

#[test]
fn the_model_is_one_crate_shared_by_the_build_and_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in CRATE_DIRS.iter().map(|(d, _)| *d).chain(["codegen/src"]) {
        rust_files(&root.join(dir), &mut paths);
    }
    paths.push(root.join("model/Cargo.toml"));
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root).expect("under the root");
            (
                rel.to_string_lossy().into_owned(),
                std::fs::read_to_string(p).expect("readable"),
            )
        })
        .collect();
    let bad = model_breaks(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Both sides name the model crate: the build's and the binary's policy are the same.
    for (manifest, needle) in [
        ("Cargo.toml", "seneschal-model = { path = \"model\" }"),
        (
            "codegen/Cargo.toml",
            "seneschal-model = { path = \"../model\" }",
        ),
    ] {
        let text = std::fs::read_to_string(root.join(manifest)).expect("readable");
        assert!(
            text.contains(needle),
            "{manifest} does not depend on the model"
        );
    }
    // Planted: the old include and a heavy dependency are caught.
    let planted = [
        (
            "codegen/src/lib.rs".to_string(),
            "#[path = \"../../model/src/policy.rs\"]\npub mod policy;".to_string(),
        ),
        (
            "core/src/handlers/mod.rs".to_string(),
            "#[path = \"../../tests/fixtures/x/handlers/x.rs\"]\nmod x;".to_string(),
        ),
        (
            "model/Cargo.toml".to_string(),
            "[dependencies]\nserde_json.workspace = true\nregex = \"1\"\n".to_string(),
        ),
    ];
    let caught = model_breaks(&planted).join("\n");
    assert!(
        caught
            .contains("codegen/src/lib.rs includes a file of another crate (model/src/policy.rs)"),
        "{caught}"
    );
    assert!(
        caught.contains("model/Cargo.toml: the model depends on regex"),
        "{caught}"
    );
    assert!(!caught.contains("serde_json"), "{caught}");
    assert!(
        !caught.contains("core/src/handlers/mod.rs"),
        "a fixture of the binary's own tests: {caught}"
    );
}

/// What would reach the network or a remote: a socket opened outward, a git command that talks
/// to a remote. seneschal listens on loopback (`serve`) and opens no connection itself.
const OUTWARD: &[&str] = &[
    "TcpStream::connect",
    "UdpSocket",
    "\"push\"",
    "\"fetch\"",
    "\"pull\"",
    "\"clone\"",
    "\"ls-remote\"",
    "\"merge\"",
    "\"rebase\"",
    "\"submodule\"",
];

/// Network clients a dependency line of Cargo.toml must not name.
const NETWORK_CRATES: &[&str] = &["reqwest", "ureq", "hyper", "curl", "isahc", "attohttpc"];

/// Each file of `files` (`(path under src/, raw text)`) that reaches outward, and each
/// network client `manifest` (a Cargo.toml) depends on.
fn outward(files: &[(String, String)], manifest: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        for needle in OUTWARD {
            if text.contains(needle) {
                bad.push(format!("{rel} holds `{needle}`"));
            }
        }
    }
    for line in manifest.lines() {
        let name = line.split(['=', ' ', '.']).next().unwrap_or("");
        if NETWORK_CRATES.contains(&name) {
            bad.push(format!("Cargo.toml depends on `{name}`"));
        }
    }
    bad
}

/// The README's "What it does not do": no connection outward, no git command that talks to a
/// remote (push, fetch, pull, clone, merge, rebase), and git itself forbidden every transport
/// (`protocol.allow = never` in the configuration seneschal writes for it).
#[test]
fn nothing_reaches_the_network_or_a_remote() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = raw_sources();
    let manifest: String = MEMBERS
        .iter()
        .map(|m| std::fs::read_to_string(root.join(m).join("Cargo.toml")).unwrap())
        .collect();
    let bad = outward(&files, &manifest);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        seneschal::gitdir::OURS.contains("[protocol]\n\tallow = never\n"),
        "git may use a transport: {}",
        seneschal::gitdir::OURS
    );
    // Planted: a fetch and a network client are caught.
    let planted = [(
        "core/src/handlers/repo.rs".to_string(),
        "git::command(root)?.args([\"fetch\", \"origin\"])".to_string(),
    )];
    let caught = outward(&planted, "[dependencies]\nureq = \"2\"\n").join("\n");
    assert!(
        caught.contains("core/src/handlers/repo.rs holds `\"fetch\"`"),
        "{caught}"
    );
    assert!(caught.contains("Cargo.toml depends on `ureq`"), "{caught}");
}

/// Each constant of `files` (`(path under src/, code)`) that is a size, a count or an interval
/// (`usize`, `u64`, `u32`, `Duration`) written as its own number instead of naming
/// `crate::limits`.
fn bounds_outside_limits(files: &[(String, String)]) -> Vec<String> {
    let constant = regex::Regex::new(
        r"const ([A-Z_0-9]+): (?:usize|u64|u32|(?:[a-z_]+::)*Duration) =([^;]*);",
    )
    .unwrap();
    let mut bad = Vec::new();
    for (rel, code) in files {
        for c in constant.captures_iter(code) {
            if !c[2].contains("crate::limits::") {
                bad.push(format!(
                    "{rel}: `{}` ={} is a bound of its own: move it into access/src/limits.rs",
                    &c[1], &c[2]
                ));
            }
        }
    }
    bad
}

/// `limits.rs` is the home of every bound of the transports: each size, count and interval
/// constant of `mcp/src/` and `http/src/` is defined from `crate::limits`, so the table of
/// docs/ROBUSTNESS.md cannot miss one.
#[test]
fn every_transport_bound_lives_in_limits() {
    let files: Vec<(String, String)> = sources()
        .into_iter()
        .filter(|(_, module, _)| module == "mcp" || module == "http")
        .map(|(rel, _, code)| (rel, code))
        .collect();
    assert!(files.len() > 10, "{} files", files.len());
    let bad = bounds_outside_limits(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = [(
        "mcp/src/stdio.rs".to_string(),
        "pub const QUEUE: usize = 32;\nconst TICK: Duration = Duration::from_secs(crate::limits::MCP_FEED_TICK_MS);\nconst WATCH: std::time::Duration = std::time::Duration::from_millis(100);"
            .to_string(),
    )];
    let caught = bounds_outside_limits(&planted);
    assert_eq!(caught.len(), 2, "{caught:?}");
    assert!(caught[0].contains("`QUEUE`"), "{caught:?}");
    assert!(caught[1].contains("`WATCH`"), "{caught:?}");
}

/// Each file of `files` (`(path under src/, raw text)`) outside `mcp/` whose code (its unit
/// tests aside) writes a JSON-RPC message or error code.
fn json_rpc_outside_mcp(files: &[(String, String)]) -> Vec<String> {
    let code_number = regex::Regex::new(r"-\s*32[0-9]{3}\b").unwrap();
    let mut bad = Vec::new();
    for (rel, text) in files {
        if rel.starts_with("mcp/") {
            continue;
        }
        let body = text.split("#[cfg(test)]").next().unwrap_or(text);
        if body.contains("\"jsonrpc\"") {
            bad.push(format!("{rel} writes a JSON-RPC message: mcp/ builds them"));
        }
        if code_number.is_match(&code_only(body)) {
            bad.push(format!(
                "{rel} names a JSON-RPC error code by number: mcp/src/model.rs has them"
            ));
        }
        if !MCP_METHODS_ALLOWED.contains(&rel.as_str())
            && !rel.starts_with("core/src/handlers/fixtures/")
        {
            for method in MCP_REQUESTS {
                if body.contains(method) {
                    bad.push(format!(
                        "{rel} builds the MCP request or notification {method}…: ask through \
                         the peer's typed doors (approve, sample, progress, log)"
                    ));
                }
            }
        }
    }
    bad
}

/// The MCP methods a server sends its client, as their string literals begin.
const MCP_REQUESTS: &[&str] = &[
    "\"elicitation/",
    "\"sampling/",
    "\"roots/",
    "\"notifications/",
];

/// Files outside `mcp/` that may name those methods: the model's table of the protocol's
/// methods, and the core's documentation of the raw door (`Peer::ask`, in comments only: the
/// scan reads code and strings). The MCP conformance suite's fixture tools ask through the raw
/// door on purpose.
const MCP_METHODS_ALLOWED: &[&str] = &["model/src/versions.rs"];

/// Only `mcp/` knows JSON-RPC (its Streamable HTTP binding included): no code elsewhere (the
/// HTTP API that carries `/mcp` included) writes a JSON-RPC message, names an error code by
/// number, or builds a request or notification to the client (the core asks through the
/// peer's typed doors).
#[test]
fn only_mcp_knows_json_rpc() {
    let files = raw_sources();
    let bad = json_rpc_outside_mcp(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = [
        (
            "core/src/handlers/knowledge.rs".to_string(),
            "ctx.peer.ask(\"summary\", \"sampling/createMessage\", request)".to_string(),
        ),
        (
            "http/src/lib.rs".to_string(),
            "pending.take(&json!({\"jsonrpc\": \"2.0\", \"id\": id}));".to_string(),
        ),
        (
            "http/src/routes.rs".to_string(),
            "let code = -32600;".to_string(),
        ),
        (
            "mcp/src/link.rs".to_string(),
            "json!({\"jsonrpc\": \"2.0\", \"code\": -32600})".to_string(),
        ),
    ];
    let caught = json_rpc_outside_mcp(&planted).join("\n");
    assert!(
        caught.contains("http/src/lib.rs writes a JSON-RPC message"),
        "{caught}"
    );
    assert!(
        caught.contains("http/src/routes.rs names a JSON-RPC error code"),
        "{caught}"
    );
    assert!(!caught.contains("mcp/src/link.rs"), "{caught}");
    assert!(
        caught.contains(
            "core/src/handlers/knowledge.rs builds the MCP request or notification \"sampling/"
        ),
        "{caught}"
    );
}

/// The tests and helpers that read the monotonic clock (`Instant::now()`, `.elapsed()`), each
/// with why: none asserts a speed (speed and
/// memory are benchmarks); each bounds a wait, far above the time it takes, or measures a span
/// it then uses, asserting nothing of it. `(file under tests/it/, function, why)`.
const CLOCK_READERS: &[(&str, &str, &str)] = &[
    (
        "approval.rs",
        "the_http_api_caller_cannot_approve_its_own_write_and_the_person_can",
        "a timeout fired: the write waited at least its approval timeout",
    ),
    (
        "desk.rs",
        "an_undecided_write_times_out_and_a_cancelled_or_abandoned_one_waits_no_more",
        "the deadline of a withdrawal that must come (60 s)",
    ),
    (
        "files_writes.rs",
        "a_keyed_edit_killed_mid_call_is_applied_once_by_its_retry",
        "a call's span, to spread the kill points over it",
    ),
    (
        "git_resolver.rs",
        "a_git_stalled_on_a_planted_fifo_is_stopped_and_stalls_no_other_call",
        "the deadline of a git that must open the FIFO (120 s)",
    ),
    (
        "http_server.rs",
        "connections_over_the_cap_wait_for_a_free_one",
        "the deadline of closes that must come (60 s)",
    ),
    (
        "mcp_sse.rs",
        "event",
        "the deadline of an event that must come",
    ),
    (
        "hostile/audit.rs",
        "kill_9_between_any_two_syscalls_leaves_no_unaudited_and_no_double_applied_write",
        "a call's span, to place the kills in it",
    ),
    (
        "hostile/confinement.rs",
        "a_swap_race_never_returns_an_outside_byte",
        "reported in the failure message only",
    ),
    (
        "hostile/http.rs",
        "prompt",
        "how long until a client under attack is answered, reported only",
    ),
    (
        "hostile/http.rs",
        "trickle_until_answered",
        "the budget of a trickling client",
    ),
    (
        "hostile/http.rs",
        "start",
        "paces a trickling neighbour's bytes",
    ),
    (
        "hostile/http.rs",
        "wait_for_reconnect",
        "the deadline of a trickler that must come back (60 s)",
    ),
    (
        "hostile/confinement.rs",
        "watchdog",
        "kills a hung process, so that a hang fails the test instead of stalling it",
    ),
    (
        "approval.rs",
        "on_a_terminal",
        "the deadline of a prompt that must come (60 s)",
    ),
    (
        "desk.rs",
        "wait_pending",
        "the deadline of an approval that must appear (60 s)",
    ),
    (
        "mcp_sse.rs",
        "streams_fill_at_most_half_the_connections_and_never_lock_a_client_out",
        "the deadline of a stream place that must come back",
    ),
    (
        "mcp_tasks.rs",
        "poll",
        "the deadline of a task state that must come (60 s)",
    ),
    (
        "mcp_tasks.rs",
        "poll_until",
        "the deadline of a task state that must come (60 s)",
    ),
    (
        "support/http.rs",
        "finish_status",
        "the deadline of serve's exit after its stdin closes",
    ),
    (
        "support/http.rs",
        "drop",
        "the deadline of serve's exit after its stdin closes",
    ),
    (
        "support/mod.rs",
        "output_within",
        "the deadline of a command that must end",
    ),
];

/// Each function of `files` (`(path under tests/it/, text)`) that reads the clock, as
/// `file::function`.
fn clock_readers(files: &[(String, String)]) -> BTreeSet<String> {
    let item = regex::Regex::new(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?fn\s+([a-z0-9_]+)").unwrap();
    let mut out = BTreeSet::new();
    for (rel, text) in files {
        let mut current = String::new();
        for line in text.lines() {
            if let Some(c) = item.captures(line) {
                current = c[1].to_string();
            }
            if line.contains(".elapsed()") || line.contains("Instant::now()") {
                out.insert(format!("{rel}::{current}"));
            }
        }
    }
    out
}

/// No test is timed: every test that reads the clock is listed in [`CLOCK_READERS`], with why
/// its bound is a wait's and not a speed's; a new one fails here until it is listed (or made
/// to count events instead), and a listed one that no longer reads the clock fails too.
#[test]
fn tests_read_the_clock_only_for_listed_liveness_bounds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .filter(|p| !p.ends_with("layering.rs"))
        .map(|p| {
            let rel = p.strip_prefix(&dir).expect("under tests/it/");
            (
                rel.to_string_lossy().into_owned(),
                std::fs::read_to_string(p).expect("readable source"),
            )
        })
        .collect();
    let found = clock_readers(&files);
    let listed: BTreeSet<String> = CLOCK_READERS
        .iter()
        .map(|(file, function, _)| format!("{file}::{function}"))
        .collect();
    let unlisted: Vec<&String> = found.difference(&listed).collect();
    let stale: Vec<&String> = listed.difference(&found).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "tests that read the clock but are not listed in CLOCK_READERS: {unlisted:?}\n\
         listed but no longer reading it: {stale:?}"
    );
    let planted = [(
        "files_list.rs".to_string(),
        "#[test]\nfn lists_fast() {\n    let t = Instant::now();\n    assert!(t.elapsed() < MS);\n}\n"
            .to_string(),
    )];
    assert_eq!(
        clock_readers(&planted).into_iter().collect::<Vec<_>>(),
        vec!["files_list.rs::lists_fast".to_string()]
    );
}

/// Where `manifest` (a Cargo.toml) names the codegen crate outside `[build-dependencies]` (and
/// `[dev-dependencies]`: the tests snapshot it), and
/// each file of `files` (`(path under src/, code)`) that names it.
fn codegen_in_the_binary(manifest: &str, files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    let mut section = String::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if line.starts_with("seneschal-codegen")
            && section != "[build-dependencies]"
            && section != "[dev-dependencies]"
        {
            bad.push(format!(
                "Cargo.toml names seneschal-codegen under {section}"
            ));
        }
    }
    for (rel, code) in files {
        if code.contains("seneschal_codegen") {
            bad.push(format!("{rel} names seneschal_codegen"));
        }
    }
    bad
}

/// codegen never appears in the binary's dependency graph: the package depends on it as a
/// build (and test) dependency only, and no source of the library or binary names it.
#[test]
fn codegen_is_a_build_dependency_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest: String = MEMBERS
        .iter()
        .map(|m| std::fs::read_to_string(root.join(m).join("Cargo.toml")).unwrap())
        .collect();
    assert!(
        manifest.contains("[build-dependencies]\nseneschal-codegen"),
        "the build no longer depends on codegen: this check names nothing"
    );
    let files: Vec<(String, String)> = sources()
        .into_iter()
        .map(|(rel, _, code)| (rel, code))
        .collect();
    let bad = codegen_in_the_binary(&manifest, &files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = codegen_in_the_binary(
        "[dependencies]\nseneschal-codegen = { path = \"codegen\" }\n",
        &[(
            "core/src/registry.rs".into(),
            "use seneschal_codegen::model;".into(),
        )],
    );
    assert_eq!(planted.len(), 2, "{planted:?}");
}

/// The module path of a file under src/: `mcp/methods/tools.rs` → `mcp::methods::tools`,
/// `mcp/methods/mod.rs` → `mcp::methods`.
fn file_module(rel: &str) -> String {
    let rel = logical(rel);
    let rel = rel.strip_suffix(".rs").unwrap_or(&rel);
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    rel.replace('/', "::")
}

/// The file-level import edges of `files` (`(path under src/, code)`, unit tests cut off):
/// each `crate::…`, `super::…` and, in a module's own file, `use child::…` path resolved to
/// the deepest module file it names. An edge from a file to one of its ancestors (a child
/// using its parent's items) is left out: only edges between files of which neither holds
/// the other are kept.
fn file_edges(files: &[(String, String)]) -> Vec<Edge> {
    let modules: BTreeSet<String> = files.iter().map(|(rel, _)| file_module(rel)).collect();
    let tail = r"::((?:[a-z_][a-z0-9_]*::)*)(\{[^}]*\}|[a-z_][a-z0-9_]*)?";
    let rooted = regex::Regex::new(&format!(r"\b((?:crate|super)(?:::super)*){tail}")).unwrap();
    let child = regex::Regex::new(&format!(r"\b(use\s+[a-z_][a-z0-9_]*){tail}")).unwrap();
    let mut edges = BTreeSet::new();
    for (rel, code) in files {
        let me = file_module(rel);
        let parts: Vec<&str> = me.split("::").collect();
        // A file `x.rs` or `x/mod.rs` is module `x`; `super` from it is its parent.
        let body = code.split("#[cfg(test)]").next().unwrap_or(code);
        for c in rooted.captures_iter(body).chain(child.captures_iter(body)) {
            let head = &c[1];
            let base: Vec<String> = if head.starts_with("crate") {
                Vec::new()
            } else if let Some(child) = head.strip_prefix("use") {
                let child = child.trim();
                if !modules.contains(&format!("{me}::{child}")) {
                    continue;
                }
                parts
                    .iter()
                    .map(|s| s.to_string())
                    .chain([child.to_string()])
                    .collect()
            } else {
                let ups = head.matches("super").count();
                if ups > parts.len() {
                    continue;
                }
                parts[..parts.len() - ups]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            let middle: Vec<String> = c[2]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let tails: Vec<String> = match c.get(3).map(|m| m.as_str()) {
                Some(group) if group.starts_with('{') => group
                    .trim_matches(['{', '}'])
                    .split(',')
                    .filter_map(|i| i.split("::").next())
                    .map(|i| i.trim().to_string())
                    .collect(),
                Some(one) => vec![one.to_string()],
                None => vec![String::new()],
            };
            for tail in tails {
                let mut segments: Vec<String> = base.iter().chain(&middle).cloned().collect();
                if !tail.is_empty() {
                    segments.push(tail);
                }
                let target = (1..=segments.len())
                    .rev()
                    .map(|n| segments[..n].join("::"))
                    .find(|m| modules.contains(m));
                let Some(target) = target else { continue };
                let ancestor = me == target || me.starts_with(&format!("{target}::"));
                if !ancestor {
                    edges.insert(Edge {
                        from: me.clone(),
                        to: target,
                        file: rel.clone(),
                    });
                }
            }
        }
    }
    edges.into_iter().collect()
}

/// No two files import each other, directly or round a longer cycle (a child using its
/// parent's items aside): the features of `mcp/methods/` import `mcp/feature.rs`, not the
/// dispatcher that lists them, and the knowledge readers share `knowledge/stamp.rs`.
#[test]
fn no_two_files_import_each_other() {
    let files: Vec<(String, String)> = sources()
        .into_iter()
        .map(|(rel, _, code)| (rel, code))
        .collect();
    let edges = file_edges(&files);
    assert!(
        edges
            .iter()
            .any(|e| e.from == "mcp::dispatch" && e.to == "mcp::methods::tools"),
        "the scan no longer sees the dispatcher's features: {}",
        show(&edges)
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!("files import each other:\n  {}", show(&cycle));
    }
    let planted = [
        (
            "mcp/src/dispatch.rs".to_string(),
            "use super::methods::{tools, lifecycle};".to_string(),
        ),
        (
            "mcp/src/methods/tools.rs".to_string(),
            "use super::super::dispatch::{Call, Feature};".to_string(),
        ),
        (
            "mcp/src/methods/mod.rs".to_string(),
            "pub mod tools;".to_string(),
        ),
        ("mcp/src/methods/lifecycle.rs".to_string(), String::new()),
        ("mcp/src/lib.rs".to_string(), "use dispatch::X;".to_string()),
    ];
    let cycle = find_cycle(&file_edges(&planted)).expect("the planted cycle is found");
    assert_eq!(
        show(&cycle),
        "mcp::dispatch -> mcp::methods::tools (mcp/src/dispatch.rs)\n  mcp::methods::tools -> mcp::dispatch (mcp/src/methods/tools.rs)"
    );
}

/// Each `#[path]` of `files` (`(path under src/, raw text)`) that names a file outside `src/`.
fn includes_outside_src(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        for line in text.lines() {
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            let Some(target) = squashed
                .split_once("#[path=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(target, _)| target)
            else {
                continue;
            };
            let home = rel.find("src/").map_or("", |at| &rel[..at + 4]);
            let included = resolve(rel, target);
            if !included.starts_with(home) {
                bad.push(format!("{rel} includes {included}: {}", line.trim()));
            }
        }
    }
    bad
}

/// The library's code is all under `src/`: no `#[path]` reaches into `tests/` (the conformance
/// fixtures' handlers live in `core/src/handlers/fixtures/`, compiled under their feature).
#[test]
fn no_source_includes_a_file_outside_src() {
    let files = raw_sources();
    assert!(
        files
            .iter()
            .any(|(_, t)| t.contains("#[path = \"fixtures/conformance.rs\"]")),
        "the fixtures' include moved: this check names nothing"
    );
    let bad = includes_outside_src(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = [(
        "core/src/handlers/mod.rs".to_string(),
        "#[path = \"../../../tests/fixtures/mcp-conformance/handlers/conformance.rs\"]\npub mod conformance;"
            .to_string(),
    )];
    assert_eq!(includes_outside_src(&planted).len(), 1);
}

/// The workspace's members by folder (`""`: the command line's package at the root).
const MEMBERS: &[&str] = &[
    "",
    "model",
    "codegen",
    "access",
    "knowledge",
    "core",
    "mcp",
    "http",
    "devtools",
];

/// Each member and the seneschal crates its `[dependencies]` name: the rooms below it, as
/// docs/ARCHITECTURE.md draws them. Cargo refuses a cycle and the compiler a path to a crate
/// not named here, so these lines are the layering: the core cannot reach a transport, the
/// repository access cannot reach a capability, nothing runtime reaches the maintainer tools.
const CRATE_EDGES: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("codegen", &["model"]),
    ("access", &["model"]),
    ("knowledge", &["model", "access"]),
    ("core", &["model", "access", "knowledge"]),
    ("mcp", &["model", "access", "knowledge", "core"]),
    ("http", &["model", "access", "core", "mcp"]),
    ("devtools", &["model", "access", "core"]),
    (
        "",
        &[
            "model",
            "access",
            "knowledge",
            "core",
            "mcp",
            "http",
            "devtools",
        ],
    ),
];

/// Crates only the command line's package may depend on: argv is its alone.
const ARGV_CRATES: &[&str] = &["clap", "clap_complete", "clap_mangen"];

/// The names a manifest's `[dependencies]` section holds.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && !line.is_empty() && !line.starts_with('#') {
            out.push(
                line.split(['=', '.', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    out
}

/// How `manifests` (`(member folder, Cargo.toml)`) break [`CRATE_EDGES`] or [`ARGV_CRATES`].
fn crate_breaks(manifests: &[(&str, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (member, text) in manifests {
        let deps = dependencies(text);
        let ours: BTreeSet<&str> = deps
            .iter()
            .filter_map(|d| d.strip_prefix("seneschal-"))
            .collect();
        let allowed: BTreeSet<&str> = CRATE_EDGES
            .iter()
            .find(|(m, _)| m == member)
            .map(|(_, to)| to.iter().copied().collect())
            .unwrap_or_default();
        let shown = if member.is_empty() {
            "the command line"
        } else {
            member
        };
        for d in ours.difference(&allowed) {
            bad.push(format!(
                "{shown} depends on seneschal-{d}, which is not a room below it"
            ));
        }
        for d in allowed.difference(&ours) {
            bad.push(format!(
                "{shown} no longer depends on seneschal-{d}: update CRATE_EDGES and ARCHITECTURE"
            ));
        }
        if !member.is_empty() {
            for d in deps.iter().filter(|d| ARGV_CRATES.contains(&d.as_str())) {
                bad.push(format!(
                    "{shown} depends on {d}: only the command line knows argv"
                ));
            }
        }
    }
    bad
}

#[test]
fn the_crates_depend_only_on_the_rooms_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let listed = workspace
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("a members line");
    for member in MEMBERS.iter().filter(|m| !m.is_empty()) {
        assert!(
            listed.contains(&format!("\"{member}\"")),
            "{member} is not a workspace member"
        );
    }
    let manifests: Vec<(&str, String)> = MEMBERS
        .iter()
        .map(|m| {
            (
                *m,
                std::fs::read_to_string(root.join(m).join("Cargo.toml")).unwrap(),
            )
        })
        .collect();
    let bad = crate_breaks(&manifests);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Planted: the core reaching a transport, and clap below the command line.
    let planted = [
        (
            "core",
            "[dependencies]\nseneschal-model = { path = \"../model\" }\nseneschal-access = { path = \"../access\" }\nseneschal-knowledge = { path = \"../knowledge\" }\nseneschal-mcp = { path = \"../mcp\" }\n".to_string(),
        ),
        (
            "access",
            "[dependencies]\nseneschal-model = { path = \"../model\" }\nclap.workspace = true\n"
                .to_string(),
        ),
    ];
    let caught = crate_breaks(&planted).join("\n");
    assert!(
        caught.contains("core depends on seneschal-mcp, which is not a room below it"),
        "{caught}"
    );
    assert!(
        caught.contains("access depends on clap: only the command line knows argv"),
        "{caught}"
    );
}

/// No two files of the build's own crate import each other either (the reference reads a
/// capability's Rust types from the Rust projection, which reads nothing of the reference).
#[test]
fn no_two_files_of_codegen_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    rust_files(&root.join("codegen/src"), &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root.join("codegen/src"))
                .expect("under codegen/src");
            (
                format!("codegen/{}", rel.to_string_lossy()),
                code_only(&std::fs::read_to_string(p).expect("readable source")),
            )
        })
        .filter(|(rel, _)| rel != "codegen/lib.rs")
        .map(|(rel, code)| (rel, code.replace("crate::", "crate::codegen::")))
        .collect();
    let edges = file_edges(&files);
    assert!(
        edges.iter().any(|e| e.from.starts_with("codegen::project")),
        "the scan sees nothing of codegen: {}",
        show(&edges)
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!("files of codegen import each other:\n  {}", show(&cycle));
    }
}
