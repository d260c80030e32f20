//! One listening socket of one config: binding, the accept loop, admission of new connections
//! (connection limit, balancer firewall, client throttle) and dispatch to the tcp, http or https
//! handler. Stopping a listener closes its socket and every connection it accepted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nubis_model::balancer::Protocol;
use nubis_model::firewall::{Action, Direction, Packet, RuleProtocol};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::state::ListenerShared;
use crate::{http, tcp, udp};

/// Pending connections the kernel queues per listener.
const BACKLOG: u32 = 4096;

/// Binds `addr` with `SO_REUSEADDR` (so a moved listener can come back at once) and, when
/// several workers share the address, `SO_REUSEPORT`. Must run inside the runtime that serves it.
fn bind(addr: SocketAddr, reuseport: bool) -> std::io::Result<TcpListener> {
    let s = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    s.set_reuseaddr(true)?;
    if reuseport {
        s.set_reuseport(true)?;
    }
    s.bind(addr)?;
    s.listen(BACKLOG)
}

/// The accept loops of one listener (one per worker).
#[derive(Debug)]
pub(crate) struct RunningListener {
    pub(crate) addr: SocketAddr,
    shared: Arc<ListenerShared>,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl RunningListener {
    /// Binds `addr` on every worker (or on the current runtime when there are none) and starts
    /// accepting. Fails, with nothing left running, when any bind fails.
    pub(crate) async fn start(
        addr: SocketAddr,
        shared: Arc<ListenerShared>,
        parent: &CancellationToken,
        workers: &[Handle],
    ) -> std::io::Result<RunningListener> {
        let stop = parent.child_token();
        if shared.state.load().protocol == Protocol::Udp {
            return start_udp(addr, shared, stop, workers).await;
        }
        let mut tasks = Vec::new();
        if workers.is_empty() {
            let l = bind(addr, false)?;
            tasks.push(tokio::spawn(accept_loop(l, Arc::clone(&shared), stop.clone())));
        } else {
            let reuseport = workers.len() > 1;
            if reuseport {
                // SO_REUSEPORT would let the workers silently join sockets another process holds
                // on the address: first make sure the address is free.
                let probe = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
                probe.set_reuseaddr(true)?;
                probe.bind(addr)?;
            }
            let mut bound = Vec::new();
            for h in workers {
                let (tx, rx) = oneshot::channel();
                let (s, st) = (Arc::clone(&shared), stop.clone());
                tasks.push(h.spawn(async move {
                    match bind(addr, reuseport) {
                        Ok(l) => {
                            let _ = tx.send(Ok(()));
                            accept_loop(l, s, st).await;
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                }));
                bound.push(rx);
            }
            for rx in bound {
                if let Err(e) = rx.await.unwrap_or_else(|_| Err(std::io::Error::other("worker stopped"))) {
                    stop.cancel();
                    for t in tasks {
                        let _ = t.await;
                    }
                    return Err(e);
                }
            }
        }
        *shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(addr);
        tracing::info!(balancer = shared.balancer_id, config = shared.config_id, %addr, "listening");
        Ok(RunningListener { addr, shared, stop, tasks })
    }

    /// Stops accepting, closes every connection of this listener and waits until its sockets are
    /// released.
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
        *self.shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = None;
        tracing::info!(balancer = self.shared.balancer_id, config = self.shared.config_id, "listener stopped");
    }
}

/// A `udp` listener: one socket served by one task (on the first proxy worker, if any).
async fn start_udp(
    addr: SocketAddr,
    shared: Arc<ListenerShared>,
    stop: CancellationToken,
    workers: &[Handle],
) -> std::io::Result<RunningListener> {
    let (tx, rx) = oneshot::channel();
    let (s, st) = (Arc::clone(&shared), stop.clone());
    let run = async move {
        match udp::bind(addr).await {
            Ok(sock) => {
                let _ = tx.send(Ok(()));
                udp::serve(sock, s, st).await;
            }
            Err(e) => {
                let _ = tx.send(Err(e));
            }
        }
    };
    let task = match workers.first() {
        Some(h) => h.spawn(run),
        None => tokio::spawn(run),
    };
    if let Err(e) = rx.await.unwrap_or_else(|_| Err(std::io::Error::other("worker stopped"))) {
        let _ = task.await;
        return Err(e);
    }
    *shared.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(addr);
    tracing::info!(balancer = shared.balancer_id, config = shared.config_id, %addr, "listening (udp)");
    Ok(RunningListener { addr, shared, stop, tasks: vec![task] })
}

async fn accept_loop(listener: TcpListener, shared: Arc<ListenerShared>, stop: CancellationToken) {
    let mut conns = JoinSet::new();
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
        shared.stats.connections.add(1);
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
    tracing::info!(balancer = shared.balancer_id, config = shared.config_id, "listener stopped");
}

/// Connection limit, firewall, throttle: false when the connection must be closed at once.
fn admit(shared: &ListenerShared, sock: &TcpStream, peer: SocketAddr) -> bool {
    if shared.open.load(Ordering::Relaxed) >= shared.settings.max_connections_per_listener {
        tracing::debug!(%peer, "connection limit reached, refused");
        return false;
    }
    if let Some(fw) = &*shared.balancer.firewall.load() {
        let port = sock.local_addr().map(|a| a.port()).unwrap_or(0);
        let p = Packet { direction: Direction::Inbound, protocol: RuleProtocol::Tcp, peer: peer.ip(), port };
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
    let protocol = shared.state.load().protocol;
    // Each handler is boxed so that a connection's task holds only the state of its own protocol
    // (an https future, with its TLS session, is much larger than an http one).
    match protocol {
        Protocol::Tcp => Box::pin(tcp::serve(sock, peer, local, shared)).await,
        Protocol::Http => Box::pin(http::serve(sock, peer, shared, false)).await,
        Protocol::Https => Box::pin(serve_tls(sock, peer, shared)).await,
        // A listener changing to udp is moved (a new socket); a stream accepted meanwhile closes.
        Protocol::Udp => {}
    }
}

async fn serve_tls(sock: TcpStream, peer: SocketAddr, shared: &ListenerShared) {
    let Some(cfg) = shared.state.load().tls.clone() else {
        return; // no usable certificate: refuse
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
    match tokio::time::timeout(shared.settings.client_idle_timeout, acceptor.accept(sock)).await {
        Ok(Ok(tls)) => http::serve(tls, peer, shared, true).await,
        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
    }
}
