//! Disks of an instance (reference `Disk`): list, create (empty, or with an image and a way in
//! for root), get, relabel, delete, duplicate, resize and reset the root password. The disks of
//! an instance together fit its plan's disk; a disk in use by a running instance's profile is
//! neither resized nor deleted. Disks are ready at once (nothing is copied).

use nubis_model::filter::Filter;
use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::instance_profile::Disk;
use nubis_model::page::{Page, PageRequest};
use nubis_model::validate::len_between;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::disks::{DiskRow, NewDisk};
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::configs::refuse_busy;
use super::deploy::{self, check_root_access};
use super::instance_entity;
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// Disks an instance may have.
const MAX_DISKS: usize = 50;
const FILESYSTEMS: &[&str] = &["raw", "swap", "ext3", "ext4", "initrd"];

/// `POST /v4/compute/instances/{instance_id}/disks`. (No `Debug`: it carries the root password.)
#[derive(Default, Deserialize, ToSchema)]
pub struct DiskCreate {
    /// MB; the instance's disks together fit its plan.
    #[schema(required = true, value_type = i64)]
    pub size: Option<i64>,
    /// 1-48 characters; required without an image.
    #[schema(schema_with = disk_label_schema)]
    pub label: Option<String>,
    /// `raw`, `swap`, `ext3`, `ext4` (default) or `initrd`.
    #[schema(schema_with = filesystem_schema)]
    pub filesystem: Option<String>,
    /// An image of the catalog to deploy to the disk.
    pub image: Option<String>,
    /// With an image: root's password (or keys).
    pub root_pass: Option<String>,
    pub authorized_keys: Option<Vec<String>>,
    pub authorized_users: Option<Vec<String>>,
    /// Only false: read-only disks are not offered.
    pub read_only: Option<bool>,
    /// Only `disabled`.
    #[schema(schema_with = super::create::disk_encryption_schema)]
    pub disk_encryption: Option<String>,
    /// StackScripts are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub stackscript_id: Option<i64>,
    pub stackscript_data: Option<serde_json::Value>,
}

/// `PUT .../disks/{disk_id}`: only the label changes.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DiskUpdate {
    #[schema(schema_with = disk_label_schema)]
    pub label: Option<String>,
}

/// `POST .../disks/{disk_id}/resize`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DiskResize {
    /// MB, at least 1.
    #[schema(required = true, value_type = i64)]
    pub size: Option<i64>,
}

/// `POST .../disks/{disk_id}/password`. (No `Debug`: it carries the password.)
#[derive(Default, Deserialize, ToSchema)]
pub struct DiskPassword {
    #[schema(required = true, value_type = String)]
    pub password: Option<String>,
}

fn disk_label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(1, 48)))
}
fn filesystem_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(FILESYSTEMS)))
}

pub(crate) fn disk_record(d: &DiskRow) -> Disk {
    Disk {
        id: d.id,
        label: d.label.clone(),
        status: d.status.clone(),
        size: d.size,
        filesystem: d.filesystem.clone(),
        disk_encryption: "disabled".into(),
        created: d.created,
        updated: d.updated,
    }
}

/// The plan's disk of an instance, MB.
fn plan_disk(app: &App, i: &InstanceRow) -> i64 {
    app.catalog.instance_type(&i.kind).map_or(0, |t| t.disk)
}

/// Refuses disks that would not fit the plan: `used` MB already, `more` MB added.
fn fits(plan: i64, used: i64, more: i64, field: &str) -> Result<()> {
    if used + more > plan {
        return Err(Error::invalid(
            field,
            format!("The instance's disks would use {} MB, more than its plan's {plan} MB", used + more),
        ));
    }
    Ok(())
}

/// The disk is in a profile of a running instance booted with it.
async fn in_use(tx: &mut Tx<'_>, inst: &InstanceRow, disk_id: i64) -> Result<bool> {
    if !Status::parse(&inst.status).is_some_and(Status::is_powered) {
        return Ok(false);
    }
    let Some(c) = inst.boot_config_id else { return Ok(false) };
    Ok(tx.config_get(inst.id, c).await?.is_some_and(|c| c.devices.disk_ids().contains(&disk_id)))
}

async fn disk_event(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, action: &'static str) -> Result<()> {
    tx.event_insert(&event(actor, action, instance_entity(inst)).visible_with(GrantKind::Instance, inst.id).build())
        .await?;
    Ok(())
}

