//! Prompts from skills, through the built binary: a skill is listed by `prompts/list` and
//! rendered by `prompts/get` with its arguments, its embedded knowledge objects and its images,
//! over MCP stdio in both eras and over `POST /mcp`; a missing required argument is -32602; a
//! secret in a skill's body is redacted; `completion/complete` completes a prompt's argument and
//! a resource template's variable.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::http::Serve;
use crate::support::mcp::{code, modern_meta, Mcp, MODERN};
use crate::support::scratch_repo;

/// The bytes of the skill's image and their base64.
const IMAGE: &[u8] = b"\x89PNG\r\n\x1a\nseneschal";
const IMAGE_BASE64: &str = "iVBORw0KGgpzZW5lc2NoYWw=";

/// A token shape the redaction recognises, planted in a skill's body.
fn secret() -> String {
    format!("ghp_{}", "Pr0mptS3cr3t".repeat(3))
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A repository with two skills: `review` (arguments, an embedded skill, an image, a secret)
/// and `helper`.
fn repo() -> tempfile::TempDir {
    let dir = scratch_repo();
    let r = dir.path();
    write(
        r,
        "skills/review/SKILL.md",
        format!(
            "---\n\
             name: review\n\
             title: Review a change\n\
             description: Reviews the current change for one concern.\n\
             arguments:\n\
             \x20 - name: topic\n\
             \x20   description: The concern to review for.\n\
             \x20   required: true\n\
             \x20   enum: [security, style, speed]\n\
             \x20 - name: depth\n\
             \x20   examples: [shallow, deep]\n\
             ---\n\
             Review the change for {{{{topic}}}} ({{{{ depth }}}} pass). {{{{unknown}}}} stays.\n\
             The deploy token is {}.\n\
             \n\
             seneschal://knowledge/skill/helper\n\
             \n\
             ![the flow](flow.png)\n\
             \n\
             Then write the findings down.\n\
             ```\n\
             seneschal://knowledge/skill/helper\n\
             ```\n",
            secret()
        )
        .as_bytes(),
    );
    write(r, "skills/review/flow.png", IMAGE);
    write(
        r,
        "skills/helper/SKILL.md",
        b"---\nname: helper\ndescription: Helps.\n---\nHelper text.\n",
    );
    dir
}

/// What every era's `prompts/list` shows of `review`.
fn check_list(answer: &Value) {
    let prompts = answer["result"]["prompts"].as_array().expect("prompts");
    let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["helper", "review"], "{answer}");
    let review = &prompts[1];
    assert_eq!(review["title"], "Review a change");
    assert_eq!(
        review["description"],
        "Reviews the current change for one concern."
    );
    assert_eq!(
        review["arguments"],
        json!([
            {"name": "topic", "description": "The concern to review for.", "required": true},
            {"name": "depth", "required": false},
        ]),
        "the completion values stay out of the list"
    );
}

