//! nubis load-balancer data plane: listeners (`tcp`, `http`, `https`, `udp`), proxying, back-end
//! selection, stickiness, health checks, throttling, PROXY protocol, balancer firewalls and
//! traffic counters, driven by a reconcile loop from the control plane's `DesiredState`.
//!
//! Wiring (in the binary):
//!
//! ```text
//! let (desired_tx, desired_rx) = tokio::sync::watch::channel(Arc::new(DesiredState::default()));
//! let (obs_tx, mut obs_rx) = tokio::sync::mpsc::channel(1024);
//! let dp = nubis_dataplane::start(DataplaneSettings::from(&config.dataplane), config.network.mode, desired_rx, obs_tx);
//! // app publishes with desired_tx.send_replace(Arc::new(state)); app consumes obs_rx.
//! dp.shutdown().await;
//! ```
//!
//! It never imports `app`, `store` or `http`: the contract is `nubis_model::balancer`.

mod backend;
pub mod fabric;
mod handle;
mod health;
mod http;
mod listener;
mod node;
pub mod proxy_protocol;
mod reconcile;
mod select;
pub mod settings;
mod sharded;
mod state;
mod stats;
pub mod sticky;
mod tcp;
mod throttle;
pub mod tls;
mod udp;
mod workers;

pub use fabric::{Fabric, FabricError, NetworkMode};
pub use handle::{ConfigSnapshot, DataplaneHandle, NodeSnapshot, Snapshot, start};
pub use settings::DataplaneSettings;
