//! Secrets stay whole: what an agent writes back is built from text it was shown redacted, so
//! a write never puts the redaction marker where a secret stood, and a digest confirms
//! nothing about redacted bytes.
//!
//! * [`shown_digest`] is the digest every answer carries for a file (`files.read`, the file
//!   writes, knowledge objects) and every `expected_digest` is compared with: `sha256:` of the
//!   text as it is shown — redacted — so guessing a secret and hashing the guesses confirms
//!   nothing. A file without secrets keeps the digest of its bytes.
//! * [`keep`] turns the text an agent means to write (a file read with its secrets shown as
//!   [`MARKER`], then edited) back into bytes: every line the agent left as it was shown gets
//!   its secrets back, and so does a changed line whose markers stand where the shown line had
//!   them (the text around them changed); a changed line whose markers do not match the secrets
//!   the file holds there is refused, naming the line. A marker on a line where no secret
//!   stood is written as it is (a file about redaction may hold one).
//!
//! The store runs [`keep`] once more over every write of agent text, as the one guard that a
//! marker never replaces a secret (`store::run`).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use crate::redact::{redact, MARKER};

/// The text as an agent is shown it: redacted.
pub fn shown(text: &str) -> Cow<'_, str> {
    redact(text).0
}

/// `sha256:<hex>` of the bytes as they are shown: a text file redacted, anything else as is.
pub fn shown_digest(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        let (shown, n) = redact(text);
        if n > 0 {
            return format!(
                "sha256:{}",
                crate::text::hex(&Sha256::digest(shown.as_bytes()))
            );
        }
    }
    format!("sha256:{}", crate::text::hex(&Sha256::digest(bytes)))
}

/// A line of the new text holds the marker where the file holds a secret seneschal cannot put
/// back: its 1-based number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// The line of the new text.
    pub line: usize,
}

impl Lost {
    /// The refusal, pointing at `field`.
    pub fn error(self, path: &str, field: &str) -> crate::error::CapabilityError {
        crate::error::CapabilityError::invalid_input(format!(
            "line {} of the new `{path}` holds the redaction marker {MARKER} where the file \
             holds a secret that was never shown: writing it would replace the secret with the \
             marker. Keep that line as it was shown (its secret is kept), or write it without \
             the marker",
            self.line
        ))
        .at(field)
        .with_data(serde_json::json!({ "line": self.line }))
    }
}

/// One run of the old file: the lines as shown and as they are.
struct Unit<'a> {
    shown: Vec<&'a str>,
    raw: Vec<&'a str>,
}

/// The new text with every secret the agent could not see put back where it stood (see the
/// module); `new` itself when the old text shows no secret or the new one holds no marker.
pub fn keep<'n>(old: &str, new: &'n str) -> Result<Cow<'n, str>, Lost> {
    if !new.contains(MARKER) {
        return Ok(Cow::Borrowed(new));
    }
    let (shown, n) = redact(old);
    if n == 0 {
        return Ok(Cow::Borrowed(new));
    }
    let raw_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let shown_lines: Vec<&str> = shown.split_inclusive('\n').collect();
    // Which raw lines each shown line stands for: runs of equal lines one by one, a changed
    // run line by line when it kept its length (a secret inside a line), else whole (a key
    // block or a value over several lines shown as one marker).
    let mut units: Vec<Unit<'_>> = Vec::new();
    let mut unit_of: Vec<usize> = Vec::with_capacity(shown_lines.len());
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &raw_lines, &shown_lines) {
        let (_, r, s) = op.as_tag_tuple();
        if r.len() == s.len() {
            for (ri, si) in r.zip(s) {
                unit_of.push(units.len());
                units.push(Unit {
                    shown: vec![shown_lines[si]],
                    raw: vec![raw_lines[ri]],
                });
            }
        } else {
            for _ in s.clone() {
                unit_of.push(units.len());
            }
            units.push(Unit {
                shown: shown_lines[s].to_vec(),
                raw: raw_lines[r].to_vec(),
            });
        }
    }
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = String::with_capacity(new.len() + old.len());
    let mut done_unit: Option<usize> = None;
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &shown_lines, &new_lines) {
        let (tag, o, w) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {
                for (oi, wi) in o.zip(w) {
                    let u = unit_of[oi];
                    let unit = &units[u];
                    if unit.shown.len() == 1 {
                        out.push_str(unit.raw.concat().as_str());
                        continue;
                    }
                    // A block: its raw lines once, and only when it is kept whole.
                    if done_unit == Some(u) {
                        continue;
                    }
                    let first = unit_of.iter().position(|x| *x == u).unwrap_or(oi);
                    let whole = first == oi
                        && (oi..oi + unit.shown.len())
                            .all(|k| shown_lines.get(k) == new_lines.get(wi + k - oi));
                    if !whole {
                        return Err(Lost { line: wi + 1 });
                    }
                    out.push_str(unit.raw.concat().as_str());
                    done_unit = Some(u);
                }
            }
            similar::DiffTag::Delete => {}
            similar::DiffTag::Insert | similar::DiffTag::Replace => {
                let olds: Vec<usize> = o.collect();
                for (k, wi) in w.enumerate() {
                    let line = new_lines[wi];
                    if !line.contains(MARKER) {
                        out.push_str(line);
                        continue;
                    }
                    let Some(&oi) = olds.get(k) else {
                        // No line stood here: a marker written where no secret was.
                        out.push_str(line);
                        continue;
                    };
                    let unit = &units[unit_of[oi]];
                    if unit.shown.len() != 1 {
                        return Err(Lost { line: wi + 1 });
                    }
                    let (s, r) = (unit.shown[0], unit.raw[0]);
                    if s == r {
                        out.push_str(line);
                        continue;
                    }
                    match restore(s, r, line) {
                        Some(l) => out.push_str(&l),
                        None => return Err(Lost { line: wi + 1 }),
                    }
                }
            }
        }
    }
    Ok(Cow::Owned(out))
}

