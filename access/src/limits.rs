//! The bounded-input policy: one table of every limit on untrusted bytes, with its value,
//! where it is enforced and the error each transport answers when it is exceeded.
//!
//! Every constant the code enforces lives here (stdio line, HTTP body, JSON depth, page size,
//! every size, count and interval of the MCP and HTTP transports, the caps of the file, git,
//! knowledge and write readers), and the code it bounds names it from here: this module is in
//! the lowest crate and imports nothing, so a bound cannot be defined above the table that
//! documents it (`tests/it/layering.rs::every_transport_bound_lives_in_limits` holds the
//! transports' side, the crate edge the rest).
//! The HTTP head limits live in the vendored tiny_http (`vendor/tiny_http/src/client.rs`,
//! private there); their values are repeated here and proved by `tests/it/barrage.rs`.
//! [`TABLE`] is rendered into docs/ROBUSTNESS.md by [`markdown`], and a unit test keeps
//! the two equal.

/// The longest MCP stdio line (one JSON-RPC message), in bytes; longer is -32600 and skipped.
pub const STDIO_LINE: usize = 4 * 1024 * 1024;
/// The default largest HTTP request body, in bytes (`serve --max-body` changes it).
pub const HTTP_BODY_DEFAULT: usize = 1024 * 1024;
/// The default most HTTP connections open at once (`serve --max-connections` changes it).
pub const HTTP_CONNECTIONS_DEFAULT: usize = 256;
/// The default deadline of one HTTP request, head and body, from its first byte, in seconds
/// (`serve --request-timeout` changes it); its answer has as long to be written.
pub const HTTP_REQUEST_SECS_DEFAULT: u64 = 10;
/// The default idle timeout of a keep-alive HTTP connection, in seconds (`serve --timeout`
/// changes it).
pub const HTTP_IDLE_SECS_DEFAULT: u64 = 30;
/// The longest HTTP request line or header line, in bytes (vendored tiny_http, patch 2).
pub const HTTP_HEAD_LINE: usize = 8 * 1024;
/// The most header lines of one HTTP request (vendored tiny_http, patch 2).
pub const HTTP_HEAD_LINES: usize = 100;
/// The deepest JSON nesting accepted, in arrays and objects (serde_json's recursion limit of
/// 128 refuses the 128th level: 127 levels parse). Kept on purpose: it bounds the stack of
/// every later recursive walk (schema validation, serialization, drop).
pub const JSON_DEPTH: usize = 127;
/// How many items one page of an MCP list holds (`resources/list`, `resources/templates/list`).
pub const PAGE_ITEMS: usize = 100;
/// The longest opaque MCP cursor accepted, in characters.
pub const CURSOR_CHARS: usize = 256;
/// The most MCP tasks (tasks extension) the process keeps at a time, finished or not.
pub const MCP_TASKS: usize = 64;
/// How long an MCP task is kept after its creation (its `ttlMs`), in milliseconds.
pub const MCP_TASK_TTL_MS: u64 = 300_000;

