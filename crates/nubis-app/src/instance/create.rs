//! Instance create: the request, its checks (all reported at once), the root password's
//! strength and argon2 hash, and the one write transaction that stores the instance with its
//! addresses (a public IPv4 from the region's pool, SLAAC and link-local IPv6, a private IPv4 on
//! request) and interfaces, then hands the instance to the runtime.

use nubis_ipam::{Ipv4Pool, MacAddr, link_local_address, slaac_address};
use nubis_model::catalog::capability;
use nubis_model::firewall::DeviceType;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::{Alerts, Instance, Status};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::instances::{InstanceRow, NewInstance};
use nubis_store::ips::{IpKind, IpRow, NewIp};
use rand::RngExt;
use serde::Deserialize;
use utoipa::ToSchema;

use super::interfaces::{InterfaceRequest, ValidInterface, check_interfaces, create_interfaces};
use super::{check_group, check_label, check_tags, instance_entity};
use crate::App;
use crate::auth::{Actor, Op};
use crate::catalog::RegionInfo;
use crate::events::event;

/// `POST /v4/compute/instances`. (No `Debug`: it carries the root password.)
#[derive(Default, Deserialize, ToSchema)]
pub struct InstanceCreate {
    /// A region with the `Linodes` capability.
    #[schema(required = true, value_type = String)]
    pub region: Option<String>,
    /// An instance type of the catalog.
    #[serde(rename = "type")]
    #[schema(required = true, value_type = String)]
    pub kind: Option<String>,
    /// An image of the catalog; with an image, `root_pass` is required.
    pub image: Option<String>,
    /// 7-128 characters with at least three of: lowercase letters, uppercase letters, digits,
    /// other characters. Stored only as an argon2 hash, never returned.
    pub root_pass: Option<String>,
    /// Boot after provisioning (default true); false leaves the instance `offline`.
    pub booted: Option<bool>,
    /// Generated when omitted; 3-64 characters, unique among the account's instances.
    #[schema(schema_with = super::label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
    #[schema(schema_with = super::group_schema)]
    pub group: Option<String>,
    /// Also give the instance a private IPv4 address from `192.168.128.0/17`.
    pub private_ip: Option<bool>,
    /// Up to three interfaces (eth0..eth2): `public`, `vlan` (by label; created on first use) or
    /// `vpc` (on a subnet).
    #[schema(schema_with = interfaces_schema)]
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub interfaces: Option<Vec<InterfaceRequest>>,
    /// A firewall to assign the instance to (read_write access to it is required).
    pub firewall_id: Option<i64>,
    pub backups_enabled: Option<bool>,
    /// Backups are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub backup_id: Option<i64>,
    pub authorized_keys: Option<Vec<String>>,
    pub authorized_users: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub metadata: Option<Metadata>,
    #[schema(schema_with = swap_schema)]
    pub swap_size: Option<i64>,
    /// StackScripts are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub stackscript_id: Option<i64>,
    pub stackscript_data: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct Metadata {
    /// Base64-encoded cloud-config data.
    pub user_data: Option<String>,
}

/// The reference's message for a weak password.
const WEAK_PASSWORD: &str = "Password does not meet strength requirement: use 7-128 characters with at least three of \
                             lowercase letters, uppercase letters, digits and other characters";

/// The root password's rule: 7..128 characters (the reference's `minLength`/`maxLength`) and a
/// strength requirement, here at least three of the four character classes.
pub(crate) fn root_pass_ok(pw: &str) -> bool {
    let n = pw.chars().count();
    let classes = [
        pw.chars().any(|c| c.is_lowercase()),
        pw.chars().any(|c| c.is_uppercase()),
        pw.chars().any(|c| c.is_ascii_digit()),
        pw.chars().any(|c| !c.is_alphanumeric()),
    ];
    (7..=128).contains(&n) && classes.iter().filter(|x| **x).count() >= 3
}

fn looks_like_ssh_key(k: &str) -> bool {
    let mut parts = k.split_whitespace();
    let (Some(kind), Some(body)) = (parts.next(), parts.next()) else { return false };
    (kind.starts_with("ssh-") || kind.starts_with("ecdsa-") || kind.starts_with("sk-"))
        && body.len() >= 16
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
}

fn is_base64(s: &str) -> bool {
    s.len().is_multiple_of(4)
        && s.trim_end_matches('=').bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && s.len() - s.trim_end_matches('=').len() <= 2
}

/// A create request that passed every check that does not need the database.
pub(crate) struct ValidCreate {
    pub region: RegionInfo,
    pub kind: String,
    pub image: Option<String>,
    pub root_pass: Option<String>,
    pub booted: bool,
    pub label: Option<String>,
    pub tags: Vec<String>,
    pub group: String,
    pub private_ip: bool,
    pub interfaces: Vec<ValidInterface>,
    pub backups_enabled: bool,
    pub has_user_data: bool,
    /// User data and root's SSH keys, kept for the runtime and the metadata service.
    pub boot: nubis_store::boot_data::BootData,
    pub vcpus: i64,
    /// A firewall to assign the instance to, in the create transaction.
    pub firewall_id: Option<i64>,
}

impl App {
    /// `p` may already hold problems found by the caller (the firewall check).
    fn check_create(
        &self,
        actor: &Actor,
        mut p: Problems,
        input: InstanceCreate,
        usernames: &[String],
    ) -> Result<ValidCreate> {
        check_tags(actor, &mut p, input.tags.as_ref())?;
        for (i, u) in input.authorized_users.iter().flatten().enumerate() {
            p.check(usernames.contains(u), format!("authorized_users[{i}]"), "User not found");
        }
        let region = match input.region.as_deref() {
            None => {
                p.add("region", "Region is required");
                None
            }
            Some(r) => match self.catalog.region(r) {
                None => {
                    p.add("region", "Region not found");
                    None
                }
                Some(info) if !info.has(capability::INSTANCES) => {
                    p.add("region", "Instances are not available in this region");
                    None
                }
                Some(info) => Some(info.clone()),
            },
        };
        let t = match input.kind.as_deref() {
            None => {
                p.add("type", "Type is required");
                None
            }
            Some(t) => {
                let found = self.catalog.instance_type(t);
                p.check(found.is_some(), "type", "Type not found");
                found
            }
        };
        if let Some(i) = &input.image {
            p.check(self.catalog.image(i).is_some(), "image", "Image not found");
        }
        match (&input.image, &input.root_pass) {
            (Some(_), None) => p.add("root_pass", "root_pass is required when deploying an image"),
            (_, Some(pw)) => p.check(root_pass_ok(pw), "root_pass", WEAK_PASSWORD),
            (None, None) => {}
        }
        if let Some(l) = &input.label {
            check_label(&mut p, l);
        }
        if let Some(g) = &input.group {
            check_group(&mut p, g);
        }
        let interfaces = check_interfaces(&mut p, region.as_ref(), input.interfaces.as_deref().unwrap_or_default());
        if input.backup_id.is_some() {
            p.add("backup_id", "Backup not found");
        }
        if input.backup_id.is_some() && input.image.is_some() {
            p.add("image", "image and backup_id are mutually exclusive");
        }
        if input.stackscript_id.is_some() {
            p.add("stackscript_id", "StackScript not found");
        }
        for (i, k) in input.authorized_keys.iter().flatten().enumerate() {
            p.check(looks_like_ssh_key(k), format!("authorized_keys[{i}]"), "Must be an SSH public key");
        }
        if input.swap_size.is_some_and(|s| !(SWAP.0..=SWAP.1).contains(&s)) {
            p.add("swap_size", "Must be between 0 and 1048576");
        }
        let user_data = input.metadata.as_ref().and_then(|m| m.user_data.as_deref());
        if let Some(u) = user_data {
            p.check(is_base64(u) && u.len() <= 87_384, "metadata.user_data", "Must be base64 of at most 65535 bytes");
        }
        p.finish()?;
        let region = region.ok_or_else(|| Error::internal("region passed its checks without a value"))?;
        Ok(ValidCreate {
            region,
            kind: input.kind.unwrap_or_default(),
            image: input.image,
            root_pass: input.root_pass,
            booted: input.booted.unwrap_or(true),
            label: input.label,
            tags: input.tags.unwrap_or_default(),
            group: input.group.unwrap_or_default(),
            private_ip: input.private_ip.unwrap_or(false),
            interfaces,
            backups_enabled: input.backups_enabled.unwrap_or(false),
            has_user_data: user_data.is_some(),
            boot: nubis_store::boot_data::BootData {
                user_data: user_data.map(String::from),
                authorized_keys: input.authorized_keys.clone().unwrap_or_default(),
            },
            vcpus: t.map_or(1, |t| t.vcpus),
            firewall_id: input.firewall_id,
        })
    }

