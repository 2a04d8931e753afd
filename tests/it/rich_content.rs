//! Rich content, binary resources and schemas typify cannot type, over the built binary: the
//! MCP conformance fixtures (`tests/fixtures/mcp-conformance/`) compiled in with the cargo
//! feature `conformance-fixtures`. This module builds that binary once, into
//! `<target>/conformance` (the folder `.ci/mcp-conformance.sh` reads), and drives it over MCP
//! stdio (both eras), MCP Streamable HTTP, the HTTP API and the command line.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use crate::support::stderr;

/// The 1x1 PNG the fixtures embed, base64 as every transport carries it.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `seneschal` built with `--features conformance-fixtures`, once per test run, beside the
/// test's own target folder (the tasks tests drive it too).
pub fn fixture_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let own = PathBuf::from(env!("CARGO_BIN_EXE_seneschal"));
        let target = own
            .parent()
            .and_then(Path::parent)
            .expect("the binary sits in <target>/<profile>")
            .join("conformance");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let o = Command::new(cargo)
            .args([
                "build",
                "--features",
                "conformance-fixtures",
                "--bin",
                "seneschal",
            ])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(root())
            .output()
            .expect("cargo runs");
        assert!(
            o.status.success(),
            "the fixture build failed:\n{}",
            stderr(&o)
        );
        target.join("debug/seneschal")
    })
}

fn mcp() -> Mcp {
    Mcp::start_bin(fixture_bin(), root(), &[], &[])
}

/// The text block that opens a result: the answer's compact text rendering (ADR 0007).
fn text_block(result: &Value) -> &str {
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

/// An image answer: the text block first, then the declared image block, the same as
/// `structuredContent.content`.
fn assert_image_result(result: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    let image = json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"});
    assert_eq!(result["content"].as_array().unwrap().len(), 2, "{result}");
    assert_eq!(result["content"][1], image);
    assert_eq!(result["structuredContent"], json!({"content": [image]}));
    let text = text_block(result);
    assert!(
        text.starts_with("content: 1 × ") && text.contains("image/png"),
        "{text}"
    );
}

fn assert_embedded_result(result: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    let block = &result["content"][1];
    assert_eq!(block["type"], "resource", "{result}");
    assert_eq!(
        block["resource"],
        json!({"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."})
    );
    assert_eq!(result["structuredContent"]["content"][0], *block);
}

fn assert_blob(contents: &Value) {
    assert_eq!(
        contents,
        &json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_BASE64}])
    );
}

#[test]
fn image_and_embedded_resource_blocks_over_mcp_stdio_in_both_eras() {
    let mut m = mcp();
    m.initialize("2025-11-25");
    let r = m.request(
        "tools/call",
        json!({"name": "test_image_content", "arguments": {}}),
    );
    assert_image_result(&r["result"]);
    let r = m.request(
        "tools/call",
        json!({"name": "test_embedded_resource", "arguments": {}}),
    );
    assert_embedded_result(&r["result"]);
    // The mixed answer opens with its own text, which speaks for it: its text, image and
    // resource blocks in the handler's order, and the JSON as the structured content only.
    let r = m.request("tools/call", json!({"name": "test_multiple_content_types"}));
    let kinds: Vec<&str> = r["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "Multiple content types test:"
    );
    assert_eq!(
        r["result"]["structuredContent"]["content"],
        r["result"]["content"]
    );
    // tools/list announces the `content` field; its full schema, with the declared blocks,
    // is the capability's (`capabilities_show`, OpenAPI).
    let list = m.request("tools/list", json!({}));
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "test_image_content")
        .unwrap()
        .clone();
    assert_eq!(
        tool["outputSchema"]["properties"]["content"]["type"], "array",
        "{tool}"
    );
    let shown = m.request(
        "tools/call",
        json!({"name": "capabilities_show", "arguments": {"id": "conformance.image_content"}}),
    );
    let items = &shown["result"]["structuredContent"]["output"]["properties"]["content"]["items"];
    assert_eq!(
        items["oneOf"][0]["properties"]["type"]["const"], "image",
        "{shown}"
    );
    assert_eq!(tool["outputSchema"]["required"], json!(["content"]));

    let mut m = mcp();
    let r = m.modern(
        "tools/call",
        json!({"name": "test_image_content", "arguments": {}}),
    );
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_image_result(&r["result"]);
    let r = m.modern(
        "tools/call",
        json!({"name": "test_embedded_resource", "arguments": {}}),
    );
    assert_embedded_result(&r["result"]);
}

#[test]
fn a_binary_resource_is_read_as_a_blob_in_both_eras() {
    let mut m = mcp();
    m.initialize("2025-11-25");
    let r = m.request("resources/read", json!({"uri": "test://static-binary"}));
    assert_blob(&r["result"]["contents"]);
    // Listed with its own media type.
    let list = m.request("resources/list", json!({}));
    let listed = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "test://static-binary")
        .cloned()
        .expect("listed");
    assert_eq!(listed["mimeType"], "image/png");
    let mut m = mcp();
    let r = m.modern("resources/read", json!({"uri": "test://static-binary"}));
    assert_blob(&r["result"]["contents"]);
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    // A textual resource still answers text.
    let r = m.modern("resources/read", json!({"uri": "test://static-text"}));
    assert!(r["result"]["contents"][0]["text"].is_string(), "{r}");
    assert!(r["result"]["contents"][0].get("blob").is_none(), "{r}");
}

