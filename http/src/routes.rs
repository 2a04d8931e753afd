//! One request in, one response out: guard → body limit → route → executor → JSON or problem.
//!
//! The routes are the registry's `expose.http` entries plus the fixed pages: `/` (the
//! cockpit: the person's desk) and `/capabilities` (its capability tables),
//! `/openapi.json`, `/docs` (Swagger UI, offline), the icon (`/favicon.ico`, `/favicon.svg`), `/desk/approvals` (the approval desk), `/desk/running` (the calls running now), the MCP server card at
//! `/.well-known/mcp/server-card.json` and `/mcp/server-card`, and `/mcp` (Streamable HTTP,
//! answered by `seneschal_mcp`). Every byte served for a fixed page is computed once at start-up.
//!
//! The cockpit, OpenAPI and the card are those of the process's effect profile
//! (`--allow-effects`), pre-derived at build time: a narrowed process lists only what it
//! executes, never a capability it would refuse.

use std::borrow::Cow;
use std::io::{Cursor, Read};
use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};
use swagger_ui_redist::{SwaggerUi, SwaggerUiStaticFile};
use tiny_http::{Header, Request, Response, StatusCode};

use super::guard::{Allowed, Confirmation};
use super::problem;
use super::query;
use super::Options;
use seneschal_access::error::{CapabilityError, ErrorCode};
use seneschal_core::context::Context;
use seneschal_core::execute::{execute_index, Transport};
use seneschal_core::registry::{self, projections, CAPABILITIES};
use seneschal_model::policy::{
    Approval, APPROVAL_HEADER, APPROVAL_TOKEN_HEADER, DESK_SECRET_HEADER, DESK_SECRET_MIN_CHARS,
};
use seneschal_model::versions::MCP_HTTP_PATH;

/// The cockpit page: plain HTML and a little JavaScript, no build step. The surface of the
/// process's profile is spliced in at the marker.
const COCKPIT_HTML: &str = include_str!("../../share/cockpit/index.html");
/// Where the cockpit template takes the surface (codegen's `project::cockpit::MARKER`).
const COCKPIT_MARKER: &str = "<!-- seneschal:surface -->";
/// The icon of the cockpit (and of every page a browser shows from this server): an SVG the
/// cockpit links, and the same drawing as an ICO where browsers look unasked
/// (`scripts/favicon.py` writes both).
const FAVICON_SVG: &str = include_str!("../../share/cockpit/favicon.svg");
const FAVICON_ICO: &[u8] = include_bytes!("../../share/cockpit/favicon.ico");
/// The cache policy of the icon and Swagger UI's assets: public, a day.
const ASSET_CACHE: &str = "public, max-age=86400";
/// The media type of the server card.
pub const CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";
/// The cache policy of the server card: public, five minutes.
pub const CARD_CACHE: &str = "public, max-age=300";
/// Where Swagger UI's assets are served.
const DOCS_ASSETS: &str = "/docs/assets/";

/// Everything a worker needs, built once.
pub struct State {
    /// The process context every handler receives.
    pub ctx: Arc<Context>,
    allowed: Allowed,
    max_body: usize,
    /// Input schemas by capability index, parsed once for query binding.
    input_schemas: Vec<Value>,
    /// The server card of the process's profile.
    card: &'static str,
    card_etag: String,
    /// The OpenAPI document of the process's profile.
    openapi: &'static str,
    openapi_etag: String,
    /// The cockpit page, with the surface of the process's profile.
    cockpit_html: &'static str,
    docs_html: &'static str,
    /// MCP at `/mcp`: its sessions and streams.
    mcp: seneschal_mcp::streamable::Mcp,
    /// The desk secret: a request that carries it is the person's (`Seneschal-Desk-Secret`).
    desk_secret: String,
}

/// The cockpit page of a profile: the template with the profile's surface at the marker, in
/// a `<script type="application/json" id="surface">` the page's script reads.
pub fn cockpit_page(profile: seneschal_model::toolset::Profile) -> String {
    let island = format!(
        "<script type=\"application/json\" id=\"surface\">{}</script>",
        projections::cockpit(profile)
    );
    assert!(
        COCKPIT_HTML.matches(COCKPIT_MARKER).count() == 1,
        "share/cockpit/index.html holds the surface marker once"
    );
    COCKPIT_HTML.replacen(COCKPIT_MARKER, &island, 1)
}

