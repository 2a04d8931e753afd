//! Helpers shared by the black-box tests: run the built binary, make scratch repositories.

pub mod http;
pub mod mcp;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The built `seneschal` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_seneschal"))
}

/// The toolsets every server these helpers start serves (`$SENESCHAL_TOOLSETS`): all of
/// them, introspection included, since most tests call any capability. The tests of the
/// default surface pass `--toolsets default` (the flag wins over the variable) or spawn the
/// binary themselves.
pub const TOOLSETS: (&str, &str) = ("SENESCHAL_TOOLSETS", "all");

/// `BIN ARGS` (a build of seneschal) in `dir` with extra environment and all three standard streams piped,
/// started: the one spawn of the long-running servers (`mcp`, `serve`).
pub fn spawn_piped(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Child {
    use std::process::Stdio;
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env(TOOLSETS.0, TOOLSETS.1);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn()
        .unwrap_or_else(|e| panic!("seneschal {} starts: {e}", args.join(" ")))
}

/// `seneschal call ID --input JSON --yes` in the repository at `dir` (a write is approved:
/// `approval.rs` tests the refusal without `--yes`).
pub fn call(dir: &Path, id: &str, input: impl std::borrow::Borrow<serde_json::Value>) -> Output {
    run_in(
        dir,
        &["call", id, "--yes", "--input", &input.borrow().to_string()],
    )
}

/// Runs the binary with `args` in `dir` (stdout is a pipe, so answers are JSON).
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env(TOOLSETS.0, TOOLSETS.1)
        .output()
        .expect("the binary runs")
}

/// Runs the binary with `args` in the crate root.
pub fn run(args: &[&str]) -> Output {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout parsed as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// Runs `seneschal <args>` in `dir` with `stdin` as its standard input.
pub fn run_with_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env(TOOLSETS.0, TOOLSETS.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("the binary ends")
}

/// A scratch git repository with one commit, for tests that need a repository.
pub fn scratch_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(
        dir.path(),
        &["config", "user.email", "test@example.invalid"],
    );
    git(dir.path(), &["config", "user.name", "Test"]);
    std::fs::write(dir.path().join("README.md"), "# scratch\n").expect("write");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}

/// The subjects of a `repo.log` answer, newest first.
pub fn subjects(log: &serde_json::Value) -> Vec<&str> {
    log["commits"]
        .as_array()
        .expect("a log's commits")
        .iter()
        .map(|c| c["subject"].as_str().expect("a subject"))
        .collect()
}

/// Runs git in `dir`, panicking on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Copies the folder `from` into `to`, recursively.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a folder");
    for entry in std::fs::read_dir(from).expect("read a fixture folder") {
        let entry = entry.expect("a folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy a fixture file");
        }
    }
}

/// A scratch repository holding a copy of `tests/fixtures/knowledge/<name>`.
pub fn knowledge_fixture(name: &str) -> tempfile::TempDir {
    let repo = scratch_repo();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/knowledge")
        .join(name);
    copy_tree(&src, repo.path());
    repo
}

/// A scratch repository holding one ADR, `docs/adr/0001-first.md`.
pub fn adr_repo() -> tempfile::TempDir {
    let dir = scratch_repo();
    std::fs::create_dir_all(dir.path().join("docs/adr")).expect("create docs/adr");
    std::fs::write(
        dir.path().join("docs/adr/0001-first.md"),
        "---\nid: \"0001\"\ntitle: First\nstatus: accepted\ndate: 2026-11-30\n---\n# First\n",
    )
    .expect("write the ADR");
    dir
}

/// Runs `cmd` (its stdio set here: stdin closed, stdout and stderr captured) and answers its
/// output, or kills it and panics when it has not ended within `wait`: for a reader that a FIFO
/// or a slow peer could hang.
pub fn output_within(mut cmd: Command, wait: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let deadline = std::time::Instant::now() + wait;
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "{cmd:?} did not end within {wait:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.wait_with_output().expect("output")
}

