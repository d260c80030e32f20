//! Runs the data plane alone from a JSON spec file (for benchmarks and manual tries):
//! `cargo run --release -p nubis-dataplane --example lb -- spec.json`.
//!
//! ```json
//! { "worker_threads": 2,
//!   "dataplane": { "client_idle_timeout_ms": 30000 },
//!   "balancers": [ { "id": 1, "ipv4": "127.0.0.4", "client_conn_throttle": 0,
//!     "configs": [ { "id": 1, "port": 18081, "protocol": "http", "algorithm": "roundrobin",
//!       "check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 3,
//!       "tls_pem_file": "cert-and-key.pem",
//!       "nodes": [ { "id": 1, "address": "127.0.0.1:18080", "weight": 1, "mode": "accept" } ] } ] } ] }
//! ```
//! `worker_threads` is the number of proxy threads (`DataplaneSettings::worker_threads`). Every field but ids, addresses, ports, protocols and nodes has a default. Network mode is
//! loopback: nothing outside 127.0.0.0/8 is dialed or bound. Stops on SIGINT or SIGTERM.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;

use nubis_dataplane::{DataplaneSettings, NetworkMode};
use nubis_model::balancer::*;
use nubis_model::config::DataplaneConfig;
use serde::Deserialize;

#[derive(Deserialize)]
struct Spec {
    #[serde(default = "two")]
    worker_threads: usize,
    #[serde(default)]
    dataplane: DataplaneConfig,
    balancers: Vec<Balancer>,
}

#[derive(Deserialize)]
struct Balancer {
    id: i64,
    ipv4: Ipv4Addr,
    #[serde(default)]
    client_conn_throttle: u32,
    configs: Vec<Config>,
}

#[derive(Deserialize)]
struct Config {
    id: i64,
    port: u16,
    protocol: Protocol,
    #[serde(default = "rr")]
    algorithm: Algorithm,
    #[serde(default = "no_sticky")]
    stickiness: Stickiness,
    #[serde(default = "conn_check")]
    check: CheckKind,
    #[serde(default = "two_u32")]
    check_interval: u32,
    #[serde(default = "one")]
    check_timeout: u32,
    #[serde(default = "three")]
    check_attempts: u32,
    #[serde(default)]
    check_path: String,
    #[serde(default)]
    check_body: String,
    #[serde(default)]
    check_passive: bool,
    #[serde(default = "no_pp")]
    proxy_protocol: ProxyProtocol,
    #[serde(default = "recommended")]
    cipher_suite: CipherSuite,
    /// One PEM file holding the certificate chain and the key.
    tls_pem_file: Option<String>,
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    id: i64,
    address: SocketAddrV4,
    #[serde(default = "one_u8")]
    weight: u8,
    #[serde(default = "accept")]
    mode: NodeMode,
}

fn two() -> usize {
    2
}
fn two_u32() -> u32 {
    2
}
fn one() -> u32 {
    1
}
fn three() -> u32 {
    3
}
fn one_u8() -> u8 {
    1
}
fn rr() -> Algorithm {
    Algorithm::Roundrobin
}
fn no_sticky() -> Stickiness {
    Stickiness::None
}
fn conn_check() -> CheckKind {
    CheckKind::Connection
}
fn no_pp() -> ProxyProtocol {
    ProxyProtocol::None
}
fn recommended() -> CipherSuite {
    CipherSuite::Recommended
}
fn accept() -> NodeMode {
    NodeMode::Accept
}

fn desired(spec: &Spec) -> Result<DesiredState, Box<dyn std::error::Error>> {
    let mut balancers = Vec::new();
    for b in &spec.balancers {
        let mut configs = Vec::new();
        for c in &b.configs {
            let tls = match &c.tls_pem_file {
                Some(f) => {
                    let pem = std::fs::read_to_string(f)?;
                    Some(TlsMaterial { cert_pem: pem.clone(), key_pem: pem })
                }
                None => None,
            };
            configs.push(ConfigSpec {
                id: c.id,
                port: c.port,
                protocol: c.protocol,
                algorithm: c.algorithm,
                stickiness: c.stickiness,
                check: HealthCheck {
                    kind: c.check,
                    interval_secs: c.check_interval,
                    timeout_secs: c.check_timeout,
                    attempts: c.check_attempts,
                    path: c.check_path.clone(),
                    body: c.check_body.clone(),
                    passive: c.check_passive,
                },
                proxy_protocol: c.proxy_protocol,
                cipher_suite: c.cipher_suite,
                tls,
                nodes: c
                    .nodes
                    .iter()
                    .map(|n| NodeSpec { id: n.id, address: n.address, weight: n.weight, mode: n.mode })
                    .collect(),
                udp_check_port: 80,
                udp_session_timeout_secs: 16,
            });
        }
        balancers.push(Arc::new(BalancerSpec {
            id: b.id,
            ipv4: b.ipv4,
            client_conn_throttle: b.client_conn_throttle,
            client_udp_sess_throttle: 0,
            configs,
            firewall: None,
        }));
    }
    Ok(DesiredState { version: 1, balancers })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: lb SPEC.json")?;
    let spec: Spec = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    tracing_subscriber::fmt().with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into())).init();
    let state = desired(&spec)?;
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(spec.worker_threads.max(1)).enable_all().build()?;
    rt.block_on(async move {
        let (_tx, rx) = tokio::sync::watch::channel(Arc::new(state));
        let (otx, mut orx) = tokio::sync::mpsc::channel(1024);
        let dp = nubis_dataplane::start(DataplaneSettings::from(&spec.dataplane), NetworkMode::Loopback, rx, otx);
        tokio::spawn(async move {
            while let Some(o) = orx.recv().await {
                if let Observation::NodeHealth { .. } = o {
                    tracing::info!(?o, "observation");
                }
            }
        });
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        dp.shutdown().await;
    });
    Ok(())
}
