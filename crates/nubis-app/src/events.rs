//! Events: how an operation describes the event it emits, and the events endpoints.

use nubis_model::event::{Event, EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::grants::GrantKind;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::events::EventViewer;

use crate::App;
use crate::auth::{Actor, Op};

/// Starts an event by `actor` about `entity`, finished, visible to unrestricted users only
/// until [`EventBuilder::visible_with`] or [`EventBuilder::about_user`] widens it.
pub(crate) fn event(actor: &Actor, action: &'static str, entity: EventEntity) -> EventBuilder {
    EventBuilder(NewEvent {
        account_id: actor.account_id(),
        action,
        entity: Some(entity),
        secondary: None,
        username: Some(actor.username().to_string()),
        status: "finished",
        message: None,
        visible_with: None,
        subject_user_id: None,
    })
}

pub(crate) struct EventBuilder(NewEvent);

// The resource areas use every builder method; some are not used yet.
#[allow(dead_code)]
impl EventBuilder {
    pub fn secondary(mut self, e: EventEntity) -> Self {
        self.0.secondary = Some(e);
        self
    }
    /// Restricted users with a grant on this entity see the event.
    pub fn visible_with(mut self, kind: GrantKind, id: i64) -> Self {
        self.0.visible_with = Some((kind, id));
        self
    }
    /// The user the event is about sees it.
    pub fn about_user(mut self, user_id: i64) -> Self {
        self.0.subject_user_id = Some(user_id);
        self
    }
    pub fn status(mut self, status: &'static str) -> Self {
        self.0.status = status;
        self
    }
    pub fn message(mut self, m: impl Into<String>) -> Self {
        self.0.message = Some(m.into());
        self
    }
    pub fn build(self) -> NewEvent {
        self.0
    }
}

fn viewer(actor: &Actor) -> EventViewer {
    EventViewer { account_id: actor.account_id(), user_id: actor.user_id(), restricted: actor.restricted() }
}

impl App {
    fn events_since(&self) -> Timestamp {
        Timestamp::now().minus_days(self.config.limits.events_days)
    }

    /// Forgets the events and the sign-in records past the window (no request can list or read
    /// them any more), a batch per transaction; returns how many. Keeps the two lists' counts and
    /// deep pages to what the window holds.
    pub async fn events_prune_due(&self) -> Result<u64> {
        const BATCH: i64 = 1_000;
        let before = self.events_since();
        let mut total = 0;
        loop {
            let n = self
                .write(|tx| {
                    Box::pin(async move {
                        Ok(tx.events_delete_before(before, BATCH).await?
                            + tx.logins_delete_before(before, BATCH).await?)
                    })
                })
                .await?;
            total += n;
            if n < BATCH as u64 {
                return Ok(total);
            }
        }
    }

    /// Runs [`App::events_prune_due`] every `every` until aborted (`nubis serve`).
    pub fn spawn_event_pruner(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                match app.events_prune_due().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(events = n, "forgot the events past the window"),
                    Err(e) => tracing::warn!(error = %e, "forgetting old events failed"),
                }
                tokio::time::sleep(every).await;
            }
        })
    }

    pub async fn event_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Event>> {
        self.authorize(actor, Op::EventList).await?;
        let (data, results) =
            self.store.events_page(&viewer(actor), self.events_since(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, results))
    }

    pub async fn event_get(&self, actor: &Actor, id: i64) -> Result<Event> {
        self.authorize(actor, Op::EventGet).await?;
        self.store.event_get(&viewer(actor), self.events_since(), id).await?.ok_or(Error::NotFound)
    }

    /// Marks one event read by the caller.
    pub async fn event_read(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::EventRead).await?;
        self.store.event_get(&viewer(actor), self.events_since(), id).await?.ok_or(Error::NotFound)?;
        self.write(|tx| {
            Box::pin(async move {
                tx.event_mark_read(actor.user_id(), id).await?;
                Ok(())
            })
        })
        .await
    }

    /// Marks every event up to and including `id` seen by the caller.
    pub async fn event_seen(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::EventSeen).await?;
        self.store.event_get(&viewer(actor), self.events_since(), id).await?.ok_or(Error::NotFound)?;
        self.write(|tx| {
            Box::pin(async move {
                tx.user_mark_seen(actor.user_id(), id).await?;
                Ok(())
            })
        })
        .await
    }
}
