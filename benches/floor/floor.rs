//! The transport floor of a git reader's answer, for `benches/suite.py`: a server that does
//! nothing but what any server answering the call must do. For each request line on stdin
//! (`SIZE`, a tab, then git's arguments separated by tabs) it runs git as seneschal runs it
//! (by its path, so the standard library spawns it with `posix_spawn`; `GIT_FLUSH=0`; stdout
//! read through a pipe to its end), then writes an answer line of `SIZE` bytes to stdout: the
//! size of seneschal's answer to the same call. No parse, no redaction, no rendering.
//! Built apart by `scripts/bench.sh` (`rustc -O`); nothing of seneschal's.
use std::io::{BufRead, Read, Write};

fn main() {
    let git = std::env::args().nth(1).unwrap_or_else(|| "/usr/bin/git".into());
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for request in stdin.lock().lines() {
        let request = request.expect("a request line");
        let mut fields = request.split('\t');
        let size: usize = fields.next().and_then(|s| s.parse().ok()).expect("a size");
        let mut child = std::process::Command::new(&git)
            .args(fields)
            .env("GIT_FLUSH", "0")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("git starts");
        let mut read = Vec::new();
        child.stdout.take().expect("a pipe").read_to_end(&mut read).expect("git's output");
        child.wait().expect("git ends");
        let mut answer = vec![b'x'; size.max(1)];
        answer[size.max(1) - 1] = b'\n';
        out.write_all(&answer).expect("the answer is written");
        out.flush().expect("the answer is flushed");
    }
}
