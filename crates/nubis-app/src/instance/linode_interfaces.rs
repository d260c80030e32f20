//! Linode interfaces (the newer generation, reference `/linode/instances/{linodeId}/interfaces`):
//! interfaces on the instance itself rather than on a profile, for instances created with
//! `interface_generation: linode` (or upgraded). At most three: one public (the instance's public
//! addresses), one VPC, VLANs each once. They change only while the instance is off (or being
//! created); each version is kept in the history.

use nubis_ipam::MacAddr;
use nubis_model::firewall::DeviceType;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::Status;
use nubis_model::instance_profile::{
    DefaultRoute, InterfaceAddress, LinodeInterface, LinodeInterfaces, PublicInterface, PublicIpv4, PublicIpv6,
    RoutedRange, SharedAddress, Slaac, VlanInterface, VpcAddress, VpcInterface, VpcIpv4,
};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;
use nubis_store::interfaces::InterfaceRow;
use nubis_store::ips::{IpKind, IpRow};

use super::generation::LINODE;
use super::instance_entity;
use super::interfaces::{Target, ValidInterface, create_interfaces};
use super::linode_request::{
    LinodeInterfaceRequest, LinodeKind, ValidLinodeInterface, check_linode_interface, check_linode_set,
};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// The instance's addresses a public interface shows.
#[derive(Debug, Default, Clone)]
pub(crate) struct Addresses {
    /// Public IPv4 addresses, oldest first.
    pub public_v4: Vec<String>,
    pub slaac: Option<String>,
    /// IPv4 addresses of other instances shared with this one, with their owner.
    pub shared_v4: Vec<(String, i64)>,
    /// Ranges routed to the instance: (`range/prefix`, route target).
    pub ranges: Vec<(String, String)>,
}

impl Addresses {
    fn from_rows(ips: &[IpRow], shared: Vec<(String, i64)>, ranges: Vec<(String, String)>) -> Addresses {
        let mut v4: Vec<&IpRow> = ips.iter().filter(|a| a.kind == IpKind::Ipv4 && a.public).collect();
        v4.sort_by_key(|a| a.id);
        Addresses {
            public_v4: v4.iter().map(|a| a.address.clone()).collect(),
            slaac: ips.iter().find(|a| a.kind == IpKind::Slaac).map(|a| a.address.clone()),
            shared_v4: shared,
            ranges,
        }
    }
}

/// The MAC address of an interface: a public interface keeps the instance's (that of its SLAAC
/// address); the others get their own.
pub(crate) fn mac_address(inst: &InstanceRow, f: &InterfaceRow) -> String {
    let seed = if f.purpose == "public" { inst.id as u64 } else { (1u64 << 40) | f.id as u64 };
    MacAddr::from_seed(seed).to_string()
}

/// A Linode interface's record.
pub(crate) fn linode_record(inst: &InstanceRow, f: &InterfaceRow, a: &Addresses) -> LinodeInterface {
    let public = (f.purpose == "public").then(|| PublicInterface {
        ipv4: PublicIpv4 {
            addresses: a
                .public_v4
                .iter()
                .enumerate()
                .map(|(i, x)| InterfaceAddress { address: x.clone(), primary: i == 0 })
                .collect(),
            shared: a.shared_v4.iter().map(|(x, o)| SharedAddress { address: x.clone(), instance_id: *o }).collect(),
        },
        ipv6: PublicIpv6 {
            slaac: a.slaac.iter().map(|s| Slaac { address: s.clone(), prefix: 64 }).collect(),
            shared: Vec::new(),
            ranges: a
                .ranges
                .iter()
                .map(|(r, t)| RoutedRange { range: r.clone(), route_target: Some(t.clone()) })
                .collect(),
        },
    });
    let vpc = (f.purpose == "vpc").then(|| VpcInterface {
        vpc_id: f.vpc_id.unwrap_or_default(),
        subnet_id: f.subnet_id.unwrap_or_default(),
        ipv4: VpcIpv4 {
            addresses: f
                .vpc_ipv4
                .iter()
                .map(|x| VpcAddress { address: x.clone(), primary: true, nat_1_1_address: f.nat_1_1.clone() })
                .collect(),
            ranges: Vec::new(),
        },
        ipv6: crate::vpc::ipv6::interface_ipv6_view(f),
    });
    let vlan = (f.purpose == "vlan").then(|| VlanInterface {
        vlan_label: f.label.clone().unwrap_or_default(),
        ipam_address: f.ipam_address.clone(),
    });
    LinodeInterface {
        id: f.id,
        mac_address: mac_address(inst, f),
        created: f.created,
        updated: f.updated,
        version: f.version,
        default_route: DefaultRoute { ipv4: f.default_ipv4, ipv6: f.default_ipv6 },
        public,
        vpc,
        vlan,
    }
}

