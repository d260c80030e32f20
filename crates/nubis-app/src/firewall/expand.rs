//! Prefix lists (`/networking/prefixlists`) and what a firewall enforces: its written rules
//! with rule sets and prefix lists expanded (`.../rules/expansion`, the balancers' data plane,
//! the netns nftables).
//!
//! Prefix lists are what nubis itself knows, from its configuration, read-only and `public`:
//! `pl:system:private:ipv4` (id 1, `network.private_ipv4`, the private addresses of instances)
//! and, for each configured region in configuration order (ids 2, 3, ...),
//! `pl:system:public:<region>` (its public IPv4 pool, its IPv6 pool and its IPv6 range block).
//! Account lists (`pl::...`) are not offered: a rule naming a list nubis does not have is refused.

use std::sync::OnceLock;

use nubis_model::firewall::{
    ExpandedRules, FirewallRules, PrefixAddresses, PrefixList, Rule, RuleEntry, RuleSetType, WrittenRules,
    expand_prefix_lists, is_prefix_list_name,
};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::firewalls::FirewallRow;

use super::history::fingerprint;
use crate::App;
use crate::auth::{Actor, Op};

/// When this process first listed its prefix lists (they change only with the configuration,
/// which a restart applies).
static LISTED: OnceLock<Timestamp> = OnceLock::new();

/// Checks, inside the write, that every rule set the rules reference is a set of the account
/// for the same direction. Errors name `{prefix}inbound[i].ruleset`.
pub(crate) async fn check_references(
    tx: &mut Tx<'_>,
    account_id: i64,
    rules: &WrittenRules,
    prefix: &str,
) -> Result<()> {
    let mut errors = Vec::new();
    for (key, entries, want) in
        [("inbound", &rules.inbound, RuleSetType::Inbound), ("outbound", &rules.outbound, RuleSetType::Outbound)]
    {
        for (i, e) in entries.iter().enumerate() {
            let RuleEntry::Set(r) = e else { continue };
            let field = format!("{prefix}{key}[{i}].ruleset");
            match tx.ruleset_lock(r.ruleset, account_id).await? {
                None => errors.push(FieldError::new(field, format!("Rule set {} not found", r.ruleset))),
                Some(s) if s.kind != want => errors.push(FieldError::new(
                    field,
                    format!("Rule set '{}' ({}) is for {} rules", s.label, s.id, s.kind.name()),
                )),
                Some(_) => {}
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(Error::Invalid(errors)) }
}

/// Adds an error for every prefix-list name of the rule that names none of `lists`.
pub(crate) fn check_prefix_names(lists: &[PrefixList], p: &mut Problems, r: &Rule, path: &str) {
    for (key, family) in [("ipv4", &r.addresses.ipv4), ("ipv6", &r.addresses.ipv6)] {
        for (j, a) in family.iter().flatten().enumerate() {
            if is_prefix_list_name(a) && !lists.iter().any(|l| &l.name == a) {
                p.add(format!("{path}.addresses.{key}[{j}]"), format!("Prefix list {a} not found"));
            }
        }
    }
}

/// [`check_prefix_names`] for every rule of a firewall's written rules, as errors.
pub(crate) fn check_written_prefix_names(lists: &[PrefixList], rules: &WrittenRules, prefix: &str) -> Result<()> {
    let mut p = Problems::new();
    for (key, entries) in [("inbound", &rules.inbound), ("outbound", &rules.outbound)] {
        for (i, e) in entries.iter().enumerate() {
            if let RuleEntry::Rule(r) = e {
                check_prefix_names(lists, &mut p, r, &format!("{prefix}{key}[{i}]"));
            }
        }
    }
    p.finish()
}

impl App {
    /// The prefix lists nubis provides (see the module documentation).
    pub(crate) fn prefix_lists(&self) -> Vec<PrefixList> {
        let when = *LISTED.get_or_init(Timestamp::now);
        let list = |id: i64, name: String, description: String, ipv4: Vec<String>, ipv6: Vec<String>| PrefixList {
            id,
            name,
            description,
            visibility: "public".into(),
            source_prefixlist_id: None,
            ipv4,
            ipv6,
            version: 1,
            created: when,
            updated: when,
            deleted: None,
        };
        let mut out = vec![list(
            1,
            "pl:system:private:ipv4".into(),
            "The private IPv4 addresses of instances".into(),
            vec![self.config.network.private_ipv4.clone()],
            Vec::new(),
        )];
        for (i, r) in self.config.regions.iter().enumerate() {
            out.push(list(
                i as i64 + 2,
                format!("pl:system:public:{}", r.id),
                format!("The public addresses of region {}", r.id),
                vec![r.public_ipv4.clone()],
                vec![r.ipv6_pool.clone(), r.ipv6_ranges.clone()],
            ));
        }
        out
    }

    /// Rules with rule sets already expanded, with prefix lists expanded too.
    fn expand_lists(&self, mut rules: FirewallRules) -> FirewallRules {
        let lists = self.prefix_lists();
        expand_prefix_lists(&mut rules, &|name| {
            lists
                .iter()
                .find(|l| l.name == name)
                .map(|l| PrefixAddresses { ipv4: l.ipv4.clone(), ipv6: l.ipv6.clone() })
        });
        rules
    }

    /// What a firewall enforces: its rules with rule sets and prefix lists expanded.
    pub(crate) async fn firewall_enforced_rules(&self, written: &WrittenRules) -> Result<FirewallRules> {
        Ok(self.expand_lists(self.store.firewall_rules_expand_sets(written).await?))
    }

    /// Every load balancer with an enabled firewall, with what that firewall enforces, in
    /// balancer id order (the data plane's desired state).
    pub(crate) async fn active_balancer_firewalls(&self) -> Result<Vec<(i64, FirewallRules)>> {
        let active = self.store.active_balancer_firewalls().await?;
        Ok(active.into_iter().map(|(id, rules)| (id, self.expand_lists(rules))).collect())
    }

    /// What the enabled firewall of an instance enforces, if it has one (the netns nftables).
    pub(crate) async fn instance_active_firewall_rules(&self, instance_id: i64) -> Result<Option<FirewallRules>> {
        let rules = self.store.instance_active_firewall_rules(instance_id).await?;
        Ok(rules.map(|r| self.expand_lists(r)))
    }

    /// After a committed change that can change what instances' firewalls enforce without a
    /// write to the tables the netns runtime watches (a rule set's rules): reconcile again.
    pub(crate) fn instance_firewalls_changed(&self) {
        if let Some(n) = &self.netns {
            n.kick();
        }
    }

    /// `GET .../rules/expansion`: the rules with rule sets and prefix lists expanded, with the
    /// firewall's rule version and fingerprint.
    pub async fn firewall_rules_expansion_get(&self, actor: &Actor, id: i64) -> Result<ExpandedRules> {
        let f = self.lookup_for::<FirewallRow>(actor, Op::FirewallRulesExpansionGet, id).await?.into_inner();
        Ok(ExpandedRules {
            rules: self.firewall_enforced_rules(&f.rules).await?,
            version: f.rules_version,
            fingerprint: fingerprint(&f.rules),
        })
    }

    pub async fn prefix_list_list(&self, actor: &Actor) -> Result<Vec<PrefixList>> {
        self.authorize(actor, Op::PrefixListList).await?;
        Ok(self.prefix_lists())
    }

    pub async fn prefix_list_get(&self, actor: &Actor, id: i64) -> Result<PrefixList> {
        self.authorize(actor, Op::PrefixListGet).await?;
        self.prefix_lists().into_iter().find(|l| l.id == id).ok_or(Error::NotFound)
    }
}
