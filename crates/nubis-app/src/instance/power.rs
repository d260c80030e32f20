//! Boot, shut down and reboot: each checks the power state inside its write transaction
//! (refusing with 400 what the state does not allow), records a `started` event and the
//! transition, and hands the instance to the runtime, which finishes both. Boot and reboot use a
//! configuration profile: the one named, the only one, or the one last booted.

use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::instance_entity;
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `POST .../boot` and `.../reboot`: the profile to boot (optional; no body is the same as `{}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct BootRequest {
    pub config_id: Option<i64>,
}

/// The profile a boot uses, read inside the transaction: the one named, else the only one,
/// else the one last booted. An instance without profiles boots as it is (nothing to choose).
pub(crate) async fn boot_config(tx: &mut Tx<'_>, i: &InstanceRow, named: Option<i64>) -> Result<Option<i64>> {
    let configs = tx.configs_of_instance(i.id).await?;
    if let Some(c) = named {
        return match configs.iter().find(|x| x.id == c) {
            Some(x) => Ok(Some(x.id)),
            None => Err(Error::invalid("config_id", "Config not found")),
        };
    }
    match configs.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(only.id)),
        many => match i.boot_config_id.filter(|b| many.iter().any(|x| x.id == *b)) {
            Some(b) => Ok(Some(b)),
            None => Err(Error::invalid(
                "config_id",
                "The instance has several configuration profiles and none was booted last: name one",
            )),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Power {
    Boot,
    Shutdown,
    Reboot,
}

/// Where a power operation takes an instance in `status` (on its way to `target` when busy):
/// (state now, final state, event), or the reason it is refused. A busy instance's refusal names
/// its status and the status to wait for before retrying.
fn transition(
    what: Power,
    status: Status,
    target: Status,
) -> std::result::Result<(Status, Status, &'static str), String> {
    if status == Status::Deleting {
        return Err("The instance is busy (deleting); it is being deleted".into());
    }
    if status.is_transitional() {
        return Err(format!(
            "The instance is busy ({}); retry once its status is {} (poll the instance until it is)",
            status.name(),
            target.name()
        ));
    }
    match (what, status) {
        (Power::Boot, Status::Offline) => Ok((Status::Booting, Status::Running, "instance_boot")),
        (Power::Boot, _) => Err("The instance is already running".into()),
        (Power::Shutdown, Status::Running) => Ok((Status::ShuttingDown, Status::Offline, "instance_shutdown")),
        (Power::Shutdown, _) => Err("The instance is already offline".into()),
        (Power::Reboot, Status::Running) => Ok((Status::Rebooting, Status::Running, "instance_reboot")),
        (Power::Reboot, _) => Err("The instance is offline; boot it instead".into()),
    }
}

impl App {
    pub async fn instance_boot(&self, actor: &Actor, id: i64) -> Result<()> {
        self.instance_boot_with(actor, id, BootRequest::default()).await
    }

    /// Boot with the profile `input` names (if any).
    pub async fn instance_boot_with(&self, actor: &Actor, id: i64, input: BootRequest) -> Result<()> {
        self.instance_power(actor, Op::InstanceBoot, id, Power::Boot, input.config_id).await
    }

    pub async fn instance_shutdown(&self, actor: &Actor, id: i64) -> Result<()> {
        self.instance_power(actor, Op::InstanceShutdown, id, Power::Shutdown, None).await
    }

    pub async fn instance_reboot(&self, actor: &Actor, id: i64) -> Result<()> {
        self.instance_reboot_with(actor, id, BootRequest::default()).await
    }

    /// Reboot into the profile `input` names (if any).
    pub async fn instance_reboot_with(&self, actor: &Actor, id: i64, input: BootRequest) -> Result<()> {
        self.instance_power(actor, Op::InstanceReboot, id, Power::Reboot, input.config_id).await
    }

    async fn instance_power(&self, actor: &Actor, op: Op, id: i64, what: Power, config: Option<i64>) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, op, id).await?;
        self.write(|tx| {
            Box::pin(async move {
                let i = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let status = Status::parse(&i.status).unwrap_or(Status::Offline);
                let after = Status::parse(&i.target_status).unwrap_or(Status::Offline);
                let (now_in, target, action) = transition(what, status, after).map_err(Error::refused)?;
                if what != Power::Shutdown {
                    let c = boot_config(tx, &i, config).await?;
                    tx.instance_set_boot_config(id, c).await?;
                }
                let e = tx
                    .event_insert(
                        &event(actor, action, instance_entity(&i))
                            .visible_with(GrantKind::Instance, id)
                            .status("started")
                            .build(),
                    )
                    .await?;
                tx.instance_start_transition(
                    id,
                    now_in.name(),
                    target.name(),
                    Some(e),
                    actor.username(),
                    Timestamp::now(),
                )
                .await?;
                Ok(())
            })
        })
        .await?;
        self.runtime_drive(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_operations_follow_the_state() {
        let t = |what, status| transition(what, status, status);
        assert_eq!(t(Power::Boot, Status::Offline).unwrap().0, Status::Booting);
        assert!(t(Power::Boot, Status::Running).is_err());
        assert!(t(Power::Shutdown, Status::Offline).is_err());
        assert_eq!(t(Power::Shutdown, Status::Running).unwrap().1, Status::Offline);
        assert_eq!(t(Power::Reboot, Status::Running).unwrap().0, Status::Rebooting);
        assert!(t(Power::Reboot, Status::Offline).is_err());
        for busy in [Status::Provisioning, Status::Booting, Status::ShuttingDown, Status::Rebooting] {
            for what in [Power::Boot, Power::Shutdown, Power::Reboot] {
                let e = transition(what, busy, Status::Offline).unwrap_err();
                assert!(
                    e.contains("busy") && e.contains(busy.name()) && e.contains("once its status is offline"),
                    "{e}"
                );
            }
        }
    }
}
