//! Handlers of the repository writes: `knowledge.create`, `knowledge.update`,
//! `knowledge.delete`, and `audit.list` over their audit log.
//!
//! A write is prepared (kind, id, path, front matter checked against the kind's schema,
//! digest compared) and then either returned as a plan (`dry_run`) or applied through
//! [`crate::store::transact`], which holds the repository lock for the whole preparation and
//! application, so the digest compared is the digest replaced, and records the write's intent
//! in the audit log before it applies it.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::context::Call;
use crate::registry::types::{audit_list, knowledge_create, knowledge_delete, knowledge_update};
use crate::store::{self, Effects};
use seneschal_access::confine;
use seneschal_access::error::CapabilityError;
use seneschal_knowledge::adr;
use seneschal_knowledge::kinds::{Dialect, Format, Kind};
use seneschal_knowledge::{escape_pointer, glob, Snapshot, URI_PREFIX};

/// A write ready to apply.
struct Prepared {
    uri: String,
    file: String,
    /// The new bytes; `None` deletes the file.
    bytes: Option<Vec<u8>>,
    effects: Effects,
}

fn review(id: &str, p: &Prepared) -> String {
    let d = crate::registry::find(id)
        .expect("a registered capability")
        .1;
    let target = p.uri.strip_prefix(URI_PREFIX).unwrap_or(&p.uri);
    d.render_review(&json!({ "count": 1, "target": target, "file": p.file }))
}

/// The answer of a prepared write in the output type of the capability module `$m` (the
/// three writes have one answer shape, and so three generated types of one shape).
macro_rules! answer {
    ($m:ident) => {
        |id: &str, p: &Prepared, applied: bool, dry_run: bool| $m::Output {
            applied,
            dry_run,
            replayed: false,
            uri: p.uri.clone(),
            file: p.file.clone(),
            digest: p.bytes.as_deref().map(seneschal_access::keep::shown_digest),
            plan: $m::OutputPlan {
                create: p.effects.create.clone(),
                change: p.effects.change.clone(),
                delete: p.effects.delete.clone(),
                counts: $m::OutputPlanCounts {
                    create: p.effects.create.len() as u64,
                    change: p.effects.change.len() as u64,
                    delete: p.effects.delete.len() as u64,
                },
            },
            review: review(id, p),
        }
    };
}

/// Runs a prepared write through [`super::plan_or_apply`], on a snapshot of the knowledge
/// taken for the call (under the lock when it applies).
fn run<T: Serialize + DeserializeOwned>(
    ctx: &Call,
    id: &str,
    raw: Value,
    dry_run: bool,
    answer: impl Fn(&str, &Prepared, bool, bool) -> T,
    prepare: impl Fn(&Snapshot) -> Result<Prepared, CapabilityError>,
) -> Result<T, CapabilityError> {
    super::plan_or_apply(ctx, id, &raw, dry_run, |dry| {
        let p = prepare(&ctx.snapshot())?;
        let answer = answer(id, &p, !dry, dry);
        Ok(store::Plan {
            writes: store::tree_writes(&ctx.repo, vec![(p.file, p.bytes)])?,
            modes: Vec::new(),
            effects: p.effects,
            answer,
        })
    })
}

/// The front matter checked against the kind's schema (`kind` is seneschal's, not the schema's).
fn validate(kind: &Kind, front: &Value) -> Result<(), CapabilityError> {
    let Value::Object(fields) = front else {
        return Err(
            CapabilityError::invalid_input("front_matter must be an object").at("/front_matter"),
        );
    };
    let mut checked = fields.clone();
    if let Some(k) = checked.remove("kind") {
        if k.as_str() != Some(kind.name.as_str()) {
            return Err(CapabilityError::invalid_input(format!(
                "front_matter says kind {k} but the object is of kind `{}`",
                kind.name
            ))
            .at("/front_matter/kind"));
        }
    }
    let checked = Value::Object(checked);
    let mut errors = kind.validator.iter_errors(&checked);
    if let Some(e) = errors.next() {
        let ptr = format!("/front_matter{}", e.instance_path().as_str());
        let more = errors.count();
        return Err(CapabilityError::invalid_input(format!(
            "{ptr}: {e} (schema of kind `{}`){}",
            kind.name,
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        ))
        .at(ptr));
    }
    Ok(())
}

