//! IPv6 ranges routed to instances (one per account and region, one per instance: both are
//! constraints) and shared addresses (IP failover).

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::db::Row;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{CacheKey, Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct RangeRow {
    pub id: i64,
    /// The range's first address, canonical, without prefix length.
    pub range_start: String,
    pub prefix: u8,
    pub account_id: i64,
    pub region: String,
    /// The instance whose SLAAC address the range is routed to.
    pub instance_id: i64,
    pub route_target: String,
    pub created: Timestamp,
}

pub(crate) const COLS: &str = "id, range_start, prefix, account_id, region, instance_id, route_target, created";

pub(crate) fn range(r: &Row) -> Result<RangeRow> {
    Ok(RangeRow {
        id: r.i64("id")?,
        range_start: r.str("range_start")?,
        prefix: r.i64("prefix")? as u8,
        account_id: r.i64("account_id")?,
        region: r.str("region")?,
        instance_id: r.i64("instance_id")?,
        route_target: r.str("route_target")?,
        created: r.ts("created")?,
    })
}

pub struct NewRange<'a> {
    pub range_start: &'a str,
    pub prefix: u8,
    pub account_id: i64,
    pub region: &'a str,
    pub instance_id: i64,
    pub route_target: &'a str,
    pub created: Timestamp,
}

/// A shared address: `address` (an IPv4 address or a range's first address) is shared with
/// `instance_id`, which does not own it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    pub instance_id: i64,
    pub address: String,
}

impl Tx<'_> {
    /// Inserts a range. A second range of the account in the region, a second range of the
    /// instance or an already routed block is `Error::Unique`.
    pub async fn range_insert(&mut self, n: &NewRange<'_>) -> Result<RangeRow> {
        let sql = format!(
            "INSERT INTO ipv6_ranges (range_start, prefix, account_id, region, instance_id, route_target, created) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(n.range_start)
            .bind(i64::from(n.prefix))
            .bind(n.account_id)
            .bind(n.region)
            .bind(n.instance_id)
            .bind(n.route_target)
            .bind(n.created.to_string())
            .fetch_one(self.h())
            .await?;
        range(&row)
    }

    /// Every range of a region, of every account, read inside the transaction.
    pub async fn ranges_in_region(&mut self, region: &str) -> Result<Vec<RangeRow>> {
        let sql = format!("SELECT {COLS} FROM ipv6_ranges WHERE region = $1 ORDER BY id");
        let rows = query(sql).bind(region).fetch_all(self.h()).await?;
        rows.iter().map(range).collect()
    }

    /// The ranges of an account, read inside the transaction.
    pub async fn ranges_of_account_tx(&mut self, account_id: i64) -> Result<Vec<RangeRow>> {
        let sql = format!("SELECT {COLS} FROM ipv6_ranges WHERE account_id = $1 ORDER BY id");
        let rows = query(sql).bind(account_id).fetch_all(self.h()).await?;
        rows.iter().map(range).collect()
    }

    /// Routes a range to another instance.
    pub async fn range_set_target(&mut self, id: i64, instance_id: i64, route_target: &str) -> Result<()> {
        query("UPDATE ipv6_ranges SET instance_id = $2, route_target = $3 WHERE id = $1")
            .bind(id)
            .bind(instance_id)
            .bind(route_target)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Deletes a range and its shares.
    pub async fn range_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM ip_shares WHERE address IN (SELECT range_start FROM ipv6_ranges WHERE id = $1)")
            .bind(id)
            .execute(self.h())
            .await?;
        query("DELETE FROM ipv6_ranges WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// The addresses shared with an instance, read inside the transaction.
    pub async fn shares_of_instance(&mut self, instance_id: i64) -> Result<BTreeSet<String>> {
        let v = query("SELECT address FROM ip_shares WHERE instance_id = $1")
            .bind(instance_id)
            .fetch_column_str(self.h())
            .await?;
        Ok(v.into_iter().collect())
    }

    /// The instances an address is shared with, read inside the transaction.
    pub async fn shares_of_address(&mut self, address: &str) -> Result<Vec<i64>> {
        query("SELECT instance_id FROM ip_shares WHERE address = $1 ORDER BY instance_id")
            .bind(address)
            .fetch_column_i64(self.h())
            .await
    }

    /// Stops sharing `address` with an instance (it now owns it).
    pub async fn share_remove(&mut self, instance_id: i64, address: &str) -> Result<()> {
        query("DELETE FROM ip_shares WHERE instance_id = $1 AND address = $2")
            .bind(instance_id)
            .bind(address)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Replaces the addresses shared with an instance.
    pub async fn shares_replace(&mut self, account_id: i64, instance_id: i64, addresses: &[String]) -> Result<()> {
        query("DELETE FROM ip_shares WHERE instance_id = $1").bind(instance_id).execute(self.h()).await?;
        for a in addresses {
            query("INSERT INTO ip_shares (instance_id, address, account_id) VALUES ($1, $2, $3)")
                .bind(instance_id)
                .bind(a.as_str())
                .bind(account_id)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }
}

impl Store {
    /// The ranges of an account, in id order.
    pub async fn ranges_of_account(&self, account_id: i64) -> Result<Arc<Vec<RangeRow>>> {
        self.cached(CacheKey::Collection("ipv6_ranges", account_id), &["ipv6_ranges"], || async move {
            let sql = format!("SELECT {COLS} FROM ipv6_ranges WHERE account_id = $1 ORDER BY id");
            let rows = query(sql).bind(account_id).fetch_all(self.r()).await?;
            rows.iter().map(range).collect()
        })
        .await
    }

    /// The shared addresses of an account's instances.
    pub async fn shares_of_account(&self, account_id: i64) -> Result<Arc<Vec<ShareRow>>> {
        self.cached(CacheKey::Collection("ip_shares", account_id), &["ip_shares"], || async move {
            let rows =
                query("SELECT instance_id, address FROM ip_shares WHERE account_id = $1 ORDER BY instance_id, address")
                    .bind(account_id)
                    .fetch_all(self.r())
                    .await?;
            rows.iter().map(share).collect()
        })
        .await
    }
}

impl Store {
    /// The ranges of an account routed to an instance or starting at one of `starts`, in id order.
    pub async fn ranges_of_instance(
        &self,
        account_id: i64,
        instance_id: i64,
        starts: &[String],
    ) -> Result<Vec<RangeRow>> {
        let mut sql = crate::sql::Sql::new(&format!("SELECT {COLS} FROM ipv6_ranges WHERE account_id = "));
        sql.bind(crate::sql::Val::I64(account_id));
        sql.push(" AND (instance_id = ").bind(crate::sql::Val::I64(instance_id));
        sql.push(" OR range_start IN ");
        crate::sql::push_strs(&mut sql, starts);
        sql.push(") ORDER BY id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(range).collect()
    }

    /// What is shared with some instances.
    pub async fn shares_of_instances(&self, instance_ids: &[i64]) -> Result<Vec<ShareRow>> {
        let select = "SELECT instance_id, address FROM ip_shares";
        self.fetch_in(select, "instance_id", crate::sql::Keys::Ids(instance_ids), "instance_id, address", share).await
    }
}

fn share(r: &crate::db::Row) -> Result<ShareRow> {
    Ok(ShareRow { instance_id: r.i64("instance_id")?, address: r.str("address")? })
}
