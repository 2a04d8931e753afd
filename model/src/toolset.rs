//! Toolsets and profiles: which capabilities a process serves.
//!
//! Every manifest names the one [`Toolset`] its capability belongs to; `mcp` and `serve` take
//! `--toolsets` ([`Toolsets::parse`]) beside `--allow-effects`, and the two make the process's
//! [`Profile`]. [`Toolsets::DEFAULT`] is what an agent working in someone's repository needs:
//! everything but [`Toolset::Introspection`] (seneschal describing itself), which is opt-in.
//!
//! The surfaces computed at build time are [`Template`]s: the bytes of a document with each
//! per-toolset part marked, so that a process renders its own profile's document from
//! pre-derived bytes alone, and the document of every toolset is byte-identical to the
//! committed one.

use crate::policy::{Class, Effect};

/// The inputs the writes take alike, each with the sentence that explains it: the MCP server
/// says them once, in its `instructions`, and a tool entry publishes their schemas, every
/// bound kept, without a description of their own (OpenAPI, the reference and `--help` keep
/// the manifest's).
pub const SHARED_INPUTS: [(&str, &str); 3] = [
    ("dry_run", "plans (and diffs) the write and changes nothing"),
    (
        "idempotency_key",
        "is a retry key: a repeat within 24 h returns the first answer",
    ),
    (
        "expected_digest",
        "is the `digest` a read answered (files.read, knowledge.get); a stale one is a conflict",
    ),
];

pub use crate::policy::Toolset;

/// A set of toolsets (a bit mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Toolsets(pub u8);

impl Toolsets {
    /// Every toolset.
    pub const ALL: Toolsets = Toolsets((1 << Toolset::ALL.len()) - 1);
    /// The default of `mcp` and `serve`: every toolset but introspection.
    pub const DEFAULT: Toolsets = Toolsets(Toolsets::ALL.0 & !Toolset::Introspection.bit());

    /// Whether `t` is in the set.
    pub const fn contains(self, t: Toolset) -> bool {
        self.0 & t.bit() != 0
    }

    /// Whether any toolset of `mask` is in the set.
    pub const fn meets(self, mask: u8) -> bool {
        self.0 & mask != 0
    }

    /// The toolsets of the set, in [`Toolset::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Toolset> {
        Toolset::ALL.into_iter().filter(move |t| self.contains(*t))
    }

    /// The `--toolsets` spelling: `all`, `default`, or the names joined by commas.
    pub fn spelling(self) -> String {
        match self {
            Toolsets::ALL => "all".to_string(),
            Toolsets::DEFAULT => "default".to_string(),
            _ => self
                .iter()
                .map(Toolset::as_str)
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// Parses `--toolsets`: names separated by commas, where `all` is every toolset and
    /// `default` is [`Toolsets::DEFAULT`] (so `default,introspection` adds one). An unknown
    /// name, or an empty list, is an error that names the toolsets there are.
    pub fn parse(s: &str) -> Result<Toolsets, String> {
        let mut set = 0u8;
        for name in s.split(',').map(str::trim) {
            set |= match name {
                "all" => Toolsets::ALL.0,
                "default" => Toolsets::DEFAULT.0,
                _ => match Toolset::parse(name) {
                    Some(t) => t.bit(),
                    None => {
                        let known: Vec<&str> = Toolset::ALL.iter().map(|t| t.as_str()).collect();
                        return Err(format!(
                            "unknown toolset `{name}`: the toolsets are {}, `default` (all but introspection) and `all`",
                            known.join(", ")
                        ));
                    }
                },
            };
        }
        Ok(Toolsets(set))
    }
}

/// What a process serves: the strongest effect it executes (`--allow-effects`) and the
/// toolsets it was given (`--toolsets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Profile {
    /// The strongest effect executed.
    pub max_effect: Effect,
    /// The toolsets served.
    pub toolsets: Toolsets,
}

impl Profile {
    /// Every effect and every toolset: what the committed documents describe.
    pub const FULL: Profile = Profile {
        max_effect: Effect::RepositoryWrite,
        toolsets: Toolsets::ALL,
    };

