//! The execution policy: what a capability's declared effect lets a caller assume.
//!
//! This file is the one home of the effect → hints table of DESIGN §3. The build-time codegen
//! renders the MCP annotations, the OpenAPI extensions, the reference and the contract lock
//! from it, and the binary answers from it at run time: both read a capability's declared
//! [`Class`], whose methods are the only derivation of hints, approval and profile
//! membership. No transport writes an annotation value itself; each reads these tables.

/// What a call changes in the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Changes nothing.
    Read,
    /// Changes this process's memory only (never a file).
    ProcessState,
    /// Writes or deletes repository files (an additive writer only adds files: see
    /// [`Class::additive`]).
    RepositoryWrite,
}

/// What a call can reveal to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Disclosure {
    /// Nothing beyond the call's own arguments.
    None,
    /// Facts about seneschal itself (its registry, its process).
    Metadata,
    /// Repository content.
    Repository,
}

/// What an answer is a function of; it scopes the parity tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Determinism {
    /// The input alone.
    Input,
    /// The input and the repository's content.
    Repository,
    /// This process's state (uptime, session notes): exempt from parity by declaration.
    Process,
    /// The answer of the client's model (MCP sampling): exempt from parity by declaration,
    /// and an open world (`openWorldHint`).
    Client,
}

/// How far along its life a capability is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stability {
    /// Covered by the contract.
    Stable,
    /// Callable; may change in a minor release.
    Experimental,
    /// Listed, never executable through any projection.
    Planned,
}

/// The HTTP API request header that carries a confirmation token: the applying call of a
/// `per_call` write presents the token its dry run answered.
pub const APPROVAL_HEADER: &str = "Seneschal-Approval";
/// The HTTP API response header of a `per_call` write's dry run: the confirmation token bound
/// to that exact request (capability and input without `dry_run`), valid ten minutes, for the
/// process that issued it.
pub const APPROVAL_TOKEN_HEADER: &str = "Seneschal-Approval-Token";
/// The request header that carries the desk secret `seneschal serve` prints on its terminal:
/// the person's own call (a decision in the cockpit, or a script the person runs).
pub const DESK_SECRET_HEADER: &str = "Seneschal-Desk-Secret";
/// The fewest characters of a desk secret the person sets (`$SENESCHAL_DESK_SECRET`): a
/// shorter one is refused when `serve` starts, never replaced.
pub const DESK_SECRET_MIN_CHARS: usize = 32;

/// The approval a confirmation UI should ask for before a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Approval {
    /// Metadata reads: no approval.
    None,
    /// Reads that disclose repository content, and process-state changes: once per session.
    Session,
    /// Repository writes: every call.
    PerCall,
}

/// The four MCP tool annotations, as booleans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`
    pub read_only: bool,
    /// `destructiveHint`
    pub destructive: bool,
    /// `idempotentHint`
    pub idempotent: bool,
    /// `openWorldHint`
    pub open_world: bool,
}

impl Hints {
    /// What MCP says a client assumes for a hint the tool leaves out (`ToolAnnotations`:
    /// `readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint`
    /// true).
    pub const MCP_DEFAULTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    /// The hints a tool entry states, by their MCP names: each one that differs from
    /// [`Hints::MCP_DEFAULTS`], and for a read-only tool not `destructiveHint` and
    /// `idempotentHint`, which MCP calls meaningful only when `readOnlyHint` is false.
    /// [`Hints::as_read`] turns them back into these hints.
    pub fn stated(self) -> Vec<(&'static str, bool)> {
        let d = Hints::MCP_DEFAULTS;
        let mut out = Vec::new();
        if self.read_only != d.read_only {
            out.push(("readOnlyHint", self.read_only));
        }
        if !self.read_only && self.destructive != d.destructive {
            out.push(("destructiveHint", self.destructive));
        }
        if !self.read_only && self.idempotent != d.idempotent {
            out.push(("idempotentHint", self.idempotent));
        }
        if self.open_world != d.open_world {
            out.push(("openWorldHint", self.open_world));
        }
        out
    }

