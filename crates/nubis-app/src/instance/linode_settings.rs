//! What surrounds Linode interfaces: the instance's interface settings (Network Helper, which
//! interfaces carry the default routes), the history of their versions, the firewalls of one,
//! and the upgrade of a profile's interfaces to Linode interfaces.

use nubis_model::filter::Filter;
use nubis_model::firewall::{DeviceType, Firewall};
use nubis_model::grants::GrantKind;
use nubis_model::instance::Status;
use nubis_model::instance_profile::{
    DefaultRouteSettings, InterfaceHistory, InterfaceSettings, InterfacesUpgrade, LinodeInterface,
};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::generation::{self, LINODE};
use super::instance_entity;
use super::linode_interfaces::{addresses_in_tx, insert_linode, linode_record, require_linode};
use super::linode_request::{LinodeKind, ValidLinodeInterface};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `PUT .../interfaces/settings`: omitted fields stay.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfaceSettingsUpdate {
    /// Changes only while the instance is off.
    pub network_helper: Option<bool>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub default_route: Option<DefaultRouteUpdate>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DefaultRouteUpdate {
    /// A public or VPC interface of the instance.
    pub ipv4_interface_id: Option<i64>,
    /// The public interface of the instance.
    pub ipv6_interface_id: Option<i64>,
}

/// `POST .../upgrade-interfaces`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InterfacesUpgradeRequest {
    /// The profile whose interfaces become Linode interfaces; the instance's only profile when
    /// omitted.
    pub config_id: Option<i64>,
    /// Only show what the upgrade would make (default true).
    pub dry_run: Option<bool>,
}

fn settings(inst: &InstanceRow, rows: &[InterfaceRow]) -> InterfaceSettings {
    let mine: Vec<&InterfaceRow> = rows.iter().filter(|f| f.config_id.is_none()).collect();
    InterfaceSettings {
        network_helper: inst.network_helper,
        default_route: DefaultRouteSettings {
            ipv4_interface_id: mine.iter().find(|f| f.default_ipv4).map(|f| f.id),
            ipv4_eligible_interface_ids: mine.iter().filter(|f| f.purpose != "vlan").map(|f| f.id).collect(),
            ipv6_interface_id: mine.iter().find(|f| f.default_ipv6).map(|f| f.id),
            ipv6_eligible_interface_ids: mine.iter().filter(|f| f.purpose == "public").map(|f| f.id).collect(),
        },
    }
}