/// The instance's addresses, read inside the transaction.
pub(crate) async fn addresses_in_tx(tx: &mut Tx<'_>, inst: &InstanceRow) -> Result<Addresses> {
    let ips = tx.ips_of_instance(inst.id).await?;
    let mut shared = Vec::new();
    for a in tx.shares_of_instance(inst.id).await? {
        if let Some(ip) = tx.ip_get(inst.account_id, &a).await?
            && ip.kind == IpKind::Ipv4
        {
            shared.push((a, ip.instance_id));
        }
    }
    let ranges = tx
        .ranges_of_account_tx(inst.account_id)
        .await?
        .into_iter()
        .filter(|r| r.instance_id == inst.id)
        .map(|r| (format!("{}/{}", r.range_start, r.prefix), r.route_target))
        .collect();
    Ok(Addresses::from_rows(&ips, shared, ranges))
}

/// The shape of a stored interface, for the rules of the whole set.
pub(crate) fn kind_of(f: &InterfaceRow) -> LinodeKind {
    match f.purpose.as_str() {
        "vpc" => LinodeKind::Vpc { subnet_id: f.subnet_id.unwrap_or_default(), address: None, nat: None },
        "vlan" => LinodeKind::Vlan { label: f.label.clone().unwrap_or_default(), ipam_address: None },
        _ => LinodeKind::Public { addresses: Vec::new(), ranges: Vec::new() },
    }
}

/// Renames the fields of errors about a profile-style interface to a Linode interface's, under
/// `prefix` (`interfaces[2].` or nothing).
fn linode_fields(e: Error, prefix: &str) -> Error {
    let Error::Invalid(list) = e else { return e };
    let rename = |f: &str| -> String {
        let rest = f.split_once("].").map_or(f, |(_, r)| r);
        let mapped = match rest {
            "subnet_id" => "vpc.subnet_id",
            "ipv4.vpc" => "vpc.ipv4.addresses[0].address",
            "ipv4.nat_1_1" => "vpc.ipv4.addresses[0].nat_1_1_address",
            "label" => "vlan.vlan_label",
            "ipam_address" => "vlan.ipam_address",
            other if other.starts_with("ipv6") => return format!("{prefix}vpc.{other}"),
            other => other,
        };
        format!("{prefix}{mapped}")
    };
    Error::Invalid(
        list.into_iter().map(|e| FieldError { field: e.field.as_deref().map(rename), reason: e.reason }).collect(),
    )
}

/// Checks what a Linode interface names on the instance, inside the transaction: its own public
/// addresses and ranges. `prefix`: where the request's fields are.
async fn check_public(tx: &mut Tx<'_>, inst: &InstanceRow, v: &ValidLinodeInterface, prefix: &str) -> Result<()> {
    let LinodeKind::Public { addresses, ranges } = &v.kind else { return Ok(()) };
    let a = addresses_in_tx(tx, inst).await?;
    let mut p = Problems::new();
    for (i, x) in addresses.iter().enumerate() {
        p.check(
            a.public_v4.contains(x),
            format!("{prefix}public.ipv4.addresses[{i}].address"),
            "Must be one of the instance's public IPv4 addresses, or \"auto\"",
        );
    }
    for (i, r) in ranges.iter().enumerate() {
        p.check(
            a.ranges.iter().any(|(x, _)| x.split('/').next() == Some(r.as_str())),
            format!("{prefix}public.ipv6.ranges[{i}].range"),
            "Must be an IPv6 range routed to the instance; new ranges come from POST /v4/networking/ipv6/ranges",
        );
    }
    p.finish()
}

