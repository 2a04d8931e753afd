//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
//!
//! One line is read, answered and written before the next is read, so the reader never
//! queues ahead of the writer: memory stays bounded by the longest accepted line
//! ([`MAX_LINE`]). Output is flushed whenever no further input is already buffered, so a
//! pipelining client gets batched writes and an interactive one gets every answer at once.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};

use super::dispatch;
use super::model::{Session, INVALID_REQUEST};
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

/// Serves `input` until end of input, writing answers to `output`.
pub fn serve<R: Read, W: Write>(
    ctx: &Context,
    input: R,
    output: W,
    cap: usize,
) -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, output);
    let mut session = Session::default();
    let mut line = Vec::with_capacity(4096);
    let link = super::link::Link::closed();
    loop {
        let answer = match read_line(&mut input, &mut line, cap)? {
            Line::Eof => break,
            Line::TooLong => Some(dispatch::error_answer(
                INVALID_REQUEST,
                format!("invalid request: the line exceeds {cap} bytes and was skipped"),
            )),
            Line::Complete => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    None
                } else {
                    dispatch::handle_bytes(ctx, &mut session, &link, text)
                }
            }
        };
        if let Some(mut a) = answer {
            a.bytes.push(b'\n');
            if a.bytes.len() >= DIRECT_WRITE {
                // A large answer goes straight to the pipe rather than through the buffer.
                output.flush()?;
                output.get_mut().write_all(&a.bytes)?;
            } else {
                output.write_all(&a.bytes)?;
            }
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Effect;

    fn run(input: &[u8], cap: usize) -> Vec<serde_json::Value> {
        let ctx = Context::new(std::env::temp_dir(), Effect::RepositoryWrite);
        let mut out = Vec::new();
        serve(&ctx, input, &mut out, cap).unwrap();
        String::from_utf8(out)
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
        let ctx = Context::new(std::env::temp_dir(), Effect::RepositoryWrite);
        let mut out = Vec::new();
        serve(&ctx, input.as_bytes(), &mut out, MAX_LINE).unwrap();
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
