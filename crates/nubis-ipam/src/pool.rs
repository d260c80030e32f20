//! IPv4 address pools and allocation from them.
//!
//! A public pool (a region's `public_ipv4`, e.g. `127.10.0.0/16`) is carved into subnets of the
//! region's `public_prefix` (e.g. /24). In each subnet the first address is the network, the
//! second the gateway, the last the broadcast; none of the three is ever handed out. An address
//! record's `gateway`, `prefix` and `subnet_mask` are those of its subnet.
//!
//! The private pool (`192.168.128.0/17` by default) is one flat network with no gateway, as the
//! reference's `IPAddressPrivate` shows (`gateway` null, `prefix` 17, `subnet_mask`
//! `255.255.128.0`); only its network and broadcast addresses are never handed out.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use crate::cidr::{overlaps, subnet_mask_v4};
use crate::loopback::LOOPBACK_MAP;

/// The default private pool.
pub const PRIVATE_POOL: Ipv4Net = Ipv4Net::new_assert(Ipv4Addr::new(192, 168, 128, 0), 17);

/// A pool of IPv4 addresses: `net` carved into subnets of `subnet_prefix`, with or without a
/// gateway in each. Construct it with [`Ipv4Pool::public`] or [`Ipv4Pool::private`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Pool {
    net: Ipv4Net,
    subnet_prefix: u8,
    gateways: bool,
}

impl Ipv4Pool {
    /// A public pool. Refused (with the reason) when `net` fails [`validate_public_pool`], or
    /// when `subnet_prefix` is shorter than the pool's prefix or longer than 30 (a /30 subnet
    /// has one assignable address; /31 and /32 have none). `subnet_prefix` equal to the pool's
    /// prefix makes the pool one subnet.
    pub fn public(net: Ipv4Net, subnet_prefix: u8) -> Result<Ipv4Pool, String> {
        validate_public_pool(net)?;
        if subnet_prefix < net.prefix_len() || subnet_prefix > 30 {
            return Err(format!(
                "The subnet prefix length must be between the pool's ({}) and 30, not {subnet_prefix}",
                net.prefix_len()
            ));
        }
        Ok(Ipv4Pool { net, subnet_prefix, gateways: true })
    }

    /// A private pool: one network, no gateway. Refused when `net` has host bits set or a
    /// prefix longer than 30.
    pub fn private(net: Ipv4Net) -> Result<Ipv4Pool, String> {
        if net.trunc() != net {
            return Err(format!("The pool must be written as its network address: {}", net.trunc()));
        }
        if net.prefix_len() > 30 {
            return Err("The pool's prefix length must be at most 30".into());
        }
        Ok(Ipv4Pool { net, subnet_prefix: net.prefix_len(), gateways: false })
    }

    pub fn net(&self) -> Ipv4Net {
        self.net
    }

    pub fn subnet_prefix(&self) -> u8 {
        self.subnet_prefix
    }

    /// True when `a` is anywhere in the pool (including network, gateway and broadcast).
    pub fn contains(&self, a: Ipv4Addr) -> bool {
        self.net.contains(&a)
    }

    /// The subnet of the pool holding `a`, or `None` outside the pool.
    pub fn subnet_of(&self, a: Ipv4Addr) -> Option<Ipv4Net> {
        self.contains(a).then(|| Ipv4Net::new(a, self.subnet_prefix).expect("prefix <= 30").trunc())
    }

    /// The gateway of `a`'s subnet (its first host), or `None` outside the pool or in a pool
    /// without gateways (private).
    pub fn gateway_of(&self, a: Ipv4Addr) -> Option<Ipv4Addr> {
        let s = self.subnet_of(a)?;
        self.gateways.then(|| Ipv4Addr::from(u32::from(s.network()) + 1))
    }

    /// The prefix length of `a`'s subnet, or `None` outside the pool.
    pub fn prefix_of(&self, a: Ipv4Addr) -> Option<u8> {
        self.contains(a).then_some(self.subnet_prefix)
    }

