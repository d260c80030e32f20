//! Typed access to result rows (re-exported from the query layer).

pub(crate) use crate::db::RowExt;
