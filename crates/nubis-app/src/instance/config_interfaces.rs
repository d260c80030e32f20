//! The interfaces of one configuration profile, one at a time (reference
//! `/configs/{configId}/interfaces`): list, add (appended; a new primary takes over), get, update
//! (`public`: only `primary`; `vpc`: `primary` and `ipv4`; `vlan`: nothing), delete (not while
//! active) and reorder. Each change is an `instance_config_update` event.

use std::net::Ipv4Addr;

use nubis_model::grants::GrantKind;
use nubis_model::instance::{Interface, InterfaceIpv4};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::configs::ConfigRow;
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::generation::LEGACY;
use super::instance_entity;
use super::interface_kinds::check_nat;
use super::interfaces::{InterfaceIpv4Request, InterfaceRequest};
use super::interfaces::{Target, assignable, check_interfaces, create_interfaces, nat_address};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;
use crate::vpc::interface_active;

/// `PUT .../configs/{instance_config_id}/interfaces/{interface_id}`: omitted fields stay.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ConfigInterfaceUpdate {
    pub primary: Option<bool>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub ipv4: Option<InterfaceIpv4Request>,
    /// Routed ranges are not offered: empty or null.
    pub ip_ranges: Option<Vec<String>>,
    /// Refused (only null): an interface's IPv6 is given when it is created.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub ipv6: Option<serde_json::Value>,
}

/// `POST .../interfaces/order`: every interface of the profile, in the new order.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfacesOrder {
    #[schema(required = true, value_type = Vec<i64>)]
    pub ids: Option<Vec<i64>>,
}

/// A profile interface's record.
pub(crate) fn interface_record(inst: &InstanceRow, f: &InterfaceRow) -> Interface {
    let vpc = f.purpose == "vpc";
    Interface {
        id: f.id,
        purpose: f.purpose.clone(),
        label: f.label.clone(),
        ipam_address: f.ipam_address.clone(),
        primary: f.primary,
        active: interface_active(inst, f),
        vpc_id: f.vpc_id,
        subnet_id: f.subnet_id,
        ipv4: vpc.then(|| InterfaceIpv4 { vpc: f.vpc_ipv4.clone(), nat_1_1: f.nat_1_1.clone() }),
        ipv6: crate::vpc::ipv6::interface_ipv6_view(f),
        ip_ranges: Vec::new(),
    }
}

/// The profile of a legacy-interface instance, read inside the transaction (404 when it is not
/// the instance's; 400 when the instance uses Linode interfaces).
async fn legacy_config(tx: &mut Tx<'_>, inst: &InstanceRow, config_id: i64) -> Result<ConfigRow> {
    let c = tx.config_get(inst.id, config_id).await?.ok_or(Error::NotFound)?;
    if inst.interface_generation != LEGACY {
        return Err(Error::refused("This instance uses Linode interfaces: manage them under /interfaces"));
    }
    Ok(c)
}

async fn changed(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, config_id: i64) -> Result<()> {
    tx.config_touch(config_id, Timestamp::now()).await?;
    tx.event_insert(
        &event(actor, "instance_config_update", instance_entity(inst))
            .visible_with(GrantKind::Instance, inst.id)
            .build(),
    )
    .await?;
    Ok(())
}

