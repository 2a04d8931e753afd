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
