//! Load balancers (NodeBalancers; spec section 1, 3.3; reference `/nodebalancers`): the balancer
//! records and their addresses. Configs are in [`config`], nodes in [`node`], certificate checks
//! in [`tls`], the desired state published to the data plane and what it observes in
//! [`dataplane`], the hooks for balancer firewalls in [`firewall`], VPC configurations in [`vpcs`].

mod config;
pub mod dataplane;
mod firewall;
mod node;
pub mod ownership;
mod tls;
mod validate;
mod view;
mod vpcs;

use std::collections::HashMap;
use std::net::Ipv6Addr;

use nubis_ipam::Ipv4Pool;
use nubis_model::catalog::capability;
use nubis_model::event::{EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::nodebalancer::{NodeBalancer, NodeBalancerStats};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::nodebalancers::{BalancerRow, ConfigFields, ConfigRow, NewBalancer, NodeFields, NodeRow};

pub use firewall::NodeBalancerFirewallsUpdate;
pub use validate::{ConfigRequest, NodeBalancerCreate, NodeBalancerUpdate, NodeRequest};
pub(crate) use view::month_start;

use crate::App;
use crate::auth::{Actor, Op};
use crate::catalog::RegionInfo;
use crate::events::event;

const LABEL_TAKEN: &str = "Label must be unique among your NodeBalancers";

pub(crate) fn nb_entity(b: &BalancerRow) -> EventEntity {
    EventEntity::new("nodebalancer", b.id, &b.label, format!("/v4/nodebalancers/{}", b.id))
}

fn config_entity(b: &BalancerRow, c: &ConfigRow) -> EventEntity {
    EventEntity::new(
        "nodebalancer_config",
        c.id,
        c.f.port.to_string(),
        format!("/v4/nodebalancers/{}/configs/{}", b.id, c.id),
    )
}

fn node_entity(b: &BalancerRow, n: &NodeRow) -> EventEntity {
    EventEntity::new(
        "nodebalancer_node",
        n.id,
        &n.f.label,
        format!("/v4/nodebalancers/{}/configs/{}/nodes/{}", b.id, n.config_id, n.id),
    )
}

/// An event about a balancer (and something below it).
fn nb_event(actor: &Actor, action: &'static str, b: &BalancerRow, secondary: Option<EventEntity>) -> NewEvent {
    let mut e = event(actor, action, nb_entity(b)).visible_with(GrantKind::Nodebalancer, b.id);
    if let Some(s) = secondary {
        e = e.secondary(s);
    }
    e.build()
}

fn generated_label() -> String {
    use rand::RngExt;
    format!("nodebalancer-{}", hex::encode(rand::rng().random::<[u8; 5]>()))
}

/// The balancer's IPv6 address: in the region's pool, with an interface id that no SLAAC
/// address can have (EUI-64 ids carry `ff:fe` in their middle) and that is unique because the
/// IPv4 address is: `<pool>::6e62:0:<ipv4 as two groups>`.
fn ipv6_of(region: &RegionInfo, v4: u32) -> Ipv6Addr {
    let base = u128::from(region.ipv6_pool.network());
    Ipv6Addr::from(base | (0x6e62u128 << 48) | u128::from(v4))
}

/// A create request that passed every check that does not need the database.
struct ValidCreate {
    label: Option<String>,
    region: RegionInfo,
    throttle: i64,
    udp_throttle: i64,
    tags: Vec<String>,
    configs: Vec<(ConfigFields, Vec<NodeFields>)>,
}

impl App {
    /// The records of some balancers, with this month's transfer read for them only.
    async fn nodebalancer_views(&self, rows: &[BalancerRow]) -> Result<Vec<NodeBalancer>> {
        let ids: Vec<i64> = rows.iter().map(|b| b.id).collect();
        let transfer: HashMap<i64, (i64, i64)> = self.store.nb_transfer_of(&ids, view::month_start()).await?;
        Ok(rows.iter().map(|b| view::balancer(b, &transfer, self.default_rdns(&b.ipv4))).collect())
    }

    pub(crate) async fn nodebalancer_view(&self, b: &BalancerRow) -> Result<NodeBalancer> {
        self.nodebalancer_views(std::slice::from_ref(b))
            .await?
            .pop()
            .ok_or_else(|| Error::internal("no view of the balancer"))
    }

    pub async fn nodebalancer_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<NodeBalancer>> {
        self.authorize(actor, Op::NodebalancerList).await?;
        let (rows, results) = self
            .store
            .nodebalancers_page(actor.account_id(), Self::grant_user(actor), filter, page.page, page.page_size)
            .await?;
        Ok(Page::new(self.nodebalancer_views(&rows).await?, page, results))
    }

    pub async fn nodebalancer_get(&self, actor: &Actor, id: i64) -> Result<NodeBalancer> {
        let b = self.lookup_for::<BalancerRow>(actor, Op::NodebalancerGet, id).await?.into_inner();
        self.nodebalancer_view(&b).await
    }

    async fn check_nodebalancer_create(&self, actor: &Actor, input: &NodeBalancerCreate) -> Result<ValidCreate> {
        let mut p = Problems::new();
        let region = match input.region.as_deref() {
            None => {
                p.add("region", "Region is required");
                None
            }
            Some(r) => match self.catalog.region(r) {
                None => {
                    p.add("region", "region is not valid");
                    None
                }
                Some(info) if !info.has(capability::NODEBALANCERS) => {
                    p.add("region", "NodeBalancers are not available in this region");
                    None
                }
                Some(info) => Some(info.clone()),
            },
        };
        if let Some(l) = &input.label {
            validate::check_label(&mut p, "label", l);
        }
        let throttle = input.client_conn_throttle.unwrap_or(0);
        validate::check_throttle(&mut p, "client_conn_throttle", throttle);
        let udp_throttle = input.client_udp_sess_throttle.unwrap_or(0);
        validate::check_throttle(&mut p, "client_udp_sess_throttle", udp_throttle);
        p.check(input.vpcs.is_none(), "vpcs", "Balancers are not placed in VPCs by this cloud");
        validate::check_tags(&mut p, input.tags.as_deref().unwrap_or_default());
        let mut configs = Vec::new();
        for (i, c) in input.configs.iter().flatten().enumerate() {
            let mut cp = Problems::new();
            let fields = validate::resolve_config(&mut cp, None, c);
            if configs.iter().any(|(f, _): &(ConfigFields, _)| f.port == fields.port) {
                cp.add("port", "Port must be unique among the balancer's configs");
            }
            let nodes = match &c.nodes {
                None => {
                    cp.add("nodes", "Each config needs at least one node");
                    Vec::new()
                }
                Some(n) if n.is_empty() => {
                    cp.add("nodes", "Each config needs at least one node");
                    Vec::new()
                }
                Some(n) => node::resolve_new_nodes(&mut cp, n),
            };
            p.extend_prefixed(&format!("configs[{i}]"), cp);
            configs.push((fields, nodes));
        }
        if let Some(f) = input.firewall_id {
            self.check_firewall_for_new_service(actor, &mut p, f, "firewall_id").await?;
        }
        p.finish()?;
        Ok(ValidCreate {
            label: input.label.clone(),
            region: region.ok_or_else(|| Error::internal("region passed its checks without a value"))?,
            throttle,
            udp_throttle,
            tags: input.tags.clone().unwrap_or_default(),
            configs,
        })
    }

    /// Creates a balancer (with its configs and nodes, all or nothing) on the lowest free
    /// address of its region's pool. A restricted creator gets read_write on it.
    pub async fn nodebalancer_create(&self, actor: &Actor, input: NodeBalancerCreate) -> Result<NodeBalancer> {
        self.authorize(actor, Op::NodebalancerCreate).await?;
        let valid = self.check_nodebalancer_create(actor, &input).await?;
        let (valid, firewall_id) = (&valid, input.firewall_id);
        let b = self
            .write(|tx| {
                Box::pin(async move {
                    let b = insert_balancer(tx, actor, valid).await?;
                    self.billing_meter_balancer(tx, &b).await?;
                    tx.event_insert(&nb_event(actor, "nodebalancer_create", &b, None)).await?;
                    // Without a firewall_id, the account's default balancer firewall, if any.
                    let fw = match firewall_id {
                        Some(fw) => Some(fw),
                        None => tx.firewall_defaults_lock(actor.account_id()).await?.nodebalancer,
                    };
                    if let Some(fw) = fw {
                        firewall::attach_at_create(tx, actor, &b, fw).await?;
                    }
                    let mut p = Problems::new();
                    for (i, (fields, nodes)) in valid.configs.iter().enumerate() {
                        let mut cp = Problems::new();
                        config::insert_config(tx, actor, &b, fields, nodes, &mut cp).await?;
                        p.extend_prefixed(&format!("configs[{i}]"), cp);
                    }
                    p.finish()?;
                    if actor.restricted() {
                        tx.grant_set(actor.user_id(), GrantKind::Nodebalancer, b.id, Some(Permission::ReadWrite))
                            .await?;
                    }
                    Ok(b)
                })
            })
            .await?;
        self.nodebalancer_view(&b).await
    }

    pub async fn nodebalancer_update(&self, actor: &Actor, id: i64, input: NodeBalancerUpdate) -> Result<NodeBalancer> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerUpdate, id).await?.into_inner();
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            validate::check_label(&mut p, "label", l);
        }
        if let Some(t) = input.client_conn_throttle {
            validate::check_throttle(&mut p, "client_conn_throttle", t);
        }
        if let Some(t) = input.client_udp_sess_throttle {
            validate::check_throttle(&mut p, "client_udp_sess_throttle", t);
        }
        if let Some(t) = &input.tags {
            validate::check_tags(&mut p, t);
        }
        p.finish()?;
        let input = &input;
        let b = self
            .write(|tx| {
                Box::pin(async move {
                    let cur = tx.nodebalancer_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let b = tx
                        .nodebalancer_update(
                            id,
                            input.label.as_deref().unwrap_or(&cur.label),
                            (
                                input.client_conn_throttle.unwrap_or(cur.client_conn_throttle),
                                input.client_udp_sess_throttle.unwrap_or(cur.client_udp_sess_throttle),
                            ),
                            input.tags.as_deref().unwrap_or(&cur.tags),
                            Timestamp::now(),
                        )
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(&nb_event(actor, "nodebalancer_update", &b, None)).await?;
                    Ok(b)
                })
            })
            .await?;
        self.nodebalancer_view(&b).await
    }

    /// Deletes a balancer with its configs and nodes; its listeners stop.
    pub async fn nodebalancer_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let b = tx.nodebalancer_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                tx.event_insert(&nb_event(actor, "nodebalancer_delete", &b, None)).await?;
                tx.nodebalancer_delete(id).await?;
                crate::billing::meter_stop(tx, "nodebalancer", id).await?;
                tx.grants_delete_entity(GrantKind::Nodebalancer, id).await?;
                Ok(())
            })
        })
        .await?;
        Ok(())
    }

    /// `GET .../stats`: connections and traffic of the last day in 5-minute periods.
    pub async fn nodebalancer_stats(&self, actor: &Actor, id: i64) -> Result<NodeBalancerStats> {
        let b = self.lookup_for::<BalancerRow>(actor, Op::NodebalancerStats, id).await?.into_inner();
        let now = Timestamp::now().unix();
        let samples = self.store.nb_traffic_since(id, view::stats_since(now)).await?;
        Ok(view::stats(&b, &samples, now))
    }

    /// `GET /v4/compute/instances/{id}/nodebalancers`: the balancers (that the actor may read)
    /// with a node on one of the instance's private addresses.
    pub(crate) async fn nodebalancers_of_instance(
        &self,
        actor: &Actor,
        instance_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<NodeBalancer>> {
        let (rows, results) = self
            .store
            .nodebalancers_of_instance_page(
                actor.account_id(),
                Self::grant_user(actor),
                instance_id,
                filter,
                page.page,
                page.page_size,
            )
            .await?;
        Ok(Page::new(self.nodebalancer_views(&rows).await?, page, results))
    }
}

