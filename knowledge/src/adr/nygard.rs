//! Michael Nygard's template as adr-tools writes it: `# 1. Title`, a `Date:` line, a
//! `## Status` section whose links say what supersedes or amends what.

use super::{heading_number, Format, Record, Shape};

/// Michael Nygard's template as adr-tools writes it.
pub struct Nygard;

impl Format for Nygard {
    fn name(&self) -> &'static str {
        "nygard"
    }

    /// A `Date:` line or a `## Status` section.
    fn claim(&self, s: &Shape) -> Option<u8> {
        (s.date_line || s.status_section).then_some(60)
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        match r.number {
            Some(n) => out.push_str(&format!("# {n}. {}\n\n", r.title)),
            None => out.push_str(&format!("# {}\n\n", r.title)),
        }
        if let Some(d) = &r.date {
            out.push_str(&format!("Date: {d}\n\n"));
        }
        out.push_str("## Status\n\n");
        out.push_str(r.status.as_deref().unwrap_or("Proposed"));
        out.push_str("\n\n");
        let mut links = r.links("supersedes", "Supersedes");
        links.extend(r.links("amends", "Amends"));
        links.extend(r.links("amended_by", "Amended by"));
        if !r.is_superseded() {
            links.extend(r.links("superseded_by", "Superseded by"));
        }
        for l in links {
            out.push_str(&l);
            out.push_str("\n\n");
        }
        out.push_str(r.body);
        Ok(())
    }

    fn capitalises_status(&self) -> bool {
        true
    }

    /// adr-tools' own label: `5. Title`.
    fn link_label(&self, id: &str, title: &str) -> Option<String> {
        Some(format!("{}. {title}", heading_number(id)?))
    }

    fn dates_new(&self) -> bool {
        true
    }

    fn dates_updates(&self) -> bool {
        true
    }
}
