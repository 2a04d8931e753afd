//! Full-text search: BM25 over a weighted bag of words per object (title ×3, tags and id ×2,
//! description ×1.5, body ×1), with a small tokenizer and a tiny English suffix stemmer.
//!
//! Written here rather than borrowed: a search library would cost more build time than this
//! whole layer, and the corpus (a repository's documents) fits in memory many times over.

use std::collections::HashMap;
use std::sync::Arc;

use super::Object;

/// BM25 term-frequency saturation.
const K1: f32 = 1.2;
/// BM25 length normalisation.
const B: f32 = 0.75;
/// Field weights.
const W_TITLE: f32 = 3.0;
const W_TAGS: f32 = 2.0;
const W_DESCRIPTION: f32 = 1.5;
const W_BODY: f32 = 1.0;

/// Words too common to carry meaning.
fn is_stop(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "do"
            | "for"
            | "from"
            | "how"
            | "i"
            | "if"
            | "in"
            | "is"
            | "it"
            | "of"
            | "on"
            | "or"
            | "that"
            | "the"
            | "this"
            | "to"
            | "was"
            | "what"
            | "when"
            | "with"
    )
}

/// Strips a few English suffixes so that `caching`, `cached`, `caches` and `cache` meet.
fn stem(w: &mut String) {
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.len() > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
    {
        w.truncate(w.len() - 1);
    }
    if w.len() > 5 && w.ends_with("ing") {
        w.truncate(w.len() - 3);
    } else if w.len() > 4 && w.ends_with("ed") {
        w.truncate(w.len() - 2);
    }
    if w.len() > 4 && w.ends_with('e') {
        w.truncate(w.len() - 1);
    }
}

/// Calls `f` with each normalised term of `text`: lower case, split on anything that is not a
/// letter or digit, stop words dropped, stemmed.
pub fn terms(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    let mut emit = |buf: &mut String| {
        if !buf.is_empty() && buf.len() <= 64 && !is_stop(buf) {
            stem(buf);
            f(buf);
        }
        buf.clear();
    };
    if text.is_ascii() {
        // The common case, byte by byte.
        for &b in text.as_bytes() {
            if b.is_ascii_alphanumeric() {
                buf.push(b.to_ascii_lowercase() as char);
            } else {
                emit(&mut buf);
            }
        }
    } else {
        for c in text.chars() {
            if c.is_alphanumeric() {
                buf.extend(c.to_lowercase());
            } else {
                emit(&mut buf);
            }
        }
    }
    emit(&mut buf);
}

/// FNV-1a: a fast hash for short words (the dictionary is built from the repository, and a
/// collision only costs time).
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf29ce484222325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        self.0 = h;
    }
}

type Dict = HashMap<String, u32, std::hash::BuildHasherDefault<Fnv>>;

/// An inverted index over every object of a snapshot.
#[derive(Debug, Default)]
pub struct SearchIndex {
    dict: Dict,
    /// Per term: (object index, weighted term frequency).
    postings: Vec<Vec<(u32, f32)>>,
    lengths: Vec<f32>,
    average: f32,
}

