//! Credential redaction: the rules that say what a secret looks like, and nothing else.
//!
//! **Where it runs.** Not in handlers: the executor (`crate::execute`) is the one choke
//! point. It walks the answer (and the error) of every capability whose `disclosure` is
//! `repository`, and every knowledge resource the MCP projection lists or reads, and passes
//! each string (object keys too) through [`redact_value`] after the handler and before any
//! transport. A handler that redacts text before matching it (files.search) may call
//! [`redact`] too; the executor's pass is the guarantee either way, and every rule is
//! idempotent (a [`MARKER`] is never matched again).
//!
//! **The rules** (the table [`RULES`], one unit test per rule with a sample and a near miss,
//! and a table of every shape's quoting, separator and line-break variants with their near
//! misses, `variant_rows`), each match replaced with [`MARKER`]:
//!
//! * `private_key`: private key blocks of every armour — PEM (`-----BEGIN [RSA |EC |DSA |
//!   ENCRYPTED |…]PRIVATE KEY-----`), OpenSSH (`-----BEGIN OPENSSH PRIVATE KEY-----`), PGP
//!   (`-----BEGIN PGP PRIVATE KEY BLOCK-----`), SSH2 (`---- BEGIN SSH2 ENCRYPTED PRIVATE KEY
//!   ----`) — from the BEGIN line through its END line, or through the end of the text when the
//!   END line is cut off; whatever sits between (indentation of a YAML block scalar, quotes,
//!   JSON's literal `\n`) is inside the match;
//! * `putty_key`: the private lines of a PuTTY key file;
//! * `url_userinfo`: the user information of a URL (`https://user:token@host/…` →
//!   `https://[REDACTED]@host/…`), except the conventional `git@` user of SSH URLs;
//! * `url_query`: the values of credential-named query parameters (`?access_token=…`);
//! * known token shapes: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab
//!   (`glpat-`), AWS access key ids (`AKIA…`), Slack (`xoxb-`, …), OpenAI and Anthropic style
//!   keys (`sk-…`), Google API keys (`AIza…`), npm tokens, JSON web tokens — whatever precedes
//!   or follows them (`xghp_…`, `MY_ghp_…`, `keyAKIA…`, `ghp_…_suffix`); one glued to a letter,
//!   a digit or `_` before it must look random (a digit, and both cases where its alphabet has
//!   them), so `task-runner-for-the-build` keeps its `sk-`; and `Bearer` credentials;
//! * `assignment`: the value of a key anywhere in a line (a commit subject, a
//!   YAML or JSON file, code, JSON-escaped text) when the key names a secret: `password`,
//!   `passwd`, `passphrase`, `secret`, `token`, `api_key`, `access_key`, `private_key`,
//!   `signing_key`, `secret_key`, `client_secret`, `credential(s)`, `auth`, with any prefix
//!   (`db_password`, `clientSecret`), and `pass`, `pwd` as a whole word or after a separator
//!   (`DB_PASS=`). The key bare or quoted (`"`, `'`, a backtick, JSON-escaped `\"`), then `=`,
//!   `:`, `=>` or `:=` with or without blanks, then the value: quoted the same ways (to its
//!   closing quote, escaped quotes `\"`, `\\\"` and `''` inside; after a JSON-escaped `\n`
//!   too), or bare up to a blank, a quote or a backslash (`password=ab;cd&ef)gh<ij` whole),
//!   less the `,`, `;`, `)`, `}`, `]` that close it in code (`f(password=x)`). Values that
//!   cannot be secrets are kept: numbers, booleans and `null`, placeholders (`${…}`, `$(…)`,
//!   `$` and an upper-case name such as `$DB_PASSWORD`, `{{…}}`, `<…>`; `$ecretPa55word` is a
//!   value), generic types of code (`Option<String>`), bare values opening code (`&[&str]`,
//!   `(none)`, `{…}`), quoted values starting with a blank, values shorter than six characters
//!   (quoted ones only when made of letters, digits, `-`, `_`, `.`, `/`: `"p-1"`, not
//!   `'x;y&z'`) and single letters-only words shorter than twelve (prose: "Token: none yet");
//! * `assignment_next_line`: the value below a key that opens and ends its line (after blanks,
//!   a sequence's `- `, a JSON object's `{` or `,`): a YAML block scalar (`password: |`, `>`,
//!   `|-`, `>+`, `|2`, a comment after it), every line of it replaced and the line count kept;
//!   a YAML value on the next, deeper indented line (`password:` then `  value`); a JSON
//!   value on the next line after a quoted key (`"password":` then `"value"`) — judged as
//!   `assignment` judges a value, and never a nested key, a sequence or a collection;
//! * `environment`: the literal values of this process's environment variables that look
//!   like secrets (see [`env_secret`]): any value of at least [`MIN_ENV_SECRET`] characters
//!   whose name holds a secret word (`TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PASSPHRASE`,
//!   `CREDENTIAL`, `APIKEY`; or a `_`-separated part `KEY`, `PASS`, `PAT`, `PWD`, `AUTH`,
//!   `SIGNING`), and whatever the name (unless it ends in a plain-text part: `_REF`, `_NAME`,
//!   `_BRANCH`, `_USER`, `_HOST`, `_VERSION`, `_DIR`, `_PATH`, `_URL`, …), any value of at
//!   least [`MIN_ENTROPIC`] characters without whitespace that mixes upper case, lower case
//!   and digits with at least [`MIN_BITS`] bits of entropy per character. Never a path that
//!   exists (`HOME`, `PWD`,
//!   `SSH_AUTH_SOCK`), a list of paths (`PATH`), a number, a boolean or a URL without
//!   credentials. So `HOME`, `USER`, `LANG`, `TERM`, `SHELL` are never secrets, and neither is
//!   a commit hash (no upper case). All values are found by one Aho-Corasick automaton built
//!   once, longest first.
//!
//! Cost: the automata are contiguous NFAs (a DFA of the gates costs a one-shot CLI call more
//! to build than every search of its answer gains), built on first use; one Aho-Corasick pass for the environment values and one for every rule's gate (cheap
//! literal searches, `candidates`); a text that holds no gate (most strings of an answer)
//! costs those two scans and no regex, and a text runs only the rules whose gates it holds.
//! For a whole file, [`redact_lines`] gives the same answer at the cost of the lines that hold
//! a gate (found by a vectorised search of a lowered copy), unless a rule that can span lines
//! matches in it (a `bearer` word before a line break, a gated line that ends with a key);
//! [`redact_lines_where`] leaves alone the lines its reader will not look at. The
//! `assignment_next_line` regex runs only on lines that end as a key does (a separator or a
//! block indicator before the comment), checked byte by byte.
//!
//! [`redact_url`] is stricter, for URLs that are known to be URLs (git remotes): it also blanks
//! every query value and fragment — a shaping rule of `repo.identity`, not a guarantee.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Captures, Regex};
use serde_json::Value;

/// What a redacted secret is replaced with.
pub const MARKER: &str = "[REDACTED]";

/// The shortest value of a secret-named environment variable treated as a secret; shorter ones
/// would blank common words.
pub const MIN_ENV_SECRET: usize = 8;
/// The shortest value of any other environment variable treated as a secret by its shape.
pub const MIN_ENTROPIC: usize = 16;
/// The Shannon entropy, in bits per character, a value needs to look random.
pub const MIN_BITS: f64 = 3.0;

/// How a rule's match is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replace {
    /// The whole match.
    Whole,
    /// The user information of a URL, unless it is `git` (group 1 the scheme).
    Userinfo,
    /// The value after group 1 (`name=`), unless it is already a marker.
    AfterGroup1,
    /// The value of an assignment (a group `ev`, `nv`, `dv`, `sv`, `tv` or `bv`), unless it
    /// cannot be a secret ([`assignment_value_is_secret`]).
    Value,
    /// The value of an assignment whose key ends its line: a YAML block scalar's lines, or the
    /// value on the next line ([`next_lines`]).
    NextLines,
    /// A token shape, matched whatever precedes it: the whole match, unless it is glued to a
    /// letter, a digit or `_` before it and does not look random ([`glued_token_is_secret`]).
    /// `cased` when the token's alphabet has both cases.
    Token { cased: bool },
}

/// One redaction rule, compiled on first need. A text that holds none of its `gates` (cheap
/// literal searches) cannot match, so most texts never pay for compiling the regex.
pub struct Rule {
    /// The rule's name, for tests and documentation.
    pub name: &'static str,
    gates: &'static [&'static str],
    /// Look for the gates without regard to ASCII case (they are then written lower-case).
    fold: bool,
    pattern: &'static str,
    replace: Replace,
    re: OnceLock<Regex>,
}

impl Rule {
    const fn new(
        name: &'static str,
        gates: &'static [&'static str],
        fold: bool,
        pattern: &'static str,
        replace: Replace,
    ) -> Rule {
        Rule {
            name,
            gates,
            fold,
            pattern,
            replace,
            re: OnceLock::new(),
        }
    }

    fn regex(&self) -> &Regex {
        self.re
            .get_or_init(|| Regex::new(self.pattern).expect("redaction rules compile"))
    }
}

/// The armour line of a private key block, BEGIN or END (`-----BEGIN RSA PRIVATE KEY-----`,
/// `-----BEGIN PGP PRIVATE KEY BLOCK-----`, `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`).
macro_rules! armour {
    ($word:literal) => {
        concat!(
            "-{4,5} ?",
            $word,
            " [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
        )
    };
}

/// The key of an assignment and its separator: the secret words that may follow any prefix
/// (`db_password`, `clientSecret`), then the short ones that must stand alone or follow a
/// separator; the key unquoted, quoted (`"`, `'`, a backtick, JSON-escaped `\"`); then `=`,
/// `:`, `=>` or `:=`, with or without blanks around.
macro_rules! secret_key {
    () => {
        concat!(
            r"(?P<k>(?:[a-z0-9_.\-]*?(?:password|passwd|passphrase|secret|token|api[_\-]?key",
            r"|access[_\-]?key|private[_\-]?key|signing[_\-]?key|secret[_\-]?key|credentials?|auth)",
            r"|(?-u:\b)(?:[a-z0-9_.\-]*[_.\-])?(?:pass|pwd))(?:[_.\-][a-z0-9_.\-]*)?)",
            r#"\\{0,3}(?P<kq>["'`])?[ \t]*(?::=|=>|[:=])"#,
        )
    };
}

/// The text of a value quoted with JSON-escaped quotes (`\"…\"`), up to its closing `\"`: an
/// escaped quote inside is `\\\"`, an escaped backslash `\\\\`. Like every quoted value, it
/// starts with no blank (prose: a `password:` in YAML, where the next backtick opens no value).
macro_rules! escaped_quoted {
    () => {
        concat!(
            r#"(?:[^"\\\s]|\\[^"\\\r\n]|\\\\(?:[^"\\\r\n]|\\[^\r\n]))"#,
            r#"(?:[^"\\\r\n]|\\[^"\\\r\n]|\\\\(?:[^"\\\r\n]|\\[^\r\n]))*"#,
        )
    };
}

