//! Order fences (migration 39): deep pages of a list in the order of one of its fields.
//!
//! A list ordered by a field is cut into ranges at fences, keys `(value, id)` in that order;
//! triggers keep how many rows of each scope every range holds (`order_fence_counts`, fence 0
//! being the range below the first fence). A deep page sums the counts of the ranges in order
//! ([`Store::locate_ordered`]) and reads from its range's key, skipping fewer rows than a range
//! holds. nubis places the fences outside any request ([`Tx::fence_place`]): a range past
//! [`SPLIT_TIMES`] times its scope's chunk (between [`MIN_CHUNK`] and [`CHUNK`] rows, following
//! the scope's size) is cut into ranges of a chunk, an empty one is dropped. Where fences have
//! not been placed yet a page still comes out right, by skipping more rows.

use nubis_model::Result;

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::sql::{Sql, Val, push_window};
use crate::{Backend, Store, Tx};

/// The rows of a range once it is cut: a share of the scope's rows ([`RANGES`]), at least
/// [`MIN_CHUNK`] and at most [`CHUNK`] ([`chunk_sql`]). A per-parent list of 10,000 rows is cut
/// in ranges of 256, a list of 100,000 in ranges of 1,562, a million events in ranges of 2,048.
pub const CHUNK: i64 = 2_048;
/// The fewest rows a range is cut into.
pub const MIN_CHUNK: i64 = 256;
/// How many ranges a scope is cut into (while its ranges are between the bounds).
pub const RANGES: i64 = 64;
/// A range with more rows than this many times its scope's chunk is cut.
pub const SPLIT_TIMES: i64 = 4;
/// Fences are numbered in the order of their keys (migration 42), this far apart when spread
/// out: a range cut in pieces numbers them between its own number and the next fence's.
pub const GAP: i64 = 1 << 32;

/// Where a deep page in a field's order starts: after the key of its range (ascending) or before
/// the key of the next range (descending), skipping `skip` rows.
#[derive(Debug, Clone)]
pub(crate) struct FenceAt {
    lower: Option<(Val, i64)>,
    upper: Option<(Val, i64)>,
    desc: bool,
    pub skip: i64,
}

/// Reads of a deep page's range before the last one read is taken (see `locate_ordered`).
const LOCATE_TRIES: u32 = 4;

/// The rows of a whole list, for reading its keys alone: `FROM <table> <alias>`, the scope
/// column the kept counts count it by and the conditions every row of the list meets
/// (`AND ...`, as [`crate::sql::Listing::and`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows<'a> {
    pub from: &'a str,
    pub scope: &'a str,
    pub and: &'a str,
    pub scope_id: i64,
    pub backend: Backend,
}

impl Rows<'_> {
    /// What the keys of a page are read from: the list's first table alone when the rest of its
    /// `FROM` only joins other tables to it and the keys need nothing of them (the scope, the
    /// field, the id and the list's conditions are the first table's), else the whole `FROM`.
    fn keys_from(&self, expr: &str, id_col: &str) -> &str {
        let Some((first, _)) = self.from.split_once(" JOIN ") else { return self.from };
        let alias = first.rsplit(' ').next().unwrap_or_default();
        let own = |c: &str| c.strip_prefix(alias).is_some_and(|rest| rest.starts_with('.'));
        if only_of(self.and, alias) && own(self.scope) && own(expr) && own(id_col) { first } else { self.from }
    }

    /// Opens the PostgreSQL condition that takes a page's rows by the ids its keys give:
    /// ` AND id = ANY (ARRAY(SELECT id FROM .. WHERE scope = .. AND ..`, for the caller to bound,
    /// order, window and close with `))`.
    fn push_ids_of_keys(&self, sql: &mut Sql, expr: &str, id_col: &str) {
        sql.push(&format!(
            " AND {id_col} = ANY (ARRAY(SELECT {id_col} {} WHERE {} = ",
            self.keys_from(expr, id_col),
            self.scope
        ))
        .bind(Val::I64(self.scope_id));
        sql.push(self.and);
    }
}

