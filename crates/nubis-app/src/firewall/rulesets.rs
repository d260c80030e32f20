//! Firewall rule sets (`/networking/firewalls/rulesets`): named, ordered rules for one direction
//! that firewalls reference (`{"ruleset": <id>}` in `inbound` or `outbound`).
//!
//! - Label: the firewall label's rules, unique among the account's rule sets; `type` `inbound` or
//!   `outbound`, fixed at creation; `description` 1..255 characters; `rules` as a firewall's
//!   rules (at most 25, prefix-list names allowed, no references to other sets).
//! - A change of the rules adds one to `version` and republishes every service whose enabled
//!   firewall references the set (the balancers' desired state, the netns runtime).
//! - Delete is refused while a firewall references the set (the hosted document: "Deletes a Rule
//!   Set that ... is not referenced by any Cloud Firewall"), so `deleted` is always null.
//! - Reads are for every user of the account; writes for unrestricted users (a set has no grant
//!   of its own, and a change reaches every firewall that references it).

use nubis_model::event::{EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::firewall::{
    LABEL_LEN, RuleSet, RuleSetType, parse_ruleset_rules, rule_request_schema, validate_label,
};
use nubis_model::page::{Page, PageRequest};
use nubis_model::schema::{array, one_of, or_null, pattern, schema, text};
use nubis_model::validate::DOTTED_LABEL_PATTERN;
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::firewall_rulesets::{NewRuleSet, RuleSetChanges, RuleSetRow};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa::openapi::Schema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

const LABEL_TAKEN: &str = "Label must be unique among your rule sets";
const DESCRIPTION_LEN: (usize, usize) = (1, 255);

/// `POST /v4/networking/firewalls/rulesets`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RuleSetCreate {
    /// The firewall label's rules; unique among the account's rule sets.
    #[schema(required = true, schema_with = label_schema)]
    pub label: Option<String>,
    /// 1-255 characters.
    #[schema(schema_with = description_schema)]
    pub description: Option<String>,
    /// `inbound` or `outbound`: the direction whose rules reference the set.
    #[serde(rename = "type")]
    #[schema(required = true, schema_with = type_schema)]
    pub kind: Option<String>,
    /// The rules, in order (at most 25).
    #[schema(required = true, schema_with = rules_schema)]
    pub rules: Option<Value>,
}

/// `PUT /v4/networking/firewalls/rulesets/{ruleset_id}`: `label`, `description` and `rules`
/// (a field left out keeps its value). `type` cannot change; read-only fields are ignored.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct RuleSetUpdate {
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = description_schema)]
    pub description: Option<String>,
    /// Only the set's own type is accepted (null: unchanged).
    #[serde(rename = "type")]
    #[schema(schema_with = type_update_schema)]
    pub kind: Option<String>,
    #[schema(schema_with = rules_schema)]
    pub rules: Option<Value>,
}

fn label_schema() -> Schema {
    schema(pattern(LABEL_LEN.0, LABEL_LEN.1, DOTTED_LABEL_PATTERN))
}
fn description_schema() -> Schema {
    schema(or_null(text(DESCRIPTION_LEN.0, DESCRIPTION_LEN.1)))
}
fn type_schema() -> Schema {
    schema(one_of(&["inbound", "outbound"]))
}
fn type_update_schema() -> Schema {
    schema(or_null(one_of(&["inbound", "outbound"])))
}
fn rules_schema() -> Schema {
    schema(array(rule_request_schema(), Some(nubis_model::firewall::MAX_RULES)))
}

pub(crate) fn ruleset_view(r: &RuleSetRow) -> RuleSet {
    RuleSet {
        id: r.id,
        label: r.label.clone(),
        description: r.description.clone(),
        kind: r.kind,
        rules: r.rules.clone(),
        is_service_defined: false,
        version: r.version,
        created: r.created,
        updated: r.updated,
        deleted: None,
    }
}

fn ruleset_event(actor: &Actor, action: &'static str, r: &RuleSetRow) -> NewEvent {
    let entity =
        EventEntity::new("firewall_ruleset", r.id, &r.label, format!("/v4/networking/firewalls/rulesets/{}", r.id));
    event(actor, action, entity).build()
}

fn check_label(p: &mut Problems, label: &str) {
    if let Some(reason) = validate_label(label) {
        p.add("label", reason);
    }
}

fn check_description(p: &mut Problems, d: Option<&str>) {
    if let Some(d) = d
        && !(DESCRIPTION_LEN.0..=DESCRIPTION_LEN.1).contains(&d.chars().count())
    {
        p.add("description", format!("Length must be {}-{} characters", DESCRIPTION_LEN.0, DESCRIPTION_LEN.1));
    }
}

impl App {
    /// Parses and checks a rule set's `rules` (prefix-list names must name a list nubis has).
    fn ruleset_rules(&self, p: &mut Problems, v: &Value) -> Option<Vec<nubis_model::firewall::Rule>> {
        match parse_ruleset_rules(v, "rules") {
            Ok(rules) => {
                let lists = self.prefix_lists();
                for (i, r) in rules.iter().enumerate() {
                    super::expand::check_prefix_names(&lists, p, r, &format!("rules[{i}]"));
                }
                Some(rules)
            }
            Err(errors) => {
                let _ = p.absorb(Err(Error::Invalid(errors)));
                None
            }
        }
    }