/// Writes one Linode interface of an instance, inside the transaction (after the instance's
/// other interfaces), with its default routes, firewall and first history entry.
pub(crate) async fn insert_linode(
    tx: &mut Tx<'_>,
    actor: &Actor,
    inst: &InstanceRow,
    v: &ValidLinodeInterface,
    prefix: &str,
) -> Result<InterfaceRow> {
    check_public(tx, inst, v, prefix).await?;
    let (vlan_label, ipam_address) = match &v.kind {
        LinodeKind::Vlan { label, ipam_address } => (Some(label.clone()), ipam_address.clone()),
        _ => (None, None),
    };
    let (subnet_id, vpc_ipv4, nat) = match &v.kind {
        LinodeKind::Vpc { subnet_id, address, nat } => (Some(*subnet_id), *address, nat.clone()),
        _ => (None, None, None),
    };
    let legacy = ValidInterface {
        purpose: v.kind.purpose(),
        primary: false,
        vlan_label,
        ipam_address,
        subnet_id,
        vpc_ipv4,
        nat,
        ipv6: v.ipv6.clone(),
    };
    let t = Target { account_id: inst.account_id, instance_id: inst.id, region: &inst.region, config_id: None };
    let mut f = create_interfaces(tx, t, 0, std::slice::from_ref(&legacy))
        .await
        .map_err(|e| linode_fields(e, prefix))?
        .pop()
        .ok_or_else(|| Error::internal("no interface made"))?;
    f = set_default_routes(tx, inst.id, f, v.default_ipv4, v.default_ipv6).await?;
    if let Some(fw) = v.firewall_id
        && !tx.firewall_has_device(fw, DeviceType::Instance, inst.id).await?
    {
        crate::firewall::attach_at_creation(
            tx,
            actor,
            fw,
            DeviceType::Instance,
            inst.id,
            &format!("{prefix}firewall_id"),
        )
        .await?;
    }
    record_version(tx, inst, &f).await?;
    Ok(f)
}

/// Gives `f` the default routes asked for; the interface that had one before loses it.
async fn set_default_routes(
    tx: &mut Tx<'_>,
    instance_id: i64,
    mut f: InterfaceRow,
    ipv4: Option<bool>,
    ipv6: Option<bool>,
) -> Result<InterfaceRow> {
    let now = Timestamp::now();
    for o in tx.interfaces_of_instance(instance_id).await? {
        if o.id == f.id || o.config_id.is_some() {
            continue;
        }
        let mut o2 = o.clone();
        if ipv4 == Some(true) {
            o2.default_ipv4 = false;
        }
        if ipv6 == Some(true) {
            o2.default_ipv6 = false;
        }
        if o2 != o {
            tx.interface_save(&o2, true, now).await?;
        }
    }
    if let Some(x) = ipv4 {
        f.default_ipv4 = x;
    }
    if let Some(x) = ipv6 {
        f.default_ipv6 = x;
    }
    tx.interface_save(&f, false, now).await
}

/// Keeps this version of the interface in the history.
pub(crate) async fn record_version(tx: &mut Tx<'_>, inst: &InstanceRow, f: &InterfaceRow) -> Result<()> {
    let a = addresses_in_tx(tx, inst).await?;
    let data = serde_json::to_string(&linode_record(inst, f, &a)).map_err(Error::internal)?;
    tx.interface_history_insert(f.id, inst.id, f.version, &data, Timestamp::now()).await
}

