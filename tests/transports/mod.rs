//! Helpers for the cross-transport tests: a running `seneschal serve` with a one-shot
//! HTTP/1.1 client, the query string of a JSON input, and a call of one capability over
//! each of the three transports (MCP over pipes, HTTP over loopback, the CLI over argv).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `seneschal serve` whose stderr is collected.
pub struct Serve {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The bound address.
    pub addr: SocketAddr,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Serve {
    /// Starts `seneschal serve --bind 127.0.0.1:0` in `dir` with extra environment.
    pub fn start(dir: &Path, env: &[(&str, &str)]) -> Serve {
        Serve::start_args(dir, &[], env)
    }

    /// Starts `seneschal serve --bind 127.0.0.1:0` with extra arguments (`--max-body`, ...).
    pub fn start_args(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_seneschal"));
        cmd.args(["serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("seneschal serve starts");
        let stdin = child.stdin.take();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut err = child.stderr.take().expect("piped");
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            sink.lock().expect("stderr lock").extend_from_slice(&buf);
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("a first stdout line");
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .expect("an IP:PORT address");
        Serve {
            child,
            stdin,
            addr,
            stderr,
            reader: Some(reader),
        }
    }

    /// One request on a fresh connection (`Connection: close`); returns status and body.
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
        self.send_with(method, path, &[], body)
    }

    /// One request with extra headers on a fresh connection; returns status and body.
    pub fn send_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if body.is_some() {
            head.push_str(&format!(
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
                bytes.len()
            ));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).expect("write");
        s.write_all(&bytes).expect("write");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read the response");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header block");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {head:?}"));
        (status, raw[split + 4..].to_vec())
    }

    /// A request whose answer must be JSON.
    pub fn json(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.json_with(method, path, &[], body)
    }

    /// A request with extra headers whose answer must be JSON.
    pub fn json_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Value) {
        let (status, bytes) = self.send_with(method, path, headers, body);
        let v = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "{method} {path}: not JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        });
        (status, v)
    }

    /// Closes stdin, waits for the exit, and returns everything written on stderr.
    pub fn finish(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.child.try_wait().expect("wait").is_some() {
                break;
            }
            assert!(Instant::now() < deadline, "serve outlived its stdin");
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(r) = self.reader.take() {
            r.join().expect("the stderr reader");
        }
        let err = self.stderr.lock().expect("stderr lock");
        String::from_utf8_lossy(&err).into_owned()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The query string of a JSON input (arrays as repeated parameters).
pub fn query_of(input: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(obj) = input.as_object() {
        for (k, v) in obj {
            let values = match v {
                Value::Array(a) => a.clone(),
                v => vec![v.clone()],
            };
            for v in values {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                parts.push(format!("{}={}", enc(k), enc(&text)));
            }
        }
    }
    parts.join("&")
}

/// Calls a capability's HTTP route with `input`: a GET query or a POST JSON body.
pub fn http_call(s: &Serve, method: &str, path: &str, input: &Value) -> (u16, Value) {
    if method == "GET" {
        let q = query_of(input);
        let url = if q.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{q}")
        };
        s.json("GET", &url, None)
    } else {
        s.json(method, path, Some(input))
    }
}
