//! What a call in flight can do with whoever made it: be confirmed before it runs, ask for
//! input, report progress and log lines, and notice that it was cancelled.
//!
//! Each transport implements [`Peer`] for the calls it carries (MCP over stdio and over
//! Streamable HTTP in each era, the HTTP API, the command line) and hands it to
//! [`crate::execute::execute_index`] in its [`crate::execute::Caller`]; the executor and the
//! handlers reach it through the call's [`crate::context::Call`] (a value, never a thread's
//! state), never through a transport. A call made with [`NoPeer`] cannot ask anyone, so
//! whatever needs an answer falls to the process's approval policy — the safe side.

use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use seneschal_access::error::{CapabilityError, ErrorCode};
use seneschal_access::transport::Transport;
use seneschal_model::policy::Approval;

/// What asking the client produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The client's answer: the `result` of its response to the request.
    Answered(Value),
    /// The request travels with the call's answer (an MCP 2026-07-28 input-required result):
    /// the call must stop now, and it is made again carrying the answer.
    Deferred,
    /// The client cannot be asked (it declared no such capability, or the transport has no
    /// way back to it); the reason, for an error message.
    Unavailable(String),
    /// The client answered with an error, or did not answer in time; the reason.
    Failed(String),
}

/// What the approval gate asks whoever approves one call: the typed question every
/// transport renders its own way (an MCP elicitation form or input-required result, the HTTP
/// API's confirmation token, the terminal's y/N prompt); the desk keeps the same question for
/// the person.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question's key within the call: a call made again (an MCP 2026-07-28
    /// input-required result) finds its answer under it.
    pub key: String,
    /// The capability asked about.
    pub capability: String,
    /// Its derived approval level.
    pub level: Approval,
    /// The question as a person reads it: the review sentence, a commit's message, the diff.
    pub text: String,
    /// The binding of the request and its plan ([`plan_binding`]): an answer approves this
    /// plan and no other.
    pub binding: String,
    /// What a `session` approval covers (`repository content`, `session state`).
    pub scope: Option<&'static str>,
    /// The grant offered beside the approval: the session's other writes for these minutes.
    pub grant_minutes: Option<u64>,
}

/// An answer to a [`Question`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Approved; `grant`: the offered grant was taken too.
    Approved {
        /// Whether the session's other writes are approved for the offered minutes.
        grant: bool,
    },
    /// Not approved: what the other end answered (`decline`, `cancel`), if anything.
    Refused(Option<String>),
    /// The answer travels with the call's answer (an MCP 2026-07-28 input-required result).
    Deferred,
    /// Nobody can be asked; why.
    Unavailable(String),
    /// The asking failed, or was not answered in time; why.
    Failed(String),
}

/// What a call asks its client's model ([`Peer::sample`]): one user message, with a system
/// prompt, and no context of the client's own.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampling {
    /// The system prompt.
    pub system: String,
    /// The user message.
    pub text: String,
    /// The longest answer wanted, in tokens.
    pub max_tokens: u64,
}

/// What the client's model answered ([`Peer::sample`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Sampled {
    /// Its text blocks, joined by lines, with the model's name and why it stopped.
    Text {
        /// The answer's text.
        text: String,
        /// The model that answered, as the client names it.
        model: Option<String>,
        /// Why it stopped, as the client says.
        stop_reason: Option<String>,
    },
    /// The request travels with the call's answer (an MCP 2026-07-28 input-required result).
    Deferred,
    /// The model cannot be asked; why.
    Unavailable(String),
    /// The asking failed, or the answer held no text; why.
    Failed(String),
}

/// Progress of one call reported from several of its threads: a figure is sent only above the
/// last one sent, and under a lock, so the caller sees it rise, in order.
pub struct Rising<'a> {
    peer: &'a dyn Peer,
    last: Mutex<f64>,
}

impl<'a> Rising<'a> {
    /// Progress of the call whose other end is `peer`, nothing reported yet.
    pub fn new(peer: &'a dyn Peer) -> Rising<'a> {
        Rising {
            peer,
            last: Mutex::new(f64::NEG_INFINITY),
        }
    }

    /// Reports `progress` (of `total`, with `message`) when it is above the last figure sent.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if progress > *last {
            *last = progress;
            self.peer.progress(progress, total, message);
        }
    }
}

/// The other end of one call.
pub trait Peer: Send + Sync {
    /// Asks whoever the peer stands for to approve the call described by `question`; each
    /// transport renders the question in its own form. Nobody by default.
    fn approve(&self, question: &Question) -> Answer {
        let _ = question;
        Answer::Unavailable("this transport cannot ask its client".into())
    }

    /// Asks the client's model for a completion of `request`. `key` as for [`Peer::ask`].
    fn sample(&self, key: &str, request: &Sampling) -> Sampled {
        let _ = (key, request);
        Sampled::Unavailable("this transport cannot ask its client's model".into())
    }

    /// Sends a raw MCP server-to-client request `method` with `params` and waits for its
    /// answer: the MCP transports' own door, used by [`Peer::approve`] and [`Peer::sample`]
    /// there and by the MCP conformance suite's fixture tools; the core asks through the typed
    /// doors above. `key` names the request within the call: a call that runs again
    /// (2026-07-28 input-required results) finds the answer to the same key.
    fn ask(&self, key: &str, method: &str, params: Value) -> Asked {
        let _ = (key, params);
        Asked::Unavailable(format!(
            "this transport cannot send `{method}` to its client"
        ))
    }

