//! Billing: the account's billing record (contact fields, balance, settings, cancellation),
//! payment methods and payments; meters and invoices in `metering`, promo codes in
//! `promos`, maintenance windows in `maintenance`. Amounts are integer cents, prices
//! millionths of a dollar.

use crate::db::Row;
use nubis_model::billing::{CardData, PaymentMethod};
use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

mod maintenance;
mod metering;
mod payments;
mod promos;

pub use maintenance::MaintenanceRow;
pub use metering::{MeterRow, NewItem, NewMeter};
pub use payments::{PendingPayment, Refund};
pub use promos::{PromoCode, PromotionRow};

/// What an account's standing is decided from (the rules are the application's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandingFacts {
    /// Active payment methods.
    pub payment_methods: i64,
    /// The balance, in cents.
    pub balance: i64,
    /// The totals of the invoices dated after the time asked for, in cents.
    pub invoiced_since: i64,
}

/// The billing record of an account (defaults when it has none yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillingRow {
    pub account_id: i64,
    pub address_1: String,
    pub address_2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
    pub phone: String,
    pub tax_id: String,
    /// Cents owed (negative: credit).
    pub balance: i64,
    pub billed_through: Timestamp,
    pub backups_enabled: bool,
    pub network_helper: bool,
    pub managed: bool,
    pub canceled: Option<Timestamp>,
}

const BILL_SELECT: &str = "SELECT a.id AS account_id, COALESCE(b.address_1, '') AS address_1, \
     COALESCE(b.address_2, '') AS address_2, COALESCE(b.city, '') AS city, COALESCE(b.state, '') AS state, \
     COALESCE(b.zip, '') AS zip, COALESCE(b.country, '') AS country, COALESCE(b.phone, '') AS phone, \
     COALESCE(b.tax_id, '') AS tax_id, COALESCE(b.balance, 0) AS balance, \
     COALESCE(b.billed_through, a.created) AS billed_through, \
     CASE WHEN b.backups_enabled THEN 1 ELSE 0 END AS backups_enabled, \
     CASE WHEN b.network_helper IS NULL OR b.network_helper THEN 1 ELSE 0 END AS network_helper, \
     CASE WHEN b.managed THEN 1 ELSE 0 END AS managed, b.canceled \
     FROM accounts a LEFT JOIN account_billing b ON b.account_id = a.id";

fn billing_row(r: &Row) -> Result<BillingRow> {
    Ok(BillingRow {
        account_id: r.i64("account_id")?,
        address_1: r.str("address_1")?,
        address_2: r.str("address_2")?,
        city: r.str("city")?,
        state: r.str("state")?,
        zip: r.str("zip")?,
        country: r.str("country")?,
        phone: r.str("phone")?,
        tax_id: r.str("tax_id")?,
        balance: r.i64("balance")?,
        billed_through: r.ts("billed_through")?,
        backups_enabled: r.bool("backups_enabled")?,
        network_helper: r.bool("network_helper")?,
        managed: r.bool("managed")?,
        canceled: r.opt_ts("canceled")?,
    })
}

/// Contact fields to change; `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct ContactChanges {
    pub company: Option<String>,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub address_1: Option<String>,
    pub address_2: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub zip: Option<String>,
    pub country: Option<String>,
    pub phone: Option<String>,
    pub tax_id: Option<String>,
}

/// A card accepted by the gateway, as it is kept: never its number or CVV.
pub struct NewCard<'a> {
    pub account_id: i64,
    pub card_type: &'a str,
    pub last_four: &'a str,
    pub expiry_month: i64,
    pub expiry_year: i64,
    pub gateway_ref: &'a str,
    pub is_default: bool,
    pub created: Timestamp,
}

/// A payment method with what the API does not show.
#[derive(Debug, Clone)]
pub struct MethodRow {
    pub view: PaymentMethod,
    pub account_id: i64,
    pub gateway_ref: String,
    pub active: bool,
}

