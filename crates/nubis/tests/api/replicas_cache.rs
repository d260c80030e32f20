//! The credential cache of API replicas on one PostgreSQL (issue 15: "If a cache remains, it is
//! invalidated by what a write touched, never by every write, and it works across replicas").
//! Each replica keeps credentials and grants it has read while it listens to the change notices
//! that the database sends at every commit touching their tables; these tests show that a token
//! revoked or a user restricted through one replica, or by SQL from outside nubis, stops working
//! on the other, that the replica that made a change never serves what it replaced, and that a
//! replica that loses its notices stops trusting what it kept.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

async fn replicas() -> Option<(TestServer, TestServer)> {
    if !on_postgres() {
        eprintln!("skipped: several replicas share one database on PostgreSQL only (set TEST_DATABASE_URL)");
        return None;
    }
    let a = TestServer::start().await;
    let b = TestServer::start_with(Options { database: Some(a.database.clone()), ..Default::default() }).await;
    Some((a, b))
}

/// A new personal access token of the owner: (id, secret).
async fn new_token(api: &Api, label: &str) -> (i64, String) {
    let r = api.post("/profile/tokens", json!({"label": label, "scopes": "*"})).await;
    let v = r.status_is(200).ok();
    (v["id"].as_i64().unwrap(), v["token"].as_str().unwrap().to_string())
}

/// Runs SQL on the replicas' database from outside nubis (as an operator's psql would).
async fn sql(server: &TestServer, statement: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&server.database).await.expect("connect to the test database");
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_string())).execute(&mut conn).await.expect("statement");
    let _ = conn.close().await;
}

/// Waits until `api` answers `GET path` with `status`; returns how long that took.
async fn until_status(api: &Api, path: &str, status: u16, what: &str) -> Duration {
    let start = Instant::now();
    eventually(5, what, || async { (api.get(path).await.status == status).then_some(()) }).await;
    start.elapsed()
}

#[tokio::test]
async fn a_token_revoked_through_one_replica_stops_working_on_the_other() {
    let Some((a, b)) = replicas().await else { return };
    let (id, secret) = new_token(&a.api(), "cached-elsewhere").await;
    let on_b = b.api_with(&secret);
    // B reads the credential and keeps it.
    on_b.get("/profile").await.status_is(200);
    on_b.get("/profile").await.status_is(200);
    a.api().delete(&format!("/profile/tokens/{id}")).await.status_is(200);
    let took = until_status(&on_b, "/profile", 401, "the revoked token refused by the other replica").await;
    eprintln!("the other replica refused the revoked token after {took:?}");
    // And stays refused.
    on_b.get("/profile").await.status_is(401);
}

#[tokio::test]
async fn the_replica_that_revokes_a_token_refuses_it_at_once() {
    let Some((a, b)) = replicas().await else { return };
    // The owner's token (the database was first made by A) sent to B.
    let owner_on_b = b.api_with(&a.token);
    let (id, secret) = new_token(&owner_on_b, "cached-here").await;
    let on_b = b.api_with(&secret);
    on_b.get("/profile").await.status_is(200);
    on_b.get("/profile").await.status_is(200);
    owner_on_b.delete(&format!("/profile/tokens/{id}")).await.status_is(200);
    // No waiting: the writer forgets what its own transaction touched before it answers. (On one
    // quiet host the notice itself usually arrives first too; the writer does not rely on it.)
    on_b.get("/profile").await.status_is(401);
}

#[tokio::test]
async fn a_user_restricted_through_one_replica_loses_access_on_the_other() {
    let Some((a, b)) = replicas().await else { return };
    let name = unique("cacheduser");
    let (_, _) = user_with_token(&a, &name, false, "*").await;
    let on_b = b.api_with(&a.token_for(&name, "*"));
    on_b.get("/account/users").await.status_is(200);
    on_b.get("/account/users").await.status_is(200);
    a.api().put(&format!("/account/users/{name}"), json!({"restricted": true})).await.status_is(200);
    until_status(&on_b, "/account/users", 403, "the restricted user refused by the other replica").await;
}

