//! An account's standing (spec 4.3): whether it has a way to pay and whether its balance is past
//! due. The one place these rules are decided; the store only reads the facts.

use nubis_model::{Result, Timestamp};
use nubis_store::Tx;
use nubis_store::billing::StandingFacts;

/// Days after an invoice's date by which it must be paid; a balance older than that is past due.
pub const PAST_DUE_DAYS: i64 = 30;

/// What other areas need to know of an account's standing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountStanding {
    /// The account has an active payment method.
    pub has_payment_method: bool,
    /// Part of the balance comes from invoices dated more than [`PAST_DUE_DAYS`] ago.
    pub past_due: bool,
}

/// The part of `balance` older than [`PAST_DUE_DAYS`], given the totals invoiced since then:
/// payments pay the oldest invoices first, so the balance beyond the recent invoices is old.
pub fn past_due_cents(balance: i64, invoiced_recently: i64) -> i64 {
    (balance - invoiced_recently.max(0)).max(0)
}

/// When a balance starts being past due: the invoices dated after this are recent.
pub fn recent_since(now: Timestamp) -> Timestamp {
    now.minus_days(PAST_DUE_DAYS)
}

impl AccountStanding {
    pub fn of(f: &StandingFacts) -> AccountStanding {
        AccountStanding {
            has_payment_method: f.payment_methods > 0,
            past_due: past_due_cents(f.balance, f.invoiced_since) > 0,
        }
    }
}

/// The account's standing, read inside the transaction.
pub(crate) async fn account_standing(tx: &mut Tx<'_>, account_id: i64) -> Result<AccountStanding> {
    let facts = tx.standing_facts(account_id, recent_since(Timestamp::now())).await?;
    Ok(AccountStanding::of(&facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_balance_beyond_the_recent_invoices_is_past_due() {
        let s = |payment_methods, balance, invoiced_since| {
            AccountStanding::of(&StandingFacts { payment_methods, balance, invoiced_since })
        };
        assert_eq!(s(0, 0, 0), AccountStanding { has_payment_method: false, past_due: false });
        // A balance made only of recent invoices is not past due.
        assert_eq!(s(1, 500, 500), AccountStanding { has_payment_method: true, past_due: false });
        // 300 of 800 come from older invoices.
        assert!(s(1, 800, 500).past_due);
        assert_eq!(past_due_cents(800, 500), 300);
        // Credit (a negative balance) is never past due; neither is a balance under recent totals.
        assert!(!s(1, -100, 0).past_due);
        assert!(!s(1, 200, 500).past_due);
        assert_eq!(past_due_cents(100, -50), 100);
    }
}
