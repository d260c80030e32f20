//! The load-balancer data plane as `nubis serve` runs it (with the API, or alone with
//! `--role dataplane`): the listeners, the publisher of the desired state, the balancer leases
//! and the recorder of what the data plane sees.

use nubis_app::App;

/// The running load-balancer data plane with the tasks that feed it and record what it sees.
pub(crate) struct Dataplane {
    publisher: tokio::task::JoinHandle<()>,
    pub(crate) ownership: nubis_app::nodebalancer::ownership::Ownership,
    pub(crate) handle: nubis_dataplane::DataplaneHandle,
    recorder: tokio::task::JoinHandle<()>,
    stop_recorder: tokio::sync::oneshot::Sender<()>,
}

/// A name for this data-plane process in the balancer leases, unique across hosts and restarts.
fn owner_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let host = host.trim();
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    let host = if host.is_empty() { "host" } else { host };
    format!("{host}-{}-{:x}", std::process::id(), nanos % (1 << 40))
}

/// Starts the data plane on the desired state the application publishes (now, after every
/// change, and every reconcile interval for changes made by other replicas), restricted to the
/// balancers this process owns, and records its observations (node health, traffic) in the
/// database.
pub(crate) fn start(app: &App) -> Dataplane {
    let config = app.config();
    let every = std::time::Duration::from_millis(config.dataplane.reconcile_interval_ms.max(10));
    let publisher = app.spawn_balancer_publisher(every);
    let ownership = app.spawn_balancer_ownership(owner_id());
    let (obs_tx, obs_rx) = tokio::sync::mpsc::channel(4096);
    let (stop_recorder, stop_rx) = tokio::sync::oneshot::channel();
    let recorder = app.spawn_observation_recorder(obs_rx, stop_rx);
    let settings = nubis_dataplane::DataplaneSettings::from(&config.dataplane);
    let handle = nubis_dataplane::start(settings, config.network.mode, ownership.state(), obs_tx);
    tracing::info!(mode = ?config.network.mode, owner = ownership.owner(), "load-balancer data plane started");
    Dataplane { publisher, ownership, handle, recorder, stop_recorder }
}

impl Dataplane {
    /// Stops publishing, closes every listener and connection, writes the last traffic, and
    /// frees this process's balancers for the other data-plane processes.
    pub(crate) async fn stop(self) {
        self.publisher.abort();
        self.handle.shutdown().await;
        let _ = self.stop_recorder.send(());
        let _ = self.recorder.await;
        self.ownership.leave().await;
        tracing::info!("load-balancer data plane stopped");
    }
}
