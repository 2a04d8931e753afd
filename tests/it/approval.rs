//! Approval enforced where the action runs: the executor's gate confirms a `per_call` call
//! (every repository write) and a `session` call (repository reads, session state) before the
//! handler, through the peer of the call, on every transport. Driven through the built binary:
//! the command line (`--yes`, else `not_approved`, exit 9), the HTTP API (the person's desk
//! secret, the dry run's token pinning the exact request and plan), MCP stdio (`--approval deny|ask|
//! trust-client` with a client that declares no elicitation); and a loop over the registry:
//! no write runs unconfirmed on any transport.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::support;
use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use seneschal::policy::Effect;
use seneschal::registry::CAPABILITIES;

/// Every file of the repository outside `.git/` and `.seneschal/`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".seneschal" {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                walk(root, &p, out);
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The audit log's records.
fn audit(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join(".seneschal/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn new_guide(id: &str) -> Value {
    json!({"kind": "guide", "id": id, "front_matter": {"title": "Releasing", "status": "draft"}, "body": "# Releasing\n"})
}

/// An input of each repository write that its schema accepts: its first `ok` example,
/// applying (not a dry run).
fn write_inputs() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let mut out = Vec::new();
    for d in CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect == Effect::RepositoryWrite)
    {
        let examples: Vec<Value> = serde_json::from_str(d.examples_json).unwrap();
        let mut input = examples
            .iter()
            .find(|e| e["outcome"] == "ok")
            .map(|e| e["input"].clone())
            .unwrap_or_else(|| panic!("{} declares an ok example", d.id));
        if let Some(m) = input.as_object_mut() {
            m.remove("dry_run");
        }
        let tool = d
            .mcp_tool
            .unwrap_or_else(|| panic!("{} is an MCP tool", d.id));
        let path = d.http.map(|h| h.path).unwrap_or_default();
        out.push((d.id, tool, path, input));
    }
    assert!(
        out.len() >= 4,
        "the registry has the four writes at least: {out:?}"
    );
    out
}

