//! Public SSH keys of users' profiles.

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct SshKeyRow {
    pub id: i64,
    pub user_id: i64,
    pub label: String,
    pub ssh_key: String,
    pub created: Timestamp,
}

const COLS: &str = "id, user_id, label, ssh_key, created";

fn ssh_key(r: &Row) -> Result<SshKeyRow> {
    Ok(SshKeyRow {
        id: r.i64("id")?,
        user_id: r.i64("user_id")?,
        label: r.str("label")?,
        ssh_key: r.str("ssh_key")?,
        created: r.ts("created")?,
    })
}

impl Tx<'_> {
    pub async fn ssh_key_insert(&mut self, user_id: i64, label: &str, key: &str, now: Timestamp) -> Result<SshKeyRow> {
        let sql =
            format!("INSERT INTO ssh_keys (user_id, label, ssh_key, created) VALUES ($1, $2, $3, $4) RETURNING {COLS}");
        ssh_key(&query(sql).bind(user_id).bind(label).bind(key).bind(now.to_string()).fetch_one(self.h()).await?)
    }

    /// A key of the user, with its row lock taken (a no-op update), read inside the transaction.
    pub async fn ssh_key_lock(&mut self, user_id: i64, id: i64) -> Result<Option<SshKeyRow>> {
        let sql = format!("UPDATE ssh_keys SET label = label WHERE id = $1 AND user_id = $2 RETURNING {COLS}");
        query(sql).bind(id).bind(user_id).fetch_optional(self.h()).await?.as_ref().map(ssh_key).transpose()
    }

    pub async fn ssh_key_set_label(&mut self, id: i64, label: &str) -> Result<SshKeyRow> {
        let sql = format!("UPDATE ssh_keys SET label = $2 WHERE id = $1 RETURNING {COLS}");
        ssh_key(&query(sql).bind(id).bind(label).fetch_one(self.h()).await?)
    }

    pub async fn ssh_key_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM ssh_keys WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// The keys of some users of an account (by username), read inside the transaction:
    /// (username, key), in key order.
    pub async fn ssh_keys_of_usernames(
        &mut self,
        account_id: i64,
        usernames: &[String],
    ) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for u in usernames {
            let rows = query(
                "SELECT u.username, k.ssh_key FROM ssh_keys k JOIN users u ON u.id = k.user_id \
                 WHERE u.account_id = $1 AND u.username = $2 ORDER BY k.id",
            )
            .bind(account_id)
            .bind(u.as_str())
            .fetch_all(self.h())
            .await?;
            for r in &rows {
                out.push((r.str("username")?, r.str("ssh_key")?));
            }
        }
        Ok(out)
    }

    /// Which of `usernames` are users of the account, read inside the transaction.
    pub async fn usernames_of_account(&mut self, account_id: i64, usernames: &[String]) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for u in usernames {
            let n = query("SELECT COUNT(*) FROM users WHERE account_id = $1 AND username = $2")
                .bind(account_id)
                .bind(u.as_str())
                .fetch_i64(self.h())
                .await?;
            if n > 0 {
                out.push(u.clone());
            }
        }
        Ok(out)
    }
}

const SSH_KEY_LIST: Listing<'static> = Listing {
    select: "SELECT k.id, k.user_id, k.label, k.ssh_key, k.created FROM ssh_keys k",
    from: "FROM ssh_keys k",
    scope: "k.user_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "k.id", kind: ColKind::Int },
        Column { path: "label", expr: "k.label", kind: ColKind::Text },
        Column { path: "created", expr: "k.created", kind: ColKind::Text },
    ],
    order: "k.id",
    kept_count: Some("ssh_keys"),
    indexed: &["label", "created"],
};

impl Store {
    /// One page of a user's keys and how many match.
    pub async fn ssh_keys_page(
        &self,
        user_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<SshKeyRow>, u64)> {
        let v = Visibility { scope_id: user_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&SSH_KEY_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(ssh_key).collect::<Result<_>>()?, total))
    }

    pub async fn ssh_key_get(&self, user_id: i64, id: i64) -> Result<Option<SshKeyRow>> {
        let sql = format!("SELECT {COLS} FROM ssh_keys WHERE id = $1 AND user_id = $2");
        query(sql).bind(id).bind(user_id).fetch_optional(self.r()).await?.as_ref().map(ssh_key).transpose()
    }
}