/// Whether every qualified name in the SQL condition `cond` is a column of `alias` (`f.x`, never
/// `i.x`); a dot anywhere else (a number, a quoted text) counts as another table's, to be safe.
pub(crate) fn only_of(cond: &str, alias: &str) -> bool {
    cond.match_indices('.').all(|(at, _)| {
        let before = &cond[..at];
        if before.matches('\'').count() % 2 == 1 {
            return false;
        }
        let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        &before[start..] == alias
    })
}

impl FenceAt {
    /// Appends the condition that starts a page at the range (`(expr, id_col) >= key`
    /// ascending, `< next key` descending), for a list whose page is read by its own statement.
    pub fn push_bound(&self, sql: &mut Sql, expr: &str, id_col: &str) {
        let (op, bound) = if self.desc { ("<", &self.upper) } else { (">=", &self.lower) };
        if let Some((value, id)) = bound {
            sql.push(&format!(" AND ({expr}, {id_col}) {op} (")).bind(value.clone());
            sql.push(", ").bind(Val::I64(*id)).push(")");
        }
    }

    /// Appends the condition that picks the page's rows (`expr` is the field's column, `id_col`
    /// the list's id column, the order's tie-break), then its order and ` LIMIT n`.
    ///
    /// PostgreSQL seeks its index on (scope, field, id) by the pair: `(field, id) >= key`, and
    /// skips from there. SQLite seeks by the field alone and would walk every row of a
    /// low-cardinality field's value before the key, so there the page's ids are found from the
    /// keys alone: the rows of the range's value from its id on, then the values past it (two
    /// index ranges, each as long as the page reaches, read in turn), and the page reads those ids by primary
    /// key, its order written `+field` so that the planner does not walk the scope in the
    /// field's order to find them.
    pub fn push_page(&self, sql: &mut Sql, rows: &Rows<'_>, expr: &str, id_col: &str, n: u64) {
        let n = n.min(i64::MAX as u64) as i64;
        let m = self.skip.saturating_add(n);
        let (dir, id_op, past_op, bound) =
            if self.desc { ("DESC", "<", "<", &self.upper) } else { ("ASC", ">=", ">", &self.lower) };
        let branch = |sql: &mut Sql, cond: &dyn Fn(&mut Sql), order: &str, alias: &str| {
            sql.push(&format!(
                "SELECT * FROM (SELECT {id_col} AS nubis_i {} WHERE {} = ",
                rows.keys_from(expr, id_col),
                rows.scope
            ))
            .bind(Val::I64(rows.scope_id));
            sql.push(rows.and);
            cond(sql);
            sql.push(&format!(" ORDER BY {order} LIMIT ")).bind(Val::I64(m)).push(&format!(") {alias}"));
        };
        let in_order = format!("{expr} {dir}, {id_col} {dir}");
        if rows.backend == Backend::Postgres {
            // The page's ids first, skipped to in the index on (scope, field, id) alone, as an
            // array (an InitPlan) that the statement then reads by key. Skipping in the
            // statement that reads whole rows let PostgreSQL merge-join a joined list's tables
            // from their start and sort (13.7 ms a page of an instance's 10,000 balancers by
            // label; 0.9 ms this way).
            rows.push_ids_of_keys(sql, expr, id_col);
            if let Some((value, id)) = bound {
                sql.push(&format!(" AND ({expr}, {id_col}) {id_op} (")).bind(value.clone());
                sql.push(", ").bind(Val::I64(*id)).push(")");
            }
            sql.push(&format!(" ORDER BY {in_order}"));
            push_window(sql, self.skip.max(0) as u64, n as u64);
            sql.push(&format!(")) ORDER BY {in_order} LIMIT ")).bind(Val::I64(n));
            return;
        }
        sql.push(&format!(" AND {id_col} IN (SELECT nubis_i FROM ("));
        match bound {
            Some((value, id)) => {
                let at_value = |s: &mut Sql| {
                    s.push(&format!(" AND {expr} = ")).bind(value.clone());
                    s.push(&format!(" AND {id_col} {id_op} ")).bind(Val::I64(*id));
                };
                branch(sql, &at_value, &format!("{id_col} {dir}"), "a");
                sql.push(" UNION ALL ");
                let past = |s: &mut Sql| {
                    s.push(&format!(" AND {expr} {past_op} ")).bind(value.clone());
                };
                branch(sql, &past, &in_order, "b");
            }
            None => branch(sql, &|_| {}, &in_order, "a"),
        }
        // Every row of the first range comes before every row of the second in the order, and
        // SQLite reads a UNION ALL's members in turn: the keys need no sorting.
        sql.push(") u");
        push_window(sql, self.skip.max(0) as u64, n as u64);
        sql.push(")");
        sql.push(&format!(" ORDER BY +{expr} {dir}, {id_col} {dir} LIMIT ")).bind(Val::I64(n));
    }
}

