//! Compute instances as the API shows them (reference `Linode`, renamed `instance`), their
//! power states and their network interfaces.

use serde::Serialize;
use utoipa::ToSchema;

use crate::Timestamp;

/// The power states of an instance (the reference's `status` enum, the part nubis uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Provisioning,
    Offline,
    Booting,
    Running,
    ShuttingDown,
    Rebooting,
    Deleting,
    /// A new image is being deployed (rebuild).
    Rebuilding,
    /// Moving to another plan (resize, mutate).
    Resizing,
    /// Moving to another host or region (migrate).
    Migrating,
}

impl Status {
    pub const ALL: [Status; 10] = [
        Status::Provisioning,
        Status::Offline,
        Status::Booting,
        Status::Running,
        Status::ShuttingDown,
        Status::Rebooting,
        Status::Deleting,
        Status::Rebuilding,
        Status::Resizing,
        Status::Migrating,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Status::Provisioning => "provisioning",
            Status::Offline => "offline",
            Status::Booting => "booting",
            Status::Running => "running",
            Status::ShuttingDown => "shutting_down",
            Status::Rebooting => "rebooting",
            Status::Deleting => "deleting",
            Status::Rebuilding => "rebuilding",
            Status::Resizing => "resizing",
            Status::Migrating => "migrating",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.name() == s)
    }

    /// A state the runtime moves out of by itself.
    pub fn is_transitional(self) -> bool {
        matches!(
            self,
            Status::Provisioning
                | Status::Booting
                | Status::ShuttingDown
                | Status::Rebooting
                | Status::Rebuilding
                | Status::Resizing
                | Status::Migrating
        )
    }

    /// The instance has been powered on with its configuration: its interfaces are active.
    pub fn is_powered(self) -> bool {
        matches!(self, Status::Booting | Status::Running | Status::ShuttingDown | Status::Rebooting)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Specs {
    pub disk: i64,
    pub memory: i64,
    pub vcpus: i64,
    pub gpus: i64,
    pub transfer: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct Alerts {
    pub cpu: i64,
    pub network_in: i64,
    pub network_out: i64,
    pub transfer_quota: i64,
    pub io: i64,
}

impl Alerts {
    /// The reference's defaults: CPU at 90% per core, 10 Mbit/s in and out, 80% of transfer,
    /// 10000 IO operations per second.
    pub fn defaults(vcpus: i64) -> Alerts {
        Alerts { cpu: 90 * vcpus.max(1), network_in: 10, network_out: 10, transfer_quota: 80, io: 10000 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BackupSchedule {
    pub day: Option<String>,
    pub window: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Backups {
    pub enabled: bool,
    pub available: bool,
    pub schedule: BackupSchedule,
    pub last_successful: Option<Timestamp>,
}

/// An instance (reference `Linode`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Instance {
    pub id: i64,
    pub label: String,
    pub region: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub image: Option<String>,
    pub status: Status,
    pub group: String,
    pub tags: Vec<String>,
    /// Public and private IPv4 addresses of the instance.
    pub ipv4: Vec<String>,
    /// The SLAAC address with `/128`.
    pub ipv6: Option<String>,
    pub specs: Specs,
    pub alerts: Alerts,
    pub backups: Backups,
    pub hypervisor: String,
    pub watchdog_enabled: bool,
    pub host_uuid: String,
    pub has_user_data: bool,
    pub lke_cluster_id: Option<i64>,
    pub placement_group: Option<serde_json::Value>,
    pub disk_encryption: String,
    /// `legacy_config` (interfaces on configuration profiles) or `linode` (Linode interfaces).
    pub interface_generation: String,
    pub capabilities: Vec<String>,
    pub site_type: String,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub const INSTANCE_FILTERABLE: &[&str] =
    &["id", "label", "region", "type", "image", "status", "group", "tags", "ipv4", "created", "updated"];

/// The `ipv4` object of an interface (VPC interfaces only).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InterfaceIpv4 {
    pub vpc: Option<String>,
    pub nat_1_1: Option<String>,
}

/// A network interface of an instance (reference `LinodeConfigInterface`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Interface {
    pub id: i64,
    pub purpose: String,
    pub label: Option<String>,
    pub ipam_address: Option<String>,
    pub primary: bool,
    pub active: bool,
    pub vpc_id: Option<i64>,
    pub subnet_id: Option<i64>,
    pub ipv4: Option<InterfaceIpv4>,
    /// A VPC interface's IPv6 (its subnet has IPv6 and it was asked for), or null.
    pub ipv6: Option<crate::vpc::InterfaceIpv6>,
    pub ip_ranges: Vec<String>,
}

/// A VLAN (reference `Vlans`): it exists while instances have interfaces on it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Vlan {
    pub label: String,
    pub region: String,
    pub instances: Vec<i64>,
    pub created: Timestamp,
}

pub const VLAN_FILTERABLE: &[&str] = &["label", "region"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_round_trip() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert!(Status::Booting.is_transitional() && !Status::Running.is_transitional());
        assert!(Status::Running.is_powered() && !Status::Offline.is_powered());
    }
}
