//! The desired state of the load-balancer data plane, and what the data plane observes.
//!
//! The application publishes a [`DesiredState`] snapshot whenever balancers, configs, nodes or
//! their firewalls change; the data plane's reconcile loop makes its running listeners match it.
//! The data plane reports back [`Observation`]s (node health, traffic counters). These types are
//! the whole contract between the two halves: the data plane never sees the database or the API.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::firewall::CompiledRules;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Http,
    Https,
    /// Datagrams proxied per client session (client address -> node).
    Udp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    Roundrobin,
    Leastconn,
    Source,
    /// `udp` only: consistent hashing of the client address over the nodes.
    #[serde(rename = "ring_hash")]
    RingHash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stickiness {
    None,
    Table,
    HttpCookie,
    /// `udp` only: a session's datagrams go to one node (the default of `udp` configs).
    Session,
    /// `udp` only: a client address's sessions all go to one node.
    SourceIp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    None,
    Connection,
    Http,
    HttpBody,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProxyProtocol {
    None,
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CipherSuite {
    Recommended,
    Legacy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeMode {
    Accept,
    Reject,
    Drain,
    Backup,
}

/// A node's health as the API reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum NodeStatus {
    #[serde(rename = "UP")]
    Up,
    #[serde(rename = "DOWN")]
    Down,
    #[serde(rename = "unknown")]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    pub kind: CheckKind,
    /// Seconds between checks of one node.
    pub interval_secs: u32,
    /// Seconds to wait for one check.
    pub timeout_secs: u32,
    /// Consecutive failures before a node is marked down.
    pub attempts: u32,
    /// Path of `http` and `http_body` checks.
    pub path: String,
    /// Text the response body of an `http_body` check must contain.
    pub body: String,
    /// Failed proxied requests and connections count against a node.
    pub passive: bool,
}

/// PEM certificate chain and private key of an `https` config.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsMaterial {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsMaterial { .. }")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    pub id: i64,
    /// The node's address as the API stores it (a private IPv4 and a port). The data plane's
    /// fabric decides how to reach it (in loopback mode `192.168.X.Y` becomes `127.168.X.Y`).
    pub address: SocketAddrV4,
    /// 1..255.
    pub weight: u8,
    pub mode: NodeMode,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSpec {
    pub id: i64,
    pub port: u16,
    pub protocol: Protocol,
    pub algorithm: Algorithm,
    pub stickiness: Stickiness,
    pub check: HealthCheck,
    /// Only for `tcp` configs.
    pub proxy_protocol: ProxyProtocol,
    pub cipher_suite: CipherSuite,
    /// Present exactly when `protocol` is `https`.
    pub tls: Option<TlsMaterial>,
    pub nodes: Vec<NodeSpec>,
    /// `udp` configs: the port of the nodes that health checks connect to (the datagrams go to
    /// the node's own port).
    pub udp_check_port: u16,
    /// `udp` configs: seconds a session may stay idle before it is forgotten.
    pub udp_session_timeout_secs: u32,
}

#[derive(Debug, Clone)]
pub struct BalancerSpec {
    pub id: i64,
    /// The address the balancer's listeners bind.
    pub ipv4: Ipv4Addr,
    /// New connections per second allowed per client IP across the balancer; 0 is unlimited.
    pub client_conn_throttle: u32,
    /// New UDP sessions per second allowed per client IP across the balancer; 0 is unlimited.
    pub client_udp_sess_throttle: u32,
    pub configs: Vec<ConfigSpec>,
    /// Inbound rules of the balancer's enabled firewall, if it has one. Every new inbound TCP
    /// connection is checked against them (source address, destination port).
    pub firewall: Option<Arc<CompiledRules>>,
}

/// Everything the data plane should be running. `version` grows with every publication.
#[derive(Debug, Clone, Default)]
pub struct DesiredState {
    pub version: u64,
    pub balancers: Vec<Arc<BalancerSpec>>,
}

/// What the data plane reports back to the control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// A node's health changed (or was first determined).
    NodeHealth { balancer_id: i64, config_id: i64, node_id: i64, status: NodeStatus },
    /// Traffic since the previous sample of the same config.
    Traffic { balancer_id: i64, config_id: i64, connections: u64, bytes_in: u64, bytes_out: u64 },
}
