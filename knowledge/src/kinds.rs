//! Kinds: the distributed ones embedded from `share/kinds.yaml` and `share/schemas/`, plus the
//! repository's own from `.seneschal/kinds.yaml` and `.seneschal/schemas/`.
//!
//! A kind that cannot be loaded (bad declaration, missing or broken schema, an attempt to
//! redefine a distributed kind) is a [`Finding`] against the declaring file; loading never fails.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Value;

use super::Finding;
use seneschal_access::confine::Rule;
use seneschal_access::rootfs::{Denied, Follow, Root};

/// The distributed kind declarations.
pub const KINDS_YAML: &str = include_str!("../../share/kinds.yaml");

/// The distributed front-matter schemas: `(file name under share/schemas/, text)`.
pub const SCHEMAS: &[(&str, &str)] = &[
    (
        "adr.schema.json",
        include_str!("../../share/schemas/adr.schema.json"),
    ),
    (
        "guide.schema.json",
        include_str!("../../share/schemas/guide.schema.json"),
    ),
    (
        "skill.schema.json",
        include_str!("../../share/schemas/skill.schema.json"),
    ),
    (
        "instructions.schema.json",
        include_str!("../../share/schemas/instructions.schema.json"),
    ),
];

/// Where the repository declares its own kinds.
pub const REPO_KINDS: &str = ".seneschal/kinds.yaml";
/// Where the repository keeps the schemas of its own kinds.
pub const REPO_SCHEMAS: &str = ".seneschal/schemas";

/// The file adr-tools writes the name of its ADR folder in.
pub const ADR_DIR_FILE: &str = ".adr-dir";

/// The folders where ADRs usually live, searched when there is no `.adr-dir`; a new record
/// goes into the first when none exists.
pub const ADR_FOLDERS: [&str; 7] = [
    "docs/adr",
    "doc/adr",
    "docs/decisions",
    "docs/architecture/decisions",
    "architecture/decisions",
    "adr",
    "decisions",
];

/// A kind's `id.file_pattern`: an ECMAScript regular expression (the dialect of JSON Schema's
/// `pattern`) over a file name, whose first group is the id.
///
/// It is read the way the `jsonschema` crate reads a schema's `pattern` (translated to the
/// `regex` crate's syntax by `jsonschema-regex`) and run by `regex`, whose matching time is
/// linear in the name: a pattern a repository declares cannot make a listing backtrack for
/// ever. Lookaround and backreferences are refused with the translation's error.
#[derive(Debug, Clone)]
pub struct IdPattern(regex::Regex);

impl IdPattern {
    /// Compiles `pattern`, or says why it is not one this reads.
    pub fn new(pattern: &str) -> Result<IdPattern, String> {
        let translated = jsonschema_regex::to_rust_regex(pattern).map_err(|()| {
            "an ECMAScript pattern this cannot read (lookaround and backreferences are not read)"
                .to_string()
        })?;
        regex::RegexBuilder::new(&translated)
            .size_limit(1 << 20)
            .build()
            .map(IdPattern)
            .map_err(|e| e.to_string())
    }

    /// The id the pattern reads from `name`: its first group, if it matches and the group took
    /// part.
    pub fn id_in<'n>(&self, name: &'n str) -> Option<&'n str> {
        self.0
            .captures(name)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str())
    }
}

/// Whether `name` is a kind name ([`KIND_NAME`]).
fn is_kind_name(name: &str) -> bool {
    let b = name.as_bytes();
    matches!(b.first(), Some(b'a'..=b'z'))
        && b.len() <= 64
        && b[1..]
            .iter()
            .all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// The grammar of a kind name (it becomes a URI segment).
const KIND_NAME: &str = "^[a-z][a-z0-9_-]{0,63}$";

/// How a file of a kind is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// YAML front matter between `---` lines, then a Markdown body.
    Markdown,
    /// The whole file is a YAML mapping; the body is empty.
    Yaml,
}