/// What every era's `prompts/get review {topic: security}` renders.
fn check_get(answer: &Value) {
    let result = &answer["result"];
    assert_eq!(
        result["description"], "Reviews the current change for one concern.",
        "{answer}"
    );
    let messages = result["messages"].as_array().expect("messages");
    assert!(messages.iter().all(|m| m["role"] == "user"), "{answer}");
    let kinds: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["content"]["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "resource", "image", "text"], "{answer}");
    let first = messages[0]["content"]["text"].as_str().unwrap();
    assert!(
        first.starts_with("Review the change for security ( pass). {{unknown}} stays."),
        "{first}"
    );
    assert!(first.contains("[REDACTED]"), "{first}");
    let whole = answer.to_string();
    assert!(!whole.contains(&secret()), "the secret leaked: {whole}");
    let embedded = &messages[1]["content"]["resource"];
    assert_eq!(embedded["uri"], "seneschal://knowledge/skill/helper");
    assert_eq!(embedded["mimeType"], "text/markdown");
    assert!(embedded["text"].as_str().unwrap().contains("Helper text."));
    assert_eq!(
        messages[2]["content"],
        json!({"type": "image", "data": IMAGE_BASE64, "mimeType": "image/png"})
    );
    // A URI inside a fenced code block stays text.
    assert_eq!(
        messages[3]["content"]["text"],
        "Then write the findings down.\n```\nseneschal://knowledge/skill/helper\n```"
    );
}

fn check_missing(answer: &Value) {
    assert_eq!(code(answer), Some(-32602), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("review") && message.contains("`topic`"),
        "{message}"
    );
}

#[test]
fn a_skill_is_a_prompt_in_the_initialize_era() {
    let dir = repo();
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    let init = mcp.initialize("2025-11-25");
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": false})
    );
    assert_eq!(init["result"]["capabilities"]["completions"], json!({}));
    check_list(&mcp.request("prompts/list", json!({})));
    check_get(&mcp.request(
        "prompts/get",
        json!({"name": "review", "arguments": {"topic": "security"}}),
    ));
    check_missing(&mcp.request("prompts/get", json!({"name": "review"})));
    let unknown = mcp.request("prompts/get", json!({"name": "nothing"}));
    assert_eq!(code(&unknown), Some(-32602), "{unknown}");
    let undeclared = mcp.request(
        "prompts/get",
        json!({"name": "helper", "arguments": {"topic": "x"}}),
    );
    assert_eq!(code(&undeclared), Some(-32602), "{undeclared}");
    assert!(
        undeclared["error"]["message"]
            .as_str()
            .unwrap()
            .contains("takes no argument `topic`"),
        "{undeclared}"
    );
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

#[test]
fn a_skill_is_a_prompt_in_the_2026_era() {
    let dir = repo();
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    let discover = mcp.modern("server/discover", json!({}));
    assert_eq!(
        discover["result"]["capabilities"]["prompts"],
        json!({"listChanged": false})
    );
    let list = mcp.modern("prompts/list", json!({}));
    check_list(&list);
    assert_eq!(
        (&list["result"]["ttlMs"], &list["result"]["cacheScope"]),
        (&json!(0), &json!("private"))
    );
    let get = mcp.modern(
        "prompts/get",
        json!({"name": "review", "arguments": {"topic": "security"}}),
    );
    check_get(&get);
    assert_eq!(get["result"]["resultType"], "complete");
    check_missing(&mcp.modern("prompts/get", json!({"name": "review", "arguments": {}})));
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

#[test]
fn a_skill_is_a_prompt_over_http() {
    let dir = repo();
    let serve = Serve::start(dir.path(), &[]);
    let post = |method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        serve.mcp(body.to_string().as_bytes()).json()
    };
    check_list(&post("prompts/list", json!({})));
    check_get(&post(
        "prompts/get",
        json!({"name": "review", "arguments": {"topic": "security"}}),
    ));
    check_missing(&post("prompts/get", json!({"name": "review"})));
    // The 2026-07-28 era: per-request `_meta`, `Mcp-Method` and `Mcp-Name` headers.
    let (status, modern) = serve.json_with(
        "POST",
        "/mcp",
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "prompts/get"),
            ("Mcp-Name", "review"),
        ],
        Some(&json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
            "params": {"name": "review", "arguments": {"topic": "security"},
                       "_meta": modern_meta(MODERN)}})),
    );
    assert_eq!(status, 200, "{modern}");
    check_get(&modern);
    assert_eq!(modern["result"]["resultType"], "complete");
    let done = post(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "review"},
               "argument": {"name": "topic", "value": "s"}}),
    );
    assert_eq!(
        done["result"]["completion"],
        json!({"values": ["security", "speed", "style"], "total": 3, "hasMore": false}),
        "{done}"
    );
    serve.finish();
}

#[test]
fn completion_offers_argument_values_and_template_ids() {
    let dir = repo();
    let mut mcp = Mcp::start_with(dir.path(), &[], &[]);
    mcp.initialize("2025-11-25");
    let complete = |mcp: &mut Mcp, reference: Value, name: &str, value: &str| {
        mcp.request(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}}),
        )
    };
    let prompt = json!({"type": "ref/prompt", "name": "review"});
    let values = |a: &Value| a["result"]["completion"]["values"].clone();
    assert_eq!(
        values(&complete(&mut mcp, prompt.clone(), "topic", "s")),
        json!(["security", "speed", "style"])
    );
    // No enum: the examples are offered.
    assert_eq!(
        values(&complete(&mut mcp, prompt.clone(), "depth", "")),
        json!(["deep", "shallow"])
    );
    let skill = json!({"type": "ref/resource", "uri": "seneschal://knowledge/skill/{id}"});
    assert_eq!(
        values(&complete(&mut mcp, skill, "id", "h")),
        json!(["helper"])
    );
    let any = json!({"type": "ref/resource", "uri": "seneschal://knowledge/{kind}/{id}"});
    assert_eq!(
        values(&complete(&mut mcp, any.clone(), "kind", "")),
        json!(["adr", "guide", "instructions", "skill"])
    );
    // In the modern era too.
    let modern = mcp.modern(
        "completion/complete",
        json!({"ref": any, "argument": {"name": "id", "value": "r"},
               "context": {"arguments": {"kind": "skill"}}}),
    );
    assert_eq!(values(&modern), json!(["review"]), "{modern}");
    let wrong = complete(&mut mcp, prompt, "nope", "");
    assert_eq!(code(&wrong), Some(-32602), "{wrong}");
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

