//! Handlers of the `knowledge.*` group: the repository's ADRs, guides, skills and own kinds.
//!
//! Each call takes the index's current snapshot (refreshed from disk as needed, see
//! [`crate::knowledge::Index`]) and shapes an answer; the knowledge module does the work.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::typed;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::knowledge::{kinds, search, Snapshot, URI_PREFIX};
use crate::registry::types::{
    knowledge_check, knowledge_get, knowledge_kinds, knowledge_list, knowledge_search,
};
use crate::text::hex;

/// The version tag of list cursors.
const CURSOR_TAG: &str = "k2.";
/// How many hex digits of the URI's SHA-256 a cursor keeps.
const CURSOR_PRINT: usize = 16;

/// Checks a kind filter against the snapshot's kinds.
fn known_kind(snapshot: &Snapshot, kind: &Option<String>) -> Result<(), CapabilityError> {
    match kind {
        Some(k) if snapshot.kinds.get(k).is_none() => {
            let names: Vec<&str> = snapshot.kinds.all.iter().map(|k| k.name.as_str()).collect();
            Err(CapabilityError::invalid_input(format!(
                "no kind is named `{k}`; the kinds are: {}",
                names.join(", ")
            ))
            .at("/kind"))
        }
        _ => Ok(()),
    }
}

/// A URI's fingerprint: the head of its SHA-256, in hex.
fn fingerprint(uri: &str) -> String {
    let mut h = hex(&Sha256::digest(uri.as_bytes()));
    h.truncate(CURSOR_PRINT);
    h
}

/// An opaque cursor: the position of the page's last object and its URI's fingerprint. Not
/// the URI itself: an encoded URI would carry whatever its id holds past the disclosure, which
/// reads strings, not encodings.
fn encode_cursor(position: usize, uri: &str) -> String {
    format!("{CURSOR_TAG}{position}.{}", fingerprint(uri))
}

fn decode_cursor(cursor: &str) -> Result<(usize, String), CapabilityError> {
    let bad = || {
        CapabilityError::invalid_input(
            "`cursor` was not issued by knowledge.list; pass a next_cursor back unchanged",
        )
        .at("/cursor")
    };
    let rest = cursor.strip_prefix(CURSOR_TAG).ok_or_else(bad)?;
    let (position, print) = rest.split_once('.').ok_or_else(bad)?;
    let position: usize = position.parse().map_err(|_| bad())?;
    if print.len() != CURSOR_PRINT
        || !print
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad());
    }
    Ok((position, print.to_string()))
}

/// Where the page after a cursor starts in `uris`: after the object the cursor names, found by
/// its fingerprint (near its former position first); when that object is gone, after its
/// former position.
fn resume<'a>(
    uris: impl ExactSizeIterator<Item = &'a str> + Clone,
    (position, print): &(usize, String),
) -> usize {
    let n = uris.len();
    let near = uris
        .clone()
        .enumerate()
        .skip(position.saturating_sub(8))
        .take(17);
    match near
        .chain(uris.enumerate())
        .find(|(_, u)| fingerprint(u) == *print)
    {
        Some((i, _)) => i + 1,
        None => position.saturating_add(1).min(n),
    }
}

/// `knowledge.kinds`: the kinds and their schemas.
pub fn kinds(
    ctx: &Context,
    _input: knowledge_kinds::Input,
) -> Result<knowledge_kinds::Output, CapabilityError> {
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    typed(json!({ "kinds": kinds::describe(&snapshot.kinds) }))
}

/// `knowledge.list`: valid objects by URI, filtered, a page at a time.
pub fn list(
    ctx: &Context,
    input: knowledge_list::Input,
) -> Result<knowledge_list::Output, CapabilityError> {
    let after = input.cursor.as_deref().map(decode_cursor).transpose()?;
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    known_kind(&snapshot, &input.kind)?;
    let limit = input.limit.map_or(50, |l| l.get() as usize);
    let matching: Vec<_> = snapshot
        .objects
        .iter()
        .filter(|o| input.kind.as_ref().is_none_or(|k| &o.kind == k))
        .filter(|o| input.tag.as_ref().is_none_or(|t| o.tags.contains(t)))
        .filter(|o| {
            input
                .status
                .as_ref()
                .is_none_or(|s| o.status.as_ref() == Some(s))
        })
        .collect();
    let start = after.map_or(0, |a| resume(matching.iter().map(|o| o.uri.as_str()), &a));
    let page = &matching[start..(start + limit).min(matching.len())];
    let next = if start + page.len() < matching.len() {
        page.last()
            .map(|o| encode_cursor(start + page.len() - 1, &o.uri))
    } else {
        None
    };
    let objects: Vec<Value> = page
        .iter()
        .map(|o| {
            json!({
                "uri": o.uri, "kind": o.kind, "id": o.id, "title": o.title,
                "description": o.description, "tags": o.tags, "status": o.status, "file": o.file,
            })
        })
        .collect();
    typed(json!({ "objects": objects, "total": matching.len(), "next_cursor": next }))
}

