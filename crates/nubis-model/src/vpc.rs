//! VPCs and their subnets as the API shows them (spec 2.2, 2.3; reference `VPC`, `VPCSubnet`,
//! `IPAddressesVPC`, with `linodes`/`linode_id` renamed to `instances`/`instance_id`).

use serde::Serialize;
use utoipa::ToSchema;

use crate::Timestamp;

/// An IPv6 range of a VPC or subnet (`{"range": "2001:db8:100::/52"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Ipv6RangeEntry {
    pub range: String,
}

/// The `ipv6` of a VPC interface (a profile interface with purpose `vpc`, or a Linode
/// interface's `vpc`): its SLAAC /64 with the interface's address, routed ranges of the subnet,
/// and whether the addresses are public.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InterfaceIpv6 {
    pub slaac: Vec<InterfaceSlaac>,
    pub ranges: Vec<Ipv6RangeEntry>,
    pub is_public: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InterfaceSlaac {
    pub range: String,
    pub address: String,
}

/// The default and forbidden IPv4 ranges of VPCs (`GET /v4/vpcs/default-ranges`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VpcDefaultRanges {
    pub default_ipv4_ranges: Vec<String>,
    pub forbidden_ipv4_ranges: Vec<String>,
}

/// An interface of an instance on a subnet, as the subnet lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SubnetInterface {
    pub id: i64,
    /// The instance is powered on with the configuration this interface belongs to.
    pub active: bool,
    /// The configuration profile of the interface (null for a Linode interface).
    pub config_id: Option<i64>,
}

/// An instance with at least one interface on a subnet.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SubnetInstance {
    pub id: i64,
    pub interfaces: Vec<SubnetInterface>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Subnet {
    pub id: i64,
    pub label: String,
    pub ipv4: String,
    /// The subnet's IPv6 range (inside its VPC's), or none.
    pub ipv6: Vec<Ipv6RangeEntry>,
    pub instances: Vec<SubnetInstance>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Vpc {
    pub id: i64,
    pub label: String,
    pub description: String,
    pub region: String,
    /// The VPC's IPv6 range, or none.
    pub ipv6: Vec<Ipv6RangeEntry>,
    pub subnets: Vec<Subnet>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// One address of a VPC interface (`GET /v4/vpcs/ips`, `GET /v4/vpcs/{id}/ips`, and the `vpc`
/// part of an instance's addresses).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VpcIp {
    pub address: Option<String>,
    pub address_range: Option<String>,
    pub active: bool,
    /// The configuration profile of the interface (null for a Linode interface).
    pub config_id: Option<i64>,
    pub gateway: Option<String>,
    pub interface_id: i64,
    pub instance_id: i64,
    pub nat_1_1: Option<String>,
    pub prefix: Option<i64>,
    pub region: String,
    pub subnet_id: i64,
    pub subnet_mask: String,
    pub vpc_id: i64,
}

/// One IPv6 range of a VPC interface (`GET /v4/vpcs/ipv6s`, `GET /v4/vpcs/{id}/ipv6s`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VpcIpv6 {
    pub active: bool,
    pub config_id: Option<i64>,
    pub interface_id: i64,
    pub instance_id: i64,
    pub ipv6_range: String,
    pub ipv6_is_public: Option<bool>,
    pub ipv6_addresses: Vec<VpcSlaac>,
    pub region: String,
    pub subnet_id: i64,
    pub vpc_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VpcSlaac {
    pub slaac_address: String,
}

/// Filterable fields (the reference's `x-linode-filterable`).
pub const VPC_FILTERABLE: &[&str] = &["id", "label", "region", "description", "created", "updated"];
pub const SUBNET_FILTERABLE: &[&str] = &["id", "label", "ipv4", "created", "updated"];
pub const VPC_IP_FILTERABLE: &[&str] = &["active", "config_id", "instance_id", "region", "vpc_id", "subnet_id"];
pub const VPC_IPV6_FILTERABLE: &[&str] = &["active", "config_id", "instance_id", "region", "vpc_id", "subnet_id"];
