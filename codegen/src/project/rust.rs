//! The Rust projection (OUT_DIR only, never committed): typed input/output structs from each
//! manifest's schemas (typify), the static descriptor table, the dispatch table and the
//! handler module tree (quote; written in token form, one capability per line).

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use typify::{TypeSpace, TypeSpaceSettings};

use crate::load::Diagnostic;
use crate::model::{Capability, Kind, Registry};
use crate::policy::{Determinism, Disclosure, Effect, Stability};

/// typify's types for one capability, in a module named after the capability.
pub fn types_for(c: &Capability) -> Result<TokenStream, Diagnostic> {
    let file = c.source.to_string_lossy().replace('\\', "/");
    let fail = |pointer: &str, message: String| Diagnostic {
        file: file.clone(),
        line: None,
        pointer: pointer.into(),
        message,
    };
    let mut settings = TypeSpaceSettings::default();
    settings.with_struct_builder(false);
    let mut space = TypeSpace::new(&settings);
    for (name, pointer, schema) in [
        ("Input", "/input", &c.input),
        ("Output", "/output", &c.output),
    ] {
        let mut schema = schema.clone();
        if let Some(obj) = schema.as_object_mut() {
            // The root type's name is fixed; a title would rename it.
            obj.remove("title");
        }
        let parsed: schemars::schema::Schema = serde_json::from_value(schema)
            .map_err(|e| fail(pointer, format!("typify cannot read this schema: {e}")))?;
        // typify panics on some schema features; a panic becomes a diagnostic naming the manifest.
        let added = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            space
                .add_type_with_name(&parsed, Some(name.to_string()))
                .map(|_| ())
        }));
        match added {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(fail(
                    pointer,
                    format!("typify cannot generate a Rust type for this schema: {e}"),
                ))
            }
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                let why = why
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_end_matches('(')
                    .to_string();
                return Err(fail(
                    pointer,
                    format!("typify cannot handle a feature of this schema (it panicked: {why})"),
                ));
            }
        }
    }
    if space.uses_chrono() || space.uses_uuid() {
        return Err(fail(
            "/input",
            "a `format` (date-time, date, uuid...) makes typify use a crate seneschal does not depend on: use a plain string with a pattern".into(),
        ));
    }
    let stream = space.to_stream();
    let module = format_ident!("{}", c.module_name());
    let doc = format!("Types of `{}`, generated from {}.", c.id, file);
    Ok(quote! {
        #[doc = #doc]
        pub mod #module {
            #stream
        }
    })
}

fn effect_tokens(e: Effect) -> TokenStream {
    match e {
        Effect::Read => quote!(crate::policy::Effect::Read),
        Effect::ProcessState => quote!(crate::policy::Effect::ProcessState),
        Effect::RepositoryWrite => quote!(crate::policy::Effect::RepositoryWrite),
    }
}

fn disclosure_tokens(d: Disclosure) -> TokenStream {
    match d {
        Disclosure::None => quote!(crate::policy::Disclosure::None),
        Disclosure::Metadata => quote!(crate::policy::Disclosure::Metadata),
        Disclosure::Repository => quote!(crate::policy::Disclosure::Repository),
    }
}

fn determinism_tokens(d: Determinism) -> TokenStream {
    match d {
        Determinism::Input => quote!(crate::policy::Determinism::Input),
        Determinism::Repository => quote!(crate::policy::Determinism::Repository),
        Determinism::Process => quote!(crate::policy::Determinism::Process),
    }
}

