//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! Two threads: a reader takes lines from stdin, parses them, hands the client's responses
//! and `notifications/cancelled` to the connection's [`Pending`] table at once (so they reach
//! a request still running: an elicitation waiting for its answer, a long search checking
//! whether it was cancelled), and queues everything else; the serving thread (the caller's)
//! answers the queue in order. Memory stays bounded: at most [`QUEUE`] parsed messages wait,
//! each from a line of at most [`MAX_LINE`] bytes. Every line out — answers, notifications,
//! requests to the client — goes through one locked writer, so lines never interleave.
//! Output is flushed whenever no further input is waiting, so a pipelining client gets
//! batched writes and an interactive one gets every answer at once. At end of input the
//! requests read are answered, then the server exits; a request to the client still waiting
//! then fails at once.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::Value;

use super::dispatch;
use super::link::{Link, Pending, Sink};
use super::model::{Session, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR};
use crate::context::Context;

/// The longest request line accepted; a longer one is answered with -32600 and skipped.
pub const MAX_LINE: usize = crate::limits::STDIO_LINE;

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
const DIRECT_WRITE: usize = 16 * 1024;

/// The most messages read and not yet served.
pub const QUEUE: usize = 32;

/// What the reader hands the serving thread.
enum Kind {
    /// A parsed message for the dispatcher, and the id of a request (registered in flight).
    Message(Value, Option<Value>),
    /// A line longer than the cap was skipped.
    TooLong,
    /// A line that is not JSON, and why.
    Unparsable(String),
    /// Nothing to serve: a line was consumed by the reader (a response, a cancellation, a
    /// blank line) and no more input is buffered, so the output should be flushed.
    Idle,
    /// Reading failed.
    Failed(std::io::Error),
}

/// One queued item and whether more input was already buffered when it was read.
struct Item {
    kind: Kind,
    more: bool,
}

/// The queue between the reader and the serving thread.
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

#[derive(Default)]
struct QueueState {
    items: VecDeque<Item>,
    /// No more items will come (end of input, or the server stopped).
    closed: bool,
    /// The reader waits for room; the server waits for an item (a wake-up is a system call,
    /// made only for a thread that waits).
    reader_waits: bool,
    server_waits: bool,
}

impl Queue {
    /// Queues `item`, waiting while the queue is full — unless the server waits for the
    /// client (then the client's answer may be behind this line, and the item is returned).
    fn push(&self, item: Item, pending: &Pending) -> Result<(), Item> {
        let mut st = self.state.lock().expect("not poisoned");
        while st.items.len() >= QUEUE && !st.closed {
            if pending.waiting() {
                return Err(item);
            }
            st.reader_waits = true;
            st = self.changed.wait(st).expect("not poisoned");
            st.reader_waits = false;
        }
        if !st.closed {
            st.items.push_back(item);
            if st.server_waits {
                self.changed.notify_all();
            }
        }
        Ok(())
    }

    /// Takes every queued item, waiting for one; `flush` runs before waiting. None when the
    /// queue is closed and empty.
    fn take_all(
        &self,
        batch: &mut VecDeque<Item>,
        mut flush: impl FnMut() -> std::io::Result<()>,
    ) -> std::io::Result<bool> {
        let mut st = self.state.lock().expect("not poisoned");
        if st.items.is_empty() && !st.closed {
            drop(st);
            flush()?;
            st = self.state.lock().expect("not poisoned");
        }
        while st.items.is_empty() && !st.closed {
            st.server_waits = true;
            st = self.changed.wait(st).expect("not poisoned");
            st.server_waits = false;
        }
        if st.items.is_empty() {
            return Ok(false);
        }
        std::mem::swap(&mut st.items, batch);
        if st.reader_waits {
            self.changed.notify_all();
        }
        Ok(true)
    }

    fn close(&self) {
        self.state.lock().expect("not poisoned").closed = true;
        self.changed.notify_all();
    }

