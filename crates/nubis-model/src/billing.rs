//! Billing records as the account endpoints show them: the account's billing view, settings,
//! availability, payment methods, payments, invoices and their items, promotions, maintenance
//! windows and notifications. Money is integer cents ([`Cents`], see [`crate::money`]); it becomes
//! a JSON number of dollars only when written out.

use serde::Serialize;
use utoipa::ToSchema;

use crate::Timestamp;
pub use crate::money::{Cents, parse_usd};

/// The brand of a card from its number's prefix.
pub fn card_brand(number: &str) -> &'static str {
    let p = |n: usize| number.get(..n).and_then(|s| s.parse::<u32>().ok()).unwrap_or(0);
    if number.starts_with('4') {
        "Visa"
    } else if (51..=55).contains(&p(2)) || (2221..=2720).contains(&p(4)) {
        "MasterCard"
    } else if p(2) == 34 || p(2) == 37 {
        "American Express"
    } else if p(4) == 6011 || p(2) == 65 || (644..=649).contains(&p(3)) {
        "Discover"
    } else if p(2) == 35 {
        "JCB"
    } else if p(2) == 36 || p(2) == 38 || (300..=305).contains(&p(3)) {
        "Diners Club"
    } else {
        "Unknown"
    }
}

/// The last four digits and expiry of the default card (`null`s without one).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CreditCardSummary {
    pub expiry: Option<String>,
    pub last_four: Option<String>,
}

/// `GET /v4/account`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountView {
    pub active_promotions: Vec<Promotion>,
    pub active_since: Timestamp,
    pub address_1: String,
    pub address_2: String,
    pub balance: Cents,
    pub balance_uninvoiced: Cents,
    pub billing_source: String,
    pub capabilities: Vec<String>,
    pub city: String,
    pub company: String,
    pub country: String,
    pub credit_card: CreditCardSummary,
    pub email: String,
    pub euuid: String,
    pub first_name: String,
    pub last_name: String,
    pub phone: String,
    pub state: String,
    pub tax_id: String,
    pub zip: String,
}

/// `GET /v4/account/settings`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountSettings {
    pub backups_enabled: bool,
    /// Which interfaces new instances get: `legacy_config_only`,
    /// `legacy_config_default_but_linode_allowed`, `linode_default_but_legacy_config_allowed` or
    /// `linode_only`.
    pub interfaces_for_new_linodes: String,
    pub longview_subscription: Option<String>,
    pub managed: bool,
    pub network_helper: bool,
    pub object_storage: String,
    /// The maintenance policy new instances get (a slug of `/v4/maintenance/policies`).
    pub maintenance_policy: String,
}

/// Services available and unavailable to the account in one region.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Availability {
    pub region: String,
    pub available: Vec<String>,
    pub unavailable: Vec<String>,
}

/// A card as a payment method shows it: never its number or CVV.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CardData {
    pub card_type: String,
    pub expiry: String,
    pub last_four: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentMethod {
    pub id: i64,
    pub created: Timestamp,
    pub data: CardData,
    pub is_default: bool,
    #[serde(rename = "type")]
    pub kind: String,
}

pub const PAYMENT_METHOD_FILTERABLE: &[&str] = &["id", "is_default", "type", "created"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Payment {
    pub id: i64,
    pub date: Timestamp,
    pub usd: Cents,
}

pub const PAYMENT_FILTERABLE: &[&str] = &["id", "date"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaxSummary {
    pub name: String,
    pub tax: Cents,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Invoice {
    pub id: i64,
    pub billing_source: String,
    pub date: Timestamp,
    pub label: String,
    pub subtotal: Cents,
    pub tax: Cents,
    pub tax_summary: Vec<TaxSummary>,
    pub total: Cents,
}

pub const INVOICE_FILTERABLE: &[&str] = &["id", "date", "label", "total"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InvoiceItem {
    pub amount: Cents,
    pub from: Timestamp,
    pub to: Timestamp,
    pub label: String,
    pub quantity: i64,
    pub region: Option<String>,
    pub tax: Cents,
    pub total: Cents,
    #[serde(rename = "type")]
    pub kind: String,
    pub unit_price: String,
}

pub const INVOICE_ITEM_FILTERABLE: &[&str] = &["label", "type", "region"];

/// A promotion credit of the account.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Promotion {
    pub credit_monthly_cap: String,
    pub credit_remaining: String,
    pub description: String,
    pub expire_dt: Timestamp,
    pub image_url: String,
    pub service_type: String,
    pub summary: String,
    pub this_month_credit_remaining: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MaintenanceEntity {
    pub id: i64,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Maintenance {
    pub entity: MaintenanceEntity,
    pub reason: String,
    pub status: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub when: Timestamp,
}

/// Maintenance types an operator may schedule.
pub const MAINTENANCE_TYPES: &[&str] = &["reboot", "cold_migration", "live_migration"];
/// Maintenance statuses, in order; `canceled` ones are never shown.
pub const MAINTENANCE_STATUSES: &[&str] = &["pending", "started", "completed", "canceled"];

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct NotificationEntity {
    pub id: Option<i64>,
    pub label: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Notification {
    pub body: Option<String>,
    pub entity: Option<NotificationEntity>,
    pub label: String,
    pub message: String,
    pub severity: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub until: Option<Timestamp>,
    pub when: Option<Timestamp>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brands_from_prefixes() {
        assert_eq!(card_brand("4111111111111111"), "Visa");
        assert_eq!(card_brand("5555555555554444"), "MasterCard");
        assert_eq!(card_brand("378282246310005"), "American Express");
        assert_eq!(card_brand("6011111111111117"), "Discover");
        assert_eq!(card_brand("9999999999999999"), "Unknown");
    }
}
