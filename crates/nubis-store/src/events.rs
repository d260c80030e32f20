//! The event log: written inside the transaction of the change it records, read page by page
//! with the caller's visibility, X-Filter and read/seen marks.

use crate::db::Row;
use nubis_model::event::{Event, EventEntity, NewEvent, SecondaryEntity};
use nubis_model::filter::{CmpOp, Cond, Filter, Order};
use nubis_model::{Result, Timestamp};
use serde_json::Value;

use crate::db::query;
use crate::fences::Rows;
use crate::pages::{DeepStart, LOCATE_FROM};
use crate::rows::RowExt;
use crate::sql::{
    ColKind, Column, SCAN_BUDGET, Sql, Val, push_filter_led, push_ids, push_is, push_kept_count, served_apart,
    unserved_noting,
};
use crate::{Store, Tx};

/// Who is reading events: restricted users see only events about what they are granted and
/// events about themselves.
#[derive(Debug, Clone, Copy)]
pub struct EventViewer {
    pub account_id: i64,
    pub user_id: i64,
    pub restricted: bool,
}

const COLUMNS: &[Column] = &[
    Column { path: "id", expr: "e.id", kind: ColKind::Int },
    Column { path: "action", expr: "e.action", kind: ColKind::Text },
    Column { path: "created", expr: "e.created", kind: ColKind::Text },
    Column { path: "entity.id", expr: "e.entity_id", kind: ColKind::IntOrNull },
    Column { path: "entity.type", expr: "e.entity_type", kind: ColKind::TextOrNull },
    Column { path: "username", expr: "e.username", kind: ColKind::TextOrNull },
    Column { path: "status", expr: "e.status", kind: ColKind::Text },
    Column {
        path: "read",
        expr: "EXISTS (SELECT 1 FROM event_reads r WHERE r.event_id = e.id AND r.user_id = e_viewer.id)",
        kind: ColKind::Bool,
    },
    Column { path: "seen", expr: "(e.id <= e_viewer.events_seen_upto)", kind: ColKind::Bool },
    // The events a user has read, and those not, which `read` is read as ([`read_set`]); no
    // client names them (the API's filter takes only the list's fields).
    Column {
        path: "read_by",
        expr: "e.id IN (SELECT r.event_id FROM event_reads r WHERE r.user_id = {})",
        kind: ColKind::InSet,
    },
    Column {
        path: "unread_by",
        expr: "e.id NOT IN (SELECT r.event_id FROM event_reads r WHERE r.user_id = {})",
        kind: ColKind::InSet,
    },
];

/// The fields an index on the account and the field serves (migration 36).
const INDEXED: &[&str] = &["action", "created", "entity.id", "entity.type", "username", "status"];
/// The fields served in a condition, as a client names them: those; `seen`, a range of ids
/// ([`Filter::bound_by`]); and `read`: the events read are the reader's marks, read first by
/// their index ([`read_set`]), and the events not read are the others, met as a page walks the
/// list (past each event the reader marked).
const FILTERED: &[&str] = &["action", "created", "entity.id", "entity.type", "username", "status", "seen", "read"];
/// Where the list is ordered by `seen` past the budget ([`Store::events_by_seen`]).
const BY_MARKS: &str = "; order by seen or read the whole list (not a restricted user's)";
/// [`FILTERED`] as the filter reads once `read` is written out ([`read_set`]).
const CONDS: &[&str] =
    &["action", "created", "entity.id", "entity.type", "username", "status", "seen", "read_by", "unread_by"];

/// The filter with each comparison of `read` written as membership of the reader's marks
/// (`event_reads`, keyed by user and event: the set the list's `read` is computed from). That an
/// event is read is the bare membership, which the database may meet by reading the marks
/// first; that it is not, its negation, checked against the marks read once. The comparison is
/// replaced, not kept beside: planned for unknown values, PostgreSQL takes a computed boolean
/// compared with a value to hold for one row in 200, and for the events not read (most of them)
/// sorted every event of the account rather than walk its index (0.9 s against 45 ms a page
/// of 300,000 events).
fn read_set(filter: &Filter, user_id: i64) -> Filter {
    filter.rewrite("read", |op, value| {
        let (CmpOp::Eq | CmpOp::Neq, Value::Bool(b)) = (op, value) else { return None };
        let path = if (op == CmpOp::Eq) == *b { "read_by" } else { "unread_by" };
        Some(Cond::Field { path: path.into(), op: CmpOp::Eq, value: user_id.into() })
    })
}

