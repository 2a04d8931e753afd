//! The knowledge layer: kinds, front-matter contracts, the index, search and findings
//! (see issue 4).
