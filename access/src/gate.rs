//! The content gate: the secret-file and secret-content rules applied to a **whole** file or
//! blob, before any reader splits it into lines, hunks, candidates or base64.
//!
//! Redaction ([`crate::redact`], run by the executor on every answer) sees strings one at a
//! time: a private key block cut into blame lines or diff hunks is a run of base64 lines with
//! no BEGIN line beside them, which no rule can recognise. So every reader of repository bytes
//! asks the gate about the whole thing first:
//!
//! * [`name`]: a path with `.git` or a secret-bearing name in any component
//!   ([`crate::rules::name_rule`]);
//! * [`content`]: bytes that hold a private key block of any armour
//!   ([`crate::redact::holds_private_key`]);
//! * [`worktree_file`]: a working-tree file opened through the confined root
//!   ([`crate::rootfs`]), read whole under [`WHOLE_CAP`], then [`content`];
//! * [`fragment_may_hold_key`]: whether a piece already cut from a file (a diff hunk) could be
//!   key material, so the reader asks for the whole blobs — a cheap prefilter, never the
//!   verdict.
//!
//! `files.read` and `files.search` refuse or skip a file by these rules; `repo.blame` refuses
//! a key file at a revision or in the working tree; `repo.diff` and `repo.show` leave a file out
//! of the patch (counted in `skipped_secret_files`) when either side's blob holds a key; prompt
//! images are refused by both rules.

use std::borrow::Cow;
use std::path::Path;

use crate::error::CapabilityError;
use crate::rootfs::{Denied, Follow, Root};
use crate::rules::Rule;

/// The most bytes of one whole file or blob the gate reads (as `files.read` caps a file).
pub const WHOLE_CAP: u64 = crate::limits::GATE_WHOLE_CAP;

/// The rule `path` (`/`-separated, relative) breaks by name, in any of its components.
pub fn name(path: &str) -> Option<Rule> {
    path.split('/')
        .find_map(|part| crate::rules::name_rule(std::ffi::OsStr::new(part)))
}

/// The rule whole `bytes` break: [`Rule::SecretContent`] when they hold a private key block.
pub fn content(bytes: &[u8]) -> Option<Rule> {
    crate::redact::holds_private_key(bytes).then_some(Rule::SecretContent)
}

/// The sentence of a refusal by `rule`.
pub fn why(rule: Rule) -> &'static str {
    match rule {
        Rule::SecretContent => "it holds a private key block",
        Rule::GitDir => "nothing under .git/ is served",
        Rule::SizeCap => "it is larger than a reader accepts",
        _ => "secret-bearing files are never served",
    }
}

/// The working-tree file `rel` (confined already) read whole through the root, or the error
/// that refuses it: not there, a folder, a rule of [`crate::rootfs`], over [`WHOLE_CAP`], or
/// holding a private key. `path` and `field` name it in the error.
pub fn worktree_file(
    root: &Path,
    rel: &str,
    path: &str,
    field: &str,
) -> Result<Vec<u8>, CapabilityError> {
    let handle = Root::open(root).map_err(|e| {
        CapabilityError::internal(format!("the repository root cannot be opened: {e}"))
    })?;
    let mut bytes = Vec::new();
    handle
        .open_file(rel, Follow::Inside)
        .and_then(|mut file| file.read_capped(WHOLE_CAP, &mut bytes))
        .map_err(|denied| match denied {
            Denied::Refused(rule, why) => crate::confine::refusal(rule, path, &why, field),
            Denied::NotFound => {
                CapabilityError::not_found(format!("`{path}` does not exist")).at(field)
            }
            Denied::IsDir => {
                CapabilityError::invalid_input(format!("`{path}` is a directory, not a file"))
                    .at(field)
            }
            other => CapabilityError::not_found(format!("`{path}` {other}")).at(field),
        })?;
    checked(bytes, path, field)
}

/// `bytes` of `path` when [`content`] passes them, else the refusal.
pub fn checked(bytes: Vec<u8>, path: &str, field: &str) -> Result<Vec<u8>, CapabilityError> {
    match content(&bytes) {
        Some(rule) => Err(crate::confine::refusal(rule, path, why(rule), field)),
        None => Ok(bytes),
    }
}

