//! Streamable HTTP at `/mcp`: one JSON-RPC message per POST, answered with `application/json`
//! or, for a request that can send messages while it runs, as an SSE stream; notifications
//! and responses → 202 with no body; the 2026-07-28 header checks; sessions (initialize era)
//! with `GET` streams and `DELETE`.
//!
//! The HTTP server has already validated Origin and Host. This is the one place where a
//! JSON-RPC answer gets its HTTP status (the statuses the MCP specification gives the
//! binding); a capability error keeps its own code inside the JSON-RPC result.
//!
//! **Sessions.** A successful `initialize` POST mints an `Mcp-Session-Id` ([`crate::sse`]);
//! every later message of that client carries it and is served in its session (the
//! negotiated revision, the client's capabilities, its log level, approvals and
//! subscriptions); an id that names no session (never minted, ended by `DELETE`, expired or
//! evicted) is 404. A legacy request *without* an id is served statelessly, as before
//! sessions existed: as if `initialize` had negotiated the revision named by its
//! `MCP-Protocol-Version` header (2025-03-26 when absent, as the transport allows). The
//! 2026-07-28 era is stateless: its requests mint nothing and ignore no header they need.
//!
//! **Streams.** A request POSTed with `Accept: text/event-stream` whose method runs the
//! executor (`tools/call`, `prompts/get`, `resources/read`), that passes the era's checks and
//! that could send something before its answer (it carries a progress token, a log level is
//! set, or its session's client declared a capability the server may ask for) is answered as
//! an SSE stream: the notifications and requests the call sends (progress, log messages,
//! elicitation and sampling requests), then its response, then the stream ends. Any other
//! request is answered as JSON, in the handler, under a worker permit. A stream
//! runs after the worker permit is released (tiny_http patch 9), so a call waiting for its
//! client never holds a worker, and the client's response, POSTed with the session id, is
//! handed to the session's pending table (202) while the call waits. Without a session the
//! stream carries notifications only: a request to the client could never be answered. A
//! write that fails or times out ends the stream, and the call's sink refuses from then on.
//! `GET /mcp` with a session id and `Accept: text/event-stream` opens a standalone stream
//! (at most [`crate::sse::MAX_STREAMS`] per session) for what no request is waiting for:
//! `notifications/resources/updated` and `list_changed`; each message goes on one stream.
//! `GET` without a session id is 405 (there is nothing to listen to).

use std::io::Write;
use std::sync::{mpsc, Arc, Mutex, Once};

use serde_json::{Map, Value};

use crate::dispatch::{self, Answer};
use crate::link::{Link, Pending, Sink};
use crate::model::{
    Era, Session, HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, PARSE_ERROR,
    SESSION_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::sse::{self, HttpSession, Sessions};
use crate::wire;
use seneschal_core::context::Context;
use seneschal_model::versions::{MCP_LEGACY_VERSIONS, MCP_MODERN_VERSIONS};

/// The revision a legacy POST without `MCP-Protocol-Version` is taken to speak.
const LEGACY_DEFAULT: &str = "2025-03-26";

/// The methods answered as an SSE stream when the client accepts one: those that run the
/// executor, where a call may report progress, log, or ask the client.
const STREAMED: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The session header.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";

/// What produces a streamed body (tiny_http patch 9).
pub type Produce = Box<dyn FnOnce(&mut dyn Write) + Send + 'static>;

/// An answer: whole, or a head and a body produced as it goes.
pub enum Outcome {
    /// The whole answer.
    Whole(HttpReply),
    /// The head (its body empty) and the producer of the body.
    Stream(HttpReply, Produce),
}

/// An HTTP answer from the MCP projection, for the server to send as it is.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Extra headers (Content-Type included).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn json_reply(status: u16, answer: Answer) -> HttpReply {
    HttpReply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: answer.bytes,
    }
}

/// The status of a reply the server must not send: the connection is closed unanswered.
pub const UNANSWERED: u16 = 0;