/// Whether the filter's one condition is that an event is not read, in the list's own order: the
/// page walks the list's index (led by the account, [`DeepStart::Led`]) past the reader's marks.
/// Scoped by the account's equality, PostgreSQL reads and sorts every event of the account
/// instead (317 ms a page of 300,000 events, 1.4 ms led).
fn unread_only(filter: &Filter) -> bool {
    let unread =
        |op, value: &Value| matches!((op, value), (CmpOp::Eq, Value::Bool(false)) | (CmpOp::Neq, Value::Bool(true)));
    filter.order_by.is_none()
        && matches!(&filter.cond, Some(Cond::Field { path, op, value }) if path == "read" && unread(*op, value))
}

const SELECT: &str = "SELECT e.id, e.action, e.created, e.entity_type, e.entity_id, e.entity_label, e.entity_url, \
     e.secondary_type, e.secondary_id, e.secondary_label, e.secondary_url, e.status, e.username, e.message, \
     e.completed, EXISTS (SELECT 1 FROM event_reads r WHERE r.event_id = e.id AND r.user_id = e_viewer.id) AS is_read, \
     CASE WHEN e.id <= e_viewer.events_seen_upto THEN 1 ELSE 0 END AS is_seen \
     FROM events e JOIN users e_viewer ON e_viewer.id = ";

fn event(r: &Row) -> Result<Event> {
    let entity = match (r.opt_str("entity_type")?, r.opt_i64("entity_id")?) {
        (Some(kind), Some(id)) => Some(EventEntity {
            id,
            kind,
            label: r.opt_str("entity_label")?.unwrap_or_default(),
            url: r.opt_str("entity_url")?.unwrap_or_default(),
        }),
        _ => None,
    };
    let secondary_entity = match (r.opt_str("secondary_type")?, r.opt_i64("secondary_id")?) {
        (Some(kind), Some(id)) => Some(SecondaryEntity {
            id: id.to_string(),
            kind,
            label: r.opt_str("secondary_label")?.unwrap_or_default(),
            url: r.opt_str("secondary_url")?.unwrap_or_default(),
        }),
        _ => None,
    };
    let status = r.str("status")?;
    let finished = status == "finished" || status == "notification";
    let created = r.ts("created")?;
    let completed = r.opt_str("completed")?.and_then(|c| Timestamp::parse(&c));
    let username = r.opt_str("username")?;
    Ok(Event {
        id: r.i64("id")?,
        action: r.str("action")?,
        created,
        duration: completed.map(|c| (c.unix() - created.unix()).max(0) as f64),
        entity,
        secondary_entity,
        percent_complete: if finished { Some(100) } else { None },
        rate: None,
        read: r.bool("is_read")?,
        seen: r.bool("is_seen")?,
        status,
        time_remaining: None,
        message: r.opt_str("message")?,
        // Nothing nubis records is maintenance: the maintenance details are null, and an event
        // starts when it is created.
        source: Some(if username.is_some() { "user" } else { "platform" }.to_string()),
        description: None,
        maintenance_policy_set: None,
        not_before: None,
        start_time: Some(created),
        complete_time: completed,
        username,
    })
}

/// How a statement reaches the account's events.
#[derive(Clone, Copy, PartialEq)]
enum Reach {
    /// Through an index on the account (and a field of the filter).
    Index,
    /// Through the index on the account and the id, the account written as a range of its one
    /// value, for a page ordered by it first ([`push_is`]).
    Led,
    /// From the reader's marks, by the events' primary key ([`marks_first`]): the account's
    /// condition is written so that no index serves it (`+e.account_id`).
    Marks,
}

/// The WHERE clause shared by the list and the single-event read.
fn scope(sql: &mut Sql, v: &EventViewer, since: Timestamp) {
    scope_as(sql, v, since, Reach::Index);
}