impl App {
    pub async fn instance_config_interface_list(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
    ) -> Result<Vec<Interface>> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfaceList, id).await?.into_inner();
        self.store.config_get(id, config_id).await?.ok_or(Error::NotFound)?;
        let list = self.store.interfaces_of_configs(&[config_id]).await?;
        Ok(list.iter().map(|f| interface_record(&inst, f)).collect())
    }

    pub async fn instance_config_interface_get(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        interface_id: i64,
    ) -> Result<Interface> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfaceGet, id).await?.into_inner();
        let f = self.store.interface_get(id, interface_id).await?.filter(|f| f.config_id == Some(config_id));
        Ok(interface_record(&inst, &f.ok_or(Error::NotFound)?))
    }

    /// Appends an interface to a profile.
    pub async fn instance_config_interface_create(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        input: InterfaceRequest,
    ) -> Result<Interface> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfaceCreate, id).await?.into_inner();
        let mut p = Problems::new();
        let one = std::slice::from_ref(&input);
        let mut valid = check_interfaces(&mut p, self.catalog.region(&inst.region), one, false);
        // Fields of this request are not under `interfaces[0]`.
        let p = strip_index(p);
        p.finish()?;
        self.check_interface_access(actor, &valid).await.map_err(strip_index_err)?;
        let v = valid.pop().ok_or_else(|| Error::internal("no interface checked"))?;
        let v = &v;
        let (inst, f) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    legacy_config(tx, &inst, config_id).await?;
                    let mine: Vec<InterfaceRow> = tx
                        .interfaces_of_instance(id)
                        .await?
                        .into_iter()
                        .filter(|f| f.config_id == Some(config_id))
                        .collect();
                    if mine.len() >= super::interfaces::MAX_INTERFACES {
                        return Err(Error::refused("A configuration profile has at most three interfaces"));
                    }
                    if v.purpose.name() == "public" && mine.iter().any(|f| f.purpose == "public") {
                        return Err(Error::invalid("purpose", "Only one public interface is allowed"));
                    }
                    if let Some(l) = &v.vlan_label
                        && mine.iter().any(|f| f.label.as_deref() == Some(l))
                    {
                        return Err(Error::invalid("label", "An instance can be attached to a VLAN only once"));
                    }
                    if v.primary {
                        for mut f in mine.into_iter().filter(|f| f.primary) {
                            f.primary = false;
                            tx.interface_save(&f, false, Timestamp::now()).await?;
                        }
                    }
                    let t = Target {
                        account_id: actor.account_id(),
                        instance_id: id,
                        region: &inst.region,
                        config_id: Some(config_id),
                    };
                    let f = create_interfaces(tx, t, 0, std::slice::from_ref(v)).await.map_err(strip_index_err)?;
                    changed(tx, actor, &inst, config_id).await?;
                    Ok((inst, f.into_iter().next().ok_or_else(|| Error::internal("no interface made"))?))
                })
            })
            .await?;
        Ok(interface_record(&inst, &f))
    }

    pub async fn instance_config_interface_update(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        interface_id: i64,
        input: ConfigInterfaceUpdate,
    ) -> Result<Interface> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfaceUpdate, id).await?.into_inner();
        let mut p = Problems::new();
        p.check(
            input.ip_ranges.as_ref().is_none_or(Vec::is_empty),
            "ip_ranges",
            "Routed IPv4 ranges on interfaces are not supported",
        );
        p.check(input.ipv6.is_none(), "ipv6", "An interface's IPv6 is given when it is created and cannot be changed");
        let address = match input.ipv4.as_ref().and_then(|v| v.vpc.as_deref()).filter(|a| !a.is_empty()) {
            None => None,
            Some(a) => match a.parse::<Ipv4Addr>() {
                Ok(a) => Some(a),
                Err(_) => {
                    p.add("ipv4.vpc", "Must be an IPv4 address");
                    None
                }
            },
        };
        let nat = input.ipv4.as_ref().map(|v| check_nat(&mut p, v.nat_1_1.as_deref(), false));
        p.finish()?;
        let input = &input;
        let nat = &nat;
        let (inst, f) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    legacy_config(tx, &inst, config_id).await?;
                    let mut f = tx
                        .interface_lock(id, interface_id)
                        .await?
                        .filter(|f| f.config_id == Some(config_id))
                        .ok_or(Error::NotFound)?;
                    if f.purpose == "vlan" {
                        return Err(Error::refused("A vlan interface cannot be updated; delete it and add another"));
                    }
                    if f.purpose == "public" && input.ipv4.is_some() {
                        return Err(Error::invalid("ipv4", "Only allowed for vpc interfaces"));
                    }
                    if input.primary == Some(true) && !f.primary {
                        let others = tx.interfaces_of_instance(id).await?;
                        for mut o in others.into_iter().filter(|o| o.config_id == Some(config_id) && o.primary) {
                            o.primary = false;
                            tx.interface_save(&o, false, Timestamp::now()).await?;
                        }
                    }
                    if let Some(pr) = input.primary {
                        f.primary = pr;
                    }
                    if let Some(a) = address {
                        let s = tx
                            .subnet_lock(None, f.subnet_id.unwrap_or_default(), actor.account_id())
                            .await?
                            .ok_or(Error::NotFound)?;
                        let (lo, hi) = assignable(s.first_v4, s.last_v4);
                        if !(lo..=hi).contains(&u32::from(a)) {
                            return Err(Error::invalid(
                                "ipv4.vpc",
                                format!(
                                    "Must be inside the subnet {} and not one of its first two or last two addresses",
                                    s.ipv4
                                ),
                            ));
                        }
                        f.vpc_ipv4 = Some(a.to_string());
                    }
                    if let Some(n) = nat {
                        f.nat_1_1 = None;
                        // Free the address first so that the same NAT can be named again.
                        f = tx.interface_save(&f, false, Timestamp::now()).await?;
                        f.nat_1_1 = match n {
                            None => None,
                            Some(n) => Some(nat_address(tx, id, n, "ipv4.nat_1_1").await?),
                        };
                    }
                    let f = tx.interface_save(&f, false, Timestamp::now()).await.map_err(|e| match e {
                        Error::Unique(_) => Error::invalid("ipv4.vpc", "This address is already in use in the subnet"),
                        e => e,
                    })?;
                    changed(tx, actor, &inst, config_id).await?;
                    Ok((inst, f))
                })
            })
            .await?;
        Ok(interface_record(&inst, &f))
    }

    /// Deletes a profile interface; an active one only after the instance is shut down.
    pub async fn instance_config_interface_delete(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        interface_id: i64,
    ) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfaceDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                legacy_config(tx, &inst, config_id).await?;
                let f = tx
                    .interface_lock(id, interface_id)
                    .await?
                    .filter(|f| f.config_id == Some(config_id))
                    .ok_or(Error::NotFound)?;
                if interface_active(&inst, &f) {
                    return Err(Error::refused(
                        "The interface is active: shut the instance down (or boot another profile) first",
                    ));
                }
                tx.interface_delete(f.id).await?;
                changed(tx, actor, &inst, config_id).await
            })
        })
        .await
    }

    /// Puts a profile's interfaces in the order given (every one of them, once).
    pub async fn instance_config_interfaces_order(
        &self,
        actor: &Actor,
        id: i64,
        config_id: i64,
        input: InterfacesOrder,
    ) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceConfigInterfacesOrder, id).await?.into_inner();
        let ids = input.ids.ok_or_else(|| Error::invalid("ids", "The interface ids, in order, are required"))?;
        let ids = &ids;
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                legacy_config(tx, &inst, config_id).await?;
                let mine: Vec<InterfaceRow> = tx
                    .interfaces_of_instance(id)
                    .await?
                    .into_iter()
                    .filter(|f| f.config_id == Some(config_id))
                    .collect();
                if mine.iter().any(|f| interface_active(&inst, f)) {
                    return Err(Error::refused(
                        "The profile is active: shut the instance down before reordering its interfaces",
                    ));
                }
                let mut given = ids.clone();
                given.sort_unstable();
                let mut have: Vec<i64> = mine.iter().map(|f| f.id).collect();
                have.sort_unstable();
                if given != have {
                    return Err(Error::invalid(
                        "ids",
                        format!("Must name every interface of the profile once: {have:?}"),
                    ));
                }
                let positions: Vec<i64> = mine.iter().map(|f| f.position).collect();
                tx.interfaces_reposition(ids, &positions).await?;
                changed(tx, actor, &inst, config_id).await
            })
        })
        .await
    }
}