fn accepted() -> HttpReply {
    HttpReply {
        status: 202,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// The HTTP status of an answer.
fn status_of(answer: &Answer) -> u16 {
    match (answer.error, answer.era) {
        (None, _) => 200,
        (
            Some(
                PARSE_ERROR
                | INVALID_REQUEST
                | HEADER_MISMATCH
                | UNSUPPORTED_PROTOCOL_VERSION
                | MISSING_CLIENT_CAPABILITY,
            ),
            _,
        ) => 400,
        (Some(METHOD_NOT_FOUND), Some(Era::Modern)) => 404,
        (Some(_), _) => 200,
    }
}

/// The 2026-07-28 checks of `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the
/// body; the message of the first mismatch.
fn header_mismatch(
    headers: &[(String, String)],
    method: &str,
    params: &Map<String, Value>,
) -> Option<String> {
    let meta_version = params
        .get("_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    match (header(headers, "mcp-protocol-version"), meta_version) {
        (None, _) => return Some("header mismatch: MCP-Protocol-Version header is missing".into()),
        (Some(h), Some(b)) if h != b => {
            return Some(format!(
                "header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{b}'"
            ))
        }
        _ => {}
    }
    match header(headers, "mcp-method") {
        None => return Some("header mismatch: Mcp-Method header is missing".into()),
        Some(h) if h != method => {
            return Some(format!(
            "header mismatch: Mcp-Method header value '{h}' does not match body value '{method}'"
        ))
        }
        _ => {}
    }
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    let body = params
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header(headers, "mcp-name").map(wire::header_value) {
        None => Some("header mismatch: Mcp-Name header is missing".into()),
        Some(None) => Some("header mismatch: Mcp-Name header is not valid Base64 of UTF-8".into()),
        Some(Some(h)) if h != body => Some(format!(
            "header mismatch: Mcp-Name header value '{h}' does not match body value '{body}'"
        )),
        Some(Some(_)) if method == "tools/call" => param_header_mismatch(headers, body, params),
        Some(Some(_)) => None,
    }
}

/// The SEP-2243 check of a tool's header-carried arguments: every argument its input schema
/// marks `x-mcp-header: <Name>` that the body gives must come in the header `Mcp-Param-<Name>`
/// with the same value (a number or a boolean as its JSON text), and a header needs its
/// argument. Inside the `=?base64?…?=` wrapper the value is strict Base64 (padded, standard
/// alphabet); without the whole wrapper it is literal.
fn param_header_mismatch(
    headers: &[(String, String)],
    tool: &str,
    params: &Map<String, Value>,
) -> Option<String> {
    let (_, d) = seneschal_core::registry::by_tool(tool)?;
    if !d.input_schema.contains("x-mcp-header") {
        return None;
    }
    let schema: Value = serde_json::from_str(d.input_schema).ok()?;
    let arguments = params.get("arguments").and_then(Value::as_object);
    for (property, s) in schema.get("properties")?.as_object()? {
        let Some(name) = s.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let body = match arguments.and_then(|a| a.get(property)) {
            None | Some(Value::Null) => None,
            Some(Value::String(v)) => Some(v.clone()),
            Some(v) => Some(v.to_string()),
        };
        let raw = header(headers, &format!("mcp-param-{name}"));
        let why = match (raw, body) {
            (None, None) => continue,
            (None, Some(_)) => {
                format!("Mcp-Param-{name} header is missing while the body gives `{property}`")
            }
            (Some(_), None) => {
                format!("Mcp-Param-{name} header is present while the body gives no `{property}`")
            }
            (Some(raw), Some(b)) => match strict_header_value(raw) {
                None => format!("Mcp-Param-{name} header is not valid padded Base64 of UTF-8"),
                Some(h) if h != b => {
                    format!("Mcp-Param-{name} header value '{h}' does not match body value '{b}'")
                }
                Some(_) => continue,
            },
        };
        return Some(format!("header mismatch: {why}"));
    }
    None
}

/// A header value as [`wire::header_value`] reads it, but refusing Base64 that is not
/// canonically padded (length a multiple of 4, `=` only at the end).
fn strict_header_value(raw: &str) -> Option<String> {
    if let Some(inner) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        let data = inner.trim_end_matches('=');
        if inner.len() % 4 != 0 || inner.len() - data.len() > 2 || data.contains('=') {
            return None;
        }
    }
    wire::header_value(raw)
}

/// The MCP endpoint of one server: its process context and its sessions.
pub struct Mcp {
    ctx: Arc<Context>,
    sessions: Sessions,
    feed_started: Once,
}

/// Whether a call could send anything before its answer: a progress token to report
/// against, a log level to log at (the session's, or a 2026-07-28 request's own), or, in a
/// session, a client capability the server may ask for. A call that cannot is answered as
/// JSON in the handler, under a worker permit like any request.
fn may_send(state: &Session, in_session: bool, params: &Map<String, Value>) -> bool {
    let meta = params.get("_meta").and_then(Value::as_object);
    let asks = ["elicitation", "sampling", "roots"];
    meta.is_some_and(|m| m.contains_key("progressToken") || m.contains_key(META_LOG_LEVEL))
        || state.log_level.is_some()
        || (in_session
            && asks
                .iter()
                .any(|c| state.client_capabilities.contains_key(*c)))
}

/// The `_meta` key of a 2026-07-28 request's log level.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Whether the `Accept` header takes an SSE stream.
/// The head of a `text/event-stream` answer (a POST answered as a stream, a GET stream).
fn event_stream() -> HttpReply {
    HttpReply {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "text/event-stream".into()),
            ("Cache-Control".into(), "no-cache".into()),
        ],
        body: Vec::new(),
    }
}

