//! Contracts: compare two contract locks, classify every change, and gate releases on semver.
//!
//! A lock (`generated/contract.lock`) holds, per capability, hashed sections with their
//! material — surface, behaviour, errors, exposures, examples — and the hash of each
//! projection's rendering. [`diff`] classifies each change as breaking, minor, patch or wire
//! (a projection hash moved while every section stayed: the generator changed the wire).

use std::fmt;

use seneschal_model::codes::ErrorCode;
use serde_json::{Map, Value};

/// How much a change matters to a client, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Only a projection's rendering moved.
    Wire,
    /// Titles, descriptions, review sentences, examples.
    Patch,
    /// Additions a client can ignore.
    Minor,
    /// Removals, narrowed inputs, escalated effects: a client may break.
    Breaking,
}

impl Class {
    /// Its spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Wire => "wire",
            Class::Patch => "patch",
            Class::Minor => "minor",
            Class::Breaking => "breaking",
        }
    }

    /// The exit code of `contract diff` when this is the highest class found.
    pub fn exit_code(self) -> u8 {
        let [wire, patch, minor, breaking] = seneschal_model::codes::EXIT_CONTRACT_DIFF;
        match self {
            Class::Wire => wire,
            Class::Patch => patch,
            Class::Minor => minor,
            Class::Breaking => breaking,
        }
    }
}

/// Exit code of `contract check` when the version was bumped less than the change requires
/// (the codes table's).
pub use seneschal_model::codes::EXIT_GATE;

/// One classified change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its class.
    pub class: Class,
    /// The capability it concerns.
    pub capability: String,
    /// What changed, in a sentence.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.class.as_str(),
            self.capability,
            self.message
        )
    }
}

fn rank(effect: &str) -> u8 {
    match effect {
        "read" => 0,
        "process_state" => 1,
        _ => 2,
    }
}

fn disclosure_rank(d: &str) -> u8 {
    match d {
        "none" => 0,
        "metadata" => 1,
        _ => 2,
    }
}

fn props(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A schema without its prose (`description`, `title`, `examples`), recursively.
fn without_prose(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "description" | "title" | "examples"))
                .map(|(k, v)| (k.clone(), without_prose(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_prose).collect()),
        other => other.clone(),
    }
}

/// Whether `new` accepts every value `old` accepted, judged conservatively: an identical
/// schema, or an enum that only grew, or a bound that only loosened.
fn accepts_all_of(old: &Value, new: &Value) -> bool {
    let (o, n) = (without_prose(old), without_prose(new));
    if o == n {
        return true;
    }
    let (Some(om), Some(nm)) = (o.as_object(), n.as_object()) else {
        return false;
    };
    let keys: std::collections::BTreeSet<&String> = om.keys().chain(nm.keys()).collect();
    let accepted = keys.into_iter().all(|k| {
        let (a, b) = (om.get(k), nm.get(k));
        if a == b {
            return true;
        }
        match (k.as_str(), a, b) {
            ("enum", Some(Value::Array(a)), Some(Value::Array(b))) => {
                a.iter().all(|x| b.contains(x))
            }
            ("enum", Some(_), None) => true,
            ("maximum" | "maxLength" | "maxItems", Some(a), Some(b)) => b.as_f64() >= a.as_f64(),
            ("minimum" | "minLength" | "minItems", Some(a), Some(b)) => b.as_f64() <= a.as_f64(),
            (
                "maximum" | "maxLength" | "maxItems" | "minimum" | "minLength" | "minItems"
                | "pattern",
                Some(_),
                None,
            ) => true,
            ("default", _, _) => true,
            _ => false,
        }
    });
    accepted
}

fn value<'a>(entry: &'a Value, section: &str) -> &'a Value {
    &entry[section]["value"]
}

fn hash<'a>(entry: &'a Value, section: &str) -> &'a Value {
    &entry[section]["sha256"]
}

/// Classifies every difference between two locks, sorted by capability then class.
pub fn diff(old: &Value, new: &Value) -> Vec<Finding> {
    let empty = Map::new();
    let old_caps = old["capabilities"].as_object().unwrap_or(&empty);
    let new_caps = new["capabilities"].as_object().unwrap_or(&empty);
    let mut out = Vec::new();
    let mut push = |class: Class, id: &str, message: String| {
        out.push(Finding {
            class,
            capability: id.to_string(),
            message,
        });
    };
    for (id, o) in old_caps {
        let Some(n) = new_caps.get(id) else {
            let planned = value(o, "behaviour")["stability"] == "planned";
            let class = if planned {
                Class::Minor
            } else {
                Class::Breaking
            };
            push(class, id, "capability removed".into());
            continue;
        };
        diff_capability(id, o, n, &mut push);
    }
    for id in new_caps.keys().filter(|id| !old_caps.contains_key(*id)) {
        push(Class::Minor, id, "capability added".into());
    }
    out.sort_by(|a, b| {
        (&a.capability, std::cmp::Reverse(a.class), &a.message).cmp(&(
            &b.capability,
            std::cmp::Reverse(b.class),
            &b.message,
        ))
    });
    out
}