    /// Creates an instance: `provisioning` at first, then `booting` and `running` (or `offline`
    /// when `booted` is false) as the runtime completes the steps.
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
        let v = self.check_create(actor, p, input, &usernames)?;
        self.check_interface_access(actor, &v.interfaces).await?;
        let root_pass_hash = match v.root_pass.clone() {
            None => None,
            Some(pw) => Some(
                tokio::task::spawn_blocking(move || hash_password(&pw))
                    .await
                    .map_err(|e| Error::internal(format!("password hashing: {e}")))??,
            ),
        };
        let (v, hash) = (&v, root_pass_hash.as_deref());
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let row = self.instance_insert_all(tx, actor, v, hash).await?;
                    Ok(row)
                })
            })
            .await?;
        self.runtime_drive(row.id);
        self.instance_view_now(actor, &row).await
    }

    async fn instance_insert_all(
        &self,
        tx: &mut Tx<'_>,
        actor: &Actor,
        v: &ValidCreate,
        hash: Option<&str>,
    ) -> Result<InstanceRow> {
        let now = Timestamp::now();
        let generated;
        let label = match &v.label {
            Some(l) => l.as_str(),
            None => {
                generated = generated_label();
                generated.as_str()
            }
        };
        let region = v.region.view.id.as_str();
        let target = if v.booted { Status::Running } else { Status::Offline };
        let host_uuid = hex::encode(rand::rng().random::<[u8; 20]>());
        let inst = tx
            .instance_insert(&NewInstance {
                account_id: actor.account_id(),
                label,
                region,
                kind: &v.kind,
                image: v.image.as_deref(),
                status: Status::Provisioning.name(),
                target_status: target.name(),
                op_username: actor.username(),
                root_pass_hash: hash,
                tags: &v.tags,
                group: &v.group,
                alerts: &Alerts::defaults(v.vcpus),
                backups_enabled: v.backups_enabled,
                has_user_data: v.has_user_data,
                host_uuid: &host_uuid,
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
        let pool = Ipv4Pool::public(v.region.public_ipv4, v.region.public_prefix)
            .map_err(|e| Error::internal(format!("region {region}: {e}")))?;
        let public = allocate_ipv4(tx, &pool, actor.account_id(), region, id, true).await?.address;
        let mac = MacAddr::from_seed(id as u64);
        let slaac = slaac_address(v.region.ipv6_pool, mac)
            .ok_or_else(|| Error::internal(format!("region {region}: the IPv6 pool has no room for SLAAC")))?;
        for (address, kind, public) in
            [(slaac.to_string(), IpKind::Slaac, true), (link_local_address(mac).to_string(), IpKind::LinkLocal, false)]
        {
            let n = NewIp {
                address: &address,
                v4: None,
                kind,
                public,
                account_id: actor.account_id(),
                region,
                instance_id: id,
                created: now,
            };
            tx.ip_insert(&n).await?;
        }
        if v.private_ip {
            allocate_ipv4(tx, &self.private_pool, actor.account_id(), region, id, false).await?;
        }
        create_interfaces(tx, actor.account_id(), id, region, &public, &v.interfaces).await?;
        tx.instance_boot_data_insert(id, &v.boot).await?;
        if let Some(f) = v.firewall_id {
            crate::firewall::attach_at_creation(tx, actor, f, DeviceType::Instance, id, "firewall_id").await?;
        }
        if actor.restricted() {
            tx.grant_set(actor.user_id(), GrantKind::Instance, id, Some(Permission::ReadWrite)).await?;
        }
        let e = tx
            .event_insert(
                &event(actor, "instance_create", instance_entity(&inst))
                    .visible_with(GrantKind::Instance, id)
                    .status("started")
                    .build(),
            )
            .await?;
        tx.instance_start_transition(id, Status::Provisioning.name(), target.name(), Some(e), actor.username(), now)
            .await
    }
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

fn generated_label() -> String {
    format!("instance-{}", hex::encode(rand::rng().random::<[u8; 5]>()))
}

/// The argon2id hash (PHC string) of a password; the password itself is never stored.
fn hash_password(pw: &str) -> Result<String> {
    use argon2::{Argon2, PasswordHash, PasswordHasher};
    let h: PasswordHash =
        Argon2::default().hash_password(pw.as_bytes()).map_err(|e| Error::internal(format!("argon2: {e}")))?;
    Ok(h.to_string())
}

const SWAP: (i64, i64) = (0, 1_048_576);

fn swap_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{int, or_null, schema};
    schema(or_null(int(SWAP.0, SWAP.1)))
}

fn interfaces_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::or_null(serde_json::json!({
        "type": "array", "maxItems": super::interfaces::MAX_INTERFACES,
        "items": {"$ref": "#/components/schemas/InterfaceRequest"}
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_passwords_need_length_and_three_character_classes() {
        for ok in ["aComplexP@ssword", "Abcdef1", "abc-DEF-123", "пароль1Z!"] {
            assert!(root_pass_ok(ok), "{ok}");
        }
        for bad in
            ["Abc1!", "password", "password123", "PASSWORD!!", "aaaaaaaaaaaa", &format!("Aa1{}", "x".repeat(126))]
        {
            assert!(!root_pass_ok(bad), "{bad}");
        }
    }

    #[test]
    fn hashes_are_argon2id_and_salted() {
        let a = hash_password("aComplexP@ssword").unwrap();
        let b = hash_password("aComplexP@ssword").unwrap();
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b);
        assert!(!a.contains("aComplexP@ssword"));
    }

    #[test]
    fn ssh_keys_and_base64() {
        assert!(looks_like_ssh_key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB user@host"));
        assert!(!looks_like_ssh_key("not a key"));
        assert!(is_base64("I2Nsb3VkLWNvbmZpZw=="));
        assert!(!is_base64("not base64!"));
    }
}
