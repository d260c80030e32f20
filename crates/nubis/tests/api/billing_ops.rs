//! Cancellation, maintenance windows and notifications.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::billing_invoices::{add_card, db_exec};
use crate::billing_money::child_owner;
use crate::instances::wait_status;
use crate::lb_support::{lb_server, until_refused};
use crate::support::*;

fn euuid_of(v: &Value) -> String {
    v["euuid"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn cancel_charges_the_balance_first_and_a_failed_charge_cancels_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1"})).await.ok();
    db_exec(&s, "UPDATE account_billing SET balance = 1234; INSERT INTO account_billing (account_id, billed_through, balance) SELECT 1, created, 1234 FROM accounts WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM account_billing WHERE account_id = 1)").await;
    // No payment method to charge.
    api.post("/account/cancel", json!({"comments": "bye"})).await.status_is(400).expect_envelope();
    // A card whose charges are declined.
    add_card(&api, "4000000000000341", true).await.ok();
    api.post("/account/cancel", json!({"comments": "bye"})).await.status_is(400).expect_envelope();
    let a = api.get("/account").await;
    assert_eq!(a.ok()["balance"], 12.34, "nothing was charged or canceled");
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
}

#[tokio::test]
async fn cancel_stops_balancers_instances_and_tokens_and_operators_still_read_the_account() {
    let s = lb_server().await;
    let api = s.api();
    let inst =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "booted": true})).await;
    let iid = inst.ok()["id"].as_i64().unwrap();
    wait_status(&api, iid, "running").await;
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "to-cancel"})).await;
    let ip = nb.ok()["ipv4"].as_str().unwrap().to_string();
    let nbid = nb.body["id"].as_i64().unwrap();
    api.post(&format!("/nodebalancers/{nbid}/configs"), json!({"port": 7301, "protocol": "tcp"})).await.ok();
    let addr: SocketAddr = format!("{ip}:7301").parse().unwrap();
    eventually(60, "the listener", || async move { tokio::net::TcpStream::connect(addr).await.ok() }).await;
    add_card(&api, "4111111111111111", true).await.ok();
    db_exec(&s, "UPDATE account_billing SET balance = 700").await;
    let euuid = euuid_of(api.get("/account").await.ok());

    api.post("/account/cancel", json!({"comments": "moving on"})).await.ok();
    // Tokens stop working.
    api.get("/account").await.status_is(401);
    // The balance was charged: one payment of 7.00 plus the usage so far.
    let payments = db_scalar(&s, "SELECT COUNT(*) FROM payments").await;
    assert_eq!(payments, 1);
    assert!(db_scalar(&s, "SELECT usd FROM payments").await >= 700);
    // Balancers stop listening, instances stop.
    until_refused(addr).await;
    eventually(30, "the instance to stop", || {
        let s = &s;
        async move {
            (db_scalar(s, &format!("SELECT COUNT(*) FROM instances WHERE id = {iid} AND status = 'offline'")).await
                == 1)
                .then_some(())
        }
    })
    .await;
    // Metering stopped; the operator still reads the account.
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM meters WHERE ended IS NULL").await, 0);
    let (ok, out, err) = s.admin(&["account", "show", &euuid]);
    assert!(ok, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert!(shown["canceled"].is_string(), "{out}");
    assert_eq!(shown["balance"], 0.0);
    // A new token for a canceled account's user does not work either.
    let t = s.token_for("admin", "*");
    s.api_with(&t).get("/account").await.status_is(401);
}

#[tokio::test]
async fn a_parent_with_an_active_child_and_child_users_cannot_cancel() {
    let s = TestServer::start().await;
    let child = child_owner(&s);
    s.api().post("/account/cancel", json!({})).await.status_is(400).expect_envelope();
    child.post("/account/cancel", json!({})).await.status_is(403).expect_envelope();
    s.api().get("/account").await.ok();
    child.get("/account").await.ok();
    // Another account with nothing owed cancels at once.
    let other = other_account(&s);
    other.post("/account/cancel", json!({"comments": "done"})).await.ok();
    other.get("/account").await.status_is(401);
}

