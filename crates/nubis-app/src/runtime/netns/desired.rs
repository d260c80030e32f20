//! The host's desired state, read from the database: every instance's links, addresses, routes
//! and firewall as the API reports them, and the host's addresses on each region's network.

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv4Addr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use nubis_model::Result;
use nubis_model::instance::Status;
use nubis_model::ip::IpAddress;
use nubis_netns::spec::{Desired, InstanceSpec, NicSpec, Segment};
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;

use crate::App;

/// What one pass of the reconciler works from.
pub(crate) struct Snapshot {
    pub desired: Desired,
    /// Each instance's status, operation counter and account when it was read.
    pub status: HashMap<i64, (Status, i64, i64)>,
}

fn net(a: &IpAddress) -> Option<IpNet> {
    let ip: std::net::IpAddr = a.address.parse().ok()?;
    IpNet::new(ip, u8::try_from(a.prefix).ok()?).ok()
}

fn v4(s: &str) -> Option<Ipv4Addr> {
    s.parse().ok()
}

impl App {
    /// The index of a region in the configuration (its bridge's number).
    pub(crate) fn region_index(&self, region: &str) -> Option<u16> {
        self.config.regions.iter().position(|r| r.id == region).and_then(|i| u16::try_from(i).ok())
    }

    pub(crate) async fn netns_snapshot(&self) -> Result<Snapshot> {
        let names: Vec<&str> = Status::ALL.iter().map(|s| s.name()).collect();
        let rows = self.store.instances_in_status(&names).await?;
        let ids: Vec<i64> = rows.iter().map(|i| i.id).collect();
        let interfaces = self.store.interfaces_of_instances(&ids).await?;
        let vpc_ids: Vec<i64> =
            interfaces.iter().filter_map(|f| f.vpc_id).collect::<BTreeSet<_>>().into_iter().collect();
        let subnets = self.store.subnets_of_vpcs(&vpc_ids).await?;
        let mut vpc_nets: HashMap<i64, Vec<IpNet>> = HashMap::new();
        for s in &subnets {
            if let Ok(n) = s.ipv4.parse::<Ipv4Net>() {
                vpc_nets.entry(s.vpc_id).or_default().push(IpNet::V4(n));
            }
            // A subnet's IPv6 range: on the link of the VPC interfaces with IPv6.
            if let Some(n) = s.ipv6_range.as_deref().and_then(|r| r.parse::<Ipv6Net>().ok()) {
                vpc_nets.entry(s.vpc_id).or_default().push(IpNet::V6(n));
            }
        }
        let mut d = Desired::default();
        let mut status = HashMap::new();
        for inst in rows.iter() {
            let Some(region) = self.region_index(&inst.region) else { continue };
            let Some(st) = Status::parse(&inst.status) else { continue };
            status.insert(inst.id, (st, inst.op_seq, inst.account_id));
            let mine: Vec<&InterfaceRow> = interfaces.iter().filter(|f| f.instance_id == inst.id).collect();
            let spec = self.instance_spec(inst, region, &mine, &vpc_nets).await?;
            let r = d.regions.entry(region).or_default();
            if let Some(nic) = spec.nics.iter().find(|n| n.segment == Segment::Region(region)) {
                for a in &nic.addresses {
                    if let IpNet::V4(a) = a
                        && a.prefix_len() == self.private_pool.net().prefix_len()
                        && self.private_pool.contains(a.addr())
                    {
                        r.private_routes.push(a.addr());
                    }
                }
            }
            d.instances.insert(inst.id, spec);
        }
        // The host's addresses: every public subnet's gateway, every balancer's address.
        for spec in d.instances.values() {
            let Some(gw) = spec.gateway else { continue };
            let Some(nic) = spec.nics.iter().find(|n| n.segment == Segment::Region(spec.region)) else { continue };
            for a in &nic.addresses {
                if let IpNet::V4(a) = a
                    && a.contains(&gw)
                    && let Ok(n) = Ipv4Net::new(gw, a.prefix_len())
                {
                    let r = d.regions.entry(spec.region).or_default();
                    if !r.host_addresses.contains(&n) {
                        r.host_addresses.push(n);
                    }
                }
            }
        }
        let (balancers, _, _) = self.store.nodebalancers_everything().await?;
        for b in &balancers {
            let (Some(region), Some(a)) = (self.region_index(&b.region), v4(&b.ipv4)) else { continue };
            d.regions.entry(region).or_default().host_addresses.push(Ipv4Net::from(a));
        }
        for r in d.regions.values_mut() {
            // Gateways first: the first address is the source of the host's routes.
            r.host_addresses.sort_by_key(|n| (n.prefix_len() == 32, *n));
            r.host_addresses.dedup();
            r.private_routes.sort();
            r.private_routes.dedup();
        }
        Ok(Snapshot { desired: d, status })
    }

