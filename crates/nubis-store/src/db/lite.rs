//! SQLite through rusqlite: one writer connection, a few reader connections (WAL lets them read
//! while the writer writes), statements run inline and cached per connection.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nubis_model::{Error, Result};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Kind, Query, Row, Val};

pub(crate) struct Lite {
    writer: Mutex<Option<Connection>>,
    readers: Vec<Mutex<Option<Connection>>>,
    next: AtomicUsize,
    /// Held by the one open write transaction.
    permit: Arc<Semaphore>,
    sync_full: bool,
    path: PathBuf,
    /// For `sqlite::memory:`: a private temporary directory removed on close.
    temp_dir: Option<PathBuf>,
    /// The tables the open write transaction changed (bits of `cache::bit`), set by an update
    /// hook on the writer connection.
    touched: Arc<AtomicU64>,
}

/// Each connection reads the database file through a memory map (up to 1 GiB) and keeps up to
/// 32 MiB of pages: a large account's indexes are read as memory, not copied in by a system call
/// per page from a 2 MiB cache (the defaults), so a page of a list costs the same at any size.
const SIZES: &str = "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -32768;";

fn open_conn(path: &Path, pragmas: &str) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(path, flags).map_err(map_err)?;
    c.set_prepared_statement_cache_capacity(256);
    // The query planner stability guarantee: a statement's plan never depends on the values
    // bound to it. Without it SQLite (3.54) plans with the value bound to a `LIMIT`, and
    // prepares the statement again (parsing and planning it) whenever a new value is bound
    // there: a deep page, whose reads take `LIMIT skip + n`, was parsed afresh at every request
    // (a fifth of the CPU of random pages of VPCs). nubis writes in its SQL every value a plan
    // should depend on (the conditions of the partial indexes).
    c.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(map_err)?;
    c.execute_batch(pragmas).map_err(map_err)?;
    Ok(c)
}

impl Lite {
    /// Opens the database file (creating it), in WAL mode. `path` None: a throwaway database in a
    /// private temporary directory.
    pub(crate) fn open(path: Option<&Path>, sync_full: bool, readers: usize) -> Result<Lite> {
        let (path, temp_dir) = match path {
            Some(p) => (p.to_path_buf(), None),
            None => {
                let dir = std::env::temp_dir().join(format!("nubis-mem-{}", super::super::unique_suffix()));
                crate::files::create_private_dir(&dir).map_err(Error::internal)?;
                (dir.join("nubis.db"), Some(dir))
            }
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            crate::files::create_private_dir(dir).map_err(Error::internal)?;
        }
        // The database is readable by its owner only, and so are the files SQLite creates
        // beside it (it gives them the database file's mode); files of older releases are
        // made so too.
        crate::files::precreate_sqlite(&path).map_err(Error::internal)?;
        let sync = if sync_full { "FULL" } else { "NORMAL" };
        let mut writer = open_conn(
            &path,
            &format!(
                "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON; {SIZES}"
            ),
        )?;
        if let Err(e) = crate::files::restrict_sqlite(&path) {
            tracing::warn!(path = %path.display(), error = %e, "could not make the database files private (0600)");
        }
        let touched = Arc::new(AtomicU64::new(0));
        let seen = touched.clone();
        writer
            .update_hook(Some(move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
                seen.fetch_or(crate::cache::with_kept_counts(crate::cache::bit(table)), Ordering::Relaxed);
            }))
            .map_err(map_err)?;
        let readers = (0..readers.max(1))
            .map(|_| {
                open_conn(&path, &format!("PRAGMA busy_timeout = 5000; PRAGMA query_only = 1; {SIZES}"))
                    .map(|c| Mutex::new(Some(c)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lite {
            writer: Mutex::new(Some(writer)),
            readers,
            next: AtomicUsize::new(0),
            permit: Arc::new(Semaphore::new(1)),
            sync_full,
            path,
            temp_dir,
            touched,
        })
    }

    /// Runs `f` on a reader connection.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let n = self.readers.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            if let Ok(guard) = self.readers[(start + i) % n].try_lock() {
                return match guard.as_ref() {
                    Some(c) => f(c),
                    None => Err(closed()),
                };
            }
        }
        let guard = self.readers[start % n].lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(c) => f(c),
            None => Err(closed()),
        }
    }

    /// Runs `f` on the writer connection (callers hold the write permit).
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(c) => f(c),
            None => Err(closed()),
        }
    }

    /// Waits for the write permit (for work on the writer connection outside a transaction).
    pub(crate) async fn permit(&self) -> Result<OwnedSemaphorePermit> {
        self.permit.clone().acquire_owned().await.map_err(|_| closed())
    }

    /// Waits for the write permit and begins a transaction that takes the write lock at once.
    pub(crate) async fn begin(&self) -> Result<OwnedSemaphorePermit> {
        let permit = self.permit.clone().acquire_owned().await.map_err(|_| closed())?;
        self.write(|c| c.execute_batch("BEGIN IMMEDIATE").map_err(map_err))?;
        Ok(permit)
    }

    pub(crate) fn commit(&self) -> Result<()> {
        let run = || {
            self.write(|c| match c.execute_batch("COMMIT") {
                Ok(()) => Ok(()),
                Err(e) => {
                    let _ = c.execute_batch("ROLLBACK");
                    Err(map_err(e))
                }
            })
        };
        // With synchronous=FULL a commit waits for the disk: keep other tasks running meanwhile.
        if self.sync_full
            && tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
        {
            tokio::task::block_in_place(run)
        } else {
            run()
        }
    }

    /// The tables changed since the last call (the caller has just committed or rolled back).
    pub(crate) fn take_touched(&self) -> crate::cache::Touched {
        self.touched.swap(0, Ordering::AcqRel)
    }

    pub(crate) fn rollback(&self) {
        let _ = self.write(|c| c.execute_batch("ROLLBACK").map_err(map_err));
    }

    /// A separate connection, for watching `PRAGMA data_version`.
    pub(crate) fn watcher(&self) -> Result<Connection> {
        open_conn(&self.path, "PRAGMA busy_timeout = 5000; PRAGMA query_only = 1;")
    }

    /// Closes every connection (the last close checkpoints the WAL into the database file).
    pub(crate) fn close(&self) {
        for r in &self.readers {
            if let Some(c) = r.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = c.close();
            }
        }
        if let Some(c) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = c.close();
        }
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn closed() -> Error {
    Error::Unavailable("database closed".into())
}

