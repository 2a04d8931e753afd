//! The model seneschal's build-time codegen and its binary share: one definition of each
//! classification a manifest declares and of what follows from it.
//!
//! - [`policy`]: effects, disclosure, determinism, stability, and the one derivation of the
//!   MCP hints and the approval from them ([`policy::Class`]);
//! - [`codes`]: the stable error codes and what each transport makes of them;
//! - [`dialect`]: input schemas as OpenAI's strict mode and Gemini's declarations take them;
//! - [`versions`]: names, MCP protocol versions and methods every projection announces;
//! - [`flags`]: the CLI flags an input schema gives a capability command;
//! - [`toolset`]: the toolsets manifests name, the profile a process serves, and the
//!   templates its build-time documents are rendered from.
//!
//! It depends on `serde_json` alone (for [`flags`]), so both the build script and the binary
//! compile it cheaply; nothing here knows a manifest file, a transport or a handler.

pub mod codes;
pub mod dialect;
pub mod flags;
pub mod policy;
pub mod toolset;
pub mod versions;
