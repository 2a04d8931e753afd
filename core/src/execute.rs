//! The one executor: look up → policy → validate → handler → disclosure → result.
//!
//! A handler returns its generated `Output` struct (a wrong shape does not compile); the
//! generated dispatch serializes it once, to the `serde_json::Value` that disclosure redacts
//! and the transports print. A handler that reads a long list from a source that writes it
//! bit by bit (git) may give the list's items one by one as it reads them ([`Call::part`]):
//! they are serialized and disclosed here meanwhile ([`crate::parts::Parts`]), and the answer is the same.
//!
//! **Architecture invariant:** every transport (CLI, MCP, HTTP) calls [`execute`]; nothing
//! else calls a handler, and there is no transport-only branch below this line.
//!
//! **Disclosure choke point:** the answer of every capability whose `disclosure` is
//! `repository` — and its error: message, pointer and data — passes
//! [`seneschal_access::redact::redact_value`] here, after the handler and before any transport, every
//! string and object key of it, the items given apart ([`crate::parts::Parts`]) included. Handlers never redact for disclosure (a handler may redact
//! text it matches, as files.search does, and report its count). The field `redactions` is
//! reserved: an integer `redactions` at the top level of an answer receives the executor's
//! count added to the handler's. The knowledge objects the MCP projection lists and reads as
//! resources outside any capability ([`knowledge_resources`], [`knowledge_read`],
//! [`knowledge_templates`]) pass the same function; nothing else in the crate calls the
//! knowledge layer's resource functions.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::context::{Call, Context};
use crate::parts::Parts;
use crate::registry::{self, Descriptor, Kind, CAPABILITIES};
use crate::store::Captured;
use seneschal_access::error::CapabilityError;
use seneschal_access::limits;
use seneschal_access::redact::{redact, redact_value};
pub use seneschal_access::transport::Transport;
use seneschal_knowledge::prompts::{Prompt, PromptError, Rendered};
use seneschal_knowledge::{Resource, Template};
use seneschal_model::policy::{Disclosure, Stability};

/// One schema compiled per capability, on first use: the slot of each capability, and how
/// many compilations each slot has run (one at most; the tests read the count).
struct Compiled {
    slots: Vec<OnceLock<Result<jsonschema::Validator, String>>>,
    #[cfg(test)]
    compilations: Vec<std::sync::atomic::AtomicUsize>,
}

impl Compiled {
    fn new() -> Self {
        Compiled {
            slots: (0..CAPABILITIES.len()).map(|_| OnceLock::new()).collect(),
            #[cfg(test)]
            compilations: (0..CAPABILITIES.len())
                .map(|_| std::sync::atomic::AtomicUsize::new(0))
                .collect(),
        }
    }