    /// Reports progress of the call to its caller, when the caller asked for progress:
    /// `progress` so far, of `total` when known, with an optional message; dropped when
    /// nobody listens.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = (progress, total, message);
    }

    /// Sends a log line about the call at `level`, when the client asked for that level;
    /// dropped when nobody listens.
    fn log(&self, level: LogLevel, data: Value) {
        let _ = (level, data);
    }

    /// Whether the call was cancelled (`notifications/cancelled`, `tasks/cancel`, a closed
    /// connection): long work checks it between steps and stops.
    fn cancelled(&self) -> bool {
        false
    }

    /// Whether the client declared the capability `name` (`elicitation`, `sampling`, `roots`).
    /// The approval gate asks a `session` call under `--approval ask` only of a peer that
    /// offers `elicitation`.
    fn offers(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Whether the capability `id` was approved earlier in this session (MCP connection or
    /// HTTP session), so that a `session`-level approval is asked once.
    fn approved_before(&self, id: &str) -> bool {
        let _ = id;
        false
    }

    /// Remembers for the rest of the session that the capability `id` was approved.
    fn remember_approval(&self, id: &str) {
        let _ = id;
    }

    /// Whether this peer's answer to an approval question is the person's decision: the
    /// process that started `seneschal mcp` on stdio, the person's own terminal, a request
    /// that carries the desk secret. On a transport any local process can reach (loopback
    /// HTTP, `/mcp` included), a client's answer counts only for a session that proved it
    /// holds what the person gave it; [`confirm`] asks nobody else, and their writes wait on
    /// the desk. No by default: a new peer is trusted only when it says why.
    fn vouched(&self) -> bool {
        false
    }

    /// Whether what [`Peer::remember_approval`] remembers lasts beyond this call: the peer's
    /// call belongs to a session (MCP stdio, an `/mcp` session). Only such a peer is offered
    /// a grant (the session's other writes approved for some minutes), and only such a
    /// peer's declined consent is remembered.
    fn remembers(&self) -> bool {
        false
    }

    /// What the session remembered under keys starting with `prefix` (the grants it holds).
    fn remembered(&self, prefix: &str) -> Vec<String> {
        let _ = prefix;
        Vec::new()
    }

    /// Whether the call may wait on the approval desk for the person as long as the desk
    /// gives them (a task: its client polls it). Any other call that must wait is answered at
    /// once that its approval is pending, and waits only when it is made again.
    fn waits(&self) -> bool {
        false
    }

    /// The client's name and version as it gave them (`clientInfo`), shown on the desk.
    fn client_info(&self) -> Option<Value> {
        None
    }

    /// How this peer's `accept` of an approval request was given, recorded in the audit as
    /// `approved_by`: `elicitation` (an MCP client's form, the default), `input` (a 2026-07-28
    /// input-required result answered), `token` (the HTTP API's confirmation token),
    /// `terminal` (a y/N prompt), `yes` (`--yes`), `harness` (the conformance harness).
    fn approver(&self) -> &'static str {
        "elicitation"
    }
}

/// The peer of an in-process runner (the conformance harness, a test's own calls): it
/// accepts every approval request it is asked, and the audit records the runner's name.
pub struct Accepting(pub &'static str);

impl Peer for Accepting {
    fn approve(&self, _question: &Question) -> Answer {
        Answer::Approved { grant: false }
    }

    fn offers(&self, name: &str) -> bool {
        name == "elicitation"
    }

    fn vouched(&self) -> bool {
        true
    }

    fn approver(&self) -> &'static str {
        self.0
    }
}

/// Whether `e` only says that the approval travels to the client with the call's answer (a
/// 2026-07-28 input-required result): nothing was refused yet, so nothing is audited.
pub fn is_pending(e: &CapabilityError) -> bool {
    e.code == seneschal_access::error::ErrorCode::NotApproved
        && e.data.as_ref().and_then(|d| d.get("pending")) == Some(&Value::Bool(true))
}

/// What the process does with a call that needs approval when its client cannot be asked
/// (`--approval` of `seneschal mcp` and `seneschal serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// A client that can be asked is asked; otherwise a `per_call` call is refused and a
    /// `session` one runs (it changes no repository byte).
    #[default]
    Ask,
    /// Nothing is asked nor refused for want of asking: the client's own confirmation UI
    /// (fed by the published approval hints) is trusted.
    TrustClient,
    /// A client that can be asked is asked; otherwise every `per_call` and `session` call is
    /// refused.
    Deny,
}

impl ApprovalPolicy {
    /// Every policy, the default first.
    pub const ALL: [ApprovalPolicy; 3] = [
        ApprovalPolicy::Ask,
        ApprovalPolicy::TrustClient,
        ApprovalPolicy::Deny,
    ];

