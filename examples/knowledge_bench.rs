//! Benchmark of the knowledge layer (not a test): 10,000 synthetic objects, cold index time,
//! the cost of a freshness check, `knowledge.search` latency and resident memory.
//!
//! Run: `cargo run --release --example knowledge_bench [-- OBJECTS [index|full] [mixed] [--json]]`.
//! `mixed` writes the ADRs in four formats (seneschal's, adr-tools, MADR, log4brains).
//! `index` measures the cold index only (one per process: run it several times); `full` (the
//! default) measures everything. Figures go to stdout as text, or with `--json` as one JSON
//! line, which `benches/suite.py` (the `knowledge` section) reads into docs/PERFORMANCE.md.

use std::path::Path;
use std::time::{Duration, Instant};

use seneschal::context::Context;
use seneschal::execute::{execute, Transport};
use seneschal::knowledge::{glob, search};
use seneschal::policy::Effect;

/// A deterministic pseudo-random sequence (a 64-bit LCG), so every run indexes the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// A skewed pick in `0..n`: small indices are far more common, as words are in prose.
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.next() as usize % n;
        let b = self.next() as usize % n;
        a.min(b)
    }
}

fn vocabulary() -> Vec<String> {
    let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sta", "ver", "dol", "pin", "tex", "gra", "bu", "fen", "qua",
        "zor",
    ];
    let mut words = Vec::new();
    for a in syllables {
        for b in syllables {
            for c in ["", "ion", "er", "al"] {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words
}

/// Writes the corpus: 7 guides in 10, the rest ADRs; with `mixed`, the ADRs rotate through
/// seneschal's front matter, adr-tools (Nygard), MADR front matter and log4brains bullets.
fn write_corpus(root: &Path, n: usize, words: &[String], mixed: bool) {
    let mut rng = Rng(42);
    std::fs::create_dir_all(root.join("docs/guides")).unwrap();
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    for i in 0..n {
        let sentence = |len: usize, rng: &mut Rng| -> String {
            (0..len)
                .map(|_| words[rng.skewed(words.len())].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let title = sentence(5, &mut rng);
        let tags = format!(
            "[{}, {}]",
            words[rng.skewed(40)],
            words[40 + rng.skewed(40)]
        );
        let mut body = String::new();
        for _ in 0..4 {
            body.push_str(&sentence(40, &mut rng));
            body.push_str(".\n\n");
        }
        if i % 10 < 7 {
            let text = format!(
                "---\ntitle: {title}\ntags: {tags}\nstatus: current\n---\n\n# {title}\n\n{body}"
            );
            std::fs::write(root.join(format!("docs/guides/guide-{i:05}.md")), text).unwrap();
        } else if !mixed || i % 4 == 0 {
            let text = format!("---\ntitle: {title}\nstatus: accepted\ndate: 2026-11-30\ntags: {tags}\n---\n\n{body}");
            std::fs::write(root.join(format!("docs/adr/{i:05}-record.md")), text).unwrap();
        } else {
            let (name, text) = match i % 4 {
                1 => (
                    format!("{i:05}-record.md"),
                    format!("# {}. {title}\n\nDate: 2026-11-30\n\n## Status\n\nAccepted\n\n## Context\n\n{body}", i),
                ),
                2 => (
                    format!("{i:05}-record.md"),
                    format!("---\nstatus: accepted\ndate: 2026-11-30\nnav_order: {i}\nparent: Decisions\n---\n# {title}\n\n## Context and Problem Statement\n\n{body}"),
                ),
                _ => (
                    format!("20261130-record-{i:05}.md"),
                    format!("# {title}\n\n- Status: accepted\n- Date: 2026-11-30\n\n## Context and Problem Statement\n\n{body}"),
                ),
            };
            std::fs::write(root.join(format!("docs/adr/{name}")), text).unwrap();
        }
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// CPU time of the whole process (user + system, every thread) in milliseconds, from
/// /proc/self/stat (10 ms ticks): wall clocks lie on a shared machine, CPU time less so.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks * 10.0
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .filter_map(|v| v.parse().ok())
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let json = args.iter().any(|a| a == "--json");
    let index_only = args.iter().any(|a| a == "index");
    let mixed = args.iter().any(|a| a == "mixed");
    // KNOWLEDGE_BENCH_DIR keeps the corpus between runs (for profiling the index alone).
    let dir = tempfile::tempdir().expect("a temp dir");
    let kept = std::env::var_os("KNOWLEDGE_BENCH_DIR").map(std::path::PathBuf::from);
    let root = kept.as_deref().unwrap_or(dir.path());
    let words = vocabulary();
    if !root.join("docs").exists() {
        write_corpus(root, n, &words, mixed);
    }
    let bytes: u64 = ["docs/guides", "docs/adr"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();

    let rss_before = rss_kib();
    let ctx = Context::new(root.to_path_buf(), Effect::Read);
    let (t, c) = (Instant::now(), cpu_ms());
    let snapshot = ctx.knowledge.snapshot(root);
    let cold = t.elapsed();
    let cold_cpu = cpu_ms() - c;
    let rss_after = rss_kib();
    if index_only {
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "mode": "index",
                    "objects": snapshot.objects.len(),
                    "findings": snapshot.findings.len(),
                    "bytes": bytes,
                    "cold_wall_ms": ms(cold),
                    "cold_cpu_ms": cold_cpu,
                    "rss_before_kib": rss_before,
                    "rss_after_kib": rss_after,
                    "load": load_average(),
                })
            );
        } else {
            println!("cold index {:.1} ms wall, {cold_cpu:.0} ms CPU", ms(cold));
        }
        return;
    }
    assert_eq!(
        snapshot.objects.len(),
        n,
        "findings: {:?}",
        &snapshot.findings[..snapshot.findings.len().min(3)]
    );

    // The parts of a cold index, measured apart: listing and stamping the files, and the
    // search index, which is built on the first search.
    let t = Instant::now();
    let mut found = Vec::new();
    let handle = seneschal::rootfs::Root::open(root).expect("the corpus opens");
    glob::expand(&handle, root, "docs/guides/*.md", &mut found);
    glob::expand(&handle, root, "docs/adr/*.md", &mut found);
    let stamps = found.iter().filter(|c| c.stamp.is_some()).count();
    let listing = t.elapsed();
    assert_eq!(stamps, n);
    let (t, c) = (Instant::now(), cpu_ms());
    let _ = snapshot.search();
    let search_build = t.elapsed();
    let search_cpu = cpu_ms() - c;
    let rss_search = rss_kib();

    // A freshness check on an unchanged tree: re-list the folders, compare every stamp.
    let c = cpu_ms();
    let mut fresh: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let _ = ctx.knowledge.snapshot(root);
            t.elapsed()
        })
        .collect();
    let fresh_cpu = (cpu_ms() - c) / 20.0;

    // One edit: only that file is read again, then the snapshot is reassembled.
    let edited = root.join("docs/guides/guide-00000.md");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\nOne more line.\n");
    std::fs::write(&edited, text).unwrap();
    let t = Instant::now();
    let _ = ctx.knowledge.snapshot(root);
    let after_edit = t.elapsed();

    // Queries: two or three words of the vocabulary, common and rare.
    let mut rng = Rng(7);
    let queries: Vec<String> = (0..1000)
        .map(|i| {
            let k = 2 + i % 2;
            (0..k)
                .map(|_| words[rng.next() as usize % words.len()].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut full: Vec<Duration> = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let answer = execute(
            &ctx,
            "knowledge.search",
            serde_json::json!({ "query": q }),
            Transport::Cli,
        )
        .unwrap();
        full.push(t.elapsed());
        std::hint::black_box(answer);
    }
    let snapshot = ctx.knowledge.snapshot(root);
    let mut core: Vec<Duration> = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let terms = search::SearchIndex::query_terms(q).unwrap();
        let hits = snapshot.search().search(&terms, |_| true, 10);
        let snippets: Vec<String> = hits
            .iter()
            .map(|(i, _)| search::snippet(&snapshot.objects[*i], &terms))
            .collect();
        core.push(t.elapsed());
        std::hint::black_box(snippets);
    }

    if json {
        println!(
            "{}",
            serde_json::json!({
                "mode": "full",
                "objects": n,
                "bytes": bytes,
                "cold_wall_ms": ms(cold),
                "cold_cpu_ms": cold_cpu,
                "sweep_ms": ms(listing),
                "search_build_wall_ms": ms(search_build),
                "search_build_cpu_ms": search_cpu,
                "fresh_p50_ms": ms(percentile(&mut fresh, 0.5)),
                "fresh_cpu_ms": fresh_cpu,
                "edit_ms": ms(after_edit),
                "search_p50_ms": ms(percentile(&mut full, 0.5)),
                "search_p95_ms": ms(percentile(&mut full, 0.95)),
                "core_p50_ms": ms(percentile(&mut core, 0.5)),
                "core_p95_ms": ms(percentile(&mut core, 0.95)),
                "rss_before_kib": rss_before,
                "rss_after_kib": rss_after,
                "rss_search_kib": rss_search,
                "load": load_average(),
            })
        );
        return;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at the end:    {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "objects:                    {n} ({:.1} MiB of files)",
        bytes as f64 / 1048576.0
    );
    println!(
        "cold index:                 {:.1} ms wall, {cold_cpu:.0} ms CPU (all threads)",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "  of which the stamp sweep:  {:.1} ms (what every call costs without inotify)",
        listing.as_secs_f64() * 1e3
    );
    println!(
        "search index build:         {:.1} ms wall, {search_cpu:.0} ms CPU (on the first search)",
        search_build.as_secs_f64() * 1e3
    );
    println!(
        "freshness check, unchanged: p50 {:.2} ms wall, {fresh_cpu:.1} ms CPU on average",
        percentile(&mut fresh, 0.5).as_secs_f64() * 1e3
    );
    println!(
        "refresh after one edit:     {:.1} ms",
        after_edit.as_secs_f64() * 1e3
    );
    println!(
        "knowledge.search via execute (freshness check included): p50 {:.3} ms, p95 {:.3} ms",
        percentile(&mut full, 0.5).as_secs_f64() * 1e3,
        percentile(&mut full, 0.95).as_secs_f64() * 1e3
    );
    println!(
        "search + snippets on a snapshot:                          p50 {:.3} ms, p95 {:.3} ms",
        percentile(&mut core, 0.5).as_secs_f64() * 1e3,
        percentile(&mut core, 0.95).as_secs_f64() * 1e3
    );
    println!(
        "resident memory: {:.1} MiB before the index, {:.1} MiB after (+{:.1} MiB), {:.1} MiB with the search index",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0,
        rss_search as f64 / 1024.0
    );
}
