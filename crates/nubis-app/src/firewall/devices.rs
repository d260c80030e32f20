//! Firewall devices (spec 2.8, 4.9): assigning a firewall to an instance or a load balancer, the
//! devices list, removal, the firewalls of a service (`GET .../instances/{id}/firewalls`,
//! `GET /v4/nodebalancers/{id}/firewalls`), and the assignment at instance creation
//! (`firewall_id`).
//!
//! Adding a device needs read_write on the service (a service the caller cannot see is "not
//! found", a 400 on the body field; read_only is a 403). [`attachable`] is the one place that
//! decides whether a service may get a firewall, inside the caller's write transaction: the
//! service exists in the account and is not in live migration, the firewall is not assigned to it
//! already, a firewall has at most one load balancer, and an enabled firewall is refused when the
//! service already has another enabled one.

use std::collections::HashSet;

use nubis_model::event::{EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::firewall::{DeviceEntity, DeviceType, Firewall, FirewallDevice};
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::firewalls::{DeviceRow, FirewallRow, NewDevice};
use nubis_store::nodebalancers::BalancerRow;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{firewall_entity, firewall_view, refuse_live_migration, unique_retry};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `POST /v4/networking/firewalls/{firewall_id}/devices`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DeviceCreate {
    /// The service's id.
    #[schema(required = true, value_type = i64)]
    pub id: Option<i64>,
    /// `instance` or `nodebalancer`.
    #[serde(rename = "type")]
    #[schema(required = true, schema_with = device_type_schema)]
    pub kind: Option<String>,
}

/// How errors name a kind of service.
pub(crate) fn kind_text(kind: DeviceType) -> &'static str {
    match kind {
        DeviceType::Instance => "Instance",
        DeviceType::Nodebalancer => "Load balancer",
    }
}

fn not_found(kind: DeviceType) -> String {
    format!("{} not found", kind_text(kind))
}

fn grant_kind(kind: DeviceType) -> GrantKind {
    match kind {
        DeviceType::Instance => GrantKind::Instance,
        DeviceType::Nodebalancer => GrantKind::Nodebalancer,
    }
}

fn service_entity(kind: DeviceType, id: i64, label: &str) -> EventEntity {
    EventEntity::new(kind.name(), id, label, kind.url(id))
}

pub(crate) fn device_view(d: &DeviceRow) -> FirewallDevice {
    FirewallDevice {
        id: d.id,
        created: d.created,
        updated: d.updated,
        entity: DeviceEntity {
            id: d.entity_id,
            label: d.entity_label.clone(),
            kind: d.kind,
            url: d.kind.url(d.entity_id),
        },
    }
}

/// Assigns firewall `f` (locked by the caller in this transaction) to a service, with event
/// `firewall_device_add`. Every refusal is a 400 on `field`. The firewall's own live-migration
/// check (its other instances) is the caller's.
pub(crate) async fn attach_device(
    tx: &mut Tx<'_>,
    actor: &Actor,
    f: &FirewallRow,
    kind: DeviceType,
    entity_id: i64,
    field: &str,
) -> Result<DeviceRow> {
    let label = attachable(tx, actor, f, kind, entity_id, field).await?;
    let mut rows = insert_devices(tx, actor, f, &[(kind, entity_id, label)]).await?;
    rows.pop().ok_or_else(|| Error::internal("an attached device was not returned"))
}

/// Assigns firewall `f` (locked by the caller in this transaction) to many services at once,
/// each `(kind, id, field)`, with their events: every refusal is gathered (a 400 on its field,
/// a service named twice refused the second time; the request allows one balancer at most),
/// then the devices are written a few
/// statements at a time. The firewall's own live-migration check is the caller's.
pub(crate) async fn attach_devices(
    tx: &mut Tx<'_>,
    actor: &Actor,
    f: &FirewallRow,
    wanted: &[(DeviceType, i64, String)],
) -> Result<Vec<DeviceRow>> {
    let mut p = Problems::new();
    let mut seen = HashSet::new();
    let mut ok = Vec::with_capacity(wanted.len());
    for (kind, id, field) in wanted {
        match attachable(tx, actor, f, *kind, *id, field).await {
            Ok(label) if !seen.insert((*kind, *id)) => p.add(field.as_str(), already_assigned(*kind, *id, &label)),
            Ok(label) => ok.push((*kind, *id, label)),
            Err(e) => p.absorb(Err(e))?,
        }
    }
    p.finish()?;
    insert_devices(tx, actor, f, &ok).await
}

