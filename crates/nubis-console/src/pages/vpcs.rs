//! VPCs and their subnets: the list, a VPC created with its first subnet, adding and removing
//! subnets, deleting a VPC.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::vpc::{SubnetCreate, VpcCreate};
use nubis_model::catalog::capability;
use nubis_model::filter::Filter;
use nubis_model::vpc::Vpc;

use super::{Options, big, regions};
use crate::Console;
use crate::form::{Form, read};
use crate::render::{Nav, error_page, html, when};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/vpcs"), get(list).post(create))
        .route(&c.p("/vpcs/{id}"), get(detail))
        .route(&c.p("/vpcs/{id}/delete"), post(delete))
        .route(&c.p("/vpcs/{id}/subnets"), post(subnet_add))
        .route(&c.p("/vpcs/{id}/subnets/{sid}/delete"), post(subnet_delete))
}

#[derive(Template)]
#[template(path = "console/vpcs.html")]
struct List {
    nav: Nav,
    vpcs: Vec<Vpc>,
    f: Form,
    regions: Options,
}

const FIELDS: &[&str] = &["label", "region", "description", "subnets[0].label", "subnets[0].ipv4"];

async fn render_list(c: &Console, s: &Signed, f: Form, status: StatusCode) -> Response {
    match c.app.vpc_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => {
            html(status, &List { nav: s.nav("vpcs"), vpcs: p.data, f, regions: regions(&c.app, capability::VPCS) })
        }
        Err(e) => error_page(c, Some(s.nav("vpcs")), e),
    }
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    let f = Form::new(&[("region", "us-east"), ("subnets[0].label", "default"), ("subnets[0].ipv4", "10.0.0.0/24")]);
    render_list(&c, &s, f, StatusCode::OK).await
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<VpcCreate>(p.f.to_json(&[], &[], &[])) {
        Ok(input) => c.app.vpc_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(v) => redirect(&c.p(&format!("/vpcs/{}", v.id))),
        Err(e) => render_list(&c, &p.s, Form::from_fields(&p.f).with_error(&e, FIELDS), StatusCode::BAD_REQUEST).await,
    }
}

#[derive(Template)]
#[template(path = "console/vpc.html")]
struct Detail {
    nav: Nav,
    v: Vpc,
    created: String,
    f: Form,
}

async fn render_detail(c: &Console, s: &Signed, id: i64, f: Form, status: StatusCode) -> Response {
    match c.app.vpc_get(&s.actor, id).await {
        Ok(v) => html(status, &Detail { nav: s.nav("vpcs"), created: when(&v.created), v, f }),
        Err(e) => error_page(c, Some(s.nav("vpcs")), e),
    }
}

async fn detail(State(c): State<Console>, s: Signed, Path(id): Path<i64>) -> Response {
    render_detail(&c, &s, id, Form::default(), StatusCode::OK).await
}

async fn delete(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.vpc_delete(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/vpcs")),
        Err(e) => error_page(&c, Some(p.s.nav("vpcs")), e),
    }
}

async fn subnet_add(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    let r = match read::<SubnetCreate>(p.f.to_json(&[], &[], &[])) {
        Ok(input) => c.app.subnet_create(&p.s.actor, id, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(_) => redirect(&c.p(&format!("/vpcs/{id}"))),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "ipv4"]);
            render_detail(&c, &p.s, id, f, StatusCode::BAD_REQUEST).await
        }
    }
}

async fn subnet_delete(State(c): State<Console>, Path((id, sid)): Path<(i64, i64)>, p: Post) -> Response {
    match c.app.subnet_delete(&p.s.actor, id, sid).await {
        Ok(()) => redirect(&c.p(&format!("/vpcs/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("vpcs")), e),
    }
}