const PM_COLS: &str = "id, account_id, type, card_type, last_four, expiry_month, expiry_year, gateway_ref, \
                       is_default, active, created";

fn method(r: &Row) -> Result<MethodRow> {
    Ok(MethodRow {
        view: PaymentMethod {
            id: r.i64("id")?,
            created: r.ts("created")?,
            data: CardData {
                card_type: r.str("card_type")?,
                expiry: format!("{:02}/{:04}", r.i64("expiry_month")?, r.i64("expiry_year")?),
                last_four: r.str("last_four")?,
            },
            is_default: r.bool("is_default")?,
            kind: r.str("type")?,
        },
        account_id: r.i64("account_id")?,
        gateway_ref: r.str("gateway_ref")?,
        active: r.bool("active")?,
    })
}

/// The account's active payment methods.
const PM_LIST: Listing<'static> = Listing {
    select: "SELECT id, account_id, type, card_type, last_four, expiry_month, expiry_year, gateway_ref, is_default, \
             active, created FROM payment_methods",
    from: "FROM payment_methods",
    scope: "account_id",
    and: " AND active = TRUE",
    cols: &[
        Column { path: "id", expr: "id", kind: ColKind::Int },
        Column { path: "is_default", expr: "is_default", kind: ColKind::Bool },
        Column { path: "type", expr: "type", kind: ColKind::Text },
        Column { path: "created", expr: "created", kind: ColKind::Text },
    ],
    order: "id",
    kept_count: Some("payment_methods"),
    indexed: &[],
};

async fn payment_method_default(h: Handle<'_>, account_id: i64) -> Result<Option<MethodRow>> {
    let sql =
        format!("SELECT {PM_COLS} FROM payment_methods WHERE account_id = $1 AND active = TRUE AND is_default = TRUE");
    let row = query(sql).bind(account_id).fetch_optional(h).await?;
    row.as_ref().map(method).transpose()
}

