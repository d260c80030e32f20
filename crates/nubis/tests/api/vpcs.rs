//! VPCs and subnets (spec 2.2, 2.3, 4.1): every rule of the VPC issue, named after the rule.

use serde_json::{Value, json};

use crate::support::*;

/// Creates a VPC in us-east with the given subnets (`(label, ipv4)`), asserting success.
pub async fn create_vpc(api: &Api, label: &str, subnets: &[(&str, &str)]) -> Value {
    let subnets: Vec<Value> = subnets.iter().map(|(l, c)| json!({"label": l, "ipv4": c})).collect();
    api.post("/vpcs", json!({"label": label, "region": "us-east", "subnets": subnets})).await.ok().clone()
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

async fn vpc_count(api: &Api) -> u64 {
    api.get("/vpcs").await.ok()["results"].as_u64().unwrap()
}

#[tokio::test]
async fn a_vpc_is_created_with_its_subnets_and_read_back() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "prod-net", &[("web", "10.0.0.0/24"), ("db", "10.0.1.0/24")]).await;
    assert_eq!(v["label"], "prod-net");
    assert_eq!(v["region"], "us-east");
    assert_eq!(v["description"], "");
    assert!(v["created"].is_string() && v["updated"].is_string());
    let subnets = v["subnets"].as_array().unwrap();
    assert_eq!(subnets.len(), 2);
    assert_eq!(subnets[0]["label"], "web");
    assert_eq!(subnets[0]["ipv4"], "10.0.0.0/24");
    assert_eq!(subnets[0]["instances"], json!([]));
    let got = api.get(&format!("/vpcs/{}", id(&v))).await;
    assert_eq!(got.ok(), &v);
    let list = api.get(&format!("/vpcs/{}/subnets", id(&v))).await;
    assert_eq!(list.ok()["results"], 2);
    let sid = id(&subnets[1]);
    assert_eq!(api.get(&format!("/vpcs/{}/subnets/{sid}", id(&v))).await.ok()["label"], "db");
}

#[tokio::test]
async fn vpc_label_is_required_and_follows_the_character_rules() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"region": "us-east"})).await.expect_error(400, "label");
    for bad in ["", "a--b", "under_score", "dot.ted", "sp ace", "ümlaut", &"x".repeat(65)] {
        api.post("/vpcs", json!({"label": bad, "region": "us-east"})).await.expect_error(400, "label");
    }
    assert_eq!(vpc_count(&api).await, 0, "nothing was created");
    for good in ["a", "A-1", "-lead", "trail-", &"x".repeat(64)] {
        api.post("/vpcs", json!({"label": good, "region": "us-east"})).await.ok();
    }
}

#[tokio::test]
async fn vpc_labels_are_unique_per_account() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "twin", &[]).await;
    api.post("/vpcs", json!({"label": "twin", "region": "us-west"})).await.expect_error(400, "label");
    let other = create_vpc(&api, "other", &[]).await;
    api.put(&format!("/vpcs/{}", id(&other)), json!({"label": "twin"})).await.expect_error(400, "label");
    assert_eq!(api.get(&format!("/vpcs/{}", id(&other))).await.ok()["label"], "other", "nothing changed");
    // Another account may use the same label.
    other_account(&s).post("/vpcs", json!({"label": "twin", "region": "us-east"})).await.ok();
    api.put(&format!("/vpcs/{}", id(&v)), json!({"label": "twin"})).await.ok();
}

#[tokio::test]
async fn vpc_description_is_at_most_255_characters() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "d", "region": "us-east", "description": "x".repeat(256)}))
        .await
        .expect_error(400, "description");
    let v = api.post("/vpcs", json!({"label": "d", "region": "us-east", "description": "x".repeat(255)})).await;
    let vid = id(v.ok());
    api.put(&format!("/vpcs/{vid}"), json!({"description": "y".repeat(256)})).await.expect_error(400, "description");
    assert_eq!(api.get(&format!("/vpcs/{vid}")).await.ok()["description"], "x".repeat(255));
}

#[tokio::test]
async fn vpc_region_is_required_must_exist_and_offer_vpcs() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "r"})).await.expect_error(400, "region");
    api.post("/vpcs", json!({"label": "r", "region": "mars-1"})).await.expect_error(400, "region");
    // ap-south has no VPCs capability in the default catalog.
    api.post("/vpcs", json!({"label": "r", "region": "ap-south"})).await.expect_error(400, "region");
    assert_eq!(vpc_count(&api).await, 0);
}