    /// The mask of `a`'s subnet (`255.255.255.0` for /24), or `None` outside the pool.
    pub fn subnet_mask_of(&self, a: Ipv4Addr) -> Option<Ipv4Addr> {
        self.prefix_of(a).and_then(subnet_mask_v4)
    }

    /// True when `a` may be handed out: in the pool and not a network, gateway or broadcast
    /// address.
    pub fn is_assignable(&self, a: Ipv4Addr) -> bool {
        self.subnet_of(a).is_some_and(|s| {
            let (lo, hi) = self.host_range(s);
            (lo..=hi).contains(&u32::from(a))
        })
    }

    /// Number of assignable addresses.
    pub fn capacity(&self) -> u64 {
        let subnets = 1u64 << (self.subnet_prefix - self.net.prefix_len());
        let per = (1u64 << (32 - self.subnet_prefix)) - if self.gateways { 3 } else { 2 };
        subnets * per
    }

    /// The assignable range `lo..=hi` of one subnet (never empty: prefix <= 30).
    fn host_range(&self, subnet: Ipv4Net) -> (u32, u32) {
        let skip = if self.gateways { 2 } else { 1 };
        (u32::from(subnet.network()) + skip, u32::from(subnet.broadcast()) - 1)
    }

    fn subnets(&self) -> impl Iterator<Item = Ipv4Net> + use<> {
        self.net.subnets(self.subnet_prefix).expect("subnet prefix checked at construction")
    }

    /// Every assignable address, in ascending order.
    pub fn candidates(&self) -> impl Iterator<Item = Ipv4Addr> + use<> {
        let this = *self;
        self.subnets().flat_map(move |s| {
            let (lo, hi) = this.host_range(s);
            (lo..=hi).map(Ipv4Addr::from)
        })
    }

    /// The lowest assignable address not in `taken` (addresses as integers; entries outside
    /// the pool are ignored), or `None` when the pool is exhausted. Cost: one pass over the
    /// taken addresses up to the answer plus one step per full subnet, no allocation.
    pub fn first_free(&self, taken: &BTreeSet<u32>) -> Option<Ipv4Addr> {
        self.subnets().find_map(|s| {
            let (lo, hi) = self.host_range(s);
            let mut want = lo;
            for &t in taken.range(lo..=hi) {
                if t != want {
                    break;
                }
                if want == hi {
                    return None;
                }
                want += 1;
            }
            Some(Ipv4Addr::from(want))
        })
    }
}

