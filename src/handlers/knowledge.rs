//! Handlers of the `knowledge.*` group: the repository's ADRs, guides, skills and own kinds.
//!
//! Each call takes the index's current snapshot (refreshed from disk as needed, see
//! [`crate::knowledge::Index`]) and shapes an answer; the knowledge module does the work.

use serde_json::{json, Value};

use super::typed;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::knowledge::{kinds, scan::hex, search, Snapshot, URI_PREFIX};
use crate::registry::types::{knowledge_check, knowledge_get, knowledge_kinds, knowledge_list, knowledge_search};

/// The version tag of list cursors.
const CURSOR_TAG: &str = "k1.";

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

/// An opaque cursor: the last URI of the page, tagged and hex-encoded.
fn encode_cursor(uri: &str) -> String {
    format!("{CURSOR_TAG}{}", hex(uri.as_bytes()))
}

fn decode_cursor(cursor: &str) -> Result<String, CapabilityError> {
    let bad = || {
        CapabilityError::invalid_input("`cursor` was not issued by knowledge.list; pass a next_cursor back unchanged")
            .at("/cursor")
    };
    let digits = cursor.strip_prefix(CURSOR_TAG).ok_or_else(bad)?;
    if digits.len() % 2 != 0 || !digits.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(bad());
    }
    let bytes: Vec<u8> = (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("checked hex"))
        .collect();
    let uri = String::from_utf8(bytes).map_err(|_| bad())?;
    if !uri.starts_with(URI_PREFIX) {
        return Err(bad());
    }
    Ok(uri)
}

/// `knowledge.kinds`: the kinds and their schemas.
pub fn kinds(ctx: &Context, _input: knowledge_kinds::Input) -> Result<knowledge_kinds::Output, CapabilityError> {
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    typed(json!({ "kinds": kinds::describe(&snapshot.kinds) }))
}

/// `knowledge.list`: valid objects by URI, filtered, a page at a time.
pub fn list(ctx: &Context, input: knowledge_list::Input) -> Result<knowledge_list::Output, CapabilityError> {
    let after = input.cursor.as_deref().map(decode_cursor).transpose()?;
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    known_kind(&snapshot, &input.kind)?;
    let limit = input.limit.map_or(50, |l| l.get() as usize);
    let matching: Vec<_> = snapshot
        .objects
        .iter()
        .filter(|o| input.kind.as_ref().is_none_or(|k| &o.kind == k))
        .filter(|o| input.tag.as_ref().is_none_or(|t| o.tags.contains(t)))
        .filter(|o| input.status.as_ref().is_none_or(|s| o.status.as_ref() == Some(s)))
        .collect();
    let start = after.map_or(0, |a| matching.partition_point(|o| o.uri.as_str() <= a.as_str()));
    let page = &matching[start..(start + limit).min(matching.len())];
    let next = if start + page.len() < matching.len() {
        page.last().map(|o| encode_cursor(&o.uri))
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
pub fn get(ctx: &Context, input: knowledge_get::Input) -> Result<knowledge_get::Output, CapabilityError> {
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    let o = snapshot.get(&input.uri).ok_or_else(|| {
        let hint = if input.uri.starts_with(URI_PREFIX) {
            "knowledge.list shows the valid objects and knowledge.check the invalid files"
        } else {
            "knowledge URIs look like seneschal://knowledge/{kind}/{id}"
        };
        CapabilityError::not_found(format!("no knowledge object has the URI `{}`; {hint}", input.uri)).at("/uri")
    })?;
    typed(json!({
        "uri": o.uri, "kind": o.kind, "id": o.id, "title": o.title, "file": o.file,
        "mime_type": o.mime_type, "front_matter": o.front_matter, "body": o.body(), "digest": o.digest,
    }))
}

/// `knowledge.search`: BM25-ranked hits with snippets.
pub fn search(ctx: &Context, input: knowledge_search::Input) -> Result<knowledge_search::Output, CapabilityError> {
    let terms = search::SearchIndex::query_terms(&input.query).ok_or_else(|| {
        CapabilityError::invalid_input("the query has no searchable word (only punctuation or stop words)").at("/query")
    })?;
    let snapshot = ctx.knowledge.snapshot(&ctx.repo);
    known_kind(&snapshot, &input.kind)?;
    let limit = input.limit.map_or(10, |l| l.get() as usize);
    let objects = &snapshot.objects;
    let hits: Vec<Value> = snapshot
        .search()
        .search(&terms, |i| input.kind.as_ref().is_none_or(|k| &objects[i].kind == k), limit)
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
pub fn check(ctx: &Context, _input: knowledge_check::Input) -> Result<knowledge_check::Output, CapabilityError> {
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
        let uri = "seneschal://knowledge/adr/0001";
        assert_eq!(decode_cursor(&encode_cursor(uri)).unwrap(), uri);
        for bad in ["", "k1.", "k1.zz", "k1.abc", "x.00", "k1.6869"] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }
}
