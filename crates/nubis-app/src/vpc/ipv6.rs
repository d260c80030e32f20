//! VPC IPv6: a VPC's /52 is carved from its region's IPv6 range block by the same allocator the
//! /56 and /64 ranges use (one taken set: the region's SLAAC pool, every routed range and every
//! VPC range of the region), a subnet's range from its VPC's, and a VPC interface's /64 SLAAC
//! range (and routed ranges) from its subnet's. The interfaces with IPv6 are listed by
//! `/v4/vpcs/ipv6s` and `/v4/vpcs/{id}/ipv6s`.

use std::collections::BTreeSet;
use std::net::Ipv6Addr;
use std::ops::RangeInclusive;

use ipnet::Ipv6Net;
use nubis_ipam::{MacAddr, first_free_range, slaac_address};
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::vpc::{InterfaceIpv6, InterfaceSlaac, Ipv6RangeEntry, VpcDefaultRanges, VpcIpv6, VpcSlaac};
use nubis_model::{Error, Problems, Result};
use nubis_store::Tx;
use nubis_store::interfaces::{InterfaceRow, VpcIpv6Row};
use nubis_store::vpcs::{VpcInterface, VpcRow};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::catalog::RegionInfo;

/// The prefix lengths a VPC's range may have (`/v4/regions/vpc-availability` says the same).
pub(crate) const VPC_PREFIX: u8 = 52;
/// The prefix lengths a subnet's range may have, and the one `auto` gives.
const SUBNET_PREFIXES: RangeInclusive<u8> = 52..=62;
const SUBNET_AUTO: u8 = 56;
/// A VPC interface's SLAAC range; routed ranges are /56../64 of the subnet.
const SLAAC_PREFIX: u8 = 64;
const INTERFACE_RANGES: RangeInclusive<u8> = 56..=64;

/// One entry of the `ipv6` of a VPC or subnet create request.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct Ipv6RangeRequest {
    /// `auto` (the default), a prefix length (`/52` for a VPC; `/52`..`/62` for a subnet, which
    /// `auto` makes `/56`), or a range in CIDR form (a VPC's in its region's IPv6 block, a
    /// subnet's inside its VPC's), not overlapping another.
    pub range: Option<String>,
    /// Not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub allocation_range: Option<serde_json::Value>,
}

/// The `ipv6` of a VPC interface in a request.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfaceIpv6Request {
    /// At most one: `{"range": "auto"}` (the default), `/64`, or a /64 of the subnet.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub slaac: Option<Vec<Ipv6RangeRequest>>,
    /// Routed ranges of the subnet: `/56`..`/64` or a range in CIDR form inside the subnet's.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub ranges: Option<Vec<Ipv6RangeRequest>>,
    pub is_public: Option<bool>,
}

/// What a request asks for: a range of some length picked by nubis, or one given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RangeAsk {
    Auto(u8),
    Exact(Ipv6Net),
}

/// A VPC interface's IPv6 request that passed its checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidInterfaceIpv6 {
    pub slaac: RangeAsk,
    pub ranges: Vec<RangeAsk>,
    pub is_public: bool,
}

impl ValidInterfaceIpv6 {
    /// The IPv6 of an interface made from `v`'s: the same ranges (`keep`: an upgrade, after
    /// the old interface is gone) or ranges of the same sizes (a copy, next to the original).
    pub(crate) fn from_row(v: &VpcIpv6Row, keep: bool) -> ValidInterfaceIpv6 {
        let ask = |r: &str| match r.parse::<Ipv6Net>() {
            Ok(n) if keep => RangeAsk::Exact(n),
            Ok(n) => RangeAsk::Auto(n.prefix_len()),
            Err(_) => RangeAsk::Auto(SLAAC_PREFIX),
        };
        ValidInterfaceIpv6 {
            slaac: ask(&v.slaac_range),
            ranges: v.ranges.iter().map(|r| ask(r)).collect(),
            is_public: v.is_public,
        }
    }
}

