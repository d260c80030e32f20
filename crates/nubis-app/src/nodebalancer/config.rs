//! Configs of a balancer (one per port): list, get, create, update, delete, and rebuild (the
//! config and its whole node list in one request).

use nubis_model::Problems;
use nubis_model::filter::Filter;
use nubis_model::nodebalancer::NodeBalancerConfig;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::nodebalancers::{BalancerRow, ConfigFields, ConfigRow, NodeFields};

use super::validate::{self, ConfigRequest};
use super::{config_entity, nb_event, node, view};
use crate::App;
use crate::auth::{Actor, Op};

const PORT_TAKEN: &str = "Port is already used by another config of this NodeBalancer";

/// Inserts a config and its nodes (events included); address problems of the nodes are added
/// to `p` as `nodes[i].address`.
pub(super) async fn insert_config(
    tx: &mut Tx<'_>,
    actor: &Actor,
    b: &BalancerRow,
    fields: &ConfigFields,
    nodes: &[NodeFields],
    p: &mut Problems,
) -> Result<ConfigRow> {
    let c = tx
        .nb_config_insert(b.id, b.account_id, fields, Timestamp::now())
        .await
        .map_err(|e| e.unique_as("port", PORT_TAKEN))?;
    tx.event_insert(&nb_event(actor, "nodebalancer_config_create", b, Some(config_entity(b, &c)))).await?;
    let nodes: Vec<(Option<usize>, &NodeFields)> = nodes.iter().enumerate().map(|(i, n)| (Some(i), n)).collect();
    node::insert_nodes(tx, actor, b, &c, &nodes, p).await?;
    Ok(c)
}

impl App {
    /// The record of a config with its nodes' health as stored now.
    async fn config_view(&self, c: &ConfigRow) -> Result<NodeBalancerConfig> {
        let status = self.store.nb_node_status_counts(&[c.id]).await?;
        Ok(view::config(c, &status))
    }

    pub async fn nodebalancer_config_list(
        &self,
        actor: &Actor,
        nb_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<NodeBalancerConfig>> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerConfigList, nb_id).await?.into_inner();
        let (configs, results) = self.store.nb_configs_page(nb_id, filter, page.page, page.page_size).await?;
        let ids: Vec<i64> = configs.iter().map(|c| c.id).collect();
        let status = self.store.nb_node_status_counts(&ids).await?;
        Ok(Page::new(configs.iter().map(|c| view::config(c, &status)).collect(), page, results))
    }

    pub async fn nodebalancer_config_get(&self, actor: &Actor, nb_id: i64, id: i64) -> Result<NodeBalancerConfig> {
        let (_, c) = self
            .lookup_for::<(BalancerRow, ConfigRow)>(actor, Op::NodebalancerConfigGet, (nb_id, id))
            .await?
            .into_inner();
        self.config_view(&c).await
    }

    /// Creates a config (and the nodes it names, if any); the balancer listens on its port.
    pub async fn nodebalancer_config_create(
        &self,
        actor: &Actor,
        nb_id: i64,
        input: ConfigRequest,
    ) -> Result<NodeBalancerConfig> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerConfigCreate, nb_id).await?.into_inner();
        let mut p = Problems::new();
        let fields = validate::resolve_config(&mut p, None, &input);
        let nodes = input.nodes.as_deref().map(|n| node::resolve_new_nodes(&mut p, n)).unwrap_or_default();
        p.finish()?;
        let (fields, nodes) = (&fields, &nodes);
        let c = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    let c = insert_config(tx, actor, &b, fields, nodes, &mut p).await?;
                    p.finish()?;
                    Ok(c)
                })
            })
            .await?;
        self.config_view(&c).await
    }

    /// Updates the fields a request names; the others keep their values. Changing the port or
    /// the protocol moves the listener.
    pub async fn nodebalancer_config_update(
        &self,
        actor: &Actor,
        nb_id: i64,
        id: i64,
        input: ConfigRequest,
    ) -> Result<NodeBalancerConfig> {
        self.lookup_for::<(BalancerRow, ConfigRow)>(actor, Op::NodebalancerConfigUpdate, (nb_id, id))
            .await?
            .into_inner();
        if input.nodes.is_some() {
            return Err(Error::invalid(
                "nodes",
                "Nodes are changed through the rebuild operation or the nodes endpoints",
            ));
        }
        let input = &input;
        let c = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let cur = tx.nb_config_lock(nb_id, id).await?.ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    let fields = validate::resolve_config(&mut p, Some(&cur.f), input);
                    p.finish()?;
                    let c = tx
                        .nb_config_update(nb_id, id, &fields, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("port", PORT_TAKEN))?;
                    tx.event_insert(&nb_event(actor, "nodebalancer_config_update", &b, Some(config_entity(&b, &c))))
                        .await?;
                    Ok(c)
                })
            })
            .await?;
        self.config_view(&c).await
    }

    /// Deletes a config and its nodes; the balancer stops listening on its port.
    pub async fn nodebalancer_config_delete(&self, actor: &Actor, nb_id: i64, id: i64) -> Result<()> {
        self.lookup_for::<(BalancerRow, ConfigRow)>(actor, Op::NodebalancerConfigDelete, (nb_id, id))
            .await?
            .into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let c = tx.nb_config_lock(nb_id, id).await?.ok_or(Error::NotFound)?;
                tx.event_insert(&nb_event(actor, "nodebalancer_config_delete", &b, Some(config_entity(&b, &c))))
                    .await?;
                tx.nb_config_delete(id).await?;
                Ok(())
            })
        })
        .await?;
        Ok(())
    }

    /// Rebuild: updates the config's fields like an update, and makes its nodes exactly those
    /// of the request (nodes with an `id` are updated, nodes without one are created, current
    /// nodes left out are deleted), in one transaction.
    pub async fn nodebalancer_config_rebuild(
        &self,
        actor: &Actor,
        nb_id: i64,
        id: i64,
        input: ConfigRequest,
    ) -> Result<NodeBalancerConfig> {
        self.lookup_for::<(BalancerRow, ConfigRow)>(actor, Op::NodebalancerConfigRebuild, (nb_id, id))
            .await?
            .into_inner();
        if input.nodes.is_none() {
            return Err(Error::invalid("nodes", "Nodes are required"));
        }
        let input = &input;
        let c = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.nodebalancer_lock(nb_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let cur = tx.nb_config_lock(nb_id, id).await?.ok_or(Error::NotFound)?;
                    let mut p = Problems::new();
                    let fields = validate::resolve_config(&mut p, Some(&cur.f), input);
                    let existing = tx.nb_nodes_of_config(id).await?;
                    let plan = node::plan_rebuild(&mut p, &existing, input.nodes.as_deref().unwrap_or_default());
                    p.finish()?;
                    let c = tx
                        .nb_config_update(nb_id, id, &fields, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("port", PORT_TAKEN))?;
                    tx.event_insert(&nb_event(actor, "nodebalancer_config_update", &b, Some(config_entity(&b, &c))))
                        .await?;
                    node::apply_rebuild(tx, actor, &b, &c, &existing, plan).await?;
                    Ok(c)
                })
            })
            .await?;
        self.config_view(&c).await
    }
}