    /// Its spelling on the command line and in `server.status`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::TrustClient => "trust-client",
            ApprovalPolicy::Deny => "deny",
        }
    }

    /// The policy of a spelling.
    pub fn parse(s: &str) -> Option<ApprovalPolicy> {
        ApprovalPolicy::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// The key of the approval request within a call ([`Peer::ask`]): `approval-` and the first
/// 16 hex digits of [`question_key`]'s digest of what the question shows.
pub const APPROVAL_KEY: &str = "approval";

/// The key an approval question is asked under: [`APPROVAL_KEY`] and a digest of its binding
/// and of everything it shows (the plan, the diff). A 2026-07-28 call made again carries the
/// answer under the key it was asked with; when the write it plans now differs from the one
/// shown (a file changed between the two rounds), the key differs, the answer is not found,
/// and the person is asked about the new plan.
pub fn question_key(described: &Described) -> String {
    let shown = crate::store::canonical(&json!({
        "binding": described.binding,
        "review": described.review,
        "detail": described.detail,
    }));
    let digest = seneschal_access::text::hex(&Sha256::digest(shown.as_bytes()));
    format!("{APPROVAL_KEY}-{}", &digest[..16])
}

/// What binds an approval to one exact request: `sha256:<hex>` of the capability id and its
/// input with object keys sorted and without `dry_run` (so a dry run and the call it plans
/// bind alike).
pub fn binding(id: &str, input: &Value) -> String {
    let mut i = input.clone();
    if let Some(m) = i.as_object_mut() {
        m.remove("dry_run");
    }
    let text = crate::store::canonical(&json!({"capability": id, "input": i}));
    format!(
        "sha256:{}",
        seneschal_access::text::hex(&Sha256::digest(text.as_bytes()))
    )
}

/// What binds an approval to one exact request and the plan its dry run showed: the
/// request's [`binding`], and when the write plans, `+sha256:<hex>` of its plan (the files it
/// creates, changes and deletes), so a token made for a plan naming `docs/adr/0001-x.md` does
/// not apply a write that would now create `0002`.
pub fn plan_binding(id: &str, input: &Value, plan: Option<&Value>) -> String {
    let b = binding(id, input);
    match plan {
        Some(p) => format!(
            "{b}+sha256:{}",
            seneschal_access::text::hex(&Sha256::digest(crate::store::canonical(p).as_bytes()))
        ),
        None => b,
    }
}

/// What one `session` approval covers: every read of the repository's content (files,
/// history, search, knowledge: one consent, whichever read asks first), or the process's
/// session state (notes). A session is asked once per scope, not once per tool.
pub fn consent_scope(id: &str) -> &'static str {
    match crate::registry::find(id) {
        Some((_, d)) if d.effect == seneschal_model::policy::Effect::ProcessState => {
            "session state"
        }
        _ => "repository content",
    }
}

/// The question a `session` approval asks: the scope it grants, and the read that asked.
fn consent_question(id: &str, review: &str) -> String {
    match consent_scope(id) {
        "session state" => format!(
            "Allow this client to keep session state (notes) in seneschal for the rest of this \
             session? Asked by: {review}"
        ),
        _ => format!(
            "Allow this client to read the repository's content (files, history, search \
             results, knowledge) for the rest of this session? Asked by: {review}"
        ),
    }
}

/// The key a session remembers its consent under.
fn consent_key(id: &str) -> String {
    format!("scope:{}", consent_scope(id))
}

/// The key a session remembers a declined consent under: it is not asked again.
fn declined_key(id: &str) -> String {
    format!("declined:{}", consent_scope(id))
}

/// The minutes of the grant a client's approval form offers (the first of
/// [`crate::store::desk::GRANT_MINUTES`]).
pub fn grant_for() -> u64 {
    crate::store::desk::GRANT_MINUTES[0]
}

/// The prefix of the keys a session remembers its grants under: `grant:<id>:<expires>`.
const GRANT_KEY: &str = "grant:";

/// Whether a grant the session of `peer` holds approves its next write: one whose time is
/// not over and which the person did not revoke on the `desk` (where it is recorded). Its id.
fn granted(peer: &dyn Peer, desk: Option<Desk<'_>>) -> Option<String> {
    let now = unix_now();
    peer.remembered(GRANT_KEY).into_iter().find_map(|key| {
        let (id, expires) = key.strip_prefix(GRANT_KEY)?.split_once(':')?;
        let live = expires.parse::<u64>().is_ok_and(|t| t >= now)
            && desk.is_none_or(|d| crate::store::desk::grant_holds(d.root, id).unwrap_or(false));
        live.then(|| id.to_string())
    })
}

/// Gives the session of `peer` a grant of `minutes`, given `by` (the cockpit, the terminal, a
/// client's form): recorded on the `desk` when there is one (where the person sees and
/// revokes it), remembered by the session.
fn give_grant(
    peer: &dyn Peer,
    transport: Transport,
    desk: Option<Desk<'_>>,
    minutes: u64,
    by: &str,
) -> Result<(), CapabilityError> {
    let expires = unix_now() + minutes * 60;
    let id = match desk {
        Some(d) => crate::store::desk::grant(
            d.root,
            json!({
                "minutes": minutes,
                "expires": expires,
                "by": by,
                "client": peer.client_info(),
                "transport": transport.as_str(),
            }),
        )?,
        None => seneschal_access::text::hex(&seneschal_access::text::random::<16>()),
    };
    peer.remember_approval(&format!("{GRANT_KEY}{id}:{expires}"));
    peer.log(
        LogLevel::Notice,
        json!({"grant": id, "minutes": minutes, "by": by}),
    );
    Ok(())
}

/// What the approval gate shows whoever approves a call ([`confirm`]'s `describe`).
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// The request's [`plan_binding`].
    pub binding: String,
    /// The review sentence.
    pub review: String,
    /// What the desk shows beside the sentence: the dry run's `plan` and `diff`, when the
    /// write plans (`null` otherwise).
    pub detail: Value,
}

/// How much of the question a person is shown: the sentence, each string of the plan, and
/// text of several lines (the diff, a commit's message), in characters
/// ([`seneschal_access::display`]: hidden characters escaped, the rest counted).
const SENTENCE_CHARS: usize = 2_000;
const PLAN_CHARS: usize = 1_000;
const LINES_CHARS: usize = 64 * 1024;
/// How much of a write's diff the question itself carries (a client's approval form); the
/// desk shows up to [`LINES_CHARS`].
const QUESTION_DIFF_CHARS: usize = 6_000;