fn diff_capability(id: &str, o: &Value, n: &Value, push: &mut impl FnMut(Class, &str, String)) {
    let mut section_changed = false;
    // Surface: prose is patch; schemas are judged field by field.
    if hash(o, "surface") != hash(n, "surface") {
        section_changed = true;
        let (os, ns) = (value(o, "surface"), value(n, "surface"));
        for field in ["title", "description"] {
            if os[field] != ns[field] {
                push(Class::Patch, id, format!("{field} changed"));
            }
        }
        diff_input(id, &os["input"], &ns["input"], push);
        diff_output(id, &os["output"], &ns["output"], push);
    }
    if hash(o, "behaviour") != hash(n, "behaviour") {
        section_changed = true;
        let (ob, nb) = (value(o, "behaviour"), value(n, "behaviour"));
        let (oe, ne) = (
            ob["effect"].as_str().unwrap_or(""),
            nb["effect"].as_str().unwrap_or(""),
        );
        if rank(ne) > rank(oe) {
            push(
                Class::Breaking,
                id,
                format!("effect escalated from {oe} to {ne}"),
            );
        } else if rank(ne) < rank(oe) {
            push(
                Class::Minor,
                id,
                format!("effect relaxed from {oe} to {ne}"),
            );
        }
        // Absent means false, as in the manifest.
        let (oa, na) = (ob["additive"] == true, nb["additive"] == true);
        if oa && !na {
            push(
                Class::Breaking,
                id,
                "no longer additive: a call may now change existing files".to_string(),
            );
        } else if !oa && na {
            push(
                Class::Minor,
                id,
                "now additive: a call never changes an existing file".to_string(),
            );
        }
        // MCP task support (absent: never a task). Only `required` refuses a client: adding
        // it breaks the clients without the tasks extension; anything else is additive.
        let (ot, nt) = (
            ob["task"].as_str().unwrap_or("none"),
            nb["task"].as_str().unwrap_or("none"),
        );
        if ot != nt {
            push(
                if nt == "required" {
                    Class::Breaking
                } else {
                    Class::Minor
                },
                id,
                format!("MCP task support changed from {ot} to {nt}"),
            );
        }
        let (od, nd) = (
            ob["disclosure"].as_str().unwrap_or(""),
            nb["disclosure"].as_str().unwrap_or(""),
        );
        if disclosure_rank(nd) > disclosure_rank(od) {
            push(
                Class::Breaking,
                id,
                format!("disclosure widened from {od} to {nd}"),
            );
        } else if disclosure_rank(nd) < disclosure_rank(od) {
            push(
                Class::Minor,
                id,
                format!("disclosure narrowed from {od} to {nd}"),
            );
        }
        let (os, ns) = (
            ob["stability"].as_str().unwrap_or(""),
            nb["stability"].as_str().unwrap_or(""),
        );
        if os != ns {
            let class = if ns == "planned" {
                Class::Breaking
            } else {
                Class::Minor
            };
            push(class, id, format!("stability changed from {os} to {ns}"));
        }
        if ob["determinism"] != nb["determinism"] {
            push(
                Class::Minor,
                id,
                format!(
                    "determinism changed from {} to {}",
                    ob["determinism"], nb["determinism"]
                ),
            );
        }
    }
    if hash(o, "errors") != hash(n, "errors") {
        section_changed = true;
        let codes = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        // `not_approved` follows from the approval, itself derived from the effect and the
        // disclosure, whose changes are classed above: it is not classed a second time.
        let derived = ErrorCode::NotApproved.as_str();
        let (mut oc, mut nc) = (codes(value(o, "errors")), codes(value(n, "errors")));
        oc.retain(|c| c != derived);
        nc.retain(|c| c != derived);
        for c in oc.iter().filter(|c| !nc.contains(c)) {
            push(Class::Breaking, id, format!("error code `{c}` removed"));
        }
        for c in nc.iter().filter(|c| !oc.contains(c)) {
            push(Class::Minor, id, format!("error code `{c}` added"));
        }
    }
    if hash(o, "exposures") != hash(n, "exposures") {
        section_changed = true;
        let (ox, nx) = (value(o, "exposures"), value(n, "exposures"));
        for kind in ["mcp_tool", "mcp_resource", "http", "cli"] {
            match (&ox[kind], &nx[kind]) {
                (a, b) if a == b => {}
                (Value::Null, b) => push(Class::Minor, id, format!("{kind} exposure {b} added")),
                (a, Value::Null) => {
                    push(Class::Breaking, id, format!("{kind} exposure {a} removed"))
                }
                (a, b) => push(
                    Class::Breaking,
                    id,
                    format!("{kind} exposure renamed from {a} to {b}"),
                ),
            }
        }
        // The toolset decides which profiles list it: a move changes who sees it by default,
        // never what a call does.
        match (&ox["toolset"], &nx["toolset"]) {
            (a, b) if a == b => {}
            (Value::Null, b) => push(Class::Patch, id, format!("toolset {b} declared")),
            (a, b) => push(Class::Minor, id, format!("moved from toolset {a} to {b}")),
        }
    }
    if hash(o, "examples") != hash(n, "examples") {
        section_changed = true;
        push(
            Class::Patch,
            id,
            "examples or review sentence changed".into(),
        );
    }
    if !section_changed && o["projections"] != n["projections"] {
        let (op, np) = (&o["projections"], &n["projections"]);
        let moved: Vec<&str> = ["mcp_tool", "openapi", "cli", "reference"]
            .into_iter()
            .filter(|k| op[*k] != np[*k])
            .collect();
        push(
            Class::Wire,
            id,
            format!(
                "the generator changed the rendering of {} while every section stayed",
                moved.join(", ")
            ),
        );
    }
}

