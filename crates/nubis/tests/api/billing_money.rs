//! Payment methods, the simulated gateway's test cards, payments and PayPal (spec 2.5, 4.3, 8).

use serde_json::json;

use crate::billing_invoices::{add_card, db_exec};
use crate::support::*;

const OK: &str = "4111111111111111";
const DECLINED: &str = "4000000000000002";
const UNREACHABLE: &str = "4000000000000119";
const CHARGES_DECLINED: &str = "4000000000000341";
const CHARGES_UNREACHABLE: &str = "4000000000000259";

fn card(number: &str, month: i64, year: i64) -> serde_json::Value {
    json!({"type": "credit_card", "is_default": true,
           "data": {"card_number": number, "cvv": "123", "expiry_month": month, "expiry_year": year}})
}

async fn methods(api: &Api) -> Vec<serde_json::Value> {
    api.get("/account/payment-methods").await.ok()["data"].as_array().unwrap().clone()
}

/// A child account's owner (a child-account user).
pub fn child_owner(s: &TestServer) -> Api {
    let (ok, out, err) = s.admin(&["account", "list"]);
    assert!(ok, "{err}");
    let parent = out.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    let owner = unique("child");
    let (ok, _, err) = s.admin(&[
        "account",
        "create",
        "--company",
        "Child Co",
        "--username",
        &owner,
        "--email",
        "c@example.com",
        "--parent",
        &parent,
    ]);
    assert!(ok, "{err}");
    s.api_with(&s.token_for(&owner, "*"))
}

#[tokio::test]
async fn card_rules_are_checked_on_their_fields_and_nothing_is_stored() {
    let s = TestServer::start().await;
    let api = s.api();
    let year = chrono::Utc::now().naive_utc().format("%Y").to_string().parse::<i64>().unwrap();
    api.post("/account/payment-methods", json!({})).await.expect_error(400, "type").expect_error(400, "data");
    api.post("/account/payment-methods", json!({"type": "paypal", "is_default": true, "data": {}}))
        .await
        .expect_error(400, "type")
        .expect_error(400, "data.card_number")
        .expect_error(400, "data.cvv")
        .expect_error(400, "data.expiry_month")
        .expect_error(400, "data.expiry_year");
    for bad in ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111", &"4".repeat(25)] {
        api.post("/account/payment-methods", card(bad, 12, year + 1)).await.expect_error(400, "data.card_number");
    }
    let mut c = card(OK, 12, year + 1);
    c["data"]["cvv"] = json!("12");
    api.post("/account/payment-methods", c.clone()).await.expect_error(400, "data.cvv");
    c["data"]["cvv"] = json!("12a4");
    api.post("/account/payment-methods", c).await.expect_error(400, "data.cvv");
    api.post("/account/payment-methods", card(OK, 13, year + 1)).await.expect_error(400, "data.expiry_month");
    api.post("/account/payment-methods", card(OK, 0, year + 1)).await.expect_error(400, "data.expiry_month");
    api.post("/account/payment-methods", card(OK, 12, 99)).await.expect_error(400, "data.expiry_year");
    api.post("/account/payment-methods", card(OK, 12, year - 1)).await.expect_error(400, "data.expiry_year");
    let mut c = card(OK, 12, year + 1);
    c.as_object_mut().unwrap().remove("is_default");
    api.post("/account/payment-methods", c).await.expect_error(400, "is_default");
    assert!(methods(&api).await.is_empty());
    // The current month is still valid; 14 and 24 digits are.
    let month = chrono::Utc::now().naive_utc().format("%m").to_string().parse::<i64>().unwrap();
    api.post("/account/payment-methods", card(OK, month, year)).await.ok();
    api.post("/account/payment-methods", card("41111111111111", 12, year + 1)).await.ok();
    api.post("/account/payment-methods", card(&"4".repeat(24), 12, year + 1)).await.ok();
}

#[tokio::test]
async fn test_cards_drive_the_gateway_and_card_numbers_are_never_kept() {
    let s = TestServer::start().await;
    let api = s.api();
    add_card(&api, DECLINED, true).await.expect_error(400, "data.card_number");
    let r = add_card(&api, UNREACHABLE, true).await;
    r.status_is(503).expect_envelope();
    assert!(methods(&api).await.is_empty(), "a refused card is not stored");
    let m = add_card(&api, OK, true).await;
    let body = m.ok().clone();
    assert_eq!(body["type"], "credit_card");
    assert_eq!(body["is_default"], true);
    assert_eq!(body["data"]["last_four"], "1111");
    assert_eq!(body["data"]["card_type"], "Visa");
    assert_eq!(body["data"]["expiry"], "12/2099");
    assert!(!m.text.contains(OK) && !m.text.contains("\"123\""));
    let list = api.get("/account/payment-methods").await;
    assert!(!list.text.contains(OK));
    assert_eq!(api.get(&format!("/account/payment-methods/{}", body["id"])).await.ok()["data"]["last_four"], "1111");
    assert!(event_actions(&api).await.contains(&"payment_method_add".to_string()));
    let account = api.get("/account").await;
    assert_eq!(account.ok()["credit_card"]["last_four"], "1111");
    assert_eq!(account.body["credit_card"]["expiry"], "12/2099");
    // Never in the database nor the log.
    let n = db_scalar(
        &s,
        &format!("SELECT COUNT(*) FROM payment_methods WHERE gateway_ref LIKE '%{OK}%' OR last_four = '{OK}'"),
    )
    .await;
    assert_eq!(n, 0);
    assert!(!s.log().contains(OK));
}

