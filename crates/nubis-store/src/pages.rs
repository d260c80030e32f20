//! Pages of the lists: one page read by SQL and the number of rows of the whole list; a deep
//! page starts where the kept counts say (docs/decisions.md, "Pages located by kept block
//! counts" and "Deep pages in a field's order"): a block of ids (`row_blocks`, migration 36) in
//! the list's own order, a range of the order fences (`fences`) in a field's order.

use nubis_model::Result;
use nubis_model::filter::{CmpOp, Cond, Filter, Order};

use crate::Backend;
use crate::fences::{FenceWalk, Rows};
use crate::sql::{
    Column, Listing, SCAN_BUDGET, Sql, Val, Visibility, push_filter_led, push_kept_count, push_order, push_order_led,
    push_scope, push_scope_led, push_scope_unindexed, push_sorted_order, push_unscoped, push_window,
};

/// Pages that start this deep or deeper are located by the kept block counts (`row_blocks`);
/// shallower ones skip their rows with `OFFSET`, which costs less there.
pub(crate) const LOCATE_FROM: u64 = 256;

/// A filtered page on SQLite whose filter matches at most this many rows reads them through the
/// filter's index and sorts them, whatever order it asks for.
const SORT_AT: i64 = 1_000;

/// The levels of `row_blocks` (migration 36): a block of level `l` holds the ids whose
/// `id >> (BLOCK_BITS * l)` is its number, so each block holds 64 blocks of the level below.
const BLOCK_BITS: u32 = 6;
const LEVELS: i64 = 3;

/// Where a deep page starts: the id range of the 64-id block its first row is in, and how many
/// rows of the list that block holds before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    pub first: i64,
    pub last: i64,
    pub skip: i64,
}

impl Located {
    /// Appends the condition that starts a page at the block (`id >= first`, or `id <= last`
    /// newest first).
    pub fn push_start(&self, sql: &mut Sql, id_col: &str, desc: bool) {
        match desc {
            false => sql.push(&format!(" AND {id_col} >= ")).bind(Val::I64(self.first)),
            true => sql.push(&format!(" AND {id_col} <= ")).bind(Val::I64(self.last)),
        };
    }

    /// Appends ` LIMIT n OFFSET skip`.
    pub fn push_window(&self, sql: &mut Sql, page_size: u64) {
        push_window(sql, self.skip.max(0) as u64, page_size);
    }
}

