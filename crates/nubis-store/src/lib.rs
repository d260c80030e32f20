//! nubis storage: SQLite (rusqlite) and PostgreSQL (sqlx), one set of queries for both.
//!
//! - Writes go through [`Tx`], a write transaction: on SQLite the single writer connection with
//!   `BEGIN IMMEDIATE` (SQLite has one writer anyway, so writes queue in-process instead of
//!   failing); on PostgreSQL `SERIALIZABLE` transactions, so every multi-row invariant holds under
//!   concurrency exactly as on SQLite, and a serialization failure surfaces as `Error::Retry` for
//!   the caller's [`retry`] loop.
//! - Uniqueness is always a database constraint; a violation surfaces as `Error::Unique`.
//! - Reads answer one record by key and one page by SQL. A few hot keyed reads (credentials,
//!   grants, one VPC) go through a [`cache`] when this process is the only writer (SQLite); a
//!   commit invalidates what reads the tables it changed.
//! - SQL lives only in this crate: one file per resource, methods named resource first, then verb.

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
pub mod files;
pub mod firewall_versions;
pub mod firewalls;
pub mod grants;
pub mod instances;
pub mod interfaces;
pub mod ip_list;
pub mod ips;
pub mod leases;
pub mod linode_interfaces;
pub mod logins;
pub mod maintenance_settings;
pub mod nodebalancers;
pub mod oauth;
pub mod outbox;
pub mod passwords;
pub mod ranges;
mod rows;
pub mod service_transfers;
mod sql;
pub mod sshkeys;
pub mod tokens;
pub mod users;
pub mod vpcs;

use std::sync::Arc;
use std::time::Duration;

use nubis_model::{Error, Result};

pub use billing::AccountStanding;
pub use cache::Key as CacheKey;
use cache::{Cache, Mode};
use db::{Handle, lite::Lite, query};

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
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { sqlite_sync_full: false, read_connections: 4, acquire_timeout: Duration::from_secs(3) }
    }
}

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

enum Engine {
    Lite(Box<Lite>),
    Pg(sqlx::PgPool),
}

struct Inner {
    engine: Engine,
    cache: Cache,
    /// Wakes the background tasks of the store when it closes or goes away.
    closing: Arc<tokio::sync::Notify>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closing.notify_waiters();
    }
}

/// One migration: its version, its name, and its DDL for each engine (files
/// `migrations/{sqlite,postgres}/NNNN_<name>.sql`).
macro_rules! migration {
    ($v:expr, $name:literal, $file:literal) => {
        (
            $v,
            $name,
            include_str!(concat!("../migrations/sqlite/", $file)),
            include_str!(concat!("../migrations/postgres/", $file)),
        )
    };
}

/// Migrations, in order: (version, name, SQLite DDL, PostgreSQL DDL).
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    migration!(1, "foundation", "0001_foundation.sql"),
    migration!(2, "vpcs", "0002_vpcs.sql"),
    migration!(3, "instances", "0003_instances.sql"),
    migration!(4, "nodebalancers", "0004_nodebalancers.sql"),
    migration!(5, "firewalls", "0005_firewalls.sql"),
    migration!(6, "account_transfer", "0006_account_transfer.sql"),
    migration!(7, "billing", "0007_billing.sql"),
    migration!(8, "signin", "0008_signin.sql"),
    migration!(9, "test_controls", "0009_test_controls.sql"),
    migration!(10, "read_path", "0010_read_path.sql"),
    migration!(11, "transfers", "0011_transfers.sql"),
    migration!(12, "moved_rows", "0012_moved_rows.sql"),
    migration!(15, "replicas", "0015_replicas.sql"),
    migration!(16, "keyed_reads", "0016_keyed_reads.sql"),
    migration!(17, "change_notices", "0017_change_notices.sql"),
    migration!(18, "signin_hardening", "0018_signin_hardening.sql"),
    migration!(19, "payment_settlement", "0019_payment_settlement.sql"),
    migration!(20, "instance_boot_data", "0020_instance_boot_data.sql"),
    migration!(22, "instance_profiles", "0022_instance_profiles.sql"),
    migration!(23, "ssh_keys", "0023_ssh_keys.sql"),
    migration!(24, "linode_interfaces", "0024_linode_interfaces.sql"),
    migration!(28, "event_times", "0028_event_times.sql"),
    migration!(29, "firewall_versions", "0029_firewall_versions.sql"),
    migration!(30, "maintenance_policy", "0030_maintenance_policy.sql"),
];

