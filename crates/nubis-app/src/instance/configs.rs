//! Configuration profiles (reference `LinodeConfig`): how an instance boots (kernel, run level,
//! helpers), its device map of disks, and, for instances with profile interfaces, eth0..eth2.
//! List, create, get, update (settings replaced, interfaces redefined when given) and delete.

use nubis_model::filter::Filter;
use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::instance_profile::{Config, DEVICE_SLOTS, Device, Devices, Helpers};
use nubis_model::page::{Page, PageRequest};
use nubis_model::validate::len_between;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::configs::{ConfigRow, ConfigValues};
use nubis_store::instances::InstanceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::deploy::{DEFAULT_KERNEL, check_kernel};
use super::generation::LEGACY;
use super::instance_entity;
use super::interfaces::InterfaceRequest;
use super::interfaces::{Target, ValidInterface, check_interfaces, create_interfaces};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `POST` and `PUT /v4/compute/instances/{instance_id}/configs[/{instance_config_id}]`. On
/// update, omitted fields keep their values; `interfaces`, when given, replaces them all.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InstanceConfigRequest {
    /// 1-48 characters (required on create).
    #[schema(schema_with = config_label_schema)]
    pub label: Option<String>,
    /// Default `linode/latest-64bit`.
    pub kernel: Option<String>,
    pub comments: Option<String>,
    /// MB of the plan's memory the instance may use; 0: all of it.
    pub memory_limit: Option<i64>,
    /// Default `/dev/sda`.
    #[schema(schema_with = root_device_schema)]
    pub root_device: Option<String>,
    /// `default`, `single` or `binbash`.
    #[schema(schema_with = run_level_schema)]
    pub run_level: Option<String>,
    /// `paravirt` or `fullvirt`.
    #[schema(schema_with = virt_mode_schema)]
    pub virt_mode: Option<String>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub helpers: Option<HelpersRequest>,
    /// Disks of the instance by slot, `sda` to `sdh` (required on create; may be empty).
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub devices: Option<DevicesRequest>,
    /// eth0..eth2 (instances with profile interfaces only).
    #[schema(schema_with = super::create::interfaces_schema)]
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub interfaces: Option<Vec<InterfaceRequest>>,
    /// An initrd disk is not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub initrd: Option<i64>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, ToSchema)]
pub struct HelpersRequest {
    pub devtmpfs_automount: Option<bool>,
    pub distro: Option<bool>,
    pub modules_dep: Option<bool>,
    pub network: Option<bool>,
    pub updatedb_disabled: Option<bool>,
}

/// A device slot of a request: a disk of the instance (volumes are not offered).
#[derive(Debug, Default, Clone, Copy, Deserialize, ToSchema)]
pub struct DeviceRequest {
    pub disk_id: Option<i64>,
    /// Volumes are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub volume_id: Option<i64>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, ToSchema)]
pub struct DevicesRequest {
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sda: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdb: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdc: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdd: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sde: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdf: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdg: Option<DeviceRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub sdh: Option<DeviceRequest>,
}

impl DevicesRequest {
    pub(crate) fn slots(&self) -> [(&'static str, Option<DeviceRequest>); 8] {
        [
            ("sda", self.sda),
            ("sdb", self.sdb),
            ("sdc", self.sdc),
            ("sdd", self.sdd),
            ("sde", self.sde),
            ("sdf", self.sdf),
            ("sdg", self.sdg),
            ("sdh", self.sdh),
        ]
    }
}

const LABEL_MAX: usize = 48;
const RUN_LEVELS: &[&str] = &["default", "single", "binbash"];
const VIRT_MODES: &[&str] = &["paravirt", "fullvirt"];

fn config_label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(1, LABEL_MAX)))
}
fn root_device_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{matching, or_null, schema};
    schema(or_null(matching("^[a-zA-Z0-9/_-]+$")))
}
fn run_level_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(RUN_LEVELS)))
}
fn virt_mode_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(VIRT_MODES)))
}

/// Refuses an operation on an instance that is in the middle of a transition.
pub(crate) fn refuse_busy(i: &InstanceRow) -> Result<()> {
    let status = Status::parse(&i.status).unwrap_or(Status::Offline);
    if status.is_transitional() || status == Status::Deleting {
        return Err(Error::refused(format!(
            "The instance is busy ({}); retry once its current operation is done",
            status.name()
        )));
    }
    Ok(())
}

