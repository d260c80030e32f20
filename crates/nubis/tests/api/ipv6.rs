//! IPv6 pools and ranges (spec 2.10, 4.10) and VLANs.

use serde_json::{Value, json};

use crate::instances::{create_instance, id};
use crate::support::*;

fn slaac(inst: &Value) -> String {
    inst["ipv6"].as_str().unwrap().trim_end_matches("/128").to_string()
}

#[tokio::test]
async fn a_range_is_created_for_an_instance_and_viewed() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&inst)})).await;
    let created = r.ok().clone();
    assert_eq!(created["range"], "2001:db8:a00::/64", "the first /64 of us-east's block 2001:db8:a00::/40");
    assert_eq!(created["route_target"], slaac(&inst));
    let list = api.get("/networking/ipv6/ranges").await;
    assert_eq!(
        list.ok()["data"][0],
        json!({"range": "2001:db8:a00::", "prefix": 64, "region": "us-east", "route_target": slaac(&inst)})
    );
    let v = api.get("/networking/ipv6/ranges/2001:db8:a00::").await;
    assert_eq!(
        v.ok(),
        &json!({"range": "2001:db8:a00::", "prefix": 64, "region": "us-east", "route_target": slaac(&inst), "is_bgp": false, "instances": [id(&inst)]})
    );
    // Any spelling of the first address, with or without the prefix length.
    api.get("/networking/ipv6/ranges/2001:0db8:0a00:0000::").await.ok();
    api.get("/networking/ipv6/ranges/2001:db8:a00::%2F64").await.ok();
    api.get("/networking/ipv6/ranges/2001:db8:a00::%2F56").await.expect_error(404, "-");
    api.get("/networking/ipv6/ranges/2001:db8:ffff::").await.expect_error(404, "-");
    // The instance's addresses and the address list show it.
    let ips = api.get(&format!("/compute/instances/{}/ips", id(&inst))).await;
    assert_eq!(ips.ok()["ipv6"]["global"][0]["range"], "2001:db8:a00::");
    let all = api.get_filtered("/networking/ips", r#"{"type": "ipv6/range"}"#).await;
    assert_eq!(all.ok()["data"][0]["address"], "2001:db8:a00::");
    assert_eq!(all.body["data"][0]["prefix"], 64);
}

#[tokio::test]
async fn a_range_is_created_for_a_route_target() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-west", json!({"booted": false})).await;
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 56, "route_target": slaac(&inst)})).await;
    assert_eq!(r.ok()["range"], "2001:db8:b00::/56");
    assert_eq!(r.body["route_target"], slaac(&inst));
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "route_target": "2001:db8:b::1"})).await;
    r.expect_error(400, "route_target");
    let r = api
        .post("/networking/ipv6/ranges", json!({"prefix_length": 64, "route_target": format!("{}/128", slaac(&inst))}))
        .await;
    r.expect_error(400, "route_target");
}

#[tokio::test]
async fn instance_id_and_route_target_are_mutually_exclusive_and_one_is_required() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let both = json!({"prefix_length": 64, "instance_id": id(&inst), "route_target": slaac(&inst)});
    api.post("/networking/ipv6/ranges", both).await.expect_error(400, "instance_id").expect_error(400, "route_target");
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64}))
        .await
        .expect_error(400, "instance_id")
        .expect_error(400, "route_target");
    for bad in [json!(48), json!(128), json!(null), json!("64")] {
        api.post("/networking/ipv6/ranges", json!({"prefix_length": bad, "instance_id": id(&inst)}))
            .await
            .expect_error(400, "prefix_length");
    }
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": 999999}))
        .await
        .expect_error(400, "instance_id");
    assert_eq!(api.get("/networking/ipv6/ranges").await.ok()["results"], 0, "nothing was created");
}

#[tokio::test]
async fn one_range_per_account_and_region_and_per_instance() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"label": "alpha", "booted": false})).await;
    let b = create_instance(&api, "us-east", json!({"label": "bravo", "booted": false})).await;
    let w = create_instance(&api, "us-west", json!({"label": "west", "booted": false})).await;
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 56, "instance_id": id(&a)})).await.ok();
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&b)})).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("one IPv6 range per region"), "{}", r.text);
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)}))
        .await
        .expect_error(400, "-");
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&w)})).await.ok();
    assert_eq!(api.get("/networking/ipv6/ranges").await.ok()["results"], 2);
    // Another account in the same region gets a block that does not overlap.
    let other = other_account(&s);
    let o = create_instance(&other, "us-east", json!({"booted": false})).await;
    let r = other.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&o)})).await;
    assert_eq!(r.ok()["range"], "2001:db8:a00:100::/64", "after the first account's /56");
    other.get("/networking/ipv6/ranges/2001:db8:a00::").await.expect_error(404, "-");
    other.delete("/networking/ipv6/ranges/2001:db8:a00::").await.expect_error(404, "-");
    // Deleting frees the region for a new range.
    api.delete("/networking/ipv6/ranges/2001:db8:a00::").await.ok();
    api.get("/networking/ipv6/ranges/2001:db8:a00::").await.expect_error(404, "-");
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&b)})).await;
    assert_eq!(r.ok()["range"], "2001:db8:a00::/64");
}