/// The three transports of one scratch repository: an answer or an error is checked to be the
/// same over the CLI, MCP (one process) and HTTP (one server).
pub struct Three<'a> {
    dir: &'a Path,
    mcp: mcp::Mcp,
    http: http::Serve,
}

impl<'a> Three<'a> {
    pub fn new(dir: &'a Path) -> Three<'a> {
        let mut mcp = mcp::Mcp::start_with(dir, &[], &[]);
        mcp.initialize("2025-11-25");
        Three {
            dir,
            mcp,
            http: http::Serve::start(dir, &[]),
        }
    }

    /// The answer of `id`, the same over the CLI, MCP and HTTP.
    pub fn ok(&mut self, id: &str, input: serde_json::Value) -> serde_json::Value {
        let (tool, route) = tool_and_route(id);
        let cli = run_in(self.dir, &["call", id, "--input", &input.to_string()]);
        assert!(cli.status.success(), "{id} {input}: {}", stderr(&cli));
        let answer = json(&cli);
        let r = self.mcp.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": input.clone()}),
        );
        assert_eq!(r["result"]["isError"], false, "{id} {input}: {r}");
        assert_eq!(r["result"]["structuredContent"], answer, "{id}: MCP vs CLI");
        let (status, body) = http::http_call(&self.http, "GET", &route, &input);
        assert_eq!(status, 200, "{id} {input}: {body}");
        assert_eq!(body, answer, "{id}: HTTP vs CLI");
        answer
    }

    /// The error code of `id`, the same over the CLI (exit code and `error[code]`), MCP and
    /// HTTP; the CLI's message is returned.
    pub fn err(&mut self, id: &str, input: serde_json::Value, code: &str) -> String {
        let (tool, route) = tool_and_route(id);
        let cli = run_in(self.dir, &["call", id, "--input", &input.to_string()]);
        let text = stderr(&cli);
        assert!(
            text.contains(&format!("error[{code}]")),
            "{id} {input}: {text}"
        );
        let expected = seneschal::codes::ErrorCode::parse(code).expect("a code");
        assert_eq!(cli.status.code(), Some(i32::from(expected.exit_code())));
        let r = self.mcp.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": input.clone()}),
        );
        assert_eq!(r["result"]["isError"], true, "{id} {input}: {r}");
        assert_eq!(r["result"]["_meta"]["seneschal/error"]["code"], code, "{r}");
        let (status, body) = http::http_call(&self.http, "GET", &route, &input);
        assert_eq!(body["code"], code, "{id} {input}: {body}");
        assert_eq!(status, expected.http_status());
        text
    }

    /// The whole MCP answer of `id` (an error expected), as text.
    pub fn mcp_error(&mut self, id: &str, input: &serde_json::Value) -> String {
        let (tool, _) = tool_and_route(id);
        self.mcp
            .request(
                "tools/call",
                serde_json::json!({"name": tool, "arguments": input}),
            )
            .to_string()
    }

    /// The whole HTTP answer of `id` (an error expected), as text.
    pub fn http_error(&mut self, id: &str, input: &serde_json::Value) -> String {
        let (_, route) = tool_and_route(id);
        http::http_call(&self.http, "GET", &route, input)
            .1
            .to_string()
    }

    pub fn finish(self) {
        let (status, _, err) = self.mcp.finish();
        assert!(status.success(), "{err}");
        self.http.finish();
    }
}

fn tool_and_route(id: &str) -> (String, String) {
    (
        id.replace('.', "_"),
        format!("/api/v1/{}", id.replace('.', "/")),
    )
}

/// The digest the audit log records of `bytes` in the repository at `dir`: HMAC-SHA256 under
/// the repository's digest key (`.seneschal/digest.key`), as the store spells it.
pub fn audit_digest(dir: &Path, bytes: &[u8]) -> String {
    let key = std::fs::read(dir.join(".seneschal/digest.key")).expect("the digest key");
    let mac = seneschal::text::hmac_sha256(&key, bytes);
    format!("hmac-sha256:{}", seneschal::text::hex(&mac))
}
