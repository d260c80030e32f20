//! `http` (and, after TLS, `https`) configs: a lean HTTP/1.1 reverse proxy built on `httparse`.
//!
//! Per client connection: keep-alive and pipelining, a node chosen per request (stickiness first),
//! pooled keep-alive back-end connections (a stale pooled connection is retried once on a fresh
//! one), `X-Forwarded-For` appended and `X-Forwarded-Proto` set, hop-by-hop headers removed, bodies
//! streamed (fixed length, chunked or until close), `Expect: 100-continue` answered by the
//! balancer, `Upgrade` (e.g. WebSocket) tunnelled after a `101`. `503` when no node is available,
//! `502` when the back end fails, `504` when it does not answer within the idle timeout, `431`
//! for an oversized request head, `408` when a started head does not complete in time.
//!
//! The common case (a response with nothing to change) is forwarded byte for byte in one write.

use std::net::SocketAddr;
use std::sync::Arc;

use arc_swap::Cache;
use nubis_model::balancer::Stickiness;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::backend::{self, MAX_TRIES};
use crate::chunked::{Chunked, Framing};
use crate::node::ActiveGuard;
use crate::state::{Choice, ListenerShared};
use crate::sticky;

const MAX_HEADERS: usize = 100;
/// Largest response head accepted from a back end.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;
const READ_CHUNK: usize = 16 * 1024;

