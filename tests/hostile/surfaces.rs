//! Hostile surfaces: see main.rs.
