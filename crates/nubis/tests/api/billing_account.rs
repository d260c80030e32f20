//! The account record, its update rules, settings and availability (spec 2.4, 4.2).

use serde_json::json;

use crate::billing_money::child_owner;
use crate::support::*;

#[tokio::test]
async fn the_account_shows_the_reference_fields() {
    let s = TestServer::start().await;
    let a = s.api().get("/account").await;
    let body = a.ok();
    for f in [
        "active_promotions",
        "active_since",
        "address_1",
        "address_2",
        "balance",
        "balance_uninvoiced",
        "billing_source",
        "capabilities",
        "city",
        "company",
        "country",
        "credit_card",
        "email",
        "euuid",
        "first_name",
        "last_name",
        "phone",
        "state",
        "tax_id",
        "zip",
    ] {
        assert!(body.get(f).is_some(), "{f} missing: {}", a.text);
    }
    assert_eq!(body["balance"], 0.0);
    assert_eq!(body["balance_uninvoiced"], 0.0);
    assert!(body["credit_card"]["last_four"].is_null());
    assert!(body["capabilities"].as_array().unwrap().iter().any(|c| c == "Linodes"));
    assert_eq!(body["company"], "nubis");
}

#[tokio::test]
async fn account_update_checks_every_field_at_once_and_changes_nothing_on_refusal() {
    let s = TestServer::start().await;
    let api = s.api();
    let before = api.get("/account").await.ok().clone();
    let r = api
        .put(
            "/account",
            json!({
                "address_1": "a".repeat(65), "address_2": "b".repeat(65), "city": "c".repeat(25),
                "company": "Acme (Holdings)", "email": "not-an-email", "first_name": "Jo<hn", "last_name": "x=y",
                "phone": "1".repeat(33), "state": "s".repeat(25), "tax_id": "t".repeat(26), "country": "XX",
                "zip": "12#45",
            }),
        )
        .await;
    for f in [
        "address_1",
        "address_2",
        "city",
        "company",
        "email",
        "first_name",
        "last_name",
        "phone",
        "state",
        "tax_id",
        "country",
        "zip",
    ] {
        r.expect_error(400, f);
    }
    api.put("/account", json!({"company": "c".repeat(129)})).await.expect_error(400, "company");
    api.put("/account", json!({"first_name": "f".repeat(51)})).await.expect_error(400, "first_name");
    api.put("/account", json!({"email": format!("{}@example.com", "e".repeat(120))})).await.expect_error(400, "email");
    for ch in ["<", ">", "(", ")", "\"", "="] {
        api.put("/account", json!({"last_name": format!("a{ch}b")})).await.expect_error(400, "last_name");
    }
    // One good field with one bad one: nothing changes.
    api.put("/account", json!({"city": "Paris", "zip": "1234567890"})).await.expect_error(400, "zip");
    assert_eq!(api.get("/account").await.ok(), &before);

    // A US address.
    let r = api
        .put(
            "/account",
            json!({"first_name": "Ada", "last_name": "Lovelace", "company": "nubis", "address_1": "123 Main Street",
                   "city": "Philadelphia", "state": "PA", "zip": "19102-1234", "country": "US", "phone": "215-555-1212",
                   "tax_id": ""}),
        )
        .await;
    let body = r.ok().clone();
    assert_eq!(body["state"], "PA");
    assert_eq!(body["country"], "US");
    // Omitted fields stay.
    let r = api.put("/account", json!({"address_2": "Suite A"})).await;
    assert_eq!(r.ok()["city"], "Philadelphia");
    assert_eq!(r.body["first_name"], "Ada");
    assert_eq!(r.body["address_2"], "Suite A");
    assert_eq!(api.get("/account").await.ok()["zip"], "19102-1234");
}

#[tokio::test]
async fn state_and_zip_follow_the_country() {
    let s = TestServer::start().await;
    let api = s.api();
    api.put("/account", json!({"country": "US", "state": "XX", "zip": "19102"})).await.expect_error(400, "state");
    api.put("/account", json!({"country": "US", "state": "PA", "zip": "ABCDE"})).await.expect_error(400, "zip");
    api.put("/account", json!({"country": "US", "state": "PA"})).await.expect_error(400, "zip");
    api.put("/account", json!({"country": "US", "state": "AE", "zip": "09001"})).await.ok();
    // Changing only the zip is checked against the stored country.
    api.put("/account", json!({"zip": "1910"})).await.expect_error(400, "zip");
    api.put("/account", json!({"country": "CA", "state": "Ontario", "zip": "K1A-0B1"}))
        .await
        .expect_error(400, "state");
    api.put("/account", json!({"country": "CA", "state": "ON", "zip": "K1A-0B1"})).await.ok();
    api.put("/account", json!({"country": "DE", "state": "Bavaria", "zip": "80331"})).await.ok();
    api.put("/account", json!({"zip": "AB-CDE-12345"})).await.expect_error(400, "zip");
    api.put("/account", json!({"zip": "A B"})).await.expect_error(400, "zip");
    api.put("/account", json!({"zip": "ABCDE-1234"})).await.ok();
    assert_eq!(api.get("/account").await.ok()["state"], "Bavaria");
}