/// Where a page of a whole list (every row of its scope, as its kept count counts them) starts.
pub(crate) enum DeepStart<'a> {
    /// Shallow, or no counts serve the order: the page skips its rows with `OFFSET`.
    Skip,
    /// A shallow page of a whole list: its rows skipped with `OFFSET` in the index on its scope
    /// and its order, with the scope written as a range and first in the order (the scope
    /// column, [`push_scope_led`]).
    Led(&'a str),
    /// Past the last row.
    Past,
    /// In id order (the list's own order, or an order by its id column): a block of ids, and
    /// the column the list's rows join on its id column, if any ([`joined_to`]).
    Block(Located, &'a str, bool, Option<&'a str>),
    /// In id order on PostgreSQL: like [`DeepStart::Block`], the block found by `nubis_locate`
    /// inside the page's own statement (one round trip instead of two), whose `WITH` names its
    /// result `nubis_at` ([`DeepStart::push_with`]). Past the end its bounds are NULL: no rows.
    Walk(Walk<'a>),
    /// In a field's order: a range of the order fences, from the field's column (and the list's
    /// id column).
    Fence(crate::fences::FenceAt, crate::fences::Rows<'a>, std::borrow::Cow<'static, str>, &'a str),
    /// In a field's order on PostgreSQL: like [`DeepStart::Fence`], the range found by
    /// `nubis_locate_fenced` inside the page's own statement, whose `WITH` names its result
    /// `nubis_fat` ([`DeepStart::push_with`]).
    FenceWalk(crate::fences::FenceWalk<'a>),
}

/// Where [`DeepStart::Walk`] walks: the list, how deep, in which direction, and the columns its
/// start bound goes on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Walk<'a> {
    kind: &'a str,
    scope_id: i64,
    offset: i64,
    desc: bool,
    id_col: &'a str,
    joined: Option<&'a str>,
}

impl DeepStart<'_> {
    /// Opens a statement that starts with `WITH nubis_at AS (...)`, the block of ids a
    /// [`DeepStart::Walk`] page starts at, or `WITH nubis_fat AS (...)`, the range a
    /// [`DeepStart::FenceWalk`] page of `page_size` rows starts in; nothing for any other start.
    /// Called before the statement's `SELECT`.
    pub fn push_with(&self, sql: &mut Sql, page_size: u64) {
        match self {
            DeepStart::Walk(w) => {
                // MATERIALIZED: the function runs once, before the page, not once per reference.
                sql.push("WITH nubis_at AS MATERIALIZED (SELECT first, last, skip FROM nubis_locate(");
                sql.bind(Val::Str(w.kind.to_string())).push(", ").bind(Val::I64(w.scope_id));
                sql.push(", ").bind(Val::I64(w.offset)).push(", ").bind(Val::Bool(w.desc)).push(")) ");
            }
            DeepStart::FenceWalk(w) => w.push_with(sql, page_size),
            _ => {}
        }
    }

    /// Appends the start condition, ` ORDER BY ...` (the filter's order, else `order`) and the
    /// window of `page_size` rows from `offset`.
    pub fn push_page(
        &self,
        sql: &mut Sql,
        cols: &[Column],
        filter: &Filter,
        order: &str,
        offset: u64,
        page_size: u64,
    ) -> Result<()> {
        match self {
            DeepStart::Block(at, id_col, desc, joined) => {
                at.push_start(sql, id_col, *desc);
                if let Some(j) = joined {
                    at.push_start(sql, j, *desc);
                }
                push_order(sql, cols, filter, order)?;
                at.push_window(sql, page_size);
            }
            DeepStart::Walk(w) => {
                let bound = if w.desc { "<= (SELECT last" } else { ">= (SELECT first" };
                for col in std::iter::once(w.id_col).chain(w.joined) {
                    sql.push(&format!(" AND {col} {bound} FROM nubis_at)"));
                }
                push_order(sql, cols, filter, order)?;
                sql.push(" LIMIT ").bind(Val::I64(page_size.min(i64::MAX as u64) as i64));
                sql.push(" OFFSET (SELECT skip FROM nubis_at)");
            }
            DeepStart::Fence(at, rows, expr, id_col) => at.push_page(sql, rows, expr.as_ref(), id_col, page_size),
            DeepStart::FenceWalk(w) => w.push_page(sql, page_size),
            DeepStart::Led(scope) => {
                push_order_led(sql, cols, filter, order, scope)?;
                push_window(sql, offset, page_size);
            }
            DeepStart::Skip | DeepStart::Past => {
                push_order(sql, cols, filter, order)?;
                push_window(sql, offset, page_size);
            }
        }
        Ok(())
    }
}

/// The column a list's `FROM` joins its id column to (`... JOIN nodebalancers b ON b.id =
/// x.nodebalancer_id` for the id column `x.nodebalancer_id`: `b.id`). A deep page's start bound
/// goes on both: PostgreSQL does not carry an inequality across a join, and a merge join would
/// read the joined table's key from its start.
fn joined_to<'a>(from: &'a str, id_col: &str) -> Option<&'a str> {
    let eq = format!(" = {id_col}");
    let at = from
        .match_indices(&eq)
        .map(|(i, _)| i)
        .find(|i| from[i + eq.len()..].chars().next().is_none_or(|c| c == ' '))?;
    from[..at].rsplit(' ').next().filter(|c| !c.is_empty())
}

