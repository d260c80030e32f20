//! The fabric: how the data plane reaches a node address and which address a listener binds,
//! with the loopback guard (in `loopback` mode nothing outside 127.0.0.0/8 is ever dialed or bound)
//! and the netns guard (in `netns` mode nothing outside 127.0.0.0/8, 192.168.0.0/16 and
//! 198.18.0.0/15, the networks nubis makes on this host, is ever dialed or bound).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

use tokio::net::{TcpSocket, TcpStream};

pub use nubis_model::config::NetworkMode;

/// Why the fabric refused an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    #[error(
        "loopback mode refuses to dial {0}: only 127.0.0.0/8 and 192.168.0.0/16 (mapped to 127.168.0.0/16) are reachable"
    )]
    DialRefused(SocketAddrV4),
    #[error("loopback mode refuses to bind {0}: only 127.0.0.0/8 can be bound")]
    BindRefused(Ipv4Addr),
    #[error("netns mode refuses to dial {0}: only 127.0.0.0/8, 192.168.0.0/16 and 198.18.0.0/15 are reachable")]
    NetnsDialRefused(SocketAddrV4),
    #[error("netns mode refuses to bind {0}: only 127.0.0.0/8 and 198.18.0.0/15 can be bound")]
    NetnsBindRefused(Ipv4Addr),
}

/// The benchmarking range (RFC 2544) the public pools of netns mode come from.
fn in_bench_range(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    o[0] == 198 && (o[1] == 18 || o[1] == 19)
}

/// The source address of connections to back ends from a listener bound to `bound`: the
/// balancer's own address when it is one of netns mode (so that a node, and its firewall, see
/// the balancer's address), else the kernel's choice.
pub fn source_of(bound: Option<SocketAddr>) -> Option<IpAddr> {
    match bound? {
        SocketAddr::V4(a) if in_bench_range(*a.ip()) => Some(IpAddr::V4(*a.ip())),
        _ => None,
    }
}

/// Connects to `addr`, from `source` when given.
pub async fn connect(addr: SocketAddr, source: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let Some(src) = source else { return TcpStream::connect(addr).await };
    let s = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    s.bind(SocketAddr::new(src, 0))?;
    s.connect(addr).await
}

/// Maps API addresses to the socket addresses the data plane really uses.
///
/// * `Loopback` (default): a node `192.168.X.Y:P` is dialed at `127.168.X.Y:P`, a node already in
///   127.0.0.0/8 is dialed as is, anything else is refused; only 127.0.0.0/8 addresses are bound.
/// * `Netns`: node addresses in 192.168.0.0/16 and 198.18.0.0/15 are dialed as they are (the
///   host routes them to the instances' namespaces), so are 127.0.0.0/8 ones; listeners bind
///   127.0.0.0/8 or 198.18.0.0/15 addresses (the runtime puts those on the host).
/// * `Direct`: addresses are used as they are (real deployments only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fabric {
    mode: NetworkMode,
}

impl Fabric {
    pub fn new(mode: NetworkMode) -> Fabric {
        Fabric { mode }
    }

    pub fn mode(&self) -> NetworkMode {
        self.mode
    }

    /// The socket address to connect to for a node address.
    pub fn dial(&self, node: SocketAddrV4) -> Result<SocketAddr, FabricError> {
        match self.mode {
            NetworkMode::Direct => Ok(SocketAddr::V4(node)),
            NetworkMode::Loopback => {
                let o = node.ip().octets();
                let ip = match o {
                    [127, ..] => *node.ip(),
                    [192, 168, x, y] => Ipv4Addr::new(127, 168, x, y),
                    _ => return Err(FabricError::DialRefused(node)),
                };
                Ok(SocketAddr::V4(SocketAddrV4::new(ip, node.port())))
            }
            NetworkMode::Netns => match node.ip().octets() {
                [127, ..] | [192, 168, ..] => Ok(SocketAddr::V4(node)),
                _ if in_bench_range(*node.ip()) => Ok(SocketAddr::V4(node)),
                _ => Err(FabricError::NetnsDialRefused(node)),
            },
        }
    }

