//! The axum anchor: `axum-anchor ADDR` serves `GET /api/v1/server/status` with a JSON of the
//! same shape and size as seneschal's `server.status` answer, prints `listening on http://ADDR`
//! on stdout and exits when stdin closes, like `seneschal serve`. Tokio's multi-thread runtime
//! with its default worker count (one per core).

use axum::{routing::get, Json, Router};
use serde_json::{json, Value};
use std::time::Instant;
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".to_string());
    let repo = std::env::args().nth(2).unwrap_or_else(|| "/tmp/repo".to_string());
    let started = Instant::now();
    let app = Router::new().route(
        "/api/v1/server/status",
        get(move || {
            let repo = repo.clone();
            async move { Json(status(&repo, started)) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    println!("listening on http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async {
        let mut sink = [0u8; 64];
        let mut stdin = tokio::io::stdin();
        while let Ok(n) = stdin.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
        std::process::exit(0);
    });
    axum::serve(listener, app).await.expect("serve");
}

/// The same fields as seneschal's `server.status`, computed per request like it.
fn status(repo: &str, started: Instant) -> Value {
    json!({
        "name": "seneschal",
        "version": "0.1.1",
        "pid": std::process::id(),
        "uptime_ms": started.elapsed().as_millis() as u64,
        "repository": repo,
        "allowed_effects": ["read", "process_state", "repository_write"],
        "capabilities": {
            "total": 23, "executable": 23, "planned": 0,
            "read": 16, "process_state": 3, "repository_write": 4,
        }
    })
}
