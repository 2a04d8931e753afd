//! MADR 3–4: optional YAML front matter of MADR's own keys (`status`, `date`,
//! `decision-makers`, ...) over a `# ` heading, or a bare heading. A file no other format
//! claims is read as MADR.

use serde_json::Value;

use super::{Format, Record, Shape};

/// MADR 3–4: front matter of MADR's own keys, or a bare heading.
pub struct Madr;

impl Format for Madr {
    fn name(&self) -> &'static str {
        "madr"
    }

    /// Front matter, surely; any other file, last of all.
    fn claim(&self, s: &Shape) -> Option<u8> {
        Some(if s.had_front_matter { 10 } else { 80 })
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        let mut fm = r.own();
        if let Some(s) = &r.status {
            fm.insert("status".into(), Value::String(s.clone()));
        }
        if !fm.is_empty() {
            let yaml = serde_yaml::to_string(&fm)
                .map_err(|e| format!("the front matter cannot be written as YAML: {e}"))?;
            out.push_str("---\n");
            out.push_str(&yaml);
            out.push_str("---\n");
        }
        out.push_str(&format!("# {}\n\n", r.title));
        out.push_str(r.body);
        Ok(())
    }
}
