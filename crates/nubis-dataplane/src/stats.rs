//! Traffic counters per config (connections accepted, bytes from clients, bytes to clients) and
//! the deltas reported as `Observation::Traffic`.

use crate::sharded::Sharded;

/// Counters are sharded per proxy worker (no shared cache line on the hot path).
#[derive(Debug)]
pub(crate) struct ConfigStats {
    pub(crate) connections: Sharded,
    bytes_in: Sharded,
    bytes_out: Sharded,
    reported: std::sync::Mutex<(u64, u64, u64)>,
}

impl ConfigStats {
    pub(crate) fn new(shards: usize) -> ConfigStats {
        ConfigStats {
            connections: Sharded::new(shards),
            bytes_in: Sharded::new(shards),
            bytes_out: Sharded::new(shards),
            reported: std::sync::Mutex::new((0, 0, 0)),
        }
    }

    pub(crate) fn add_in(&self, n: usize) {
        if n > 0 {
            self.bytes_in.add(n as u64);
        }
    }

    pub(crate) fn add_out(&self, n: usize) {
        if n > 0 {
            self.bytes_out.add(n as u64);
        }
    }

    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        (self.connections.sum(), self.bytes_in.sum(), self.bytes_out.sum())
    }

    /// Growth since the previous call, or `None` when nothing happened.
    pub(crate) fn take_delta(&self) -> Option<(u64, u64, u64)> {
        let now = self.totals();
        let mut last = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        let d = (now.0 - last.0, now.1 - last.1, now.2 - last.2);
        *last = now;
        (d != (0, 0, 0)).then_some(d)
    }
}