impl State {
    /// Prepares the pages and the checks for a server bound at `addr`.
    pub fn new(ctx: Arc<Context>, addr: SocketAddr, options: &Options) -> State {
        let mut ui = SwaggerUi::new();
        ui.title("seneschal API");
        ui.config()
            .urls(["/openapi.json"])
            .validator_url("none")
            .display_operation_id(true)
            .show_extensions(true)
            .try_it_out_enabled(true);
        for f in SwaggerUiStaticFile::all() {
            ui.override_file_path(*f, format!("{DOCS_ASSETS}{}", f.file_name()));
        }
        // Built once per process and kept for its lifetime.
        let docs_html: &'static str = Box::leak(
            ui.serve()
                .expect("the Swagger UI configuration serializes")
                .into_boxed_str(),
        );
        let profile = ctx.profile();
        let card = projections::server_card(profile);
        let openapi = projections::openapi(profile);
        let cockpit_html: &'static str = Box::leak(cockpit_page(profile).into_boxed_str());
        State {
            mcp: seneschal_mcp::streamable::Mcp::new(Arc::clone(&ctx), options.max_connections),
            ctx,
            allowed: Allowed::for_addr(addr),
            max_body: options.max_body,
            input_schemas: CAPABILITIES
                .iter()
                .map(|d| serde_json::from_str(d.input_schema).expect("compiled schema parses"))
                .collect(),
            card,
            card_etag: etag(card.as_bytes()),
            openapi,
            openapi_etag: etag(openapi.as_bytes()),
            cockpit_html,
            docs_html,
            desk_secret: desk_secret(options.desk_secret.as_ref()),
        }
    }

    /// The desk secret of this server (printed by `serve` on its terminal).
    pub fn desk_secret(&self) -> &str {
        &self.desk_secret
    }

    /// Whether `headers` carry this server's desk secret: in `Seneschal-Desk-Secret`, or as
    /// `Authorization: Bearer <secret>` (what an MCP client's HTTP configuration can send).
    fn person(&self, headers: &[(String, String)]) -> bool {
        let holds = |s: &str| {
            seneschal_access::text::constant_time_eq(
                s.trim().as_bytes(),
                self.desk_secret.as_bytes(),
            )
        };
        header(headers, &DESK_SECRET_HEADER.to_ascii_lowercase()).is_some_and(holds)
            || header(headers, "authorization").is_some_and(|a| {
                a.trim()
                    .split_once(' ')
                    .is_some_and(|(scheme, s)| scheme.eq_ignore_ascii_case("bearer") && holds(s))
            })
    }
}

/// The environment variable that sets the desk secret of `serve` (at least
/// [`DESK_SECRET_MIN_CHARS`] characters), for a person who scripts approvals; otherwise it is
/// random, per process.
pub const DESK_SECRET_ENV: &str = "SENESCHAL_DESK_SECRET";

/// A desk secret the person set; its `Debug` shows no byte of it.
#[derive(Clone)]
pub struct DeskSecret(String);

impl std::fmt::Debug for DeskSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeskSecret(..)")
    }
}

impl DeskSecret {
    /// The secret `value` sets (blanks around it ignored): `None` when it is empty, refused
    /// `invalid_input` naming `$SENESCHAL_DESK_SECRET` and the minimum when it has fewer than
    /// [`DESK_SECRET_MIN_CHARS`] characters — never replaced silently.
    pub fn parse(value: &str) -> Result<Option<DeskSecret>, CapabilityError> {
        if value.is_empty() {
            return Ok(None);
        }
        let secret = value.trim();
        let n = secret.chars().count();
        if n < DESK_SECRET_MIN_CHARS {
            return Err(CapabilityError::invalid_input(format!(
                "${DESK_SECRET_ENV} is too short: {n} character(s), and a desk secret has at \
                 least {DESK_SECRET_MIN_CHARS} (it lets a request decide the person's \
                 approvals). Set a longer one, or unset it for a random secret per process"
            )));
        }
        Ok(Some(DeskSecret(secret.to_string())))
    }

