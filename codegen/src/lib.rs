//! seneschal's build-time library: load the capability manifests, check the registry
//! invariants, and render every projection.
//!
//! `build.rs` calls [`build`]; tests call [`load_registry`] and the renderers directly on
//! fixture registries. Nothing here runs inside the seneschal binary: the binary serves the
//! bytes this crate produced.

pub mod check;
pub mod load;
pub mod model;
pub mod project;

/// The model shared with the binary (crate `seneschal-model`): policy, codes, versions, flags.
pub use seneschal_model::{codes, flags, policy, toolset, versions};

use std::path::{Path, PathBuf};

pub use load::Diagnostic;
pub use model::{Capability, Registry};

use policy::Effect;

/// Where the inputs of a registry live.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The crate (and repository) root: paths in messages are relative to it.
    pub root: PathBuf,
    /// The manifest folder, normally `<root>/capabilities`.
    pub capabilities: PathBuf,
    /// The handler folder, normally `<root>/core/src/handlers`; `None` skips the handler check.
    pub handlers: Option<PathBuf>,
    /// The version the projections announce.
    pub version: String,
}

impl Inputs {
    /// The standard layout under a crate root.
    pub fn standard(root: &Path, version: &str) -> Inputs {
        Inputs {
            root: root.to_path_buf(),
            capabilities: root.join("capabilities"),
            handlers: Some(root.join("core/src/handlers")),
            version: version.to_string(),
        }
    }
}

/// The cargo feature (as the build script sees it) that adds the conformance fixtures.
pub const FIXTURES_FEATURE: &str = "CARGO_FEATURE_CONFORMANCE_FIXTURES";
/// The fixture folder the feature adds: its `capabilities/*.yaml` join the registry.
pub const FIXTURES_DIR: &str = "tests/fixtures/mcp-conformance";
/// Where the fixtures' handler modules live: in the crate's own sources, declared under the
/// feature in `core/src/handlers/mod.rs` (never a `#[path]` into `tests/`).
pub const FIXTURES_HANDLERS: &str = "core/src/handlers/fixtures";

/// Loads and checks the whole registry; every problem is reported, sorted by file.
pub fn load_registry(inputs: &Inputs) -> Result<Registry, Vec<Diagnostic>> {
    load_registry_with(inputs, &[])
}

/// The handler folders of a registry: the standard one, then each extra folder's
/// `handlers/`, or [`FIXTURES_HANDLERS`] for one that has none (the conformance fixtures keep
/// their handlers in the crate's sources); empty when the inputs skip the handler check.
fn handler_dirs(inputs: &Inputs, extra: &[PathBuf]) -> Vec<PathBuf> {
    match &inputs.handlers {
        Some(dir) => std::iter::once(dir.clone())
            .chain(extra.iter().map(|e| {
                let own = e.join("handlers");
                if own.is_dir() {
                    own
                } else {
                    inputs.root.join(FIXTURES_HANDLERS)
                }
            }))
            .collect(),
        None => Vec::new(),
    }
}

/// [`load_registry`] with extra folders, each holding `capabilities/` (manifests that join
/// the registry) and `handlers/` (their handler modules; the conformance fixtures' are under
/// [`FIXTURES_HANDLERS`]).
pub fn load_registry_with(inputs: &Inputs, extra: &[PathBuf]) -> Result<Registry, Vec<Diagnostic>> {
    let mut caps = load_parallel(&inputs.capabilities, &inputs.root)?;
    for dir in extra {
        caps.extend(load_parallel(&dir.join("capabilities"), &inputs.root)?);
    }
    caps.sort_by(|a, b| a.id.cmp(&b.id));
    let diags = check::check_registry(&caps, &handler_dirs(inputs, extra), &inputs.root);
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Registry {
        capabilities: caps,
        version: inputs.version.clone(),
    })
}

