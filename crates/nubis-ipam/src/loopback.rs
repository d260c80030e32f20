//! The loopback network mode (DESIGN.md, Network): every address is on this host. A private
//! address `192.168.X.Y` is reached at `127.168.X.Y`, so `127.168.0.0/16` is reserved for that
//! mapping and public pools must stay clear of it ([`crate::pool::validate_public_pool`]).

use std::net::{IpAddr, Ipv4Addr};

use ipnet::Ipv4Net;

/// Private addresses that have a loopback twin.
pub const MAPPED_PRIVATE: Ipv4Net = Ipv4Net::new_assert(Ipv4Addr::new(192, 168, 0, 0), 16);

/// Where they are reached in loopback mode.
pub const LOOPBACK_MAP: Ipv4Net = Ipv4Net::new_assert(Ipv4Addr::new(127, 168, 0, 0), 16);

/// `192.168.X.Y` -> `127.168.X.Y`; `None` for any address outside `192.168.0.0/16` (the
/// mapping covers the whole /16: the private pool and VPC subnets in 192.168.0.0/17 alike).
pub fn loopback_of_private(a: Ipv4Addr) -> Option<Ipv4Addr> {
    let [p, q, x, y] = a.octets();
    (p == 192 && q == 168).then(|| Ipv4Addr::new(127, 168, x, y))
}

/// Inverse of [`loopback_of_private`]: `127.168.X.Y` -> `192.168.X.Y`, `None` elsewhere.
pub fn private_of_loopback(a: Ipv4Addr) -> Option<Ipv4Addr> {
    let [p, q, x, y] = a.octets();
    (p == 127 && q == 168).then(|| Ipv4Addr::new(192, 168, x, y))
}

/// True for an address on this host's loopback: `127.0.0.0/8`, `::1`, and IPv4-mapped
/// `::ffff:127.x.y.z`. In loopback mode the data plane dials nothing else.
pub fn is_loopback(a: IpAddr) -> bool {
    a.to_canonical().is_loopback()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ip(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn private_to_loopback_and_back() {
        assert_eq!(loopback_of_private(ip("192.168.133.234")), Some(ip("127.168.133.234")));
        assert_eq!(loopback_of_private(ip("192.168.0.0")), Some(ip("127.168.0.0")));
        assert_eq!(loopback_of_private(ip("192.168.255.255")), Some(ip("127.168.255.255")));
        assert_eq!(loopback_of_private(ip("192.169.0.1")), None);
        assert_eq!(loopback_of_private(ip("10.0.0.1")), None);
        assert_eq!(private_of_loopback(ip("127.168.1.2")), Some(ip("192.168.1.2")));
        assert_eq!(private_of_loopback(ip("127.10.0.2")), None);
    }

    #[test]
    fn loopback_addresses() {
        for ok in ["127.0.0.1", "127.168.1.2", "127.255.255.255", "::1", "::ffff:127.10.0.2"] {
            assert!(is_loopback(ok.parse().unwrap()), "{ok}");
        }
        for bad in ["128.0.0.1", "192.168.1.2", "::2", "::ffff:10.0.0.1", "2001:db8::1", "0.0.0.0"] {
            assert!(!is_loopback(bad.parse().unwrap()), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn mapping_round_trips(x in any::<u8>(), y in any::<u8>()) {
            let a = Ipv4Addr::new(192, 168, x, y);
            let l = loopback_of_private(a).unwrap();
            prop_assert!(is_loopback(IpAddr::V4(l)));
            prop_assert!(LOOPBACK_MAP.contains(&l));
            prop_assert_eq!(private_of_loopback(l), Some(a));
        }
    }
}
