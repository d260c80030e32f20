//! The profile's SSH keys (`/v4/profile/sshkeys`) and what `authorized_keys` and
//! `authorized_users` install when an image is deployed.

use serde_json::json;

use crate::coverage::FIXTURE_KEY;
use crate::instances::{id, wait_status};
use crate::support::*;

/// Another valid key (ed25519, 32 bytes of 0x01).
const OTHER_KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB laptop";

#[tokio::test]
async fn ssh_keys_are_added_listed_relabeled_and_deleted_per_user() {
    let s = TestServer::start().await;
    let api = s.api();
    let k = api.post("/profile/sshkeys", json!({"label": "work", "ssh_key": FIXTURE_KEY})).await.ok().clone();
    assert_eq!((k["label"].as_str(), k["ssh_key"].as_str()), (Some("work"), Some(FIXTURE_KEY)));
    assert!(k["created"].is_string());
    api.post("/profile/sshkeys", json!({"ssh_key": OTHER_KEY})).await.ok();
    assert_eq!(api.get("/profile/sshkeys").await.ok()["results"], 2);
    assert_eq!(api.get_filtered("/profile/sshkeys", r#"{"label": "work"}"#).await.ok()["results"], 1);
    let u = api.put(&format!("/profile/sshkeys/{}", id(&k)), json!({"label": "home"})).await;
    assert_eq!((u.ok()["label"].as_str(), u.body["ssh_key"].as_str()), (Some("home"), Some(FIXTURE_KEY)));
    // Another user of the account sees only their own keys.
    let (_, bob) = user_with_token(&s, "bob", false, "*").await;
    assert_eq!(bob.get("/profile/sshkeys").await.ok()["results"], 0);
    bob.get(&format!("/profile/sshkeys/{}", id(&k))).await.expect_error(404, "-");
    bob.delete(&format!("/profile/sshkeys/{}", id(&k))).await.expect_error(404, "-");
    api.delete(&format!("/profile/sshkeys/{}", id(&k))).await.ok();
    api.get(&format!("/profile/sshkeys/{}", id(&k))).await.expect_error(404, "-");
    assert_eq!(api.get("/profile/sshkeys").await.ok()["results"], 1);
}

#[tokio::test]
async fn a_key_must_be_an_openssh_public_key_and_a_label_at_most_64_characters() {
    let s = TestServer::start().await;
    let api = s.api();
    for bad in [
        "",
        "ssh-rsa",
        "ssh-rsa not-base64!",
        "ssh-foo AAAAC3NzaC1lZDI1NTE5",
        &FIXTURE_KEY.replacen("ssh-ed25519", "ssh-rsa", 1),
    ] {
        api.post("/profile/sshkeys", json!({"ssh_key": bad})).await.expect_error(400, "ssh_key");
    }
    api.post("/profile/sshkeys", json!({})).await.expect_error(400, "ssh_key");
    api.post("/profile/sshkeys", json!({"ssh_key": FIXTURE_KEY, "label": "x".repeat(65)}))
        .await
        .expect_error(400, "label");
    assert_eq!(api.get("/profile/sshkeys").await.ok()["results"], 0);
}

#[tokio::test]
async fn authorized_users_install_the_profile_keys_of_the_users_named() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, bob) = user_with_token(&s, "bob", false, "*").await;
    bob.post("/profile/sshkeys", json!({"label": "bob", "ssh_key": OTHER_KEY})).await.ok();
    // Keys without a password are enough to deploy an image.
    let inst = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "label": "keyed",
                   "authorized_keys": [FIXTURE_KEY], "authorized_users": ["bob"], "booted": false}),
        )
        .await;
    let i = id(inst.ok());
    let installed = |k: &str| {
        format!("SELECT COUNT(*) FROM instance_disks WHERE instance_id = {i} AND authorized_keys LIKE '%{k}%'")
    };
    assert_eq!(db_scalar(&s, &installed("AAAAIAAAAA")).await, 1, "the key given");
    assert_eq!(db_scalar(&s, &installed("AAAAIAEBAQ")).await, 1, "bob's profile key");
    api.post(
        "/compute/instances",
        json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "authorized_users": ["ghost"]}),
    )
    .await
    .expect_error(400, "authorized_users[0]");
    // A rebuild installs them the same way.
    wait_status(&api, i, "offline").await;
    api.post(
        &format!("/compute/instances/{i}/rebuild"),
        json!({"image": "linode/alpine3.20", "authorized_users": ["bob"], "booted": false}),
    )
    .await
    .ok();
    wait_status(&api, i, "offline").await;
    assert_eq!(db_scalar(&s, &installed("AAAAIAEBAQ")).await, 1);
    assert_eq!(db_scalar(&s, &installed("AAAAIAAAAA")).await, 0, "the old disk went with its keys");
}
