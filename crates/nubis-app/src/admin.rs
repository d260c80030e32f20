//! Operators' actions (`nubis admin ...` and the first start): they run on the database directly,
//! outside the API and its authorization, and need no server.

use nubis_model::account::{Account, User, UserType};
use nubis_model::grants::{GlobalGrants, Permission};
use nubis_model::scope::Scopes;
use nubis_model::validate::{is_email, is_username};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::accounts::NewAccount;
pub use nubis_store::instances::InstanceFlag;
use nubis_store::outbox::OutboxMessage;
use nubis_store::tokens::NewToken;
use nubis_store::users::NewUser;
use sha2::{Digest, Sha256};

use crate::App;
use crate::auth::{hash_secret_hex, new_secret};

pub use crate::auth::Admin;

/// The owner created on first start.
pub const BOOTSTRAP_USERNAME: &str = "admin";

fn new_euuid() -> String {
    uuid::Uuid::new_v4().to_string().to_uppercase()
}

/// The proxy user's name (spec 4.5): the parent company name's first 15 characters, `_`, and the
/// first 16 hex characters of SHA-256 over the parent company name and the child's euuid.
pub fn proxy_username(parent_company: &str, child_euuid: &str) -> String {
    let prefix: String = parent_company.chars().take(15).collect();
    let prefix = if prefix.is_empty() { "parent".to_string() } else { prefix };
    let digest = hex::encode(Sha256::digest(format!("{parent_company}{child_euuid}").as_bytes()));
    format!("{prefix}_{}", &digest[..16])
}

impl App {
    /// On an empty database, creates the first account, its owner `admin` and a token with scope
    /// `*` (with the given secret, or a random one). Returns the secret when it created one;
    /// `None` when the database already had an account.
    pub async fn bootstrap(&self, token: Option<&str>) -> Result<Option<String>> {
        let secret = token.map(str::to_string).unwrap_or_else(new_secret);
        if secret.len() < 16 {
            return Err(Error::invalid("bootstrap-token", "Must be at least 16 characters"));
        }
        let created = self.bootstrap_hashed(&hash_secret_hex(&secret)).await?;
        Ok(created.then_some(secret))
    }

    /// The same with the token's hash (a reset keeps the bootstrap token); true when it created
    /// the account. The hash is also recorded for later resets.
    pub(crate) async fn bootstrap_hashed(&self, hash: &str) -> Result<bool> {
        self.write(|tx| {
            Box::pin(async move {
                if !tx.accounts_empty().await? {
                    return Ok(false);
                }
                let now = Timestamp::now();
                let euuid = new_euuid();
                let account = tx
                    .account_insert(&NewAccount {
                        euuid: &euuid,
                        parent_id: None,
                        company: "nubis",
                        email: "admin@nubis.invalid",
                        created: now,
                    })
                    .await?;
                let user = tx
                    .user_insert(&NewUser {
                        account_id: account.id,
                        username: BOOTSTRAP_USERNAME,
                        email: "admin@nubis.invalid",
                        restricted: false,
                        user_type: UserType::Default,
                        is_owner: true,
                        created: now,
                    })
                    .await?;
                tx.token_insert(&NewToken {
                    user_id: user.id,
                    label: "bootstrap",
                    scopes: "*",
                    secret_hash: hash,
                    kind: "pat",
                    created: now,
                    expiry: None,
                })
                .await?;
                tx.control_setting_set(crate::controls::BOOTSTRAP_HASH, hash).await?;
                Ok(true)
            })
        })
        .await
    }

    /// Creates an account with its owner (an unrestricted user). With `parent`, the account is a
    /// child of that account and also gets its proxy user.
    pub async fn admin_account_create(
        &self,
        _admin: &Admin,
        company: &str,
        owner_username: &str,
        owner_email: &str,
        parent_euuid: Option<&str>,
    ) -> Result<(Account, User)> {
        if !is_username(owner_username) {
            return Err(Error::invalid("username", "Not a valid username"));
        }
        if !is_email(owner_email) {
            return Err(Error::invalid("email", "Not a valid e-mail address"));
        }
        self.write(|tx| {
            Box::pin(async move {
                let parent = match parent_euuid {
                    None => None,
                    Some(e) => {
                        Some(tx.account_by_euuid(e).await?.ok_or_else(|| Error::invalid("parent", "No such account"))?)
                    }
                };
                let now = Timestamp::now();
                let euuid = new_euuid();
                let account = tx
                    .account_insert(&NewAccount {
                        euuid: &euuid,
                        parent_id: parent.as_ref().map(|p| p.id),
                        company,
                        email: owner_email,
                        created: now,
                    })
                    .await?;
                let owner = tx
                    .user_insert(&NewUser {
                        account_id: account.id,
                        username: owner_username,
                        email: owner_email,
                        restricted: false,
                        user_type: if parent.is_some() { UserType::Child } else { UserType::Default },
                        is_owner: true,
                        created: now,
                    })
                    .await
                    .map_err(|e| e.unique_as("username", "Username is already taken"))?;
                if let Some(p) = &parent {
                    let name = proxy_username(&p.company, &account.euuid);
                    let proxy = tx
                        .user_insert(&NewUser {
                            account_id: account.id,
                            username: &name,
                            email: &p.email,
                            restricted: true,
                            user_type: UserType::Proxy,
                            is_owner: false,
                            created: now,
                        })
                        .await?;
                    let g = GlobalGrants { account_access: Some(Permission::ReadWrite), ..Default::default() };
                    tx.global_grants_set(proxy.id, &g).await?;
                }
                Ok((account, owner))
            })
        })
        .await
    }

