//! Firewall rule sets (migration 0033), the references firewalls make to them
//! (`firewall_ruleset_refs`, kept with a firewall's rules), and the expansion of a firewall's
//! written rules into plain rules with each referenced set's rules in place.

use std::collections::HashMap;

use nubis_model::filter::Filter;
use nubis_model::firewall::{FirewallRules, Rule, RuleSetType, WrittenRules};
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Handle, Row, query};
use crate::firewalls::json;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct RuleSetRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub description: String,
    pub kind: RuleSetType,
    pub rules: Vec<Rule>,
    /// 1 at creation, one more at each change of the rules.
    pub version: i64,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub struct NewRuleSet<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub description: &'a str,
    pub kind: RuleSetType,
    pub rules: &'a [Rule],
    pub created: Timestamp,
}

/// The changeable fields of a rule set; `None` leaves a field as it is. New rules add one to
/// the version.
#[derive(Default)]
pub struct RuleSetChanges<'a> {
    pub label: Option<&'a str>,
    pub description: Option<&'a str>,
    pub rules: Option<&'a [Rule]>,
}

const COLS: &str = "id, account_id, label, description, kind, rules, version, created, updated";

fn rules_of(text: &str) -> Result<Vec<Rule>> {
    serde_json::from_str(text).map_err(|e| Error::internal(format!("stored rule set rules: {e}")))
}

fn ruleset(r: &Row) -> Result<RuleSetRow> {
    let kind = r.str("kind")?;
    Ok(RuleSetRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        description: r.str("description")?,
        kind: RuleSetType::parse(&kind).ok_or_else(|| Error::internal(format!("rule set type {kind}")))?,
        rules: rules_of(&r.str("rules")?)?,
        version: r.i64("version")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

/// The rules of the given rule sets, by id (read on `h`).
async fn rules_by_id(h: Handle<'_>, ids: &[i64]) -> Result<HashMap<i64, Vec<Rule>>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let marks: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    let mut q = query(format!("SELECT id, rules FROM firewall_rulesets WHERE id IN ({})", marks.join(", ")));
    for id in ids {
        q = q.bind(*id);
    }
    let rows = q.fetch_all(h).await?;
    rows.iter().map(|r| Ok((r.i64("id")?, rules_of(&r.str("rules")?)?))).collect()
}

/// Written rules with each reference replaced by its set's rules (prefix-list names stay).
pub(crate) async fn expand_sets(h: Handle<'_>, written: &WrittenRules) -> Result<FirewallRules> {
    let sets = rules_by_id(h, &written.ruleset_ids()).await?;
    Ok(written.expand_sets(&|id| sets.get(&id).cloned()))
}

impl Tx<'_> {
    pub async fn ruleset_insert(&mut self, n: &NewRuleSet<'_>) -> Result<RuleSetRow> {
        let sql = format!(
            "INSERT INTO firewall_rulesets (account_id, label, description, kind, rules, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(n.account_id)
            .bind(n.label)
            .bind(n.description)
            .bind(n.kind.name())
            .bind(json(n.rules)?)
            .bind(n.created)
            .fetch_one(self.h())
            .await?;
        ruleset(&row)
    }

    /// A rule set of the account, read inside the transaction with its row lock taken, so that
    /// a change of the set and a firewall starting to reference it (or its delete) conflict.
    pub async fn ruleset_lock(&mut self, id: i64, account_id: i64) -> Result<Option<RuleSetRow>> {
        let sql = format!(
            "UPDATE firewall_rulesets SET updated = updated WHERE id = $1 AND account_id = $2 RETURNING {COLS}"
        );
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(ruleset).transpose()
    }

    pub async fn ruleset_update(&mut self, id: i64, c: &RuleSetChanges<'_>, now: Timestamp) -> Result<RuleSetRow> {
        let sql = format!(
            "UPDATE firewall_rulesets SET label = COALESCE($2, label), description = COALESCE($3, description), \
             rules = COALESCE($4, rules), version = version + $5, updated = $6 WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(c.label)
            .bind(c.description)
            .bind(c.rules.map(json).transpose()?)
            .bind(i64::from(c.rules.is_some()))
            .bind(now)
            .fetch_one(self.h())
            .await?;
        ruleset(&row)
    }

    pub async fn ruleset_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM firewall_rulesets WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// The firewalls that reference the rule set, as `(id, label)`, in id order.
    pub async fn ruleset_firewalls(&mut self, ruleset_id: i64) -> Result<Vec<(i64, String)>> {
        let rows = query(
            "SELECT f.id, f.label FROM firewall_ruleset_refs r JOIN firewalls f ON f.id = r.firewall_id \
             WHERE r.ruleset_id = $1 ORDER BY f.id",
        )
        .bind(ruleset_id)
        .fetch_all(self.h())
        .await?;
        rows.iter().map(|r| Ok((r.i64("id")?, r.str("label")?))).collect()
    }

    /// The load balancers protected by a firewall that references the rule set.
    pub async fn ruleset_balancers(&mut self, ruleset_id: i64) -> Result<Vec<i64>> {
        query(
            "SELECT DISTINCT d.nodebalancer_id FROM firewall_ruleset_refs r \
             JOIN firewall_devices d ON d.firewall_id = r.firewall_id \
             WHERE r.ruleset_id = $1 AND d.nodebalancer_id IS NOT NULL ORDER BY d.nodebalancer_id",
        )
        .bind(ruleset_id)
        .fetch_column_i64(self.h())
        .await
    }

    /// Records which rule sets a firewall's rules reference (after its rules were written).
    pub(crate) async fn firewall_ruleset_refs_set(&mut self, firewall_id: i64, rules: &WrittenRules) -> Result<()> {
        query("DELETE FROM firewall_ruleset_refs WHERE firewall_id = $1").bind(firewall_id).execute(self.h()).await?;
        for id in rules.ruleset_ids() {
            query("INSERT INTO firewall_ruleset_refs (firewall_id, ruleset_id) VALUES ($1, $2)")
                .bind(firewall_id)
                .bind(id)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// A firewall's rules with rule sets expanded, read inside the transaction.
    pub async fn firewall_rules_expand_sets(&mut self, written: &WrittenRules) -> Result<FirewallRules> {
        expand_sets(self.h(), written).await
    }
}

const RULESET_LIST: Listing<'static> = Listing {
    select: "SELECT s.id, s.account_id, s.label, s.description, s.kind, s.rules, s.version, s.created, s.updated \
             FROM firewall_rulesets s",
    from: "FROM firewall_rulesets s",
    scope: "s.account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "s.id", kind: ColKind::Int },
        Column { path: "label", expr: "s.label", kind: ColKind::Text },
        Column { path: "created", expr: "s.created", kind: ColKind::Text },
    ],
    order: "s.id",
    kept_count: Some("firewall_rulesets"),
    indexed: &["label", "created"],
};

impl Store {
    /// One rule set of an account.
    pub async fn ruleset_get(&self, account_id: i64, id: i64) -> Result<Option<RuleSetRow>> {
        let sql = format!("SELECT {COLS} FROM firewall_rulesets WHERE id = $1 AND account_id = $2");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(ruleset).transpose()
    }

    /// One page of an account's rule sets and how many it has.
    pub async fn rulesets_page(
        &self,
        account_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<RuleSetRow>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&RULESET_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(ruleset).collect::<Result<_>>()?, total))
    }

    /// A firewall's rules with rule sets expanded.
    pub async fn firewall_rules_expand_sets(&self, written: &WrittenRules) -> Result<FirewallRules> {
        expand_sets(self.r(), written).await
    }
}
