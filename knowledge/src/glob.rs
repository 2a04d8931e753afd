//! Glob expansion confined to the repository: the files a kind's globs match, listed
//! through [`seneschal_access::rootfs::Root`] handles, with their stamps where the listing can tell them.
//!
//! A folder is opened relative to its parent's handle and listed through its own. A symbolic
//! link is resolved inside the repository or refused; a folder that a link leads out of the
//! repository, and a secret-bearing folder (`.ssh`, `.aws`, `.gnupg`, whose files are secret
//! by the folder's name), is not listed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::stamp::Stamp;
use seneschal_access::confine::{is_git_name, name_rule};
use seneschal_access::rootfs::{Denied, Dir, Follow, Root};

/// A file a glob matched.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Repository-relative path with `/` separators (a name that is not UTF-8 is spelled
    /// lossily, and `utf8` is false).
    pub rel: String,
    /// Whether every name of the path is UTF-8.
    pub utf8: bool,
    /// Whether the file or a folder on the way to it is a symbolic link.
    pub via_symlink: bool,
    /// The file's stamp; `None` when the listing left it for its reader.
    pub stamp: Option<Stamp>,
}

/// Shell-style match of one path segment: `*` is any run, `?` one character. A leading `.`
/// is matched only by a pattern that starts with `.`.
pub fn segment_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    if pattern.is_ascii() && name.is_ascii() {
        wildmatch(pattern.as_bytes(), name.as_bytes())
    } else {
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = name.chars().collect();
        wildmatch(&p, &s)
    }
}

/// `*` and `?` matching with one backtrack point.
fn wildmatch<T: PartialEq + Copy + From<u8>>(p: &[T], s: &[T]) -> bool {
    let (star, any) = (T::from(b'*'), T::from(b'?'));
    let (mut pi, mut si) = (0, 0);
    let (mut back, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == any || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == star {
            back = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(b) = back {
            pi = b + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == star {
        pi += 1;
    }
    pi == p.len()
}

fn is_wild(seg: &str) -> bool {
    seg.contains('*') || seg.contains('?')
}

/// Every file under `root` that `glob` matches, appended to `out`, stamped.
pub fn expand(root: &Root, root_path: &Path, glob: &str, out: &mut Vec<Candidate>) {
    expand_stamping(root, root_path, glob, out, &mut Vec::new(), true);
}

/// [`expand`], also collecting every folder whose listing the answer depends on (as paths
/// under `root_path`, for the watcher). With `stamp_plain` false, a plain file found by
/// listing a folder is left unstamped (`stamp: None`) for its reader to stamp through the
/// handle it opens ([`super::scan::read_object`]), which saves one `statx` per file when every file is read
/// anyway (a cold index). Links, literal segments, special files and names the rules refuse
/// are stamped either way, so a file that is never read still has a stamp.
///
/// Folders are walked depth first, each opened relative to its parent's handle and closed
/// once listed, so the open handles are never more than the glob's depth.
pub fn expand_stamping(
    root: &Root,
    root_path: &Path,
    glob: &str,
    out: &mut Vec<Candidate>,
    dirs: &mut Vec<PathBuf>,
    stamp_plain: bool,
) {
    let segs: Vec<&str> = glob.split('/').collect();
    let Ok(top) = root.open_dir("", Follow::Never) else {
        return;
    };
    let mut walk = Expand {
        root,
        root_path,
        out,
        dirs,
        stamp_plain,
    };
    walk.folder(&top, "", true, false, &segs);
}

/// One glob's depth-first expansion.
struct Expand<'a> {
    root: &'a Root,
    root_path: &'a Path,
    out: &'a mut Vec<Candidate>,
    dirs: &'a mut Vec<PathBuf>,
    stamp_plain: bool,
}

/// What a symbolic link a glob matched leads to.
enum Linked {
    Folder,
    File(Option<Stamp>),
}

impl Expand<'_> {
    /// Matches `segs` in the open folder `dir`, whose path is `rel`.
    fn folder(&mut self, dir: &Dir, rel: &str, utf8: bool, via: bool, segs: &[&str]) {
        self.dirs.push(self.root_path.join(rel));
        let Some((seg, rest)) = segs.split_first() else {
            return;
        };
        let last = rest.is_empty();
        let join = |name: &str| {
            if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            }
        };
        if !is_wild(seg) {
            let name = OsStr::new(seg);
            if last {
                let Some(meta) = dir.stat(name) else { return };
                self.entry(dir, join(seg), name, meta.kind, utf8, via, true);
            } else if let Ok(sub) = self.root.open_dir_in(dir, rel, name, Follow::Inside) {
                let link = dir.stat(name).is_some_and(|m| m.kind == FileType::Symlink);
                self.folder(&sub, &join(seg), utf8, via || link, rest);
            }
            return;
        }
        let Ok(entries) = dir.entries() else { return };
        for entry in entries {
            // A name that is not UTF-8 is matched by its lossy spelling, so that it becomes a
            // finding rather than vanishing.
            let lossy = entry.name.to_string_lossy();
            let name_utf8 = utf8 && entry.name.to_str().is_some();
            if is_git_name(&entry.name) || !segment_matches(seg, &lossy) {
                continue;
            }
            let link = entry.kind == FileType::Symlink;
            if last {
                self.entry(
                    dir,
                    join(&lossy),
                    &entry.name,
                    entry.kind,
                    name_utf8,
                    via,
                    false,
                );
            } else if entry.kind == FileType::Directory || link {
                if let Ok(sub) = self.root.open_dir_in(dir, rel, &entry.name, Follow::Inside) {
                    self.folder(&sub, &join(&lossy), name_utf8, via || link, rest);
                }
            }
        }
    }

    /// A matched last segment: a candidate unless it is a folder (or a link to one).
    #[allow(clippy::too_many_arguments)]
    fn entry(
        &mut self,
        dir: &Dir,
        rel: String,
        name: &OsStr,
        kind: FileType,
        utf8: bool,
        via: bool,
        literal: bool,
    ) {
        let stamp = match kind {
            FileType::Directory => return,
            FileType::Symlink => match self.linked(dir, &rel, name) {
                Linked::Folder => return,
                Linked::File(stamp) => stamp,
            },
            FileType::RegularFile
                if !literal && !self.stamp_plain && utf8 && name_rule(name).is_none() =>
            {
                None
            }
            _ => dir.stat(name).map(|m| Stamp::of_meta(&m)),
        };
        self.out.push(Candidate {
            rel,
            utf8,
            via_symlink: via || kind == FileType::Symlink,
            stamp,
        });
    }

    /// Resolves a matched link under the root: its target's stamp, or the link's own when the
    /// target is refused (so that replacing the link is seen).
    fn linked(&self, dir: &Dir, rel: &str, name: &OsStr) -> Linked {
        match self.root.open_file(rel, Follow::Inside) {
            Ok(f) => Linked::File(Some(Stamp::of_meta(f.meta()))),
            Err(Denied::IsDir) => Linked::Folder,
            Err(_) => Linked::File(dir.stat(name).map(|m| Stamp::of_meta(&m))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_match_like_a_shell() {
        assert!(segment_matches("*.md", "0001-x.md"));
        assert!(!segment_matches("*.md", "0001-x.markdown"));
        assert!(segment_matches("SKILL.md", "SKILL.md"));
        assert!(segment_matches("a?c", "abc"));
        assert!(!segment_matches("*", ".hidden"));
        assert!(segment_matches(".*", ".hidden"));
        assert!(segment_matches("*-*.md", "a-b-c.md"));
    }
}
