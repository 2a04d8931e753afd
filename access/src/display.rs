//! Text a person reads before deciding: the approval question (its review sentence, the
//! plan's paths, the diff, a commit's message) as the cockpit, `seneschal approvals`, a
//! terminal prompt and an MCP client's form show it.
//!
//! The text comes from an agent or a repository, so it must not forge the question: a newline
//! in a path draws a line of its own ("Approve: harmless.md"), U+202E shows a name backwards,
//! a zero-width or tag character hides text, a 6,000-character subject buries the sentence.
//! Every such character is shown escaped (`\n`, `\u{202e}`), and a text over its length is
//! cut with a mark that says how much was left out. Letters of every script pass unchanged.

/// Whether a person reading `c` would not see it for what it is: a control character (C0,
/// DEL, C1), a bidirectional mark, embedding, override or isolate, a zero-width or otherwise
/// invisible format character, a line or paragraph separator, a tag character.
pub fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

/// `text` on one line for a person: every hidden character ([`is_hidden`]) escaped — `\n`,
/// `\r`, `\t`, else `\u{hex}` — and at most `max_chars` characters of `text` shown, the rest
/// counted in a mark (`… (5,880 more characters)`).
pub fn for_person(text: &str, max_chars: usize) -> String {
    render(text, max_chars, false)
}

/// [`for_person`] for text of several lines (a diff, a commit message): line breaks (`\n`,
/// and `\r\n`) and tabs stay, every other hidden character is escaped.
pub fn lines_for_person(text: &str, max_chars: usize) -> String {
    render(text, max_chars, true)
}

fn render(text: &str, max_chars: usize, lines: bool) -> String {
    let (head, left_out) = cut(text, max_chars);
    let mut out = String::with_capacity(head.len() + 32);
    let mut chars = head.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' if lines => out.push(c),
            '\r' if lines && chars.peek() == Some(&'\n') => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    if left_out > 0 {
        out.push_str(&format!("… ({} more characters)", thousands(left_out)));
    }
    out
}

/// The head of `text` shown within `max` characters, and how many characters are left out.
/// A cut never halves a word (a run of non-whitespace): the head of a secret cut in two would
/// match no redaction rule, so a cut word is left out whole.
fn cut(text: &str, max: usize) -> (&str, usize) {
    // Never more characters than bytes: a short text needs no count.
    if text.len() <= max {
        return (text, 0);
    }
    let Some((at, _)) = text.char_indices().nth(max) else {
        return (text, 0);
    };
    let mut end = at;
    let mid_word =
        !text[at..].starts_with(char::is_whitespace) && !text[..at].ends_with(char::is_whitespace);
    if mid_word {
        end = text[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
    }
    (&text[..end], text[end..].chars().count())
}

/// `n` with a comma between thousands: `5,880`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Every string of `value` (object keys too) passed through [`for_person`], each at most
/// `max_chars` characters; the strings under a key named in `multiline` keep their lines
/// ([`lines_for_person`]) and may hold up to `max_lines_chars`.
pub fn value_for_person(
    value: &serde_json::Value,
    max_chars: usize,
    multiline: &[&str],
    max_lines_chars: usize,
) -> serde_json::Value {
    use serde_json::Value;
    fn walk(v: &Value, max: usize, multi: &[&str], max_lines: usize, lines: bool) -> Value {
        match v {
            Value::String(s) if lines => Value::String(lines_for_person(s, max_lines)),
            Value::String(s) => Value::String(for_person(s, max)),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| walk(i, max, multi, max_lines, lines))
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let lines = multi.contains(&k.as_str());
                        (for_person(k, max), walk(v, max, multi, max_lines, lines))
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(value, max_chars, multiline, max_lines_chars, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_escaped_and_letters_pass() {
        assert_eq!(
            for_person("a\nApprove: harmless.md", 100),
            "a\\nApprove: harmless.md"
        );
        assert_eq!(for_person("evil\u{202e}dm.exe", 100), "evil\\u{202e}dm.exe");
        assert_eq!(
            for_person("x\r\ty\u{0}\u{7f}\u{85}", 100),
            "x\\r\\ty\\u{0}\\u{7f}\\u{85}"
        );
        for hidden in [
            '\u{200b}',
            '\u{200f}',
            '\u{202a}',
            '\u{2066}',
            '\u{2069}',
            '\u{2060}',
            '\u{2064}',
            '\u{feff}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
            '\u{2028}',
            '\u{2029}',
            '\u{ad}',
            '\u{61c}',
        ] {
            let shown = for_person(&format!("a{hidden}b"), 100);
            assert_eq!(shown, format!("a\\u{{{:x}}}b", u32::from(hidden)));
            assert!(!shown.contains(hidden));
        }
        let letters = "Écrire docs/日本語/файл-ß — ok ✓ 🦀 e\u{301}";
        assert_eq!(for_person(letters, 100), letters);
        assert_eq!(for_person("", 0), "");
    }

    #[test]
    fn long_text_is_cut_with_a_mark_counting_the_rest() {
        let subject = "word ".repeat(1_200);
        let shown = for_person(&subject, 120);
        assert_eq!(
            shown,
            format!("{}… (5,880 more characters)", "word ".repeat(24))
        );
        assert_eq!(for_person("abc", 3), "abc", "exactly at the cap: no mark");
        assert_eq!(for_person("ab cd", 4), "ab … (2 more characters)");
        assert_eq!(for_person("ab cd", 3), "ab … (2 more characters)");
        // The cap counts characters of the text, not bytes nor escapes.
        assert_eq!(for_person("é\nééé", 3), "é\\n… (3 more characters)");
        // A cut word is left out whole: no head of a secret is shown.
        assert_eq!(
            for_person("see ghp_abcdefgh", 8),
            "see … (12 more characters)"
        );
        assert_eq!(
            for_person(&"s".repeat(6_000), 100),
            "… (6,000 more characters)"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn lines_keep_their_breaks_and_tabs_only() {
        let message = "Subject\r\n\n\tBody \u{202e}txt.exe\rFake: line\u{200b}";
        assert_eq!(
            lines_for_person(message, 1_000),
            "Subject\r\n\n\tBody \\u{202e}txt.exe\\rFake: line\\u{200b}"
        );
    }

    #[test]
    fn a_value_is_shown_string_by_string() {
        let v = serde_json::json!({
            "plan": {"create": ["a\nApprove: b.md"]},
            "diff": "+x\n+\u{202e}y\n",
            "n": 3,
            "k\u{200b}": null,
        });
        let shown = value_for_person(&v, 50, &["diff"], 100);
        assert_eq!(
            shown,
            serde_json::json!({
                "plan": {"create": ["a\\nApprove: b.md"]},
                "diff": "+x\n+\\u{202e}y\n",
                "n": 3,
                "k\\u{200b}": null,
            })
        );
    }
}
