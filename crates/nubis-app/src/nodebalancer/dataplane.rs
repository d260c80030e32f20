//! The application's side of the data plane: it publishes the desired state of every balancer
//! (built from the store) on a `watch` channel after every change and periodically (so changes
//! made by another API replica take effect), and records what the data plane observes: node
//! health into the nodes' `status` (so every replica sees it), traffic into per-balancer
//! counters per 5-minute period (`transfer`, stats).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nubis_model::balancer::{
    Algorithm, BalancerSpec, CheckKind, CipherSuite, ConfigSpec, DesiredState, HealthCheck, NodeMode, NodeSpec,
    NodeStatus, Observation, Protocol, ProxyProtocol, Stickiness, TlsMaterial,
};
use nubis_model::{Result, Timestamp};
use nubis_store::nodebalancers::{BalancerRow, ConfigRow, NodeRow};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::firewall::{CompiledCache, firewall_rules_of_balancers};
use super::view::{bucket_of, month_start};
use crate::App;

/// Observations not written to the database yet.
#[derive(Default)]
struct Unrecorded {
    /// Per balancer: connections, bytes in, bytes out.
    traffic: HashMap<i64, (i64, i64, i64)>,
    /// The last health seen of nodes whose write failed.
    health: HashMap<(i64, i64), NodeStatus>,
}

/// The channel the desired state is published on.
pub struct Publisher {
    tx: watch::Sender<Arc<DesiredState>>,
    kick: Notify,
    version: AtomicU64,
    pub(super) compiled: CompiledCache,
}

impl Default for Publisher {
    fn default() -> Self {
        Publisher {
            tx: watch::channel(Arc::new(DesiredState::default())).0,
            kick: Notify::new(),
            version: 0.into(),
            compiled: CompiledCache::default(),
        }
    }
}

/// The desired state of every balancer, from stored rows. Balancers without a config are
/// absent only from listening, not from the state (the data plane has nothing to run for them).
fn build(
    balancers: &[BalancerRow],
    configs: &[ConfigRow],
    nodes: &[NodeRow],
    firewalls: &HashMap<i64, Arc<nubis_model::firewall::CompiledRules>>,
    version: u64,
    forced_down: &dyn Fn(i64) -> bool,
) -> DesiredState {
    let mut nodes_by: HashMap<i64, Vec<NodeSpec>> = HashMap::new();
    for n in nodes {
        nodes_by.entry(n.config_id).or_default().push(NodeSpec {
            id: n.id,
            address: SocketAddrV4::new(Ipv4Addr::from(n.f.v4), n.f.port as u16),
            weight: n.f.weight.clamp(1, 255) as u8,
            // A node the test controls force DOWN gets no traffic, as a failed one would.
            mode: if forced_down(n.id) {
                NodeMode::Reject
            } else {
                NodeMode::parse(&n.f.mode).unwrap_or(NodeMode::Accept)
            },
        });
    }
    let mut configs_by: HashMap<i64, Vec<ConfigSpec>> = HashMap::new();
    for c in configs {
        let f = &c.f;
        let protocol = Protocol::parse(&f.protocol).unwrap_or(Protocol::Http);
        let tls = match (protocol, &f.ssl_cert, &f.ssl_key) {
            (Protocol::Https, Some(cert), Some(key)) => {
                Some(TlsMaterial { cert_pem: cert.clone(), key_pem: key.clone() })
            }
            _ => None,
        };
        configs_by.entry(c.nodebalancer_id).or_default().push(ConfigSpec {
            id: c.id,
            port: f.port as u16,
            protocol,
            algorithm: Algorithm::parse(&f.algorithm).unwrap_or(Algorithm::Roundrobin),
            stickiness: Stickiness::parse(&f.stickiness).unwrap_or(Stickiness::None),
            check: HealthCheck {
                kind: CheckKind::parse(&f.check).unwrap_or(CheckKind::None),
                interval_secs: f.check_interval as u32,
                timeout_secs: f.check_timeout as u32,
                attempts: f.check_attempts as u32,
                path: f.check_path.clone(),
                body: f.check_body.clone(),
                passive: f.check_passive,
            },
            proxy_protocol: ProxyProtocol::parse(&f.proxy_protocol).unwrap_or(ProxyProtocol::None),
            cipher_suite: CipherSuite::parse(&f.cipher_suite).unwrap_or(CipherSuite::Recommended),
            tls,
            nodes: nodes_by.remove(&c.id).unwrap_or_default(),
            udp_check_port: f.udp_check_port.clamp(1, 65535) as u16,
            udp_session_timeout_secs: f.udp_session_timeout.max(1) as u32,
        });
    }
    let balancers = balancers
        .iter()
        .map(|b| {
            Arc::new(BalancerSpec {
                id: b.id,
                ipv4: Ipv4Addr::from(b.v4),
                client_conn_throttle: b.client_conn_throttle.max(0) as u32,
                client_udp_sess_throttle: b.client_udp_sess_throttle.max(0) as u32,
                configs: configs_by.remove(&b.id).unwrap_or_default(),
                firewall: firewalls.get(&b.id).cloned(),
            })
        })
        .collect();
    DesiredState { version, balancers }
}

/// True when two states would run the same listeners (versions aside).
fn same(a: &DesiredState, b: &DesiredState) -> bool {
    a.balancers.len() == b.balancers.len()
        && a.balancers.iter().zip(&b.balancers).all(|(x, y)| {
            x.id == y.id
                && x.ipv4 == y.ipv4
                && x.client_conn_throttle == y.client_conn_throttle
                && x.client_udp_sess_throttle == y.client_udp_sess_throttle
                && x.configs == y.configs
                && match (&x.firewall, &y.firewall) {
                    (None, None) => true,
                    (Some(p), Some(q)) => Arc::ptr_eq(p, q),
                    _ => false,
                }
        })
}