/// The file's text: YAML front matter between `---` lines, then the body.
fn compose(kind: &Kind, front: &Value, body: &str) -> Result<Vec<u8>, CapabilityError> {
    let yaml = serde_yaml::to_string(front).map_err(|e| {
        CapabilityError::invalid_input(format!("front_matter cannot be written as YAML: {e}"))
            .at("/front_matter")
    })?;
    let text = match kind.format {
        Format::Markdown => format!("---\n{yaml}---\n{body}"),
        Format::Yaml if body.is_empty() => yaml.clone(),
        Format::Yaml => {
            return Err(CapabilityError::invalid_input(format!(
                "kind `{}` is stored as YAML: it has no body",
                kind.name
            ))
            .at("/body"))
        }
    };
    // What is written must read back as the same front matter.
    let back: serde_yaml::Value = serde_yaml::from_str(&yaml).map_err(|e| {
        CapabilityError::internal(format!("written front matter does not read back: {e}"))
    })?;
    if serde_json::to_value(&back).ok().as_ref() != Some(front) {
        return Err(CapabilityError::invalid_input(
            "front_matter does not survive YAML (a value would read back differently)",
        )
        .at("/front_matter"));
    }
    // The index does not read a file over the cap: a write must not make an object vanish.
    if text.len() as u64 > seneschal_knowledge::MAX_FILE_BYTES {
        return Err(CapabilityError::invalid_input(format!(
            "the file would be {} bytes, over the {} byte (1 MiB) cap for knowledge objects",
            text.len(),
            seneschal_knowledge::MAX_FILE_BYTES
        ))
        .at(if body.is_empty() {
            "/front_matter"
        } else {
            "/body"
        }));
    }
    Ok(text.into_bytes())
}

/// Whether the repository-relative `file` is one a glob (with `*` within one segment) lists.
fn glob_lists(glob: &str, file: &str) -> bool {
    let (g, f): (Vec<&str>, Vec<&str>) = (glob.split('/').collect(), file.split('/').collect());
    g.len() == f.len()
        && g.iter().zip(&f).all(|(g, f)| match g.split_once('*') {
            Some((pre, post)) => {
                f.len() >= pre.len() + post.len() && f.starts_with(pre) && f.ends_with(post)
            }
            None => g == f,
        })
}

/// The glob a new object of `kind` is written under: the one most of the kind's objects
/// live under (a repository that keeps its skills in `.agents/skills` gets its new one there),
/// else the kind's first.
fn house_glob<'k>(snapshot: &Snapshot, kind: &'k Kind) -> Option<&'k str> {
    let count = |g: &str| {
        snapshot
            .objects
            .iter()
            .filter(|o| o.kind == kind.name && glob_lists(g, &o.file))
            .count()
    };
    let mut best: Option<(&str, usize)> = None;
    for g in &kind.files {
        let n = count(g);
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((g.as_str(), n));
        }
    }
    best.map(|(g, _)| g)
}

/// The repository-relative file of a new object: the house glob with its `*` filled.
fn new_file(
    kind: &Kind,
    glob: Option<&str>,
    id: &str,
    front: &Value,
) -> Result<String, CapabilityError> {
    let glob = glob.ok_or_else(|| {
        CapabilityError::refused(format!(
            "kind `{}` declares no files to write into",
            kind.name
        ))
    })?;
    let segments: Vec<&str> = glob.split('/').collect();
    let star = segments.iter().position(|s| s.contains('*'));
    let Some(at) = star.filter(|_| glob.matches('*').count() == 1) else {
        return Err(CapabilityError::refused(format!(
            "kind `{}` has no single `*` in its first glob `{glob}`; seneschal cannot name a new file",
            kind.name
        )));
    };
    let last = at + 1 == segments.len();
    let title = front
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut stems = vec![id.to_string()];
    if last && !seneschal_knowledge::adr::slug(title).is_empty() {
        stems.push(format!("{id}-{}", seneschal_knowledge::adr::slug(title)));
    }
    for stem in stems {
        let mut segs: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        segs[at] = segs[at].replacen('*', &stem, 1);
        let name = segs.last().expect("non-empty").clone();
        let named = kind.id_from_name(&name);
        if kind.id_pattern.is_none()
            || named.as_deref() == Some(id)
            || (kind.id.field.is_some() && named.is_none() && !last)
        {
            return Ok(segs.join("/"));
        }
    }
    Err(CapabilityError::invalid_input(format!(
        "no file name for id `{id}` matches the file pattern of kind `{}`",
        kind.name
    ))
    .at("/id"))
}

