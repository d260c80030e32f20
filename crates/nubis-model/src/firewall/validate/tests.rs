//! The rules of [`super`], one test per rule.

use serde_json::json;

use super::*;

fn tcp_rule() -> Value {
    json!({"action": "ACCEPT", "protocol": "TCP", "ports": "22", "addresses": {"ipv4": ["192.0.2.0/24"]}})
}

fn body(inbound: Vec<Value>) -> Value {
    json!({"inbound": inbound, "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"})
}

/// The errors of a rules object under prefix `rules`, as (field, reason) pairs.
fn errors(v: &Value) -> Vec<(String, String)> {
    match parse_rules(v, "rules", true) {
        Ok(_) => Vec::new(),
        Err(e) => e.into_iter().map(|e| (e.field.unwrap_or_default(), e.reason)).collect(),
    }
}

fn fields(v: &Value) -> Vec<String> {
    errors(v).into_iter().map(|(f, _)| f).collect()
}

/// The fields refused when the first inbound rule has `key` set to `value`.
fn with(key: &str, value: Value) -> Vec<String> {
    let mut r = tcp_rule();
    r[key] = value;
    fields(&body(vec![r]))
}

fn ports_ok(p: &str) -> bool {
    validate_ports(p).is_ok()
}

#[test]
fn labels() {
    for ok in ["abc", "fw-1", "a_b.c-d", "A1.b2", &"a".repeat(32), "123"] {
        assert_eq!(validate_label(ok), None, "{ok}");
    }
    for bad in
        ["ab", &"a".repeat(33), "-abc", "abc-", ".abc", "abc_", "a--b", "a__b", "a..b", "a b c", "a/bc", "héllo", ""]
    {
        assert!(validate_label(bad).is_some(), "{bad}");
    }
    // Mixed separators in a row are allowed: the rule forbids only doubled ones.
    assert_eq!(validate_label("a-_b"), None);
}

#[test]
fn a_valid_rule_set_parses_with_every_field() {
    let v = json!({
        "inbound": [{"action": "ACCEPT", "protocol": "TCP", "ports": "22-24, 80, 443",
                     "addresses": {"ipv4": ["192.0.2.0/24", "198.51.100.2/32"], "ipv6": ["2001:DB8::/128"]},
                     "label": "inbound-rule123", "description": "An example"}],
        "inbound_policy": "DROP",
        "outbound": [{"action": "DROP", "protocol": "ICMP", "addresses": {"ipv6": ["::/0"]}}],
        "outbound_policy": "ACCEPT",
    });
    let r = parse_rules(&v, "rules", true).unwrap();
    assert_eq!(r.inbound_policy, Action::Drop);
    assert_eq!(r.outbound_policy, Action::Accept);
    assert_eq!(r.inbound[0].ports.as_deref(), Some("22-24, 80, 443"));
    assert_eq!(r.inbound[0].label.as_deref(), Some("inbound-rule123"));
    assert_eq!(r.inbound[0].addresses.ipv6.as_deref(), Some(&["2001:DB8::/128".to_string()][..]));
    assert_eq!(r.outbound[0].protocol, RuleProtocol::Icmp);
    assert_eq!(r.outbound[0].ports, None);
    assert_eq!(r.outbound[0].addresses.ipv4, None);
}

#[test]
fn not_an_object() {
    assert_eq!(fields(&json!([])), ["rules"]);
    let e = parse_rules(&json!("x"), "", true).unwrap_err();
    assert_eq!(e[0].field, None);
}

#[test]
fn policies_required_on_create() {
    let v = json!({"inbound": []});
    assert_eq!(fields(&v), ["rules.inbound_policy", "rules.outbound_policy"]);
    let v = json!({"inbound_policy": null, "outbound_policy": "DROP"});
    assert_eq!(fields(&v), ["rules.inbound_policy"]);
}

