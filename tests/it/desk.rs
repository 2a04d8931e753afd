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

/// Whether `answer` (an MCP `tools/call` response) says its approval is pending on the desk.
fn is_pending(answer: &Value) -> bool {
    answer["result"]["_meta"]["seneschal/error"]["data"]["pending"] == true
}

/// An MCP stdio agent whose client declares no elicitation, as an agent uses the desk: it
/// makes its `tools/call` on a thread; answered that the approval is pending, it makes the
/// same call again, until the answer is final. It answers the final result, the pending
/// answers it had before it, and the progress messages it was sent.
fn call_in_background(
    mut mcp: Mcp,
    id: u64,
    name: &str,
    arguments: Value,
) -> std::thread::JoinHandle<(Mcp, Value, Vec<Value>)> {
    let name = name.to_string();
    std::thread::spawn(move || {
        let mut progress = Vec::new();
        for round in 0.. {
            let id = id * 1000 + round;
            mcp.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": name, "arguments": arguments, "_meta": {"progressToken": "p"}}}),
            );
            let answer = loop {
                let m = mcp.recv();
                if m["id"] == id {
                    break m;
                }
                if m["method"] == "notifications/progress" {
                    progress.push(m);
                }
            };
            if !is_pending(&answer) {
                return (mcp, answer, progress);
            }
            progress.push(answer);
        }
        unreachable!("the loop returns")
    })
}

