//! Hostile redaction: see main.rs.