impl App {
    pub async fn instance_interface_settings_get(&self, actor: &Actor, id: i64) -> Result<InterfaceSettings> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceSettingsGet, id).await?.into_inner();
        require_linode(&inst)?;
        Ok(settings(&inst, &self.store.interfaces_of_instance(id).await?))
    }

    pub async fn instance_interface_settings_update(
        &self,
        actor: &Actor,
        id: i64,
        input: InterfaceSettingsUpdate,
    ) -> Result<InterfaceSettings> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceSettingsUpdate, id).await?.into_inner();
        let input = &input;
        self.write(|tx| {
            Box::pin(async move {
                let mut inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                require_linode(&inst)?;
                let now = Timestamp::now();
                if let Some(n) = input.network_helper
                    && n != inst.network_helper
                {
                    if Status::parse(&inst.status) != Some(Status::Offline) {
                        return Err(Error::invalid(
                            "network_helper",
                            "Shut the instance down before changing Network Helper",
                        ));
                    }
                    inst = tx.instance_set_network_helper(id, n, now).await?;
                }
                let rows = tx.interfaces_of_instance(id).await?;
                let s = settings(&inst, &rows);
                if let Some(d) = &input.default_route {
                    for (want, eligible, field, v6) in [
                        (
                            d.ipv4_interface_id,
                            &s.default_route.ipv4_eligible_interface_ids,
                            "default_route.ipv4_interface_id",
                            false,
                        ),
                        (
                            d.ipv6_interface_id,
                            &s.default_route.ipv6_eligible_interface_ids,
                            "default_route.ipv6_interface_id",
                            true,
                        ),
                    ] {
                        let Some(want) = want else { continue };
                        if !eligible.contains(&want) {
                            return Err(Error::invalid(
                                field,
                                format!("Must be one of the eligible interfaces {eligible:?}"),
                            ));
                        }
                        for f in rows.iter().filter(|f| f.config_id.is_none()) {
                            let mut g = f.clone();
                            if v6 {
                                g.default_ipv6 = f.id == want;
                            } else {
                                g.default_ipv4 = f.id == want;
                            }
                            if g != *f {
                                let g = tx.interface_save(&g, true, now).await?;
                                super::linode_interfaces::record_version(tx, &inst, &g).await?;
                            }
                        }
                    }
                }
                Ok(settings(&inst, &tx.interfaces_of_instance(id).await?))
            })
        })
        .await
    }

    pub async fn instance_interface_history(
        &self,
        actor: &Actor,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<InterfaceHistory>> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceHistory, id).await?.into_inner();
        let (rows, total) = self.store.interface_history_page(id, filter, page.page, page.page_size).await?;
        let data = rows
            .into_iter()
            .map(|h| InterfaceHistory {
                interface_history_id: h.id,
                interface_id: h.interface_id,
                instance_id: h.instance_id,
                version: h.version,
                interface_data: h.interface_data,
                created: h.created,
            })
            .collect();
        Ok(Page::new(data, page, total))
    }

    /// The firewalls of a Linode interface: the instance's, for its public and VPC interfaces.
    pub async fn instance_interface_firewalls_list(
        &self,
        actor: &Actor,
        id: i64,
        interface_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Firewall>> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceFirewallsList, id).await?.into_inner();
        require_linode(&inst)?;
        let f = self
            .store
            .interface_get(id, interface_id)
            .await?
            .filter(|f| f.config_id.is_none())
            .ok_or(Error::NotFound)?;
        if f.purpose == "vlan" {
            return Ok(Page::new(Vec::new(), page, 0));
        }
        self.service_firewalls(actor, DeviceType::Instance, id, filter, page).await
    }

    /// Turns the interfaces of one profile into Linode interfaces (or shows what it would make).
    pub async fn instance_interfaces_upgrade(
        &self,
        actor: &Actor,
        id: i64,
        input: InterfacesUpgradeRequest,
    ) -> Result<InterfacesUpgrade> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfacesUpgrade, id).await?.into_inner();
        let dry_run = input.dry_run.unwrap_or(true);
        let input = &input;
        let (inst, config_id, made) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    if inst.interface_generation == LINODE {
                        return Err(Error::refused("This instance already uses Linode interfaces"));
                    }
                    let setting = tx.account_interfaces_setting(actor.account_id()).await?;
                    if setting.as_deref().unwrap_or(generation::DEFAULT_SETTING) == "legacy_config_only" {
                        return Err(Error::refused(
                            "The account's interfaces_for_new_linodes setting (legacy_config_only) does not allow Linode interfaces",
                        ));
                    }
                    let configs = tx.configs_of_instance(id).await?;
                    let config_id = match (input.config_id, configs.len()) {
                        (Some(c), _) => Some(configs.iter().find(|x| x.id == c).ok_or_else(|| Error::invalid("config_id", "Config not found"))?.id),
                        (None, 0) => None,
                        (None, 1) => Some(configs[0].id),
                        (None, _) => {
                            return Err(Error::invalid("config_id", "The instance has several configuration profiles: name one"));
                        }
                    };
                    if tx.ips_of_instance(id).await?.iter().any(|a| a.kind == nubis_store::ips::IpKind::Ipv4 && !a.public) {
                        return Err(Error::refused(
                            "The instance has a private IPv4 address, which Linode interfaces cannot carry: remove it first",
                        ));
                    }
                    let all = tx.interfaces_of_instance(id).await?;
                    let planned = upgraded(&all, config_id);
                    if dry_run {
                        let shown = preview(tx, &inst, &planned).await?;
                        return Ok((inst, config_id, shown));
                    }
                    if Status::parse(&inst.status) != Some(Status::Offline) {
                        return Err(Error::refused("Shut the instance down before upgrading its interfaces"));
                    }
                    for f in &all {
                        tx.interface_delete(f.id).await?;
                    }
                    let inst = tx.instance_set_interface_generation(id, LINODE, Timestamp::now()).await?;
                    let mut made = Vec::new();
                    for v in &planned {
                        made.push(insert_linode(tx, actor, &inst, v, "").await?);
                    }
                    tx.event_insert(
                        &event(actor, "interface_create", instance_entity(&inst)).visible_with(GrantKind::Instance, id).build(),
                    )
                    .await?;
                    let a = addresses_in_tx(tx, &inst).await?;
                    let views = made.iter().map(|f| linode_record(&inst, f, &a)).collect();
                    Ok((inst, config_id, views))
                })
            })
            .await?;
        let _ = inst;
        Ok(InterfacesUpgrade { config_id, dry_run, interfaces: made })
    }
}