#[tokio::test]
async fn every_problem_of_a_request_is_reported_at_once() {
    let s = TestServer::start().await;
    let r = s.api().post("/vpcs", json!({"label": "a--b", "description": "x".repeat(300)})).await;
    r.expect_error(400, "label").expect_error(400, "description").expect_error(400, "region");
}

#[tokio::test]
async fn subnets_on_create_need_ipv4_and_label_and_errors_name_the_nested_field() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api
        .post(
            "/vpcs",
            json!({"label": "n", "region": "us-east", "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}, {"label": "b"}, {"ipv4": "10.0.2.0/24"}]}),
        )
        .await;
    r.expect_error(400, "subnets[1].ipv4").expect_error(400, "subnets[2].label");
    assert_eq!(r.fields().len(), 2, "{}", r.text);
}

#[tokio::test]
async fn subnet_ipv4_must_be_canonical_private_sized_and_outside_the_reserved_block() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "cidrs", &[]).await;
    let url = format!("/vpcs/{}/subnets", id(&v));
    for bad in [
        "10.0.0.1/24",
        "10.0.0.0",
        "nonsense",
        "10.0.0.0/33",
        "8.8.8.0/24",
        "172.32.0.0/16",
        "10.0.0.0/30",
        "10.0.0.0/32",
        "0.0.0.0/0",
        "192.168.128.0/24",
        "192.168.0.0/16",
        "192.168.200.0/29",
    ] {
        api.post(&url, json!({"label": "s", "ipv4": bad})).await.expect_error(400, "ipv4");
        api.post("/vpcs", json!({"label": "n2", "region": "us-east", "subnets": [{"label": "s", "ipv4": bad}]}))
            .await
            .expect_error(400, "subnets[0].ipv4");
    }
    let r = api.post(&url, json!({"label": "s", "ipv4": "10.0.0.1/24"})).await;
    assert!(r.body["errors"][0]["reason"].as_str().unwrap().contains("10.0.0.0/24"), "{}", r.text);
    assert_eq!(api.get(&url).await.ok()["results"], 0, "nothing was created");
    for (i, good) in ["10.0.0.0/24", "172.16.0.0/12", "192.168.0.0/17"].iter().enumerate() {
        api.post(&url, json!({"label": format!("g{i}"), "ipv4": good})).await.ok();
    }
    assert_eq!(api.get(&url).await.ok()["results"], 3);
}

