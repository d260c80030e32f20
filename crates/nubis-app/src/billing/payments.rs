//! Payments (spec 2.5, 4.3), the disabled PayPal operations, and invoices.

use nubis_model::billing::{Cents, Invoice, InvoiceItem, Payment, parse_usd};
use nubis_model::event::EventEntity;
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use serde::Deserialize;
use utoipa::ToSchema;

use super::gateway::GatewayError;
use super::methods::gateway_error;
use super::settle::PURPOSE_CANCEL;
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// `POST /v4/account/payments`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PaymentCreate {
    pub payment_method_id: Option<i64>,
    #[schema(required = true, value_type = String)]
    pub usd: Option<String>,
}

/// `POST /v4/account/payments/paypal`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PaypalStage {
    #[schema(required = true, value_type = String)]
    pub cancel_url: Option<String>,
    #[schema(required = true, value_type = String)]
    pub redirect_url: Option<String>,
    #[schema(required = true, value_type = String)]
    pub usd: Option<String>,
}

/// `POST /v4/account/payments/paypal/execute`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PaypalExecute {
    #[schema(required = true, value_type = String)]
    pub payer_id: Option<String>,
    #[schema(required = true, value_type = String)]
    pub payment_id: Option<String>,
}

const PAYPAL_DISABLED: &str = "PayPal payments are disabled; pay with a payment method (POST /v4/account/payments)";

/// The smallest and largest payment the balance allows (spec 2.5, in cents): at least 5.00, or
/// the balance when it is lower; at most 2000.00, or the balance (up to 50000.00) when higher.
pub fn payment_bounds(balance: i64) -> (i64, i64) {
    let min = if balance > 0 && balance < 500 { balance } else { 500 };
    let max = if balance > 200_000 { balance.min(5_000_000) } else { 200_000 };
    (min, max)
}

fn check_bounds(cents: i64, balance: i64) -> Result<()> {
    let (min, max) = payment_bounds(balance);
    if cents < min {
        return Err(Error::invalid("usd", format!("Must be at least {}", Cents(min).dollars())));
    }
    if cents > max {
        return Err(Error::invalid("usd", format!("Must be at most {}", Cents(max).dollars())));
    }
    Ok(())
}

fn required(p: &mut Problems, field: &str, v: &Option<String>) {
    if v.as_deref().is_none_or(str::is_empty) {
        p.add(field, format!("{field} is required"));
    }
}

impl App {
    pub async fn payment_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Payment>> {
        self.authorize(actor, Op::PaymentList).await?;
        let (data, n) = self.store.payments_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }

    pub async fn payment_get(&self, actor: &Actor, id: i64) -> Result<Payment> {
        self.authorize(actor, Op::PaymentGet).await?;
        self.store.payment_get(actor.account_id(), id).await?.ok_or(Error::NotFound)
    }

