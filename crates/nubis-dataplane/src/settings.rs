//! Runtime settings of the data plane: the protective limits from the configuration file plus a few
//! knobs (documented below) that let tests run health checks and stats faster than the API allows.

use std::time::Duration;

use nubis_model::config::DataplaneConfig;

/// Settings of one running data plane.
#[derive(Debug, Clone)]
pub struct DataplaneSettings {
    /// A client connection with no complete request (http) or no traffic (tcp) for this long is
    /// closed. In http mode a request head must also arrive completely within this time of the
    /// connection becoming ready for it, so a slowloris client cannot hold a connection by
    /// trickling bytes. It also bounds TLS handshakes and the wait for a back end's response.
    pub client_idle_timeout: Duration,
    /// Dialing a back end gives up after this long (the node counts as failed for passive checks).
    pub backend_connect_timeout: Duration,
    /// Largest request head accepted; a larger one gets `400` (as HAProxy answers) and the
    /// connection is closed.
    pub max_header_bytes: usize,
    /// Concurrent client connections per listener; connections beyond it are closed at once.
    pub max_connections_per_listener: usize,
    /// How often the reconcile loop re-applies the desired state (retrying failed binds).
    pub reconcile_interval: Duration,
    /// How often `Observation::Traffic` deltas are emitted (only for configs with traffic).
    pub stats_interval: Duration,
    /// Overrides every config's `check_interval` (for tests: the API's minimum is 2 s). `None`
    /// uses the config's value. Check timeouts are capped at the effective interval.
    pub check_interval_override: Option<Duration>,
    /// Idle back-end connections kept per node for reuse by `http`/`https` configs.
    pub max_idle_backend_per_node: usize,
    /// Threads dedicated to proxying. Each runs its own single-threaded event loop with its own
    /// `SO_REUSEPORT` socket for every listener, so connections never hop between threads.
    /// Default: the number of CPUs. 0 runs the listeners on the caller's tokio runtime.
    pub worker_threads: usize,
}

impl DataplaneSettings {
    pub fn from_config(c: &DataplaneConfig) -> DataplaneSettings {
        DataplaneSettings {
            client_idle_timeout: Duration::from_millis(c.client_idle_timeout_ms.max(1)),
            backend_connect_timeout: Duration::from_millis(c.backend_connect_timeout_ms.max(1)),
            max_header_bytes: c.max_header_bytes.max(1024),
            max_connections_per_listener: c.max_connections_per_listener.max(1),
            reconcile_interval: Duration::from_millis(c.reconcile_interval_ms.max(10)),
            stats_interval: Duration::from_secs(1),
            check_interval_override: None,
            max_idle_backend_per_node: 512,
            worker_threads: c
                .worker_threads
                .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
        }
    }
}

impl Default for DataplaneSettings {
    fn default() -> Self {
        DataplaneSettings::from_config(&DataplaneConfig::default())
    }
}

impl From<&DataplaneConfig> for DataplaneSettings {
    fn from(c: &DataplaneConfig) -> Self {
        DataplaneSettings::from_config(c)
    }
}
