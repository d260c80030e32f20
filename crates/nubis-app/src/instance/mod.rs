//! Compute instances (reference `Linode`, renamed `instance`): lookup with grants, the record,
//! list, get, update and delete. Creation is in [`create`] and [`provision`], power operations
//! in [`power`]; configuration profiles in [`configs`] with their interfaces in
//! [`config_interfaces`] (checked and written by [`interfaces`]), disks in [`disks`], image
//! deployment in [`deploy`]; Linode interfaces in [`linode_interfaces`] and [`linode_settings`];
//! rebuild, password and rescue in [`lifecycle`], resize, mutate and migrate in [`resize`],
//! clone in [`clone`], transfer and statistics in [`usage`].

mod backups;
mod clone;
mod config_interfaces;
mod configs;
mod create;
mod deploy;
mod disks;
mod firewalls;
pub(crate) mod generation;
mod interface_kinds;
mod interfaces;
mod lifecycle;
mod linode_interfaces;
mod linode_request;
mod linode_settings;
mod power;
mod provision;
mod resize;
mod transition;
mod usage;

use nubis_model::event::EventEntity;
use nubis_model::firewall::{DeviceType, Firewall};
use nubis_model::grants::GrantKind;
use nubis_model::instance::{Alerts, BackupSchedule, Backups, Instance, Specs, Status};
use nubis_model::ip::InstanceIps;
use nubis_model::validate::{is_dotted_label, len_between, tag_problem};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instance_backups::BackupState;
use nubis_store::instances::{InstanceChanges, InstanceRow};
use nubis_store::ips::{IpKind, ShownIp};
use serde::Deserialize;
use utoipa::ToSchema;

pub use backups::{Backup, BackupDiskView, BackupList, RestoreRequest, SnapshotRequest, SnapshotSlot, Volume};
pub use clone::CloneRequest;
pub use config_interfaces::{ConfigInterfaceUpdate, InterfacesOrder};
pub use configs::{DeviceRequest, DevicesRequest, HelpersRequest, InstanceConfigRequest};
pub use create::{InstanceCreate, Metadata};
pub use disks::{DiskCreate, DiskPassword, DiskResize, DiskUpdate};
pub use firewalls::InstanceFirewallsUpdate;
pub use interfaces::{InterfaceIpv4Request, InterfaceRequest};
pub use lifecycle::{PasswordRequest, RebuildRequest, RescueRequest};
pub use linode_request::{
    AddressRequest, DefaultRouteRequest, LinodeInterfaceRequest, PublicIpv4Request, PublicIpv6Request, PublicRequest,
    RangeRequest, VlanRequest, VpcIpv4Request, VpcRequest,
};
pub use linode_settings::{DefaultRouteUpdate, InterfaceSettingsUpdate, InterfacesUpgradeRequest};
pub use power::BootRequest;
pub(crate) use provision::allocate_ipv4;
pub use resize::{MigrateRequest, MutateRequest, ResizeRequest};

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

pub(crate) fn instance_entity(i: &InstanceRow) -> EventEntity {
    EventEntity::new("instance", i.id, &i.label, format!("/v4/compute/instances/{}", i.id))
}

pub(crate) const LABEL_RULE: &str = "Must be 3-64 characters, begin and end with a letter or digit, and contain only \
                                     letters, digits, '-', '_' and '.', without '--', '__' or '..'";
pub(crate) const LABEL_TAKEN: &str = "Label must be unique among your instances";

/// `PUT /v4/compute/instances/{instance_id}`. Read-only fields of the record are accepted and
/// ignored, so a fetched record can be sent back as it is; fields the hosted API changes and
/// nubis does not offer (a maintenance policy, reserved addresses) are
/// refused unless sent as the record shows them.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InstanceUpdate {
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    /// Only unrestricted users may change tags.
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
    #[schema(schema_with = group_schema)]
    pub group: Option<String>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub alerts: Option<AlertsUpdate>,
    pub watchdog_enabled: Option<bool>,
    /// The backup schedule: `day` (`Sunday`..`Saturday`) and `window` (`W0`..`W22`, two-hour
    /// windows in UTC); `Scheduling` leaves it to nubis. `enabled` is read-only (ignored).
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub backups: Option<BackupsUpdate>,
    /// Only `linode/migrate`.
    pub maintenance_policy: Option<String>,
    /// The instance's addresses as the record shows them (reserved addresses are not offered).
    pub ipv4: Option<Vec<String>>,
}

