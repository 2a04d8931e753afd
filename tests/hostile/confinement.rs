//! Hostile confinement: see main.rs.
