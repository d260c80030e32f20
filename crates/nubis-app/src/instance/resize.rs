//! Moving an instance: resize (another plan), mutate (its plan's successor) and migrate (another
//! host, or another region). Each checks inside its write transaction what the hosted API
//! checks (not busy, no live migration, no past-due balance, disks that fit the new plan), then
//! takes the instance through the runtime (see [`super::lifecycle`]).

use nubis_model::catalog::capability;
use nubis_model::instance::Status;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::configs::refuse_busy;
use super::transition::{notice, powered, start_transition};
use crate::App;
use crate::auth::{Actor, Op};

/// `POST .../resize`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ResizeRequest {
    #[serde(rename = "type")]
    #[schema(required = true, value_type = String)]
    pub kind: Option<String>,
    /// Grow or shrink the instance's one disk (besides swap) to fill the new plan (default
    /// true); otherwise its disks must already fit it.
    pub allow_auto_disk_resize: Option<bool>,
    /// `cold` (default) or `warm`; both take the instance through `resizing`.
    #[schema(schema_with = migration_type_schema)]
    pub migration_type: Option<String>,
}

/// `POST .../mutate`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct MutateRequest {
    pub allow_auto_disk_resize: Option<bool>,
}

/// `POST .../migrate`: to another region with `region`, else to another host.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct MigrateRequest {
    pub region: Option<String>,
    /// `cold` (default) or `warm` (not across regions).
    #[serde(rename = "type")]
    #[schema(schema_with = migration_type_schema)]
    pub kind: Option<String>,
    /// Upgrade to the plan's successor on the way (there is none to upgrade to here).
    pub upgrade: Option<bool>,
    /// Placement groups are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub placement_group: Option<serde_json::Value>,
}

fn migration_type_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(&["cold", "warm"])))
}

fn check_migration_type(p: &mut Problems, field: &str, v: Option<&str>) {
    p.check(v.is_none_or(|t| t == "cold" || t == "warm"), field, "Must be cold or warm");
}

/// What forbids moving an instance now, read inside the transaction: a live migration, a
/// past-due balance.
pub(crate) async fn check_resizable(tx: &mut Tx<'_>, inst: &InstanceRow) -> Result<()> {
    if inst.live_migration {
        return Err(Error::refused("The instance has a migration in progress; retry once it completes"));
    }
    if crate::billing::standing::account_standing(tx, inst.account_id).await?.past_due {
        return Err(Error::refused("The account has an outstanding balance: pay it before resizing"));
    }
    Ok(())
}

/// Puts the instance on another plan inside the transaction; its metering restarts at the new
/// plan's prices.
pub(crate) async fn change_type(app: &App, tx: &mut Tx<'_>, inst: &InstanceRow, kind: &str) -> Result<InstanceRow> {
    let now = Timestamp::now();
    let row = tx.instance_set_type(inst.id, kind, now).await?;
    remeter(app, tx, &row).await?;
    Ok(row)
}

/// Metering (the instance's and its Backup add-on's) restarts now, at the instance's current
/// plan and region.
async fn remeter(app: &App, tx: &mut Tx<'_>, row: &InstanceRow) -> Result<()> {
    crate::billing::meter_stop(tx, "instance", row.id).await?;
    let mut from_now = row.clone();
    from_now.created = Timestamp::now();
    app.billing_meter_instance(tx, &from_now).await?;
    // The Backup add-on is priced by the plan too.
    if row.backups_enabled {
        crate::billing::meter_stop(tx, "backup", row.id).await?;
        app.backups_start_service(tx, row).await?;
    }
    Ok(())
}

/// Makes the instance's disks fit a plan of `plan` MB: with `auto`, its one disk besides swap
/// grows or shrinks to fill it (not below its image); otherwise they must already fit.
async fn fit_disks(app: &App, tx: &mut Tx<'_>, inst: &InstanceRow, plan: i64, auto: bool) -> Result<()> {
    let disks = tx.disks_of_instance(inst.id).await?;
    let total: i64 = disks.iter().map(|d| d.size).sum();
    let main: Vec<_> = disks.iter().filter(|d| d.filesystem != "swap").collect();
    if auto && let [one] = main.as_slice() {
        let rest = total - one.size;
        let size = plan - rest;
        let floor = one.image.as_deref().and_then(|i| app.catalog.image(i)).map_or(1, |i| i.size);
        if size < floor {
            return Err(Error::invalid(
                "type",
                format!("The instance's disk '{}' cannot shrink to {size} MB to fit the plan's {plan} MB", one.label),
            ));
        }
        if size != one.size {
            tx.disk_set_size(one.id, size, Timestamp::now()).await?;
        }
        return Ok(());
    }
    if total > plan {
        return Err(Error::invalid(
            "type",
            format!(
                "The instance's disks use {total} MB, more than the new plan's {plan} MB: resize or delete disks \
                 first"
            ),
        ));
    }
    Ok(())
}