// Canned answers; their lengths are checked by a unit test.
const R400: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\nConnection: close\r\n\r\nBad request\n";
const R408: &[u8] = b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 16\r\nConnection: close\r\n\r\nRequest timeout\n";
const R431: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 25\r\nConnection: close\r\n\r\nRequest header too large\n";
const R501: &[u8] = b"HTTP/1.1 501 Not Implemented\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 30\r\nConnection: close\r\n\r\nTransfer-Encoding unsupported\n";
const R502: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 24\r\nConnection: close\r\n\r\nThe back end has failed\n";
const R503: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\nNo back end is available.\n";
const R503_CLOSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\nConnection: close\r\n\r\nNo back end is available.\n";
const R504: &[u8] = b"HTTP/1.1 504 Gateway Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 29\r\nConnection: close\r\n\r\nThe back end did not answer.\n";
const R100: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// What the request head says, once rewritten into the outgoing head.
#[derive(Debug)]
struct Prepared {
    head_len: usize,
    framing: Framing,
    keep_alive: bool,
    http10: bool,
    is_head: bool,
    cookie: Option<u64>,
    upgrade: bool,
    expect_continue: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum Reject {
    Partial,
    TooLarge,
    Bad,
    NotImplemented,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hdr {
    Connection,
    HopByHop,
    Upgrade,
    TransferEncoding,
    ContentLength,
    Xff,
    Xfp,
    Cookie,
    Expect,
    Other,
}

fn classify(name: &str) -> Hdr {
    let eq = |s: &str| name.eq_ignore_ascii_case(s);
    match name.len() {
        2 if eq("te") => Hdr::HopByHop,
        6 if eq("cookie") => Hdr::Cookie,
        6 if eq("expect") => Hdr::Expect,
        7 if eq("upgrade") => Hdr::Upgrade,
        7 if eq("trailer") => Hdr::HopByHop,
        10 if eq("connection") => Hdr::Connection,
        10 if eq("keep-alive") => Hdr::HopByHop,
        14 if eq("content-length") => Hdr::ContentLength,
        15 if eq("x-forwarded-for") => Hdr::Xff,
        16 if eq("proxy-connection") => Hdr::HopByHop,
        17 if eq("transfer-encoding") => Hdr::TransferEncoding,
        17 if eq("x-forwarded-proto") => Hdr::Xfp,
        _ => Hdr::Other,
    }
}

fn tokens(v: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    v.split(|&b| b == b',').map(|t| t.trim_ascii())
}

fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn parse_len(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// Parses a request head in `buf` and writes the head to send to the back end into `out`.
fn prepare(buf: &[u8], out: &mut Vec<u8>, client_ip: &[u8], https: bool) -> Result<Prepared, Reject> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(Reject::Partial),
        Err(httparse::Error::TooManyHeaders) => return Err(Reject::TooLarge),
        Err(_) => return Err(Reject::Bad),
    };
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Err(Reject::Bad);
    };
    out.clear();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let (mut close, mut ka, mut conn_upgrade) = (false, false, false);
    let mut upgrade_value: Option<&[u8]> = None;
    let mut chunked = false;
    let mut other_te = false;
    let mut length: Option<u64> = None;
    let mut xff: Option<Vec<u8>> = None;
    let mut cookie = None;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        match classify(h.name) {
            Hdr::Connection => {
                for t in tokens(h.value) {
                    if t.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if t.eq_ignore_ascii_case(b"keep-alive") {
                        ka = true;
                    } else if t.eq_ignore_ascii_case(b"upgrade") {
                        conn_upgrade = true;
                    }
                }
            }
            Hdr::HopByHop => {}
            Hdr::Upgrade => upgrade_value = Some(h.value),
            Hdr::TransferEncoding => {
                let last = tokens(h.value).rfind(|t| !t.is_empty());
                match last {
                    Some(t) if t.eq_ignore_ascii_case(b"chunked") => chunked = true,
                    _ => other_te = true,
                }
                push_header(out, h.name.as_bytes(), h.value);
            }
            Hdr::ContentLength => {
                let v = parse_len(h.value.trim_ascii()).ok_or(Reject::Bad)?;
                if length.is_some_and(|l| l != v) {
                    return Err(Reject::Bad);
                }
                if length.is_none() {
                    push_header(out, h.name.as_bytes(), h.value);
                }
                length = Some(v);
            }
            Hdr::Xff => {
                let x = xff.get_or_insert_with(Vec::new);
                if !x.is_empty() {
                    x.extend_from_slice(b", ");
                }
                x.extend_from_slice(h.value.trim_ascii());
            }
            Hdr::Xfp => {}
            Hdr::Cookie => {
                if cookie.is_none() {
                    cookie = sticky::cookie_token(std::iter::once(h.value));
                }
                push_header(out, h.name.as_bytes(), h.value);
            }
            Hdr::Expect => {
                if h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue") {
                    expect_continue = true;
                } else {
                    push_header(out, h.name.as_bytes(), h.value);
                }
            }
            Hdr::Other => push_header(out, h.name.as_bytes(), h.value),
        }
    }
    out.extend_from_slice(b"X-Forwarded-For: ");
    if let Some(x) = &xff {
        out.extend_from_slice(x);
        out.extend_from_slice(b", ");
    }
    out.extend_from_slice(client_ip);
    out.extend_from_slice(if https { b"\r\nX-Forwarded-Proto: https\r\n" } else { b"\r\nX-Forwarded-Proto: http\r\n" });
    let upgrade = conn_upgrade && upgrade_value.is_some();
    if let (true, Some(v)) = (upgrade, upgrade_value) {
        out.extend_from_slice(b"Connection: Upgrade\r\n");
        push_header(out, b"Upgrade", v);
    }
    out.extend_from_slice(b"\r\n");
    let http10 = version == 0;
    let mut keep_alive = if http10 { ka && !close } else { !close };
    let framing = if chunked {
        if length.is_some() {
            // Both framings: chunked wins, and the connection is not reused (RFC 9112 6.3).
            keep_alive = false;
        }
        Framing::Chunked(Chunked::new())
    } else if other_te {
        return Err(Reject::NotImplemented);
    } else {
        match length {
            Some(0) | None => Framing::Empty,
            Some(n) => Framing::Length(n),
        }
    };
    Ok(Prepared { head_len, framing, keep_alive, http10, is_head: method == "HEAD", cookie, upgrade, expect_continue })
}

