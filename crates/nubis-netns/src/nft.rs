//! nftables: a Cloud Firewall's rules compiled into a table inside the instance's namespace
//! (the same rule model the balancer data plane evaluates: per direction, the first matching
//! rule decides, else the policy; a rule matches when its protocol, its ports and one of its
//! addresses of the packet's family match), 1:1 NAT, and the host's guard table.

use std::fmt::Write;

use ipnet::IpNet;
use nubis_model::firewall::{Action, Rule, RuleProtocol, parse_net};

use crate::Result;
use crate::cmd::{nft, run};
use crate::spec::InstanceSpec;

/// The table nubis owns inside each instance.
pub const TABLE: &str = "nubis";

/// The whole script for an instance: replaces its table atomically (or removes it).
pub fn instance_script(spec: &InstanceSpec) -> String {
    let mut s = format!("table inet {TABLE}\ndelete table inet {TABLE}\n");
    if spec.firewall.is_none() && spec.nat.is_empty() {
        return s;
    }
    let _ = writeln!(s, "table inet {TABLE} {{");
    if let Some(rules) = &spec.firewall {
        s.push_str(&chain("input", "iifname", "saddr", &rules.inbound, rules.inbound_policy));
        s.push_str(&chain("output", "oifname", "daddr", &rules.outbound, rules.outbound_policy));
    }
    if !spec.nat.is_empty() {
        s.push_str("  chain nat_pre {\n    type nat hook prerouting priority -100; policy accept;\n");
        for (public, private) in &spec.nat {
            let _ = writeln!(s, "    ip daddr {public} dnat ip to {private}");
        }
        s.push_str("  }\n  chain nat_post {\n    type nat hook postrouting priority 100; policy accept;\n");
        for (public, private) in &spec.nat {
            let _ = writeln!(s, "    ip saddr {private} snat ip to {public}");
        }
        s.push_str("  }\n");
    }
    s.push_str("}\n");
    s
}

fn verdict(a: Action) -> &'static str {
    match a {
        Action::Accept => "accept",
        Action::Drop => "drop",
    }
}

/// One direction: established traffic and loopback pass, neighbour discovery passes, then the
/// rules in order, then the policy.
fn chain(hook: &str, ifkey: &str, addr_key: &str, rules: &[Rule], policy: Action) -> String {
    let mut s = format!("  chain {hook} {{\n    type filter hook {hook} priority 0; policy accept;\n");
    s.push_str("    ct state established,related accept\n");
    let _ = writeln!(s, "    {ifkey} {{ \"lo\", \"{}\" }} accept", crate::metadata::LINK);
    s.push_str(
        "    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept\n",
    );
    for r in rules {
        for line in rule_lines(r, addr_key) {
            let _ = writeln!(s, "    {line}");
        }
    }
    let _ = writeln!(s, "    {}\n  }}", verdict(policy));
    s
}

/// The nft statements of one rule (one per address family it lists); none when it can match
/// nothing (no valid address, no valid port piece).
pub fn rule_lines(r: &Rule, addr_key: &str) -> Vec<String> {
    let ports = match (&r.ports, r.protocol) {
        (Some(p), RuleProtocol::Tcp | RuleProtocol::Udp) => {
            let pieces = port_pieces(p);
            if pieces.is_empty() {
                return Vec::new();
            }
            let proto = if r.protocol == RuleProtocol::Tcp { "tcp" } else { "udp" };
            Some(format!("{proto} dport {{ {} }}", pieces.join(", ")))
        }
        _ => None,
    };
    let mut out = Vec::new();
    for (family, list) in [("ip", &r.addresses.ipv4), ("ip6", &r.addresses.ipv6)] {
        let nets: Vec<String> = list
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter_map(|a| parse_net(a))
            .filter(|n| matches!((family, n), ("ip", IpNet::V4(_)) | ("ip6", IpNet::V6(_))))
            .map(|n| n.trunc().to_string())
            .collect();
        if nets.is_empty() {
            continue;
        }
        let proto = match (r.protocol, family) {
            (RuleProtocol::Tcp, _) => "meta l4proto tcp",
            (RuleProtocol::Udp, _) => "meta l4proto udp",
            (RuleProtocol::Icmp, "ip") => "meta l4proto icmp",
            (RuleProtocol::Icmp, _) => "meta l4proto ipv6-icmp",
            (RuleProtocol::Ipencap, _) => "meta l4proto 4",
        };
        let mut line = format!("{family} {addr_key} {{ {} }} {proto}", nets.join(", "));
        if let Some(p) = &ports {
            line.push(' ');
            line.push_str(p);
        }
        line.push(' ');
        line.push_str(verdict(r.action));
        out.push(line);
    }
    out
}

