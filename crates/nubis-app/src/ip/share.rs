//! Sharing addresses with a primary instance (IP failover, both share operations of spec 4.10):
//! the list replaces what is shared with the primary (an empty list removes everything); each
//! entry is an IPv4 address (public or private) or an IPv6 range's first address without prefix
//! length, in the primary's region, that the caller can access, not the primary's own, and not a
//! public address in 1:1 NAT with a VPC interface.

use std::net::IpAddr;

use nubis_ipam::parse_ipv6_range_start;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::{Error, Problems, Result};
use nubis_store::ips::IpKind;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};

/// `POST /v4/networking/ips/share` and `POST /v4/networking/ipv4/share`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct IpShare {
    /// The primary instance, which the addresses are shared with.
    #[schema(required = true, value_type = i64)]
    pub instance_id: Option<i64>,
    /// IPv4 addresses and IPv6 ranges (first address, no prefix length) of other instances.
    #[schema(required = true, value_type = Vec<String>)]
    pub ips: Option<Vec<String>>,
}

fn field(i: usize) -> String {
    format!("ips[{i}]")
}

/// The canonical text of each entry, or the problems.
fn check(input: &IpShare) -> Result<(i64, Vec<String>)> {
    let mut p = Problems::new();
    if input.instance_id.is_none() {
        p.add("instance_id", "instance_id is required");
    }
    let mut out: Vec<String> = Vec::new();
    match &input.ips {
        None => p.add("ips", "ips is required (an empty list removes every shared address)"),
        Some(list) => {
            for (i, s) in list.iter().enumerate() {
                let parsed = match s.parse::<IpAddr>() {
                    Ok(IpAddr::V4(a)) => Ok(a.to_string()),
                    _ => parse_ipv6_range_start(s).map(|a| a.to_string()).map_err(|e| e.to_string()),
                };
                match parsed {
                    Err(reason) => p.add(field(i), reason),
                    Ok(a) if out.contains(&a) => p.add(field(i), "The same address is listed twice"),
                    Ok(a) => out.push(a),
                }
            }
        }
    }
    p.finish()?;
    Ok((input.instance_id.unwrap_or_default(), out))
}

impl App {
    /// Both share operations (`op` is the one called).
    pub async fn ip_share(&self, actor: &Actor, op: Op, input: IpShare) -> Result<()> {
        self.authorize(actor, op).await?;
        let (primary, addresses) = check(&input)?;
        self.share_access(actor, primary, &addresses).await?;
        let addresses = &addresses;
        self.write(|tx| {
            Box::pin(async move {
                let p = tx
                    .instance_lock(primary, actor.account_id())
                    .await?
                    .ok_or_else(|| Error::invalid("instance_id", "Instance not found"))?;
                let ranges = tx.ranges_of_account_tx(actor.account_id()).await?;
                for (i, a) in addresses.iter().enumerate() {
                    let (owner, region, public_v4) = match tx.ip_get(actor.account_id(), a).await? {
                        Some(ip) if ip.kind == IpKind::Ipv4 => (ip.instance_id, ip.region, ip.public),
                        Some(_) => {
                            return Err(Error::invalid(field(i), "Only IPv4 addresses and IPv6 ranges can be shared"));
                        }
                        None => match ranges.iter().find(|r| &r.range_start == a) {
                            Some(r) => (r.instance_id, r.region.clone(), false),
                            None => return Err(Error::invalid(field(i), "Address not found")),
                        },
                    };
                    if region != p.region {
                        return Err(Error::invalid(
                            field(i),
                            format!("The address is in region {region}; the instance is in {}", p.region),
                        ));
                    }
                    if owner == primary {
                        return Err(Error::invalid(field(i), "The address already belongs to this instance"));
                    }
                    if public_v4 && tx.interface_with_nat(a).await?.is_some() {
                        return Err(Error::invalid(
                            field(i),
                            "A public IPv4 address configured as 1:1 NAT on a VPC interface cannot be shared",
                        ));
                    }
                }
                tx.shares_replace(actor.account_id(), primary, addresses).await?;
                Ok(())
            })
        })
        .await
    }

    /// The caller needs read_write on the primary and access to every address shared.
    async fn share_access(&self, actor: &Actor, primary: i64, addresses: &[String]) -> Result<()> {
        // Read by key: the primary, the addresses named, and the account's ranges (one a region
        // at most).
        let account = actor.account_id();
        let ips = self.store.ips_by_addresses(account, addresses).await?;
        let ranges = self.store.ranges_of_account(account).await?;
        let mut p = Problems::new();
        let known = self.store.instance_get(account, primary).await?.is_some();
        match self.require_permission(actor, GrantKind::Instance, primary, Permission::ReadWrite).await {
            Ok(()) if known => {}
            Ok(()) | Err(Error::NotFound) => p.add("instance_id", "Instance not found"),
            Err(e) => return Err(e),
        }
        for (i, a) in addresses.iter().enumerate() {
            let owner = ips
                .iter()
                .find(|x| &x.address == a)
                .map(|x| x.instance_id)
                .or_else(|| ranges.iter().find(|r| &r.range_start == a).map(|r| r.instance_id));
            match owner {
                None => p.add(field(i), "Address not found"),
                Some(id) => match self.require_permission(actor, GrantKind::Instance, id, Permission::ReadOnly).await {
                    Ok(()) => {}
                    Err(Error::NotFound) => p.add(field(i), "Address not found"),
                    Err(e) => return Err(e),
                },
            }
        }
        p.finish()
    }
}
