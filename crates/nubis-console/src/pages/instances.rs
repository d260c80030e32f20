//! Instances: the list, the create form with the catalog's choices, the detail page with
//! addresses and firewalls, power actions and delete; the status updates by polling until the
//! instance settles.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::instance::{InstanceCreate, InstanceUpdate};
use nubis_app::ip::IpAllocate;
use nubis_model::catalog::capability;
use nubis_model::filter::Filter;
use nubis_model::instance::Instance;
use serde_json::{Value, json};

use super::{Options, big, regions};
use crate::Console;
use crate::form::{Form, read};
use crate::render::{Nav, error_page, html, name, page};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/instances"), get(list).post(create))
        .route(&c.p("/instances/new"), get(new))
        .route(&c.p("/instances/{id}"), get(detail))
        .route(&c.p("/instances/{id}/status"), get(status))
        .route(&c.p("/instances/{id}/{action}"), post(action))
}

pub struct Row {
    pub id: i64,
    pub label: String,
    pub region: String,
    pub kind: String,
    pub image: String,
    pub status: String,
    pub busy: bool,
    pub ipv4: Vec<String>,
}

/// Statuses that change by themselves (the page polls until the instance leaves them).
pub fn busy(status: &str) -> bool {
    !matches!(status, "running" | "offline")
}

pub fn row(i: &Instance) -> Row {
    let status = name(&i.status);
    Row {
        id: i.id,
        label: i.label.clone(),
        region: i.region.clone(),
        kind: i.kind.clone(),
        image: i.image.clone().unwrap_or_default(),
        busy: busy(&status),
        status,
        ipv4: i.ipv4.clone(),
    }
}

#[derive(Template)]
#[template(path = "console/instances.html")]
struct List {
    nav: Nav,
    rows: Vec<Row>,
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    match c.app.instance_list(&s.actor, &Filter::default(), big()).await {
        Ok(p) => page(&List { nav: s.nav("instances"), rows: p.data.iter().map(row).collect() }),
        Err(e) => error_page(&c, Some(s.nav("instances")), e),
    }
}

#[derive(Template)]
#[template(path = "console/instance_new.html")]
struct New {
    nav: Nav,
    f: Form,
    regions: Options,
    types: Options,
    images: Options,
    firewalls: Options,
    subnets: Options,
}

const FIELDS: &[&str] =
    &["label", "region", "type", "image", "root_pass", "booted", "private_ip", "firewall_id", "interfaces"];

async fn new_page(c: &Console, s: &Signed, f: Form) -> New {
    let (app, a) = (&c.app, &s.actor);
    let types = app.type_list().iter().map(|t| (t.id.clone(), format!("{} ({})", t.label, t.id))).collect();
    let mut images: Options = vec![(String::new(), "No image (an empty disk)".into())];
    images.extend(app.image_list().iter().map(|i| (i.id.clone(), format!("{} ({})", i.label, i.id))));
    let mut firewalls: Options = vec![(String::new(), "None".into())];
    if let Ok(p) = app.firewall_list(a, &Filter::default(), big()).await {
        firewalls.extend(p.data.into_iter().map(|fw| (fw.id.to_string(), fw.label)));
    }
    let mut subnets: Options = vec![(String::new(), "None (public interface only)".into())];
    if let Ok(p) = app.vpc_list(a, &Filter::default(), big()).await {
        for v in p.data {
            for sn in &v.subnets {
                subnets.push((sn.id.to_string(), format!("{} / {} ({}, {})", v.label, sn.label, sn.ipv4, v.region)));
            }
        }
    }
    New { nav: s.nav("instances"), f, regions: regions(app, capability::INSTANCES), types, images, firewalls, subnets }
}

async fn new(State(c): State<Console>, s: Signed) -> Response {
    let f = Form::new(&[
        ("region", "us-east"),
        ("type", "g6-nanode-1"),
        ("image", "linode/debian12"),
        ("booted", "true"),
        ("private_ip", "true"),
    ]);
    page(&new_page(&c, &s, f).await)
}

async fn create(State(c): State<Console>, p: Post) -> Response {
    let mut body = p.f.to_json(&["firewall_id"], &["booted", "private_ip"], &["tags"]);
    let subnet = p.f.get("_subnet");
    if !subnet.is_empty() {
        let sid: Value = subnet.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(subnet));
        body["interfaces"] = json!([{"purpose": "public"}, {"purpose": "vpc", "subnet_id": sid}]);
    }
    let result = match read::<InstanceCreate>(body) {
        Ok(input) => c.app.instance_create(&p.s.actor, input).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(i) => redirect(&c.p(&format!("/instances/{}", i.id))),
        Err(e) => {
            let mut f = Form::from_fields(&p.f);
            f.vals.remove("root_pass");
            let f = f.with_error(&e, FIELDS);
            html(axum::http::StatusCode::BAD_REQUEST, &new_page(&c, &p.s, f).await)
        }
    }
}

