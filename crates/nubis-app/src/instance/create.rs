//! Instance create, the request and its checks (all reported at once). The write is in
//! [`super::provision`].

use nubis_model::catalog::{Image, capability};
use nubis_model::{Error, Problems, Result};
use serde::Deserialize;
use utoipa::ToSchema;

use super::deploy::{self, SWAP, check_kernel, check_root_access};
use super::interfaces::{InterfaceRequest, ValidInterface, check_interfaces};
use super::linode_request::{ValidLinodeInterface, check_linode_interface, check_linode_set};
use super::{check_group, check_label, check_tags};
use crate::App;
use crate::auth::Actor;
use crate::catalog::RegionInfo;

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
    /// An image of the catalog: the instance gets a disk with it, a swap disk and a
    /// configuration profile booting them.
    pub image: Option<String>,
    /// 7-128 characters with at least three of: lowercase letters, uppercase letters, digits,
    /// other characters. Required with an image unless keys are given. Stored only as an argon2
    /// hash, never returned.
    pub root_pass: Option<String>,
    /// Boot after provisioning: by default only when an image is deployed.
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
    /// `legacy_config` (interfaces on the configuration profile) or `linode` (Linode
    /// interfaces); the account's `interfaces_for_new_linodes` gives the default and the
    /// choices.
    pub interface_generation: Option<String>,
    /// Up to three interfaces. With profile interfaces: `public`, `vlan` (by label; created on
    /// first use) or `vpc` (on a subnet), in eth0..eth2 order. With Linode interfaces: each one
    /// of `public`, `vpc` or `vlan` with its default route.
    #[schema(schema_with = interfaces_schema)]
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub interfaces: Option<Vec<InterfaceRequest>>,
    /// Network Helper for the instance's profile; the account setting when omitted.
    pub network_helper: Option<bool>,
    /// The kernel of the profile an image deployment makes (default `linode/grub2`).
    pub kernel: Option<String>,
    /// The size of the image's disk in MB (default: the plan's disk less the swap disk).
    pub boot_size: Option<i64>,
    /// A firewall to assign the instance to (read_write access to it is required).
    pub firewall_id: Option<i64>,
    pub backups_enabled: Option<bool>,
    /// A successful backup of an instance of the account in the same region (instead of an
    /// image): the instance gets its disks and profiles.
    pub backup_id: Option<i64>,
    /// Public keys installed for root when an image is deployed.
    pub authorized_keys: Option<Vec<String>>,
    /// Users of the account whose profile SSH keys are installed for root.
    pub authorized_users: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub metadata: Option<Metadata>,
    /// The swap disk of an image deployment, MB (default 512).
    #[schema(schema_with = swap_schema)]
    pub swap_size: Option<i64>,
    /// StackScripts are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub stackscript_id: Option<i64>,
    pub stackscript_data: Option<serde_json::Value>,
    /// Only `disabled`: local disk encryption is not offered.
    #[schema(schema_with = disk_encryption_schema)]
    pub disk_encryption: Option<String>,
    /// Placement groups are not offered: only null.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub placement_group: Option<serde_json::Value>,
    /// Only `linode/migrate` (host maintenance does not happen here).
    #[schema(schema_with = maintenance_schema)]
    pub maintenance_policy: Option<String>,
    /// Reserved IPv4 addresses are not offered: empty or null.
    pub ipv4: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct Metadata {
    /// Base64-encoded cloud-config data.
    pub user_data: Option<String>,
}

fn is_base64(s: &str) -> bool {
    s.len().is_multiple_of(4)
        && s.trim_end_matches('=').bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && s.len() - s.trim_end_matches('=').len() <= 2
}

/// Checks `metadata.user_data` (at `field`); true when some was given.
pub(crate) fn check_user_data(p: &mut Problems, m: Option<&Metadata>, field: &str) -> bool {
    let user_data = m.and_then(|m| m.user_data.as_deref());
    if let Some(u) = user_data {
        p.check(is_base64(u) && u.len() <= 87_384, field, "Must be base64 of at most 65535 bytes");
    }
    user_data.is_some()
}

