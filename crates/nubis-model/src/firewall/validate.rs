//! Validation of firewall labels and rule sets (spec 2.7 and 8), from the raw JSON of a request so
//! that a value of the wrong JSON type is reported on its own field. Every problem is returned at
//! once, each on its dotted field path (`rules.inbound[3].ports`).
//!
//! Decisions where the spec is silent:
//! - Unknown keys (in the rules object, a rule, or `addresses`) are ignored: the reference's
//!   schemas do not forbid additional properties, and clients round-trip the GET response
//!   (which may carry extra read-only fields) into PUT .../rules.
//! - `null` is treated as omitted for every optional field (`ports`, `label`, `description`,
//!   `inbound`, `outbound`, `addresses.ipv4`, `addresses.ipv6`); for a required field `null` is
//!   "required".
//! - An address without a mask (`192.0.2.1`) is refused: the reference says "Addresses must be
//!   in IP/mask format". The reason tells the caller to write `/32` (`/128`). Host bits after the
//!   mask are accepted (`192.0.2.7/24` means `192.0.2.0/24`), and strings are kept as sent.
//! - The 25-rule limit error is on the prefix (`rules`); with an empty prefix (the body of
//!   PUT .../rules is the rules object itself) it has a null field. It counts every element of the
//!   two arrays, valid or not.
//! - Policies: POST needs both (`parse_rules(.., true)`). The reference's PUT .../rules schema does
//!   not require them and says the operation "replaces all of a Firewall's inbound and outbound
//!   rulesets", so an omitted policy keeps the firewall's current one: use
//!   [`parse_rules_update`]. `parse_rules(.., false)` fills an omitted policy with the defaults
//!   of a new firewall in the Linode Cloud Manager (inbound `DROP`, outbound `ACCEPT`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::{Map, Value};

use super::{Action, FirewallRules, Rule, RuleAddresses, RuleProtocol};
use crate::error::FieldError;

/// Rules across inbound and outbound together.
pub const MAX_RULES: usize = 25;
/// Entries across `addresses.ipv4` and `addresses.ipv6` of one rule.
pub const MAX_ADDRESSES_PER_RULE: usize = 255;
/// Pieces of a ports string (a port counts one, a range two).
pub const MAX_PORT_PIECES: usize = 15;

/// The length of a rule's label and description.
const RULE_LABEL_LEN: (usize, usize) = (3, 32);
const RULE_DESCRIPTION_LEN: (usize, usize) = (1, 100);
/// The length of a firewall's label.
pub const LABEL_LEN: (usize, usize) = (3, 32);

/// The JSON Schema of a rules object in a request, as [`parse_rules`] (`policies_required`) and
/// [`parse_rules_update`] read it. What it cannot state: the 25 rules across both arrays, the
/// 255 addresses across both families of a rule, `ports` only with TCP and UDP, a port range's
/// end above its start and at most 15 pieces, and at least one address family.
pub fn rules_request_schema(policies_required: bool) -> serde_json::Value {
    use crate::schema::{array, one_of, or_null, text};
    let action = one_of(&["ACCEPT", "DROP"]);
    let mut family = array(serde_json::json!({"type": "string"}), Some(MAX_ADDRESSES_PER_RULE));
    family["minItems"] = serde_json::json!(1);
    let family = or_null(family);
    let rule = serde_json::json!({
        "type": "object",
        "required": ["action", "protocol", "addresses"],
        "properties": {
            "action": action,
            "protocol": one_of(&["TCP", "UDP", "ICMP", "IPENCAP"]),
            "ports": or_null(serde_json::json!({"type": "string", "minLength": 1})),
            "addresses": {
                "type": "object",
                "properties": {
                    "ipv4": family,
                    "ipv6": family,
                },
            },
            "label": or_null(text(RULE_LABEL_LEN.0, RULE_LABEL_LEN.1)),
            "description": or_null(text(RULE_DESCRIPTION_LEN.0, RULE_DESCRIPTION_LEN.1)),
        },
    });
    let mut v = serde_json::json!({
        "type": "object",
        "properties": {
            "inbound": or_null(array(rule.clone(), Some(MAX_RULES))),
            "outbound": or_null(array(rule, Some(MAX_RULES))),
            "inbound_policy": action,
            "outbound_policy": action,
        },
    });
    if policies_required {
        v["required"] = serde_json::json!(["inbound_policy", "outbound_policy"]);
    } else {
        v["properties"]["inbound_policy"] = or_null(action.clone());
        v["properties"]["outbound_policy"] = or_null(action.clone());
    }
    v
}

