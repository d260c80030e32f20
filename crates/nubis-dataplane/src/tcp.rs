//! `tcp` configs: one back-end connection per client connection, an optional PROXY protocol header,
//! then bytes copied both ways until either side closes or the connection stays idle too long.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use crate::backend::choose_and_connect;
use crate::node::ActiveGuard;
use crate::proxy_protocol;
use crate::state::ListenerShared;
use crate::stats::ConfigStats;

pub(crate) async fn serve(client: TcpStream, peer: SocketAddr, local: SocketAddr, shared: &ListenerShared) {
    let cur = shared.state.load_full();
    let Ok((choice, mut backend)) = choose_and_connect(shared, &cur, peer.ip(), None).await else {
        // No node available (or none reachable): close the client connection.
        return;
    };
    let node = &cur.nodes[choice.idx as usize];
    let _active = ActiveGuard::new(&node.shared);
    let header = proxy_protocol::header(cur.proxy_protocol, peer, local);
    if !header.is_empty() && backend.write_all(&header).await.is_err() {
        shared.passive_failure(&cur, node);
        return;
    }
    let activity = AtomicBool::new(false);
    let mut client = Metered { inner: client, stats: &shared.stats, activity: &activity };
    let idle = shared.settings.client_idle_timeout;
    let idle_watch = async {
        loop {
            tokio::time::sleep(idle).await;
            if !activity.swap(false, Ordering::Relaxed) {
                break;
            }
        }
    };
    tokio::select! {
        r = tokio::io::copy_bidirectional(&mut client, &mut backend) => {
            if let Err(e) = r {
                tracing::trace!(error = %e, "tcp session ended with an error");
            }
        }
        _ = idle_watch => {
            tracing::debug!(%peer, "tcp session idle, closed");
        }
    }
}

/// The client side of a session: counts bytes and marks activity.
pub(crate) struct Metered<'a, S> {
    pub(crate) inner: S,
    pub(crate) stats: &'a ConfigStats,
    pub(crate) activity: &'a AtomicBool,
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<'_, S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        if n > 0 {
            self.stats.add_in(n);
            self.activity.store(true, Ordering::Relaxed);
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<'_, S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.stats.add_out(n);
            self.activity.store(true, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
