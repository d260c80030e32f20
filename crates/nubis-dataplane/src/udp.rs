//! `udp` configs: datagrams proxied per client session.
//!
//! * One socket per listener receives every client's datagrams. A client address (IP and port)
//!   without a session opens one: admitted by the session limit, the balancer firewall (UDP to
//!   the listener's port) and `client_udp_sess_throttle` (new sessions per second per client IP;
//!   a datagram over the limit is dropped), then given a node by the stickiness and the
//!   algorithm, and a socket connected to that node (from the balancer's own address in netns
//!   mode, as tcp connections are).
//! * The client's datagrams go to the session's node; the node's replies go back to the client
//!   from the listener's socket, so the client sees the balancer's address.
//! * A session idle (no datagram either way) for `udp_session_timeout` seconds is forgotten.
//!   A session whose node can no longer keep it (down, `reject`, removed) is replaced by a new
//!   one on the next datagram; `drain` nodes keep their sessions and take no new ones.
//! * Algorithms: `roundrobin` (the weighted schedule), `leastconn` (fewest live sessions),
//!   `ring_hash` (consistent hashing of the client address: weighted rendezvous hashing, so a
//!   node that leaves or joins moves only the clients it loses or wins). Stickiness: a session
//!   always stays on its node (`session`, and `none`); `source_ip` also sends every later session
//!   of the client IP to the same node while it can take it.
//! * Counters: a new session counts as a connection, client datagrams as bytes in, replies as
//!   bytes out; live sessions count as the listener's open connections.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nubis_model::balancer::{Algorithm, Stickiness};
use nubis_model::firewall::{Action, Direction, Packet, RuleProtocol};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::node::{NodeRt, NodeShared};
use crate::state::{Gen, ListenerShared};

/// The largest datagram relayed.
const MAX_DATAGRAM: usize = 65_535;
/// How often idle sessions are looked for.
const SWEEP: Duration = Duration::from_millis(250);

struct Session {
    node_id: i64,
    node: Arc<NodeShared>,
    backend: Arc<UdpSocket>,
    /// Milliseconds since the listener's epoch of the last datagram either way.
    last: Arc<AtomicU64>,
    stop: CancellationToken,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.cancel();
        self.node.active.sub(1);
    }
}

/// Binds the listener's socket.
pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    UdpSocket::bind(addr).await
}

/// Serves one listener socket until `stop`; every session ends with it.
pub(crate) async fn serve(sock: UdpSocket, shared: Arc<ListenerShared>, stop: CancellationToken) {
    let sock = Arc::new(sock);
    let local = sock.local_addr().ok();
    let source = crate::fabric::source_of(local);
    let port = local.map_or(0, |a| a.port());
    let epoch = Instant::now();
    let mut sessions: HashMap<SocketAddr, Session> = HashMap::new();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut sweep = tokio::time::interval(SWEEP);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (n, peer) = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            _ = sweep.tick() => {
                let timeout = shared.state.load().udp_session_timeout;
                let now = epoch.elapsed().as_millis() as u64;
                sessions.retain(|_, s| now.saturating_sub(s.last.load(Ordering::Relaxed)) < timeout.as_millis() as u64);
                shared.open.store(sessions.len(), Ordering::Relaxed);
                continue;
            }
            r = sock.recv_from(&mut buf) => match r {
                Ok(x) => x,
                Err(e) => {
                    tracing::trace!(error = %e, "udp receive failed");
                    continue;
                }
            },
        };
        let cur = shared.state.load_full();
        let now = epoch.elapsed().as_millis() as u64;
        let data = &buf[..n];
        if let Some(s) = sessions.get(&peer) {
            let keeps =
                cur.nodes.iter().any(|nd| nd.id == s.node_id && Arc::ptr_eq(&nd.shared, &s.node) && nd.sticky_ok());
            if keeps {
                s.last.store(now, Ordering::Relaxed);
                shared.stats.add_in(n);
                let _ = s.backend.send(data).await;
                continue;
            }
            sessions.remove(&peer);
        }
        if sessions.len() >= shared.settings.max_connections_per_listener || !admit(&shared, peer, port) {
            continue;
        }
        let Some(node) = choose(&cur, &shared, peer) else {
            tracing::debug!(%peer, "no node can take a new udp session; datagram dropped");
            continue;
        };
        let Some(dial) = node.dial else { continue };
        let backend = match connect(dial, source).await {
            Ok(b) => Arc::new(b),
            Err(e) => {
                tracing::debug!(%peer, node = node.id, error = %e, "udp session to the node failed");
                continue;
            }
        };
        node.shared.active.add(1);
        let s = Session {
            node_id: node.id,
            node: Arc::clone(&node.shared),
            backend: Arc::clone(&backend),
            last: Arc::new(AtomicU64::new(now)),
            stop: stop.child_token(),
        };
        tokio::spawn(replies(
            Arc::clone(&backend),
            Arc::clone(&sock),
            peer,
            Arc::clone(&shared),
            Arc::clone(&s.last),
            epoch,
            s.stop.clone(),
        ));
        shared.stats.connections.add(1);
        shared.stats.add_in(n);
        let _ = backend.send(data).await;
        sessions.insert(peer, s);
        shared.open.store(sessions.len(), Ordering::Relaxed);
    }
    drop(sessions);
    shared.open.store(0, Ordering::Relaxed);
    *shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// A socket connected to the node, bound to `source` when given.
