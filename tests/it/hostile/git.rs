//! A repository that ships its own `.git`: its configuration, attributes, hooks and layout are
//! the attacker's. Every reader runs over the CLI, MCP stdio and HTTP; no program the
//! repository names runs (a marker file per program proves it), and no byte from outside the
//! root reaches an answer or an error.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{git, scratch_repo, Three};

/// A shell command that leaves `markers/<name>` behind, then passes its input through.
fn marker(markers: &Path, name: &str) -> String {
    format!("touch {}/{name}; cat", markers.display())
}

/// Appends `text` to the repository's `.git/config`.
fn plant_config(dir: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(".git/config"))
        .expect("open .git/config");
    f.write_all(text.as_bytes()).expect("append");
}

/// A program file (a hook, a script named by configuration) that leaves its marker.
fn plant_program(path: &Path, markers: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("#!/bin/sh\ntouch {}/{name}\ncat\n", markers.display()),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every reader with inputs that reach the planted settings: working tree and revisions.
fn every_reader(three: &mut Three<'_>) -> Vec<Value> {
    vec![
        three.ok("repo.status", json!({})),
        three.ok("repo.diff", json!({})),
        three.ok("repo.diff", json!({"from": "HEAD"})),
        three.ok("repo.diff", json!({"from": "HEAD~1", "to": "HEAD"})),
        three.ok("repo.show", json!({"rev": "HEAD"})),
        // A committed, unchanged file: its blame is the same for every transport (a changed
        // line's "not committed yet" time is not), and git still cleans it with the filter.
        three.ok("repo.blame", json!({"path": "kept.txt"})),
        three.ok("repo.blame", json!({"path": "a.txt", "rev": "HEAD"})),
        three.ok("repo.log", json!({"limit": 5})),
        three.ok("repo.log", json!({"limit": 5, "path": "a.txt"})),
        three.ok("repo.branches", json!({})),
        three.ok("repo.identity", json!({})),
    ]
}

/// The program-naming settings git knows, planted in configuration, attributes, hooks and
/// a submodule's own configuration.
fn hostile_repository(markers: &Path) -> tempfile::TempDir {
    let repo = scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.bin"), "bin\n").unwrap();
    std::fs::write(dir.join("kept.txt"), "kept\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "two"]);
    // A submodule with its own configuration: git would run inside it.
    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(upstream.path().join("s.txt"), "s\n").unwrap();
    git(upstream.path(), &["add", "-A"]);
    git(
        upstream.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "s",
        ],
    );
    git(
        dir,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &upstream.path().display().to_string(),
            "sub",
        ],
    );
    git(dir, &["commit", "-q", "-m", "submodule"]);
    std::fs::write(dir.join("sub/s.txt"), "changed\n").unwrap();
    let m = |name: &str| marker(markers, name);
    let sub_config = dir.join(".git/modules/sub/config");
    let mut sub = std::fs::read_to_string(&sub_config).unwrap();
    sub.push_str(&format!(
        "[core]\n\tfsmonitor = \"{}\"\n[diff]\n\texternal = \"{}\"\n",
        m("sub-fsmonitor"),
        m("sub-external")
    ));
    std::fs::write(&sub_config, sub).unwrap();
    // Attributes name drivers for every file, in the tree and in .git/info.
    std::fs::write(
        dir.join(".gitattributes"),
        "* filter=evil diff=evil merge=evil\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join(".git/info")).unwrap();
    std::fs::write(
        dir.join(".git/info/attributes"),
        "* filter=evil2 diff=evil2\n",
    )
    .unwrap();
    let hooks = dir.join("planted-hooks");
    for hook in [
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
        "pre-auto-gc",
    ] {
        plant_program(&dir.join(".git/hooks").join(hook), markers, hook);
        plant_program(&hooks.join(hook), markers, &format!("path-{hook}"));
    }
    plant_config(
        dir,
        &format!(
            "[filter \"evil\"]\n\tclean = \"{}\"\n\tsmudge = \"{}\"\n\tprocess = \"{}\"\n\trequired = true\n\
             [filter \"evil2\"]\n\tclean = \"{}\"\n\
             [diff \"evil\"]\n\ttextconv = \"{}\"\n\tcommand = \"{}\"\n\
             [diff \"evil2\"]\n\ttextconv = \"{}\"\n\
             [diff]\n\texternal = \"{}\"\n\
             [merge \"evil\"]\n\tdriver = \"{}\"\n\
             [core]\n\tfsmonitor = \"{}\"\n\tpager = \"{}\"\n\tsshCommand = \"{}\"\n\
             \taskPass = \"{}\"\n\teditor = \"{}\"\n\thooksPath = \"{}\"\n\
             [pager]\n\tlog = \"{}\"\n\tdiff = \"{}\"\n\tshow = \"{}\"\n\tblame = \"{}\"\n\
             [credential]\n\thelper = \"!{}\"\n\
             [gpg]\n\tprogram = \"{}\"\n[log]\n\tshowSignature = true\n\
             [sequence]\n\teditor = \"{}\"\n\
             [remote \"origin\"]\n\turl = https://example.invalid/r.git\n\tuploadpack = \"{}\"\n\
             [extensions]\n\tpartialClone = origin\n\
             [gc]\n\tauto = 1\n[maintenance]\n\tauto = true\n\
             [status]\n\tsubmoduleSummary = true\n[submodule]\n\trecurse = true\n",
            m("clean"),
            m("smudge"),
            m("process"),
            m("clean2"),
            m("textconv"),
            m("diff-command"),
            m("textconv2"),
            m("external"),
            m("merge-driver"),
            m("fsmonitor"),
            m("pager"),
            m("ssh"),
            m("askpass"),
            m("editor"),
            hooks.display(),
            m("pager-log"),
            m("pager-diff"),
            m("pager-show"),
            m("pager-blame"),
            m("credential"),
            m("gpg"),
            m("sequence-editor"),
            m("uploadpack"),
        ),
    );
    // Changes in the working tree, so the drivers have something to convert.
    std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.join("c.txt"), "new\n").unwrap();
    repo
}

