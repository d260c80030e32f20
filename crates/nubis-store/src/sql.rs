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
}

impl Sql {
    pub fn new(text: &str) -> Sql {
        Sql { text: text.to_string(), binds: Vec::new() }
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
        q
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColKind {
    Int,
    Text,
    Bool,
}

/// A filterable field and the SQL expression that yields it.
pub(crate) struct Column {
    pub path: &'static str,
    pub expr: &'static str,
    pub kind: ColKind,
}

fn bad(reason: String) -> Error {
    Error::invalid("X-Filter", reason)
}

/// Appends ` AND (<condition>)` for the filter's condition, if any.
pub(crate) fn push_filter(sql: &mut Sql, backend: Backend, cols: &[Column], filter: &Filter) -> Result<()> {
    if let Some(c) = &filter.cond {
        sql.push(" AND (");
        push_cond(sql, backend, cols, c)?;
        sql.push(")");
    }
    Ok(())
}

/// Appends ` ORDER BY ...` for the filter's ordering, or `default` when it has none.
pub(crate) fn push_order(sql: &mut Sql, cols: &[Column], filter: &Filter, default: &str) -> Result<()> {
    match &filter.order_by {
        Some(path) => {
            let col = column(cols, path)?;
            let dir = if filter.order == Order::Desc { "DESC" } else { "ASC" };
            sql.push(&format!(" ORDER BY {} {dir}, {default}", col.expr));
        }
        None => {
            sql.push(&format!(" ORDER BY {default}"));
        }
    }
    Ok(())
}

fn column<'c>(cols: &'c [Column], path: &str) -> Result<&'c Column> {
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
                    if col.kind == ColKind::Bool {
                        // Compare booleans as integers: SQLite stores 0/1, PostgreSQL has BOOLEAN.
                        let Val::Bool(b) = v else { unreachable!("typed() gives a bool") };
                        sql.push(&format!("(CASE WHEN {} THEN 1 ELSE 0 END) {o} ", col.expr))
                            .bind(Val::I64(i64::from(b)));
                    } else {
                        sql.push(&format!("{} {o} ", col.expr)).bind(v);
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
        (ColKind::Int, Value::Number(n)) if op != CmpOp::Contains => {
            n.as_i64().map(Val::I64).ok_or_else(|| bad(format!("'{path}' needs an integer")))
        }
        (ColKind::Int, _) => Err(bad(format!("'{path}' needs an integer"))),
        (ColKind::Text, Value::String(s)) => Ok(Val::Str(s.clone())),
        (ColKind::Text, _) => Err(bad(format!("'{path}' needs a string"))),
        (ColKind::Bool, Value::Bool(b)) if matches!(op, CmpOp::Eq | CmpOp::Neq) => Ok(Val::Bool(*b)),
        (ColKind::Bool, _) => Err(bad(format!("'{path}' needs true or false"))),
    }
}
