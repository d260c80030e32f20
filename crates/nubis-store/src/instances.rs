//! Compute instances: the record, its power state with the transition the runtime is running,
//! and the operators' flags. The root password is written as an argon2 hash and never read back.

use std::sync::Arc;

use crate::db::Row;
use nubis_model::instance::Alerts;
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{CacheKey, Store, Tx};
use nubis_model::filter::Filter;

#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub region: String,
    pub kind: String,
    pub image: Option<String>,
    pub status: String,
    pub target_status: String,
    pub op_seq: i64,
    pub op_event_id: Option<i64>,
    pub op_username: Option<String>,
    pub tags: Vec<String>,
    pub group: String,
    pub alerts: Alerts,
    pub watchdog_enabled: bool,
    pub backups_enabled: bool,
    pub has_user_data: bool,
    pub host_uuid: String,
    /// Operators allowed more than one public IPv4 address ("by support request").
    pub extra_ipv4_allowed: bool,
    /// The instance is being live-migrated (firewall changes are refused meanwhile).
    pub live_migration: bool,
    /// The configuration profile it was last booted with.
    pub boot_config_id: Option<i64>,
    /// `legacy_config` (interfaces on configuration profiles) or `linode` (Linode interfaces).
    pub interface_generation: String,
    pub network_helper: bool,
    pub created: Timestamp,
    pub updated: Timestamp,
}

pub(crate) const COLS: &str = "id, account_id, label, region, type, image, status, target_status, op_seq, \
                    op_event_id, op_username, tags, grp, alerts, watchdog_enabled, backups_enabled, has_user_data, \
                    host_uuid, extra_ipv4_allowed, live_migration, boot_config_id, interface_generation, network_helper, \
                    created, updated";

pub(crate) fn instance(r: &Row) -> Result<InstanceRow> {
    let tags: Vec<String> = serde_json::from_str(&r.str("tags")?).map_err(Error::internal)?;
    let alerts: Alerts = serde_json::from_str(&r.str("alerts")?).map_err(Error::internal)?;
    Ok(InstanceRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        region: r.str("region")?,
        kind: r.str("type")?,
        image: r.opt_str("image")?,
        status: r.str("status")?,
        target_status: r.str("target_status")?,
        op_seq: r.i64("op_seq")?,
        op_event_id: r.opt_i64("op_event_id")?,
        op_username: r.opt_str("op_username")?,
        tags,
        group: r.str("grp")?,
        alerts,
        watchdog_enabled: r.bool("watchdog_enabled")?,
        backups_enabled: r.bool("backups_enabled")?,
        has_user_data: r.bool("has_user_data")?,
        host_uuid: r.str("host_uuid")?,
        extra_ipv4_allowed: r.bool("extra_ipv4_allowed")?,
        live_migration: r.bool("live_migration")?,
        boot_config_id: r.opt_i64("boot_config_id")?,
        interface_generation: r.str("interface_generation")?,
        network_helper: r.bool("network_helper")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

pub struct NewInstance<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub region: &'a str,
    pub kind: &'a str,
    pub image: Option<&'a str>,
    pub status: &'a str,
    pub target_status: &'a str,
    pub op_username: &'a str,
    pub root_pass_hash: Option<&'a str>,
    pub tags: &'a [String],
    pub group: &'a str,
    pub alerts: &'a Alerts,
    pub backups_enabled: bool,
    pub has_user_data: bool,
    pub host_uuid: &'a str,
    pub interface_generation: &'a str,
    pub network_helper: bool,
    pub created: Timestamp,
}

/// The changeable fields of an instance; `None` leaves a field as it is.
#[derive(Default)]
pub struct InstanceChanges<'a> {
    pub label: Option<&'a str>,
    pub tags: Option<&'a [String]>,
    pub group: Option<&'a str>,
    pub alerts: Option<&'a Alerts>,
    pub watchdog_enabled: Option<bool>,
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(Error::internal)
}

async fn instances_of_account(h: Handle<'_>, account_id: i64) -> Result<Vec<InstanceRow>> {
    let sql = format!("SELECT {COLS} FROM instances WHERE account_id = $1 ORDER BY id");
    let rows = query(sql).bind(account_id).fetch_all(h).await?;
    rows.iter().map(instance).collect()
}

