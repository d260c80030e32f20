//! Rules the OpenAPI contract run found between what the document says and what the server did:
//! each request here is valid (or invalid) by the document and was answered otherwise.

use serde_json::json;

use crate::support::TestServer;

#[tokio::test]
async fn a_number_without_a_fraction_is_an_integer() {
    let s = TestServer::start().await;
    let api = s.api();
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "client_conn_throttle": 5.0})).await;
    assert_eq!(nb.ok()["client_conn_throttle"], 5);
    api.post("/nodebalancers", json!({"region": "us-east", "client_conn_throttle": 5.5}))
        .await
        .expect_error(400, "client_conn_throttle");
}

#[tokio::test]
async fn a_nested_record_is_read_only_from_an_object() {
    let s = TestServer::start().await;
    let api = s.api();
    let rules = json!({"inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT"});
    api.post("/networking/firewalls", json!({"label": "fw-array", "rules": rules, "devices": [null, null]}))
        .await
        .expect_error(400, "devices");
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 0);
    api.post("/networking/firewalls", json!({"label": "fw-object", "rules": rules, "devices": {}})).await.ok();
}

#[tokio::test]
async fn a_page_past_64_bits_is_an_empty_page() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "v1", "region": "us-east"})).await.ok();
    let page = api.get("/vpcs?page=986205687958102605824").await;
    assert_eq!(page.ok()["data"], json!([]));
    assert_eq!(page.body["results"], 1);
    api.get("/vpcs?page=0").await.expect_error(400, "page");
}

#[tokio::test]
async fn an_email_address_is_measured_in_characters() {
    let s = TestServer::start().await;
    let api = s.api();
    // 112 characters, 212 bytes.
    let email = format!("{}@example.com", "é".repeat(100));
    assert_eq!(api.put("/profile", json!({"email": email})).await.ok()["email"], email);
    let long = format!("{}@example.com", "é".repeat(117));
    api.put("/profile", json!({"email": long})).await.expect_error(400, "email");
}

#[tokio::test]
async fn a_redirect_uri_names_one_host() {
    let s = TestServer::start().await;
    let api = s.api();
    for ok in ["http://127.0.0.1:8080/cb?x=1", "https://app.example", "https://xn--bcher-kva.example/cb"] {
        api.post("/account/oauth-clients", json!({"label": "c", "redirect_uri": ok})).await.ok();
    }
    // URL parsers disagree on these hosts (or find none, or refuse them).
    for bad in ["http://[/cb", "http://[0]/cb", "http://user@host/cb", "http://host:/cb", "http://b\u{fe6b}c/cb"] {
        api.post("/account/oauth-clients", json!({"label": "c", "redirect_uri": bad}))
            .await
            .expect_error(400, "redirect_uri");
    }
}

#[tokio::test]
async fn a_nul_character_in_text_is_never_a_server_error() {
    let s = TestServer::start().await;
    let api = s.api();
    let vpc = api.post("/vpcs", json!({"label": "v1", "region": "us-east"})).await.ok().clone();
    let r = api.put(&format!("/vpcs/{}", vpc["id"]), json!({"description": "K\u{0}"})).await;
    // SQLite keeps the character; PostgreSQL's text cannot, and the request is refused.
    if crate::support::on_postgres() {
        r.status_is(400);
        assert_eq!(api.get(&format!("/vpcs/{}", vpc["id"])).await.ok()["description"], "");
    } else {
        assert_eq!(r.ok()["description"], "K\u{0}");
    }
    let filtered = api.get_filtered("/vpcs", "{\"label\": \"a\\u0000\"}").await;
    assert!(filtered.status < 500, "{}", filtered.text);
}