/// A value, in the order tried: JSON-escaped quotes (`ev`), double quotes with their escapes
/// (`dv`), single quotes with `''` and `\'` (`sv`), backticks (`tv`), bare up to a blank, a quote
/// or a backslash (`bv`). A quoted value runs to its closing quote or the end of the line and
/// starts with no blank; a bare one starts with no opener of code (`&[&str]`, `(none)`, `{}`).
macro_rules! value {
    () => {
        concat!(
            r#"(?:\\"(?P<ev>"#,
            escaped_quoted!(),
            r#")|"(?P<dv>(?:[^"\\\s]|\\[^\r\n])(?:[^"\\\r\n]|\\[^\r\n])*)"#,
            r#"|'(?P<sv>(?:[^'\\\s]|''|\\[^\r\n])(?:[^'\\\r\n]|''|\\[^\r\n])*)"#,
            r"|`(?P<tv>[^`\s][^`\r\n]*)",
            r#"|(?P<bv>[^\s"'`\\&\[({][^\s"'`\\]*))"#,
        )
    };
}

/// The `assignment` rule: a key, its separator and the value on the same line (or after a
/// JSON-escaped line break, `\n`, when JSON-escaped quotes follow it: `nv`).
macro_rules! assignment {
    () => {
        concat!(
            "(?i)",
            secret_key!(),
            r"[ \t]*(?:(?:\\r)?\\n[ \t]*\\",
            r#""(?P<nv>"#,
            escaped_quoted!(),
            ")|",
            value!(),
            ")",
        )
    };
}

/// The `assignment_next_line` rule: a key and its separator that end their line, with a YAML
/// block indicator (`|`, `>`, `|-`, `>+`, `|2`, …) or nothing after them (a blank, a comment).
/// The key opens its line, after blanks and a sequence's `- ` or a JSON object's `{` or `,`:
/// in code a key that ends its line follows something (`if token:`, `def auth(self):`).
macro_rules! assignment_next_line {
    () => {
        concat!(
            r"(?im)^[ \t]*(?:- |[{,][ \t]*)?",
            r#"(?:\\{0,3}["'`])?"#,
            secret_key!(),
            r"[ \t]*(?P<ind>[|>][0-9+\-]{0,2})?[ \t]*(?:#[^\n]*)?\r?$",
        )
    };
}

/// Every rule, in the order they run. The environment's values run before all of them.
pub static RULES: [Rule; 16] = [
    Rule::new(
        "private_key",
        &["PRIVATE KEY"],
        false,
        concat!(armour!("BEGIN"), r"(?s:.*?)(?:", armour!("END"), r"|\z)"),
        Replace::Whole,
    ),
    Rule::new(
        "putty_key",
        &["private-lines:"],
        true,
        r"(?i)Private-Lines: *[0-9]+(?s:.*?)(?:Private-MAC: *[0-9a-f]+|\z)",
        Replace::Whole,
    ),
    Rule::new(
        "url_userinfo",
        &["://"],
        false,
        r"(?i)(?-u:\b)([a-z][a-z0-9+.\-]*://)([^/\s@?#]+)@",
        Replace::Userinfo,
    ),
    Rule::new(
        "url_query",
        &[
            "token=",
            "auth=",
            "authorization=",
            "key=",
            "password=",
            "passwd=",
            "pwd=",
            "secret=",
            "sig=",
            "signature=",
            "x-amz-",
            "code=",
        ],
        true,
        r"(?i)([?&;](?:access_token|refresh_token|id_token|private_token|token|auth|authorization|api_key|apikey|key|password|passwd|pwd|secret|client_secret|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|code)=)[^&#\s]+",
        Replace::AfterGroup1,
    ),
    Rule::new(
        "github",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        false,
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "github_pat",
        &["github_pat_"],
        false,
        r"github_pat_[A-Za-z0-9_]{22,}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "gitlab",
        &["glpat-"],
        false,
        r"glpat-[A-Za-z0-9_\-]{20,}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "aws_key_id",
        &[
            "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA",
        ],
        false,
        r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}",
        Replace::Token { cased: false },
    ),
    Rule::new(
        "slack",
        &["xox"],
        false,
        r"xox[abposr]-[A-Za-z0-9\-]{10,}",
        Replace::Token { cased: false },
    ),
    Rule::new(
        "sk_key",
        &["sk-"],
        false,
        r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "google_api",
        &["AIza"],
        false,
        r"AIza[0-9A-Za-z_\-]{35}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "npm",
        &["npm_"],
        false,
        r"npm_[A-Za-z0-9]{36}",
        Replace::Token { cased: true },
    ),
    Rule::new(
        "jwt",
        &["eyJ"],
        false,
        r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        Replace::Whole,
    ),
    Rule::new(
        "bearer",
        &["bearer"],
        true,
        r"(?i)(?-u:\b)bearer\s+[A-Za-z0-9._~+/=\-]{16,}",
        Replace::Whole,
    ),
    Rule::new(
        "assignment",
        &[
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
        ],
        true,
        assignment!(),
        Replace::Value,
    ),
    Rule::new(
        "assignment_next_line",
        &[
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
        ],
        true,
        assignment_next_line!(),
        Replace::NextLines,
    ),
];

/// Whether the value of an assignment can be a secret (see the module documentation). A
/// value shorter than six characters is kept (prose: "Token: none yet"), unless it is `quoted`
/// (or a block scalar's text: a value by its form) and holds a character other than a letter,
/// a digit, `-`, `_`, `.` or `/` (`'x;y&z'`; not `"p-1"` or `"n/a"`).
fn assignment_value_is_secret(v: &str, quoted: bool) -> bool {
    let v = v.trim();
    let lower = v.to_ascii_lowercase();
    let plain_short = v.len() < 6
        && (!quoted
            || v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/')));
    if v.is_empty() || plain_short || lower.starts_with("[redacted") || is_generic_type(v) {
        return false;
    }
    let placeholder = is_placeholder(v)
        || v.starts_with("{{")
        || v.starts_with('<')
        || v.starts_with("%(")
        || v.bytes().all(|b| matches!(b, b'*' | b'x' | b'X' | b'.'));
    let number = v
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'_');
    let keyword = matches!(
        lower.as_str(),
        "true" | "false" | "null" | "none" | "nil" | "undefined" | "required" | "optional"
    );
    let word = v.len() < 12 && v.bytes().all(|b| b.is_ascii_alphabetic());
    !(placeholder || number || keyword || word)
}

/// Whether a value starting with `$` names what a shell, a template or a CI fills in rather
/// than holding a secret: `${…}`, `$(…)`, `$` and an upper-case name (`$DB_PASSWORD`, `$1`),
/// `$@`, `$*`, `$#`, `$?`. `$ecretPa55word` is a value.
fn is_placeholder(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('$') else {
        return false;
    };
    rest.starts_with('{')
        || rest.starts_with('(')
        || matches!(rest, "@" | "*" | "#" | "?" | "!" | "-" | "$")
        || (!rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
}

/// Whether `v` is a generic type of code (`Option<String>`, `Zeroizing<Vec<u8>>`,
/// `HashMap<String,Value>`): a path, then `<`, ending with the `>` that closes it, made of
/// names, `<`, `>`, `,`, `&`, `'`, `[`, `]`, `;` and `::`.
fn is_generic_type(v: &str) -> bool {
    let Some((head, _)) = v.split_once('<') else {
        return false;
    };
    let name = |p: &str| {
        p.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    v.ends_with('>')
        && head.split("::").all(name)
        && v.matches('<').count() == v.matches('>').count()
        && v.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'<' | b'>' | b',' | b'&' | b'\'' | b'[' | b']' | b';' | b':'
                )
        })
}

/// The closing characters a bare value may be followed by in code or JSON (`f(password=x)`,
/// `{"token":123}`): kept outside the value when they end it.
const CLOSERS: &[char] = &[',', ';', ')', '}', ']'];

/// Whether a token shape glued to the letter, digit or `_` before it (`xghp_…`, `MY_ghp_…`,
/// `keyAKIA…`) looks random: it holds a digit and, for an alphabet of both cases, an upper-case
/// and a lower-case letter. A word that happens to hold a prefix (`task-runner-…` holds `sk-`,
/// `EURASIA…` holds `ASIA`) is kept; a token after a blank, a quote or `=` is replaced whatever
/// it holds.
fn glued_token_is_secret(text: &str, start: usize, token: &str, cased: bool) -> bool {
    let glued = text.as_bytes()[..start]
        .last()
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if !glued {
        return true;
    }
    let has = |f: fn(&u8) -> bool| token.as_bytes().iter().any(f);
    has(u8::is_ascii_digit)
        && (!cased || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase)))
}

/// The literal values of this process's environment variables that look like secrets, and
/// the automaton that finds them all in one pass (leftmost longest, so a value that contains
/// another is blanked whole).
fn env_automaton() -> Option<&'static AhoCorasick> {
    static AC: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    AC.get_or_init(|| {
        let values = secret_env_values(std::env::vars_os());
        if values.is_empty() {
            return None;
        }
        Some(
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .match_kind(MatchKind::LeftmostLongest)
                .build(values)
                .expect("literal values build an automaton"),
        )
    })
    .as_ref()
}

/// Whether one of the environment's secret values holds a line break (then a text joined
/// from lines may hold it where the lines, apart, do not).
fn env_value_spans_lines() -> bool {
    static SPANS: OnceLock<bool> = OnceLock::new();
    *SPANS.get_or_init(|| {
        secret_env_values(std::env::vars_os())
            .iter()
            .any(|v| v.contains('\n'))
    })
}

/// The spans of `text` that [`redact_lines`] may act on: each match of the line finder's gates
/// in its lowered text and of the environment's secret values in it. A run of whole lines of
/// `text` that no span touches holds no gate and no such value, nor does any text made of its
/// lines (a gate holds no line break: `no_gate_holds_a_line_break`), so [`redact_lines`] leaves
/// such a text as it is, counting nothing. A match the searches skip overlaps one they report,
/// on the same line. `None` when an environment value holds a line break (a text joined from
/// lines may then hold one that `text` does not).
pub fn spans_redaction_may_touch(text: &str) -> Option<Vec<(usize, usize)>> {
    if env_value_spans_lines() {
        return None;
    }
    let mut lowered = text.as_bytes().to_vec();
    lowered.make_ascii_lowercase();
    let mut spans: Vec<(usize, usize)> = line_finder()
        .find_iter(&lowered[..])
        .map(|m| (m.start(), m.end()))
        .collect();
    if let Some(ac) = env_automaton() {
        spans.extend(ac.find_iter(text).map(|m| (m.start(), m.end())));
        spans.sort_unstable();
    }
    Some(spans)
}

/// The secret words a `_`-separated part of an environment variable's name may be.
const SECRET_NAME_PARTS: &[&str] = &[
    "KEY", "KEYS", "PASS", "PAT", "PWD", "AUTH", "SIGNING", "PIN",
];
/// The secret words an environment variable's name may hold anywhere.
const SECRET_NAME_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "ACCESSKEY",
    "PRIVATEKEY",
];

/// True for environment variable names that conventionally hold credentials: `GITHUB_TOKEN`,
/// `OPENAI_KEY`, `DB_PASS`, `GITHUB_PAT`, `SIGNING_KEY`, `AWS_SECRET_ACCESS_KEY`; not `PATH`,
/// `KEYBOARD`, `GIT_AUTHOR_NAME` or `XAUTHORITY`.
pub fn is_secret_env_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|w| n.contains(w))
        || n.split(['_', '-', '.'])
            .any(|part| SECRET_NAME_PARTS.contains(&part))
}

/// True for values that are plainly not secrets: numbers, booleans, paths that exist, lists
/// of paths, URLs without credentials.
fn is_plain_value(v: &str) -> bool {
    let number = v
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'_' | b','));
    let boolean = matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off"
    );
    let path = |p: &str| {
        p.starts_with('~')
            || (p.starts_with('/')
                && std::path::Path::new(p)
                    .parent()
                    .is_some_and(|parent| parent.exists()))
    };
    let paths =
        v.contains(':') && !v.contains("://") && v.split(':').all(|p| p.is_empty() || path(p));
    let url = v.contains("://")
        && !v.contains('@')
        && !v.contains('?')
        && !v.contains(char::is_whitespace);
    number || boolean || path(v) || paths || url
}