#[test]
fn the_command_line_refuses_a_write_without_yes_and_applies_it_with_yes() {
    let d = support::adr_repo();
    let dir = d.path();
    let before = tree(dir);
    let input = new_guide("releasing").to_string();
    // Not a terminal, no --yes: refused, exit 9, nothing written, audited.
    let o = support::run_in(dir, &["call", "knowledge.create", "--input", &input]);
    let err = support::stderr(&o);
    assert_eq!(o.status.code(), Some(9), "{err}");
    assert!(err.starts_with("error[not_approved]"), "{err}");
    assert!(err.contains("--yes"), "the refusal says how: {err}");
    assert_eq!(tree(dir), before, "a refused write changes nothing");
    let records = audit(dir);
    let last = records.last().expect("the refusal is audited");
    assert_eq!(
        (
            last["capability"].as_str(),
            last["outcome"].as_str(),
            last["code"].as_str()
        ),
        (
            Some("knowledge.create"),
            Some("refused"),
            Some("not_approved")
        ),
        "{last}"
    );
    // The same through the capability's own command.
    let o = support::run_in(
        dir,
        &[
            "knowledge",
            "create",
            "--kind",
            "guide",
            "--id",
            "releasing",
            "--front-matter",
            r#"{"title": "Releasing", "status": "draft"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(9), "{}", support::stderr(&o));
    assert_eq!(tree(dir), before);
    // A dry run plans and changes nothing: it is not asked.
    let dry = support::run_in(
        dir,
        &[
            "call",
            "knowledge.create",
            "--input",
            &json!({"kind": "guide", "id": "releasing", "front_matter": {"title": "Releasing", "status": "draft"}, "dry_run": true}).to_string(),
        ],
    );
    assert!(dry.status.success(), "{}", support::stderr(&dry));
    assert_eq!(tree(dir), before);
    // With --yes: applied, and the audit says how it was approved.
    let o = support::run_in(
        dir,
        &["--yes", "call", "knowledge.create", "--input", &input],
    );
    assert!(o.status.success(), "{}", support::stderr(&o));
    assert!(dir.join("docs/guides/releasing.md").is_file());
    let records = audit(dir);
    let applied: Vec<&Value> = records
        .iter()
        .filter(|r| r["capability"] == "knowledge.create" && r["phase"] == "intent")
        .collect();
    assert_eq!(applied.len(), 1, "{records:?}");
    assert_eq!(applied[0]["approved_by"], "yes", "{}", applied[0]);
    let outcome = records.last().unwrap();
    assert_eq!(
        (&outcome["outcome"], &outcome["approved_by"]),
        (&json!("applied"), &json!("yes"))
    );
    // A session-level read and session state run on the command line without --yes: the
    // invocation approves them.
    let read = support::run_in(
        dir,
        &[
            "call",
            "files.read",
            "--input",
            r#"{"path": "docs/adr/0001-first.md"}"#,
        ],
    );
    assert!(read.status.success(), "{}", support::stderr(&read));
    let note = support::run_in(dir, &["session", "note", "add", "--text", "a"]);
    assert!(note.status.success(), "{}", support::stderr(&note));
    // The chain still verifies with the refusals in it.
    let v = support::run_in(dir, &["audit", "verify"]);
    assert!(v.status.success(), "{}", support::stderr(&v));
}

/// The HTTP API's caller does not approve its own write: under `ask` a write without the desk
/// secret waits on the desk (here for one second, then `not_approved`), its own dry run's
/// token included; a token of another request or plan, or a forged one, is refused at once;
/// the person's own call (the desk secret, with the token of the plan reviewed) applies.
#[test]
fn the_http_api_caller_cannot_approve_its_own_write_and_the_person_can() {
    let d = support::adr_repo();
    let dir = d.path();
    let secret = "a-person-s-desk-secret-0123456789abcdef";
    let server = Serve::start_args(
        dir,
        &["--approval", "ask", "--approval-timeout", "1"],
        &[("SENESCHAL_DESK_SECRET", secret)],
    );
    let before = tree(dir);
    let path = "/api/v1/knowledge/create";
    let post = |body: &Value, headers: &[(&str, &str)]| {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        server.request("POST", path, &all, body.to_string().as_bytes())
    };
    let input = new_guide("releasing");
    let mut dry = input.clone();
    dry["dry_run"] = json!(true);
    let token_of_dry_run = || {
        let r = post(&dry, &[]);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.header("Seneschal-Approval-Token")
            .expect("the dry run answers a confirmation token")
            .to_string()
    };
    let token = token_of_dry_run();
    assert_eq!(tree(dir), before, "a dry run changes nothing");
    // Without a token or the secret: it is put on the desk and answered at once that its
    // approval is pending; made again, it waits; nobody decides: 403 not_approved.
    for headers in [vec![], vec![("Seneschal-Approval", token.as_str())]] {
        let r = post(&input, &headers);
        assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
        let problem = r.json();
        assert_eq!(
            (&problem["code"], &problem["data"]["pending"]),
            (&json!("not_approved"), &json!(true)),
            "{problem}"
        );
        let started = std::time::Instant::now();
        let r = post(&input, &headers);
        assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
        let problem = r.json();
        assert_eq!(problem["code"], "not_approved", "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("--approval-timeout"),
            "{problem}"
        );
        assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    }
    // The token of another request: another input of the same capability, and the same
    // input of another capability; a forged token. Refused at once, even with the secret.
    let token = token_of_dry_run();
    let mut other_input = input.clone();
    other_input["id"] = json!("other");
    let r = post(
        &other_input,
        &[
            ("Seneschal-Approval", &token),
            ("Seneschal-Desk-Secret", secret),
        ],
    );
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["code"], "not_approved");
    // A write that would apply (its digest is the object's), so that the token is what is
    // judged: a write that cannot apply is refused before anyone is asked.
    let (_, adr) = server.json(
        "GET",
        "/api/v1/knowledge/get?uri=seneschal://knowledge/adr/0001",
        None,
    );
    let update = json!({"uri": "seneschal://knowledge/adr/0001", "expected_digest": adr["digest"], "body": "x\n"});
    let r = server.request(
        "POST",
        "/api/v1/knowledge/update",
        &[
            ("Content-Type", "application/json"),
            ("Seneschal-Approval", &token),
        ],
        update.to_string().as_bytes(),
    );
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["code"], "not_approved");
    let last = if token.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &token[..token.len() - 1]);
    let r = post(
        &input,
        &[
            ("Seneschal-Approval", &forged),
            ("Seneschal-Desk-Secret", secret),
        ],
    );
    assert_eq!(r.status, 403);
    // A wrong secret is no secret: the call is put on the desk like any stranger's.
    let r = post(&input, &[("Seneschal-Desk-Secret", "not-the-secret")]);
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["data"]["pending"], true);
    assert_eq!(tree(dir), before, "no refused call wrote anything");
    // The person's own call, pinned to the plan reviewed: applied, audited as such.
    let r = post(
        &input,
        &[
            ("Seneschal-Approval", &token),
            ("Seneschal-Desk-Secret", secret),
        ],
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["applied"], true);
    assert!(dir.join("docs/guides/releasing.md").is_file());
    let records = audit(dir);
    let refused = records
        .iter()
        .filter(|r| r["code"] == "not_approved" && r["transport"] == "http")
        .count();
    // Each refusal is audited; an answer that the approval is pending is not a refusal (the
    // call made again is audited with its decision).
    assert_eq!(refused, 5, "each refusal is audited: {records:?}");
    let last = records.last().unwrap();
    assert_eq!(
        (&last["outcome"], &last["approved_by"]),
        (&json!("applied"), &json!("desk secret")),
        "{last}"
    );
    // A session-level read has no session to be approved in: under `ask` it runs.
    let (status, body) = server.json(
        "GET",
        "/api/v1/files/read?path=docs/adr/0001-first.md",
        None,
    );
    assert_eq!(status, 200, "{body}");
    // The policy is where the projection says: server.status.
    let (status, body) = server.json("GET", "/api/v1/server/status", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["approval"], "ask");
    let banner = server.finish();
    assert!(
        banner.contains("--approval ask"),
        "the banner names the policy: {banner}"
    );
}