/// [`scope`], reaching the events as `reach` says.
fn scope_as(sql: &mut Sql, v: &EventViewer, since: Timestamp, reach: Reach) {
    sql.bind(Val::I64(v.user_id));
    sql.push(" WHERE ");
    if reach == Reach::Marks {
        sql.push("+e.account_id = ").bind(Val::I64(v.account_id));
    } else {
        push_is(sql, "e.account_id", v.account_id, reach == Reach::Led);
    }
    // Not an index range (`|| ''`): a page walks the account's events in id order and checks the
    // window on each, where a range on `created` would read the whole window to sort it.
    sql.push(" AND e.created || '' >= ").bind(Val::Str(since.to_string()));
    if v.restricted {
        sql.push(" AND (e.subject_user_id = ").bind(Val::I64(v.user_id));
        sql.push(
            " OR (e.grant_kind IS NOT NULL AND EXISTS (SELECT 1 FROM grants g WHERE g.user_id = e_viewer.id \
             AND g.kind = e.grant_kind AND g.entity_id = e.grant_id)))",
        );
    }
}

/// Whether every event the filter matches is one the reader marked read (`read_by`, a condition
/// of its own or of its top `+and`): such a statement reads the marks first, then their events
/// by the primary key. Planned for unknown values, SQLite walked every event of the account in
/// an index on it instead, checking each against the marks (300,000 events for 4 marks).
fn marks_first(filter: &Filter) -> bool {
    let marks = |c: &Cond| matches!(c, Cond::Field { path, .. } if path == "read_by");
    match &filter.cond {
        Some(Cond::And(parts)) => parts.iter().any(marks),
        Some(c) => marks(c),
        None => false,
    }
}

/// The statement that reads the account's kept count of events (`kept`) and how many of them
/// are older than the window (`aged`, which the pruner has yet to remove), for the caller to add
/// more columns to (`, (...) AS name`).
fn kept_and_aged(viewer: &EventViewer, since: Timestamp) -> Sql {
    let mut count = Sql::new("SELECT (");
    push_kept_count(&mut count, viewer.account_id, "events");
    count.push(") AS kept, (SELECT COUNT(*) FROM events WHERE account_id = ").bind(Val::I64(viewer.account_id));
    count.push(" AND created < ").bind(Val::Str(since.to_string())).push(") AS aged");
    count
}

/// The parts of the page of `page_size` rows at `offset` of a list made of runs of `lens` rows,
/// one after the other: for each run the page reaches, its index, how many of its rows come
/// before the page's part of it, and how many rows that part holds.
fn page_of_runs(lens: &[u64], offset: u64, page_size: u64) -> Vec<(usize, u64, u64)> {
    let mut parts = Vec::new();
    let (mut before, mut taken) = (0u64, 0u64);
    for (run, &n) in lens.iter().enumerate() {
        let skip = (offset.saturating_add(taken)).saturating_sub(before);
        before = before.saturating_add(n);
        let wanted = page_size - taken;
        if wanted == 0 {
            break;
        }
        if skip < n {
            let len = wanted.min(n - skip);
            parts.push((run, skip, len));
            taken += len;
        }
    }
    parts
}

/// The start of an insert of events; [`event_values`] gives each row.
const INSERT_EVENTS: &str = "INSERT INTO events (account_id, action, created, entity_type, entity_id, entity_label, \
     entity_url, secondary_type, secondary_id, secondary_label, secondary_url, status, username, message, \
     grant_kind, grant_id, subject_user_id, completed) VALUES ";
/// The values [`bind_event`] binds for one event.
const EVENT_BINDS: usize = 17;
/// Events inserted by one statement (17 values each, far below either engine's limit).
const EVENTS_AT_ONCE: usize = 500;

/// One row of [`INSERT_EVENTS`], its values numbered from `before + 1`: an event is complete
/// when created in a final status.
fn event_values(before: usize) -> String {
    let p: Vec<String> = (1..=EVENT_BINDS).map(|i| format!("${}", before + i)).collect();
    let (created, status) = (&p[2], &p[11]);
    format!("({}, CASE WHEN {status} IN ('finished', 'failed', 'notification') THEN {created} END)", p.join(", "))
}

