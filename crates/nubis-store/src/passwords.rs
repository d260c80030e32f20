//! Users' passwords (argon2 PHC strings), the single-use links that set them, and the sign-in
//! sessions of the authorization server's pages. Link and session secrets are stored as SHA-256.

use nubis_model::{Result, Timestamp};

use crate::db::Row;

use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

/// What signing a user in needs to know of them, read in the sign-in's transaction.
#[derive(Debug, Clone)]
pub struct SigninUser {
    pub id: i64,
    pub account_id: i64,
    pub restricted: bool,
    /// Proxy users have no password and sign in through their parent account.
    pub user_type: String,
    /// The argon2 PHC string, when a password was set.
    pub password_hash: Option<String>,
}

fn signin_user(r: &Row) -> Result<SigninUser> {
    Ok(SigninUser {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        restricted: r.bool("restricted")?,
        user_type: r.str("user_type")?,
        password_hash: r.opt_str("password_hash")?,
    })
}

const SIGNIN_COLS: &str = "id, account_id, restricted, user_type, password_hash";

impl Tx<'_> {
    /// A user by username, as signing in needs it.
    pub async fn signin_user(&mut self, username: &str) -> Result<Option<SigninUser>> {
        let row = query(format!("SELECT {SIGNIN_COLS} FROM users WHERE username = $1"))
            .bind(username)
            .fetch_optional(self.h())
            .await?;
        row.as_ref().map(signin_user).transpose()
    }

    /// A user by id, as signing in needs it.
    pub async fn signin_user_by_id(&mut self, id: i64) -> Result<Option<SigninUser>> {
        let row =
            query(format!("SELECT {SIGNIN_COLS} FROM users WHERE id = $1")).bind(id).fetch_optional(self.h()).await?;
        row.as_ref().map(signin_user).transpose()
    }

    /// Sets a user's password. Everything the old password opened ends with it: the user's
    /// set-password links, sign-in sessions, and every grant given to OAuth clients with the
    /// access tokens, refresh tokens and codes issued under them. Personal access tokens stay.
    pub async fn user_set_password(&mut self, user_id: i64, phc: &str, now: Timestamp) -> Result<()> {
        query("UPDATE users SET password_hash = $2, password_created = $3 WHERE id = $1")
            .bind(user_id)
            .bind(phc)
            .bind(now)
            .execute(self.h())
            .await?;
        query("DELETE FROM password_links WHERE user_id = $1").bind(user_id).execute(self.h()).await?;
        query("DELETE FROM signin_sessions WHERE user_id = $1").bind(user_id).execute(self.h()).await?;
        self.user_oauth_revoke(user_id).await
    }

    /// Ends every grant of a user with what was issued under it.
    pub async fn user_oauth_revoke(&mut self, user_id: i64) -> Result<()> {
        query("DELETE FROM tokens WHERE user_id = $1 AND kind = 'oauth'").bind(user_id).execute(self.h()).await?;
        for table in ["oauth_refresh_tokens", "oauth_codes", "oauth_grants"] {
            query(format!("DELETE FROM {table} WHERE user_id = $1")).bind(user_id).execute(self.h()).await?;
        }
        Ok(())
    }

    pub async fn password_link_insert(&mut self, token_hash: &str, user_id: i64, expiry: Timestamp) -> Result<()> {
        query("INSERT INTO password_links (token_hash, user_id, expiry) VALUES ($1, $2, $3)")
            .bind(token_hash)
            .bind(user_id)
            .bind(expiry)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Removes a link and returns (user, expiry): a link is used at most once.
    pub async fn password_link_take(&mut self, token_hash: &str) -> Result<Option<(i64, Timestamp)>> {
        let row = query("DELETE FROM password_links WHERE token_hash = $1 RETURNING user_id, expiry")
            .bind(token_hash)
            .fetch_optional(self.h())
            .await?;
        row.map(|r| Ok((r.i64("user_id")?, r.ts("expiry")?))).transpose()
    }

    pub async fn session_insert(&mut self, token_hash: &str, user_id: i64, expiry: Timestamp) -> Result<()> {
        query("INSERT INTO signin_sessions (token_hash, user_id, expiry) VALUES ($1, $2, $3)")
            .bind(token_hash)
            .bind(user_id)
            .bind(expiry)
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn session_delete(&mut self, token_hash: &str) -> Result<()> {
        query("DELETE FROM signin_sessions WHERE token_hash = $1").bind(token_hash).execute(self.h()).await?;
        Ok(())
    }

    /// The user of a sign-in session and its expiry, read in this transaction.
    pub async fn session_user(&mut self, token_hash: &str) -> Result<Option<(i64, Timestamp)>> {
        let row = query("SELECT user_id, expiry FROM signin_sessions WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.h())
            .await?;
        row.map(|r| Ok((r.i64("user_id")?, r.ts("expiry")?))).transpose()
    }

    /// Removes everything of a user this module keeps (before the user is deleted).
    pub async fn user_signin_delete(&mut self, user_id: i64) -> Result<()> {
        for table in ["password_links", "signin_sessions", "oauth_codes", "oauth_refresh_tokens", "oauth_grants"] {
            query(format!("DELETE FROM {table} WHERE user_id = $1")).bind(user_id).execute(self.h()).await?;
        }
        Ok(())
    }
}

impl Store {
    /// Whether a set-password link exists and has not expired (without using it).
    pub async fn password_link_user(&self, token_hash: &str) -> Result<Option<(i64, Timestamp)>> {
        let row = query("SELECT user_id, expiry FROM password_links WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.r())
            .await?;
        row.map(|r| Ok((r.i64("user_id")?, r.ts("expiry")?))).transpose()
    }

    /// The user of a sign-in session: (user, expiry).
    pub async fn session_user(&self, token_hash: &str) -> Result<Option<(i64, Timestamp)>> {
        let row = query("SELECT user_id, expiry FROM signin_sessions WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.r())
            .await?;
        row.map(|r| Ok((r.i64("user_id")?, r.ts("expiry")?))).transpose()
    }
}