/// Port pieces as nft writes them (`80`, `1000-2000`); pieces that cannot match are left out.
fn port_pieces(p: &str) -> Vec<String> {
    p.split(',')
        .map(str::trim)
        .filter_map(|piece| match piece.split_once('-') {
            Some((a, b)) => match (a.trim().parse::<u16>(), b.trim().parse::<u16>()) {
                (Ok(a), Ok(b)) if a < b => Some(format!("{a}-{b}")),
                (Ok(a), Ok(b)) if a == b => Some(a.to_string()),
                _ => None,
            },
            None => piece.parse::<u16>().ok().map(|x| x.to_string()),
        })
        .collect()
}

/// Applies an instance's table.
pub async fn apply_instance(ns: &str, spec: &InstanceSpec) -> Result<()> {
    nft(Some(ns), &instance_script(spec)).await
}

/// The host's guard: nothing is forwarded from or to nubis's links.
pub async fn apply_guard(prefix: &str) -> Result<()> {
    let script = format!(
        "table inet {prefix}\ndelete table inet {prefix}\ntable inet {prefix} {{\n  chain forward {{\n    \
         type filter hook forward priority -10; policy accept;\n    iifname \"{prefix}*\" drop\n    \
         oifname \"{prefix}*\" drop\n  }}\n}}\n"
    );
    nft(None, &script).await
}

/// Removes the guard tables of `prefix` (every `nubis*` table when `None`).
pub async fn remove_guards(prefix: Option<&str>) -> Result<()> {
    let out = run("nft", &["list", "tables", "inet"], None).await?;
    for line in out.lines() {
        let Some(name) = line.trim().strip_prefix("table inet ") else { continue };
        let ours = match prefix {
            Some(p) => name == p,
            None => name.starts_with("nubis"),
        };
        if ours {
            nft(None, &format!("delete table inet {name}\n")).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use nubis_model::firewall::{FirewallRules, RuleAddresses};

    use super::*;

    fn rule(action: Action, protocol: RuleProtocol, ports: Option<&str>, v4: &[&str], v6: &[&str]) -> Rule {
        let l = |v: &[&str]| if v.is_empty() { None } else { Some(v.iter().map(|s| s.to_string()).collect()) };
        Rule {
            action,
            protocol,
            ports: ports.map(String::from),
            addresses: RuleAddresses { ipv4: l(v4), ipv6: l(v6) },
            label: None,
            description: None,
        }
    }

    #[test]
    fn a_rule_becomes_one_statement_per_listed_family() {
        let r = rule(Action::Drop, RuleProtocol::Tcp, Some("80, 1000-2000"), &["198.18.0.7/24"], &["2001:db8::/32"]);
        assert_eq!(
            rule_lines(&r, "saddr"),
            vec![
                "ip saddr { 198.18.0.0/24 } meta l4proto tcp tcp dport { 80, 1000-2000 } drop",
                "ip6 saddr { 2001:db8::/32 } meta l4proto tcp tcp dport { 80, 1000-2000 } drop",
            ]
        );
        let icmp = rule(Action::Accept, RuleProtocol::Icmp, None, &["0.0.0.0/0"], &[]);
        assert_eq!(rule_lines(&icmp, "daddr"), vec!["ip daddr { 0.0.0.0/0 } meta l4proto icmp accept"]);
    }

    #[test]
    fn rules_that_match_nothing_are_left_out() {
        assert!(rule_lines(&rule(Action::Drop, RuleProtocol::Tcp, None, &[], &[]), "saddr").is_empty());
        assert!(
            rule_lines(&rule(Action::Drop, RuleProtocol::Udp, Some("9-3"), &["0.0.0.0/0"], &[]), "saddr").is_empty()
        );
        // An IPv6 network in the IPv4 list matches no IPv4 packet.
        assert!(rule_lines(&rule(Action::Drop, RuleProtocol::Tcp, None, &["::/0"], &[]), "saddr").is_empty());
    }

    #[test]
    fn the_policy_closes_each_direction_and_no_firewall_removes_the_table() {
        let rules = FirewallRules {
            inbound: vec![rule(Action::Accept, RuleProtocol::Tcp, Some("22"), &["0.0.0.0/0"], &[])],
            inbound_policy: Action::Drop,
            outbound: vec![],
            outbound_policy: Action::Accept,
        };
        let mut spec = InstanceSpec {
            region: 0,
            hostname: "web".into(),
            nics: vec![],
            loopback: vec![],
            gateway: None,
            nat: vec![],
            firewall: Some(rules),
        };
        let s = instance_script(&spec);
        let input = &s[s.find("chain input").unwrap()..s.find("chain output").unwrap()];
        assert!(input.trim_end().ends_with("drop\n  }") || input.contains("    drop\n  }"), "{input}");
        assert!(input.find("tcp dport { 22 } accept").unwrap() < input.rfind("drop").unwrap());
        spec.firewall = None;
        assert_eq!(instance_script(&spec), "table inet nubis\ndelete table inet nubis\n");
    }
}
