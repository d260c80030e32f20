//! Users of the account and their grants (spec 2.6 and 4.8; unrestricted callers only).

use nubis_model::account::{User, UserType};
use nubis_model::event::EventEntity;
use nubis_model::grants::{EntityGrant, GlobalGrants, GrantKind, GrantsUpdate, GrantsView};
use nubis_model::validate::{is_email, is_username};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::users::{NewUser, UserChanges};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct UserCreate {
    #[schema(required = true, schema_with = username_schema)]
    pub username: Option<String>,
    #[schema(required = true, schema_with = email_schema)]
    pub email: Option<String>,
    pub restricted: Option<bool>,
    /// Read-only; a request for a `proxy` user is refused.
    pub user_type: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct UserUpdate {
    #[schema(schema_with = optional_username_schema)]
    pub username: Option<String>,
    #[schema(schema_with = optional_email_schema)]
    pub email: Option<String>,
    pub restricted: Option<bool>,
}

const USERNAME_RULE: &str = "Must be 3-32 characters: letters, digits, - and _, beginning and ending with a letter or digit, without two of - and _ in a row";
const EMAIL_RULE: &str = "Must be a valid e-mail address of at most 128 characters";

fn user_entity(u: &User) -> EventEntity {
    EventEntity::new("user", u.id, &u.username, format!("/v4/account/users/{}", u.username))
}

impl App {
    async fn account_user(&self, actor: &Actor, username: &str) -> Result<User> {
        self.store
            .user_by_username(username)
            .await?
            .filter(|u| u.account_id == actor.account_id())
            .ok_or(Error::NotFound)
    }

    /// Inserts a (non-owner) user of `account_id` with the type its account gives it and the
    /// grants that type starts with, and queues its confirmation message; both the API and the
    /// operators' command create users through this.
    pub(crate) async fn user_insert_new(
        &self,
        tx: &mut Tx<'_>,
        account_id: i64,
        username: &str,
        email: &str,
        restricted: bool,
        created_by: &str,
    ) -> Result<User> {
        let account = tx.account_get(account_id).await?.ok_or(Error::NotFound)?;
        let user_type = new_user_type(tx, &account).await?;
        let u = tx
            .user_insert(&NewUser {
                account_id: account.id,
                username,
                email,
                restricted,
                user_type,
                is_owner: false,
                created: Timestamp::now(),
            })
            .await
            .map_err(|e| e.unique_as("username", "Username is already taken"))?;
        if user_type == UserType::Parent {
            let g = GlobalGrants { child_account_access: Some(false), ..Default::default() };
            tx.global_grants_set(u.id, &g).await?;
        }
        let link = self.password_link_new(tx, u.id).await?;
        let hours = self.config.signin.password_link_hours;
        tx.outbox_insert(
            Some(account.id),
            email,
            "Your new nubis user",
            &format!(
                "Hello {username},\n\n{created_by} created the user {username} for you on the nubis account {}.\n\
                 To finish setting it up, choose your password here (the link works once, for {hours} hours):\n\n\
                 {link}\n\n\
                 Then sign in to applications through nubis, or create a personal access token to use the API.\n\n-- nubis\n",
                account.euuid
            ),
        )
        .await?;
        Ok(u)
    }

    pub async fn user_list(
        &self,
        actor: &Actor,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<User>> {
        self.authorize(actor, Op::UserList).await?;
        let (rows, results) = self.store.users_page(actor.account_id(), filter, page.page, page.page_size).await?;
        let rows = self.with_last_login(rows).await?;
        Ok(nubis_model::page::Page::new(rows, page, results))
    }

    pub async fn user_get(&self, actor: &Actor, username: &str) -> Result<User> {
        self.authorize(actor, Op::UserGet).await?;
        let user = self.account_user(actor, username).await?;
        Ok(self.with_last_login(vec![user]).await?.remove(0))
    }

    /// Fills `last_login`: each user's latest sign-in attempt (null when none).
    async fn with_last_login(&self, mut users: Vec<User>) -> Result<Vec<User>> {
        let ids: Vec<i64> = users.iter().map(|u| u.id).collect();
        let latest = self.store.logins_latest_of_users(&ids).await?;
        for u in &mut users {
            u.last_login = latest
                .iter()
                .find(|(id, _, _)| *id == u.id)
                .map(|(_, t, status)| serde_json::json!({"login_datetime": t, "status": status}));
        }
        Ok(users)
    }

    pub async fn user_create(&self, actor: &Actor, input: UserCreate) -> Result<User> {
        self.authorize(actor, Op::UserCreate).await?;
        let mut p = Problems::new();
        match &input.username {
            None => p.add("username", "Username is required"),
            Some(u) => p.check(is_username(u), "username", USERNAME_RULE),
        }
        match &input.email {
            None => p.add("email", "Email is required"),
            Some(e) => p.check(is_email(e), "email", EMAIL_RULE),
        }
        if input.user_type.as_deref() == Some("proxy") {
            p.add("user_type", "A proxy user cannot be created");
        }
        p.finish()?;
        let username = input.username.as_deref().unwrap_or_default();
        let email = input.email.as_deref().unwrap_or_default();
        let restricted = input.restricted.unwrap_or(false);
        self.write(|tx| {
            Box::pin(async move {
                let u =
                    self.user_insert_new(tx, actor.account_id(), username, email, restricted, actor.username()).await?;
                tx.event_insert(&event(actor, "user_create", user_entity(&u)).about_user(u.id).build()).await?;
                Ok(u)
            })
        })
        .await
    }

    pub async fn user_update(&self, actor: &Actor, username: &str, input: UserUpdate) -> Result<User> {
        self.authorize(actor, Op::UserUpdate).await?;
        let input = &input;
        self.write(|tx| {
            Box::pin(async move {
                let target = account_user(tx, actor, username).await?;
                let mut p = Problems::new();
                if let Some(u) = &input.username {
                    p.check(is_username(u), "username", USERNAME_RULE);
                }
                if let Some(e) = &input.email {
                    p.check(is_email(e), "email", EMAIL_RULE);
                }
                if target.is_proxy() {
                    if input.username.as_ref().is_some_and(|u| *u != target.username) {
                        p.add("username", "Only restricted can be changed on a proxy user");
                    }
                    if input.email.as_ref().is_some_and(|e| *e != target.email) {
                        p.add("email", "Only restricted can be changed on a proxy user");
                    }
                }
                if target.is_owner && input.restricted == Some(true) {
                    p.add("restricted", "The account owner cannot be restricted");
                }
                if actor.restricted() && input.restricted == Some(false) && target.id == actor.user_id() {
                    p.add("restricted", "A restricted user cannot make itself unrestricted");
                }
                p.finish()?;
                let changes = UserChanges {
                    username: input.username.as_deref(),
                    email: input.email.as_deref(),
                    restricted: input.restricted,
                    prefs: None,
                };
                let u = tx
                    .user_update(target.id, &changes)
                    .await
                    .map_err(|e| e.unique_as("username", "Username is already taken"))?;
                if input.restricted == Some(true) && !target.restricted {
                    // Becoming restricted starts with no grants at all, except the account access
                    // that defines a proxy user, which no child-account user can change.
                    tx.grants_clear_user(u.id).await?;
                    if target.is_proxy() {
                        let g = GlobalGrants {
                            account_access: Some(nubis_model::grants::Permission::ReadWrite),
                            ..Default::default()
                        };
                        tx.global_grants_set(u.id, &g).await?;
                    }
                }
                tx.event_insert(&event(actor, "user_update", user_entity(&u)).about_user(u.id).build()).await?;
                Ok(u)
            })
        })
        .await
    }

    /// Deletes a user: its tokens stop working at once and its grants are removed.
    pub async fn user_delete(&self, actor: &Actor, username: &str) -> Result<()> {
        self.authorize(actor, Op::UserDelete).await?;
        self.write(|tx| {
            Box::pin(async move {
                let target = account_user(tx, actor, username).await?;
                if target.is_proxy() {
                    return Err(Error::Forbidden("A proxy user cannot be deleted".into()));
                }
                if target.is_owner {
                    return Err(Error::refused("The account owner cannot be deleted"));
                }
                tx.user_delete(target.id).await?;
                tx.event_insert(&event(actor, "user_delete", user_entity(&target)).build()).await?;
                Ok(())
            })
        })
        .await
    }

    /// The full grants structure of a user: every entity of the account with the user's
    /// permission on it (null for none).
    pub(crate) async fn grants_view(&self, account_id: i64, user_id: i64) -> Result<GrantsView> {
        let grants = self.store.grants_of_user(user_id).await?;
        let mut view = GrantsView { global: grants.global.clone(), ..Default::default() };
        if view.global.child_account_access.is_none() && !self.store.accounts_children(account_id).await?.is_empty() {
            view.global.child_account_access = Some(false);
        }
        for kind in GrantKind::ALL {
            let entities = self.store.grantable_entities(kind, account_id).await?;
            *view.kind_mut(kind) = entities
                .into_iter()
                .map(|(id, label)| EntityGrant { id, permissions: grants.permission(kind, id), label })
                .collect();
        }
        Ok(view)
    }

    /// `GET .../users/{username}/grants`: `None` when the user is unrestricted (no grants apply).
    pub async fn user_grants_get(&self, actor: &Actor, username: &str) -> Result<Option<GrantsView>> {
        self.authorize(actor, Op::UserGrantsGet).await?;
        let target = self.account_user(actor, username).await?;
        if target.id == actor.user_id() {
            return Err(Error::refused("Use GET /v4/profile/grants for your own grants"));
        }
        if !target.restricted {
            return Ok(None);
        }
        self.grants_view(actor.account_id(), target.id).await.map(Some)
    }

    /// `PUT .../users/{username}/grants`: entries given are set, everything omitted stays. The
    /// user, its current grants and the entities named are read inside the write, so concurrent
    /// updates of different grants all stay.
    pub async fn user_grants_update(&self, actor: &Actor, username: &str, input: GrantsUpdate) -> Result<GrantsView> {
        self.authorize(actor, Op::UserGrantsUpdate).await?;
        let input = &input;
        let target_id = self
            .write(|tx| {
                Box::pin(async move {
                    let target = account_user(tx, actor, username).await?;
                    if target.id == actor.user_id() {
                        return Err(Error::refused("You cannot change your own grants"));
                    }
                    if !target.restricted {
                        return Err(Error::refused("Grants apply to restricted users only; this user is unrestricted"));
                    }
                    let mut p = Problems::new();
                    if target.is_proxy()
                        && let Some(g) = &input.global
                        && g.account_access.is_some()
                    {
                        p.add("global.account_access", "The account_access grant of a proxy user cannot be changed");
                    }
                    if let Some(g) = &input.global
                        && matches!(g.child_account_access, Some(Some(_)))
                        && !tx.account_is_parent(actor.account_id()).await?
                    {
                        p.add("global.child_account_access", "Only users of a parent account have this grant");
                    }
                    for (kind, entries) in input.kinds() {
                        let named: Vec<i64> = entries.iter().map(|e| e.id).collect();
                        let found = tx.grantable_ids(kind, actor.account_id(), &named).await?;
                        for (i, e) in entries.iter().enumerate() {
                            p.check(
                                found.contains(&e.id),
                                format!("{}[{i}].id", kind.name()),
                                format!("No {} with this id on the account", kind.name()),
                            );
                        }
                    }
                    p.finish()?;
                    if let Some(patch) = &input.global {
                        let mut g = tx.grants_of_user(target.id).await?.global;
                        patch.apply(&mut g);
                        tx.global_grants_set(target.id, &g).await?;
                    }
                    for (kind, entries) in input.kinds() {
                        for e in entries {
                            tx.grant_set(target.id, kind, e.id, e.permissions).await?;
                        }
                    }
                    Ok(target.id)
                })
            })
            .await?;
        self.grants_view(actor.account_id(), target_id).await
    }
}

/// A user of the actor's account, read inside the write (another account's is unknown).
async fn account_user(tx: &mut Tx<'_>, actor: &Actor, username: &str) -> Result<User> {
    tx.user_by_username(username).await?.filter(|u| u.account_id == actor.account_id()).ok_or(Error::NotFound)
}

/// The type a new user of `account` gets.
async fn new_user_type(tx: &mut Tx<'_>, account: &nubis_model::account::Account) -> Result<UserType> {
    if account.parent_id.is_some() {
        return Ok(UserType::Child);
    }
    if tx.account_is_parent(account.id).await? {
        return Ok(UserType::Parent);
    }
    Ok(UserType::Default)
}

fn username_schema() -> utoipa::openapi::Schema {
    use nubis_model::validate::{USERNAME_LEN, USERNAME_PATTERN};
    nubis_model::schema::schema(nubis_model::schema::pattern(USERNAME_LEN.0, USERNAME_LEN.1, USERNAME_PATTERN))
}

fn optional_username_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, pattern, schema};
    use nubis_model::validate::{USERNAME_LEN, USERNAME_PATTERN};
    schema(or_null(pattern(USERNAME_LEN.0, USERNAME_LEN.1, USERNAME_PATTERN)))
}

fn email_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::email())
}

fn optional_email_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::or_null(nubis_model::schema::email()))
}