/// Checks one `range` (`field` names it): `auto` or absent is `Auto(auto)`, `/N` with N in
/// `lens` is `Auto(N)`, a canonical CIDR with its length in `lens` is `Exact`.
fn check_range(p: &mut Problems, field: &str, range: Option<&str>, auto: u8, lens: &RangeInclusive<u8>) -> RangeAsk {
    let allowed = if lens.start() == lens.end() {
        format!("/{}", lens.start())
    } else {
        format!("/{} to /{}", lens.start(), lens.end())
    };
    let bad = |p: &mut Problems, why: &str| {
        p.add(field, format!("{why}: must be \"auto\", a prefix length ({allowed}) or an IPv6 range in CIDR form"));
        RangeAsk::Auto(auto)
    };
    match range {
        None | Some("auto") => RangeAsk::Auto(auto),
        Some(r) if r.starts_with('/') => match r[1..].parse::<u8>() {
            Ok(n) if lens.contains(&n) => RangeAsk::Auto(n),
            _ => bad(p, &format!("Prefix length {r} is not offered")),
        },
        Some(r) => match r.parse::<Ipv6Net>() {
            Err(_) => bad(p, "Not an IPv6 range"),
            Ok(n) if !lens.contains(&n.prefix_len()) => {
                bad(p, &format!("Prefix length /{} is not offered", n.prefix_len()))
            }
            Ok(n) if n.trunc() != n => {
                p.add(field, format!("Must be the first address of the range ({})", n.trunc()));
                RangeAsk::Auto(auto)
            }
            Ok(n) => RangeAsk::Exact(n),
        },
    }
}

/// Checks the `ipv6` list of a VPC (`vpc: true`) or subnet create request: at most one entry.
/// Fields are relative to the request (`ipv6[0].range`).
pub(crate) fn check_ipv6_list(p: &mut Problems, list: Option<&[Ipv6RangeRequest]>, vpc: bool) -> Option<RangeAsk> {
    let list = list?;
    if list.len() > 1 {
        p.add("ipv6", "At most one IPv6 range can be given");
        return None;
    }
    let e = list.first()?;
    p.check(e.allocation_range.is_none(), "ipv6[0].allocation_range", "allocation_range is not offered: only null");
    Some(if vpc {
        check_range(p, "ipv6[0].range", e.range.as_deref(), VPC_PREFIX, &(VPC_PREFIX..=VPC_PREFIX))
    } else {
        check_range(p, "ipv6[0].range", e.range.as_deref(), SUBNET_AUTO, &SUBNET_PREFIXES)
    })
}

/// Checks a VPC interface's `ipv6` (fields relative to the interface: `ipv6.slaac[0].range`).
pub(crate) fn check_interface_ipv6(p: &mut Problems, r: &InterfaceIpv6Request) -> ValidInterfaceIpv6 {
    let slaac = r.slaac.as_deref().unwrap_or_default();
    p.check(slaac.len() <= 1, "ipv6.slaac", "At most one SLAAC range per VPC interface");
    let lens = SLAAC_PREFIX..=SLAAC_PREFIX;
    let slaac = match slaac.first() {
        None => RangeAsk::Auto(SLAAC_PREFIX),
        Some(e) => {
            p.check(e.allocation_range.is_none(), "ipv6.slaac[0].allocation_range", "Not offered: only null");
            check_range(p, "ipv6.slaac[0].range", e.range.as_deref(), SLAAC_PREFIX, &lens)
        }
    };
    let mut ranges = Vec::new();
    for (i, e) in r.ranges.iter().flatten().enumerate() {
        p.check(e.allocation_range.is_none(), format!("ipv6.ranges[{i}].allocation_range"), "Not offered: only null");
        let field = format!("ipv6.ranges[{i}].range");
        if e.range.is_none() {
            p.add(field, "A range is required");
            continue;
        }
        ranges.push(check_range(p, &field, e.range.as_deref(), SLAAC_PREFIX, &INTERFACE_RANGES));
    }
    ValidInterfaceIpv6 { slaac, ranges, is_public: r.is_public.unwrap_or(false) }
}

/// Parses stored ranges; a row that does not parse is skipped (it cannot overlap anything).
fn nets<'a>(ranges: impl IntoIterator<Item = &'a str>) -> Vec<Ipv6Net> {
    ranges.into_iter().filter_map(|r| r.parse::<Ipv6Net>().ok()).collect()
}

/// A range inside `block` for `ask`, overlapping none of `taken`: `Auto` picks the first free
/// aligned one; `Exact` must lie inside `block` and be free. Refusals name `field`.
pub(crate) fn pick(block: Ipv6Net, ask: RangeAsk, taken: &[Ipv6Net], field: &str, what: &str) -> Result<Ipv6Net> {
    match ask {
        RangeAsk::Auto(len) => {
            let set: BTreeSet<(u128, u8)> = taken.iter().map(|t| (u128::from(t.network()), t.prefix_len())).collect();
            first_free_range(block, len, &set)
                .ok_or_else(|| Error::invalid(field, format!("No /{len} range is left in {what} ({block})")))
        }
        RangeAsk::Exact(n) => {
            if !block.contains(&n) {
                return Err(Error::invalid(field, format!("Must be inside {what} ({block})")));
            }
            if let Some(t) = taken.iter().find(|t| t.contains(&n) || n.contains(*t)) {
                return Err(Error::invalid(field, format!("Overlaps {t}, which is already in use")));
            }
            Ok(n)
        }
    }
}

