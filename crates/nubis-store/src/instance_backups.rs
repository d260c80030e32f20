//! Backups of instances (migration 0035; not to be confused with [`crate::backup`], the copy of
//! the whole database): each backup holds copies of its instance's disks and configuration
//! profiles as they were when it was taken, and goes with its instance. Also the instances'
//! backup schedules and the switch of the Backup service on an instance.

use nubis_model::instance_profile::Helpers;
use nubis_model::{Error, Result, Timestamp};
use serde::{Deserialize, Serialize};

use crate::db::{Handle, Row, query};
use crate::rows::RowExt;
use crate::{Store, Tx};

/// A disk as a backup holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackupDisk {
    pub label: String,
    /// MB.
    pub size: i64,
    pub filesystem: String,
    /// The image that was deployed to it.
    pub image: Option<String>,
}

/// A configuration profile as a backup holds it: its settings, and its devices naming the
/// backup's disks by position (`(slot, index into disks)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackupConfig {
    pub label: String,
    pub kernel: String,
    pub comments: Option<String>,
    pub memory_limit: i64,
    pub root_device: String,
    pub run_level: String,
    pub virt_mode: String,
    pub helpers: Helpers,
    pub devices: Vec<(String, usize)>,
    /// It was the profile the instance booted with.
    pub boot: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BackupRow {
    pub id: i64,
    pub instance_id: i64,
    /// `auto` or `snapshot`.
    pub kind: String,
    pub label: Option<String>,
    pub status: String,
    pub region: String,
    pub disks: Vec<BackupDisk>,
    pub configs: Vec<BackupConfig>,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub finished: Option<Timestamp>,
}

/// A backup about to be written.
pub struct NewBackup<'a> {
    pub instance_id: i64,
    pub kind: &'a str,
    pub label: Option<&'a str>,
    pub status: &'a str,
    pub region: &'a str,
    pub disks: &'a [BackupDisk],
    pub configs: &'a [BackupConfig],
    pub created: Timestamp,
    pub finished: Option<Timestamp>,
}

/// An instance's backup schedule and its last successful backup (the `backups` of its record).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackupState {
    pub day: Option<String>,
    pub window: Option<String>,
    pub last_successful: Option<Timestamp>,
}

const COLS: &str = "id, instance_id, kind, label, status, region, disks, configs, created, updated, finished";

fn backup(r: &Row) -> Result<BackupRow> {
    Ok(BackupRow {
        id: r.i64("id")?,
        instance_id: r.i64("instance_id")?,
        kind: r.str("kind")?,
        label: r.opt_str("label")?,
        status: r.str("status")?,
        region: r.str("region")?,
        disks: serde_json::from_str(&r.str("disks")?).map_err(Error::internal)?,
        configs: serde_json::from_str(&r.str("configs")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
        finished: r.opt_ts("finished")?,
    })
}

async fn backups_of_instance(h: Handle<'_>, instance_id: i64) -> Result<Vec<BackupRow>> {
    let sql = format!("SELECT {COLS} FROM instance_backups WHERE instance_id = $1 ORDER BY id");
    query(sql).bind(instance_id).fetch_all(h).await?.iter().map(backup).collect()
}

async fn backup_get(h: Handle<'_>, instance_id: i64, id: i64) -> Result<Option<BackupRow>> {
    let sql = format!("SELECT {COLS} FROM instance_backups WHERE id = $1 AND instance_id = $2");
    query(sql).bind(id).bind(instance_id).fetch_optional(h).await?.as_ref().map(backup).transpose()
}

/// A backup of any instance of the account.
async fn backup_of_account(h: Handle<'_>, account_id: i64, id: i64) -> Result<Option<BackupRow>> {
    let sql = format!(
        "SELECT {COLS} FROM instance_backups WHERE id = $1 AND instance_id IN (SELECT id FROM instances WHERE \
         account_id = $2)"
    );
    query(sql).bind(id).bind(account_id).fetch_optional(h).await?.as_ref().map(backup).transpose()
}

/// An instance in the Backup service, as the automatic backups' sweep sees it.
#[derive(Debug, Clone)]
pub struct BackupCandidate {
    pub instance_id: i64,
    pub account_id: i64,
    /// The chosen window (`W0`..`W22`).
    pub window: Option<String>,
    /// When its newest automatic backup was taken.
    pub last_auto: Option<Timestamp>,
    /// When the service began (its add-on's meter).
    pub since: Option<Timestamp>,
}

async fn schedule(h: Handle<'_>, instance_id: i64) -> Result<(Option<String>, Option<String>)> {
    let r = query("SELECT sched_day, sched_window FROM instance_backup_schedules WHERE instance_id = $1")
        .bind(instance_id)
        .fetch_optional(h)
        .await?;
    match r {
        Some(r) => Ok((r.opt_str("sched_day")?, r.opt_str("sched_window")?)),
        None => Ok((None, None)),
    }
}

fn json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(Error::internal)
}

