//! What the test controls keep in the database: operator tokens, control settings, and the
//! whole-state operations: snapshot, restore and reset.
//!
//! - SQLite: a snapshot is an online backup of the database into `<db dir>/snapshots/NAME.db`;
//!   a restore copies it back through the writer connection (SQLite's backup API, page by page).
//! - PostgreSQL: a snapshot is a schema `nubis_snapshot_NAME` holding a copy of every table; a
//!   restore empties the tables and copies the rows back in foreign-key order, then moves every
//!   identity sequence past the restored ids, in one transaction.
//!
//! The operator tokens, the control settings and the migration ledger are not part of the state:
//! they survive a restore and a reset unchanged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use nubis_model::{Error, Result, Timestamp};

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::{Backend, Engine, Store, Tx};

/// Tables that are not part of the state the controls snapshot, restore and reset.
pub const KEPT_TABLES: &[&str] =
    &["nubis_migrations", "operator_tokens", "control_settings", "dataplane_members", "dataplane_leases"];

/// Schema names of PostgreSQL snapshots start with this.
const PG_PREFIX: &str = "nubis_snapshot_";

/// A snapshot name: 1..64 letters, digits, `-` and `_` (it names a file or a schema).
/// The length of a snapshot's name, and its characters as a pattern.
pub const SNAPSHOT_NAME_LEN: (usize, usize) = (1, 64);
pub const SNAPSHOT_NAME_PATTERN: &str = "^[A-Za-z0-9_-]*$";