/// Everything of a region's IPv6 range block already handed out, read inside the transaction:
/// its SLAAC pool, the routed ranges and the VPC ranges. The routed-range allocator uses it too.
pub(crate) async fn region_taken(tx: &mut Tx<'_>, region: &RegionInfo) -> Result<Vec<Ipv6Net>> {
    let id = &region.view.id;
    let mut taken = vec![region.ipv6_pool];
    for r in tx.ranges_in_region(id).await? {
        if let Ok(a) = r.range_start.parse::<Ipv6Addr>()
            && let Ok(n) = Ipv6Net::new(a, r.prefix)
        {
            taken.push(n);
        }
    }
    let vpcs = tx.vpc_ipv6_ranges_in_region(id).await?;
    taken.extend(nets(vpcs.iter().map(String::as_str)));
    Ok(taken)
}

/// A VPC's range for `ask` in the region's block.
pub(crate) async fn allocate_vpc_range(
    tx: &mut Tx<'_>,
    region: &RegionInfo,
    ask: RangeAsk,
    field: &str,
) -> Result<Ipv6Net> {
    let taken = region_taken(tx, region).await?;
    pick(region.ipv6_ranges, ask, &taken, field, &format!("the IPv6 block of region {}", region.view.id))
}

/// A subnet's range for `ask` inside its VPC's; `others`: the ranges of the VPC's other subnets.
pub(crate) fn subnet_range<'a>(
    vpc: &VpcRow,
    ask: RangeAsk,
    others: impl IntoIterator<Item = &'a str>,
    field: &str,
) -> Result<Ipv6Net> {
    let block =
        vpc.ipv6_range.as_deref().and_then(|r| r.parse::<Ipv6Net>().ok()).ok_or_else(|| {
            Error::invalid(field, "The VPC has no IPv6 range: create it with ipv6 to give subnets IPv6")
        })?;
    pick(block, ask, &nets(others), field, "the VPC's IPv6 range")
}

/// The IPv6 of a new VPC interface on a subnet whose range is `subnet_range` (None: the subnet
/// has none, refused), read and picked inside the transaction. The SLAAC address is filled in
/// once the interface has its id (see [`interface_slaac_address`]). `field`: the interface's
/// `ipv6`.
pub(crate) async fn allocate_interface_ipv6(
    tx: &mut Tx<'_>,
    subnet_id: i64,
    subnet_range: Option<&str>,
    v: &ValidInterfaceIpv6,
    field: &str,
) -> Result<VpcIpv6Row> {
    let block = subnet_range.and_then(|r| r.parse::<Ipv6Net>().ok()).ok_or_else(|| {
        Error::invalid(field, "The subnet has no IPv6 range: IPv6 is only for interfaces on subnets with IPv6")
    })?;
    let mut taken = nets(tx.subnet_used_ipv6(subnet_id).await?.iter().map(String::as_str));
    let slaac = pick(block, v.slaac, &taken, &format!("{field}.slaac[0].range"), "the subnet's IPv6 range")?;
    taken.push(slaac);
    let mut ranges = Vec::new();
    for (i, ask) in v.ranges.iter().enumerate() {
        let r = pick(block, *ask, &taken, &format!("{field}.ranges[{i}].range"), "the subnet's IPv6 range")?;
        taken.push(r);
        ranges.push(r.to_string());
    }
    Ok(VpcIpv6Row { slaac_range: slaac.to_string(), slaac_address: String::new(), ranges, is_public: v.is_public })
}

/// The SLAAC address of a VPC interface in its /64: the EUI-64 of the interface's MAC address
/// (the one a Linode interface shows).
pub(crate) fn interface_slaac_address(interface_id: i64, slaac_range: &str) -> Option<String> {
    let net = slaac_range.parse::<Ipv6Net>().ok()?;
    slaac_address(net, MacAddr::from_seed((1u64 << 40) | interface_id as u64)).map(|a| a.to_string())
}

/// The `ipv6` of a VPC interface's record.
pub(crate) fn interface_ipv6_view(f: &InterfaceRow) -> Option<InterfaceIpv6> {
    let v = f.vpc_ipv6.as_ref()?;
    Some(InterfaceIpv6 {
        slaac: vec![InterfaceSlaac { range: v.slaac_range.clone(), address: v.slaac_address.clone() }],
        ranges: v.ranges.iter().map(|r| Ipv6RangeEntry { range: r.clone() }).collect(),
        is_public: v.is_public,
    })
}