/// The first table of a list's `FROM` (`FROM instance_interfaces f`) when the rest only joins
/// other tables to it by key and the keys of a filtered page, or of a page sorted in an order no
/// index serves, need nothing of them: the list's scope, its conditions, who sees it, every field
/// the filter names or orders by, and its id column (the first table's `id`, so that a key is one
/// row) are all the first table's own columns. Such a page skips its rows and counts its matches
/// in the first table's indexes alone, then reads its rows by key: skipping and counting through
/// the join cost two index reads per row matched (4,000 VPC addresses of one region, 15-20 ms a
/// page on PostgreSQL).
///
/// On SQLite a page sorted from its few matches ([`SORT_AT`]) keeps the join (see fetch_window).
fn own_table<'a>(l: &Listing<'a>, v: &Visibility<'_>, filter: &Filter) -> Option<&'a str> {
    fn paths<'f>(c: &'f Cond, out: &mut Vec<&'f str>) {
        match c {
            Cond::And(parts) | Cond::Or(parts) => parts.iter().for_each(|p| paths(p, out)),
            Cond::Field { path, .. } => out.push(path),
        }
    }
    let (first, _) = l.from.split_once(" JOIN ")?;
    let alias = first.rsplit(' ').next().filter(|a| !a.is_empty())?;
    let own = |sql: &str| crate::fences::only_of(sql, alias);
    let mut named = Vec::new();
    if let Some(c) = &filter.cond {
        paths(c, &mut named);
    }
    named.extend(filter.order_by.as_deref());
    let fields = named.iter().all(|p| l.cols.iter().find(|c| c.path == *p).is_some_and(|c| own(c.expr)));
    let id = l.order.strip_suffix(" DESC").unwrap_or(l.order);
    let seen = v.grant.is_none_or(|g| own(g.2)) && v.and.is_none_or(|a| own(a.0) && own(a.2));
    let keyed = id == format!("{alias}.id");
    (fields && keyed && seen && own(l.scope) && own(l.and)).then_some(first)
}

/// The width of a block of `row_blocks` in blocks of the level below (in ids at level 1).
const WIDTH: i64 = 1 << BLOCK_BITS;
/// The column a page read with its kept count carries the count in.
const KEPT_TOTAL: &str = "nubis_kept_total";

impl crate::Store {
    /// One page of a list and the number of rows the whole list has.
    pub(crate) async fn fetch_page(
        &self,
        l: &Listing<'_>,
        v: &Visibility<'_>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<crate::db::Row>, u64)> {
        self.fetch_window(l, v, filter, page.saturating_sub(1).saturating_mul(page_size), page_size).await
    }

