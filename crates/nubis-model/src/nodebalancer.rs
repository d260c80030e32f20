//! Load balancers (NodeBalancers) as the API shows them: the reference schemas `NodeBalancer`,
//! `NodeBalancerConfig`, `NodeBalancerNode` and `NodeBalancerStats`. The data plane's contract
//! (what runs) is [`crate::balancer`]; these are the records clients read.

use serde::Serialize;
use utoipa::ToSchema;

use crate::Timestamp;
use crate::balancer::{Algorithm, CheckKind, CipherSuite, NodeMode, NodeStatus, Protocol, ProxyProtocol, Stickiness};

/// What `ssl_cert` and `ssl_key` show when they are set (the reference never returns them).
pub const REDACTED: &str = "<REDACTED>";

/// Transfer this month, in MB (2^20 bytes), as the reference's `transfer` object.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Transfer {
    /// Bytes received from clients.
    #[serde(rename = "in")]
    pub inbound: Option<f64>,
    /// Bytes sent to clients.
    pub out: Option<f64>,
    pub total: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NodeBalancer {
    pub id: i64,
    pub label: String,
    pub region: String,
    pub hostname: String,
    pub ipv4: String,
    pub ipv6: Option<String>,
    pub client_conn_throttle: i64,
    /// New UDP sessions per second per client address, 0..20 (0: no throttling).
    pub client_udp_sess_throttle: i64,
    pub transfer: Transfer,
    pub tags: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// A config's `cipher_suite` as shown: the suite of its TLS listener, or `none` (a `udp` config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConfigCipherSuite {
    Suite(CipherSuite),
    #[serde(serialize_with = "none_str")]
    None,
}

fn none_str<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("none")
}

/// Counts of a config's nodes by health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct NodesStatus {
    pub up: i64,
    pub down: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NodeBalancerConfig {
    pub id: i64,
    pub port: i64,
    pub protocol: Protocol,
    pub algorithm: Algorithm,
    pub stickiness: Stickiness,
    pub check: CheckKind,
    pub check_interval: i64,
    pub check_timeout: i64,
    pub check_attempts: i64,
    pub check_path: String,
    pub check_body: String,
    pub check_passive: bool,
    pub proxy_protocol: ProxyProtocol,
    /// `none` for `udp` configs (ciphers do not apply to them).
    #[schema(value_type = String, example = "recommended")]
    pub cipher_suite: ConfigCipherSuite,
    pub nodebalancer_id: i64,
    pub ssl_commonname: String,
    pub ssl_fingerprint: String,
    /// `<REDACTED>` when a certificate is set, null otherwise.
    pub ssl_cert: Option<String>,
    /// `<REDACTED>` when a key is set, null otherwise.
    pub ssl_key: Option<String>,
    pub nodes_status: NodesStatus,
    /// The port of the nodes that the health checks of a `udp` config connect to (default 80).
    pub udp_check_port: i64,
    /// Seconds a UDP session may stay idle before it is closed (16; read-only).
    pub udp_session_timeout: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NodeBalancerNode {
    pub id: i64,
    /// `<private IPv4>:<port>`.
    pub address: String,
    pub label: String,
    pub status: NodeStatus,
    pub weight: i64,
    pub mode: NodeMode,
    pub config_id: i64,
    pub nodebalancer_id: i64,
}

/// `GET /v4/nodebalancers/{id}/stats`: series of `[unix milliseconds, value]` pairs.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NodeBalancerStats {
    pub data: StatsData,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StatsData {
    /// New connections per second, averaged over each 5-minute period.
    pub connections: Vec<[f64; 2]>,
    pub traffic: StatsTraffic,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StatsTraffic {
    /// Bits per second received from clients, averaged over each 5-minute period.
    #[serde(rename = "in")]
    pub inbound: Vec<[f64; 2]>,
    /// Bits per second sent to clients, averaged over each 5-minute period.
    pub out: Vec<[f64; 2]>,
}

/// A balancer's VPC configuration (hosted API 4.229: `GET /v4/nodebalancers/{id}/vpcs`). nubis
/// places no balancer in a VPC, so none exists; the type gives the lists their schema.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NodeBalancerVpcConfig {
    pub id: i64,
    pub nodebalancer_id: i64,
    pub vpc_id: Option<i64>,
    pub subnet_id: i64,
    pub ipv4_range: String,
}

/// Filterable fields (the reference's `x-linode-filterable`, plus `id`).
pub const NODEBALANCER_FILTERABLE: &[&str] = &["id", "label", "region", "ipv4", "tags"];
pub const CONFIG_FILTERABLE: &[&str] = &["id", "port", "protocol", "algorithm", "stickiness", "check"];
pub const NODE_FILTERABLE: &[&str] = &["id", "label", "address", "status", "mode", "weight"];

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Http => "http",
            Protocol::Https => "https",
            Protocol::Udp => "udp",
        }
    }
    pub fn parse(s: &str) -> Option<Protocol> {
        [Protocol::Tcp, Protocol::Http, Protocol::Https, Protocol::Udp].into_iter().find(|x| x.name() == s)
    }
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Roundrobin => "roundrobin",
            Algorithm::Leastconn => "leastconn",
            Algorithm::Source => "source",
            Algorithm::RingHash => "ring_hash",
        }
    }
    pub fn parse(s: &str) -> Option<Algorithm> {
        [Algorithm::Roundrobin, Algorithm::Leastconn, Algorithm::Source, Algorithm::RingHash]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

impl Stickiness {
    pub fn name(self) -> &'static str {
        match self {
            Stickiness::None => "none",
            Stickiness::Table => "table",
            Stickiness::HttpCookie => "http_cookie",
            Stickiness::Session => "session",
            Stickiness::SourceIp => "source_ip",
        }
    }
    pub fn parse(s: &str) -> Option<Stickiness> {
        [Stickiness::None, Stickiness::Table, Stickiness::HttpCookie, Stickiness::Session, Stickiness::SourceIp]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

impl CheckKind {
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::None => "none",
            CheckKind::Connection => "connection",
            CheckKind::Http => "http",
            CheckKind::HttpBody => "http_body",
        }
    }
    pub fn parse(s: &str) -> Option<CheckKind> {
        [CheckKind::None, CheckKind::Connection, CheckKind::Http, CheckKind::HttpBody]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

impl ProxyProtocol {
    pub fn name(self) -> &'static str {
        match self {
            ProxyProtocol::None => "none",
            ProxyProtocol::V1 => "v1",
            ProxyProtocol::V2 => "v2",
        }
    }
    pub fn parse(s: &str) -> Option<ProxyProtocol> {
        [ProxyProtocol::None, ProxyProtocol::V1, ProxyProtocol::V2].into_iter().find(|x| x.name() == s)
    }
}

impl CipherSuite {
    pub fn name(self) -> &'static str {
        match self {
            CipherSuite::Recommended => "recommended",
            CipherSuite::Legacy => "legacy",
        }
    }
    pub fn parse(s: &str) -> Option<CipherSuite> {
        [CipherSuite::Recommended, CipherSuite::Legacy].into_iter().find(|x| x.name() == s)
    }
}

