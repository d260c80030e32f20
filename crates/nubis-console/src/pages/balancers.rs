//! Load balancers: the list, create, the detail page with configs and nodes (`nodes_status`
//! refreshed live), certificate upload for HTTPS, and charts of the stats.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::nodebalancer::{ConfigRequest, NodeBalancerCreate, NodeRequest};
use nubis_app::{Actor, Op};
use nubis_model::catalog::capability;
use nubis_model::filter::Filter;
use nubis_model::nodebalancer::NodeBalancerConfig;

use super::{Options, big, regions};
use crate::Console;
use crate::form::{Fields, Form, read};
use crate::render::{Nav, error_page, html, name, page};
use crate::session::{Post, Signed, redirect};
use crate::svg::Chart;

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/balancers"), get(list).post(create))
        .route(&c.p("/balancers/{id}"), get(detail))
        .route(&c.p("/balancers/{id}/delete"), post(delete))
        .route(&c.p("/balancers/{id}/configs"), post(config_create))
        .route(&c.p("/balancers/{id}/configs/{cid}"), post(config_update))
        .route(&c.p("/balancers/{id}/configs/{cid}/delete"), post(config_delete))
        .route(&c.p("/balancers/{id}/configs/{cid}/live"), get(live))
        .route(&c.p("/balancers/{id}/configs/{cid}/nodes"), post(node_create))
        .route(&c.p("/balancers/{id}/configs/{cid}/nodes/{nid}/delete"), post(node_delete))
}

/// Nodes up and down over all of a balancer's configs.
pub async fn health(c: &Console, a: &Actor, id: i64) -> (i64, i64) {
    match c.app.nodebalancer_config_list(a, id, &Filter::default(), big()).await {
        Ok(p) => p.data.iter().fold((0, 0), |(u, d), cfg| (u + cfg.nodes_status.up, d + cfg.nodes_status.down)),
        Err(_) => (0, 0),
    }
}

pub struct Row {
    pub id: i64,
    pub label: String,
    pub region: String,
    pub ipv4: String,
    pub up: i64,
    pub down: i64,
}

#[derive(Template)]
#[template(path = "console/balancers.html")]
struct List {
    nav: Nav,
    rows: Vec<Row>,
    f: Form,
    regions: Options,
}

async fn render_list(c: &Console, s: &Signed, f: Form, status: StatusCode) -> Response {
    let list = match c.app.nodebalancer_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => p.data,
        Err(e) => return error_page(c, Some(s.nav("balancers")), e),
    };
    let mut rows = Vec::new();
    for b in list {
        let (up, down) = health(c, &s.actor, b.id).await;
        rows.push(Row { id: b.id, label: b.label, region: b.region, ipv4: b.ipv4, up, down });
    }
    html(status, &List { nav: s.nav("balancers"), rows, f, regions: regions(&c.app, capability::NODEBALANCERS) })
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    render_list(&c, &s, Form::new(&[("region", "us-east"), ("client_conn_throttle", "0")]), StatusCode::OK).await
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<NodeBalancerCreate>(p.f.to_json(&["client_conn_throttle"], &[], &["tags"])) {
        Ok(input) => c.app.nodebalancer_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(b) => redirect(&c.p(&format!("/balancers/{}", b.id))),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "region", "client_conn_throttle"]);
            render_list(&c, &p.s, f, StatusCode::BAD_REQUEST).await
        }
    }
}

pub struct NodeRow {
    pub id: i64,
    pub label: String,
    pub address: String,
    pub status: String,
    pub mode: String,
    pub weight: i64,
}

pub struct ConfigView {
    pub id: i64,
    pub port: i64,
    pub protocol: String,
    pub algorithm: String,
    pub stickiness: String,
    pub check: String,
    pub check_interval: i64,
    pub up: i64,
    pub down: i64,
    pub commonname: String,
    pub fingerprint: String,
    pub nodes: Vec<NodeRow>,
    pub node_form: Form,
    pub tls_form: Form,
}

