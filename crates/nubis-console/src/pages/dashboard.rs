//! The dashboard: counts, recent events, balancers and the health of their nodes.

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use nubis_model::filter::Filter;

use super::events::{EventRow, rows};
use super::{balancers::health, big, newest};
use crate::Console;
use crate::render::{Nav, page};
use crate::session::Signed;

pub struct Count {
    pub what: &'static str,
    pub href: String,
    /// `None` when the user may not list these.
    pub n: Option<u64>,
}

pub struct BalancerHealth {
    pub id: i64,
    pub label: String,
    pub ipv4: String,
    pub up: i64,
    pub down: i64,
}

#[derive(Template)]
#[template(path = "console/dashboard.html")]
struct Dashboard {
    nav: Nav,
    counts: Vec<Count>,
    events: Vec<EventRow>,
    balancers: Vec<BalancerHealth>,
    actions: bool,
}

pub async fn show(State(c): State<Console>, s: Signed) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let f = Filter::default();
    let one = nubis_model::page::PageRequest { page: 1, page_size: nubis_model::page::MIN_PAGE_SIZE };
    let counts = vec![
        Count {
            what: "Instances",
            href: c.p("/instances"),
            n: app.instance_list(a, &f, one).await.ok().map(|p| p.results),
        },
        Count { what: "VPCs", href: c.p("/vpcs"), n: app.vpc_list(a, &f, one).await.ok().map(|p| p.results) },
        Count {
            what: "Firewalls",
            href: c.p("/firewalls"),
            n: app.firewall_list(a, &f, one).await.ok().map(|p| p.results),
        },
        Count {
            what: "Load balancers",
            href: c.p("/balancers"),
            n: app.nodebalancer_list(a, &f, one).await.ok().map(|p| p.results),
        },
    ];
    let (ef, ep) = newest(25);
    let events = app.event_list(a, &ef, ep).await.map(|p| rows(p.data.into_iter().take(8))).unwrap_or_default();
    let mut balancers = Vec::new();
    if let Ok(list) = app.nodebalancer_list(a, &f, big()).await {
        for nb in list.data.into_iter().take(20) {
            let (up, down) = health(&c, a, nb.id).await;
            balancers.push(BalancerHealth { id: nb.id, label: nb.label, ipv4: nb.ipv4, up, down });
        }
    }
    page(&Dashboard { nav: s.nav("dashboard"), counts, events, balancers, actions: false })
}