impl Store {
    /// Opens (creating if needed) the database at `url` and applies the migrations.
    ///
    /// `url` is `sqlite://PATH`, `sqlite::memory:` (a throwaway database in a private temporary
    /// directory, removed on close) or `postgres://...`.
    pub async fn open(url: &str, opts: &StoreOptions) -> Result<Store> {
        let store = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(16)
                .min_connections(1)
                .test_before_acquire(false)
                .acquire_timeout(opts.acquire_timeout)
                .connect(url)
                .await
                .map_err(db::pg::map_err)?;
            // Several API replicas may write to one PostgreSQL: the cache keeps only what the
            // change notices cover, and only while this replica listens to them.
            Store {
                inner: Arc::new(Inner {
                    engine: Engine::Pg(pool),
                    cache: Cache::new(Mode::Shared),
                    closing: Default::default(),
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
                    cache: Cache::new(Mode::Local),
                    closing: Default::default(),
                }),
            }
        } else {
            return Err(Error::internal(format!("unsupported database URL scheme in '{}'", redact(url))));
        };
        store.migrate().await?;
        store.watch_external_writes()?;
        store.listen_to_change_notices();
        Ok(store)
    }

    async fn migrate(&self) -> Result<()> {
        retry(|| async {
            let mut tx = self.begin().await?;
            if self.backend() == Backend::Postgres {
                // One replica migrates at a time (waiting as long as another one's migration takes).
                tx.execute_batch("SELECT pg_advisory_xact_lock(7283541)").await?;
            }
            query("CREATE TABLE IF NOT EXISTS nubis_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)")
                .execute(tx.h())
                .await?;
            let done: Vec<i64> = query("SELECT version FROM nubis_migrations")
                .fetch_all(tx.h())
                .await?
                .iter()
                .map(|r| rows::RowExt::i64(r, "version"))
                .collect::<Result<_>>()?;
            for (version, name, lite_sql, pg_sql) in MIGRATIONS {
                if done.contains(version) {
                    continue;
                }
                tx.execute_batch(if self.backend() == Backend::Sqlite { lite_sql } else { pg_sql }).await?;
                query("INSERT INTO nubis_migrations (version, name, applied) VALUES ($1, $2, $3)")
                    .bind(*version)
                    .bind(*name)
                    .bind(nubis_model::Timestamp::now())
                    .execute(tx.h())
                    .await?;
            }
            tx.commit().await
        })
        .await
        .map_err(|e| Error::Internal(format!("migration failed: {e}")))
    }

    /// On SQLite, another process (`nubis admin`) may write the same file. A dedicated
    /// connection's `PRAGMA data_version` changes whenever any other connection commits; when it
    /// does, the read cache is invalidated.
    fn watch_external_writes(&self) -> Result<()> {
        let Engine::Lite(lite) = &self.inner.engine else { return Ok(()) };
        let conn = lite.watcher()?;
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut last: Option<i64> = None;
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let Some(inner) = weak.upgrade() else { return };
                let Ok(v) = conn.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)) else { return };
                if last.is_some_and(|l| l != v) {
                    inner.cache.bump_all();
                }
                last = Some(v);
            }
        });
        Ok(())
    }

    /// On PostgreSQL, keeps a connection listening to the change notices of every replica's
    /// writes (`nubis_changes`, sent by triggers at commit) and invalidates what each one
    /// touched. Every second a probe notice is sent through the pool; when none has come back for
    /// [`NOTICES_LOST_AFTER`] (a silent network cut, a database outage) or the connection drops,
    /// the cache serves nothing until it listens again, and then starts empty.
    fn listen_to_change_notices(&self) {
        let Engine::Pg(pool) = &self.inner.engine else { return };
        let pool = pool.clone();
        let weak = Arc::downgrade(&self.inner);
        let closing = self.inner.closing.clone();
        tokio::spawn(async move {
            loop {
                let listener = tokio::select! {
                    _ = closing.notified() => return,
                    l = change_listener(&pool) => l,
                };
                let listener = match listener {
                    Ok(l) => l,
                    Err(e) => {
                        if pool.is_closed() || weak.strong_count() == 0 {
                            return;
                        }
                        tracing::warn!(error = %e, "change notices not heard: the read cache is off until they are");
                        tokio::select! {
                            _ = closing.notified() => return,
                            _ = tokio::time::sleep(Duration::from_secs(2)) => continue,
                        }
                    }
                };
                // The listener is read by its own task (its reads are never cancelled half-way);
                // notices come over a channel, which closes when the connection is lost.
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
                let reader = tokio::spawn(async move {
                    let mut listener = listener;
                    while let Ok(Some(n)) = listener.try_recv().await {
                        if tx.send(n.payload().to_string()).is_err() {
                            return;
                        }
                    }
                });
                match weak.upgrade() {
                    Some(inner) => inner.cache.set_synced(true),
                    None => return reader.abort(),
                }
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                let mut heard = std::time::Instant::now();
                let mut probe = String::new();
                loop {
                    tokio::select! {
                        _ = closing.notified() => return reader.abort(),
                        notice = rx.recv() => {
                            let Some(inner) = weak.upgrade() else { return reader.abort() };
                            match notice {
                                Some(p) if p == probe => heard = std::time::Instant::now(),
                                Some(p) if p.starts_with("probe ") => {}
                                Some(table) => inner.cache.bump(cache::bit(&table)),
                                None => break,
                            }
                        }
                        _ = tick.tick() => {
                            if heard.elapsed() > NOTICES_LOST_AFTER {
                                break;
                            }
                            probe = format!("probe {}", unique_suffix());
                            let (pool, p) = (pool.clone(), probe.clone());
                            tokio::spawn(async move { send_probe(&pool, &p).await });
                        }
                    }
                }
                reader.abort();
                match weak.upgrade() {
                    Some(inner) => inner.cache.set_synced(false),
                    None => return,
                }
            }
        });
    }

    pub fn backend(&self) -> Backend {
        match self.inner.engine {
            Engine::Lite(_) => Backend::Sqlite,
            Engine::Pg(_) => Backend::Postgres,
        }
    }

    /// Starts a write transaction: on SQLite it holds the single write permit; on PostgreSQL it
    /// is SERIALIZABLE.
    pub async fn begin(&self) -> Result<Tx<'_>> {
        let inner = match &self.inner.engine {
            Engine::Lite(l) => TxInner::Lite(Some(l.begin().await?)),
            Engine::Pg(p) => {
                TxInner::Pg(Some(db::pg::bounded(p.begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE")).await?))
            }
        };
        Ok(Tx { store: self, inner, mail_queued: false })
    }

    /// Closes every connection cleanly (checkpointing the SQLite WAL).
    pub async fn close(&self) {
        self.inner.closing.notify_waiters();
        match &self.inner.engine {
            Engine::Lite(l) => l.close(),
            Engine::Pg(p) => p.close().await,
        }
    }

    /// Where reads run.
    pub(crate) fn r(&self) -> Handle<'_> {
        match &self.inner.engine {
            Engine::Lite(l) => Handle::LiteRead(l),
            Engine::Pg(p) => Handle::PgPool(p),
        }
    }

    pub(crate) async fn cached<T, F, Fut>(&self, key: CacheKey, load: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.inner.cache.get_or_load(key, load).await
    }

    /// One page of a list (`list` names it, `query` is the filter and the page asked for), kept
    /// in the read cache until a table its records are read from is written.
    pub async fn cached_page<T, F, Fut>(
        &self,
        list: &'static str,
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
        self.inner.cache.get_or_load(CacheKey::Page { list, account, user, query }, load).await
    }

    /// Answers whether the database is reachable (for health checks).
    pub async fn ping(&self) -> bool {
        let probe = query("SELECT 1").fetch_i64(self.r());
        matches!(tokio::time::timeout(Duration::from_secs(3), probe).await, Ok(Ok(_)))
    }
}

