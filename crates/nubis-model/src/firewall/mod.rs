//! Firewall rules: their types, their validation from raw JSON (`validate`), and the compiled
//! evaluator the balancer data plane runs on every new inbound connection (`compile`), and the
//! firewall and device records (`record`).
//!
//! Evaluation semantics (spec 2.7): the rules of the packet's direction are tried in order, the
//! first rule whose protocol, ports and addresses all match decides, otherwise the direction's
//! policy applies. An IPv4-mapped IPv6 peer (`::ffff:a.b.c.d`, as a dual-stack socket reports an
//! IPv4 client) is treated as the IPv4 address `a.b.c.d`.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mod compile;
mod record;
mod ruleset;
mod validate;

pub use compile::CompiledRules;
pub use record::{
    DEVICE_FILTERABLE, DefaultFirewallIds, DeviceEntity, DeviceType, ExpandedRules, FIREWALL_FILTERABLE, Firewall,
    FirewallDevice, FirewallSettings, FirewallStatus, FirewallTemplate, RULE_VERSION_FILTERABLE, RuleVersion,
    RuleVersionRef, VersionedRules,
};
pub use ruleset::{
    PREFIX_LIST_FILTERABLE, PrefixAddresses, PrefixList, RULESET_FILTERABLE, RuleEntry, RuleSet, RuleSetRef,
    RuleSetType, WrittenRules, expand_prefix_lists, is_prefix_list_name, prefix_list_name_problem,
};
pub use validate::{
    LABEL_LEN, MAX_ADDRESSES_PER_RULE, MAX_PORT_PIECES, MAX_RULES, parse_rules, parse_rules_update,
    parse_ruleset_rules, parse_written_rules, rule_request_schema, rules_request_schema, validate_label,
    validate_ports,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum Action {
    #[serde(rename = "ACCEPT")]
    Accept,
    #[serde(rename = "DROP")]
    Drop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum RuleProtocol {
    #[serde(rename = "TCP")]
    Tcp,
    #[serde(rename = "UDP")]
    Udp,
    #[serde(rename = "ICMP")]
    Icmp,
    #[serde(rename = "IPENCAP")]
    Ipencap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Inbound,
    Outbound,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct RuleAddresses {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Rule {
    pub action: Action,
    pub protocol: RuleProtocol,
    /// `None` means all ports.
    pub ports: Option<String>,
    pub addresses: RuleAddresses,
    pub label: Option<String>,
    /// Left out of the answer when the rule has none, as the hosted API echoes rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FirewallRules {
    pub inbound: Vec<Rule>,
    pub inbound_policy: Action,
    pub outbound: Vec<Rule>,
    pub outbound_policy: Action,
}

/// A packet (or the first packet of a connection) as the evaluator sees it. `peer` is the source
/// address for inbound traffic and the destination address for outbound traffic; `port` is the
/// destination port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub direction: Direction,
    pub protocol: RuleProtocol,
    pub peer: IpAddr,
    pub port: u16,
}

/// Parses `IP/mask` (or a bare IP, as a single host). Host bits after the mask are allowed
/// (`192.0.2.7/24` is the network `192.0.2.0/24`). Zone ids (`fe80::1%eth0`) do not parse.
pub fn parse_net(s: &str) -> Option<IpNet> {
    s.parse::<IpNet>().ok().or_else(|| s.parse::<IpAddr>().ok().map(IpNet::from))
}

/// The straightforward model of evaluation, kept as the reference the compiled evaluator is
/// property-tested against: re-parses every string on every call.
#[cfg(test)]
pub(crate) fn reference_decide(rules: &FirewallRules, p: &Packet) -> Action {
    let (list, policy) = match p.direction {
        Direction::Inbound => (&rules.inbound, rules.inbound_policy),
        Direction::Outbound => (&rules.outbound, rules.outbound_policy),
    };
    let peer = p.peer.to_canonical();
    let matches = |r: &Rule| {
        if r.protocol != p.protocol {
            return false;
        }
        if let Some(ports) = &r.ports {
            let port_ok = ports.split(',').map(str::trim).any(|piece| match piece.split_once('-') {
                Some((a, b)) => match (a.parse::<u16>(), b.parse::<u16>()) {
                    (Ok(a), Ok(b)) => (a..=b).contains(&p.port),
                    _ => false,
                },
                None => piece.parse::<u16>().is_ok_and(|x| x == p.port),
            });
            if !port_ok {
                return false;
            }
        }
        let list = match peer {
            IpAddr::V4(_) => r.addresses.ipv4.as_deref(),
            IpAddr::V6(_) => r.addresses.ipv6.as_deref(),
        };
        list.unwrap_or(&[]).iter().any(|a| parse_net(a).is_some_and(|n| n.contains(&peer)))
    };
    list.iter().find(|r| matches(r)).map(|r| r.action).unwrap_or(policy)
}
