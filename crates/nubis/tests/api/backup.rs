//! `nubis admin backup` and `nubis admin restore` (issue 15): a backup taken while the server
//! runs and writes restores into a fresh database, where a new server sees exactly the state of
//! the backup; a restore into the database a running server uses is refused.
//! On PostgreSQL these need `pg_dump`/`pg_restore` (`$PGBIN` or `PATH`); without them the tests
//! say so and stop (in CI's PostgreSQL run they fail).

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::*;
use crate::vpcs::create_vpc;

/// Runs `nubis admin ARGS` on the database `url`; returns (success, stdout, stderr).
fn admin_on(url: &str, dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .arg("admin")
        .arg("--data-dir")
        .arg(dir)
        .args(["--database", url])
        .args(args)
        .env("NUBIS_LOG", "warn")
        .output()
        .expect("run nubis admin");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// `pg_dump` as `nubis admin backup` would find it ($PGBIN, else PATH).
fn pg_tools_present() -> bool {
    let dump = std::env::var("PGBIN")
        .ok()
        .map(|d| Path::new(&d).join("pg_dump"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| "pg_dump".into());
    Command::new(dump).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// An empty database beside the test server's (a SQLite file in `dir`, or a new PostgreSQL
/// database dropped with the guard).
pub struct Target {
    pub url: String,
    pg: Option<(String, String)>,
}

impl Target {
    pub async fn new(dir: &Path) -> Target {
        match std::env::var("TEST_DATABASE_URL") {
            Ok(base) if !base.is_empty() => {
                use sqlx::Connection;
                let name = unique("nubis_restore");
                let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut c).await.unwrap();
                let _ = c.close().await;
                let server = base.rsplit_once('/').unwrap().0;
                Target { url: format!("{server}/{name}"), pg: Some((base, name)) }
            }
            _ => Target { url: format!("sqlite://{}", dir.join("restored").join("nubis.db").display()), pg: None },
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let Some((base, name)) = self.pg.take() else { return };
        let _ = std::thread::spawn(move || {
            use sqlx::Connection;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(mut c) = sqlx::PgConnection::connect(&base).await {
                    let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut c).await;
                }
            });
        })
        .join();
    }
}

fn skip_without_pg_tools() -> bool {
    if on_postgres() && !pg_tools_present() {
        assert!(!crate::db_outage::postgres_required(), "pg_dump is missing, and CI requires the PostgreSQL half");
        eprintln!("SKIPPED on PostgreSQL: pg_dump is neither in $PGBIN nor on PATH");
        return true;
    }
    false
}

#[tokio::test]
async fn a_backup_of_a_running_server_restores_into_a_fresh_database() {
    if skip_without_pg_tools() {
        return;
    }
    let s = TestServer::start().await;
    let api = s.api();
    let kept = create_vpc(&api, "kept", &[("kept-net", "10.1.0.0/24")]).await;
    let renamed = create_vpc(&api, "renamed-later", &[]).await;
    // A writer goes on creating VPCs while the backup is taken.
    let writer = {
        let api = api.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                api.post("/vpcs", json!({"label": format!("during-{i}"), "region": "us-east"})).await.ok();
            }
        })
    };
    let file = s.dir.join("nubis.backup");
    let file_s = file.to_str().unwrap();
    let (ok, out, err) = s.admin(&["backup", file_s]);
    assert!(ok, "backup failed: {out}{err}");
    writer.await.unwrap();

    // Changes after the backup are not in it.
    api.put(&format!("/vpcs/{}", kept["id"]), json!({"label": "kept-renamed"})).await.ok();
    api.delete(&format!("/vpcs/{}", renamed["id"])).await.ok();
    create_vpc(&api, "after-backup", &[]).await;

    let target = Target::new(&s.dir).await;
    let (ok, out, err) = admin_on(&target.url, &s.dir, &["restore", file_s]);
    assert!(ok, "restore failed: {out}{err}");
    let restored = TestServer::start_with(Options { database: Some(target.url.clone()), ..Default::default() }).await;
    // The restored database holds the original owner and its token.
    let rapi = restored.api_with(&s.token);
    let v = rapi.get(&format!("/vpcs/{}", kept["id"])).await;
    assert_eq!(v.ok()["label"], "kept", "the state of the backup, not of later changes");
    assert_eq!(v.body["subnets"][0]["ipv4"], "10.1.0.0/24");
    rapi.get(&format!("/vpcs/{}", renamed["id"])).await.ok();
    let labels: Vec<String> = rapi.get("/vpcs?page_size=500").await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap().to_string())
        .collect();
    assert!(!labels.iter().any(|l| l == "after-backup" || l == "kept-renamed"), "{labels:?}");
    // A consistent snapshot: every VPC copied came with the event written with it.
    let unmatched = db_scalar(
        &restored,
        "SELECT COUNT(*) FROM vpcs v WHERE (SELECT COUNT(*) FROM events e \
         WHERE e.action = 'vpc_create' AND e.entity_id = v.id) <> 1",
    )
    .await;
    assert_eq!(unmatched, 0);
    // The restored server works on: it takes writes.
    create_vpc(&rapi, "after-restore", &[]).await;
}

#[tokio::test]
async fn a_restore_into_the_database_of_a_running_server_is_refused() {
    if skip_without_pg_tools() {
        return;
    }
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "before", &[]).await;
    let file = s.dir.join("nubis.backup");
    let (ok, _, err) = s.admin(&["backup", file.to_str().unwrap()]);
    assert!(ok, "{err}");
    api.put(&format!("/vpcs/{}", v["id"]), json!({"label": "after"})).await.ok();
    let (ok, _, err) = s.admin(&["restore", file.to_str().unwrap()]);
    assert!(!ok, "a restore under a running server must be refused");
    assert!(err.contains("in use"), "{err}");
    // Nothing changed.
    assert_eq!(api.get(&format!("/vpcs/{}", v["id"])).await.ok()["label"], "after");
}
