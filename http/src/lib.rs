//! HTTP: the loopback API, OpenAPI, Swagger UI, server card and cockpit (see issue 12).
//!
//! **Architecture invariant:** only this module knows HTTP. Every capability route reaches
//! [`seneschal_core::execute::execute_index`], the one executor the CLI and MCP reach too; nothing here
//! calls a handler or knows a capability by name.
//!
//! The server is tiny_http (vendored with the fixes listed in `vendor/tiny_http/PATCHES.md`;
//! its `serve` is seneschal's own connection loop) on a listener seneschal builds itself:
//! `TCP_NODELAY` and the timeouts are set on the listening socket, and Linux copies them onto
//! every accepted socket. Each connection is read on a thread of its own, at most
//! [`Options::max_connections`] at once; it reads a request's head and whole body (at most
//! [`Options::max_body`]) within [`Options::request_timeout`] of its first byte (else 408),
//! and only then takes one of [`Options::workers`] permits to run `routes::handle`, so a
//! handler never runs on more threads than that and a slow client never holds one. Answers
//! leave in request order. At the cap, a new client takes the place of the connection idle
//! or stuck in an incomplete request the longest. An answer whose body is produced as it goes
//! (MCP's SSE streams, `mcp.rs` and `sse.rs`) is produced after the permit is released, on the
//! connection's thread, so a call waiting for its client holds no worker. Start-up prints one
//! machine-readable line on stdout, `listening on http://ADDR`, and the human URLs on stderr.

mod guard;
mod problem;
mod query;
mod routes;

use std::io::{IsTerminal, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use routes::DeskSecret;
use seneschal_access::error::CapabilityError;
use seneschal_core::context::Context;
use seneschal_model::policy::Effect;

/// The default address: loopback only.
pub const DEFAULT_BIND: &str = "127.0.0.1:7878";
/// The default largest request body, in bytes (1 MiB).
pub const DEFAULT_MAX_BODY: usize = seneschal_access::limits::HTTP_BODY_DEFAULT;
/// The default idle timeout of a keep-alive connection, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = seneschal_access::limits::HTTP_IDLE_SECS_DEFAULT;

/// What `serve` was asked for, parsed and checked.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to bind.
    pub bind: SocketAddr,
    /// Whether a non-loopback address was explicitly allowed.
    pub allow_remote: bool,
    /// The strongest effect executed.
    pub max_effect: Effect,
    /// The toolsets listed and executed (`--toolsets`).
    pub toolsets: seneschal_model::toolset::Toolsets,
    /// What a call that needs approval meets when the client cannot be asked.
    pub approval: seneschal_core::interact::ApprovalPolicy,
    /// How long a write waits on the approval desk under `ask` (`--approval-timeout`).
    pub approval_timeout: Duration,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// How long a keep-alive connection may wait idle for its next request.
    pub timeout: Duration,
    /// From a request's first byte to its last, and for writing its answer: `--request-timeout`,
    /// never longer than [`Options::timeout`].
    pub request_timeout: Duration,
    /// Worker threads.
    pub workers: usize,
    /// Connections open at once.
    pub max_connections: usize,
    /// The desk secret the person set (`$SENESCHAL_DESK_SECRET`, checked by
    /// [`DeskSecret::from_env`]); random per process when `None`.
    pub desk_secret: Option<DeskSecret>,
}

impl Options {
    /// Refuses a non-loopback [`Options::bind`] unless [`Options::allow_remote`] says so
    /// (there is no authentication); [`serve`] checks it before binding.
    pub fn check(&self) -> Result<(), CapabilityError> {
        if !self.bind.ip().is_loopback() && !self.allow_remote {
            return Err(CapabilityError::refused(format!(
                "--bind {} is not a loopback address; pass --allow-remote to serve it anyway \
                 (there is no authentication)",
                self.bind
            )));
        }
        Ok(())
    }
}

/// The default number of worker threads: the number of cores, 2 to 16.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 16)
}

/// The HTTP projection without sockets: one parsed request in, `(status, headers, body)` out,
/// through the same guard, limits and routes as the server. For fuzzing and tests.
pub struct InMemory(routes::State);

impl InMemory {
    /// A server as if bound at `addr` with `options`, serving `ctx`.
    pub fn new(ctx: Arc<Context>, addr: SocketAddr, options: &Options) -> InMemory {
        InMemory(routes::State::new(ctx, addr, options))
    }

    /// Answers one request; header names must be lower-case.
    pub fn answer(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        routes::answer_in_memory(&self.0, method, url, headers, body)
    }
}

/// Sets an integer-valued or timeval-valued socket option, reporting the OS error.
fn setsockopt<T>(fd: i32, level: i32, name: i32, value: &T, what: &str) -> std::io::Result<()> {
    // SAFETY: `fd` is an open socket owned by the caller for the duration of the call, and
    // `value` points at a live `T` whose size is passed alongside it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        let e = std::io::Error::last_os_error();
        Err(std::io::Error::new(e.kind(), format!("{what}: {e}")))
    }
}