/// A profile request that passed the checks that need no database: the profile's values and
/// its interfaces (when given).
pub(crate) struct ValidConfig {
    pub label: String,
    pub kernel: String,
    pub comments: Option<String>,
    pub memory_limit: i64,
    pub root_device: String,
    pub run_level: String,
    pub virt_mode: String,
    pub helpers: Helpers,
    pub devices: Devices,
    pub interfaces: Option<Vec<ValidInterface>>,
}

/// Checks a profile request against what it replaces (`current`, on update) and the catalog
/// (the plan's memory, the region's capabilities).
pub(crate) fn check_config(
    catalog: &crate::catalog::Catalog,
    inst: &InstanceRow,
    input: &InstanceConfigRequest,
    current: Option<&ConfigRow>,
    network_default: bool,
) -> Result<ValidConfig> {
    let mut p = Problems::new();
    let label = input.label.clone().or_else(|| current.map(|c| c.label.clone()));
    let label = match label {
        None => {
            p.add("label", "A label is required");
            String::new()
        }
        Some(l) => {
            p.check(len_between(&l, 1, LABEL_MAX), "label", "Must be 1-48 characters");
            l
        }
    };
    let kernel = input.kernel.clone().or_else(|| current.map(|c| c.kernel.clone()));
    let kernel = kernel.unwrap_or_else(|| DEFAULT_KERNEL.to_string());
    check_kernel(&mut p, "kernel", &kernel);
    let memory_mb = catalog.instance_type(&inst.kind).map_or(0, |t| t.memory);
    let memory_limit = input.memory_limit.or(current.map(|c| c.memory_limit)).unwrap_or(0);
    p.check(
        (0..=memory_mb.max(0)).contains(&memory_limit),
        "memory_limit",
        format!("Must be between 0 (all of it) and the plan's {memory_mb} MB"),
    );
    let root_device = input
        .root_device
        .clone()
        .or_else(|| current.map(|c| c.root_device.clone()))
        .unwrap_or_else(|| "/dev/sda".into());
    p.check(
        !root_device.is_empty()
            && root_device.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-')),
        "root_device",
        "Must be letters, digits, '/', '_' and '-' only",
    );
    let run_level =
        input.run_level.clone().or_else(|| current.map(|c| c.run_level.clone())).unwrap_or_else(|| "default".into());
    p.check(RUN_LEVELS.contains(&run_level.as_str()), "run_level", "Must be one of default, single, binbash");
    let virt_mode =
        input.virt_mode.clone().or_else(|| current.map(|c| c.virt_mode.clone())).unwrap_or_else(|| "paravirt".into());
    p.check(VIRT_MODES.contains(&virt_mode.as_str()), "virt_mode", "Must be paravirt or fullvirt");
    let base = current.map_or(Helpers::defaults(network_default), |c| c.helpers);
    let helpers = match input.helpers {
        None => base,
        Some(h) => Helpers {
            devtmpfs_automount: h.devtmpfs_automount.unwrap_or(base.devtmpfs_automount),
            distro: h.distro.unwrap_or(base.distro),
            modules_dep: h.modules_dep.unwrap_or(base.modules_dep),
            network: h.network.unwrap_or(base.network),
            updatedb_disabled: h.updatedb_disabled.unwrap_or(base.updatedb_disabled),
        },
    };
    p.check(input.initrd.is_none(), "initrd", "An initrd disk is not offered");
    let devices = match (&input.devices, current) {
        (Some(d), _) => check_devices(&mut p, d, &virt_mode),
        (None, Some(c)) => c.devices.clone(),
        (None, None) => {
            p.add("devices", "A device map is required (it may be empty)");
            Devices::default()
        }
    };
    let interfaces = match &input.interfaces {
        None => None,
        Some(list) => {
            if inst.interface_generation != LEGACY && !list.is_empty() {
                p.add("interfaces", "This instance uses Linode interfaces: manage them under /interfaces");
            }
            let region = catalog.region(&inst.region);
            Some(check_interfaces(&mut p, region, list, false))
        }
    };
    p.finish()?;
    let comments = match &input.comments {
        Some(c) => Some(c.clone()),
        None => current.and_then(|c| c.comments.clone()),
    };
    Ok(ValidConfig {
        label,
        kernel,
        comments,
        memory_limit,
        root_device,
        run_level,
        virt_mode,
        helpers,
        devices,
        interfaces,
    })
}

