//! Where balancers meet firewalls: `firewall_id` of a balancer create, and the compiled inbound
//! rules of each balancer's enabled firewall that the desired state carries to the data plane.
//! Devices leave with their balancer through the foreign key (`ON DELETE CASCADE`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nubis_model::Result;
use nubis_model::firewall::{CompiledRules, DeviceType, FirewallRules};
use nubis_store::Tx;
use nubis_store::nodebalancers::BalancerRow;

use crate::App;
use crate::auth::Actor;

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
