//! IPv6 pools and ranges (spec 2.10, 4.10): a region's SLAAC pool is routed to every instance in
//! it; a range (/56 or /64, carved from the region's range block) is routed to one instance's
//! SLAAC address. An account has at most one range per region and an instance at most one
//! range targeting it (both are database constraints).

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use nubis_ipam::first_free_range;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::ip::{Ipv6Pool, Ipv6Range, Ipv6RangeCreated, Ipv6RangeView};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::ips::IpKind;
use nubis_store::ranges::{NewRange, RangeRow};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::ip::AddressBook;

/// `POST /v4/networking/ipv6/ranges`: exactly one of `instance_id` and `route_target`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct Ipv6RangeCreate {
    /// 56 or 64.
    #[schema(required = true, schema_with = prefix_schema)]
    pub prefix_length: Option<i64>,
    /// The instance whose SLAAC address the range is routed to.
    pub instance_id: Option<i64>,
    /// A SLAAC address (without prefix length) of one of the account's instances.
    pub route_target: Option<String>,
}

const ONE_PER_REGION: &str = "An account can have only one IPv6 range per region";
const ONE_PER_INSTANCE: &str = "An instance can have only one IPv6 range targeting its SLAAC address";

impl App {
    /// `GET /v4/networking/ipv6/pools`: the pool of every region where the actor sees instances.
    pub async fn ipv6_pool_list(&self, actor: &Actor) -> Result<Vec<Ipv6Pool>> {
        self.authorize(actor, Op::Ipv6PoolList).await?;
        let ids: Vec<String> = self.catalog.regions.iter().map(|r| r.view.id.clone()).collect();
        let regions = self.store.instance_regions(actor.account_id(), Self::grant_user(actor), &ids).await?;
        Ok(self
            .catalog
            .regions
            .iter()
            .filter(|r| regions.contains(&r.view.id))
            .map(|r| Ipv6Pool {
                range: r.ipv6_pool.network().to_string(),
                prefix: i64::from(r.ipv6_pool.prefix_len()),
                region: r.view.id.clone(),
                route_target: None,
            })
            .collect())
    }

    /// `GET /v4/networking/ipv6/ranges`.
    pub async fn ipv6_range_list(&self, actor: &Actor) -> Result<Vec<Ipv6Range>> {
        self.authorize(actor, Op::Ipv6RangeList).await?;
        // At most one range per region: the list is bounded by the catalog, not the account.
        let ranges = self.store.ranges_of_account(actor.account_id()).await?;
        let visible = self.visible(actor, GrantKind::Instance, ranges.to_vec(), |r| r.instance_id).await?;
        Ok(visible.iter().map(AddressBook::range).collect())
    }

    /// A range of the account by its first address (a prefix length, if given, must match).
    pub(crate) async fn range_find(&self, account_id: i64, range: &str) -> Result<Option<RangeRow>> {
        let (start, prefix) = match range.split_once('/') {
            Some((s, p)) => match p.parse::<u8>() {
                Ok(p) => (s, Some(p)),
                Err(_) => return Ok(None),
            },
            None => (range, None),
        };
        let Ok(start) = start.parse::<Ipv6Addr>() else { return Ok(None) };
        let ranges = self.store.ranges_of_account(account_id).await?;
        Ok(ranges.iter().find(|r| r.range_start == start.to_string() && prefix.is_none_or(|p| p == r.prefix)).cloned())
    }

    /// `GET /v4/networking/ipv6/ranges/{range}`.
    pub async fn ipv6_range_get(&self, actor: &Actor, range: &str) -> Result<Ipv6RangeView> {
        let r = self.lookup_for::<RangeRow>(actor, Op::Ipv6RangeGet, range.to_string()).await?.into_inner();
        let shares = self.store.shares_of_account(actor.account_id()).await?;
        let mut instances = vec![r.instance_id];
        instances.extend(shares.iter().filter(|s| s.address == r.range_start).map(|s| s.instance_id));
        Ok(Ipv6RangeView {
            range: r.range_start.clone(),
            prefix: i64::from(r.prefix),
            region: r.region.clone(),
            route_target: r.route_target.clone(),
            is_bgp: instances.len() > 1,
            instances,
        })
    }

    /// `DELETE /v4/networking/ipv6/ranges/{range}`: shared ranges cannot be deleted.
    pub async fn ipv6_range_delete(&self, actor: &Actor, range: &str) -> Result<()> {
        let r = self.lookup_for::<RangeRow>(actor, Op::Ipv6RangeDelete, range.to_string()).await?.into_inner();
        let r = &r;
        self.write(|tx| {
            Box::pin(async move {
                let now = tx.ranges_of_account_tx(actor.account_id()).await?;
                let r = now.iter().find(|x| x.id == r.id).ok_or(Error::NotFound)?;
                if !tx.shares_of_address(&r.range_start).await?.is_empty() {
                    return Err(Error::refused("A shared IPv6 range cannot be deleted; stop sharing it first"));
                }
                tx.range_delete(r.id).await?;
                Ok(())
            })
        })
        .await
    }

