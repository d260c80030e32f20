//! Balancer writes: balancers, configs and nodes changed inside a write transaction.

use std::collections::HashMap;

use nubis_model::{Error, Result, Timestamp};

use super::*;
use crate::Tx;
use crate::db::query;
use crate::sql::{Sql, push_ids};

/// Nodes written per statement by [`Tx::nb_nodes_insert`] and [`Tx::nb_nodes_delete`] (six
/// binds each on insert, well under either engine's limit).
const NODES_AT_ONCE: usize = 500;

impl Tx<'_> {
    /// Inserts a balancer; a label taken in the account, or an address taken (anywhere), is
    /// `Error::Unique`.
    pub async fn nodebalancer_insert(&mut self, n: &NewBalancer<'_>) -> Result<BalancerRow> {
        let sql = format!(
            "INSERT INTO nodebalancers (account_id, label, region, ipv4, v4, ipv6, client_conn_throttle, \
             client_udp_sess_throttle, tags, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) \
             RETURNING {NB_COLS}"
        );
        let row = query(sql)
            .bind(n.account_id)
            .bind(n.label)
            .bind(n.region)
            .bind(n.ipv4)
            .bind(i64::from(n.v4))
            .bind(n.ipv6)
            .bind(n.client_conn_throttle)
            .bind(n.client_udp_sess_throttle)
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
        (client_conn_throttle, client_udp_sess_throttle): (i64, i64),
        tags: &[String],
        now: Timestamp,
    ) -> Result<BalancerRow> {
        let sql = format!(
            "UPDATE nodebalancers SET label = $2, client_conn_throttle = $3, client_udp_sess_throttle = $4, \
             tags = $5, updated = $6 WHERE id = $1 RETURNING {NB_COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(label)
            .bind(client_conn_throttle)
            .bind(client_udp_sess_throttle)
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
             udp_check_port, udp_session_timeout, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
             $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $23) RETURNING {CFG_COLS}"
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
             ssl_key = $18, ssl_commonname = $19, ssl_fingerprint = $20, udp_check_port = $21, \
             udp_session_timeout = $22, updated = $23 WHERE id = $1 AND nodebalancer_id = $2 RETURNING {CFG_COLS}"
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

    /// Inserts nodes of one config (status `unknown`), [`NODES_AT_ONCE`] per statement, and
    /// returns them in the order given; a label the config already has is `Error::Unique`.
    ///
    /// One statement for many nodes, not one each: the kept counts, blocks and order fences of
    /// the nodes are kept by statement triggers, which then run once per batch (a rebuild of
    /// 1,000 nodes one by one took 46 s on PostgreSQL before migration 60).
    pub async fn nb_nodes_insert(
        &mut self,
        config_id: i64,
        nodebalancer_id: i64,
        account_id: i64,
        nodes: &[&NodeFields],
        now: Timestamp,
    ) -> Result<Vec<NodeRow>> {
        let mut out = Vec::with_capacity(nodes.len());
        for batch in nodes.chunks(NODES_AT_ONCE) {
            let rows: Vec<String> = (0..batch.len())
                .map(|k| {
                    let b = 5 + k * 6;
                    format!(
                        "($1, $2, $3, ${b}, ${}, ${}, ${}, ${}, ${}, 'unknown', $4, $4)",
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4,
                        b + 5
                    )
                })
                .collect();
            let sql = format!(
                "INSERT INTO nodebalancer_nodes (config_id, nodebalancer_id, account_id, label, address, v4, port, \
                 weight, mode, status, created, updated) VALUES {} RETURNING {NODE_COLS}",
                rows.join(", ")
            );
            let mut q = query(sql).bind(config_id).bind(nodebalancer_id).bind(account_id).bind(now);
            for f in batch {
                q = q
                    .bind(f.label.as_str())
                    .bind(f.address.as_str())
                    .bind(i64::from(f.v4))
                    .bind(f.port)
                    .bind(f.weight)
                    .bind(f.mode.as_str());
            }
            // The order of returned rows is not promised: put them back in the order given (the
            // labels of one config differ).
            let mut by_label: HashMap<String, NodeRow> = HashMap::with_capacity(batch.len());
            for row in q.fetch_all(self.h()).await? {
                let n = node(&row)?;
                by_label.insert(n.f.label.clone(), n);
            }
            for f in batch {
                out.push(
                    by_label.remove(&f.label).ok_or_else(|| Error::internal("an inserted node was not returned"))?,
                );
            }
        }
        Ok(out)
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

    /// Deletes nodes, [`NODES_AT_ONCE`] per statement (one statement for many, as for
    /// [`Tx::nb_nodes_insert`]).
    pub async fn nb_nodes_delete(&mut self, ids: &[i64]) -> Result<()> {
        for batch in ids.chunks(NODES_AT_ONCE) {
            let mut sql = Sql::new("DELETE FROM nodebalancer_nodes WHERE id IN ");
            push_ids(&mut sql, batch);
            sql.query().execute(self.h()).await?;
        }
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

impl Tx<'_> {
    /// The firewall devices of a balancer as `(firewall id, device id)`, in firewall id order,
    /// read inside the transaction.
    pub async fn nb_firewall_devices(&mut self, nodebalancer_id: i64) -> Result<Vec<(i64, i64)>> {
        let rows =
            query("SELECT firewall_id, id FROM firewall_devices WHERE nodebalancer_id = $1 ORDER BY firewall_id")
                .bind(nodebalancer_id)
                .fetch_all(self.h())
                .await?;
        rows.iter().map(|r| Ok((r.i64("firewall_id")?, r.i64("id")?))).collect()
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
        .bind(f.udp_check_port)
        .bind(f.udp_session_timeout)
}
