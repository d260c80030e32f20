//! Dialing back ends: connect with the configured timeout, retry on other nodes, and count
//! failures for passive checks.

use std::net::IpAddr;

use tokio::net::TcpStream;

use crate::state::{Choice, Gen, ListenerShared};

/// Nodes tried for one session before giving up.
pub(crate) const MAX_TRIES: usize = 3;

/// Why no back-end connection could be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DialError {
    /// No node may take the session.
    NoNode,
    /// Nodes were chosen but none could be reached.
    Failed,
}

/// Opens a fresh connection to node `idx`; a failure counts against it.
pub(crate) async fn connect(shared: &ListenerShared, cur: &Gen, idx: u16) -> Option<TcpStream> {
    let node = &cur.nodes[idx as usize];
    let addr = node.dial?;
    let source = crate::fabric::source_of(*shared.bound.lock().unwrap_or_else(|e| e.into_inner()));
    match tokio::time::timeout(shared.settings.backend_connect_timeout, crate::fabric::connect(addr, source)).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Some(s)
        }
        Ok(Err(e)) => {
            tracing::debug!(node = node.id, %addr, error = %e, "back end connect failed");
            shared.passive_failure(cur, node);
            None
        }
        Err(_) => {
            tracing::debug!(node = node.id, %addr, "back end connect timed out");
            shared.passive_failure(cur, node);
            None
        }
    }
}

/// Chooses a node and connects (a fresh connection), trying up to [`MAX_TRIES`] nodes.
pub(crate) async fn choose_and_connect(
    shared: &ListenerShared,
    cur: &Gen,
    ip: IpAddr,
    cookie: Option<u64>,
) -> Result<(Choice, TcpStream), DialError> {
    let mut tried: [u16; MAX_TRIES] = [u16::MAX; MAX_TRIES];
    for t in 0..MAX_TRIES {
        let Some(c) = cur.choose(&shared.rr, ip, cookie, &tried[..t]) else {
            return Err(if t == 0 { DialError::NoNode } else { DialError::Failed });
        };
        tried[t] = c.idx;
        if let Some(s) = connect(shared, cur, c.idx).await {
            return Ok((c, s));
        }
    }
    Err(DialError::Failed)
}
