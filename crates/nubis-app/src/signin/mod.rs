//! Signing in: passwords and the single-use links that set them, the sign-in check with its
//! throttling and login record, the sessions of the sign-in pages, and the logins operations.
//! The OAuth 2 rules of the authorization server are in [`oauth`].

mod grants;
pub mod oauth;
pub mod password;

use nubis_model::account::{User, UserType};
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::signin::Login;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::logins::{LoginScope, NewLogin};

use crate::App;
use crate::auth::{Actor, Op, hash_secret_hex, new_secret};

/// Why a sign-in was refused. The page shows the same words for an unknown user and a wrong
/// password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigninRefusal {
    BadCredentials,
    /// Too many wrong passwords for this user or from this address lately.
    Throttled,
}

impl App {
    /// The public URL of this server (no trailing slash): `signin.public_url`, else the address
    /// `nubis serve` listens on.
    pub fn public_url(&self) -> String {
        let configured = self.config.signin.public_url.trim_end_matches('/');
        if !configured.is_empty() {
            return configured.to_string();
        }
        self.listen_url.get().cloned().unwrap_or_else(|| "http://127.0.0.1:8080".to_string())
    }

    /// Tells the application where `nubis serve` listens (used when `signin.public_url` is empty).
    pub fn set_listen_url(&self, url: String) {
        let _ = self.listen_url.set(url);
    }

    /// The authorization server's base URL (`<public>/oauth`).
    pub fn signin_base_url(&self) -> String {
        format!("{}{}", self.public_url(), self.signin_base_path())
    }

    /// The authorization server's path prefix, normalized to `/x` form.
    pub fn signin_base_path(&self) -> String {
        let p = self.config.signin.base_path.trim_matches('/');
        format!("/{p}")
    }

    /// Makes a single-use set-password link for a user inside `tx`; returns the link.
    pub(crate) async fn password_link_new(&self, tx: &mut nubis_store::Tx<'_>, user_id: i64) -> Result<String> {
        let secret = new_secret();
        let expiry = Timestamp::now().plus_seconds(self.config.signin.password_link_hours * 3600);
        tx.password_link_insert(&hash_secret_hex(&secret), user_id, expiry).await?;
        Ok(format!("{}/password?token={secret}", self.signin_base_url()))
    }

    /// The user a set-password link is for, while it is unused and unexpired.
    pub async fn password_link_user(&self, token: &str) -> Result<User> {
        let expired = || Error::invalid("token", "This link is invalid, used or expired");
        let (user_id, expiry) = self.store.password_link_user(&hash_secret_hex(token)).await?.ok_or_else(expired)?;
        if expiry <= Timestamp::now() {
            return Err(expired());
        }
        self.store.user_by_id(user_id).await?.ok_or_else(expired)
    }

    /// Sets a password through a link; the link is used up.
    pub async fn password_set_with_link(&self, token: &str, password: &str, confirm: &str) -> Result<User> {
        let user = self.password_link_user(token).await?;
        check_new_password(&user.username, password, confirm)?;
        let phc = hash_blocking(password.to_string()).await?;
        let hash = hash_secret_hex(token);
        let (hash, phc) = (&hash, &phc);
        self.write(|tx| {
            Box::pin(async move {
                let taken = tx.password_link_take(hash).await?;
                match taken {
                    Some((uid, expiry)) if uid == user.id && expiry > Timestamp::now() => {}
                    _ => return Err(Error::invalid("token", "This link is invalid, used or expired")),
                }
                tx.user_set_password(user.id, phc, Timestamp::now()).await?;
                Ok(())
            })
        })
        .await?;
        Ok(user)
    }

    /// Checks a username and password from `ip`, records the attempt, and returns the user.
    ///
    /// Wrong passwords are throttled per (username, address) pair and per address, never per
    /// username alone, so that failures from elsewhere cannot lock the user out. The attempt is
    /// recorded (as failed until its password proves right) and counted in one write
    /// transaction before the password is checked, and the limit applies to the count that
    /// includes it: of many simultaneous attempts, at most the limit get their password checked.
    /// Over the limit the password is not checked at all.
    pub async fn signin_password(
        &self,
        username: &str,
        password: &str,
        ip: &str,
    ) -> Result<std::result::Result<User, SigninRefusal>> {
        let cfg = &self.config.signin;
        let (attempt, user, throttled) = self
            .write(|tx| {
                Box::pin(async move {
                    let now = Timestamp::now();

                    let user = tx.signin_user(username).await?;
                    let id = tx
                        .login_insert(&NewLogin {
                            account_id: user.as_ref().map(|u| u.account_id),
                            user_id: user.as_ref().map(|u| u.id),
                            username,
                            ip,
                            datetime: now,
                            successful: false,
                            restricted: user.as_ref().is_some_and(|u| u.restricted),
                        })
                        .await?;
                    let since = now.plus_seconds(-cfg.throttle_window_secs);
                    let (by_pair, by_ip) = tx.login_failures_since(username, ip, since).await?;
                    Ok((id, user, by_pair > cfg.throttle_user_failures || by_ip > cfg.throttle_ip_failures))
                })
            })
            .await?;
        if throttled {
            tracing::warn!(target: "nubis::signin", "sign-in throttled after repeated wrong passwords");
            return Ok(Err(SigninRefusal::Throttled));
        }
        // Unknown users are checked against a dummy hash: the same cost as a real check.
        let stored = user.as_ref().and_then(|u| u.password_hash.clone());
        if !check_blocking(stored, password.to_string()).await? {
            return Ok(Err(SigninRefusal::BadCredentials));
        }
        let Some(u) = user else { return Ok(Err(SigninRefusal::BadCredentials)) };
        self.write(|tx| {
            Box::pin(async move {
                tx.login_succeeded(attempt).await?;
                Ok(())
            })
        })
        .await?;
        Ok(self.store.user_by_id(u.id).await?.ok_or(SigninRefusal::BadCredentials))
    }

