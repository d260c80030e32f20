//! One client connection: request heads read in turn (keep-alive, pipelining), each request sent
//! to a node (pooled back-end connections, retries where safe), its response forwarded.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use arc_swap::Cache;
use nubis_model::balancer::Stickiness;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::chunked::Framing;
use super::io::{self, StreamError, reply, reserve, write_counted};
use super::request::{self, Prepared, Reject};
use super::response::{self, ReqCtx, RespInfo};
use super::{R100, R400, R408, R502, R503, R503_CLOSE, R504};
use crate::backend::{self, MAX_TRIES};
use crate::node::ActiveGuard;
use crate::state::{Gen, ListenerShared};

/// Largest response head accepted from a back end.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;
/// Buffers larger than this are released between requests (a big body went through).
const KEEP_BUFFER: usize = 32 * 1024;

struct Conn<'a, S> {
    client: S,
    shared: &'a ListenerShared,
    https: bool,
    peer: SocketAddr,
    ip_text: String,
    /// Bytes from the client: the request being handled, then whatever follows it.
    buf: Vec<u8>,
    /// The head (and the body read with it) to send to the back end; scratch space afterwards.
    out: Vec<u8>,
    /// Bytes from the back end.
    rbuf: Vec<u8>,
    /// Deadline for a request head, then for the response to it.
    idle: Pin<&'a mut Sleep>,
}

/// The request being forwarded.
struct Req {
    prep: Prepared,
    /// What remains of its body.
    framing: Framing,
    /// Bytes at the start of `buf` that were copied into `out` (head and body read with it).
    consumed: usize,
    /// The whole body is in `out`: the request can be sent again on another connection.
    replayable: bool,
    body_sent: bool,
}