#[tokio::test]
async fn deleting_an_instance_frees_its_range() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"booted": false})).await;
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)})).await.ok();
    api.delete(&format!("/compute/instances/{}", id(&a))).await.ok();
    assert_eq!(api.get("/networking/ipv6/ranges").await.ok()["results"], 0);
    let b = create_instance(&api, "us-east", json!({"booted": false})).await;
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&b)})).await.ok();
}

#[tokio::test]
async fn concurrent_range_creates_in_a_region_leave_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(id(&create_instance(&api, "us-east", json!({"label": format!("r{i}xx"), "booted": false})).await));
    }
    let mut tasks = Vec::new();
    for iid in ids {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": iid})).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 5, "{codes:?}");
    assert_eq!(api.get("/networking/ipv6/ranges").await.ok()["results"], 1);
}

#[tokio::test]
async fn pools_are_listed_for_the_regions_with_instances() {
    let s = TestServer::start().await;
    let api = s.api();
    assert_eq!(api.get("/networking/ipv6/pools").await.ok()["results"], 0);
    create_instance(&api, "us-west", json!({"booted": false})).await;
    let r = api.get("/networking/ipv6/pools").await;
    assert_eq!(
        r.ok()["data"],
        json!([{"range": "2001:db8:b::", "prefix": 64, "region": "us-west", "route_target": null}])
    );
}

#[tokio::test]
async fn range_scopes_and_grants_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"label": "alpha", "booted": false})).await;
    let (_, bob) = user_with_token(&s, "bobrange", true, "*").await;
    bob.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)}))
        .await
        .expect_error(400, "instance_id");
    api.put("/account/users/bobrange/grants", json!({"instance": [{"id": id(&a), "permissions": "read_only"}]}))
        .await
        .ok();
    bob.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)}))
        .await
        .expect_error(403, "-");
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)})).await.ok();
    bob.get("/networking/ipv6/ranges/2001:db8:a00::").await.ok();
    bob.delete("/networking/ipv6/ranges/2001:db8:a00::").await.expect_error(403, "-");
    let ro = api.post("/profile/tokens", json!({"scopes": "ips:read_only"})).await;
    let ro = s.api_with(ro.ok()["token"].as_str().unwrap());
    ro.get("/networking/ipv6/ranges/2001:db8:a00::").await.ok();
    ro.get("/networking/ipv6/pools").await.ok();
    ro.delete("/networking/ipv6/ranges/2001:db8:a00::").await.expect_error(403, "-");
    ro.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)}))
        .await
        .expect_error(403, "-");
    api.get("/networking/ipv6/ranges/2001:db8:a00::").await.ok();
}

#[tokio::test]
async fn vlans_exist_through_instance_interfaces() {
    let s = TestServer::start().await;
    let api = s.api();
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 0);
    let vlan = |label: &str| json!([{"purpose": "public"}, {"purpose": "vlan", "label": label, "ipam_address": "10.9.0.1/24"}]);
    let a = create_instance(&api, "us-east", json!({"label": "alpha", "booted": false, "interfaces": vlan("backend")}))
        .await;
    let b = create_instance(&api, "us-east", json!({"label": "bravo", "booted": false, "interfaces": vlan("backend")}))
        .await;
    let w = create_instance(&api, "us-west", json!({"label": "west", "booted": false, "interfaces": vlan("backend")}))
        .await;
    let r = api.get("/networking/vlans").await;
    let data = r.ok()["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 2);
    let east = data.iter().find(|v| v["region"] == "us-east").unwrap();
    assert_eq!(east["label"], "backend");
    assert_eq!(east["instances"], json!([id(&a), id(&b)]));
    assert!(east["created"].is_string());
    let west = api.get_filtered("/networking/vlans", r#"{"region": "us-west"}"#).await;
    assert_eq!(west.ok()["data"][0]["instances"], json!([id(&w)]));
    // A restricted user sees the VLANs of the instances it may see.
    let (_, bob) = user_with_token(&s, "bobvlan", true, "*").await;
    assert_eq!(bob.get("/networking/vlans").await.ok()["results"], 0);
    api.put("/account/users/bobvlan/grants", json!({"instance": [{"id": id(&b), "permissions": "read_only"}]}))
        .await
        .ok();
    let seen = bob.get("/networking/vlans").await;
    assert_eq!(
        seen.ok()["data"],
        json!([{"label": "backend", "region": "us-east", "instances": [id(&b)], "created": east["created"]}])
    );
    // The VLAN goes with its last instance.
    api.delete(&format!("/compute/instances/{}", id(&w))).await.ok();
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 1);
}

#[tokio::test]
async fn vlans_only_in_regions_with_the_capability_and_at_most_ten_per_region() {
    let s = TestServer::start().await;
    let api = s.api();
    let body = |label: String, region: &str| json!({"region": region, "type": "g6-nanode-1", "booted": false, "interfaces": [{"purpose": "vlan", "label": label}]});
    api.post("/compute/instances", body("v0".into(), "ap-south")).await.expect_error(400, "interfaces[0].purpose");
    for i in 0..10 {
        api.post("/compute/instances", body(format!("v{i}"), "us-east")).await.ok();
    }
    let r = api.post("/compute/instances", body("v10".into(), "us-east")).await;
    r.expect_error(400, "interfaces[0].label");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 10);
    // An existing VLAN can still be joined, and another region has its own ten.
    api.post("/compute/instances", body("v3".into(), "us-east")).await.ok();
    api.post("/compute/instances", body("v10".into(), "us-west")).await.ok();
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 11);
}
