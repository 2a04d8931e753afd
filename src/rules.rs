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

/// True for a `.git` entry name (folder, or the file of a worktree or submodule).
pub fn is_git_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().eq_ignore_ascii_case(b".git")
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
