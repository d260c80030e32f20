//! Authentication and authorization: tokens, scopes, restricted users and tenants.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn a_missing_or_unknown_token_answers_401() {
    let s = TestServer::start().await;
    s.api().anonymous().get("/profile").await.expect_error(401, "-");
    s.api_with("0000000000000000000000000000000000000000000000000000000000000000")
        .get("/profile")
        .await
        .expect_error(401, "-");
    let r = s
        .api()
        .anonymous()
        .send(reqwest::Method::GET, "/profile", None, &[("authorization", "Basic YWRtaW46YWRtaW4=")])
        .await;
    r.expect_error(401, "-");
}

#[tokio::test]
async fn an_expired_token_answers_401() {
    // The server's clock moves past the expiry (test controls): no wait on the wall clock, which
    // a loaded machine could stretch past a short expiry before the token's first use.
    let (s, ctl) = crate::controls::controlled(&[], None).await;
    let expiry = (chrono::Utc::now() + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%S").to_string();
    let t = s.api().post("/profile/tokens", json!({"label": "short", "expiry": expiry})).await;
    let secret = t.ok()["token"].as_str().unwrap().to_string();
    let api = s.api_with(&secret);
    api.get("/profile").await.ok();
    ctl.post("/clock/advance", json!({"seconds": 3_540, "run_hooks": false})).await.ok();
    api.get("/profile").await.ok();
    ctl.post("/clock/advance", json!({"seconds": 120, "run_hooks": false})).await.ok();
    api.get("/profile").await.expect_error(401, "-");
}

#[tokio::test]
async fn a_revoked_token_answers_401_at_once() {
    let s = TestServer::start().await;
    let t = s.api().post("/profile/tokens", json!({"label": "revoke-me"})).await;
    let (id, secret) = (t.body["id"].as_i64().unwrap(), t.body["token"].as_str().unwrap().to_string());
    s.api_with(&secret).get("/profile").await.ok();
    s.api().delete(&format!("/profile/tokens/{id}")).await.ok();
    s.api_with(&secret).get("/profile").await.expect_error(401, "-");
}

#[tokio::test]
async fn a_token_without_the_scope_gets_403_and_with_it_200() {
    let s = TestServer::start().await;
    let t = s.api().post("/profile/tokens", json!({"label": "events", "scopes": "events:read_only"})).await;
    let events = s.api_with(t.ok()["token"].as_str().unwrap());
    events.post("/account/users", json!({"username": "carol", "email": "c@example.com"})).await.expect_error(403, "-");
    events.get("/account/events").await.ok();
    events.get("/account/users").await.expect_error(403, "-");
    events.get("/profile").await.ok();
    assert_eq!(s.api().get("/account/users").await.ok()["results"], 1, "the refused create changed nothing");
}

#[tokio::test]
async fn read_write_scope_implies_read_only() {
    let s = TestServer::start().await;
    let t = s.api().post("/profile/tokens", json!({"scopes": "account:read_write"})).await;
    let api = s.api_with(t.ok()["token"].as_str().unwrap());
    api.get("/account/users").await.ok();
    api.post("/account/users", json!({"username": "dave", "email": "d@example.com"})).await.ok();
    let ro = s.api().post("/profile/tokens", json!({"scopes": "account:read_only"})).await;
    let ro = s.api_with(ro.ok()["token"].as_str().unwrap());
    ro.get("/account/users").await.ok();
    ro.post("/account/users", json!({"username": "erin", "email": "e@example.com"})).await.expect_error(403, "-");
}

#[tokio::test]
async fn a_token_cannot_create_a_token_with_wider_scopes() {
    let s = TestServer::start().await;
    let t = s.api().post("/profile/tokens", json!({"scopes": "account:read_write events:read_only"})).await;
    let api = s.api_with(t.ok()["token"].as_str().unwrap());
    api.post("/profile/tokens", json!({"scopes": "vpc:read_write"})).await.expect_error(400, "scopes");
    api.post("/profile/tokens", json!({"scopes": "events:read_write"})).await.expect_error(400, "scopes");
    let narrower = api.post("/profile/tokens", json!({"scopes": "account:read_only"})).await;
    assert_eq!(narrower.ok()["scopes"], "account:read_only");
    let same = api.post("/profile/tokens", json!({"scopes": "*"})).await;
    assert_eq!(same.ok()["scopes"], "account:read_write events:read_only");
    let omitted = api.post("/profile/tokens", json!({})).await;
    assert_eq!(omitted.ok()["scopes"], "account:read_write events:read_only");
    api.post("/profile/tokens", json!({"scopes": "nonsense"})).await.expect_error(400, "scopes");
}

#[tokio::test]
async fn restricted_users_cannot_use_unrestricted_only_operations() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", true, "*").await;
    bob.get("/account/users").await.expect_error(403, "-");
    bob.post("/account/users", json!({"username": "mallory", "email": "m@example.com"})).await.expect_error(403, "-");
    bob.get("/account/users/admin").await.expect_error(403, "-");
    bob.get("/profile").await.ok();
}

