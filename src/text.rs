//! Small text helpers shared by every layer, importing nothing of the crate: lower-case hex
//! and the text of a panic's payload.

use std::any::Any;

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The message a panic carried (`panic!("…")` with or without arguments), or `fallback` when
/// its payload is not text.
pub fn panic_message(payload: &(dyn Any + Send), fallback: &str) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| fallback.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn a_panic_message_is_its_text_or_the_fallback() {
        let owned = std::panic::catch_unwind(|| panic!("{} failed", "x")).unwrap_err();
        assert_eq!(panic_message(owned.as_ref(), "?"), "x failed");
        let fixed = std::panic::catch_unwind(|| panic!("fixed")).unwrap_err();
        assert_eq!(panic_message(fixed.as_ref(), "?"), "fixed");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(panic_message(other.as_ref(), "a panic"), "a panic");
    }
}