impl Described {
    /// The question as a person reads it: the review sentence on one line, then a commit's
    /// whole message when the write records one, then the write's diff (cut visibly past
    /// `QUESTION_DIFF_CHARS`, where the desk shows more), each hidden character escaped.
    pub fn question(&self) -> String {
        let mut q = seneschal_access::display::for_person(&self.review, SENTENCE_CHARS);
        if let Some(m) = self.detail.get("message").and_then(Value::as_str) {
            q.push_str("\n\nMessage:\n");
            q.push_str(&seneschal_access::display::lines_for_person(m, LINES_CHARS));
        }
        if let Some(d) = self.detail.get("diff").and_then(Value::as_str) {
            if !d.is_empty() {
                q.push_str("\n\nChanges:\n");
                q.push_str(&seneschal_access::display::lines_for_person(
                    d,
                    QUESTION_DIFF_CHARS,
                ));
                if self.detail.get("diff_truncated") == Some(&Value::Bool(true)) {
                    q.push_str("\n… (the diff goes on past what a plan shows)");
                }
            }
        }
        if let Some(paths) = self.detail.get("diff_withheld").and_then(Value::as_array) {
            let paths: Vec<&str> = paths.iter().filter_map(Value::as_str).collect();
            if !paths.is_empty() {
                q.push_str(&format!(
                    "\n\nNo text diff for: {}",
                    seneschal_access::display::for_person(&paths.join(", "), PLAN_CHARS)
                ));
            }
        }
        q
    }

    /// What the desk shows beside the sentence, each string as a person may read it.
    fn shown_detail(&self) -> Value {
        seneschal_access::display::value_for_person(
            &self.detail,
            PLAN_CHARS,
            &["diff", "message"],
            LINES_CHARS,
        )
    }
}

/// Where a call that no client can confirm waits for the person, under `--approval ask`:
/// the approval desk of the repository at `root` (`.seneschal/desk/`), for at most `wait`.
#[derive(Debug, Clone, Copy)]
pub struct Desk<'a> {
    /// The repository root.
    pub root: &'a Path,
    /// How long the call waits for a decision (`--approval-timeout`).
    pub wait: Duration,
}

/// How often a call waiting on the desk looks for its decision.
const DESK_POLL: Duration = Duration::from_millis(150);
/// How often a call waiting on the desk reports progress.
const DESK_PROGRESS: Duration = Duration::from_secs(5);

/// The approval gate's decision for one call (the executor calls it after the profile and
/// schema checks, before the handler): `Ok(Some(how))` when it was approved (`how` is what
/// the audit records), `Ok(None)` when it runs without an approval (none needed, approved
/// earlier in the session, or a `session` call nobody could be asked about under `ask`), or
/// the `not_approved` refusal. `describe` gives the request's [`binding`] and the review
/// sentence shown to whoever approves; it runs only when someone is asked.
///
/// Under `ask`, a `per_call` call whose client cannot be asked waits on the `desk` (when the
/// process has one) for the person's decision.
#[allow(clippy::too_many_arguments)]
pub fn confirm(
    peer: &dyn Peer,
    transport: Transport,
    policy: ApprovalPolicy,
    desk: Option<Desk<'_>>,
    level: Approval,
    id: &str,
    describe: impl FnOnce() -> Described,
) -> Result<Option<&'static str>, CapabilityError> {
    if level == Approval::None {
        return Ok(None);
    }
    let refusal = |why: String| {
        CapabilityError::new(ErrorCode::NotApproved, why)
            .with_data(json!({"capability": id, "approval": level.as_str()}))
    };
    if level == Approval::Session {
        if peer.approved_before(&consent_key(id)) {
            return Ok(None);
        }
        if peer.approved_before(&declined_key(id)) {
            return Err(refusal(format!(
                "`{id}` was not approved: the person declined {} earlier in this session, so \
                 it is not asked again (a new session asks again)",
                consent_scope(id)
            )));
        }
    }
    if policy == ApprovalPolicy::TrustClient {
        return Ok(Some(ApprovalPolicy::TrustClient.as_str()));
    }
    // A write of a session the person gave a grant to runs without a question; it is planned,
    // shown on the desk's feed and audited like any other.
    if level == Approval::PerCall && granted(peer, desk).is_some() {
        return Ok(Some("grant"));
    }
    // Under `ask` a session call nobody can ask about runs: a peer whose client declared no
    // elicitation is not sent one (nor is the request built).
    if policy == ApprovalPolicy::Ask && level == Approval::Session && !peer.offers("elicitation") {
        return Ok(None);
    }
    let mut described = describe();
    if level == Approval::Session {
        described.review = consent_question(id, &described.review);
    }
    let offered = (level == Approval::PerCall && peer.remembers()).then(grant_for);
    let question = Question {
        key: question_key(&described),
        capability: id.to_string(),
        level,
        text: described.question(),
        binding: described.binding.clone(),
        scope: (level == Approval::Session).then(|| consent_scope(id)),
        grant_minutes: offered,
    };
    // A client's answer is the person's decision only where the peer vouches for it; anyone
    // else is not asked (under `ask`, a write waits on the desk).
    let answer = if peer.vouched() {
        peer.approve(&question)
    } else {
        Answer::Unavailable(
            "this client's session has not proved that it holds what the person gave it (the \
             desk secret), so its own answer approves nothing"
                .into(),
        )
    };
    match answer {
        Answer::Approved { grant } => {
            if level == Approval::Session {
                peer.remember_approval(&consent_key(id));
            }
            if let (true, Some(minutes)) = (grant, offered) {
                give_grant(peer, transport, desk, minutes, peer.approver())?;
            }
            Ok(Some(peer.approver()))
        }
        Answer::Refused(other) => {
            if level == Approval::Session && other.as_deref() == Some("decline") && peer.remembers()
            {
                peer.remember_approval(&declined_key(id));
            }
            Err(refusal(format!(
                "`{id}` was not approved: the client answered {}",
                other.as_deref().unwrap_or("without an action")
            )))
        }
        Answer::Deferred => Err(refusal(
            "approval pending: the call is made again with the client's answer".into(),
        )
        .with_data(json!({"pending": true}))),
        Answer::Unavailable(_)
            if policy == ApprovalPolicy::Ask && level == Approval::PerCall && desk.is_some() =>
        {
            on_the_desk(
                peer,
                transport,
                desk.expect("checked"),
                id,
                level,
                described,
                &refusal,
            )
        }
        Answer::Unavailable(why) | Answer::Failed(why) => {
            if policy == ApprovalPolicy::Ask && level == Approval::Session {
                return Ok(None);
            }
            Err(refusal(format!(
                "`{id}` needs approval ({}) and none was given: {why}. Approve it through an \
                 MCP client that declares elicitation, the approval desk of a server started \
                 with --approval ask (the cockpit, or `seneschal approvals`), --yes on the \
                 command line, or a server started with --approval trust-client",
                level.as_str(),
            ))
            .with_data(
                json!({"capability": id, "approval": level.as_str(), "policy": policy.as_str()}),
            ))
        }
    }
}

