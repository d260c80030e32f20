//! Rule sets, prefix lists and the rules of a firewall as written (the hosted API's newer
//! firewall objects).
//!
//! - A firewall's rules as written ([`WrittenRules`]) hold, in `inbound` and `outbound`, rules and
//!   references to rule sets (`{"ruleset": <id>}`); a rule's `addresses` may name prefix lists
//!   (`pl:system:...`, `pl::...`) beside IP/mask entries.
//! - What is enforced is the expansion ([`WrittenRules::expand`]): each reference replaced in
//!   place by the set's rules, each prefix-list name by the list's addresses of that family. The
//!   result is plain [`FirewallRules`], which `CompiledRules::compile` and the netns nftables
//!   take unchanged.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Action, FirewallRules, Rule};
use crate::Timestamp;

/// A reference to a rule set in a firewall's `inbound` or `outbound`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RuleSetRef {
    pub ruleset: i64,
}

/// One entry of a firewall's rules as written: a reference to a rule set, or a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum RuleEntry {
    Set(RuleSetRef),
    Rule(Rule),
}

/// A firewall's rules as written and stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WrittenRules {
    pub inbound: Vec<RuleEntry>,
    pub inbound_policy: Action,
    pub outbound: Vec<RuleEntry>,
    pub outbound_policy: Action,
}

/// The addresses of a prefix list, by family.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PrefixAddresses {
    pub ipv4: Vec<String>,
    pub ipv6: Vec<String>,
}

/// Whether an address entry names a prefix list rather than an IP/mask.
pub fn is_prefix_list_name(s: &str) -> bool {
    s.starts_with("pl:")
}

/// Checks the form of a prefix list name: `pl:{scope}:{list}:{key}` with the scope empty or
/// `system`, and `list` and `key` not empty (a key may be subdivided with more colons).
pub fn prefix_list_name_problem(s: &str) -> Option<String> {
    let rest = s.strip_prefix("pl::").or_else(|| s.strip_prefix("pl:system:"));
    let ok = rest.is_some_and(|r| match r.split_once(':') {
        Some((list, key)) => !list.is_empty() && !key.is_empty(),
        None => false,
    });
    (!ok).then(|| format!("{s:?} is not a prefix list name (pl:system:<list>:<key> or pl::<list>:<key>)"))
}

impl From<FirewallRules> for WrittenRules {
    fn from(r: FirewallRules) -> WrittenRules {
        WrittenRules {
            inbound: r.inbound.into_iter().map(RuleEntry::Rule).collect(),
            inbound_policy: r.inbound_policy,
            outbound: r.outbound.into_iter().map(RuleEntry::Rule).collect(),
            outbound_policy: r.outbound_policy,
        }
    }
}

impl WrittenRules {
    /// The rule sets referenced, in order of first reference, each once.
    pub fn ruleset_ids(&self) -> Vec<i64> {
        let mut out = Vec::new();
        for e in self.inbound.iter().chain(&self.outbound) {
            if let RuleEntry::Set(r) = e
                && !out.contains(&r.ruleset)
            {
                out.push(r.ruleset);
            }
        }
        out
    }

    /// The rules with every reference replaced by its set's rules (`sets` answers a set's
    /// rules; a set it does not know contributes nothing). Prefix-list names stay as they are.
    pub fn expand_sets(&self, sets: &dyn Fn(i64) -> Option<Vec<Rule>>) -> FirewallRules {
        let flat = |entries: &[RuleEntry]| -> Vec<Rule> {
            let mut out = Vec::with_capacity(entries.len());
            for e in entries {
                match e {
                    RuleEntry::Rule(r) => out.push(r.clone()),
                    RuleEntry::Set(s) => out.extend(sets(s.ruleset).unwrap_or_default()),
                }
            }
            out
        };
        FirewallRules {
            inbound: flat(&self.inbound),
            inbound_policy: self.inbound_policy,
            outbound: flat(&self.outbound),
            outbound_policy: self.outbound_policy,
        }
    }
}

/// Replaces every prefix-list name in the rules' addresses by the list's addresses of that
/// family (`lists` answers a name; a name it does not know contributes nothing). Duplicates
/// within one family of one rule are kept once.
pub fn expand_prefix_lists(rules: &mut FirewallRules, lists: &dyn Fn(&str) -> Option<PrefixAddresses>) {
    let family = |entries: &mut Option<Vec<String>>, v4: bool| {
        let Some(list) = entries else { return };
        if !list.iter().any(|a| is_prefix_list_name(a)) {
            return;
        }
        let mut out: Vec<String> = Vec::with_capacity(list.len());
        for a in list.iter() {
            if is_prefix_list_name(a) {
                let found = lists(a).unwrap_or_default();
                for x in if v4 { found.ipv4 } else { found.ipv6 } {
                    if !out.contains(&x) {
                        out.push(x);
                    }
                }
            } else if !out.contains(a) {
                out.push(a.clone());
            }
        }
        *list = out;
    };
    for r in rules.inbound.iter_mut().chain(rules.outbound.iter_mut()) {
        family(&mut r.addresses.ipv4, true);
        family(&mut r.addresses.ipv6, false);
    }
}

/// The direction a rule set's rules are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleSetType {
    Inbound,
    Outbound,
}