/// What a response head says.
struct RespInfo {
    head_len: usize,
    status: u16,
    framing: Framing,
    /// The back-end connection may be reused after this response.
    backend_keep: bool,
    /// The client connection must be closed after this response.
    client_close: bool,
    /// The head was rewritten into the `out` buffer given to [`inspect_response`].
    rewritten: bool,
}

/// Parses a response head in `rbuf`; when it must change, writes the new head into `out`.
fn inspect_response(
    rbuf: &[u8],
    out: &mut Vec<u8>,
    is_head: bool,
    set_cookie: Option<u64>,
    client_keep_alive: bool,
    http10: bool,
) -> Result<Option<RespInfo>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let head_len = match resp.parse(rbuf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let status = resp.code.ok_or(())?;
    let backend_http10 = resp.version == Some(0);
    let (mut close, mut ka, mut hop) = (false, false, false);
    let mut conn_other = false;
    let mut chunked = false;
    let mut other_te = false;
    let mut length: Option<u64> = None;
    for h in resp.headers.iter() {
        match classify(h.name) {
            Hdr::Connection => {
                for t in tokens(h.value) {
                    if t.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if t.eq_ignore_ascii_case(b"keep-alive") {
                        ka = true;
                    } else {
                        conn_other = true;
                    }
                }
            }
            Hdr::HopByHop => hop = true,
            Hdr::TransferEncoding => {
                let last = tokens(h.value).rfind(|t| !t.is_empty());
                match last {
                    Some(t) if t.eq_ignore_ascii_case(b"chunked") => chunked = true,
                    _ => other_te = true,
                }
            }
            Hdr::ContentLength => {
                let v = parse_len(h.value.trim_ascii()).ok_or(())?;
                if length.is_some_and(|l| l != v) {
                    return Err(());
                }
                length = Some(v);
            }
            _ => {}
        }
    }
    let no_body = is_head || status == 204 || status == 304 || (100..200).contains(&status);
    let framing = if no_body {
        Framing::Empty
    } else if chunked {
        Framing::Chunked(Chunked::new())
    } else if other_te {
        Framing::UntilClose
    } else {
        match length {
            Some(0) => Framing::Empty,
            Some(n) => Framing::Length(n),
            None => Framing::UntilClose,
        }
    };
    let until_close = matches!(framing, Framing::UntilClose);
    let backend_keep = !close && !until_close && (!backend_http10 || ka);
    let client_close = !client_keep_alive || until_close;
    if (100..200).contains(&status) {
        return Ok(Some(RespInfo { head_len, status, framing, backend_keep, client_close: false, rewritten: false }));
    }
    let rewrite = set_cookie.is_some() || client_close || http10 || hop || conn_other || close;
    if rewrite {
        out.clear();
        let line_end = rbuf.iter().position(|&b| b == b'\n').ok_or(())? + 1;
        out.extend_from_slice(&rbuf[..line_end]);
        for h in resp.headers.iter() {
            if !matches!(classify(h.name), Hdr::Connection | Hdr::HopByHop) {
                push_header(out, h.name.as_bytes(), h.value);
            }
        }
        if let Some(t) = set_cookie {
            out.extend_from_slice(b"Set-Cookie: ");
            out.extend_from_slice(sticky::COOKIE_NAME.as_bytes());
            out.push(b'=');
            out.extend_from_slice(sticky::format_token(t).as_bytes());
            out.extend_from_slice(b"; Path=/; HttpOnly\r\n");
        }
        if client_close {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if http10 {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }
    Ok(Some(RespInfo { head_len, status, framing, backend_keep, client_close, rewritten: rewrite }))
}

/// Room to read into: 4 KiB at first, doubling while a head or body needs more.
fn reserve(buf: &mut Vec<u8>) {
    if buf.capacity() - buf.len() < 1024 {
        buf.reserve(buf.capacity().clamp(4096, READ_CHUNK));
    }
}

/// Buffers larger than this are released between requests (a big body went through).
const KEEP_BUFFER: usize = 32 * 1024;

/// Forwards the rest of a body from `src` to `dst`; `buf` must be empty on entry and holds the
/// bytes read past the end of the body on return. Returns (bytes read, bytes written).
async fn stream_body<R, W>(
    src: &mut R,
    dst: &mut W,
    framing: &mut Framing,
    buf: &mut Vec<u8>,
    idle: std::time::Duration,
) -> std::io::Result<(usize, usize)>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut read, mut written) = (0, 0);
    loop {
        buf.clear();
        reserve(buf);
        let n = match tokio::time::timeout(idle, src.read_buf(buf)).await {
            Ok(r) => r?,
            Err(_) => return Err(std::io::ErrorKind::TimedOut.into()),
        };
        read += n;
        if n == 0 {
            return if matches!(framing, Framing::UntilClose) {
                Ok((read, written))
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        let (k, done) = framing.take(buf).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
        dst.write_all(&buf[..k]).await?;
        written += k;
        buf.drain(..k);
        if done {
            return Ok((read, written));
        }
    }
}

/// Result of sending a request on one back-end connection.
enum Sent {
    /// A complete response head is in `rbuf`.
    Head(RespInfo),
    /// The connection failed before any response byte (a stale pooled connection, or a reset).
    Failed,
    /// The back end answered with something that is not HTTP, or failed mid-way.
    Bad,
    /// No response within the idle timeout.
    Timeout,
}

pub(crate) async fn serve<S>(mut client: S, peer: SocketAddr, shared: &ListenerShared, https: bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let settings = &shared.settings;
    let idle_for = settings.client_idle_timeout;
    let max_head = settings.max_header_bytes;
    let mut cache = Cache::new(Arc::clone(&shared.state));
    let mut buf: Vec<u8> = Vec::new();
    let mut out: Vec<u8> = Vec::new();
    let mut rbuf: Vec<u8> = Vec::new();
    let ip = peer.ip();
    let ip_text = ip.to_string();
    let idle = tokio::time::sleep(idle_for);
    tokio::pin!(idle);
    loop {
        // 1. A complete request head.
        let prep = loop {
            if !buf.is_empty() {
                match prepare(&buf, &mut out, ip_text.as_bytes(), https) {
                    Ok(p) if p.head_len > max_head => {
                        return reply(&mut client, shared, R431).await;
                    }
                    Ok(p) => break p,
                    Err(Reject::Partial) => {}
                    Err(Reject::TooLarge) => return reply(&mut client, shared, R431).await,
                    Err(Reject::Bad) => return reply(&mut client, shared, R400).await,
                    Err(Reject::NotImplemented) => return reply(&mut client, shared, R501).await,
                }
                if buf.len() >= max_head {
                    return reply(&mut client, shared, R431).await;
                }
            }
            // Until the client sends its first bytes no buffer is allocated: an idle connection
            // costs its task and socket only.
            let unallocated = buf.capacity() == 0;
            if !unallocated {
                reserve(&mut buf);
            }
            let read = async {
                if unallocated {
                    let mut first = [0u8; 256];
                    let n = client.read(&mut first).await?;
                    buf.reserve(4096);
                    buf.extend_from_slice(&first[..n]);
                    Ok(n)
                } else {
                    client.read_buf(&mut buf).await
                }
            };
            tokio::select! {
                biased;
                r = read => match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => shared.stats.add_in(n),
                },
                _ = &mut idle => {
                    if !buf.is_empty() {
                        reply(&mut client, shared, R408).await;
                    }
                    return;
                }
            }
        };
        idle.as_mut().reset(Instant::now() + idle_for);
        let cur = cache.load();

        // 2. The part of the body already read goes with the head.
        let mut req_framing = prep.framing;
        let Ok((k, req_done)) = req_framing.take(&buf[prep.head_len..]) else {
            return reply(&mut client, shared, R400).await;
        };
        out.extend_from_slice(&buf[prep.head_len..prep.head_len + k]);
        let consumed = prep.head_len + k;
        if !req_done && prep.expect_continue && client.write_all(R100).await.is_err() {
            return;
        }
        let cookie = if cur.stickiness == Stickiness::HttpCookie { prep.cookie } else { None };

        // 3. Choose a node, send, and read the response head (retrying where safe).
        let mut tried = [u16::MAX; MAX_TRIES];
        let mut t = 0;
        let mut body_sent = req_done;
        let (choice, mut conn, info, _active) = 'attempts: loop {
            let Some(choice) = cur.choose(&shared.rr, ip, cookie, &tried[..t]) else {
                let r = if t == 0 { R503 } else { R502 };
                if t == 0 && req_done && prep.keep_alive {
                    if write_counted(&mut client, shared, R503).await.is_err() {
                        return;
                    }
                    buf.drain(..consumed);
                    idle.as_mut().reset(Instant::now() + idle_for);
                    break 'attempts (Choice { idx: u16::MAX, set_cookie: false }, None, None, None);
                }
                let r = if r == R503 { R503_CLOSE } else { r };
                return reply(&mut client, shared, r).await;
            };
            tried[t] = choice.idx;
            t += 1;
            let node = &cur.nodes[choice.idx as usize];
            let active = ActiveGuard::new(&node.shared);
            // A request whose body is still arriving cannot be replayed: give it a fresh connection.
            let mut pooled = if req_done { node.shared.take_idle() } else { None };
            let mut fresh_tries = 0;
            loop {
                let mut conn = match pooled.take() {
                    Some(c) => c,
                    None => {
                        fresh_tries += 1;
                        match backend::connect(shared, cur, choice.idx).await {
                            Some(c) => c,
                            None if t < MAX_TRIES => continue 'attempts,
                            None => return reply(&mut client, shared, R502).await,
                        }
                    }
                };
                let set_cookie = choice.set_cookie.then_some(node.token);
                let sent = send(
                    &mut conn,
                    &mut client,
                    &out,
                    &mut buf,
                    consumed,
                    &mut req_framing,
                    &mut body_sent,
                    &mut rbuf,
                    &mut idle,
                    &prep,
                    set_cookie,
                    shared,
                )
                .await;
                match sent {
                    Sent::Head(info) => {
                        break 'attempts (choice, Some(conn), Some(info), Some(active));
                    }
                    Sent::Failed if !req_done => {
                        shared.passive_failure(cur, node);
                        return reply(&mut client, shared, R502).await;
                    }
                    Sent::Failed if fresh_tries == 0 => continue,
                    Sent::Failed => {
                        shared.passive_failure(cur, node);
                        if t < MAX_TRIES {
                            continue 'attempts;
                        }
                        return reply(&mut client, shared, R502).await;
                    }
                    Sent::Bad => {
                        shared.passive_failure(cur, node);
                        return reply(&mut client, shared, R502).await;
                    }
                    Sent::Timeout => {
                        shared.passive_failure(cur, node);
                        return reply(&mut client, shared, R504).await;
                    }
                }
            }
        };
        let (Some(conn_ref), Some(mut info)) = (conn.as_mut(), info) else {
            continue; // answered 503, keep-alive
        };
        let node = &cur.nodes[choice.idx as usize];
        if info.status >= 500 {
            shared.passive_failure(cur, node);
        }

        // 4. Forward the response.
        if info.status == 101 && prep.upgrade {
            let mut backend = conn.take().expect("connection present");
            return tunnel(&mut client, &mut backend, &rbuf, &buf[consumed.min(buf.len())..], shared).await;
        }
        let (k, resp_done) = match info.framing.take(&rbuf[info.head_len..]) {
            Ok(x) => x,
            Err(_) => return reply(&mut client, shared, R502).await,
        };
        let trailing_garbage = resp_done && info.head_len + k < rbuf.len();
        // `send` left the head to forward (possibly rewritten) at the start of `rbuf`.
        match client.write_all(&rbuf[..info.head_len + k]).await {
            Ok(()) => shared.stats.add_out(info.head_len + k),
            Err(_) => return,
        }
        if !resp_done {
            rbuf.clear();
            match stream_body(conn_ref, &mut client, &mut info.framing, &mut rbuf, idle_for).await {
                Ok((_, written)) => shared.stats.add_out(written),
                Err(_) => return,
            }
            if !rbuf.is_empty() {
                info.backend_keep = false;
            }
        }
        if client.flush().await.is_err() {
            return;
        }
        if info.backend_keep
            && !trailing_garbage
            && let Some(c) = conn.take()
        {
            node.shared.put_idle(c, settings.max_idle_backend_per_node);
        }
        if info.client_close || !prep.keep_alive {
            let _ = client.shutdown().await;
            return;
        }
        if req_done {
            buf.drain(..consumed);
        }
        if rbuf.capacity() > KEEP_BUFFER {
            rbuf = Vec::new();
        }
        if buf.capacity() > KEEP_BUFFER && buf.len() < 4096 {
            buf.shrink_to(4096);
        }
        idle.as_mut().reset(Instant::now() + idle_for);
    }
}

