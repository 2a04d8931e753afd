//! JSON written into a `String`, exactly as `serde_json::to_string` writes it
//! (`writes_what_serde_json_writes` holds the two equal), so that a `tools/call` result is
//! assembled in one buffer: its text rendering and its structured content each written where
//! they go, with no serialized copy of either made first and copied in. A string's bytes are
//! read eight at a time for the three kinds JSON escapes (a control byte, `"`, `\`), and each
//! run without one is copied whole. (On a patch this escapes as fast as serde_json's table,
//! within a few per cent: a line break every few dozen bytes sets the pace.)

use serde_json::Value;

/// Appends `v` as JSON to `out`.
pub fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            use std::fmt::Write;
            // An integer is its digits (serde_json's `itoa`); a float as serde_json writes it.
            let _ = match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => write!(out, "{u}"),
                (None, Some(i)) => write!(out, "{i}"),
                _ => {
                    out.push_str(&serde_json::to_string(n).expect("numbers serialize"));
                    Ok(())
                }
            };
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, None),
    }
}

/// Appends the object `map` as JSON to `out`, as [`write_value`] would, but with `items` (its
/// array's items already written as JSON, separated by commas) as the value of `field`.
pub fn write_object_with(
    out: &mut String,
    map: &serde_json::Map<String, Value>,
    field: &str,
    items: &str,
) {
    write_object(out, map, Some((field, items)));
}

/// Appends the object `map` as JSON to `out`; with `written`, the value of its field is those
/// array items, already written.
fn write_object(
    out: &mut String,
    map: &serde_json::Map<String, Value>,
    written: Option<(&str, &str)>,
) {
    out.push('{');
    for (i, (k, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, k);
        out.push(':');
        match written {
            Some((field, items)) if k == field => {
                out.push('[');
                out.push_str(items);
                out.push(']');
            }
            _ => write_value(out, item),
        }
    }
    out.push('}');
}

/// Appends `s` as a JSON string (quoted, escaped) to `out`.
pub fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    write_contents(out, s, "");
    out.push('"');
}

