//! MCP 2026-07-28 input-required results (SEP-2322) through the built binary, over stdio and
//! loopback HTTP: a request that needs the client's input is answered `input_required` with
//! its `inputRequests` and a sealed `requestState`, and completes when made again with the
//! answers; a state altered, issued by another process or for another request is -32602; a
//! client that did not declare the capability is never asked (the call fails as it would, or
//! -32021 when the call needed it). A prompt's missing required argument is asked this way
//! (the real binary), and the conformance fixtures' tools ask elicitations, samplings and
//! roots in one or several rounds. Over HTTP, a tool's `x-mcp-header` arguments are checked
//! against their `Mcp-Param-*` headers (SEP-2243).

use std::path::Path;

use serde_json::{json, Value};

use crate::rich_content::fixture_bin;
use crate::support::http::Serve;
use crate::support::mcp::{code, Mcp, MODERN};
use crate::support::scratch_repo;

/// The `_meta` of a modern request from a client declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "input-test", "version": "0"},
    })
}

/// `params` of a modern request from a client that can be elicited, sampled and listed.
fn asking(mut params: Value) -> Value {
    params["_meta"] = meta(json!({"elicitation": {}, "sampling": {}, "roots": {}}));
    params
}

/// An accepted form elicitation.
fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The result of an input-required answer, checked for its shape.
fn input_required(answer: &Value) -> &Value {
    let r = &answer["result"];
    assert_eq!(r["resultType"], "input_required", "{answer}");
    assert!(r["requestState"].is_string(), "{answer}");
    assert!(r["inputRequests"].is_object(), "{answer}");
    r
}

/// The key and the request of the one approval question an input-required result asks.
fn approval_asked(r: &Value) -> (String, Value) {
    let asks = r["inputRequests"].as_object().expect("input requests");
    let (key, ask) = asks
        .iter()
        .find(|(k, _)| k.starts_with("approval-"))
        .unwrap_or_else(|| panic!("no approval question: {r}"));
    (key.clone(), ask.clone())
}

/// The result of a complete answer.
fn complete(answer: &Value) -> &Value {
    let r = &answer["result"];
    assert_eq!(r["resultType"], "complete", "{answer}");
    r
}

/// A repository with the skill `review`, whose argument `topic` is required.
fn repo() -> tempfile::TempDir {
    let dir = scratch_repo();
    let path = dir.path().join("skills/review/SKILL.md");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        "---\nname: review\ntitle: Review a change\ndescription: Reviews a change.\narguments:\n  - name: topic\n    description: The concern to review for.\n    required: true\n---\nReview the change for {{topic}}.\n",
    )
    .unwrap();
    let helper = dir.path().join("skills/helper/SKILL.md");
    std::fs::create_dir_all(helper.parent().unwrap()).unwrap();
    std::fs::write(
        helper,
        "---\nname: helper\ndescription: Helps.\narguments:\n  - name: topic\n    required: true\n---\nHelp with {{topic}}.\n",
    )
    .unwrap();
    dir
}

/// The rendered text of a complete `prompts/get`.
fn prompt_text(answer: &Value) -> String {
    complete(answer)["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string()
}

/// The two rounds of `prompts/get review` without its argument, through `send`; returns the
/// state of round 1.
fn prompt_in_two_rounds(send: &mut dyn FnMut(Value) -> Value) -> String {
    let first = send(asking(json!({"name": "review"})));
    let r = input_required(&first);
    let ask = &r["inputRequests"]["arguments"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_eq!(ask["params"]["mode"], "form");
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["topic"])
    );
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["topic"]["description"],
        "The concern to review for."
    );
    let state = r["requestState"].as_str().unwrap().to_string();
    let second = send(asking(json!({
        "name": "review",
        "inputResponses": {"arguments": accept(json!({"topic": "security"}))},
        "requestState": state,
    })));
    assert_eq!(
        prompt_text(&second),
        "Review the change for security.",
        "{second}"
    );
    state
}

