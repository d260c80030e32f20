//! What every lifecycle action does inside its transaction (rebuild, rescue and password in
//! `lifecycle.rs`; resize, mutate and migrate in `resize.rs`): start the transition with its
//! event, or note a change that finishes at once.

use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::{Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;

use super::instance_entity;
use crate::auth::Actor;
use crate::events::event;

/// Starts a lifecycle transition inside the transaction: the instance is now in `status` and
/// ends `running` when `boot_after` (else `offline`); the event `action` is `started` and the
/// runtime finishes it.
pub(crate) async fn start_transition(
    tx: &mut Tx<'_>,
    actor: &Actor,
    inst: &InstanceRow,
    status: Status,
    boot_after: bool,
    action: &'static str,
) -> Result<InstanceRow> {
    let e = tx
        .event_insert(
            &event(actor, action, instance_entity(inst))
                .visible_with(GrantKind::Instance, inst.id)
                .status("started")
                .build(),
        )
        .await?;
    let target = if boot_after { Status::Running } else { Status::Offline };
    tx.instance_start_transition(inst.id, status.name(), target.name(), Some(e), actor.username(), Timestamp::now())
        .await
}

/// A notice event, finished at once (`*_create` of resize, mutate and migrations).
pub(crate) async fn notice(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, action: &'static str) -> Result<()> {
    tx.event_insert(
        &event(actor, action, instance_entity(inst))
            .visible_with(GrantKind::Instance, inst.id)
            .status("finished")
            .build(),
    )
    .await?;
    Ok(())
}

pub(crate) fn powered(i: &InstanceRow) -> bool {
    Status::parse(&i.status).is_some_and(Status::is_powered)
}