/// MCP sessions over Streamable HTTP live at once, beside one per connection
/// (`--max-connections`): streams and calls in flight never hold every session.
pub const MCP_SESSIONS: usize = 128;
/// How long an unused MCP session lives, in seconds.
pub const MCP_SESSION_IDLE_SECS: u64 = 3600;
/// SSE streams one MCP session holds open at once.
pub const MCP_STREAMS: usize = 4;
/// Resource subscriptions one MCP connection holds.
pub const MCP_SUBSCRIPTIONS: usize = 1024;
/// The longest 2026-07-28 `requestState` token read back, in bytes.
pub const MCP_REQUEST_STATE: usize = 256 * 1024;
/// Values one `completion/complete` answer carries.
pub const MCP_COMPLETIONS: usize = 100;
/// Cancelled request ids one connection remembers.
pub const MCP_CANCELLED: usize = 1024;
/// How long a server-to-client request (elicitation, sampling, roots) waits for its answer.
pub const MCP_ANSWER_SECS: u64 = 300;
/// The most messages the stdio listener queues while a request waits for its client's answer;
/// one more is answered -32603 `server busy` at once.
pub const MCP_STDIO_QUEUE: usize = 32;
/// MCP stdio answers at least this long are written to stdout directly, not copied into the
/// writer's buffer, in bytes.
pub const MCP_STDIO_DIRECT_WRITE: usize = 16 * 1024;
/// The capacity a pipe on MCP stdio's stdout is widened to, in bytes: Linux's default
/// `fs.pipe-max-size`, which an unprivileged process may ask for.
pub const MCP_STDIO_PIPE: usize = 1024 * 1024;
/// The capacity git's stdout pipe is widened to, in bytes (`fs.pipe-max-size` by default, as
/// [`MCP_STDIO_PIPE`]): git writes a log or a patch without waiting for its reader, which
/// starts reading only once the kernel runs it again after git's `exec`.
pub const GIT_STDOUT_PIPE: usize = 1024 * 1024;
/// The room a tool result leaves for the JSON-RPC envelope of its answer, in bytes (an id of up
/// to 90 bytes, and the newline of stdio).
pub const MCP_ENVELOPE: usize = 128;
/// The bytes of strings from which a tool result's structured content is written on a thread
/// of its own while its text rendering is written (below, a thread costs more than it saves).
pub const MCP_RENDER_APART: usize = 1024 * 1024;
/// How often a task's client is asked to poll (`pollIntervalMs`), in milliseconds.
pub const MCP_TASK_POLL_MS: u64 = 500;
/// How often the subscriptions' feed looks at the knowledge index while someone listens, in
/// milliseconds.
pub const MCP_FEED_TICK_MS: u64 = 300;
/// How often a `/mcp` call answered as an SSE stream looks whether its client closed the
/// request while it waits for something to send, in milliseconds.
pub const MCP_SSE_WATCH_MS: u64 = 100;
/// How often an idle SSE stream sends a comment, so that a client gone away is noticed, in
/// seconds.
pub const MCP_SSE_KEEPALIVE_SECS: u64 = 15;
/// How long an approval a write left on the desk under `--approval ask` stays open for the
/// person's decision, in seconds (`mcp`/`serve --approval-timeout` changes it). No call waits
/// that long: the first is answered at once, and one made again waits at most
/// [`APPROVAL_CALL_WAIT_SECS`].
pub const APPROVAL_WAIT_SECS_DEFAULT: u64 = 600;

/// How long a call made again waits for the decision on its pending approval, in seconds:
/// under the shortest default request timeout of the clients agents use (60 s).
pub const APPROVAL_CALL_WAIT_SECS: u64 = 25;

/// Approvals of one process open on the desk, and calls of one process waiting there, at
/// once: one more is refused at once. Below the HTTP connection cap, so that the cockpit
/// always has room.
pub const APPROVAL_WAITS: usize = 32;

/// The largest file `files.read` opens.
pub const FILE_CAP: u64 = 8 * 1024 * 1024;
/// The most text one `files.read` answer carries.
pub const CONTENT_CAP: usize = 256 * 1024;
/// The longest line `files.search` returns; the rest is cut.
pub const LINE_CAP: usize = 1000;
/// The largest client configuration read (`mcp.projection`, `mcp.install`); a larger one is
/// `foreign`.
pub const CONFIG_CAP: u64 = 1024 * 1024;
/// The most notes one process holds, so that a long-lived server's memory (and the answer of
/// `session.note.list`, at most 1,000 × 16 KiB) stays bounded.
pub const MAX_NOTES: usize = 1000;
/// How long one git run may take, in seconds, before it is stopped.
pub const GIT_DEADLINE_SECS: u64 = 60;
/// The most bytes one git answer is read to.
pub const GIT_RUN_CAP: usize = 8 * 1024 * 1024;
/// The largest `.git/config` (or alternates file) read: a real one is a few KiB.
pub const GIT_CONFIG_CAP: u64 = 1 << 20;
/// The largest `.git` file, `gitdir` or `commondir` read: each holds one path.
pub const GIT_POINTER_CAP: u64 = 4096;
/// The most bytes of one whole file or blob the content gate reads (as `files.read` caps a
/// file).
pub const GATE_WHOLE_CAP: u64 = 8 * 1024 * 1024;
/// The most diff text a write's intent record carries; the rest is cut (`diff_truncated`).
pub const DIFF_CAP: usize = 64 * 1024;
/// The largest image a prompt embeds (1 MiB before base64).
pub const PROMPT_IMAGE_BYTES: u64 = 1024 * 1024;
/// Knowledge files larger than this (1 MiB) are findings, not objects.
pub const KNOWLEDGE_FILE_BYTES: u64 = 1024 * 1024;
/// The longest refused value an `invalid_input` message quotes, in bytes of its JSON; a longer
/// one is named by its first characters and its length.
pub const ERROR_ECHO: usize = 120;

