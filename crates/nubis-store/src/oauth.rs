//! OAuth clients, the grants users give them, and the authorization codes and refresh tokens
//! issued under those grants. Access tokens issued to a client are rows of `tokens` (kind
//! `oauth`) carrying its `client_id` and `grant_id`, so removing a client, its secret or one
//! grant removes them in the same transaction. Codes and refresh tokens name their client
//! without a foreign key: the console's client is a system client, defined by the
//! configuration, not a row of any account.

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::signin::{OAuthClient, REDACTED};
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

const COLS: &str = "id, account_id, label, redirect_uri, public, status, thumbnail_type";

const COLUMNS: &[Column] = &[
    Column { path: "id", expr: "id", kind: ColKind::Text },
    Column { path: "label", expr: "label", kind: ColKind::Text },
    Column { path: "public", expr: "public", kind: ColKind::Bool },
    Column { path: "redirect_uri", expr: "redirect_uri", kind: ColKind::Text },
    Column { path: "status", expr: "status", kind: ColKind::Text },
];

/// An account's clients, in the order they were made (`seq`: their ids are text).
const CLIENT_LIST: Listing<'static> = Listing {
    select: "SELECT id, account_id, label, redirect_uri, public, status, thumbnail_type FROM oauth_clients",
    from: "FROM oauth_clients",
    scope: "account_id",
    and: "",
    cols: COLUMNS,
    order: "seq",
    kept_count: Some("oauth_clients"),
    indexed: &["label", "redirect_uri", "status", "public"],
};

fn client(r: &Row) -> Result<OAuthClient> {
    Ok(OAuthClient {
        id: r.str("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        redirect_uri: r.str("redirect_uri")?,
        public: r.bool("public")?,
        status: r.str("status")?,
        secret: REDACTED.to_string(),
        thumbnail_url: None,
        has_thumbnail: r.opt_str("thumbnail_type")?.is_some(),
    })
}

pub struct NewClient<'a> {
    pub id: &'a str,
    pub account_id: i64,
    pub label: &'a str,
    pub redirect_uri: &'a str,
    pub public: bool,
    pub secret_hash: &'a str,
    pub created: Timestamp,
}

/// An authorization code: the grant it starts, waiting to be exchanged.
#[derive(Debug, Clone)]
pub struct CodeGrant {
    pub grant_id: String,
    pub client_id: String,
    pub user_id: i64,
    pub redirect_uri: String,
    pub scopes: String,
    pub code_challenge: Option<String>,
    pub expiry: Timestamp,
}

/// A refresh token's grant.
#[derive(Debug, Clone)]
pub struct RefreshGrant {
    pub grant_id: String,
    pub client_id: String,
    pub user_id: i64,
    pub scopes: String,
    pub access_token_id: Option<i64>,
    pub expiry: Timestamp,
}

/// What presenting a code or a refresh token found.
#[derive(Debug, Clone)]
pub enum Presented<T> {
    /// Unused until now: it is used up by this presentation.
    First(T),
    /// Used before (a replayed code, a rotated refresh token): the grant it belongs to.
    Again {
        grant_id: String,
    },
    Unknown,
}

/// A grant: one approval of an authorization request by a user, from which every access and
/// refresh token of one family descends.
pub struct NewGrant<'a> {
    pub id: &'a str,
    pub client_id: &'a str,
    pub user_id: i64,
    /// SHA-256 of the sign-in session that approved it.
    pub session_hash: Option<&'a str>,
    pub expiry: Timestamp,
}

