//! seneschal's repository access: everything that touches the repository's bytes without
//! trusting them.
//!
//! The confined file system ([`rootfs`], [`confine`]: every path opened under the root's
//! handle, no symbolic link followed out), the secret-file [`rules`], [`redact`]ion and the
//! content [`gate`], the git directory read and pinned ([`gitdir`]) and git run under
//! seneschal's own configuration ([`git`]), with the leaves they share (the [`error`] every
//! layer answers, [`text`], [`display`], line diffs in [`udiff`], [`keep`]). Nothing here
//! knows capabilities, calls or transports beyond the [`transport`] tag a record carries: the
//! crates above (knowledge, core) are the only way in.

pub mod confine;
pub mod display;
pub mod error;
pub mod gate;
pub mod git;
pub mod gitdir;
pub mod keep;
pub mod limits;
pub mod redact;
pub mod rootfs;
pub mod rules;
pub mod text;
pub mod transport;
pub mod udiff;
