//! MCP: the dual-era JSON-RPC projection over stdio and Streamable HTTP (see issue 3).
//!
//! **Architecture invariant:** only this module knows JSON-RPC. [`model`] holds the typed
//! requests, results and errors; [`dispatch`] sorts each message into its era and finds its
//! method in one table; [`methods`] answers them, one module per feature; [`stdio`] and the
//! Streamable HTTP binding ([`streamable`], which also gives each answer its HTTP status) only
//! move bytes. Tools, resources, prompts and completions run through [`seneschal_core::execute`], and
//! `tools/list` is the build's bytes for the profile and era.

pub mod dispatch;
pub mod feature;
pub mod inspect;
pub mod json;
pub mod link;
pub mod live;
pub mod methods;
pub mod model;
pub mod mrtr;
pub mod peer;
pub mod sse;
pub mod stdio;
pub mod streamable;
pub mod tasks;
pub mod wire;

use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;

use seneschal_core::context::Context;
use seneschal_model::codes::ErrorCode;
use seneschal_model::policy::Effect;

/// What `seneschal mcp` serves with (parsed from argv by `crate::cli`).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The strongest effect listed and executed.
    pub max_effect: Effect,
    /// The toolsets listed and executed (`--toolsets`).
    pub toolsets: seneschal_model::toolset::Toolsets,
    /// What a call that needs approval meets when the client cannot be asked.
    pub approval: seneschal_core::interact::ApprovalPolicy,
    /// How long a write waits on the approval desk under `ask` (`--approval-timeout`).
    pub approval_timeout: std::time::Duration,
    /// The schema dialect of `tools/list` and of the arguments of calls (`--schema-dialect`).
    pub schema_dialect: Option<seneschal_model::dialect::Dialect>,
}

/// Serves MCP over this process's stdin and stdout for `repo` until end of input; the exit
/// code is success at end of input or a closed output, `internal` when stdio fails.
pub fn serve_stdio(repo: PathBuf, options: &Options) -> ExitCode {
    let mut ctx = Context::new(repo, options.max_effect)
        .with_toolsets(options.toolsets)
        .with_approval(options.approval)
        .with_desk(options.approval_timeout);
    ctx.schema_dialect = options.schema_dialect;
    eprintln!(
        "seneschal mcp: serving {} over stdio (--allow-effects {}, --toolsets {}, --approval {})",
        ctx.repo.display(),
        options.max_effect.as_str(),
        options.toolsets.spelling(),
        options.approval.as_str()
    );
    // Answers go to a file of their own on stdout's descriptor: `std::io::Stdout` is line
    // buffered, and scans every write for its last newline (a 69 KiB `tools/list` read
    // backwards in full) when the transport's own buffer already decides when to write.
    let stdout = std::io::stdout();
    widen_pipe(&stdout);
    let served = match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => stdio::serve(
            &ctx,
            std::io::stdin(),
            std::fs::File::from(fd),
            stdio::MAX_LINE,
        ),
        Err(_) => stdio::serve(&ctx, std::io::stdin(), stdout, stdio::MAX_LINE),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error[internal]: stdio failed: {e}");
            ExitCode::from(ErrorCode::Internal.exit_code())
        }
    }
}

/// The most a pipe on stdout is widened to.
const PIPE_SIZE: usize = seneschal_access::limits::MCP_STDIO_PIPE;

/// Widens stdout to [`PIPE_SIZE`] when it is a pipe: a large answer (a log, a blame, a patch:
/// hundreds of KiB) is then written in one call the reader takes in one read, instead of 64 KiB
/// at a time with both sides woken between. The kernel gives the pages as bytes come, so an
/// idle pipe costs nothing more. Anything else (a file, a socket, a pipe past the system's
/// limit) is left as it is.
fn widen_pipe(stdout: &std::io::Stdout) {
    if rustix::pipe::fcntl_getpipe_size(stdout).is_ok_and(|size| size < PIPE_SIZE) {
        let _ = rustix::pipe::fcntl_setpipe_size(stdout, PIPE_SIZE);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_stdio_line_and_page_are_the_limits_table_s() {
        assert_eq!(super::stdio::MAX_LINE, seneschal_access::limits::STDIO_LINE);
        assert_eq!(super::model::PAGE, seneschal_access::limits::PAGE_ITEMS);
    }
}