    /// Takes a payment: recorded as pending (checked against the balance, less the payments
    /// already under way, and the payment method inside that write, so concurrent payments see
    /// each other), then charged through the gateway with no transaction open, then confirmed
    /// with the balance lowered, or dropped when the charge was declined (see `settle.rs`).
    pub async fn payment_create(&self, actor: &Actor, input: PaymentCreate) -> Result<Payment> {
        self.authorize(actor, Op::PaymentCreate).await?;
        let cents = match input.usd.as_deref() {
            None => return Err(Error::invalid("usd", "usd is required")),
            Some(s) => parse_usd(s).ok_or_else(|| {
                Error::invalid("usd", "Must be an amount in dollars such as 5.00 or $120.50 (no commas, with cents)")
            })?,
        };
        let account_id = actor.account_id();
        let key = uuid::Uuid::new_v4().simple().to_string();
        let (input, key_ref) = (&input, &key);
        let pending = self
            .write(|tx| {
                Box::pin(async move {
                    let method = match input.payment_method_id {
                        Some(id) => tx
                            .payment_method_active(account_id, id)
                            .await?
                            .ok_or_else(|| Error::invalid("payment_method_id", "No such active payment method"))?,
                        None => tx.payment_method_default(account_id).await?.ok_or_else(|| {
                            Error::invalid(
                                "payment_method_id",
                                "The account has no default payment method; add one first",
                            )
                        })?,
                    };
                    let b = tx.billing_lock(account_id).await?;
                    let pending = tx.payments_pending_of(account_id).await?;
                    if pending.iter().any(|p| p.purpose == PURPOSE_CANCEL) {
                        return Err(Error::refused("The account is being canceled"));
                    }
                    // Payments under way count as paid for the bounds (they may all go through).
                    check_bounds(cents, b.balance - pending.iter().map(|p| p.cents).sum::<i64>())?;
                    let id = tx
                        .payment_pending_insert(account_id, method.view.id, cents, Timestamp::now(), key_ref, "payment")
                        .await?;
                    Ok((id, method.gateway_ref))
                })
            })
            .await?;
        let (id, card_ref) = pending;
        match self.charge(account_id, &card_ref, cents, &key).await {
            // Declined: nothing was charged. Unreachable: whether the charge happened is not
            // known; the payment stays pending until the settler asks the gateway again.
            Err(e) => {
                if matches!(e, GatewayError::Declined(_)) {
                    self.payment_give_up(id, None).await?;
                }
                Err(gateway_error(e, "payment_method_id"))
            }
            Ok(reference) => {
                let reference = &reference;
                self.write(|tx| {
                    Box::pin(async move {
                        let p = tx.payment_confirm(id, reference).await?.ok_or_else(|| {
                            Error::Unavailable("The payment could not be recorded in time; it was given back".into())
                        })?;
                        tx.billing_balance_add(account_id, -cents).await?;
                        let entity = EventEntity::new(
                            "account",
                            account_id,
                            "payment",
                            format!("/v4/account/payments/{}", p.id),
                        );
                        tx.event_insert(
                            &event(actor, "payment_submitted", entity)
                                .message(format!("Payment of ${}", Cents(cents).dollars()))
                                .build(),
                        )
                        .await?;
                        Ok(p)
                    })
                })
                .await
            }
        }
    }

    /// Checks its required strings, then answers that PayPal is disabled.
    pub async fn paypal_stage(&self, actor: &Actor, input: PaypalStage) -> Result<()> {
        self.authorize(actor, Op::PaypalStage).await?;
        let mut p = Problems::new();
        required(&mut p, "cancel_url", &input.cancel_url);
        required(&mut p, "redirect_url", &input.redirect_url);
        required(&mut p, "usd", &input.usd);
        p.finish()?;
        Err(Error::refused(PAYPAL_DISABLED))
    }

    pub async fn paypal_execute(&self, actor: &Actor, input: PaypalExecute) -> Result<()> {
        self.authorize(actor, Op::PaypalExecute).await?;
        let mut p = Problems::new();
        required(&mut p, "payer_id", &input.payer_id);
        required(&mut p, "payment_id", &input.payment_id);
        p.finish()?;
        Err(Error::refused(PAYPAL_DISABLED))
    }

    pub async fn invoice_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Invoice>> {
        self.authorize(actor, Op::InvoiceList).await?;
        let (data, n) = self.store.invoices_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }

    pub async fn invoice_get(&self, actor: &Actor, id: i64) -> Result<Invoice> {
        self.authorize(actor, Op::InvoiceGet).await?;
        self.store.invoice_get(actor.account_id(), id).await?.ok_or(Error::NotFound)
    }

    pub async fn invoice_item_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<InvoiceItem>> {
        self.authorize(actor, Op::InvoiceItemList).await?;
        self.store.invoice_get(actor.account_id(), id).await?.ok_or(Error::NotFound)?;
        let (data, n) = self.store.invoice_items_page(id, filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_follow_the_balance() {
        assert_eq!(payment_bounds(0), (500, 200_000));
        assert_eq!(payment_bounds(-1_000), (500, 200_000));
        assert_eq!(payment_bounds(300), (300, 200_000));
        assert_eq!(payment_bounds(300_000), (500, 300_000));
        assert_eq!(payment_bounds(9_000_000), (500, 5_000_000));
    }
}
