//! Load balancers, their configs (one per port, unique by constraint) and nodes (labels unique
//! per config by constraint). A config's `ssl_key` is stored for the data plane; the row types
//! that carry it have no `Debug`, so it cannot reach a log line by accident.

mod read;
mod write;

pub use read::TrafficSample;

use crate::db::Row;
use nubis_model::{Error, Result, Timestamp};

use crate::rows::RowExt;

#[derive(Debug, Clone, PartialEq)]
pub struct BalancerRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub region: String,
    pub ipv4: String,
    pub v4: u32,
    pub ipv6: Option<String>,
    pub client_conn_throttle: i64,
    /// New UDP sessions per second per client address, 0..20 (0: off).
    pub client_udp_sess_throttle: i64,
    pub tags: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// Everything of a config a client or the data plane sets (enums as their API names).
#[derive(Clone, PartialEq)]
pub struct ConfigFields {
    pub label: Option<String>,
    pub port: i64,
    pub protocol: String,
    pub algorithm: String,
    pub stickiness: String,
    pub check: String,
    pub check_interval: i64,
    pub check_timeout: i64,
    pub check_attempts: i64,
    pub check_path: String,
    pub check_body: String,
    pub check_passive: bool,
    pub proxy_protocol: String,
    pub cipher_suite: String,
    pub ssl_cert: Option<String>,
    /// Secret: never returned, never logged.
    pub ssl_key: Option<String>,
    pub ssl_commonname: String,
    pub ssl_fingerprint: String,
    /// The port the health checks of a `udp` config connect to.
    pub udp_check_port: i64,
    /// Seconds a `udp` session may stay idle (read-only in the API).
    pub udp_session_timeout: i64,
}

#[derive(Clone, PartialEq)]
pub struct ConfigRow {
    pub id: i64,
    pub nodebalancer_id: i64,
    pub account_id: i64,
    pub f: ConfigFields,
    pub created: Timestamp,
    pub updated: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeFields {
    pub label: String,
    /// `<ipv4>:<port>` as the API shows it.
    pub address: String,
    pub v4: u32,
    pub port: i64,
    pub weight: i64,
    pub mode: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub id: i64,
    pub config_id: i64,
    pub nodebalancer_id: i64,
    pub account_id: i64,
    pub f: NodeFields,
    pub status: String,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub struct NewBalancer<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub region: &'a str,
    pub ipv4: &'a str,
    pub v4: u32,
    pub ipv6: Option<&'a str>,
    pub client_conn_throttle: i64,
    pub client_udp_sess_throttle: i64,
    pub tags: &'a [String],
    pub created: Timestamp,
}

const NB_COLS: &str = "id, account_id, label, region, ipv4, v4, ipv6, client_conn_throttle, client_udp_sess_throttle, tags, created, updated";
const CFG_COLS: &str = "id, nodebalancer_id, account_id, label, port, protocol, algorithm, stickiness, check_type, \
                        check_interval, check_timeout, check_attempts, check_path, check_body, check_passive, \
                        proxy_protocol, cipher_suite, ssl_cert, ssl_key, ssl_commonname, ssl_fingerprint, \
                        udp_check_port, udp_session_timeout, created, updated";
const NODE_COLS: &str =
    "id, config_id, nodebalancer_id, account_id, label, address, v4, port, weight, mode, status, created, updated";

fn balancer(r: &Row) -> Result<BalancerRow> {
    Ok(BalancerRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        region: r.str("region")?,
        ipv4: r.str("ipv4")?,
        v4: r.i64("v4")? as u32,
        ipv6: r.opt_str("ipv6")?,
        client_conn_throttle: r.i64("client_conn_throttle")?,
        client_udp_sess_throttle: r.i64("client_udp_sess_throttle")?,
        tags: serde_json::from_str(&r.str("tags")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn config(r: &Row) -> Result<ConfigRow> {
    Ok(ConfigRow {
        id: r.i64("id")?,
        nodebalancer_id: r.i64("nodebalancer_id")?,
        account_id: r.i64("account_id")?,
        f: ConfigFields {
            label: r.opt_str("label")?,
            port: r.i64("port")?,
            protocol: r.str("protocol")?,
            algorithm: r.str("algorithm")?,
            stickiness: r.str("stickiness")?,
            check: r.str("check_type")?,
            check_interval: r.i64("check_interval")?,
            check_timeout: r.i64("check_timeout")?,
            check_attempts: r.i64("check_attempts")?,
            check_path: r.str("check_path")?,
            check_body: r.str("check_body")?,
            check_passive: r.bool("check_passive")?,
            proxy_protocol: r.str("proxy_protocol")?,
            cipher_suite: r.str("cipher_suite")?,
            ssl_cert: r.opt_str("ssl_cert")?,
            ssl_key: r.opt_str("ssl_key")?,
            ssl_commonname: r.str("ssl_commonname")?,
            ssl_fingerprint: r.str("ssl_fingerprint")?,
            udp_check_port: r.i64("udp_check_port")?,
            udp_session_timeout: r.i64("udp_session_timeout")?,
        },
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn node(r: &Row) -> Result<NodeRow> {
    Ok(NodeRow {
        id: r.i64("id")?,
        config_id: r.i64("config_id")?,
        nodebalancer_id: r.i64("nodebalancer_id")?,
        account_id: r.i64("account_id")?,
        f: NodeFields {
            label: r.str("label")?,
            address: r.str("address")?,
            v4: r.i64("v4")? as u32,
            port: r.i64("port")?,
            weight: r.i64("weight")?,
            mode: r.str("mode")?,
        },
        status: r.str("status")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn tags_json(tags: &[String]) -> Result<String> {
    serde_json::to_string(tags).map_err(Error::internal)
}