impl App {
    pub async fn instance_disk_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Disk>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskList, id).await?.into_inner();
        let (rows, total) = self.store.disks_page(id, filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(disk_record).collect(), page, total))
    }

    pub async fn instance_disk_get(&self, actor: &Actor, id: i64, disk_id: i64) -> Result<Disk> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskGet, id).await?.into_inner();
        Ok(disk_record(&self.store.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?))
    }

    pub async fn instance_disk_create(&self, actor: &Actor, id: i64, input: DiskCreate) -> Result<Disk> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskCreate, id).await?.into_inner();
        let mut p = Problems::new();
        let image = match &input.image {
            None => None,
            Some(i) => {
                let found = self.catalog.image(i).cloned();
                p.check(found.is_some(), "image", "image is not valid");
                found
            }
        };
        match input.size {
            None => p.add("size", "A size in MB is required"),
            Some(s) => {
                p.check(s >= 1, "size", "Must be at least 1");
                if let Some(img) = &image {
                    p.check(s >= img.size, "size", format!("The image {} needs at least {} MB", img.id, img.size));
                }
            }
        }
        let label = match (&input.label, &image) {
            (Some(l), _) => {
                p.check(len_between(l, 1, 48), "label", "Must be 1-48 characters");
                l.clone()
            }
            (None, Some(img)) => format!("{} Disk", img.label).chars().take(48).collect(),
            (None, None) => {
                p.add("label", "A label is required for a disk without an image");
                String::new()
            }
        };
        let filesystem = input.filesystem.clone().unwrap_or_else(|| "ext4".into());
        p.check(
            FILESYSTEMS.contains(&filesystem.as_str()),
            "filesystem",
            "Must be one of raw, swap, ext3, ext4, initrd",
        );
        if image.is_some() {
            check_root_access(
                &mut p,
                input.root_pass.as_deref(),
                input.authorized_keys.as_ref(),
                input.authorized_users.as_ref(),
                "root_pass",
            );
        } else {
            let reason = "Only when deploying an image";
            p.check(input.root_pass.is_none(), "root_pass", reason);
            p.check(input.authorized_keys.as_ref().is_none_or(Vec::is_empty), "authorized_keys", reason);
            p.check(input.authorized_users.as_ref().is_none_or(Vec::is_empty), "authorized_users", reason);
        }
        crate::sshkeys::check_keys(&mut p, input.authorized_keys.as_ref());
        p.check(input.read_only != Some(true), "read_only", "Read-only disks are not offered");
        p.check(
            input.disk_encryption.as_deref().is_none_or(|d| d == "disabled"),
            "disk_encryption",
            "Local disk encryption is not offered: only \"disabled\"",
        );
        p.check(input.stackscript_id.is_none(), "stackscript_id", "StackScript not found");
        p.finish()?;
        let hash = deploy::hash_opt(input.root_pass.as_deref()).await?;
        let (input, hash, label, filesystem, image) = (&input, hash.as_deref(), &label, &filesystem, &image);
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&inst)?;
                    let disks = tx.disks_of_instance(id).await?;
                    if disks.len() >= MAX_DISKS {
                        return Err(Error::refused(format!("An instance has at most {MAX_DISKS} disks")));
                    }
                    let size = input.size.unwrap_or_default();
                    fits(plan_disk(self, &inst), disks.iter().map(|d| d.size).sum(), size, "size")?;
                    let keys = match image {
                        Some(_) => {
                            let keys = input.authorized_keys.clone().unwrap_or_default();
                            let users = input.authorized_users.clone().unwrap_or_default();
                            crate::sshkeys::authorized_keys(tx, actor.account_id(), &keys, &users).await?
                        }
                        None => Vec::new(),
                    };
                    let d = tx
                        .disk_insert(&NewDisk {
                            instance_id: id,
                            label,
                            size,
                            filesystem,
                            status: "ready",
                            image: image.as_ref().map(|i| i.id.as_str()),
                            root_pass_hash: hash,
                            authorized_keys: &keys,
                            created: Timestamp::now(),
                        })
                        .await?;
                    disk_event(tx, actor, &inst, "disk_create").await?;
                    Ok(d)
                })
            })
            .await?;
        Ok(disk_record(&row))
    }

    pub async fn instance_disk_update(&self, actor: &Actor, id: i64, disk_id: i64, input: DiskUpdate) -> Result<Disk> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskUpdate, id).await?.into_inner();
        if let Some(l) = &input.label
            && !len_between(l, 1, 48)
        {
            return Err(Error::invalid("label", "Must be 1-48 characters"));
        }
        let input = &input;
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let d = tx.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?;
                    let Some(l) = &input.label else { return Ok(d) };
                    let d = tx.disk_set_label(disk_id, l, Timestamp::now()).await?;
                    disk_event(tx, actor, &inst, "disk_update").await?;
                    Ok(d)
                })
            })
            .await?;
        Ok(disk_record(&row))
    }

    /// Deletes a disk; the profiles that named it forget it.
    pub async fn instance_disk_delete(&self, actor: &Actor, id: i64, disk_id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                tx.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?;
                refuse_busy(&inst)?;
                if in_use(tx, &inst, disk_id).await? {
                    return Err(Error::refused("The disk is in use by the running instance: shut it down first"));
                }
                let now = Timestamp::now();
                for c in tx.configs_of_instance(id).await? {
                    let mut devices = c.devices.clone();
                    if devices.forget_disk(disk_id) {
                        let v = nubis_store::configs::ConfigValues {
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
                        tx.config_update(c.id, &v, now).await?;
                    }
                }
                tx.disk_delete(disk_id).await?;
                disk_event(tx, actor, &inst, "disk_delete").await
            })
        })
        .await
    }

    /// Duplicates a disk on the same instance (it must fit the plan).
    pub async fn instance_disk_clone(&self, actor: &Actor, id: i64, disk_id: i64) -> Result<Disk> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskClone, id).await?.into_inner();
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let d = tx.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&inst)?;
                    let disks = tx.disks_of_instance(id).await?;
                    if disks.len() >= MAX_DISKS {
                        return Err(Error::refused(format!("An instance has at most {MAX_DISKS} disks")));
                    }
                    fits(plan_disk(self, &inst), disks.iter().map(|d| d.size).sum(), d.size, "size")?;
                    let label: String = format!("{} (copy)", d.label).chars().take(48).collect();
                    let copy = tx.disk_copy(disk_id, id, &label, Timestamp::now()).await?;
                    disk_event(tx, actor, &inst, "disk_duplicate").await?;
                    Ok(copy)
                })
            })
            .await?;
        Ok(disk_record(&row))
    }

    pub async fn instance_disk_resize(&self, actor: &Actor, id: i64, disk_id: i64, input: DiskResize) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskResize, id).await?.into_inner();
        let size = input.size.ok_or_else(|| Error::invalid("size", "A size in MB is required"))?;
        if size < 1 {
            return Err(Error::invalid("size", "Must be at least 1"));
        }
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let d = tx.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?;
                refuse_busy(&inst)?;
                if in_use(tx, &inst, disk_id).await? {
                    return Err(Error::refused("The disk is in use by the running instance: shut it down first"));
                }
                if let Some(img) = d.image.as_deref().and_then(|i| self.catalog.image(i))
                    && size < img.size
                {
                    return Err(Error::invalid("size", format!("The data on the disk needs at least {} MB", img.size)));
                }
                let others: i64 =
                    tx.disks_of_instance(id).await?.iter().filter(|x| x.id != disk_id).map(|x| x.size).sum();
                fits(plan_disk(self, &inst), others, size, "size")?;
                tx.disk_set_size(disk_id, size, Timestamp::now()).await?;
                disk_event(tx, actor, &inst, "disk_resize").await
            })
        })
        .await
    }

    /// Resets root's password on a disk (the instance must be shut down).
    pub async fn instance_disk_password_reset(
        &self,
        actor: &Actor,
        id: i64,
        disk_id: i64,
        input: DiskPassword,
    ) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDiskPasswordReset, id).await?.into_inner();
        let pw = input.password.ok_or_else(|| Error::invalid("password", "A password is required"))?;
        if !deploy::root_pass_ok(&pw) {
            return Err(Error::invalid("password", deploy::WEAK_PASSWORD));
        }
        let hash = deploy::hash_opt(Some(&pw)).await?.unwrap_or_default();
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                tx.disk_get(id, disk_id).await?.ok_or(Error::NotFound)?;
                refuse_powered(&inst)?;
                tx.disk_set_root_pass(disk_id, hash, Timestamp::now()).await?;
                disk_event(tx, actor, &inst, "password_reset").await
            })
        })
        .await
    }
}

/// Refuses an operation that needs the instance shut down.
pub(crate) fn refuse_powered(i: &InstanceRow) -> Result<()> {
    refuse_busy(i)?;
    if Status::parse(&i.status).is_some_and(Status::is_powered) {
        return Err(Error::refused("The instance is running: shut it down first"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_fit_the_plan() {
        assert!(fits(25600, 25000, 600, "size").is_ok());
        assert!(fits(25600, 25000, 601, "size").is_err());
    }
}