/// A deep page in a field's order on PostgreSQL whose range the page's own statement finds:
/// `nubis_locate_fenced` (migration 76) walks the order's range counts and reads the range's key
/// in the statement's snapshot, one round trip instead of three and no count handed to nubis
/// ([`FenceWalk::push_with`]). The page is read ascending from the range's key (below the first
/// fence, from the least key), `skip` rows in and `len` rows long, and sorted in its order: a
/// descending page is the ascending run that ends at its first row, so the page needs no upper
/// key. Past the end the key is NULL and the page has no rows.
#[derive(Debug, Clone)]
pub(crate) struct FenceWalk<'a> {
    /// The order (`<list kind>.<field>`), as `order_fence_kinds` names it.
    pub kind: String,
    /// Whether the order's keys are integers (`k_int`), else text (`k_text`).
    pub int: bool,
    pub offset: i64,
    pub desc: bool,
    pub rows: Rows<'a>,
    pub expr: std::borrow::Cow<'static, str>,
    pub id_col: &'a str,
}

impl FenceWalk<'_> {
    /// Opens the statement with `WITH nubis_fat AS (...)`: where the page of `n` rows starts.
    pub fn push_with(&self, sql: &mut Sql, n: u64) {
        push_fenced_with(sql, &self.kind, self.rows.scope_id, self.offset, self.desc, n);
    }

    /// Appends the condition that picks the page's rows by their ids, read ascending from the
    /// range's key in the index on (scope, field, id) (see [`FenceAt::push_page`]), then the
    /// page's order and ` LIMIT n`.
    pub fn push_page(&self, sql: &mut Sql, n: u64) {
        let (expr, id_col, rows) = (self.expr.as_ref(), self.id_col, &self.rows);
        rows.push_ids_of_keys(sql, expr, id_col);
        sql.push(&format!(
            " AND {} ORDER BY {expr}, {id_col} LIMIT (SELECT len FROM nubis_fat) OFFSET (SELECT skip FROM nubis_fat)))",
            fenced_from(expr, id_col, self.int)
        ));
        let dir = if self.desc { "DESC" } else { "ASC" };
        sql.push(&format!(" ORDER BY {expr} {dir}, {id_col} {dir} LIMIT "))
            .bind(Val::I64(n.min(i64::MAX as u64) as i64));
    }
}

/// Opens a PostgreSQL statement with `WITH nubis_fat AS MATERIALIZED (...)`: where the page of
/// `n` rows at `offset` of the order `kind` (descending when `desc`) of `scope_id` starts, as
/// `nubis_locate_fenced` finds it (see [`FenceWalk`]).
pub(crate) fn push_fenced_with(sql: &mut Sql, kind: &str, scope_id: i64, offset: i64, desc: bool, n: u64) {
    // MATERIALIZED: the function runs once, before the page, not once per reference.
    sql.push("WITH nubis_fat AS MATERIALIZED (SELECT k_int, k_text, k_id, skip, len FROM nubis_locate_fenced(");
    sql.bind(Val::Str(kind.to_string())).push(", ").bind(Val::I64(scope_id));
    sql.push(", ").bind(Val::I64(offset)).push(", ").bind(Val::Bool(desc));
    sql.push(", ").bind(Val::I64(n.min(i64::MAX as u64) as i64)).push(")) ");
}

/// The condition that starts the ascending run of a page [`push_fenced_with`] located at its
/// range's key: `(expr, id_col) >= key`, the key an integer when `int`. Past the end the key is
/// NULL and no row meets it.
pub(crate) fn fenced_from(expr: &str, id_col: &str, int: bool) -> String {
    let key = if int { "k_int" } else { "k_text" };
    format!("({expr}, {id_col}) >= ((SELECT {key} FROM nubis_fat), (SELECT k_id FROM nubis_fat))")
}