/// Checks a firewall label: 3..32 characters, only ASCII letters, digits, `-`, `_` and `.`,
/// beginning and ending with a letter or digit, with none of `--`, `__`, `..`.
/// Returns the reason when it is refused. (The reference's regular expression for this label is
/// broken; this is the rule as the spec and the reference's prose write it.)
pub fn validate_label(label: &str) -> Option<String> {
    let n = label.chars().count();
    if !(LABEL_LEN.0..=LABEL_LEN.1).contains(&n) {
        return Some("Length must be 3-32 characters".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !label.chars().all(allowed) {
        return Some("Must contain only letters, digits, hyphens (-), underscores (_) and periods (.)".into());
    }
    let b = label.as_bytes();
    if !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Some("Must begin and end with a letter or digit".into());
    }
    if label.contains("--") || label.contains("__") || label.contains("..") {
        return Some("Must not contain two hyphens (--), underscores (__) or periods (..) in a row".into());
    }
    None
}

/// Checks a `ports` string (a non-null one; null means all ports): a port, a range `a-b`, or a
/// comma-separated list of them with at most one space after each comma and no other spaces;
/// ports 1..65535 written without leading zeroes; a range's end greater than its start; at most
/// 15 pieces (a port counts one, a range two). Returns the reason when it is refused.
pub fn validate_ports(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("Must not be empty (use null for all ports)".into());
    }
    let mut pieces = 0usize;
    for (i, raw) in s.split(',').enumerate() {
        let item = if i > 0 { raw.strip_prefix(' ').unwrap_or(raw) } else { raw };
        if item.is_empty() {
            return Err("Must not contain an empty entry".into());
        }
        if item.chars().any(char::is_whitespace) {
            return Err(format!("Only one space is allowed, after a comma: {raw:?}"));
        }
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (port_number(a)?, port_number(b)?);
                if b <= a {
                    return Err(format!("A range's end must be greater than its start: {item:?}"));
                }
                pieces += 2;
            }
            None => {
                port_number(item)?;
                pieces += 1;
            }
        }
    }
    if pieces > MAX_PORT_PIECES {
        return Err(format!(
            "At most {MAX_PORT_PIECES} pieces are allowed (a port counts one, a range two); found {pieces}"
        ));
    }
    Ok(())
}

fn port_number(t: &str) -> Result<u16, String> {
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("Not a port number: {t:?}"));
    }
    if t.len() > 1 && t.starts_with('0') {
        return Err(format!("Ports must not have leading zeroes: {t:?}"));
    }
    match t.parse::<u32>() {
        Ok(n @ 1..=65535) => Ok(n as u16),
        _ => Err(format!("Ports must be between 1 and 65535: {t:?}")),
    }
}

/// How omitted policies are treated.
#[derive(Clone, Copy)]
enum Policies {
    Required,
    Default { inbound: Action, outbound: Action },
}

/// Parses and validates a rules object (`inbound`, `inbound_policy`, `outbound`,
/// `outbound_policy`) from raw JSON. Field paths start with `prefix` (`rules` gives
/// `rules.inbound[3].ports`, an empty prefix gives `inbound[3].ports`).
///
/// `inbound`/`outbound` omitted or null are empty. When `policies_required` is true (firewall
/// create) an omitted policy is an error; when false it becomes inbound `DROP` / outbound
/// `ACCEPT`. For PUT .../rules, where an omitted policy keeps the current one, use
/// [`parse_rules_update`].
pub fn parse_rules(v: &Value, prefix: &str, policies_required: bool) -> Result<FirewallRules, Vec<FieldError>> {
    let policies = if policies_required {
        Policies::Required
    } else {
        Policies::Default { inbound: Action::Drop, outbound: Action::Accept }
    };
    parse_with(v, prefix, policies)
}

/// [`parse_rules`] for PUT .../rules: both rule arrays are replaced (omitted means empty), and an
/// omitted or null policy keeps the value it has in `current`.
pub fn parse_rules_update(v: &Value, prefix: &str, current: &FirewallRules) -> Result<FirewallRules, Vec<FieldError>> {
    parse_with(v, prefix, Policies::Default { inbound: current.inbound_policy, outbound: current.outbound_policy })
}

/// Collects errors under a path prefix; an empty path gives a general (null-field) error.
struct Errors(Vec<FieldError>);

