//! IPv4 and IPv6 address arithmetic: integer conversions, strict CIDR parsing with precise
//! reasons, RFC 1918 membership, overlap checks, subnet masks and the VPC subnet rules.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};

/// `a.b.c.d` as the big-endian integer the store keeps (`10.0.0.1` -> `0x0a000001`).
pub fn v4_to_u32(a: Ipv4Addr) -> u32 {
    u32::from(a)
}

/// Inverse of [`v4_to_u32`].
pub fn u32_to_v4(n: u32) -> Ipv4Addr {
    Ipv4Addr::from(n)
}

/// An IPv6 address as the big-endian integer the store keeps.
pub fn v6_to_u128(a: Ipv6Addr) -> u128 {
    u128::from(a)
}

/// Inverse of [`v6_to_u128`].
pub fn u128_to_v6(n: u128) -> Ipv6Addr {
    Ipv6Addr::from(n)
}

/// Why a string is not an acceptable IPv4 CIDR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CidrError {
    /// Not `a.b.c.d/len` with a valid address and a prefix length 0..=32 written in decimal
    /// without leading zeroes (and no spaces).
    NotCidr,
    /// A valid CIDR with host bits set (`10.0.0.1/24`); `canonical` is the network meant.
    NotCanonical { canonical: Ipv4Net },
}

impl fmt::Display for CidrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CidrError::NotCidr => f.write_str("Must be an IPv4 network in CIDR notation, such as 10.0.0.0/24"),
            CidrError::NotCanonical { canonical } => {
                write!(f, "Must be in canonical form (no host bits set): {canonical}")
            }
        }
    }
}

impl std::error::Error for CidrError {}

/// Parses an IPv4 CIDR in canonical form: `10.0.0.0/24` is accepted, `10.0.0.1/24` is
/// [`CidrError::NotCanonical`], and `10.0.0.0`, `10.0.0.0/33`, `10.0.0.0/024`, `010.0.0.0/8` or
/// ` 10.0.0.0/8` are [`CidrError::NotCidr`]. `/0` and `/32` are valid CIDRs here; callers check
/// their own prefix range.
pub fn parse_ipv4_cidr(s: &str) -> Result<Ipv4Net, CidrError> {
    let (ip, len) = s.split_once('/').ok_or(CidrError::NotCidr)?;
    let ip: Ipv4Addr = ip.parse().map_err(|_| CidrError::NotCidr)?;
    let len_ok = !len.is_empty()
        && len.len() <= 2
        && len.bytes().all(|c| c.is_ascii_digit())
        && !(len.len() > 1 && len.starts_with('0'));
    let len: u8 = if len_ok {
        len.parse().map_err(|_| CidrError::NotCidr)?
    } else {
        return Err(CidrError::NotCidr);
    };
    let net = Ipv4Net::new(ip, len).map_err(|_| CidrError::NotCidr)?;
    if net.trunc() != net {
        return Err(CidrError::NotCanonical { canonical: net.trunc() });
    }
    Ok(net)
}

/// The three RFC 1918 blocks.
pub const RFC1918: [Ipv4Net; 3] = [
    Ipv4Net::new_assert(Ipv4Addr::new(10, 0, 0, 0), 8),
    Ipv4Net::new_assert(Ipv4Addr::new(172, 16, 0, 0), 12),
    Ipv4Net::new_assert(Ipv4Addr::new(192, 168, 0, 0), 16),
];

/// True when `net` lies entirely inside one RFC 1918 block (`10.0.0.0/8` yes, `10.0.0.0/7` no:
/// it reaches `11.0.0.0`). Host bits of `net` are ignored.
pub fn is_rfc1918(net: Ipv4Net) -> bool {
    RFC1918.iter().any(|b| b.contains(&net.trunc()))
}

/// True when the two networks share at least one address. Host bits are ignored.
pub fn overlaps(a: Ipv4Net, b: Ipv4Net) -> bool {
    a.network() <= b.broadcast() && b.network() <= a.broadcast()
}

/// [`overlaps`] for IPv6 networks.
pub fn overlaps_v6(a: Ipv6Net, b: Ipv6Net) -> bool {
    a.network() <= b.broadcast() && b.network() <= a.broadcast()
}

/// The first of `others` that overlaps `net` (for "overlaps subnet X" reasons).
pub fn first_overlap<I: IntoIterator<Item = Ipv4Net>>(net: Ipv4Net, others: I) -> Option<Ipv4Net> {
    others.into_iter().find(|o| overlaps(net, *o))
}

/// `255.255.255.0` for 24; `None` above 32.
pub fn subnet_mask_v4(prefix: u8) -> Option<Ipv4Addr> {
    Ipv4Net::new(Ipv4Addr::UNSPECIFIED, prefix).ok().map(|n| n.netmask())
}