/// One limit of the policy.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// What is limited.
    pub what: &'static str,
    /// The value, as people read it.
    pub value: &'static str,
    /// The value in its unit (`None`: several values, given in `value`).
    pub amount: Option<u64>,
    /// Where the code enforces it.
    pub enforced: &'static str,
    /// The answer over MCP (stdio and `/mcp`).
    pub mcp: &'static str,
    /// The answer over the HTTP API.
    pub http: &'static str,
    /// The answer on the command line.
    pub cli: &'static str,
}

/// Every limit, in the order of the bytes' path: transport, parser, capability.
pub const TABLE: &[Limit] = &[
    Limit {
        what: "MCP stdio line (one message)",
        value: "4 MiB",
        amount: Some(STDIO_LINE as u64),
        enforced: "mcp/src/stdio.rs `read_line` (the rest of the line is read and dropped)",
        mcp: "-32600 `invalid request: the line exceeds … bytes`, id null; next line served",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "HTTP request body",
        value: "1 MiB (`serve --max-body`)",
        amount: Some(HTTP_BODY_DEFAULT as u64),
        enforced: "vendor/tiny_http/src/serve.rs `Client::request` (patch 7: the connection reads the body whole, at most the limit + 1 bytes, before the request takes a worker; a body declared larger is never read) and http/src/routes.rs `read_body` (declared length first, then the bounded read)",
        mcp: "413 problem `too_large` at `/mcp`",
        http: "413 problem `too_large`",
        cli: "n/a",
    },
    Limit {
        what: "HTTP connections open at once",
        value: "256 (`serve --max-connections`)",
        amount: Some(HTTP_CONNECTIONS_DEFAULT as u64),
        enforced: "vendor/tiny_http/src/serve.rs `place` and `evict` (patch 7): at the cap, the connection idle or stuck in an incomplete request the longest is closed for the newcomer; one with a complete request (waiting, running, answering) never is",
        mcp: "at `/mcp` too: a further client takes the place of the connection idle or stuck the longest; it waits only while every connection has a complete request",
        http: "a further client takes the place of the connection idle or stuck the longest; it waits only while every connection has a complete request",
        cli: "n/a",
    },
    Limit {
        what: "HTTP request deadline (head and body, from the first byte; then the answer's write)",
        value: "10 s (`serve --request-timeout`, at most `--timeout`)",
        amount: Some(HTTP_REQUEST_SECS_DEFAULT),
        enforced: "vendor/tiny_http/src/serve.rs `Client::fill` and `Client::write_all` (patch 7): each read or write waits only for the time left",
        mcp: "408, connection closed (an answer not written in time: connection closed)",
        http: "408, connection closed (an answer not written in time: connection closed)",
        cli: "n/a",
    },
    Limit {
        what: "HTTP keep-alive connection idle between requests",
        value: "30 s (`serve --timeout`)",
        amount: Some(HTTP_IDLE_SECS_DEFAULT),
        enforced: "vendor/tiny_http/src/serve.rs `Client::run` (patch 7), the socket's inherited `SO_RCVTIMEO`",
        mcp: "connection closed, no answer",
        http: "connection closed, no answer",
        cli: "n/a",
    },
    Limit {
        what: "HTTP request line or header line",
        value: "8 KiB",
        amount: Some(HTTP_HEAD_LINE as u64),
        enforced: "vendor/tiny_http/src/client.rs `MAX_LINE` (patch 2), read by serve.rs `Client::head` (patch 7)",
        mcp: "431, connection closed",
        http: "431, connection closed",
        cli: "n/a",
    },
    Limit {
        what: "HTTP header lines per request",
        value: "100",
        amount: Some(HTTP_HEAD_LINES as u64),
        enforced: "vendor/tiny_http/src/client.rs `MAX_HEADERS` (patch 2), read by serve.rs `Client::head` (patch 7)",
        mcp: "431, connection closed",
        http: "431, connection closed",
        cli: "n/a",
    },
    Limit {
        what: "JSON nesting depth",
        value: "127 levels",
        amount: Some(JSON_DEPTH as u64),
        enforced:
            "serde_json's recursion limit, at every JSON parse (stdio line, `/mcp` body, POST body)",
        mcp: "-32700 `parse error: recursion limit exceeded`",
        http: "400 problem `invalid_input`, pointer ``",
        cli: "exit 2 `error[invalid_input]` (`call` input)",
    },
    Limit {
        what: "MCP stdio messages queued while a request waits for its client's answer",
        value: "32",
        amount: Some(MCP_STDIO_QUEUE as u64),
        enforced: "mcp/src/stdio.rs `listen` (`QUEUE`)",
        mcp: "-32603 `server busy: … requests wait …` for a further request at once; a further unparsable line -32600",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "approvals of one process open on the approval desk, and its calls waiting there",
        value: "32 each",
        amount: Some(APPROVAL_WAITS as u64),
        enforced: "core/src/store/desk.rs `submit` (open approvals), core/src/interact.rs `on_the_desk` (`Waiting`); a waiting call holds no HTTP worker (tiny_http patch 11, `idle`)",
        mcp: "`not_approved` at once, naming the approvals that wait, for a further write",
        http: "403 problem `not_approved` at once, naming them, for a further write",
        cli: "n/a",
    },
    Limit {
        what: "MCP list page",
        value: "100 items",
        amount: Some(PAGE_ITEMS as u64),
        enforced: "mcp/src/methods/mod.rs `page` (`nextCursor` for the rest)",
        mcp: "a foreign, stale or overlong (> 256 chars) cursor is -32602",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "MCP tasks kept at once (tasks extension, 2026-07-28)",
        value: "64",
        amount: Some(MCP_TASKS as u64),
        enforced: "mcp/src/tasks.rs `Table::create` (expired tasks go first)",
        mcp: "no task is created: a tool whose `task` is optional answers the call itself; a `required` one is -32603",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "MCP task lifetime (its `ttlMs`)",
        value: "5 minutes",
        amount: Some(MCP_TASK_TTL_MS),
        enforced: "mcp/src/tasks.rs `Table::expire` (a task still running is cancelled; an unanswered input request fails then)",
        mcp: "`tasks/*` for an expired task is -32602",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "`files.read` file size",
        value: "8 MiB",
        amount: Some(FILE_CAP),
        enforced: "core/src/handlers/files.rs `FILE_CAP`",
        mcp: "tool result `isError`, code `refused`, `data.rule` `size_cap`",
        http: "403 problem `refused`",
        cli: "exit 4 `error[refused]`",
    },
    Limit {
        what: "`files.search` file size",
        value: "8 MiB",
        amount: Some(FILE_CAP),
        enforced: "core/src/handlers/files.rs `search` (through access/src/rootfs.rs `read_capped`: never more than the cap plus one byte is read)",
        mcp: "not an error: the file is not searched, counted in `skipped_large_files`",
        http: "not an error: the file is not searched, counted in `skipped_large_files`",
        cli: "not an error: the file is not searched, counted in `skipped_large_files`",
    },
    Limit {
        what: "ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`) and client configurations (`.mcp.json`, ...)",
        value: "1 MiB",
        amount: Some(CONFIG_CAP),
        enforced: "core/src/handlers/files.rs `IGNORE_FILE_CAP`, core/src/handlers/mcp.rs `CONFIG_CAP` (through access/src/rootfs.rs `read_capped`)",
        mcp: "not an error: a larger ignore file is not honoured; a larger configuration is `foreign` in `mcp_projection`",
        http: "not an error: as over MCP",
        cli: "not an error: as over MCP (`mcp --inspect` says `foreign`)",
    },
    Limit {
        what: "`files.read` text per answer",
        value: "256 KiB",
        amount: Some(CONTENT_CAP as u64),
        enforced: "core/src/handlers/files.rs `CONTENT_CAP` (the window is cut, `truncated: true`)",
        mcp: "not an error: a shorter window",
        http: "not an error: a shorter window",
        cli: "not an error: a shorter window",
    },
    Limit {
        what: "`files.search` line length",
        value: "1000 bytes",
        amount: Some(LINE_CAP as u64),
        enforced: "core/src/handlers/files.rs `LINE_CAP` (the line is cut)",
        mcp: "not an error: a cut line",
        http: "not an error: a cut line",
        cli: "not an error: a cut line",
    },
    Limit {
        what: "items per answer: `files.read` lines / `files.search` matches / `repo.log` commits / `knowledge.list` objects / `knowledge.search` hits / `audit.list` records",
        value: "100000 / 10000 / 1000 / 500 / 100 / 500",
        amount: None,
        enforced: "the manifests' input schemas (`limit.maximum`), checked by core/src/execute.rs",
        mcp: "tool result `isError`, code `invalid_input`, pointer `/limit`",
        http: "400 problem `invalid_input`, pointer `/limit`",
        cli: "exit 2 `error[invalid_input]`",
    },
    Limit {
        what: "one git run (`repo.*` capabilities; the resident revision resolver while it answers)",
        value: "60 s",
        amount: Some(GIT_DEADLINE_SECS),
        enforced: "access/src/git.rs `Watch` (a watchdog thread kills the run through a pidfd; `SENESCHAL_GIT_DEADLINE_MS` shortens it)",
        mcp: "tool result `isError`, code `internal` (`git did not finish within … s`)",
        http: "500 problem `internal`",
        cli: "exit 1 `error[internal]`",
    },
    Limit {
        what: "one git answer (`repo.log`, `repo.show`, `repo.blame`, `repo.branches`, `repo.status`; `repo.diff` has its own caps)",
        value: "8 MiB",
        amount: Some(GIT_RUN_CAP as u64),
        enforced: "access/src/git.rs `run` and `run_capped` (stdout read to the cap, then the run is killed, never read to its end); the readers keep the whole records read and say `truncated`",
        mcp: "not an error: `truncated: true` (`internal` where a partial answer means nothing)",
        http: "not an error: `truncated: true`",
        cli: "not an error: `truncated: true`",
    },
    Limit {
        what: "the repository's `.git/config` and `objects/info/alternates` (read to derive the configuration git is given)",
        value: "1 MiB",
        amount: Some(GIT_CONFIG_CAP),
        enforced: "access/src/gitdir.rs `read_capped`",
        mcp: "tool result `isError`, code `refused`, `data.rule` `git_pinned`",
        http: "403 problem `refused`",
        cli: "exit 4 `error[refused]`",
    },
    Limit {
        what: "a linked worktree's pointer files (`.git`, `gitdir`, `commondir`: one path each)",
        value: "4 KiB",
        amount: Some(GIT_POINTER_CAP),
        enforced: "access/src/gitdir.rs `read_pointer`",
        mcp: "tool result `isError`, code `refused`, `data.rule` `git_pinned`",
        http: "403 problem `refused`",
        cli: "exit 4 `error[refused]`",
    },
    Limit {
        what: "MCP sessions over Streamable HTTP",
        value: "128 live beside one per connection (`serve --max-connections`); one unused for 1 hour expires",
        amount: Some(MCP_SESSIONS as u64),
        enforced: "mcp/src/sse.rs `Sessions` (`MAX_SESSIONS`, `IDLE`), sized in mcp/src/streamable.rs `Mcp::new`",
        mcp: "at `/mcp`: a new session takes the place of one with no stream open and no call in flight: one never used after its `initialize` first, else the one unused longest; an expired one answers 404",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "SSE streams per MCP session",
        value: "4",
        amount: Some(MCP_STREAMS as u64),
        enforced: "mcp/src/sse.rs `open_stream` (`MAX_STREAMS`)",
        mcp: "a further GET stream is refused (409)",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "resource subscriptions per MCP connection",
        value: "1024",
        amount: Some(MCP_SUBSCRIPTIONS as u64),
        enforced: "mcp/src/live.rs `subscribe` (`MAX_SUBSCRIPTIONS`)",
        mcp: "`resources/subscribe` beyond it is -32602",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "2026-07-28 `requestState` token",
        value: "256 KiB",
        amount: Some(MCP_REQUEST_STATE as u64),
        enforced: "mcp/src/mrtr.rs `MAX_STATE` (a longer one is never parsed)",
        mcp: "the state is not honoured: the round starts again",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "values per `completion/complete` answer",
        value: "100",
        amount: Some(MCP_COMPLETIONS as u64),
        enforced: "mcp/src/model.rs `MAX_COMPLETIONS`",
        mcp: "not an error: `hasMore: true`, `total` counts all",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "cancelled request ids remembered per MCP connection",
        value: "1024",
        amount: Some(MCP_CANCELLED as u64),
        enforced: "mcp/src/link.rs `MAX_CANCELLED` (the oldest is forgotten first)",
        mcp: "not an error",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "a server-to-client request (elicitation, sampling, roots) waiting for its answer",
        value: "5 minutes",
        amount: Some(MCP_ANSWER_SECS),
        enforced: "mcp/src/link.rs `ANSWER_TIMEOUT`",
        mcp: "the call answers as if declined (`not_approved` for an approval)",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "an approval open on the approval desk for the person's decision (`--approval ask`, no client that can be asked)",
        value: "600 s (`--approval-timeout`)",
        amount: Some(APPROVAL_WAIT_SECS_DEFAULT),
        enforced: "core/src/interact.rs `on_the_desk`, core/src/store/desk.rs `find`",
        mcp: "the first call: `not_approved` tool result at once with `data.pending` (nothing written); when the time is over, the approval is withdrawn and a call made again asks again",
        http: "403 `not_approved` with `pending`, the same",
        cli: "n/a (the command line asks on its terminal, or takes --yes)",
    },
    Limit {
        what: "a call made again waiting for the decision on its pending approval",
        value: "25 s",
        amount: Some(APPROVAL_CALL_WAIT_SECS),
        enforced: "core/src/interact.rs `on_the_desk` (`DESK_CALL_WAIT`); a task waits as long as the approval is open",
        mcp: "`not_approved` tool result with `data.pending` again, the approval left open",
        http: "403 `not_approved` with `pending`, the same",
        cli: "n/a",
    },
    Limit {
        what: "prompt image size (before base64)",
        value: "1 MiB",
        amount: Some(PROMPT_IMAGE_BYTES),
        enforced: "knowledge/src/prompts.rs `image` (through access/src/rootfs.rs `read_capped`), after the content gate",
        mcp: "`prompts/get` is a JSON-RPC error naming the image",
        http: "n/a",
        cli: "n/a",
    },
    Limit {
        what: "session notes per process",
        value: "1000",
        amount: Some(MAX_NOTES as u64),
        enforced: "core/src/handlers/session.rs `MAX_NOTES`",
        mcp: "tool result `isError`, code `refused`, `data.rule` `note_cap`",
        http: "403 problem `refused`",
        cli: "n/a (each call is a process of its own)",
    },
    Limit {
        what: "knowledge file size (read and written)",
        value: "1 MiB",
        amount: Some(KNOWLEDGE_FILE_BYTES),
        enforced: "knowledge/src/scan.rs `read_object` (a file listed larger is never opened; the handle's length is checked before reading) and knowledge/src/parse.rs `parse_bytes`; core/src/handlers/writes.rs `compose` (before anything is written)",
        mcp: "reading: a finding in `knowledge_check`, `not_found` for its URI; a write: tool result `isError`, code `invalid_input`, pointer `/body`",
        http: "reading: a finding, 404 `not_found`; a write: 400 problem `invalid_input`, pointer `/body` (413 first when over `--max-body`)",
        cli: "`knowledge check` exit 11; `knowledge get` exit 3; a write: exit 2 `error[invalid_input]`",
    },
    Limit {
        what: "file write size (`files.write`, `files.edit`: the new bytes)",
        value: "8 MiB",
        amount: Some(GATE_WHOLE_CAP),
        enforced: "core/src/handlers/edit.rs `admit` (before anything is written; `files.write`'s `content` also by its schema's `maxLength`)",
        mcp: "tool result `isError`, code `refused`, `data.rule` `size_cap`",
        http: "403 problem `refused` (413 first when over `--max-body`)",
        cli: "exit 4 `error[refused]`",
    },
    Limit {
        what: "edits per `files.edit` call",
        value: "100",
        amount: Some(100),
        enforced: "the manifest's schema (`maxItems`), checked by core/src/execute.rs `validate_input`",
        mcp: "tool result `isError`, code `invalid_input`, pointer `/edits`",
        http: "400 problem `invalid_input`",
        cli: "exit 2 `error[invalid_input]`",
    },
    Limit {
        what: "paths per `files.read` call",
        value: "50",
        amount: Some(50),
        enforced: "the manifest's schema (`maxItems`), checked by core/src/execute.rs `validate_input`",
        mcp: "tool result `isError`, code `invalid_input`, pointer `/paths`",
        http: "400 problem `invalid_input`",
        cli: "exit 2 `error[invalid_input]`",
    },
    Limit {
        what: "a refused value quoted in an input's error message",
        value: "120 bytes of its JSON (then its first characters and its length)",
        amount: Some(ERROR_ECHO as u64),
        enforced: "core/src/execute.rs `validate_input`",
        mcp: "tool result `isError`, code `invalid_input`, the message naming the value short",
        http: "400 problem `invalid_input`, the detail naming the value short",
        cli: "exit 2 `error[invalid_input]`, the message naming the value short",
    },
    Limit {
        what: "diff carried by a write's audit record",
        value: "64 KiB (then cut, `diff_truncated`)",
        amount: Some(DIFF_CAP as u64),
        enforced: "core/src/store/mod.rs `Shown::add`",
        mcp: "n/a (the write's own answer carries its whole diff)",
        http: "n/a",
        cli: "n/a",
    },
];

