//! Accounts (tenants).

use crate::db::Row;
use nubis_model::Result;
use nubis_model::account::Account;

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::{CacheKey, Store, Tx};

const COLS: &str = "id, euuid, parent_id, company, email, first_name, last_name, created";

fn account(r: &Row) -> Result<Account> {
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

/// A new account.
pub struct NewAccount<'a> {
    pub euuid: &'a str,
    pub parent_id: Option<i64>,
    pub company: &'a str,
    pub email: &'a str,
    pub created: nubis_model::Timestamp,
}

async fn account_by_id(h: Handle<'_>, id: i64) -> Result<Option<Account>> {
    let sql = format!("SELECT {COLS} FROM accounts WHERE id = $1");
    let row = query(sql).bind(id).fetch_optional(h).await?;
    row.as_ref().map(account).transpose()
}

async fn account_by_euuid(h: Handle<'_>, euuid: &str) -> Result<Option<Account>> {
    let sql = format!("SELECT {COLS} FROM accounts WHERE euuid = $1");
    let row = query(sql).bind(euuid).fetch_optional(h).await?;
    row.as_ref().map(account).transpose()
}

impl Tx<'_> {
    pub async fn account_insert(&mut self, a: &NewAccount<'_>) -> Result<Account> {
        let sql = format!(
            "INSERT INTO accounts (euuid, parent_id, company, email, created) VALUES ($1, $2, $3, $4, $5) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(a.euuid)
            .bind(a.parent_id)
            .bind(a.company)
            .bind(a.email)
            .bind(a.created.to_string())
            .fetch_one(self.h())
            .await?;
        account(&row)
    }

    /// An account, read inside the transaction.
    pub async fn account_get(&mut self, id: i64) -> Result<Option<Account>> {
        account_by_id(self.h(), id).await
    }

    /// An account by its euuid, read inside the transaction.
    pub async fn account_by_euuid(&mut self, euuid: &str) -> Result<Option<Account>> {
        account_by_euuid(self.h(), euuid).await
    }

    /// Whether the account has child accounts (it is a parent account).
    pub async fn account_is_parent(&mut self, id: i64) -> Result<bool> {
        let n = query("SELECT COUNT(*) FROM accounts WHERE parent_id = $1").bind(id).fetch_i64(self.h()).await?;
        Ok(n > 0)
    }

    /// True when no account exists yet (first start).
    pub async fn accounts_empty(&mut self) -> Result<bool> {
        let n = query("SELECT COUNT(*) FROM accounts").fetch_i64(self.h()).await?;
        Ok(n == 0)
    }
}

impl Store {
    pub async fn account_get(&self, id: i64) -> Result<Option<Account>> {
        let found = self.cached(CacheKey::Account(id), &["accounts"], || account_by_id(self.r(), id)).await?;
        Ok(Option::clone(&found))
    }

    pub async fn account_by_euuid(&self, euuid: &str) -> Result<Option<Account>> {
        account_by_euuid(self.r(), euuid).await
    }

    pub async fn accounts_all(&self) -> Result<Vec<Account>> {
        let sql = format!("SELECT {COLS} FROM accounts ORDER BY id");
        let rows = query(sql).fetch_all(self.r()).await?;
        rows.iter().map(account).collect()
    }

    /// Child accounts of a parent account.
    pub async fn accounts_children(&self, parent_id: i64) -> Result<Vec<Account>> {
        let sql = format!("SELECT {COLS} FROM accounts WHERE parent_id = $1 ORDER BY id");
        let rows = query(sql).bind(parent_id).fetch_all(self.r()).await?;
        rows.iter().map(account).collect()
    }

    /// Bytes (in, out) an account moved in the month starting at `month`, per region.
    pub async fn account_transfer_of(&self, account_id: i64, month: i64) -> Result<Vec<(String, i64, i64)>> {
        let rows = query(
            "SELECT region, bytes_in, bytes_out FROM account_transfer \
             WHERE account_id = $1 AND month = $2 ORDER BY region",
        )
        .bind(account_id)
        .bind(month)
        .fetch_all(self.r())
        .await?;
        rows.iter().map(|r| Ok((r.str("region")?, r.i64("bytes_in")?, r.i64("bytes_out")?))).collect()
    }
}
