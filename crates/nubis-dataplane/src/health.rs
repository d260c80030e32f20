//! Active health checks of one config's nodes (`connection`, `http`, `http_body`), run every
//! `check_interval` with `check_timeout` per attempt; status transitions and their reporting.
//!
//! Rules:
//! * The first determination is immediate: the first check's result makes an `unknown` node UP or
//!   DOWN. After that a node goes DOWN after `check_attempts` consecutive failures and UP again
//!   after one success, so status follows reality within `interval x attempts`.
//! * `http` passes on a 2xx or 3xx status for `GET check_path`; `http_body` also needs the response
//!   body to contain `check_body` (a plain substring, as the reference describes it: "must be
//!   present in the response body").
//! * With check `none` nodes stay `unknown` and take traffic; a node taken out by a passive failure
//!   is given back (`unknown`) after one to two intervals.
//! * A node address the fabric refuses is DOWN.
//! * A node added (or moved, or a check changed) is checked at once, not after the interval; a
//!   new `check_interval` applies from the next check.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nubis_model::balancer::{CheckKind, HealthCheck, NodeStatus, Protocol};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::state::{Gen, ListenerShared};

/// Largest check response read.
const MAX_CHECK_RESPONSE: usize = 64 * 1024;

/// What a check round depends on: the check and the nodes' addresses. When it changes (a node
/// added, moved, or the check changed), the next round runs at once.
type Signature<'a> = (CheckKind, &'a str, &'a str, Vec<(i64, Option<SocketAddr>)>);

fn signature(g: &Gen) -> Signature<'_> {
    (g.check.kind, g.check.path.as_str(), g.check.body.as_str(), g.nodes.iter().map(|n| (n.id, target(g, n))).collect())
}

/// Where a node is checked: its own address, or for `udp` configs its IP on `udp_check_port`
/// (a UDP port cannot be connected to, so the checks of udp configs are TCP and HTTP).
fn target(g: &Gen, n: &crate::node::NodeRt) -> Option<SocketAddr> {
    let a = n.dial?;
    Some(if g.protocol == Protocol::Udp { SocketAddr::new(a.ip(), g.udp_check_port) } else { a })
}

fn interval_of(shared: &ListenerShared, g: &Gen) -> Duration {
    shared.settings.check_interval_override.unwrap_or(Duration::from_secs(u64::from(g.check.interval_secs.max(1))))
}

pub(crate) async fn run(shared: Arc<ListenerShared>, stop: CancellationToken) {
    loop {
        let cur = shared.state.load_full();
        let interval = interval_of(&shared, &cur);
        let timeout = Duration::from_secs(u64::from(cur.check.timeout_secs.max(1))).min(interval);
        let check = &cur.check;
        let source = crate::fabric::source_of(*shared.bound.lock().unwrap_or_else(|e| e.into_inner()));
        let g = &*cur;
        let results = futures_util::future::join_all(cur.nodes.iter().map(|n| async move {
            match (check.kind, target(g, n)) {
                (_, None) => Some(false),
                (CheckKind::None, _) => None,
                (_, Some(addr)) => Some(check_once(check, addr, timeout, source).await),
            }
        }));
        let results = tokio::select! {
            r = results => r,
            _ = stop.cancelled() => return,
        };
        let checked_at = Instant::now();
        for (node, ok) in cur.nodes.iter().zip(results) {
            let status = node.shared.status();
            match ok {
                None => {
                    // Taken out by a passive failure: the first round marks it seen, the next one
                    // gives it back, so it stays out for at least one full interval.
                    if status == NodeStatus::Down && node.shared.failures.swap(0, Ordering::Relaxed) == 0 {
                        shared.set_status(node, NodeStatus::Unknown);
                    }
                }
                Some(true) => {
                    node.shared.failures.store(0, Ordering::Relaxed);
                    if status != NodeStatus::Up {
                        shared.set_status(node, NodeStatus::Up);
                    }
                }
                Some(false) => {
                    let f = node.shared.failures.fetch_add(1, Ordering::Relaxed) + 1;
                    let down = match status {
                        NodeStatus::Unknown => true,
                        NodeStatus::Up => f >= cur.check.attempts.max(1),
                        NodeStatus::Down => false,
                    };
                    if down {
                        shared.set_status(node, NodeStatus::Down);
                    }
                }
            }
        }
        // Wait for the next round: `interval` after this one, the interval read afresh on every
        // config update (a change applies from the next check); at once when the nodes or the
        // check changed.
        let checked = signature(&cur);
        loop {
            let now = shared.state.load_full();
            if signature(&now) != checked {
                break;
            }
            let due = checked_at + interval_of(&shared, &now);
            tokio::select! {
                _ = tokio::time::sleep_until(due.into()) => break,
                _ = shared.changed.notified() => {}
                _ = stop.cancelled() => return,
            }
        }
    }
}

