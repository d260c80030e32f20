//! Building the VPC, subnet and VPC-address records from stored rows: the subnets' `instances`
//! and every `active` flag come from the instances' interfaces and power states. A view holds
//! only the rows of the records it answers (read by key), or, for the address records, those of
//! one account.

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;

use nubis_ipam::subnet_mask_v4;
use nubis_model::instance::Status;
use nubis_model::vpc::{Ipv6RangeEntry, Subnet, SubnetInstance, SubnetInterface, Vpc, VpcIp};
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;
use nubis_store::vpcs::{SubnetMember, SubnetRow, VpcInterface, VpcRow};

/// An interface is active while its instance is powered on with the interface's configuration
/// profile (a Linode interface has none: it is active while the instance is powered on).
pub(crate) fn interface_active(i: &InstanceRow, f: &InterfaceRow) -> bool {
    Status::parse(&i.status).is_some_and(Status::is_powered)
        && (f.config_id.is_none() || f.config_id == i.boot_config_id)
}

/// What the VPC records are built from, indexed by parent so that a record costs what it holds
/// (a page of VPCs, or one VPC of 10,000 subnets, reads each row once).
pub(crate) struct VpcWorld {
    pub subnets: Vec<SubnetRow>,
    /// The VPC interfaces on the subnets, as a subnet's record shows them.
    members: Vec<SubnetMember>,
    /// The same interfaces whole, in the same order, for the VPC address records; empty when only
    /// subnet records are built.
    interfaces: Vec<InterfaceRow>,
    /// Positions in `subnets` by VPC id, and in `members` by subnet id, in their order.
    subnets_of_vpc: HashMap<i64, Vec<usize>>,
    members_of_subnet: HashMap<i64, Vec<usize>>,
    /// Position in `subnets` by subnet id.
    subnet_at: HashMap<i64, usize>,
}

/// An interface as a subnet's record shows it.
fn member(f: &InterfaceRow, active: bool) -> Option<SubnetMember> {
    Some(SubnetMember { id: f.id, instance_id: f.instance_id, subnet_id: f.subnet_id?, config_id: f.config_id, active })
}

impl VpcWorld {
    /// The world of one instance: its VPC interfaces on `subnets`, active as its power state says.
    pub fn new(subnets: &[SubnetRow], interfaces: &[InterfaceRow], instances: &[InstanceRow]) -> VpcWorld {
        let instances: HashMap<i64, &InstanceRow> = instances.iter().map(|i| (i.id, i)).collect();
        let (members, interfaces) = interfaces
            .iter()
            .filter(|f| f.purpose == "vpc")
            .filter_map(|f| {
                let active = instances.get(&f.instance_id).is_some_and(|i| interface_active(i, f));
                Some((member(f, active)?, f.clone()))
            })
            .unzip();
        VpcWorld::indexed(subnets.to_vec(), members, interfaces)
    }

    /// The world of some subnets, for their records only.
    pub fn of_members(subnets: Vec<SubnetRow>, members: Vec<SubnetMember>) -> VpcWorld {
        VpcWorld::indexed(subnets, members, Vec::new())
    }

    /// The world of some subnets, from their interfaces whole (each with whether it is active),
    /// for the VPC address records.
    pub fn of_subnets(subnets: Vec<SubnetRow>, interfaces: Vec<VpcInterface>) -> VpcWorld {
        let (members, interfaces) =
            interfaces.into_iter().filter_map(|f| Some((member(&f.interface, f.active)?, f.interface))).unzip();
        VpcWorld::indexed(subnets, members, interfaces)
    }

    fn indexed(subnets: Vec<SubnetRow>, members: Vec<SubnetMember>, interfaces: Vec<InterfaceRow>) -> VpcWorld {
        let mut subnets_of_vpc: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut subnet_at = HashMap::new();
        for (k, s) in subnets.iter().enumerate() {
            subnets_of_vpc.entry(s.vpc_id).or_default().push(k);
            subnet_at.insert(s.id, k);
        }
        let mut members_of_subnet: HashMap<i64, Vec<usize>> = HashMap::new();
        for (k, m) in members.iter().enumerate() {
            members_of_subnet.entry(m.subnet_id).or_default().push(k);
        }
        VpcWorld { subnets, members, interfaces, subnets_of_vpc, members_of_subnet, subnet_at }
    }

    pub fn subnet(&self, s: &SubnetRow) -> Subnet {
        let mut by_instance: BTreeMap<i64, Vec<SubnetInterface>> = BTreeMap::new();
        let on_subnet = self.members_of_subnet.get(&s.id).map_or(&[][..], Vec::as_slice);
        for m in on_subnet.iter().map(|&k| &self.members[k]) {
            by_instance.entry(m.instance_id).or_default().push(SubnetInterface {
                id: m.id,
                active: m.active,
                config_id: m.config_id,
            });
        }
        Subnet {
            id: s.id,
            label: s.label.clone(),
            ipv4: s.ipv4.clone(),
            ipv6: s.ipv6_range.iter().map(|r| Ipv6RangeEntry { range: r.clone() }).collect(),
            instances: by_instance.into_iter().map(|(id, interfaces)| SubnetInstance { id, interfaces }).collect(),
            created: s.created,
            updated: s.updated,
        }
    }

    pub fn subnets_of(&self, vpc_id: i64) -> Vec<Subnet> {
        let of_vpc = self.subnets_of_vpc.get(&vpc_id).map_or(&[][..], Vec::as_slice);
        of_vpc.iter().map(|&k| self.subnet(&self.subnets[k])).collect()
    }

    pub fn vpc(&self, v: &VpcRow) -> Vpc {
        Vpc {
            id: v.id,
            label: v.label.clone(),
            description: v.description.clone(),
            region: v.region.clone(),
            ipv6: v.ipv6_range.iter().map(|r| Ipv6RangeEntry { range: r.clone() }).collect(),
            subnets: self.subnets_of(v.id),
            created: v.created,
            updated: v.updated,
        }
    }

    /// The VPC addresses of the interfaces `keep` selects, in interface order.
    pub fn ips(&self, keep: impl Fn(&InterfaceRow) -> bool) -> Vec<VpcIp> {
        self.interfaces
            .iter()
            .zip(&self.members)
            .filter(|(f, _)| keep(f))
            .filter_map(|(f, m)| self.ip(f, m.active))
            .collect()
    }

    fn ip(&self, f: &InterfaceRow, active: bool) -> Option<VpcIp> {
        let s = &self.subnets[*self.subnet_at.get(&f.subnet_id?)?];
        let prefix = 32 - (s.last_v4 - s.first_v4 + 1).trailing_zeros() as u8;
        Some(VpcIp {
            address: f.vpc_ipv4.clone(),
            address_range: None,
            active,
            config_id: f.config_id,
            gateway: Some(Ipv4Addr::from(s.first_v4 + 1).to_string()),
            interface_id: f.id,
            instance_id: f.instance_id,
            nat_1_1: f.nat_1_1.clone(),
            prefix: Some(i64::from(prefix)),
            region: f.region.clone(),
            subnet_id: s.id,
            subnet_mask: subnet_mask_v4(prefix).map(|m| m.to_string()).unwrap_or_default(),
            vpc_id: s.vpc_id,
        })
    }
}
