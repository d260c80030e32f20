//! An instance's firewalls replaced at once (`PUT .../instances/{id}/firewalls` with
//! `firewall_ids`) and applied again (`POST .../instances/{id}/firewalls/apply`).
//!
//! The replacement follows the rules of the device operations, in one write transaction that
//! reads everything it depends on: the instance must not be in live migration; each firewall
//! removed or added must not have an instance in live migration; the firewalls that leave are
//! removed first (event `firewall_device_remove` each), then each new one is attached as a
//! device (`firewall_device_add`), which refuses a second enabled firewall on the instance.
//! Firewalls listed that the instance already has stay as they are. The caller needs read_write
//! on the instance and on every firewall added or removed.

use nubis_model::filter::Filter;
use nubis_model::firewall::{DeviceType, Firewall};
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result};
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::instance_entity;
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;
use crate::firewall::{attach_device, detach_device, refuse_live_migration};

/// `PUT /v4/compute/instances/{instance_id}/firewalls`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InstanceFirewallsUpdate {
    /// Every firewall the instance is to have (an empty list removes them all).
    #[schema(required = true)]
    pub firewall_ids: Option<Vec<i64>>,
}

impl App {
    /// Replaces the instance's firewalls with `firewall_ids`; answers the instance's firewalls
    /// afterwards.
    pub async fn instance_firewalls_update(
        &self,
        actor: &Actor,
        id: i64,
        input: InstanceFirewallsUpdate,
    ) -> Result<Page<Firewall>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceFirewallsUpdate, id).await?;
        let mut p = Problems::new();
        let Some(wanted) = input.firewall_ids else {
            p.add("firewall_ids", "firewall_ids is required");
            return Err(p.finish().unwrap_err());
        };
        for (i, fw) in wanted.iter().enumerate() {
            let field = format!("firewall_ids[{i}]");
            if wanted[..i].contains(fw) {
                p.add(field, format!("Firewall {fw} is listed more than once"));
            } else {
                self.check_firewall_for_new_service(actor, &mut p, *fw, &field).await?;
            }
        }
        p.finish()?;
        // The firewalls that would leave need read_write too (as removing a device does).
        if actor.restricted() {
            let (current, _) = self
                .store
                .firewalls_page(actor.account_id(), None, Some((DeviceType::Instance, id)), &Filter::default(), 1, 500)
                .await?;
            for f in current.iter().filter(|f| !wanted.contains(&f.id)) {
                self.require_permission(actor, GrantKind::Firewall, f.id, Permission::ReadWrite).await?;
            }
        }
        let wanted = &wanted;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                if inst.live_migration {
                    return Err(Error::invalid(
                        "firewall_ids",
                        format!(
                            "Instance '{}' ({}) is in live migration; firewall changes are refused until the \
                             migration completes",
                            inst.label, inst.id
                        ),
                    ));
                }
                let current = tx.instance_firewall_devices(id).await?;
                for d in current.iter().filter(|d| !wanted.contains(&d.firewall_id)) {
                    let f = tx.firewall_lock(d.firewall_id, actor.account_id()).await?.ok_or(Error::Retry)?;
                    refuse_live_migration(tx, &f, Some("firewall_ids")).await?;
                    detach_device(tx, actor, &f, d).await?;
                }
                for (i, fw) in wanted.iter().enumerate() {
                    if current.iter().any(|d| d.firewall_id == *fw) {
                        continue;
                    }
                    let field = format!("firewall_ids[{i}]");
                    let f = tx
                        .firewall_lock(*fw, actor.account_id())
                        .await?
                        .ok_or_else(|| Error::invalid(&field, "Firewall not found"))?;
                    refuse_live_migration(tx, &f, Some(&field)).await?;
                    attach_device(tx, actor, &f, DeviceType::Instance, id, &field).await?;
                }
                Ok(())
            })
        })
        .await?;
        let all = PageRequest { page: 1, page_size: 500 };
        self.service_firewalls(actor, DeviceType::Instance, id, &Filter::default(), all).await
    }

    /// Applies the instance's firewalls again: the runtime reconciles what the instance's
    /// enabled firewall enforces. Event `firewall_apply`.
    pub async fn instance_firewalls_apply(&self, actor: &Actor, id: i64) -> Result<()> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceFirewallsApply, id).await?.into_inner();
        let i = &i;
        self.write(|tx| {
            Box::pin(async move {
                tx.instance_lock(i.id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let e = event(actor, "firewall_apply", instance_entity(i)).visible_with(GrantKind::Instance, i.id);
                tx.event_insert(&e.build()).await?;
                Ok(())
            })
        })
        .await?;
        self.instance_firewalls_changed();
        Ok(())
    }
}