/// The changed line `new` with the secrets of `raw` (shown as `shown`) in place of its
/// markers, when it has as many markers as `shown` (the text around them may differ).
fn restore(shown: &str, raw: &str, new: &str) -> Option<String> {
    let parts: Vec<&str> = shown.split(MARKER).collect();
    let wanted: Vec<&str> = new.split(MARKER).collect();
    if parts.len() != wanted.len() {
        return None;
    }
    // The secrets: what stands in `raw` between the literal parts of `shown`.
    let mut secrets = Vec::with_capacity(parts.len() - 1);
    let mut pos = parts[0].len();
    if !raw.starts_with(parts[0]) {
        return None;
    }
    for (t, part) in parts.iter().enumerate().skip(1) {
        let end = if t == parts.len() - 1 {
            if !raw[pos..].ends_with(part) || raw.len() - part.len() <= pos {
                return None;
            }
            raw.len() - part.len()
        } else {
            if part.is_empty() {
                return None;
            }
            pos + 1 + raw.get(pos + 1..)?.find(part)?
        };
        secrets.push(&raw[pos..end]);
        pos = end + part.len();
    }
    let mut rebuilt = String::from(parts[0]);
    for (secret, part) in secrets.iter().zip(&parts[1..]) {
        rebuilt.push_str(secret);
        rebuilt.push_str(part);
    }
    if rebuilt != raw {
        return None;
    }
    let mut out = String::from(wanted[0]);
    for (secret, part) in secrets.iter().zip(&wanted[1..]) {
        out.push_str(secret);
        out.push_str(part);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "name: app\npassword: hunter2hunter2\nport: 80\ntoken = \"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\"\n";

    fn shown(old: &str) -> String {
        redact(old).0.into_owned()
    }

    #[test]
    fn a_read_written_back_keeps_every_secret() {
        let s = shown(OLD);
        assert!(s.contains(MARKER) && !s.contains("hunter2"), "{s}");
        assert_eq!(keep(OLD, &s).unwrap(), OLD);
        // An unrelated line changed: the secrets stay, the change lands.
        let edited = s.replace("port: 80", "port: 8080");
        assert_eq!(
            keep(OLD, &edited).unwrap(),
            OLD.replace("port: 80", "port: 8080")
        );
        // A line added and one removed around them.
        let more = format!("# config\n{}", s.replace("name: app\n", ""));
        assert_eq!(
            keep(OLD, &more).unwrap(),
            format!("# config\n{}", OLD.replace("name: app\n", ""))
        );
    }

    #[test]
    fn a_changed_line_keeps_its_secret_where_its_marker_stands() {
        let s = shown(OLD);
        let edited = s.replace(
            "password: [REDACTED]",
            "password: [REDACTED]  # rotated yearly",
        );
        let kept = keep(OLD, &edited).unwrap();
        assert!(
            kept.contains("password: hunter2hunter2  # rotated yearly"),
            "{kept}"
        );
    }

    #[test]
    fn a_marker_that_would_replace_a_secret_is_refused_naming_the_line() {
        let s = shown(OLD);
        // The marker moved into another shape on the secret's line.
        let edited = s.replace("password: [REDACTED]", "pw: [REDACTED] [REDACTED]");
        assert_eq!(keep(OLD, &edited), Err(Lost { line: 2 }));
    }

    #[test]
    fn a_secret_removed_or_replaced_by_a_value_is_the_agent_s_to_write() {
        let s = shown(OLD);
        let gone = s.replace("password: [REDACTED]\n", "");
        assert_eq!(
            keep(OLD, &gone).unwrap(),
            OLD.replace("password: hunter2hunter2\n", "")
        );
        let set = s.replace("password: [REDACTED]", "password: ${DB_PASSWORD}");
        assert_eq!(
            keep(OLD, &set).unwrap(),
            OLD.replace("password: hunter2hunter2", "password: ${DB_PASSWORD}")
        );
    }

    #[test]
    fn a_marker_where_no_secret_stood_is_text() {
        let old = "plain\n";
        let new = "plain\nthe marker is [REDACTED]\n";
        assert_eq!(keep(old, new).unwrap(), new);
        let with_secret = format!("{OLD}note\n");
        let new = format!("{}note: [REDACTED] is the marker\n", shown(OLD));
        assert_eq!(
            keep(&with_secret, &new).unwrap(),
            format!("{OLD}note: [REDACTED] is the marker\n")
        );
    }

    #[test]
    fn a_block_shown_as_one_marker_is_kept_whole_or_refused() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n";
        let old = format!("a\n{key}b\n");
        let s = shown(&old);
        assert_eq!(keep(&old, &s).unwrap(), old);
        let edited = s.replace("b\n", "c\n");
        assert_eq!(keep(&old, &edited).unwrap(), old.replace("\nb\n", "\nc\n"));
    }

    #[test]
    fn the_shown_digest_confirms_nothing_about_a_secret() {
        let a = "password: hunter2hunter2\n";
        let b = "password: other-secret-99\n";
        assert_eq!(shown_digest(a.as_bytes()), shown_digest(b.as_bytes()));
        assert_eq!(
            shown_digest(b"plain\n"),
            format!("sha256:{}", crate::text::hex(&Sha256::digest(b"plain\n")))
        );
    }
}
