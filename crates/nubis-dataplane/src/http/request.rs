//! Request heads: parsed and checked against RFC 9112 / RFC 9110, then written anew for the back
//! end (HTTP/1.1, one canonical framing field, hop-by-hop fields removed, `X-Forwarded-*` set).
//!
//! Refused with 400: what `httparse` refuses (bad method token, bad target bytes, a version other
//! than HTTP/1.0 or HTTP/1.1, bare CR, obs-fold, whitespace before a colon or at the start of the
//! header section, invalid bytes in names or values, more than [`MAX_HEADERS`] fields); a target
//! that is not origin-form, absolute-form (http/https, no userinfo) or `*` for `OPTIONS`;
//! `CONNECT`; no `Host` in HTTP/1.1, more than one, an invalid one, or one that differs from an
//! absolute target's authority; a malformed or conflicting `Content-Length`; any
//! `Transfer-Encoding` but a single `chunked`; `Transfer-Encoding` in HTTP/1.0 or with
//! `Content-Length`.

use std::mem::MaybeUninit;

use super::chunked::{Chunked, Framing};
use super::framing::{self, ConnectionOpts, ContentLength, Hdr, Target};
use crate::sticky;

/// Most fields in a request or response head.
pub(super) const MAX_HEADERS: usize = 100;

