//! Handlers, one module per area. Each handler authenticates, parses, calls one application
//! function and serializes; its name is the operation's name in the policy table.

pub mod account;
pub mod billing;
pub mod catalog;
pub mod child_accounts;
pub mod events;
pub mod firewall_history;
pub mod firewall_rulesets;
pub mod firewalls;
pub mod instance_actions;
pub mod instance_backups;
pub mod instance_configs;
pub mod instance_disks;
pub mod instance_interfaces;
pub mod instances;
pub mod ips;
pub mod ipv6;
pub mod logins;
pub mod nodebalancers;
pub mod oauth_clients;
pub mod profile;
pub mod service_transfers;
pub mod sshkeys;
pub mod users;
pub mod vpcs;

use crate::json::Json;
use serde_json::{Value, json};

/// The body of successful deletes and actions.
pub fn empty() -> Json<Value> {
    Json(json!({}))
}