/// `backups` of an instance update: read as the record shows it.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct BackupsUpdate {
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub schedule: Option<ScheduleUpdate>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ScheduleUpdate {
    #[schema(schema_with = schedule_day_schema)]
    pub day: Option<String>,
    #[schema(schema_with = schedule_window_schema)]
    pub window: Option<String>,
}

fn schedule_day_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    let days: Vec<&str> = [backups::SCHEDULING].into_iter().chain(backups::DAYS.iter().copied()).collect();
    schema(or_null(one_of(&days)))
}

fn schedule_window_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    let windows: Vec<&str> = [backups::SCHEDULING].into_iter().chain(backups::WINDOWS.iter().copied()).collect();
    schema(or_null(one_of(&windows)))
}

/// Alert thresholds; omitted ones stay as they are. 0 turns an alert off.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct AlertsUpdate {
    pub cpu: Option<i64>,
    pub network_in: Option<i64>,
    pub network_out: Option<i64>,
    pub transfer_quota: Option<i64>,
    pub io: Option<i64>,
}

pub(crate) fn check_label(p: &mut Problems, label: &str) {
    p.check(is_dotted_label(label, LABEL_LEN.0, LABEL_LEN.1), "label", LABEL_RULE);
}

/// Tags: 3..50 characters each; only unrestricted users may set them (403).
pub(crate) fn check_tags(actor: &Actor, p: &mut Problems, tags: Option<&Vec<String>>) -> Result<()> {
    let Some(tags) = tags else { return Ok(()) };
    if actor.restricted() {
        return Err(Error::Forbidden("Only unrestricted users may add or modify tags".into()));
    }
    for (i, t) in tags.iter().enumerate() {
        if let Some(reason) = tag_problem(t) {
            p.add(format!("tags[{i}]"), reason);
        }
    }
    Ok(())
}

pub(crate) fn check_group(p: &mut Problems, group: &str) {
    p.check(len_between(group, 0, GROUP_MAX), "group", "Length must be at most 50 characters");
}

impl App {
    /// The records of some instances, with their addresses read by key.
    pub(crate) async fn instance_views(&self, rows: &[InstanceRow]) -> Result<Vec<Instance>> {
        let ids: Vec<i64> = rows.iter().map(|i| i.id).collect();
        let ips = self.store.shown_ips_of_instances(&ids).await?;
        let backups = self.backup_states(&ids).await?;
        Ok(rows
            .iter()
            .map(|i| {
                let b = backups.iter().find(|(id, _)| *id == i.id).map(|(_, b)| b.clone()).unwrap_or_default();
                // The addresses come by instance: this instance's are one run of them.
                let from = ips.partition_point(|a| a.instance_id < i.id);
                let to = from + ips[from..].partition_point(|a| a.instance_id == i.id);
                self.instance_record(i, &ips[from..to], b)
            })
            .collect())
    }

    /// An instance's record; `ips` holds its addresses (in id order), `b` its backup state.
    fn instance_record(&self, i: &InstanceRow, ips: &[ShownIp], b: BackupState) -> Instance {
        let v4 = || ips.iter().filter(|a| a.kind == IpKind::Ipv4);
        let ipv4 = v4().filter(|a| a.public).chain(v4().filter(|a| !a.public)).map(|a| a.address.clone()).collect();
        let slaac = ips.iter().find(|a| a.kind == IpKind::Slaac);
        let t = self.catalog.instance_type(&i.kind);
        Instance {
            id: i.id,
            label: i.label.clone(),
            region: i.region.clone(),
            kind: i.kind.clone(),
            image: i.image.clone(),
            status: Status::parse(&i.status).unwrap_or(Status::Offline),
            group: i.group.clone(),
            tags: i.tags.clone(),
            ipv4,
            ipv6: slaac.map(|s| format!("{}/128", s.address)),
            specs: Specs {
                disk: t.map_or(0, |t| t.disk),
                memory: t.map_or(0, |t| t.memory),
                vcpus: t.map_or(0, |t| t.vcpus),
                gpus: t.map_or(0, |t| t.gpus),
                transfer: t.map_or(0, |t| t.transfer),
            },
            alerts: i.alerts.clone(),
            backups: Backups {
                enabled: i.backups_enabled,
                available: b.last_successful.is_some(),
                schedule: BackupSchedule { day: b.day, window: b.window },
                last_successful: b.last_successful,
            },
            hypervisor: "kvm".into(),
            watchdog_enabled: i.watchdog_enabled,
            host_uuid: i.host_uuid.clone(),
            has_user_data: i.has_user_data,
            lke_cluster_id: None,
            placement_group: None,
            disk_encryption: "disabled".into(),
            interface_generation: i.interface_generation.clone(),
            capabilities: Vec::new(),
            site_type: "core".into(),
            created: i.created,
            updated: i.updated,
        }
    }

