//! Service transfers (instances moving between accounts: offer, accept by token, cancel) and
//! child accounts (with the one-time display of a proxy-user token).

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::service_transfer::{TransferCreate, TransferCreateEntities, Via};
use nubis_model::filter::Filter;

use super::big;
use crate::Console;
use crate::form::Form;
use crate::render::{Nav, error_page, html, name, when};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/transfers"), get(list).post(create))
        .route(&c.p("/transfers/accept"), post(accept))
        .route(&c.p("/transfers/{token}/cancel"), post(cancel))
        .route(&c.p("/child-accounts"), get(children))
        .route(&c.p("/child-accounts/{euuid}/token"), post(child_token))
}

pub struct Row {
    pub token: String,
    pub status: String,
    pub is_sender: bool,
    pub instances: String,
    pub expiry: String,
}

#[derive(Template)]
#[template(path = "console/transfers.html")]
struct List {
    nav: Nav,
    rows: Vec<Row>,
    instances: Vec<(i64, String)>,
    f: Form,
    accept: Form,
}

async fn render(c: &Console, s: &Signed, f: Form, accept: Form, status: StatusCode) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let rows = match app.service_transfer_list(a, Via::Service, &Filter::default(), big()).await {
        Ok(p) => p
            .data
            .into_iter()
            .map(|t| Row {
                token: t.token,
                status: name(&t.status),
                is_sender: t.is_sender,
                instances: t.entities.instances.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", "),
                expiry: when(&t.expiry),
            })
            .collect(),
        Err(e) => return error_page(c, Some(s.nav("transfers")), e),
    };
    let instances = app
        .instance_list(a, &Filter::default(), big())
        .await
        .map(|p| p.data.into_iter().map(|i| (i.id, i.label)).collect())
        .unwrap_or_default();
    html(status, &List { nav: s.nav("transfers"), rows, instances, f, accept })
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    render(&c, &s, Form::default(), Form::default(), StatusCode::OK).await
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    // One checkbox per instance, named `_instance_<id>`.
    let mut ids: Vec<i64> =
        p.f.0
            .iter()
            .filter(|(_, v)| v.as_str() == "true")
            .filter_map(|(k, _)| k.strip_prefix("_instance_")?.parse().ok())
            .collect();
    ids.sort_unstable();
    let input = TransferCreate { entities: Some(TransferCreateEntities { instances: Some(ids) }) };
    match c.app.service_transfer_create(&p.s.actor, Via::Service, input).await {
        Ok(_) => redirect(&c.p("/transfers")),
        Err(e) => {
            let f = Form::default().with_error(&e, &[]);
            render(&c, &p.s, f, Form::default(), StatusCode::BAD_REQUEST).await
        }
    }
}

async fn accept(State(c): State<Console>, p: Post) -> Response {
    match c.app.service_transfer_accept(&p.s.actor, Via::Service, p.f.get("token").trim()).await {
        Ok(()) => redirect(&c.p("/transfers")),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["token"]);
            render(&c, &p.s, Form::default(), f, StatusCode::BAD_REQUEST).await
        }
    }
}

async fn cancel(State(c): State<Console>, Path(token): Path<String>, p: Post) -> Response {
    match c.app.service_transfer_cancel(&p.s.actor, Via::Service, &token).await {
        Ok(()) => redirect(&c.p("/transfers")),
        Err(e) => error_page(&c, Some(p.s.nav("transfers")), e),
    }
}

pub struct Child {
    pub euuid: String,
    pub company: String,
    pub email: String,
}

#[derive(Template)]
#[template(path = "console/children.html")]
struct Children {
    nav: Nav,
    rows: Vec<Child>,
    /// (euuid, token, expiry) of a proxy-user token just made, shown this once.
    token: Option<(String, String, String)>,
}

async fn render_children(c: &Console, s: &Signed, token: Option<(String, String, String)>) -> Response {
    match c.app.child_account_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => {
            let rows =
                p.data.into_iter().map(|x| Child { euuid: x.euuid, company: x.company, email: x.email }).collect();
            html(StatusCode::OK, &Children { nav: s.nav("children"), rows, token })
        }
        Err(e) => error_page(c, Some(s.nav("children")), e),
    }
}

async fn children(State(c): State<Console>, s: Signed) -> Response {
    render_children(&c, &s, None).await
}

async fn child_token(State(c): State<Console>, Path(euuid): Path<String>, p: Post) -> Response {
    match c.app.child_account_token(&p.s.actor, &euuid).await {
        Ok(t) => render_children(&c, &p.s, Some((euuid, t.token, when(&t.expiry)))).await,
        Err(e) => error_page(&c, Some(p.s.nav("children")), e),
    }
}
