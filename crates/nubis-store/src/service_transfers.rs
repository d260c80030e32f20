//! Service transfers (spec 3.2, 4.4): the transfer records with their instances, what keeps an
//! instance from being transferred, the move of instances with their addresses to another
//! account, and the operators' terms-of-service violation flag.
//!
//! An instance is in at most one transfer that is pending or accepted and not complete: a unique
//! index over the `active` rows says so, whatever the interleaving of requests.

use std::collections::BTreeMap;

use crate::db::Row;
use nubis_model::filter::{CmpOp, Cond, Filter, Order};
use nubis_model::service_transfer::TransferStatus;
use nubis_model::{Error, Result, Timestamp};

use crate::db::query;
use crate::pages::LOCATE_FROM;
use crate::rows::RowExt;
use crate::sql::{
    ColKind, Column, SCAN_BUDGET, Sql, Val, push_filter, push_ids, push_kept_count, push_order, push_page, push_window,
    served_apart, unserved_noting,
};
use crate::{Store, Tx};

/// Instances moved per statement by [`Tx::instances_move`].
const MOVED_AT_ONCE: usize = 500;

#[derive(Debug, Clone, PartialEq)]
pub struct TransferRow {
    pub id: i64,
    pub token: String,
    /// The creating (sending) account.
    pub account_id: i64,
    /// The accepting (receiving) account, once accepted.
    pub receiver_account_id: Option<i64>,
    /// The status as last written (see `TransferStatus::as_of` for the status as of now).
    pub status: TransferStatus,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub expiry: Timestamp,
    pub accepted: Option<Timestamp>,
    pub completed: Option<Timestamp>,
    pub sender_event_id: Option<i64>,
    pub receiver_event_id: Option<i64>,
    /// The instances, in the order the request named them.
    pub instances: Vec<i64>,
}

const COLS: &str = "t.id, t.token, t.account_id, t.receiver_account_id, t.status, t.created, t.updated, t.expiry, \
                    t.accepted, t.completed, t.sender_event_id, t.receiver_event_id";
const RET: &str = "id, token, account_id, receiver_account_id, status, created, updated, expiry, accepted, \
                   completed, sender_event_id, receiver_event_id";

fn transfer(r: &Row) -> Result<TransferRow> {
    let status = r.str("status")?;
    Ok(TransferRow {
        id: r.i64("id")?,
        token: r.str("token")?,
        account_id: r.i64("account_id")?,
        receiver_account_id: r.opt_i64("receiver_account_id")?,
        status: TransferStatus::parse(&status).ok_or_else(|| Error::Internal(format!("transfer status {status}")))?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
        expiry: r.ts("expiry")?,
        accepted: r.opt_ts("accepted")?,
        completed: r.opt_ts("completed")?,
        sender_event_id: r.opt_i64("sender_event_id")?,
        receiver_event_id: r.opt_i64("receiver_event_id")?,
        instances: Vec::new(),
    })
}

/// A transfer about to be written.
pub struct NewTransfer<'a> {
    pub token: &'a str,
    pub account_id: i64,
    pub instances: &'a [i64],
    pub created: Timestamp,
    pub expiry: Timestamp,
}

/// Why an instance cannot be transferred now, as found in the database (spec 4.4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransferBlockers {
    /// Load balancers with a back-end node on the instance's private address.
    pub balancers: Vec<(i64, String)>,
    /// Firewalls the instance is a device of (enabled or disabled).
    pub firewalls: Vec<(i64, String)>,
    /// VLAN labels of its interfaces.
    pub vlans: Vec<String>,
    /// VPC ids of its interfaces.
    pub vpcs: Vec<i64>,
    /// Addresses shared with it, and its addresses shared with other instances.
    pub shared: Vec<String>,
    /// IPv6 ranges routed to it (`range/prefix`).
    pub ranges: Vec<String>,
}

