//! Changing one address: reverse DNS (forward DNS must resolve to the address first; null on a
//! public IPv4 address goes back to the default name), and removing an IPv4 address from an
//! instance (never its last public one, never one in active 1:1 NAT).

use nubis_store::instances::InstanceRow;
use std::net::IpAddr;

use nubis_model::event::EventEntity;
use nubis_model::grants::{GrantKind, present};
use nubis_model::instance::Status;
use nubis_model::ip::IpAddress;
use nubis_model::{Error, Result};
use nubis_store::ips::{IpKind, IpRow};
use serde::Deserialize;
use utoipa::ToSchema;

use super::canonical_ip;
use crate::App;
use crate::auth::{Actor, Op};
use crate::dns::{is_hostname, normalize};
use crate::events::event;
use crate::instance::instance_entity;

/// `PUT /v4/networking/ips/{address}` and `PUT .../instances/{id}/ips/{address}`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct IpUpdate {
    /// The reverse name; its forward DNS must resolve to the address. Null resets a public IPv4
    /// address to its default name.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub rdns: Option<Option<String>>,
}

fn ip_entity(ip: &IpRow) -> EventEntity {
    EventEntity::new("ipaddress", ip.id, &ip.address, format!("/v4/networking/ips/{}", ip.address))
}

impl App {
    /// `PUT /v4/networking/ips/{address}`.
    pub async fn ip_update(&self, actor: &Actor, address: &str, input: IpUpdate) -> Result<IpAddress> {
        let ip = self.lookup_for::<IpRow>(actor, Op::IpUpdate, address.to_string()).await?;
        self.rdns_set(actor, &ip, input).await
    }

    /// `PUT /v4/compute/instances/{instance_id}/ips/{address}`.
    pub async fn instance_ip_update(
        &self,
        actor: &Actor,
        instance_id: i64,
        address: &str,
        input: IpUpdate,
    ) -> Result<IpAddress> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceIpUpdate, instance_id).await?.into_inner();
        let ip = self.instance_address(actor, instance_id, address).await?;
        self.rdns_set(actor, &ip, input).await
    }

    async fn instance_address(&self, actor: &Actor, instance_id: i64, address: &str) -> Result<IpRow> {
        let canonical = canonical_ip(address).ok_or(Error::NotFound)?;
        let ip = self.store.ips_by_addresses(actor.account_id(), &[canonical]).await?.pop();
        ip.filter(|i| i.instance_id == instance_id).ok_or(Error::NotFound)
    }

    async fn rdns_set(&self, actor: &Actor, ip: &IpRow, input: IpUpdate) -> Result<IpAddress> {
        let Some(rdns) = input.rdns else {
            return Err(Error::invalid("rdns", "rdns is required (null resets it)"));
        };
        let rdns = match rdns {
            None => None,
            Some(name) => {
                if !ip.public || ip.kind == IpKind::LinkLocal {
                    return Err(Error::invalid("rdns", "Reverse DNS can only be set on public addresses"));
                }
                if !is_hostname(&name) {
                    return Err(Error::invalid("rdns", "Must be a host name such as www.example.com"));
                }
                let addr: IpAddr = ip.address.parse().map_err(Error::internal)?;
                let lookup = if self.controls.faults.take_rdns_lookup(actor.account_id()) {
                    Err(format!("the lookup of {} failed (injected fault)", normalize(&name)))
                } else {
                    self.dns.resolves_to(&name, addr).await
                };
                match lookup {
                    Ok(true) => Some(normalize(&name)),
                    Ok(false) => {
                        return Err(Error::invalid(
                            "rdns",
                            format!(
                                "Forward DNS of {} must resolve to {} before it can be set",
                                normalize(&name),
                                addr
                            ),
                        ));
                    }
                    Err(e) => return Err(Error::invalid("rdns", format!("Forward DNS could not be checked: {e}"))),
                }
            }
        };
        let (address, owner, rdns) = (&ip.address, ip.instance_id, &rdns);
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    // The address may have moved to an instance the grant was not checked on: not found.
                    let ip = tx.ip_get(actor.account_id(), address).await?.filter(|i| i.instance_id == owner);
                    let ip = ip.ok_or(Error::NotFound)?;
                    let row = tx.ip_set_rdns(ip.id, rdns.as_deref()).await?;
                    tx.event_insert(
                        &event(actor, "ipaddress_update", ip_entity(&row))
                            .visible_with(GrantKind::Instance, row.instance_id)
                            .build(),
                    )
                    .await?;
                    Ok(row)
                })
            })
            .await?;
        Ok(self.address_book_of_ips(std::slice::from_ref(&row)).await?.record(&row, false))
    }

    /// `DELETE /v4/compute/instances/{instance_id}/ips/{address}`: removes an IPv4 address.
    pub async fn instance_ip_delete(&self, actor: &Actor, instance_id: i64, address: &str) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceIpDelete, instance_id).await?.into_inner();
        let ip = self.instance_address(actor, instance_id, address).await?;
        if ip.kind != IpKind::Ipv4 {
            return Err(Error::refused("Only IPv4 addresses can be removed from an instance"));
        }
        let address = &ip.address;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(instance_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let ip = tx.ip_get(actor.account_id(), address).await?.filter(|i| i.instance_id == instance_id);
                let ip = ip.ok_or(Error::NotFound)?;
                let mine = tx.ips_of_instance(instance_id).await?;
                if ip.public && mine.iter().filter(|i| i.kind == IpKind::Ipv4 && i.public).count() <= 1 {
                    return Err(Error::refused("An instance must keep at least one public IPv4 address"));
                }
                if tx.interface_with_nat(address).await?.is_some() {
                    if Status::parse(&inst.status).is_some_and(Status::is_powered) {
                        return Err(Error::refused(format!(
                            "{address} is in 1:1 NAT with an active VPC interface; shut the instance down first"
                        )));
                    }
                    tx.interface_clear_nat(address).await?;
                }
                tx.ip_delete(ip.id).await?;
                tx.event_insert(
                    &event(actor, "instance_deleteip", instance_entity(&inst))
                        .visible_with(GrantKind::Instance, instance_id)
                        .message(format!("Removed {address}"))
                        .build(),
                )
                .await?;
                Ok(())
            })
        })
        .await
    }
}
