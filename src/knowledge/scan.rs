//! Finding and reading object files: glob expansion confined to the repository, file stamps
//! for freshness, and the parse of one file into an object or findings.
//!
//! Every folder is listed and every file read through [`crate::rootfs::Root`]: a folder is
//! opened relative to its parent's handle and listed through its own, a file is opened under
//! the root's handle and read through the handle `fstat` checked. A symbolic link is resolved
//! inside the repository or refused; a link escape, a secret-bearing name (whatever name or
//! link leads there), a FIFO, socket or device, a file with several names (hard link), a file
//! holding a private key block or over the cap is a finding naming the file, never content and
//! never a wait. A folder that a link leads out of the repository, and a secret-bearing folder
//! (`.ssh`, `.aws`, `.gnupg`, whose files are secret by the folder's name), is not listed.
//!
//! Nothing here returns an error: whatever is wrong with a file becomes a [`Finding`].

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::kinds::{Format, Kind, Kinds};
use super::{escape_pointer, Finding, Object, MAX_FILE_BYTES, URI_PREFIX};
use crate::confine::{is_git_name, name_rule, Rule};
use crate::rootfs::{Denied, Dir, Follow, Meta, Root};

/// What identifies one version of a file: an edit, a replacement or a truncation changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified_ns: i128,
    inode: u64,
}

impl Stamp {
    /// The stamp of a file that is there but refused (a link out of the repository, a FIFO,
    /// ...): it differs from any file's, so a repaired file is seen.
    pub const REFUSED: Stamp = Stamp {
        len: u64::MAX,
        modified_ns: i128::MIN,
        inode: 0,
    };

    /// The stamp of what `fstat` (or a listing's `fstatat`) said.
    pub fn of_meta(m: &Meta) -> Stamp {
        Stamp {
            len: m.len,
            modified_ns: m.mtime_ns,
            inode: m.ino,
        }
    }

    /// The stamp of the regular file at `rel`, opened under the root (`None`: it cannot be).
    pub fn of_file(root: &Root, rel: &str) -> Option<Stamp> {
        root.open_file(rel, Follow::Inside)
            .ok()
            .map(|f| Stamp::of_meta(f.meta()))
    }
}

/// A file a glob matched.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Repository-relative path with `/` separators (a name that is not UTF-8 is spelled
    /// lossily, and `utf8` is false).
    pub rel: String,
    /// Whether every name of the path is UTF-8.
    pub utf8: bool,
    /// Whether the file or a folder on the way to it is a symbolic link.
    pub via_symlink: bool,
    /// The file's stamp; `None` when the listing left it for its reader.
    pub stamp: Option<Stamp>,
}

/// Shell-style match of one path segment: `*` is any run, `?` one character. A leading `.`
/// is matched only by a pattern that starts with `.`.
pub fn segment_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    if pattern.is_ascii() && name.is_ascii() {
        wildmatch(pattern.as_bytes(), name.as_bytes())
    } else {
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = name.chars().collect();
        wildmatch(&p, &s)
    }
}

