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

/// The maintainer commands work in seneschal's own checkout only: in a repository of the
/// user's (a scratch one, with a commit, a `generated/` and a `Cargo.toml` of its own), each
/// exits `EXIT_NOT_CHECKOUT` with `error[not_seneschal_checkout]`, naming the folder, and
/// writes nothing; `contract digest`, a capability, still answers there. `--repo` names the
/// folder they judge, and `--fixture`/`--workspace` the folder they would use.
#[test]
fn maintainer_commands_outside_seneschal_s_checkout_exit_13_naming_the_folder() {
    use seneschal::codes::EXIT_NOT_CHECKOUT;
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::create_dir(dir.join("generated")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"theirs\"\n").unwrap();
    std::fs::create_dir(dir.join("capabilities")).unwrap();
    support::git(dir, &["add", "-A"]);
    support::git(dir, &["commit", "-qm", "theirs"]);
    support::git(dir, &["commit", "-q", "--allow-empty", "-m", "second"]);
    let before = support::git(dir, &["status", "--porcelain", "--ignored"]);
    let shown = dir.canonicalize().unwrap().display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["generate", "--check"], "generate"),
        (&["generate"], "generate"),
        (&["contract", "diff", "HEAD~1"], "contract diff"),
        (&["contract", "check"], "contract check"),
        (&["contract", "release"], "contract release"),
        (&["conformance"], "conformance"),
        (
            &["--json", "conformance", "--only", "capabilities.show"],
            "conformance",
        ),
        (&["new", "demo.echo"], "new"),
    ];
    for (args, name) in cases {
        let o = support::run_in(dir, args);
        let err = stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(i32::from(EXIT_NOT_CHECKOUT)),
            "{args:?}: {err}{}",
            stdout(&o)
        );
        assert!(
            err.starts_with(&format!(
                "error[not_seneschal_checkout]: `seneschal {name}` is a maintainer command: it works in seneschal's own checkout"
            )),
            "{args:?}: {err}"
        );
        assert!(
            err.contains(&format!("you are in {shown},")),
            "{args:?}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }
    assert_eq!(
        support::git(dir, &["status", "--porcelain", "--ignored"]),
        before,
        "a refused maintainer command wrote nothing"
    );
    // The folder judged is the one --repo, --fixture or --workspace names.
    let here = env!("CARGO_MANIFEST_DIR");
    for args in [
        vec!["--repo", dir.to_str().unwrap(), "generate", "--check"],
        vec!["conformance", "--fixture", dir.to_str().unwrap()],
        vec!["new", "demo.echo", "--workspace", dir.to_str().unwrap()],
    ] {
        let o = support::run_in(std::path::Path::new(here), &args);
        assert_eq!(
            o.status.code(),
            Some(i32::from(EXIT_NOT_CHECKOUT)),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains(&format!("you are in {shown},")),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // A capability under `contract` is the user's too.
    let o = support::run_in(dir, &["contract", "digest"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // In the checkout, the same command runs.
    let o = run(&["generate", "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `--help` lists what a user runs, and the maintainer commands apart under their heading.
#[test]
fn help_lists_the_maintainer_commands_apart() {
    let o = run(&["--help"]);
    let help = stdout(&o);
    let (main, rest) = help
        .split_once("Maintainer commands (seneschal's own checkout)")
        .unwrap_or_else(|| panic!("no maintainer heading:\n{help}"));
    let main_list = main.split_once("Commands:").map_or("", |(_, l)| l);
    for cmd in ["generate", "conformance", "new"] {
        assert!(
            !main_list
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "`{cmd}` is in the main list:\n{main_list}"
        );
        assert!(rest.contains(&format!("\n  {cmd} ")), "{rest}");
    }
    for cmd in ["call", "mcp", "serve", "approvals", "audit", "contract"] {
        assert!(
            main_list
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{cmd} "))),
            "`{cmd}` is not in the main list:\n{main_list}"
        );
    }
    for sub in ["diff", "check", "release"] {
        assert!(rest.contains(&format!("\n  contract {sub} ")), "{rest}");
    }
}

/// A panic in a command ends it at the command line's edge with the `internal` status and a
/// line saying so, not with the runtime's abort status (101).
#[test]
fn a_panic_in_a_command_exits_internal() {
    let o = Command::new(bin())
        .args(["capabilities", "list"])
        .env("SENESCHAL_DEBUG_PANIC", "1")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(i32::from(ErrorCode::Internal.exit_code())),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("error[internal]: seneschal stopped: SENESCHAL_DEBUG_PANIC is set"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
