//! Personal access tokens and OAuth applications. A token's or client's secret is shown once, on
//! the page that answers its creation (or a client's secret reset), and never again.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::oauth_clients::ClientCreate;
use nubis_app::tokens::TokenCreate;
use nubis_model::filter::Filter;

use super::big;
use crate::Console;
use crate::form::{Form, read};
use crate::render::{Nav, error_page, html, when};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/tokens"), get(tokens).post(token_create))
        .route(&c.p("/tokens/{id}/delete"), post(token_delete))
        .route(&c.p("/oauth-clients"), get(clients).post(client_create))
        .route(&c.p("/oauth-clients/{id}/reset-secret"), post(client_reset))
        .route(&c.p("/oauth-clients/{id}/delete"), post(client_delete))
}

pub struct TokenRow {
    pub id: i64,
    pub label: String,
    pub scopes: String,
    pub created: String,
    pub expiry: String,
}

#[derive(Template)]
#[template(path = "console/tokens.html")]
struct Tokens {
    nav: Nav,
    rows: Vec<TokenRow>,
    f: Form,
    /// The new token's secret, shown this once.
    secret: Option<(String, String)>,
}

async fn render_tokens(c: &Console, s: &Signed, f: Form, secret: Option<(String, String)>, st: StatusCode) -> Response {
    match c.app.token_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => {
            let rows = p
                .data
                .iter()
                .map(|t| TokenRow {
                    id: t.id,
                    label: t.label.clone(),
                    scopes: t.scopes.clone(),
                    created: when(&t.created),
                    expiry: t.expiry.as_ref().map(when).unwrap_or_else(|| "never".into()),
                })
                .collect();
            html(st, &Tokens { nav: s.nav("tokens"), rows, f, secret })
        }
        Err(e) => error_page(c, Some(s.nav("tokens")), e),
    }
}

async fn tokens(State(c): State<Console>, s: Signed) -> Response {
    render_tokens(&c, &s, Form::new(&[("scopes", "*")]), None, StatusCode::OK).await
}

async fn token_create(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<TokenCreate>(p.f.to_json(&[], &[], &[])) {
        Ok(input) => c.app.token_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(t) => {
            let secret = t.token.clone().map(|s| (t.label.clone(), s));
            render_tokens(&c, &p.s, Form::new(&[("scopes", "*")]), secret, StatusCode::OK).await
        }
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "scopes", "expiry"]);
            render_tokens(&c, &p.s, f, None, StatusCode::BAD_REQUEST).await
        }
    }
}

async fn token_delete(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.token_delete(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/tokens")),
        Err(e) => error_page(&c, Some(p.s.nav("tokens")), e),
    }
}

pub struct ClientRow {
    pub id: String,
    pub label: String,
    pub redirect_uri: String,
    pub public: bool,
    pub status: String,
}

#[derive(Template)]
#[template(path = "console/oauth_clients.html")]
struct Clients {
    nav: Nav,
    rows: Vec<ClientRow>,
    f: Form,
    /// (client id, secret) of a client just created or reset, shown this once.
    secret: Option<(String, String)>,
}

async fn render_clients(
    c: &Console,
    s: &Signed,
    f: Form,
    secret: Option<(String, String)>,
    st: StatusCode,
) -> Response {
    match c.app.oauth_client_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => {
            let rows = p
                .data
                .into_iter()
                .map(|o| ClientRow {
                    id: o.id,
                    label: o.label,
                    redirect_uri: o.redirect_uri,
                    public: o.public,
                    status: o.status,
                })
                .collect();
            html(st, &Clients { nav: s.nav("oauth"), rows, f, secret })
        }
        Err(e) => error_page(c, Some(s.nav("oauth")), e),
    }
}

async fn clients(State(c): State<Console>, s: Signed) -> Response {
    render_clients(&c, &s, Form::default(), None, StatusCode::OK).await
}

async fn client_create(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<ClientCreate>(p.f.to_json(&[], &["public"], &[])) {
        Ok(input) => c.app.oauth_client_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(o) => {
            let secret = (!o.public).then(|| (o.id.clone(), o.secret.clone()));
            render_clients(&c, &p.s, Form::default(), secret, StatusCode::OK).await
        }
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "redirect_uri", "public"]);
            render_clients(&c, &p.s, f, None, StatusCode::BAD_REQUEST).await
        }
    }
}

async fn client_reset(State(c): State<Console>, Path(id): Path<String>, p: Post) -> Response {
    match c.app.oauth_client_reset_secret(&p.s.actor, &id).await {
        Ok(o) => render_clients(&c, &p.s, Form::default(), Some((o.id, o.secret)), StatusCode::OK).await,
        Err(e) => error_page(&c, Some(p.s.nav("oauth")), e),
    }
}

async fn client_delete(State(c): State<Console>, Path(id): Path<String>, p: Post) -> Response {
    match c.app.oauth_client_delete(&p.s.actor, &id).await {
        Ok(()) => redirect(&c.p("/oauth-clients")),
        Err(e) => error_page(&c, Some(p.s.nav("oauth")), e),
    }
}