/// Whether a value looks random: long, no whitespace, upper and lower case and digits, and
/// at least [`MIN_BITS`] bits of Shannon entropy per character.
fn looks_random(v: &str) -> bool {
    if v.len() < MIN_ENTROPIC || v.contains(char::is_whitespace) {
        return false;
    }
    let has = |f: fn(&u8) -> bool| v.as_bytes().iter().any(f);
    if !(has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit)) {
        return false;
    }
    let mut counts = [0u32; 256];
    for b in v.bytes() {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    let bits: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum();
    bits >= MIN_BITS
}

/// Whether the environment variable `name=value` holds a secret this process must never
/// return: see the module documentation.
pub fn env_secret(name: &str, value: &str) -> bool {
    let v = value.trim();
    if v.len() < MIN_ENV_SECRET || is_plain_value(v) {
        return false;
    }
    is_secret_env_name(name) || (looks_random(v) && !names_plain_text(name))
}

/// The last `_`-separated parts of names whose values are plain text however random they
/// look: a CI's branch (`GITHUB_REF_NAME`, `CI_COMMIT_BRANCH`), a user or host name, a
/// version. Their values must not blank a branch name or a path in an answer.
const PLAIN_NAME_ENDS: &[&str] = &[
    "REF", "NAME", "BRANCH", "TAG", "USER", "USERNAME", "HOST", "HOSTNAME", "VERSION", "TITLE",
    "DIR", "PATH", "FILE", "URL", "EMAIL",
];

fn names_plain_text(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.rsplit(['_', '-', '.'])
        .next()
        .is_some_and(|last| PLAIN_NAME_ENDS.contains(&last))
}

fn secret_env_values(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    let mut values: Vec<String> = vars
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| env_secret(k, v))
        .map(|(_, v)| v.trim().to_string())
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    values
}

/// Replaces every match of `rule`, counting the replacements; a match that is no secret (the
/// `git` user, a marker, a value that cannot be a secret) is kept and not counted.
fn apply<'t>(rule: &Rule, text: Cow<'t, str>, count: &mut usize) -> Cow<'t, str> {
    // The one-pass gate ignored case; a rule that minds case checks its gates again.
    if !rule.fold && !rule.gates.iter().any(|g| text.contains(g)) {
        return text;
    }
    // User information needs an `@` after the `://`: most URLs have none.
    if rule.replace == Replace::Userinfo && !text.contains('@') {
        return text;
    }
    // An assignment holds a `:` or an `=`, a credential query parameter an `=`: most lines
    // that hold a gate word (`key`, `token`) hold neither.
    let needs = match rule.replace {
        Replace::Value | Replace::NextLines => {
            memchr::memchr2(b':', b'=', text.as_bytes()).is_some()
        }
        Replace::AfterGroup1 => memchr::memchr(b'=', text.as_bytes()).is_some(),
        Replace::Whole | Replace::Userinfo | Replace::Token { .. } => true,
    };
    // Compiled only when the text may match: a key such as `skipped_secret_files` wakes the
    // assignment rule and holds neither `:` nor `=`.
    if !needs {
        return text;
    }
    if rule.replace == Replace::NextLines {
        return next_lines(rule, text, count);
    }
    let re = rule.regex();
    if !re.is_match(&text) {
        return text;
    }
    let mut n = 0;
    let out = re
        .replace_all(&text, |c: &Captures| {
            let whole = &c[0];
            let start = c.get(0).map_or(0, |m| m.start());
            let replaced =
                match rule.replace {
                    Replace::Whole => Some(MARKER.to_string()),
                    Replace::Token { cased } => glued_token_is_secret(&text, start, whole, cased)
                        .then(|| MARKER.to_string()),
                    Replace::Userinfo => {
                        // `ssh://git@host/...` names a conventional user, not a credential.
                        let user = &c[2];
                        (user != "git" && user != MARKER).then(|| format!("{}{MARKER}@", &c[1]))
                    }
                    Replace::AfterGroup1 => (!whole[c[1].len()..].starts_with(MARKER))
                        .then(|| format!("{}{MARKER}", &c[1])),
                    Replace::Value => {
                        let (a, b, quoted) = value_span(c);
                        let v = &text[a..b];
                        assignment_value_is_secret(v, quoted).then(|| {
                            let (a, b) = (a - start, b - start);
                            format!("{}{MARKER}{}", &whole[..a], &whole[b..])
                        })
                    }
                    Replace::NextLines => unreachable!("replaced by next_lines"),
                };
            match replaced {
                Some(s) => {
                    n += 1;
                    s
                }
                None => whole.to_string(),
            }
        })
        .into_owned();
    *count += n;
    if n == 0 {
        text
    } else {
        Cow::Owned(out)
    }
}

/// The span of the value an assignment's captures hold, and whether it was quoted. A bare
/// value ends before the closing characters that end it ([`CLOSERS`]).
fn value_span(c: &Captures) -> (usize, usize, bool) {
    for name in ["nv", "ev", "dv", "sv", "tv"] {
        if let Some(v) = c.name(name) {
            return (v.start(), v.end(), true);
        }
    }
    let v = c.name("bv").expect("a value group");
    let kept = v.as_str().trim_end_matches(CLOSERS).len();
    (v.start(), v.start() + kept, false)
}

/// The value at the start of a line, with the alternatives of [`value!`].
fn line_value() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(concat!("^", value!())).expect("the value rule compiles"))
}

/// The number of blanks (spaces, tabs) `line` starts with.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The lines after `at` (the start of a line) of `text`: start and end of each, without its
/// line break (`\n` or `\r\n`).
fn lines_from(text: &str, at: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut at = Some(at);
    std::iter::from_fn(move || {
        let start = at?;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        at = (end < bytes.len()).then_some(end + 1);
        let end = if end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        Some((start, end))
    })
}

/// `assignment_next_line`: for every key that ends its line (`re` finds it), the value on the
/// lines after it.
///
/// * After a YAML block indicator (`password: |`, `>-`, `|2`), the block: every following line
///   indented deeper than the key's line, blank lines included. If the block's text, less the
///   lines that are already markers, can be a secret ([`assignment_value_is_secret`], as a
///   quoted value), each of those lines is replaced from its first non-blank character, so the
///   text keeps its line count.
/// * Otherwise the next line, indented deeper than the key's line (YAML), or at any indentation
///   after a quoted key (JSON: `"password":` then `"value"`): its value as [`value!`] reads it,
///   unless it opens a collection, a sequence item, a comment or a nested key (`user: bob`).
///
/// Each secret found counts once; a marker is never replaced again. The rule's regex (anchored
/// at both ends of a line) runs only on the lines that may end with a key
/// ([`may_end_with_a_key`]), which are few.
fn next_lines<'t>(rule: &Rule, text: Cow<'t, str>, count: &mut usize) -> Cow<'t, str> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut n = 0;
    let mut resume = 0;
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let line_start = at;
        let Some(nl) = memchr::memchr(b'\n', &bytes[at..]).map(|i| at + i) else {
            // A key on the last line has no value below it.
            break;
        };
        at = nl + 1;
        let header = &text[line_start..nl];
        // A key inside the block of another is part of that value.
        if line_start < resume || !may_end_with_a_key(header) {
            continue;
        }
        let Some(c) = rule.regex().captures(header) else {
            continue;
        };
        let key_indent = indentation(header);
        let mut lines = lines_from(&text, at);
        if c.name("ind").is_some() {
            let mut open: Vec<(usize, usize)> = Vec::new();
            for (start, end) in lines {
                let line = &text[start..end];
                if line.trim().is_empty() {
                    continue;
                }
                let indent = indentation(line);
                if indent <= key_indent {
                    break;
                }
                resume = end;
                if line[indent..].trim_end() != MARKER {
                    open.push((start + indent, start + line.trim_end().len()));
                }
            }
            let joined: Vec<&str> = open.iter().map(|(a, b)| &text[*a..*b]).collect();
            if !open.is_empty() && assignment_value_is_secret(&joined.join("\n"), true) {
                spans.extend(open);
                n += 1;
            }
            continue;
        }
        let Some((start, end)) = lines.next() else {
            continue;
        };
        let line = &text[start..end];
        let indent = indentation(line);
        let rest = &line[indent..];
        if rest.is_empty() || (c.name("kq").is_none() && indent <= key_indent) {
            continue;
        }
        let opens = rest.starts_with(['#', '{', '[', ']', '}', ',', '|', '>', '&', '*', '!', '?'])
            || rest == "-"
            || rest.starts_with("- ")
            || rest.starts_with("-\t");
        let Some(v) = line_value().captures(rest).filter(|_| !opens) else {
            continue;
        };
        let (a, b, quoted) = value_span(&v);
        // A nested key (`user: bob`, `"a": 1`) opens a mapping: no value of this key.
        let after = rest[v.get(0).map_or(0, |m| m.end())..]
            .trim_start_matches(['"', '\'', '`', '\\'])
            .trim_start();
        let bare = v.name("bv").map(|m| m.as_str());
        if bare.is_some_and(|t| t.ends_with(':')) || after.starts_with(':') {
            continue;
        }
        resume = end;
        if assignment_value_is_secret(&rest[a..b], quoted) {
            spans.push((start + indent + a, start + indent + b));
            n += 1;
        }
    }
    if n == 0 {
        return text;
    }
    *count += n;
    let mut out = String::with_capacity(text.len() + spans.len() * MARKER.len());
    let mut last = 0;
    for (a, b) in spans {
        out.push_str(&text[last..a]);
        out.push_str(MARKER);
        last = b;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// The rules whose gates `text` holds (bit `i` for `RULES[i]`), found without regard to
/// ASCII case in one Aho-Corasick pass (overlapping, so a gate inside another is seen). A rule
/// whose gates are absent cannot match (each looks for its own gates, with or without case):
/// most strings of an answer hold no gate and cost this one scan, and a URL wakes only the URL
/// rules. A marker holds no gate, so the set found before any replacement stays right.
fn candidates(text: &str) -> u32 {
    let (ac, rule_of) = gates();
    ac.find_overlapping_iter(text)
        .fold(0, |mask, m| mask | rule_of[m.pattern().as_usize()])
}

/// The automaton of every rule's gates (ASCII case ignored) and, for each gate, its rule's bit.
fn gates() -> &'static (AhoCorasick, Vec<u32>) {
    static ALL: OnceLock<(AhoCorasick, Vec<u32>)> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut gates = Vec::new();
        let mut rule_of = Vec::new();
        for (i, r) in RULES.iter().enumerate() {
            for g in r.gates {
                gates.push(*g);
                rule_of.push(1u32 << i);
            }
        }
        let ac = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .ascii_case_insensitive(true)
            .build(gates)
            .expect("the gates are literals");
        (ac, rule_of)
    })
}

/// Replaces the values of the secret environment variables in `text`.
fn environment<'t>(text: Cow<'t, str>, count: &mut usize) -> Cow<'t, str> {
    let Some(ac) = env_automaton() else {
        return text;
    };
    if !ac.is_match(text.as_ref()) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in ac.find_iter(text.as_ref()) {
        out.push_str(&text[last..m.start()]);
        out.push_str(MARKER);
        last = m.end();
        *count += 1;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Redacts every secret this module knows in `text`; returns the text and how many secrets
/// were replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let mut count = 0;
    let mut out = environment(Cow::Borrowed(text), &mut count);
    let mask = candidates(&out);
    for (i, rule) in RULES.iter().enumerate() {
        if mask & (1 << i) != 0 {
            out = apply(rule, out, &mut count);
        }
    }
    (out, count)
}

