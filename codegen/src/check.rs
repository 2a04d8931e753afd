//! The registry invariants of DESIGN §1, checked at build time.
//!
//! Each violation is a [`Diagnostic`] that names both manifests and the clashing value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::load::Diagnostic;
use crate::model::{Capability, Kind};
use crate::policy::{Effect, Stability};

/// Command paths that belong to seneschal itself, not to a capability. A capability path may
/// neither start with one nor be a prefix of one; it may live beside them in a group
/// (`contract digest` next to `contract diff`).
pub const RESERVED_CLI: &[&[&str]] = &[
    &["audit"],
    &["call"],
    &["completions"],
    &["conformance"],
    &["contract", "check"],
    &["contract", "diff"],
    &["contract", "release"],
    &["generate"],
    &["help"],
    &["man"],
    &["mcp"],
    &["new"],
    &["serve"],
];

/// The URI prefix of runtime knowledge objects; no built-in resource may take it.
pub const KNOWLEDGE_URI_PREFIX: &str = "seneschal://knowledge/";

/// Checks every cross-manifest invariant. `handlers_dirs` are `core/src/handlers` (and, with the
/// conformance fixtures, `core/src/handlers/fixtures`), whose files are parsed to prove that each named
/// handler exists (none: the check is skipped); `repo_root` resolves resource content.
pub fn check_registry(
    caps: &[Capability],
    handlers_dirs: &[PathBuf],
    repo_root: &Path,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let file = |c: &Capability| c.source.to_string_lossy().replace('\\', "/");
    let texts = Texts::new(caps, repo_root);
    let line = |c: &Capability, pointer: &str| texts.line(c, pointer);
    let at = |c: &Capability, pointer: &str| match line(c, pointer) {
        Some(l) => format!("{}:{l}", file(c)),
        None => file(c),
    };
    // Each exposed name, route and path belongs to one capability. A clash is reported on the
    // file changed last (the one being added), naming the other file and line and the fix.
    let mut claims: BTreeMap<(&str, &str, String), Vec<&Capability>> = BTreeMap::new();
    for c in caps {
        let mut claim = |what: &'static str, pointer: &'static str, key: String| {
            claims.entry((what, pointer, key)).or_default().push(c);
        };
        claim("capability id", "/id", c.id.clone());
        if let Some(t) = &c.expose.mcp_tool {
            claim("MCP tool name", "/expose/mcp_tool", t.clone());
        }
        if let Some(u) = &c.expose.mcp_resource {
            claim("MCP resource URI", "/expose/mcp_resource", u.clone());
        }
        if let Some(h) = &c.expose.http {
            claim(
                "HTTP route",
                "/expose/http",
                format!("{} {}", h.method, h.path),
            );
        }
        if let Some(p) = &c.expose.cli {
            claim("CLI path", "/expose/cli", p.join(" "));
        }
    }
    for ((what, pointer, key), owners) in &claims {
        if owners.len() < 2 {
            continue;
        }
        let added = texts.changed_last(owners);
        for other in owners.iter().filter(|o| !std::ptr::eq(**o, added)) {
            diags.push(Diagnostic {
                file: file(added),
                line: line(added, pointer),
                pointer: pointer.to_string(),
                message: format!(
                    "{what} `{key}` is already declared by {} ({}): choose another {what} in this file, or change it there",
                    at(other, pointer),
                    other.id
                ),
            });
        }
    }
    let err = |c: &Capability, pointer: &str, message: String| Diagnostic {
        file: file(c),
        line: line(c, pointer),
        pointer: pointer.to_string(),
        message,
    };
    // The context budget: what a tool costs an agent in every session's `tools/list`.
    for c in caps {
        let Some(name) = &c.expose.mcp_tool else {
            continue;
        };
        use crate::project::mcp_tools::{cost, tool, DESCRIPTION_BUDGET_CHARS, TOOL_BUDGET_BYTES};
        let chars = c.description.chars().count();
        if chars > DESCRIPTION_BUDGET_CHARS {
            diags.push(err(
                c,
                "/description",
                format!(
                    "the description has {chars} characters, over the budget of {DESCRIPTION_BUDGET_CHARS}: say what the tool does, when to use it and what it returns, and move the rest to `details` (the reference and OpenAPI only)"
                ),
            ));
        }
        let entry = tool(c, name);
        let bytes = cost(&entry);
        if bytes > TOOL_BUDGET_BYTES {
            let part = |k: &str| cost(&entry[k]);
            diags.push(err(
                c,
                "/description",
                format!(
                    "the tool `{name}` costs {bytes} bytes in tools/list, over the budget of {TOOL_BUDGET_BYTES} (description {}, inputSchema {}, outputSchema {}): shorten the description or the input's property descriptions",
                    part("description"),
                    part("inputSchema"),
                    part("outputSchema")
                ),
            ));
        }
    }
    // One toolset per HTTP path: a profile lists a path with all its methods or not at all.
    let mut path_toolsets: BTreeMap<&str, &Capability> = BTreeMap::new();
    for c in caps {
        let Some(h) = &c.expose.http else { continue };
        match path_toolsets.get(h.path.as_str()) {
            Some(other) if other.toolset != c.toolset => diags.push(err(
                c,
                "/toolset",
                format!(
                    "the path {} is also served by {} ({}), in the toolset {}: the methods of one path belong to one toolset",
                    h.path,
                    other.id,
                    at(other, "/toolset"),
                    other.toolset.as_str()
                ),
            )),
            Some(_) => {}
            None => {
                path_toolsets.insert(&h.path, c);
            }
        }
    }
    // CLI paths: none is a prefix of another, none starts with a reserved word.
    let paths: Vec<(&Capability, &Vec<String>)> = caps
        .iter()
        .filter_map(|c| c.expose.cli.as_ref().map(|p| (c, p)))
        .collect();
    for (c, p) in &paths {
        for reserved in RESERVED_CLI {
            let n = reserved.len().min(p.len());
            if p[..n]
                .iter()
                .map(String::as_str)
                .eq(reserved[..n].iter().copied())
            {
                diags.push(err(
                    c,
                    "/expose/cli",
                    format!(
                        "CLI path `{}` collides with `seneschal {}`, a command of seneschal itself",
                        p.join(" "),
                        reserved.join(" ")
                    ),
                ));
            }
        }
        for (d, q) in &paths {
            if q.len() > p.len() && q[..p.len()] == p[..] {
                diags.push(err(
                    c,
                    "/expose/cli",
                    format!("CLI path `{}` is a prefix of `{}` declared by {} ({}): a command cannot also be a group", p.join(" "), q.join(" "), at(d, "/expose/cli"), d.id),
                ));
            }
        }
    }
    // Each handler file is parsed once, however many capabilities it serves.
    let mut handler_files: BTreeMap<String, Result<HandlerFile, String>> = BTreeMap::new();
    for c in caps {
        let planned = c.stability == Stability::Planned;
        let e = &c.expose;
        if planned {
            let mut exec = Vec::new();
            if let Some(t) = &e.mcp_tool {
                exec.push(format!("mcp_tool `{t}`"));
            }
            if let Some(u) = &e.mcp_resource {
                exec.push(format!("mcp_resource `{u}`"));
            }
            if let Some(h) = &e.http {
                exec.push(format!("http `{} {}`", h.method, h.path));
            }
            if let Some(p) = &e.cli {
                exec.push(format!("cli `{}`", p.join(" ")));
            }
            if let Some(first) = exec.first() {
                // Pointed at the first exposure, the line to delete first.
                let key = first.split(' ').next().unwrap_or_default();
                diags.push(err(
                    c,
                    &format!("/expose/{key}"),
                    format!(
                        "planned capability `{}` carries an executable exposure: {}",
                        c.id,
                        exec.join(", ")
                    ),
                ));
            }
        } else if c.examples.is_empty() {
            diags.push(err(
                c,
                "/examples",
                format!("executable capability `{}` declares no example", c.id),
            ));
        }
        if let Some(u) = &e.mcp_resource {
            if u.starts_with(KNOWLEDGE_URI_PREFIX) {
                diags.push(err(c, "/expose/mcp_resource", format!("resource URI `{u}` lies under `{KNOWLEDGE_URI_PREFIX}`, which belongs to knowledge objects")));
            }
            // A URI template's variables are the arguments a read gives the query.
            let vars: Vec<&str> = u
                .split('{')
                .skip(1)
                .filter_map(|part| part.split_once('}').map(|(name, _)| name))
                .collect();
            let zero_arg = c
                .input
                .get("required")
                .and_then(|r| r.as_array())
                .is_none_or(|r| {
                    r.iter()
                        .all(|a| a.as_str().is_some_and(|a| vars.contains(&a)))
                });
            if c.kind == Kind::Query && (c.effect != Effect::Read || !zero_arg) {
                diags.push(err(c, "/expose/mcp_resource", format!("only a read query with no required argument (but its URI template's variables) may be an MCP resource; `{}` is {} with required arguments: {}", c.id, c.effect.as_str(), !zero_arg)));
            }
            if !vars.is_empty() && c.kind != Kind::Query {
                diags.push(err(
                    c,
                    "/expose/mcp_resource",
                    format!("`{u}` is a URI template: only a query reads its arguments from one"),
                ));
            }
            for v in &vars {
                if c.input.pointer(&format!("/properties/{v}/type"))
                    != Some(&serde_json::json!("string"))
                {
                    diags.push(err(
                        c,
                        "/expose/mcp_resource",
                        format!(
                            "URI template variable `{v}` must be a string property of the input"
                        ),
                    ));
                }
            }
            if u.contains("}{") {
                diags.push(err(
                    c,
                    "/expose/mcp_resource",
                    format!("`{u}` puts two variables side by side: nothing tells where one ends"),
                ));
            }
        }
        if let Some(h) = &e.http {
            if h.method == "GET" && c.effect != Effect::Read {
                diags.push(err(
                    c,
                    "/expose/http/method",
                    format!(
                        "GET must be safe, but `{}` has effect {}: use POST",
                        c.id,
                        c.effect.as_str()
                    ),
                ));
            }
        }
        // Every integer a client sends has an upper bound, so a generated client, a fuzzer and
        // a reader know the largest value served (a cursor, an offset, a line number).
        let mut unbounded = Vec::new();
        unbounded_integers(&c.input, "/input", &mut unbounded);
        for pointer in unbounded {
            let field = pointer
                .rsplit_once("/properties/")
                .map_or(pointer.as_str(), |(_, name)| name);
            diags.push(err(
                c,
                &pointer,
                format!(
                    "integer input `{field}` of `{}` has no `maximum`: add `maximum: N`, the largest value the capability serves (every integer a client sends is bounded)",
                    c.id
                ),
            ));
        }
        if let Some(content) = &c.content {
            let p = repo_root.join(content);
            if !p.is_file() {
                diags.push(err(
                    c,
                    "/content",
                    format!("content file `{content}` does not exist"),
                ));
            }
        }
        // A module lives in the first handler folder that has its file (fixtures come last).
        let handlers_dir = c.handler.as_ref().and_then(|(module, _)| {
            handlers_dirs
                .iter()
                .find(|d| d.join(format!("{module}.rs")).is_file())
                .or(handlers_dirs.first())
        });
        if let (Some((module, function)), Some(dir), false) = (&c.handler, handlers_dir, planned) {
            let parsed = handler_files
                .entry(module.clone())
                .or_insert_with(|| HandlerFile::parse(dir, module, repo_root));
            let expected = expected_signature(c);
            match parsed {
                Err(message) => diags.push(err(
                    c,
                    "/handler",
                    format!("handler `{module}::{function}` of `{}`: {message} `{expected}`", c.id),
                )),
                Ok(handlers) => match handlers.function(function) {
                    None => diags.push(err(
                        c,
                        "/handler",
                        format!(
                            "handler `{module}::{function}` of `{}`: {} has no `pub fn {function}`: add `{expected}`",
                            c.id, handlers.display
                        ),
                    )),
                    Some(f) if !f.public => diags.push(Diagnostic {
                        file: handlers.display.clone(),
                        line: Some(f.line),
                        pointer: String::new(),
                        message: format!(
                            "handler `{module}::{function}` of `{}` ({}) is not public: write `{expected}`",
                            c.id,
                            at(c, "/handler")
                        ),
                    }),
                    Some(_) => {}
                },
            }
        }
    }
    diags.extend(published_examples(caps, repo_root));
    diags.sort();
    diags.dedup();
    diags
}

