//! Promo credits: codes the operator offers (`nubis admin promo ...` or `[[billing.promo_codes]]`
//! in the configuration), redeemed with `POST /v4/account/promo-codes`, shown in the account's
//! `active_promotions` and used by invoices.

use nubis_model::billing::{Cents, Promotion, parse_usd};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::billing::{PromoCode, PromotionRow};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};

/// Days after its creation during which an account can redeem a promo code.
pub const PROMO_ACCOUNT_DAYS: i64 = 90;

/// `POST /v4/account/promo-codes`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PromoCodeAdd {
    #[schema(required = true, value_type = String, min_length = 1, max_length = 32)]
    pub promo_code: Option<String>,
}

/// A promotion as the account shows it.
pub(crate) fn promotion_view(p: &PromotionRow) -> Promotion {
    let this_month = p.remaining.min(p.monthly_cap).max(0);
    Promotion {
        credit_monthly_cap: Cents(p.monthly_cap).dollars(),
        credit_remaining: Cents(p.remaining).dollars(),
        description: p.description.clone(),
        expire_dt: p.expires,
        image_url: String::new(),
        service_type: "all".into(),
        summary: format!("{} credit ({})", Cents(p.credit).dollars(), p.code),
        this_month_credit_remaining: Cents(this_month).dollars(),
    }
}

/// A promo code of the configuration, checked.
pub(crate) fn config_code(c: &nubis_model::config::PromoCodeConfig) -> std::result::Result<PromoCode, String> {
    let credit = parse_usd(&c.credit).ok_or_else(|| format!("promo code {}: credit must be like 50.00", c.code))?;
    let monthly_cap = match &c.monthly_cap {
        Some(m) => parse_usd(m).ok_or_else(|| format!("promo code {}: monthly_cap must be like 10.00", c.code))?,
        None => credit,
    };
    let expires =
        Timestamp::parse(&c.expires).ok_or_else(|| format!("promo code {}: expires is not a date", c.code))?;
    if c.code.is_empty() || c.code.chars().count() > 32 {
        return Err(format!("promo code '{}': must be 1 to 32 characters", c.code));
    }
    Ok(PromoCode { code: c.code.clone(), credit, monthly_cap, expires, description: c.description.clone() })
}

impl App {
    /// The code, from the database (the operator's commands) or else from the configuration.
    async fn promo_lookup(&self, tx: &mut Tx<'_>, code: &str) -> Result<Option<PromoCode>> {
        if let Some(p) = tx.promo_code_get(code).await? {
            return Ok(Some(p));
        }
        Ok(self.config.billing.promo_codes.iter().find(|c| c.code == code).and_then(|c| config_code(c).ok()))
    }

    /// The account's promotions that still give credit.
    pub(crate) async fn active_promotions(&self, account_id: i64) -> Result<Vec<Promotion>> {
        let p = self.store.promotion_get(account_id).await?;
        let now = Timestamp::now();
        Ok(p.iter().filter(|p| p.remaining > 0 && p.expires > now).map(promotion_view).collect())
    }

    pub async fn promo_code_add(&self, actor: &Actor, input: PromoCodeAdd) -> Result<Promotion> {
        self.authorize(actor, Op::PromoCodeAdd).await?;
        let code = match input.promo_code {
            Some(c) if !c.is_empty() && c.chars().count() <= 32 => c,
            _ => return Err(Error::invalid("promo_code", "Must be 1 to 32 characters")),
        };
        let code = &code;
        self.write(|tx| {
            Box::pin(async move {
                let now = Timestamp::now();
                tx.billing_lock(actor.account_id()).await?;
                let a = tx.account_get(actor.account_id()).await?.ok_or(Error::NotFound)?;
                if a.active_since <= now.minus_days(PROMO_ACCOUNT_DAYS) {
                    return Err(Error::refused(format!(
                        "Promo codes can be added only during an account's first {PROMO_ACCOUNT_DAYS} days"
                    )));
                }
                if tx.promotion_of(actor.account_id()).await?.is_some() {
                    return Err(Error::refused("The account already has a promotional credit"));
                }
                let p = self
                    .promo_lookup(tx, code)
                    .await?
                    .filter(|p| p.expires > now)
                    .ok_or_else(|| Error::invalid("promo_code", "Invalid or expired promo code"))?;
                tx.promotion_insert(actor.account_id(), &p, now)
                    .await
                    .map_err(|e| e.unique_as("promo_code", "The account already has a promotional credit"))?;
                let row =
                    tx.promotion_of(actor.account_id()).await?.ok_or_else(|| Error::internal("promotion written"))?;
                Ok(promotion_view(&row))
            })
        })
        .await
    }

    /// Operators: offers a promo code (or changes it).
    pub async fn admin_promo_set(&self, _admin: &crate::admin::Admin, p: PromoCode) -> Result<()> {
        if p.code.is_empty() || p.code.chars().count() > 32 {
            return Err(Error::invalid("code", "Must be 1 to 32 characters"));
        }
        if p.credit <= 0 || p.monthly_cap <= 0 {
            return Err(Error::invalid("credit", "Credit and monthly cap must be positive"));
        }
        let p = &p;
        self.write(|tx| {
            Box::pin(async move {
                tx.promo_code_upsert(p).await?;
                Ok(())
            })
        })
        .await
    }

    /// Operators: withdraws a promo code (credits already given stay).
    pub async fn admin_promo_delete(&self, _admin: &crate::admin::Admin, code: &str) -> Result<bool> {
        self.write(|tx| {
            Box::pin(async move {
                let found = tx.promo_code_delete(code).await?;
                Ok(found)
            })
        })
        .await
    }

    /// Operators: every promo code offered (the database's, then the configuration's).
    pub async fn admin_promo_list(&self, _admin: &crate::admin::Admin) -> Result<Vec<PromoCode>> {
        let mut out = self.store.promo_codes_all().await?;
        for c in &self.config.billing.promo_codes {
            if let Ok(p) = config_code(c)
                && !out.iter().any(|o| o.code == p.code)
            {
                out.push(p);
            }
        }
        Ok(out)
    }
}