/// `ffff:ffff:ffff:ffff::` for 64; `None` above 128.
pub fn subnet_mask_v6(prefix: u8) -> Option<Ipv6Addr> {
    Ipv6Net::new(Ipv6Addr::UNSPECIFIED, prefix).ok().map(|n| n.netmask())
}

/// Prefix lengths allowed for VPC subnets (spec 8).
pub const SUBNET_PREFIX: std::ops::RangeInclusive<u8> = 1..=29;

/// The private pool VPC subnets must not overlap (spec 2.3).
pub const VPC_RESERVED: Ipv4Net = Ipv4Net::new_assert(Ipv4Addr::new(192, 168, 128, 0), 17);

/// Why a VPC subnet's `ipv4` is refused (spec 2.3), checked in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubnetError {
    Cidr(CidrError),
    /// Prefix length outside 1..=29.
    Prefix(u8),
    /// Not entirely inside 10/8, 172.16/12 or 192.168/16.
    NotRfc1918,
    /// Overlaps `192.168.128.0/17`.
    OverlapsReserved,
}

impl fmt::Display for SubnetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubnetError::Cidr(e) => e.fmt(f),
            SubnetError::Prefix(p) => write!(f, "Prefix length must be between 1 and 29, not {p}"),
            SubnetError::NotRfc1918 => {
                f.write_str("Must be in private address space (RFC 1918): 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16")
            }
            SubnetError::OverlapsReserved => f.write_str("Must not overlap 192.168.128.0/17"),
        }
    }
}

impl std::error::Error for SubnetError {}