impl App {
    /// Signals that balancers, configs or nodes changed: the publisher reloads the state.
    pub(crate) fn balancers_changed(&self) {
        self.balancer_publisher.kick.notify_one();
    }

    /// A receiver of the desired state (what the data plane runs).
    pub fn balancer_state(&self) -> watch::Receiver<Arc<DesiredState>> {
        self.balancer_publisher.tx.subscribe()
    }

    /// Loads the desired state from the store and publishes it when it differs from the last.
    pub async fn publish_balancers(&self) -> Result<()> {
        let (b, c, n) = self.store.nodebalancers_everything().await?;
        let firewalls = firewall_rules_of_balancers(self).await?;
        let p = &self.balancer_publisher;
        let faults = &self.controls.faults;
        let next = build(&b, &c, &n, &firewalls, p.version.load(Ordering::Relaxed) + 1, &|node| faults.node_down(node));
        if same(&p.tx.borrow(), &next) {
            return Ok(());
        }
        p.version.store(next.version, Ordering::Relaxed);
        tracing::debug!(version = next.version, balancers = next.balancers.len(), "balancer state published");
        p.tx.send_replace(Arc::new(next));
        Ok(())
    }

    /// Publishes the desired state now, after every change, and every `every` (changes made by
    /// another replica). Runs until aborted.
    pub fn spawn_balancer_publisher(&self, every: Duration) -> JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = app.publish_balancers().await {
                    tracing::warn!(error = %e, "loading the balancers' desired state failed; retrying");
                }
                tokio::select! {
                    _ = app.balancer_publisher.kick.notified() => {}
                    _ = tokio::time::sleep(every) => {}
                }
            }
        })
    }

    /// Records what the data plane observes until `observations` closes or `stop` fires (then
    /// what is queued is drained and written). Node health is written at once; traffic is summed
    /// per balancer and written every second. What cannot be written (the database unreachable)
    /// is kept and written again every second until it is: the data plane goes on serving
    /// meanwhile, and no traffic or health change it saw is lost.
    pub fn spawn_observation_recorder(
        &self,
        mut observations: mpsc::Receiver<Observation>,
        mut stop: oneshot::Receiver<()>,
    ) -> JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            let mut pending = Unrecorded::default();
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    o = observations.recv() => match o {
                        Some(o) => app.observe(o, &mut pending).await,
                        None => break,
                    },
                    _ = tick.tick() => app.flush(&mut pending).await,
                    _ = &mut stop => {
                        while let Ok(o) = observations.try_recv() {
                            app.observe(o, &mut pending).await;
                        }
                        break;
                    }
                }
            }
            app.flush(&mut pending).await;
        })
    }

    async fn observe(&self, o: Observation, pending: &mut Unrecorded) {
        match o {
            Observation::NodeHealth { config_id, node_id, status, .. } => {
                pending.health.remove(&(config_id, node_id));
                if let Err(e) = self.record_node_status(config_id, node_id, status).await {
                    tracing::warn!(node = node_id, error = %e, "recording a node's health failed; retrying");
                    pending.health.insert((config_id, node_id), status);
                }
            }
            Observation::Traffic { balancer_id, connections, bytes_in, bytes_out, .. } => {
                let t = pending.traffic.entry(balancer_id).or_default();
                t.0 += connections as i64;
                t.1 += bytes_in as i64;
                t.2 += bytes_out as i64;
            }
        }
    }

    /// Writes the traffic summed so far and the node health not written yet.
    async fn flush(&self, pending: &mut Unrecorded) {
        for ((config_id, node_id), status) in std::mem::take(&mut pending.health) {
            if self.record_node_status(config_id, node_id, status).await.is_err() {
                pending.health.insert((config_id, node_id), status);
            }
        }
        self.flush_traffic(&mut pending.traffic).await;
    }

    async fn record_node_status(&self, config_id: i64, node_id: i64, status: NodeStatus) -> Result<()> {
        // Test controls: a node forced DOWN stays DOWN; what was really seen is kept for later.
        let faults = &self.controls.faults;
        faults.observed_node_status(node_id, status.name());
        let status = if faults.node_down(node_id) { NodeStatus::Down } else { status };
        self.write(|tx| {
            Box::pin(async move {
                tx.nb_node_set_status(config_id, node_id, status.name()).await?;
                Ok(())
            })
        })
        .await
    }

    async fn flush_traffic(&self, traffic: &mut HashMap<i64, (i64, i64, i64)>) {
        if traffic.is_empty() {
            return;
        }
        let bucket = bucket_of(Timestamp::now().unix());
        let month = month_start();
        let batch: Vec<(i64, (i64, i64, i64))> = traffic.drain().collect();
        let batch = &batch;
        let r = self
            .write(|tx| {
                Box::pin(async move {
                    for (id, (c, i, o)) in batch {
                        tx.nb_traffic_add(*id, bucket, *c, *i, *o).await?;
                        tx.account_transfer_add(*id, month, *i, *o).await?;
                    }
                    Ok(())
                })
            })
            .await;
        if let Err(e) = r {
            tracing::warn!(error = %e, "recording balancer traffic failed; retrying");
            // Kept for the next flush, with what arrives meanwhile.
            for (id, (c, i, o)) in batch {
                let t = traffic.entry(*id).or_default();
                t.0 += c;
                t.1 += i;
                t.2 += o;
            }
        }
    }
}