/// Errors of a one-interface request are about its own fields (`label`, not `interfaces[0].label`).
fn strip_index(p: Problems) -> Problems {
    let mut out = Problems::new();
    if let Err(Error::Invalid(list)) = p.finish() {
        for e in list {
            match e.field {
                Some(f) => out.add(f.strip_prefix("interfaces[0].").unwrap_or(&f).to_string(), e.reason),
                None => out.add_general(e.reason),
            }
        }
    }
    out
}

fn strip_index_err(e: Error) -> Error {
    match e {
        Error::Invalid(list) => {
            let mut p = Problems::new();
            for e in list {
                match e.field {
                    Some(f) => p.add(f.strip_prefix("interfaces[0].").unwrap_or(&f).to_string(), e.reason),
                    None => p.add_general(e.reason),
                }
            }
            p.finish().err().unwrap_or(Error::internal("no errors"))
        }
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_interface_errors_name_its_own_fields() {
        let mut p = Problems::new();
        p.add("interfaces[0].label", "x");
        p.add("interfaces", "y");
        let Err(Error::Invalid(list)) = strip_index(p).finish() else { panic!() };
        let fields: Vec<_> = list.iter().map(|e| e.field.clone().unwrap_or_default()).collect();
        assert_eq!(fields, ["label", "interfaces"]);
    }
}
