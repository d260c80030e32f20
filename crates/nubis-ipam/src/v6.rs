//! IPv6: MAC addresses, EUI-64 SLAAC and link-local addresses, carving /56 and /64 ranges out of
//! a block, and parsing range strings as the assign (with prefix length) and share (without)
//! operations take them.

use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;

use ipnet::Ipv6Net;

/// A 48-bit MAC address. Displays as `52:54:00:12:34:56`; parses that form (either case, `:`
/// or `-` separators).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl FromStr for MacAddr {
    type Err = &'static str;

    fn from_str(s: &str) -> Result<MacAddr, Self::Err> {
        const BAD: &str = "Must be a MAC address such as 52:54:00:12:34:56";
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut out = [0u8; 6];
        let mut parts = s.split(sep);
        for byte in &mut out {
            let p = parts.next().ok_or(BAD)?;
            if p.len() != 2 || !p.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(BAD);
            }
            *byte = u8::from_str_radix(p, 16).map_err(|_| BAD)?;
        }
        if parts.next().is_some() {
            return Err(BAD);
        }
        Ok(MacAddr(out))
    }
}

impl MacAddr {
    /// A locally administered unicast MAC derived from `seed`: the first octet has the
    /// locally-administered bit (0x02) set and the multicast bit (0x01) clear; the other 46 bits
    /// are a bijective mix of the low 46 bits of `seed`. So different seeds below 2^46 (an
    /// instance id, a counter) always give different MACs; seeds that differ only above bit 45
    /// give the same MAC. Deterministic: the same seed always gives the same MAC.
    pub fn from_seed(seed: u64) -> MacAddr {
        const BITS: u32 = 46;
        const MASK: u64 = (1 << BITS) - 1;
        // xor-shift and multiplication by an odd constant are both bijections modulo 2^46.
        let mut x = seed & MASK;
        x ^= x >> 23;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15) & MASK;
        x ^= x >> 21;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9) & MASK;
        x ^= x >> 23;
        let b = x.to_be_bytes(); // b[2..8] hold the 46 bits, the top 6 of them in b[2]
        MacAddr([(b[2] << 2) | 0x02, b[3], b[4], b[5], b[6], b[7]])
    }

    /// The locally-administered bit (0x02 of the first octet).
    pub fn is_locally_administered(&self) -> bool {
        self.0[0] & 0x02 != 0
    }

    /// The multicast bit (0x01 of the first octet) is clear.
    pub fn is_unicast(&self) -> bool {
        self.0[0] & 0x01 == 0
    }
}

/// The modified EUI-64 interface identifier of `mac` (RFC 4291 appendix A): `ff:fe` inserted in
/// the middle and the universal/local bit flipped. `52:54:00:12:34:56` gives
/// `0x5054_00ff_fe12_3456`.
pub fn eui64_interface_id(mac: MacAddr) -> u64 {
    let m = mac.0;
    u64::from_be_bytes([m[0] ^ 0x02, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]])
}

/// The SLAAC address of `mac` in `pool`: the pool's first 64 bits and the EUI-64 interface id
/// (`2001:db8::/64` and `52:54:00:12:34:56` give `2001:db8::5054:ff:fe12:3456`). A pool shorter
/// than /64 uses its first /64; a pool longer than /64 has no room for an interface id: `None`.
pub fn slaac_address(pool: Ipv6Net, mac: MacAddr) -> Option<Ipv6Addr> {
    if pool.prefix_len() > 64 {
        return None;
    }
    let high = u128::from(pool.network()) & !(u64::MAX as u128);
    Some(Ipv6Addr::from(high | u128::from(eui64_interface_id(mac))))
}

/// The link-local address of `mac`: `fe80::/64` and the EUI-64 interface id.
pub fn link_local_address(mac: MacAddr) -> Ipv6Addr {
    let fe80 = Ipv6Net::new_assert(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 64);
    slaac_address(fe80, mac).expect("/64")
}

/// The gateway of SLAAC and link-local addresses, as the reference shows it.
pub const LINK_LOCAL_GATEWAY: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1);

