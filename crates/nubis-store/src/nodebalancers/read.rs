//! Balancer reads: one record by key, pages of the lists, traffic, and the data plane's whole
//! desired state.

use nubis_model::Result;
use nubis_model::filter::Filter;

use super::*;
use crate::Store;
use crate::db::query;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Sql, Visibility, push_ids};

/// Traffic of one 5-minute period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrafficSample {
    pub bucket: i64,
    pub connections: i64,
    pub bytes_in: i64,
    pub bytes_out: i64,
}

impl Store {
    /// Every balancer, config and node of every account (the data plane's desired state); the
    /// balancers of canceled accounts are left out (they stop listening).
    pub async fn nodebalancers_everything(&self) -> Result<(Vec<BalancerRow>, Vec<ConfigRow>, Vec<NodeRow>)> {
        let b = query(format!(
            "SELECT {NB_COLS} FROM nodebalancers WHERE account_id NOT IN \
             (SELECT account_id FROM account_billing WHERE canceled IS NOT NULL) ORDER BY id"
        ))
        .fetch_all(self.r())
        .await?;
        let c = query(format!("SELECT {CFG_COLS} FROM nodebalancer_configs ORDER BY id")).fetch_all(self.r()).await?;
        let n = query(format!("SELECT {NODE_COLS} FROM nodebalancer_nodes ORDER BY id")).fetch_all(self.r()).await?;
        Ok((
            b.iter().map(balancer).collect::<Result<_>>()?,
            c.iter().map(config).collect::<Result<_>>()?,
            n.iter().map(node).collect::<Result<_>>()?,
        ))
    }

    /// A balancer's traffic per 5-minute period since `since_bucket`, oldest first.
    pub async fn nb_traffic_since(&self, nodebalancer_id: i64, since_bucket: i64) -> Result<Vec<TrafficSample>> {
        let rows = query(
            "SELECT bucket, connections, bytes_in, bytes_out FROM nodebalancer_traffic \
             WHERE nodebalancer_id = $1 AND bucket >= $2 ORDER BY bucket",
        )
        .bind(nodebalancer_id)
        .bind(since_bucket)
        .fetch_all(self.r())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TrafficSample {
                    bucket: r.i64("bucket")?,
                    connections: r.i64("connections")?,
                    bytes_in: r.i64("bytes_in")?,
                    bytes_out: r.i64("bytes_out")?,
                })
            })
            .collect()
    }

    /// The ids of the balancers with a node on one of the instance's private addresses.
    pub async fn nb_ids_of_instance(&self, instance_id: i64) -> Result<Vec<i64>> {
        query(
            "SELECT DISTINCT n.nodebalancer_id AS id FROM nodebalancer_nodes n JOIN ip_addresses a ON a.v4 = n.v4 \
             WHERE a.instance_id = $1 AND a.public = $2 ORDER BY id",
        )
        .bind(instance_id)
        .bind(false)
        .fetch_column_i64(self.r())
        .await
    }
}

/// The columns of a balancer as the lists read them (alias `b`).
macro_rules! nb_list_cols {
    () => {
        "SELECT b.id, b.account_id, b.label, b.region, b.ipv4, b.v4, b.ipv6, b.client_conn_throttle, \
         b.client_udp_sess_throttle, b.tags, b.created, b.updated "
    };
}

/// The fields of a balancer list other than its id.
macro_rules! nb_fields {
    () => {
        [
            Column { path: "label", expr: "b.label", kind: ColKind::Text },
            Column { path: "region", expr: "b.region", kind: ColKind::Text },
            Column { path: "ipv4", expr: "b.ipv4", kind: ColKind::Text },
            Column { path: "tags", expr: "b.tags", kind: ColKind::Tags { list: "nodebalancers", id: "b.id" } },
        ]
    };
}

const NB_LIST: Listing<'static> = Listing {
    select: concat!(nb_list_cols!(), "FROM nodebalancers b"),
    from: "FROM nodebalancers b",
    scope: "b.account_id",
    and: "",
    cols: &{
        let [label, region, ipv4, tags] = nb_fields!();
        [Column { path: "id", expr: "b.id", kind: ColKind::Int }, label, region, ipv4, tags]
    },
    order: "b.id",
    kept_count: Some("nodebalancers"),
    indexed: &["tags", "label", "region", "ipv4"],
};

/// The rows of `address_balancers` (migration 48) of one account and private address
/// ([`address_scope`]), in balancer id order. The rows carry their balancer's label and region
/// (migration 50), so the orders by them and their filters read the rows' own indexes and
/// fences; other filters are read with the account's balancer indexes, through `b.account_id`
/// in the visibility's condition.
const ADDRESS_NB_LIST: Listing<'static> = Listing {
    select: concat!(nb_list_cols!(), "FROM address_balancers x JOIN nodebalancers b ON b.id = x.nodebalancer_id"),
    from: "FROM address_balancers x JOIN nodebalancers b ON b.id = x.nodebalancer_id",
    scope: "x.scope",
    and: "",
    cols: &{
        let [_, _, ipv4, tags] = nb_fields!();
        [
            Column { path: "id", expr: "x.nodebalancer_id", kind: ColKind::Int },
            Column { path: "label", expr: "x.label", kind: ColKind::Text },
            Column { path: "region", expr: "x.region", kind: ColKind::Text },
            ipv4,
            tags,
        ]
    },
    order: "x.nodebalancer_id",
    kept_count: Some("address_balancers"),
    indexed: &["tags", "label", "region", "ipv4"],
};