    async fn instance_spec(
        &self,
        inst: &InstanceRow,
        region: u16,
        interfaces: &[&InterfaceRow],
        vpc_nets: &HashMap<i64, Vec<IpNet>>,
    ) -> Result<InstanceSpec> {
        let ips = self.address_book_of_instance(inst).await?.instance_ips(inst);
        let mut public: Vec<IpNet> = ips.ipv4.public.iter().chain(&ips.ipv4.private).filter_map(net).collect();
        public.extend(ips.ipv6.slaac.iter().chain(&ips.ipv6.link_local).filter_map(net));
        for r in &ips.ipv6.global {
            if let Ok(n) = format!("{}/{}", r.range, r.prefix).parse::<IpNet>() {
                public.push(n);
            }
        }
        let gateway = ips.ipv4.public.first().and_then(|a| a.gateway.as_deref()).and_then(v4);
        let mut nics = Vec::new();
        let mut nat = Vec::new();
        let mut sorted: Vec<&&InterfaceRow> = interfaces.iter().collect();
        sorted.sort_by_key(|f| f.position);
        for f in &sorted {
            let name = format!("eth{}", f.position);
            match f.purpose.as_str() {
                "public" => nics.push(NicSpec {
                    name,
                    segment: Segment::Region(region),
                    addresses: public.clone(),
                    routes: Vec::new(),
                }),
                "vpc" => {
                    let Some(vpc) = f.vpc_id else { continue };
                    let all = vpc_nets.get(&vpc).cloned().unwrap_or_default();
                    let nets: Vec<Ipv4Net> = all
                        .iter()
                        .filter_map(|n| match n {
                            IpNet::V4(n) => Some(*n),
                            IpNet::V6(_) => None,
                        })
                        .collect();
                    let addr = f.vpc_ipv4.as_deref().and_then(v4);
                    let mut addresses = Vec::new();
                    if let Some(a) = addr {
                        if let Some(n) = nets.iter().find(|n| n.contains(&a)) {
                            addresses.push(IpNet::V4(Ipv4Net::new(a, n.prefix_len()).unwrap_or(Ipv4Net::from(a))));
                        }
                        if let Some(p) = f.nat_1_1.as_deref().and_then(v4) {
                            nat.push((p, a));
                        }
                    }
                    let mut routes: Vec<IpNet> =
                        nets.iter().filter(|n| !addr.is_some_and(|a| n.contains(&a))).map(|n| IpNet::V4(*n)).collect();
                    // The interface's SLAAC address in its /64, and the VPC's IPv6 subnets on the link.
                    let slaac = f.vpc_ipv6.as_ref().and_then(|v| {
                        let a = v.slaac_address.parse::<std::net::Ipv6Addr>().ok()?;
                        Ipv6Net::new(a, 64).ok()
                    });
                    if let Some(a) = slaac {
                        addresses.push(IpNet::V6(a));
                        routes.extend(all.iter().filter(|n| matches!(n, IpNet::V6(_))).copied());
                    }
                    nics.push(NicSpec { name, segment: Segment::Vpc(vpc), addresses, routes });
                }
                "vlan" => {
                    let key = format!("{}/{}/{}", inst.account_id, inst.region, f.label.as_deref().unwrap_or_default());
                    let addresses =
                        f.ipam_address.as_deref().and_then(|a| a.parse::<IpNet>().ok()).into_iter().collect();
                    nics.push(NicSpec { name, segment: Segment::Vlan(key), addresses, routes: Vec::new() });
                }
                _ => {}
            }
        }
        let has_public = nics.iter().any(|n| n.segment == Segment::Region(region));
        if interfaces.is_empty() {
            nics.push(NicSpec {
                name: "eth0".into(),
                segment: Segment::Region(region),
                addresses: public,
                routes: vec![],
            });
        } else if !has_public && !nat.is_empty() {
            // No public interface: the 1:1 NAT addresses alone on the region's network.
            let addresses = ips.ipv4.public.iter().filter_map(net).collect();
            nics.push(NicSpec { name: "eth3".into(), segment: Segment::Region(region), addresses, routes: vec![] });
        }
        let has_public = nics.iter().any(|n| n.segment == Segment::Region(region));
        let loopback =
            ips.ipv4.shared.iter().filter_map(|a| v4(&a.address)).map(|a| IpNet::V4(Ipv4Net::from(a))).collect();
        Ok(InstanceSpec {
            region,
            hostname: inst.label.clone(),
            nics,
            loopback,
            gateway: if has_public { gateway } else { None },
            nat,
            firewall: self.instance_active_firewall_rules(inst.id).await?,
        })
    }
}