    /// The profile of every toolset up to `max_effect`.
    /// Whether a process of this profile executes the capability of `class`: served up to
    /// its effect, and in one of its toolsets. The one test of a capability against a profile.
    pub fn serves(&self, class: &Class) -> bool {
        class.served_by(self.max_effect) && self.toolsets.contains(class.toolset)
    }

    pub const fn of_effect(max_effect: Effect) -> Profile {
        Profile {
            max_effect,
            toolsets: Toolsets::ALL,
        }
    }
}

/// One piece of a [`Template`] (borrowed for `'a`: the binary's are `'static`, the build's
/// borrow what it rendered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    /// Bytes every profile's document has.
    Lit(&'a str),
    /// A JSON array or object whose members belong to toolsets: `open`, the members whose
    /// mask meets the profile's toolsets joined by `sep`, `close`; `empty` when none is left.
    Items {
        /// From the opening bracket through the first member's indentation.
        open: &'a str,
        /// Between two members.
        sep: &'a str,
        /// From after the last member through the closing bracket.
        close: &'a str,
        /// The whole array or object when no member is left.
        empty: &'a str,
        /// Each member with the toolsets it belongs to (a mask of [`Toolset::bit`]s).
        items: &'a [(u8, &'a str)],
    },
    /// A number: how many of these masks meet the profile's toolsets.
    Count(&'a [u8]),
}

/// A document computed at build time with its per-toolset parts marked.
pub type Template = &'static [Seg<'static>];

/// The document of `template` for the toolsets `of`.
pub fn render(template: &[Seg<'_>], of: Toolsets) -> String {
    let mut out = String::new();
    for seg in template {
        match seg {
            Seg::Lit(s) => out.push_str(s),
            Seg::Items {
                open,
                sep,
                close,
                empty,
                items,
            } => {
                let mut kept = items.iter().filter(|(m, _)| of.meets(*m)).peekable();
                if kept.peek().is_none() {
                    out.push_str(empty);
                    continue;
                }
                out.push_str(open);
                for (i, (_, item)) in kept.enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    out.push_str(item);
                }
                out.push_str(close);
            }
            Seg::Count(masks) => {
                let n = masks.iter().filter(|m| of.meets(**m)).count();
                out.push_str(&n.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolsets_parse_names_default_and_all_and_refuse_the_unknown() {
        assert_eq!(Toolsets::parse("all"), Ok(Toolsets::ALL));
        assert_eq!(Toolsets::parse("default"), Ok(Toolsets::DEFAULT));
        assert!(!Toolsets::DEFAULT.contains(Toolset::Introspection));
        assert_eq!(Toolsets::parse("default,introspection"), Ok(Toolsets::ALL));
        let two = Toolsets::parse("files, history").unwrap();
        assert_eq!(two.spelling(), "files,history");
        assert!(two.contains(Toolset::History) && !two.contains(Toolset::Git));
        let err = Toolsets::parse("files,repos").unwrap_err();
        assert!(
            err.contains("`repos`") && err.contains("introspection"),
            "{err}"
        );
        assert!(Toolsets::parse("").is_err());
        for t in Toolset::ALL {
            assert_eq!(Toolset::parse(t.as_str()), Some(t));
        }
    }

    #[test]
    fn a_template_keeps_the_members_of_the_toolsets_it_is_given() {
        const T: Template = &[
            Seg::Lit("{\"n\":"),
            Seg::Count(&[1, 2, 4]),
            Seg::Lit(",\"l\":"),
            Seg::Items {
                open: "[",
                sep: ",",
                close: "]",
                empty: "[]",
                items: &[(1, "\"a\""), (2, "\"b\""), (4, "\"c\"")],
            },
            Seg::Lit("}"),
        ];
        assert_eq!(
            render(T, Toolsets(7)),
            "{\"n\":3,\"l\":[\"a\",\"b\",\"c\"]}"
        );
        assert_eq!(render(T, Toolsets(6)), "{\"n\":2,\"l\":[\"b\",\"c\"]}");
        assert_eq!(render(T, Toolsets(8)), "{\"n\":0,\"l\":[]}");
    }
}