/// Filterable fields of the list. `clock` is a one-row subquery holding the time of the read and
/// the caller's account, so that `status` and `is_sender` are what the API shows.
const COLUMNS: &[Column] = &[
    Column {
        path: "status",
        expr: "(CASE WHEN t.status = 'pending' AND t.expiry <= clock.now_ts THEN 'stale' ELSE t.status END)",
        kind: ColKind::Text,
    },
    Column { path: "is_sender", expr: "(t.account_id = clock.viewer)", kind: ColKind::Bool },
    // The status as stored, which `status` is read from past the budget ([`stored_status`]); no
    // client names it (the API's filter takes only the list's fields).
    Column { path: "stored_status", expr: "t.status", kind: ColKind::Text },
    Column { path: "created", expr: "t.created", kind: ColKind::Text },
    Column { path: "updated", expr: "t.updated", kind: ColKind::Text },
    Column { path: "expiry", expr: "t.expiry", kind: ColKind::Text },
    Column { path: "token", expr: "t.token", kind: ColKind::Text },
];

/// The kept count and block counts of the list (migration 38): a transfer counts in the list of
/// the account that made it and, once accepted, of the account that accepted it.
const TRANSFER_KIND: &str = "service_transfers";
/// The fields an index on (account, field, id) serves in both halves of the list (besides `id`),
/// each with order fences counted from both columns (`service_transfers.<field>`): creation
/// (migration 52), change, expiry and token (migration 65). Each is a column of the transfer.
const TRANSFER_INDEXED: &[&str] = &["created", "updated", "expiry", "token"];

/// Where the list is ordered by `is_sender` past the budget ([`Store::transfers_by_half`]).
const BY_HALF: &str = "; order by is_sender the whole list";

/// The fields a condition is served on past [`SCAN_BUDGET`], as a client names them: those of
/// [`TRANSFER_INDEXED`]; `is_sender`, which picks the half of the list a transfer is in
/// ([`HALVES`]); and `status` for equality or `+neq` ([`stored_status`]).
const TRANSFER_FILTERED: &[&str] = &["status", "is_sender", "created", "updated", "expiry", "token"];
/// [`TRANSFER_FILTERED`] as the filter reads once `is_sender` and `status` are written out: an
/// index on (scope, status, expiry, id) on each of the list's columns serves the stored status
/// (migration 66).
const TRANSFER_CONDS: &[&str] = &["stored_status", "created", "updated", "expiry", "token"];

/// The filter with each equality (and `+neq`) on `status` written on the stored status and the
/// expiry. The list shows a pending transfer as stale from its expiry on, before the sweep marks
/// it (`transfers_mark_stale`): `pending` is the stored pending ones not yet expired, `stale` the
/// stored stale ones and the pending ones expired, any other status the stored one; `+neq` is
/// the negation of each, written out (an expiry is never NULL). `now` is the time the list's
/// `status` is computed at.
fn stored_status(filter: &Filter, now: Timestamp) -> Filter {
    let field = |path: &str, op, value: serde_json::Value| Cond::Field { path: path.to_string(), op, value };
    let stored = |op, status: &str| field("stored_status", op, status.into());
    filter.rewrite("status", |op, value| {
        let serde_json::Value::String(status) = value else { return None };
        let expiry = |op| field("expiry", op, now.to_string().into());
        let (is, not) = (CmpOp::Eq, CmpOp::Neq);
        Some(match (op, status.as_str()) {
            (CmpOp::Eq, "pending") => Cond::And(vec![stored(is, "pending"), expiry(CmpOp::Gt)]),
            (CmpOp::Eq, "stale") => {
                Cond::Or(vec![stored(is, "stale"), Cond::And(vec![stored(is, "pending"), expiry(CmpOp::Lte)])])
            }
            (CmpOp::Neq, "pending") => Cond::Or(vec![stored(not, "pending"), expiry(CmpOp::Lte)]),
            (CmpOp::Neq, "stale") => {
                Cond::And(vec![stored(not, "stale"), Cond::Or(vec![stored(not, "pending"), expiry(CmpOp::Gt)])])
            }
            (CmpOp::Eq | CmpOp::Neq, other) => stored(op, other),
            _ => return None,
        })
    })
}

/// The two halves of the list, each a range of its column's indexes: the transfers the account
/// made (`is_sender` true) and those it accepted (false; never its own, as the account that
/// made a transfer cannot accept it, and the condition on the maker says so to the database).
const HALVES: [(&str, bool); 2] = [("t.account_id = ", true), ("t.receiver_account_id = ", false)];

