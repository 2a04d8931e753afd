//! The Rust projection (OUT_DIR only, never committed): typed input/output structs from each
//! manifest's schemas (typify), the static descriptor table and the dispatch table (quote),
//! formatted with prettyplease so that a reader (or rust-analyzer) sees ordinary Rust; and the
//! check of the hand-written handler module list (`core/src/handlers/mod.rs`) against the manifests.

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;
use typify::{TypeSpace, TypeSpaceSettings};

use crate::load::Diagnostic;
use crate::model::{Capability, Kind, Registry};
use crate::policy::{Determinism, Disclosure, Effect, Stability};

/// typify's types for one capability, in a module named after the capability.
pub fn types_for(c: &Capability) -> Result<TokenStream, Diagnostic> {
    let stream = typify_stream(c)?;
    Ok(types_module(c, stream))
}

/// The module of one capability's types around typify's items.
fn types_module(c: &Capability, stream: TokenStream) -> TokenStream {
    let file = c.source.to_string_lossy().replace('\\', "/");
    let module = format_ident!("{}", c.module_name());
    let doc = format!(" Types of `{}`, generated from {}.", c.id, file);
    quote! {
        #[doc = #doc]
        pub mod #module {
            #stream
        }
    }
}

/// typify's items for one capability's input and output. A schema typify cannot type (it
/// errs or panics: `if`/`then`/`else`, a `$ref` into the `$defs` of a sub-schema, ...) is not
/// refused: its type falls back to `serde_json::Value` ([`FALLBACK_DOC`]), which the executor
/// has validated against the full schema before the handler sees it (an answer, after it).
/// Only a `format` that would pull in a crate is refused.
fn typify_stream(c: &Capability) -> Result<TokenStream, Diagnostic> {
    let file = c.source.to_string_lossy().replace('\\', "/");
    let fail = |pointer: &str, message: String| Diagnostic {
        file: file.clone(),
        line: None,
        pointer: pointer.into(),
        message,
    };
    let schemas = [
        ("Input", "/input", &c.input),
        ("Output", "/output", &c.output),
    ];
    // A failed schema can leave half its types in the space: the space is built again without
    // it (at most once per schema).
    let mut untyped: Vec<&str> = Vec::new();
    let space = loop {
        match typify_space(&schemas, &untyped) {
            Ok(space) => break space,
            Err(name) => untyped.push(name),
        }
    };
    if space.uses_chrono() || space.uses_uuid() {
        return Err(fail(
            "/input",
            "a `format` (date-time, date, uuid...) makes typify use a crate seneschal does not depend on: use a plain string with a pattern".into(),
        ));
    }
    for (_, pointer, schema) in &schemas {
        if let Some((at, pattern)) = ecmascript_only_pattern(schema, pointer) {
            return Err(fail(
                &at,
                format!("the pattern `{pattern}` reads differently as ECMAScript (JSON Schema) and in the `regex` crate (the typed check): write it in their common subset"),
            ));
        }
    }
    let mut stream = on_regex(space.to_stream());
    for name in untyped {
        let ident = format_ident!("{name}");
        let doc = format!(" {FALLBACK_DOC}");
        stream.extend(quote! {
            #[doc = #doc]
            pub type #ident = ::serde_json::Value;
        });
    }
    Ok(stream)
}

/// typify's items with `::regress` (the ECMAScript engine typify checks a string's `pattern`
/// with) replaced by `::regex`: the binary carries one regular-expression engine, and the
/// patterns are in the subset both read alike ([`ecmascript_only_pattern`]). Both crates'
/// `Regex::new(..)` and `find(..)` are what typify's code calls.
fn on_regex(stream: TokenStream) -> TokenStream {
    use proc_macro2::{Group, Ident, TokenTree};
    stream
        .into_iter()
        .map(|t| match t {
            TokenTree::Ident(i) if i == "regress" => {
                TokenTree::Ident(Ident::new("regex", i.span()))
            }
            TokenTree::Group(g) => {
                let mut out = Group::new(g.delimiter(), on_regex(g.stream()));
                out.set_span(g.span());
                TokenTree::Group(out)
            }
            other => other,
        })
        .collect()
}

/// The first string `pattern` under `schema` (and where) that the `regex` crate would read
/// differently from ECMAScript: one `jsonschema-regex` (the translation the `jsonschema`
/// crate validates with) rewrites.
fn ecmascript_only_pattern(schema: &Value, pointer: &str) -> Option<(String, String)> {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(p)) = map.get("pattern") {
                if jsonschema_regex::to_rust_regex(p).map_or(true, |t| t != p.as_str()) {
                    return Some((format!("{pointer}/pattern"), p.clone()));
                }
            }
            // Values (examples, defaults, constants) are not schemas.
            let values = ["examples", "default", "const", "enum"];
            map.iter()
                .filter(|(k, _)| !values.contains(&k.as_str()))
                .find_map(|(k, v)| {
                    ecmascript_only_pattern(
                        v,
                        &format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")),
                    )
                })
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| ecmascript_only_pattern(v, &format!("{pointer}/{i}"))),
        _ => None,
    }
}

