//! The reconcile loop: makes the running listeners match the latest `DesiredState`.
//!
//! * A config that appears starts listening on `balancer.ipv4:config.port`.
//! * A change of address, port or protocol moves the listener (old socket closed first, so configs
//!   may swap ports in one update).
//! * A config or balancer that disappears stops listening (its connections are closed).
//! * Any other change (nodes, algorithm, stickiness, checks, TLS, proxy protocol; firewall and
//!   throttle of the balancer) is published in place: no listener is interrupted.
//! * Applying the same state twice changes nothing; failed binds are retried every
//!   `reconcile_interval`.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;
use nubis_model::balancer::{BalancerSpec, CipherSuite, ConfigSpec, DesiredState, Observation, Protocol, TlsMaterial};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fabric::Fabric;
use crate::health;
use crate::listener::RunningListener;
use crate::node::{NodeRt, NodeShared};
use crate::select::View;
use crate::settings::DataplaneSettings;
use crate::state::{BalancerShared, Gen, ListenerShared};
use crate::sticky::StickyTable;
use crate::throttle::Throttle;
use crate::tls;
use crate::workers::Workers;

/// Every config's shared state, for snapshots and the stats reporter.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    pub(crate) map: Mutex<BTreeMap<(i64, i64), Arc<ListenerShared>>>,
}

impl Registry {
    pub(crate) fn all(&self) -> Vec<Arc<ListenerShared>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
    }
}

struct ConfigRt {
    spec: ConfigSpec,
    ipv4: Ipv4Addr,
    shared: Arc<ListenerShared>,
    nodes: HashMap<(i64, Option<SocketAddr>), Arc<NodeShared>>,
    sticky: Arc<StickyTable>,
    tls_for: Option<(TlsMaterial, CipherSuite)>,
    tls: Option<Arc<rustls::ServerConfig>>,
    running: Option<RunningListener>,
    health_stop: CancellationToken,
    health_task: JoinHandle<()>,
    bind_failures: u32,
    /// Idle-connection pools per node (one per proxy worker).
    pools: usize,
}

struct BalancerRt {
    shared: Arc<BalancerShared>,
    configs: HashMap<i64, ConfigRt>,
}

pub(crate) struct Reconciler {
    fabric: Fabric,
    settings: Arc<DataplaneSettings>,
    obs: mpsc::Sender<Observation>,
    secret: RandomState,
    balancers: HashMap<i64, BalancerRt>,
    registry: Arc<Registry>,
    stop: CancellationToken,
    workers: Arc<Workers>,
}

impl Reconciler {
    pub(crate) fn new(
        fabric: Fabric,
        settings: Arc<DataplaneSettings>,
        obs: mpsc::Sender<Observation>,
        registry: Arc<Registry>,
        stop: CancellationToken,
        workers: Arc<Workers>,
    ) -> Reconciler {
        Reconciler {
            fabric,
            settings,
            obs,
            secret: RandomState::new(),
            balancers: HashMap::new(),
            registry,
            stop,
            workers,
        }
    }

