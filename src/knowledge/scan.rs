//! Finding and reading object files: glob expansion confined to the repository, file stamps
//! for freshness, and the parse of one file into an object or findings.
//!
//! Nothing here returns an error: whatever is wrong with a file becomes a [`Finding`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::kinds::{Format, Kind, Kinds};
use super::{escape_pointer, Finding, Object, MAX_FILE_BYTES, URI_PREFIX};

/// What identifies one version of a file: an edit, a replacement or a truncation changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified_ns: i128,
    inode: u64,
}

impl Stamp {
    /// The stamp of the file at `path` (symlinks followed); `None` when it cannot be read.
    pub fn of(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path)
            .ok()
            .map(|m| Stamp::from_metadata(&m))
    }

    /// The stamp of already fetched metadata.
    pub fn from_metadata(m: &std::fs::Metadata) -> Stamp {
        let modified_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(-1);
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(m);
        #[cfg(not(unix))]
        let inode = 0;
        Stamp {
            len: m.len(),
            modified_ns,
            inode,
        }
    }
}

/// A file a glob matched.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Repository-relative path with `/` separators.
    pub rel: String,
    /// The path on disk.
    pub path: PathBuf,
    /// Whether the file or a folder on the way to it is a symbolic link.
    pub via_symlink: bool,
    /// The file's stamp (symlinks followed); `None` when it cannot be read.
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
pub fn expand(root: &Path, glob: &str, out: &mut Vec<Candidate>) {
    expand_stamping(root, glob, out, &mut Vec::new(), true);
}

/// [`expand`], also collecting every folder whose listing the answer depends on. With
/// `stamp_plain` false, a plain file found by listing a folder is left unstamped
/// (`stamp: None`) for its reader to stamp through the handle it opens ([`read_object`]),
/// which saves one `statx` per file when every file is read anyway (a cold index). Symbolic
/// links and literal segments are stamped either way.
pub fn expand_stamping(
    root: &Path,
    glob: &str,
    out: &mut Vec<Candidate>,
    dirs: &mut Vec<PathBuf>,
    stamp_plain: bool,
) {
    let segs: Vec<&str> = glob.split('/').collect();
    // (path, relative path, crossed a symlink)
    let mut frontier: Vec<(PathBuf, String, bool)> =
        vec![(root.to_path_buf(), String::new(), false)];
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let mut next = Vec::new();
        for (dir, rel, via) in frontier {
            dirs.push(dir.clone());
            let join = |name: &str| {
                if rel.is_empty() {
                    name.to_string()
                } else {
                    format!("{rel}/{name}")
                }
            };
            if !is_wild(seg) {
                let path = dir.join(seg);
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                let link = meta.file_type().is_symlink();
                if last {
                    let is_dir = std::fs::metadata(&path)
                        .map(|m| m.is_dir())
                        .unwrap_or(false);
                    if !is_dir {
                        out.push(Candidate {
                            rel: join(seg),
                            stamp: Stamp::of(&path),
                            path,
                            via_symlink: via || link,
                        });
                    }
                } else if std::fs::metadata(&path)
                    .map(|m| m.is_dir())
                    .unwrap_or(false)
                {
                    next.push((path, join(seg), via || link));
                }
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                // A name that is not UTF-8 is matched by its lossy spelling, so that it becomes
                // a finding rather than vanishing.
                let os_name = entry.file_name();
                let name = os_name.to_string_lossy();
                let name = name.as_ref();
                if name == ".git" || !segment_matches(seg, name) {
                    continue;
                }
                let Ok(ft) = entry.file_type() else { continue };
                let link = ft.is_symlink();
                let is_dir = if link {
                    std::fs::metadata(entry.path())
                        .map(|m| m.is_dir())
                        .unwrap_or(false)
                } else {
                    ft.is_dir()
                };
                if last {
                    if !is_dir {
                        // A plain file is stamped through the open folder (no path walk).
                        let stamp = if link {
                            Stamp::of(&entry.path())
                        } else if stamp_plain {
                            entry.metadata().ok().map(|m| Stamp::from_metadata(&m))
                        } else {
                            None
                        };
                        out.push(Candidate {
                            rel: join(name),
                            path: entry.path(),
                            via_symlink: via || link,
                            stamp,
                        });
                    }
                } else if is_dir {
                    next.push((entry.path(), join(name), via || link));
                }
            }
        }
        frontier = next;
        if frontier.is_empty() {
            break;
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
/// listing's stamp, or its own when the listing left it unstamped ([`expand_stamping`]).
pub fn read_object(
    root_canon: &Path,
    cand: &Candidate,
    kind: Option<&Arc<Kind>>,
    kinds: &Kinds,
) -> (FileResult, Option<Stamp>) {
    let file = cand.rel.as_str();
    let early = |message: &str| {
        let stamp = cand.stamp.or_else(|| Stamp::of(&cand.path));
        (FileResult::bad(file, "", message), stamp)
    };
    if cand.path.to_str().is_none() {
        return early("the path is not UTF-8; rename the file (ids and URIs are text)");
    }
    if cand.via_symlink {
        match cand.path.canonicalize() {
            Err(_) => return early("is a dangling symbolic link"),
            Ok(target) if !target.starts_with(root_canon) => {
                return early(
                    "is a symbolic link that resolves outside the repository; it is not read",
                )
            }
            Ok(_) => {}
        }
    }
    // A listed length over the cap: the file is never opened.
    if let Some(len) = cand
        .stamp
        .map(|s| s.len)
        .filter(|&len| len > MAX_FILE_BYTES)
    {
        return early(&over_cap(len));
    }
    let (bytes, handle_stamp) = read_settled(&cand.path);
    let stamp = handle_stamp.or(cand.stamp);
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(message) => return (FileResult::bad(file, "", message), stamp),
    };
    let file_name = cand.rel.rsplit('/').next().unwrap_or(file);
    (parse_bytes(file, file_name, bytes, kind, kinds), stamp)
}

fn over_cap(len: u64) -> String {
    format!(
        "is {len} bytes, over the {MAX_FILE_BYTES} byte (1 MiB) cap for knowledge objects; it is not read"
    )
}

/// The bytes of the file at `path`, read through one handle whose own length (not the
/// listing's, which a writer's rename may have outdated) says where the end is, and the stamp
/// of that handle (`None` when the file could not be opened). A file that another process is
/// still appending to in place is read again, a few times, until one read sees the length the
/// handle reported.
fn read_settled(path: &Path) -> (Result<Vec<u8>, String>, Option<Stamp>) {
    use std::io::Read;
    const ATTEMPTS: usize = 4;
    let mut stamp = None;
    for _ in 0..ATTEMPTS {
        let handle = match std::fs::File::open(path) {
            Ok(h) => h,
            Err(e) => return (Err(format!("cannot be read: {e}")), stamp),
        };
        let meta = match handle.metadata() {
            Ok(m) => m,
            Err(e) => return (Err(format!("cannot be read: {e}")), stamp),
        };
        stamp = Some(Stamp::from_metadata(&meta));
        let len = meta.len();
        if len > MAX_FILE_BYTES {
            return (Err(over_cap(len)), stamp);
        }
        // One byte more than the length, so that growth shows without a second read; the
        // buffer is not zeroed first (`read_to_end` fills spare capacity).
        let mut bytes = Vec::with_capacity(len as usize + 1);
        if let Err(e) = handle.take(len + 1).read_to_end(&mut bytes) {
            return (Err(format!("cannot be read: {e}")), stamp);
        }
        if bytes.len() as u64 <= len {
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