pub struct Address {
    pub address: String,
    pub kind: String,
    /// Where this host reaches it in loopback mode (private addresses: `127.168.X.Y`).
    pub local: String,
}

#[derive(Template)]
#[template(path = "console/instance.html")]
struct Detail {
    nav: Nav,
    i: Row,
    created: String,
    addresses: Vec<Address>,
    firewalls: Vec<(i64, String)>,
    balancers: Vec<(i64, String)>,
    has_private: bool,
    f: Form,
}

async fn detail(State(c): State<Console>, s: Signed, Path(id): Path<i64>) -> Response {
    render_detail(&c, &s, id, None).await
}

/// The detail page; `rename` is a refused rename form to show again.
async fn render_detail(c: &Console, s: &Signed, id: i64, rename: Option<Form>) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let i = match app.instance_get(a, id).await {
        Ok(i) => i,
        Err(e) => return error_page(c, Some(s.nav("instances")), e),
    };
    let mut addresses = Vec::new();
    if let Ok(ips) = app.instance_ips_list(a, id).await {
        for (list, kind) in [(&ips.ipv4.public, "public IPv4"), (&ips.ipv4.private, "private IPv4")] {
            for ip in list {
                let local = ip.address.strip_prefix("192.168.").map(|r| format!("127.168.{r}")).unwrap_or_default();
                addresses.push(Address { address: ip.address.clone(), kind: kind.into(), local });
            }
        }
        for v in &ips.ipv4.vpc {
            if let Some(addr) = &v.address {
                addresses.push(Address { address: addr.clone(), kind: "VPC".into(), local: String::new() });
            }
        }
        if let Some(s6) = &ips.ipv6.slaac {
            addresses.push(Address { address: s6.address.clone(), kind: "IPv6 SLAAC".into(), local: String::new() });
        }
    }
    let firewalls = match app.instance_firewalls_list(a, id, &Filter::default(), big()).await {
        Ok(p) => p.data.into_iter().map(|f| (f.id, f.label)).collect(),
        Err(_) => Vec::new(),
    };
    let balancers = match app.instance_nodebalancers_list(a, id, &Filter::default(), big()).await {
        Ok(p) => p.data.into_iter().map(|b| (b.id, b.label)).collect(),
        Err(_) => Vec::new(),
    };
    let has_private = addresses.iter().any(|x| x.kind == "private IPv4");
    let status = if rename.is_some() { axum::http::StatusCode::BAD_REQUEST } else { axum::http::StatusCode::OK };
    let f = rename.unwrap_or_else(|| Form::new(&[("label", &i.label)]));
    html(
        status,
        &Detail {
            nav: s.nav("instances"),
            created: crate::render::when(&i.created),
            i: row(&i),
            addresses,
            firewalls,
            balancers,
            has_private,
            f,
        },
    )
}

#[derive(Template)]
#[template(path = "console/instance_status.html")]
struct StatusBadge {
    nav: Nav,
    i: Row,
}

/// The status badge alone, polled while the instance is busy.
async fn status(State(c): State<Console>, s: Signed, Path(id): Path<i64>) -> Response {
    match c.app.instance_get(&s.actor, id).await {
        Ok(i) => page(&StatusBadge { nav: s.nav("instances"), i: row(&i) }),
        Err(e) => error_page(&c, Some(s.nav("instances")), e),
    }
}

async fn action(State(c): State<Console>, Path((id, action)): Path<(i64, String)>, p: Post) -> Response {
    let (app, a) = (&c.app, &p.s.actor);
    let r = match action.as_str() {
        "boot" => app.instance_boot(a, id).await,
        "shutdown" => app.instance_shutdown(a, id).await,
        "reboot" => app.instance_reboot(a, id).await,
        "private-ip" => {
            let input = IpAllocate { kind: Some("ipv4".into()), public: Some(false), instance_id: Some(id) };
            app.ip_allocate(a, input).await.map(|_| ())
        }
        "label" => {
            let r = match read::<InstanceUpdate>(p.f.to_json(&[], &[], &[])) {
                Ok(input) => app.instance_update(a, id, input).await.map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                let f = Form::from_fields(&p.f).with_error(&e, &["label"]);
                return render_detail(&c, &p.s, id, Some(f)).await;
            }
            Ok(())
        }
        "delete" => {
            return match app.instance_delete(a, id).await {
                Ok(()) => redirect(&c.p("/instances")),
                Err(e) => error_page(&c, Some(p.s.nav("instances")), e),
            };
        }
        _ => Err(nubis_model::Error::NotFound),
    };
    match r {
        Ok(()) => redirect(&c.p(&format!("/instances/{id}"))),
        Err(e) => error_page(&c, Some(p.s.nav("instances")), e),
    }
}
