//! What happens to transfers without a request: completion of accepted transfers (the instances
//! move with their addresses to the receiving account) and expiry of pending ones. Both run off
//! the one clock (`Timestamp::now()`); `nubis serve` runs [`App::spawn_transfer_worker`], and the
//! test controls call [`App::transfers_expire_due`] after moving the clock.

use std::time::Duration;

use nubis_model::grants::GrantKind;
use nubis_model::service_transfer::TransferStatus;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;

use super::{account_event, conditions, ids_text, mail_account};
use crate::App;

/// Moves the metering of an instance to another account from `at` (the billing area's meters).
async fn billing_move(tx: &mut Tx<'_>, instance_id: i64, to: i64, at: Timestamp) -> Result<()> {
    tx.billing_move_instance(instance_id, to, at).await
}

impl App {
    /// Marks every pending transfer past its expiry `stale` (with an event to its creator) and
    /// frees its instances; returns how many expired.
    pub async fn transfers_expire_due(&self, now: Timestamp) -> Result<usize> {
        self.write(|tx| {
            Box::pin(async move {
                let n = self.expire_in(tx, now, None).await?;
                Ok(n)
            })
        })
        .await
    }

    /// The expiry sweep inside a caller's transaction: of every transfer due, or (`holding`) of
    /// those that hold one of these instances.
    pub(super) async fn expire_in(&self, tx: &mut Tx<'_>, now: Timestamp, holding: Option<&[i64]>) -> Result<usize> {
        let due = tx.transfers_expire_due(now, holding).await?;
        let events: Vec<_> = due
            .iter()
            .map(|t| {
                let msg = format!(
                    "Transfer of instances {} expired at {} without being accepted",
                    ids_text(&t.instances),
                    t.expiry
                );
                account_event(t.account_id, "entity_transfer_stale", t, "notification", msg)
            })
            .collect();
        tx.events_insert(&events).await?;
        Ok(due.len())
    }

    /// Completes an accepted transfer: the instances, with their interfaces and addresses, now
    /// belong to the receiving account (grants on them are withdrawn; billing moves from now).
    /// When a condition broke since the acceptance, nothing moves and the transfer `failed`.
    /// Returns the new status, or `None` when the transfer was not waiting for completion.
    pub async fn transfer_complete(&self, token: &str) -> Result<Option<TransferStatus>> {
        let done = self
            .write(|tx| {
                Box::pin(async move {
                    let now = Timestamp::now();
                    let Some(t) = tx.transfer_lock(token).await? else { return Ok(None) };
                    if t.status != TransferStatus::Accepted {
                        return Ok(None);
                    }
                    let receiver =
                        t.receiver_account_id.ok_or_else(|| Error::internal("accepted transfer without receiver"))?;
                    let standing = conditions::standing(tx, t.account_id).await?;
                    let mut errors = Vec::new();
                    let mut rows = Vec::new();
                    for (k, id) in t.instances.iter().enumerate() {
                        let Some(i) = tx.instance_lock(*id, t.account_id).await? else {
                            errors.push(conditions::not_owned(k, *id, "the account that created this transfer"));
                            continue;
                        };
                        conditions::instance_problems(tx, k, &i, standing.managed, &mut errors).await?;
                        if tx.instance_label_taken(receiver, &i.label).await? {
                            errors.push(conditions::label_taken(k, &i));
                        }
                        rows.push(i);
                    }
                    let status = if errors.is_empty() {
                        let ids: Vec<i64> = rows.iter().map(|i| i.id).collect();
                        if !tx.instances_move(&ids, t.account_id, receiver, now).await? {
                            return Err(Error::internal("instance changed account during completion"));
                        }
                        for id in &ids {
                            tx.grants_delete_entity(GrantKind::Instance, *id).await?;
                            billing_move(tx, *id, receiver, now).await?;
                        }
                        tx.events_copy_of_entities("instance", &ids, t.account_id, receiver).await?;
                        tx.transfer_end(t.id, TransferStatus::Completed, now).await?;
                        for e in [t.sender_event_id, t.receiver_event_id].into_iter().flatten() {
                            tx.event_set_status(e, "finished").await?;
                        }
                        TransferStatus::Completed
                    } else {
                        tx.transfer_end(t.id, TransferStatus::Failed, now).await?;
                        for e in [t.sender_event_id, t.receiver_event_id].into_iter().flatten() {
                            tx.event_set_status(e, "failed").await?;
                        }
                        let why: Vec<String> = errors.iter().map(|e| e.reason.clone()).collect();
                        let msg =
                            format!("Transfer of instances {} failed: {}", ids_text(&t.instances), why.join("; "));
                        for account in [t.account_id, receiver] {
                            tx.event_insert(&account_event(
                                account,
                                "entity_transfer_fail",
                                &t,
                                "notification",
                                msg.clone(),
                            ))
                            .await?;
                            mail_account(tx, account, "Service transfer failed", &format!("{msg}\n")).await?;
                        }
                        TransferStatus::Failed
                    };
                    Ok(Some(status))
                })
            })
            .await?;
        Ok(done)
    }

    /// Completes every transfer accepted `transfers.complete_after_ms` ago or earlier (after a
    /// restart, or one whose completion task failed).
    pub async fn transfers_complete_accepted(&self) -> Result<usize> {
        let mut n = 0;
        let delay_secs = i64::try_from(self.config.transfers.complete_after_ms / 1000).unwrap_or(i64::MAX);
        let by = Timestamp::now().plus_seconds(-delay_secs);
        for token in self.store.transfers_accepted(by).await? {
            if self.transfer_complete(&token).await?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Runs the expiry sweep and the completion of accepted transfers every
    /// `transfers.sweep_interval_ms`, until the returned handle is aborted.
    pub fn spawn_transfer_worker(&self) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        let every = Duration::from_millis(self.config.transfers.sweep_interval_ms.max(10));
        tokio::spawn(async move {
            loop {
                if let Err(e) = app.transfers_expire_due(Timestamp::now()).await {
                    tracing::warn!(error = %e, "service transfer expiry sweep failed");
                }
                if let Err(e) = app.transfers_complete_accepted().await {
                    tracing::warn!(error = %e, "service transfer completion failed");
                }
                tokio::time::sleep(every).await;
            }
        })
    }
}