#[test]
fn a_prompt_asks_its_missing_argument_and_refuses_a_state_not_its_own_over_stdio() {
    let dir = repo();
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    let state = prompt_in_two_rounds(&mut |p| mcp.request("prompts/get", p));

    // The state altered, presented with other arguments, or for another prompt: -32602
    // before anything is rendered.
    let tampered = mcp.request(
        "prompts/get",
        asking(
            json!({"name": "review", "requestState": format!("{state}-TAMPERED"),
            "inputResponses": {"arguments": accept(json!({"topic": "x"}))}}),
        ),
    );
    assert_eq!(code(&tampered), Some(-32602), "{tampered}");
    assert!(
        tampered["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState"),
        "{tampered}"
    );
    let other_arguments = mcp.request(
        "prompts/get",
        asking(json!({"name": "review", "arguments": {"topic": "style"}, "requestState": state})),
    );
    assert_eq!(code(&other_arguments), Some(-32602), "{other_arguments}");
    let other_prompt = mcp.request(
        "prompts/get",
        asking(json!({"name": "helper", "requestState": state,
            "inputResponses": {"arguments": accept(json!({"topic": "x"}))}})),
    );
    assert_eq!(code(&other_prompt), Some(-32602), "{other_prompt}");

    // Declined: the prompt is not rendered, and says what it lacks.
    let declined = mcp.request(
        "prompts/get",
        asking(json!({"name": "review", "requestState": state,
            "inputResponses": {"arguments": {"action": "decline"}}})),
    );
    assert_eq!(code(&declined), Some(-32602), "{declined}");
    assert!(
        declined["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`topic`"),
        "{declined}"
    );

    // A client that cannot be elicited is never asked: the missing argument is -32602.
    let mut params = json!({"name": "review"});
    params["_meta"] = meta(json!({"sampling": {}}));
    let unable = mcp.request("prompts/get", params);
    assert_eq!(code(&unable), Some(-32602), "{unable}");
    assert!(unable.get("result").is_none(), "{unable}");

    // An answer that is no result object is -32602.
    let malformed = mcp.request(
        "prompts/get",
        asking(json!({"name": "review", "inputResponses": {"arguments": 12345}})),
    );
    assert_eq!(code(&malformed), Some(-32602), "{malformed}");
    mcp.finish();

    // Another process holds another key: the same state is refused there.
    let mut again = Mcp::start_with(dir.path(), &[], &[]);
    let foreign = again.request(
        "prompts/get",
        asking(json!({"name": "review", "requestState": state,
            "inputResponses": {"arguments": accept(json!({"topic": "security"}))}})),
    );
    assert_eq!(code(&foreign), Some(-32602), "{foreign}");
    again.finish();
}

/// POSTs a modern request to `/mcp` with the headers of a 2026-07-28 client.
fn post(
    serve: &Serve,
    id: u64,
    method: &str,
    params: Value,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    let name = params["name"].as_str().unwrap_or_default().to_string();
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if !name.is_empty() {
        headers.push(("Mcp-Name", name.as_str()));
    }
    headers.extend_from_slice(extra);
    serve.json_with(
        "POST",
        "/mcp",
        &headers,
        Some(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
    )
}

#[test]
fn a_prompt_asks_its_missing_argument_over_http() {
    let dir = repo();
    let serve = Serve::start(dir.path(), &[]);
    let mut id = 0;
    let state = prompt_in_two_rounds(&mut |p| {
        id += 1;
        let (status, answer) = post(&serve, id, "prompts/get", p, &[]);
        assert_eq!(status, 200, "{answer}");
        answer
    });
    let (_, tampered) = post(
        &serve,
        9,
        "prompts/get",
        asking(json!({"name": "review", "requestState": format!("{state}-TAMPERED")})),
        &[],
    );
    assert_eq!(code(&tampered), Some(-32602), "{tampered}");
    serve.finish();
}

fn fixtures() -> Mcp {
    Mcp::start_bin(
        fixture_bin(),
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[],
        &[],
    )
}

fn call(name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    params
}

#[test]
fn a_tool_asks_in_as_many_rounds_as_it_needs_and_each_state_carries_the_answers_so_far() {
    let mut mcp = fixtures();
    let tool = "test_input_required_result_multi_round";
    let one = mcp.request("tools/call", asking(call(tool, json!({}))));
    let r1 = input_required(&one).clone();
    assert_eq!(
        r1["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["step1"]
    );
    // Round 2 carries step1's answer; the new state carries it on.
    let two = mcp.request(
        "tools/call",
        asking(call(
            tool,
            json!({"inputResponses": {"step1": accept(json!({"name": "Alice"}))},
                   "requestState": r1["requestState"]}),
        )),
    );
    let r2 = input_required(&two).clone();
    assert_eq!(
        r2["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["step2"]
    );
    assert_ne!(r2["requestState"], r1["requestState"]);
    // Round 3 gives step2 only: step1 comes from the state.
    let three = mcp.request(
        "tools/call",
        asking(call(
            tool,
            json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))},
                   "requestState": r2["requestState"]}),
        )),
    );
    assert_eq!(
        complete(&three)["structuredContent"]["text"],
        "Alice likes blue",
        "{three}"
    );
    // Without the state, round 3 has lost step1 and asks it again.
    let lost = mcp.request(
        "tools/call",
        asking(call(
            tool,
            json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))}}),
        )),
    );
    assert!(input_required(&lost)["inputRequests"]
        .get("step1")
        .is_some());

    // Three kinds of request travel together in one round.
    let many = mcp.request(
        "tools/call",
        asking(call(
            "test_input_required_result_multiple_inputs",
            json!({}),
        )),
    );
    let methods: Vec<&str> = input_required(&many)["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    let mut sorted = methods.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["elicitation/create", "roots/list", "sampling/createMessage"]
    );
    mcp.finish();
}

