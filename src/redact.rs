//! Credential redaction: nothing that looks like a secret leaves the process.
//!
//! Every text a repository query returns (remote URLs, commit subjects, file lines, git's own
//! error messages) passes through [`redact`] first. It replaces, with [`MARKER`]:
//!
//! * the user information of a URL (`https://user:token@host/...` → `https://[REDACTED]@host/...`),
//!   except the conventional `git@` user of SSH URLs;
//! * the values of credential-named query parameters (`?access_token=...`, `&sig=...`);
//! * known token shapes: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab
//!   (`glpat-`), AWS access key ids (`AKIA...`), Slack (`xoxb-`, `xoxp-`, ...), OpenAI and
//!   Anthropic style keys (`sk-...`), Google API keys (`AIza...`), npm tokens, JSON web tokens
//!   and `Bearer` credentials;
//! * private key blocks (`-----BEGIN ... PRIVATE KEY-----` through its END line, or through the
//!   end of the text when the END line is cut off);
//! * the literal values of this process's credential-named environment variables (`*TOKEN*`,
//!   `*SECRET*`, `*PASSWORD*`, `*API_KEY*`, ...), so a secret handed to the server in its
//!   environment cannot come back even when it also sits in a file.
//!
//! [`redact_url`] is stricter, for URLs that are known to be URLs (git remotes): it also blanks
//! every query value and fragment.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Regex};

/// What a redacted secret is replaced with.
pub const MARKER: &str = "[REDACTED]";

/// The shortest environment value treated as a secret; shorter ones would blank common words.
const MIN_ENV_SECRET: usize = 8;

/// A rule compiled on first need. A text that holds none of its `gates` (cheap literal
/// searches) cannot match, so most texts never pay for compiling the regex: a search answer
/// with a few matched lines costs microseconds here, not the milliseconds of compiling every
/// rule.
struct Lazy {
    gates: &'static [&'static str],
    /// Look for the gates without regard to ASCII case (they are then written lower-case).
    fold: bool,
    pattern: &'static str,
    re: OnceLock<Regex>,
}

impl Lazy {
    const fn new(gates: &'static [&'static str], fold: bool, pattern: &'static str) -> Lazy {
        Lazy {
            gates,
            fold,
            pattern,
            re: OnceLock::new(),
        }
    }

    fn may_match(&self, text: &str, lower: &mut Option<String>) -> bool {
        if self.fold {
            let lower = lower.get_or_insert_with(|| text.to_ascii_lowercase());
            self.gates.iter().any(|g| lower.contains(g))
        } else {
            self.gates.iter().any(|g| text.contains(g))
        }
    }

    fn regex(&self) -> &Regex {
        self.re
            .get_or_init(|| Regex::new(self.pattern).expect("redaction rules compile"))
    }
}

static USERINFO: Lazy = Lazy::new(
    &["://"],
    false,
    r"(?i)(?-u:\b)([a-z][a-z0-9+.\-]*://)([^/\s@?#]+)@",
);

static QUERY: Lazy = Lazy::new(
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
);

static PRIVATE_KEY: Lazy = Lazy::new(
    &["PRIVATE KEY-----"],
    false,
    r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|\z)",
);

static TOKENS: [Lazy; 10] = [
    Lazy::new(
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        false,
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{30,255}(?-u:\b)",
    ),
    Lazy::new(
        &["github_pat_"],
        false,
        r"(?-u:\b)github_pat_[A-Za-z0-9_]{22,255}(?-u:\b)",
    ),
    Lazy::new(&["glpat-"], false, r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}"),
    Lazy::new(
        &[
            "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA",
        ],
        false,
        r"(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?-u:\b)",
    ),
    Lazy::new(&["xox"], false, r"(?-u:\b)xox[abposr]-[A-Za-z0-9\-]{10,}"),
    Lazy::new(
        &["sk-"],
        false,
        r"(?-u:\b)sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",
    ),
    Lazy::new(&["AIza"], false, r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    Lazy::new(&["npm_"], false, r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)"),
    Lazy::new(
        &["eyJ"],
        false,
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    Lazy::new(
        &["bearer"],
        true,
        r"(?i)(?-u:\b)bearer\s+[A-Za-z0-9._~+/=\-]{16,}",
    ),
];

/// The literal values of this process's credential-named environment variables.
fn env_values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| secret_env_values(std::env::vars_os()))
}

