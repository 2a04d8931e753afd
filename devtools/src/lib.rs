//! seneschal's maintainer tooling, apart from the runtime crates: the files `generate` writes
//! under `generated/`, the [`contract`] gate between releases, and the behaviour
//! [`conformance`] harness that runs every capability's examples through the executor.
//! Nothing below this crate imports it.

pub mod conformance;
pub mod contract;
pub mod generate;