    /// Creates a user in an account (by euuid).
    pub async fn admin_user_create(
        &self,
        _admin: &Admin,
        account_euuid: &str,
        username: &str,
        email: &str,
        restricted: bool,
    ) -> Result<User> {
        if !is_username(username) {
            return Err(Error::invalid("username", "Not a valid username"));
        }
        if !is_email(email) {
            return Err(Error::invalid("email", "Not a valid e-mail address"));
        }
        self.write(|tx| {
            Box::pin(async move {
                let account = tx
                    .account_by_euuid(account_euuid)
                    .await?
                    .ok_or_else(|| Error::invalid("account", "No such account"))?;
                self.user_insert_new(tx, account.id, username, email, restricted, "An operator").await
            })
        })
        .await
    }

    /// Issues a personal access token for a user; returns the secret (shown once).
    pub async fn admin_token_create(
        &self,
        _admin: &Admin,
        username: &str,
        scopes: &str,
        expiry_days: Option<i64>,
        label: &str,
    ) -> Result<String> {
        let scopes = Scopes::parse(scopes).map_err(|r| Error::invalid("scopes", r))?.to_string();
        let expiry = expiry_days.map(|d| Timestamp::now().plus_seconds(d * 86_400));
        let scopes = &scopes;
        self.write(|tx| {
            Box::pin(async move {
                let user =
                    tx.user_by_username(username).await?.ok_or_else(|| Error::invalid("username", "No such user"))?;
                let secret = new_secret();
                let hash = hash_secret_hex(&secret);
                tx.token_insert(&NewToken {
                    user_id: user.id,
                    label,
                    scopes,
                    secret_hash: &hash,
                    kind: "pat",
                    created: Timestamp::now(),
                    expiry,
                })
                .await?;
                Ok(secret)
            })
        })
        .await
    }

    pub async fn admin_accounts(&self, _admin: &Admin) -> Result<Vec<Account>> {
        self.store.accounts_all().await
    }

    pub async fn admin_users(&self, _admin: &Admin) -> Result<Vec<User>> {
        self.store.users_all().await
    }

    pub async fn admin_outbox(&self, _admin: &Admin) -> Result<Vec<OutboxMessage>> {
        self.store.outbox_all().await
    }
}

impl App {
    /// Sets an operator flag of an instance (`nubis admin instance ...`): enabled for additional
    /// public IPv4 addresses, or in live migration.
    pub async fn admin_instance_flag(&self, _admin: &Admin, id: i64, flag: InstanceFlag, on: bool) -> Result<()> {
        self.write(|tx| {
            Box::pin(async move {
                if !tx.instance_set_flag(id, flag, on).await? {
                    return Err(Error::invalid("id", format!("No instance with id {id}")));
                }
                Ok(())
            })
        })
        .await
    }
}

impl App {
    /// Sets or clears an account's active terms-of-service violation (`nubis admin account
    /// tos-violation`): while it is set, the account can neither create nor take part in service
    /// transfers.
    pub async fn admin_account_tos_violation(&self, _admin: &Admin, euuid: &str, on: bool) -> Result<Account> {
        self.write(|tx| {
            Box::pin(async move {
                let account =
                    tx.account_by_euuid(euuid).await?.ok_or_else(|| Error::invalid("account", "No such account"))?;
                tx.account_tos_violation_set(account.id, on, Timestamp::now()).await?;
                Ok(account)
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_usernames_follow_the_spec() {
        let n = proxy_username("Example Partners Incorporated", "ABC-1");
        let (prefix, hash) = n.split_once('_').unwrap();
        assert_eq!(prefix, "Example Partner");
        assert_eq!(hash.len(), 16);
        assert_eq!(n, proxy_username("Example Partners Incorporated", "ABC-1"));
        assert_ne!(n, proxy_username("Example Partners Incorporated", "ABC-2"));
    }
}
