//! The records of the Backup service as the hosted API shows them: a backup, an instance's list
//! of backups, and the (always empty) volumes of an instance.

use nubis_model::Timestamp;
use nubis_store::instance_backups::BackupRow;
use serde::Serialize;
use utoipa::ToSchema;

/// A disk of a backup.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BackupDiskView {
    pub label: String,
    /// MB.
    pub size: i64,
    /// `raw`, `swap`, `ext3`, `ext4` or `initrd`.
    pub filesystem: String,
}

/// A backup of an instance (reference `Backup`): automatic, or a snapshot taken by a user.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Backup {
    pub id: i64,
    /// The snapshot's label (null for automatic backups).
    pub label: Option<String>,
    /// `pending`, `running`, `needsPostProcessing`, `successful`, `failed`, `userAborted` or
    /// `paused`.
    pub status: String,
    /// `auto` or `snapshot`.
    #[serde(rename = "type")]
    pub kind: String,
    /// It may be restored.
    pub available: bool,
    pub disks: Vec<BackupDiskView>,
    /// The labels of the configuration profiles it holds.
    pub configs: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
    pub finished: Option<Timestamp>,
}

/// The snapshot slot of an instance: the last snapshot taken and the one being taken.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SnapshotSlot {
    pub current: Option<Backup>,
    pub in_progress: Option<Backup>,
}

/// `GET .../backups`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BackupList {
    pub automatic: Vec<Backup>,
    pub snapshot: SnapshotSlot,
}

/// A Block Storage volume (reference `Volume`): a product nubis does not offer, so no instance
/// has any; the record is documented for the (empty) list.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Volume {
    pub id: i64,
    pub label: String,
    pub status: String,
    pub region: String,
    /// GiB.
    pub size: i64,
    pub instance_id: Option<i64>,
    pub instance_label: Option<String>,
    pub filesystem_path: String,
    pub hardware_type: String,
    pub encryption: String,
    pub tags: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// The statuses of a backup still being taken.
pub(crate) const IN_PROGRESS: &[&str] = &["pending", "running", "needsPostProcessing"];

pub(crate) fn backup_record(b: &BackupRow) -> Backup {
    Backup {
        id: b.id,
        label: b.label.clone(),
        status: b.status.clone(),
        kind: b.kind.clone(),
        available: b.status == "successful",
        disks: b
            .disks
            .iter()
            .map(|d| BackupDiskView { label: d.label.clone(), size: d.size, filesystem: d.filesystem.clone() })
            .collect(),
        configs: b.configs.iter().map(|c| c.label.clone()).collect(),
        created: b.created,
        updated: b.updated,
        finished: b.finished,
    }
}

/// An instance's backups as the list shows them: automatic ones, newest first; the newest
/// finished snapshot and the one in progress.
pub(crate) fn backup_list(rows: &[BackupRow]) -> BackupList {
    let mut automatic: Vec<Backup> = rows.iter().filter(|b| b.kind == "auto").map(backup_record).collect();
    automatic.reverse();
    let snaps = || rows.iter().rev().filter(|b| b.kind == "snapshot");
    BackupList {
        automatic,
        snapshot: SnapshotSlot {
            current: snaps().find(|b| !IN_PROGRESS.contains(&b.status.as_str())).map(backup_record),
            in_progress: snaps().find(|b| IN_PROGRESS.contains(&b.status.as_str())).map(backup_record),
        },
    }
}