    /// Wakes a reader waiting for room, so that it notices the server now waits for the client.
    fn wake(&self) {
        let st = self.state.lock().expect("not poisoned");
        if st.reader_waits {
            self.changed.notify_all();
        }
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
            w.get_mut().write_all(bytes)?;
            w.get_mut().write_all(b"\n")
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
struct StdoutSink<W: Write> {
    out: Arc<Out<W>>,
    queue: Arc<Queue>,
}

impl<W: Write + Send> Sink for StdoutSink<W> {
    fn send(&self, message: &[u8]) -> bool {
        let sent = self
            .out
            .line(message)
            .and_then(|()| self.out.flush())
            .is_ok();
        if sent && message.starts_with(br#"{"jsonrpc":"2.0","id""#) {
            // A request: the server waits for the client from now on.
            self.queue.wake();
        }
        sent
    }
}

/// The reader: parses each line, gives responses and cancellations to `pending`, queues the
/// rest, and closes both at the end of input.
fn read_all<R: Read, W: Write>(
    input: R,
    cap: usize,
    queue: &Queue,
    pending: &Pending,
    out: &Out<W>,
) {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    loop {
        let read = read_line(&mut input, &mut line, cap);
        let more = !input.buffer().is_empty();
        let kind = match read {
            Err(e) => Kind::Failed(e),
            Ok(Line::Eof) => break,
            Ok(Line::TooLong) => Kind::TooLong,
            Ok(Line::Complete) => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    Kind::Idle
                } else {
                    match serde_json::from_slice::<Value>(text) {
                        Err(e) => Kind::Unparsable(e.to_string()),
                        Ok(v) if pending.take(&v) => Kind::Idle,
                        Ok(v) => {
                            let id = v
                                .get("id")
                                .filter(|id| id.is_string() || id.is_number())
                                .filter(|_| v.get("method").is_some())
                                .cloned();
                            if let Some(id) = &id {
                                pending.begin(id);
                            }
                            Kind::Message(v, id)
                        }
                    }
                }
            }
        };
        if matches!(kind, Kind::Idle) && more {
            continue;
        }
        let failed = matches!(kind, Kind::Failed(_));
        if let Err(item) = queue.push(Item { kind, more }, pending) {
            refuse(item, pending, out);
        }
        if failed {
            break;
        }
    }
    pending.close();
    queue.close();
}

/// Answers an item that found the queue full while the server waits for the client.
fn refuse<W: Write>(item: Item, pending: &Pending, out: &Out<W>) {
    let answer = match item.kind {
        Kind::Message(_, Some(id)) => {
            pending.finished(&id);
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
    let _ = out.line(&answer.bytes).and_then(|()| out.flush());
}

/// Serves `input` until end of input, writing answers to `output`.
pub fn serve<R, W>(ctx: &Context, input: R, output: W, cap: usize) -> std::io::Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let out = Arc::new(Out {
        w: Mutex::new(BufWriter::with_capacity(64 * 1024, output)),
    });
    let queue = Arc::new(Queue::default());
    let pending = Arc::new(Pending::default());
    let link = Link {
        sink: Arc::new(StdoutSink {
            out: Arc::clone(&out),
            queue: Arc::clone(&queue),
        }),
        pending: Arc::clone(&pending),
    };
    {
        let (queue, pending, out) = (Arc::clone(&queue), Arc::clone(&pending), Arc::clone(&out));
        // Not joined: when serving stops on an error, the reader may be blocked on a read
        // that nothing will end; the process exits without it.
        std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || read_all(input, cap, &queue, &pending, &out))?;
    }
    let result = serve_queue(ctx, &queue, &link, &out, cap);
    // The reader stops at its next line if serving stopped first.
    queue.close();
    result?;
    out.flush()
}

/// Answers the queued items in order until the queue is closed and empty.
fn serve_queue<W: Write>(
    ctx: &Context,
    queue: &Queue,
    link: &Link,
    out: &Out<W>,
    cap: usize,
) -> std::io::Result<()> {
    let mut session = Session::default();
    let mut batch = VecDeque::with_capacity(QUEUE);
    // Whether more input was buffered after the last item served.
    let mut more = false;
    while queue.take_all(&mut batch, || if more { Ok(()) } else { out.flush() })? {
        for item in batch.drain(..) {
            more = item.more;
            let answer = match item.kind {
                Kind::Failed(e) => return Err(e),
                Kind::Idle => None,
                Kind::TooLong => Some(dispatch::error_answer(
                    INVALID_REQUEST,
                    format!("invalid request: the line exceeds {cap} bytes and was skipped"),
                )),
                Kind::Unparsable(why) => Some(dispatch::error_answer(
                    PARSE_ERROR,
                    format!("parse error: {why}"),
                )),
                Kind::Message(v, id) => {
                    let answer = dispatch::handle_value(ctx, &mut session, link, v);
                    if let Some(id) = id {
                        link.pending.finished(&id);
                    }
                    answer
                }
            };
            if let Some(a) = answer {
                out.line(&a.bytes)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Effect;

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
