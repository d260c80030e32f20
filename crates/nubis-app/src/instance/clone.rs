//! Clone (reference `POST /linode/instances/{linodeId}/clone`): an instance's profiles and disks
//! copied to a new instance (in any region, on any plan they fit; it is created offline) or to
//! an existing one. Without `configs`, every profile with its disks is copied; `disks` adds
//! more. Interfaces come along: VPC ones get new addresses (a 1:1 NAT becomes `any`).

use std::collections::HashMap;

use nubis_model::grants::{GlobalFlag, GrantKind, Permission};
use nubis_model::instance::Instance;
use nubis_model::instance_profile::Devices;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::configs::ConfigValues;
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::configs::refuse_busy;
use super::create::{Metadata, RequestedInterfaces, ValidCreate, check_user_data};
use super::generation::{LEGACY, LINODE};
use super::instance_entity;
use super::interface_kinds::{Nat, Purpose};
use super::interfaces::{Target, ValidInterface, create_interfaces};
use super::linode_request::{LinodeKind, ValidLinodeInterface};
use super::{check_group, check_label};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `POST .../clone`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CloneRequest {
    /// An existing instance to clone to (it must have room for the disks); otherwise a new one
    /// is created with `region` and `type`.
    pub instance_id: Option<i64>,
    /// New instance: its region (required).
    pub region: Option<String>,
    /// New instance: its plan (required).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// New instance: its label (generated when omitted).
    #[schema(schema_with = super::label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = super::group_schema)]
    pub group: Option<String>,
    pub backups_enabled: Option<bool>,
    pub private_ip: Option<bool>,
    /// Profiles to copy with their disks (all when omitted, none when empty).
    pub configs: Option<Vec<i64>>,
    /// More disks to copy.
    pub disks: Option<Vec<i64>>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub metadata: Option<Metadata>,
    /// Placement groups are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub placement_group: Option<serde_json::Value>,
    /// Only `linode/migrate`.
    pub maintenance_policy: Option<String>,
}

impl App {
    pub async fn instance_clone(&self, actor: &Actor, id: i64, input: CloneRequest) -> Result<Instance> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceClone, id).await?.into_inner();
        let mut p = Problems::new();
        p.check(input.placement_group.is_none(), "placement_group", "Placement groups are not offered");
        p.check(
            input.maintenance_policy.as_deref().is_none_or(|m| m == "linode/migrate"),
            "maintenance_policy",
            "Only \"linode/migrate\" is offered",
        );
        let has_user_data = check_user_data(&mut p, input.metadata.as_ref(), "metadata.user_data");
        match input.instance_id {
            Some(target) => {
                let only_new = "Only when cloning to a new instance";
                for (f, given) in [
                    ("region", input.region.is_some()),
                    ("type", input.kind.is_some()),
                    ("label", input.label.is_some()),
                    ("group", input.group.is_some()),
                    ("backups_enabled", input.backups_enabled.is_some()),
                    ("private_ip", input.private_ip.is_some()),
                    ("metadata", input.metadata.is_some()),
                ] {
                    p.check(!given, f, only_new);
                }
                p.check(target != id, "instance_id", "An instance cannot be cloned to itself");
                p.finish()?;
                match self.store.instance_get(actor.account_id(), target).await? {
                    None => return Err(Error::invalid("instance_id", "Instance not found")),
                    Some(_) => {
                        match self.require_permission(actor, GrantKind::Instance, target, Permission::ReadWrite).await {
                            Err(Error::NotFound) => return Err(Error::invalid("instance_id", "Instance not found")),
                            r => r?,
                        }
                    }
                }
                self.clone_to_existing(actor, id, target, &input).await
            }
            None => {
                if actor.restricted()
                    && !self.store.grants_of_user(actor.user_id()).await?.global.flag(GlobalFlag::AddInstances)
                {
                    return Err(Error::forbidden());
                }
                let region = match input.region.as_deref() {
                    None => {
                        p.add("region", "A region is required to clone to a new instance");
                        None
                    }
                    Some(r) => {
                        let found = self
                            .catalog
                            .region(r)
                            .filter(|i| i.has(nubis_model::catalog::capability::INSTANCES))
                            .cloned();
                        p.check(found.is_some(), "region", "region is not valid");
                        found
                    }
                };
                let t = match input.kind.as_deref() {
                    None => {
                        p.add("type", "A type is required to clone to a new instance");
                        None
                    }
                    Some(t) => {
                        let found = self.catalog.instance_type(t).cloned();
                        p.check(found.is_some(), "type", "A valid plan type by that ID was not found");
                        found
                    }
                };
                if let Some(l) = &input.label {
                    check_label(&mut p, l);
                }
                if let Some(g) = &input.group {
                    check_group(&mut p, g);
                }
                p.finish()?;
                let (Some(region), Some(t)) = (region, t) else { return Err(Error::internal("clone checks")) };
                let v = ValidCreate {
                    region,
                    kind: t.id.clone(),
                    image: None,
                    root_pass: None,
                    booted: false,
                    label: input.label.clone(),
                    tags: Vec::new(),
                    group: input.group.clone().unwrap_or_default(),
                    private_ip: input.private_ip.unwrap_or(false),
                    generation: None,
                    interfaces: RequestedInterfaces::Legacy(Vec::new()),
                    network_helper: None,
                    kernel: super::deploy::IMAGE_KERNEL.to_string(),
                    boot_size: None,
                    swap_mb: 0,
                    backups_enabled: input.backups_enabled.unwrap_or(false),
                    has_user_data,
                    user_data: input.metadata.as_ref().and_then(|m| m.user_data.clone()),
                    vcpus: t.vcpus,
                    plan_disk_mb: t.disk,
                    authorized_keys: Vec::new(),
                    authorized_users: Vec::new(),
                    firewall_id: None,
                    backup_id: None,
                };
                let (v, input) = (&v, &input);
                let row = self
                    .write(|tx| {
                        Box::pin(async move {
                            let src = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                            refuse_busy(&src)?;
                            let v2 = ValidCreate {
                                generation: Some(src.interface_generation.clone()),
                                tags: src.tags.clone(),
                                ..v.shallow()
                            };
                            let dst = self.instance_insert_with(tx, actor, &v2, None, Some(&src)).await?;
                            if let Some(image) = &src.image {
                                tx.instance_deploy(dst.id, image, None, v.has_user_data, Timestamp::now()).await?;
                            }
                            copy_profiles(tx, actor, &src, &dst, input, (0, v.plan_disk_mb), "type", true).await?;
                            tx.instance_lock(dst.id, actor.account_id()).await?.ok_or(Error::NotFound)
                        })
                    })
                    .await?;
                self.runtime_drive(row.id);
                self.instance_view_now(actor, &row).await
            }
        }
    }

    async fn clone_to_existing(&self, actor: &Actor, id: i64, target: i64, input: &CloneRequest) -> Result<Instance> {
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let src = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let dst = tx.instance_lock(target, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_busy(&src)?;
                    refuse_busy(&dst).map_err(|_| {
                        Error::invalid(
                            "instance_id",
                            "The target instance is busy; retry once its current operation is done",
                        )
                    })?;
                    let used: i64 = tx.disks_of_instance(target).await?.iter().map(|d| d.size).sum();
                    let plan = self.catalog.instance_type(&dst.kind).map_or(0, |t| t.disk);
                    copy_profiles(tx, actor, &src, &dst, input, (used, plan), "instance_id", false).await?;
                    tx.event_insert(
                        &event(actor, "instance_clone", instance_entity(&src))
                            .secondary(instance_entity(&dst))
                            .visible_with(GrantKind::Instance, src.id)
                            .status("finished")
                            .build(),
                    )
                    .await?;
                    tx.instance_lock(target, actor.account_id()).await?.ok_or(Error::NotFound)
                })
            })
            .await?;
        self.instance_view_now(actor, &row).await
    }
}

