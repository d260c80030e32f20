//! Personal access tokens, stored by the SHA-256 hash of their secret, and the credential
//! lookup that authenticates every request.

use std::sync::Arc;

use crate::db::Row;
use nubis_model::account::{Credential, Token, UserType};
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{CacheKey, Store, Tx};
use nubis_model::filter::Filter;

const COLS: &str = "id, user_id, label, scopes, created, expiry";

fn token(r: &Row) -> Result<Token> {
    Ok(Token {
        id: r.i64("id")?,
        user_id: r.i64("user_id")?,
        label: r.str("label")?,
        scopes: r.str("scopes")?,
        created: r.ts("created")?,
        expiry: r.opt_ts("expiry")?,
        token: None,
    })
}

pub struct NewToken<'a> {
    pub user_id: i64,
    pub label: &'a str,
    pub scopes: &'a str,
    /// Hex SHA-256 of the secret.
    pub secret_hash: &'a str,
    /// `pat` (personal access token) or `proxy` (child-account proxy token).
    pub kind: &'a str,
    pub created: Timestamp,
    pub expiry: Option<Timestamp>,
}

impl Tx<'_> {
    pub async fn token_insert(&mut self, t: &NewToken<'_>) -> Result<Token> {
        let sql = format!(
            "INSERT INTO tokens (user_id, label, scopes, secret_hash, kind, created, expiry) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(t.user_id)
            .bind(t.label)
            .bind(t.scopes)
            .bind(t.secret_hash)
            .bind(t.kind)
            .bind(t.created.to_string())
            .bind(t.expiry.map(|e| e.to_string()))
            .fetch_one(self.h())
            .await?;
        token(&row)
    }

    pub async fn token_update_label(&mut self, id: i64, label: &str) -> Result<Token> {
        let sql = format!("UPDATE tokens SET label = $2 WHERE id = $1 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(label).fetch_one(self.h()).await?;
        token(&row)
    }

    /// The OAuth client a token was issued to (`Some(None)` for a token of no client: personal,
    /// proxy, bootstrap), read in this transaction; `None` when the token is gone.
    pub async fn token_client(&mut self, id: i64) -> Result<Option<Option<String>>> {
        let row = query("SELECT client_id FROM tokens WHERE id = $1").bind(id).fetch_optional(self.h()).await?;
        row.map(|r| r.opt_str("client_id")).transpose()
    }

    /// One personal access token of a user, read in this transaction.
    pub async fn token_get(&mut self, user_id: i64, id: i64) -> Result<Option<Token>> {
        let sql = format!("SELECT {COLS} FROM tokens WHERE id = $1 AND user_id = $2 AND kind = 'pat'");
        let row = query(sql).bind(id).bind(user_id).fetch_optional(self.h()).await?;
        row.as_ref().map(token).transpose()
    }

    pub async fn token_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM tokens WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }
}

impl Store {
    /// The credential behind a secret's hash, if a token with that hash exists.
    pub async fn credential(&self, hash: [u8; 32]) -> Result<Arc<Option<Credential>>> {
        self.cached(CacheKey::Credential(hash), &["tokens", "users", "accounts", "account_billing"], || async move {
            let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
            let row = query(
                "SELECT t.id AS token_id, t.scopes, t.expiry, u.id AS user_id, u.username, u.restricted, \
                 u.user_type, u.account_id, a.parent_id \
                 FROM tokens t JOIN users u ON u.id = t.user_id JOIN accounts a ON a.id = u.account_id \
                 WHERE t.secret_hash = $1 AND NOT EXISTS \
                 (SELECT 1 FROM account_billing ab WHERE ab.account_id = a.id AND ab.canceled IS NOT NULL)",
            )
            .bind(hex)
            .fetch_optional(self.r())
            .await?;
            row.map(|r| {
                Ok(Credential {
                    token_id: r.i64("token_id")?,
                    scopes: r.str("scopes")?,
                    expiry: r.opt_ts("expiry")?,
                    user_id: r.i64("user_id")?,
                    username: r.str("username")?,
                    restricted: r.bool("restricted")?,
                    user_type: UserType::parse(&r.str("user_type")?),
                    account_id: r.i64("account_id")?,
                    account_parent_id: r.opt_i64("parent_id")?,
                })
            })
            .transpose()
        })
        .await
    }
}

const TOKEN_LIST: Listing<'static> = Listing {
    select: "SELECT t.id, t.user_id, t.label, t.scopes, t.created, t.expiry FROM tokens t",
    from: "FROM tokens t",
    scope: "t.user_id",
    and: " AND t.kind = 'pat'",
    cols: &[
        Column { path: "id", expr: "t.id", kind: ColKind::Int },
        Column { path: "label", expr: "t.label", kind: ColKind::Text },
        Column { path: "created", expr: "t.created", kind: ColKind::Text },
        Column { path: "expiry", expr: "t.expiry", kind: ColKind::TextOrNull },
    ],
    order: "t.id",
    kept_count: Some("personal_tokens"),
    indexed: &["label", "created", "expiry"],
};

impl Store {
    /// One personal access token of a user.
    pub async fn token_get(&self, user_id: i64, id: i64) -> Result<Option<Token>> {
        let sql = format!("SELECT {COLS} FROM tokens WHERE id = $1 AND user_id = $2 AND kind = 'pat'");
        let row = query(sql).bind(id).bind(user_id).fetch_optional(self.r()).await?;
        row.as_ref().map(token).transpose()
    }

    /// One page of a user's personal access tokens and how many there are.
    pub async fn tokens_page(
        &self,
        user_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<Token>, u64)> {
        let v = Visibility { scope_id: user_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&TOKEN_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(token).collect::<Result<_>>()?, total))
    }
}
