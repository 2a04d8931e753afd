//! The Cosmos SDK template (`# ADR 001: Title`, `## Changelog` with dated entries,
//! `## Status`), also kept by Tendermint, CometBFT and Celestia.

use super::{Format, Record, Shape};

/// The Cosmos SDK template.
pub struct Cosmos;

impl Format for Cosmos {
    fn name(&self) -> &'static str {
        "cosmos"
    }

    /// A `## Status` section without a `Date:` line, under a changelog or an `ADR` heading.
    fn claim(&self, s: &Shape) -> Option<u8> {
        let adr_heading = s.heading.is_some_and(|h| {
            let l = h.to_ascii_lowercase();
            l.starts_with("adr ") || l.starts_with("adr:")
        });
        (s.status_section && !s.date_line && (s.changelog || adr_heading)).then_some(50)
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        out.push_str(&format!("# {}\n\n", r.numbered_heading()));
        let status_text = format!(
            "## Status\n\n{}\n\n",
            r.status.as_deref().unwrap_or("Proposed")
        );
        let has_changelog = r
            .body
            .lines()
            .any(|l| l.trim().eq_ignore_ascii_case("## changelog"));
        let changelog = match (&r.date, has_changelog) {
            (Some(d), false) => format!("## Changelog\n\n- {d}: Initial draft\n\n"),
            _ => String::new(),
        };
        if r.layout.status_first {
            out.push_str(&status_text);
            out.push_str(&changelog);
        } else {
            out.push_str(&changelog);
            out.push_str(&status_text);
        }
        let mut links = r.links("supersedes", "Supersedes");
        links.extend(r.links("amends", "Amends"));
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

    fn dates_new(&self) -> bool {
        true
    }
}