/// The key of a fence (its value and id), when the row has one.
fn key(r: &Row, int: &str, text: &str, id: &str) -> Result<Option<(Val, i64)>> {
    let Some(id) = r.opt_i64(id)? else { return Ok(None) };
    Ok(match r.opt_i64(int)? {
        Some(v) => Some((Val::I64(v), id)),
        None => r.opt_str(text)?.map(|v| (Val::Str(v), id)),
    })
}

/// The rows of a range of a scope of `total` rows once it is cut, as SQL over the expression
/// `total` (both engines): the one place the rule is written.
///
/// Ranges cut while a scope was small stay small as it grows only until they pass
/// [`SPLIT_TIMES`] times the chunk of its new size, so a scope holds about [`RANGES`] ranges
/// per doubling of its rows below [`CHUNK`] times [`RANGES`], and a range per [`CHUNK`] rows
/// above: about 600 at a million rows, and a deep page locates its range in a few hundred counts.
pub(crate) fn chunk_sql(total: &str) -> String {
    // An integer division on both engines (PostgreSQL's sums are numeric).
    let share = format!("CAST({total} AS BIGINT) / {RANGES}");
    format!("(CASE WHEN {share} < {MIN_CHUNK} THEN {MIN_CHUNK} WHEN {share} > {CHUNK} THEN {CHUNK} ELSE {share} END)")
}

/// A range due to be cut (more than [`SPLIT_TIMES`] times its scope's chunk) or dropped (none).
#[derive(Debug, Clone)]
pub struct FenceDue {
    pub kind: String,
    pub scope_id: i64,
    pub fence: i64,
}