/// Every example a surface publishes validates against the schema published beside it: the
/// `examples` and `default` values inside the input and output schemas (in the MCP tool entries,
/// the OpenAPI operations and the reference), each checked against the published form of the
/// schema that holds it, and every example of an OpenAPI operation (a query parameter's
/// `example`, a request or response body's `examples`), checked against its schema. An
/// example of a refusal lives in the manifest's `examples` with its expected outcome and is
/// published as such, never as a request example.
pub fn published_examples(caps: &[Capability], repo_root: &Path) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for c in caps {
        let file = c.source.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(repo_root.join(&c.source)).unwrap_or_default();
        let mut found = Vec::new();
        schema_examples(&c.input, "/input", &mut found);
        schema_examples(&c.output, "/output", &mut found);
        for (pointer, schema, value) in found {
            let published = crate::project::openapi::published_schema(&schema);
            if let Some(problem) = first_error(&published, &value) {
                diags.push(Diagnostic {
                    file: file.clone(),
                    line: crate::load::pointer_line(&text, &pointer),
                    pointer,
                    message: format!(
                        "a published example fails the schema that holds it: {problem}"
                    ),
                });
            }
        }
        if c.expose.http.is_some() && c.executable() {
            let op = crate::project::openapi::operation(c);
            let mut found = Vec::new();
            operation_examples(&op, "", &mut found);
            for (pointer, schema, value) in found {
                if let Some(problem) = first_error(&schema, &value) {
                    diags.push(Diagnostic {
                        file: file.clone(),
                        line: None,
                        pointer: String::new(),
                        message: format!(
                            "the OpenAPI operation `{}` publishes an example that fails its schema at {pointer}: {problem}",
                            c.id
                        ),
                    });
                }
            }
        }
    }
    diags
}