    /// The record of an instance a write transaction returned, with its addresses as stored now.
    pub(crate) async fn instance_view_now(&self, _actor: &Actor, i: &InstanceRow) -> Result<Instance> {
        self.instance_views(std::slice::from_ref(i))
            .await?
            .pop()
            .ok_or_else(|| Error::internal("no view of the instance"))
    }

    pub async fn instance_list(
        &self,
        actor: &Actor,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<Instance>> {
        self.authorize(actor, Op::InstanceList).await?;
        let (rows, results) = self
            .store
            .instances_page(actor.account_id(), Self::grant_user(actor), filter, page.page, page.page_size)
            .await?;
        Ok(nubis_model::page::Page::new(self.instance_views(&rows).await?, page, results))
    }

    pub async fn instance_get(&self, actor: &Actor, id: i64) -> Result<Instance> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceGet, id).await?.into_inner();
        self.instance_view_now(actor, &i).await
    }

    pub async fn instance_update(&self, actor: &Actor, id: i64, input: InstanceUpdate) -> Result<Instance> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceUpdate, id).await?.into_inner();
        let input = &input;
        let i = self
            .write(|tx| {
                Box::pin(async move {
                    // The alerts given are merged into the instance's current ones, read here.
                    let current = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    if let Some(l) = &input.label {
                        check_label(&mut p, l);
                    }
                    check_tags(actor, &mut p, input.tags.as_ref())?;
                    if let Some(g) = &input.group {
                        check_group(&mut p, g);
                    }
                    let schedule = input.backups.as_ref().and_then(|b| b.schedule.as_ref());
                    let (day, window) = match schedule {
                        Some(s) => backups::check_schedule(&mut p, s.day.as_deref(), s.window.as_deref()),
                        None => (None, None),
                    };
                    p.check(
                        input.maintenance_policy.as_deref().is_none_or(|m| m == "linode/migrate"),
                        "maintenance_policy",
                        "Only \"linode/migrate\" is offered",
                    );
                    if let Some(given) = &input.ipv4 {
                        let mut mine: Vec<String> = tx
                            .ips_of_instance(id)
                            .await?
                            .into_iter()
                            .filter(|a| a.kind == IpKind::Ipv4)
                            .map(|a| a.address)
                            .collect();
                        let mut given = given.clone();
                        mine.sort();
                        given.sort();
                        p.check(
                            given == mine,
                            "ipv4",
                            "Reserved IPv4 addresses are not offered: addresses change through /v4/networking/ips",
                        );
                    }
                    let vcpus = self.catalog.instance_type(&current.kind).map_or(1, |t| t.vcpus);
                    let alerts = input.alerts.as_ref().map(|a| merge_alerts(&mut p, &current, a, vcpus));
                    p.finish()?;
                    let changes = InstanceChanges {
                        label: input.label.as_deref(),
                        tags: input.tags.as_deref(),
                        group: input.group.as_deref(),
                        alerts: alerts.as_ref(),
                        watchdog_enabled: input.watchdog_enabled,
                    };
                    if day.is_some() || window.is_some() {
                        let (d, w) = tx.backup_schedule(id).await?;
                        tx.backup_schedule_set(id, day.as_deref().or(d.as_deref()), window.as_deref().or(w.as_deref()))
                            .await?;
                    }
                    let i = tx
                        .instance_update(id, &changes, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(
                        &event(actor, "instance_update", instance_entity(&i))
                            .visible_with(GrantKind::Instance, id)
                            .build(),
                    )
                    .await?;
                    Ok(i)
                })
            })
            .await?;
        self.instance_view_now(actor, &i).await
    }

    /// Deletes an instance: its addresses and ranges are freed, its interfaces leave their
    /// subnets and VLANs, its firewall attachments go, and the balancer nodes that point at it
    /// are removed (as the hosted API does). Refused while it is in a pending transfer.
    pub async fn instance_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let i = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let blockers = instance_delete_blockers(tx, &i).await?;
                if !blockers.is_empty() {
                    return Err(Error::Invalid(blockers));
                }
                instance_detach_from_firewalls(tx, id).await?;
                let nodes = tx.instance_balancer_nodes(id).await?;
                tx.nb_nodes_delete(&nodes).await?;
                if let Some(e) = i.op_event_id
                    && Status::parse(&i.status).is_some_and(Status::is_transitional)
                {
                    tx.event_set_status(e, "failed").await?;
                }
                tx.instance_delete(id).await?;
                crate::billing::meter_stop(tx, "instance", id).await?;
                crate::billing::meter_stop(tx, "backup", id).await?;
                tx.grants_delete_entity(GrantKind::Instance, id).await?;
                tx.event_insert(
                    &event(actor, "instance_delete", instance_entity(&i)).visible_with(GrantKind::Instance, id).build(),
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    /// `GET .../ips`: every address of the instance by kind.
    pub async fn instance_ips_list(&self, actor: &Actor, id: i64) -> Result<InstanceIps> {
        let i = self.lookup_for::<InstanceRow>(actor, Op::InstanceIpsList, id).await?.into_inner();
        Ok(self.address_book_of_instance(&i).await?.instance_ips(&i))
    }

    /// `GET .../firewalls`: the firewalls the instance is a device of (enabled or not) that the
    /// actor may see.
    pub async fn instance_firewalls_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<Firewall>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceFirewallsList, id).await?.into_inner();
        self.service_firewalls(actor, DeviceType::Instance, id, filter, page).await
    }

    /// `GET .../nodebalancers`: the balancers the instance is a back end of (that the actor may
    /// read), found through the instance's private addresses.
    pub async fn instance_nodebalancers_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<nubis_model::nodebalancer::NodeBalancer>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceNodebalancersList, id).await?.into_inner();
        self.nodebalancers_of_instance(actor, id, filter, page).await
    }
}

