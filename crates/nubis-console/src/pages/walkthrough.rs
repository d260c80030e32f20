//! The load-balancer walkthrough as one guided page: each step says whether it is done (read
//! from the user's own VPCs, instances and balancers) and links to the form that does it.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use nubis_model::filter::Filter;

use super::big;
use super::instances::{Row, row};
use crate::Console;
use crate::render::{Nav, page};
use crate::session::Signed;

pub fn routes(c: &Console) -> Router<Console> {
    Router::new().route(&c.p("/walkthrough"), get(show)).route(&c.p("/walkthrough/steps"), get(steps))
}

/// A back end: an instance's private address, and where this host reaches it.
pub struct Backend {
    pub i: Row,
    pub private: String,
    pub local: String,
}

pub struct Progress {
    pub vpc: Option<(i64, String, String)>,
    pub backends: Vec<Backend>,
    pub balancer: Option<(i64, String, String)>,
    pub config: Option<(i64, i64, String)>,
    pub nodes: usize,
    pub up: i64,
}

#[derive(Template)]
#[template(path = "console/walkthrough.html")]
struct Page {
    nav: Nav,
    w: Progress,
}

#[derive(Template)]
#[template(path = "console/walkthrough_steps.html")]
struct Steps {
    nav: Nav,
    w: Progress,
}

async fn load(c: &Console, s: &Signed) -> Progress {
    let (app, a, f) = (&c.app, &s.actor, Filter::default());
    let vpc = app.vpc_list(a, &f, big()).await.ok().and_then(|p| {
        p.data
            .into_iter()
            .find(|v| !v.subnets.is_empty())
            .map(|v| (v.id, v.label, v.subnets.first().map(|s| s.ipv4.clone()).unwrap_or_default()))
    });
    let mut backends = Vec::new();
    if let Ok(p) = app.instance_list(a, &f, big()).await {
        for i in &p.data {
            if let Some(ip) = i.ipv4.iter().find(|ip| ip.starts_with("192.168.")) {
                let local = format!("127.168.{}", ip.trim_start_matches("192.168."));
                backends.push(Backend { i: row(i), private: ip.clone(), local });
            }
        }
    }
    let mut w = Progress { vpc, backends, balancer: None, config: None, nodes: 0, up: 0 };
    if let Some(b) = app.nodebalancer_list(a, &f, big()).await.ok().and_then(|p| p.data.into_iter().next()) {
        if let Some(cfg) =
            app.nodebalancer_config_list(a, b.id, &f, big()).await.ok().and_then(|p| p.data.into_iter().next())
        {
            w.nodes =
                app.nodebalancer_node_list(a, b.id, cfg.id, &f, big()).await.map(|p| p.data.len()).unwrap_or_default();
            w.up = cfg.nodes_status.up;
            w.config = Some((cfg.id, cfg.port, crate::render::name(&cfg.protocol)));
        }
        w.balancer = Some((b.id, b.label, b.ipv4));
    }
    w
}

async fn show(State(c): State<Console>, s: Signed) -> Response {
    let w = load(&c, &s).await;
    page(&Page { nav: s.nav("walkthrough"), w })
}

async fn steps(State(c): State<Console>, s: Signed) -> Response {
    let w = load(&c, &s).await;
    page(&Steps { nav: s.nav("walkthrough"), w })
}