    /// The secret `$SENESCHAL_DESK_SECRET` sets ([`DeskSecret::parse`]); `None` when it is
    /// unset or empty. A value that is not Unicode is refused.
    pub fn from_env() -> Result<Option<DeskSecret>, CapabilityError> {
        match std::env::var(DESK_SECRET_ENV) {
            Ok(value) => DeskSecret::parse(&value),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(CapabilityError::invalid_input(format!(
                "${DESK_SECRET_ENV} is not Unicode text"
            ))),
        }
    }
}

/// The desk secret of a server: the one the person set, else 32 random bytes in hex.
fn desk_secret(set: Option<&DeskSecret>) -> String {
    match set {
        Some(DeskSecret(s)) => s.clone(),
        None => seneschal_access::text::hex(&seneschal_access::text::random::<32>()),
    }
}

/// A strong ETag: the first 16 bytes of the SHA-256 of the body, quoted.
pub fn etag(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    format!("\"{}\"", seneschal_access::text::hex(&digest[..16]))
}

/// A response before it is handed to tiny_http.
struct Reply {
    status: u16,
    headers: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    body: Cow<'static, [u8]>,
    /// A body produced after the handler returns (an MCP SSE stream), instead of `body`.
    stream: Option<seneschal_mcp::streamable::Produce>,
}

impl Reply {
    fn new(status: u16, content_type: &'static str, body: impl Into<Cow<'static, [u8]>>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            stream: None,
        }
    }

    fn json(value: &Value) -> Reply {
        let body = serde_json::to_vec(value).expect("JSON values serialize");
        Reply::new(200, "application/json", body)
    }

    /// An RFC 9457 problem; its status is the code's, from the codes table, and nowhere else.
    fn error(e: &CapabilityError) -> Reply {
        let body = serde_json::to_vec(&problem::body(e)).expect("JSON values serialize");
        Reply::new(e.code.http_status(), problem::PROBLEM_JSON, body)
    }

    fn header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A 405 naming the methods the path serves.
fn method_not_allowed(method: &str, path: &str, allow: &str) -> Reply {
    let e = CapabilityError::new(
        ErrorCode::MethodNotAllowed,
        format!("{method} is not served at {path}; it serves {allow}"),
    );
    Reply::error(&e).header("Allow", allow.to_string())
}

/// A fixed page with an ETag: 304 when `If-None-Match` names it.
fn cached(
    headers: &[(String, String)],
    etag: &str,
    content_type: &'static str,
    cache: &'static str,
    body: &'static [u8],
) -> Reply {
    let matches = header(headers, "if-none-match").is_some_and(|v| {
        v.split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == etag)
    });
    let reply = if matches {
        Reply::new(304, content_type, &b""[..])
    } else {
        Reply::new(200, content_type, body)
    };
    reply
        .header("ETag", etag.to_string())
        .header("Cache-Control", cache)
}

/// The first header of that lower-case name.
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Where a request's body comes from: its declared length and a reader (the socket, or bytes
/// in memory for [`answer_in_memory`]).
pub struct Body<'a> {
    /// The declared length (`Content-Length`), when there is one.
    pub length: Option<usize>,
    /// The body's bytes.
    pub reader: &'a mut dyn Read,
    /// Whether the client has closed the connection (an aborted request).
    pub gone: tiny_http::Gone,
}

/// Reads the body, at most `max` bytes; more is a 413.
fn read_body(request: &mut Body, max: usize) -> Result<Vec<u8>, Reply> {
    let too_large = || {
        let e = CapabilityError::new(
            ErrorCode::TooLarge,
            format!("the request body is larger than {max} bytes (see serve --max-body)"),
        );
        Reply::error(&e)
    };
    if request.length.is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let limit = max as u64 + 1;
    match (&mut request.reader).take(limit).read_to_end(&mut body) {
        Ok(_) if body.len() > max => Err(too_large()),
        Ok(_) => Ok(body),
        Err(e) => {
            let e = CapabilityError::invalid_input(format!("the request body cannot be read: {e}"));
            Err(Reply::error(&e))
        }
    }
}

/// Serves one request.
pub fn handle(state: &State, mut request: Request) {
    let method = request.method().as_str().to_ascii_uppercase();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_ascii_lowercase(),
                h.value.as_str().to_string(),
            )
        })
        .collect();
    let url = request.url().to_string();
    let length = request.body_length();
    let gone = request.gone();
    let mut body = Body {
        length,
        reader: request.as_reader(),
        gone,
    };
    let reply = answer(state, &method, &url, &headers, &mut body);
    send(request, reply);
}

