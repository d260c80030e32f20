//! Maintenance windows operators schedule for instances.

use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use nubis_model::filter::Order;

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
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

/// The account's maintenance windows that are not canceled (of instances that exist: a
/// window leaves with its instance, migration 40), in the order of `when` unless the filter
/// orders them.
const MAINT_LIST: Listing<'static> = Listing {
    select: MAINT_SELECT,
    from: "FROM maintenance m JOIN instances i ON i.id = m.instance_id",
    scope: "m.account_id",
    and: " AND m.status <> 'canceled'",
    cols: &[
        Column { path: "status", expr: "m.status", kind: ColKind::Text },
        Column { path: "type", expr: "m.type", kind: ColKind::Text },
        Column { path: "when", expr: "m.when_ts", kind: ColKind::Text },
    ],
    order: "m.id",
    kept_count: Some("maintenance"),
    indexed: &["status", "type", "when"],
};

/// The account's pending windows (one notification each), kept like the list (migration 41).
const PENDING_LIST: Listing<'static> =
    Listing { and: " AND m.status = 'pending'", kept_count: Some("maintenance_pending"), ..MAINT_LIST };

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
        let offset = p.saturating_sub(1).saturating_mul(size);
        self.windows(&MAINT_LIST, account_id, restricted_user, filter, offset, size).await
    }

    /// A window of `list` in the order of `when` (then id) unless the filter orders it: the
    /// order fences of `when` serve it like an order the filter asks for.
    async fn windows(
        &self,
        list: &Listing<'_>,
        account_id: i64,
        restricted_user: Option<i64>,
        filter: &Filter,
        offset: u64,
        size: u64,
    ) -> Result<(Vec<MaintenanceRow>, u64)> {
        let v = Visibility {
            scope_id: account_id,
            grant: restricted_user.map(|u| (u, "instance", "m.instance_id")),
            and: None,
        };
        let (rows, n) = match filter.order_by {
            None => {
                let by_when = Filter { order_by: Some("when".into()), order: Order::Asc, ..filter.clone() };
                self.fetch_window(list, &v, &by_when, offset, size).await?
            }
            Some(_) => self.fetch_window(list, &v, filter, offset, size).await?,
        };
        Ok((rows.iter().map(maintenance).collect::<Result<_>>()?, n))
    }

    /// `size` of the account's pending maintenance windows from `offset` on (in the order of
    /// `when`), and how many there are: the notifications of a page.
    pub async fn maintenance_pending_window(
        &self,
        account_id: i64,
        restricted_user: Option<i64>,
        offset: u64,
        size: u64,
    ) -> Result<(Vec<MaintenanceRow>, u64)> {
        self.windows(&PENDING_LIST, account_id, restricted_user, &Filter::default(), offset, size).await
    }
}
