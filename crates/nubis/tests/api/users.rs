//! Users and grants (spec 2.6, 4.8).

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn user_create_checks_username_and_email() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/account/users", json!({})).await;
    r.expect_error(400, "username").expect_error(400, "email");
    for bad in ["ab", "x".repeat(33).as_str(), "-bob", "bob-", "bo--b", "bo_-b", "bob smith", "bob.smith"] {
        api.post("/account/users", json!({"username": bad, "email": "b@example.com"}))
            .await
            .expect_error(400, "username");
    }
    api.post("/account/users", json!({"username": "bob", "email": "nope"})).await.expect_error(400, "email");
    assert_eq!(api.get("/account/users").await.ok()["results"], 1, "nothing was created");
    for good in ["bob", "b0b-smith_2", &"x".repeat(32)] {
        api.post("/account/users", json!({"username": good, "email": "b@example.com"})).await.ok();
    }
}

#[tokio::test]
async fn usernames_are_unique() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "twin", "email": "a@example.com"})).await.ok();
    api.post("/account/users", json!({"username": "twin", "email": "b@example.com"}))
        .await
        .expect_error(400, "username");
    api.post("/account/users", json!({"username": "twin2", "email": "b@example.com"})).await.ok();
    api.put("/account/users/twin2", json!({"username": "twin"})).await.expect_error(400, "username");
}

#[tokio::test]
async fn concurrent_creates_of_one_username_make_exactly_one_user() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.post("/account/users", json!({"username": "racer", "email": format!("r{i}@example.com")})).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 15, "{codes:?}");
}

#[tokio::test]
async fn a_proxy_user_cannot_be_created() {
    let s = TestServer::start().await;
    let r = s
        .api()
        .post("/account/users", json!({"username": "proxy1", "email": "p@example.com", "user_type": "proxy"}))
        .await;
    r.expect_error(400, "user_type");
}

#[tokio::test]
async fn creating_a_user_sends_the_confirmation_message_through_the_outbox() {
    let s = TestServer::start().await;
    s.api().post("/account/users", json!({"username": "newbie", "email": "newbie@example.com"})).await.ok();
    let dir = s.dir.join("outbox");
    let text = eventually(10, "the .eml file", || {
        let dir = dir.clone();
        async move {
            let entry =
                std::fs::read_dir(&dir).ok()?.flatten().find(|e| e.path().extension().is_some_and(|x| x == "eml"))?;
            std::fs::read_to_string(entry.path()).ok()
        }
    })
    .await;
    assert!(text.contains("To: newbie@example.com"), "{text}");
    assert!(text.contains("newbie"), "{text}");
    let (ok, out, _) = s.admin(&["outbox"]);
    assert!(ok && out.contains("newbie@example.com"), "{out}");
}

#[tokio::test]
async fn users_can_be_read_updated_and_deleted_with_events() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "temp", "email": "t@example.com", "restricted": true})).await.ok();
    let u = api.get("/account/users/temp").await;
    assert_eq!(u.ok()["restricted"], true);
    assert_eq!(u.body["user_type"], "default");
    let r = api.put("/account/users/temp", json!({"username": "renamed", "email": "r@example.com"})).await;
    assert_eq!(r.ok()["username"], "renamed");
    api.get("/account/users/temp").await.expect_error(404, "-");
    api.put("/account/users/renamed", json!({"email": "bad"})).await.expect_error(400, "email");
    assert_eq!(api.delete("/account/users/renamed").await.ok(), &json!({}));
    api.get("/account/users/renamed").await.expect_error(404, "-");
    let actions = event_actions(&api).await;
    assert_eq!(&actions[..3], ["user_delete", "user_update", "user_create"]);
}

#[tokio::test]
async fn the_account_owner_cannot_be_deleted_or_restricted() {
    let s = TestServer::start().await;
    let (_, ann) = user_with_token(&s, "annie", false, "*").await;
    ann.delete("/account/users/admin").await.expect_error(400, "-");
    ann.put("/account/users/admin", json!({"restricted": true})).await.expect_error(400, "restricted");
    s.api().get("/profile").await.ok();
}

