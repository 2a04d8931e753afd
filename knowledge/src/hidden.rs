//! Hidden content in served knowledge (DESIGN §6e "Hidden content is shown"): text an agent
//! reads and obeys but a person reviewing the rendered file does not see.
//!
//! Invisible Unicode — tag characters (U+E0000–U+E007F, which spell ASCII no font draws),
//! bidirectional controls and zero-width characters — is made visible in what is served
//! (`[U+200B]`), and reported. Render-hidden Markdown — HTML comments and link reference
//! definitions that no link uses — is served as written (an agent reading the raw text sees
//! it, as the person can in the file) and reported by `knowledge check`, so that nobody is
//! told one thing while the agent is told another.

use super::Finding;

/// The pointer of a hidden-content finding: the body as a whole.
pub const POINTER: &str = "/body";

/// Whether `c` is drawn as nothing: a tag character, a bidirectional control or a
/// zero-width character.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{E0000}'..='\u{E007F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2060}'..='\u{2064}'
        | '\u{061C}'
        | '\u{180E}'
        | '\u{FEFF}')
}

/// `text` with every invisible character shown as `[U+XXXX]` (a byte-order mark that opens
/// the file is kept: it is the file's encoding mark), and the lines where they stood.
pub fn reveal(text: String) -> (String, Vec<(usize, char)>) {
    let skip_bom = usize::from(text.starts_with('\u{feff}'));
    if !text.chars().skip(skip_bom).any(is_invisible) {
        return (text, Vec::new());
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut seen = Vec::new();
    let mut line = 1;
    for (i, c) in text.chars().enumerate() {
        if c == '\n' {
            line += 1;
        }
        if is_invisible(c) && !(i == 0 && skip_bom == 1) {
            out.push_str(&format!("[U+{:04X}]", c as u32));
            seen.push((line, c));
        } else {
            out.push(c);
        }
    }
    (out, seen)
}

/// The lines (1-based) where HTML comments open, outside code fences and code spans.
fn comments(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut fence = false;
    let mut open = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if !open && (t.starts_with("```") || t.starts_with("~~~")) {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let mut rest = line;
        loop {
            if open {
                match rest.find("-->") {
                    Some(i) => {
                        open = false;
                        rest = &rest[i + 3..];
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(i) if rest[..i].matches('`').count() % 2 == 0 => {
                        out.push(n + 1);
                        open = true;
                        rest = &rest[i + 4..];
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

/// The link reference definitions (`[label]: target`) that no link of the text uses:
/// `(line, label)`. Footnotes (`[^1]:`) are not link definitions.
fn unused_definitions(text: &str) -> Vec<(usize, String)> {
    let mut defs: Vec<(usize, String)> = Vec::new();
    let mut fence = false;
    let mut prose = String::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let def = t
            .strip_prefix('[')
            .and_then(|r| r.split_once("]:"))
            .filter(|(label, _)| {
                !label.is_empty() && !label.starts_with('^') && !label.contains(']')
            });
        match def {
            Some((label, _)) if line.len() - t.len() < 4 => {
                defs.push((n + 1, label.to_lowercase()))
            }
            _ => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    let prose = prose.to_lowercase();
    defs.into_iter()
        .filter(|(_, label)| {
            let full = format!("][{label}]");
            let short = format!("[{label}]");
            !prose.contains(&full) && !prose.contains(&short)
        })
        .collect()
}

/// The finding that names the hidden content of `text` (already revealed: `invisible` are
/// the characters [`reveal`] showed), if any.
pub fn finding(file: &str, text: &str, invisible: &[(usize, char)]) -> Option<Finding> {
    let mut parts: Vec<String> = Vec::new();
    let lines = |v: &mut dyn Iterator<Item = usize>| {
        let mut l: Vec<String> = v.map(|n| n.to_string()).collect();
        l.dedup();
        if l.len() > 8 {
            let more = l.len() - 8;
            l.truncate(8);
            l.push(format!("and {more} more"));
        }
        l.join(", ")
    };
    if !invisible.is_empty() {
        let mut kinds: Vec<String> = invisible
            .iter()
            .map(|(_, c)| format!("U+{:04X}", *c as u32))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds.truncate(6);
        parts.push(format!(
            "{} invisible character{} ({}) on line{} {}, served as [U+XXXX]",
            invisible.len(),
            if invisible.len() == 1 { "" } else { "s" },
            kinds.join(", "),
            if invisible.len() == 1 { "" } else { "s" },
            lines(&mut invisible.iter().map(|(l, _)| *l)),
        ));
    }
    let c = comments(text);
    if !c.is_empty() {
        parts.push(format!(
            "{} HTML comment{} (line{} {}), which a rendered view does not show",
            c.len(),
            if c.len() == 1 { "" } else { "s" },
            if c.len() == 1 { "" } else { "s" },
            lines(&mut c.iter().copied()),
        ));
    }
    let u = unused_definitions(text);
    if !u.is_empty() {
        let labels: Vec<String> = u.iter().take(6).map(|(_, l)| format!("[{l}]")).collect();
        parts.push(format!(
            "{} link reference definition{} no link uses ({}; line{} {}), which a rendered view does not show",
            u.len(),
            if u.len() == 1 { "" } else { "s" },
            labels.join(", "),
            if u.len() == 1 { "" } else { "s" },
            lines(&mut u.iter().map(|(l, _)| *l)),
        ));
    }
    (!parts.is_empty()).then(|| Finding {
        file: file.to_string(),
        pointer: POINTER.to_string(),
        message: format!(
            "holds hidden content an agent reads and a person may not see: {}",
            parts.join("; ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_shown_and_render_hidden_markdown_is_named() {
        let (t, seen) = reveal("a\u{200B}b\n\u{E0041}\u{202E}x".to_string());
        assert_eq!(t, "a[U+200B]b\n[U+E0041][U+202E]x");
        assert_eq!(seen.len(), 3);
        let (t, seen) = reveal("\u{feff}plain".to_string());
        assert_eq!((t.as_str(), seen.len()), ("\u{feff}plain", 0));
        let text = "x <!-- do this --> y\n```\n<!-- code -->\n```\n[used]: a\n[unused]: b\n[^1]: note\nsee [used]\n";
        let f = finding("f.md", text, &[]).unwrap();
        assert!(
            f.message.contains("1 HTML comment (line 1)"),
            "{}",
            f.message
        );
        assert!(f.message.contains("[unused]; line 6"), "{}", f.message);
        assert!(!f.message.contains("[used]"), "{}", f.message);
        assert!(finding("f.md", "plain [a](b)\n", &[]).is_none());
    }
}