/// What a profile's interfaces become: each keeps its kind, VPC address and 1:1 NAT, VLAN label
/// and address; the primary (or first non-VLAN) one carries the IPv4 default route, a public one
/// the IPv6 route. No profile interfaces: one public interface.
fn upgraded(all: &[InterfaceRow], config_id: Option<i64>) -> Vec<ValidLinodeInterface> {
    let mine: Vec<&InterfaceRow> = all.iter().filter(|f| config_id.is_some() && f.config_id == config_id).collect();
    if mine.is_empty() {
        return vec![ValidLinodeInterface {
            kind: LinodeKind::Public { addresses: Vec::new(), ranges: Vec::new() },
            default_ipv4: Some(true),
            default_ipv6: Some(true),
            firewall_id: None,
            ipv6: None,
        }];
    }
    let route = mine.iter().find(|f| f.primary).or_else(|| mine.iter().find(|f| f.purpose != "vlan")).map(|f| f.id);
    mine.iter()
        .map(|f| {
            let kind = match f.purpose.as_str() {
                "vpc" => LinodeKind::Vpc {
                    subnet_id: f.subnet_id.unwrap_or_default(),
                    address: f.vpc_ipv4.as_deref().and_then(|a| a.parse().ok()),
                    nat: f.nat_1_1.as_ref().map(|a| super::interface_kinds::Nat::Address(a.clone())),
                },
                "vlan" => LinodeKind::Vlan {
                    label: f.label.clone().unwrap_or_default(),
                    ipam_address: f.ipam_address.clone(),
                },
                _ => LinodeKind::Public { addresses: Vec::new(), ranges: Vec::new() },
            };
            ValidLinodeInterface {
                default_ipv4: Some(route == Some(f.id)),
                default_ipv6: Some(f.purpose == "public"),
                kind,
                firewall_id: None,
                ipv6: f.vpc_ipv6.as_ref().map(|v| crate::vpc::ipv6::ValidInterfaceIpv6::from_row(v, true)),
            }
        })
        .collect()
}

/// The records a dry run shows (id 0, version 1, as if made now).
async fn preview(
    tx: &mut Tx<'_>,
    inst: &InstanceRow,
    planned: &[ValidLinodeInterface],
) -> Result<Vec<LinodeInterface>> {
    let a = addresses_in_tx(tx, inst).await?;
    let now = Timestamp::now();
    Ok(planned
        .iter()
        .map(|v| {
            let (label, ipam_address, subnet_id, vpc_ipv4, nat) = match &v.kind {
                LinodeKind::Vlan { label, ipam_address } => {
                    (Some(label.clone()), ipam_address.clone(), None, None, None)
                }
                LinodeKind::Vpc { subnet_id, address, nat } => (
                    None,
                    None,
                    Some(*subnet_id),
                    address.map(|x| x.to_string()),
                    nat.as_ref().map(|n| match n {
                        super::interface_kinds::Nat::Address(x) => x.clone(),
                        super::interface_kinds::Nat::Any => a.public_v4.first().cloned().unwrap_or_default(),
                    }),
                ),
                LinodeKind::Public { .. } => (None, None, None, None, None),
            };
            let f = InterfaceRow {
                id: 0,
                instance_id: inst.id,
                account_id: inst.account_id,
                region: inst.region.clone(),
                config_id: None,
                position: 0,
                purpose: v.kind.purpose().name().to_string(),
                primary: false,
                label,
                ipam_address,
                vpc_id: None,
                subnet_id,
                vpc_ipv4,
                nat_1_1: nat,
                default_ipv4: v.default_ipv4.unwrap_or(false),
                default_ipv6: v.default_ipv6.unwrap_or(false),
                version: 1,
                created: now,
                updated: now,
                vpc_ipv6: None,
            };
            linode_record(inst, &f, &a)
        })
        .collect())
}