    /// Starts a session of the sign-in pages; returns its secret (the cookie value).
    pub async fn session_create(&self, user_id: i64) -> Result<String> {
        let secret = new_secret();
        let hash = hash_secret_hex(&secret);
        let expiry = Timestamp::now().plus_seconds(self.config.signin.session_hours * 3600);
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                tx.session_insert(hash, user_id, expiry).await?;
                Ok(())
            })
        })
        .await?;
        Ok(secret)
    }

    /// The signed-in user of a session cookie, while the session lasts.
    pub async fn session_user(&self, secret: &str) -> Result<Option<User>> {
        match self.store.session_user(&hash_secret_hex(secret)).await? {
            Some((uid, expiry)) if expiry > Timestamp::now() => self.store.user_by_id(uid).await,
            _ => Ok(None),
        }
    }

    /// Ends a session (signing out).
    pub async fn session_end(&self, secret: &str) -> Result<()> {
        let hash = hash_secret_hex(secret);
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                tx.session_delete(hash).await?;
                Ok(())
            })
        })
        .await
    }

    /// Sets a user's password directly (operators: `nubis admin user password`). As with a
    /// set-password link, every sign-in session and OAuth grant of the user ends.
    pub async fn admin_user_set_password(
        &self,
        _admin: &crate::admin::Admin,
        username: &str,
        password: &str,
    ) -> Result<()> {
        if let Some(p) = password::problem(password, username) {
            return Err(Error::invalid("password", p));
        }
        let phc = hash_blocking(password.to_string()).await?;
        let phc = &phc;
        self.write(|tx| {
            Box::pin(async move {
                let user = tx.signin_user(username).await?.ok_or_else(|| Error::invalid("username", "No such user"))?;
                if UserType::parse(&user.user_type) == UserType::Proxy {
                    return Err(Error::invalid("username", "A proxy user signs in through its parent account"));
                }
                tx.user_set_password(user.id, phc, Timestamp::now()).await?;
                Ok(())
            })
        })
        .await
    }

    /// A one-time set-password link for a user (operators, and the first start for `admin`).
    pub async fn admin_password_link(&self, _admin: &crate::admin::Admin, username: &str) -> Result<String> {
        self.write(|tx| {
            Box::pin(async move {
                let user = tx.signin_user(username).await?.ok_or_else(|| Error::invalid("username", "No such user"))?;
                if UserType::parse(&user.user_type) == UserType::Proxy {
                    return Err(Error::invalid("username", "A proxy user signs in through its parent account"));
                }
                let link = self.password_link_new(tx, user.id).await?;
                Ok(link)
            })
        })
        .await
    }

    fn logins_since(&self) -> Timestamp {
        Timestamp::now().minus_days(self.config.limits.events_days)
    }

    /// `GET /v4/account/logins`: successful logins of every user of the account, last 90 days.
    pub async fn account_login_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Login>> {
        self.authorize(actor, Op::AccountLoginList).await?;
        let scope = LoginScope { account_id: actor.account_id(), user_id: None, since: self.logins_since() };
        let (data, n) = self.store.logins_page(&scope, filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }

    pub async fn account_login_get(&self, actor: &Actor, id: i64) -> Result<Login> {
        self.authorize(actor, Op::AccountLoginGet).await?;
        let scope = LoginScope { account_id: actor.account_id(), user_id: None, since: self.logins_since() };
        self.store.login_get(&scope, id).await?.ok_or(Error::NotFound)
    }

    /// `GET /v4/profile/logins`: the caller's own successful logins.
    pub async fn profile_logins(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Login>> {
        self.authorize(actor, Op::ProfileLogins).await?;
        let scope =
            LoginScope { account_id: actor.account_id(), user_id: Some(actor.user_id()), since: self.logins_since() };
        let (data, n) = self.store.logins_page(&scope, filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }

    /// `GET /v4/profile/logins/{id}`: one of the caller's own logins (what the list shows).
    pub async fn profile_login_get(&self, actor: &Actor, id: i64) -> Result<Login> {
        self.authorize(actor, Op::ProfileLoginGet).await?;
        let scope =
            LoginScope { account_id: actor.account_id(), user_id: Some(actor.user_id()), since: self.logins_since() };
        self.store.login_get(&scope, id).await?.ok_or(Error::NotFound)
    }
}

/// The checks of a new password: the strength rules and the confirmation.
pub fn check_new_password(username: &str, password: &str, confirm: &str) -> Result<()> {
    let mut p = nubis_model::Problems::new();
    if let Some(reason) = password::problem(password, username) {
        p.add("password", reason);
    }
    p.check(password == confirm, "confirm", "The two passwords differ");
    p.finish()
}

async fn hash_blocking(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || password::hash(&password)).await.map_err(Error::internal)?
}

async fn check_blocking(stored: Option<String>, password: String) -> Result<bool> {
    tokio::task::spawn_blocking(move || password::check(stored.as_deref(), &password)).await.map_err(Error::internal)
}