#[test]
fn no_program_the_repository_names_runs_on_any_reader_or_transport() {
    let markers = tempfile::tempdir().unwrap();
    let repo = hostile_repository(markers.path());
    // The same settings work on git itself: the planted programs do run there.
    let probe = std::process::Command::new("git")
        .args(["diff", "HEAD"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(probe.status.success() || !probe.stderr.is_empty());
    let ran_under_git: Vec<String> = std::fs::read_dir(markers.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !ran_under_git.is_empty(),
        "the planted settings must be live: git itself ran none of them"
    );
    for entry in std::fs::read_dir(markers.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let mut three = Three::new(repo.path());
    let answers = every_reader(&mut three);
    three.finish();
    let ran: Vec<String> = std::fs::read_dir(markers.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(ran.is_empty(), "programs the repository named ran: {ran:?}");
    // The readers answered from the repository, not from nothing.
    let status = &answers[0];
    let text = status.to_string();
    assert!(text.contains("a.txt") && text.contains("c.txt"), "{status}");
    assert!(answers[2].to_string().contains("+two"), "{}", answers[2]);
    assert!(answers[5].to_string().contains("kept"), "{}", answers[5]);
}

/// Writes `OUTSIDE` text into a folder outside any repository.
fn outside() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), "OUTSIDE-BYTES-7f3a\n").unwrap();
    dir
}

/// Every reader of `dir` answers `refused` with the rule `git_pinned`, and no answer or error
/// holds a byte of `outside`.
fn every_reader_refused(dir: &Path) {
    let mut three = Three::new(dir);
    for (id, input) in [
        ("repo.status", json!({})),
        ("repo.diff", json!({})),
        ("repo.diff", json!({"from": "HEAD"})),
        ("repo.show", json!({"rev": "HEAD"})),
        ("repo.blame", json!({"path": "README.md"})),
        ("repo.log", json!({"limit": 3})),
        ("repo.branches", json!({})),
        ("repo.identity", json!({})),
    ] {
        let text = three.err(id, input, "refused");
        assert!(text.contains("git_pinned"), "{id}: {text}");
        assert!(!text.contains("OUTSIDE-BYTES"), "{id}: {text}");
    }
    three.finish();
}

#[test]
fn a_work_tree_outside_the_root_is_refused() {
    let out = outside();
    let repo = scratch_repo();
    plant_config(
        repo.path(),
        &format!("[core]\n\tworktree = {}\n", out.path().display()),
    );
    every_reader_refused(repo.path());
}

#[test]
fn a_git_file_that_points_elsewhere_is_refused() {
    let other = scratch_repo();
    std::fs::write(other.path().join("README.md"), "OUTSIDE-BYTES-7f3a\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# here\n").unwrap();
    std::fs::write(
        dir.path().join(".git"),
        format!("gitdir: {}\n", other.path().join(".git").display()),
    )
    .unwrap();
    every_reader_refused(dir.path());
}

#[test]
fn a_git_folder_that_is_a_link_out_or_has_a_commondir_is_refused() {
    let other = scratch_repo();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path().join(".git"), dir.path().join(".git")).unwrap();
    every_reader_refused(dir.path());
    let repo = scratch_repo();
    std::fs::write(
        repo.path().join(".git/commondir"),
        other.path().join(".git").display().to_string(),
    )
    .unwrap();
    every_reader_refused(repo.path());
}

