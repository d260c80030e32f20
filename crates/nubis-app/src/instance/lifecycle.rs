//! Lifecycle actions that take an instance through the runtime like boot and shutdown do:
//! rebuild (a new image on new disks), root password reset, rescue. Resize, mutate and migrate
//! are in [`super::resize`], clone in [`super::clone`]. An instance that was running is shut
//! down through the runtime's driver, its disks are remade (a provisioning step), and it boots
//! again when it was running (or the request says so).

use nubis_model::instance::{Instance, Status};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::boot_data::BootData;
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::configs::{DeviceRequest, DevicesRequest, check_devices, check_devices_are_disks, refuse_busy};
use super::create::{Metadata, check_user_data};
use super::deploy::{self, Deployment, check_root_access};
use super::disks::refuse_powered;
use super::transition::{notice, powered, start_transition};
use crate::App;
use crate::auth::{Actor, Op};
use crate::runtime::Step;

/// `POST .../rebuild`. (No `Debug`: it carries the root password.)
#[derive(Default, Deserialize, ToSchema)]
pub struct RebuildRequest {
    #[schema(required = true, value_type = String)]
    pub image: Option<String>,
    /// Root's password; required unless keys are given.
    pub root_pass: Option<String>,
    pub authorized_keys: Option<Vec<String>>,
    /// Users of the account whose profile SSH keys are installed for root.
    pub authorized_users: Option<Vec<String>>,
    /// Boot once rebuilt (default true).
    pub booted: Option<bool>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub metadata: Option<Metadata>,
    /// Resize to this plan as well.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Only `disabled`.
    #[schema(schema_with = super::create::disk_encryption_schema)]
    pub disk_encryption: Option<String>,
    /// StackScripts are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub stackscript_id: Option<i64>,
    pub stackscript_data: Option<serde_json::Value>,
    /// Only `linode/migrate`.
    pub maintenance_policy: Option<String>,
}

/// `POST .../password`. (No `Debug`: it carries the password.)
#[derive(Default, Deserialize, ToSchema)]
pub struct PasswordRequest {
    #[schema(required = true, value_type = String)]
    pub root_pass: Option<String>,
}

/// `POST .../rescue`: the disks to attach (`sda` to `sdg`; `sdh` is the rescue system's).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RescueRequest {
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    #[schema(value_type = Option<RescueDevices>)]
    pub devices: Option<DevicesRequest>,
}

/// The device slots a rescue takes, as documented: a profile's without `sdh` (a request naming
/// it is refused on `devices.sdh`).
#[derive(ToSchema)]
#[allow(dead_code)] // documents the request only
pub struct RescueDevices {
    sda: Option<DeviceRequest>,
    sdb: Option<DeviceRequest>,
    sdc: Option<DeviceRequest>,
    sdd: Option<DeviceRequest>,
    sde: Option<DeviceRequest>,
    sdf: Option<DeviceRequest>,
    sdg: Option<DeviceRequest>,
}

impl App {
    /// After the commit of a lifecycle transition: an instance that was powered on is shut
    /// down through the driver, then the runtime completes the transition.
    pub(crate) fn drive_lifecycle(&self, id: i64, was_powered: bool) {
        let app = self.clone();
        tokio::spawn(async move {
            if was_powered && let Err(e) = app.driver.run(id, Step::Shutdown).await {
                tracing::warn!(instance = id, error = %e, "shutdown before the lifecycle step failed");
            }
            app.runtime_drive(id);
        });
    }

