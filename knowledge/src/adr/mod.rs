//! The ADR formats in use, read per file with nothing to configure (DESIGN §6c,
//! `docs/adr/0002-adr-formats-read-as-written.md`): Nygard / adr-tools (`# 1. Title`, a
//! `Date:` line, a `## Status` section whose links say what supersedes or amends what),
//! MADR 2–4 (optional YAML front matter with its own keys, or `* Status:` bullets; the title
//! from the `# ` heading), log4brains (`- Status:` bullets, date-named files whose slug is the
//! id) and seneschal's own front matter, which keeps its strict contract (`super::parse`).
//!
//! Reading is lenient and honest: unknown front-matter keys are kept; a status is matched
//! without case and mapped to the canonical set only where the mapping is certain (the text
//! as written is kept in `status_text`); a status or date that cannot be read is a finding,
//! and the record is served all the same.
//!
//! Writing back ([`render`]) puts a record in the format, folder and numbering the
//! repository's ADRs already use.
//!
//! Each format is one implementation of [`Format`] in a file of its own under this folder,
//! listed once in [`FORMATS`]: what tells its files apart, how it writes a record's heading
//! and metadata, how it names a new file. The reading and planning here are shared.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::kinds::Kind;
use super::result::{is_valid_id, shorten, FileResult};
use super::{Finding, Object, URI_PREFIX};

/// The canonical statuses (the `status` enum of `share/schemas/adr.schema.json`).
pub const STATUSES: [&str; 5] = [
    "proposed",
    "accepted",
    "superseded",
    "deprecated",
    "rejected",
];

/// Words that certainly mean a canonical status, and the status they mean.
const SYNONYMS: [(&str, &str); 12] = [
    ("implemented", "accepted"),
    ("proposed", "proposed"),
    ("proposal", "proposed"),
    ("accepted", "accepted"),
    ("approved", "accepted"),
    ("adopted", "accepted"),
    ("superseded", "superseded"),
    ("superceded", "superseded"),
    ("deprecated", "deprecated"),
    ("rejected", "rejected"),
    ("declined", "rejected"),
    ("replaced", "superseded"),
];

/// The front-matter key naming the format a record was read in.
pub const FORMAT_KEY: &str = "adr_format";
/// The front-matter key keeping a status as written when it differs from the canonical one.
pub const STATUS_TEXT_KEY: &str = "status_text";

mod cosmos;
mod log4brains;
mod madr;
mod madr2;
mod nygard;
mod seneschal;
mod table;

/// Every ADR format, each in a file of its own: the one place a new format is listed.
pub const FORMATS: [&dyn Format; 7] = [
    &seneschal::Seneschal,
    &nygard::Nygard,
    &madr::Madr,
    &madr2::Madr2,
    &log4brains::Log4brains,
    &table::Table,
    &cosmos::Cosmos,
];

/// One ADR format: how a file in it is recognised, and how a record is written in it.
///
/// The reading itself is shared (a file's title, status, date and relations are found the
/// same way whatever its format); a format says whether a file's shape is its own, and writes
/// a record's heading and metadata back as the format spells them.
pub trait Format: Send + Sync {
    /// The spelling in `adr_format`.
    fn name(&self) -> &'static str;

    /// Whether a file of `shape` is in this format, as a precedence: the format with the
    /// lowest claim reads the file. The claims in use, surest first: front matter (MADR, 10),
    /// `- ` bullets or bullets in a date-named file (log4brains, 20), other bullets (MADR 2,
    /// 30), a metadata table (40), a status section under a changelog or an `ADR` heading
    /// (Cosmos, 50), a `Date:` line or a status section (Nygard, 60), a date-named file
    /// (log4brains, 70), anything else (MADR, 80).
    fn claim(&self, shape: &Shape) -> Option<u8>;

    /// Writes the record `r` into `out`: its heading and metadata as this format spells
    /// them, then its body.
    fn write(&self, r: &Record, out: &mut String) -> Result<(), String>;

    /// Whether a canonical status is written with a capital (`Accepted`).
    fn capitalises_status(&self) -> bool {
        false
    }

    /// The label of a link to the record `id` titled `title`; `None` when this format
    /// cannot write one.
    fn link_label(&self, id: &str, title: &str) -> Option<String> {
        let _ = id;
        Some(title.to_string())
    }

    /// Whether a new record without a date gets today's.
    fn dates_new(&self) -> bool {
        false
    }

    /// Whether an updated record without a date gets today's.
    fn dates_updates(&self) -> bool {
        false
    }

    /// The id and file stem of a new record, when this format names its files itself
    /// (`asked` is the id asked for, `fields` the record's settled metadata); `None` numbers
    /// it as the repository's records are numbered.
    fn own_name(
        &self,
        asked: Option<&str>,
        fields: &Map<String, Value>,
        today: &str,
    ) -> Option<(String, String)> {
        let _ = (asked, fields, today);
        None
    }
}

/// The shape of one ADR file, as the formats tell theirs apart.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    /// The file's name (`0001-x.md`).
    pub file_name: &'a str,
    /// Whether the file starts with front matter.
    pub had_front_matter: bool,
    /// The marker of its metadata bullets, when its metadata came as bullets.
    pub bullet: Option<char>,
    /// Whether a plain `Date:` line was seen.
    pub date_line: bool,
    /// Whether its metadata came as a Markdown table under the title.
    pub table: bool,
    /// Whether it has its own `## Status` section near the top.
    pub status_section: bool,
    /// Whether one of its first sections is a changelog.
    pub changelog: bool,
    /// The `# ` heading's text.
    pub heading: Option<&'a str>,
}

/// What a format writes: a record's settled metadata and its body.
pub struct Record<'a> {
    /// The metadata (seneschal's names, the front matter's own keys).
    pub front: &'a Map<String, Value>,
    /// The title.
    pub title: &'a str,
    /// The status as the file should spell it.
    pub status: Option<String>,
    /// The date, as text.
    pub date: Option<String>,
    /// The Markdown after the metadata, without leading blank lines.
    pub body: &'a str,
    /// The record's number as adr-tools writes it in a heading (`1` for `0001`).
    pub number: Option<&'a str>,
    /// Names a record by id, for links: `(label, file name)`.
    pub title_of: &'a dyn Fn(&str) -> Option<(String, String)>,
    /// The layout of the repository's records.
    pub layout: &'a Layout,
}

