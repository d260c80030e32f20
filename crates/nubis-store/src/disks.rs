//! Disks of instances, with what was deployed to them (image, root password hash, the public keys
//! installed for root). A disk is read through its instance, which the caller has found in the
//! account. The root password hash is written and never read back.

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct DiskRow {
    pub id: i64,
    pub instance_id: i64,
    pub label: String,
    /// MB.
    pub size: i64,
    pub filesystem: String,
    pub status: String,
    pub image: Option<String>,
    /// The public keys installed for root when an image was deployed to it.
    pub authorized_keys: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

const COLS: &str = "id, instance_id, label, size, filesystem, status, image, authorized_keys, created, updated";

fn disk(r: &Row) -> Result<DiskRow> {
    Ok(DiskRow {
        id: r.i64("id")?,
        instance_id: r.i64("instance_id")?,
        label: r.str("label")?,
        size: r.i64("size")?,
        filesystem: r.str("filesystem")?,
        status: r.str("status")?,
        image: r.opt_str("image")?,
        authorized_keys: serde_json::from_str(&r.str("authorized_keys")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

/// A disk about to be written.
pub struct NewDisk<'a> {
    pub instance_id: i64,
    pub label: &'a str,
    pub size: i64,
    pub filesystem: &'a str,
    pub status: &'a str,
    pub image: Option<&'a str>,
    pub root_pass_hash: Option<&'a str>,
    pub authorized_keys: &'a [String],
    pub created: Timestamp,
}

async fn disks_of_instance(h: Handle<'_>, instance_id: i64) -> Result<Vec<DiskRow>> {
    let sql = format!("SELECT {COLS} FROM instance_disks WHERE instance_id = $1 ORDER BY id");
    query(sql).bind(instance_id).fetch_all(h).await?.iter().map(disk).collect()
}

async fn disk_get(h: Handle<'_>, instance_id: i64, id: i64) -> Result<Option<DiskRow>> {
    let sql = format!("SELECT {COLS} FROM instance_disks WHERE id = $1 AND instance_id = $2");
    query(sql).bind(id).bind(instance_id).fetch_optional(h).await?.as_ref().map(disk).transpose()
}

impl Tx<'_> {
    pub async fn disk_insert(&mut self, d: &NewDisk<'_>) -> Result<DiskRow> {
        let sql = format!(
            "INSERT INTO instance_disks (instance_id, label, size, filesystem, status, image, root_pass_hash, \
             authorized_keys, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(d.instance_id)
            .bind(d.label)
            .bind(d.size)
            .bind(d.filesystem)
            .bind(d.status)
            .bind(d.image)
            .bind(d.root_pass_hash)
            .bind(serde_json::to_string(d.authorized_keys).map_err(Error::internal)?)
            .bind(d.created.to_string())
            .fetch_one(self.h())
            .await?;
        disk(&row)
    }

    /// One disk of an instance, read inside the transaction.
    pub async fn disk_get(&mut self, instance_id: i64, id: i64) -> Result<Option<DiskRow>> {
        disk_get(self.h(), instance_id, id).await
    }

    /// The disks of an instance, in id order, read inside the transaction.
    pub async fn disks_of_instance(&mut self, instance_id: i64) -> Result<Vec<DiskRow>> {
        disks_of_instance(self.h(), instance_id).await
    }

    pub async fn disk_set_label(&mut self, id: i64, label: &str, now: Timestamp) -> Result<DiskRow> {
        let sql = format!("UPDATE instance_disks SET label = $2, updated = $3 WHERE id = $1 RETURNING {COLS}");
        disk(&query(sql).bind(id).bind(label).bind(now.to_string()).fetch_one(self.h()).await?)
    }

    pub async fn disk_set_size(&mut self, id: i64, size: i64, now: Timestamp) -> Result<DiskRow> {
        let sql = format!("UPDATE instance_disks SET size = $2, updated = $3 WHERE id = $1 RETURNING {COLS}");
        disk(&query(sql).bind(id).bind(size).bind(now.to_string()).fetch_one(self.h()).await?)
    }

    pub async fn disk_set_root_pass(&mut self, id: i64, hash: &str, now: Timestamp) -> Result<()> {
        query("UPDATE instance_disks SET root_pass_hash = $2, updated = $3 WHERE id = $1")
            .bind(id)
            .bind(hash)
            .bind(now.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn disk_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM instance_disks WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Copies a disk of one instance to another (a clone), with a new label; returns the copy.
    pub async fn disk_copy(&mut self, id: i64, to_instance: i64, label: &str, now: Timestamp) -> Result<DiskRow> {
        let sql = format!(
            "INSERT INTO instance_disks (instance_id, label, size, filesystem, status, image, root_pass_hash, \
             authorized_keys, created, updated) \
             SELECT $2, $3, size, filesystem, 'ready', image, root_pass_hash, authorized_keys, $4, $4 \
             FROM instance_disks WHERE id = $1 RETURNING {COLS}"
        );
        disk(&query(sql).bind(id).bind(to_instance).bind(label).bind(now.to_string()).fetch_one(self.h()).await?)
    }
}

const DISK_LIST: Listing<'static> = Listing {
    select: "SELECT d.id, d.instance_id, d.label, d.size, d.filesystem, d.status, d.image, d.authorized_keys, \
             d.created, d.updated FROM instance_disks d",
    from: "FROM instance_disks d",
    scope: "d.instance_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "d.id", kind: ColKind::Int },
        Column { path: "label", expr: "d.label", kind: ColKind::Text },
        Column { path: "size", expr: "d.size", kind: ColKind::Int },
        Column { path: "filesystem", expr: "d.filesystem", kind: ColKind::Text },
        Column { path: "status", expr: "d.status", kind: ColKind::Text },
        Column { path: "created", expr: "d.created", kind: ColKind::Text },
        Column { path: "updated", expr: "d.updated", kind: ColKind::Text },
    ],
    order: "d.id",
    kept_count: Some("instance_disks"),
    indexed: &["label", "size", "filesystem", "status", "created", "updated"],
};

impl Store {
    /// One page of an instance's disks and how many match.
    pub async fn disks_page(
        &self,
        instance_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<DiskRow>, u64)> {
        let v = Visibility { scope_id: instance_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&DISK_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(disk).collect::<Result<_>>()?, total))
    }

    pub async fn disk_get(&self, instance_id: i64, id: i64) -> Result<Option<DiskRow>> {
        disk_get(self.r(), instance_id, id).await
    }

    pub async fn disks_of_instance(&self, instance_id: i64) -> Result<Vec<DiskRow>> {
        disks_of_instance(self.r(), instance_id).await
    }
}
