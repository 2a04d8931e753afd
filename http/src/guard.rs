//! The guard: what a request must satisfy before any route or handler sees it.
//!
//! DNS rebinding: a browser page on a foreign site can resolve its own name to 127.0.0.1, so
//! the `Host` header must name this server by a loopback name (`127.0.0.1`, `localhost`,
//! `[::1]`) with the bound port. Cross-site requests: a browser sends `Origin` on every
//! state-changing request, so a present `Origin` that is not this server's own loopback origin
//! is refused for every method other than GET and HEAD, before the body is read.

//!
//! Approval: the HTTP API has no way back to its client, so the caller cannot approve its own
//! call. A call the executor's approval gate must confirm is approved by the person: through
//! the approval desk (under `--approval ask` the call waits there until the person decides in
//! the cockpit or with `seneschal approvals`), or by a request that carries the desk secret
//! `serve` printed on the person's terminal (`Seneschal-Desk-Secret`: the person's own
//! scripts). A write's dry run answers `Seneschal-Approval-Token`, bound to that exact
//! request and plan; presented in `Seneschal-Approval`, it makes sure the call applies the
//! plan reviewed (a stale or replayed token is refused at once), but it approves nothing.

use std::net::SocketAddr;

use seneschal_access::error::CapabilityError;
use seneschal_core::interact::{Answer, Peer, Question};
use seneschal_model::policy::{APPROVAL_HEADER, DESK_SECRET_HEADER};

/// The peer of an HTTP API call: it answers the approval gate's request with `accept` when
/// the request carries the desk secret (the person's own call); a `Seneschal-Approval` token
/// that does not confirm this exact request and plan is refused (`Failed`: nothing waits);
/// otherwise the client cannot be asked, and under `ask` the call waits on the desk. There is
/// no session: a `session`-level call is never remembered.
pub struct Confirmation {
    /// The `Seneschal-Approval` header, if the request has one.
    pub token: Option<String>,
    /// Whether the request carries this server's desk secret.
    pub person: bool,
}

impl Peer for Confirmation {
    fn approve(&self, question: &Question) -> Answer {
        let binding = question.binding.as_str();
        // A token binds the plan; it is spent only when it applies (with the secret): a
        // write put on the desk may present it again when it is made again.
        let spent = |t: &str| {
            if self.person {
                !seneschal_core::interact::redeem_token(t, binding)
            } else {
                !seneschal_core::interact::token_unspent(t, binding)
            }
        };
        match &self.token {
            Some(t) if spent(t) => {
                return Answer::Failed(format!(
                    "the `{APPROVAL_HEADER}` token does not confirm this request: it was issued \
                     for another capability, input or plan, by another server process, more \
                     than ten minutes ago, or it was presented before (a token is one plan, \
                     applied once); make the dry run of this exact request again"
                ))
            }
            _ => {}
        }
        if self.person {
            return Answer::Approved { grant: false };
        }
        Answer::Unavailable(format!(
            "the HTTP API cannot ask its caller, and a caller does not approve its own call: \
             the person approves it on the desk (the cockpit, or `seneschal approvals`), or \
             the request carries the `{DESK_SECRET_HEADER}` that `seneschal serve` printed"
        ))
    }

    fn vouched(&self) -> bool {
        // Its answer is given above only for a request that carries the desk secret.
        true
    }

    fn approver(&self) -> &'static str {
        "desk secret"
    }
}

/// The names a `Host` header or an `Origin` may carry for this server.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// `host:port` spellings accepted in `Host`, lower-case.
    hosts: Vec<String>,
    /// `http://host:port` spellings accepted in `Origin`, lower-case.
    origins: Vec<String>,
    /// With a non-loopback bind (`--allow-remote`): any IP literal with the bound port is
    /// accepted too. An IP literal cannot be rebound by DNS, so this keeps the protection.
    port_for_ip_literals: Option<u16>,
}

