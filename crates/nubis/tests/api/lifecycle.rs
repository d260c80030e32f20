//! Durability and shutdown: a stop and start keeps everything; an acknowledged write survives
//! `kill -9`; SIGTERM stops the server cleanly.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn stop_and_start_keeps_users_tokens_and_events() {
    let mut s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "keeper", "email": "k@example.com"})).await.ok();
    let secret =
        api.post("/profile/tokens", json!({"label": "kept"})).await.ok()["token"].as_str().unwrap().to_string();
    let events_before = api.get("/account/events").await.ok()["results"].clone();
    assert!(s.stop());
    s.restart();
    let api = s.api();
    api.get("/account/users/keeper").await.ok();
    s.api_with(&secret).get("/profile").await.ok();
    assert_eq!(api.get("/account/events").await.ok()["results"], events_before);
}

#[tokio::test]
async fn an_acknowledged_write_survives_kill_9() {
    let mut s = TestServer::start().await;
    let api = s.api();
    for i in 0..20 {
        api.post("/account/users", json!({"username": format!("durable{i}"), "email": "d@example.com"})).await.ok();
    }
    s.kill9();
    s.restart();
    assert_eq!(s.api().get("/account/users").await.ok()["results"], 21);
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly() {
    let mut s = TestServer::start().await;
    s.api().post("/account/users", json!({"username": "last", "email": "l@example.com"})).await.ok();
    let started = std::time::Instant::now();
    assert!(s.stop(), "nubis exits with success after SIGTERM: {}", s.log());
    assert!(started.elapsed().as_secs() < 10);
    if !on_postgres() {
        // A clean close checkpoints the write-ahead log into the database file.
        let wal = s.dir.join("nubis.db-wal");
        assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0, "WAL left behind");
    }
    s.restart();
    s.api().get("/account/users/last").await.ok();
}
