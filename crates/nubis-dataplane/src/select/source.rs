//! Source hashing: the client IP address always maps to the same node while the set of available
//! nodes is unchanged, weights respected.

use std::net::IpAddr;

/// A stable 64-bit hash of an address (FNV-1a followed by a finalizer); the same everywhere, so a
/// client maps to the same node across restarts.
pub(crate) fn hash_ip(ip: IpAddr) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    match ip {
        IpAddr::V4(v) => feed(&v.octets()),
        IpAddr::V6(v) => feed(&v.octets()),
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// Position in `weights` chosen for the client.
pub(crate) fn pick(weights: &[u32], ip: IpAddr) -> Option<usize> {
    let total: u64 = weights.iter().map(|&w| u64::from(w.max(1))).sum();
    if total == 0 {
        return None;
    }
    let mut x = hash_ip(ip) % total;
    for (i, &w) in weights.iter().enumerate() {
        let w = u64::from(w.max(1));
        if x < w {
            return Some(i);
        }
        x -= w;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_client_same_node_and_clients_spread() {
        let w = [1, 1, 1];
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(pick(&w, a), pick(&w, a));
        let mut seen = [0; 3];
        for i in 1..=200u8 {
            seen[pick(&w, IpAddr::from([127, 0, 1, i])).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&c| c > 20), "{seen:?}");
    }
}
