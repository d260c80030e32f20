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

mod fields;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use super::ruleset::{RuleEntry, RuleSetRef, WrittenRules, is_prefix_list_name, prefix_list_name_problem};
use super::{Action, FirewallRules, Rule, RuleAddresses, RuleProtocol};
use crate::error::FieldError;
pub use fields::{LABEL_LEN, MAX_PORT_PIECES, validate_label, validate_ports};
use fields::{check_ipv4_entry, check_ipv6_entry};

/// Rules across inbound and outbound together.
pub const MAX_RULES: usize = 25;
/// Entries across `addresses.ipv4` and `addresses.ipv6` of one rule.
pub const MAX_ADDRESSES_PER_RULE: usize = 255;

/// The length of a rule's label and description.
const RULE_LABEL_LEN: (usize, usize) = (3, 32);
const RULE_DESCRIPTION_LEN: (usize, usize) = (1, 100);

/// The JSON Schema of a rules object in a request, as [`parse_rules`] (`policies_required`) and
/// [`parse_rules_update`] read it. What it cannot state: the 25 rules across both arrays, the
/// 255 addresses across both families of a rule, `ports` only with TCP and UDP, a port range's
/// end above its start and at most 15 pieces, and at least one address family.
pub fn rules_request_schema(policies_required: bool) -> serde_json::Value {
    use crate::schema::{array, one_of, or_null};
    let action = one_of(&["ACCEPT", "DROP"]);
    let reference = serde_json::json!({
        "type": "object",
        "required": ["ruleset"],
        "properties": {"ruleset": {"type": "integer", "format": "int64", "description": "A rule set of the same direction"}},
    });
    let rule = serde_json::json!({"anyOf": [rule_request_schema(), reference]});
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

/// The JSON Schema of one rule in a request (addresses may name prefix lists).
pub fn rule_request_schema() -> serde_json::Value {
    use crate::schema::{array, one_of, or_null, text};
    let action = one_of(&["ACCEPT", "DROP"]);
    let mut family = array(serde_json::json!({"type": "string"}), Some(MAX_ADDRESSES_PER_RULE));
    family["minItems"] = serde_json::json!(1);
    let family = or_null(family);
    serde_json::json!({
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
    })
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
    let w = parse_written_rules(v, prefix, policies_required, false)?;
    Ok(w.expand_sets(&|_| None))
}

/// [`parse_rules`] for a firewall's rules as written: with `refs`, an entry `{"ruleset": <id>}`
/// in `inbound` or `outbound` is a reference to a rule set (whether it exists, and its type, are
/// the caller's to check).
pub fn parse_written_rules(
    v: &Value,
    prefix: &str,
    policies_required: bool,
    refs: bool,
) -> Result<WrittenRules, Vec<FieldError>> {
    let policies = if policies_required {
        Policies::Required
    } else {
        Policies::Default { inbound: Action::Drop, outbound: Action::Accept }
    };
    parse_with(v, prefix, policies, refs)
}

/// The rules of a rule set: an array of rules (no references: rule sets do not nest), at most
/// [`MAX_RULES`]. `ports` `""` means all ports, as null does.
pub fn parse_ruleset_rules(v: &Value, field: &str) -> Result<Vec<Rule>, Vec<FieldError>> {
    let mut errs = Errors(Vec::new());
    let Some(items) = v.as_array() else {
        errs.add(field, "Must be an array of rules");
        return Err(errs.0);
    };
    if items.len() > MAX_RULES {
        errs.add(field, format!("A rule set may have at most {MAX_RULES} rules; found {}", items.len()));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("{field}[{i}]");
        if item.get("ruleset").is_some_and(|r| !r.is_null()) {
            errs.add(&join(&path, "ruleset"), "A rule set cannot reference another rule set");
            continue;
        }
        let mut item = item.clone();
        if item.get("ports").and_then(Value::as_str) == Some("") {
            item["ports"] = Value::Null;
        }
        if let Some(r) = parse_rule(&item, &path, &mut errs) {
            out.push(r);
        }
    }
    if errs.0.is_empty() { Ok(out) } else { Err(errs.0) }
}

/// [`parse_rules`] for PUT .../rules: both rule arrays are replaced (omitted means empty), and an
/// omitted or null policy keeps the value it has in `current`.
pub fn parse_rules_update(v: &Value, prefix: &str, current: &WrittenRules) -> Result<WrittenRules, Vec<FieldError>> {
    parse_with(
        v,
        prefix,
        Policies::Default { inbound: current.inbound_policy, outbound: current.outbound_policy },
        true,
    )
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

fn parse_with(v: &Value, prefix: &str, policies: Policies, refs: bool) -> Result<WrittenRules, Vec<FieldError>> {
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
    let mut list = |key: &str, errs: &mut Errors| -> Vec<RuleEntry> {
        let field = join(prefix, key);
        match get(obj, key) {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                total += items.len();
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| {
                        let path = format!("{field}[{i}]");
                        match item.get("ruleset").filter(|r| !r.is_null()) {
                            None => parse_rule(item, &path, errs).map(RuleEntry::Rule),
                            Some(_) if !refs => {
                                errs.add(&join(&path, "ruleset"), "Rule set references are not allowed here");
                                None
                            }
                            Some(r) => match r.as_i64() {
                                Some(id) => Some(RuleEntry::Set(RuleSetRef { ruleset: id })),
                                None => {
                                    errs.add(&join(&path, "ruleset"), "Must be the integer id of a rule set");
                                    None
                                }
                            },
                        }
                    })
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
            Ok(WrittenRules { inbound, inbound_policy, outbound, outbound_policy })
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
                        Some(s) if is_prefix_list_name(s) => match prefix_list_name_problem(s) {
                            None => Ok(s.to_string()),
                            Some(reason) => Err(reason),
                        },
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
