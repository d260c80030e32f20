//! Firewalls (spec 2.7, 3.1, 4.9): create (with devices), list, get, update (label, tags and
//! status only), delete, and the rules. Devices (assignments to instances and load balancers)
//! are in [`devices`].
//!
//! Rules every write follows, inside its one write transaction:
//! - A service has at most one enabled firewall: enabling a firewall, or assigning an enabled
//!   firewall to a service, is refused when the service already has another enabled one (checked
//!   by reads in the transaction and backed by a unique index, see migration 0005).
//! - Every write on a firewall is refused while one of its instances is in live migration
//!   (create with such an instance, update, rules update, device add and remove, delete).
//! - Status: `enabled` at creation, `disabled` and back through update (events
//!   `firewall_disable` / `firewall_enable`), `deleted` only through delete (the record is gone).

mod devices;
mod expand;
mod history;
mod rulesets;

use nubis_model::event::{EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::firewall::{
    DeviceType, Firewall, FirewallStatus, LABEL_LEN, VersionedRules, WrittenRules, parse_rules_update,
    parse_written_rules, rules_request_schema, validate_label,
};
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::page::{Page, PageRequest};
use nubis_model::schema::{array, one_of, or_null, pattern, schema};
use nubis_model::validate::{DOTTED_LABEL_PATTERN, tag_problem};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::firewalls::{FirewallChanges, FirewallRow, NewFirewall};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa::openapi::Schema;

pub use devices::DeviceCreate;
pub(crate) use devices::{attach_at_creation, attach_device, attach_devices, detach_device};
pub use history::{DefaultFirewallIdsUpdate, FirewallSettingsUpdate, templates};
pub use rulesets::{RuleSetCreate, RuleSetUpdate};

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

const LABEL_TAKEN: &str = "Label must be unique among your Cloud Firewalls";

/// `POST /v4/networking/firewalls`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct FirewallCreate {
    /// 3-32 characters: letters, digits, `-`, `_`, `.`; begins and ends with a letter or digit;
    /// no `--`, `__` or `..`; unique among the account's firewalls.
    #[schema(required = true, schema_with = label_schema)]
    pub label: Option<String>,
    /// `inbound`, `inbound_policy`, `outbound`, `outbound_policy` (both policies required); at
    /// most 25 rules across both directions.
    #[schema(required = true, schema_with = create_rules_schema)]
    pub rules: Option<Value>,
    /// Services to assign the firewall to (read_write access to each is required).
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub devices: Option<CreateDevices>,
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
}

/// The `devices` of a create request.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CreateDevices {
    pub instances: Option<Vec<i64>>,
    /// At most one load balancer.
    #[schema(schema_with = one_balancer_schema)]
    pub nodebalancers: Option<Vec<i64>>,
}

/// `PUT /v4/networking/firewalls/{firewall_id}`: `label`, `tags` and `status` (`enabled` or
/// `disabled`). Rules (`PUT .../rules`), devices (`.../devices`) and the status `deleted`
/// (`DELETE`) are refused here. Read-only fields of the record are ignored.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct FirewallUpdate {
    #[schema(schema_with = optional_label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = nubis_model::schema::tags)]
    pub tags: Option<Vec<String>>,
    /// `enabled` or `disabled`.
    #[schema(schema_with = status_schema)]
    pub status: Option<String>,
    /// Refused: use `PUT .../rules`.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub rules: Option<Value>,
    /// Refused: use the devices operations.
    #[schema(schema_with = nubis_model::schema::null_only)]
    pub devices: Option<Value>,
}

pub(crate) fn firewall_entity(f: &FirewallRow) -> EventEntity {
    EventEntity::new("firewall", f.id, &f.label, format!("/v4/networking/firewalls/{}", f.id))
}

fn firewall_event(actor: &Actor, action: &'static str, f: &FirewallRow) -> NewEvent {
    event(actor, action, firewall_entity(f)).visible_with(GrantKind::Firewall, f.id).build()
}

pub(crate) fn firewall_view(f: &FirewallRow) -> Firewall {
    Firewall {
        id: f.id,
        label: f.label.clone(),
        created: f.created,
        updated: f.updated,
        status: f.status,
        rules: history::versioned(&f.rules, f.rules_version),
        tags: f.tags.clone(),
    }
}

fn label_schema() -> Schema {
    schema(pattern(LABEL_LEN.0, LABEL_LEN.1, DOTTED_LABEL_PATTERN))
}