#[tokio::test]
async fn setting_a_user_restricted_sets_no_grants() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "flip", "email": "f@example.com", "restricted": true})).await.ok();
    api.put("/account/users/flip/grants", json!({"global": {"add_vpcs": true, "add_firewalls": true}})).await.ok();
    api.put("/account/users/flip", json!({"restricted": false})).await.ok();
    api.get("/account/users/flip/grants").await.status_is(204);
    api.put("/account/users/flip", json!({"restricted": true})).await.ok();
    let g = api.get("/account/users/flip/grants").await;
    let global = &g.ok()["global"];
    assert_eq!(global["add_vpcs"], false);
    assert_eq!(global["add_firewalls"], false);
    assert!(global["account_access"].is_null());
}

#[tokio::test]
async fn grants_updates_leave_omitted_entries_unchanged() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "limited", "email": "l@example.com", "restricted": true})).await.ok();
    let g = api
        .put("/account/users/limited/grants", json!({"global": {"add_vpcs": true, "account_access": "read_only"}}))
        .await;
    assert_eq!(g.ok()["global"]["add_vpcs"], true);
    let g = api.put("/account/users/limited/grants", json!({"global": {"add_firewalls": true}})).await;
    let global = &g.ok()["global"];
    assert_eq!(global["add_vpcs"], true, "omitted entries stay");
    assert_eq!(global["add_firewalls"], true);
    assert_eq!(global["account_access"], "read_only");
    let g = api.put("/account/users/limited/grants", json!({"global": {"account_access": null}})).await;
    assert!(g.ok()["global"]["account_access"].is_null(), "an explicit null clears");
    let full = api.get("/account/users/limited/grants").await;
    for kind in [
        "instance",
        "vpc",
        "nodebalancer",
        "firewall",
        "database",
        "domain",
        "image",
        "longview",
        "stackscript",
        "volume",
    ] {
        assert!(full.ok()[kind].is_array(), "{kind} missing: {}", full.text);
    }
    assert!(full.body["global"]["child_account_access"].is_null(), "null for accounts that are not parents");
}

#[tokio::test]
async fn grants_on_unknown_entities_are_refused_and_change_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "limited", "email": "l@example.com", "restricted": true})).await.ok();
    let r = api
        .put(
            "/account/users/limited/grants",
            json!({"global": {"add_vpcs": true}, "vpc": [{"id": 999999, "permissions": "read_only"}]}),
        )
        .await;
    r.expect_error(400, "vpc[0].id");
    assert_eq!(api.get("/account/users/limited/grants").await.ok()["global"]["add_vpcs"], false);
    api.put("/account/users/limited/grants", json!({"global": {"add_vpcs": "yes"}}))
        .await
        .expect_error(400, "global.add_vpcs");
}

#[tokio::test]
async fn grants_endpoints_do_not_apply_to_the_owner_or_the_current_user() {
    let s = TestServer::start().await;
    let api = s.api();
    api.get("/account/users/admin/grants").await.expect_error(400, "-");
    api.put("/account/users/admin/grants", json!({"global": {"add_vpcs": true}})).await.expect_error(400, "-");
    let (_, ann) = user_with_token(&s, "annie", false, "*").await;
    ann.get("/account/users/admin/grants").await.status_is(204);
    ann.put("/account/users/admin/grants", json!({"global": {"add_vpcs": true}})).await.expect_error(400, "-");
    s.api().get("/profile/grants").await.status_is(204);
}

#[tokio::test]
async fn profile_grants_show_a_restricted_users_own_grants() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bobby", true, "*").await;
    s.api().put("/account/users/bobby/grants", json!({"global": {"add_vpcs": true}})).await.ok();
    let g = bob.get("/profile/grants").await;
    assert_eq!(g.ok()["global"]["add_vpcs"], true);
}

