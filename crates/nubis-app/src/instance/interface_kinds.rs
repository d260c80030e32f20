//! What profile interfaces and Linode interfaces share: the three purposes and the 1:1 NAT of a
//! VPC interface, with its check.

use std::net::Ipv4Addr;

use nubis_model::Problems;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Public,
    Vlan,
    Vpc,
}

impl Purpose {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Purpose::Public => "public",
            Purpose::Vlan => "vlan",
            Purpose::Vpc => "vpc",
        }
    }
}

/// The public address of a 1:1 NAT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Nat {
    /// The instance's (first) public IPv4 address.
    Any,
    /// One of the instance's public IPv4 addresses.
    Address(String),
}

/// Checks an `ipv4.nat_1_1` value (into `q`, at `ipv4.nat_1_1`).
pub(crate) fn check_nat(q: &mut Problems, v: Option<&str>, new_instance: bool) -> Option<Nat> {
    match v {
        None | Some("") => None,
        Some("any") => Some(Nat::Any),
        Some(a) if a.parse::<Ipv4Addr>().is_ok() && new_instance => {
            q.add(
                "ipv4.nat_1_1",
                "A new instance's public address does not exist yet: use \"any\" to use it for 1:1 NAT",
            );
            None
        }
        Some(a) if a.parse::<Ipv4Addr>().is_ok() => Some(Nat::Address(a.to_string())),
        Some(_) => {
            q.add("ipv4.nat_1_1", "Must be \"any\", an IPv4 address, empty or null");
            None
        }
    }
}
