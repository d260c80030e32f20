//! The request bodies of the account and billing operations (spec 2.4, 2.5), read by the
//! handlers and checked by [`super::validate`].

use serde::Deserialize;
use utoipa::ToSchema;

/// `PUT /v4/account`: every field optional; omitted fields stay unchanged.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct AccountUpdate {
    pub address_1: Option<String>,
    pub address_2: Option<String>,
    pub city: Option<String>,
    pub company: Option<String>,
    pub country: Option<String>,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub phone: Option<String>,
    pub state: Option<String>,
    pub tax_id: Option<String>,
    pub zip: Option<String>,
}

/// `PUT /v4/account/settings`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SettingsUpdate {
    pub backups_enabled: Option<bool>,
    pub network_helper: Option<bool>,
    /// `legacy_config_only`, `legacy_config_default_but_linode_allowed`,
    /// `linode_default_but_legacy_config_allowed` or `linode_only`.
    pub interfaces_for_new_linodes: Option<String>,
    /// Read-only here (see managed-enable); accepted and ignored when unchanged.
    pub managed: Option<bool>,
    pub longview_subscription: Option<String>,
    /// A slug of `/v4/maintenance/policies`.
    pub maintenance_policy: Option<String>,
}

/// `POST /v4/account/cancel`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CancelRequest {
    pub comments: Option<String>,
}

/// The card fields of spec 2.5.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CardInput {
    /// 14..24 digits passing the Luhn check.
    #[schema(required = true, value_type = String, pattern = "^[0-9]{14,24}$")]
    pub card_number: Option<String>,
    #[schema(required = true, value_type = String, pattern = "^[0-9]{3,4}$")]
    pub cvv: Option<String>,
    #[schema(required = true, value_type = i64, minimum = 1, maximum = 12)]
    pub expiry_month: Option<i64>,
    /// This month or later.
    #[schema(required = true, value_type = i64, minimum = 1000, maximum = 9999)]
    pub expiry_year: Option<i64>,
}

/// The kinds of payment method a create takes, as documented: cards only (spec 2.5).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // documents the request only
pub enum PaymentMethodType {
    CreditCard,
}

/// `POST /v4/account/payment-methods`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PaymentMethodCreate {
    #[schema(required = true, value_type = CardInput)]
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub data: Option<CardInput>,
    pub is_default: Option<bool>,
    /// `credit_card`.
    #[serde(rename = "type")]
    #[schema(required = true, value_type = PaymentMethodType)]
    pub kind: Option<String>,
}