#[test]
fn alternates_includes_and_links_that_lead_outside_are_refused() {
    let other = scratch_repo();
    let out = outside();
    // Alternates: another object store.
    let repo = scratch_repo();
    std::fs::write(
        repo.path().join(".git/objects/info/alternates"),
        format!("{}\n", other.path().join(".git/objects").display()),
    )
    .unwrap();
    every_reader_refused(repo.path());
    // An include of a file outside the root.
    let repo = scratch_repo();
    std::fs::write(
        out.path().join("evil.config"),
        "[core]\n\tfsmonitor = touch /nonexistent\n",
    )
    .unwrap();
    plant_config(
        repo.path(),
        &format!(
            "[include]\n\tpath = {}\n",
            out.path().join("evil.config").display()
        ),
    );
    every_reader_refused(repo.path());
    // Refs linked to another repository's.
    let repo = scratch_repo();
    std::fs::rename(
        repo.path().join(".git/refs"),
        repo.path().join(".git/refs.old"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        other.path().join(".git/refs"),
        repo.path().join(".git/refs"),
    )
    .unwrap();
    every_reader_refused(repo.path());
}

#[test]
fn settings_that_read_outside_files_are_not_honoured() {
    let out = outside();
    let repo = scratch_repo();
    let dir = repo.path();
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "a"]);
    let secret = out.path().join("secret.txt");
    plant_config(
        dir,
        &format!(
            "[blame]\n\tignoreRevsFile = {0}\n[core]\n\texcludesFile = {0}\n\tattributesFile = {0}\n\
             [commit]\n\ttemplate = {0}\n[mailmap]\n\tfile = {0}\n",
            secret.display()
        ),
    );
    let mut three = Three::new(dir);
    for (id, input) in [
        ("repo.blame", json!({"path": "a.txt"})),
        ("repo.log", json!({"limit": 3})),
        ("repo.status", json!({})),
        ("repo.show", json!({"rev": "HEAD"})),
    ] {
        let answer = three.ok(id, input);
        assert!(
            !answer.to_string().contains("OUTSIDE-BYTES"),
            "{id}: {answer}"
        );
    }
    three.finish();
}

#[test]
fn git_messages_never_reach_a_client_verbatim() {
    // A `packed-refs` line git quotes in its complaint ("unexpected line in .git/packed-refs:
    // …"): the text could be any file's.
    let repo = scratch_repo();
    std::fs::write(
        repo.path().join(".git/packed-refs"),
        "OUTSIDE-BYTES-7f3a not a ref line\n",
    )
    .unwrap();
    let mut three = Three::new(repo.path());
    for (id, input) in [
        ("repo.log", json!({"limit": 1})),
        ("repo.branches", json!({})),
    ] {
        // The CLI's stderr is its own log (git's words may be there); its answer, the
        // `error[…]` line, and the MCP and HTTP answers are seneschal's words only.
        let text = three.err(id, input.clone(), "internal");
        let answer = text.lines().find(|l| l.starts_with("error[")).unwrap_or("");
        assert!(!answer.contains("OUTSIDE-BYTES"), "{id}: {text}");
        assert!(answer.contains("server's log"), "{id}: {text}");
        for served in [three.mcp_error(id, &input), three.http_error(id, &input)] {
            assert!(!served.contains("OUTSIDE-BYTES"), "{id}: {served}");
        }
    }
    three.finish();
}

