//! Building SQL with numbered placeholders (`$1`, `$2`, ...) that both backends accept, and
//! compiling an X-Filter into a WHERE clause over declared columns.

use std::fmt::Write;

use crate::Backend;
use crate::db::{Query, query};
use nubis_model::filter::{CmpOp, Cond, Filter, Order};
use nubis_model::{Error, Result};
use serde_json::Value;

#[derive(Debug, Clone)]
pub(crate) enum Val {
    I64(i64),
    Str(String),
    Bool(bool),
}

/// A SQL text with its bound values.
#[derive(Debug, Default)]
pub(crate) struct Sql {
    pub text: String,
    binds: Vec<Val>,
    /// Planned for its values ([`Query::planned_for_its_values`]): set by [`push_filter`].
    for_its_values: bool,
    /// The field a filter of one value leads the page's order with ([`push_filter_led`]).
    lead: Option<String>,
}

impl Sql {
    pub fn new(text: &str) -> Sql {
        Sql { text: text.to_string(), ..Sql::default() }
    }
    pub fn push(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self
    }
    pub fn bind(&mut self, v: Val) -> &mut Self {
        self.binds.push(v);
        let _ = write!(self.text, "${}", self.binds.len());
        self
    }
    pub fn query(&self) -> Query {
        let mut q = query(self.text.clone());
        for b in &self.binds {
            q = match b {
                Val::I64(v) => q.bind(*v),
                Val::Str(v) => q.bind(v.as_str()),
                Val::Bool(v) => q.bind(*v),
            };
        }
        if self.for_its_values { q.planned_for_its_values() } else { q }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColKind {
    Int,
    /// An integer column that may be NULL: filtered as [`ColKind::Int`] (NULL matches no
    /// comparison), ordered by `COALESCE(column, 0)` (NULL first ascending, on both engines), the
    /// expression its order index and order fences are on (migration 47). 0 is no real value.
    IntOrNull,
    /// An amount kept in cents and shown in dollars: a filter's number is dollars, compared in
    /// whole cents (rounded to the nearest cent).
    Cents,
    Text,
    /// A text column that may be NULL: filtered as [`ColKind::Text`], ordered by
    /// `COALESCE(column, '')` like [`ColKind::IntOrNull`]. The empty string is no real value.
    TextOrNull,
    Bool,
    /// A flag kept as 0 or 1 in an integer column on both engines, shown as false or true:
    /// filtered as `column = 0|1` and ordered by the column, which an index on it serves.
    Flag,
    /// A list of strings kept as a JSON array in a TEXT column (`tags`): equality means "holds
    /// this element", `+neq` "does not hold it", `+contains` "an element contains this text".
    /// Each element is also a row of `list_tags` (migration 37) under `list` for the record `id`
    /// (an SQL expression): equality and `+neq` look the tag up there.
    Tags {
        list: &'static str,
        id: &'static str,
    },
    /// A list of strings kept in other rows: `expr` is the rows, with `{}` where the comparison
    /// of `inner` goes (`FROM ip_addresses a WHERE a.kind = 'ipv4' AND {}` with `a.address`), and
    /// `owner` is their column that holds the record's `id`. Equality is the records whose id
    /// the matching rows hold (`i.id IN (SELECT a.instance_id ...)`), which the database meets
    /// by reading those rows first, through an index on `inner`; any other comparison is
    /// checked record by record (`EXISTS`), and `+neq` means no row matches.
    Exists {
        inner: &'static str,
        owner: &'static str,
        id: &'static str,
    },
    /// Membership of a set named by an integer: `expr` is `<id> IN (SELECT ... WHERE <column> =
    /// {})` (or `NOT IN`), the value bound where `{}` is. Equality is the bare condition, which
    /// the database may meet by reading the set first; `+neq` its negation. No list orders by it.
    InSet,
}

impl ColKind {
    /// Whether a comparison of the field is the column's own (`expr < value`, ...), so that an
    /// index serving a range of it serves `+neq` too, written as two ranges ([`push_cond`]).
    fn ranged(self) -> bool {
        !matches!(self, ColKind::Tags { .. } | ColKind::Exists { .. } | ColKind::InSet)
    }
}

/// A filterable field and the SQL expression that yields it.
pub(crate) struct Column {
    pub path: &'static str,
    pub expr: &'static str,
    pub kind: ColKind,
}

impl Column {
    /// The expression the list is ordered by for `+order_by` this field: the column, for a
    /// column that may be NULL the column with NULL as the lowest value, and for a boolean 0 or
    /// 1, the expression its filter compares, its order index and its order fences are on
    /// (migration 65): a boolean is a different type on each engine.
    pub fn order_expr(&self) -> std::borrow::Cow<'static, str> {
        match self.kind {
            ColKind::IntOrNull => format!("COALESCE({}, 0)", self.expr).into(),
            ColKind::TextOrNull => format!("COALESCE({}, '')", self.expr).into(),
            ColKind::Bool => bool_int(self.expr).into(),
            _ => self.expr.into(),
        }
    }
}

/// A boolean expression as 0 or 1, the one integer both engines compare and index alike.
fn bool_int(expr: &str) -> String {
    format!("(CASE WHEN {expr} THEN 1 ELSE 0 END)")
}

fn bad(reason: String) -> Error {
    Error::invalid("X-Filter", reason)
}

/// Appends the filter's condition (` AND (...)`), and has the statement planned for its values
/// on PostgreSQL ([`Query::planned_for_its_values`]): how many rows a filter's value holds
/// decides how its page is best read.
pub(crate) fn push_filter(sql: &mut Sql, backend: Backend, cols: &[Column], filter: &Filter) -> Result<()> {
    if let Some(c) = &filter.cond {
        sql.for_its_values = true;
        sql.push(" AND (");
        push_cond(sql, backend, cols, c)?;
        sql.push(")");
    }
    Ok(())
}

/// [`push_filter`], except on PostgreSQL for a filter of one value ([`one_value`]): its
/// condition is written as a range of that value (`field >= v AND field <= v`), the page's order
/// is led by the field ([`push_order`] reads it from `sql`), and the statement is planned once
/// for unknown values like an unfiltered one.
///
/// Planned once, `field = $2` is taken to hold an average share of the rows, and the plan for a
/// page or a count may walk the whole list (a count of two events of a million by status: a
/// sequential scan, 152 ms). Planned for each value instead, every request plans both statements
/// again (0.4 ms each on the events of a large account), since the plan for unknown values is
/// estimated dearer than the value's own. A range of unknown values is taken to be small, and
/// an order led by the field is one only the index on (scope, field, id) gives without a sort:
/// planned once, that index serves every value, rare or not.
///
/// `ordered` are the fields with such an index (the list's `indexed`), and `order` the list's
/// own order (its id column, `... DESC` newest first).
pub(crate) fn push_filter_led(
    sql: &mut Sql,
    backend: Backend,
    cols: &[Column],
    filter: &Filter,
    ordered: &[&str],
    order: &str,
) -> Result<()> {
    let Some((expr, v)) = one_value(backend, cols, filter, ordered, order) else {
        return push_filter(sql, backend, cols, filter);
    };
    sql.push(&format!(" AND ({expr} >= ")).bind(v.clone()).push(&format!(" AND {expr} <= ")).bind(v).push(")");
    sql.lead = Some(expr);
    Ok(())
}

/// The expression of the field and the value of a filter that is one equality on a field of
/// `ordered` (an index on the scope, the field's order expression and the id serves it), with
/// no order or an order by that field or the id, on PostgreSQL; `None` for any other filter.
/// The expression is the field's order expression ([`Column::order_expr`]), so a field that may
/// be NULL is compared as its order index holds it; its stand-in for NULL (0 or the empty string)
/// is no value to lead by.
fn one_value(
    backend: Backend,
    cols: &[Column],
    filter: &Filter,
    ordered: &[&str],
    order: &str,
) -> Option<(String, Val)> {
    fn single(c: &Cond) -> Option<&Cond> {
        match c {
            Cond::And(parts) if parts.len() == 1 => single(&parts[0]),
            Cond::Field { op: CmpOp::Eq, .. } => Some(c),
            _ => None,
        }
    }
    if backend != Backend::Postgres {
        return None;
    }
    let Some(Cond::Field { path, value, .. }) = single(filter.cond.as_ref()?) else { return None };
    if path == "id" || !ordered.contains(&path.as_str()) {
        return None;
    }
    let col = cols.iter().find(|c| c.path == path)?;
    let id = order.strip_suffix(" DESC").unwrap_or(order);
    let by_id = |p: &str| cols.iter().any(|c| c.path == p && c.expr == id);
    if filter.order_by.as_deref().is_some_and(|p| p != path && !by_id(p)) {
        return None;
    }
    let v = match (col.kind, typed(col, CmpOp::Eq, value).ok()?) {
        (ColKind::IntOrNull, Val::I64(0)) => return None,
        (ColKind::TextOrNull, Val::Str(s)) if s.is_empty() => return None,
        (ColKind::Bool, Val::Bool(b)) => Val::I64(i64::from(b)),
        (
            ColKind::Int | ColKind::IntOrNull | ColKind::Cents | ColKind::Text | ColKind::TextOrNull | ColKind::Flag,
            v,
        ) => v,
        _ => return None,
    };
    Some((col.order_expr().into_owned(), v))
}

/// Appends ` ORDER BY ...` for the filter's ordering, or `default` when it has none.
pub(crate) fn push_order(sql: &mut Sql, cols: &[Column], filter: &Filter, default: &str) -> Result<()> {
    push_order_with(sql, cols, filter, default, "", None)
}

/// [`push_order`] led by the list's scope column, in the direction of the order's first term:
/// for a page whose scope is written as a range ([`push_scope_led`]), only an index that starts
/// with the scope gives that order.
pub(crate) fn push_order_led(
    sql: &mut Sql,
    cols: &[Column],
    filter: &Filter,
    default: &str,
    scope: &str,
) -> Result<()> {
    push_order_with(sql, cols, filter, default, "", Some(scope))
}

/// [`push_order`] with every term written `+term`, which SQLite reads as the same order but no
/// index's: the page's rows are found through the filter's index and sorted.
pub(crate) fn push_sorted_order(sql: &mut Sql, cols: &[Column], filter: &Filter, default: &str) -> Result<()> {
    push_order_with(sql, cols, filter, default, "+", None)
}

fn push_order_with(
    sql: &mut Sql,
    cols: &[Column],
    filter: &Filter,
    default: &str,
    plus: &str,
    lead: Option<&str>,
) -> Result<()> {
    let desc = match filter.order_by {
        Some(_) => filter.order == Order::Desc,
        None => default.split(',').next().is_some_and(|t| t.trim().ends_with(" DESC")),
    };
    let dir = if desc { "DESC" } else { "ASC" };
    sql.push(" ORDER BY");
    // The scope written as a range, then the field of a filter of one value (push_filter_led).
    for first in lead.map(str::to_string).into_iter().chain(sql.lead.clone()) {
        sql.push(&format!(" {first} {dir},"));
    }
    match &filter.order_by {
        Some(path) => {
            let col = column(cols, path)?;
            if matches!(col.kind, ColKind::Exists { .. } | ColKind::InSet) {
                return Err(bad(format!("Cannot order by '{path}'")));
            }
            let dir = if filter.order == Order::Desc { "DESC" } else { "ASC" };
            // The tie-break runs the same way, so that one index on (scope, field, id) serves
            // the whole order.
            let ties: Vec<String> = default
                .split(',')
                .map(|part| {
                    let part = part.trim();
                    let part = part.strip_suffix(" DESC").or_else(|| part.strip_suffix(" ASC")).unwrap_or(part);
                    format!("{plus}{part} {dir}")
                })
                .collect();
            sql.push(&format!(" {plus}{} {dir}, {}", col.order_expr(), ties.join(", ")));
        }
        None => {
            let terms: Vec<String> = default.split(',').map(|t| format!("{plus}{}", t.trim())).collect();
            sql.push(&format!(" {}", terms.join(", ")));
        }
    }
    Ok(())
}

pub(crate) fn column<'c>(cols: &'c [Column], path: &str) -> Result<&'c Column> {
    cols.iter().find(|c| c.path == path).ok_or_else(|| bad(format!("Cannot filter on '{path}'")))
}