pub fn valid_snapshot_name(name: &str) -> bool {
    (SNAPSHOT_NAME_LEN.0..=SNAPSHOT_NAME_LEN.1).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Tx<'_> {
    pub async fn operator_token_insert(&mut self, label: &str, secret_hash: &str, created: Timestamp) -> Result<i64> {
        query("INSERT INTO operator_tokens (label, secret_hash, created) VALUES ($1, $2, $3) RETURNING id")
            .bind(label)
            .bind(secret_hash)
            .bind(created)
            .fetch_i64(self.h())
            .await
    }

    pub async fn control_setting_set(&mut self, name: &str, value: &str) -> Result<()> {
        query(
            "INSERT INTO control_settings (name, value) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(name)
        .bind(value)
        .execute(self.h())
        .await?;
        Ok(())
    }
}

impl Store {
    /// Whether an operator token with this hash exists.
    pub async fn operator_token_exists(&self, secret_hash: &str) -> Result<bool> {
        let n = query("SELECT COUNT(*) FROM operator_tokens WHERE secret_hash = $1")
            .bind(secret_hash)
            .fetch_i64(self.r())
            .await?;
        Ok(n > 0)
    }

    pub async fn control_setting(&self, name: &str) -> Result<Option<String>> {
        let row =
            query("SELECT value FROM control_settings WHERE name = $1").bind(name).fetch_optional(self.r()).await?;
        row.map(|r| r.str("value")).transpose()
    }

    /// The hash of the token labelled `bootstrap` (databases bootstrapped before the controls
    /// recorded it).
    pub async fn bootstrap_token_hash_fallback(&self) -> Result<Option<String>> {
        let row = query("SELECT secret_hash FROM tokens WHERE label = 'bootstrap' ORDER BY id LIMIT 1")
            .fetch_optional(self.r())
            .await?;
        row.map(|r| r.str("secret_hash")).transpose()
    }

    /// The tables of the state, in creation order (kept tables excluded).
    async fn state_tables(&self) -> Result<Vec<String>> {
        let sql = match self.backend() {
            Backend::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
            }
            Backend::Postgres => {
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
            }
        };
        let all = query(sql).fetch_column_str(self.r()).await?;
        Ok(all.into_iter().filter(|t| !KEPT_TABLES.contains(&t.as_str())).collect())
    }

    fn sqlite_snapshot_dir(&self) -> Option<PathBuf> {
        match &self.inner.engine {
            Engine::Lite(l) => {
                Some(l.path().parent().map(|p| p.join("snapshots")).unwrap_or_else(|| "snapshots".into()))
            }
            Engine::Pg(..) => None,
        }
    }

    /// Saves the whole state under `name` (replacing a snapshot of that name).
    pub async fn snapshot_save(&self, name: &str) -> Result<()> {
        if !valid_snapshot_name(name) {
            return Err(Error::invalid("name", "Must be 1-64 letters, digits, '-' or '_'"));
        }
        match &self.inner.engine {
            Engine::Lite(l) => {
                let dir = self.sqlite_snapshot_dir().unwrap_or_default();
                crate::files::create_private_dir(&dir).map_err(Error::internal)?;
                let tmp = dir.join(format!(".{name}.db.tmp"));
                let _ = std::fs::remove_file(&tmp);
                // A snapshot holds the whole state: readable by its owner only.
                crate::files::precreate_sqlite(&tmp).map_err(Error::internal)?;
                // Holding the write permit: the copy holds only whole transactions.
                let permit = self.write_permit().await?;
                let r = l.backup_to(&tmp);
                drop(permit);
                r?;
                std::fs::rename(&tmp, dir.join(format!("{name}.db"))).map_err(Error::internal)
            }
            Engine::Pg(..) => {
                let tables = &self.state_tables().await?;
                let schema = &ident(&format!("{PG_PREFIX}{name}"));
                // Background writers (health observations, leases) may meet the copy: again.
                crate::retry(|| async move {
                    let mut tx = self.begin().await?;
                    query(format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).execute(tx.h()).await?;
                    query(format!("CREATE SCHEMA {schema}")).execute(tx.h()).await?;
                    for t in tables {
                        query(format!("CREATE TABLE {schema}.{} AS TABLE {}", ident(t), ident(t)))
                            .execute(tx.h())
                            .await?;
                    }
                    tx.commit().await
                })
                .await
            }
        }
    }

    /// The names of the saved snapshots.
    pub async fn snapshot_names(&self) -> Result<Vec<String>> {
        match self.sqlite_snapshot_dir() {
            Some(dir) => {
                let mut names: Vec<String> = std::fs::read_dir(&dir)
                    .map(|rd| {
                        rd.filter_map(|e| e.ok())
                            .filter_map(|e| {
                                e.file_name().to_str().and_then(|n| n.strip_suffix(".db")).map(String::from)
                            })
                            .filter(|n| valid_snapshot_name(n))
                            .collect()
                    })
                    .unwrap_or_default();
                names.sort();
                Ok(names)
            }
            None => {
                let schemas = query(
                    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'nubis\\_snapshot\\_%' ORDER BY nspname",
                )
                .fetch_column_str(self.r())
                .await?;
                Ok(schemas.into_iter().filter_map(|s| s.strip_prefix(PG_PREFIX).map(String::from)).collect())
            }
        }
    }

    /// Deletes a snapshot; false when there was none of that name.
    pub async fn snapshot_delete(&self, name: &str) -> Result<bool> {
        if !self.snapshot_names().await?.iter().any(|n| n == name) {
            return Ok(false);
        }
        match self.sqlite_snapshot_dir() {
            Some(dir) => std::fs::remove_file(dir.join(format!("{name}.db"))).map_err(Error::internal)?,
            None => {
                let schema = ident(&format!("{PG_PREFIX}{name}"));
                let mut tx = self.begin().await?;
                query(format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).execute(tx.h()).await?;
                tx.commit().await?;
            }
        }
        Ok(true)
    }

    /// Replaces the whole state with the snapshot `name`; false when there is none of that name.
    pub async fn snapshot_restore(&self, name: &str) -> Result<bool> {
        if !valid_snapshot_name(name) || !self.snapshot_names().await?.iter().any(|n| n == name) {
            return Ok(false);
        }
        match &self.inner.engine {
            Engine::Lite(l) => {
                let file = self.sqlite_snapshot_dir().unwrap_or_default().join(format!("{name}.db"));
                let permit = self.write_permit().await?;
                let kept = self.kept_rows_lite(l)?;
                let r = l.restore_from(&file).and_then(|()| Self::put_back_lite(l, &kept));
                drop(permit);
                self.inner.cache.bump_all();
                r?;
            }
            Engine::Pg(..) => {
                let tables = self.state_tables().await?;
                let order = self.pg_insert_order(&tables).await?;
                let schema = ident(&format!("{PG_PREFIX}{name}"));
                let snap_tables: BTreeSet<String> = query("SELECT tablename FROM pg_tables WHERE schemaname = $1")
                    .bind(format!("{PG_PREFIX}{name}"))
                    .fetch_column_str(self.r())
                    .await?
                    .into_iter()
                    .collect();
                // The fences first: the triggers place each row they count in its range. The
                // tables the triggers keep are not copied: inserting the others rebuilds them.
                let mut columns = Vec::new();
                let fences_first =
                    order.iter().filter(|t| *t == "order_fences").chain(order.iter().filter(|t| *t != "order_fences"));
                for t in fences_first.filter(|t| snap_tables.contains(*t) && !KEPT_BY_TRIGGERS.contains(&t.as_str())) {
                    columns.push((t.clone(), self.pg_columns(t).await?));
                }
                let (tables, columns, schema) = (&tables, &columns, &schema);
                // Background writers (health observations, leases) may meet the restore: again.
                crate::retry(|| async move {
                    let mut tx = self.begin().await?;
                    pg_truncate(&mut tx, tables).await?;
                    for (t, cols) in columns {
                        query(format!("INSERT INTO {} ({cols}) SELECT {cols} FROM {schema}.{}", ident(t), ident(t)))
                            .execute(tx.h())
                            .await?;
                    }
                    pg_reset_sequences(&mut tx).await?;
                    tx.commit().await
                })
                .await?;
            }
        }
        Ok(true)
    }

    /// Empties the whole state (kept tables aside): a fresh, migrated database.
    pub async fn state_wipe(&self) -> Result<()> {
        let tables = &self.state_tables().await?;
        // Background writers (health observations, leases) may meet the wipe: again.
        crate::retry(|| async move {
            let mut tx = self.begin().await?;
            match self.backend() {
                Backend::Sqlite => {
                    query("PRAGMA defer_foreign_keys = ON").execute(tx.h()).await?;
                    for t in tables {
                        query(format!("DELETE FROM {}", ident(t))).execute(tx.h()).await?;
                    }
                    let kept: Vec<String> = KEPT_TABLES.iter().map(|t| format!("'{t}'")).collect();
                    query(format!("DELETE FROM sqlite_sequence WHERE name NOT IN ({})", kept.join(", ")))
                        .execute(tx.h())
                        .await?;
                }
                Backend::Postgres => {
                    pg_truncate(&mut tx, tables).await?;
                    pg_reset_sequences(&mut tx).await?;
                }
            }
            tx.commit().await
        })
        .await
    }

    /// Takes the write permit without opening a transaction (SQLite).
    async fn write_permit(&self) -> Result<Option<tokio::sync::OwnedSemaphorePermit>> {
        match &self.inner.engine {
            Engine::Lite(l) => Ok(Some(l.permit().await?)),
            Engine::Pg(..) => Ok(None),
        }
    }

    fn kept_rows_lite(&self, l: &crate::db::lite::Lite) -> Result<Vec<(String, Vec<Row>)>> {
        KEPT_TABLES
            .iter()
            .map(|t| {
                let q = query(format!("SELECT * FROM {}", ident(t)));
                l.write(|c| crate::db::lite::fetch(c, &q)).map(|rows| (t.to_string(), rows))
            })
            .collect()
    }

    fn put_back_lite(l: &crate::db::lite::Lite, kept: &[(String, Vec<Row>)]) -> Result<()> {
        l.write(|c| {
            c.execute_batch("BEGIN IMMEDIATE").map_err(crate::db::lite::map_err)?;
            let r = (|| {
                for (t, rows) in kept {
                    crate::db::lite::execute(c, &query(format!("DELETE FROM {}", ident(t))))?;
                    for row in rows {
                        let cols: Vec<String> = row.cols.iter().map(|c| ident(c)).collect();
                        let marks: Vec<String> = (1..=cols.len()).map(|i| format!("${i}")).collect();
                        let mut q = query(format!(
                            "INSERT INTO {} ({}) VALUES ({})",
                            ident(t),
                            cols.join(", "),
                            marks.join(", ")
                        ));
                        q.args = row.vals.clone();
                        crate::db::lite::execute(c, &q)?;
                    }
                }
                Ok(())
            })();
            match r {
                Ok(()) => c.execute_batch("COMMIT").map_err(crate::db::lite::map_err),
                Err(e) => {
                    let _ = c.execute_batch("ROLLBACK");
                    Err(e)
                }
            }
        })
    }

    /// The columns of a table, quoted and comma-separated (generated columns left out).
    async fn pg_columns(&self, table: &str) -> Result<String> {
        let cols = query(
            "SELECT column_name FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' \
             ORDER BY ordinal_position",
        )
        .bind(table)
        .fetch_column_str(self.r())
        .await?;
        Ok(cols.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", "))
    }

    /// The tables ordered so that every table comes after the tables it references.
    async fn pg_insert_order(&self, tables: &[String]) -> Result<Vec<String>> {
        let rows = query(
            "SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k \
             JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid \
             WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace",
        )
        .fetch_all(self.r())
        .await?;
        let mut deps: BTreeMap<String, BTreeSet<String>> =
            tables.iter().map(|t| (t.clone(), BTreeSet::new())).collect();
        for r in &rows {
            let (child, parent) = (r.str("child")?, r.str("parent")?);
            if child != parent
                && let Some(d) = deps.get_mut(&child)
                && tables.contains(&parent)
            {
                d.insert(parent);
            }
        }
        Ok(topological(deps))
    }
}