#[tokio::test]
async fn prefix_lengths_from_1_to_29_are_accepted() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "p1", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.0/8"}]}))
        .await
        .ok();
    api.post("/vpcs", json!({"label": "p29", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.8/29"}]}))
        .await
        .ok();
    api.post("/vpcs", json!({"label": "p30", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.8/30"}]}))
        .await
        .expect_error(400, "subnets[0].ipv4");
}

#[tokio::test]
async fn subnets_of_one_vpc_must_not_overlap() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "ov", &[("a", "10.0.0.0/16")]).await;
    let url = format!("/vpcs/{}/subnets", id(&v));
    for bad in ["10.0.5.0/24", "10.0.0.0/8", "10.0.255.248/29"] {
        let r = api.post(&url, json!({"label": "b", "ipv4": bad})).await;
        r.expect_error(400, "ipv4");
        assert!(r.text.contains("10.0.0.0/16"), "names the overlapped subnet: {}", r.text);
    }
    api.post(&url, json!({"label": "b", "ipv4": "10.1.0.0/16"})).await.ok();
    // Overlap inside one create request.
    api.post(
        "/vpcs",
        json!({"label": "ov2", "region": "us-east", "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}, {"label": "b", "ipv4": "10.0.0.128/25"}]}),
    )
    .await
    .expect_error(400, "subnets[1].ipv4");
    // Another VPC may use the same range.
    create_vpc(&api, "ov3", &[("a", "10.0.0.0/16")]).await;
}

#[tokio::test]
async fn subnet_ipv4_is_not_updatable() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "fixed", &[("a", "10.0.0.0/24")]).await;
    let url = format!("/vpcs/{}/subnets/{}", id(&v), id(&v["subnets"][0]));
    api.put(&url, json!({"ipv4": "10.0.1.0/24"})).await.expect_error(400, "ipv4");
    api.put(&url, json!({"label": "renamed", "ipv4": "10.0.0.0/24"})).await.expect_error(400, "ipv4");
    let got = api.get(&url).await;
    assert_eq!(got.ok()["ipv4"], "10.0.0.0/24");
    assert_eq!(got.body["label"], "a", "nothing changed");
    assert_eq!(api.put(&url, json!({"label": "renamed"})).await.ok()["label"], "renamed");
}

#[tokio::test]
async fn subnet_labels_follow_the_rules_and_are_unique_per_vpc() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "sl", &[("a", "10.0.0.0/24")]).await;
    let url = format!("/vpcs/{}/subnets", id(&v));
    for bad in ["", "x--y", "x_y", &"x".repeat(65)] {
        api.post(&url, json!({"label": bad, "ipv4": "10.0.1.0/24"})).await.expect_error(400, "label");
    }
    api.post(&url, json!({"label": "a", "ipv4": "10.0.1.0/24"})).await.expect_error(400, "label");
    api.post(&url, json!({"ipv4": "10.0.1.0/24"})).await.expect_error(400, "label");
    api.post(&url, json!({"label": "b"})).await.expect_error(400, "ipv4");
    let b = api.post(&url, json!({"label": "b", "ipv4": "10.0.1.0/24"})).await;
    let bid = id(b.ok());
    api.put(&format!("{url}/{bid}"), json!({"label": "a"})).await.expect_error(400, "label");
    api.put(&format!("{url}/{bid}"), json!({"label": "x--y"})).await.expect_error(400, "label");
    assert_eq!(api.get(&format!("{url}/{bid}")).await.ok()["label"], "b");
    // Within one create request, and the same label in another VPC.
    api.post(
        "/vpcs",
        json!({"label": "sl2", "region": "us-east", "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}, {"label": "a", "ipv4": "10.0.1.0/24"}]}),
    )
    .await
    .expect_error(400, "subnets[1].label");
    create_vpc(&api, "sl3", &[("a", "10.0.0.0/24")]).await;
}

#[tokio::test]
async fn a_vpc_with_one_bad_subnet_is_not_created_at_all() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api
        .post(
            "/vpcs",
            json!({"label": "whole", "region": "us-east", "subnets": [{"label": "ok", "ipv4": "10.0.0.0/24"}, {"label": "bad", "ipv4": "8.8.8.0/24"}]}),
        )
        .await;
    r.expect_error(400, "subnets[1].ipv4");
    assert_eq!(vpc_count(&api).await, 0);
    let actions = event_actions(&api).await;
    assert!(!actions.iter().any(|a| a == "vpc_create" || a == "subnet_create"), "{actions:?}");
    // The label is still free.
    create_vpc(&api, "whole", &[("ok", "10.0.0.0/24")]).await;
}

#[tokio::test]
async fn deleting_a_vpc_deletes_its_subnets_with_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "gone", &[("a", "10.0.0.0/24"), ("b", "10.0.1.0/24")]).await;
    let vid = id(&v);
    assert_eq!(api.delete(&format!("/vpcs/{vid}")).await.ok(), &json!({}));
    api.get(&format!("/vpcs/{vid}")).await.expect_error(404, "-");
    api.get(&format!("/vpcs/{vid}/subnets")).await.expect_error(404, "-");
    api.get(&format!("/vpcs/{vid}/subnets/{}", id(&v["subnets"][0]))).await.expect_error(404, "-");
    let actions = event_actions(&api).await;
    assert_eq!(&actions[..3], ["subnet_delete", "subnet_delete", "vpc_delete"]);
    // The label is free again.
    create_vpc(&api, "gone", &[("a", "10.0.0.0/24")]).await;
}

#[tokio::test]
async fn subnets_are_added_renamed_and_removed_one_by_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "steps", &[("a", "10.0.0.0/24")]).await;
    let url = format!("/vpcs/{}/subnets", id(&v));
    let b = api.post(&url, json!({"label": "b", "ipv4": "10.0.1.0/24"})).await.ok().clone();
    assert_eq!(api.get(&format!("/vpcs/{}", id(&v))).await.ok()["subnets"].as_array().unwrap().len(), 2);
    api.put(&format!("{url}/{}", id(&b)), json!({"label": "bee"})).await.ok();
    assert_eq!(api.delete(&format!("{url}/{}", id(&b))).await.ok(), &json!({}));
    api.get(&format!("{url}/{}", id(&b))).await.expect_error(404, "-");
    api.delete(&format!("{url}/{}", id(&b))).await.expect_error(404, "-");
    assert_eq!(api.get(&url).await.ok()["results"], 1);
    // A subnet id of another VPC is not found under this one.
    let w = create_vpc(&api, "steps2", &[("z", "10.9.0.0/24")]).await;
    api.get(&format!("{url}/{}", id(&w["subnets"][0]))).await.expect_error(404, "-");
    api.delete(&format!("{url}/{}", id(&w["subnets"][0]))).await.expect_error(404, "-");
}