/// Binds one event's [`EVENT_BINDS`] values, in the order of [`INSERT_EVENTS`].
fn bind_event(q: crate::db::Query, e: &NewEvent, now: &str) -> crate::db::Query {
    let (gk, gi) = match e.visible_with {
        Some((k, id)) => (Some(k.name()), Some(id)),
        None => (None, None),
    };
    q.bind(e.account_id)
        .bind(e.action)
        .bind(now.to_string())
        .bind(e.entity.as_ref().map(|x| x.kind.clone()))
        .bind(e.entity.as_ref().map(|x| x.id))
        .bind(e.entity.as_ref().map(|x| x.label.clone()))
        .bind(e.entity.as_ref().map(|x| x.url.clone()))
        .bind(e.secondary.as_ref().map(|x| x.kind.clone()))
        .bind(e.secondary.as_ref().map(|x| x.id))
        .bind(e.secondary.as_ref().map(|x| x.label.clone()))
        .bind(e.secondary.as_ref().map(|x| x.url.clone()))
        .bind(e.status)
        .bind(e.username.clone())
        .bind(e.message.clone())
        .bind(gk)
        .bind(gi)
        .bind(e.subject_user_id)
}

impl Tx<'_> {
    /// Deletes up to `limit` of the oldest events created before `before` (with their read
    /// marks); returns how many.
    pub async fn events_delete_before(&mut self, before: Timestamp, limit: i64) -> Result<u64> {
        let old = "SELECT id FROM events WHERE created < $1 ORDER BY created, id LIMIT $2";
        query(format!("DELETE FROM event_reads WHERE event_id IN ({old})"))
            .bind(before.to_string())
            .bind(limit)
            .execute(self.h())
            .await?;
        let n = query(format!("DELETE FROM events WHERE id IN ({old})"))
            .bind(before.to_string())
            .bind(limit)
            .execute(self.h())
            .await?;
        Ok(n)
    }

    pub async fn event_insert(&mut self, e: &NewEvent) -> Result<i64> {
        let now = Timestamp::now().to_string();
        let text = format!("{INSERT_EVENTS}{} RETURNING id", event_values(0));
        bind_event(query(text), e, &now).fetch_i64(self.h()).await
    }

    /// Inserts many events, a statement for each [`EVENTS_AT_ONCE`] of them.
    ///
    /// The events' kept counts and order fences are kept by statement triggers over each
    /// statement's rows, so many events cost one run of the triggers per batch, not one each
    /// (and one round trip). One insert per event in one transaction used to cost more with each
    /// event before it on PostgreSQL, mostly through the change notices (migration 60); the row
    /// versions the count updates leave still add a little.
    pub async fn events_insert(&mut self, events: &[NewEvent]) -> Result<()> {
        let now = Timestamp::now().to_string();
        for batch in events.chunks(EVENTS_AT_ONCE) {
            let rows: Vec<String> = (0..batch.len()).map(|k| event_values(k * EVENT_BINDS)).collect();
            let mut q = query(format!("{INSERT_EVENTS}{}", rows.join(", ")));
            for e in batch {
                q = bind_event(q, e, &now);
            }
            q.execute(self.h()).await?;
        }
        Ok(())
    }

    /// Copies the events of entities of one kind from one account into another (a service
    /// transfer gives the receiver the history of what it received; the sender keeps its own
    /// copy), [`EVENTS_AT_ONCE`] entities per statement, each statement's in the order they
    /// happened. Copies keep their times, statuses and texts; grants on them are the receiver's
    /// to give.
    pub async fn events_copy_of_entities(&mut self, kind: &str, entity_ids: &[i64], from: i64, to: i64) -> Result<u64> {
        let mut copied = 0;
        for batch in entity_ids.chunks(EVENTS_AT_ONCE) {
            let mut sql = Sql::new(
                "INSERT INTO events (account_id, action, created, entity_type, entity_id, entity_label, entity_url, \
                 secondary_type, secondary_id, secondary_label, secondary_url, status, username, message, \
                 grant_kind, grant_id, subject_user_id, completed) SELECT ",
            );
            sql.bind(Val::I64(to)).push(
                ", action, created, entity_type, entity_id, entity_label, entity_url, secondary_type, secondary_id, \
                 secondary_label, secondary_url, status, username, message, grant_kind, grant_id, NULL, completed \
                 FROM events WHERE account_id = ",
            );
            sql.bind(Val::I64(from)).push(" AND entity_type = ").bind(Val::Str(kind.to_string()));
            sql.push(" AND subject_user_id IS NULL AND entity_id IN ");
            push_ids(&mut sql, batch);
            sql.push(" ORDER BY id");
            copied += sql.query().execute(self.h()).await?;
        }
        Ok(copied)
    }

    /// Changes the status of an event (a `started` event of a long operation becomes `finished`).
    pub async fn event_set_status(&mut self, id: i64, status: &str) -> Result<()> {
        query(
            "UPDATE events SET status = $2, \
             completed = CASE WHEN $2 IN ('finished', 'failed') THEN $3 ELSE completed END WHERE id = $1",
        )
        .bind(id)
        .bind(status)
        .bind(Timestamp::now().to_string())
        .execute(self.h())
        .await?;
        Ok(())
    }

    pub async fn event_mark_read(&mut self, user_id: i64, event_id: i64) -> Result<()> {
        query("INSERT INTO event_reads (user_id, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(user_id)
            .bind(event_id)
            .execute(self.h())
            .await?;
        Ok(())
    }
}

