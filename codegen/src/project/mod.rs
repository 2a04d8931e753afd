//! Projections: each a pure, deterministic function of the typed registry, one file each.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::policy::Effect;

pub mod cli_reference;
pub mod cockpit;
pub mod contract;
pub mod mcp_tools;
pub mod openapi;
pub mod reference;
pub mod rust;
pub mod server_card;

/// The sentence every generated file carries, naming its generator and how to remake it.
pub const GENERATED_BY: &str =
    "seneschal-codegen from capabilities/*.yaml; do not edit by hand: run `cargo build` or `cargo run -- generate`";

/// Pretty JSON with a final newline; keys are sorted because serde_json's map is a BTreeMap.
pub fn json_text(value: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON values serialize");
    s.push('\n');
    s
}

/// A JSON document assembled from owned values and values borrowed from parts rendered once
/// (a tool, an operation), so that one profile's document costs its serialization only.
/// Serializes exactly as the `Value` it stands for (maps sorted by key, like serde_json's).
pub enum Part<'a> {
    /// An owned value.
    Owned(Value),
    /// A value rendered once and shared by every profile.
    Borrowed(&'a Value),
    /// An object.
    Map(BTreeMap<String, Part<'a>>),
    /// An array.
    List(Vec<Part<'a>>),
    /// A member of the array or object around it that only the profiles serving one of these
    /// toolsets (a mask of `Toolset::bit`s) list; the committed document lists every member.
    Select(u8, Box<Part<'a>>),
    /// How many of these masks (one per thing counted) meet a profile's toolsets; the committed
    /// document counts them all.
    Count(Vec<u8>),
}

impl<'a> Part<'a> {
    /// The object `value` (an object) as a map of owned parts, to which borrowed ones are added.
    pub fn object(value: Value) -> BTreeMap<String, Part<'a>> {
        match value {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k, Part::Owned(v))).collect(),
            _ => panic!("Part::object takes an object"),
        }
    }
}

impl Serialize for Part<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Part::Owned(v) => v.serialize(s),
            Part::Borrowed(v) => v.serialize(s),
            Part::Map(m) => m.serialize(s),
            Part::List(l) => l.serialize(s),
            Part::Select(_, p) => p.serialize(s),
            Part::Count(masks) => masks.len().serialize(s),
        }
    }
}

impl Part<'_> {
    /// Whether a [`Part::Select`] or [`Part::Count`] is in this part, itself included.
    fn varies(&self) -> bool {
        match self {
            Part::Owned(_) | Part::Borrowed(_) => false,
            Part::Map(m) => m.values().any(Part::varies),
            Part::List(l) => l.iter().any(Part::varies),
            Part::Select(..) | Part::Count(_) => true,
        }
    }
}

/// A piece of a [`template`]: the build-time twin of `seneschal_model::toolset::Seg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// Bytes every profile's document has.
    Lit(String),
    /// An array or object whose members belong to toolsets.
    Items {
        open: String,
        sep: String,
        close: String,
        empty: String,
        items: Vec<(u8, String)>,
    },
    /// How many of these masks meet a profile's toolsets.
    Count(Vec<u8>),
}

/// Every toolset's bit: the mask of a member that belongs to no toolset in particular.
const EVERY: u8 = u8::MAX;

/// The document `part` stands for as a template of [`Seg`]s, in the layout of
/// [`part_text`] (`pretty`, without its final newline) or of `serde_json::to_string`: rendered
/// for every toolset, it is byte for byte the document's text.
pub fn template(part: &Part, pretty: bool) -> Vec<Seg> {
    let mut t = Template {
        segs: Vec::new(),
        lit: String::new(),
        pretty,
    };
    t.part(part, 0);
    t.flush();
    t.segs
}

struct Template {
    segs: Vec<Seg>,
    lit: String,
    pretty: bool,
}

impl Template {
    fn flush(&mut self) {
        if !self.lit.is_empty() {
            self.segs.push(Seg::Lit(std::mem::take(&mut self.lit)));
        }
    }

    fn indent(&self, depth: usize) -> String {
        if self.pretty {
            format!("\n{}", "  ".repeat(depth))
        } else {
            String::new()
        }
    }

    /// The text of a part without a [`Part::Select`] or [`Part::Count`], at `depth`.
    fn text(&self, part: &Part, depth: usize) -> String {
        assert!(
            !part.varies(),
            "a selected member holds no selection of its own"
        );
        if self.pretty {
            let s = serde_json::to_string_pretty(part).expect("JSON parts serialize");
            s.replace('\n', &self.indent(depth))
        } else {
            serde_json::to_string(part).expect("JSON parts serialize")
        }
    }