/// Answers one parsed request without a socket: `(status, headers, body)`. Header names must
/// be lower-case. The same path as [`handle`] after tiny_http has parsed the head; used by
/// the fuzz target `http_request`.
pub fn answer_in_memory(
    state: &State,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let method = method.to_ascii_uppercase();
    let mut reader = body;
    let mut body = Body {
        length: Some(reader.len()),
        reader: &mut reader,
        gone: tiny_http::Gone::default(),
    };
    let reply = answer(state, &method, url, headers, &mut body);
    let headers = reply
        .headers
        .into_iter()
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    let mut bytes = reply.body.into_owned();
    // A POST's stream ends with its answer; a GET's stream would not end: it is not run.
    if let Some(produce) = reply.stream.filter(|_| method == "POST") {
        produce(&mut bytes);
    }
    (reply.status, headers, bytes)
}

/// Headers every HTML page carries: no other page may frame it (a cockpit in a transparent
/// frame on another loopback port would turn a click there into the person's decision).
const HTML_HEADERS: [(&str, &str); 2] = [
    ("Content-Security-Policy", "frame-ancestors 'none'"),
    ("X-Frame-Options", "DENY"),
];

/// Every answer, the HTML ones carrying [`HTML_HEADERS`]: the one place an HTML page passes,
/// whatever route made it.
fn answer(
    state: &State,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    request: &mut Body,
) -> Reply {
    let mut reply = route(state, method, url, headers, request);
    let html = reply.headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("content-type")
            && v.trim_start().to_ascii_lowercase().starts_with("text/html")
    });
    if html {
        for (n, v) in HTML_HEADERS {
            reply = reply.header(n, v);
        }
    }
    reply
}

fn route(
    state: &State,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    request: &mut Body,
) -> Reply {
    // The guard runs before any route, body or handler.
    if let Err(e) = state.allowed.check_host(header(headers, "host")) {
        return Reply::error(&e);
    }
    if let Err(e) = state
        .allowed
        .check_origin(method, header(headers, "origin"))
    {
        return Reply::error(&e);
    }
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    // The fixed pages answer GET and HEAD only.
    let page = |reply: &dyn Fn() -> Reply| {
        if matches!(method, "GET" | "HEAD") {
            reply()
        } else {
            method_not_allowed(method, path, "GET, HEAD")
        }
    };

    match path {
        // The desk, and the capability tables on a page of their own (one document: its
        // script shows the part the path names).
        "/" | "/capabilities" => page(&|| {
            Reply::new(
                200,
                "text/html; charset=utf-8",
                state.cockpit_html.as_bytes(),
            )
            .header("Cache-Control", "no-cache")
        }),
        "/openapi.json" => page(&|| {
            cached(
                headers,
                &state.openapi_etag,
                "application/json",
                "no-cache",
                state.openapi.as_bytes(),
            )
        }),
        "/favicon.ico" => page(&|| {
            Reply::new(200, "image/x-icon", FAVICON_ICO).header("Cache-Control", ASSET_CACHE)
        }),
        "/favicon.svg" => page(&|| {
            Reply::new(200, "image/svg+xml", FAVICON_SVG.as_bytes())
                .header("Cache-Control", ASSET_CACHE)
        }),
        "/docs" | "/docs/" => {
            page(&|| Reply::new(200, "text/html; charset=utf-8", state.docs_html.as_bytes()))
        }
        "/.well-known/mcp/server-card.json" | "/mcp/server-card" => page(&|| {
            cached(
                headers,
                &state.card_etag,
                CARD_MEDIA_TYPE,
                CARD_CACHE,
                state.card.as_bytes(),
            )
        }),
        p if p == MCP_HTTP_PATH => match method {
            "POST" => match read_body(request, state.max_body) {
                Ok(bytes) => mcp_reply(state.mcp.post(
                    headers,
                    &bytes,
                    request.gone.clone(),
                    state.person(headers),
                )),
                Err(reply) => reply,
            },
            // GET and DELETE are a session's: without its id, only POST is served.
            "GET" => match state.mcp.get(headers) {
                Some(outcome) => mcp_reply(outcome),
                None => method_not_allowed(method, path, "POST"),
            },
            "DELETE" => match state.mcp.delete(headers) {
                Some(r) => mcp_reply(seneschal_mcp::streamable::Outcome::Whole(r)),
                None => method_not_allowed(method, path, "POST"),
            },
            _ => method_not_allowed(method, path, "GET, POST, DELETE"),
        },
        "/desk/approvals" => page(&|| desk_list(state)),
        "/desk/running" => page(&|| {
            Reply::json(&serde_json::json!({"running": seneschal_core::execute::running()}))
                .header("Cache-Control", "no-store")
        }),
        p if p.starts_with(DESK_APPROVALS) => {
            if method != "POST" {
                return method_not_allowed(method, path, "POST");
            }
            desk_decide(state, &p[DESK_APPROVALS.len()..], headers, request)
        }
        "/desk/grants" => page(
            &|| match seneschal_core::interact::grants(&state.ctx.repo) {
                Ok(g) => Reply::json(&serde_json::json!({"grants": g}))
                    .header("Cache-Control", "no-store"),
                Err(e) => Reply::error(&e),
            },
        ),
        p if p.starts_with(DESK_GRANTS) => {
            if method != "DELETE" {
                return method_not_allowed(method, path, "DELETE");
            }
            desk_revoke(state, &p[DESK_GRANTS.len()..], headers)
        }
        p if p.starts_with(DOCS_ASSETS) => {
            let name = &p[DOCS_ASSETS.len()..];
            match SwaggerUi::static_files()
                .iter()
                .find(|(f, _)| f.file_name() == name)
            {
                Some((f, bytes)) => page(&|| {
                    Reply::new(200, asset_type(f.file_name()), *bytes)
                        .header("Cache-Control", ASSET_CACHE)
                }),
                None => not_found(path),
            }
        }
        _ => capability(state, method, path, query, headers, request),
    }
}

