//! The vendored regex-syntax answers as upstream's does (../regex-syntax/PATCHES.md): exits 1
//! at the first difference.

use std::process::ExitCode;

/// The quoted strings of the `match` arms (`"name" =>`) of one of the patched tables.
fn arms(table: &str) -> impl Iterator<Item = &str> {
    table.lines().filter_map(|l| {
        let l = l.trim_start();
        let rest = l.strip_prefix('"')?;
        let (name, after) = rest.split_once('"')?;
        after.trim_start().starts_with("=>").then_some(name)
    })
}

fn folded_upstream(s: char, e: char) -> Vec<(char, char)> {
    let mut c = upstream::hir::ClassUnicode::new([upstream::hir::ClassUnicodeRange::new(s, e)]);
    c.case_fold_simple();
    c.iter().map(|r| (r.start(), r.end())).collect()
}

fn folded_patched(s: char, e: char) -> Vec<(char, char)> {
    let mut c = patched::hir::ClassUnicode::new([patched::hir::ClassUnicodeRange::new(s, e)]);
    c.case_fold_simple();
    c.iter().map(|r| (r.start(), r.end())).collect()
}

fn main() -> ExitCode {
    let mut folding = 0;
    for c in (0u32..=0x10FFFF).filter_map(char::from_u32) {
        let (a, b) = (folded_upstream(c, c), folded_patched(c, c));
        if a != b {
            eprintln!("case folding of {c:?}: upstream {a:?}, patched {b:?}");
            return ExitCode::FAILURE;
        }
        folding += usize::from(a != [(c, c)]);
    }
    for (s, e) in [(0, 0x10FFFF), (0x41, 0x5A), (0x100, 0x24F), (0x370, 0x3FF), (0x10400, 0x1044F)] {
        let (s, e) = (char::from_u32(s).unwrap(), char::from_u32(e).unwrap());
        if folded_upstream(s, e) != folded_patched(s, e) {
            eprintln!("case folding of {s:?}-{e:?} differs");
            return ExitCode::FAILURE;
        }
    }
    let tables = [
        include_str!("../../regex-syntax/src/unicode_tables/property_names.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/property_values.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/general_category.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/script.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/script_extension.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/property_bool.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/grapheme_cluster_break.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/word_break.rs"),
        include_str!("../../regex-syntax/src/unicode_tables/sentence_break.rs"),
    ];
    let names: Vec<&str> = tables.iter().flat_map(|t| arms(t)).collect();
    let props = ["gc", "sc", "scx", "age", "gcb", "wb", "sb", "Alphabetic", "nope"];
    let mut patterns: Vec<String> = Vec::new();
    for n in &names {
        patterns.extend([format!(r"\p{{{n}}}"), format!(r"\P{{{n}}}"), format!(r"(?i)\p{{{n}}}")]);
        patterns.extend(props.iter().map(|p| format!(r"\p{{{p}={n}}}")));
    }
    patterns.extend([r"\w", r"\d", r"\s", r"(?i)\w", r"(?i)straße", r"\p{Any}", r"\p{Assigned}"].map(String::from));
    let (mut ok, mut refused) = (0, 0);
    for p in &patterns {
        let a = upstream::ParserBuilder::new().build().parse(p).map(|h| format!("{h:?}")).map_err(|e| e.to_string());
        let b = patched::ParserBuilder::new().build().parse(p).map(|h| format!("{h:?}")).map_err(|e| e.to_string());
        if a != b {
            eprintln!("{p}: upstream {a:?}, patched {b:?}");
            return ExitCode::FAILURE;
        }
        if a.is_ok() { ok += 1 } else { refused += 1 }
    }
    println!(
        "regex-syntax as vendored answers as upstream: {folding} characters that fold, {} names, {ok} patterns parsed and {refused} refused alike",
        names.len()
    );
    ExitCode::SUCCESS
}
