//! The one HTTP client of the black-box tests, and the helpers of the cross-transport tests:
//! a running `seneschal serve` ([`Serve`]), HTTP/1.1 connections to it ([`Conn`]: keep-alive,
//! chunked bodies, HEAD, raw bytes), its answers ([`Resp`]), the query string of a JSON input,
//! and a call of one capability over HTTP.
//!
//! Dropping a [`Serve`] closes its stdin, and the server exits by itself.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a test waits for any answer: a bound for a defect, not for a slow machine.
const READ_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `seneschal serve` whose stderr is collected.
pub struct Serve {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The bound address.
    pub addr: SocketAddr,
    /// The first line the server wrote on stdout (`listening on http://…`).
    pub banner: String,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Serve {
    /// Starts `seneschal serve --bind 127.0.0.1:0` in `dir` with extra environment.
    pub fn start(dir: &Path, env: &[(&str, &str)]) -> Serve {
        Serve::start_args(dir, &[], env)
    }

    /// Starts `seneschal serve` in `dir` with extra arguments (`--max-body`, ...); the bind
    /// address is `127.0.0.1:0` unless the arguments give one.
    pub fn start_args(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Serve {
        Serve::start_bin(&super::bin(), dir, args, env)
    }

    /// [`Serve::start_args`] with another build of the binary (one with cargo features). The
    /// server trusts its client's approval (`--approval trust-client`) unless the arguments
    /// choose a policy: approval is the point of `approval.rs` only.
    pub fn start_bin(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut argv = vec!["serve"];
        if !args.contains(&"--bind") {
            argv.extend(["--bind", "127.0.0.1:0"]);
        }
        if !args.contains(&"--approval") {
            argv.extend(["--approval", "trust-client"]);
        }
        argv.extend(args);
        let mut child = super::spawn_piped(bin, dir, &argv, env);
        let stdin = child.stdin.take();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut err = child.stderr.take().expect("piped");
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            sink.lock().expect("stderr lock").extend_from_slice(&buf);
        });
        let mut banner = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut banner)
            .expect("a first stdout line");
        let addr = banner
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {banner:?}"))
            .parse()
            .expect("an IP:PORT address");
        Serve {
            child,
            stdin,
            addr,
            banner,
            stderr,
            reader: Some(reader),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The `Host` header that names this server.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// A new connection to the server.
    pub fn connect(&self) -> Conn {
        Conn::new(self.addr)
    }

    /// One request on a fresh connection; see [`Conn::send`] for the headers added.
    pub fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        self.connect()
            .send(&self.host(), method, target, headers, body)
    }

    /// `GET target` on a fresh connection.
    pub fn get(&self, target: &str) -> Resp {
        self.request("GET", target, &[], b"")
    }

