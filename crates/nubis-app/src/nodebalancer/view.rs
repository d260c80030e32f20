//! Building the balancer, config, node and stats records from stored rows: `hostname`,
//! `transfer` (MB this month), `nodes_status`, redacted certificate fields, stats series.

use std::collections::HashMap;

use nubis_model::balancer::{
    Algorithm, CheckKind, CipherSuite, NodeMode, NodeStatus, Protocol, ProxyProtocol, Stickiness,
};
use nubis_model::nodebalancer::{
    ConfigCipherSuite, NodeBalancer, NodeBalancerConfig, NodeBalancerNode, NodeBalancerStats, NodesStatus, REDACTED,
    StatsData, StatsTraffic, Transfer,
};
use nubis_store::nodebalancers::{BalancerRow, ConfigRow, NodeRow, TrafficSample};

/// Length of one traffic period, in seconds.
pub(crate) const BUCKET_SECS: i64 = 300;
/// Periods in the stats series (one day).
const STATS_BUCKETS: i64 = 288;
const MB: f64 = 1_048_576.0;

/// The start of the 5-minute period holding `unix` seconds.
pub(crate) fn bucket_of(unix: i64) -> i64 {
    unix - unix.rem_euclid(BUCKET_SECS)
}

/// Unix seconds of the first moment of the current month (UTC), by the one clock.
pub(crate) fn month_start() -> i64 {
    use chrono::Datelike;
    let now = nubis_model::Timestamp::now().0.date();
    now.with_day(1).and_then(|d| d.and_hms_opt(0, 0, 0)).map(|d| d.and_utc().timestamp()).unwrap_or(0)
}

/// The balancer; its `hostname` is, as in the hosted API (`<a-b-c-d>.ip.linodeusercontent.com`),
/// the default reverse name of its IPv4 address (`127-10-0-5.ip.nubis.test`).
pub(crate) fn balancer(b: &BalancerRow, transfer: &HashMap<i64, (i64, i64)>, hostname: String) -> NodeBalancer {
    let (bin, bout) = transfer.get(&b.id).copied().unwrap_or((0, 0));
    let mb = |n: i64| n as f64 / MB;
    NodeBalancer {
        id: b.id,
        label: b.label.clone(),
        region: b.region.clone(),
        hostname,
        ipv4: b.ipv4.clone(),
        ipv6: b.ipv6.clone(),
        client_conn_throttle: b.client_conn_throttle,
        client_udp_sess_throttle: b.client_udp_sess_throttle,
        transfer: Transfer { inbound: Some(mb(bin)), out: Some(mb(bout)), total: Some(mb(bin + bout)) },
        tags: b.tags.clone(),
        created: b.created,
        updated: b.updated,
    }
}

/// A config's record; `status` holds how many of its nodes are up and down, as
/// `(config, up, down)` (none: no node is either).
pub(crate) fn config(c: &ConfigRow, status: &[(i64, i64, i64)]) -> NodeBalancerConfig {
    let (up, down) = status.iter().find(|s| s.0 == c.id).map_or((0, 0), |s| (s.1, s.2));
    let f = &c.f;
    NodeBalancerConfig {
        id: c.id,
        port: f.port,
        protocol: Protocol::parse(&f.protocol).unwrap_or(Protocol::Http),
        algorithm: Algorithm::parse(&f.algorithm).unwrap_or(Algorithm::Roundrobin),
        stickiness: Stickiness::parse(&f.stickiness).unwrap_or(Stickiness::None),
        check: CheckKind::parse(&f.check).unwrap_or(CheckKind::None),
        check_interval: f.check_interval,
        check_timeout: f.check_timeout,
        check_attempts: f.check_attempts,
        check_path: f.check_path.clone(),
        check_body: f.check_body.clone(),
        check_passive: f.check_passive,
        proxy_protocol: ProxyProtocol::parse(&f.proxy_protocol).unwrap_or(ProxyProtocol::None),
        cipher_suite: match CipherSuite::parse(&f.cipher_suite) {
            Some(c) => ConfigCipherSuite::Suite(c),
            None if f.cipher_suite == "none" => ConfigCipherSuite::None,
            None => ConfigCipherSuite::Suite(CipherSuite::Recommended),
        },
        nodebalancer_id: c.nodebalancer_id,
        ssl_commonname: f.ssl_commonname.clone(),
        ssl_fingerprint: f.ssl_fingerprint.clone(),
        ssl_cert: f.ssl_cert.as_ref().map(|_| REDACTED.to_string()),
        ssl_key: f.ssl_key.as_ref().map(|_| REDACTED.to_string()),
        nodes_status: NodesStatus { up, down },
        udp_check_port: f.udp_check_port,
        udp_session_timeout: f.udp_session_timeout,
    }
}

pub(crate) fn node(n: &NodeRow) -> NodeBalancerNode {
    NodeBalancerNode {
        id: n.id,
        address: n.f.address.clone(),
        label: n.f.label.clone(),
        status: NodeStatus::parse(&n.status).unwrap_or(NodeStatus::Unknown),
        weight: n.f.weight,
        mode: NodeMode::parse(&n.f.mode).unwrap_or(NodeMode::Accept),
        config_id: n.config_id,
        nodebalancer_id: n.nodebalancer_id,
    }
}

/// The stats of the last day: one point per 5-minute period (zero where nothing happened),
/// connections per second and bits per second averaged over the period.
pub(crate) fn stats(b: &BalancerRow, samples: &[TrafficSample], now_unix: i64) -> NodeBalancerStats {
    let last = bucket_of(now_unix);
    let first = last - (STATS_BUCKETS - 1) * BUCKET_SECS;
    let by: HashMap<i64, &TrafficSample> = samples.iter().map(|s| (s.bucket, s)).collect();
    let (mut conns, mut tin, mut tout) = (Vec::new(), Vec::new(), Vec::new());
    let secs = BUCKET_SECS as f64;
    let mut t = first;
    while t <= last {
        let ms = (t * 1000) as f64;
        let s = by.get(&t);
        conns.push([ms, s.map_or(0.0, |s| s.connections as f64 / secs)]);
        tin.push([ms, s.map_or(0.0, |s| s.bytes_in as f64 * 8.0 / secs)]);
        tout.push([ms, s.map_or(0.0, |s| s.bytes_out as f64 * 8.0 / secs)]);
        t += BUCKET_SECS;
    }
    NodeBalancerStats {
        data: StatsData { connections: conns, traffic: StatsTraffic { inbound: tin, out: tout } },
        title: format!("{} ({}) - day (5 min avg)", b.label, b.id),
    }
}

/// The first period of the stats series ending at `now_unix`.
pub(crate) fn stats_since(now_unix: i64) -> i64 {
    bucket_of(now_unix) - (STATS_BUCKETS - 1) * BUCKET_SECS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(bucket_of(1_000_000), 999_900);
        assert_eq!(bucket_of(999_900), 999_900);
    }
}