/// The pointers of every integer schema in `schema` (itself and its subschemas, but those of
/// `not`, which say what is refused) that has neither `maximum` nor `exclusiveMaximum`.
fn unbounded_integers(schema: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let Some(obj) = schema.as_object() else {
        return;
    };
    let integer = match obj.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if integer && !obj.contains_key("maximum") && !obj.contains_key("exclusiveMaximum") {
        out.push(at.to_string());
    }
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    for (k, v) in obj {
        match (k.as_str(), v) {
            (
                "properties" | "patternProperties" | "$defs" | "dependentSchemas",
                Value::Object(m),
            ) => {
                for (name, sub) in m {
                    unbounded_integers(sub, &format!("{at}/{k}/{}", escape(name)), out);
                }
            }
            ("prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(items)) => {
                for (i, sub) in items.iter().enumerate() {
                    unbounded_integers(sub, &format!("{at}/{k}/{i}"), out);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "contains"
                | "if"
                | "then"
                | "else"
                | "unevaluatedItems"
                | "unevaluatedProperties",
                _,
            ) => unbounded_integers(v, &format!("{at}/{k}"), out),
            _ => {}
        }
    }
}

/// The first error of `value` against `schema`; `None` when it validates, or when the schema
/// does not compile on its own (the manifest's whole schema was checked when loading).
fn first_error(schema: &serde_json::Value, value: &serde_json::Value) -> Option<String> {
    let validator = jsonschema::draft202012::new(schema).ok()?;
    let error = validator.iter_errors(value).next()?;
    Some(error.to_string())
}

/// `(pointer, schema without its examples, example)` of every `examples` item and `default`
/// of `schema` and its subschemas.
fn schema_examples(
    schema: &serde_json::Value,
    at: &str,
    out: &mut Vec<(String, serde_json::Value, serde_json::Value)>,
) {
    use serde_json::Value;
    let Some(obj) = schema.as_object() else {
        return;
    };
    let mut bare = obj.clone();
    bare.remove("examples");
    bare.remove("default");
    for (i, ex) in obj
        .get("examples")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        out.push((
            format!("{at}/examples/{i}"),
            Value::Object(bare.clone()),
            ex.clone(),
        ));
    }
    if let Some(d) = obj.get("default") {
        out.push((
            format!("{at}/default"),
            Value::Object(bare.clone()),
            d.clone(),
        ));
    }
    for (key, value) in obj {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        for (pointer, sub) in crate::load::subschemas(key, value, &here) {
            schema_examples(sub, &pointer, out);
        }
    }
}

