//! Request bodies of the load-balancer operations and their checks (reference `NodeBalancer`,
//! `NodeBalancerConfig`, `NodeBalancerNode`): every problem is reported at once, nested ones as
//! `configs[0].nodes[1].address`. Enum fields are read as strings so that a bad value is one
//! problem among the others rather than a parse failure that hides them.

use std::net::{Ipv4Addr, SocketAddrV4};

use nubis_model::Problems;
use nubis_model::balancer::{CheckKind, NodeMode, Protocol, ProxyProtocol, Stickiness};
use nubis_model::nodebalancer::REDACTED;
use nubis_model::schema::{int, matching, or_null, pattern, schema, text};
use nubis_model::validate::tag_problem;
use nubis_store::nodebalancers::{ConfigFields, NodeFields};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa::openapi::Schema;

use super::tls;

/// `POST /v4/nodebalancers`.
#[derive(Default, Deserialize, ToSchema)]
pub struct NodeBalancerCreate {
    /// A region with the `NodeBalancers` capability.
    #[schema(required = true, value_type = String)]
    pub region: Option<String>,
    /// 3..32 characters: letters, digits, `-` and `_`; unique among the account's balancers.
    /// Generated when omitted.
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    /// New connections per second per client address, 0..20 (0: no throttling).
    #[schema(schema_with = throttle_schema)]
    pub client_conn_throttle: Option<i64>,
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
    /// A firewall to assign to the balancer.
    pub firewall_id: Option<i64>,
    /// Configs created with the balancer, each with at least one node.
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub configs: Option<Vec<ConfigRequest>>,
    /// New UDP sessions per second per client address, 0..20 (0: no throttling).
    #[schema(schema_with = throttle_schema)]
    pub client_udp_sess_throttle: Option<i64>,
    /// Refused: balancers are not placed in VPCs by this cloud.
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    #[schema(schema_with = nubis_model::schema::absent)]
    pub vpcs: Option<Option<serde_json::Value>>,
}

/// `PUT /v4/nodebalancers/{nodebalancer_id}`. Read-only fields of the record are ignored.
#[derive(Default, Deserialize, ToSchema)]
pub struct NodeBalancerUpdate {
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = throttle_schema)]
    pub client_conn_throttle: Option<i64>,
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
    /// New UDP sessions per second per client address, 0..20 (0: no throttling).
    #[schema(schema_with = throttle_schema)]
    pub client_udp_sess_throttle: Option<i64>,
}

/// A config in a create, update or rebuild. Omitted fields take the reference's defaults on
/// create and keep their values on update. No `Debug`: it may carry a private key.
#[derive(Default, Deserialize, ToSchema)]
pub struct ConfigRequest {
    /// The port of the nodes that the health checks of a `udp` config connect to, 1..65535.
    /// Default 80.
    #[schema(schema_with = port_schema)]
    pub udp_check_port: Option<i64>,
    /// A free label (the walkthrough sends one); up to 100 characters.
    #[schema(schema_with = config_label_schema)]
    pub label: Option<String>,
    /// 1..65535, unique among the balancer's configs. Default 80.
    #[schema(schema_with = port_schema)]
    pub port: Option<i64>,
    /// `http` (default), `https`, `tcp` or `udp`.
    #[schema(value_type = Option<Protocol>)]
    pub protocol: Option<String>,
    /// `roundrobin` (default), `leastconn`, `source` (not `udp`) or `ring_hash` (`udp` only).
    #[schema(value_type = Option<nubis_model::balancer::Algorithm>)]
    pub algorithm: Option<String>,
    /// `none` (default), `table` or `http_cookie` (http and https only); for `udp`: `session`
    /// (default), `source_ip` or `none`.
    #[schema(value_type = Option<Stickiness>)]
    pub stickiness: Option<String>,
    /// `none` (default), `connection`, `http` or `http_body`.
    #[schema(value_type = Option<CheckKind>)]
    pub check: Option<String>,
    /// Seconds between checks, 2..3600, greater than `check_timeout`. Default 31.
    #[schema(schema_with = check_interval_schema)]
    pub check_interval: Option<i64>,
    /// Seconds, 1..30, less than `check_interval`. Default 30.
    #[schema(schema_with = check_timeout_schema)]
    pub check_timeout: Option<i64>,
    /// 1..30. Default 3.
    #[schema(schema_with = check_attempts_schema)]
    pub check_attempts: Option<i64>,
    /// Required by `http` and `http_body` checks: a path beginning with `/`.
    #[schema(schema_with = check_path_schema)]
    pub check_path: Option<String>,
    /// Required by `http_body` checks: text the response body must contain.
    #[schema(schema_with = check_body_schema)]
    pub check_body: Option<String>,
    /// Default true; must be false for `udp` (its default there).
    pub check_passive: Option<bool>,
    /// `none` (default), `v1` or `v2` (tcp only).
    #[schema(value_type = Option<ProxyProtocol>)]
    pub proxy_protocol: Option<String>,
    /// `recommended` (default) or `legacy`; not applicable to `udp` configs (shown as `none`).
    #[schema(value_type = Option<nubis_model::balancer::CipherSuite>)]
    pub cipher_suite: Option<String>,
    /// PEM certificate (chain); required with `https`, refused otherwise. `<REDACTED>` keeps the
    /// current one.
    pub ssl_cert: Option<String>,
    /// PEM private key of the certificate; required with `https`, refused otherwise.
    /// `<REDACTED>` keeps the current one.
    pub ssl_key: Option<String>,
    /// Nodes (on create with the balancer, and on rebuild).
    #[serde(default, deserialize_with = "nubis_model::object::objects")]
    pub nodes: Option<Vec<NodeRequest>>,
}