/// The reply of an MCP outcome.
fn mcp_reply(outcome: seneschal_mcp::streamable::Outcome) -> Reply {
    let (r, stream) = match outcome {
        seneschal_mcp::streamable::Outcome::Whole(r) => (r, None),
        seneschal_mcp::streamable::Outcome::Stream(r, produce) => (r, Some(produce)),
    };
    Reply {
        status: r.status,
        headers: r
            .headers
            .into_iter()
            .map(|(n, v)| (n.into(), v.into()))
            .collect(),
        body: r.body.into(),
        stream,
    }
}

fn asset_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn not_found(path: &str) -> Reply {
    Reply::error(&CapabilityError::not_found(format!(
        "nothing is served at {path}; see /openapi.json for the routes"
    )))
}

/// A capability route: bind the input, run the one executor, answer JSON or a problem.
fn capability(
    state: &State,
    method: &str,
    path: &str,
    query: &str,
    headers: &[(String, String)],
    request: &mut Body,
) -> Reply {
    let lookup = if method == "HEAD" { "GET" } else { method };
    let Some((index, d)) = registry::by_route(lookup, path) else {
        let allow: Vec<&str> = CAPABILITIES
            .iter()
            .filter(|d| d.executable())
            .filter_map(|d| d.http)
            .filter(|h| h.path == path)
            .map(|h| h.method)
            .collect();
        if allow.is_empty() {
            return not_found(path);
        }
        let allow = if allow == ["GET"] {
            "GET, HEAD".to_string()
        } else {
            allow.join(", ")
        };
        return method_not_allowed(method, path, &allow);
    };
    let input = if d.http.is_some_and(|h| h.method == "GET") {
        query::bind(query, &state.input_schemas[index])
    } else {
        let body = match read_body(request, state.max_body) {
            Ok(b) => b,
            Err(reply) => return reply,
        };
        json_body(headers, &body)
    };
    // A write's dry run answers the confirmation token of the request it plans and of the
    // plan it answered.
    let mut dry_input = None;
    let result = input.and_then(|input| {
        if d.approval() == Approval::PerCall && input.get("dry_run") == Some(&Value::Bool(true)) {
            dry_input = Some(input.clone());
        }
        let confirmation = Arc::new(Confirmation {
            token: header(headers, &APPROVAL_HEADER.to_ascii_lowercase()).map(str::to_string),
            person: state.person(headers),
        });
        execute_index(
            &state.ctx,
            index,
            input,
            seneschal_core::execute::Caller::new(Transport::Http, confirmation),
        )
    });
    match (result, dry_input) {
        (Ok(v), Some(input)) => {
            let binding = seneschal_core::interact::plan_binding(d.id, &input, v.get("plan"));
            Reply::json(&v).header(
                APPROVAL_TOKEN_HEADER,
                seneschal_core::interact::approval_token(&binding),
            )
        }
        (Ok(v), None) => Reply::json(&v),
        (Err(e), _) => Reply::error(&e),
    }
}

