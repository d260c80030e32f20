//! The authorized lookup: the one way an operation on an entity gets the entity.
//!
//! [`App::lookup_for`] checks the caller against the operation's policy (scope, unrestricted
//! status, global grant), finds the record inside the caller's account (another account's is
//! not found), then checks the entity grant, and only then hands out the record, wrapped in
//! [`Authorized`], which nothing else can make. An operation cannot look its entity up first
//! and forget the grant, or check the grant of another entity than the one it reads.

use std::future::Future;

use nubis_model::{Error, Result};
use nubis_store::firewalls::FirewallRow;
use nubis_store::instances::InstanceRow;
use nubis_store::ips::IpRow;
use nubis_store::nodebalancers::{BalancerRow, ConfigRow, NodeRow};
use nubis_store::ranges::RangeRow;
use nubis_store::vpcs::{VpcParts, VpcRow};

use super::{Actor, Grant, Op};
use crate::App;

/// A record the caller may use for the operation it was looked up for.
#[derive(Debug, Clone)]
pub struct Authorized<T>(T);

impl<T> Authorized<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Authorized<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A kind of record an operation acts on: how it is found in an account by its key, and which
/// entity's grant covers it (its own, or its parent's: a balancer's config is covered by the
/// balancer's grant, an address by its instance's).
pub(crate) trait Entity: Sized + Send {
    type Key: Send;
    fn find(app: &App, account_id: i64, key: Self::Key) -> impl Future<Output = Result<Option<Self>>> + Send;
    fn grant_id(&self) -> i64;
}

impl App {
    /// The record `key` of the caller's account, for `op`: 403 without the scope, the
    /// unrestricted status or the global grant the operation needs; 404 when the account has no
    /// such record or a restricted caller has no grant on it; 403 with read_only where the
    /// operation needs read_write.
    pub(crate) async fn lookup_for<E: Entity>(&self, actor: &Actor, op: Op, key: E::Key) -> Result<Authorized<E>> {
        self.authorize_policy(actor, op).await?;
        let row = E::find(self, actor.account_id(), key).await?.ok_or(Error::NotFound)?;
        let Grant::Entity(kind, need) = op.policy().grant else {
            return Err(Error::internal(format!("{} has no entity grant to look an entity up for", op.name())));
        };
        self.require_permission(actor, kind, row.grant_id(), need).await?;
        Ok(Authorized(row))
    }
}

impl Entity for VpcRow {
    type Key = i64;
    async fn find(app: &App, account_id: i64, id: i64) -> Result<Option<Self>> {
        app.store.vpc_get(account_id, id).await
    }
    fn grant_id(&self) -> i64 {
        self.id
    }
}

impl Entity for std::sync::Arc<VpcParts> {
    type Key = i64;
    async fn find(app: &App, account_id: i64, id: i64) -> Result<Option<Self>> {
        app.store.vpc_parts(account_id, id).await
    }
    fn grant_id(&self) -> i64 {
        self.vpc.id
    }
}

impl Entity for InstanceRow {
    type Key = i64;
    async fn find(app: &App, account_id: i64, id: i64) -> Result<Option<Self>> {
        app.store.instance_get(account_id, id).await
    }
    fn grant_id(&self) -> i64 {
        self.id
    }
}

impl Entity for FirewallRow {
    type Key = i64;
    async fn find(app: &App, account_id: i64, id: i64) -> Result<Option<Self>> {
        app.store.firewall_get(account_id, id).await
    }
    fn grant_id(&self) -> i64 {
        self.id
    }
}

impl Entity for BalancerRow {
    type Key = i64;
    async fn find(app: &App, account_id: i64, id: i64) -> Result<Option<Self>> {
        app.store.nodebalancer_get(account_id, id).await
    }
    fn grant_id(&self) -> i64 {
        self.id
    }
}

/// A balancer's config, with its balancer; key: (balancer, config).
impl Entity for (BalancerRow, ConfigRow) {
    type Key = (i64, i64);
    async fn find(app: &App, account_id: i64, (nb, id): (i64, i64)) -> Result<Option<Self>> {
        let Some(b) = app.store.nodebalancer_get(account_id, nb).await? else { return Ok(None) };
        Ok(app.store.nb_config_get(nb, id).await?.map(|c| (b, c)))
    }
    fn grant_id(&self) -> i64 {
        self.0.id
    }
}

/// A node of a balancer's config; key: (balancer, config, node).
impl Entity for (BalancerRow, NodeRow) {
    type Key = (i64, i64, i64);
    async fn find(app: &App, account_id: i64, (nb, config, id): (i64, i64, i64)) -> Result<Option<Self>> {
        let Some(b) = app.store.nodebalancer_get(account_id, nb).await? else { return Ok(None) };
        Ok(app.store.nb_node_get(config, id).await?.filter(|n| n.nodebalancer_id == nb).map(|n| (b, n)))
    }
    fn grant_id(&self) -> i64 {
        self.0.id
    }
}

/// An address (any spelling of it), covered by its instance's grant.
impl Entity for IpRow {
    type Key = String;
    async fn find(app: &App, account_id: i64, address: String) -> Result<Option<Self>> {
        let Some(canonical) = crate::ip::canonical_ip(&address) else { return Ok(None) };
        Ok(app.store.ips_by_addresses(account_id, &[canonical]).await?.pop())
    }
    fn grant_id(&self) -> i64 {
        self.instance_id
    }
}

/// An IPv6 range (`start` or `start/prefix`), covered by its instance's grant.
impl Entity for RangeRow {
    type Key = String;
    async fn find(app: &App, account_id: i64, range: String) -> Result<Option<Self>> {
        app.range_find(account_id, &range).await
    }
    fn grant_id(&self) -> i64 {
        self.instance_id
    }
}