/// `(pointer, schema, example)` of every example of an OpenAPI operation: a parameter's
/// `example`, and each media type's `example` and `examples.*.value`.
fn operation_examples(
    op: &serde_json::Value,
    at: &str,
    out: &mut Vec<(String, serde_json::Value, serde_json::Value)>,
) {
    use serde_json::Value;
    let esc = |k: &str| k.replace('~', "~0").replace('/', "~1");
    for (i, p) in op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let (Some(schema), Some(ex)) = (p.get("schema"), p.get("example")) {
            out.push((
                format!("{at}/parameters/{i}/example"),
                schema.clone(),
                ex.clone(),
            ));
        }
    }
    let mut bodies: Vec<(String, &Value)> = Vec::new();
    if let Some(body) = op.get("requestBody") {
        bodies.push((format!("{at}/requestBody"), body));
    }
    for (status, response) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        bodies.push((format!("{at}/responses/{}", esc(status)), response));
    }
    for (here, body) in bodies {
        for (media, m) in body
            .get("content")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let Some(schema) = m.get("schema") else {
                continue;
            };
            let here = format!("{here}/content/{}", esc(media));
            if let Some(ex) = m.get("example") {
                out.push((format!("{here}/example"), schema.clone(), ex.clone()));
            }
            for (name, ex) in m
                .get("examples")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if let Some(value) = ex.get("value") {
                    out.push((
                        format!("{here}/examples/{}/value", esc(name)),
                        schema.clone(),
                        value.clone(),
                    ));
                }
            }
        }
    }
}

