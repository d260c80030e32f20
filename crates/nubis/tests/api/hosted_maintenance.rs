//! Maintenance policies and the account's choice among them (`maintenance_policy` of the
//! account settings), as the hosted API has them.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn the_maintenance_policies_are_listed_to_any_user() {
    let s = TestServer::start().await;
    let l = s.api().get("/maintenance/policies").await;
    assert_eq!(l.ok()["results"], 2);
    let p = &l.body["data"][0];
    assert_eq!(
        (p["slug"].as_str(), p["type"].as_str(), p["is_default"].as_bool()),
        (Some("linode/migrate"), Some("migrate"), Some(true))
    );
    assert_eq!(p["notification_period_sec"], 3600);
    assert_eq!(l.body["data"][1]["slug"], "linode/power_off_on");
    let f = s.api().get_filtered("/maintenance/policies", r#"{"type": "power_off_on"}"#).await;
    assert_eq!(f.ok()["results"], 1);
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    assert_eq!(bob.get("/maintenance/policies").await.ok()["results"], 2);
    s.api().anonymous().get("/maintenance/policies").await.status_is(401);
}

#[tokio::test]
async fn the_accounts_maintenance_policy_is_a_setting_checked_against_the_policies() {
    let s = TestServer::start().await;
    let api = s.api();
    assert_eq!(api.get("/account/settings").await.ok()["maintenance_policy"], "linode/migrate");
    let r = api.put("/account/settings", json!({"maintenance_policy": "linode/power_off_on"})).await;
    assert_eq!(r.ok()["maintenance_policy"], "linode/power_off_on");
    assert_eq!(api.get("/account/settings").await.ok()["maintenance_policy"], "linode/power_off_on");
    // Other settings changes keep it.
    api.put("/account/settings", json!({"network_helper": false})).await.ok();
    assert_eq!(api.get("/account/settings").await.ok()["maintenance_policy"], "linode/power_off_on");
    let r = api.put("/account/settings", json!({"maintenance_policy": "invalid_policy"})).await;
    r.expect_error(400, "maintenance_policy");
    assert_eq!(r.body["errors"][0]["reason"], "Unsupported maintenance policy slug format.");
    api.put("/account/settings", json!({"maintenance_policy": "linode/nothing"}))
        .await
        .expect_error(400, "maintenance_policy");
    // A refused change changes nothing; another account keeps the default.
    assert_eq!(api.get("/account/settings").await.ok()["maintenance_policy"], "linode/power_off_on");
    assert_eq!(other_account(&s).get("/account/settings").await.ok()["maintenance_policy"], "linode/migrate");
    // Restricted users cannot change account settings.
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    bob.put("/account/settings", json!({"maintenance_policy": "linode/migrate"})).await.status_is(403);
}
