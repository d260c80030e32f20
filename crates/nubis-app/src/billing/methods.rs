//! Payment methods (spec 2.5, 4.3) and the deprecated credit-card operation. A card goes to the
//! payment gateway, which keeps it; nubis keeps the gateway's reference, the brand, the last four
//! digits and the expiry, never the number or the CVV.

use nubis_model::billing::{PaymentMethod, card_brand};
use nubis_model::event::EventEntity;
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::billing::NewCard;

use super::gateway::GatewayError;
use super::{CardDetails, validate};
use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// Active payment methods an account may have.
pub const MAX_ACTIVE_METHODS: i64 = 6;
/// Payment methods an account may add in 24 hours.
pub const MAX_ADDED_PER_DAY: i64 = 60;

pub use super::requests::{CardInput, PaymentMethodCreate};

fn method_entity(m: &PaymentMethod) -> EventEntity {
    EventEntity::new(
        "payment_method",
        m.id,
        format!("{} ending in {}", m.data.card_type, m.data.last_four),
        format!("/v4/account/payment-methods/{}", m.id),
    )
}

/// A gateway refusal as the API answers it: a decline is a 400 on the card number, an
/// unreachable gateway a 503 (nothing was stored either way).
pub(crate) fn gateway_error(e: GatewayError, field: &str) -> Error {
    match e {
        GatewayError::Declined(m) => Error::invalid(field, m),
        GatewayError::Unreachable(m) => Error::Unavailable(format!("The payment gateway is unreachable: {m}")),
    }
}

impl App {
    pub async fn payment_method_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<PaymentMethod>> {
        self.authorize(actor, Op::PaymentMethodList).await?;
        let (data, n) = self.store.payment_methods_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data, page, n))
    }

    pub async fn payment_method_get(&self, actor: &Actor, id: i64) -> Result<PaymentMethod> {
        self.authorize(actor, Op::PaymentMethodGet).await?;
        Ok(self.store.payment_method_get(actor.account_id(), id).await?.ok_or(Error::NotFound)?.view)
    }

    pub async fn payment_method_create(&self, actor: &Actor, input: PaymentMethodCreate) -> Result<PaymentMethod> {
        self.authorize(actor, Op::PaymentMethodCreate).await?;
        let mut p = Problems::new();
        match input.kind.as_deref() {
            None => p.add("type", "Type is required"),
            Some("credit_card") => {}
            Some(_) => p.add("type", "Must be credit_card"),
        }
        if input.is_default.is_none() {
            p.add("is_default", "is_default is required");
        }
        let card = match &input.data {
            None => {
                p.add("data", "Card data is required");
                None
            }
            Some(d) => match validate::card(d, "data.", Timestamp::now()) {
                Ok(c) => Some(c),
                Err(e) => {
                    p.absorb(Err(e))?;
                    None
                }
            },
        };
        p.finish()?;
        let card = card.ok_or_else(|| Error::internal("card checked"))?;
        self.add_card(actor, card, input.is_default.unwrap_or(false), "data.card_number").await
    }

    /// `POST /v4/account/credit-card` (deprecated): the same card rules; the card becomes the
    /// default payment method.
    pub async fn credit_card_add(&self, actor: &Actor, input: CardInput) -> Result<PaymentMethod> {
        self.authorize(actor, Op::CreditCardAdd).await?;
        let card = validate::card(&input, "", Timestamp::now())?;
        self.add_card(actor, card, true, "card_number").await
    }

    async fn check_method_limits(&self, tx: &mut nubis_store::Tx<'_>, account_id: i64) -> Result<()> {
        let (active, added) = tx.payment_methods_counts(account_id, Timestamp::now().minus_days(1)).await?;
        if active >= MAX_ACTIVE_METHODS {
            return Err(Error::refused(format!(
                "An account can have at most {MAX_ACTIVE_METHODS} active payment methods; delete one first"
            )));
        }
        if added >= MAX_ADDED_PER_DAY {
            return Err(Error::refused(format!(
                "At most {MAX_ADDED_PER_DAY} payment methods can be added in 24 hours; try again later"
            )));
        }
        Ok(())
    }

    /// Checks the limits, has the gateway accept the card, then records it under the limits
    /// again (they hold under concurrent adds: the account's billing row is locked).
    async fn add_card(
        &self,
        actor: &Actor,
        card: CardDetails,
        is_default: bool,
        card_field: &str,
    ) -> Result<PaymentMethod> {
        self.write(|tx| {
            Box::pin(async move {
                tx.billing_lock(actor.account_id()).await?;
                self.check_method_limits(tx, actor.account_id()).await
            })
        })
        .await?;
        let last_four = card.number[card.number.len().saturating_sub(4)..].to_string();
        let brand = card_brand(&card.number);
        let (month, year) = (card.expiry_month, card.expiry_year);
        let reference = self.payment_gateway().add_card(card).await.map_err(|e| gateway_error(e, card_field))?;
        let (last_four, reference) = (&last_four, &reference);
        let m = self
            .write(|tx| {
                Box::pin(async move {
                    tx.billing_lock(actor.account_id()).await?;
                    self.check_method_limits(tx, actor.account_id()).await?;
                    let has_default = tx.payment_method_has_default(actor.account_id()).await?;
                    let make_default = is_default || !has_default;
                    if make_default {
                        tx.payment_methods_clear_default(actor.account_id()).await?;
                    }
                    let m = tx
                        .payment_method_insert(&NewCard {
                            account_id: actor.account_id(),
                            card_type: brand,
                            last_four,
                            expiry_month: month,
                            expiry_year: year,
                            gateway_ref: reference,
                            is_default: make_default,
                            created: Timestamp::now(),
                        })
                        .await?;
                    tx.event_insert(&event(actor, "payment_method_add", method_entity(&m.view)).build()).await?;
                    Ok(m.view)
                })
            })
            .await?;
        Ok(m)
    }

    pub async fn payment_method_make_default(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::PaymentMethodMakeDefault).await?;
        self.store.payment_method_get(actor.account_id(), id).await?.ok_or(Error::NotFound)?;
        self.write(|tx| {
            Box::pin(async move {
                tx.billing_lock(actor.account_id()).await?;
                tx.payment_method_active(actor.account_id(), id).await?.ok_or(Error::NotFound)?;
                tx.payment_methods_clear_default(actor.account_id()).await?;
                tx.payment_method_set_default(id).await?;
                Ok(())
            })
        })
        .await
    }

    /// Deactivates a payment method; the default one cannot be deleted.
    pub async fn payment_method_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::PaymentMethodDelete).await?;
        self.store.payment_method_get(actor.account_id(), id).await?.ok_or(Error::NotFound)?;
        self.write(|tx| {
            Box::pin(async move {
                tx.billing_lock(actor.account_id()).await?;
                let m = tx.payment_method_active(actor.account_id(), id).await?.ok_or(Error::NotFound)?;
                if m.view.is_default {
                    return Err(Error::refused(
                        "The default payment method cannot be deleted; make another method the default first",
                    ));
                }
                tx.payment_method_deactivate(id, Timestamp::now()).await?;
                Ok(())
            })
        })
        .await
    }
}