impl Tx<'_> {
    /// The account's billing record, created on first use, with its row locked (a no-op update)
    /// so that concurrent billing writes of one account serialize on it.
    pub async fn billing_lock(&mut self, account_id: i64) -> Result<BillingRow> {
        query(
            "INSERT INTO account_billing (account_id, billed_through) SELECT id, created FROM accounts WHERE id = $1 \
             ON CONFLICT (account_id) DO NOTHING",
        )
        .bind(account_id)
        .execute(self.h())
        .await?;
        query("UPDATE account_billing SET balance = balance WHERE account_id = $1")
            .bind(account_id)
            .execute(self.h())
            .await?;
        let sql = format!("{BILL_SELECT} WHERE a.id = $1");
        billing_row(&query(sql).bind(account_id).fetch_one(self.h()).await?)
    }

    /// See [`StandingFacts`]: the invoices counted are those dated after `since`.
    pub async fn standing_facts(&mut self, account_id: i64, since: Timestamp) -> Result<StandingFacts> {
        let payment_methods = query("SELECT COUNT(*) FROM payment_methods WHERE account_id = $1 AND active = TRUE")
            .bind(account_id)
            .fetch_i64(self.h())
            .await?;
        let sql = format!("{BILL_SELECT} WHERE a.id = $1");
        let balance = billing_row(&query(sql).bind(account_id).fetch_one(self.h()).await?)?.balance;
        let invoiced_since = metering::invoices_total_since(self.h(), account_id, since).await?;
        Ok(StandingFacts { payment_methods, balance, invoiced_since })
    }

    /// Changes the account's contact fields (company, e-mail and names live on the account).
    pub async fn billing_update_contact(&mut self, account_id: i64, c: &ContactChanges) -> Result<()> {
        self.billing_lock(account_id).await?;
        query(
            "UPDATE accounts SET company = COALESCE($2, company), email = COALESCE($3, email), \
             first_name = COALESCE($4, first_name), last_name = COALESCE($5, last_name) WHERE id = $1",
        )
        .bind(account_id)
        .bind(c.company.clone())
        .bind(c.email.clone())
        .bind(c.first_name.clone())
        .bind(c.last_name.clone())
        .execute(self.h())
        .await?;
        query(
            "UPDATE account_billing SET address_1 = COALESCE($2, address_1), address_2 = COALESCE($3, address_2), \
             city = COALESCE($4, city), state = COALESCE($5, state), zip = COALESCE($6, zip), \
             country = COALESCE($7, country), phone = COALESCE($8, phone), tax_id = COALESCE($9, tax_id) \
             WHERE account_id = $1",
        )
        .bind(account_id)
        .bind(c.address_1.clone())
        .bind(c.address_2.clone())
        .bind(c.city.clone())
        .bind(c.state.clone())
        .bind(c.zip.clone())
        .bind(c.country.clone())
        .bind(c.phone.clone())
        .bind(c.tax_id.clone())
        .execute(self.h())
        .await?;
        Ok(())
    }

    pub async fn billing_set_settings(
        &mut self,
        account_id: i64,
        backups_enabled: Option<bool>,
        network_helper: Option<bool>,
        managed: Option<bool>,
    ) -> Result<()> {
        self.billing_lock(account_id).await?;
        query(
            "UPDATE account_billing SET backups_enabled = COALESCE($2, backups_enabled), \
             network_helper = COALESCE($3, network_helper), managed = COALESCE($4, managed) WHERE account_id = $1",
        )
        .bind(account_id)
        .bind(backups_enabled)
        .bind(network_helper)
        .bind(managed)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Adds `cents` to the balance (an invoice) or takes them off (negative: a payment).
    pub async fn billing_balance_add(&mut self, account_id: i64, cents: i64) -> Result<()> {
        query("UPDATE account_billing SET balance = balance + $2 WHERE account_id = $1")
            .bind(account_id)
            .bind(cents)
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn billing_set_billed_through(&mut self, account_id: i64, at: Timestamp) -> Result<()> {
        query("UPDATE account_billing SET billed_through = $2 WHERE account_id = $1")
            .bind(account_id)
            .bind(at.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Marks the account canceled and removes every token of its users.
    pub async fn billing_cancel(&mut self, account_id: i64, at: Timestamp, comments: &str) -> Result<()> {
        query("UPDATE account_billing SET canceled = $2, cancel_comments = $3 WHERE account_id = $1")
            .bind(account_id)
            .bind(at.to_string())
            .bind(comments)
            .execute(self.h())
            .await?;
        query("DELETE FROM tokens WHERE user_id IN (SELECT id FROM users WHERE account_id = $1)")
            .bind(account_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Active payment methods of the account and those added since `since`.
    pub async fn payment_methods_counts(&mut self, account_id: i64, since: Timestamp) -> Result<(i64, i64)> {
        let active = query("SELECT COUNT(*) FROM payment_methods WHERE account_id = $1 AND active = TRUE")
            .bind(account_id)
            .fetch_i64(self.h())
            .await?;
        let added =
            query("SELECT COUNT(*) FROM payment_methods WHERE account_id = $1 AND created > $2 AND created <= $3")
                .bind(account_id)
                .bind(since.to_string())
                .bind(crate::sql::TIME_MAX)
                .fetch_i64(self.h())
                .await?;
        Ok((active, added))
    }

    /// Whether the account has a default payment method.
    pub async fn payment_method_has_default(&mut self, account_id: i64) -> Result<bool> {
        let n =
            query("SELECT COUNT(*) FROM payment_methods WHERE account_id = $1 AND active = TRUE AND is_default = TRUE")
                .bind(account_id)
                .fetch_i64(self.h())
                .await?;
        Ok(n > 0)
    }

    /// Takes default status from every method of the account.
    pub async fn payment_methods_clear_default(&mut self, account_id: i64) -> Result<()> {
        query("UPDATE payment_methods SET is_default = FALSE WHERE account_id = $1 AND is_default = TRUE")
            .bind(account_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    pub async fn payment_method_insert(&mut self, c: &NewCard<'_>) -> Result<MethodRow> {
        let sql = format!(
            "INSERT INTO payment_methods (account_id, type, card_type, last_four, expiry_month, expiry_year, \
             gateway_ref, is_default, active, created) VALUES ($1, 'credit_card', $2, $3, $4, $5, $6, $7, TRUE, $8) \
             RETURNING {PM_COLS}"
        );
        let row = query(sql)
            .bind(c.account_id)
            .bind(c.card_type)
            .bind(c.last_four)
            .bind(c.expiry_month)
            .bind(c.expiry_year)
            .bind(c.gateway_ref)
            .bind(c.is_default)
            .bind(c.created.to_string())
            .fetch_one(self.h())
            .await?;
        method(&row)
    }

    /// An active method of the account, read in the transaction.
    pub async fn payment_method_active(&mut self, account_id: i64, id: i64) -> Result<Option<MethodRow>> {
        let sql = format!("SELECT {PM_COLS} FROM payment_methods WHERE id = $1 AND account_id = $2 AND active = TRUE");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(method).transpose()
    }

    /// The account's default payment method, read inside the transaction.
    pub async fn payment_method_default(&mut self, account_id: i64) -> Result<Option<MethodRow>> {
        payment_method_default(self.h(), account_id).await
    }

    /// How many child accounts of `parent_id` are not canceled.
    pub async fn child_accounts_active(&mut self, parent_id: i64) -> Result<i64> {
        query(
            "SELECT COUNT(*) FROM accounts a LEFT JOIN account_billing b ON b.account_id = a.id \
             WHERE a.parent_id = $1 AND b.canceled IS NULL",
        )
        .bind(parent_id)
        .fetch_i64(self.h())
        .await
    }

    pub async fn payment_method_set_default(&mut self, id: i64) -> Result<()> {
        query("UPDATE payment_methods SET is_default = TRUE WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    pub async fn payment_method_deactivate(&mut self, id: i64, at: Timestamp) -> Result<()> {
        query("UPDATE payment_methods SET active = FALSE, is_default = FALSE, removed = $2 WHERE id = $1")
            .bind(id)
            .bind(at.to_string())
            .execute(self.h())
            .await?;
        Ok(())
    }
}

impl Store {
    /// The account's billing record (defaults when it has none yet).
    pub async fn billing_get(&self, account_id: i64) -> Result<Option<BillingRow>> {
        let sql = format!("{BILL_SELECT} WHERE a.id = $1");
        let row = query(sql).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(billing_row).transpose()
    }

    /// Accounts (not canceled) with usage before `before` not invoiced yet.
    pub async fn billing_accounts_due(&self, before: Timestamp) -> Result<Vec<i64>> {
        let sql = format!(
            "{BILL_SELECT} WHERE COALESCE(b.billed_through, a.created) < $1 AND b.canceled IS NULL ORDER BY a.id"
        );
        let rows = query(sql).bind(before.to_string()).fetch_all(self.r()).await?;
        rows.iter().map(|r| r.i64("account_id")).collect()
    }

    pub async fn payment_methods_page(
        &self,
        account_id: i64,
        filter: &Filter,
        p: u64,
        size: u64,
    ) -> Result<(Vec<PaymentMethod>, u64)> {
        let v = Visibility { scope_id: account_id, grant: None, and: None };
        let (rows, n) = self.fetch_page(&PM_LIST, &v, filter, p, size).await?;
        Ok((rows.iter().map(|r| method(r).map(|m| m.view)).collect::<Result<_>>()?, n))
    }

    /// An active payment method of the account.
    pub async fn payment_method_get(&self, account_id: i64, id: i64) -> Result<Option<MethodRow>> {
        let sql = format!("SELECT {PM_COLS} FROM payment_methods WHERE id = $1 AND account_id = $2 AND active = TRUE");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(method).transpose()
    }

    /// The account's default payment method.
    pub async fn payment_method_default(&self, account_id: i64) -> Result<Option<MethodRow>> {
        payment_method_default(self.r(), account_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::NewAccount;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn moving_an_instance_closes_its_meter_and_opens_one_on_the_new_account() {
        let store = Store::open("sqlite::memory:", &Default::default()).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        let now = Timestamp::now();
        let mut ids = Vec::new();
        for e in ["E1", "E2"] {
            let a = tx
                .account_insert(&NewAccount { euuid: e, parent_id: None, company: "c", email: "a@b.c", created: now })
                .await
                .unwrap();
            ids.push(a.id);
        }
        let (from, to) = (ids[0], ids[1]);
        tx.meter_open(&NewMeter {
            account_id: from,
            service_type: "instance",
            service_id: 7,
            label: "Nanode 1GB - web (7)",
            region: Some("us-east"),
            hourly_micro: 7_000,
            monthly_micro: 5_000_000,
            started: ts("2026-11-01T00:00:00"),
        })
        .await
        .unwrap();
        let at = ts("2026-11-10T12:00:00");
        tx.billing_move_instance(7, to, at).await.unwrap();
        // Moving again to the same account changes nothing.
        tx.billing_move_instance(7, to, ts("2026-11-11T00:00:00")).await.unwrap();
        let far = ts("2027-01-01T00:00:00");
        let old = tx.meters_between(from, ts("2026-01-01T00:00:00"), far).await.unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(old[0].ended, Some(at));
        let new = tx.meters_between(to, ts("2026-01-01T00:00:00"), far).await.unwrap();
        assert_eq!(new.len(), 1);
        assert_eq!((new[0].started, new[0].ended, new[0].hourly_micro), (at, None, 7_000));
        tx.commit().await.unwrap();
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn standing_facts_count_active_methods_the_balance_and_recent_invoices() {
        let store = Store::open("sqlite::memory:", &Default::default()).await.unwrap();
        let mut tx = store.begin().await.unwrap();
        let now = Timestamp::now();
        let a = tx
            .account_insert(&NewAccount { euuid: "E1", parent_id: None, company: "c", email: "a@b.c", created: now })
            .await
            .unwrap()
            .id;
        let since = now.minus_days(30);
        assert_eq!(
            tx.standing_facts(a, since).await.unwrap(),
            StandingFacts { payment_methods: 0, balance: 0, invoiced_since: 0 }
        );
        tx.billing_lock(a).await.unwrap();
        tx.payment_method_insert(&NewCard {
            account_id: a,
            card_type: "Visa",
            last_four: "1111",
            expiry_month: 12,
            expiry_year: 2099,
            gateway_ref: "ref",
            is_default: true,
            created: now,
        })
        .await
        .unwrap();
        // Only invoices dated after `since` count.
        tx.invoice_insert(a, now, now, now, &[item(500)]).await.unwrap();
        tx.billing_balance_add(a, 500).await.unwrap();
        let old = now.minus_days(31);
        tx.invoice_insert(a, old, old, old, &[item(300)]).await.unwrap();
        tx.billing_balance_add(a, 300).await.unwrap();
        assert_eq!(
            tx.standing_facts(a, since).await.unwrap(),
            StandingFacts { payment_methods: 1, balance: 800, invoiced_since: 500 }
        );
        tx.commit().await.unwrap();
        store.close().await;
    }

    fn item(cents: i64) -> NewItem {
        let t = Timestamp::now();
        NewItem {
            label: "x".into(),
            from: t,
            to: t,
            quantity: 1,
            unit_price: "0.01".into(),
            amount: cents,
            tax: 0,
            region: None,
            kind: "hourly",
        }
    }
}