/// The manifests' texts, read once each, to give every diagnostic the line of its pointer, and
/// their modification times, to tell which side of a clash changed last.
struct Texts {
    texts: BTreeMap<String, (Option<String>, Option<std::time::SystemTime>)>,
}

impl Texts {
    fn new(caps: &[Capability], repo_root: &Path) -> Texts {
        let texts = caps
            .iter()
            .map(|c| {
                let path = repo_root.join(&c.source);
                let text = std::fs::read_to_string(&path).ok();
                let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
                (c.source.to_string_lossy().to_string(), (text, modified))
            })
            .collect();
        Texts { texts }
    }

    /// The line of `pointer` in `c`'s manifest (or of its nearest ancestor).
    fn line(&self, c: &Capability, pointer: &str) -> Option<usize> {
        let (text, _) = self.texts.get(c.source.to_string_lossy().as_ref())?;
        crate::load::line_of(text.as_deref()?, pointer)
    }

    /// The capability whose manifest changed last: the one being added or edited. Times
    /// within [`SAME_TIME`] count as equal (a checkout writes every file at once), and then
    /// the last in id order is taken, so the answer is stable.
    fn changed_last<'a>(&self, owners: &[&'a Capability]) -> &'a Capability {
        let time = |c: &Capability| {
            self.texts
                .get(c.source.to_string_lossy().as_ref())
                .and_then(|(_, t)| *t)
        };
        let mut best = owners[owners.len() - 1];
        for c in owners {
            if let (Some(a), Some(b)) = (time(c), time(best)) {
                if a.duration_since(b).is_ok_and(|d| d > SAME_TIME) {
                    best = c;
                }
            }
        }
        best
    }
}

