//! The caller's own profile and grants.

use nubis_model::account::{Profile, ProfilePrefs};
use nubis_model::event::EventEntity;
use nubis_model::grants::GrantsView;
use nubis_model::validate::{is_email, len_between};
use nubis_model::{Error, Problems, Result};
use nubis_store::users::UserChanges;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `PUT /v4/profile`. Read-only fields of the profile are accepted and ignored.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ProfileUpdate {
    #[schema(schema_with = email_schema)]
    pub email: Option<String>,
    /// A time zone name such as `US/Eastern`: 1..64 of letters, digits and `/ _ - +`.
    #[schema(schema_with = timezone_schema)]
    pub timezone: Option<String>,
    pub email_notifications: Option<bool>,
    pub ip_whitelist_enabled: Option<bool>,
    #[schema(schema_with = lish_schema)]
    pub lish_auth_method: Option<String>,
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    /// Public SSH keys (each with something besides whitespace, up to 8192 characters trimmed);
    /// null removes them all.
    #[schema(schema_with = keys_schema)]
    pub authorized_keys: Option<Option<Vec<String>>>,
}

fn validate(u: &ProfileUpdate) -> Result<()> {
    let mut p = Problems::new();
    if let Some(e) = &u.email {
        p.check(is_email(e), "email", "Must be a valid e-mail address of at most 128 characters");
    }
    if let Some(tz) = &u.timezone {
        p.check(
            len_between(tz, TIMEZONE_LEN.0, TIMEZONE_LEN.1)
                && tz.chars().all(|c| c.is_ascii_alphanumeric() || "/_-+".contains(c)),
            "timezone",
            "Must be a time zone name such as US/Eastern",
        );
    }
    if let Some(m) = &u.lish_auth_method {
        p.check(
            LISH_METHODS.contains(&m.as_str()),
            "lish_auth_method",
            "Must be one of password_keys, keys_only, disabled",
        );
    }
    if let Some(Some(keys)) = &u.authorized_keys {
        for (i, k) in keys.iter().enumerate() {
            p.check(len_between(k.trim(), 1, KEY_MAX_LEN), format!("authorized_keys[{i}]"), "Must be a public SSH key");
        }
    }
    p.finish()
}

impl App {
    async fn own_user(&self, actor: &Actor) -> Result<nubis_model::account::User> {
        let user = self.store.user_by_id(actor.user_id()).await?;
        user.filter(|u| u.account_id == actor.account_id()).ok_or(Error::NotFound)
    }

    pub async fn profile_get(&self, actor: &Actor) -> Result<Profile> {
        self.authorize(actor, Op::ProfileGet).await?;
        Ok(Profile::of(&self.own_user(actor).await?))
    }

    pub async fn profile_update(&self, actor: &Actor, input: ProfileUpdate) -> Result<Profile> {
        self.authorize(actor, Op::ProfileUpdate).await?;
        validate(&input)?;
        let input = &input;
        self.write(|tx| {
            Box::pin(async move {
                // The preferences are one JSON value: the ones given are set on those read here.
                let user = tx.user_by_id(actor.user_id()).await?.filter(|u| u.account_id == actor.account_id());
                let user = user.ok_or(Error::NotFound)?;
                let mut prefs: ProfilePrefs = user.prefs.clone();
                if let Some(t) = &input.timezone {
                    prefs.timezone = t.clone();
                }
                if let Some(v) = input.email_notifications {
                    prefs.email_notifications = v;
                }
                if let Some(v) = input.ip_whitelist_enabled {
                    prefs.ip_whitelist_enabled = v;
                }
                if let Some(m) = &input.lish_auth_method {
                    prefs.lish_auth_method = m.clone();
                }
                if let Some(k) = &input.authorized_keys {
                    prefs.authorized_keys = k.clone();
                }
                let changes = UserChanges { email: input.email.as_deref(), prefs: Some(&prefs), ..Default::default() };
                let updated = tx.user_update(user.id, &changes).await?;
                let e =
                    event(actor, "profile_update", EventEntity::new("profile", user.id, &user.username, "/v4/profile"))
                        .about_user(user.id)
                        .build();
                tx.event_insert(&e).await?;
                Ok(Profile::of(&updated))
            })
        })
        .await
    }

    /// `GET /v4/profile/grants`: `None` for unrestricted users (they have no grants: everything
    /// is allowed); otherwise the caller's grants, leaving out entities without access.
    pub async fn profile_grants(&self, actor: &Actor) -> Result<Option<GrantsView>> {
        self.authorize(actor, Op::ProfileGrants).await?;
        if !actor.restricted() {
            return Ok(None);
        }
        let mut view = self.grants_view(actor.account_id(), actor.user_id()).await?;
        for kind in nubis_model::grants::GrantKind::ALL {
            view.kind_mut(kind).retain(|g| g.permissions.is_some());
        }
        Ok(Some(view))
    }
}

const TIMEZONE_LEN: (usize, usize) = (1, 64);
const KEY_MAX_LEN: usize = 8192;

/// A key is refused when it is only whitespace or longer than the limit once trimmed; the
/// document says "something besides whitespace, at most the limit untrimmed" (a key padded with
/// whitespace past the limit is accepted but not documented).
fn keys_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{array, or_null, schema};
    let key = serde_json::json!({"type": "string", "pattern": "\\S", "maxLength": KEY_MAX_LEN});
    schema(or_null(array(key, None)))
}
const LISH_METHODS: &[&str] = &["password_keys", "keys_only", "disabled"];

fn email_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::or_null(nubis_model::schema::email()))
}

fn timezone_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, pattern, schema};
    schema(or_null(pattern(TIMEZONE_LEN.0, TIMEZONE_LEN.1, "^[A-Za-z0-9/_+-]*$")))
}

fn lish_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{one_of, or_null, schema};
    schema(or_null(one_of(LISH_METHODS)))
}
