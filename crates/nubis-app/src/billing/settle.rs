//! Charges and refunds through the payment gateway, never inside a transaction.
//!
//! A charge is recorded first as a pending payment (with the key that makes the gateway charge
//! once however often the key is sent), the gateway is called with no transaction open, and a
//! second write confirms or drops the payment. When that second write never comes (the process
//! stopped, the database was away), the settler finds the pending payment once its request is
//! over (`billing.settle_after_secs`), sends the same key again to learn what happened, and, as
//! the client was told the payment failed or heard nothing, gives any charge back. A pending
//! payment counts in the balance only once it is confirmed. A charge to give back goes through the durable refund queue: a refund the
//! gateway does not take is tried again, with a growing pause, until it does; none is dropped.

use std::time::Duration;

use nubis_model::{Result, Timestamp};

use super::gateway::GatewayError;
use crate::App;
use crate::controls::PaymentFault;

/// The purpose of a pending payment made by a cancellation (it holds the account's other
/// payments back until it is settled).
pub(crate) const PURPOSE_CANCEL: &str = "cancel";

/// The longest pause between two attempts of one refund.
const REFUND_PAUSE_MAX_SECS: i64 = 3600;

impl App {
    /// Charges `cents` to a stored card of the account: the test controls' payment faults (a
    /// decline, an unreachable gateway, an answer lost after the charge) are met first.
    pub(crate) async fn charge(
        &self,
        account_id: i64,
        card_ref: &str,
        cents: i64,
        key: &str,
    ) -> std::result::Result<String, GatewayError> {
        let unreachable = || GatewayError::Unreachable("The payment gateway did not answer.".into());
        match self.controls.faults.take_payment(account_id) {
            Some(PaymentFault::Declined) => Err(GatewayError::Declined("Your card was declined.".into())),
            Some(PaymentFault::Unreachable) => Err(unreachable()),
            Some(PaymentFault::AnswerLost) => {
                self.payment_gateway().charge(card_ref, cents, key).await?;
                Err(unreachable())
            }
            None => self.payment_gateway().charge(card_ref, cents, key).await,
        }
    }

    /// Gives a charge back through the gateway (the test controls' refund faults first).
    async fn refund(&self, account_id: i64, charge_ref: &str) -> std::result::Result<(), GatewayError> {
        if self.controls.faults.take_refund(account_id) {
            return Err(GatewayError::Unreachable("The payment gateway did not answer.".into()));
        }
        self.payment_gateway().refund(charge_ref).await
    }

    /// Gives up a pending payment: it is dropped (it never counted in the balance); a charge the
    /// gateway made for it (`charged`) is queued to be given back, and the queue runs at once.
    pub(crate) async fn payment_give_up(&self, id: i64, charged: Option<&str>) -> Result<()> {
        let queued = self
            .write(|tx| {
                Box::pin(async move {
                    let Some(p) = tx.payment_pending_get(id).await? else { return Ok(false) };
                    tx.payment_pending_drop(id).await?;
                    if let Some(reference) = charged {
                        let reason = format!("payment {id} was not completed");
                        tx.refund_enqueue(p.account_id, reference, p.cents, &reason, Timestamp::now()).await?;
                    }
                    Ok(charged.is_some())
                })
            })
            .await?;
        if queued {
            self.refunds_run_due().await?;
        }
        Ok(())
    }

    /// Settles the payments left pending by requests that are over: the gateway is asked again
    /// with the same key; a charge it made is given back, one it refused is dropped, and one it
    /// cannot answer for waits for the next round. Returns how many were settled.
    pub async fn payments_settle_due(&self) -> Result<usize> {
        let after = i64::try_from(self.config.billing.settle_after_secs).unwrap_or(i64::MAX);
        let mut settled = 0;
        for p in self.store.payments_pending_before(Timestamp::now().plus_seconds(-after)).await? {
            match self.charge(p.account_id, &p.card_ref, p.cents, &p.charge_key).await {
                Ok(reference) => self.payment_give_up(p.id, Some(&reference)).await?,
                Err(GatewayError::Declined(_)) => self.payment_give_up(p.id, None).await?,
                Err(GatewayError::Unreachable(_)) => continue,
            }
            tracing::info!(payment = p.id, "settled a payment left pending");
            settled += 1;
        }
        Ok(settled)
    }

    /// Gives back the queued refunds that are due; one the gateway does not take is tried again
    /// later (a pause that doubles with each attempt, up to an hour). Returns how many went back.
    pub async fn refunds_run_due(&self) -> Result<usize> {
        let mut done = 0;
        for r in self.store.refunds_due(Timestamp::now()).await? {
            let outcome = self.refund(r.account_id, &r.charge_ref).await;
            let (id, attempts, outcome_ref) = (r.id, r.attempts, &outcome);
            self.write(|tx| {
                Box::pin(async move {
                    let now = Timestamp::now();
                    match outcome_ref {
                        Ok(()) => tx.refund_done(id, now).await,
                        Err(GatewayError::Declined(m) | GatewayError::Unreachable(m)) => {
                            let pause = (1i64 << attempts.clamp(0, 12)).min(REFUND_PAUSE_MAX_SECS);
                            tx.refund_retry_at(id, m, now.plus_seconds(pause)).await
                        }
                    }
                })
            })
            .await?;
            match outcome {
                Ok(()) => done += 1,
                Err(e) => tracing::warn!(refund = r.id, error = ?e, "a refund was not taken; it will be tried again"),
            }
        }
        Ok(done)
    }

    /// Settles pending payments and runs the refund queue every `every`, until aborted
    /// (`nubis serve`).
    pub fn spawn_payment_settler(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = app.settle_round().await {
                    tracing::warn!(error = %e, "settling payments failed; trying again");
                }
                tokio::time::sleep(every).await;
            }
        })
    }

    /// Operators: every queued refund with its account's euuid.
    pub async fn admin_refunds(
        &self,
        _admin: &crate::admin::Admin,
    ) -> Result<Vec<(nubis_store::billing::Refund, String)>> {
        let mut out = Vec::new();
        for r in self.store.refunds_all().await? {
            let euuid = self.store.account_get(r.account_id).await?.map(|a| a.euuid).unwrap_or_default();
            out.push((r, euuid));
        }
        Ok(out)
    }

    /// Operators: one round of the settler now; (payments settled, refunds given back).
    pub async fn admin_settle(&self, _admin: &crate::admin::Admin) -> Result<(usize, usize)> {
        Ok((self.payments_settle_due().await?, self.refunds_run_due().await?))
    }

    /// One round of the settler.
    pub(crate) async fn settle_round(&self) -> Result<()> {
        self.payments_settle_due().await?;
        self.refunds_run_due().await.map(drop)
    }
}