impl Format {
    /// The spelling in kinds.yaml.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Yaml => "yaml",
        }
    }

    /// The media type of an object's text.
    pub fn mime_type(self) -> &'static str {
        match self {
            Format::Markdown => "text/markdown",
            Format::Yaml => "application/yaml",
        }
    }
}

/// How a kind's files are read besides its format: the formats of other tools, detected per
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// Architecture decision records: seneschal's front matter, or the formats of adr-tools
    /// (Nygard), MADR 2–4 and log4brains ([`super::adr`]); README, index and template files
    /// are not objects; the folders come from `.adr-dir` or the usual places.
    Adr,
    /// Files whose front matter is optional (agent instruction files): without it, the title
    /// is the first heading and the front matter is empty.
    Plain,
}

/// How an object's id is read: the front-matter `field` first, then `file_pattern`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdRule {
    /// A front-matter field holding the id.
    #[serde(default)]
    pub field: Option<String>,
    /// A regular expression over the file name; its first group is the id.
    #[serde(default)]
    pub file_pattern: Option<String>,
}

/// One kind as declared in a kinds.yaml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decl {
    description: String,
    files: Vec<String>,
    #[serde(default = "markdown")]
    format: Format,
    id: IdRule,
    schema: String,
    #[serde(default)]
    prompt: bool,
    #[serde(default)]
    dialect: Option<Dialect>,
}

fn markdown() -> Format {
    Format::Markdown
}

/// Whether a kind ships with seneschal or comes from the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Declared in `share/kinds.yaml`.
    Distributed,
    /// Declared in `.seneschal/kinds.yaml`.
    Repository,
}

impl Origin {
    /// The spelling in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Distributed => "distributed",
            Origin::Repository => "repository",
        }
    }
}

/// A loaded kind with its compiled contract.
#[derive(Debug, Clone)]
pub struct Kind {
    /// The name, a URI segment.
    pub name: String,
    /// What objects of the kind are.
    pub description: String,
    /// Globs relative to the repository root.
    pub files: Vec<String>,
    /// How files are read.
    pub format: Format,
    /// How ids are read.
    pub id: IdRule,
    /// The compiled `file_pattern`.
    pub id_pattern: Option<IdPattern>,
    /// The schema file name.
    pub schema_file: String,
    /// The front-matter schema.
    pub schema: Value,
    /// The compiled schema.
    pub validator: Arc<jsonschema::Validator>,
    /// Where the kind was declared.
    pub origin: Origin,
    /// Whether its objects are served as MCP prompts (`prompt: true`).
    pub prompt: bool,
    /// The formats of other tools its files may be written in (`dialect`).
    pub dialect: Option<Dialect>,
}

impl Kind {
    /// The kind's URI template.
    pub fn uri_template(&self) -> String {
        format!("{}{}/{{id}}", super::URI_PREFIX, self.name)
    }

    /// The id the kind reads from a file name (its `file_pattern`'s first group), if any.
    pub fn id_from_name(&self, name: &str) -> Option<String> {
        self.id_pattern
            .as_ref()
            .and_then(|p| p.id_in(name))
            .map(str::to_string)
    }
}

/// Every kind of a repository, and the findings met while loading them.
#[derive(Debug, Default)]
pub struct Kinds {
    /// Kinds by name (distributed first, then the repository's).
    pub all: Vec<Arc<Kind>>,
    /// Problems with the declarations.
    pub findings: Vec<Finding>,
}

impl Kinds {
    /// The kind with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<Kind>> {
        self.all.iter().find(|k| k.name == name)
    }
}

/// Checks a glob: relative, no `..`, no `**`, no empty segment.
fn glob_problem(glob: &str) -> Option<String> {
    if glob.starts_with('/') || glob.contains('\\') {
        return Some(format!(
            "`{glob}` must be relative to the repository root, with `/` separators"
        ));
    }
    for seg in glob.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Some(format!("`{glob}` has an empty, `.` or `..` segment"));
        }
        if seg.contains("**") {
            return Some(format!(
                "`{glob}`: `**` is not supported; use one `*` per folder level"
            ));
        }
        if seg == ".git" {
            return Some(format!("`{glob}` reaches into .git"));
        }
    }
    None
}

