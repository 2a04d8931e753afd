//! Hostile confinement: a repository whose content tries to make the readers (`files.read`,
//! `files.search`, the knowledge index) return bytes from outside the repository or from a
//! secret-bearing file, or wait forever, and a neighbour that swaps folders and files for
//! symbolic links while the binary reads. Every reader goes through one confined file system
//! (`access/src/rootfs.rs`); these tests drive it through the built binary over the command line, MCP
//! stdio and HTTP.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::http::{http_call, Serve};
use crate::support::{bin, run_in, scratch_repo};

/// A `seneschal mcp` over pipes, with its process id (for a watchdog and its peak memory).
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Session {
    fn start(dir: &Path) -> Session {
        let mut child = Command::new(bin())
            .args(["mcp", "--toolsets", "all"])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("seneschal mcp starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut s = Session {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "hostile", "version": "0"}}),
        );
        assert!(init["result"].is_object(), "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read stdout");
        assert!(
            n > 0,
            "seneschal mcp closed stdout (killed by the watchdog?)"
        );
        serde_json::from_str(&line).expect("one JSON answer per line")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let a = self.recv();
        assert_eq!(a["id"], id, "{a}");
        a
    }

    /// One tool call; the answer's `result` (structured content and text) as a whole.
    fn tool(&mut self, name: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": args}))
    }

    /// Many tool calls written ahead of their answers (in batches, so that no pipe fills).
    fn pipelined(&mut self, calls: &[(&str, Value)]) -> Vec<Value> {
        let mut out = Vec::with_capacity(calls.len());
        for chunk in calls.chunks(32) {
            for (name, args) in chunk {
                let id = self.next;
                self.next += 1;
                self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                  "params": {"name": name, "arguments": args}}));
            }
            for _ in chunk {
                out.push(self.recv());
            }
        }
        out
    }

    /// The process's peak resident memory (VmHWM), in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }

    /// The bytes the process has read through `read(2)` and its kin so far (`rchar` of
    /// `/proc/PID/io`): the file contents it read, and its requests.
    fn bytes_read(&self) -> u64 {
        let io = std::fs::read_to_string(format!("/proc/{}/io", self.child.id())).unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("rchar:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("rchar")
    }

    /// Kills the process if it has not answered within `limit` (so a hang fails the test
    /// instead of stalling it); dropping the guard disarms it.
    fn watchdog(&self, limit: Duration) -> Watchdog {
        let pid = self.child.id() as i32;
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        std::thread::spawn(move || {
            let end = Instant::now() + limit;
            while Instant::now() < end {
                if flag.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if !flag.load(Ordering::Relaxed) {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        Watchdog(done)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Watchdog(Arc<AtomicBool>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn write(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
}

/// `seneschal call <id> --input <json>`: stdout and stderr together.
fn cli(dir: &Path, id: &str, input: Value) -> String {
    let o = run_in(dir, &["call", id, "--input", &input.to_string()]);
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The structured content of a successful tool answer.
fn content(a: &Value) -> &Value {
    assert_eq!(a["result"]["isError"], false, "{a}");
    &a["result"]["structuredContent"]
}

/// A neighbour exchanging two names (`renameat2(RENAME_EXCHANGE)`) as fast as it can.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(pairs: Vec<(PathBuf, PathBuf)>) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), swaps.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                for (a, b) in &pairs {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        a,
                        rustix::fs::CWD,
                        b,
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .expect("renameat2(RENAME_EXCHANGE)");
                    n.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

const RACE_MARKER: &str = "OUTSIDE-RACE-9c41";

/// A repository whose folder `data`, file `file.txt`, guide `race.md` and skill folder
/// `skills/race` each have a twin symbolic link to an outside copy holding [`RACE_MARKER`].
fn race_repo() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    Vec<(PathBuf, PathBuf)>,
) {
    let repo = scratch_repo();
    let outside = tempfile::tempdir().unwrap();
    let (r, o) = (repo.path(), outside.path());
    write(r, "data/x.txt", "inside needle\n");
    write(o, "data/x.txt", format!("{RACE_MARKER} needle\n"));
    write(r, "file.txt", "inside needle\n");
    write(o, "file.txt", format!("{RACE_MARKER} needle\n"));
    write(
        r,
        "docs/guides/race.md",
        "---\ntitle: Inside\n---\nInside.\n",
    );
    write(
        o,
        "race.md",
        format!("---\ntitle: {RACE_MARKER}\n---\n{RACE_MARKER}\n"),
    );
    write(
        r,
        "skills/race/SKILL.md",
        "---\nname: race\ndescription: Inside.\n---\nInside.\n",
    );
    write(
        o,
        "skill/SKILL.md",
        format!("---\nname: race\ndescription: {RACE_MARKER}\n---\n{RACE_MARKER}\n"),
    );
    symlink(o.join("data"), r.join("data-link")).unwrap();
    symlink(o.join("file.txt"), r.join("file-link")).unwrap();
    symlink(o.join("race.md"), r.join("docs/guides/race-link.md")).unwrap();
    symlink(o.join("skill"), r.join("skills/race-link")).unwrap();
    let pairs = vec![
        (r.join("data"), r.join("data-link")),
        (r.join("file.txt"), r.join("file-link")),
        (
            r.join("docs/guides/race.md"),
            r.join("docs/guides/race-link.md"),
        ),
        (r.join("skills/race"), r.join("skills/race-link")),
    ];
    (repo, outside, pairs)
}

/// The calls of one round of the race: each reader, on each swapped name (the cheap reads more
/// often, so that a round costs about 10 ms in a debug build).
fn race_calls() -> Vec<(&'static str, Value)> {
    let read = |p: &str| ("files_read", json!({ "path": p }));
    let get = |uri: &str| ("knowledge_get", json!({ "uri": uri }));
    vec![
        read("data/x.txt"),
        read("file.txt"),
        get("seneschal://knowledge/guide/race"),
        read("data/x.txt"),
        read("file.txt"),
        ("files_search", json!({"pattern": "needle"})),
        read("data/x.txt"),
        read("file.txt"),
        get("seneschal://knowledge/guide/race"),
        get("seneschal://knowledge/skill/race"),
    ]
}

/// A neighbour swaps folders and files for links to outside copies while the binary serves
/// thousands of reads over MCP stdio (and fewer over HTTP and the command line): no answer
/// carries an outside byte.
#[test]
fn a_swap_race_never_returns_an_outside_byte() {
    let (repo, _outside, pairs) = race_repo();
    let r = repo.path();
    let mut mcp = Session::start(r);
    let swapper = Swapper::start(pairs);
    let calls: Vec<(&str, Value)> = race_calls().into_iter().cycle().take(10 * 150).collect();
    let started = Instant::now();
    let answers = mcp.pipelined(&calls);
    let elapsed = started.elapsed();
    let leaked = answers
        .iter()
        .filter(|a| a.to_string().contains(RACE_MARKER))
        .count();
    let answered = answers
        .iter()
        .filter(|a| a["result"]["isError"] == false)
        .count();

    // HTTP and the command line go through the same readers; fewer rounds.
    let server = Serve::start(r, &[]);
    let mut http_leaked = 0;
    for (name, args) in race_calls().into_iter().cycle().take(10 * 20) {
        let route = format!("/api/v1/{}", name.replacen('_', "/", 1));
        let (_, body) = http_call(&server, "GET", &route, &args);
        http_leaked += usize::from(body.to_string().contains(RACE_MARKER));
    }
    let mut cli_leaked = 0;
    for (name, args) in race_calls().into_iter().cycle().take(10) {
        cli_leaked += usize::from(cli(r, &name.replacen('_', ".", 1), args).contains(RACE_MARKER));
    }
    let swaps = swapper.swaps.load(Ordering::Relaxed);
    drop(swapper);
    assert!(swaps > 1000, "the neighbour swapped only {swaps} times");
    assert!(
        answered > calls.len() / 5,
        "most reads are answered ({answered} of {})",
        calls.len()
    );
    assert_eq!(
        (leaked, http_leaked, cli_leaked),
        (0, 0, 0),
        "outside bytes returned in {leaked} of {} MCP answers ({:.1} %), {http_leaked} HTTP, \
         {cli_leaked} CLI ({swaps} swaps, {elapsed:?})",
        calls.len(),
        100.0 * leaked as f64 / calls.len() as f64
    );
}

/// Planted secrets and outside files: an ADR linked to `.env.production`, a repository kind
/// claiming every root file (`client_secret.json`, `prod.tfvars`, `credentials`, `server.pem`,
/// `.env*`), a schema linked outside, hard links to outside files. No answer of any reader
/// over any transport carries a byte of them, and each is a finding naming its rule.
#[test]
fn planted_secrets_and_outside_files_reach_no_answer() {
    let repo = scratch_repo();
    let outside = tempfile::tempdir_in(repo.path().parent().unwrap()).unwrap();
    let (r, o) = (repo.path(), outside.path());
    let markers = [
        "ENV-PLANT-1d2e",
        "CLIENT-PLANT-3f4a",
        "TFVARS-PLANT-5b6c",
        "CREDS-PLANT-7d8e",
        "PEM-PLANT-9f0a",
        "SCHEMA-PLANT-1b2c",
        "HARD-PLANT-3d4e",
        "KEY-PLANT-5f6a",
    ];
    write(
        r,
        ".env.production",
        "---\ntitle: ENV-PLANT-1d2e\nstatus: accepted\ndate: 2026-11-30\n---\nTOKEN=ENV-PLANT-1d2e\n",
    );
    write(
        r,
        "client_secret.json",
        r#"{"client_secret": "CLIENT-PLANT-3f4a"}"#,
    );
    write(r, "prod.tfvars", "db_password: TFVARS-PLANT-5b6c\n");
    write(
        r,
        "credentials",
        "aws_secret_access_key: CREDS-PLANT-7d8e\n",
    );
    write(r, "server.pem", "cert: PEM-PLANT-9f0a\n");
    std::fs::create_dir_all(r.join("docs/adr")).unwrap();
    symlink("../../.env.production", r.join("docs/adr/0002-env.md")).unwrap();
    write(
        r,
        ".seneschal/kinds.yaml",
        "kinds:\n  loot:\n    description: Every root file.\n    files: [\"*\", \".env*\"]\n    format: yaml\n    id: { file_pattern: \"^(.+)$\" }\n    schema: loot.schema.json\n  stolen:\n    description: A kind whose schema lies outside.\n    files: [\"stolen/*.md\"]\n    id: { file_pattern: \"^(.+)\\\\.md$\" }\n    schema: stolen.schema.json\n",
    );
    write(
        r,
        ".seneschal/schemas/loot.schema.json",
        r#"{"type": "object"}"#,
    );
    write(
        o,
        "schema.json",
        r#"{"type": "object", "description": "SCHEMA-PLANT-1b2c"}"#,
    );
    symlink(
        o.join("schema.json"),
        r.join(".seneschal/schemas/stolen.schema.json"),
    )
    .unwrap();
    write(
        o,
        "hard.md",
        "---\ntitle: HARD-PLANT-3d4e\n---\nHARD-PLANT-3d4e needle\n",
    );
    std::fs::create_dir_all(r.join("docs/guides")).unwrap();
    std::fs::create_dir_all(r.join("notes")).unwrap();
    std::fs::hard_link(o.join("hard.md"), r.join("docs/guides/hard.md")).unwrap();
    write(o, "hard.txt", "HARD-PLANT-3d4e needle\n");
    std::fs::hard_link(o.join("hard.txt"), r.join("notes/hard.txt")).unwrap();
    write(r, "notes/plain.txt", "needle inside\n");
    // A guide holding a private key block (built at run time: this file holds none).
    let kind = "EC PRIVATE KEY";
    write(
        r,
        "docs/guides/key.md",
        format!("---\ntitle: KEY-PLANT-5f6a\n---\n-----BEGIN {kind}-----\nMHcCAQEEIBkXo0pJ5SmE3tKe9lgXwCnuyFqJtUp8cWrzZkVbVBnPoAoGCCqGSM49\n-----END {kind}-----\n"),
    );

    let reads = [
        ".env.production",
        "client_secret.json",
        "prod.tfvars",
        "credentials",
        "server.pem",
        "docs/adr/0002-env.md",
        "docs/guides/hard.md",
        "notes/hard.txt",
        ".seneschal/schemas/stolen.schema.json",
    ];
    let uris = [
        "seneschal://knowledge/loot/client_secret.json",
        "seneschal://knowledge/loot/prod.tfvars",
        "seneschal://knowledge/loot/credentials",
        "seneschal://knowledge/loot/server.pem",
        "seneschal://knowledge/loot/.env.production",
        "seneschal://knowledge/adr/0002",
        "seneschal://knowledge/guide/hard",
        "seneschal://knowledge/guide/key",
    ];
    let mut calls: Vec<(&str, Value)> = vec![
        ("knowledge_list", json!({})),
        ("knowledge_kinds", json!({})),
        ("knowledge_check", json!({})),
        ("knowledge_search", json!({"query": "plant needle secret"})),
        ("files_search", json!({"pattern": "PLANT|needle|secret"})),
    ];
    for p in reads {
        calls.push(("files_read", json!({ "path": p })));
    }
    for u in uris {
        calls.push(("knowledge_get", json!({ "uri": u })));
    }
    let leaks = |transport: &str, answer: &str| {
        for m in markers {
            assert!(!answer.contains(m), "{transport}: {m} leaked: {answer}");
        }
    };

    let mut mcp = Session::start(r);
    let answers = mcp.pipelined(&calls);
    for a in &answers {
        leaks("MCP", &a.to_string());
    }
    // Every planted file is a finding naming its rule, not a silent gap.
    let check = content(&answers[2]);
    let findings: Vec<String> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f["file"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    for (file, rule) in [
        ("client_secret.json", "secret_file"),
        ("prod.tfvars", "secret_file"),
        ("credentials", "secret_file"),
        ("server.pem", "secret_file"),
        (".env.production", "secret_file"),
        ("docs/adr/0002-env.md", "secret_file"),
        ("docs/guides/hard.md", "hard_link"),
        ("docs/guides/key.md", "secret_content"),
        (".seneschal/kinds.yaml", "symlink_escape"),
    ] {
        assert!(
            findings
                .iter()
                .any(|f| f.starts_with(&format!("{file}: ")) && f.contains(rule)),
            "no {rule} finding for {file}: {findings:#?}"
        );
    }
    for (i, p) in reads.iter().enumerate() {
        let a = &answers[5 + i];
        assert_eq!(a["result"]["isError"], true, "{p} is read: {a}");
    }
    let search = content(&answers[4]);
    let paths: Vec<&str> = search["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["notes/plain.txt"], "{search}");

    let server = Serve::start(r, &[]);
    for (name, args) in &calls {
        let route = format!("/api/v1/{}", name.replacen('_', "/", 1));
        let (_, body) = http_call(&server, "GET", &route, args);
        leaks("HTTP", &body.to_string());
    }
    for (name, args) in &calls {
        leaks("CLI", &cli(r, &name.replacen('_', ".", 1), args.clone()));
    }
}

/// FIFOs in a knowledge folder, in the working tree, as `.seneschal/kinds.yaml` and as ignore
/// files (`.gitignore`, `.ignore`, `.git/info/exclude`): every reader answers within a second,
/// and the session still answers afterwards.
#[test]
fn fifos_never_make_a_reader_wait() {
    let repo = scratch_repo();
    let r = repo.path();
    write(
        r,
        "docs/adr/0001-real.md",
        "---\ntitle: Real\nstatus: accepted\ndate: 2026-11-30\n---\nReal.\n",
    );
    mkfifo(&r.join("docs/adr/0002-fifo.md"));
    mkfifo(&r.join("pipe.txt"));
    std::fs::create_dir_all(r.join(".seneschal")).unwrap();
    mkfifo(&r.join(".seneschal/kinds.yaml"));
    // Ignore files too: the search reads them itself, through the same confined opens.
    write(r, "sub/found.txt", "x marks\n");
    mkfifo(&r.join(".gitignore"));
    mkfifo(&r.join("sub/.ignore"));
    std::fs::remove_file(r.join(".git/info/exclude")).ok();
    std::fs::create_dir_all(r.join(".git/info")).unwrap();
    mkfifo(&r.join(".git/info/exclude"));
    let mut mcp = Session::start(r);
    let _guard = mcp.watchdog(Duration::from_secs(120));
    for (name, args) in [
        ("knowledge_list", json!({})),
        ("knowledge_check", json!({})),
        ("files_search", json!({"pattern": "x"})),
        ("files_read", json!({"path": "pipe.txt"})),
        ("files_read", json!({"path": "docs/adr/0002-fifo.md"})),
    ] {
        // A reader blocked on a FIFO waits for ever: the watchdog turns that into a failure.
        let a = mcp.tool(name, args);
        if name == "files_search" {
            assert_eq!(content(&a)["files_matched"], 1, "{a}");
        }
        if name == "files_read" {
            assert_eq!(
                a["result"]["_meta"]["seneschal/error"]["code"], "refused",
                "{a}"
            );
            assert!(a.to_string().contains("special_file"), "{a}");
        }
        if name == "knowledge_check" {
            let text = a.to_string();
            assert!(
                text.contains("0002-fifo.md") && text.contains("FIFO"),
                "{a}"
            );
            assert!(text.contains(".seneschal/kinds.yaml"), "{a}");
        }
    }
    let ping = mcp.request("ping", json!({}));
    assert!(ping["result"].is_object(), "{ping}");
    // HTTP workers too (a blocked one fails the client's read timeout).
    let server = Serve::start(r, &[]);
    let (status, _) = http_call(&server, "GET", "/api/v1/knowledge/list", &json!({}));
    assert_eq!(status, 200);
    let (status, _) = http_call(
        &server,
        "GET",
        "/api/v1/files/search",
        &json!({"pattern": "x"}),
    );
    assert_eq!(status, 200);
}

/// A 300 MB single-line file is never read: `files.search` reads a small fraction of it (the
/// process's own count of bytes read, not a clock), counts it as skipped, and the process's
/// peak memory stays small; `files.read` refuses it.
#[test]
fn a_huge_file_is_never_read() {
    let repo = scratch_repo();
    let r = repo.path();
    write(r, "small.txt", "needle\n");
    let f = std::fs::File::create(r.join("huge.log")).unwrap();
    f.set_len(300 << 20).unwrap();
    drop(f);
    let mut mcp = Session::start(r);
    let _guard = mcp.watchdog(Duration::from_secs(120));
    let before = mcp.bytes_read();
    let a = mcp.tool("files_search", json!({"pattern": "needle|x"}));
    let read = mcp.bytes_read() - before;
    let v = content(&a);
    assert!(
        read < 64 << 20,
        "files.search read {read} bytes of a 300 MiB file"
    );
    assert_eq!(v["skipped_large_files"], 1, "{v}");
    assert_eq!(v["files_matched"], 1, "{v}");
    let a = mcp.tool("files_read", json!({"path": "huge.log"}));
    assert!(a.to_string().contains("size_cap"), "{a}");
    let peak = mcp.peak_rss_kib();
    assert!(peak < 64 * 1024, "peak resident memory {peak} KiB");
}

/// `files.search` is no oracle: an attacker guessing a redacted token's next character, or a
/// refused key file's content, sees the same answer for every guess.
#[test]
fn search_answers_do_not_depend_on_secrets() {
    let repo = scratch_repo();
    let r = repo.path();
    let token = format!("ghp_{}", "Zq7Lm2Xp".repeat(4) + "Wd9K");
    write(
        r,
        "config.txt",
        format!("github_token = {token}\nother line\n"),
    );
    // Built at run time so that this source file holds no key block.
    let kind = "RSA PRIVATE KEY";
    write(
        r,
        "deploy/key.txt",
        format!("-----BEGIN {kind}-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END {kind}-----\n"),
    );
    let mut mcp = Session::start(r);
    let alphabet: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').collect();
    // The token's first five characters are "known"; guess the sixth. Then the key's.
    let mut calls: Vec<(&str, Value)> = Vec::new();
    for prefix in [&token[..9], "MIIEowIBA"] {
        for c in &alphabet {
            calls.push(("files_search", json!({ "pattern": format!("{prefix}{c}") })));
        }
    }
    calls.push(("files_search", json!({"pattern": "no-such-text-anywhere"})));
    let answers: Vec<Value> = mcp
        .pipelined(&calls)
        .iter()
        .map(|a| content(a).clone())
        .collect();
    let first = &answers[0];
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a, first, "the answer to {:?} differs", calls[i].1);
    }
    assert_eq!(first["files_matched"], 0, "{first}");
    assert_eq!(first["skipped_secret_files"], 1, "{first}");
    // The token's line is still found by its other words, redacted.
    let a = mcp.tool("files_search", json!({"pattern": "github_token"}));
    let v = content(&a);
    assert_eq!(v["files_matched"], 1, "{v}");
    assert_eq!(v["redactions"], 1, "{v}");
    assert!(!v.to_string().contains(&token[4..]), "{v}");
}

/// The client configurations `mcp.projection` inspects (`.mcp.json`, `.codex/config.toml`,
/// `.gemini/settings.json`) are read under the same rules: a FIFO does not make it wait, and a
/// link or a hard link to an outside file is not read.
#[test]
fn client_configurations_are_read_confined() {
    let repo = scratch_repo();
    let outside = tempfile::tempdir_in(repo.path().parent().unwrap()).unwrap();
    let (r, o) = (repo.path(), outside.path());
    let marker = "OUTSIDE-CLIENT-5e6f";
    write(
        o,
        "settings.json",
        format!(r#"{{"mcpServers": {{"x": {{"command": "{marker}"}}}}}}"#),
    );
    write(
        o,
        "config.toml",
        format!("[mcp_servers.x]\ncommand = \"{marker}\"\n"),
    );
    mkfifo(&r.join(".mcp.json"));
    std::fs::create_dir_all(r.join(".gemini")).unwrap();
    symlink(o.join("settings.json"), r.join(".gemini/settings.json")).unwrap();
    std::fs::create_dir_all(r.join(".codex")).unwrap();
    std::fs::hard_link(o.join("config.toml"), r.join(".codex/config.toml")).unwrap();
    let mut mcp = Session::start(r);
    let _guard = mcp.watchdog(Duration::from_secs(120));
    // A read blocked on the FIFO would wait for ever: the watchdog turns that into a failure.
    let a = mcp.tool("mcp_projection", json!({}));
    let text = content(&a).to_string();
    assert!(!text.contains(marker), "{text}");
    for rule in ["special_file", "symlink_escape", "hard_link"] {
        assert!(text.contains(rule), "no {rule}: {text}");
    }
}