impl Tx<'_> {
    pub async fn instance_insert(&mut self, i: &NewInstance<'_>) -> Result<InstanceRow> {
        let sql = format!(
            "INSERT INTO instances (account_id, label, region, type, image, status, target_status, op_username, \
             root_pass_hash, tags, grp, alerts, backups_enabled, has_user_data, host_uuid, created, updated, \
             interface_generation, network_helper) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17, $18) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(i.account_id)
            .bind(i.label)
            .bind(i.region)
            .bind(i.kind)
            .bind(i.image)
            .bind(i.status)
            .bind(i.target_status)
            .bind(i.op_username)
            .bind(i.root_pass_hash)
            .bind(json(&i.tags)?)
            .bind(i.group)
            .bind(json(i.alerts)?)
            .bind(i.backups_enabled)
            .bind(i.has_user_data)
            .bind(i.host_uuid)
            .bind(i.created.to_string())
            .bind(i.interface_generation)
            .bind(i.network_helper)
            .fetch_one(self.h())
            .await?;
        instance(&row)
    }

    /// An instance of the account, read inside the transaction, with its row lock taken (a
    /// no-op update), so that concurrent changes of one instance conflict instead of
    /// interleaving.
    pub async fn instance_lock(&mut self, id: i64, account_id: i64) -> Result<Option<InstanceRow>> {
        let sql = format!("UPDATE instances SET op_seq = op_seq WHERE id = $1 AND account_id = $2 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(instance).transpose()
    }

    /// The instances of an account, read inside the transaction.
    pub async fn instances_of_account(&mut self, account_id: i64) -> Result<Vec<InstanceRow>> {
        instances_of_account(self.h(), account_id).await
    }

    /// The instances of an account with these ids, read inside the transaction.
    pub async fn instances_by_ids(&mut self, account_id: i64, ids: &[i64]) -> Result<Vec<InstanceRow>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(i) = self.instance_lock(*id, account_id).await? {
                out.push(i);
            }
        }
        Ok(out)
    }

    pub async fn instance_update(&mut self, id: i64, c: &InstanceChanges<'_>, now: Timestamp) -> Result<InstanceRow> {
        let sql = format!(
            "UPDATE instances SET label = COALESCE($2, label), tags = COALESCE($3, tags), grp = COALESCE($4, grp), \
             alerts = COALESCE($5, alerts), watchdog_enabled = COALESCE($6, watchdog_enabled), updated = $7 \
             WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(c.label)
            .bind(c.tags.map(json).transpose()?)
            .bind(c.group)
            .bind(c.alerts.map(json).transpose()?)
            .bind(c.watchdog_enabled)
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        instance(&row)
    }

    /// Starts a transition: the instance is now in `status`, heading for `target`; the
    /// operation counter moves on so that a completion of an earlier transition is ignored.
    pub async fn instance_start_transition(
        &mut self,
        id: i64,
        status: &str,
        target: &str,
        event_id: Option<i64>,
        username: &str,
        now: Timestamp,
    ) -> Result<InstanceRow> {
        let sql = format!(
            "UPDATE instances SET status = $2, target_status = $3, op_seq = op_seq + 1, op_event_id = $4, \
             op_username = $5, updated = $6 WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(status)
            .bind(target)
            .bind(event_id)
            .bind(username)
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        instance(&row)
    }

    /// Moves an instance from `from` to `to` if it is still in the transition `op_seq` and in
    /// state `from`; returns the updated record, or `None` when something else happened meanwhile.
    pub async fn instance_step(
        &mut self,
        id: i64,
        op_seq: i64,
        from: &str,
        to: &str,
        event_id: Option<i64>,
        now: Timestamp,
    ) -> Result<Option<InstanceRow>> {
        let sql = format!(
            "UPDATE instances SET status = $4, op_event_id = $5, updated = $6 \
             WHERE id = $1 AND op_seq = $2 AND status = $3 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(op_seq)
            .bind(from)
            .bind(to)
            .bind(event_id)
            .bind(now.to_string())
            .fetch_optional(self.h())
            .await?;
        row.as_ref().map(instance).transpose()
    }

    /// Deletes an instance with everything that hangs on it: interfaces (and their history),
    /// configuration profiles, disks, addresses, ranges routed to it, shares both ways.
    pub async fn instance_delete(&mut self, id: i64) -> Result<()> {
        for sql in [
            "DELETE FROM ip_shares WHERE instance_id = $1",
            "DELETE FROM ip_shares WHERE address IN (SELECT address FROM ip_addresses WHERE instance_id = $1)",
            "DELETE FROM ip_shares WHERE address IN (SELECT range_start FROM ipv6_ranges WHERE instance_id = $1)",
            "DELETE FROM ipv6_ranges WHERE instance_id = $1",
            "DELETE FROM ip_addresses WHERE instance_id = $1",
            "DELETE FROM instance_interfaces WHERE instance_id = $1",
            "DELETE FROM instance_interface_history WHERE instance_id = $1",
            "DELETE FROM instance_configs WHERE instance_id = $1",
            "DELETE FROM instance_disks WHERE instance_id = $1",
            "DELETE FROM instances WHERE id = $1",
        ] {
            query(sql).bind(id).execute(self.h()).await?;
        }
        Ok(())
    }

    /// The ids of the balancer back-end nodes that point at the instance's private addresses
    /// (read inside the transaction).
    pub async fn instance_balancer_nodes(&mut self, instance_id: i64) -> Result<Vec<i64>> {
        self.nb_nodes_of_instance(instance_id).await
    }

    /// True when the instance is part of a service transfer that is pending (and not expired)
    /// or accepted and not yet complete.
    pub async fn instance_in_pending_transfer(&mut self, instance_id: i64) -> Result<bool> {
        Ok(self.instance_active_transfer(instance_id, Timestamp::now()).await?.is_some())
    }

    /// Sets an operator flag; `false` when no such instance exists.
    pub async fn instance_set_flag(&mut self, id: i64, flag: InstanceFlag, on: bool) -> Result<bool> {
        let sql = match flag {
            InstanceFlag::ExtraIpv4 => "UPDATE instances SET extra_ipv4_allowed = $2 WHERE id = $1",
            InstanceFlag::LiveMigration => "UPDATE instances SET live_migration = $2 WHERE id = $1",
        };
        let n = query(sql).bind(id).bind(on).execute(self.h()).await?;
        Ok(n > 0)
    }
}

/// What the lifecycle operations change on an instance (profiles, rebuild, resize, migrate,
/// interfaces); each returns the record as written.
impl Tx<'_> {
    async fn instance_set(&mut self, id: i64, set: &str, v: crate::db::Val, now: Timestamp) -> Result<InstanceRow> {
        let sql = format!("UPDATE instances SET {set} = $2, updated = $3 WHERE id = $1 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(v).bind(now.to_string()).fetch_one(self.h()).await?;
        instance(&row)
    }

    /// The profile the instance boots with from now on.
    pub async fn instance_set_boot_config(&mut self, id: i64, config_id: Option<i64>) -> Result<()> {
        query("UPDATE instances SET boot_config_id = $2 WHERE id = $1")
            .bind(id)
            .bind(config_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// A new image deployed (rebuild): the image, the root password's hash and whether user data
    /// came with it.
    pub async fn instance_deploy(
        &mut self,
        id: i64,
        image: &str,
        root_pass_hash: Option<&str>,
        has_user_data: bool,
        now: Timestamp,
    ) -> Result<InstanceRow> {
        let sql = format!(
            "UPDATE instances SET image = $2, root_pass_hash = $3, has_user_data = $4, updated = $5 WHERE id = $1 \
             RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(image)
            .bind(root_pass_hash)
            .bind(has_user_data)
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        instance(&row)
    }

    pub async fn instance_set_root_pass(&mut self, id: i64, hash: &str, now: Timestamp) -> Result<InstanceRow> {
        self.instance_set(id, "root_pass_hash", hash.into(), now).await
    }

    /// A new plan (resize, mutate).
    pub async fn instance_set_type(&mut self, id: i64, kind: &str, now: Timestamp) -> Result<InstanceRow> {
        self.instance_set(id, "type", kind.into(), now).await
    }

    /// A new region (cross data center migration).
    pub async fn instance_set_region(&mut self, id: i64, region: &str, now: Timestamp) -> Result<InstanceRow> {
        self.instance_set(id, "region", region.into(), now).await
    }

    pub async fn instance_set_interface_generation(
        &mut self,
        id: i64,
        generation: &str,
        now: Timestamp,
    ) -> Result<InstanceRow> {
        self.instance_set(id, "interface_generation", generation.into(), now).await
    }

    /// The instance's remaining addresses and its interfaces move to `region` (a cross data
    /// center migration; the instance record itself moves with [`Tx::instance_set_region`]).
    pub async fn instance_move_region(&mut self, id: i64, region: &str) -> Result<()> {
        for sql in [
            "UPDATE ip_addresses SET region = $2 WHERE instance_id = $1",
            "UPDATE instance_interfaces SET region = $2 WHERE instance_id = $1",
        ] {
            query(sql).bind(id).bind(region).execute(self.h()).await?;
        }
        Ok(())
    }

    pub async fn instance_set_network_helper(&mut self, id: i64, on: bool, now: Timestamp) -> Result<InstanceRow> {
        self.instance_set(id, "network_helper", on.into(), now).await
    }
}

/// The operators' flags of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceFlag {
    ExtraIpv4,
    LiveMigration,
}

impl Store {
    /// The instances of an account, in id order.
    pub async fn instances_of_account(&self, account_id: i64) -> Result<Arc<Vec<InstanceRow>>> {
        self.cached(CacheKey::Collection("instances", account_id), &["instances"], || {
            instances_of_account(self.r(), account_id)
        })
        .await
    }

    /// One instance by id, whatever its account (the runtime and operators' commands).
    pub async fn instance_by_id(&self, id: i64) -> Result<Option<InstanceRow>> {
        let sql = format!("SELECT {COLS} FROM instances WHERE id = $1");
        let row = query(sql).bind(id).fetch_optional(self.r()).await?;
        row.as_ref().map(instance).transpose()
    }

    /// Every instance in one of `statuses` (the runtime resumes these after a restart).
    pub async fn instances_in_status(&self, statuses: &[&str]) -> Result<Vec<InstanceRow>> {
        let mut out = Vec::new();
        for s in statuses {
            let sql = format!("SELECT {COLS} FROM instances WHERE status = $1 ORDER BY id");
            let rows = query(sql).bind(*s).fetch_all(self.r()).await?;
            for r in &rows {
                out.push(instance(r)?);
            }
        }
        Ok(out)
    }
}

const INSTANCE_LIST: Listing<'static> = Listing {
    select: "SELECT i.id, i.account_id, i.label, i.region, i.type, i.image, i.status, i.target_status, i.op_seq, \
             i.op_event_id, i.op_username, i.tags, i.grp, i.alerts, i.watchdog_enabled, i.backups_enabled, \
             i.has_user_data, i.host_uuid, i.extra_ipv4_allowed, i.live_migration, i.boot_config_id, \
             i.interface_generation, i.network_helper, i.created, i.updated \
             FROM instances i",
    from: "FROM instances i",
    scope: "i.account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "i.id", kind: ColKind::Int },
        Column { path: "label", expr: "i.label", kind: ColKind::Text },
        Column { path: "region", expr: "i.region", kind: ColKind::Text },
        Column { path: "type", expr: "i.type", kind: ColKind::Text },
        Column { path: "image", expr: "i.image", kind: ColKind::TextOrNull },
        Column { path: "status", expr: "i.status", kind: ColKind::Text },
        Column { path: "group", expr: "i.grp", kind: ColKind::Text },
        Column { path: "tags", expr: "i.tags", kind: ColKind::Tags { list: "instances", id: "i.id" } },
        Column {
            path: "ipv4",
            expr: "FROM ip_addresses a WHERE a.kind = 'ipv4' AND {}",
            kind: ColKind::Exists { inner: "a.address", owner: "a.instance_id", id: "i.id" },
        },
        Column { path: "created", expr: "i.created", kind: ColKind::Text },
        Column { path: "updated", expr: "i.updated", kind: ColKind::Text },
    ],
    order: "i.id",
    kept_count: Some("instances"),
    // `ipv4` by equality: the address's own unique index.
    indexed: &["tags", "label", "region", "type", "image", "status", "group", "created", "updated", "ipv4"],
};

impl Store {
    /// One instance of an account.
    pub async fn instance_get(&self, account_id: i64, id: i64) -> Result<Option<InstanceRow>> {
        let sql = format!("SELECT {COLS} FROM instances WHERE id = $1 AND account_id = $2");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(instance).transpose()
    }

    /// One page of an account's instances (only those `grant_user` holds a grant on, when
    /// given) and how many the list has.
    pub async fn instances_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<InstanceRow>, u64)> {
        let v = Visibility { scope_id: account_id, grant: grant_user.map(|u| (u, "instance", "i.id")), and: None };
        let (rows, total) = self.fetch_page(&INSTANCE_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(instance).collect::<Result<_>>()?, total))
    }
}

impl Store {
    /// Which of `regions` hold an instance of the account (one that `grant_user` holds a grant
    /// on, when given): one indexed probe per region.
    pub async fn instance_regions(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        regions: &[String],
    ) -> Result<Vec<String>> {
        use crate::sql::{Sql, Val};
        let mut out = Vec::new();
        for region in regions {
            let mut sql = Sql::new("SELECT COUNT(*) FROM (SELECT 1 FROM instances i WHERE i.account_id = ");
            sql.bind(Val::I64(account_id)).push(" AND i.region = ").bind(Val::Str(region.clone()));
            if let Some(user) = grant_user {
                sql.push(" AND EXISTS (SELECT 1 FROM grants g WHERE g.kind = 'instance' AND g.entity_id = i.id");
                sql.push(" AND g.user_id = ").bind(Val::I64(user)).push(")");
            }
            sql.push(" LIMIT 1) x");
            if sql.query().fetch_i64(self.r()).await? > 0 {
                out.push(region.clone());
            }
        }
        Ok(out)
    }
}
