//! What an instance is made of beyond its record (the hosted API's configuration profiles, disks
//! and Linode interfaces) and the profile's SSH keys that deployments install.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Timestamp;
use crate::instance::Interface;

/// Boot helpers of a configuration profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Helpers {
    pub devtmpfs_automount: bool,
    pub distro: bool,
    pub modules_dep: bool,
    pub network: bool,
    pub updatedb_disabled: bool,
}

impl Helpers {
    /// The reference's defaults; `network` follows the account's Network Helper setting.
    pub fn defaults(network: bool) -> Helpers {
        Helpers { devtmpfs_automount: false, distro: true, modules_dep: true, network, updatedb_disabled: true }
    }
}

/// What a device slot holds: a disk (volumes are not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Device {
    pub disk_id: Option<i64>,
    pub volume_id: Option<i64>,
}

/// The device slots of a profile, `sda` to `sdh`.
pub const DEVICE_SLOTS: [&str; 8] = ["sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh"];

/// A profile's device map: every slot, null when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Devices {
    pub sda: Option<Device>,
    pub sdb: Option<Device>,
    pub sdc: Option<Device>,
    pub sdd: Option<Device>,
    pub sde: Option<Device>,
    pub sdf: Option<Device>,
    pub sdg: Option<Device>,
    pub sdh: Option<Device>,
}

impl Devices {
    pub fn slots(&self) -> [(&'static str, Option<Device>); 8] {
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

    pub fn slot_mut(&mut self, name: &str) -> Option<&mut Option<Device>> {
        Some(match name {
            "sda" => &mut self.sda,
            "sdb" => &mut self.sdb,
            "sdc" => &mut self.sdc,
            "sdd" => &mut self.sdd,
            "sde" => &mut self.sde,
            "sdf" => &mut self.sdf,
            "sdg" => &mut self.sdg,
            "sdh" => &mut self.sdh,
            _ => return None,
        })
    }

    /// The disks the map uses.
    pub fn disk_ids(&self) -> Vec<i64> {
        self.slots().iter().filter_map(|(_, d)| d.and_then(|d| d.disk_id)).collect()
    }

    /// Empties every slot holding `disk_id`; true when one did.
    pub fn forget_disk(&mut self, disk_id: i64) -> bool {
        let mut changed = false;
        for name in DEVICE_SLOTS {
            if let Some(slot) = self.slot_mut(name)
                && slot.is_some_and(|d| d.disk_id == Some(disk_id))
            {
                *slot = None;
                changed = true;
            }
        }
        changed
    }
}

/// A configuration profile of an instance (reference `LinodeConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Config {
    pub id: i64,
    pub label: String,
    pub kernel: String,
    pub comments: Option<String>,
    pub memory_limit: i64,
    pub root_device: String,
    pub run_level: String,
    pub virt_mode: String,
    pub helpers: Helpers,
    pub devices: Devices,
    /// eth0..eth2 in order; empty for an instance with Linode interfaces.
    pub interfaces: Vec<Interface>,
    pub initrd: Option<i64>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub const CONFIG_FILTERABLE: &[&str] = &["id", "label", "kernel", "created", "updated"];

/// A disk of an instance (reference `Disk`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Disk {
    pub id: i64,
    pub label: String,
    /// `ready`, `not ready` or `deleting`.
    pub status: String,
    /// MB.
    pub size: i64,
    /// `raw`, `swap`, `ext3`, `ext4` or `initrd`.
    pub filesystem: String,
    pub disk_encryption: String,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub const DISK_FILTERABLE: &[&str] = &["id", "label", "size", "filesystem", "status", "created", "updated"];

/// A public SSH key of a user's profile (reference `SSHKey`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SshKey {
    pub id: i64,
    pub label: String,
    pub ssh_key: String,
    pub created: Timestamp,
}

pub const SSH_KEY_FILTERABLE: &[&str] = &["id", "label", "created"];

/// The default route a Linode interface carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct DefaultRoute {
    pub ipv4: bool,
    pub ipv6: bool,
}

/// An address of a Linode interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InterfaceAddress {
    pub address: String,
    pub primary: bool,
}