/// Sends the request on `conn` (head and buffered body in `out`, then the rest of the body from
/// the client) and reads the final response head into `rbuf`, forwarding interim `1xx` heads.
#[allow(clippy::too_many_arguments)]
async fn send<S>(
    conn: &mut TcpStream,
    client: &mut S,
    out: &[u8],
    buf: &mut Vec<u8>,
    consumed: usize,
    req_framing: &mut Framing,
    body_sent: &mut bool,
    rbuf: &mut Vec<u8>,
    idle: &mut std::pin::Pin<&mut tokio::time::Sleep>,
    prep: &Prepared,
    set_cookie: Option<u64>,
    shared: &ListenerShared,
) -> Sent
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if conn.write_all(out).await.is_err() {
        return Sent::Failed;
    }
    if !*body_sent {
        // The body continues beyond what was buffered: stream it (this request cannot be retried).
        buf.drain(..consumed);
        match stream_body(client, conn, req_framing, buf, shared.settings.client_idle_timeout).await {
            Ok((read, _)) => shared.stats.add_in(read),
            Err(_) => return Sent::Bad,
        }
        *body_sent = true;
    }
    rbuf.clear();
    let mut scratch = Vec::new();
    loop {
        reserve(rbuf);
        tokio::select! {
            biased;
            r = conn.read_buf(rbuf) => match r {
                Ok(0) | Err(_) if rbuf.is_empty() => return Sent::Failed,
                Ok(0) | Err(_) => return Sent::Bad,
                Ok(_) => {}
            },
            _ = idle.as_mut() => return Sent::Timeout,
        }
        loop {
            match inspect_response(rbuf, &mut scratch, prep.is_head, set_cookie, prep.keep_alive, prep.http10) {
                Err(()) => return Sent::Bad,
                Ok(None) if rbuf.len() > MAX_RESPONSE_HEAD => return Sent::Bad,
                Ok(None) => break,
                Ok(Some(info)) if (100..200).contains(&info.status) && !(info.status == 101 && prep.upgrade) => {
                    // Interim response: forward it and read on.
                    if client.write_all(&rbuf[..info.head_len]).await.is_err() {
                        return Sent::Bad;
                    }
                    shared.stats.add_out(info.head_len);
                    rbuf.drain(..info.head_len);
                    if rbuf.is_empty() {
                        break;
                    }
                }
                Ok(Some(info)) => {
                    if info.rewritten {
                        // `scratch` holds the new head; hand it over through `out`'s caller.
                        std::mem::swap(rbuf, &mut scratch);
                        // rbuf now holds the rewritten head; append the bytes after the old head.
                        let old = scratch;
                        let new_head_len = rbuf.len();
                        rbuf.extend_from_slice(&old[info.head_len..]);
                        return Sent::Head(RespInfo { head_len: new_head_len, rewritten: false, ..info });
                    }
                    return Sent::Head(info);
                }
            }
        }
    }
}