/// Builds the kinds declared in one kinds.yaml text; `schema_text` finds a schema by file name.
fn load_decls(
    file: &str,
    text: &str,
    origin: Origin,
    schema_text: &dyn Fn(&str) -> Result<String, String>,
    taken: &[Arc<Kind>],
    findings: &mut Vec<Finding>,
) -> Vec<Arc<Kind>> {
    let finding = |pointer: String, message: String| Finding {
        file: file.to_string(),
        pointer,
        message,
    };
    let doc: serde_yaml::Value = match serde_yaml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            findings.push(finding(String::new(), format!("not valid YAML: {e}")));
            return Vec::new();
        }
    };
    // A repository's kinds.yaml may only place the distributed kinds (`files:`).
    if origin == Origin::Repository && doc.get("kinds").is_none() && doc.get("files").is_some() {
        return Vec::new();
    }
    let Some(map) = doc.get("kinds").and_then(serde_yaml::Value::as_mapping) else {
        findings.push(finding(
            String::new(),
            "expected a mapping `kinds:` from kind names to declarations".into(),
        ));
        return Vec::new();
    };
    let allowed: &[&str] = match origin {
        Origin::Distributed => &["kinds"],
        Origin::Repository => &["kinds", "files"],
    };
    if let Some(extra) = doc.as_mapping().and_then(|m| {
        m.keys()
            .find(|k| !k.as_str().is_some_and(|k| allowed.contains(&k)))
    }) {
        findings.push(finding(
            String::new(),
            format!(
                "unknown top-level key {}; the keys read are: {}",
                serde_json::to_string(extra).unwrap_or_default(),
                allowed.join(", ")
            ),
        ));
    }
    let mut out: Vec<Arc<Kind>> = Vec::new();
    for (key, value) in map {
        let Some(name) = key.as_str() else {
            findings.push(finding(
                "/kinds".into(),
                "a kind name must be a string".into(),
            ));
            continue;
        };
        let pointer = format!("/kinds/{}", super::escape_pointer(name));
        if !is_kind_name(name) {
            findings.push(finding(
                pointer,
                format!("kind name `{name}` must match {KIND_NAME}"),
            ));
            continue;
        }
        if let Some(prior) = taken.iter().chain(out.iter()).find(|k| k.name == name) {
            let message = if prior.origin == Origin::Distributed && origin == Origin::Repository {
                format!("redefines the distributed kind `{name}`; a repository may add kinds, not redefine them (the distributed definition stays)")
            } else {
                format!("kind `{name}` is declared twice")
            };
            findings.push(finding(pointer, message));
            continue;
        }
        let decl: Decl = match serde_yaml::from_value(value.clone()) {
            Ok(d) => d,
            Err(e) => {
                findings.push(finding(pointer, format!("invalid kind declaration: {e}")));
                continue;
            }
        };
        if decl.files.is_empty() {
            findings.push(finding(
                format!("{pointer}/files"),
                "declares no files".into(),
            ));
            continue;
        }
        if let Some((i, problem)) = decl
            .files
            .iter()
            .enumerate()
            .find_map(|(i, g)| glob_problem(g).map(|p| (i, p)))
        {
            findings.push(finding(format!("{pointer}/files/{i}"), problem));
            continue;
        }
        if decl.id.field.is_none() && decl.id.file_pattern.is_none() {
            findings.push(finding(
                format!("{pointer}/id"),
                "says neither `field` nor `file_pattern`: no id can be read".into(),
            ));
            continue;
        }
        let id_pattern = match &decl.id.file_pattern {
            Some(p) => match IdPattern::new(p) {
                Ok(re) => Some(re),
                Err(e) => {
                    findings.push(finding(
                        format!("{pointer}/id/file_pattern"),
                        format!("not a regular expression: {e}"),
                    ));
                    continue;
                }
            },
            None => None,
        };
        let schema: Value = match schema_text(&decl.schema).and_then(|t| {
            serde_json::from_str(&t)
                .map_err(|e| format!("schema `{}` is not JSON: {e}", decl.schema))
        }) {
            Ok(v) => v,
            Err(e) => {
                findings.push(finding(format!("{pointer}/schema"), e));
                continue;
            }
        };
        let validator = match jsonschema::draft202012::new(&schema) {
            Ok(v) => v,
            Err(e) => {
                findings.push(finding(
                    format!("{pointer}/schema"),
                    format!("schema `{}` does not compile: {e}", decl.schema),
                ));
                continue;
            }
        };
        out.push(Arc::new(Kind {
            name: name.to_string(),
            description: decl.description.trim().to_string(),
            files: decl.files,
            format: decl.format,
            id: decl.id,
            id_pattern,
            schema_file: decl.schema,
            schema,
            validator: Arc::new(validator),
            origin,
            prompt: decl.prompt,
            dialect: decl.dialect,
        }));
    }
    out
}