/// The lines of `whole` (a file's text) as redaction shows them when it reads the file whole,
/// `None` when it changes nothing: a reader that hands out lines one by one (blame) takes each
/// line from here, so a secret whose shape spans lines (a YAML block scalar, a value on the
/// line after its key) is found where it is whole. The executor still redacts every line.
pub fn redacted_lines(whole: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(whole);
    // The same answer as `redact` of the whole text, at the cost of the lines that hold a gate.
    let (redacted, n) = crate::redact::redact_lines(&text);
    (n > 0).then(|| redacted.lines().map(str::to_string).collect())
}

/// `patch` (a unified diff) with each hunk redacted as its file reads: the old side (context
/// and `-` lines) and the new side (context and `+` lines) of every hunk are redacted as one
/// text each, without the diff's line prefixes, so a secret whose shape spans lines (a YAML
/// block scalar, a value on the line after its key) is found although the patch interleaves the
/// sides; each line takes its redacted text back with its prefix. A side whose redaction joins
/// lines answers the marker on each of its lines. `None` when nothing was redacted, else the text and how many secrets it replaced. A key line
/// outside a hunk's context is not seen: the executor's pass over the patch is what remains.
///
/// Each hunk is redacted alone, and a hunk that no gate and no secret value of the environment
/// touches ([`crate::redact::spans_redaction_may_touch`]: one search of the whole patch) is left
/// as it is without being split into its sides: redaction would leave both as they are.
pub fn redacted_patch(patch: &str) -> Option<(String, usize)> {
    let Some(spans) = crate::redact::spans_redaction_may_touch(patch) else {
        return redacted_hunks(patch);
    };
    if spans.is_empty() {
        return None;
    }
    // The pieces the hunks are redacted in: each begins at the start of the patch or of a line
    // that begins a hunk (`@@`) or a file's section (`diff --git `), where `redacted_hunks`
    // ends the hunk before; so each piece redacted alone is what it is in the whole.
    let bytes = patch.as_bytes();
    let mut starts: Vec<usize> = vec![0];
    starts.extend(
        memchr::memchr_iter(b'\n', bytes)
            .map(|i| i + 1)
            .filter(|&i| bytes[i..].starts_with(b"@@") || bytes[i..].starts_with(b"diff --git ")),
    );
    let mut span = spans.iter().peekable();
    redacted_in_pieces(patch, starts, |start, end| {
        // Spans that end before this piece touch none after it.
        while span.next_if(|s| s.1 <= start).is_some() {}
        if span.peek().is_none_or(|s| s.0 >= end) {
            return None;
        }
        redacted_hunks(&patch[start..end]).map(|(text, n)| (Cow::Owned(text), n))
    })
}

/// `patch` with each piece (from each of `starts`, which begins with 0, to the next or the
/// end) replaced by `answer`'s text for it, where it has one; `None` when no piece's answer
/// replaced anything, else the text and the sum of the answers' counts.
fn redacted_in_pieces<'a>(
    patch: &str,
    mut starts: Vec<usize>,
    mut answer: impl FnMut(usize, usize) -> Option<(Cow<'a, str>, usize)>,
) -> Option<(String, usize)> {
    starts.push(patch.len());
    let (mut out, mut changed, mut copied) = (String::new(), 0usize, 0usize);
    for piece in starts.windows(2) {
        let (start, end) = (piece[0], piece[1]);
        if let Some((text, n)) = answer(start, end) {
            out.push_str(&patch[copied..start]);
            out.push_str(&text);
            copied = end;
            changed += n;
        }
    }
    if changed == 0 {
        return None;
    }
    out.push_str(&patch[copied..]);
    Some((out, changed))
}

/// The starts of the sections of `patch` (each `diff --git ` line) at or after `from`.
pub fn section_starts(patch: &[u8], from: usize) -> Vec<usize> {
    memchr::memmem::find_iter(&patch[from..], b"diff --git ")
        .map(|at| from + at)
        .filter(|&at| at == 0 || patch[at - 1] == b'\n')
        .collect()
}

/// Sections of a patch already passed through [`redacted_patch`], each kept with its text:
/// [`GatedSections::redacted`] takes a section's answer from here when the patch it is given
/// holds the same section, so that a patch gated section by section while git writes it is not
/// gated again after. [`redacted_patch`] ends every hunk at a section's first line, so a
/// section redacted alone is what it is in the whole patch.
#[derive(Debug, Default)]
pub struct GatedSections {
    /// By header line: each section's text and its answer.
    done: std::collections::HashMap<Vec<u8>, Vec<Gated>>,
}