    /// `POST /v4/networking/ipv6/ranges`.
    pub async fn ipv6_range_create(&self, actor: &Actor, input: Ipv6RangeCreate) -> Result<Ipv6RangeCreated> {
        self.authorize(actor, Op::Ipv6RangeCreate).await?;
        let mut p = Problems::new();
        let prefix = match input.prefix_length {
            None => {
                p.add("prefix_length", "prefix_length is required");
                0
            }
            Some(n @ (56 | 64)) => n as u8,
            Some(_) => {
                p.add("prefix_length", "Must be 56 or 64");
                0
            }
        };
        match (&input.instance_id, &input.route_target) {
            (Some(_), Some(_)) => {
                for f in ["instance_id", "route_target"] {
                    p.add(f, "instance_id and route_target are mutually exclusive; send one of them");
                }
            }
            (None, None) => {
                for f in ["instance_id", "route_target"] {
                    p.add(f, "One of instance_id and route_target is required");
                }
            }
            _ => {}
        }
        let target = match &input.route_target {
            Some(t) if t.contains('/') => {
                p.add("route_target", "Must be a SLAAC address without prefix length");
                None
            }
            Some(t) => match t.parse::<Ipv6Addr>() {
                Ok(a) => Some(a.to_string()),
                Err(_) => {
                    p.add("route_target", "Must be an IPv6 address");
                    None
                }
            },
            None => None,
        };
        p.finish()?;
        let instance_id = self.range_target_instance(actor, input.instance_id, target.as_deref()).await?;
        let created = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx
                        .instance_lock(instance_id, actor.account_id())
                        .await?
                        .ok_or_else(|| Error::invalid("instance_id", "Instance not found"))?;
                    let slaac = tx
                        .ips_of_instance(instance_id)
                        .await?
                        .into_iter()
                        .find(|x| x.kind == IpKind::Slaac)
                        .ok_or_else(|| Error::invalid("instance_id", "The instance has no SLAAC address"))?;
                    let region = self
                        .catalog
                        .region(&inst.region)
                        .ok_or_else(|| Error::internal(format!("region {} is not configured", inst.region)))?;
                    let in_region = tx.ranges_in_region(&inst.region).await?;
                    if in_region.iter().any(|r| r.account_id == actor.account_id()) {
                        return Err(Error::refused(ONE_PER_REGION));
                    }
                    if in_region.iter().any(|r| r.instance_id == instance_id) {
                        return Err(Error::refused(ONE_PER_INSTANCE));
                    }
                    // The pool, the routed ranges and the VPC ranges of the region: one allocator.
                    let taken: BTreeSet<(u128, u8)> = crate::vpc::ipv6::region_taken(tx, region)
                        .await?
                        .iter()
                        .map(|n| (u128::from(n.network()), n.prefix_len()))
                        .collect();
                    let net = first_free_range(region.ipv6_ranges, prefix, &taken)
                        .ok_or_else(|| Error::refused(format!("No IPv6 ranges are left in region {}", inst.region)))?;
                    let row = tx
                        .range_insert(&NewRange {
                            range_start: &net.network().to_string(),
                            prefix,
                            account_id: actor.account_id(),
                            region: &inst.region,
                            instance_id,
                            route_target: &slaac.address,
                            created: Timestamp::now(),
                        })
                        .await
                        // Met a concurrent insert: look again (the checks above then say which rule).
                        .map_err(|e| if matches!(e, Error::Unique(_)) { Error::Retry } else { e })?;
                    Ok(Ipv6RangeCreated {
                        range: format!("{}/{}", row.range_start, row.prefix),
                        route_target: row.route_target,
                    })
                })
            })
            .await?;
        Ok(created)
    }

    /// The instance a new range is routed to: by id, or by its SLAAC address; read_write needed.
    async fn range_target_instance(&self, actor: &Actor, id: Option<i64>, slaac: Option<&str>) -> Result<i64> {
        let account = actor.account_id();
        let (found, field) = match (id, slaac) {
            (Some(id), _) => (self.store.instance_get(account, id).await?.map(|i| i.id), "instance_id"),
            (None, Some(a)) => (
                self.store
                    .ips_by_addresses(account, &[a.to_string()])
                    .await?
                    .into_iter()
                    .find(|x| x.kind == IpKind::Slaac)
                    .map(|x| x.instance_id),
                "route_target",
            ),
            (None, None) => (None, "instance_id"),
        };
        let missing = || {
            Error::invalid(
                field,
                if field == "route_target" { "No instance has this SLAAC address" } else { "Instance not found" },
            )
        };
        let id = found.ok_or_else(missing)?;
        match self.require_permission(actor, GrantKind::Instance, id, Permission::ReadWrite).await {
            Ok(()) => Ok(id),
            Err(Error::NotFound) => Err(missing()),
            Err(e) => Err(e),
        }
    }
}

fn prefix_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(serde_json::json!({"type": "integer", "enum": [56, 64]}))
}
