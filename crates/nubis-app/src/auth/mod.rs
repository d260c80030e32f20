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

/// The operator of this cloud at its machine: whoever opened the database (`nubis admin`, and
/// `nubis serve` while it starts). Only [`crate::App::new`] makes one, beside the application it
/// returns; the API and the console never hold one, so no request reaches an `admin_*`
/// function. (An operator token of the test controls also stands for one, for fixtures.)
pub struct Admin {
    _private: (),
}

impl Admin {
    pub(crate) fn new() -> Admin {
        Admin { _private: () }
    }
}

/// The authenticated caller of an operation. Made only here, by authentication (a token, a
/// console session's token, or an operator acting as an account's owner); read-only elsewhere.
#[derive(Debug, Clone)]
pub struct Actor {
    token_id: i64,
    user_id: i64,
    username: String,
    account_id: i64,
    restricted: bool,
    user_type: UserType,
    scopes: Scopes,
    /// The scopes as the token states them (for the `X-OAuth-Scopes` header).
    scopes_text: String,
    /// The actor's account is a child account (billing writes are refused).
    in_child_account: bool,
}

impl Actor {
    /// The token the caller presented (0 for an operator acting as an owner).
    pub fn token_id(&self) -> i64 {
        self.token_id
    }
    pub fn user_id(&self) -> i64 {
        self.user_id
    }
    pub fn username(&self) -> &str {
        &self.username
    }
    pub fn account_id(&self) -> i64 {
        self.account_id
    }
    pub fn restricted(&self) -> bool {
        self.restricted
    }
    pub fn user_type(&self) -> UserType {
        self.user_type
    }
    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }
    /// The scopes as the token states them (for the `X-OAuth-Scopes` header).
    pub fn scopes_text(&self) -> &str {
        &self.scopes_text
    }
    /// The caller's account is a child account.
    pub fn in_child_account(&self) -> bool {
        self.in_child_account
    }
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

    /// The operator acting as the owner of an account (fixtures create its resources through
    /// the same operations as the API): an owner's actor with every scope, bound to no token.
    pub(crate) async fn act_as_owner(&self, _admin: &Admin, owner_id: i64) -> Result<Actor> {
        let owner = self.store.user_by_id(owner_id).await?.filter(|u| u.is_owner).ok_or(Error::NotFound)?;
        let account = self.store.account_get(owner.account_id).await?.ok_or(Error::NotFound)?;
        Ok(Actor {
            token_id: 0,
            user_id: owner.id,
            username: owner.username,
            account_id: owner.account_id,
            restricted: false,
            user_type: owner.user_type,
            scopes: Scopes::parse("*").map_err(Error::Internal)?,
            scopes_text: "*".into(),
            in_child_account: account.parent_id.is_some(),
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