fn diff_input(id: &str, old: &Value, new: &Value, push: &mut impl FnMut(Class, &str, String)) {
    if old == new {
        return;
    }
    let (op, np) = (props(old), props(new));
    let (or, nr) = (required(old), required(new));
    for (name, schema) in &np {
        if !op.contains_key(name) {
            if nr.contains(name) {
                push(
                    Class::Breaking,
                    id,
                    format!("required input `{name}` added"),
                );
            } else {
                push(Class::Minor, id, format!("optional input `{name}` added"));
            }
        } else if nr.contains(name) && !or.contains(name) {
            push(
                Class::Breaking,
                id,
                format!("input `{name}` became required"),
            );
        } else if or.contains(name) && !nr.contains(name) {
            push(Class::Minor, id, format!("input `{name}` became optional"));
        }
        if let Some(before) = op.get(name) {
            if !accepts_all_of(before, schema) {
                push(Class::Breaking, id, format!("input `{name}` narrowed"));
            } else if without_prose(before) != without_prose(schema) {
                push(Class::Minor, id, format!("input `{name}` widened"));
            } else if before != schema {
                push(
                    Class::Patch,
                    id,
                    format!("input `{name}` documentation changed"),
                );
            }
        }
    }
    for name in op.keys().filter(|k| !np.contains_key(*k)) {
        push(Class::Breaking, id, format!("input `{name}` removed"));
    }
}

fn diff_output(id: &str, old: &Value, new: &Value, push: &mut impl FnMut(Class, &str, String)) {
    if old == new {
        return;
    }
    let (op, np) = (props(old), props(new));
    let (or, nr) = (required(old), required(new));
    for name in op.keys().filter(|k| !np.contains_key(*k)) {
        push(
            Class::Breaking,
            id,
            format!("output field `{name}` removed"),
        );
    }
    for name in np.keys().filter(|k| !op.contains_key(*k)) {
        push(Class::Minor, id, format!("output field `{name}` added"));
    }
    for name in np.keys().filter(|k| op.contains_key(*k)) {
        if or.contains(name) && !nr.contains(name) {
            push(
                Class::Breaking,
                id,
                format!("output field `{name}` is no longer always present"),
            );
        } else if without_prose(&op[name]) != without_prose(&np[name]) {
            push(
                Class::Breaking,
                id,
                format!("output field `{name}` changed"),
            );
        } else if op[name] != np[name] {
            push(
                Class::Patch,
                id,
                format!("output field `{name}` documentation changed"),
            );
        }
    }
}

/// The highest class among findings.
pub fn highest(findings: &[Finding]) -> Option<Class> {
    findings.iter().map(|f| f.class).max()
}

/// A semantic version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// Parses `MAJOR.MINOR.PATCH` (pre-release and build suffixes are ignored).
    pub fn parse(s: &str) -> Option<Version> {
        let core = s.trim().trim_start_matches('v').split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        Some(Version(parts.next()??, parts.next()??, parts.next()??))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The bump a change needs from `released`, aware of 0.x (where the minor number is the major).
pub fn required_bump(released: Version, class: Option<Class>) -> Option<&'static str> {
    let zero = released.0 == 0;
    match class {
        None => None,
        Some(Class::Breaking) => Some(if zero { "minor" } else { "major" }),
        Some(Class::Minor) => Some(if zero { "patch" } else { "minor" }),
        Some(Class::Patch | Class::Wire) => Some("patch"),
    }
}