/// The scope of an account's balancers on a private address in `address_balancers`, as its
/// triggers compute it.
fn address_scope(account_id: i64, v4: i64) -> i64 {
    account_id.wrapping_mul(1 << 32).wrapping_add(v4)
}

const CFG_LIST: Listing<'static> = Listing {
    select: "SELECT c.id, c.nodebalancer_id, c.account_id, c.label, c.port, c.protocol, c.algorithm, c.stickiness, \
             c.check_type, c.check_interval, c.check_timeout, c.check_attempts, c.check_path, c.check_body, \
             c.check_passive, c.proxy_protocol, c.cipher_suite, c.ssl_cert, c.ssl_key, c.ssl_commonname, \
             c.ssl_fingerprint, c.udp_check_port, c.udp_session_timeout, c.created, c.updated \
             FROM nodebalancer_configs c",
    from: "FROM nodebalancer_configs c",
    scope: "c.nodebalancer_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "c.id", kind: ColKind::Int },
        Column { path: "port", expr: "c.port", kind: ColKind::Int },
        Column { path: "protocol", expr: "c.protocol", kind: ColKind::Text },
        Column { path: "algorithm", expr: "c.algorithm", kind: ColKind::Text },
        Column { path: "stickiness", expr: "c.stickiness", kind: ColKind::Text },
        Column { path: "check", expr: "c.check_type", kind: ColKind::Text },
    ],
    order: "c.id",
    kept_count: Some("nodebalancer_configs"),
    indexed: &["port", "protocol", "algorithm", "stickiness", "check"],
};

const NODE_LIST: Listing<'static> = Listing {
    select: "SELECT n.id, n.config_id, n.nodebalancer_id, n.account_id, n.label, n.address, n.v4, n.port, n.weight, \
             n.mode, n.status, n.created, n.updated FROM nodebalancer_nodes n",
    from: "FROM nodebalancer_nodes n",
    scope: "n.config_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "n.id", kind: ColKind::Int },
        Column { path: "label", expr: "n.label", kind: ColKind::Text },
        Column { path: "address", expr: "n.address", kind: ColKind::Text },
        Column { path: "status", expr: "n.status", kind: ColKind::Text },
        Column { path: "mode", expr: "n.mode", kind: ColKind::Text },
        Column { path: "weight", expr: "n.weight", kind: ColKind::Int },
    ],
    order: "n.id",
    kept_count: Some("nodebalancer_nodes"),
    indexed: &["label", "address", "status", "mode", "weight"],
};

impl Store {
    /// One balancer of an account.
    pub async fn nodebalancer_get(&self, account_id: i64, id: i64) -> Result<Option<BalancerRow>> {
        let sql = format!("SELECT {NB_COLS} FROM nodebalancers WHERE id = $1 AND account_id = $2");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(balancer).transpose()
    }

