//! Snapshots, restores and resets of the whole state. The store copies the data; here the rest
//! of the process follows: the read cache (the store invalidates it), the balancers' desired
//! state (republished, so listeners match the restored balancers), instance transitions left
//! mid-way in the restored state (resumed).

use std::time::Instant;

use nubis_model::{Error, Result};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{BOOTSTRAP_HASH, Operator};
use crate::App;

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotCreate {
    /// 1..64 letters, digits, `-` and `_`; an existing snapshot of that name is replaced.
    #[schema(required = true, schema_with = name_schema)]
    pub name: Option<String>,
}

/// A saved snapshot.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Snapshot {
    pub name: String,
}

/// What a restore or a reset did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StateChange {
    /// The snapshot restored (null for a reset).
    pub snapshot: Option<String>,
    /// How long the database part took, in milliseconds.
    pub took_ms: f64,
}

impl App {
    pub async fn snapshot_create(&self, _op: &Operator, input: SnapshotCreate) -> Result<Snapshot> {
        let Some(name) = input.name else { return Err(Error::invalid("name", "Required")) };
        if !nubis_store::controls::valid_snapshot_name(&name) {
            return Err(Error::invalid("name", "Must be 1-64 letters, digits, '-' or '_'"));
        }
        self.store.snapshot_save(&name).await?;
        Ok(Snapshot { name })
    }

    pub async fn snapshot_list(&self, _op: &Operator) -> Result<Vec<Snapshot>> {
        Ok(self.store.snapshot_names().await?.into_iter().map(|name| Snapshot { name }).collect())
    }

    pub async fn snapshot_delete(&self, _op: &Operator, name: &str) -> Result<()> {
        if self.store.snapshot_delete(name).await? { Ok(()) } else { Err(Error::NotFound) }
    }

    /// Replaces the whole state with a snapshot (the clock and the faults stay as they are).
    pub async fn snapshot_restore(&self, _op: &Operator, name: &str) -> Result<StateChange> {
        let start = Instant::now();
        if !self.store.snapshot_restore(name).await? {
            return Err(Error::NotFound);
        }
        let took_ms = start.elapsed().as_secs_f64() * 1000.0;
        self.state_replaced().await?;
        Ok(StateChange { snapshot: Some(name.to_string()), took_ms })
    }

    /// Back to a fresh first-run state with the same bootstrap token; the clock back to the
    /// system time; every fault gone.
    pub async fn state_reset(&self, op: &Operator) -> Result<StateChange> {
        let hash = match self.store.control_setting(BOOTSTRAP_HASH).await? {
            Some(h) => h,
            None => self.store.bootstrap_token_hash_fallback().await?.ok_or_else(|| {
                Error::refused("No bootstrap token is recorded in this database, so a reset could not keep it")
            })?,
        };
        let start = Instant::now();
        self.store.state_wipe().await?;
        self.bootstrap_hashed(&hash).await?;
        let took_ms = start.elapsed().as_secs_f64() * 1000.0;
        self.faults_clear().await?;
        self.clock_reset(op).await;
        self.state_replaced().await?;
        Ok(StateChange { snapshot: None, took_ms })
    }

    /// After the state changed under the process: balancers and instances follow it.
    async fn state_replaced(&self) -> Result<()> {
        self.balancers_changed();
        self.runtime_resume().await?;
        Ok(())
    }
}

fn name_schema() -> utoipa::openapi::Schema {
    use nubis_store::controls::{SNAPSHOT_NAME_LEN, SNAPSHOT_NAME_PATTERN};
    nubis_model::schema::schema(nubis_model::schema::pattern(
        SNAPSHOT_NAME_LEN.0,
        SNAPSHOT_NAME_LEN.1,
        SNAPSHOT_NAME_PATTERN,
    ))
}
