//! The compiled evaluator of [`super`] against the rules read in order (the reference
//! semantics), case by case and by property.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::super::{RuleAddresses, reference_decide};
use super::*;

fn assert_send_sync<T: Send + Sync + Clone + std::fmt::Debug>() {}

#[test]
fn compiled_rules_are_send_sync_clone_debug() {
    assert_send_sync::<CompiledRules>();
}

fn rule(action: Action, protocol: RuleProtocol, ports: Option<&str>, v4: &[&str], v6: &[&str]) -> Rule {
    let list = |l: &[&str]| (!l.is_empty()).then(|| l.iter().map(|s| s.to_string()).collect());
    Rule {
        action,
        protocol,
        ports: ports.map(str::to_string),
        addresses: RuleAddresses { ipv4: list(v4), ipv6: list(v6) },
        label: None,
        description: None,
    }
}

fn tcp_in(peer: &str, port: u16) -> Packet {
    Packet { direction: Direction::Inbound, protocol: RuleProtocol::Tcp, peer: peer.parse().unwrap(), port }
}

fn example() -> FirewallRules {
    FirewallRules {
        inbound: vec![
            rule(Action::Drop, RuleProtocol::Tcp, Some("22"), &["192.0.2.66/32"], &[]),
            rule(Action::Accept, RuleProtocol::Tcp, Some("22, 80, 8000-8080"), &["192.0.2.0/24"], &["2001:db8::/32"]),
            rule(Action::Accept, RuleProtocol::Udp, Some("53"), &["0.0.0.0/0"], &[]),
            rule(Action::Accept, RuleProtocol::Icmp, None, &["0.0.0.0/0"], &["::/0"]),
        ],
        inbound_policy: Action::Drop,
        outbound: vec![rule(Action::Drop, RuleProtocol::Tcp, None, &["10.0.0.0/8"], &[])],
        outbound_policy: Action::Accept,
    }
}

#[test]
fn first_match_wins_then_policy() {
    let c = CompiledRules::compile(&example());
    assert_eq!(c.decide(&tcp_in("192.0.2.66", 22)), Action::Drop, "rule 0 before rule 1");
    assert_eq!(c.decide(&tcp_in("192.0.2.66", 80)), Action::Accept, "rule 0 ports do not match");
    assert_eq!(c.decide(&tcp_in("192.0.2.1", 22)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("192.0.2.1", 8000)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("192.0.2.1", 8080)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("192.0.2.1", 8081)), Action::Drop, "policy");
    assert_eq!(c.decide(&tcp_in("192.0.3.1", 22)), Action::Drop, "policy");
    assert_eq!(c.decide(&tcp_in("2001:db8:1::5", 80)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("2001:db9::5", 80)), Action::Drop);
    let udp = Packet { protocol: RuleProtocol::Udp, ..tcp_in("203.0.113.9", 53) };
    assert_eq!(c.decide(&udp), Action::Accept);
    assert_eq!(c.decide(&Packet { port: 54, ..udp }), Action::Drop);
    let icmp = Packet { protocol: RuleProtocol::Icmp, ..tcp_in("2001:db9::1", 0) };
    assert_eq!(c.decide(&icmp), Action::Accept);
    let out = Packet { direction: Direction::Outbound, ..tcp_in("10.1.2.3", 443) };
    assert_eq!(c.decide(&out), Action::Drop);
    assert_eq!(c.decide(&Packet { peer: "11.0.0.1".parse().unwrap(), ..out }), Action::Accept);
}

#[test]
fn the_summary_describes_the_tables() {
    let s = CompiledRules::compile(&example()).summary();
    // IPv4: below 192.0.2.0, 192.0.2.0-65, .66 (rule 0 too), .67-255, above. TCP ports: 22,
    // 80 and 8000-8080 with the gaps around them.
    let inbound = s.lines().next().unwrap();
    assert_eq!(
        inbound,
        "inbound: 4 rules in 1 bitset word(s) per interval; intervals: IPv4 5, IPv6 3, ports TCP 7, UDP 3, \
         ICMP 1, IPENCAP 1; 252 bytes of tables"
    );
    assert!(s.lines().nth(1).unwrap().starts_with("outbound: 1 rules"), "{s}");
}

#[test]
fn ipv4_mapped_peers_are_ipv4() {
    let c = CompiledRules::compile(&example());
    assert_eq!(c.decide(&tcp_in("::ffff:192.0.2.1", 22)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("::ffff:192.0.2.66", 22)), Action::Drop);
}

#[test]
fn empty_rules_use_the_policy() {
    let r = FirewallRules {
        inbound: vec![],
        inbound_policy: Action::Accept,
        outbound: vec![],
        outbound_policy: Action::Drop,
    };
    let c = CompiledRules::compile(&r);
    assert_eq!(c.decide(&tcp_in("1.2.3.4", 1)), Action::Accept);
    let out = Packet { direction: Direction::Outbound, ..tcp_in("::1", 1) };
    assert_eq!(c.decide(&out), Action::Drop);
}