impl Store {
    /// Where the row at `offset` of the list `kind` (a list kind and a field: `instances.label`)
    /// of `scope_id` is, in the field's order (descending when `desc`); `None` past the end.
    /// SQLite's way; on PostgreSQL the page's own statement locates an order `order_fence_kinds`
    /// names ([`FenceWalk`], [`push_fenced_with`]).
    ///
    /// The ranges' counts are read in the order of their fence numbers, which is the keys'
    /// (one index range, summed here), then the keys of the range found and of the next, with
    /// that range's count again. The two reads are two snapshots: when the fence keeper cut the
    /// range in between (its count shrinks and new fences follow its key), the keys read would
    /// bound a smaller range than the one counted and the page would skip from the wrong end, so
    /// a changed count locates again (a write into the range changes it too: at most
    /// [`LOCATE_TRIES`] reads, then the last is taken, as a concurrent write moves any page).
    pub(crate) async fn locate_ordered(
        &self,
        kind: &str,
        scope_id: i64,
        offset: u64,
        desc: bool,
    ) -> Result<Option<FenceAt>> {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.locate_ordered_once(kind, scope_id, offset, desc).await? {
                None => return Ok(None),
                Some((at, same)) if same || tries >= LOCATE_TRIES => return Ok(Some(at)),
                Some(_) => continue,
            }
        }
    }

    /// One try of [`Store::locate_ordered`]: where the row is (`None` past the end), and whether
    /// the range's count was the same when its keys were read.
    async fn locate_ordered_once(
        &self,
        kind: &str,
        scope_id: i64,
        offset: u64,
        desc: bool,
    ) -> Result<Option<(FenceAt, bool)>> {
        // Each row is one range: SQLite keeps one shard of each, PostgreSQL's are summed by the
        // statement. The ranges are walked from the end the page counts from (its first, or
        // newest first its last), and no further than the range that holds the row: on SQLite
        // the rest are not read (half of them on average; 489 for a field of a million events).
        let dir = if desc { " DESC" } else { "" };
        let sql = match self.backend() {
            Backend::Sqlite => {
                format!("SELECT fence, n FROM order_fence_counts WHERE kind = $1 AND scope_id = $2 ORDER BY fence{dir}")
            }
            Backend::Postgres => format!(
                "SELECT fence, CAST(SUM(n) AS BIGINT) AS n FROM order_fence_counts WHERE kind = $1 AND scope_id = $2 \
                 GROUP BY fence ORDER BY fence{dir}"
            ),
        };
        let off = offset.min(i64::MAX as u64) as i64;
        // The rows of the ranges walked past, and the range that holds the row with its count.
        let mut passed = 0i64;
        let mut found = None;
        query(sql)
            .bind(kind)
            .bind(scope_id)
            .fetch_until(self.r(), |r| {
                let n = r.i64("n")?.max(0);
                if passed + n > off {
                    found = Some((r.i64("fence")?, n));
                    return Ok(true);
                }
                passed += n;
                Ok(false)
            })
            .await?;
        let Some((fence, n)) = found else { return Ok(None) };
        // The range's count as the keys are read (summed over its shards; with no fence at or
        // after it, nothing was cut after it either).
        let keys = query(
            "SELECT fence, k_int, k_text, k_id, (SELECT CAST(COALESCE(SUM(c.n), 0) AS BIGINT) FROM order_fence_counts c \
             WHERE c.kind = $1 AND c.scope_id = $2 AND c.fence = $3) AS n_now FROM order_fences \
             WHERE kind = $1 AND scope_id = $2 AND fence >= $3 ORDER BY fence LIMIT 2",
        )
        .bind(kind)
        .bind(scope_id)
        .bind(fence)
        .fetch_all(self.r())
        .await?;
        let mut same = true;
        let mut lower = None;
        let mut upper = None;
        for r in &keys {
            same &= r.i64("n_now")?.max(0) == n;
            let f = r.i64("fence")?;
            if f == fence {
                lower = key(r, "k_int", "k_text", "k_id")?;
            } else if upper.is_none() {
                upper = key(r, "k_int", "k_text", "k_id")?;
            }
        }
        // From the range's lower key ascending, or its upper key descending.
        let skip = off - passed;
        Ok(Some((FenceAt { lower, upper, desc, skip }, same)))
    }

    /// The ranges due to be cut or dropped. A range's count is spread over at most 8 shards
    /// (PostgreSQL; one on SQLite), so one due to be cut (past [`SPLIT_TIMES`] times at least
    /// [`MIN_CHUNK`]) has a shard past an eighth of that, and an empty one other than fence 0 has
    /// a shard at or below zero: only the scopes with such a shard are summed, not every scope of
    /// every list.
    pub async fn fences_due(&self) -> Result<Vec<FenceDue>> {
        let rows = query(format!(
            "WITH d AS (SELECT DISTINCT kind, scope_id FROM order_fence_counts WHERE n > $1 / 8 OR (fence <> 0 AND n <= 0)), \
             r AS (SELECT c.kind, c.scope_id, c.fence, SUM(c.n) AS n FROM order_fence_counts c \
                   JOIN d ON d.kind = c.kind AND d.scope_id = c.scope_id GROUP BY c.kind, c.scope_id, c.fence), \
             t AS (SELECT kind, scope_id, SUM(n) AS total FROM r GROUP BY kind, scope_id) \
             SELECT r.kind, r.scope_id, r.fence FROM r JOIN t ON t.kind = r.kind AND t.scope_id = r.scope_id \
             WHERE r.n > {SPLIT_TIMES} * {} OR (r.fence <> 0 AND r.n = 0)",
            chunk_sql("t.total")
        ))
        .bind(SPLIT_TIMES * MIN_CHUNK)
        .fetch_all(self.r())
        .await?;
        rows.iter()
            .map(|r| Ok(FenceDue { kind: r.str("kind")?, scope_id: r.i64("scope_id")?, fence: r.i64("fence")? }))
            .collect()
    }
}