    /// The hints a client reads from a tool entry's annotations (`get` gives a stated one):
    /// MCP's default for each one left out, and for a read-only tool what a read is (not
    /// destructive, idempotent).
    pub fn as_read(get: impl Fn(&str) -> Option<bool>) -> Hints {
        let d = Hints::MCP_DEFAULTS;
        let read_only = get("readOnlyHint").unwrap_or(d.read_only);
        Hints {
            read_only,
            destructive: get("destructiveHint").unwrap_or(!read_only && d.destructive),
            idempotent: get("idempotentHint").unwrap_or(read_only || d.idempotent),
            open_world: get("openWorldHint").unwrap_or(d.open_world),
        }
    }
}

/// The one classification every surface consults.
pub struct ExecutionPolicy;

impl ExecutionPolicy {
    /// The annotations a caller may rely on for a capability with this effect (DESIGN §3);
    /// `additive` says that the capability only adds files and never changes an existing
    /// byte, which makes a repository write not destructive; a capability whose answer is the
    /// client's model's ([`Determinism::Client`]) reaches an open world.
    pub const fn hints(effect: Effect, additive: bool, determinism: Determinism) -> Hints {
        let open_world = matches!(determinism, Determinism::Client);
        match effect {
            Effect::Read => Hints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world,
            },
            Effect::ProcessState => Hints {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world,
            },
            Effect::RepositoryWrite => Hints {
                read_only: false,
                destructive: !additive,
                idempotent: false,
                open_world,
            },
        }
    }

    /// The approval a call deserves, from what it changes and what it can reveal. An additive
    /// write still asks at every call: it adds repository content the caller should see first.
    pub const fn approval(effect: Effect, disclosure: Disclosure) -> Approval {
        match (effect, disclosure) {
            (Effect::RepositoryWrite, _) => Approval::PerCall,
            (Effect::ProcessState, _) => Approval::Session,
            (Effect::Read, Disclosure::Repository) => Approval::Session,
            (Effect::Read, Disclosure::None | Disclosure::Metadata) => Approval::None,
        }
    }
}

/// What a manifest declares about a capability's behaviour: everything the policy derives
/// from. The codegen's capability and the binary's descriptor both dereference to it, so
/// hints, approval and profile membership have this one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    /// What a call changes.
    pub effect: Effect,
    /// Only for [`Effect::RepositoryWrite`]: the capability adds files and never changes or
    /// removes an existing one (a create that refuses to overwrite). Not destructive.
    pub additive: bool,
    /// What a call can reveal.
    pub disclosure: Disclosure,
    /// What the answer is a function of.
    pub determinism: Determinism,
    /// Stable, experimental or planned.
    pub stability: Stability,
    /// The toolset the capability belongs to.
    pub toolset: Toolset,
}

impl Class {
    /// The annotations every projection shows, from the one policy table.
    pub const fn hints(&self) -> Hints {
        ExecutionPolicy::hints(self.effect, self.additive, self.determinism)
    }

    /// The approval a confirmation UI should ask for.
    pub const fn approval(&self) -> Approval {
        ExecutionPolicy::approval(self.effect, self.disclosure)
    }

    /// Planned capabilities are listed, never executable.
    pub fn executable(&self) -> bool {
        self.stability != Stability::Planned
    }

    /// Whether the surfaces of a process started with `--allow-effects max` may mention this
    /// capability: its effect is at most `max`. The one test of an effect against a profile.
    pub fn within(&self, max: Effect) -> bool {
        self.effect <= max
    }

    /// Whether a process started with `--allow-effects max` executes this capability:
    /// executable, and its effect at most `max`.
    pub fn served_by(&self, max: Effect) -> bool {
        self.executable() && self.within(max)
    }
}