fn push_cond(sql: &mut Sql, backend: Backend, cols: &[Column], c: &Cond) -> Result<()> {
    match c {
        Cond::And(parts) | Cond::Or(parts) => {
            if parts.is_empty() {
                sql.push(if matches!(c, Cond::And(_)) { "1 = 1" } else { "1 = 0" });
                return Ok(());
            }
            let joiner = if matches!(c, Cond::And(_)) { " AND " } else { " OR " };
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    sql.push(joiner);
                }
                sql.push("(");
                push_cond(sql, backend, cols, p)?;
                sql.push(")");
            }
            Ok(())
        }
        Cond::Field { path, op, value } => {
            let col = column(cols, path)?;
            let v = typed(col, *op, value)?;
            let instr = match backend {
                Backend::Sqlite => "instr",
                Backend::Postgres => "strpos",
            };
            if let ColKind::Exists { inner, owner, id } = col.kind {
                let (negate, cmp) = match op {
                    CmpOp::Eq => (false, "="),
                    CmpOp::Neq => (true, "="),
                    CmpOp::Gt => (false, ">"),
                    CmpOp::Gte => (false, ">="),
                    CmpOp::Lt => (false, "<"),
                    CmpOp::Lte => (false, "<="),
                    CmpOp::Contains => (false, ""),
                };
                let (before, after) = col.expr.split_once("{}").unwrap_or((col.expr, ""));
                if *op == CmpOp::Eq {
                    sql.push(&format!("{id} IN (SELECT {owner} {before}{inner} = ")).bind(v);
                    sql.push(&format!("{after} AND {owner} IS NOT NULL)"));
                    return Ok(());
                }
                if negate {
                    sql.push("NOT ");
                }
                sql.push(&format!("EXISTS (SELECT 1 {before}"));
                if *op == CmpOp::Contains {
                    sql.push(&format!("{instr}({inner}, ")).bind(v).push(") > 0");
                } else {
                    sql.push(&format!("{inner} {cmp} ")).bind(v);
                }
                sql.push(&format!("{after} AND {owner} = {id})"));
                return Ok(());
            }
            if let ColKind::InSet = col.kind {
                let (before, after) = col.expr.split_once("{}").unwrap_or((col.expr, ""));
                sql.push(if *op == CmpOp::Eq { "(" } else { "NOT (" }).push(before).bind(v).push(after).push(")");
                return Ok(());
            }
            if let ColKind::Tags { list, id } = col.kind {
                let Val::Str(s) = v else { unreachable!("typed() gives a string") };
                let tagged =
                    format!("{id} IN (SELECT t.entity_id FROM list_tags t WHERE t.kind = '{list}' AND t.tag = ");
                match op {
                    CmpOp::Eq => sql.push(&tagged).bind(Val::Str(s)).push(")"),
                    CmpOp::Neq => sql.push("NOT ").push(&tagged).bind(Val::Str(s)).push(")"),
                    _ => sql.push(&format!("{instr}({}, ", col.expr)).bind(Val::Str(s)).push(") > 0"),
                };
                return Ok(());
            }
            match op {
                CmpOp::Contains => {
                    let f = match backend {
                        Backend::Sqlite => "instr",
                        Backend::Postgres => "strpos",
                    };
                    sql.push(&format!("{f}({}, ", col.expr)).bind(v).push(") > 0");
                }
                _ => {
                    let o = match op {
                        CmpOp::Eq => "=",
                        CmpOp::Neq => "<>",
                        CmpOp::Gt => ">",
                        CmpOp::Gte => ">=",
                        CmpOp::Lt => "<",
                        CmpOp::Lte => "<=",
                        CmpOp::Contains => unreachable!("handled above"),
                    };
                    let (expr, v) = if col.kind == ColKind::Bool {
                        // Compare booleans as integers: SQLite stores 0/1, PostgreSQL has BOOLEAN.
                        let Val::Bool(b) = v else { unreachable!("typed() gives a bool") };
                        (bool_int(col.expr), Val::I64(i64::from(b)))
                    } else {
                        (col.expr.to_string(), v)
                    };
                    if *op == CmpOp::Neq {
                        // Two ranges, which the index that serves a range of the field serves
                        // (`<>` is no index's range); NULL meets neither, as it meets no `<>`.
                        sql.push(&format!("({expr} < "))
                            .bind(v.clone())
                            .push(&format!(" OR {expr} > "))
                            .bind(v)
                            .push(")");
                    } else {
                        sql.push(&format!("{expr} {o} ")).bind(v);
                    }
                }
            }
            Ok(())
        }
    }
}