    /// The validator of the capability at `index`, compiling `schema` the first time.
    fn get(&self, index: usize, schema: &str) -> Result<&jsonschema::Validator, &str> {
        self.slots[index]
            .get_or_init(|| {
                #[cfg(test)]
                self.compilations[index].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let schema: Value = serde_json::from_str(schema).map_err(|e| e.to_string())?;
                jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Compiled input validators, one per capability, built on first use.
fn validator(
    index: usize,
    schema: &'static str,
) -> Result<&'static jsonschema::Validator, CapabilityError> {
    static INPUTS: OnceLock<Compiled> = OnceLock::new();
    INPUTS
        .get_or_init(Compiled::new)
        .get(index, schema)
        .map_err(|e| CapabilityError::internal(format!("input schema does not compile: {e}")))
}

/// Checks `input` against the capability's input schema; the first failure names its pointer.
pub fn validate_input(
    index: usize,
    d: &'static Descriptor,
    input: &Value,
) -> Result<(), CapabilityError> {
    let v = validator(index, d.input_schema)?;
    // The common case first: `is_valid` stops at the first failure and builds no error values.
    if v.is_valid(input) {
        return Ok(());
    }
    let mut errors = v.iter_errors(input);
    if let Some(first) = errors.next() {
        let pointer = first.instance_path().as_str().to_string();
        let shown = if pointer.is_empty() {
            "/".to_string()
        } else {
            pointer.clone()
        };
        // A refused value is quoted as it is when short; a long one (a string over its
        // `maxLength`, say) by its first characters and its length, not echoed whole.
        let value = serde_json::to_string(first.instance().as_ref()).unwrap_or_default();
        let mut message = if value.len() <= limits::ERROR_ECHO {
            format!("{shown}: {first}")
        } else {
            let mut head = limits::ERROR_ECHO / 2;
            while !value.is_char_boundary(head) {
                head -= 1;
            }
            let named = format!("{}… ({} bytes of JSON)", &value[..head], value.len());
            format!("{shown}: {}", first.masked_with(named))
        };
        let more = errors.count();
        if more > 0 {
            message.push_str(&format!(" (and {more} more)"));
        }
        return Err(CapabilityError::invalid_input(message).at(pointer));
    }
    Ok(())
}

/// The calls this process is running, each `(sequence, capability, transport, started)`.
static RUNNING: std::sync::Mutex<Vec<(u64, &'static str, Transport, std::time::Instant)>> =
    std::sync::Mutex::new(Vec::new());

/// A call on the list of running calls until dropped.
struct Running(u64);

impl Running {
    fn enter(id: &'static str, transport: Transport) -> Running {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut all = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        all.push((n, id, transport, std::time::Instant::now()));
        Running(n)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut all = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|(n, ..)| *n != self.0);
    }
}

/// The calls this process is running now, oldest first: each capability, its transport and
/// how long it has run (metadata only: no input, no content).
pub fn running() -> Vec<Value> {
    let all = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .map(|(n, id, transport, started)| {
            json!({
                "call": n,
                "capability": id,
                "transport": transport.as_str(),
                "for_ms": started.elapsed().as_millis() as u64,
            })
        })
        .collect()
}

/// Executes the capability `id` with `input`.
pub fn execute(
    ctx: &Context,
    id: &str,
    input: Value,
    transport: Transport,
) -> Result<Value, CapabilityError> {
    let (index, _) = registry::find(id)
        .ok_or_else(|| CapabilityError::not_found(format!("no capability has the id `{id}`")))?;
    execute_index(ctx, index, input, Caller::unasked(transport))
}

/// Who makes a call: its transport and its other end, the peer the call's questions go to
/// (confirmation, elicitation, progress, cancellation). Every transport passes both to
/// [`execute_index`], which holds them for the call: nothing reaches a call but through here.
#[derive(Clone)]
pub struct Caller {
    /// The transport, recorded in the audit.
    pub transport: Transport,
    /// The call's other end.
    pub peer: std::sync::Arc<dyn crate::interact::Peer>,
    /// What renders the answer's items as the handler gives them ([`crate::parts::Rendition`]).
    pub rendition: Option<std::sync::Arc<dyn crate::parts::Rendition>>,
}

impl Caller {
    /// A call over `transport` whose questions go to `peer`.
    pub fn new(transport: Transport, peer: std::sync::Arc<dyn crate::interact::Peer>) -> Caller {
        Caller {
            transport,
            peer,
            rendition: None,
        }
    }

    /// The call, its answer's items also given to `rendition` as they are disclosed.
    pub fn rendering(self, rendition: std::sync::Arc<dyn crate::parts::Rendition>) -> Caller {
        Caller {
            rendition: Some(rendition),
            ..self
        }
    }

    /// A call over `transport` that nobody can be asked about.
    pub fn unasked(transport: Transport) -> Caller {
        Caller::new(transport, std::sync::Arc::new(crate::interact::NoPeer))
    }
}

/// Executes the capability at `index` of the table for `caller`.
pub fn execute_index(
    ctx: &Context,
    index: usize,
    input: Value,
    caller: Caller,
) -> Result<Value, CapabilityError> {
    let Caller {
        transport,
        peer,
        rendition,
    } = caller;
    // The call's metadata is a value the executor hands down: the handler, the approval gate
    // and the store's records read it from the call, never from the thread.
    let d = &CAPABILITIES[index];
    let mut call =
        Call::new(ctx, transport, peer).with_parts(Parts::of(d.disclosure).rendered_by(rendition));
    if let Some(e) = planned(d.id, &d.class) {
        return Err(e);
    }
    // Every call is on the list of running calls until it returns (the cockpit's "running
    // now"): this entry is the one every transport's call goes through.
    let _running = Running::enter(d.id, transport);
    // A write attempt refused here leaves its audit record, as one refused by the schema (a
    // process whose profile forbids writes records into an existing state folder only).
    let writer = ctx.max_effect >= seneschal_model::policy::Effect::RepositoryWrite;
    let attempted = || {
        let mut review = seneschal_access::display::for_person(&d.render_review(&input), 500);
        disclose_string(&mut review);
        review
    };
    let refuse = |e: CapabilityError| {
        if d.effect == seneschal_model::policy::Effect::RepositoryWrite {
            crate::store::audit_rejected(
                &ctx.repo,
                transport,
                d.id,
                &input,
                &e,
                writer,
                &attempted(),
            );
        }
        Err(e)
    };
    if d.effect > ctx.max_effect {
        return refuse(CapabilityError::refused(format!(
            "`{}` has effect {}, above this process's profile (--allow-effects {})",
            d.id,
            d.effect.as_str(),
            ctx.max_effect.as_str()
        )));
    }
    // Toolsets narrow what a server offers its clients; the command line is the person's own
    // and runs every toolset (`mcp --inspect` describes a narrowed server's surface).
    if transport != Transport::Cli && !ctx.toolsets.contains(d.toolset) {
        return refuse(CapabilityError::refused(format!(
            "`{}` is in the toolset {}, which this process does not serve (--toolsets {}): start it with --toolsets {},{}",
            d.id,
            d.toolset.as_str(),
            ctx.toolsets.spelling(),
            ctx.toolsets.spelling(),
            d.toolset.as_str()
        )));
    }
    if !input.is_object() {
        return refuse(CapabilityError::invalid_input("the input must be a JSON object").at(""));
    }
    if let Err(e) = validate_input(index, d, &input) {
        if d.effect == seneschal_model::policy::Effect::RepositoryWrite {
            crate::store::audit_rejected(
                &ctx.repo,
                transport,
                d.id,
                &input,
                &e,
                writer,
                &attempted(),
            );
        }
        return Err(e);
    }
    let (approved_by, planned) = match gate(&call, index, d, &input) {
        Ok(gated) => gated,
        Err(e) if crate::interact::is_pending(&e) => return Err(e),
        Err(e) => return refuse(e),
    };
    call.approved_by = approved_by;
    // A write planned at the gate is applied as planned: its handler does not run again.
    let result = match planned {
        Some(Captured::Plan(plan)) => {
            crate::store::apply_planned(&ctx.repo, call.record(), d.id, plan)
        }
        Some(Captured::Replay(answer)) => Ok(answer),
        None => answer(&call, index, d, input),
    };
    let parts = call.take_parts();
    let (mut output, n) = parts.settle(d, disclose(d, result)?)?;
    count_redactions(&mut output, n);
    #[cfg(debug_assertions)]
    check_output(index, d, &output)?;
    Ok(output)
}

/// The approval gate: a call whose derived approval is `per_call`, or `session` and not yet
/// approved in the session, is confirmed through the peer of the call before it runs
/// ([`crate::interact::confirm`], under the process's `--approval` policy). A write called
/// with `dry_run: true` changes nothing and passes. Under `trust-client` nobody is asked and a
/// write is planned once by its own runner, under the lock. Any other write is **planned once, here**
/// ([`plan`]): a write that cannot apply (invalid, refused, in conflict) is refused before
/// anyone is asked; a keyed retry is answered from its key without a question; otherwise the
/// person is shown that plan — its review sentence, its files, its diff — and the executor
/// applies that same plan ([`crate::store::apply_planned`]), refused `conflict` if any file it
/// touches changed since. A read's sentence is the manifest's review rendered with the input.
/// Everything shown passes the disclosure like an answer. `Ok((Some(how), _))` names how the
/// call was approved, for the audit.
fn gate(
    ctx: &Call,
    index: usize,
    d: &'static Descriptor,
    input: &Value,
) -> Result<(Option<&'static str>, Option<Captured>), CapabilityError> {
    let level = d.approval();
    if level == seneschal_model::policy::Approval::None || plans_only(d, input) {
        return Ok((None, None));
    }
    // Under `trust-client` nobody is asked, so no plan is shown: the write is planned once,
    // under the lock, by its own runner (`store::transact`), which refuses a write that
    // cannot apply and answers a keyed retry from its key as the gate would.
    if ctx.approval == crate::interact::ApprovalPolicy::TrustClient {
        let by = crate::interact::confirm(
            &*ctx.peer,
            ctx.transport,
            ctx.approval,
            ctx.desk(),
            level,
            d.id,
            || crate::interact::Described {
                binding: crate::interact::binding(d.id, input),
                review: d.render_review(input),
                detail: Value::Null,
            },
        )?;
        return Ok((by, None));
    }
    // A write that cannot apply is answered its error at once, without a question — but
    // under `--approval deny` that error (a file that does not exist, a digest) is repository
    // content no unapproved call may learn: the question is asked first, from the manifest's
    // sentence, and the error answers only an approved call.
    let mut failed = None;
    let planned = if d.effect == seneschal_model::policy::Effect::RepositoryWrite {
        match plan(ctx, index, d, input) {
            Ok(replay @ Captured::Replay(_)) => return Ok((None, Some(replay))),
            Ok(Captured::Plan(p)) => Some(p),
            Err(e) if ctx.approval != crate::interact::ApprovalPolicy::Deny => return Err(e),
            Err(e) => {
                failed = Some(e);
                None
            }
        }
    } else {
        None
    };
    let by = crate::interact::confirm(
        &*ctx.peer,
        ctx.transport,
        ctx.approval,
        ctx.desk(),
        level,
        d.id,
        || {
            let Some(p) = planned.as_ref() else {
                let mut review = d.render_review(input);
                if d.disclosure == Disclosure::Repository {
                    disclose_string(&mut review);
                }
                return crate::interact::Described {
                    binding: crate::interact::binding(d.id, input),
                    review,
                    detail: Value::Null,
                };
            };
            let answer = &p.plan().answer;
            let mut review = answer
                .get("review")
                .and_then(Value::as_str)
                .map_or_else(|| d.render_review(input), str::to_string);
            let mut plan = answer.get("plan").cloned();
            // What the person reads: the plan's own diff (redacted by the store), the files a
            // commit records, the sentence.
            let shown = p.diff(&ctx.repo);
            let mut detail = json!({
                "plan": plan,
                "diff": shown.get("diff"),
                "diff_truncated": shown.get("diff_truncated"),
                "diff_withheld": shown.get("diff_withheld"),
                "files": answer.get("files"),
            });
            if d.disclosure == Disclosure::Repository {
                disclose_string(&mut review);
                if let Some(p) = plan.as_mut() {
                    redact_value(p);
                }
                redact_value(&mut detail);
            }
            // The message a write records beside its files (a commit's, whose review names the
            // subject alone), whole, redacted alike.
            let mut message = input
                .get("message")
                .filter(|m| {
                    m.is_string() && d.effect == seneschal_model::policy::Effect::RepositoryWrite
                })
                .cloned();
            if d.disclosure == Disclosure::Repository {
                if let Some(m) = message.as_mut() {
                    redact_value(m);
                }
            }
            if let Some(m) = message {
                detail["message"] = m;
            }
            crate::interact::Described {
                // The plan as a dry run's caller saw it (redacted like every answer), so that the
                // token made from that answer binds the same plan.
                binding: crate::interact::plan_binding(d.id, input, plan.as_ref()),
                review,
                detail,
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok((by, planned.map(Captured::Plan)))
}

/// Plans a write once, without applying it: its handler runs with a planning call
/// ([`Call::planning`]), so the one runner of every write (`handlers::plan_or_apply`) hands its
/// plan (or its key's replay) over instead of applying it. A handler's own error (the write
/// cannot apply) is the answer; one that neither planned nor failed is a fault.
fn plan(
    ctx: &Call,
    index: usize,
    d: &'static Descriptor,
    input: &Value,
) -> Result<Captured, CapabilityError> {
    let planning = ctx.planning();
    let result = answer(&planning, index, d, input.clone());
    match planning.take_plan() {
        Some(captured) => Ok(captured),
        None => Err(result.err().unwrap_or_else(|| {
            CapabilityError::internal(format!("`{}` answered without planning its write", d.id))
        })),
    }
}

/// Whether the call is a write's dry run: its input schema declares `dry_run` and the input
/// sets it.
fn plans_only(d: &Descriptor, input: &Value) -> bool {
    d.effect == seneschal_model::policy::Effect::RepositoryWrite
        && input.get("dry_run") == Some(&Value::Bool(true))
        && serde_json::from_str::<Value>(d.input_schema)
            .is_ok_and(|s| s.pointer("/properties/dry_run").is_some())
}

/// The refusal of a planned capability: listed on every surface, never run.
fn planned(id: &str, class: &seneschal_model::policy::Class) -> Option<CapabilityError> {
    (class.stability == Stability::Planned).then(|| {
        CapabilityError::unsupported(format!("`{id}` is planned: listed, not executable yet"))
    })
}

/// The handler's (or the embedded resource's) answer, a panic turned into `internal`.
fn answer(
    ctx: &Call,
    index: usize,
    d: &'static Descriptor,
    input: Value,
) -> Result<Value, CapabilityError> {
    match d.kind {
        Kind::Resource => Ok(d.resource_answer()),
        Kind::Query => {
            match catch_unwind(AssertUnwindSafe(|| registry::dispatch(index, ctx, input))) {
                Ok(result) => result,
                Err(panic) => {
                    let why =
                        seneschal_access::text::panic_message(panic.as_ref(), "a handler panicked");
                    Err(CapabilityError::internal(format!(
                        "`{}` failed: {why}",
                        d.id
                    )))
                }
            }
        }
    }
}

/// The output field the executor fills: at the top level of an answer, an integer
/// `redactions` receives the number of replacements the executor made, added to the count the
/// handler put there (for text it redacted before matching it).
pub const REDACTIONS_FIELD: &str = "redactions";

/// The disclosure choke point: the answer or the error of a capability whose `disclosure` is
/// `repository` passes [`redact_value`] whole (every string, object keys included; an error's
/// message, pointer and data), and the count lands in [`REDACTIONS_FIELD`] when the answer
/// has one. Other answers (the registry, the process) hold no repository content and pass as
/// they are.
fn disclose(
    d: &Descriptor,
    result: Result<Value, CapabilityError>,
) -> Result<Value, CapabilityError> {
    if d.disclosure != Disclosure::Repository {
        return result;
    }
    match result {
        Ok(mut output) => {
            let n = redact_value(&mut output);
            count_redactions(&mut output, n);
            Ok(output)
        }
        Err(e) => Err(disclose_error(e)),
    }
}

/// Adds `n` replacements to the answer's [`REDACTIONS_FIELD`], when it has one.
fn count_redactions(output: &mut Value, n: usize) {
    if n == 0 {
        return;
    }
    if let Some(field) = output.get_mut(REDACTIONS_FIELD) {
        if let Some(before) = field.as_u64() {
            *field = json!(before.saturating_add(n as u64));
        }
    }
}

/// An error of a `repository` capability, redacted: a message can quote a file's line or
/// git's error text.
fn disclose_error(mut e: CapabilityError) -> CapabilityError {
    let (message, n) = redact(&e.message);
    if n > 0 {
        e.message = message.into_owned();
    }
    if let Some(p) = &e.pointer {
        let (pointer, n) = redact(p);
        if n > 0 {
            e.pointer = Some(pointer.into_owned());
        }
    }
    if let Some(data) = e.data.as_mut() {
        redact_value(data);
    }
    e
}

/// Whether this process serves the repository's knowledge outside `tools/call` (its
/// resources, templates, prompts and completions): only with the knowledge toolset, like
/// `knowledge.get`. Every such door below asks here.
fn knowledge_served(ctx: &Context) -> bool {
    ctx.toolsets
        .contains(seneschal_model::toolset::Toolset::Knowledge)
}

/// The knowledge objects the MCP projection lists as resources (`resources/list`), through
/// the same disclosure as a `repository` answer: every field is repository content.
pub fn knowledge_resources(ctx: &Context) -> Vec<Resource> {
    if !knowledge_served(ctx) {
        return Vec::new();
    }
    let mut all = seneschal_knowledge::resources(&ctx.knowledge, &ctx.repo);
    for r in &mut all {
        r.fields_mut().into_iter().for_each(disclose_string);
    }
    all
}

/// The approval gate of knowledge served outside `tools/call` (`resources/read`): the
/// content is what `knowledge.get` answers, so it is confirmed as
/// `knowledge.get` is — the same session-level approval, remembered under that capability,
/// asked through the peer of the request with `review` shown (redacted).
fn confirm_knowledge(
    ctx: &Context,
    caller: &Caller,
    target: &str,
    review: &str,
) -> Result<(), CapabilityError> {
    let (_, d) = registry::find("knowledge.get").expect("knowledge.get is registered");
    let peer = &*caller.peer;
    crate::interact::confirm(
        peer,
        caller.transport,
        ctx.approval,
        ctx.desk(),
        d.approval(),
        d.id,
        || {
            let mut review = review.to_string();
            disclose_string(&mut review);
            crate::interact::Described {
                binding: crate::interact::binding(d.id, &json!({ "uri": target })),
                review,
                detail: Value::Null,
            }
        },
    )
    .map(|_| ())
}

/// One knowledge object's text (`resources/read`), confirmed like `knowledge.get` and
/// through the same disclosure as a `repository` answer; `Ok(None)` when no object has the
/// URI. `caller` is who is asked when the read needs approval.
pub fn knowledge_read(
    ctx: &Context,
    uri: &str,
    caller: &Caller,
) -> Result<Option<(String, String)>, CapabilityError> {
    if !knowledge_served(ctx) {
        return Ok(None);
    }
    let Some((mut mime, mut text)) = seneschal_knowledge::read(&ctx.knowledge, &ctx.repo, uri)
    else {
        return Ok(None);
    };
    confirm_knowledge(
        ctx,
        caller,
        uri,
        &format!("Read the knowledge object {uri}"),
    )?;
    disclose_string(&mut mime);
    disclose_string(&mut text);
    Ok(Some((mime, text)))
}

/// What changed in the knowledge index since the live-resources feed's last look
/// (`notifications/resources/updated` and `list_changed`): URIs only, which a client already
/// holds from a list or names in its subscription; no content leaves through it.
pub fn knowledge_changes(
    ctx: &Context,
    seen: &mut seneschal_knowledge::watch::Seen,
) -> seneschal_knowledge::watch::Changes {
    seneschal_knowledge::watch::changes(&ctx.knowledge, &ctx.repo, seen)
}

/// The kinds' URI templates (`resources/templates/list`), through the same disclosure: a
/// repository's own kinds (`.seneschal/kinds.yaml`) are repository content.
pub fn knowledge_templates(ctx: &Context) -> Vec<Template> {
    if !knowledge_served(ctx) {
        return Vec::new();
    }
    let mut all = seneschal_knowledge::templates(&ctx.knowledge, &ctx.repo);
    for t in &mut all {
        t.fields_mut().into_iter().for_each(disclose_string);
    }
    all
}

/// The prompts (`prompts/list`): the objects of every kind declared `prompt: true`, through
/// the same disclosure as a `repository` answer.
pub fn knowledge_prompts(ctx: &Context) -> Vec<Prompt> {
    if !knowledge_served(ctx) {
        return Vec::new();
    }
    let mut all = seneschal_knowledge::prompts::prompts(&ctx.knowledge, &ctx.repo);
    for p in &mut all {
        p.fields_mut().into_iter().for_each(disclose_string);
    }
    all
}

/// One prompt rendered with its arguments (`prompts/get`), through the same disclosure as a
/// `repository` answer: its text, its embedded objects and its error messages (which quote
/// the request and the repository). An image's bytes pass as they are.
pub fn knowledge_prompt(
    ctx: &Context,
    name: &str,
    args: &serde_json::Map<String, Value>,
) -> Result<Rendered, PromptError> {
    if !knowledge_served(ctx) {
        return Err(PromptError::Unknown(format!(
            "no prompt is named `{name}` here: the knowledge toolset is not served (--toolsets {})",
            ctx.toolsets.spelling()
        )));
    }
    match seneschal_knowledge::prompts::render(&ctx.knowledge, &ctx.repo, name, args) {
        Ok(mut rendered) => {
            rendered.fields_mut().into_iter().for_each(disclose_string);
            Ok(rendered)
        }
        Err(mut e) => {
            disclose_string(e.message_mut());
            Err(e)
        }
    }
}

/// The completions of a prompt's argument (`completion/complete`), redacted; `None` when the
/// prompt or the argument does not exist.
pub fn knowledge_prompt_completion(
    ctx: &Context,
    name: &str,
    argument: &str,
    value: &str,
) -> Option<Vec<String>> {
    if !knowledge_served(ctx) {
        return None;
    }
    let values = seneschal_knowledge::prompts::complete_prompt(
        &ctx.knowledge,
        &ctx.repo,
        name,
        argument,
        "",
    )?;
    Some(disclosed_matches(values, value))
}

/// The completions of a knowledge URI template's variable (`completion/complete`), redacted;
/// `None` when the template or the variable is not one of ours.
pub fn knowledge_template_completion(
    ctx: &Context,
    template: &str,
    variable: &str,
    value: &str,
    context: &serde_json::Map<String, Value>,
) -> Option<Vec<String>> {
    if !knowledge_served(ctx) {
        return None;
    }
    let values = seneschal_knowledge::prompts::complete_template(
        &ctx.knowledge,
        &ctx.repo,
        template,
        variable,
        "",
        context,
    )?;
    Some(disclosed_matches(values, value))
}

/// The candidates that start with `prefix`, matched **after** redaction: a prefix matched
/// against the raw values would tell, one typed character at a time, the secret a redacted
/// candidate hides (a match oracle). A redacted candidate matches only its marker's text.
fn disclosed_matches(mut values: Vec<String>, prefix: &str) -> Vec<String> {
    values.iter_mut().for_each(disclose_string);
    values.retain(|v| v.starts_with(prefix));
    values.sort();
    values.dedup();
    values
}

fn disclose_string(s: &mut String) {
    let (text, n) = redact(s);
    if n > 0 {
        *s = text.into_owned();
    }
}

/// The compiled output validators of the debug check, one per capability, built on first use.
#[cfg(debug_assertions)]
fn output_validators() -> &'static Compiled {
    static OUTPUTS: OnceLock<Compiled> = OnceLock::new();
    OUTPUTS.get_or_init(Compiled::new)
}

/// In debug builds (and so in every test), an answer that breaks its own output schema is a
/// fault, not a success: the schema the surfaces publish must be true. The handler's typed
/// `Output` already holds the shape; this also holds what a type cannot say (patterns,
/// bounds, `additionalProperties` of free-form parts) and the executor's own answers.
#[cfg(debug_assertions)]
fn check_output(index: usize, d: &Descriptor, output: &Value) -> Result<(), CapabilityError> {
    let v = output_validators()
        .get(index, d.output_schema)
        .map_err(|e| CapabilityError::internal(format!("output schema does not compile: {e}")))?;
    if v.is_valid(output) {
        return Ok(());
    }
    if let Some(e) = v.iter_errors(output).next() {
        return Err(CapabilityError::internal(format!(
            "`{}` answered outside its output schema at {}: {e}",
            d.id,
            e.instance_path().as_str()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(id: &str) -> &'static Descriptor {
        registry::find(id).expect("a registered id").1
    }

    fn token() -> String {
        format!("ghp_{}", "x9Y8".repeat(9))
    }

    #[test]
    fn the_output_check_compiles_each_schema_once_and_fails_a_wrong_answer() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(
            dir.path().to_path_buf(),
            seneschal_model::policy::Effect::Read,
        );
        let (index, d) = registry::find("server.status").expect("a registered id");
        for _ in 0..5 {
            execute_index(&ctx, index, json!({}), Caller::unasked(Transport::Cli)).unwrap();
        }
        let compilations = &output_validators().compilations[index];
        assert_eq!(
            compilations.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "the output schema of server.status is compiled once, not per call"
        );
        // The cached validator still judges: an answer of the wrong shape is a fault.
        let e = check_output(index, d, &json!({"name": 1})).unwrap_err();
        assert_eq!(e.code.as_str(), "internal");
        assert!(
            e.message.contains("outside its output schema"),
            "{}",
            e.message
        );
        assert_eq!(compilations.load(std::sync::atomic::Ordering::Relaxed), 1);
    }

    #[test]
    fn repository_answers_are_redacted_and_counted_others_pass() {
        let t = token();
        let answer =
            json!({"content": format!("a {t}\npassword=hunter2hunter2\n"), "redactions": 2});
        let out = disclose(descriptor("files.read"), Ok(answer.clone())).unwrap();
        assert_eq!(out["content"], "a [REDACTED]\npassword=[REDACTED]\n");
        assert_eq!(
            out["redactions"], 4,
            "the executor adds its count to the handler's"
        );
        // Without the field, nothing is added; a `metadata` answer passes as it is.
        let out = disclose(descriptor("knowledge.get"), Ok(json!({"body": t.clone()}))).unwrap();
        assert_eq!(out, json!({"body": "[REDACTED]"}));
        let out = disclose(descriptor("server.status"), Ok(answer.clone())).unwrap();
        assert_eq!(out, answer);
    }

    #[test]
    fn repository_errors_are_redacted_message_pointer_and_data() {
        let t = token();
        let e = CapabilityError::internal(format!("git failed: fatal: https://u:{t}@h/r.git"))
            .at(format!("/front_matter/{t}"))
            .with_data(json!({"line": format!("token: {t}")}));
        let out = disclose(descriptor("repo.log"), Err(e.clone())).unwrap_err();
        let shown = out.to_json().to_string();
        assert!(!shown.contains(&t), "{shown}");
        assert_eq!(out.code, e.code);
        let same = disclose(descriptor("capabilities.list"), Err(e.clone())).unwrap_err();
        assert_eq!(same, e);
    }

    /// The Rust files under `root`/`dir`, named from `root`, with their text.
    fn rust_sources(root: &std::path::Path, dir: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("a source folder") {
                let p = entry.expect("an entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.push((rel, std::fs::read_to_string(&p).expect("a source file")));
                }
            }
        }
        out
    }

    /// The source files of a folder under `core/src/`, with their text.
    fn sources(dir: &str) -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let out = rust_sources(&root, dir);
        assert!(!out.is_empty(), "no sources under src/{dir}");
        out
    }

    #[test]
    fn no_handler_redacts_for_disclosure() {
        // files.search redacts the lines it matches before matching them (so a pattern cannot
        // find a secret) and reports its count: the one allowed caller.
        const MATCHES_REDACTED_TEXT: &[&str] = &["handlers/files.rs"];
        for (file, text) in sources("handlers") {
            if MATCHES_REDACTED_TEXT.contains(&file.as_str()) {
                continue;
            }
            for needle in ["redact(", "redact_url", "redact_value", "redact::"] {
                assert!(
                    !text.contains(needle),
                    "{file} calls `{needle}`: disclosure is the executor's (core/src/execute.rs)"
                );
            }
        }
    }

    #[test]
    fn a_planned_capability_is_refused_unsupported_and_an_executable_one_is_not() {
        for d in CAPABILITIES.iter().filter(|d| d.executable()) {
            assert!(planned(d.id, &d.class).is_none(), "{}", d.id);
            let mut class = d.class;
            class.stability = Stability::Planned;
            let e = planned(d.id, &class).expect("a planned capability is refused");
            assert_eq!(
                e.code,
                seneschal_model::codes::ErrorCode::Unsupported,
                "{}",
                d.id
            );
        }
    }

    #[test]
    fn no_handler_converts_a_json_value_into_its_output() {
        // A handler builds its generated `Output` (a wrong shape does not compile); a JSON
        // value turned into it would move the check back to run time. The exceptions are the
        // writers' one runner (`plan_or_apply`), which reads an applied write's answer back
        // from the store, which keeps it as JSON for replay; `mcp.wire`'s plan; and the git
        // writes, whose answers are built as JSON.
        const READS_STORED_ANSWERS: &[&str] = &[
            "handlers/mod.rs",
            "handlers/wire.rs",
            "handlers/gitwrite.rs",
        ];
        for (file, text) in sources("handlers") {
            for needle in ["fn typed", "typed(", "from_value"] {
                if needle == "from_value" && READS_STORED_ANSWERS.contains(&file.as_str()) {
                    continue;
                }
                assert!(
                    !text.contains(needle),
                    "{file} contains `{needle}`: construct the generated Output instead"
                );
            }
        }
    }

    /// The source files of every crate above the knowledge layer (the core, the transports,
    /// the maintainer tools, the command line), named from the workspace root.
    fn sources_above_knowledge() -> Vec<(String, String)> {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("core is a folder of the workspace");
        let out: Vec<(String, String)> = ["core/src", "mcp/src", "http/src", "devtools/src", "src"]
            .iter()
            .flat_map(|dir| rust_sources(workspace, dir))
            .collect();
        assert!(out.len() > 50, "{} sources", out.len());
        out
    }

    #[test]
    fn only_the_executor_reads_knowledge_resources() {
        for (file, text) in sources_above_knowledge() {
            if file == "core/src/execute.rs" {
                continue;
            }
            for needle in [
                "knowledge::resources(",
                "knowledge::read(",
                "knowledge::templates(",
                "prompts::prompts(",
                "prompts::render(",
                "prompts::complete_prompt(",
                "prompts::complete_template(",
            ] {
                assert!(
                    !text.contains(needle),
                    "{file} calls `{needle}`: resources and prompts pass the executor's disclosure"
                );
            }
        }
    }
}
