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
mod settle;
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

/// A price in dollars as a decimal string (`"0.015"`) in millionths of a dollar.
pub(crate) fn micro_of_str(s: &str) -> Option<i64> {
    let (w, f) = s.split_once('.').unwrap_or((s, ""));
    if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) || f.len() > 6 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: i64 = format!("{f:0<6}").parse().ok()?;
    w.parse::<i64>().ok()?.checked_mul(1_000_000)?.checked_add(frac)
}

/// A catalog price (a float in the configuration) in millionths of a dollar.
pub(crate) fn micro_of_f64(v: f64) -> i64 {
    (v * 1_000_000.0).round() as i64
}

/// Millionths of a dollar as the shortest decimal with at least two decimals (`0.0075`, `5.00`).
pub(crate) fn dollars_of_micro(m: i64) -> String {
    let sign = if m < 0 { "-" } else { "" };
    let a = m.unsigned_abs();
    let frac = format!("{:06}", a % 1_000_000);
    let mut f = frac.trim_end_matches('0');
    if f.len() < 2 {
        f = &frac[..2];
    }
    format!("{sign}{}.{f}", a / 1_000_000)
}

/// Checks the `[billing]` section of the configuration: prices and promo codes.
pub fn check_config(c: &nubis_model::config::BillingConfig) -> std::result::Result<(), String> {
    for (name, v) in
        [("nodebalancer_hourly", &c.nodebalancer_hourly), ("nodebalancer_monthly", &c.nodebalancer_monthly)]
    {
        if micro_of_str(v).is_none() {
            return Err(format!("{name} must be a dollar amount such as 0.015"));
        }
    }
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
            Some(t) => (t.label.clone(), micro_of_f64(t.price.hourly), micro_of_f64(t.price.monthly)),
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
            hourly_micro: micro_of_str(&c.nodebalancer_hourly).unwrap_or(0),
            monthly_micro: micro_of_str(&c.nodebalancer_monthly).unwrap_or(0),
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
        let mut c = nubis_model::config::BillingConfig::default();
        assert!(check_config(&c).is_ok());
        c.nodebalancer_hourly = "cheap".into();
        assert!(check_config(&c).is_err());
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

    #[test]
    fn prices_in_millionths() {
        assert_eq!(micro_of_str("0.015"), Some(15_000));
        assert_eq!(micro_of_str("10.00"), Some(10_000_000));
        assert_eq!(micro_of_str("10"), Some(10_000_000));
        assert_eq!(micro_of_str("1.0000001"), None);
        assert_eq!(micro_of_f64(0.007), 7_000);
        assert_eq!(dollars_of_micro(7_000), "0.007");
        assert_eq!(dollars_of_micro(15_000), "0.015");
        assert_eq!(dollars_of_micro(5_000_000), "5.00");
        assert_eq!(dollars_of_micro(12_500_000), "12.50");
        assert_eq!(dollars_of_micro(7_500), "0.0075");
    }
}