impl Tx<'_> {
    /// Cuts a range past [`SPLIT_TIMES`] times its scope's chunk ([`chunk_sql`]) into ranges of
    /// that many rows (their counts read from the rows themselves), or drops an empty one;
    /// nothing when it is neither any more.
    /// On PostgreSQL, holds the kind's lock of the scope, so that no writer counts a row into a
    /// range meanwhile, and does nothing when a writer holds it; it must be the transaction's
    /// first statement: the transaction reads at
    /// `READ COMMITTED`, so that what it reads after the lock includes every count written
    /// before it (a `SERIALIZABLE` snapshot would be taken before the wait).
    pub async fn fence_place(&mut self, due: &FenceDue) -> Result<()> {
        let (kind, scope, fence) = (due.kind.as_str(), due.scope_id, due.fence);
        if self.backend() == Backend::Postgres {
            query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED").execute(self.h()).await?;
            // The lock the scope shares with others (`nubis_fence_lock`, migration 39), taken
            // only if it is free now: a waiting request for it would queue every writer of the
            // list behind it, so an API write would wait for whatever long statement holds the
            // lock shared. A range not cut now is cut at a later round.
            let locked = query(
                "SELECT pg_try_advisory_xact_lock(hashtextextended($1 || ':' || CAST($2 % 64 AS TEXT), 0)) AS locked",
            )
            .bind(kind)
            .bind(scope)
            .fetch_one(self.h())
            .await?
            .bool("locked")?;
            if !locked {
                return Ok(());
            }
        }
        let Some(def) =
            query("SELECT tbl, scope_col, col, id_col, is_int, cond FROM order_fence_kinds WHERE kind = $1")
                .bind(kind)
                .fetch_optional(self.h())
                .await?
        else {
            return Ok(());
        };
        let (tbl, scope_col, col, id_col) =
            (def.str("tbl")?, def.str("scope_col")?, def.str("col")?, def.str("id_col")?);
        let (int, cond) = (def.bool("is_int")?, def.str("cond")?);
        let kcol = if int { "k_int" } else { "k_text" };
        let sizes = query(format!(
            "SELECT CAST(COALESCE(SUM(CASE WHEN fence = $3 THEN n ELSE 0 END), 0) AS BIGINT) AS n, \
             CAST({} AS BIGINT) AS chunk FROM order_fence_counts WHERE kind = $1 AND scope_id = $2",
            chunk_sql("COALESCE(SUM(n), 0)")
        ))
        .bind(kind)
        .bind(scope)
        .bind(fence)
        .fetch_one(self.h())
        .await?;
        let (n, chunk) = (sizes.i64("n")?, sizes.i64("chunk")?);
        let drop_counts = |sql: &str| query(sql.to_string()).bind(kind.to_string()).bind(scope).bind(fence);
        if fence != 0 && n == 0 {
            drop_counts("DELETE FROM order_fence_counts WHERE kind = $1 AND scope_id = $2 AND fence = $3")
                .execute(self.h())
                .await?;
            drop_counts("DELETE FROM order_fences WHERE kind = $1 AND scope_id = $2 AND fence = $3")
                .execute(self.h())
                .await?;
            return Ok(());
        }
        if n <= SPLIT_TIMES * chunk {
            return Ok(());
        }
        // The range: from this fence's key (none for fence 0) to the next fence's key.
        let lower = match fence {
            0 => None,
            _ => {
                let sql = format!(
                    "SELECT {kcol} AS k, k_id FROM order_fences WHERE kind = $1 AND scope_id = $2 AND fence = $3"
                );
                match query(sql).bind(kind).bind(scope).bind(fence).fetch_optional(self.h()).await? {
                    Some(r) => Some(fence_key(&r, int)?),
                    None => return Ok(()),
                }
            }
        };
        let mut next = Sql::new(&format!("SELECT {kcol} AS k, k_id FROM order_fences WHERE kind = "));
        next.bind(Val::Str(kind.to_string())).push(" AND scope_id = ").bind(Val::I64(scope));
        if let Some((v, id)) = &lower {
            next.push(&format!(" AND ({kcol}, k_id) > (")).bind(v.clone()).push(", ").bind(Val::I64(*id)).push(")");
        }
        next.push(&format!(" ORDER BY {kcol}, k_id LIMIT 1"));
        let upper = next.query().fetch_optional(self.h()).await?.map(|r| fence_key(&r, int)).transpose()?;
        let range = |sql: &mut Sql| {
            // A list kept from two scope columns (`a,b`: a transfer is in the list of the
            // account that made it and of the one that accepted it) holds the rows of either.
            sql.push(&format!(" FROM {tbl} WHERE ("));
            for (i, c) in scope_col.split(',').enumerate() {
                sql.push(if i == 0 { "" } else { " OR " }).push(&format!("{c} = ")).bind(Val::I64(scope));
            }
            sql.push(")");
            if !cond.is_empty() {
                sql.push(&format!(" AND {cond}"));
            }
            if let Some((v, id)) = &lower {
                sql.push(&format!(" AND ({col}, {id_col}) >= ("))
                    .bind(v.clone())
                    .push(", ")
                    .bind(Val::I64(*id))
                    .push(")");
            }
            if let Some((v, id)) = &upper {
                sql.push(&format!(" AND ({col}, {id_col}) < ("))
                    .bind(v.clone())
                    .push(", ")
                    .bind(Val::I64(*id))
                    .push(")");
            }
        };
        let mut count = Sql::new("SELECT COUNT(*)");
        range(&mut count);
        let rows = count.query().fetch_i64(self.h()).await?;
        // Every chunk-th row (by its number in the range) starts a new range.
        let mut cuts = Sql::new(&format!(
            "SELECT c, i, r FROM (SELECT {col} AS c, {id_col} AS i, ROW_NUMBER() OVER (ORDER BY {col}, {id_col}) AS r"
        ));
        range(&mut cuts);
        cuts.push(") x WHERE x.r % ").bind(Val::I64(chunk)).push(" = 1 AND x.r > 1 ORDER BY x.r");
        let cuts = cuts.query().fetch_all(self.h()).await?;
        // The new fences are numbered between this range's number and the next one's, so that
        // the numbers stay in the order of the keys; without room there, the scope's fences are
        // spread out again first.
        let mut fence = fence;
        let mut step = self.fence_room(kind, scope, fence).await? / (cuts.len() as i64 + 1);
        if step < 1 {
            fence = self.fences_spread(kind, scope, fence).await?;
            step = self.fence_room(kind, scope, fence).await? / (cuts.len() as i64 + 1);
        }
        query("DELETE FROM order_fence_counts WHERE kind = $1 AND scope_id = $2 AND fence = $3")
            .bind(kind)
            .bind(scope)
            .bind(fence)
            .execute(self.h())
            .await?;
        let mut starts = vec![(fence, 1i64)];
        for (j, c) in cuts.iter().enumerate() {
            let number = fence + step * (j as i64 + 1);
            let mut insert =
                Sql::new(&format!("INSERT INTO order_fences (kind, scope_id, fence, {kcol}, k_id) VALUES ("));
            insert.bind(Val::Str(kind.to_string())).push(", ").bind(Val::I64(scope)).push(", ").bind(Val::I64(number));
            let value = if int { Val::I64(c.i64("c")?) } else { Val::Str(c.str("c")?) };
            insert.push(", ").bind(value).push(", ").bind(Val::I64(c.i64("i")?)).push(")");
            insert.query().execute(self.h()).await?;
            starts.push((number, c.i64("r")?));
        }
        for (j, (f, start)) in starts.iter().enumerate() {
            let end = starts.get(j + 1).map_or(rows + 1, |(_, s)| *s);
            query("INSERT INTO order_fence_counts (kind, scope_id, fence, shard, n) VALUES ($1, $2, $3, 0, $4)")
                .bind(kind)
                .bind(scope)
                .bind(*f)
                .bind(end - start)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// The numbers free after fence `fence`: up to the next fence's number, or [`GAP`] past the
    /// last fence.
    async fn fence_room(&mut self, kind: &str, scope: i64, fence: i64) -> Result<i64> {
        let next =
            query("SELECT MIN(fence) AS next FROM order_fences WHERE kind = $1 AND scope_id = $2 AND fence > $3")
                .bind(kind)
                .bind(scope)
                .bind(fence)
                .fetch_one(self.h())
                .await?
                .opt_i64("next")?;
        Ok(next.unwrap_or(fence.saturating_add(GAP)) - fence)
    }

    /// Numbers the scope's fences `GAP` apart again, in their order (which is the keys'), and
    /// returns the new number of fence `fence`.
    async fn fences_spread(&mut self, kind: &str, scope: i64, fence: i64) -> Result<i64> {
        let numbers = query("SELECT fence FROM order_fences WHERE kind = $1 AND scope_id = $2 ORDER BY fence")
            .bind(kind)
            .bind(scope)
            .fetch_column_i64(self.h())
            .await?;
        for table in ["order_fences", "order_fence_counts"] {
            query(format!("UPDATE {table} SET fence = -fence WHERE kind = $1 AND scope_id = $2 AND fence > 0"))
                .bind(kind)
                .bind(scope)
                .execute(self.h())
                .await?;
        }
        let mut moved = fence;
        for (j, old) in numbers.iter().enumerate() {
            let new = GAP * (j as i64 + 1);
            if *old == fence {
                moved = new;
            }
            for table in ["order_fences", "order_fence_counts"] {
                query(format!("UPDATE {table} SET fence = $4 WHERE kind = $1 AND scope_id = $2 AND fence = $3"))
                    .bind(kind)
                    .bind(scope)
                    .bind(-old)
                    .bind(new)
                    .execute(self.h())
                    .await?;
            }
        }
        Ok(moved)
    }
}

/// A fence's key read as `k, k_id`.
fn fence_key(r: &Row, int: bool) -> Result<(Val, i64)> {
    Ok((if int { Val::I64(r.i64("k")?) } else { Val::Str(r.str("k")?) }, r.i64("k_id")?))
}

#[cfg(test)]
mod tests {
    use super::{Rows, chunk_sql};
    use crate::Backend;

    #[test]
    fn a_scope_is_cut_in_ranges_that_follow_its_size_between_the_bounds() {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        let chunk = |total: i64| -> i64 {
            db.query_row(&format!("SELECT {}", chunk_sql(&total.to_string())), [], |r| r.get(0)).unwrap()
        };
        assert_eq!(chunk(0), 256);
        assert_eq!(chunk(10_000), 256, "a per-parent list of 10,000");
        assert_eq!(chunk(16_384), 256);
        assert_eq!(chunk(16_448), 257);
        assert_eq!(chunk(100_000), 1_562, "100,000 sign-ins");
        assert_eq!(chunk(131_072), 2_048);
        assert_eq!(chunk(1_000_000), 2_048, "a million events");
    }

    #[test]
    fn the_keys_of_a_joined_list_are_read_from_its_first_table_when_they_are_all_there() {
        let rows = |from, scope, and| Rows { from, scope, and, scope_id: 1, backend: Backend::Postgres };
        let joined = "FROM address_balancers x JOIN nodebalancers b ON b.id = x.nodebalancer_id";
        let r = rows(joined, "x.scope", "");
        assert_eq!(r.keys_from("x.label", "x.nodebalancer_id"), "FROM address_balancers x");
        assert_eq!(r.keys_from("b.label", "x.nodebalancer_id"), joined);
        assert_eq!(r.keys_from("COALESCE(x.label, '')", "x.nodebalancer_id"), joined);
        assert_eq!(rows(joined, "x.scope", " AND b.status = 'x'").keys_from("x.label", "x.nodebalancer_id"), joined);
        assert_eq!(rows(joined, "b.account_id", "").keys_from("x.label", "x.nodebalancer_id"), joined);
        // The list's own conditions on the first table alone keep the keys there.
        let own = rows(joined, "x.scope", " AND x.purpose = 'vpc' AND x.range IS NOT NULL");
        assert_eq!(own.keys_from("x.label", "x.nodebalancer_id"), "FROM address_balancers x");
        assert_eq!(
            rows(joined, "x.scope", " AND xx.purpose = 'vpc'").keys_from("x.label", "x.nodebalancer_id"),
            joined
        );
        assert_eq!(rows(joined, "x.scope", " AND x.purpose = 'x.b'").keys_from("x.label", "x.nodebalancer_id"), joined);
        let left = "FROM a x LEFT JOIN b y ON y.id = x.b_id";
        assert_eq!(rows(left, "x.s", "").keys_from("x.label", "x.id"), left);
        assert_eq!(rows("FROM events e", "e.account_id", "").keys_from("e.action", "e.id"), "FROM events e");
        assert_eq!(
            rows("FROM xs xx JOIN y ON y.id = xx.id", "x.s", "").keys_from("x.a", "x.id"),
            "FROM xs xx JOIN y ON y.id = xx.id"
        );
    }
}
