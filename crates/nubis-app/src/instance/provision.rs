//! Instance create, the write: one transaction stores the instance with its addresses (a public
//! IPv4 from the region's pool, SLAAC and link-local IPv6, a private IPv4 on request), what an
//! image deployment makes (disks and the profile booting them), its interfaces of the generation
//! the account allows, its firewall, then hands the instance to the runtime.

use nubis_ipam::{Ipv4Pool, MacAddr, link_local_address, slaac_address};
use nubis_model::firewall::DeviceType;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::{Alerts, Instance, Status};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::boot_data::BootData;
use nubis_store::instances::{InstanceRow, NewInstance};
use nubis_store::ips::{IpKind, IpRow, NewIp};
use rand::RngExt;

use super::create::{InstanceCreate, RequestedInterfaces, ValidCreate};
use super::deploy::{self, Deployment};
use super::generation::{self, LINODE};
use super::instance_entity;
use super::interfaces::{Target, create_interfaces};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

impl App {
    /// Creates an instance: `provisioning` at first, then `booting` and `running` (or `offline`
    /// when it is not to boot) as the runtime completes the steps.
    pub async fn instance_create(&self, actor: &Actor, input: InstanceCreate) -> Result<Instance> {
        self.authorize(actor, Op::InstanceCreate).await?;
        let usernames: Vec<String> = match &input.authorized_users {
            Some(_) => {
                self.store.users_of_account(actor.account_id()).await?.iter().map(|u| u.username.clone()).collect()
            }
            None => Vec::new(),
        };
        let mut p = Problems::new();
        if let Some(f) = input.firewall_id {
            self.check_firewall_for_new_service(actor, &mut p, f, "firewall_id").await?;
        }
        if let Some(b) = input.backup_id {
            self.check_backup_access(actor, &mut p, b).await?;
        }
        let v = self.check_create(actor, p, input, &usernames)?;
        if let RequestedInterfaces::Legacy(list) = &v.interfaces {
            self.check_interface_access(actor, list).await?;
        }
        if let RequestedInterfaces::Linode(list) = &v.interfaces {
            self.check_linode_access(actor, list, "interfaces").await?;
        }
        let hash = deploy::hash_opt(v.root_pass.as_deref()).await?;
        let (v, hash) = (&v, hash.as_deref());
        let row =
            self.write(|tx| Box::pin(async move { self.instance_insert_with(tx, actor, v, hash, None).await })).await?;
        self.runtime_drive(row.id);
        self.instance_view_now(actor, &row).await
    }