impl RuleSetType {
    pub fn name(self) -> &'static str {
        match self {
            RuleSetType::Inbound => "inbound",
            RuleSetType::Outbound => "outbound",
        }
    }
    pub fn parse(s: &str) -> Option<RuleSetType> {
        match s {
            "inbound" => Some(RuleSetType::Inbound),
            "outbound" => Some(RuleSetType::Outbound),
            _ => None,
        }
    }
}

/// A rule set as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RuleSet {
    pub id: i64,
    pub label: String,
    pub description: String,
    #[serde(rename = "type")]
    pub kind: RuleSetType,
    pub rules: Vec<Rule>,
    /// Always false: nubis has no managed services that define rule sets.
    pub is_service_defined: bool,
    /// 1 at creation, one more at each change of the rules.
    pub version: i64,
    pub created: Timestamp,
    pub updated: Timestamp,
    /// Always null: a rule set still referenced is not deleted (see docs/decisions.md).
    pub deleted: Option<Timestamp>,
}

/// Filterable fields of the rule set list (the hosted document marks these filterable).
pub const RULESET_FILTERABLE: &[&str] = &["id", "label", "created"];

/// A prefix list as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PrefixList {
    pub id: i64,
    pub name: String,
    pub description: String,
    /// `public` for the lists nubis provides (`pl:system:...`).
    pub visibility: String,
    pub source_prefixlist_id: Option<i64>,
    pub ipv4: Vec<String>,
    pub ipv6: Vec<String>,
    pub version: i64,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub deleted: Option<Timestamp>,
}

/// Filterable fields of the prefix list list.
pub const PREFIX_LIST_FILTERABLE: &[&str] = &["name"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::firewall::{RuleAddresses, RuleProtocol};

    fn rule(v4: &[&str]) -> Rule {
        Rule {
            action: Action::Accept,
            protocol: RuleProtocol::Tcp,
            ports: Some("80".into()),
            addresses: RuleAddresses { ipv4: Some(v4.iter().map(|s| s.to_string()).collect()), ipv6: None },
            label: None,
            description: None,
        }
    }

    #[test]
    fn references_expand_in_place_and_unknown_sets_give_nothing() {
        let w = WrittenRules {
            inbound: vec![
                RuleEntry::Rule(rule(&["10.0.0.1/32"])),
                RuleEntry::Set(RuleSetRef { ruleset: 7 }),
                RuleEntry::Set(RuleSetRef { ruleset: 8 }),
                RuleEntry::Rule(rule(&["10.0.0.3/32"])),
            ],
            inbound_policy: Action::Drop,
            outbound: vec![],
            outbound_policy: Action::Accept,
        };
        assert_eq!(w.ruleset_ids(), vec![7, 8]);
        let e = w.expand_sets(&|id| (id == 7).then(|| vec![rule(&["10.0.0.2/32"]), rule(&["10.0.0.9/32"])]));
        let firsts: Vec<&str> = e.inbound.iter().map(|r| r.addresses.ipv4.as_ref().unwrap()[0].as_str()).collect();
        assert_eq!(firsts, ["10.0.0.1/32", "10.0.0.2/32", "10.0.0.9/32", "10.0.0.3/32"]);
    }

    #[test]
    fn written_rules_read_references_and_rules_alike() {
        let v = serde_json::json!({"inbound": [{"ruleset": 3}, {"action": "DROP", "protocol": "UDP",
            "ports": null, "addresses": {"ipv4": ["0.0.0.0/0"]}, "label": null}],
            "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT"});
        let w: WrittenRules = serde_json::from_value(v).unwrap();
        assert_eq!(w.inbound[0], RuleEntry::Set(RuleSetRef { ruleset: 3 }));
        assert!(matches!(w.inbound[1], RuleEntry::Rule(_)));
        assert_eq!(serde_json::to_value(&w).unwrap()["inbound"][0], serde_json::json!({"ruleset": 3}));
    }

    #[test]
    fn prefix_lists_expand_by_family() {
        let mut r = FirewallRules {
            inbound: vec![rule(&["pl:system:a:b", "10.0.0.1/32", "pl:system:none:x"])],
            inbound_policy: Action::Drop,
            outbound: vec![],
            outbound_policy: Action::Accept,
        };
        r.inbound[0].addresses.ipv6 = Some(vec!["pl:system:a:b".into()]);
        expand_prefix_lists(&mut r, &|n| {
            (n == "pl:system:a:b")
                .then(|| PrefixAddresses { ipv4: vec!["192.0.2.0/24".into()], ipv6: vec!["2001:db8::/64".into()] })
        });
        assert_eq!(r.inbound[0].addresses.ipv4.as_deref().unwrap(), ["192.0.2.0/24", "10.0.0.1/32"]);
        assert_eq!(r.inbound[0].addresses.ipv6.as_deref().unwrap(), ["2001:db8::/64"]);
    }

    #[test]
    fn prefix_list_names() {
        assert!(prefix_list_name_problem("pl:system:public:us-east").is_none());
        assert!(prefix_list_name_problem("pl::vpcs:1234").is_none());
        assert!(prefix_list_name_problem("pl::vpcs:<current>").is_none());
        for bad in ["pl:", "pl:system:", "pl:other:a:b", "pl::a", "pl:system:a:"] {
            assert!(prefix_list_name_problem(bad).is_some(), "{bad}");
        }
    }
}