impl Effect {
    /// Every effect, weakest first.
    pub const ALL: [Effect; 3] = [Effect::Read, Effect::ProcessState, Effect::RepositoryWrite];

    /// The manifest spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::ProcessState => "process_state",
            Effect::RepositoryWrite => "repository_write",
        }
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

impl Disclosure {
    /// The manifest spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Disclosure::None => "none",
            Disclosure::Metadata => "metadata",
            Disclosure::Repository => "repository",
        }
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Disclosure> {
        [
            Disclosure::None,
            Disclosure::Metadata,
            Disclosure::Repository,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

impl Determinism {
    /// The manifest spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Determinism::Input => "input",
            Determinism::Repository => "repository",
            Determinism::Process => "process",
            Determinism::Client => "client",
        }
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Determinism> {
        [
            Determinism::Input,
            Determinism::Repository,
            Determinism::Process,
            Determinism::Client,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

impl Stability {
    /// The manifest spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Stability::Stable => "stable",
            Stability::Experimental => "experimental",
            Stability::Planned => "planned",
        }
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Stability> {
        [
            Stability::Stable,
            Stability::Experimental,
            Stability::Planned,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

impl Approval {
    /// The spelling used in `_meta["seneschal/approval"]` and OpenAPI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Approval::None => "none",
            Approval::Session => "session",
            Approval::PerCall => "per_call",
        }
    }
}

/// The group of capabilities a client can be given or spared, as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    /// Reading, finding, searching and changing the working tree's files.
    Files,
    /// What git knows: status, diffs, the log, commits, blame, branches.
    History,
    /// Changing git's state: staging, committing, branching, switching, restoring.
    Git,
    /// The repository's ADRs, guides and skills: listing, reading, checking, writing them.
    Knowledge,
    /// This process and its caller: notes, the audit of writes, the server's status.
    Session,
    /// seneschal describing itself: its registry, contract, projections, wiring, architecture.
    Introspection,
}

impl Toolset {
    /// Every toolset, in the order surfaces list them.
    pub const ALL: [Toolset; 6] = [
        Toolset::Files,
        Toolset::History,
        Toolset::Git,
        Toolset::Knowledge,
        Toolset::Session,
        Toolset::Introspection,
    ];

    /// The manifest and `--toolsets` spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Toolset::Files => "files",
            Toolset::History => "history",
            Toolset::Git => "git",
            Toolset::Knowledge => "knowledge",
            Toolset::Session => "session",
            Toolset::Introspection => "introspection",
        }
    }

    /// Parses the manifest spelling.
    pub fn parse(s: &str) -> Option<Toolset> {
        Toolset::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// This toolset's bit in a `Toolsets` mask.
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// What the toolset holds, in one sentence (for `--help` and the reference).
    pub const fn about(self) -> &'static str {
        match self {
            Toolset::Files => "read, find, search and change the working tree's files",
            Toolset::History => "status, diffs, log, commits, blame, branches",
            Toolset::Git => "stage, commit, branch, switch, restore",
            Toolset::Knowledge => "the repository's ADRs, guides and skills",
            Toolset::Session => "notes, the audit of writes, the server's status",
            Toolset::Introspection => {
                "seneschal's own registry, contract, projections, wiring and architecture"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stated_hints_read_back_as_the_policy_s_hints() {
        let determinisms = [
            Determinism::Input,
            Determinism::Repository,
            Determinism::Process,
            Determinism::Client,
        ];
        for effect in Effect::ALL {
            for additive in [false, true] {
                for determinism in determinisms {
                    let h = ExecutionPolicy::hints(effect, additive, determinism);
                    let stated = h.stated();
                    let get = |k: &str| stated.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
                    assert_eq!(
                        Hints::as_read(get),
                        h,
                        "{effect:?} {additive} {determinism:?}"
                    );
                }
            }
        }
    }
}
