//! Accounts, users, profiles and personal access tokens.

use crate::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A tenant. Everything else belongs to exactly one account.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Account {
    #[serde(skip)]
    pub id: i64,
    pub euuid: String,
    #[serde(skip)]
    pub parent_id: Option<i64>,
    pub company: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub active_since: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UserType {
    Default,
    Parent,
    Child,
    Proxy,
}

impl UserType {
    pub fn name(self) -> &'static str {
        match self {
            UserType::Default => "default",
            UserType::Parent => "parent",
            UserType::Child => "child",
            UserType::Proxy => "proxy",
        }
    }
    pub fn parse(s: &str) -> UserType {
        match s {
            "parent" => UserType::Parent,
            "child" => UserType::Child,
            "proxy" => UserType::Proxy,
            _ => UserType::Default,
        }
    }
}

/// A user of an account, as the users endpoints show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct User {
    #[serde(skip)]
    pub id: i64,
    #[serde(skip)]
    pub account_id: i64,
    pub username: String,
    pub email: String,
    pub restricted: bool,
    pub user_type: UserType,
    pub ssh_keys: Vec<String>,
    pub tfa_enabled: bool,
    pub verified_phone_number: Option<String>,
    pub password_created: Option<Timestamp>,
    pub last_login: Option<serde_json::Value>,
    #[serde(skip)]
    pub is_owner: bool,
    #[serde(skip)]
    pub prefs: ProfilePrefs,
    #[serde(skip)]
    pub created: Timestamp,
}

impl User {
    pub fn is_proxy(&self) -> bool {
        self.user_type == UserType::Proxy
    }
}

/// Settings a user changes on their own profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ProfilePrefs {
    pub timezone: String,
    pub email_notifications: bool,
    pub ip_whitelist_enabled: bool,
    pub lish_auth_method: String,
    pub authorized_keys: Option<Vec<String>>,
}

impl Default for ProfilePrefs {
    fn default() -> Self {
        ProfilePrefs {
            timezone: "UTC".into(),
            email_notifications: true,
            ip_whitelist_enabled: false,
            lish_auth_method: "keys_only".into(),
            authorized_keys: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Referrals {
    pub code: String,
    pub url: String,
    pub total: i64,
    pub completed: i64,
    pub pending: i64,
    pub credit: i64,
}

/// `GET /v4/profile`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Profile {
    pub uid: i64,
    pub username: String,
    pub email: String,
    pub timezone: String,
    pub email_notifications: bool,
    pub referrals: Referrals,
    pub ip_whitelist_enabled: bool,
    pub lish_auth_method: String,
    pub authorized_keys: Option<Vec<String>>,
    pub two_factor_auth: bool,
    pub restricted: bool,
    pub authentication_type: String,
    pub verified_phone_number: Option<String>,
    pub user_type: UserType,
}

impl Profile {
    pub fn of(user: &User) -> Profile {
        Profile {
            uid: user.id,
            username: user.username.clone(),
            email: user.email.clone(),
            timezone: user.prefs.timezone.clone(),
            email_notifications: user.prefs.email_notifications,
            referrals: Referrals {
                code: String::new(),
                url: String::new(),
                total: 0,
                completed: 0,
                pending: 0,
                credit: 0,
            },
            ip_whitelist_enabled: user.prefs.ip_whitelist_enabled,
            lish_auth_method: user.prefs.lish_auth_method.clone(),
            authorized_keys: user.prefs.authorized_keys.clone(),
            two_factor_auth: user.tfa_enabled,
            restricted: user.restricted,
            authentication_type: "password".into(),
            verified_phone_number: user.verified_phone_number.clone(),
            user_type: user.user_type,
        }
    }
}

/// A personal access token. The secret itself is never stored or shown after creation: `token`
/// is set only in the create response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Token {
    pub id: i64,
    #[serde(skip)]
    pub user_id: i64,
    pub label: String,
    pub scopes: String,
    pub created: Timestamp,
    pub expiry: Option<Timestamp>,
    pub token: Option<String>,
}

/// What authentication finds for a bearer token.
#[derive(Debug, Clone)]
pub struct Credential {
    pub token_id: i64,
    pub scopes: String,
    pub expiry: Option<Timestamp>,
    pub user_id: i64,
    pub username: String,
    pub restricted: bool,
    pub user_type: UserType,
    pub account_id: i64,
    pub account_parent_id: Option<i64>,
}

/// `GET /v4/account/transfer`: the account's network transfer this month, in whole gigabytes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountTransfer {
    /// What is used beyond the quota.
    pub billable: i64,
    /// The transfer the account's instances bring this month (their types' `transfer`).
    pub quota: i64,
    /// Outbound transfer so far this month (a started gigabyte counts).
    pub used: i64,
    /// Regions with a quota of their own; none in nubis (every region shares the pool).
    pub region_transfers: Vec<RegionTransfer>,
}

/// The transfer of one region with a quota of its own.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegionTransfer {
    pub id: String,
    pub billable: i64,
    pub quota: i64,
    pub used: i64,
}
