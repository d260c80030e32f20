//! Grants of restricted users: the `global` object (kept as JSON on the user) and per-entity
//! permissions. Also the one place that knows which table holds the entities of each grant kind.

use std::collections::HashMap;
use std::sync::Arc;

use nubis_model::grants::{GlobalGrants, GrantKind, Permission, UserGrants};
use nubis_model::{Error, Result};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::{CacheKey, Store, Tx};

impl Tx<'_> {
    /// Sets (or with `None` removes) one user's permission on one entity. Concurrent sets of
    /// one grant meet in one row (an upsert), never in a duplicate.
    pub async fn grant_set(
        &mut self,
        user_id: i64,
        kind: GrantKind,
        entity_id: i64,
        perm: Option<Permission>,
    ) -> Result<()> {
        let sql = match perm {
            None => "DELETE FROM grants WHERE user_id = $1 AND kind = $2 AND entity_id = $3",
            Some(_) => {
                "INSERT INTO grants (user_id, kind, entity_id, permission) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (user_id, kind, entity_id) DO UPDATE SET permission = excluded.permission"
            }
        };
        let mut q = query(sql).bind(user_id).bind(kind.name()).bind(entity_id);
        if let Some(p) = perm {
            q = q.bind(p.name());
        }
        q.execute(self.h()).await?;
        Ok(())
    }

    /// Removes every grant on an entity (when the entity is deleted).
    pub async fn grants_delete_entity(&mut self, kind: GrantKind, entity_id: i64) -> Result<()> {
        query("DELETE FROM grants WHERE kind = $1 AND entity_id = $2")
            .bind(kind.name())
            .bind(entity_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn global_grants_set(&mut self, user_id: i64, g: &GlobalGrants) -> Result<()> {
        let json = serde_json::to_string(g).map_err(Error::internal)?;
        query("UPDATE users SET global_grants = $2 WHERE id = $1").bind(user_id).bind(json).execute(self.h()).await?;
        Ok(())
    }

    /// The grants of one user, read inside the transaction (never from the cache).
    pub async fn grants_of_user(&mut self, user_id: i64) -> Result<UserGrants> {
        grants_of_user(self.h(), user_id).await
    }

    /// Of `ids`, those that are entities of `kind` in the account.
    pub async fn grantable_ids(&mut self, kind: GrantKind, account_id: i64, ids: &[i64]) -> Result<Vec<i64>> {
        let Some(table) = entity_table(kind) else { return Ok(Vec::new()) };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!("SELECT id FROM {table} WHERE account_id = $1 AND id IN ({})", marks.join(", "));
        let mut q = query(sql).bind(account_id);
        for id in ids {
            q = q.bind(*id);
        }
        q.fetch_column_i64(self.h()).await
    }

    /// Drops every grant of a user (global and per entity).
    pub async fn grants_clear_user(&mut self, user_id: i64) -> Result<()> {
        query("DELETE FROM grants WHERE user_id = $1").bind(user_id).execute(self.h()).await?;
        query("UPDATE users SET global_grants = '{}' WHERE id = $1").bind(user_id).execute(self.h()).await?;
        Ok(())
    }
}

impl Store {
    /// The grants of one user.
    pub async fn grants_of_user(&self, user_id: i64) -> Result<Arc<UserGrants>> {
        self.cached(CacheKey::Grants(user_id), &["grants", "users"], || grants_of_user(self.r(), user_id)).await
    }

    /// The entities of one grant kind in an account, as `(id, label)` in id order.
    pub async fn grantable_entities(&self, kind: GrantKind, account_id: i64) -> Result<Vec<(i64, String)>> {
        let sql = match entity_table(kind) {
            Some(table) => format!("SELECT id, label FROM {table} WHERE account_id = $1 ORDER BY id"),
            None => return Ok(Vec::new()),
        };
        let rows = query(sql).bind(account_id).fetch_all(self.r()).await?;
        rows.iter().map(|r| Ok((r.i64("id")?, r.str("label")?))).collect()
    }
}

/// The grants of one user: the global object and every per-entity permission.
async fn grants_of_user(mut h: Handle<'_>, user_id: i64) -> Result<UserGrants> {
    let global = query("SELECT global_grants FROM users WHERE id = $1")
        .bind(user_id)
        .fetch_optional(h.reborrow())
        .await?
        .map(|r| r.str("global_grants"))
        .transpose()?;
    let global: GlobalGrants = global.and_then(|g| serde_json::from_str(&g).ok()).unwrap_or_default();
    let rows =
        query("SELECT kind, entity_id, permission FROM grants WHERE user_id = $1").bind(user_id).fetch_all(h).await?;
    let mut entities = HashMap::new();
    for r in rows {
        if let (Some(k), Some(p)) = (GrantKind::parse(&r.str("kind")?), Permission::parse(&r.str("permission")?)) {
            entities.insert((k, r.i64("entity_id")?), p);
        }
    }
    Ok(UserGrants { global, entities })
}

/// The table that holds the entities of a grant kind, for kinds this cloud serves.
fn entity_table(kind: GrantKind) -> Option<&'static str> {
    match kind {
        GrantKind::Vpc => Some("vpcs"),
        GrantKind::Instance => Some("instances"),
        GrantKind::Firewall => Some("firewalls"),
        GrantKind::Nodebalancer => Some("nodebalancers"),
        GrantKind::Database
        | GrantKind::Domain
        | GrantKind::Image
        | GrantKind::Longview
        | GrantKind::Stackscript
        | GrantKind::Volume => None,
    }
}