#[test]
fn policy_values() {
    let v = json!({"inbound_policy": "accept", "outbound_policy": 1});
    assert_eq!(fields(&v), ["rules.inbound_policy", "rules.outbound_policy"]);
    let v = json!({"inbound_policy": "ACCEPT", "outbound_policy": "DROP"});
    let r = parse_rules(&v, "rules", true).unwrap();
    assert!(r.inbound.is_empty() && r.outbound.is_empty(), "omitted arrays are empty");
    assert_eq!((r.inbound_policy, r.outbound_policy), (Action::Accept, Action::Drop));
}

#[test]
fn omitted_policies_when_not_required() {
    let r = parse_rules(&json!({}), "", false).unwrap();
    assert_eq!((r.inbound_policy, r.outbound_policy), (Action::Drop, Action::Accept));
    // A bad value is still refused.
    let e = parse_rules(&json!({"inbound_policy": "NOPE"}), "", false).unwrap_err();
    assert_eq!(e[0].field.as_deref(), Some("inbound_policy"));
}

#[test]
fn update_keeps_current_policies_when_omitted() {
    let current = WrittenRules {
        inbound: vec![],
        inbound_policy: Action::Accept,
        outbound: vec![],
        outbound_policy: Action::Drop,
    };
    let v = json!({"inbound": [tcp_rule()], "outbound_policy": "ACCEPT"});
    let r = parse_rules_update(&v, "", &current).unwrap();
    assert_eq!(r.inbound_policy, Action::Accept, "omitted: kept");
    assert_eq!(r.outbound_policy, Action::Accept, "given: replaced");
    assert_eq!(r.inbound.len(), 1);
    assert!(r.outbound.is_empty());
}

#[test]
fn arrays_must_be_arrays() {
    let v = json!({"inbound": {}, "inbound_policy": "DROP", "outbound": "x", "outbound_policy": "DROP"});
    assert_eq!(fields(&v), ["rules.inbound", "rules.outbound"]);
    let v = json!({"inbound": [1], "inbound_policy": "DROP", "outbound_policy": "DROP"});
    assert_eq!(fields(&v), ["rules.inbound[0]"]);
}

#[test]
fn rule_count_limit_25_across_both_directions() {
    let v = json!({"inbound": vec![tcp_rule(); 20], "inbound_policy": "DROP",
                   "outbound": vec![tcp_rule(); 5], "outbound_policy": "DROP"});
    assert_eq!(fields(&v), Vec::<String>::new());
    let v = json!({"inbound": vec![tcp_rule(); 20], "inbound_policy": "DROP",
                   "outbound": vec![tcp_rule(); 6], "outbound_policy": "DROP"});
    assert_eq!(fields(&v), ["rules"]);
    // With an empty prefix the limit error has no field.
    let e = parse_rules(&v, "", true).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].field, None);
    assert!(e[0].reason.contains("25"));
}

#[test]
fn every_problem_is_reported_at_once_with_paths() {
    let mut bad_ports = tcp_rule();
    bad_ports["ports"] = json!("080");
    let mut bad_addr = tcp_rule();
    bad_addr["addresses"] = json!({"ipv4": ["10.0.0.0/8", "1.2.3.4/24", "nope"]});
    let v = json!({"inbound": [tcp_rule(), tcp_rule(), tcp_rule(), bad_ports],
                   "outbound": [bad_addr], "inbound_policy": "x"});
    assert_eq!(
        fields(&v),
        [
            "rules.inbound_policy",
            "rules.outbound_policy",
            "rules.inbound[3].ports",
            "rules.outbound[0].addresses.ipv4[2]"
        ]
    );
    let e = parse_rules(&v, "", true).unwrap_err();
    let f: Vec<_> = e.iter().map(|e| e.field.clone().unwrap()).collect();
    assert_eq!(f, ["inbound_policy", "outbound_policy", "inbound[3].ports", "outbound[0].addresses.ipv4[2]"]);
}

#[test]
fn action_required_and_enum() {
    let mut r = tcp_rule();
    r.as_object_mut().unwrap().remove("action");
    assert_eq!(fields(&body(vec![r])), ["rules.inbound[0].action"]);
    assert_eq!(with("action", json!("REJECT")), ["rules.inbound[0].action"]);
    assert_eq!(with("action", json!(null)), ["rules.inbound[0].action"]);
    assert!(with("action", json!("DROP")).is_empty());
}