    /// The socket address a listener of a balancer address binds.
    pub fn bind(&self, ip: Ipv4Addr, port: u16) -> Result<SocketAddr, FabricError> {
        match self.mode {
            NetworkMode::Direct => Ok(SocketAddr::V4(SocketAddrV4::new(ip, port))),
            NetworkMode::Loopback if ip.is_loopback() => Ok(SocketAddr::V4(SocketAddrV4::new(ip, port))),
            NetworkMode::Loopback => Err(FabricError::BindRefused(ip)),
            NetworkMode::Netns if ip.is_loopback() || in_bench_range(ip) => {
                Ok(SocketAddr::V4(SocketAddrV4::new(ip, port)))
            }
            NetworkMode::Netns => Err(FabricError::NetnsBindRefused(ip)),
        }
    }
}

impl Default for Fabric {
    fn default() -> Self {
        Fabric::new(NetworkMode::Loopback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_maps_private_addresses_to_127_168() {
        let f = Fabric::default();
        assert_eq!(f.dial(a("192.168.130.7:8080")).unwrap(), "127.168.130.7:8080".parse().unwrap());
        assert_eq!(f.dial(a("192.168.0.1:1")).unwrap(), "127.168.0.1:1".parse().unwrap());
    }

    #[test]
    fn loopback_dials_loopback_addresses_as_they_are() {
        let f = Fabric::default();
        assert_eq!(f.dial(a("127.0.0.1:80")).unwrap(), "127.0.0.1:80".parse().unwrap());
        assert_eq!(f.dial(a("127.168.1.2:80")).unwrap(), "127.168.1.2:80".parse().unwrap());
    }

    #[test]
    fn loopback_refuses_to_dial_anything_else() {
        let f = Fabric::default();
        for s in ["10.0.0.1:80", "172.16.0.1:80", "8.8.8.8:53", "0.0.0.0:80", "255.255.255.255:1", "192.169.0.1:80"] {
            assert_eq!(f.dial(a(s)), Err(FabricError::DialRefused(a(s))), "{s}");
        }
    }

    #[test]
    fn loopback_binds_only_loopback() {
        let f = Fabric::default();
        assert_eq!(f.bind("127.10.0.5".parse().unwrap(), 80).unwrap(), "127.10.0.5:80".parse().unwrap());
        assert!(f.bind("0.0.0.0".parse().unwrap(), 80).is_err());
        assert!(f.bind("203.0.113.5".parse().unwrap(), 80).is_err());
        assert!(f.bind("192.168.1.1".parse().unwrap(), 80).is_err());
    }

    #[test]
    fn netns_mode_dials_private_and_benchmarking_addresses_as_they_are_and_nothing_else() {
        let f = Fabric::new(NetworkMode::Netns);
        assert_eq!(f.dial(a("192.168.130.7:80")).unwrap(), "192.168.130.7:80".parse().unwrap());
        assert_eq!(f.dial(a("198.19.0.9:80")).unwrap(), "198.19.0.9:80".parse().unwrap());
        assert_eq!(f.dial(a("127.0.0.1:80")).unwrap(), "127.0.0.1:80".parse().unwrap());
        for s in ["10.0.0.1:80", "172.16.0.1:80", "8.8.8.8:53", "198.20.0.1:80", "192.169.0.1:80"] {
            assert_eq!(f.dial(a(s)), Err(FabricError::NetnsDialRefused(a(s))), "{s}");
        }
        assert!(f.bind("198.18.0.5".parse().unwrap(), 80).is_ok());
        assert!(f.bind("127.0.0.5".parse().unwrap(), 80).is_ok());
        for ip in ["0.0.0.0", "192.168.1.1", "203.0.113.5"] {
            assert!(f.bind(ip.parse().unwrap(), 80).is_err(), "{ip}");
        }
    }

    #[test]
    fn back_ends_see_a_netns_balancer_at_its_own_address() {
        assert_eq!(source_of(Some("198.18.0.5:80".parse().unwrap())), Some("198.18.0.5".parse().unwrap()));
        assert_eq!(source_of(Some("127.10.0.5:80".parse().unwrap())), None);
        assert_eq!(source_of(None), None);
    }

    #[test]
    fn direct_mode_uses_addresses_unchanged() {
        // No traffic: only the mapping is checked.
        let f = Fabric::new(NetworkMode::Direct);
        assert_eq!(f.dial(a("192.168.1.1:80")).unwrap(), "192.168.1.1:80".parse().unwrap());
        assert_eq!(f.bind("203.0.113.5".parse().unwrap(), 443).unwrap(), "203.0.113.5:443".parse().unwrap());
    }
}