/// `*` and `?` matching with one backtrack point.
fn wildmatch<T: PartialEq + Copy + From<u8>>(p: &[T], s: &[T]) -> bool {
    let (star, any) = (T::from(b'*'), T::from(b'?'));
    let (mut pi, mut si) = (0, 0);
    let (mut back, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == any || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == star {
            back = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(b) = back {
            pi = b + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == star {
        pi += 1;
    }
    pi == p.len()
}

fn is_wild(seg: &str) -> bool {
    seg.contains('*') || seg.contains('?')
}

/// Every file under `root` that `glob` matches, appended to `out`, stamped.
pub fn expand(root: &Root, root_path: &Path, glob: &str, out: &mut Vec<Candidate>) {
    expand_stamping(root, root_path, glob, out, &mut Vec::new(), true);
}

/// [`expand`], also collecting every folder whose listing the answer depends on (as paths
/// under `root_path`, for the watcher). With `stamp_plain` false, a plain file found by
/// listing a folder is left unstamped (`stamp: None`) for its reader to stamp through the
/// handle it opens ([`read_object`]), which saves one `statx` per file when every file is read
/// anyway (a cold index). Links, literal segments, special files and names the rules refuse
/// are stamped either way, so a file that is never read still has a stamp.
///
/// Folders are walked depth first, each opened relative to its parent's handle and closed
/// once listed, so the open handles are never more than the glob's depth.
pub fn expand_stamping(
    root: &Root,
    root_path: &Path,
    glob: &str,
    out: &mut Vec<Candidate>,
    dirs: &mut Vec<PathBuf>,
    stamp_plain: bool,
) {
    let segs: Vec<&str> = glob.split('/').collect();
    let Ok(top) = root.open_dir("", Follow::Never) else {
        return;
    };
    let mut walk = Expand {
        root,
        root_path,
        out,
        dirs,
        stamp_plain,
    };
    walk.folder(&top, "", true, false, &segs);
}

/// One glob's depth-first expansion.
struct Expand<'a> {
    root: &'a Root,
    root_path: &'a Path,
    out: &'a mut Vec<Candidate>,
    dirs: &'a mut Vec<PathBuf>,
    stamp_plain: bool,
}

/// What a symbolic link a glob matched leads to.
enum Linked {
    Folder,
    File(Option<Stamp>),
}

impl Expand<'_> {
    /// Matches `segs` in the open folder `dir`, whose path is `rel`.
    fn folder(&mut self, dir: &Dir, rel: &str, utf8: bool, via: bool, segs: &[&str]) {
        self.dirs.push(self.root_path.join(rel));
        let Some((seg, rest)) = segs.split_first() else {
            return;
        };
        let last = rest.is_empty();
        let join = |name: &str| {
            if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            }
        };
        if !is_wild(seg) {
            let name = OsStr::new(seg);
            if last {
                let Some(meta) = dir.stat(name) else { return };
                self.entry(dir, join(seg), name, meta.kind, utf8, via, true);
            } else if let Ok(sub) = self.root.open_dir_in(dir, rel, name, Follow::Inside) {
                let link = dir.stat(name).is_some_and(|m| m.kind == FileType::Symlink);
                self.folder(&sub, &join(seg), utf8, via || link, rest);
            }
            return;
        }
        let Ok(entries) = dir.entries() else { return };
        for entry in entries {
            // A name that is not UTF-8 is matched by its lossy spelling, so that it becomes a
            // finding rather than vanishing.
            let lossy = entry.name.to_string_lossy();
            let name_utf8 = utf8 && entry.name.to_str().is_some();
            if is_git_name(&entry.name) || !segment_matches(seg, &lossy) {
                continue;
            }
            let link = entry.kind == FileType::Symlink;
            if last {
                self.entry(
                    dir,
                    join(&lossy),
                    &entry.name,
                    entry.kind,
                    name_utf8,
                    via,
                    false,
                );
            } else if entry.kind == FileType::Directory || link {
                if let Ok(sub) = self.root.open_dir_in(dir, rel, &entry.name, Follow::Inside) {
                    self.folder(&sub, &join(&lossy), name_utf8, via || link, rest);
                }
            }
        }
    }

    /// A matched last segment: a candidate unless it is a folder (or a link to one).
    #[allow(clippy::too_many_arguments)]
    fn entry(
        &mut self,
        dir: &Dir,
        rel: String,
        name: &OsStr,
        kind: FileType,
        utf8: bool,
        via: bool,
        literal: bool,
    ) {
        let stamp = match kind {
            FileType::Directory => return,
            FileType::Symlink => match self.linked(dir, &rel, name) {
                Linked::Folder => return,
                Linked::File(stamp) => stamp,
            },
            FileType::RegularFile
                if !literal && !self.stamp_plain && utf8 && name_rule(name).is_none() =>
            {
                None
            }
            _ => dir.stat(name).map(|m| Stamp::of_meta(&m)),
        };
        self.out.push(Candidate {
            rel,
            utf8,
            via_symlink: via || kind == FileType::Symlink,
            stamp,
        });
    }

    /// Resolves a matched link under the root: its target's stamp, or the link's own when the
    /// target is refused (so that replacing the link is seen).
    fn linked(&self, dir: &Dir, rel: &str, name: &OsStr) -> Linked {
        match self.root.open_file(rel, Follow::Inside) {
            Ok(f) => Linked::File(Some(Stamp::of_meta(f.meta()))),
            Err(Denied::IsDir) => Linked::Folder,
            Err(_) => Linked::File(dir.stat(name).map(|m| Stamp::of_meta(&m))),
        }
    }
}

