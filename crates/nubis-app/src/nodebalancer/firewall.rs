//! Where balancers meet firewalls. Firewalls are built by the firewall area in parallel; these
//! are the only places the load-balancer area looks them up, so wiring balancer firewalls means
//! filling these functions:
//!
//! - [`attach_at_create`]: `firewall_id` of a balancer create (today no firewall exists, so any
//!   id is "not found");
//! - [`detach_all`]: a deleted balancer leaves the firewalls it is a device of;
//! - [`firewalls_of`]: `GET /v4/nodebalancers/{id}/firewalls`;
//! - [`firewall_rules_of_balancers`]: the compiled inbound rules of each balancer's enabled
//!   firewall, published to the data plane as `BalancerSpec.firewall`.

use std::collections::HashMap;
use std::sync::Arc;

use nubis_model::firewall::CompiledRules;
use nubis_model::{Error, Result};
use nubis_store::Tx;
use nubis_store::nodebalancers::BalancerRow;

use crate::App;
use crate::auth::Actor;

/// Assigns firewall `firewall_id` to a balancer being created (inside its transaction).
pub(super) async fn attach_at_create(tx: &mut Tx<'_>, actor: &Actor, b: &BalancerRow, firewall_id: i64) -> Result<()> {
    let _ = (tx, actor, b);
    Err(Error::invalid("firewall_id", format!("Firewall {firewall_id} not found")))
}

/// Removes a balancer from every firewall it is a device of (inside the deleting transaction).
pub(super) async fn detach_all(tx: &mut Tx<'_>, nodebalancer_id: i64) -> Result<()> {
    let _ = (tx, nodebalancer_id);
    Ok(())
}

/// The firewall records assigned to a balancer, for `GET .../firewalls`.
pub(super) async fn firewalls_of(app: &App, actor: &Actor, nodebalancer_id: i64) -> Result<Vec<serde_json::Value>> {
    let _ = (app, actor, nodebalancer_id);
    Ok(Vec::new())
}

/// Balancer id -> the compiled inbound rules of its enabled firewall. Balancers without an
/// enabled firewall are absent (their `BalancerSpec.firewall` is `None`).
pub(crate) async fn firewall_rules_of_balancers(app: &App) -> Result<HashMap<i64, Arc<CompiledRules>>> {
    let _ = app;
    Ok(HashMap::new())
}