/// Where the person decided a pending approval (the audit's `approved_by`).
pub use crate::store::desk::Where as DecidedAt;

/// The approval desk as the person sees it: the writes that wait for a decision, of every
/// seneschal process serving the repository at `root`, oldest first.
pub fn pending_approvals(root: &Path) -> Result<Vec<Value>, CapabilityError> {
    crate::store::desk::list(root)
}

/// The person's decision on the pending approval `id`, made `at` the cockpit or a terminal,
/// with the grant of `grant` minutes to the asking session if they chose one: the approval
/// it decided, `not_found` when nothing waits under that id, `conflict` when it was decided
/// already.
pub fn decide(
    root: &Path,
    id: &str,
    approve: bool,
    at: DecidedAt,
    grant: Option<u64>,
) -> Result<Value, CapabilityError> {
    crate::store::desk::decide(root, id, approve, at, grant)
}

/// The grants that hold on the desk of the repository at `root`: sessions whose writes run
/// without a question until the grant's time is over or the person revokes it.
pub fn grants(root: &Path) -> Result<Vec<Value>, CapabilityError> {
    crate::store::desk::grants(root)
}

/// Revokes the grant `id`: its session's next write is asked again.
pub fn revoke(root: &Path, id: &str) -> Result<Value, CapabilityError> {
    crate::store::desk::revoke(root, id)
}

/// The grant minutes a person may choose with an approval.
pub use crate::store::desk::GRANT_MINUTES;

/// How a call waits on the desk: the transport's way to hold nothing it shares while it waits
/// (the HTTP server gives its worker back, tiny_http's `idle`). Set once by a server; a plain
/// wait elsewhere.
static WAIT: OnceLock<fn(&mut dyn FnMut())> = OnceLock::new();

/// Sets how calls wait on the desk in this process (a transport that must hold nothing shared while a call waits: the HTTP server); the first setting holds.
pub fn wait_with(wait: fn(&mut dyn FnMut())) {
    let _ = WAIT.set(wait);
}

/// Calls of one process waiting on the approval desk at once: a further write that would wait
/// is refused at once.
pub use seneschal_access::limits::APPROVAL_WAITS;

/// The calls of this process waiting on the desk.
static WAITING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A call counted among [`WAITING`] until dropped; `None` when
/// [`APPROVAL_WAITS`] wait already.
struct Waiting;

impl Waiting {
    fn enter() -> Option<Waiting> {
        use std::sync::atomic::Ordering;
        WAITING
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < APPROVAL_WAITS).then_some(n + 1)
            })
            .ok()
            .map(|_| Waiting)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// How long a call made again waits for the person's decision on the approval its first
/// call left on the desk: well under the shortest default request timeout of the clients
/// agents use (the TypeScript SDK's 60 s), so that a client never gives up first.
pub const DESK_CALL_WAIT: Duration =
    Duration::from_secs(seneschal_access::limits::APPROVAL_CALL_WAIT_SECS);

/// The first characters of a desk id, as the desk and the answers show it.
fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}

