//! The contract digest in MCP: the `initialize` result and the `server/discover` result
//! carry `_meta["seneschal/digest"]`, equal to the `digest` of `generated/contract.lock`,
//! to the compiled-in `registry::projections::DIGEST` and to the HTTP server card's
//! `_meta["seneschal/digest"]`; over stdio and over Streamable HTTP alike.

use std::path::Path;

use crate::support::http::Serve;
use crate::support::mcp::{modern_meta, Mcp, MODERN};
use serde_json::{json, Value};

fn lock_digest() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lock: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("generated/contract.lock")).expect("the lock"),
    )
    .expect("the lock is JSON");
    let digest = lock["digest"].as_str().expect("a digest").to_string();
    assert!(digest.starts_with("sha256:"), "{digest}");
    digest
}

#[test]
fn initialize_and_discover_carry_the_contract_digest_over_stdio() {
    let digest = lock_digest();
    assert_eq!(seneschal::registry::projections::DIGEST, digest);
    for version in ["2024-11-05", "2025-11-25"] {
        let mut mcp = Mcp::start(&[]);
        let init = mcp.initialize(version);
        assert_eq!(
            init["result"]["_meta"]["seneschal/digest"], digest,
            "{init}"
        );
        mcp.finish();
    }
    let mut mcp = Mcp::start(&[]);
    let discover = mcp.modern("server/discover", json!({}));
    let meta = &discover["result"]["_meta"];
    assert_eq!(meta["seneschal/digest"], digest, "{discover}");
    // The server's own `_meta` entry sits beside it, not in its place.
    assert!(
        meta["io.modelcontextprotocol/serverInfo"].is_object(),
        "{discover}"
    );
    mcp.finish();
}

#[test]
fn the_digest_is_the_same_on_the_card_and_over_streamable_http() {
    let digest = lock_digest();
    let s = Serve::start(Path::new(env!("CARGO_MANIFEST_DIR")), &[]);
    let (status, card) = s.json("GET", "/.well-known/mcp/server-card.json", None);
    assert_eq!(status, 200);
    assert_eq!(card["_meta"]["seneschal/digest"], digest, "{card}");
    let (status, init) = s.json(
        "POST",
        "/mcp",
        Some(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "digest-test", "version": "0"}}}),
        ),
    );
    assert_eq!(status, 200, "{init}");
    assert_eq!(
        init["result"]["_meta"]["seneschal/digest"], digest,
        "{init}"
    );
    let (status, discover) = s.json_with(
        "POST",
        "/mcp",
        &[
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "server/discover"),
        ],
        Some(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover",
            "params": {"_meta": modern_meta(MODERN)}}),
        ),
    );
    assert_eq!(status, 200, "{discover}");
    assert_eq!(
        discover["result"]["_meta"]["seneschal/digest"], digest,
        "{discover}"
    );
    s.finish();
}