/// One check attempt against one node.
pub(crate) async fn check_once(
    check: &HealthCheck,
    addr: SocketAddr,
    timeout: Duration,
    source: Option<std::net::IpAddr>,
) -> bool {
    tokio::time::timeout(timeout, attempt(check, addr, source)).await.unwrap_or(false)
}

async fn attempt(check: &HealthCheck, addr: SocketAddr, source: Option<std::net::IpAddr>) -> bool {
    let Ok(mut s) = crate::fabric::connect(addr, source).await else {
        return false;
    };
    if check.kind == CheckKind::Connection {
        return true;
    }
    let path = if check.path.is_empty() { "/" } else { check.path.as_str() };
    let req =
        format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\nUser-Agent: nubis-health-check\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        match s.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() >= MAX_CHECK_RESPONSE {
                    break;
                }
                // An `http` check needs only the status line; an `http_body` check stops at the
                // end of a body with a length (servers may keep the connection open).
                if check.kind == CheckKind::Http && buf.contains(&b'\n') || complete(&buf) {
                    break;
                }
            }
            Err(_) => return false,
        }
    }
    judge(check, &buf)
}

/// A response with a `Content-Length` whose body has fully arrived.
fn complete(resp: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(n)) = r.parse(resp) else {
        return false;
    };
    r.headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse::<usize>().ok())
        .is_some_and(|len| resp.len() >= n + len)
}

/// Whether a raw check response passes.
pub(crate) fn judge(check: &HealthCheck, resp: &[u8]) -> bool {
    let line_end = resp.iter().position(|&b| b == b'\n').unwrap_or(resp.len());
    let line = &resp[..line_end];
    let mut parts = line.split(|&b| b == b' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !version.starts_with(b"HTTP/") {
        return false;
    }
    let ok_status = matches!(code.first(), Some(b'2' | b'3')) && code.len() == 3;
    if !ok_status {
        return false;
    }
    if check.kind != CheckKind::HttpBody {
        return true;
    }
    let body_start = resp.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4).unwrap_or(resp.len());
    let needle = check.body.as_bytes();
    needle.is_empty() || resp[body_start..].windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hc(kind: CheckKind, body: &str) -> HealthCheck {
        HealthCheck {
            kind,
            interval_secs: 2,
            timeout_secs: 1,
            attempts: 2,
            path: "/".into(),
            body: body.into(),
            passive: true,
        }
    }

    #[test]
    fn http_check_accepts_2xx_and_3xx_only() {
        let c = hc(CheckKind::Http, "");
        assert!(judge(&c, b"HTTP/1.1 200 OK\r\n\r\n"));
        assert!(judge(&c, b"HTTP/1.0 302 Found\r\n\r\n"));
        assert!(!judge(&c, b"HTTP/1.1 404 Not Found\r\n\r\n"));
        assert!(!judge(&c, b"HTTP/1.1 503 Unavailable\r\n\r\n"));
        assert!(!judge(&c, b"garbage"));
        assert!(!judge(&c, b""));
    }

    #[test]
    fn http_body_check_needs_the_text_in_the_body() {
        let c = hc(CheckKind::HttpBody, "it works");
        assert!(judge(&c, b"HTTP/1.1 200 OK\r\nX: it works\r\n\r\nyes, it works!"));
        assert!(!judge(&c, b"HTTP/1.1 200 OK\r\nX: it works\r\n\r\nnope"));
        assert!(!judge(&c, b"HTTP/1.1 500 Oops\r\n\r\nit works"));
    }
}
