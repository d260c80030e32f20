//! Records of sign-in and delegation: OAuth clients, logins, child accounts and proxy-user
//! tokens (reference schemas `OAuthClient`, `Login`, `ChildAccount`, `ProxyUserToken`).

use serde::Serialize;
use utoipa::ToSchema;

use crate::Timestamp;

/// An application users sign in to through nubis' authorization server.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OAuthClient {
    /// The client ID: public, not a secret.
    pub id: String,
    pub label: String,
    pub redirect_uri: String,
    pub public: bool,
    /// `active`, `disabled` or `suspended`.
    pub status: String,
    /// The plaintext secret on create and reset-secret only; `<REDACTED>` otherwise.
    pub secret: String,
    pub thumbnail_url: Option<String>,
    #[serde(skip)]
    pub account_id: i64,
    #[serde(skip)]
    pub has_thumbnail: bool,
}

pub const REDACTED: &str = "<REDACTED>";

pub const CLIENT_FILTERABLE: &[&str] = &["id", "label", "public", "redirect_uri", "status"];

/// A sign-in attempt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Login {
    pub id: i64,
    pub datetime: Timestamp,
    pub ip: String,
    pub username: String,
    /// `successful` or `failed`.
    pub status: String,
    pub restricted: bool,
}

pub const LOGIN_FILTERABLE: &[&str] = &["id", "datetime", "ip", "username", "status", "restricted"];

/// A child account as its parent sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChildAccount {
    pub euuid: String,
    pub company: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub address_1: String,
    pub address_2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
    pub phone: String,
    pub tax_id: String,
    /// Integer cents; dollars on the wire.
    #[serde(serialize_with = "crate::money::whole_dollars_as_integer")]
    #[schema(value_type = f64)]
    pub balance: i64,
    #[serde(serialize_with = "crate::money::whole_dollars_as_integer")]
    #[schema(value_type = f64)]
    pub balance_uninvoiced: i64,
    pub billing_source: &'static str,
    pub capabilities: Vec<&'static str>,
    /// Child-account users cannot add payment methods (billing writes are refused to them), so
    /// a child account has no card: both fields are null.
    pub credit_card: crate::billing::CreditCardSummary,
    pub active_since: Timestamp,
}

pub const CHILD_ACCOUNT_FILTERABLE: &[&str] = &["euuid", "company", "email", "first_name", "last_name"];

/// A short-lived token acting as a parent's proxy user on a child account.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProxyUserToken {
    pub id: i64,
    pub label: String,
    pub scopes: String,
    pub created: Timestamp,
    pub expiry: Timestamp,
    /// The raw token: in the create response only.
    pub token: String,
}
