//! seneschal's own format: front matter (`title`, `status`, `date`, ...) checked by the
//! kind's schema. Such a file is read and written by the kind (`crate::parse`), never
//! here: this format claims no file and refuses to write one.

use super::{Format, Record, Shape};

/// seneschal's front matter, read and written by the kind.
pub struct Seneschal;

impl Format for Seneschal {
    fn name(&self) -> &'static str {
        "seneschal"
    }

    fn claim(&self, _: &Shape) -> Option<u8> {
        None
    }

    fn write(&self, _: &Record, _: &mut String) -> Result<(), String> {
        Err("seneschal's own format is written by the kind".into())
    }
}