#[test]
fn http_and_the_command_line_answer_the_same_json_with_base64_fields() {
    let s = Serve::start_bin(fixture_bin(), root(), &[], &[]);
    let (status, image) = s.json("GET", "/api/v1/conformance/image", None);
    assert_eq!(status, 200, "{image}");
    assert_eq!(
        image,
        json!({"content": [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]})
    );
    let (status, blob) = s.json("GET", "/api/v1/conformance/static-binary", None);
    assert_eq!(status, 200, "{blob}");
    assert_eq!(
        blob,
        json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_BASE64})
    );
    // MCP over Streamable HTTP carries the blocks as stdio does.
    let r = s
        .mcp(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_embedded_resource","arguments":{}}}"#)
        .json();
    assert_embedded_result(&r["result"]);
    let r = s
        .mcp(br#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-binary"}}"#)
        .json();
    assert_blob(&r["result"]["contents"]);
    s.finish();

    let cli = |args: &[&str]| {
        let o = Command::new(fixture_bin())
            .args(args)
            .current_dir(root())
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).expect("JSON")
    };
    assert_eq!(cli(&["fixture", "image"]), image);
    assert_eq!(cli(&["fixture", "static-binary"]), blob);
    assert_eq!(
        cli(&["call", "conformance.embedded_resource", "--input", "{}"])["content"][0]["resource"]
            ["uri"],
        "test://embedded-resource"
    );
}

/// The fixture's input schema (if/then/else, allOf/anyOf, a `$ref` into `$defs`) is one typify
/// cannot type: it built, the handler takes JSON, and the executor holds every keyword.
#[test]
fn an_if_then_else_schema_builds_and_validates_input() {
    let good = json!({"name": "Ada", "email": "ada@example.org", "address": {"city": "London"}});
    // then: contactMethod phone requires phone; the $ref'd address must hold strings.
    let cases = [
        (
            json!({"name": "Ada", "contactMethod": "phone", "email": "a@b"}),
            "",
        ),
        (
            json!({"name": "Ada", "email": "a@b", "address": {"city": 5}}),
            "/address/city",
        ),
        (json!({"name": "Ada"}), ""),
        (json!({"name": "Ada", "email": "a@b", "extra": 1}), ""),
    ];
    let mut m = mcp();
    m.initialize("2025-11-25");
    let r = m.request(
        "tools/call",
        json!({"name": "json_schema_2020_12_tool", "arguments": good}),
    );
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"text": "contact recorded: Ada"}),
        "{r}"
    );
    for (input, pointer) in &cases {
        let r = m.request(
            "tools/call",
            json!({"name": "json_schema_2020_12_tool", "arguments": input}),
        );
        let e = &r["result"]["_meta"]["seneschal/error"];
        assert_eq!(r["result"]["isError"], true, "{input}: {r}");
        assert_eq!(e["code"], "invalid_input", "{input}: {r}");
        assert_eq!(e["pointer"], *pointer, "{input}: {r}");
    }
    // Listed with every keyword, as declared.
    let list = m.request("tools/list", json!({}));
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .cloned()
        .unwrap();
    let schema = &tool["inputSchema"];
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    for key in ["if", "then", "else", "allOf"] {
        assert!(schema.get(key).is_some(), "{key}: {schema}");
    }

    // The same refusal over HTTP: a 400 problem with the code and the pointer.
    let s = Serve::start_bin(fixture_bin(), root(), &[], &[]);
    let (status, ok) = s.json("POST", "/api/v1/conformance/contact", Some(&good));
    assert_eq!(
        (status, &ok),
        (200, &json!({"text": "contact recorded: Ada"}))
    );
    let (status, problem) = s.json("POST", "/api/v1/conformance/contact", Some(&cases[1].0));
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["code"], "invalid_input", "{problem}");
    assert_eq!(problem["pointer"], "/address/city", "{problem}");
    s.finish();
}

/// A query exposed at a URI template is listed by `resources/templates/list` (not by
/// `resources/list`), and a read of a matching URI calls it with the variables as arguments.
#[test]
fn a_uri_template_reads_its_query_with_the_variables_as_arguments() {
    for modern in [false, true] {
        let mut m = mcp();
        if !modern {
            m.initialize("2025-11-25");
        }
        let mut ask = |method: &str, params: Value| {
            if modern {
                m.modern(method, params)
            } else {
                m.request(method, params)
            }
        };
        let r = ask("resources/read", json!({"uri": "test://template/123/data"}));
        let contents = &r["result"]["contents"][0];
        assert_eq!(contents["uri"], "test://template/123/data", "{r}");
        assert_eq!(contents["mimeType"], "application/json", "{r}");
        let data: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            data,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
        // The template itself, or a URI that does not fit it, is no resource.
        for miss in ["test://template/{id}/data", "test://template/1/2/data"] {
            let r = ask("resources/read", json!({"uri": miss}));
            assert!(r.get("error").is_some(), "{miss}: {r}");
        }
        let t = ask("resources/templates/list", json!({}));
        let listed: Vec<&str> = t["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        assert!(listed.contains(&"test://template/{id}/data"), "{t}");
        let l = ask("resources/list", json!({}));
        assert!(!l.to_string().contains("test://template/"), "{l}");
    }
}