/// A node in a create, update or rebuild.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NodeRequest {
    /// On rebuild: the node to update (omitted: a new node).
    pub id: Option<i64>,
    /// 3..32 characters: letters, digits, `-`, `_` and `.`; unique among the config's nodes.
    #[schema(schema_with = node_label_schema)]
    pub label: Option<String>,
    /// `<private IPv4>:<port>`: a private address of an instance of the account in the
    /// balancer's region.
    #[schema(schema_with = address_schema)]
    pub address: Option<String>,
    /// 1..255. Default 100.
    #[schema(schema_with = weight_schema)]
    pub weight: Option<i64>,
    /// `accept` (default), `reject`, `drain` or `backup`.
    #[schema(value_type = Option<NodeMode>)]
    pub mode: Option<String>,
}

pub(crate) const LABEL_RULE: &str =
    "Label must be 3-32 characters and contain only ASCII letters, digits, dashes and underscores";
pub(crate) const NODE_LABEL_RULE: &str =
    "Label must be 3-32 characters and contain only ASCII letters, digits, dashes, underscores and periods";
pub(crate) const ADDRESS_RULE: &str = "Must be <private IPv4 address>:<port>, with a port between 1 and 65535";

const LABEL_LEN: (usize, usize) = (3, 32);
const LABEL_PATTERN: &str = "^[A-Za-z0-9_-]*$";
const NODE_LABEL_PATTERN: &str = "^[A-Za-z0-9_.-]*$";
const THROTTLE: (i64, i64) = (0, 20);
const PORT: (i64, i64) = (1, 65535);
const CONFIG_LABEL_MAX: usize = 100;
const CHECK_INTERVAL: (i64, i64) = (2, 3600);
const CHECK_TIMEOUT: (i64, i64) = (1, 30);
const CHECK_ATTEMPTS: (i64, i64) = (1, 30);
const CHECK_BODY_MAX: usize = 1024;
/// Empty, or a path: `/` then letters, digits and `/ - % ? & = .`.
const CHECK_PATH_PATTERN: &str = "^(/[A-Za-z0-9/%?&=.-]*)?$";
const WEIGHT: (i64, i64) = (1, 255);
/// [`parse_address`] as a pattern: an IPv4 address (no leading zeros) and a port 1..65535.
const ADDRESS_PATTERN: &str = concat!(
    r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])",
    r":([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$"
);

