//! nubis storage: SQLite (rusqlite) and PostgreSQL (sqlx), one set of queries for both.
//!
//! - Writes go through [`Tx`], a write transaction: on SQLite the single writer connection with
//!   `BEGIN IMMEDIATE` (SQLite has one writer anyway, so writes queue in-process instead of
//!   failing); on PostgreSQL `SERIALIZABLE` transactions, so every multi-row invariant holds under
//!   concurrency exactly as on SQLite, and a serialization failure surfaces as `Error::Retry` for
//!   the caller's [`retry`] loop.
//! - Uniqueness is always a database constraint; a violation surfaces as `Error::Unique`.
//! - Reads answer one record by key and one page by SQL. A few hot keyed reads (credentials,
//!   grants, one VPC) and pages go through a read cache; a commit, this process's or (through
//!   change notices, `notices.rs`) another replica's, invalidates what reads the tables it changed.
//! - SQL lives only in this crate: one file per resource, methods named resource first, then verb.
//!   This file opens the store; `migrations.rs`, `notices.rs` and `tx.rs` hold the rest of its
//!   machinery.

pub mod accounts;
pub mod backup;
pub mod billing;
pub mod boot_data;
mod cache;
mod children;
pub mod configs;
pub mod controls;
pub(crate) mod db;
pub mod disks;
pub mod events;
pub mod fences;
pub mod files;
pub mod firewall_rulesets;
pub mod firewall_versions;
pub mod firewalls;
pub mod grants;
pub mod instance_backups;
pub mod instances;
pub mod interfaces;
pub mod ip_list;
pub mod ips;
pub mod leases;
pub mod linode_interfaces;
pub mod logins;
pub mod maintenance_settings;
mod migrations;
pub mod nodebalancers;
mod notices;
pub mod oauth;
pub mod outbox;
mod pages;
pub mod passwords;
pub mod ranges;
mod rows;
pub mod service_transfers;
mod sql;
pub mod sshkeys;
pub mod tokens;
mod tx;
pub mod users;
pub mod vpcs;

use std::sync::Arc;
use std::time::Duration;

use nubis_model::{Error, Result};

pub use cache::Key as CacheKey;
use cache::{Cache, Mode};
use db::{Handle, lite::Lite, query};
pub use tx::{Committed, Turn, Tx, retry};

/// Which database is behind the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// How the store opens its database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// SQLite `synchronous=FULL` (durable across power loss) instead of `NORMAL` (durable across
    /// process crashes).
    pub sqlite_sync_full: bool,
    /// Connections used for reads.
    pub read_connections: u32,
    /// PostgreSQL: how long a request waits for a connection before it is answered 503 (while
    /// the database is unreachable, every request waits this long at most).
    pub acquire_timeout: Duration,
    /// Pages of lists kept in the read cache; 0 keeps none.
    pub cached_pages: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            sqlite_sync_full: false,
            read_connections: 4,
            acquire_timeout: Duration::from_secs(3),
            cached_pages: cache::MAX_PAGES,
        }
    }
}

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

enum Engine {
    Lite(Box<Lite>),
    /// The pool every statement runs on, planned once for unknown values, and the pool a
    /// filter's statements run on, planned for their values (docs/decisions.md, "Planned once,
    /// or for the filter's values").
    Pg(sqlx::PgPool, sqlx::PgPool),
}

struct Inner {
    engine: Engine,
    cache: Cache,
    /// Wakes the background tasks of the store when it closes or goes away.
    closing: Arc<tokio::sync::Notify>,
    /// Set by [`Store::close`]: the database is unavailable for good, not for a moment.
    closed: std::sync::atomic::AtomicBool,
    /// The orders that have fences (`order_fence_kinds`, written by the migrations), with
    /// whether their keys are integers; read once after migrating, on PostgreSQL.
    fenced: std::sync::OnceLock<std::collections::HashMap<String, bool>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closing.notify_waiters();
    }
}