/// What the request head says, once rewritten into the outgoing head.
#[derive(Debug)]
pub(super) struct Prepared {
    pub(super) head_len: usize,
    pub(super) framing: Framing,
    pub(super) keep_alive: bool,
    pub(super) http10: bool,
    pub(super) is_head: bool,
    pub(super) cookie: Option<u64>,
    pub(super) upgrade: bool,
    pub(super) expect_continue: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reject {
    /// The head is not complete yet.
    Partial,
    /// Refused with 400; the reason is logged at debug level.
    Bad(&'static str),
}

/// What the fields of a request say (first pass over them).
#[derive(Default)]
struct Fields<'a> {
    conn: ConnectionOpts,
    upgrade: Option<&'a [u8]>,
    hosts: usize,
    host: &'a [u8],
    te_fields: usize,
    te_chunked: bool,
    length: ContentLength,
    cookie: Option<u64>,
    expect_continue: bool,
}

impl<'a> Fields<'a> {
    /// Reads the fields, noting each one's class in `classes`.
    fn scan(headers: &[httparse::Header<'a>], classes: &mut [Hdr]) -> Result<Fields<'a>, Reject> {
        let mut f = Fields::default();
        for (h, class) in headers.iter().zip(classes.iter_mut()) {
            *class = framing::classify(h.name);
            match *class {
                Hdr::Connection => f.conn.add(h.value),
                Hdr::Upgrade => f.upgrade = Some(h.value),
                Hdr::Host => {
                    f.hosts += 1;
                    f.host = h.value;
                    if !framing::valid_host(h.value) {
                        return Err(Reject::Bad("invalid Host"));
                    }
                }
                Hdr::TransferEncoding => {
                    f.te_fields += 1;
                    f.te_chunked = framing::request_te_is_chunked(h.value);
                }
                Hdr::ContentLength => f.length.add(h.value).map_err(Reject::Bad)?,
                Hdr::Cookie if f.cookie.is_none() => f.cookie = sticky::cookie_token(std::iter::once(h.value)),
                Hdr::Expect => f.expect_continue |= h.value.eq_ignore_ascii_case(b"100-continue"),
                _ => {}
            }
        }
        Ok(f)
    }

    /// RFC 9112 §3.2 (Host), §6.1 and §6.3 (framing).
    fn check(&self, http10: bool, target: Target<'_>) -> Result<(), &'static str> {
        if self.hosts > 1 || (self.hosts == 0 && !http10) {
            return Err("Host missing or repeated");
        }
        if let Target::Absolute { authority, https } = target
            && self.hosts == 1
            && !framing::same_authority(authority, self.host, https)
        {
            return Err("Host differs from the target's authority");
        }
        if self.te_fields > 0 {
            if http10 {
                return Err("Transfer-Encoding in HTTP/1.0");
            }
            if self.te_fields > 1 || !self.te_chunked {
                return Err("Transfer-Encoding other than chunked");
            }
            if self.length.value.is_some() {
                return Err("both Transfer-Encoding and Content-Length");
            }
        }
        Ok(())
    }
}

fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Parses a request head in `buf` and writes the head to send to the back end into `out`.
pub(super) fn prepare(buf: &[u8], out: &mut Vec<u8>, client_ip: &[u8], https: bool) -> Result<Prepared, Reject> {
    // Left uninitialized: httparse writes the fields it finds (3.2 KiB less to clear per parse).
    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let head_len = match req.parse_with_uninit_headers(buf, &mut headers) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(Reject::Partial),
        Err(httparse::Error::TooManyHeaders) => return Err(Reject::Bad("too many fields")),
        Err(_) => return Err(Reject::Bad("malformed head")),
    };
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Err(Reject::Bad("malformed request line"));
    };
    let target = framing::request_target(method, path).ok_or(Reject::Bad("invalid request target"))?;
    let http10 = version == 0;
    let mut classes = [Hdr::Other; MAX_HEADERS];
    let f = Fields::scan(req.headers, &mut classes)?;
    let classes = &classes[..req.headers.len()];
    f.check(http10, target).map_err(Reject::Bad)?;
    // An Upgrade in HTTP/1.0 is ignored (RFC 9110 §7.8).
    let upgrade = f.conn.upgrade && f.upgrade.is_some() && !http10;
    let expect_continue = f.expect_continue && !http10;
    write_head(out, method, path, req.headers, classes, &f);
    write_forwarded(out, req.headers, classes, client_ip, https);
    if let (true, Some(v)) = (upgrade, f.upgrade) {
        out.extend_from_slice(b"Connection: Upgrade\r\n");
        push_header(out, b"Upgrade", v);
    }
    out.extend_from_slice(b"\r\n");
    let keep_alive = if http10 { f.conn.keep_alive && !f.conn.close } else { !f.conn.close };
    let framing = match (f.te_fields, f.length.value) {
        (1.., _) => Framing::Chunked(Chunked::new()),
        (_, Some(0) | None) => Framing::Empty,
        (_, Some(n)) => Framing::Length(n),
    };
    Ok(Prepared {
        head_len,
        framing,
        keep_alive,
        http10,
        is_head: method == "HEAD",
        cookie: f.cookie,
        upgrade,
        expect_continue,
    })
}

/// The request line and the end-to-end fields, framing fields last, in canonical form.
fn write_head(
    out: &mut Vec<u8>,
    method: &str,
    path: &str,
    headers: &[httparse::Header<'_>],
    classes: &[Hdr],
    f: &Fields<'_>,
) {
    out.clear();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (h, class) in headers.iter().zip(classes) {
        let keep = match class {
            Hdr::Connection | Hdr::HopByHop | Hdr::Upgrade | Hdr::TransferEncoding | Hdr::ContentLength => false,
            Hdr::Xff | Hdr::Xfp => false,
            Hdr::Expect => !h.value.eq_ignore_ascii_case(b"100-continue"),
            Hdr::Host | Hdr::Cookie => true,
            Hdr::Other => !(f.conn.others && framing::nominated(headers, h.name)),
        };
        if keep {
            push_header(out, h.name.as_bytes(), h.value);
        }
    }
    if f.te_fields > 0 {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    } else if let Some(n) = f.length.value {
        framing::push_content_length(out, n);
    }
}

/// `X-Forwarded-For` (the client's list with the client appended) and `X-Forwarded-Proto`.
fn write_forwarded(
    out: &mut Vec<u8>,
    headers: &[httparse::Header<'_>],
    classes: &[Hdr],
    client_ip: &[u8],
    https: bool,
) {
    out.extend_from_slice(b"X-Forwarded-For: ");
    for (h, _) in headers.iter().zip(classes).filter(|(_, c)| **c == Hdr::Xff) {
        let v = h.value.trim_ascii();
        if !v.is_empty() {
            out.extend_from_slice(v);
            out.extend_from_slice(b", ");
        }
    }
    out.extend_from_slice(client_ip);
    out.extend_from_slice(if https { b"\r\nX-Forwarded-Proto: https\r\n" } else { b"\r\nX-Forwarded-Proto: http\r\n" });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prep(req: &[u8]) -> Result<(Prepared, String), Reject> {
        let mut out = Vec::new();
        let p = prepare(req, &mut out, b"127.0.0.2", false)?;
        Ok((p, String::from_utf8(out).unwrap()))
    }

    fn bad(req: &[u8]) -> &'static str {
        match prep(req) {
            Err(Reject::Bad(why)) => why,
            other => panic!("{} accepted: {other:?}", String::from_utf8_lossy(req)),
        }
    }

    #[test]
    fn request_head_is_rewritten() {
        let req = b"GET /a?b HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-Secret\r\nX-Forwarded-For: 10.1.1.1\r\nX-Secret: 1\r\nX-Forwarded-Proto: https\r\nKeep-Alive: 5\r\n\r\nrest";
        let (p, s) = prep(req).unwrap();
        assert_eq!(p.head_len, req.len() - 4);
        assert!(p.keep_alive);
        assert_eq!(
            s,
            "GET /a?b HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.1.1.1, 127.0.0.2\r\nX-Forwarded-Proto: http\r\n\r\n"
        );
    }

    #[test]
    fn framing_fields_are_canonical() {
        let (p, s) =
            prep(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 004\r\nContent-Length: 4, 4\r\n\r\n").unwrap();
        assert!(matches!(p.framing, Framing::Length(4)));
        assert!(s.contains("\r\nContent-Length: 4\r\n") && s.matches("Content-Length").count() == 1, "{s}");
        let (p, s) = prep(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: CHUNKED\r\n\r\n").unwrap();
        assert!(matches!(p.framing, Framing::Chunked(_)));
        assert!(s.contains("\r\nTransfer-Encoding: chunked\r\n"), "{s}");
        // A Connection option never removes a framing field.
        let (_, s) =
            prep(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: Content-Length\r\nContent-Length: 2\r\n\r\n").unwrap();
        assert!(s.contains("Content-Length: 2\r\n"), "{s}");
    }

    #[test]
    fn keep_alive_and_versions() {
        let (p, _) = prep(b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n").unwrap();
        assert!(!p.keep_alive && p.http10);
        let (p, _) = prep(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(p.keep_alive);
        let (p, _) = prep(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!p.keep_alive);
        assert_eq!(prep(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap_err(), Reject::Partial);
    }

    #[test]
    fn expect_continue_only_in_http11() {
        let (p, s) = prep(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").unwrap();
        assert!(p.expect_continue && !s.contains("Expect"), "{s}");
        let (p, s) = prep(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").unwrap();
        assert!(!p.expect_continue && !s.contains("Expect"), "{s}");
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let h = "POST / HTTP/1.1\r\nHost: x\r\n";
        for (fields, why) in [
            ("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", "both Transfer-Encoding and Content-Length"),
            ("Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding other than chunked"),
            ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding other than chunked"),
            ("Content-Length: 4\r\nContent-Length: 5\r\n", "differing Content-Length values"),
            ("Content-Length: +4\r\n", "malformed Content-Length"),
        ] {
            assert_eq!(bad(format!("{h}{fields}\r\n").as_bytes()), why, "{fields}");
        }
        assert_eq!(bad(b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), "Transfer-Encoding in HTTP/1.0");
    }

    #[test]
    fn host_and_target_rules() {
        assert_eq!(bad(b"GET / HTTP/1.1\r\n\r\n"), "Host missing or repeated");
        assert_eq!(bad(b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), "Host missing or repeated");
        assert_eq!(bad(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), "invalid Host");
        assert_eq!(bad(b"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n"), "Host differs from the target's authority");
        assert_eq!(bad(b"GET a HTTP/1.1\r\nHost: a\r\n\r\n"), "invalid request target");
        assert_eq!(bad(b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"), "invalid request target");
        assert!(prep(b"GET http://a:80/x HTTP/1.1\r\nHost: A\r\n\r\n").is_ok());
        assert!(prep(b"GET / HTTP/1.0\r\n\r\n").is_ok());
    }

    #[test]
    fn upgrade_needs_http11() {
        let (p, s) = prep(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n").unwrap();
        assert!(p.upgrade && s.ends_with("Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n"), "{s}");
        let (p, s) = prep(b"GET / HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n").unwrap();
        assert!(!p.upgrade && !s.contains("pgrade"), "{s}");
    }
}