/// The result of reading one file.
#[derive(Debug, Default)]
pub struct FileResult {
    /// The object, when the file is valid.
    pub object: Option<Arc<Object>>,
    /// Everything wrong with the file.
    pub findings: Vec<Finding>,
}

impl FileResult {
    fn bad(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> FileResult {
        FileResult {
            object: None,
            findings: vec![Finding {
                file: file.to_string(),
                pointer: pointer.into(),
                message: message.into(),
            }],
        }
    }
}

pub use crate::text::hex;

/// Splits Markdown into (front matter text, its first line number, body offset), or says why not.
fn split_front_matter(text: &str) -> Result<(&str, usize, usize), String> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err("has no YAML front matter: the file must start with a `---` line".into());
    }
    let fm_start = start + first.len();
    let mut pos = fm_start;
    for line in lines {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Ok((&text[fm_start..pos], 2, pos + line.len()));
        }
        pos += line.len();
    }
    Err("front matter is not closed: no `---` line after the opening one".into())
}

/// A YAML parse error as a message whose line counts from the top of the file.
fn yaml_message(e: &serde_yaml::Error, first_line: usize) -> String {
    let text = e.to_string();
    let base = text.split(" at line ").next().unwrap_or(&text).to_string();
    match e.location() {
        Some(loc) => format!(
            "malformed YAML front matter: {base} (line {}, column {})",
            loc.line() + first_line - 1,
            loc.column()
        ),
        None => format!("malformed YAML front matter: {base}"),
    }
}

/// The first Markdown heading of a body, for objects without a title.
fn first_heading(body: &str) -> Option<String> {
    body.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("# ").map(|h| h.trim().to_string()))
        .filter(|h| !h.is_empty())
}

/// The first paragraph of a body, shortened, for objects without a description.
fn first_paragraph(body: &str) -> String {
    let mut para = String::new();
    for line in body.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with("```") {
            if para.is_empty() {
                continue;
            }
            break;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(line);
        if para.len() > 240 {
            break;
        }
    }
    shorten(&para, 200)
}

/// At most `max` characters of `s`, with an ellipsis when cut. The cut never halves a word
/// (a run of non-whitespace): the head of a secret cut in two would match no redaction rule,
/// so a cut word is dropped whole.
pub fn shorten(s: &str, max: usize) -> String {
    // Never more characters than bytes: a short text needs no count.
    if s.len() <= max || s.chars().count() <= max {
        return s.to_string();
    }
    let mut cut = s
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(s.len(), |(i, _)| i);
    if !s[cut..].starts_with(char::is_whitespace) {
        cut = s[..cut]
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + s[i..].chars().next().map_or(1, char::len_utf8));
    }
    let mut out = String::with_capacity(cut + '…'.len_utf8());
    out.push_str(s[..cut].trim_end());
    out.push('…');
    out
}

