//! Parity across transports: for every capability whose answer is declared a function of its
//! input or of the repository (`determinism: input | repository`, read from
//! `registry::CAPABILITIES`; `process` ones are exempt by declaration), every example gives
//! the same answer over MCP (`structuredContent`), HTTP (the route's body) and the CLI
//! (`seneschal call`), and from two separate MCP processes; every error example gives the
//! same code on all three (MCP `_meta["seneschal/error"].code`, the problem's `code`, the
//! exit code of `ErrorCode::exit_code()`).

use crate::support;
use std::path::Path;

use crate::support::http::{http_call, Serve};
use crate::support::mcp::Mcp;
use seneschal::codes::ErrorCode;
use seneschal::policy::Determinism;
use seneschal::registry::{Descriptor, CAPABILITIES};
use serde_json::{json, Value};

/// The capabilities parity applies to, and their declared examples. Writers are left out by
/// their declared effect: replaying a write's example against this repository over three
/// transports would change it (and the second call would meet the first one's file);
/// `tests/it/writes_transports.rs` compares writers over every transport from identical scratch
/// repositories instead.
fn subjects() -> Vec<(&'static Descriptor, Vec<Value>)> {
    CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect != seneschal::policy::Effect::RepositoryWrite)
        .filter(|d| matches!(d.determinism, Determinism::Input | Determinism::Repository))
        .map(|d| {
            let examples: Value = serde_json::from_str(d.examples_json).expect("examples JSON");
            (d, examples.as_array().cloned().unwrap_or_default())
        })
        .collect()
}

/// A tools/call over an already initialized MCP process.
fn mcp_call(mcp: &mut Mcp, tool: &str, input: &Value) -> Value {
    let answer = mcp.request("tools/call", json!({"name": tool, "arguments": input}));
    assert!(answer.get("error").is_none(), "{tool}: {answer}");
    answer["result"].clone()
}

#[test]
fn every_example_answers_the_same_over_mcp_http_and_the_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let subjects = subjects();
    assert!(
        subjects.len() >= 8,
        "only {} capabilities declare input or repository determinism",
        subjects.len()
    );
    let server = Serve::start(root, &[]);
    let mut first = Mcp::start(&[]);
    first.initialize("2025-11-25");
    let mut second = Mcp::start(&[]);
    second.initialize("2025-11-25");
    let (mut oks, mut errors, mut three_way) = (0, 0, 0);
    for (d, examples) in &subjects {
        for ex in examples {
            let input = &ex["input"];
            let outcome = ex["outcome"].as_str().expect("an outcome");
            let what = format!("{} {input}", d.id);
            let cli = support::run(&["call", d.id, "--input", &input.to_string()]);
            let mut transports = 1;
            if outcome == "ok" {
                assert!(cli.status.success(), "{what}: {}", support::stderr(&cli));
                let cli_answer = support::json(&cli);
                let again = support::json(&support::run(&[
                    "call",
                    d.id,
                    "--input",
                    &input.to_string(),
                ]));
                assert_eq!(cli_answer, again, "{what}: two CLI processes differ");
                if let Some(tool) = d.mcp_tool {
                    let a = mcp_call(&mut first, tool, input);
                    let b = mcp_call(&mut second, tool, input);
                    assert_eq!(a["isError"], false, "{what}: {a}");
                    assert_eq!(
                        a["structuredContent"], b["structuredContent"],
                        "{what}: two MCP processes differ"
                    );
                    assert_eq!(
                        a["structuredContent"], cli_answer,
                        "{what}: MCP and the CLI differ"
                    );
                    transports += 1;
                }
                if let Some(route) = d.http {
                    let (status, body) = http_call(&server, route.method, route.path, input);
                    assert_eq!(status, 200, "{what}: {body}");
                    assert_eq!(body, cli_answer, "{what}: HTTP and the CLI differ");
                    transports += 1;
                }
                oks += 1;
            } else {
                let code = ErrorCode::parse(outcome)
                    .unwrap_or_else(|| panic!("{what}: outcome {outcome} is no error code"));
                assert_eq!(
                    cli.status.code(),
                    Some(i32::from(code.exit_code())),
                    "{what}: CLI exit code; stderr {}",
                    support::stderr(&cli)
                );
                assert!(
                    support::stderr(&cli).contains(&format!("error[{outcome}]")),
                    "{what}: {}",
                    support::stderr(&cli)
                );
                if let Some(tool) = d.mcp_tool {
                    for mcp in [&mut first, &mut second] {
                        let r = mcp_call(mcp, tool, input);
                        assert_eq!(r["isError"], true, "{what}: {r}");
                        assert_eq!(
                            r["_meta"]["seneschal/error"]["code"], outcome,
                            "{what}: {r}"
                        );
                        assert!(r.get("structuredContent").is_none(), "{what}: {r}");
                    }
                    transports += 1;
                }
                if let Some(route) = d.http {
                    let (status, body) = http_call(&server, route.method, route.path, input);
                    assert_eq!(body["code"], outcome, "{what}: {body}");
                    assert_eq!(status, code.http_status(), "{what}: {body}");
                    transports += 1;
                }
                errors += 1;
            }
            if transports == 3 {
                three_way += 1;
            }
        }
    }
    assert!(oks >= 10, "only {oks} ok examples compared");
    assert!(errors >= 5, "only {errors} error examples compared");
    assert!(
        three_way >= 15,
        "only {three_way} examples reach all three transports"
    );
    let (status, _, err) = first.finish();
    assert!(status.success(), "{err}");
    second.finish();
    server.finish();
}

#[test]
fn exemptions_are_declarations() {
    // The exemptions are declarations: a `process` capability, or a repository writer (compared
    // from scratch repositories in tests/it/writes_transports.rs), is left out; every other
    // executable capability with examples is a subject.
    let subjects: Vec<&str> = subjects().iter().map(|(d, _)| d.id).collect();
    for d in CAPABILITIES.iter().filter(|d| d.executable()) {
        let exempt = matches!(d.determinism, Determinism::Process | Determinism::Client)
            || d.effect == seneschal::policy::Effect::RepositoryWrite;
        assert_eq!(!exempt, subjects.contains(&d.id), "{}", d.id);
    }
    assert!(subjects.contains(&"files.read") && !subjects.contains(&"server.status"));
    // The repository readers compared over every transport, each by its examples.
    for id in [
        "repo.diff",
        "repo.show",
        "repo.blame",
        "repo.branches",
        "files.list",
    ] {
        assert!(subjects.contains(&id), "{id} is a parity subject");
    }
}
