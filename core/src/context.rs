//! The process-wide context every handler receives: the repository, the clock, the profile.
//!
//! Handlers never see a transport; the context holds nothing about how a call arrived.

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
                progress: crate::interact::progress,
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