/// Everything that forbids deleting the instance now, as errors naming the reason: it is part
/// of a pending service transfer. Read inside the deleting transaction, so a concurrent change
/// cannot slip between check and delete.
pub(crate) async fn instance_delete_blockers(tx: &mut Tx<'_>, i: &InstanceRow) -> Result<Vec<FieldError>> {
    let mut out = Vec::new();
    if tx.instance_in_pending_transfer(i.id).await? {
        out.push(FieldError::general(format!(
            "Instance '{}' is part of a pending service transfer; cancel the transfer first",
            i.label
        )));
    }
    Ok(out)
}

/// Removes the instance from every firewall it is a device of, in the deleting transaction (no
/// live-migration check and no `firewall_device_remove` event: the instance is going away, and
/// its `instance_delete` event records that).
async fn instance_detach_from_firewalls(tx: &mut Tx<'_>, instance_id: i64) -> Result<()> {
    tx.instance_firewall_devices_delete(instance_id).await?;
    Ok(())
}

/// The alerts after an update: CPU up to 100% per core, transfer quota up to 100%.
fn merge_alerts(p: &mut Problems, current: &InstanceRow, a: &AlertsUpdate, vcpus: i64) -> Alerts {
    let mut out = current.alerts.clone();
    let mut set = |field: &str, v: Option<i64>, max: i64, slot: &mut i64| {
        if let Some(v) = v {
            if (0..=max).contains(&v) {
                *slot = v;
            } else {
                p.add(format!("alerts.{field}"), format!("Must be between 0 and {max}"));
            }
        }
    };
    set("cpu", a.cpu, 100 * vcpus.max(1), &mut out.cpu);
    set("network_in", a.network_in, 1_000_000, &mut out.network_in);
    set("network_out", a.network_out, 1_000_000, &mut out.network_out);
    set("transfer_quota", a.transfer_quota, 100, &mut out.transfer_quota);
    set("io", a.io, 1_000_000, &mut out.io);
    out
}

const LABEL_LEN: (usize, usize) = (3, 64);
const GROUP_MAX: usize = 50;

pub(crate) fn label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, pattern, schema};
    schema(or_null(pattern(LABEL_LEN.0, LABEL_LEN.1, nubis_model::validate::DOTTED_LABEL_PATTERN)))
}

pub(crate) fn group_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(0, GROUP_MAX)))
}