impl NodeMode {
    pub fn name(self) -> &'static str {
        match self {
            NodeMode::Accept => "accept",
            NodeMode::Reject => "reject",
            NodeMode::Drain => "drain",
            NodeMode::Backup => "backup",
        }
    }
    pub fn parse(s: &str) -> Option<NodeMode> {
        [NodeMode::Accept, NodeMode::Reject, NodeMode::Drain, NodeMode::Backup].into_iter().find(|x| x.name() == s)
    }
}

impl NodeStatus {
    pub fn name(self) -> &'static str {
        match self {
            NodeStatus::Up => "UP",
            NodeStatus::Down => "DOWN",
            NodeStatus::Unknown => "unknown",
        }
    }
    pub fn parse(s: &str) -> Option<NodeStatus> {
        [NodeStatus::Up, NodeStatus::Down, NodeStatus::Unknown].into_iter().find(|x| x.name() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_names_match_their_json() {
        for p in [Protocol::Tcp, Protocol::Http, Protocol::Https, Protocol::Udp] {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
            assert_eq!(Protocol::parse(p.name()), Some(p));
        }
        for s in [NodeStatus::Up, NodeStatus::Down, NodeStatus::Unknown] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        for s in
            [Stickiness::None, Stickiness::Table, Stickiness::HttpCookie, Stickiness::Session, Stickiness::SourceIp]
        {
            assert_eq!(Stickiness::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        for a in [Algorithm::Roundrobin, Algorithm::Leastconn, Algorithm::Source, Algorithm::RingHash] {
            assert_eq!(serde_json::to_value(a).unwrap(), a.name());
            assert_eq!(Algorithm::parse(a.name()), Some(a));
        }
        assert_eq!(serde_json::to_value(ConfigCipherSuite::None).unwrap(), "none");
        assert_eq!(serde_json::to_value(ConfigCipherSuite::Suite(CipherSuite::Legacy)).unwrap(), "legacy");
        for c in [CheckKind::None, CheckKind::Connection, CheckKind::Http, CheckKind::HttpBody] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
        for m in [NodeMode::Accept, NodeMode::Reject, NodeMode::Drain, NodeMode::Backup] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
    }
}
