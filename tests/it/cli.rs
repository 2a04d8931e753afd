//! The CLI projection through the built binary: every capability path resolves to its
//! capability, flags are refused with `invalid_input`'s exit code, completions and the man
//! page cover every path, and a closed stdout is a quiet success.

use crate::support;
use std::io::Read;
use std::process::{Command, Stdio};

use crate::support::{bin, json, run, stderr, stdout};
use seneschal::codes::ErrorCode;
use seneschal::registry::CAPABILITIES;

fn cli_paths() -> Vec<(&'static str, Vec<&'static str>)> {
    CAPABILITIES
        .iter()
        .filter(|d| d.executable() && !d.cli.is_empty())
        .map(|d| (d.id, d.cli.to_vec()))
        .collect()
}

#[test]
fn every_cli_path_resolves_to_its_capability() {
    let paths = cli_paths();
    assert!(paths.len() >= 4);
    for (id, path) in paths {
        let mut args = path.clone();
        args.push("--help");
        let o = run(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            path.join(" "),
            stderr(&o)
        );
        assert!(
            stdout(&o).contains(&format!("Capability `{id}`")),
            "{} does not reach {id}",
            path.join(" ")
        );
    }
}

#[test]
fn planned_capabilities_have_no_command() {
    for d in CAPABILITIES.iter().filter(|d| !d.executable()) {
        let group = d.id.split('.').next().unwrap();
        let o = run(&[group, d.id.split('.').nth(1).unwrap()]);
        assert_ne!(o.status.code(), Some(0), "planned {} runs", d.id);
    }
}

#[test]
fn wrong_values_exit_with_invalid_input() {
    let o = run(&["capabilities", "list", "--stability", "eternal"]);
    assert_eq!(
        o.status.code(),
        Some(i32::from(ErrorCode::InvalidInput.exit_code()))
    );
    assert!(stderr(&o).contains("eternal"));
    let o = run(&["capabilities", "show"]);
    assert_eq!(
        o.status.code(),
        Some(i32::from(ErrorCode::InvalidInput.exit_code()))
    );
    assert!(stderr(&o).contains("--id <TEXT>"), "{}", stderr(&o));
    let o = run(&["capabilities", "list", "--no-such-flag"]);
    assert_eq!(
        o.status.code(),
        Some(i32::from(ErrorCode::InvalidInput.exit_code()))
    );
}

#[test]
fn cli_path_and_call_give_the_same_answer() {
    let a = json(&run(&["capabilities", "show", "--id", "server.status"]));
    let b = json(&run(&[
        "call",
        "capabilities.show",
        "--input",
        r#"{"id":"server.status"}"#,
    ]));
    assert_eq!(a, b);
    let a = json(&run(&[
        "--json",
        "capabilities",
        "list",
        "--effect",
        "read",
    ]));
    let b = json(&run(&[
        "call",
        "capabilities.list",
        "--input",
        r#"{"effect":"read"}"#,
    ]));
    assert_eq!(a, b);
}

#[test]
fn completions_mention_every_projected_path() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        for (_, path) in cli_paths() {
            for word in path {
                assert!(text.contains(word), "{shell} completions lack `{word}`");
            }
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(i32::from(ErrorCode::InvalidInput.exit_code()))
    );
}

#[test]
fn man_page_has_a_section_per_capability_path() {
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.starts_with(".ie") || text.contains(".TH seneschal"),
        "not roff"
    );
    for (_, path) in cli_paths() {
        let heading = format!(".SH \"SENESCHAL {}\"", path.join(" ").to_uppercase());
        assert!(text.contains(&heading), "man page lacks {heading}");
    }
}

#[test]
fn a_closed_stdout_is_a_quiet_success() {
    let mut child = Command::new(bin())
        .args(["man"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "exit {status:?}: {err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn the_cli_reference_covers_every_path() {
    let md = seneschal::registry::projections::CLI_REFERENCE;
    for (id, path) in cli_paths() {
        assert!(
            md.contains(&format!("### `seneschal {}`", path.join(" "))),
            "cli.md lacks {id}"
        );
    }
}

/// Runs `seneschal call <id> --input -` with `stdin` as its standard input.
fn call_with_stdin(id: &str, stdin: &[u8]) -> std::process::Output {
    support::run_with_stdin(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        &["call", id, "--input", "-"],
        stdin,
    )
}

#[test]
fn call_reads_its_input_from_stdin_when_told() {
    let from_stdin = call_with_stdin("capabilities.show", br#"{"id":"server.status"}"#);
    assert!(from_stdin.status.success(), "{}", stderr(&from_stdin));
    let from_arg = run(&[
        "call",
        "capabilities.show",
        "--input",
        r#"{"id":"server.status"}"#,
    ]);
    assert_eq!(json(&from_stdin), json(&from_arg));

    // Bytes that are not text, and text that is not JSON, are refused with the input's code.
    for bad in [&b"{\"id\":\"\xff\"}"[..], b"{\"id\":", b""] {
        let out = call_with_stdin("capabilities.show", bad);
        assert_eq!(
            out.status.code(),
            Some(ErrorCode::InvalidInput.exit_code() as i32),
            "{bad:?}"
        );
        assert!(
            stderr(&out).contains("error[invalid_input]"),
            "{}",
            stderr(&out)
        );
    }
}
