//! Prompts from knowledge objects: every object of a kind declared with `prompt: true` (the
//! distributed `skill` kind, and any kind of `.seneschal/kinds.yaml` that says so) is one MCP
//! prompt, named by its id.
//!
//! - Its title and description are the object's; its arguments are the front matter's
//!   `arguments` (`name`, `description`, `required`, and `enum` / `examples`, the values
//!   completion offers).
//! - Its body is rendered with the arguments: `{{name}}` becomes the argument's value (an
//!   optional argument left out becomes empty; a `{{...}}` that names no declared argument stays
//!   as written). A value is never scanned again, so an argument cannot inject a placeholder.
//! - After rendering, a line that is only a knowledge URI (`seneschal://knowledge/{kind}/{id}`)
//!   becomes an embedded resource, and a line that is only a Markdown image (`![alt](path)`,
//!   a `.png`, `.jpg`, `.jpeg`, `.gif` or `.webp` file, relative to the object's folder, or to
//!   the repository root when it starts with `/`) becomes an image block, read through
//!   [`seneschal_access::rootfs`] under [`MAX_IMAGE_BYTES`]; inside a fenced code block both stay text.
//!   The front matter's `resources` list is embedded after the body.
//!
//! Everything here is unredacted repository content: the MCP projection reaches it only through
//! the executor (`crate::execute::knowledge_prompts`, `knowledge_prompt`,
//! `knowledge_prompt_completion`, `knowledge_template_completion`), which redacts it.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Index, Object, Snapshot, URI_PREFIX};
use seneschal_access::rootfs::{Follow, Root};

/// The largest image a prompt embeds (1 MiB before base64).
pub const MAX_IMAGE_BYTES: u64 = seneschal_access::limits::PROMPT_IMAGE_BYTES;

/// One entry of `prompts/list`, as it is serialized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The object's id.
    pub name: String,
    /// The object's title.
    pub title: String,
    /// The object's description.
    pub description: String,
    /// The declared arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

impl Prompt {
    /// Every string, each repository content (the executor redacts them all).
    pub fn fields_mut(&mut self) -> Vec<&mut String> {
        let mut out = vec![&mut self.name, &mut self.title, &mut self.description];
        for a in &mut self.arguments {
            out.extend(a.fields_mut());
        }
        out
    }
}

/// One argument of a prompt, as the front matter declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Its name, the placeholder `{{name}}`.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` refuses to render without it.
    #[serde(default)]
    pub required: bool,
    /// The values it takes, offered by completion (not listed).
    #[serde(default, rename = "enum", skip_serializing)]
    pub values: Vec<String>,
    /// Values completion suggests (not listed).
    #[serde(default, skip_serializing)]
    pub examples: Vec<String>,
}

impl PromptArgument {
    fn fields_mut(&mut self) -> Vec<&mut String> {
        let mut out = vec![&mut self.name];
        out.extend(self.description.as_mut());
        out.extend(self.values.iter_mut());
        out.extend(self.examples.iter_mut());
        out
    }
}

/// One content block of a prompt message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Rendered text.
    Text {
        /// The text.
        text: String,
    },
    /// An embedded knowledge object.
    Resource {
        /// Its URI, media type and text.
        resource: EmbeddedResource,
    },
    /// An image file of the repository.
    Image {
        /// Its bytes, base64.
        data: String,
        /// Its media type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// The text contents of an embedded knowledge object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Its URI.
    pub uri: String,
    /// Its media type.
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

/// One message of a rendered prompt (always the user's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// `user`.
    pub role: &'static str,
    /// One block.
    pub content: Content,
}

/// A rendered prompt: the result of `prompts/get` before the protocol's own fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendered {
    /// The prompt's description.
    pub description: String,
    /// The body's blocks in order, then the front matter's resources.
    pub messages: Vec<Message>,
}

impl Rendered {
    /// Every string that is repository content: all but an image's base64 bytes (redacting
    /// them would corrupt the image; a secret inside a picture is not text to find).
    pub fn fields_mut(&mut self) -> Vec<&mut String> {
        let mut out = vec![&mut self.description];
        for m in &mut self.messages {
            match &mut m.content {
                Content::Text { text } => out.push(text),
                Content::Resource { resource } => out.extend([
                    &mut resource.uri,
                    &mut resource.mime_type,
                    &mut resource.text,
                ]),
                Content::Image { mime_type, .. } => out.push(mime_type),
            }
        }
        out
    }
}