/// Appends `s` escaped as the contents of a JSON string to `out`, `after_newline` after each
/// line break's escape (the indentation of a block's next line; its bytes are not escaped).
pub fn write_contents(out: &mut String, s: &str, after_newline: &str) {
    let bytes = s.as_bytes();
    // `copied` is the first byte not yet in `out`. Every byte escaped is ASCII, so each slice
    // of `s` cut before or after one is whole characters.
    let (mut copied, mut at) = (0, 0);
    while let Some(word) = bytes.get(at..at + 8) {
        let flags = escaped_in(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        if flags == 0 {
            at += 8;
            continue;
        }
        // The lowest flag is the first byte to escape: a wrong flag only ever lies above a
        // right one (a borrow runs toward the higher bytes).
        let i = at + (flags.trailing_zeros() / 8) as usize;
        out.push_str(&s[copied..i]);
        push_escape(out, bytes[i], after_newline);
        (copied, at) = (i + 1, i + 1);
    }
    for (i, &b) in bytes.iter().enumerate().skip(at) {
        if ESCAPE[b as usize] != 0 {
            out.push_str(&s[copied..i]);
            push_escape(out, b, after_newline);
            copied = i + 1;
        }
    }
    out.push_str(&s[copied..]);
}

/// Appends the escape of `b` (a byte JSON escapes), and `after_newline` after a line break's.
fn push_escape(out: &mut String, b: u8, after_newline: &str) {
    out.push('\\');
    match ESCAPE[b as usize] {
        b'u' => {
            out.push_str("u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
        b'n' => {
            out.push('n');
            out.push_str(after_newline);
        }
        e => out.push(e as char),
    }
}

/// The high bit of each of the eight bytes of `word` that may be escaped (below 0x20, `"` or
/// `\`): none exactly when no byte is, and the lowest one set is always one that is. With
/// `ones` a 1 in every byte, a byte below `n` (for `n` up to 128) sets its high bit in
/// `(w - n·ones) & !w & highs`, and a byte equal to `c` is a zero byte of `w ^ c·ones`; a byte
/// above one that is may be flagged too.
#[inline]
fn escaped_in(word: u64) -> u64 {
    let ones = u64::MAX / 255;
    let highs = ones << 7;
    let below = |w: u64, n: u64| w.wrapping_sub(ones * n) & !w & highs;
    let zero = |w: u64| below(w, 1);
    below(word, 0x20) | zero(word ^ (ones * b'"' as u64)) | zero(word ^ (ones * b'\\' as u64))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// What follows the backslash of each byte's escape (`u`: `\u00XX`), 0 for a byte kept: the
/// table of serde_json's writer.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(v: &Value) -> String {
        let mut out = String::new();
        write_value(&mut out, v);
        out
    }

    /// Every byte below 0x80 and a few characters beyond, alone and at every offset of a word
    /// (so each lands in each lane of the eight-byte test, and in the tail a word does not
    /// cover), and strings drawn from them; numbers of every kind; nesting.
    #[test]
    fn writes_what_serde_json_writes() {
        let mut chars: Vec<char> = (0u8..0x80).map(char::from).collect();
        chars.extend(['é', 'ß', '×', '\u{2028}', '\u{7f}', '😀', '\u{ffff}']);
        for &c in &chars {
            for pad in 0..17 {
                for tail in [0, 1, 7, 9] {
                    let s = format!("{}{c}{}", "a".repeat(pad), "b".repeat(tail));
                    let v = Value::String(s);
                    assert_eq!(ours(&v), serde_json::to_string(&v).unwrap(), "{v:?}");
                }
            }
        }
        // Strings of random characters from the set, of every length up to 70.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..70 {
            for _ in 0..40 {
                let s: String = (0..len)
                    .map(|_| {
                        // Mostly letters, as text is, with every kind of byte now and then.
                        let r = next();
                        if r % 3 == 0 {
                            chars[(r >> 8) as usize % chars.len()]
                        } else {
                            'x'
                        }
                    })
                    .collect();
                let v = json!({ s.clone(): [s.clone(), {"k": s}] });
                assert_eq!(ours(&v), serde_json::to_string(&v).unwrap());
            }
        }
        let numbers = json!([
            0,
            1,
            -1,
            u64::MAX,
            i64::MIN,
            0.5,
            -0.0,
            1e300,
            1.0e-7,
            12345.678,
            f64::MAX,
            f64::MIN_POSITIVE,
            100.0
        ]);
        assert_eq!(ours(&numbers), serde_json::to_string(&numbers).unwrap());
        let nested = json!({"b": [null, true, false, [], {}, [[{"x": "y\n"}]]], "a": {"": ""}});
        assert_eq!(ours(&nested), serde_json::to_string(&nested).unwrap());
    }

    /// The word test flags exactly the words that hold a byte to escape, its lowest flag on the
    /// first of them: every byte value in every lane, among bytes escaped or not.
    #[test]
    fn the_word_test_flags_the_first_byte_to_escape() {
        for lane in 0..8 {
            for b in 0u8..=255 {
                let mut word = [b'a'; 8];
                word[lane] = b;
                // Neighbours never escaped that carry or borrow most (0x20, just past the
                // control bytes, and 0xff), and neighbours escaped too (several in one word).
                for fill in [b'a', 0x20, 0xff, b'#', b']', 0, 1, 0x1f, b'"', b'\\'] {
                    let mut w = word.map(|x| if x == b'a' { fill } else { x });
                    w[lane] = b;
                    let first = w.iter().position(|&x| ESCAPE[x as usize] != 0);
                    let flags = escaped_in(u64::from_le_bytes(w));
                    let lowest = (flags != 0).then(|| (flags.trailing_zeros() / 8) as usize);
                    assert_eq!(lowest, first, "{w:?}");
                }
            }
        }
    }
}
