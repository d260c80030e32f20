//! Network interfaces of configuration profiles (reference `LinodeConfigInterface`), given at
//! instance creation or on a profile: their checks, and their creation inside a write
//! transaction (VLANs come into being on first use; VPC addresses are allocated in the subnet, or
//! checked when given; a 1:1 NAT is the instance's public address).

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use nubis_model::catalog::capability;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::validate::{is_hyphenated_label, len_between};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::interfaces::NewInterface;
use serde::Deserialize;
use utoipa::ToSchema;

use super::interface_kinds::{Nat, Purpose, check_nat};
use super::linode_request::{DefaultRouteRequest, LinodeParts, PublicRequest, VlanRequest, VpcRequest};
use crate::App;
use crate::auth::Actor;
use crate::catalog::RegionInfo;
use crate::vpc::InterfaceIpv6Request;
use crate::vpc::ipv6::{ValidInterfaceIpv6, allocate_interface_ipv6, check_interface_ipv6, interface_slaac_address};

/// VLANs an account may have in one region (the reference's limit).
pub(crate) const MAX_VLANS_PER_REGION: usize = 10;

/// The `purpose` of a profile interface, as documented (read as a string, so that another value
/// is refused on the field with the values allowed).
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // documents the request only
pub enum InterfacePurpose {
    Public,
    Vlan,
    Vpc,
}

/// One interface of a create request or a profile: a profile interface (reference
/// `LinodeConfigInterface`: `purpose`...) or, for an instance with Linode interfaces, a Linode
/// interface (`public`, `vpc` or `vlan`...).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfaceRequest {
    /// `public`, `vlan` or `vpc`.
    #[schema(value_type = Option<InterfacePurpose>)]
    pub purpose: Option<String>,
    /// The VLAN's label (vlan interfaces; empty or null otherwise).
    pub label: Option<String>,
    /// The instance's address on the VLAN, with prefix length (vlan interfaces).
    pub ipam_address: Option<String>,
    pub primary: Option<bool>,
    /// The subnet (vpc interfaces).
    pub subnet_id: Option<i64>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv4: Option<InterfaceIpv4Request>,
    /// Routed ranges are not offered: empty or null.
    pub ip_ranges: Option<Vec<String>>,
    /// vpc interfaces on a subnet with IPv6: the interface's SLAAC /64 and routed ranges.
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv6: Option<InterfaceIpv6Request>,
    /// Linode interfaces: a firewall the instance is assigned to.
    pub firewall_id: Option<i64>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub default_route: Option<DefaultRouteRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub public: Option<PublicRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub vpc: Option<VpcRequest>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub vlan: Option<VlanRequest>,
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub rdma_vpc: Option<serde_json::Value>,
}

impl InterfaceRequest {
    /// A profile interface names none of a Linode interface's fields.
    pub(crate) fn refuse_linode_fields(&self, p: &mut Problems) {
        let reason = "Only for Linode interfaces (interface_generation linode)";
        p.check(self.firewall_id.is_none(), "firewall_id", reason);
        p.check(self.default_route.is_none(), "default_route", reason);
        p.check(self.public.is_none(), "public", reason);
        p.check(self.vpc.is_none(), "vpc", reason);
        p.check(self.vlan.is_none(), "vlan", reason);
        p.check(self.rdma_vpc.is_none(), "rdma_vpc", "RDMA VPC interfaces are not offered");
    }

    /// It names a Linode interface's fields and none of a profile interface's.
    pub(super) fn is_linode_shaped(&self) -> bool {
        self.purpose.is_none() && (self.public.is_some() || self.vpc.is_some() || self.vlan.is_some())
    }