enum TxInner {
    Lite(Option<tokio::sync::OwnedSemaphorePermit>),
    Pg(Option<sqlx::Transaction<'static, sqlx::Postgres>>),
}

/// A write transaction. Dropping it without [`Tx::commit`] rolls it back.
pub struct Tx<'s> {
    store: &'s Store,
    inner: TxInner,
    /// A message was queued in the outbox (the mailer is woken after the commit).
    mail_queued: bool,
}

/// What a committed write transaction changed, for what has to follow the commit.
#[derive(Debug, Clone, Copy)]
pub struct Committed {
    touched: cache::Touched,
    mail_queued: bool,
}

impl Committed {
    /// Whether the transaction changed any of these tables (when it cannot be known which, it
    /// answers yes).
    pub fn wrote_any(&self, tables: &[&str]) -> bool {
        tables.iter().any(|t| self.touched & cache::bit(t) != 0)
    }

    /// Whether the transaction queued a message in the outbox.
    pub fn mail_queued(&self) -> bool {
        self.mail_queued
    }
}

impl Tx<'_> {
    pub async fn commit(self) -> Result<()> {
        self.commit_changes().await.map(drop)
    }

    /// Commits, and says what the transaction changed.
    pub async fn commit_changes(mut self) -> Result<Committed> {
        let mut touched = 0;
        let r = match (&mut self.inner, &self.store.inner.engine) {
            (TxInner::Lite(permit), Engine::Lite(l)) => {
                let r = l.commit();
                touched = l.take_touched();
                permit.take();
                r
            }
            (TxInner::Pg(tx), _) => match tx.take() {
                Some(mut tx) => {
                    // The tables with change notices this transaction wrote (the other replicas
                    // hear of them at commit): this replica's cache forgets them before answering.
                    let names = query("SELECT COALESCE(current_setting('nubis.touched', true), '')")
                        .fetch_one(Handle::PgConn(&mut tx))
                        .await
                        .and_then(|r| r.first().cloned());
                    touched = match names {
                        Ok(db::Val::Str(names)) => names.split_whitespace().fold(0, |t, n| t | cache::bit(n)),
                        _ => cache::ALL,
                    };
                    db::pg::bounded(tx.commit()).await
                }
                None => Err(Error::internal("transaction already finished")),
            },
            _ => Err(Error::internal("transaction and engine differ")),
        };
        // Invalidate after the commit (a concurrent reader may have cached pre-commit data) and
        // also after a failed commit (its outcome is unknown).
        self.store.inner.cache.bump(touched);
        r.map(|()| Committed { touched, mail_queued: self.mail_queued })
    }

    pub fn backend(&self) -> Backend {
        self.store.backend()
    }

    /// Where this transaction's statements run.
    pub(crate) fn h(&mut self) -> Handle<'_> {
        match (&mut self.inner, &self.store.inner.engine) {
            (TxInner::Pg(Some(tx)), _) => Handle::PgConn(&mut *tx),
            (_, Engine::Lite(l)) => Handle::LiteWrite(l),
            (_, Engine::Pg(p)) => Handle::PgPool(p),
        }
    }

    /// Runs several statements at once (migrations).
    pub(crate) async fn execute_batch(&mut self, sql: &str) -> Result<()> {
        match (&mut self.inner, &self.store.inner.engine) {
            (TxInner::Pg(Some(tx)), _) => {
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
                    .execute(&mut **tx)
                    .await
                    .map_err(db::pg::map_err)?;
                Ok(())
            }
            (_, Engine::Lite(l)) => l.write(|c| c.execute_batch(sql).map_err(db::lite::map_err)),
            _ => Err(Error::internal("transaction finished")),
        }
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if let (TxInner::Lite(Some(_)), Engine::Lite(l)) = (&self.inner, &self.store.inner.engine) {
            l.rollback();
            // Rolled back: nothing changed.
            l.take_touched();
        }
    }
}

