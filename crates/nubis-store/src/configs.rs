//! Configuration profiles of instances: the boot settings, the device map and the boot helpers
//! (JSON objects). Their interfaces are rows of `instance_interfaces` (see [`crate::interfaces`]).
//! A profile is read through its instance, which the caller has found in the account.

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::instance_profile::{Devices, Helpers};
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigRow {
    pub id: i64,
    pub instance_id: i64,
    pub label: String,
    pub kernel: String,
    pub comments: Option<String>,
    pub memory_limit: i64,
    pub root_device: String,
    pub run_level: String,
    pub virt_mode: String,
    pub helpers: Helpers,
    pub devices: Devices,
    pub created: Timestamp,
    pub updated: Timestamp,
}

const COLS: &str = "id, instance_id, label, kernel, comments, memory_limit, root_device, run_level, virt_mode, helpers, \
                    devices, created, updated";

fn config(r: &Row) -> Result<ConfigRow> {
    Ok(ConfigRow {
        id: r.i64("id")?,
        instance_id: r.i64("instance_id")?,
        label: r.str("label")?,
        kernel: r.str("kernel")?,
        comments: r.opt_str("comments")?,
        memory_limit: r.i64("memory_limit")?,
        root_device: r.str("root_device")?,
        run_level: r.str("run_level")?,
        virt_mode: r.str("virt_mode")?,
        helpers: serde_json::from_str(&r.str("helpers")?).map_err(Error::internal)?,
        devices: serde_json::from_str(&r.str("devices")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

/// A profile's settings, for an insert or a replacement.
#[derive(Debug, Clone)]
pub struct ConfigValues<'a> {
    pub label: &'a str,
    pub kernel: &'a str,
    pub comments: Option<&'a str>,
    pub memory_limit: i64,
    pub root_device: &'a str,
    pub run_level: &'a str,
    pub virt_mode: &'a str,
    pub helpers: &'a Helpers,
    pub devices: &'a Devices,
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(Error::internal)
}

async fn configs_of_instance(h: Handle<'_>, instance_id: i64) -> Result<Vec<ConfigRow>> {
    let sql = format!("SELECT {COLS} FROM instance_configs WHERE instance_id = $1 ORDER BY id");
    query(sql).bind(instance_id).fetch_all(h).await?.iter().map(config).collect()
}

async fn config_get(h: Handle<'_>, instance_id: i64, id: i64) -> Result<Option<ConfigRow>> {
    let sql = format!("SELECT {COLS} FROM instance_configs WHERE id = $1 AND instance_id = $2");
    query(sql).bind(id).bind(instance_id).fetch_optional(h).await?.as_ref().map(config).transpose()
}

impl Tx<'_> {
    pub async fn config_insert(&mut self, instance_id: i64, v: &ConfigValues<'_>, now: Timestamp) -> Result<ConfigRow> {
        let sql = format!(
            "INSERT INTO instance_configs (instance_id, label, kernel, comments, memory_limit, root_device, run_level, \
             virt_mode, helpers, devices, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(instance_id)
            .bind(v.label)
            .bind(v.kernel)
            .bind(v.comments)
            .bind(v.memory_limit)
            .bind(v.root_device)
            .bind(v.run_level)
            .bind(v.virt_mode)
            .bind(json(v.helpers)?)
            .bind(json(v.devices)?)
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        config(&row)
    }

    /// Replaces a profile's settings.
    pub async fn config_update(&mut self, id: i64, v: &ConfigValues<'_>, now: Timestamp) -> Result<ConfigRow> {
        let sql = format!(
            "UPDATE instance_configs SET label = $2, kernel = $3, comments = $4, memory_limit = $5, root_device = $6, \
             run_level = $7, virt_mode = $8, helpers = $9, devices = $10, updated = $11 WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(v.label)
            .bind(v.kernel)
            .bind(v.comments)
            .bind(v.memory_limit)
            .bind(v.root_device)
            .bind(v.run_level)
            .bind(v.virt_mode)
            .bind(json(v.helpers)?)
            .bind(json(v.devices)?)
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        config(&row)
    }

    /// Marks a profile changed (its interfaces changed).
    pub async fn config_touch(&mut self, id: i64, now: Timestamp) -> Result<()> {
        query("UPDATE instance_configs SET updated = $2 WHERE id = $1")
            .bind(id)
            .bind(now.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// One profile of an instance, read inside the transaction.
    pub async fn config_get(&mut self, instance_id: i64, id: i64) -> Result<Option<ConfigRow>> {
        config_get(self.h(), instance_id, id).await
    }

    /// The profiles of an instance, in id order, read inside the transaction.
    pub async fn configs_of_instance(&mut self, instance_id: i64) -> Result<Vec<ConfigRow>> {
        configs_of_instance(self.h(), instance_id).await
    }

    /// Deletes a profile with its interfaces; the instance forgets it as its boot profile.
    pub async fn config_delete(&mut self, instance_id: i64, id: i64) -> Result<()> {
        query("DELETE FROM instance_interfaces WHERE config_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM instance_configs WHERE id = $1").bind(id).execute(self.h()).await?;
        query("UPDATE instances SET boot_config_id = NULL WHERE id = $1 AND boot_config_id = $2")
            .bind(instance_id)
            .bind(id)
            .execute(self.h())
            .await?;
        Ok(())
    }
}

const CONFIG_LIST: Listing<'static> = Listing {
    select: "SELECT c.id, c.instance_id, c.label, c.kernel, c.comments, c.memory_limit, c.root_device, c.run_level, \
             c.virt_mode, c.helpers, c.devices, c.created, c.updated FROM instance_configs c",
    from: "FROM instance_configs c",
    scope: "c.instance_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "c.id", kind: ColKind::Int },
        Column { path: "label", expr: "c.label", kind: ColKind::Text },
        Column { path: "kernel", expr: "c.kernel", kind: ColKind::Text },
        Column { path: "created", expr: "c.created", kind: ColKind::Text },
        Column { path: "updated", expr: "c.updated", kind: ColKind::Text },
    ],
    order: "c.id",
    kept_count: Some("instance_configs"),
    indexed: &["label", "kernel", "created", "updated"],
};

impl Store {
    /// One page of an instance's profiles and how many match.
    pub async fn configs_page(
        &self,
        instance_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<ConfigRow>, u64)> {
        let v = Visibility { scope_id: instance_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&CONFIG_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(config).collect::<Result<_>>()?, total))
    }

    pub async fn config_get(&self, instance_id: i64, id: i64) -> Result<Option<ConfigRow>> {
        config_get(self.r(), instance_id, id).await
    }

    pub async fn configs_of_instance(&self, instance_id: i64) -> Result<Vec<ConfigRow>> {
        configs_of_instance(self.r(), instance_id).await
    }
}
