//! The query layer under every store method: one query API (`query(sql).bind(..).fetch_one(h)`)
//! over two engines.
//!
//! - SQLite runs through rusqlite, inline on the calling task: one writer connection (writes are
//!   serialized by a permit, as SQLite serializes them anyway) and a few reader connections. A
//!   statement costs microseconds, so running it inline is cheaper than handing it to another
//!   thread and back, which is what dominated an earlier sqlx-based version (see
//!   docs/decisions.md).
//! - PostgreSQL runs through sqlx's native driver.
//!
//! SQL text is shared: `$1`-style placeholders (SQLite binds them by number here), the same DML
//! on both; only the migrations differ per engine.

pub(crate) mod lite;
pub(crate) mod pg;

use std::sync::Arc;

use nubis_model::{Error, Result, Timestamp};

/// A bound value. Nulls carry their type (PostgreSQL needs it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    I64(i64),
    F64(f64),
    Str(String),
    Bool(bool),
    Null(Kind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Real,
    Text,
    Bool,
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::I64(v)
    }
}
impl From<i32> for Val {
    fn from(v: i32) -> Val {
        Val::I64(v.into())
    }
}
impl From<u32> for Val {
    fn from(v: u32) -> Val {
        Val::I64(v.into())
    }
}
impl From<u16> for Val {
    fn from(v: u16) -> Val {
        Val::I64(v.into())
    }
}
impl From<u8> for Val {
    fn from(v: u8) -> Val {
        Val::I64(v.into())
    }
}
impl From<f64> for Val {
    fn from(v: f64) -> Val {
        Val::F64(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Bool(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Str(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Str(v)
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Str(v.clone())
    }
}
impl From<Timestamp> for Val {
    fn from(v: Timestamp) -> Val {
        Val::Str(v.to_string())
    }
}

/// Types that have a typed null.
pub(crate) trait Nullable {
    const KIND: Kind;
}
impl Nullable for i64 {
    const KIND: Kind = Kind::Int;
}
impl Nullable for i32 {
    const KIND: Kind = Kind::Int;
}
impl Nullable for u16 {
    const KIND: Kind = Kind::Int;
}
impl Nullable for f64 {
    const KIND: Kind = Kind::Real;
}
impl Nullable for bool {
    const KIND: Kind = Kind::Bool;
}
impl Nullable for &str {
    const KIND: Kind = Kind::Text;
}
impl Nullable for String {
    const KIND: Kind = Kind::Text;
}
impl Nullable for &String {
    const KIND: Kind = Kind::Text;
}
impl Nullable for Timestamp {
    const KIND: Kind = Kind::Text;
}

impl<T: Into<Val> + Nullable> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        match v {
            Some(v) => v.into(),
            None => Val::Null(T::KIND),
        }
    }
}

/// One result row, by column name.
#[derive(Debug, Clone)]
pub struct Row {
    pub(crate) cols: Arc<[String]>,
    pub(crate) vals: Vec<Val>,
}

impl Row {
    fn get(&self, col: &str) -> Result<&Val> {
        self.cols
            .iter()
            .position(|c| c == col)
            .map(|i| &self.vals[i])
            .ok_or_else(|| Error::Internal(format!("no column {col}")))
    }