/// Checks a configured public IPv4 pool: written as its network address (no host bits set), not
/// overlapping `127.168.0.0/16` (reserved for the private mapping) nor the private pool
/// `192.168.128.0/17`. Returns the reason when refused. Whether the pool must lie in
/// `127.0.0.0/8` depends on the network mode and is checked by the caller ([`crate::is_loopback`] on
/// its network and broadcast addresses); the subnet prefix is checked by
/// [`Ipv4Pool::public`].
pub fn validate_public_pool(net: Ipv4Net) -> Result<(), String> {
    if net.trunc() != net {
        return Err(format!("The pool must be written as its network address: {}", net.trunc()));
    }
    if overlaps(net, LOOPBACK_MAP) {
        return Err(format!(
            "The pool {net} overlaps {LOOPBACK_MAP}, reserved for reaching private addresses in loopback mode"
        ));
    }
    if overlaps(net, PRIVATE_POOL) {
        return Err(format!("The pool {net} overlaps the private pool {PRIVATE_POOL}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ip(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    fn pool(net: &str, prefix: u8) -> Ipv4Pool {
        Ipv4Pool::public(net.parse().unwrap(), prefix).unwrap()
    }

    fn set(addrs: impl IntoIterator<Item = Ipv4Addr>) -> BTreeSet<u32> {
        addrs.into_iter().map(u32::from).collect()
    }

    #[test]
    fn public_pool_construction() {
        assert!(Ipv4Pool::public("127.10.0.0/16".parse().unwrap(), 24).is_ok());
        assert!(Ipv4Pool::public("127.10.0.0/24".parse().unwrap(), 24).is_ok());
        assert!(Ipv4Pool::public("127.10.0.0/16".parse().unwrap(), 30).is_ok());
        assert!(Ipv4Pool::public("127.10.0.0/16".parse().unwrap(), 31).is_err());
        assert!(Ipv4Pool::public("127.10.0.0/16".parse().unwrap(), 32).is_err());
        assert!(Ipv4Pool::public("127.10.0.0/16".parse().unwrap(), 15).is_err());
        assert!(Ipv4Pool::public("127.10.0.1/16".parse().unwrap(), 24).is_err(), "not canonical");
        assert!(Ipv4Pool::public("127.168.0.0/24".parse().unwrap(), 24).is_err(), "reserved");
    }

    #[test]
    fn candidates_skip_network_gateway_and_broadcast() {
        let p = pool("127.10.0.0/23", 24);
        let c: Vec<_> = p.candidates().collect();
        assert_eq!(c.len(), 2 * 253);
        assert_eq!(p.capacity(), 2 * 253);
        assert_eq!(c[0], ip("127.10.0.2"));
        assert_eq!(c[252], ip("127.10.0.254"));
        assert_eq!(c[253], ip("127.10.1.2"));
        assert_eq!(*c.last().unwrap(), ip("127.10.1.254"));
        for a in ["127.10.0.0", "127.10.0.1", "127.10.0.255", "127.10.1.0", "127.10.1.1", "127.10.1.255", "127.10.2.2"]
        {
            assert!(!p.is_assignable(ip(a)), "{a}");
        }
        assert!(p.is_assignable(ip("127.10.1.2")));
    }

    #[test]
    fn slash_30_subnets_have_one_address() {
        let p = pool("127.10.0.0/29", 30);
        assert_eq!(p.candidates().collect::<Vec<_>>(), [ip("127.10.0.2"), ip("127.10.0.6")]);
        assert_eq!(p.gateway_of(ip("127.10.0.6")), Some(ip("127.10.0.5")));
        assert_eq!(p.first_free(&set([ip("127.10.0.2")])), Some(ip("127.10.0.6")));
        assert_eq!(p.first_free(&set([ip("127.10.0.2"), ip("127.10.0.6")])), None);
    }

    #[test]
    fn gateway_mask_prefix_of_public_addresses() {
        let p = pool("127.10.0.0/16", 24);
        assert_eq!(p.gateway_of(ip("127.10.3.77")), Some(ip("127.10.3.1")));
        assert_eq!(p.prefix_of(ip("127.10.3.77")), Some(24));
        assert_eq!(p.subnet_mask_of(ip("127.10.3.77")), Some(ip("255.255.255.0")));
        assert_eq!(p.subnet_of(ip("127.10.3.77")), Some("127.10.3.0/24".parse().unwrap()));
        assert_eq!(p.gateway_of(ip("127.11.0.5")), None);
        assert_eq!(p.prefix_of(ip("127.11.0.5")), None);
        assert_eq!(p.subnet_mask_of(ip("127.11.0.5")), None);
    }

    #[test]
    fn first_free_in_order_and_exhaustion() {
        let p = pool("127.10.0.0/23", 24);
        assert_eq!(p.first_free(&BTreeSet::new()), Some(ip("127.10.0.2")));
        assert_eq!(p.first_free(&set([ip("127.10.0.2"), ip("127.10.0.3")])), Some(ip("127.10.0.4")));
        // A hole is reused first.
        assert_eq!(p.first_free(&set([ip("127.10.0.3")])), Some(ip("127.10.0.2")));
        // Addresses outside the pool and reserved ones are ignored.
        assert_eq!(p.first_free(&set([ip("127.10.0.0"), ip("127.10.0.1"), ip("1.2.3.4")])), Some(ip("127.10.0.2")));
        // First subnet full: the next subnet.
        let full0 = set(p.candidates().take(253));
        assert_eq!(p.first_free(&full0), Some(ip("127.10.1.2")));
        // Everything taken: None.
        assert_eq!(p.first_free(&set(p.candidates())), None);
        let mut all_but_last = set(p.candidates());
        all_but_last.remove(&u32::from(ip("127.10.1.254")));
        assert_eq!(p.first_free(&all_but_last), Some(ip("127.10.1.254")));
    }

    #[test]
    fn first_free_with_thousands_taken() {
        let p = pool("127.10.0.0/16", 24);
        let mut taken = set(p.candidates().take(50_000));
        let next = p.candidates().nth(50_000).unwrap();
        assert_eq!(p.first_free(&taken), Some(next));
        taken.remove(&u32::from(ip("127.10.100.100")));
        assert_eq!(p.first_free(&taken), Some(ip("127.10.100.100")));
    }

    #[test]
    fn private_pool_has_no_gateway() {
        let p = Ipv4Pool::private(PRIVATE_POOL).unwrap();
        let a = ip("192.168.133.234");
        assert_eq!(p.gateway_of(a), None);
        assert_eq!(p.prefix_of(a), Some(17));
        assert_eq!(p.subnet_mask_of(a), Some(ip("255.255.128.0")));
        assert_eq!(p.first_free(&BTreeSet::new()), Some(ip("192.168.128.1")));
        assert_eq!(p.candidates().last(), Some(ip("192.168.255.254")));
        assert_eq!(p.capacity(), (1 << 15) - 2);
        assert!(p.is_assignable(ip("192.168.129.0")), "only the pool's network and broadcast are reserved");
        assert!(!p.is_assignable(ip("192.168.128.0")));
        assert!(!p.is_assignable(ip("192.168.255.255")));
        assert_eq!(p.prefix_of(ip("192.168.1.1")), None);
        assert!(Ipv4Pool::private("192.168.128.1/17".parse().unwrap()).is_err());
        assert!(Ipv4Pool::private("192.168.128.0/31".parse().unwrap()).is_err());
        let tiny = Ipv4Pool::private("192.168.128.0/30".parse().unwrap()).unwrap();
        assert_eq!(tiny.candidates().collect::<Vec<_>>(), [ip("192.168.128.1"), ip("192.168.128.2")]);
        assert_eq!(tiny.first_free(&set(tiny.candidates())), None);
    }

    proptest! {
        #[test]
        fn first_free_is_the_first_untaken_candidate(
            sub in 24u8..=30,
            taken in prop::collection::btree_set(0u32..1024, 0..900),
            private in any::<bool>(),
        ) {
            let net: Ipv4Net = if private { "192.168.128.0/22" } else { "127.10.0.0/22" }.parse().unwrap();
            let p = if private { Ipv4Pool::private(net).unwrap() } else { Ipv4Pool::public(net, sub).unwrap() };
            let base = u32::from(net.network());
            let taken: BTreeSet<u32> = taken.into_iter().map(|x| base + x).collect();
            let want = p.candidates().find(|a| !taken.contains(&u32::from(*a)));
            prop_assert_eq!(p.first_free(&taken), want);
            if let Some(a) = want {
                prop_assert!(p.is_assignable(a));
            }
        }
    }

    #[test]
    fn public_pools_stay_clear_of_reserved_space() {
        for ok in ["127.10.0.0/16", "127.0.0.0/9", "127.169.0.0/16", "127.167.255.0/24", "203.0.113.0/24"] {
            assert_eq!(validate_public_pool(ok.parse().unwrap()), Ok(()), "{ok}");
        }
        for bad in [
            "127.168.0.0/16",
            "127.168.5.0/24",
            "127.0.0.0/8",
            "127.160.0.0/12",
            "0.0.0.0/0",
            "192.168.0.0/16",
            "192.168.200.0/24",
        ] {
            assert!(validate_public_pool(bad.parse().unwrap()).is_err(), "{bad}");
        }
        assert!(validate_public_pool("127.10.0.1/16".parse().unwrap()).unwrap_err().contains("127.10.0.0/16"));
    }
}
