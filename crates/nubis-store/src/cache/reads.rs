//! The check that a cached read declares every table it reads from.
//!
//! In debug builds (every test run), while a cached value is loaded, each statement the load
//! builds is noted ([`note_sql`], called by `query`) with the tables it reads (its `FROM` and
//! `JOIN` relations, found by `sqlparser`), and so are the declared tables of every cached value
//! read inside the load ([`note`]). A load that read a table it did not declare fails with an
//! internal error: its value would have been served after a write to that table. Release builds
//! only run the load.

use std::future::Future;

use nubis_model::Result;

#[cfg(debug_assertions)]
tokio::task_local! {
    static READ: std::cell::RefCell<std::collections::BTreeSet<String>>;
}

/// Notes the tables `sql` reads, when a cached load runs on this task.
pub(crate) fn note_sql(sql: &str) {
    #[cfg(debug_assertions)]
    let _ = READ.try_with(|r| r.borrow_mut().extend(tables_of(sql)));
    #[cfg(not(debug_assertions))]
    let _ = sql;
}

/// Notes `tables` as read, when a cached load runs on this task.
pub(crate) fn note(tables: &[&str]) {
    #[cfg(debug_assertions)]
    let _ = READ.try_with(|r| r.borrow_mut().extend(tables.iter().map(|t| t.to_string())));
    #[cfg(not(debug_assertions))]
    let _ = tables;
}

/// Runs `load`; in debug builds, fails when it read a table outside `declared`.
pub(crate) async fn checked<T>(declared: &[&str], load: impl Future<Output = Result<T>>) -> Result<T> {
    #[cfg(debug_assertions)]
    {
        let (value, read) = READ
            .scope(Default::default(), async {
                let value = load.await;
                (value, READ.with(|r| r.take()))
            })
            .await;
        let undeclared: Vec<&String> = read.iter().filter(|t| !declared.contains(&t.as_str())).collect();
        if !undeclared.is_empty() {
            let msg = format!("a cached read declares the tables {declared:?} but reads {undeclared:?}");
            tracing::error!("{msg}");
            return Err(nubis_model::Error::Internal(msg));
        }
        value
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = declared;
        load.await
    }
}

/// The functions of the schema that statements read from, with the tables each reads.
#[cfg(debug_assertions)]
const FUNCTION_READS: &[(&str, &[&str])] =
    &[("nubis_locate", &["row_blocks"]), ("nubis_locate_fenced", &["order_fence_counts", "order_fences"])];

/// The tables a statement reads from, common table expressions left out; a statement that does
/// not parse is reported as a table of its own text, so that the check fails on it.
#[cfg(debug_assertions)]
pub(crate) fn tables_of(sql: &str) -> Vec<String> {
    use sqlparser::ast::{Statement, visit_relations};
    let Ok(statements) = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql) else {
        return vec![format!("(unparsed: {sql})")];
    };
    let mut ctes = Vec::new();
    for s in &statements {
        if let Statement::Query(q) = s
            && let Some(with) = &q.with
        {
            ctes.extend(with.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
    }
    let mut tables = Vec::new();
    let _ = visit_relations(&statements, |r| {
        let name = r.to_string();
        // A function the schema defines reads the tables it is written over.
        let read = FUNCTION_READS
            .iter()
            .find(|(f, _)| *f == name)
            .map_or(vec![name], |(_, t)| t.iter().map(|t| t.to_string()).collect());
        for name in read {
            if !ctes.contains(&name) && !tables.contains(&name) {
                tables.push(name);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    tables
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn the_tables_of_a_statement_are_its_from_and_join_relations() {
        let t = |sql| tables_of(sql);
        assert_eq!(t("SELECT a FROM x JOIN y ON x.id = y.x_id WHERE a = $1"), ["x", "y"]);
        assert_eq!(t("SELECT id FROM x WHERE id IN (SELECT x_id FROM z WHERE k = $1) ORDER BY id"), ["x", "z"]);
        assert_eq!(t("WITH c AS (SELECT id FROM z) SELECT * FROM c, w WHERE c.id = w.id"), ["z", "w"]);
        assert_eq!(t("SELECT EXTRACT(EPOCH FROM created) FROM events"), ["events"]);
        assert_eq!(t("SELECT first, last, skip FROM nubis_locate($1, $2, $3, $4)"), ["row_blocks"]);
        assert_eq!(
            t("SELECT k_int, skip FROM nubis_locate_fenced($1, $2, $3, $4, $5)"),
            ["order_fence_counts", "order_fences"]
        );
        assert_eq!(t("SELECT 1"), Vec::<String>::new());
        assert_eq!(t("SELECT FROM WHERE"), ["(unparsed: SELECT FROM WHERE)"]);
    }

    #[tokio::test]
    async fn a_load_that_reads_an_undeclared_table_fails() {
        let load = |sql: &'static str| async move {
            note_sql(sql);
            Ok(1)
        };
        assert_eq!(checked(&["x", "y"], load("SELECT * FROM x JOIN y ON x.id = y.id")).await.unwrap(), 1);
        let err = checked(&["x"], load("SELECT * FROM x JOIN y ON x.id = y.id")).await.unwrap_err();
        assert!(err.to_string().contains("\"y\""), "{err}");
        // A cached value read inside counts with its own tables.
        let nested = async {
            note(&["grants"]);
            Ok(2)
        };
        assert!(checked(&["x"], nested).await.is_err());
        // Outside a load nothing is noted, and nothing fails.
        note_sql("SELECT * FROM anything");
    }
}
