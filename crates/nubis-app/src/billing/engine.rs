//! The billing engine: every instance and load balancer is metered from its creation to its
//! deletion (meters are written by the create and delete transactions); an invoice covers a
//! period `[from, to)` of one account with one item per service and period. A service is charged
//! per started hour at its hourly price, capped at its monthly price within one invoice, in
//! millionths of a dollar, and each item is rounded once to whole cents; the invoice's total is
//! the sum of its items' cents, so every figure adds up exactly.
//!
//! Invoices close at the end of each month (UTC) through [`App::billing_close_due`], which
//! `nubis serve` runs periodically and which is idempotent; an operator can also close the usage
//! up to now (`nubis admin billing close`).

use chrono::{Datelike, NaiveDate};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::billing::{MeterRow, NewItem, PromotionRow};

use crate::App;
use nubis_model::money::Micros;

/// The first moment of `t`'s month.
pub fn month_start(t: Timestamp) -> Timestamp {
    let d = NaiveDate::from_ymd_opt(t.0.year(), t.0.month(), 1).unwrap_or(t.0.date());
    Timestamp(d.and_hms_opt(0, 0, 0).unwrap_or(t.0))
}

/// The first moment of the month after `t`'s.
pub fn next_month(t: Timestamp) -> Timestamp {
    let (y, m) = if t.0.month() == 12 { (t.0.year() + 1, 1) } else { (t.0.year(), t.0.month() + 1) };
    let d = NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(t.0.date());
    Timestamp(d.and_hms_opt(0, 0, 0).unwrap_or(t.0))
}

/// Millionths of a dollar to whole cents, half up.
fn cents_of_micro(m: i64) -> i64 {
    Micros::from_units(m).to::<2>().0
}

/// One item per meter that ran in `[from, to)`.
pub fn usage_items(meters: &[MeterRow], from: Timestamp, to: Timestamp) -> Vec<NewItem> {
    let mut out = Vec::new();
    for m in meters {
        let start = m.started.max(from);
        let end = m.ended.unwrap_or(to).min(to);
        if end <= start {
            continue;
        }
        // The service's hours start at its creation; each started hour is charged once, in the
        // period where it starts, however the usage is split into invoices.
        let since = |t: Timestamp| (t.unix() - m.started.unix() + 3599).div_euclid(3600);
        let hours = since(end) - since(start);
        if hours <= 0 {
            continue;
        }
        let micro = hours.saturating_mul(m.hourly_micro).min(m.monthly_micro.max(0));
        out.push(NewItem {
            label: m.label.clone(),
            from: start,
            to: end,
            quantity: hours,
            unit_price: Micros::from_units(m.hourly_micro).dollars(),
            amount: cents_of_micro(micro),
            tax: 0,
            region: m.region.clone(),
            kind: "hourly",
        });
    }
    out
}

/// The promotional credit an invoice over `[from, ...)` takes from `p`: what the usage costs, at
/// most the monthly cap and what remains, while the promotion has not expired.
pub fn promo_credit(p: Option<&PromotionRow>, usage_cents: i64, from: Timestamp) -> i64 {
    match p {
        Some(p) if p.expires > from && p.remaining > 0 && usage_cents > 0 => {
            usage_cents.min(p.monthly_cap).min(p.remaining)
        }
        _ => 0,
    }
}

fn promo_item(p: &PromotionRow, credit: i64, from: Timestamp, to: Timestamp) -> NewItem {
    NewItem {
        label: format!("Promotional credit ({})", p.code),
        from,
        to,
        quantity: 1,
        unit_price: nubis_model::billing::Cents(-credit).dollars(),
        amount: -credit,
        tax: 0,
        region: None,
        kind: "misc",
    }
}

/// What closing `[from, to)` month by month would add to the balance: each month's usage less the
/// promotional credit it takes, exactly as [`close_period`] closes them.
pub(crate) fn amount_of_periods(
    meters: &[MeterRow],
    mut promo: Option<PromotionRow>,
    from: Timestamp,
    to: Timestamp,
) -> i64 {
    let mut total = 0;
    let mut start = from;
    while start < to {
        let end = next_month(start).min(to);
        let usage: i64 = usage_items(meters, start, end).iter().map(|i| i.amount).sum();
        let credit = promo_credit(promo.as_ref(), usage, start);
        if let Some(p) = promo.as_mut() {
            p.remaining -= credit;
        }
        total += usage - credit;
        start = end;
    }
    total
}

