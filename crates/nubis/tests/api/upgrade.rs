//! Upgrades in place (issue 15): a database made by the schema of an earlier release, with data
//! in it, is served by this release after it migrates at start-up, on SQLite and PostgreSQL:
//! the old rows read as before, grants still apply, and new rows continue the old ids.

use serde_json::json;

use crate::backup::Target;
use crate::support::*;

const SQLITE_FIXTURE: &str = include_str!("../../../nubis-store/tests/fixtures/release-0006.sqlite.sql");
const POSTGRES_FIXTURE: &str = include_str!("../../../nubis-store/tests/fixtures/release-0006.postgres.sql");

/// A database of the release before migration 0010, loaded from its fixture.
async fn old_release_database(dir: &std::path::Path) -> Target {
    let target = Target::new(dir).await;
    match target.url.strip_prefix("sqlite://") {
        Some(path) => {
            let path = std::path::Path::new(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            rusqlite::Connection::open(path).unwrap().execute_batch(SQLITE_FIXTURE).unwrap();
        }
        None => {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&target.url).await.unwrap();
            sqlx::raw_sql(POSTGRES_FIXTURE).execute(&mut c).await.expect("load the PostgreSQL fixture");
            let _ = c.close().await;
        }
    }
    target
}

#[tokio::test]
async fn a_database_of_an_earlier_release_upgrades_in_place_and_serves_its_data() {
    let dir = std::env::temp_dir().join(unique("nubis-upgrade-"));
    std::fs::create_dir_all(&dir).unwrap();
    let target = old_release_database(&dir).await;
    let s = TestServer::start_with(Options { database: Some(target.url.clone()), ..Default::default() }).await;
    let api = s.api_with(&s.token_for("owner", "*"));

    let vpcs = api.get("/vpcs").await;
    assert_eq!(vpcs.ok()["results"], 3);
    let labels: Vec<&str> =
        vpcs.body["data"].as_array().unwrap().iter().map(|v| v["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["prod", "stage", "dev"]);
    let prod = api.get("/vpcs/1").await;
    assert_eq!(prod.ok()["description"], "production");
    let subnets: Vec<&str> =
        prod.body["subnets"].as_array().unwrap().iter().map(|s| s["ipv4"].as_str().unwrap()).collect();
    assert_eq!(subnets, ["10.0.0.0/24", "10.0.1.0/24"]);
    assert_eq!(api.get("/vpcs/4").await.status, 404, "another account's VPC");
    let fw = api.get("/networking/firewalls/1").await;
    assert_eq!((&fw.ok()["label"], &fw.body["tags"]), (&json!("edge"), &json!(["blue"])));
    assert!(event_actions(&api).await.contains(&"vpc_create".to_string()));

    // The restricted user's grant still applies.
    let limited = s.api_with(&s.token_for("limited", "*"));
    let theirs = limited.get("/vpcs").await;
    assert_eq!(theirs.ok()["results"], 1);
    assert_eq!(theirs.body["data"][0]["label"], "stage");

    // New rows continue after the old ones; the old rows still constrain them.
    let v = api.post("/vpcs", json!({"label": "new", "region": "us-east"})).await;
    assert_eq!(v.ok()["id"], 5);
    api.post("/vpcs/1/subnets", json!({"label": "cache", "ipv4": "10.0.0.0/25"})).await.expect_error(400, "ipv4");
    let sn = api.post("/vpcs/1/subnets", json!({"label": "cache", "ipv4": "10.0.2.0/24"})).await;
    assert_eq!(sn.ok()["id"], 4);
    api.post("/vpcs", json!({"label": "prod", "region": "us-east"})).await.expect_error(400, "label");
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