/// Which form of the detail page is shown again with errors.
enum Again {
    None,
    Config(Form),
    Node(i64, Form),
    Tls(i64, Form),
}

#[derive(Template)]
#[template(path = "console/balancer.html")]
struct Detail {
    nav: Nav,
    id: i64,
    label: String,
    region: String,
    ipv4: String,
    hostname: String,
    configs: Vec<ConfigView>,
    config_form: Form,
    suggestions: Vec<String>,
    charts: Vec<Chart>,
}

async fn config_view(c: &Console, a: &Actor, cfg: NodeBalancerConfig) -> ConfigView {
    let nodes = match c.app.nodebalancer_node_list(a, cfg.nodebalancer_id, cfg.id, &Filter::default(), big()).await {
        Ok(p) => p
            .data
            .into_iter()
            .map(|n| NodeRow {
                id: n.id,
                label: n.label,
                address: n.address,
                status: name(&n.status),
                mode: name(&n.mode),
                weight: n.weight,
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    ConfigView {
        id: cfg.id,
        port: cfg.port,
        protocol: name(&cfg.protocol),
        algorithm: name(&cfg.algorithm),
        stickiness: name(&cfg.stickiness),
        check: name(&cfg.check),
        check_interval: cfg.check_interval,
        up: cfg.nodes_status.up,
        down: cfg.nodes_status.down,
        commonname: cfg.ssl_commonname,
        fingerprint: cfg.ssl_fingerprint,
        nodes,
        node_form: Form::new(&[("weight", "100"), ("mode", "accept")]),
        tls_form: Form::new(&[("port", "443")]),
    }
}

async fn render_detail(c: &Console, s: &Signed, id: i64, again: Again) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let nav = || s.nav("balancers");
    let b = match app.nodebalancer_get(a, id).await {
        Ok(b) => b,
        Err(e) => return error_page(c, Some(nav()), e),
    };
    let cfgs = match app.nodebalancer_config_list(a, id, &Filter::default(), big()).await {
        Ok(p) => p.data,
        Err(e) => return error_page(c, Some(nav()), e),
    };
    let mut configs = Vec::new();
    for cfg in cfgs {
        configs.push(config_view(c, a, cfg).await);
    }
    let mut config_form = Form::new(&[
        ("port", "80"),
        ("protocol", "http"),
        ("algorithm", "roundrobin"),
        ("check", "connection"),
        ("check_interval", "2"),
        ("check_timeout", "1"),
    ]);
    let status = match again {
        Again::None => StatusCode::OK,
        Again::Config(f) => {
            config_form = f;
            StatusCode::BAD_REQUEST
        }
        Again::Node(cid, f) => {
            configs.iter_mut().filter(|v| v.id == cid).for_each(|v| v.node_form = f.clone());
            StatusCode::BAD_REQUEST
        }
        Again::Tls(cid, f) => {
            configs.iter_mut().filter(|v| v.id == cid).for_each(|v| v.tls_form = f.clone());
            StatusCode::BAD_REQUEST
        }
    };
    // Back-end addresses to choose from: the private addresses of the user's instances in the
    // balancer's region.
    let mut suggestions = Vec::new();
    if let Ok(p) = app.instance_list(a, &Filter::default(), big()).await {
        for i in p.data.iter().filter(|i| i.region == b.region) {
            for ip in i.ipv4.iter().filter(|ip| ip.starts_with("192.168.")) {
                suggestions.push(format!("{ip}:8080"));
            }
        }
    }
    let charts = match app.nodebalancer_stats(a, id).await {
        Ok(st) => vec![
            Chart::new("Connections", "new connections per second", ("connections", &st.data.connections), None),
            Chart::new(
                "Traffic",
                "bits per second",
                ("in", &st.data.traffic.inbound),
                Some(("out", &st.data.traffic.out)),
            ),
        ],
        Err(_) => Vec::new(),
    };
    html(
        status,
        &Detail {
            nav: nav(),
            id,
            label: b.label,
            region: b.region,
            ipv4: b.ipv4,
            hostname: b.hostname,
            configs,
            config_form,
            suggestions,
            charts,
        },
    )
}

async fn detail(State(c): State<Console>, s: Signed, Path(id): Path<i64>) -> Response {
    render_detail(&c, &s, id, Again::None).await
}

#[derive(Template)]
#[template(path = "console/config_live.html")]
struct Live {
    nav: Nav,
    bid: i64,
    cfg: ConfigView,
}

/// A config's `nodes_status` and nodes, polled by the detail page.
async fn live(State(c): State<Console>, s: Signed, Path((id, cid)): Path<(i64, i64)>) -> Response {
    match c.app.nodebalancer_config_get(&s.actor, id, cid).await {
        Ok(cfg) => page(&Live { nav: s.nav("balancers"), bid: id, cfg: config_view(&c, &s.actor, cfg).await }),
        Err(e) => error_page(&c, Some(s.nav("balancers")), e),
    }
}

async fn delete(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.nodebalancer_delete(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/balancers")),
        Err(e) => error_page(&c, Some(p.s.nav("balancers")), e),
    }
}

const CONFIG_INTS: &[&str] = &["port", "check_interval", "check_timeout", "check_attempts", "weight"];

fn config_input(f: &Fields) -> Result<ConfigRequest, nubis_model::Error> {
    read::<ConfigRequest>(f.to_json(CONFIG_INTS, &["check_passive"], &[]))
}

async fn config_create(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    let r = match config_input(&p.f) {
        Ok(input) => c.app.nodebalancer_config_create(&p.s.actor, id, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(_) => redirect(&c.p(&format!("/balancers/{id}"))),
        Err(e) => {
            let known =
                ["label", "port", "protocol", "algorithm", "check", "check_interval", "check_timeout", "check_path"];
            let f = Form::from_fields(&p.f).with_error(&e, &known);
            render_detail(&c, &p.s, id, Again::Config(f)).await
        }
    }
}

/// Changes a config; the page uses it to upload a certificate and key (`https`).
async fn config_update(State(c): State<Console>, Path((id, cid)): Path<(i64, i64)>, p: Post) -> Response {
    let r = match config_input(&p.f) {
        Ok(input) => c.app.nodebalancer_config_update(&p.s.actor, id, cid, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(_) => redirect(&c.p(&format!("/balancers/{id}"))),
        Err(e) => {
            let mut f = Form::from_fields(&p.f);
            // The private key is never shown back.
            f.vals.remove("ssl_key");
            let f = f.with_error(&e, &["port", "protocol", "ssl_cert", "ssl_key"]);
            render_detail(&c, &p.s, id, Again::Tls(cid, f)).await
        }
    }
}

async fn config_delete(State(c): State<Console>, Path((id, cid)): Path<(i64, i64)>, p: Post) -> Response {
    match c.app.nodebalancer_config_delete(&p.s.actor, id, cid).await {
        Ok(()) => redirect(&c.p(&format!("/balancers/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("balancers")), e),
    }
}

async fn node_create(State(c): State<Console>, Path((id, cid)): Path<(i64, i64)>, p: Post) -> Response {
    let r = match read::<NodeRequest>(p.f.to_json(&["weight"], &[], &[])) {
        Ok(input) => c.app.nodebalancer_node_create(&p.s.actor, Op::NodebalancerNodeCreate, id, cid, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(_) => redirect(&c.p(&format!("/balancers/{id}"))),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "address", "weight", "mode"]);
            render_detail(&c, &p.s, id, Again::Node(cid, f)).await
        }
    }
}

async fn node_delete(State(c): State<Console>, Path((id, cid, nid)): Path<(i64, i64, i64)>, p: Post) -> Response {
    match c.app.nodebalancer_node_delete(&p.s.actor, id, cid, nid).await {
        Ok(()) => redirect(&c.p(&format!("/balancers/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("balancers")), e),
    }
}