/// How far apart two modification times must be for one file to count as changed later.
const SAME_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// The signature a capability's handler has, with the generated type paths (the module
/// `crate::registry::types::<id with _>` holds its `Input` and `Output`).
pub fn expected_signature(c: &Capability) -> String {
    let function = c.handler.as_ref().map_or("handler", |(_, f)| f.as_str());
    let m = format!("crate::registry::types::{}", c.module_name());
    format!("pub fn {function}(ctx: &crate::context::Call, input: {m}::Input) -> Result<{m}::Output, seneschal_access::error::CapabilityError>")
}

/// One function of a handler file.
#[derive(Clone)]
pub struct HandlerFn {
    /// Whether it is `pub`.
    pub public: bool,
    /// Its 1-based line (of the `fn` keyword).
    pub line: usize,
    /// Its signature.
    pub sig: syn::Signature,
}

/// A parsed handler file: its functions and what its `use` items bring into scope.
#[derive(Clone)]
pub struct HandlerFile {
    /// The file, relative to the repository root.
    pub display: String,
    /// The free functions, by name.
    pub functions: Vec<(String, HandlerFn)>,
    /// Each name a `use` item brings in, with the path it stands for; a glob import is
    /// recorded under `*` (one entry per glob).
    pub uses: Vec<(String, Vec<String>)>,
}

/// The file a `#[path = "…"]` attribute names, when it is a plain file name.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        let syn::Meta::NameValue(nv) = &a.meta else {
            return None;
        };
        if !nv.path.is_ident("path") {
            return None;
        }
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            return None;
        };
        let file = s.value();
        (!file.contains('/') && !file.contains('\\')).then_some(file)
    })
}

impl HandlerFile {
    /// Parses `dir/module.rs`; the error says what is wrong with the file.
    pub fn parse(dir: &Path, module: &str, repo_root: &Path) -> Result<HandlerFile, String> {
        let path = dir.join(format!("{module}.rs"));
        let display = crate::load::display_path(&path, repo_root);
        let text = std::fs::read_to_string(&path)
            .map_err(|_| format!("{display} does not exist: create it, with"))?;
        let file = syn::parse_file(&text)
            .map_err(|e| format!("{display} does not parse ({e}); it should hold"))?;
        let mut functions = Vec::new();
        let mut uses = Vec::new();
        for item in &file.items {
            match item {
                syn::Item::Fn(f) => {
                    let name = f.sig.ident.to_string();
                    functions.push((
                        name.clone(),
                        HandlerFn {
                            public: matches!(f.vis, syn::Visibility::Public(_)),
                            line: fn_line(&text, &name),
                            sig: f.sig.clone(),
                        },
                    ));
                }
                syn::Item::Use(u) => use_names(&u.tree, Vec::new(), &mut uses),
                // A submodule in a file beside this one (`#[path = "live.rs"] mod live;`,
                // re-exported with `pub use live::*`): its functions and imports count as the
                // module's.
                syn::Item::Mod(m) if m.content.is_none() => {
                    if let Some(file) = path_attribute(&m.attrs) {
                        let name = file.strip_suffix(".rs").unwrap_or(&file);
                        let part = HandlerFile::parse(dir, name, repo_root)?;
                        functions.extend(part.functions);
                        uses.extend(part.uses);
                    }
                }
                _ => {}
            }
        }
        Ok(HandlerFile {
            display,
            functions,
            uses,
        })
    }

    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&HandlerFn> {
        self.functions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
    }