/// Puts the call on the approval desk, where the person decides it, and answers how it
/// stands:
///
/// - A call first met here is put on the desk and answered at once, `not_approved` with
///   `data.pending` (the approval's id, where the person decides, how long it stays open):
///   the agent knows at once what it waits for, and no client times out on the person.
/// - The same call made again (the same question: capability, input, plan) in the same
///   process finds that approval and waits for the decision for [`DESK_CALL_WAIT`]:
///   approved, it runs (the audit names where it was approved); declined, it is refused;
///   still undecided, it is answered pending again. A call whose plan changed meanwhile is
///   another question: the person is asked about the new plan.
/// - A task ([`Peer::waits`]) waits for the decision as long as the approval stays open.
///
/// An approval stays open for the desk's `wait` (`--approval-timeout`); then, or when its
/// waiting call is cancelled, it is withdrawn. A decision carries the grant the person chose.
fn on_the_desk(
    peer: &dyn Peer,
    transport: Transport,
    desk: Desk<'_>,
    id: &str,
    level: Approval,
    described: Described,
    refusal: &dyn Fn(String) -> CapabilityError,
) -> Result<Option<&'static str>, CapabilityError> {
    use crate::store::desk;
    let key = question_key(&described);
    let found = desk::find(desk.root, &key)?;
    let first = found.is_none();
    let (pending, expires) = match found {
        Some(p) => p,
        None => {
            let expires = unix_now() + desk.wait.as_secs().max(1);
            let record = json!({
                "capability": id,
                "approval": level.as_str(),
                "review": seneschal_access::display::for_person(&described.review, SENTENCE_CHARS),
                "binding": described.binding,
                "key": key,
                "detail": described.shown_detail(),
                "transport": transport.as_str(),
                "client": peer.client_info(),
                "can_grant": peer.remembers(),
                "expires": expires,
            });
            (desk::submit(desk.root, record, APPROVAL_WAITS)?, expires)
        }
    };
    let open_for = || expires.saturating_sub(unix_now()).max(1);
    let started = std::time::Instant::now();
    let pending_answer = |open: u64| {
        let s = short(&pending);
        refusal(format!(
            "approval pending: `{id}` waits for the person's decision as approval {s}; they \
             decide it in the cockpit of `seneschal serve` (http://127.0.0.1:7878/ by default) \
             or in their terminal. Make this same call again (the same arguments) to wait for \
             the decision and apply it: it stays open about {open} s more. Nothing was written."
        ))
        .with_data(json!({
            "capability": id,
            "approval": level.as_str(),
            "pending": true,
            "desk": pending,
            "open_for_s": open,
        }))
    };
    if first {
        peer.log(
            LogLevel::Notice,
            json!({"approval": "pending", "id": pending, "capability": id}),
        );
        if !peer.waits() {
            return Err(pending_answer(open_for()));
        }
    }
    // This call's share of the approval's time: all of it for a task, else a bounded wait.
    let until = if peer.waits() {
        Duration::from_secs(open_for())
    } else {
        DESK_CALL_WAIT
    };
    let Some(_waiting) = Waiting::enter() else {
        return Err(refusal(format!(
            "`{id}` does not wait for approval {}: {} calls of this process wait on the desk \
             already; make the same call again later",
            short(&pending),
            APPROVAL_WAITS
        )));
    };
    let where_to = format!(
        "waiting for the person's approval (approval {}): they decide it in the cockpit of \
         `seneschal serve` or in their terminal",
        short(&pending)
    );
    let mut reported: Option<std::time::Instant> = None;
    let mut made: Result<Option<desk::Decision>, CapabilityError> = Ok(None);
    let mut wait = || {
        made = (|| loop {
            if let Some(d) = desk::decision(desk.root, &pending)? {
                return Ok(Some(d));
            }
            let waited = started.elapsed();
            if peer.cancelled() || waited >= until || !desk::open(desk.root, &pending)? {
                return Ok(None);
            }
            if reported.is_none_or(|t| t.elapsed() >= DESK_PROGRESS) {
                peer.progress(
                    waited.as_secs_f64(),
                    Some(until.as_secs_f64()),
                    Some(&where_to),
                );
                reported = Some(std::time::Instant::now());
            }
            std::thread::sleep(DESK_POLL);
        })();
    };
    // The wait holds nothing the transport shares (an HTTP worker is given back meanwhile).
    match WAIT.get() {
        Some(through) => through(&mut wait),
        None => wait(),
    }
    let made = made?;
    let still_open = desk::open(desk.root, &pending)?;
    if made.is_none() && still_open && !peer.cancelled() {
        return Err(pending_answer(open_for()));
    }
    // The withdrawal answers a decision made after the last look, so none is lost.
    let last = desk::withdraw(desk.root, &pending)?;
    let made = made.or(last);
    match made {
        Some(d) if d.approve => {
            if let Some(minutes) = d.grant.filter(|_| peer.remembers()) {
                give_grant(peer, transport, Some(desk), minutes, d.by.as_str())?;
            }
            Ok(Some(d.by.as_str()))
        }
        Some(d) => Err(refusal(format!(
            "`{id}` was declined by the person (at the {}; approval {})",
            d.by.as_str(),
            short(&pending)
        ))),
        None if peer.cancelled() => Err(refusal(format!(
            "`{id}` was cancelled while it waited for approval {}",
            short(&pending)
        ))),
        None => Err(refusal(format!(
            "`{id}` was not approved: no decision on approval {} within {} s \
             (--approval-timeout); the call asks again when it is made again",
            short(&pending),
            desk.wait.as_secs()
        ))),
    }
}

/// How long an HTTP API confirmation token holds.
pub const TOKEN_TTL: Duration = Duration::from_secs(600);

/// The per-process random key of the confirmation tokens.
fn token_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(seneschal_access::text::random::<32>)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn token_mac(binding: &str, expires: u64) -> String {
    let msg = format!("seneschal-approval\n{expires}\n{binding}");
    seneschal_access::text::hex(&seneschal_access::text::hmac_sha256(
        token_key(),
        msg.as_bytes(),
    ))
}

