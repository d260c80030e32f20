//! The instance runtime: a [`Driver`] behind a trait performs each step of a power transition
//! (the default [`simulated::SimulatedDriver`] just takes its configured time); a background task
//! per transition persists every step through the store and finishes the operation's `started`
//! event in the same transaction. The transition is stored (status, target, operation counter),
//! so after a restart [`App::runtime_resume`] completes every instance left in a transitional
//! state, and a step of an outdated transition changes nothing.

pub mod netns;
pub mod simulated;

use std::future::Future;
use std::pin::Pin;

use nubis_model::event::NewEvent;
use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::instances::InstanceRow;

use crate::App;
use crate::controls::FaultKind;
use crate::instance::instance_entity;

pub type DriverFuture = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// One step of a power transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Provision,
    Boot,
    Shutdown,
    Reboot,
}

impl Step {
    /// The configured time of this step (`[runtime]`): exactly what the simulated driver takes,
    /// and the least the netns driver takes, so the two answer alike to a client that polls.
    pub fn least(self, config: &nubis_model::config::RuntimeConfig) -> std::time::Duration {
        std::time::Duration::from_millis(match self {
            Step::Provision => config.provision_ms,
            Step::Boot => config.boot_ms,
            Step::Shutdown => config.shutdown_ms,
            Step::Reboot => config.reboot_ms,
        })
    }
}

/// What runs instances. The future completes when the step is done.
pub trait Driver: Send + Sync {
    fn run(&self, instance_id: i64, step: Step) -> DriverFuture;
}

/// The step an instance in `status` is in, and the state it ends in (`target` is where the whole
/// transition ends: a provisioning instance created with `booted` goes on to boot).
fn step_of(status: Status, target: Status) -> Option<(Step, Status)> {
    match status {
        Status::Provisioning if target == Status::Running => Some((Step::Provision, Status::Booting)),
        Status::Provisioning => Some((Step::Provision, Status::Offline)),
        Status::Booting => Some((Step::Boot, Status::Running)),
        Status::Rebooting => Some((Step::Reboot, Status::Running)),
        Status::ShuttingDown => Some((Step::Shutdown, Status::Offline)),
        // Rebuild, resize and migrate (instance/lifecycle.rs): the instance is off while its
        // disks are remade or moved (a provisioning step), then boots again if it was running.
        Status::Rebuilding | Status::Resizing | Status::Migrating if target == Status::Running => {
            Some((Step::Provision, Status::Booting))
        }
        Status::Rebuilding | Status::Resizing | Status::Migrating => Some((Step::Provision, Status::Offline)),
        Status::Offline | Status::Running | Status::Deleting => None,
    }
}

impl App {
    /// Runs the instance's current transition to its end in the background.
    pub(crate) fn runtime_drive(&self, id: i64) {
        let app = self.clone();
        tokio::spawn(async move {
            if let Err(e) = app.runtime_run(id).await {
                tracing::warn!(instance = id, error = %e, "instance transition stopped");
            }
        });
    }

    /// Completes the transitions of every instance left in a transitional state (after a
    /// restart). Returns how many it resumed.
    pub async fn runtime_resume(&self) -> Result<usize> {
        let names: Vec<&str> = Status::ALL.iter().filter(|s| s.is_transitional()).map(|s| s.name()).collect();
        let stuck = self.store.instances_in_status(&names).await?;
        for i in &stuck {
            tracing::info!(instance = i.id, status = %i.status, "resuming instance transition");
            self.runtime_drive(i.id);
        }
        Ok(stuck.len())
    }