    /// Writes a new instance; `clone_of`: it is a clone of that instance (the caller copies its
    /// profiles, disks and interfaces, and the event is `instance_clone`).
    pub(crate) async fn instance_insert_with(
        &self,
        tx: &mut Tx<'_>,
        actor: &Actor,
        v: &ValidCreate,
        hash: Option<&str>,
        clone_of: Option<&InstanceRow>,
    ) -> Result<InstanceRow> {
        let now = Timestamp::now();
        let setting = tx.account_interfaces_setting(actor.account_id()).await?;
        let generation = generation::generation_for(
            setting.as_deref().unwrap_or(generation::DEFAULT_SETTING),
            v.generation.as_deref(),
        )
        .map_err(|r| Error::invalid("interface_generation", r))?;
        match &v.interfaces {
            RequestedInterfaces::Linode(list) if generation != LINODE && !list.is_empty() => {
                return Err(Error::invalid(
                    "interfaces[0].purpose",
                    "This instance gets profile interfaces (interface_generation legacy_config): describe them with \
                     purpose",
                ));
            }
            RequestedInterfaces::Legacy(list) if generation == LINODE && !list.is_empty() => {
                return Err(Error::invalid(
                    "interfaces[0].purpose",
                    "This instance gets Linode interfaces (interface_generation linode, from the account's \
                     interfaces_for_new_linodes): describe them with public, vpc or vlan",
                ));
            }
            _ => {}
        }
        let network_helper = match v.network_helper {
            Some(n) => n,
            None => tx.account_network_helper(actor.account_id()).await?,
        };
        let generated;
        let label = match &v.label {
            Some(l) => l.as_str(),
            None => {
                generated = generated_label();
                generated.as_str()
            }
        };
        let region = v.region.view.id.as_str();
        // The account-wide setting enrolls every new instance in the Backup service.
        let backups_enabled = v.backups_enabled || self.backups_default(tx, actor.account_id()).await?;
        let target = if v.booted { Status::Running } else { Status::Offline };
        let host_uuid = hex::encode(rand::rng().random::<[u8; 20]>());
        let inst = tx
            .instance_insert(&NewInstance {
                account_id: actor.account_id(),
                label,
                region,
                kind: &v.kind,
                image: v.image.as_ref().map(|i| i.id.as_str()),
                status: Status::Provisioning.name(),
                target_status: target.name(),
                op_username: actor.username(),
                root_pass_hash: hash,
                tags: &v.tags,
                group: &v.group,
                alerts: &Alerts::defaults(v.vcpus),
                backups_enabled,
                has_user_data: v.has_user_data,
                host_uuid: &host_uuid,
                interface_generation: generation,
                network_helper,
                created: now,
            })
            .await
            .map_err(|e| match (e, v.label.is_some()) {
                (Error::Unique(_), true) => Error::invalid("label", super::LABEL_TAKEN),
                // A generated label met an existing one: generate again.
                (Error::Unique(_), false) => Error::Retry,
                (e, _) => e,
            })?;
        let id = inst.id;
        self.billing_meter_instance(tx, &inst).await?;
        if inst.backups_enabled {
            self.backups_start_service(tx, &inst).await?;
        }
        allocate_instance_addresses(self, tx, actor.account_id(), &v.region, id, v.private_ip).await?;
        // An image deployment: its disks and the profile that boots them.
        let mut config_id = None;
        let keys =
            crate::sshkeys::authorized_keys(tx, actor.account_id(), &v.authorized_keys, &v.authorized_users).await?;
        let boot = BootData { user_data: v.user_data.clone(), authorized_keys: keys.clone() };
        tx.instance_boot_data_set(id, &boot).await?;
        if let Some(image) = &v.image {
            let d = Deployment {
                image,
                root_pass_hash: hash,
                keys: &keys,
                swap_mb: v.swap_mb,
                boot_size: v.boot_size,
                plan_disk_mb: v.plan_disk_mb,
                kernel: &v.kernel,
                network_helper,
            };
            config_id = Some(deploy::deploy_image(tx, id, &d, now).await?.0.id);
        }
        if let Some(b) = v.backup_id {
            config_id = super::backups::create_from(tx, actor.account_id(), b, &inst, v.plan_disk_mb).await?;
        }
        match &v.interfaces {
            _ if clone_of.is_some() => {}
            RequestedInterfaces::Legacy(list) if !list.is_empty() => {
                // Profile interfaces need a profile: an instance without an image gets one without
                // devices.
                let c = match config_id {
                    Some(c) => c,
                    None => deploy::empty_profile(tx, id, network_helper, now).await?.id,
                };
                config_id = Some(c);
                let t = Target { account_id: actor.account_id(), instance_id: id, region, config_id: Some(c) };
                create_interfaces(tx, t, 0, list).await?;
            }
            RequestedInterfaces::Legacy(_) if generation == LINODE => {
                super::linode_interfaces::create_for_new_instance(tx, actor, &inst, &[]).await?;
            }
            RequestedInterfaces::Legacy(_) => {}
            RequestedInterfaces::Linode(list) => {
                super::linode_interfaces::create_for_new_instance(tx, actor, &inst, list).await?;
            }
        }
        tx.instance_set_boot_config(id, config_id).await?;
        // Without a firewall_id, the account's default instance firewall, if any.
        let f = match v.firewall_id {
            Some(f) => Some(f),
            None => tx.firewall_defaults_lock(actor.account_id()).await?.linode,
        };
        if let Some(f) = f {
            crate::firewall::attach_at_creation(tx, actor, f, DeviceType::Instance, id, "firewall_id").await?;
        }
        if actor.restricted() {
            tx.grant_set(actor.user_id(), GrantKind::Instance, id, Some(Permission::ReadWrite)).await?;
        }
        let e = match clone_of {
            None => event(actor, "instance_create", instance_entity(&inst)).visible_with(GrantKind::Instance, id),
            Some(src) => event(actor, "instance_clone", instance_entity(src))
                .secondary(instance_entity(&inst))
                .visible_with(GrantKind::Instance, src.id),
        };
        let e = tx.event_insert(&e.status("started").build()).await?;
        tx.instance_start_transition(id, Status::Provisioning.name(), target.name(), Some(e), actor.username(), now)
            .await
    }
}