#[test]
fn protocol_required_and_enum() {
    let mut r = tcp_rule();
    r.as_object_mut().unwrap().remove("protocol");
    assert_eq!(fields(&body(vec![r])), ["rules.inbound[0].protocol"]);
    assert_eq!(with("protocol", json!("SCTP")), ["rules.inbound[0].protocol"]);
    assert_eq!(with("protocol", json!("tcp")), ["rules.inbound[0].protocol"]);
    assert!(with("protocol", json!("UDP")).is_empty());
}

#[test]
fn addresses_required_with_a_family() {
    let mut r = tcp_rule();
    r.as_object_mut().unwrap().remove("addresses");
    assert_eq!(fields(&body(vec![r])), ["rules.inbound[0].addresses"]);
    assert_eq!(with("addresses", json!({})), ["rules.inbound[0].addresses"]);
    assert_eq!(with("addresses", json!({"ipv4": null})), ["rules.inbound[0].addresses"]);
    assert_eq!(with("addresses", json!("0.0.0.0/0")), ["rules.inbound[0].addresses"]);
    assert!(with("addresses", json!({"ipv6": ["::/0"]})).is_empty());
    assert!(with("addresses", json!({"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]})).is_empty());
}

#[test]
fn address_arrays_not_empty_and_typed() {
    assert_eq!(with("addresses", json!({"ipv4": []})), ["rules.inbound[0].addresses.ipv4"]);
    assert_eq!(with("addresses", json!({"ipv4": ["1.2.3.4/32"], "ipv6": []})), ["rules.inbound[0].addresses.ipv6"]);
    assert_eq!(with("addresses", json!({"ipv4": "1.2.3.4/32"})), ["rules.inbound[0].addresses.ipv4"]);
    assert_eq!(with("addresses", json!({"ipv4": [7]})), ["rules.inbound[0].addresses.ipv4[0]"]);
}

#[test]
fn ipv4_entries_need_ip_slash_mask() {
    let refuse = |a: &str| with("addresses", json!({"ipv4": ["10.0.0.0/8", a]}));
    for ok in ["0.0.0.0/0", "192.0.2.0/24", "198.51.100.2/32", "192.0.2.7/24"] {
        assert!(refuse(ok).is_empty(), "{ok}");
    }
    for bad in [
        "198.51.100.2",
        "1.2.3.4/33",
        "1.2.3.4/",
        "1.2.3/24",
        "1.2.3.4/024",
        "1.2.3.4/-1",
        "01.2.3.4/32",
        "::/0",
        "2001:db8::/32",
        "host/24",
        " 1.2.3.4/32",
        "",
    ] {
        assert_eq!(refuse(bad), ["rules.inbound[0].addresses.ipv4[1]"], "{bad}");
    }
    let e = errors(&body(vec![json!({"action": "DROP", "protocol": "TCP",
                                       "addresses": {"ipv4": ["1.2.3.4"]}})]));
    assert!(e[0].1.contains("1.2.3.4/32"), "{e:?}");
}

#[test]
fn ipv6_entries_need_ip_slash_mask_without_zone() {
    let refuse = |a: &str| with("addresses", json!({"ipv6": [a]}));
    for ok in ["::/0", "2001:DB8::/128", "2001:db8::/32", "fe80::1/64", "::ffff:1.2.3.4/128"] {
        assert!(refuse(ok).is_empty(), "{ok}");
    }
    for bad in [
        "fe80::1%eth0",
        "fe80::1%eth0/64",
        "2001:db8::1",
        "2001:db8::/129",
        "2001:db8::/064",
        "10.0.0.0/8",
        "2001:db8:::/32",
        "",
    ] {
        assert_eq!(refuse(bad), ["rules.inbound[0].addresses.ipv6[0]"], "{bad}");
    }
    let e = errors(&body(vec![json!({"action": "DROP", "protocol": "TCP",
                                       "addresses": {"ipv6": ["fe80::1%eth0/64"]}})]));
    assert!(e[0].1.contains("Zone"), "{e:?}");
}

#[test]
fn at_most_255_addresses_across_both_arrays() {
    let v4 = |n: usize| (0..n).map(|i| format!("10.0.{}.{}/32", i / 256, i % 256)).collect::<Vec<_>>();
    let v6 = |n: usize| (0..n).map(|i| format!("2001:db8::{i:x}/128")).collect::<Vec<_>>();
    assert!(with("addresses", json!({"ipv4": v4(255)})).is_empty());
    assert_eq!(with("addresses", json!({"ipv4": v4(256)})), ["rules.inbound[0].addresses"]);
    assert!(with("addresses", json!({"ipv4": v4(200), "ipv6": v6(55)})).is_empty());
    assert_eq!(with("addresses", json!({"ipv4": v4(200), "ipv6": v6(56)})), ["rules.inbound[0].addresses"]);
    assert_eq!(with("addresses", json!({"ipv6": v6(256)})), ["rules.inbound[0].addresses"]);
}

#[test]
fn rule_label_3_to_32_optional() {
    assert!(with("label", json!("abc")).is_empty());
    assert!(with("label", json!("a".repeat(32))).is_empty());
    assert!(with("label", json!(null)).is_empty());
    assert_eq!(with("label", json!("ab")), ["rules.inbound[0].label"]);
    assert_eq!(with("label", json!("a".repeat(33))), ["rules.inbound[0].label"]);
    assert_eq!(with("label", json!(12345)), ["rules.inbound[0].label"]);
}

#[test]
fn rule_description_1_to_100_optional() {
    assert!(with("description", json!("x")).is_empty());
    assert!(with("description", json!("é".repeat(100))).is_empty());
    assert_eq!(with("description", json!("")), ["rules.inbound[0].description"]);
    assert_eq!(with("description", json!("x".repeat(101))), ["rules.inbound[0].description"]);
    assert_eq!(with("description", json!(["x"])), ["rules.inbound[0].description"]);
}

#[test]
fn ports_null_or_omitted_means_all() {
    assert!(with("ports", json!(null)).is_empty());
    let mut r = tcp_rule();
    r.as_object_mut().unwrap().remove("ports");
    let parsed = parse_rules(&body(vec![r]), "rules", true).unwrap();
    assert_eq!(parsed.inbound[0].ports, None);
    assert_eq!(with("ports", json!(22)), ["rules.inbound[0].ports"]);
}

#[test]
fn ports_bounds() {
    assert!(ports_ok("1"));
    assert!(ports_ok("65535"));
    assert!(ports_ok("1-65535"));
    assert!(!ports_ok("0"));
    assert!(!ports_ok("65536"));
    assert!(!ports_ok("0-80"));
    assert!(!ports_ok("80-65536"));
    assert!(!ports_ok("99999999999999999999"));
    assert_eq!(with("ports", json!("0")), ["rules.inbound[0].ports"]);
}

#[test]
fn ports_no_leading_zeroes() {
    assert!(!ports_ok("080"));
    assert!(!ports_ok("00"));
    assert!(!ports_ok("22-080"));
    assert!(ports_ok("80"));
    assert!(validate_ports("080").unwrap_err().contains("leading"));
}

#[test]
fn ports_range_end_greater_than_start() {
    assert!(ports_ok("22-23"));
    assert!(!ports_ok("22-22"));
    assert!(!ports_ok("23-22"));
    assert!(!ports_ok("22-"));
    assert!(!ports_ok("-22"));
    assert!(!ports_ok("22-23-24"));
}

#[test]
fn ports_one_space_after_each_comma_only() {
    assert!(ports_ok("22,80"));
    assert!(ports_ok("22, 80"));
    assert!(ports_ok("22-24, 80, 443"));
    assert!(!ports_ok("22,  80"));
    assert!(!ports_ok("22 ,80"));
    assert!(!ports_ok(" 22"));
    assert!(!ports_ok("22 "));
    assert!(!ports_ok("22 - 24"));
    assert!(!ports_ok("22,\t80"));
    assert!(!ports_ok("22,"));
    assert!(!ports_ok(",22"));
    assert!(!ports_ok("22,,80"));
    assert!(!ports_ok(""));
    assert!(!ports_ok("http"));
    assert!(!ports_ok("+80"));
}

#[test]
fn ports_at_most_15_pieces() {
    let singles = |n: u16| (1..=n).map(|p| p.to_string()).collect::<Vec<_>>().join(",");
    assert!(ports_ok(&singles(15)));
    assert!(!ports_ok(&singles(16)));
    // Ranges count two: 7 ranges + 1 port = 15; 7 ranges + 2 ports = 16; 8 ranges = 16.
    let ranges = |n: u16| (0..n).map(|i| format!("{}-{}", 100 + 10 * i, 105 + 10 * i)).collect::<Vec<_>>();
    assert!(ports_ok(&format!("{}, 22", ranges(7).join(", "))));
    assert!(!ports_ok(&format!("{}, 22, 23", ranges(7).join(", "))));
    assert!(!ports_ok(&ranges(8).join(",")));
    assert_eq!(with("ports", json!(singles(16))), ["rules.inbound[0].ports"]);
}

#[test]
fn ports_only_for_tcp_and_udp() {
    for proto in ["ICMP", "IPENCAP"] {
        let r = json!({"action": "ACCEPT", "protocol": proto, "ports": "22", "addresses": {"ipv4": ["0.0.0.0/0"]}});
        assert_eq!(fields(&body(vec![r])), ["rules.inbound[0].ports"], "{proto}");
        let r = json!({"action": "ACCEPT", "protocol": proto, "ports": null, "addresses": {"ipv4": ["0.0.0.0/0"]}});
        assert!(fields(&body(vec![r])).is_empty(), "{proto}");
    }
    let r = json!({"action": "ACCEPT", "protocol": "UDP", "ports": "53", "addresses": {"ipv4": ["0.0.0.0/0"]}});
    assert!(fields(&body(vec![r])).is_empty());
}

#[test]
fn unknown_keys_are_ignored() {
    let mut r = tcp_rule();
    r["fingerprint"] = json!("abc");
    r["addresses"]["ipv5"] = json!(["x"]);
    let mut v = body(vec![r]);
    v["version"] = json!(3);
    assert!(fields(&v).is_empty());
}

#[test]
fn rule_set_references_only_where_allowed() {
    let v = body(vec![json!({"ruleset": 4}), tcp_rule()]);
    let w = parse_written_rules(&v, "rules", true, true).unwrap();
    assert_eq!(w.inbound[0], RuleEntry::Set(RuleSetRef { ruleset: 4 }));
    let e = parse_written_rules(&v, "rules", true, false).unwrap_err();
    assert_eq!(e[0].field.as_deref(), Some("rules.inbound[0].ruleset"));
    let bad = body(vec![json!({"ruleset": "x"})]);
    let e = parse_written_rules(&bad, "rules", true, true).unwrap_err();
    assert_eq!(e[0].field.as_deref(), Some("rules.inbound[0].ruleset"));
}

#[test]
fn prefix_list_names_are_addresses() {
    let mut r = tcp_rule();
    r["addresses"] = json!({"ipv4": ["pl:system:public:r1", "10.0.0.0/8"], "ipv6": ["pl::vpcs:1"]});
    assert!(fields(&body(vec![r.clone()])).is_empty());
    r["addresses"] = json!({"ipv4": ["pl:bogus"]});
    assert_eq!(fields(&body(vec![r])), ["rules.inbound[0].addresses.ipv4[0]"]);
}

#[test]
fn rule_set_rules() {
    let mut empty_ports = tcp_rule();
    empty_ports["ports"] = json!("");
    let rules = parse_ruleset_rules(&json!([empty_ports]), "rules").unwrap();
    assert_eq!(rules[0].ports, None, "an empty ports string is all ports");
    let e = parse_ruleset_rules(&json!([{"ruleset": 1}]), "rules").unwrap_err();
    assert_eq!(e[0].field.as_deref(), Some("rules[0].ruleset"));
    let e = parse_ruleset_rules(&json!(vec![tcp_rule(); MAX_RULES + 1]), "rules").unwrap_err();
    assert_eq!(e[0].field.as_deref(), Some("rules"));
    assert!(parse_ruleset_rules(&json!({}), "rules").is_err());
}