impl App {
    /// The record of a profile with its interfaces.
    pub(crate) async fn instance_config_view(&self, inst: &InstanceRow, c: &ConfigRow) -> Result<Config> {
        let interfaces = self.store.interfaces_of_configs(&[c.id]).await?;
        Ok(config_record(inst, c, &interfaces))
    }

    pub async fn instance_config_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Config>> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigList, id).await?.into_inner();
        let (rows, total) = self.store.configs_page(id, filter, page.page, page.page_size).await?;
        let ids: Vec<i64> = rows.iter().map(|c| c.id).collect();
        let interfaces = self.store.interfaces_of_configs(&ids).await?;
        Ok(Page::new(rows.iter().map(|c| config_record(&inst, c, &interfaces)).collect(), page, total))
    }

    pub async fn instance_config_get(&self, actor: &Actor, id: i64, config_id: i64) -> Result<Config> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigGet, id).await?.into_inner();
        let c = self.store.config_get(id, config_id).await?.ok_or(Error::NotFound)?;
        self.instance_config_view(&inst, &c).await
    }

    pub async fn instance_config_create(&self, actor: &Actor, id: i64, input: InstanceConfigRequest) -> Result<Config> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigCreate, id).await?.into_inner();
        if let Some(list) = &input.interfaces {
            // The subnets named must be the actor's to use (the rest is checked in the write).
            let mut p = Problems::new();
            let checked = check_interfaces(&mut p, self.catalog.region(&inst.region), list, false);
            self.check_interface_access(actor, &checked).await?;
        }
        let input = &input;
        let (inst, c) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let network = tx.account_network_helper(actor.account_id()).await?;
                    let v = check_config(&self.catalog, &inst, input, None, network)?;
                    check_devices_are_disks(tx, id, &v.devices).await?;
                    let now = Timestamp::now();
                    let c = tx.config_insert(id, &values(&v), now).await?;
                    if let Some(list) = &v.interfaces {
                        let t = Target {
                            account_id: actor.account_id(),
                            instance_id: id,
                            region: &inst.region,
                            config_id: Some(c.id),
                        };
                        create_interfaces(tx, t, 0, list).await?;
                    }
                    config_event(tx, actor, &inst, "instance_config_create").await?;
                    Ok((inst, c))
                })
            })
            .await?;
        self.instance_config_view(&inst, &c).await
    }

    pub async fn instance_config_update(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        input: InstanceConfigRequest,
    ) -> Result<Config> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigUpdate, id).await?.into_inner();
        if let Some(list) = &input.interfaces {
            let mut p = Problems::new();
            let checked = check_interfaces(&mut p, self.catalog.region(&inst.region), list, false);
            self.check_interface_access(actor, &checked).await?;
        }
        let input = &input;
        let (inst, c) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let current = tx.config_get(id, config_id).await?.ok_or(Error::NotFound)?;
                    let network = tx.account_network_helper(actor.account_id()).await?;
                    let v = check_config(&self.catalog, &inst, input, Some(&current), network)?;
                    check_devices_are_disks(tx, id, &v.devices).await?;
                    let now = Timestamp::now();
                    let c = tx.config_update(config_id, &values(&v), now).await?;
                    if let Some(list) = &v.interfaces {
                        // Redefined: the old ones go (and free their addresses) before the new
                        // ones are made.
                        for f in tx.interfaces_of_instance(id).await?.iter().filter(|f| f.config_id == Some(config_id))
                        {
                            tx.interface_delete(f.id).await?;
                        }
                        let t = Target {
                            account_id: actor.account_id(),
                            instance_id: id,
                            region: &inst.region,
                            config_id: Some(config_id),
                        };
                        create_interfaces(tx, t, 0, list).await?;
                    }
                    config_event(tx, actor, &inst, "instance_config_update").await?;
                    Ok((inst, c))
                })
            })
            .await?;
        self.instance_config_view(&inst, &c).await
    }

    /// Deletes a profile and its interfaces; refused while the instance runs with it.
    pub async fn instance_config_delete(&self, actor: &Actor, id: i64, config_id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                tx.config_get(id, config_id).await?.ok_or(Error::NotFound)?;
                let powered = Status::parse(&inst.status).is_some_and(Status::is_powered);
                if powered && inst.boot_config_id == Some(config_id) {
                    return Err(Error::refused(
                        "The instance is running with this configuration profile: shut it down (or boot another \
                         profile) first",
                    ));
                }
                tx.config_delete(id, config_id).await?;
                config_event(tx, actor, &inst, "instance_config_delete").await?;
                Ok(())
            })
        })
        .await
    }
}

