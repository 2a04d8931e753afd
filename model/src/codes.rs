//! The stable error codes of DESIGN §3 and what each transport makes of them.
//!
//! The build-time codegen renders the reference, OpenAPI error responses and `--help` from
//! the same table the binary answers with.
//! A code is never deleted; a retired one would be deprecated here.

/// One of the stable one-word error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The input does not match the capability's input schema, or is malformed.
    InvalidInput,
    /// The thing the input names does not exist.
    NotFound,
    /// The policy or a confinement rule refuses the call.
    Refused,
    /// The repository changed under the caller (a digest or idempotency key clash).
    Conflict,
    /// The capability is planned, or the request asks for something not served.
    Unsupported,
    /// A fault inside seneschal.
    Internal,
    /// The HTTP method is not served at that path (the answer's `Allow` names those that are).
    MethodNotAllowed,
    /// The request is larger than the process accepts (`serve --max-body`).
    TooLarge,
    /// The call needs a confirmation it did not get: declined, or nobody could be asked.
    NotApproved,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::InvalidInput,
        ErrorCode::NotFound,
        ErrorCode::Refused,
        ErrorCode::Conflict,
        ErrorCode::Unsupported,
        ErrorCode::Internal,
        ErrorCode::MethodNotAllowed,
        ErrorCode::TooLarge,
        ErrorCode::NotApproved,
    ];

    /// Codes every executable capability can return whether it declares them or not.
    pub const UNIVERSAL: [ErrorCode; 2] = [ErrorCode::InvalidInput, ErrorCode::Internal];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Refused => "refused",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Internal => "internal",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotApproved => "not_approved",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The HTTP status of an RFC 9457 problem carrying this code.
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidInput => 400,
            ErrorCode::NotFound => 404,
            ErrorCode::Refused => 403,
            ErrorCode::Conflict => 409,
            ErrorCode::Unsupported => 501,
            ErrorCode::Internal => 500,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::TooLarge => 413,
            ErrorCode::NotApproved => 403,
        }
    }

    /// The process exit code of the command line for this code.
    pub const fn exit_code(self) -> u8 {
        match self {
            ErrorCode::Internal => 1,
            ErrorCode::InvalidInput => 2,
            ErrorCode::NotFound => 3,
            ErrorCode::Refused => 4,
            ErrorCode::Conflict => 5,
            ErrorCode::Unsupported => 6,
            ErrorCode::MethodNotAllowed => 7,
            ErrorCode::TooLarge => 8,
            ErrorCode::NotApproved => 9,
        }
    }

    /// One sentence on when the code is returned.
    pub const fn meaning(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "the input is malformed or does not match the input schema",
            ErrorCode::NotFound => "what the input names does not exist",
            ErrorCode::Refused => "the effect policy or a confinement rule refuses the call",
            ErrorCode::Conflict => "the repository changed under the caller",
            ErrorCode::Unsupported => "the capability is planned or the request is not served",
            ErrorCode::Internal => "a fault inside seneschal",
            ErrorCode::MethodNotAllowed => "the HTTP method is not served at that path (HTTP only)",
            ErrorCode::TooLarge => "the request is larger than the process accepts",
            ErrorCode::NotApproved => {
                "the call needs a confirmation it did not get: declined, or nobody could be asked"
            }
        }
    }
}

/// Exit code of `generate --check` when a committed projection is stale.
pub const EXIT_STALE: u8 = 10;
/// Exit code of `knowledge check` when the repository's knowledge has findings.
pub const EXIT_FINDINGS: u8 = 11;
/// Exit code of `audit verify` when the audit log's chain, anchor or MACs do not hold.
pub const EXIT_BROKEN: u8 = 12;
/// Exit code of a maintainer command (`generate`, `contract diff|check|release`,
/// `conformance`, `new`) run outside seneschal's own checkout.
pub const EXIT_NOT_CHECKOUT: u8 = 13;
/// The exit codes of `contract diff`, by the highest change class: wire, patch, minor, breaking.
pub const EXIT_CONTRACT_DIFF: [u8; 4] = [20, 21, 22, 23];
/// Exit code of `contract check` when the version was bumped less than the change requires.
pub const EXIT_GATE: u8 = 24;
/// Exit code of `conformance` when a capability's behaviour falsified one of its claims.
pub const EXIT_FALSIFIED: u8 = 25;

/// An exit status of one command beside the error codes' own ([`ErrorCode::exit_code`]): the
/// first and last status it covers, the command, and when it is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandExit {
    /// The first status.
    pub first: u8,
    /// The last status (the first, unless the command returns a range).
    pub last: u8,
    /// The command that returns it.
    pub command: &'static str,
    /// When.
    pub meaning: &'static str,
}

/// Every exit status a command returns beside success (0) and the error codes' own: `--help`,
/// `generated/cli.md` and the README's table list exactly these (`tests/it/prose.rs`).
pub const COMMAND_EXITS: [CommandExit; 7] = [
    CommandExit {
        first: EXIT_STALE,
        last: EXIT_STALE,
        command: "generate --check",
        meaning: "a committed projection is stale",
    },
    CommandExit {
        first: EXIT_FINDINGS,
        last: EXIT_FINDINGS,
        command: "knowledge check",
        meaning: "the repository's knowledge has findings",
    },
    CommandExit {
        first: EXIT_BROKEN,
        last: EXIT_BROKEN,
        command: "audit verify",
        meaning: "the audit log's chain, anchor or MACs do not hold",
    },
    CommandExit {
        first: EXIT_NOT_CHECKOUT,
        last: EXIT_NOT_CHECKOUT,
        command: "a maintainer command",
        meaning: "run outside seneschal's own checkout",
    },
    CommandExit {
        first: EXIT_CONTRACT_DIFF[0],
        last: EXIT_CONTRACT_DIFF[3],
        command: "contract diff",
        meaning: "the highest change is wire, patch, minor, breaking",
    },
    CommandExit {
        first: EXIT_GATE,
        last: EXIT_GATE,
        command: "contract check",
        meaning: "the version was bumped less than the change requires",
    },
    CommandExit {
        first: EXIT_FALSIFIED,
        last: EXIT_FALSIFIED,
        command: "conformance",
        meaning: "a capability's behaviour falsified one of its claims",
    },
];

impl CommandExit {
    /// The statuses as written in a table: `10`, or `20-23`.
    pub fn statuses(&self) -> String {
        if self.first == self.last {
            self.first.to_string()
        } else {
            format!("{}-{}", self.first, self.last)
        }
    }
}
