//! The field grammar the proxy acts on (RFC 9110 §5, §7.2, §7.6, §8.6; RFC 9112 §3, §6), shared by
//! requests and responses: which fields matter, `Content-Length` and `Transfer-Encoding` values,
//! `Host` and request-target validation. `httparse` has already checked the syntax of the start
//! line and of every field line (token names with no whitespace before the colon, values without
//! CR, LF, NUL or other controls but HTAB, no obs-fold); what it leaves to us is here.

/// `tchar` of RFC 9110 §5.6.2.
pub(crate) fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9'
        | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~')
}

/// The fields the proxy reads or rewrites.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Hdr {
    Connection,
    /// `TE`, `Trailer`, `Keep-Alive`, `Proxy-Connection`: never forwarded.
    HopByHop,
    Upgrade,
    TransferEncoding,
    ContentLength,
    Host,
    Xff,
    Xfp,
    Cookie,
    Expect,
    Other,
}

pub(super) fn classify(name: &str) -> Hdr {
    let eq = |s: &str| name.eq_ignore_ascii_case(s);
    match name.len() {
        2 if eq("te") => Hdr::HopByHop,
        4 if eq("host") => Hdr::Host,
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

/// The elements of a list field (`#rule`), trimmed; empty elements are yielded too.
pub(super) fn tokens(v: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    v.split(|&b| b == b',').map(|t| t.trim_ascii())
}

/// What the `Connection` fields of a message say.
#[derive(Default, Debug)]
pub(super) struct ConnectionOpts {
    pub(super) close: bool,
    pub(super) keep_alive: bool,
    pub(super) upgrade: bool,
    /// Other connection options: fields of those names are hop-by-hop too (RFC 9110 §7.6.1).
    pub(super) others: bool,
}

impl ConnectionOpts {
    pub(super) fn add(&mut self, v: &[u8]) {
        for t in tokens(v) {
            if t.eq_ignore_ascii_case(b"close") {
                self.close = true;
            } else if t.eq_ignore_ascii_case(b"keep-alive") {
                self.keep_alive = true;
            } else if t.eq_ignore_ascii_case(b"upgrade") {
                self.upgrade = true;
            } else if !t.is_empty() {
                self.others = true;
            }
        }
    }
}

/// Whether a `Connection` field among `headers` names the field `name` (only asked for fields
/// the proxy does not act on: `Connection: Content-Length` removes nothing).
pub(super) fn nominated(headers: &[httparse::Header<'_>], name: &str) -> bool {
    headers
        .iter()
        .filter(|h| classify(h.name) == Hdr::Connection)
        .any(|h| tokens(h.value).any(|t| t.eq_ignore_ascii_case(name.as_bytes())))
}

/// `1*DIGIT` without sign, spaces or base prefix; leading zeros allowed; None when malformed or
/// beyond `u64`.
pub(super) fn decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    v.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// The `Content-Length` of a message: every field and list element must carry the same valid
/// value (RFC 9110 §8.6 lets a recipient fold `4, 4` into `4`); anything else is malformed.
#[derive(Default, Debug, Clone, Copy)]
pub(super) struct ContentLength {
    pub(super) value: Option<u64>,
    /// More than one field or list element was given (the head is rewritten with one).
    pub(super) repeated: bool,
}

impl ContentLength {
    pub(super) fn add(&mut self, v: &[u8]) -> Result<(), &'static str> {
        for t in tokens(v) {
            let n = decimal(t).ok_or("malformed Content-Length")?;
            match self.value {
                Some(m) if m != n => return Err("differing Content-Length values"),
                Some(_) => self.repeated = true,
                None => self.value = Some(n),
            }
        }
        Ok(())
    }
}

/// How a response's `Transfer-Encoding` frames its body (RFC 9112 §6.3).
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ResponseCodings {
    pub(super) present: bool,
    /// `chunked` is the final coding: the body is chunked; otherwise it runs until close.
    pub(super) chunked_last: bool,
    chunked_seen: bool,
}

impl ResponseCodings {
    /// Adds one field. A coding must be a token (with parameters, but for `chunked`); `chunked`
    /// may be applied only once.
    pub(super) fn add(&mut self, v: &[u8]) -> Result<(), &'static str> {
        for t in tokens(v) {
            if t.is_empty() {
                continue;
            }
            let (name, params) = match t.iter().position(|&b| b == b';') {
                Some(i) => (t[..i].trim_ascii(), true),
                None => (t, false),
            };
            if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
                return Err("malformed transfer coding");
            }
            let chunked = name.eq_ignore_ascii_case(b"chunked");
            if chunked && (params || self.chunked_seen) {
                return Err("chunked applied twice or with parameters");
            }
            self.present = true;
            self.chunked_seen |= chunked;
            self.chunked_last = chunked;
        }
        Ok(())
    }
}