/// Whether `f` may be assigned to a service (read in this transaction, the service's row
/// locked): its label when it may, a 400 on `field` when it may not.
async fn attachable(
    tx: &mut Tx<'_>,
    actor: &Actor,
    f: &FirewallRow,
    kind: DeviceType,
    entity_id: i64,
    field: &str,
) -> Result<String> {
    let label = match kind {
        DeviceType::Instance => {
            let i = tx
                .instance_lock(entity_id, actor.account_id())
                .await?
                .ok_or_else(|| Error::invalid(field, not_found(kind)))?;
            if i.live_migration {
                return Err(Error::invalid(
                    field,
                    format!(
                        "Instance '{}' ({}) is in live migration; firewall changes are refused until the migration \
                         completes",
                        i.label, i.id
                    ),
                ));
            }
            i.label
        }
        DeviceType::Nodebalancer => {
            tx.nodebalancer_lock(entity_id, actor.account_id())
                .await?
                .ok_or_else(|| Error::invalid(field, not_found(kind)))?
                .label
        }
    };
    let name = service_name(kind, entity_id, &label);
    if tx.firewall_has_device(f.id, kind, entity_id).await? {
        return Err(Error::invalid(field, already_assigned(kind, entity_id, &label)));
    }
    if kind == DeviceType::Nodebalancer
        && let Some(other) = tx.firewall_balancer(f.id).await?
    {
        return Err(Error::invalid(
            field,
            format!("A firewall can be assigned to at most one load balancer; this one has load balancer {other}"),
        ));
    }
    if f.enabled()
        && let Some((other_id, other_label)) = tx.service_active_firewall(kind, entity_id, Some(f.id)).await?
    {
        return Err(Error::invalid(
            field,
            format!(
                "{name} already has the active firewall '{other_label}' ({other_id}); a service can have only one \
                 active firewall (disable one of them first)"
            ),
        ));
    }
    Ok(label)
}

/// A service as refusals name it: `Instance 'web' (12)`.
fn service_name(kind: DeviceType, entity_id: i64, label: &str) -> String {
    format!("{} '{label}' ({entity_id})", kind_text(kind))
}

/// The refusal of a service the firewall already has.
fn already_assigned(kind: DeviceType, entity_id: i64, label: &str) -> String {
    format!("{} is already assigned to this firewall", service_name(kind, entity_id, label))
}

/// Writes the devices of `f` checked by [`attachable`], with their `firewall_device_add` events.
async fn insert_devices(
    tx: &mut Tx<'_>,
    actor: &Actor,
    f: &FirewallRow,
    services: &[(DeviceType, i64, String)],
) -> Result<Vec<DeviceRow>> {
    let created = Timestamp::now();
    let new: Vec<NewDevice<'_>> = services
        .iter()
        .map(|(kind, entity_id, label)| NewDevice {
            firewall_id: f.id,
            account_id: actor.account_id(),
            kind: *kind,
            entity_id: *entity_id,
            entity_label: label,
            active: f.enabled(),
            created,
        })
        .collect();
    let rows = tx.firewall_devices_insert(&new).await.map_err(unique_retry)?;
    let events: Vec<NewEvent> = services
        .iter()
        .map(|(kind, entity_id, label)| {
            event(actor, "firewall_device_add", firewall_entity(f))
                .secondary(service_entity(*kind, *entity_id, label))
                .visible_with(GrantKind::Firewall, f.id)
                .build()
        })
        .collect();
    tx.events_insert(&events).await?;
    Ok(rows)
}