#[test]
fn edges_of_the_address_spaces() {
    let r = FirewallRules {
        inbound: vec![rule(
            Action::Accept,
            RuleProtocol::Tcp,
            None,
            &["255.255.255.255/32", "0.0.0.0/32"],
            &["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "::/128"],
        )],
        inbound_policy: Action::Drop,
        outbound: vec![],
        outbound_policy: Action::Drop,
    };
    let c = CompiledRules::compile(&r);
    for (peer, want) in [
        (IpAddr::V4(Ipv4Addr::BROADCAST), Action::Accept),
        (IpAddr::V4(Ipv4Addr::new(255, 255, 255, 254)), Action::Drop),
        (IpAddr::V4(Ipv4Addr::UNSPECIFIED), Action::Accept),
        (IpAddr::V4(Ipv4Addr::new(0, 0, 0, 1)), Action::Drop),
        (IpAddr::V6(Ipv6Addr::from(u128::MAX)), Action::Accept),
        (IpAddr::V6(Ipv6Addr::from(u128::MAX - 1)), Action::Drop),
        (IpAddr::V6(Ipv6Addr::UNSPECIFIED), Action::Accept),
        (IpAddr::V6(Ipv6Addr::from(1)), Action::Drop),
    ] {
        let p = Packet { direction: Direction::Inbound, protocol: RuleProtocol::Tcp, peer, port: 65535 };
        assert_eq!(c.decide(&p), want, "{peer}");
    }
}

#[test]
fn more_than_64_rules_use_several_words() {
    // Rule i accepts 10.0.0.i only on port i + 1; rule 100 drops everything.
    let mut inbound: Vec<Rule> = (0..100)
        .map(|i| rule(Action::Accept, RuleProtocol::Tcp, Some(&(i + 1).to_string()), &[&format!("10.0.0.{i}/32")], &[]))
        .collect();
    inbound.push(rule(Action::Drop, RuleProtocol::Tcp, None, &["10.0.0.0/24"], &[]));
    let r =
        FirewallRules { inbound, inbound_policy: Action::Accept, outbound: vec![], outbound_policy: Action::Accept };
    let c = CompiledRules::compile(&r);
    assert_eq!(c.decide(&tcp_in("10.0.0.70", 71)), Action::Accept);
    assert_eq!(c.decide(&tcp_in("10.0.0.70", 70)), Action::Drop);
    assert_eq!(c.decide(&tcp_in("10.0.1.70", 70)), Action::Accept);
}

#[test]
fn unparsable_entries_never_match() {
    let r = FirewallRules {
        inbound: vec![
            rule(Action::Drop, RuleProtocol::Tcp, Some("x, 30-20"), &["nonsense", "::/0"], &["0.0.0.0/0"]),
            rule(Action::Drop, RuleProtocol::Tcp, Some("080"), &["1.0.0.0/8"], &[]),
        ],
        inbound_policy: Action::Accept,
        outbound: vec![],
        outbound_policy: Action::Accept,
    };
    let c = CompiledRules::compile(&r);
    assert_eq!(c.decide(&tcp_in("1.2.3.4", 25)), Action::Accept);
    // "080" is read as 80 by both the compiled and the reference model.
    assert_eq!(c.decide(&tcp_in("1.2.3.4", 80)), Action::Drop);
    assert_eq!(reference_decide(&r, &tcp_in("1.2.3.4", 80)), Action::Drop);
}

// ---- property tests against the reference model ----

fn protocol() -> impl Strategy<Value = RuleProtocol> {
    prop_oneof![
        3 => Just(RuleProtocol::Tcp),
        1 => Just(RuleProtocol::Udp),
        1 => Just(RuleProtocol::Icmp),
        1 => Just(RuleProtocol::Ipencap),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![Just(Action::Accept), Just(Action::Drop)]
}

/// IPv4 addresses clustered so that networks overlap and packets hit their edges.
fn v4_addr() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        (0u32..64).prop_map(|x| 0x0a00_0000 | x),
        (0u32..64).prop_map(|x| u32::MAX - x),
        (0u32..64),
    ]
}

fn v6_addr() -> impl Strategy<Value = u128> {
    prop_oneof![
        any::<u128>(),
        (0u128..64).prop_map(|x| 0x2001_0db8 << 96 | x),
        (0u128..64).prop_map(|x| u128::MAX - x),
        (0u128..64),
    ]
}

fn v4_entry() -> impl Strategy<Value = String> {
    let len = prop_oneof![Just(0u8), Just(32u8), 26u8..=32, 0u8..=32];
    prop_oneof![
        8 => (v4_addr(), len).prop_map(|(a, l)| format!("{}/{l}", Ipv4Addr::from(a))),
        1 => v4_addr().prop_map(|a| Ipv4Addr::from(a).to_string()),
        1 => Just("garbage".to_string()),
    ]
}