/// The bump between two versions: `major`, `minor`, `patch`, or `None` when equal.
pub fn actual_bump(released: Version, current: Version) -> Result<Option<&'static str>, String> {
    if current < released {
        return Err(format!(
            "version {current} is older than the release {released}"
        ));
    }
    Ok(if current.0 > released.0 {
        Some("major")
    } else if current.1 > released.1 {
        Some("minor")
    } else if current.2 > released.2 {
        Some("patch")
    } else {
        None
    })
}

fn bump_rank(b: Option<&str>) -> u8 {
    match b {
        None => 0,
        Some("patch") => 1,
        Some("minor") => 2,
        _ => 3,
    }
}

/// Whether `current` is bumped enough over `released` for the findings.
pub fn gate(released: Version, current: Version, findings: &[Finding]) -> Result<String, String> {
    let need = required_bump(released, highest(findings));
    let have = actual_bump(released, current)?;
    let class = highest(findings).map(Class::as_str).unwrap_or("none");
    if bump_rank(have) >= bump_rank(need) {
        Ok(format!(
            "contract check passed: {class} change since v{released}; version {current} ({} bump, {} required)",
            have.unwrap_or("no"),
            need.unwrap_or("none")
        ))
    } else {
        Err(format!(
            "contract check failed: {class} change since v{released} requires a {} bump, but the version is {current} ({} bump): bump the version in Cargo.toml",
            need.unwrap_or("none"),
            have.unwrap_or("no")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_x_semver_rules() {
        let v = |s| Version::parse(s).unwrap();
        assert_eq!(
            required_bump(v("0.3.1"), Some(Class::Breaking)),
            Some("minor")
        );
        assert_eq!(
            required_bump(v("1.3.1"), Some(Class::Breaking)),
            Some("major")
        );
        assert_eq!(required_bump(v("0.3.1"), Some(Class::Minor)), Some("patch"));
        assert_eq!(required_bump(v("2.0.0"), Some(Class::Minor)), Some("minor"));
        assert_eq!(actual_bump(v("0.3.1"), v("0.4.0")).unwrap(), Some("minor"));
        assert!(actual_bump(v("0.3.1"), v("0.3.0")).is_err());
        let f = vec![Finding {
            class: Class::Breaking,
            capability: "a.b".into(),
            message: "x".into(),
        }];
        assert!(gate(v("0.3.1"), v("0.3.2"), &f).is_err());
        assert!(gate(v("0.3.1"), v("0.4.0"), &f).is_ok());
        assert!(gate(v("1.3.1"), v("1.4.0"), &f).is_err());
        assert!(gate(v("0.3.1"), v("0.3.1"), &[]).is_ok());
    }

    #[test]
    fn task_support_is_minor_unless_it_becomes_required() {
        let entry = |task: Option<&str>| {
            let mut b = serde_json::json!({"effect": "read"});
            if let Some(t) = task {
                b["task"] = t.into();
            }
            serde_json::json!({"behaviour": {"sha256": b.to_string(), "value": b}})
        };
        let class = |o: Option<&str>, n: Option<&str>| {
            let mut found = Vec::new();
            diff_capability("a.b", &entry(o), &entry(n), &mut |c, _, m: String| {
                found.push((c, m))
            });
            found
        };
        assert!(class(None, None).is_empty());
        let added = class(None, Some("optional"));
        assert_eq!(added.len(), 1, "{added:?}");
        assert_eq!(added[0].0, Class::Minor);
        assert!(added[0].1.contains("from none to optional"));
        assert_eq!(class(Some("optional"), None)[0].0, Class::Minor);
        assert_eq!(
            class(Some("optional"), Some("required"))[0].0,
            Class::Breaking
        );
        assert_eq!(class(None, Some("required"))[0].0, Class::Breaking);
        assert_eq!(class(Some("required"), Some("optional"))[0].0, Class::Minor);
    }

    #[test]
    fn enum_growth_is_not_narrowing() {
        let a = serde_json::json!({"type": "string", "enum": ["a", "b"]});
        let b = serde_json::json!({"type": "string", "enum": ["a", "b", "c"], "description": "x"});
        assert!(accepts_all_of(&a, &b));
        assert!(!accepts_all_of(&b, &a));
        let c = serde_json::json!({"type": "integer", "maximum": 10});
        let d = serde_json::json!({"type": "integer", "maximum": 5});
        assert!(!accepts_all_of(&c, &d));
        assert!(accepts_all_of(&d, &c));
    }
}