impl Tx<'_> {
    pub async fn backup_insert(&mut self, b: &NewBackup<'_>) -> Result<BackupRow> {
        let sql = format!(
            "INSERT INTO instance_backups (instance_id, kind, label, status, region, disks, configs, created, updated, \
             finished) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(b.instance_id)
            .bind(b.kind)
            .bind(b.label)
            .bind(b.status)
            .bind(b.region)
            .bind(json(&b.disks)?)
            .bind(json(&b.configs)?)
            .bind(b.created.to_string())
            .bind(b.finished.map(|f| f.to_string()))
            .fetch_one(self.h())
            .await?;
        backup(&row)
    }

    /// The backups of an instance, in id order, read inside the transaction.
    pub async fn backups_of_instance(&mut self, instance_id: i64) -> Result<Vec<BackupRow>> {
        backups_of_instance(self.h(), instance_id).await
    }

    /// One backup of an instance, read inside the transaction.
    pub async fn backup_get(&mut self, instance_id: i64, id: i64) -> Result<Option<BackupRow>> {
        backup_get(self.h(), instance_id, id).await
    }

    /// A backup of any instance of the account, read inside the transaction.
    pub async fn backup_of_account(&mut self, account_id: i64, id: i64) -> Result<Option<BackupRow>> {
        backup_of_account(self.h(), account_id, id).await
    }

    /// Deletes one backup.
    pub async fn backup_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM instance_backups WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Deletes the instance's backups of one kind (`None`: all of them).
    pub async fn backups_delete(&mut self, instance_id: i64, kind: Option<&str>) -> Result<()> {
        query("DELETE FROM instance_backups WHERE instance_id = $1 AND ($2 IS NULL OR kind = $2)")
            .bind(instance_id)
            .bind(kind)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Turns the Backup service of an instance on or off.
    pub async fn instance_set_backups_enabled(
        &mut self,
        instance_id: i64,
        enabled: bool,
        now: Timestamp,
    ) -> Result<()> {
        query("UPDATE instances SET backups_enabled = $2, updated = $3 WHERE id = $1")
            .bind(instance_id)
            .bind(enabled)
            .bind(now.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// The instance's backup schedule (day, window), read inside the transaction.
    pub async fn backup_schedule(&mut self, instance_id: i64) -> Result<(Option<String>, Option<String>)> {
        schedule(self.h(), instance_id).await
    }

    pub async fn backup_schedule_set(
        &mut self,
        instance_id: i64,
        day: Option<&str>,
        window: Option<&str>,
    ) -> Result<()> {
        query(
            "INSERT INTO instance_backup_schedules (instance_id, sched_day, sched_window) VALUES ($1, $2, $3) \
             ON CONFLICT (instance_id) DO UPDATE SET sched_day = excluded.sched_day, \
             sched_window = excluded.sched_window",
        )
        .bind(instance_id)
        .bind(day)
        .bind(window)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// The account-wide `backups_enabled` setting (new instances get the Backup service).
    pub async fn account_backups_enabled(&mut self, account_id: i64) -> Result<bool> {
        let r = query("SELECT backups_enabled FROM account_billing WHERE account_id = $1")
            .bind(account_id)
            .fetch_optional(self.h())
            .await?;
        r.map(|r| r.bool("backups_enabled")).transpose().map(|b| b.unwrap_or(false))
    }
}

impl Store {
    pub async fn backups_of_instance(&self, instance_id: i64) -> Result<Vec<BackupRow>> {
        backups_of_instance(self.r(), instance_id).await
    }

    pub async fn backup_get(&self, instance_id: i64, id: i64) -> Result<Option<BackupRow>> {
        backup_get(self.r(), instance_id, id).await
    }

    /// Every instance in the Backup service, with its window, newest automatic backup and
    /// start (the automatic backups' sweep, which runs in the background).
    pub async fn backup_candidates(&self) -> Result<Vec<BackupCandidate>> {
        let rows = query(
            "SELECT i.id, i.account_id, s.sched_window, (SELECT MAX(b.created) FROM instance_backups b WHERE \
             b.instance_id = i.id AND b.kind = 'auto') AS last_auto, (SELECT MAX(m.started) FROM meters m WHERE \
             m.service_type = 'backup' AND m.service_id = i.id AND m.ended IS NULL) AS since FROM instances i LEFT \
             JOIN instance_backup_schedules s ON s.instance_id = i.id WHERE i.backups_enabled ORDER BY i.id",
        )
        .fetch_all(self.r())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(BackupCandidate {
                    instance_id: r.i64("id")?,
                    account_id: r.i64("account_id")?,
                    window: r.opt_str("sched_window")?,
                    last_auto: r.opt_ts("last_auto")?,
                    since: r.opt_ts("since")?,
                })
            })
            .collect()
    }

    /// A backup of any instance of the account.
    pub async fn backup_of_account(&self, account_id: i64, id: i64) -> Result<Option<BackupRow>> {
        backup_of_account(self.r(), account_id, id).await
    }

    /// The backup state of some instances: `(instance_id, state)` for those with a schedule or
    /// a successful backup.
    pub async fn backup_states(&self, instance_ids: &[i64]) -> Result<Vec<(i64, BackupState)>> {
        // One statement for both: the schedules, then the successful backups (one round trip
        // where a page of instances reads them).
        let rows = self
            .fetch_in_rows(
                "SELECT instance_id, sched_day, sched_window, finished FROM (\
                 SELECT instance_id, sched_day, sched_window, CAST(NULL AS TEXT) AS finished \
                 FROM instance_backup_schedules UNION ALL \
                 SELECT instance_id, CAST(NULL AS TEXT), CAST(NULL AS TEXT), finished FROM instance_backups \
                 WHERE status = 'successful') b",
                "instance_id",
                crate::sql::Keys::Ids(instance_ids),
                "instance_id",
            )
            .await?;
        let mut out: Vec<(i64, BackupState)> = Vec::new();
        for r in &rows {
            let id = r.i64("instance_id")?;
            // Rows come in instance order: an instance's slot, if it has one, is the last.
            if out.last().is_none_or(|(x, _)| *x != id) {
                out.push((id, BackupState::default()));
            }
            let state = &mut out.last_mut().expect("pushed above").1;
            if let Some(day) = r.opt_str("sched_day")? {
                state.day = Some(day);
            }
            if let Some(window) = r.opt_str("sched_window")? {
                state.window = Some(window);
            }
            let finished = r.opt_ts("finished")?;
            if finished > state.last_successful {
                state.last_successful = finished;
            }
        }
        Ok(out)
    }
}
