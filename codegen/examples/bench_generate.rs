//! Benchmark of the build-time generation step on a synthetic registry.
//!
//! `cargo run --release -p seneschal-codegen --example bench_generate -- 1000` writes 1,000
//! synthetic manifests (one handler file with their functions, and its `mod` line) into a temporary folder,
//! then times the whole pipeline — load, schema validation, invariant checks, typify, dispatch
//! and every projection — and prints the median of several runs. With `--write DIR` it only
//! writes the synthetic registry into DIR (used to measure compile-time growth).

use std::path::Path;
use std::time::Instant;

fn manifest(i: usize) -> String {
    format!(
        r#"id: synth.cap{i:04}
kind: query
title: Synthetic capability {i}
description: A synthetic read capability number {i} for the generation benchmark.
handler: synth::cap{i:04}
effect: {effect}
disclosure: none
determinism: input
stability: stable
toolset: files
tags: [synth]
input:
  type: object
  additionalProperties: false
  required: [name]
  properties:
    name: {{ type: string, description: A name. }}
    limit: {{ type: integer, minimum: 1, maximum: 100 }}
    mode: {{ type: string, enum: [fast, slow] }}
    flags: {{ type: array, items: {{ type: string }} }}
output:
  type: object
  additionalProperties: false
  required: [items]
  properties:
    items:
      type: array
      items:
        type: object
        additionalProperties: false
        required: [id, score]
        properties:
          id: {{ type: string }}
          score: {{ type: number }}
          note: {{ type: [string, "null"] }}
errors: [not_found]
expose:
  mcp_tool: synth_cap{i:04}
  http: {{ method: {method}, path: /api/v1/synth/cap{i:04} }}
  cli: [synth, cap{i:04}]
review: 'Run synthetic capability {i} on "{{name}}"'
examples:
  - title: a name
    input: {{ name: x }}
    outcome: ok
"#,
        effect = if i.is_multiple_of(3) {
            "process_state"
        } else {
            "read"
        },
        method = if i.is_multiple_of(3) { "POST" } else { "GET" },
    )
}

fn handler(n: usize) -> String {
    let mut s = String::from("//! Synthetic handlers of the generation benchmark.\n");
    for i in 0..n {
        s.push_str(&format!(
            "/// `synth.cap{i:04}`\npub fn cap{i:04}(_ctx: &crate::context::Context, _input: crate::registry::types::synth_cap{i:04}::Input) -> Result<crate::registry::types::synth_cap{i:04}::Output, crate::error::CapabilityError> {{ Ok(crate::registry::types::synth_cap{i:04}::Output {{ items: Vec::new() }}) }}\n"
        ));
    }
    s
}

fn write_registry(root: &Path, n: usize) {
    std::fs::create_dir_all(root.join("capabilities")).unwrap();
    std::fs::create_dir_all(root.join("core/src/handlers")).unwrap();
    for i in 0..n {
        std::fs::write(
            root.join(format!("capabilities/synth.cap{i:04}.yaml")),
            manifest(i),
        )
        .unwrap();
    }
    std::fs::write(root.join("core/src/handlers/synth.rs"), handler(n)).unwrap();
    // Into a workspace copy (`--write`), the synthetic module joins the real ones.
    let modules = root.join("core/src/handlers/mod.rs");
    let mut text = std::fs::read_to_string(&modules)
        .unwrap_or_else(|_| "//! Synthetic handler modules.\n".to_string());
    if !text.lines().any(|l| l == "pub mod synth;") {
        text.push_str("pub mod synth;\n");
    }
    std::fs::write(modules, text).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    if let Some(pos) = args.iter().position(|a| a == "--write") {
        let dir = Path::new(&args[pos + 1]);
        write_registry(dir, n);
        println!(
            "wrote {n} synthetic manifests, core/src/handlers/synth.rs and core/src/handlers/mod.rs under {}",
            dir.display()
        );
        return;
    }
    let tmp = std::env::temp_dir().join(format!("seneschal-bench-{n}-{}", std::process::id()));
    write_registry(&tmp, n);
    let inputs = seneschal_codegen::Inputs::standard(&tmp, "0.0.0");
    let runs = 5;
    let mut times = Vec::new();
    let mut bytes = 0usize;
    for _ in 0..runs {
        let t = Instant::now();
        let out = seneschal_codegen::generate(&inputs)
            .unwrap_or_else(|d| panic!("{}", seneschal_codegen::report(&d)));
        times.push(t.elapsed());
        bytes = out
            .committed
            .iter()
            .chain(out.out_dir.iter())
            .map(|(_, c)| c.len())
            .sum();
    }
    let t = Instant::now();
    let reg = seneschal_codegen::load_registry(&inputs).expect("valid");
    let load = t.elapsed();
    let t = Instant::now();
    let rust = seneschal_codegen::project::rust::render_registry(&reg, &tmp).expect("renders");
    let rust_time = t.elapsed();
    let t = Instant::now();
    let _ = seneschal_codegen::committed_projections(&reg);
    let committed = t.elapsed();
    println!(
        "phases: load+check {:.1} ms, rust (typify + prettyplease, {} KiB) {:.1} ms, committed projections {:.1} ms",
        load.as_secs_f64() * 1e3,
        rust.len() / 1024,
        rust_time.as_secs_f64() * 1e3,
        committed.as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&tmp);
    times.sort();
    let median = times[runs / 2];
    println!(
        "manifests={n} runs={runs} median={:.1} ms min={:.1} ms max={:.1} ms output={:.1} MiB",
        median.as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3,
        bytes as f64 / (1024.0 * 1024.0)
    );
}
