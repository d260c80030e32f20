//! Typed access to result rows (re-exported from the query layer).

use nubis_model::Result;

use crate::db::Row;
pub(crate) use crate::db::RowExt;

/// The `(key, n)` pairs of `rows` (columns `key` and `n`), with the counts of one key that come
/// one after another summed: a count kept in shards, read in its key's order without grouping.
pub(crate) fn summed_runs(rows: &[Row], key: &str) -> Result<Vec<(i64, i64)>> {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for r in rows {
        let (k, n) = (r.i64(key)?, r.i64("n")?);
        match runs.last_mut() {
            Some((last, sum)) if *last == k => *sum += n,
            _ => runs.push((k, n)),
        }
    }
    Ok(runs)
}
