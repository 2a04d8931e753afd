//! Handlers of the `knowledge.*` group: the repository's ADRs, guides, skills and own kinds.
//!
//! Each call takes the index's current snapshot (refreshed from disk as needed, see
//! [`seneschal_knowledge::Index`]) and shapes an answer; the knowledge module does the work.

use sha2::{Digest, Sha256};

use super::same_variants;
use crate::context::Call;
use crate::registry::types::{
    knowledge_check, knowledge_get, knowledge_kinds, knowledge_list, knowledge_search,
    knowledge_summarize,
};
use seneschal_access::error::CapabilityError;
use seneschal_access::text::hex;
use seneschal_knowledge::kinds::{Format, Origin};
use seneschal_knowledge::{search, Snapshot, URI_PREFIX};

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
    ctx: &Call,
    _input: knowledge_kinds::Input,
) -> Result<knowledge_kinds::Output, CapabilityError> {
    let snapshot = ctx.snapshot();
    let mut all: Vec<_> = snapshot.kinds.all.iter().collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let kinds = all
        .into_iter()
        .map(|k| {
            let schema = k.schema.as_object().cloned().ok_or_else(|| {
                CapabilityError::internal(format!(
                    "the schema of kind `{}` is not an object",
                    k.name
                ))
            })?;
            Ok(knowledge_kinds::OutputKindsItem {
                name: k.name.clone(),
                description: k.description.clone(),
                origin: k.origin.into(),
                files: k.files.clone(),
                format: k.format.into(),
                mime_type: k.format.mime_type().to_string(),
                id: knowledge_kinds::OutputKindsItemId {
                    field: k.id.field.clone(),
                    file_pattern: k.id.file_pattern.clone(),
                },
                uri_template: k.uri_template(),
                schema_file: k.schema_file.clone(),
                schema,
            })
        })
        .collect::<Result<_, CapabilityError>>()?;
    Ok(knowledge_kinds::Output { kinds })
}

same_variants!(Origin => knowledge_kinds::OutputKindsItemOrigin { Distributed, Repository });
same_variants!(Format => knowledge_kinds::OutputKindsItemFormat { Markdown, Yaml });

/// `knowledge.list`: valid objects by URI, filtered, a page at a time.
pub fn list(
    ctx: &Call,
    input: knowledge_list::Input,
) -> Result<knowledge_list::Output, CapabilityError> {
    let after = input.cursor.as_deref().map(decode_cursor).transpose()?;
    let snapshot = ctx.snapshot();
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
                .is_none_or(|s| o.status.as_ref().is_some_and(|o| o.eq_ignore_ascii_case(s)))
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
    let objects = page
        .iter()
        .map(|o| knowledge_list::OutputObjectsItem {
            uri: o.uri.clone(),
            kind: o.kind.clone(),
            id: o.id.clone(),
            title: o.title.clone(),
            description: o.description.clone(),
            tags: o.tags.clone(),
            status: o.status.clone(),
            file: o.file.clone(),
        })
        .collect();
    Ok(knowledge_list::Output {
        objects,
        total: matching.len() as u64,
        next_cursor: next,
    })
}

/// `knowledge.get`: one object's front matter, body and digest.
/// The object named `uri`, or `not_found` at `/uri` with a hint.
fn object<'a>(
    snapshot: &'a Snapshot,
    uri: &str,
) -> Result<&'a std::sync::Arc<seneschal_knowledge::Object>, CapabilityError> {
    snapshot.get(uri).ok_or_else(|| {
        let hint = if uri.starts_with(URI_PREFIX) {
            "knowledge.list shows the valid objects and knowledge.check the invalid files"
        } else {
            "knowledge URIs look like seneschal://knowledge/{kind}/{id}"
        };
        CapabilityError::not_found(format!("no knowledge object has the URI `{uri}`; {hint}"))
            .at("/uri")
    })
}

pub fn get(
    ctx: &Call,
    input: knowledge_get::Input,
) -> Result<knowledge_get::Output, CapabilityError> {
    let snapshot = ctx.snapshot();
    let o = object(&snapshot, &input.uri)?;
    Ok(knowledge_get::Output {
        uri: o.uri.clone(),
        kind: o.kind.clone(),
        id: o.id.clone(),
        title: o.title.clone(),
        file: o.file.clone(),
        mime_type: o.mime_type.clone(),
        front_matter: o.front_matter.as_object().cloned().ok_or_else(|| {
            CapabilityError::internal(format!("the front matter of `{}` is not an object", o.uri))
        })?,
        body: o.body().to_string(),
        digest: o.digest.as_str().try_into().map_err(|e| {
            CapabilityError::internal(format!("the digest of `{}` is malformed: {e}", o.uri))
        })?,
    })
}

