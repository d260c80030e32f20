//! Automatic backups: once a day, in the instance's chosen window (UTC), an instance in the
//! Backup service gets a backup of its disks and profiles; the newest [`KEPT`] are kept. The
//! sweep runs in the background (`nubis serve`) and whenever the test clock moves forward.

use std::time::Duration;

use nubis_model::{Result, Timestamp};
use nubis_store::instance_backups::{BackupCandidate, NewBackup};

use super::validate::latest_window_start;
use super::{KIND_AUTO, contents};
use crate::App;
use crate::instance::configs::refuse_busy;

/// Automatic backups kept per instance (the hosted service keeps a daily and two weekly ones).
pub(crate) const KEPT: usize = 3;

/// The window start a candidate's next automatic backup is due for, if it is due at `now`: the
/// newest start of its window that came after its newest automatic backup and after the
/// service began.
fn due(c: &BackupCandidate, now: Timestamp) -> Option<Timestamp> {
    let start = latest_window_start(now, c.window.as_deref()?)?;
    let after_last = c.last_auto.is_none_or(|l| l < start);
    let after_since = c.since.is_none_or(|s| s <= start);
    (after_last && after_since).then_some(start)
}

impl App {
    /// Takes the automatic backups due at `now`; returns how many were taken. An instance in
    /// the middle of a transition is left for the next sweep.
    pub async fn backups_take_due(&self, now: Timestamp) -> Result<usize> {
        let mut taken = 0;
        for c in self.store.backup_candidates().await? {
            let Some(start) = due(&c, now) else { continue };
            let c = &c;
            let took = self
                .write(|tx| {
                    Box::pin(async move {
                        let Some(inst) = tx.instance_lock(c.instance_id, c.account_id).await? else { return Ok(false) };
                        if !inst.backups_enabled || refuse_busy(&inst).is_err() {
                            return Ok(false);
                        }
                        let mut autos: Vec<_> = tx
                            .backups_of_instance(inst.id)
                            .await?
                            .into_iter()
                            .filter(|b| b.kind == KIND_AUTO)
                            .collect();
                        if autos.iter().any(|b| b.created >= start) {
                            return Ok(false);
                        }
                        let (disks, configs) = contents(tx, &inst).await?;
                        let at = Timestamp::now();
                        let made = tx
                            .backup_insert(&NewBackup {
                                instance_id: inst.id,
                                kind: KIND_AUTO,
                                label: None,
                                status: "successful",
                                region: &inst.region,
                                disks: &disks,
                                configs: &configs,
                                created: at,
                                finished: Some(at),
                            })
                            .await?;
                        autos.push(made);
                        autos.sort_by_key(|b| (b.created, b.id));
                        let excess = autos.len().saturating_sub(KEPT);
                        for old in &autos[..excess] {
                            tx.backup_delete(old.id).await?;
                        }
                        Ok(true)
                    })
                })
                .await?;
            taken += usize::from(took);
        }
        Ok(taken)
    }

    /// Runs [`App::backups_take_due`] every `every` until aborted (`nubis serve`).
    pub fn spawn_backup_taker(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                match app.backups_take_due(Timestamp::now()).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(backups = n, "took automatic backups"),
                    Err(e) => tracing::warn!(error = %e, "taking automatic backups failed"),
                }
                tokio::time::sleep(every).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    fn cand(last: Option<&str>, since: Option<&str>) -> BackupCandidate {
        BackupCandidate {
            instance_id: 1,
            account_id: 1,
            window: Some("W4".into()),
            last_auto: last.map(ts),
            since: since.map(ts),
        }
    }

    #[test]
    fn due_once_per_window_after_the_service_began() {
        let now = ts("2030-01-02T05:00:00");
        assert_eq!(due(&cand(None, Some("2030-01-01T10:00:00")), now), Some(ts("2030-01-02T04:00:00")));
        assert_eq!(due(&cand(Some("2030-01-01T04:30:00"), None), now), Some(ts("2030-01-02T04:00:00")));
        assert_eq!(due(&cand(Some("2030-01-02T04:10:00"), None), now), None, "taken in this window");
        assert_eq!(due(&cand(None, Some("2030-01-02T04:30:00")), now), None, "enabled after the window began");
        let mut c = cand(None, None);
        c.window = Some("Scheduling".into());
        assert_eq!(due(&c, now), None);
    }
}
