//! `files.list` through the built binary on scratch repositories, each answer compared over the
//! CLI, MCP stdio and HTTP: entries with kind and size, the ignore rules `files.search`
//! honours, `.git` and secret-bearing names left out, links listed and never followed, and the
//! folder confined like every repository path.

use crate::support;
use std::path::Path;

use crate::support::http::{http_call, Serve};
use crate::support::mcp::Mcp;
use crate::support::{json, run_in, scratch_repo, stderr};
use serde_json::{json, Value};

struct Three<'a> {
    dir: &'a Path,
    mcp: Mcp,
    http: Serve,
}

impl<'a> Three<'a> {
    fn new(dir: &'a Path) -> Three<'a> {
        let mut mcp = Mcp::start_with(dir, &[], &[]);
        mcp.initialize("2025-11-25");
        Three {
            dir,
            mcp,
            http: Serve::start(dir, &[]),
        }
    }

    fn ok(&mut self, input: Value) -> Value {
        let cli = run_in(
            self.dir,
            &["call", "files.list", "--input", &input.to_string()],
        );
        assert!(cli.status.success(), "{input}: {}", stderr(&cli));
        let answer = json(&cli);
        let r = self.mcp.request(
            "tools/call",
            json!({"name": "files_list", "arguments": input.clone()}),
        );
        assert_eq!(r["result"]["structuredContent"], answer, "MCP vs CLI: {r}");
        let (status, body) = http_call(&self.http, "GET", "/api/v1/files/list", &input);
        assert_eq!((status, &body), (200, &answer), "HTTP vs CLI");
        answer
    }

    fn err(&mut self, input: Value, code: &str) -> String {
        let cli = run_in(
            self.dir,
            &["call", "files.list", "--input", &input.to_string()],
        );
        let text = stderr(&cli);
        assert!(text.contains(&format!("error[{code}]")), "{input}: {text}");
        let r = self.mcp.request(
            "tools/call",
            json!({"name": "files_list", "arguments": input.clone()}),
        );
        assert_eq!(r["result"]["_meta"]["seneschal/error"]["code"], code, "{r}");
        let (_, body) = http_call(&self.http, "GET", "/api/v1/files/list", &input);
        assert_eq!(body["code"], code, "{body}");
        text
    }

    fn finish(self) {
        let (status, _, err) = self.mcp.finish();
        assert!(status.success(), "{err}");
        self.http.finish();
    }
}

fn names(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn entries_leave_out_what_files_search_leaves_out() {
    let repo = scratch_repo();
    let dir = repo.path();
    let w = |p: &str, text: &str| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(".gitignore", "build/\n*.log\n");
    w("src/main.rs", "fn main() {}\n");
    w("src/lib.rs", "");
    w("src/notes.md", "notes\n");
    w("src/debug.log", "ignored by *.log\n");
    w("src/.ignore", "private.rs\n");
    w("src/private.rs", "ignored by src/.ignore\n");
    w("build/out.bin", "ignored folder\n");
    w(".env", "API=1\n");
    w("id_rsa", "key\n");
    w(".git/info/exclude", "excluded.txt\n");
    w("excluded.txt", "excluded\n");
    std::os::unix::fs::symlink("src/main.rs", dir.join("link.rs")).unwrap();
    let mut t = Three::new(dir);

    let root = t.ok(json!({}));
    assert_eq!(root["path"], "");
    assert_eq!(
        names(&root),
        [".gitignore", "README.md", "link.rs", "src"],
        "{root}"
    );
    let by_name = |v: &Value, n: &str| -> Value {
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        by_name(&root, "README.md"),
        json!({"name": "README.md", "path": "README.md", "kind": "file", "size": 10})
    );
    assert_eq!(by_name(&root, "src")["kind"], "dir");
    assert_eq!(by_name(&root, "src")["size"], Value::Null);
    assert_eq!(by_name(&root, "link.rs")["kind"], "symlink");

    let src = t.ok(json!({"path": "src"}));
    assert_eq!(
        names(&src),
        [".ignore", "lib.rs", "main.rs", "notes.md"],
        "{src}"
    );
    assert_eq!(by_name(&src, "main.rs")["path"], "src/main.rs");
    assert_eq!(by_name(&src, "lib.rs")["size"], 0);

    // The glob, as files.search takes it; the limit.
    let rs = t.ok(json!({"path": "src", "glob": "*.rs"}));
    assert_eq!(names(&rs), ["lib.rs", "main.rs"]);
    let one = t.ok(json!({"path": "src", "limit": 1}));
    assert_eq!(names(&one), [".ignore"]);
    assert_eq!(one["truncated"], true);
    assert_eq!(src["truncated"], false);

    // An ignored folder has no entry to show.
    let build = t.ok(json!({"path": "build"}));
    assert_eq!(build["entries"], json!([]));
    // And files.search agrees on what is searchable in src/.
    let search = support::json(&run_in(
        dir,
        &[
            "call",
            "files.search",
            "--input",
            &json!({"pattern": "ignored"}).to_string(),
        ],
    ));
    assert_eq!(search["matches"], json!([]), "{search}");

    t.err(json!({"path": ".git"}), "refused");
    t.err(json!({"path": "../"}), "refused");
    t.err(json!({"path": "nowhere"}), "not_found");
    t.err(json!({"path": "README.md"}), "invalid_input");
    t.err(json!({"glob": "src/["}), "invalid_input");
    t.finish();
}

#[test]
fn a_link_out_of_the_repository_is_refused_and_a_link_inside_is_followed() {
    let repo = scratch_repo();
    let dir = repo.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("outside-secret.txt"), "x").unwrap();
    std::fs::create_dir(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/a.md"), "a").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("out")).unwrap();
    std::os::unix::fs::symlink("docs", dir.join("docs-link")).unwrap();
    let mut t = Three::new(dir);
    let why = t.err(json!({"path": "out"}), "refused");
    assert!(why.contains("symlink_escape"), "{why}");
    assert!(!why.contains("outside-secret"), "{why}");
    let inside = t.ok(json!({"path": "docs-link"}));
    assert_eq!(names(&inside), ["a.md"]);
    assert_eq!(inside["entries"][0]["path"], "docs-link/a.md");
    t.finish();
}