#[tokio::test]
async fn maintenance_shows_scheduled_windows_of_viewable_instances_and_notifications_follow() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "mnt-a"})).await;
    let ia = a.ok()["id"].as_i64().unwrap();
    let b = api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "mnt-b"})).await;
    let ib = b.ok()["id"].as_i64().unwrap();
    let (ok, _, _) = s.admin(&[
        "instance",
        "maintenance",
        "schedule",
        &ia.to_string(),
        "--type",
        "fly",
        "--when",
        "2099-01-01T04:00:00",
        "--reason",
        "x",
    ]);
    assert!(!ok, "unknown type refused");
    let (ok, out, err) = s.admin(&[
        "instance",
        "maintenance",
        "schedule",
        &ia.to_string(),
        "--type",
        "reboot",
        "--when",
        "2099-01-01T04:00:00",
        "--reason",
        "BIOS update",
    ]);
    assert!(ok, "{err}");
    let ma = out.trim().to_string();
    let (ok, out, _) = s.admin(&[
        "instance",
        "maintenance",
        "schedule",
        &ib.to_string(),
        "--type",
        "live_migration",
        "--when",
        "2099-01-02T04:00:00",
        "--reason",
        "host retirement",
    ]);
    assert!(ok);
    let mb = out.trim().to_string();

    let list = api.get("/account/maintenance").await;
    assert_eq!(list.ok()["results"], 2);
    let first = &list.body["data"][0];
    assert_eq!(first["entity"]["id"], ia);
    assert_eq!(first["entity"]["label"], "mnt-a");
    assert_eq!(first["status"], "pending");
    assert_eq!(first["type"], "reboot");
    assert_eq!(first["reason"], "BIOS update");
    assert_eq!(first["when"], "2099-01-01T04:00:00");
    let notes = api.get("/account/notifications").await;
    let kinds: Vec<&str> = notes.ok()["data"].as_array().unwrap().iter().map(|n| n["type"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"reboot_scheduled") && kinds.contains(&"migration_scheduled"), "{kinds:?}");

    // A restricted user sees only the instances it is granted.
    let (_, bob) = user_with_token(&s, "mnt-bob", true, "*").await;
    assert_eq!(bob.get("/account/maintenance").await.ok()["results"], 0);
    s.api()
        .put("/account/users/mnt-bob/grants", json!({"instance": [{"id": ib, "permissions": "read_only"}]}))
        .await
        .ok();
    let seen = bob.get("/account/maintenance").await;
    assert_eq!(seen.ok()["results"], 1);
    assert_eq!(seen.body["data"][0]["entity"]["id"], ib);
    assert_eq!(bob.get("/account/notifications").await.ok()["results"], 1);

    // Canceled windows disappear; completed ones leave the notifications.
    assert!(s.admin(&["instance", "maintenance", "status", &mb, "canceled"]).0);
    assert_eq!(api.get("/account/maintenance").await.ok()["results"], 1);
    assert!(s.admin(&["instance", "maintenance", "status", &ma, "completed"]).0);
    let list = api.get("/account/maintenance").await;
    assert_eq!(list.ok()["data"][0]["status"], "completed");
    assert_eq!(api.get("/account/notifications").await.ok()["results"], 0);
    other_account(&s).get("/account/maintenance").await.ok();
    assert_eq!(other_account(&s).get("/account/maintenance").await.ok()["results"], 0);
}

#[tokio::test]
async fn a_past_due_balance_is_notified_until_paid_and_shows_in_the_standing() {
    let s = TestServer::start().await;
    let api = s.api();
    add_card(&api, "4111111111111111", true).await.ok();
    let euuid = euuid_of(api.get("/account").await.ok());
    // An invoice of 12.00 dated 31 days ago, unpaid.
    let old = (chrono::Utc::now().naive_utc() - chrono::Duration::days(31)).format("%Y-%m-%dT%H:%M:%S").to_string();
    db_exec(
        &s,
        &format!(
            "INSERT INTO invoices (account_id, date, label, period_from, period_to, subtotal, tax, total) \
             VALUES (1, '{old}', 'Invoice', '{old}', '{old}', 1200, 0, 1200); \
             UPDATE account_billing SET balance = 1200"
        ),
    )
    .await;
    let notes = api.get("/account/notifications").await;
    assert_eq!(notes.ok()["data"][0]["type"], "payment_due", "{}", notes.text);
    let (ok, out, _) = s.admin(&["account", "show", &euuid]);
    assert!(ok);
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["past_due"], true);
    assert_eq!(shown["has_payment_method"], true);
    // Paying part of it leaves it past due; paying all of it resolves it.
    api.post("/account/payments", json!({"usd": "5.00"})).await.ok();
    assert_eq!(api.get("/account/notifications").await.ok()["data"][0]["type"], "payment_due");
    api.post("/account/payments", json!({"usd": "7.00"})).await.ok();
    assert_eq!(api.get("/account/notifications").await.ok()["results"], 0);
    let (_, out, _) = s.admin(&["account", "show", &euuid]);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["past_due"], false);
}

#[tokio::test]
async fn a_promotion_about_to_expire_is_notified() {
    let s = TestServer::start().await;
    let api = s.api();
    let soon = (chrono::Utc::now().naive_utc() + chrono::Duration::days(10)).format("%Y-%m-%dT%H:%M:%S").to_string();
    assert!(s.admin(&["promo", "create", "--code", "SOON", "--credit", "20.00", "--expires", &soon]).0);
    assert_eq!(api.get("/account/notifications").await.ok()["results"], 0);
    api.post("/account/promo-codes", json!({"promo_code": "SOON"})).await.ok();
    let n = api.get("/account/notifications").await;
    assert_eq!(n.ok()["data"][0]["type"], "promotion");
    assert_eq!(n.body["data"][0]["until"], soon);
    // Used up: gone.
    db_exec(&s, "UPDATE account_promotions SET remaining = 0").await;
    assert_eq!(api.get("/account/notifications").await.ok()["results"], 0);
}