/// Why a prompt was not rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// No prompt has the name.
    Unknown(String),
    /// Arguments the request must give (`-32602`).
    Arguments(String),
    /// A reference of the prompt (an embedded object, an image) cannot be read: the
    /// repository's fault, not the request's.
    Reference(String),
}

impl PromptError {
    /// The message, one sentence.
    pub fn message_mut(&mut self) -> &mut String {
        match self {
            PromptError::Unknown(m) | PromptError::Arguments(m) | PromptError::Reference(m) => m,
        }
    }
}

/// The objects served as prompts, by URI, the first of each name.
fn prompt_objects(snapshot: &Snapshot) -> Vec<&Arc<Object>> {
    let mut seen = std::collections::BTreeSet::new();
    snapshot
        .objects
        .iter()
        .filter(|o| snapshot.kinds.get(&o.kind).is_some_and(|k| k.prompt))
        .filter(|o| seen.insert(o.id.as_str()))
        .collect()
}

/// The declared arguments of an object; `None` when its `arguments` are not a list of them
/// (never, for an object of the index: [`front_matter_problem`] makes that a finding).
fn arguments_of(o: &Object) -> Option<Vec<PromptArgument>> {
    match o.front_matter.get("arguments") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(v) => Vec::<PromptArgument>::deserialize(v).ok(),
    }
}

/// What is wrong with the prompt fields of an object of a prompt kind, if anything, as
/// `(pointer, message)`: `arguments` must be a list of arguments with distinct names, and
/// `resources` a list of strings. The `skill` schema says as much; a repository's kind may not,
/// and an object of it that breaks them is a finding, never a prompt silently left out.
pub fn front_matter_problem(front_matter: &Value) -> Option<(String, String)> {
    if let Some(v) = front_matter.get("arguments") {
        let Ok(args) = Vec::<PromptArgument>::deserialize(v) else {
            return Some((
                "/arguments".into(),
                "a prompt's `arguments` must be a list of {name, description, required, enum, \
                 examples} (strings, `required` a boolean)"
                    .into(),
            ));
        };
        for (i, a) in args.iter().enumerate() {
            if args[..i].iter().any(|b| b.name == a.name) {
                return Some((
                    format!("/arguments/{i}/name"),
                    format!("the prompt argument `{}` is declared twice", a.name),
                ));
            }
        }
    }
    if let Some(v) = front_matter.get("resources") {
        if Vec::<String>::deserialize(v).is_err() {
            return Some((
                "/resources".into(),
                "a prompt's `resources` must be a list of knowledge URIs".into(),
            ));
        }
    }
    None
}

fn prompt_of(o: &Object) -> Option<Prompt> {
    Some(Prompt {
        name: o.id.clone(),
        title: o.title.clone(),
        description: o.description.clone(),
        arguments: arguments_of(o)?,
    })
}

/// Every prompt of the repository, by the URI of its object, unredacted: the MCP projection
/// lists them through `crate::execute::knowledge_prompts`.
pub fn prompts(index: &Index, repo: &Path) -> Vec<Prompt> {
    let snapshot = index.snapshot(repo);
    prompt_objects(&snapshot)
        .into_iter()
        .filter_map(|o| prompt_of(o))
        .collect()
}

fn find<'s>(snapshot: &'s Snapshot, name: &str) -> Option<(&'s Arc<Object>, Prompt)> {
    prompt_objects(snapshot)
        .into_iter()
        .find(|o| o.id == name)
        .and_then(|o| Some((o, prompt_of(o)?)))
}