    /// The full path a type path names, as far as the file's `use` items tell: its first
    /// segment replaced by what a `use` brought in under that name. A single name no `use`
    /// brings in may come from a glob: each glob's path is tried by the caller
    /// ([`HandlerFile::names`]).
    pub fn resolve(&self, path: &[String]) -> Vec<Vec<String>> {
        let Some(first) = path.first() else {
            return Vec::new();
        };
        let mut out: Vec<Vec<String>> = self
            .uses
            .iter()
            .filter(|(n, _)| n == first)
            .map(|(_, full)| full.iter().chain(&path[1..]).cloned().collect())
            .collect();
        if out.is_empty() {
            out.push(path.to_vec());
            for (n, prefix) in &self.uses {
                if n == "*" {
                    out.push(prefix.iter().chain(path).cloned().collect());
                }
            }
        }
        out
    }

    /// Whether the type path `path` may name `…::<module>::<item>` (the generated type).
    pub fn names(&self, path: &[String], module: &str, item: &str) -> bool {
        self.resolve(path).iter().any(|full| {
            full.len() >= 2 && full[full.len() - 1] == item && full[full.len() - 2] == module
        })
    }
}

/// The names a `use` tree brings into scope, with their full paths.
fn use_names(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let with = |s: String| {
        prefix
            .iter()
            .cloned()
            .chain(std::iter::once(s))
            .collect::<Vec<_>>()
    };
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, with(p.ident.to_string()), out),
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push((last.clone(), prefix.clone()));
                }
            } else {
                out.push((name.clone(), with(name)));
            }
        }
        syn::UseTree::Rename(r) => out.push((r.rename.to_string(), with(r.ident.to_string()))),
        syn::UseTree::Glob(_) => out.push(("*".to_string(), prefix)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_names(t, prefix.clone(), out);
            }
        }
    }
}

/// The 1-based line of `fn name` in a file's text (1 when it cannot be found).
fn fn_line(text: &str, name: &str) -> usize {
    let needle = format!("fn {name}");
    text.lines()
        .position(|l| {
            let code = l.split("//").next().unwrap_or("");
            code.match_indices(&needle).any(|(i, _)| {
                let after = code[i + needle.len()..].chars().next();
                let before = code[..i].chars().last();
                matches!(after, None | Some('(' | '<' | ' '))
                    && matches!(before, None | Some(' ' | '\t'))
            })
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::operation_examples;
    use serde_json::json;

    #[test]
    fn every_example_of_an_operation_is_found_beside_its_schema() {
        let op = json!({
            "parameters": [{"name": "n", "schema": {"type": "integer"}, "example": "x"}],
            "requestBody": {"content": {"application/json": {
                "schema": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}}},
                "examples": {"empty": {"summary": "an empty note", "value": {"text": ""}}}
            }}},
            "responses": {"200": {"content": {"application/json": {
                "schema": {"type": "string"}, "example": 1
            }}}}
        });
        let mut found = Vec::new();
        operation_examples(&op, "", &mut found);
        let failing: Vec<&str> = found
            .iter()
            .filter(|(_, schema, value)| super::first_error(schema, value).is_some())
            .map(|(pointer, _, _)| pointer.as_str())
            .collect();
        assert_eq!(
            failing,
            [
                "/parameters/0/example",
                "/requestBody/content/application~1json/examples/empty/value",
                "/responses/200/content/application~1json/example",
            ]
        );
    }
}