/// Where the desk's decisions are posted: `/desk/approvals/<id>`.
const DESK_APPROVALS: &str = "/desk/approvals/";

/// `GET /desk/approvals`: the pending approvals of every seneschal process serving this
/// repository, oldest first (what the person decides; each review is redacted already).
fn desk_list(state: &State) -> Reply {
    match seneschal_core::interact::pending_approvals(&state.ctx.repo) {
        Ok(pending) => Reply::json(&serde_json::json!({"pending": pending}))
            .header("Cache-Control", "no-store"),
        Err(e) => Reply::error(&e),
    }
}

/// Where the desk's grants are revoked: `DELETE /desk/grants/<id>`.
const DESK_GRANTS: &str = "/desk/grants/";

/// The refusal of a desk decision made without the desk secret.
fn not_the_person() -> Reply {
    Reply::error(&CapabilityError::new(
        ErrorCode::NotApproved,
        format!(
            "a decision needs the desk secret `seneschal serve` printed on its terminal, in \
             the `{DESK_SECRET_HEADER}` header (the cockpit link it printed carries it)"
        ),
    ))
}

/// `DELETE /desk/grants/<id>`: the person revokes a grant (desk secret required); the
/// session's next write is asked again.
fn desk_revoke(state: &State, id: &str, headers: &[(String, String)]) -> Reply {
    if !state.person(headers) {
        return not_the_person();
    }
    match seneschal_core::interact::revoke(&state.ctx.repo, id) {
        Ok(v) => Reply::json(&v),
        Err(e) => Reply::error(&e),
    }
}

/// `POST /desk/approvals/<id>` `{"decision": "approve" | "decline", "grant_minutes": 15}`:
/// the person's decision, taken only from a request that carries the desk secret (a process
/// that reaches loopback but cannot read the terminal `serve` printed it on cannot decide);
/// `grant_minutes`, with an approval, also approves the asking session's other writes for
/// that long.
fn desk_decide(state: &State, id: &str, headers: &[(String, String)], request: &mut Body) -> Reply {
    if !state.person(headers) {
        return not_the_person();
    }
    let body = match read_body(request, state.max_body) {
        Ok(b) => b,
        Err(reply) => return reply,
    };
    let decision = json_body(headers, &body).and_then(|v| {
        let approve = match v.get("decision").and_then(Value::as_str) {
            Some("approve") => true,
            Some("decline") => false,
            _ => {
                return Err(CapabilityError::invalid_input(
                    "the body is {\"decision\": \"approve\"} or {\"decision\": \"decline\"}, with an approval optionally \"grant_minutes\"",
                )
                .at("/decision"))
            }
        };
        let grant = match v.get("grant_minutes") {
            None | Some(Value::Null) => None,
            Some(m) => Some(m.as_u64().ok_or_else(|| {
                CapabilityError::invalid_input("`grant_minutes` is a whole number of minutes")
                    .at("/grant_minutes")
            })?),
        };
        Ok((approve, grant))
    });
    match decision.and_then(|(approve, grant)| {
        seneschal_core::interact::decide(
            &state.ctx.repo,
            id,
            approve,
            seneschal_core::interact::DecidedAt::Cockpit,
            grant,
        )
    }) {
        Ok(v) => Reply::json(&v),
        Err(e) => Reply::error(&e),
    }
}

/// The JSON object of a POST body; an empty body is `{}`.
fn json_body(headers: &[(String, String)], body: &[u8]) -> Result<Value, CapabilityError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    if let Some(ct) = header(headers, "content-type") {
        let media = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if media != "application/json" && !media.ends_with("+json") {
            return Err(CapabilityError::invalid_input(format!(
                "the body must be application/json, not {ct:?}"
            ))
            .at(""));
        }
    }
    serde_json::from_slice(body)
        .map_err(|e| CapabilityError::invalid_input(format!("the body is not JSON: {e}")).at(""))
}