/// Whether `id` matches [`super::ID_GRAMMAR`] (`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`), checked
/// by hand: it is asked once per object (the test `the_id_grammar_is_the_regex` compares it with
/// the expression).
fn is_valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// Reads the file of `cand` as an object of `kind` (`None`: the file is in the generic
/// folder and names its kind in its front matter), and answers the stamp of the version it
/// read: the stamp of the handle it read through, so that a file replaced between the listing
/// and the read is recorded as the version actually read. A file that is not read keeps the
/// listing's stamp (the listing stamps every file it can tell will not be read).
pub fn read_object(
    root: &Root,
    cand: &Candidate,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> (FileResult, Option<Stamp>) {
    let file = cand.rel.as_str();
    let early = |message: String| (FileResult::bad(file, "", message), cand.stamp);
    if !cand.utf8 {
        return early("the path is not UTF-8; rename the file (ids and URIs are text)".into());
    }
    // A listed length over the cap: the file is never opened.
    if let Some(len) = cand
        .stamp
        .filter(|_| !cand.via_symlink)
        .map(|s| s.len)
        .filter(|&len| len > MAX_FILE_BYTES)
    {
        return early(over_cap(len));
    }
    let (bytes, handle_stamp) = read_settled(root, &cand.rel);
    let stamp = handle_stamp.or(cand.stamp);
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(message) => return (FileResult::bad(file, "", message), stamp),
    };
    if crate::redact::holds_private_key(&bytes) {
        return (
            FileResult::bad(
                file,
                "",
                format!(
                    "holds a private key block (rule {}); it is not read",
                    Rule::SecretContent.as_str()
                ),
            ),
            stamp,
        );
    }
    let file_name = cand.rel.rsplit('/').next().unwrap_or(file);
    (parse_bytes(file, file_name, bytes, kind, kinds), stamp)
}

fn over_cap(len: u64) -> String {
    format!(
        "is {len} bytes, over the {MAX_FILE_BYTES} byte (1 MiB) cap for knowledge objects; it is not read"
    )
}

/// A finding's message for a file the confined file system would not open.
pub fn denied_message(denied: &Denied) -> String {
    match denied {
        Denied::Refused(Rule::SizeCap, _) => {
            "is over the 1 MiB cap for knowledge objects; it is not read".into()
        }
        Denied::Refused(rule, why) => format!("is not read: {why} (rule {})", rule.as_str()),
        Denied::IsDir => "is a folder, not a file".into(),
        other => other.to_string(),
    }
}

/// The bytes of the file at `rel`, opened under the root and read through that one handle,
/// whose own length (not the listing's, which a writer's rename may have outdated) says where
/// the end is, and the stamp of that handle (`None` when no regular file could be opened). A
/// file that another process is still appending to in place is read again, a few times, until
/// one read sees the length the handle reported.
pub fn read_settled(root: &Root, rel: &str) -> (Result<Vec<u8>, String>, Option<Stamp>) {
    const ATTEMPTS: usize = 4;
    let mut stamp = None;
    for _ in 0..ATTEMPTS {
        let mut handle = match root.open_file(rel, Follow::Inside) {
            Ok(h) => h,
            Err(e) => return (Err(denied_message(&e)), stamp),
        };
        let meta = *handle.meta();
        stamp = Some(Stamp::of_meta(&meta));
        if meta.len > MAX_FILE_BYTES {
            return (Err(over_cap(meta.len)), stamp);
        }
        // One byte more than the length, so that growth shows without a second read.
        let mut bytes = Vec::new();
        if let Err(e) = handle.read_at_most(meta.len + 1, &mut bytes) {
            return (Err(denied_message(&e)), stamp);
        }
        if bytes.len() as u64 <= meta.len {
            return (Ok(bytes), stamp);
        }
    }
    (
        Err(
            "kept growing while being read; it is read again on the next call once it settles"
                .into(),
        ),
        stamp,
    )
}

/// Front matter read by serde_yaml: a mapping as JSON, or the message of a finding.
fn yaml_mapping(text: &str, first_line: usize) -> Result<Map<String, Value>, String> {
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| yaml_message(&e, first_line))?;
    match serde_json::to_value(&yaml) {
        Ok(Value::Null) => Ok(Map::new()),
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err("front matter must be a mapping of field names to values".into()),
        Err(e) => Err(format!("front matter cannot be read as JSON: {e}")),
    }
}

/// The words YAML 1.2 (as serde_yaml reads it) resolves to null or a boolean.
fn is_yaml_word(s: &str) -> bool {
    matches!(
        s,
        "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
    )
}

/// Whether `c` may appear in a scalar this reader accepts: printable to YAML, neither a tab
/// nor anything libyaml treats as a line break or a byte-order mark.
fn is_plain_char(c: char) -> bool {
    match c {
        ' '..='~' => true,
        '\u{a0}'..='\u{d7ff}' => c != '\u{2028}' && c != '\u{2029}',
        '\u{e000}'..='\u{fffd}' => c != '\u{feff}',
        '\u{10000}'..='\u{10ffff}' => true,
        _ => false,
    }
}