#[test]
fn under_deny_the_http_api_refuses_session_reads_and_trust_client_asks_nothing() {
    let d = support::adr_repo();
    let dir = d.path();
    let deny = Serve::start_args(dir, &["--approval", "deny"], &[]);
    let (status, body) = deny.json(
        "GET",
        "/api/v1/files/read?path=docs/adr/0001-first.md",
        None,
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("not_approved")),
        "{body}"
    );
    let (_, body) = deny.json("GET", "/api/v1/server/status", None);
    assert_eq!(
        body["approval"], "deny",
        "a metadata read needs no approval"
    );
    deny.finish();
    let trust = Serve::start_args(dir, &["--approval", "trust-client"], &[]);
    let (status, body) = trust.json(
        "POST",
        "/api/v1/knowledge/create",
        Some(&new_guide("trusted")),
    );
    assert_eq!(status, 200, "{body}");
    trust.finish();
    let last = audit(dir).pop().unwrap();
    assert_eq!(last["approved_by"], "trust-client", "{last}");
}

#[test]
fn mcp_stdio_without_elicitation_follows_the_policy() {
    let d = support::adr_repo();
    let dir = d.path();
    let before = tree(dir);
    let create = json!({"name": "knowledge_create", "arguments": new_guide("releasing")});
    let read = json!({"name": "files_read", "arguments": {"path": "docs/adr/0001-first.md"}});
    let error_code = |a: &Value| a["result"]["_meta"]["seneschal/error"]["code"].clone();

    // deny: a client that declares no elicitation cannot approve: writes and session-level
    // reads are refused, metadata runs.
    let mut mcp = Mcp::start_with(dir, &["--approval", "deny"], &[]);
    mcp.initialize("2025-11-25");
    let a = mcp.request("tools/call", create.clone());
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert_eq!(error_code(&a), "not_approved", "{a}");
    let a = mcp.request("tools/call", read.clone());
    assert_eq!(error_code(&a), "not_approved", "{a}");
    let a = mcp.request(
        "tools/call",
        json!({"name": "server_status", "arguments": {}}),
    );
    assert_eq!(a["result"]["structuredContent"]["approval"], "deny", "{a}");
    let (status, _, err) = mcp.finish();
    assert!(status.success(), "{err}");
    assert!(
        err.contains("--approval deny"),
        "the banner names the policy: {err}"
    );
    assert_eq!(tree(dir), before);

    // ask (the default): the write is put on the desk and answered pending at once; made
    // again, it waits (here one second: nobody decides, so it is refused); the
    // session-level read runs.
    let mut mcp = Mcp::start_with(dir, &["--approval", "ask", "--approval-timeout", "1"], &[]);
    mcp.initialize("2025-11-25");
    let a = mcp.request("tools/call", create.clone());
    assert_eq!(error_code(&a), "not_approved", "{a}");
    assert_eq!(
        a["result"]["_meta"]["seneschal/error"]["data"]["pending"], true,
        "{a}"
    );
    let a = mcp.request("tools/call", create.clone());
    assert_eq!(error_code(&a), "not_approved", "{a}");
    let message = a.to_string();
    assert!(
        message.contains("--approval-timeout"),
        "the refusal says why: {message}"
    );
    let a = mcp.request("tools/call", read.clone());
    assert_eq!(a["result"]["isError"], false, "{a}");
    let a = mcp.request(
        "tools/call",
        json!({"name": "server_status", "arguments": {}}),
    );
    assert_eq!(a["result"]["structuredContent"]["approval"], "ask", "{a}");
    let _ = mcp.finish();
    assert_eq!(tree(dir), before);
    let refusals = audit(dir)
        .iter()
        .filter(|r| r["code"] == "not_approved" && r["transport"] == "mcp")
        .count();
    assert_eq!(refusals, 2, "each refused write is audited");

    // No flag is `ask`.
    let o = support::run_in(dir, &["mcp", "--help"]);
    assert!(
        support::stdout(&o).contains("[default: ask]"),
        "{}",
        support::stdout(&o)
    );

    // trust-client: the client's own confirmation is trusted.
    let mut mcp = Mcp::start_with(dir, &["--approval", "trust-client"], &[]);
    mcp.initialize("2025-11-25");
    let a = mcp.request("tools/call", create);
    assert_eq!(a["result"]["isError"], false, "{a}");
    let _ = mcp.finish();
    assert!(dir.join("docs/guides/releasing.md").is_file());
    let last = audit(dir).pop().unwrap();
    assert_eq!(last["approved_by"], "trust-client", "{last}");
}