    /// `page_size` rows of a list from `offset` on, and the number of rows the whole list has.
    pub(crate) async fn fetch_window(
        &self,
        l: &Listing<'_>,
        v: &Visibility<'_>,
        filter: &Filter,
        offset: u64,
        page_size: u64,
    ) -> Result<(Vec<crate::db::Row>, u64)> {
        let own = without_scope(filter, l, v.scope_id);
        let filter = own.as_ref().unwrap_or(filter);
        if let Some(kind) = l.kept_count.filter(|_| !l.serves(filter)) {
            let n = self.kept_count(v.scope_id, kind).await?;
            if n > SCAN_BUDGET {
                return Err(l.unserved(n));
            }
        }
        // An unfiltered list with a kept count reads it in the same statement (one round trip).
        let kept = l.kept_count.filter(|_| filter.cond.is_none() && v.grant.is_none() && v.and.is_none());
        let folded = kept.and_then(|kind| l.select.strip_suffix(l.from).map(|cols| (kind, cols)));
        let start = match kept {
            Some(kind) if offset >= LOCATE_FROM => {
                let rows =
                    Rows { from: l.from, scope: l.scope, and: l.and, scope_id: v.scope_id, backend: self.backend() };
                self.deep_start(kind, rows, offset, l.cols, filter, l.order).await?
            }
            _ => DeepStart::Skip,
        };
        // A page of the whole list that skips its rows reads them in the index on its scope.
        let start = match start {
            DeepStart::Skip if kept.is_some() => DeepStart::Led(l.scope),
            start => start,
        };
        if let DeepStart::Past = start {
            // Past the end: no rows, and the kept count.
            let kind = kept.unwrap_or_default();
            return Ok((Vec::new(), self.kept_count(v.scope_id, kind).await?.max(0) as u64));
        }
        // SQLite plans a filtered page without knowing how many rows the filter matches (its
        // statistics are averages per column): for a rare value of a field with few values it
        // may walk the whole list in the order's index. Counting first (an index range of the
        // matches) tells: up to SORT_AT matches are read through the filter's index and sorted.
        let counted = match kept {
            None if self.backend() == Backend::Sqlite
                && (filter.cond.is_some() || v.and.is_some() || v.grant.is_some()) =>
            {
                Some(self.count_matching(l, v, filter).await?)
            }
            _ => None,
        };
        let sort = counted.is_some_and(|n| n <= SORT_AT);
        let mut sql = Sql::default();
        start.push_with(&mut sql, page_size);
        // A filtered page, or a page of the whole list in an order no index serves (sorted): its
        // keys from the first table alone, then its rows by key (see own_table).
        let sorted = filter.order_by.is_some() && !l.serves(filter);
        //
        // Not on SQLite for a page sorted from its few matches: there the keys alone are covered by
        // a partial index on (account, when, id, status) of the maintenance windows, which SQLite's
        // statistics (averages per column) make it read whole rather than the status index that
        // finds the few (25.6 ms against 0.2 ms a page); with the join no index covers the page,
        // and reading its few matches through the join costs little.
        let keyed = (kept.is_none() && !sort) || (sorted && matches!(start, DeepStart::Led(_) | DeepStart::Skip));
        if let Some(first) = keyed.then(|| own_table(l, v, filter)).flatten() {
            let pg = self.backend() == Backend::Postgres;
            sql.push(l.select);
            push_unscoped(&mut sql, l, v);
            let id = l.order.strip_suffix(" DESC").unwrap_or(l.order);
            sql.push(&if pg {
                format!(" AND {id} = ANY (ARRAY(SELECT {id} {first}")
            } else {
                format!(" AND {id} IN (SELECT {id} {first}")
            });
            push_scope(&mut sql, l, v);
            push_filter_led(&mut sql, self.backend(), l.cols, filter, l.led(v), l.order)?;
            push_order(&mut sql, l.cols, filter, l.order)?;
            push_window(&mut sql, offset, page_size);
            // The page's rows by key, sorted: SQLite would otherwise walk the order's index over
            // the whole list and check each row against the keys.
            if pg {
                push_order(sql.push("))"), l.cols, filter, l.order)?;
            } else {
                push_sorted_order(sql.push(")"), l.cols, filter, l.order)?;
            }
            let rows = sql.query().fetch_all(self.r()).await?;
            let total = match kept {
                _ if counted.is_some() => counted.unwrap_or_default(),
                _ if !rows.is_empty() && (rows.len() as u64) < page_size => {
                    offset.min(i64::MAX as u64) as i64 + rows.len() as i64
                }
                _ if rows.is_empty() && offset == 0 => 0,
                Some(kind) => self.kept_count(v.scope_id, kind).await?,
                None => self.count_matching(l, v, filter).await?,
            };
            return Ok((rows, total.max(0) as u64));
        }
        match folded {
            Some((kind, cols)) => {
                sql.push(cols.trim_end());
                sql.push(", (");
                push_kept_count(&mut sql, v.scope_id, kind);
                sql.push(&format!(") AS {KEPT_TOTAL} {}", l.from));
            }
            None => {
                sql.push(l.select);
            }
        }
        match start {
            DeepStart::Led(_) => push_scope_led(&mut sql, l, v),
            // The page's ids are read from the scope's rows in the statement's array; the scope
            // again here would offer a plan made for unknown values the scope's index to walk
            // and check each row against the ids (18 ms a page of a config's 10,000 nodes by
            // label on PostgreSQL; 0.5 ms read by the ids' primary key).
            // A list keyed by a parent's id within its scope (a service's firewalls by firewall
            // id, a firewall's rule versions) keeps the scope, the same id naming rows of other
            // scopes too, written so that no index serves it: on the scope's index SQLite
            // walked the scope's 10,000 devices to find the page's 100 (1.2 ms; 0.4 ms by id).
            DeepStart::Fence(..) | DeepStart::FenceWalk(..) if l.id_is_key() => push_unscoped(&mut sql, l, v),
            DeepStart::Fence(..) | DeepStart::FenceWalk(..) => push_scope_unindexed(&mut sql, l, v),
            _ => push_scope(&mut sql, l, v),
        }
        push_filter_led(&mut sql, self.backend(), l.cols, filter, l.led(v), l.order)?;
        if sort {
            push_sorted_order(&mut sql, l.cols, filter, l.order)?;
            push_window(&mut sql, offset, page_size);
        } else {
            start.push_page(&mut sql, l.cols, filter, l.order, offset, page_size)?;
        }
        let rows = sql.query().fetch_all(self.r()).await?;

        let total = match kept {
            _ if counted.is_some() => counted.unwrap_or_default(),
            // A page that is not full (and not past the end) tells the total by itself.
            _ if !rows.is_empty() && (rows.len() as u64) < page_size => {
                offset.min(i64::MAX as u64) as i64 + rows.len() as i64
            }
            _ if rows.is_empty() && offset == 0 => 0,
            Some(_) if folded.is_some() && !rows.is_empty() => crate::rows::RowExt::i64(&rows[0], KEPT_TOTAL)?,
            Some(kind) => self.kept_count(v.scope_id, kind).await?,
            _ => self.count_matching(l, v, filter).await?,
        };
        Ok((rows, total.max(0) as u64))
    }