/// The doc of a type typify could not generate (see [`typify_stream`]).
const FALLBACK_DOC: &str = "typify cannot type this schema: the value is JSON, validated against the full schema by the executor";

/// A type space holding the schemas of `schemas` not in `skip`, or the name of the first one
/// typify cannot type (it errs, panics, or cannot read it).
fn typify_space(
    schemas: &[(&'static str, &str, &Value); 2],
    skip: &[&str],
) -> Result<TypeSpace, &'static str> {
    let mut settings = TypeSpaceSettings::default();
    // Maps (`additionalProperties` with a schema) are ordered: an answer's keys come out in one
    // order however it is serialized (typify's default, HashMap, has none).
    settings
        .with_struct_builder(false)
        .with_map_type("::std::collections::BTreeMap");
    let mut space = TypeSpace::new(&settings);
    for (name, _, schema) in schemas.iter().filter(|(n, _, _)| !skip.contains(n)) {
        let mut schema = (*schema).clone();
        if let Some(obj) = schema.as_object_mut() {
            // The root type's name is fixed; a title would rename it.
            obj.remove("title");
        }
        let Ok(parsed) = serde_json::from_value::<schemars::schema::Schema>(schema) else {
            return Err(name);
        };
        // typify panics on some schema features (the caller silences the panic hook).
        let added = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            space
                .add_type_with_name(&parsed, Some(name.to_string()))
                .map(|_| ())
        }));
        if !matches!(added, Ok(Ok(()))) {
            return Err(name);
        }
    }
    Ok(space)
}

/// How a module of types prints the `pub mod error {}` left by [`hoist_error_module`].
const ERROR_PLACEHOLDER: &str = "        pub mod error {}\n";

