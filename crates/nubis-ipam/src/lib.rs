//! nubis-ipam: pure address arithmetic for the VPC, IP-address, instance and load-balancer
//! areas. No IO, no storage: callers pass what is taken (as integers, the way the store keeps
//! addresses) and get the next free address or range back.
//!
//! - [`cidr`]: IPv4/IPv6 <-> integers, strict canonical IPv4 CIDR parsing, RFC 1918, overlaps,
//!   VPC subnet rules (spec 2.3), subnet masks.
//! - [`pool`]: IPv4 pools: a region's public pool carved into subnets with a gateway each, and
//!   the private pool (`192.168.128.0/17`, no gateway); the validation of configured public pools.
//! - [`v6`]: MAC addresses, EUI-64 SLAAC and link-local addresses, carving /56 and /64 ranges
//!   out of a block, parsing range strings.
//! - [`loopback`]: the loopback network mode: `192.168.X.Y` is reached at `127.168.X.Y`.

pub mod cidr;
pub mod loopback;
pub mod pool;
pub mod v6;

pub use cidr::{
    CidrError, SubnetError, first_overlap, is_rfc1918, overlaps, overlaps_v6, parse_ipv4_cidr, subnet_mask_v4,
    subnet_mask_v6, u32_to_v4, u128_to_v6, v4_to_u32, v6_to_u128, validate_vpc_subnet,
};
pub use ipnet::{Ipv4Net, Ipv6Net};
pub use loopback::{is_loopback, loopback_of_private, private_of_loopback};
pub use pool::{Ipv4Pool, PRIVATE_POOL, validate_public_pool};
pub use v6::{
    MacAddr, RangeError, eui64_interface_id, first_free_range, link_local_address, parse_ipv6_range,
    parse_ipv6_range_start, slaac_address,
};