fn v6_entry() -> impl Strategy<Value = String> {
    let len = prop_oneof![Just(0u8), Just(128u8), 122u8..=128, 0u8..=128];
    prop_oneof![
        8 => (v6_addr(), len).prop_map(|(a, l)| format!("{}/{l}", Ipv6Addr::from(a))),
        1 => v6_addr().prop_map(|a| Ipv6Addr::from(a).to_string()),
        1 => Just("10.0.0.0/8".to_string()),
    ]
}

fn port() -> impl Strategy<Value = u16> {
    prop_oneof![any::<u16>(), 0u16..40, Just(0), Just(65535), 65500u16..=65535]
}

fn ports() -> impl Strategy<Value = Option<String>> {
    let piece = prop_oneof![
        port().prop_map(|p| p.to_string()),
        (port(), port()).prop_map(|(a, b)| format!("{a}-{b}")),
        (0u16..40, 0u16..40).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
    ];
    let sep = prop_oneof![Just(","), Just(", ")];
    prop_oneof![
        1 => Just(None),
        3 => (prop::collection::vec(piece, 1..6), sep).prop_map(|(v, s)| Some(v.join(s))),
    ]
}

fn rule_strategy() -> impl Strategy<Value = Rule> {
    (
        action(),
        protocol(),
        ports(),
        prop::option::of(prop::collection::vec(v4_entry(), 0..6)),
        prop::option::of(prop::collection::vec(v6_entry(), 0..6)),
    )
        .prop_map(|(action, protocol, ports, ipv4, ipv6)| Rule {
            action,
            protocol,
            ports,
            addresses: RuleAddresses { ipv4, ipv6 },
            label: None,
            description: None,
        })
}

fn rules_strategy(max: usize) -> impl Strategy<Value = FirewallRules> {
    (prop::collection::vec(rule_strategy(), 0..max), action(), prop::collection::vec(rule_strategy(), 0..max), action())
        .prop_map(|(inbound, inbound_policy, outbound, outbound_policy)| FirewallRules {
            inbound,
            inbound_policy,
            outbound,
            outbound_policy,
        })
}

fn packet() -> impl Strategy<Value = Packet> {
    let peer = prop_oneof![
        v4_addr().prop_map(|a| IpAddr::V4(a.into())),
        v6_addr().prop_map(|a| IpAddr::V6(a.into())),
        v4_addr().prop_map(|a| IpAddr::V6(Ipv4Addr::from(a).to_ipv6_mapped())),
    ];
    let direction = prop_oneof![Just(Direction::Inbound), Just(Direction::Outbound)];
    (direction, protocol(), peer, port()).prop_map(|(direction, protocol, peer, port)| Packet {
        direction,
        protocol,
        peer,
        port,
    })
}

/// Packets aimed at the rules: each rule's first or last address of a network, or one past,
/// on one of its ports or one past.
fn aimed_packets(r: &FirewallRules) -> Vec<Packet> {
    let mut out = Vec::new();
    for (direction, list) in [(Direction::Inbound, &r.inbound), (Direction::Outbound, &r.outbound)] {
        for rule in list {
            let mut ports = vec![0u16, 65535];
            for (a, b) in rule.ports.as_deref().map(port_intervals).into_iter().flatten() {
                ports.extend([a, b, a.wrapping_sub(1), b.wrapping_add(1)]);
            }
            let nets = rule.addresses.ipv4.iter().chain(&rule.addresses.ipv6).flatten().filter_map(|s| parse_net(s));
            for n in nets {
                let peers: Vec<IpAddr> = match n {
                    IpNet::V4(n) => {
                        let (lo, hi) = (u32::from(n.network()), u32::from(n.broadcast()));
                        [lo, hi, lo.wrapping_sub(1), hi.wrapping_add(1)].map(|a| IpAddr::V4(a.into())).into()
                    }
                    IpNet::V6(n) => {
                        let (lo, hi) = (u128::from(n.network()), u128::from(n.broadcast()));
                        [lo, hi, lo.wrapping_sub(1), hi.wrapping_add(1)].map(|a| IpAddr::V6(a.into())).into()
                    }
                };
                for peer in peers {
                    for &port in &ports {
                        out.push(Packet { direction, protocol: rule.protocol, peer, port });
                    }
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn compiled_agrees_with_reference(r in rules_strategy(30), packets in prop::collection::vec(packet(), 64)) {
        let c = CompiledRules::compile(&r);
        let aimed = aimed_packets(&r);
        let step = aimed.len() / 400 + 1;
        for p in packets.iter().chain(aimed.iter().step_by(step)) {
            prop_assert_eq!(c.decide(p), reference_decide(&r, p), "packet {:?}", p);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn compiled_agrees_with_reference_beyond_64_rules(r in rules_strategy(140), packets in prop::collection::vec(packet(), 64)) {
        let c = CompiledRules::compile(&r);
        let aimed = aimed_packets(&r);
        let step = aimed.len() / 400 + 1;
        for p in packets.iter().chain(aimed.iter().step_by(step)) {
            prop_assert_eq!(c.decide(p), reference_decide(&r, p), "packet {:?}", p);
        }
    }
}