/// The gate cannot be bypassed: every repository write of the registry, called with an
/// input its schema accepts and no approval, is refused `not_approved` on each transport and
/// changes nothing.
#[test]
fn no_write_of_the_registry_runs_unapproved_on_any_transport() {
    let d = support::adr_repo();
    let dir = d.path();
    let before = tree(dir);
    let writes = write_inputs();
    let mut mcp = Mcp::start_with(dir, &["--approval", "deny"], &[]);
    mcp.initialize("2025-11-25");
    let server = Serve::start_args(dir, &["--approval", "deny"], &[]);
    for (id, tool, path, input) in &writes {
        let a = mcp.request("tools/call", json!({"name": tool, "arguments": input}));
        assert_eq!(
            a["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
            "MCP {id} {input}: {a}"
        );
        let (status, body) = server.json("POST", path, Some(input));
        assert_eq!(
            (status, body["code"].as_str()),
            (403, Some("not_approved")),
            "HTTP {id} {input}: {body}"
        );
        // The person's own command line (under the default `ask`): refused `not_approved`
        // without `--yes`, or — a write that cannot apply is not asked about — its own error.
        let o = support::run_in(dir, &["call", id, "--input", &input.to_string()]);
        assert!(
            !o.status.success() && support::stderr(&o).starts_with("error["),
            "CLI {id} {input}: {}",
            support::stderr(&o)
        );
        assert_eq!(tree(dir), before, "{id} changed the repository unapproved");
    }
    let _ = mcp.finish();
    server.finish();
    let records = audit(dir);
    for (id, ..) in &writes {
        let refused = records
            .iter()
            .filter(|r| r["capability"] == *id && r["outcome"] == "refused")
            .count();
        assert_eq!(refused, 3, "{id}: one audited refusal per transport");
        let unapproved = records
            .iter()
            .filter(|r| r["capability"] == *id && r["code"] == "not_approved")
            .count();
        assert!(unapproved >= 2, "{id}: MCP and HTTP refuse it unapproved");
    }
}

/// `seneschal ARGS` on a pseudo-terminal (util-linux `script`), with `answer` typed on it:
/// (exit code, everything the terminal showed).
pub(crate) fn on_a_terminal(dir: &Path, args: &str, answer: &str) -> (Option<i32>, String) {
    use std::io::Write;
    let mut child = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} {args}", support::bin().display()),
            "/dev/null",
        ])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs the binary on a pseudo-terminal");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    // Bounded: a prompt that waited forever would fail here, not hang the suite.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("`seneschal {args}` did not end within 60 s on a terminal");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        format!("{}{}", support::stdout(&o), support::stderr(&o)),
    )
}