fn optional_label_schema() -> Schema {
    schema(or_null(pattern(LABEL_LEN.0, LABEL_LEN.1, DOTTED_LABEL_PATTERN)))
}

fn create_rules_schema() -> Schema {
    schema(rules_request_schema(true))
}

/// The body of `PUT .../rules` as documented (the handler reads it as JSON and checks it with
/// `parse_rules_update`): an omitted policy keeps the current one.
pub struct RulesUpdate;

impl utoipa::PartialSchema for RulesUpdate {
    fn schema() -> utoipa::openapi::RefOr<Schema> {
        schema(rules_request_schema(false)).into()
    }
}

impl ToSchema for RulesUpdate {}

fn one_balancer_schema() -> Schema {
    schema(or_null(array(json!({"type": "integer", "format": "int64"}), Some(1))))
}

fn status_schema() -> Schema {
    schema(or_null(one_of(&["enabled", "disabled"])))
}

fn check_label(p: &mut Problems, label: &str) {
    if let Some(reason) = validate_label(label) {
        p.add("label", reason);
    }
}

fn check_tags(p: &mut Problems, tags: Option<&Vec<String>>) {
    for (i, t) in tags.into_iter().flatten().enumerate() {
        if let Some(reason) = tag_problem(t) {
            p.add(format!("tags[{i}]"), reason);
        }
    }
}

/// Refuses any change of a firewall while one of its instances is in live migration (spec 4.9
/// and 7), naming the instances. `field` is where the error goes (null for the firewall's own
/// operations).
pub(crate) async fn refuse_live_migration(tx: &mut Tx<'_>, f: &FirewallRow, field: Option<&str>) -> Result<()> {
    let moving = tx.firewall_instances_in_live_migration(f.id).await?;
    if moving.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = moving.iter().map(|(id, label)| format!("'{label}' ({id})")).collect();
    let reason = format!(
        "Firewall '{}' is assigned to instance {} in live migration; firewall changes are refused until the \
         migration completes",
        f.label,
        names.join(", ")
    );
    Err(Error::Invalid(vec![match field {
        Some(field) => FieldError::new(field, reason),
        None => FieldError::general(reason),
    }]))
}

/// A checked create request.
struct ValidCreate {
    label: String,
    rules: WrittenRules,
    tags: Vec<String>,
    instances: Vec<i64>,
    nodebalancers: Vec<i64>,
}

impl App {
    pub async fn firewall_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Firewall>> {
        self.authorize(actor, Op::FirewallList).await?;
        let (rows, results) = self
            .store
            .firewalls_page(actor.account_id(), Self::grant_user(actor), None, filter, page.page, page.page_size)
            .await?;
        Ok(Page::new(rows.iter().map(firewall_view).collect(), page, results))
    }

    pub async fn firewall_get(&self, actor: &Actor, id: i64) -> Result<Firewall> {
        Ok(firewall_view(&self.lookup_for::<FirewallRow>(actor, Op::FirewallGet, id).await?.into_inner()))
    }

    fn firewall_check_create(&self, input: &FirewallCreate) -> (Problems, Option<ValidCreate>) {
        let mut p = Problems::new();
        match &input.label {
            None => p.add("label", "label is required"),
            Some(l) => check_label(&mut p, l),
        }
        let rules = match &input.rules {
            None => {
                p.add("rules", "rules is required");
                None
            }
            Some(v) => match parse_written_rules(v, "rules", true, true) {
                Ok(r) => {
                    let _ = p.absorb(expand::check_written_prefix_names(&self.prefix_lists(), &r, "rules."));
                    Some(r)
                }
                Err(errors) => {
                    let _ = p.absorb(Err(Error::Invalid(errors)));
                    None
                }
            },
        };
        check_tags(&mut p, input.tags.as_ref());
        let devices = input.devices.as_ref();
        let instances = devices.and_then(|d| d.instances.clone()).unwrap_or_default();
        let nodebalancers = devices.and_then(|d| d.nodebalancers.clone()).unwrap_or_default();
        for (i, id) in instances.iter().enumerate() {
            if instances[..i].contains(id) {
                p.add(format!("devices.instances[{i}]"), format!("Instance {id} is listed more than once"));
            }
        }
        if nodebalancers.len() > 1 {
            p.add("devices.nodebalancers", "A firewall can be assigned to at most one load balancer");
        }
        let valid = match (&input.label, rules) {
            (Some(label), Some(rules)) => Some(ValidCreate {
                label: label.clone(),
                rules,
                tags: input.tags.clone().unwrap_or_default(),
                instances,
                nodebalancers,
            }),
            _ => None,
        };
        (p, valid)
    }

