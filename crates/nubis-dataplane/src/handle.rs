//! Starting the data plane, its handle (graceful shutdown, synchronous snapshots of node health
//! and counters) and the periodic `Observation::Traffic` reporter.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nubis_model::balancer::{DesiredState, NodeStatus, Observation};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::fabric::{Fabric, NetworkMode};
use crate::reconcile::{Reconciler, Registry};
use crate::settings::DataplaneSettings;
use crate::workers::Workers;

/// Starts the data plane on the current tokio runtime. It applies every state published on
/// `desired` and reports node health changes and traffic on `observations`.
pub fn start(
    settings: DataplaneSettings,
    mode: NetworkMode,
    desired: watch::Receiver<Arc<DesiredState>>,
    observations: mpsc::Sender<Observation>,
) -> DataplaneHandle {
    let settings = Arc::new(settings);
    let stop = CancellationToken::new();
    let registry = Arc::new(Registry::default());
    let workers = Arc::new(Workers::start(settings.worker_threads));
    let rec = Reconciler::new(
        Fabric::new(mode),
        Arc::clone(&settings),
        observations.clone(),
        Arc::clone(&registry),
        stop.clone(),
        Arc::clone(&workers),
    );
    let reconcile = tokio::spawn(rec.run(desired));
    let reporter =
        tokio::spawn(report_traffic(Arc::clone(&registry), observations, settings.stats_interval, stop.clone()));
    DataplaneHandle { stop, reconcile, reporter, registry, workers }
}

/// The running data plane.
#[derive(Debug)]
pub struct DataplaneHandle {
    stop: CancellationToken,
    reconcile: JoinHandle<()>,
    reporter: JoinHandle<()>,
    registry: Arc<Registry>,
    workers: Arc<Workers>,
}

impl DataplaneHandle {
    /// Stops every listener, connection and health check, sends the last traffic deltas, and
    /// returns when all of it has ended.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.reconcile.await;
        let _ = self.reporter.await;
        self.workers.stop().await;
    }

    /// Node health and counters of every config, read now.
    pub fn snapshot(&self) -> Snapshot {
        let configs = self
            .registry
            .all()
            .into_iter()
            .map(|s| {
                let cur = s.state.load();
                let (connections, bytes_in, bytes_out) = s.stats.totals();
                ConfigSnapshot {
                    balancer_id: s.balancer_id,
                    config_id: s.config_id,
                    listening: *s.bound.lock().unwrap_or_else(|e| e.into_inner()),
                    open_connections: s.open.load(Ordering::Relaxed),
                    connections,
                    bytes_in,
                    bytes_out,
                    nodes: cur
                        .nodes
                        .iter()
                        .map(|n| NodeSnapshot {
                            id: n.id,
                            status: n.shared.status(),
                            active: n.shared.active.sum() as usize,
                        })
                        .collect(),
                }
            })
            .collect();
        Snapshot { configs }
    }
}

/// Everything [`DataplaneHandle::snapshot`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub configs: Vec<ConfigSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSnapshot {
    pub balancer_id: i64,
    pub config_id: i64,
    /// The bound socket address, when the listener runs.
    pub listening: Option<SocketAddr>,
    pub open_connections: usize,
    /// Client connections accepted since the config appeared.
    pub connections: u64,
    /// Bytes received from clients.
    pub bytes_in: u64,
    /// Bytes sent to clients.
    pub bytes_out: u64,
    pub nodes: Vec<NodeSnapshot>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSnapshot {
    pub id: i64,
    pub status: NodeStatus,
    /// Sessions in flight.
    pub active: usize,
}

impl Snapshot {
    pub fn config(&self, balancer_id: i64, config_id: i64) -> Option<&ConfigSnapshot> {
        self.configs.iter().find(|c| c.balancer_id == balancer_id && c.config_id == config_id)
    }

    pub fn node_status(&self, balancer_id: i64, config_id: i64, node_id: i64) -> Option<NodeStatus> {
        self.config(balancer_id, config_id)?.nodes.iter().find(|n| n.id == node_id).map(|n| n.status)
    }
}

async fn report_traffic(
    registry: Arc<Registry>,
    tx: mpsc::Sender<Observation>,
    every: std::time::Duration,
    stop: CancellationToken,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let last = tokio::select! {
            _ = tick.tick() => false,
            _ = stop.cancelled() => true,
        };
        for s in registry.all() {
            if let Some((connections, bytes_in, bytes_out)) = s.stats.take_delta() {
                let o = Observation::Traffic {
                    balancer_id: s.balancer_id,
                    config_id: s.config_id,
                    connections,
                    bytes_in,
                    bytes_out,
                };
                if tx.send(o).await.is_err() {
                    return;
                }
            }
        }
        if last {
            return;
        }
    }
}