#[test]
fn on_a_terminal_the_command_line_asks_y_n_and_a_no_writes_nothing() {
    let d = support::adr_repo();
    let dir = d.path();
    let before = tree(dir);
    let args = r#"knowledge create --kind guide --id asked --front-matter '{"title": "Asked", "status": "draft"}' --json"#;
    let (code, shown) = on_a_terminal(dir, args, "n\n");
    assert_eq!(code, Some(9), "{shown}");
    assert!(
        shown.contains("Create 1 knowledge object: guide/asked (docs/guides/asked.md)")
            && shown.contains("Approve? [y/N]"),
        "the prompt shows the dry run's review sentence: {shown}"
    );
    assert!(shown.contains("error[not_approved]"), "{shown}");
    assert_eq!(tree(dir), before);
    let (code, shown) = on_a_terminal(dir, args, "y\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(dir.join("docs/guides/asked.md").is_file());
    let records = audit(dir);
    assert_eq!(records.last().unwrap()["approved_by"], "terminal");
    assert!(
        records
            .iter()
            .any(|r| r["code"] == "not_approved" && r["transport"] == "cli"),
        "the no is audited: {records:?}"
    );
}

/// A token is one decision, applied once, for the plan that was reviewed: the dry run of an
/// ADR whose number the server assigns names one file; its token applies that write once, a
/// replay answers `not_approved` and writes nothing, and a token whose plan another write has
/// since changed (the next number is taken) applies nothing either.
#[test]
fn a_token_applies_one_write_once_for_the_plan_reviewed() {
    let d = support::adr_repo();
    let dir = d.path();
    let secret = "a-person-s-desk-secret-0123456789abcdef";
    let server = Serve::start_args(
        dir,
        &["--approval", "ask"],
        &[("SENESCHAL_DESK_SECRET", secret)],
    );
    let post = |body: &Value, headers: &[(&str, &str)]| {
        // The person's own calls (the desk secret): the token alone decides what applies.
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Seneschal-Desk-Secret", secret),
        ];
        all.extend_from_slice(headers);
        server.request(
            "POST",
            "/api/v1/knowledge/create",
            &all,
            body.to_string().as_bytes(),
        )
    };
    let adr = |title: &str| json!({"kind": "adr", "front_matter": {"title": title, "status": "proposed", "date": "2026-12-01"}, "body": "# x\n"});
    let token_of = |input: &Value| {
        let mut dry = input.clone();
        dry["dry_run"] = json!(true);
        let r = post(&dry, &[]);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let planned = r.json()["plan"]["create"].clone();
        (
            r.header("Seneschal-Approval-Token").unwrap().to_string(),
            planned,
        )
    };
    let adrs = || {
        std::fs::read_dir(dir.join("docs/adr"))
            .unwrap()
            .filter_map(|e| e.ok())
            .count()
    };
    let input = adr("Numbered by the server");
    let (token, planned) = token_of(&input);
    let before = adrs();
    let r = post(&input, &[("Seneschal-Approval", &token)]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["plan"]["create"],
        planned,
        "the write is the one reviewed"
    );
    assert_eq!(adrs(), before + 1);
    for _ in 0..4 {
        let again = post(&input, &[("Seneschal-Approval", &token)]);
        assert_eq!(
            again.status,
            403,
            "{}",
            String::from_utf8_lossy(&again.body)
        );
        assert_eq!(again.json()["code"], "not_approved");
    }
    assert_eq!(adrs(), before + 1, "a replayed token wrote nothing");
    // A token whose plan no longer holds: another write took the number it named.
    let late = adr("Reviewed before another write");
    let (stale, _) = token_of(&late);
    let other = adr("Written in between");
    let (fresh, _) = token_of(&other);
    assert_eq!(post(&other, &[("Seneschal-Approval", &fresh)]).status, 200);
    let r = post(&late, &[("Seneschal-Approval", &stale)]);
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["code"], "not_approved");
    assert_eq!(adrs(), before + 2);
    server.finish();
}

