//! log4brains: `- Status:` bullets under the `# ` heading, in date-named files
//! (`20201016-use-the-slug.md`) whose name without `.md` is the record's id.

use serde_json::{Map, Value};

use super::{is_date_named, slug, Format, Record, Shape};

/// log4brains: `- Status:` bullets, date-named files.
pub struct Log4brains;

impl Format for Log4brains {
    fn name(&self) -> &'static str {
        "log4brains"
    }

    /// `- ` bullets, or bullets of any marker in a date-named file, surely; a date-named file
    /// without bullets, after the formats that read sections.
    fn claim(&self, s: &Shape) -> Option<u8> {
        let dated = is_date_named(s.file_name);
        if s.bullet.is_some() && (s.bullet == Some('-') || dated) {
            Some(20)
        } else if dated {
            Some(70)
        } else {
            None
        }
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        out.push_str(&format!("# {}\n\n", r.title));
        out.push_str(&r.bullets('-'));
        out.push_str(r.body);
        Ok(())
    }

    /// The id asked for, else the record's date and the slug of its title
    /// (`20201016-use-the-slug`).
    fn own_name(
        &self,
        asked: Option<&str>,
        fields: &Map<String, Value>,
        today: &str,
    ) -> Option<(String, String)> {
        if let Some(id) = asked {
            return Some((id.to_string(), id.to_string()));
        }
        let title = fields
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let s = slug(title);
        let date = fields
            .get("date")
            .and_then(Value::as_str)
            .unwrap_or(today)
            .replace('-', "");
        let stem = if s.is_empty() {
            date
        } else {
            format!("{date}-{s}")
        };
        Some((stem.clone(), stem))
    }
}
