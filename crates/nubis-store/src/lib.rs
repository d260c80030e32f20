//! nubis storage: SQLite and PostgreSQL through sqlx's `Any` driver, one set of queries for both.
//!
//! - Writes go through [`Tx`], a write transaction: on SQLite a single writer connection with
//!   `BEGIN IMMEDIATE` (SQLite has one writer anyway, so writes queue instead of failing); on
//!   PostgreSQL `SERIALIZABLE` transactions, so every multi-row invariant holds under concurrency
//!   exactly as on SQLite, and a serialization failure surfaces as `Error::Retry` for the caller's
//!   retry loop.
//! - Uniqueness is always a database constraint; a violation surfaces as `Error::Unique`.
//! - Reads of small per-account collections go through a generation-checked [`cache`] when this
//!   process is the only writer (SQLite); every commit invalidates it.
//! - SQL lives only in this crate: one file per resource, methods named resource first, then verb.

pub mod accounts;
mod cache;
pub mod events;
pub mod grants;
pub mod instances;
pub mod interfaces;
pub mod ips;
pub mod outbox;
pub mod ranges;
mod rows;
mod sql;
pub mod tokens;
pub mod users;
pub mod vpcs;

use std::sync::Arc;
use std::time::Duration;

use nubis_model::{Error, Result};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{Any, AnyPool, SqlSafeStr};

use cache::Cache;
pub use cache::Key as CacheKey;

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
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { sqlite_sync_full: false, read_connections: 4 }
    }
}

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    read: AnyPool,
    write: AnyPool,
    cache: Cache,
}

const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "foundation", include_str!("../migrations/sqlite/0001_foundation.sql")),
    (2, "vpcs", include_str!("../migrations/sqlite/0002_vpcs.sql")),
    (3, "instances", include_str!("../migrations/sqlite/0003_instances.sql")),
];
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "foundation", include_str!("../migrations/postgres/0001_foundation.sql")),
    (2, "vpcs", include_str!("../migrations/postgres/0002_vpcs.sql")),
    (3, "instances", include_str!("../migrations/postgres/0003_instances.sql")),
];

