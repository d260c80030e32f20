//! Traffic counters per config (connections accepted, bytes from clients, bytes to clients) and
//! the deltas reported as `Observation::Traffic`.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct ConfigStats {
    pub(crate) connections: AtomicU64,
    pub(crate) bytes_in: AtomicU64,
    pub(crate) bytes_out: AtomicU64,
    reported: std::sync::Mutex<(u64, u64, u64)>,
}

impl ConfigStats {
    pub(crate) fn add_in(&self, n: usize) {
        if n > 0 {
            self.bytes_in.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    pub(crate) fn add_out(&self, n: usize) {
        if n > 0 {
            self.bytes_out.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        (
            self.connections.load(Ordering::Relaxed),
            self.bytes_in.load(Ordering::Relaxed),
            self.bytes_out.load(Ordering::Relaxed),
        )
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
