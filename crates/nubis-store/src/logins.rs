//! Sign-in attempts: the record behind `GET /v4/account/logins` and `/v4/profile/logins`, and the
//! counts wrong-password throttling reads (in the transaction that records the attempt).

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::signin::Login;
use nubis_model::{Result, Timestamp};
use serde_json::Value;

use crate::db::query;
use crate::fences::Rows;
use crate::pages::{DeepStart, LOCATE_FROM};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, SCAN_BUDGET, Sql, Val, push_filter_led, push_is, push_kept_count, served, unserved};
use crate::{Store, Tx};

const COLS: &str = "id, datetime, ip, username, status, restricted";

const COLUMNS: &[Column] = &[
    Column { path: "id", expr: "id", kind: ColKind::Int },
    Column { path: "datetime", expr: "datetime", kind: ColKind::Text },
    Column { path: "ip", expr: "ip", kind: ColKind::Text },
    Column { path: "username", expr: "username", kind: ColKind::Text },
    Column { path: "status", expr: "status", kind: ColKind::Text },
    Column { path: "restricted", expr: "restricted", kind: ColKind::Bool },
];

/// The sign-ins a list shows, written as the condition of its indexes, which a read uses only
/// when it names every term: a successful attempt has an account and a user. The account's list
/// writes "has a user" as `COALESCE(user_id, 0) > 0` (migration 68), which no index led by the
/// user can take as a range (`user_id IS NOT NULL` is one: SQLite counted the account's sign-ins
/// filtered by a username through such an index, reading every sign-in of the account); the
/// user's list names the user, so it keeps the plain term (migration 56).
const ACCOUNT_LISTED: &str = " AND status = 'successful' AND account_id IS NOT NULL AND COALESCE(user_id, 0) > 0";
const USER_LISTED: &str = " AND status = 'successful' AND account_id IS NOT NULL AND user_id IS NOT NULL";

/// The condition of the sign-ins the list of `s` shows, after ` AND ` ([`ACCOUNT_LISTED`],
/// [`USER_LISTED`]).
fn and_listed(s: &LoginScope) -> &'static str {
    if s.user_id.is_some() { USER_LISTED } else { ACCOUNT_LISTED }
}

/// The fields an index on the account (or the user) and the field serves (migrations 36, 56;
/// `restricted` 68).
const INDEXED: &[&str] = &["datetime", "ip", "username", "restricted"];

fn login(r: &Row) -> Result<Login> {
    Ok(Login {
        id: r.i64("id")?,
        datetime: r.ts("datetime")?,
        ip: r.str("ip")?,
        username: r.str("username")?,
        status: r.str("status")?,
        restricted: r.bool("restricted")?,
    })
}

pub struct NewLogin<'a> {
    pub account_id: Option<i64>,
    pub user_id: Option<i64>,
    pub username: &'a str,
    pub ip: &'a str,
    pub datetime: Timestamp,
    pub successful: bool,
    pub restricted: bool,
}

/// Whose logins a page shows: the account's, or one user's.
#[derive(Debug, Clone, Copy)]
pub struct LoginScope {
    pub account_id: i64,
    pub user_id: Option<i64>,
    pub since: Timestamp,
}

fn scope(sql: &mut Sql, s: &LoginScope) {
    scope_as(sql, s, false);
}

/// [`scope`], with the column the list is counted by (the user, else the account) written as a
/// range of its one value when `led`, for a page ordered by it first ([`push_is`]).
fn scope_as(sql: &mut Sql, s: &LoginScope, led: bool) {
    sql.push(&format!(" WHERE {} AND ", and_listed(s).trim_start_matches(" AND ")));
    if s.user_id.is_some() {
        // The user's sign-ins are the account's too; written as no index's term (`+`), since
        // SQLite, with its statistics sampled (`PRAGMA optimize`), read every sign-in of the
        // account through the index led by it rather than the user's.
        sql.push("+account_id = ").bind(Val::I64(s.account_id));
    } else {
        push_is(sql, "account_id", s.account_id, led);
    }
    // Not an index range (`|| ''`): a page walks the logins in id order (see events.rs).
    sql.push(" AND datetime || '' >= ").bind(Val::Str(s.since.to_string()));
    if let Some(u) = s.user_id {
        sql.push(" AND ");
        push_is(sql, "user_id", u, led);
    }
}

