//! Hostile surfaces: a narrowed process (`--allow-effects read` or `process_state`) must not
//! advertise what it refuses, on any surface (OpenAPI, the MCP server card, the cockpit,
//! `mcp.projection` over HTTP and stdio, `tools/list`); and `mcp --inspect` calls a client
//! configuration wired only when its command resolves to this very binary, so a planted or
//! missing `seneschal` is never reported as working.
//!
//! Every check compares a surface with what the registry says the profile executes, for the
//! narrowed profiles and for the full one: removing the filter fails the narrowed checks,
//! filtering too much fails the full one.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::http::Serve;
use crate::support::mcp::Mcp;
use crate::support::{bin, scratch_repo};
use seneschal::policy::Effect;
use seneschal::registry::{Descriptor, CAPABILITIES};

const PROFILES: [&str; 3] = ["read", "process_state", "repository_write"];

fn effect(profile: &str) -> Effect {
    Effect::parse(profile).expect("an effect")
}

/// The capabilities a profile executes, by the registry (independently of any surface).
fn served(profile: &str) -> Vec<&'static Descriptor> {
    let max = effect(profile);
    CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect <= max)
        .collect()
}

/// The executable capabilities a profile refuses.
fn refused(profile: &str) -> Vec<&'static Descriptor> {
    let max = effect(profile);
    CAPABILITIES
        .iter()
        .filter(|d| d.executable() && d.effect > max)
        .collect()
}

fn set<'a>(items: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    items.into_iter().map(str::to_string).collect()
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array: {v}"))
        .iter()
        .map(|x| x[key].as_str().unwrap_or_else(|| panic!("{key} in {x}")))
        .collect()
}

/// No refused capability's id or tool name appears anywhere in `bytes`.
fn names_none_of(surface: &str, profile: &str, bytes: &str) {
    for d in refused(profile) {
        for name in std::iter::once(d.id).chain(d.mcp_tool) {
            assert!(
                !bytes.contains(name),
                "{surface} of --allow-effects {profile} names {name}, which it refuses"
            );
        }
    }
}

/// The surface island of the cockpit page.
fn cockpit_surface(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"surface\">";
    let start = html.find(open).expect("the cockpit holds its surface") + open.len();
    let end = start + html[start..].find("</script>").expect("closed");
    serde_json::from_str(&html[start..end]).expect("the surface is JSON")
}