    pub async fn firewall_ruleset_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<RuleSet>> {
        self.authorize(actor, Op::FirewallRulesetList).await?;
        let (rows, total) = self.store.rulesets_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(ruleset_view).collect(), page, total))
    }

    pub async fn firewall_ruleset_get(&self, actor: &Actor, id: i64) -> Result<RuleSet> {
        self.authorize(actor, Op::FirewallRulesetGet).await?;
        self.store.ruleset_get(actor.account_id(), id).await?.as_ref().map(ruleset_view).ok_or(Error::NotFound)
    }

    /// Creates a rule set (version 1). Event `firewall_ruleset_create`.
    pub async fn firewall_ruleset_create(&self, actor: &Actor, input: RuleSetCreate) -> Result<RuleSet> {
        self.authorize(actor, Op::FirewallRulesetCreate).await?;
        let mut p = Problems::new();
        match &input.label {
            None => p.add("label", "label is required"),
            Some(l) => check_label(&mut p, l),
        }
        check_description(&mut p, input.description.as_deref());
        let kind = match input.kind.as_deref() {
            None => {
                p.add("type", "type is required");
                None
            }
            Some(t) => {
                let k = RuleSetType::parse(t);
                p.check(k.is_some(), "type", "Must be inbound or outbound");
                k
            }
        };
        let rules = match &input.rules {
            None => {
                p.add("rules", "rules is required");
                None
            }
            Some(v) => self.ruleset_rules(&mut p, v),
        };
        p.finish()?;
        let (Some(label), Some(kind), Some(rules)) = (input.label.as_deref(), kind, rules) else {
            return Err(Error::internal("rule set create passed its checks without a value"));
        };
        let description = input.description.as_deref().unwrap_or("");
        let rules = &rules;
        let r = self
            .write(|tx| {
                Box::pin(async move {
                    let r = tx
                        .ruleset_insert(&NewRuleSet {
                            account_id: actor.account_id(),
                            label,
                            description,
                            kind,
                            rules,
                            created: Timestamp::now(),
                        })
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(&ruleset_event(actor, "firewall_ruleset_create", &r)).await?;
                    Ok(r)
                })
            })
            .await?;
        Ok(ruleset_view(&r))
    }

    /// Changes label, description and rules. New rules reach every firewall that references
    /// the set: the services they protect are republished. Event `firewall_ruleset_update`.
    pub async fn firewall_ruleset_update(&self, actor: &Actor, id: i64, input: RuleSetUpdate) -> Result<RuleSet> {
        self.authorize(actor, Op::FirewallRulesetUpdate).await?;
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            check_label(&mut p, l);
        }
        check_description(&mut p, input.description.as_deref());
        let rules = match &input.rules {
            None | Some(Value::Null) => None,
            Some(v) => self.ruleset_rules(&mut p, v),
        };
        p.finish()?;
        let (input, rules) = (&input, &rules);
        let (r, balancers) = self
            .write(|tx| {
                Box::pin(async move {
                    let before = tx.ruleset_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    if let Some(t) = input.kind.as_deref()
                        && t != before.kind.name()
                    {
                        return Err(Error::invalid("type", "The type of a rule set cannot be changed"));
                    }
                    let changes = RuleSetChanges {
                        label: input.label.as_deref(),
                        description: input.description.as_deref(),
                        rules: rules.as_deref(),
                    };
                    let r = tx
                        .ruleset_update(id, &changes, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(&ruleset_event(actor, "firewall_ruleset_update", &r)).await?;
                    let balancers = if rules.is_some() { tx.ruleset_balancers(id).await? } else { Vec::new() };
                    Ok((r, balancers))
                })
            })
            .await?;
        if rules.is_some() {
            self.balancer_firewalls_changed(&balancers);
            self.instance_firewalls_changed();
        }
        Ok(ruleset_view(&r))
    }

    /// Deletes a rule set no firewall references. Event `firewall_ruleset_delete`.
    pub async fn firewall_ruleset_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::FirewallRulesetDelete).await?;
        self.write(|tx| {
            Box::pin(async move {
                let r = tx.ruleset_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let users = tx.ruleset_firewalls(id).await?;
                if !users.is_empty() {
                    let names: Vec<String> = users.iter().map(|(id, label)| format!("'{label}' ({id})")).collect();
                    return Err(Error::Invalid(vec![FieldError::general(format!(
                        "Rule set '{}' is referenced by firewall {}; remove it from their rules first",
                        r.label,
                        names.join(", ")
                    ))]));
                }
                tx.ruleset_delete(id).await?;
                tx.event_insert(&ruleset_event(actor, "firewall_ruleset_delete", &r)).await?;
                Ok(())
            })
        })
        .await
    }
}