/// The Linode interfaces of a new instance (inside its create transaction); an instance created
/// without any gets a public one carrying both default routes.
pub(crate) async fn create_for_new_instance(
    tx: &mut Tx<'_>,
    actor: &Actor,
    inst: &InstanceRow,
    list: &[ValidLinodeInterface],
) -> Result<()> {
    if list.is_empty() {
        let public = ValidLinodeInterface {
            kind: LinodeKind::Public { addresses: Vec::new(), ranges: Vec::new() },
            default_ipv4: Some(true),
            default_ipv6: Some(true),
            firewall_id: None,
            ipv6: None,
        };
        insert_linode(tx, actor, inst, &public, "").await?;
    }
    for (i, v) in list.iter().enumerate() {
        insert_linode(tx, actor, inst, v, &format!("interfaces[{i}].")).await?;
    }
    Ok(())
}

/// The instance uses Linode interfaces (400 otherwise).
pub(crate) fn require_linode(inst: &InstanceRow) -> Result<()> {
    if inst.interface_generation != LINODE {
        return Err(Error::refused(
            "This instance uses configuration profile interfaces; upgrade it with POST .../upgrade-interfaces first",
        ));
    }
    Ok(())
}

/// Linode interfaces change only while the instance is off or being created.
fn require_off(inst: &InstanceRow) -> Result<()> {
    let s = Status::parse(&inst.status).unwrap_or(Status::Offline);
    if s != Status::Offline && s != Status::Provisioning {
        return Err(Error::refused(format!(
            "The instance is {}: its interfaces change only while it is offline (shut it down first)",
            s.name()
        )));
    }
    Ok(())
}

async fn interface_event(tx: &mut Tx<'_>, actor: &Actor, inst: &InstanceRow, action: &'static str) -> Result<()> {
    tx.event_insert(&event(actor, action, instance_entity(inst)).visible_with(GrantKind::Instance, inst.id).build())
        .await?;
    Ok(())
}

impl App {
    /// Restricted users need read_write on the VPC of a subnet they attach to; a firewall named
    /// must be one the actor may use.
    pub(crate) async fn check_linode_access(
        &self,
        actor: &Actor,
        list: &[ValidLinodeInterface],
        field: &str,
    ) -> Result<()> {
        let mut p = Problems::new();
        for (i, v) in list.iter().enumerate() {
            let prefix = if field.is_empty() { String::new() } else { format!("{field}[{i}].") };
            if let LinodeKind::Vpc { subnet_id, .. } = &v.kind {
                let s = self
                    .store
                    .subnets_by_ids(&[*subnet_id])
                    .await?
                    .into_iter()
                    .find(|s| s.account_id == actor.account_id());
                let ok = match s {
                    None => false,
                    Some(s) => {
                        match self.require_permission(actor, GrantKind::Vpc, s.vpc_id, Permission::ReadWrite).await {
                            Ok(()) => true,
                            Err(Error::NotFound) => false,
                            Err(e) => return Err(e),
                        }
                    }
                };
                p.check(ok, format!("{prefix}vpc.subnet_id"), "Subnet not found");
            }
            if let Some(fw) = v.firewall_id {
                self.check_firewall_for_new_service(actor, &mut p, fw, &format!("{prefix}firewall_id")).await?;
            }
        }
        p.finish()
    }

    /// The records of an instance's Linode interfaces, read by key.
    pub(crate) async fn linode_views(&self, inst: &InstanceRow, rows: &[InterfaceRow]) -> Result<Vec<LinodeInterface>> {
        let ips = self.store.ips_of_instances(&[inst.id]).await?;
        let shares = self.store.shares_of_instances(&[inst.id]).await?;
        let addresses: Vec<String> = shares.iter().map(|s| s.address.clone()).collect();
        let owners = self.store.ips_by_addresses(inst.account_id, &addresses).await?;
        let shared = owners
            .iter()
            .filter(|o| o.kind == IpKind::Ipv4 && o.instance_id != inst.id)
            .map(|o| (o.address.clone(), o.instance_id))
            .collect();
        let ranges = self
            .store
            .ranges_of_instance(inst.account_id, inst.id, &[])
            .await?
            .into_iter()
            .filter(|r| r.instance_id == inst.id)
            .map(|r| (format!("{}/{}", r.range_start, r.prefix), r.route_target))
            .collect();
        let a = Addresses::from_rows(&ips, shared, ranges);
        Ok(rows.iter().filter(|f| f.config_id.is_none()).map(|f| linode_record(inst, f, &a)).collect())
    }