fn typed(col: &Column, op: CmpOp, v: &Value) -> Result<Val> {
    let path = col.path;
    match (col.kind, v) {
        (ColKind::Int | ColKind::IntOrNull, Value::Number(n)) if op != CmpOp::Contains => {
            n.as_i64().map(Val::I64).ok_or_else(|| bad(format!("'{path}' needs an integer")))
        }
        (ColKind::Int | ColKind::IntOrNull, _) => Err(bad(format!("'{path}' needs an integer"))),
        (ColKind::Cents, Value::Number(n)) if op != CmpOp::Contains => match n.as_i64() {
            Some(dollars) => dollars.checked_mul(100).map(Val::I64),
            None => n.as_f64().map(|d| d * 100.0).filter(|c| c.abs() < 9.0e18).map(|c| Val::I64(c.round() as i64)),
        }
        .ok_or_else(|| bad(format!("'{path}' needs an amount in dollars"))),
        (ColKind::Cents, _) => Err(bad(format!("'{path}' needs an amount in dollars"))),
        (ColKind::Text | ColKind::TextOrNull | ColKind::Exists { .. }, Value::String(s)) => Ok(Val::Str(s.clone())),
        (ColKind::Text | ColKind::TextOrNull | ColKind::Exists { .. }, _) => {
            Err(bad(format!("'{path}' needs a string")))
        }
        (ColKind::Bool, Value::Bool(b)) if matches!(op, CmpOp::Eq | CmpOp::Neq) => Ok(Val::Bool(*b)),
        (ColKind::Flag, Value::Bool(b)) if matches!(op, CmpOp::Eq | CmpOp::Neq) => Ok(Val::I64(i64::from(*b))),
        (ColKind::Bool | ColKind::Flag, _) => Err(bad(format!("'{path}' needs true or false"))),
        (ColKind::InSet, Value::Number(n)) if matches!(op, CmpOp::Eq | CmpOp::Neq) => {
            n.as_i64().map(Val::I64).ok_or_else(|| bad(format!("'{path}' needs an integer")))
        }
        (ColKind::InSet, _) => Err(bad(format!("'{path}' needs an integer, compared for equality"))),
        (ColKind::Tags { .. }, Value::String(s)) if matches!(op, CmpOp::Eq | CmpOp::Neq | CmpOp::Contains) => {
            Ok(Val::Str(s.clone()))
        }
        (ColKind::Tags { .. }, _) => Err(bad(format!("'{path}' needs a string, compared for equality or +contains"))),
    }
}

