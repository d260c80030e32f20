//! Response heads from a back end: parsed and checked against RFC 9112 §6.3, and written anew
//! when something must change. The common case (nothing to change) is forwarded byte for byte.
//!
//! A response is refused (502 to the client, the back-end connection closed) when `httparse`
//! refuses it (see `request.rs`), when its status is outside 100-599, when it is a `101` the
//! client did not ask for, when it carries both `Transfer-Encoding` and `Content-Length`, a
//! malformed or conflicting `Content-Length`, or a malformed `Transfer-Encoding`. Responses to
//! `HEAD` and `1xx`/`204`/`304` have no body; a `Transfer-Encoding` whose final coding is not
//! `chunked`, or no framing field at all, means the body runs until the back end closes: it is
//! passed on with `Connection: close`. A chunked body for an HTTP/1.0 client is decoded and
//! ends at close.

use std::mem::MaybeUninit;

use super::chunked::{Chunked, Framing};
use super::framing::{self, ConnectionOpts, ContentLength, Hdr, ResponseCodings};
use super::request::MAX_HEADERS;
use crate::sticky;

/// What a response head says.
#[derive(Debug)]
pub(super) struct RespInfo {
    pub(super) head_len: usize,
    pub(super) status: u16,
    pub(super) framing: Framing,
    /// The back-end connection may be reused after this response.
    pub(super) backend_keep: bool,
    /// The client connection must be closed after this response.
    pub(super) client_close: bool,
    /// The chunked body is decoded for an HTTP/1.0 client.
    pub(super) decode: bool,
    /// The head was written anew into the `out` buffer given to [`inspect`].
    pub(super) rewritten: bool,
}

/// What the request said that shapes its response.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReqCtx {
    pub(super) is_head: bool,
    pub(super) http10: bool,
    pub(super) keep_alive: bool,
    pub(super) upgrade: bool,
    pub(super) set_cookie: Option<u64>,
}

#[derive(Default)]
struct Fields {
    conn: ConnectionOpts,
    /// A hop-by-hop field to remove.
    hop: bool,
    codings: ResponseCodings,
    length: ContentLength,
}

fn scan(headers: &[httparse::Header<'_>]) -> Result<Fields, &'static str> {
    let mut f = Fields::default();
    for h in headers {
        match framing::classify(h.name) {
            Hdr::Connection => f.conn.add(h.value),
            Hdr::HopByHop | Hdr::Upgrade => f.hop = true,
            Hdr::TransferEncoding => f.codings.add(h.value)?,
            Hdr::ContentLength => f.length.add(h.value)?,
            _ => {}
        }
    }
    if f.codings.present && f.length.value.is_some() {
        return Err("both Transfer-Encoding and Content-Length");
    }
    Ok(f)
}

/// Parses a response head in `rbuf`; when it must change, writes the new head into `out`.
/// `Ok(None)` while the head is incomplete.
pub(super) fn inspect(rbuf: &[u8], out: &mut Vec<u8>, ctx: &ReqCtx) -> Result<Option<RespInfo>, &'static str> {
    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let head_len =
        match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, rbuf, &mut headers) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err("malformed response head"),
        };
    let status = resp.code.ok_or("no status")?;
    if !(100..=599).contains(&status) || (status == 101 && !ctx.upgrade) {
        return Err("unexpected status");
    }
    let f = scan(resp.headers)?;
    let interim = (100..200).contains(&status);
    let framing = if ctx.is_head || interim || status == 204 || status == 304 {
        Framing::Empty
    } else if f.codings.chunked_last {
        Framing::Chunked(Chunked::new())
    } else if f.codings.present {
        Framing::UntilClose
    } else {
        match f.length.value {
            Some(0) => Framing::Empty,
            Some(n) => Framing::Length(n),
            None => Framing::UntilClose,
        }
    };
    let until_close = matches!(framing, Framing::UntilClose);
    let decode = ctx.http10 && matches!(framing, Framing::Chunked(_));
    let backend_http10 = resp.version == Some(0);
    let backend_keep = !f.conn.close && !until_close && (!backend_http10 || f.conn.keep_alive);
    let bare_lf = framing::has_bare_lf(&rbuf[..head_len]);
    let reason = resp.reason.unwrap_or("");
    if interim {
        if bare_lf {
            write_status(out, status, reason);
            resp.headers.iter().for_each(|h| push_header(out, h.name.as_bytes(), h.value));
            out.extend_from_slice(b"\r\n");
        }
        let info =
            RespInfo { head_len, status, framing, backend_keep, client_close: false, decode, rewritten: bare_lf };
        return Ok(Some(info));
    }
    let client_close = !ctx.keep_alive || until_close || decode;
    let rewrite = ctx.set_cookie.is_some()
        || client_close
        || ctx.http10
        || backend_http10
        || f.hop
        || f.conn.close
        || f.conn.others
        || f.length.repeated
        || bare_lf;
    if rewrite {
        write_status(out, status, reason);
        write_fields(out, resp.headers, &f, ctx.http10);
        write_connection(out, ctx, client_close);
    }
    Ok(Some(RespInfo { head_len, status, framing, backend_keep, client_close, decode, rewritten: rewrite }))
}

fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// The status line, in the proxy's own version (RFC 9110 §2.5).
fn write_status(out: &mut Vec<u8>, status: u16, reason: &str) {
    out.clear();
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(&[b'0' + (status / 100) as u8, b'0' + (status / 10 % 10) as u8, b'0' + (status % 10) as u8]);
    out.push(b' ');
    out.extend_from_slice(reason.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The end-to-end fields; `Content-Length` once, canonical; no `Transfer-Encoding` for an
/// HTTP/1.0 client (its body is decoded).
fn write_fields(out: &mut Vec<u8>, headers: &[httparse::Header<'_>], f: &Fields, http10: bool) {
    for h in headers {
        let keep = match framing::classify(h.name) {
            Hdr::Connection | Hdr::HopByHop | Hdr::Upgrade | Hdr::ContentLength => false,
            Hdr::TransferEncoding => !http10,
            _ => !(f.conn.others && framing::nominated(headers, h.name)),
        };
        if keep {
            push_header(out, h.name.as_bytes(), h.value);
        }
    }
    if let Some(n) = f.length.value {
        framing::push_content_length(out, n);
    }
}

fn write_connection(out: &mut Vec<u8>, ctx: &ReqCtx, client_close: bool) {
    if let Some(t) = ctx.set_cookie {
        out.extend_from_slice(b"Set-Cookie: ");
        out.extend_from_slice(sticky::COOKIE_NAME.as_bytes());
        out.push(b'=');
        out.extend_from_slice(sticky::format_token(t).as_bytes());
        out.extend_from_slice(b"; Path=/; HttpOnly\r\n");
    }
    if client_close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if ctx.http10 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: ReqCtx = ReqCtx { is_head: false, http10: false, keep_alive: true, upgrade: false, set_cookie: None };

    fn inspect_str(r: &[u8], ctx: ReqCtx) -> (RespInfo, String) {
        let mut out = Vec::new();
        let i = inspect(r, &mut out, &ctx).unwrap().unwrap();
        (i, String::from_utf8(out).unwrap())
    }

    #[test]
    fn plain_response_is_forwarded_unchanged() {
        let r = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
        let (i, _) = inspect_str(r, CTX);
        assert!(!i.rewritten && i.backend_keep && !i.client_close);
        assert!(matches!(i.framing, Framing::Length(3)));
    }

    #[test]
    fn response_gets_cookie_and_close() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
        let (i, s) = inspect_str(r, ReqCtx { keep_alive: false, set_cookie: Some(0xab), ..CTX });
        assert!(i.rewritten && i.client_close);
        assert!(s.contains("Set-Cookie: NB_SRVID=00000000000000ab; Path=/; HttpOnly\r\n"), "{s}");
        assert!(s.ends_with("Connection: close\r\n\r\n"), "{s}");
        assert!(!s.contains("keep-alive"), "{s}");
    }

    #[test]
    fn response_without_length_is_read_until_close() {
        let (i, s) = inspect_str(b"HTTP/1.1 200 OK\r\n\r\nabc", CTX);
        assert!(matches!(i.framing, Framing::UntilClose));
        assert!(!i.backend_keep && i.client_close && i.rewritten);
        assert!(s.ends_with("Connection: close\r\n\r\n"), "{s}");
        let (i, _) = inspect_str(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc", CTX);
        assert!(matches!(i.framing, Framing::UntilClose) && i.client_close);
    }

    #[test]
    fn ambiguous_responses_are_refused() {
        for r in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX : a\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
            b"HTTP/1.1 600 Odd\r\n\r\n",
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
            b"HTTP/2 200 OK\r\n\r\n",
        ] {
            assert!(inspect(r, &mut Vec::new(), &CTX).is_err(), "{}", String::from_utf8_lossy(r));
        }
    }

    #[test]
    fn no_body_responses() {
        let head = ReqCtx { is_head: true, ..CTX };
        for (r, ctx) in [
            (&b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"[..], head),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", head),
            (b"HTTP/1.1 204 No Content\r\n\r\n", CTX),
            (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", CTX),
            (b"HTTP/1.1 100 Continue\r\n\r\n", CTX),
        ] {
            let (i, _) = inspect_str(r, ctx);
            assert!(matches!(i.framing, Framing::Empty) && i.backend_keep, "{}", String::from_utf8_lossy(r));
        }
    }

    #[test]
    fn heads_are_normalized() {
        let (i, s) =
            inspect_str(b"HTTP/1.1 200 OK\nContent-Length: 2, 2\nConnection: X-Hop\nX-Hop: 1\nKeep-Alive: 1\n\n", CTX);
        assert!(i.rewritten && i.backend_keep);
        assert_eq!(s, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
        let (i, s) = inspect_str(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n", CTX);
        assert!(i.rewritten && !i.backend_keep && s.starts_with("HTTP/1.1 200 OK\r\n"), "{s}");
    }

    #[test]
    fn chunked_is_decoded_for_http10_clients() {
        let ctx = ReqCtx { http10: true, keep_alive: true, ..CTX };
        let (i, s) = inspect_str(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", ctx);
        assert!(i.decode && i.client_close && i.backend_keep);
        assert_eq!(s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    }
}
