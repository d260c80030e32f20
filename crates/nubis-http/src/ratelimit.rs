//! Rate limiting per token: a fixed window of `limit` requests every `window` seconds, reported
//! with `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds) and,
//! when exceeded, 429 with `Retry-After`, as the reference describes.
//!
//! A fixed window (rather than a token bucket) is what the reference's headers describe: a
//! remaining count and the moment the window resets.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

const SHARDS: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateState {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    /// When the window resets, in UTC epoch seconds.
    pub reset: u64,
}

impl RateState {
    pub fn retry_after(&self) -> u64 {
        self.reset.saturating_sub(now()).max(1)
    }
}

pub struct RateLimiter {
    limit: u64,
    window: u64,
    shards: Vec<Mutex<HashMap<i64, (u64, u64)>>>,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl RateLimiter {
    /// `limit` 0 turns limiting off.
    pub fn new(limit: u64, window_secs: u64) -> RateLimiter {
        RateLimiter {
            limit,
            window: window_secs.max(1),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// Counts one request of `token` and says whether it may proceed.
    pub fn check(&self, token: i64) -> RateState {
        self.check_at(token, now())
    }

    fn check_at(&self, token: i64, t: u64) -> RateState {
        let start = t - t % self.window;
        let reset = start + self.window;
        if self.limit == 0 {
            return RateState { allowed: true, limit: 0, remaining: 0, reset };
        }
        let shard = &self.shards[(token as u64 as usize) % SHARDS];
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() > 100_000 {
            map.retain(|_, (s, _)| *s == start);
        }
        let entry = map.entry(token).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        let allowed = entry.1 < self.limit;
        if allowed {
            entry.1 += 1;
        }
        RateState { allowed, limit: self.limit, remaining: self.limit - entry.1, reset }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_window_counts_and_resets() {
        let l = RateLimiter::new(2, 60);
        let a = l.check_at(7, 120);
        assert!(a.allowed && a.remaining == 1 && a.reset == 180);
        assert!(l.check_at(7, 121).allowed);
        let c = l.check_at(7, 122);
        assert!(!c.allowed && c.remaining == 0);
        assert!(l.check_at(8, 122).allowed, "tokens are limited separately");
        assert!(l.check_at(7, 180).allowed, "a new window starts over");
    }

    #[test]
    fn zero_means_unlimited() {
        let l = RateLimiter::new(0, 60);
        for _ in 0..1000 {
            assert!(l.check_at(1, 5).allowed);
        }
    }
}