/// `knowledge.search`: BM25-ranked hits with snippets.
pub fn search(
    ctx: &Call,
    input: knowledge_search::Input,
) -> Result<knowledge_search::Output, CapabilityError> {
    let terms = search::SearchIndex::query_terms(&input.query).ok_or_else(|| {
        CapabilityError::invalid_input(
            "the query has no searchable word (only punctuation or stop words)",
        )
        .at("/query")
    })?;
    let snapshot = ctx.snapshot();
    known_kind(&snapshot, &input.kind)?;
    let limit = input.limit.map_or(10, |l| l.get() as usize);
    let objects = &snapshot.objects;
    let hits = snapshot
        .search()
        .search(
            &terms,
            |i| input.kind.as_ref().is_none_or(|k| &objects[i].kind == k),
            limit,
        )
        .into_iter()
        .map(|(i, score)| {
            let o = &objects[i];
            knowledge_search::OutputHitsItem {
                uri: o.uri.clone(),
                kind: o.kind.clone(),
                title: o.title.clone(),
                score: (score * 1000.0).round() / 1000.0,
                snippet: search::snippet(o, &terms),
            }
        })
        .collect();
    Ok(knowledge_search::Output { hits })
}

/// `knowledge.check`: every finding.
pub fn check(
    ctx: &Call,
    _input: knowledge_check::Input,
) -> Result<knowledge_check::Output, CapabilityError> {
    let snapshot = ctx.snapshot();
    let mut adr_folders: Vec<String> = snapshot
        .kinds
        .all
        .iter()
        .filter(|k| k.dialect == Some(seneschal_knowledge::kinds::Dialect::Adr))
        .flat_map(|k| k.files.iter())
        .map(|g| g.rsplit_once('/').map_or("", |(d, _)| d).to_string())
        .collect();
    adr_folders.dedup();
    Ok(knowledge_check::Output {
        ok: snapshot.findings.is_empty(),
        objects: snapshot.objects.len() as u64,
        adr_folders,
        findings: snapshot
            .findings
            .iter()
            .map(|f| knowledge_check::OutputFindingsItem {
                file: f.file.clone(),
                pointer: f.pointer.clone(),
                message: f.message.clone(),
            })
            .collect(),
    })
}

/// `knowledge.summarize`: the object's text, sent to the client's model with
/// `sampling/createMessage` (through [`crate::interact`]; the link redacts what leaves), and
/// the model's answer.
pub fn summarize(
    ctx: &Call,
    input: knowledge_summarize::Input,
) -> Result<knowledge_summarize::Output, CapabilityError> {
    use crate::interact::{Sampled, Sampling};
    let snapshot = ctx.snapshot();
    let o = object(&snapshot, &input.uri)?;
    let request = Sampling {
        system: "You summarize engineering documents of a software repository for its \
                 developers, plainly and briefly."
            .to_string(),
        text: format!(
            "Summarize this {} (\"{}\", {}) in at most three sentences: what it decides or \
             teaches, and why. Answer with the summary only.\n\n{}",
            o.kind,
            o.title,
            o.file,
            o.body()
        ),
        max_tokens: u64::try_from(input.max_tokens).unwrap_or_default(),
    };
    let refuse = |why: String| {
        CapabilityError::unsupported(format!(
            "knowledge.summarize asks the client's model (MCP sampling), and {why}; read the object with knowledge.get instead"
        ))
    };
    match ctx.peer.sample("summary", &request) {
        Sampled::Text {
            text,
            model,
            stop_reason,
        } => Ok(knowledge_summarize::Output {
            uri: o.uri.clone(),
            summary: text,
            model: model.unwrap_or_else(|| "(unnamed)".to_string()),
            stop_reason,
        }),
        Sampled::Deferred => Err(CapabilityError::unsupported(
            "the summary waits for the client's model: the call is made again with its answer",
        )),
        Sampled::Unavailable(why) | Sampled::Failed(why) => Err(refuse(why)),
    }
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