/// Binds the listener with `TCP_NODELAY` and the timeouts set on the listening socket, which
/// accepted sockets inherit (Linux copies socket options on accept): the read timeout is the
/// idle timeout (a connection's first wait), the write timeout the request deadline.
pub fn listen(addr: SocketAddr, idle: Duration, request: Duration) -> std::io::Result<TcpListener> {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind(addr)?;
    let fd = listener.as_raw_fd();
    let one: libc::c_int = 1;
    setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_NODELAY,
        &one,
        "TCP_NODELAY",
    )?;
    let tv = |d: Duration| libc::timeval {
        tv_sec: d.as_secs() as libc::time_t,
        tv_usec: d.subsec_micros() as libc::suseconds_t,
    };
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_RCVTIMEO,
        &tv(idle),
        "SO_RCVTIMEO",
    )?;
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_SNDTIMEO,
        &tv(request),
        "SO_SNDTIMEO",
    )?;
    Ok(listener)
}

/// Whether stdin is a pipe or a socket: then the parent controls our lifetime through it.
fn stdin_is_pipe() -> bool {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return false;
    }
    // SAFETY: fstat on fd 0 writes into a zeroed, properly sized `stat` buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    kind == libc::S_IFIFO || kind == libc::S_IFSOCK
}

/// Binds, announces and serves until the process ends (stdin EOF when it is a pipe).
pub fn serve(repo: PathBuf, options: &Options) -> Result<(), CapabilityError> {
    options.check()?;
    let listener = listen(options.bind, options.timeout, options.request_timeout)
        .map_err(|e| CapabilityError::refused(format!("cannot listen on {}: {e}", options.bind)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CapabilityError::internal(format!("the bound address is unknown: {e}")))?;
    let ctx = Arc::new(
        Context::new(repo, options.max_effect)
            .with_toolsets(options.toolsets)
            .with_approval(options.approval)
            .with_desk(options.approval_timeout),
    );
    let state = Arc::new(routes::State::new(ctx, addr, options));
    // A call waiting on the approval desk gives its worker back meanwhile: the cockpit that
    // decides it is served by the same workers.
    seneschal_core::interact::wait_with(|wait| tiny_http::idle(wait));

    if options.allow_remote && !addr.ip().is_loopback() {
        eprintln!(
            "warning: serving on {addr}, which is not loopback: anyone who reaches it can call \
             every capability up to effect {} (there is no authentication)",
            options.max_effect.as_str()
        );
    }
    let base = format!("http://{addr}");
    eprintln!(
        "seneschal serves {} (--allow-effects {}, --toolsets {}, --approval {})",
        state.ctx.repo.display(),
        options.max_effect.as_str(),
        options.toolsets.spelling(),
        options.approval.as_str()
    );
    eprintln!(
        "  cockpit:  {base}/#desk={}  (the approval desk: this link holds its secret)",
        state.desk_secret()
    );
    eprintln!("  docs:     {base}/docs");
    eprintln!("  openapi:  {base}/openapi.json");
    eprintln!(
        "  mcp:      {base}{}",
        seneschal_model::versions::MCP_HTTP_PATH
    );
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on {base}");
        let _ = out.flush();
    }

    let limits = tiny_http::Limits {
        max_connections: options.max_connections,
        workers: options.workers,
        max_body: options.max_body,
        request_timeout: options.request_timeout,
        idle_timeout: options.timeout,
    };
    let served = Arc::clone(&state);
    // The HTTP edge: a panic in serving one request (past the executor's own, which answers a
    // handler's panic as `internal`) ends that request, its connection closed, and never the
    // worker or the server.
    let accept = tiny_http::serve(listener.into(), limits, move |request| {
        let serve = std::panic::AssertUnwindSafe(|| routes::handle(&served, request));
        if let Err(panic) = std::panic::catch_unwind(serve) {
            let why = seneschal_access::text::panic_message(panic.as_ref(), "a panic");
            eprintln!("seneschal serve: a request panicked: {why}");
        }
    })
    .map_err(|e| CapabilityError::internal(format!("the HTTP server does not start: {e}")))?;

    if stdin_is_pipe() {
        // The parent holds the other end: when it closes it (or dies), we go too.
        let mut sink = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        eprintln!("stdin closed: stopping");
        return Ok(());
    }
    let _ = accept.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_body_default_is_the_limits_table_s() {
        assert_eq!(
            super::DEFAULT_MAX_BODY,
            seneschal_access::limits::HTTP_BODY_DEFAULT
        );
        assert_eq!(
            super::DEFAULT_TIMEOUT_SECS,
            seneschal_access::limits::HTTP_IDLE_SECS_DEFAULT
        );
    }
}
