//! A parent account's child accounts, page by page.

use nubis_model::Result;
use nubis_model::account::Account;
use nubis_model::filter::Filter;

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Sql, Val, push_filter, push_order};
use crate::{Store, Tx};

const COLS: &str = "id, euuid, parent_id, company, email, first_name, last_name, created";

const COLUMNS: &[Column] = &[
    Column { path: "euuid", expr: "euuid", kind: ColKind::Text },
    Column { path: "company", expr: "company", kind: ColKind::Text },
    Column { path: "email", expr: "email", kind: ColKind::Text },
    Column { path: "first_name", expr: "first_name", kind: ColKind::Text },
    Column { path: "last_name", expr: "last_name", kind: ColKind::Text },
];

fn account(r: &crate::db::Row) -> Result<Account> {
    Ok(Account {
        id: r.i64("id")?,
        euuid: r.str("euuid")?,
        parent_id: r.opt_i64("parent_id")?,
        company: r.str("company")?,
        email: r.str("email")?,
        first_name: r.str("first_name")?,
        last_name: r.str("last_name")?,
        active_since: r.ts("created")?,
    })
}

impl Store {
    pub async fn child_accounts_page(
        &self,
        parent_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<Account>, u64)> {
        let mut count = Sql::new("SELECT COUNT(*) FROM accounts WHERE parent_id = ");
        count.bind(Val::I64(parent_id));
        push_filter(&mut count, self.backend(), COLUMNS, filter)?;
        let total = count.query().fetch_i64(self.r()).await?;
        let mut sql = Sql::new(&format!("SELECT {COLS} FROM accounts WHERE parent_id = "));
        sql.bind(Val::I64(parent_id));
        push_filter(&mut sql, self.backend(), COLUMNS, filter)?;
        push_order(&mut sql, COLUMNS, filter, "id")?;
        sql.push(" LIMIT ").bind(Val::I64(page_size as i64));
        sql.push(" OFFSET ")
            .bind(Val::I64(page.saturating_sub(1).saturating_mul(page_size).min(i64::MAX as u64) as i64));
        let rows = sql.query().fetch_all(self.r()).await?;
        let data = rows.iter().map(account).collect::<Result<Vec<_>>>()?;
        Ok((data, total.max(0) as u64))
    }

    /// A child account of `parent_id` by euuid.
    pub async fn child_account_get(&self, parent_id: i64, euuid: &str) -> Result<Option<Account>> {
        child_account_get(self.r(), parent_id, euuid).await
    }
}

impl Tx<'_> {
    /// A child account of `parent_id` by euuid, read inside the transaction.
    pub async fn child_account_get(&mut self, parent_id: i64, euuid: &str) -> Result<Option<Account>> {
        child_account_get(self.h(), parent_id, euuid).await
    }
}

async fn child_account_get(h: Handle<'_>, parent_id: i64, euuid: &str) -> Result<Option<Account>> {
    let sql = format!("SELECT {COLS} FROM accounts WHERE parent_id = $1 AND euuid = $2");
    let row = query(sql).bind(parent_id).bind(euuid).fetch_optional(h).await?;
    row.as_ref().map(account).transpose()
}