/// An address shared with the instance (IP failover).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SharedAddress {
    pub address: String,
    pub instance_id: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PublicIpv4 {
    pub addresses: Vec<InterfaceAddress>,
    pub shared: Vec<SharedAddress>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Slaac {
    pub address: String,
    pub prefix: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RoutedRange {
    pub range: String,
    pub route_target: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PublicIpv6 {
    pub slaac: Vec<Slaac>,
    pub shared: Vec<RoutedRange>,
    pub ranges: Vec<RoutedRange>,
}

/// A public Linode interface: the instance's public addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PublicInterface {
    pub ipv4: PublicIpv4,
    pub ipv6: PublicIpv6,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VpcAddress {
    pub address: String,
    pub primary: bool,
    pub nat_1_1_address: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VpcRange {
    pub range: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VpcIpv4 {
    pub addresses: Vec<VpcAddress>,
    pub ranges: Vec<VpcRange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VpcInterface {
    pub vpc_id: i64,
    pub subnet_id: i64,
    pub ipv4: VpcIpv4,
    /// The interface's IPv6 (its subnet has IPv6 and it was asked for), or null.
    pub ipv6: Option<crate::vpc::InterfaceIpv6>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VlanInterface {
    pub vlan_label: String,
    pub ipam_address: Option<String>,
}

/// A Linode interface (the newer generation, on the instance; reference `LinodeInterface`):
/// exactly one of `public`, `vpc` and `vlan` is set.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LinodeInterface {
    pub id: i64,
    pub mac_address: String,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub version: i64,
    pub default_route: DefaultRoute,
    pub public: Option<PublicInterface>,
    pub vpc: Option<VpcInterface>,
    pub vlan: Option<VlanInterface>,
}

/// `GET .../interfaces`: every Linode interface of the instance, in creation order.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LinodeInterfaces {
    pub interfaces: Vec<LinodeInterface>,
}

/// Which interfaces carry the default routes, and which could.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DefaultRouteSettings {
    pub ipv4_interface_id: Option<i64>,
    pub ipv4_eligible_interface_ids: Vec<i64>,
    pub ipv6_interface_id: Option<i64>,
    pub ipv6_eligible_interface_ids: Vec<i64>,
}

/// `GET .../interfaces/settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InterfaceSettings {
    pub network_helper: bool,
    pub default_route: DefaultRouteSettings,
}

/// One version of a Linode interface (`GET .../interfaces/history`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InterfaceHistory {
    pub interface_history_id: i64,
    pub interface_id: i64,
    pub instance_id: i64,
    pub version: i64,
    /// The interface's record at that version, as JSON text.
    pub interface_data: String,
    pub created: Timestamp,
}

pub const INTERFACE_HISTORY_FILTERABLE: &[&str] = &["interface_history_id", "interface_id", "version", "created"];

/// `POST .../upgrade-interfaces`: the Linode interfaces the profile's interfaces became (or
/// would become, on a dry run, with id 0).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InterfacesUpgrade {
    /// The profile upgraded (null: the instance had none).
    pub config_id: Option<i64>,
    pub dry_run: bool,
    pub interfaces: Vec<LinodeInterface>,
}

/// `GET .../transfer`: the instance's network transfer this month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct InstanceTransfer {
    /// GB past the account's pool.
    pub billable: i64,
    /// GB the instance adds to the account's pool.
    pub quota: i64,
    /// Bytes used.
    pub used: i64,
}

/// `GET .../transfer/{year}/{month}`: bytes of public traffic in a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct InstanceTransferMonth {
    pub bytes_in: i64,
    pub bytes_out: i64,
    pub bytes_total: i64,
}

/// A series of `[timestamp in ms, reading]` pairs.
pub type Series = Vec<[f64; 2]>;

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IoStats {
    #[schema(value_type = Vec<Vec<f64>>)]
    pub io: Series,
    #[schema(value_type = Vec<Vec<f64>>)]
    pub swap: Series,
}

/// Bits per second in and out, public and private.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NetStats {
    #[serde(rename = "in")]
    #[schema(value_type = Vec<Vec<f64>>)]
    pub inbound: Series,
    #[serde(rename = "out")]
    #[schema(value_type = Vec<Vec<f64>>)]
    pub outbound: Series,
    #[schema(value_type = Vec<Vec<f64>>)]
    pub private_in: Series,
    #[schema(value_type = Vec<Vec<f64>>)]
    pub private_out: Series,
}

/// `GET .../stats` and `.../stats/{year}/{month}`: CPU, IO and network readings over time.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InstanceStats {
    pub title: String,
    /// Percent of CPU used.
    #[schema(value_type = Vec<Vec<f64>>)]
    pub cpu: Series,
    pub io: IoStats,
    pub netv4: NetStats,
    pub netv6: NetStats,
}
