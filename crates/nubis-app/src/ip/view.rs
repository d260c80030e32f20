//! Building IP address records from the stored rows of one account: `gateway`, `prefix` and
//! `subnet_mask` from the pool an address belongs to, the default reverse name of public IPv4
//! addresses, `vpc_nat_1_1` from the VPC interfaces, and an instance's whole address set.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use nubis_ipam::{Ipv4Pool, subnet_mask_v6};
use nubis_model::Result;
use nubis_model::ip::{InstanceIps, InstanceIpv4, InstanceIpv6, IpAddress, Ipv6Range, VpcNat};
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;
use nubis_store::ips::{IpKind, IpRow};
use nubis_store::ranges::{RangeRow, ShareRow};

use crate::App;
use crate::vpc::VpcWorld;

/// The suffix of default reverse names when the configuration names none.
pub const DEFAULT_RDNS_SUFFIX: &str = "ip.nubis.test";

/// Everything of an account the address records are built from.
pub(crate) struct AddressBook<'a> {
    app: &'a App,
    pub ips: Arc<Vec<IpRow>>,
    pub interfaces: Arc<Vec<InterfaceRow>>,
    pub ranges: Arc<Vec<RangeRow>>,
    pub shares: Arc<Vec<ShareRow>>,
    pub vpcs: VpcWorld,
}

impl App {
    /// What the records of these addresses are built from, read by key: the VPC interfaces
    /// that use them as 1:1 NAT.
    pub(crate) async fn address_book_of_ips(&self, ips: &[IpRow]) -> Result<AddressBook<'_>> {
        let addresses = nat_candidates(ips);
        Ok(AddressBook {
            app: self,
            ips: Arc::new(ips.to_vec()),
            interfaces: Arc::new(self.store.interfaces_with_nat_in(&addresses).await?),
            ranges: Arc::default(),
            shares: Arc::default(),
            vpcs: VpcWorld::new(&[], &[], &[]),
        })
    }

    /// What one instance's address set is built from, read by key: its addresses and
    /// interfaces, what is shared with it, its ranges and the subnets its VPC interfaces use.
    pub(crate) async fn address_book_of_instance(&self, inst: &InstanceRow) -> Result<AddressBook<'_>> {
        let own = self.store.ips_of_instances(&[inst.id]).await?;
        let shares = self.store.shares_of_instances(&[inst.id]).await?;
        let shared: Vec<String> = shares.iter().map(|s| s.address.clone()).collect();
        let mut ips = own;
        ips.extend(
            self.store
                .ips_by_addresses(inst.account_id, &shared)
                .await?
                .into_iter()
                .filter(|i| i.instance_id != inst.id),
        );
        let ranges = self.store.ranges_of_instance(inst.account_id, inst.id, &shared).await?;
        let own_interfaces = self.store.interfaces_of_instances(&[inst.id]).await?;
        let subnet_ids: Vec<i64> = own_interfaces.iter().filter_map(|f| f.subnet_id).collect();
        let subnets = self.store.subnets_by_ids(&subnet_ids).await?;
        let vpcs = VpcWorld::new(&subnets, &own_interfaces, std::slice::from_ref(inst));
        let addresses = nat_candidates(&ips);
        Ok(AddressBook {
            app: self,
            ips: Arc::new(ips),
            interfaces: Arc::new(self.store.interfaces_with_nat_in(&addresses).await?),
            ranges: Arc::new(ranges),
            shares: Arc::new(shares),
            vpcs,
        })
    }

    /// The reverse name a public IPv4 address has until one is set: `127-10-0-5.ip.nubis.test`.
    pub(crate) fn default_rdns(&self, address: &str) -> String {
        let suffix = self.config.dns.default_rdns_suffix.as_deref().unwrap_or(DEFAULT_RDNS_SUFFIX);
        format!("{}.{}", address.replace(['.', ':'], "-"), suffix.trim_matches('.'))
    }

    /// The public pool of a region, if the region (still) exists.
    pub(crate) fn public_pool(&self, region: &str) -> Option<Ipv4Pool> {
        let r = self.catalog.region(region)?;
        Ipv4Pool::public(r.public_ipv4, r.public_prefix).ok()
    }
}

/// The addresses of `ips` an interface's 1:1 NAT can name: only an IPv4 address's record shows
/// one (the others are not looked up).
fn nat_candidates(ips: &[IpRow]) -> Vec<String> {
    ips.iter().filter(|i| i.kind == IpKind::Ipv4).map(|i| i.address.clone()).collect()
}

