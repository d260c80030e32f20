//! Shared run-time state of balancers and listeners, and the choice of a back end for a new session
//! (stickiness first, then the algorithm over the current view).
//!
//! A config's state is one immutable [`Gen`] behind an `ArcSwap`: a config update or a health
//! change publishes a new generation; connections keep a cheap cache of it (`arc_swap::Cache`), so
//! the hot path takes no lock.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::{ArcSwap, ArcSwapOption};
use nubis_model::balancer::{Algorithm, HealthCheck, NodeStatus, Observation, Protocol, ProxyProtocol, Stickiness};
use nubis_model::firewall::CompiledRules;
use tokio::sync::{Notify, mpsc};

use crate::node::NodeRt;
use crate::select::{View, leastconn, source};
use crate::settings::DataplaneSettings;
use crate::stats::ConfigStats;
use crate::sticky::StickyTable;
use crate::throttle::Throttle;

/// State shared by all the listeners of one balancer.
#[derive(Debug)]
pub(crate) struct BalancerShared {
    pub(crate) firewall: ArcSwapOption<CompiledRules>,
    pub(crate) throttle: Throttle,
    /// `client_udp_sess_throttle`: new UDP sessions per second per client IP.
    pub(crate) udp_throttle: Throttle,
}

/// One generation of a config's state.
#[derive(Debug, Clone)]
pub(crate) struct Gen {
    pub(crate) protocol: Protocol,
    pub(crate) algorithm: Algorithm,
    pub(crate) stickiness: Stickiness,
    pub(crate) proxy_protocol: ProxyProtocol,
    pub(crate) check: HealthCheck,
    pub(crate) nodes: Vec<NodeRt>,
    pub(crate) view: Arc<View>,
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) sticky: Arc<StickyTable>,
    /// `udp` configs: the nodes' port that health checks connect to.
    pub(crate) udp_check_port: u16,
    /// `udp` configs: how long a session may stay idle.
    pub(crate) udp_session_timeout: std::time::Duration,
}

/// A chosen node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) idx: u16,
    /// The client must be given the stickiness cookie for this node.
    pub(crate) set_cookie: bool,
}

impl Gen {
    /// The node for a new session of client `ip` (with the node token of its stickiness cookie, if
    /// any), avoiding the nodes in `exclude` (already tried for this session).
    pub(crate) fn choose(&self, rr: &AtomicU64, ip: IpAddr, cookie: Option<u64>, exclude: &[u16]) -> Option<Choice> {
        match self.stickiness {
            Stickiness::HttpCookie => {
                if let Some(t) = cookie
                    && let Some(i) = self.nodes.iter().position(|n| n.token == t)
                    && self.nodes[i].sticky_ok()
                    && !exclude.contains(&(i as u16))
                {
                    return Some(Choice { idx: i as u16, set_cookie: false });
                }
                let idx = self.pick(rr, ip, exclude)?;
                Some(Choice { idx, set_cookie: true })
            }
            Stickiness::Table => {
                if let Some(id) = self.sticky.get(ip)
                    && let Some(i) = self.nodes.iter().position(|n| n.id == id)
                    && self.nodes[i].sticky_ok()
                    && !exclude.contains(&(i as u16))
                {
                    return Some(Choice { idx: i as u16, set_cookie: false });
                }
                let idx = self.pick(rr, ip, exclude)?;
                self.sticky.put(ip, self.nodes[idx as usize].id);
                Some(Choice { idx, set_cookie: false })
            }
            // `session` and `source_ip` are stickiness of `udp` configs (see `udp.rs`).
            Stickiness::None | Stickiness::Session | Stickiness::SourceIp => {
                Some(Choice { idx: self.pick(rr, ip, exclude)?, set_cookie: false })
            }
        }
    }

    pub(crate) fn pick(&self, rr: &AtomicU64, ip: IpAddr, exclude: &[u16]) -> Option<u16> {
        let v = &*self.view;
        if v.active.is_empty() {
            return None;
        }
        let first = match self.algorithm {
            Algorithm::Roundrobin => v.schedule[rr.fetch_add(1, Ordering::Relaxed) as usize % v.schedule.len()],
            Algorithm::Leastconn => {
                let start = if v.active.len() > 1 { rr.fetch_add(1, Ordering::Relaxed) as usize } else { 0 };
                leastconn::pick(&v.active, &self.nodes, start)?
            }
            Algorithm::Source => v.active[source::pick(&v.weights, ip)?],
            // `ring_hash` is for `udp` configs, which hash the client's whole address (`udp.rs`).
            Algorithm::RingHash => v.active[source::pick(&v.weights, ip)?],
        };
        if !exclude.contains(&first) {
            return Some(first);
        }
        let pos = v.active.iter().position(|&i| i == first).unwrap_or(0);
        (1..v.active.len()).map(|k| v.active[(pos + k) % v.active.len()]).find(|i| !exclude.contains(i))
    }
}