/// A confirmation token for the request of `binding` ([`binding`]): `<expiry>.<mac>`, an
/// HMAC-SHA256 under a per-process random key, valid for [`TOKEN_TTL`].
pub fn approval_token(binding: &str) -> String {
    let expires = unix_now() + TOKEN_TTL.as_secs();
    format!("{expires}.{}", token_mac(binding, expires))
}

/// The tokens already presented (their MACs, with their expiry): a token is one decision,
/// applied once.
fn redeemed() -> &'static Mutex<std::collections::HashMap<String, u64>> {
    static USED: OnceLock<Mutex<std::collections::HashMap<String, u64>>> = OnceLock::new();
    USED.get_or_init(Mutex::default)
}

/// Redeems `token` for the request of `binding`: `true` once, when this process issued it for
/// that binding, it has not expired and it was never presented before; every later
/// presentation is `false`. Expired entries are forgotten as tokens are redeemed.
pub fn redeem_token(token: &str, binding: &str) -> bool {
    if !token_matches(token, binding) {
        return false;
    }
    let now = unix_now();
    let mut used = redeemed().lock().unwrap_or_else(|p| p.into_inner());
    used.retain(|_, expires| *expires >= now);
    let (expires, mac) = token.trim().split_once('.').unwrap_or_default();
    used.insert(mac.to_string(), expires.parse().unwrap_or(now))
        .is_none()
}

/// Whether `token` would be redeemed for the request of `binding` ([`redeem_token`]) without
/// redeeming it: a write the person decides on the desk may present it again when it is made
/// again; it is spent when it applies with the desk secret.
pub fn token_unspent(token: &str, binding: &str) -> bool {
    let (_, mac) = token.trim().split_once('.').unwrap_or_default();
    token_matches(token, binding)
        && !redeemed()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(mac)
}

/// Whether `token` was issued by this process for the request of `binding` and has not
/// expired.
pub fn token_matches(token: &str, binding: &str) -> bool {
    let Some((expires, mac)) = token.trim().split_once('.') else {
        return false;
    };
    let Ok(expires) = expires.parse::<u64>() else {
        return false;
    };
    expires >= unix_now()
        && seneschal_access::text::constant_time_eq(
            mac.as_bytes(),
            token_mac(binding, expires).as_bytes(),
        )
}

/// The peer of a call nobody can be asked about.
pub struct NoPeer;

impl Peer for NoPeer {}