#[tokio::test]
async fn a_new_default_takes_default_status_and_the_default_cannot_be_deleted() {
    let s = TestServer::start().await;
    let api = s.api();
    // The first method is the default even when not asked.
    let a = add_card(&api, OK, false).await.ok()["id"].as_i64().unwrap();
    let b = add_card(&api, "5555555555554444", true).await.ok()["id"].as_i64().unwrap();
    let c = add_card(&api, OK, false).await.ok()["id"].as_i64().unwrap();
    let defaults = |ms: Vec<serde_json::Value>| {
        ms.iter().filter(|m| m["is_default"] == true).map(|m| m["id"].as_i64().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(defaults(methods(&api).await), vec![b]);
    api.delete(&format!("/account/payment-methods/{b}")).await.status_is(400).expect_envelope();
    api.post_empty(&format!("/account/payment-methods/{c}/make-default")).await.ok();
    assert_eq!(defaults(methods(&api).await), vec![c]);
    api.delete(&format!("/account/payment-methods/{a}")).await.ok();
    api.get(&format!("/account/payment-methods/{a}")).await.status_is(404);
    api.post_empty(&format!("/account/payment-methods/{a}/make-default")).await.status_is(404);
    assert_eq!(methods(&api).await.len(), 2);
    // Deactivated, not erased.
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM payment_methods").await, 3);
}

#[tokio::test]
async fn at_most_six_active_methods_also_under_concurrent_adds() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move { add_card(&api, OK, false).await.status }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 6, "{codes:?}");
    assert!(codes.iter().all(|c| *c == 200 || *c == 400), "{codes:?}");
    assert_eq!(methods(&api).await.len(), 6);
    let ms = methods(&api).await;
    assert_eq!(ms.iter().filter(|m| m["is_default"] == true).count(), 1);
    add_card(&api, OK, false).await.status_is(400).expect_envelope();
}

#[tokio::test]
async fn at_most_sixty_methods_are_added_in_a_day() {
    let s = TestServer::start().await;
    let api = s.api();
    add_card(&api, OK, true).await.ok();
    for _ in 0..59 {
        let id = add_card(&api, OK, false).await.ok()["id"].as_i64().unwrap();
        api.delete(&format!("/account/payment-methods/{id}")).await.ok();
    }
    add_card(&api, OK, false).await.status_is(400).expect_envelope();
    // A day later the window has moved.
    db_exec(&s, "UPDATE payment_methods SET created = '2001-01-01T00:00:00'").await;
    add_card(&api, OK, false).await.ok();
}

#[tokio::test]
async fn the_deprecated_credit_card_operation_says_so_and_sets_the_default() {
    let s = TestServer::start().await;
    let api = s.api();
    add_card(&api, "5555555555554444", true).await.ok();
    api.post("/account/credit-card", json!({"card_number": "123", "cvv": "1", "expiry_month": 0, "expiry_year": 20}))
        .await
        .expect_error(400, "card_number")
        .expect_error(400, "cvv")
        .expect_error(400, "expiry_month")
        .expect_error(400, "expiry_year");
    let r = api
        .post("/account/credit-card", json!({"card_number": OK, "cvv": "123", "expiry_month": 11, "expiry_year": 2098}))
        .await;
    r.ok();
    assert_eq!(r.header("deprecation"), Some("true"));
    assert!(r.header("link").unwrap().contains("/v4/account/payment-methods"));
    let d: Vec<_> = methods(&api).await.into_iter().filter(|m| m["is_default"] == true).collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["data"]["expiry"], "11/2098");
    assert_eq!(d[0]["data"]["last_four"], "1111");
}

#[tokio::test]
async fn payments_check_the_usd_grammar_and_bounds_and_lower_the_balance() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/payments", json!({"usd": "5.00"})).await.expect_error(400, "payment_method_id");
    let m = add_card(&api, OK, true).await.ok()["id"].as_i64().unwrap();
    for bad in ["5", "5.", "1,000.00", "five", "$ 5.00", "5.001", "-5.00", ""] {
        api.post("/account/payments", json!({"usd": bad})).await.expect_error(400, "usd");
    }
    api.post("/account/payments", json!({})).await.expect_error(400, "usd");
    api.post("/account/payments", json!({"usd": "4.99"})).await.expect_error(400, "usd");
    api.post("/account/payments", json!({"usd": "2000.01"})).await.expect_error(400, "usd");
    api.post("/account/payments", json!({"usd": "5.00", "payment_method_id": 999999}))
        .await
        .expect_error(400, "payment_method_id");
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
    let p = api.post("/account/payments", json!({"usd": "$5.00", "payment_method_id": m})).await;
    assert_eq!(p.ok()["usd"], 5.0);
    let id = p.body["id"].as_i64().unwrap();
    api.post("/account/payments", json!({"usd": "2000.00"})).await.ok();
    assert_eq!(api.get("/account").await.ok()["balance"], -2005.0);
    assert_eq!(api.get(&format!("/account/payments/{id}")).await.ok()["usd"], 5.0);
    let list = api.get("/account/payments").await;
    assert_eq!(list.ok()["results"], 2);
    assert_eq!(list.body["data"][0]["usd"], 2000.0, "newest first");
    assert!(event_actions(&api).await.contains(&"payment_submitted".to_string()));
    other_account(&s).get(&format!("/account/payments/{id}")).await.status_is(404);
}