impl Errors {
    fn add(&mut self, field: &str, reason: impl Into<String>) {
        if field.is_empty() {
            self.0.push(FieldError::general(reason));
        } else {
            self.0.push(FieldError::new(field, reason));
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

/// A present, non-null value of `key`.
fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn parse_with(v: &Value, prefix: &str, policies: Policies) -> Result<FirewallRules, Vec<FieldError>> {
    let mut errs = Errors(Vec::new());
    let Some(obj) = v.as_object() else {
        errs.add(prefix, "Must be an object");
        return Err(errs.0);
    };

    let policy = |key: &str, default: Option<Action>, errs: &mut Errors| -> Option<Action> {
        let field = join(prefix, key);
        match get(obj, key) {
            None => {
                if default.is_none() {
                    errs.add(&field, format!("{key} is required"));
                }
                default
            }
            Some(v) => {
                let a = parse_action(v);
                if a.is_none() {
                    errs.add(&field, "Must be ACCEPT or DROP");
                }
                a
            }
        }
    };
    let (default_in, default_out) = match policies {
        Policies::Required => (None, None),
        Policies::Default { inbound, outbound } => (Some(inbound), Some(outbound)),
    };
    let inbound_policy = policy("inbound_policy", default_in, &mut errs);
    let outbound_policy = policy("outbound_policy", default_out, &mut errs);

    let mut total = 0usize;
    let mut list = |key: &str, errs: &mut Errors| -> Vec<Rule> {
        let field = join(prefix, key);
        match get(obj, key) {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                total += items.len();
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| parse_rule(item, &format!("{field}[{i}]"), errs))
                    .collect()
            }
            Some(_) => {
                errs.add(&field, "Must be an array of rules");
                Vec::new()
            }
        }
    };
    let inbound = list("inbound", &mut errs);
    let outbound = list("outbound", &mut errs);
    if total > MAX_RULES {
        errs.add(
            prefix,
            format!("A firewall may have at most {MAX_RULES} rules across inbound and outbound; found {total}"),
        );
    }

    match (inbound_policy, outbound_policy) {
        (Some(inbound_policy), Some(outbound_policy)) if errs.0.is_empty() => {
            Ok(FirewallRules { inbound, inbound_policy, outbound, outbound_policy })
        }
        _ => Err(errs.0),
    }
}

fn parse_action(v: &Value) -> Option<Action> {
    match v.as_str()? {
        "ACCEPT" => Some(Action::Accept),
        "DROP" => Some(Action::Drop),
        _ => None,
    }
}

fn parse_protocol(v: &Value) -> Option<RuleProtocol> {
    match v.as_str()? {
        "TCP" => Some(RuleProtocol::Tcp),
        "UDP" => Some(RuleProtocol::Udp),
        "ICMP" => Some(RuleProtocol::Icmp),
        "IPENCAP" => Some(RuleProtocol::Ipencap),
        _ => None,
    }
}

/// An optional string field with a length range in characters.
fn optional_text(
    obj: &Map<String, Value>,
    path: &str,
    key: &str,
    min: usize,
    max: usize,
    errs: &mut Errors,
) -> Result<Option<String>, ()> {
    let field = join(path, key);
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) if (min..=max).contains(&s.chars().count()) => Ok(Some(s.clone())),
        Some(Value::String(_)) => {
            errs.add(&field, format!("Length must be {min}-{max} characters"));
            Err(())
        }
        Some(_) => {
            errs.add(&field, "Must be a string");
            Err(())
        }
    }
}

/// One rule at `path`; `None` when it has any problem (all of which are recorded).
fn parse_rule(v: &Value, path: &str, errs: &mut Errors) -> Option<Rule> {
    let Some(obj) = v.as_object() else {
        errs.add(path, "Must be an object");
        return None;
    };
    let before = errs.0.len();

    let action = match get(obj, "action") {
        None => {
            errs.add(&join(path, "action"), "action is required");
            None
        }
        Some(v) => parse_action(v).or_else(|| {
            errs.add(&join(path, "action"), "Must be ACCEPT or DROP");
            None
        }),
    };
    let protocol = match get(obj, "protocol") {
        None => {
            errs.add(&join(path, "protocol"), "protocol is required");
            None
        }
        Some(v) => parse_protocol(v).or_else(|| {
            errs.add(&join(path, "protocol"), "Must be one of TCP, UDP, ICMP, IPENCAP");
            None
        }),
    };

    let ports_field = join(path, "ports");
    let ports = match get(obj, "ports") {
        None => None,
        Some(Value::String(s)) => {
            if matches!(protocol, Some(RuleProtocol::Icmp | RuleProtocol::Ipencap)) {
                errs.add(&ports_field, "Ports are allowed only for the TCP and UDP protocols");
            } else if let Err(reason) = validate_ports(s) {
                errs.add(&ports_field, reason);
            }
            Some(s.clone())
        }
        Some(_) => {
            errs.add(&ports_field, "Must be a string or null");
            None
        }
    };

    let addresses = match get(obj, "addresses") {
        None => {
            errs.add(&join(path, "addresses"), "addresses is required");
            None
        }
        Some(v) => parse_addresses(v, &join(path, "addresses"), errs),
    };
    let label = optional_text(obj, path, "label", RULE_LABEL_LEN.0, RULE_LABEL_LEN.1, errs).ok().flatten();
    let description =
        optional_text(obj, path, "description", RULE_DESCRIPTION_LEN.0, RULE_DESCRIPTION_LEN.1, errs).ok().flatten();

    if errs.0.len() != before {
        return None;
    }
    Some(Rule { action: action?, protocol: protocol?, ports, addresses: addresses?, label, description })
}