/// The syslog severities of MCP's `logging/setLevel` and `notifications/message`, least
/// severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Its spelling on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level of a wire spelling.
    pub fn parse(s: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A peer that answers approval requests with `answer` and counts them.
    struct Answers {
        answer: Asked,
        asked: Mutex<Vec<Question>>,
        remembered: Mutex<Vec<String>>,
        vouched: bool,
    }

    impl Answers {
        fn new(answer: Asked) -> Arc<Answers> {
            Arc::new(Answers {
                answer,
                asked: Mutex::default(),
                remembered: Mutex::default(),
                vouched: true,
            })
        }
    }

    impl Peer for Answers {
        fn approve(&self, question: &Question) -> Answer {
            assert!(question.key.starts_with(APPROVAL_KEY), "{}", question.key);
            self.asked.lock().unwrap().push(question.clone());
            match &self.answer {
                Asked::Answered(a) => match a.get("action").and_then(Value::as_str) {
                    Some("accept") => Answer::Approved { grant: false },
                    other => Answer::Refused(other.map(str::to_string)),
                },
                Asked::Deferred => Answer::Deferred,
                Asked::Unavailable(why) => Answer::Unavailable(why.clone()),
                Asked::Failed(why) => Answer::Failed(why.clone()),
            }
        }
        fn approved_before(&self, id: &str) -> bool {
            self.remembered.lock().unwrap().iter().any(|r| r == id)
        }
        fn offers(&self, name: &str) -> bool {
            name == "elicitation"
        }
        fn remember_approval(&self, id: &str) {
            self.remembered.lock().unwrap().push(id.into());
        }
        fn vouched(&self) -> bool {
            self.vouched
        }
    }

    #[test]
    fn a_client_the_peer_does_not_vouch_for_is_never_asked_and_its_yes_counts_for_nothing() {
        use ApprovalPolicy::*;
        let stranger = Arc::new(Answers {
            vouched: false,
            ..Arc::into_inner(Answers::new(Asked::Answered(json!({"action": "accept"})))).unwrap()
        });
        for policy in [Ask, Deny] {
            let e = gate(&stranger, policy, Approval::PerCall).unwrap_err();
            assert!(e.starts_with("not_approved"), "{e}");
        }
        // A read's consent under `ask` falls to the policy, as for a client that cannot be
        // asked; under `deny` it is refused.
        assert_eq!(gate(&stranger, Ask, Approval::Session), Ok(None));
        assert!(gate(&stranger, Deny, Approval::Session).is_err());
        assert!(
            stranger.asked.lock().unwrap().is_empty(),
            "nobody was asked"
        );
        // The person's own policy still holds.
        assert_eq!(
            gate(&stranger, TrustClient, Approval::PerCall),
            Ok(Some("trust-client"))
        );
    }

    fn gate(
        peer: &Arc<Answers>,
        policy: ApprovalPolicy,
        level: Approval,
    ) -> Result<Option<&'static str>, String> {
        confirm(
            &**peer,
            Transport::Cli,
            policy,
            None,
            level,
            "demo.write",
            || Described {
                binding: "sha256:b".into(),
                review: "Write demo".into(),
                detail: Value::Null,
            },
        )
        .map_err(|e| format!("{}: {}", e.code.as_str(), e.message))
    }

    #[test]
    fn an_accepted_request_runs_once_per_session_and_a_declined_one_is_refused() {
        use ApprovalPolicy::*;
        let yes = Answers::new(Asked::Answered(json!({"action": "accept"})));
        assert_eq!(gate(&yes, Ask, Approval::PerCall), Ok(Some("elicitation")));
        assert_eq!(gate(&yes, Deny, Approval::PerCall), Ok(Some("elicitation")));
        let sent = yes.asked.lock().unwrap()[0].clone();
        assert_eq!(sent.text, "Write demo");
        assert_eq!(sent.level, Approval::PerCall);
        assert_eq!(sent.capability, "demo.write");
        assert_eq!(sent.binding, "sha256:b");
        assert_eq!((sent.scope, sent.grant_minutes), (None, None));
        // A session approval is asked once, then remembered; a per-call one every time.
        assert_eq!(gate(&yes, Ask, Approval::Session), Ok(Some("elicitation")));
        assert_eq!(gate(&yes, Ask, Approval::Session), Ok(None));
        assert_eq!(gate(&yes, Ask, Approval::PerCall), Ok(Some("elicitation")));
        assert_eq!(yes.asked.lock().unwrap().len(), 4);
        // No approval level: nobody is asked.
        assert_eq!(gate(&yes, Deny, Approval::None), Ok(None));
        assert_eq!(yes.asked.lock().unwrap().len(), 4);
        for action in ["decline", "cancel"] {
            let no = Answers::new(Asked::Answered(json!({ "action": action })));
            for policy in [Ask, Deny] {
                for level in [Approval::PerCall, Approval::Session] {
                    let e = gate(&no, policy, level).unwrap_err();
                    assert!(e.starts_with("not_approved:") && e.contains(action), "{e}");
                }
            }
            assert!(no.remembered.lock().unwrap().is_empty());
        }
        let e = gate(&Answers::new(Asked::Deferred), Ask, Approval::PerCall).unwrap_err();
        assert!(e.contains("approval pending"), "{e}");
    }

    #[test]
    fn a_client_that_cannot_be_asked_meets_the_policy() {
        use ApprovalPolicy::*;
        for cannot in [
            Asked::Unavailable("no way back".into()),
            Asked::Failed("timed out".into()),
        ] {
            let p = Answers::new(cannot);
            // ask: a write is refused (saying how to approve), a session call runs.
            let e = gate(&p, Ask, Approval::PerCall).unwrap_err();
            assert!(e.starts_with("not_approved:"), "{e}");
            assert!(e.contains("--yes") && e.contains("trust-client"), "{e}");
            assert_eq!(gate(&p, Ask, Approval::Session), Ok(None));
            // deny: both are refused.
            assert!(gate(&p, Deny, Approval::PerCall).is_err());
            assert!(gate(&p, Deny, Approval::Session).is_err());
        }
        // trust-client asks nobody and runs everything.
        let p = Answers::new(Asked::Answered(json!({"action": "decline"})));
        assert_eq!(
            gate(&p, TrustClient, Approval::PerCall),
            Ok(Some("trust-client"))
        );
        assert_eq!(
            gate(&p, TrustClient, Approval::Session),
            Ok(Some("trust-client"))
        );
        assert!(p.asked.lock().unwrap().is_empty());
        // Outside any scope nobody can be asked: the policy decides.
        assert!(confirm(
            &NoPeer,
            Transport::Cli,
            Ask,
            None,
            Approval::PerCall,
            "x",
            Described::default
        )
        .is_err());
        assert_eq!(
            confirm(
                &NoPeer,
                Transport::Cli,
                Ask,
                None,
                Approval::Session,
                "x",
                || panic!("a client that offers no elicitation is not asked: no request is built")
            ),
            Ok(None)
        );
    }

    #[test]
    fn a_token_confirms_its_own_request_only_and_not_after_it_expires() {
        let a = binding(
            "knowledge.create",
            &json!({"kind": "adr", "b": 1, "dry_run": true}),
        );
        assert_eq!(
            a,
            binding("knowledge.create", &json!({"b": 1, "kind": "adr"})),
            "key order and dry_run do not change the binding"
        );
        let t = approval_token(&a);
        assert!(token_matches(&t, &a));
        assert!(!token_matches(
            &t,
            &binding("knowledge.create", &json!({"kind": "adr", "b": 2}))
        ));
        assert!(!token_matches(
            &t,
            &binding("knowledge.update", &json!({"kind": "adr", "b": 1}))
        ));
        let (expires, mac) = t.split_once('.').unwrap();
        let later = expires.parse::<u64>().unwrap() + 1;
        assert!(
            !token_matches(&format!("{later}.{mac}"), &a),
            "the expiry is under the MAC"
        );
        let expired = unix_now() - 1;
        assert!(!token_matches(
            &format!("{expired}.{}", token_mac(&a, expired)),
            &a
        ));
        assert!(!token_matches("", &a) && !token_matches("1.2", &a) && !token_matches("x.y", &a));
    }

    #[test]
    fn nobody_is_asked_through_no_peer() {
        assert!(matches!(
            NoPeer.ask("k", "elicitation/create", Value::Null),
            Asked::Unavailable(_)
        ));
        assert!(matches!(
            NoPeer.approve(&Question {
                key: "approval:x".into(),
                capability: "demo.write".into(),
                level: Approval::PerCall,
                text: String::new(),
                binding: String::new(),
                scope: None,
                grant_minutes: None,
            }),
            Answer::Unavailable(_)
        ));
    }
}
