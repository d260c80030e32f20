//! Firewalls: the list and create, the rule editor (inbound and outbound rules, policies,
//! ports, addresses), devices, enable/disable and delete.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::firewall::{DeviceCreate, FirewallCreate, FirewallUpdate};
use nubis_model::filter::Filter;
use serde_json::{Value, json};

use super::{Options, big};
use crate::Console;
use crate::form::{Fields, Form, read};
use crate::render::{Nav, error_page, html, name};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/firewalls"), get(list).post(create))
        .route(&c.p("/firewalls/{id}"), get(detail))
        .route(&c.p("/firewalls/{id}/rules"), post(rules))
        .route(&c.p("/firewalls/{id}/status"), post(status))
        .route(&c.p("/firewalls/{id}/delete"), post(delete))
        .route(&c.p("/firewalls/{id}/devices"), post(device_add))
        .route(&c.p("/firewalls/{id}/devices/{did}/delete"), post(device_delete))
}

pub struct Row {
    pub id: i64,
    pub label: String,
    pub status: String,
    pub inbound: usize,
    pub outbound: usize,
    pub inbound_policy: String,
    pub outbound_policy: String,
}

#[derive(Template)]
#[template(path = "console/firewalls.html")]
struct List {
    nav: Nav,
    rows: Vec<Row>,
    f: Form,
}

async fn render_list(c: &Console, s: &Signed, f: Form, status: StatusCode) -> Response {
    match c.app.firewall_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => {
            let rows = p
                .data
                .iter()
                .map(|fw| Row {
                    id: fw.id,
                    label: fw.label.clone(),
                    status: name(&fw.status),
                    inbound: fw.rules.inbound.len(),
                    outbound: fw.rules.outbound.len(),
                    inbound_policy: name(&fw.rules.inbound_policy),
                    outbound_policy: name(&fw.rules.outbound_policy),
                })
                .collect();
            html(status, &List { nav: s.nav("firewalls"), rows, f })
        }
        Err(e) => error_page(c, Some(s.nav("firewalls")), e),
    }
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    let f = Form::new(&[("rules.inbound_policy", "DROP"), ("rules.outbound_policy", "ACCEPT")]);
    render_list(&c, &s, f, StatusCode::OK).await
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    let mut body = p.f.to_json(&[], &[], &["tags"]);
    body["rules"]["inbound"] = json!([]);
    body["rules"]["outbound"] = json!([]);
    let r = match read::<FirewallCreate>(body) {
        Ok(input) => c.app.firewall_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match r {
        Ok(fw) => redirect(&c.p(&format!("/firewalls/{}", fw.id))),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["label", "rules.inbound_policy", "rules.outbound_policy"]);
            render_list(&c, &p.s, f, StatusCode::BAD_REQUEST).await
        }
    }
}

/// The rows of one direction.
pub struct Dir {
    pub name: &'static str,
    pub title: &'static str,
    pub rows: Vec<RuleRow>,
}

/// One row of the rule editor; its inputs are named by the API's paths (`inbound[2].ports`).
pub struct RuleRow {
    pub dir: &'static str,
    pub idx: usize,
    pub new: bool,
}

impl RuleRow {
    pub fn k(&self, field: &str) -> String {
        format!("{}[{}].{field}", self.dir, self.idx)
    }
    pub fn id(&self, field: &str) -> String {
        format!("{}-{}-{}", self.dir, self.idx, field.replace('.', "-"))
    }
}

#[derive(Template)]
#[template(path = "console/firewall.html")]
struct Detail {
    nav: Nav,
    id: i64,
    label: String,
    status: String,
    dirs: Vec<Dir>,
    f: Form,
    devices: Vec<(i64, String, String, i64)>,
    candidates: Options,
    df: Form,
}

/// The editor's values from a rules document (the firewall's, or the one just refused).
fn rule_form(rules: &Value) -> (Vec<RuleRow>, Form) {
    let mut f = Form::default();
    let mut rows = Vec::new();
    for dir in ["inbound", "outbound"] {
        let list = rules[dir].as_array().cloned().unwrap_or_default();
        for (idx, r) in list.iter().enumerate() {
            let row = RuleRow { dir, idx, new: false };
            for k in ["label", "action", "protocol", "ports", "description"] {
                f.vals.insert(row.k(k), r[k].as_str().unwrap_or_default().to_string());
            }
            for k in ["ipv4", "ipv6"] {
                let v = r["addresses"][k]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                f.vals.insert(row.k(&format!("addresses.{k}")), v);
            }
            rows.push(row);
        }
        let row = RuleRow { dir, idx: list.len(), new: true };
        f.vals.insert(row.k("protocol"), "TCP".into());
        f.vals.insert(row.k("addresses.ipv4"), "0.0.0.0/0".into());
        rows.push(row);
        let policy = format!("{dir}_policy");
        f.vals.insert(policy.clone(), rules[&policy].as_str().unwrap_or("ACCEPT").to_string());
    }
    (rows, f)
}