fn values(v: &ValidConfig) -> ConfigValues<'_> {
    ConfigValues {
        label: &v.label,
        kernel: &v.kernel,
        comments: v.comments.as_deref(),
        memory_limit: v.memory_limit,
        root_device: &v.root_device,
        run_level: &v.run_level,
        virt_mode: &v.virt_mode,
        helpers: &v.helpers,
        devices: &v.devices,
    }
}

/// Checks a device map: each slot holds at most a disk (no volume), each disk once, and
/// `fullvirt` has only `sda` to `sdd`.
pub(crate) fn check_devices(p: &mut Problems, d: &DevicesRequest, virt_mode: &str) -> Devices {
    let mut out = Devices::default();
    let mut seen = Vec::new();
    for (name, slot) in d.slots() {
        let Some(dev) = slot else { continue };
        let field = format!("devices.{name}");
        if dev.volume_id.is_some() {
            p.add(format!("{field}.volume_id"), "Volumes are not offered");
        }
        let Some(disk) = dev.disk_id else { continue };
        if seen.contains(&disk) {
            p.add(format!("{field}.disk_id"), "A disk can be in one device slot only");
        }
        seen.push(disk);
        if virt_mode == "fullvirt" && DEVICE_SLOTS.iter().position(|s| *s == name).is_some_and(|i| i >= 4) {
            p.add(field.clone(), "Slots sde to sdh are unavailable in fullvirt mode");
        }
        if let Some(s) = out.slot_mut(name) {
            *s = Some(Device { disk_id: Some(disk), volume_id: None });
        }
    }
    out
}

/// Every disk a device map names must be one of the instance's (read inside the transaction).
pub(crate) async fn check_devices_are_disks(tx: &mut Tx<'_>, instance_id: i64, d: &Devices) -> Result<()> {
    let disks: Vec<i64> = tx.disks_of_instance(instance_id).await?.iter().map(|d| d.id).collect();
    let mut p = Problems::new();
    for (name, slot) in d.slots() {
        if let Some(id) = slot.and_then(|s| s.disk_id) {
            p.check(disks.contains(&id), format!("devices.{name}.disk_id"), "Disk not found on this instance");
        }
    }
    p.finish()
}

async fn config_event(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, action: &'static str) -> Result<()> {
    tx.event_insert(&event(actor, action, instance_entity(inst)).visible_with(GrantKind::Instance, inst.id).build())
        .await?;
    Ok(())
}

/// A profile's record; `interfaces` holds (at least) its interfaces, in position order.
pub(crate) fn config_record(
    inst: &InstanceRow,
    c: &ConfigRow,
    interfaces: &[nubis_store::interfaces::InterfaceRow],
) -> Config {
    Config {
        id: c.id,
        label: c.label.clone(),
        kernel: c.kernel.clone(),
        comments: c.comments.clone(),
        memory_limit: c.memory_limit,
        root_device: c.root_device.clone(),
        run_level: c.run_level.clone(),
        virt_mode: c.virt_mode.clone(),
        helpers: c.helpers,
        devices: c.devices.clone(),
        interfaces: interfaces
            .iter()
            .filter(|f| f.config_id == Some(c.id))
            .map(|f| super::config_interfaces::interface_record(inst, f))
            .collect(),
        initrd: None,
        created: c.created,
        updated: c.updated,
    }
}
