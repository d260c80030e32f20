//! The profile and personal access tokens.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn the_profile_is_the_callers_user() {
    let s = TestServer::start().await;
    let p = s.api().get("/profile").await;
    let b = p.ok();
    assert_eq!(b["username"], "admin");
    assert_eq!(b["restricted"], false);
    assert!(b["uid"].as_i64().is_some());
}

#[tokio::test]
async fn profile_update_checks_fields_and_records_an_event() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.put("/profile", json!({"email": "not-an-email", "lish_auth_method": "telnet"})).await;
    r.expect_error(400, "email").expect_error(400, "lish_auth_method");
    assert_eq!(api.get("/profile").await.ok()["email"], "admin@nubis.invalid", "nothing changed");
    let r = api
        .put("/profile", json!({"email": "root@example.com", "timezone": "US/Eastern", "username": "ignored"}))
        .await;
    assert_eq!(r.ok()["email"], "root@example.com");
    assert_eq!(r.body["timezone"], "US/Eastern");
    assert_eq!(r.body["username"], "admin");
    assert_eq!(event_actions(&api).await[0], "profile_update");
}

#[tokio::test]
async fn the_raw_token_appears_only_in_the_create_response() {
    let s = TestServer::start().await;
    let api = s.api();
    let t = api.post("/profile/tokens", json!({"label": "ci", "scopes": "events:read_only"})).await;
    let b = t.ok();
    let secret = b["token"].as_str().unwrap().to_string();
    assert_eq!(secret.len(), 64);
    let id = b["id"].as_i64().unwrap();
    let got = api.get(&format!("/profile/tokens/{id}")).await;
    assert!(got.ok()["token"].is_null());
    let list = api.get("/profile/tokens").await;
    assert!(!list.text.contains(&secret));
    assert!(!s.log().contains(&secret), "secrets never reach the log");
}

#[tokio::test]
async fn token_fields_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/profile/tokens", json!({"label": ""})).await.expect_error(400, "label");
    api.post("/profile/tokens", json!({"label": "x".repeat(101)})).await.expect_error(400, "label");
    api.post("/profile/tokens", json!({"expiry": "2001-01-01T00:00:00"})).await.expect_error(400, "expiry");
    api.post("/profile/tokens", json!({"expiry": "next tuesday"})).await.expect_error(400, "expiry");
    let r = api.post("/profile/tokens", json!({"label": "", "expiry": "soon", "scopes": "x:y"})).await;
    r.expect_error(400, "label").expect_error(400, "expiry").expect_error(400, "scopes");
    assert_eq!(api.get("/profile/tokens").await.ok()["results"], 1, "nothing was created");
    let t = api.post("/profile/tokens", json!({"label": "ok", "expiry": "2099-01-01T00:00:00"})).await;
    assert_eq!(t.ok()["expiry"], "2099-01-01T00:00:00");
}

#[tokio::test]
async fn tokens_can_be_renamed_and_deleted_with_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let id = api.post("/profile/tokens", json!({"label": "old"})).await.ok()["id"].as_i64().unwrap();
    api.put(&format!("/profile/tokens/{id}"), json!({"label": ""})).await.expect_error(400, "label");
    let r = api.put(&format!("/profile/tokens/{id}"), json!({"label": "new"})).await;
    assert_eq!(r.ok()["label"], "new");
    assert_eq!(api.delete(&format!("/profile/tokens/{id}")).await.ok(), &json!({}));
    api.get(&format!("/profile/tokens/{id}")).await.expect_error(404, "-");
    let actions = event_actions(&api).await;
    assert_eq!(&actions[..3], ["token_delete", "token_update", "token_create"]);
}

#[tokio::test]
async fn another_users_tokens_are_not_found() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", false, "*").await;
    let id = bob.post("/profile/tokens", json!({"label": "bobs"})).await.ok()["id"].as_i64().unwrap();
    s.api().get(&format!("/profile/tokens/{id}")).await.expect_error(404, "-");
    s.api().delete(&format!("/profile/tokens/{id}")).await.expect_error(404, "-");
    bob.get(&format!("/profile/tokens/{id}")).await.ok();
}