/// The interfaces of a create request, of either generation (which one is decided in the
/// transaction, from the account's setting).
pub(crate) enum RequestedInterfaces {
    Legacy(Vec<ValidInterface>),
    Linode(Vec<ValidLinodeInterface>),
}

/// A create request that passed every check that does not need the database.
pub(crate) struct ValidCreate {
    pub region: RegionInfo,
    pub kind: String,
    pub image: Option<Image>,
    pub root_pass: Option<String>,
    pub booted: bool,
    pub label: Option<String>,
    pub tags: Vec<String>,
    pub group: String,
    pub private_ip: bool,
    /// The generation asked for (the account's setting decides when `None`).
    pub generation: Option<String>,
    pub interfaces: RequestedInterfaces,
    pub network_helper: Option<bool>,
    pub kernel: String,
    pub boot_size: Option<i64>,
    pub swap_mb: i64,
    pub backups_enabled: bool,
    pub has_user_data: bool,
    /// User data and root's SSH keys, kept for the runtime and the metadata service.
    /// Base64, as given (run at first boot by the netns runtime).
    pub user_data: Option<String>,
    pub vcpus: i64,
    /// The plan's disk, MB.
    pub plan_disk_mb: i64,
    pub authorized_keys: Vec<String>,
    pub authorized_users: Vec<String>,
    /// A firewall to assign the instance to, in the create transaction.
    pub firewall_id: Option<i64>,
    /// A backup (of an instance of the account) whose disks and profiles the instance gets
    /// instead of an image's.
    pub backup_id: Option<i64>,
}

/// Hosted fields nubis does not offer: each refused with 400 when given a value that asks for
/// it.
fn refuse_unoffered(p: &mut Problems, input: &InstanceCreate) {
    p.check(
        input.disk_encryption.as_deref().is_none_or(|d| d == "disabled"),
        "disk_encryption",
        "Local disk encryption is not offered: only \"disabled\"",
    );
    p.check(input.placement_group.is_none(), "placement_group", "Placement groups are not offered");
    p.check(
        input.maintenance_policy.as_deref().is_none_or(|m| m == "linode/migrate"),
        "maintenance_policy",
        "Only \"linode/migrate\" is offered",
    );
    p.check(input.ipv4.as_ref().is_none_or(Vec::is_empty), "ipv4", "Reserved IPv4 addresses are not offered");
    if input.backup_id.is_some() && input.image.is_some() {
        p.add("image", "image and backup_id are mutually exclusive");
    }
    if input.stackscript_id.is_some() {
        p.add("stackscript_id", "StackScript not found");
    }
}

