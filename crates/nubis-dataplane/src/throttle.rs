//! `client_conn_throttle`: at most N new connections per second per client IP across all the
//! listeners of one balancer (fixed one-second windows); 0 turns it off.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct Throttle {
    limit: AtomicU32,
    epoch: Instant,
    windows: Mutex<HashMap<IpAddr, (u64, u32)>>,
}

impl Throttle {
    pub(crate) fn new(limit: u32) -> Throttle {
        Throttle { limit: AtomicU32::new(limit), epoch: Instant::now(), windows: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn set_limit(&self, limit: u32) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Counts a new connection from `ip`; false when it exceeds the limit and must be refused.
    pub(crate) fn allow(&self, ip: IpAddr) -> bool {
        let limit = self.limit.load(Ordering::Relaxed);
        if limit == 0 {
            return true;
        }
        let sec = self.epoch.elapsed().as_secs();
        let mut w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if w.len() > 65_536 {
            w.retain(|_, (s, _)| *s == sec);
        }
        let e = w.entry(ip).or_insert((sec, 0));
        if e.0 != sec {
            *e = (sec, 0);
        }
        if e.1 >= limit {
            return false;
        }
        e.1 += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_ip_and_zero_is_off() {
        let t = Throttle::new(2);
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.3".parse().unwrap();
        // Both calls for `a` in the same second are very likely; allow for a second boundary.
        let allowed = (0..5).filter(|_| t.allow(a)).count();
        assert!((2..=4).contains(&allowed), "{allowed}");
        assert!(t.allow(b));
        t.set_limit(0);
        assert!((0..100).all(|_| t.allow(a)));
    }
}