/// How one list is read a page at a time: the rows of one account (optionally only those a
/// restricted user holds a grant on), X-Filter over declared columns, an order, and a count.
pub(crate) struct Listing<'a> {
    /// `SELECT <columns> FROM <table> <alias> [JOIN ...]`.
    pub select: &'a str,
    /// `FROM <table> <alias> [JOIN ...]`, for the count.
    pub from: &'a str,
    /// The column the list is scoped by: the account (`v.account_id`) or a parent record.
    pub scope: &'a str,
    /// Further conditions every row meets (`AND ...`), with no bound values.
    pub and: &'a str,
    pub cols: &'a [Column],
    /// The order when the filter names none, and the tie-break when it does (a unique column).
    pub order: &'a str,
    /// The `kind` of the kept count in `row_counts` that counts every row of the scope that
    /// meets `and` (the list's rows when nothing else narrows them), and of its block counts in `row_blocks` (migration 36),
    /// which locate deep pages; a list with one is ordered by its id column (`order`).
    pub kept_count: Option<&'a str>,
    /// The fields of `cols` an index on the scope and the field serves (besides `id`): see
    /// [`served`]. A list with a kept count refuses other filters once it is past [`SCAN_BUDGET`].
    pub indexed: &'a [&'a str],
}

impl Listing<'_> {
    /// Whether indexes serve the filter's conditions and its order ([`served`]).
    pub(crate) fn serves(&self, filter: &Filter) -> bool {
        served(filter, self.cols, self.indexed)
    }

    /// The fields a filter of one value may lead the page with ([`push_filter_led`]): the
    /// indexed ones, when the rows are the whole scope's. Not for a restricted user (the rows of
    /// its grants) nor a scope narrowed by one more condition (an instance's firewalls are the
    /// account's firewalls with a device on the instance): planned for unknown values, such a
    /// page would read the other condition's rows and sort them, where a plan for the value reads
    /// the field's few matches first (20 ms against 0.2 ms a page of an instance's 100,000
    /// firewalls by label).
    pub(crate) fn led(&self, v: &Visibility<'_>) -> &[&str] {
        if v.grant.is_none() && v.and.is_none() { self.indexed } else { &[] }
    }

    /// Whether the list's id column names one row of its table by itself: the table's `id` (or
    /// `seq`, the OAuth clients' unique order of creation), not a parent's id that is a key only
    /// within the scope (`d.firewall_id` of a service's firewalls, `v.version` of a firewall's
    /// rule versions, `x.nodebalancer_id` of an address's balancers).
    pub(crate) fn id_is_key(&self) -> bool {
        let id = self.order.strip_suffix(" DESC").unwrap_or(self.order);
        matches!(id.rsplit('.').next(), Some("id" | "seq"))
    }

    /// The refusal of a filter the list's indexes do not serve, on a list of `n` records.
    pub(crate) fn unserved(&self, n: i64) -> Error {
        unserved(n, self.indexed)
    }
}