    pub async fn instance_interface_list(&self, actor: &Actor, id: i64) -> Result<LinodeInterfaces> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceList, id).await?.into_inner();
        require_linode(&inst)?;
        let rows = self.store.interfaces_of_instance(id).await?;
        Ok(LinodeInterfaces { interfaces: self.linode_views(&inst, &rows).await? })
    }

    pub async fn instance_interface_get(&self, actor: &Actor, id: i64, interface_id: i64) -> Result<LinodeInterface> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceGet, id).await?.into_inner();
        require_linode(&inst)?;
        let f = self
            .store
            .interface_get(id, interface_id)
            .await?
            .filter(|f| f.config_id.is_none())
            .ok_or(Error::NotFound)?;
        self.linode_views(&inst, &[f]).await?.pop().ok_or(Error::NotFound)
    }

    pub async fn instance_interface_create(
        &self,
        actor: &Actor,
        id: i64,
        input: LinodeInterfaceRequest,
    ) -> Result<LinodeInterface> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceCreate, id).await?.into_inner();
        let mut p = Problems::new();
        let v = check_linode_interface(&mut p, input.parts(), false);
        p.finish()?;
        let v = v.ok_or_else(|| Error::internal("no interface checked"))?;
        self.check_linode_access(actor, std::slice::from_ref(&v), "").await?;
        let v = &v;
        let (inst, f) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    require_linode(&inst)?;
                    require_off(&inst)?;
                    let mine: Vec<InterfaceRow> =
                        tx.interfaces_of_instance(id).await?.into_iter().filter(|f| f.config_id.is_none()).collect();
                    let mut kinds: Vec<LinodeKind> = mine.iter().map(kind_of).collect();
                    kinds.push(v.kind.clone());
                    check_linode_set(&kinds.iter().collect::<Vec<_>>()).map_err(Error::refused)?;
                    let f = insert_linode(tx, actor, &inst, v, "").await?;
                    interface_event(tx, actor, &inst, "interface_create").await?;
                    Ok((inst, f))
                })
            })
            .await?;
        self.linode_views(&inst, &[f]).await?.pop().ok_or(Error::NotFound)
    }

    /// Updates a Linode interface of the same kind: its default routes, its VPC address and 1:1
    /// NAT, its VLAN label and address (a VPC interface keeps its subnet).
    pub async fn instance_interface_update(
        &self,
        actor: &Actor,
        id: i64,
        interface_id: i64,
        input: LinodeInterfaceRequest,
    ) -> Result<LinodeInterface> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceUpdate, id).await?.into_inner();
        let mut p = Problems::new();
        let v = check_linode_interface(&mut p, input.parts(), false);
        p.finish()?;
        let v = v.ok_or_else(|| Error::internal("no interface checked"))?;
        self.check_linode_access(actor, std::slice::from_ref(&v), "").await?;
        let v = &v;
        let (inst, f) = self
            .write(|tx| {
                Box::pin(async move {
                    let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    require_linode(&inst)?;
                    let mut f =
                        tx.interface_lock(id, interface_id).await?.filter(|f| f.config_id.is_none()).ok_or(Error::NotFound)?;
                    require_off(&inst)?;
                    if v.kind.purpose().name() != f.purpose {
                        return Err(Error::refused(format!("The interface is a {} interface; its type cannot change", f.purpose)));
                    }
                    check_public(tx, &inst, v, "").await?;
                    match &v.kind {
                        LinodeKind::Vpc { subnet_id, address, nat } => {
                            if Some(*subnet_id) != f.subnet_id {
                                return Err(Error::invalid(
                                    "vpc.subnet_id",
                                    "A VPC interface keeps its subnet: delete it and add another",
                                ));
                            }
                            if let Some(a) = address {
                                let s = tx.subnet_lock(None, *subnet_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                                let (lo, hi) = super::interfaces::assignable(s.first_v4, s.last_v4);
                                if !(lo..=hi).contains(&u32::from(*a)) {
                                    return Err(Error::invalid(
                                        "vpc.ipv4.addresses[0].address",
                                        format!("Must be inside the subnet {} and not one of its first two or last two addresses", s.ipv4),
                                    ));
                                }
                                f.vpc_ipv4 = Some(a.to_string());
                            }
                            f.nat_1_1 = None;
                            f = tx.interface_save(&f, false, Timestamp::now()).await.map_err(|e| match e {
                                Error::Unique(_) => Error::invalid("vpc.ipv4.addresses[0].address", "This address is already in use in the subnet"),
                                e => e,
                            })?;
                            if let Some(n) = nat {
                                f.nat_1_1 = Some(
                                    super::interfaces::nat_address(tx, id, n, "vpc.ipv4.addresses[0].nat_1_1_address").await?,
                                );
                            }
                        }
                        LinodeKind::Vlan { label, ipam_address } => {
                            let others = tx.interfaces_of_instance(id).await?;
                            if others.iter().any(|o| o.id != f.id && o.config_id.is_none() && o.label.as_deref() == Some(label)) {
                                return Err(Error::invalid("vlan.vlan_label", "An instance can be attached to a VLAN only once"));
                            }
                            f.label = Some(label.clone());
                            f.ipam_address = ipam_address.clone();
                        }
                        LinodeKind::Public { .. } => {}
                    }
                    let f = tx.interface_save(&f, true, Timestamp::now()).await?;
                    let f = set_default_routes(tx, id, f, v.default_ipv4, v.default_ipv6).await?;
                    if let Some(fw) = v.firewall_id
                        && !tx.firewall_has_device(fw, DeviceType::Instance, id).await?
                    {
                        crate::firewall::attach_at_creation(tx, actor, fw, DeviceType::Instance, id, "firewall_id").await?;
                    }
                    record_version(tx, &inst, &f).await?;
                    interface_event(tx, actor, &inst, "interface_update").await?;
                    Ok((inst, f))
                })
            })
            .await?;
        self.linode_views(&inst, &[f]).await?.pop().ok_or(Error::NotFound)
    }

    /// Deletes a Linode interface (only while the instance is off).
    pub async fn instance_interface_delete(&self, actor: &Actor, id: i64, interface_id: i64) -> Result<()> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceInterfaceDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let inst = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                require_linode(&inst)?;
                let f = tx
                    .interface_lock(id, interface_id)
                    .await?
                    .filter(|f| f.config_id.is_none())
                    .ok_or(Error::NotFound)?;
                if Status::parse(&inst.status).is_some_and(Status::is_powered) {
                    return Err(Error::refused("The interface is active: shut the instance down first"));
                }
                require_off(&inst)?;
                tx.interface_delete(f.id).await?;
                interface_event(tx, actor, &inst, "interface_delete").await
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_linode_interface_fields() {
        let e = Error::Invalid(vec![
            FieldError::new("interfaces[0].subnet_id", "x"),
            FieldError::new("interfaces[0].ipv4.vpc", "y"),
        ]);
        let Error::Invalid(list) = linode_fields(e, "interfaces[2].") else { panic!() };
        let fields: Vec<_> = list.iter().map(|e| e.field.clone().unwrap()).collect();
        assert_eq!(fields, ["interfaces[2].vpc.subnet_id", "interfaces[2].vpc.ipv4.addresses[0].address"]);
    }
}
