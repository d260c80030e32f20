//! Benchmark of the compiled firewall evaluator: ns per decision for a firewall of 25 inbound
//! rules with 255 networks each (mixed IPv4 and IPv6), and compile time.
//!
//! Run: `cargo bench -p nubis-model --bench firewall`. For comparison it also times a linear scan
//! over the same rules pre-parsed into `ipnet` networks (the straightforward model without string
//! parsing). Figures drift on a shared machine; compare them within one run.

use std::hint::black_box;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use ipnet::IpNet;
use nubis_model::firewall::{
    Action, CompiledRules, Direction, FirewallRules, Packet, Rule, RuleAddresses, RuleProtocol, parse_net,
};

const RULES: usize = 25;
const V4_PER_RULE: usize = 200;
const V6_PER_RULE: usize = 55;

/// Rule `i` (0-based) lists `10.i.j.0/25` for j < 200 and `2001:db8:i:2j::/64` for j < 55, on
/// ports `80, 443, 8000-8100`; alternating ACCEPT and DROP. Policy DROP. The networks are not
/// adjacent (a gap follows each one), so none merge: the address tables hold 2 x 6375
/// intervals, the worst case for this many networks.
fn firewall() -> FirewallRules {
    let inbound = (0..RULES)
        .map(|i| Rule {
            action: if i % 2 == 0 { Action::Accept } else { Action::Drop },
            protocol: RuleProtocol::Tcp,
            ports: Some("80, 443, 8000-8100".into()),
            addresses: RuleAddresses {
                ipv4: Some((0..V4_PER_RULE).map(|j| format!("10.{i}.{j}.0/25")).collect()),
                ipv6: Some((0..V6_PER_RULE).map(|j| format!("2001:db8:{i:x}:{:x}::/64", 2 * j)).collect()),
            },
            label: None,
            description: None,
        })
        .collect();
    FirewallRules { inbound, inbound_policy: Action::Drop, outbound: vec![], outbound_policy: Action::Accept }
}

fn packet(peer: &str, port: u16) -> Packet {
    Packet { direction: Direction::Inbound, protocol: RuleProtocol::Tcp, peer: peer.parse().unwrap(), port }
}

/// A pre-parsed rule: action, inclusive port ranges, networks.
type LinearRule = (Action, Vec<(u16, u16)>, Vec<IpNet>);

/// The straightforward model over pre-parsed rules, for comparison.
struct Linear {
    rules: Vec<LinearRule>,
    policy: Action,
}

impl Linear {
    fn new(r: &FirewallRules) -> Linear {
        let rules = r
            .inbound
            .iter()
            .map(|rule| {
                let ports = rule
                    .ports
                    .as_deref()
                    .unwrap_or("1-65535")
                    .split(',')
                    .map(str::trim)
                    .map(|p| match p.split_once('-') {
                        Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                        None => (p.parse().unwrap(), p.parse().unwrap()),
                    })
                    .collect();
                let nets = rule
                    .addresses
                    .ipv4
                    .iter()
                    .chain(&rule.addresses.ipv6)
                    .flatten()
                    .filter_map(|s| parse_net(s))
                    .collect();
                (rule.action, ports, nets)
            })
            .collect();
        Linear { rules, policy: r.inbound_policy }
    }

    fn decide(&self, peer: IpAddr, port: u16) -> Action {
        for (action, ports, nets) in &self.rules {
            if ports.iter().any(|&(a, b)| (a..=b).contains(&port)) && nets.iter().any(|n| n.contains(&peer)) {
                return *action;
            }
        }
        self.policy
    }
}

/// Average ns per call of `f` over about `budget`.
fn time(budget: Duration, mut f: impl FnMut()) -> f64 {
    // Calibrate the number of iterations, then measure.
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        let e = t.elapsed();
        if e >= budget / 10 {
            let iters = (n as f64 * budget.as_secs_f64() / e.as_secs_f64()) as u64;
            let t = Instant::now();
            for _ in 0..iters.max(1) {
                f();
            }
            return t.elapsed().as_nanos() as f64 / iters.max(1) as f64;
        }
        n *= 2;
    }
}

fn main() {
    let rules = firewall();
    let total: usize = rules
        .inbound
        .iter()
        .map(|r| r.addresses.ipv4.as_ref().unwrap().len() + r.addresses.ipv6.as_ref().unwrap().len())
        .sum();
    println!("firewall: {} inbound rules, {total} networks ({V4_PER_RULE} IPv4 + {V6_PER_RULE} IPv6 per rule)", RULES);

    let compile_ns = time(Duration::from_millis(1500), || {
        black_box(CompiledRules::compile(black_box(&rules)));
    });
    println!("compile: {:.0} us", compile_ns / 1000.0);

    let compiled = CompiledRules::compile(&rules);
    println!("compiled structure:\n{}", compiled.summary());
    let linear = Linear::new(&rules);
    // Rules 0 and 24 ACCEPT, the policy is DROP: the expected action tells the cases apart.
    let cases = [
        ("IPv4, first rule matches", packet("10.0.5.7", 443), Action::Accept),
        ("IPv4, last rule matches", packet("10.24.199.1", 8050), Action::Accept),
        ("IPv4, no rule matches (policy)", packet("192.0.2.1", 443), Action::Drop),
        ("IPv4, in a gap between networks (policy)", packet("10.24.199.200", 443), Action::Drop),
        ("IPv4, address matches, port does not", packet("10.24.199.1", 22), Action::Drop),
        ("IPv6, first rule matches", packet("2001:db8:0:a::1", 80), Action::Accept),
        ("IPv6, last rule matches", packet("2001:db8:18:6c::1", 80), Action::Accept),
        ("IPv6, no rule matches (policy)", packet("2001:db8:ff::1", 80), Action::Drop),
        ("IPv6, in a gap between networks (policy)", packet("2001:db8:18:6b::1", 80), Action::Drop),
    ];
    println!("{:<44} {:>12} {:>16}", "case", "compiled ns", "linear scan ns");
    for (name, p, expected) in cases {
        assert_eq!(compiled.decide(&p), expected, "{name}");
        assert_eq!(linear.decide(p.peer, p.port), expected, "{name}");
        let c = time(Duration::from_millis(700), || {
            black_box(compiled.decide(black_box(&p)));
        });
        let l = time(Duration::from_millis(300), || {
            black_box(linear.decide(black_box(p.peer), black_box(p.port)));
        });
        println!("{name:<44} {c:>12.1} {l:>16.1}");
    }
}
