//! Events, newest first, refreshed by polling; marking one read and all seen.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use nubis_model::event::Event;

use super::newest;
use crate::Console;
use crate::render::{Nav, error_page, page, when};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/events"), get(list))
        .route(&c.p("/events/table"), get(table))
        .route(&c.p("/events/seen"), post(seen))
        .route(&c.p("/events/{id}/read"), post(read))
}

pub struct EventRow {
    pub id: i64,
    pub action: String,
    pub entity: String,
    pub entity_type: String,
    pub status: String,
    pub username: String,
    pub created: String,
    pub read: bool,
    pub seen: bool,
    pub message: String,
}

pub fn rows(events: impl Iterator<Item = Event>) -> Vec<EventRow> {
    events
        .map(|e| EventRow {
            id: e.id,
            action: e.action,
            entity: e.entity.as_ref().map(|x| x.label.clone()).unwrap_or_default(),
            entity_type: e.entity.as_ref().map(|x| x.kind.clone()).unwrap_or_default(),
            status: e.status,
            username: e.username.unwrap_or_default(),
            created: when(&e.created),
            read: e.read,
            seen: e.seen,
            message: e.message.unwrap_or_default(),
        })
        .collect()
}

#[derive(Template)]
#[template(path = "console/events.html")]
struct Events {
    nav: Nav,
    events: Vec<EventRow>,
    actions: bool,
}

#[derive(Template)]
#[template(path = "console/event_table.html")]
struct EventTable {
    nav: Nav,
    events: Vec<EventRow>,
    actions: bool,
}

async fn load(c: &Console, s: &Signed) -> Result<Vec<EventRow>, nubis_model::Error> {
    let (f, p) = newest(100);
    Ok(rows(c.app.event_list(&s.actor, &f, p).await?.data.into_iter()))
}

async fn list(State(c): State<Console>, s: Signed) -> Response {
    match load(&c, &s).await {
        Ok(events) => page(&Events { nav: s.nav("events"), events, actions: true }),
        Err(e) => error_page(&c, Some(s.nav("events")), e),
    }
}

/// The table alone, for the page's polling.
async fn table(State(c): State<Console>, s: Signed) -> Response {
    match load(&c, &s).await {
        Ok(events) => page(&EventTable { nav: s.nav("events"), events, actions: true }),
        Err(e) => error_page(&c, Some(s.nav("events")), e),
    }
}

async fn read(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.event_read(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/events")),
        Err(e) => error_page(&c, Some(p.s.nav("events")), e),
    }
}

/// Marks every event up to the newest shown as seen.
async fn seen(State(c): State<Console>, p: Post) -> Response {
    let Ok(id) = p.f.get("id").parse::<i64>() else { return redirect(&c.p("/events")) };
    match c.app.event_seen(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/events")),
        Err(e) => error_page(&c, Some(p.s.nav("events")), e),
    }
}
