//! What invalidates the read cache besides this process's own commits: on SQLite, writes by
//! another process to the same file; on PostgreSQL, the change notices of every replica.

use std::sync::Arc;
use std::time::Duration;

use nubis_model::Result;

use crate::{Engine, Store, cache, unique_suffix};

impl Store {
    /// On SQLite, another process (`nubis admin`) may write the same file. A dedicated
    /// connection's `PRAGMA data_version` changes whenever any other connection commits; when it
    /// does, the read cache is invalidated.
    pub(crate) fn watch_external_writes(&self) -> Result<()> {
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
    pub(crate) fn listen_to_change_notices(&self) {
        let Engine::Pg(pool, _) = &self.inner.engine else { return };
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
