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
use nubis_store::vpcs::{SubnetRow, VpcInterface, VpcRow};

/// An interface is active while its instance is powered on with the interface's configuration
/// profile (a Linode interface has none: it is active while the instance is powered on).
pub(crate) fn interface_active(i: &InstanceRow, f: &InterfaceRow) -> bool {
    Status::parse(&i.status).is_some_and(Status::is_powered)
        && (f.config_id.is_none() || f.config_id == i.boot_config_id)
}

/// Everything of an account the VPC records are built from, indexed by parent so that a record
/// costs what it holds (a page of VPCs, or one VPC of 10,000 subnets, reads each row once).
pub(crate) struct VpcWorld {
    pub subnets: Vec<SubnetRow>,
    pub interfaces: Vec<InterfaceRow>,
    /// Whether each interface (by id) is active.
    pub active: HashMap<i64, bool>,
    /// Positions in `subnets` by VPC id, and in `interfaces` by subnet id, in their order.
    subnets_of_vpc: HashMap<i64, Vec<usize>>,
    interfaces_of_subnet: HashMap<i64, Vec<usize>>,
    /// Position in `subnets` by subnet id.
    subnet_at: HashMap<i64, usize>,
}

impl VpcWorld {
    pub fn new(subnets: &[SubnetRow], interfaces: &[InterfaceRow], instances: &[InstanceRow]) -> VpcWorld {
        let instances: HashMap<i64, &InstanceRow> = instances.iter().map(|i| (i.id, i)).collect();
        let interfaces: Vec<InterfaceRow> = interfaces.iter().filter(|f| f.purpose == "vpc").cloned().collect();
        let active = interfaces
            .iter()
            .map(|f| (f.id, instances.get(&f.instance_id).is_some_and(|i| interface_active(i, f))))
            .collect();
        VpcWorld::indexed(subnets.to_vec(), interfaces, active)
    }

    /// The world of some subnets, from their interfaces (each with whether it is active).
    pub fn of_subnets(subnets: Vec<SubnetRow>, interfaces: Vec<VpcInterface>) -> VpcWorld {
        let active = interfaces.iter().map(|f| (f.interface.id, f.active)).collect();
        VpcWorld::indexed(subnets, interfaces.into_iter().map(|f| f.interface).collect(), active)
    }

    fn indexed(subnets: Vec<SubnetRow>, interfaces: Vec<InterfaceRow>, active: HashMap<i64, bool>) -> VpcWorld {
        let mut subnets_of_vpc: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut subnet_at = HashMap::new();
        for (k, s) in subnets.iter().enumerate() {
            subnets_of_vpc.entry(s.vpc_id).or_default().push(k);
            subnet_at.insert(s.id, k);
        }
        let mut interfaces_of_subnet: HashMap<i64, Vec<usize>> = HashMap::new();
        for (k, f) in interfaces.iter().enumerate() {
            if let Some(subnet) = f.subnet_id {
                interfaces_of_subnet.entry(subnet).or_default().push(k);
            }
        }
        VpcWorld { subnets, interfaces, active, subnets_of_vpc, interfaces_of_subnet, subnet_at }
    }

    fn active(&self, interface_id: i64) -> bool {
        self.active.get(&interface_id).copied().unwrap_or(false)
    }

    pub fn subnet(&self, s: &SubnetRow) -> Subnet {
        let mut by_instance: BTreeMap<i64, Vec<SubnetInterface>> = BTreeMap::new();
        let on_subnet = self.interfaces_of_subnet.get(&s.id).map_or(&[][..], Vec::as_slice);
        for f in on_subnet.iter().map(|&k| &self.interfaces[k]) {
            by_instance.entry(f.instance_id).or_default().push(SubnetInterface {
                id: f.id,
                active: self.active(f.id),
                config_id: f.config_id,
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
        self.interfaces.iter().filter(|f| keep(f)).filter_map(|f| self.ip(f)).collect()
    }

    fn ip(&self, f: &InterfaceRow) -> Option<VpcIp> {
        let s = &self.subnets[*self.subnet_at.get(&f.subnet_id?)?];
        let prefix = 32 - (s.last_v4 - s.first_v4 + 1).trailing_zeros() as u8;
        Some(VpcIp {
            address: f.vpc_ipv4.clone(),
            address_range: None,
            active: self.active(f.id),
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