/// The distributed kinds, compiled once per process.
pub fn distributed() -> &'static [Arc<Kind>] {
    static KINDS: OnceLock<Vec<Arc<Kind>>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut findings = Vec::new();
        let lookup = |name: &str| {
            SCHEMAS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.to_string())
                .ok_or_else(|| format!("no distributed schema `{name}`"))
        };
        let kinds = load_decls(
            "share/kinds.yaml",
            KINDS_YAML,
            Origin::Distributed,
            &lookup,
            &[],
            &mut findings,
        );
        assert!(
            findings.is_empty(),
            "the distributed kinds are broken: {findings:?}"
        );
        kinds
    })
}

/// Reads a repository configuration file under the root, as text: through the confined
/// file system (no link out, no secret name, regular files only, 1 MiB at most) and never a
/// file holding a private key block. `Ok(None)`: there is no such file.
fn read_config(root: &Root, rel: &str) -> Result<Option<String>, String> {
    let mut bytes = Vec::new();
    match root
        .open_file(rel, Follow::Inside)
        .and_then(|mut f| f.read_capped(super::MAX_FILE_BYTES, &mut bytes))
    {
        Ok(()) => {}
        Err(Denied::NotFound) => return Ok(None),
        Err(e) => return Err(super::stamp::denied_message(&e)),
    }
    if seneschal_access::redact::holds_private_key(&bytes) {
        return Err(format!(
            "holds a private key block (rule {}); it is not read",
            Rule::SecretContent.as_str()
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "is not UTF-8".to_string())
}

/// Loads every kind of the repository under `root`.
pub fn load(root: &Root) -> Kinds {
    let mut kinds = Kinds {
        all: distributed().to_vec(),
        findings: Vec::new(),
    };
    let text = match read_config(root, REPO_KINDS) {
        Ok(Some(text)) => text,
        Ok(None) => {
            place(root, &mut kinds, &BTreeMap::new());
            return kinds;
        }
        Err(message) => {
            kinds.findings.push(Finding {
                file: REPO_KINDS.into(),
                pointer: String::new(),
                message,
            });
            place(root, &mut kinds, &BTreeMap::new());
            return kinds;
        }
    };
    let lookup = |name: &str| -> Result<String, String> {
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return Err(format!(
                "schema `{name}` must be a plain file name under {REPO_SCHEMAS}/"
            ));
        }
        let rel = format!("{REPO_SCHEMAS}/{name}");
        match read_config(root, &rel) {
            Ok(Some(text)) => Ok(text),
            Ok(None) => Err(format!("schema `{rel}` cannot be read: it does not exist")),
            Err(message) => Err(format!("schema `{rel}` {message}")),
        }
    };
    let added = load_decls(
        REPO_KINDS,
        &text,
        Origin::Repository,
        &lookup,
        &kinds.all,
        &mut kinds.findings,
    );
    kinds.all.extend(added);
    let placed = repository_files(&text, &kinds.all, &mut kinds.findings);
    place(root, &mut kinds, &placed);
    kinds
}

/// The `files:` of a repository's kinds.yaml: where distributed kinds' files live in this
/// repository, by kind name (each a list of globs, replacing the kind's own).
fn repository_files(
    text: &str,
    all: &[Arc<Kind>],
    findings: &mut Vec<Finding>,
) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let Ok(doc) = serde_yaml::from_str::<serde_yaml::Value>(text) else {
        return out;
    };
    let Some(files) = doc.get("files") else {
        return out;
    };
    let finding = |pointer: String, message: String| Finding {
        file: REPO_KINDS.into(),
        pointer,
        message,
    };
    let distributed: Vec<&str> = all
        .iter()
        .filter(|k| k.origin == Origin::Distributed)
        .map(|k| k.name.as_str())
        .collect();
    let Some(map) = files.as_mapping() else {
        findings.push(finding(
            "/files".into(),
            format!(
                "expected a mapping from kind names ({}) to lists of globs",
                distributed.join(", ")
            ),
        ));
        return out;
    };
    for (key, value) in map {
        let name = key.as_str().unwrap_or_default();
        let pointer = format!("/files/{}", super::escape_pointer(name));
        if !distributed.contains(&name) {
            findings.push(finding(
                pointer,
                format!(
                    "`files` places the distributed kinds ({}); a repository kind declares its own files",
                    distributed.join(", ")
                ),
            ));
            continue;
        }
        let globs: Option<Vec<String>> = value.as_sequence().map(|s| {
            s.iter()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect()
        });
        match globs {
            Some(g) if !g.is_empty() && g.len() == value.as_sequence().map_or(0, Vec::len) => {
                if let Some((i, problem)) = g
                    .iter()
                    .enumerate()
                    .find_map(|(i, g)| glob_problem(g).map(|p| (i, p)))
                {
                    findings.push(finding(format!("{pointer}/{i}"), problem));
                    continue;
                }
                out.insert(name.to_string(), g);
            }
            _ => findings.push(finding(
                pointer,
                "expected a non-empty list of globs (strings), e.g. [\"records/*.md\"]".into(),
            )),
        }
    }
    out
}