/// After a `101 Switching Protocols`: bytes both ways until either side closes.
async fn tunnel<S>(client: &mut S, backend: &mut TcpStream, rbuf: &[u8], pending: &[u8], shared: &ListenerShared)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if client.write_all(rbuf).await.is_err() || backend.write_all(pending).await.is_err() {
        return;
    }
    shared.stats.add_out(rbuf.len());
    if let Ok((a, b)) = tokio::io::copy_bidirectional(client, backend).await {
        shared.stats.add_in(a as usize);
        shared.stats.add_out(b as usize);
    }
}

async fn write_counted<S: AsyncWrite + Unpin>(
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
async fn reply<S: AsyncWrite + Unpin>(client: &mut S, shared: &ListenerShared, bytes: &[u8]) {
    if write_counted(client, shared, bytes).await.is_ok() {
        let _ = client.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content_length_matches(r: &[u8]) -> bool {
        let s = std::str::from_utf8(r).unwrap();
        let (head, body) = s.split_once("\r\n\r\n").unwrap();
        let cl: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
        cl == body.len()
    }

    #[test]
    fn canned_responses_have_right_lengths() {
        for r in [R400, R408, R431, R501, R502, R503, R503_CLOSE, R504] {
            assert!(content_length_matches(r), "{}", String::from_utf8_lossy(r));
        }
    }

    #[test]
    fn request_head_is_rewritten() {
        let mut out = Vec::new();
        let req = b"GET /a?b HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nX-Forwarded-For: 10.1.1.1\r\nX-Forwarded-Proto: https\r\nKeep-Alive: 5\r\n\r\nrest";
        let p = prepare(req, &mut out, b"127.0.0.2", false).unwrap();
        assert_eq!(p.head_len, req.len() - 4);
        assert!(p.keep_alive);
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "GET /a?b HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.1.1.1, 127.0.0.2\r\nX-Forwarded-Proto: http\r\n\r\n"
        );
    }

    #[test]
    fn request_framing_and_keep_alive() {
        let mut out = Vec::new();
        let p = prepare(b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n", &mut out, b"1", true).unwrap();
        assert!(!p.keep_alive && p.http10);
        assert!(matches!(p.framing, Framing::Length(5)));
        let p = prepare(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &mut out, b"1", true).unwrap();
        assert!(matches!(p.framing, Framing::Chunked(_)));
        assert_eq!(prepare(b"GET / HTTP/1.1\r\nHost: x\r\n", &mut out, b"1", true).unwrap_err(), Reject::Partial);
        assert_eq!(
            prepare(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", &mut out, b"1", true).unwrap_err(),
            Reject::Bad
        );
        assert_eq!(
            prepare(b"GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", &mut out, b"1", true).unwrap_err(),
            Reject::NotImplemented
        );
    }

    #[test]
    fn plain_response_is_forwarded_unchanged() {
        let mut out = Vec::new();
        let r = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
        let i = inspect_response(r, &mut out, false, None, true, false).unwrap().unwrap();
        assert!(!i.rewritten && i.backend_keep && !i.client_close);
        assert!(matches!(i.framing, Framing::Length(3)));
    }

    #[test]
    fn response_gets_cookie_and_close() {
        let mut out = Vec::new();
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
        let i = inspect_response(r, &mut out, false, Some(0xab), false, false).unwrap().unwrap();
        assert!(i.rewritten && i.client_close);
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("Set-Cookie: NB_SRVID=00000000000000ab; Path=/; HttpOnly\r\n"), "{s}");
        assert!(s.ends_with("Connection: close\r\n\r\n"), "{s}");
        assert!(!s.contains("keep-alive"), "{s}");
    }

    #[test]
    fn response_without_length_is_read_until_close() {
        let mut out = Vec::new();
        let r = b"HTTP/1.1 200 OK\r\n\r\nabc";
        let i = inspect_response(r, &mut out, false, None, true, false).unwrap().unwrap();
        assert!(matches!(i.framing, Framing::UntilClose));
        assert!(!i.backend_keep && i.client_close && i.rewritten);
    }
}
