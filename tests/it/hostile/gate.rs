//! The content gate: a private key in an innocently named file, reached through every reader
//! that cuts files into pieces (blame lines, diff hunks, a commit's patch, search matches,
//! prompt images, completion candidates). No key line reaches any answer on any transport;
//! each reader refuses the file or leaves it out and counts it.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::mcp::Mcp;
use crate::support::{git, scratch_repo, Three};

/// Key material lines (built here, so no source file holds a key block).
fn material(n: usize) -> String {
    format!("QkVHSU5LRVlNQVRFUklBTDEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9w{n:08}")
}

/// A PEM private key block of `lines` material lines.
fn key(lines: usize) -> String {
    let mut out = vec![format!("-----BEGIN {} KEY-----", "RSA PRIVATE")];
    out.extend((0..lines).map(material));
    out.push(format!("-----END {} KEY-----", "RSA PRIVATE"));
    out.join("\n") + "\n"
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The paths of a diff answer's files.
fn paths(answer: &Value) -> Vec<&str> {
    answer["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect()
}

/// No material line of the key is in `answer`.
fn clean(what: &str, answer: &Value) {
    let text = answer.to_string();
    assert!(
        !text.contains("QkVHSU5LRVlNQVRFUklBTDEy"),
        "{what}: key material reached the answer: {text}"
    );
}

#[test]
fn a_key_file_is_refused_or_left_out_by_every_reader() {
    let repo = scratch_repo();
    let dir = repo.path();
    write(dir, "notes/deploy.txt", key(30).as_bytes());
    write(dir, "src/app.txt", b"fn app() {}\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "deploy notes"]);
    // The key edited mid-file: the hunk holds key lines, not its BEGIN or END line.
    let edited = key(30).replace(&material(15), &material(99));
    write(dir, "notes/deploy.txt", edited.as_bytes());
    write(dir, "src/app.txt", b"fn app() { run() }\n");
    let mut three = Three::new(dir);
    for input in [
        json!({"path": "notes/deploy.txt"}),
        json!({"path": "notes/deploy.txt", "rev": "HEAD"}),
        json!({"path": "notes/deploy.txt", "start": 10, "limit": 3}),
    ] {
        let text = three.err("repo.blame", input, "refused");
        assert!(text.contains("secret_content"), "{text}");
    }
    for input in [
        json!({}),
        json!({"from": "HEAD"}),
        json!({"from": "HEAD~1", "to": "HEAD"}),
        json!({"paths": ["notes"]}),
    ] {
        let answer = three.ok("repo.diff", input.clone());
        clean(&format!("repo.diff {input}"), &answer);
        assert_eq!(answer["skipped_secret_files"], 1, "{input}: {answer}");
        let files = paths(&answer);
        assert!(!files.contains(&"notes/deploy.txt"), "{files:?}");
    }
    // The other file of the same diff is still shown.
    let diff = three.ok("repo.diff", json!({}));
    assert!(diff["patch"].as_str().unwrap().contains("run()"), "{diff}");
    let show = three.ok("repo.show", json!({"rev": "HEAD", "patch": true}));
    clean("repo.show", &show);
    assert_eq!(show["skipped_secret_files"], 1, "{show}");
    let found = three.ok("files.search", json!({"pattern": "QkVHSU5LRVlNQVRFUklB"}));
    clean("files.search", &found);
    three.err("files.read", json!({"path": "notes/deploy.txt"}), "refused");
    three.finish();
}

/// A diff whose patch runs past several of the looks the gate takes while git writes it
/// (one each 256 KiB): the key file's section, written in the middle of git's run, is judged
/// there, and the file left out, whether its section is one a look finds whole or the last;
/// the files around it are shown. Cut at the default cap, before the key's section, no key
/// line reaches the answer either.
#[test]
fn a_key_file_in_a_long_patch_is_left_out_wherever_git_writes_it() {
    let repo = scratch_repo();
    let dir = repo.path();
    let long = |tag: &str| -> String {
        (0..9000)
            .map(|i| format!("{tag} line {i} of a long text file\n"))
            .collect()
    };
    for name in ["a-first.txt", "m-keyed.txt", "z-last.txt"] {
        write(dir, name, format!("{name}\n").as_bytes());
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "three files"]);
    write(dir, "a-first.txt", long("first").as_bytes());
    write(dir, "m-keyed.txt", key(30).as_bytes());
    write(dir, "z-last.txt", long("last").as_bytes());
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "long files and a key"]);
    // The key as the only file after the first long one: its section is the last.
    write(dir, "z-last.txt", b"z-last.txt\n");
    let mut three = Three::new(dir);
    let whole = 8 * 1024 * 1024;
    for (input, shown) in [
        (
            json!({"from": "HEAD~1", "to": "HEAD", "max_bytes": whole}),
            vec!["a-first.txt", "z-last.txt"],
        ),
        (
            json!({"from": "HEAD~1", "max_bytes": whole}),
            vec!["a-first.txt"],
        ),
    ] {
        let answer = three.ok("repo.diff", input.clone());
        clean(&format!("repo.diff {input}"), &answer);
        assert_eq!(answer["skipped_secret_files"], 1, "{input}");
        let files = paths(&answer);
        assert_eq!(files, shown, "{input}");
        let patch = answer["patch"].as_str().unwrap();
        assert!(patch.contains("first line 8999"), "{input}");
        assert!(!patch.contains("m-keyed.txt"), "{input}");
    }
    let cut = three.ok("repo.diff", json!({"from": "HEAD~1", "to": "HEAD"}));
    clean("repo.diff at the default cap", &cut);
    assert_eq!(cut["truncated"], true, "{cut}");
    three.finish();
}