#[tokio::test]
async fn a_declined_or_unreachable_charge_records_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    let d = add_card(&api, CHARGES_DECLINED, true).await.ok()["id"].as_i64().unwrap();
    let u = add_card(&api, CHARGES_UNREACHABLE, false).await.ok()["id"].as_i64().unwrap();
    api.post("/account/payments", json!({"usd": "10.00", "payment_method_id": d}))
        .await
        .expect_error(400, "payment_method_id");
    api.post("/account/payments", json!({"usd": "10.00", "payment_method_id": u}))
        .await
        .status_is(503)
        .expect_envelope();
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
    assert_eq!(api.get("/account").await.ok()["balance"], 0.0);
    assert!(!event_actions(&api).await.contains(&"payment_submitted".to_string()));
}

#[tokio::test]
async fn the_balance_sets_the_bounds_and_concurrent_payments_respect_them() {
    let s = TestServer::start().await;
    let api = s.api();
    add_card(&api, OK, true).await.ok();
    // A balance of 3.00: the minimum is the balance.
    db_exec(&s, "UPDATE account_billing SET balance = 300").await;
    api.post("/account/payments", json!({"usd": "2.99"})).await.expect_error(400, "usd");
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move { api.post("/account/payments", json!({"usd": "3.00"})).await.status }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    // Once one is paid the balance is 0 and the minimum 5.00 again.
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(api.get("/account").await.ok()["balance"], 0.0);
    assert_eq!(api.get("/account/payments").await.ok()["results"], 1);
    // A balance above 2000.00 raises the maximum to the balance, up to 50000.00.
    db_exec(&s, "UPDATE account_billing SET balance = 300000").await;
    api.post("/account/payments", json!({"usd": "3000.01"})).await.expect_error(400, "usd");
    api.post("/account/payments", json!({"usd": "3000.00"})).await.ok();
    db_exec(&s, "UPDATE account_billing SET balance = 9000000").await;
    api.post("/account/payments", json!({"usd": "50000.01"})).await.expect_error(400, "usd");
    api.post("/account/payments", json!({"usd": "50000.00"})).await.ok();
}

#[tokio::test]
async fn paypal_checks_its_fields_then_answers_that_it_is_disabled() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/payments/paypal", json!({}))
        .await
        .expect_error(400, "cancel_url")
        .expect_error(400, "redirect_url")
        .expect_error(400, "usd");
    let r = api
        .post(
            "/account/payments/paypal",
            json!({"cancel_url": "https://example.org/c", "redirect_url": "https://example.org/r", "usd": "10.00"}),
        )
        .await;
    r.status_is(400).expect_envelope();
    assert!(r.text.contains("disabled"));
    api.post("/account/payments/paypal/execute", json!({"payer_id": ""}))
        .await
        .expect_error(400, "payer_id")
        .expect_error(400, "payment_id");
    let r = api.post("/account/payments/paypal/execute", json!({"payer_id": "P", "payment_id": "PAY-1"})).await;
    r.status_is(400).expect_envelope();
    assert!(r.text.contains("disabled"));
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
}

#[tokio::test]
async fn child_account_users_cannot_write_billing_data() {
    let s = TestServer::start().await;
    let child = child_owner(&s);
    let expect_child_error = |r: &Resp| {
        r.status_is(403).expect_envelope();
        assert!(r.text.contains("child account"), "{}", r.text);
    };
    expect_child_error(&add_card(&child, OK, true).await);
    expect_child_error(&child.post("/account/payments", json!({"usd": "5.00"})).await);
    expect_child_error(&child.put("/account", json!({"city": "Paris"})).await);
    expect_child_error(
        &child
            .post(
                "/account/credit-card",
                json!({"card_number": OK, "cvv": "123", "expiry_month": 1, "expiry_year": 2099}),
            )
            .await,
    );
    expect_child_error(&child.post("/account/promo-codes", json!({"promo_code": "X"})).await);
    expect_child_error(&child.post("/account/cancel", json!({})).await);
    // Reads work.
    child.get("/account").await.ok();
    child.get("/account/payment-methods").await.ok();
    assert_eq!(child.get("/account").await.body["city"], "");
}