/// A request's `Transfer-Encoding`: only `chunked`, alone, in one field is accepted (HAProxy also
/// refuses every other coding in a request, with 400 or 422).
pub(super) fn request_te_is_chunked(v: &[u8]) -> bool {
    v.trim_ascii().eq_ignore_ascii_case(b"chunked")
}

fn is_unreserved_or_sub_delim(b: u8) -> bool {
    matches!(b,
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~'
        | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

/// `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2) without userinfo; empty is valid
/// (a Host for a target without authority).
pub(super) fn valid_host(v: &[u8]) -> bool {
    let (host, port) = match v.first() {
        Some(b'[') => match v.iter().position(|&b| b == b']') {
            Some(end) => {
                let inner = &v[1..end];
                let ok = !inner.is_empty() && inner.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
                if !ok {
                    return false;
                }
                (&v[..0], &v[end + 1..])
            }
            None => return false,
        },
        _ => match v.iter().position(|&b| b == b':') {
            Some(i) => (&v[..i], &v[i..]),
            None => (v, &v[v.len()..]),
        },
    };
    let host_ok = host.iter().enumerate().all(|(i, &b)| {
        is_unreserved_or_sub_delim(b)
            || b == b'%' && host.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    let port_ok = match port {
        [] => true,
        [b':', digits @ ..] => digits.len() <= 5 && digits.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    host_ok && port_ok
}

/// The form of a request target (RFC 9112 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target<'a> {
    Origin,
    Asterisk,
    /// `http(s)://authority[path][?query]`: the authority, and whether the scheme is https.
    Absolute {
        authority: &'a [u8],
        https: bool,
    },
}

/// Path and query characters: visible ASCII but `#` (httparse lets non-ASCII bytes and `#`
/// through; HAProxy refuses both).
fn valid_path(p: &[u8]) -> bool {
    p.iter().all(|&b| (0x21..=0x7e).contains(&b) && b != b'#')
}

/// Validates a request target for `method`. `CONNECT` (authority-form) is not served: a
/// balancer is not a forward proxy.
pub(super) fn request_target<'a>(method: &str, t: &'a str) -> Option<Target<'a>> {
    let t = t.as_bytes();
    if method == "CONNECT" {
        return None;
    }
    if t == b"*" {
        return (method == "OPTIONS").then_some(Target::Asterisk);
    }
    if t.first() == Some(&b'/') {
        return valid_path(t).then_some(Target::Origin);
    }
    let (https, rest) = if t.len() > 7 && t[..7].eq_ignore_ascii_case(b"http://") {
        (false, &t[7..])
    } else if t.len() > 8 && t[..8].eq_ignore_ascii_case(b"https://") {
        (true, &t[8..])
    } else {
        return None;
    };
    let end = rest.iter().position(|&b| b == b'/' || b == b'?').unwrap_or(rest.len());
    let authority = &rest[..end];
    (!authority.is_empty() && valid_host(authority) && valid_path(&rest[end..]))
        .then_some(Target::Absolute { authority, https })
}

/// Whether `host` names the same authority as an absolute target's (case-insensitively, a
/// missing or empty port being the scheme's default).
pub(super) fn same_authority(authority: &[u8], host: &[u8], https: bool) -> bool {
    fn split(a: &[u8], https: bool) -> (&[u8], &[u8]) {
        let colon = match a.first() {
            Some(b'[') => a.iter().position(|&b| b == b']').map(|i| i + 1).filter(|&i| i < a.len()),
            _ => a.iter().position(|&b| b == b':'),
        };
        let (h, p) = match colon {
            Some(i) => (&a[..i], &a[i + 1..]),
            None => (a, &a[a.len()..]),
        };
        let p = if p.is_empty() || p == if https { &b"443"[..] } else { &b"80"[..] } { &b""[..] } else { p };
        (h, p)
    }
    let (h1, p1) = split(authority, https);
    let (h2, p2) = split(host, https);
    h1.eq_ignore_ascii_case(h2) && p1 == p2
}

/// Appends `Content-Length: <n>` CRLF.
pub(super) fn push_content_length(out: &mut Vec<u8>, mut n: u64) {
    out.extend_from_slice(b"Content-Length: ");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
    out.extend_from_slice(b"\r\n");
}

/// Whether a head that `httparse` accepted has a line ending in a bare LF (valid to receive,
/// RFC 9112 §2.2, but never sent on). `httparse` refuses a CR not followed by LF anywhere in a
/// head, so there is a bare LF exactly when there are more LFs than CRs. Counted in byte lanes,
/// 255 bytes at a time, which the compiler vectorizes.
pub(super) fn has_bare_lf(head: &[u8]) -> bool {
    let (lf, cr) = head.chunks(255).fold((0usize, 0usize), |(lf, cr), c| {
        let (l, r) = c.iter().fold((0u8, 0u8), |(l, r), &b| (l + u8::from(b == b'\n'), r + u8::from(b == b'\r')));
        (lf + usize::from(l), cr + usize::from(r))
    });
    lf != cr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_values() {
        for (v, want) in [
            (&b"4"[..], Some(4)),
            (b"004", Some(4)),
            (b"4, 4", Some(4)),
            (b"0", Some(0)),
            (b"18446744073709551615", Some(u64::MAX)),
        ] {
            let mut cl = ContentLength::default();
            assert_eq!(cl.add(v).ok().and(cl.value), want, "{}", String::from_utf8_lossy(v));
        }
        for v in [&b"+4"[..], b"-1", b"0x10", b"4 4", b"", b"4,", b",4", b"4, 5", b"18446744073709551616", b"1e3"] {
            assert!(ContentLength::default().add(v).is_err(), "{}", String::from_utf8_lossy(v));
        }
        let mut cl = ContentLength::default();
        cl.add(b"7").unwrap();
        assert!(cl.add(b"8").is_err());
        cl.add(b"7").unwrap();
        assert!(cl.repeated);
    }

    #[test]
    fn response_codings() {
        let codings = |vs: &[&[u8]]| {
            let mut c = ResponseCodings::default();
            for v in vs {
                c.add(v)?;
            }
            Ok::<_, &str>(c)
        };
        assert!(codings(&[b"chunked"]).unwrap().chunked_last);
        assert!(codings(&[b"gzip, chunked"]).unwrap().chunked_last);
        assert!(codings(&[b"gzip", b"CHUNKED"]).unwrap().chunked_last);
        assert!(!codings(&[b"chunked, gzip"]).unwrap().chunked_last);
        assert!(!codings(&[b"gzip"]).unwrap().chunked_last);
        assert!(codings(&[b"chunked", b"chunked"]).is_err());
        assert!(codings(&[b"chunked, gzip, chunked"]).is_err());
        assert!(codings(&[b"chunked;x=1"]).is_err());
        assert!(codings(&[b"\"chunked\""]).is_err());
    }

    #[test]
    fn request_codings() {
        assert!(request_te_is_chunked(b"chunked") && request_te_is_chunked(b"Chunked"));
        for v in [&b"gzip, chunked"[..], b"chunked, chunked", b"xchunked", b"chunked,", b",chunked", b"identity", b""] {
            assert!(!request_te_is_chunked(v), "{}", String::from_utf8_lossy(v));
        }
    }

    #[test]
    fn hosts() {
        for ok in [&b""[..], b"a", b"a.example:8080", b"[::1]", b"[::1]:80", b"10.0.0.1:1", b"xn--a%41.b", b"a:"] {
            assert!(valid_host(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [&b"a b"[..], b"a/b", b"u@a", b"a:80x", b"[::1", b"[zz]", b"a:123456", b"%4", b"a?b", b"\"a\""] {
            assert!(!valid_host(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn targets() {
        assert_eq!(request_target("GET", "/a?b=c"), Some(Target::Origin));
        assert_eq!(request_target("OPTIONS", "*"), Some(Target::Asterisk));
        assert_eq!(request_target("GET", "http://a:80/x"), Some(Target::Absolute { authority: b"a:80", https: false }));
        assert_eq!(request_target("GET", "HTTPS://a?q"), Some(Target::Absolute { authority: b"a", https: true }));
        for (m, t) in [
            ("GET", "*"),
            ("GET", "a/b"),
            ("GET", "/a#b"),
            ("GET", "/\u{e9}"),
            ("CONNECT", "a:443"),
            ("GET", "http://u@a/"),
            ("GET", "http:///x"),
            ("GET", "ftp://a/"),
        ] {
            assert_eq!(request_target(m, t), None, "{m} {t}");
        }
    }

    #[test]
    fn authorities() {
        assert!(same_authority(b"A:80", b"a", false));
        assert!(same_authority(b"a", b"a:443", true));
        assert!(same_authority(b"[::1]:8080", b"[::1]:8080", false));
        assert!(!same_authority(b"a", b"b", false));
        assert!(!same_authority(b"a:8080", b"a", false));
    }

    #[test]
    fn content_length_is_written_in_decimal() {
        for n in [0, 7, 10, 1234567890, u64::MAX] {
            let mut out = Vec::new();
            push_content_length(&mut out, n);
            assert_eq!(out, format!("Content-Length: {n}\r\n").into_bytes());
        }
    }

    #[test]
    fn bare_lf() {
        assert!(!has_bare_lf(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\n"));
        assert!(has_bare_lf(b"HTTP/1.1 200 OK\nA: b\r\n\r\n"));
        // Longer than one counting block, a CRLF across the block boundary.
        let long = format!("HTTP/1.1 200 OK\r\nA: {}\r\n\r\n", "x".repeat(234));
        assert_eq!(long.as_bytes()[254..256], *b"\r\n");
        assert!(!has_bare_lf(long.as_bytes()));
        assert!(has_bare_lf(format!("{long}B: c\n\r\n").as_bytes()));
    }
}