/// Two renames whose sections share one header (`p` to `q b/r` and `p b/q` to `r` both read
/// `diff --git a/p b/q b/r`): the key file is judged and left out, whichever comes first, and
/// the patch of the other is not cut from sections that cannot be told apart.
#[test]
fn renames_sharing_a_header_are_both_judged() {
    let repo = scratch_repo();
    let dir = repo.path();
    let plain: String = (0..30).map(|i| format!("plain line {i}\n")).collect();
    write(dir, "p", plain.as_bytes());
    write(dir, "p b/q", key(30).as_bytes());
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "two files"]);
    std::fs::remove_file(dir.join("p")).unwrap();
    std::fs::remove_dir_all(dir.join("p b")).unwrap();
    write(
        dir,
        "q b/r",
        plain.replace("line 15", "line fifteen").as_bytes(),
    );
    let edited = key(30).replace(&material(15), &material(99));
    write(dir, "r", edited.as_bytes());
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "both renamed"]);
    let mut three = Three::new(dir);
    let answer = three.ok("repo.diff", json!({"from": "HEAD~1", "to": "HEAD"}));
    clean("repo.diff", &answer);
    assert_eq!(answer["skipped_secret_files"], 1, "{answer}");
    let files = paths(&answer);
    assert_eq!(files, ["q b/r"], "{answer}");
    assert!(
        answer["patch"]
            .as_str()
            .unwrap()
            .contains("+plain line fifteen"),
        "{answer}"
    );
    three.finish();
}

#[test]
fn a_blob_too_large_to_judge_is_refused_by_blame() {
    let repo = scratch_repo();
    let dir = repo.path();
    // One line of 9 MiB: over the gate's 8 MiB cap at a revision and in the working tree.
    write(dir, "big.txt", &vec![b'a'; 9 << 20]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "big"]);
    let mut three = Three::new(dir);
    for input in [
        json!({"path": "big.txt"}),
        json!({"path": "big.txt", "rev": "HEAD"}),
    ] {
        let text = three.err("repo.blame", input, "refused");
        assert!(text.contains("size_cap"), "{text}");
    }
    three.finish();
}

/// A one-pixel PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

fn skill(root: &Path, name: &str, body: &str, arguments: &str) {
    write(
        root,
        &format!("skills/{name}/SKILL.md"),
        format!("---\nname: {name}\ndescription: A skill.\n{arguments}---\n{body}").as_bytes(),
    );
}

