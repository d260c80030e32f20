//! Firewall and firewall-device records as the API shows them (spec 2.7, 2.8; reference
//! `Firewall` and `FirewallDevices`, with the device type `linode` renamed `instance`). The
//! firewall record carries no devices: they are listed through `.../devices`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{FirewallRules, WrittenRules};
use crate::Timestamp;

/// Spec 3.1: `enabled` at creation, `disabled` and back through an update, `deleted` only through
/// the delete operation (a deleted firewall is gone: it is never listed or shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FirewallStatus {
    Enabled,
    Disabled,
    Deleted,
}

impl FirewallStatus {
    pub fn name(self) -> &'static str {
        match self {
            FirewallStatus::Enabled => "enabled",
            FirewallStatus::Disabled => "disabled",
            FirewallStatus::Deleted => "deleted",
        }
    }
    pub fn parse(s: &str) -> Option<FirewallStatus> {
        match s {
            "enabled" => Some(FirewallStatus::Enabled),
            "disabled" => Some(FirewallStatus::Disabled),
            "deleted" => Some(FirewallStatus::Deleted),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Firewall {
    pub id: i64,
    pub label: String,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub status: FirewallStatus,
    pub rules: VersionedRules,
    pub tags: Vec<String>,
}

/// A firewall's rules as answered: with their version (1 at creation, one more at each change)
/// and fingerprint (8 hex digits of a hash of the rules).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VersionedRules {
    /// As written: rules and references to rule sets.
    #[serde(flatten)]
    pub rules: WrittenRules,
    pub version: i64,
    pub fingerprint: String,
}

impl std::ops::Deref for VersionedRules {
    type Target = WrittenRules;
    fn deref(&self) -> &WrittenRules {
        &self.rules
    }
}

/// A firewall's rules with rule sets and prefix lists expanded (`.../rules/expansion`), with the
/// firewall's rule version and fingerprint.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpandedRules {
    #[serde(flatten)]
    pub rules: FirewallRules,
    pub version: i64,
    pub fingerprint: String,
}

/// One entry of a firewall's rule history.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RuleVersion {
    /// When this version was made.
    pub updated: Timestamp,
    /// The firewall's status then.
    pub status: FirewallStatus,
    pub rules: RuleVersionRef,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RuleVersionRef {
    pub version: i64,
}

pub const RULE_VERSION_FILTERABLE: &[&str] = &["version", "rules.version", "updated", "status"];

/// The account's default firewalls (`/networking/firewalls/settings`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FirewallSettings {
    pub default_firewall_ids: DefaultFirewallIds,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct DefaultFirewallIds {
    /// The hosted API's `linode` (the names layer renames it for clients of the hosted API).
    pub instance: Option<i64>,
    pub nodebalancer: Option<i64>,
    pub public_interface: Option<i64>,
    pub vpc_interface: Option<i64>,
}

/// A firewall template: rules to start a firewall from.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FirewallTemplate {
    pub slug: String,
    pub rules: FirewallRules,
}

/// The kind of service a firewall device assigns the firewall to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeviceType {
    Instance,
    Nodebalancer,
}

impl DeviceType {
    pub fn name(self) -> &'static str {
        match self {
            DeviceType::Instance => "instance",
            DeviceType::Nodebalancer => "nodebalancer",
        }
    }
    pub fn parse(s: &str) -> Option<DeviceType> {
        match s {
            "instance" => Some(DeviceType::Instance),
            "nodebalancer" => Some(DeviceType::Nodebalancer),
            _ => None,
        }
    }
    /// The API path of a service of this kind.
    pub fn url(self, id: i64) -> String {
        match self {
            DeviceType::Instance => format!("/v4/compute/instances/{id}"),
            DeviceType::Nodebalancer => format!("/v4/nodebalancers/{id}"),
        }
    }
}

/// The service a device assigns its firewall to.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DeviceEntity {
    pub id: i64,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: DeviceType,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FirewallDevice {
    pub id: i64,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub entity: DeviceEntity,
}

/// Filterable fields of firewall lists (the reference marks these `x-linode-filterable`).
pub const FIREWALL_FILTERABLE: &[&str] = &["id", "label", "created", "updated", "tags"];

/// Filterable fields of the devices list.
pub const DEVICE_FILTERABLE: &[&str] = &["id", "created", "updated"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [FirewallStatus::Enabled, FirewallStatus::Disabled, FirewallStatus::Deleted] {
            assert_eq!(FirewallStatus::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        for t in [DeviceType::Instance, DeviceType::Nodebalancer] {
            assert_eq!(DeviceType::parse(t.name()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
        assert_eq!(DeviceType::parse("linode"), None);
        assert_eq!(DeviceType::Instance.url(7), "/v4/compute/instances/7");
        assert_eq!(DeviceType::Nodebalancer.url(7), "/v4/nodebalancers/7");
    }
}
