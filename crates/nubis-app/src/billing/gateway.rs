//! The payment gateway: one small driver interface ([`PaymentGateway`]) and the built-in
//! [`SimulatedGateway`], the default, whose documented test card numbers drive every path.
//!
//! Card numbers and CVVs pass through here on their way to the gateway and are never kept:
//! nubis stores the gateway's reference, the brand, the last four digits and the expiry.

use std::future::Future;
use std::pin::Pin;

/// A card as the customer typed it. Its `Debug` never shows the number or the CVV.
#[derive(Clone)]
pub struct CardDetails {
    pub number: String,
    pub cvv: String,
    pub expiry_month: i64,
    pub expiry_year: i64,
}

impl std::fmt::Debug for CardDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let last = self.number.get(self.number.len().saturating_sub(4)..).unwrap_or("");
        write!(f, "CardDetails(****{last}, {:02}/{})", self.expiry_month, self.expiry_year)
    }
}

/// Why the gateway did not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayError {
    /// The card or the charge was refused; nothing happened.
    Declined(String),
    /// The gateway could not be reached or did not answer; nothing happened.
    Unreachable(String),
}

pub type GatewayFuture<T> = Pin<Box<dyn Future<Output = Result<T, GatewayError>> + Send>>;

/// What takes payments.
pub trait PaymentGateway: Send + Sync {
    /// Checks and stores a card; returns the gateway's reference for it.
    fn add_card(&self, card: CardDetails) -> GatewayFuture<String>;
    /// Charges `cents` to a stored card. `key` identifies the charge: the same key charges once
    /// however often it is sent. Returns the charge's reference.
    fn charge(&self, card_ref: &str, cents: i64, key: &str) -> GatewayFuture<String>;
    /// Gives a charge back (a charge whose recording failed).
    fn refund(&self, charge_ref: &str) -> GatewayFuture<()>;
}

/// Test card numbers of the simulated gateway (any future expiry and any CVV).
pub mod test_cards {
    /// Accepted; charges succeed.
    pub const SUCCEEDS: &str = "4111111111111111";
    /// Accepted; charges succeed (MasterCard).
    pub const SUCCEEDS_MASTERCARD: &str = "5555555555554444";
    /// Refused when added (`card_declined`).
    pub const DECLINED: &str = "4000000000000002";
    /// The gateway is unreachable when the card is added.
    pub const UNREACHABLE: &str = "4000000000000119";
    /// Accepted when added; every charge to it is declined.
    pub const CHARGES_DECLINED: &str = "4000000000000341";
    /// Accepted when added; the gateway is unreachable for every charge to it.
    pub const CHARGES_UNREACHABLE: &str = "4000000000000259";
}

/// The built-in gateway: no network, no state; what happens depends only on the test card
/// numbers in [`test_cards`]. Every other card is accepted and charged.
#[derive(Debug, Default)]
pub struct SimulatedGateway;

const DECLINES: &str = "charges-declined";
const UNREACHABLE: &str = "charges-unreachable";

impl PaymentGateway for SimulatedGateway {
    fn add_card(&self, card: CardDetails) -> GatewayFuture<String> {
        Box::pin(async move {
            let id = uuid::Uuid::new_v4().simple().to_string();
            match card.number.as_str() {
                test_cards::DECLINED => Err(GatewayError::Declined("Your card was declined.".into())),
                test_cards::UNREACHABLE => Err(GatewayError::Unreachable("The payment gateway did not answer.".into())),
                test_cards::CHARGES_DECLINED => Ok(format!("sim-card-{DECLINES}-{id}")),
                test_cards::CHARGES_UNREACHABLE => Ok(format!("sim-card-{UNREACHABLE}-{id}")),
                _ => Ok(format!("sim-card-{id}")),
            }
        })
    }

    fn charge(&self, card_ref: &str, cents: i64, key: &str) -> GatewayFuture<String> {
        let card_ref = card_ref.to_string();
        let key = key.to_string();
        Box::pin(async move {
            if cents <= 0 {
                return Err(GatewayError::Declined("The amount must be positive.".into()));
            }
            if card_ref.contains(DECLINES) {
                return Err(GatewayError::Declined("Your card was declined.".into()));
            }
            if card_ref.contains(UNREACHABLE) {
                return Err(GatewayError::Unreachable("The payment gateway did not answer.".into()));
            }
            Ok(format!("sim-charge-{key}"))
        })
    }

    fn refund(&self, _charge_ref: &str) -> GatewayFuture<()> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(n: &str) -> CardDetails {
        CardDetails { number: n.into(), cvv: "123".into(), expiry_month: 12, expiry_year: 2099 }
    }

    #[tokio::test]
    async fn test_cards_drive_every_path() {
        let g = SimulatedGateway;
        let ok = g.add_card(card(test_cards::SUCCEEDS)).await.unwrap();
        assert!(g.charge(&ok, 500, "k").await.is_ok());
        assert!(matches!(g.add_card(card(test_cards::DECLINED)).await, Err(GatewayError::Declined(_))));
        assert!(matches!(g.add_card(card(test_cards::UNREACHABLE)).await, Err(GatewayError::Unreachable(_))));
        let d = g.add_card(card(test_cards::CHARGES_DECLINED)).await.unwrap();
        assert!(matches!(g.charge(&d, 500, "k").await, Err(GatewayError::Declined(_))));
        let u = g.add_card(card(test_cards::CHARGES_UNREACHABLE)).await.unwrap();
        assert!(matches!(g.charge(&u, 500, "k").await, Err(GatewayError::Unreachable(_))));
        assert!(!format!("{:?}", card(test_cards::SUCCEEDS)).contains("41111111"));
    }
}
