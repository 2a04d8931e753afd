//! Output for people: a capability's JSON answer rendered as text and tables.
//!
//! Generic over the output schema: scalars become `key: value` lines, arrays of objects
//! become aligned tables, nested objects are indented. Machines get JSON instead (`--json`).

use serde_json::Value;

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("—".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            Some(a.iter().filter_map(scalar).collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

/// Renders an array of objects as an aligned table with one column per scalar field.
pub fn table(rows: &[Value]) -> String {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        if let Some(obj) = row.as_object() {
            for (k, v) in obj {
                if scalar(v).is_some() && !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
        }
    }
    // Put an identifying column first.
    for key in ["id", "name", "uri", "path"].iter().rev() {
        if let Some(pos) = columns.iter().position(|c| c == key) {
            let c = columns.remove(pos);
            columns.insert(0, c);
        }
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| r.get(c).and_then(scalar).unwrap_or_else(|| "—".into()))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, fields: &[String]| {
        let parts: Vec<String> = fields
            .iter()
            .zip(&widths)
            .map(|(f, w)| format!("{f:<w$}"))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(
        &mut out,
        &columns.iter().map(|c| c.to_uppercase()).collect::<Vec<_>>(),
    );
    for row in &cells {
        line(&mut out, row);
    }
    out
}

/// Renders any JSON answer for a terminal.
pub fn human(value: &Value) -> String {
    if let Some(obj) = value.as_object() {
        if let (1, Some(Value::Array(rows))) = (obj.len(), obj.values().next()) {
            if !rows.is_empty() && rows.iter().all(Value::is_object) {
                return table(rows);
            }
        }
    }
    let mut out = String::new();
    render(value, 0, &mut out);
    out
}

fn render(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(obj) => {
            for (k, v) in obj {
                if let Some(s) = scalar(v) {
                    if s.contains('\n') {
                        out.push_str(&format!("{pad}{k}:\n"));
                        for l in s.lines() {
                            out.push_str(&format!("{pad}  {l}\n"));
                        }
                    } else {
                        out.push_str(&format!("{pad}{k}: {s}\n"));
                    }
                } else if let Value::Array(rows) = v {
                    out.push_str(&format!(
                        "{pad}{k}: ({} item{})\n",
                        rows.len(),
                        if rows.len() == 1 { "" } else { "s" }
                    ));
                    if rows.iter().all(Value::is_object) {
                        for l in table(rows).lines() {
                            out.push_str(&format!("{pad}  {l}\n"));
                        }
                    } else {
                        for r in rows {
                            render(r, indent + 2, out);
                        }
                    }
                } else {
                    out.push_str(&format!("{pad}{k}:\n"));
                    render(v, indent + 2, out);
                }
            }
        }
        other => out.push_str(&format!(
            "{pad}{}\n",
            scalar(other).unwrap_or_else(|| other.to_string())
        )),
    }
}
