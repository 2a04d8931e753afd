//! `seneschal contract diff|check|release`: the contract lock on the command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Value};

use super::{fail, print_stdout};
use crate::contract::{diff, gate, highest, Version, EXIT_GATE};
use crate::error::CapabilityError;
use crate::registry::projections::CONTRACT_LOCK;

/// The `contract` group (capability commands such as `contract digest` join it).
pub fn command() -> Command {
    Command::new("contract")
        .about("Contract locks: classify changes, gate releases on semver")
        .after_help(format!(
            "`diff`, `check` and `release` are maintainer commands: they work in seneschal's own \
checkout (a folder with capabilities/ and a Cargo.toml of package `seneschal`) and exit {} \
elsewhere.",
            super::checkout::EXIT_NOT_CHECKOUT
        ))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(
            Command::new("diff")
                .about("Classify every change from OLD to NEW (default: this binary's lock) as breaking, minor, patch or wire")
                .long_about(
                    "Classify every change from OLD to NEW as breaking, minor, patch or wire.\n\n\
OLD is a lock file or a git revision (its generated/contract.lock is read with `git show`). \
NEW defaults to the lock compiled into this binary.\n\n\
Exit status: 0 no change, 20 wire, 21 patch, 22 minor, 23 breaking.",
                )
                .arg(Arg::new("old").required(true).value_name("OLD").help("A lock file or a git revision"))
                .arg(Arg::new("new").value_name("NEW").help("A lock file or a git revision [default: this binary's lock]")),
        )
        .subcommand(
            Command::new("check")
                .about("Fail (exit 24) when the version was bumped less than the changes since the last release require")
                .arg(
                    Arg::new("releases")
                        .long("releases")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .default_value("generated/releases")
                        .help("Where release locks are kept"),
                ),
        )
        .subcommand(
            Command::new("release")
                .about("Record this binary's lock as the lock of its version (generated/releases/v<version>.lock)")
                .arg(
                    Arg::new("releases")
                        .long("releases")
                        .value_name("DIR")
                        .value_parser(clap::value_parser!(PathBuf))
                        .default_value("generated/releases"),
                )
                .arg(Arg::new("force").long("force").action(ArgAction::SetTrue).help("Overwrite an existing, different lock")),
        )
}

/// Reads a lock from a file, or from a git revision of the repository.
fn load(spec: &str, repo: &Path) -> Result<Value, CapabilityError> {
    let text = if Path::new(spec).is_file() {
        std::fs::read_to_string(spec)
            .map_err(|e| CapabilityError::not_found(format!("cannot read {spec}: {e}")))?
    } else {
        let out = crate::git::command(repo)
            .map_err(|f| f.into_error("the contract lock"))?
            .args(["show", &format!("{spec}:generated/contract.lock")])
            .output()
            .map_err(|e| CapabilityError::internal(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(CapabilityError::not_found(format!(
                "`{spec}` is neither a lock file nor a git revision with generated/contract.lock"
            )));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        CapabilityError::invalid_input(format!("{spec} is not a contract lock: {e}"))
    })?;
    if !v["capabilities"].is_object() {
        return Err(CapabilityError::invalid_input(format!(
            "{spec} is not a contract lock: no `capabilities`"
        )));
    }
    Ok(v)
}

fn current() -> Value {
    serde_json::from_str(CONTRACT_LOCK).expect("the compiled lock parses")
}

/// Runs a `contract` subcommand; `None` when the subcommand is a capability's.
pub fn run(m: &ArgMatches, repo: &Path, json_out: bool) -> Option<ExitCode> {
    let (name, sub) = m.subcommand()?;
    Some(match name {
        "diff" => {
            let old = match load(sub.get_one::<String>("old").expect("required"), repo) {
                Ok(v) => v,
                Err(e) => return Some(fail(&e)),
            };
            let new = match sub.get_one::<String>("new") {
                Some(spec) => match load(spec, repo) {
                    Ok(v) => v,
                    Err(e) => return Some(fail(&e)),
                },
                None => current(),
            };
            let findings = diff(&old, &new);
            let top = highest(&findings);
            let text = if json_out {
                let list: Vec<Value> = findings
                    .iter()
                    .map(|f| json!({"class": f.class.as_str(), "capability": f.capability, "message": f.message}))
                    .collect();
                let mut s = serde_json::to_string_pretty(&json!({
                    "old_digest": old["digest"], "new_digest": new["digest"],
                    "highest": top.map(|c| c.as_str()), "findings": list,
                }))
                .expect("serializes");
                s.push('\n');
                s
            } else if findings.is_empty() {
                "no change: the two locks present the same surface\n".to_string()
            } else {
                let mut s: String = findings.iter().map(|f| format!("{f}\n")).collect();
                s.push_str(&format!(
                    "highest: {}\n",
                    top.map(|c| c.as_str()).unwrap_or("none")
                ));
                s
            };
            let _ = print_stdout(&text);
            ExitCode::from(top.map_or(0, |c| c.exit_code()))
        }
        "check" => {
            let dir = sub.get_one::<PathBuf>("releases").expect("defaulted");
            let current_version =
                Version::parse(env!("CARGO_PKG_VERSION")).expect("the package version is semver");
            let latest = std::fs::read_dir(dir)
                .ok()
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|p| {
                    let name = p.file_name()?.to_str()?.strip_suffix(".lock")?.to_string();
                    Version::parse(&name)
                        .filter(|v| *v <= current_version)
                        .map(|v| (v, p))
                })
                .max_by_key(|(v, _)| *v);
            let Some((released, path)) = latest else {
                let _ = print_stdout(&format!(
                    "contract check: no release lock in {} yet; record one with `seneschal contract release`\n",
                    dir.display()
                ));
                return Some(ExitCode::SUCCESS);
            };
            let old = match load(&path.to_string_lossy(), repo) {
                Ok(v) => v,
                Err(e) => return Some(fail(&e)),
            };
            let findings = diff(&old, &current());
            match gate(released, current_version, &findings) {
                Ok(msg) => {
                    let _ = print_stdout(&format!("{msg}\n"));
                    ExitCode::SUCCESS
                }
                Err(msg) => {
                    for f in &findings {
                        eprintln!("  {f}");
                    }
                    eprintln!("{msg}");
                    ExitCode::from(EXIT_GATE)
                }
            }
        }
        "release" => {
            let dir = sub.get_one::<PathBuf>("releases").expect("defaulted");
            let path = dir.join(format!("v{}.lock", env!("CARGO_PKG_VERSION")));
            let same = std::fs::read_to_string(&path)
                .map(|t| t == CONTRACT_LOCK)
                .ok();
            if same == Some(false) && !sub.get_flag("force") {
                return Some(fail(&CapabilityError::conflict(format!(
                    "{} exists with another surface: bump the version, or pass --force",
                    path.display()
                ))));
            }
            if let Err(e) =
                std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, CONTRACT_LOCK))
            {
                return Some(fail(&CapabilityError::internal(format!(
                    "cannot write {}: {e}",
                    path.display()
                ))));
            }
            let _ = print_stdout(&format!("recorded {}\n", path.display()));
            ExitCode::SUCCESS
        }
        _ => return None,
    })
}