/// The rules whose match may span lines: a key block, a PuTTY key's lines, `bearer` (`\s+`
/// crosses a line break) and `assignment_next_line` (the value below its key). Every other
/// rule matches inside one line.
#[cfg(test)]
fn multiline_rules() -> u32 {
    RULES
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            matches!(
                r.name,
                "private_key" | "putty_key" | "bearer" | "assignment_next_line"
            )
        })
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The characters outside ASCII that a case-insensitive rule (`(?i)`, Unicode simple case
/// folding) matches as an ASCII letter: the Kelvin sign (`k`) and the long s (`s`). A line
/// holding one may match a rule without holding its gate, so it is redacted with every rule
/// the text woke (`ascii_folds_are_only_kelvin_and_long_s` holds the list).
const FOLDS_TO_ASCII: [&str; 2] = ["\u{17F}", "\u{212A}"];

/// [`redact`] with the same answer, text and count (`redact_lines_answers_as_redact`), at the
/// cost of the lines that need it: the environment's values are replaced in the whole text,
/// as [`redact`] does, then the key blocks (they run first in [`redact`]) in the whole text
/// too, and then, unless a `bearer` match may cross a line break (`bearer_crosses_lines`) or
/// a line that holds a gate ends with a key whose value lies below it (`ends_with_a_key`),
/// only the lines that hold a gate (or a character that folds to ASCII) run the other rules,
/// less `assignment_next_line`, which then has nothing to match. Every other rule's regex
/// matches within one line (no match holds a `\n`, and `\b` sees a line break as it sees the
/// text's edge), so replacing line by line gives what replacing the whole text gives; a marker
/// holds no gate, so the gates found before any replacement stay right.
pub fn redact_lines(text: &str) -> (Cow<'_, str>, usize) {
    redact_lines_where(text, &|_| true)
}

/// [`redact_lines`], except that on the line by line path a line `wanted` refuses is left as
/// it is (and its secrets are not counted). For a reader that only looks at some lines of the
/// answer (files.search looks at the lines its pattern matches), the lines it looks at are
/// those of [`redact`]; the others must never leave.
pub fn redact_lines_where<'t>(
    text: &'t str,
    wanted: &dyn Fn(&str) -> bool,
) -> (Cow<'t, str>, usize) {
    let (out, count, _) = redact_lines_how(text, wanted);
    (out, count)
}

/// [`redact_lines_where`], and whether the rules ran line by line (`false` when no line holds
/// a gate, or when a rule spanning lines may match and the whole text ran them).
fn redact_lines_how<'t>(
    text: &'t str,
    wanted: &dyn Fn(&str) -> bool,
) -> (Cow<'t, str>, usize, bool) {
    let mut count = 0;
    let mut env = environment(Cow::Borrowed(text), &mut count);
    let (mut lines, mut mask) = gated_lines(&env);
    if mask == 0 {
        return (env, count, false);
    }
    // Key blocks run first in `redact` too: one that matches is replaced in the whole text,
    // and the lines are found again in what is left. After them their rules replace nothing.
    // The rules stay those the whole text woke before (as in `redact`): a line holding a
    // character that folds to ASCII runs them all, even one woken only by a key block's
    // armour (`KEY`).
    let blocks = block_rules();
    if mask & blocks != 0 {
        let before = count;
        for (i, rule) in RULES.iter().enumerate() {
            if mask & blocks & (1 << i) != 0 {
                env = apply(rule, env, &mut count);
            }
        }
        if count != before {
            lines = gated_lines(&env).0;
        }
    }
    mask &= !blocks;
    for line in &mut lines {
        line.2 &= !blocks;
    }
    let bytes = env.as_bytes();
    let mut folds = false;
    for c in FOLDS_TO_ASCII {
        for at in memchr::memmem::find_iter(bytes, c.as_bytes()) {
            lines.push(line_around(bytes, at, mask));
            folds = true;
        }
    }
    if folds {
        lines.sort_unstable_by_key(|l| l.0);
        lines.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.2 |= b.2;
            }
            same
        });
    }
    // A match that may cross a line break (`bearer` and its token on the next line, a key
    // that ends its line and its value below it): the whole text runs the rules.
    let next = next_line_rule();
    let spans = (mask & bearer_rule() != 0 && bearer_crosses_lines(&env))
        || lines
            .iter()
            .any(|&(start, end, rules)| rules & next != 0 && ends_with_a_key(&env[start..end]));
    if spans {
        let mut out = env;
        for (i, rule) in RULES.iter().enumerate() {
            if mask & (1 << i) != 0 {
                out = apply(rule, out, &mut count);
            }
        }
        return (out, count, false);
    }
    // Every rule left matches within a line; no line ends with a key, so no value lies below
    // one.
    for line in &mut lines {
        line.2 &= !next;
    }
    let mut out: Option<String> = None;
    let mut last = 0;
    for (start, end, rules) in lines {
        if !wanted(&env[start..end]) {
            continue;
        }
        let mut line = Cow::Borrowed(&env[start..end]);
        for (i, rule) in RULES.iter().enumerate() {
            if rules & (1 << i) != 0 {
                line = apply(rule, line, &mut count);
            }
        }
        // `apply` answers an owned text only when it replaced something.
        if let Cow::Owned(new) = line {
            let o = out.get_or_insert_with(|| String::with_capacity(env.len() + 64));
            o.push_str(&env[last..start]);
            o.push_str(&new);
            last = end;
        }
    }
    match out {
        None => (env, count, true),
        Some(mut o) => {
            o.push_str(&env[last..]);
            (Cow::Owned(o), count, true)
        }
    }
}

/// The lines of `env` holding a gate, in order (start, end: its `\n` or the text's end, and
/// the rules whose gates it holds), and the union of their rules.
fn gated_lines(env: &str) -> (Vec<(usize, usize, u32)>, u32) {
    let bytes = env.as_bytes();
    let mut lines: Vec<(usize, usize, u32)> = Vec::new();
    let mut mask = 0;
    let lower: Vec<u8> = bytes.iter().map(u8::to_ascii_lowercase).collect();
    let finder = line_finder();
    let mut at = 0;
    // A line holding a gate (in any case) holds a lower-case gate of the finder once
    // lowered: find one, take that line's rules, go on after the line.
    while let Some(m) = finder.find(aho_corasick::Input::new(&lower[..]).span(at..lower.len())) {
        let (start, end, _) = line_around(bytes, m.start(), 0);
        let rules = candidates(&env[start..end]);
        mask |= rules;
        lines.push((start, end, rules));
        at = (end + 1).min(lower.len());
    }
    (lines, mask)
}

/// The rules of whole blocks, which run first: `private_key` and `putty_key`.
fn block_rules() -> u32 {
    rules_named(&["private_key", "putty_key"])
}

/// The `bearer` rule, whose `\s+` may cross a line break.
fn bearer_rule() -> u32 {
    rules_named(&["bearer"])
}

/// The `assignment_next_line` rule, whose value lies on the lines after its key.
fn next_line_rule() -> u32 {
    rules_named(&["assignment_next_line"])
}

/// Whether `line` (without its `\n`) holds a key that ends it, as `assignment_next_line`
/// finds one. The rules before it replace with a marker, never with nothing, and a marker
/// ends no key: a line the rule may match in the text they leave is such a line already. Most
/// lines that hold a secret word end otherwise, and cost no regex.
fn ends_with_a_key(line: &str) -> bool {
    may_end_with_a_key(line)
        && RULES[next_line_rule().trailing_zeros() as usize]
            .regex()
            .is_match(line)
}

/// Whether `line` ends as a key that ends its line does: before its comment (a key holds no
/// `#`, so the first `#` starts it) and its blanks, with a separator's last character (`:`,
/// `=`, `>`) or a block indicator (`|`, `>`, then up to two of `0-9`, `+`, `-`), and holding
/// a separator.
fn may_end_with_a_key(line: &str) -> bool {
    let b = line.as_bytes();
    let head = &b[..memchr::memchr(b'#', b).unwrap_or(b.len())];
    let head = head.trim_ascii_end();
    let flag = |c: &u8| c.is_ascii_digit() || matches!(c, b'+' | b'-');
    let n = head.len();
    let indicator = |i: usize| matches!(head[i], b'|' | b'>');
    if memchr::memchr2(b':', b'=', head).is_none() {
        return false;
    }
    match head.last() {
        Some(b':' | b'=' | b'|' | b'>') => true,
        Some(c) if flag(c) => {
            (n >= 2 && indicator(n - 2)) || (n >= 3 && flag(&head[n - 2]) && indicator(n - 3))
        }
        _ => false,
    }
}

fn rules_named(names: &[&str]) -> u32 {
    RULES
        .iter()
        .enumerate()
        .filter(|(_, r)| names.contains(&r.name))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// Whether a match of `bearer` holding a line break may be made in `text` (the text as the
/// rules after the key blocks get it): the word followed by blanks and a line break, anywhere
/// (`\b` and the token left out). The rules before
/// `bearer` replace with a marker, never with nothing, so a match they make possible holds
/// this already: the word and the blanks after it are bytes of `text`.
fn bearer_crosses_lines(text: &str) -> bool {
    // `bearer` has no letter that folds from outside ASCII: ASCII case is all there is.
    let lower = text.as_bytes().to_ascii_lowercase();
    memchr::memmem::find_iter(&lower, b"bearer").any(|at| {
        text[at + 6..]
            .chars()
            .find(|c| *c == '\n' || !c.is_whitespace())
            == Some('\n')
    })
}

/// Finds, in a text lowered to ASCII lower case, the gates of every rule lowered, less those
/// that hold another (`token=` holds `token`): a line holds a gate in any case exactly when
/// its lowered text holds one of these. Case-sensitive, so the automaton's vectorised prefilter
/// runs (a case-insensitive automaton reads the text byte by byte, several times slower).
fn line_finder() -> &'static AhoCorasick {
    static FINDER: OnceLock<AhoCorasick> = OnceLock::new();
    FINDER.get_or_init(|| {
        let all: Vec<String> = RULES
            .iter()
            .flat_map(|r| r.gates.iter().map(|g| g.to_ascii_lowercase()))
            .collect();
        let mut least: Vec<&String> = all
            .iter()
            .filter(|g| !all.iter().any(|h| h != *g && g.contains(h.as_str())))
            .collect();
        least.sort();
        least.dedup();
        AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostFirst)
            .build(least)
            .expect("the gates are literals")
    })
}

/// The line of `bytes` around `at` (without its line break), tagged with `rules`.
fn line_around(bytes: &[u8], at: usize, rules: u32) -> (usize, usize, u32) {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
    (start, end, rules)
}