/// typify's items with the body of their `pub mod error { ... }` taken out (left empty), and
/// that body. typify writes the same error module into every type space: it is formatted once
/// and put back as text ([`ERROR_PLACEHOLDER`]), which saves most of the formatting of a
/// capability with few types.
fn hoist_error_module(stream: TokenStream) -> (TokenStream, Option<proc_macro2::Group>) {
    use proc_macro2::{Delimiter, Group, TokenTree};
    let mut trees: Vec<TokenTree> = stream.into_iter().collect();
    let is = |t: &TokenTree, word: &str| matches!(t, TokenTree::Ident(i) if i == word);
    let found = trees.windows(4).position(|w| {
        is(&w[0], "pub")
            && is(&w[1], "mod")
            && is(&w[2], "error")
            && matches!(&w[3], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
    });
    let body = found.and_then(|i| match &mut trees[i + 3] {
        TokenTree::Group(g) => Some(std::mem::replace(
            g,
            Group::new(Delimiter::Brace, TokenStream::new()),
        )),
        _ => None,
    });
    (trees.into_iter().collect(), body)
}

fn effect_tokens(e: Effect) -> TokenStream {
    match e {
        Effect::Read => quote!(seneschal_model::policy::Effect::Read),
        Effect::ProcessState => quote!(seneschal_model::policy::Effect::ProcessState),
        Effect::RepositoryWrite => quote!(seneschal_model::policy::Effect::RepositoryWrite),
    }
}

fn disclosure_tokens(d: Disclosure) -> TokenStream {
    match d {
        Disclosure::None => quote!(seneschal_model::policy::Disclosure::None),
        Disclosure::Metadata => quote!(seneschal_model::policy::Disclosure::Metadata),
        Disclosure::Repository => quote!(seneschal_model::policy::Disclosure::Repository),
    }
}

fn determinism_tokens(d: Determinism) -> TokenStream {
    match d {
        Determinism::Input => quote!(seneschal_model::policy::Determinism::Input),
        Determinism::Repository => quote!(seneschal_model::policy::Determinism::Repository),
        Determinism::Process => quote!(seneschal_model::policy::Determinism::Process),
        Determinism::Client => quote!(seneschal_model::policy::Determinism::Client),
    }
}

fn stability_tokens(s: Stability) -> TokenStream {
    match s {
        Stability::Stable => quote!(seneschal_model::policy::Stability::Stable),
        Stability::Experimental => quote!(seneschal_model::policy::Stability::Experimental),
        Stability::Planned => quote!(seneschal_model::policy::Stability::Planned),
    }
}

fn toolset_tokens(t: crate::toolset::Toolset) -> TokenStream {
    let name = quote::format_ident!("{}", format!("{t:?}"));
    quote!(seneschal_model::toolset::Toolset::#name)
}

fn opt_str(s: &Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

/// The static descriptor of one capability.
fn descriptor(c: &Capability, repo_root: &Path) -> TokenStream {
    let id = &c.id;
    let title = &c.title;
    let description = &c.description;
    let kind = match c.kind {
        Kind::Query => quote!(crate::registry::Kind::Query),
        Kind::Resource => quote!(crate::registry::Kind::Resource),
    };
    let effect = effect_tokens(c.effect);
    let disclosure = disclosure_tokens(c.disclosure);
    let determinism = determinism_tokens(c.determinism);
    let stability = stability_tokens(c.stability);
    let toolset = toolset_tokens(c.toolset);
    let additive = c.additive;
    let git_state = c.git_state;
    let tags = &c.tags;
    let errors: Vec<TokenStream> = c
        .all_errors()
        .iter()
        .map(|code| {
            let v = format_ident!("{}", format!("{code:?}"));
            quote!(seneschal_access::error::ErrorCode::#v)
        })
        .collect();
    let mcp_tool = opt_str(&c.expose.mcp_tool);
    let mcp_resource = opt_str(&c.expose.mcp_resource);
    let http = match &c.expose.http {
        Some(h) => {
            let (m, p) = (&h.method, &h.path);
            quote!(Some(crate::registry::HttpRoute { method: #m, path: #p }))
        }
        None => quote!(None),
    };
    let cli: Vec<&String> = c.expose.cli.iter().flatten().collect();
    let review = &c.review;
    let input = serde_json::to_string(&c.input).expect("serializes");
    let output = serde_json::to_string(&c.output).expect("serializes");
    let mut described = c.descriptor();
    if let Some(types) = rust_types(c) {
        described["rust_types"] = types.into();
    }
    let descriptor_json = serde_json::to_string(&described).expect("serializes");
    let examples = serde_json::to_string(&c.examples).expect("serializes");
    let mime = &c.mime_type;
    let embed = |bytes: bool| match &c.content {
        Some(rel) if bytes == c.binary() => {
            let abs = repo_root.join(rel).to_string_lossy().to_string();
            if bytes {
                quote!(Some(include_bytes!(#abs)))
            } else {
                quote!(Some(include_str!(#abs)))
            }
        }
        _ => quote!(None),
    };
    let (content, blob) = (embed(false), embed(true));
    let blocks = &c.content_blocks;
    let task = opt_str(&c.task);
    let asks_first = c.task_asks_first;
    let handler = opt_str(&c.handler.as_ref().map(|(m, f)| format!("{m}::{f}")));
    quote! {
        crate::registry::Descriptor {
            id: #id,
            kind: #kind,
            title: #title,
            description: #description,
            handler: #handler,
            class: seneschal_model::policy::Class {
                effect: #effect,
                additive: #additive,
                disclosure: #disclosure,
                determinism: #determinism,
                stability: #stability,
                toolset: #toolset,
            },
            git_state: #git_state,
            tags: &[#(#tags),*],
            errors: &[#(#errors),*],
            mcp_tool: #mcp_tool,
            mcp_resource: #mcp_resource,
            http: #http,
            cli: &[#(#cli),*],
            review: #review,
            input_schema: #input,
            output_schema: #output,
            descriptor_json: #descriptor_json,
            examples_json: #examples,
            content: #content,
            blob: #blob,
            mime_type: #mime,
            content_blocks: &[#(#blocks),*],
            task: #task,
            task_asks_first: #asks_first,
        }
    }
}

/// The first line of the generated Rust: what made it, from what, and what remakes it.
pub const HEADER: &str = "// @generated by seneschal-codegen from capabilities/*.yaml; remade by `cargo build`; do not edit.\n";

/// Formats tokens that make a file of items (prettyplease: rustfmt's layout, without rustfmt).
fn pretty(tokens: TokenStream) -> Result<String, syn::Error> {
    Ok(prettyplease::unparse(&syn::parse2::<syn::File>(tokens)?))
}

/// The lines of `text` between its first and its last (the wrapper's), each ending in `\n`.
fn inner_lines(text: &str) -> &str {
    let body = text.split_once('\n').map_or("", |(_, rest)| rest);
    let end = body.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    &body[..end]
}

/// One element of the descriptor table, formatted as prettyplease formats it inside the table
/// (the same wrapper depth, so the same line breaks), with its trailing comma.
fn pretty_element(expr: &TokenStream) -> String {
    let text =
        pretty(quote! { const _: [(); 1] = [#expr]; }).expect("the generated descriptor parses");
    inner_lines(&text).to_string()
}

/// The generated registry module: types, table and dispatch, in prettyplease's layout (a blank
/// line between two items, which prettyplease does not add). The items are formatted one by
/// one, each inside a wrapper of its final depth, which gives the layout of formatting the
/// whole file at once at a linear cost; the types (the bulk) are formatted on all cores.
pub fn render_registry(reg: &Registry, repo_root: &Path) -> Result<String, Vec<Diagnostic>> {
    let queries: Vec<&Capability> = reg.executable().filter(|c| c.kind == Kind::Query).collect();
    let types = render_types(&queries)?;
    let descriptors: Vec<String> = crate::parallel_map(&reg.capabilities, |c| {
        pretty_element(&descriptor(c, repo_root))
    });
    let arms: Vec<TokenStream> = reg
        .capabilities
        .iter()
        .enumerate()
        .filter(|(_, c)| c.executable() && c.kind == Kind::Query)
        .map(|(i, c)| {
            let (m, f) = c.handler.as_ref().expect("checked: executable queries have handlers");
            let module = format_ident!("{}", m);
            let function = format_ident!("{}", f);
            let types = format_ident!("{}", c.module_name());
            let i = proc_macro2::Literal::usize_unsuffixed(i);
            quote! {
                #i => {
                    let input: types::#types::Input = decode(input)?;
                    let output: types::#types::Output = crate::handlers::#module::#function(ctx, input)?;
                    encode(output)
                }
            }
        })
        .collect();
    let types_head = pretty(quote! {
        /// Typed inputs and outputs, one module per executable query.
        #[allow(clippy::all, clippy::pedantic, dead_code, missing_docs, unused_imports, irrefutable_let_patterns)]
        pub mod types {}
    })
    .expect("the types module parses");
    let dispatch = pretty(quote! {
        /// Calls the handler of the capability at `index` with its typed input.
        pub fn dispatch(
            index: usize,
            ctx: &crate::context::Call,
            input: serde_json::Value,
        ) -> Result<serde_json::Value, seneschal_access::error::CapabilityError> {
            match index {
                #(#arms)*
                _ => Err(seneschal_access::error::CapabilityError::unsupported("this capability has no handler")),
            }
        }
    })
    .expect("the dispatch parses");
    let decode = pretty(quote! {
        fn decode<T: serde::de::DeserializeOwned>(input: serde_json::Value) -> Result<T, seneschal_access::error::CapabilityError> {
            serde_json::from_value(input).map_err(|e| seneschal_access::error::CapabilityError::invalid_input(format!("input does not decode: {e}")))
        }
    })
    .expect("decode parses");
    let encode = pretty(quote! {
        fn encode<T: serde::Serialize>(output: T) -> Result<serde_json::Value, seneschal_access::error::CapabilityError> {
            serde_json::to_value(output).map_err(|e| seneschal_access::error::CapabilityError::internal(format!("output does not encode: {e}")))
        }
    })
    .expect("encode parses");

    let table_len: usize = descriptors.iter().map(String::len).sum();
    let mut out = String::with_capacity(types.len() + table_len + dispatch.len() + 1024);
    out.push_str(HEADER);
    // `pub mod types {}` printed empty: its last line is `pub mod types {}`.
    let head = types_head.trim_end().trim_end_matches('}');
    if types.is_empty() {
        out.push_str(&types_head);
    } else {
        out.push_str(head);
        out.push('\n');
        out.push_str(&types);
        out.push_str("}\n");
    }
    out.push_str("\n/// Every capability of the registry, sorted by canonical id.\n");
    if descriptors.is_empty() {
        out.push_str("pub static CAPABILITIES: [crate::registry::Descriptor; 0] = [];\n");
    } else {
        out.push_str(&format!(
            "pub static CAPABILITIES: [crate::registry::Descriptor; {}] = [\n",
            descriptors.len()
        ));
        for d in &descriptors {
            out.push_str(d);
        }
        out.push_str("];\n");
    }
    for item in [&dispatch, &decode, &encode] {
        out.push('\n');
        out.push_str(item);
    }
    Ok(out)
}

/// An error module body formatted as `pub mod error { ... }` at its depth in `pub mod types`,
/// remembered by its tokens (typify writes one, the same, for every capability).
fn error_text(
    cache: &std::sync::Mutex<Vec<(String, String)>>,
    body: &proc_macro2::Group,
) -> Result<String, syn::Error> {
    let key = body.to_string();
    let known = |cache: &std::sync::Mutex<Vec<(String, String)>>| {
        let cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    };
    if let Some(text) = known(cache) {
        return Ok(text);
    }
    let text = pretty(quote! { pub mod types { pub mod m { pub mod error #body } } })?;
    let text = inner_lines(inner_lines(&text)).to_string();
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, text.clone()));
    Ok(text)
}

/// typify's modules for every query, in registry order, each formatted at its depth inside
/// `pub mod types`, a blank line between two. The work is spread over the machine's cores
/// (each capability has its own type space); typify's panics are caught per capability with
/// the panic hook silenced for the duration.
fn render_types(queries: &[&Capability]) -> Result<String, Vec<Diagnostic>> {
    let errors = &std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = queries.len().div_ceil(threads).max(1);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let results: Vec<Result<String, Diagnostic>> = std::thread::scope(|scope| {
        let handles: Vec<_> = queries
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|c| {
                            let stream = typify_stream(c)?;
                            let fail = |e: syn::Error| Diagnostic {
                                file: c.source.to_string_lossy().replace('\\', "/"),
                                line: None,
                                pointer: "/output".into(),
                                message: format!("the Rust typify generated does not parse: {e}"),
                            };
                            let whole = |stream: TokenStream| {
                                let tokens = types_module(c, stream);
                                pretty(quote! { pub mod types { #tokens } })
                                    .map(|text| inner_lines(&text).to_string())
                                    .map_err(fail)
                            };
                            let (hoisted, error) = hoist_error_module(stream.clone());
                            let Some(error) = error else {
                                return whole(stream);
                            };
                            let text = whole(hoisted)?;
                            if !text.contains(ERROR_PLACEHOLDER) {
                                return whole(stream);
                            }
                            let formatted = error_text(errors, &error).map_err(fail)?;
                            Ok(text.replacen(ERROR_PLACEHOLDER, &formatted, 1))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a type-rendering thread panicked"))
            .collect()
    });
    std::panic::set_hook(previous);
    let mut out = String::new();
    let mut diags = Vec::new();
    for r in results {
        match r {
            Ok(text) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&text);
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Modules of `core/src/handlers/mod.rs` that no manifest names but that are declared on purpose
/// (shared code of several handler groups). None yet.
pub const HELPER_MODULES: &[&str] = &[];

/// The `cfg` of the handler modules that only the conformance fixtures need.
pub const FIXTURES_CFG: &str = "feature = \"conformance-fixtures\"";

/// One `mod name;` declaration of `core/src/handlers/mod.rs`.
#[derive(Debug)]
struct Declared {
    name: String,
    /// 1-based line of the declaration.
    line: usize,
    /// The file the module is read from: `#[path]`, else `name.rs` (or `name/mod.rs`).
    file: PathBuf,
    /// Declared under [`FIXTURES_CFG`]: compiled only with the conformance fixtures.
    fixtures_only: bool,
}

/// Checks the hand-written module list of `core/src/handlers/mod.rs` (the first of
/// `handlers_dirs`) against the manifests, both ways: every module a manifest's `handler`
/// names is declared (pointing at the file the registry check found it in), and every
/// declared module is named by some manifest or is one of [`HELPER_MODULES`]; a file of
/// `core/src/handlers/` that is no module is reported too. A module of a later folder (the
/// conformance fixtures') is declared under `#[cfg(feature = "conformance-fixtures")]` with a
/// `#[path]`; those modules are checked only when `fixtures` says the fixtures are built.
/// Each diagnostic names `core/src/handlers/mod.rs` and the line to add or remove; a missing line
/// is placed where it belongs in alphabetical order.
pub fn check_handler_modules(
    reg: &Registry,
    handlers_dirs: &[PathBuf],
    root: &Path,
) -> Result<(), Vec<Diagnostic>> {
    let Some(dir) = handlers_dirs.first() else {
        return Ok(());
    };
    let fixtures = handlers_dirs.len() > 1;
    let mod_rs = dir.join("mod.rs");
    let mod_display = crate::load::display_path(&mod_rs, root);
    let diag = |line: Option<usize>, message: String| Diagnostic {
        file: mod_display.clone(),
        line,
        pointer: String::new(),
        message,
    };
    let text = std::fs::read_to_string(&mod_rs).map_err(|e| {
        vec![diag(
            None,
            format!("cannot read the handler module list ({e}): it declares `pub mod <name>;` for each handler module the manifests name"),
        )]
    })?;
    let parsed =
        syn::parse_file(&text).map_err(|e| vec![diag(None, format!("does not parse: {e}"))])?;
    let declared = declared_modules(&parsed, &text, dir);
    let active: Vec<&Declared> = declared
        .iter()
        .filter(|d| fixtures || !d.fixtures_only)
        .collect();
    let mut diags = Vec::new();

    // Every module a manifest names, with the capabilities naming it; the dispatch table
    // calls those of executable queries, so they must be compiled.
    let mut named: std::collections::BTreeMap<&str, Vec<&Capability>> = Default::default();
    for c in &reg.capabilities {
        if let Some((module, _)) = &c.handler {
            named.entry(module.as_str()).or_default().push(c);
        }
    }
    for (module, caps) in &named {
        let Some(first) = caps
            .iter()
            .find(|c| c.executable() && c.kind == Kind::Query)
        else {
            continue;
        };
        let by = format!(
            "of `{}` ({}){}",
            first.id,
            first.source.to_string_lossy().replace('\\', "/"),
            match caps.len() {
                1 => String::new(),
                2 => " and 1 more capability".to_string(),
                n => format!(" and {} more capabilities", n - 1),
            }
        );
        // The registry check found the file in the first folder that has it.
        let Some(home) = handlers_dirs
            .iter()
            .find(|d| d.join(format!("{module}.rs")).is_file())
        else {
            continue; // reported by the registry check: the file does not exist
        };
        let file = home.join(format!("{module}.rs"));
        let in_fixtures = home != dir;
        let line = if in_fixtures {
            format!(
                "#[cfg({FIXTURES_CFG})] #[path = \"{}\"] pub mod {module};",
                relative(dir, &file)
            )
        } else {
            format!("pub mod {module};")
        };
        match active.iter().find(|d| d.name == *module) {
            Some(d) if same_file(&d.file, &file) => {}
            Some(d) => diags.push(diag(
                Some(d.line),
                format!(
                    "handler module `{module}` {by} is read from {}, not from {}: declare it as `{line}`",
                    crate::load::display_path(&d.file, root),
                    crate::load::display_path(&file, root),
                ),
            )),
            None => {
                // Declared, but only for the fixture build: that line is the one to change.
                let (at, message) = match declared.iter().find(|d| d.name == *module) {
                    Some(d) => (d.line, format!(
                        "handler module `{module}` {by} is declared only under `#[cfg({FIXTURES_CFG})]`: declare it as `{line}`"
                    )),
                    None => (
                        if in_fixtures {
                            text.lines().count() + 1
                        } else {
                            insertion_line(&declared, module, &text)
                        },
                        format!("handler module `{module}` {by} is not declared: add the line `{line}`"),
                    ),
                };
                diags.push(diag(Some(at), message));
            }
        }
    }

    // Every declared module is named by a manifest or is a helper.
    for d in &active {
        if !named.contains_key(d.name.as_str()) && !HELPER_MODULES.contains(&d.name.as_str()) {
            diags.push(diag(
                Some(d.line),
                format!(
                    "module `{}` is named by no manifest's `handler` and is not a known helper (HELPER_MODULES in codegen/src/project/rust.rs): remove its line, or name it in a manifest",
                    d.name
                ),
            ));
        } else if !d.file.is_file() {
            diags.push(diag(
                Some(d.line),
                format!(
                    "module `{}` is read from {}, which does not exist",
                    d.name,
                    crate::load::display_path(&d.file, root)
                ),
            ));
        }
    }

    // Every file of the folder is a module (a file no line declares would be dead, silently).
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| vec![diag(None, format!("cannot list its folder: {e}"))])?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()) == Some("rs")
                && p.file_stem().and_then(|s| s.to_str()) != Some("mod")
        })
        .collect();
    files.sort();
    for f in files {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        // A file a manifest names was reported above, with the line to add.
        if !named.contains_key(stem) && !declared.iter().any(|d| same_file(&d.file, &f)) {
            diags.push(diag(
                Some(insertion_line(&declared, stem, &text)),
                format!(
                    "{} is declared by no line and named by no manifest: remove it, or name it in a manifest's `handler` and add the line `pub mod {stem};`",
                    crate::load::display_path(&f, root)
                ),
            ));
        }
    }
    if diags.is_empty() {
        check_handler_signatures(reg, handlers_dirs, root)
    } else {
        diags.sort();
        Err(diags)
    }
}

/// Checks each executable query's handler signature against its manifest, before rustc sees
/// the generated dispatch: `pub fn f(ctx: &Call, input: <types>::Input) ->
/// Result<<types>::Output, CapabilityError>`. A wrong input or output type, swapped or
/// missing arguments are reported at the handler's file and line with the expected signature
/// (a missing function or `pub` is reported by the registry check). Type paths are resolved
/// through the file's `use` items; a type the check cannot place is left to rustc.
pub fn check_handler_signatures(
    reg: &Registry,
    handlers_dirs: &[PathBuf],
    root: &Path,
) -> Result<(), Vec<Diagnostic>> {
    let mut files: std::collections::BTreeMap<String, Option<crate::check::HandlerFile>> =
        Default::default();
    let mut diags = Vec::new();
    for c in reg.executable().filter(|c| c.kind == Kind::Query) {
        let Some((module, function)) = &c.handler else {
            continue;
        };
        let Some(dir) = handlers_dirs
            .iter()
            .find(|d| d.join(format!("{module}.rs")).is_file())
        else {
            continue;
        };
        let Some(file) = files
            .entry(module.clone())
            .or_insert_with(|| crate::check::HandlerFile::parse(dir, module, root).ok())
        else {
            continue;
        };
        let Some(f) = file.function(function) else {
            continue;
        };
        if let Some(problem) = signature_problem(file, &f.sig, &c.module_name()) {
            let source = c.source.to_string_lossy().replace('\\', "/");
            let line = std::fs::read_to_string(root.join(&c.source))
                .ok()
                .and_then(|text| crate::load::line_of(&text, "/handler"));
            let manifest = match line {
                Some(l) => format!("{source}:{l}"),
                None => source,
            };
            diags.push(Diagnostic {
                file: file.display.clone(),
                line: Some(f.line),
                pointer: String::new(),
                message: format!(
                    "handler `{module}::{function}` of `{}` ({}) {problem}; its manifest asks for `{}`",
                    c.id,
                    manifest,
                    crate::check::expected_signature(c)
                ),
            });
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        diags.sort();
        Err(diags)
    }
}

/// What is wrong with a handler's signature, or `None`. `types` is the capability's module
/// under `crate::registry::types`.
fn signature_problem(
    file: &crate::check::HandlerFile,
    sig: &syn::Signature,
    types: &str,
) -> Option<String> {
    let args: Vec<&syn::Type> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(&*t.ty),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    // Whether a type names the generated `item` of this capability: yes, no, or `None` when
    // the check cannot place it (a name no `use` brings in and no prelude type has: a local
    // alias or a glob import), which is left to rustc.
    let placed = |t: &syn::Type, item: &str| -> Option<bool> {
        let Some(path) = type_path(t) else {
            return Some(false);
        };
        if file.names(&path, types, item) {
            return Some(true);
        }
        let unknown = path.len() == 1
            && !file.uses.iter().any(|(n, _)| *n == path[0])
            && !PRELUDE.contains(&path[0].as_str());
        if unknown {
            None
        } else {
            Some(false)
        }
    };
    let is_context = |t: &syn::Type| -> Option<bool> {
        let syn::Type::Reference(r) = t else {
            return Some(false);
        };
        let path = type_path(&r.elem)?;
        if file
            .resolve(&path)
            .iter()
            .any(|full| full.last().is_some_and(|l| l == "Call"))
        {
            return Some(true);
        }
        placed(&r.elem, "Call").map(|_| false)
    };
    let shown = |t: &syn::Type| show_type(t);
    if args.len() != 2 {
        return Some(format!(
            "takes {} argument(s), not two (the call and the input)",
            args.len()
        ));
    }
    if placed(args[0], "Input") == Some(true) && is_context(args[1]) == Some(true) {
        return Some("takes its arguments swapped: the call comes first, then the input".into());
    }
    if is_context(args[0]) == Some(false) {
        return Some(format!(
            "takes `{}` as its first argument, not `&Call`",
            shown(args[0])
        ));
    }
    if placed(args[1], "Input") == Some(false) {
        return Some(format!(
            "takes `{}` as its input, not `{types}::Input`",
            shown(args[1])
        ));
    }
    let syn::ReturnType::Type(_, ret) = &sig.output else {
        return Some(format!(
            "returns nothing, not `Result<{types}::Output, CapabilityError>`"
        ));
    };
    let wrong = match result_ok(ret) {
        Some(ok) => placed(ok, "Output") == Some(false),
        None => placed(ret, "Result") == Some(false),
    };
    if wrong {
        return Some(format!(
            "returns `{}`, not `Result<{types}::Output, CapabilityError>`",
            shown(ret)
        ));
    }
    None
}

/// Names a handler signature may use without a `use`: primitives and the prelude's types.
const PRELUDE: &[&str] = &[
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64", "String", "Vec", "Option", "Result", "Box", "Self",
];

/// The segments of a plain type path (`a::b::C`), without generic arguments.
fn type_path(t: &syn::Type) -> Option<Vec<String>> {
    match t {
        syn::Type::Path(p) if p.qself.is_none() => Some(
            p.path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect(),
        ),
        syn::Type::Paren(p) => type_path(&p.elem),
        syn::Type::Group(g) => type_path(&g.elem),
        _ => None,
    }
}

/// The `T` of a `Result<T, E>` (or of a one-argument `Result<T>` alias).
fn result_ok(t: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = t else {
        return None;
    };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// A type as a reader writes it (`a::B<C>`, `&Context`).
fn show_type(t: &syn::Type) -> String {
    quote!(#t)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
}

/// The `mod name;` items of a parsed `mod.rs` (inline modules are not handler modules).
fn declared_modules(file: &syn::File, text: &str, dir: &Path) -> Vec<Declared> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if m.content.is_none() => Some(m),
            _ => None,
        })
        .map(|m| {
            let name = m.ident.to_string();
            let mut path = None;
            let mut fixtures_only = false;
            for attr in &m.attrs {
                if attr.path().is_ident("path") {
                    if let syn::Meta::NameValue(nv) = &attr.meta {
                        if let syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) = &nv.value
                        {
                            path = Some(dir.join(s.value()));
                        }
                    }
                } else if attr.path().is_ident("cfg") {
                    let cfg = attr.meta.require_list().map(|l| l.tokens.to_string());
                    fixtures_only |= cfg.as_deref().ok() == Some(FIXTURES_CFG);
                }
            }
            let file = path.unwrap_or_else(|| {
                let flat = dir.join(format!("{name}.rs"));
                let nested = dir.join(&name).join("mod.rs");
                if !flat.exists() && nested.exists() {
                    nested
                } else {
                    flat
                }
            });
            let needle = format!("mod {name};");
            let line = text
                .lines()
                .position(|l| l.trim_end().ends_with(&needle))
                .map_or(1, |i| i + 1);
            Declared {
                name,
                line,
                file,
                fixtures_only,
            }
        })
        .collect()
}

/// The line a new `pub mod name;` takes to keep the plain declarations in alphabetical order:
/// before the first plain one that sorts after it, else after the last one (else at the end).
fn insertion_line(declared: &[Declared], name: &str, text: &str) -> usize {
    let plain: Vec<&Declared> = declared.iter().filter(|d| !d.fixtures_only).collect();
    match plain.iter().find(|d| d.name.as_str() > name) {
        Some(d) => d.line,
        None => plain
            .last()
            .map_or(text.lines().count() + 1, |d| d.line + 1),
    }
}

/// Whether two paths name one file (both canonicalized; equal paths otherwise).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `to` relative to the folder `from`, with `/` separators (for a `#[path]`).
fn relative(from: &Path, to: &Path) -> String {
    let from = from.canonicalize().unwrap_or_else(|_| from.to_path_buf());
    let to = to.canonicalize().unwrap_or_else(|_| to.to_path_buf());
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    parts.join("/")
}

/// The Rust types the build generates for an executable query, as a reader needs them: each
/// struct and enum of its module with its fields and their Rust types (no attributes, no
/// impls), formatted. `None` for a resource or a planned capability (no handler, no types),
/// or when typify cannot type the schemas (the build reports that).
pub fn rust_types(c: &Capability) -> Option<String> {
    if c.kind != Kind::Query || !c.executable() {
        return None;
    }
    static CACHE: std::sync::Mutex<std::collections::BTreeMap<String, Option<String>>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let key = format!("{}\0{}\0{}", c.id, c.input, c.output);
    if let Some(known) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return known.clone();
    }
    let text = render_one(c);
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, text.clone());
    text
}

fn render_one(c: &Capability) -> Option<String> {
    let tokens = types_for(c).ok()?;
    let file: syn::File = syn::parse2(tokens).ok()?;
    let syn::Item::Mod(module) = file.items.first()? else {
        return None;
    };
    let (_, items) = module.content.as_ref()?;
    let mut kept: Vec<syn::Item> = Vec::new();
    for item in items {
        match item {
            syn::Item::Struct(st) => {
                let mut st = st.clone();
                st.attrs.clear();
                for f in st.fields.iter_mut() {
                    // A wire name stays; a default becomes a note.
                    let serde: Vec<String> = f
                        .attrs
                        .iter()
                        .filter(|a| a.path().is_ident("serde"))
                        .map(|a| quote::ToTokens::to_token_stream(&a.meta).to_string())
                        .collect();
                    f.attrs.retain(|a| {
                        a.path().is_ident("serde")
                            && quote::ToTokens::to_token_stream(&a.meta)
                                .to_string()
                                .contains("rename")
                    });
                    if serde.iter().any(|m| m.contains("default")) {
                        f.attrs.push(
                            syn::parse_quote!(#[doc = " When absent: the schema's default."]),
                        );
                    }
                }
                kept.push(syn::Item::Struct(st));
            }
            syn::Item::Enum(en) => {
                let mut en = en.clone();
                en.attrs.clear();
                for v in en.variants.iter_mut() {
                    v.attrs.clear();
                    for f in v.fields.iter_mut() {
                        f.attrs.clear();
                    }
                }
                kept.push(syn::Item::Enum(en));
            }
            syn::Item::Type(ty) => {
                let mut ty = ty.clone();
                ty.attrs.clear();
                kept.push(syn::Item::Type(ty));
            }
            _ => {}
        }
    }
    // Input and Output first, then the types they use, in typify's order.
    let rank = |i: &syn::Item| match i {
        syn::Item::Struct(s) if s.ident == "Input" => 0,
        syn::Item::Struct(s) if s.ident == "Output" => 1,
        _ => 2,
    };
    kept.sort_by_key(rank);
    let mut out = file.clone();
    out.attrs.clear();
    out.items = kept;
    let text = prettyplease::unparse(&out);
    // A blank line between two items, as rustfmt writes them; the prelude's types by name.
    let text = text
        .replace("}\npub ", "}\n\npub ")
        .replace(";\npub ", ";\n\npub ")
        .replace("::std::string::String", "String")
        .replace("::std::vec::Vec", "Vec")
        .replace("::std::option::Option", "Option")
        .replace("::std::", "std::")
        .replace("::serde_json::", "serde_json::");
    Some(text)
}
