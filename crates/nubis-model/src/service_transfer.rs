//! Service transfers as the API shows them (spec 3.2, 4.4; reference `ServiceTransfer`, with
//! `entities.linodes` renamed `entities.instances`), and their states.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Timestamp;

/// Where a transfer stands (reference enum; the spec's "expired" is `stale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransferStatus {
    /// Ready to be accepted.
    Pending,
    /// Accepted by another account; the instances are being moved.
    Accepted,
    /// The instances belong to the receiving account.
    Completed,
    /// A condition broke between acceptance and completion; nothing moved.
    Failed,
    /// Canceled by the creating account.
    Canceled,
    /// Not accepted before its expiry.
    Stale,
}

impl TransferStatus {
    pub fn name(self) -> &'static str {
        match self {
            TransferStatus::Pending => "pending",
            TransferStatus::Accepted => "accepted",
            TransferStatus::Completed => "completed",
            TransferStatus::Failed => "failed",
            TransferStatus::Canceled => "canceled",
            TransferStatus::Stale => "stale",
        }
    }

    pub fn parse(s: &str) -> Option<TransferStatus> {
        Some(match s {
            "pending" => TransferStatus::Pending,
            "accepted" => TransferStatus::Accepted,
            "completed" => TransferStatus::Completed,
            "failed" => TransferStatus::Failed,
            "canceled" => TransferStatus::Canceled,
            "stale" => TransferStatus::Stale,
            _ => return None,
        })
    }

    /// The status as of `now`: a pending transfer at or past its expiry is stale, whether or not
    /// the sweep has written that yet.
    pub fn as_of(self, expiry: Timestamp, now: Timestamp) -> TransferStatus {
        if self == TransferStatus::Pending && now >= expiry { TransferStatus::Stale } else { self }
    }
}

/// The services a transfer moves; only instances can be transferred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct TransferEntities {
    pub instances: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ServiceTransfer {
    /// The transfer's UUID.
    pub token: String,
    pub status: TransferStatus,
    pub created: Timestamp,
    pub updated: Timestamp,
    /// The caller's account created the transfer.
    pub is_sender: bool,
    pub expiry: Timestamp,
    pub entities: TransferEntities,
}

/// Fields a list of transfers can be filtered and ordered on.
pub const SERVICE_TRANSFER_FILTERABLE: &[&str] = &["status", "is_sender", "created", "updated", "expiry", "token"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_transfer_past_its_expiry_is_stale() {
        let expiry = Timestamp::parse("2026-01-02T00:00:00").unwrap();
        let before = Timestamp::parse("2026-01-01T23:59:59").unwrap();
        assert_eq!(TransferStatus::Pending.as_of(expiry, before), TransferStatus::Pending);
        assert_eq!(TransferStatus::Pending.as_of(expiry, expiry), TransferStatus::Stale);
        assert_eq!(TransferStatus::Accepted.as_of(expiry, expiry.plus_seconds(5)), TransferStatus::Accepted);
        for s in ["pending", "accepted", "completed", "failed", "canceled", "stale"] {
            assert_eq!(TransferStatus::parse(s).unwrap().name(), s);
        }
    }
}