impl Store {
    /// One page of the events the viewer may see, newest first unless the filter orders them.
    pub async fn events_page(
        &self,
        viewer: &EventViewer,
        since: Timestamp,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<Event>, u64)> {
        let offset = page.saturating_sub(1).saturating_mul(page_size);
        if filter.cond.is_none() && !viewer.restricted {
            let desc = filter.order == Order::Desc;
            let page = match filter.order_by.as_deref() {
                Some("seen") => self.events_by_seen(viewer, since, desc, offset, page_size).await?,
                Some("read") => self.events_by_read(viewer, since, desc, offset, page_size).await?,
                _ => None,
            };
            if let Some(page) = page {
                return Ok(page);
            }
        }
        // An event is seen when its id is at most the viewer's mark: a condition on `seen` is
        // also a range of ids, which the list's own index serves.
        let bounded;
        let filter = if filter.names("seen") {
            let upto = query("SELECT events_seen_upto FROM users WHERE id = $1")
                .bind(viewer.user_id)
                .fetch_optional(self.r())
                .await?
                .map(|r| r.i64("events_seen_upto"))
                .transpose()?
                .unwrap_or(0);
            bounded = filter.bound_by("seen", "id", upto);
            &bounded
        } else {
            filter
        };
        let walked = unread_only(filter);
        let filter = &read_set(filter, viewer.user_id);
        if !served_apart(filter, COLUMNS, CONDS, INDEXED) {
            let n = self.kept_count(viewer.account_id, "events").await?;
            if n > SCAN_BUDGET {
                return Err(unserved_noting(n, FILTERED, INDEXED, BY_MARKS));
            }
        }
        // Every event of the account the viewer may see: the kept count less the events past the
        // window (an index range of those alone); otherwise the matching events are counted.
        // The events not read are those less the reader's marks on them (an index range of the
        // marks).
        let whole = !viewer.restricted && filter.cond.is_none();
        // A filter of one value is led by its field (push_filter_led), for the whole list only: a
        // restricted viewer's events are also those of its grants.
        let led = if viewer.restricted { &[][..] } else { INDEXED };
        let count_of = |filter: &Filter| {
            let mut count = Sql::new("SELECT COUNT(*) FROM events e JOIN users e_viewer ON e_viewer.id = ");
            scope_as(&mut count, viewer, since, if marks_first(filter) { Reach::Marks } else { Reach::Index });
            push_filter_led(&mut count, self.backend(), COLUMNS, filter, led, "e.id DESC").map(|_| count)
        };
        let (total, aged) = if whole || (walked && !viewer.restricted) {
            let row = kept_and_aged(viewer, since).query().fetch_one(self.r()).await?;
            let aged = row.i64("aged")?;
            let marked = if walked {
                let read = Cond::Field { path: "read".into(), op: CmpOp::Eq, value: true.into() };
                let read = read_set(&Filter { cond: Some(read), ..Filter::default() }, viewer.user_id);
                count_of(&read)?.query().fetch_i64(self.r()).await?
            } else {
                0
            };
            (row.i64("kept")? - aged - marked, aged)
        } else {
            (count_of(filter)?.query().fetch_i64(self.r()).await?, 0)
        };

        // A deep page starts where the block counts (newest first, or by id) or the order
        // fences say, when every counted event is listed.
        let start = if whole && aged == 0 && offset >= LOCATE_FROM {
            self.deep_start("events", self.account_events(viewer), offset, COLUMNS, filter, "e.id DESC").await?
        } else {
            DeepStart::Skip
        };
        let start = match start {
            DeepStart::Skip if whole || walked => DeepStart::Led("e.account_id"),
            start => start,
        };
        if let DeepStart::Past = start {
            return Ok((Vec::new(), total.max(0) as u64));
        }
        let mut sql = Sql::default();
        start.push_with(&mut sql, page_size);
        sql.push(SELECT);
        let reach = match start {
            DeepStart::Led(_) => Reach::Led,
            _ if marks_first(filter) => Reach::Marks,
            _ => Reach::Index,
        };
        scope_as(&mut sql, viewer, since, reach);
        push_filter_led(&mut sql, self.backend(), COLUMNS, filter, led, "e.id DESC")?;
        start.push_page(&mut sql, COLUMNS, filter, "e.id DESC", offset, page_size)?;
        let rows = sql.query().fetch_all(self.r()).await?;
        let events = rows.iter().map(event).collect::<Result<Vec<_>>>()?;
        Ok((events, total.max(0) as u64))
    }

