//! Adding a capability is one manifest plus one handler file and its `mod` line: this test
//! copies the workspace, adds them as README "Adding a capability" says (bumping the version
//! as its last step asks), builds it with cargo, and checks that the new capability appears in
//! every projection and runs through `call` and its own CLI path, with no other file edited;
//! without the `mod` line the build fails naming the line to add. It also proves the build
//! script's rerun triggers: a no-op build does not rerun build.rs; touching one manifest does
//! (with a misspelled keyword, reported first, at its line).
//!
//! The same copy and the same build hold two capabilities written by `seneschal new` (one in a
//! new handler group, one appended to an existing group), untouched: they answer over the
//! command line, MCP and HTTP. The copy is compiled once for both tests (every other build
//! stops in build.rs or has nothing to do), in a target folder kept between runs
//! (`target/fixture-registry/target`), so a rerun compiles only seneschal, once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fenced block of `lang` in README "Adding a capability", as written (without the list
/// item's indentation): the test walks the README, not a copy of it.
fn readme_block(lang: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = readme
        .split("\n## Adding a capability\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has an \"Adding a capability\" section");
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).expect("the section's block") + fence.len();
    let body = &section[start..];
    let end = body.find("```").expect("a closed block");
    let block = &body[..end];
    let indent = block
        .lines()
        .next()
        .map_or(0, |l| l.len() - l.trim_start().len());
    block
        .lines()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

const LIAR: &str = r#"id: demo.liar
kind: query
title: A liar
description: Declared read, but writes a file.
handler: demo::liar
effect: read
disclosure: none
determinism: input
stability: stable
toolset: files
input: { type: object, additionalProperties: false, properties: {} }
output: { type: object, additionalProperties: false, required: [ok], properties: { ok: { type: boolean } } }
expose: { mcp_tool: demo_liar }
review: Lie
examples:
  - title: it writes
    input: {}
    outcome: ok
"#;

const COUNTER: &str = r#"id: demo.counter
kind: query
title: A counter
description: Declared read (so idempotent), but appends a line on every call.
handler: demo::counter
effect: read
disclosure: none
determinism: input
stability: stable
toolset: files
input: { type: object, additionalProperties: false, properties: {} }
output: { type: object, additionalProperties: false, required: [ok], properties: { ok: { type: boolean } } }
expose: { mcp_tool: demo_counter }
review: Count
examples:
  - title: it appends
    input: {}
    outcome: ok
"#;

const LYING_HANDLERS: &str = r#"
/// `demo.liar`: writes a file although it is declared `read`.
pub fn liar(ctx: &Call, _input: crate::registry::types::demo_liar::Input) -> Result<crate::registry::types::demo_liar::Output, CapabilityError> {
    std::fs::write(ctx.repo.join("lie.txt"), "written by a read").map_err(|e| CapabilityError::internal(e.to_string()))?;
    Ok(crate::registry::types::demo_liar::Output { ok: true })
}

/// `demo.counter`: appends on every call although it is declared idempotent.
pub fn counter(ctx: &Call, _input: crate::registry::types::demo_counter::Input) -> Result<crate::registry::types::demo_counter::Output, CapabilityError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(ctx.repo.join("counter.txt")).map_err(|e| CapabilityError::internal(e.to_string()))?;
    writeln!(f, "one more").map_err(|e| CapabilityError::internal(e.to_string()))?;
    Ok(crate::registry::types::demo_counter::Output { ok: true })
}
"#;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn cargo(ws: &Path, target: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    Command::new(cargo)
        .args(args)
        .current_dir(ws)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTC_WRAPPER")
        // A developer's local build, which rewrites generated/ (a CI build leaves it alone).
        .env_remove("CI")
        .output()
        .expect("cargo runs")
}

fn tail(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.trim_start().starts_with("Running") && !l.trim_start().starts_with("Fresh"))
        .collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn build_script_ran(o: &Output) -> bool {
    let err = String::from_utf8_lossy(&o.stderr);
    err.lines().any(|l| {
        l.contains("Running") && l.contains("seneschal-") && l.contains("build-script-build")
    })
}