/// The tables triggers keep from the others (kept counts, id blocks, order fence counts, tags,
/// an address's balancers, VLANs). A PostgreSQL restore inserts the other tables, triggers on, and
/// these come out of it: copying them too would count every row twice.
const KEPT_BY_TRIGGERS: &[&str] =
    &["row_counts", "row_blocks", "order_fence_counts", "list_tags", "address_balancers", "vlans"];

/// Orders names so each comes after its dependencies (cycles broken in name order).
fn topological(mut deps: BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::with_capacity(deps.len());
    while !deps.is_empty() {
        let ready: Vec<String> = deps.iter().filter(|(_, d)| d.is_empty()).map(|(t, _)| t.clone()).collect();
        let ready = if ready.is_empty() { vec![deps.keys().next().cloned().unwrap_or_default()] } else { ready };
        for t in &ready {
            deps.remove(t);
        }
        for d in deps.values_mut() {
            for t in &ready {
                d.remove(t);
            }
        }
        out.extend(ready);
    }
    out
}

async fn pg_truncate(tx: &mut Tx<'_>, tables: &[String]) -> Result<()> {
    if tables.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = tables.iter().map(|t| ident(t)).collect();
    query(format!("TRUNCATE {}", list.join(", "))).execute(tx.h()).await?;
    Ok(())
}