    /// One page of every event the viewer may see (not a restricted viewer) in the order of
    /// `seen` (`desc`: reversed), and how many there are; `None` when some of the account's
    /// events are older than the window (the pruner has not removed them yet), which the list's
    /// positions would then have to leave out.
    ///
    /// An event is seen when its id is at most the viewer's mark, and ties run by id in the
    /// order's direction: ascending, the events past the mark by id, then those up to it by id;
    /// descending, those up to the mark from the highest id down, then those past it. Each run is
    /// a range of the list in id order, whose positions are known from the mark's rank (the
    /// block counts before its block, and the few events of its block): the page reads at most
    /// two windows of the list in id order, each located by its block counts.
    async fn events_by_seen(
        &self,
        viewer: &EventViewer,
        since: Timestamp,
        desc: bool,
        offset: u64,
        page_size: u64,
    ) -> Result<Option<(Vec<Event>, u64)>> {
        let account = Val::I64(viewer.account_id);
        let mut count = kept_and_aged(viewer, since);
        count.push(", (SELECT events_seen_upto FROM users WHERE id = ").bind(Val::I64(viewer.user_id));
        let row = count.push(") AS upto").query().fetch_one(self.r()).await?;
        if row.i64("aged")? > 0 {
            return Ok(None);
        }
        let total = row.i64("kept")?.max(0) as u64;
        let upto = row.opt_i64("upto")?.unwrap_or(0).max(0);
        let (below, first) = self.rank_below("events", viewer.account_id, upto).await?;
        let mut own = Sql::new("SELECT COUNT(*) FROM events WHERE account_id = ");
        own.bind(account).push(" AND id >= ").bind(Val::I64(first)).push(" AND id <= ").bind(Val::I64(upto));
        let seen = ((below + own.query().fetch_i64(self.r()).await?).max(0) as u64).min(total);
        let unseen = total - seen;
        // The runs in the page's order: where each starts in the list in id order (ascending or
        // descending), and how many events it holds.
        let runs = if desc { [(unseen, seen), (0, unseen)] } else { [(seen, unseen), (0, seen)] };
        let by_id = Filter {
            order_by: Some("id".into()),
            order: if desc { Order::Desc } else { Order::Asc },
            ..Filter::default()
        };
        let rows = self.account_events(viewer);
        let mut events = Vec::new();
        for (run, skip, len) in page_of_runs(&runs.map(|(_, n)| n), offset, page_size) {
            let at = runs[run].0 + skip;
            let deep = if at >= LOCATE_FROM {
                self.deep_start("events", rows, at, COLUMNS, &by_id, "e.id DESC").await?
            } else {
                DeepStart::Led("e.account_id")
            };
            if let DeepStart::Past = deep {
                break;
            }
            let mut sql = Sql::default();
            deep.push_with(&mut sql, len);
            sql.push(SELECT);
            scope_as(&mut sql, viewer, since, if let DeepStart::Led(_) = deep { Reach::Led } else { Reach::Index });
            deep.push_page(&mut sql, COLUMNS, &by_id, "e.id DESC", at, len)?;
            for r in sql.query().fetch_all(self.r()).await? {
                events.push(event(&r)?);
            }
        }
        Ok(Some((events, total)))
    }

