//! The test controls reach the account areas: payment faults decline the next charges, and
//! moving the clock closes the invoices of months that ended and expires pending transfers.

use serde_json::json;

use crate::controls::controlled;
use crate::support::*;

const CARD: &str = "4111111111111111";

#[tokio::test]
async fn a_payment_fault_declines_the_next_charges_then_charges_go_through() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    api.post(
        "/account/payment-methods",
        json!({"type": "credit_card", "is_default": true,
               "data": {"card_number": CARD, "cvv": "123", "expiry_month": 12, "expiry_year": 2099}}),
    )
    .await
    .ok();
    ctl.post("/faults", json!({"kind": "payment_declined", "count": 1})).await.ok();
    api.post("/account/payments", json!({"usd": "10.00"})).await.expect_error(400, "payment_method_id");
    // The decline recorded nothing.
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
    ctl.post("/faults", json!({"kind": "payment_unreachable", "count": 1})).await.ok();
    let r = api.post("/account/payments", json!({"usd": "10.00"})).await;
    r.status_is(503).expect_envelope();
    assert_eq!(api.get("/account/payments").await.ok()["results"], 0);
    // Both faults are used up: the next payment is charged.
    api.post("/account/payments", json!({"usd": "10.00"})).await.ok();
    assert_eq!(api.get("/account/payments").await.ok()["results"], 1);
}

#[tokio::test]
async fn advancing_the_clock_closes_the_month_and_expires_transfers() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    let inst = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "label": "metered", "booted": false}),
        )
        .await;
    let inst_id = inst.ok()["id"].clone();
    let t = api.post("/account/service-transfers", json!({"entities": {"instances": [inst_id]}})).await;
    let token = t.ok()["token"].as_str().unwrap().to_string();
    assert_eq!(api.get("/account/invoices").await.ok()["results"], 0);
    // 40 days later: at least one month has ended, and the transfer is past its 24 hours.
    ctl.post("/clock/advance", json!({"seconds": 40 * 86_400})).await.ok();
    let invoices = api.get("/account/invoices").await;
    assert!(invoices.ok()["results"].as_u64().unwrap() >= 1, "a closed month has its invoice: {}", invoices.text);
    let transfer = api.get(&format!("/account/service-transfers/{token}")).await;
    assert_eq!(transfer.ok()["status"], "stale", "{}", transfer.text);
    // The expiry was done by the sweep, not only shown: its event is there.
    let events = event_actions(&api).await;
    assert!(events.iter().any(|a| a == "entity_transfer_stale"), "{events:?}");
}
