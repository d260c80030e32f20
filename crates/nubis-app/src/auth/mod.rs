//! Authentication (a bearer token becomes an [`Actor`]) and authorization (every operation
//! checks the caller against the one policy table in [`policy`]).

pub mod policy;

use nubis_model::account::UserType;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::scope::Scopes;
use nubis_model::{Error, Result, Timestamp};
use sha2::{Digest, Sha256};

pub use policy::{Grant, Op, Policy};

use crate::App;

/// The authenticated caller of an operation.
#[derive(Debug, Clone)]
pub struct Actor {
    pub token_id: i64,
    pub user_id: i64,
    pub username: String,
    pub account_id: i64,
    pub restricted: bool,
    pub user_type: UserType,
    pub scopes: Scopes,
    /// The scopes as the token states them (for the `X-OAuth-Scopes` header).
    pub scopes_text: String,
    /// The actor's account is a child account (billing writes are refused).
    pub in_child_account: bool,
}

/// SHA-256 of a token secret: tokens are stored and looked up only by this hash.
pub fn hash_secret(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

pub fn hash_secret_hex(secret: &str) -> String {
    hex::encode(hash_secret(secret))
}

/// A new random token secret: 32 random bytes as 64 hex characters.
pub fn new_secret() -> String {
    use rand::RngExt;
    let bytes: [u8; 32] = rand::rng().random();
    hex::encode(bytes)
}

impl App {
    /// Turns a bearer token into an actor: 401 when it is unknown, expired or revoked.
    pub async fn authenticate(&self, bearer: &str) -> Result<Actor> {
        let unknown = || Error::Unauthenticated("Invalid Token".into());
        if bearer.is_empty() || bearer.len() > 512 {
            return Err(unknown());
        }
        let cred = self.store.credential(hash_secret(bearer)).await?;
        let Some(c) = cred.as_ref() else { return Err(unknown()) };
        if c.expiry.is_some_and(|e| e <= Timestamp::now()) {
            return Err(Error::Unauthenticated("Token expired".into()));
        }
        let scopes = Scopes::parse(&c.scopes).map_err(|_| unknown())?;
        Ok(Actor {
            token_id: c.token_id,
            user_id: c.user_id,
            username: c.username.clone(),
            account_id: c.account_id,
            restricted: c.restricted,
            user_type: c.user_type,
            scopes,
            scopes_text: c.scopes.clone(),
            in_child_account: c.account_parent_id.is_some(),
        })
    }

    /// The checks every operation makes first: the token's scope, unrestricted status, and the
    /// global grant the operation needs. Entity grants are checked by [`App::authorize_entity`]
    /// once the entity is found.
    pub async fn authorize(&self, actor: &Actor, op: Op) -> Result<()> {
        let p = op.policy();
        for scope in [p.scope, p.also].into_iter().flatten() {
            if !actor.scopes.allows(scope) {
                return Err(Error::Forbidden("Your OAuth token is not authorized to use this endpoint.".into()));
            }
        }
        if p.unrestricted_only && actor.restricted {
            return Err(Error::forbidden());
        }
        if actor.restricted {
            match p.grant {
                Grant::Global(flag) => {
                    let g = self.store.grants_of_user(actor.user_id).await?;
                    if !g.global.flag(flag) {
                        return Err(Error::forbidden());
                    }
                }
                Grant::AccountAccess(level) => {
                    let g = self.store.grants_of_user(actor.user_id).await?;
                    if g.global.account_access.is_none_or(|a| a < level) {
                        return Err(Error::forbidden());
                    }
                }
                Grant::None | Grant::Entity(..) => {}
            }
        }
        Ok(())
    }

    /// The entity grant an operation needs: a restricted user without any access to the entity
    /// gets 404 (it does not learn that the entity exists); with read_only where read_write is
    /// needed, 403.
    pub async fn authorize_entity(&self, actor: &Actor, op: Op, id: i64) -> Result<()> {
        let Grant::Entity(kind, need) = op.policy().grant else {
            debug_assert!(false, "{op:?} has no entity grant");
            return Ok(());
        };
        self.require_permission(actor, kind, id, need).await
    }

    /// Checks that the actor holds `need` (or better) on an entity.
    pub async fn require_permission(&self, actor: &Actor, kind: GrantKind, id: i64, need: Permission) -> Result<()> {
        if !actor.restricted {
            return Ok(());
        }
        let g = self.store.grants_of_user(actor.user_id).await?;
        match g.permission(kind, id) {
            None => Err(Error::NotFound),
            Some(p) if p < need => Err(Error::forbidden()),
            Some(_) => Ok(()),
        }
    }

    /// Keeps only the entities the actor may see (everything for unrestricted users).
    pub async fn visible<T>(
        &self,
        actor: &Actor,
        kind: GrantKind,
        items: Vec<T>,
        id: impl Fn(&T) -> i64,
    ) -> Result<Vec<T>> {
        if !actor.restricted {
            return Ok(items);
        }
        let g = self.store.grants_of_user(actor.user_id).await?;
        Ok(items.into_iter().filter(|t| g.permission(kind, id(t)).is_some()).collect())
    }
}