    /// The Linode interface this request describes (its profile-interface fields refused).
    pub(super) fn as_linode(&self, p: &mut Problems) -> LinodeParts<'_> {
        let reason = "Only for profile interfaces (interface_generation legacy_config)";
        p.check(self.purpose.is_none(), "purpose", reason);
        p.check(self.label.is_none(), "label", reason);
        p.check(self.ipam_address.is_none(), "ipam_address", reason);
        p.check(self.primary.is_none(), "primary", reason);
        p.check(self.subnet_id.is_none(), "subnet_id", reason);
        p.check(self.ipv4.is_none(), "ipv4", reason);
        p.check(self.ip_ranges.is_none(), "ip_ranges", reason);
        p.check(self.ipv6.is_none(), "ipv6", reason);
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

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfaceIpv4Request {
    /// The address in the subnet; allocated when omitted.
    pub vpc: Option<String>,
    /// `any` (the instance's public IPv4 address) or, on an existing instance, one of its public
    /// IPv4 addresses: 1:1 NAT with the VPC address.
    pub nat_1_1: Option<String>,
}

/// An interface that passed every check that does not need the database.
#[derive(Debug, Clone)]
pub(crate) struct ValidInterface {
    pub purpose: Purpose,
    pub primary: bool,
    pub vlan_label: Option<String>,
    pub ipam_address: Option<String>,
    pub subnet_id: Option<i64>,
    pub vpc_ipv4: Option<Ipv4Addr>,
    /// `ipv4.nat_1_1`: `any` (the instance's public IPv4 address) or one of its public addresses.
    pub nat: Option<Nat>,
    /// The IPv6 asked for (vpc interfaces).
    pub ipv6: Option<ValidInterfaceIpv6>,
}

fn blank(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(str::is_empty)
}

/// eth0..eth2.
pub(crate) const MAX_INTERFACES: usize = 3;

/// Checks the `interfaces` of a create request or a profile. Fields are relative to the request
/// (`interfaces[1].label`). `new_instance`: the instance does not exist yet, so a 1:1 NAT can
/// only be `any`.
pub(crate) fn check_interfaces(
    p: &mut Problems,
    region: Option<&RegionInfo>,
    list: &[InterfaceRequest],
    new_instance: bool,
) -> Vec<ValidInterface> {
    if list.len() > MAX_INTERFACES {
        p.add("interfaces", "At most 3 interfaces can be given");
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut publics = 0;
    let mut primaries = 0;
    for (i, f) in list.iter().enumerate() {
        let mut q = Problems::new();
        f.refuse_linode_fields(&mut q);
        let purpose = match f.purpose.as_deref() {
            None => {
                q.add("purpose", "Purpose is required");
                None
            }
            Some("public") => Some(Purpose::Public),
            Some("vlan") => Some(Purpose::Vlan),
            Some("vpc") => Some(Purpose::Vpc),
            Some(_) => {
                q.add("purpose", "Must be one of public, vlan, vpc");
                None
            }
        };
        let primary = f.primary.unwrap_or(false);
        primaries += usize::from(primary);
        let ipv4_given = f.ipv4.as_ref().is_some_and(|v| !blank(&v.vpc) || !blank(&v.nat_1_1));
        if purpose != Some(Purpose::Vpc) {
            q.check(f.subnet_id.is_none(), "subnet_id", "Only allowed for vpc interfaces");
            q.check(!ipv4_given, "ipv4", "Only allowed for vpc interfaces");
            q.check(f.ipv6.is_none(), "ipv6", "Only allowed for vpc interfaces");
        }
        if f.ip_ranges.as_ref().is_some_and(|r| !r.is_empty()) {
            q.add("ip_ranges", "Routed IPv4 ranges on interfaces are not supported");
        }
        let mut valid = ValidInterface {
            purpose: purpose.unwrap_or(Purpose::Public),
            primary,
            vlan_label: None,
            ipam_address: None,
            subnet_id: None,
            vpc_ipv4: None,
            nat: None,
            ipv6: None,
        };
        match purpose {
            Some(Purpose::Public) => {
                publics += 1;
                q.check(publics <= 1, "purpose", "Only one public interface is allowed");
                q.check(blank(&f.label), "label", "Must be empty or null for public interfaces");
                q.check(blank(&f.ipam_address), "ipam_address", "Must be empty or null for public interfaces");
            }
            Some(Purpose::Vlan) => {
                q.check(!primary, "primary", "A vlan interface cannot be primary");
                if region.is_some_and(|r| !r.has(capability::VLANS)) {
                    q.add("purpose", "VLANs are not available in this region");
                }
                match f.label.as_deref() {
                    None | Some("") => q.add("label", "A vlan interface needs a label"),
                    Some(l) if !(len_between(l, 1, 64) && is_hyphenated_label(l)) => q.add(
                        "label",
                        "Must be 1-64 characters: ASCII letters, digits and hyphens, without two hyphens in a row",
                    ),
                    Some(l) if out.iter().any(|o: &ValidInterface| o.vlan_label.as_deref() == Some(l)) => {
                        q.add("label", "An instance can be attached to a VLAN only once")
                    }
                    Some(l) => valid.vlan_label = Some(l.to_string()),
                }
                if let Some(a) = f.ipam_address.as_deref().filter(|a| !a.is_empty()) {
                    match a.parse::<Ipv4Net>() {
                        Err(_) => {
                            q.add("ipam_address", "Must be an IPv4 address with prefix length, such as 10.0.0.1/24")
                        }
                        Ok(_) if out.iter().any(|o| o.ipam_address.as_deref() == Some(a)) => {
                            q.add("ipam_address", "Must be unique among the instance's interfaces")
                        }
                        Ok(n) => valid.ipam_address = Some(n.to_string()),
                    }
                }
            }
            Some(Purpose::Vpc) => {
                if region.is_some_and(|r| !r.has(capability::VPCS)) {
                    q.add("purpose", "VPCs are not available in this region");
                }
                q.check(blank(&f.label), "label", "Must be empty or null for vpc interfaces");
                q.check(blank(&f.ipam_address), "ipam_address", "Must be empty or null for vpc interfaces");
                match f.subnet_id {
                    None => q.add("subnet_id", "A vpc interface needs a subnet_id"),
                    Some(s) => valid.subnet_id = Some(s),
                }
                if let Some(v4) = &f.ipv4 {
                    if let Some(a) = v4.vpc.as_deref().filter(|a| !a.is_empty()) {
                        match a.parse::<Ipv4Addr>() {
                            Ok(a) => valid.vpc_ipv4 = Some(a),
                            Err(_) => q.add("ipv4.vpc", "Must be an IPv4 address"),
                        }
                    }
                    valid.nat = check_nat(&mut q, v4.nat_1_1.as_deref(), new_instance);
                }
                valid.ipv6 = f.ipv6.as_ref().map(|r| check_interface_ipv6(&mut q, r));
            }
            None => {}
        }
        out.push(valid);
        p.extend_prefixed(&format!("interfaces[{i}]"), q);
    }
    if primaries > 1 {
        p.add("interfaces", "At most one interface can be primary");
    }
    out
}

/// The addresses of a subnet an interface may get: not the first two (network, gateway) nor the
/// last two (the reference's rule).
pub(crate) fn assignable(subnet_first: u32, subnet_last: u32) -> (u32, u32) {
    (subnet_first + 2, subnet_last.saturating_sub(2))
}

impl App {
    /// Restricted users need read_write on the VPC of every subnet they attach to. A subnet that
    /// does not exist (or that the user may not see) is a 400 on its field.
    pub(crate) async fn check_interface_access(&self, actor: &Actor, list: &[ValidInterface]) -> Result<()> {
        let ids: Vec<i64> = list.iter().filter_map(|f| f.subnet_id).collect();
        let subnets: Vec<_> =
            self.store.subnets_by_ids(&ids).await?.into_iter().filter(|s| s.account_id == actor.account_id()).collect();
        let mut p = Problems::new();
        for (i, f) in list.iter().enumerate() {
            let Some(sid) = f.subnet_id else { continue };
            let field = format!("interfaces[{i}].subnet_id");
            let Some(s) = subnets.iter().find(|s| s.id == sid) else {
                p.add(field, "Subnet not found");
                continue;
            };
            match self.require_permission(actor, GrantKind::Vpc, s.vpc_id, Permission::ReadWrite).await {
                Ok(()) => {}
                Err(Error::NotFound) => p.add(field, "Subnet not found"),
                Err(e) => return Err(e),
            }
        }
        p.finish()
    }
}

/// Where new profile interfaces go: the instance, its region and account, the profile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub account_id: i64,
    pub instance_id: i64,
    pub region: &'a str,
    pub config_id: Option<i64>,
}

/// Creates interfaces of a profile inside its transaction, after the instance's other
/// interfaces; `first` is the index of the first one in the request (for the fields of errors).
/// A 1:1 NAT must be one of the instance's public IPv4 addresses (`any`: the first), used by no
/// other interface.
pub(crate) async fn create_interfaces(
    tx: &mut Tx<'_>,
    t: Target<'_>,
    first: usize,
    list: &[ValidInterface],
) -> Result<Vec<nubis_store::interfaces::InterfaceRow>> {
    let now = Timestamp::now();
    let (account_id, instance_id, region) = (t.account_id, t.instance_id, t.region);
    let mut vlans = tx.vlan_labels(account_id, region).await?;
    let mut position = tx.interface_next_position(instance_id).await?;
    let mut out = Vec::new();
    for (k, f) in list.iter().enumerate() {
        let i = first + k;
        let nat = match &f.nat {
            None => None,
            Some(n) => Some(nat_address(tx, instance_id, n, &format!("interfaces[{i}].ipv4.nat_1_1")).await?),
        };
        let mut new = NewInterface {
            instance_id,
            account_id,
            region,
            config_id: t.config_id,
            position,
            purpose: f.purpose.name(),
            primary: f.primary,
            label: f.vlan_label.as_deref(),
            ipam_address: f.ipam_address.as_deref(),
            vpc_id: None,
            subnet_id: None,
            vpc_ipv4: None,
            nat_1_1: nat.as_deref(),
            default_ipv4: false,
            default_ipv6: false,
            vpc_ipv6: None,
            created: now,
        };
        position += 1;
        if let Some(label) = &f.vlan_label
            && !vlans.contains(label)
        {
            if vlans.len() >= MAX_VLANS_PER_REGION {
                return Err(Error::invalid(
                    format!("interfaces[{i}].label"),
                    format!("At most {MAX_VLANS_PER_REGION} VLANs can exist in a region"),
                ));
            }
            vlans.push(label.clone());
        }
        let mut explicit = false;
        if let Some(sid) = f.subnet_id {
            let field = format!("interfaces[{i}].subnet_id");
            let s = tx
                .subnet_lock(None, sid, account_id)
                .await?
                .ok_or_else(|| Error::invalid(&field, "Subnet not found"))?;
            let v =
                tx.vpc_lock(s.vpc_id, account_id).await?.ok_or_else(|| Error::invalid(&field, "Subnet not found"))?;
            if v.region != region {
                return Err(Error::invalid(
                    field,
                    format!("The subnet's VPC is in region {}, the instance in {region}", v.region),
                ));
            }
            let (lo, hi) = assignable(s.first_v4, s.last_v4);
            let address = match f.vpc_ipv4 {
                Some(a) => {
                    let n = u32::from(a);
                    if !(lo..=hi).contains(&n) {
                        return Err(Error::invalid(
                            format!("interfaces[{i}].ipv4.vpc"),
                            format!(
                                "Must be inside the subnet {} and not one of its first two or last two addresses",
                                s.ipv4
                            ),
                        ));
                    }
                    explicit = true;
                    n
                }
                None => {
                    let used = tx.subnet_used_addresses(sid).await?;
                    (lo..=hi).find(|n| !used.contains(n)).ok_or_else(|| {
                        Error::invalid(&field, format!("No address is left in subnet '{}' ({})", s.label, s.ipv4))
                    })?
                }
            };
            new.vpc_id = Some(s.vpc_id);
            new.subnet_id = Some(sid);
            new.vpc_ipv4 = Some((Ipv4Addr::from(address).to_string(), address));
            if let Some(v6) = &f.ipv6 {
                let field = format!("interfaces[{i}].ipv6");
                new.vpc_ipv6 = Some(allocate_interface_ipv6(tx, sid, s.ipv6_range.as_deref(), v6, &field).await?);
            }
        }
        match tx.interface_insert(&new).await {
            Ok(row) if new.vpc_ipv6.is_some() => {
                // The SLAAC address is the EUI-64 of the interface's MAC, known with its id.
                let range = new.vpc_ipv6.as_ref().map(|v| v.slaac_range.clone()).unwrap_or_default();
                let address = interface_slaac_address(row.id, &range)
                    .ok_or_else(|| Error::internal("a SLAAC range that is not a /64"))?;
                out.push(tx.interface_set_vpc_ipv6_address(row.id, &address).await?);
            }
            Ok(row) => out.push(row),
            Err(Error::Unique(_)) if explicit => {
                return Err(Error::invalid(
                    format!("interfaces[{i}].ipv4.vpc"),
                    "This address is already in use in the subnet",
                ));
            }
            // An address picked automatically was taken concurrently: pick again.
            Err(Error::Unique(_)) => return Err(Error::Retry),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The public IPv4 address a 1:1 NAT uses, read inside the transaction: `any` is the instance's
/// first public IPv4 address; a given one must be one of its public IPv4 addresses and not the
/// NAT of another interface.
pub(crate) async fn nat_address(tx: &mut Tx<'_>, instance_id: i64, nat: &Nat, field: &str) -> Result<String> {
    use nubis_store::ips::IpKind;
    let mut public: Vec<_> =
        tx.ips_of_instance(instance_id).await?.into_iter().filter(|a| a.kind == IpKind::Ipv4 && a.public).collect();
    public.sort_by_key(|a| a.id);
    let address = match nat {
        Nat::Any => public
            .first()
            .map(|a| a.address.clone())
            .ok_or_else(|| Error::invalid(field, "The instance has no public IPv4 address for a 1:1 NAT"))?,
        Nat::Address(a) => {
            if !public.iter().any(|p| &p.address == a) {
                return Err(Error::invalid(field, "Must be one of the instance's public IPv4 addresses, or \"any\""));
            }
            a.clone()
        }
    };
    if !tx.shares_of_address(&address).await?.is_empty() {
        return Err(Error::invalid(
            field,
            format!("{address} is shared with another instance: it cannot be a 1:1 NAT"),
        ));
    }
    if tx.interface_with_nat(&address).await?.is_some() {
        return Err(Error::invalid(field, format!("{address} is already the 1:1 NAT of another interface")));
    }
    Ok(address)
}