/// The copied workspace, built once for both tests: the README's capability (and its first
/// build, refused for the missing `mod` line), two scaffolds, and the version bump.
struct Prepared {
    ws: PathBuf,
    target: PathBuf,
    /// The binary of the first successful build, kept aside: the README test rebuilds.
    first: PathBuf,
    /// The tail of the build refused for the missing `mod` line.
    refused: String,
    /// Whether the first successful build ran build.rs.
    ran_build_script: bool,
    /// What `seneschal new` printed, per scaffold.
    scaffolded: Vec<String>,
    /// The version the copy was bumped to.
    version: String,
}

/// The scaffolds: `(id, effect)`; `notes` is a new group, `repo` an existing one.
const SCAFFOLDS: [(&str, &str); 2] = [("notes.count", "process_state"), ("repo.summary", "read")];

fn prepared() -> std::sync::MutexGuard<'static, Option<Prepared>> {
    static STATE: std::sync::Mutex<Option<Prepared>> = std::sync::Mutex::new(None);
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(prepare());
    }
    guard
}

/// The version after a patch bump (what `contract check` asks of a new capability on 0.x,
/// and the least bump there is).
fn bumped(version: &str) -> String {
    let mut parts: Vec<u64> = version.split('.').map(|p| p.parse().unwrap()).collect();
    parts[2] += 1;
    format!("{}.{}.{}", parts[0], parts[1], parts[2])
}