pub(crate) fn map_err(e: rusqlite::Error) -> Error {
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        let unique = matches!(f.extended_code, 2067 | 1555);
        if unique {
            return Error::Unique(msg.clone().unwrap_or_else(|| "unique constraint".into()));
        }
        if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) {
            return Error::Retry;
        }
        // The disk failed, filled up, or the file cannot be opened: unavailable, not a fault of
        // nubis; the write did not happen.
        if matches!(f.code, ErrorCode::SystemIoFailure | ErrorCode::DiskFull | ErrorCode::CannotOpen) {
            tracing::warn!(error = %e, "database unavailable");
            return Error::Unavailable("The database is unavailable (storage error); try again shortly".into());
        }
    }
    Error::Internal(format!("sqlite: {e}"))
}

/// Binds `v` to parameter `i` (text by reference: not copied).
fn bind(stmt: &mut rusqlite::Statement<'_>, i: usize, v: &Val) -> rusqlite::Result<()> {
    match v {
        Val::I64(n) => stmt.raw_bind_parameter(i, *n),
        Val::F64(f) => stmt.raw_bind_parameter(i, *f),
        Val::Str(s) => stmt.raw_bind_parameter(i, s.as_str()),
        Val::Bool(b) => stmt.raw_bind_parameter(i, i64::from(*b)),
        Val::Null(_) => stmt.raw_bind_parameter(i, SqlValue::Null),
    }
}

fn prepare<'c>(c: &'c Connection, q: &Query) -> Result<rusqlite::CachedStatement<'c>> {
    let mut stmt = c.prepare_cached(&q.sql).map_err(map_err)?;
    let order = value_order(&stmt, &q.sql);
    for (i, n) in order.iter().enumerate() {
        let v = q.args.get(*n).ok_or_else(|| Error::Internal(format!("missing value for ${} in: {}", n + 1, q.sql)))?;
        bind(&mut stmt, i + 1, v).map_err(map_err)?;
    }
    Ok(stmt)
}

/// Past this many remembered statements the memory of [`value_order`] starts over.
const ORDERS_KEPT: usize = 4096;

/// For each parameter of the statement (in SQLite's order), the index of the value it takes:
/// `$N` takes the N-th value wherever it appears, anonymous `?` by position. SQLite finds a
/// parameter's name by a linear scan, so asking it for every parameter of a long `IN (...)` list
/// is quadratic; the answer depends only on the SQL text, so it is worked out once per text (per
/// thread) and remembered.
fn value_order(stmt: &rusqlite::Statement<'_>, sql: &str) -> std::rc::Rc<[usize]> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    thread_local! {
        static ORDERS: RefCell<HashMap<String, Rc<[usize]>>> = RefCell::new(HashMap::new());
    }
    ORDERS.with(|orders| {
        if let Some(o) = orders.borrow().get(sql) {
            return o.clone();
        }
        let order: Rc<[usize]> = (1..=stmt.parameter_count())
            .map(|i| match stmt.parameter_name(i) {
                Some(name) => name.trim_start_matches(['$', '?', ':', '@']).parse::<usize>().unwrap_or(i),
                None => i,
            })
            .map(|n| n.saturating_sub(1))
            .collect();
        let mut orders = orders.borrow_mut();
        if orders.len() >= ORDERS_KEPT {
            orders.clear();
        }
        orders.insert(sql.to_string(), order.clone());
        order
    })
}

