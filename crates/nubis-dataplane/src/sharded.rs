//! Counters split per proxy worker, one cache line each, so that the hot path of one worker
//! never bounces a cache line with another; readers sum the shards.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
#[repr(align(128))]
struct Slot(AtomicU64);

#[derive(Debug)]
pub(crate) struct Sharded(Box<[Slot]>);

impl Sharded {
    /// One shard per proxy worker (at least one).
    pub(crate) fn new(shards: usize) -> Sharded {
        Sharded((0..shards.max(1)).map(|_| Slot::default()).collect())
    }

    fn slot(&self) -> &AtomicU64 {
        &self.0[crate::workers::current() % self.0.len()].0
    }

    pub(crate) fn add(&self, v: u64) {
        self.slot().fetch_add(v, Ordering::Relaxed);
    }

    pub(crate) fn sub(&self, v: u64) {
        self.slot().fetch_sub(v, Ordering::Relaxed);
    }

    /// The total over all shards. A value incremented and decremented on the same worker (as
    /// in-flight counts are) never makes the total negative.
    pub(crate) fn sum(&self) -> u64 {
        self.0.iter().fold(0u64, |a, s| a.wrapping_add(s.0.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_shards() {
        let s = Sharded::new(3);
        s.add(5);
        s.sub(2);
        s.add(1);
        assert_eq!(s.sum(), 4);
    }
}