impl Record<'_> {
    /// The ids the metadata `key` holds, one or a list.
    pub fn ids(&self, key: &str) -> Vec<String> {
        match self.front.get(key) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// One line for each record the metadata `key` names: `{label} [title](file)`, or
    /// `{label} {id}` for a record not found.
    pub fn links(&self, key: &str, label: &str) -> Vec<String> {
        self.ids(key)
            .iter()
            .map(|id| match (self.title_of)(id) {
                Some((l, f)) => format!("{label} [{l}]({f})"),
                None => format!("{label} {id}"),
            })
            .collect()
    }

    /// Whether the record's status is `superseded` (its status line then names what
    /// supersedes it).
    pub fn is_superseded(&self) -> bool {
        self.front.get("status").and_then(Value::as_str) == Some("superseded")
    }

    /// The metadata a format keeps as its own, without what the text already says.
    pub fn own(&self) -> Map<String, Value> {
        self.front
            .iter()
            .filter(|(k, _)| !DERIVED.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The heading's text in the layout of the house (`ADR 029: Title`), else the title.
    pub fn numbered_heading(&self) -> String {
        match (
            &self.layout.heading,
            self.number.and_then(|n| n.parse::<u64>().ok()),
        ) {
            (Some((before, width, after)), Some(n)) => {
                format!("{before}{n:0width$}{after}{}", self.title, width = *width)
            }
            _ => self.title.to_string(),
        }
    }

    /// The metadata as bullets with `marker` (`* Status: accepted`, `- Date: …`), as MADR 2
    /// and log4brains write them, followed by a blank line; empty when there are none.
    pub fn bullets(&self, marker: char) -> String {
        let own = self.own();
        let mut bullets: Vec<String> = Vec::new();
        if let Some(s) = &self.status {
            bullets.push(format!("{marker} Status: {s}"));
        }
        for (key, label) in [("deciders", "Deciders"), ("decision-makers", "Deciders")] {
            if let Some(v) = own.get(key) {
                bullets.push(format!("{marker} {label}: {}", value_text(v)));
            }
        }
        if let Some(d) = &self.date {
            bullets.push(format!("{marker} Date: {d}"));
        }
        if let Some(v) = own.get("tags") {
            bullets.push(format!("{marker} Tags: {}", value_text(v)));
        }
        if bullets.is_empty() {
            return String::new();
        }
        let mut out = bullets.join("\n");
        out.push_str("\n\n");
        out
    }
}

/// The format of one ADR file: a handle on its [`Format`], compared by name.
#[derive(Clone, Copy)]
pub struct Style(&'static dyn Format);

impl Style {
    /// seneschal's own format, written by the kind.
    pub const SENESCHAL: Style = Style(&seneschal::Seneschal);

    /// The spelling in `adr_format`.
    pub fn as_str(self) -> &'static str {
        self.0.name()
    }

    /// The style named `s`.
    pub fn parse(s: &str) -> Option<Style> {
        FORMATS.iter().find(|f| f.name() == s).map(|f| Style(*f))
    }

    /// The format of a file of `shape`: the one that claims it first.
    pub fn detect(shape: &Shape) -> Style {
        FORMATS
            .iter()
            .filter_map(|f| f.claim(shape).map(|rank| (rank, *f)))
            .min_by_key(|(rank, _)| *rank)
            .map_or(Style(&madr::Madr), |(_, f)| Style(f))
    }

    /// The implementation of this format.
    pub fn format(self) -> &'static dyn Format {
        self.0
    }
}

impl PartialEq for Style {
    fn eq(&self, other: &Style) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Style {}

impl std::fmt::Debug for Style {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use super::kinds::is_not_a_record;

/// Whether `stem` starts with a date `YYYYMMDD-` or `YYYY-MM-DD-` (log4brains' file names).
pub fn is_date_named(stem: &str) -> bool {
    let b = stem.as_bytes();
    let date = |y: &[u8], m: &[u8], d: &[u8]| {
        let num = |s: &[u8]| {
            s.iter()
                .all(u8::is_ascii_digit)
                .then(|| s.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0')))
        };
        matches!((num(y), num(m), num(d)), (Some(y), Some(m), Some(d))
            if (1970..=2199).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d))
    };
    (b.len() > 9 && b[8] == b'-' && date(&b[0..4], &b[4..6], &b[6..8]))
        || (b.len() > 11
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'-'
            && date(&b[0..4], &b[5..7], &b[8..10]))
}

/// The id of a record in the file `file_name`: the number its name starts with (`0001-x.md`,
/// `ADR-0001-x.md`), else, for a date-named file or any other, the name without `.md` (a
/// slug, so that two records of one day never collide).
pub fn id_of(file_name: &str) -> String {
    let stem = file_name
        .strip_suffix(".md")
        .or_else(|| file_name.strip_suffix(".markdown"))
        .unwrap_or(file_name);
    if is_date_named(stem) {
        return stem.to_string();
    }
    let lead = |s: &str| {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        let rest = &s[digits.len()..];
        (!digits.is_empty() && (rest.is_empty() || rest.starts_with(['-', '_', '.', ' '])))
            .then_some(digits)
    };
    if let Some(n) = lead(stem) {
        return n;
    }
    let lower = stem.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("adr") {
        let rest = rest.trim_start_matches(['-', '_', ' ']);
        if let Some(n) = lead(rest) {
            return n;
        }
    }
    stem.to_string()
}

/// A status as written, read: the canonical status when certain, and the records a
/// "superseded by ..." or "supersedes ..." in it names.
#[derive(Debug, Default, PartialEq)]
pub struct StatusRead {
    /// The canonical status, when the text certainly means one.
    pub canonical: Option<&'static str>,
    /// The text as written, cleaned of Markdown emphasis.
    pub text: String,
    /// Relations the text names: `(key, target id)`.
    pub relations: Vec<(&'static str, String)>,
}

/// Removes comments, surrounding space and an emphasis or quotes around the whole of a
/// value (`**Accepted**`, `_Accepted_`, `"accepted"`).
fn clean(s: &str) -> String {
    let s = strip_comments(s);
    let mut t = s.trim();
    loop {
        let inner = ["**", "__", "*", "_", "\"", "`"].iter().find_map(|m| {
            t.strip_prefix(m)
                .and_then(|r| r.strip_suffix(m))
                .filter(|r| !r.contains(m))
        });
        match inner {
            Some(r) => t = r.trim(),
            None => break,
        }
    }
    t.to_string()
}

/// `s` without HTML comments.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i..].find("-->") {
            Some(j) => rest = &rest[i + j + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The id a link target or a mention names: `[5. Help](0005-help.md)` → `0005`,
/// `ADR-0057` → `0057`, `[x](20201016-slug.md)` → `20201016-slug`.
fn target_id(text: &str) -> Option<String> {
    // A Markdown link: its target's file name.
    if let Some(open) = text.find("](") {
        let rest = &text[open + 2..];
        let target = rest.split([')', ' ', '#']).next().unwrap_or("");
        let name = target.rsplit('/').next().unwrap_or("");
        if !name.is_empty() {
            return Some(id_of(name));
        }
    }
    // A bare mention: `ADR-0057`, `adr 12`, `#12`, `0003-slug.md`.
    let words =
        text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '[' | ']' | '(' | ')'));
    for w in words {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if w.is_empty() {
            continue;
        }
        let lower = w.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("adr")
            .map(|r| r.trim_start_matches(['-', '_']))
            .unwrap_or(&lower);
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()) {
            return Some(rest.to_string());
        }
        if lower.ends_with(".md") {
            return Some(id_of(w));
        }
    }
    None
}

/// The relation a phrase opens, and the rest of the phrase.
fn relation_of(phrase: &str) -> Option<(&'static str, &str)> {
    let lower = phrase.to_ascii_lowercase();
    for (word, key) in [
        ("superseded by", "superseded_by"),
        ("superceded by", "superseded_by"),
        ("replaced by", "superseded_by"),
        ("supersedes", "supersedes"),
        ("supercedes", "supersedes"),
        ("replaces", "supersedes"),
        ("amended by", "amended_by"),
        ("amends", "amends"),
    ] {
        if let Some(at) = lower.find(word) {
            // Only at the start of the phrase or after a separator.
            let before = lower[..at].trim_end();
            if before.is_empty() || before.ends_with([';', ',', '.', '-', '(']) {
                return Some((key, &phrase[at + word.len()..]));
            }
        }
    }
    None
}

/// Reads a status as written (`Accepted`, `**Approved**`, `superseded by [ADR-0043](…)`,
/// `accepted; supersedes ADR-0045`, `Accepted on 17/10/2023`).
pub fn read_status(raw: &str) -> StatusRead {
    let text = clean(raw);
    let mut out = StatusRead {
        text: text.clone(),
        ..StatusRead::default()
    };
    for phrase in text.split(';') {
        if let Some((key, rest)) = relation_of(phrase) {
            if let Some(id) = target_id(rest) {
                out.relations.push((key, id));
            }
        }
    }
    let lower = text.to_ascii_lowercase();
    let first: String = lower
        .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    out.canonical = SYNONYMS.iter().find(|(w, _)| *w == first).map(|(_, s)| *s);
    if first == "partially" && lower.contains("implemented") {
        out.canonical = Some("accepted");
    }
    // `Implemented. Superseded by [ADR-013](…)`: a later sentence that opens with a
    // supersession says what the record is now.
    let later_superseded = lower
        .split(['.', ';'])
        .skip(1)
        .map(str::trim_start)
        .any(|s| s.starts_with("superseded by") || s.starts_with("replaced by"));
    if later_superseded && out.relations.iter().any(|(k, _)| *k == "superseded_by") {
        out.canonical = Some("superseded");
    }
    out
}

/// Whether `s` is a date `YYYY-MM-DD`.
pub fn is_iso_date(s: &str) -> bool {
    super::front_matter::is_date(s)
        && (1..=12).contains(&s[5..7].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u32>().unwrap_or(0))
}

/// A `# ` heading's title without its number: `1. Title`, `ADR-0001: Title`,
/// `0001 – Title` and `ADR 12 - Title` all give `Title`.
pub fn title_of_heading(h: &str) -> String {
    let h = h.trim();
    // `ADR: Title`: the word without a number.
    if let Some(rest) = h
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("adr:"))
        .map(|_| h[4..].trim())
        .filter(|r| !r.is_empty())
    {
        return rest.to_string();
    }
    let mut rest = h;
    let lower = h.to_ascii_lowercase();
    let mut prefixed = false;
    if lower.starts_with("adr") {
        let r = h[3..].trim_start_matches(['-', '_', ' ', '#']);
        if r.starts_with(|c: char| c.is_ascii_digit()) {
            rest = r;
            prefixed = true;
        }
    }
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return h.to_string();
    }
    let after = &rest[digits..];
    let trimmed = after.trim_start();
    let sep = trimmed
        .strip_prefix(['.', ':', ')', '-', '–', '—'])
        .map(str::trim_start);
    match sep {
        Some(t) if !t.is_empty() => {
            // `1. Title` but also `0001 - Title`, `ADR-1: Title`.
            let t = t
                .strip_prefix(['-', '–', '—', ':'])
                .map_or(t, str::trim_start);
            t.trim().to_string()
        }
        _ if prefixed && after.starts_with(' ') && !trimmed.is_empty() => trimmed.to_string(),
        _ => h.to_string(),
    }
}

