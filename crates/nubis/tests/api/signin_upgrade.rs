//! A database of the release before the sign-in hardening (migration 0018), with the console's
//! client registered in the first account and OAuth tokens in use, upgrades in place on SQLite
//! and PostgreSQL: the console's client leaves the account (it is a system client now), and
//! what was issued before keeps working under the new rules.

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::backup::Target;
use crate::signin_support::*;
use crate::support::*;

const SQLITE_FIXTURE: &str = include_str!("../../../nubis-store/tests/fixtures/release-0006.sqlite.sql");
const POSTGRES_FIXTURE: &str = include_str!("../../../nubis-store/tests/fixtures/release-0006.postgres.sql");
const MIGRATIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../nubis-store/migrations");

fn sha(s: &str) -> String {
    Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The migrations after the fixture's (0006) and before 0018: (version, name, SQL).
fn migrations_7_to_17(engine: &str) -> Vec<(i64, String, String)> {
    let mut files: Vec<_> =
        std::fs::read_dir(format!("{MIGRATIONS}/{engine}")).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            let (n, name) = stem.split_once('_')?;
            let n: i64 = n.parse().ok()?;
            (7..18).contains(&n).then(|| (n, name.to_string(), std::fs::read_to_string(&p).unwrap()))
        })
        .collect()
}

/// What a server of the earlier release had written: the console's client in account 1 with a
/// token and a refresh token, an application's client with the same, and a code in flight.
fn old_rows(app_secret: &str) -> String {
    let far = "2099-01-01T00:00:00";
    let now = "2026-11-22T08:00:00";
    format!(
        "INSERT INTO oauth_clients (id, account_id, label, redirect_uri, public, status, secret_hash, created) VALUES \
         ('nubis-console', 1, 'nubis console', 'http://127.0.0.1:1/callback', TRUE, 'active', '{unknown}', '{now}'), \
         ('oldapp', 1, 'Old App', 'https://old.example/cb', FALSE, 'active', '{app}', '{now}');
         INSERT INTO tokens (id, user_id, label, scopes, secret_hash, kind, created, expiry, client_id) VALUES \
         (100, 1, 'nubis console', '*', '{ca}', 'oauth', '{now}', '{far}', 'nubis-console'), \
         (101, 1, 'Old App', '*', '{aa}', 'oauth', '{now}', '{far}', 'oldapp');
         INSERT INTO oauth_refresh_tokens (token_hash, client_id, user_id, scopes, access_token_id, expiry) VALUES \
         ('{cr}', 'nubis-console', 1, '*', 100, '{far}'), ('{ar}', 'oldapp', 1, '*', 101, '{far}');
         INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, code_challenge, expiry) VALUES \
         ('{code}', 'oldapp', 1, '', '*', NULL, '{far}');",
        unknown = sha("nobody knows"),
        app = sha(app_secret),
        ca = sha("console-access"),
        aa = sha("app-access"),
        cr = sha("console-refresh"),
        ar = sha("app-refresh"),
        code = sha("old-code"),
    )
}

async fn release_17_database(dir: &std::path::Path, app_secret: &str) -> Target {
    let target = Target::new(dir).await;
    match target.url.strip_prefix("sqlite://") {
        Some(path) => {
            let path = std::path::Path::new(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let c = rusqlite::Connection::open(path).unwrap();
            c.execute_batch(SQLITE_FIXTURE).unwrap();
            for (n, name, sql) in migrations_7_to_17("sqlite") {
                c.execute_batch(&sql).unwrap_or_else(|e| panic!("migration {n}: {e}"));
                c.execute("INSERT INTO nubis_migrations VALUES (?1, ?2, '2026-11-22T08:00:00')", (n, name)).unwrap();
            }
            c.execute_batch(&old_rows(app_secret)).unwrap();
        }
        None => {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&target.url).await.unwrap();
            sqlx::raw_sql(POSTGRES_FIXTURE).execute(&mut c).await.expect("load the PostgreSQL fixture");
            // The dump empties the search path of its session: go on in a fresh one.
            let _ = c.close().await;
            let mut c = sqlx::PgConnection::connect(&target.url).await.unwrap();
            for (n, name, sql) in migrations_7_to_17("postgres") {
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut c).await.unwrap_or_else(|e| panic!("{n}: {e}"));
                sqlx::query("INSERT INTO nubis_migrations VALUES ($1, $2, '2026-11-22T08:00:00')")
                    .bind(n)
                    .bind(name)
                    .execute(&mut c)
                    .await
                    .unwrap();
            }
            sqlx::raw_sql(sqlx::AssertSqlSafe(old_rows(app_secret))).execute(&mut c).await.unwrap();
            let _ = c.close().await;
        }
    }
    target
}

#[tokio::test]
async fn the_console_client_of_an_earlier_release_leaves_its_account_on_upgrade() {
    let dir = std::env::temp_dir().join(unique("nubis-signin-upgrade-"));
    std::fs::create_dir_all(&dir).unwrap();
    let app_secret = "old-app-secret";
    let target = release_17_database(&dir, app_secret).await;
    let s = TestServer::start_with(Options { database: Some(target.url.clone()), ..Default::default() }).await;
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM nubis_migrations WHERE version = 18").await, 1);
    let api = s.api_with(&s.token_for("owner", "*"));

    // The console's client is no longer the account's.
    let list = api.get("/account/oauth-clients").await;
    assert_eq!(list.ok()["results"], 1, "{}", list.text);
    assert_eq!(list.body["data"][0]["id"], "oldapp");
    api.get("/account/oauth-clients/nubis-console").await.status_is(404);
    api.put("/account/oauth-clients/nubis-console", json!({"redirect_uri": "https://evil.example/cb"}))
        .await
        .status_is(404);

    // What was issued to it goes on working, under the system client.
    s.api_with("console-access").get("/profile").await.ok();
    let (st, t) = token_request(
        &s,
        None,
        &[("grant_type", "refresh_token"), ("refresh_token", "console-refresh"), ("client_id", "nubis-console")],
    )
    .await;
    assert_eq!(st, 200, "{t}");

    // The application's tokens work, and now belong to a family: reusing the rotated refresh
    // token ends them all.
    s.api_with("app-access").get("/profile").await.ok();
    let basic = Some(("oldapp", app_secret));
    let (st, t) = token_request(&s, basic, &[("grant_type", "refresh_token"), ("refresh_token", "app-refresh")]).await;
    assert_eq!(st, 200, "{t}");
    let fresh = s.api_with(t["access_token"].as_str().unwrap());
    fresh.get("/profile").await.ok();
    let (st, _) = token_request(&s, basic, &[("grant_type", "refresh_token"), ("refresh_token", "app-refresh")]).await;
    assert_eq!(st, 400);
    fresh.get("/profile").await.status_is(401);
    s.api_with("app-access").get("/profile").await.status_is(401);
    // Codes in flight were dropped (they live minutes).
    let (st, _) = token_request(&s, basic, &[("grant_type", "authorization_code"), ("code", "old-code")]).await;
    assert_eq!(st, 400);
    drop(s);
    drop(target);
    let _ = std::fs::remove_dir_all(&dir);
}