/// Every rule of a VPC subnet's `ipv4` that does not depend on the other subnets: canonical
/// CIDR, prefix 1..=29, inside RFC 1918, not overlapping `192.168.128.0/17`. The caller checks
/// overlaps with the VPC's other subnets ([`first_overlap`]).
pub fn validate_vpc_subnet(s: &str) -> Result<Ipv4Net, SubnetError> {
    let net = parse_ipv4_cidr(s).map_err(SubnetError::Cidr)?;
    if !SUBNET_PREFIX.contains(&net.prefix_len()) {
        return Err(SubnetError::Prefix(net.prefix_len()));
    }
    if !is_rfc1918(net) {
        return Err(SubnetError::NotRfc1918);
    }
    if overlaps(net, VPC_RESERVED) {
        return Err(SubnetError::OverlapsReserved);
    }
    Ok(net)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn net(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    #[test]
    fn conversions() {
        assert_eq!(v4_to_u32(Ipv4Addr::new(10, 0, 0, 1)), 0x0a00_0001);
        assert_eq!(u32_to_v4(0xffff_ffff), Ipv4Addr::BROADCAST);
        assert_eq!(v6_to_u128("::1".parse().unwrap()), 1);
        assert_eq!(u128_to_v6(0x2001_0db8 << 96), "2001:db8::".parse::<Ipv6Addr>().unwrap());
    }

    #[test]
    fn cidr_canonical_and_not_cidr_are_told_apart() {
        assert_eq!(parse_ipv4_cidr("10.0.0.0/24"), Ok(net("10.0.0.0/24")));
        assert_eq!(parse_ipv4_cidr("10.0.0.1/24"), Err(CidrError::NotCanonical { canonical: net("10.0.0.0/24") }));
        assert_eq!(parse_ipv4_cidr("10.0.0.1/32"), Ok(net("10.0.0.1/32")));
        assert_eq!(parse_ipv4_cidr("0.0.0.0/0"), Ok(net("0.0.0.0/0")));
        assert!(matches!(parse_ipv4_cidr("1.0.0.0/0"), Err(CidrError::NotCanonical { .. })));
        for bad in [
            "10.0.0.0",
            "10.0.0.0/",
            "10.0.0.0/33",
            "10.0.0.0/024",
            "10.0.0.0/-1",
            "010.0.0.0/8",
            " 10.0.0.0/8",
            "10.0.0.0/8 ",
            "10.0.0/8",
            "::/0",
            "10.0.0.0/8/8",
            "",
        ] {
            assert_eq!(parse_ipv4_cidr(bad), Err(CidrError::NotCidr), "{bad}");
        }
        assert!(CidrError::NotCanonical { canonical: net("10.0.0.0/24") }.to_string().contains("10.0.0.0/24"));
    }

    #[test]
    fn rfc1918_means_entirely_inside() {
        for ok in ["10.0.0.0/8", "10.1.2.0/24", "172.16.0.0/12", "172.31.255.248/29", "192.168.0.0/16"] {
            assert!(is_rfc1918(net(ok)), "{ok}");
        }
        for bad in ["10.0.0.0/7", "172.16.0.0/11", "172.32.0.0/16", "192.168.0.0/15", "8.8.8.0/24", "0.0.0.0/0"] {
            assert!(!is_rfc1918(net(bad)), "{bad}");
        }
    }

    #[test]
    fn overlap_checks() {
        assert!(overlaps(net("10.0.0.0/24"), net("10.0.0.128/25")));
        assert!(overlaps(net("10.0.0.0/8"), net("10.255.255.255/32")));
        assert!(!overlaps(net("10.0.0.0/25"), net("10.0.0.128/25")));
        assert!(overlaps(net("0.0.0.0/0"), net("1.2.3.4/32")));
        assert_eq!(
            first_overlap(net("10.0.1.0/24"), [net("10.0.0.0/24"), net("10.0.0.0/16"), net("10.0.1.0/24")]),
            Some(net("10.0.0.0/16"))
        );
        assert_eq!(first_overlap(net("10.0.1.0/24"), []), None);
        let a: Ipv6Net = "2001:db8::/56".parse().unwrap();
        assert!(overlaps_v6(a, "2001:db8:0:ff::/64".parse().unwrap()));
        assert!(!overlaps_v6(a, "2001:db8:0:100::/64".parse().unwrap()));
    }

    #[test]
    fn masks() {
        assert_eq!(subnet_mask_v4(24), Some(Ipv4Addr::new(255, 255, 255, 0)));
        assert_eq!(subnet_mask_v4(17), Some(Ipv4Addr::new(255, 255, 128, 0)));
        assert_eq!(subnet_mask_v4(0), Some(Ipv4Addr::UNSPECIFIED));
        assert_eq!(subnet_mask_v4(32), Some(Ipv4Addr::BROADCAST));
        assert_eq!(subnet_mask_v4(33), None);
        assert_eq!(subnet_mask_v6(64), Some("ffff:ffff:ffff:ffff::".parse().unwrap()));
        assert_eq!(subnet_mask_v6(129), None);
    }

    #[test]
    fn vpc_subnets() {
        assert_eq!(validate_vpc_subnet("10.0.0.0/24"), Ok(net("10.0.0.0/24")));
        assert_eq!(validate_vpc_subnet("10.0.0.0/8"), Ok(net("10.0.0.0/8")));
        assert_eq!(validate_vpc_subnet("10.0.0.8/29"), Ok(net("10.0.0.8/29")));
        assert_eq!(validate_vpc_subnet("192.168.127.0/24"), Ok(net("192.168.127.0/24")));
        assert!(matches!(validate_vpc_subnet("10.0.0.1/24"), Err(SubnetError::Cidr(CidrError::NotCanonical { .. }))));
        assert_eq!(validate_vpc_subnet("nope"), Err(SubnetError::Cidr(CidrError::NotCidr)));
        assert_eq!(validate_vpc_subnet("10.0.0.0/30"), Err(SubnetError::Prefix(30)));
        assert_eq!(validate_vpc_subnet("10.0.0.0/32"), Err(SubnetError::Prefix(32)));
        assert_eq!(validate_vpc_subnet("0.0.0.0/0"), Err(SubnetError::Prefix(0)));
        assert_eq!(validate_vpc_subnet("128.0.0.0/1"), Err(SubnetError::NotRfc1918));
        assert_eq!(validate_vpc_subnet("8.8.8.0/24"), Err(SubnetError::NotRfc1918));
        assert_eq!(validate_vpc_subnet("192.168.128.0/24"), Err(SubnetError::OverlapsReserved));
        assert_eq!(validate_vpc_subnet("192.168.0.0/16"), Err(SubnetError::OverlapsReserved));
        assert_eq!(validate_vpc_subnet("192.168.255.248/29"), Err(SubnetError::OverlapsReserved));
    }

    proptest! {
        #[test]
        fn canonical_cidrs_round_trip(a in any::<u32>(), len in 0u8..=32) {
            let n = Ipv4Net::new(Ipv4Addr::from(a), len).unwrap();
            let t = n.trunc();
            prop_assert_eq!(parse_ipv4_cidr(&t.to_string()), Ok(t));
            if n != t {
                prop_assert_eq!(parse_ipv4_cidr(&n.to_string()), Err(CidrError::NotCanonical { canonical: t }));
            }
        }

        #[test]
        fn overlap_is_sharing_an_address(a in any::<u32>(), la in 20u8..=32, b in any::<u32>(), lb in 20u8..=32) {
            // Clustered so that overlaps happen.
            let (a, b) = (0x0a00_0000 | (a & 0xfff), 0x0a00_0000 | (b & 0xfff));
            let na = Ipv4Net::new(Ipv4Addr::from(a), la).unwrap();
            let nb = Ipv4Net::new(Ipv4Addr::from(b), lb).unwrap();
            let shared = na.hosts().chain([na.network(), na.broadcast()]).any(|x| nb.contains(&x));
            prop_assert_eq!(overlaps(na, nb), shared);
            prop_assert_eq!(overlaps(na, nb), overlaps(nb, na));
        }
    }
}
