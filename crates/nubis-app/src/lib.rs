//! nubis application layer: the rules of the spec as typed Rust.
//!
//! Every operation takes the authenticated [`auth::Actor`], first checks it against the policy
//! table, validates its input (reporting every field error at once), runs one write transaction
//! that includes the events it emits, and returns typed records. Nothing here knows HTTP or SQL.

pub mod admin;
pub mod auth;
pub mod catalog;
pub mod events;
pub mod mailer;
pub mod profile;
pub mod tokens;
pub mod users;
pub mod vpc;

use std::sync::Arc;

use nubis_model::config::Config;
use nubis_model::{Error, Result};
use nubis_store::Store;
use tokio::sync::Notify;

pub use auth::{Actor, Op};
pub use nubis_store::{Backend, StoreOptions};

/// The application: the store, the configuration and the catalog built from it.
#[derive(Clone)]
pub struct App {
    pub(crate) store: Store,
    pub(crate) config: Arc<Config>,
    pub(crate) catalog: Arc<catalog::Catalog>,
    /// Wakes the mailer after a commit that queued messages.
    pub(crate) mail_kick: Arc<Notify>,
}

impl App {
    /// Builds the application over an opened store. The configuration is checked here.
    pub fn new(store: Store, config: Config) -> Result<App> {
        let catalog = catalog::Catalog::build(&config).map_err(|e| Error::Internal(format!("configuration: {e}")))?;
        Ok(App { store, config: Arc::new(config), catalog: Arc::new(catalog), mail_kick: Arc::new(Notify::new()) })
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

/// Runs a write operation again when the database reports a transient conflict.
pub(crate) use nubis_store::retry;
