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

pub(crate) fn map_err(e: sqlx::Error) -> Error {
    if let sqlx::Error::Database(d) = &e {
        if d.is_unique_violation() {
            return Error::Unique(d.message().to_string());
        }
        if matches!(d.code().as_deref(), Some("40001" | "40P01")) {
            return Error::Retry;
        }
        // PostgreSQL's text cannot hold a NUL character (SQLite's can): the request's text is
        // refused, not the server's fault.
        if d.code().as_deref() == Some("22021") {
            return Error::Invalid(vec![nubis_model::FieldError::general("Text must not contain the NUL character")]);
        }
    }
    if matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) {
        return Error::Unavailable("database unavailable".into());
    }
    Error::Internal(format!("postgres: {e}"))
}

fn cell(r: &PgRow, i: usize) -> Result<Val> {
    let ty = r.columns()[i].type_info().name().to_string();
    let get_err = |e: sqlx::Error| Error::Internal(format!("postgres column {i} ({ty}): {e}"));
    Ok(match ty.as_str() {
        "INT8" => r.try_get::<Option<i64>, _>(i).map_err(get_err)?.map(Val::I64).unwrap_or(Val::Null(Kind::Int)),
        "INT4" => {
            r.try_get::<Option<i32>, _>(i).map_err(get_err)?.map(|v| Val::I64(v.into())).unwrap_or(Val::Null(Kind::Int))
        }
        "INT2" => {
            r.try_get::<Option<i16>, _>(i).map_err(get_err)?.map(|v| Val::I64(v.into())).unwrap_or(Val::Null(Kind::Int))
        }
        "BOOL" => r.try_get::<Option<bool>, _>(i).map_err(get_err)?.map(Val::Bool).unwrap_or(Val::Null(Kind::Bool)),
        "FLOAT8" => r.try_get::<Option<f64>, _>(i).map_err(get_err)?.map(Val::F64).unwrap_or(Val::Null(Kind::Real)),
        "FLOAT4" => r
            .try_get::<Option<f32>, _>(i)
            .map_err(get_err)?
            .map(|v| Val::F64(v.into()))
            .unwrap_or(Val::Null(Kind::Real)),
        _ => r.try_get::<Option<String>, _>(i).map_err(get_err)?.map(Val::Str).unwrap_or(Val::Null(Kind::Text)),
    })
}

pub(crate) async fn fetch<'c, E>(e: E, q: &Query) -> Result<Vec<Row>>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let rows = build(q).fetch_all(e).await.map_err(map_err)?;
    let Some(first) = rows.first() else { return Ok(Vec::new()) };
    let cols: std::sync::Arc<[String]> = first.columns().iter().map(|c| c.name().to_string()).collect();
    rows.iter()
        .map(|r| Ok(Row { cols: cols.clone(), vals: (0..cols.len()).map(|i| cell(r, i)).collect::<Result<Vec<_>>>()? }))
        .collect()
}

pub(crate) async fn execute<'c, E>(e: E, q: &Query) -> Result<u64>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    build(q).execute(e).await.map(|r| r.rows_affected()).map_err(map_err)
}