/// An HTTP API caller as an agent uses the desk: it posts `body` to `path` until the answer
/// is not a pending approval, and answers the last status and body.
fn post_until_decided(serve: &Serve, path: &str, body: &Value) -> (u16, Value) {
    loop {
        let (status, answer) = serve.json("POST", path, Some(body));
        if !(status == 403 && answer["data"]["pending"] == true) {
            return (status, answer);
        }
    }
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
    // The first call was answered at once that its approval is pending, naming it and where
    // the person decides; the agent made it again.
    let first = &progress[0];
    assert!(is_pending(first), "{first}");
    assert_eq!(first["result"]["isError"], true, "{first}");
    assert_eq!(
        first["result"]["_meta"]["seneschal/error"]["data"]["desk"], id,
        "{first}"
    );
    let told = first["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        told.contains(&id[..8]) && told.contains("cockpit") && told.contains("same call again"),
        "{told}"
    );
    // Addressed to the agent, who cannot decide: no command it could run itself.
    assert!(
        progress
            .iter()
            .all(|m| !m.to_string().contains("seneschal approvals")),
        "{progress:?}"
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
    let id = p["id"].as_str().unwrap();
    let (code, listing) = crate::approval::on_a_terminal(dir, "approvals list", "");
    assert_eq!(code, Some(0), "{listing}");
    assert!(
        listing.contains(&format!("{}  files.edit  over mcp", &id[..8]))
            && !listing.contains(id)
            && listing.contains("+goodbye desk"),
        "a terminal lists the short id and the diff: {listing}"
    );
    // The eight digits the list shows name the approval.
    let o = support::run_in(dir, &["approvals", "approve", &id[..8]]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    assert_eq!(
        support::json(&o)["id"],
        id,
        "piped, the decision answers JSON"
    );
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

    // 3. An agent on the HTTP API cannot approve its own write: it is answered at once that
    //    its approval is pending, and its call made again after the decision applies it.
    let body = json!({"path": "notes/http.md", "content": "over http\n"});
    let (status, first) = desk.json("POST", "/api/v1/files/write", Some(&body));
    assert_eq!(
        (status, &first["code"]),
        (403, &json!("not_approved")),
        "{first}"
    );
    assert_eq!(first["data"]["pending"], true, "{first}");
    let p = wait_pending(dir, "files.write");
    assert_eq!(p["transport"], "http", "{p}");
    assert_eq!(first["data"]["desk"], p["id"], "{first}");
    let o = support::run_in(dir, &["approvals", "approve", p["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (status, body) = post_until_decided(&desk, "/api/v1/files/write", &body);
    assert_eq!(status, 200, "{body}");
    assert!(dir.join("notes/http.md").is_file());
    let server = desk;
    let v = support::run_in(dir, &["audit", "verify"]);
    assert!(v.status.success(), "{}", support::stderr(&v));
    let banner = server.finish();
    assert!(
        banner.contains(&format!("/#desk={SECRET}")),
        "serve prints the cockpit link with the desk secret: {banner}"
    );
}

#[test]
fn an_undecided_write_times_out_and_a_cancelled_or_abandoned_one_waits_no_more() {
    let d = support::scratch_repo();
    let dir = d.path();
    // Timed out: the approval stays open a second only; the call made again is refused
    // `not_approved` when its time is over, nothing is written, nothing is left on the desk,
    // and a late decision is refused as such.
    let mcp = agent(dir, &["--approval-timeout", "1"]);
    let call = call_in_background(
        mcp,
        7,
        "files_write",
        json!({"path": "late.md", "content": "x\n"}),
    );
    let (mcp, answer, before) = call.join().unwrap();
    let late = before[0]["result"]["_meta"]["seneschal/error"]["data"]["desk"]
        .as_str()
        .unwrap_or_else(|| panic!("the first answer names its approval: {before:?}"))
        .to_string();
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

    // Cancelled by its client while the call made again waits: it stops waiting and
    // withdraws its approval.
    let mut mcp = agent(dir, &[]);
    let write =
        json!({"name": "files_write", "arguments": {"path": "cancelled.md", "content": "x\n"}});
    let first = mcp.request("tools/call", write.clone());
    assert!(is_pending(&first), "{first}");
    mcp.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": write}));
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

    // Abandoned: its process killed -9 while its approval was open; the desk forgets it.
    let mut mcp = agent(dir, &[]);
    let first = mcp.request(
        "tools/call",
        json!({"name": "files_write", "arguments": {"path": "killed.md", "content": "x\n"}}),
    );
    assert!(is_pending(&first), "{first}");
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
    assert_eq!(support::json(&o), json!({"pending": []}));
    let (code, shown) = crate::approval::on_a_terminal(dir, "approvals list", "");
    assert_eq!((code, shown.trim_end()), (Some(0), "no approval waits"));
}

/// Plants pending approvals on the desk of `dir` (the test process waits for them, so they
/// are not swept as abandoned), each `(id, capability)`.
fn plant(dir: &Path, approvals: &[(&str, &str)]) {
    let desk = dir.join(".seneschal/desk");
    std::fs::create_dir_all(&desk).unwrap();
    for (id, capability) in approvals {
        let record = json!({
            "id": id, "capability": capability, "transport": "mcp",
            "pid": std::process::id(), "created": "2026-12-01T10:00:00Z",
            "expires": 4_102_444_800u64, "review": format!("Planted {capability}"),
            "detail": {"diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"},
        });
        std::fs::write(desk.join(format!("{id}.json")), record.to_string()).unwrap();
    }
}

/// `approvals list` answers JSON when its output is piped, and the table on a terminal, by
/// short ids; `approve` and `decline` take those: an unknown prefix is `not_found` and an
/// ambiguous one `invalid_input`, each naming the approvals that wait.
#[test]
fn approvals_answer_json_when_piped_and_take_the_short_ids_a_terminal_shows() {
    let d = support::scratch_repo();
    let dir = d.path();
    let (a, b, c) = (
        "6f1c09a2aaaaaaaaaaaaaaaaaaaaaaaa",
        "6f1c09a2abbbbbbbbbbbbbbbbbbbbbbb",
        "0123456789abcdef0123456789abcdef",
    );
    plant(
        dir,
        &[(a, "files.edit"), (b, "repo.commit"), (c, "files.write")],
    );

    let o = support::run_in(dir, &["approvals", "list"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let listed = support::json(&o);
    let ids: Vec<&str> = listed["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "{listed}");
    assert!([a, b, c].iter().all(|id| ids.contains(id)), "{listed}");

    let (code, table) = crate::approval::on_a_terminal(dir, "approvals list", "");
    assert_eq!(code, Some(0), "{table}");
    for short in [
        "6f1c09a2aa  files.edit",
        "6f1c09a2ab  repo.commit",
        "01234567  files.write",
    ] {
        assert!(table.contains(short), "{short}: {table}");
    }
    assert!(![a, b, c].iter().any(|id| table.contains(id)), "{table}");
    assert!(table.contains("    +new"), "{table}");

    // The error text of a command that fails with exit `code`.
    let refused = |args: &[&str], code: i32| {
        let o = support::run_in(dir, args);
        let err = support::stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        err
    };
    let err = refused(&["approvals", "approve", "6f1c09a2"], 2);
    assert!(
        err.starts_with("error[invalid_input]: `6f1c09a2` begins 2 pending approvals' ids")
            && err.contains("6f1c09a2aa (files.edit), 6f1c09a2ab (repo.commit)"),
        "ambiguous: {err}"
    );
    let err = refused(&["approvals", "decline", "deadbeef"], 3);
    assert!(
        err.starts_with("error[not_found]: no approval waits under `deadbeef`")
            && err.contains("01234567 (files.write)"),
        "unknown: {err}"
    );
    let err = refused(&["approvals", "decline", "6f1c"], 2);
    assert!(err.contains("first 8 or more"), "{err}");

    let (code, shown) = crate::approval::on_a_terminal(dir, "approvals decline 6f1c09a2ab", "");
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.starts_with("declined 6f1c09a2: Planted repo.commit"),
        "{shown}"
    );
    let o = support::run_in(dir, &["approvals", "approve", "01234567"]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let decided = support::json(&o);
    assert_eq!(
        (&decided["id"], &decided["decision"]["decision"]),
        (&json!(c), &json!("approve")),
        "{decided}"
    );
    let left: Vec<Value> = pending(dir);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["id"], a);
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
    let body = json!({"path": "notes/running.md", "content": "hello\n"});
    // The first call is answered at once: it does not wait, so it is not running.
    let (status, first) = serve.json("POST", "/api/v1/files/write", Some(&body));
    assert_eq!(
        (status, &first["data"]["pending"]),
        (403, &json!(true)),
        "{first}"
    );
    assert_eq!(
        running(),
        Vec::<Value>::new(),
        "a pending approval is not a running call"
    );
    std::thread::scope(|s| {
        // The call made again waits for the decision: it is running until it is decided.
        let call = s.spawn(|| post_until_decided(&serve, "/api/v1/files/write", &body));
        let p = wait_pending(dir, "files.write");
        let mut looks = 0;
        while !running()
            .iter()
            .any(|c| c["capability"] == "files.write" && c["transport"] == "http")
        {
            looks += 1;
            assert!(
                looks < 1200,
                "the call made again is not among the running calls"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let (status, body) = serve.json_with(
            "POST",
            &format!("/desk/approvals/{}", p["id"].as_str().unwrap()),
            &[("Seneschal-Desk-Secret", SECRET)],
            Some(&json!({"decision": "decline"})),
        );
        assert_eq!(status, 200, "{body}");
        let (status, answer) = call.join().unwrap();
        assert_eq!(status, 403, "{answer}");
        assert!(answer.to_string().contains("declined"), "{answer}");
    });
    assert_eq!(
        running(),
        Vec::<Value>::new(),
        "a decided call runs no more"
    );
    assert!(!dir.join("notes/running.md").exists());
    serve.finish();
}

/// A decision binds the plan the desk showed: the write is planned before it is put on the
/// desk, and the call made again applies an approval only when it plans the same write. A
/// file edited, deleted or staged while the person looks at the desk makes the call made
/// again another question (a new approval, showing the new plan): the approved plan applies
/// nothing. A commit's entry lists the files it commits, which are exactly those committed.
#[test]
fn an_approval_applies_the_plan_the_desk_showed_or_nothing() {
    let repo = support::scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("notes.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.join("old.txt"), "shown\n").unwrap();
    support::git(dir, &["add", "-A"]);
    support::git(dir, &["commit", "-q", "-m", "files"]);
    let decide = |verb: &str, id: &Value| {
        let o = support::run_in(dir, &["approvals", verb, id.as_str().unwrap()]);
        assert!(o.status.success(), "{}", support::stderr(&o));
    };
    let desk_id = |m: &Value| {
        assert!(is_pending(m), "{m}");
        m["result"]["_meta"]["seneschal/error"]["data"]["desk"].clone()
    };
    let shown = |id: &Value| {
        pending(dir)
            .into_iter()
            .find(|p| p["id"] == *id)
            .unwrap_or_else(|| panic!("{id} is not pending"))
    };
    let mut mcp = agent(dir, &[]);
    // An edit: the file changes after the desk showed its diff.
    let edit = json!({"name": "files_edit", "arguments":
        {"path": "notes.txt", "edits": [{"old": "two", "new": "three"}]}});
    let first = desk_id(&mcp.request("tools/call", edit.clone()));
    assert!(
        shown(&first)["detail"]["diff"]
            .as_str()
            .unwrap()
            .contains("+three"),
        "the desk shows the diff"
    );
    std::fs::write(dir.join("notes.txt"), "one\ntwo\nand more\n").unwrap();
    decide("approve", &first);
    let second = desk_id(&mcp.request("tools/call", edit.clone()));
    assert_ne!(first, second, "the new plan is a new question");
    assert!(
        shown(&second)["detail"]["diff"]
            .as_str()
            .unwrap()
            .contains(" and more"),
        "the new question shows the new plan"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "one\ntwo\nand more\n",
        "the approved plan applied nothing"
    );
    decide("decline", &second);
    let a = mcp.request("tools/call", edit);
    assert!(a.to_string().contains("declined"), "{a}");
    // A delete: new content written after the desk showed the old one is not deleted.
    let delete = json!({"name": "files_delete", "arguments": {"path": "old.txt"}});
    let first = desk_id(&mcp.request("tools/call", delete.clone()));
    std::fs::write(dir.join("old.txt"), "written after the question\n").unwrap();
    decide("approve", &first);
    let second = desk_id(&mcp.request("tools/call", delete.clone()));
    assert_ne!(first, second);
    assert!(dir.join("old.txt").is_file());
    decide("decline", &second);
    let _ = mcp.request("tools/call", delete);
    // A commit: its entry lists what it commits; what is staged after the question makes
    // another question, and what is approved is exactly what is committed.
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    support::git(dir, &["add", "a.txt"]);
    let commit = json!({"name": "repo_commit", "arguments": {"message": "add a"}});
    let files = |p: &Value| -> Vec<String> {
        p["detail"]["files"]
            .as_array()
            .unwrap_or_else(|| panic!("the entry lists the files: {p}"))
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };
    let first = desk_id(&mcp.request("tools/call", commit.clone()));
    assert_eq!(files(&shown(&first)), ["a.txt"]);
    std::fs::write(dir.join("b.txt"), "b\n").unwrap();
    support::git(dir, &["add", "b.txt"]);
    decide("approve", &first);
    let head = support::git(dir, &["rev-parse", "HEAD"]);
    let second = desk_id(&mcp.request("tools/call", commit.clone()));
    assert_eq!(files(&shown(&second)), ["a.txt", "b.txt"]);
    assert_eq!(
        support::git(dir, &["rev-parse", "HEAD"]),
        head,
        "nothing committed on the first approval"
    );
    decide("approve", &second);
    let a = mcp.request("tools/call", commit);
    assert_eq!(a["result"]["isError"], false, "{a}");
    let committed = support::git(dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "a.txt\nb.txt");
    let _ = mcp.finish();
}

/// A write waiting on the desk holds no HTTP worker: on a server with one worker, while
/// writes of unauthenticated loopback callers wait, the cockpit and the desk list answer at
/// once, and the person declines them all; past the per-process bound a further write is
/// refused at once instead of waiting.
#[test]
fn waiting_writes_hold_no_worker_and_the_cockpit_answers_while_they_wait() {
    let repo = support::scratch_repo();
    let dir = repo.path().to_path_buf();
    let serve = std::sync::Arc::new(Serve::start_args(
        &dir,
        &[
            "--workers",
            "1",
            "--approval",
            "ask",
            "--approval-timeout",
            "60",
        ],
        &[("SENESCHAL_DESK_SECRET", SECRET)],
    ));
    let bound = 32;
    // Each writer is answered pending at once, then makes its call again and waits.
    let writers: Vec<_> = (0..bound)
        .map(|i| {
            let serve = std::sync::Arc::clone(&serve);
            std::thread::spawn(move || {
                post_until_decided(
                    &serve,
                    "/api/v1/files/write",
                    &json!({"path": format!("w{i}.txt"), "content": "x\n"}),
                )
            })
        })
        .collect();
    // Every writer's call made again waits; a bounded number of looks, no clock.
    let waiting = || {
        let (status, body) = serve.json("GET", "/desk/running", None);
        assert_eq!(status, 200, "{body}");
        body["running"].as_array().unwrap().len()
    };
    let mut looks = 0;
    while pending(&dir).len() < bound || waiting() < bound {
        looks += 1;
        assert!(looks < 1200, "the writes did not all wait on the desk");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Every write waits, on one worker: the cockpit and the desk still answer.
    let page = serve.get("/");
    assert_eq!(page.status, 200);
    let (status, list) = serve.json_with(
        "GET",
        "/desk/approvals",
        &[("Seneschal-Desk-Secret", SECRET)],
        None,
    );
    assert_eq!(status, 200, "{list}");
    // One more is refused at once, naming the approvals that wait.
    let (status, more) = serve.json(
        "POST",
        "/api/v1/files/write",
        Some(&json!({"path": "one-more.txt", "content": "x\n"})),
    );
    assert_eq!(status, 403, "{more}");
    assert_eq!(more["code"], "not_approved", "{more}");
    assert!(
        more["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("wait there already"),
        "{more}"
    );
    // The person declines them all; nothing was written.
    for p in pending(&dir) {
        let o = support::run_in(&dir, &["approvals", "decline", p["id"].as_str().unwrap()]);
        assert!(o.status.success(), "{}", support::stderr(&o));
    }
    for w in writers {
        let (status, answer) = w.join().unwrap();
        assert_eq!(status, 403, "{answer}");
        assert!(answer.to_string().contains("declined"), "{answer}");
    }
    for i in 0..bound {
        assert!(!dir.join(format!("w{i}.txt")).exists());
    }
}

/// Agent text cannot forge the question: a newline and U+202E in a path do not draw a line of
/// their own nor turn a name backwards, a 6,000-character subject does not bury the sentence,
/// and a commit's whole message is shown (its body too), on the desk as `seneschal approvals`
/// and the cockpit read it.
#[test]
fn agent_text_is_shown_escaped_and_bounded_on_the_desk() {
    let d = support::scratch_repo();
    let dir = d.path();
    let forged = "docs/evil\u{202e}dm.exe\nApprove: harmless.md";
    let call = call_in_background(
        agent(dir, &[]),
        1,
        "files_write",
        json!({"path": forged, "content": "x\n"}),
    );
    let p = wait_pending(dir, "files.write");
    let review = p["review"].as_str().unwrap();
    assert!(
        review.contains("docs/evil\\u{202e}dm.exe\\nApprove: harmless.md"),
        "{review}"
    );
    assert_eq!(
        p["detail"]["plan"]["create"],
        json!(["docs/evil\\u{202e}dm.exe\\nApprove: harmless.md"]),
        "{p}"
    );
    let diff = p["detail"]["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("--- /dev/null\n+++ b/docs/evil\\u{202e}dm.exe\\nApprove: harmless.md\n"),
        "{diff}"
    );
    let (_, text) = crate::approval::on_a_terminal(dir, "approvals list", "");
    assert!(text.contains("files.write"), "{text}");
    assert!(
        !text.contains('\u{202e}') && !text.lines().any(|l| l.trim_start().starts_with("Approve:")),
        "{text}"
    );
    let id = p["id"].as_str().unwrap();
    let o = support::run_in(dir, &["approvals", "decline", id]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (_, answer, _) = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // A commit: the subject is cut in the sentence, the whole message is shown beside it.
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    support::git(dir, &["add", "a.txt"]);
    let subject = "word ".repeat(1_200);
    let message = format!(
        "{}\n\nThe body, line one.\nfake\u{202e}line\n",
        subject.trim_end()
    );
    let identity = [
        ("GIT_AUTHOR_NAME", "A"),
        ("GIT_AUTHOR_EMAIL", "a@example.invalid"),
        ("GIT_COMMITTER_NAME", "A"),
        ("GIT_COMMITTER_EMAIL", "a@example.invalid"),
    ];
    let mut mcp = Mcp::start_with(dir, &["--approval", "ask"], &identity);
    mcp.initialize("2025-11-25");
    let call = call_in_background(mcp, 2, "repo_commit", json!({ "message": message }));
    let p = wait_pending(dir, "repo.commit");
    let review = p["review"].as_str().unwrap();
    assert!(review.chars().count() < 500, "{review}");
    assert!(review.ends_with(" more characters)"), "{review}");
    let shown = p["detail"]["message"].as_str().unwrap();
    assert!(
        shown.starts_with(subject.trim_end()),
        "the whole subject: {shown}"
    );
    assert!(
        shown.ends_with("\n\nThe body, line one.\nfake\\u{202e}line\n"),
        "{shown}"
    );
    let o = support::run_in(dir, &["approvals", "decline", p["id"].as_str().unwrap()]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let (_, answer, _) = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        support::git(dir, &["rev-list", "--count", "HEAD"]).trim(),
        "1"
    );
}

/// A grant: the person approves a write on the desk together with the asking session's other
/// writes for some minutes. Those run without a question, each audited as approved by the
/// grant and shown on the desk; another session is still asked; the person revokes the grant
/// (with the desk secret only) and the next write is asked again. A caller without a session
/// (the HTTP API) is offered no grant.
#[test]
fn a_grant_approves_a_sessions_writes_until_the_person_revokes_it() {
    let d = support::scratch_repo();
    let dir = d.path();
    let desk = Serve::start_args(
        dir,
        &["--approval", "ask"],
        &[("SENESCHAL_DESK_SECRET", SECRET)],
    );
    let secret = [("Seneschal-Desk-Secret", SECRET)];
    let write =
        |path: &str| json!({"name": "files_write", "arguments": {"path": path, "content": "x\n"}});
    let mut mcp = agent(dir, &[]);
    let first = mcp.request("tools/call", write("notes/1.md"));
    assert!(is_pending(&first), "{first}");
    let p = wait_pending(dir, "files.write");
    assert_eq!(p["can_grant"], true, "{p}");
    assert_eq!(
        p["client"],
        json!({"name": "pipe-test", "version": "0"}),
        "the desk names the client: {p}"
    );
    let path = format!("/desk/approvals/{}", p["id"].as_str().unwrap());
    for bad in [json!(7), json!("15"), json!(-1)] {
        let (status, body) = desk.json_with(
            "POST",
            &path,
            &secret,
            Some(&json!({"decision": "approve", "grant_minutes": bad})),
        );
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid_input")),
            "{bad}: {body}"
        );
    }
    let (status, body) = desk.json_with(
        "POST",
        &path,
        &secret,
        Some(&json!({"decision": "approve", "grant_minutes": 15})),
    );
    assert_eq!(status, 200, "{body}");
    let a = mcp.request("tools/call", write("notes/1.md"));
    assert_eq!(a["result"]["isError"], false, "{a}");
    // The grant is on the desk, and the session's next writes run without a question.
    let (status, grants) = desk.json("GET", "/desk/grants", None);
    assert_eq!(status, 200, "{grants}");
    let grant = grants["grants"][0].clone();
    assert_eq!(
        (&grant["minutes"], &grant["by"]),
        (&json!(15), &json!("cockpit")),
        "{grants}"
    );
    for n in 2..4 {
        let a = mcp.request("tools/call", write(&format!("notes/{n}.md")));
        assert_eq!(a["result"]["isError"], false, "{a}");
    }
    assert!(pending(dir).is_empty());
    let by: Vec<Value> = audit(dir)
        .iter()
        .filter(|r| r["outcome"] == "applied")
        .map(|r| r["approved_by"].clone())
        .collect();
    assert_eq!(by, [json!("cockpit"), json!("grant"), json!("grant")]);
    // Another session is still asked.
    let mut other = agent(dir, &[]);
    let a = other.request("tools/call", write("notes/other.md"));
    assert!(is_pending(&a), "{a}");
    let _ = other.finish();
    // Revoked (only with the secret), the session is asked again.
    let revoke = format!("/desk/grants/{}", grant["id"].as_str().unwrap());
    let (status, body) = desk.json("DELETE", &revoke, None);
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("not_approved")),
        "{body}"
    );
    let (status, body) = desk.json_with("DELETE", &revoke, &secret, None);
    assert_eq!(status, 200, "{body}");
    let a = mcp.request("tools/call", write("notes/4.md"));
    assert!(is_pending(&a), "revoked, the grant approves nothing: {a}");
    assert!(!dir.join("notes/4.md").exists());
    let _ = mcp.finish();
    // The HTTP API has no session: its approval offers no grant, and one is refused.
    let (status, first) = desk.json(
        "POST",
        "/api/v1/files/write",
        Some(&json!({"path": "notes/http.md", "content": "x\n"})),
    );
    assert_eq!(status, 403, "{first}");
    let id = first["data"]["desk"].as_str().unwrap().to_string();
    let p = pending(dir)
        .into_iter()
        .find(|p| p["id"] == id.as_str())
        .unwrap();
    assert_eq!(p["can_grant"], false, "{p}");
    let (status, body) = desk.json_with(
        "POST",
        &format!("/desk/approvals/{id}"),
        &secret,
        Some(&json!({"decision": "approve", "grant_minutes": 15})),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_input")),
        "{body}"
    );
    desk.finish();
}
