//! The catalog: regions, instance types and images, as the API shows them.

use crate::money::Micros;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Resolvers {
    pub ipv4: String,
    pub ipv6: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Region {
    pub id: String,
    pub label: String,
    pub country: String,
    pub capabilities: Vec<String>,
    pub status: String,
    pub resolvers: Resolvers,
    pub site_type: String,
}

pub const REGION_FILTERABLE: &[&str] = &["id", "label", "country", "status", "capabilities", "site_type"];

/// Capability names as the reference spells them.
pub mod capability {
    pub const INSTANCES: &str = "Linodes";
    pub const NODEBALANCERS: &str = "NodeBalancers";
    pub const VPCS: &str = "VPCs";
    pub const FIREWALLS: &str = "Cloud Firewall";
    pub const VLANS: &str = "Vlans";
}

/// A price in millionths of a dollar; JSON numbers of dollars on the wire.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Price {
    pub hourly: Micros,
    pub monthly: Micros,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BackupsAddon {
    pub price: Price,
    pub region_prices: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Addons {
    pub backups: BackupsAddon,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstanceType {
    pub id: String,
    pub label: String,
    pub class: String,
    pub disk: i64,
    pub memory: i64,
    pub vcpus: i64,
    pub gpus: i64,
    pub network_out: i64,
    pub transfer: i64,
    pub price: Price,
    pub region_prices: Vec<serde_json::Value>,
    pub addons: Addons,
    pub successor: Option<String>,
}

pub const TYPE_FILTERABLE: &[&str] =
    &["id", "label", "class", "disk", "memory", "vcpus", "gpus", "network_out", "transfer"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Image {
    pub id: String,
    pub label: String,
    pub description: Option<String>,
    pub created: crate::Timestamp,
    pub updated: crate::Timestamp,
    pub created_by: String,
    pub deprecated: bool,
    pub is_public: bool,
    pub size: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub vendor: Option<String>,
    pub status: String,
    pub expiry: Option<crate::Timestamp>,
    pub eol: Option<crate::Timestamp>,
    pub capabilities: Vec<String>,
}

pub const IMAGE_FILTERABLE: &[&str] = &["id", "label", "deprecated", "is_public", "size", "type", "vendor", "status"];