/// The folder of `.adr-dir`, read as adr-tools writes it (one line, maybe `./`-prefixed).
fn adr_dir(root: &Root, findings: &mut Vec<Finding>) -> Option<String> {
    let text = match read_config(root, ADR_DIR_FILE) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(message) => {
            findings.push(Finding {
                file: ADR_DIR_FILE.into(),
                pointer: String::new(),
                message,
            });
            return None;
        }
    };
    let line = text.lines().next().unwrap_or("").trim();
    let dir = line.trim_start_matches("./").trim_end_matches('/');
    let glob = format!("{dir}/*.md");
    if dir.is_empty() || dir == "." {
        return Some("*.md".into());
    }
    match glob_problem(&glob) {
        Some(problem) => {
            findings.push(Finding {
                file: ADR_DIR_FILE.into(),
                pointer: String::new(),
                message: format!("names the folder `{line}`, which is not read: {problem}"),
            });
            None
        }
        None => Some(glob),
    }
}

/// Whether the folder a glob lists exists (the part before its last segment).
fn folder_exists(root: &Root, glob: &str) -> bool {
    let folder = glob.rsplit_once('/').map_or("", |(d, _)| d);
    root.open_dir(folder, Follow::Inside).is_ok()
}

/// Places the distributed kinds in this repository: the repository's `files:` first; for
/// the ADR kind, else the folder `.adr-dir` names, else those of its usual folders that
/// exist (all of them when none does, so that the first is created by a write).
fn place(root: &Root, kinds: &mut Kinds, placed: &BTreeMap<String, Vec<String>>) {
    let mut findings = Vec::new();
    for k in kinds.all.iter_mut() {
        if k.origin != Origin::Distributed {
            continue;
        }
        let files = if let Some(files) = placed.get(&k.name) {
            files.clone()
        } else if k.dialect == Some(Dialect::Adr) {
            match adr_dir(root, &mut findings) {
                Some(glob) => vec![glob],
                None => {
                    let mut present: Vec<String> = k
                        .files
                        .iter()
                        .filter(|g| folder_exists(root, g))
                        .cloned()
                        .collect();
                    // And the folders whose files look like ADRs, wherever they are.
                    for folder in discover_adr_folders(root) {
                        let glob = format!("{folder}/*.md");
                        if !present.contains(&glob) && glob_problem(&glob).is_none() {
                            present.push(glob);
                        }
                    }
                    if present.is_empty() {
                        continue;
                    }
                    present
                }
            }
        } else {
            continue;
        };
        if files != k.files {
            let mut moved = (**k).clone();
            moved.files = files;
            *k = Arc::new(moved);
        }
    }
    kinds.findings.extend(findings);
}

