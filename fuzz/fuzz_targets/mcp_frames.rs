//! Fuzz target: a stdio byte stream into the MCP server (both eras), through the real line
//! reader `seneschal::mcp::stdio::serve` with a small line cap so that overlong lines are
//! reached too.
//!
//! Invariants, per line of input (split on `\n`, a trailing `\r` dropped, as the reader does):
//! - a blank line gets no answer; a line over the cap gets -32600 with a null id;
//! - text that is not JSON gets -32700 with a null id; JSON that is not an object, or an id
//!   that is neither a string nor a number, gets -32600 with a null id;
//! - a request (an object with a string or number `id` and a `method`) gets exactly one answer
//!   with that id (a stream holding `notifications/cancelled` is skipped: a cancelled request
//!   goes unanswered); a notification (no `id`, `jsonrpc` "2.0", a string `method`) and a client
//!   response (an `id`, `result` or `error`, no `method`) get none;
//! - every answer is one line of JSON-RPC 2.0 with exactly one of `result` and `error`, and an
//!   error's code is one of the documented ones;
//! - no handler panics (libfuzzer-sys aborts on any panic, even one the server catches).

#![no_main]

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

use seneschal::context::Context;
use seneschal::mcp::stdio;
use seneschal::policy::Effect;

/// The line cap of this target: small, so that the overlong path is exercised.
const CAP: usize = 4096;

/// The error codes the MCP projection documents.
const CODES: &[i64] = &[
    -32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -32002,
];

/// A small scratch repository (not a git one): a text file, a binary one, a secret, a dir.
fn repo() -> &'static PathBuf {
    static REPO: OnceLock<PathBuf> = OnceLock::new();
    REPO.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("seneschal-fuzz-mcp-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("scratch dir");
        std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").expect("a file");
        std::fs::write(dir.join("bin.dat"), b"\x00\x01\x02").expect("a file");
        std::fs::write(dir.join(".env"), "TOKEN=abcdefghijkl\n").expect("a file");
        std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").expect("a file");
        dir
    })
}

/// What one line must produce: `None` (no answer) or `Some(id)` (an answer with that id).
fn expected(line: &[u8]) -> Option<Value> {
    if line.len() > CAP {
        return Some(Value::Null);
    }
    let text = line.strip_suffix(b"\r").unwrap_or(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Ok(v) = serde_json::from_slice::<Value>(text) else {
        return Some(Value::Null);
    };
    let Value::Object(obj) = v else {
        return Some(Value::Null);
    };
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        Some(_) => return Some(Value::Null),
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(reply_id);
    }
    match obj.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Some(reply_id),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            return None
        }
        None => return Some(reply_id),
    }
    // A request is answered; a notification never is (whatever its params).
    id
}

/// Splits the stream the way the reader does: on `\n`, the last piece only when non-empty.
fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// The server's output, kept after it ends (the server writes from more than one thread).
#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    // A request cancelled by a later line may go unanswered (the specification's SHOULD NOT
    // respond): such a stream is not held to the one-answer-per-request count.
    if data
        .windows(b"notifications/cancelled".len())
        .any(|w| w == b"notifications/cancelled")
    {
        return;
    }
    let ctx = Context::new(repo().clone(), Effect::RepositoryWrite);
    let shared = Out::default();
    stdio::serve(&ctx, std::io::Cursor::new(data.to_vec()), shared.clone(), CAP)
        .expect("writing to a Vec never fails");
    let out = shared.0.lock().unwrap().clone();
    assert!(
        out.is_empty() || out.ends_with(b"\n"),
        "a partial answer line"
    );
    let answers: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every answer is one line of JSON"))
        .collect();
    let want: Vec<Value> = lines(data).into_iter().filter_map(expected).collect();
    assert_eq!(
        answers.len(),
        want.len(),
        "answers {answers:?} for expected ids {want:?}"
    );
    for (a, id) in answers.iter().zip(&want) {
        assert_eq!(a["jsonrpc"], "2.0", "{a}");
        assert_eq!(&a["id"], id, "{a}");
        match (a.get("result"), a.get("error")) {
            (Some(_), None) => {}
            (None, Some(e)) => {
                let code = e["code"].as_i64().expect("an integer code");
                assert!(CODES.contains(&code), "undocumented code {code}: {a}");
                assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{a}");
            }
            _ => panic!("not exactly one of result and error: {a}"),
        }
        // A tool error carries a stable seneschal code.
        if a["result"]["isError"] == true {
            let code = a["result"]["_meta"]["seneschal/error"]["code"]
                .as_str()
                .expect("a tool error carries its code");
            assert!(
                seneschal::codes::ErrorCode::ALL
                    .iter()
                    .any(|c| c.as_str() == code),
                "{a}"
            );
        }
    }
});
