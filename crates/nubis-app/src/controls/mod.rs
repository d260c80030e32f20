//! The test controls: a clock the operator can move, faults injected into requests and
//! resources, snapshots, restores and resets of the whole state, and fixtures. They are reached
//! only through operator tokens (never through the accounts' tokens), and not at all when
//! `controls.enabled` is false.

pub mod clock;
pub mod faults;
pub mod fixtures;

pub mod state;

use std::sync::RwLock;

use nubis_model::{Error, Result, Timestamp};

use crate::App;
use crate::auth::{hash_secret_hex, new_secret};

pub use clock::{Clock, TimeHook};
pub use faults::{Fault, FaultCreate, FaultKind, FaultRegistry, HttpFault, PaymentFault};

/// An authenticated operator (the holder of an operator token).
#[derive(Debug, Clone)]
pub struct Operator {
    _private: (),
}

impl Operator {
    /// An operator token stands for the operator of the cloud (fixtures create accounts and
    /// users as `nubis admin` does).
    pub(crate) fn admin(&self) -> crate::auth::Admin {
        crate::auth::Admin::new()
    }
}

/// The controls' state in this process: the faults and what runs when the clock moves.
pub struct Controls {
    pub faults: FaultRegistry,
    hooks: RwLock<Vec<(String, TimeHook)>>,
    clock_lock: tokio::sync::Mutex<()>,
}

impl Default for Controls {
    fn default() -> Self {
        Controls {
            faults: FaultRegistry::default(),
            hooks: RwLock::new(clock::TIME_MOVED.iter().map(|(n, h)| (n.to_string(), *h)).collect()),
            clock_lock: tokio::sync::Mutex::new(()),
        }
    }
}

/// Name of the control setting holding the bootstrap token's hash (for `reset`).
pub(crate) const BOOTSTRAP_HASH: &str = "bootstrap_token_hash";

impl App {
    /// Whether the test controls are reachable at all.
    pub fn controls_enabled(&self) -> bool {
        self.config.controls.enabled
    }

    /// Turns a bearer token into an operator: 401 when it is no token at all, 403 when it is a
    /// valid token of an account (only operator tokens reach the controls).
    pub async fn authenticate_operator(&self, bearer: &str) -> Result<Operator> {
        if !self.controls_enabled() {
            return Err(Error::NotFound);
        }
        if bearer.is_empty() || bearer.len() > 512 {
            return Err(Error::Unauthenticated("Invalid Token".into()));
        }
        if self.store.operator_token_exists(&hash_secret_hex(bearer)).await? {
            return Ok(Operator { _private: () });
        }
        match self.authenticate(bearer).await {
            Ok(_) => Err(Error::Forbidden("The test controls need an operator token".into())),
            Err(e) => Err(e),
        }
    }

    /// Issues an operator token (`nubis admin token create --operator`); with `secret`, that
    /// value (at least 16 characters), otherwise a random one. Returns the secret, shown once.
    pub async fn admin_operator_token_create(
        &self,
        _admin: &crate::auth::Admin,
        label: &str,
        secret: Option<&str>,
    ) -> Result<String> {
        let secret = secret.map(str::to_string).unwrap_or_else(new_secret);
        if secret.len() < 16 || secret.len() > 512 {
            return Err(Error::invalid("operator-token", "Must be 16-512 characters"));
        }
        let hash = hash_secret_hex(&secret);
        if self.store.operator_token_exists(&hash).await? {
            return Ok(secret);
        }
        let (label, hash) = (label, &hash);
        self.write(|tx| {
            Box::pin(async move {
                tx.operator_token_insert(label, hash, Timestamp::now()).await?;
                Ok(())
            })
        })
        .await?;
        Ok(secret)
    }
}