fn send(request: Request, reply: Reply) {
    if reply.status == seneschal_mcp::streamable::UNANSWERED {
        // Its client went away: the connection's writer is released without a byte.
        drop(request.into_writer());
        return;
    }
    let mut headers: Vec<Header> = Vec::with_capacity(reply.headers.len() + 2);
    headers.push(Header::from_bytes(&b"Server"[..], SERVER.as_bytes()).expect("ASCII"));
    headers
        .push(Header::from_bytes(&b"X-Content-Type-Options"[..], &b"nosniff"[..]).expect("ASCII"));
    for (n, v) in &reply.headers {
        if let Ok(h) = Header::from_bytes(n.as_bytes(), v.as_bytes()) {
            headers.push(h);
        }
    }
    if let Some(produce) = reply.stream {
        // A client that went away is not our error.
        let _ = request.respond_streaming(StatusCode(reply.status), headers, produce);
        return;
    }
    let len = reply.body.len();
    let response = Response::new(
        StatusCode(reply.status),
        headers,
        Cursor::new(reply.body),
        Some(len),
        None,
    )
    // Every body is in memory with a known length: always send Content-Length, never chunks
    // (tiny_http would chunk bodies from 32 KiB on, and HEAD would then lose the length).
    .with_chunked_threshold(usize::MAX);
    // A client that went away is not our error.
    let _ = request.respond(response);
}

/// The `Server` header.
const SERVER: &str = concat!("seneschal/", env!("CARGO_PKG_VERSION"));

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ct(v: &str) -> Vec<(String, String)> {
        vec![("content-type".to_string(), v.to_string())]
    }

    #[test]
    fn a_post_body_binds_as_a_json_object() {
        assert_eq!(json_body(&[], b"").unwrap(), json!({}));
        assert_eq!(json_body(&[], b"  \r\n").unwrap(), json!({}));
        assert_eq!(
            json_body(&ct("application/json; charset=utf-8"), br#"{"a":1}"#).unwrap(),
            json!({"a": 1})
        );
        let e = json_body(&ct("application/json"), b"{nope").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.pointer.as_deref()),
            ("invalid_input", Some(""))
        );
        let e = json_body(&ct("text/plain"), br#"{"a":1}"#).unwrap_err();
        assert_eq!(e.code.as_str(), "invalid_input");
        assert!(e.message.contains("text/plain"), "{}", e.message);
    }

    #[test]
    fn each_profile_has_its_own_cockpit_page() {
        use seneschal_model::policy::Effect;
        use seneschal_model::toolset::Profile;
        let pages: Vec<String> = Effect::ALL
            .iter()
            .map(|e| cockpit_page(Profile::of_effect(*e)))
            .collect();
        for (page, effect) in pages.iter().zip(Effect::ALL) {
            assert!(
                !page.contains(COCKPIT_MARKER),
                "{effect:?}: the marker is replaced"
            );
            assert_eq!(page.matches("id=\"surface\"").count(), 1, "{effect:?}");
            assert!(
                page.contains(projections::cockpit(Profile::of_effect(effect))),
                "{effect:?}"
            );
        }
        assert_ne!(pages[0], pages[2], "read and the full profile differ");
    }

    #[test]
    fn etags_are_quoted_and_follow_the_bytes() {
        let a = etag(b"one");
        assert!(
            a.starts_with('"') && a.ends_with('"') && a.len() == 34,
            "{a}"
        );
        assert_ne!(a, etag(b"two"));
        assert_eq!(a, etag(b"one"));
    }

    #[test]
    fn if_none_match_lists_and_weak_tags_match() {
        let tag = etag(b"x");
        let h = |v: &str| vec![("if-none-match".to_string(), v.to_string())];
        let status = |headers: Vec<(String, String)>| {
            cached(&headers, &tag, "application/json", "no-cache", b"x").status
        };
        assert_eq!(status(h(&tag)), 304);
        assert_eq!(status(h(&format!("\"a\", W/{tag}"))), 304);
        assert_eq!(status(h("*")), 304);
        assert_eq!(status(h("\"other\"")), 200);
        assert_eq!(status(vec![]), 200);
    }
}
