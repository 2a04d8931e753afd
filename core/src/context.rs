//! The process-wide [`Context`] (the repository, the clock, the profile) and the [`Call`] every
//! handler receives: that context with one call's metadata, passed down as a value.
//!
//! A handler reads the process through a call (it dereferences to the context) and reaches
//! whoever made the call through it (progress, questions, cancellation); how the call arrived
//! and how it was approved go to the store's records from it, never through a thread.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use seneschal_model::policy::Effect;

/// Shared state of one seneschal process.
#[derive(Debug)]
pub struct Context {
    /// The repository root this process stewards.
    pub repo: PathBuf,
    /// When the process started.
    pub started: Instant,
    /// The strongest effect this process executes (`--allow-effects`).
    pub max_effect: Effect,
    /// The toolsets this process serves (`--toolsets` of `mcp` and `serve`; every toolset
    /// for a command line call).
    pub toolsets: seneschal_model::toolset::Toolsets,
    /// Session notes: this process's memory, changed by `process_state` capabilities.
    pub notes: Mutex<Vec<Note>>,
    /// The knowledge index of the repository.
    pub knowledge: seneschal_knowledge::Index,
    /// What a call that needs approval meets when its client cannot be asked (`--approval`).
    pub approval: crate::interact::ApprovalPolicy,
    /// How long a call no client can confirm waits on the approval desk under `ask`
    /// (`--approval-timeout` of `mcp` and `serve`); `None` where there is no desk (a command
    /// line call asks on its terminal, the conformance harness accepts).
    pub desk_wait: Option<std::time::Duration>,
    /// The name and email a commit is made as when the user has no git identity of their own
    /// (neither `GIT_AUTHOR_*` nor `user.name`/`user.email` in their configuration): `None`
    /// for every server and command, where the commit is refused instead; set by the
    /// conformance harness alone, for its scratch repositories ([`Context::scratch`]).
    pub stand_in_identity: Option<(String, String)>,
    /// The schema dialect `tools/list` renders input schemas in, and a call's arguments are
    /// read back from (`--schema-dialect` of `mcp`; ADR 0008); `None`: the published schemas.
    pub schema_dialect: Option<seneschal_model::dialect::Dialect>,
}

/// One session note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// 1-based sequence number within the process.
    pub id: u64,
    /// The text.
    pub text: String,
    /// Milliseconds since the process started.
    pub at_ms: u64,
}

impl Context {
    /// A context for `repo` allowing effects up to `max_effect`.
    pub fn new(repo: PathBuf, max_effect: Effect) -> Context {
        Context {
            repo,
            started: Instant::now(),
            max_effect,
            toolsets: seneschal_model::toolset::Toolsets::ALL,
            notes: Mutex::new(Vec::new()),
            knowledge: seneschal_knowledge::Index::with_hooks(seneschal_knowledge::Hooks {
                reserved: |uri| crate::registry::by_resource(uri).is_some(),
            }),
            approval: crate::interact::ApprovalPolicy::default(),
            desk_wait: None,
            stand_in_identity: None,
            schema_dialect: None,
        }
    }

    /// The context of a scratch repository the conformance harness (or a test of examples)
    /// runs calls in: a commit there is made as `seneschal conformance` when the machine's user
    /// has no git identity, so an example's outcome does not depend on the machine.
    pub fn scratch(repo: PathBuf, max_effect: Effect) -> Context {
        let mut ctx = Context::new(repo, max_effect);
        ctx.stand_in_identity = Some((
            "seneschal conformance".into(),
            "conformance@seneschal.invalid".into(),
        ));
        ctx
    }

    /// A context with every setting of this one (repository, profile, approval policy, desk,
    /// stand-in identity) and memory of its own: what a task runs in. Every field is named
    /// here, so a setting added to [`Context`] fails to compile until it is carried or said
    /// to be memory.
    pub fn sibling(&self) -> Context {
        let Context {
            repo,
            started: _,
            max_effect,
            toolsets,
            notes: _,
            knowledge: _,
            approval,
            desk_wait,
            stand_in_identity,
            schema_dialect,
        } = self;
        let mut c = Context::new(repo.clone(), *max_effect)
            .with_toolsets(*toolsets)
            .with_approval(*approval);
        c.desk_wait = *desk_wait;
        c.stand_in_identity = stand_in_identity.clone();
        c.schema_dialect = *schema_dialect;
        c
    }

    /// Whether `other` has every setting of this context ([`Context::sibling`]'s).
    pub fn same_settings(&self, other: &Context) -> bool {
        self.repo == other.repo
            && self.profile() == other.profile()
            && self.approval == other.approval
            && self.desk_wait == other.desk_wait
            && self.stand_in_identity == other.stand_in_identity
            && self.schema_dialect == other.schema_dialect
    }

    /// The same context serving only `toolsets`.
    pub fn with_toolsets(mut self, toolsets: seneschal_model::toolset::Toolsets) -> Context {
        self.toolsets = toolsets;
        self
    }

    /// What this process serves: its effect and its toolsets.
    pub fn profile(&self) -> seneschal_model::toolset::Profile {
        seneschal_model::toolset::Profile {
            max_effect: self.max_effect,
            toolsets: self.toolsets,
        }
    }

    /// The same context with the approval policy `policy`.
    pub fn with_approval(mut self, policy: crate::interact::ApprovalPolicy) -> Context {
        self.approval = policy;
        self
    }

    /// The same context with an approval desk where calls wait up to `wait`.
    pub fn with_desk(mut self, wait: std::time::Duration) -> Context {
        self.desk_wait = Some(wait);
        self
    }