/// `FROM` and the visibility of the list: transfers the account created or accepted, or, with
/// `half` (one of [`HALVES`]), those of that half alone.
fn list_scope(sql: &mut Sql, account_id: i64, now: Timestamp, half: Option<(&str, bool)>) {
    sql.push(" FROM service_transfers t CROSS JOIN (SELECT CAST(");
    sql.bind(Val::Str(now.to_string()));
    sql.push(" AS TEXT) AS now_ts, CAST(");
    sql.bind(Val::I64(account_id));
    sql.push(" AS BIGINT) AS viewer) clock WHERE ");
    match half {
        None => {
            sql.push("(t.account_id = clock.viewer OR t.receiver_account_id = clock.viewer)");
        }
        Some((column, sender)) => {
            sql.push(column).bind(Val::I64(account_id));
            if !sender {
                sql.push(" AND t.account_id <> ").bind(Val::I64(account_id));
            }
        }
    }
}

/// The order of a page read as its [`HALVES`] merged ([`merged`]): the list's own, newest first,
/// or by a field of [`TRANSFER_INDEXED`], without the table's prefix; `None` for any other order.
fn merged_order(filter: &Filter) -> Option<String> {
    let dir = if filter.order == Order::Desc { " DESC" } else { "" };
    match filter.order_by.as_deref() {
        None => Some("id DESC".to_string()),
        Some(f) if TRANSFER_INDEXED.contains(&f) => Some(format!("{f}{dir}, id{dir}")),
        Some(_) => None,
    }
}

/// `order` ([`merged_order`]) with each term on `table`.
fn on(table: &str, order: &str) -> String {
    order.split(", ").map(|t| format!("{table}.{t}")).collect::<Vec<_>>().join(", ")
}

/// Where a page of the merged list is in the merge of its parts.
enum Window<'a> {
    /// `size` rows after `skip`, each part read in the page's order.
    Rows { skip: i64, size: i64 },
    /// On PostgreSQL, the page of `size` rows at `offset` of the order `kind` (a field's,
    /// [`TRANSFER_INDEXED`]; its keys integers when `int`) in `scope_id`, located by the page's
    /// own statement (`nubis_locate_fenced`): each part is read ascending from the range's key,
    /// and the run the function names is taken from their merge, then sorted in the page's
    /// order.
    Walked { kind: String, int: bool, field: &'a str, scope_id: i64, offset: i64, desc: bool, size: i64 },
}

/// A page from parts each read in `order` ([`merged_order`]) up to the page's end and merged, as
/// `window` says: `part` writes the `i`th part's `SELECT ... WHERE ...` (`t` the transfers).
fn merged(
    parts: usize,
    order: &str,
    window: &Window<'_>,
    mut part: impl FnMut(&mut Sql, usize) -> Result<()>,
) -> Result<Sql> {
    let mut sql = Sql::new("");
    let run = match window {
        Window::Rows { .. } => order.to_string(),
        Window::Walked { kind, field, scope_id, offset, desc, size, .. } => {
            crate::fences::push_fenced_with(&mut sql, kind, *scope_id, *offset, *desc, *size as u64);
            sql.push("SELECT * FROM (");
            format!("{field}, id")
        }
    };
    sql.push("SELECT * FROM (");
    for i in 0..parts {
        if i > 0 {
            sql.push(" UNION ALL ");
        }
        sql.push("SELECT * FROM (");
        part(&mut sql, i)?;
        match window {
            Window::Rows { skip, size } => {
                sql.push(&format!(" ORDER BY {} LIMIT ", on("t", &run))).bind(Val::I64(skip.saturating_add(*size)));
            }
            Window::Walked { field, int, .. } => {
                let from = crate::fences::fenced_from(&format!("t.{field}"), "t.id", *int);
                sql.push(&format!(" AND {from} ORDER BY {} LIMIT (SELECT skip + len FROM nubis_fat)", on("t", &run)));
            }
        }
        sql.push(&format!(") part{i}"));
    }
    sql.push(&format!(") x ORDER BY {} LIMIT ", on("x", &run)));
    match window {
        Window::Rows { skip, size } => {
            sql.bind(Val::I64(*size)).push(" OFFSET ").bind(Val::I64(*skip));
        }
        Window::Walked { .. } => {
            sql.push("(SELECT len FROM nubis_fat) OFFSET (SELECT skip FROM nubis_fat)");
            sql.push(&format!(") y ORDER BY {}", on("y", order)));
        }
    }
    Ok(sql)
}

