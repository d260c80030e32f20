//! Session stickiness: the `table` (client address -> node, expiring after a period without use,
//! bounded in size) and the `http_cookie` token format (`NB_SRVID=<16 hex digits>`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Name of the cookie the balancer sets for `http_cookie` stickiness.
pub const COOKIE_NAME: &str = "NB_SRVID";

/// A table entry expires after this long without a new session from the client.
pub const TABLE_IDLE_EXPIRY: Duration = Duration::from_secs(300);

/// At most this many clients are remembered per config; expired entries are dropped first.
pub const TABLE_MAX_ENTRIES: usize = 100_000;

#[derive(Debug, Default)]
pub(crate) struct StickyTable {
    map: Mutex<HashMap<IpAddr, (i64, Instant)>>,
}

impl StickyTable {
    /// The node id the client is pinned to, refreshing its expiry.
    pub(crate) fn get(&self, ip: IpAddr) -> Option<i64> {
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match m.get_mut(&ip) {
            Some((node, seen)) if now.duration_since(*seen) < TABLE_IDLE_EXPIRY => {
                *seen = now;
                Some(*node)
            }
            Some(_) => {
                m.remove(&ip);
                None
            }
            None => None,
        }
    }

    pub(crate) fn put(&self, ip: IpAddr, node: i64) {
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if m.len() >= TABLE_MAX_ENTRIES && !m.contains_key(&ip) {
            m.retain(|_, (_, seen)| now.duration_since(*seen) < TABLE_IDLE_EXPIRY);
            if m.len() >= TABLE_MAX_ENTRIES {
                // Still full of live entries: forget the least recently used one.
                if let Some(oldest) = m.iter().min_by_key(|(_, (_, seen))| *seen).map(|(k, _)| *k) {
                    m.remove(&oldest);
                }
            }
        }
        m.insert(ip, (node, now));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Formats a node token as the cookie value.
pub(crate) fn format_token(token: u64) -> String {
    format!("{token:016x}")
}

/// Finds `NB_SRVID=<token>` in the values of `Cookie` headers.
pub(crate) fn cookie_token<'a>(cookie_headers: impl Iterator<Item = &'a [u8]>) -> Option<u64> {
    for h in cookie_headers {
        for pair in h.split(|&b| b == b';') {
            let pair = pair.trim_ascii();
            if let Some(v) = pair.strip_prefix(COOKIE_NAME.as_bytes()).and_then(|r| r.strip_prefix(b"="))
                && let Ok(s) = std::str::from_utf8(v.trim_ascii())
                && let Ok(t) = u64::from_str_radix(s, 16)
            {
                return Some(t);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_remembers_and_updates() {
        let t = StickyTable::default();
        let ip: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(t.get(ip), None);
        t.put(ip, 7);
        assert_eq!(t.get(ip), Some(7));
        t.put(ip, 8);
        assert_eq!(t.get(ip), Some(8));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn cookie_is_found_among_others() {
        let tok = format_token(0xdead_beef);
        let h = format!("a=1; {COOKIE_NAME}={tok}; b=2");
        assert_eq!(cookie_token([h.as_bytes()].into_iter()), Some(0xdead_beef));
        assert_eq!(cookie_token([b"a=1; NB_SRVIDX=3".as_slice()].into_iter()), None);
        assert_eq!(cookie_token([b"NB_SRVID=zz".as_slice()].into_iter()), None);
    }
}