    /// The approval desk of this process, if it has one.
    pub fn desk(&self) -> Option<crate::interact::Desk<'_>> {
        self.desk_wait.map(|wait| crate::interact::Desk {
            root: &self.repo,
            wait,
        })
    }

    /// Finds the repository that holds `start`: the nearest ancestor with a `.git` entry
    /// (a folder, or a file that [`seneschal_access::gitdir::pin`] will refuse with its reason), `None`
    /// when there is none.
    pub fn discover(start: &Path) -> Option<PathBuf> {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        start
            .ancestors()
            .find(|p| std::fs::symlink_metadata(p.join(".git")).is_ok())
            .map(Path::to_path_buf)
    }
}

/// One call in flight: the process's [`Context`] with the call's own metadata — how it
/// arrived, its other end, how it was approved, and whether the executor is planning its write
/// (the approval gate) rather than applying it. Made by the executor for each call and passed
/// to the handler; it dereferences to the context.
pub struct Call<'a> {
    ctx: &'a Context,
    /// How the call arrived.
    pub transport: seneschal_access::transport::Transport,
    /// Its other end: asked, notified and watched for cancellation through
    /// [`crate::interact::Peer`].
    pub peer: std::sync::Arc<dyn crate::interact::Peer>,
    /// How the call was approved (`elicitation`, `desk`, `grant`, …), once the gate decided;
    /// the write's records carry it as `approved_by`.
    pub approved_by: Option<&'static str>,
    /// While the gate plans the write: where its one runner hands the plan (or its key's
    /// replay) instead of applying it.
    planned: Option<std::cell::RefCell<Option<crate::store::Captured>>>,
    /// The items of one array of the answer, given while the handler reads them ([`Call::part`]).
    parts: std::cell::RefCell<crate::parts::Parts>,
}

impl std::ops::Deref for Call<'_> {
    type Target = Context;
    fn deref(&self) -> &Context {
        self.ctx
    }
}

impl<'a> Call<'a> {
    /// A call to `ctx` that arrived over `transport` from `peer`, not yet approved.
    pub fn new(
        ctx: &'a Context,
        transport: seneschal_access::transport::Transport,
        peer: std::sync::Arc<dyn crate::interact::Peer>,
    ) -> Call<'a> {
        Call {
            ctx,
            transport,
            peer,
            approved_by: None,
            planned: None,
            parts: Default::default(),
        }
    }

    /// A call nobody can be asked about (a unit test's, the command line's own checks).
    pub fn unasked(
        ctx: &'a Context,
        transport: seneschal_access::transport::Transport,
    ) -> Call<'a> {
        Call::new(ctx, transport, std::sync::Arc::new(crate::interact::NoPeer))
    }

    /// The same call, planning its write instead of applying it.
    pub fn planning(&self) -> Call<'a> {
        Call {
            ctx: self.ctx,
            transport: self.transport,
            peer: self.peer.clone(),
            approved_by: None,
            planned: Some(std::cell::RefCell::new(None)),
            parts: Default::default(),
        }
    }

    /// Whether the call plans its write rather than applying it.
    pub fn is_planning(&self) -> bool {
        self.planned.is_some()
    }

    /// Hands the planned write over (the runner of a planning call); the error to return in
    /// its place, which the executor does not read.
    pub fn hand_over(&self, c: crate::store::Captured) -> seneschal_access::error::CapabilityError {
        if let Some(slot) = &self.planned {
            *slot.borrow_mut() = Some(c);
        }
        seneschal_access::error::CapabilityError::internal("a planned write was handed to the gate")
    }

    /// What a planning call's runner handed over.
    pub fn take_plan(&self) -> Option<crate::store::Captured> {
        self.planned
            .as_ref()
            .and_then(|slot| slot.borrow_mut().take())
    }

    /// The call as the store records it.
    pub fn record(&self) -> crate::store::CallRecord {
        crate::store::CallRecord {
            transport: self.transport,
            approved_by: self.approved_by,
        }
    }

    /// Reports progress to the caller, when it attached a progress token.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.peer.progress(progress, total, message);
    }

    /// The repository's knowledge now, a long read reporting its progress to the caller.
    pub fn snapshot(&self) -> std::sync::Arc<seneschal_knowledge::Snapshot> {
        // The readers report from several threads.
        let rising = crate::interact::Rising::new(&*self.peer);
        self.knowledge
            .snapshot_reporting(&self.repo, &|p, total, message| {
                rising.report(p, total, message)
            })
    }

    /// Gives one item of the array `field` of the answer, as soon as the handler has read it
    /// (a commit of `repo.log` while git writes the next): the executor encodes and discloses
    /// it while the handler goes on, and puts every item given in that array, which the
    /// handler's `Output` leaves empty ([`crate::parts::Parts`]).
    pub fn part<T: serde::Serialize>(&self, field: &'static str, item: &T) {
        self.parts.borrow_mut().push(field, item);
    }

    /// The call, its items ([`Call::part`]) gathered into `parts`.
    pub(crate) fn with_parts(self, parts: crate::parts::Parts) -> Self {
        *self.parts.borrow_mut() = parts;
        self
    }

    /// The items given so far ([`Call::part`]), taken by the executor.
    pub(crate) fn take_parts(&self) -> crate::parts::Parts {
        std::mem::take(&mut *self.parts.borrow_mut())
    }

    /// Whether the call was cancelled.
    pub fn cancelled(&self) -> bool {
        self.peer.cancelled()
    }
}