/// How long the change notices may stay silent (no probe back) before the cache stops serving.
const NOTICES_LOST_AFTER: Duration = Duration::from_secs(3);

/// Sends a probe notice (`probe ...`, which invalidates nothing) through the pool.
async fn send_probe(pool: &sqlx::PgPool, probe: &str) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify('nubis_changes', $1)").bind(probe).execute(pool).await.map(|_| ())
}

/// A connection listening to `nubis_changes`, once a notice sent through the pool has come back
/// on it (a pooler in transaction mode, for one, accepts LISTEN and never delivers).
async fn change_listener(pool: &sqlx::PgPool) -> std::result::Result<sqlx::postgres::PgListener, sqlx::Error> {
    let mut l = sqlx::postgres::PgListener::connect_with(pool).await?;
    l.listen("nubis_changes").await?;
    let probe = format!("probe {}", unique_suffix());
    send_probe(pool, &probe).await?;
    loop {
        match tokio::time::timeout(Duration::from_secs(2), l.try_recv()).await {
            Ok(Ok(Some(n))) if n.payload() == probe => return Ok(l),
            Ok(Ok(Some(_))) => continue,
            Ok(Err(e)) => return Err(e),
            Ok(Ok(None)) | Err(_) => return Err(sqlx::Error::Protocol("change notices are not delivered".into())),
        }
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

/// Runs `op` again while it fails with `Error::Retry` (serialization failures under concurrent
/// writes on PostgreSQL), with a short growing pause, up to a bound.
pub async fn retry<T, F, Fut>(op: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut attempt = 0u32;
    loop {
        match op().await {
            Err(Error::Retry) if attempt < 30 => {
                attempt += 1;
                let jitter = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| u64::from(d.subsec_nanos()) % 5)
                    .unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(u64::from(attempt.min(10)) * 2 + jitter)).await;
            }
            Err(Error::Retry) => return Err(Error::Unavailable("too much contention, try again".into())),
            other => return other,
        }
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