#[tokio::test]
async fn every_change_emits_its_event_with_entity_and_secondary_vpc() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "ev", &[("a", "10.0.0.0/24"), ("b", "10.0.1.0/24")]).await;
    let vid = id(&v);
    let r = api.get("/account/events").await;
    let ev = r.ok()["data"].as_array().unwrap().clone();
    assert_eq!(ev[2]["action"], "vpc_create");
    assert_eq!(ev[2]["entity"], json!({"id": vid, "label": "ev", "type": "vpc", "url": format!("/v4/vpcs/{vid}")}));
    for e in &ev[..2] {
        assert_eq!(e["action"], "subnet_create");
        assert_eq!(e["entity"]["type"], "subnet");
        assert_eq!(e["secondary_entity"]["type"], "vpc");
        assert_eq!(e["secondary_entity"]["id"], vid.to_string());
    }
    assert_eq!(ev[0]["entity"]["label"], "b");
    let sid = id(&v["subnets"][0]);
    assert_eq!(ev[1]["entity"]["url"], format!("/v4/vpcs/{vid}/subnets/{sid}"));
    api.put(&format!("/vpcs/{vid}"), json!({"label": "ev2"})).await.ok();
    api.put(&format!("/vpcs/{vid}/subnets/{sid}"), json!({"label": "a2"})).await.ok();
    let c = api.post(&format!("/vpcs/{vid}/subnets"), json!({"label": "c", "ipv4": "10.0.2.0/24"})).await;
    api.delete(&format!("/vpcs/{vid}/subnets/{}", id(c.ok()))).await.ok();
    let r = api.get("/account/events").await;
    let ev = r.ok()["data"].as_array().unwrap().clone();
    let actions: Vec<&str> = ev.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(&actions[..4], ["subnet_delete", "subnet_create", "subnet_update", "vpc_update"]);
    assert_eq!(ev[2]["entity"]["label"], "a2");
    assert_eq!(ev[2]["secondary_entity"]["label"], "ev2");
    assert_eq!(ev[3]["entity"]["label"], "ev2");
    assert_eq!(ev[0]["entity"]["label"], "c");
}

