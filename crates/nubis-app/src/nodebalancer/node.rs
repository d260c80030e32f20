//! Nodes (back ends) of a config: list, get, create (also in the walkthrough's form
//! `POST .../configs/{config_id}`), update, delete, and the node part of a rebuild. A node's
//! address must be a private IPv4 address of an instance of the account in the balancer's
//! region, checked inside the write transaction.

use std::collections::{HashMap, HashSet};

use nubis_model::event::NewEvent;
use nubis_model::filter::Filter;
use nubis_model::nodebalancer::NodeBalancerNode;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::ips::IpKind;
use nubis_store::nodebalancers::{BalancerRow, ConfigRow, NodeFields, NodeRow};

use super::validate::{self, NodeRequest};
use super::{nb_event, node_entity, view};
use crate::App;
use crate::auth::{Actor, Op};

const LABEL_TAKEN: &str = "Label must be unique among the config's nodes";

/// Checks new nodes of one request (fields relative to the list: `[1].label`), including that
/// their labels differ.
pub(super) fn resolve_new_nodes(p: &mut Problems, reqs: &[NodeRequest]) -> Vec<NodeFields> {
    let mut out: Vec<NodeFields> = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        let mut np = Problems::new();
        if let Some(f) = validate::resolve_node(&mut np, None, r) {
            if out.iter().any(|o| o.label == f.label) {
                np.add("label", LABEL_TAKEN);
            }
            out.push(f);
        }
        p.extend_prefixed(&format!("nodes[{i}]"), np);
    }
    out
}

/// Why `address` may not be a node of `b` (inside the transaction), if it may not.
async fn address_problem(tx: &mut Tx<'_>, b: &BalancerRow, f: &NodeFields) -> Result<Option<String>> {
    let ip = std::net::Ipv4Addr::from(f.v4).to_string();
    let row = tx.ip_get(b.account_id, &ip).await?;
    let Some(row) = row.filter(|r| r.kind == IpKind::Ipv4 && !r.public && r.region == b.region) else {
        // The hosted API's words for an address outside the private space come first.
        let lead = if ip.starts_with("192.168.") { "Must be" } else { "Must begin with 192.168: it must be" };
        return Ok(Some(format!("{lead} a private IPv4 address of one of your instances in region {}", b.region)));
    };
    // An instance in a pending or accepted service transfer cannot become a back end (spec 4.4:
    // the transfer's conditions hold until it ends); read in this transaction, so an attach and
    // a transfer of the same instance never both succeed.
    if tx.instance_active_transfer(row.instance_id, Timestamp::now()).await?.is_some() {
        return Ok(Some(format!(
            "Instance {} is in a pending or accepted service transfer and cannot be a back end",
            row.instance_id
        )));
    }
    Ok(None)
}

/// Where a problem of a node goes: `nodes[i].<name>` for the `i`th node of a list, `<name>`
/// for a node on its own.
fn node_field(i: Option<usize>, name: &str) -> String {
    match i {
        Some(i) => format!("nodes[{i}].{name}"),
        None => name.to_string(),
    }
}

/// Checks the addresses of nodes in this transaction, each address once; problems go to `p`
/// under each node's field. Returns the nodes refused (by their place in their list).
async fn addresses_refused(
    tx: &mut Tx<'_>,
    b: &BalancerRow,
    nodes: &[(Option<usize>, &NodeFields)],
    p: &mut Problems,
) -> Result<HashSet<Option<usize>>> {
    let mut seen: HashMap<u32, Option<String>> = HashMap::new();
    let mut refused = HashSet::new();
    for &(i, f) in nodes {
        let problem = match seen.get(&f.v4) {
            Some(known) => known.clone(),
            None => {
                let found = address_problem(tx, b, f).await?;
                seen.insert(f.v4, found.clone());
                found
            }
        };
        if let Some(reason) = problem {
            p.add(node_field(i, "address"), reason);
            refused.insert(i);
        }
    }
    Ok(refused)
}

