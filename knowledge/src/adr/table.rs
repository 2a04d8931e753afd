//! A metadata table under the title (`| Status | Implemented |`, `| Date | … |`), as the
//! NATS architecture records keep it; written back with the keys, header and heading of the
//! repository's newest record.

use super::{value_text, Format, Record, Shape};

/// A metadata table under the title.
pub struct Table;

impl Format for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    /// A table of metadata before the first section.
    fn claim(&self, s: &Shape) -> Option<u8> {
        s.table.then_some(40)
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        out.push_str(&format!("# {}\n\n", r.numbered_heading()));
        let layout = r.layout;
        let keys: Vec<String> = if layout.table_keys.is_empty() {
            ["Date", "Author", "Status", "Tags"]
                .map(String::from)
                .to_vec()
        } else {
            layout.table_keys.clone()
        };
        let front = r.front;
        let mut rows: Vec<(String, String)> = Vec::new();
        for k in &keys {
            let value = match k.to_ascii_lowercase().as_str() {
                "date" => r.date.clone(),
                "status" => r.status.clone(),
                "author" | "authors" | "author(s)" => front
                    .get("author")
                    .or_else(|| front.get("authors"))
                    .or_else(|| front.get("deciders"))
                    .map(value_text),
                "tags" => front.get("tags").map(value_text),
                "updates" | "refines" | "amends" => {
                    let v = r.ids("amends");
                    (!v.is_empty()).then(|| {
                        v.iter()
                            .map(|i| format!("ADR-{i}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                }
                other => front.get(other).map(value_text),
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                rows.push((k.clone(), v.replace('|', "\\|")));
            }
        }
        if !keys.iter().any(|k| k.eq_ignore_ascii_case("updates")) {
            let v = r.ids("amends");
            if !v.is_empty() {
                let v = v.iter().map(|i| format!("ADR-{i}")).collect::<Vec<_>>();
                rows.push(("Updates".into(), v.join(", ")));
            }
        }
        let header = match layout.table_header.as_slice() {
            [a, b, ..] => (a.clone(), b.clone()),
            _ => ("Metadata".to_string(), "Value".to_string()),
        };
        let w0 = rows
            .iter()
            .map(|r| r.0.chars().count())
            .chain([header.0.chars().count()])
            .max()
            .unwrap_or(0);
        let w1 = rows
            .iter()
            .map(|r| r.1.chars().count())
            .chain([header.1.chars().count()])
            .max()
            .unwrap_or(0);
        let row = |a: &str, b: &str| {
            format!(
                "| {a}{} | {b}{} |\n",
                " ".repeat(w0 - a.chars().count()),
                " ".repeat(w1 - b.chars().count())
            )
        };
        out.push_str(&row(&header.0, &header.1));
        out.push_str(&format!(
            "|{}|{}|\n",
            "-".repeat(w0 + 2),
            "-".repeat(w1 + 2)
        ));
        for (k, v) in &rows {
            out.push_str(&row(k, v));
        }
        out.push('\n');
        out.push_str(r.body);
        Ok(())
    }

    fn capitalises_status(&self) -> bool {
        true
    }
}
