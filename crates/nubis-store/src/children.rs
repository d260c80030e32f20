//! A parent account's child accounts, page by page.

use nubis_model::Result;
use nubis_model::account::Account;
use nubis_model::filter::Filter;

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

const COLS: &str = "id, euuid, parent_id, company, email, first_name, last_name, created";

/// A parent account's child accounts.
const CHILD_LIST: Listing<'static> = Listing {
    select: "SELECT id, euuid, parent_id, company, email, first_name, last_name, created FROM accounts",
    from: "FROM accounts",
    scope: "parent_id",
    and: "",
    cols: &[
        Column { path: "euuid", expr: "euuid", kind: ColKind::Text },
        Column { path: "company", expr: "company", kind: ColKind::Text },
        Column { path: "email", expr: "email", kind: ColKind::Text },
        Column { path: "first_name", expr: "first_name", kind: ColKind::Text },
        Column { path: "last_name", expr: "last_name", kind: ColKind::Text },
    ],
    order: "id",
    kept_count: Some("child_accounts"),
    indexed: &["euuid", "company", "email", "first_name", "last_name"],
};

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
        let v = Visibility { scope_id: parent_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&CHILD_LIST, &v, filter, page, page_size).await?;
        let data = rows.iter().map(account).collect::<Result<Vec<_>>>()?;
        Ok((data, total))
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