async fn render_detail(
    c: &Console,
    s: &Signed,
    id: i64,
    again: Option<(Value, nubis_model::Error)>,
    df: Form,
) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let fw = match app.firewall_get(a, id).await {
        Ok(fw) => fw,
        Err(e) => return error_page(c, Some(s.nav("firewalls")), e),
    };
    let (rows, f, status) = match again {
        None => {
            let (rows, f) = rule_form(&serde_json::to_value(&fw.rules).unwrap_or_default());
            (rows, f, StatusCode::OK)
        }
        Some((body, e)) => {
            let (rows, f) = rule_form(&body);
            let known: Vec<String> = rows
                .iter()
                .flat_map(|r| {
                    ["label", "action", "protocol", "ports", "addresses", "addresses.ipv4", "addresses.ipv6"]
                        .map(|k| r.k(k))
                })
                .chain(["inbound_policy".to_string(), "outbound_policy".to_string()])
                .collect();
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            (rows, f.with_error(&e, &known), StatusCode::BAD_REQUEST)
        }
    };
    let devices = match app.firewall_device_list(a, id, &Filter::default(), big()).await {
        Ok(p) => {
            p.data.into_iter().map(|d| (d.id, d.entity.label, d.entity.kind.name().to_string(), d.entity.id)).collect()
        }
        Err(_) => Vec::new(),
    };
    let mut candidates: Options = Vec::new();
    if let Ok(p) = app.instance_list(a, &Filter::default(), big()).await {
        candidates.extend(p.data.into_iter().map(|i| (format!("instance:{}", i.id), format!("Instance {}", i.label))));
    }
    if let Ok(p) = app.nodebalancer_list(a, &Filter::default(), big()).await {
        candidates.extend(
            p.data.into_iter().map(|b| (format!("nodebalancer:{}", b.id), format!("Load balancer {}", b.label))),
        );
    }
    let mut dirs = vec![
        Dir { name: "inbound", title: "Inbound", rows: Vec::new() },
        Dir { name: "outbound", title: "Outbound", rows: Vec::new() },
    ];
    for r in rows {
        let i = usize::from(r.dir == "outbound");
        dirs[i].rows.push(r);
    }
    let d = Detail {
        nav: s.nav("firewalls"),
        id,
        label: fw.label,
        status: name(&fw.status),
        dirs,
        f,
        devices,
        candidates,
        df,
    };
    html(status, &d)
}

async fn detail(State(c): State<Console>, s: Signed, Path(id): Path<i64>) -> Response {
    render_detail(&c, &s, id, None, Form::default()).await
}

/// The editor's form without the rows marked for removal and the new rows left empty.
fn kept(f: &Fields) -> Fields {
    let mut dropped = Vec::new();
    for (k, v) in &f.0 {
        if let Some(prefix) = k.strip_suffix("._remove").filter(|_| v == "true") {
            dropped.push(format!("{prefix}."));
        }
        if let Some(prefix) = k.strip_suffix(".action").filter(|_| v.is_empty()) {
            dropped.push(format!("{prefix}."));
        }
    }
    Fields(
        f.0.iter()
            .filter(|(k, _)| !dropped.iter().any(|d| k.starts_with(d)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

async fn rules(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    let mut body = kept(&p.f).to_json(&[], &[], &["ipv4", "ipv6"]);
    for dir in ["inbound", "outbound"] {
        if body.get(dir).is_none() {
            body[dir] = json!([]);
        }
    }
    match c.app.firewall_rules_update(&p.s.actor, id, body.clone()).await {
        Ok(_) => redirect(&c.p(&format!("/firewalls/{id}"))),
        Err(e) => render_detail(&c, &p.s, id, Some((body, e)), Form::default()).await,
    }
}

async fn status(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    let input = FirewallUpdate { status: Some(p.f.get("status").to_string()), ..Default::default() };
    match c.app.firewall_update(&p.s.actor, id, input).await {
        Ok(_) => redirect(&c.p(&format!("/firewalls/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("firewalls")), e),
    }
}

async fn delete(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.firewall_delete(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/firewalls")),
        Err(e) => error_page(&c, Some(p.s.nav("firewalls")), e),
    }
}

async fn device_add(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    let (kind, did) = p.f.get("device").split_once(':').unwrap_or(("", ""));
    let input = DeviceCreate { id: did.parse().ok(), kind: Some(kind.to_string()).filter(|k| !k.is_empty()) };
    let r = c.app.firewall_device_create(&p.s.actor, id, input).await;
    match r {
        Ok(_) => redirect(&c.p(&format!("/firewalls/{id}"))),
        Err(e) => {
            let df = Form::from_fields(&p.f).with_error(&e, &[]);
            render_detail(&c, &p.s, id, None, df).await
        }
    }
}

async fn device_delete(State(c): State<Console>, Path((id, did)): Path<(i64, i64)>, p: Post) -> Response {
    match c.app.firewall_device_delete(&p.s.actor, id, did).await {
        Ok(()) => redirect(&c.p(&format!("/firewalls/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("firewalls")), e),
    }
}
