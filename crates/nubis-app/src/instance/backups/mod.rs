//! The Backup service of instances (the hosted API's `/linode/instances/{linodeId}/backups`):
//! enable and cancel it (the add-on is metered like the instance), take a snapshot (one slot;
//! nubis copies nothing, so a snapshot is `successful` as soon as it is taken), read the backups,
//! and restore one to this or another instance of the same region; automatic backups once a day
//! in the chosen window ([`automatic`]). An instance's volumes: none (volumes are not offered).

mod automatic;
mod validate;
mod view;

use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::Status;
use nubis_model::instance_profile::{Device, Devices};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::billing::NewMeter;
use nubis_store::configs::ConfigValues;
use nubis_store::disks::NewDisk;
use nubis_store::instance_backups::{BackupConfig, BackupDisk, BackupRow, BackupState, NewBackup};
use nubis_store::instances::InstanceRow;

pub(crate) use validate::{DAYS, SCHEDULING, WINDOWS, check_schedule};
pub use validate::{RestoreRequest, SnapshotRequest};
pub use view::{Backup, BackupDiskView, BackupList, SnapshotSlot, Volume};

use super::configs::refuse_busy;
use super::instance_entity;
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// The kind of an automatic backup (a user's is `snapshot`).
pub(crate) const KIND_AUTO: &str = "auto";

/// The meter of the backup add-on (service id: the instance's).
const METER: &str = "backup";

async fn backup_event(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, action: &'static str) -> Result<()> {
    tx.event_insert(&event(actor, action, instance_entity(inst)).visible_with(GrantKind::Instance, inst.id).build())
        .await?;
    Ok(())
}

impl App {
    /// Starts the Backup service of an instance whose row says it is enabled, inside the
    /// transaction that enabled it: the add-on is metered at the type's backup price in the
    /// instance's region, and a schedule is chosen when none was.
    pub(crate) async fn backups_start_service(&self, tx: &mut Tx<'_>, i: &InstanceRow) -> Result<()> {
        let (label, hourly, monthly) = match self.catalog.instance_type(&i.kind) {
            Some(t) => {
                let b = &t.addons.backups;
                let p = nubis_model::catalog::price_in(b.price, &b.region_prices, &i.region);
                (t.label.clone(), p.hourly.0, p.monthly.0)
            }
            None => (i.kind.clone(), 0, 0),
        };
        tx.meter_open(&NewMeter {
            account_id: i.account_id,
            service_type: METER,
            service_id: i.id,
            label: &format!("Backups - {label} - {} ({})", i.label, i.id),
            region: Some(&i.region),
            hourly_micro: hourly,
            monthly_micro: monthly,
            started: Timestamp::now(),
        })
        .await?;
        let (day, window) = tx.backup_schedule(i.id).await?;
        let (d, w) = validate::chosen_schedule(i.id);
        tx.backup_schedule_set(i.id, Some(day.as_deref().unwrap_or(d)), Some(window.as_deref().unwrap_or(w))).await
    }

    /// The account-wide `backups_enabled` setting, read in an instance's create transaction.
    pub(crate) async fn backups_default(&self, tx: &mut Tx<'_>, account_id: i64) -> Result<bool> {
        tx.account_backups_enabled(account_id).await
    }

    /// The backup state (schedule, last success) of some instances, for their records.
    pub(crate) async fn backup_states(&self, ids: &[i64]) -> Result<Vec<(i64, BackupState)>> {
        self.store.backup_states(ids).await
    }

