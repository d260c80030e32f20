//! Account and billing (spec 2.4, 2.5, 4.2, 4.3): the account record and its settings, payment
//! methods through the payment gateway, payments, the metering engine and its invoices, promo
//! credits, cancellation, maintenance windows and notifications.

pub mod account;
pub mod engine;
pub mod gateway;
pub mod methods;
pub mod ops;
pub mod payments;
pub mod promo;
pub mod requests;
mod settle;
pub mod standing;
mod validate;

use std::sync::Arc;

use nubis_model::{Result, Timestamp};
use nubis_store::Tx;
use nubis_store::billing::NewMeter;
use nubis_store::instances::InstanceRow;
use nubis_store::nodebalancers::BalancerRow;

pub use gateway::{CardDetails, GatewayError, PaymentGateway, SimulatedGateway};

use crate::App;

/// The reason given to child-account users for every billing write (spec 5 and 7; the policy
/// table marks the billing writes).
pub const CHILD_BILLING_REFUSED: &str =
    "This operation is not available to child account users: billing is managed by the parent account.";

/// Checks the `[billing]` section of the configuration: the promo codes (the prices are
/// amounts, checked as the file is read).
pub fn check_config(c: &nubis_model::config::BillingConfig) -> std::result::Result<(), String> {
    for p in &c.promo_codes {
        promo::config_code(p)?;
    }
    Ok(())
}

impl App {
    /// The payment gateway in use.
    pub fn payment_gateway(&self) -> Arc<dyn PaymentGateway> {
        self.gateway.clone()
    }

    /// Starts metering a new instance at its type's prices (called in its create transaction).
    pub(crate) async fn billing_meter_instance(&self, tx: &mut Tx<'_>, i: &InstanceRow) -> Result<()> {
        let (label, hourly, monthly) = match self.catalog.instance_type(&i.kind) {
            Some(t) => (t.label.clone(), t.price.hourly.0, t.price.monthly.0),
            None => (i.kind.clone(), 0, 0),
        };
        tx.meter_open(&NewMeter {
            account_id: i.account_id,
            service_type: "instance",
            service_id: i.id,
            label: &format!("{label} - {} ({})", i.label, i.id),
            region: Some(&i.region),
            hourly_micro: hourly,
            monthly_micro: monthly,
            started: i.created,
        })
        .await
    }

    /// Starts metering a new load balancer (called in its create transaction).
    pub(crate) async fn billing_meter_balancer(&self, tx: &mut Tx<'_>, b: &BalancerRow) -> Result<()> {
        let c = &self.config.billing;
        tx.meter_open(&NewMeter {
            account_id: b.account_id,
            service_type: "nodebalancer",
            service_id: b.id,
            label: &format!("NodeBalancer - {} ({})", b.label, b.id),
            region: Some(&b.region),
            hourly_micro: c.nodebalancer_hourly.0,
            monthly_micro: c.nodebalancer_monthly.0,
            started: b.created,
        })
        .await
    }
}

/// Stops metering a deleted service (called in its delete transaction).
pub(crate) async fn meter_stop(tx: &mut Tx<'_>, service_type: &str, id: i64) -> Result<()> {
    tx.meter_close(service_type, id, Timestamp::now()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_billing_configuration_is_checked() {
        let c = nubis_model::config::BillingConfig::default();
        assert!(check_config(&c).is_ok());
        let mut c = nubis_model::config::BillingConfig::default();
        c.promo_codes.push(nubis_model::config::PromoCodeConfig {
            code: "X".into(),
            credit: "ten".into(),
            monthly_cap: None,
            expires: "2030-01-01T00:00:00".into(),
            description: String::new(),
        });
        assert!(check_config(&c).is_err());
    }
}
