//! Fuzz target: a knowledge file's bytes into the front-matter reader and validator
//! (`seneschal::knowledge::parse::parse_bytes`), as the index reads every file a kind's globs
//! match in a repository it does not control.
//!
//! The first byte picks where the file lives (the generic `.seneschal/knowledge/` folder, whose
//! files name their kind, or the folder of one distributed kind: adr, guide, skill), the second
//! its file name (where a kind may read the id); the rest is the file.
//!
//! Invariants:
//! - it never panics (libfuzzer-sys aborts on any panic);
//! - the answer is exactly one of: an object and no finding, or no object and findings;
//! - every finding names the file, says what is wrong, and its pointer is empty or a JSON
//!   pointer (starts with `/`);
//! - bytes that are not UTF-8, or over the 1 MiB cap, are findings;
//! - an object is what the file says: its text is the input, its digest the SHA-256 of the
//!   input, its body starts on a character boundary after the front matter, its kind is the
//!   folder's kind (or, in the generic folder, one the front matter names), its id matches the
//!   id grammar and its URI is `seneschal://knowledge/{kind}/{id}`, and its front matter is a
//!   mapping;
//! - the reading is deterministic: the same bytes give the same answer;
//! - the fast reader of front matter (`front_matter::simple_mapping`, which spares most files
//!   serde_yaml) reads whatever it accepts exactly as serde_yaml does: tried on the whole input
//!   as YAML and on the front matter of a Markdown input.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use seneschal::knowledge::kinds::{self, Kind, Kinds};
use seneschal::knowledge::front_matter;
use seneschal::knowledge::parse::{self, FileResult};
use seneschal::knowledge::{ID_GRAMMAR, MAX_FILE_BYTES, URI_PREFIX};

/// Where the file lives: (folder, the kind that folder belongs to).
const FOLDERS: &[(&str, Option<&str>)] = &[
    (".seneschal/knowledge", None),
    ("docs/adr", Some("adr")),
    ("docs/guides", Some("guide")),
    (".seneschal/skills/fuzz", Some("skill")),
];

/// File names: ones each kind reads an id from, ones it does not, and awkward spellings.
const NAMES: &[&str] = &[
    "0001-first.md",
    "SKILL.md",
    "getting-started.md",
    "notes.md",
    "-leading-dash.md",
    "0002-.md",
    "12345678901234567890-long-number.md",
    ".md",
    "ünïcode-name.md",
    "a b c.md",
];

fn kinds() -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| Kinds {
        all: kinds::distributed().to_vec(),
        findings: Vec::new(),
    })
}

fn id_grammar() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(ID_GRAMMAR).expect("the id grammar compiles"))
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", seneschal::text::hex(&sha2::Sha256::digest(bytes)))
}

/// Asserts that the fast reader, when it accepts `text`, agrees with serde_yaml.
fn fast_reader_agrees(text: &str) {
    if let Some(fast) = front_matter::simple_mapping(text) {
        let reference = serde_yaml::from_str::<serde_yaml::Value>(text)
            .ok()
            .and_then(|y| serde_json::to_value(&y).ok());
        assert_eq!(
            reference,
            Some(Value::Object(fast)),
            "the fast reader and serde_yaml disagree on {text:?}"
        );
    }
}

/// The answer in a form two readings can be compared by.
fn summary(r: &FileResult) -> (Option<(String, String, usize)>, Vec<String>) {
    (
        r.object
            .as_ref()
            .map(|o| (o.uri.clone(), o.digest.clone(), o.body_start)),
        r.findings.iter().map(|f| format!("{f:?}")).collect(),
    )
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (folder, kind_name) = FOLDERS[data[0] as usize % FOLDERS.len()];
    let name = NAMES[data[1] as usize % NAMES.len()];
    let bytes = &data[2..];
    let file = format!("{folder}/{name}");
    let all = kinds();
    let kind: Option<&Arc<Kind>> = kind_name.map(|k| all.get(k).expect("a distributed kind"));

    let result = parse::parse_bytes(&file, name, bytes.to_vec(), kind, all);

    // Exactly one of an object or findings.
    assert!(
        result.object.is_some() != !result.findings.is_empty(),
        "{file}: object {:?} with findings {:?}",
        result.object.as_ref().map(|o| &o.uri),
        result.findings
    );
    for f in &result.findings {
        assert_eq!(f.file, file, "{f:?}");
        assert!(!f.message.trim().is_empty(), "{f:?}");
        assert!(
            f.pointer.is_empty() || f.pointer.starts_with('/'),
            "{f:?}"
        );
    }
    let text = std::str::from_utf8(bytes);
    if text.is_err() || bytes.len() as u64 > MAX_FILE_BYTES {
        assert!(result.object.is_none(), "{file}: read bytes that are not text");
    }
    if let Some(o) = &result.object {
        let text = text.expect("an object's bytes are UTF-8");
        assert_eq!(o.text, text);
        assert_eq!(o.digest, sha256(bytes));
        assert_eq!(o.file, file);
        assert!(o.body_start <= text.len() && text.is_char_boundary(o.body_start));
        assert_eq!(o.body(), &text[o.body_start..]);
        match kind_name {
            Some(k) => assert_eq!(o.kind, k),
            None => assert!(all.get(&o.kind).is_some(), "unknown kind {}", o.kind),
        }
        assert!(id_grammar().is_match(&o.id), "id {:?}", o.id);
        assert_eq!(o.uri, format!("{URI_PREFIX}{}/{}", o.kind, o.id));
        assert!(o.front_matter.is_object(), "{:?}", o.front_matter);
        assert!(!o.title.is_empty());
        assert!(o.description.chars().count() <= 200 || o.front_matter.get("description").is_some());
    }

    // The fast reader of front matter.
    if let Ok(text) = text {
        fast_reader_agrees(text);
        if let Some(rest) = text.strip_prefix("---\n") {
            let end = rest.find("\n---").map_or(rest.len(), |i| i + 1);
            fast_reader_agrees(&rest[..end]);
        }
    }

    // Deterministic.
    let again = parse::parse_bytes(&file, name, bytes.to_vec(), kind, all);
    assert_eq!(summary(&result), summary(&again));
});