#[tokio::test]
async fn vpc_lists_are_paged_and_filtered() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..30 {
        let region = if i % 3 == 0 { "us-west" } else { "us-east" };
        api.post("/vpcs", json!({"label": format!("net-{i:02}"), "region": region})).await.ok();
    }
    let p2 = api.get("/vpcs?page=2&page_size=25").await;
    assert_eq!(p2.ok()["results"], 30);
    assert_eq!(p2.body["pages"], 2);
    assert_eq!(p2.body["data"].as_array().unwrap().len(), 5);
    let west = api.get_filtered("/vpcs", r#"{"region": "us-west"}"#).await;
    assert_eq!(west.ok()["results"], 10);
    let one = api.get_filtered("/vpcs", r#"{"label": "net-07"}"#).await;
    assert_eq!(one.ok()["data"][0]["label"], "net-07");
    let desc = api.get_filtered("/vpcs", r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(desc.ok()["data"][0]["label"], "net-29");
    api.get_filtered("/vpcs", r#"{"subnets": 1}"#).await.expect_error(400, "X-Filter");
    let v = create_vpc(&api, "subs", &[("a", "10.0.0.0/24"), ("b", "10.0.1.0/24")]).await;
    let r = api.get_filtered(&format!("/vpcs/{}/subnets", id(&v)), r#"{"label": "b"}"#).await;
    assert_eq!(r.ok()["results"], 1);
}

#[tokio::test]
async fn vpc_scopes_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "scoped", &[("a", "10.0.0.0/24")]).await;
    let ro = api.post("/profile/tokens", json!({"scopes": "vpc:read_only"})).await;
    let ro = s.api_with(ro.ok()["token"].as_str().unwrap());
    ro.get("/vpcs").await.ok();
    ro.get(&format!("/vpcs/{}", id(&v))).await.ok();
    ro.post("/vpcs", json!({"label": "nope", "region": "us-east"})).await.expect_error(403, "-");
    ro.put(&format!("/vpcs/{}", id(&v)), json!({"label": "nope"})).await.expect_error(403, "-");
    ro.delete(&format!("/vpcs/{}", id(&v))).await.expect_error(403, "-");
    ro.get("/vpcs/ips").await.expect_error(403, "-");
    ro.get(&format!("/vpcs/{}/ips", id(&v))).await.expect_error(403, "-");
    let ips = api.post("/profile/tokens", json!({"scopes": "ips:read_only"})).await;
    let ips = s.api_with(ips.ok()["token"].as_str().unwrap());
    ips.get("/vpcs/ips").await.ok();
    ips.get(&format!("/vpcs/{}/ips", id(&v))).await.ok();
    ips.get("/vpcs").await.expect_error(403, "-");
    assert_eq!(api.get(&format!("/vpcs/{}", id(&v))).await.ok()["label"], "scoped");
}

#[tokio::test]
async fn restricted_users_need_add_vpcs_and_get_read_write_on_what_they_create() {
    let s = TestServer::start().await;
    let api = s.api();
    let theirs = create_vpc(&api, "owners", &[("a", "10.0.0.0/24")]).await;
    let (_, bob) = user_with_token(&s, "bobvpc", true, "*").await;
    bob.post("/vpcs", json!({"label": "bobs", "region": "us-east"})).await.expect_error(403, "-");
    assert_eq!(bob.get("/vpcs").await.ok()["results"], 0, "no grants: empty list");
    let tid = id(&theirs);
    let sid = id(&theirs["subnets"][0]);
    for path in [
        format!("/vpcs/{tid}"),
        format!("/vpcs/{tid}/subnets"),
        format!("/vpcs/{tid}/subnets/{sid}"),
        format!("/vpcs/{tid}/ips"),
    ] {
        bob.get(&path).await.expect_error(404, "-");
    }
    bob.put(&format!("/vpcs/{tid}"), json!({"label": "x"})).await.expect_error(404, "-");
    bob.delete(&format!("/vpcs/{tid}")).await.expect_error(404, "-");
    bob.post(&format!("/vpcs/{tid}/subnets"), json!({"label": "x", "ipv4": "10.1.0.0/24"}))
        .await
        .expect_error(404, "-");
    assert_eq!(bob.get("/vpcs/ips").await.ok()["results"], 0);

    api.put(
        "/account/users/bobvpc/grants",
        json!({"global": {"add_vpcs": true}, "vpc": [{"id": tid, "permissions": "read_only"}]}),
    )
    .await
    .ok();
    let mine = bob.post("/vpcs", json!({"label": "bobs", "region": "us-east"})).await;
    let mid = id(mine.ok());
    let grants = api.get("/account/users/bobvpc/grants").await;
    let g = grants.ok()["vpc"].as_array().unwrap().iter().find(|g| g["id"] == mid).unwrap().clone();
    assert_eq!(g["permissions"], "read_write");
    assert_eq!(bob.get("/vpcs").await.ok()["results"], 2);
    bob.get(&format!("/vpcs/{tid}")).await.ok();
    bob.get(&format!("/vpcs/{tid}/subnets/{sid}")).await.ok();
    bob.put(&format!("/vpcs/{tid}"), json!({"label": "x"})).await.expect_error(403, "-");
    bob.delete(&format!("/vpcs/{tid}")).await.expect_error(403, "-");
    bob.post(&format!("/vpcs/{tid}/subnets"), json!({"label": "x", "ipv4": "10.1.0.0/24"}))
        .await
        .expect_error(403, "-");
    bob.put(&format!("/vpcs/{tid}/subnets/{sid}"), json!({"label": "x"})).await.expect_error(403, "-");
    bob.delete(&format!("/vpcs/{tid}/subnets/{sid}")).await.expect_error(403, "-");
    assert_eq!(api.get(&format!("/vpcs/{tid}")).await.ok()["label"], "owners", "nothing changed");
    bob.put(&format!("/vpcs/{mid}"), json!({"label": "bobs2"})).await.ok();
    bob.post(&format!("/vpcs/{mid}/subnets"), json!({"label": "x", "ipv4": "10.1.0.0/24"})).await.ok();
    // Bob sees the events of what he may see, not of the owner's other VPCs.
    create_vpc(&api, "hidden", &[]).await;
    let ev = bob.get("/account/events").await;
    let labels: Vec<&str> =
        ev.ok()["data"].as_array().unwrap().iter().filter_map(|e| e["entity"]["label"].as_str()).collect();
    assert!(labels.contains(&"bobs2") && !labels.contains(&"hidden"), "{labels:?}");
    bob.delete(&format!("/vpcs/{mid}")).await.ok();
}

#[tokio::test]
async fn another_accounts_vpcs_are_not_found() {
    let s = TestServer::start().await;
    let v = create_vpc(&s.api(), "mine", &[("a", "10.0.0.0/24")]).await;
    let other = other_account(&s);
    let vid = id(&v);
    other.get(&format!("/vpcs/{vid}")).await.expect_error(404, "-");
    other.delete(&format!("/vpcs/{vid}")).await.expect_error(404, "-");
    other
        .post(&format!("/vpcs/{vid}/subnets"), json!({"label": "b", "ipv4": "10.0.1.0/24"}))
        .await
        .expect_error(404, "-");
    assert_eq!(other.get("/vpcs").await.ok()["results"], 0);
    assert_eq!(s.api().get(&format!("/vpcs/{vid}")).await.ok()["subnets"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn concurrent_creates_of_one_vpc_label_make_exactly_one_vpc() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({"label": "racer", "region": "us-east", "subnets": [{"label": format!("s{i}"), "ipv4": "10.0.0.0/24"}]});
            api.post("/vpcs", body).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 15, "{codes:?}");
    let list = api.get("/vpcs").await;
    assert_eq!(list.ok()["results"], 1);
    assert_eq!(list.body["data"][0]["subnets"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn concurrent_overlapping_subnet_creates_leave_exactly_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "race", &[]).await;
    let url = format!("/vpcs/{}/subnets", id(&v));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (api, url) = (api.clone(), url.clone());
        // All overlap 10.0.0.0/24: /24, /23, /25 ... with distinct labels.
        let cidr = ["10.0.0.0/24", "10.0.0.0/23", "10.0.0.128/25", "10.0.0.0/16"][i % 4];
        tasks.push(tokio::spawn(async move {
            api.post(&url, json!({"label": format!("s{i}"), "ipv4": cidr})).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 15, "{codes:?}");
    assert_eq!(api.get(&url).await.ok()["results"], 1);
}

#[tokio::test]
async fn a_subnet_create_racing_a_vpc_delete_leaves_no_orphan() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..6 {
        let v = create_vpc(&api, &format!("doomed-{round}"), &[("a", "10.0.0.0/24")]).await;
        let vid = id(&v);
        let mut tasks = Vec::new();
        for i in 0..8 {
            let api = api.clone();
            tasks.push(tokio::spawn(async move {
                api.post(
                    &format!("/vpcs/{vid}/subnets"),
                    json!({"label": format!("n{i}"), "ipv4": format!("10.1.{i}.0/24")}),
                )
                .await
                .status
            }));
        }
        let del = {
            let api = api.clone();
            tokio::spawn(async move { api.delete(&format!("/vpcs/{vid}")).await.status })
        };
        let mut created = 0;
        for t in tasks {
            let c = t.await.unwrap();
            assert!(c == 200 || c == 404, "subnet create answered {c}");
            created += usize::from(c == 200);
        }
        assert_eq!(del.await.unwrap(), 200);
        api.get(&format!("/vpcs/{vid}")).await.expect_error(404, "-");
        // Every subnet_create event that committed is matched by a subnet_delete event: nothing
        // outlived its VPC.
        let r = api.get_filtered("/account/events?page_size=500", r#"{"action": "subnet_create"}"#).await;
        let creates_here = r.ok()["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["secondary_entity"]["id"].as_str() == Some(vid.to_string().as_str()))
            .count();
        let r = api.get_filtered("/account/events?page_size=500", r#"{"action": "subnet_delete"}"#).await;
        let deletes_here = r.ok()["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["secondary_entity"]["id"].as_str() == Some(vid.to_string().as_str()))
            .count();
        assert_eq!(creates_here, 1 + created);
        assert_eq!(deletes_here, creates_here, "round {round}: a subnet outlived its VPC");
    }
    let orphans = db_scalar(&s, "SELECT COUNT(*) FROM vpc_subnets WHERE vpc_id NOT IN (SELECT id FROM vpcs)").await;
    assert_eq!(orphans, 0);
}