impl Allowed {
    /// The loopback names with the bound port; with a non-loopback bind (which needs
    /// `--allow-remote`), any IP literal with the bound port too.
    pub fn for_addr(addr: SocketAddr) -> Allowed {
        let port = addr.port();
        let names = [
            "127.0.0.1".to_string(),
            "localhost".to_string(),
            "[::1]".to_string(),
        ];
        let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        if port == 80 {
            hosts.extend(names.iter().cloned());
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Allowed {
            hosts,
            origins,
            port_for_ip_literals: (!addr.ip().is_loopback()).then_some(port),
        }
    }

    /// Whether `host` (`IP:PORT`, `[IPv6]:PORT`) is an IP literal with the bound port on a
    /// remote-allowed server.
    fn ip_literal(&self, host: &str) -> bool {
        self.port_for_ip_literals
            .is_some_and(|port| host.parse::<SocketAddr>().is_ok_and(|a| a.port() == port))
    }

    /// Checks the `Host` header: missing → `invalid_input` (HTTP/1.1 requires it), foreign →
    /// `refused`.
    pub fn check_host(&self, host: Option<&str>) -> Result<(), CapabilityError> {
        let Some(host) = host else {
            return Err(CapabilityError::invalid_input(
                "the request has no Host header (HTTP/1.1 requires one)",
            ));
        };
        let h = host.trim().to_ascii_lowercase();
        if self.hosts.contains(&h) || self.ip_literal(&h) {
            Ok(())
        } else {
            Err(CapabilityError::refused(format!(
                "the Host header {host:?} does not name this server by a loopback name and its \
                 port (DNS rebinding protection); use one of {}",
                self.hosts.join(", ")
            )))
        }
    }

    /// Checks the `Origin` header of a request with this method.
    pub fn check_origin(&self, method: &str, origin: Option<&str>) -> Result<(), CapabilityError> {
        if matches!(method, "GET" | "HEAD") {
            return Ok(());
        }
        let Some(origin) = origin else {
            return Ok(());
        };
        let o = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&o)
            || o.strip_prefix("http://")
                .is_some_and(|h| self.ip_literal(h))
        {
            Ok(())
        } else {
            Err(CapabilityError::refused(format!(
                "a {method} from the foreign origin {origin:?} is refused (only this server's own \
                 page may change state)"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Allowed {
        Allowed::for_addr("127.0.0.1:7878".parse().unwrap())
    }

    #[test]
    fn loopback_hosts_with_the_port_pass() {
        let a = allowed();
        for h in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST:7878",
            "[::1]:7878",
        ] {
            assert!(a.check_host(Some(h)).is_ok(), "{h}");
        }
    }

    #[test]
    fn foreign_or_portless_hosts_are_refused() {
        let a = allowed();
        for h in [
            "evil.example:7878",
            "127.0.0.1",
            "127.0.0.1:80",
            "localhost.evil:7878",
        ] {
            let e = a.check_host(Some(h)).unwrap_err();
            assert_eq!(e.code.as_str(), "refused", "{h}");
        }
        assert_eq!(
            a.check_host(None).unwrap_err().code.as_str(),
            "invalid_input"
        );
    }

    #[test]
    fn a_remote_bind_accepts_ip_literals_with_its_port_but_no_names() {
        let a = Allowed::for_addr("0.0.0.0:7878".parse().unwrap());
        assert!(a.check_host(Some("192.0.2.7:7878")).is_ok());
        assert!(a.check_host(Some("[2001:db8::1]:7878")).is_ok());
        assert!(a.check_host(Some("localhost:7878")).is_ok());
        assert!(a.check_host(Some("192.0.2.7:7879")).is_err());
        assert!(a.check_host(Some("evil.example:7878")).is_err());
        assert!(a
            .check_origin("POST", Some("http://192.0.2.7:7878"))
            .is_ok());
        assert!(a
            .check_origin("POST", Some("http://evil.example:7878"))
            .is_err());
        // A loopback bind never accepts another IP literal.
        assert!(allowed().check_host(Some("192.0.2.7:7878")).is_err());
    }

    #[test]
    fn origin_matters_only_for_state_changing_methods() {
        let a = allowed();
        assert!(a.check_origin("GET", Some("http://evil.example")).is_ok());
        assert!(a.check_origin("POST", None).is_ok());
        assert!(a
            .check_origin("POST", Some("http://localhost:7878"))
            .is_ok());
        for o in [
            "http://evil.example",
            "null",
            "http://localhost:9999",
            "https://127.0.0.1:7878",
        ] {
            assert!(a.check_origin("POST", Some(o)).is_err(), "{o}");
            assert!(a.check_origin("DELETE", Some(o)).is_err(), "{o}");
        }
    }
}
