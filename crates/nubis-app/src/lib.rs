//! nubis application layer: the rules of the spec as typed Rust.
//!
//! Every operation takes the authenticated [`auth::Actor`], first checks it against the policy
//! table, validates its input (reporting every field error at once), runs one write transaction
//! that includes the events it emits, and returns typed records. Nothing here knows HTTP or SQL.

pub mod admin;
pub mod auth;
pub mod billing;
pub mod catalog;
pub mod child_accounts;
pub mod console;
pub mod controls;
mod dns;
pub mod events;
pub mod firewall;
pub mod instance;
pub mod ip;
pub mod ipv6;
mod list_orders;
pub mod mailer;
pub mod maintenance;
pub mod nodebalancer;
pub mod oauth_clients;
pub mod profile;
pub mod runtime;
pub mod service_transfer;
pub mod signin;
pub mod sshkeys;
pub mod tokens;
mod transfer;
pub mod users;
pub mod vlan;
pub mod vpc;
mod write;

use std::sync::Arc;

use nubis_ipam::Ipv4Pool;
use nubis_model::config::Config;
use nubis_model::{Error, Result};
use nubis_store::Store;
use tokio::sync::Notify;

pub use auth::{Actor, Op};
pub use nubis_store::{Backend, StoreOptions};

/// The application: the store, the configuration and the catalog built from it. Cheap to clone.
#[derive(Clone)]
pub struct App(Arc<AppInner>);

pub struct AppInner {
    pub(crate) store: Store,
    pub(crate) config: Config,
    pub(crate) catalog: catalog::Catalog,
    /// Wakes the mailer after a commit that queued messages.
    pub(crate) mail_kick: Notify,
    /// What runs instances (the simulated driver unless [`App::new_with_driver`] says otherwise).
    pub(crate) driver: Arc<dyn runtime::Driver>,
    /// The netns runtime behind the driver, when `[runtime] driver = "netns"`.
    pub(crate) netns: Option<Arc<runtime::netns::Netns>>,
    /// Where private IPv4 addresses of instances come from (`network.private_ipv4`).
    pub(crate) private_pool: Ipv4Pool,
    /// Forward DNS, checked before reverse DNS is set.
    pub(crate) dns: Arc<dns::ForwardDns>,
    /// Where the load balancers' desired state is published for the data plane.
    pub(crate) balancer_publisher: nodebalancer::dataplane::Publisher,
    /// The test controls' faults and time hooks.
    pub controls: controls::Controls,
    /// What takes payments (the simulated gateway).
    pub(crate) gateway: Arc<dyn billing::PaymentGateway>,
    /// Where `nubis serve` listens, for links when `signin.public_url` is not set.
    pub(crate) listen_url: std::sync::OnceLock<String>,
}

impl std::ops::Deref for App {
    type Target = AppInner;
    fn deref(&self) -> &AppInner {
        &self.0
    }
}

impl App {
    /// Builds the application over an opened store (the configuration is checked here), and
    /// the operator's capability ([`admin::Admin`]) for whoever opened it.
    pub fn new(store: Store, mut config: Config) -> Result<(App, admin::Admin)> {
        config.apply_runtime();
        if config.runtime.driver == nubis_model::config::DriverKind::Netns {
            let tag = &config.runtime.host_tag;
            if !nubis_netns::Names::valid_tag(tag) {
                return Err(Error::Internal("configuration: runtime.host_tag: at most 4 of a-z0-9".into()));
            }
            let netns = runtime::netns::Netns::new(&config.runtime, tag);
            let driver = Arc::new(runtime::netns::NetnsDriver(netns.clone()));
            let app = Self::build(store, config, driver, Some(netns.clone()))?;
            netns.bind_app(&app);
            return Ok((app, admin::Admin::new()));
        }
        let driver = Arc::new(runtime::simulated::SimulatedDriver::new(config.runtime.clone()));
        Self::new_with_driver(store, config, driver)
    }

    /// The same, with another instance driver.
    pub fn new_with_driver(
        store: Store,
        mut config: Config,
        driver: Arc<dyn runtime::Driver>,
    ) -> Result<(App, admin::Admin)> {
        config.apply_runtime();
        Ok((Self::build(store, config, driver, None)?, admin::Admin::new()))
    }

    fn build(
        store: Store,
        config: Config,
        driver: Arc<dyn runtime::Driver>,
        netns: Option<Arc<runtime::netns::Netns>>,
    ) -> Result<App> {
        let catalog = catalog::Catalog::build(&config).map_err(|e| Error::Internal(format!("configuration: {e}")))?;
        let private_pool = config
            .network
            .private_ipv4
            .parse()
            .map_err(|e| format!("{e}"))
            .and_then(Ipv4Pool::private)
            .map_err(|e| Error::Internal(format!("configuration: network.private_ipv4: {e}")))?;
        let dns =
            dns::ForwardDns::from_config(&config.dns).map_err(|e| Error::Internal(format!("configuration: {e}")))?;
        billing::check_config(&config.billing).map_err(|e| Error::Internal(format!("configuration: billing: {e}")))?;
        let app = App(Arc::new(AppInner {
            store,
            config,
            catalog,
            mail_kick: Notify::new(),
            driver,
            netns,
            private_pool,
            dns: Arc::new(dns),
            balancer_publisher: Default::default(),
            controls: Default::default(),
            gateway: Arc::new(billing::SimulatedGateway),
            listen_url: Default::default(),
        }));
        Ok(app)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Readiness: the database answers.
    pub async fn healthy(&self) -> bool {
        self.store.ping().await
    }
}

/// What the netns driver lacks on this host (one line each; empty: nothing), for
/// `nubis admin runtime check`.
pub fn runtime_missing_on_host(state_dir: &str) -> Vec<String> {
    nubis_netns::check::missing(std::path::Path::new(state_dir))
}

/// `nubis admin runtime sweep`: everything every nubis made on this host removed.
pub async fn runtime_sweep_host(state_dir: &str) -> Result<()> {
    nubis_netns::sweep(std::path::Path::new(state_dir)).await.map_err(|e| Error::Internal(e.to_string()))
}