    /// Creates a firewall (`enabled`) and assigns it to the requested services, all in one
    /// transaction: any refused device refuses the whole request and leaves nothing behind.
    /// A restricted creator gets read_write on the new firewall.
    pub async fn firewall_create(&self, actor: &Actor, input: FirewallCreate) -> Result<Firewall> {
        self.authorize(actor, Op::FirewallCreate).await?;
        let (mut p, valid) = self.firewall_check_create(&input);
        let devices = input.devices.as_ref();
        for (i, id) in devices.and_then(|d| d.instances.as_ref()).into_iter().flatten().enumerate() {
            let field = format!("devices.instances[{i}]");
            self.check_device_access(actor, &mut p, DeviceType::Instance, *id, &field).await?;
        }
        for id in devices.and_then(|d| d.nodebalancers.as_ref()).into_iter().flatten().take(1) {
            let field = "devices.nodebalancers[0]";
            self.check_device_access(actor, &mut p, DeviceType::Nodebalancer, *id, field).await?;
        }
        p.finish()?;
        let v = valid.ok_or_else(|| Error::internal("firewall create passed its checks without a value"))?;
        let v = &v;
        let (f, balancers) = self
            .write(|tx| {
                Box::pin(async move {
                    expand::check_references(tx, actor.account_id(), &v.rules, "rules.").await?;
                    let f = tx
                        .firewall_insert(&NewFirewall {
                            account_id: actor.account_id(),
                            label: &v.label,
                            rules: &v.rules,
                            tags: &v.tags,
                            created: Timestamp::now(),
                        })
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(&firewall_event(actor, "firewall_create", &f)).await?;
                    if actor.restricted() {
                        tx.grant_set(actor.user_id(), GrantKind::Firewall, f.id, Some(Permission::ReadWrite)).await?;
                    }
                    let wanted: Vec<(DeviceType, i64, String)> = v
                        .instances
                        .iter()
                        .enumerate()
                        .map(|(i, id)| (DeviceType::Instance, *id, format!("devices.instances[{i}]")))
                        .chain(
                            v.nodebalancers
                                .iter()
                                .map(|id| (DeviceType::Nodebalancer, *id, "devices.nodebalancers[0]".into())),
                        )
                        .collect();
                    attach_devices(tx, actor, &f, &wanted).await?;
                    Ok((f, v.nodebalancers.clone()))
                })
            })
            .await?;
        self.balancer_firewalls_changed(&balancers);
        Ok(firewall_view(&f))
    }

