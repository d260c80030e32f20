//! `nubis admin` commands of billing: closing invoices, promo codes, maintenance windows and
//! showing an account's billing state.

use nubis_app::App;
use nubis_app::admin::Admin;
use nubis_model::{Error, Timestamp};

use crate::cli::{BillingCommand, MaintenanceCommand, PromoCommand};
use crate::refusal::fail;

fn when(s: &str, field: &str) -> anyhow::Result<Timestamp> {
    Timestamp::parse(s)
        .ok_or_else(|| fail(Error::invalid(field, "Must be a date and time such as 2027-01-01T00:00:00")))
}

fn dollars(s: &str, field: &str) -> anyhow::Result<i64> {
    nubis_model::billing::parse_usd(s).ok_or_else(|| fail(Error::invalid(field, "Must be an amount such as 50.00")))
}

pub async fn account_show(app: &App, admin: &Admin, euuid: &str) -> anyhow::Result<()> {
    let v = app.admin_account_show(admin, euuid).await.map_err(fail)?;
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

pub async fn billing(app: &App, admin: &Admin, cmd: BillingCommand) -> anyhow::Result<()> {
    let now = Timestamp::now();
    let n = match cmd {
        BillingCommand::Close { account } => {
            let id = match account {
                Some(e) => Some(app.admin_account_id(admin, &e).await.map_err(fail)?),
                None => None,
            };
            app.billing_close_now(id, now).await.map_err(fail)?
        }
        BillingCommand::CloseDue => app.billing_close_due(now).await.map_err(fail)?,
        BillingCommand::Refunds => {
            println!("{:<6} {:<38} {:>10} {:<20} {:<9} STATE", "ID", "ACCOUNT", "USD", "CREATED", "ATTEMPTS");
            for (r, euuid) in app.admin_refunds(admin).await.map_err(fail)? {
                let state = match (&r.done, &r.last_error) {
                    (Some(t), _) => format!("given back {t}"),
                    (None, Some(e)) => format!("waiting (next attempt {}): {e}", r.next_attempt),
                    (None, None) => "waiting".to_string(),
                };
                let usd = nubis_model::billing::Cents(r.cents).dollars();
                println!("{:<6} {euuid:<38} {usd:>10} {:<20} {:<9} {state}", r.id, r.created.to_string(), r.attempts);
            }
            return Ok(());
        }
        BillingCommand::Settle => {
            let (settled, refunded) = app.admin_settle(admin).await.map_err(fail)?;
            println!("{settled} payment(s) settled, {refunded} refund(s) given back");
            return Ok(());
        }
    };
    println!("{n} invoice(s) closed");
    Ok(())
}

pub async fn promo(app: &App, admin: &Admin, cmd: PromoCommand) -> anyhow::Result<()> {
    match cmd {
        PromoCommand::Create { code, credit, monthly_cap, expires, description } => {
            let credit = dollars(&credit, "credit")?;
            let monthly_cap = match monthly_cap {
                Some(m) => dollars(&m, "monthly-cap")?,
                None => credit,
            };
            let expires = when(&expires, "expires")?;
            let p = nubis_store::billing::PromoCode { code: code.clone(), credit, monthly_cap, expires, description };
            app.admin_promo_set(admin, p).await.map_err(fail)?;
            println!("promo code {code} offered until {expires}");
        }
        PromoCommand::List => {
            println!("{:<34} {:>12} {:>12} EXPIRES", "CODE", "CREDIT", "MONTHLY CAP");
            for p in app.admin_promo_list(admin).await.map_err(fail)? {
                let (c, m) = (nubis_model::billing::Cents(p.credit), nubis_model::billing::Cents(p.monthly_cap));
                println!("{:<34} {:>12} {:>12} {}", p.code, c.dollars(), m.dollars(), p.expires);
            }
        }
        PromoCommand::Delete { code } => {
            if !app.admin_promo_delete(admin, &code).await.map_err(fail)? {
                return Err(anyhow::anyhow!("code: no such promo code (codes of the configuration stay offered)"));
            }
            println!("promo code {code} withdrawn");
        }
    }
    Ok(())
}

pub async fn maintenance(app: &App, admin: &Admin, cmd: MaintenanceCommand) -> anyhow::Result<()> {
    match cmd {
        MaintenanceCommand::Schedule { id, kind, when: at, reason } => {
            let at = when(&at, "when")?;
            let m = app.admin_maintenance_schedule(admin, id, &kind, at, &reason).await.map_err(fail)?;
            println!("{m}");
        }
        MaintenanceCommand::Status { maintenance_id, status } => {
            app.admin_maintenance_set_status(admin, maintenance_id, &status).await.map_err(fail)?;
            println!("maintenance {maintenance_id}: {status}");
        }
    }
    Ok(())
}