/// Whether a Markdown file in an ADR folder is not a record: a README, an index, or a
/// template (`template.md`, `adr-template*.md`, `0000-*template*.md`, ...).
pub fn is_not_a_record(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    let stem = lower
        .strip_suffix(".md")
        .or_else(|| lower.strip_suffix(".markdown"))
        .unwrap_or(&lower);
    matches!(stem, "readme" | "index" | "template" | "_template")
        || stem.starts_with("adr-template")
        || stem.starts_with("template-")
        || stem.starts_with("template_")
        || stem.ends_with("-template")
        || stem.ends_with("_template")
        || stem.ends_with(".template")
        || stem.starts_with("adr_template")
        || stem.starts_with("adr.template")
        || (stem.starts_with("0000") && stem.contains("template"))
}

/// Folders never searched for ADRs: dependencies, build output, hidden folders.
const NOT_SEARCHED: [&str; 9] = [
    "node_modules",
    "target",
    "vendor",
    "dist",
    "build",
    "third_party",
    "testdata",
    "site-packages",
    "out",
];

/// How deep and how wide the search for ADR folders goes.
const SEARCH_DEPTH: usize = 3;
const SEARCH_FOLDERS: usize = 600;

/// Whether a file name is an ADR's by its shape: `adr-001-x.md`, `ADR-61.md`, `adr012-x.md`;
/// with `hinted` (a folder whose path speaks of decisions), also `0001-x.md`.
pub fn is_adr_shaped(name: &str, hinted: bool) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some(stem) = lower.strip_suffix(".md") else {
        return false;
    };
    if is_not_a_record(name) {
        return false;
    }
    let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).count();
    if let Some(rest) = stem.strip_prefix("adr") {
        let rest = rest.trim_start_matches(['-', '_']);
        let n = digits(rest);
        return n > 0 && (rest.len() == n || rest[n..].starts_with(['-', '_', '.']));
    }
    let n = digits(stem);
    hinted && (3..=5).contains(&n) && stem[n..].starts_with(['-', '_'])
}

/// The folders (at most `SEARCH_DEPTH` deep) that hold two or more ADR-shaped files,
/// wherever they are: `docs/architecture/adr-001-x.md`, `adr/ADR-1.md`, `rfcs/decisions/0001-x.md`.
pub fn discover_adr_folders(root: &Root) -> Vec<String> {
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<(String, usize)> = [(String::new(), 0)].into();
    let mut visited = 0;
    while let Some((folder, depth)) = queue.pop_front() {
        visited += 1;
        if visited > SEARCH_FOLDERS {
            break;
        }
        let Ok(dir) = root.open_dir(&folder, Follow::Inside) else {
            continue;
        };
        let Ok(entries) = dir.entries() else { continue };
        let lower = folder.to_ascii_lowercase();
        let hinted = ["adr", "decision", "architecture", "rfc"]
            .iter()
            .any(|h| lower.contains(h));
        let mut shaped = 0;
        let mut subs = Vec::new();
        for e in entries {
            let Some(name) = e.name.to_str() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            if e.kind == rustix::fs::FileType::Directory {
                if depth < SEARCH_DEPTH && !NOT_SEARCHED.contains(&name) {
                    subs.push(name.to_string());
                }
            } else if is_adr_shaped(name, hinted) {
                shaped += 1;
            }
        }
        if shaped >= 2 && !folder.is_empty() {
            out.push(folder.clone());
        }
        subs.sort();
        for sub in subs {
            let rel = if folder.is_empty() {
                sub
            } else {
                format!("{folder}/{sub}")
            };
            queue.push_back((rel, depth + 1));
        }
    }
    out.sort();
    out
}