/// `knowledge.get`: one object's front matter, body and digest.
pub fn get(
    ctx: &Context,
    input: knowledge_get::Input,
) -> Result<knowledge_get::Output, CapabilityError> {
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    let o = snapshot.get(&input.uri).ok_or_else(|| {
        let hint = if input.uri.starts_with(URI_PREFIX) {
            "knowledge.list shows the valid objects and knowledge.check the invalid files"
        } else {
            "knowledge URIs look like seneschal://knowledge/{kind}/{id}"
        };
        CapabilityError::not_found(format!(
            "no knowledge object has the URI `{}`; {hint}",
            input.uri
        ))
        .at("/uri")
    })?;
    typed(json!({
        "uri": o.uri, "kind": o.kind, "id": o.id, "title": o.title, "file": o.file,
        "mime_type": o.mime_type, "front_matter": o.front_matter, "body": o.body(), "digest": o.digest,
    }))
}

/// `knowledge.search`: BM25-ranked hits with snippets.
pub fn search(
    ctx: &Context,
    input: knowledge_search::Input,
) -> Result<knowledge_search::Output, CapabilityError> {
    let terms = search::SearchIndex::query_terms(&input.query).ok_or_else(|| {
        CapabilityError::invalid_input(
            "the query has no searchable word (only punctuation or stop words)",
        )
        .at("/query")
    })?;
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    known_kind(&snapshot, &input.kind)?;
    let limit = input.limit.map_or(10, |l| l.get() as usize);
    let objects = &snapshot.objects;
    let hits: Vec<Value> = snapshot
        .search()
        .search(
            &terms,
            |i| input.kind.as_ref().is_none_or(|k| &objects[i].kind == k),
            limit,
        )
        .into_iter()
        .map(|(i, score)| {
            let o = &objects[i];
            json!({
                "uri": o.uri, "kind": o.kind, "title": o.title,
                "score": (score * 1000.0).round() / 1000.0,
                "snippet": search::snippet(o, &terms),
            })
        })
        .collect();
    typed(json!({ "hits": hits }))
}

/// `knowledge.check`: every finding.
pub fn check(
    ctx: &Context,
    _input: knowledge_check::Input,
) -> Result<knowledge_check::Output, CapabilityError> {
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    typed(json!({
        "ok": snapshot.findings.is_empty(),
        "objects": snapshot.objects.len(),
        "findings": snapshot.findings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_forgeries() {
        let uris = [
            "seneschal://knowledge/adr/0001",
            "seneschal://knowledge/adr/0002",
            "seneschal://knowledge/guide/z",
        ];
        let cursor = encode_cursor(1, uris[1]);
        assert!(
            !cursor.contains("0002") && !cursor.contains(&hex(uris[1].as_bytes())),
            "{cursor}"
        );
        let decoded = decode_cursor(&cursor).unwrap();
        assert_eq!(resume(uris.iter().copied(), &decoded), 2);
        // The object moved: found by its fingerprint; gone: after its former position.
        assert_eq!(resume(uris[1..].iter().copied(), &decoded), 1);
        let gone = decode_cursor(&encode_cursor(1, "seneschal://knowledge/adr/0001b")).unwrap();
        assert_eq!(resume(uris.iter().copied(), &gone), 2);
        let far = decode_cursor(&encode_cursor(99, uris[0])).unwrap();
        assert_eq!(resume(uris.iter().copied(), &far), 1);
        let past = decode_cursor(&encode_cursor(99, "x")).unwrap();
        assert_eq!(resume(uris.iter().copied(), &past), 3);
        for bad in [
            "",
            "k2.",
            "k2.1",
            "k2.x.0123456789abcdef",
            "k2.1.0123",
            "k2.1.0123456789abcdeg",
            "k1.6869",
            "x.00",
        ] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }
}