/// Redacts every string of `value` in place, object keys included (a key of a front matter or
/// of a parsed file is repository content too); returns how many secrets were replaced. Each
/// string gets the answer of [`redact_lines`] (the answer of [`redact`]).
///
/// Most strings of an answer hold nothing to redact, and [`redact_lines`] leaves a string as it
/// is, counting nothing, exactly when the environment's secret values are not in it and its
/// lowered text holds no gate (of the line finder). So the short strings are searched together:
/// joined, each followed by a line break, they are searched once for both (`Joined`); only the
/// strings a match touches, and the long ones (searched alone, with no copy), go through
/// [`redact_lines`]. A match across a string's end (an environment value holding a line break)
/// only sends the strings it touches through [`redact_lines`], which answers for each; a match
/// the search skips lies inside one it reports, whose strings go through too
/// (`redact_value_answers_as_redact_lines_on_every_string` holds the equivalence).
///
/// A short string met again in the same value (an object's keys, a log's author on every
/// commit) among those that go through [`redact_lines`] is answered from the first time:
/// [`redact_lines`] reads nothing but the string and the process's environment, so the same
/// string has the same answer.
pub fn redact_value(value: &mut Value) -> usize {
    let mut joined = Joined::default();
    joined.gather(value);
    let touched = joined.touched();
    if touched.is_empty() {
        return 0;
    }
    let mut walk = Walk {
        touched: &touched,
        at: 0,
        ordinal: 0,
        answered: Answered::default(),
    };
    walk.value(value)
}

/// The short strings of a value joined for one search ([`redact_value`]), in the order
/// [`Walk`] meets them: an object's values before its keys.
#[derive(Default)]
struct Joined {
    /// The strings lowered to ASCII lower case, each followed by `\n`.
    lowered: Vec<u8>,
    /// The strings as they are, joined alike; kept only when the environment has secrets.
    original: Vec<u8>,
    /// Each short string's ordinal and the end of its bytes (before its `\n`) in `lowered`.
    ends: Vec<(usize, usize)>,
    /// The ordinals of the long strings, searched alone.
    long: Vec<usize>,
    /// How many strings were met.
    count: usize,
}

impl Joined {
    /// The longest string joined; a longer one is searched alone, without a copy.
    const LONGEST: usize = 4096;

