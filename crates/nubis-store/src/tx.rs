//! Write transactions: [`Tx`] (the single writer connection on SQLite, `SERIALIZABLE` on
//! PostgreSQL), what a commit reports, and [`retry`] for serialization failures.

use std::time::Duration;

use nubis_model::{Error, Result};

use crate::db::{self, Handle, query};
use crate::{Backend, Engine, Store, cache};

/// Where a write transaction stands among the other writers on PostgreSQL (docs/decisions.md,
/// "A write that keeps losing runs alone"). Every write takes the `write_gate` table's lock
/// before its first read, so before its snapshot: `ROW SHARE` for a write that runs beside the
/// others, `EXCLUSIVE` for one that lost too many times and runs once the writers before it have
/// finished, while the ones after it wait. SQLite's writes always run alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Beside,
    Alone,
}

impl Store {
    /// Starts a write transaction: on SQLite it holds the single write permit; on PostgreSQL it
    /// is SERIALIZABLE and runs beside the other writers.
    pub async fn begin(&self) -> Result<Tx<'_>> {
        self.begin_as(Turn::Beside).await
    }

    /// [`Store::begin`], at the given [`Turn`].
    pub async fn begin_as(&self, turn: Turn) -> Result<Tx<'_>> {
        self.begin_with(match turn {
            Turn::Beside => "BEGIN ISOLATION LEVEL SERIALIZABLE; LOCK TABLE write_gate IN ROW SHARE MODE",
            Turn::Alone => "BEGIN ISOLATION LEVEL SERIALIZABLE; LOCK TABLE write_gate IN EXCLUSIVE MODE",
        })
        .await
    }

    /// A write transaction that does not take the gate: the migrations, which may run before the
    /// gate exists (they wait for each other on an advisory lock of their own).
    pub(crate) async fn begin_ungated(&self) -> Result<Tx<'_>> {
        self.begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE").await
    }

    async fn begin_with(&self, pg_begin: &'static str) -> Result<Tx<'_>> {
        let inner = match &self.inner.engine {
            Engine::Lite(l) => TxInner::Lite(Some(l.begin().await?)),
            Engine::Pg(p, _) => {
                // The BEGIN runs in a task of its own, which no caller can drop halfway. A
                // request dropped while its BEGIN waited (for the write gate's lock, behind a
                // write that runs alone) left the transaction open on the server: sqlx queues a
                // rollback only once a BEGIN is answered, so the connection went back to the pool
                // inside the transaction, holding the gate's lock until its next use. Here the
                // BEGIN is always answered, and a transaction nobody takes any more is dropped,
                // which rolls it back.
                let p = p.clone();
                let begin = tokio::spawn(async move { p.begin_with(pg_begin).await });
                let begun = db::pg::bounded(async move { begin.await.unwrap_or(Err(sqlx::Error::WorkerCrashed)) });
                TxInner::Pg(Some(begun.await?))
            }
        };
        Ok(Tx { store: self, inner, mail_queued: false })
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
    pub(crate) mail_queued: bool,
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
            (_, Engine::Pg(p, v)) => Handle::PgPool(p, v),
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