impl Tx<'_> {
    pub async fn oauth_client_insert(&mut self, c: &NewClient<'_>) -> Result<OAuthClient> {
        let sql = format!(
            "INSERT INTO oauth_clients (id, account_id, label, redirect_uri, public, secret_hash, created, seq) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, (SELECT COALESCE(MAX(seq), 0) + 1 FROM oauth_clients)) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(c.id)
            .bind(c.account_id)
            .bind(c.label)
            .bind(c.redirect_uri)
            .bind(c.public)
            .bind(c.secret_hash)
            .bind(c.created)
            .fetch_one(self.h())
            .await?;
        client(&row)
    }

    pub async fn oauth_client_update(
        &mut self,
        id: &str,
        label: Option<&str>,
        redirect_uri: Option<&str>,
        public: Option<bool>,
    ) -> Result<OAuthClient> {
        let sql = format!(
            "UPDATE oauth_clients SET label = COALESCE($2, label), redirect_uri = COALESCE($3, redirect_uri), \
             public = COALESCE($4, public) WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql).bind(id).bind(label).bind(redirect_uri).bind(public).fetch_one(self.h()).await?;
        client(&row)
    }

    /// Everything issued to a client stops working: its access tokens, refresh tokens and codes.
    pub async fn oauth_client_revoke_all(&mut self, id: &str) -> Result<()> {
        query("DELETE FROM tokens WHERE client_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM oauth_refresh_tokens WHERE client_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM oauth_codes WHERE client_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM oauth_grants WHERE client_id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// A client of any account with the hash of its secret, read in this transaction.
    pub async fn oauth_client_get(&mut self, id: &str) -> Result<Option<(OAuthClient, String)>> {
        let sql = format!("SELECT {COLS}, secret_hash FROM oauth_clients WHERE id = $1");
        let row = query(sql).bind(id).fetch_optional(self.h()).await?;
        row.map(|r| Ok((client(&r)?, r.str("secret_hash")?))).transpose()
    }

    pub async fn oauth_client_delete(&mut self, id: &str) -> Result<()> {
        self.oauth_client_revoke_all(id).await?;
        query("DELETE FROM oauth_clients WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Replaces the secret; the old one and everything issued with it stop working.
    pub async fn oauth_client_set_secret(&mut self, id: &str, secret_hash: &str) -> Result<OAuthClient> {
        self.oauth_client_revoke_all(id).await?;
        let sql = format!("UPDATE oauth_clients SET secret_hash = $2 WHERE id = $1 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(secret_hash).fetch_one(self.h()).await?;
        client(&row)
    }

    /// Stores a thumbnail (its content type and the image as base64).
    pub async fn oauth_client_set_thumbnail(&mut self, id: &str, content_type: &str, base64: &str) -> Result<()> {
        query("UPDATE oauth_clients SET thumbnail_type = $2, thumbnail = $3 WHERE id = $1")
            .bind(id)
            .bind(content_type)
            .bind(base64)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Marks an access token as issued to a client under a grant.
    pub async fn token_set_grant(&mut self, token_id: i64, client_id: &str, grant_id: &str) -> Result<()> {
        query("UPDATE tokens SET client_id = $2, grant_id = $3 WHERE id = $1")
            .bind(token_id)
            .bind(client_id)
            .bind(grant_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn oauth_grant_insert(&mut self, g: &NewGrant<'_>) -> Result<()> {
        query("INSERT INTO oauth_grants (id, client_id, user_id, session_hash, expiry) VALUES ($1, $2, $3, $4, $5)")
            .bind(g.id)
            .bind(g.client_id)
            .bind(g.user_id)
            .bind(g.session_hash)
            .bind(g.expiry)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Keeps a grant (and what is kept to recognize replays) at least until `expiry`; false when
    /// the grant no longer exists (revoked).
    pub async fn oauth_grant_extend(&mut self, id: &str, expiry: Timestamp) -> Result<bool> {
        let n = query("UPDATE oauth_grants SET expiry = CASE WHEN expiry < $2 THEN $2 ELSE expiry END WHERE id = $1")
            .bind(id)
            .bind(expiry)
            .execute(self.h())
            .await?;
        Ok(n > 0)
    }

    /// Revokes a grant: every access token, refresh token and code descended from it ends.
    /// Returns the sign-in session that approved it.
    pub async fn oauth_grant_revoke(&mut self, id: &str) -> Result<Option<String>> {
        query("DELETE FROM tokens WHERE grant_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM oauth_refresh_tokens WHERE grant_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM oauth_codes WHERE grant_id = $1").bind(id).execute(self.h()).await?;
        let row = query("DELETE FROM oauth_grants WHERE id = $1 RETURNING session_hash")
            .bind(id)
            .fetch_optional(self.h())
            .await?;
        Ok(row.map(|r| r.opt_str("session_hash")).transpose()?.flatten())
    }

    /// Forgets grants, codes and rotated refresh tokens past their expiry.
    pub async fn oauth_grants_purge(&mut self, now: Timestamp) -> Result<()> {
        query("DELETE FROM oauth_codes WHERE grant_id IN (SELECT id FROM oauth_grants WHERE expiry < $1)")
            .bind(now)
            .execute(self.h())
            .await?;
        query("DELETE FROM oauth_refresh_tokens WHERE expiry < $1").bind(now).execute(self.h()).await?;
        query("DELETE FROM oauth_grants WHERE expiry < $1").bind(now).execute(self.h()).await?;
        Ok(())
    }

    pub async fn oauth_code_insert(&mut self, code_hash: &str, g: &CodeGrant) -> Result<()> {
        query(
            "INSERT INTO oauth_codes (code_hash, grant_id, client_id, user_id, redirect_uri, scopes, code_challenge, \
             expiry) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(code_hash)
        .bind(&g.grant_id)
        .bind(&g.client_id)
        .bind(g.user_id)
        .bind(&g.redirect_uri)
        .bind(&g.scopes)
        .bind(g.code_challenge.clone())
        .bind(g.expiry)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Uses a code up and returns its grant; a code used before is kept (until its grant ends)
    /// so that a replay is recognized.
    pub async fn oauth_code_use(&mut self, code_hash: &str) -> Result<Presented<CodeGrant>> {
        let row = query(
            "UPDATE oauth_codes SET used = TRUE WHERE code_hash = $1 AND NOT used \
             RETURNING grant_id, client_id, user_id, redirect_uri, scopes, code_challenge, expiry",
        )
        .bind(code_hash)
        .fetch_optional(self.h())
        .await?;
        if let Some(r) = row {
            return Ok(Presented::First(CodeGrant {
                grant_id: r.str("grant_id")?,
                client_id: r.str("client_id")?,
                user_id: r.i64("user_id")?,
                redirect_uri: r.str("redirect_uri")?,
                scopes: r.str("scopes")?,
                code_challenge: r.opt_str("code_challenge")?,
                expiry: r.ts("expiry")?,
            }));
        }
        self.presented_again("oauth_codes", "code_hash", code_hash).await
    }

    async fn presented_again<T>(&mut self, table: &str, key: &str, hash: &str) -> Result<Presented<T>> {
        let row =
            query(format!("SELECT grant_id FROM {table} WHERE {key} = $1")).bind(hash).fetch_optional(self.h()).await?;
        Ok(match row {
            Some(r) => Presented::Again { grant_id: r.str("grant_id")? },
            None => Presented::Unknown,
        })
    }

    pub async fn oauth_refresh_insert(&mut self, token_hash: &str, g: &RefreshGrant) -> Result<()> {
        query(
            "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, client_id, user_id, scopes, access_token_id, \
             expiry) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(token_hash)
        .bind(&g.grant_id)
        .bind(&g.client_id)
        .bind(g.user_id)
        .bind(&g.scopes)
        .bind(g.access_token_id)
        .bind(g.expiry)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Uses a refresh token up (refresh tokens rotate on every use) and returns its grant; a
    /// rotated one is kept until it expires, so that a reuse is recognized.
    pub async fn oauth_refresh_use(&mut self, token_hash: &str) -> Result<Presented<RefreshGrant>> {
        let row = query(
            "UPDATE oauth_refresh_tokens SET used = TRUE WHERE token_hash = $1 AND NOT used \
             RETURNING grant_id, client_id, user_id, scopes, access_token_id, expiry",
        )
        .bind(token_hash)
        .fetch_optional(self.h())
        .await?;
        if let Some(r) = row {
            return Ok(Presented::First(RefreshGrant {
                grant_id: r.str("grant_id")?,
                client_id: r.str("client_id")?,
                user_id: r.i64("user_id")?,
                scopes: r.str("scopes")?,
                access_token_id: r.opt_i64("access_token_id")?,
                expiry: r.ts("expiry")?,
            }));
        }
        self.presented_again("oauth_refresh_tokens", "token_hash", token_hash).await
    }

    /// The grant of an access token issued to `client_id`, found by the token's hash.
    pub async fn oauth_access_grant(&mut self, token_hash: &str, client_id: &str) -> Result<Option<Option<String>>> {
        let row = query("SELECT grant_id FROM tokens WHERE secret_hash = $1 AND client_id = $2")
            .bind(token_hash)
            .bind(client_id)
            .fetch_optional(self.h())
            .await?;
        row.map(|r| r.opt_str("grant_id")).transpose()
    }

    /// Deletes an access token issued to `client_id`, by its hash; true when one was deleted.
    pub async fn oauth_access_revoke(&mut self, token_hash: &str, client_id: &str) -> Result<bool> {
        let n = query("DELETE FROM tokens WHERE secret_hash = $1 AND client_id = $2")
            .bind(token_hash)
            .bind(client_id)
            .execute(self.h())
            .await?;
        Ok(n > 0)
    }

    /// The grant of a refresh token of `client_id`, found by its hash.
    pub async fn oauth_refresh_grant(&mut self, token_hash: &str, client_id: &str) -> Result<Option<String>> {
        let row = query("SELECT grant_id FROM oauth_refresh_tokens WHERE token_hash = $1 AND client_id = $2")
            .bind(token_hash)
            .bind(client_id)
            .fetch_optional(self.h())
            .await?;
        row.map(|r| r.str("grant_id")).transpose()
    }
}

impl Store {
    /// One page of an account's clients.
    pub async fn oauth_clients_page(
        &self,
        account_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<OAuthClient>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&CLIENT_LIST, &v, filter, page, page_size).await?;
        let data = rows.iter().map(client).collect::<Result<Vec<_>>>()?;
        Ok((data, total))
    }

    /// A client of any account with the hash of its secret.
    pub async fn oauth_client_get(&self, id: &str) -> Result<Option<(OAuthClient, String)>> {
        let sql = format!("SELECT {COLS}, secret_hash FROM oauth_clients WHERE id = $1");
        let row = query(sql).bind(id).fetch_optional(self.r()).await?;
        row.map(|r| Ok((client(&r)?, r.str("secret_hash")?))).transpose()
    }

    /// A client's thumbnail: (content type, base64 image).
    pub async fn oauth_client_thumbnail(&self, id: &str) -> Result<Option<(String, String)>> {
        let row = query("SELECT thumbnail_type, thumbnail FROM oauth_clients WHERE id = $1 AND thumbnail IS NOT NULL")
            .bind(id)
            .fetch_optional(self.r())
            .await?;
        row.map(|r| Ok((r.str("thumbnail_type")?, r.str("thumbnail")?))).transpose()
    }
}