/// Confines a path and checks that the kind's globs claim it.
fn confine_to_kind(
    root: &Path,
    kind: &Kind,
    rel: &str,
    field: &str,
) -> Result<(), CapabilityError> {
    confine::confine(root, rel, field)?;
    let segs: Vec<&str> = rel.split('/').collect();
    let claimed = kind.files.iter().any(|g| {
        let gs: Vec<&str> = g.split('/').collect();
        gs.len() == segs.len()
            && gs
                .iter()
                .zip(&segs)
                .all(|(p, n)| glob::segment_matches(p, n))
    });
    if !claimed {
        return Err(CapabilityError::refused(format!(
            "`{rel}` is outside the folders of kind `{}` ({})",
            kind.name,
            kind.files.join(", ")
        ))
        .at(field));
    }
    Ok(())
}

fn kind_of<'s>(
    snapshot: &'s Snapshot,
    name: &str,
    field: &str,
) -> Result<&'s std::sync::Arc<Kind>, CapabilityError> {
    snapshot.kinds.get(name).ok_or_else(|| {
        let names: Vec<&str> = snapshot.kinds.all.iter().map(|k| k.name.as_str()).collect();
        CapabilityError::invalid_input(format!(
            "no kind is named `{name}`; the kinds are: {}",
            names.join(", ")
        ))
        .at(field)
    })
}

