//! The shapes of a secret an attacker tried against `files.read` (issue 26, item 4) through the
//! built binary: values holding `;`, `&`, `)`, `<` or an escaped quote, a value starting with
//! `$`, YAML block scalars, values on the next line, token shapes glued to a word. Every one is
//! `[REDACTED]` in `files.read`, and `files.search` finds no part of any of them; placeholders
//! and prose are read as they are. The rules' own table is `redact::tests::variant_rows`.

use serde_json::json;

use crate::support::{call, json, scratch_repo};

/// The planted file, what `files.read` answers for it, and the secrets it holds.
fn planted() -> (String, String, Vec<String>) {
    // Built here, so no source file holds a token.
    let gh = format!("ghp_{}", "Vr7q".repeat(9));
    let gh2 = format!("ghp_{}", "Kt4w".repeat(9));
    let sk = format!("sk-{}", "Pz8m".repeat(6));
    let aws = format!("AKIA{}", "Q3ZK7TVB2MXN4RPL");
    let text = format!(
        "password=ab;cd&ef)gh<ij\n\
         \"password\": \"ab\\\"cd-Q1\"\n\
         DB_PASSWORD='x;y&z'\n\
         password=$ecretPa55word\n\
         password => 'arrow;Secret-95'\n\
         ids: x{gh} MY_{gh2} key{aws} glued{sk}\n\
         db:\n  password: |\n    blockSecret-91\n  token: >-\n    folded-Secret-92\n\
         \x20 secret:\n    nextLine-Secret-93\n\
         {{\n  \"api_key\":\n    \"jsonNext;Secret-94\"\n}}\n\
         kept: password=$DB_PASSWORD token: none yet\n"
    );
    let read = "password=[REDACTED]\n\
         \"password\": \"[REDACTED]\"\n\
         DB_PASSWORD='[REDACTED]'\n\
         password=[REDACTED]\n\
         password => '[REDACTED]'\n\
         ids: x[REDACTED] MY_[REDACTED] key[REDACTED] glued[REDACTED]\n\
         db:\n  password: |\n    [REDACTED]\n  token: >-\n    [REDACTED]\n\
         \x20 secret:\n    [REDACTED]\n\
         {\n  \"api_key\":\n    \"[REDACTED]\"\n}\n\
         kept: password=$DB_PASSWORD token: none yet\n"
        .to_string();
    let secrets = [
        "ab;cd&ef)gh<ij",
        "ab\\\"cd-Q1",
        "x;y&z",
        "$ecretPa55word",
        "arrow;Secret-95",
        "blockSecret-91",
        "folded-Secret-92",
        "nextLine-Secret-93",
        "jsonNext;Secret-94",
    ]
    .map(String::from)
    .into_iter()
    .chain([gh, gh2, aws, sk])
    .collect();
    (text, read, secrets)
}

#[test]
fn every_variant_of_a_secret_is_redacted_by_files_read_and_hidden_from_files_search() {
    let repo = scratch_repo();
    let (text, read, secrets) = planted();
    std::fs::write(repo.path().join("variants.txt"), &text).unwrap();

    let v = json(&call(
        repo.path(),
        "files.read",
        json!({"path": "variants.txt"}),
    ));
    let content = v["content"].as_str().expect("a content");
    for secret in &secrets {
        assert!(text.contains(secret.as_str()), "{secret} is planted");
        assert!(!content.contains(secret.as_str()), "{secret} in {content}");
    }
    assert_eq!(content, read);
    assert_eq!(v["redactions"], secrets.len(), "{v}");

    // A pattern for a part of every secret (marker-blind, so only the lines it matches are
    // redacted) and one that is not: neither finds any of them.
    for pattern in [
        r"Secret-9|ecretPa55|ab;cd|x;y|cd-Q1|Vr7q|Kt4w|Pz8m|Q3ZK7",
        r"(?i)\bsecret-9\d\b|[;&]",
    ] {
        let v = json(&call(
            repo.path(),
            "files.search",
            json!({"pattern": pattern, "glob": "variants.txt"}),
        ));
        assert_eq!(v["matches"], json!([]), "{pattern}: {v}");
    }
}
