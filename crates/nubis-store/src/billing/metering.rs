//! Metering and invoices: a meter per service from its creation to its deletion (or its move to
//! another account), and the invoices closed from them with their items.

use nubis_model::billing::{Cents, Invoice, InvoiceItem};
use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use crate::db::{Handle, Row, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

fn invoice(r: &Row) -> Result<Invoice> {
    Ok(Invoice {
        id: r.i64("id")?,
        billing_source: "linode".into(),
        date: r.ts("date")?,
        label: r.str("label")?,
        subtotal: Cents(r.i64("subtotal")?),
        tax: Cents(r.i64("tax")?),
        tax_summary: Vec::new(),
        total: Cents(r.i64("total")?),
    })
}

/// The account's invoices, newest first.
const INVOICE_LIST: Listing<'static> = Listing {
    select: "SELECT id, date, label, subtotal, tax, total FROM invoices",
    from: "FROM invoices",
    scope: "account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "id", kind: ColKind::Int },
        Column { path: "date", expr: "date", kind: ColKind::Text },
        Column { path: "label", expr: "label", kind: ColKind::Text },
        Column { path: "total", expr: "total", kind: ColKind::Cents },
    ],
    order: "id DESC",
    kept_count: Some("invoices"),
    indexed: &["date", "label", "total"],
};

fn item(r: &Row) -> Result<InvoiceItem> {
    Ok(InvoiceItem {
        amount: Cents(r.i64("amount")?),
        from: r.ts("from_ts")?,
        to: r.ts("to_ts")?,
        label: r.str("label")?,
        quantity: r.i64("quantity")?,
        region: r.opt_str("region")?,
        tax: Cents(r.i64("tax")?),
        total: Cents(r.i64("total")?),
        kind: r.str("type")?,
        unit_price: r.str("unit_price")?,
    })
}

/// An invoice's items, in the order they were written.
const ITEM_LIST: Listing<'static> = Listing {
    select: "SELECT label, from_ts, to_ts, quantity, unit_price, amount, tax, total, region, type FROM invoice_items",
    from: "FROM invoice_items",
    scope: "invoice_id",
    and: "",
    cols: &[
        Column { path: "label", expr: "label", kind: ColKind::Text },
        Column { path: "type", expr: "type", kind: ColKind::Text },
        Column { path: "region", expr: "region", kind: ColKind::Text },
    ],
    order: "id",
    kept_count: Some("invoice_items"),
    indexed: &["label", "type", "region"],
};

/// A service metered on an account from `started` until `ended`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterRow {
    pub id: i64,
    pub account_id: i64,
    pub service_type: String,
    pub service_id: i64,
    pub label: String,
    pub region: Option<String>,
    pub hourly_micro: i64,
    pub monthly_micro: i64,
    pub started: Timestamp,
    pub ended: Option<Timestamp>,
}

const METER_COLS: &str =
    "id, account_id, service_type, service_id, label, region, hourly_micro, monthly_micro, started, ended";

fn meter(r: &Row) -> Result<MeterRow> {
    Ok(MeterRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        service_type: r.str("service_type")?,
        service_id: r.i64("service_id")?,
        label: r.str("label")?,
        region: r.opt_str("region")?,
        hourly_micro: r.i64("hourly_micro")?,
        monthly_micro: r.i64("monthly_micro")?,
        started: r.ts("started")?,
        ended: r.opt_ts("ended")?,
    })
}

/// A service starting to be metered.
pub struct NewMeter<'a> {
    pub account_id: i64,
    pub service_type: &'a str,
    pub service_id: i64,
    pub label: &'a str,
    pub region: Option<&'a str>,
    pub hourly_micro: i64,
    pub monthly_micro: i64,
    pub started: Timestamp,
}

/// An invoice item to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewItem {
    pub label: String,
    pub from: Timestamp,
    pub to: Timestamp,
    pub quantity: i64,
    pub unit_price: String,
    pub amount: i64,
    pub tax: i64,
    pub region: Option<String>,
    pub kind: &'static str,
}