#[tokio::test]
async fn proxy_users_cannot_be_deleted_and_only_restricted_changes() {
    let s = TestServer::start().await;
    let (ok, out, err) = s.admin(&["account", "list"]);
    assert!(ok, "{err}");
    let parent = out.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    let owner = unique("child");
    let (ok, _, err) = s.admin(&[
        "account",
        "create",
        "--company",
        "Child Co",
        "--username",
        &owner,
        "--email",
        "c@example.com",
        "--parent",
        &parent,
    ]);
    assert!(ok, "{err}");
    let child = s.api_with(&s.token_for(&owner, "*"));
    let users = child.get("/account/users").await;
    let proxy = users.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user_type"] == "proxy")
        .unwrap_or_else(|| panic!("no proxy user: {}", users.text))["username"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(proxy.starts_with("nubis_"), "{proxy}");
    child.delete(&format!("/account/users/{proxy}")).await.expect_error(403, "-");
    child.put(&format!("/account/users/{proxy}"), json!({"email": "new@example.com"})).await.expect_error(400, "email");
    let r = child.put(&format!("/account/users/{proxy}"), json!({"restricted": false})).await;
    assert_eq!(r.ok()["restricted"], false);
    child.put(&format!("/account/users/{proxy}"), json!({"restricted": true})).await.ok();
    child
        .put(&format!("/account/users/{proxy}/grants"), json!({"global": {"account_access": "read_only"}}))
        .await
        .expect_error(400, "global.account_access");
    let g = child.put(&format!("/account/users/{proxy}/grants"), json!({"global": {"add_vpcs": true}})).await;
    assert_eq!(g.ok()["global"]["add_vpcs"], true);
    assert_eq!(child.get("/account/users").await.ok()["data"][0]["user_type"], "child");
}

/// A minimal SMTP server on 127.0.0.1 that records the messages it receives.
async fn fake_smtp() -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("smtp://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let (r, mut w) = sock.into_split();
                let mut lines = BufReader::new(r).lines();
                let _ = w.write_all(b"220 fake ESMTP\r\n").await;
                let mut data: Option<String> = None;
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(d) = data.as_mut() {
                        if line == "." {
                            let _ = tx.send(data.take().unwrap_or_default());
                            let _ = w.write_all(b"250 queued\r\n").await;
                        } else {
                            d.push_str(&line);
                            d.push('\n');
                        }
                        continue;
                    }
                    let cmd = line.to_ascii_uppercase();
                    let reply: &[u8] = if cmd.starts_with("EHLO") || cmd.starts_with("HELO") {
                        b"250 fake\r\n"
                    } else if cmd.starts_with("DATA") {
                        data = Some(String::new());
                        b"354 go ahead\r\n"
                    } else if cmd.starts_with("QUIT") {
                        let _ = w.write_all(b"221 bye\r\n").await;
                        break;
                    } else {
                        b"250 ok\r\n"
                    };
                    let _ = w.write_all(reply).await;
                }
            });
        }
    });
    (url, rx)
}

#[tokio::test]
async fn with_an_smtp_url_the_confirmation_message_is_sent_by_smtp() {
    let (url, mut rx) = fake_smtp().await;
    let s = TestServer::start_with(Options { extra_args: vec!["--smtp-url".into(), url], ..Default::default() }).await;
    s.api().post("/account/users", json!({"username": "mailed", "email": "mailed@example.com"})).await.ok();
    let msg = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv()).await.expect("a message").unwrap();
    assert!(msg.contains("To: mailed@example.com"), "{msg}");
    assert!(msg.contains("mailed"), "{msg}");
    let (ok, out, _) = s.admin(&["outbox"]);
    assert!(ok && out.contains("delivered"), "{out}");
    assert!(!s.dir.join("outbox").exists(), "no files when SMTP is used");
}