impl Store {
    /// Opens (creating if needed) the database at `url` and applies the migrations.
    ///
    /// `url` is `sqlite://PATH`, `sqlite::memory:` or `postgres://...`.
    pub async fn open(url: &str, opts: &StoreOptions) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let store = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Self::open_postgres(url).await?
        } else if url.starts_with("sqlite:") {
            Self::open_sqlite(url, opts).await?
        } else {
            return Err(Error::internal(format!("unsupported database URL scheme in '{}'", redact(url))));
        };
        store.migrate().await?;
        if store.inner.backend == Backend::Sqlite {
            store.watch_external_writes();
        }
        Ok(store)
    }

    async fn open_postgres(url: &str) -> Result<Store> {
        let opts: AnyConnectOptions = url.parse().map_err(db)?;
        let pool = AnyPoolOptions::new()
            .max_connections(16)
            .min_connections(1)
            .test_before_acquire(false)
            .connect_with(opts)
            .await
            .map_err(db)?;
        Ok(Store {
            inner: Arc::new(Inner {
                backend: Backend::Postgres,
                read: pool.clone(),
                write: pool,
                // Several API replicas may write to one PostgreSQL: no process-local cache.
                cache: Cache::new(false),
            }),
        })
    }

    async fn open_sqlite(url: &str, opts: &StoreOptions) -> Result<Store> {
        let memory = url == "sqlite::memory:" || url.contains("mode=memory");
        let url = if url == "sqlite::memory:" {
            // sqlx's Any driver gives each connection of `sqlite::memory:` its own database; a
            // named shared-cache database is one database for the whole pool.
            format!("sqlite:file:nubis-{}?mode=memory&cache=shared", unique_suffix())
        } else if memory {
            url.to_string()
        } else {
            let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
            let path = path.split('?').next().unwrap_or(path);
            if let Some(dir) = std::path::Path::new(path).parent()
                && !dir.as_os_str().is_empty()
            {
                std::fs::create_dir_all(dir).map_err(Error::internal)?;
            }
            format!("sqlite://{path}?mode=rwc")
        };
        let connect: AnyConnectOptions = url.parse().map_err(db)?;
        let sync = if opts.sqlite_sync_full { "FULL" } else { "NORMAL" };
        let pragmas: &'static str = if memory {
            "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
        } else if opts.sqlite_sync_full {
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
        } else {
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
        };
        tracing::debug!(synchronous = sync, memory, "opening SQLite");
        let make = |n: u32| {
            AnyPoolOptions::new()
                .max_connections(n)
                .min_connections(if memory { 1 } else { 0 })
                .idle_timeout(if memory { None } else { Some(Duration::from_secs(600)) })
                .max_lifetime(None)
                .test_before_acquire(false)
                .after_connect(move |conn, _| {
                    Box::pin(async move {
                        sqlx::raw_sql(pragmas).execute(conn).await?;
                        Ok(())
                    })
                })
        };
        // One writer connection: SQLite serializes writers anyway, and a single connection makes
        // them queue in-process instead of failing with SQLITE_BUSY.
        let write = make(1).connect_with(connect.clone()).await.map_err(db)?;
        let read = if memory {
            // Shared-cache in-memory databases lock whole tables; one connection keeps it simple.
            write.clone()
        } else {
            make(opts.read_connections.max(1)).connect_with(connect).await.map_err(db)?
        };
        Ok(Store { inner: Arc::new(Inner { backend: Backend::Sqlite, read, write, cache: Cache::new(true) }) })
    }

    async fn migrate(&self) -> Result<()> {
        let list = match self.inner.backend {
            Backend::Sqlite => SQLITE_MIGRATIONS,
            Backend::Postgres => POSTGRES_MIGRATIONS,
        };
        let migrations = list
            .iter()
            .map(|(v, name, sql)| Migration::new(*v, (*name).into(), MigrationType::Simple, sql.into_sql_str(), false))
            .collect();
        Migrator::with_migrations(migrations)
            .run(&self.inner.write)
            .await
            .map_err(|e| Error::internal(format!("migration failed: {e}")))
    }

    /// On SQLite, another process (`nubis admin`) may write the same file. A dedicated
    /// connection's `PRAGMA data_version` changes whenever any other connection commits; when it
    /// does, the read cache is invalidated.
    fn watch_external_writes(&self) {
        let weak = Arc::downgrade(&self.inner);
        let pool = self.inner.read.clone();
        tokio::spawn(async move {
            let Ok(mut conn) = pool.acquire().await else { return };
            let mut last: Option<i64> = None;
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let Some(inner) = weak.upgrade() else { return };
                if inner.read.is_closed() {
                    return;
                }
                let Ok(v) = sqlx::query_scalar::<_, i64>("PRAGMA data_version").fetch_one(&mut *conn).await else {
                    return;
                };
                if last.is_some_and(|l| l != v) {
                    inner.cache.bump();
                }
                last = Some(v);
            }
        });
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// Starts a write transaction.
    pub async fn begin(&self) -> Result<Tx<'_>> {
        let stmt = match self.inner.backend {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        };
        let tx = self.inner.write.begin_with(stmt).await.map_err(db)?;
        Ok(Tx { tx, store: self })
    }

    /// Closes every connection cleanly (checkpointing the SQLite WAL).
    pub async fn close(&self) {
        self.inner.read.close().await;
        self.inner.write.close().await;
    }

    pub(crate) fn read_pool(&self) -> &AnyPool {
        &self.inner.read
    }

    pub(crate) async fn cached<T, F, Fut>(&self, key: CacheKey, load: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.inner.cache.get_or_load(key, load).await
    }

    /// Answers whether the database is reachable (for health checks).
    pub async fn ping(&self) -> bool {
        sqlx::query_scalar::<_, i64>("SELECT 1").fetch_one(&self.inner.read).await.is_ok()
    }
}

/// A write transaction. Dropping it without [`Tx::commit`] rolls it back.
pub struct Tx<'s> {
    tx: sqlx::Transaction<'static, Any>,
    store: &'s Store,
}

impl Tx<'_> {
    pub async fn commit(self) -> Result<()> {
        let r = self.tx.commit().await.map_err(db);
        // Invalidate after the commit (a concurrent reader may have cached pre-commit data) and
        // also after a failed commit (its outcome is unknown).
        self.store.inner.cache.bump();
        r
    }

    pub fn backend(&self) -> Backend {
        self.store.inner.backend
    }

    pub(crate) fn conn(&mut self) -> &mut sqlx::AnyConnection {
        &mut self.tx
    }
}

/// Maps a database error to the nubis error: unique violations to `Unique`, serialization
/// failures and busy databases to `Retry`, the rest to `Internal`.
pub(crate) fn db(e: sqlx::Error) -> Error {
    if let sqlx::Error::Database(d) = &e {
        if d.is_unique_violation() {
            return Error::Unique(d.message().to_string());
        }
        let code = d.code().map(|c| c.to_string()).unwrap_or_default();
        // PostgreSQL: serialization_failure, deadlock_detected. SQLite: BUSY, LOCKED and their
        // extended codes (BUSY_SNAPSHOT = 517, LOCKED_SHAREDCACHE = 262).
        if matches!(code.as_str(), "40001" | "40P01" | "5" | "6" | "517" | "261" | "262") {
            return Error::Retry;
        }
    }
    if matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) {
        return Error::Unavailable("database unavailable".into());
    }
    Error::Internal(format!("database: {e}"))
}

fn unique_suffix() -> String {
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