/// Inserts new nodes of a config in one statement per batch, with their events, after checking
/// their addresses; problems go to `p` and then nothing is inserted.
pub(super) async fn insert_nodes(
    tx: &mut Tx<'_>,
    actor: &Actor,
    b: &BalancerRow,
    c: &ConfigRow,
    nodes: &[(Option<usize>, &NodeFields)],
    p: &mut Problems,
) -> Result<Vec<NodeRow>> {
    if !addresses_refused(tx, b, nodes, p).await?.is_empty() {
        return Ok(Vec::new());
    }
    let fields: Vec<&NodeFields> = nodes.iter().map(|(_, f)| *f).collect();
    let rows = match tx.nb_nodes_insert(c.id, b.id, b.account_id, &fields, Timestamp::now()).await {
        Ok(rows) => rows,
        Err(Error::Unique(_)) => {
            // Only a node on its own can meet a label already there: the labels of a list are
            // checked against each other, and its config holds no other nodes by then.
            let i = match nodes {
                [(i, _)] => *i,
                _ => None,
            };
            p.add(node_field(i, "label"), LABEL_TAKEN);
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let events: Vec<NewEvent> =
        rows.iter().map(|n| nb_event(actor, "nodebalancer_node_create", b, Some(node_entity(b, n)))).collect();
    tx.events_insert(&events).await?;
    Ok(rows)
}

/// What a rebuild does to the nodes.
pub(super) struct RebuildPlan {
    update: Vec<(usize, i64, NodeFields)>,
    create: Vec<(usize, NodeFields)>,
    delete: Vec<i64>,
}

/// Checks the node list of a rebuild against the config's current nodes.
pub(super) fn plan_rebuild(p: &mut Problems, existing: &[NodeRow], reqs: &[NodeRequest]) -> RebuildPlan {
    let mut plan = RebuildPlan { update: Vec::new(), create: Vec::new(), delete: Vec::new() };
    let by_id: HashMap<i64, &NodeRow> = existing.iter().map(|n| (n.id, n)).collect();
    let mut labels: HashSet<String> = HashSet::new();
    let mut kept: HashSet<i64> = HashSet::new();
    for (i, r) in reqs.iter().enumerate() {
        let mut np = Problems::new();
        let current = match r.id {
            Some(id) => match by_id.get(&id).copied() {
                Some(n) => {
                    if !kept.insert(id) {
                        np.add("id", "The same node appears twice");
                    }
                    Some(n)
                }
                None => {
                    np.add("id", "No such node in this config");
                    None
                }
            },
            None => None,
        };
        let resolved = validate::resolve_node(&mut np, current.map(|n| &n.f), r);
        if let Some(f) = resolved {
            if !labels.insert(f.label.clone()) {
                np.add("label", LABEL_TAKEN);
            }
            match current {
                Some(n) => plan.update.push((i, n.id, f)),
                None if r.id.is_none() => plan.create.push((i, f)),
                None => {}
            }
        }
        p.extend_prefixed(&format!("nodes[{i}]"), np);
    }
    plan.delete = existing.iter().filter(|n| !kept.contains(&n.id)).map(|n| n.id).collect();
    plan
}

/// Carries out a checked rebuild plan (deletes, then updates, then creates), with events. The
/// deletes and creates are one statement per batch, as are the events of each step.
pub(super) async fn apply_rebuild(
    tx: &mut Tx<'_>,
    actor: &Actor,
    b: &BalancerRow,
    c: &ConfigRow,
    existing: &[NodeRow],
    plan: RebuildPlan,
) -> Result<()> {
    let by_id: HashMap<i64, &NodeRow> = existing.iter().map(|n| (n.id, n)).collect();
    tx.nb_nodes_delete(&plan.delete).await?;
    let gone: Vec<NewEvent> = plan
        .delete
        .iter()
        .filter_map(|id| by_id.get(id))
        .map(|n| nb_event(actor, "nodebalancer_node_delete", b, Some(node_entity(b, n))))
        .collect();
    tx.events_insert(&gone).await?;
    let mut p = Problems::new();
    let moved: Vec<(Option<usize>, &NodeFields)> = plan
        .update
        .iter()
        .filter(|(_, id, f)| by_id.get(id).is_none_or(|o| o.f.v4 != f.v4))
        .map(|(i, _, f)| (Some(*i), f))
        .collect();
    let refused = addresses_refused(tx, b, &moved, &mut p).await?;
    let mut changed: Vec<NewEvent> = Vec::new();
    for (i, id, f) in &plan.update {
        if refused.contains(&Some(*i)) {
            continue;
        }
        match tx.nb_node_update(*id, f, Timestamp::now()).await {
            Ok(n) => {
                if by_id.get(id).is_none_or(|o| o.f != n.f) {
                    changed.push(nb_event(actor, "nodebalancer_node_update", b, Some(node_entity(b, &n))));
                }
            }
            Err(Error::Unique(_)) => p.add(node_field(Some(*i), "label"), LABEL_TAKEN),
            Err(e) => return Err(e),
        }
    }
    tx.events_insert(&changed).await?;
    let create: Vec<(Option<usize>, &NodeFields)> = plan.create.iter().map(|(i, f)| (Some(*i), f)).collect();
    insert_nodes(tx, actor, b, c, &create, &mut p).await?;
    p.finish()
}

impl App {
    pub async fn nodebalancer_node_list(
        &self,
        actor: &Actor,
        nb_id: i64,
        config_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<NodeBalancerNode>> {
        self.lookup_for::<(BalancerRow, ConfigRow)>(actor, Op::NodebalancerNodeList, (nb_id, config_id)).await?;
        let (nodes, results) = self.store.nb_nodes_page(config_id, filter, page.page, page.page_size).await?;
        Ok(Page::new(nodes.iter().map(view::node).collect(), page, results))
    }

    pub async fn nodebalancer_node_get(
        &self,
        actor: &Actor,
        nb_id: i64,
        config_id: i64,
        id: i64,
    ) -> Result<NodeBalancerNode> {
        let n = self
            .lookup_for::<(BalancerRow, NodeRow)>(actor, Op::NodebalancerNodeGet, (nb_id, config_id, id))
            .await?
            .into_inner()
            .1;
        Ok(view::node(&n))
    }

    /// Creates a node (`op` is the operation the request came through: the nodes endpoint or
    /// the walkthrough's form on the config).
    pub async fn nodebalancer_node_create(
        &self,
        actor: &Actor,
        op: Op,
        nb_id: i64,
        config_id: i64,
        input: NodeRequest,
    ) -> Result<NodeBalancerNode> {
        self.lookup_for::<(BalancerRow, ConfigRow)>(actor, op, (nb_id, config_id)).await?;
        let mut p = Problems::new();
        p.check(input.id.is_none(), "id", "A new node's id is given by the server");
        let f = validate::resolve_node(&mut p, None, &input);
        p.finish()?;
        let f = &f.ok_or_else(|| Error::internal("node passed its checks without a value"))?;
        let n = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let c = tx.nb_config_lock(nb_id, config_id).await?.ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    let n = insert_nodes(tx, actor, &b, &c, &[(None, f)], &mut p).await?;
                    p.finish()?;
                    n.into_iter().next().ok_or_else(|| Error::internal("node insert without a node"))
                })
            })
            .await?;
        Ok(view::node(&n))
    }

    pub async fn nodebalancer_node_update(
        &self,
        actor: &Actor,
        nb_id: i64,
        config_id: i64,
        id: i64,
        input: NodeRequest,
    ) -> Result<NodeBalancerNode> {
        self.lookup_for::<(BalancerRow, NodeRow)>(actor, Op::NodebalancerNodeUpdate, (nb_id, config_id, id)).await?;
        let input = &input;
        let n = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    tx.nb_config_lock(nb_id, config_id).await?.ok_or(Error::NotFound)?;
                    let existing = tx.nb_nodes_of_config(config_id).await?;
                    let cur = existing.iter().find(|n| n.id == id).ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    let f = validate::resolve_node(&mut p, Some(&cur.f), input);
                    p.finish()?;
                    let f = f.ok_or_else(|| Error::internal("node passed its checks without a value"))?;
                    if f.v4 != cur.f.v4
                        && let Some(reason) = address_problem(tx, &b, &f).await?
                    {
                        return Err(Error::invalid("address", reason));
                    }
                    let n = tx
                        .nb_node_update(id, &f, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(&nb_event(actor, "nodebalancer_node_update", &b, Some(node_entity(&b, &n))))
                        .await?;
                    Ok(n)
                })
            })
            .await?;
        Ok(view::node(&n))
    }

    pub async fn nodebalancer_node_delete(&self, actor: &Actor, nb_id: i64, config_id: i64, id: i64) -> Result<()> {
        self.lookup_for::<(BalancerRow, NodeRow)>(actor, Op::NodebalancerNodeDelete, (nb_id, config_id, id)).await?;
        self.write(|tx| {
            Box::pin(async move {
                let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                tx.nb_config_lock(nb_id, config_id).await?.ok_or(Error::NotFound)?;
                let existing = tx.nb_nodes_of_config(config_id).await?;
                let n = existing.iter().find(|n| n.id == id).ok_or(Error::NotFound)?;
                tx.nb_nodes_delete(&[id]).await?;
                tx.event_insert(&nb_event(actor, "nodebalancer_node_delete", &b, Some(node_entity(&b, n)))).await?;
                Ok(())
            })
        })
        .await?;
        Ok(())
    }
}