/// What the account owes up to `now`: its balance and its usage not invoiced yet, read inside
/// the transaction.
pub(crate) async fn amount_due(tx: &mut Tx<'_>, account_id: i64, now: Timestamp) -> Result<i64> {
    let b = tx.billing_lock(account_id).await?;
    if now <= b.billed_through {
        return Ok(b.balance);
    }
    let meters = tx.meters_between(account_id, b.billed_through, now).await?;
    let promo = tx.promotion_of(account_id).await?;
    Ok(b.balance + amount_of_periods(&meters, promo, b.billed_through, now))
}

/// Closes the usage of `[billed_through, now)` month by month (inside the caller's transaction).
pub(crate) async fn close_until(tx: &mut Tx<'_>, account_id: i64, now: Timestamp) -> Result<()> {
    let mut from = tx.billing_lock(account_id).await?.billed_through;
    while from < now {
        let to = next_month(from).min(now);
        close_period(tx, account_id, from, to).await?;
        from = to;
    }
    Ok(())
}

/// Closes the account's usage of `[from, to)` into an invoice dated `to` (none when there was
/// no usage), adds it to the balance, uses promotional credit, and moves the account's
/// `billed_through` to `to`. Does nothing (returns `None`) when `from` is no longer the start of
/// what is not invoiced (another process closed it). Runs inside the caller's transaction.
pub(crate) async fn close_period(
    tx: &mut Tx<'_>,
    account_id: i64,
    from: Timestamp,
    to: Timestamp,
) -> Result<Option<Option<i64>>> {
    let b = tx.billing_lock(account_id).await?;
    if b.billed_through != from || to <= from {
        return Ok(None);
    }
    let meters = tx.meters_between(account_id, from, to).await?;
    let mut items = usage_items(&meters, from, to);
    let usage: i64 = items.iter().map(|i| i.amount).sum();
    let promo = tx.promotion_of(account_id).await?;
    let credit = promo_credit(promo.as_ref(), usage, from);
    if let (Some(p), true) = (&promo, credit > 0) {
        items.push(promo_item(p, credit, from, to));
        tx.promotion_use(account_id, credit).await?;
    }
    let mut id = None;
    if !items.is_empty() {
        let inv = tx
            .invoice_insert(account_id, from, to, to, &items)
            .await
            .map_err(|e| if matches!(e, Error::Unique(_)) { Error::Retry } else { e })?;
        tx.billing_balance_add(account_id, inv.total.0).await?;
        id = Some(inv.id);
    }
    tx.billing_set_billed_through(account_id, to).await?;
    Ok(Some(id))
}

impl App {
    /// Closes every invoice due at `now`: for each account, each whole month before `now`'s
    /// month that is not invoiced yet. Idempotent (a closed period is never closed again, also
    /// when several processes run this at once). Returns the number of invoices written.
    pub async fn billing_close_due(&self, now: Timestamp) -> Result<u64> {
        let due = month_start(now);
        let mut written = 0;
        for account_id in self.store.billing_accounts_due(due).await? {
            written += self.billing_close_account(account_id, due, false).await?;
        }
        Ok(written)
    }

    /// The operator's command: closes what is due, then the usage of the current month up to
    /// `now`, for one account or for every account. Returns the number of invoices written.
    pub async fn billing_close_now(&self, account_id: Option<i64>, now: Timestamp) -> Result<u64> {
        let mut written = self.billing_close_due(now).await?;
        let accounts = match account_id {
            Some(a) => vec![a],
            None => self.store.billing_accounts_due(now).await?,
        };
        for a in accounts {
            written += self.billing_close_account(a, now, true).await?;
        }
        Ok(written)
    }

    /// Closes the account's periods month by month until `until`.
    async fn billing_close_account(&self, account_id: i64, until: Timestamp, partial: bool) -> Result<u64> {
        let mut written = 0;
        loop {
            let step = self
                .write(|tx| {
                    Box::pin(async move {
                        let b = tx.billing_lock(account_id).await?;
                        if b.billed_through >= until || (b.canceled.is_some() && !partial) {
                            return Ok(None);
                        }
                        let to = next_month(b.billed_through).min(until);
                        let r = close_period(tx, account_id, b.billed_through, to).await?;
                        Ok(Some(r.flatten().is_some()))
                    })
                })
                .await?;
            match step {
                None => return Ok(written),
                Some(true) => written += 1,
                Some(false) => {}
            }
        }
    }

    /// What the account's usage since its last invoice comes to (an estimate of the next
    /// invoice, with promotional credit).
    pub async fn billing_uninvoiced(&self, account_id: i64, billed_through: Timestamp) -> Result<i64> {
        self.billing_uninvoiced_at(account_id, billed_through, Timestamp::now()).await
    }

