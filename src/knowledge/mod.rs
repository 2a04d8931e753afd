//! The knowledge layer: kinds, front-matter contracts, the index, search and findings
//! (see issue 4).
//!
//! The MCP projection lists and reads knowledge objects through [`resources`], [`read`] and
//! [`templates`]; these signatures are the contract between the two modules.

use crate::context::Context;

/// The process's knowledge index (kept in [`Context`]); empty until the layer is built.
#[derive(Debug, Default)]
pub struct Index {}

/// A knowledge object as an MCP resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `seneschal://knowledge/{kind}/{id}`
    pub uri: String,
    /// Short name (the id).
    pub name: String,
    /// Title from the front matter.
    pub title: String,
    /// Description from the front matter.
    pub description: String,
    /// Media type, `text/markdown` for Markdown objects.
    pub mime_type: String,
}

/// A kind's URI template, for `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// `seneschal://knowledge/{kind}/{id}` with the kind filled in.
    pub uri_template: String,
    /// The kind's name.
    pub name: String,
    /// What objects of the kind are.
    pub description: String,
    /// Media type of the objects.
    pub mime_type: String,
}

/// Every valid knowledge object of the repository, sorted by URI.
pub fn resources(_ctx: &Context) -> Vec<Resource> {
    Vec::new()
}

/// The content of one knowledge object: `(mime type, text)`, or `None` when no object has
/// this URI.
pub fn read(_ctx: &Context, _uri: &str) -> Option<(String, String)> {
    None
}

/// One URI template per kind.
pub fn templates(_ctx: &Context) -> Vec<Template> {
    Vec::new()
}