/// The guard of the image read: a path that climbs out of the repository, and a link that
/// leaves it, are refused with the reason, never read.
#[test]
fn an_image_outside_the_repository_is_refused() {
    let dir = scratch_repo();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.png"), IMAGE).unwrap();
    let r = dir.path();
    write(
        r,
        "skills/climb/SKILL.md",
        b"---\nname: climb\ndescription: Climbs.\n---\n![x](../../../../secret.png)\n",
    );
    write(
        r,
        "skills/link/SKILL.md",
        b"---\nname: link\ndescription: Links.\n---\n![x](out.png)\n",
    );
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        r.join("skills/link/out.png"),
    )
    .unwrap();
    let mut mcp = Mcp::start_with(r, &[], &[]);
    mcp.initialize("2025-11-25");
    let climb = mcp.request("prompts/get", json!({"name": "climb"}));
    assert_eq!(code(&climb), Some(-32603), "{climb}");
    assert!(
        climb["error"]["message"]
            .as_str()
            .unwrap()
            .contains("leaves the repository"),
        "{climb}"
    );
    let link = mcp.request("prompts/get", json!({"name": "link"}));
    assert_eq!(code(&link), Some(-32603), "{link}");
    assert!(!link.to_string().contains(IMAGE_BASE64), "{link}");
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

/// Any kind declared `prompt: true` in `.seneschal/kinds.yaml` serves prompts; a kind without
/// it serves none, and a skill whose `arguments` break the schema is a finding, not a prompt.
#[test]
fn a_repository_kind_declares_its_prompts() {
    let dir = scratch_repo();
    let r = dir.path();
    let kind = |name: &str, prompt: bool| {
        format!(
            "  {name}:\n    description: Notes.\n    files: [\"{name}/*.md\"]\n    \
             id: {{ file_pattern: \"^(.+)\\\\.md$\" }}\n    schema: note.schema.json\n    \
             prompt: {prompt}\n"
        )
    };
    write(
        r,
        ".seneschal/kinds.yaml",
        format!("kinds:\n{}{}", kind("asks", true), kind("notes", false)).as_bytes(),
    );
    write(
        r,
        ".seneschal/schemas/note.schema.json",
        br#"{"type": "object", "required": ["description"]}"#,
    );
    write(
        r,
        "asks/greet_user.md",
        b"---\ndescription: Greets.\narguments: [{name: who, required: true}]\n---\nHello {{who}}.\n",
    );
    write(
        r,
        "notes/plain.md",
        b"---\ndescription: A note.\n---\nText.\n",
    );
    write(
        r,
        "skills/broken/SKILL.md",
        b"---\nname: broken\ndescription: Broken.\narguments: [{name: 5}]\n---\nx\n",
    );
    // A lax schema lets these through; as prompts they are findings all the same.
    write(
        r,
        "asks/twice.md",
        b"---\ndescription: Twice.\narguments: [{name: who}, {name: who}]\n---\nx\n",
    );
    write(
        r,
        "asks/shapeless.md",
        b"---\ndescription: Shapeless.\narguments: everyone\n---\nx\n",
    );
    let check = crate::support::json(&crate::support::run_in(r, &["knowledge", "check"]));
    let findings: Vec<(String, String)> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (file, pointer) in [
        ("skills/broken/SKILL.md", "/arguments/0/name"),
        ("asks/twice.md", "/arguments/1/name"),
        ("asks/shapeless.md", "/arguments"),
    ] {
        assert!(
            findings.contains(&(file.to_string(), pointer.to_string())),
            "{file} {pointer}: {check}"
        );
    }
    let mut mcp = Mcp::start_with(r, &[], &[]);
    mcp.initialize("2025-11-25");
    let list = mcp.request("prompts/list", json!({}));
    let names: Vec<&str> = list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["greet_user"], "{list}");
    let got = mcp.request(
        "prompts/get",
        json!({"name": "greet_user", "arguments": {"who": "Ada"}}),
    );
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Hello Ada.",
        "{got}"
    );
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}

/// An image over the cap (1 MiB) is refused with its size, never sent.
#[test]
fn an_image_over_the_cap_is_refused() {
    let dir = scratch_repo();
    let r = dir.path();
    write(
        r,
        "skills/big/SKILL.md",
        b"---\nname: big\ndescription: Big.\n---\n![x](big.png)\n",
    );
    write(r, "skills/big/big.png", &vec![0u8; 1024 * 1024 + 1]);
    let mut mcp = Mcp::start_with(r, &[], &[]);
    mcp.initialize("2025-11-25");
    let big = mcp.request("prompts/get", json!({"name": "big"}));
    assert_eq!(code(&big), Some(-32603), "{big}");
    let message = big["error"]["message"].as_str().unwrap();
    assert!(message.contains("big.png"), "{message}");
    let (status, _, _) = mcp.finish();
    assert!(status.success());
}