/// A section's text and what [`redacted_patch`] answered for it.
type Gated = (String, Option<(String, usize)>);

impl GatedSections {
    /// Gates the whole sections of `patch` (the patch read so far) from `from` (a section's
    /// start) up to the start of its last section, which may not be whole yet, and returns
    /// that start. A section `skip` refuses by its header line (a file redacted by the whole
    /// file's redaction first), or that is not UTF-8, is left for later.
    pub fn add_whole(&mut self, patch: &[u8], from: usize, skip: &dyn Fn(&[u8]) -> bool) -> usize {
        let starts = section_starts(patch, from.min(patch.len()));
        let Some(&last) = starts.last() else {
            return from;
        };
        for pair in starts.windows(2) {
            let section = &patch[pair[0]..pair[1]];
            let header = section.split(|b| *b == b'\n').next().unwrap_or_default();
            let Ok(text) = std::str::from_utf8(section) else {
                continue;
            };
            if skip(header) {
                continue;
            }
            let answer = redacted_patch(text);
            self.done
                .entry(header.to_vec())
                .or_default()
                .push((text.to_string(), answer));
        }
        last
    }

    /// [`redacted_patch`] of `patch`, section by section, each section gated before taken
    /// from here.
    pub fn redacted(&self, patch: &str) -> Option<(String, usize)> {
        if self.done.is_empty() {
            return redacted_patch(patch);
        }
        let bytes = patch.as_bytes();
        let mut starts = section_starts(bytes, 0);
        if starts.first() != Some(&0) {
            starts.insert(0, 0);
        }
        redacted_in_pieces(patch, starts, |start, end| {
            let section = &patch[start..end];
            let header = section.split('\n').next().unwrap_or_default();
            let known = self.done.get(header.as_bytes()).and_then(|all| {
                all.iter()
                    .find(|(text, _)| text == section)
                    .map(|(_, answer)| answer.as_ref())
            });
            match known {
                Some(answer) => answer.map(|(t, n)| (Cow::Borrowed(t.as_str()), *n)),
                None => redacted_patch(section).map(|(t, n)| (Cow::Owned(t), n)),
            }
        })
    }
}

/// [`redacted_patch`] of every hunk of `patch`.
fn redacted_hunks(patch: &str) -> Option<(String, usize)> {
    let lines: Vec<&str> = patch.split('\n').collect();
    // The lines redaction changed, by index; the others are the patch's own.
    let mut replaced: Vec<Option<String>> = Vec::new();
    let mut changed = 0usize;
    let mut hunk: Vec<usize> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    let mut text = String::new();
    let mut flush = |hunk: &mut Vec<usize>, replaced: &mut Vec<Option<String>>| {
        for side in [b'-', b'+'] {
            at.clear();
            at.extend(hunk.iter().copied().filter(|&i| {
                matches!(lines[i].as_bytes().first(), Some(b' '))
                    || lines[i].as_bytes().first() == Some(&side)
            }));
            if at.is_empty() {
                continue;
            }
            // A context line the other side redacted is read as redacted (as the patch now
            // holds it).
            text.clear();
            for (k, &i) in at.iter().enumerate() {
                if k > 0 {
                    text.push('\n');
                }
                match replaced.get(i).and_then(Option::as_deref) {
                    Some(line) => text.push_str(&line[1..]),
                    None => text.push_str(&lines[i][1..]),
                }
            }
            let (red, n) = crate::redact::redact_lines(&text);
            if n == 0 {
                continue;
            }
            changed += n;
            if replaced.is_empty() {
                replaced.resize(lines.len(), None);
            }
            let red: Vec<&str> = red.split('\n').collect();
            if red.len() == at.len() {
                for (&i, new) in at.iter().zip(red) {
                    // The line as the other side left it, if that side changed it.
                    let old = replaced[i].as_deref().unwrap_or(lines[i]);
                    if &old[1..] != new {
                        replaced[i] = Some(format!("{}{new}", &lines[i][..1]));
                    }
                }
            } else {
                for &i in &at {
                    replaced[i] = Some(format!("{}{}", &lines[i][..1], crate::redact::MARKER));
                }
            }
        }
        hunk.clear();
    };
    let mut in_hunk = false;
    for (i, line) in lines.iter().enumerate() {
        let first = line.as_bytes().first().copied();
        if line.starts_with("@@") {
            flush(&mut hunk, &mut replaced);
            in_hunk = true;
        } else if line.starts_with("diff --git ") {
            flush(&mut hunk, &mut replaced);
            in_hunk = false;
        } else if in_hunk && matches!(first, Some(b' ' | b'+' | b'-')) {
            hunk.push(i);
        }
    }
    flush(&mut hunk, &mut replaced);
    if changed == 0 {
        return None;
    }
    let mut out = String::with_capacity(patch.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(replaced[i].as_deref().unwrap_or(line));
    }
    Some((out, changed))
}