#[test]
fn a_state_of_another_tool_is_refused_and_an_undeclared_capability_is_never_asked() {
    let mut mcp = fixtures();
    let first = mcp.request(
        "tools/call",
        asking(call("test_input_required_result_request_state", json!({}))),
    );
    let state = input_required(&first)["requestState"].clone();
    // The same key (`confirm`) and arguments, another tool: refused.
    let other = mcp.request(
        "tools/call",
        asking(call(
            "test_input_required_result_tampered_state",
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": state}),
        )),
    );
    assert_eq!(code(&other), Some(-32602), "{other}");
    // Its own tool completes with it.
    let own = mcp.request(
        "tools/call",
        asking(call(
            "test_input_required_result_request_state",
            json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": state}),
        )),
    );
    assert!(
        complete(&own)["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .contains("state-ok"),
        "{own}"
    );

    // A client declaring sampling only is asked the sampling, never the elicitation.
    let mut params = call("test_input_required_result_capabilities", json!({}));
    params["_meta"] = meta(json!({"sampling": {}}));
    let sampling_only = mcp.request("tools/call", params);
    let asked = input_required(&sampling_only)["inputRequests"].clone();
    assert_eq!(
        asked.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["greeting"],
        "{asked}"
    );
    assert_eq!(asked["greeting"]["method"], "sampling/createMessage");

    // A client declaring nothing is asked nothing: the tool that needs sampling is -32021
    // naming it, and no input-required result is sent.
    let mut params = call("test_missing_capability", json!({}));
    params["_meta"] = meta(json!({}));
    let missing = mcp.request("tools/call", params);
    assert_eq!(code(&missing), Some(-32021), "{missing}");
    assert_eq!(
        missing["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert_eq!(
        missing["error"]["data"]["seneschal/error"]["code"], "unsupported",
        "the call's own error travels too: {missing}"
    );
    // The initialize era never sees an input-required result.
    let mut legacy = fixtures();
    legacy.initialize("2025-11-25");
    let old = legacy.request(
        "tools/call",
        json!({"name": "test_input_required_result_elicitation", "arguments": {}}),
    );
    assert_eq!(old["result"]["isError"], true, "{old}");
    assert!(old["result"].get("inputRequests").is_none(), "{old}");
    legacy.finish();
    mcp.finish();
}

#[test]
fn over_http_a_tool_asks_and_completes_and_its_header_arguments_must_match_the_body() {
    let serve = Serve::start_bin(
        fixture_bin(),
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[],
        &[],
    );
    let tool = "test_input_required_result_elicitation";
    let (status, first) = post(&serve, 1, "tools/call", asking(call(tool, json!({}))), &[]);
    assert_eq!(status, 200, "{first}");
    let r = input_required(&first).clone();
    assert_eq!(
        r["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let (status, second) = post(
        &serve,
        2,
        "tools/call",
        asking(call(
            tool,
            json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))},
                   "requestState": r["requestState"]}),
        )),
        &[],
    );
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        complete(&second)["structuredContent"]["text"],
        "Hello, Alice!"
    );
    let (_, tampered) = post(
        &serve,
        3,
        "tools/call",
        asking(call(
            tool,
            json!({"requestState": format!("{}-TAMPERED", r["requestState"].as_str().unwrap())}),
        )),
        &[],
    );
    assert_eq!(code(&tampered), Some(-32602), "{tampered}");
    let mut params = call("test_missing_capability", json!({}));
    params["_meta"] = meta(json!({}));
    let (status, missing) = post(&serve, 4, "tools/call", params, &[]);
    assert_eq!((status, code(&missing)), (400, Some(-32021)), "{missing}");

    // SEP-2243: the tool lists its header argument, and the header must match the body.
    let (_, list) = post(&serve, 5, "tools/list", asking(json!({})), &[]);
    let custom = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "test_custom_header")
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(
        custom["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    let region =
        |value: &str| asking(json!({"name": "test_custom_header", "arguments": {"region": value}}));
    let accepted: &[(&str, &str)] = &[
        ("Hello", "=?base64?SGVsbG8=?="),
        ("eu-west", "eu-west"),
        // Without the whole wrapper a value is literal.
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
    ];
    for (i, (body, header)) in accepted.iter().enumerate() {
        let (status, answer) = post(
            &serve,
            10 + i as u64,
            "tools/call",
            region(body),
            &[("Mcp-Param-Region", header)],
        );
        assert_eq!(status, 200, "{header}: {answer}");
        assert_eq!(
            complete(&answer)["structuredContent"]["text"],
            format!("region: {body}")
        );
    }
    let refused: &[(&str, Option<&str>, &str)] = &[
        ("Hello", Some("=?base64?SGVsbG8?="), "Base64"),
        ("Hello", Some("=?base64?SGVs!!!bG8=?="), "Base64"),
        ("Hello", Some("Goodbye"), "does not match"),
        ("Hello", None, "is missing"),
    ];
    for (i, (body, header, needle)) in refused.iter().enumerate() {
        let extra: Vec<(&str, &str)> = header.iter().map(|h| ("Mcp-Param-Region", *h)).collect();
        let (status, answer) = post(&serve, 20 + i as u64, "tools/call", region(body), &extra);
        assert_eq!(
            (status, code(&answer)),
            (400, Some(-32020)),
            "{header:?}: {answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("Mcp-Param-Region") && message.contains(needle),
            "{message}"
        );
    }
    // A header for an argument the body does not give.
    let (status, answer) = post(
        &serve,
        30,
        "tools/call",
        asking(json!({"name": "test_custom_header", "arguments": {}})),
        &[("Mcp-Param-Region", "eu-west")],
    );
    assert_eq!((status, code(&answer)), (400, Some(-32020)), "{answer}");
    serve.finish();
}
/// A 2026-07-28 write is approved through an input-required result: the approval gate's
/// `elicitation/create` travels as `inputRequests.approval` with the review sentence, and
/// the retried call with the client's answer runs (accept) or is refused `not_approved`
/// (decline) — the repository untouched and the refusal audited.
#[test]
fn a_modern_write_is_approved_or_declined_through_an_input_required_result() {
    let d = crate::support::adr_repo();
    let dir = d.path();
    let mut mcp = Mcp::start_with(dir, &["--approval", "ask"], &[]);
    let create = |id: &str| {
        json!({"name": "knowledge_create", "arguments": {"kind": "guide", "id": id,
            "front_matter": {"title": "Releasing", "status": "draft"}, "body": "# Releasing\n"}})
    };
    for (id, action) in [("releasing", "accept"), ("declined", "decline")] {
        let first = mcp.request("tools/call", asking(create(id)));
        let r = input_required(&first).clone();
        let (key, ask) = approval_asked(&r);
        assert_eq!(ask["method"], "elicitation/create", "{first}");
        assert_eq!(
            ask["params"]["_meta"]["seneschal/capability"],
            "knowledge.create"
        );
        assert!(
            ask["params"]["message"].as_str().unwrap().contains(id),
            "{first}"
        );
        assert!(!dir.join(format!("docs/guides/{id}.md")).exists());
        let mut again = create(id);
        again["inputResponses"] = json!({ key: {"action": action} });
        again["requestState"] = r["requestState"].clone();
        let second = mcp.request("tools/call", asking(again));
        let result = complete(&second);
        if action == "accept" {
            assert_eq!(result["isError"], false, "{second}");
            assert!(dir.join("docs/guides/releasing.md").is_file());
        } else {
            assert_eq!(
                result["_meta"]["seneschal/error"]["code"], "not_approved",
                "{second}"
            );
            assert!(!dir.join("docs/guides/declined.md").exists());
        }
    }
    // The approval of one input is not the approval of another: a state made for
    // `releasing` does not carry to `other`.
    let first = mcp.request("tools/call", asking(create("other")));
    let mut again = create("elsewhere");
    again["inputResponses"] = json!({});
    again["requestState"] = input_required(&first)["requestState"].clone();
    let refused = mcp.request("tools/call", asking(again));
    assert_eq!(code(&refused), Some(-32602), "{refused}");
    let _ = mcp.finish();
    let audit: Vec<Value> = std::fs::read_to_string(dir.join(".seneschal/audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let applied = audit
        .iter()
        .position(|r| r["outcome"] == "applied")
        .expect("the accepted write is audited");
    assert!(
        audit[applied + 1..]
            .iter()
            .any(|r| r["code"] == "not_approved" && r["outcome"] == "refused"),
        "the decline is audited: {audit:?}"
    );
    // A first round only asks: the approval it waits for is not a refusal.
    assert_eq!(
        audit.iter().filter(|r| r["code"] == "not_approved").count(),
        1,
        "only the decline is a refusal: {audit:?}"
    );
}

/// An answer nobody asked for approves nothing: under `--approval deny`, a first-round
/// 2026-07-28 write carrying `inputResponses.approval: accept` (no question asked, no state;
/// the client declaring elicitation or not) is asked again or refused, never applied; a
/// later round's answer under a key the state does not list is ignored too. Over stdio and
/// `/mcp`.
#[test]
fn unsolicited_answers_approve_nothing() {
    let d = crate::support::adr_repo();
    let dir = d.path();
    let create = |id: &str, with_elicitation: bool| {
        let mut p = json!({"name": "knowledge_create", "arguments": {"kind": "guide", "id": id,
            "front_matter": {"title": "Unasked", "status": "draft"}, "body": "# Unasked\n"},
            "inputResponses": {"approval": {"action": "accept"}}});
        p["_meta"] = if with_elicitation {
            meta(json!({"elicitation": {}}))
        } else {
            meta(json!({}))
        };
        p
    };
    let mut mcp = Mcp::start_with(dir, &["--approval", "deny"], &[]);
    for (id, elicits) in [("stdio-bare", false), ("stdio-elicits", true)] {
        let answer = mcp.request("tools/call", create(id, elicits));
        let r = &answer["result"];
        let asked_again = r["resultType"] == "input_required";
        let refused = r["_meta"]["seneschal/error"]["code"] == "not_approved"
            || answer["error"]["code"].is_i64();
        assert!(asked_again || refused, "{answer}");
        assert!(
            !dir.join(format!("docs/guides/{id}.md")).exists(),
            "{answer}"
        );
        if asked_again {
            // The state lists `approval` only: an answer under another key counts for nothing.
            let mut again = create(id, elicits);
            again["inputResponses"] = json!({"other": {"action": "accept"}});
            again["requestState"] = r["requestState"].clone();
            let second = mcp.request("tools/call", again);
            assert_eq!(second["result"]["resultType"], "input_required", "{second}");
            assert!(!dir.join(format!("docs/guides/{id}.md")).exists());
        }
    }
    let (_, _, err) = mcp.finish();
    assert!(err.contains("did not ask: ignored"), "{err}");
    let serve = Serve::start_args(dir, &["--approval", "deny"], &[]);
    let (_, answer) = post(&serve, 40, "tools/call", create("http-bare", false), &[]);
    assert!(
        answer["result"]["resultType"] == "input_required"
            || answer["result"]["_meta"]["seneschal/error"]["code"] == "not_approved"
            || answer["error"]["code"].is_i64(),
        "{answer}"
    );
    assert!(!dir.join("docs/guides/http-bare.md").exists(), "{answer}");
    serve.finish();
}

/// Over `/mcp`, a 2026-07-28 client proves nothing by answering: without the desk secret its
/// write is never put to it as an input-required result (it waits on the desk, here until a
/// short timeout), and an answer it carries applies nothing; with the secret on both rounds
/// it is asked, and its accept applies the write.
#[test]
fn a_modern_client_on_mcp_is_asked_only_with_the_desk_secret() {
    let d = scratch_repo();
    let dir = d.path();
    let secret = "a-desk-secret-the-person-gave-the-client-0123";
    let serve = Serve::start_args(
        dir,
        &["--approval", "ask", "--approval-timeout", "1"],
        &[("SENESCHAL_DESK_SECRET", secret)],
    );
    let write = |path: &str| {
        asking(json!({"name": "files_write", "arguments": {"path": path, "content": "x\n"}}))
    };
    let (_, answer) = post(&serve, 1, "tools/call", write("stranger.txt"), &[]);
    assert_ne!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{answer}"
    );
    assert!(!dir.join("stranger.txt").exists());
    let bearer = format!("Bearer {secret}");
    let auth = [("Authorization", bearer.as_str())];
    let (_, first) = post(&serve, 2, "tools/call", write("person.txt"), &auth);
    let r = input_required(&first).clone();
    let (key, ask) = approval_asked(&r);
    assert_eq!(ask["method"], "elicitation/create");
    let mut again = write("person.txt");
    again["inputResponses"] = json!({ key: {"action": "accept"} });
    again["requestState"] = r["requestState"].clone();
    // The answer presented without the secret approves nothing.
    let (_, stolen) = post(&serve, 3, "tools/call", again.clone(), &[]);
    assert_eq!(
        stolen["result"]["_meta"]["seneschal/error"]["code"], "not_approved",
        "{stolen}"
    );
    assert!(!dir.join("person.txt").exists());
    let (_, second) = post(&serve, 4, "tools/call", again, &auth);
    assert_eq!(complete(&second)["isError"], false, "{second}");
    assert!(dir.join("person.txt").is_file());
    serve.finish();
}

/// An answer binds the plan it was given for: when the file a write plans to edit changes
/// between the question and the call made again with the answer, the answer is not the
/// person's to the new plan — the call is asked again about the new one, and nothing is
/// written on the old answer.
#[test]
fn a_modern_answer_binds_the_plan_it_was_asked_about() {
    let d = scratch_repo();
    let dir = d.path();
    std::fs::write(dir.join("notes.txt"), "one\ntwo\n").unwrap();
    let mut mcp = Mcp::start_with(dir, &["--approval", "ask"], &[]);
    let edit = || {
        asking(
            json!({"name": "files_edit", "arguments": {"path": "notes.txt",
            "edits": [{"old": "two", "new": "three"}]}}),
        )
    };
    let first = mcp.request("tools/call", edit());
    let r = input_required(&first).clone();
    let (key, _) = approval_asked(&r);
    // The file changes after the person saw the diff.
    std::fs::write(dir.join("notes.txt"), "zero\none\ntwo\n").unwrap();
    let mut again = edit();
    again["inputResponses"] = json!({ key.clone(): {"action": "accept"} });
    again["requestState"] = r["requestState"].clone();
    let second = mcp.request("tools/call", again);
    let r2 = input_required(&second).clone();
    let (key2, ask2) = approval_asked(&r2);
    assert_ne!(key2, key, "a new plan is a new question");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "zero\none\ntwo\n",
        "nothing was written on the old answer"
    );
    assert!(
        ask2["params"]["message"].as_str().is_some(),
        "the new question shows its sentence: {second}"
    );
    let _ = mcp.finish();
}