fn label_schema() -> Schema {
    schema(or_null(pattern(LABEL_LEN.0, LABEL_LEN.1, LABEL_PATTERN)))
}
fn node_label_schema() -> Schema {
    schema(or_null(pattern(LABEL_LEN.0, LABEL_LEN.1, NODE_LABEL_PATTERN)))
}
fn throttle_schema() -> Schema {
    schema(or_null(int(THROTTLE.0, THROTTLE.1)))
}
fn port_schema() -> Schema {
    schema(or_null(int(PORT.0, PORT.1)))
}
fn config_label_schema() -> Schema {
    schema(or_null(text(0, CONFIG_LABEL_MAX)))
}
fn check_interval_schema() -> Schema {
    schema(or_null(int(CHECK_INTERVAL.0, CHECK_INTERVAL.1)))
}
fn check_timeout_schema() -> Schema {
    schema(or_null(int(CHECK_TIMEOUT.0, CHECK_TIMEOUT.1)))
}
fn check_attempts_schema() -> Schema {
    schema(or_null(int(CHECK_ATTEMPTS.0, CHECK_ATTEMPTS.1)))
}
fn check_path_schema() -> Schema {
    schema(or_null(matching(CHECK_PATH_PATTERN)))
}
fn check_body_schema() -> Schema {
    schema(or_null(text(0, CHECK_BODY_MAX)))
}
fn weight_schema() -> Schema {
    schema(or_null(int(WEIGHT.0, WEIGHT.1)))
}
fn address_schema() -> Schema {
    schema(or_null(matching(ADDRESS_PATTERN)))
}

fn in_range(v: i64, (min, max): (i64, i64)) -> bool {
    (min..=max).contains(&v)
}

pub(crate) fn check_label(p: &mut Problems, field: &str, label: &str) {
    let ok = (LABEL_LEN.0..=LABEL_LEN.1).contains(&label.len())
        && label.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
    p.check(ok, field, LABEL_RULE);
}

pub(crate) fn check_node_label(p: &mut Problems, field: &str, label: &str) {
    let ok = (LABEL_LEN.0..=LABEL_LEN.1).contains(&label.len())
        && label.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.');
    p.check(ok, field, NODE_LABEL_RULE);
}

pub(crate) fn check_throttle(p: &mut Problems, field: &str, v: i64) {
    p.check(in_range(v, THROTTLE), field, "Must be between 0 and 20");
}

pub(crate) fn check_tags(p: &mut Problems, tags: &[String]) {
    for (i, t) in tags.iter().enumerate() {
        if let Some(reason) = tag_problem(t) {
            p.add(format!("tags[{i}]"), reason);
        }
    }
}

/// Parses `<IPv4>:<port>`.
pub(crate) fn parse_address(s: &str) -> Option<SocketAddrV4> {
    let (ip, port) = s.rsplit_once(':')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    if port.is_empty() || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = port.parse().ok()?;
    (port >= 1).then(|| SocketAddrV4::new(ip, port))
}

fn enum_field<T>(p: &mut Problems, field: &str, v: Option<&String>, parse: fn(&str) -> Option<T>, all: &str) -> bool {
    match v {
        Some(s) if parse(s).is_none() => {
            p.add(field, format!("Must be one of {all}"));
            false
        }
        _ => true,
    }
}

fn check_path_ok(s: &str) -> bool {
    s.starts_with('/') && s.bytes().all(|c| c.is_ascii_alphanumeric() || b"/-%?&=.".contains(&c))
}

/// The reference's defaults of a new config.
pub(crate) fn default_config() -> ConfigFields {
    ConfigFields {
        label: None,
        port: 80,
        protocol: "http".into(),
        algorithm: "roundrobin".into(),
        stickiness: "none".into(),
        check: "none".into(),
        check_interval: 31,
        check_timeout: 30,
        check_attempts: 3,
        check_path: String::new(),
        check_body: String::new(),
        check_passive: true,
        proxy_protocol: "none".into(),
        cipher_suite: "recommended".into(),
        ssl_cert: None,
        ssl_key: None,
        ssl_commonname: String::new(),
        ssl_fingerprint: String::new(),
        udp_check_port: 80,
        udp_session_timeout: UDP_SESSION_TIMEOUT,
    }
}

