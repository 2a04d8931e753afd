//! Hostile http: see main.rs.