impl ValidCreate {
    /// A copy of the checked values that need no deep copy of interfaces.
    fn shallow(&self) -> ValidCreate {
        ValidCreate {
            region: self.region.clone(),
            kind: self.kind.clone(),
            image: None,
            root_pass: None,
            booted: self.booted,
            label: self.label.clone(),
            tags: self.tags.clone(),
            group: self.group.clone(),
            private_ip: self.private_ip,
            generation: self.generation.clone(),
            interfaces: RequestedInterfaces::Legacy(Vec::new()),
            network_helper: self.network_helper,
            kernel: self.kernel.clone(),
            boot_size: None,
            swap_mb: 0,
            backups_enabled: self.backups_enabled,
            has_user_data: self.has_user_data,
            user_data: self.user_data.clone(),
            vcpus: self.vcpus,
            plan_disk_mb: self.plan_disk_mb,
            authorized_keys: Vec::new(),
            authorized_users: Vec::new(),
            firewall_id: None,
            backup_id: None,
        }
    }
}

/// Copies the chosen profiles (with their disks and interfaces) and disks of `src` to `dst`,
/// inside the transaction. `(used, plan)`: MB of `dst`'s plan already taken, and the plan's;
/// `field` names what a plan too small is blamed on; `new_instance`: `dst` was just made for the
/// copy (it gets the Linode interfaces of `src` too).
#[allow(clippy::too_many_arguments)]
async fn copy_profiles(
    tx: &mut Tx<'_>,
    actor: &Actor,
    src: &InstanceRow,
    dst: &InstanceRow,
    input: &CloneRequest,
    (used, plan): (i64, i64),
    field: &str,
    new_instance: bool,
) -> Result<()> {
    let now = Timestamp::now();
    // What a copied interface that cannot be made is blamed on.
    let dest = if new_instance { "region" } else { "instance_id" };
    let configs = tx.configs_of_instance(src.id).await?;
    let disks = tx.disks_of_instance(src.id).await?;
    let mut p = Problems::new();
    let chosen: Vec<_> = match &input.configs {
        None => configs.clone(),
        Some(ids) => {
            for (i, c) in ids.iter().enumerate() {
                p.check(configs.iter().any(|x| x.id == *c), format!("configs[{i}]"), "Config not found");
            }
            configs.iter().filter(|c| ids.contains(&c.id)).cloned().collect()
        }
    };
    let mut disk_ids: Vec<i64> = chosen.iter().flat_map(|c| c.devices.disk_ids()).collect();
    for (i, d) in input.disks.iter().flatten().enumerate() {
        p.check(disks.iter().any(|x| x.id == *d), format!("disks[{i}]"), "Disk not found");
        disk_ids.push(*d);
    }
    p.finish()?;
    let to_copy: Vec<_> = disks.iter().filter(|d| disk_ids.contains(&d.id)).collect();
    let size: i64 = to_copy.iter().map(|d| d.size).sum();
    if used + size > plan {
        return Err(Error::invalid(
            field,
            format!("The disks to copy ({size} MB) do not fit: {used} MB of the plan's {plan} MB are in use"),
        ));
    }
    let mut map = HashMap::new();
    for d in to_copy {
        map.insert(d.id, tx.disk_copy(d.id, dst.id, &d.label, now).await?.id);
    }
    let interfaces = tx.interfaces_of_instance(src.id).await?;
    let mut boot = None;
    for c in &chosen {
        let mut devices = Devices::default();
        for (name, slot) in c.devices.slots() {
            if let (Some(target), Some(d)) =
                (devices.slot_mut(name), slot.and_then(|s| s.disk_id).and_then(|d| map.get(&d)))
            {
                *target = Some(nubis_model::instance_profile::Device { disk_id: Some(*d), volume_id: None });
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
        let copy = tx.config_insert(dst.id, &v, now).await?;
        if boot.is_none() || src.boot_config_id == Some(c.id) {
            boot = Some(copy.id);
        }
        if src.interface_generation == LEGACY && dst.interface_generation == LEGACY {
            let list: Vec<ValidInterface> =
                interfaces.iter().filter(|f| f.config_id == Some(c.id)).map(copied_interface).collect();
            let t = Target {
                account_id: dst.account_id,
                instance_id: dst.id,
                region: &dst.region,
                config_id: Some(copy.id),
            };
            create_interfaces(tx, t, 0, &list).await.map_err(|e| about_the_copy(e, dest))?;
        }
    }
    if new_instance && src.interface_generation == LINODE && dst.interface_generation == LINODE {
        for f in interfaces.iter().filter(|f| f.config_id.is_none()) {
            let c = copied_interface(f);
            let kind = match c.purpose {
                Purpose::Public => LinodeKind::Public { addresses: Vec::new(), ranges: Vec::new() },
                Purpose::Vpc => {
                    LinodeKind::Vpc { subnet_id: c.subnet_id.unwrap_or_default(), address: None, nat: c.nat }
                }
                Purpose::Vlan => {
                    LinodeKind::Vlan { label: c.vlan_label.unwrap_or_default(), ipam_address: c.ipam_address }
                }
            };
            let v = ValidLinodeInterface {
                kind,
                default_ipv4: Some(f.default_ipv4),
                default_ipv6: Some(f.default_ipv6),
                firewall_id: None,
                ipv6: c.ipv6,
            };
            super::linode_interfaces::insert_linode(tx, actor, dst, &v, "")
                .await
                .map_err(|e| about_the_copy(e, dest))?;
        }
    }
    if dst.boot_config_id.is_none()
        && let Some(b) = boot
    {
        tx.instance_set_boot_config(dst.id, Some(b)).await?;
    }
    Ok(())
}

/// A copied interface that cannot be made where the copy goes (a subnet of another region, a
/// subnet full, too many VLANs) is refused on the request's field that chose the destination.
fn about_the_copy(e: Error, field: &str) -> Error {
    match e {
        Error::Invalid(list) => Error::Invalid(
            list.into_iter()
                .map(|f| nubis_model::FieldError::new(field, format!("An interface cannot be copied: {}", f.reason)))
                .collect(),
        ),
        e => e,
    }
}

/// An interface as a copy makes it: VPC interfaces get a new address in the same subnet (a 1:1
/// NAT becomes `any`).
fn copied_interface(f: &nubis_store::interfaces::InterfaceRow) -> ValidInterface {
    let purpose = match f.purpose.as_str() {
        "vpc" => Purpose::Vpc,
        "vlan" => Purpose::Vlan,
        _ => Purpose::Public,
    };
    ValidInterface {
        purpose,
        primary: f.primary,
        vlan_label: f.label.clone().filter(|_| purpose == Purpose::Vlan),
        ipam_address: f.ipam_address.clone(),
        subnet_id: f.subnet_id,
        vpc_ipv4: None,
        nat: f.nat_1_1.as_ref().map(|_| Nat::Any),
        ipv6: f.vpc_ipv6.as_ref().map(|v| crate::vpc::ipv6::ValidInterfaceIpv6::from_row(v, false)),
    }
}
