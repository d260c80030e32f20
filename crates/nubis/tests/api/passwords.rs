//! Passwords and logins: the first start's link for `admin`, operators setting passwords, the
//! strength rules, throttling of wrong passwords, and the record of logins.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::signin_support::*;
use crate::support::*;

const PW: &str = "Quiet-River-77x";

/// One sign-in attempt through the authorization page; returns the status of the form post.
async fn attempt(s: &TestServer, cid: &str, username: &str, password: &str) -> u16 {
    let mut b = Browser::new();
    let page = b.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}", origin(s))).await;
    assert_eq!(page.status, 200, "{}", page.text);
    b.submit(&origin(s), &page, &[("username", username), ("password", password), ("action", "approve")]).await.status
}

async fn any_client(s: &TestServer) -> String {
    let c =
        s.api().post("/account/oauth-clients", json!({"label": "App", "redirect_uri": "http://127.0.0.1:9/cb"})).await;
    c.ok()["id"].as_str().unwrap().to_string()
}

fn admin_password_stdin(s: &TestServer, username: &str, password: &str) -> (bool, String) {
    let mut child = Command::new(BIN)
        .arg("admin")
        .arg("--data-dir")
        .arg(&s.dir)
        .args(["--database", &s.database, "--config"])
        .arg(s.dir.join("config.toml"))
        .args(["user", "password", "--username", username, "--password-stdin"])
        .env("NUBIS_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn the_first_start_prints_a_one_time_link_for_admin() {
    let mut s = TestServer::start().await;
    let line = s.startup.iter().find(|l| l.contains("set the password of 'admin'")).expect("a link line").clone();
    let link = &line[line.find("http://").unwrap()..];
    assert!(link.starts_with(&format!("{}/oauth/password?token=", origin(&s))), "{link}");
    let token = query_param(link, "token").unwrap();
    assert!(!s.log().contains(&token), "the link was logged");
    let mut b = Browser::new();
    let page = b.get(link).await;
    assert!(page.text.contains("admin"));
    let done = b.submit(&origin(&s), &page, &[("password", PW), ("confirm", PW)]).await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert_eq!(b.get(link).await.status, 400, "the link works once");
    let cid = any_client(&s).await;
    assert_eq!(attempt(&s, &cid, "admin", PW).await, 303);
    // Not on later starts.
    s.stop();
    s.restart();
    assert!(!s.startup.iter().any(|l| l.contains("set the password")), "{:?}", s.startup);
}

#[tokio::test]
async fn operators_set_and_reset_passwords_under_the_strength_rules() {
    let s = TestServer::start().await;
    s.api().post("/account/users", json!({"username": "olga", "email": "olga@example.com"})).await.ok();
    // Operators read the message with its link (unencoded).
    let (ok, out, _) = s.admin(&["outbox", "--bodies"]);
    assert!(ok && out.contains("to olga@example.com") && out.contains("/oauth/password?token="), "{out}");
    let cid = any_client(&s).await;
    // Without a password nobody signs in as olga.
    assert_eq!(attempt(&s, &cid, "olga", PW).await, 401);
    for weak in ["short1!A", "onlylowercase1", "xxOlga-Password-1", "aaaaaaaaaaaaaaaaaaaaa"] {
        let (ok, err) = admin_password_stdin(&s, "olga", weak);
        assert!(!ok && err.contains("password"), "{weak}: {err}");
    }
    let (ok, err) = admin_password_stdin(&s, "olga", PW);
    assert!(ok, "{err}");
    assert_eq!(attempt(&s, &cid, "olga", PW).await, 303);
    // A reset replaces it.
    let (ok, _) = admin_password_stdin(&s, "olga", "Another-Pass-88y");
    assert!(ok);
    assert_eq!(attempt(&s, &cid, "olga", PW).await, 401);
    assert_eq!(attempt(&s, &cid, "olga", "Another-Pass-88y").await, 303);
    // The set-password page applies the same rules and names the fields.
    let (_, out, _) = s.admin(&["user", "password", "--username", "olga"]);
    let path = &out.trim()[out.trim().find("/oauth/").unwrap()..];
    let mut b = Browser::new();
    let page = b.get(&format!("{}{path}", origin(&s))).await;
    let r = b.submit(&origin(&s), &page, &[("password", PW), ("confirm", "Different-1x!")]).await;
    assert_eq!(r.status, 400);
    assert!(r.text.contains("differ"), "{}", r.text);
}

#[tokio::test]
async fn set_password_links_expire() {
    let config = format!("{TEST_CONFIG}\n[signin]\npassword_link_hours = 0\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    s.api().post("/account/users", json!({"username": "pia", "email": "pia@example.com"})).await.ok();
    let link = outbox_link(&s, "pia@example.com").await;
    let r = Browser::new().get(&link).await;
    assert_eq!(r.status, 400, "{}", r.text);
}

#[tokio::test]
async fn wrong_passwords_are_throttled_per_user_and_per_address() {
    let config = format!("{TEST_CONFIG}\n[signin]\nthrottle_user_failures = 3\nthrottle_ip_failures = 6\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    for u in ["tom", "uma"] {
        s.api().post("/account/users", json!({"username": u, "email": format!("{u}@example.com")})).await.ok();
        admin_password_stdin(&s, u, PW);
    }
    let cid = any_client(&s).await;
    for _ in 0..3 {
        assert_eq!(attempt(&s, &cid, "tom", "Wrong-Pass-000").await, 401);
    }
    // Now even the right password is refused for tom, but uma still signs in.
    assert_eq!(attempt(&s, &cid, "tom", PW).await, 429);
    assert_eq!(attempt(&s, &cid, "uma", PW).await, 303);
    // Failures for other (even unknown) names from this address add up to the address limit.
    for name in ["nobody1", "nobody2"] {
        assert_eq!(attempt(&s, &cid, name, "Wrong-Pass-000").await, 401);
    }
    assert_eq!(attempt(&s, &cid, "tom", PW).await, 429);
    assert_eq!(attempt(&s, &cid, "uma", PW).await, 429, "the address is throttled after 6 failures");
    assert!(!s.log().contains(PW) && !s.log().contains("Wrong-Pass-000"), "a password was logged");
}

#[tokio::test]
async fn logins_are_recorded_and_listed() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "vic", "email": "vic@example.com", "restricted": true})).await.ok();
    admin_password_stdin(&s, "vic", PW);
    let cid = any_client(&s).await;
    assert_eq!(api.get("/account/users/vic").await.ok()["last_login"], json!(null));
    assert_eq!(attempt(&s, &cid, "vic", "Wrong-Pass-000").await, 401);
    assert_eq!(api.get("/account/users/vic").await.ok()["last_login"]["status"], "failed");
    assert_eq!(attempt(&s, &cid, "vic", PW).await, 303);
    let users = api.get("/account/users").await;
    let vic = users.ok()["data"].as_array().unwrap().iter().find(|u| u["username"] == "vic").unwrap().clone();
    assert_eq!(vic["last_login"]["status"], "successful");
    assert!(vic["last_login"]["login_datetime"].is_string());
    // The account's logins: successful ones only, with address and restricted flag.
    let l = api.get("/account/logins").await;
    assert_eq!(l.ok()["results"], 1, "{}", l.text);
    let login = l.body["data"][0].clone();
    assert_eq!(
        (login["username"].clone(), login["ip"].clone(), login["status"].clone(), login["restricted"].clone()),
        (json!("vic"), json!("127.0.0.1"), json!("successful"), json!(true))
    );
    assert!(login["datetime"].is_string());
    let id = login["id"].as_i64().unwrap();
    assert_eq!(api.get(&format!("/account/logins/{id}")).await.ok()["username"], "vic");
    let f = api.get_filtered("/account/logins", r#"{"username": "nobody"}"#).await;
    assert_eq!(f.ok()["results"], 0);
    // Restricted users may not list the account's; everyone sees their own.
    let vic = s.api_with(&s.token_for("vic", "*"));
    vic.get("/account/logins").await.status_is(403);
    vic.get(&format!("/account/logins/{id}")).await.status_is(403);
    let own = vic.get("/profile/logins").await;
    assert_eq!(own.ok()["results"], 1);
    assert_eq!(api.get("/profile/logins").await.ok()["results"], 0);
    // Another account does not see them.
    let other = other_account(&s);
    other.get(&format!("/account/logins/{id}")).await.status_is(404);
    assert_eq!(other.get("/account/logins").await.ok()["results"], 0);
}