#[test]
fn every_surface_lists_only_what_its_profile_executes() {
    let repo = scratch_repo();
    let mut digests = BTreeSet::new();
    for profile in PROFILES {
        let served = served(profile);
        let ids = set(served.iter().map(|d| d.id));
        let tools = set(served.iter().filter_map(|d| d.mcp_tool));
        let writers = set(served
            .iter()
            .filter(|d| d.effect == Effect::RepositoryWrite)
            .filter_map(|d| d.mcp_tool));
        let resources = set(served.iter().filter_map(|d| d.mcp_resource));
        let routed = set(served.iter().filter(|d| d.http.is_some()).map(|d| d.id));
        assert!(!tools.is_empty() && !routed.is_empty());
        if profile == "repository_write" {
            assert!(!writers.is_empty(), "the full profile has writers");
        } else {
            assert!(!refused(profile).is_empty(), "{profile} refuses something");
        }

        let s = Serve::start_args(repo.path(), &["--allow-effects", profile], &[]);

        // OpenAPI: exactly the routed capabilities the profile executes.
        let r = s.get("/openapi.json");
        assert_eq!(r.status, 200);
        let openapi = r.json();
        let mut operations = Vec::new();
        for ops in openapi["paths"].as_object().expect("paths").values() {
            for op in ops.as_object().expect("operations").values() {
                let e = op["x-seneschal-effect"].as_str().expect("an effect");
                assert!(effect(e) <= effect(profile), "{profile}: {op}");
                operations.push(op["operationId"].as_str().expect("an id"));
            }
        }
        assert_eq!(set(operations), routed, "OpenAPI of {profile}");
        assert_eq!(
            openapi["info"]["x-seneschal-allowed-effects"],
            json!(PROFILES[..=PROFILES.iter().position(|p| *p == profile).unwrap()])
        );
        names_none_of("/openapi.json", profile, &r.text());
        digests.insert(openapi["info"]["x-seneschal-digest"].clone().to_string());

        // The server card, at both its addresses.
        for path in ["/.well-known/mcp/server-card.json", "/mcp/server-card"] {
            let r = s.get(path);
            assert_eq!(r.status, 200);
            let card = r.json();
            assert_eq!(
                set(strings(&card["tools"], "name")),
                tools,
                "{path} of {profile}"
            );
            assert_eq!(
                set(strings(&card["_meta"]["seneschal/tools"], "name")),
                tools
            );
            assert_eq!(
                set(card["_meta"]["seneschal/writers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_str().unwrap())),
                writers
            );
            assert_eq!(set(strings(&card["resources"], "uri")), resources);
            names_none_of(path, profile, &r.text());
            digests.insert(card["_meta"]["seneschal/digest"].to_string());
        }

        // The cockpit: its capability table is the profile's surface.
        let r = s.get("/");
        assert_eq!(r.status, 200);
        let html = r.text();
        let surface = cockpit_surface(&html);
        let executable: Vec<&str> = surface["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["executable"] == true)
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(set(executable), ids, "cockpit of {profile}");
        names_none_of("/", profile, &html);

        // The registry's own catalogs list every capability, and call executable only what
        // this process executes.
        for path in ["/api/v1/capabilities", "/api/v1/capabilities/projections"] {
            let r = s.get(path);
            assert_eq!(r.status, 200, "{path}");
            let all = r.json();
            let all = all["capabilities"].as_array().expect("capabilities");
            assert_eq!(all.len(), CAPABILITIES.len(), "{path}");
            let executable = all
                .iter()
                .filter(|c| c["executable"] == true)
                .map(|c| c["id"].as_str().unwrap());
            assert_eq!(set(executable), ids, "{path} of {profile}");
        }

        // mcp.projection over HTTP.
        let r = s.get("/api/v1/mcp/projection");
        assert_eq!(r.status, 200);
        let http = r.json();
        assert_eq!(set(strings(&http["tools"], "name")), tools);
        assert_eq!(
            set(http["writers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())),
            writers
        );
        assert_eq!(set(strings(&http["resources"], "uri")), resources);
        names_none_of("mcp.projection over HTTP", profile, &r.text());
        drop(s);

        // mcp.projection and tools/list over stdio: the same answer as over HTTP.
        let mut mcp = Mcp::start_with(repo.path(), &["--allow-effects", profile], &[]);
        mcp.initialize("2025-11-25");
        let list = mcp.request("tools/list", json!({}));
        assert_eq!(set(strings(&list["result"]["tools"], "name")), tools);
        let call = mcp.request(
            "tools/call",
            json!({"name": "mcp_projection", "arguments": {}}),
        );
        let stdio = &call["result"]["structuredContent"];
        assert_eq!(stdio, &http, "stdio and HTTP answer alike for {profile}");
        names_none_of("mcp.projection over stdio", profile, &stdio.to_string());
    }
    // One binary, one contract: every profile announces the same digest.
    assert_eq!(digests.len(), 1, "{digests:?}");
}

#[test]
fn a_narrowed_page_is_its_own_and_cached_apart() {
    let repo = scratch_repo();
    let read = Serve::start_args(repo.path(), &["--allow-effects", "read"], &[]);
    let full = Serve::start_args(repo.path(), &[], &[]);
    for path in ["/openapi.json", "/mcp/server-card"] {
        let (a, b) = (read.get(path), full.get(path));
        assert_ne!(a.body, b.body, "{path}");
        let (ta, tb) = (a.header("etag").unwrap(), b.header("etag").unwrap());
        assert_ne!(ta, tb, "{path}: two documents, two ETags");
        // The full process's ETag does not validate the narrowed document.
        let r = read.request("GET", path, &[("If-None-Match", tb)], b"");
        assert_eq!(r.status, 200, "{path}");
        let r = read.request("GET", path, &[("If-None-Match", ta)], b"");
        assert_eq!(r.status, 304, "{path}");
    }
}

/// `seneschal mcp --inspect --json` in `dir` with `PATH` set to `path`.
fn inspect(dir: &Path, path: &str) -> Value {
    let o = Command::new(bin())
        .args(["mcp", "--inspect", "--json"])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("the binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// The state and detail of `.mcp.json` when its `seneschal` server runs `command mcp`.
fn claude_state(dir: &Path, path: &str, command: &str) -> (String, Value) {
    std::fs::write(
        dir.join(".mcp.json"),
        json!({"mcpServers": {"seneschal": {"command": command, "args": ["mcp"]}}}).to_string(),
    )
    .unwrap();
    let p = inspect(dir, path);
    let c = p["clients"][0].clone();
    assert_eq!(c["file"], ".mcp.json");
    (c["state"].as_str().unwrap().to_string(), c)
}

#[test]
fn inspect_calls_wired_only_the_command_that_is_this_binary() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let repo = scratch_repo();
    let dir = repo.path();
    let exe = bin().canonicalize().unwrap();
    let exe_str = exe.to_str().unwrap();
    let system = std::env::var("PATH").unwrap_or_default();

    // The binary's own absolute path: wired.
    let (state, c) = claude_state(dir, &system, exe_str);
    assert_eq!(state, "wired", "{c}");
    assert_eq!(c["fix"], Value::Null);

    // A command that does not exist, as a name or a path: not wired.
    for missing in [
        "seneschal-nonexistent",
        "/nonexistent/bin/seneschal",
        "./seneschal",
    ] {
        let (state, c) = claude_state(dir, &system, missing);
        assert_eq!(state, "unresolved", "{missing}: {c}");
        assert!(c["fix"].as_str().unwrap().contains(exe_str), "{c}");
    }

    // Another program that exists: not wired.
    let (state, c) = claude_state(dir, &system, "/bin/true");
    assert_eq!(state, "not_this_binary", "{c}");
    assert!(c["detail"].as_str().unwrap().contains("/bin/true"), "{c}");

    // The repository plants `./seneschal`: a symlink to another program, then a script.
    symlink("/bin/true", dir.join("seneschal")).unwrap();
    assert_eq!(
        claude_state(dir, &system, "./seneschal").0,
        "not_this_binary"
    );
    std::fs::remove_file(dir.join("seneschal")).unwrap();
    std::fs::write(dir.join("seneschal"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(dir.join("seneschal"), PermissionsExt::from_mode(0o755)).unwrap();
    assert_eq!(
        claude_state(dir, &system, "./seneschal").0,
        "not_this_binary"
    );
    // A repository-relative symlink to this binary is this binary.
    std::fs::remove_file(dir.join("seneschal")).unwrap();
    symlink(&exe, dir.join("seneschal")).unwrap();
    assert_eq!(claude_state(dir, &system, "./seneschal").0, "wired");

    // A bare `seneschal` is looked up on PATH, first match wins: a planted impostor first is
    // not this binary; this binary first is.
    let impostor = tempfile::tempdir().unwrap();
    std::fs::write(impostor.path().join("seneschal"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        impostor.path().join("seneschal"),
        PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let real = tempfile::tempdir().unwrap();
    symlink(&exe, real.path().join("seneschal")).unwrap();
    let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap().into_string().unwrap();
    let (state, c) = claude_state(dir, &path(&[impostor.path(), real.path()]), "seneschal");
    assert_eq!(state, "not_this_binary", "{c}");
    let (state, c) = claude_state(dir, &path(&[real.path(), impostor.path()]), "seneschal");
    assert_eq!(state, "wired", "{c}");
    // Not on PATH at all.
    let (state, c) = claude_state(
        dir,
        &path(&[impostor.path().join("none").as_path()]),
        "seneschal",
    );
    assert_eq!(state, "unresolved", "{c}");

    // A runner cannot be checked to start this binary.
    std::fs::write(
        dir.join(".mcp.json"),
        json!({"mcpServers": {"s": {"command": "/bin/true", "args": ["run", "--bin", "seneschal", "--", "mcp"]}}}).to_string(),
    )
    .unwrap();
    assert_eq!(
        inspect(dir, &system)["clients"][0]["state"],
        "not_this_binary"
    );

    // The terminal rendering names the state.
    let (_, _) = claude_state(dir, &system, "seneschal-nonexistent");
    let o = Command::new(bin())
        .args(["mcp", "--inspect"])
        .current_dir(dir)
        .output()
        .unwrap();
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = seneschal::mcp::inspect::human(&p);
    assert!(text.contains("unresolved"), "{text}");
}

/// `seneschal mcp --inspect --json` in `dir`, which must answer within `wait`.
fn inspect_within(dir: &Path, wait: std::time::Duration) -> Value {
    let mut cmd = Command::new(bin());
    cmd.args(["mcp", "--inspect", "--json"]).current_dir(dir);
    let o = crate::support::output_within(cmd, wait);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn inspect_reads_client_configurations_as_untrusted_files() {
    let repo = scratch_repo();
    let dir = repo.path();
    let wired = json!({"mcpServers": {"seneschal": {"command": bin(), "args": ["mcp"]}}});
    let state = |p: &Value, i: usize| {
        (
            p["clients"][i]["state"].as_str().unwrap().to_string(),
            p["clients"][i]["detail"].as_str().unwrap().to_string(),
        )
    };
    // A bound for a hang (a FIFO read waits for ever), not for a slow machine.
    let wait = std::time::Duration::from_secs(60);

    // A FIFO in place of .mcp.json: never opened for a blocking read.
    let fifo = Command::new("mkfifo")
        .arg(dir.join(".mcp.json"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());
    let (s, detail) = state(&inspect_within(dir, wait), 0);
    assert_eq!(s, "foreign", "{detail}");
    assert!(detail.contains("not a regular file"), "{detail}");
    std::fs::remove_file(dir.join(".mcp.json")).unwrap();

    // A symbolic link out of the repository, to a configuration that would be wired: refused.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("mcp.json"), wired.to_string()).unwrap();
    std::os::unix::fs::symlink(outside.path().join("mcp.json"), dir.join(".mcp.json")).unwrap();
    let (s, detail) = state(&inspect_within(dir, wait), 0);
    assert_eq!(s, "foreign", "{detail}");
    assert!(detail.contains("is not read"), "{detail}");
    std::fs::remove_file(dir.join(".mcp.json")).unwrap();
    // The same file inside the repository is read (so the refusal above is the link's).
    std::fs::write(dir.join(".mcp.json"), wired.to_string()).unwrap();
    assert_eq!(state(&inspect_within(dir, wait), 0).0, "wired");

    // A device through a link, and an oversized file: answered at once, never read whole.
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join(".gemini/settings.json")).unwrap();
    assert_eq!(state(&inspect_within(dir, wait), 2).0, "foreign");
    std::fs::remove_file(dir.join(".gemini/settings.json")).unwrap();
    let f = std::fs::File::create(dir.join(".gemini/settings.json")).unwrap();
    f.set_len(64 * 1024 * 1024).unwrap();
    let (s, detail) = state(&inspect_within(dir, wait), 2);
    assert_eq!(s, "foreign", "{detail}");
    assert!(detail.contains("size_cap"), "{detail}");
}
