//! PostgreSQL through sqlx's native driver.

use nubis_model::{Error, Result};
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::{Column, Postgres, Row as _, TypeInfo};

use super::{Kind, Query, Row, Val};

fn build(q: &Query) -> sqlx::query::Query<'_, Postgres, PgArguments> {
    let mut s = sqlx::query(sqlx::AssertSqlSafe(q.sql.as_str()));
    for v in &q.args {
        s = match v {
            Val::I64(i) => s.bind(*i),
            Val::F64(f) => s.bind(*f),
            Val::Str(t) => s.bind(t.as_str()),
            Val::Bool(b) => s.bind(*b),
            Val::Null(Kind::Int) => s.bind(None::<i64>),
            Val::Null(Kind::Real) => s.bind(None::<f64>),
            Val::Null(Kind::Text) => s.bind(None::<String>),
            Val::Null(Kind::Bool) => s.bind(None::<bool>),
        };
    }
    s
}

/// What a client is told when the database cannot be reached.
pub(crate) const UNREACHABLE: &str = "The database is unreachable; try again shortly";

/// The longest one statement (or a `BEGIN`/`COMMIT`) may wait for the database. A connection
/// whose peer vanished without closing (a network cut, a host lost) would otherwise wait for the
/// kernel to give up, many minutes later. Every statement nubis runs takes milliseconds; the
/// migrations' own DDL is not bounded.
pub(crate) const STATEMENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs a database round trip within [`STATEMENT_TIMEOUT`]; past it the database counts as
/// unreachable (the statement's outcome is unknown, as with any lost connection).
pub(crate) async fn bounded<T>(f: impl Future<Output = Result<T, sqlx::Error>>) -> Result<T> {
    match tokio::time::timeout(STATEMENT_TIMEOUT, f).await {
        Ok(r) => r.map_err(map_err),
        Err(_) => {
            tracing::warn!(timeout = ?STATEMENT_TIMEOUT, "no answer from the database");
            Err(Error::Unavailable(UNREACHABLE.into()))
        }
    }
}

pub(crate) fn map_err(e: sqlx::Error) -> Error {
    if let sqlx::Error::Database(d) = &e {
        if d.is_unique_violation() {
            return Error::Unique(d.message().to_string());
        }
        match d.code().as_deref() {
            Some("40001" | "40P01") => return Error::Retry,
            // Connection exceptions (class 08), the server shutting down or starting up (57P01-03),
            // too many connections or no disk space (class 53): the database is unavailable.
            Some(c) if c.starts_with("08") || c.starts_with("53") || matches!(c, "57P01" | "57P02" | "57P03") => {
                tracing::warn!(error = %e, "database unavailable");
                return Error::Unavailable(UNREACHABLE.into());
            }
            _ => {}
        }
        // PostgreSQL's text cannot hold a NUL character (SQLite's can): the request's text is
        // refused, not the server's fault.
        if d.code().as_deref() == Some("22021") {
            return Error::Invalid(vec![nubis_model::FieldError::general("Text must not contain the NUL character")]);
        }
    }
    // No connection in time, a connection lost or refused (the server stopped, the network
    // failed): the database is unavailable, not nubis broken.
    if matches!(
        e,
        sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_)
    ) {
        tracing::warn!(error = %e, "database unavailable");
        return Error::Unavailable(UNREACHABLE.into());
    }
    Error::Internal(format!("postgres: {e}"))
}

/// How a column's values are read, from its PostgreSQL type (decided once per result, not per
/// cell).
#[derive(Clone, Copy)]
enum Cell {
    I64,
    I32,
    I16,
    Bool,
    F64,
    F32,
    /// PostgreSQL's text types, decoded without sqlx's check of the type per cell.
    Text,
    /// Any other type, decoded as text with sqlx's check (which refuses what is not text).
    Other,
}

impl Cell {
    fn of(type_name: &str) -> Cell {
        match type_name {
            "INT8" => Cell::I64,
            "INT4" => Cell::I32,
            "INT2" => Cell::I16,
            "BOOL" => Cell::Bool,
            "FLOAT8" => Cell::F64,
            "FLOAT4" => Cell::F32,
            "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" => Cell::Text,
            _ => Cell::Other,
        }
    }
}

/// One cell, decoded as its column's [`Cell`] says. The kind was read from the column's type
/// once for the whole result, so sqlx's check of the type on each cell is skipped
/// (`try_get_unchecked`) for the types [`Cell::of`] names; the rest keep the check.
fn cell(r: &PgRow, i: usize, kind: Cell) -> Result<Val> {
    let err =
        |e: sqlx::Error| Error::Internal(format!("postgres column {i} ({}): {e}", r.columns()[i].type_info().name()));
    fn get<'r, T: sqlx::Decode<'r, Postgres>>(r: &'r PgRow, i: usize) -> Result<Option<T>, sqlx::Error> {
        r.try_get_unchecked(i)
    }
    Ok(match kind {
        Cell::I64 => get::<i64>(r, i).map_err(err)?.map_or(Val::Null(Kind::Int), Val::I64),
        Cell::I32 => get::<i32>(r, i).map_err(err)?.map_or(Val::Null(Kind::Int), |v| Val::I64(v.into())),
        Cell::I16 => get::<i16>(r, i).map_err(err)?.map_or(Val::Null(Kind::Int), |v| Val::I64(v.into())),
        Cell::Bool => get::<bool>(r, i).map_err(err)?.map_or(Val::Null(Kind::Bool), Val::Bool),
        Cell::F64 => get::<f64>(r, i).map_err(err)?.map_or(Val::Null(Kind::Real), Val::F64),
        Cell::F32 => get::<f32>(r, i).map_err(err)?.map_or(Val::Null(Kind::Real), |v| Val::F64(v.into())),
        Cell::Text => get::<String>(r, i).map_err(err)?.map_or(Val::Null(Kind::Text), Val::Str),
        Cell::Other => r.try_get::<Option<String>, _>(i).map_err(err)?.map_or(Val::Null(Kind::Text), Val::Str),
    })
}

pub(crate) async fn fetch<'c, E>(e: E, q: &Query) -> Result<Vec<Row>>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let rows = bounded(build(q).fetch_all(e)).await?;
    let Some(first) = rows.first() else { return Ok(Vec::new()) };
    let cols: std::sync::Arc<[String]> = first.columns().iter().map(|c| c.name().to_string()).collect();
    let kinds: Vec<Cell> = first.columns().iter().map(|c| Cell::of(c.type_info().name())).collect();
    rows.iter()
        .map(|r| {
            let vals = kinds.iter().enumerate().map(|(i, k)| cell(r, i, *k)).collect::<Result<Vec<_>>>()?;
            Ok(Row { cols: cols.clone(), vals })
        })
        .collect()
}

pub(crate) async fn execute<'c, E>(e: E, q: &Query) -> Result<u64>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    bounded(build(q).execute(e)).await.map(|r| r.rows_affected())
}