impl App {
    pub async fn instance_resize(&self, actor: &Actor, id: i64, input: ResizeRequest) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceResize, id).await?.into_inner();
        let mut p = Problems::new();
        let t = match input.kind.as_deref() {
            None => {
                p.add("type", "A type is required");
                None
            }
            Some(t) => {
                let found = self.catalog.instance_type(t).cloned();
                p.check(found.is_some(), "type", "A valid plan type by that ID was not found");
                found
            }
        };
        check_migration_type(&mut p, "migration_type", input.migration_type.as_deref());
        p.finish()?;
        let t = t.ok_or_else(|| Error::internal("type passed its checks without a value"))?;
        let auto = input.allow_auto_disk_resize.unwrap_or(true);
        self.move_to_plan(actor, id, &t.id, auto, "instance_resize").await
    }

    /// Upgrades the instance to its plan's successor (refused when the plan has none).
    pub async fn instance_mutate(&self, actor: &Actor, id: i64, input: MutateRequest) -> Result<()> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceMutate, id).await?.into_inner();
        let next = self.catalog.instance_type(&inst.kind).and_then(|t| t.successor.clone());
        let Some(next) = next.filter(|n| self.catalog.instance_type(n).is_some()) else {
            return Err(Error::refused(format!(
                "The instance's plan {} has no newer generation to upgrade to",
                inst.kind
            )));
        };
        self.move_to_plan(actor, id, &next, input.allow_auto_disk_resize.unwrap_or(true), "instance_mutate").await
    }

    async fn move_to_plan(&self, actor: &Actor, id: i64, kind: &str, auto: bool, action: &'static str) -> Result<()> {
        let notice_action =
            if action == "instance_mutate" { "instance_mutate_create" } else { "instance_resize_create" };
        let was = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&inst)?;
                    if inst.kind == kind {
                        return Err(Error::invalid("type", format!("The instance is already of type {kind}")));
                    }
                    check_resizable(tx, &inst).await?;
                    let plan = self.catalog.instance_type(kind).map_or(0, |t| t.disk);
                    fit_disks(self, tx, &inst, plan, auto).await?;
                    let inst = change_type(self, tx, &inst, kind).await?;
                    notice(tx, actor, &inst, notice_action).await?;
                    let was = powered(&inst);
                    start_transition(tx, actor, &inst, Status::Resizing, was, action).await?;
                    Ok(was)
                })
            })
            .await?;
        self.drive_lifecycle(id, was);
        Ok(())
    }

    /// Migrates the instance: to another host (no `region`), or to another region, where it
    /// gets new public addresses (its private address stays).
    pub async fn instance_migrate(&self, actor: &Actor, id: i64, input: MigrateRequest) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceMigrate, id).await?.into_inner();
        let mut p = Problems::new();
        check_migration_type(&mut p, "type", input.kind.as_deref());
        p.check(input.placement_group.is_none(), "placement_group", "Placement groups are not offered");
        let region = match input.region.as_deref() {
            None => None,
            Some(r) => match self.catalog.region(r) {
                Some(info) if info.has(capability::INSTANCES) => Some(info.clone()),
                Some(_) => {
                    p.add("region", "Instances are not available in this region");
                    None
                }
                None => {
                    p.add("region", "region is not valid");
                    None
                }
            },
        };
        if region.is_some() && input.kind.as_deref() == Some("warm") {
            p.add("type", "Warm migrations are not available across regions");
        }
        if input.upgrade == Some(true) {
            p.add("upgrade", "No free upgrade is available for this instance's plan");
        }
        p.finish()?;
        let region = &region;
        let was = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&inst)?;
                    check_resizable(tx, &inst).await?;
                    let (inst, action) = match region {
                        None => (inst, "instance_migrate"),
                        Some(r) => {
                            let moved = self.move_region(tx, &inst, r).await?;
                            notice(tx, actor, &moved, "instance_migrate_datacenter_create").await?;
                            (moved, "instance_migrate_datacenter")
                        }
                    };
                    let was = powered(&inst);
                    start_transition(tx, actor, &inst, Status::Migrating, was, action).await?;
                    Ok(was)
                })
            })
            .await?;
        self.drive_lifecycle(id, was);
        Ok(())
    }

    /// Moves an instance to another region inside the transaction, refusing what cannot move
    /// there: VPC interfaces, IPv6 ranges, shared addresses, balancer back ends, VLANs where the
    /// region has none.
    async fn move_region(
        &self,
        tx: &mut Tx<'_>,
        inst: &InstanceRow,
        r: &crate::catalog::RegionInfo,
    ) -> Result<InstanceRow> {
        let to = r.view.id.as_str();
        if inst.region == to {
            return Err(Error::invalid("region", format!("The instance is already in {to}")));
        }
        let interfaces = tx.interfaces_of_instance(inst.id).await?;
        let mut p = Problems::new();
        if interfaces.iter().any(|f| f.purpose == "vpc") {
            p.add("region", "An instance with a VPC interface cannot move to another region");
        }
        if interfaces.iter().any(|f| f.purpose == "vlan") && !r.has(capability::VLANS) {
            p.add("region", format!("Region {to} has no VLANs, and the instance is on one"));
        }
        if tx.ranges_of_account_tx(inst.account_id).await?.iter().any(|g| g.instance_id == inst.id) {
            p.add("region", "An instance with an IPv6 range cannot move to another region: delete the range first");
        }
        let ips = tx.ips_of_instance(inst.id).await?;
        let mut shared = !tx.shares_of_instance(inst.id).await?.is_empty();
        for a in &ips {
            shared |= !tx.shares_of_address(&a.address).await?.is_empty();
        }
        if shared {
            p.add("region", "An instance with shared addresses cannot move to another region: stop sharing them first");
        }
        if !tx.instance_balancer_nodes(inst.id).await?.is_empty() {
            p.add("region", "The instance is a load balancer back end: remove it from the balancer first");
        }
        p.finish()?;
        for a in ips.iter().filter(|a| a.public || a.kind != nubis_store::ips::IpKind::Ipv4) {
            tx.ip_delete(a.id).await?;
        }
        tx.instance_move_region(inst.id, to).await?;
        super::provision::allocate_instance_addresses(self, tx, inst.account_id, r, inst.id, false).await?;
        let row = tx.instance_set_region(inst.id, to, Timestamp::now()).await?;
        remeter(self, tx, &row).await?;
        Ok(row)
    }
}