    /// `POST .../backups/enable`: already enabled, nothing changes.
    pub async fn instance_backups_enable(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceBackupsEnable, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                if inst.backups_enabled {
                    return Ok(());
                }
                tx.instance_set_backups_enabled(id, true, Timestamp::now()).await?;
                self.backups_start_service(tx, &inst).await?;
                backup_event(tx, actor, &inst, "backups_enable").await
            })
        })
        .await
    }

    /// `POST .../backups/cancel`: the service stops (and its metering), and every backup of the
    /// instance is deleted. Not enabled, nothing changes.
    pub async fn instance_backups_cancel(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceBackupsCancel, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                if !inst.backups_enabled {
                    return Ok(());
                }
                tx.instance_set_backups_enabled(id, false, Timestamp::now()).await?;
                crate::billing::meter_stop(tx, METER, id).await?;
                tx.backups_delete(id, None).await?;
                backup_event(tx, actor, &inst, "backups_cancel").await
            })
        })
        .await
    }

    /// `POST .../backups`: a snapshot of the instance's disks and profiles as they are now; it
    /// replaces the previous snapshot. Refused unless the Backup service is enabled.
    pub async fn instance_snapshot_create(&self, actor: &Actor, id: i64, input: SnapshotRequest) -> Result<Backup> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceSnapshotCreate, id).await?.into_inner();
        let label = validate::snapshot_label(&input)?;
        let label = &label;
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    if !inst.backups_enabled {
                        return Err(Error::refused(
                            "Backups are not enabled for this instance: enable them (POST .../backups/enable) first",
                        ));
                    }
                    refuse_busy(&inst)?;
                    let (disks, configs) = contents(tx, &inst).await?;
                    let now = Timestamp::now();
                    tx.backups_delete(id, Some("snapshot")).await?;
                    let b = tx
                        .backup_insert(&NewBackup {
                            instance_id: id,
                            kind: "snapshot",
                            label: Some(label),
                            status: "successful",
                            region: &inst.region,
                            disks: &disks,
                            configs: &configs,
                            created: now,
                            finished: Some(now),
                        })
                        .await?;
                    backup_event(tx, actor, &inst, "instance_snapshot").await?;
                    Ok(b)
                })
            })
            .await?;
        Ok(view::backup_record(&row))
    }

    /// `GET .../backups`.
    pub async fn instance_backup_list(&self, actor: &Actor, id: i64) -> Result<BackupList> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceBackupList, id).await?.into_inner();
        Ok(view::backup_list(&self.store.backups_of_instance(id).await?))
    }

    /// `GET .../backups/{backup_id}`.
    pub async fn instance_backup_get(&self, actor: &Actor, id: i64, backup_id: i64) -> Result<Backup> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceBackupGet, id).await?.into_inner();
        Ok(view::backup_record(&self.store.backup_get(id, backup_id).await?.ok_or(Error::NotFound)?))
    }

    /// `POST .../backups/{backup_id}/restore`: the backup's disks and profiles are made on the
    /// target (this instance or another of the account, in the backup's region, that the caller
    /// may change). With `overwrite`, the target's disks and profiles go first (it must be
    /// off); without, the backup's disks must fit beside the target's. Refused while the target
    /// is busy or taking a backup, and for a backup that is not `successful`.
    pub async fn instance_backup_restore(
        &self,
        actor: &Actor,
        id: i64,
        backup_id: i64,
        input: RestoreRequest,
    ) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceBackupRestore, id).await?.into_inner();
        let Some(target) = input.instance_id else {
            return Err(Error::invalid("instance_id", "The instance to restore to is required"));
        };
        let not_found = || Error::invalid("instance_id", "Instance not found");
        if self.store.instance_get(actor.account_id(), target).await?.is_none() {
            return Err(not_found());
        }
        match self.require_permission(actor, GrantKind::Instance, target, Permission::ReadWrite).await {
            Err(Error::NotFound) => return Err(not_found()),
            r => r?,
        }
        let overwrite = input.overwrite.unwrap_or(false);
        self.write(|tx| {
            Box::pin(async move {
                tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let b = tx.backup_get(id, backup_id).await?.ok_or(Error::NotFound)?;
                let dst = tx.instance_lock(target, actor.account_id()).await?.ok_or_else(not_found)?;
                if b.status != "successful" {
                    return Err(Error::refused("Only a successful backup can be restored"));
                }
                if b.region != dst.region {
                    return Err(Error::invalid(
                        "instance_id",
                        format!("Backups may not be restored across regions: the backup is in {}", b.region),
                    ));
                }
                refuse_busy(&dst).map_err(|_| {
                    Error::invalid(
                        "instance_id",
                        "The target instance is busy; retry once its current operation is done",
                    )
                })?;
                let taking = tx
                    .backups_of_instance(target)
                    .await?
                    .iter()
                    .any(|x| view::IN_PROGRESS.contains(&x.status.as_str()));
                if taking {
                    return Err(Error::invalid("instance_id", "The target instance is taking a backup"));
                }
                if overwrite {
                    if Status::parse(&dst.status).is_some_and(Status::is_powered) {
                        return Err(Error::invalid(
                            "overwrite",
                            "The target instance is running: shut it down before its disks are overwritten",
                        ));
                    }
                    for c in tx.configs_of_instance(target).await? {
                        tx.config_delete(target, c.id).await?;
                    }
                    for d in tx.disks_of_instance(target).await? {
                        tx.disk_delete(d.id).await?;
                    }
                } else {
                    let used: i64 = tx.disks_of_instance(target).await?.iter().map(|d| d.size).sum();
                    let plan = self.catalog.instance_type(&dst.kind).map_or(0, |t| t.disk);
                    let size: i64 = b.disks.iter().map(|d| d.size).sum();
                    if used + size > plan {
                        return Err(Error::invalid(
                            "overwrite",
                            format!(
                                "Insufficient space: the backup's disks ({size} MB) do not fit beside the target's \
                                 ({used} MB of the plan's {plan} MB); restore with overwrite to replace them"
                            ),
                        ));
                    }
                }
                restore_into(tx, &b, &dst, overwrite).await?;
                tx.event_insert(
                    &event(actor, "backups_restore", instance_entity(&dst))
                        .visible_with(GrantKind::Instance, dst.id)
                        .build(),
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    /// `GET .../volumes`: always an empty page (Block Storage volumes are not offered).
    pub async fn instance_volume_list(&self, actor: &Actor, id: i64, page: PageRequest) -> Result<Page<Volume>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceVolumeList, id).await?.into_inner();
        Ok(Page::new(Vec::new(), page, 0))
    }
}

/// What a backup of the instance holds now: its disks and its profiles (devices naming the
/// disks by position).
pub(crate) async fn contents(tx: &mut Tx<'_>, inst: &InstanceRow) -> Result<(Vec<BackupDisk>, Vec<BackupConfig>)> {
    let rows = tx.disks_of_instance(inst.id).await?;
    let disks = rows
        .iter()
        .map(|d| BackupDisk {
            label: d.label.clone(),
            size: d.size,
            filesystem: d.filesystem.clone(),
            image: d.image.clone(),
        })
        .collect();
    let configs = tx
        .configs_of_instance(inst.id)
        .await?
        .into_iter()
        .map(|c| BackupConfig {
            devices: c
                .devices
                .slots()
                .iter()
                .filter_map(|(name, d)| {
                    let disk = d.and_then(|d| d.disk_id)?;
                    Some(((*name).to_string(), rows.iter().position(|r| r.id == disk)?))
                })
                .collect(),
            boot: inst.boot_config_id == Some(c.id),
            label: c.label,
            kernel: c.kernel,
            comments: c.comments,
            memory_limit: c.memory_limit,
            root_device: c.root_device,
            run_level: c.run_level,
            virt_mode: c.virt_mode,
            helpers: c.helpers,
        })
        .collect();
    Ok((disks, configs))
}

impl App {
    /// `backup_id` of an instance create: a backup of an instance of the account that the
    /// caller may change (the hosted API's rule); an unknown one is a problem of the field, one
    /// the caller may not change answers 403.
    pub(crate) async fn check_backup_access(&self, actor: &Actor, p: &mut Problems, backup_id: i64) -> Result<()> {
        let Some(b) = self.store.backup_of_account(actor.account_id(), backup_id).await? else {
            p.add("backup_id", "Backup not found");
            return Ok(());
        };
        match self.require_permission(actor, GrantKind::Instance, b.instance_id, Permission::ReadWrite).await {
            Err(Error::NotFound) => {
                p.add("backup_id", "Backup not found");
                Ok(())
            }
            r => r,
        }
    }
}

/// A new instance made from a backup, inside its create transaction: the backup (read here)
/// must be successful, in the instance's region, and fit its plan; the instance gets its disks
/// and profiles. Returns the profile it boots.
pub(crate) async fn create_from(
    tx: &mut Tx<'_>,
    account_id: i64,
    backup_id: i64,
    dst: &InstanceRow,
    plan_disk_mb: i64,
) -> Result<Option<i64>> {
    let b = tx
        .backup_of_account(account_id, backup_id)
        .await?
        .ok_or_else(|| Error::invalid("backup_id", "Backup not found"))?;
    if b.status != "successful" {
        return Err(Error::invalid("backup_id", "Only a successful backup can be restored"));
    }
    if b.region != dst.region {
        return Err(Error::invalid("region", format!("The instance must be in the backup's region ({})", b.region)));
    }
    let size: i64 = b.disks.iter().map(|d| d.size).sum();
    if size > plan_disk_mb {
        return Err(Error::invalid(
            "type",
            format!("The plan's disk ({plan_disk_mb} MB) is too small for the backup's disks ({size} MB)"),
        ));
    }
    restore_into(tx, &b, dst, true).await
}

/// Makes the backup's disks and profiles on `dst`; the restored boot profile becomes the
/// target's when it has none (or `overwrite` removed it). Returns that profile.
async fn restore_into(tx: &mut Tx<'_>, b: &BackupRow, dst: &InstanceRow, overwrite: bool) -> Result<Option<i64>> {
    let now = Timestamp::now();
    let mut ids = Vec::new();
    for d in &b.disks {
        let row = tx
            .disk_insert(&NewDisk {
                instance_id: dst.id,
                label: &d.label,
                size: d.size,
                filesystem: &d.filesystem,
                status: "ready",
                image: d.image.as_deref(),
                root_pass_hash: None,
                authorized_keys: &[],
                created: now,
            })
            .await?;
        ids.push(row.id);
    }
    let mut boot = None;
    for c in &b.configs {
        let mut devices = Devices::default();
        for (slot, i) in &c.devices {
            if let (Some(s), Some(id)) = (devices.slot_mut(slot), ids.get(*i)) {
                *s = Some(Device { disk_id: Some(*id), volume_id: None });
            }
        }
        let v = ConfigValues {
            label: &c.label,
            kernel: &c.kernel,
            comments: c.comments.as_deref(),
            memory_limit: c.memory_limit,
            root_device: &c.root_device,
            run_level: &c.run_level,
            virt_mode: &c.virt_mode,
            helpers: &c.helpers,
            devices: &devices,
        };
        let made = tx.config_insert(dst.id, &v, now).await?;
        if boot.is_none() || c.boot {
            boot = Some(made.id);
        }
    }
    if (overwrite || dst.boot_config_id.is_none())
        && let Some(c) = boot
    {
        tx.instance_set_boot_config(dst.id, Some(c)).await?;
    }
    Ok(boot)
}