/// A stdio MCP client that declares elicitation and answers every question with `answer`
/// (by default it accepts), keeping them.
struct Accepting {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    asked: Vec<Value>,
    next: u64,
    answer: Value,
}

impl Accepting {
    fn start(dir: &Path) -> Accepting {
        let mut child =
            support::spawn_piped(&support::bin(), dir, &["mcp", "--approval", "ask"], &[]);
        let stdin = child.stdin.take().expect("piped");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut c = Accepting {
            child,
            stdin,
            stdout,
            asked: Vec::new(),
            next: 0,
            answer: json!({"action": "accept"}),
        };
        c.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "t", "version": "0"}}}),
        );
        assert!(c.recv()["result"].is_object());
        c
    }

    fn send(&mut self, m: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{m}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        use std::io::BufRead;
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Calls `name`, accepting each question asked on the way; answers the tool result.
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let m = self.call_raw(name, arguments);
        assert_eq!(m["result"]["isError"], false, "{name}: {m}");
        m
    }

    /// Calls `name`, answering each question asked on the way with `answer`; answers the
    /// response, whatever it is.
    fn call_raw(&mut self, name: &str, arguments: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
        loop {
            let m = self.recv();
            if m["method"] == "elicitation/create" {
                self.asked.push(m["params"].clone());
                let answer = self.answer.clone();
                self.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": answer}));
            } else if m["id"] == id {
                return m;
            }
        }
    }

    fn finish(self) {
        drop(self.stdin);
        let mut child = self.child;
        assert!(child.wait().unwrap().success());
    }
}

