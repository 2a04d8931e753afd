//! The rules a repository path or file can break, and the name rules (`.git`, secret-bearing
//! names): a leaf shared by [`crate::confine`] (which checks client paths) and
//! [`crate::rootfs`] (which applies the same rules on the handles it opens). It imports nothing
//! of the crate; [`crate::confine`] re-exports it.

use std::ffi::OsStr;

/// The rule a refused path broke; its spelling is stable (it travels in `data.rule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// An absolute path.
    AbsolutePath,
    /// A `..` component.
    ParentDir,
    /// A symbolic link resolving outside the repository, or not at all.
    SymlinkEscape,
    /// A `.git` entry, or a path inside one.
    GitDir,
    /// A secret-bearing file or folder, by name.
    SecretFile,
    /// A file whose content holds a private key block.
    SecretContent,
    /// A file above the size a reader accepts.
    SizeCap,
    /// A FIFO, socket or device (or a folder where the store expects its state file): only
    /// regular files are read.
    SpecialFile,
    /// A regular file with more than one name: another may lie outside the repository.
    HardLink,
    /// The audit log is shorter than its anchor: writes stop until it is restored.
    LogTruncated,
    /// The repository's git folder is not `<root>/.git` itself, or its configuration or
    /// layout leads git outside the root.
    GitPinned,
    /// seneschal's own state folder (`.seneschal/`): no file write goes there.
    StateDir,
}

impl Rule {
    /// Every rule.
    pub const ALL: [Rule; 12] = [
        Rule::AbsolutePath,
        Rule::ParentDir,
        Rule::SymlinkEscape,
        Rule::GitDir,
        Rule::SecretFile,
        Rule::SecretContent,
        Rule::SizeCap,
        Rule::SpecialFile,
        Rule::HardLink,
        Rule::LogTruncated,
        Rule::GitPinned,
        Rule::StateDir,
    ];

    /// The stable spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rule::AbsolutePath => "absolute_path",
            Rule::ParentDir => "parent_dir",
            Rule::SymlinkEscape => "symlink_escape",
            Rule::GitDir => "git_dir",
            Rule::SecretFile => "secret_file",
            Rule::SecretContent => "secret_content",
            Rule::SizeCap => "size_cap",
            Rule::SpecialFile => "special_file",
            Rule::HardLink => "hard_link",
            Rule::LogTruncated => "log_truncated",
            Rule::GitPinned => "git_pinned",
            Rule::StateDir => "state_dir",
        }
    }
}

/// True for a `.git` entry name (folder, or the file of a worktree or submodule) in every
/// spelling git itself refuses in a tree (`verify_path` with `core.protectNTFS` and
/// `core.protectHFS`, both on here whatever the repository says): any ASCII case, trailing
/// dots and spaces (`.git.`, `.GIT `), the NTFS short name `git~1`, an NTFS stream
/// (`.git::$INDEX_ALLOCATION`), and the code points HFS+ ignores inside it (`.g\u{200c}it`).
/// A repository may be checked out on such a file system, where each of these is `.git`.
pub fn is_git_name(name: &OsStr) -> bool {
    let b = name.as_encoded_bytes();
    if b.eq_ignore_ascii_case(b".git") {
        return true;
    }
    // Every other ASCII spelling holds `git` and is at least four bytes long (a name with
    // HFS-ignorable code points in it is not ASCII).
    if b.len() < 4 || b.is_ascii() && !b.windows(3).any(|w| w.eq_ignore_ascii_case(b"git")) {
        return false;
    }
    let f = folded(b);
    f == ".git" || f == "git~1" || f.starts_with(".git:")
}

/// True for seneschal's state folder name (`.seneschal`) in the spellings [`is_git_name`]
/// folds: no tree, index or input puts a file there.
pub fn is_state_name(name: &OsStr) -> bool {
    let b = name.as_encoded_bytes();
    b.eq_ignore_ascii_case(b".seneschal") || (b.len() > 10 && folded(b) == ".seneschal")
}

/// A name as case-insensitive (NTFS, HFS+) file systems compare it: the code points HFS+
/// ignores dropped, ASCII lower-cased, trailing dots and spaces cut (NTFS drops them).
fn folded(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    let kept: String = text
        .chars()
        .filter(|c| !is_hfs_ignorable(*c))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    kept.trim_end_matches(['.', ' ']).to_string()
}

/// The code points HFS+ ignores when it compares names (git's `is_hfs_dotgit` list).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}'
    )
}

/// Folder names that hold credentials by convention.
const SECRET_DIRS: &[&str] = &[".ssh", ".gnupg", ".aws"];

/// File names that hold credentials by convention.
const SECRET_NAMES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    ".dockercfg",
    ".s3cfg",
    "credentials",
    "credentials.json",
    "client_secret.json",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.toml",
];

/// Name prefixes of secret-bearing files.
const SECRET_PREFIXES: &[&str] = &[".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];

/// Name suffixes of secret-bearing files.
const SECRET_SUFFIXES: &[&str] = &[
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".ppk",
    ".kdbx",
    ".tfvars",
];

/// True for a secret-bearing file or folder name: `.env*`, `id_rsa*` (and the other SSH key
/// types), `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `*.ppk`, `*.kdbx`,
/// `*.tfvars`, credential files (`.netrc`, `.git-credentials`, `.npmrc`, `.pypirc`, `.pgpass`,
/// `.htpasswd`, `credentials`, `secrets.{json,yml,yaml,toml}`, ...) and the folders `.ssh`,
/// `.gnupg` and `.aws`.
pub fn is_secret_name(name: &OsStr) -> bool {
    // Compared without allocating: every name of every path a reader opens comes here.
    let b = name.as_encoded_bytes();
    let is = |s: &&str| b.eq_ignore_ascii_case(s.as_bytes());
    let starts = |p: &&str| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    let ends =
        |s: &&str| b.len() >= s.len() && b[b.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    SECRET_DIRS.iter().any(is)
        || SECRET_NAMES.iter().any(is)
        || SECRET_PREFIXES.iter().any(starts)
        || SECRET_SUFFIXES.iter().any(ends)
}

/// The rule a single name breaks, if any.
pub fn name_rule(name: &OsStr) -> Option<Rule> {
    if is_git_name(name) {
        Some(Rule::GitDir)
    } else if is_secret_name(name) {
        Some(Rule::SecretFile)
    } else {
        None
    }
}