impl SearchIndex {
    /// Indexes `objects` (their order is the object index).
    pub fn build(objects: &[Arc<Object>]) -> SearchIndex {
        // Large corpora are indexed in parts on every core, then merged; the parts hold
        // consecutive objects, so merged postings stay sorted by object.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        if objects.len() < 512 || threads < 2 {
            let mut ix = SearchIndex::default();
            ix.add_all(objects, 0);
            return ix.finish();
        }
        let chunk = objects.len().div_ceil(threads);
        let parts: Vec<SearchIndex> = std::thread::scope(|scope| {
            let workers: Vec<_> = objects
                .chunks(chunk)
                .enumerate()
                .map(|(i, part)| {
                    scope.spawn(move || {
                        let mut ix = SearchIndex::default();
                        ix.add_all(part, (i * chunk) as u32);
                        ix
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("a search indexer panicked"))
                .collect()
        });
        let mut parts = parts.into_iter();
        let mut ix = parts.next().unwrap_or_default();
        for part in parts {
            let mut ids: Vec<(u32, String)> =
                part.dict.into_iter().map(|(t, id)| (id, t)).collect();
            ids.sort_unstable_by_key(|(id, _)| *id);
            for ((_, term), list) in ids.into_iter().zip(part.postings) {
                let id = match ix.dict.get(term.as_str()) {
                    Some(&id) => id,
                    None => {
                        let id = ix.postings.len() as u32;
                        ix.dict.insert(term, id);
                        ix.postings.push(Vec::new());
                        id
                    }
                };
                ix.postings[id as usize].extend(list);
            }
            ix.lengths.extend(part.lengths);
        }
        ix.finish()
    }

    /// Indexes `objects`, the first of which is object number `first`.
    fn add_all(&mut self, objects: &[Arc<Object>], first: u32) {
        let mut bag: Vec<(u32, f32)> = Vec::new();
        for (offset, o) in objects.iter().enumerate() {
            let doc = first + offset as u32;
            bag.clear();
            let mut add = |text: &str, w: f32, ix: &mut SearchIndex| {
                terms(text, |t| {
                    let id = match ix.dict.get(t) {
                        Some(&id) => id,
                        None => {
                            let id = ix.postings.len() as u32;
                            ix.dict.insert(t.to_string(), id);
                            ix.postings.push(Vec::new());
                            id
                        }
                    };
                    bag.push((id, w));
                });
            };
            add(&o.title, W_TITLE, self);
            add(&o.id, W_TAGS, self);
            for tag in &o.tags {
                add(tag, W_TAGS, self);
            }
            add(&o.description, W_DESCRIPTION, self);
            add(o.body(), W_BODY, self);
            bag.sort_unstable_by_key(|(t, _)| *t);
            let mut length = 0.0;
            let mut i = 0;
            while i < bag.len() {
                let term = bag[i].0;
                let mut tf = 0.0;
                while i < bag.len() && bag[i].0 == term {
                    tf += bag[i].1;
                    i += 1;
                }
                length += tf;
                self.postings[term as usize].push((doc, tf));
            }
            self.lengths.push(length);
        }
    }

    /// Computes the average length once every object is in.
    fn finish(mut self) -> SearchIndex {
        let n = self.lengths.len().max(1) as f32;
        self.average = (self.lengths.iter().sum::<f32>() / n).max(1.0);
        for list in &mut self.postings {
            list.shrink_to_fit();
        }
        self
    }

    /// The distinct terms of a query that the corpus knows nothing of are harmless; a query
    /// with no term at all returns `None`.
    pub fn query_terms(query: &str) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        terms(query, |t| {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_string());
            }
        });
        (!out.is_empty()).then_some(out)
    }

    /// The best `limit` objects for `terms` among those `keep` accepts: (object index, score),
    /// best first; ties go to the lower index (the lower URI).
    pub fn search(
        &self,
        terms: &[String],
        keep: impl Fn(usize) -> bool,
        limit: usize,
    ) -> Vec<(usize, f64)> {
        let n = self.lengths.len() as f32;
        // Dense accumulators: every score is positive, so zero means "not touched yet".
        let mut scores = vec![0f32; self.lengths.len()];
        let mut touched: Vec<u32> = Vec::new();
        for t in terms {
            let Some(&id) = self.dict.get(t.as_str()) else {
                continue;
            };
            let list = &self.postings[id as usize];
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let norm = K1 * (1.0 - B + B * self.lengths[doc as usize] / self.average);
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<(usize, f64)> = touched
            .into_iter()
            .filter(|d| keep(*d as usize))
            .map(|d| (d as usize, scores[d as usize] as f64))
            .collect();
        let by_rank = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, by_rank);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(by_rank);
        hits
    }
}

/// A short passage of `o` around the first line that holds a query term, else its description.
pub fn snippet(o: &Object, query: &[String]) -> String {
    for line in o.body().lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("```") {
            continue;
        }
        let mut hit = false;
        terms(line, |t| hit |= query.iter().any(|q| q == t));
        if hit {
            let line = line.trim_start_matches('#').trim();
            return super::parse::shorten(line, 200);
        }
    }
    super::parse::shorten(&o.description, 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        terms(text, |t| v.push(t.to_string()));
        v
    }

    #[test]
    fn inflections_meet() {
        assert_eq!(
            all("caching cached caches cache"),
            ["cach", "cach", "cach", "cach"]
        );
        assert_eq!(all("The Policies of policy"), ["policy", "policy"]);
        assert_eq!(
            all("build.rs, YAML-manifests!"),
            ["build", "rs", "yaml", "manifest"]
        );
    }

    #[test]
    fn stop_words_only_is_no_query() {
        assert!(SearchIndex::query_terms("the of and").is_none());
        assert_eq!(SearchIndex::query_terms("Cache caching").unwrap(), ["cach"]);
    }
}