/// The config after applying `req` to `current` (or to the defaults), with every field and
/// cross-field rule checked; problems are added to `p` with fields relative to the config.
pub(crate) fn resolve_config(p: &mut Problems, current: Option<&ConfigFields>, req: &ConfigRequest) -> ConfigFields {
    let mut f = current.cloned().unwrap_or_else(default_config);
    if let Some(v) = req.udp_check_port {
        p.check(in_range(v, PORT), "udp_check_port", "Must be between 1 and 65535");
        f.udp_check_port = v;
    }
    if let Some(l) = &req.label {
        p.check(l.chars().count() <= CONFIG_LABEL_MAX, "label", "Length must be at most 100 characters");
        f.label = Some(l.clone());
    }
    if let Some(port) = req.port {
        p.check(in_range(port, PORT), "port", "Must be between 1 and 65535");
        f.port = port;
    }
    let enums = [
        enum_field(p, "protocol", req.protocol.as_ref(), Protocol::parse, "http, https, tcp, udp"),
        enum_field(
            p,
            "algorithm",
            req.algorithm.as_ref(),
            nubis_model::balancer::Algorithm::parse,
            "roundrobin, leastconn, source, ring_hash",
        ),
        enum_field(
            p,
            "stickiness",
            req.stickiness.as_ref(),
            Stickiness::parse,
            "none, table, http_cookie, session, source_ip",
        ),
        enum_field(p, "check", req.check.as_ref(), CheckKind::parse, "none, connection, http, http_body"),
        enum_field(p, "proxy_protocol", req.proxy_protocol.as_ref(), ProxyProtocol::parse, "none, v1, v2"),
        enum_field(p, "cipher_suite", req.cipher_suite.as_ref(), cipher_or_none, "recommended, legacy, none"),
    ];
    let set = |slot: &mut String, v: &Option<String>| {
        if let Some(v) = v {
            *slot = v.clone();
        }
    };
    set(&mut f.protocol, &req.protocol);
    set(&mut f.algorithm, &req.algorithm);
    set(&mut f.stickiness, &req.stickiness);
    set(&mut f.check, &req.check);
    set(&mut f.proxy_protocol, &req.proxy_protocol);
    set(&mut f.cipher_suite, &req.cipher_suite);
    if let Some(v) = req.check_interval {
        p.check(in_range(v, CHECK_INTERVAL), "check_interval", "Must be between 2 and 3600");
        f.check_interval = v;
    }
    if let Some(v) = req.check_timeout {
        p.check(in_range(v, CHECK_TIMEOUT), "check_timeout", "Must be between 1 and 30");
        f.check_timeout = v;
    }
    if let Some(v) = req.check_attempts {
        p.check(in_range(v, CHECK_ATTEMPTS), "check_attempts", "Must be between 1 and 30");
        f.check_attempts = v;
    }
    if f.check_timeout >= f.check_interval {
        if req.check_interval.is_some() || req.check_timeout.is_none() {
            p.add("check_interval", "Must be greater than check_timeout");
        } else {
            p.add("check_timeout", "Must be less than check_interval");
        }
    }
    if let Some(v) = &req.check_path {
        p.check(
            v.is_empty() || check_path_ok(v),
            "check_path",
            "Must begin with '/' and contain only letters, digits and / - % ? & = .",
        );
        f.check_path = v.clone();
    }
    if let Some(v) = &req.check_body {
        p.check(v.chars().count() <= CHECK_BODY_MAX, "check_body", "Length must be at most 1024 characters");
        f.check_body = v.clone();
    }
    if let Some(v) = req.check_passive {
        f.check_passive = v;
    }
    if enums.iter().all(|ok| *ok) {
        protocol_rules(p, current, req, &mut f);
        cross_checks(p, current, req, &mut f);
    }
    f
}

/// Seconds a UDP session may stay idle (the hosted API's value; read-only there).
pub(crate) const UDP_SESSION_TIMEOUT: i64 = 16;
const NOT_FOR_UDP: &str = "Not applicable for UDP configs";

fn cipher_or_none(s: &str) -> Option<()> {
    (s == "none" || nubis_model::balancer::CipherSuite::parse(s).is_some()).then_some(())
}

