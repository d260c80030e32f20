//! The account's default maintenance policy (migration 0030).

use nubis_model::Result;

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::{Store, Tx};

async fn policy(h: Handle<'_>, account_id: i64) -> Result<Option<String>> {
    let r = query("SELECT maintenance_policy FROM account_maintenance_settings WHERE account_id = $1")
        .bind(account_id)
        .fetch_optional(h)
        .await?;
    r.map(|r| r.str("maintenance_policy")).transpose()
}

impl Tx<'_> {
    /// The account's maintenance policy, when it was ever set (inside the transaction).
    pub async fn account_maintenance_policy(&mut self, account_id: i64) -> Result<Option<String>> {
        policy(self.h(), account_id).await
    }

    pub async fn account_set_maintenance_policy(&mut self, account_id: i64, slug: &str) -> Result<()> {
        query(
            "INSERT INTO account_maintenance_settings (account_id, maintenance_policy) VALUES ($1, $2) \
             ON CONFLICT (account_id) DO UPDATE SET maintenance_policy = excluded.maintenance_policy",
        )
        .bind(account_id)
        .bind(slug)
        .execute(self.h())
        .await?;
        Ok(())
    }
}

impl Store {
    /// The account's maintenance policy, when it was ever set.
    pub async fn account_maintenance_policy(&self, account_id: i64) -> Result<Option<String>> {
        policy(self.r(), account_id).await
    }
}