    fn part(&mut self, part: &Part, depth: usize) {
        if !part.varies() {
            let text = self.text(part, depth);
            self.lit.push_str(&text);
            return;
        }
        let colon = if self.pretty { ": " } else { ":" };
        let members: Vec<(Option<String>, &Part)> = match part {
            Part::Map(m) => m
                .iter()
                .map(|(k, v)| (Some(serde_json::to_string(k).expect("keys serialize")), v))
                .collect(),
            Part::List(l) => l.iter().map(|v| (None, v)).collect(),
            Part::Count(masks) => {
                self.flush();
                self.segs.push(Seg::Count(masks.clone()));
                return;
            }
            Part::Select(..) => panic!("a selected part stands in an array or object"),
            Part::Owned(_) | Part::Borrowed(_) => unreachable!("these never vary"),
        };
        let (open, close) = match part {
            Part::Map(_) => ("{", "}"),
            _ => ("[", "]"),
        };
        let inner = self.indent(depth + 1);
        let outer = self.indent(depth);
        if members.iter().any(|(_, v)| matches!(v, Part::Select(..))) {
            let items = members
                .iter()
                .map(|(k, v)| {
                    let (mask, v) = match v {
                        Part::Select(mask, v) => (*mask, &**v),
                        v => (EVERY, *v),
                    };
                    let key = k
                        .as_ref()
                        .map(|k| format!("{k}{colon}"))
                        .unwrap_or_default();
                    (mask, format!("{key}{}", self.text(v, depth + 1)))
                })
                .collect();
            self.flush();
            self.segs.push(Seg::Items {
                open: format!("{open}{inner}"),
                sep: format!(",{inner}"),
                close: format!("{outer}{close}"),
                empty: format!("{open}{close}"),
                items,
            });
            return;
        }
        self.lit.push_str(open);
        for (i, (k, v)) in members.iter().enumerate() {
            self.lit.push_str(if i == 0 { "" } else { "," });
            self.lit.push_str(&inner);
            if let Some(k) = k {
                self.lit.push_str(k);
                self.lit.push_str(colon);
            }
            self.part(v, depth + 1);
        }
        self.lit.push_str(&outer);
        self.lit.push_str(close);
    }
}

/// `segs` for every toolset: the document's text, by the binary's own renderer
/// (`seneschal_model::toolset::render`).
pub fn render_all(segs: &[Seg]) -> String {
    use seneschal_model::toolset::{render, Seg as Borrowed, Toolsets};
    let items: Vec<Vec<(u8, &str)>> = segs
        .iter()
        .map(|seg| match seg {
            Seg::Items { items, .. } => items.iter().map(|(m, t)| (*m, t.as_str())).collect(),
            _ => Vec::new(),
        })
        .collect();
    let borrowed: Vec<Borrowed<'_>> = segs
        .iter()
        .zip(&items)
        .map(|(seg, items)| match seg {
            Seg::Lit(s) => Borrowed::Lit(s),
            Seg::Items {
                open,
                sep,
                close,
                empty,
                ..
            } => Borrowed::Items {
                open,
                sep,
                close,
                empty,
                items,
            },
            Seg::Count(masks) => Borrowed::Count(masks),
        })
        .collect();
    render(&borrowed, Toolsets::ALL)
}

/// `segs` as a Rust expression of type `seneschal_model::toolset::Template`.
pub fn template_rust(segs: &[Seg]) -> String {
    let mut out = String::from("&[");
    for seg in segs {
        match seg {
            Seg::Lit(s) => out.push_str(&format!("Seg::Lit({s:?}),")),
            Seg::Items {
                open,
                sep,
                close,
                empty,
                items,
            } => {
                out.push_str(&format!(
                    "Seg::Items {{ open: {open:?}, sep: {sep:?}, close: {close:?}, empty: {empty:?}, items: &["
                ));
                for (mask, text) in items {
                    out.push_str(&format!("({mask}, {text:?}),"));
                }
                out.push_str("] },");
            }
            Seg::Count(masks) => out.push_str(&format!("Seg::Count(&{masks:?}),")),
        }
    }
    out.push(']');
    out
}

/// [`json_text`] of a [`Part`]: the same bytes as for the value it stands for.
pub fn part_text(part: &Part) -> String {
    let mut s = serde_json::to_string_pretty(part).expect("JSON parts serialize");
    s.push('\n');
    s
}

/// The effects a process started with `--allow-effects max` executes, weakest first.
pub fn allowed_effects(max: Effect) -> Vec<&'static str> {
    Effect::ALL
        .iter()
        .filter(|e| **e <= max)
        .map(|e| e.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_serializes_as_the_value_it_stands_for() {
        let shared = json!({"b": [1, {"z": null, "a": "x"}], "a": {}});
        let value = json!({"top": [shared.clone(), shared.clone()], "empty": [], "k": 1});
        let mut map = Part::object(json!({"k": 1, "empty": []}));
        map.insert(
            "top".into(),
            Part::List(vec![Part::Borrowed(&shared), Part::Owned(shared.clone())]),
        );
        assert_eq!(part_text(&Part::Map(map)), json_text(&value));
    }

    #[test]
    fn a_template_for_every_toolset_is_the_document_in_either_layout() {
        let shared = json!({"b": [1, {"z": null, "a": "x"}], "a": {}});
        let mut inner = Part::object(json!({"k": [1, 2], "e": {}}));
        inner.insert(
            "sel".into(),
            Part::Map(
                [
                    (
                        "x".to_string(),
                        Part::Select(1, Box::new(Part::Borrowed(&shared))),
                    ),
                    ("y".to_string(), Part::Owned(json!(3))),
                ]
                .into_iter()
                .collect(),
            ),
        );
        inner.insert("n".into(), Part::Count(vec![1, 2, 4]));
        let doc = Part::Map(
            [
                ("inner".to_string(), Part::Map(inner)),
                (
                    "list".to_string(),
                    Part::List(vec![
                        Part::Select(2, Box::new(Part::Owned(json!({"q": [1]})))),
                        Part::Select(4, Box::new(Part::Owned(json!("s")))),
                    ]),
                ),
                ("empty".to_string(), Part::List(vec![])),
            ]
            .into_iter()
            .collect(),
        );
        let pretty = part_text(&doc);
        assert_eq!(render_all(&template(&doc, true)) + "\n", pretty);
        let compact = serde_json::to_string(&doc).unwrap();
        assert_eq!(render_all(&template(&doc, false)), compact);
        // The selection is in its own segments: the array's, the object's and the count.
        let t = template(&doc, false);
        assert_eq!(
            t.iter().filter(|s| !matches!(s, Seg::Lit(_))).count(),
            3,
            "{t:?}"
        );
    }
}