/// The first aligned range of `prefix_len` inside `block` that overlaps none of `taken`, or
/// `None` when there is none (or `prefix_len` is shorter than the block's or above 128).
///
/// `taken` holds `(network as u128, prefix length)` of every range already routed, of any
/// length (/56 and /64 may be mixed in one block), and anything else that must not be handed
/// out (such as the region's SLAAC /64 pool if it lies inside the block). Entries may lie
/// outside the block. The first element must be the network address (no bits set after the
/// prefix length), as [`parse_ipv6_range`] and this function return them: the set's order is
/// relied on. Cost: one pass over `taken` in order up to the answer, no allocation.
pub fn first_free_range(block: Ipv6Net, prefix_len: u8, taken: &BTreeSet<(u128, u8)>) -> Option<Ipv6Net> {
    if prefix_len < block.prefix_len() || prefix_len > 128 {
        return None;
    }
    let size_m1: u128 = if prefix_len == 0 { u128::MAX } else { (1u128 << (128 - prefix_len)) - 1 };
    let (first, last) = (u128::from(block.network()), u128::from(block.broadcast()));
    let mut c = first; // candidate start; the candidate is c ..= c + size_m1
    for &(start, len) in taken {
        let Ok(t) = Ipv6Net::new(Ipv6Addr::from(start), len.min(128)) else {
            continue;
        };
        let (ts, te) = (u128::from(t.network()), u128::from(t.broadcast()));
        if te < c {
            continue;
        }
        if ts > c + size_m1 {
            break; // sorted by start: nothing later can overlap this candidate
        }
        // Overlap: move to the first aligned candidate after the taken range.
        c = te.checked_add(1)?;
        let rem = (c - first) & size_m1;
        if rem != 0 {
            c = c.checked_add(size_m1 - rem + 1)?;
        }
        if c > last {
            return None;
        }
    }
    (c <= last).then(|| Ipv6Net::new(Ipv6Addr::from(c), prefix_len).expect("checked"))
}

/// Why an IPv6 range string is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeError {
    /// Not an IPv6 address (with or without `/len` as the case needs).
    NotIpv6,
    /// Has a zone id (`%eth0`).
    ZoneId,
    /// A prefix length is needed (`/56` or `/64`).
    PrefixRequired,
    /// A prefix length is not allowed here.
    PrefixNotAllowed,
    /// A prefix length other than 56 or 64.
    BadPrefix,
    /// Bits set after the prefix length (or, without prefix length, in the last 64 bits, where
    /// no range can start).
    NotRangeStart,
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RangeError::NotIpv6 => "Must be an IPv6 range such as 2001:db8:0:100::",
            RangeError::ZoneId => "Zone ids are not allowed",
            RangeError::PrefixRequired => "Must include the prefix length /56 or /64",
            RangeError::PrefixNotAllowed => "Must not include a prefix length",
            RangeError::BadPrefix => "The prefix length must be 56 or 64",
            RangeError::NotRangeStart => "Must be the first address of a range (no bits set after the prefix)",
        })
    }
}

impl std::error::Error for RangeError {}

/// An IPv6 range with its prefix length, as the assign operations take it: `2001:db8:0:100::/56`
/// or `.../64`, no bits set after the prefix, no zone id. Any valid IPv6 spelling is accepted
/// (`2001:DB8:0:100:0:0:0:0/64`).
pub fn parse_ipv6_range(s: &str) -> Result<Ipv6Net, RangeError> {
    if s.contains('%') {
        return Err(RangeError::ZoneId);
    }
    let Some((ip, len)) = s.split_once('/') else {
        return Err(if s.parse::<Ipv6Addr>().is_ok() { RangeError::PrefixRequired } else { RangeError::NotIpv6 });
    };
    let ip: Ipv6Addr = ip.parse().map_err(|_| RangeError::NotIpv6)?;
    let len = match len {
        "56" => 56,
        "64" => 64,
        _ => return Err(RangeError::BadPrefix),
    };
    let net = Ipv6Net::new(ip, len).expect("56 or 64");
    if net.trunc() != net {
        return Err(RangeError::NotRangeStart);
    }
    Ok(net)
}