fn prepare() -> Prepared {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let base = root.join("target/fixture-registry");
    let ws = base.join("ws");
    let target = base.join("target");
    if ws.exists() {
        std::fs::remove_dir_all(&ws).unwrap();
    }
    for dir in [
        "src",
        "model",
        "access",
        "knowledge",
        "core",
        "mcp",
        "http",
        "devtools",
        "capabilities",
        "share",
        "generated",
        "docs",
        "vendor",
    ] {
        copy_dir(&root.join(dir), &ws.join(dir));
    }
    copy_dir(&root.join("codegen/src"), &ws.join("codegen/src"));
    for file in ["Cargo.toml", "Cargo.lock", "codegen/Cargo.toml"] {
        std::fs::copy(root.join(file), ws.join(file)).unwrap();
    }
    // Two scaffolds, untouched.
    let mut scaffolded = Vec::new();
    for (id, effect) in SCAFFOLDS {
        let o = Command::new(crate::support::bin())
            .args(["new", id, "--effect", effect])
            .current_dir(ws.join("src"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "new {id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        scaffolded.push(String::from_utf8_lossy(&o.stdout).into_owned());
    }
    // The developer's whole change: one manifest, one handler file, and its line in the
    // handler module list, which the build asks for when it is missing.
    std::fs::write(ws.join("capabilities/demo.echo.yaml"), readme_block("yaml")).unwrap();
    // Two more in the same group, built in the same build, for the conformance harness:
    // one declared `read` that writes a file, one declared idempotent that appends.
    std::fs::write(ws.join("capabilities/demo.liar.yaml"), LIAR).unwrap();
    std::fs::write(ws.join("capabilities/demo.counter.yaml"), COUNTER).unwrap();
    std::fs::write(
        ws.join("core/src/handlers/demo.rs"),
        format!("{}{LYING_HANDLERS}", readme_block("rust")),
    )
    .unwrap();
    // The README's last step: the version bump `contract check` asks for.
    let manifest = std::fs::read_to_string(ws.join("Cargo.toml")).unwrap();
    let old = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("the package version")
        .to_string();
    let version = bumped(&old);
    std::fs::write(
        ws.join("Cargo.toml"),
        manifest.replacen(
            &format!("version = \"{old}\""),
            &format!("version = \"{version}\""),
            1,
        ),
    )
    .unwrap();
    let o = cargo(&ws, &target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(
        !o.status.success(),
        "a handler module no line declares was built"
    );
    let refused = tail(&o);
    let mod_rs = std::fs::read_to_string(ws.join("core/src/handlers/mod.rs")).unwrap();
    std::fs::write(
        ws.join("core/src/handlers/mod.rs"),
        mod_rs.replacen("pub mod files;", "pub mod demo;\npub mod files;", 1),
    )
    .unwrap();
    let o = cargo(
        &ws,
        &target,
        &["build", "--offline", "-v", "--bin", "seneschal"],
    );
    assert!(o.status.success(), "build failed:\n{}", tail(&o));
    let first = base.join("seneschal-first");
    std::fs::copy(target.join("debug/seneschal"), &first).unwrap();
    Prepared {
        ws,
        target,
        first,
        refused,
        ran_build_script: build_script_ran(&o),
        scaffolded,
        version,
    }
}

#[test]
fn one_manifest_and_one_handler_make_a_working_capability() {
    let guard = prepared();
    let p = guard.as_ref().expect("prepared");
    let (ws, target) = (&p.ws, &p.target);
    assert!(
        p.refused.contains("core/src/handlers/mod.rs:")
            && p.refused.contains("handler module `demo` of `demo.counter` (capabilities/demo.counter.yaml) and 2 more capabilities is not declared: add the line `pub mod demo;`"),
        "{}",
        p.refused
    );
    assert!(p.ran_build_script, "the first build must run build.rs");

    // Every projection shows the new capability.
    let generated = |name: &str| std::fs::read_to_string(ws.join("generated").join(name)).unwrap();
    assert!(generated("openapi.json").contains("\"/api/v1/demo/echo\""));
    assert!(generated("openapi.json").contains("\"operationId\": \"demo.echo\""));
    assert!(generated("capabilities.md").contains("## `demo.echo` — Echo a word"));
    assert!(generated("mcp-tools.json").contains("\"name\": \"demo_echo\""));
    assert!(generated("server-card.json").contains("\"demo_echo\""));

    let bin = target.join("debug/seneschal");
    let run = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(ws)
            .output()
            .expect("runs")
    };
    let list: serde_json::Value =
        serde_json::from_slice(&run(&["capabilities", "list"]).stdout).unwrap();
    assert!(list["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["id"] == "demo.echo"));
    let o = run(&[
        "call",
        "demo.echo",
        "--input",
        r#"{"word": "hi", "times": 3}"#,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap(),
        serde_json::json!({"echo": "hi hi hi"})
    );
    let o = run(&["demo", "echo", "--word", "yo", "--times", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap(),
        serde_json::json!({"echo": "yo yo"})
    );
    // The schema's maximum is enforced at run time even though typify ignores it.
    let o = run(&["demo", "echo", "--word", "yo", "--times", "9"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("/times"));
    let o = run(&["demo", "echo", "--word", "yo", "--times", "two"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["generate", "--check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The version bump made the release gate pass, as it will in CI.
    let o = run(&["contract", "check"]);
    assert!(
        o.status.success(),
        "version {}: {}",
        p.version,
        String::from_utf8_lossy(&o.stderr)
    );

    // A no-op build does not rerun build.rs.
    let o = cargo(
        ws,
        target,
        &["build", "--offline", "-v", "--bin", "seneschal"],
    );
    assert!(o.status.success());
    assert!(
        !build_script_ran(&o),
        "a no-op build reran build.rs:\n{}",
        tail(&o)
    );

    // The conformance harness catches capabilities whose behaviour contradicts their claims.
    let o = run(&[
        "--json",
        "conformance",
        "--fixture",
        ws.to_str().unwrap(),
        "--only",
        "demo.liar",
        "--only",
        "demo.counter",
        "--only",
        "demo.echo",
    ]);
    assert_eq!(
        o.status.code(),
        Some(25),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = |id: &str, check: &str| -> serde_json::Value {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["capability"] == id && r["check"] == check)
            .unwrap()
            .clone()
    };
    assert_eq!(row("demo.liar", "claims")["status"], "FAIL");
    assert!(
        row("demo.liar", "claims")["evidence"]
            .as_str()
            .unwrap()
            .contains("readOnlyHint, but example `it writes` changed: tree: added lie.txt"),
        "{}",
        row("demo.liar", "claims")
    );
    assert_eq!(row("demo.counter", "repeat")["status"], "FAIL");
    assert!(
        row("demo.counter", "repeat")["evidence"]
            .as_str()
            .unwrap()
            .contains("tree: changed counter.txt"),
        "{}",
        row("demo.counter", "repeat")
    );
    assert_eq!(
        row("demo.echo", "claims")["status"],
        "pass",
        "an honest capability passes beside the liars"
    );

    // Touching one manifest reruns build.rs: here with a misspelled keyword, which the build
    // reports first, at its line, with the keyword it was meant to be.
    let manifest = readme_block("yaml");
    let misspelled = manifest.replacen("maximum: 3", "maximun: 3", 1);
    assert_ne!(
        manifest, misspelled,
        "the README's manifest has a `maximum`"
    );
    std::fs::write(ws.join("capabilities/demo.echo.yaml"), &misspelled).unwrap();
    let o = cargo(ws, target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let line = misspelled
        .lines()
        .position(|l| l.contains("maximun"))
        .unwrap()
        + 1;
    let first_error = err
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_default();
    assert!(
        first_error.contains("the capability registry has 1 problem(s)"),
        "the build's message is not its first error:\n{err}"
    );
    assert!(
        err.contains(&format!("capabilities/demo.echo.yaml:{line}: /input/properties/times/maximun: `maximun` is not a JSON Schema keyword: did you mean `maximum`?")),
        "{err}"
    );
    std::fs::write(ws.join("capabilities/demo.echo.yaml"), &manifest).unwrap();

    // A manifest whose handler is missing fails the build and names the manifest.
    std::fs::remove_file(ws.join("core/src/handlers/demo.rs")).unwrap();
    let o = cargo(ws, target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("capabilities/demo.echo.yaml:5: /handler: handler `demo::echo`"),
        "{err}"
    );
}

/// Two capabilities written by `seneschal new`, untouched (one in a new handler group, one
/// appended to an existing group), build and answer over the command line, MCP and HTTP.
#[test]
fn scaffolded_capabilities_answer_on_every_transport() {
    let guard = prepared();
    let p = guard.as_ref().expect("prepared");
    assert!(
        p.scaffolded[0].contains("created capabilities/notes.count.yaml")
            && p.scaffolded[0].contains("created core/src/handlers/notes.rs")
            && p.scaffolded[0].contains("changed core/src/handlers/mod.rs"),
        "{}",
        p.scaffolded[0]
    );
    assert!(
        p.scaffolded[1].contains("changed core/src/handlers/repo.rs"),
        "{}",
        p.scaffolded[1]
    );
    // The scaffold's handlers are already in rustfmt's layout (`cargo fmt --check` passes).
    let o = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .args([
            p.ws.join("core/src/handlers/notes.rs"),
            p.ws.join("core/src/handlers/repo.rs"),
        ])
        .output()
        .expect("rustfmt runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // The scaffold's generated types are in plain sight.
    let o = Command::new(&p.first)
        .args(["capabilities", "show", "--id", "notes.count", "--json"])
        .current_dir(&p.ws)
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        shown["rust_types"]
            .as_str()
            .is_some_and(|t| t.contains("pub struct Output {\n    pub ok: bool,\n}")),
        "{shown}"
    );
    let ok = serde_json::json!({"ok": true});
    for (id, effect) in SCAFFOLDS {
        let cli: Vec<&str> = id.split('.').collect();
        let o = Command::new(&p.first)
            .args(&cli)
            .current_dir(&p.ws)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap(),
            ok
        );

        let tool = id.replace('.', "_");
        assert_eq!(mcp_call(&p.first, &p.ws, &tool), ok, "{id} over MCP");

        let method = if effect == "read" { "GET" } else { "POST" };
        let path = format!("/api/v1/{}", id.replace('.', "/"));
        let (status, body) = http_call(&p.first, &p.ws, method, &path);
        assert_eq!(status, 200, "{id} over HTTP: {body}");
        assert_eq!(body, ok, "{id} over HTTP");
    }
}

/// Calls one tool over MCP stdio (initialize, initialized, tools/call) with `bin`.
fn mcp_call(bin: &Path, dir: &Path, tool: &str) -> serde_json::Value {
    use std::io::{BufRead, Write};
    let mut child = Command::new(bin)
        .arg("mcp")
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "add_capability", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}}),
    ];
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    let mut answer = serde_json::Value::Null;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["id"] == 2 {
            answer = v;
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["structuredContent"].clone()
}

/// One HTTP request to `bin serve` on a loopback port: `(status, JSON body)`.
fn http_call(bin: &Path, dir: &Path, method: &str, path: &str) -> (u16, serde_json::Value) {
    use std::io::{BufRead, Read, Write};
    let mut child = Command::new(bin)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let addr = banner
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {banner:?}"))
        .to_string();
    let body = if method == "POST" { "{}" } else { "" };
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = conn.read_to_end(&mut raw);
    drop(child.stdin.take());
    let _ = child.wait();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status: u16 = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (start, end) = (text.find('{'), text.rfind('}'));
    let json = match (start, end) {
        (Some(a), Some(b)) if a < b => serde_json::from_str(&text[a..=b]).unwrap_or_default(),
        _ => serde_json::Value::Null,
    };
    (status, json)
}
