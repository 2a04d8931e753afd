//! Byte-level helpers of the MCP projection: opaque pagination cursors and the Base64
//! sentinel of Streamable HTTP headers.

/// An opaque cursor naming a position in one list.
pub fn encode_cursor(list: &str, offset: usize) -> String {
    let plain = format!("{list}:{offset}");
    seneschal_access::text::hex(plain.as_bytes())
}

/// The offset an opaque cursor names in `list`, or `None` when it is not one of ours, names
/// another list, or points past `len`.
pub fn decode_cursor(cursor: &str, list: &str, len: usize) -> Option<usize> {
    if cursor.len() % 2 != 0 || cursor.len() > seneschal_access::limits::CURSOR_CHARS {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(cursor.get(i..i + 2)?, 16).ok())
        .collect();
    let plain = String::from_utf8(bytes?).ok()?;
    let (name, offset) = plain.rsplit_once(':')?;
    let offset: usize = offset.parse().ok()?;
    (name == list && offset > 0 && offset < len).then_some(offset)
}

/// Decodes a Streamable HTTP header value: `=?base64?...?=` is Base64 (standard alphabet,
/// padding optional) of UTF-8; any other value is taken as it is. `None` when the sentinel
/// wraps something that is not Base64 of UTF-8.
pub fn header_value(raw: &str) -> Option<String> {
    let Some(inner) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    else {
        return Some(raw.to_string());
    };
    let mut bits: u32 = 0;
    let mut nbits = 0;
    let mut out = Vec::with_capacity(inner.len() * 3 / 4);
    for c in inner.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_strangers() {
        let c = encode_cursor("resources", 100);
        assert_eq!(decode_cursor(&c, "resources", 150), Some(100));
        assert_eq!(decode_cursor(&c, "templates", 150), None);
        assert_eq!(decode_cursor(&c, "resources", 100), None);
        assert_eq!(decode_cursor("zz", "resources", 150), None);
        assert_eq!(decode_cursor("abc", "resources", 150), None);
        assert_eq!(decode_cursor("", "resources", 150), None);
    }

    #[test]
    fn sentinel_headers_decode() {
        assert_eq!(header_value("plain").as_deref(), Some("plain"));
        assert_eq!(
            header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            header_value("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        assert_eq!(header_value("=?base64?!!?="), None);
    }
}
