//! Payments and their settlement with the payment gateway.
//!
//! A charge is never made while a transaction is open: the payment is recorded `pending` (with
//! the key that makes the gateway charge it once however often it is sent), the gateway is
//! called, and a second transaction confirms the payment or drops it. A pending payment that
//! no request settles (the process stopped, the database went away between the two) is settled
//! later from here. A charge that must be given back and could not be yet waits in
//! `gateway_refunds` until the gateway takes it.

use nubis_model::billing::{Cents, Payment};
use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

fn payment(r: &Row) -> Result<Payment> {
    Ok(Payment { id: r.i64("id")?, date: r.ts("date")?, usd: Cents(r.i64("usd")?) })
}

/// The account's confirmed payments, newest first.
const PAYMENT_LIST: Listing<'static> = Listing {
    select: "SELECT id, date, usd FROM payments",
    from: "FROM payments",
    scope: "account_id",
    and: " AND status = 'confirmed'",
    cols: &[
        Column { path: "id", expr: "id", kind: ColKind::Int },
        Column { path: "date", expr: "date", kind: ColKind::Text },
    ],
    order: "id DESC",
    kept_count: Some("confirmed_payments"),
    indexed: &["date"],
};

/// A payment recorded before its charge, until the charge is confirmed or given up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingPayment {
    pub id: i64,
    pub account_id: i64,
    pub method_id: i64,
    pub cents: i64,
    pub date: Timestamp,
    /// The key the gateway charges once by.
    pub charge_key: String,
    /// `payment` (a payment a user made) or `cancel` (the balance charged by a cancellation).
    pub purpose: String,
    /// The gateway's reference of the card charged.
    pub card_ref: String,
}

const PENDING_SELECT: &str = "SELECT p.id, p.account_id, p.payment_method_id, p.usd, p.date, p.charge_key, \
     p.purpose, m.gateway_ref AS card_ref FROM payments p JOIN payment_methods m ON m.id = p.payment_method_id";

fn pending(r: &Row) -> Result<PendingPayment> {
    Ok(PendingPayment {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        method_id: r.i64("payment_method_id")?,
        cents: r.i64("usd")?,
        date: r.ts("date")?,
        charge_key: r.opt_str("charge_key")?.unwrap_or_default(),
        purpose: r.str("purpose")?,
        card_ref: r.str("card_ref")?,
    })
}

/// A charge to give back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    pub id: i64,
    pub account_id: i64,
    pub charge_ref: String,
    pub cents: i64,
    pub reason: String,
    pub created: Timestamp,
    pub attempts: i64,
    pub next_attempt: Timestamp,
    pub last_error: Option<String>,
    pub done: Option<Timestamp>,
}

const REFUND_COLS: &str =
    "id, account_id, charge_ref, cents, reason, created, attempts, next_attempt, last_error, done";

fn refund(r: &Row) -> Result<Refund> {
    Ok(Refund {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        charge_ref: r.str("charge_ref")?,
        cents: r.i64("cents")?,
        reason: r.str("reason")?,
        created: r.ts("created")?,
        attempts: r.i64("attempts")?,
        next_attempt: r.ts("next_attempt")?,
        last_error: r.opt_str("last_error")?,
        done: r.opt_ts("done")?,
    })
}