pub(crate) fn fetch(c: &Connection, q: &Query) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    fetch_until(c, q, &mut |r| {
        out.push(r);
        Ok(false)
    })?;
    Ok(out)
}

/// Hands the statement's rows to `each` in order until it returns `true`: SQLite reads no
/// further row.
pub(crate) fn fetch_until(c: &Connection, q: &Query, each: &mut dyn FnMut(Row) -> Result<bool>) -> Result<()> {
    let mut stmt = prepare(c, q)?;
    let cols: std::sync::Arc<[String]> = stmt.column_names().map(|s| s.to_string()).collect();
    let n = cols.len();
    let mut rows = stmt.raw_query();
    while let Some(r) = rows.next().map_err(map_err)? {
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            vals.push(match r.get_ref(i).map_err(map_err)? {
                ValueRef::Null => Val::Null(Kind::Text),
                ValueRef::Integer(v) => Val::I64(v),
                ValueRef::Real(v) => Val::F64(v),
                ValueRef::Text(t) => Val::Str(text(t)),
                ValueRef::Blob(b) => Val::Str(String::from_utf8_lossy(b).into_owned()),
            });
        }
        if each(Row { cols: cols.clone(), vals })? {
            break;
        }
    }
    Ok(())
}

/// Column text as a `String` (invalid UTF-8, which nubis never writes, is replaced).
fn text(t: &[u8]) -> String {
    match std::str::from_utf8(t) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(t).into_owned(),
    }
}

pub(crate) fn execute(c: &Connection, q: &Query) -> Result<u64> {
    let mut stmt = prepare(c, q)?;
    stmt.raw_execute().map(|n| n as u64).map_err(map_err)
}

impl Lite {
    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Copies the whole database into the file `dst` by SQLite's online backup (readers go on
    /// meanwhile; the caller holds the write permit so no write is half in).
    pub(crate) fn backup_to(&self, dst: &Path) -> Result<()> {
        self.write(|c| c.backup(rusqlite::MAIN_DB, dst, None::<fn(rusqlite::backup::Progress)>).map_err(map_err))
    }

    /// Replaces the whole database with the file `src` by SQLite's online backup, through the
    /// writer connection (the caller holds the write permit, with no transaction open).
    pub(crate) fn restore_from(&self, src: &Path) -> Result<()> {
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let c = guard.as_mut().ok_or_else(closed)?;
        c.restore(rusqlite::MAIN_DB, src, None::<fn(rusqlite::backup::Progress)>).map_err(map_err)?;
        // The copy carries the source's settings; the writer's own come back.
        c.execute_batch("PRAGMA foreign_keys = ON;").map_err(map_err)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    #[tokio::test]
    async fn a_write_through_a_trigger_into_a_table_without_rowid_is_reported() {
        use crate::cache::bit;
        let l = super::Lite::open(None, false, 1).unwrap();
        let ddl = "CREATE TABLE vpcs (id INTEGER PRIMARY KEY, account_id BIGINT NOT NULL); \
                   CREATE TABLE row_counts (account_id BIGINT NOT NULL, kind TEXT NOT NULL, n BIGINT NOT NULL, \
                   PRIMARY KEY (account_id, kind)) WITHOUT ROWID; \
                   CREATE TRIGGER vpcs_count AFTER INSERT ON vpcs BEGIN \
                   INSERT INTO row_counts VALUES (NEW.account_id, 'vpcs', 1) \
                   ON CONFLICT (account_id, kind) DO UPDATE SET n = n + 1; END;";
        l.write(|c| c.execute_batch(ddl).map_err(super::map_err)).unwrap();
        l.take_touched();
        let permit = l.begin().await.unwrap();
        l.write(|c| c.execute_batch("INSERT INTO vpcs (account_id) VALUES (1)").map_err(super::map_err)).unwrap();
        l.commit().unwrap();
        drop(permit);
        let t = l.take_touched();
        assert_eq!(t & bit("vpcs"), bit("vpcs"));
        // SQLite's update hook reports only the rowid table.
        assert_eq!(t & bit("row_counts"), bit("row_counts"), "{t:b}");
        l.close();
    }

    #[test]
    fn a_new_value_bound_to_a_limit_does_not_prepare_the_statement_again() {
        let c = super::open_conn(std::path::Path::new(":memory:"), "").unwrap();
        c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v);").unwrap();
        c.execute_batch("INSERT INTO t (v) VALUES ('a'), ('b'), ('c'), ('d');").unwrap();
        let mut stmt = c.prepare_cached("SELECT id FROM t WHERE v >= ?1 ORDER BY v, id LIMIT ?2").unwrap();
        for limit in 1..=3i64 {
            let ids: Vec<i64> =
                stmt.query_map(rusqlite::params!["b", limit], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect();
            assert_eq!(ids.len() as i64, limit);
        }
        assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0);
    }
}