/// Inserts the balancer row on the lowest free address of the region's pool (instances' and
/// balancers' addresses are both read inside this transaction). A generated label meeting an
/// existing one is generated again; an address taken concurrently starts the transaction over.
async fn insert_balancer(tx: &mut Tx<'_>, actor: &Actor, v: &ValidCreate) -> Result<BalancerRow> {
    let pool = Ipv4Pool::public(v.region.public_ipv4, v.region.public_prefix)
        .map_err(|e| Error::internal(format!("region {}: {e}", v.region.view.id)))?;
    let net = pool.net();
    let taken = tx.ipv4_taken(u32::from(net.network()), u32::from(net.broadcast())).await?;
    let a = pool.first_free(&taken).ok_or_else(|| {
        Error::invalid("region", format!("No public IPv4 addresses are left in region {}", v.region.view.id))
    })?;
    let label = match &v.label {
        Some(l) => l.clone(),
        None => {
            let mut l = generated_label();
            while tx.nodebalancer_label_taken(actor.account_id(), &l).await? {
                l = generated_label();
            }
            l
        }
    };
    let ipv6 = ipv6_of(&v.region, u32::from(a)).to_string();
    let n = NewBalancer {
        account_id: actor.account_id(),
        label: &label,
        region: &v.region.view.id,
        ipv4: &a.to_string(),
        v4: u32::from(a),
        ipv6: Some(&ipv6),
        client_conn_throttle: v.throttle,
        client_udp_sess_throttle: v.udp_throttle,
        tags: &v.tags,
        created: Timestamp::now(),
    };
    let b = match tx.nodebalancer_insert(&n).await {
        Ok(b) => b,
        Err(Error::Unique(m)) if m.contains("label") => return Err(Error::invalid("label", LABEL_TAKEN)),
        Err(Error::Unique(_)) => return Err(Error::Retry),
        Err(e) => return Err(e),
    };
    // Without a label the hosted API names a balancer `balancer<id>`; the id is known only now.
    // Should the account already have a balancer of that name, the generated one stays.
    let hosted = format!("balancer{}", b.id);
    if v.label.is_none() && !tx.nodebalancer_label_taken(actor.account_id(), &hosted).await? {
        let throttles = (b.client_conn_throttle, b.client_udp_sess_throttle);
        return tx.nodebalancer_update(b.id, &hosted, throttles, &b.tags, b.updated).await;
    }
    Ok(b)
}