/// Every manifest of `dir`, loaded like [`load::load_dir`] (same order, same diagnostics) but
/// spread over the machine's cores: parsing, schema validation and compiling each manifest's
/// own input and output schemas is independent per file.
fn load_parallel(dir: &Path, root: &Path) -> Result<Vec<Capability>, Vec<Diagnostic>> {
    let files = load::manifest_files(dir).map_err(|e| {
        vec![Diagnostic {
            file: load::display_path(dir, root),
            line: None,
            pointer: String::new(),
            message: format!("cannot list manifests: {e}"),
        }]
    })?;
    let load_one = |file: &PathBuf| -> Result<Capability, Vec<Diagnostic>> {
        let rel = load::display_path(file, root);
        match std::fs::read_to_string(file) {
            Ok(text) => load::load_manifest(&text, &rel),
            Err(e) => Err(vec![Diagnostic {
                file: rel,
                line: None,
                pointer: String::new(),
                message: format!("cannot read: {e}"),
            }]),
        }
    };
    let results = parallel_map(&files, load_one);
    let mut caps = Vec::with_capacity(results.len());
    let mut diags = Vec::new();
    for r in results {
        match r {
            Ok(c) => caps.push(c),
            Err(mut d) => diags.append(&mut d),
        }
    }
    if diags.is_empty() {
        Ok(caps)
    } else {
        Err(diags)
    }
}

/// `items.iter().map(f)` in order, over up to eight scoped threads (one per core); runs inline
/// for small inputs, where starting threads costs more than it saves.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    if threads == 1 || items.len() < 32 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a generation thread panicked"))
            .collect()
    })
}