/// Removes device `d` of firewall `f` (locked by the caller in this transaction), with event
/// `firewall_device_remove`. The firewall's live-migration check is the caller's.
pub(crate) async fn detach_device(tx: &mut Tx<'_>, actor: &Actor, f: &FirewallRow, d: &DeviceRow) -> Result<()> {
    if !tx.firewall_device_delete(f.id, d.id).await? {
        return Err(Error::NotFound);
    }
    tx.event_insert(
        &event(actor, "firewall_device_remove", firewall_entity(f))
            .secondary(service_entity(d.kind, d.entity_id, &d.entity_label))
            .visible_with(GrantKind::Firewall, f.id)
            .build(),
    )
    .await?;
    Ok(())
}

/// Assigns firewall `firewall_id` to a service created in this transaction (`firewall_id` of
/// instance create; the load-balancer create can use it the same way). Refusals are 400s on
/// `field`. Call [`App::check_firewall_for_new_service`] before the transaction.
pub(crate) async fn attach_at_creation(
    tx: &mut Tx<'_>,
    actor: &Actor,
    firewall_id: i64,
    kind: DeviceType,
    entity_id: i64,
    field: &str,
) -> Result<DeviceRow> {
    let f = tx
        .firewall_lock(firewall_id, actor.account_id())
        .await?
        .ok_or_else(|| Error::invalid(field, "Firewall not found"))?;
    refuse_live_migration(tx, &f, Some(field)).await?;
    attach_device(tx, actor, &f, kind, entity_id, field).await
}

