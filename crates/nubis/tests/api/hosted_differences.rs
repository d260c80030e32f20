//! Where the spec is silent and the official clients (their integration tests, their users)
//! expect the hosted API's answer: event times and origin, the error wordings they match on, rules
//! echoed as given, a balancer's default label and hostname, one of the caller's own logins; and
//! the proxy user's name exactly as spec 4.5 gives it.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::signin_support::{Browser, origin, set_password};
use crate::support::*;

const ROOT_PASS: &str = "aComplex!Passw0rd-1";

fn reasons(r: &Resp) -> Vec<(String, String)> {
    r.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap_or("-").to_string(), e["reason"].as_str().unwrap().to_string()))
        .collect()
}

#[track_caller]
fn reason_of(r: &Resp, field: &str) -> String {
    assert_eq!(r.status, 400, "{}", r.text);
    reasons(r).into_iter().find(|(f, _)| f == field).unwrap_or_else(|| panic!("no error on {field}: {}", r.text)).1
}

#[tokio::test]
async fn events_carry_their_start_completion_and_origin() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "evt", "region": "us-east"})).await.ok();
    let e = api.get_filtered("/account/events", r#"{"action": "vpc_create"}"#).await;
    let e = e.ok()["data"][0].clone();
    assert_eq!(e["source"], "user");
    assert_eq!(e["start_time"], e["created"]);
    assert!(e["complete_time"].is_string(), "{e}");
    assert!(e["complete_time"].as_str().unwrap() >= e["created"].as_str().unwrap());
    for k in ["description", "maintenance_policy_set", "not_before"] {
        assert_eq!(e[k], Value::Null, "{k}: {e}");
    }
    // A long operation: started and running has no completion yet; once finished it has one
    // and a duration from its start.
    let i = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12",
                                            "root_pass": ROOT_PASS, "label": "evt-1"}),
        )
        .await;
    let id = i.ok()["id"].as_i64().unwrap();
    let filter = format!(r#"{{"action": "instance_boot", "entity.id": {id}}}"#);
    let boot = eventually(20, "the boot event finishes", || async {
        let r = api.get_filtered("/account/events", &filter).await;
        let e = r.ok()["data"][0].clone();
        (e["status"] == "finished").then_some(e)
    })
    .await;
    assert!(boot["complete_time"].is_string(), "{boot}");
    assert_eq!(boot["start_time"], boot["created"]);
    assert!(boot["duration"].as_f64().unwrap() >= 0.0);
    assert_eq!(api.get(&format!("/account/events/{}", boot["id"])).await.ok()["complete_time"], boot["complete_time"]);
}

#[tokio::test]
async fn error_reasons_use_the_hosted_wording_clients_match_on() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/compute/instances", json!({"type": "g6-fake-plan", "region": "us-fakeregion"})).await;
    assert_eq!(reason_of(&r, "type"), "A valid plan type by that ID was not found");
    assert_eq!(reason_of(&r, "region"), "region is not valid");
    let r = api
        .post(
            "/compute/instances",
            json!({"type": "g6-nanode-1", "region": "us-east", "image": "linode/nothing",
                                            "root_pass": ROOT_PASS}),
        )
        .await;
    assert_eq!(reason_of(&r, "image"), "image is not valid");
    let i = api.post("/compute/instances", json!({"type": "g6-nanode-1", "region": "us-east", "booted": false})).await;
    let id = i.ok()["id"].as_i64().unwrap();
    let r = api.post(&format!("/compute/instances/{id}/rebuild"), json!({"root_pass": ROOT_PASS})).await;
    assert_eq!(reason_of(&r, "image"), "You must specify an image");
    let r = api.post(&format!("/compute/instances/{id}/resize"), json!({"type": "g6-fake-plan"})).await;
    assert_eq!(reason_of(&r, "type"), "A valid plan type by that ID was not found");
    // VPC and subnet labels, and a label taken.
    let r = api.post("/vpcs", json!({"label": "invalid_label", "region": "us-east"})).await;
    assert!(reason_of(&r, "label").starts_with("Must only use ASCII letters, numbers, and dashes"), "{}", r.text);
    api.post("/vpcs", json!({"label": "taken", "region": "us-east"})).await.ok();
    let r = api.post("/vpcs", json!({"label": "taken", "region": "us-east"})).await;
    assert_eq!(reason_of(&r, "label"), "Label must be unique among your VPCs");
    let r = api
        .post(
            "/vpcs",
            json!({"label": "subnets", "region": "us-east", "subnets": [{"label": "a", "ipv4": "10.0.0.0"}]}),
        )
        .await;
    assert!(reason_of(&r, "subnets[0].ipv4").contains("Must be an IPv4 network"), "{}", r.text);
    let fw = json!({"label": "fw-taken", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"}});
    api.post("/networking/firewalls", fw.clone()).await.ok();
    let r = api.post("/networking/firewalls", fw).await;
    assert_eq!(reason_of(&r, "label"), "Label must be unique among your Cloud Firewalls");
    // A balancer node on a public address.
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await;
    let nb = nb.ok()["id"].as_i64().unwrap();
    let c = api.post(&format!("/nodebalancers/{nb}/configs"), json!({"port": 80})).await;
    let c = c.ok()["id"].as_i64().unwrap();
    let public = i.body["ipv4"][0].as_str().unwrap();
    let r = api
        .post(
            &format!("/nodebalancers/{nb}/configs/{c}/nodes"),
            json!({"label": "node-1", "address": format!("{public}:80")}),
        )
        .await;
    assert!(reason_of(&r, "address").starts_with("Must begin with 192.168"), "{}", r.text);
    // An unknown entity.
    let r = api.get("/vpcs/999999").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["errors"][0]["reason"], "Not found");
}