/// Result of sending the request on one back-end connection.
enum Sent {
    /// A complete response head is in `rbuf`.
    Head(RespInfo),
    /// The connection failed before any response byte (a stale pooled connection, or a reset).
    Stale,
    /// The back end answered with something that is not valid HTTP, or failed mid-way.
    BadBackend,
    /// No response within the idle timeout.
    Timeout,
    /// The client's body is malformed (400), or stopped coming (408).
    BadBody(&'static [u8]),
    /// The client closed or failed while its body was being forwarded.
    ClientGone,
}

/// Whose fault a failed response was.
enum Fault {
    Backend,
    Client,
}

/// What choosing a node and sending the request came to.
enum Outcome<'g> {
    /// A response head is in `rbuf`.
    Response { idx: u16, conn: TcpStream, info: RespInfo, active: ActiveGuard<'g> },
    /// Answered (503) and the connection goes on.
    KeepAlive,
    /// Answered, or the client is gone: the connection is over.
    Close,
}

pub(crate) async fn serve<S>(client: S, peer: SocketAddr, shared: &ListenerShared, https: bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut cache = Cache::new(Arc::clone(&shared.state));
    let idle = tokio::time::sleep(shared.settings.client_idle_timeout);
    tokio::pin!(idle);
    let ip_text = peer.ip().to_string();
    let (buf, out, rbuf) = (Vec::new(), Vec::new(), Vec::new());
    let mut c = Conn { client, shared, https, peer, ip_text, buf, out, rbuf, idle };
    while let Some(prep) = c.read_head().await {
        c.rearm();
        if !c.exchange(prep, cache.load()).await {
            return;
        }
        c.rearm();
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<'_, S> {
    fn rearm(&mut self) {
        self.idle.as_mut().reset(Instant::now() + self.shared.settings.client_idle_timeout);
    }

    /// Reads until a complete request head is in `buf` and prepares the outgoing head in `out`.
    /// None when the connection is over (closed by the client, or answered with an error).
    async fn read_head(&mut self) -> Option<Prepared> {
        let max_head = self.shared.settings.max_header_bytes;
        loop {
            if !self.buf.is_empty() {
                let why = match request::prepare(&self.buf, &mut self.out, self.ip_text.as_bytes(), self.https) {
                    Ok(p) if p.head_len <= max_head => return Some(p),
                    Ok(_) => "request head too large",
                    Err(Reject::Partial) if self.buf.len() >= max_head => "request head too large",
                    Err(Reject::Partial) => "",
                    Err(Reject::Bad(why)) => why,
                };
                if !why.is_empty() {
                    tracing::debug!(peer = %self.peer, why, "request refused");
                    reply(&mut self.client, self.shared, R400).await;
                    return None;
                }
            }
            if !self.read_more().await {
                return None;
            }
        }
    }

    /// Reads more of a request head. False when the client closed or failed, or when the idle
    /// timeout passed (answered 408 when a request had started).
    async fn read_more(&mut self) -> bool {
        let Conn { client, shared, buf, idle, .. } = self;
        // Until the client sends its first bytes no buffer is allocated: an idle connection
        // costs its task and socket only.
        let unallocated = buf.capacity() == 0;
        if !unallocated {
            reserve(buf);
        }
        let read = async {
            if unallocated {
                let mut first = [0u8; 256];
                let n = client.read(&mut first).await?;
                buf.reserve(4096);
                buf.extend_from_slice(&first[..n]);
                Ok(n)
            } else {
                client.read_buf(buf).await
            }
        };
        tokio::select! {
            biased;
            r = read => match r {
                Ok(0) | Err(_) => false,
                Ok(n) => {
                    shared.stats.add_in(n);
                    true
                }
            },
            _ = idle.as_mut() => {
                if !buf.is_empty() {
                    reply(client, shared, R408).await;
                }
                false
            }
        }
    }

    /// Handles one request whose head is prepared; false when the connection is over.
    async fn exchange(&mut self, prep: Prepared, cur: &Gen) -> bool {
        // The part of the body already read goes with the head.
        let mut framing = prep.framing;
        let Ok((k, done)) = framing.take(&self.buf[prep.head_len..]) else {
            reply(&mut self.client, self.shared, R400).await;
            return false;
        };
        self.out.extend_from_slice(&self.buf[prep.head_len..prep.head_len + k]);
        let consumed = prep.head_len + k;
        if !done && prep.expect_continue && self.client.write_all(R100).await.is_err() {
            return false;
        }
        let cookie = if cur.stickiness == Stickiness::HttpCookie { prep.cookie } else { None };
        let mut req = Req { prep, framing, consumed, replayable: done, body_sent: done };
        match self.dispatch(cur, &mut req, cookie).await {
            Outcome::Response { idx, conn, info, active } => {
                // The request is sent: `buf` now holds only what the client sent after it.
                self.buf.drain(..req.consumed);
                let go_on = self.forward_response(cur, idx, conn, info, &req.prep).await;
                drop(active);
                go_on
            }
            Outcome::KeepAlive => true,
            Outcome::Close => false,
        }
    }

    /// Chooses a node (stickiness first), sends the request and reads the response head,
    /// retrying on another connection or node where that is safe.
    async fn dispatch<'g>(&mut self, cur: &'g Gen, req: &mut Req, cookie: Option<u64>) -> Outcome<'g> {
        let shared = self.shared;
        let mut tried = [u16::MAX; MAX_TRIES];
        let mut t = 0;
        loop {
            let Some(choice) = cur.choose(&shared.rr, self.peer.ip(), cookie, &tried[..t]) else {
                return self.no_node(t == 0, req).await;
            };
            tried[t] = choice.idx;
            t += 1;
            let node = &cur.nodes[choice.idx as usize];
            let active = ActiveGuard::new(&node.shared);
            let set_cookie = choice.set_cookie.then_some(node.token);
            // A request whose body is still arriving cannot be replayed: give it a fresh connection.
            let mut pooled = if req.replayable { node.shared.take_idle() } else { None };
            loop {
                let was_pooled = pooled.is_some();
                let mut conn = match pooled.take() {
                    Some(c) => c,
                    None => match backend::connect(shared, cur, choice.idx).await {
                        Some(c) => c,
                        None if t < MAX_TRIES => break,
                        None => return self.answer(R502).await,
                    },
                };
                let failed = match self.send(&mut conn, req, set_cookie).await {
                    Sent::Head(info) => return Outcome::Response { idx: choice.idx, conn, info, active },
                    // A stale pooled connection: once more on a fresh one.
                    Sent::Stale if was_pooled => continue,
                    Sent::Stale if req.replayable && t < MAX_TRIES => None,
                    Sent::Stale | Sent::BadBackend => Some(R502),
                    Sent::Timeout => Some(R504),
                    Sent::BadBody(answer) => return self.answer(answer).await,
                    Sent::ClientGone => return Outcome::Close,
                };
                shared.passive_failure(cur, node);
                match failed {
                    Some(answer) => return self.answer(answer).await,
                    None => break,
                }
            }
        }
    }