    async fn runtime_run(&self, id: i64) -> Result<()> {
        loop {
            let Some(inst) = self.until_answered(id, || self.store.instance_by_id(id)).await? else { return Ok(()) };
            let (Some(status), Some(target)) = (Status::parse(&inst.status), Status::parse(&inst.target_status)) else {
                return Ok(());
            };
            let Some((step, mut next)) = step_of(status, target) else { return Ok(()) };
            // Test controls: the instance stays provisioning, or its boot fails.
            let faults = &self.controls.faults;
            if step == Step::Provision && faults.take_instance(FaultKind::InstanceProvisioning, id, inst.account_id) {
                tracing::info!(instance = id, "stays provisioning (injected fault)");
                return Ok(());
            }
            let boot_fails = step == Step::Boot && faults.take_instance(FaultKind::InstanceBoot, id, inst.account_id);
            self.driver.run(id, step).await?;
            if boot_fails {
                next = Status::Offline;
            }
            let inst = &inst;
            // The step is done: it is recorded once the database answers, never done again.
            let advanced = self.until_answered(id, || self.runtime_record(inst, status, next, boot_fails)).await?;
            if !advanced {
                // A service transfer moved the instance meanwhile (the same operation, another
                // account): its transition goes on for the new owner. Or the record was made by
                // an attempt whose answer was lost: it goes on from there.
                let goes_on = self.until_answered(id, || self.store.instance_by_id(id)).await?.is_some_and(|i| {
                    i.op_seq == inst.op_seq
                        && ((i.account_id != inst.account_id && i.status == inst.status) || i.status == next.name())
                });
                if goes_on {
                    continue;
                }
                return Ok(());
            }
        }
    }

    /// Records a performed step: the instance's next status and its operation's event, unless
    /// it was deleted or another operation took over. Whether it did.
    async fn runtime_record(&self, inst: &InstanceRow, status: Status, next: Status, boot_fails: bool) -> Result<bool> {
        let id = inst.id;
        self.write(|tx| {
            Box::pin(async move {
                // Deleted, or another operation took over: leave everything as it is.
                let now = tx.instance_lock(id, inst.account_id).await?;
                if now.is_none_or(|i| i.op_seq != inst.op_seq || i.status != status.name()) {
                    return Ok(false);
                }
                if let Some(e) = inst.op_event_id {
                    tx.event_set_status(e, if boot_fails { "failed" } else { "finished" }).await?;
                }
                // A created instance that boots gets its own boot event.
                let boot_event = if next == Status::Booting {
                    let e = NewEvent {
                        account_id: inst.account_id,
                        action: "instance_boot",
                        entity: Some(instance_entity(inst)),
                        secondary: None,
                        username: inst.op_username.clone(),
                        status: "started",
                        message: None,
                        visible_with: Some((GrantKind::Instance, inst.id)),
                        subject_user_id: None,
                    };
                    Some(tx.event_insert(&e).await?)
                } else {
                    None
                };
                let stepped =
                    tx.instance_step(id, inst.op_seq, status.name(), next.name(), boot_event, Timestamp::now()).await?;
                Ok(stepped.is_some())
            })
        })
        .await
    }

    /// Runs `f` again, after a pause that grows, while the database is unavailable (a
    /// connection not had in time, a statement unanswered, a write that kept losing): a
    /// transition is never left half-way by a moment's outage, as nothing but a restart would
    /// pick it up again. Stops when the store is closed.
    async fn until_answered<T, F: Future<Output = Result<T>>>(&self, id: i64, mut f: impl FnMut() -> F) -> Result<T> {
        let mut pause = std::time::Duration::from_millis(100);
        loop {
            match f().await {
                Err(Error::Unavailable(reason)) if !self.store.is_closed() => {
                    tracing::warn!(instance = id, %reason, "instance transition waits for the database");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_secs(5));
                }
                done => return done,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_end_where_they_should() {
        assert_eq!(step_of(Status::Provisioning, Status::Running), Some((Step::Provision, Status::Booting)));
        assert_eq!(step_of(Status::Provisioning, Status::Offline), Some((Step::Provision, Status::Offline)));
        assert_eq!(step_of(Status::Booting, Status::Running), Some((Step::Boot, Status::Running)));
        assert_eq!(step_of(Status::ShuttingDown, Status::Offline), Some((Step::Shutdown, Status::Offline)));
        assert_eq!(step_of(Status::Rebooting, Status::Running), Some((Step::Reboot, Status::Running)));
        assert_eq!(step_of(Status::Running, Status::Running), None);
    }
}