/// The title a file name says: `0004-release-captain.md` → `Release captain`.
pub fn title_of_file(file_name: &str) -> String {
    let stem = file_name
        .strip_suffix(".md")
        .or_else(|| file_name.strip_suffix(".markdown"))
        .unwrap_or(file_name);
    let id = id_of(file_name);
    let rest = if id == stem {
        stem
    } else {
        let at = stem.find(id.as_str()).map_or(0, |i| i + id.len());
        stem[at..].trim_start_matches(['-', '_', '.', ' '])
    };
    let words = rest.replace(['-', '_'], " ");
    let mut c = words.trim().chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => stem.to_string(),
    }
}

/// What the body of a record says, line by line.
#[derive(Debug, Default)]
struct Body {
    /// The `# ` heading's text.
    heading: Option<String>,
    /// `Key: value` metadata lines, bullets and table rows before the first section, by
    /// lower-case key.
    meta: Vec<(String, String)>,
    /// Whether the metadata came as bullets, and with which marker.
    bullet: Option<char>,
    /// Whether a plain `Date:` line was seen.
    date_line: bool,
    /// Whether the metadata came as a Markdown table under the title.
    table: bool,
    /// The header cells of that table (`Metadata`, `Value`), as written.
    table_header: Vec<String>,
    /// The keys of that table's rows, as written (`Date`, `Author`, `Status`).
    table_keys: Vec<String>,
    /// The sections: `(title, lines)`.
    sections: Vec<(String, Vec<String>)>,
    /// Lines of prose before the first section (neither heading nor metadata).
    preamble: Vec<String>,
    /// Reference-style link definitions (`[label]: target`), by lower-case label.
    refs: Vec<(String, String)>,
}

/// The metadata keys read from lines, bullets and table rows.
const META_KEYS: [&str; 20] = [
    "status",
    "date",
    "deciders",
    "decision-makers",
    "decision makers",
    "consulted",
    "informed",
    "tags",
    "technical story",
    "last updated",
    "author",
    "authors",
    "author(s)",
    "updates",
    "refines",
    "supersedes",
    "superseded by",
    "amends",
    "amended by",
    "replaces",
];

/// Section titles that a `# ` heading sometimes holds instead of the record's title
/// (a MADR file that starts at its first section).
const SECTION_TITLES: [&str; 9] = [
    "context and problem statement",
    "context",
    "problem statement",
    "status",
    "decision",
    "decision outcome",
    "decision drivers",
    "considered options",
    "consequences",
];

fn meta_line(line: &str) -> Option<(Option<char>, String, String)> {
    let t = line.trim_start();
    let (bullet, rest) = match t.chars().next() {
        Some(c @ ('-' | '*' | '+')) if t[1..].starts_with(' ') => (Some(c), t[2..].trim_start()),
        _ => (None, t),
    };
    let rest = rest.trim_start_matches("**");
    let (key, value) = rest.split_once(':')?;
    let key = key
        .trim()
        .trim_end_matches("**")
        .trim()
        .to_ascii_lowercase();
    let value = value.trim().trim_start_matches("**").trim();
    META_KEYS
        .contains(&key.as_str())
        .then(|| (bullet, key, value.to_string()))
}

/// The cells of a Markdown table row, trimmed; `None` for a line that is no row.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let inner = t.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => cells.push(std::mem::take(&mut cell).trim().to_string()),
            _ => {
                if escaped && c != '|' {
                    cell.push('\\');
                }
                escaped = false;
                cell.push(c);
            }
        }
    }
    cells.push(cell.trim().to_string());
    Some(cells)
}

/// Whether the cells are a table's separator row (`|---|:--|`).
fn is_separator(cells: &[String]) -> bool {
    cells
        .iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

/// Reads the metadata a table holds, either as `| Key | Value |` rows or as a header row
/// naming the keys (`| Status | Date | Author(s) |`) over one row of values. A table whose
/// rows name no metadata key (a revision history) gives nothing.
fn read_table(rows: &[Vec<String>], b: &mut Body) {
    let rows: Vec<&Vec<String>> = rows.iter().filter(|r| !is_separator(r)).collect();
    let key = |c: &str| clean(c).trim_end_matches(':').to_ascii_lowercase();
    let pairs: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.len() >= 2 && META_KEYS.contains(&key(&r[0]).as_str()))
        .map(|r| (key(&r[0]), clean(&r[1])))
        .collect();
    if pairs.iter().any(|(k, _)| k == "status" || k == "date") {
        b.table = true;
        if let Some(header) = rows.first() {
            if !META_KEYS.contains(&key(&header[0]).as_str()) {
                b.table_header = header.iter().map(|c| clean(c)).collect();
            }
        }
        b.table_keys = rows
            .iter()
            .filter(|r| r.len() >= 2 && META_KEYS.contains(&key(&r[0]).as_str()))
            .map(|r| clean(&r[0]))
            .collect();
        b.meta.extend(pairs);
        return;
    }
    // A header row of keys over a row of values.
    if let (Some(header), Some(values)) = (rows.first(), rows.get(1)) {
        if header.iter().any(|c| key(c) == "status") {
            b.table = true;
            for (h, v) in header.iter().zip(values.iter()) {
                let k = key(h);
                if META_KEYS.contains(&k.as_str()) {
                    b.meta.push((k, clean(v)));
                }
            }
        }
    }
}

/// A reference-style link definition: `[label]: target` → `(label, target)`.
fn ref_def(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let rest = t.strip_prefix('[')?;
    let (label, after) = rest.split_once("]:")?;
    if label.is_empty() || label.starts_with('^') {
        return None;
    }
    let target = after.split_whitespace().next()?;
    Some((
        label.to_lowercase(),
        target.trim_matches(['<', '>']).to_string(),
    ))
}

fn read_body(body: &str) -> Body {
    let mut b = Body::default();
    let mut fence = false;
    let mut in_comment = false;
    let mut table: Vec<Vec<String>> = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        if in_comment {
            if t.contains("-->") {
                in_comment = false;
            }
            continue;
        }
        if t.starts_with("<!--") && !t.contains("-->") {
            in_comment = true;
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
        }
        if !fence {
            if let Some(d) = ref_def(t) {
                b.refs.push(d);
            }
        }
        // A table before the first section is read for metadata when it ends.
        if b.sections.is_empty() && !fence {
            if let Some(cells) = table_cells(t) {
                table.push(cells);
                continue;
            }
            if !table.is_empty() {
                read_table(&std::mem::take(&mut table), &mut b);
            }
        }
        if !fence {
            if let Some(h) = t.strip_prefix("# ") {
                let h = clean(h);
                let is_section = SECTION_TITLES.contains(&h.to_ascii_lowercase().as_str());
                if b.heading.is_none() && b.sections.is_empty() && !is_section {
                    b.heading = Some(h);
                    continue;
                }
                if is_section {
                    b.sections.push((h, Vec::new()));
                    continue;
                }
            }
            if let Some(h) = t.strip_prefix("## ").or_else(|| t.strip_prefix("### ")) {
                b.sections.push((clean(h), Vec::new()));
                continue;
            }
        }
        if let Some((_, lines)) = b.sections.last_mut() {
            lines.push(line.to_string());
            continue;
        }
        if !fence {
            if let Some((bullet, key, value)) = meta_line(t) {
                if bullet.is_some() {
                    b.bullet = b.bullet.or(bullet);
                } else if key == "date" {
                    b.date_line = true;
                }
                b.meta.push((key, value));
                continue;
            }
        }
        b.preamble.push(line.to_string());
    }
    if !table.is_empty() {
        read_table(&table, &mut b);
    }
    b
}

