//! Assigning IPv4 addresses and IPv6 ranges to instances (both assign operations of spec 4.10):
//! one region for all; read_write on every address and instance involved; all or nothing, and
//! afterwards every involved instance has at least one public IPv4 address, at most one private
//! one and at most one IPv6 range. The whole check runs on the state inside the write
//! transaction after the moves, so concurrent assigns cannot break it.

use std::collections::BTreeSet;

use ipnet::Ipv6Net;
use nubis_ipam::parse_ipv6_range;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::Status;
use nubis_model::{Error, FieldError, Problems, Result};
use nubis_store::Tx;
use nubis_store::ips::IpKind;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};

/// `POST /v4/networking/ips/assign` and `POST /v4/networking/ipv4/assign`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct IpAssign {
    /// The region of every address and instance involved.
    #[schema(required = true, value_type = String)]
    pub region: Option<String>,
    /// At least one.
    #[schema(required = true, schema_with = assignments_schema)]
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub assignments: Option<Vec<Assignment>>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct Assignment {
    /// An IPv4 address, or an IPv6 range with its prefix length (`/56` or `/64`).
    #[schema(required = true, value_type = String)]
    pub address: Option<String>,
    /// The instance that gets the address.
    #[schema(required = true, value_type = i64)]
    pub instance_id: Option<i64>,
    /// Optional; when given, it must be the request's region.
    pub region: Option<String>,
}

/// What one assignment moves.
#[derive(Debug, Clone)]
enum Moved {
    V4(String),
    Range(Ipv6Net),
}

impl Moved {
    /// The text that names it in `ip_addresses` or `ipv6_ranges` (and in shares).
    fn key(&self) -> String {
        match self {
            Moved::V4(a) => a.clone(),
            Moved::Range(n) => n.network().to_string(),
        }
    }
}

struct Valid {
    region: String,
    items: Vec<(Moved, i64)>,
}

fn field(i: usize, f: &str) -> String {
    format!("assignments[{i}].{f}")
}

fn check(app: &App, input: &IpAssign) -> Result<Valid> {
    let mut p = Problems::new();
    let list = input.assignments.as_deref().unwrap_or_default();
    if list.is_empty() {
        p.add("assignments", "At least one assignment is required");
    }
    let region = input.region.clone().or_else(|| list.iter().find_map(|a| a.region.clone()));
    match &region {
        None => p.add("region", "Region is required"),
        Some(r) => p.check(app.catalog.region(r).is_some(), "region", "region is not valid"),
    }
    let mut items = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, a) in list.iter().enumerate() {
        if let (Some(r), Some(want)) = (&a.region, &region)
            && r != want
        {
            p.add(field(i, "region"), "Every address and instance must be in the same region");
        }
        let moved = match a.address.as_deref() {
            None => {
                p.add(field(i, "address"), "Address is required");
                None
            }
            Some(s) if s.contains(':') => match parse_ipv6_range(s) {
                Ok(n) => Some(Moved::Range(n)),
                Err(e) => {
                    p.add(field(i, "address"), e.to_string());
                    None
                }
            },
            Some(s) => match s.parse::<std::net::Ipv4Addr>() {
                Ok(v4) => Some(Moved::V4(v4.to_string())),
                Err(_) => {
                    p.add(field(i, "address"), "Must be an IPv4 address or an IPv6 range such as 2001:db8::/64");
                    None
                }
            },
        };
        if a.instance_id.is_none() {
            p.add(field(i, "instance_id"), "instance_id is required");
        }
        if let Some(m) = &moved
            && !seen.insert(m.key())
        {
            p.add(field(i, "address"), "The same address is assigned twice");
        }
        if let (Some(m), Some(id)) = (moved, a.instance_id) {
            items.push((m, id));
        }
    }
    p.finish()?;
    Ok(Valid { region: region.unwrap_or_default(), items })
}

impl App {
    /// Both assign operations; `op` is the one called (`ip_assign` also refuses shared addresses).
    pub async fn ip_assign(&self, actor: &Actor, op: Op, input: IpAssign) -> Result<()> {
        self.authorize(actor, op).await?;
        let v = check(self, &input)?;
        self.assign_access(actor, &v).await?;
        let v = &v;
        self.write(|tx| {
            Box::pin(async move {
                assign_in_tx(tx, actor.account_id(), op, v).await?;
                Ok(())
            })
        })
        .await
    }

