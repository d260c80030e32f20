//! Writes racing writes that remove what they depend on, and charges through the payment
//! gateway, which is never called inside a transaction: grant changes racing the user's
//! deletion, payments racing a cancellation, a charge whose answer is lost, and a refund the
//! gateway does not take at first.

use serde_json::json;

use crate::billing_invoices::add_card;
use crate::controls::controlled;
use crate::lost_updates::{Rng, seed, two_replicas};
use crate::support::*;

/// Grant changes (global and per entity) racing the user's deletion: each answers 200 or 404,
/// and afterwards nothing of the user is left (no grant rows of a deleted user).
#[tokio::test]
async fn grant_changes_racing_a_users_deletion_leave_nothing_behind() {
    let servers = two_replicas().await;
    let apis: Vec<Api> = servers.iter().map(|s| s.api_with(&servers[0].token)).collect();
    let vpc = apis[0].post("/vpcs", json!({"label": unique("gr"), "region": "us-east"})).await;
    let vpc = vpc.ok()["id"].as_i64().unwrap();
    let mut rng = Rng(seed());
    for round in 0..20 {
        let (u, _) = user_with_token(&servers[0], &unique("gone"), true, "*").await;
        let name = u["username"].as_str().unwrap().to_string();
        let id = db_scalar(&servers[0], &format!("SELECT id FROM users WHERE username = '{name}'")).await;
        let path = format!("/account/users/{name}/grants");
        let mut sends = Vec::new();
        for i in 0..4 {
            let (api, path) = (apis[rng.below(2)].clone(), path.clone());
            let body = if i % 2 == 0 {
                json!({"global": {"add_vpcs": true, "add_firewalls": true}})
            } else {
                json!({"vpc": [{"id": vpc, "permissions": "read_write"}]})
            };
            sends.push(tokio::spawn(async move {
                let r = api.put(&path, body).await;
                (r.status, r.text)
            }));
        }
        let (api, user) = (apis[rng.below(2)].clone(), format!("/account/users/{name}"));
        let deleted = tokio::spawn(async move { api.delete(&user).await.status });
        for t in sends {
            let (st, text) = t.await.unwrap();
            assert!(st == 200 || st == 404, "round {round}: a grant change answered {st}: {text}");
        }
        assert_eq!(deleted.await.unwrap(), 200, "round {round}: the deletion");
        apis[0].get(&format!("/account/users/{name}")).await.status_is(404);
        let left = db_scalar(&servers[0], &format!("SELECT COUNT(*) FROM grants WHERE user_id = {id}")).await;
        assert_eq!(left, 0, "round {round}: grant rows of the deleted user are left");
    }
}

/// The ledger of an account, from its rows: (balance, invoiced, paid by confirmed payments,
/// payments still pending).
async fn ledger(s: &TestServer, account: i64) -> (i64, i64, i64, i64) {
    let q = |sql: String| async move { db_scalar(s, &sql).await };
    (
        q(format!("SELECT COALESCE((SELECT balance FROM account_billing WHERE account_id = {account}), 0)")).await,
        q(format!("SELECT CAST(COALESCE(SUM(total), 0) AS BIGINT) FROM invoices WHERE account_id = {account}")).await,
        q(format!(
            "SELECT CAST(COALESCE(SUM(usd), 0) AS BIGINT) FROM payments WHERE account_id = {account} AND status = 'confirmed'"
        ))
        .await,
        q(format!("SELECT COUNT(*) FROM payments WHERE account_id = {account} AND status = 'pending'")).await,
    )
}

/// Payments racing a cancellation of the same account (through two replicas): no 5xx; every
/// payment acknowledged is recorded, none is left pending, and the balance is exactly what was
/// invoiced less what was paid; a canceled account owes nothing.
#[tokio::test]
async fn payments_racing_a_cancel_keep_the_ledger_exact() {
    let servers = two_replicas().await;
    let mut rng = Rng(seed());
    let mut canceled_rounds = 0;
    for round in 0..8 {
        let owner = unique("payer");
        let (ok, _, err) = servers[0].admin(&[
            "account",
            "create",
            "--company",
            "Payer Co",
            "--username",
            &owner,
            "--email",
            "p@example.com",
        ]);
        assert!(ok, "{err}");
        let token = servers[0].token_for(&owner, "*");
        let apis: Vec<Api> = servers.iter().map(|s| s.api_with(&token)).collect();
        let account = apis[0].get("/profile").await.ok()["uid"].as_i64().unwrap();
        let account = db_scalar(&servers[0], &format!("SELECT account_id FROM users WHERE id = {account}")).await;
        add_card(&apis[0], "4111111111111111", true).await.ok();
        // Something is owed (an hour of an instance, and an older balance) in half the rounds.
        if round % 2 == 0 {
            apis[0].post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1"})).await.ok();
        }
        let mut payments = Vec::new();
        for _ in 0..3 {
            let api = apis[rng.below(2)].clone();
            payments.push(tokio::spawn(async move { api.post("/account/payments", json!({"usd": "5.00"})).await }));
        }
        let api = apis[rng.below(2)].clone();
        let cancel = tokio::spawn(async move { api.post("/account/cancel", json!({})).await });
        let mut acknowledged = 0;
        for t in payments {
            let r = t.await.unwrap();
            assert!(r.status < 500, "round {round}: a payment answered {}: {}", r.status, r.text);
            if r.status == 200 {
                acknowledged += 1;
            }
        }
        let c = cancel.await.unwrap();
        assert!(c.status < 500, "round {round}: the cancel answered {}: {}", c.status, c.text);
        let (balance, invoiced, paid, pending) = ledger(&servers[0], account).await;
        assert_eq!(pending, 0, "round {round}: payments left pending");
        assert_eq!(balance, invoiced - paid, "round {round}: the balance is what was invoiced less what was paid");
        let recorded = db_scalar(
            &servers[0],
            &format!("SELECT COUNT(*) FROM payments WHERE account_id = {account} AND purpose = 'payment' AND status = 'confirmed'"),
        )
        .await;
        assert_eq!(recorded, acknowledged, "round {round}: every acknowledged payment is recorded, and only those");
        let canceled = db_scalar(
            &servers[0],
            &format!("SELECT COUNT(*) FROM account_billing WHERE account_id = {account} AND canceled IS NOT NULL"),
        )
        .await;
        assert_eq!(canceled == 1, c.status == 200, "round {round}: canceled exactly when the cancel said so");
        if c.status == 200 {
            canceled_rounds += 1;
            assert!(balance <= 0, "round {round}: a canceled account owes {balance}");
        }
    }
    assert!(canceled_rounds > 0, "no cancellation went through: the race was not tried");
}

