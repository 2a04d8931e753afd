//! Round trips against `seneschal mcp` from a client whose own cost is small: the latency
//! rows of `benches/suite.py` (the Python client there spends tens of microseconds reading a
//! 44 KiB `tools/list` answer, more than the server does).
//!
//! Usage: `mcp_roundtrip BINARY N LINE...`: starts `BINARY mcp`, opens the session with
//! `initialize`, then for each request LINE sends it 200 times to warm up and N times measured,
//! one request in flight, and prints one JSON line per LINE:
//! `{"p50_us":…,"p90_us":…,"p99_us":…,"server_cpu_us":…}` (server CPU per request from
//! `/proc/PID/stat`, Linux only; `null` elsewhere).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"roundtrip","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The CPU time (user + system) of process `pid`, when /proc says it.
fn cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel reports in clock ticks; Linux's USER_HZ is 100.
    Some(Duration::from_millis(ticks * 10))
}

fn percentile(sorted: &[Duration], p: usize) -> f64 {
    let i = (sorted.len() * p / 100).min(sorted.len() - 1);
    sorted[i].as_secs_f64() * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: mcp_roundtrip BINARY N LINE...");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N is a number");
    let mut child = Command::new(&args[1])
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let pid = child.id();
    let mut to = child.stdin.take().expect("piped");
    let mut from = BufReader::with_capacity(1 << 20, child.stdout.take().expect("piped"));
    let mut answer = Vec::with_capacity(1 << 16);
    let mut ask = |to: &mut std::process::ChildStdin, line: &[u8], answer: &mut Vec<u8>| {
        to.write_all(line).expect("write a request");
        answer.clear();
        from.read_until(b'\n', answer).expect("read an answer");
        assert!(answer.ends_with(b"\n"), "the server closed its output");
    };
    ask(&mut to, format!("{INIT}\n").as_bytes(), &mut answer);
    to.write_all(format!("{INITIALIZED}\n").as_bytes())
        .expect("write a notification");
    for line in &args[3..] {
        let request = format!("{line}\n");
        for _ in 0..200 {
            ask(&mut to, request.as_bytes(), &mut answer);
        }
        let before = cpu(pid);
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            ask(&mut to, request.as_bytes(), &mut answer);
            samples.push(start.elapsed());
        }
        let server = match (before, cpu(pid)) {
            (Some(a), Some(b)) => format!("{:.1}", (b - a).as_secs_f64() * 1e6 / n as f64),
            _ => "null".into(),
        };
        samples.sort();
        println!(
            r#"{{"p50_us":{:.1},"p90_us":{:.1},"p99_us":{:.1},"server_cpu_us":{server},"answer_bytes":{}}}"#,
            percentile(&samples, 50),
            percentile(&samples, 90),
            percentile(&samples, 99),
            answer.len()
        );
    }
    drop(to);
    let status = child.wait().expect("the server exits");
    assert!(status.success(), "the server exited with {status}");
}