    /// How many rows of the list the viewer sees match the filter.
    async fn count_matching(&self, l: &Listing<'_>, v: &Visibility<'_>, filter: &Filter) -> Result<i64> {
        let from = own_table(l, v, filter).unwrap_or(l.from);
        let mut count = Sql::new(&format!("SELECT COUNT(*) {from}"));
        push_scope(&mut count, l, v);
        push_filter_led(&mut count, self.backend(), l.cols, filter, l.led(v), l.order)?;
        count.query().fetch_i64(self.r()).await
    }

    /// Where a page at `offset` (at least [`LOCATE_FROM`]) of the whole list `kind` of
    /// `rows` starts: in its own order (`order`: its id column, `... DESC` newest first) or
    /// an order by its id column, at a block of ids; in another field's order, at a range of that
    /// order's fences, or by skipping where it has none. On PostgreSQL a block of ids, or a range
    /// of an order that has fences, is found by the page's own statement ([`DeepStart::Walk`],
    /// [`DeepStart::FenceWalk`]): the caller opens it with [`DeepStart::push_with`].
    pub(crate) async fn deep_start<'a>(
        &self,
        kind: &'a str,
        rows: Rows<'a>,
        offset: u64,
        cols: &'a [Column],
        filter: &Filter,
        order: &'a str,
    ) -> Result<DeepStart<'a>> {
        let scope_id = rows.scope_id;
        let (id_col, own_desc) = order.strip_suffix(" DESC").map_or((order, false), |c| (c, true));
        let by = filter.order_by.as_deref().map(|p| cols.iter().find(|c| c.path == p));
        let (col, desc) = match by {
            None => (None, own_desc),
            // An order no column serves is refused when the statement is built.
            Some(None) => return Ok(DeepStart::Skip),
            Some(Some(c)) => (Some(c).filter(|c| c.expr != id_col), filter.order == Order::Desc),
        };
        let Some(col) = col else {
            if self.backend() == Backend::Postgres {
                let offset = offset.min(i64::MAX as u64) as i64;
                let joined = joined_to(rows.from, id_col);
                return Ok(DeepStart::Walk(Walk { kind, scope_id, offset, desc, id_col, joined }));
            }
            return Ok(match self.locate(kind, scope_id, offset, desc).await? {
                Some(at) => DeepStart::Block(at, id_col, desc, joined_to(rows.from, id_col)),
                None => DeepStart::Past,
            });
        };
        let order = format!("{kind}.{}", col.path);
        if let Some(int) = self.fenced_order(&order) {
            let offset = offset.min(i64::MAX as u64) as i64;
            let expr = col.order_expr();
            return Ok(DeepStart::FenceWalk(FenceWalk { kind: order, int, offset, desc, rows, expr, id_col }));
        }
        match self.locate_ordered(&order, scope_id, offset, desc).await? {
            Some(at) => Ok(DeepStart::Fence(at, rows, col.order_expr(), id_col)),
            None if offset >= self.kept_count(scope_id, kind).await?.max(0) as u64 => Ok(DeepStart::Past),
            // No fences for this order.
            None => Ok(DeepStart::Skip),
        }
    }

    /// How many rows of a list (`kind` in `scope_id`) have an id below the level-1 block `id` is
    /// in, and that block's first id (`id` rounded down to a multiple of [`WIDTH`]): the block
    /// counts of the blocks before it, at most 64 of them at each level below the top. The rows
    /// of `id`'s own block (at most [`WIDTH`]) are the caller's to count, through its list's
    /// index.
    pub(crate) async fn rank_below(&self, kind: &str, scope_id: i64, id: i64) -> Result<(i64, i64)> {
        let (b1, b2, b3) = (id / WIDTH, id / (WIDTH * WIDTH), id / (WIDTH * WIDTH * WIDTH));
        // One index range of each level: the top level's blocks before `id`'s, then those of the
        // level below inside `id`'s block of the level above.
        let mut sql = Sql::new("SELECT ");
        for (i, (level, from, below)) in [(3, 0, b3), (2, b3 * WIDTH, b2), (1, b2 * WIDTH, b1)].into_iter().enumerate()
        {
            sql.push(if i == 0 { "(" } else { " + (" });
            sql.push("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM row_blocks WHERE kind = ");
            sql.bind(Val::Str(kind.to_string())).push(" AND scope_id = ").bind(Val::I64(scope_id));
            sql.push(" AND level = ").bind(Val::I64(level)).push(" AND block >= ").bind(Val::I64(from));
            sql.push(" AND block < ").bind(Val::I64(below)).push(")");
        }
        Ok((sql.query().fetch_i64(self.r()).await?, b1 * WIDTH))
    }

    /// Where the row at `offset` of a list (`kind` in `scope_id`, by id, descending when `desc`)
    /// is: each level sums the counts of at most 64 blocks (the whole top level), from the top
    /// down; `None` past the end. On PostgreSQL one call of `nubis_locate` (migration 36) does the
    /// walk next to the data; on SQLite, in the process, three statements of at most 64 rows.
    pub(crate) async fn locate(&self, kind: &str, scope_id: i64, offset: u64, desc: bool) -> Result<Option<Located>> {
        let off = offset.min(i64::MAX as u64) as i64;
        if self.backend() == Backend::Postgres {
            let row = crate::db::query("SELECT first, last, skip FROM nubis_locate($1, $2, $3, $4)")
                .bind(kind)
                .bind(scope_id)
                .bind(off)
                .bind(desc)
                .fetch_one(self.r())
                .await?;
            use crate::rows::RowExt;
            return Ok(match (row.opt_i64("first")?, row.opt_i64("last")?, row.opt_i64("skip")?) {
                (Some(first), Some(last), Some(skip)) => Some(Located { first, last, skip }),
                _ => None,
            });
        }
        self.walk_blocks(&[(kind, scope_id)], off, desc).await
    }

    /// [`Store::locate`] in the rows of a list (`kind` in `scope_id`) less those of another kept
    /// by the same ids (`less`, `(kind, scope id)`), every one of which is a row of the first:
    /// the block counts of the second are taken from the first's, block by block (an account's
    /// events less those a reader marked read). Both engines, three statements.
    pub(crate) async fn locate_less(
        &self,
        (kind, scope_id): (&str, i64),
        less: (&str, i64),
        offset: u64,
        desc: bool,
    ) -> Result<Option<Located>> {
        self.walk_blocks(&[(kind, scope_id), less], offset.min(i64::MAX as u64) as i64, desc).await
    }

    /// Walks the block counts from the top level down to the 64-id block that holds the row at
    /// `off`: the counts of `lists[0]`, less those of the other lists, in each block.
    async fn walk_blocks(&self, lists: &[(&str, i64)], off: i64, desc: bool) -> Result<Option<Located>> {
        let mut before = 0i64;
        let mut range: Option<i64> = None;
        let mut block = 0i64;
        for level in (1..=LEVELS).rev() {
            // A block's shards (and its counts of each list) come one after another in block
            // order and are summed here: no grouping.
            let mut sql = Sql::default();
            for (i, (kind, scope_id)) in lists.iter().enumerate() {
                sql.push(if i == 0 { "SELECT block, n" } else { " UNION ALL SELECT block, -n" });
                sql.push(" FROM row_blocks WHERE kind = ").bind(Val::Str(kind.to_string()));
                sql.push(" AND scope_id = ").bind(Val::I64(*scope_id)).push(" AND level = ").bind(Val::I64(level));
                if let Some(lo) = range {
                    sql.push(" AND block >= ").bind(Val::I64(lo)).push(" AND block < ").bind(Val::I64(lo + WIDTH));
                }
            }
            sql.push(if desc { " ORDER BY block DESC" } else { " ORDER BY block" });
            let blocks = crate::rows::summed_runs(&sql.query().fetch_all(self.r()).await?, "block")?;
            let mut found = None;
            for (b, n) in blocks {
                if before + n > off {
                    found = Some(b);
                    break;
                }
                before += n;
            }
            let Some(b) = found else { return Ok(None) };
            block = b;
            range = Some(b * WIDTH);
        }
        Ok(Some(Located { first: block * WIDTH, last: block * WIDTH + WIDTH - 1, skip: off - before }))
    }
}

