//! Where balancers meet firewalls: `firewall_id` of a balancer create, and the compiled inbound
//! rules of each balancer's enabled firewall that the desired state carries to the data plane.
//! Devices leave with their balancer through the foreign key (`ON DELETE CASCADE`). The
//! balancer's firewalls replaced at once (`PUT /v4/nodebalancers/{id}/firewalls`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nubis_model::event::EventEntity;
use nubis_model::filter::Filter;
use nubis_model::firewall::{CompiledRules, DeviceType, Firewall, FirewallRules};
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result};
use nubis_store::Tx;
use nubis_store::firewalls::FirewallRow;
use nubis_store::nodebalancers::BalancerRow;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// Assigns firewall `firewall_id` to a balancer being created (inside its transaction); the
/// caller checked the firewall with `App::check_firewall_for_new_service` before.
pub(super) async fn attach_at_create(tx: &mut Tx<'_>, actor: &Actor, b: &BalancerRow, firewall_id: i64) -> Result<()> {
    crate::firewall::attach_at_creation(tx, actor, firewall_id, DeviceType::Nodebalancer, b.id, "firewall_id").await?;
    Ok(())
}

/// Compiled rules by the rules they were compiled from, so that publishing an unchanged state
/// reuses the same `Arc` (the data plane then sees no change) and compiles nothing.
#[derive(Default)]
pub(super) struct CompiledCache {
    by_balancer: Mutex<HashMap<i64, (FirewallRules, Arc<CompiledRules>)>>,
}

/// Balancer id -> the compiled inbound rules of its enabled firewall. Balancers without an
/// enabled firewall are absent (their `BalancerSpec.firewall` is `None`).
pub(super) async fn firewall_rules_of_balancers(app: &App) -> Result<HashMap<i64, Arc<CompiledRules>>> {
    let active = app.active_balancer_firewalls().await?;
    let mut cache = app.balancer_publisher.compiled.by_balancer.lock().unwrap_or_else(|e| e.into_inner());
    let mut next = HashMap::with_capacity(active.len());
    let mut out = HashMap::with_capacity(active.len());
    for (id, rules) in active {
        let compiled = match cache.remove(&id) {
            Some((old, c)) if old == rules => c,
            _ => Arc::new(CompiledRules::compile(&rules)),
        };
        out.insert(id, compiled.clone());
        next.insert(id, (rules, compiled));
    }
    *cache = next;
    Ok(out)
}

/// `PUT /v4/nodebalancers/{nodebalancer_id}/firewalls`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NodeBalancerFirewallsUpdate {
    /// The complete list of firewalls the balancer should have (empty: none).
    #[schema(required = true, value_type = Vec<i64>)]
    pub firewall_ids: Option<Vec<i64>>,
}

impl App {
    /// Replaces a balancer's firewalls: firewalls left out are removed from it, new ones are
    /// assigned with the rules of a firewall device (one load balancer per firewall, one enabled
    /// firewall per service). Needs read_write on the balancer and on every firewall added or
    /// removed. Everything is read and decided inside one transaction; the answer is the
    /// balancer's firewalls afterwards.
    pub async fn nodebalancer_firewalls_update(
        &self,
        actor: &Actor,
        id: i64,
        input: NodeBalancerFirewallsUpdate,
    ) -> Result<Page<Firewall>> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerFirewallsUpdate, id).await?;
        let mut p = Problems::new();
        let ids = input.firewall_ids.clone().unwrap_or_default();
        if input.firewall_ids.is_none() {
            p.add("firewall_ids", "Firewall IDs are required");
        }
        for (i, f) in ids.iter().enumerate() {
            let field = format!("firewall_ids[{i}]");
            if ids[..i].contains(f) {
                p.add(field, "Listed more than once");
            } else {
                self.check_firewall_for_new_service(actor, &mut p, *f, &field).await?;
            }
        }
        p.finish()?;
        // Removing a firewall from the balancer needs read_write on it, as removing its device does.
        let (assigned, _) = self
            .store
            .firewalls_page(actor.account_id(), None, Some((DeviceType::Nodebalancer, id)), &Filter::default(), 1, 500)
            .await?;
        let mut may_remove = Vec::new();
        for f in assigned.iter().filter(|f| !ids.contains(&f.id)) {
            self.require_permission(actor, GrantKind::Firewall, f.id, Permission::ReadWrite).await?;
            may_remove.push(f.id);
        }
        let (ids, may_remove) = (&ids, &may_remove);
        self.write(|tx| {
            Box::pin(async move {
                tx.nodebalancer_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let current = tx.nb_firewall_devices(id).await?;
                for (fw, device) in current.iter().filter(|(fw, _)| !ids.contains(fw)) {
                    let f = tx.firewall_lock(*fw, actor.account_id()).await?.ok_or(Error::Retry)?;
                    if !may_remove.contains(fw) {
                        return Err(Error::invalid(
                            "firewall_ids",
                            "The balancer's firewalls changed meanwhile; try again",
                        ));
                    }
                    detach(tx, actor, &f, *device, id).await?;
                }
                for (i, fw) in ids.iter().enumerate() {
                    if current.iter().any(|(c, _)| c == fw) {
                        continue;
                    }
                    let field = format!("firewall_ids[{i}]");
                    let f = tx
                        .firewall_lock(*fw, actor.account_id())
                        .await?
                        .ok_or_else(|| Error::invalid(&field, "Firewall not found"))?;
                    crate::firewall::refuse_live_migration(tx, &f, Some(&field)).await?;
                    crate::firewall::attach_device(tx, actor, &f, DeviceType::Nodebalancer, id, &field).await?;
                }
                Ok(())
            })
        })
        .await?;
        self.balancers_changed();
        self.nodebalancer_firewalls_list(actor, id, &Filter::default(), PageRequest { page: 1, page_size: 500 }).await
    }
}

/// Removes firewall `f` from balancer `nb_id` (device `device`), with event
/// `firewall_device_remove`.
async fn detach(tx: &mut Tx<'_>, actor: &Actor, f: &FirewallRow, device: i64, nb_id: i64) -> Result<()> {
    tx.firewall_device_delete(f.id, device).await?;
    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
    let e = event(actor, "firewall_device_remove", crate::firewall::firewall_entity(f))
        .secondary(EventEntity::new("nodebalancer", b.id, &b.label, format!("/v4/nodebalancers/{}", b.id)))
        .visible_with(GrantKind::Firewall, f.id)
        .build();
    tx.event_insert(&e).await?;
    Ok(())
}