/// Whether the file at `path` is one whose secrets may span lines (YAML and JSON: a block
/// scalar, a value on the line after its key), so a diff of it is redacted by the whole file.
pub fn spans_lines(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".yml", ".yaml", ".json", ".json5", ".jsonc"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// `patch` with the hunk lines of the file whose section starts with `header` (`diff --git a/…
/// b/…`) replaced by the lines of the whole file's redaction: `old` for `-` lines, `new` for
/// context and `+` lines (each `None` when that side changed nothing), found by the line numbers
/// of the hunk headers. How many lines changed, and the patch.
pub fn map_whole(
    patch: &str,
    header: &str,
    old: Option<&[String]>,
    new: Option<&[String]>,
) -> (String, usize) {
    let mut out: Vec<String> = Vec::new();
    let mut changed = 0;
    let (mut inside, mut in_hunk) = (false, false);
    let (mut o, mut n) = (0usize, 0usize);
    for line in patch.split('\n') {
        if line.starts_with("diff --git ") {
            inside = line == header;
            in_hunk = false;
        } else if inside && line.starts_with("@@ ") {
            // `@@ -a[,b] +c[,d] @@`: the first line of each side.
            let mut nums = line[3..].split(' ').take(2).map(|r| {
                r[1..]
                    .split(',')
                    .next()
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(1)
            });
            o = nums.next().unwrap_or(1);
            n = nums.next().unwrap_or(1);
            in_hunk = true;
        } else if inside && in_hunk {
            let pick = |side: Option<&[String]>, at: usize| {
                side.and_then(|s| at.checked_sub(1).and_then(|i| s.get(i)))
                    .cloned()
            };
            let replaced = match line.as_bytes().first() {
                Some(b' ') => {
                    let r = pick(new, n).or_else(|| pick(old, o));
                    o += 1;
                    n += 1;
                    r
                }
                Some(b'-') => {
                    o += 1;
                    pick(old, o - 1)
                }
                Some(b'+') => {
                    n += 1;
                    pick(new, n - 1)
                }
                _ => None,
            };
            if let Some(text) = replaced {
                if text != line[1..] {
                    out.push(format!("{}{text}", &line[..1]));
                    changed += 1;
                    continue;
                }
            }
        }
        out.push(line.to_string());
    }
    (out.join("\n"), changed)
}

/// The shortest run of base64 characters on a line that could be a line of key material.
const KEY_RUN: usize = 16;

/// Whether `fragment` (part of a file: a hunk, some lines) could hold part of a private key
/// block: an armour or PuTTY line, or a line whose content is a run of at least 16 base64
/// characters with a digit, `+` or `/` among them. False means no line of key material is in
/// it; true means the reader must judge the whole file with [`content`].
pub fn fragment_may_hold_key(fragment: &[u8]) -> bool {
    if memchr::memmem::find(fragment, b"PRIVATE KEY").is_some()
        || memchr::memmem::find(fragment, b"Private-Lines").is_some()
    {
        return true;
    }
    let mut start = 0;
    let lines = memchr::memchr_iter(b'\n', fragment)
        .chain(std::iter::once(fragment.len()))
        .map(|end| {
            let line = &fragment[start..end];
            start = end + 1;
            line
        });
    // The shortest line that can be one of key material: a prefix, quotes, a comma, `\n`.
    lines.filter(|line| line.len() >= KEY_RUN).any(|line| {
        // A diff line's first byte is its kind (`+`, `-`, ` `); quotes, indentation and a
        // trailing comma or `\n` escape surround key lines in YAML, JSON and code.
        let body = line
            .strip_prefix(b"+")
            .or_else(|| line.strip_prefix(b"-"))
            .unwrap_or(line);
        let body = body.trim_ascii();
        let body = body.strip_suffix(b",").unwrap_or(body);
        let body = body.strip_suffix(b"\\n").unwrap_or(body);
        let body = body.trim_ascii_start();
        let body = body
            .strip_prefix(b"\"")
            .or_else(|| body.strip_prefix(b"'"))
            .unwrap_or(body);
        let body = body
            .strip_suffix(b"\"")
            .or_else(|| body.strip_suffix(b"'"))
            .unwrap_or(body);
        body.len() >= KEY_RUN
            && body
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            && body
                .iter()
                .any(|b| b.is_ascii_digit() || matches!(b, b'+' | b'/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line-per-`String` form [`redacted_patch`] had: the reference its answers (text and
    /// count) are held to.
    fn redacted_patch_reference(patch: &str) -> Option<(String, usize)> {
        let mut lines: Vec<String> = patch.split('\n').map(str::to_string).collect();
        let mut changed = 0usize;
        let mut hunk: Vec<usize> = Vec::new();
        let mut flush = |hunk: &mut Vec<usize>, lines: &mut Vec<String>| {
            for side in [b'-', b'+'] {
                let at: Vec<usize> = hunk
                    .iter()
                    .copied()
                    .filter(|&i| {
                        matches!(lines[i].as_bytes().first(), Some(b' '))
                            || lines[i].as_bytes().first() == Some(&side)
                    })
                    .collect();
                if at.is_empty() {
                    continue;
                }
                let text: String = at
                    .iter()
                    .map(|&i| &lines[i][1..])
                    .collect::<Vec<_>>()
                    .join("\n");
                let (red, n) = crate::redact::redact_lines(&text);
                if n == 0 {
                    continue;
                }
                changed += n;
                let red: Vec<&str> = red.split('\n').collect();
                if red.len() == at.len() {
                    for (&i, new) in at.iter().zip(red) {
                        if &lines[i][1..] != new {
                            lines[i] = format!("{}{new}", &lines[i][..1]);
                        }
                    }
                } else {
                    for &i in &at {
                        lines[i] = format!("{}{}", &lines[i][..1], crate::redact::MARKER);
                    }
                }
            }
            hunk.clear();
        };
        let mut in_hunk = false;
        for i in 0..lines.len() {
            let first = lines[i].as_bytes().first().copied();
            if lines[i].starts_with("@@") {
                flush(&mut hunk, &mut lines);
                in_hunk = true;
            } else if lines[i].starts_with("diff --git ") {
                flush(&mut hunk, &mut lines);
                in_hunk = false;
            } else if in_hunk && matches!(first, Some(b' ' | b'+' | b'-')) {
                hunk.push(i);
            }
        }
        flush(&mut hunk, &mut lines);
        (changed > 0).then(|| (lines.join("\n"), changed))
    }

    /// Hunk bodies: plain, a secret on a context line, on removed and added lines, and a value
    /// below its key.
    fn hunk_bodies(token: &str) -> Vec<String> {
        vec![
            " plain\n-old\n+new".to_string(),
            " password: hunter2hunter2\n-a\n+b".to_string(),
            format!("-token = {token}\n+token = x"),
            " api_key:\n-  s3cr3tvalu3xyz9\n+  0therS3cretValu3".to_string(),
        ]
    }

    /// Every hunk shape with a secret on a context line, an added or a removed line, a value
    /// below its key, a block scalar and a key block answers as the reference does.
    #[test]
    fn redacted_patch_answers_as_its_reference() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let mut bodies = hunk_bodies(&token);
        bodies.extend([
            " key: |\n   line one s3cr3t99999\n+  added s3cr3t88888".to_string(),
            "+-----BEGIN RSA PRIVATE KEY-----\n+MIIEowIBAAKCAQEA1234567890abcdef\n+-----END RSA PRIVATE KEY-----".to_string(),
            format!(" secret={token}\n secret={token}\n-x\n+y"),
            String::new(),
        ]);
        for a in &bodies {
            for b in &bodies {
                let patch = format!(
                    "diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n{a}\n@@ -9,2 +9,2 @@\n{b}\ndiff --git a/g b/g\n@@ -1 +1 @@\n{b}\n"
                );
                assert_eq!(
                    redacted_patch(&patch),
                    redacted_patch_reference(&patch),
                    "{patch}"
                );
            }
        }
    }

    /// Sections gated as a patch grows are taken back only where the patch finally gated holds
    /// the same section: gating a patch after its sections were gated in pieces answers as
    /// gating it whole, when it is that patch, when a section was left out, when its last is
    /// cut, and when a section changed (a YAML file's, redacted by its whole file in between).
    #[test]
    fn sections_gated_as_the_patch_grows_answer_as_the_whole() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let bodies = hunk_bodies(&token);
        let section = |name: &str, body: &str| {
            format!("diff --git a/{name} b/{name}\nindex 1..2 100644\n--- a/{name}\n+++ b/{name}\n@@ -1,3 +1,3 @@\n{body}\n")
        };
        for a in &bodies {
            for b in &bodies {
                let sections = [
                    section("f", a),
                    section("g", b),
                    section("h", a),
                    section("f", b),
                ];
                let patch = sections.concat();
                for step in [1, 7, 40, patch.len()] {
                    let mut gated = GatedSections::default();
                    let mut to = 0;
                    let mut at = step.min(patch.len());
                    loop {
                        to = gated.add_whole(&patch.as_bytes()[..at], to, &|h| h.ends_with(b"b/h"));
                        if at == patch.len() {
                            break;
                        }
                        at = (at + step).min(patch.len());
                    }
                    let changed = [
                        section("f", a),
                        section("g", &format!("{b}\n+more")),
                        section("h", a),
                    ]
                    .concat();
                    let finals = [
                        patch.clone(),
                        [
                            sections[0].as_str(),
                            sections[2].as_str(),
                            sections[3].as_str(),
                        ]
                        .concat(),
                        patch[..patch.len() - 9].to_string(),
                        changed,
                    ];
                    for last in &finals {
                        assert_eq!(gated.redacted(last), redacted_patch(last), "{last}");
                    }
                }
            }
        }
    }

    /// A refusal is the project's own sentence, and redaction, which every `repository`
    /// answer and error passes, leaves it whole: no rule's name and reason reads as a
    /// secret's assignment (`secret_file: secret-bearing …` once lost its reason to the
    /// marker).
    #[test]
    fn every_refusal_passes_redaction_whole() {
        let mut messages = Vec::new();
        for rule in Rule::ALL {
            messages.push(crate::confine::refusal(rule, ".env", why(rule), "/path").message);
            messages.push(Denied::Refused(rule, why(rule).into()).to_string());
        }
        for path in [
            ".env",
            "config/.env",
            ".ssh/id_ed25519",
            ".git/config",
            "secrets.json",
        ] {
            let e = crate::confine::check_lexical(path, "/path").expect_err(path);
            messages.push(e.message);
        }
        for message in &messages {
            let (shown, n) = crate::redact::redact(message);
            assert_eq!((n, shown.as_ref()), (0, message.as_str()), "{message}");
        }
        assert!(messages
            .iter()
            .any(|m| m.contains("`.env` is refused: secret-bearing files are never served")));
    }

    #[test]
    fn key_lines_are_flagged_and_prose_and_code_are_not() {
        assert!(fragment_may_hold_key(
            b"@@ -3,3 +3,3 @@\n MIIEpAIBAAKCAQEA3x9Jv1Kq0ZlV2m8b\n-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5\n"
        ));
        assert!(fragment_may_hold_key(
            b"  \"aGVsbG8gd29ybGQgMTIzNDU2Nzg5MA==\",\n"
        ));
        assert!(!fragment_may_hold_key(
            b"@@ -1 +1 @@\n-fn main() { println!(\"hello\"); }\n+let someLongIdentifierName = 1;\n"
        ));
        assert!(!fragment_may_hold_key(
            b"+ThisIsAVeryLongWordWithoutDigits\n"
        ));
    }

    #[test]
    fn names_break_rules_in_any_component() {
        assert_eq!(name("config/.env"), Some(Rule::SecretFile));
        assert_eq!(name("a/.ssh/id"), Some(Rule::SecretFile));
        assert_eq!(name("a/.git/config"), Some(Rule::GitDir));
        assert_eq!(name("src/main.rs"), None);
    }
}