/// Everything a listener and its connections share. Outlives config updates (not port moves:
/// those keep it too, only the socket changes).
#[derive(Debug)]
pub(crate) struct ListenerShared {
    pub(crate) balancer_id: i64,
    pub(crate) config_id: i64,
    pub(crate) state: Arc<ArcSwap<Gen>>,
    swap_lock: Mutex<()>,
    pub(crate) balancer: Arc<BalancerShared>,
    pub(crate) stats: ConfigStats,
    pub(crate) settings: Arc<DataplaneSettings>,
    /// Client connections open on this listener.
    pub(crate) open: AtomicUsize,
    /// The rotation of `roundrobin` (and leastconn's tie-break start): one per config, shared by
    /// every proxy worker, so consecutive sessions follow the schedule whichever worker takes them.
    pub(crate) rr: AtomicU64,
    /// Woken on every published generation (a config update), so health checks follow at once.
    pub(crate) changed: Notify,
    /// The address the listener is bound to, when it is.
    pub(crate) bound: Mutex<Option<SocketAddr>>,
    pub(crate) obs: mpsc::Sender<Observation>,
}

impl ListenerShared {
    pub(crate) fn new(
        balancer_id: i64,
        config_id: i64,
        cur: Gen,
        balancer: Arc<BalancerShared>,
        settings: Arc<DataplaneSettings>,
        obs: mpsc::Sender<Observation>,
    ) -> ListenerShared {
        let shards = settings.worker_threads;
        ListenerShared {
            balancer_id,
            config_id,
            state: Arc::new(ArcSwap::from_pointee(cur)),
            swap_lock: Mutex::new(()),
            balancer,
            stats: ConfigStats::new(shards),
            settings,
            open: AtomicUsize::new(0),
            rr: AtomicU64::new(0),
            changed: Notify::new(),
            bound: Mutex::new(None),
            obs,
        }
    }

    /// Publishes a new generation (a config update); the view is rebuilt from current health.
    pub(crate) fn publish(&self, mut cur: Gen) {
        let _g = self.swap_lock.lock().unwrap_or_else(|e| e.into_inner());
        cur.view = Arc::new(View::build(&cur.nodes));
        self.state.store(Arc::new(cur));
        self.changed.notify_one();
    }

    /// Rebuilds the view of the current generation after a health change.
    pub(crate) fn refresh_view(&self) {
        let _g = self.swap_lock.lock().unwrap_or_else(|e| e.into_inner());
        let cur = self.state.load_full();
        let mut next = (*cur).clone();
        next.view = Arc::new(View::build(&next.nodes));
        self.state.store(Arc::new(next));
    }

    /// Sets a node's status; on a change, rebuilds the view and then reports it, so a status the
    /// API has been told is already the one new sessions are routed by.
    pub(crate) fn set_status(&self, node: &NodeRt, status: NodeStatus) {
        if node.shared.set_status(status) {
            self.refresh_view();
            tracing::info!(
                balancer = self.balancer_id,
                config = self.config_id,
                node = node.id,
                ?status,
                "node health"
            );
            let o = Observation::NodeHealth {
                balancer_id: self.balancer_id,
                config_id: self.config_id,
                node_id: node.id,
                status,
            };
            if let Err(e) = self.obs.try_send(o) {
                // The channel is full or closed: deliver it from a task so it is not lost.
                let tx = self.obs.clone();
                let o = e.into_inner();
                tokio::spawn(async move {
                    let _ = tx.send(o).await;
                });
            }
        }
    }

    /// A proxied connection or request to `node` failed (connect error, reset, or a 5xx answer):
    /// with `check_passive` the node is taken out of rotation until an active check passes.
    pub(crate) fn passive_failure(&self, cur: &Gen, node: &NodeRt) {
        if cur.check.passive {
            node.shared.failures.store(cur.check.attempts.max(1), Ordering::Relaxed);
            self.set_status(node, NodeStatus::Down);
        }
    }
}
