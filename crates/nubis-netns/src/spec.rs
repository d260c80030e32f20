//! The desired state of the host, as the application computes it from the database.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::{IpNet, Ipv4Net};
use nubis_model::firewall::FirewallRules;

/// Everything that should exist on the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    /// By region index (the position of the region in the configuration).
    pub regions: BTreeMap<u16, RegionSpec>,
    pub instances: BTreeMap<i64, InstanceSpec>,
}

/// The host's side of a region's network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionSpec {
    /// Addresses of the host on the region's bridge: the gateways of the public subnets in use
    /// (with their prefix) and the balancers' addresses (/32).
    pub host_addresses: Vec<Ipv4Net>,
    /// Private addresses of the region's instances: a /32 route each through the region link,
    /// so that the data plane reaches them (private pools of several regions may overlap).
    pub private_routes: Vec<Ipv4Addr>,
}

/// One instance's namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceSpec {
    pub region: u16,
    /// The instance's label, its hostname.
    pub hostname: String,
    pub nics: Vec<NicSpec>,
    /// Addresses on `lo` (shared addresses, the metadata address).
    pub loopback: Vec<IpNet>,
    /// Default IPv4 gateway (on the nic of the region's network).
    pub gateway: Option<Ipv4Addr>,
    /// 1:1 NAT: public address -> VPC address (packets to the first reach the second).
    pub nat: Vec<(Ipv4Addr, Ipv4Addr)>,
    /// The active firewall's rules; `None`: nothing is filtered.
    pub firewall: Option<FirewallRules>,
}

/// One link of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NicSpec {
    /// `eth0`, `eth1`... inside the namespace.
    pub name: String,
    pub segment: Segment,
    /// Addresses with their prefix (so the prefix's network is on this link).
    pub addresses: Vec<IpNet>,
    /// Further networks reachable directly on this link (the other subnets of a VPC).
    pub routes: Vec<IpNet>,
}

/// The network a link is plugged into.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A region's public and private network.
    Region(u16),
    /// A VPC (all its subnets).
    Vpc(i64),
    /// A VLAN, by its key (account, region, label).
    Vlan(String),
}

impl Segment {
    /// The bridge's name in the fabric namespace (at most 15 bytes).
    pub fn bridge(&self) -> String {
        match self {
            Segment::Region(n) => format!("r{n}"),
            Segment::Vpc(id) => format!("v{id}"),
            Segment::Vlan(key) => format!("l{:012x}", fnv(key.as_bytes()) & 0xffff_ffff_ffff),
        }
    }
}

/// FNV-1a: a stable short name for a VLAN key (the same on every run).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bridge_names_fit_and_are_stable() {
        let a = Segment::Vlan("7/us-east/backend".into()).bridge();
        assert_eq!(a, Segment::Vlan("7/us-east/backend".into()).bridge());
        assert_ne!(a, Segment::Vlan("8/us-east/backend".into()).bridge());
        assert!(a.len() <= 15);
        assert_eq!(Segment::Vpc(12).bridge(), "v12");
        assert_eq!(Segment::Region(0).bridge(), "r0");
    }
}
