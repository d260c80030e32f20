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

/// A price in one region priced apart from the base price.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct RegionPrice {
    pub id: String,
    pub hourly: Micros,
    pub monthly: Micros,
}

/// The price of a usage-priced service (per GB): no monthly cap.
#[derive(Debug, Clone, Copy, Serialize, ToSchema, PartialEq)]
pub struct UsagePrice {
    pub hourly: Micros,
    pub monthly: Option<Micros>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct UsageRegionPrice {
    pub id: String,
    pub hourly: Micros,
    pub monthly: Option<Micros>,
}

/// A load balancer type (`/v4/nodebalancers/types`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BalancerType {
    pub id: String,
    pub label: String,
    pub price: Price,
    pub region_prices: Vec<RegionPrice>,
    pub transfer: i64,
}

/// A network transfer price (`/v4/network-transfer/prices`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TransferPrice {
    pub id: String,
    pub label: String,
    pub price: UsagePrice,
    pub region_prices: Vec<UsageRegionPrice>,
    pub transfer: i64,
}

/// The price in `region`: its region price when it has one, else the base price.
pub fn price_in(base: Price, region_prices: &[RegionPrice], region: &str) -> Price {
    region_prices.iter().find(|p| p.id == region).map_or(base, |p| Price { hourly: p.hourly, monthly: p.monthly })
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BackupsAddon {
    pub price: Price,
    pub region_prices: Vec<RegionPrice>,
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
    pub region_prices: Vec<RegionPrice>,
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
    /// Where a private image is stored; public images are in every region (`[]`).
    pub regions: Vec<ImageRegion>,
    pub tags: Vec<String>,
    pub total_size: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImageRegion {
    pub region: String,
    pub status: String,
}

pub const IMAGE_FILTERABLE: &[&str] =
    &["id", "label", "deprecated", "is_public", "size", "type", "vendor", "status", "tags"];

/// A maintenance policy (`/v4/maintenance/policies`): what happens to an instance when its host
/// needs maintenance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MaintenancePolicy {
    pub slug: String,
    pub label: String,
    pub description: String,
    /// `migrate` or `power_off_on`.
    #[serde(rename = "type")]
    pub kind: String,
    /// How long before the maintenance its notice comes, in seconds.
    pub notification_period_sec: i64,
    pub is_default: bool,
}

pub const MAINTENANCE_POLICY_FILTERABLE: &[&str] = &["slug", "label", "type", "is_default"];

/// Whether an instance type can be created in a region (`/v4/regions/availability`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegionAvailability {
    pub region: String,
    pub plan: String,
    pub available: bool,
}

pub const REGION_AVAILABILITY_FILTERABLE: &[&str] = &["region", "plan", "available"];

/// Whether VPCs can be created in a region, and with which IPv6 prefix lengths
/// (`/v4/regions/vpc-availability`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VpcAvailability {
    pub region: String,
    pub available: bool,
    pub available_ipv6_prefix_lengths: Vec<i64>,
}

pub const VPC_AVAILABILITY_FILTERABLE: &[&str] = &["region", "available"];