    /// A JSON-RPC message POSTed to `/mcp` with the headers a client sends.
    pub fn mcp(&self, body: &[u8]) -> Resp {
        self.request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body,
        )
    }

    /// Sends raw bytes on a fresh connection and reads one response. The server may answer
    /// and close before it has read everything; that is not an error.
    pub fn raw(&self, bytes: &[u8]) -> Resp {
        let mut c = self.connect();
        let _ = c.stream().write_all(bytes);
        c.read(false)
    }

    /// Sends raw bytes and reports whether the server closed the connection without a byte
    /// of answer.
    pub fn closed_without_answer(&self, bytes: &[u8]) -> bool {
        let mut c = self.connect();
        let _ = c.stream().write_all(bytes);
        let mut rest = Vec::new();
        matches!(c.reader.read_to_end(&mut rest), Ok(0))
    }

    /// One request with a JSON body (or none) on a fresh connection; returns status and body.
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
        self.send_with(method, path, &[], body)
    }

    /// [`Serve::send`] with extra headers; a body goes with the headers of a JSON client.
    pub fn send_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Vec<u8>) {
        let mut all: Vec<(&str, &str)> = vec![("Connection", "close")];
        let bytes = match body {
            Some(b) => {
                all.push(("Content-Type", "application/json"));
                all.push(("Accept", "application/json, text/event-stream"));
                b.to_string().into_bytes()
            }
            None => Vec::new(),
        };
        all.extend_from_slice(headers);
        let r = self.request(method, path, &all, &bytes);
        (r.status, r.body)
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
    pub fn finish(self) -> String {
        self.finish_status().1
    }

    /// Closes stdin, waits for the exit, and returns the exit status and the stderr text.
    pub fn finish_status(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "serve outlived its stdin");
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(r) = self.reader.take() {
            r.join().expect("the stderr reader");
        }
        let err = self.stderr.lock().expect("stderr lock");
        (status, String::from_utf8_lossy(&err).into_owned())
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

/// One HTTP response.
#[derive(Debug)]
pub struct Resp {
    /// The status code.
    pub status: u16,
    /// The headers, in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Resp {
    /// The first header of this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{} body is not JSON ({e}): {}", self.status, self.text()))
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts an RFC 9457 problem with this status and code; returns it.
    pub fn problem(&self, status: u16, code: &str) -> Value {
        assert_eq!(self.status, status, "status of {}", self.text());
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{}",
            self.text()
        );
        let p = self.json();
        assert_eq!(p["code"], code, "{p}");
        assert_eq!(p["status"], status, "{p}");
        assert_eq!(p["type"], format!("urn:seneschal:problem:{code}"), "{p}");
        assert!(p["title"].as_str().is_some_and(|t| !t.is_empty()), "{p}");
        assert!(p["detail"].as_str().is_some_and(|t| !t.is_empty()), "{p}");
        p
    }
}

/// A client connection (keep-alive unless a request says otherwise).
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    /// Connects, with `TCP_NODELAY` and a read timeout.
    pub fn new(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(READ_TIMEOUT)).expect("timeout");
        Conn {
            reader: BufReader::new(s),
        }
    }

    fn stream(&mut self) -> &mut TcpStream {
        self.reader.get_mut()
    }

    /// Writes raw bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        self.stream().write_all(bytes).expect("write");
    }

    /// Sends one request and reads its response. `Host` is added unless given, and
    /// `Content-Length` when there is a body or the method is POST (unless given).
    pub fn send(
        &mut self,
        host: &str,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        if !given("host") {
            head.push_str(&format!("Host: {host}\r\n"));
        }
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if (!body.is_empty() || method == "POST") && !given("content-length") {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        // The server may refuse (and close) before it has read a large body.
        let _ = self.stream().write_all(&bytes);
        self.read(method == "HEAD")
    }

    /// Reads one response (`head_only`: the answer to a HEAD, which has no body).
    pub fn read(&mut self, head_only: bool) -> Resp {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a status line");
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            self.reader.read_line(&mut h).expect("a header line");
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (n, v) = h.split_once(':').expect("name: value");
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if head_only || status == 304 || status == 204 {
        } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).expect("chunk size");
                let n = usize::from_str_radix(size.trim(), 16).expect("hex size");
                let mut chunk = vec![0; n + 2];
                self.reader.read_exact(&mut chunk).expect("chunk");
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = find("content-length") {
            body = vec![0; n.parse().expect("a length")];
            self.reader.read_exact(&mut body).expect("the body");
        } else {
            self.reader.read_to_end(&mut body).expect("the body");
        }
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Whether the server has begun an answer (or closed) within `wait`; nothing is consumed.
    pub fn answered_within(&mut self, wait: Duration) -> bool {
        self.stream().set_read_timeout(Some(wait)).expect("timeout");
        let answered = match self.reader.fill_buf() {
            Ok(_) => true,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                false
            }
            Err(e) => panic!("read: {e}"),
        };
        self.stream()
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("timeout");
        answered
    }

    /// Whether the server has closed the connection with nothing left to read; nothing is
    /// consumed.
    pub fn at_end(&mut self) -> bool {
        self.reader.fill_buf().map_or(true, |b| b.is_empty())
    }

    /// True when the server closed the connection (EOF) within the read timeout.
    pub fn closed(&mut self) -> bool {
        let mut rest = Vec::new();
        self.reader.read_to_end(&mut rest).is_ok()
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