fn accepts_sse(headers: &[(String, String)]) -> bool {
    header(headers, "accept").is_some_and(|a| {
        a.split(',').any(|m| {
            m.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
        })
    })
}

fn not_found_session() -> HttpReply {
    json_reply(
        404,
        dispatch::error_answer(
            SESSION_NOT_FOUND,
            "session not found: the Mcp-Session-Id names no live session (ended, expired or \
             never minted); initialize again",
        ),
    )
}

fn plain(status: u16, message: &str) -> HttpReply {
    json_reply(status, dispatch::error_answer(INVALID_REQUEST, message))
}

/// A call's stream: each message an event on the POST's SSE stream, until the stream ends.
struct CallStream {
    tx: Mutex<mpsc::Sender<Option<Vec<u8>>>>,
    /// Whether requests may travel (a session can route their responses back).
    requests: bool,
    /// The ids of the requests sent on this stream.
    asked: Mutex<Vec<Value>>,
}

impl Sink for CallStream {
    fn send(&self, message: &[u8]) -> bool {
        let id = request_id(message);
        if id.is_some() && !self.requests {
            return false;
        }
        // Noted before it leaves: once sent, the stream may be abandoned at any moment.
        if let Some(id) = &id {
            self.asked.lock().expect("not poisoned").push(id.clone());
        }
        let sent = self
            .tx
            .lock()
            .expect("not poisoned")
            .send(Some(message.to_vec()))
            .is_ok();
        if let (false, Some(id)) = (sent, id) {
            self.asked
                .lock()
                .expect("not poisoned")
                .retain(|a| *a != id);
        }
        sent
    }
}

impl CallStream {
    /// The stream is gone: every request sent on it and still waiting gets an error answer,
    /// so that the call stops waiting for a client that can no longer see the question.
    fn abandon(&self, pending: &Pending) {
        for id in self.asked.lock().expect("not poisoned").drain(..) {
            pending.fail(
                &id,
                "the stream that carried the request closed before it was answered",
            );
        }
    }
}

/// How often a call answered as an SSE stream looks whether its client closed the request
/// while it waits for something to send.
const WATCH: std::time::Duration =
    std::time::Duration::from_millis(seneschal_access::limits::MCP_SSE_WATCH_MS);

/// Marks the request `id` cancelled in `pending` (its client closed the request): its call's
/// peer answers `cancelled()`.
fn cancel(pending: &Pending, id: &Value) {
    pending.cancel(id);
}

/// The sink of a request answered as JSON: it carries nothing to the client, and when the call
/// asks whether it was cancelled (`listen`, before each look), it looks whether the client
/// closed the request, and cancels it if so.
struct Watched {
    gone: tiny_http::Gone,
    pending: Arc<Pending>,
    id: Value,
}

impl Sink for Watched {
    fn send(&self, _: &[u8]) -> bool {
        false
    }

    fn listen(&self) {
        if self.gone.client_gone() {
            cancel(&self.pending, &self.id);
        }
    }
}