    /// No node may take the request: 503 on the first choice (the connection goes on when the
    /// request was read whole), 502 once nodes were tried.
    async fn no_node(&mut self, first: bool, req: &Req) -> Outcome<'static> {
        if !first {
            return self.answer(R502).await;
        }
        if !(req.replayable && req.prep.keep_alive) {
            return self.answer(R503_CLOSE).await;
        }
        if write_counted(&mut self.client, self.shared, R503).await.is_err() {
            return Outcome::Close;
        }
        self.buf.drain(..req.consumed);
        Outcome::KeepAlive
    }

    async fn answer(&mut self, bytes: &[u8]) -> Outcome<'static> {
        reply(&mut self.client, self.shared, bytes).await;
        Outcome::Close
    }

    /// Sends the request on `conn` (head and buffered body from `out`, then the rest of the body
    /// from the client) and reads the final response head into `rbuf`, forwarding interim heads.
    async fn send(&mut self, conn: &mut TcpStream, req: &mut Req, set_cookie: Option<u64>) -> Sent {
        if conn.write_all(&self.out).await.is_err() {
            return Sent::Stale;
        }
        if !req.body_sent {
            // The body goes on beyond what was buffered: stream it (this request cannot be replayed).
            self.buf.drain(..req.consumed);
            req.consumed = 0;
            let idle = self.shared.settings.client_idle_timeout;
            match io::stream_body(&mut self.client, conn, &mut req.framing, &mut self.buf, idle, None).await {
                Ok((read, _)) => self.shared.stats.add_in(read),
                Err(StreamError::SrcBad) => return Sent::BadBody(R400),
                Err(StreamError::SrcTimeout) => return Sent::BadBody(R408),
                Err(StreamError::SrcClosed | StreamError::SrcIo) => return Sent::ClientGone,
                Err(StreamError::Dst) => return Sent::BadBackend,
            }
            req.body_sent = true;
            self.rearm();
        }
        let p = &req.prep;
        let ctx =
            ReqCtx { is_head: p.is_head, http10: p.http10, keep_alive: p.keep_alive, upgrade: p.upgrade, set_cookie };
        self.read_response_head(conn, &ctx).await
    }

    /// Reads a response head into `rbuf` (written anew there when it had to change); interim
    /// `1xx` heads are forwarded (not to HTTP/1.0 clients) and skipped.
    async fn read_response_head(&mut self, conn: &mut TcpStream, ctx: &ReqCtx) -> Sent {
        self.rbuf.clear();
        loop {
            reserve(&mut self.rbuf);
            tokio::select! {
                biased;
                r = conn.read_buf(&mut self.rbuf) => match r {
                    Ok(0) | Err(_) if self.rbuf.is_empty() => return Sent::Stale,
                    Ok(0) | Err(_) => return Sent::BadBackend,
                    Ok(_) => {}
                },
                _ = self.idle.as_mut() => return Sent::Timeout,
            }
            loop {
                let info = match response::inspect(&self.rbuf, &mut self.out, ctx) {
                    Err(why) => {
                        tracing::debug!(peer = %self.peer, why, "back end response refused");
                        return Sent::BadBackend;
                    }
                    Ok(None) if self.rbuf.len() > MAX_RESPONSE_HEAD => return Sent::BadBackend,
                    Ok(None) => break,
                    Ok(Some(info)) => info,
                };
                let info = if info.rewritten {
                    // The new head goes first in `rbuf`, followed by what came after the old one.
                    let head_len = self.out.len();
                    self.out.extend_from_slice(&self.rbuf[info.head_len..]);
                    std::mem::swap(&mut self.rbuf, &mut self.out);
                    RespInfo { head_len, rewritten: false, ..info }
                } else {
                    info
                };
                if !(100..200).contains(&info.status) || (info.status == 101 && ctx.upgrade) {
                    return Sent::Head(info);
                }
                if !ctx.http10 {
                    if self.client.write_all(&self.rbuf[..info.head_len]).await.is_err() {
                        return Sent::ClientGone;
                    }
                    self.shared.stats.add_out(info.head_len);
                }
                self.rbuf.drain(..info.head_len);
                if self.rbuf.is_empty() {
                    break;
                }
            }
        }
    }

    /// Forwards the response whose head is in `rbuf`; false when the connection is over.
    async fn forward_response(
        &mut self,
        cur: &Gen,
        idx: u16,
        mut conn: TcpStream,
        mut info: RespInfo,
        prep: &Prepared,
    ) -> bool {
        let shared = self.shared;
        let node = &cur.nodes[idx as usize];
        if info.status >= 500 {
            shared.passive_failure(cur, node);
        }
        if info.status == 101 && prep.upgrade {
            io::tunnel(&mut self.client, &mut conn, &self.rbuf, &self.buf, shared).await;
            return false;
        }
        let (done, reusable) = match self.forward_first(&mut info).await {
            Ok(r) => r,
            Err(Fault::Backend) => {
                tracing::debug!(peer = %self.peer, "malformed response body");
                shared.passive_failure(cur, node);
                reply(&mut self.client, shared, R502).await;
                return false;
            }
            Err(Fault::Client) => return false,
        };
        let mut reusable = reusable && info.backend_keep;
        if !done {
            self.rbuf.clear();
            let mut payload = std::mem::take(&mut self.out);
            let decode = info.decode.then_some(&mut payload);
            let idle = shared.settings.client_idle_timeout;
            let r = io::stream_body(&mut conn, &mut self.client, &mut info.framing, &mut self.rbuf, idle, decode).await;
            self.out = payload;
            match r {
                Ok((_, written)) => shared.stats.add_out(written),
                Err(StreamError::Dst) => return false,
                Err(_) => {
                    shared.passive_failure(cur, node);
                    return false;
                }
            }
            reusable &= self.rbuf.is_empty();
        }
        if self.client.flush().await.is_err() {
            return false;
        }
        if reusable {
            node.shared.put_idle(conn, shared.settings.max_idle_backend_per_node);
        }
        if info.client_close || !prep.keep_alive {
            let _ = self.client.shutdown().await;
            return false;
        }
        self.release_buffers();
        true
    }

    /// Writes the head and the part of the body read with it (unless that part is malformed:
    /// nothing was sent yet). Returns (body complete, nothing read past its end).
    async fn forward_first(&mut self, info: &mut RespInfo) -> Result<(bool, bool), Fault> {
        let body = &self.rbuf[info.head_len..];
        let taken = if info.decode {
            self.out.clear();
            self.out.extend_from_slice(&self.rbuf[..info.head_len]);
            info.framing.take_decoded(body, &mut self.out)
        } else {
            info.framing.take(body)
        };
        let (k, done) = taken.map_err(|_| Fault::Backend)?;
        let first = if info.decode { &self.out[..] } else { &self.rbuf[..info.head_len + k] };
        self.client.write_all(first).await.map_err(|_| Fault::Client)?;
        self.shared.stats.add_out(first.len());
        Ok((done, !done || info.head_len + k == self.rbuf.len()))
    }

    fn release_buffers(&mut self) {
        if self.rbuf.capacity() > KEEP_BUFFER {
            self.rbuf = Vec::new();
        }
        if self.out.capacity() > KEEP_BUFFER {
            self.out = Vec::new();
        }
        if self.buf.capacity() > KEEP_BUFFER && self.buf.len() < 4096 {
            self.buf.shrink_to(4096);
        }
    }
}