/// The table as Markdown, the way docs/ROBUSTNESS.md carries it.
pub fn markdown() -> String {
    let mut out = String::from(
        "| Limit | Value | Enforced in | MCP | HTTP | CLI |\n|---|---|---|---|---|---|\n",
    );
    for l in TABLE {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            l.what, l.value, l.enforced, l.mcp, l.http, l.cli
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn serde_json_stops_at_the_documented_depth() {
        // The limit is serde_json's; if an upgrade moved it, this test says so.
        assert!(serde_json::from_str::<serde_json::Value>(&nested(JSON_DEPTH)).is_ok());
        let e = serde_json::from_str::<serde_json::Value>(&nested(JSON_DEPTH + 1)).unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
    }

    #[test]
    fn the_table_values_match_the_constants() {
        let amount = |what: &str| {
            TABLE
                .iter()
                .find(|l| l.what.starts_with(what))
                .and_then(|l| l.amount)
        };
        assert_eq!(amount("MCP stdio line"), Some(4 << 20));
        assert_eq!(amount("HTTP request body"), Some(1 << 20));
        assert_eq!(amount("`files.read` file size"), Some(8 << 20));
        assert_eq!(amount("`files.search` file size"), Some(8 << 20));
        assert_eq!(amount("ignore files"), Some(1 << 20));
        assert_eq!(amount("knowledge file size"), Some(1 << 20));
        assert_eq!(amount("session notes"), Some(1000));
        assert_eq!(amount("HTTP connections"), Some(256));
        assert_eq!(amount("HTTP request deadline"), Some(10));
        assert_eq!(amount("HTTP keep-alive"), Some(30));
        assert_eq!(amount("file write size"), Some(8 << 20));
        assert_eq!(amount("diff carried"), Some(64 << 10));
        assert_eq!(amount("MCP stdio messages queued"), Some(32));
        assert_eq!(amount("approvals of one process open"), Some(32));
        assert_eq!(amount("an approval open on"), Some(600));
        assert_eq!(amount("a call made again waiting"), Some(25));
    }

    #[test]
    fn the_report_carries_the_table() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/ROBUSTNESS.md"
        ))
        .expect("docs/ROBUSTNESS.md exists");
        assert!(
            doc.contains(&markdown()),
            "docs/ROBUSTNESS.md does not carry limits::markdown(); paste it:\n{}",
            markdown()
        );
    }
}