/// True for environment variable names that conventionally hold credentials.
pub fn is_secret_env_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| n.contains(w))
}

fn secret_env_values(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    let mut values: Vec<String> = vars
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| is_secret_env_name(k) && v.trim().len() >= MIN_ENV_SECRET)
        .map(|(_, v)| v.trim().to_string())
        .collect();
    // Longest first, so a value that contains another is blanked whole.
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    values
}

/// Replaces every match of `rule` for which `with` gives a replacement, counting them; a match
/// for which it gives `None` is kept as it is and not counted.
fn replace<'t>(
    rule: &Lazy,
    text: Cow<'t, str>,
    count: &mut usize,
    with: impl Fn(&Captures) -> Option<String>,
) -> Cow<'t, str> {
    let mut lower = None;
    if !rule.may_match(&text, &mut lower) {
        return text;
    }
    let re = rule.regex();
    if !re.is_match(&text) {
        return text;
    }
    let out = re
        .replace_all(&text, |c: &Captures| match with(c) {
            Some(s) => {
                *count += 1;
                s
            }
            None => c[0].to_string(),
        })
        .into_owned();
    Cow::Owned(out)
}

/// Whether `text` holds any rule's gate, looked for without regard to ASCII case in one pass.
/// A text that holds none cannot match any rule (each rule looks for its own gates, with or
/// without case), and most lines of a search answer hold none: they then cost one scan, not
/// one per gate.
fn any_gate(text: &str) -> bool {
    static ALL: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    ALL.get_or_init(|| {
        let rules = [&PRIVATE_KEY, &USERINFO, &QUERY]
            .into_iter()
            .chain(TOKENS.iter());
        let gates: Vec<&str> = rules.flat_map(|r| r.gates.iter().copied()).collect();
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(gates)
            .expect("the gates are literals")
    })
    .is_match(text)
}

/// Redacts every secret this module knows in `text`; returns the text and how many secrets
/// were replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let mut count = 0;
    let mut out = Cow::Borrowed(text);
    for value in env_values() {
        if out.contains(value.as_str()) {
            count += out.matches(value.as_str()).count();
            out = Cow::Owned(out.replace(value.as_str(), MARKER));
        }
    }
    if !any_gate(&out) {
        return (out, count);
    }
    out = replace(&PRIVATE_KEY, out, &mut count, |_| Some(MARKER.to_string()));
    out = replace(&USERINFO, out, &mut count, |c| {
        // `ssh://git@host/...` names a conventional user, not a credential.
        let user = &c[2];
        (user != "git" && user != MARKER).then(|| format!("{}{MARKER}@", &c[1]))
    });
    out = replace(&QUERY, out, &mut count, |c| {
        (&c[0][c[1].len()..] != MARKER).then(|| format!("{}{MARKER}", &c[1]))
    });
    for rule in &TOKENS {
        out = replace(rule, out, &mut count, |_| Some(MARKER.to_string()));
    }
    (out, count)
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