impl Tx<'_> {
    /// Starts metering a service.
    pub async fn meter_open(&mut self, m: &NewMeter<'_>) -> Result<()> {
        query(
            "INSERT INTO meters (account_id, service_type, service_id, label, region, hourly_micro, monthly_micro, \
             started) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(m.account_id)
        .bind(m.service_type)
        .bind(m.service_id)
        .bind(m.label)
        .bind(m.region)
        .bind(m.hourly_micro)
        .bind(m.monthly_micro)
        .bind(m.started.to_string())
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Stops metering a service at `at` (its deletion).
    pub async fn meter_close(&mut self, service_type: &str, service_id: i64, at: Timestamp) -> Result<()> {
        query("UPDATE meters SET ended = $3 WHERE service_type = $1 AND service_id = $2 AND ended IS NULL")
            .bind(service_type)
            .bind(service_id)
            .bind(at.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Stops metering every service of the account at `at` (cancellation).
    pub async fn meters_close_account(&mut self, account_id: i64, at: Timestamp) -> Result<()> {
        query("UPDATE meters SET ended = $2 WHERE account_id = $1 AND ended IS NULL")
            .bind(account_id)
            .bind(at.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Metering of an instance closes on its current account at `at` and continues, at the
    /// same prices, on `to_account` (a completed service transfer).
    pub async fn billing_move_instance(&mut self, instance_id: i64, to_account: i64, at: Timestamp) -> Result<()> {
        // The instance's own meter and its add-on's (backups) move together.
        for service_type in ["instance", "backup"] {
            let sql = format!(
                "SELECT {METER_COLS} FROM meters WHERE service_type = $1 AND service_id = $2 AND ended IS NULL"
            );
            let open = query(sql).bind(service_type).bind(instance_id).fetch_optional(self.h()).await?;
            let Some(m) = open.as_ref().map(meter).transpose()? else { continue };
            if m.account_id == to_account {
                continue;
            }
            self.meter_close(service_type, instance_id, at).await?;
            self.meter_open(&NewMeter {
                account_id: to_account,
                service_type,
                service_id: instance_id,
                label: &m.label,
                region: m.region.as_deref(),
                hourly_micro: m.hourly_micro,
                monthly_micro: m.monthly_micro,
                started: at,
            })
            .await?;
        }
        Ok(())
    }

    /// Meters of the account that ran at some time in `[from, to)`.
    pub async fn meters_between(&mut self, account_id: i64, from: Timestamp, to: Timestamp) -> Result<Vec<MeterRow>> {
        let sql = format!(
            "SELECT {METER_COLS} FROM meters WHERE account_id = $1 AND started < $3 AND (ended IS NULL OR ended > $2) \
             ORDER BY id"
        );
        let rows = query(sql).bind(account_id).bind(from.to_string()).bind(to.to_string()).fetch_all(self.h()).await?;
        rows.iter().map(meter).collect()
    }

    /// Writes an invoice with its items; a second invoice for the same period start is refused
    /// by a unique constraint.
    pub async fn invoice_insert(
        &mut self,
        account_id: i64,
        from: Timestamp,
        to: Timestamp,
        date: Timestamp,
        items: &[NewItem],
    ) -> Result<Invoice> {
        let subtotal: i64 = items.iter().map(|i| i.amount).sum();
        let tax: i64 = items.iter().map(|i| i.tax).sum();
        let row = query(
            "INSERT INTO invoices (account_id, date, label, period_from, period_to, subtotal, tax, total) \
             VALUES ($1, $2, 'Invoice', $3, $4, $5, $6, $7) RETURNING id, date, label, subtotal, tax, total",
        )
        .bind(account_id)
        .bind(date.to_string())
        .bind(from.to_string())
        .bind(to.to_string())
        .bind(subtotal)
        .bind(tax)
        .bind(subtotal + tax)
        .fetch_one(self.h())
        .await?;
        let inv = invoice(&row)?;
        for i in items {
            query(
                "INSERT INTO invoice_items (invoice_id, label, from_ts, to_ts, quantity, unit_price, amount, tax, \
                 total, region, type) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(inv.id)
            .bind(i.label.as_str())
            .bind(i.from.to_string())
            .bind(i.to.to_string())
            .bind(i.quantity)
            .bind(i.unit_price.as_str())
            .bind(i.amount)
            .bind(i.tax)
            .bind(i.amount + i.tax)
            .bind(i.region.clone())
            .bind(i.kind)
            .execute(self.h())
            .await?;
        }
        Ok(inv)
    }
}

impl Store {
    /// Meters of the account that ran at some time in `[from, to)`.
    pub async fn meters_between(&self, account_id: i64, from: Timestamp, to: Timestamp) -> Result<Vec<MeterRow>> {
        let sql = format!(
            "SELECT {METER_COLS} FROM meters WHERE account_id = $1 AND started < $3 AND (ended IS NULL OR ended > $2) \
             ORDER BY id"
        );
        let rows = query(sql).bind(account_id).bind(from.to_string()).bind(to.to_string()).fetch_all(self.r()).await?;
        rows.iter().map(meter).collect()
    }

    pub async fn invoices_page(
        &self,
        account_id: i64,
        filter: &Filter,
        p: u64,
        size: u64,
    ) -> Result<(Vec<Invoice>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, n) = self.fetch_page(&INVOICE_LIST, &v, filter, p, size).await?;
        Ok((rows.iter().map(invoice).collect::<Result<_>>()?, n))
    }

    pub async fn invoice_get(&self, account_id: i64, id: i64) -> Result<Option<Invoice>> {
        let row = query("SELECT id, date, label, subtotal, tax, total FROM invoices WHERE id = $1 AND account_id = $2")
            .bind(id)
            .bind(account_id)
            .fetch_optional(self.r())
            .await?;
        row.as_ref().map(invoice).transpose()
    }

    pub async fn invoice_items_page(
        &self,
        invoice_id: i64,
        filter: &Filter,
        p: u64,
        size: u64,
    ) -> Result<(Vec<InvoiceItem>, u64)> {
        let v = Visibility { scope_id: invoice_id, grant: None, and: None };
        let (rows, n) = self.fetch_page(&ITEM_LIST, &v, filter, p, size).await?;
        Ok((rows.iter().map(item).collect::<Result<_>>()?, n))
    }

    /// Sum of the totals of the account's invoices dated after `since`.
    pub async fn invoices_total_since(&self, account_id: i64, since: Timestamp) -> Result<i64> {
        invoices_total_since(self.r(), account_id, since).await
    }
}

pub(super) async fn invoices_total_since(h: Handle<'_>, account_id: i64, since: Timestamp) -> Result<i64> {
    // Closed above (`TIME_MAX`), so that the plan reads the range through (account_id, date).
    query("SELECT CAST(COALESCE(SUM(total), 0) AS BIGINT) FROM invoices WHERE account_id = $1 AND date > $2 AND date <= $3")
        .bind(account_id)
        .bind(since.to_string())
        .bind(crate::sql::TIME_MAX)
        .fetch_i64(h)
        .await
}