    /// Some balancers of an account by id, in id order.
    pub async fn nodebalancers_by_ids(&self, account_id: i64, ids: &[i64]) -> Result<Vec<BalancerRow>> {
        let mut sql = Sql::new(&format!("SELECT {NB_COLS} FROM nodebalancers WHERE account_id = "));
        sql.bind(crate::sql::Val::I64(account_id)).push(" AND id IN ");
        push_ids(&mut sql, ids);
        sql.push(" ORDER BY id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(balancer).collect()
    }

    /// One page of an account's balancers (only those `grant_user` holds a grant on, when given)
    /// and how many the list has.
    pub async fn nodebalancers_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<BalancerRow>, u64)> {
        let v = Visibility { scope_id: account_id, grant: grant_user.map(|u| (u, "nodebalancer", "b.id")), and: None };
        let (rows, total) = self.fetch_page(&NB_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(balancer).collect::<Result<_>>()?, total))
    }

    /// A page of the account's balancers that have a back end on one of the instance's private
    /// addresses (those `grant_user` holds a grant on, when given), and how many there are.
    /// An instance has one private address: its balancers are the rows of `address_balancers`
    /// (migration 48) for the account and that address, counted and located like any list;
    /// should it have more, the balancers are found from the nodes on each.
    pub async fn nodebalancers_of_instance_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        instance_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<BalancerRow>, u64)> {
        let private = query("SELECT v4 FROM ip_addresses WHERE instance_id = $1 AND public = $2 AND v4 IS NOT NULL")
            .bind(instance_id)
            .bind(false)
            .fetch_column_i64(self.r())
            .await?;
        let grant = grant_user.map(|u| (u, "nodebalancer", "b.id"));
        let (rows, total) = match private[..] {
            [] => return Ok((Vec::new(), 0)),
            [v4] => {
                // A filter reads through the account's balancer indexes (`b.account_id`).
                let and = filter.cond.is_some().then_some((" AND b.account_id = ", account_id, ""));
                let v = Visibility { scope_id: address_scope(account_id, v4), grant, and };
                self.fetch_page(&ADDRESS_NB_LIST, &v, filter, page, page_size).await?
            }
            _ => {
                let of_instance = (
                    " AND b.id IN (SELECT n.nodebalancer_id FROM ip_addresses a JOIN nodebalancer_nodes n \
                      ON n.v4 = a.v4 WHERE a.public = FALSE AND a.instance_id = ",
                    instance_id,
                    ")",
                );
                let v = Visibility { scope_id: account_id, grant, and: Some(of_instance) };
                self.fetch_page(&NB_LIST, &v, filter, page, page_size).await?
            }
        };
        Ok((rows.iter().map(balancer).collect::<Result<_>>()?, total))
    }

    /// Bytes (in, out) of some balancers since `since_bucket`.
    pub async fn nb_transfer_of(
        &self,
        ids: &[i64],
        since_bucket: i64,
    ) -> Result<std::collections::HashMap<i64, (i64, i64)>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let mut sql = Sql::new(
            "SELECT nodebalancer_id AS id, CAST(SUM(bytes_in) AS BIGINT) AS bin, CAST(SUM(bytes_out) AS BIGINT) AS bout \
             FROM nodebalancer_traffic WHERE bucket >= ",
        );
        sql.bind(crate::sql::Val::I64(since_bucket)).push(" AND nodebalancer_id IN ");
        push_ids(&mut sql, ids);
        sql.push(" GROUP BY nodebalancer_id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(|r| Ok((r.i64("id")?, (r.i64("bin")?, r.i64("bout")?)))).collect()
    }

    /// One config of a balancer.
    pub async fn nb_config_get(&self, nodebalancer_id: i64, id: i64) -> Result<Option<ConfigRow>> {
        let sql = format!("SELECT {CFG_COLS} FROM nodebalancer_configs WHERE id = $1 AND nodebalancer_id = $2");
        let row = query(sql).bind(id).bind(nodebalancer_id).fetch_optional(self.r()).await?;
        row.as_ref().map(config).transpose()
    }

    /// One page of a balancer's configs and how many it has.
    pub async fn nb_configs_page(
        &self,
        nodebalancer_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<ConfigRow>, u64)> {
        let v = Visibility { scope_id: nodebalancer_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&CFG_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(config).collect::<Result<_>>()?, total))
    }

    /// How many nodes of each of some configs are up and how many down, as `(config, up, down)`
    /// for the configs that have any: read from the counts the writes keep
    /// (`nodebalancer_nodes:<status>`, migration 75), whatever the number of nodes.
    pub async fn nb_node_status_counts(&self, config_ids: &[i64]) -> Result<Vec<(i64, i64, i64)>> {
        if config_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = Sql::new(
            "SELECT account_id AS config_id, \
             CAST(COALESCE(SUM(CASE WHEN kind = 'nodebalancer_nodes:UP' THEN n ELSE 0 END), 0) AS BIGINT) AS up, \
             CAST(COALESCE(SUM(CASE WHEN kind = 'nodebalancer_nodes:DOWN' THEN n ELSE 0 END), 0) AS BIGINT) AS down \
             FROM row_counts WHERE kind IN ('nodebalancer_nodes:UP', 'nodebalancer_nodes:DOWN') AND account_id IN ",
        );
        push_ids(&mut sql, config_ids);
        sql.push(" GROUP BY account_id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(|r| Ok((r.i64("config_id")?, r.i64("up")?, r.i64("down")?))).collect()
    }

    /// The nodes of some configs, in id order.
    pub async fn nb_nodes_of_configs(&self, config_ids: &[i64]) -> Result<Vec<NodeRow>> {
        let select = format!("SELECT {NODE_COLS} FROM nodebalancer_nodes");
        self.fetch_in(&select, "config_id", crate::sql::Keys::Ids(config_ids), "id", node).await
    }

    /// One node of a config.
    pub async fn nb_node_get(&self, config_id: i64, id: i64) -> Result<Option<NodeRow>> {
        let sql = format!("SELECT {NODE_COLS} FROM nodebalancer_nodes WHERE id = $1 AND config_id = $2");
        let row = query(sql).bind(id).bind(config_id).fetch_optional(self.r()).await?;
        row.as_ref().map(node).transpose()
    }

    /// One page of a config's nodes and how many it has.
    pub async fn nb_nodes_page(
        &self,
        config_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<NodeRow>, u64)> {
        let v = Visibility { scope_id: config_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&NODE_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(node).collect::<Result<_>>()?, total))
    }
}
