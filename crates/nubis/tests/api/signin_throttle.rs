//! Wrong-password throttling under attack: simultaneous attempts are counted before their
//! password is checked (at most the limit get checked, on SQLite and PostgreSQL alike), and the
//! limits are per (user, address) and per address, so that failures from one address never lock
//! the user out of another.

use std::net::IpAddr;

use serde_json::json;

use crate::signin_support::*;
use crate::support::*;

const PW: &str = "Silver-Harbor-64m";

async fn client_id(s: &TestServer) -> String {
    let c =
        s.api().post("/account/oauth-clients", json!({"label": "App", "redirect_uri": "http://127.0.0.1:9/cb"})).await;
    c.ok()["id"].as_str().unwrap().to_string()
}

/// The sign-in page of an authorization request, in a browser of its own.
async fn page_in(s: &TestServer, b: &mut Browser, cid: &str) -> Page {
    let page = b.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}", origin(s))).await;
    assert_eq!(page.status, 200, "{}", page.text);
    page
}

/// Posts `n` sign-in forms at once (each browser has loaded its page first); returns the
/// statuses.
async fn at_once(s: &TestServer, cid: &str, attempts: &[(&str, &str)]) -> Vec<u16> {
    let mut ready = Vec::new();
    for (user, password) in attempts {
        let mut b = Browser::new();
        let page = page_in(s, &mut b, cid).await;
        ready.push((b, page, *user, *password));
    }
    let posts = ready.iter_mut().map(|(b, page, user, password)| async move {
        b.submit(&origin(s), page, &[("username", user), ("password", password), ("action", "approve")]).await.status
    });
    futures_util::future::join_all(posts).await
}

fn count(statuses: &[u16], status: u16) -> usize {
    statuses.iter().filter(|s| **s == status).count()
}

#[tokio::test]
async fn simultaneous_wrong_passwords_are_counted_before_they_are_checked() {
    let config = format!("{TEST_CONFIG}\n[signin]\nthrottle_user_failures = 4\nthrottle_ip_failures = 7\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    s.api().post("/account/users", json!({"username": "tia", "email": "tia@example.com"})).await.ok();
    set_password(&s, "tia", PW).await;
    let cid = client_id(&s).await;
    // 24 wrong passwords for one user from one address, all at once: at most 4 are checked.
    let statuses = at_once(&s, &cid, &[("tia", "Wrong-Pass-000"); 24]).await;
    assert!(statuses.iter().all(|st| *st == 401 || *st == 429), "{statuses:?}");
    assert!(count(&statuses, 401) <= 4, "{statuses:?}");
    assert!(count(&statuses, 401) >= 1, "{statuses:?}");
    // The address limit (7) holds the same way across usernames: its budget is already spent.
    let names: Vec<String> = (0..12).map(|i| format!("nobody{i}")).collect();
    let attempts: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "Wrong-Pass-000")).collect();
    let statuses = at_once(&s, &cid, &attempts).await;
    assert_eq!(count(&statuses, 429), 12, "{statuses:?}");
}

#[tokio::test]
async fn simultaneous_wrong_passwords_for_many_names_meet_the_address_limit() {
    let config = format!("{TEST_CONFIG}\n[signin]\nthrottle_user_failures = 100\nthrottle_ip_failures = 5\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let cid = client_id(&s).await;
    // Real users (whose wrong passwords take a real check) and unknown names, five tries each.
    let mut names: Vec<String> = Vec::new();
    for i in 0..3 {
        let u = format!("user{i}");
        s.api().post("/account/users", json!({"username": u, "email": format!("{u}@example.com")})).await.ok();
        set_password(&s, &u, PW).await;
        names.extend(std::iter::repeat_n(u, 5));
    }
    names.extend((0..5).map(|i| format!("ghost{i}")));
    let attempts: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "Wrong-Pass-000")).collect();
    let statuses = at_once(&s, &cid, &attempts).await;
    assert!(statuses.iter().all(|st| *st == 401 || *st == 429), "{statuses:?}");
    assert!(count(&statuses, 401) <= 5 && count(&statuses, 401) >= 1, "{statuses:?}");
}

/// Failures from one address throttle that address (and the user from it), never the user
/// signing in from elsewhere.
#[tokio::test]
async fn failures_from_one_address_do_not_lock_the_user_out_of_another() {
    let config = format!("{TEST_CONFIG}\n[signin]\nthrottle_user_failures = 3\nthrottle_ip_failures = 50\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    s.api().post("/account/users", json!({"username": "lou", "email": "lou@example.com"})).await.ok();
    set_password(&s, "lou", PW).await;
    let cid = client_id(&s).await;
    let attacker: IpAddr = "127.0.0.1".parse().unwrap();
    let owner: IpAddr = "127.0.0.2".parse().unwrap();
    let attempt = |ip: IpAddr, password: &'static str| {
        let (s, cid) = (&s, cid.clone());
        async move {
            let mut b = Browser::bound_to(ip);
            let page = page_in(s, &mut b, &cid).await;
            b.submit(&origin(s), &page, &[("username", "lou"), ("password", password), ("action", "approve")])
                .await
                .status
        }
    };
    for _ in 0..3 {
        assert_eq!(attempt(attacker, "Wrong-Pass-000").await, 401);
    }
    assert_eq!(attempt(attacker, PW).await, 429, "the attacker's address is throttled for lou");
    assert_eq!(attempt(owner, PW).await, 303, "lou signs in from their own address");
    // The record shows where each attempt came from.
    let logins = s.api().get("/account/logins").await;
    let ips: Vec<&str> = logins.ok()["data"].as_array().unwrap().iter().map(|l| l["ip"].as_str().unwrap()).collect();
    assert_eq!(ips, ["127.0.0.2"]);
}