/// `filter` without the conditions every row of the list meets, or `None` when it has none:
/// its scope's column equal to the scope's id (`{"vpc_id": 7}` on the addresses of VPC 7). Such
/// a condition would make the page a filtered one, counted and skipped through an index over the
/// whole list, where the list's kept count and blocks serve it.
fn without_scope(filter: &Filter, l: &Listing<'_>, scope_id: i64) -> Option<Filter> {
    let always = |c: &Cond| match c {
        Cond::Field { path, op: CmpOp::Eq, value } => {
            value.as_i64() == Some(scope_id) && l.cols.iter().any(|col| col.path == path && col.expr == l.scope)
        }
        _ => false,
    };
    let cond = match filter.cond.as_ref()? {
        c if always(c) => None,
        Cond::And(all) if all.iter().any(always) => {
            let rest: Vec<Cond> = all.iter().filter(|c| !always(c)).cloned().collect();
            (!rest.is_empty()).then_some(Cond::And(rest))
        }
        _ => return None,
    };
    Some(Filter { cond, ..filter.clone() })
}

#[cfg(test)]
mod tests {
    use super::{joined_to, without_scope};
    use crate::sql::{ColKind, Column, Listing};
    use nubis_model::filter::{Cond, Filter};

    #[test]
    fn a_condition_every_row_of_the_scope_meets_is_dropped_and_no_other() {
        let cols = [
            Column { path: "vpc_id", expr: "f.vpc_id", kind: ColKind::Int },
            Column { path: "region", expr: "f.region", kind: ColKind::Text },
        ];
        let l = Listing {
            select: "",
            from: "",
            scope: "f.vpc_id",
            and: "",
            cols: &cols,
            order: "f.id",
            kept_count: None,
            indexed: &[],
        };
        let f = |t: &str| Filter::parse(t, &["vpc_id", "region"]).unwrap();
        assert_eq!(without_scope(&f(r#"{"vpc_id": 7}"#), &l, 7), Some(Filter::default()));
        let region = f(r#"{"region": "us-east"}"#).cond.unwrap();
        let both = without_scope(&f(r#"{"vpc_id": 7, "region": "us-east"}"#), &l, 7).unwrap();
        assert_eq!(both.cond, Some(Cond::And(vec![region])));
        let ordered = without_scope(&f(r#"{"vpc_id": 7, "+order_by": "region"}"#), &l, 7).unwrap();
        assert_eq!((ordered.cond, ordered.order_by.as_deref()), (None, Some("region")));
        // Another VPC's id, another operator, an alternative: kept as they are.
        assert_eq!(without_scope(&f(r#"{"vpc_id": 8}"#), &l, 7), None);
        assert_eq!(without_scope(&f(r#"{"vpc_id": {"+gte": 7}}"#), &l, 7), None);
        assert_eq!(without_scope(&f(r#"{"+or": [{"vpc_id": 7}, {"region": "x"}]}"#), &l, 7), None);
        assert_eq!(without_scope(&f(r#"{"region": "us-east"}"#), &l, 7), None);
        // A column that is not the scope's.
        let account = Listing { scope: "f.account_id", ..l };
        assert_eq!(without_scope(&f(r#"{"vpc_id": 7}"#), &account, 7), None);
    }

    #[test]
    fn the_column_joined_to_the_id_column_is_found_whole() {
        let from = "FROM address_balancers x JOIN nodebalancers b ON b.id = x.nodebalancer_id";
        assert_eq!(joined_to(from, "x.nodebalancer_id"), Some("b.id"));
        assert_eq!(joined_to(from, "x.nodebalancer"), None);
        assert_eq!(joined_to("FROM firewalls f", "f.id"), None);
        let two = "FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id JOIN x y ON y.a = d.b";
        assert_eq!(joined_to(two, "d.firewall_id"), Some("f.id"));
    }
}
