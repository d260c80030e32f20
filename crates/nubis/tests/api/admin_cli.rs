//! `nubis serve` bootstrap and the `nubis admin` commands.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn first_start_writes_a_random_admin_token_once_with_mode_0600() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(unique("nubis-boot-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), TEST_CONFIG).unwrap();
    let start = || {
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&dir)
            .arg("--config")
            .arg(dir.join("config.toml"))
            .env("NUBIS_LOG", "warn")
            .env_remove("NUBIS_DATABASE")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut printed = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            let done = line.starts_with("nubis: listening on http://");
            printed.push(line);
            if done {
                break;
            }
        }
        (child, printed)
    };
    let (mut first, printed) = start();
    let file = std::fs::read_to_string(dir.join("admin-token")).unwrap().trim().to_string();
    assert_eq!(file.len(), 64);
    assert!(printed.iter().any(|l| l == &file), "the token is printed once: {printed:?}");
    let mode = std::fs::metadata(dir.join("admin-token")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let addr = printed.last().unwrap().trim_start_matches("nubis: listening on ").to_string();
    let api = Api::new(&addr, &file);
    assert_eq!(api.get("/profile").await.ok()["username"], "admin");
    first.kill().unwrap();
    first.wait().unwrap();

    let (mut second, printed) = start();
    assert!(!printed.iter().any(|l| l.len() == 64), "a later start creates no token: {printed:?}");
    assert_eq!(std::fs::read_to_string(dir.join("admin-token")).unwrap().trim(), file);
    second.kill().unwrap();
    second.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_bootstrap_token_flag_sets_the_owners_token() {
    let s = TestServer::start().await;
    assert_eq!(s.api().get("/profile").await.ok()["username"], "admin");
    assert!(!s.dir.join("admin-token").exists(), "no file when the token was given");
}

/// Runs `nubis serve` on a fresh data directory with extra flags, expecting it to refuse to
/// start; returns its stderr.
fn serve_refused(flags: &[&str]) -> String {
    let dir = std::env::temp_dir().join(unique("nubis-refuse-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), TEST_CONFIG).unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .arg("--config")
        .arg(dir.join("config.toml"))
        .args(flags)
        .env("NUBIS_LOG", "error")
        .env_remove("NUBIS_DATABASE")
        .env_remove("NUBIS_BOOTSTRAP_TOKEN")
        .env_remove("NUBIS_OPERATOR_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A server that starts instead of refusing is stopped, and the test fails on its status.
    let mut status = None;
    for _ in 0..1200 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if status.is_none() {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.is_some_and(|s| !s.success()), "nubis serve {flags:?} started instead of refusing");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_refused_flag_is_one_line_naming_the_flag() {
    assert_eq!(
        serve_refused(&["--bootstrap-token", "too-short"]),
        "--bootstrap-token: must be at least 16 characters\n"
    );
    assert_eq!(
        serve_refused(&["--bootstrap-token", "a-long-enough-bootstrap-token", "--operator-token", "short"]),
        "--operator-token: must be 16-512 characters\n"
    );
}

#[tokio::test]
async fn operators_create_and_list_accounts_users_and_tokens() {
    let s = TestServer::start().await;
    let (ok, out, err) =
        s.admin(&["account", "create", "--company", "Acme", "--username", "acme-root", "--email", "r@acme.example"]);
    assert!(ok, "{err}");
    let euuid = out.split_whitespace().nth(1).unwrap().to_string();
    let (ok, out, _) = s.admin(&["account", "list"]);
    assert!(ok && out.contains(&euuid) && out.contains("Acme"), "{out}");
    let (ok, _, err) = s.admin(&[
        "user",
        "create",
        "--account",
        &euuid,
        "--username",
        "acme-dev",
        "--email",
        "d@acme.example",
        "--restricted",
    ]);
    assert!(ok, "{err}");
    let (ok, out, _) = s.admin(&["user", "list"]);
    assert!(ok && out.contains("acme-dev") && out.contains("acme-root"), "{out}");
    let (ok, out, _) =
        s.admin(&["token", "create", "--username", "acme-dev", "--scopes", "events:read_only", "--expiry-days", "3"]);
    assert!(ok);
    let dev = s.api_with(out.trim());
    let p = dev.get("/profile").await;
    assert_eq!(p.ok()["username"], "acme-dev");
    assert_eq!(p.body["restricted"], true);
    assert_eq!(p.header("x-oauth-scopes"), Some("events:read_only"));
    let tokens = dev.get("/profile/tokens").await;
    tokens.expect_error(403, "-");
    let (ok, _, err) = s.admin(&["token", "create", "--username", "nobody-here"]);
    assert!(!ok && err.contains("No such user"), "{err}");
    let (ok, _, _) =
        s.admin(&["account", "create", "--company", "X", "--username", "acme-dev", "--email", "x@example.com"]);
    assert!(!ok, "usernames are unique across accounts");
}

#[tokio::test]
async fn operators_mark_instances_for_live_migration() {
    let s = TestServer::start().await;
    let r =
        s.api().post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "booted": false})).await;
    let id = r.ok()["id"].as_i64().unwrap().to_string();
    let sql = format!("SELECT COUNT(*) FROM instances WHERE id = {id} AND live_migration");
    assert_eq!(db_scalar(&s, &sql).await, 0);
    let (ok, out, err) = s.admin(&["instance", "live-migration", &id, "--on"]);
    assert!(ok && out.contains("live migration on"), "{out}{err}");
    assert_eq!(db_scalar(&s, &sql).await, 1);
    let (ok, _, _) = s.admin(&["instance", "live-migration", &id, "--off"]);
    assert!(ok);
    assert_eq!(db_scalar(&s, &sql).await, 0);
    let (ok, _, _) = s.admin(&["instance", "live-migration", &id]);
    assert!(!ok, "--on or --off is required");
    let (ok, _, _) = s.admin(&["instance", "live-migration", &id, "--on", "--off"]);
    assert!(!ok, "not both");
    let (ok, _, err) = s.admin(&["instance", "live-migration", "424242", "--on"]);
    assert!(!ok && err.contains("424242"), "{err}");
}
