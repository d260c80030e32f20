//! Events: the account's log of what changed, written in the transaction of the change.

use crate::Timestamp;
use serde::Serialize;
use utoipa::ToSchema;

/// The entity an event is about.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EventEntity {
    pub id: i64,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

/// A secondary entity; the reference gives its id as a string.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SecondaryEntity {
    pub id: String,
    pub label: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Event {
    pub id: i64,
    pub action: String,
    pub created: Timestamp,
    pub duration: Option<f64>,
    pub entity: Option<EventEntity>,
    pub secondary_entity: Option<SecondaryEntity>,
    pub percent_complete: Option<i64>,
    pub rate: Option<String>,
    pub read: bool,
    pub seen: bool,
    pub status: String,
    pub time_remaining: Option<String>,
    pub username: Option<String>,
    pub message: Option<String>,
    /// `user` for what a user did, `platform` for what nubis did on its own.
    pub source: Option<String>,
    /// Maintenance events only: `scheduled` or `emergency`.
    pub description: Option<String>,
    /// Maintenance events only: the maintenance policy in effect.
    pub maintenance_policy_set: Option<String>,
    /// Maintenance events only: the earliest start.
    pub not_before: Option<Timestamp>,
    /// When the event started (its creation).
    pub start_time: Option<Timestamp>,
    /// When it finished or failed; null while it runs.
    pub complete_time: Option<Timestamp>,
}

/// An event about to be written.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub account_id: i64,
    pub action: &'static str,
    pub entity: Option<EventEntity>,
    pub secondary: Option<EventEntity>,
    pub username: Option<String>,
    pub status: &'static str,
    pub message: Option<String>,
    /// The grant that lets a restricted user see this event (read_only or better on it).
    pub visible_with: Option<(crate::grants::GrantKind, i64)>,
    /// A user who always sees this event (the user it is about).
    pub subject_user_id: Option<i64>,
}

impl EventEntity {
    pub fn new(kind: &str, id: i64, label: impl Into<String>, url: impl Into<String>) -> Self {
        EventEntity { id, label: label.into(), kind: kind.to_string(), url: url.into() }
    }
}

/// Filterable fields of the events list.
pub const EVENT_FILTERABLE: &[&str] =
    &["id", "action", "created", "entity.id", "entity.type", "read", "seen", "username", "status"];