#[tokio::test]
async fn rules_are_echoed_as_given_without_an_added_description() {
    let s = TestServer::start().await;
    let api = s.api();
    let fw = api
        .post(
            "/networking/firewalls",
            json!({"label": "echo", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"}}),
        )
        .await;
    let id = fw.ok()["id"].as_i64().unwrap();
    let inbound = json!({"ports": "22", "protocol": "TCP", "addresses": {"ipv4": ["198.0.0.1/32"]},
                         "action": "ACCEPT", "label": "accept-inbound-SSH"});
    let described = json!({"ports": "80", "protocol": "TCP", "addresses": {"ipv4": ["198.0.0.2/32"]},
                           "action": "ACCEPT", "label": "web", "description": "the web"});
    let r = api
        .put(
            &format!("/networking/firewalls/{id}/rules"),
            json!({"inbound": [inbound, described], "inbound_policy": "DROP", "outbound_policy": "ACCEPT"}),
        )
        .await;
    assert_eq!(r.ok()["inbound"][0], inbound);
    assert_eq!(r.body["inbound"][1], described);
    let again = api.get(&format!("/networking/firewalls/{id}/rules")).await;
    assert_eq!(again.ok()["inbound"][0], inbound);
}

#[tokio::test]
async fn a_balancer_without_a_label_is_balancer_id_and_its_hostname_follows_the_rdns_suffix() {
    let config = format!("{TEST_CONFIG}default_rdns_suffix = \"members.example.net\"\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await;
    let nb = nb.ok().clone();
    assert_eq!(nb["label"], format!("balancer{}", nb["id"]));
    let ipv4 = nb["ipv4"].as_str().unwrap();
    assert_eq!(nb["hostname"], format!("{}.members.example.net", ipv4.replace('.', "-")));
    // The name `balancer<id>` already taken by a labelled balancer: a generated label instead.
    let next = nb["id"].as_i64().unwrap() + 1;
    let taken =
        api.post("/nodebalancers", json!({"region": "us-east", "label": format!("balancer{}", next + 1)})).await;
    assert_eq!(taken.ok()["id"], next);
    let third = api.post("/nodebalancers", json!({"region": "us-east"})).await;
    assert_eq!(third.ok()["id"], next + 1);
    assert_ne!(third.body["label"], format!("balancer{}", next + 1));
    // The event names it by its final label.
    let ev = api
        .get_filtered("/account/events", &format!(r#"{{"entity.id": {}, "action": "nodebalancer_create"}}"#, nb["id"]))
        .await;
    assert_eq!(ev.ok()["data"][0]["entity"]["label"], nb["label"]);
}

#[tokio::test]
async fn a_login_the_profile_list_shows_can_be_read_alone() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "lee", "email": "lee@example.com", "restricted": true})).await.ok();
    set_password(&s, "lee", "Quiet-River-77x").await;
    let c = api.post("/account/oauth-clients", json!({"label": "App", "redirect_uri": "http://127.0.0.1:9/cb"})).await;
    let cid = c.ok()["id"].as_str().unwrap().to_string();
    let mut b = Browser::new();
    let page = b.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}", origin(&s))).await;
    let r = b
        .submit(&origin(&s), &page, &[("username", "lee"), ("password", "Quiet-River-77x"), ("action", "approve")])
        .await;
    assert_eq!(r.status, 303, "{}", r.text);
    let lee = s.api_with(&s.token_for("lee", "*"));
    let list = lee.get("/profile/logins").await;
    let login = list.ok()["data"][0].clone();
    let id = login["id"].as_i64().unwrap();
    assert_eq!(lee.get(&format!("/profile/logins/{id}")).await.ok(), &login);
    // Someone else's login is not the caller's.
    api.get(&format!("/profile/logins/{id}")).await.expect_error(404, "-");
    other_account(&s).get(&format!("/profile/logins/{id}")).await.expect_error(404, "-");
    lee.get("/profile/logins/999999").await.expect_error(404, "-");
}

/// Spec 4.5: the first 15 characters of the parent company name, as they are.
#[tokio::test]
async fn the_proxy_user_is_named_after_the_first_15_characters_of_the_parent_company() {
    let s = TestServer::start().await;
    let api = s.api();
    let company = "Example Partners Incorporated";
    api.put("/account", json!({"company": company})).await.ok();
    let (ok, out, err) = s.admin(&["account", "list"]);
    assert!(ok, "{err}");
    let parent = out.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    let (ok, out, err) = s.admin(&[
        "account",
        "create",
        "--company",
        "Kid Co",
        "--username",
        "kid-owner",
        "--email",
        "kid@example.com",
        "--parent",
        &parent,
    ]);
    assert!(ok, "{err}");
    let child = out.split_whitespace().nth(1).unwrap().to_string();
    let t = api.post_empty(&format!("/account/child-accounts/{child}/token")).await;
    let proxy = s.api_with(t.ok()["token"].as_str().unwrap());
    let digest = Sha256::digest(format!("{company}{child}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(proxy.get("/profile").await.ok()["username"], format!("Example Partner_{}", &hex[..16]));
}
