//! VPCs and their subnets. Labels are unique by constraint; a subnet's range is also kept as
//! integers so that the overlap check inside a write transaction is a plain comparison.

use std::sync::Arc;

use crate::db::Row;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{CacheKey, Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct VpcRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub description: String,
    pub region: String,
    pub created: Timestamp,
    pub updated: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubnetRow {
    pub id: i64,
    pub vpc_id: i64,
    pub account_id: i64,
    pub label: String,
    pub ipv4: String,
    pub first_v4: u32,
    pub last_v4: u32,
    pub created: Timestamp,
    pub updated: Timestamp,
}

const VPC_COLS: &str = "id, account_id, label, description, region, created, updated";
const SUBNET_COLS: &str = "id, vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated";

fn vpc(r: &Row) -> Result<VpcRow> {
    Ok(VpcRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        description: r.str("description")?,
        region: r.str("region")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn subnet(r: &Row) -> Result<SubnetRow> {
    Ok(SubnetRow {
        id: r.i64("id")?,
        vpc_id: r.i64("vpc_id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        ipv4: r.str("ipv4")?,
        first_v4: r.i64("first_v4")? as u32,
        last_v4: r.i64("last_v4")? as u32,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

pub struct NewVpc<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub description: &'a str,
    pub region: &'a str,
    pub created: Timestamp,
}

pub struct NewSubnet<'a> {
    pub vpc_id: i64,
    pub account_id: i64,
    pub label: &'a str,
    pub ipv4: &'a str,
    pub first_v4: u32,
    pub last_v4: u32,
    pub created: Timestamp,
}

impl Tx<'_> {
    pub async fn vpc_insert(&mut self, v: &NewVpc<'_>) -> Result<VpcRow> {
        let sql = format!(
            "INSERT INTO vpcs (account_id, label, description, region, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING {VPC_COLS}"
        );
        let row = query(sql)
            .bind(v.account_id)
            .bind(v.label)
            .bind(v.description)
            .bind(v.region)
            .bind(v.created.to_string())
            .fetch_one(self.h())
            .await?;
        vpc(&row)
    }

    /// The VPC, read inside the transaction. It also takes the row's write lock (a no-op update),
    /// so a concurrent delete of the VPC and a change below it conflict instead of both
    /// committing (PostgreSQL reports a serialization failure, which is retried).
    pub async fn vpc_lock(&mut self, id: i64, account_id: i64) -> Result<Option<VpcRow>> {
        let sql = format!("UPDATE vpcs SET updated = updated WHERE id = $1 AND account_id = $2 RETURNING {VPC_COLS}");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(vpc).transpose()
    }

    /// Changes the label and/or description; `None` leaves a field as it is.
    pub async fn vpc_update(
        &mut self,
        id: i64,
        label: Option<&str>,
        description: Option<&str>,
        now: Timestamp,
    ) -> Result<VpcRow> {
        let sql = format!(
            "UPDATE vpcs SET label = COALESCE($2, label), description = COALESCE($3, description), updated = $4 \
             WHERE id = $1 RETURNING {VPC_COLS}"
        );
        let row = query(sql).bind(id).bind(label).bind(description).bind(now.to_string()).fetch_one(self.h()).await?;
        vpc(&row)
    }

    /// Deletes a VPC and all its subnets (the caller has checked that none is in use).
    pub async fn vpc_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM vpc_subnets WHERE vpc_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM vpcs WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    pub async fn subnet_insert(&mut self, s: &NewSubnet<'_>) -> Result<SubnetRow> {
        let sql = format!(
            "INSERT INTO vpc_subnets (vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING {SUBNET_COLS}"
        );
        let row = query(sql)
            .bind(s.vpc_id)
            .bind(s.account_id)
            .bind(s.label)
            .bind(s.ipv4)
            .bind(i64::from(s.first_v4))
            .bind(i64::from(s.last_v4))
            .bind(s.created.to_string())
            .fetch_one(self.h())
            .await?;
        subnet(&row)
    }

    /// The subnets of a VPC, read inside the transaction, in id order.
    pub async fn subnets_of_vpc(&mut self, vpc_id: i64) -> Result<Vec<SubnetRow>> {
        let sql = format!("SELECT {SUBNET_COLS} FROM vpc_subnets WHERE vpc_id = $1 ORDER BY id");
        let rows = query(sql).bind(vpc_id).fetch_all(self.h()).await?;
        rows.iter().map(subnet).collect()
    }

    /// The first subnet of the VPC whose range shares an address with `first..=last`.
    pub async fn subnet_overlapping(&mut self, vpc_id: i64, first: u32, last: u32) -> Result<Option<SubnetRow>> {
        let sql = format!(
            "SELECT {SUBNET_COLS} FROM vpc_subnets WHERE vpc_id = $1 AND first_v4 <= $3 AND last_v4 >= $2 \
             ORDER BY id LIMIT 1"
        );
        let row = query(sql).bind(vpc_id).bind(i64::from(first)).bind(i64::from(last)).fetch_optional(self.h()).await?;
        row.as_ref().map(subnet).transpose()
    }

    /// One subnet of a VPC, read inside the transaction; also takes its row lock (see
    /// [`Tx::vpc_lock`]) so that attaching an interface and deleting the subnet conflict.
    pub async fn subnet_lock(&mut self, vpc_id: Option<i64>, id: i64, account_id: i64) -> Result<Option<SubnetRow>> {
        let sql = format!(
            "UPDATE vpc_subnets SET updated = updated WHERE id = $1 AND account_id = $2 \
             AND ($3 IS NULL OR vpc_id = $3) RETURNING {SUBNET_COLS}"
        );
        let row = query(sql).bind(id).bind(account_id).bind(vpc_id).fetch_optional(self.h()).await?;
        row.as_ref().map(subnet).transpose()
    }

    pub async fn subnet_update_label(&mut self, id: i64, label: &str, now: Timestamp) -> Result<SubnetRow> {
        let sql = format!("UPDATE vpc_subnets SET label = $2, updated = $3 WHERE id = $1 RETURNING {SUBNET_COLS}");
        let row = query(sql).bind(id).bind(label).bind(now.to_string()).fetch_one(self.h()).await?;
        subnet(&row)
    }

    pub async fn subnet_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM vpc_subnets WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }
}

impl Store {
    /// The VPCs of an account, in id order.
    pub async fn vpcs_of_account(&self, account_id: i64) -> Result<Arc<Vec<VpcRow>>> {
        self.cached(CacheKey::Collection("vpcs", account_id), || async move {
            let sql = format!("SELECT {VPC_COLS} FROM vpcs WHERE account_id = $1 ORDER BY id");
            let rows = query(sql).bind(account_id).fetch_all(self.r()).await?;
            rows.iter().map(vpc).collect()
        })
        .await
    }

    /// The subnets of every VPC of an account, in id order.
    pub async fn subnets_of_account(&self, account_id: i64) -> Result<Arc<Vec<SubnetRow>>> {
        self.cached(CacheKey::Collection("vpc_subnets", account_id), || async move {
            let sql = format!("SELECT {SUBNET_COLS} FROM vpc_subnets WHERE account_id = $1 ORDER BY id");
            let rows = query(sql).bind(account_id).fetch_all(self.r()).await?;
            rows.iter().map(subnet).collect()
        })
        .await
    }
}
