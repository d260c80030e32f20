//! Linode interfaces (the newer generation) as requests name them: one of `public`, `vpc` or
//! `vlan`, a default route and a firewall. The checks that need no database, all reported at
//! once, relative to the request (`vpc.subnet_id`).

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use nubis_model::Problems;
use nubis_model::validate::{is_hyphenated_label, len_between};
use serde::Deserialize;
use utoipa::ToSchema;

use super::interface_kinds::{Nat, Purpose, check_nat};

/// `POST`/`PUT /v4/compute/instances/{instance_id}/interfaces` (reference `LinodeInterface`
/// request). Exactly one of `public`, `vpc` and `vlan`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct LinodeInterfaceRequest {
    /// A firewall the instance is assigned to (public and VPC interfaces).
    pub firewall_id: Option<i64>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub default_route: Option<DefaultRouteRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub public: Option<PublicRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub vpc: Option<VpcRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub vlan: Option<VlanRequest>,
    /// RDMA VPC interfaces are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub rdma_vpc: Option<serde_json::Value>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, ToSchema)]
pub struct DefaultRouteRequest {
    pub ipv4: Option<bool>,
    pub ipv6: Option<bool>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PublicRequest {
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv4: Option<PublicIpv4Request>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv6: Option<PublicIpv6Request>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PublicIpv4Request {
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub addresses: Option<Vec<AddressRequest>>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct AddressRequest {
    /// One of the instance's public IPv4 addresses, or `auto`.
    pub address: Option<String>,
    pub primary: Option<bool>,
    /// VPC interfaces: `auto` (the instance's public address), one of its public addresses, or
    /// null (no 1:1 NAT).
    pub nat_1_1_address: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PublicIpv6Request {
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub ranges: Option<Vec<RangeRequest>>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RangeRequest {
    pub range: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct VpcRequest {
    #[schema(required = true, value_type = i64)]
    pub subnet_id: Option<i64>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv4: Option<VpcIpv4Request>,
    /// On a subnet with IPv6: the interface's SLAAC /64 and routed ranges.
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv6: Option<crate::vpc::InterfaceIpv6Request>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct VpcIpv4Request {
    /// At most one address (`auto` or one in the subnet).
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub addresses: Option<Vec<AddressRequest>>,
    /// Routed ranges are not offered: empty or null.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub ranges: Option<Vec<RangeRequest>>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct VlanRequest {
    #[schema(required = true, value_type = String)]
    pub vlan_label: Option<String>,
    pub ipam_address: Option<String>,
}

/// What a Linode interface is, once checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LinodeKind {
    /// The instance's public addresses: the ones named (besides `auto`) must be its own, the
    /// ranges named must be routed to it.
    Public {
        addresses: Vec<String>,
        ranges: Vec<String>,
    },
    /// On a subnet, with an address in it (allocated when `None`) and maybe a 1:1 NAT.
    Vpc {
        subnet_id: i64,
        address: Option<Ipv4Addr>,
        nat: Option<Nat>,
    },
    Vlan {
        label: String,
        ipam_address: Option<String>,
    },
}

impl LinodeKind {
    pub(crate) fn purpose(&self) -> Purpose {
        match self {
            LinodeKind::Public { .. } => Purpose::Public,
            LinodeKind::Vpc { .. } => Purpose::Vpc,
            LinodeKind::Vlan { .. } => Purpose::Vlan,
        }
    }
}

/// A Linode interface request that passed every check that needs no database.
#[derive(Debug, Clone)]
pub(crate) struct ValidLinodeInterface {
    pub kind: LinodeKind,
    pub default_ipv4: Option<bool>,
    pub default_ipv6: Option<bool>,
    pub firewall_id: Option<i64>,
    /// The IPv6 asked for (VPC interfaces).
    pub ipv6: Option<crate::vpc::ipv6::ValidInterfaceIpv6>,
}

/// Public addresses named in a request: `auto` or an IPv4 address (each one of the instance's
/// is checked in the transaction).
fn check_public_addresses(p: &mut Problems, list: &[AddressRequest]) {
    for (i, a) in list.iter().enumerate() {
        match a.address.as_deref() {
            None | Some("auto") => {}
            Some(x) if x.parse::<Ipv4Addr>().is_ok() => {}
            Some(_) => p.add(format!("public.ipv4.addresses[{i}].address"), "Must be an IPv4 address or \"auto\""),
        }
        p.check(
            a.nat_1_1_address.is_none(),
            format!("public.ipv4.addresses[{i}].nat_1_1_address"),
            "Only for VPC interfaces",
        );
    }
}

/// The fields of a Linode interface request, borrowed (from a request of its own or from an
/// interface of an instance create request).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinodeParts<'a> {
    pub firewall_id: Option<i64>,
    pub default_route: Option<DefaultRouteRequest>,
    pub public: Option<&'a PublicRequest>,
    pub vpc: Option<&'a VpcRequest>,
    pub vlan: Option<&'a VlanRequest>,
    pub rdma_vpc: bool,
}

impl LinodeInterfaceRequest {
    pub(crate) fn parts(&self) -> LinodeParts<'_> {
        LinodeParts {
            firewall_id: self.firewall_id,
            default_route: self.default_route,
            public: self.public.as_ref(),
            vpc: self.vpc.as_ref(),
            vlan: self.vlan.as_ref(),
            rdma_vpc: self.rdma_vpc.is_some(),
        }
    }
}

/// Checks one Linode interface request. `new_instance`: the instance does not exist yet (a 1:1
/// NAT can then only be `auto`).
pub(crate) fn check_linode_interface(
    p: &mut Problems,
    r: LinodeParts<'_>,
    new_instance: bool,
) -> Option<ValidLinodeInterface> {
    let given = [r.public.is_some(), r.vpc.is_some(), r.vlan.is_some()].iter().filter(|x| **x).count();
    p.check(!r.rdma_vpc, "rdma_vpc", "RDMA VPC interfaces are not offered");
    if given != 1 {
        p.add_general("Exactly one of public, vpc and vlan must be given");
        return None;
    }
    let route = r.default_route.unwrap_or_default();
    let mut ipv6 = None;
    let kind = if let Some(pb) = r.public {
        let mut addresses = Vec::new();
        if let Some(list) = pb.ipv4.as_ref().and_then(|v| v.addresses.as_ref()) {
            check_public_addresses(p, list);
            addresses = list.iter().filter_map(|a| a.address.clone()).filter(|a| a != "auto").collect();
        }
        let mut ranges = Vec::new();
        for (i, g) in pb.ipv6.iter().flat_map(|v| v.ranges.iter().flatten()).enumerate() {
            match g.range.as_deref().map(|x| x.split('/').next().unwrap_or(x)) {
                Some(x) if x.parse::<std::net::Ipv6Addr>().is_ok() => ranges.push(x.to_string()),
                _ => p.add(
                    format!("public.ipv6.ranges[{i}].range"),
                    "Must be an IPv6 range routed to the instance; new ranges come from POST /v4/networking/ipv6/ranges",
                ),
            }
        }
        LinodeKind::Public { addresses, ranges }
    } else if let Some(v) = r.vpc {
        if let Some(r) = &v.ipv6 {
            let mut q = Problems::new();
            ipv6 = Some(crate::vpc::ipv6::check_interface_ipv6(&mut q, r));
            p.extend_prefixed("vpc", q);
        }
        if v.subnet_id.is_none() {
            p.add("vpc.subnet_id", "A VPC interface needs a subnet_id");
        }
        let v4 = v.ipv4.as_ref();
        p.check(
            v4.and_then(|x| x.ranges.as_ref()).is_none_or(Vec::is_empty),
            "vpc.ipv4.ranges",
            "Routed IPv4 ranges on interfaces are not supported",
        );
        let addresses = v4.and_then(|x| x.addresses.as_deref()).unwrap_or_default();
        p.check(addresses.len() <= 1, "vpc.ipv4.addresses", "At most one IPv4 address per VPC interface is supported");
        let mut address = None;
        let mut nat = None;
        if let Some(a) = addresses.first() {
            match a.address.as_deref() {
                None | Some("auto") => {}
                Some(x) => match x.parse::<Ipv4Addr>() {
                    Ok(x) => address = Some(x),
                    Err(_) => p.add("vpc.ipv4.addresses[0].address", "Must be an IPv4 address or \"auto\""),
                },
            }
            let mut q = Problems::new();
            let requested = a.nat_1_1_address.as_deref().map(|n| if n == "auto" { "any" } else { n });
            nat = check_nat(&mut q, requested, new_instance);
            if !q.is_empty() {
                p.add(
                    "vpc.ipv4.addresses[0].nat_1_1_address",
                    "Must be \"auto\", one of the instance's public IPv4 addresses, or null",
                );
            }
        }
        p.check(route.ipv6 != Some(true), "default_route.ipv6", "A VPC interface has no IPv6 default route here");
        LinodeKind::Vpc { subnet_id: v.subnet_id.unwrap_or_default(), address, nat }
    } else {
        let v = r.vlan?;
        p.check(
            route.ipv4 != Some(true) && route.ipv6 != Some(true),
            "default_route",
            "A VLAN interface has no default route",
        );
        p.check(r.firewall_id.is_none(), "firewall_id", "A VLAN interface has no firewall");
        let label = match v.vlan_label.as_deref() {
            None | Some("") => {
                p.add("vlan.vlan_label", "A VLAN interface needs a vlan_label");
                String::new()
            }
            Some(l) if !(len_between(l, 1, 64) && is_hyphenated_label(l)) => {
                p.add(
                    "vlan.vlan_label",
                    "Must be 1-64 characters: ASCII letters, digits and hyphens, without two hyphens in a row",
                );
                String::new()
            }
            Some(l) => l.to_string(),
        };
        let ipam_address = match v.ipam_address.as_deref().filter(|a| !a.is_empty()) {
            None => None,
            Some(a) => match a.parse::<Ipv4Net>() {
                Ok(n) => Some(n.to_string()),
                Err(_) => {
                    p.add("vlan.ipam_address", "Must be an IPv4 address with prefix length, such as 10.0.0.1/24");
                    None
                }
            },
        };
        LinodeKind::Vlan { label, ipam_address }
    };
    Some(ValidLinodeInterface {
        kind,
        default_ipv4: route.ipv4,
        default_ipv6: route.ipv6,
        firewall_id: r.firewall_id,
        ipv6,
    })
}

/// The interfaces of an instance with Linode interfaces: at most three, one public, one VPC,
/// each VLAN once. `kinds` is the whole set after the change.
pub(crate) fn check_linode_set(kinds: &[&LinodeKind]) -> Result<(), String> {
    if kinds.len() > 3 {
        return Err("An instance can have at most three interfaces".into());
    }
    if kinds.iter().filter(|k| matches!(k, LinodeKind::Public { .. })).count() > 1 {
        return Err("An instance can have only one public interface".into());
    }
    if kinds.iter().filter(|k| matches!(k, LinodeKind::Vpc { .. })).count() > 1 {
        return Err("An instance can have only one VPC interface".into());
    }
    let vlans: Vec<&str> = kinds
        .iter()
        .filter_map(|k| match k {
            LinodeKind::Vlan { label, .. } => Some(label.as_str()),
            _ => None,
        })
        .collect();
    if vlans.iter().enumerate().any(|(i, l)| vlans[..i].contains(l)) {
        return Err("An instance can be attached to a VLAN only once".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: serde_json::Value) -> LinodeInterfaceRequest {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn exactly_one_kind_and_its_own_rules() {
        let mut p = Problems::new();
        assert!(check_linode_interface(&mut p, parse(serde_json::json!({})).parts(), false).is_none());
        assert!(!p.is_empty());
        let mut p = Problems::new();
        let v = check_linode_interface(
            &mut p,
            parse(serde_json::json!({"vpc": {"subnet_id": 3, "ipv4": {"addresses": [{"address": "10.0.0.5", "nat_1_1_address": "auto"}]}}})).parts(),
            false,
        )
        .unwrap();
        assert!(p.is_empty());
        assert_eq!(
            v.kind,
            LinodeKind::Vpc { subnet_id: 3, address: Some("10.0.0.5".parse().unwrap()), nat: Some(Nat::Any) }
        );
        let mut p = Problems::new();
        check_linode_interface(
            &mut p,
            parse(serde_json::json!({"vlan": {"vlan_label": "a--b"}, "default_route": {"ipv4": true}})).parts(),
            false,
        );
        assert!(p.finish().is_err());
    }

    #[test]
    fn an_instance_has_one_public_one_vpc_and_distinct_vlans() {
        let public = LinodeKind::Public { addresses: vec![], ranges: vec![] };
        let vlan = LinodeKind::Vlan { label: "a".into(), ipam_address: None };
        assert!(check_linode_set(&[&public, &vlan]).is_ok());
        assert!(check_linode_set(&[&public, &public]).is_err());
        assert!(check_linode_set(&[&vlan, &vlan]).is_err());
        assert!(check_linode_set(&[&public, &vlan, &vlan, &vlan]).is_err());
    }
}