/// A `YYYY-MM-DD` date: serde_yaml reads it as a string (YAML 1.2 has no timestamps).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// A plain scalar that serde_yaml reads as this very string, in block context (`flow`
/// false) or inside a flow sequence (`flow` true). Conservative: it starts with a letter
/// (so it is no number, indicator or special float) or is a date, and holds nothing that
/// could end it or start a comment.
fn simple_scalar(s: &str, flow: bool) -> bool {
    let Some(first) = s.bytes().next() else {
        return false;
    };
    if is_date(s) {
        return true;
    }
    if !first.is_ascii_alphabetic() || is_yaml_word(s) || s.ends_with([':', ' ']) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || !s.chars().all(is_plain_char) {
        return false;
    }
    !flow || !s.contains([',', '[', ']', '{', '}', ':', '#', '"', '\''])
}

/// The fast reader of front matter: a flat mapping whose lines are each `key: value`, where
/// a value is a plain or quoted string without escapes, a date, or a one-line flow sequence
/// of plain strings; blank lines and `#` comment lines are skipped. Anything else (nesting,
/// numbers, booleans, nulls, multi-line scalars, escapes, anchors, tags, duplicate keys…)
/// answers `None`, and serde_yaml reads the text instead. Whatever this reader accepts,
/// serde_yaml reads as the same mapping (the test `the_fast_reader_agrees_with_serde_yaml`
/// checks it against generated inputs, and the fuzz target `fuzz/fuzz_targets/knowledge_file.rs`
/// against whatever it finds; that is why it is public).
pub fn simple_mapping(text: &str) -> Option<Map<String, Value>> {
    if text.contains(['\r', '\t']) {
        return None;
    }
    let mut fields = Map::new();
    for line in text.split('\n') {
        if line.trim_start_matches(' ').is_empty() {
            continue;
        }
        // A comment is skipped, but libyaml refuses one that holds a character YAML does not
        // print (a NUL, say) as it refuses any other.
        if line.starts_with('#') {
            if !line.chars().all(is_plain_char) {
                return None;
            }
            continue;
        }
        let (key, rest) = line.split_once(':')?;
        let kb = key.as_bytes();
        if kb.is_empty()
            || kb.len() > 128
            || !kb[0].is_ascii_alphabetic() && kb[0] != b'_'
            || !kb
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
            || is_yaml_word(key)
        {
            return None;
        }
        let value = rest.strip_prefix(' ')?.trim_matches(' ');
        let parsed = if let Some(inner) = value.strip_prefix('"') {
            let inner = inner.strip_suffix('"')?;
            if inner.contains(['"', '\\']) || !inner.chars().all(is_plain_char) {
                return None;
            }
            Value::String(inner.to_string())
        } else if let Some(inner) = value.strip_prefix('\'') {
            let inner = inner.strip_suffix('\'')?;
            if inner.contains('\'') || !inner.chars().all(is_plain_char) {
                return None;
            }
            Value::String(inner.to_string())
        } else if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']')?;
            let mut items = Vec::new();
            if !inner.trim_matches(' ').is_empty() {
                for item in inner.split(',') {
                    let item = item.trim_matches(' ');
                    if !simple_scalar(item, true) {
                        return None;
                    }
                    items.push(Value::String(item.to_string()));
                }
            }
            Value::Array(items)
        } else if simple_scalar(value, false) {
            Value::String(value.to_string())
        } else {
            return None;
        };
        if fields.insert(key.to_string(), parsed).is_some() {
            return None;
        }
    }
    if fields.is_empty() {
        return None;
    }
    Some(fields)
}

