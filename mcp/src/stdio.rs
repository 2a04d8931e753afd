//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! The serving thread (the caller's) reads a line, answers it and writes the answer before
//! it reads the next. While a request needs the client's messages — it waits for the answer
//! to its own request (`elicitation/create`, `sampling/createMessage`), or checks whether it
//! was cancelled — a listener thread reads on: it hands the client's responses and
//! `notifications/cancelled` to the connection's [`Pending`] table at once, and queues any
//! other message, to be served in order when the request is done. A request that needs none
//! of that costs no hand-over between threads, and the listener is started by the first
//! request that needs it: a connection whose requests never do runs no such thread. Memory stays bounded: at most [`QUEUE`] parsed
//! messages wait, each from a line of at most [`MAX_LINE`] bytes. Every line out — answers,
//! notifications, requests to the client — goes through one locked writer, so lines never
//! interleave. Output is flushed whenever no further input is buffered, so a pipelining
//! client gets batched writes and an interactive one gets every answer at once. At end of
//! input the requests read are answered, then the server exits; a request to the client
//! still waiting then fails at once.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, TryLockError};

use serde_json::Value;

use super::dispatch;
use super::link::{Link, Pending, Sink};
use super::model::{Session, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use seneschal_core::context::Context;

/// The longest request line accepted; a longer one is answered with -32600 and skipped.
pub const MAX_LINE: usize = seneschal_access::limits::STDIO_LINE;

/// What one read produced.
enum Line {
    /// A complete line (without its newline) is in the buffer.
    Complete,
    /// The line was longer than the cap; its bytes were discarded.
    TooLong,
    /// End of input.
    Eof,
}

/// Reads one line into `line`, keeping at most `cap` bytes; the rest of an overlong line is
/// consumed and dropped.
fn read_line<R: Read>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut overflow = false;
    let mut seen_any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (seen_any, overflow) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Complete,
            });
        }
        seen_any = true;
        let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !overflow {
            if line.len() + chunk.len() > cap {
                overflow = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        input.consume(used);
        if done {
            return Ok(if overflow {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// Answers at least this long are written to the output directly, not copied into its buffer.
const DIRECT_WRITE: usize = seneschal_access::limits::MCP_STDIO_DIRECT_WRITE;

/// The most messages the listener queues while a request runs.
pub const QUEUE: usize = seneschal_access::limits::MCP_STDIO_QUEUE;

/// What one line of input is for the serving thread.
enum Kind {
    /// A well-formed request, read without parsing it whole.
    Request(dispatch::Request),
    /// A parsed message for the dispatcher, and the id of a request.
    Message(Value, Option<Value>),
    /// A line longer than the cap was skipped.
    TooLong,
    /// A line that is not JSON, and why.
    Unparsable(String),
    /// Reading failed.
    Failed(std::io::Error),
}

/// The input, read by one thread at a time.
struct Input<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// End of input was read.
    eof: bool,
}

impl<R: Read> Input<R> {
    /// Reads the next line for the serving thread: None for a line consumed here (a response
    /// or a cancellation, given to `pending`; a blank line) and at end of input.
    fn next(&mut self, cap: usize, pending: &Pending) -> Option<Kind> {
        let read = read_line(&mut self.reader, &mut self.line, cap);
        match read {
            Err(e) => Some(Kind::Failed(e)),
            Ok(Line::Eof) => {
                self.eof = true;
                pending.close();
                None
            }
            Ok(Line::TooLong) => Some(Kind::TooLong),
            Ok(Line::Complete) => {
                let text = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    return None;
                }
                // Most lines are well-formed requests: read as such, only their params are
                // built as a value; any other line is parsed whole.
                if let Some(request) = dispatch::Request::read(text) {
                    pending.begin(&request.id);
                    return Some(Kind::Request(request));
                }
                match serde_json::from_slice::<Value>(text) {
                    Err(e) => Some(Kind::Unparsable(e.to_string())),
                    Ok(v) if pending.take(&v) => None,
                    Ok(v) => {
                        let id = v
                            .get("id")
                            .filter(|id| id.is_string() || id.is_number())
                            .filter(|_| v.get("method").is_some())
                            .cloned();
                        if let Some(id) = &id {
                            pending.begin(id);
                        }
                        Some(Kind::Message(v, id))
                    }
                }
            }
        }
    }
}

/// What the serving thread and the listener share.
struct Shared<R, W: Write> {
    input: Mutex<Input<R>>,
    /// The messages the listener read, in order, not yet served.
    queue: Mutex<VecDeque<Kind>>,
    /// The listener should read (a request needs the client's messages).
    listening: AtomicBool,
    /// The serving thread stopped: the listener stops too.
    stopped: AtomicBool,
    /// The listener was started (at the first request that needs the client's messages: a
    /// connection that never does costs no thread).
    started: std::sync::Once,
    /// Signals the listener: it should read, or the queue has room again, or serving stopped.
    wake: Condvar,
    /// The lock `wake` waits with.
    idle: Mutex<()>,
    pending: Arc<Pending>,
    out: Arc<Out<W>>,
    cap: usize,
}

impl<R, W: Write> Shared<R, W> {
    fn signal(&self) {
        let _idle = self.idle.lock().expect("not poisoned");
        self.wake.notify_all();
    }

    fn queued(&self) -> usize {
        self.queue.lock().expect("not poisoned").len()
    }
}

/// The output: one buffered writer behind a lock.
struct Out<W: Write> {
    w: Mutex<BufWriter<W>>,
}

impl<W: Write> Out<W> {
    /// Writes one line; a large one goes straight to the pipe rather than through the buffer.
    fn line(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut w = self.w.lock().expect("not poisoned");
        if bytes.len() >= DIRECT_WRITE {
            w.flush()?;
            // The line and its newline in one call (two would wake the reader twice).
            let mut parts = [std::io::IoSlice::new(bytes), std::io::IoSlice::new(b"\n")];
            let mut parts = &mut parts[..];
            while !parts.is_empty() {
                match w.get_mut().write_vectored(parts) {
                    Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                    Ok(n) => std::io::IoSlice::advance_slices(&mut parts, n),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        } else {
            w.write_all(bytes)?;
            w.write_all(b"\n")
        }
    }

    fn flush(&self) -> std::io::Result<()> {
        self.w.lock().expect("not poisoned").flush()
    }
}

/// Where a request's notifications and requests to the client go: a line of stdout, at once.
struct StdoutSink<R, W: Write> {
    shared: Arc<Shared<R, W>>,
}

impl<R: Read + Send + 'static, W: Write + Send + 'static> Sink for StdoutSink<R, W> {
    fn send(&self, message: &[u8]) -> bool {
        let out = &self.shared.out;
        let sent = out.line(message).and_then(|()| out.flush()).is_ok();
        if sent && self.shared.pending.waiting() {
            // The server now waits for the client, so a listener held back by a full queue
            // reads on (see `listen`).
            self.shared.signal();
        }
        sent
    }

    fn listen(&self) {
        self.shared.started.call_once(|| {
            let shared = Arc::clone(&self.shared);
            // Not joined: when serving stops, the listener may be blocked on a read that
            // nothing will end; the process exits without it.
            let spawned = std::thread::Builder::new()
                .name("mcp-stdin".into())
                .spawn(move || listen(&shared));
            if let Err(e) = spawned {
                // Nothing reads for the request: what it waits for fails at once.
                eprintln!("seneschal mcp: cannot start reading while a request runs: {e}");
                self.shared.pending.close();
            }
        });
        if !self.shared.listening.swap(true, Ordering::SeqCst) {
            self.shared.signal();
        }
    }
}

/// The listener: reads while a request needs the client's messages, queueing what is not for
/// [`Pending`]; when the queue is full while the server waits for the client (whose answer
/// may be behind those lines), answers each further request with an error instead.
fn listen<R: Read, W: Write>(shared: &Shared<R, W>) {
    loop {
        {
            let mut idle = shared.idle.lock().expect("not poisoned");
            while !shared.stopped.load(Ordering::SeqCst)
                && (!shared.listening.load(Ordering::SeqCst)
                    || (shared.queued() >= QUEUE && !shared.pending.waiting()))
            {
                idle = shared.wake.wait(idle).expect("not poisoned");
            }
        }
        if shared.stopped.load(Ordering::SeqCst) {
            return;
        }
        // The item is queued while the input is held, so the serving thread, which takes the
        // input after looking at the queue, never reads past a line not yet queued.
        let mut input = shared.input.lock().expect("not poisoned");
        if input.eof {
            return;
        }
        let Some(kind) = input.next(shared.cap, &shared.pending) else {
            continue;
        };
        let mut queue = shared.queue.lock().expect("not poisoned");
        if queue.len() >= QUEUE {
            drop(queue);
            refuse(kind, shared);
        } else {
            queue.push_back(kind);
        }
    }
}

/// Answers a message that found the queue full while the server waits for the client.
fn refuse<R, W: Write>(kind: Kind, shared: &Shared<R, W>) {
    let answer = match kind {
        Kind::Request(dispatch::Request { id, .. }) | Kind::Message(_, Some(id)) => {
            shared.pending.finished(&id);
            dispatch::error_for(
                &id,
                INTERNAL_ERROR,
                format!("server busy: {QUEUE} requests wait while the server waits for this client's answer to its own request; send that answer first"),
            )
        }
        Kind::TooLong | Kind::Unparsable(_) => dispatch::error_answer(
            INVALID_REQUEST,
            "invalid request: skipped while the server waits for this client's answer",
        ),
        _ => {
            eprintln!(
                "seneschal mcp: a notification was dropped while the server waited for the client"
            );
            return;
        }
    };
    let _ = shared
        .out
        .line(&answer.bytes)
        .and_then(|()| shared.out.flush());
}

/// Serves `input` until end of input, writing answers to `output`.
pub fn serve<R, W>(ctx: &Context, input: R, output: W, cap: usize) -> std::io::Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let shared = Arc::new(Shared {
        input: Mutex::new(Input {
            reader: BufReader::with_capacity(64 * 1024, input),
            line: Vec::with_capacity(4096),
            eof: false,
        }),
        queue: Mutex::new(VecDeque::with_capacity(QUEUE)),
        listening: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
        started: std::sync::Once::new(),
        wake: Condvar::new(),
        idle: Mutex::new(()),
        pending: Arc::new(Pending::default()),
        out: Arc::new(Out {
            w: Mutex::new(BufWriter::with_capacity(64 * 1024, output)),
        }),
        cap,
    });
    let link = Link {
        sink: Arc::new(StdoutSink {
            shared: Arc::clone(&shared),
        }),
        pending: Arc::clone(&shared.pending),
    };
    let result = serve_lines(ctx, &shared, &link);
    shared.stopped.store(true, Ordering::SeqCst);
    shared.signal();
    result?;
    shared.out.flush()
}

/// Answers every line in order until end of input: those the listener queued first, then
/// those read here.
fn serve_lines<R: Read, W: Write>(
    ctx: &Context,
    shared: &Shared<R, W>,
    link: &Link,
) -> std::io::Result<()> {
    // The process that started `seneschal mcp` speaks for the person who started it.
    let mut session = Session {
        vouched: true,
        remembers: true,
        ..Session::default()
    };
    // The connection's subscriptions hear the knowledge feed on stdout while lines are served.
    let live = std::sync::Arc::clone(&session.live);
    super::live::Feed::with_feed(ctx, &live, std::sync::Arc::clone(&link.sink), || {
        serve_session(ctx, shared, link, &mut session)
    })
}

/// The loop of [`serve_lines`], for one session.
fn serve_session<R: Read, W: Write>(
    ctx: &Context,
    shared: &Shared<R, W>,
    link: &Link,
    session: &mut Session,
) -> std::io::Result<()> {
    loop {
        let queued = shared.queue.lock().expect("not poisoned").pop_front();
        let kind = match queued {
            Some(kind) => {
                // Room again for a listener that waits for it.
                shared.signal();
                kind
            }
            None => {
                let mut input = match shared.input.try_lock() {
                    Ok(input) => input,
                    Err(TryLockError::WouldBlock) => {
                        // The listener waits for input: nothing more is buffered.
                        shared.out.flush()?;
                        shared.input.lock().expect("not poisoned")
                    }
                    Err(TryLockError::Poisoned(p)) => p.into_inner(),
                };
                if shared.queued() > 0 {
                    continue;
                }
                if input.eof {
                    return Ok(());
                }
                if input.reader.buffer().is_empty() {
                    shared.out.flush()?;
                }
                match input.next(shared.cap, &shared.pending) {
                    Some(kind) => kind,
                    None => continue,
                }
            }
        };
        let answer = match kind {
            Kind::Failed(e) => return Err(e),
            Kind::TooLong => Some(dispatch::error_answer(
                INVALID_REQUEST,
                format!(
                    "invalid request: the line exceeds {} bytes and was skipped",
                    shared.cap
                ),
            )),
            Kind::Unparsable(why) => Some(dispatch::error_answer(
                PARSE_ERROR,
                format!("parse error: {why}"),
            )),
            Kind::Request(request) => {
                let id = request.id.clone();
                let answer = dispatch::handle_request(ctx, session, link, request);
                shared.listening.store(false, Ordering::SeqCst);
                link.pending.finished(&id);
                answer
            }
            Kind::Message(v, id) => {
                let answer = dispatch::handle_value(ctx, session, link, v);
                shared.listening.store(false, Ordering::SeqCst);
                if let Some(id) = id {
                    link.pending.finished(&id);
                }
                answer
            }
        };
        if let Some(a) = answer {
            shared.out.line(&a.bytes)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seneschal_model::policy::Effect;

    /// An output the test keeps a handle on.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn serve_bytes(input: &[u8], cap: usize) -> Vec<u8> {
        let ctx = Context::new(std::env::temp_dir(), Effect::RepositoryWrite);
        let out = Shared::default();
        serve(&ctx, std::io::Cursor::new(input.to_vec()), out.clone(), cap).unwrap();
        let bytes = out.0.lock().unwrap().clone();
        bytes
    }

    fn run(input: &[u8], cap: usize) -> Vec<serde_json::Value> {
        String::from_utf8(serve_bytes(input, cap))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_large_answer_written_directly_keeps_its_place_between_buffered_ones() {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let input = format!(
            "{init}\n{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#
        );
        let out = serve_bytes(input.as_bytes(), MAX_LINE);
        let lines: Vec<&[u8]> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert!(
            lines[2].len() >= DIRECT_WRITE,
            "tools/list is {} bytes",
            lines[2].len()
        );
        let ids: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| serde_json::from_slice::<serde_json::Value>(l).unwrap()["id"].clone())
            .collect();
        assert_eq!(ids, [0, 1, 2, 3]);
    }

    #[test]
    fn an_overlong_line_is_refused_and_the_next_one_served() {
        let long = format!("{{\"x\":\"{}\"}}\n", "a".repeat(200));
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let answers = run(format!("{long}{ping}\n").as_bytes(), 64);
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[0]["error"]["code"], INVALID_REQUEST);
        assert!(answers[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds 64 bytes"));
        assert_eq!(answers[1]["id"], 7);
        assert_eq!(answers[1]["result"], serde_json::json!({}));
    }

    #[test]
    fn a_last_line_without_newline_and_blank_lines_are_handled() {
        let answers = run(
            b"\r\n\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}",
            1024,
        );
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0]["id"], "a");
    }
}