    fn gather(&mut self, value: &Value) {
        match value {
            Value::String(s) => self.push(s),
            Value::Array(items) => items.iter().for_each(|v| self.gather(v)),
            Value::Object(map) => {
                map.values().for_each(|v| self.gather(v));
                map.keys().for_each(|k| self.push(k));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn push(&mut self, s: &str) {
        let ordinal = self.count;
        self.count += 1;
        if s.len() > Self::LONGEST {
            self.long.push(ordinal);
            return;
        }
        let start = self.lowered.len();
        self.lowered.extend_from_slice(s.as_bytes());
        self.lowered[start..].make_ascii_lowercase();
        self.ends.push((ordinal, self.lowered.len()));
        self.lowered.push(b'\n');
        if env_automaton().is_some() {
            self.original.extend_from_slice(s.as_bytes());
            self.original.push(b'\n');
        }
    }

    /// The ordinals of the strings that must go through [`redact_lines`], in order: every
    /// short string a match of the gates or of the environment's values touches, and every
    /// long one.
    fn touched(&self) -> Vec<usize> {
        let mut hit: Vec<usize> = Vec::new();
        // The index in `ends` of the first string a span touches, then of every one up to its end.
        let mut mark = |start: usize, end: usize| {
            let first = self.ends.partition_point(|&(_, e)| e < start);
            for &(ordinal, e) in &self.ends[first..] {
                hit.push(ordinal);
                if e >= end {
                    break;
                }
            }
        };
        for m in line_finder().find_iter(&self.lowered[..]) {
            mark(m.start(), m.end());
        }
        if let Some(ac) = env_automaton() {
            for m in ac.find_iter(&self.original[..]) {
                mark(m.start(), m.end());
            }
        }
        hit.extend_from_slice(&self.long);
        hit.sort_unstable();
        hit.dedup();
        hit
    }
}

/// Answers of [`redact_lines`] for the short strings met so far ([`redact_value`]).
#[derive(Default)]
struct Answered(std::collections::HashMap<String, (Option<String>, usize)>);

impl Answered {
    /// The longest string remembered, and how many at most.
    const LONGEST: usize = 256;
    const MOST: usize = 4096;

    /// The redacted text of `text` (`None`: as it is) and the secrets replaced.
    fn redact(&mut self, text: &str) -> (Option<String>, usize) {
        if let Some(known) = self.0.get(text) {
            return known.clone();
        }
        let (out, n) = redact_lines(text);
        let out = match out {
            Cow::Owned(o) => Some(o),
            Cow::Borrowed(_) => None,
        };
        if text.len() <= Self::LONGEST && self.0.len() < Self::MOST {
            self.0.insert(text.to_string(), (out.clone(), n));
        }
        (out, n)
    }
}

/// The second walk of [`redact_value`]: meets the strings in [`Joined`]'s order and redacts
/// those it touched.
struct Walk<'a> {
    touched: &'a [usize],
    /// The next index into `touched`.
    at: usize,
    /// The ordinal of the next string met.
    ordinal: usize,
    answered: Answered,
}

impl Walk<'_> {
    /// Whether the next string met is one to redact.
    fn next_touched(&mut self) -> bool {
        let ordinal = self.ordinal;
        self.ordinal += 1;
        if self.touched.get(self.at) == Some(&ordinal) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, value: &mut Value) -> usize {
        match value {
            Value::String(s) => {
                if !self.next_touched() {
                    return 0;
                }
                let (text, n) = self.answered.redact(s);
                if let Some(text) = text {
                    *s = text;
                }
                n
            }
            Value::Array(items) => items.iter_mut().map(|v| self.value(v)).sum(),
            Value::Object(map) => {
                let mut n: usize = map.values_mut().map(|v| self.value(v)).sum();
                let keys: Vec<bool> = (0..map.len()).map(|_| self.next_touched()).collect();
                if !keys.contains(&true) {
                    return n;
                }
                let mut renamed = false;
                let redacted: Vec<Option<String>> = map
                    .keys()
                    .zip(&keys)
                    .map(|(k, &touched)| {
                        if !touched {
                            return None;
                        }
                        let (text, m) = self.answered.redact(k);
                        n += m;
                        renamed |= text.is_some();
                        text
                    })
                    .collect();
                if renamed {
                    let old = std::mem::take(map);
                    for ((k, v), new) in old.into_iter().zip(redacted) {
                        map.insert(new.unwrap_or(k), v);
                    }
                }
                n
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }
}

/// Redacts a URL known to be a URL (a git remote): [`redact`], then every query value and
/// the fragment, which no remote needs to show. Returns the URL and whether anything changed.
pub fn redact_url(url: &str) -> (String, bool) {
    let (text, n) = redact(url);
    let mut out = text.into_owned();
    let mut changed = n > 0;
    let fragment = out.find('#').map(|hash| {
        out.truncate(hash);
        changed = true;
        format!("#{MARKER}")
    });
    if let Some(q) = out.find('?') {
        let (base, query) = out.split_at(q + 1);
        let blanked: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if v != MARKER => {
                    changed = true;
                    format!("{k}={MARKER}")
                }
                _ => pair.to_string(),
            })
            .collect();
        out = format!("{base}{}", blanked.join("&"));
    }
    out.push_str(fragment.as_deref().unwrap_or(""));
    (out, changed)
}

/// True when `bytes` hold a private key block of any armour (PEM, OpenSSH, PGP, SSH2, PuTTY)
/// followed by key material, also indented (a YAML block scalar), quoted or JSON-escaped
/// (`\n` written as two characters between the lines).
pub fn holds_private_key(bytes: &[u8]) -> bool {
    static RE: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let armoured = memchr::memmem::find(bytes, b"PRIVATE KEY").is_some();
    if !armoured && memchr::memmem::find(bytes, b"Private-Lines:").is_none() {
        return false;
    }
    RE.get_or_init(|| {
        // A line break, real or JSON-escaped, then the next line's indentation or quote.
        let br = r#"(?:\r?\n|\\r\\n|\\n)[ \t"']*"#;
        let pattern = format!(
            r"(?-u){armour}[ \t]*{br}(?:[A-Za-z0-9-]+: [^\n\\]*{br})*(?:{br})?[A-Za-z0-9+/=]{{16,}}|Private-Lines: *[0-9]+[ \t]*{br}[A-Za-z0-9+/=]{{16,}}",
            armour = armour!("BEGIN"),
        );
        regex::bytes::Regex::new(&pattern).expect("the private key rule compiles")
    })
    .is_match(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(s: &str) -> (String, usize) {
        let (t, n) = redact(s);
        (t.into_owned(), n)
    }

    /// An armour line built at run time, so this file holds no key block of its own.
    fn armour(word: &str, kind: &str) -> String {
        format!("-----{word} {kind}-----")
    }

    /// A PuTTY key file's private part, built at run time like [`armour`].
    fn putty(rest: &str) -> String {
        format!(
            "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-{}: 1\n{rest}",
            "Lines"
        )
    }

    /// A block of `kind` whose lines are prefixed with `indent` and joined with `nl`.
    fn key_block(kind: &str, indent: &str, nl: &str) -> String {
        [
            armour("BEGIN", kind),
            "MIIEowIBAAKCAQEAsecretsecretSECRET0123".to_string(),
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE".to_string(),
            armour("END", kind),
        ]
        .iter()
        .map(|l| format!("{indent}{l}"))
        .collect::<Vec<_>>()
        .join(nl)
    }

    /// For each rule: texts holding a secret it must replace (and the secret), and a near miss
    /// it must keep as it is.
    fn samples(rule: &str) -> (Vec<(String, String)>, Vec<String>) {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        match rule {
            "private_key" => {
                let mut hits = Vec::new();
                for kind in [
                    "PRIVATE KEY",
                    "RSA PRIVATE KEY",
                    "EC PRIVATE KEY",
                    "DSA PRIVATE KEY",
                    "ENCRYPTED PRIVATE KEY",
                    "OPENSSH PRIVATE KEY",
                    "PGP PRIVATE KEY BLOCK",
                ] {
                    for (indent, nl) in [("", "\n"), ("    ", "\n"), ("", "\\n"), ("  ", "\r\n")] {
                        let block = key_block(kind, indent, nl);
                        hits.push((
                            format!("key: |\n{block}\nafter: 1\n"),
                            "MIIEowIBAAKCAQEA".into(),
                        ));
                        hits.push((
                            format!("{{\"key\": \"{block}\"}}"),
                            "b3BlbnNzaC1rZXkt".into(),
                        ));
                    }
                }
                // Cut off before its END line.
                let cut = format!(
                    "{}\nMIIEowIBAAKCAQEAsecret\n",
                    armour("BEGIN", "RSA PRIVATE KEY")
                );
                hits.push((cut, "MIIEowIBAAKCAQEA".into()));
                let ssh2 = ["BEGIN", "P2/56wAAA0ssh2material", "END"].map(|w| {
                    if w.len() > 5 {
                        w.to_string()
                    } else {
                        format!("---- {w} SSH2 ENCRYPTED PRIVATE KEY ----")
                    }
                });
                hits.push((ssh2.join("\n"), "P2/56wAAA0ssh2".into()));
                (
                    hits,
                    vec![
                        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEF\n-----END PUBLIC KEY-----".into(),
                        "a private key is a file you keep".into(),
                    ],
                )
            }
            "putty_key" => (
                vec![(
                    putty("AAAAIPuttySecretMaterial0123\nPrivate-MAC: 0a1b2c\n"),
                    "PuttySecretMaterial".into(),
                )],
                vec!["Private lines: none here".into()],
            ),
            "url_userinfo" => (
                vec![
                    s(
                        "remote https://alice:s3cr3tvalue@example.com/r.git",
                        "s3cr3tvalue",
                    ),
                    s("https://ghtoken123456@github.com/o/r", "ghtoken123456"),
                ],
                vec![
                    "ssh://git@example.com/o/r.git".into(),
                    "mail alice@example.com".into(),
                ],
            ),
            "url_query" => (
                vec![s("https://h/p?x=1&access_token=abcdef123&y=2", "abcdef123")],
                vec!["https://example.com/a?b=c&page=2".into()],
            ),
            "github" => (
                vec![(format!("t ghp_{}", "a1B2".repeat(9)), "a1B2a1B2a1B2".into())],
                vec!["ghp_short".into()],
            ),
            "github_pat" => (
                vec![(
                    format!("github_pat_{}", "Z9_y".repeat(8)),
                    "Z9_yZ9_yZ9_y".into(),
                )],
                vec!["github_pat_ is the prefix".into()],
            ),
            "gitlab" => (
                vec![(
                    format!("glpat-{}", "abcDEF123_".repeat(3)),
                    "abcDEF123_abc".into(),
                )],
                vec!["glpat-short".into()],
            ),
            "aws_key_id" => (
                vec![s("id AKIAIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE")],
                vec!["AKIA is a prefix; AKIAshort".into()],
            ),
            "slack" => (
                vec![(
                    format!("xoxb-{}", "1234-abcd".repeat(3)),
                    "1234-abcd1234".into(),
                )],
                vec!["xoxo hugs".into()],
            ),
            "sk_key" => (
                vec![(format!("sk-{}", "Qw3r".repeat(8)), "Qw3rQw3rQw3r".into())],
                vec!["task-runner sk-short".into()],
            ),
            "google_api" => (
                vec![(
                    format!("AIza{}", &"Sy0_-x".repeat(6)[..35]),
                    "Sy0_-xSy0_-x".into(),
                )],
                vec!["AIza alone".into()],
            ),
            "npm" => (
                vec![(format!("npm_{}", "n0pQ".repeat(9)), "n0pQn0pQn0pQ".into())],
                vec!["npm_config_cache".into()],
            ),
            "jwt" => (
                vec![(
                    format!(
                        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.{}",
                        "s1gn".repeat(4)
                    ),
                    "eyJzdWIiOiIxMjM0In0".into(),
                )],
                vec!["eyJ alone".into()],
            ),
            "bearer" => (
                vec![(
                    format!("Authorization: BEARER {}", "Tok3n.value".repeat(2)),
                    "Tok3n.valueTok3n".into(),
                )],
                vec!["a bearer of news".into()],
            ),
            "assignment" => (
                vec![
                    s("fix login password=hunter2hunter2", "hunter2hunter2"),
                    s("db:\n  password: hunter2hunter2\n", "hunter2hunter2"),
                    s(
                        r#"{"client_secret": "c0ffee-with spaces"}"#,
                        "c0ffee-with spaces",
                    ),
                    s(r#"{\"apiKey\":\"k3y-value-123\"}"#, "k3y-value-123"),
                    s("export DB_PASS=pa55word! # prod", "pa55word!"),
                    s("auth_token: 'tok-9f8e7d6c'", "tok-9f8e7d6c"),
                    s("signing_key = abcDEF123456", "abcDEF123456"),
                    s(
                        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
                        "wJalrXUtnFEMI/K7MDENG",
                    ),
                ],
                vec![
                    "max_tokens: 4096".into(),
                    "author: Jane Doe".into(),
                    "password: ${DB_PASSWORD}".into(),
                    "token: none".into(),
                    "compass: north-north-west".into(),
                    "secret: required".into(),
                    "password: <your password>".into(),
                ],
            ),
            "assignment_next_line" => (
                vec![
                    s(
                        "db:\n  password: |\n    hunter2;hunter2\n  host: x\n",
                        "hunter2;",
                    ),
                    s("token: >-\n  abc def ghi\n", "abc def"),
                    s("password:\n  s3cret-db-value\n", "s3cret-db"),
                    s("{\n  \"api_key\":\n    \"k3y;value\"\n}", "k3y;value"),
                ],
                vec![
                    "auth:\n  user: bob\n".into(),
                    "password: |\n  none\n".into(),
                    "password:\nhost: x\n".into(),
                    "tokens:\n  - ci\n".into(),
                ],
            ),
            other => panic!("no samples for the rule `{other}`"),
        }
    }

    /// What [`spans_redaction_may_touch`] promises rests on it: a gate lies within a line.
    #[test]
    fn no_gate_holds_a_line_break() {
        for rule in &RULES {
            for gate in rule.gates {
                assert!(
                    !gate.contains('\n') && !gate.is_empty(),
                    "{}: {gate:?}",
                    rule.name
                );
            }
        }
    }

    #[test]
    fn every_rule_redacts_its_sample_and_keeps_its_near_miss() {
        for rule in &RULES {
            let (hits, misses) = samples(rule.name);
            assert!(!hits.is_empty() && !misses.is_empty(), "{}", rule.name);
            for (text, secret) in hits {
                assert!(text.contains(&secret), "{}: bad sample {text:?}", rule.name);
                // The rule alone, then the whole chain.
                let mut n = 0;
                let alone = apply(rule, Cow::Borrowed(&text), &mut n);
                assert!(
                    !alone.contains(&secret),
                    "{}: {text:?} -> {alone:?}",
                    rule.name
                );
                assert!(n >= 1 && alone.contains(MARKER), "{}: {alone:?}", rule.name);
                let (all, m) = red(&text);
                assert!(!all.contains(&secret) && m >= 1, "{}: {all:?}", rule.name);
                // Idempotent: a redacted text is left as it is.
                assert_eq!(red(&all), (all.clone(), 0), "{}", rule.name);
            }
            for text in misses {
                let mut n = 0;
                let kept = apply(rule, Cow::Borrowed(&text), &mut n);
                assert_eq!((kept.as_ref(), n), (text.as_str(), 0), "{}", rule.name);
            }
        }
    }

    #[test]
    fn the_one_pass_gate_finds_every_rule_gate_in_any_case() {
        for (i, rule) in RULES.iter().enumerate() {
            for gate in rule.gates {
                for text in [
                    format!("a line with {gate} inside"),
                    format!("{} at the start", gate.to_ascii_uppercase()),
                    format!("at the end {}", gate.to_ascii_lowercase()),
                ] {
                    assert!(candidates(&text) & (1 << i) != 0, "{}: {text:?}", rule.name);
                }
            }
        }
        // A gate inside another gate is seen too; no gate, no rule.
        let bit = |name: &str| 1u32 << RULES.iter().position(|r| r.name == name).unwrap();
        assert_eq!(
            candidates("?token=") & (bit("url_query") | bit("assignment")),
            bit("url_query") | bit("assignment")
        );
        assert_eq!(candidates("fn main() { println!(\"hello\"); }"), 0);
        assert_eq!(candidates(MARKER), 0);
        assert!(RULES.len() <= 32, "the candidate mask has 32 bits");
    }

    /// Every text made of the rules' samples and near misses, markers, URLs, characters that
    /// fold to ASCII and line breaks, joined at random: [`redact_lines`] answers exactly what
    /// [`redact`] answers, text and count.
    #[test]
    fn redact_lines_answers_as_redact() {
        let mut pieces: Vec<String> = Vec::new();
        for rule in &RULES {
            let (hits, misses) = samples(rule.name);
            pieces.extend(hits.into_iter().map(|(t, _)| t));
            pieces.extend(misses);
        }
        pieces.extend(
            [
                "fn main() { let key = map.get(&token); }",
                "https://github.com/o/r?rev=1#x",
                "git+https://user@example.com/r.git",
                "ſecret=abcdefgh1234",
                "to\u{212A}en: hunter2hunter2",
                "api_\u{212A}ey=Zx9Zx9Zx9Zx9",
                "Bearer",
                "abcdefghijklmnopqrstuvwxyz0123",
                "AIzaSy0_-xSy0_-xSy0_-xSy0_-xSy0_-xSy0_xbearer abcdefghijklmnopqrstuvwxyz",
                "the bearer of PRIVATE KEY news",
                "password:",
                "  hunter2hunter2",
                "token: |-",
                "secret: > # folded",
                "\"api_key\":",
                "  \"ab;cd&ef\"",
                "auth:",
                "  user: bob",
                "    - item",
                "  ${CI_TOKEN}",
                "  [REDACTED]",
                "[REDACTED]",
                "a: b",
                "é — ü",
                "?",
                "=",
                "@host",
                "https://",
                "",
            ]
            .map(String::from),
        );
        pieces.extend(variant_rows().into_iter().map(|(_, input, _)| input));
        let seps = ["\n", "\n", "\r\n", " ", "", "\n\n", "\t", "\n  "];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        // Half the texts are made of pieces that alone take the line by line path, or hold no
        // gate.
        let local: Vec<&String> = pieces
            .iter()
            .filter(|p| {
                candidates(p) & (block_rules() | bearer_rule()) == 0
                    && (candidates(p) == 0 || redact_lines_how(p, &|_| true).2)
            })
            .collect();
        let (mut redacted, mut by_lines) = (0, 0);
        for i in 0..6000 {
            let mut text = String::new();
            for _ in 0..1 + next(8) {
                let piece = if i % 2 == 0 {
                    local[next(local.len())]
                } else {
                    &pieces[next(pieces.len())]
                };
                text.push_str(piece);
                text.push_str(seps[next(seps.len())]);
            }
            let whole = redact(&text);
            assert_eq!(redact_lines(&text), whole, "{text:?}");
            let lines = redact_lines_how(&text, &|_| true).2;
            // Only a rule spanning lines sends a text that holds a gate to the whole path.
            assert!(
                lines || candidates(&text) == 0 || candidates(&text) & multiline_rules() != 0,
                "{text:?}"
            );
            by_lines += usize::from(lines);
            redacted += usize::from(lines && whole.1 > 0);
        }
        // Both paths were exercised, and the line by line one redacted often.
        assert!(by_lines > 3000 && redacted > 1500, "{by_lines} {redacted}");
        // A character that folds to ASCII wakes a rule without its gate: the line is redacted
        // because another line woke the rule, as the whole text is.
        let text = "password: none\nſecret=abcdefgh1234\n";
        assert_eq!(redact(text).1, 1);
        assert_eq!(redact_lines(text), redact(text));
        // A marker before `bearer` gives it the `\b` the raw text lacked: whether it may
        // match is asked without that `\b`.
        let text = format!(
            "AIza{}xbearer {}",
            &"Sy0_-x".repeat(6)[..34],
            "t".repeat(20)
        );
        assert_eq!(redact(&text), (Cow::Owned(format!("{MARKER}{MARKER}")), 2));
        assert_eq!(redact_lines(&text), redact(&text));
        assert!(!bearer_crosses_lines(&text));
        // A bearer token on the next line: the whole text runs the rules.
        let text = format!(
            "Authorization: Bearer\n  {}\napi_key = {}",
            "t".repeat(20),
            "v9".repeat(5)
        );
        assert!(bearer_crosses_lines(&text));
        assert_eq!(redact_lines(&text), redact(&text));
        assert_eq!(redact(&text).1, 2, "{:?}", redact(&text));
        assert!(!bearer_crosses_lines("the bearer of news\nand more"));
        // A key block's armour wakes `assignment` (`KEY`), which then runs on a line whose
        // gate is a character that folds to ASCII, as in `redact`.
        let text = format!(
            "ſecret=abcdefgh1234\r\n{}\r\nx",
            key_block("RSA PRIVATE KEY", "", "\n")
        );
        assert_eq!(redact(&text).1, 2);
        assert_eq!(redact_lines(&text), redact(&text));
        // A key block and a line's secret: the block replaced whole, the line alone.
        let text = format!(
            "{}\ntoken = {}\n",
            key_block("RSA PRIVATE KEY", "", "\n"),
            "w7".repeat(6)
        );
        assert_eq!(redact(&text).1, 2, "{:?}", redact(&text));
        assert_eq!(redact_lines(&text), redact(&text));
    }

    /// The only characters outside ASCII that `(?i)` matches as an ASCII letter are the ones
    /// [`FOLDS_TO_ASCII`] lists.
    #[test]
    fn ascii_folds_are_only_kelvin_and_long_s() {
        let re = Regex::new("(?i)^[a-z]$").unwrap();
        let folds: Vec<String> = (0x80..=0x10FFFF_u32)
            .filter_map(char::from_u32)
            .map(String::from)
            .filter(|c| re.is_match(c))
            .collect();
        assert_eq!(folds, FOLDS_TO_ASCII.map(String::from).to_vec());
    }

    #[test]
    fn a_whole_key_block_is_one_replacement() {
        let block = key_block("RSA PRIVATE KEY", "", "\n");
        let (t, n) = red(&format!("a\n{block}\nb\n"));
        assert_eq!(t, "a\n[REDACTED]\nb\n");
        assert_eq!(n, 1);
    }

    #[test]
    fn private_keys_are_detected_in_every_armour_and_form() {
        for kind in [
            "PRIVATE KEY",
            "RSA PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            for (indent, nl) in [("", "\n"), ("    ", "\n"), ("", "\\n"), ("", "\r\n")] {
                let block = key_block(kind, indent, nl);
                assert!(holds_private_key(block.as_bytes()), "{block:?}");
                let json = format!("{{\"k\": \"{block}\"}}");
                assert!(holds_private_key(json.as_bytes()), "{json:?}");
            }
        }
        let pgp = format!(
            "{}\nVersion: GnuPG v2\n\nlQOYBF0secretmaterial0123\n",
            armour("BEGIN", "PGP PRIVATE KEY BLOCK")
        );
        assert!(holds_private_key(pgp.as_bytes()));
        assert!(holds_private_key(
            putty("AAAAIPuttySecretMaterial0123\n").as_bytes()
        ));
        // Near misses: the rule's own text, a public key, prose.
        assert!(!holds_private_key(
            b"the rule text -----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY----- is not a key"
        ));
        let public = format!(
            "{}\nMIIBIjANBgkqhkiG9w0BAQEF\n",
            armour("BEGIN", "PUBLIC KEY")
        );
        assert!(!holds_private_key(public.as_bytes()));
        assert!(!holds_private_key(
            b"keep your PRIVATE KEY safe\nMIIBIjANBgkqhkiG9w0BAQEF"
        ));
    }

    #[test]
    fn plain_text_is_untouched() {
        let (t, n) = red("fn main() { println!(\"hello\"); } // see https://example.com/a?b=c");
        assert_eq!(n, 0);
        assert!(matches!(redact("plain").0, Cow::Borrowed(_)));
        assert!(t.contains("b=c"));
        // A gate without a secret borrows too.
        assert!(matches!(redact("the key to it").0, Cow::Borrowed(_)));
    }

    #[test]
    fn remote_urls_lose_every_query_value_and_fragment() {
        let (u, changed) = redact_url("https://u:p@h/r.git?ref=main#frag");
        assert_eq!(u, "https://[REDACTED]@h/r.git?ref=[REDACTED]#[REDACTED]");
        assert!(changed);
        let (u, changed) = redact_url("git@github.com:o/r.git");
        assert_eq!(u, "git@github.com:o/r.git");
        assert!(!changed);
    }

    #[test]
    fn secret_environment_values_are_found_by_name_or_by_shape() {
        let random = "q8Zr3LmX0pT7vWc2Ks9d";
        let vars: Vec<(&str, &str)> = vec![
            // By name, whatever the shape.
            ("OPENAI_KEY", "openai-value-1"),
            ("DB_PASS", "hunter2hunter2"),
            ("GITHUB_PAT", "patvalue-123456"),
            ("SIGNING_KEY", "signing-value-9"),
            ("MY_API_TOKEN", "tok-1234567890"),
            ("GPG_PASSPHRASE", "correct horse battery"),
            // By shape, whatever the name.
            ("SOMETHING_ELSE", random),
            // Never: common variables, short values, paths, lists, numbers, booleans, URLs,
            // a commit hash, a sentence.
            ("HOME", "/root"),
            ("USER", "root"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm-256color"),
            ("SHELL", "/bin/bash"),
            ("PWD", "/tmp"),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock"),
            ("SHORT_SECRET", "abc"),
            ("API_TOKEN_TTL", "3600000000"),
            ("TOKENIZERS_PARALLELISM", "false"),
            ("AUTH_URL", "https://auth.example.com/login"),
            ("GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567"),
            ("GIT_AUTHOR_NAME", "Jane Longname-Doe"),
            (
                "CARGO_PKG_DESCRIPTION",
                "A Steward for Repositories of 2026",
            ),
            ("KEYBOARD_LAYOUT", "us-international"),
            // A random-looking branch name of a CI: plain text by its name.
            ("GITHUB_REF_NAME", "Fix-Issue16-HostileRepo2"),
            ("CI_COMMIT_BRANCH", "Fix-Issue16-HostileRepo2"),
        ];
        let values = secret_env_values(vars.iter().map(|(k, v)| ((*k).into(), (*v).into())));
        let mut expected = vec![
            "openai-value-1",
            "hunter2hunter2",
            "patvalue-123456",
            "signing-value-9",
            "tok-1234567890",
            "correct horse battery",
            random,
        ];
        expected.sort_by_key(|v| std::cmp::Reverse(v.len()));
        assert_eq!(
            values.iter().map(String::len).collect::<Vec<_>>(),
            expected.iter().map(|v| v.len()).collect::<Vec<_>>(),
            "longest first"
        );
        let mut got: Vec<&str> = values.iter().map(String::as_str).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        for name in [
            "OPENAI_KEY",
            "DB_PASS",
            "GITHUB_PAT",
            "SIGNING_KEY",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(is_secret_env_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "USER",
            "LANG",
            "TERM",
            "GIT_AUTHOR_NAME",
            "XAUTHORITY",
            "KEYBOARD",
        ] {
            assert!(!is_secret_env_name(name), "{name}");
        }
    }

    #[test]
    fn json_values_are_redacted_keys_and_all() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let mut v = serde_json::json!({
            "title": format!("see {token}"),
            "list": [1, true, null, {"nested": format!("password=hunter2hunter2 and {token}")}],
            token.clone(): "a key that is a secret",
            "redactions": 0,
        });
        let n = redact_value(&mut v);
        let text = v.to_string();
        assert!(
            !text.contains(&token) && !text.contains("hunter2hunter2"),
            "{text}"
        );
        assert_eq!(n, 4, "{text}");
        assert_eq!(v["[REDACTED]"], "a key that is a secret");
        assert_eq!(redact_value(&mut v), 0);
    }

    /// [`redact_value`] answers as [`redact_lines`] run on every string and key alone: the
    /// joined search sends each string that holds something through it, and no other.
    #[test]
    fn redact_value_answers_as_redact_lines_on_every_string() {
        fn one_by_one(v: &mut Value) -> usize {
            match v {
                Value::String(s) => {
                    let (text, n) = redact_lines(s);
                    *s = text.into_owned();
                    n
                }
                Value::Array(items) => items.iter_mut().map(one_by_one).sum(),
                Value::Object(map) => {
                    let mut n: usize = map.values_mut().map(one_by_one).sum();
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        let (key, m) = redact_lines(&k);
                        n += m;
                        map.insert(key.into_owned(), v);
                    }
                    n
                }
                _ => 0,
            }
        }
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let long_clean = "plain words and more plain words\n".repeat(200);
        let long_secret = format!("{long_clean}password=hunter2hunter2\n{long_clean}");
        let pieces: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "author".into(),
            "PASSWORD=Hunter2Hunter2".into(),
            format!("see {token} here"),
            "password".into(),
            "=hunter2hunter2".into(),
            "api_key:\n  s3cr3tvalu3xyz9".into(),
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END RSA PRIVATE KEY-----".into(),
            "\u{212A}ey=hunter2hunter2".into(),
            "Authorization: Bearer\n abcdefghijklmnopqrstu12345".into(),
            long_clean.clone(),
            long_secret,
            "token".into(),
            "a line\nand token: abcdef0123456789xyz\nthen plain".into(),
        ];
        // Every piece as a value, a key and an array item, next to each other in every order.
        for (i, a) in pieces.iter().enumerate() {
            for b in &pieces {
                let mut v = serde_json::json!({
                    a.clone(): [a.clone(), b.clone(), {b.clone(): a.clone()}],
                    b.clone(): {"x": b.clone(), "n": i, "y": [a.clone()]},
                    "tail": format!("{a}{b}"),
                });
                let mut expected = v.clone();
                let want = one_by_one(&mut expected);
                let got = redact_value(&mut v);
                assert_eq!((got, &v), (want, &expected), "{a:?} then {b:?}");
            }
        }
    }

    /// A string met again in the same value is answered alike: a secret every time it comes
    /// (each counted), a clean string kept as it is, in values, keys and arrays.
    #[test]
    fn strings_met_again_are_redacted_again() {
        let token = format!("ghp_{}", "a1B2".repeat(9));
        let line = |i: u32| {
            serde_json::json!({"commit": "abc", "summary": token.clone(), "line": i,
                               "text": "plain", token.clone(): "plain"})
        };
        let mut v = serde_json::Value::Array((0..5).map(line).collect());
        let n = redact_value(&mut v);
        let text = v.to_string();
        assert!(!text.contains(&token), "{text}");
        assert_eq!(n, 10, "{text}");
        assert_eq!(v[4]["commit"], "abc");
        assert_eq!(v[4]["text"], "plain");
    }

    /// One row per shape a rule holds, with its quoting, separator and line-break variants,
    /// and the near misses that must be kept as they are: the rule that answers the row, the
    /// text, and what [`redact`] answers for it (the text itself for a near miss).
    fn variant_rows() -> Vec<(&'static str, String, String)> {
        let gh = format!("ghp_{}", "a1B2".repeat(9));
        let sk = format!("sk-{}", "Qw3r".repeat(6));
        let row = |rule: &'static str, input: &str, expected: &str| {
            (rule, input.to_string(), expected.to_string())
        };
        let keep = |rule: &'static str, input: &str| (rule, input.to_string(), input.to_string());
        vec![
            // Values holding `;`, `&`, `)`, `<` or an escaped quote.
            row(
                "assignment",
                "password=ab;cd&ef)gh<ij",
                "password=[REDACTED]",
            ),
            row(
                "assignment",
                r#""password": "ab\"cd""#,
                r#""password": "[REDACTED]""#,
            ),
            row(
                "assignment",
                "DB_PASSWORD='x;y&z'",
                "DB_PASSWORD='[REDACTED]'",
            ),
            row(
                "assignment",
                r#"password="p&ss;w)rd<1""#,
                r#"password="[REDACTED]""#,
            ),
            row(
                "assignment",
                r#"{\"password\":\"ab\\\"cd-ef\"}"#,
                r#"{\"password\":\"[REDACTED]\"}"#,
            ),
            row("assignment", "token=`tok;en&val)ue`", "token=`[REDACTED]`"),
            row(
                "assignment",
                "password: 'it''s-a-secret'",
                "password: '[REDACTED]'",
            ),
            row(
                "assignment",
                r#""password": "it's a secret""#,
                r#""password": "[REDACTED]""#,
            ),
            row(
                "assignment",
                "f(password=hunter2hunter2)",
                "f(password=[REDACTED])",
            ),
            // A value starting with `$` that is no placeholder.
            row(
                "assignment",
                "password=$ecretPa55word",
                "password=[REDACTED]",
            ),
            row(
                "assignment",
                r#"password: "$ecret-Pa55""#,
                r#"password: "[REDACTED]""#,
            ),
            // Separators.
            row(
                "assignment",
                "password = hunter2hunter2",
                "password = [REDACTED]",
            ),
            row(
                "assignment",
                "'password' => 'hunter2hunter2',",
                "'password' => '[REDACTED]',",
            ),
            row(
                "assignment",
                r#"password := "hunter2hunter2""#,
                r#"password := "[REDACTED]""#,
            ),
            row(
                "assignment",
                r#":password => "hunter2hunter2""#,
                r#":password => "[REDACTED]""#,
            ),
            row(
                "assignment",
                "`api_key`: `k3y-value-123`",
                "`api_key`: `[REDACTED]`",
            ),
            // YAML block scalars.
            row(
                "assignment_next_line",
                "password: |\n  hunter2hunter2\n",
                "password: |\n  [REDACTED]\n",
            ),
            row(
                "assignment_next_line",
                "password: >\n  folded secret\n  value two\nnext: 1\n",
                "password: >\n  [REDACTED]\n  [REDACTED]\nnext: 1\n",
            ),
            row(
                "assignment_next_line",
                "db:\n  password: |-\n    s3cr3t;value\n\n    more\n  host: x\n",
                "db:\n  password: |-\n    [REDACTED]\n\n    [REDACTED]\n  host: x\n",
            ),
            row(
                "assignment_next_line",
                "password: >- # rotated monthly\r\n  hunter2hunter2\r\n",
                "password: >- # rotated monthly\r\n  [REDACTED]\r\n",
            ),
            row(
                "assignment_next_line",
                "- secret: |2\n    hunter2hunter2\n- name: x\n",
                "- secret: |2\n    [REDACTED]\n- name: x\n",
            ),
            // A value on the next line.
            row(
                "assignment_next_line",
                "password:\n  hunter2hunter2\n",
                "password:\n  [REDACTED]\n",
            ),
            row(
                "assignment_next_line",
                "password:\n  'x;y&z'\n",
                "password:\n  '[REDACTED]'\n",
            ),
            row(
                "assignment_next_line",
                "{\n  \"password\":\n    \"ab;cd&ef\"\n}",
                "{\n  \"password\":\n    \"[REDACTED]\"\n}",
            ),
            row(
                "assignment_next_line",
                "{\"client_secret\":\n\"c0ffee-with spaces\",\n\"a\": 1}",
                "{\"client_secret\":\n\"[REDACTED]\",\n\"a\": 1}",
            ),
            row(
                "assignment",
                r#"{\"password\":\n    \"hunter2hunter2\"}"#,
                r#"{\"password\":\n    \"[REDACTED]\"}"#,
            ),
            // Token shapes glued to what precedes or follows them.
            row("github", &format!("x{gh}"), "x[REDACTED]"),
            row("github", &format!("MY_{gh}"), "MY_[REDACTED]"),
            row("github", &format!("{gh}_suffix"), "[REDACTED]_suffix"),
            row("aws_key_id", "keyAKIAIOSFODNN7EXAMPLE", "key[REDACTED]"),
            row(
                "aws_key_id",
                "AWS_AKIAIOSFODNN7EXAMPLE_ID",
                "AWS_[REDACTED]_ID",
            ),
            row("sk_key", &format!("key{sk}"), "key[REDACTED]"),
            row("sk_key", &format!("OPENAI_{sk}"), "OPENAI_[REDACTED]"),
            row(
                "github_pat",
                &format!("xgithub_pat_{}", "Z9_y".repeat(8)),
                "x[REDACTED]",
            ),
            row(
                "gitlab",
                &format!("xglpat-{}", "abcDEF123_".repeat(3)),
                "x[REDACTED]",
            ),
            row(
                "slack",
                &format!("Sxoxb-{}", "1234-abcd".repeat(3)),
                "S[REDACTED]",
            ),
            row(
                "google_api",
                &format!("xAIza{}", &"Sy0_-x".repeat(6)[..35]),
                "x[REDACTED]",
            ),
            row("npm", &format!("_npm_{}", "n0pQ".repeat(9)), "_[REDACTED]"),
            row(
                "jwt",
                &format!(
                    "xeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.{}",
                    "s1gn".repeat(4)
                ),
                "x[REDACTED]",
            ),
            // Near misses: placeholders, values that cannot be secrets, prose, mappings.
            keep("assignment", "password=$DB_PASSWORD"),
            keep("assignment", "password: ${DB_PASSWORD}"),
            keep("assignment", r#"password="${DB_PASSWORD}""#),
            keep("assignment", "password=$(cat /run/secrets/db)"),
            keep("assignment", "password: <your password>"),
            keep("assignment", "Token: none yet"),
            keep("assignment", "max_tokens: 4096"),
            keep("assignment", r#"{"token":12345678}"#),
            keep("assignment", r#"{"password":null,"secret":true}"#),
            keep("assignment", r#""password": "none""#),
            keep("assignment", "password: [REDACTED]"),
            keep("assignment", r#""progressToken": "p-1", "auth": "n/a""#),
            keep("assignment", "token: (none)"),
            keep("assignment", "pub token: Option<String>,"),
            keep("assignment", "private_key: Zeroizing<Vec<u8>>,"),
            keep("assignment", r#"const SECRET_DIRS: &[&str] = &[".ssh"];"#),
            keep(
                "assignment",
                "a `password:` in YAML; a file is refused (`secret_content`)",
            ),
            keep("assignment", r#"the "token:" field"#),
            keep("assignment_next_line", "auth:\n  user: bob\n"),
            keep("assignment_next_line", "tokens:\n  - name: ci\n"),
            keep("assignment_next_line", "password:\nnext_key: value\n"),
            keep("assignment_next_line", "password: |\n  none\n"),
            keep("assignment_next_line", "token: |\n  ${CI_TOKEN}\n"),
            keep("assignment_next_line", "Token:\n  none yet\n"),
            keep("assignment_next_line", "\"password\":\n    null,\n"),
            keep("assignment_next_line", "\"token\":\n  {\"a\": 1}\n"),
            keep("assignment_next_line", "secret:\n  # a comment\n"),
            keep(
                "assignment_next_line",
                "    if token:\n        self.token_header = token\n",
            ),
            keep(
                "assignment_next_line",
                "def auth(self):\n    return self._auth_header\n",
            ),
            keep("sk_key", "task-runner-for-the-build-system"),
            keep("sk_key", "disk-usage-monitor-service-daemon"),
            keep("aws_key_id", "SLOVAKIAN"),
            keep("github", "through_the_night"),
        ]
    }

    /// Each row of [`variant_rows`]: the rule alone and the whole chain answer the expected
    /// text, [`redact_lines`] answers as [`redact`], and the answer is left as it is.
    #[test]
    fn every_variant_row_holds() {
        let rows = variant_rows();
        assert_eq!(rows.len(), 72);
        let mut failed = Vec::new();
        for (rule, input, expected) in &rows {
            let r = RULES.iter().find(|r| r.name == *rule).expect("a rule");
            let alone = apply(r, Cow::Borrowed(input), &mut 0);
            let (all, n) = red(input);
            let kept = input == expected;
            if alone != expected.as_str() || all != *expected || (n == 0) != kept {
                failed.push(format!(
                    "{rule} {input:?}: alone {alone:?}, all {all:?} ({n})"
                ));
            }
            assert_eq!(redact_lines(input), redact(input), "{input:?}");
            assert_eq!(red(&all), (all.clone(), 0), "{input:?}");
        }
        assert!(
            failed.is_empty(),
            "{} rows fail:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }

    /// Every quoting of key and value (none, `'`, `"`, a backtick, JSON-escaped `\"`), every
    /// separator and every line-break form, for values holding what a bare value used to stop
    /// at.
    #[test]
    fn every_quoting_separator_and_line_break_holds() {
        let quotes = ["", "'", "\"", "`", "\\\""];
        let seps = ["=", ":", " = ", ": ", "=>", " => ", ":=", " := "];
        let mut checked = 0;
        for key in [
            "password",
            "DB_PASSWORD",
            "clientSecret",
            "api_key",
            "x-auth-token",
        ] {
            for kq in quotes {
                for sep in seps {
                    for vq in quotes {
                        let mut values = vec!["ab;cd&ef)gh<ij", "$ecretPa55word"];
                        if !vq.is_empty() {
                            // Short, and an escaped quote inside, in the quoting's own escape.
                            values.push("x;y&z");
                            values.push(match vq {
                                "\"" => r#"ab\"cd"#,
                                "\\\"" => r#"ab\\\"cd"#,
                                "'" => "ab''cd",
                                _ => "ab\\`cd",
                            });
                        }
                        for v in values {
                            let text = format!("{kq}{key}{kq}{sep}{vq}{v}{vq}");
                            let want = format!("{kq}{key}{kq}{sep}{vq}{MARKER}{vq}");
                            let want = if vq == "`" && v.contains('`') {
                                format!("{kq}{key}{kq}{sep}`{MARKER}`cd`")
                            } else {
                                want
                            };
                            assert_eq!(red(&text), (want.clone(), 1), "{text:?}");
                            assert_eq!(redact_lines(&text), redact(&text), "{text:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        // The value on the next line, and YAML block scalars, with `\n` or `\r\n`.
        for nl in ["\n", "\r\n"] {
            for (text, want) in [
                (
                    "password:{nl}  hunter2hunter2{nl}",
                    "password:{nl}  [REDACTED]{nl}",
                ),
                (
                    "password:{nl}  'x;y&z'{nl}",
                    "password:{nl}  '[REDACTED]'{nl}",
                ),
                (
                    "password:{nl}  \"ab\\\"cd\"{nl}",
                    "password:{nl}  \"[REDACTED]\"{nl}",
                ),
                (
                    "password =>{nl}  'x;y&z',{nl}",
                    "password =>{nl}  '[REDACTED]',{nl}",
                ),
                (
                    "\"password\":{nl}\"ab;cd\"{nl}",
                    "\"password\":{nl}\"[REDACTED]\"{nl}",
                ),
                (
                    "'secret':{nl}    `x;y&z`{nl}",
                    "'secret':{nl}    `[REDACTED]`{nl}",
                ),
                (
                    "a:{nl}  token: # soon{nl}    tok;en{nl}b: 1",
                    "a:{nl}  token: # soon{nl}    [REDACTED]{nl}b: 1",
                ),
            ] {
                let (text, want) = (text.replace("{nl}", nl), want.replace("{nl}", nl));
                assert_eq!(red(&text), (want, 1), "{text:?}");
                assert_eq!(redact_lines(&text), redact(&text), "{text:?}");
                checked += 1;
            }
            for ind in ["|", ">", "|-", ">-", "|+", ">+", "|2", ">2-"] {
                for (key, sep) in [
                    ("password", ": "),
                    ("\"client_secret\"", ": "),
                    ("token", ":"),
                ] {
                    let text = format!(
                        "root:{nl}  {key}{sep}{ind}{nl}    ab;cd{nl}{nl}    ef\"gh{nl}  next: 1{nl}"
                    );
                    let want = format!(
                        "root:{nl}  {key}{sep}{ind}{nl}    {MARKER}{nl}{nl}    {MARKER}{nl}  next: 1{nl}"
                    );
                    assert_eq!(red(&text), (want, 1), "{text:?}");
                    assert_eq!(redact_lines(&text), redact(&text), "{text:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 5 * 5 * 8 * (2 + 4 * 4) + 2 * (7 + 8 * 3));
    }
}
