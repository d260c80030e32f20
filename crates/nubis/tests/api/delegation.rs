//! Parent and child accounts (spec 4.5, 4.8): the child-account list, proxy users and the
//! short-lived tokens that let a parent user act as its proxy user on a child account.

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::controls::controlled;
use crate::support::*;

struct Family {
    parent_euuid: String,
    child_euuid: String,
    /// The child account's owner (an unrestricted child-account user).
    child_owner: Api,
}

fn family(s: &TestServer) -> Family {
    let (ok, out, err) = s.admin(&["account", "list"]);
    assert!(ok, "{err}");
    let parent_euuid = out.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    let owner = unique("kid-owner");
    let (ok, out, err) = s.admin(&[
        "account",
        "create",
        "--company",
        "Kid Co",
        "--username",
        &owner,
        "--email",
        "kid@example.com",
        "--parent",
        &parent_euuid,
    ]);
    assert!(ok, "{err}");
    let child_euuid = out.split_whitespace().nth(1).unwrap().to_string();
    let child_owner = s.api_with(&s.token_for(&owner, "*"));
    Family { parent_euuid, child_euuid, child_owner }
}

/// Spec 4.5: the parent company's first 15 characters, `_`, and the first 16 hex characters of
/// SHA-256 over the parent company and the child euuid. The first account's company is `nubis`.
fn proxy_name(child_euuid: &str) -> String {
    let digest = Sha256::digest(format!("nubis{child_euuid}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("nubis_{}", &hex[..16])
}

#[tokio::test]
async fn parents_list_their_child_accounts() {
    let s = TestServer::start().await;
    let f = family(&s);
    let api = s.api();
    let l = api.get("/account/child-accounts").await;
    assert_eq!(l.ok()["results"], 1);
    let c = &l.body["data"][0];
    assert_eq!(
        (c["euuid"].as_str(), c["company"].as_str(), c["billing_source"].as_str()),
        (Some(f.child_euuid.as_str()), Some("Kid Co"), Some("external"))
    );
    api.get(&format!("/account/child-accounts/{}", f.child_euuid)).await.ok();
    api.get("/account/child-accounts/NOPE").await.status_is(404);
    let x = api.get_filtered("/account/child-accounts", r#"{"company": "Other"}"#).await;
    assert_eq!(x.ok()["results"], 0);
    // The child is no parent; other accounts do not see it.
    assert_eq!(f.child_owner.get("/account/child-accounts").await.ok()["results"], 0);
    f.child_owner.get(&format!("/account/child-accounts/{}", f.parent_euuid)).await.status_is(404);
    let other = other_account(&s);
    other.get(&format!("/account/child-accounts/{}", f.child_euuid)).await.status_is(404);
    // A restricted parent user needs child_account_access; its grants show the flag as false.
    let (_, pru) = user_with_token(&s, "pru", true, "*").await;
    pru.get("/account/child-accounts").await.status_is(403);
    assert_eq!(api.get("/account/users/pru/grants").await.ok()["global"]["child_account_access"], false);
    api.put("/account/users/pru/grants", json!({"global": {"child_account_access": true}})).await.ok();
    assert_eq!(pru.get("/account/child-accounts").await.ok()["results"], 1);
    // Users of a non-parent account: the grant is null and cannot be set.
    other.post("/account/users", json!({"username": "ned", "email": "ned@example.com", "restricted": true})).await.ok();
    assert_eq!(other.get("/account/users/ned/grants").await.ok()["global"]["child_account_access"], json!(null));
    other
        .put("/account/users/ned/grants", json!({"global": {"child_account_access": true}}))
        .await
        .expect_error(400, "global.child_account_access");
}

#[tokio::test]
async fn a_proxy_token_acts_as_the_proxy_user_on_the_child_account_and_expires() {
    let config = format!("{TEST_CONFIG}\n[signin]\nproxy_token_secs = 600\n");
    let (s, ctl) = controlled(&[], Some(config)).await;
    let f = family(&s);
    let api = s.api();
    let t = api.post_empty(&format!("/account/child-accounts/{}/token", f.child_euuid)).await;
    let t = t.ok().clone();
    let token = t["token"].as_str().unwrap();
    assert_eq!(token.len(), 64);
    assert_eq!(t["scopes"], "*");
    assert!(t["label"].as_str().unwrap().starts_with("admin_"));
    assert!(t["expiry"].as_str().unwrap() > t["created"].as_str().unwrap());
    assert!(!s.log().contains(token), "the token was logged");
    let proxy = s.api_with(token);
    // It is the proxy user of the child account, named as spec 4.5 says.
    let me = proxy.get("/profile").await;
    assert_eq!(me.ok()["username"], proxy_name(&f.child_euuid).as_str());
    assert_eq!(me.body["restricted"], true);
    // With the proxy user's permissions: account access, no more; nothing of the parent's.
    proxy.get("/account/transfer").await.ok();
    proxy.get("/account/users").await.status_is(403);
    proxy.post("/profile/tokens", json!({"label": "x"})).await.status_is(403);
    proxy.post("/vpcs", json!({"label": "from-parent", "region": "us-east"})).await.status_is(403);
    // The child's owner grants the proxy user more through `global`; the token follows at once.
    let name = proxy_name(&f.child_euuid);
    f.child_owner.put(&format!("/account/users/{name}/grants"), json!({"global": {"add_vpcs": true}})).await.ok();
    let v = proxy.post("/vpcs", json!({"label": "from-parent", "region": "us-east"})).await;
    v.ok();
    assert_eq!(f.child_owner.get("/vpcs").await.ok()["results"], 1, "made on the child account");
    assert_eq!(api.get("/vpcs").await.ok()["results"], 0, "not on the parent account");
    // It expires: valid until its 600 seconds are over, refused after.
    ctl.post("/clock/advance", json!({"seconds": 590})).await.ok();
    proxy.get("/profile").await.ok();
    ctl.post("/clock/advance", json!({"seconds": 11})).await.ok();
    proxy.get("/profile").await.status_is(401);
}

#[tokio::test]
async fn proxy_tokens_need_the_scope_and_the_grant() {
    let s = TestServer::start().await;
    let f = family(&s);
    let path = format!("/account/child-accounts/{}/token", f.child_euuid);
    // A token without child_account:read_write.
    let ro = s.api_with(&s.token_for("admin", "child_account:read_only"));
    ro.get("/account/child-accounts").await.ok();
    ro.post_empty(&path).await.status_is(403);
    // A restricted parent user without, then with, child_account_access.
    let (_, pru) = user_with_token(&s, "pru", true, "child_account:read_write").await;
    pru.post_empty(&path).await.status_is(403);
    s.api().put("/account/users/pru/grants", json!({"global": {"child_account_access": true}})).await.ok();
    let t = pru.post_empty(&path).await;
    s.api_with(t.ok()["token"].as_str().unwrap()).get("/profile").await.ok();
    // Not for another parent's child, nor for the child's own users.
    other_account(&s).post_empty(&path).await.status_is(404);
    f.child_owner.post_empty(&path).await.status_is(404);
}

#[tokio::test]
async fn proxy_users_cannot_be_created_deleted_or_renamed() {
    let s = TestServer::start().await;
    let f = family(&s);
    let name = proxy_name(&f.child_euuid);
    let kid = &f.child_owner;
    let users = kid.get("/account/users").await;
    let proxy = users.ok()["data"].as_array().unwrap().iter().find(|u| u["user_type"] == "proxy").unwrap().clone();
    assert_eq!(proxy["username"], name.as_str());
    kid.post("/account/users", json!({"username": "p2", "email": "p@example.com", "user_type": "proxy"}))
        .await
        .expect_error(400, "user_type");
    kid.delete(&format!("/account/users/{name}")).await.status_is(403);
    kid.put(&format!("/account/users/{name}"), json!({"username": "renamed"})).await.expect_error(400, "username");
    kid.put(&format!("/account/users/{name}"), json!({"email": "x@example.com"})).await.expect_error(400, "email");
    // Its account_access is out of reach of every child-account user; other grants are not.
    kid.put(&format!("/account/users/{name}/grants"), json!({"global": {"account_access": "read_only"}}))
        .await
        .expect_error(400, "global.account_access");
    let g = kid.put(&format!("/account/users/{name}/grants"), json!({"global": {"add_firewalls": true}})).await;
    assert_eq!(g.ok()["global"]["add_firewalls"], true);
    assert_eq!(g.body["global"]["account_access"], "read_write");
    // Only restricted is changeable, by an unrestricted child user (not by restricted ones).
    let (_, kid_restricted) = {
        kid.post("/account/users", json!({"username": "kidr", "email": "r@example.com", "restricted": true}))
            .await
            .ok();
        ((), s.api_with(&s.token_for("kidr", "*")))
    };
    kid_restricted.put(&format!("/account/users/{name}"), json!({"restricted": false})).await.status_is(403);
    let u = kid.put(&format!("/account/users/{name}"), json!({"restricted": false})).await;
    assert_eq!(u.ok()["restricted"], false);
    // Restricting it again restores the account access that defines it.
    kid.put(&format!("/account/users/{name}"), json!({"restricted": true})).await.ok();
    let g = kid.get(&format!("/account/users/{name}/grants")).await;
    assert_eq!(g.ok()["global"]["account_access"], "read_write");
    // The parent's users cannot reach it at all.
    s.api().get(&format!("/account/users/{name}")).await.status_is(404);
}