/// True when `bytes` hold a private key block (a BEGIN line followed by key material).
pub fn holds_private_key(bytes: &[u8]) -> bool {
    static RE: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let finder = memchr::memmem::find(bytes, b"PRIVATE KEY-----");
    if finder.is_none() {
        return false;
    }
    RE.get_or_init(|| {
        regex::bytes::Regex::new(
            r"(?-u)-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----\r?\n(?:[A-Za-z0-9-]+: [^\n]*\r?\n)*\r?\n?[A-Za-z0-9+/=]{16,}",
        )
        .expect("the private key rule compiles")
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

    #[test]
    fn the_one_pass_gate_finds_every_rule_gate_in_any_case() {
        let rules = [&PRIVATE_KEY, &USERINFO, &QUERY]
            .into_iter()
            .chain(TOKENS.iter());
        for gate in rules.flat_map(|r| r.gates.iter()) {
            for text in [
                format!("a line with {gate} inside"),
                format!("{} at the start", gate.to_ascii_uppercase()),
                format!("at the end {}", gate.to_ascii_lowercase()),
            ] {
                assert!(any_gate(&text), "{text:?}");
            }
        }
        assert!(!any_gate("fn main() { println!(\"hello\"); }"));
    }

    #[test]
    fn url_userinfo_is_removed() {
        let (t, n) = red("remote https://alice:s3cr3tvalue@example.com/r.git here");
        assert_eq!(t, "remote https://[REDACTED]@example.com/r.git here");
        assert_eq!(n, 1);
        let (t, _) = red("https://ghtoken123456@github.com/o/r");
        assert!(!t.contains("ghtoken123456"), "{t}");
    }

    #[test]
    fn the_git_user_of_ssh_urls_is_kept() {
        let (t, n) = red("ssh://git@example.com/o/r.git");
        assert_eq!(t, "ssh://git@example.com/o/r.git");
        assert_eq!(n, 0);
    }

    #[test]
    fn query_tokens_are_removed() {
        let (t, n) = red("https://h/p?x=1&access_token=abcdef123&y=2");
        assert_eq!(t, "https://h/p?x=1&access_token=[REDACTED]&y=2");
        assert_eq!(n, 1);
    }

    #[test]
    fn known_token_shapes_are_removed() {
        let samples = [
            format!("ghp_{}", "a1B2".repeat(9)),
            format!("github_pat_{}", "Z9_y".repeat(8)),
            "AKIAIOSFODNN7EXAMPLE".to_string(),
            format!("xoxb-{}", "1234-abcd".repeat(3)),
            format!("sk-{}", "Qw3r".repeat(8)),
            format!("glpat-{}", "abcDEF123_".repeat(3)),
            format!("AIza{}", &"Sy0_-x".repeat(6)[..35]),
            format!("npm_{}", "n0pQ".repeat(9)),
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.{}",
                "s1gn".repeat(4)
            ),
            format!("BEARER {}", "Tok3n.value".repeat(2)),
        ];
        for s in &samples {
            let (t, n) = red(&format!("key = \"{s}\";"));
            assert!(!t.contains(s.as_str()), "{s} survived: {t}");
            assert_eq!(n, 1, "{s}");
        }
    }

    #[test]
    fn private_key_blocks_are_removed_even_when_cut() {
        let begin = format!("-----BEGIN {}-----", "RSA PRIVATE KEY");
        let end = format!("-----END {}-----", "RSA PRIVATE KEY");
        let block = format!("a\n{begin}\nMIIEowIBAAKCAQEAsecretsecret\n{end}\nb\n");
        let (t, n) = red(&block);
        assert_eq!(t, "a\n[REDACTED]\nb\n");
        assert_eq!(n, 1);
        let cut = format!("a\n{begin}\nMIIEowIBAAKCAQEAsecretsecret\n");
        let (t, _) = red(&cut);
        assert!(!t.contains("MIIEow"), "{t}");
        assert!(holds_private_key(block.as_bytes()));
        assert!(!holds_private_key(
            b"the rule text -----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY----- is not a key"
        ));
    }

    #[test]
    fn plain_text_is_untouched() {
        let (t, n) = red("fn main() { println!(\"hello\"); } // see https://example.com/a?b=c");
        assert_eq!(n, 0);
        assert!(matches!(redact("plain").0, Cow::Borrowed(_)));
        assert!(t.contains("b=c"));
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
    fn secret_environment_values_are_collected_by_name() {
        let vars = vec![
            ("MY_API_TOKEN".into(), "tok-1234567890".into()),
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("SHORT_SECRET".into(), "abc".into()),
        ];
        let values = secret_env_values(vars.into_iter());
        assert_eq!(values, vec!["tok-1234567890".to_string()]);
    }
}