/// The prompt `name` rendered with `args`, unredacted: the MCP projection renders it through
/// `crate::execute::knowledge_prompt`.
pub fn render(
    index: &Index,
    repo: &Path,
    name: &str,
    args: &Map<String, Value>,
) -> Result<Rendered, PromptError> {
    let snapshot = index.snapshot(repo);
    let Some((object, prompt)) = find(&snapshot, name) else {
        return Err(PromptError::Unknown(format!(
            "no prompt is named `{name}` (prompts/list names them)"
        )));
    };
    let mut values: Vec<(&str, String)> = Vec::new();
    let mut missing = Vec::new();
    for a in &prompt.arguments {
        match args.get(&a.name) {
            Some(Value::String(v)) => values.push((&a.name, v.clone())),
            Some(other) => {
                return Err(PromptError::Arguments(format!(
                    "argument `{}` of prompt `{name}` must be a string, not {other}",
                    a.name
                )))
            }
            None if a.required => missing.push(format!("`{}`", a.name)),
            None => values.push((&a.name, String::new())),
        }
    }
    if !missing.is_empty() {
        return Err(PromptError::Arguments(format!(
            "prompt `{name}` needs the required argument{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    let undeclared: Vec<String> = args
        .keys()
        .filter(|k| !prompt.arguments.iter().any(|a| &a.name == *k))
        .map(|k| format!("`{k}`"))
        .collect();
    if !undeclared.is_empty() {
        let declared: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        return Err(PromptError::Arguments(format!(
            "prompt `{name}` takes no argument {} (its arguments: {})",
            undeclared.join(", "),
            if declared.is_empty() {
                "none".to_string()
            } else {
                declared.join(", ")
            }
        )));
    }
    // References (embedded objects, images) are read from the template's own lines, before
    // the arguments fill it: a value can hold no line of its own that names a file, and a line
    // with a placeholder is text.
    let body = object.body();
    let mut messages = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, messages: &mut Vec<Message>| {
        let t = text.trim();
        if !t.is_empty() {
            messages.push(user(Content::Text {
                text: t.to_string(),
            }));
        }
        text.clear();
    };
    let mut root = None;
    // The fence a line is inside (```` ``` ```` or `~~~`): its URIs and images are text.
    let mut fence: Option<&str> = None;
    for line in body.split_inclusive('\n') {
        let bare = line.trim();
        let marker = ["```", "~~~"].into_iter().find(|m| bare.starts_with(m));
        if let Some(m) = marker {
            fence = match fence {
                None => Some(m),
                Some(open) if open == m => None,
                open => open,
            };
            text.push_str(&substitute(line, &values));
        } else if fence.is_some() || bare.contains("{{") {
            text.push_str(&substitute(line, &values));
        } else if bare.starts_with(URI_PREFIX) && !bare.contains(char::is_whitespace) {
            flush(&mut text, &mut messages);
            messages.push(embed(&snapshot, name, bare)?);
        } else if let Some((path, mime)) = image_line(bare) {
            flush(&mut text, &mut messages);
            if root.is_none() {
                root = Some(Root::open(repo).map_err(|e| {
                    PromptError::Reference(format!("the repository cannot be opened: {e}"))
                })?);
            }
            let root = root.as_ref().expect("opened above");
            messages.push(image(root, object, name, path, mime)?);
        } else {
            text.push_str(&substitute(line, &values));
        }
    }
    flush(&mut text, &mut messages);
    if let Some(list) = object
        .front_matter
        .get("resources")
        .and_then(Value::as_array)
    {
        for uri in list.iter().filter_map(Value::as_str) {
            messages.push(embed(&snapshot, name, uri)?);
        }
    }
    if messages.is_empty() {
        messages.push(user(Content::Text {
            text: prompt.description.clone(),
        }));
    }
    Ok(Rendered {
        description: prompt.description,
        messages,
    })
}

fn user(content: Content) -> Message {
    Message {
        role: "user",
        content,
    }
}

/// `text` with each `{{name}}` (spaces inside allowed) of a declared argument replaced, in one
/// pass: a value is never scanned again.
fn substitute(text: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = after[..end].trim();
        match values.iter().find(|(k, _)| *k == key) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn embed(snapshot: &Snapshot, name: &str, uri: &str) -> Result<Message, PromptError> {
    let o = snapshot.get(uri).ok_or_else(|| {
        PromptError::Reference(format!(
            "prompt `{name}` embeds `{uri}`, which no knowledge object has"
        ))
    })?;
    Ok(user(Content::Resource {
        resource: EmbeddedResource {
            uri: o.uri.clone(),
            mime_type: o.mime_type.clone(),
            text: o.text.clone(),
        },
    }))
}

/// The path and media type of a line that is only a Markdown image of a supported type.
fn image_line(line: &str) -> Option<(&str, &'static str)> {
    let inner = line.strip_prefix("![")?.strip_suffix(')')?;
    let (_, path) = inner.split_once("](")?;
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    };
    Some((path, mime))
}

/// The repository-relative path of `path`, written in the object at `file`: relative to the
/// object's folder, or to the root when it starts with `/`; `..` may not climb above the root.
fn resolve(file: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = match path.strip_prefix('/') {
        Some(_) => Vec::new(),
        None => file.split('/').collect::<Vec<_>>().split_last()?.1.to_vec(),
    };
    for seg in path.trim_start_matches('/').split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn image(
    root: &Root,
    object: &Object,
    name: &str,
    path: &str,
    mime: &'static str,
) -> Result<Message, PromptError> {
    let refused =
        |why: String| PromptError::Reference(format!("prompt `{name}` shows `{path}`: {why}"));
    let rel = resolve(&object.file, path)
        .ok_or_else(|| refused("the path leaves the repository".into()))?;
    if let Some(rule) = seneschal_access::gate::name(&rel) {
        return Err(refused(format!(
            "{rel}: {}",
            seneschal_access::gate::why(rule)
        )));
    }
    let mut bytes = Vec::new();
    root.open_file(&rel, Follow::Inside)
        .and_then(|mut f| f.read_capped(MAX_IMAGE_BYTES, &mut bytes))
        .map_err(|e| refused(format!("{rel}: {e}")))?;
    // The content gate, then the picture's own signature: a key file, a configuration file
    // behind a link, or text named `.png` is not sent as an image.
    if let Some(rule) = seneschal_access::gate::content(&bytes) {
        return Err(refused(format!(
            "{rel}: {}",
            seneschal_access::gate::why(rule)
        )));
    }
    if !is_image(&bytes, mime) {
        return Err(refused(format!("{rel}: its bytes are not a {mime} image")));
    }
    Ok(user(Content::Image {
        data: seneschal_access::text::base64(&bytes),
        mime_type: mime.to_string(),
    }))
}

/// Whether `bytes` open with the signature of `mime`.
fn is_image(bytes: &[u8], mime: &str) -> bool {
    match mime {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    }
}

/// The values of `argument` of prompt `name` (its `enum`, else its `examples`) that start with
/// `value`, unredacted; `None` when the prompt or the argument does not exist.
pub fn complete_prompt(
    index: &Index,
    repo: &Path,
    name: &str,
    argument: &str,
    value: &str,
) -> Option<Vec<String>> {
    let snapshot = index.snapshot(repo);
    let (_, prompt) = find(&snapshot, name)?;
    let a = prompt.arguments.iter().find(|a| a.name == argument)?;
    let from = if a.values.is_empty() {
        &a.examples
    } else {
        &a.values
    };
    Some(matching(from.iter().map(String::as_str), value))
}

/// The values of a variable of a knowledge URI template that start with `value`, unredacted:
/// `kind` completes kind names; `id` the ids of the template's kind (or of the kind named in
/// `context`, or of every kind). `None` when the template is not one of ours or has no such
/// variable.
pub fn complete_template(
    index: &Index,
    repo: &Path,
    template: &str,
    variable: &str,
    value: &str,
    context: &Map<String, Value>,
) -> Option<Vec<String>> {
    let rest = template.strip_prefix(URI_PREFIX)?;
    let snapshot = index.snapshot(repo);
    let (kind_part, id_part) = rest.split_once('/')?;
    if id_part != "{id}" {
        return None;
    }
    let kind = match kind_part {
        "{kind}" => context.get("kind").and_then(Value::as_str),
        k => {
            snapshot.kinds.get(k)?;
            Some(k)
        }
    };
    match variable {
        "kind" if kind_part == "{kind}" => Some(matching(
            snapshot.kinds.all.iter().map(|k| k.name.as_str()),
            value,
        )),
        "id" => Some(matching(
            snapshot
                .objects
                .iter()
                .filter(|o| kind.is_none_or(|k| o.kind == k))
                .map(|o| o.id.as_str()),
            value,
        )),
        _ => None,
    }
}

fn matching<'a>(all: impl Iterator<Item = &'a str>, prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = all
        .filter(|v| v.starts_with(prefix))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_once() {
        let v = [("a", "{{b}}".to_string()), ("b", "B".to_string())];
        assert_eq!(
            substitute("x {{a}} {{ b }} {{c}} {{", &v),
            "x {{b}} B {{c}} {{"
        );
    }

    #[test]
    fn image_paths_stay_in_the_repository() {
        assert_eq!(
            resolve("skills/a/SKILL.md", "img/x.png").as_deref(),
            Some("skills/a/img/x.png")
        );
        assert_eq!(
            resolve("skills/a/SKILL.md", "../../d/x.png").as_deref(),
            Some("d/x.png")
        );
        assert_eq!(
            resolve("skills/a/SKILL.md", "/d/x.png").as_deref(),
            Some("d/x.png")
        );
        assert_eq!(resolve("skills/a/SKILL.md", "../../../x.png"), None);
        assert_eq!(image_line("![a](b.PNG)"), Some(("b.PNG", "image/png")));
        assert_eq!(image_line("![a](b.txt)"), None);
        assert_eq!(image_line("see ![a](b.png)"), None);
    }
}