impl App {
    /// `p` may already hold problems found by the caller (the firewall check).
    pub(crate) fn check_create(
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
        crate::sshkeys::check_keys(&mut p, input.authorized_keys.as_ref());
        let region = match input.region.as_deref() {
            None => {
                p.add("region", "Region is required");
                None
            }
            Some(r) => match self.catalog.region(r) {
                None => {
                    p.add("region", "region is not valid");
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
                p.check(found.is_some(), "type", "A valid plan type by that ID was not found");
                found
            }
        };
        let image = match &input.image {
            None => None,
            Some(i) => {
                let found = self.catalog.image(i).cloned();
                p.check(found.is_some(), "image", "image is not valid");
                found
            }
        };
        if input.image.is_some() {
            check_root_access(
                &mut p,
                input.root_pass.as_deref(),
                input.authorized_keys.as_ref(),
                input.authorized_users.as_ref(),
                "root_pass",
            );
        } else if let Some(pw) = &input.root_pass {
            p.check(deploy::root_pass_ok(pw), "root_pass", deploy::WEAK_PASSWORD);
        }
        if let Some(l) = &input.label {
            check_label(&mut p, l);
        }
        if let Some(g) = &input.group {
            check_group(&mut p, g);
        }
        if let Some(k) = &input.kernel {
            check_kernel(&mut p, "kernel", k);
        }
        let swap_mb = input.swap_size.unwrap_or(deploy::DEFAULT_SWAP_MB);
        if !(SWAP.0..=SWAP.1).contains(&swap_mb) {
            p.add("swap_size", "Must be between 0 and 1048576");
        }
        if input.boot_size.is_some_and(|b| b < 1) {
            p.add("boot_size", "Must be at least 1");
        }
        if let (Some(img), Some(t)) = (&image, t)
            && (SWAP.0..=SWAP.1).contains(&swap_mb)
            && let Err((field, reason)) = deploy::deployment_sizes(img, t.disk, swap_mb, input.boot_size)
        {
            p.add(field, reason);
        }
        refuse_unoffered(&mut p, &input);
        let linode = match input.interface_generation.as_deref() {
            // Not named: the interfaces' own shape says which kind they are (the account's
            // setting decides the generation in the transaction, and refuses a mismatch).
            None => Some(input.interfaces.iter().flatten().any(InterfaceRequest::is_linode_shaped)),
            Some(g @ (super::generation::LEGACY | super::generation::LINODE)) => Some(g == super::generation::LINODE),
            Some(_) => {
                p.add("interface_generation", "Must be legacy_config or linode");
                None
            }
        };
        let list = input.interfaces.as_deref().unwrap_or_default();
        let interfaces = if linode == Some(true) {
            let mut out = Vec::new();
            for (i, f) in list.iter().enumerate() {
                let mut q = Problems::new();
                let r = f.as_linode(&mut q);
                if let Some(v) = check_linode_interface(&mut q, r, true) {
                    out.push(v);
                }
                p.extend_prefixed(&format!("interfaces[{i}]"), q);
            }
            if let Err(reason) = check_linode_set(&out.iter().map(|v| &v.kind).collect::<Vec<_>>()) {
                p.add("interfaces", reason);
            }
            RequestedInterfaces::Linode(out)
        } else {
            RequestedInterfaces::Legacy(check_interfaces(&mut p, region.as_ref(), list, true))
        };
        let has_user_data = check_user_data(&mut p, input.metadata.as_ref(), "metadata.user_data");
        p.finish()?;
        let region = region.ok_or_else(|| Error::internal("region passed its checks without a value"))?;
        let deployed = image.is_some() || input.backup_id.is_some();
        Ok(ValidCreate {
            region,
            kind: input.kind.unwrap_or_default(),
            image,
            root_pass: input.root_pass,
            // The hosted API boots by default only what it deployed an image (or backup) to.
            booted: input.booted.unwrap_or(deployed),
            label: input.label,
            tags: input.tags.unwrap_or_default(),
            group: input.group.unwrap_or_default(),
            private_ip: input.private_ip.unwrap_or(false),
            generation: input.interface_generation,
            interfaces,
            network_helper: input.network_helper,
            kernel: input.kernel.unwrap_or_else(|| deploy::IMAGE_KERNEL.to_string()),
            boot_size: input.boot_size,
            swap_mb,
            backups_enabled: input.backups_enabled.unwrap_or(false),
            has_user_data,
            user_data: input.metadata.as_ref().and_then(|m| m.user_data.clone()),
            vcpus: t.map_or(1, |t| t.vcpus),
            plan_disk_mb: t.map_or(0, |t| t.disk),
            authorized_keys: input.authorized_keys.unwrap_or_default(),
            authorized_users: input.authorized_users.unwrap_or_default(),
            firewall_id: input.firewall_id,
            backup_id: input.backup_id,
        })
    }
}

fn swap_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{int, or_null, schema};
    schema(or_null(int(SWAP.0, SWAP.1)))
}

pub(crate) fn disk_encryption_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(&["disabled"])))
}

fn maintenance_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(&["linode/migrate"])))
}

pub(crate) fn interfaces_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::or_null(serde_json::json!({
        "type": "array", "maxItems": super::interfaces::MAX_INTERFACES,
        "items": {"$ref": "#/components/schemas/InterfaceRequest"}
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_is_base64() {
        assert!(is_base64("I2Nsb3VkLWNvbmZpZw=="));
        assert!(!is_base64("not base64!"));
    }
}
