//! A pipe-driven MCP client for the black-box tests: spawns `seneschal mcp`, writes JSON-RPC
//! lines to its stdin and reads its answers from its stdout.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus};

use serde_json::{json, Value};

/// The modern protocol revision.
pub const MODERN: &str = "2026-07-28";

/// A running `seneschal mcp`.
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The server's stderr, read on a thread as it is written: a server that writes more than
    /// a pipe holds must not block on it (a test then fails on what it reads instead of
    /// waiting for an answer the blocked server cannot give).
    stderr: Option<std::thread::JoinHandle<String>>,
    next_id: u64,
}

impl Mcp {
    /// Starts `seneschal mcp` with extra arguments, in `dir`, with extra environment.
    pub fn start_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Mcp {
        Mcp::start_bin(&super::bin(), dir, args, env)
    }

    /// [`Mcp::start_with`] with another build of the binary (one with cargo features). The
    /// server trusts its client's approval (`--approval trust-client`) unless the arguments
    /// choose a policy: approval is the point of `approval.rs` only.
    pub fn start_bin(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Mcp {
        let mut argv: Vec<&str> = std::iter::once("mcp").chain(args.iter().copied()).collect();
        if !args.contains(&"--approval") {
            argv.extend(["--approval", "trust-client"]);
        }
        let mut child = super::spawn_piped(bin, dir, &argv, env);
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut err = child.stderr.take().expect("piped");
        let stderr = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = std::io::Read::read_to_end(&mut err, &mut text);
            String::from_utf8_lossy(&text).into_owned()
        });
        Mcp {
            child,
            stdin,
            stdout,
            stderr: Some(stderr),
            next_id: 1,
        }
    }

    /// Starts `seneschal mcp` in the crate root.
    pub fn start(args: &[&str]) -> Mcp {
        Mcp::start_with(Path::new(env!("CARGO_MANIFEST_DIR")), args, &[])
    }

    /// Writes raw bytes (a line, or anything) to stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to stdin");
        stdin.flush().expect("flush stdin");
    }

    /// Writes one JSON message as a line.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serializes");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Reads one answer line and parses it; panics at end of output.
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read stdout");
        assert!(n > 0, "seneschal mcp closed stdout");
        assert!(line.ends_with('\n'), "an answer is one whole line");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"))
    }

    /// Sends a request with a fresh id and returns the answer, checking the id is echoed.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.recv();
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// A modern request: `params` plus the required `_meta`.
    pub fn modern(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = modern_meta(MODERN);
        self.request(method, params)
    }

    /// Opens the legacy era with `initialize` at `version` and sends `notifications/initialized`.
    pub fn initialize(&mut self, version: &str) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "pipe-test", "version": "0"},
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The capacity of the pipe the server answers on.
    pub fn stdout_pipe_size(&self) -> usize {
        rustix::pipe::fcntl_getpipe_size(self.stdout.get_ref()).expect("stdout is a pipe")
    }

    /// Closes stdin, reads whatever stdout still carries, and waits for the exit.
    pub fn finish(mut self) -> (ExitStatus, String, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).expect("read stdout");
        let status = self.child.wait().expect("the process exits");
        let err = self
            .stderr
            .take()
            .map(|t| t.join().expect("stderr is read"))
            .unwrap_or_default();
        (status, rest, err)
    }
}

/// The `_meta` a modern request carries.
pub fn modern_meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "pipe-test", "version": "0"},
    })
}

/// The JSON-RPC error code of an answer, if it is an error.
pub fn code(answer: &Value) -> Option<i64> {
    answer["error"]["code"].as_i64()
}