impl Tx<'_> {
    /// Deletes up to `limit` of the oldest sign-in attempts recorded before `before`; returns how
    /// many.
    pub async fn logins_delete_before(&mut self, before: Timestamp, limit: i64) -> Result<u64> {
        query(
            "DELETE FROM logins WHERE id IN (SELECT id FROM logins WHERE datetime < $1 ORDER BY datetime, id LIMIT $2)",
        )
        .bind(before.to_string())
        .bind(limit)
        .execute(self.h())
        .await
    }

    /// Records a sign-in attempt; returns its id.
    pub async fn login_insert(&mut self, l: &NewLogin<'_>) -> Result<i64> {
        query(
            "INSERT INTO logins (account_id, user_id, username, ip, datetime, status, restricted) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(l.account_id)
        .bind(l.user_id)
        .bind(l.username)
        .bind(l.ip)
        .bind(l.datetime)
        .bind(if l.successful { "successful" } else { "failed" })
        .bind(l.restricted)
        .fetch_i64(self.h())
        .await
    }

    /// Marks a recorded attempt successful (its password was right).
    pub async fn login_succeeded(&mut self, id: i64) -> Result<()> {
        query("UPDATE logins SET status = 'successful' WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Failed sign-ins since `since`, counted in this transaction: (for this username from this
    /// address, from this address).
    pub async fn login_failures_since(&mut self, username: &str, ip: &str, since: Timestamp) -> Result<(i64, i64)> {
        let by_pair = query(
            "SELECT COUNT(*) FROM logins WHERE username = $1 AND ip = $2 AND status = 'failed' AND datetime >= $3",
        )
        .bind(username)
        .bind(ip)
        .bind(since)
        .fetch_i64(self.h())
        .await?;
        let by_ip = query("SELECT COUNT(*) FROM logins WHERE ip = $1 AND status = 'failed' AND datetime >= $2")
            .bind(ip)
            .bind(since)
            .fetch_i64(self.h())
            .await?;
        Ok((by_pair, by_ip))
    }
}

impl Store {
    /// One page of successful logins, newest first.
    pub async fn logins_page(
        &self,
        s: &LoginScope,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<Login>, u64)> {
        // Only successful sign-ins are listed: a condition on the status holds or fails for
        // every one, and the order by it is the order of their ids.
        let filter = &filter.assume("status", &Value::from("successful")).order_tied("status", "id");
        if filter.matches_none() {
            return Ok((Vec::new(), 0));
        }
        // The kept count and blocks of the account's successful logins, or of the user's.
        let (kind, column, scope_id) = match s.user_id {
            Some(u) => ("user_logins", "user_id", u),
            None => ("account_logins", "account_id", s.account_id),
        };
        if !served(filter, COLUMNS, INDEXED) {
            let n = self.kept_count(scope_id, kind).await?;
            if n > SCAN_BUDGET {
                return Err(unserved(n, INDEXED));
            }
        }
        let offset = page.saturating_sub(1).saturating_mul(page_size);
        // The whole list: the kept count less the logins past the window (an index range of
        // those alone).
        let (total, aged) = if filter.cond.is_none() {
            let mut count = Sql::new("SELECT (");
            push_kept_count(&mut count, scope_id, kind);
            count.push(&format!(") AS kept, (SELECT COUNT(*) FROM logins WHERE {column} = ")).bind(Val::I64(scope_id));
            count.push(" AND datetime < ").bind(Val::Str(s.since.to_string()));
            let row = count.push(&format!("{}) AS aged", and_listed(s))).query().fetch_one(self.r()).await?;
            let aged = row.i64("aged")?;
            (row.i64("kept")? - aged, aged)
        } else {
            let mut count = Sql::new("SELECT COUNT(*) FROM logins");
            scope(&mut count, s);
            push_filter_led(&mut count, self.backend(), COLUMNS, filter, INDEXED, "id DESC")?;
            (count.query().fetch_i64(self.r()).await?, 0)
        };
        // A deep page starts where the block counts (newest first, or by id) or the order
        // fences say, when every counted sign-in is listed.
        let start = if filter.cond.is_none() && aged == 0 && offset >= LOCATE_FROM {
            let rows =
                Rows { from: "FROM logins", scope: column, and: and_listed(s), scope_id, backend: self.backend() };
            self.deep_start(kind, rows, offset, COLUMNS, filter, "id DESC").await?
        } else {
            DeepStart::Skip
        };
        let start = match start {
            DeepStart::Skip if filter.cond.is_none() => DeepStart::Led(column),
            start => start,
        };
        if let DeepStart::Past = start {
            return Ok((Vec::new(), total.max(0) as u64));
        }
        let mut sql = Sql::default();
        start.push_with(&mut sql, page_size);
        sql.push(&format!("SELECT {COLS} FROM logins"));
        scope_as(&mut sql, s, matches!(start, DeepStart::Led(_)));
        push_filter_led(&mut sql, self.backend(), COLUMNS, filter, INDEXED, "id DESC")?;
        start.push_page(&mut sql, COLUMNS, filter, "id DESC", offset, page_size)?;
        let rows = sql.query().fetch_all(self.r()).await?;
        let data = rows.iter().map(login).collect::<Result<Vec<_>>>()?;
        Ok((data, total.max(0) as u64))
    }

    pub async fn login_get(&self, s: &LoginScope, id: i64) -> Result<Option<Login>> {
        let mut sql = Sql::new(&format!("SELECT {COLS} FROM logins"));
        scope(&mut sql, s);
        sql.push(" AND id = ").bind(Val::I64(id));
        let row = sql.query().fetch_optional(self.r()).await?;
        row.as_ref().map(login).transpose()
    }

    /// The latest sign-in attempt of each of some users: (user, time, status), read by key.
    ///
    /// Each user's latest attempt is the last entry of the user's range of the index on
    /// (user, id). The range is written `user_id >= u AND user_id <= u`, not `user_id = u`, with
    /// its order on both columns: with an equality, PostgreSQL drops the user from the order and
    /// may take the newest sign-ins of the whole database backwards instead, until one is the
    /// user's. It does so when one user made most of them (as an administrator does): at 100,000
    /// sign-ins a page of users, most with none, took seconds (0.3 ms this way).
    pub async fn logins_latest_of_users(&self, user_ids: &[i64]) -> Result<Vec<(i64, Timestamp, String)>> {
        if user_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = Sql::new(
            "SELECT l.user_id, l.datetime, l.status FROM logins l WHERE l.id IN \
             (SELECT (SELECT m.id FROM logins m WHERE m.user_id >= u.id AND m.user_id <= u.id \
             ORDER BY m.user_id DESC, m.id DESC LIMIT 1) FROM users u WHERE u.id IN ",
        );
        crate::sql::push_ids(&mut sql, user_ids);
        sql.push(")");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(|r| Ok((r.i64("user_id")?, r.ts("datetime")?, r.str("status")?))).collect()
    }
}