fn parse_addresses(v: &Value, path: &str, errs: &mut Errors) -> Option<RuleAddresses> {
    let Some(obj) = v.as_object() else {
        errs.add(path, "Must be an object with ipv4, ipv6 or both");
        return None;
    };
    let before = errs.0.len();
    let mut count = 0usize;
    let mut family = |key: &str, check: fn(&str) -> Result<(), String>, errs: &mut Errors| {
        let field = join(path, key);
        match get(obj, key) {
            None => None,
            Some(Value::Array(items)) => {
                count += items.len();
                if items.is_empty() {
                    errs.add(&field, "Must not be empty");
                }
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let r = match item.as_str() {
                        Some(s) => check(s).map(|()| s.to_string()),
                        None => Err("Must be a string".to_string()),
                    };
                    match r {
                        Ok(s) => out.push(s),
                        Err(reason) => errs.add(&format!("{field}[{i}]"), reason),
                    }
                }
                Some(out)
            }
            Some(_) => {
                errs.add(&field, "Must be an array of strings");
                None
            }
        }
    };
    let ipv4 = family("ipv4", check_ipv4_entry, errs);
    let ipv6 = family("ipv6", check_ipv6_entry, errs);
    if ipv4.is_none() && ipv6.is_none() && errs.0.len() == before {
        errs.add(path, "Must contain ipv4, ipv6 or both");
    }
    if count > MAX_ADDRESSES_PER_RULE {
        errs.add(
            path,
            format!(
                "A rule may have at most {MAX_ADDRESSES_PER_RULE} addresses or networks across ipv4 and ipv6; found {count}"
            ),
        );
    }
    if errs.0.len() != before {
        return None;
    }
    Some(RuleAddresses { ipv4, ipv6 })
}

/// The mask of `IP/mask`: decimal without leading zeroes, at most `max`.
fn mask_ok(m: &str, max: u8) -> bool {
    !m.is_empty()
        && m.len() <= 3
        && m.bytes().all(|c| c.is_ascii_digit())
        && !(m.len() > 1 && m.starts_with('0'))
        && m.parse::<u8>().is_ok_and(|n| n <= max)
}

fn check_ipv4_entry(s: &str) -> Result<(), String> {
    let Some((ip, mask)) = s.split_once('/') else {
        return Err(if s.parse::<Ipv4Addr>().is_ok() {
            format!("Must be in IP/mask format (for a single address write {s}/32)")
        } else if s.parse::<IpAddr>().is_ok() {
            "Must be an IPv4 address (IPv6 addresses belong in ipv6)".into()
        } else {
            "Must be an IPv4 address in IP/mask format".into()
        });
    };
    if ip.parse::<Ipv4Addr>().is_err() {
        return Err(if ip.parse::<Ipv6Addr>().is_ok() {
            "Must be an IPv4 address (IPv6 addresses belong in ipv6)".into()
        } else {
            "Must be an IPv4 address in IP/mask format".into()
        });
    }
    if !mask_ok(mask, 32) {
        return Err("The mask must be a number from 0 to 32".into());
    }
    Ok(())
}

fn check_ipv6_entry(s: &str) -> Result<(), String> {
    if s.contains('%') {
        return Err("Zone ids (RFC 4007, as in fe80::1%eth0) are not allowed".into());
    }
    let Some((ip, mask)) = s.split_once('/') else {
        return Err(if s.parse::<Ipv6Addr>().is_ok() {
            format!("Must be in IP/mask format (for a single address write {s}/128)")
        } else if s.parse::<IpAddr>().is_ok() {
            "Must be an IPv6 address (IPv4 addresses belong in ipv4)".into()
        } else {
            "Must be an IPv6 address in IP/mask format".into()
        });
    };
    if ip.parse::<Ipv6Addr>().is_err() {
        return Err(if ip.parse::<Ipv4Addr>().is_ok() {
            "Must be an IPv6 address (IPv4 addresses belong in ipv4)".into()
        } else {
            "Must be an IPv6 address in IP/mask format".into()
        });
    }
    if !mask_ok(mask, 128) {
        return Err("The prefix length must be a number from 0 to 128".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        for bad in [
            "ab",
            &"a".repeat(33),
            "-abc",
            "abc-",
            ".abc",
            "abc_",
            "a--b",
            "a__b",
            "a..b",
            "a b c",
            "a/bc",
            "héllo",
            "",
        ] {
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
        let current = FirewallRules {
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
}