/// The default IPv4 ranges of VPCs (RFC 1918 without the private pool) and the one no subnet
/// may overlap (the instances' private addresses).
pub(crate) fn default_ranges() -> VpcDefaultRanges {
    VpcDefaultRanges {
        default_ipv4_ranges: vec!["10.0.0.0/8".into(), "172.16.0.0/12".into(), "192.168.0.0/17".into()],
        forbidden_ipv4_ranges: vec![nubis_ipam::PRIVATE_POOL.to_string()],
    }
}

fn ipv6_record(f: &VpcInterface, vpc_id: i64) -> Option<VpcIpv6> {
    let i = &f.interface;
    let v = i.vpc_ipv6.as_ref()?;
    Some(VpcIpv6 {
        active: f.active,
        config_id: i.config_id,
        interface_id: i.id,
        instance_id: i.instance_id,
        ipv6_range: v.slaac_range.clone(),
        ipv6_is_public: Some(v.is_public),
        ipv6_addresses: vec![VpcSlaac { slaac_address: v.slaac_address.clone() }],
        region: i.region.clone(),
        subnet_id: i.subnet_id.unwrap_or_default(),
        vpc_id,
    })
}

impl App {
    /// `GET /v4/vpcs/default-ranges`.
    pub async fn vpc_default_ranges(&self, actor: &Actor) -> Result<VpcDefaultRanges> {
        self.authorize(actor, Op::VpcDefaultRanges).await?;
        Ok(default_ranges())
    }

    /// `GET /v4/vpcs/ipv6s`: the IPv6 of every VPC interface of the VPCs the actor may see.
    pub async fn vpc_ipv6s_list_all(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<VpcIpv6>> {
        self.authorize(actor, Op::VpcIpv6sListAll).await?;
        self.vpc_ipv6s_page(actor, None, filter, page).await
    }

    /// `GET /v4/vpcs/{vpc_id}/ipv6s`.
    pub async fn vpc_ipv6s_list(
        &self,
        actor: &Actor,
        vpc_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIpv6>> {
        self.lookup_for::<VpcRow>(actor, Op::VpcIpv6sList, vpc_id).await?;
        self.vpc_ipv6s_page(actor, Some(vpc_id), filter, page).await
    }

    async fn vpc_ipv6s_page(
        &self,
        actor: &Actor,
        vpc_id: Option<i64>,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIpv6>> {
        let (rows, results) = self
            .store
            .vpc_ipv6s_page(actor.account_id(), vpc_id, Self::grant_user(actor), filter, page.page, page.page_size)
            .await?;
        let items = rows.iter().filter_map(|f| ipv6_record(f, f.interface.vpc_id.unwrap_or_default())).collect();
        Ok(Page::new(items, page, results))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(range: &str, vpc: bool) -> (Vec<String>, Option<RangeAsk>) {
        let mut p = Problems::new();
        let list = [Ipv6RangeRequest { range: Some(range.into()), allocation_range: None }];
        let a = check_ipv6_list(&mut p, Some(&list), vpc);
        let fields = match p.finish() {
            Err(Error::Invalid(v)) => v.into_iter().map(|f| f.field.unwrap_or_default()).collect(),
            _ => Vec::new(),
        };
        (fields, a)
    }

    #[test]
    fn range_requests() {
        assert_eq!(ask("auto", true).1, Some(RangeAsk::Auto(52)));
        assert_eq!(ask("/52", true).1, Some(RangeAsk::Auto(52)));
        assert_eq!(ask("/56", true).0, ["ipv6[0].range"]);
        assert_eq!(ask("auto", false).1, Some(RangeAsk::Auto(56)));
        assert_eq!(ask("/60", false).1, Some(RangeAsk::Auto(60)));
        assert_eq!(ask("/63", false).0, ["ipv6[0].range"]);
        assert_eq!(ask("2001:db8:100::1/56", false).0, ["ipv6[0].range"]);
        assert_eq!(ask("nonsense", false).0, ["ipv6[0].range"]);
    }

    #[test]
    fn picking_skips_taken_and_refuses_overlaps() {
        let block: Ipv6Net = "2001:db8:100::/40".parse().unwrap();
        let first: Ipv6Net = "2001:db8:100::/52".parse().unwrap();
        let got = pick(block, RangeAsk::Auto(52), &[first], "f", "b").unwrap();
        assert_eq!(got.to_string(), "2001:db8:100:1000::/52");
        let inner: Ipv6Net = "2001:db8:100:100::/56".parse().unwrap();
        assert!(pick(block, RangeAsk::Exact(first), &[inner], "f", "b").is_err());
        let outside: Ipv6Net = "2001:db8:200::/52".parse().unwrap();
        assert!(pick(block, RangeAsk::Exact(outside), &[], "f", "b").is_err());
    }
}