    /// Changes label, tags and status. Enabling is refused while a service of the firewall has
    /// another enabled firewall; every change is refused while one of its instances is in live
    /// migration.
    pub async fn firewall_update(&self, actor: &Actor, id: i64, input: FirewallUpdate) -> Result<Firewall> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallUpdate, id).await?.into_inner();
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            check_label(&mut p, l);
        }
        check_tags(&mut p, input.tags.as_ref());
        if input.rules.as_ref().is_some_and(|r| !r.is_null()) {
            p.add("rules", "Rules cannot be changed here: use PUT /v4/networking/firewalls/{firewall_id}/rules");
        }
        if input.devices.as_ref().is_some_and(|d| !d.is_null()) {
            p.add("devices", "Devices cannot be changed here: use the firewall's devices operations");
        }
        let status = match input.status.as_deref() {
            None => None,
            Some("deleted") => {
                p.add("status", "A firewall is deleted with DELETE /v4/networking/firewalls/{firewall_id}");
                None
            }
            Some(s) => match FirewallStatus::parse(s) {
                Some(st) => Some(st),
                None => {
                    p.add("status", "Must be enabled or disabled");
                    None
                }
            },
        };
        p.finish()?;
        let input = &input;
        let (f, balancers) = self
            .write(|tx| {
                Box::pin(async move {
                    let before = tx.firewall_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_live_migration(tx, &before, None).await?;
                    let change = status.filter(|s| *s != before.status);
                    if change == Some(FirewallStatus::Enabled) {
                        let conflicts = tx.firewall_enable_conflicts(id).await?;
                        if !conflicts.is_empty() {
                            let errors = conflicts
                                .iter()
                                .map(|c| {
                                    FieldError::new(
                                        "status",
                                        format!(
                                            "Cannot enable: {} '{}' ({}) already has the active firewall '{}' ({}); a \
                                     service can have only one active firewall",
                                            devices::kind_text(c.kind),
                                            c.entity_label,
                                            c.entity_id,
                                            c.firewall_label,
                                            c.firewall_id
                                        ),
                                    )
                                })
                                .collect();
                            return Err(Error::Invalid(errors));
                        }
                    }
                    let now = Timestamp::now();
                    let changes =
                        FirewallChanges { label: input.label.as_deref(), tags: input.tags.as_deref(), status: change };
                    let f =
                        tx.firewall_update(id, &changes, now).await.map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    if input.label.is_some() || input.tags.is_some() {
                        tx.event_insert(&firewall_event(actor, "firewall_update", &f)).await?;
                    }
                    if let Some(s) = change {
                        // A unique violation here means a concurrent commit gave a service another
                        // active firewall: run again, and the check above refuses.
                        tx.firewall_devices_set_active(id, s == FirewallStatus::Enabled, now)
                            .await
                            .map_err(unique_retry)?;
                        let action = if s == FirewallStatus::Enabled { "firewall_enable" } else { "firewall_disable" };
                        tx.event_insert(&firewall_event(actor, action, &f)).await?;
                    }
                    let balancers = match change {
                        Some(_) => tx.firewall_balancer(id).await?.into_iter().collect(),
                        None => Vec::new(),
                    };
                    Ok((f, balancers))
                })
            })
            .await?;
        self.balancer_firewalls_changed(&balancers);
        Ok(firewall_view(&f))
    }

    /// Deletes a firewall: its rules leave every service it was assigned to.
    pub async fn firewall_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallDelete, id).await?.into_inner();
        let balancers = self
            .write(|tx| {
                Box::pin(async move {
                    let f = tx.firewall_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_live_migration(tx, &f, None).await?;
                    let balancers: Vec<i64> = tx.firewall_balancer(id).await?.into_iter().collect();
                    tx.firewall_delete(id).await?;
                    tx.grants_delete_entity(GrantKind::Firewall, id).await?;
                    tx.event_insert(&firewall_event(actor, "firewall_delete", &f)).await?;
                    Ok(balancers)
                })
            })
            .await?;
        self.balancer_firewalls_changed(&balancers);
        Ok(())
    }

    pub async fn firewall_rules_get(&self, actor: &Actor, id: i64) -> Result<VersionedRules> {
        let f = self.lookup_for::<FirewallRow>(actor, Op::FirewallRulesGet, id).await?.into_inner();
        Ok(history::versioned(&f.rules, f.rules_version))
    }

    /// Replaces both rule sets at once (a policy left out keeps its current value) and returns
    /// the new rules. Event `firewall_update`.
    pub async fn firewall_rules_update(&self, actor: &Actor, id: i64, body: Value) -> Result<VersionedRules> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallRulesUpdate, id).await?.into_inner();
        let body = &body;
        let lists = &self.prefix_lists();
        let (f, balancers) = self
            .write(|tx| {
                Box::pin(async move {
                    let before = tx.firewall_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let rules = parse_rules_update(body, "", &before.rules).map_err(Error::Invalid)?;
                    expand::check_written_prefix_names(lists, &rules, "")?;
                    expand::check_references(tx, actor.account_id(), &rules, "").await?;
                    refuse_live_migration(tx, &before, None).await?;
                    let f = tx.firewall_set_rules(id, &rules, Timestamp::now()).await?;
                    tx.event_insert(&firewall_event(actor, "firewall_update", &f)).await?;
                    let balancers: Vec<i64> = tx.firewall_balancer(id).await?.into_iter().collect();
                    Ok((f, balancers))
                })
            })
            .await?;
        self.balancer_firewalls_changed(&balancers);
        Ok(history::versioned(&f.rules, f.rules_version))
    }

    /// Called after every committed change that can change what the firewall of a load balancer
    /// lets through (a device added or removed, a status change, new rules, a delete), with the
    /// balancers concerned: the desired state of the data plane is published again.
    pub(crate) fn balancer_firewalls_changed(&self, nodebalancer_ids: &[i64]) {
        if !nodebalancer_ids.is_empty() {
            self.balancers_changed();
        }
    }
}

/// A uniqueness violation where the transaction had checked the rule itself: a concurrent
/// commit broke it meanwhile, so the transaction runs again and its checks see that commit.
pub(crate) fn unique_retry(e: Error) -> Error {
    match e {
        Error::Unique(_) => Error::Retry,
        other => other,
    }
}