/// The next free number among a kind's numeric ids, zero-padded to four digits.
fn next_number(snapshot: &Snapshot, kind: &str) -> String {
    let max = snapshot
        .objects
        .iter()
        .filter(|o| o.kind == kind)
        .filter_map(|o| o.id.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("{:04}", max + 1)
}

/// The plan of a new record whose text the knowledge layer wrote in its repository's format.
fn create_planned(
    ctx: &Call,
    snapshot: &Snapshot,
    kind: &Kind,
    p: adr::Planned,
) -> Result<Prepared, CapabilityError> {
    let uri = format!("{URI_PREFIX}{}/{}", kind.name, p.id);
    if let Some(o) = snapshot.get(&uri) {
        return Err(
            CapabilityError::conflict(format!("`{uri}` already exists ({})", o.file))
                .at("/id")
                .with_data(json!({ "current_digest": o.digest, "file": o.file })),
        );
    }
    confine_to_kind(&ctx.repo, kind, &p.file, "/id")?;
    if store::read(&ctx.repo, &p.file)?.is_some() {
        return Err(CapabilityError::conflict(format!(
            "`{}` already exists (it is not a valid object; knowledge.check says why)",
            p.file
        ))
        .at("/id"));
    }
    capped(&p.text)?;
    Ok(Prepared {
        uri,
        effects: Effects {
            create: vec![p.file.clone()],
            ..Effects::default()
        },
        file: p.file,
        bytes: Some(p.text.into_bytes()),
    })
}

/// Refuses a text over the cap for knowledge objects (the index would not read it).
fn capped(text: &str) -> Result<(), CapabilityError> {
    if text.len() as u64 > seneschal_knowledge::MAX_FILE_BYTES {
        return Err(CapabilityError::invalid_input(format!(
            "the file would be {} bytes, over the {} byte (1 MiB) cap for knowledge objects",
            text.len(),
            seneschal_knowledge::MAX_FILE_BYTES
        ))
        .at("/body"));
    }
    Ok(())
}

/// `knowledge.create`: a new object in its kind's folder.
pub fn create(
    ctx: &Call,
    input: knowledge_create::Input,
) -> Result<knowledge_create::Output, CapabilityError> {
    let raw = serde_json::to_value(&input).map_err(|e| CapabilityError::internal(e.to_string()))?;
    let dry_run = input.dry_run.unwrap_or(false);
    let raw_in = raw.clone();
    run(
        ctx,
        "knowledge.create",
        raw,
        dry_run,
        answer!(knowledge_create),
        |snapshot| {
            let kind = kind_of(snapshot, &input.kind, "/kind")?;
            let mut front = raw_in
                .get("front_matter")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let input_id = raw_in.get("id").and_then(Value::as_str).map(str::to_string);
            // An ADR goes in the format, folder and numbering of the repository's own records.
            if kind.dialect == Some(Dialect::Adr) {
                let body = raw_in
                    .get("body")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let planned = adr::plan_create(
                    &snapshot.objects,
                    kind,
                    input_id.as_deref(),
                    &front,
                    body,
                    &adr::today(),
                )
                .map_err(|(at, m)| CapabilityError::invalid_input(m).at(at))?;
                if let Some(p) = planned {
                    return create_planned(ctx, snapshot, kind, p);
                }
            }
            let field_id = kind
                .id
                .field
                .as_ref()
                .and_then(|f| front.get(f))
                .and_then(Value::as_str)
                .map(str::to_string);
            let id = match (&input_id, &field_id) {
                (Some(a), Some(b)) if a != b => {
                    let f = kind.id.field.as_deref().unwrap_or_default();
                    return Err(CapabilityError::invalid_input(format!(
                        "`id` is `{a}` but the front matter's `{f}` is `{b}`; make them agree"
                    ))
                    .at(format!("/front_matter/{}", escape_pointer(f))));
                }
                (Some(a), _) => a.clone(),
                (None, Some(b)) => b.clone(),
                (None, None)
                    if kind
                        .id
                        .file_pattern
                        .as_deref()
                        .is_some_and(|p| p.contains("[0-9]")) =>
                {
                    next_number(snapshot, &kind.name)
                }
                (None, None) => {
                    let title = front
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let s = seneschal_knowledge::adr::slug(title);
                    if s.is_empty() {
                        return Err(CapabilityError::invalid_input(
                            "give an `id`, or a front-matter title to make one from",
                        )
                        .at("/id"));
                    }
                    s
                }
            };
            if let (Some(f), None) = (&kind.id.field, &field_id) {
                if kind.schema["properties"].get(f).is_some() {
                    front[f.as_str()] = json!(id);
                }
            }
            validate(kind, &front)?;
            let uri = format!("{URI_PREFIX}{}/{id}", kind.name);
            if let Some(o) = snapshot.get(&uri) {
                return Err(CapabilityError::conflict(format!(
                    "`{uri}` already exists ({})",
                    o.file
                ))
                .at("/id")
                .with_data(json!({ "current_digest": o.digest, "file": o.file })));
            }
            let file = new_file(kind, house_glob(snapshot, kind), &id, &front)?;
            confine_to_kind(&ctx.repo, kind, &file, "/id")?;
            if store::read(&ctx.repo, &file)?.is_some() {
                return Err(CapabilityError::conflict(format!(
                    "`{file}` already exists (it is not a valid object; knowledge.check says why)"
                ))
                .at("/id"));
            }
            let bytes = compose(
                kind,
                &front,
                raw_in
                    .get("body")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            )?;
            Ok(Prepared {
                uri,
                effects: Effects {
                    create: vec![file.clone()],
                    ..Effects::default()
                },
                file,
                bytes: Some(bytes),
            })
        },
    )
}

/// Finds the object at `uri` and checks its file still has `expected`.
fn current<'s>(
    ctx: &Call,
    snapshot: &'s Snapshot,
    uri: &str,
    expected: &str,
) -> Result<
    (
        &'s std::sync::Arc<seneschal_knowledge::Object>,
        &'s std::sync::Arc<Kind>,
    ),
    CapabilityError,
> {
    let o = snapshot.get(uri).ok_or_else(|| {
        CapabilityError::not_found(format!(
            "no knowledge object has the URI `{uri}`; knowledge.list shows the objects"
        ))
        .at("/uri")
    })?;
    let kind = kind_of(snapshot, &o.kind, "/uri")?;
    confine_to_kind(&ctx.repo, kind, &o.file, "/uri").or_else(|e| {
        if o.file.starts_with(".seneschal/knowledge/") {
            confine::confine(&ctx.repo, &o.file, "/uri").map(|_| ())
        } else {
            Err(e)
        }
    })?;
    let bytes = store::read(&ctx.repo, &o.file)?
        .ok_or_else(|| CapabilityError::not_found(format!("`{}` vanished", o.file)).at("/uri"))?;
    let now = seneschal_access::keep::shown_digest(&bytes);
    if now != expected {
        return Err(CapabilityError::conflict(format!(
            "`{uri}` changed since it was read: its digest is now {now}; read it again (knowledge.get) and retry"
        ))
        .at("/expected_digest")
        .with_data(json!({ "current_digest": now })));
    }
    Ok((o, kind))
}

