//! Adding a capability is one manifest plus one handler file and its `mod` line: this test
//! copies the workspace, adds them, builds it with cargo, and checks that the new capability
//! appears in every projection and runs through `call` and its own CLI path, with no other
//! file edited; without the `mod` line the build fails naming the line to add. It also proves
//! the build script's rerun triggers: a no-op build does not rerun build.rs; touching one
//! manifest does.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MANIFEST: &str = r#"id: demo.echo
kind: query
title: Echo a word
description: Returns the word it was given, repeated.
handler: demo::echo
effect: read
disclosure: none
determinism: input
stability: stable
tags: [demo]
input:
  type: object
  additionalProperties: false
  required: [word]
  properties:
    word: { type: string, description: The word to echo. }
    times: { type: integer, minimum: 1, maximum: 3, description: How many times. }
output:
  type: object
  additionalProperties: false
  required: [echo]
  properties:
    echo: { type: string }
errors: []
expose:
  mcp_tool: demo_echo
  http: { method: GET, path: /api/v1/demo/echo }
  cli: [demo, echo]
review: 'Echo "{word}"'
examples:
  - title: one word twice
    input: { word: hello, times: 2 }
    outcome: ok
"#;

const HANDLER: &str = r#"//! The demo group: a handler added by this test.

use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::types::demo_echo::{Input, Output};

/// `demo.echo`
pub fn echo(_ctx: &Context, input: Input) -> Result<Output, CapabilityError> {
    let times = input.times.map_or(1, |t| t.get() as usize);
    Ok(Output { echo: vec![input.word.as_str(); times].join(" ") })
}
"#;

const LIAR: &str = r#"id: demo.liar
kind: query
title: A liar
description: Declared read, but writes a file.
handler: demo::liar
effect: read
disclosure: none
determinism: input
stability: stable
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
pub fn liar(ctx: &Context, _input: crate::registry::types::demo_liar::Input) -> Result<crate::registry::types::demo_liar::Output, CapabilityError> {
    std::fs::write(ctx.repo.join("lie.txt"), "written by a read").map_err(|e| CapabilityError::internal(e.to_string()))?;
    Ok(crate::registry::types::demo_liar::Output { ok: true })
}

/// `demo.counter`: appends on every call although it is declared idempotent.
pub fn counter(ctx: &Context, _input: crate::registry::types::demo_counter::Input) -> Result<crate::registry::types::demo_counter::Output, CapabilityError> {
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

#[test]
fn one_manifest_and_one_handler_make_a_working_capability() {
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
        "capabilities",
        "share",
        "generated",
        "docs",
        "vendor",
    ] {
        copy_dir(&root.join(dir), &ws.join(dir));
    }
    copy_dir(&root.join("codegen/src"), &ws.join("codegen/src"));
    for file in ["Cargo.toml", "Cargo.lock", "build.rs", "codegen/Cargo.toml"] {
        std::fs::copy(root.join(file), ws.join(file)).unwrap();
    }
    // The developer's whole change: one manifest, one handler file, and its line in the
    // handler module list, which the build asks for when it is missing.
    std::fs::write(ws.join("capabilities/demo.echo.yaml"), MANIFEST).unwrap();
    std::fs::write(ws.join("src/handlers/demo.rs"), HANDLER).unwrap();
    let o = cargo(&ws, &target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(
        !o.status.success(),
        "a handler module no line declares was built"
    );
    assert!(
        tail(&o).contains("src/handlers/mod.rs:")
            && tail(&o).contains("handler module `demo` of `demo.echo` (capabilities/demo.echo.yaml) is not declared: add the line `pub mod demo;`"),
        "{}",
        tail(&o)
    );
    let mod_rs = std::fs::read_to_string(ws.join("src/handlers/mod.rs")).unwrap();
    std::fs::write(
        ws.join("src/handlers/mod.rs"),
        mod_rs.replacen("pub mod files;", "pub mod demo;\npub mod files;", 1),
    )
    .unwrap();

    let o = cargo(
        &ws,
        &target,
        &["build", "--offline", "-v", "--bin", "seneschal"],
    );
    assert!(o.status.success(), "build failed:\n{}", tail(&o));
    assert!(build_script_ran(&o), "the first build must run build.rs");

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
            .current_dir(&ws)
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

    // A no-op build does not rerun build.rs.
    let o = cargo(
        &ws,
        &target,
        &["build", "--offline", "-v", "--bin", "seneschal"],
    );
    assert!(o.status.success());
    assert!(
        !build_script_ran(&o),
        "a no-op build reran build.rs:\n{}",
        tail(&o)
    );

    // Touching one manifest does.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(ws.join("capabilities/demo.echo.yaml"), MANIFEST).unwrap();
    let o = cargo(
        &ws,
        &target,
        &["build", "--offline", "-v", "--bin", "seneschal"],
    );
    assert!(o.status.success());
    assert!(
        build_script_ran(&o),
        "touching a manifest did not rerun build.rs"
    );

    // The conformance harness catches capabilities whose behaviour contradicts their claims:
    // one declared `read` that writes a file, one declared idempotent that appends.
    std::fs::write(ws.join("capabilities/demo.liar.yaml"), LIAR).unwrap();
    std::fs::write(ws.join("capabilities/demo.counter.yaml"), COUNTER).unwrap();
    std::fs::write(
        ws.join("src/handlers/demo.rs"),
        format!("{HANDLER}{LYING_HANDLERS}"),
    )
    .unwrap();
    let o = cargo(&ws, &target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(o.status.success(), "build failed:\n{}", tail(&o));
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

    // A manifest whose handler is missing fails the build and names the manifest.
    std::fs::remove_file(ws.join("src/handlers/demo.rs")).unwrap();
    let o = cargo(&ws, &target, &["build", "--offline", "--bin", "seneschal"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("capabilities/demo.echo.yaml: /handler: handler `demo::echo`"),
        "{err}"
    );
}