#[tokio::test]
async fn a_restricted_user_cannot_make_itself_unrestricted() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", true, "*").await;
    bob.put("/account/users/bobby", json!({"restricted": false})).await.expect_error(403, "-");
    bob.put("/profile", json!({"restricted": false})).await.ok();
    assert_eq!(bob.get("/profile").await.ok()["restricted"], true);
    assert_eq!(s.api().get("/account/users/bobby").await.ok()["restricted"], true);
}

#[tokio::test]
async fn a_restricted_user_without_grants_sees_empty_lists() {
    let s = TestServer::start().await;
    s.api().post("/profile/tokens", json!({"label": "owner-activity"})).await.ok();
    let (_, bob) = user_with_token(&s, "bobby", true, "*").await;
    let ev = bob.get("/account/events").await;
    let actions: Vec<&str> =
        ev.ok()["data"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert!(!actions.contains(&"token_create"), "owner's token events are not visible: {actions:?}");
    assert_eq!(bob.get("/profile/tokens").await.ok()["results"], 1, "only its own token");
    assert_eq!(bob.get("/profile/grants").await.ok()["global"]["add_vpcs"], false);
}

#[tokio::test]
async fn accounts_cannot_see_or_change_each_other() {
    let s = TestServer::start().await;
    let admin = s.api();
    admin.post("/account/users", json!({"username": "inside", "email": "i@example.com"})).await.ok();
    let tok = admin.post("/profile/tokens", json!({"label": "mine"})).await.ok()["id"].as_i64().unwrap();
    let ev = admin.get("/account/events").await.body["data"][0]["id"].as_i64().unwrap();
    let other = other_account(&s);
    other.get("/account/users/inside").await.expect_error(404, "-");
    other.put("/account/users/inside", json!({"email": "x@example.com"})).await.expect_error(404, "-");
    other.delete("/account/users/inside").await.expect_error(404, "-");
    other.get("/account/users/inside/grants").await.expect_error(404, "-");
    other.get(&format!("/profile/tokens/{tok}")).await.expect_error(404, "-");
    other.delete(&format!("/profile/tokens/{tok}")).await.expect_error(404, "-");
    other.get(&format!("/account/events/{ev}")).await.expect_error(404, "-");
    other.post_empty(&format!("/account/events/{ev}/read")).await.expect_error(404, "-");
    let users = other.get("/account/users").await;
    assert!(!users.text.contains("inside"), "{}", users.text);
    let events = other.get("/account/events").await;
    assert_eq!(events.ok()["results"], 0, "{}", events.text);
    assert_eq!(admin.get("/account/users/inside").await.ok()["email"], "i@example.com");
}

#[tokio::test]
async fn deleting_a_user_logs_it_out_at_once() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", false, "*").await;
    bob.get("/profile").await.ok();
    s.api().delete("/account/users/bobby").await.ok();
    bob.get("/profile").await.expect_error(401, "-");
}