    /// Restricted users need read_write on every instance involved: the targets and the
    /// instances the addresses belong to now. What they cannot see is "not found" (400 on its
    /// field); read_only is 403.
    async fn assign_access(&self, actor: &Actor, v: &Valid) -> Result<()> {
        // Read by key: the addresses and instances named, and the account's ranges (one a
        // region at most).
        let account = actor.account_id();
        let v4: Vec<String> =
            v.items.iter().filter_map(|(m, _)| if let Moved::V4(a) = m { Some(a.clone()) } else { None }).collect();
        let ips = self.store.ips_by_addresses(account, &v4).await?;
        let ranges = self.store.ranges_of_account(account).await?;
        let mut p = Problems::new();
        for (i, (m, target)) in v.items.iter().enumerate() {
            let owner = match m {
                Moved::V4(a) => ips.iter().find(|x| &x.address == a).map(|x| x.instance_id),
                Moved::Range(n) => ranges
                    .iter()
                    .find(|r| r.range_start == n.network().to_string() && r.prefix == n.prefix_len())
                    .map(|r| r.instance_id),
            };
            for (id, f, what) in [(owner, "address", "Address"), (Some(*target), "instance_id", "Instance")] {
                let known = match id {
                    Some(id) => self.store.instance_get(account, id).await?.map(|x| x.id),
                    None => None,
                };
                match known {
                    None => p.add(field(i, f), format!("{what} not found")),
                    Some(id) => {
                        match self.require_permission(actor, GrantKind::Instance, id, Permission::ReadWrite).await {
                            Ok(()) => {}
                            Err(Error::NotFound) => p.add(field(i, f), format!("{what} not found")),
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        }
        p.finish()
    }
}

async fn assign_in_tx(tx: &mut Tx<'_>, account_id: i64, op: Op, v: &Valid) -> Result<()> {
    let ranges = tx.ranges_of_account_tx(account_id).await?;
    // Who has each address now.
    let mut owners = Vec::new();
    for (i, (m, _)) in v.items.iter().enumerate() {
        let (owner, region) = match m {
            Moved::V4(a) => {
                let ip = tx.ip_get(account_id, a).await?.filter(|ip| ip.kind == IpKind::Ipv4);
                let ip = ip.ok_or_else(|| Error::invalid(field(i, "address"), "Address not found"))?;
                (ip.instance_id, ip.region)
            }
            Moved::Range(n) => {
                let r = ranges
                    .iter()
                    .find(|r| r.range_start == n.network().to_string() && r.prefix == n.prefix_len())
                    .ok_or_else(|| Error::invalid(field(i, "address"), "IPv6 range not found"))?;
                (r.instance_id, r.region.clone())
            }
        };
        if region != v.region {
            return Err(Error::invalid(
                field(i, "address"),
                format!("The address is in region {region}, not {}", v.region),
            ));
        }
        owners.push(owner);
    }
    // Lock every instance involved, in id order.
    let involved: BTreeSet<i64> = owners.iter().copied().chain(v.items.iter().map(|(_, t)| *t)).collect();
    let ids: Vec<i64> = involved.iter().copied().collect();
    let instances = tx.instances_by_ids(account_id, &ids).await?;
    for (i, (m, target)) in v.items.iter().enumerate() {
        let t = instances
            .iter()
            .find(|x| x.id == *target)
            .ok_or_else(|| Error::invalid(field(i, "instance_id"), "Instance not found"))?;
        if t.region != v.region {
            return Err(Error::invalid(
                field(i, "instance_id"),
                format!("The instance is in region {}, not {}", t.region, v.region),
            ));
        }
        let key = m.key();
        if op == Op::IpAssign && !tx.shares_of_address(&key).await?.is_empty() {
            return Err(Error::invalid(field(i, "address"), "Shared addresses cannot be assigned to another instance"));
        }
        let owner = owners[i];
        match m {
            Moved::V4(a) => {
                if owner != *target && tx.interface_with_nat(a).await?.is_some() {
                    let powered = instances
                        .iter()
                        .find(|x| x.id == owner)
                        .is_some_and(|x| Status::parse(&x.status).is_some_and(Status::is_powered));
                    if powered {
                        return Err(Error::invalid(
                            field(i, "address"),
                            "The address is in active 1:1 NAT with a VPC interface and cannot move to another instance",
                        ));
                    }
                    tx.interface_clear_nat(a).await?;
                }
                let ip = tx.ip_get(account_id, a).await?.ok_or(Error::NotFound)?;
                tx.ip_set_instance(ip.id, *target).await?;
            }
            Moved::Range(n) => {
                let r = ranges
                    .iter()
                    .find(|r| r.range_start == n.network().to_string())
                    .ok_or_else(|| Error::invalid(field(i, "address"), "IPv6 range not found"))?;
                let slaac = tx
                    .ips_of_instance(*target)
                    .await?
                    .into_iter()
                    .find(|x| x.kind == IpKind::Slaac)
                    .ok_or_else(|| Error::invalid(field(i, "instance_id"), "The instance has no SLAAC address"))?;
                tx.range_set_target(r.id, *target, &slaac.address).await.map_err(|e| match e {
                    Error::Unique(_) => {
                        Error::invalid(field(i, "instance_id"), "An instance can have at most one IPv6 range")
                    }
                    e => e,
                })?;
            }
        }
        tx.share_remove(*target, &key).await?;
    }
    // The invariants, on the state after every move.
    let ranges = tx.ranges_of_account_tx(account_id).await?;
    let mut broken = Vec::new();
    for inst in &instances {
        let ips = tx.ips_of_instance(inst.id).await?;
        let public = ips.iter().filter(|x| x.kind == IpKind::Ipv4 && x.public).count();
        let private = ips.iter().filter(|x| x.kind == IpKind::Ipv4 && !x.public).count();
        let routed = ranges.iter().filter(|r| r.instance_id == inst.id).count();
        let name = format!("Instance '{}' ({})", inst.label, inst.id);
        if public < 1 {
            broken.push(FieldError::general(format!("{name} would be left without a public IPv4 address")));
        }
        if private > 1 {
            broken.push(FieldError::general(format!("{name} would have more than one private IPv4 address")));
        }
        if routed > 1 {
            broken.push(FieldError::general(format!("{name} would have more than one IPv6 range")));
        }
    }
    if broken.is_empty() { Ok(()) } else { Err(Error::Invalid(broken)) }
}

fn assignments_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(serde_json::json!({
        "type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/Assignment"}
    }))
}