    /// The same, up to `now`.
    pub(crate) async fn billing_uninvoiced_at(
        &self,
        account_id: i64,
        billed_through: Timestamp,
        now: Timestamp,
    ) -> Result<i64> {
        if now <= billed_through {
            return Ok(0);
        }
        let meters = self.store.meters_between(account_id, billed_through, now).await?;
        let promo = self.store.promotion_get(account_id).await?;
        Ok(amount_of_periods(&meters, promo, billed_through, now))
    }

    /// Runs [`App::billing_close_due`] every `every` until aborted (`nubis serve`).
    pub fn spawn_billing_closer(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                match app.billing_close_due(Timestamp::now()).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(invoices = n, "closed due invoices"),
                    Err(e) => tracing::warn!(error = %e, "closing due invoices failed"),
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

    fn meter(started: &str, ended: Option<&str>, hourly: i64, monthly: i64) -> MeterRow {
        MeterRow {
            id: 1,
            account_id: 1,
            service_type: "instance".into(),
            service_id: 1,
            label: "Nanode 1GB - web (1)".into(),
            region: Some("us-east".into()),
            hourly_micro: hourly,
            monthly_micro: monthly,
            started: ts(started),
            ended: ended.map(ts),
        }
    }

    #[test]
    fn months() {
        assert_eq!(month_start(ts("2026-11-23T12:46:17")), ts("2026-11-01T00:00:00"));
        assert_eq!(next_month(ts("2026-12-05T00:00:00")), ts("2027-01-01T00:00:00"));
        assert_eq!(next_month(ts("2026-01-31T23:59:59")), ts("2026-02-01T00:00:00"));
    }

    #[test]
    fn started_hours_are_charged_and_capped_monthly() {
        let (from, to) = (ts("2026-11-01T00:00:00"), ts("2026-12-01T00:00:00"));
        // 90 minutes: two started hours at 0.7 cent.
        let items =
            usage_items(&[meter("2026-11-10T10:00:00", Some("2026-11-10T11:30:00"), 7_000, 5_000_000)], from, to);
        assert_eq!((items[0].quantity, items[0].amount, items[0].unit_price.as_str()), (2, 1, "0.007"));
        // A whole month: 720 hours at 0.007 = 5.04, capped at 5.00.
        let items = usage_items(&[meter("2026-10-01T00:00:00", None, 7_000, 5_000_000)], from, to);
        assert_eq!((items[0].quantity, items[0].amount), (720, 500));
        assert_eq!((items[0].from, items[0].to), (from, to));
        // Deleted before the period: nothing.
        assert!(
            usage_items(&[meter("2026-10-01T00:00:00", Some("2026-10-02T00:00:00"), 7_000, 5_000_000)], from, to)
                .is_empty()
        );
    }

    #[test]
    fn a_started_hour_is_charged_once_however_the_usage_is_split() {
        let m = meter("2026-11-10T10:20:00", Some("2026-11-10T13:00:00"), 7_000, 5_000_000);
        let q = |from: &str, to: &str| {
            usage_items(std::slice::from_ref(&m), ts(from), ts(to)).first().map_or(0, |i| i.quantity)
        };
        assert_eq!(q("2026-11-01T00:00:00", "2026-12-01T00:00:00"), 3);
        // Split at 10:30 and 12:40: hours starting 10:20 | 11:20, 12:20 | none.
        assert_eq!(q("2026-11-01T00:00:00", "2026-11-10T10:30:00"), 1);
        assert_eq!(q("2026-11-10T10:30:00", "2026-11-10T12:40:00"), 2);
        assert_eq!(q("2026-11-10T12:40:00", "2026-12-01T00:00:00"), 0);
    }

    #[test]
    fn promo_credit_is_capped() {
        let p = PromotionRow {
            code: "X".into(),
            credit: 5_000,
            remaining: 300,
            monthly_cap: 1_000,
            expires: ts("2027-01-01T00:00:00"),
            description: String::new(),
            added: ts("2026-11-01T00:00:00"),
        };
        let from = ts("2026-11-01T00:00:00");
        assert_eq!(promo_credit(Some(&p), 250, from), 250);
        assert_eq!(promo_credit(Some(&p), 2_000, from), 300);
        assert_eq!(promo_credit(Some(&p), 2_000, ts("2027-02-01T00:00:00")), 0);
        assert_eq!(promo_credit(None, 2_000, from), 0);
    }
}
