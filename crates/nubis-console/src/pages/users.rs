//! Users and their grants: the list, create (the new user gets a set-password link by mail),
//! delete, and the grants editor (global grants and per-entity permissions).

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::users::UserCreate;
use nubis_model::account::User;
use nubis_model::filter::Filter;
use nubis_model::grants::{EntityGrant, GrantsUpdate, GrantsView};
use serde_json::Value;

use super::big;
use crate::Console;
use crate::form::{Form, read};
use crate::render::{Nav, error_page, html, name};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/users"), get(list).post(create))
        .route(&c.p("/users/{username}"), get(detail))
        .route(&c.p("/users/{username}/grants"), post(grants))
        .route(&c.p("/users/{username}/delete"), post(delete))
}

pub struct Row {
    pub username: String,
    pub email: String,
    pub restricted: bool,
    pub kind: String,
    pub password: bool,
}

fn row(u: &User) -> Row {
    Row {
        username: u.username.clone(),
        email: u.email.clone(),
        restricted: u.restricted,
        kind: name(&u.user_type),
        password: u.password_created.is_some(),
    }
}

#[derive(Template)]
#[template(path = "console/users.html")]
struct List {
    nav: Nav,
    rows: Vec<Row>,
    f: Form,
    created: Option<String>,
}

async fn render_list(c: &Console, s: &Signed, f: Form, created: Option<String>, status: StatusCode) -> Response {
    match c.app.user_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => html(status, &List { nav: s.nav("users"), rows: p.data.iter().map(row).collect(), f, created }),
        Err(e) => error_page(c, Some(s.nav("users")), e),
    }
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    render_list(&c, &s, Form::new(&[("restricted", "true")]), None, StatusCode::OK).await
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<UserCreate>(p.f.to_json(&[], &["restricted"], &[])) {
        Ok(input) => c.app.user_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(u) => {
            let note = format!(
                "{} was created; a single-use link to choose a password was sent to {} (operators: nubis admin outbox --bodies).",
                u.username, u.email
            );
            render_list(&c, &p.s, Form::new(&[("restricted", "true")]), Some(note), StatusCode::OK).await
        }
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["username", "email", "restricted"]);
            render_list(&c, &p.s, f, None, StatusCode::BAD_REQUEST).await
        }
    }
}

/// One kind of entity grants: its entities with their permission inputs.
pub struct Kind {
    pub key: &'static str,
    pub title: &'static str,
    pub rows: Vec<GrantRow>,
}

/// One entity's permission input (`instance[2].permissions`).
pub struct GrantRow {
    pub id: i64,
    pub label: String,
    pub id_name: String,
    pub name: String,
    pub dom: String,
}

fn grant_rows(key: &str, v: &[EntityGrant]) -> Vec<GrantRow> {
    v.iter()
        .enumerate()
        .map(|(i, e)| GrantRow {
            id: e.id,
            label: e.label.clone(),
            id_name: format!("{key}[{i}].id"),
            name: format!("{key}[{i}].permissions"),
            dom: format!("{key}-{i}"),
        })
        .collect()
}

/// A global grant checkbox.
pub struct Flag {
    pub key: String,
    pub title: &'static str,
}

#[derive(Template)]
#[template(path = "console/user.html")]
struct Detail {
    nav: Nav,
    u: Row,
    /// `None`: an unrestricted user (no grants).
    kinds: Option<Vec<Kind>>,
    flags: Vec<Flag>,
    f: Form,
}

const FLAGS: &[(&str, &str)] = &[
    ("add_instances", "Create instances"),
    ("add_vpcs", "Create VPCs"),
    ("add_firewalls", "Create firewalls"),
    ("add_nodebalancers", "Create load balancers"),
    ("cancel_account", "Cancel the account"),
];

/// The editor's values from a grants view.
fn grants_form(g: &GrantsView) -> (Vec<Kind>, Form) {
    let mut f = Form::default();
    let gv = serde_json::to_value(&g.global).unwrap_or_default();
    for (k, _) in FLAGS {
        f.vals.insert(format!("global.{k}"), gv[k].as_bool().unwrap_or(false).to_string());
    }
    f.vals.insert("global.account_access".into(), gv["account_access"].as_str().unwrap_or_default().into());
    let mut kinds = Vec::new();
    for (key, title, v) in [
        ("instance", "Instances", &g.instance),
        ("vpc", "VPCs", &g.vpc),
        ("firewall", "Firewalls", &g.firewall),
        ("nodebalancer", "Load balancers", &g.nodebalancer),
    ] {
        let rows = grant_rows(key, v);
        for (r, e) in rows.iter().zip(v) {
            f.vals.insert(r.name.clone(), e.permissions.map(|p| name(&p)).unwrap_or_default());
        }
        kinds.push(Kind { key, title, rows });
    }
    (kinds, f)
}

async fn render_detail(c: &Console, s: &Signed, username: &str, err: Option<nubis_model::Error>) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let u = match app.user_get(a, username).await {
        Ok(u) => u,
        Err(e) => return error_page(c, Some(s.nav("users")), e),
    };
    let (kinds, mut f) = match app.user_grants_get(a, username).await {
        Ok(Some(g)) => {
            let (k, f) = grants_form(&g);
            (Some(k), f)
        }
        Ok(None) => (None, Form::default()),
        Err(e) => return error_page(c, Some(s.nav("users")), e),
    };
    let status = match err {
        Some(e) => {
            f = f.with_error(&e, &[]);
            StatusCode::BAD_REQUEST
        }
        None => StatusCode::OK,
    };
    let flags = FLAGS.iter().map(|(k, t)| Flag { key: format!("global.{k}"), title: t }).collect();
    html(status, &Detail { nav: s.nav("users"), u: row(&u), kinds, flags, f })
}

async fn detail(State(c): State<Console>, s: Signed, Path(username): Path<String>) -> Response {
    render_detail(&c, &s, &username, None).await
}

async fn grants(State(c): State<Console>, Path(username): Path<String>, p: Post) -> Response {
    let bools: Vec<&str> = FLAGS.iter().map(|(k, _)| *k).collect();
    let mut body = p.f.to_json(&["id"], &bools, &[]);
    if p.f.get("global.account_access").is_empty() {
        body["global"]["account_access"] = Value::Null;
    }
    let r = match read::<GrantsUpdate>(body) {
        Ok(input) => c.app.user_grants_update(&p.s.actor, &username, input).await.map(|_| ()),
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => redirect(&c.p(&format!("/users/{username}"))),
        Err(e) => render_detail(&c, &p.s, &username, Some(e)).await,
    }
}

async fn delete(State(c): State<Console>, Path(username): Path<String>, p: Post) -> Response {
    match c.app.user_delete(&p.s.actor, &username).await {
        Ok(()) => redirect(&c.p("/users")),
        Err(e) => error_page(&c, Some(p.s.nav("users")), e),
    }
}