#[tokio::test]
async fn a_parent_accounts_company_cannot_change() {
    let s = TestServer::start().await;
    let api = s.api();
    api.put("/account", json!({"company": "Renamed"})).await.ok();
    let child = child_owner(&s);
    api.put("/account", json!({"company": "Again"})).await.expect_error(400, "company");
    api.put("/account", json!({"company": "Renamed", "city": "Oslo"})).await.ok();
    // A child-account user cannot update the account at all.
    child.put("/account", json!({"city": "Oslo"})).await.status_is(403).expect_envelope();
}

#[tokio::test]
async fn account_access_grants_govern_restricted_users() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "acct-bob", true, "*").await;
    bob.get("/account").await.status_is(403);
    s.api().put("/account/users/acct-bob/grants", json!({"global": {"account_access": "read_only"}})).await.ok();
    bob.get("/account").await.ok();
    bob.get("/account/invoices").await.ok();
    bob.put("/account", json!({"city": "Oslo"})).await.status_is(403);
    bob.post("/account/payments", json!({"usd": "5.00"})).await.status_is(403);
    s.api().put("/account/users/acct-bob/grants", json!({"global": {"account_access": "read_write"}})).await.ok();
    bob.put("/account", json!({"city": "Oslo"})).await.ok();
    // Unrestricted-only operations stay refused.
    bob.post("/account/cancel", json!({})).await.status_is(403);
    // A read-only token cannot write.
    let ro = s.api_with(&s.token_for("admin", "account:read_only"));
    ro.get("/account").await.ok();
    ro.put("/account", json!({"city": "Oslo"})).await.status_is(403);
}

#[tokio::test]
async fn settings_change_and_managed_enable_sends_the_welcome_message() {
    let s = TestServer::start().await;
    let api = s.api();
    let g = api.get("/account/settings").await;
    assert_eq!(g.ok()["managed"], false);
    assert_eq!(g.body["backups_enabled"], false);
    assert!(g.body["longview_subscription"].is_null());
    let u = api.put("/account/settings", json!({"backups_enabled": true, "network_helper": false})).await;
    assert_eq!(u.ok()["backups_enabled"], true);
    assert_eq!(u.body["network_helper"], false);
    api.put("/account/settings", json!({"network_helper": "yes"})).await.expect_error(400, "network_helper");
    api.put("/account/settings", json!({"managed": true})).await.expect_error(400, "managed");
    assert_eq!(api.get("/account/settings").await.ok()["backups_enabled"], true);
    api.post_empty("/account/settings/managed-enable").await.ok();
    assert_eq!(api.get("/account/settings").await.ok()["managed"], true);
    api.post_empty("/account/settings/managed-enable").await.ok();
    let (ok, out, _) = s.admin(&["outbox"]);
    assert!(ok);
    assert_eq!(out.matches("Welcome to the managed service").count(), 1, "{out}");
}

#[tokio::test]
async fn availability_lists_services_per_region_from_the_catalog() {
    let s = TestServer::start().await;
    let api = s.api();
    let all = api.get("/account/availability").await;
    let regions = api.get("/regions").await.ok()["data"].as_array().unwrap().len();
    assert_eq!(all.ok()["results"], regions);
    let sg = api.get("/account/availability/ap-south").await;
    let available = sg.ok()["available"].as_array().unwrap();
    assert!(available.iter().any(|x| x == "Linodes"));
    assert!(sg.body["unavailable"].as_array().unwrap().iter().any(|x| x == "VPCs"));
    let us = api.get("/account/availability/us-east").await;
    assert!(us.ok()["available"].as_array().unwrap().iter().any(|x| x == "VPCs"));
    api.get("/account/availability/nowhere").await.status_is(404);
}

#[tokio::test]
async fn the_account_as_read_can_be_written_back() {
    // SDKs save every field they read, empty ones included.
    let s = TestServer::start().await;
    let api = s.api();
    let read = api.get("/account").await.ok().clone();
    let back = api.put("/account", read.clone()).await;
    assert_eq!(back.ok()["country"], "");
    api.put("/account", json!({"country": "us", "state": "ny", "zip": "10001"})).await.ok();
    let a = api.get("/account").await;
    assert_eq!((a.ok()["country"].as_str(), a.body["state"].as_str()), (Some("US"), Some("NY")));
    let read = a.body.clone();
    api.put("/account", read).await.ok();
}