    /// One page of every event the viewer may see (not a restricted viewer) in the order of
    /// `read` (`desc`: reversed), and how many there are; `None` when some of the account's
    /// events are older than the window, as [`Store::events_by_seen`].
    ///
    /// Ties run by id in the order's direction: ascending, the events not read by id, then those
    /// read by id; descending, those read from the highest id down, then those not read. The
    /// events read are the reader's marks (`event_reads`, counted and blocked per user by event
    /// id, migration 81): a deep page of them is located by the marks' block counts and read
    /// from the marks, then the events by their primary key. The events not read are the
    /// account's less the marks: a deep page of them is located by the events' block counts less
    /// the marks', block by block ([`Store::locate_less`]), and read walking the account's events
    /// from there past the marks.
    async fn events_by_read(
        &self,
        viewer: &EventViewer,
        since: Timestamp,
        desc: bool,
        offset: u64,
        page_size: u64,
    ) -> Result<Option<(Vec<Event>, u64)>> {
        let user = Val::I64(viewer.user_id);
        let mut count = kept_and_aged(viewer, since);
        count.push(", (");
        push_kept_count(&mut count, viewer.user_id, "event_reads");
        let row = count.push(") AS marks").query().fetch_one(self.r()).await?;
        if row.i64("aged")? > 0 {
            return Ok(None);
        }
        let total = row.i64("kept")?.max(0) as u64;
        let read = (row.i64("marks")?.max(0) as u64).min(total);
        // The runs in the page's order (of the events read or not), and how many each holds.
        let runs = if desc { [(true, read), (false, total - read)] } else { [(false, total - read), (true, read)] };
        let dir = if desc { "DESC" } else { "ASC" };
        let mut events = Vec::new();
        for (run, skip, len) in page_of_runs(&runs.map(|(_, n)| n), offset, page_size) {
            let (marked, len) = (runs[run].0, Val::I64(len.min(i64::MAX as u64) as i64));
            // Where the run's page starts: a block of event ids and the rows of the run before it
            // there, or the run's first event.
            let start = match skip {
                s if s < LOCATE_FROM => None,
                s if marked => Some(self.locate("event_reads", viewer.user_id, s, desc).await?),
                s => Some(
                    self.locate_less(("events", viewer.account_id), ("event_reads", viewer.user_id), s, desc).await?,
                ),
            };
            let (start, skip) = match start {
                None => (None, skip as i64),
                Some(None) => break,
                Some(Some(at)) => (Some(at), at.skip),
            };
            let mut sql = Sql::new(SELECT);
            if marked {
                scope_as(&mut sql, viewer, since, Reach::Marks);
                sql.push(" AND e.id IN (SELECT r.event_id FROM event_reads r WHERE r.user_id = ").bind(user.clone());
                if let Some(at) = start {
                    at.push_start(&mut sql, "r.event_id", desc);
                }
                sql.push(&format!(" ORDER BY r.event_id {dir} LIMIT ")).bind(len).push(" OFFSET ").bind(Val::I64(skip));
                sql.push(&format!(") ORDER BY e.id {dir}"));
            } else {
                // From a block, the account's equality and the block's first id bound one range
                // of the index on (account, id); from the run's start, the account as a range
                // leads the order as [`DeepStart::Led`] pages do.
                scope_as(&mut sql, viewer, since, if start.is_some() { Reach::Index } else { Reach::Led });
                if let Some(at) = start {
                    at.push_start(&mut sql, "e.id", desc);
                }
                sql.push(" AND NOT EXISTS (SELECT 1 FROM event_reads r WHERE r.user_id = ").bind(user.clone());
                let lead = if start.is_some() { String::new() } else { format!("e.account_id {dir}, ") };
                sql.push(&format!(" AND r.event_id = e.id) ORDER BY {lead}e.id {dir} LIMIT "));
                sql.bind(len).push(" OFFSET ").bind(Val::I64(skip));
            }
            for r in sql.query().fetch_all(self.r()).await? {
                events.push(event(&r)?);
            }
        }
        Ok(Some((events, total)))
    }

