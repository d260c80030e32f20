//! Firewall rules: their types, and the evaluator the balancer data plane runs on every new
//! inbound connection.
//!
//! NOTE: the evaluator below is the straightforward model (rules in order, first match wins,
//! otherwise the direction's policy). Validation of rules and a compiled fast form come next.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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

/// Rules prepared for evaluation.
#[derive(Debug, Clone)]
pub struct CompiledRules {
    rules: FirewallRules,
}

impl CompiledRules {
    /// Prepares validated rules. Entries that do not parse (validation refuses them) never match.
    pub fn compile(rules: &FirewallRules) -> CompiledRules {
        CompiledRules { rules: rules.clone() }
    }

    /// `ACCEPT` or `DROP` for one packet: rules in order, the first match wins, otherwise the
    /// direction's policy.
    pub fn decide(&self, p: &Packet) -> Action {
        let (rules, policy) = match p.direction {
            Direction::Inbound => (&self.rules.inbound, self.rules.inbound_policy),
            Direction::Outbound => (&self.rules.outbound, self.rules.outbound_policy),
        };
        rules.iter().find(|r| rule_matches(r, p)).map(|r| r.action).unwrap_or(policy)
    }
}

fn rule_matches(r: &Rule, p: &Packet) -> bool {
    if r.protocol != p.protocol {
        return false;
    }
    if let Some(ports) = &r.ports
        && !ports_match(ports, p.port)
    {
        return false;
    }
    let list = match p.peer {
        IpAddr::V4(_) => r.addresses.ipv4.as_deref(),
        IpAddr::V6(_) => r.addresses.ipv6.as_deref(),
    };
    list.unwrap_or(&[]).iter().any(|a| parse_net(a).is_some_and(|n| n.contains(&p.peer)))
}

fn ports_match(ports: &str, port: u16) -> bool {
    ports.split(',').map(str::trim).any(|piece| match piece.split_once('-') {
        Some((a, b)) => match (a.parse::<u16>(), b.parse::<u16>()) {
            (Ok(a), Ok(b)) => (a..=b).contains(&port),
            _ => false,
        },
        None => piece.parse::<u16>().is_ok_and(|x| x == port),
    })
}

/// Parses `IP/mask` (or a bare IP, as a single host).
pub fn parse_net(s: &str) -> Option<IpNet> {
    s.parse::<IpNet>().ok().or_else(|| s.parse::<IpAddr>().ok().map(IpNet::from))
}
