//! Hostile audit: see main.rs.