impl App {
    /// Before a transaction that adds a device: the service must exist in the account and the
    /// actor needs read_write on it. A service the actor cannot see is "not found" on `field`
    /// (added to `p`); read_only access is a 403.
    pub(crate) async fn check_device_access(
        &self,
        actor: &Actor,
        p: &mut Problems,
        kind: DeviceType,
        id: i64,
        field: &str,
    ) -> Result<()> {
        let exists = match kind {
            DeviceType::Instance => self.store.instance_get(actor.account_id(), id).await?.is_some(),
            DeviceType::Nodebalancer => self.store.nodebalancer_ref(actor.account_id(), id).await?.is_some(),
        };
        let access = if exists {
            self.require_permission(actor, grant_kind(kind), id, Permission::ReadWrite).await
        } else {
            Err(Error::NotFound)
        };
        match access {
            Ok(()) => Ok(()),
            Err(Error::NotFound) => {
                p.add(field, not_found(kind));
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Before creating a service with `firewall_id`: the firewall must exist in the account and
    /// the actor needs read_write on it ("not found" on `field` otherwise, added to `p`;
    /// read_only access is a 403).
    pub(crate) async fn check_firewall_for_new_service(
        &self,
        actor: &Actor,
        p: &mut Problems,
        firewall_id: i64,
        field: &str,
    ) -> Result<()> {
        let exists = self.store.firewall_get(actor.account_id(), firewall_id).await?.is_some();
        let access = if exists {
            self.require_permission(actor, GrantKind::Firewall, firewall_id, Permission::ReadWrite).await
        } else {
            Err(Error::NotFound)
        };
        match access {
            Ok(()) => Ok(()),
            Err(Error::NotFound) => {
                p.add(field, "Firewall not found");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// `GET .../devices`: the firewall's devices in id order.
    pub async fn firewall_device_list(
        &self,
        actor: &Actor,
        firewall_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<FirewallDevice>> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallDeviceList, firewall_id).await?.into_inner();
        let (rows, results) = self.store.firewall_devices_page(firewall_id, filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(device_view).collect(), page, results))
    }

    pub async fn firewall_device_get(&self, actor: &Actor, firewall_id: i64, id: i64) -> Result<FirewallDevice> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallDeviceGet, firewall_id).await?.into_inner();
        self.store.firewall_device_get(firewall_id, id).await?.as_ref().map(device_view).ok_or(Error::NotFound)
    }

    /// Assigns the firewall to a service, applying its rules there. Event `firewall_device_add`.
    pub async fn firewall_device_create(
        &self,
        actor: &Actor,
        firewall_id: i64,
        input: DeviceCreate,
    ) -> Result<FirewallDevice> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallDeviceCreate, firewall_id).await?.into_inner();
        let mut p = Problems::new();
        let kind = match input.kind.as_deref() {
            None => {
                p.add("type", "type is required");
                None
            }
            Some(t) => {
                let k = DeviceType::parse(t);
                p.check(k.is_some(), "type", "Must be instance or nodebalancer");
                k
            }
        };
        if input.id.is_none() {
            p.add("id", "id is required");
        }
        if let (Some(kind), Some(id)) = (kind, input.id) {
            self.check_device_access(actor, &mut p, kind, id, "id").await?;
        }
        p.finish()?;
        let (Some(kind), Some(entity_id)) = (kind, input.id) else {
            return Err(Error::internal("device create passed its checks without a value"));
        };
        let d = self
            .write(|tx| {
                Box::pin(async move {
                    let f = tx.firewall_lock(firewall_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    refuse_live_migration(tx, &f, None).await?;
                    let d = attach_device(tx, actor, &f, kind, entity_id, "id").await?;
                    Ok(d)
                })
            })
            .await?;
        if kind == DeviceType::Nodebalancer {
            self.balancer_firewalls_changed(&[entity_id]);
        }
        Ok(device_view(&d))
    }

    /// Removes a device: the firewall's rules leave that service; other firewalls assigned to
    /// it stay. Event `firewall_device_remove`. Needs read_write on the firewall.
    pub async fn firewall_device_delete(&self, actor: &Actor, firewall_id: i64, id: i64) -> Result<()> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallDeviceDelete, firewall_id).await?.into_inner();
        let d = self
            .write(|tx| {
                Box::pin(async move {
                    let f = tx.firewall_lock(firewall_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let d = tx
                        .firewall_devices(firewall_id)
                        .await?
                        .into_iter()
                        .find(|d| d.id == id)
                        .ok_or(Error::NotFound)?;
                    refuse_live_migration(tx, &f, None).await?;
                    if !tx.firewall_device_delete(firewall_id, id).await? {
                        return Err(Error::NotFound);
                    }
                    tx.event_insert(
                        &event(actor, "firewall_device_remove", firewall_entity(&f))
                            .secondary(service_entity(d.kind, d.entity_id, &d.entity_label))
                            .visible_with(GrantKind::Firewall, f.id)
                            .build(),
                    )
                    .await?;
                    Ok(d)
                })
            })
            .await?;
        if d.kind == DeviceType::Nodebalancer {
            self.balancer_firewalls_changed(&[d.entity_id]);
        }
        Ok(())
    }

    /// The firewalls assigned to a service, in firewall id order, that the actor may see
    /// (restricted users see only firewalls they have a grant on).
    pub(crate) async fn service_firewalls(
        &self,
        actor: &Actor,
        kind: DeviceType,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Firewall>> {
        let (rows, results) = self
            .store
            .firewalls_page(
                actor.account_id(),
                Self::grant_user(actor),
                Some((kind, id)),
                filter,
                page.page,
                page.page_size,
            )
            .await?;
        Ok(Page::new(rows.iter().map(firewall_view).collect(), page, results))
    }

    /// `GET /v4/nodebalancers/{nodebalancer_id}/firewalls`.
    pub async fn nodebalancer_firewalls_list(
        &self,
        actor: &Actor,
        nodebalancer_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Firewall>> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerFirewallsList, nodebalancer_id).await?;
        self.service_firewalls(actor, DeviceType::Nodebalancer, nodebalancer_id, filter, page).await
    }
}

fn device_type_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::one_of(&["instance", "nodebalancer"]))
}