impl Tx<'_> {
    /// Records a payment before its charge; returns its id.
    pub async fn payment_pending_insert(
        &mut self,
        account_id: i64,
        method_id: i64,
        cents: i64,
        at: Timestamp,
        charge_key: &str,
        purpose: &str,
    ) -> Result<i64> {
        query(
            "INSERT INTO payments (account_id, payment_method_id, usd, date, gateway_ref, status, purpose, charge_key) \
             VALUES ($1, $2, $3, $4, '', 'pending', $5, $6) RETURNING id",
        )
        .bind(account_id)
        .bind(method_id)
        .bind(cents)
        .bind(at.to_string())
        .bind(purpose)
        .bind(charge_key)
        .fetch_i64(self.h())
        .await
    }

    /// The account's payments waiting for their charge.
    pub async fn payments_pending_of(&mut self, account_id: i64) -> Result<Vec<PendingPayment>> {
        let sql = format!("{PENDING_SELECT} WHERE p.account_id = $1 AND p.status = 'pending' ORDER BY p.id");
        let rows = query(sql).bind(account_id).fetch_all(self.h()).await?;
        rows.iter().map(pending).collect()
    }

    /// A payment still waiting for its charge.
    pub async fn payment_pending_get(&mut self, id: i64) -> Result<Option<PendingPayment>> {
        let sql = format!("{PENDING_SELECT} WHERE p.id = $1 AND p.status = 'pending'");
        let row = query(sql).bind(id).fetch_optional(self.h()).await?;
        row.as_ref().map(pending).transpose()
    }

    /// Confirms a pending payment with the charge's reference; `None` when it is no longer
    /// pending (settled meanwhile).
    pub async fn payment_confirm(&mut self, id: i64, gateway_ref: &str) -> Result<Option<Payment>> {
        let row = query(
            "UPDATE payments SET status = 'confirmed', gateway_ref = $2 WHERE id = $1 AND status = 'pending' \
             RETURNING id, usd, date",
        )
        .bind(id)
        .bind(gateway_ref)
        .fetch_optional(self.h())
        .await?;
        row.as_ref().map(payment).transpose()
    }

    /// Removes a pending payment whose charge did not happen (or was given back); false when it
    /// was no longer pending.
    pub async fn payment_pending_drop(&mut self, id: i64) -> Result<bool> {
        let n = query("DELETE FROM payments WHERE id = $1 AND status = 'pending'").bind(id).execute(self.h()).await?;
        Ok(n == 1)
    }

    /// Queues a charge to give back; the refund worker gives it back.
    pub async fn refund_enqueue(
        &mut self,
        account_id: i64,
        charge_ref: &str,
        cents: i64,
        reason: &str,
        now: Timestamp,
    ) -> Result<i64> {
        query(
            "INSERT INTO gateway_refunds (account_id, charge_ref, cents, reason, created, next_attempt) \
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
        )
        .bind(account_id)
        .bind(charge_ref)
        .bind(cents)
        .bind(reason)
        .bind(now.to_string())
        .fetch_i64(self.h())
        .await
    }

    /// A queued refund the gateway took.
    pub async fn refund_done(&mut self, id: i64, now: Timestamp) -> Result<()> {
        query("UPDATE gateway_refunds SET done = $2, attempts = attempts + 1, last_error = NULL WHERE id = $1")
            .bind(id)
            .bind(now.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// A queued refund the gateway did not take: tried again at `next`.
    pub async fn refund_retry_at(&mut self, id: i64, error: &str, next: Timestamp) -> Result<()> {
        query("UPDATE gateway_refunds SET attempts = attempts + 1, last_error = $2, next_attempt = $3 WHERE id = $1")
            .bind(id)
            .bind(error)
            .bind(next.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }
}

impl Store {
    /// One page of the account's payments (confirmed ones; a payment whose charge is under way
    /// is not one yet).
    pub async fn payments_page(
        &self,
        account_id: i64,
        filter: &Filter,
        p: u64,
        size: u64,
    ) -> Result<(Vec<Payment>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, n) = self.fetch_page(&PAYMENT_LIST, &v, filter, p, size).await?;
        Ok((rows.iter().map(payment).collect::<Result<_>>()?, n))
    }

    pub async fn payment_get(&self, account_id: i64, id: i64) -> Result<Option<Payment>> {
        let row =
            query("SELECT id, date, usd FROM payments WHERE id = $1 AND account_id = $2 AND status = 'confirmed'")
                .bind(id)
                .bind(account_id)
                .fetch_optional(self.r())
                .await?;
        row.as_ref().map(payment).transpose()
    }

    /// Payments still pending that were recorded before `before` (their request is over).
    pub async fn payments_pending_before(&self, before: Timestamp) -> Result<Vec<PendingPayment>> {
        let sql = format!("{PENDING_SELECT} WHERE p.status = 'pending' AND p.date < $1 ORDER BY p.id");
        let rows = query(sql).bind(before.to_string()).fetch_all(self.r()).await?;
        rows.iter().map(pending).collect()
    }

    /// Refunds not given back yet whose next attempt is due at `now`.
    pub async fn refunds_due(&self, now: Timestamp) -> Result<Vec<Refund>> {
        let sql =
            format!("SELECT {REFUND_COLS} FROM gateway_refunds WHERE done IS NULL AND next_attempt <= $1 ORDER BY id");
        let rows = query(sql).bind(now.to_string()).fetch_all(self.r()).await?;
        rows.iter().map(refund).collect()
    }

    /// Every queued refund, given back or not (operators' listing).
    pub async fn refunds_all(&self) -> Result<Vec<Refund>> {
        let sql = format!("SELECT {REFUND_COLS} FROM gateway_refunds ORDER BY id");
        let rows = query(sql).fetch_all(self.r()).await?;
        rows.iter().map(refund).collect()
    }
}