/// The committed projections, as `(file name under generated/, content)`, sorted by name.
/// The contract lock comes first: its digest is published by the reference, OpenAPI and the
/// card, and is itself computed from per-capability renderings that do not include it.
/// Returns the projections and the digest.
pub fn committed_projections(reg: &Registry) -> (Vec<(&'static str, String)>, String) {
    let p = projections(reg);
    (p.committed, p.digest)
}

/// The narrowed effect profiles' documents, `(name, content)`: what a process started with
/// `--allow-effects read` or `process_state` serves for every toolset (the binary renders them
/// from [`TEMPLATES`]; these are for reading and the fixture snapshots).
pub fn narrowed(reg: &Registry) -> Vec<(String, String)> {
    let p = projections(reg);
    let tools = project::mcp_tools::Tools::new(reg);
    let operations = project::openapi::Operations::new(reg);
    let mut out = vec![(
        "cockpit.json".to_string(),
        project::cockpit::render(reg, Effect::RepositoryWrite),
    )];
    for effect in [Effect::Read, Effect::ProcessState] {
        let e = effect.as_str();
        out.push((format!("mcp-tools.{e}.json"), tools.render(effect)));
        out.push((
            format!("openapi.{e}.json"),
            operations.render(reg, &p.digest, effect),
        ));
        out.push((
            format!("server-card.{e}.json"),
            project::server_card::render_profile(reg, &p.digest, &tools, effect),
        ));
        out.push((
            format!("cockpit.{e}.json"),
            project::cockpit::render(reg, effect),
        ));
    }
    out
}

/// The OUT_DIR file of the templates the binary renders its profile's documents from.
pub const TEMPLATES: &str = "templates.rs";

/// Every projection of a registry.
#[derive(Debug, Clone)]
pub struct Projections {
    /// The committed files (every effect, every toolset): `(file name under generated/,
    /// content)`.
    pub committed: Vec<(&'static str, String)>,
    /// The templates of every served document ([`TEMPLATES`]), as Rust source.
    pub templates: String,
    /// The server digest.
    pub digest: String,
}

/// Renders every projection. Each tool and each operation is rendered once; the contract lock
/// hashes those, and a profile's document borrows the ones it serves, so a narrowed profile
/// costs its serialization only.
pub fn projections(reg: &Registry) -> Projections {
    let tools = project::mcp_tools::Tools::new(reg);
    let operations = project::openapi::Operations::new(reg);
    let (lock, digest) = project::contract::render_with(reg, &tools, &operations);
    let full = Effect::RepositoryWrite;
    let committed = vec![
        ("capabilities.md", project::reference::render(reg, &digest)),
        ("cli.md", project::cli_reference::render(reg)),
        ("contract.lock", lock),
        ("mcp-tools.json", tools.render(full)),
        ("openapi.json", operations.render(reg, &digest, full)),
        (
            "server-card.json",
            project::server_card::render_profile(reg, &digest, &tools, full),
        ),
    ];
    // Per effect profile, weakest first; each template marks its per-toolset parts.
    let per_effect = |f: &dyn Fn(Effect) -> Vec<project::Seg>| -> String {
        let each: Vec<String> = Effect::ALL
            .iter()
            .map(|e| project::template_rust(&f(*e)))
            .collect();
        format!("[{}]", each.join(",\n"))
    };
    let templates = format!(
        "// {GENERATED_BY}\n\
         /// The initialize era's `tools/list`, per effect profile.\n\
         pub const TOOLS_LEGACY: [Template; 3] = {};\n\
         /// The 2026-07-28 `tools/list`, per effect profile.\n\
         pub const TOOLS_MODERN: [Template; 3] = {};\n\
         /// The OpenAPI document, per effect profile.\n\
         pub const OPENAPI: [Template; 3] = {};\n\
         /// The server card, per effect profile.\n\
         pub const SERVER_CARD: [Template; 3] = {};\n\
         /// The cockpit's surface, per effect profile.\n\
         pub const COCKPIT: [Template; 3] = {};\n",
        per_effect(&|e| tools.legacy_wire(e)),
        per_effect(&|e| tools.modern_wire(e, &reg.version)),
        per_effect(&|e| operations.template(reg, &digest, e)),
        per_effect(&|e| project::server_card::template(reg, &digest, &tools, e)),
        per_effect(&|e| project::cockpit::template(reg, e)),
        GENERATED_BY = project::GENERATED_BY,
    );
    Projections {
        committed,
        templates,
        digest,
    }
}

/// Writes `content` to `path` only when it differs (stable mtimes; prost-build's rule).
/// Returns whether the file was written.
pub fn write_if_changed(path: &Path, content: &str) -> std::io::Result<bool> {
    if std::fs::read(path)
        .map(|old| old == content.as_bytes())
        .unwrap_or(false)
    {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content)?;
    Ok(true)
}

/// Formats diagnostics as one build error message.
pub fn report(diags: &[Diagnostic]) -> String {
    let mut s = format!(
        "seneschal: the capability registry has {} problem(s):\n",
        diags.len()
    );
    for d in diags {
        s.push_str(&format!("  {d}\n"));
    }
    s
}

/// Everything the build produces from one registry.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// The checked registry.
    pub registry: Registry,
    /// Committed projections: `(file name under generated/, content)`.
    pub committed: Vec<(&'static str, String)>,
    /// Files for OUT_DIR only: the Rust registry, the templates of every served document
    /// ([`TEMPLATES`]) and the digest.
    pub out_dir: Vec<(&'static str, String)>,
}

/// Runs the whole pipeline (load, check, render) without writing anything.
pub fn generate(inputs: &Inputs) -> Result<Outputs, Vec<Diagnostic>> {
    generate_with(inputs, &[])
}

/// [`generate`] with the extra folders of [`load_registry_with`].
pub fn generate_with(inputs: &Inputs, extra: &[PathBuf]) -> Result<Outputs, Vec<Diagnostic>> {
    let registry = load_registry_with(inputs, extra)?;
    // The projections (JSON, Markdown, the hashed lock, every profile's surfaces) do not
    // depend on the Rust projection: render them on a thread of their own while typify runs on
    // the others.
    let (registry_rs, rendered) = std::thread::scope(|scope| {
        let committed = scope.spawn(|| projections(&registry));
        let rust = project::rust::render_registry(&registry, &inputs.root);
        (
            rust,
            committed.join().expect("the projection thread panicked"),
        )
    });
    let registry_rs = registry_rs?;
    project::rust::check_handler_modules(&registry, &handler_dirs(inputs, extra), &inputs.root)?;
    let mut out_dir = vec![("registry.rs", registry_rs)];
    out_dir.push((TEMPLATES, rendered.templates));
    out_dir.push(("digest.txt", rendered.digest));
    Ok(Outputs {
        registry,
        committed: rendered.committed,
        out_dir,
    })
}

/// The environment variable that marks a CI build (CI services set `CI=true`).
pub const CI: &str = "CI";

/// Whether a build writes `generated/` (it always writes OUT_DIR): only a local build from the
/// repository. Not from a package (`packaged`), not with the conformance fixtures (the
/// committed projections never hold fixtures), and not under [`CI`], where the committed
/// files are what `tests/it/freshness.rs` and `generate --check` compare the build with: a build
/// that rewrote them first would make that comparison unable to fail.
pub fn writes_generated(packaged: bool, fixtures: bool, ci: bool) -> bool {
    !packaged && !fixtures && !ci
}

/// What build.rs does: print the rerun triggers, generate, write OUT_DIR files, and write
/// `generated/` when [`writes_generated`] says so. With the `conformance-fixtures` feature
/// the manifests of [`FIXTURES_DIR`] join the registry.
pub fn build(root: &Path, out_dir: &Path, version: &str) -> Result<(), String> {
    let inputs = Inputs::standard(root, version);
    let extra: Vec<PathBuf> = match std::env::var_os(FIXTURES_FEATURE) {
        Some(_) => vec![root.join(FIXTURES_DIR)],
        None => Vec::new(),
    };
    // Precise triggers: printing any of these switches off cargo's whole-package scan.
    let mut triggers = vec![
        inputs.capabilities.clone(),
        root.join("share/schemas/capability.schema.json"),
        root.join("core/src/handlers"),
    ];
    if let Ok(files) = load::manifest_files(&inputs.capabilities) {
        triggers.extend(files);
    }
    for dir in &extra {
        // Their handlers are under core/src/handlers (FIXTURES_HANDLERS), a trigger already.
        triggers.push(dir.join("capabilities"));
        if let Ok(files) = load::manifest_files(&dir.join("capabilities")) {
            triggers.extend(files);
        }
    }
    // Print the triggers before any error, so a fixed manifest reruns the script.
    for t in &triggers {
        println!("cargo:rerun-if-changed={}", t.display());
    }
    println!("cargo:rerun-if-env-changed={CI}");
    let outputs = generate_with(&inputs, &extra).map_err(|d| report(&d))?;
    for c in &outputs.registry.capabilities {
        if let Some(content) = &c.content {
            println!("cargo:rerun-if-changed={}", root.join(content).display());
        }
    }
    let io = |e: std::io::Error| format!("seneschal: cannot write a projection: {e}");
    for (name, content) in &outputs.out_dir {
        write_if_changed(&out_dir.join(name), content).map_err(io)?;
    }
    let committed = writes_generated(
        root.join(".cargo_vcs_info.json").exists(),
        !extra.is_empty(),
        std::env::var_os(CI).is_some(),
    );
    for (name, content) in &outputs.committed {
        write_if_changed(&out_dir.join(name), content).map_err(io)?;
        if committed {
            write_if_changed(&root.join("generated").join(name), content).map_err(io)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_local_build_from_the_repository_writes_generated() {
        assert!(writes_generated(false, false, false));
        assert!(
            !writes_generated(false, false, true),
            "a CI build wrote generated/"
        );
        assert!(
            !writes_generated(true, false, false),
            "a packaged build wrote generated/"
        );
        assert!(
            !writes_generated(false, true, false),
            "a fixture build wrote generated/"
        );
    }

    #[test]
    fn parallel_map_keeps_the_order_of_its_input() {
        let items: Vec<usize> = (0..1000).collect();
        let doubled = parallel_map(&items, |i| i * 2);
        assert_eq!(doubled, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        let few: Vec<usize> = (0..3).collect();
        assert_eq!(parallel_map(&few, |i| i + 1), vec![1, 2, 3]);
    }

    #[test]
    fn parallel_loading_reports_what_serial_loading_reports() {
        let dir = std::env::temp_dir().join(format!("seneschal-load-{}", std::process::id()));
        let caps = dir.join("capabilities");
        std::fs::create_dir_all(&caps).unwrap();
        // Enough files for the threaded path; each is broken in its own way.
        for i in 0..40 {
            let text = match i % 3 {
                0 => format!("id: bad{i}\nkind: [unclosed\n"),
                1 => format!("id: x.cap{i}\nkind: query\n"),
                _ => "- just\n- a list\n".to_string(),
            };
            std::fs::write(caps.join(format!("c{i:02}.yaml")), text).unwrap();
        }
        let serial = load::load_dir(&caps, &dir).unwrap_err();
        let parallel = load_parallel(&caps, &dir).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(serial.len() >= 40, "{serial:?}");
        assert_eq!(
            parallel.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            serial.iter().map(|d| d.to_string()).collect::<Vec<_>>()
        );
    }
}