/// Which of the usual ADR folders exist: what the placement of the ADR kind depends on
/// besides `.seneschal/kinds.yaml` and `.adr-dir`.
pub fn usual_folders_present(root: &Root) -> Vec<bool> {
    ADR_FOLDERS
        .iter()
        .map(|f| root.open_dir(f, Follow::Inside).is_ok())
        .collect()
}

/// The kinds as `knowledge.kinds` answers them, by name.
pub fn describe(kinds: &Kinds) -> Vec<Value> {
    let mut sorted: BTreeMap<&str, &Kind> = BTreeMap::new();
    for k in &kinds.all {
        sorted.insert(&k.name, k);
    }
    sorted
        .values()
        .map(|k| {
            serde_json::json!({
                "name": k.name,
                "description": k.description,
                "origin": k.origin.as_str(),
                "files": k.files,
                "format": k.format.as_str(),
                "mime_type": k.format.mime_type(),
                "id": { "field": k.id.field, "file_pattern": k.id.file_pattern },
                "uri_template": k.uri_template(),
                "schema_file": k.schema_file,
                "schema": k.schema,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributed_kinds_load() {
        let names: Vec<&str> = distributed().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["adr", "guide", "skill", "instructions"]);
        // The ADR kind's globs are the usual folders, in the order a new record's is chosen.
        let adr = &distributed()[0];
        let usual: Vec<String> = ADR_FOLDERS.iter().map(|f| format!("{f}/*.md")).collect();
        assert_eq!(adr.files, usual);
    }

    #[test]
    fn globs_are_confined() {
        assert!(glob_problem("docs/adr/*.md").is_none());
        assert!(glob_problem("../x/*.md").is_some());
        assert!(glob_problem("/etc/*.md").is_some());
        assert!(glob_problem("docs/**/*.md").is_some());
        assert!(glob_problem(".git/*").is_some());
    }

    #[test]
    fn a_file_pattern_is_read_as_ecmascript() {
        let numbered = IdPattern::new(r"^(\d+)-").unwrap();
        assert_eq!(numbered.id_in("0042-use-x.md"), Some("0042"));
        // ECMAScript's `\d` is ASCII: Arabic-Indic digits are not digits to it.
        assert_eq!(numbered.id_in("\u{663}\u{664}-x.md"), None);
        let word = IdPattern::new(r"^(\w+)\.md$").unwrap();
        assert_eq!(word.id_in("naïve.md"), None);
        assert_eq!(word.id_in("plain_1.md"), Some("plain_1"));
        // `$` is the end of the name, not before a final line feed.
        assert_eq!(IdPattern::new(r"^(.+)\.md$").unwrap().id_in("a.md\n"), None);
        // No group: a match that names no id.
        assert_eq!(IdPattern::new(r"\.md$").unwrap().id_in("a.md"), None);
        for refused in [r"^(?=a)(.+)", r"^(a)\1", "^(.+"] {
            assert!(IdPattern::new(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn a_kind_name_is_the_grammar() {
        let re = regex::Regex::new(KIND_NAME).unwrap();
        let long = format!("a{}", "b".repeat(63));
        let too_long = format!("a{}", "b".repeat(64));
        for name in [
            "a", "adr", "run-book", "run_book", "a9", "9a", "-a", "_a", "", "A", "aB", "a b",
            "a.b", "é", "aé", "a\n", &long, &too_long,
        ] {
            assert_eq!(is_kind_name(name), re.is_match(name), "{name:?}");
        }
    }
}
