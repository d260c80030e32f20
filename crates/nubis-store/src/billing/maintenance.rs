//! Maintenance windows operators schedule for instances.

use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use super::page;
use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Sql, Val};
use crate::{Store, Tx};

/// A maintenance window with its instance's label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintenanceRow {
    pub id: i64,
    pub account_id: i64,
    pub instance_id: i64,
    pub instance_label: String,
    pub kind: String,
    pub reason: String,
    pub status: String,
    pub when: Timestamp,
}

fn maintenance(r: &Row) -> Result<MaintenanceRow> {
    Ok(MaintenanceRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        instance_id: r.i64("instance_id")?,
        instance_label: r.str("instance_label")?,
        kind: r.str("type")?,
        reason: r.str("reason")?,
        status: r.str("status")?,
        when: r.ts("when_ts")?,
    })
}

const MAINT_SELECT: &str = "SELECT m.id, m.account_id, m.instance_id, i.label AS instance_label, m.type, m.reason, \
     m.status, m.when_ts FROM maintenance m JOIN instances i ON i.id = m.instance_id";

const MAINT_COLUMNS: &[Column] = &[
    Column { path: "status", expr: "m.status", kind: ColKind::Text },
    Column { path: "type", expr: "m.type", kind: ColKind::Text },
    Column { path: "when", expr: "m.when_ts", kind: ColKind::Text },
];

impl Tx<'_> {
    pub async fn maintenance_insert(
        &mut self,
        account_id: i64,
        instance_id: i64,
        kind: &str,
        reason: &str,
        when: Timestamp,
    ) -> Result<i64> {
        query(
            "INSERT INTO maintenance (account_id, instance_id, type, reason, status, when_ts, created) \
             VALUES ($1, $2, $3, $4, 'pending', $5, $6) RETURNING id",
        )
        .bind(account_id)
        .bind(instance_id)
        .bind(kind)
        .bind(reason)
        .bind(when.to_string())
        .bind(Timestamp::now().to_string())
        .fetch_i64(self.h())
        .await
    }

    pub async fn maintenance_set_status(&mut self, id: i64, status: &str) -> Result<bool> {
        Ok(query("UPDATE maintenance SET status = $2 WHERE id = $1").bind(id).bind(status).execute(self.h()).await? > 0)
    }
}

impl Store {
    /// A page of the account's maintenance windows that are not canceled; for a restricted
    /// viewer (`user_id`), only those of instances it holds a grant on.
    pub async fn maintenance_page(
        &self,
        account_id: i64,
        restricted_user: Option<i64>,
        filter: &Filter,
        p: u64,
        size: u64,
    ) -> Result<(Vec<MaintenanceRow>, u64)> {
        let w = move |w: &mut Sql| {
            w.push("FROM maintenance m JOIN instances i ON i.id = m.instance_id WHERE m.account_id = ");
            w.bind(Val::I64(account_id));
            w.push(" AND m.status <> 'canceled'");
            if let Some(u) = restricted_user {
                w.push(" AND EXISTS (SELECT 1 FROM grants g WHERE g.user_id = ")
                    .bind(Val::I64(u))
                    .push(" AND g.kind = 'instance' AND g.entity_id = m.instance_id)");
            }
        };
        let select = MAINT_SELECT.split(" FROM ").next().unwrap_or(MAINT_SELECT);
        page(self, select, &w, MAINT_COLUMNS, filter, "m.when_ts, m.id", p, size, maintenance).await
    }

    /// Pending maintenance windows of the account (for notifications).
    pub async fn maintenance_pending(&self, account_id: i64) -> Result<Vec<MaintenanceRow>> {
        let sql = format!("{MAINT_SELECT} WHERE m.account_id = $1 AND m.status = 'pending' ORDER BY m.when_ts, m.id");
        let rows = query(sql).bind(account_id).fetch_all(self.r()).await?;
        rows.iter().map(maintenance).collect()
    }
}
