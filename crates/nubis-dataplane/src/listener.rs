//! One listening socket of one config: binding, the accept loop, admission of new connections
//! (connection limit, balancer firewall, client throttle) and dispatch to the tcp, http or https
//! handler. Stopping a listener closes its socket and every connection it accepted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nubis_model::balancer::Protocol;
use nubis_model::firewall::{Action, Direction, Packet, RuleProtocol};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::state::ListenerShared;
use crate::{http, tcp};

/// Pending connections the kernel queues per listener.
const BACKLOG: u32 = 4096;

/// Binds `addr` with `SO_REUSEADDR` (so a moved listener can come back at once).
pub(crate) fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let s = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    s.set_reuseaddr(true)?;
    s.bind(addr)?;
    s.listen(BACKLOG)
}

/// A running accept loop.
#[derive(Debug)]
pub(crate) struct RunningListener {
    pub(crate) addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl RunningListener {
    pub(crate) fn spawn(
        listener: TcpListener,
        shared: Arc<ListenerShared>,
        parent: &CancellationToken,
    ) -> RunningListener {
        let addr = listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        *shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(addr);
        let stop = parent.child_token();
        let task = tokio::spawn(accept_loop(listener, shared, stop.clone()));
        RunningListener { addr, stop, task }
    }

    /// Stops accepting, closes every connection of this listener and waits until the socket is
    /// released.
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<ListenerShared>, stop: CancellationToken) {
    let mut conns = JoinSet::new();
    tracing::info!(balancer = shared.balancer_id, config = shared.config_id, addr = ?listener.local_addr().ok(), "listening");
    loop {
        let (sock, peer) = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of descriptors or similar: back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        if !admit(&shared, &sock, peer) {
            drop(sock);
            continue;
        }
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        shared.open.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::clone(&shared);
        conns.spawn(async move {
            serve(sock, peer, &shared).await;
            shared.open.fetch_sub(1, Ordering::Relaxed);
        });
    }
    drop(listener);
    conns.shutdown().await;
    *shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = None;
    tracing::info!(
        balancer = shared.balancer_id,
        config = shared.config_id,
        "listener stopped"
    );
}

/// Connection limit, firewall, throttle: false when the connection must be closed at once.
fn admit(shared: &ListenerShared, sock: &TcpStream, peer: SocketAddr) -> bool {
    if shared.open.load(Ordering::Relaxed) >= shared.settings.max_connections_per_listener {
        tracing::debug!(%peer, "connection limit reached, refused");
        return false;
    }
    if let Some(fw) = &*shared.balancer.firewall.load() {
        let port = sock.local_addr().map(|a| a.port()).unwrap_or(0);
        let p = Packet {
            direction: Direction::Inbound,
            protocol: RuleProtocol::Tcp,
            peer: peer.ip(),
            port,
        };
        if fw.decide(&p) == Action::Drop {
            tracing::debug!(%peer, port, "dropped by the balancer firewall");
            return false;
        }
    }
    if !shared.balancer.throttle.allow(peer.ip()) {
        tracing::debug!(%peer, "client connection throttle exceeded, refused");
        return false;
    }
    true
}

async fn serve(sock: TcpStream, peer: SocketAddr, shared: &ListenerShared) {
    let _ = sock.set_nodelay(true);
    let local = sock.local_addr().unwrap_or(peer);
    let cur = shared.state.load_full();
    match cur.protocol {
        Protocol::Tcp => tcp::serve(sock, peer, local, shared).await,
        Protocol::Http => http::serve(sock, peer, shared, false).await,
        Protocol::Https => {
            let Some(cfg) = cur.tls.clone() else {
                return; // no usable certificate: refuse
            };
            drop(cur);
            let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
            match tokio::time::timeout(shared.settings.client_idle_timeout, acceptor.accept(sock))
                .await
            {
                Ok(Ok(tls)) => http::serve(tls, peer, shared, true).await,
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        }
    }
}