fn stability_tokens(s: Stability) -> TokenStream {
    match s {
        Stability::Stable => quote!(crate::policy::Stability::Stable),
        Stability::Experimental => quote!(crate::policy::Stability::Experimental),
        Stability::Planned => quote!(crate::policy::Stability::Planned),
    }
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
    let tags = &c.tags;
    let errors: Vec<TokenStream> = c
        .all_errors()
        .iter()
        .map(|code| {
            let v = format_ident!("{}", format!("{code:?}"));
            quote!(crate::error::ErrorCode::#v)
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
    let descriptor_json = serde_json::to_string(&c.descriptor()).expect("serializes");
    let examples = serde_json::to_string(&c.examples).expect("serializes");
    let mime = &c.mime_type;
    let content = match &c.content {
        Some(rel) => {
            let abs = repo_root.join(rel).to_string_lossy().to_string();
            quote!(Some(include_str!(#abs)))
        }
        None => quote!(None),
    };
    let handler = opt_str(&c.handler.as_ref().map(|(m, f)| format!("{m}::{f}")));
    quote! {
        crate::registry::Descriptor {
            id: #id,
            kind: #kind,
            title: #title,
            description: #description,
            handler: #handler,
            effect: #effect,
            disclosure: #disclosure,
            determinism: #determinism,
            stability: #stability,
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
            mime_type: #mime,
        }
    }
}

/// The generated registry module: types, table and dispatch.
pub fn render_registry(reg: &Registry, repo_root: &Path) -> Result<String, Vec<Diagnostic>> {
    let queries: Vec<&Capability> = reg.executable().filter(|c| c.kind == Kind::Query).collect();
    let types = render_types(&queries)?;
    let descriptors: Vec<TokenStream> = reg
        .capabilities
        .iter()
        .map(|c| descriptor(c, repo_root))
        .collect();
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
            quote! {
                #i => {
                    let input: types::#types::Input = decode(input)?;
                    let output: types::#types::Output = crate::handlers::#module::#function(ctx, input)?;
                    encode(output)
                }
            }
        })
        .collect();
    let count = reg.capabilities.len();
    // The token form is written as it is, one capability per line, not re-parsed by syn and
    // pretty-printed: for 1,000 manifests that round trip cost more CPU than typify itself
    // (docs/PERFORMANCE.md), and rustc reads either form alike.
    let mut out = String::with_capacity(types.len() * 2);
    out.push_str(
        "// @generated by seneschal-codegen from capabilities/*.yaml; do not edit.\n\
/// Typed inputs and outputs, one module per executable query.\n\
#[allow(clippy::all, clippy::pedantic, dead_code, missing_docs, unused_imports, irrefutable_let_patterns)]\n\
pub mod types {\n",
    );
    out.push_str(&types);
    out.push_str("}\n");
    out.push_str(&format!(
        "/// Every capability of the registry, sorted by canonical id.\n\
pub static CAPABILITIES: [crate::registry::Descriptor; {count}] = [\n"
    ));
    for d in descriptors {
        out.push_str(&d.to_string());
        out.push_str(",\n");
    }
    out.push_str("];\n");
    let head = quote! {
        /// Calls the handler of the capability at `index` with its typed input.
        pub fn dispatch(
            index: usize,
            ctx: &crate::context::Context,
            input: serde_json::Value,
        ) -> Result<serde_json::Value, crate::error::CapabilityError>
    };
    out.push_str(&head.to_string());
    out.push_str(" {\nmatch index {\n");
    for arm in arms {
        out.push_str(&arm.to_string());
        out.push('\n');
    }
    let tail = quote! {
        _ => Err(crate::error::CapabilityError::unsupported("this capability has no handler")),
    };
    out.push_str(&tail.to_string());
    out.push_str("\n}\n}\n");
    let helpers = quote! {
        fn decode<T: serde::de::DeserializeOwned>(input: serde_json::Value) -> Result<T, crate::error::CapabilityError> {
            serde_json::from_value(input).map_err(|e| crate::error::CapabilityError::invalid_input(format!("input does not decode: {e}")))
        }

        fn encode<T: serde::Serialize>(output: T) -> Result<serde_json::Value, crate::error::CapabilityError> {
            serde_json::to_value(output).map_err(|e| crate::error::CapabilityError::internal(format!("output does not encode: {e}")))
        }
    };
    out.push_str(&helpers.to_string());
    out.push('\n');
    Ok(out)
}

/// typify's modules for every query, in registry order, one module per line. The work is spread
/// over the machine's cores (each capability has its own type space); typify's panics are
/// caught per capability with the panic hook silenced for the duration.
fn render_types(queries: &[&Capability]) -> Result<String, Vec<Diagnostic>> {
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
                        .map(|c| types_for(c).map(|tokens| format!("{tokens}\n")))
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
            Ok(text) => out.push_str(&text),
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// The handler module tree: one module per file under `src/handlers/` (then under each
/// extra handler folder, e.g. the conformance fixtures'), found, not listed.
pub fn render_handlers(handlers_dirs: &[PathBuf]) -> std::io::Result<String> {
    let mut files = Vec::new();
    for dir in handlers_dirs {
        let mut in_dir: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().and_then(|e| e.to_str()) == Some("rs")
                    && p.file_stem().and_then(|s| s.to_str()) != Some("mod")
            })
            .collect();
        in_dir.sort();
        files.extend(in_dir);
    }
    let mut out = String::from(
        "// @generated by seneschal-codegen: one module per file under src/handlers/.\n",
    );
    for f in files {
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let abs = f.canonicalize()?.to_string_lossy().to_string();
        out.push_str(&format!("#[path = {abs:?}]\npub mod {stem};\n"));
    }
    Ok(out)
}
