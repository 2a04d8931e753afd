//! The hostile-repository and hostile-neighbour suite: a cloned repository with hostile content
//! (symlinks, FIFOs, hard links, planted secrets, a hostile `.seneschal/`) and an unprivileged
//! local process (filesystem races, trickling connections, kill -9), each attack driven through
//! the built binary over the command line, MCP stdio and HTTP. `docs/ROBUSTNESS.md` maps every
//! attack class to the test here that covers it.

mod audit;
mod confinement;
mod gate;
mod git;
mod http;
mod oracles;
mod redaction;
mod surfaces;
mod trees;