/// Moves every identity or serial sequence of the state's tables just past the largest id.
async fn pg_reset_sequences(tx: &mut Tx<'_>) -> Result<()> {
    let rows = query(
        "SELECT table_name, column_name FROM information_schema.columns \
         WHERE table_schema = current_schema() AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')",
    )
    .fetch_all(tx.h())
    .await?;
    for r in &rows {
        let (t, c) = (r.str("table_name")?, r.str("column_name")?);
        if KEPT_TABLES.contains(&t.as_str()) {
            continue;
        }
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT MAX({}) FROM {}), 0) + 1, false)",
            ident(&c),
            ident(&t)
        );
        query(sql).bind(ident(&t)).bind(c.as_str()).fetch_all(tx.h()).await?;
    }
    Ok(())
}

impl Store {
    /// The config a balancer node belongs to.
    pub async fn nb_node_config_of(&self, node_id: i64) -> Result<Option<i64>> {
        let row = query("SELECT config_id FROM nodebalancer_nodes WHERE id = $1")
            .bind(node_id)
            .fetch_optional(self.r())
            .await?;
        row.map(|r| r.i64("config_id")).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_for_files_and_schemas() {
        assert!(valid_snapshot_name("clean-1_a"));
        assert!(!valid_snapshot_name(""));
        assert!(!valid_snapshot_name("../x"));
        assert!(!valid_snapshot_name("a b"));
        assert!(!valid_snapshot_name(&"x".repeat(65)));
    }

    #[test]
    fn referenced_tables_come_first() {
        let mut deps = BTreeMap::new();
        deps.insert("users".to_string(), BTreeSet::from(["accounts".to_string()]));
        deps.insert("accounts".to_string(), BTreeSet::new());
        deps.insert("tokens".to_string(), BTreeSet::from(["users".to_string()]));
        assert_eq!(topological(deps), vec!["accounts", "users", "tokens"]);
    }
}