    pub(crate) async fn run(mut self, mut desired: watch::Receiver<Arc<DesiredState>>) {
        let mut tick = tokio::time::interval(self.settings.reconcile_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut publisher_alive = true;
        loop {
            let cur = Arc::clone(&desired.borrow_and_update());
            self.apply(&cur).await;
            tokio::select! {
                r = desired.changed(), if publisher_alive => {
                    if r.is_err() {
                        publisher_alive = false;
                    }
                }
                _ = tick.tick() => {}
                _ = self.stop.cancelled() => break,
            }
        }
        self.stop_all().await;
    }

    async fn stop_all(&mut self) {
        for (_, b) in self.balancers.drain() {
            for (_, c) in b.configs {
                stop_config(&self.registry, c).await;
            }
        }
    }

    /// Makes the running listeners match `desired`.
    pub(crate) async fn apply(&mut self, desired: &DesiredState) {
        let wanted: HashMap<i64, &Arc<BalancerSpec>> = desired.balancers.iter().map(|b| (b.id, b)).collect();
        // 1. Stop what is gone or moves.
        let gone: Vec<i64> = self.balancers.keys().filter(|id| !wanted.contains_key(id)).copied().collect();
        for id in gone {
            if let Some(b) = self.balancers.remove(&id) {
                for (_, c) in b.configs {
                    stop_config(&self.registry, c).await;
                }
            }
        }
        for b in &desired.balancers {
            let brt = self.balancers.entry(b.id).or_insert_with(|| BalancerRt {
                shared: Arc::new(BalancerShared {
                    firewall: ArcSwapOption::new(b.firewall.clone()),
                    throttle: Throttle::new(b.client_conn_throttle),
                    udp_throttle: Throttle::new(b.client_udp_sess_throttle),
                }),
                configs: HashMap::new(),
            });
            let fw_now = brt.shared.firewall.load();
            let same_fw = match (&*fw_now, &b.firewall) {
                (Some(a), Some(n)) => Arc::ptr_eq(a, n),
                (None, None) => true,
                _ => false,
            };
            if !same_fw {
                brt.shared.firewall.store(b.firewall.clone());
            }
            brt.shared.throttle.set_limit(b.client_conn_throttle);
            brt.shared.udp_throttle.set_limit(b.client_udp_sess_throttle);
            let cfg_ids: Vec<i64> = b.configs.iter().map(|c| c.id).collect();
            let removed: Vec<i64> = brt.configs.keys().filter(|id| !cfg_ids.contains(id)).copied().collect();
            for id in removed {
                if let Some(c) = brt.configs.remove(&id) {
                    stop_config(&self.registry, c).await;
                }
            }
            for c in &b.configs {
                match brt.configs.get_mut(&c.id) {
                    Some(rt) => {
                        if rt.spec == *c && rt.ipv4 == b.ipv4 {
                            continue;
                        }
                        let moved = rt.spec.port != c.port || rt.spec.protocol != c.protocol || rt.ipv4 != b.ipv4;
                        let cur = build_gen(&self.fabric, &self.secret, b.id, c, rt);
                        rt.shared.publish(cur);
                        rt.spec = c.clone();
                        rt.ipv4 = b.ipv4;
                        if moved && let Some(l) = rt.running.take() {
                            tracing::info!(balancer = b.id, config = c.id, from = %l.addr, "listener moves");
                            l.stop().await;
                            rt.bind_failures = 0;
                        }
                    }
                    None => {
                        let rt = new_config(
                            &self.fabric,
                            &self.secret,
                            &self.settings,
                            &self.obs,
                            &self.stop,
                            &self.registry,
                            b,
                            &brt.shared,
                            c,
                        );
                        brt.configs.insert(c.id, rt);
                    }
                }
            }
        }
        // 2. Start what should listen and does not.
        for (bid, brt) in self.balancers.iter_mut() {
            for (cid, rt) in brt.configs.iter_mut() {
                if rt.running.is_some() {
                    continue;
                }
                let addr = match self.fabric.bind(rt.ipv4, rt.spec.port) {
                    Ok(a) => a,
                    Err(e) => {
                        if rt.bind_failures == 0 {
                            tracing::warn!(balancer = bid, config = cid, error = %e, "listener not started");
                        }
                        rt.bind_failures += 1;
                        continue;
                    }
                };
                match RunningListener::start(addr, Arc::clone(&rt.shared), &self.stop, &self.workers.handles).await {
                    Ok(l) => {
                        rt.running = Some(l);
                        rt.bind_failures = 0;
                    }
                    Err(e) => {
                        if rt.bind_failures == 0 {
                            tracing::warn!(balancer = bid, config = cid, %addr, error = %e, "bind failed, will retry");
                        }
                        rt.bind_failures += 1;
                    }
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn new_config(
    fabric: &Fabric,
    secret: &RandomState,
    settings: &Arc<DataplaneSettings>,
    obs: &mpsc::Sender<Observation>,
    stop: &CancellationToken,
    registry: &Registry,
    b: &BalancerSpec,
    bshared: &Arc<BalancerShared>,
    c: &ConfigSpec,
) -> ConfigRt {
    let placeholder = Gen {
        protocol: c.protocol,
        algorithm: c.algorithm,
        stickiness: c.stickiness,
        proxy_protocol: c.proxy_protocol,
        check: c.check.clone(),
        nodes: Vec::new(),
        view: Arc::new(View::default()),
        tls: None,
        sticky: Arc::new(StickyTable::default()),
        udp_check_port: c.udp_check_port,
        udp_session_timeout: udp_timeout(c),
    };
    let shared =
        Arc::new(ListenerShared::new(b.id, c.id, placeholder, Arc::clone(bshared), Arc::clone(settings), obs.clone()));
    let health_stop = stop.child_token();
    let mut rt = ConfigRt {
        spec: c.clone(),
        ipv4: b.ipv4,
        shared: Arc::clone(&shared),
        nodes: HashMap::new(),
        sticky: Arc::new(StickyTable::default()),
        tls_for: None,
        tls: None,
        running: None,
        health_stop: health_stop.clone(),
        health_task: tokio::spawn(async {}),
        bind_failures: 0,
        pools: settings.worker_threads.max(1),
    };
    let cur = build_gen(fabric, secret, b.id, c, &mut rt);
    shared.publish(cur);
    rt.health_task = tokio::spawn(health::run(Arc::clone(&shared), health_stop));
    registry.map.lock().unwrap_or_else(|e| e.into_inner()).insert((b.id, c.id), shared);
    rt
}

async fn stop_config(registry: &Registry, c: ConfigRt) {
    c.health_stop.cancel();
    if let Some(l) = c.running {
        l.stop().await;
    }
    let _ = c.health_task.await;
    for n in c.nodes.values() {
        n.clear_idle();
    }
    registry.map.lock().unwrap_or_else(|e| e.into_inner()).remove(&(c.shared.balancer_id, c.shared.config_id));
    tracing::info!(balancer = c.shared.balancer_id, config = c.shared.config_id, "config stopped");
}

/// A new generation for `c`, reusing node health, pools, the stickiness table and the TLS
/// configuration where they still apply.
fn build_gen(fabric: &Fabric, secret: &RandomState, balancer_id: i64, c: &ConfigSpec, rt: &mut ConfigRt) -> Gen {
    let mut nodes_map = HashMap::with_capacity(c.nodes.len());
    let nodes: Vec<NodeRt> = c
        .nodes
        .iter()
        .map(|n| {
            let dial = match fabric.dial(n.address) {
                Ok(a) => Some(a),
                Err(e) => {
                    tracing::warn!(balancer = balancer_id, config = c.id, node = n.id, error = %e, "node not reachable");
                    None
                }
            };
            let shared = rt.nodes.remove(&(n.id, dial)).unwrap_or_else(|| Arc::new(NodeShared::new(rt.pools)));
            nodes_map.insert((n.id, dial), Arc::clone(&shared));
            NodeRt {
                id: n.id,
                dial,
                weight: u32::from(n.weight.max(1)),
                mode: n.mode,
                token: secret.hash_one((balancer_id, c.id, n.id)),
                shared,
            }
        })
        .collect();
    for old in rt.nodes.values() {
        old.clear_idle();
    }
    rt.nodes = nodes_map;
    let tls = match (&c.protocol, &c.tls) {
        (Protocol::Https, Some(m)) => {
            let key = (m.clone(), c.cipher_suite);
            if rt.tls_for.as_ref() != Some(&key) {
                rt.tls = match tls::server_config(m, c.cipher_suite) {
                    Ok(cfg) => Some(cfg),
                    Err(e) => {
                        tracing::error!(balancer = balancer_id, config = c.id, error = %e, "TLS configuration refused; the listener will refuse connections");
                        None
                    }
                };
                rt.tls_for = Some(key);
            }
            rt.tls.clone()
        }
        (Protocol::Https, None) => {
            tracing::error!(
                balancer = balancer_id,
                config = c.id,
                "https config without certificate; the listener will refuse connections"
            );
            None
        }
        _ => None,
    };
    if c.stickiness != rt.spec.stickiness {
        rt.sticky = Arc::new(StickyTable::default());
    }
    Gen {
        protocol: c.protocol,
        algorithm: c.algorithm,
        stickiness: c.stickiness,
        proxy_protocol: c.proxy_protocol,
        check: c.check.clone(),
        view: Arc::new(View::build(&nodes)),
        nodes,
        tls,
        sticky: Arc::clone(&rt.sticky),
        udp_check_port: c.udp_check_port,
        udp_session_timeout: udp_timeout(c),
    }
}

fn udp_timeout(c: &ConfigSpec) -> std::time::Duration {
    std::time::Duration::from_secs(u64::from(c.udp_session_timeout_secs.max(1)))
}