impl AddressBook<'_> {
    /// One address record. `skip_v6_rdns` makes `rdns` of IPv6 addresses null.
    pub fn record(&self, ip: &IpRow, skip_v6_rdns: bool) -> IpAddress {
        let app = self.app;
        match ip.kind {
            IpKind::Ipv4 => {
                let a: Ipv4Addr = ip.address.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
                let pool = if ip.public { app.public_pool(&ip.region) } else { Some(app.private_pool) };
                let rdns = match (&ip.rdns, ip.public) {
                    (Some(r), _) => Some(r.clone()),
                    (None, true) => Some(app.default_rdns(&ip.address)),
                    (None, false) => None,
                };
                IpAddress {
                    address: ip.address.clone(),
                    gateway: pool.and_then(|p| p.gateway_of(a)).map(|g| g.to_string()),
                    subnet_mask: pool.and_then(|p| p.subnet_mask_of(a)).map(|m| m.to_string()).unwrap_or_default(),
                    prefix: pool.and_then(|p| p.prefix_of(a)).map(i64::from).unwrap_or(32),
                    kind: "ipv4".into(),
                    public: ip.public,
                    rdns,
                    instance_id: ip.instance_id,
                    region: ip.region.clone(),
                    vpc_nat_1_1: self.nat_of(&ip.address),
                }
            }
            IpKind::Slaac | IpKind::LinkLocal => IpAddress {
                address: ip.address.clone(),
                gateway: Some(nubis_ipam::v6::LINK_LOCAL_GATEWAY.to_string()),
                subnet_mask: subnet_mask_v6(64).map(|m| m.to_string()).unwrap_or_default(),
                prefix: 64,
                kind: "ipv6".into(),
                public: ip.kind == IpKind::Slaac,
                rdns: if skip_v6_rdns { None } else { ip.rdns.clone() },
                instance_id: ip.instance_id,
                region: ip.region.clone(),
                vpc_nat_1_1: None,
            },
        }
    }

    /// A range as `GET /v4/networking/ips` lists it.
    pub fn range_record(&self, r: &RangeRow) -> IpAddress {
        IpAddress {
            address: r.range_start.clone(),
            gateway: None,
            subnet_mask: subnet_mask_v6(r.prefix).map(|m| m.to_string()).unwrap_or_default(),
            prefix: i64::from(r.prefix),
            kind: "ipv6/range".into(),
            public: true,
            rdns: None,
            instance_id: r.instance_id,
            region: r.region.clone(),
            vpc_nat_1_1: None,
        }
    }

    pub fn range(r: &RangeRow) -> Ipv6Range {
        Ipv6Range {
            range: r.range_start.clone(),
            prefix: i64::from(r.prefix),
            region: r.region.clone(),
            route_target: r.route_target.clone(),
        }
    }

    fn nat_of(&self, address: &str) -> Option<VpcNat> {
        let f = self.interfaces.iter().find(|f| f.nat_1_1.as_deref() == Some(address))?;
        Some(VpcNat { address: f.vpc_ipv4.clone()?, subnet_id: f.subnet_id?, vpc_id: f.vpc_id? })
    }

    /// The IPv4 addresses an instance owns, public ones first.
    /// `GET /v4/compute/instances/{instance_id}/ips`.
    pub fn instance_ips(&self, inst: &InstanceRow) -> InstanceIps {
        let id = inst.id;
        let mine: Vec<&IpRow> = self.ips.iter().filter(|i| i.instance_id == id).collect();
        let v4 = |public: bool| -> Vec<IpAddress> {
            mine.iter()
                .filter(|i| i.kind == IpKind::Ipv4 && i.public == public)
                .map(|i| self.record(i, false))
                .collect()
        };
        let shared_addresses: Vec<&str> =
            self.shares.iter().filter(|s| s.instance_id == id).map(|s| s.address.as_str()).collect();
        let shared = self
            .ips
            .iter()
            .filter(|i| i.kind == IpKind::Ipv4 && shared_addresses.contains(&i.address.as_str()))
            .map(|i| self.record(i, false))
            .collect();
        let global = self
            .ranges
            .iter()
            .filter(|r| r.instance_id == id || shared_addresses.contains(&r.range_start.as_str()))
            .map(Self::range)
            .collect();
        let one = |k: IpKind| mine.iter().find(|i| i.kind == k).map(|i| self.record(i, false));
        InstanceIps {
            ipv4: InstanceIpv4 {
                public: v4(true),
                private: v4(false),
                shared,
                reserved: Vec::new(),
                vpc: self.vpcs.ips(|f| f.instance_id == id),
            },
            ipv6: InstanceIpv6 { link_local: one(IpKind::LinkLocal), slaac: one(IpKind::Slaac), global },
        }
    }
}

/// An address as the API writes it (canonical), or `None` when `s` is not an IP address.
pub(crate) fn canonical_ip(s: &str) -> Option<String> {
    s.parse::<IpAddr>().ok().map(|a| a.to_string())
}
