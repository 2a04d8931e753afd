//! MADR 2: `* Status:` bullets under the `# ` heading.

use super::{Format, Record, Shape};

/// MADR 2: `* Status:` bullets under the heading.
pub struct Madr2;

impl Format for Madr2 {
    fn name(&self) -> &'static str {
        "madr2"
    }

    /// Metadata bullets that log4brains does not claim.
    fn claim(&self, s: &Shape) -> Option<u8> {
        s.bullet.is_some().then_some(30)
    }

    fn write(&self, r: &Record, out: &mut String) -> Result<(), String> {
        out.push_str(&format!("# {}\n\n", r.title));
        out.push_str(&r.bullets('*'));
        out.push_str(r.body);
        Ok(())
    }
}
