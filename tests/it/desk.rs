//! The approval desk, driven through the built binary: an agent on MCP stdio (a client that
//! cannot be asked) and one on the HTTP API put their writes on the desk under `--approval
//! ask`; the person decides them from the cockpit of another process (`serve`, with the desk
//! secret: without it a loopback caller decides nothing) and from a terminal (`seneschal
//! approvals`). Approved, the write applies and the audit names where; declined, timed out,
//! cancelled or abandoned (its process killed), nothing is written and nothing waits.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support;
use crate::support::http::Serve;
use crate::support::mcp::Mcp;

const SECRET: &str = "desk-secret-for-tests-0123456789abcdef";

fn audit(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join(".seneschal/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

/// `seneschal approvals list --json` in `dir`.
fn pending(dir: &Path) -> Vec<Value> {
    let o = support::run_in(dir, &["--json", "approvals", "list"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    support::json(&o)["pending"].as_array().unwrap().clone()
}

/// How long a test waits for the desk to change: a bound for a defect, not for a slow machine.
const BOUND: Duration = Duration::from_secs(60);

/// Waits until an approval of `capability` is pending, and answers it.
fn wait_pending(dir: &Path, capability: &str) -> Value {
    let until = Instant::now() + BOUND;
    loop {
        if let Some(p) = pending(dir)
            .into_iter()
            .find(|p| p["capability"] == capability)
        {
            return p;
        }
        assert!(Instant::now() < until, "no approval of {capability} came");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An MCP stdio agent whose client declares no elicitation: its `tools/call` runs on a thread
/// (it waits on the desk), answering the result and the progress messages it was sent.
fn call_in_background(
    mut mcp: Mcp,
    id: u64,
    name: &str,
    arguments: Value,
) -> std::thread::JoinHandle<(Mcp, Value, Vec<Value>)> {
    let name = name.to_string();
    std::thread::spawn(move || {
        mcp.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": arguments, "_meta": {"progressToken": "p"}}}),
        );
        let mut progress = Vec::new();
        loop {
            let m = mcp.recv();
            if m["id"] == id {
                return (mcp, m, progress);
            }
            if m["method"] == "notifications/progress" {
                progress.push(m);
            }
        }
    })
}

fn agent(dir: &Path, args: &[&str]) -> Mcp {
    let mut all = vec!["--approval", "ask"];
    all.extend_from_slice(args);
    let mut mcp = Mcp::start_with(dir, &all, &[]);
    mcp.initialize("2025-11-25");
    mcp
}

#[test]
fn an_agent_on_stdio_is_approved_from_the_cockpit_of_serve_and_from_a_terminal() {
    let d = support::scratch_repo();
    let dir = d.path();
    let desk = Serve::start_args(
        dir,
        &["--approval", "ask"],
        &[("SENESCHAL_DESK_SECRET", SECRET)],
    );

    // 1. From the cockpit: the pending write is listed there (another process's), a
    //    decision without the secret, or with another, is refused; with it, the write runs.
    let mcp = agent(dir, &[]);
    let call = call_in_background(
        mcp,
        100,
        "files_write",
        json!({"path": "notes/plan.md", "content": "hello desk\n"}),
    );
    let p = wait_pending(dir, "files.write");
    let id = p["id"].as_str().unwrap().to_string();
    assert!(
        p["review"].as_str().unwrap().contains("notes/plan.md"),
        "{p}"
    );
    assert!(
        p["detail"]["diff"]
            .as_str()
            .unwrap()
            .contains("+hello desk"),
        "the desk shows the diff: {p}"
    );
    assert_eq!(
        p["detail"]["plan"]["create"],
        json!(["notes/plan.md"]),
        "{p}"
    );
    assert_eq!(p["transport"], "mcp", "{p}");
    let (status, listed) = desk.json("GET", "/desk/approvals", None);
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed["pending"][0]["id"], id,
        "the cockpit of serve lists the stdio agent's approval: {listed}"
    );
    let path = format!("/desk/approvals/{id}");
    let approve = json!({"decision": "approve"});
    for headers in [vec![], vec![("Seneschal-Desk-Secret", "guess")]] {
        let (status, body) = desk.json_with("POST", &path, &headers, Some(&approve));
        assert_eq!(
            (status, body["code"].as_str()),
            (403, Some("not_approved")),
            "{body}"
        );
    }
    assert!(!dir.join("notes/plan.md").exists());
    let (status, body) = desk.json_with(
        "POST",
        &path,
        &[("Seneschal-Desk-Secret", SECRET)],
        Some(&approve),
    );
    assert_eq!(status, 200, "{body}");
    let (mcp, answer, progress) = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes/plan.md")).unwrap(),
        "hello desk\n"
    );
    assert!(
        progress.iter().any(|m| m["params"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("waiting for approval in the cockpit"))),
        "the waiting call reports where it waits: {progress:?}"
    );
    let last = audit(dir).pop().unwrap();
    assert_eq!(
        (&last["outcome"], &last["approved_by"]),
        (&json!("applied"), &json!("cockpit")),
        "{last}"
    );
    // A decision comes once: the approval decided is gone.
    let (status, body) = desk.json_with(
        "POST",
        &path,
        &[("Seneschal-Desk-Secret", SECRET)],
        Some(&approve),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );

    // 2. From a terminal: approve, then decline.
    let call = call_in_background(
        mcp,
        101,
        "files_edit",
        json!({"path": "notes/plan.md", "edits": [{"old": "hello", "new": "goodbye"}]}),
    );
    let p = wait_pending(dir, "files.edit");
    let o = support::run_in(dir, &["approvals", "list"]);
    let listing = support::stdout(&o);
    assert!(
        listing.contains(p["id"].as_str().unwrap()) && listing.contains("+goodbye desk"),
        "{listing}"
    );
    let o = support::run_in(dir, &["approvals", "approve", p["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (mcp, answer, _) = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes/plan.md")).unwrap(),
        "goodbye desk\n"
    );
    assert_eq!(audit(dir).pop().unwrap()["approved_by"], "terminal");

    let call = call_in_background(mcp, 102, "files_delete", json!({"path": "notes/plan.md"}));
    let p = wait_pending(dir, "files.delete");
    let o = support::run_in(dir, &["approvals", "decline", p["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (mcp, answer, _) = call.join().unwrap();
    assert_eq!(
        answer["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{answer}"
    );
    assert!(answer.to_string().contains("declined"), "{answer}");
    assert!(
        dir.join("notes/plan.md").is_file(),
        "a declined delete deletes nothing"
    );
    let last = audit(dir).pop().unwrap();
    assert_eq!(
        (&last["capability"], &last["code"]),
        (&json!("files.delete"), &json!("not_approved")),
        "{last}"
    );
    assert!(pending(dir).is_empty());
    let _ = mcp.finish();

    // 3. An agent on the HTTP API cannot approve its own write: it waits on the desk too.
    let body = json!({"path": "notes/http.md", "content": "over http\n"});
    let server = std::sync::Arc::new(desk);
    let s = std::sync::Arc::clone(&server);
    let post = std::thread::spawn(move || s.json("POST", "/api/v1/files/write", Some(&body)));
    let p = wait_pending(dir, "files.write");
    assert_eq!(p["transport"], "http", "{p}");
    let o = support::run_in(dir, &["approvals", "approve", p["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (status, body) = post.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(dir.join("notes/http.md").is_file());
    let v = support::run_in(dir, &["audit", "verify"]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    let banner = std::sync::Arc::try_unwrap(server)
        .ok()
        .expect("the request thread is done")
        .finish();
    assert!(
        banner.contains(&format!("/#desk={SECRET}")),
        "serve prints the cockpit link with the desk secret: {banner}"
    );
}

#[test]
fn an_undecided_write_times_out_and_a_cancelled_or_abandoned_one_waits_no_more() {
    let d = support::scratch_repo();
    let dir = d.path();
    // Timed out: not_approved, nothing written, nothing left waiting; a late decision is
    // refused as such. The approval waits a second only, perhaps too briefly to be seen
    // listed: its id is the one the refusal names.
    let mcp = agent(dir, &["--approval-timeout", "1"]);
    let call = call_in_background(
        mcp,
        7,
        "files_write",
        json!({"path": "late.md", "content": "x\n"}),
    );
    let (mcp, answer, _) = call.join().unwrap();
    let text = answer.to_string();
    let late: String = text
        .split_once("no decision on approval ")
        .unwrap_or_else(|| panic!("the refusal names its approval: {answer}"))
        .1
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    assert_eq!(
        answer["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{answer}"
    );
    assert!(
        answer.to_string().contains("--approval-timeout"),
        "{answer}"
    );
    assert!(!dir.join("late.md").exists());
    assert!(pending(dir).is_empty(), "a timed-out approval is withdrawn");
    let o = support::run_in(dir, &["approvals", "approve", &late]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "too late: not_found; {}",
        support::stderr(&o)
    );
    assert!(
        support::stderr(&o).contains("not_found"),
        "{}",
        support::stderr(&o)
    );
    let _ = mcp.finish();

    // Cancelled by its client: the call stops waiting and withdraws its approval.
    let mut mcp = agent(dir, &[]);
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "files_write", "arguments": {"path": "cancelled.md", "content": "x\n"}}}),
    );
    let _ = wait_pending(dir, "files.write");
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 8, "reason": "the user moved on"}}),
    );
    let until = Instant::now() + BOUND;
    while !pending(dir).is_empty() {
        assert!(Instant::now() < until, "the cancelled call still waits");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = mcp.finish();
    assert!(!dir.join("cancelled.md").exists());

    // Abandoned: its process killed -9 while it waited; the desk forgets it.
    let mut mcp = agent(dir, &[]);
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "files_write", "arguments": {"path": "killed.md", "content": "x\n"}}}),
    );
    let p = wait_pending(dir, "files.write");
    let pid = p["pid"].as_u64().unwrap();
    assert!(std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let until = Instant::now() + BOUND;
    while !pending(dir).is_empty() {
        assert!(
            Instant::now() < until,
            "a dead process's approval is still listed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = mcp.finish();
    assert!(!dir.join("killed.md").exists());
    // Under deny nothing waits on the desk: refused at once, by the policy, not by a timeout.
    let mut mcp = Mcp::start_with(dir, &["--approval", "deny"], &[]);
    mcp.initialize("2025-11-25");
    let a = mcp.request(
        "tools/call",
        json!({"name": "files_write", "arguments": {"path": "denied.md", "content": "x\n"}}),
    );
    assert_eq!(
        a["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{a}"
    );
    assert!(
        !a.to_string().contains("no decision on approval"),
        "refused by the policy, not after waiting on the desk: {a}"
    );
    assert!(pending(dir).is_empty());
    let _ = mcp.finish();
}

#[test]
fn a_desk_id_names_no_file_but_its_own() {
    let d = support::scratch_repo();
    let dir = d.path();
    for bad in [
        "../../etc/passwd",
        "ABCDEF0123456789abcdef0123456789",
        "1234",
    ] {
        let o = support::run_in(dir, &["approvals", "approve", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", support::stderr(&o));
        assert!(
            support::stderr(&o).contains("invalid_input"),
            "{}",
            support::stderr(&o)
        );
    }
    let o = support::run_in(dir, &["approvals", "list"]);
    assert_eq!(support::stdout(&o), "no approval waits\n");
}

#[test]
fn a_write_waiting_on_the_desk_is_among_the_running_calls_until_it_is_decided() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    let serve = Serve::start_args(
        dir,
        &["--approval", "ask", "--approval-timeout", "3600"],
        &[("SENESCHAL_DESK_SECRET", SECRET)],
    );
    let running = || -> Vec<Value> {
        let (status, body) = serve.json("GET", "/desk/running", None);
        assert_eq!(status, 200, "{body}");
        body["running"].as_array().unwrap().clone()
    };
    assert_eq!(running(), Vec::<Value>::new(), "nothing runs at rest");
    std::thread::scope(|s| {
        let call = s.spawn(|| {
            let body = json!({"path": "notes/running.md", "content": "hello\n"});
            serve.request(
                "POST",
                "/api/v1/files/write",
                &[("Content-Type", "application/json")],
                body.to_string().as_bytes(),
            )
        });
        let p = wait_pending(dir, "files.write");
        let listed = running();
        assert!(
            listed
                .iter()
                .any(|c| c["capability"] == "files.write" && c["transport"] == "http"),
            "{listed:?}"
        );
        let (status, body) = serve.json_with(
            "POST",
            &format!("/desk/approvals/{}", p["id"].as_str().unwrap()),
            &[("Seneschal-Desk-Secret", SECRET)],
            Some(&json!({"decision": "decline"})),
        );
        assert_eq!(status, 200, "{body}");
        let r = call.join().unwrap();
        assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    });
    assert_eq!(
        running(),
        Vec::<Value>::new(),
        "a decided call runs no more"
    );
    assert!(!dir.join("notes/running.md").exists());
    serve.finish();
}
