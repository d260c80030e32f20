//! What an instance was given for its boot: user data and root's SSH keys (read by the instance
//! runtime and the metadata service).

use nubis_model::Result;

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::{Store, Tx};

/// An instance's boot data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootData {
    /// Base64, as given on create.
    pub user_data: Option<String>,
    pub authorized_keys: Vec<String>,
}

async fn boot_data(h: Handle<'_>, instance_id: i64) -> Result<Option<BootData>> {
    let row = query("SELECT user_data, authorized_keys FROM instance_boot_data WHERE instance_id = $1")
        .bind(instance_id)
        .fetch_optional(h)
        .await?;
    row.map(|r| {
        Ok(BootData {
            user_data: r.opt_str("user_data")?,
            authorized_keys: serde_json::from_str(&r.str("authorized_keys")?).unwrap_or_default(),
        })
    })
    .transpose()
}

impl Tx<'_> {
    /// Records an instance's boot data (at creation and rebuild; a rebuild replaces it).
    pub async fn instance_boot_data_set(&mut self, instance_id: i64, data: &BootData) -> Result<()> {
        let keys = serde_json::to_string(&data.authorized_keys).unwrap_or_else(|_| "[]".into());
        query(
            "INSERT INTO instance_boot_data (instance_id, user_data, authorized_keys) VALUES ($1, $2, $3) \
                ON CONFLICT (instance_id) DO UPDATE SET user_data = excluded.user_data, \
                authorized_keys = excluded.authorized_keys",
        )
        .bind(instance_id)
        .bind(data.user_data.clone())
        .bind(keys)
        .execute(self.h())
        .await?;
        Ok(())
    }

    pub async fn instance_boot_data(&mut self, instance_id: i64) -> Result<Option<BootData>> {
        boot_data(self.h(), instance_id).await
    }
}

impl Store {
    /// An instance's boot data (none for instances created before it was kept).
    pub async fn instance_boot_data(&self, instance_id: i64) -> Result<Option<BootData>> {
        boot_data(self.r(), instance_id).await
    }
}
