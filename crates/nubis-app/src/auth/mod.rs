//! Authentication (a bearer token becomes an [`Actor`]) and authorization (every operation
//! checks the caller against the one policy table in [`policy`]).

mod lookup;
pub mod policy;

use nubis_model::account::UserType;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::scope::Scopes;
use nubis_model::{Error, Result, Timestamp};
use sha2::{Digest, Sha256};

pub use lookup::Authorized;
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

    /// The checks of an operation that acts on no one entity of the path: the token's scope,
    /// unrestricted status, the global grant, and the refusal of billing writes to users of a
    /// child account. An operation on an entity gets its entity through
    /// [`App::lookup_for`] instead, which makes these checks and the entity grant's.
    pub async fn authorize(&self, actor: &Actor, op: Op) -> Result<()> {
        if let Grant::Entity(..) = op.policy().grant {
            return Err(Error::internal(format!("{} acts on an entity: look it up with lookup_for", op.name())));
        }
        self.authorize_policy(actor, op).await
    }

    /// The checks of the policy table that come before the entity is known. An operation whose
    /// entity is named in the request's body (not its path) makes them before it reads the body,
    /// then gets the entity with [`App::lookup_for`].
    pub(crate) async fn authorize_policy(&self, actor: &Actor, op: Op) -> Result<()> {
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
        // Spec 5 and 7: billing is managed by the parent account.
        if p.billing_write && (actor.in_child_account || actor.user_type == UserType::Child) {
            return Err(Error::Forbidden(crate::billing::CHILD_BILLING_REFUSED.into()));
        }
        Ok(())
    }

    /// Checks that the actor holds `need` (or better) on an entity other than the one the
    /// operation is on (one named in the request's body); 404 without any access.
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