/// The upper end written into a range on a time that is open above (`date > $2 AND date <= $3`),
/// bound as a value. Every stored time sorts below it, so it changes no result. PostgreSQL plans
/// nubis's statements once for unknown values, and takes an open range on an unknown value to
/// hold a third of the rows: where one account holds most of a table, that plan read the whole
/// table (23 ms at 100,000 invoices to find none). A range closed on both ends is taken to hold
/// a small share, so the plan reads the range through the (scope, time) index.
pub(crate) const TIME_MAX: &str = "9999-12-31T23:59:59";

/// A list longer than this is not read through to check a filter or an order that no index
/// serves: the request is refused (400 on `X-Filter`) instead.
pub(crate) const SCAN_BUDGET: i64 = 5_000;

/// Whether the indexes of a list serve a filter (its condition and its order): an equality, a
/// range or a `+neq` (two ranges) on `id` or on a field of `indexed` (each served by an index on
/// the scope and the field) somewhere in every branch, and an order by `id` or by such a field.
/// `+contains`, `+neq` of a field that is no column's own comparison (tags, sets), and the fields
/// not listed are checked record by record, at a cost that grows with the list.
pub(crate) fn served(filter: &Filter, cols: &[Column], indexed: &[&str]) -> bool {
    served_apart(filter, cols, indexed, indexed)
}

/// [`served`] for a list whose indexes serve more fields in a condition (`filtered`) than in an
/// order (`ordered`): a condition needs an index on the scope and the field, an order of deep
/// pages also the order's fences.
pub(crate) fn served_apart(filter: &Filter, cols: &[Column], filtered: &[&str], ordered: &[&str]) -> bool {
    fn field(path: &str, indexed: &[&str]) -> bool {
        path == "id" || indexed.contains(&path)
    }
    fn cond(c: &Cond, cols: &[Column], indexed: &[&str]) -> bool {
        match c {
            Cond::And(parts) => parts.is_empty() || parts.iter().any(|p| cond(p, cols, indexed)),
            Cond::Or(parts) => parts.iter().all(|p| cond(p, cols, indexed)),
            Cond::Field { path, op, .. } => {
                field(path, indexed)
                    && match op {
                        CmpOp::Contains => false,
                        CmpOp::Eq => true,
                        // A range (and `+neq`, two of them) of a column's own values; a list
                        // kept in other rows is served only by equality.
                        _ => cols.iter().any(|c| c.path == path && c.kind.ranged()),
                    }
            }
        }
    }
    // An order by a list of values (tags, addresses) is no index's order.
    let orderable = |p: &str| field(p, ordered) && p != "tags";
    filter.cond.as_ref().is_none_or(|c| cond(c, cols, filtered)) && filter.order_by.as_deref().is_none_or(orderable)
}

/// The refusal of a filter no index serves on a list of `n` records (more than [`SCAN_BUDGET`]).
pub(crate) fn unserved(n: i64, indexed: &[&str]) -> Error {
    unserved_apart(n, indexed, indexed)
}

/// [`unserved`] of a list served as [`served_apart`] says.
pub(crate) fn unserved_apart(n: i64, filtered: &[&str], ordered: &[&str]) -> Error {
    unserved_noting(n, filtered, ordered, "")
}

