//! Personal access tokens of the caller: the raw secret is returned once, at creation, and stored
//! only as its SHA-256 hash. A token issued to a third-party OAuth application cannot create them.

use nubis_model::account::Token;
use nubis_model::event::EventEntity;
use nubis_model::scope::Scopes;
use nubis_model::validate::len_between;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::tokens::NewToken;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op, hash_secret_hex, new_secret};
use crate::console::CONSOLE_CLIENT_ID;
use crate::events::event;

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct TokenCreate {
    /// 1..100 characters.
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    /// `*` or space-separated scopes, at most those of the acting token. Omitted or `*`: the
    /// acting token's scopes.
    pub scopes: Option<String>,
    /// When the token stops working; omitted or null: never.
    pub expiry: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct TokenUpdate {
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
}

const DEFAULT_LABEL: &str = "personal-access-token";

fn token_entity(t: &Token) -> EventEntity {
    EventEntity::new("token", t.id, &t.label, format!("/v4/profile/tokens/{}", t.id))
}

/// Checks a create request against the acting token; returns the label, scopes and expiry.
fn validate_create(actor: &Actor, input: &TokenCreate) -> Result<(String, String, Option<Timestamp>)> {
    let mut p = Problems::new();
    let label = input.label.clone().unwrap_or_else(|| DEFAULT_LABEL.to_string());
    p.check(len_between(&label, LABEL_LEN.0, LABEL_LEN.1), "label", "Length must be 1-100 characters");
    let scopes = match input.scopes.as_deref().map(str::trim) {
        None | Some("*") => actor.scopes_text().to_string(),
        Some(s) => match Scopes::parse(s) {
            Err(reason) => {
                p.add("scopes", reason);
                String::new()
            }
            Ok(parsed) if !parsed.within(actor.scopes()) => {
                p.add("scopes", "Cannot create a token with more scopes than the token making the request");
                String::new()
            }
            Ok(parsed) => parsed.to_string(),
        },
    };
    let expiry = match input.expiry.as_deref() {
        None => None,
        Some(s) => match Timestamp::parse(s) {
            None => {
                p.add("expiry", "Must be a date-time such as 2030-01-01T00:00:00");
                None
            }
            Some(t) if t <= Timestamp::now() => {
                p.add("expiry", "Must be in the future");
                None
            }
            Some(t) => Some(t),
        },
    };
    p.finish()?;
    Ok((label, scopes, expiry))
}

impl App {
    pub async fn token_list(
        &self,
        actor: &Actor,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<Token>> {
        self.authorize(actor, Op::TokenList).await?;
        let (rows, results) = self.store.tokens_page(actor.user_id(), filter, page.page, page.page_size).await?;
        Ok(nubis_model::page::Page::new(rows, page, results))
    }

    pub async fn token_get(&self, actor: &Actor, id: i64) -> Result<Token> {
        self.authorize(actor, Op::TokenGet).await?;
        self.own_token(actor, id).await
    }

    async fn own_token(&self, actor: &Actor, id: i64) -> Result<Token> {
        self.store.token_get(actor.user_id(), id).await?.ok_or(Error::NotFound)
    }

    pub async fn token_create(&self, actor: &Actor, input: TokenCreate) -> Result<Token> {
        self.authorize(actor, Op::TokenCreate).await?;
        if actor.user_type() == nubis_model::account::UserType::Proxy {
            return Err(Error::Forbidden("Proxy users cannot create personal access tokens".into()));
        }
        let (label, scopes, expiry) = validate_create(actor, &input)?;
        let (label, scopes) = (&label, &scopes);
        self.write(|tx| {
            Box::pin(async move {
                let secret = new_secret();
                let hash = hash_secret_hex(&secret);
                // A token issued to a third-party OAuth application cannot mint a personal access
                // token (which would outlive the application and its grant); the console's own
                // system client may: the console creates tokens for its user.
                match tx.token_client(actor.token_id()).await? {
                    None => return Err(Error::Unauthenticated("Invalid Token".into())),
                    Some(Some(client)) if client != CONSOLE_CLIENT_ID => {
                        return Err(Error::Forbidden(
                            "A token issued to an OAuth application cannot create personal access tokens".into(),
                        ));
                    }
                    Some(_) => {}
                }
                let mut t = tx
                    .token_insert(&NewToken {
                        user_id: actor.user_id(),
                        label,
                        scopes,
                        secret_hash: &hash,
                        kind: "pat",
                        created: Timestamp::now(),
                        expiry,
                    })
                    .await?;
                tx.event_insert(&event(actor, "token_create", token_entity(&t)).about_user(actor.user_id()).build())
                    .await?;
                t.token = Some(secret);
                Ok(t)
            })
        })
        .await
    }

    pub async fn token_update(&self, actor: &Actor, id: i64, input: TokenUpdate) -> Result<Token> {
        self.authorize(actor, Op::TokenUpdate).await?;
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            p.check(len_between(l, LABEL_LEN.0, LABEL_LEN.1), "label", "Length must be 1-100 characters");
        }
        p.finish()?;
        let input = &input;
        let Some(label) = &input.label else { return self.own_token(actor, id).await };
        self.write(|tx| {
            Box::pin(async move {
                tx.token_get(actor.user_id(), id).await?.ok_or(Error::NotFound)?;
                let t = tx.token_update_label(id, label).await?;
                tx.event_insert(&event(actor, "token_update", token_entity(&t)).about_user(actor.user_id()).build())
                    .await?;
                Ok(t)
            })
        })
        .await
    }

    /// Revokes a token at once.
    pub async fn token_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::TokenDelete).await?;
        self.write(|tx| {
            Box::pin(async move {
                let t = tx.token_get(actor.user_id(), id).await?.ok_or(Error::NotFound)?;
                tx.token_delete(id).await?;
                tx.event_insert(&event(actor, "token_delete", token_entity(&t)).about_user(actor.user_id()).build())
                    .await?;
                Ok(())
            })
        })
        .await
    }
}

const LABEL_LEN: (usize, usize) = (1, 100);

fn label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(LABEL_LEN.0, LABEL_LEN.1)))
}