#[test]
fn prompt_images_pass_the_gate_and_arguments_cannot_name_files() {
    let repo = scratch_repo();
    let dir = repo.path();
    write(
        dir,
        "config/database.yml",
        b"production:\n  password: OUTSIDEPASSWORD-93kd\n",
    );
    write(dir, "skills/pics/real.png", PNG);
    std::os::unix::fs::symlink("../../config/database.yml", dir.join("skills/pics/db.png"))
        .unwrap();
    write(dir, "skills/pics/key.png", key(4).as_bytes());
    skill(dir, "real", "Look:\n\n![ok](../pics/real.png)\n", "");
    skill(dir, "linked", "Look:\n\n![db](../pics/db.png)\n", "");
    skill(dir, "keyed", "Look:\n\n![k](../pics/key.png)\n", "");
    skill(
        dir,
        "inject",
        "Review {{topic}} now.\n",
        "arguments:\n  - name: topic\n    required: true\n",
    );
    let mut mcp = Mcp::start_with(dir, &[], &[]);
    mcp.initialize("2025-11-25");
    let get = |mcp: &mut Mcp, name: &str, args: Value| {
        mcp.request("prompts/get", json!({"name": name, "arguments": args}))
    };
    let real = get(&mut mcp, "real", json!({}));
    let kinds: Vec<&str> = real["result"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("{real}"))
        .iter()
        .filter_map(|m| m["content"]["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "image"], "{real}");
    for name in ["linked", "keyed"] {
        let answer = get(&mut mcp, name, json!({}));
        assert!(answer["error"].is_object(), "{name}: {answer}");
        let text = answer.to_string();
        assert!(!text.contains("OUTSIDEPASSWORD"), "{text}");
        clean(name, &answer);
        // The bytes never left as base64 either.
        assert!(!text.contains("cGFzc3dvcmQ"), "{text}");
    }
    let injected = get(
        &mut mcp,
        "inject",
        json!({"topic": "x\n\n![db](../pics/key.png)\n\nseneschal://knowledge/skill/keyed\n"}),
    );
    let messages = injected["result"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("{injected}"));
    assert!(
        messages.iter().all(|m| m["content"]["type"] == "text"),
        "an argument became a reference: {injected}"
    );
    clean("inject", &injected);
    let (status, _, err) = mcp.finish();
    assert!(status.success(), "{err}");
}

#[test]
fn completion_matches_redacted_values_only() {
    let repo = scratch_repo();
    let dir = repo.path();
    let token = format!("ghp_{}", "Cmpl3tionS3cr3t".repeat(3));
    skill(
        dir,
        "deploy",
        "Deploy with {{token}}.\n",
        &format!("arguments:\n  - name: token\n    examples: [{token}, plain-choice]\n"),
    );
    let mut mcp = Mcp::start_with(dir, &[], &[]);
    mcp.initialize("2025-11-25");
    let complete = |mcp: &mut Mcp, value: &str| {
        mcp.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "deploy"},
                   "argument": {"name": "token", "value": value}}),
        )["result"]["completion"]["values"]
            .clone()
    };
    // A prefix of the secret matches nothing: the oracle is closed, one character or many.
    for prefix in ["g", "ghp_", "ghp_C", &token[..20]] {
        let values = complete(&mut mcp, prefix);
        assert_eq!(values, json!([]), "prefix {prefix:?}: {values}");
    }
    let all = complete(&mut mcp, "");
    assert!(!all.to_string().contains("Cmpl3tion"), "{all}");
    assert!(all.to_string().contains("plain-choice"), "{all}");
    let (status, _, err) = mcp.finish();
    assert!(status.success(), "{err}");
}

#[test]
fn blame_lines_are_redacted_as_the_whole_file_reads() {
    let repo = scratch_repo();
    let dir = repo.path();
    // A block scalar: the key and its value are on two lines, which blame hands out apart.
    write(
        dir,
        "config/app.yml",
        b"production:\n  password: |\n    BlockScalarSecret-58fj3kd\n  host: db.internal\n",
    );
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "config"]);
    let mut three = Three::new(dir);
    for input in [
        json!({"path": "config/app.yml"}),
        json!({"path": "config/app.yml", "rev": "HEAD"}),
        json!({"path": "config/app.yml", "start": 3, "limit": 1}),
    ] {
        let answer = three.ok("repo.blame", input.clone());
        let text = answer.to_string();
        assert!(!text.contains("BlockScalarSecret"), "{input}: {text}");
        assert!(text.contains("[REDACTED]"), "{input}: {text}");
        if input.get("start").is_none() {
            assert!(text.contains("db.internal"), "the other lines stay: {text}");
        }
    }
    three.finish();
}

#[test]
fn diff_hunks_are_redacted_as_the_file_reads() {
    let repo = scratch_repo();
    let dir = repo.path();
    let config = "production:\n  password: |\n    BlockScalarSecret-58fj3kd\n  api_token:\n    NextLineToken-kd8833ls\n  host: db.internal\n";
    write(dir, "config/app.yml", config.as_bytes());
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "config"]);
    // A change beside the secrets: the hunk's context carries them.
    write(
        dir,
        "config/app.yml",
        config.replace("db.internal", "db.other").as_bytes(),
    );
    let mut three = Three::new(dir);
    for (id, input) in [
        ("repo.diff", json!({})),
        ("repo.diff", json!({"from": "HEAD~1", "to": "HEAD"})),
        ("repo.show", json!({"rev": "HEAD", "patch": true})),
    ] {
        let answer = three.ok(id, input.clone());
        let text = answer.to_string();
        assert!(!text.contains("BlockScalarSecret"), "{id} {input}: {text}");
        assert!(!text.contains("NextLineToken"), "{id} {input}: {text}");
        assert!(text.contains("[REDACTED]"), "{id} {input}: {text}");
        assert!(
            answer["redactions"].as_u64().unwrap() >= 2,
            "{id} {input}: {text}"
        );
    }
    three.finish();
}