/// [`unserved_apart`] with `note` (`"; ..."`, or nothing) after the fields it names: what else
/// the list serves.
pub(crate) fn unserved_noting(n: i64, filtered: &[&str], ordered: &[&str], note: &str) -> Error {
    let with_id = |fields: &[&str]| std::iter::once("id").chain(fields.iter().copied()).collect::<Vec<_>>().join(", ");
    let what = if filtered == ordered {
        format!("filter for equality or a range on, or order by, one of: {}", with_id(filtered))
    } else {
        format!(
            "filter for equality or a range on one of: {}; order by one of: {}",
            with_id(filtered),
            with_id(ordered)
        )
    };
    bad(format!(
        "This list holds {n} records, more than the {SCAN_BUDGET} a filter or an order no index serves may read \
         one by one; {what}{note}"
    ))
}

/// Who reads a list: restricted users see only the entities they hold a grant on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Visibility<'a> {
    /// The value of [`Listing::scope`]: the account (or the parent record).
    pub scope_id: i64,
    /// `(user id, grant kind, id column)` for a restricted user.
    pub grant: Option<(i64, &'a str, &'a str)>,
    /// One more condition with one bound value: `(text before, value, text after)`.
    pub and: Option<(&'a str, i64, &'a str)>,
}

pub(crate) fn push_scope(sql: &mut Sql, l: &Listing<'_>, v: &Visibility<'_>) {
    sql.push(&format!(" WHERE {} = ", l.scope)).bind(Val::I64(v.scope_id));
    push_rest_of_scope(sql, l, v);
}

/// [`push_scope`] with the scope written as a range of its one value (`scope >= s AND scope <=
/// s`), for a page ordered by [`push_order_led`]. With an equality PostgreSQL may plan a shallow
/// page as a walk of the whole table in the order's index (the primary key), filtered by the
/// scope, when its statistics say the scope holds a large share of the rows: rows that sit at the
/// end of that index are found after every other. A range makes the scope a sort key the walk
/// does not give, so only the index on (scope, order) serves the page.
pub(crate) fn push_scope_led(sql: &mut Sql, l: &Listing<'_>, v: &Visibility<'_>) {
    sql.push(" WHERE ");
    push_is(sql, l.scope, v.scope_id, true);
    push_rest_of_scope(sql, l, v);
}

/// `column = id`, or when `led` the same condition written as a range of its one value
/// (`column >= id AND column <= id`), for a page ordered by the column first: see
/// [`push_scope_led`]. Lists that write their own scope (events, sign-ins) use it too.
pub(crate) fn push_is(sql: &mut Sql, column: &str, id: i64, led: bool) {
    if led {
        sql.push(&format!("{column} >= ")).bind(Val::I64(id)).push(&format!(" AND {column} <= "));
    } else {
        sql.push(&format!("{column} = "));
    }
    sql.bind(Val::I64(id));
}

/// [`push_scope`] without the scope's own condition, for a statement whose rows are picked by
/// ids already read from the scope's rows (a page in a field's order, `FenceAt::push_page`).
/// [`push_scope`] with the scope written `+scope = ...`, which neither engine reads through an
/// index: for a page whose rows are found by their ids, in a list whose ids are keys only within
/// the scope ([`Listing::id_is_key`]).
pub(crate) fn push_scope_unindexed(sql: &mut Sql, l: &Listing<'_>, v: &Visibility<'_>) {
    sql.push(&format!(" WHERE +{} = ", l.scope)).bind(Val::I64(v.scope_id));
    push_rest_of_scope(sql, l, v);
}

pub(crate) fn push_unscoped(sql: &mut Sql, l: &Listing<'_>, v: &Visibility<'_>) {
    sql.push(" WHERE 1 = 1");
    push_rest_of_scope(sql, l, v);
}

fn push_rest_of_scope(sql: &mut Sql, l: &Listing<'_>, v: &Visibility<'_>) {
    sql.push(l.and);
    if let Some((user_id, kind, id_col)) = v.grant {
        // Driven by the user's grants (an index range of them), not by the scope's rows.
        sql.push(&format!(" AND {id_col} IN (SELECT g.entity_id FROM grants g WHERE g.user_id = "))
            .bind(Val::I64(user_id));
        sql.push(" AND g.kind = ").bind(Val::Str(kind.to_string())).push(")");
    }
    if let Some((before, value, after)) = v.and {
        sql.push(before).bind(Val::I64(value)).push(after);
    }
}

/// Appends ` LIMIT n OFFSET m` for a page (1-based).
pub(crate) fn push_page(sql: &mut Sql, page: u64, page_size: u64) {
    push_window(sql, page.saturating_sub(1).saturating_mul(page_size), page_size);
}

/// Appends ` LIMIT n OFFSET offset`: `n` rows from `offset` on.
pub(crate) fn push_window(sql: &mut Sql, offset: u64, n: u64) {
    sql.push(" LIMIT ").bind(Val::I64(n.min(i64::MAX as u64) as i64));
    sql.push(" OFFSET ").bind(Val::I64(offset.min(i64::MAX as u64) as i64));
}