/// A new instance's addresses: a public IPv4 address from the region's pool, its SLAAC and
/// link-local IPv6 addresses, and a private IPv4 address on request.
pub(crate) async fn allocate_instance_addresses(
    app: &App,
    tx: &mut Tx<'_>,
    account_id: i64,
    region: &crate::catalog::RegionInfo,
    id: i64,
    private_ip: bool,
) -> Result<()> {
    let now = Timestamp::now();
    let name = region.view.id.as_str();
    let pool = Ipv4Pool::public(region.public_ipv4, region.public_prefix)
        .map_err(|e| Error::internal(format!("region {name}: {e}")))?;
    allocate_ipv4(tx, &pool, account_id, name, id, true).await?;
    let mac = MacAddr::from_seed(id as u64);
    let slaac = slaac_address(region.ipv6_pool, mac)
        .ok_or_else(|| Error::internal(format!("region {name}: the IPv6 pool has no room for SLAAC")))?;
    for (address, kind, public) in
        [(slaac.to_string(), IpKind::Slaac, true), (link_local_address(mac).to_string(), IpKind::LinkLocal, false)]
    {
        let n = NewIp {
            address: &address,
            v4: None,
            kind,
            public,
            account_id,
            region: name,
            instance_id: id,
            created: now,
        };
        tx.ip_insert(&n).await?;
    }
    if private_ip {
        allocate_ipv4(tx, &app.private_pool, account_id, name, id, false).await?;
    }
    Ok(())
}

/// Takes the lowest free address of `pool` for an instance, inside the transaction. An empty
/// pool is a 400; an address taken concurrently makes the transaction start over.
pub(crate) async fn allocate_ipv4(
    tx: &mut Tx<'_>,
    pool: &Ipv4Pool,
    account_id: i64,
    region: &str,
    instance_id: i64,
    public: bool,
) -> Result<IpRow> {
    let net = pool.net();
    let taken = tx.ipv4_taken(u32::from(net.network()), u32::from(net.broadcast())).await?;
    let a = pool.first_free(&taken).ok_or_else(|| {
        let which =
            if public { format!("public IPv4 addresses in region {region}") } else { "private IPv4 addresses".into() };
        Error::refused(format!("No {which} are left"))
    })?;
    let n = NewIp {
        address: &a.to_string(),
        v4: Some(u32::from(a)),
        kind: IpKind::Ipv4,
        public,
        account_id,
        region,
        instance_id,
        created: Timestamp::now(),
    };
    match tx.ip_insert(&n).await {
        Ok(row) => Ok(row),
        Err(Error::Unique(_)) => Err(Error::Retry),
        Err(e) => Err(e),
    }
}

pub(crate) fn generated_label() -> String {
    format!("instance-{}", hex::encode(rand::rng().random::<[u8; 5]>()))
}
