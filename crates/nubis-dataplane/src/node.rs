//! Run-time state of one back-end node that outlives config updates: its health, the number of
//! sessions in flight (for `leastconn`) and its pool of idle back-end connections.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use crate::sharded::Sharded;

use nubis_model::balancer::{NodeMode, NodeStatus};
use tokio::net::TcpStream;

const UNKNOWN: u8 = 0;
const UP: u8 = 1;
const DOWN: u8 = 2;

fn encode(s: NodeStatus) -> u8 {
    match s {
        NodeStatus::Unknown => UNKNOWN,
        NodeStatus::Up => UP,
        NodeStatus::Down => DOWN,
    }
}

fn decode(v: u8) -> NodeStatus {
    match v {
        UP => NodeStatus::Up,
        DOWN => NodeStatus::Down,
        _ => NodeStatus::Unknown,
    }
}

/// Shared by every generation of a config's state for the same node id and dial address.
#[derive(Debug)]
pub(crate) struct NodeShared {
    status: AtomicU8,
    /// Consecutive failed checks (active or passive).
    pub(crate) failures: AtomicU32,
    /// Sessions (tcp connections or http requests) in flight, sharded per worker.
    pub(crate) active: Sharded,
    /// Idle back-end connections, one pool per proxy worker: a connection is only ever used on
    /// the event loop it is registered with, and the locks are never contended.
    idle: Box<[Mutex<Vec<TcpStream>>]>,
}

impl NodeShared {
    /// `pools`: the number of proxy workers (at least one pool is made).
    pub(crate) fn new(pools: usize) -> NodeShared {
        NodeShared {
            status: AtomicU8::new(UNKNOWN),
            failures: AtomicU32::new(0),
            active: Sharded::new(pools),
            idle: (0..pools.max(1)).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    fn pool(&self) -> &Mutex<Vec<TcpStream>> {
        &self.idle[crate::workers::current() % self.idle.len()]
    }

    pub(crate) fn status(&self) -> NodeStatus {
        decode(self.status.load(Ordering::Relaxed))
    }

    /// Sets the status; true when it changed (exactly one caller sees the change).
    pub(crate) fn set_status(&self, s: NodeStatus) -> bool {
        self.status.swap(encode(s), Ordering::AcqRel) != encode(s)
    }

    /// Nodes whose status is unknown (no check configured, or not checked yet) take traffic.
    pub(crate) fn is_up(&self) -> bool {
        self.status.load(Ordering::Relaxed) != DOWN
    }

    /// An idle pooled connection that the back end has not closed, if any.
    pub(crate) fn take_idle(&self) -> Option<TcpStream> {
        loop {
            let s = self.pool().lock().unwrap_or_else(|e| e.into_inner()).pop()?;
            let mut probe = [0u8; 1];
            match s.try_read(&mut probe) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Some(s),
                // Closed by the peer, unexpected bytes, or an error: not reusable.
                _ => continue,
            }
        }
    }

    pub(crate) fn put_idle(&self, s: TcpStream, max: usize) {
        let mut idle = self.pool().lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < max {
            idle.push(s);
        }
    }

    /// Closes the idle connections. They belong to the workers' event loops, so they are handed
    /// back to be dropped there (dropping one elsewhere is also safe, only slower).
    pub(crate) fn clear_idle(&self) {
        for p in self.idle.iter() {
            p.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}

/// One node of one config generation.
#[derive(Debug, Clone)]
pub(crate) struct NodeRt {
    pub(crate) id: i64,
    pub(crate) dial: Option<SocketAddr>,
    pub(crate) weight: u32,
    pub(crate) mode: NodeMode,
    /// Opaque value of the `NB_SRVID` stickiness cookie naming this node.
    pub(crate) token: u64,
    pub(crate) shared: std::sync::Arc<NodeShared>,
}

impl NodeRt {
    /// May take new sessions picked by the algorithm (`accept` and `backup` nodes that are not down).
    pub(crate) fn selectable(&self) -> bool {
        self.dial.is_some() && matches!(self.mode, NodeMode::Accept | NodeMode::Backup) && self.shared.is_up()
    }

    /// May keep a session already pinned to it (`drain` nodes too).
    pub(crate) fn sticky_ok(&self) -> bool {
        self.dial.is_some() && self.mode != NodeMode::Reject && self.shared.is_up()
    }
}

/// Counts a session against a node while it lives.
pub(crate) struct ActiveGuard<'a>(&'a NodeShared);

impl<'a> ActiveGuard<'a> {
    pub(crate) fn new(n: &'a NodeShared) -> ActiveGuard<'a> {
        n.active.add(1);
        ActiveGuard(n)
    }
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.0.active.sub(1);
    }
}
