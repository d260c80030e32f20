//! Users of accounts, with their profile settings and the per-user event marks.

use std::sync::Arc;

use crate::db::Row;
use nubis_model::account::{ProfilePrefs, User, UserType};
use nubis_model::{Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{CacheKey, Store, Tx};
use nubis_model::filter::Filter;

const COLS: &str = "id, account_id, username, email, restricted, user_type, is_owner, prefs, created, password_created";

fn user(r: &Row) -> Result<User> {
    let prefs: ProfilePrefs = serde_json::from_str(&r.str("prefs")?).unwrap_or_default();
    Ok(User {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        username: r.str("username")?,
        email: r.str("email")?,
        restricted: r.bool("restricted")?,
        user_type: UserType::parse(&r.str("user_type")?),
        ssh_keys: Vec::new(),
        tfa_enabled: false,
        verified_phone_number: None,
        password_created: r.opt_ts("password_created")?,
        last_login: None,
        is_owner: r.bool("is_owner")?,
        prefs,
        created: r.ts("created")?,
    })
}

pub struct NewUser<'a> {
    pub account_id: i64,
    pub username: &'a str,
    pub email: &'a str,
    pub restricted: bool,
    pub user_type: UserType,
    pub is_owner: bool,
    pub created: Timestamp,
}

/// The changeable fields of a user; `None` leaves a field as it is.
#[derive(Default)]
pub struct UserChanges<'a> {
    pub username: Option<&'a str>,
    pub email: Option<&'a str>,
    pub restricted: Option<bool>,
    pub prefs: Option<&'a ProfilePrefs>,
}

async fn user_by_id(h: Handle<'_>, id: i64) -> Result<Option<User>> {
    let sql = format!("SELECT {COLS} FROM users WHERE id = $1");
    let row = query(sql).bind(id).fetch_optional(h).await?;
    row.as_ref().map(user).transpose()
}

async fn users_of_account(h: Handle<'_>, account_id: i64) -> Result<Vec<User>> {
    let sql = format!("SELECT {COLS} FROM users WHERE account_id = $1 ORDER BY id");
    let rows = query(sql).bind(account_id).fetch_all(h).await?;
    rows.iter().map(user).collect()
}

async fn user_by_username(h: Handle<'_>, username: &str) -> Result<Option<User>> {
    let sql = format!("SELECT {COLS} FROM users WHERE username = $1");
    let row = query(sql).bind(username).fetch_optional(h).await?;
    row.as_ref().map(user).transpose()
}

impl Tx<'_> {
    pub async fn user_insert(&mut self, u: &NewUser<'_>) -> Result<User> {
        let prefs = serde_json::to_string(&ProfilePrefs::default()).map_err(nubis_model::Error::internal)?;
        let sql = format!(
            "INSERT INTO users (account_id, username, email, restricted, user_type, is_owner, prefs, created) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(u.account_id)
            .bind(u.username)
            .bind(u.email)
            .bind(u.restricted)
            .bind(u.user_type.name())
            .bind(u.is_owner)
            .bind(prefs)
            .bind(u.created.to_string())
            .fetch_one(self.h())
            .await?;
        user(&row)
    }

    pub async fn user_update(&mut self, id: i64, c: &UserChanges<'_>) -> Result<User> {
        let prefs = c.prefs.map(serde_json::to_string).transpose().map_err(nubis_model::Error::internal)?;
        let sql = format!(
            "UPDATE users SET username = COALESCE($2, username), email = COALESCE($3, email), \
             restricted = COALESCE($4, restricted), prefs = COALESCE($5, prefs) WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(c.username)
            .bind(c.email)
            .bind(c.restricted)
            .bind(prefs)
            .fetch_one(self.h())
            .await?;
        user(&row)
    }

    /// Deletes a user; its tokens, grants and event marks go with it (foreign keys cascade).
    pub async fn user_delete(&mut self, id: i64) -> Result<()> {
        self.user_signin_delete(id).await?;
        query("DELETE FROM tokens WHERE user_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM grants WHERE user_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM event_reads WHERE user_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM users WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// A user by id, read inside the transaction.
    pub async fn user_by_id(&mut self, id: i64) -> Result<Option<User>> {
        user_by_id(self.h(), id).await
    }

    /// The users of an account, read inside the transaction.
    pub async fn users_of_account(&mut self, account_id: i64) -> Result<Vec<User>> {
        users_of_account(self.h(), account_id).await
    }

    /// A user by name, read inside the transaction.
    pub async fn user_by_username(&mut self, username: &str) -> Result<Option<User>> {
        user_by_username(self.h(), username).await
    }

    /// Marks every event up to and including `event_id` as seen by the user.
    pub async fn user_mark_seen(&mut self, user_id: i64, event_id: i64) -> Result<()> {
        query("UPDATE users SET events_seen_upto = $2 WHERE id = $1 AND events_seen_upto < $2")
            .bind(user_id)
            .bind(event_id)
            .execute(self.h())
            .await?;
        Ok(())
    }
}

impl Store {
    /// The users of an account, in id order.
    pub async fn users_of_account(&self, account_id: i64) -> Result<Arc<Vec<User>>> {
        self.cached(CacheKey::Users(account_id), &["users"], || users_of_account(self.r(), account_id)).await
    }

    pub async fn user_by_id(&self, id: i64) -> Result<Option<User>> {
        user_by_id(self.r(), id).await
    }

    /// Every user of every account (operators' listing).
    pub async fn users_all(&self) -> Result<Vec<User>> {
        let sql = format!("SELECT {COLS} FROM users ORDER BY id");
        let rows = query(sql).fetch_all(self.r()).await?;
        rows.iter().map(user).collect()
    }

    pub async fn user_by_username(&self, username: &str) -> Result<Option<User>> {
        user_by_username(self.r(), username).await
    }
}

const USER_LIST: Listing<'static> = Listing {
    select: "SELECT u.id, u.account_id, u.username, u.email, u.restricted, u.user_type, u.is_owner, u.prefs, u.created, u.password_created \
             FROM users u",
    from: "FROM users u",
    scope: "u.account_id",
    and: "",
    cols: &[
        Column { path: "username", expr: "u.username", kind: ColKind::Text },
        Column { path: "email", expr: "u.email", kind: ColKind::Text },
        Column { path: "restricted", expr: "u.restricted", kind: ColKind::Bool },
        Column { path: "user_type", expr: "u.user_type", kind: ColKind::Text },
    ],
    order: "u.id",
    kept_count: Some("users"),
    indexed: &["username", "email", "user_type", "restricted"],
};

impl Store {
    /// One page of an account's users and how many it has.
    pub async fn users_page(
        &self,
        account_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<User>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&USER_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(user).collect::<Result<_>>()?, total))
    }
}