/// Read approvals are one consent per session, not one question per tool: a client that can
/// be asked is asked once to let the session read the repository's content (the question names
/// that scope and the first read), then every other read tool runs without a question; session
/// state is its own consent, asked once; a write is still asked every time.
#[test]
fn one_consent_covers_every_read_of_a_session() {
    let repo = support::adr_repo();
    let mut c = Accepting::start(repo.path());
    c.call("files_read", json!({"path": "docs/adr/0001-first.md"}));
    assert_eq!(c.asked.len(), 1, "{:?}", c.asked);
    let q = c.asked[0].clone();
    assert_eq!(q["_meta"]["seneschal/scope"], "repository content", "{q}");
    let message = q["message"].as_str().unwrap();
    assert!(
        message.contains("this session") && message.contains("docs/adr/0001-first.md"),
        "the question names the scope and the first read: {message}"
    );
    for (name, args) in [
        ("files_search", json!({"pattern": "First"})),
        ("files_list", json!({})),
        ("repo_log", json!({"limit": 2})),
        (
            "knowledge_get",
            json!({"uri": "seneschal://knowledge/adr/0001"}),
        ),
        ("knowledge_search", json!({"query": "first"})),
        ("files_read", json!({"path": "README.md"})),
    ] {
        c.call(name, args);
    }
    assert_eq!(
        c.asked.len(),
        1,
        "one consent covers every read: {:?}",
        c.asked
    );
    c.call("session_note_add", json!({"text": "remember this"}));
    c.call("session_note_list", json!({}));
    assert_eq!(c.asked.len(), 2, "{:?}", c.asked);
    assert_eq!(c.asked[1]["_meta"]["seneschal/scope"], "session state");
    for n in 0..2 {
        c.call(
            "knowledge_create",
            json!({"kind": "guide", "id": format!("g{n}"), "front_matter": {"title": "G", "status": "draft"}, "body": "# G\n"}),
        );
    }
    assert_eq!(c.asked.len(), 4, "a write is asked every time");
    assert_eq!(c.asked[3]["_meta"]["seneschal/approval"], "per_call");
    c.finish();
}

/// One small change is one question: the form that asks to approve a write carries its diff
/// and offers a grant; checked, the session's next writes run without a question (each
/// audited as approved by the grant) while another session is still asked. A read consent the
/// person declined is not asked again in that session.
#[test]
fn a_grant_in_the_form_approves_the_sessions_next_writes_and_a_declined_consent_is_kept() {
    let repo = support::adr_repo();
    let dir = repo.path();
    let mut c = Accepting::start(dir);
    c.answer = json!({"action": "accept", "content": {"grant": true}});
    c.call(
        "files_write",
        json!({"path": "notes/a.md", "content": "first line\n"}),
    );
    assert_eq!(c.asked.len(), 1, "{:?}", c.asked);
    let q = &c.asked[0];
    assert_eq!(
        q["requestedSchema"]["properties"]["grant"]["type"], "boolean",
        "the form offers a grant: {q}"
    );
    let message = q["message"].as_str().unwrap();
    assert!(
        message.contains("Changes:") && message.contains("+first line"),
        "the question carries the diff: {message}"
    );
    c.answer = json!({"action": "decline"});
    c.call(
        "files_edit",
        json!({"path": "notes/a.md", "edits": [{"old": "first", "new": "second"}]}),
    );
    c.call(
        "files_write",
        json!({"path": "notes/b.md", "content": "b\n"}),
    );
    assert_eq!(c.asked.len(), 1, "the grant approved them: {:?}", c.asked);
    let approved: Vec<Value> = audit(dir)
        .iter()
        .filter(|r| r["outcome"] == "applied")
        .map(|r| r["approved_by"].clone())
        .collect();
    assert_eq!(
        approved,
        [json!("elicitation"), json!("grant"), json!("grant")]
    );
    c.finish();

    // Another session holds no grant: its write is asked (here declined: nothing written).
    let mut other = Accepting::start(dir);
    other.answer = json!({"action": "decline"});
    let a = other.call_raw(
        "files_write",
        json!({"path": "notes/c.md", "content": "c\n"}),
    );
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert_eq!(other.asked.len(), 1);
    assert!(!dir.join("notes/c.md").exists());
    // A declined read consent is kept for the session: the next read is refused unasked.
    let a = other.call_raw("files_read", json!({"path": "README.md"}));
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert_eq!(other.asked.len(), 2);
    let a = other.call_raw("files_list", json!({}));
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(
        a.to_string().contains("declined"),
        "the refusal says why: {a}"
    );
    assert_eq!(other.asked.len(), 2, "not asked again: {:?}", other.asked);
    other.finish();
}