/// The values that depend on the protocol (hosted API, UDP configs): algorithms (`source` not
/// for udp, `ring_hash` only for udp), stickiness (`session`/`source_ip` only for udp, `table`/
/// `http_cookie` not), `check_passive` false and `cipher_suite` `none` for udp. A value the
/// request names that does not fit is refused naming its field; one it leaves out takes the
/// protocol's default when the protocol is new (a new config, or the protocol changed).
fn protocol_rules(p: &mut Problems, current: Option<&ConfigFields>, req: &ConfigRequest, f: &mut ConfigFields) {
    let udp = Protocol::parse(&f.protocol) == Some(Protocol::Udp);
    let fresh = current.is_none_or(|c| c.protocol != f.protocol);
    let algorithm = nubis_model::balancer::Algorithm::parse(&f.algorithm);
    use nubis_model::balancer::Algorithm as A;
    let algorithm_ok = if udp { algorithm != Some(A::Source) } else { algorithm != Some(A::RingHash) };
    if !algorithm_ok {
        if req.algorithm.is_none() && fresh {
            f.algorithm = "roundrobin".into();
        } else if udp {
            p.add("algorithm", "Must be one of roundrobin, leastconn, ring_hash for protocol udp");
        } else {
            p.add("algorithm", "ring_hash needs protocol udp");
        }
    }
    let st = Stickiness::parse(&f.stickiness);
    let st_ok = if udp {
        matches!(st, Some(Stickiness::None | Stickiness::Session | Stickiness::SourceIp))
    } else {
        matches!(st, Some(Stickiness::None | Stickiness::Table | Stickiness::HttpCookie))
    };
    if udp && fresh && req.stickiness.is_none() {
        f.stickiness = Stickiness::Session.name().into();
    } else if !st_ok {
        if req.stickiness.is_none() && fresh {
            f.stickiness = Stickiness::None.name().into();
        } else if udp {
            p.add("stickiness", "Must be one of none, session, source_ip for protocol udp");
        } else {
            p.add("stickiness", "session and source_ip stickiness need protocol udp");
        }
    }
    if udp {
        if req.check_passive == Some(true) {
            p.add("check_passive", "Must be false for UDP");
        }
        f.check_passive = false;
        match req.cipher_suite.as_deref() {
            Some(c) if c != "none" => p.add("cipher_suite", NOT_FOR_UDP),
            _ => f.cipher_suite = "none".into(),
        }
    } else {
        if fresh && req.check_passive.is_none() && current.is_some_and(|c| c.protocol == Protocol::Udp.name()) {
            f.check_passive = true;
        }
        match req.cipher_suite.as_deref() {
            Some("none") => p.add("cipher_suite", "none applies only to protocol udp"),
            None if f.cipher_suite == "none" => f.cipher_suite = "recommended".into(),
            _ => {}
        }
    }
}

/// The rules between fields: checks and their path/body, stickiness and proxy protocol by
/// protocol, and the certificate and key of `https`.
fn cross_checks(p: &mut Problems, current: Option<&ConfigFields>, req: &ConfigRequest, f: &mut ConfigFields) {
    let protocol = Protocol::parse(&f.protocol).unwrap_or(Protocol::Http);
    let check = CheckKind::parse(&f.check).unwrap_or(CheckKind::None);
    if matches!(check, CheckKind::Http | CheckKind::HttpBody) && f.check_path.is_empty() {
        p.add("check_path", "Required for http and http_body checks");
    }
    if check == CheckKind::HttpBody && f.check_body.is_empty() {
        p.add("check_body", "Required for http_body checks");
    }
    if Stickiness::parse(&f.stickiness) == Some(Stickiness::HttpCookie) && protocol == Protocol::Tcp {
        p.add("stickiness", "http_cookie stickiness needs protocol http or https");
    }
    if ProxyProtocol::parse(&f.proxy_protocol) != Some(ProxyProtocol::None) && protocol != Protocol::Tcp {
        p.add("proxy_protocol", "Proxy protocol needs protocol tcp");
    }
    let given = |v: &Option<String>| v.as_deref().filter(|s| *s != REDACTED && !s.is_empty()).map(str::to_string);
    let (new_cert, new_key) = (given(&req.ssl_cert), given(&req.ssl_key));
    if protocol != Protocol::Https {
        if new_cert.is_some() {
            p.add("ssl_cert", format!("Protocol {} does not take a certificate; use https", protocol.name()));
        }
        if new_key.is_some() {
            p.add("ssl_key", format!("Protocol {} does not take a private key; use https", protocol.name()));
        }
        f.ssl_cert = None;
        f.ssl_key = None;
        f.ssl_commonname.clear();
        f.ssl_fingerprint.clear();
        return;
    }
    let cert_pem = new_cert.clone().or_else(|| current.and_then(|c| c.ssl_cert.clone()));
    let key_pem = new_key.clone().or_else(|| current.and_then(|c| c.ssl_key.clone()));
    if cert_pem.is_none() {
        p.add("ssl_cert", "A certificate is required with protocol https");
    }
    if key_pem.is_none() {
        p.add("ssl_key", "A private key is required with protocol https");
    }
    let (Some(cert_pem), Some(key_pem)) = (cert_pem, key_pem) else { return };
    let mut local = Problems::new();
    let cert = tls::check_cert(&mut local, "ssl_cert", &cert_pem);
    let key = tls::check_key(&mut local, "ssl_key", &key_pem);
    if let (Some(c), Some(k)) = (&cert, &key)
        && !tls::key_matches(c, k)
    {
        let field = if new_key.is_some() || new_cert.is_none() { "ssl_key" } else { "ssl_cert" };
        local.add(field, "The private key does not match the certificate");
    }
    let ok = local.is_empty();
    let _ = p.absorb(local.finish());
    if let (true, Some(c)) = (ok, cert) {
        f.ssl_cert = Some(cert_pem);
        f.ssl_key = Some(key_pem);
        f.ssl_commonname = c.commonname;
        f.ssl_fingerprint = c.fingerprint;
    }
}