    /// Rebuilds an instance: its disks and profiles go, the image is deployed to new disks with
    /// a new profile (which takes over the interfaces of the profile it last booted), and it
    /// boots unless `booted` is false. With `type`, it moves to that plan as well.
    pub async fn instance_rebuild(&self, actor: &Actor, id: i64, input: RebuildRequest) -> Result<Instance> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceRebuild, id).await?.into_inner();
        let mut p = Problems::new();
        let image = match input.image.as_deref() {
            None => {
                p.add("image", "You must specify an image");
                None
            }
            Some(i) => {
                let found = self.catalog.image(i).cloned();
                p.check(found.is_some(), "image", "image is not valid");
                found
            }
        };
        check_root_access(
            &mut p,
            input.root_pass.as_deref(),
            input.authorized_keys.as_ref(),
            input.authorized_users.as_ref(),
            "root_pass",
        );
        crate::sshkeys::check_keys(&mut p, input.authorized_keys.as_ref());
        let new_type = match input.kind.as_deref() {
            None => None,
            Some(t) => {
                let found = self.catalog.instance_type(t).cloned();
                p.check(found.is_some(), "type", "A valid plan type by that ID was not found");
                found
            }
        };
        let has_user_data = check_user_data(&mut p, input.metadata.as_ref(), "metadata.user_data");
        p.check(
            input.disk_encryption.as_deref().is_none_or(|d| d == "disabled"),
            "disk_encryption",
            "Local disk encryption is not offered: only \"disabled\"",
        );
        p.check(input.stackscript_id.is_none(), "stackscript_id", "StackScript not found");
        p.check(
            input.maintenance_policy.as_deref().is_none_or(|m| m == "linode/migrate"),
            "maintenance_policy",
            "Only \"linode/migrate\" is offered",
        );
        p.finish()?;
        let image = image.ok_or_else(|| Error::internal("image passed its checks without a value"))?;
        let hash = deploy::hash_opt(input.root_pass.as_deref()).await?;
        let (input, hash, image, new_type) = (&input, hash.as_deref(), &image, &new_type);
        let (row, was_powered) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&inst)?;
                    let now = Timestamp::now();
                    let mut inst = inst;
                    if let Some(t) = new_type
                        && t.id != inst.kind
                    {
                        super::resize::check_resizable(tx, &inst).await?;
                        inst = super::resize::change_type(self, tx, &inst, &t.id).await?;
                    }
                    let plan = self.catalog.instance_type(&inst.kind).map_or(0, |t| t.disk);
                    // The profile whose interfaces the new one takes over.
                    let configs = tx.configs_of_instance(id).await?;
                    let keep = inst.boot_config_id.filter(|b| configs.iter().any(|c| c.id == *b)).or(
                        match configs.as_slice() {
                            [only] => Some(only.id),
                            _ => None,
                        },
                    );
                    let keys = crate::sshkeys::authorized_keys(
                        tx,
                        actor.account_id(),
                        input.authorized_keys.as_deref().unwrap_or_default(),
                        input.authorized_users.as_deref().unwrap_or_default(),
                    )
                    .await?;
                    let network_helper = inst.network_helper;
                    let d = Deployment {
                        image,
                        root_pass_hash: hash,
                        keys: &keys,
                        swap_mb: deploy::DEFAULT_SWAP_MB,
                        boot_size: None,
                        plan_disk_mb: plan,
                        kernel: deploy::IMAGE_KERNEL,
                        network_helper,
                    };
                    let (config, _) = deploy::deploy_image(tx, id, &d, now).await?;
                    for f in tx.interfaces_of_instance(id).await? {
                        match f.config_id {
                            Some(c) if Some(c) == keep => {
                                tx.interface_move_to_config(f.id, config.id).await?;
                            }
                            Some(_) => tx.interface_delete(f.id).await?,
                            None => {}
                        }
                    }
                    for c in &configs {
                        tx.config_delete(id, c.id).await?;
                    }
                    for disk in tx.disks_of_instance(id).await? {
                        if !config.devices.disk_ids().contains(&disk.id) {
                            tx.disk_delete(disk.id).await?;
                        }
                    }
                    tx.instance_set_boot_config(id, Some(config.id)).await?;
                    let inst = tx.instance_deploy(id, &image.id, hash, has_user_data, now).await?;
                    let user_data = input.metadata.as_ref().and_then(|m| m.user_data.clone());
                    tx.instance_boot_data_set(id, &BootData { user_data, authorized_keys: keys.clone() }).await?;
                    let was_powered = powered(&inst);
                    let row = start_transition(
                        tx,
                        actor,
                        &inst,
                        Status::Rebuilding,
                        input.booted.unwrap_or(true),
                        "instance_rebuild",
                    )
                    .await?;
                    Ok((row, was_powered))
                })
            })
            .await?;
        self.drive_lifecycle(id, was_powered);
        self.instance_view_now(actor, &row).await
    }

    /// Resets root's password (the instance must be shut down; with several disks, name one
    /// through the disk's own password reset).
    pub async fn instance_password_reset(&self, actor: &Actor, id: i64, input: PasswordRequest) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstancePasswordReset, id).await?.into_inner();
        let pw = input.root_pass.ok_or_else(|| Error::invalid("root_pass", "A root password is required"))?;
        if !deploy::root_pass_ok(&pw) {
            return Err(Error::invalid("root_pass", deploy::WEAK_PASSWORD));
        }
        let hash = deploy::hash_opt(Some(&pw)).await?.unwrap_or_default();
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                refuse_powered(&inst)?;
                let disks: Vec<_> =
                    tx.disks_of_instance(id).await?.into_iter().filter(|d| d.filesystem != "swap").collect();
                let disk = match disks.as_slice() {
                    [] => return Err(Error::refused("The instance has no disk to set a password on")),
                    [one] => one.id,
                    _ => {
                        return Err(Error::refused(
                            "The instance has several disks: reset the password of one with POST \
                             .../disks/{disk_id}/password",
                        ));
                    }
                };
                let now = Timestamp::now();
                tx.disk_set_root_pass(disk, hash, now).await?;
                tx.instance_set_root_pass(id, hash, now).await?;
                notice(tx, actor, &inst, "password_reset").await
            })
        })
        .await
    }

    /// Boots (or reboots) the instance into the rescue system with the disks named attached.
    pub async fn instance_rescue(&self, actor: &Actor, id: i64, input: RescueRequest) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceRescue, id).await?.into_inner();
        let mut p = Problems::new();
        let devices = input.devices.map(|d| {
            if d.sdh.is_some() {
                p.add("devices.sdh", "sdh is the rescue system's");
            }
            check_devices(&mut p, &d, "paravirt")
        });
        p.finish()?;
        let devices = &devices;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                refuse_busy(&inst)?;
                if let Some(d) = devices {
                    check_devices_are_disks(tx, id, d).await?;
                }
                let (status, action) = if powered(&inst) {
                    (Status::Rebooting, "instance_reboot")
                } else {
                    (Status::Booting, "instance_boot")
                };
                start_transition(tx, actor, &inst, status, true, action).await?;
                Ok(())
            })
        })
        .await?;
        self.runtime_drive(id);
        Ok(())
    }
}