/// The id of a message we send when it is a request (it has an id and a method).
fn request_id(message: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(message).ok()?;
    let o = v.as_object()?;
    o.contains_key("method").then(|| o.get("id").cloned())?
}

impl Mcp {
    /// The endpoint of a server serving `ctx` with at most `max_connections` connections:
    /// its streams may hold half of them, so that streams never lock other clients out.
    pub fn new(ctx: Arc<Context>, max_connections: usize) -> Mcp {
        Mcp {
            ctx,
            // Room for every connection beside the table's own: streams and calls in flight
            // (each holds a connection) can never hold every session, so `initialize` always
            // finds one to end.
            sessions: Sessions::new(
                sse::MAX_SESSIONS + max_connections,
                sse::IDLE,
                (max_connections / 2).max(1),
            ),
            feed_started: Once::new(),
        }
    }

    /// The session a request names: `Ok(None)` without the header, `Err` (404) when it names
    /// none.
    fn session_of(
        &self,
        headers: &[(String, String)],
    ) -> Result<Option<Arc<HttpSession>>, HttpReply> {
        match header(headers, "mcp-session-id") {
            None => Ok(None),
            Some(id) => self
                .sessions
                .get(id.trim())
                .map(Some)
                .ok_or_else(not_found_session),
        }
    }

