//! `http` (and, after TLS, `https`) configs: a lean HTTP/1.1 reverse proxy built on `httparse`.
//!
//! Per client connection: keep-alive and pipelining, a node chosen per request (stickiness first),
//! pooled keep-alive back-end connections (a stale pooled connection is retried once on a fresh
//! one), `X-Forwarded-For` appended and `X-Forwarded-Proto` set, hop-by-hop headers removed, bodies
//! streamed (fixed length, chunked or until close), `Expect: 100-continue` answered by the
//! balancer, `Upgrade` (e.g. WebSocket) tunnelled after a `101`. `503` when no node is available,
//! `502` when the back end fails or answers with a malformed or ambiguous response, `504` when it
//! does not answer within the idle timeout, `400` for a malformed or ambiguous request (framing
//! per RFC 9112, see `request.rs`, `framing.rs` and `chunked.rs`) or an oversized head, `408`
//! when a started head does not complete in time.
//!
//! - `framing`: the field grammar shared by requests and responses (`Content-Length`,
//!   `Transfer-Encoding`, `Host`, targets, `Connection`);
//! - `chunked`: body framing (length, strict chunked, until close);
//! - `request` / `response`: head checks and rewriting;
//! - `conn`: the connection loop (node choice, retries, forwarding); `io`: streaming and tunnels.
//!
//! The common case (a response with nothing to change) is forwarded byte for byte in one write.

mod chunked;
mod conn;
mod framing;
mod io;
mod request;
mod response;

pub(crate) use conn::serve;

// Canned answers; their lengths are checked by a unit test.
const R400: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\nConnection: close\r\n\r\nBad request\n";
const R408: &[u8] = b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 16\r\nConnection: close\r\n\r\nRequest timeout\n";
const R502: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 24\r\nConnection: close\r\n\r\nThe back end has failed\n";
const R503: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\nNo back end is available.\n";
const R503_CLOSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\nConnection: close\r\n\r\nNo back end is available.\n";
const R504: &[u8] = b"HTTP/1.1 504 Gateway Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 29\r\nConnection: close\r\n\r\nThe back end did not answer.\n";
const R100: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

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
        for r in [R400, R408, R502, R503, R503_CLOSE, R504] {
            assert!(content_length_matches(r), "{}", String::from_utf8_lossy(r));
        }
    }
}
