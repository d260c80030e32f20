//! Bytes in and out: read buffers, body streaming, the tunnel after `101`, canned answers.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::chunked::Framing;
use crate::state::ListenerShared;

const READ_CHUNK: usize = 16 * 1024;

/// Room to read into: 4 KiB at first, doubling while a head or body needs more.
pub(super) fn reserve(buf: &mut Vec<u8>) {
    if buf.capacity() - buf.len() < 1024 {
        buf.reserve(buf.capacity().clamp(4096, READ_CHUNK));
    }
}

/// Why a body could not be forwarded; `Src*` is the sending side's fault, `Dst` the receiver's.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum StreamError {
    /// The sender closed before the end of the body.
    SrcClosed,
    /// Nothing from the sender for the idle timeout.
    SrcTimeout,
    /// Malformed chunked framing.
    SrcBad,
    SrcIo,
    Dst,
}

/// Forwards the rest of a body from `src` to `dst`; `buf` must be empty on entry and holds the
/// bytes read past the end of the body on return. With `decode`, only the payload of a chunked
/// body is written (`decode` is scratch space). Returns (bytes read, bytes written).
pub(super) async fn stream_body<R, W>(
    src: &mut R,
    dst: &mut W,
    framing: &mut Framing,
    buf: &mut Vec<u8>,
    idle: Duration,
    mut decode: Option<&mut Vec<u8>>,
) -> Result<(usize, usize), StreamError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut read, mut written) = (0, 0);
    loop {
        buf.clear();
        reserve(buf);
        let n = match tokio::time::timeout(idle, src.read_buf(buf)).await {
            Ok(Ok(n)) => n,
            Ok(Err(_)) => return Err(StreamError::SrcIo),
            Err(_) => return Err(StreamError::SrcTimeout),
        };
        read += n;
        if n == 0 {
            return if matches!(framing, Framing::UntilClose) {
                Ok((read, written))
            } else {
                Err(StreamError::SrcClosed)
            };
        }
        let (k, done) = match decode.as_deref_mut() {
            Some(payload) => {
                payload.clear();
                let r = framing.take_decoded(buf, payload).map_err(|_| StreamError::SrcBad)?;
                dst.write_all(payload).await.map_err(|_| StreamError::Dst)?;
                written += payload.len();
                r
            }
            None => {
                let r = framing.take(buf).map_err(|_| StreamError::SrcBad)?;
                dst.write_all(&buf[..r.0]).await.map_err(|_| StreamError::Dst)?;
                written += r.0;
                r
            }
        };
        buf.drain(..k);
        if done {
            return Ok((read, written));
        }
    }
}

/// After a `101 Switching Protocols`: bytes both ways until either side closes. `head` is the
/// response head (and what followed it), `pending` what the client sent after its request.
pub(super) async fn tunnel<S>(
    client: &mut S,
    backend: &mut TcpStream,
    head: &[u8],
    pending: &[u8],
    shared: &ListenerShared,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if client.write_all(head).await.is_err() || backend.write_all(pending).await.is_err() {
        return;
    }
    shared.stats.add_out(head.len());
    if let Ok((a, b)) = tokio::io::copy_bidirectional(client, backend).await {
        shared.stats.add_in(a as usize);
        shared.stats.add_out(b as usize);
    }
}

pub(super) async fn write_counted<S: AsyncWrite + Unpin>(
    client: &mut S,
    shared: &ListenerShared,
    bytes: &[u8],
) -> std::io::Result<()> {
    client.write_all(bytes).await?;
    client.flush().await?;
    shared.stats.add_out(bytes.len());
    Ok(())
}

/// Answers with a canned response and closes.
pub(super) async fn reply<S: AsyncWrite + Unpin>(client: &mut S, shared: &ListenerShared, bytes: &[u8]) {
    if write_counted(client, shared, bytes).await.is_ok() {
        let _ = client.shutdown().await;
    }
}