/// A node after applying `req` to `current` (or to the defaults). The address's format is
/// checked here; that it is an instance's private address needs the database.
pub(crate) fn resolve_node(p: &mut Problems, current: Option<&NodeFields>, req: &NodeRequest) -> Option<NodeFields> {
    let mut label = current.map(|c| c.label.clone());
    let mut addr = current.and_then(|c| parse_address(&c.address));
    let mut weight = current.map_or(100, |c| c.weight);
    let mut mode = current.map_or_else(|| "accept".to_string(), |c| c.mode.clone());
    match (&req.label, current) {
        (Some(l), _) => {
            check_node_label(p, "label", l);
            label = Some(l.clone());
        }
        (None, None) => p.add("label", "Label is required"),
        (None, Some(_)) => {}
    }
    match (&req.address, current) {
        (Some(a), _) => match parse_address(a) {
            Some(sa) => addr = Some(sa),
            None => p.add("address", ADDRESS_RULE),
        },
        (None, None) => p.add("address", "Address is required"),
        (None, Some(_)) => {}
    }
    if let Some(w) = req.weight {
        p.check(in_range(w, WEIGHT), "weight", "Must be between 1 and 255");
        weight = w;
    }
    if let Some(m) = &req.mode {
        if NodeMode::parse(m).is_some() {
            mode = m.clone();
        } else {
            p.add("mode", "Must be one of accept, reject, drain, backup");
        }
    }
    let (label, addr) = (label?, addr?);
    Some(NodeFields {
        label,
        address: addr.to_string(),
        v4: u32::from(*addr.ip()),
        port: i64::from(addr.port()),
        weight,
        mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(p: Problems) -> Vec<String> {
        match p.finish() {
            Ok(()) => Vec::new(),
            Err(nubis_model::Error::Invalid(v)) => v.into_iter().map(|f| f.field.unwrap_or_default()).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_address("192.168.1.2:80"), Some("192.168.1.2:80".parse().unwrap()));
        for bad in ["192.168.1.2", "192.168.1.2:0", "192.168.1.2:65536", "192.168.1.2:080", "x:80", "[::1]:80", ":80"] {
            assert_eq!(parse_address(bad), None, "{bad}");
        }
    }

    #[test]
    fn defaults_are_the_references() {
        let mut p = Problems::new();
        let f = resolve_config(&mut p, None, &ConfigRequest::default());
        assert!(p.is_empty());
        assert_eq!((f.port, f.check_interval, f.check_timeout, f.check_attempts), (80, 31, 30, 3));
        assert_eq!((f.protocol.as_str(), f.algorithm.as_str(), f.stickiness.as_str()), ("http", "roundrobin", "none"));
        assert!(f.check_passive);
    }

    #[test]
    fn cross_field_rules_name_their_fields() {
        let mut p = Problems::new();
        let req = ConfigRequest {
            protocol: Some("tcp".into()),
            stickiness: Some("http_cookie".into()),
            check: Some("http_body".into()),
            check_interval: Some(5),
            check_timeout: Some(5),
            ssl_cert: Some("x".into()),
            ..Default::default()
        };
        resolve_config(&mut p, None, &req);
        assert_eq!(fields(p), ["check_interval", "check_path", "check_body", "stickiness", "ssl_cert"]);
        let mut p = Problems::new();
        let req =
            ConfigRequest { proxy_protocol: Some("v1".into()), protocol: Some("https".into()), ..Default::default() };
        resolve_config(&mut p, None, &req);
        assert_eq!(fields(p), ["proxy_protocol", "ssl_cert", "ssl_key"]);
    }

    #[test]
    fn labels() {
        let mut p = Problems::new();
        check_label(&mut p, "label", "web_lb-1");
        check_node_label(&mut p, "label", "node.1");
        assert!(p.is_empty());
        check_label(&mut p, "a", "web.lb");
        check_label(&mut p, "b", "ab");
        check_node_label(&mut p, "c", &"n".repeat(33));
        assert_eq!(fields(p), ["a", "b", "c"]);
    }
}
