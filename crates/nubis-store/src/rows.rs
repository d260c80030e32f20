//! Reading values out of `Any` rows the same way on both backends.

use nubis_model::{Error, Result, Timestamp};
use sqlx::Row;
use sqlx::any::AnyRow;

pub(crate) trait RowExt {
    fn i64(&self, col: &str) -> Result<i64>;
    fn opt_i64(&self, col: &str) -> Result<Option<i64>>;
    fn str(&self, col: &str) -> Result<String>;
    fn opt_str(&self, col: &str) -> Result<Option<String>>;
    /// PostgreSQL BOOLEAN and SQLite INTEGER alike.
    fn bool(&self, col: &str) -> Result<bool>;
    fn ts(&self, col: &str) -> Result<Timestamp>;
    fn opt_ts(&self, col: &str) -> Result<Option<Timestamp>>;
}

fn err(col: &str, e: sqlx::Error) -> Error {
    Error::Internal(format!("column {col}: {e}"))
}

impl RowExt for AnyRow {
    fn i64(&self, col: &str) -> Result<i64> {
        self.try_get::<i64, _>(col).map_err(|e| err(col, e))
    }
    fn opt_i64(&self, col: &str) -> Result<Option<i64>> {
        self.try_get::<Option<i64>, _>(col).map_err(|e| err(col, e))
    }
    fn str(&self, col: &str) -> Result<String> {
        self.try_get::<String, _>(col).map_err(|e| err(col, e))
    }
    fn opt_str(&self, col: &str) -> Result<Option<String>> {
        self.try_get::<Option<String>, _>(col).map_err(|e| err(col, e))
    }
    fn bool(&self, col: &str) -> Result<bool> {
        self.try_get::<bool, _>(col).or_else(|_| self.try_get::<i64, _>(col).map(|v| v != 0)).map_err(|e| err(col, e))
    }
    fn ts(&self, col: &str) -> Result<Timestamp> {
        let s = self.str(col)?;
        Timestamp::parse(&s).ok_or_else(|| Error::Internal(format!("column {col}: bad timestamp {s}")))
    }
    fn opt_ts(&self, col: &str) -> Result<Option<Timestamp>> {
        match self.opt_str(col)? {
            None => Ok(None),
            Some(s) => Timestamp::parse(&s)
                .map(Some)
                .ok_or_else(|| Error::Internal(format!("column {col}: bad timestamp {s}"))),
        }
    }
}