impl Tx<'_> {
    /// Inserts a pending transfer with its instances. An instance already in an active transfer
    /// is `Error::Unique` (the unique index over active rows).
    pub async fn transfer_insert(&mut self, n: &NewTransfer<'_>) -> Result<TransferRow> {
        let sql = format!(
            "INSERT INTO service_transfers (token, account_id, status, created, updated, expiry) \
             VALUES ($1, $2, 'pending', $3, $3, $4) RETURNING {RET}"
        );
        let row = query(sql)
            .bind(n.token)
            .bind(n.account_id)
            .bind(n.created.to_string())
            .bind(n.expiry.to_string())
            .fetch_one(self.h())
            .await?;
        let mut t = transfer(&row)?;
        for (pos, id) in n.instances.iter().enumerate() {
            query(
                "INSERT INTO service_transfer_instances (transfer_id, instance_id, position, active) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(t.id)
            .bind(*id)
            .bind(pos as i64)
            .bind(true)
            .execute(self.h())
            .await?;
        }
        t.instances = n.instances.to_vec();
        Ok(t)
    }

    /// A transfer by token, read inside the transaction with its row lock taken, so that
    /// concurrent accepts and cancels of one transfer conflict instead of interleaving.
    pub async fn transfer_lock(&mut self, token: &str) -> Result<Option<TransferRow>> {
        let sql = format!("UPDATE service_transfers SET updated = updated WHERE token = $1 RETURNING {RET}");
        let row = query(sql).bind(token).fetch_optional(self.h()).await?;
        let Some(mut t) = row.as_ref().map(transfer).transpose()? else { return Ok(None) };
        t.instances = self.transfer_instances(t.id).await?;
        Ok(Some(t))
    }

    async fn transfer_instances(&mut self, transfer_id: i64) -> Result<Vec<i64>> {
        query("SELECT instance_id FROM service_transfer_instances WHERE transfer_id = $1 ORDER BY position")
            .bind(transfer_id)
            .fetch_column_i64(self.h())
            .await
    }

    /// Records the acceptance by `receiver` (the instances stay active until completion).
    pub async fn transfer_accept(
        &mut self,
        id: i64,
        receiver: i64,
        sender_event_id: i64,
        receiver_event_id: i64,
        now: Timestamp,
    ) -> Result<()> {
        query(
            "UPDATE service_transfers SET status = 'accepted', receiver_account_id = $2, accepted = $3, updated = $3, \
             sender_event_id = $4, receiver_event_id = $5 WHERE id = $1",
        )
        .bind(id)
        .bind(receiver)
        .bind(now.to_string())
        .bind(sender_event_id)
        .bind(receiver_event_id)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Ends a transfer in `status` (canceled, completed, failed, stale): its instances are free
    /// for another transfer.
    pub async fn transfer_end(&mut self, id: i64, status: TransferStatus, now: Timestamp) -> Result<()> {
        debug_assert!(!matches!(status, TransferStatus::Pending | TransferStatus::Accepted));
        let completed = (status == TransferStatus::Completed).then_some(now);
        query("UPDATE service_transfers SET status = $2, updated = $3, completed = $4 WHERE id = $1")
            .bind(id)
            .bind(status.name())
            .bind(now.to_string())
            .bind(completed)
            .execute(self.h())
            .await?;
        query("UPDATE service_transfer_instances SET active = $2 WHERE transfer_id = $1")
            .bind(id)
            .bind(false)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Marks the pending transfers at or past their expiry stale (each row by a statement that
    /// checks it is still pending, so concurrent sweeps never expire one transfer twice) and
    /// frees their instances; returns those transfers. `holding`: only the transfers that hold
    /// one of these instances (a request that needs them free pays for those, not for every
    /// transfer due); `None`: every transfer due (the sweep).
    ///
    /// The sweep runs every second whatever the database holds, so it reads only the due
    /// transfers, in batches in expiry order, which only the (status, expiry) index gives. A
    /// plan made for an unknown `$1` (nubis's PostgreSQL connections plan once) takes a third of
    /// the pending transfers as due, and without the order and the limit it read the whole table
    /// each second to find none (29 ms at 100,000 pending). Each batch frees its instances and
    /// reads them in one statement each, not one per transfer.
    pub async fn transfers_expire_due(&mut self, now: Timestamp, holding: Option<&[i64]>) -> Result<Vec<TransferRow>> {
        const BATCH: usize = 500;
        let mut out = Vec::new();
        loop {
            let mut sql = Sql::new("UPDATE service_transfers SET status = 'stale', updated = ");
            sql.bind(Val::Str(now.to_string()));
            sql.push(" WHERE status = 'pending' AND id IN (SELECT t.id FROM service_transfers t WHERE t.status = 'pending' AND t.expiry <= ");
            sql.bind(Val::Str(now.to_string()));
            match holding {
                Some([]) => return Ok(out),
                Some(instances) => {
                    sql.push(
                        " AND t.id IN (SELECT ti.transfer_id FROM service_transfer_instances ti WHERE ti.active = ",
                    );
                    sql.bind(Val::Bool(true)).push(" AND ti.instance_id IN ");
                    push_ids(&mut sql, instances);
                    sql.push(")");
                }
                None => {}
            }
            sql.push(&format!(" ORDER BY t.expiry LIMIT {BATCH}) RETURNING {RET}"));
            let rows = sql.query().fetch_all(self.h()).await?;
            let mut batch = rows.iter().map(transfer).collect::<Result<Vec<_>>>()?;
            if batch.is_empty() {
                return Ok(out);
            }
            let ids: Vec<i64> = batch.iter().map(|t| t.id).collect();
            let mut free = Sql::new("UPDATE service_transfer_instances SET active = ");
            free.bind(Val::Bool(false)).push(" WHERE transfer_id IN ");
            push_ids(&mut free, &ids);
            free.query().execute(self.h()).await?;
            let mut read =
                Sql::new("SELECT transfer_id, instance_id FROM service_transfer_instances WHERE transfer_id IN ");
            push_ids(&mut read, &ids);
            read.push(" ORDER BY transfer_id, position");
            let mut of: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for r in read.query().fetch_all(self.h()).await? {
                of.entry(r.i64("transfer_id")?).or_default().push(r.i64("instance_id")?);
            }
            let last = batch.len() < BATCH;
            for t in &mut batch {
                t.instances = of.remove(&t.id).unwrap_or_default();
            }
            out.extend(batch);
            if last {
                return Ok(out);
            }
        }
    }

    /// The token of the transfer that holds the instance now (pending and not expired, or
    /// accepted and not complete), if any.
    pub async fn instance_active_transfer(&mut self, instance_id: i64, now: Timestamp) -> Result<Option<String>> {
        let v = query(
            "SELECT t.token FROM service_transfer_instances ti JOIN service_transfers t ON t.id = ti.transfer_id \
             WHERE ti.instance_id = $1 AND ti.active = $2 AND (t.status = 'accepted' OR t.expiry > $3)",
        )
        .bind(instance_id)
        .bind(true)
        .bind(now.to_string())
        .fetch_column_str(self.h())
        .await?;
        Ok(v.into_iter().next())
    }

    /// Everything that keeps an instance from being transferred, read inside the transaction.
    pub async fn instance_transfer_blockers(&mut self, instance_id: i64) -> Result<TransferBlockers> {
        let pairs = |rows: Vec<Row>| -> Result<Vec<(i64, String)>> {
            rows.iter().map(|r| Ok((r.i64("id")?, r.str("label")?))).collect()
        };
        let balancers = pairs(
            query(
                "SELECT DISTINCT b.id, b.label FROM nodebalancer_nodes n JOIN ip_addresses a ON a.v4 = n.v4 \
                 JOIN nodebalancers b ON b.id = n.nodebalancer_id \
                 WHERE a.instance_id = $1 AND a.public = $2 ORDER BY b.id",
            )
            .bind(instance_id)
            .bind(false)
            .fetch_all(self.h())
            .await?,
        )?;
        let firewalls = pairs(
            query(
                "SELECT f.id, f.label FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id \
                 WHERE d.instance_id = $1 ORDER BY f.id",
            )
            .bind(instance_id)
            .fetch_all(self.h())
            .await?,
        )?;
        let vlans = query(
            "SELECT label FROM instance_interfaces WHERE instance_id = $1 AND purpose = 'vlan' AND label IS NOT NULL \
             ORDER BY position",
        )
        .bind(instance_id)
        .fetch_column_str(self.h())
        .await?;
        let vpcs = query(
            "SELECT vpc_id FROM instance_interfaces WHERE instance_id = $1 AND purpose = 'vpc' AND vpc_id IS NOT NULL \
             ORDER BY position",
        )
        .bind(instance_id)
        .fetch_column_i64(self.h())
        .await?;
        let shared = query(
            "SELECT address FROM ip_shares WHERE instance_id = $1 \
             UNION SELECT s.address FROM ip_shares s JOIN ip_addresses a ON a.address = s.address \
             WHERE a.instance_id = $1 \
             UNION SELECT s.address FROM ip_shares s JOIN ipv6_ranges r ON r.range_start = s.address \
             WHERE r.instance_id = $1 ORDER BY address",
        )
        .bind(instance_id)
        .fetch_column_str(self.h())
        .await?;
        let ranges = query("SELECT range_start, prefix FROM ipv6_ranges WHERE instance_id = $1 ORDER BY id")
            .bind(instance_id)
            .fetch_all(self.h())
            .await?
            .iter()
            .map(|r| Ok(format!("{}/{}", r.str("range_start")?, r.i64("prefix")?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(TransferBlockers { balancers, firewalls, vlans, vpcs, shared, ranges })
    }

    /// True when the account has an instance labelled `label` (read inside the transaction).
    pub async fn instance_label_taken(&mut self, account_id: i64, label: &str) -> Result<bool> {
        let n = query("SELECT COUNT(*) FROM instances WHERE account_id = $1 AND label = $2")
            .bind(account_id)
            .bind(label)
            .fetch_i64(self.h())
            .await?;
        Ok(n > 0)
    }

    /// Moves instances from account `from` to account `to` with their interfaces and addresses
    /// (public and private IPv4, SLAAC and link-local IPv6), [`MOVED_AT_ONCE`] per statement:
    /// the statement triggers that keep both accounts' counts run once per batch. Returns false
    /// when one of them is no longer `from`'s (some may have moved: the caller rolls back).
    pub async fn instances_move(&mut self, ids: &[i64], from: i64, to: i64, now: Timestamp) -> Result<bool> {
        for batch in ids.chunks(MOVED_AT_ONCE) {
            let distinct: std::collections::BTreeSet<&i64> = batch.iter().collect();
            let mut sql = Sql::new("UPDATE instances SET account_id = ");
            sql.bind(Val::I64(to)).push(", updated = ").bind(Val::Str(now.to_string()));
            sql.push(" WHERE account_id = ").bind(Val::I64(from)).push(" AND id IN ");
            push_ids(&mut sql, batch);
            if sql.query().execute(self.h()).await? != distinct.len() as u64 {
                return Ok(false);
            }
            for table in ["ip_addresses", "instance_interfaces", "ipv6_ranges", "ip_shares"] {
                let mut sql = Sql::new(&format!("UPDATE {table} SET account_id = "));
                sql.bind(Val::I64(to)).push(" WHERE instance_id IN ");
                push_ids(&mut sql, batch);
                sql.query().execute(self.h()).await?;
            }
        }
        Ok(true)
    }

    /// Sets or clears an account's active terms-of-service violation.
    pub async fn account_tos_violation_set(&mut self, account_id: i64, on: bool, now: Timestamp) -> Result<()> {
        if on {
            query("INSERT INTO account_tos_violations (account_id, since) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(account_id)
                .bind(now.to_string())
                .execute(self.h())
                .await?;
        } else {
            query("DELETE FROM account_tos_violations WHERE account_id = $1")
                .bind(account_id)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// True when the account has an active terms-of-service violation (read inside the
    /// transaction).
    pub async fn account_tos_violation(&mut self, account_id: i64) -> Result<bool> {
        let n = query("SELECT COUNT(*) FROM account_tos_violations WHERE account_id = $1")
            .bind(account_id)
            .fetch_i64(self.h())
            .await?;
        Ok(n > 0)
    }
}

impl Store {
    /// The tokens of the transfers accepted at or before `by` and not yet completed (the
    /// completion queue).
    pub async fn transfers_accepted(&self, by: Timestamp) -> Result<Vec<String>> {
        query("SELECT token FROM service_transfers WHERE status = 'accepted' AND accepted <= $1 ORDER BY id")
            .bind(by.to_string())
            .fetch_column_str(self.r())
            .await
    }

    /// A transfer by its token.
    pub async fn transfer_by_token(&self, token: &str) -> Result<Option<TransferRow>> {
        let sql = format!("SELECT {COLS} FROM service_transfers t WHERE t.token = $1");
        let Some(row) = query(sql).bind(token).fetch_optional(self.r()).await? else { return Ok(None) };
        let mut t = transfer(&row)?;
        t.instances =
            query("SELECT instance_id FROM service_transfer_instances WHERE transfer_id = $1 ORDER BY position")
                .bind(t.id)
                .fetch_column_i64(self.r())
                .await?;
        Ok(Some(t))
    }

    /// The rows of one page of the whole list ordered by `is_sender` (`desc`: reversed), and how
    /// many the list has: the transfers the account accepted (`false`) by id, then those it made
    /// (`true`) by id, each half counted and blocked apart (migration 72), so that a deep page
    /// is located in its half by the half's block counts and read through the half's index.
    async fn transfers_by_half(
        &self,
        account_id: i64,
        desc: bool,
        offset: u64,
        page_size: u64,
    ) -> Result<(Vec<Row>, i64)> {
        let mut count = Sql::new("SELECT (");
        push_kept_count(&mut count, account_id, "service_transfers_received");
        count.push(") AS received, (");
        push_kept_count(&mut count, account_id, "service_transfers_sent");
        let row = count.push(") AS sent").query().fetch_one(self.r()).await?;
        let (received, sent) = (row.i64("received")?.max(0), row.i64("sent")?.max(0));
        let ascending =
            [("service_transfers_received", HALVES[1], received), ("service_transfers_sent", HALVES[0], sent)];
        let halves: Vec<_> = if desc { ascending.into_iter().rev().collect() } else { ascending.to_vec() };
        let dir = if desc { "DESC" } else { "ASC" };
        let mut rows = Vec::new();
        let mut before = 0u64;
        for (kind, (column, sender), n) in halves {
            let n = n as u64;
            let wanted = page_size.saturating_sub(rows.len() as u64);
            let skip = (offset + rows.len() as u64).saturating_sub(before);
            before += n;
            if wanted == 0 || skip >= n {
                continue;
            }
            let located = if skip >= LOCATE_FROM { self.locate(kind, account_id, skip, desc).await? } else { None };
            let mut sql = Sql::new(&format!("SELECT {COLS} FROM service_transfers t WHERE {column}"));
            sql.bind(Val::I64(account_id));
            if !sender {
                sql.push(" AND t.account_id <> ").bind(Val::I64(account_id));
            }
            match located {
                Some(at) => {
                    at.push_start(&mut sql, "t.id", desc);
                    sql.push(&format!(" ORDER BY t.id {dir}"));
                    at.push_window(&mut sql, wanted);
                }
                None => {
                    sql.push(&format!(" ORDER BY t.id {dir}"));
                    push_window(&mut sql, skip, wanted);
                }
            }
            rows.extend(sql.query().fetch_all(self.r()).await?);
        }
        Ok((rows, received + sent))
    }

    /// One page of the transfers an account created or accepted, newest first unless the filter
    /// orders them; `now` decides which pending transfers read as stale.
    pub async fn transfers_page(
        &self,
        account_id: i64,
        now: Timestamp,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<TransferRow>, u64)> {
        let filter = &stored_status(filter, now);
        let offset = page.saturating_sub(1).saturating_mul(page_size).min(i64::MAX as u64);
        let kept = self.kept_count(account_id, TRANSFER_KIND).await?;
        let size = page_size.min(i64::MAX as u64) as i64;
        // The fenced column the page is ordered by, if any (`id` is the list's own order).
        let by = filter.order_by.as_deref().filter(|f| TRANSFER_INDEXED.contains(f));
        let (rows, total) = if filter.cond.is_none() && filter.order_by.as_deref() == Some("is_sender") {
            self.transfers_by_half(account_id, filter.order == Order::Desc, offset, page_size).await?
        } else if let Some(order) = merged_order(filter).filter(|_| filter.cond.is_none()) {
            // The list is two index ranges (made, accepted) merged in its order; a deep page
            // starts at the block of ids the kept block counts locate, or at the range of the
            // field's order fences, and reads at most the rows skipped in it and a page of each
            // range.
            let desc = by.is_none() || filter.order == Order::Desc;
            let mut block = None;
            let mut fence = None;
            let window = match (by, offset >= LOCATE_FROM) {
                (_, false) => Window::Rows { skip: offset as i64, size },
                (None, true) => match self.locate(TRANSFER_KIND, account_id, offset, true).await? {
                    Some(at) => Window::Rows { skip: block.insert(at).skip, size },
                    None => return Ok((Vec::new(), kept.max(0) as u64)),
                },
                (Some(field), true) => {
                    let kind = format!("{TRANSFER_KIND}.{field}");
                    if let Some(int) = self.fenced_order(&kind) {
                        Window::Walked { kind, int, field, scope_id: account_id, offset: offset as i64, desc, size }
                    } else {
                        match self.locate_ordered(&kind, account_id, offset, desc).await? {
                            Some(at) => Window::Rows { skip: fence.insert(at).skip, size },
                            None => return Ok((Vec::new(), kept.max(0) as u64)),
                        }
                    }
                }
            };
            let sql = merged(HALVES.len(), &order, &window, |sql, i| {
                sql.push(&format!("SELECT {COLS} FROM service_transfers t WHERE {}", HALVES[i].0));
                sql.bind(Val::I64(account_id));
                if let Some(at) = &block {
                    at.push_start(sql, "t.id", true);
                }
                if let (Some(at), Some(f)) = (&fence, by) {
                    at.push_bound(sql, &format!("t.{f}"), "t.id");
                }
                Ok(())
            })?;
            (sql.query().fetch_all(self.r()).await?, kept)
        } else if let Some(order) = merged_order(filter).filter(|_| filter.names("is_sender")) {
            // `is_sender` decided in each half: each half reads its column's index range with
            // what is left of the filter, counted and merged in the page's order.
            let mut parts = Vec::new();
            for half in HALVES {
                let f = filter.assume("is_sender", &serde_json::Value::Bool(half.1));
                if f.matches_none() {
                    continue;
                }
                if !served_apart(&f, COLUMNS, TRANSFER_CONDS, TRANSFER_INDEXED) && kept > SCAN_BUDGET {
                    return Err(unserved_noting(kept, TRANSFER_FILTERED, TRANSFER_INDEXED, BY_HALF));
                }
                parts.push((half, f));
            }
            let mut total = 0;
            for (half, f) in &parts {
                let mut count = Sql::new("SELECT COUNT(*)");
                list_scope(&mut count, account_id, now, Some(*half));
                push_filter(&mut count, self.backend(), COLUMNS, f)?;
                total += count.query().fetch_i64(self.r()).await?;
            }
            if parts.is_empty() {
                return Ok((Vec::new(), 0));
            }
            let sql = merged(parts.len(), &order, &Window::Rows { skip: offset as i64, size }, |sql, i| {
                let (half, f) = &parts[i];
                sql.push(&format!("SELECT {COLS}"));
                list_scope(sql, account_id, now, Some(*half));
                push_filter(sql, self.backend(), COLUMNS, f)
            })?;
            (sql.query().fetch_all(self.r()).await?, total)
        } else {
            if !served_apart(filter, COLUMNS, TRANSFER_CONDS, TRANSFER_INDEXED) && kept > SCAN_BUDGET {
                return Err(unserved_noting(kept, TRANSFER_FILTERED, TRANSFER_INDEXED, BY_HALF));
            }
            let mut count = Sql::new("SELECT COUNT(*)");
            list_scope(&mut count, account_id, now, None);
            push_filter(&mut count, self.backend(), COLUMNS, filter)?;
            let total = count.query().fetch_i64(self.r()).await?;
            let mut sql = Sql::new(&format!("SELECT {COLS}"));
            list_scope(&mut sql, account_id, now, None);
            push_filter(&mut sql, self.backend(), COLUMNS, filter)?;
            push_order(&mut sql, COLUMNS, filter, "t.id DESC")?;
            push_page(&mut sql, page, page_size);
            (sql.query().fetch_all(self.r()).await?, total)
        };
        let mut out = rows.iter().map(transfer).collect::<Result<Vec<_>>>()?;
        if !out.is_empty() {
            let mut q =
                Sql::new("SELECT transfer_id, instance_id FROM service_transfer_instances WHERE transfer_id IN (");
            for (i, t) in out.iter().enumerate() {
                if i > 0 {
                    q.push(", ");
                }
                q.bind(Val::I64(t.id));
            }
            q.push(") ORDER BY transfer_id, position");
            let mut by: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for r in q.query().fetch_all(self.r()).await? {
                by.entry(r.i64("transfer_id")?).or_default().push(r.i64("instance_id")?);
            }
            for t in &mut out {
                t.instances = by.remove(&t.id).unwrap_or_default();
            }
        }
        Ok((out, total.max(0) as u64))
    }
}
