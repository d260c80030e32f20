//! OAuth clients through the API: validation, the secret shown once and stored hashed, grants,
//! and public thumbnails checked by content.

use serde_json::json;

use crate::support::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\x0f\0\0\x01\x01\0\x05\x18\xd8N\0\0\0\0IEND\xaeB`\x82";
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xff\xd9";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0\0\0\0;";

#[tokio::test]
async fn clients_are_validated_and_their_secret_is_shown_once() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/account/oauth-clients", json!({})).await;
    r.expect_error(400, "label").expect_error(400, "redirect_uri");
    let r = api.post("/account/oauth-clients", json!({"label": "x".repeat(513), "redirect_uri": "/relative"})).await;
    r.expect_error(400, "label").expect_error(400, "redirect_uri");
    let c = api
        .post(
            "/account/oauth-clients",
            json!({"label": "Test_Client_1", "redirect_uri": "https://example.org/oauth/callback"}),
        )
        .await;
    let c = c.ok().clone();
    let id = c["id"].as_str().unwrap();
    let secret = c["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 64);
    assert_eq!(
        (c["public"].clone(), c["status"].clone(), c["thumbnail_url"].clone()),
        (json!(false), json!("active"), json!(null))
    );
    // Never again in full.
    let got = api.get(&format!("/account/oauth-clients/{id}")).await;
    assert_eq!(got.ok()["secret"], "<REDACTED>");
    assert!(!got.text.contains(secret));
    let list = api.get("/account/oauth-clients").await;
    assert_eq!(list.ok()["results"], 1);
    assert_eq!(list.body["data"][0]["secret"], "<REDACTED>");
    assert!(!s.log().contains(secret), "the secret was logged");
    // Update: all fields optional, each validated.
    let u = api.put(&format!("/account/oauth-clients/{id}"), json!({"label": "Renamed", "public": true})).await;
    assert_eq!((u.ok()["label"].clone(), u.body["public"].clone()), (json!("Renamed"), json!(true)));
    assert_eq!(u.body["redirect_uri"], "https://example.org/oauth/callback");
    api.put(&format!("/account/oauth-clients/{id}"), json!({"label": ""})).await.expect_error(400, "label");
    // X-Filter on declared fields, paging in SQL.
    api.post("/account/oauth-clients", json!({"label": "Second", "redirect_uri": "https://b.example/cb"})).await.ok();
    let f = api.get_filtered("/account/oauth-clients?page_size=25", r#"{"public": true}"#).await;
    assert_eq!(f.ok()["results"], 1);
    assert_eq!(f.body["data"][0]["label"], "Renamed");
    // Reset: a new secret, shown once.
    let r = api.post_empty(&format!("/account/oauth-clients/{id}/reset-secret")).await;
    let new_secret = r.ok()["secret"].as_str().unwrap();
    assert!(new_secret.len() == 64 && new_secret != secret);
    // Delete.
    api.delete(&format!("/account/oauth-clients/{id}")).await.ok();
    api.get(&format!("/account/oauth-clients/{id}")).await.status_is(404);
    // Events.
    let ev = api.get_filtered("/account/events", r#"{"action": "oauth_client_create"}"#).await;
    assert_eq!(ev.ok()["results"], 2);
}

#[tokio::test]
async fn restricted_users_need_account_access_for_clients() {
    let s = TestServer::start().await;
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    bob.get("/account/oauth-clients").await.status_is(403);
    s.api().put("/account/users/bob/grants", json!({"global": {"account_access": "read_only"}})).await.ok();
    bob.get("/account/oauth-clients").await.ok();
    bob.post("/account/oauth-clients", json!({"label": "x", "redirect_uri": "https://x.example/cb"}))
        .await
        .status_is(403);
    s.api().put("/account/users/bob/grants", json!({"global": {"account_access": "read_write"}})).await.ok();
    bob.post("/account/oauth-clients", json!({"label": "x", "redirect_uri": "https://x.example/cb"})).await.ok();
}

#[tokio::test]
async fn thumbnails_are_png_or_jpeg_by_content_limited_in_size_and_public() {
    let config = format!("{TEST_CONFIG}\n[signin]\nthumbnail_max_bytes = 1000\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let c = api.post("/account/oauth-clients", json!({"label": "Pics", "redirect_uri": "https://p.example/cb"})).await;
    let id = c.ok()["id"].as_str().unwrap().to_string();
    let path = format!("/account/oauth-clients/{id}/thumbnail");
    // None yet.
    api.anonymous().get(&path).await.status_is(404);
    // Not an image by content, whatever the content type says.
    api.raw(reqwest::Method::PUT, &path, GIF, Some("image/png")).await.expect_error(400, "thumbnail");
    api.raw(reqwest::Method::PUT, &path, b"", Some("image/png")).await.expect_error(400, "thumbnail");
    let big: &'static [u8] = Box::leak([PNG, &[0u8; 2000]].concat().into_boxed_slice());
    api.raw(reqwest::Method::PUT, &path, big, Some("image/png")).await.expect_error(400, "thumbnail");
    // Needs a token with account:read_write.
    api.anonymous().raw(reqwest::Method::PUT, &path, PNG, Some("image/png")).await.status_is(401);
    // PNG: served back publicly with its type.
    api.raw(reqwest::Method::PUT, &path, PNG, Some("image/png")).await.ok();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = client.get(format!("{}{path}", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.unwrap().as_ref(), PNG);
    let got = api.get(&format!("/account/oauth-clients/{id}")).await;
    assert!(got.ok()["thumbnail_url"].as_str().unwrap().ends_with(&path));
    // JPEG (sent without a content type).
    api.raw(reqwest::Method::PUT, &path, JPEG, None).await.ok();
    let r = client.get(format!("{}{path}", s.base)).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "image/jpeg");
    assert_eq!(r.bytes().await.unwrap().as_ref(), JPEG);
    // Another account cannot set it.
    let other = other_account(&s);
    other.raw(reqwest::Method::PUT, &path, PNG, Some("image/png")).await.status_is(404);
}