fn settle_config() -> String {
    format!("{TEST_CONFIG}\n[billing]\nsettle_after_secs = 60\nsettle_interval_secs = 3600\n")
}

async fn balance(api: &Api) -> f64 {
    api.get("/account").await.ok()["balance"].as_f64().unwrap()
}

/// The gateway takes a charge but its answer is lost: the payment answers 503 and is not
/// recorded; once its request is over the settler asks the gateway again with the same key,
/// finds the charge and gives it back; the balance is as before.
#[tokio::test]
async fn a_charge_whose_answer_is_lost_is_found_and_given_back() {
    let (s, ctl) = controlled(&[], Some(settle_config())).await;
    let api = s.api();
    add_card(&api, "4111111111111111", true).await.ok();
    let before = balance(&api).await;
    ctl.post("/faults", json!({"kind": "payment_answer_lost", "count": 1})).await.ok();
    api.post("/account/payments", json!({"usd": "20.00"})).await.status_is(503).expect_envelope();
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM payments WHERE status = 'pending'").await, 1);
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0, "a pending payment is not shown");
    // While it is pending nothing settles it; past `settle_after_secs` the settler does.
    let (ok, out, _) = s.admin(&["billing", "settle"]);
    assert!(ok && out.contains("0 payment(s) settled"), "{out}");
    ctl.post("/clock/advance", json!({"seconds": 120})).await.ok();
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM payments").await, 0, "the payment was dropped");
    assert_eq!(balance(&api).await, before, "the balance is as before");
    let (ok, out, err) = s.admin(&["billing", "refunds"]);
    assert!(ok, "{err}");
    assert!(out.contains("20.00") && out.contains("given back"), "the charge was given back:\n{out}");
}

/// A refund the gateway does not take stays queued and is tried again until it is taken; a
/// cancellation whose charge was lost holds payments back until it is settled.
#[tokio::test]
async fn a_refund_the_gateway_refuses_is_tried_again_until_it_is_taken() {
    let (s, ctl) = controlled(&[], Some(settle_config())).await;
    let api = s.api();
    add_card(&api, "4111111111111111", true).await.ok();
    crate::billing_invoices::db_exec(&s, "UPDATE account_billing SET balance = 900").await;
    ctl.post("/faults", json!({"kind": "payment_answer_lost", "count": 1})).await.ok();
    ctl.post("/faults", json!({"kind": "refund_unreachable", "count": 2})).await.ok();
    // The cancellation's charge is made, its answer lost: nothing is canceled.
    api.post("/account/cancel", json!({})).await.status_is(503).expect_envelope();
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM account_billing WHERE canceled IS NOT NULL").await, 0);
    // While that charge is unsettled, payments wait.
    let r = api.post("/account/payments", json!({"usd": "5.00"})).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("being canceled"), "{}", r.text);
    // Settled: the charge is found and queued to be given back; the gateway refuses twice.
    ctl.post("/clock/advance", json!({"seconds": 120})).await.ok();
    let (_, out, _) = s.admin(&["billing", "refunds"]);
    assert!(out.contains("9.00") && out.contains("waiting"), "queued, not given back yet:\n{out}");
    ctl.post("/clock/advance", json!({"seconds": 10})).await.ok();
    let (_, out, _) = s.admin(&["billing", "refunds"]);
    assert!(out.contains("waiting"), "refused a second time:\n{out}");
    ctl.post("/clock/advance", json!({"seconds": 10})).await.ok();
    let (_, out, _) = s.admin(&["billing", "refunds"]);
    assert!(out.contains("given back"), "taken at the third attempt:\n{out}");
    assert_eq!(db_scalar(&s, "SELECT attempts FROM gateway_refunds").await, 3);
    // The account is as it was: its balance still owed, payments taken again.
    assert_eq!(balance(&api).await, 9.0);
    api.post("/account/payments", json!({"usd": "9.00"})).await.ok();
}
