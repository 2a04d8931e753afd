//! seneschal's integration tests: one test crate, linked once, driving the built binary over
//! its real transports (argv, MCP stdio pipes, loopback HTTP) as a user would. `support` holds
//! the one set of helpers (`support` for the command line and scratch repositories,
//! `support::mcp` for an MCP stdio client, `support::http` for an HTTP server process and raw
//! connections). Run one module with `cargo test --test it <module>::`, e.g.
//! `cargo test --test it hostile::`.

mod support;

mod add_capability;
mod approval;
mod barrage;
mod cli;
mod conformance;
mod contract;
mod desk;
mod dialects;
mod examples;
mod files_list;
mod files_writes;
mod foundation;
mod freshness;
mod git_resolver;
mod git_writes;
mod hostile;
mod http_server;
mod knowledge_formats;
mod knowledge_objects;
mod knowledge_search;
mod layering;
mod mcp_annotations;
mod mcp_cancel;
mod mcp_digest;
mod mcp_input;
mod mcp_live;
mod mcp_percall;
mod mcp_projection;
mod mcp_sse;
mod mcp_stdio;
mod mcp_tasks;
mod mcp_wire;
mod parity;
mod prompts;
mod prose;
mod published_schemas;
mod reads_more;
mod redaction_variants;
mod repo_examples;
mod repo_files;
mod repo_git;
mod repo_history;
mod repo_secrets;
mod repo_session;
mod rich_content;
mod toolsets;
mod worktrees;
mod writes_cli;
mod writes_transports;
