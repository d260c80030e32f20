//! Events (spec 4.6): written with the change, visible by grants, read and seen per user.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn events_record_changes_newest_first_with_their_entity() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "evie", "email": "e@example.com"})).await.ok();
    let r = api.get("/account/events").await;
    let e = &r.ok()["data"][0];
    assert_eq!(e["action"], "user_create");
    assert_eq!(e["entity"]["type"], "user");
    assert_eq!(e["entity"]["label"], "evie");
    assert_eq!(e["entity"]["url"], "/v4/account/users/evie");
    assert_eq!(e["username"], "admin");
    assert_eq!(e["status"], "finished");
    for f in [
        "id",
        "created",
        "read",
        "seen",
        "percent_complete",
        "duration",
        "rate",
        "time_remaining",
        "message",
        "secondary_entity",
    ] {
        assert!(e.get(f).is_some(), "event lacks {f}: {e}");
    }
    let id = e["id"].as_i64().unwrap();
    assert_eq!(api.get(&format!("/account/events/{id}")).await.ok()["action"], "user_create");
    api.get("/account/events/999999").await.expect_error(404, "-");
}

#[tokio::test]
async fn read_is_per_event_and_per_user() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, ann) = user_with_token(&s, "annie", false, "*").await;
    let id = api.get("/account/events").await.ok()["data"][0]["id"].as_i64().unwrap();
    api.post_empty(&format!("/account/events/{id}/read")).await.ok();
    assert_eq!(api.get(&format!("/account/events/{id}")).await.ok()["read"], true);
    assert_eq!(ann.get(&format!("/account/events/{id}")).await.ok()["read"], false, "read is per user");
    let r = api.get_filtered("/account/events", r#"{"read": true}"#).await;
    assert_eq!(r.ok()["results"], 1);
}

#[tokio::test]
async fn seen_marks_every_event_up_to_and_including_the_id() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..4 {
        api.post("/profile/tokens", json!({"label": format!("t{i}")})).await.ok();
    }
    let ids: Vec<i64> = api.get("/account/events").await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    let third = ids[2];
    api.post_empty(&format!("/account/events/{third}/seen")).await.ok();
    let events = api.get("/account/events").await;
    for e in events.ok()["data"].as_array().unwrap() {
        let id = e["id"].as_i64().unwrap();
        assert_eq!(e["seen"], id <= third, "event {id}");
    }
    let unseen = ids.iter().filter(|i| **i > third).count();
    assert_eq!(unseen, 2);
    let r = api.get_filtered("/account/events", r#"{"seen": false}"#).await;
    assert_eq!(r.ok()["results"], unseen);
}

#[tokio::test]
async fn events_filter_by_action_and_entity() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "fil", "email": "f@example.com"})).await.ok();
    api.post("/profile/tokens", json!({"label": "x"})).await.ok();
    let r = api.get_filtered("/account/events", r#"{"action": "user_create"}"#).await;
    assert_eq!(r.ok()["results"], 1);
    let r = api.get_filtered("/account/events", r#"{"entity.type": "token"}"#).await;
    assert_eq!(r.ok()["results"], 1);
    let r = api
        .get_filtered("/account/events", r#"{"action": {"+contains": "_create"}, "+order_by": "id", "+order": "asc"}"#)
        .await;
    let actions: Vec<&str> = r.ok()["data"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["user_create", "token_create"]);
}

#[tokio::test]
async fn a_restricted_user_sees_only_events_about_itself() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", true, "*").await;
    s.api().post("/account/users", json!({"username": "someone", "email": "s@example.com"})).await.ok();
    bob.post("/profile/tokens", json!({"label": "bobs"})).await.ok();
    let r = bob.get("/account/events").await;
    let labels: Vec<&str> =
        r.ok()["data"].as_array().unwrap().iter().map(|e| e["entity"]["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"bobs"), "{labels:?}");
    assert!(labels.contains(&"bobby"), "its own user_create: {labels:?}");
    assert!(!labels.contains(&"someone"), "{labels:?}");
    let hidden = s.api().get_filtered("/account/events", r#"{"entity.label": "x"}"#).await;
    hidden.expect_error(400, "X-Filter");
}