    /// Every event of the viewer's account, for reading a deep page's keys ([`Rows`]).
    fn account_events(&self, viewer: &EventViewer) -> Rows<'static> {
        Rows {
            from: "FROM events e",
            scope: "e.account_id",
            and: "",
            scope_id: viewer.account_id,
            backend: self.backend(),
        }
    }

    /// One event, if the viewer may see it.
    pub async fn event_get(&self, viewer: &EventViewer, since: Timestamp, id: i64) -> Result<Option<Event>> {
        let mut sql = Sql::new(SELECT);
        scope(&mut sql, viewer, since);
        sql.push(" AND e.id = ").bind(Val::I64(id));
        let row = sql.query().fetch_optional(self.r()).await?;
        row.as_ref().map(event).transpose()
    }
}

#[cfg(test)]
mod tests {
    use nubis_model::account::UserType;
    use nubis_model::event::{EventEntity, NewEvent};

    use super::*;
    use crate::accounts::NewAccount;
    use crate::users::NewUser;

    #[test]
    fn a_page_takes_the_end_of_one_run_and_the_start_of_the_next() {
        assert_eq!(page_of_runs(&[5, 3], 0, 4), vec![(0, 0, 4)]);
        assert_eq!(page_of_runs(&[5, 3], 4, 4), vec![(0, 4, 1), (1, 0, 3)]);
        assert_eq!(page_of_runs(&[5, 3], 6, 4), vec![(1, 1, 2)]);
        assert_eq!(page_of_runs(&[5, 3], 8, 4), vec![]);
        assert_eq!(page_of_runs(&[0, 3], 0, 2), vec![(1, 0, 2)]);
        assert_eq!(page_of_runs(&[2, 0, 2], 1, 10), vec![(0, 1, 1), (2, 0, 2)]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn events_older_than_the_window_are_not_listed() {
        let store = crate::Store::open("sqlite::memory:", &Default::default()).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        let now = Timestamp::now();
        let a = tx
            .account_insert(&NewAccount { euuid: "E1", parent_id: None, company: "c", email: "a@b.c", created: now })
            .await
            .unwrap();
        let u = tx
            .user_insert(&NewUser {
                account_id: a.id,
                username: "u1",
                email: "a@b.c",
                restricted: false,
                user_type: UserType::Default,
                is_owner: true,
                created: now,
            })
            .await
            .unwrap();
        let ev = |action| NewEvent {
            account_id: a.id,
            action,
            entity: Some(EventEntity::new("user", u.id, "u1", "/v4/account/users/u1")),
            secondary: None,
            username: None,
            status: "finished",
            message: None,
            visible_with: None,
            subject_user_id: None,
        };
        let old = tx.event_insert(&ev("user_update")).await.unwrap();
        tx.event_insert(&ev("user_create")).await.unwrap();
        query("UPDATE events SET created = $1 WHERE id = $2")
            .bind(now.minus_days(91))
            .bind(old)
            .execute(tx.h())
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let viewer = EventViewer { account_id: a.id, user_id: u.id, restricted: false };
        let (events, total) = store.events_page(&viewer, now.minus_days(90), &Filter::default(), 1, 100).await.unwrap();
        assert_eq!(total, 1);
        assert_eq!(events[0].action, "user_create");
        assert!(store.event_get(&viewer, now.minus_days(90), old).await.unwrap().is_none());
        assert!(store.event_get(&viewer, now.minus_days(100), old).await.unwrap().is_some());
        store.close().await;
    }
}