    /// The first column (for `SELECT COUNT(*)` and the like).
    pub(crate) fn first(&self) -> Result<&Val> {
        self.vals.first().ok_or_else(|| Error::internal("empty row"))
    }
}

fn bad(col: &str, v: &Val, want: &str) -> Error {
    Error::Internal(format!("column {col}: {v:?} is not {want}"))
}

/// Typed access to row values, the same on both engines.
pub(crate) trait RowExt {
    fn i64(&self, col: &str) -> Result<i64>;
    fn opt_i64(&self, col: &str) -> Result<Option<i64>>;
    #[allow(dead_code)] // for numeric columns of later areas
    fn f64(&self, col: &str) -> Result<f64>;
    fn str(&self, col: &str) -> Result<String>;
    fn opt_str(&self, col: &str) -> Result<Option<String>>;
    /// PostgreSQL BOOLEAN and SQLite 0/1 alike.
    fn bool(&self, col: &str) -> Result<bool>;
    fn ts(&self, col: &str) -> Result<Timestamp>;
    fn opt_ts(&self, col: &str) -> Result<Option<Timestamp>>;
}

impl RowExt for Row {
    fn i64(&self, col: &str) -> Result<i64> {
        self.opt_i64(col)?.ok_or_else(|| Error::Internal(format!("column {col} is null")))
    }
    fn opt_i64(&self, col: &str) -> Result<Option<i64>> {
        match self.get(col)? {
            Val::I64(v) => Ok(Some(*v)),
            Val::Bool(b) => Ok(Some(i64::from(*b))),
            Val::Null(_) => Ok(None),
            v => Err(bad(col, v, "an integer")),
        }
    }
    fn f64(&self, col: &str) -> Result<f64> {
        match self.get(col)? {
            Val::F64(v) => Ok(*v),
            Val::I64(v) => Ok(*v as f64),
            v => Err(bad(col, v, "a number")),
        }
    }
    fn str(&self, col: &str) -> Result<String> {
        self.opt_str(col)?.ok_or_else(|| Error::Internal(format!("column {col} is null")))
    }
    fn opt_str(&self, col: &str) -> Result<Option<String>> {
        match self.get(col)? {
            Val::Str(s) => Ok(Some(s.clone())),
            Val::Null(_) => Ok(None),
            v => Err(bad(col, v, "text")),
        }
    }
    fn bool(&self, col: &str) -> Result<bool> {
        match self.get(col)? {
            Val::Bool(b) => Ok(*b),
            Val::I64(v) => Ok(*v != 0),
            v => Err(bad(col, v, "a boolean")),
        }
    }
    fn ts(&self, col: &str) -> Result<Timestamp> {
        self.opt_ts(col)?.ok_or_else(|| Error::Internal(format!("column {col} is null")))
    }
    fn opt_ts(&self, col: &str) -> Result<Option<Timestamp>> {
        match self.get(col)? {
            Val::Null(_) => Ok(None),
            Val::Str(s) => {
                Timestamp::parse(s).map(Some).ok_or_else(|| Error::Internal(format!("column {col}: bad timestamp {s}")))
            }
            v => Err(bad(col, v, "a timestamp")),
        }
    }
}

/// Where a statement runs.
pub(crate) enum Handle<'a> {
    /// SQLite, on a reader connection.
    LiteRead(&'a lite::Lite),
    /// SQLite, on the writer connection (inside a write transaction).
    LiteWrite(&'a lite::Lite),
    /// PostgreSQL, on any connection of the pool, or of the pool that plans for the values
    /// ([`Query::planned_for_its_values`]).
    PgPool(&'a sqlx::PgPool, &'a sqlx::PgPool),
    /// PostgreSQL, inside a transaction.
    PgConn(&'a mut sqlx::PgConnection),
}

impl Handle<'_> {
    /// The same place, for one more statement (a handle inside a transaction is a unique borrow).
    pub(crate) fn reborrow(&mut self) -> Handle<'_> {
        match self {
            Handle::LiteRead(l) => Handle::LiteRead(l),
            Handle::LiteWrite(l) => Handle::LiteWrite(l),
            Handle::PgPool(p, v) => Handle::PgPool(p, v),
            Handle::PgConn(c) => Handle::PgConn(c),
        }
    }
}

/// A statement with its bound values.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub sql: String,
    pub args: Vec<Val>,
    /// Run where PostgreSQL plans for the values: see [`Query::planned_for_its_values`].
    pub for_its_values: bool,
}

pub(crate) fn query(sql: impl Into<String>) -> Query {
    let sql = sql.into();
    crate::cache::reads::note_sql(&sql);
    Query { sql, args: Vec::new(), for_its_values: false }
}