/// `knowledge.update`: new front matter, body or both, on the digest the caller read.
pub fn update(
    ctx: &Call,
    input: knowledge_update::Input,
) -> Result<knowledge_update::Output, CapabilityError> {
    let raw = serde_json::to_value(&input).map_err(|e| CapabilityError::internal(e.to_string()))?;
    let dry_run = input.dry_run.unwrap_or(false);
    let raw_in = raw.clone();
    run(
        ctx,
        "knowledge.update",
        raw,
        dry_run,
        answer!(knowledge_update),
        |snapshot| {
            let (o, kind) = current(ctx, snapshot, &input.uri, &input.expected_digest)?;
            let front = raw_in
                .get("front_matter")
                .cloned()
                .unwrap_or_else(|| o.front_matter.clone());
            // A record in another tool's format keeps its format.
            let kept = match kind.dialect {
                Some(Dialect::Adr) => adr::plan_update(
                    &snapshot.objects,
                    o,
                    &front,
                    raw_in.get("body").and_then(Value::as_str),
                )
                .map_err(|(at, m)| CapabilityError::invalid_input(m).at(at))?,
                _ => None,
            };
            if let Some(text) = kept {
                capped(&text)?;
                return Ok(Prepared {
                    uri: o.uri.clone(),
                    file: o.file.clone(),
                    effects: Effects {
                        change: vec![o.file.clone()],
                        ..Effects::default()
                    },
                    bytes: Some(text.into_bytes()),
                });
            }
            validate(kind, &front)?;
            if let Some(f) = &kind.id.field {
                if let Some(v) = front.get(f) {
                    if v.as_str() != Some(o.id.as_str()) {
                        return Err(CapabilityError::invalid_input(format!(
                            "`{f}` is the id (`{}`); an update cannot change it",
                            o.id
                        ))
                        .at(format!("/front_matter/{}", escape_pointer(f))));
                    }
                }
            }
            let body = raw_in
                .get("body")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| o.body().to_string());
            let bytes = compose(kind, &front, &body)?;
            Ok(Prepared {
                uri: o.uri.clone(),
                file: o.file.clone(),
                effects: Effects {
                    change: vec![o.file.clone()],
                    ..Effects::default()
                },
                bytes: Some(bytes),
            })
        },
    )
}

/// `knowledge.delete`: removes the object's file, on the digest the caller read.
pub fn delete(
    ctx: &Call,
    input: knowledge_delete::Input,
) -> Result<knowledge_delete::Output, CapabilityError> {
    let raw = serde_json::to_value(&input).map_err(|e| CapabilityError::internal(e.to_string()))?;
    let dry_run = input.dry_run.unwrap_or(false);
    run(
        ctx,
        "knowledge.delete",
        raw,
        dry_run,
        answer!(knowledge_delete),
        |snapshot| {
            let (o, _) = current(ctx, snapshot, &input.uri, &input.expected_digest)?;
            Ok(Prepared {
                uri: o.uri.clone(),
                file: o.file.clone(),
                effects: Effects {
                    delete: vec![o.file.clone()],
                    ..Effects::default()
                },
                bytes: None,
            })
        },
    )
}

/// `audit.list`: the audit log, a page at a time.
pub fn audit_list(
    ctx: &Call,
    input: audit_list::Input,
) -> Result<audit_list::Output, CapabilityError> {
    let all = store::records(&ctx.repo)?;
    // The schema bounds `after` to 0..=2^53 - 1 (typed i64 for that range).
    let after = u64::try_from(input.after.unwrap_or(0)).unwrap_or(0);
    let limit = input.limit.map_or(100, |l| l.get() as usize);
    let page: Vec<Map<String, Value>> = all
        .iter()
        .filter(|r| r["seq"].as_u64().unwrap_or(0) > after)
        .take(limit)
        .map(|r| match r {
            Value::Object(record) => Ok(record.clone()),
            _ => Err(CapabilityError::internal(
                "an audit record is not a JSON object",
            )),
        })
        .collect::<Result<_, _>>()?;
    let last = page
        .last()
        .and_then(|r| r.get("seq"))
        .and_then(Value::as_u64);
    let more = last.is_some_and(|l| all.iter().any(|r| r["seq"].as_u64().unwrap_or(0) > l));
    Ok(audit_list::Output {
        records: page,
        total: all.len() as u64,
        next_after: if more {
            last.and_then(|l| i64::try_from(l).ok())
        } else {
            None
        },
    })
}