/// Appends `($1, $2, ...)` binding `keys`; an empty slice gives `(NULL)`, which matches nothing.
/// Up to [`PADDED_UP_TO`] keys, the list is padded with its last key to a power of two: every
/// new statement text is parsed and planned afresh (on PostgreSQL about a millisecond for a
/// page's read by key), so a read of 1 to 100 keys is one of eight statements, not of a hundred.
fn push_keys<T>(sql: &mut Sql, keys: &[T], val: impl Fn(&T) -> Val) {
    sql.push("(");
    let Some(last) = keys.last() else {
        sql.push("NULL)");
        return;
    };
    let n = if keys.len() <= PADDED_UP_TO { keys.len().next_power_of_two() } else { keys.len() };
    for i in 0..n {
        if i > 0 {
            sql.push(", ");
        }
        sql.bind(val(keys.get(i).unwrap_or(last)));
    }
    sql.push(")");
}

/// The longest key list [`push_keys`] pads.
const PADDED_UP_TO: usize = 1024;

/// [`push_keys`] for ids.
pub(crate) fn push_ids(sql: &mut Sql, ids: &[i64]) {
    push_keys(sql, ids, |id| Val::I64(*id));
}

/// [`push_keys`] for texts.
pub(crate) fn push_strs(sql: &mut Sql, texts: &[String]) {
    push_keys(sql, texts, |t| Val::Str(t.clone()));
}

/// Appends the statement that reads the kept number of rows of a kind in an account.
pub(crate) fn push_kept_count(sql: &mut Sql, account_id: i64, kind: &str) {
    sql.push("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM row_counts WHERE account_id = ")
        .bind(Val::I64(account_id))
        .push(" AND kind = ")
        .bind(Val::Str(kind.to_string()));
}

