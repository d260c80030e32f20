//! IP addresses, an instance's addresses, IPv6 pools and ranges as the API shows them (spec 2.9,
//! 2.10; reference `IPAddress`, `IPAddressPrivate`, `IPAddressV6Slaac`, `IPAddressV6LinkLocal`,
//! `IPv6Pool`, `IPv6Range`, `IPv6RangeBGP`, with `linode_id` renamed `instance_id`).

use serde::Serialize;
use utoipa::ToSchema;

use crate::vpc::VpcIp;

/// The VPC address a public IPv4 address is in 1:1 NAT with.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VpcNat {
    pub address: String,
    pub subnet_id: i64,
    pub vpc_id: i64,
}

/// One IP address record.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IpAddress {
    pub address: String,
    pub gateway: Option<String>,
    pub subnet_mask: String,
    pub prefix: i64,
    /// `ipv4`, `ipv6`, `ipv6/pool` or `ipv6/range`.
    #[serde(rename = "type")]
    pub kind: String,
    pub public: bool,
    pub rdns: Option<String>,
    pub instance_id: i64,
    pub region: String,
    pub vpc_nat_1_1: Option<VpcNat>,
}

/// Filterable fields of `GET /v4/networking/ips` (the reference's, plus `instance_id`).
pub const IP_FILTERABLE: &[&str] = &["address", "prefix", "type", "rdns", "region", "instance_id", "public"];

/// An IPv6 range in an instance's addresses and in the ranges list (reference `IPv6Range`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Ipv6Range {
    pub range: String,
    pub prefix: i64,
    pub region: String,
    pub route_target: String,
}

/// One range viewed on its own (reference `IPv6RangeBGP`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Ipv6RangeView {
    pub range: String,
    pub prefix: i64,
    pub region: String,
    pub route_target: String,
    /// The range is shared with other instances.
    pub is_bgp: bool,
    /// The instances it is routed to, including those it is shared with.
    pub instances: Vec<i64>,
}

/// The answer of IPv6 range create.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Ipv6RangeCreated {
    /// With its prefix length.
    pub range: String,
    /// The SLAAC address it is routed to, without prefix length.
    pub route_target: String,
}

pub const IPV6_RANGE_FILTERABLE: &[&str] = &["range", "prefix", "region", "route_target"];

/// An IPv6 pool (reference `IPv6Pool`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Ipv6Pool {
    pub range: String,
    pub prefix: i64,
    pub region: String,
    pub route_target: Option<String>,
}

pub const IPV6_POOL_FILTERABLE: &[&str] = &["region"];

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InstanceIpv4 {
    pub public: Vec<IpAddress>,
    pub private: Vec<IpAddress>,
    pub shared: Vec<IpAddress>,
    pub reserved: Vec<IpAddress>,
    pub vpc: Vec<VpcIp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InstanceIpv6 {
    pub link_local: Option<IpAddress>,
    pub slaac: Option<IpAddress>,
    pub global: Vec<Ipv6Range>,
}

/// `GET /v4/compute/instances/{instance_id}/ips`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct InstanceIps {
    pub ipv4: InstanceIpv4,
    pub ipv6: InstanceIpv6,
}