impl Store {
    /// Opens (creating if needed) the database at `url` and applies the migrations.
    ///
    /// `url` is `sqlite://PATH`, `sqlite::memory:` (a throwaway database in a private temporary
    /// directory, removed on close) or `postgres://...`.
    pub async fn open(url: &str, opts: &StoreOptions) -> Result<Store> {
        let store = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // Every kept statement is planned once, for unknown values: a plan made for each
            // run's values cost more than the statement (0.8 ms of planning for 0.4 ms of a
            // sign-in page), and PostgreSQL kept making one for every page whose generic plan it
            // estimated dearer. The statements are written so that their plan does not depend on
            // the values. Those whose best plan does (a filter's) run on a second, smaller pool
            // left to PostgreSQL's own choice, which plans them for their values
            // (`Query::planned_for_its_values`; docs/decisions.md, "Planned once, or for the
            // filter's values").
            //
            // Neither pool starts parallel workers. A statement of a request reads a page, a
            // count or a record; a worker costs a process and tens of milliseconds to start, and
            // the generic plan of a count over a range whose size it cannot know (the events
            // older than the window, estimated at a third of the account) was parallel: 33 to
            // 96 ms per page of events for a scan that found nothing in 0.05 ms.
            let connect = url
                .parse::<sqlx::postgres::PgConnectOptions>()
                .map_err(db::pg::map_err)?
                .options([("max_parallel_workers_per_gather", "0")]);
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(16)
                .min_connections(1)
                .test_before_acquire(false)
                .acquire_timeout(opts.acquire_timeout)
                .connect_with(connect.clone().options([("plan_cache_mode", "force_generic_plan")]))
                .await
                .map_err(db::pg::map_err)?;
            let by_values = sqlx::postgres::PgPoolOptions::new()
                .max_connections(8)
                .min_connections(0)
                .test_before_acquire(false)
                .acquire_timeout(opts.acquire_timeout)
                .connect_lazy_with(connect);
            // Several API replicas may write to one PostgreSQL: the cache keeps only what the
            // change notices cover, and only while this replica listens to them.
            Store {
                inner: Arc::new(Inner {
                    engine: Engine::Pg(pool, by_values),
                    cache: Cache::new(Mode::Shared, opts.cached_pages),
                    closing: Default::default(),
                    closed: Default::default(),
                    fenced: Default::default(),
                }),
            }
        } else if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = if rest == ":memory:" {
                None
            } else {
                let p = rest.trim_start_matches("//");
                let p = p.split('?').next().unwrap_or(p);
                Some(std::path::PathBuf::from(p))
            };
            let lite = Lite::open(path.as_deref(), opts.sqlite_sync_full, opts.read_connections as usize)?;
            Store {
                inner: Arc::new(Inner {
                    engine: Engine::Lite(Box::new(lite)),
                    cache: Cache::new(Mode::Local, opts.cached_pages),
                    closing: Default::default(),
                    closed: Default::default(),
                    fenced: Default::default(),
                }),
            }
        } else {
            return Err(Error::internal(format!("unsupported database URL scheme in '{}'", redact(url))));
        };
        store.migrate().await?;
        if store.backend() == Backend::Postgres {
            let rows = db::query("SELECT kind, is_int FROM order_fence_kinds").fetch_all(store.r()).await?;
            use db::RowExt;
            let fenced = rows.iter().map(|r| Ok((r.str("kind")?, r.bool("is_int")?))).collect::<Result<_>>()?;
            let _ = store.inner.fenced.set(fenced);
        }
        store.watch_external_writes()?;
        store.listen_to_change_notices();
        Ok(store)
    }

    /// Whether [`Store::close`] was called (work that waits for an unavailable database stops).
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether the order `kind` (`<list kind>.<field>`) has fences whose page the page's own
    /// statement locates (PostgreSQL; `None` on SQLite), and whether its keys are integers.
    pub(crate) fn fenced_order(&self, kind: &str) -> Option<bool> {
        self.inner.fenced.get()?.get(kind).copied()
    }

    pub fn backend(&self) -> Backend {
        match self.inner.engine {
            Engine::Lite(_) => Backend::Sqlite,
            Engine::Pg(..) => Backend::Postgres,
        }
    }

    /// Refreshes the query planner's statistics of the tables whose size changed much since they
    /// were last sampled (SQLite: `PRAGMA optimize`, each index sampled at most 1,000 rows, under
    /// the write permit, outside any transaction). Without them SQLite cannot tell that an
    /// account's 100,000 rows are many and a device's 3 firewalls few, and may walk the first to
    /// find the second. PostgreSQL's autovacuum keeps its statistics by itself.
    pub async fn refresh_statistics(&self) -> Result<()> {
        if let Engine::Lite(l) = &self.inner.engine {
            let _permit = l.permit().await?;
            l.write(|c| {
                c.execute_batch("PRAGMA analysis_limit = 1000; PRAGMA optimize = 0x10002;").map_err(db::lite::map_err)
            })?;
        }
        Ok(())
    }

    /// Closes every connection cleanly (checkpointing the SQLite WAL).
    pub async fn close(&self) {
        self.inner.closed.store(true, std::sync::atomic::Ordering::Release);
        self.inner.closing.notify_waiters();
        match &self.inner.engine {
            Engine::Lite(l) => l.close(),
            Engine::Pg(p, v) => {
                p.close().await;
                v.close().await;
            }
        }
    }

    /// Where reads run.
    pub(crate) fn r(&self) -> Handle<'_> {
        match &self.inner.engine {
            Engine::Lite(l) => Handle::LiteRead(l),
            Engine::Pg(p, v) => Handle::PgPool(p, v),
        }
    }

    /// The value of `key`, read by `load` from `tables` (declared where the SQL is; checked in
    /// debug builds, see `cache::reads`), kept until one of them is written.
    pub(crate) async fn cached<T, F, Fut>(&self, key: CacheKey, tables: &[&str], load: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.inner.cache.get_or_load(key, tables, load).await
    }

    /// One page of a list (`list` names it, `query` is the filter and the page asked for), read
    /// from `tables` (the grants too for a restricted `user`), kept in the read cache until one
    /// of them is written.
    pub async fn cached_page<T, F, Fut>(
        &self,
        list: &'static str,
        tables: &[&str],
        account: i64,
        user: Option<i64>,
        query: String,
        load: F,
    ) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut tables = tables.to_vec();
        if user.is_some() {
            tables.push("grants");
        }
        self.inner.cache.get_or_load(CacheKey::Page { list, account, user, query }, &tables, load).await
    }

    /// Answers whether the database is reachable (for health checks).
    pub async fn ping(&self) -> bool {
        let probe = query("SELECT 1").fetch_i64(self.r());
        matches!(tokio::time::timeout(Duration::from_secs(3), probe).await, Ok(Ok(_)))
    }
}

pub(crate) fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{}-{}", std::process::id(), t, N.fetch_add(1, Ordering::Relaxed))
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..s + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(redact("postgres://u:secret@127.0.0.1:5432/db"), "postgres://u:***@127.0.0.1:5432/db");
        assert_eq!(redact("sqlite://x.db"), "sqlite://x.db");
    }
}