async fn connect(dial: SocketAddr, source: Option<IpAddr>) -> std::io::Result<UdpSocket> {
    let from = match (source, dial) {
        (Some(ip), _) => SocketAddr::new(ip, 0),
        (None, SocketAddr::V4(_)) => SocketAddr::from(([0, 0, 0, 0], 0)),
        (None, SocketAddr::V6(_)) => SocketAddr::from(([0u16; 8], 0)),
    };
    let s = UdpSocket::bind(from).await?;
    s.connect(dial).await?;
    Ok(s)
}

/// Relays a node's replies to the client until the session ends.
async fn replies(
    backend: Arc<UdpSocket>,
    sock: Arc<UdpSocket>,
    peer: SocketAddr,
    shared: Arc<ListenerShared>,
    last: Arc<AtomicU64>,
    epoch: Instant,
    stop: CancellationToken,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let r = tokio::select! {
            _ = stop.cancelled() => return,
            r = backend.recv(&mut buf) => r,
        };
        match r {
            Ok(n) => {
                last.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
                if sock.send_to(&buf[..n], peer).await.is_ok() {
                    shared.stats.add_out(n);
                }
            }
            // An ICMP error from the node (nothing listening): wait for the next datagram.
            Err(e) => {
                tracing::trace!(%peer, error = %e, "udp node receive failed");
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                }
            }
        }
    }
}

/// Balancer firewall and new-session throttle: false when the datagram must be dropped.
fn admit(shared: &ListenerShared, peer: SocketAddr, port: u16) -> bool {
    if let Some(fw) = &*shared.balancer.firewall.load() {
        let p = Packet { direction: Direction::Inbound, protocol: RuleProtocol::Udp, peer: peer.ip(), port };
        if fw.decide(&p) == Action::Drop {
            tracing::debug!(%peer, port, "udp dropped by the balancer firewall");
            return false;
        }
    }
    if !shared.balancer.udp_throttle.allow(peer.ip()) {
        tracing::debug!(%peer, "client udp session throttle exceeded, dropped");
        return false;
    }
    true
}

/// The node of a new session of `peer`.
fn choose<'g>(cur: &'g Gen, shared: &ListenerShared, peer: SocketAddr) -> Option<&'g NodeRt> {
    if cur.stickiness == Stickiness::SourceIp
        && let Some(id) = cur.sticky.get(peer.ip())
        && let Some(n) = cur.nodes.iter().find(|n| n.id == id)
        && n.sticky_ok()
    {
        return Some(n);
    }
    let idx = match cur.algorithm {
        Algorithm::RingHash => ring_hash(&cur.view.active, &cur.nodes, peer)?,
        _ => cur.pick(&shared.rr, peer.ip(), &[])?,
    };
    let n = &cur.nodes[usize::from(idx)];
    if cur.stickiness == Stickiness::SourceIp {
        cur.sticky.put(peer.ip(), n.id);
    }
    Some(n)
}

/// Weighted rendezvous hashing of the client address over the active nodes: each node scores
/// `ln(u) / weight` with `u` a hash of (client, node id) in (0, 1]; the highest score wins.
pub(crate) fn ring_hash(active: &[u16], nodes: &[NodeRt], peer: SocketAddr) -> Option<u16> {
    active
        .iter()
        .map(|&i| {
            let n = &nodes[usize::from(i)];
            let mut h = DefaultHasher::new();
            (peer, n.id).hash(&mut h);
            let u = ((h.finish() >> 11) + 1) as f64 / (1u64 << 53) as f64;
            (u.ln() / f64::from(n.weight.max(1)), i)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, i)| i)
}
