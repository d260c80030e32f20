//! Users' passwords (argon2 PHC strings), the single-use links that set them, and the sign-in
//! sessions of the authorization server's pages. Link and session secrets are stored as SHA-256.

use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

impl Tx<'_> {
    /// Sets a user's password; every set-password link and sign-in session of the user ends.
    pub async fn user_set_password(&mut self, user_id: i64, phc: &str, now: Timestamp) -> Result<()> {
        query("UPDATE users SET password_hash = $2, password_created = $3 WHERE id = $1")
            .bind(user_id)
            .bind(phc)
            .bind(now)
            .execute(self.h())
            .await?;
        query("DELETE FROM password_links WHERE user_id = $1").bind(user_id).execute(self.h()).await?;
        query("DELETE FROM signin_sessions WHERE user_id = $1").bind(user_id).execute(self.h()).await?;
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

    /// Removes everything of a user this module keeps (before the user is deleted).
    pub async fn user_signin_delete(&mut self, user_id: i64) -> Result<()> {
        for table in ["password_links", "signin_sessions", "oauth_codes", "oauth_refresh_tokens"] {
            query(format!("DELETE FROM {table} WHERE user_id = $1")).bind(user_id).execute(self.h()).await?;
        }
        Ok(())
    }
}

impl Store {
    /// A user's argon2 PHC string, if a password was set.
    pub async fn user_password_hash(&self, user_id: i64) -> Result<Option<String>> {
        let row = query("SELECT password_hash FROM users WHERE id = $1").bind(user_id).fetch_optional(self.r()).await?;
        Ok(row.map(|r| r.opt_str("password_hash")).transpose()?.flatten())
    }

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