/// Reads the bytes of one knowledge file as an object of `kind` (`None`: the file lives in the
/// generic folder and names its kind in its front matter). `file` is the repository-relative
/// path findings name; `file_name` its last segment, where a kind may read the id.
///
/// Pure: no I/O. Every input, however malformed, becomes an object or findings naming `file`.
pub fn parse_bytes(
    file: &str,
    file_name: &str,
    bytes: Vec<u8>,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> FileResult {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return FileResult::bad(file, "", over_cap(bytes.len() as u64));
    }
    let digest = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return FileResult::bad(
                file,
                "",
                format!(
                    "is not UTF-8 (invalid byte sequence at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        }
    };
    let format = kind.map(|k| k.format).unwrap_or(Format::Markdown);
    let (fm_text, first_line, body_start) = match format {
        Format::Markdown => match split_front_matter(&text) {
            Ok(parts) => parts,
            Err(message) => return FileResult::bad(file, "", message),
        },
        Format::Yaml => (text.as_str(), 1, text.len()),
    };
    // Most front matter is a flat mapping of simple strings: read that directly, and let
    // serde_yaml read everything else (and word every error).
    let mut fields = match simple_mapping(fm_text) {
        Some(fields) => fields,
        None => match yaml_mapping(fm_text, first_line) {
            Ok(fields) => fields,
            Err(message) => return FileResult::bad(file, "", message),
        },
    };
    // `kind` is read by seneschal, not by the kind's schema.
    let declared = fields.remove("kind");
    let kind: Arc<Kind> = match (&declared, kind) {
        (Some(Value::String(name)), Some(k)) if *name != k.name => {
            return FileResult::bad(
                file,
                "/kind",
                format!(
                    "says kind `{name}` but lives in the files of kind `{}`",
                    k.name
                ),
            )
        }
        (Some(v), _) if !v.is_string() => {
            return FileResult::bad(file, "/kind", "`kind` must be a string")
        }
        (_, Some(k)) => k.clone(),
        (Some(Value::String(name)), None) => match kinds.get(name) {
            Some(k) => k.clone(),
            None => {
                return FileResult::bad(
                    file,
                    "/kind",
                    format!(
                        "unknown kind `{name}`; knowledge.kinds lists the kinds of this repository"
                    ),
                )
            }
        },
        (_, None) => {
            return FileResult::bad(
                file,
                "/kind",
                "names no `kind`; objects under .seneschal/knowledge/ must say their kind",
            )
        }
    };
    if kind.format == Format::Yaml && format == Format::Markdown {
        return FileResult::bad(
            file,
            "/kind",
            format!("kind `{}` is read from YAML files, not Markdown", kind.name),
        );
    }
    let mut checked = Value::Object(fields);
    // Valid front matter is the common case: `is_valid` answers it without building errors.
    let mut findings: Vec<Finding> = Vec::new();
    if !kind.validator.is_valid(&checked) {
        findings = kind
            .validator
            .iter_errors(&checked)
            .map(|e| Finding {
                file: file.to_string(),
                pointer: e.instance_path().as_str().to_string(),
                message: format!("{e} (schema of kind `{}`)", kind.name),
            })
            .collect();
        return FileResult {
            object: None,
            findings,
        };
    }
    // The id: the front-matter field first, then the file name.
    let mut id: Option<String> = None;
    if let Some(field) = &kind.id.field {
        match checked.get(field) {
            Some(Value::String(s)) => id = Some(s.clone()),
            Some(_) => {
                return FileResult::bad(
                    file,
                    format!("/{}", escape_pointer(field)),
                    format!("the id field `{field}` must be a string"),
                )
            }
            None => {}
        }
    }
    let from_name = kind.id_pattern.as_ref().and_then(|re| {
        re.find(file_name)
            .and_then(|m| m.group(1))
            .map(|r| file_name[r].to_string())
    });
    match (&id, &from_name, &kind.id.field) {
        // Both say an id and they disagree: one of them is a mistake.
        (Some(a), Some(b), Some(field)) if a != b => {
            return FileResult::bad(
                file,
                format!("/{}", escape_pointer(field)),
                format!(
                    "the `{field}` field says `{a}` but the file name says `{b}`; make them agree"
                ),
            )
        }
        (None, _, _) => id = from_name,
        _ => {}
    }
    let Some(id) = id else {
        let how = match (&kind.id.field, &kind.id.file_pattern) {
            (Some(f), Some(p)) => format!("no `{f}` field, and the file name does not match {p}"),
            (Some(f), None) => format!("no `{f}` field"),
            (None, Some(p)) => format!("the file name does not match {p}"),
            (None, None) => "the kind reads no id".into(),
        };
        findings.push(Finding {
            file: file.to_string(),
            pointer: kind
                .id
                .field
                .as_ref()
                .map(|f| format!("/{}", escape_pointer(f)))
                .unwrap_or_default(),
            message: format!("no id: {how}"),
        });
        return FileResult {
            object: None,
            findings,
        };
    };
    if !is_valid_id(&id) {
        return FileResult::bad(
            file,
            kind.id
                .field
                .as_ref()
                .map(|f| format!("/{}", escape_pointer(f)))
                .unwrap_or_default(),
            format!(
                "id `{id}` must match {} (it becomes a URI segment)",
                super::ID_GRAMMAR
            ),
        );
    }
    let body = &text[body_start..];
    let str_field = |name: &str| {
        checked
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let title = str_field("title")
        .or_else(|| first_heading(body))
        .or_else(|| str_field("name"))
        .unwrap_or_else(|| id.clone());
    let description = str_field("description").unwrap_or_else(|| first_paragraph(body));
    let tags: Vec<String> = checked
        .get("tags")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let status = str_field("status");
    // The object keeps the whole front matter, `kind` included.
    if let (Value::Object(fields), Some(declared)) = (&mut checked, declared) {
        fields.insert("kind".to_string(), declared);
    }
    FileResult {
        object: Some(Arc::new(Object {
            uri: format!("{URI_PREFIX}{}/{id}", kind.name),
            kind: kind.name.clone(),
            id,
            file: file.to_string(),
            title,
            description: description.trim().to_string(),
            tags,
            status,
            front_matter: checked,
            mime_type: kind.format.mime_type().to_string(),
            digest,
            body_start,
            text,
        })),
        findings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_match_like_a_shell() {
        assert!(segment_matches("*.md", "0001-x.md"));
        assert!(!segment_matches("*.md", "0001-x.markdown"));
        assert!(segment_matches("SKILL.md", "SKILL.md"));
        assert!(segment_matches("a?c", "abc"));
        assert!(!segment_matches("*", ".hidden"));
        assert!(segment_matches(".*", ".hidden"));
        assert!(segment_matches("*-*.md", "a-b-c.md"));
    }

    /// The reference: what serde_yaml makes of a text (`None`: a finding).
    fn reference(text: &str) -> Option<Map<String, Value>> {
        yaml_mapping(text, 2).ok()
    }

    #[test]
    fn the_fast_reader_reads_common_front_matter() {
        let text = "title: Set up the workstation\ntags: [setup, tools]\n\n# a comment\nstatus: 'current'\ndate: 2026-11-30\nsummary: \"Why: because\"\nurl: https://example.com/a,b\n";
        let fast = simple_mapping(text).expect("the common shape is read without serde_yaml");
        assert_eq!(Some(&fast), reference(text).as_ref());
        assert_eq!(fast["tags"], serde_json::json!(["setup", "tools"]));
        assert_eq!(fast["date"], "2026-11-30");
        // Shapes it leaves to serde_yaml.
        for other in [
            "count: 3\n",
            "draft: true\n",
            "owner: null\n",
            "title: a: b\n",
            "title: a #note\n",
            "title: first\n  continued\n",
            "meta:\n  a: b\n",
            "title: x\ntitle: y\n",
            "title: \"a\\tb\"\n",
            "tags: [a, true]\n",
            "tags: [a, [b]]\n",
            "title: &a x\n",
            "title: x\r\n",
            "title: x\n# a NUL \u{0} in a comment\n",
            "",
            "- a\n",
        ] {
            assert!(simple_mapping(other).is_none(), "{other:?}");
        }
    }

    /// Generated front matter: whatever the fast reader accepts, serde_yaml reads the same.
    #[test]
    fn the_fast_reader_agrees_with_serde_yaml() {
        let keys = [
            "title", "tags", "kind", "a-b", "_x", "Title", "null", "True", "x y", "1a", "é",
        ];
        let seps = [": ", ":", ":  ", " : ", ":\t"];
        let values = [
            "plain words",
            "foo: bar",
            "foo:bar",
            "foo:",
            "foo #c",
            "foo#c",
            "a, b",
            "a [b] {c}",
            "[a, b]",
            "[a,b,]",
            "[]",
            "[ ]",
            "[a b, c.d/e]",
            "[a: b]",
            "[a:b]",
            "[a, 'b']",
            "[null, x]",
            "[x, ~]",
            "[-x]",
            "\"x: y\"",
            "\"a # b\"",
            "'it''s'",
            "'a: b'",
            "\"a\\\"b\"",
            "\"\"",
            "''",
            "null",
            "Null",
            "~",
            "true",
            "FALSE",
            "2026-11-30",
            "2026-1-30",
            "0x10",
            "1e3",
            "12",
            "012",
            "+1",
            "-1",
            "inf",
            ".inf",
            "nan",
            ".NaN",
            "yes",
            "no",
            "on",
            "-x",
            "x-",
            "a:b",
            "é accent",
            "日本語",
            "a\u{2028}b",
            "a\u{85}b",
            "a\u{feff}",
            "a\u{7f}",
            "{a: b}",
            "*alias",
            "&anchor x",
            "!tag x",
            "!!str 1",
            "|",
            ">",
            "@x",
            "`x",
            "%x",
            "x'y",
            "x\"y",
            "a  b",
            "trailing ",
            "? x",
            "x\\n",
            "Infinity",
            "e5",
            "a\u{0}b",
        ];
        let extras = [
            "",
            "\n",
            "  \n",
            "# comment\n",
            "  indented: x\n",
            "---\n",
            "...\n",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let (mut accepted, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..1 + next(4) {
                if next(6) == 0 {
                    text.push_str(extras[next(extras.len())]);
                }
                let key = if next(3) == 0 {
                    keys[next(keys.len())]
                } else {
                    keys[next(3)]
                };
                let sep = if next(4) == 0 {
                    seps[next(seps.len())]
                } else {
                    ": "
                };
                text.push_str(key);
                text.push_str(sep);
                text.push_str(values[next(values.len())]);
                text.push('\n');
            }
            total += 1;
            if let Some(fast) = simple_mapping(&text) {
                accepted += 1;
                assert_eq!(Some(fast), reference(&text), "{text:?}");
            }
        }
        // Both paths are exercised.
        assert!(
            accepted > total / 20 && accepted < total,
            "{accepted} of {total}"
        );
    }

    #[test]
    fn the_id_grammar_is_the_regex() {
        let re = regress::Regex::new(super::super::ID_GRAMMAR).unwrap();
        let long = "a".repeat(128);
        let too_long = "a".repeat(129);
        for id in [
            "a", "A9", "0001-x", "a.b_c-d", "-a", ".a", "_a", "", "a b", "a/b", "é", "aé", "a\n",
            &long, &too_long, "a$", "Z-",
        ] {
            assert_eq!(is_valid_id(id), re.find(id).is_some(), "{id:?}");
        }
    }

    #[test]
    fn shorten_counts_characters() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("ab cd", 4), "ab…");
        assert_eq!(shorten("ab cd", 3), "ab…");
        assert_eq!(shorten("ééé", 3), "ééé");
        assert_eq!(shorten("é ééé", 4), "é…");
        // A cut word goes whole: no head of a secret is left for no rule to recognise.
        assert_eq!(shorten("abcd", 3), "…");
        assert_eq!(shorten("see ghp_abcdefgh", 8), "see…");
    }

    #[test]
    fn front_matter_splits() {
        let (fm, line, body) = split_front_matter("---\ntitle: x\n---\nbody\n").unwrap();
        assert_eq!((fm, line), ("title: x\n", 2));
        assert_eq!(&"---\ntitle: x\n---\nbody\n"[body..], "body\n");
        assert!(split_front_matter("# no front matter\n").is_err());
        assert!(split_front_matter("---\ntitle: x\n").is_err());
    }
}