impl Query {
    pub fn bind(mut self, v: impl Into<Val>) -> Query {
        self.args.push(v.into());
        self
    }

    /// Runs the statement, outside a transaction, on the PostgreSQL connections that leave
    /// planning to PostgreSQL's own choice: a plan for each run's values, or one for unknown
    /// values once that is estimated no dearer. nubis's other connections plan every statement
    /// once, for unknown values (`plan_cache_mode = force_generic_plan`), from the average
    /// share of rows a value holds: a filter on a value that two records of 100,000 hold would
    /// be planned as if it held thousands, a walk of the whole list in the page's order that
    /// stops after 100 matches, which then reads every row to find two.
    /// [`crate::sql::push_filter`] asks for this. SQLite's planner does not look at the values.
    pub fn planned_for_its_values(mut self) -> Query {
        self.for_its_values = true;
        self
    }

    pub async fn fetch_all(self, h: Handle<'_>) -> Result<Vec<Row>> {
        match h {
            Handle::LiteRead(l) => l.read(|c| lite::fetch(c, &self)),
            Handle::LiteWrite(l) => l.write(|c| lite::fetch(c, &self)),
            Handle::PgPool(p, v) => pg::fetch(if self.for_its_values { v } else { p }, &self).await,
            Handle::PgConn(c) => pg::fetch(c, &self).await,
        }
    }

    /// Hands the rows to `each` in order until it returns `true` (that row is the last one
    /// needed): SQLite reads no further; PostgreSQL has sent them all.
    pub async fn fetch_until(self, h: Handle<'_>, mut each: impl FnMut(Row) -> Result<bool>) -> Result<()> {
        match h {
            Handle::LiteRead(l) => l.read(|c| lite::fetch_until(c, &self, &mut each)),
            Handle::LiteWrite(l) => l.write(|c| lite::fetch_until(c, &self, &mut each)),
            h => {
                for r in self.fetch_all(h).await? {
                    if each(r)? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    pub async fn fetch_optional(self, h: Handle<'_>) -> Result<Option<Row>> {
        Ok(self.fetch_all(h).await?.into_iter().next())
    }

    pub async fn fetch_one(self, h: Handle<'_>) -> Result<Row> {
        self.fetch_optional(h).await?.ok_or_else(|| Error::internal("query returned no row"))
    }

    /// The first column of the first row as an integer (counts, ids).
    pub async fn fetch_i64(self, h: Handle<'_>) -> Result<i64> {
        match self.fetch_one(h).await?.first()? {
            Val::I64(v) => Ok(*v),
            Val::Bool(b) => Ok(i64::from(*b)),
            v => Err(Error::Internal(format!("expected an integer, got {v:?}"))),
        }
    }

    /// The first column of every row, as integers.
    pub async fn fetch_column_i64(self, h: Handle<'_>) -> Result<Vec<i64>> {
        self.fetch_all(h)
            .await?
            .iter()
            .map(|r| match r.first()? {
                Val::I64(v) => Ok(*v),
                v => Err(Error::Internal(format!("expected an integer, got {v:?}"))),
            })
            .collect()
    }

    /// The first column of every row, as text.
    pub async fn fetch_column_str(self, h: Handle<'_>) -> Result<Vec<String>> {
        self.fetch_all(h)
            .await?
            .iter()
            .map(|r| match r.first()? {
                Val::Str(v) => Ok(v.clone()),
                v => Err(Error::Internal(format!("expected text, got {v:?}"))),
            })
            .collect()
    }

    /// Runs the statement; returns the number of rows it changed.
    pub async fn execute(self, h: Handle<'_>) -> Result<u64> {
        match h {
            Handle::LiteRead(l) => l.read(|c| lite::execute(c, &self)),
            Handle::LiteWrite(l) => l.write(|c| lite::execute(c, &self)),
            Handle::PgPool(p, _) => pg::execute(p, &self).await,
            Handle::PgConn(c) => pg::execute(c, &self).await,
        }
    }
}