    /// Answers one `POST /mcp`; `person` says whether the request carries the desk secret,
    /// the one proof that makes its client's answers to approval questions the person's.
    pub fn post(
        &self,
        headers: &[(String, String)],
        body: &[u8],
        gone: tiny_http::Gone,
        person: bool,
    ) -> Outcome {
        let message: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return Outcome::Whole(json_reply(
                    400,
                    dispatch::error_answer(PARSE_ERROR, format!("parse error: {e}")),
                ))
            }
        };
        let session = match self.session_of(headers) {
            Ok(s) => s,
            Err(reply) => return Outcome::Whole(reply),
        };
        let is_request = message.get("method").is_some() && message.get("id").is_some();
        if !is_request {
            return Outcome::Whole(self.message(session.as_ref(), message));
        }
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let empty = Map::new();
        let params = message
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let modern = params
            .get("_meta")
            .and_then(Value::as_object)
            .is_some_and(|m| {
                m.contains_key(META_PROTOCOL_VERSION) || m.contains_key(META_CLIENT_CAPABILITIES)
            });
        let header_version = header(headers, "mcp-protocol-version");
        if modern && method != "initialize" {
            if let Some(why) = header_mismatch(headers, &method, params) {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                return Outcome::Whole(json_reply(
                    400,
                    dispatch::error_for(&id, HEADER_MISMATCH, why),
                ));
            }
        } else if let Some(v) = header_version {
            if !MCP_LEGACY_VERSIONS.contains(&v) && !MCP_MODERN_VERSIONS.contains(&v) {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let mut a = dispatch::error_for(
                    &id,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    format!(
                        "unsupported protocol version `{v}` in the MCP-Protocol-Version header"
                    ),
                );
                a.era = None;
                return Outcome::Whole(json_reply(400, a));
            }
        }
        // The state the request starts from: its session's, or the stateless assumption.
        let (mut before, busy) = match &session {
            Some(s) => {
                let (state, busy) = s.begin();
                (state, Some(busy))
            }
            None => {
                let assumed = header_version
                    .and_then(|v| MCP_LEGACY_VERSIONS.iter().copied().find(|l| *l == v))
                    .or_else(|| header_version.is_none().then_some(LEGACY_DEFAULT));
                let state = match assumed {
                    Some(v) if method != "initialize" => Session::assumed(v),
                    _ => Session::default(),
                };
                (state, None)
            }
        };
        // Any local process reaches `/mcp`: its client's answer to an approval question is the
        // person's decision only on a request that proves it holds the desk secret.
        before.vouched = person;
        // A 2026-07-28 request whose `_meta` is missing or incomplete is a bad request
        // (400), not merely a failed call: the envelope, not the method, is wrong.
        let (era, verdict) = dispatch::classify(&before, &method, params);
        let envelope_invalid = matches!(
            (era, &verdict),
            (Some(Era::Modern), Err(ref e)) if e.code == INVALID_PARAMS
        );
        let pending = session
            .as_ref()
            .map(|s| Arc::clone(&s.pending))
            .unwrap_or_default();
        if verdict.is_ok()
            && accepts_sse(headers)
            && STREAMED.contains(&method.as_str())
            && may_send(&before, session.is_some(), params)
        {
            // Past the server's stream budget, the call is answered as JSON: it runs, and
            // what it would have sent is dropped.
            if let Some(budget) = self.sessions.stream_budget() {
                return self.stream(session, before, (busy, budget), pending, message, gone);
            }
        }
        // A client that closes its request cancels it (MCP 2026-07-28: closing the request is
        // the cancellation over Streamable HTTP): the call looks whenever it asks.
        let closed = gone.clone();
        let link = Link {
            sink: Arc::new(Watched {
                gone,
                pending: Arc::clone(&pending),
                id: message.get("id").cloned().unwrap_or(Value::Null),
            }),
            pending,
        };
        let mut state = before.clone();
        // A request its client cancelled while it ran gets no JSON-RPC answer (the receiver of
        // a cancellation does not respond): closed by its client, nothing at all is written;
        // cancelled by `notifications/cancelled`, its HTTP request ends with an empty 202.
        let Some(answer) = dispatch::handle_value(&self.ctx, &mut state, &link, message) else {
            if !closed.client_gone() {
                return Outcome::Whole(accepted());
            }
            return Outcome::Whole(HttpReply {
                status: UNANSWERED,
                headers: Vec::new(),
                body: Vec::new(),
            });
        };
        let status = if envelope_invalid {
            400
        } else {
            status_of(&answer)
        };
        let mut reply = json_reply(status, answer);
        match &session {
            Some(s) => s.merge(&before, state),
            None if method == "initialize"
                && reply.status == 200
                && state.legacy_version.is_some() =>
            {
                state.remembers = true;
                match self.sessions.mint(state) {
                    Ok(id) => {
                        self.start_feed();
                        reply.headers.push((SESSION_HEADER.into(), id));
                    }
                    Err(sse::Full) => {
                        return Outcome::Whole(plain(
                            503,
                            "every session is in use (streams open or calls in flight); try again later",
                        ))
                    }
                }
            }
            None => {}
        }
        drop(busy);
        Outcome::Whole(reply)
    }

    /// A notification or a client's response: taken in its session (a response reaches the
    /// call waiting for it), 202.
    fn message(&self, session: Option<&Arc<HttpSession>>, message: Value) -> HttpReply {
        let (before, busy, pending) = match session {
            Some(s) => {
                let (state, busy) = s.begin();
                (state, Some(busy), Arc::clone(&s.pending))
            }
            None => (Session::default(), None, Arc::new(Pending::default())),
        };
        let link = Link {
            sink: Arc::new(crate::link::Closed),
            pending,
        };
        let mut state = before.clone();
        let answer = dispatch::handle_value(&self.ctx, &mut state, &link, message);
        if let Some(s) = session {
            s.merge(&before, state);
        }
        drop(busy);
        match answer {
            // Notifications and client responses are accepted without a body.
            None => accepted(),
            // A message that is neither a request nor a notification is a bad request.
            Some(answer) => json_reply(400, answer),
        }
    }

    /// A request answered as an SSE stream: the call runs on a thread of its own while the
    /// connection writes what it sends, then its answer.
    fn stream(
        &self,
        session: Option<Arc<HttpSession>>,
        before: Session,
        busy: (Option<sse::Busy>, sse::Budget),
        pending: Arc<Pending>,
        message: Value,
        gone: tiny_http::Gone,
    ) -> Outcome {
        let ctx = Arc::clone(&self.ctx);
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let head = event_stream();
        let produce: Produce = Box::new(move |out: &mut dyn Write| {
            let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
            let end = tx.clone();
            let stream = Arc::new(CallStream {
                tx: Mutex::new(tx),
                requests: session.is_some(),
                asked: Mutex::new(Vec::new()),
            });
            let link = Link {
                sink: stream.clone(),
                pending: Arc::clone(&pending),
            };
            std::thread::scope(|scope| {
                scope.spawn(move || {
                    let mut state = before.clone();
                    let answer = dispatch::handle_value(&ctx, &mut state, &link, message);
                    if let Some(s) = &session {
                        s.merge(&before, state);
                    }
                    if let Some(a) = answer {
                        link.sink.send(&a.bytes);
                    }
                    let _ = end.send(None);
                    drop(busy);
                });
                // Until the answer has been written, or the client is gone (the socket's peek
                // finds out while the call works or waits, a comment now and then keeps the
                // connection alive): a client gone cancels the call.
                let mut quiet = std::time::Duration::ZERO;
                loop {
                    let bytes = match rx.recv_timeout(WATCH) {
                        Ok(Some(message)) => sse::event(&message),
                        Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            quiet += WATCH;
                            if gone.client_gone() {
                                cancel(&pending, &id);
                                drop(rx);
                                stream.abandon(&pending);
                                break;
                            }
                            if quiet < sse::KEEPALIVE {
                                continue;
                            }
                            b": keepalive\n\n".to_vec()
                        }
                    };
                    quiet = std::time::Duration::ZERO;
                    if out.write_all(&bytes).is_err() {
                        cancel(&pending, &id);
                        drop(rx);
                        stream.abandon(&pending);
                        break;
                    }
                }
            });
        });
        Outcome::Stream(head, produce)
    }

    /// Answers one `GET /mcp`: a standalone SSE stream of the session's notifications;
    /// `None` without a session id (the method is then not served: 405, a problem).
    pub fn get(&self, headers: &[(String, String)]) -> Option<Outcome> {
        let session = match self.session_of(headers) {
            Ok(Some(s)) => s,
            Ok(None) => return None,
            Err(reply) => return Some(Outcome::Whole(reply)),
        };
        if !accepts_sse(headers) {
            return Some(Outcome::Whole(plain(
                406,
                "GET /mcp answers text/event-stream only: send Accept: text/event-stream",
            )));
        }
        let Some(budget) = self.sessions.stream_budget() else {
            return Some(Outcome::Whole(plain(
                503,
                "the server holds as many streams open as it may; try again later",
            )));
        };
        let Some((rx, guard)) = session.open_stream() else {
            return Some(Outcome::Whole(plain(
                409,
                &format!(
                    "this session holds {} streams open already",
                    sse::MAX_STREAMS
                ),
            )));
        };
        let head = event_stream();
        Some(Outcome::Stream(
            head,
            Box::new(move |out: &mut dyn Write| {
                sse::pump(rx, guard, out);
                drop(budget);
            }),
        ))
    }

    /// Answers one `DELETE /mcp`: ends the session the header names; `None` without a
    /// session id (the method is then not served: 405, a problem).
    pub fn delete(&self, headers: &[(String, String)]) -> Option<HttpReply> {
        let id = header(headers, "mcp-session-id")?;
        Some(if self.sessions.end(id.trim()) {
            HttpReply {
                status: 204,
                headers: Vec::new(),
                body: Vec::new(),
            }
        } else {
            not_found_session()
        })
    }

    fn start_feed(&self) {
        self.feed_started
            .call_once(|| self.sessions.feed.spawn(Arc::clone(&self.ctx)));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// One POST answered whole (none of these asks for a stream).
    fn http_post(ctx: &Arc<Context>, headers: &[(String, String)], body: &[u8]) -> HttpReply {
        match Mcp::new(Arc::clone(ctx), 256).post(headers, body, tiny_http::Gone::default(), false)
        {
            Outcome::Whole(r) => r,
            Outcome::Stream(..) => panic!("a stream where a whole answer was expected"),
        }
    }
    use seneschal_model::policy::Effect;

    fn ctx(effect: Effect) -> Arc<Context> {
        Arc::new(Context::new(std::env::temp_dir(), effect))
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn modern(id: u64, method: &str, mut params: Value) -> Vec<u8> {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
        });
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .unwrap()
    }

    fn body(r: &HttpReply) -> Value {
        serde_json::from_slice(&r.body).unwrap()
    }

    fn content_type(r: &HttpReply) -> Option<&str> {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_closed_stream_fails_its_unanswered_requests_and_refuses_more() {
        let pending = Arc::new(Pending::default());
        let (tx, rx) = mpsc::channel();
        let stream = Arc::new(CallStream {
            tx: Mutex::new(tx),
            requests: true,
            asked: Mutex::new(Vec::new()),
        });
        let link = Link {
            sink: stream.clone(),
            pending: Arc::clone(&pending),
        };
        let waiting = std::thread::spawn(move || {
            link.request(
                "elicitation/create",
                json!({}),
                std::time::Duration::from_secs(60),
            )
        });
        let sent: Value = serde_json::from_slice(&rx.recv().unwrap().unwrap()).unwrap();
        assert_eq!(sent["method"], "elicitation/create");
        drop(rx);
        stream.abandon(&pending);
        let got = waiting.join().unwrap();
        assert!(
            got.unwrap_err().contains("closed"),
            "the call stops waiting"
        );
        assert!(!stream.send(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#));

        // Without a session, requests are refused at once; notifications travel.
        let (tx, rx) = mpsc::channel();
        let stream = CallStream {
            tx: Mutex::new(tx),
            requests: false,
            asked: Mutex::new(Vec::new()),
        };
        assert!(!stream.send(br#"{"jsonrpc":"2.0","id":"s-1","method":"roots/list"}"#));
        assert!(stream.send(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#));
        assert!(rx.recv().unwrap().is_some());
    }

    #[test]
    fn a_modern_call_with_matching_headers_is_answered_as_json() {
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "capabilities_list"),
        ]);
        let r = http_post(
            &ctx(Effect::RepositoryWrite),
            &hs,
            &modern(1, "tools/call", json!({"name": "capabilities_list"})),
        );
        assert_eq!(r.status, 200);
        assert_eq!(content_type(&r), Some("application/json"));
        let b = body(&r);
        assert_eq!(b["id"], 1);
        assert_eq!(b["result"]["resultType"], "complete");
        assert_eq!(b["result"]["isError"], false);
    }

    #[test]
    fn a_base64_name_header_is_decoded_before_comparison() {
        // "capabilities_list" in Base64.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?Y2FwYWJpbGl0aWVzX2xpc3Q=?="),
        ]);
        let r = http_post(
            &ctx(Effect::RepositoryWrite),
            &hs,
            &modern(2, "tools/call", json!({"name": "capabilities_list"})),
        );
        assert_eq!(r.status, 200, "{:?}", body(&r));
    }

    #[test]
    fn header_mismatches_are_400_with_32020() {
        let c = ctx(Effect::RepositoryWrite);
        type Case = (Vec<(String, String)>, Vec<u8>, &'static str);
        let cases: Vec<Case> = vec![
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list"),
                ]),
                modern(3, "tools/call", json!({"name": "capabilities_list"})),
                "Mcp-Method",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "server_status"),
                ]),
                modern(4, "tools/call", json!({"name": "capabilities_list"})),
                "Mcp-Name",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "resources/read"),
                ]),
                modern(
                    5,
                    "resources/read",
                    json!({"uri": "seneschal://capabilities"}),
                ),
                "Mcp-Name header is missing",
            ),
            (
                h(&[("mcp-method", "tools/list")]),
                modern(6, "tools/list", json!({})),
                "MCP-Protocol-Version header is missing",
            ),
            (
                h(&[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("mcp-method", "tools/list"),
                ]),
                modern(7, "tools/list", json!({})),
                "does not match body value '2026-07-28'",
            ),
        ];
        for (hs, b, needle) in cases {
            let r = http_post(&c, &hs, &b);
            let v = body(&r);
            assert_eq!(r.status, 400, "{v}");
            assert_eq!(v["error"]["code"], HEADER_MISMATCH, "{v}");
            assert!(
                v["error"]["message"].as_str().unwrap().contains(needle),
                "{v} lacks {needle}"
            );
            assert!(v["id"].is_number());
        }
    }

    #[test]
    fn statuses_follow_the_error_class() {
        let c = ctx(Effect::RepositoryWrite);
        let r = http_post(&c, &[], b"{not json");
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (400, Some(PARSE_ERROR))
        );

        let mut b: Value = serde_json::from_slice(&modern(8, "tools/list", json!({}))).unwrap();
        b["params"]["_meta"][META_PROTOCOL_VERSION] = json!("1900-01-01");
        let hs = h(&[
            ("mcp-protocol-version", "1900-01-01"),
            ("mcp-method", "tools/list"),
        ]);
        let r = http_post(&c, &hs, &serde_json::to_vec(&b).unwrap());
        let v = body(&r);
        assert_eq!(
            (r.status, v["error"]["code"].as_i64()),
            (400, Some(UNSUPPORTED_PROTOCOL_VERSION))
        );
        // The list itself is pinned by tests/it/mcp_stdio.rs.
        assert_eq!(
            v["error"]["data"]["supported"],
            json!(dispatch::supported_versions())
        );
        assert_eq!(v["error"]["data"]["requested"], "1900-01-01");

        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "logging/setLevel"),
        ]);
        let r = http_post(
            &c,
            &hs,
            &modern(9, "logging/setLevel", json!({"level": "info"})),
        );
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (404, Some(METHOD_NOT_FOUND))
        );
    }

    #[test]
    fn an_incomplete_modern_meta_is_400_and_a_removed_method_is_404() {
        // Found by the conformance suite (server-stateless, SEP-2575).
        let c = ctx(Effect::RepositoryWrite);
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ]);
        for meta in [
            None,
            Some(json!({META_CLIENT_CAPABILITIES: {}})),
            Some(json!({META_PROTOCOL_VERSION: "2026-07-28"})),
        ] {
            let mut params = json!({});
            if let Some(m) = &meta {
                params["_meta"] = m.clone();
            }
            let b =
                json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": params});
            let r = http_post(&c, &hs, &serde_json::to_vec(&b).unwrap());
            let v = body(&r);
            assert_eq!(
                (r.status, v["error"]["code"].as_i64()),
                (400, Some(INVALID_PARAMS)),
                "{meta:?}: {v}"
            );
            assert_eq!(v["id"], 101);
        }
        // A failed call inside a well-formed request stays a 200 answer.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "no_such_tool"),
        ]);
        let r = http_post(
            &c,
            &hs,
            &modern(3, "tools/call", json!({"name": "no_such_tool"})),
        );
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (200, Some(INVALID_PARAMS))
        );
        // `initialize` with only the modern `_meta` is a removed method of 2026-07-28.
        let hs = h(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "initialize"),
        ]);
        let r = http_post(&c, &hs, &modern(4, "initialize", json!({})));
        assert_eq!(
            (r.status, body(&r)["error"]["code"].as_i64()),
            (404, Some(METHOD_NOT_FOUND))
        );
        // With its `protocolVersion` it is still the legacy handshake.
        let b = json!({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}});
        let r = http_post(&c, &[], &serde_json::to_vec(&b).unwrap());
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["result"]["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn notifications_are_202_with_an_empty_body() {
        let c = ctx(Effect::RepositoryWrite);
        let r = http_post(
            &c,
            &[],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(r.status, 202);
        assert!(r.body.is_empty());
        let r = http_post(
            &c,
            &[],
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        assert_eq!(r.status, 202);
    }

    #[test]
    fn initialize_mints_a_session_and_legacy_posts_without_one_are_stateless() {
        let c = ctx(Effect::RepositoryWrite);
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let r = http_post(&c, &[], init);
        assert_eq!(r.status, 200);
        assert_eq!(body(&r)["result"]["protocolVersion"], "2025-06-18");
        let id = r
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, v)| v.clone())
            .expect("a session id");
        assert_eq!(id.len(), 32);

        let hs = h(&[("mcp-protocol-version", "2025-06-18")]);
        let r = http_post(
            &c,
            &hs,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        );
        assert_eq!(r.status, 200);
        let v = body(&r);
        assert!(v["result"]["tools"].is_array());
        assert!(v["result"].get("resultType").is_none());

        let hs = h(&[("mcp-protocol-version", "1999-01-01")]);
        let r = http_post(
            &c,
            &hs,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        );
        assert_eq!(r.status, 400);
    }

    #[test]
    fn a_narrow_profile_lists_only_what_it_allows() {
        let hs = h(&[("mcp-protocol-version", "2025-11-25")]);
        let r = http_post(
            &ctx(Effect::Read),
            &hs,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        let v = body(&r);
        for t in v["result"]["tools"].as_array().unwrap() {
            assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        }
    }
}