/// The keys of [`crate::Store::fetch_in`].
pub(crate) enum Keys<'a> {
    Ids(&'a [i64]),
    Texts(&'a [String]),
}

impl crate::Store {
    /// The rows of `<select> WHERE <column> IN (<keys>) ORDER BY <order>`, mapped (no keys, no
    /// query): the read by key of the records a page or a view needs.
    pub(crate) async fn fetch_in<T>(
        &self,
        select: &str,
        column: &str,
        keys: Keys<'_>,
        order: &str,
        map: impl Fn(&crate::db::Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.fetch_in_rows(select, column, keys, order).await?.iter().map(map).collect()
    }

    /// [`crate::Store::fetch_in`], the rows as they are.
    pub(crate) async fn fetch_in_rows(
        &self,
        select: &str,
        column: &str,
        keys: Keys<'_>,
        order: &str,
    ) -> Result<Vec<crate::db::Row>> {
        let mut sql = Sql::new(&format!("{select} WHERE {column} IN "));
        match keys {
            Keys::Ids([]) | Keys::Texts([]) => return Ok(Vec::new()),
            Keys::Ids(ids) => push_ids(&mut sql, ids),
            Keys::Texts(texts) => push_strs(&mut sql, texts),
        }
        sql.push(&format!(" ORDER BY {order}"));
        sql.query().fetch_all(self.r()).await
    }

    /// The kept number of rows of a kind in an account (`row_counts`, kept by triggers).
    pub(crate) async fn kept_count(&self, account_id: i64, kind: &str) -> Result<i64> {
        let mut sql = Sql::new("");
        push_kept_count(&mut sql, account_id, kind);
        sql.query().fetch_i64(self.r()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids_sql(ids: &[i64]) -> (String, usize) {
        let mut sql = Sql::new("");
        push_ids(&mut sql, ids);
        (sql.text, sql.binds.len())
    }

    #[test]
    fn key_lists_are_padded_with_their_last_key_to_a_power_of_two() {
        assert_eq!(ids_sql(&[]), ("(NULL)".to_string(), 0));
        assert_eq!(ids_sql(&[7]), ("($1)".to_string(), 1));
        assert_eq!(ids_sql(&[7, 8, 9]), ("($1, $2, $3, $4)".to_string(), 4));
        let mut sql = Sql::new("");
        push_ids(&mut sql, &[7, 8, 9]);
        assert!(matches!(sql.binds[3], Val::I64(9)), "{:?}", sql.binds);
        // One text for every list of 65 to 128 keys; none past the padded length.
        let many: Vec<i64> = (1..=100).collect();
        assert_eq!(ids_sql(&many).1, 128);
        assert_eq!(ids_sql(&many[..65]).0, ids_sql(&many).0);
        let long: Vec<i64> = (1..=1500).collect();
        assert_eq!(ids_sql(&long).1, 1500);
    }

    #[test]
    fn a_led_page_puts_its_scope_first_in_the_direction_of_its_order() {
        let cols = [
            Column { path: "id", expr: "s.id", kind: ColKind::Int },
            Column { path: "label", expr: "s.label", kind: ColKind::Text },
        ];
        let led = |filter: &Filter, default: &str| {
            let mut sql = Sql::new("");
            push_order_led(&mut sql, &cols, filter, default, "s.vpc_id").unwrap();
            sql.text
        };
        let own = Filter::default();
        assert_eq!(led(&own, "s.id"), " ORDER BY s.vpc_id ASC, s.id");
        assert_eq!(led(&own, "e.id DESC"), " ORDER BY s.vpc_id DESC, e.id DESC");
        let by = |order| Filter { order_by: Some("label".into()), order, ..Filter::default() };
        assert_eq!(led(&by(Order::Asc), "s.id"), " ORDER BY s.vpc_id ASC, s.label ASC, s.id ASC");
        assert_eq!(led(&by(Order::Desc), "s.id"), " ORDER BY s.vpc_id DESC, s.label DESC, s.id DESC");
        // Unled, the order is the list's own.
        let mut sql = Sql::new("");
        push_order(&mut sql, &cols, &by(Order::Desc), "s.id").unwrap();
        assert_eq!(sql.text, " ORDER BY s.label DESC, s.id DESC");
    }

    #[test]
    fn a_filter_of_one_indexed_value_leads_the_page_and_is_planned_once_on_postgresql() {
        let cols = [
            Column { path: "id", expr: "e.id", kind: ColKind::Int },
            Column { path: "status", expr: "e.status", kind: ColKind::Text },
            Column { path: "label", expr: "e.label", kind: ColKind::Text },
            Column { path: "entity.id", expr: "e.entity_id", kind: ColKind::IntOrNull },
            Column { path: "username", expr: "e.username", kind: ColKind::TextOrNull },
            Column { path: "read", expr: "e.read", kind: ColKind::Bool },
            Column { path: "tags", expr: "e.tags", kind: ColKind::Tags { list: "x", id: "e.id" } },
        ];
        let paths = ["id", "status", "label", "entity.id", "username", "read", "tags"];
        let ordered = ["status", "entity.id", "username", "read", "tags"];
        let page = |backend, text: &str| {
            let filter = Filter::parse(text, &paths).unwrap();
            let mut sql = Sql::new("SELECT e.id FROM events e WHERE e.account_id = ");
            sql.bind(Val::I64(7));
            push_filter_led(&mut sql, backend, &cols, &filter, &ordered, "e.id DESC").unwrap();
            push_order(&mut sql, &cols, &filter, "e.id DESC").unwrap();
            let planned_for_values = sql.query().for_its_values;
            (sql.text, planned_for_values)
        };
        let led = |text: &str| page(Backend::Postgres, text);
        let base = "SELECT e.id FROM events e WHERE e.account_id = $1";
        assert_eq!(
            led(r#"{"status": "failed"}"#),
            (format!("{base} AND (e.status >= $2 AND e.status <= $3) ORDER BY e.status DESC, e.id DESC"), false)
        );
        // In the field's own order, or the id's, in that order's direction.
        assert_eq!(
            led(r#"{"status": "failed", "+order_by": "status", "+order": "asc"}"#).0,
            format!("{base} AND (e.status >= $2 AND e.status <= $3) ORDER BY e.status ASC, e.status ASC, e.id ASC")
        );
        assert_eq!(
            led(r#"{"status": "failed", "+order_by": "id", "+order": "asc"}"#).0,
            format!("{base} AND (e.status >= $2 AND e.status <= $3) ORDER BY e.status ASC, e.id ASC, e.id ASC")
        );
        // A field that may be NULL is compared as its order index holds it; a boolean as 0 or 1.
        assert_eq!(
            led(r#"{"entity.id": 5}"#).0,
            format!(
                "{base} AND (COALESCE(e.entity_id, 0) >= $2 AND COALESCE(e.entity_id, 0) <= $3) \
                 ORDER BY COALESCE(e.entity_id, 0) DESC, e.id DESC"
            )
        );
        assert!(led(r#"{"read": true}"#).0.contains("(CASE WHEN e.read THEN 1 ELSE 0 END) >= $2"));
        // Every other filter is planned for its values, as written.
        for other in [
            r#"{"entity.id": 0}"#,
            r#"{"username": ""}"#,
            r#"{"label": "a"}"#,
            r#"{"id": 3}"#,
            r#"{"tags": "a"}"#,
            r#"{"status": {"+neq": "failed"}}"#,
            r#"{"status": "failed", "username": "u"}"#,
            r#"{"+or": [{"status": "failed"}, {"status": "finished"}]}"#,
            r#"{"status": "failed", "+order_by": "username"}"#,
        ] {
            let (text, planned_for_values) = led(other);
            assert!(planned_for_values && !text.contains(">= $2 AND"), "{other}: {text}");
            assert!(text.ends_with("ORDER BY e.id DESC") || text.contains("ORDER BY COALESCE"), "{other}: {text}");
        }
        // SQLite looks at no values when it plans: the statement is the filter's own.
        assert_eq!(
            page(Backend::Sqlite, r#"{"status": "failed"}"#).0,
            format!("{base} AND (e.status = $2) ORDER BY e.id DESC")
        );
    }

    #[test]
    fn a_filtered_statement_is_planned_for_its_values_and_no_other() {
        let cols = [Column { path: "label", expr: "label", kind: ColKind::Text }];
        let filter = Filter::parse(r#"{"label": "a"}"#, &["label"]).unwrap();
        let mut sql = Sql::new("SELECT id FROM t WHERE scope = ");
        sql.bind(Val::I64(7));
        push_filter(&mut sql, Backend::Postgres, &cols, &filter).unwrap();
        assert_eq!(sql.text, "SELECT id FROM t WHERE scope = $1 AND (label = $2)");
        assert!(sql.query().for_its_values);
        let mut sql = Sql::new("SELECT 1");
        push_filter(&mut sql, Backend::Postgres, &cols, &Filter::default()).unwrap();
        assert!(!sql.query().for_its_values, "no filter, no planning for values");
    }
}