/// An IPv6 range without prefix length, as the share operation takes it (`2001:db8:0:100::`):
/// an IPv6 address, no `/`, no zone id, its last 64 bits zero (every /56 and /64 range starts so).
/// The caller looks the range up by this start address.
pub fn parse_ipv6_range_start(s: &str) -> Result<Ipv6Addr, RangeError> {
    if s.contains('%') {
        return Err(RangeError::ZoneId);
    }
    if let Some((ip, _)) = s.split_once('/') {
        return Err(if ip.parse::<Ipv6Addr>().is_ok() { RangeError::PrefixNotAllowed } else { RangeError::NotIpv6 });
    }
    let ip: Ipv6Addr = s.parse().map_err(|_| RangeError::NotIpv6)?;
    if u128::from(ip) as u64 != 0 {
        return Err(RangeError::NotRangeStart);
    }
    Ok(ip)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn net(s: &str) -> Ipv6Net {
        s.parse().unwrap()
    }

    fn key(s: &str) -> (u128, u8) {
        let n = net(s);
        (u128::from(n.network()), n.prefix_len())
    }

    const MAC: MacAddr = MacAddr([0x52, 0x54, 0x00, 0x12, 0x34, 0x56]);

    #[test]
    fn mac_display_and_parse() {
        assert_eq!(MAC.to_string(), "52:54:00:12:34:56");
        assert_eq!("52:54:00:12:34:56".parse(), Ok(MAC));
        assert_eq!("52-54-00-12-34-56".parse(), Ok(MAC));
        assert_eq!("F2:3C:91:24:3A:2F".parse::<MacAddr>().unwrap().to_string(), "f2:3c:91:24:3a:2f");
        for bad in
            ["52:54:00:12:34", "52:54:00:12:34:56:78", "52:54:0:12:34:56", "52:54:00:12:34:5g", "", "525400123456"]
        {
            assert!(bad.parse::<MacAddr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn eui64_known_vector() {
        assert_eq!(eui64_interface_id(MAC), 0x5054_00ff_fe12_3456);
        assert_eq!(slaac_address(net("2001:db8::/64"), MAC), Some("2001:db8::5054:ff:fe12:3456".parse().unwrap()));
        assert_eq!(link_local_address(MAC), "fe80::5054:ff:fe12:3456".parse::<Ipv6Addr>().unwrap());
        // The reference's example: f2:3c:91:24:3a:2f -> f03c:91ff:fe24:3a2f.
        let m: MacAddr = "f2:3c:91:24:3a:2f".parse().unwrap();
        assert_eq!(slaac_address(net("2600:3c03::/64"), m), Some("2600:3c03::f03c:91ff:fe24:3a2f".parse().unwrap()));
    }

    #[test]
    fn slaac_pool_lengths() {
        // Host bits of the pool and prefixes shorter than /64 use the pool's first /64.
        assert_eq!(slaac_address(net("2001:db8::1/64"), MAC), slaac_address(net("2001:db8::/64"), MAC));
        assert_eq!(slaac_address(net("2001:db8::/48"), MAC), Some("2001:db8::5054:ff:fe12:3456".parse().unwrap()));
        assert_eq!(slaac_address(net("2001:db8::/65"), MAC), None);
    }

    #[test]
    fn macs_from_seeds_are_local_unicast_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..200_000u64 {
            let m = MacAddr::from_seed(seed);
            assert!(m.is_locally_administered() && m.is_unicast(), "{m}");
            assert!(seen.insert(m), "seed {seed} repeats {m}");
        }
        assert_eq!(MacAddr::from_seed(42), MacAddr::from_seed(42));
        assert_eq!(MacAddr::from_seed(42), MacAddr::from_seed(42 + (1 << 46)));
        assert!(MAC.is_locally_administered(), "0x52 has the 0x02 bit");
        assert!(!MacAddr([0xf0, 0, 0, 0, 0, 0]).is_locally_administered());
        assert!(!MacAddr([0x01, 0, 0, 0, 0, 0]).is_unicast());
    }

    #[test]
    fn ranges_are_carved_in_order() {
        let block = net("2001:db8:a00::/40");
        let mut taken = BTreeSet::new();
        assert_eq!(first_free_range(block, 56, &taken), Some(net("2001:db8:a00::/56")));
        assert_eq!(first_free_range(block, 64, &taken), Some(net("2001:db8:a00::/64")));
        taken.insert(key("2001:db8:a00::/56"));
        assert_eq!(first_free_range(block, 56, &taken), Some(net("2001:db8:a00:100::/56")));
        assert_eq!(first_free_range(block, 64, &taken), Some(net("2001:db8:a00:100::/64")));
        // A /64 taken inside the next /56 blocks that /56 but not the /64s around it.
        taken.insert(key("2001:db8:a00:105::/64"));
        assert_eq!(first_free_range(block, 56, &taken), Some(net("2001:db8:a00:200::/56")));
        assert_eq!(first_free_range(block, 64, &taken), Some(net("2001:db8:a00:100::/64")));
        taken.insert(key("2001:db8:a00:100::/64"));
        assert_eq!(first_free_range(block, 64, &taken), Some(net("2001:db8:a00:101::/64")));
        // Entries outside the block and a covering entry before it.
        let mut t = BTreeSet::from([key("2001:db8::/64"), key("2001:db9::/32")]);
        assert_eq!(first_free_range(block, 56, &t), Some(net("2001:db8:a00::/56")));
        t.insert(key("2001:db8::/32"));
        assert_eq!(first_free_range(block, 56, &t), None);
    }

    #[test]
    fn range_exhaustion_and_edges() {
        let block = net("2001:db8::/63");
        let mut taken = BTreeSet::from([key("2001:db8::/64")]);
        assert_eq!(first_free_range(block, 64, &taken), Some(net("2001:db8:0:1::/64")));
        taken.insert(key("2001:db8:0:1::/64"));
        assert_eq!(first_free_range(block, 64, &taken), None);
        assert_eq!(first_free_range(block, 56, &BTreeSet::new()), None, "shorter than the block");
        assert_eq!(first_free_range(block, 129, &BTreeSet::new()), None);
        // The top of the address space: no overflow.
        let top = net("ffff:ffff:ffff:ffff::/64");
        assert_eq!(first_free_range(top, 64, &BTreeSet::new()), Some(top));
        assert_eq!(first_free_range(top, 64, &BTreeSet::from([key("ffff:ffff:ffff:ffff::/64")])), None);
        assert_eq!(
            first_free_range(top, 65, &BTreeSet::from([key("ffff:ffff:ffff:ffff::/65")])),
            Some(net("ffff:ffff:ffff:ffff:8000::/65"))
        );
        assert_eq!(first_free_range(net("::/0"), 0, &BTreeSet::new()), Some(net("::/0")));
        assert_eq!(first_free_range(net("::/0"), 0, &BTreeSet::from([(5, 128)])), None);
    }

    #[test]
    fn range_strings_with_prefix() {
        assert_eq!(parse_ipv6_range("2001:db8:0:100::/56"), Ok(net("2001:db8:0:100::/56")));
        assert_eq!(parse_ipv6_range("2001:DB8:0:101:0:0:0:0/64"), Ok(net("2001:db8:0:101::/64")));
        assert_eq!(parse_ipv6_range("2001:db8:0:101::/56"), Err(RangeError::NotRangeStart));
        assert_eq!(parse_ipv6_range("2001:db8::1/64"), Err(RangeError::NotRangeStart));
        assert_eq!(parse_ipv6_range("2001:db8::/48"), Err(RangeError::BadPrefix));
        assert_eq!(parse_ipv6_range("2001:db8::/064"), Err(RangeError::BadPrefix));
        assert_eq!(parse_ipv6_range("2001:db8::"), Err(RangeError::PrefixRequired));
        assert_eq!(parse_ipv6_range("fe80::%eth0/64"), Err(RangeError::ZoneId));
        assert_eq!(parse_ipv6_range("10.0.0.0/8"), Err(RangeError::NotIpv6));
        assert_eq!(parse_ipv6_range("nope"), Err(RangeError::NotIpv6));
    }

    #[test]
    fn range_strings_without_prefix() {
        assert_eq!(parse_ipv6_range_start("2001:db8:0:100::"), Ok("2001:db8:0:100::".parse().unwrap()));
        assert_eq!(parse_ipv6_range_start("2001:db8:0:100::/56"), Err(RangeError::PrefixNotAllowed));
        assert_eq!(parse_ipv6_range_start("2001:db8::1"), Err(RangeError::NotRangeStart));
        assert_eq!(parse_ipv6_range_start("fe80::%1"), Err(RangeError::ZoneId));
        assert_eq!(parse_ipv6_range_start("192.0.2.1"), Err(RangeError::NotIpv6));
        assert_eq!(parse_ipv6_range_start("x/64"), Err(RangeError::NotIpv6));
    }

    proptest! {
        /// Against brute force over a small block: the answer is the first aligned candidate
        /// that overlaps nothing taken.
        #[test]
        fn first_free_range_matches_brute_force(
            prefix in 60u8..=64,
            taken in prop::collection::btree_set((0u128..64, 56u8..=66), 0..40),
        ) {
            let block = net("2001:db8::/58");
            let base = u128::from(block.network());
            // Offsets are in /64 units so that entries land on interesting boundaries.
            let taken: BTreeSet<(u128, u8)> = taken
                .into_iter()
                .map(|(o, l)| (u128::from(Ipv6Net::new(Ipv6Addr::from(base + (o << 64)), l).unwrap().network()), l))
                .collect();
            let nets: Vec<Ipv6Net> = taken.iter().map(|&(s, l)| Ipv6Net::new(Ipv6Addr::from(s), l).unwrap().trunc()).collect();
            let want = block.subnets(prefix).unwrap().find(|c| !nets.iter().any(|t| crate::cidr::overlaps_v6(*c, *t)));
            prop_assert_eq!(first_free_range(block, prefix, &taken), want);
        }

        #[test]
        fn slaac_keeps_the_pool_and_the_mac(high in any::<u64>(), mac in any::<[u8; 6]>()) {
            let pool = Ipv6Net::new(Ipv6Addr::from((high as u128) << 64), 64).unwrap();
            let a = slaac_address(pool, MacAddr(mac)).unwrap();
            prop_assert!(pool.contains(&a));
            let id = u128::from(a) as u64;
            prop_assert_eq!(id, eui64_interface_id(MacAddr(mac)));
            prop_assert_eq!((id >> 24) & 0xffff, 0xfffe);
        }
    }
}