#[test]
fn a_huge_commit_message_is_cut_and_said_so() {
    let repo = scratch_repo();
    let dir = repo.path();
    // A one-line message of 9 MiB: the subject alone is over every cap.
    let message = dir.join("..").join(format!(
        "msg-{}",
        dir.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&message, "s".repeat(9 << 20)).unwrap();
    git(
        dir,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-F",
            &message.display().to_string(),
        ],
    );
    std::fs::remove_file(&message).unwrap();
    let mut three = Three::new(dir);
    let log = three.ok("repo.log", json!({"limit": 3}));
    assert_eq!(log["truncated"], true, "the log says it was cut");
    let subject = log["commits"][0]["subject"].as_str().unwrap();
    assert!(
        subject.len() <= 4096 && subject.starts_with("sss"),
        "{}",
        subject.len()
    );
    let show = three.ok("repo.show", json!({"rev": "HEAD", "patch": false}));
    assert_eq!(show["truncated"], true);
    assert!(show["message"].as_str().unwrap().len() <= 1 << 20);
    assert!(
        show.to_string().len() < 2 << 20,
        "{}",
        show.to_string().len()
    );
    three.finish();
}

#[test]
fn no_repository_no_root() {
    use crate::support::{bin, stderr};
    let loose = tempfile::tempdir().unwrap();
    std::fs::write(loose.path().join("hostname"), "OUTSIDE-BYTES-7f3a\n").unwrap();
    let run = |cwd: &Path, args: &[&str], home: &Path| {
        std::process::Command::new(bin())
            .args(args)
            .current_dir(cwd)
            .env("HOME", home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // A folder in no repository: `mcp`, `serve` and a reader all refuse to start.
    for args in [
        &["mcp"][..],
        &["serve", "--bind", "127.0.0.1:0"],
        &["files", "read", "--path", "hostname"],
    ] {
        let out = run(loose.path(), args, Path::new("/nonexistent"));
        assert!(
            !out.status.success(),
            "{args:?} served a folder in no repository"
        );
        let err = stderr(&out);
        assert!(
            err.contains("in no git repository") && err.contains("--repo"),
            "{err}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("OUTSIDE-BYTES"));
    }
    // `--repo DIR` names the folder to serve: then it is served.
    let named = run(
        loose.path(),
        &[
            "--repo",
            &loose.path().display().to_string(),
            "files",
            "read",
            "--path",
            "hostname",
        ],
        Path::new("/nonexistent"),
    );
    assert!(named.status.success(), "{}", stderr(&named));
    // `/` and the home folder never are, named or found.
    for root in ["/".to_string(), loose.path().display().to_string()] {
        let out = run(loose.path(), &["--repo", &root, "mcp"], loose.path());
        assert_eq!(out.status.code(), Some(4), "{root}: {}", stderr(&out));
        assert!(stderr(&out).contains("never served"), "{}", stderr(&out));
    }
}

/// A real linked worktree (`git worktree add`) of a repository whose files hold outside bytes:
/// the repository (kept alive), and the worktree's folder.
fn worktree_of(other: &Path) -> tempfile::TempDir {
    std::fs::write(other.join("README.md"), "OUTSIDE-BYTES-7f3a\n").unwrap();
    git(other, &["commit", "-q", "-am", "outside"]);
    let holder = tempfile::tempdir().unwrap();
    let wt = holder.path().join("wt");
    git(
        other,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    holder
}

/// A git write in `dir` is refused with `git_pinned` too, and writes nothing there.
fn write_refused(dir: &Path) {
    std::fs::write(dir.join("README.md"), "changed\n").unwrap();
    let o = crate::support::call(dir, "repo.stage", json!({"paths": ["README.md"]}));
    let text = crate::support::stderr(&o);
    assert!(
        text.contains("error[refused]") && text.contains("git_pinned"),
        "{text}"
    );
    assert!(!text.contains("OUTSIDE-BYTES"), "{text}");
}

#[test]
fn a_gitfile_whose_worktree_folder_does_not_name_this_checkout_back_is_refused() {
    // The `.git` file of another repository's real worktree, copied into this folder: the
    // worktree folder's `gitdir` names that checkout, not this one.
    let other = scratch_repo();
    let holder = worktree_of(other.path());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# here\n").unwrap();
    std::fs::copy(holder.path().join("wt/.git"), dir.path().join(".git")).unwrap();
    every_reader_refused(dir.path());
    write_refused(dir.path());
    // The real worktree itself is served.
    let wt = holder.path().join("wt");
    let mut three = Three::new(&wt);
    let status = three.ok("repo.status", json!({}));
    assert_eq!(status["branch"], "wt", "{status}");
    three.finish();
}

#[test]
fn a_worktree_whose_commondir_leads_elsewhere_is_refused() {
    let other = scratch_repo();
    let third = scratch_repo();
    let holder = worktree_of(other.path());
    let wt = holder.path().join("wt");
    std::fs::write(wt.join("README.md"), "# here\n").unwrap();
    let cd = other.path().join(".git/worktrees/wt/commondir");
    assert_eq!(std::fs::read_to_string(&cd).unwrap().trim(), "../..");
    std::fs::write(&cd, format!("{}\n", third.path().join(".git").display())).unwrap();
    every_reader_refused(&wt);
    write_refused(&wt);
}

#[test]
fn a_worktree_reached_through_a_symbolic_link_is_refused() {
    let other = scratch_repo();
    let holder = worktree_of(other.path());
    let wt = holder.path().join("wt");
    let private = other.path().join(".git/worktrees/wt");
    let links = tempfile::tempdir().unwrap();
    // The `.git` file names a link to the worktree's folder.
    std::os::unix::fs::symlink(&private, links.path().join("private")).unwrap();
    let gitfile = std::fs::read_to_string(wt.join(".git")).unwrap();
    std::fs::write(
        wt.join(".git"),
        format!("gitdir: {}\n", links.path().join("private").display()),
    )
    .unwrap();
    every_reader_refused(&wt);
    std::fs::write(wt.join(".git"), &gitfile).unwrap();
    // The back-link and the common-folder pointer as links to files saying the right thing.
    for name in ["gitdir", "commondir"] {
        let file = private.join(name);
        let kept = links.path().join(name);
        std::fs::rename(&file, &kept).unwrap();
        std::os::unix::fs::symlink(&kept, &file).unwrap();
        every_reader_refused(&wt);
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(&kept, &file).unwrap();
    }
    // Put back as git made it, the worktree is served.
    let mut three = Three::new(&wt);
    three.ok("repo.log", json!({"limit": 1}));
    three.finish();
    write_refused_not(&wt);
}

/// Staging in a served worktree works (the counterpart of [`write_refused`]).
fn write_refused_not(dir: &Path) {
    std::fs::write(dir.join("README.md"), "changed\n").unwrap();
    let o = crate::support::call(dir, "repo.stage", json!({"paths": ["README.md"]}));
    assert!(o.status.success(), "{}", crate::support::stderr(&o));
}

#[test]
fn a_submodule_checkout_is_refused() {
    // The layout `git submodule add` makes: `<super>/sub/.git` a gitfile naming
    // `<super>/.git/modules/sub`, whose `core.worktree` names the checkout back.
    let sup = scratch_repo();
    let module = scratch_repo();
    std::fs::write(module.path().join("README.md"), "OUTSIDE-BYTES-7f3a\n").unwrap();
    git(module.path(), &["commit", "-q", "-am", "outside"]);
    let modules = sup.path().join(".git/modules/sub");
    std::fs::create_dir_all(&modules).unwrap();
    crate::support::copy_tree(&module.path().join(".git"), &modules);
    let sub = sup.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("README.md"), "# sub\n").unwrap();
    std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
    git(&sub, &["config", "core.worktree", "../../../sub"]);
    // Plain git takes it as a checkout of the module.
    assert_eq!(
        git(&sub, &["rev-parse", "--show-toplevel"]).trim(),
        sub.canonicalize().unwrap().to_str().unwrap()
    );
    every_reader_refused(&sub);
    let mut three = Three::new(&sub);
    let text = three.err("repo.status", json!({}), "refused");
    three.finish();
    assert!(text.contains("submodule"), "{text}");
}
