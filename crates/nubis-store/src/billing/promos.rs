//! Promo codes the operator offers and the promo credit an account holds.

use nubis_model::{Result, Timestamp};

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::{Store, Tx};

/// A promo code the operator offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoCode {
    pub code: String,
    pub credit: i64,
    pub monthly_cap: i64,
    pub expires: Timestamp,
    pub description: String,
}

/// The promo credit an account holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotionRow {
    pub code: String,
    pub credit: i64,
    pub remaining: i64,
    pub monthly_cap: i64,
    pub expires: Timestamp,
    pub description: String,
    pub added: Timestamp,
}

fn promotion(r: &Row) -> Result<PromotionRow> {
    Ok(PromotionRow {
        code: r.str("code")?,
        credit: r.i64("credit")?,
        remaining: r.i64("remaining")?,
        monthly_cap: r.i64("monthly_cap")?,
        expires: r.ts("expires")?,
        description: r.str("description")?,
        added: r.ts("added")?,
    })
}

impl Tx<'_> {
    pub async fn promo_code_upsert(&mut self, p: &PromoCode) -> Result<()> {
        query(
            "INSERT INTO promo_codes (code, credit, monthly_cap, expires, description, created) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code) DO UPDATE SET credit = $2, monthly_cap = $3, \
             expires = $4, description = $5",
        )
        .bind(p.code.as_str())
        .bind(p.credit)
        .bind(p.monthly_cap)
        .bind(p.expires.to_string())
        .bind(p.description.as_str())
        .bind(Timestamp::now().to_string())
        .execute(self.h())
        .await?;
        Ok(())
    }

    pub async fn promo_code_delete(&mut self, code: &str) -> Result<bool> {
        Ok(query("DELETE FROM promo_codes WHERE code = $1").bind(code).execute(self.h()).await? > 0)
    }

    pub async fn promo_code_get(&mut self, code: &str) -> Result<Option<PromoCode>> {
        let row = query("SELECT code, credit, monthly_cap, expires, description FROM promo_codes WHERE code = $1")
            .bind(code)
            .fetch_optional(self.h())
            .await?;
        row.map(|r| {
            Ok(PromoCode {
                code: r.str("code")?,
                credit: r.i64("credit")?,
                monthly_cap: r.i64("monthly_cap")?,
                expires: r.ts("expires")?,
                description: r.str("description")?,
            })
        })
        .transpose()
    }

    /// Gives the account its promo credit; an account has at most one, ever (primary key).
    pub async fn promotion_insert(&mut self, account_id: i64, p: &PromoCode, at: Timestamp) -> Result<()> {
        query(
            "INSERT INTO account_promotions (account_id, code, credit, remaining, monthly_cap, expires, description, \
             added) VALUES ($1, $2, $3, $3, $4, $5, $6, $7)",
        )
        .bind(account_id)
        .bind(p.code.as_str())
        .bind(p.credit)
        .bind(p.monthly_cap)
        .bind(p.expires.to_string())
        .bind(p.description.as_str())
        .bind(at.to_string())
        .execute(self.h())
        .await?;
        Ok(())
    }

    pub async fn promotion_of(&mut self, account_id: i64) -> Result<Option<PromotionRow>> {
        let row = query(
            "SELECT code, credit, remaining, monthly_cap, expires, description, added FROM account_promotions \
             WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(self.h())
        .await?;
        row.as_ref().map(promotion).transpose()
    }

    pub async fn promotion_use(&mut self, account_id: i64, cents: i64) -> Result<()> {
        query("UPDATE account_promotions SET remaining = remaining - $2 WHERE account_id = $1")
            .bind(account_id)
            .bind(cents)
            .execute(self.h())
            .await?;
        Ok(())
    }
}

impl Store {
    pub async fn promotion_get(&self, account_id: i64) -> Result<Option<PromotionRow>> {
        let row = query(
            "SELECT code, credit, remaining, monthly_cap, expires, description, added FROM account_promotions \
             WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(self.r())
        .await?;
        row.as_ref().map(promotion).transpose()
    }

    pub async fn promo_codes_all(&self) -> Result<Vec<PromoCode>> {
        let rows = query("SELECT code, credit, monthly_cap, expires, description FROM promo_codes ORDER BY code")
            .fetch_all(self.r())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PromoCode {
                    code: r.str("code")?,
                    credit: r.i64("credit")?,
                    monthly_cap: r.i64("monthly_cap")?,
                    expires: r.ts("expires")?,
                    description: r.str("description")?,
                })
            })
            .collect()
    }
}
