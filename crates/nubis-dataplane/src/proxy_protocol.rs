//! PROXY protocol headers (version 1 text and version 2 binary) that `tcp` configs send to the back
//! end before any client byte: the real client address and the balancer address and port.

use std::net::SocketAddr;

use nubis_model::balancer::ProxyProtocol;

/// The v2 signature.
pub const V2_SIGNATURE: [u8; 12] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A];

/// The header to send for a connection from `client` accepted on `local`, or none.
pub fn header(kind: ProxyProtocol, client: SocketAddr, local: SocketAddr) -> Vec<u8> {
    match kind {
        ProxyProtocol::None => Vec::new(),
        ProxyProtocol::V1 => v1(client, local),
        ProxyProtocol::V2 => v2(client, local),
    }
}

fn v1(client: SocketAddr, local: SocketAddr) -> Vec<u8> {
    match (client, local) {
        (SocketAddr::V4(c), SocketAddr::V4(l)) => {
            format!("PROXY TCP4 {} {} {} {}\r\n", c.ip(), l.ip(), c.port(), l.port()).into_bytes()
        }
        (SocketAddr::V6(c), SocketAddr::V6(l)) => {
            format!("PROXY TCP6 {} {} {} {}\r\n", c.ip(), l.ip(), c.port(), l.port()).into_bytes()
        }
        _ => b"PROXY UNKNOWN\r\n".to_vec(),
    }
}

fn v2(client: SocketAddr, local: SocketAddr) -> Vec<u8> {
    let mut out = Vec::with_capacity(52);
    out.extend_from_slice(&V2_SIGNATURE);
    out.push(0x21); // version 2, command PROXY
    match (client, local) {
        (SocketAddr::V4(c), SocketAddr::V4(l)) => {
            out.push(0x11); // AF_INET, STREAM
            out.extend_from_slice(&12u16.to_be_bytes());
            out.extend_from_slice(&c.ip().octets());
            out.extend_from_slice(&l.ip().octets());
            out.extend_from_slice(&c.port().to_be_bytes());
            out.extend_from_slice(&l.port().to_be_bytes());
        }
        (SocketAddr::V6(c), SocketAddr::V6(l)) => {
            out.push(0x21); // AF_INET6, STREAM
            out.extend_from_slice(&36u16.to_be_bytes());
            out.extend_from_slice(&c.ip().octets());
            out.extend_from_slice(&l.ip().octets());
            out.extend_from_slice(&c.port().to_be_bytes());
            out.extend_from_slice(&l.port().to_be_bytes());
        }
        _ => {
            out.push(0x00); // UNSPEC
            out.extend_from_slice(&0u16.to_be_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_text() {
        let h = header(ProxyProtocol::V1, "127.0.0.2:5000".parse().unwrap(), "127.10.0.5:80".parse().unwrap());
        assert_eq!(h, b"PROXY TCP4 127.0.0.2 127.10.0.5 5000 80\r\n");
    }

    #[test]
    fn v2_binary() {
        let h = header(ProxyProtocol::V2, "127.0.0.2:5000".parse().unwrap(), "127.10.0.5:80".parse().unwrap());
        assert_eq!(h.len(), 28);
        assert_eq!(&h[..12], &V2_SIGNATURE);
        assert_eq!(h[12], 0x21);
        assert_eq!(h[13], 0x11);
        assert_eq!(&h[14..16], &[0, 12]);
        assert_eq!(&h[16..20], &[127, 0, 0, 2]);
        assert_eq!(&h[20..24], &[127, 10, 0, 5]);
        assert_eq!(&h[24..26], &5000u16.to_be_bytes());
        assert_eq!(&h[26..28], &80u16.to_be_bytes());
        assert!(header(ProxyProtocol::None, "127.0.0.2:1".parse().unwrap(), "127.0.0.3:2".parse().unwrap()).is_empty());
    }
}