/// A date as a changelog writes it, as `YYYY-MM-DD` when it certainly is one:
/// `2023/2/14`, `2023-2-14` (year first) or `14.11.2022` (day first, as dots are written).
pub fn normalize_date(s: &str) -> Option<String> {
    let s = s.trim();
    let parts: Vec<&str> = s.split(['-', '/', '.']).collect();
    if parts.len() != 3
        || !parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let (y, m, d) = if parts[0].len() == 4 && !s.contains('.') {
        (parts[0], parts[1], parts[2])
    } else if parts[2].len() == 4 && s.contains('.') && !s.contains(['-', '/']) {
        (parts[2], parts[1], parts[0])
    } else {
        return None;
    };
    let iso = format!(
        "{y}-{:02}-{:02}",
        m.parse::<u32>().ok()?,
        d.parse::<u32>().ok()?
    );
    is_iso_date(&iso).then_some(iso)
}

/// The date of a changelog's first entry (`- 2022-03-03: Initial commit`), normalized.
fn changelog_date(lines: &[String]) -> Option<String> {
    lines
        .iter()
        .map(|l| l.trim())
        .filter_map(|l| l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")))
        .find_map(|l| {
            let token = l.split([':', ' ']).next().unwrap_or("");
            normalize_date(clean(token).as_str())
        })
}

/// The ids of the records a piece of prose points at: links to Markdown files (inline or
/// through a reference definition in `refs`) and mentions (`ADR-8`, `ADR 0003-SFS`).
fn targets(text: &str, refs: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let md_id = |target: &str| -> Option<String> {
        let path = target.split(['#', '?', ' ']).next().unwrap_or("");
        let name = path.rsplit('/').next().unwrap_or("");
        let lower = name.to_ascii_lowercase();
        (lower.ends_with(".md") || lower.ends_with(".markdown")).then(|| id_of(name))
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(open) = text[i..].find('[').map(|o| o + i) {
        let Some(close) = text[open..].find(']').map(|c| c + open) else {
            break;
        };
        let label = &text[open + 1..close];
        let after = &text[close + 1..];
        let mut next = close + 1;
        let target = if let Some(rest) = after.strip_prefix('(') {
            let end = rest.find(')').unwrap_or(rest.len());
            next = close + 2 + end;
            Some(rest[..end].to_string())
        } else if let Some(rest) = after.strip_prefix('[') {
            let end = rest.find(']').unwrap_or(rest.len());
            next = close + 2 + end;
            let name = if end == 0 { label } else { &rest[..end] };
            refs.iter()
                .find(|(l, _)| *l == name.to_lowercase())
                .map(|(_, t)| t.clone())
        } else {
            refs.iter()
                .find(|(l, _)| *l == label.to_lowercase())
                .map(|(_, t)| t.clone())
        };
        let id = target.as_deref().and_then(md_id).or_else(|| mention(label));
        if let Some(id) = id {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        i = next.min(bytes.len());
    }
    // Mentions outside links.
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = plain.split_whitespace().collect();
    for (n, w) in words.iter().enumerate() {
        let pair = match words.get(n + 1) {
            Some(next) => format!("{w} {next}"),
            None => w.to_string(),
        };
        if let Some(id) = mention(w).or_else(|| mention(&pair)) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The id a mention names: `ADR-8`, `ADR 0003-SFS`, `adr-020` → `8`, `0003`, `020`.
fn mention(s: &str) -> Option<String> {
    let t = s.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let lower = t.to_ascii_lowercase();
    let rest = lower.strip_prefix("adr")?;
    let rest = rest.trim_start_matches(['-', '_', ' ', '#']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[digits.len()..];
    (!digits.is_empty() && (after.is_empty() || after.starts_with(['-', '_', '.', ':', ' '])))
        .then_some(digits)
}

/// The relation a sentence states, by the phrase that names it.
const PROSE_RELATIONS: [(&str, &str); 13] = [
    ("is superseded by", "superseded_by"),
    ("superseded by", "superseded_by"),
    ("superceded by", "superseded_by"),
    ("replaced by", "superseded_by"),
    ("in favor of", "superseded_by"),
    ("in favour of", "superseded_by"),
    ("supersedes", "supersedes"),
    ("replaces", "supersedes"),
    ("amended by", "amended_by"),
    ("amends", "amends"),
    ("refines", "amends"),
    ("updates", "amends"),
    ("extends", "amends"),
];

/// The relations stated in prose (`Refines ADR 0003-SFS`, `This document supersedes the
/// [Release Process ADR][process_adr].`, `superseded by three ADRs: [A][a], [B][b]`), one
/// sentence at a time; a sentence names a relation only with a phrase and a record.
fn prose_relations(lines: &[String], refs: &[(String, String)]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut text = String::new();
    for l in lines {
        let t = strip_comments(l);
        let t = t.trim();
        if t.starts_with("```") || ref_def(t).is_some() {
            continue;
        }
        text.push_str(t);
        text.push(if t.is_empty() { '\n' } else { ' ' });
    }
    for sentence in text.split(['\n', '|']).flat_map(|p| p.split(". ")) {
        let lower = sentence.to_ascii_lowercase();
        let Some((at, word, key)) = PROSE_RELATIONS
            .iter()
            .filter_map(|(w, k)| lower.find(w).map(|at| (at, *w, *k)))
            .min_by_key(|(at, _, _)| *at)
        else {
            continue;
        };
        for id in targets(&sentence[at + word.len()..], refs) {
            out.push((key, id));
        }
    }
    out
}

/// The first paragraph of some lines, shortened, skipping comments and blank lines.
fn paragraph(lines: &[String]) -> String {
    let mut para = String::new();
    for line in lines {
        let t = strip_comments(line);
        let t = t.trim();
        if meta_line(t).is_some() {
            continue;
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with("```") || t.starts_with('|') {
            if para.is_empty() {
                continue;
            }
            break;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(t);
        if para.len() > 240 {
            break;
        }
    }
    shorten(&para, 200)
}

/// A list written in one metadata value: `a, b and c` or a YAML sequence.
fn list_of(v: &str) -> Value {
    let items: Vec<Value> = v
        .split([',', ';'])
        .flat_map(|s| s.split(" and "))
        .map(clean)
        .filter(|s| !s.is_empty())
        .map(Value::String)
        .collect();
    Value::Array(items)
}

/// Reads one ADR file that is not in seneschal's format: `fields` is its front matter (empty
/// when it has none), `body_start` where its body starts in `text`.
#[allow(clippy::too_many_arguments)]
pub fn read(
    file: &str,
    file_name: &str,
    text: String,
    digest: String,
    mut fields: Map<String, Value>,
    had_front_matter: bool,
    body_start: usize,
    kind: &Arc<Kind>,
) -> FileResult {
    let mut findings: Vec<Finding> = Vec::new();
    let finding = |pointer: &str, message: String| Finding {
        file: file.to_string(),
        pointer: pointer.to_string(),
        message,
    };
    let body = read_body(&text[body_start..]);
    let meta = |key: &str| {
        body.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let section = |starts: &str| {
        body.sections
            .iter()
            .find(|(t, _)| t.to_ascii_lowercase().starts_with(starts))
            .map(|(_, lines)| lines)
    };
    // The status section is the record's own only near the top and by its exact name: a
    // `### Status messages` deep in the body describes something else.
    let status_section = body
        .sections
        .iter()
        .take_while(|(t, _)| {
            t.trim_end_matches(':').eq_ignore_ascii_case("status")
                || t.eq_ignore_ascii_case("changelog")
        })
        .find(|(t, _)| t.trim_end_matches(':').eq_ignore_ascii_case("status"))
        .map(|(_, lines)| lines);
    let changelog = body
        .sections
        .iter()
        .take(3)
        .find(|(t, _)| t.eq_ignore_ascii_case("changelog"))
        .map(|(_, lines)| lines);
    let style = Style::detect(&Shape {
        file_name,
        had_front_matter,
        bullet: body.bullet,
        date_line: body.date_line,
        table: body.table,
        status_section: status_section.is_some(),
        changelog: changelog.is_some(),
        heading: body.heading.as_deref(),
    });
    let id = id_of(file_name);
    if !is_valid_id(&id) {
        return FileResult::bad(
            file,
            "",
            format!(
                "id `{id}` (read from the file name) must match {} (it becomes a URI segment); rename the file",
                super::ID_GRAMMAR
            ),
        );
    }
    // Title: front matter, else the heading without its number.
    let fm_str = |fields: &Map<String, Value>, k: &str| {
        fields.get(k).and_then(Value::as_str).map(str::to_string)
    };
    let title = match fm_str(&fields, "title").filter(|t| !t.trim().is_empty()) {
        Some(t) => t,
        None => match &body.heading {
            Some(h) if !title_of_heading(h).is_empty() => {
                let t = title_of_heading(h);
                fields.insert("title".into(), Value::String(t.clone()));
                t
            }
            // No title heading (a MADR file that starts at its first section): the file
            // name, without its number, says it.
            _ => {
                let t = title_of_file(file_name);
                fields.insert("title".into(), Value::String(t.clone()));
                t
            }
        },
    };
    // Status: front matter, else a `Status:` line or bullet, else the `## Status` section's
    // first line; the section's other lines may name relations.
    let mut relation_lines: Vec<String> = Vec::new();
    let status_raw: Option<String> = match fields.get("status") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => meta("status").or_else(|| {
            status_section.and_then(|lines| {
                let mut it = lines.iter().map(|l| clean(l)).filter(|l| !l.is_empty());
                let first = it.next();
                relation_lines.extend(it);
                first
            })
        }),
        Some(other) => {
            findings.push(finding(
                "/status",
                format!(
                    "status {other} is not text; it must be one of {}",
                    STATUSES.join(", ")
                ),
            ));
            None
        }
    };
    let mut status: Option<String> = None;
    let mut relations: Vec<(&'static str, String)> = Vec::new();
    if let Some(raw) = status_raw {
        let read = read_status(&raw);
        relations.extend(read.relations.iter().cloned());
        match read.canonical {
            Some(c) => {
                if read.text.to_ascii_lowercase() != c {
                    fields.insert(STATUS_TEXT_KEY.into(), Value::String(read.text.clone()));
                }
                fields.insert("status".into(), Value::String(c.into()));
                status = Some(c.to_string());
            }
            None if !read.text.is_empty() => {
                findings.push(finding(
                    "/status",
                    format!(
                        "status `{}` is none of {} (matched without case; approved and adopted \
                         mean accepted, declined means rejected); it is served as written",
                        read.text,
                        STATUSES.join(", ")
                    ),
                ));
                fields.insert("status".into(), Value::String(read.text.clone()));
                status = Some(read.text.clone());
            }
            None => {}
        }
    }
    for line in &relation_lines {
        if let Some((key, rest)) = relation_of(line) {
            if let Some(id) = target_id(rest) {
                relations.push((key, id));
            }
        }
    }
    // Relations in metadata rows (`| Updates | ADR-8 |`), and in the prose at the top: before
    // the first section, in the first section and in the status section.
    for (k, v) in &body.meta {
        let key = match k.as_str() {
            "updates" | "refines" | "amends" => "amends",
            "supersedes" | "replaces" => "supersedes",
            "superseded by" => "superseded_by",
            "amended by" => "amended_by",
            _ => continue,
        };
        for id in targets(v, &body.refs) {
            relations.push((key, id));
        }
    }
    let mut top: Vec<String> = body.preamble.clone();
    if let Some((_, lines)) = body.sections.first() {
        top.push(String::new());
        top.extend(lines.iter().cloned());
    }
    if let Some(lines) = status_section {
        top.push(String::new());
        top.extend(lines.iter().cloned());
    }
    relations.extend(prose_relations(&top, &body.refs));
    relations.retain(|(_, target)| *target != id);
    let mut seen: Vec<(&'static str, String)> = Vec::new();
    relations.retain(|r| {
        let new = !seen.contains(r);
        if new {
            seen.push(r.clone());
        }
        new
    });
    // Relations in the front matter's own words are kept as written; those read from the
    // text are added under seneschal's keys.
    for key in ["supersedes", "superseded_by", "amends", "amended_by"] {
        if fields.contains_key(key) {
            continue;
        }
        let ids: Vec<Value> = relations
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, id)| Value::String(id.clone()))
            .collect();
        match ids.len() {
            0 => {}
            1 => {
                fields.insert(key.into(), ids[0].clone());
            }
            _ => {
                fields.insert(key.into(), Value::Array(ids));
            }
        }
    }
    // Date: front matter, else a `Date:` line or bullet.
    let date = match fields.get("date") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => meta("date")
            .map(|d| clean(&d))
            .or_else(|| changelog.and_then(|l| changelog_date(l))),
        Some(other) => Some(other.to_string()),
    };
    if let Some(d) = &date {
        if !is_iso_date(d) {
            findings.push(finding(
                "/date",
                format!("date `{d}` is not a date YYYY-MM-DD; it is served as written"),
            ));
        }
        fields.insert("date".into(), Value::String(d.clone()));
    }
    // The other metadata lines, under their MADR names.
    for (key, name) in [
        ("deciders", "deciders"),
        ("decision-makers", "decision-makers"),
        ("decision makers", "decision-makers"),
        ("consulted", "consulted"),
        ("informed", "informed"),
    ] {
        if let (false, Some(v)) = (fields.contains_key(name), meta(key)) {
            fields.insert(name.into(), list_of(&v));
        }
    }
    // Authors as written (a table's `| Author | @someone |`).
    for (key, name) in [
        ("author", "author"),
        ("authors", "authors"),
        ("author(s)", "authors"),
    ] {
        if let (false, Some(v)) = (fields.contains_key(name), meta(key)) {
            fields.insert(name.into(), Value::String(v));
        }
    }
    let mut tags: Vec<String> = Vec::new();
    match fields.get("tags") {
        Some(Value::Array(a)) => {
            tags.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
        }
        Some(Value::String(s)) => tags.extend(
            s.split([',', ' '])
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        ),
        _ => {
            if let Some(v) = meta("tags") {
                tags.extend(v.split([',', ' ']).map(clean).filter(|t| !t.is_empty()));
                fields.insert(
                    "tags".into(),
                    Value::Array(tags.iter().cloned().map(Value::String).collect()),
                );
            }
        }
    }
    // Description: front matter, else the Context section's first paragraph, else the first
    // paragraph of prose before the sections.
    let description = fm_str(&fields, "description")
        .or_else(|| {
            section("context")
                .map(|l| paragraph(l))
                .filter(|p| !p.is_empty())
        })
        .or_else(|| {
            let p = paragraph(&body.preamble);
            (!p.is_empty()).then_some(p)
        })
        .or_else(|| {
            body.sections
                .iter()
                .filter(|(t, _)| !t.eq_ignore_ascii_case("status"))
                .map(|(_, l)| paragraph(l))
                .find(|p| !p.is_empty())
        })
        .unwrap_or_default();
    fields.insert(FORMAT_KEY.into(), Value::String(style.as_str().into()));
    FileResult {
        object: Some(Arc::new(Object {
            uri: format!("{URI_PREFIX}{}/{id}", kind.name),
            kind: kind.name.clone(),
            id,
            file: file.to_string(),
            title: title.trim().to_string(),
            description: description.trim().to_string(),
            tags,
            status,
            front_matter: Value::Object(fields),
            mime_type: kind.format.mime_type().to_string(),
            digest,
            body_start,
            text,
        })),
        findings,
    }
}

/// The style, folder and numbering of the repository's ADRs: what a new record follows.
#[derive(Debug, Clone, PartialEq)]
pub struct House {
    /// The format most of its records are written in.
    pub style: Style,
    /// The folder most of its records live in.
    pub folder: String,
    /// The width of its numbers (`0001` → 4), when its ids are numbers.
    pub width: Option<usize>,
    /// The file name of its newest record around the number: `(before, slugged)`
    /// (`ADR-60.md` → `("ADR-", false)`, `adr-029-x.md` → `("adr-", true)`).
    pub name: Option<(String, bool)>,
    /// The heading, metadata and section layout of its newest record.
    pub layout: Layout,
    /// Whether every record states a date: a new one then gets one too.
    pub all_dated: bool,
}

/// How a record lays out its heading and metadata, learned from a record of the house.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// The heading around the number: `(before, width, after)` (`# ADR 029: Title` →
    /// `("ADR ", 3, ": ")`); `None` when the heading holds no number.
    pub heading: Option<(String, usize, String)>,
    /// The header cells of the metadata table (`Metadata`, `Value`).
    pub table_header: Vec<String>,
    /// The keys of the metadata table, in order, as written.
    pub table_keys: Vec<String>,
    /// Whether the status section comes before the changelog.
    pub status_first: bool,
}

/// The layout of the record `o`.
pub fn layout_of(o: &Object) -> Layout {
    let b = read_body(o.body());
    let mut layout = Layout {
        table_header: b.table_header.clone(),
        table_keys: b.table_keys.clone(),
        ..Layout::default()
    };
    let pos = |name: &str| {
        b.sections
            .iter()
            .position(|(t, _)| t.eq_ignore_ascii_case(name))
    };
    layout.status_first = match (pos("status"), pos("changelog")) {
        (Some(s), Some(c)) => s < c,
        _ => true,
    };
    if let (Some(h), Ok(n)) = (&b.heading, o.id.parse::<u64>()) {
        let title = title_of_heading(h);
        if let Some(title_at) = h.rfind(title.as_str()).filter(|_| title != *h) {
            let head = &h[..title_at];
            // The digits in the heading that say the record's number.
            let mut at = None;
            let mut i = 0;
            let bytes = head.as_bytes();
            while i < bytes.len() {
                if bytes[i].is_ascii_digit() {
                    let j = i + head[i..].chars().take_while(char::is_ascii_digit).count();
                    if head[i..j].parse::<u64>().ok() == Some(n) {
                        at = Some((i, j));
                        break;
                    }
                    i = j;
                } else {
                    i += 1;
                }
            }
            if let Some((i, j)) = at {
                let digits = &head[i..j];
                let width = if digits.starts_with('0') {
                    digits.len()
                } else {
                    0
                };
                layout.heading = Some((head[..i].to_string(), width, head[j..].to_string()));
            }
        }
    }
    layout
}

/// The house style of the ADRs among `objects` (of kind `kind`), when there are any not in
/// seneschal's format; `None` keeps seneschal's own.
pub fn house(objects: &[Arc<Object>], kind: &str) -> Option<House> {
    let mut styles: Vec<(Style, usize)> = Vec::new();
    let mut folders: Vec<(String, usize)> = Vec::new();
    let mut widths: Vec<(usize, usize)> = Vec::new();
    fn bump<K: PartialEq>(v: &mut Vec<(K, usize)>, k: K) {
        match v.iter_mut().find(|(x, _)| *x == k) {
            Some((_, n)) => *n += 1,
            None => v.push((k, 1)),
        }
    }
    /// The most frequent key (the first of equals).
    fn most<K: Clone>(v: &[(K, usize)]) -> Option<K> {
        let top = v.iter().map(|(_, n)| *n).max()?;
        v.iter().find(|(_, n)| *n == top).map(|(k, _)| k.clone())
    }
    for o in objects.iter().filter(|o| o.kind == kind) {
        let style = o
            .front_matter
            .get(FORMAT_KEY)
            .and_then(Value::as_str)
            .and_then(Style::parse)
            .unwrap_or(Style::SENESCHAL);
        bump(&mut styles, style);
        let folder = o.file.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        bump(&mut folders, folder);
        if o.id.chars().all(|c| c.is_ascii_digit()) {
            bump(&mut widths, o.id.len());
        }
    }
    let style = most(&styles)?;
    if style == Style::SENESCHAL {
        return None;
    }
    let of_kind: Vec<&Arc<Object>> = objects.iter().filter(|o| o.kind == kind).collect();
    // The newest record: the highest number, else the last file.
    let newest = of_kind
        .iter()
        .filter(|o| o.front_matter.get(FORMAT_KEY).and_then(Value::as_str) == Some(style.as_str()))
        .max_by_key(|o| (o.id.parse::<u64>().ok(), o.file.clone()))
        .copied();
    let name = newest.and_then(|o| {
        let file = o.file.rsplit('/').next()?;
        let stem = file.strip_suffix(".md")?;
        let at = stem
            .find(o.id.as_str())
            .filter(|_| o.id.parse::<u64>().is_ok())?;
        let after = &stem[at + o.id.len()..];
        Some((stem[..at].to_string(), !after.is_empty()))
    });
    let width = match newest {
        Some(o) if o.id.parse::<u64>().is_ok() => {
            Some(if o.id.starts_with('0') { o.id.len() } else { 0 })
        }
        _ => most(&widths),
    };
    Some(House {
        style,
        folder: most(&folders).unwrap_or_default(),
        width,
        name,
        layout: newest.map(|o| layout_of(o)).unwrap_or_default(),
        all_dated: of_kind.iter().all(|o| o.front_matter.get("date").is_some()),
    })
}

/// The text of a metadata value: a string as is, a list joined with commas.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The keys a rendering writes into the text rather than into front matter.
const DERIVED: [&str; 3] = [FORMAT_KEY, STATUS_TEXT_KEY, "title"];

/// The status as the file should spell it: the text as written when it still means the
/// status asked for, else the status itself, with a "Superseded by" link when one is known.
fn status_words(
    front: &Map<String, Value>,
    style: Style,
    title_of: &dyn Fn(&str) -> Option<(String, String)>,
) -> Option<String> {
    let status = front.get("status").and_then(Value::as_str)?;
    if let Some(text) = front.get(STATUS_TEXT_KEY).and_then(Value::as_str) {
        if read_status(text).canonical == Some(status) || read_status(text).text == status {
            return Some(text.to_string());
        }
    }
    let mut words = {
        let mut c = status.chars();
        match c.next() {
            Some(f) if style.format().capitalises_status() => {
                f.to_uppercase().chain(c).collect::<String>()
            }
            _ => status.to_string(),
        }
    };
    if status == "superseded" {
        if let Some(by) = front.get("superseded_by").and_then(Value::as_str) {
            words = match title_of(by) {
                Some((label, file)) => format!("{words} by [{label}]({file})"),
                None => format!("{words} by {by}"),
            };
        }
    }
    Some(words)
}

/// The file text of a record in `style`: `front` holds the metadata (seneschal's names,
/// the front matter's own keys), `body` the Markdown after the metadata. `number` is the
/// record's number as adr-tools writes it in the heading (`1` for `0001`); `title_of` names
/// a record by id, for links (`(label, file name)`).
pub fn render(
    style: Style,
    front: &Map<String, Value>,
    body: &str,
    number: Option<&str>,
    title_of: &dyn Fn(&str) -> Option<(String, String)>,
    layout: &Layout,
) -> Result<String, String> {
    let title = front
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or("an ADR needs a `title` in its front matter (it becomes the `# ` heading)")?;
    let status = status_words(front, style, title_of);
    let date = front.get("date").map(value_text);
    let record = Record {
        front,
        title,
        status,
        date,
        body: body.trim_start_matches('\n'),
        number,
        title_of,
        layout,
    };
    let mut out = String::new();
    style.format().write(&record, &mut out)?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// A record's text planned in its repository's format: its id, file and bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The record's id.
    pub id: String,
    /// The repository-relative file.
    pub file: String,
    /// The whole text.
    pub text: String,
}

/// Why a record cannot be written: `(JSON pointer into the input, message)`.
pub type Refusal = (String, String);

/// Today, `YYYY-MM-DD` (UTC), for the `Date:` adr-tools writes.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    seneschal_access::text::rfc3339(secs)[..10].to_string()
}

/// The slug of a title, for a file name: lower-case words joined by hyphens.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Checks and settles the metadata of a record to write: a title, a status that is one of
/// the canonical set (or certainly means one), a date `YYYY-MM-DD`.
fn settle(front: &Value, fill_date: bool, today: &str) -> Result<Map<String, Value>, Refusal> {
    let Value::Object(fields) = front else {
        return Err((
            "/front_matter".into(),
            "front_matter must be an object".into(),
        ));
    };
    let mut fields = fields.clone();
    fields.remove("kind");
    // Every value lands in a line of the file (the heading, a `Status` section, a table
    // cell): a line break or a control character would write structure of its own (a title
    // `x\n\n## Status\n\nAccepted` makes a proposed record read as accepted).
    for (key, value) in &fields {
        let strings: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if let Some(bad) = strings
            .iter()
            .flat_map(|s| s.chars())
            .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}'))
        {
            return Err((
                format!("/front_matter/{}", super::escape_pointer(key)),
                format!(
                    "`{key}` holds the control character U+{:04X}; a value written into the \
                     record's text must be one line without control characters",
                    bad as u32
                ),
            ));
        }
    }
    match fields.get("title") {
        Some(Value::String(t)) if !t.trim().is_empty() => {}
        _ => {
            return Err((
                "/front_matter/title".into(),
                "an ADR needs a `title` (a non-empty string; it becomes the `# ` heading)".into(),
            ))
        }
    }
    if let Some(v) = fields.get("status").cloned() {
        let read = v.as_str().map(read_status).unwrap_or_default();
        match read.canonical {
            Some(c) => {
                if read.text.to_ascii_lowercase() != c {
                    fields.insert(STATUS_TEXT_KEY.into(), Value::String(read.text.clone()));
                }
                fields.insert("status".into(), Value::String(c.into()));
            }
            None => {
                return Err((
                    "/front_matter/status".into(),
                    format!(
                        "status {v} is none of the statuses: {} (matched without case; approved and adopted mean accepted, declined means rejected)",
                        STATUSES.join(", ")
                    ),
                ))
            }
        }
    }
    match fields.get("date") {
        Some(Value::String(d)) if is_iso_date(d) => {}
        Some(d) => {
            return Err((
                "/front_matter/date".into(),
                format!("date {d} must be a date YYYY-MM-DD"),
            ))
        }
        // adr-tools writes the day a record is made, and so does a house whose every
        // record is dated.
        None if fill_date => {
            fields.insert("date".into(), Value::String(today.to_string()));
        }
        None => {}
    }
    fields.remove(FORMAT_KEY);
    Ok(fields)
}

/// The label and file name of the record `id` among `objects`, for a link to it.
fn link_to<'a>(
    objects: &'a [Arc<Object>],
    kind: &str,
    style: Style,
) -> impl Fn(&str) -> Option<(String, String)> + 'a {
    let kind = kind.to_string();
    move |id: &str| {
        let o = objects.iter().find(|o| o.kind == kind && o.id == id)?;
        let name = o.file.rsplit('/').next()?.to_string();
        let label = style.format().link_label(id, &o.title)?;
        Some((label, name))
    }
}

/// The number as adr-tools writes it in a heading: `0001` → `1`.
fn heading_number(id: &str) -> Option<String> {
    id.chars().all(|c| c.is_ascii_digit()).then(|| {
        let n = id.trim_start_matches('0');
        if n.is_empty() {
            "0".to_string()
        } else {
            n.to_string()
        }
    })
}

/// Plans a new ADR of `kind` in the format, folder and numbering of the repository's records
/// (`objects`), when they are in another tool's format; `Ok(None)` keeps seneschal's own.
/// `id` is the id asked for, if any.
pub fn plan_create(
    objects: &[Arc<Object>],
    kind: &Kind,
    id: Option<&str>,
    front: &Value,
    body: &str,
    today: &str,
) -> Result<Option<Planned>, Refusal> {
    let Some(house) = house(objects, &kind.name) else {
        return Ok(None);
    };
    let fill_date = house.style.format().dates_new() || house.all_dated;
    let fields = settle(front, fill_date, today)?;
    let (id, stem) = match house.style.format().own_name(id, &fields, today) {
        Some(named) => named,
        None => {
            let title = fields
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let s = slug(title);
            let id = match id {
                Some(id) => id.to_string(),
                None => {
                    let next = objects
                        .iter()
                        .filter(|o| o.kind == kind.name)
                        .filter_map(|o| o.id.parse::<u64>().ok())
                        .max()
                        .map_or(1, |n| n + 1);
                    format!("{next:0width$}", width = house.width.unwrap_or(4))
                }
            };
            // The house's own name around the number: `ADR-61`, `adr-030-slug`, `0020-slug`.
            let (before, slugged) = house.name.clone().unwrap_or((String::new(), true));
            let stem = if s.is_empty() || !slugged {
                format!("{before}{id}")
            } else {
                format!("{before}{id}-{s}")
            };
            (id, stem)
        }
    };
    if !is_valid_id(&id) {
        return Err((
            "/id".into(),
            format!("id `{id}` must match {}", super::ID_GRAMMAR),
        ));
    }
    let file = if house.folder.is_empty() {
        format!("{stem}.md")
    } else {
        format!("{}/{stem}.md", house.folder)
    };
    let number = heading_number(&id);
    let text = render(
        house.style,
        &fields,
        body,
        number.as_deref(),
        &link_to(objects, &kind.name, house.style),
        &house.layout,
    )
    .map_err(|m| ("/front_matter".to_string(), m))?;
    Ok(Some(Planned { id, file, text }))
}

/// The Markdown of a record after its metadata (heading, `Date:` line, `## Status` section,
/// metadata bullets), as a rendering puts it back.
pub fn content_of(body: &str) -> String {
    let mut pos = 0;
    let mut in_status = false;
    let mut seen_heading = false;
    let mut in_table = false;
    let mut seen_table = false;
    for line in body.split_inclusive('\n') {
        let t = line.trim();
        let next = pos + line.len();
        if t.is_empty() {
            in_table = false;
            pos = next;
            continue;
        }
        if (in_table || !seen_table) && t.starts_with('|') {
            in_table = true;
            seen_table = true;
            pos = next;
            continue;
        }
        if in_status {
            if t.starts_with("## ") || t.starts_with("# ") {
                in_status = false;
            } else {
                pos = next;
                continue;
            }
        }
        if !seen_heading && t.starts_with("# ") {
            seen_heading = true;
            pos = next;
            continue;
        }
        if t.strip_prefix("## ")
            .is_some_and(|h| clean(h).eq_ignore_ascii_case("status"))
        {
            in_status = true;
            pos = next;
            continue;
        }
        if meta_line(t).is_some() {
            pos = next;
            continue;
        }
        break;
    }
    let rest = &body[pos.min(body.len())..];
    // A status section right after a changelog (the Cosmos layout) is the record's metadata
    // too; a `## Status` further down is content.
    let mut out = String::with_capacity(rest.len());
    let mut only_changelog = true;
    let mut skipping = false;
    for line in rest.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("## ") || t.starts_with("# ") {
            let name = t.trim_start_matches('#').trim().trim_end_matches(':');
            skipping = only_changelog && name.eq_ignore_ascii_case("status");
            only_changelog &= name.eq_ignore_ascii_case("changelog") || skipping;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// Plans an update of `o` that keeps its file's format; `Ok(None)` when it is in seneschal's
/// own. `front` is the new metadata (the served front matter, changed), `body` a new body:
/// either the Markdown after the metadata or a whole text as `knowledge.get` answered it.
pub fn plan_update(
    objects: &[Arc<Object>],
    o: &Object,
    front: &Value,
    body: Option<&str>,
) -> Result<Option<String>, Refusal> {
    let Some(style) = o
        .front_matter
        .get(FORMAT_KEY)
        .and_then(Value::as_str)
        .and_then(Style::parse)
        .filter(|s| *s != Style::SENESCHAL)
    else {
        return Ok(None);
    };
    let fields = settle(front, style.format().dates_updates(), &today())?;
    let content = content_of(body.unwrap_or_else(|| o.body()));
    let number = heading_number(&o.id);
    let text = render(
        style,
        &fields,
        &content,
        number.as_deref(),
        &link_to(objects, &o.kind, style),
        &layout_of(o),
    )
    .map_err(|m| ("/front_matter".to_string(), m))?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_only_where_certain() {
        let s = read_status("Approved");
        assert_eq!(
            (s.canonical, s.text.as_str()),
            (Some("accepted"), "Approved")
        );
        assert_eq!(read_status("**Accepted**").canonical, Some("accepted"));
        assert_eq!(
            read_status("accepted; supersedes ADR-0045").relations,
            [("supersedes", "0045".to_string())]
        );
        let s = read_status("superseded by [ADR-0043](0043-new.md)");
        assert_eq!(s.canonical, Some("superseded"));
        assert_eq!(s.relations, [("superseded_by", "0043".to_string())]);
        let s = read_status("Superseded by [20201016-use-the-adr-slug-as-its-unique-id](20201016-use-the-adr-slug-as-its-unique-id.md)");
        assert_eq!(
            s.relations,
            [(
                "superseded_by",
                "20201016-use-the-adr-slug-as-its-unique-id".to_string()
            )]
        );
        assert_eq!(
            read_status("Accepted on 17/10/2023").canonical,
            Some("accepted")
        );
        assert_eq!(read_status("on hold").canonical, None);
        assert_eq!(read_status("draft").canonical, None);
        assert_eq!(
            read_status("Replaced by ADR-0009").canonical,
            Some("superseded")
        );
        assert_eq!(
            read_status("superseded by ADR-0057").relations,
            [("superseded_by", "0057".to_string())]
        );
    }

    #[test]
    fn ids_titles_and_names() {
        assert_eq!(id_of("0001-record-architecture-decisions.md"), "0001");
        assert_eq!(id_of("20200925-use-x.md"), "20200925-use-x");
        assert_eq!(id_of("2020-09-25-use-x.md"), "2020-09-25-use-x");
        assert_eq!(id_of("ADR-012-thing.md"), "012");
        assert_eq!(
            id_of("adr_with_a_WeIrd-filename.md"),
            "adr_with_a_WeIrd-filename"
        );
        assert_eq!(id_of("use-x.md"), "use-x");
        assert_eq!(
            title_of_heading("1. Record architecture decisions"),
            "Record architecture decisions"
        );
        assert_eq!(title_of_heading("ADR-0001: Record"), "Record");
        assert_eq!(title_of_heading("ADR 0001: Record"), "Record");
        assert_eq!(title_of_heading("0001 – Record"), "Record");
        assert_eq!(title_of_heading("0001: Record"), "Record");
        assert_eq!(title_of_heading("3D rendering"), "3D rendering");
        assert_eq!(title_of_heading("2019 review"), "2019 review");
        assert_eq!(
            title_of_heading("Use Lunr for search"),
            "Use Lunr for search"
        );
        for name in [
            "README.md",
            "index.md",
            "template.md",
            "adr-template.md",
            "adr-template-minimal.md",
            "0000-template.md",
            "0000-adr-template.md",
        ] {
            assert!(is_not_a_record(name), "{name}");
        }
        for name in [
            "0000-use-markdown-architectural-decision-records.md",
            "0005-use-templates-for-mail.md",
        ] {
            assert!(!is_not_a_record(name), "{name}");
        }
    }

    #[test]
    fn a_rendering_reads_back_as_what_it_was_given() {
        let front = serde_json::json!({
            "title": "Use Lunr for search",
            "status": "accepted",
            "date": "2020-11-03",
            "tags": ["search"]
        });
        let Value::Object(front) = front else {
            unreachable!()
        };
        let none = |_: &str| None;
        for style in ["nygard", "madr", "madr2", "log4brains"].map(|n| Style::parse(n).unwrap()) {
            let text = render(
                style,
                &front,
                "## Context\n\nWe need search.\n",
                Some("7"),
                &none,
                &Layout::default(),
            )
            .unwrap();
            let (fields, body_start) = match super::super::front_matter::split_front_matter(&text) {
                Ok((fm, line, start)) => (
                    super::super::front_matter::yaml_mapping(fm, line).unwrap(),
                    start,
                ),
                Err(_) => (Map::new(), 0),
            };
            let kind = super::super::kinds::distributed()[0].clone();
            let r = read(
                "docs/adr/0007-x.md",
                "0007-x.md",
                text.clone(),
                String::new(),
                fields,
                body_start > 0,
                body_start,
                &kind,
            );
            let o = r.object.expect("served");
            assert!(r.findings.is_empty(), "{style:?}: {:?}", r.findings);
            assert_eq!(o.title, "Use Lunr for search", "{style:?}\n{text}");
            assert_eq!(o.status.as_deref(), Some("accepted"), "{style:?}\n{text}");
            assert_eq!(o.front_matter["date"], "2020-11-03", "{style:?}\n{text}");
            assert_eq!(
                o.front_matter[FORMAT_KEY],
                style.as_str(),
                "{style:?}\n{text}"
            );
            assert_eq!(o.description, "We need search.", "{style:?}\n{text}");
            assert_eq!(
                content_of(o.body()),
                "## Context\n\nWe need search.\n",
                "{style:?}"
            );
        }
    }

    #[test]
    fn dates_mentions_titles_and_relations_as_written() {
        assert_eq!(normalize_date("2023/2/14").as_deref(), Some("2023-02-14"));
        assert_eq!(normalize_date("14.11.2022").as_deref(), Some("2022-11-14"));
        assert_eq!(normalize_date("2022-03-03").as_deref(), Some("2022-03-03"));
        assert_eq!(normalize_date("11/14/2022"), None);
        assert_eq!(normalize_date("2022/13/01"), None);
        assert_eq!(mention("ADR-8").as_deref(), Some("8"));
        assert_eq!(mention("ADR 0003-SFS").as_deref(), Some("0003"));
        assert_eq!(mention("ADRs"), None);
        assert_eq!(title_of_file("0004-release-captain.md"), "Release captain");
        assert_eq!(title_of_file("ADR-61.md"), "ADR-61");
        assert_eq!(title_of_heading("ADR: Spectrum"), "Spectrum");
        let refs = vec![
            (
                "process_adr".to_string(),
                "./0007-release-process.md".to_string(),
            ),
            (
                "pr".to_string(),
                "https://example.invalid/pull/66".to_string(),
            ),
        ];
        let lines = |t: &str| t.lines().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            prose_relations(
                &lines("This document supersedes the [Release Process ADR][process_adr]."),
                &refs
            ),
            [("supersedes", "0007".to_string())]
        );
        assert_eq!(
            prose_relations(
                &lines("Refines ADR 0003-SFS on the object state machine."),
                &refs
            ),
            [("amends", "0003".to_string())]
        );
        // A link to anything but a record is no relation.
        assert!(prose_relations(&lines("Deprecated in favor of [#66][pr]."), &refs).is_empty());
        assert!(prose_relations(&lines("This updates the documentation."), &refs).is_empty());
        let s = read_status("Implemented. Superseded by [ADR-013](./adr-013-x.md).");
        assert_eq!(s.canonical, Some("superseded"));
        assert_eq!(
            read_status("Partially Implemented").canonical,
            Some("accepted")
        );
        assert!(is_not_a_record("adr.template.md") && is_not_a_record("x-template.md"));
    }

    #[test]
    fn odd_input_is_read_without_panicking() {
        let kind = super::super::kinds::distributed()[0].clone();
        for text in [
            "",
            "#",
            "# ",
            "## Status",
            "- Status:",
            "* Date: é",
            "# 1.",
            "# ADR-",
            "Date: 2020-13-45\n",
            "<!-- open",
            "```\n# x",
            "# é. ü\n\n## Status\n\nSuperseded by [",
            "ADR",
        ] {
            let r = read(
                "docs/adr/x.md",
                "x.md",
                text.to_string(),
                String::new(),
                Map::new(),
                false,
                0,
                &kind,
            );
            assert!(r.object.is_some() || !r.findings.is_empty(), "{text:?}");
        }
    }
}
