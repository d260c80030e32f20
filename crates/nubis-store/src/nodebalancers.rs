//! Load balancers, their configs (one per port, unique by constraint) and nodes (labels unique
//! per config by constraint). A config's `ssl_key` is stored for the data plane; the row types
//! that carry it have no `Debug`, so it cannot reach a log line by accident.

use crate::db::Row;
use crate::sql::{ColKind, Column, Listing, Sql, Visibility, push_ids};
use nubis_model::filter::Filter;
use nubis_model::{Error, Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct BalancerRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub region: String,
    pub ipv4: String,
    pub v4: u32,
    pub ipv6: Option<String>,
    pub client_conn_throttle: i64,
    pub tags: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// Everything of a config a client or the data plane sets (enums as their API names).
#[derive(Clone, PartialEq)]
pub struct ConfigFields {
    pub label: Option<String>,
    pub port: i64,
    pub protocol: String,
    pub algorithm: String,
    pub stickiness: String,
    pub check: String,
    pub check_interval: i64,
    pub check_timeout: i64,
    pub check_attempts: i64,
    pub check_path: String,
    pub check_body: String,
    pub check_passive: bool,
    pub proxy_protocol: String,
    pub cipher_suite: String,
    pub ssl_cert: Option<String>,
    /// Secret: never returned, never logged.
    pub ssl_key: Option<String>,
    pub ssl_commonname: String,
    pub ssl_fingerprint: String,
}

#[derive(Clone, PartialEq)]
pub struct ConfigRow {
    pub id: i64,
    pub nodebalancer_id: i64,
    pub account_id: i64,
    pub f: ConfigFields,
    pub created: Timestamp,
    pub updated: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeFields {
    pub label: String,
    /// `<ipv4>:<port>` as the API shows it.
    pub address: String,
    pub v4: u32,
    pub port: i64,
    pub weight: i64,
    pub mode: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub id: i64,
    pub config_id: i64,
    pub nodebalancer_id: i64,
    pub account_id: i64,
    pub f: NodeFields,
    pub status: String,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub struct NewBalancer<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub region: &'a str,
    pub ipv4: &'a str,
    pub v4: u32,
    pub ipv6: Option<&'a str>,
    pub client_conn_throttle: i64,
    pub tags: &'a [String],
    pub created: Timestamp,
}

const NB_COLS: &str = "id, account_id, label, region, ipv4, v4, ipv6, client_conn_throttle, tags, created, updated";
const CFG_COLS: &str = "id, nodebalancer_id, account_id, label, port, protocol, algorithm, stickiness, check_type, \
                        check_interval, check_timeout, check_attempts, check_path, check_body, check_passive, \
                        proxy_protocol, cipher_suite, ssl_cert, ssl_key, ssl_commonname, ssl_fingerprint, created, \
                        updated";
const NODE_COLS: &str =
    "id, config_id, nodebalancer_id, account_id, label, address, v4, port, weight, mode, status, created, updated";

fn balancer(r: &Row) -> Result<BalancerRow> {
    Ok(BalancerRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        region: r.str("region")?,
        ipv4: r.str("ipv4")?,
        v4: r.i64("v4")? as u32,
        ipv6: r.opt_str("ipv6")?,
        client_conn_throttle: r.i64("client_conn_throttle")?,
        tags: serde_json::from_str(&r.str("tags")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn config(r: &Row) -> Result<ConfigRow> {
    Ok(ConfigRow {
        id: r.i64("id")?,
        nodebalancer_id: r.i64("nodebalancer_id")?,
        account_id: r.i64("account_id")?,
        f: ConfigFields {
            label: r.opt_str("label")?,
            port: r.i64("port")?,
            protocol: r.str("protocol")?,
            algorithm: r.str("algorithm")?,
            stickiness: r.str("stickiness")?,
            check: r.str("check_type")?,
            check_interval: r.i64("check_interval")?,
            check_timeout: r.i64("check_timeout")?,
            check_attempts: r.i64("check_attempts")?,
            check_path: r.str("check_path")?,
            check_body: r.str("check_body")?,
            check_passive: r.bool("check_passive")?,
            proxy_protocol: r.str("proxy_protocol")?,
            cipher_suite: r.str("cipher_suite")?,
            ssl_cert: r.opt_str("ssl_cert")?,
            ssl_key: r.opt_str("ssl_key")?,
            ssl_commonname: r.str("ssl_commonname")?,
            ssl_fingerprint: r.str("ssl_fingerprint")?,
        },
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn node(r: &Row) -> Result<NodeRow> {
    Ok(NodeRow {
        id: r.i64("id")?,
        config_id: r.i64("config_id")?,
        nodebalancer_id: r.i64("nodebalancer_id")?,
        account_id: r.i64("account_id")?,
        f: NodeFields {
            label: r.str("label")?,
            address: r.str("address")?,
            v4: r.i64("v4")? as u32,
            port: r.i64("port")?,
            weight: r.i64("weight")?,
            mode: r.str("mode")?,
        },
        status: r.str("status")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn tags_json(tags: &[String]) -> Result<String> {
    serde_json::to_string(tags).map_err(Error::internal)
}

impl Tx<'_> {
    /// Inserts a balancer; a label taken in the account, or an address taken (anywhere), is
    /// `Error::Unique`.
    pub async fn nodebalancer_insert(&mut self, n: &NewBalancer<'_>) -> Result<BalancerRow> {
        let sql = format!(
            "INSERT INTO nodebalancers (account_id, label, region, ipv4, v4, ipv6, client_conn_throttle, tags, \
             created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING {NB_COLS}"
        );
        let row = query(sql)
            .bind(n.account_id)
            .bind(n.label)
            .bind(n.region)
            .bind(n.ipv4)
            .bind(i64::from(n.v4))
            .bind(n.ipv6)
            .bind(n.client_conn_throttle)
            .bind(tags_json(n.tags)?)
            .bind(n.created)
            .fetch_one(self.h())
            .await?;
        balancer(&row)
    }

    /// A balancer of the account, read inside the transaction with its row lock taken (a no-op
    /// update), so that a change below it and its deletion conflict instead of interleaving.
    pub async fn nodebalancer_lock(&mut self, id: i64, account_id: i64) -> Result<Option<BalancerRow>> {
        let sql =
            format!("UPDATE nodebalancers SET label = label WHERE id = $1 AND account_id = $2 RETURNING {NB_COLS}");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(balancer).transpose()
    }

    /// True when the account has a balancer with this label (inside the transaction).
    pub async fn nodebalancer_label_taken(&mut self, account_id: i64, label: &str) -> Result<bool> {
        let n = query("SELECT COUNT(*) AS n FROM nodebalancers WHERE account_id = $1 AND label = $2")
            .bind(account_id)
            .bind(label)
            .fetch_i64(self.h())
            .await?;
        Ok(n > 0)
    }

    pub async fn nodebalancer_update(
        &mut self,
        id: i64,
        label: &str,
        client_conn_throttle: i64,
        tags: &[String],
        now: Timestamp,
    ) -> Result<BalancerRow> {
        let sql = format!(
            "UPDATE nodebalancers SET label = $2, client_conn_throttle = $3, tags = $4, updated = $5 WHERE id = $1 \
             RETURNING {NB_COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(label)
            .bind(client_conn_throttle)
            .bind(tags_json(tags)?)
            .bind(now)
            .fetch_one(self.h())
            .await?;
        balancer(&row)
    }

    /// Deletes a balancer with its configs, nodes and traffic counters.
    pub async fn nodebalancer_delete(&mut self, id: i64) -> Result<()> {
        for sql in [
            "DELETE FROM nodebalancer_nodes WHERE nodebalancer_id = $1",
            "DELETE FROM nodebalancer_configs WHERE nodebalancer_id = $1",
            "DELETE FROM nodebalancer_traffic WHERE nodebalancer_id = $1",
            "DELETE FROM nodebalancers WHERE id = $1",
        ] {
            query(sql).bind(id).execute(self.h()).await?;
        }
        Ok(())
    }

    /// Inserts a config; a port the balancer already has is `Error::Unique`.
    pub async fn nb_config_insert(
        &mut self,
        nodebalancer_id: i64,
        account_id: i64,
        f: &ConfigFields,
        now: Timestamp,
    ) -> Result<ConfigRow> {
        let sql = format!(
            "INSERT INTO nodebalancer_configs (nodebalancer_id, account_id, label, port, protocol, algorithm, \
             stickiness, check_type, check_interval, check_timeout, check_attempts, check_path, check_body, \
             check_passive, proxy_protocol, cipher_suite, ssl_cert, ssl_key, ssl_commonname, ssl_fingerprint, \
             created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
             $18, $19, $20, $21, $21) RETURNING {CFG_COLS}"
        );
        let q = query(sql).bind(nodebalancer_id).bind(account_id);
        let row = bind_config(q, f).bind(now).fetch_one(self.h()).await?;
        config(&row)
    }

    /// Writes every field of a config; a port the balancer already has is `Error::Unique`.
    pub async fn nb_config_update(
        &mut self,
        nodebalancer_id: i64,
        id: i64,
        f: &ConfigFields,
        now: Timestamp,
    ) -> Result<ConfigRow> {
        let sql = format!(
            "UPDATE nodebalancer_configs SET label = $3, port = $4, protocol = $5, algorithm = $6, stickiness = $7, \
             check_type = $8, check_interval = $9, check_timeout = $10, check_attempts = $11, check_path = $12, \
             check_body = $13, check_passive = $14, proxy_protocol = $15, cipher_suite = $16, ssl_cert = $17, \
             ssl_key = $18, ssl_commonname = $19, ssl_fingerprint = $20, updated = $21 WHERE id = $1 AND \
             nodebalancer_id = $2 RETURNING {CFG_COLS}"
        );
        let q = query(sql).bind(id).bind(nodebalancer_id);
        let row = bind_config(q, f).bind(now).fetch_one(self.h()).await?;
        config(&row)
    }

    /// A config of a balancer, read inside the transaction with its row lock taken.
    pub async fn nb_config_lock(&mut self, nodebalancer_id: i64, id: i64) -> Result<Option<ConfigRow>> {
        let sql = format!(
            "UPDATE nodebalancer_configs SET port = port WHERE id = $1 AND nodebalancer_id = $2 RETURNING {CFG_COLS}"
        );
        let row = query(sql).bind(id).bind(nodebalancer_id).fetch_optional(self.h()).await?;
        row.as_ref().map(config).transpose()
    }

    /// Deletes a config and its nodes.
    pub async fn nb_config_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM nodebalancer_nodes WHERE config_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM nodebalancer_configs WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// The nodes of a config, read inside the transaction, in id order.
    pub async fn nb_nodes_of_config(&mut self, config_id: i64) -> Result<Vec<NodeRow>> {
        let sql = format!("SELECT {NODE_COLS} FROM nodebalancer_nodes WHERE config_id = $1 ORDER BY id");
        let rows = query(sql).bind(config_id).fetch_all(self.h()).await?;
        rows.iter().map(node).collect()
    }

    /// Inserts a node (status `unknown`); a label the config already has is `Error::Unique`.
    pub async fn nb_node_insert(
        &mut self,
        config_id: i64,
        nodebalancer_id: i64,
        account_id: i64,
        f: &NodeFields,
        now: Timestamp,
    ) -> Result<NodeRow> {
        let sql = format!(
            "INSERT INTO nodebalancer_nodes (config_id, nodebalancer_id, account_id, label, address, v4, port, \
             weight, mode, status, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'unknown', $10, \
             $10) RETURNING {NODE_COLS}"
        );
        let row = query(sql)
            .bind(config_id)
            .bind(nodebalancer_id)
            .bind(account_id)
            .bind(f.label.as_str())
            .bind(f.address.as_str())
            .bind(i64::from(f.v4))
            .bind(f.port)
            .bind(f.weight)
            .bind(f.mode.as_str())
            .bind(now)
            .fetch_one(self.h())
            .await?;
        node(&row)
    }

    /// Writes a node's fields; a new address makes its health `unknown` until checked again.
    pub async fn nb_node_update(&mut self, id: i64, f: &NodeFields, now: Timestamp) -> Result<NodeRow> {
        let sql = format!(
            "UPDATE nodebalancer_nodes SET status = CASE WHEN address = $3 THEN status ELSE 'unknown' END, \
             label = $2, address = $3, v4 = $4, port = $5, weight = $6, mode = $7, updated = $8 WHERE id = $1 \
             RETURNING {NODE_COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(f.label.as_str())
            .bind(f.address.as_str())
            .bind(i64::from(f.v4))
            .bind(f.port)
            .bind(f.weight)
            .bind(f.mode.as_str())
            .bind(now)
            .fetch_one(self.h())
            .await?;
        node(&row)
    }

    pub async fn nb_node_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM nodebalancer_nodes WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Records a node's health as the data plane observed it; false when the node is gone.
    pub async fn nb_node_set_status(&mut self, config_id: i64, id: i64, status: &str) -> Result<bool> {
        let n = query("UPDATE nodebalancer_nodes SET status = $3 WHERE id = $1 AND config_id = $2 AND status <> $3")
            .bind(id)
            .bind(config_id)
            .bind(status)
            .execute(self.h())
            .await?;
        Ok(n > 0)
    }

    /// Adds a balancer's traffic to its account's transfer of the month starting at `month`, in the
    /// balancer's region (nothing when the balancer is gone).
    pub async fn account_transfer_add(
        &mut self,
        nodebalancer_id: i64,
        month: i64,
        bytes_in: i64,
        bytes_out: i64,
    ) -> Result<()> {
        query(
            "INSERT INTO account_transfer (account_id, region, month, bytes_in, bytes_out) \
             SELECT account_id, region, $2, $3, $4 FROM nodebalancers WHERE id = $1 \
             ON CONFLICT (account_id, month, region) DO UPDATE SET \
             bytes_in = account_transfer.bytes_in + excluded.bytes_in, \
             bytes_out = account_transfer.bytes_out + excluded.bytes_out",
        )
        .bind(nodebalancer_id)
        .bind(month)
        .bind(bytes_in)
        .bind(bytes_out)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Adds traffic to a balancer's 5-minute period `bucket` (nothing when the balancer is gone).
    pub async fn nb_traffic_add(
        &mut self,
        nodebalancer_id: i64,
        bucket: i64,
        connections: i64,
        bytes_in: i64,
        bytes_out: i64,
    ) -> Result<()> {
        query(
            "INSERT INTO nodebalancer_traffic (nodebalancer_id, bucket, connections, bytes_in, bytes_out) \
             SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM nodebalancers WHERE id = $1) \
             ON CONFLICT (nodebalancer_id, bucket) DO UPDATE SET \
             connections = nodebalancer_traffic.connections + excluded.connections, \
             bytes_in = nodebalancer_traffic.bytes_in + excluded.bytes_in, \
             bytes_out = nodebalancer_traffic.bytes_out + excluded.bytes_out",
        )
        .bind(nodebalancer_id)
        .bind(bucket)
        .bind(connections)
        .bind(bytes_in)
        .bind(bytes_out)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// The ids of the balancer nodes whose address is a private address of the instance.
    pub async fn nb_nodes_of_instance(&mut self, instance_id: i64) -> Result<Vec<i64>> {
        query(
            "SELECT n.id FROM nodebalancer_nodes n JOIN ip_addresses a ON a.v4 = n.v4 \
             WHERE a.instance_id = $1 AND a.public = $2 ORDER BY n.id",
        )
        .bind(instance_id)
        .bind(false)
        .fetch_column_i64(self.h())
        .await
    }
}

fn bind_config(q: crate::db::Query, f: &ConfigFields) -> crate::db::Query {
    q.bind(f.label.as_deref())
        .bind(f.port)
        .bind(f.protocol.as_str())
        .bind(f.algorithm.as_str())
        .bind(f.stickiness.as_str())
        .bind(f.check.as_str())
        .bind(f.check_interval)
        .bind(f.check_timeout)
        .bind(f.check_attempts)
        .bind(f.check_path.as_str())
        .bind(f.check_body.as_str())
        .bind(f.check_passive)
        .bind(f.proxy_protocol.as_str())
        .bind(f.cipher_suite.as_str())
        .bind(f.ssl_cert.as_deref())
        .bind(f.ssl_key.as_deref())
        .bind(f.ssl_commonname.as_str())
        .bind(f.ssl_fingerprint.as_str())
}

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

const NB_LIST: Listing<'static> = Listing {
    select: "SELECT b.id, b.account_id, b.label, b.region, b.ipv4, b.v4, b.ipv6, b.client_conn_throttle, b.tags, \
             b.created, b.updated FROM nodebalancers b",
    from: "FROM nodebalancers b",
    scope: "b.account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "b.id", kind: ColKind::Int },
        Column { path: "label", expr: "b.label", kind: ColKind::Text },
        Column { path: "region", expr: "b.region", kind: ColKind::Text },
        Column { path: "ipv4", expr: "b.ipv4", kind: ColKind::Text },
        Column { path: "tags", expr: "b.tags", kind: ColKind::Tags },
    ],
    order: "b.id",
    kept_count: Some("nodebalancers"),
};

const CFG_LIST: Listing<'static> = Listing {
    select: "SELECT c.id, c.nodebalancer_id, c.account_id, c.label, c.port, c.protocol, c.algorithm, c.stickiness, \
             c.check_type, c.check_interval, c.check_timeout, c.check_attempts, c.check_path, c.check_body, \
             c.check_passive, c.proxy_protocol, c.cipher_suite, c.ssl_cert, c.ssl_key, c.ssl_commonname, \
             c.ssl_fingerprint, c.created, c.updated FROM nodebalancer_configs c",
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
    kept_count: None,
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
    kept_count: None,
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
