//! Backups of a whole database and restores from them (`nubis admin backup|restore`).
//!
//! - SQLite: SQLite's online backup, one step over the whole file inside one read transaction,
//!   so the copy is a consistent snapshot even while a server writes (WAL lets the server go on
//!   writing meanwhile). The copy is written next to the target and renamed into place.
//!   A restore copies a backup back through the same API into the target file; it refuses while
//!   another process (a server) has the target open.
//! - PostgreSQL: `pg_dump -Fc` and `pg_restore --clean --if-exists --single-transaction`, taken
//!   from `$PGBIN` when it is set, else from `PATH`. `pg_dump` is consistent while servers run
//!   (one snapshot); a restore refuses while any other session is connected to the database.

use std::path::{Path, PathBuf};
use std::process::Command;

use nubis_model::{Error, Result};
use rusqlite::{Connection, OpenFlags};

/// The SQLite file of a `sqlite://PATH` URL; `None` for PostgreSQL.
fn sqlite_path(url: &str) -> Result<Option<PathBuf>> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(None);
    }
    match url.strip_prefix("sqlite:") {
        Some(":memory:") => Err(Error::Invalid(vec![nubis_model::FieldError::new(
            "database",
            "an in-memory database cannot be backed up or restored",
        )])),
        Some(rest) => {
            let p = rest.trim_start_matches("//");
            Ok(Some(PathBuf::from(p.split('?').next().unwrap_or(p))))
        }
        None => Err(Error::internal(format!("unsupported database URL scheme in '{}'", crate::redact(url)))),
    }
}

fn lite(e: rusqlite::Error) -> Error {
    Error::Internal(format!("sqlite: {e}"))
}

/// A file next to `path` for writing before renaming into place.
fn partial(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".partial-{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes a consistent copy of the database at `url` into the file `out`.
pub async fn backup(url: &str, out: &Path) -> Result<()> {
    let tmp = partial(out);
    let r = match sqlite_path(url)? {
        Some(db) => {
            let (db, tmp) = (db.clone(), tmp.clone());
            tokio::task::spawn_blocking(move || sqlite_backup(&db, &tmp)).await.map_err(Error::internal)?
        }
        None => {
            // pg_dump writes into the file made here, so it is never readable by others.
            let _ = std::fs::remove_file(&tmp);
            crate::files::create_private_file(&tmp).map_err(|e| Error::internal(format!("{}: {e}", tmp.display())))?;
            pg_tool("pg_dump", &["--format=custom", "--no-owner", "--file"], &tmp, url)
        }
    };
    let r = r.and_then(|()| crate::files::restrict(&tmp).map_err(Error::internal));
    let r = r.and_then(|()| std::fs::rename(&tmp, out).map_err(|e| Error::internal(format!("{}: {e}", out.display()))));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

fn sqlite_backup(db: &Path, out: &Path) -> Result<()> {
    if !db.exists() {
        return Err(Error::internal(format!("{}: no such database", db.display())));
    }
    let src = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(lite)?;
    src.busy_timeout(std::time::Duration::from_secs(10)).map_err(lite)?;
    let _ = std::fs::remove_file(out);
    // A backup holds the whole state: readable by its owner only.
    crate::files::precreate_sqlite(out).map_err(Error::internal)?;
    let mut dst = Connection::open(out).map_err(lite)?;
    {
        let b = rusqlite::backup::Backup::new(&src, &mut dst).map_err(lite)?;
        // All pages in one step: one read transaction, so one consistent snapshot.
        match b.step(-1).map_err(lite)? {
            rusqlite::backup::StepResult::Done => {}
            other => return Err(Error::internal(format!("sqlite backup did not finish: {other:?}"))),
        }
    }
    // A standalone file: no WAL beside it.
    dst.execute_batch("PRAGMA journal_mode = DELETE;").map_err(lite)?;
    let ok: String = dst.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(lite)?;
    if ok != "ok" {
        return Err(Error::internal(format!("the copy failed its check: {ok}")));
    }
    dst.close().map_err(|(_, e)| lite(e))
}

/// Replaces the whole database at `url` with the backup `file`. Refuses while a server (or any
/// other client) uses the database.
pub async fn restore(url: &str, file: &Path) -> Result<()> {
    if !file.is_file() {
        return Err(Error::invalid("file", format!("{}: no such file", file.display())));
    }
    match sqlite_path(url)? {
        Some(db) => {
            let file = file.to_path_buf();
            tokio::task::spawn_blocking(move || sqlite_restore(&file, &db)).await.map_err(Error::internal)?
        }
        None => {
            pg_refuse_if_in_use(url).await?;
            pg_tool(
                "pg_restore",
                &["--clean", "--if-exists", "--no-owner", "--single-transaction", "--exit-on-error", "--dbname", url],
                file,
                "",
            )
        }
    }
}

fn in_use() -> Error {
    Error::refused("the database is in use (a nubis server or another client is connected to it): stop it first")
}

fn sqlite_restore(file: &Path, db: &Path) -> Result<()> {
    let src = Connection::open_with_flags(file, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(lite)?;
    let ok: String = src
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| Error::invalid("file", format!("{}: not a SQLite database ({e})", file.display())))?;
    if ok != "ok" {
        return Err(Error::invalid("file", format!("{}: damaged ({ok})", file.display())));
    }
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::files::create_private_dir(dir).map_err(Error::internal)?;
    }
    crate::files::precreate_sqlite(db).map_err(Error::internal)?;
    let mut dst = Connection::open(db).map_err(lite)?;
    // Exclusive locking: the lock taken below is kept until this connection closes. Any other
    // connection to the file (a running server keeps several) makes it fail at once.
    dst.execute_batch("PRAGMA locking_mode = EXCLUSIVE;").map_err(lite)?;
    if let Err(e) = dst.execute_batch("BEGIN EXCLUSIVE; COMMIT;") {
        return Err(match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => in_use(),
            _ => lite(e),
        });
    }
    dst.restore(rusqlite::MAIN_DB, file, None::<fn(rusqlite::backup::Progress)>).map_err(lite)?;
    dst.execute_batch("PRAGMA journal_mode = WAL;").map_err(lite)?;
    dst.close().map_err(|(_, e)| lite(e))?;
    crate::files::restrict_sqlite(db).map_err(Error::internal)
}

/// Refuses when any session other than this one is connected to the PostgreSQL database.
async fn pg_refuse_if_in_use(url: &str) -> Result<()> {
    use sqlx::Connection as _;
    let mut c = sqlx::PgConnection::connect(url).await.map_err(crate::db::pg::map_err)?;
    let others: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_one(&mut c)
    .await
    .map_err(crate::db::pg::map_err)?;
    let _ = c.close().await;
    if others > 0 { Err(in_use()) } else { Ok(()) }
}

/// Where a PostgreSQL client program is: `$PGBIN/NAME` when that exists, else `NAME` on `PATH`.
pub fn pg_program(name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("PGBIN") {
        let p = Path::new(&dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from(name)
}

/// Runs `pg_dump`/`pg_restore` with `args`, then `file`, then `url` (when not empty).
fn pg_tool(name: &str, args: &[&str], file: &Path, url: &str) -> Result<()> {
    let program = pg_program(name);
    let mut cmd = Command::new(&program);
    cmd.args(args).arg(file);
    if !url.is_empty() {
        cmd.arg(url);
    }
    let out = cmd.output().map_err(|e| {
        Error::Unavailable(format!(
            "{}: {e} (install the PostgreSQL client programs, or set PGBIN to their directory)",
            program.display()
        ))
    })?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(Error::internal(format!("{name} failed ({}): {}", out.status, err.trim())))
    }
}