#[tokio::test]
async fn a_token_deleted_by_sql_from_outside_nubis_stops_working() {
    let Some((a, b)) = replicas().await else { return };
    let (id, secret) = new_token(&a.api(), "deleted-by-sql").await;
    let on_b = b.api_with(&secret);
    on_b.get("/profile").await.status_is(200);
    on_b.get("/profile").await.status_is(200);
    sql(&a, &format!("DELETE FROM tokens WHERE id = {id}")).await;
    until_status(&on_b, "/profile", 401, "a token deleted by SQL refused").await;
}

#[tokio::test]
async fn a_replica_that_loses_its_notices_stops_trusting_what_it_kept() {
    let Some((a, b)) = replicas().await else { return };
    let (id, secret) = new_token(&a.api(), "notices-lost").await;
    let on_b = b.api_with(&secret);
    on_b.get("/profile").await.status_is(200);
    on_b.get("/profile").await.status_is(200);
    // Cut every listening connection of this database (both replicas', and no other test's
    // servers', which share the cluster), then delete the token while the notices cannot be
    // heard: the deletion's notice is lost for good.
    sql(
        &a,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    )
    .await;
    sql(&a, &format!("DELETE FROM tokens WHERE id = {id}")).await;
    until_status(&on_b, "/profile", 401, "the token refused after the notices were lost").await;
    // The replica listens again and its cache serves again: a new token works and is revoked
    // as before.
    let (id2, secret2) = new_token(&a.api(), "notices-back").await;
    let on_b2 = b.api_with(&secret2);
    on_b2.get("/profile").await.status_is(200);
    a.api().delete(&format!("/profile/tokens/{id2}")).await.status_is(200);
    until_status(&on_b2, "/profile", 401, "a token revoked after the notices came back").await;
}

#[tokio::test]
async fn a_vpc_changed_through_one_replica_is_read_changed_on_the_other() {
    let Some((a, b)) = replicas().await else { return };
    let (on_a, on_b) = (a.api(), b.api_with(&a.token));
    let label = unique("cached-vpc");
    let id = on_a.post("/vpcs", json!({"label": label, "region": "us-east"})).await.status_is(200).ok()["id"]
        .as_i64()
        .unwrap();
    let label_on_b = |filter: bool| {
        let on_b = on_b.clone();
        async move {
            if filter {
                let r = on_b.get("/vpcs?page_size=500").await;
                let v = r.status_is(200).ok().clone();
                v["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["id"] == id)
                    .map(|x| x["label"].as_str().unwrap().to_string())
            } else {
                let r = on_b.get(&format!("/vpcs/{id}")).await;
                (r.status == 200).then(|| r.ok()["label"].as_str().unwrap().to_string())
            }
        }
    };
    // B reads the record and the page, and keeps them.
    for _ in 0..2 {
        assert_eq!(label_on_b(false).await.as_deref(), Some(label.as_str()));
        assert_eq!(label_on_b(true).await.as_deref(), Some(label.as_str()));
    }
    let renamed = format!("{label}-2");
    on_a.put(&format!("/vpcs/{id}"), json!({"label": renamed})).await.status_is(200);
    let start = Instant::now();
    eventually(5, "the renamed VPC on the other replica", || async {
        (label_on_b(false).await.as_deref() == Some(renamed.as_str())).then_some(())
    })
    .await;
    eventually(5, "the renamed VPC in the other replica's page", || async {
        (label_on_b(true).await.as_deref() == Some(renamed.as_str())).then_some(())
    })
    .await;
    eprintln!("the other replica read the renamed VPC after {:?}", start.elapsed());
    // The replica that writes reads its own write at once.
    let third = format!("{label}-3");
    on_b.put(&format!("/vpcs/{id}"), json!({"label": third})).await.status_is(200);
    assert_eq!(label_on_b(false).await.as_deref(), Some(third.as_str()));
    assert_eq!(label_on_b(true).await.as_deref(), Some(third.as_str()));
    // Deleted through A: gone from B.
    on_a.delete(&format!("/vpcs/{id}")).await.status_is(200);
    eventually(5, "the deleted VPC gone from the other replica", || async {
        (label_on_b(false).await.is_none() && label_on_b(true).await.is_none()).then_some(())
    })
    .await;
}
