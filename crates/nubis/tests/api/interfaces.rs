//! Instance interfaces on VPC subnets (reference `LinodeConfigInterface`), what the VPC side
//! shows of them (subnet `instances`, `/v4/vpcs/ips`) and the VPC and subnet delete rules they
//! make testable.

use serde_json::{Value, json};

use crate::instances::{create_instance, id, wait_status};
use crate::support::*;
use crate::vpcs::create_vpc;

fn vpc_iface(subnet_id: i64, extra: Value) -> Value {
    let mut f = json!({"purpose": "vpc", "subnet_id": subnet_id});
    for (k, v) in extra.as_object().unwrap() {
        f[k] = v.clone();
    }
    f
}

async fn vpc_with_subnet(api: &Api, label: &str, cidr: &str) -> (i64, i64) {
    let v = create_vpc(api, label, &[("sub", cidr)]).await;
    (id(&v), id(&v["subnets"][0]))
}

async fn vpc_address(api: &Api, instance_id: i64) -> String {
    let ips = api.get(&format!("/compute/instances/{instance_id}/ips")).await;
    ips.ok()["ipv4"]["vpc"][0]["address"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn vpc_addresses_are_allocated_in_the_subnet_skipping_its_first_and_last_two() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/29").await;
    let mut got = Vec::new();
    for i in 0..4 {
        let inst = create_instance(
            &api,
            "us-east",
            json!({"label": format!("vm{i}x"), "booted": false, "interfaces": [{"purpose": "public"}, vpc_iface(sid, json!({}))]}),
        )
        .await;
        got.push(vpc_address(&api, id(&inst)).await);
    }
    assert_eq!(got, ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"]);
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "label": "vm-full", "interfaces": [vpc_iface(sid, json!({}))]}),
        )
        .await;
    r.expect_error(400, "interfaces[0].subnet_id");
    assert!(r.text.contains("No address is left"), "{}", r.text);
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 4, "nothing was created");
}

#[tokio::test]
async fn an_explicit_vpc_address_must_be_usable_and_free() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/24").await;
    let body = |label: &str, a: &str| json!({"region": "us-east", "type": "g6-nanode-1", "label": label, "booted": false, "interfaces": [vpc_iface(sid, json!({"ipv4": {"vpc": a}}))]});
    for bad in ["10.0.0.0", "10.0.0.1", "10.0.0.254", "10.0.0.255", "10.0.1.5", "not-an-ip"] {
        api.post("/compute/instances", body("bad-one", bad)).await.expect_error(400, "interfaces[0].ipv4.vpc");
    }
    let inst = api.post("/compute/instances", body("first", "10.0.0.50")).await;
    assert_eq!(vpc_address(&api, id(inst.ok())).await, "10.0.0.50");
    api.post("/compute/instances", body("second", "10.0.0.50")).await.expect_error(400, "interfaces[0].ipv4.vpc");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 1);
    let auto =
        create_instance(&api, "us-east", json!({"booted": false, "interfaces": [vpc_iface(sid, json!({}))]})).await;
    assert_eq!(vpc_address(&api, id(&auto)).await, "10.0.0.2");
}

#[tokio::test]
async fn nat_1_1_any_uses_the_instances_public_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let (vid, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/24").await;
    let inst = create_instance(
        &api,
        "us-east",
        json!({"booted": false, "interfaces": [vpc_iface(sid, json!({"ipv4": {"nat_1_1": "any"}, "primary": true}))]}),
    )
    .await;
    let public = inst["ipv4"][0].as_str().unwrap();
    let ips = api.get(&format!("/compute/instances/{}/ips", id(&inst))).await.ok().clone();
    assert_eq!(ips["ipv4"]["vpc"][0]["nat_1_1"], public);
    assert_eq!(
        ips["ipv4"]["public"][0]["vpc_nat_1_1"],
        json!({"address": "10.0.0.2", "subnet_id": sid, "vpc_id": vid})
    );
    let one = api.get(&format!("/networking/ips/{public}")).await;
    assert_eq!(one.ok()["vpc_nat_1_1"]["vpc_id"], vid);
    // The address list shows the mapping on the public IPv4 address, and on no other entry.
    let listed = api.get("/networking/ips").await.ok().clone();
    let nat: Vec<(&str, &Value)> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["address"].as_str().unwrap(), &a["vpc_nat_1_1"]))
        .collect();
    assert!(nat.len() >= 2, "{listed}");
    for (address, mapping) in nat {
        let want = if address == public {
            json!({"address": "10.0.0.2", "subnet_id": sid, "vpc_id": vid})
        } else {
            Value::Null
        };
        assert_eq!(*mapping, want, "{address}");
    }
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "interfaces": [vpc_iface(sid, json!({"ipv4": {"nat_1_1": "127.10.0.99"}}))]}),
        )
        .await;
    r.expect_error(400, "interfaces[0].ipv4.nat_1_1");
}

#[tokio::test]
async fn subnets_and_vpc_address_lists_show_the_interfaces_and_whether_they_are_active() {
    let s = TestServer::start().await;
    let api = s.api();
    let (vid, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/24").await;
    let (vid2, sid2) = vpc_with_subnet(&api, "net2", "10.1.0.0/16").await;
    let a = create_instance(&api, "us-east", json!({"booted": false, "interfaces": [vpc_iface(sid, json!({}))]})).await;
    let b = create_instance(&api, "us-east", json!({"interfaces": [vpc_iface(sid2, json!({}))]})).await;
    wait_status(&api, id(&a), "offline").await;
    wait_status(&api, id(&b), "running").await;
    let sub = api.get(&format!("/vpcs/{vid}/subnets/{sid}")).await.ok().clone();
    let insts = sub["instances"].as_array().unwrap();
    assert_eq!(insts.len(), 1);
    assert_eq!(insts[0]["id"], id(&a));
    assert_eq!(insts[0]["interfaces"][0]["active"], false);
    let sub2 = api.get(&format!("/vpcs/{vid2}")).await.ok()["subnets"][0].clone();
    assert_eq!(sub2["instances"][0]["interfaces"][0]["active"], true);
    let all = api.get("/vpcs/ips").await;
    assert_eq!(all.ok()["results"], 2);
    let rec = &api.get(&format!("/vpcs/{vid}/ips")).await.ok()["data"][0].clone();
    assert_eq!(rec["address"], "10.0.0.2");
    assert_eq!(rec["address_range"], Value::Null);
    assert_eq!(rec["gateway"], "10.0.0.1");
    assert_eq!(rec["prefix"], 24);
    assert_eq!(rec["subnet_mask"], "255.255.255.0");
    assert_eq!(rec["instance_id"], id(&a));
    assert_eq!(rec["config_id"], id(&a));
    assert_eq!(rec["interface_id"], insts[0]["interfaces"][0]["id"]);
    assert_eq!(rec["subnet_id"], sid);
    assert_eq!(rec["vpc_id"], vid);
    assert_eq!(rec["region"], "us-east");
    assert_eq!(rec["active"], false);
    assert_eq!(rec["nat_1_1"], Value::Null);
    let active = api.get_filtered("/vpcs/ips", r#"{"active": true}"#).await;
    assert_eq!(active.ok()["results"], 1);
    assert_eq!(active.body["data"][0]["vpc_id"], vid2);
    same_subnet_everywhere(&api, vid, sid, false).await;
    same_subnet_everywhere(&api, vid2, sid2, true).await;
    // Booting the first makes its interface active.
    api.post_empty(&format!("/compute/instances/{}/boot", id(&a))).await.ok();
    wait_status(&api, id(&a), "running").await;
    assert_eq!(api.get(&format!("/vpcs/{vid}/ips")).await.ok()["data"][0]["active"], true);
    same_subnet_everywhere(&api, vid, sid, true).await;
}

/// A subnet is the same record in its VPC's record, in the VPC list, in the subnet list and on
/// its own, with its one interface `active` as given.
async fn same_subnet_everywhere(api: &Api, vid: i64, sid: i64, active: bool) {
    let own = api.get(&format!("/vpcs/{vid}/subnets/{sid}")).await.ok().clone();
    assert_eq!(own["instances"][0]["interfaces"][0]["active"], active, "{own}");
    let in_vpc = api.get(&format!("/vpcs/{vid}")).await.ok()["subnets"].clone();
    let listed = api.get("/vpcs").await.ok()["data"].clone();
    let in_list = listed.as_array().unwrap().iter().find(|v| v["id"] == vid).unwrap()["subnets"].clone();
    let subnets = api.get(&format!("/vpcs/{vid}/subnets")).await.ok()["data"].clone();
    for (place, many) in [("the VPC", in_vpc), ("the VPC list", in_list), ("the subnet list", subnets)] {
        let found = many.as_array().unwrap().iter().find(|s| s["id"] == sid).cloned();
        assert_eq!(found.as_ref(), Some(&own), "subnet {sid} in {place}");
    }
}

#[tokio::test]
async fn interface_rules_are_checked_with_nested_fields() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/24").await;
    let post = |ifaces: Value| {
        let api = api.clone();
        async move {
            api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "interfaces": ifaces}))
                .await
        }
    };
    post(json!([{}])).await.expect_error(400, "interfaces[0].purpose");
    post(json!([{"purpose": "wifi"}])).await.expect_error(400, "interfaces[0].purpose");
    post(json!([{"purpose": "public"}, {"purpose": "public"}])).await.expect_error(400, "interfaces[1].purpose");
    post(json!([{"purpose": "public", "label": "x"}])).await.expect_error(400, "interfaces[0].label");
    post(json!([{"purpose": "public"}, {"purpose": "vlan", "label": "a"}, {"purpose": "vlan", "label": "b"}, {"purpose": "vlan", "label": "c"}]))
        .await
        .expect_error(400, "interfaces");
    post(json!([{"purpose": "vlan"}])).await.expect_error(400, "interfaces[0].label");
    post(json!([{"purpose": "vlan", "label": "a--b"}])).await.expect_error(400, "interfaces[0].label");
    post(json!([{"purpose": "vlan", "label": "v", "primary": true}])).await.expect_error(400, "interfaces[0].primary");
    post(json!([{"purpose": "vlan", "label": "v", "ipam_address": "nope"}]))
        .await
        .expect_error(400, "interfaces[0].ipam_address");
    post(json!([{"purpose": "vlan", "label": "v"}, {"purpose": "vlan", "label": "v"}]))
        .await
        .expect_error(400, "interfaces[1].label");
    post(json!([{"purpose": "vlan", "label": "v", "subnet_id": sid}]))
        .await
        .expect_error(400, "interfaces[0].subnet_id");
    post(json!([{"purpose": "public", "ipv4": {"vpc": "10.0.0.5"}}])).await.expect_error(400, "interfaces[0].ipv4");
    post(json!([{"purpose": "vpc"}])).await.expect_error(400, "interfaces[0].subnet_id");
    post(json!([{"purpose": "vpc", "subnet_id": 987654}])).await.expect_error(400, "interfaces[0].subnet_id");
    post(json!([{"purpose": "vpc", "subnet_id": sid, "ip_ranges": ["10.0.0.64/26"]}]))
        .await
        .expect_error(400, "interfaces[0].ip_ranges");
    post(json!([{"purpose": "public", "primary": true}, {"purpose": "vpc", "subnet_id": sid, "primary": true}]))
        .await
        .expect_error(400, "interfaces");
    // Several problems at once.
    let r = post(json!([{"purpose": "vlan"}, {"purpose": "vpc"}])).await;
    r.expect_error(400, "interfaces[0].label").expect_error(400, "interfaces[1].subnet_id");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 0, "nothing was created");
    assert_eq!(api.get("/vpcs/ips").await.ok()["results"], 0);
}

#[tokio::test]
async fn a_subnet_must_be_in_the_instances_region() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = api
        .post(
            "/vpcs",
            json!({"label": "west", "region": "us-west", "subnets": [{"label": "s", "ipv4": "10.0.0.0/24"}]}),
        )
        .await;
    let sid = id(&v.ok()["subnets"][0]);
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "interfaces": [vpc_iface(sid, json!({}))]}),
        )
        .await;
    r.expect_error(400, "interfaces[0].subnet_id");
    assert!(r.text.contains("us-west"), "{}", r.text);
    // ap-south has no VPCs.
    api.post(
        "/compute/instances",
        json!({"region": "ap-south", "type": "g6-nanode-1", "interfaces": [vpc_iface(sid, json!({}))]}),
    )
    .await
    .expect_error(400, "interfaces[0].purpose");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 0);
}

#[tokio::test]
async fn a_vpc_whose_subnet_is_in_use_is_not_deleted_and_the_subnet_is_named() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "busy", &[("free", "10.0.1.0/24"), ("used", "10.0.0.0/24")]).await;
    let vid = id(&v);
    let (free, used) = (id(&v["subnets"][0]), id(&v["subnets"][1]));
    let inst =
        create_instance(&api, "us-east", json!({"label": "user-vm", "interfaces": [vpc_iface(used, json!({}))]})).await;
    let iid = id(&inst);
    wait_status(&api, iid, "running").await;
    let r = api.delete(&format!("/vpcs/{vid}")).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("'used'") && r.text.contains("user-vm"), "{}", r.text);
    assert!(r.text.contains("shut down"), "active interfaces need the instance shut down: {}", r.text);
    assert!(!r.text.contains("'free'"), "{}", r.text);
    let r = api.delete(&format!("/vpcs/{vid}/subnets/{used}")).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("'used'") && r.text.contains("shut down"), "{}", r.text);
    // Nothing was deleted, not even the free subnet.
    assert_eq!(api.get(&format!("/vpcs/{vid}")).await.ok()["subnets"].as_array().unwrap().len(), 2);
    assert!(!event_actions(&api).await.iter().any(|a| a == "vpc_delete" || a == "subnet_delete"));
    // Shut down: still in use, but no longer active.
    api.post_empty(&format!("/compute/instances/{iid}/shutdown")).await.ok();
    wait_status(&api, iid, "offline").await;
    let r = api.delete(&format!("/vpcs/{vid}")).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("'used'") && !r.text.contains("shut down"), "{}", r.text);
    // The free subnet alone can go.
    api.delete(&format!("/vpcs/{vid}/subnets/{free}")).await.ok();
    api.delete(&format!("/compute/instances/{iid}")).await.ok();
    assert_eq!(api.get(&format!("/vpcs/{vid}/subnets/{used}")).await.ok()["instances"], json!([]));
    api.delete(&format!("/vpcs/{vid}")).await.ok();
}

#[tokio::test]
async fn attaching_to_a_vpc_needs_read_write_on_it() {
    let s = TestServer::start().await;
    let api = s.api();
    let (vid, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/24").await;
    let (_, bob) = user_with_token(&s, "bobnet", true, "*").await;
    api.put("/account/users/bobnet/grants", json!({"global": {"add_instances": true}})).await.ok();
    let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": "bobvm", "interfaces": [vpc_iface(sid, json!({}))]});
    bob.post("/compute/instances", body.clone()).await.expect_error(400, "interfaces[0].subnet_id");
    api.put("/account/users/bobnet/grants", json!({"vpc": [{"id": vid, "permissions": "read_only"}]})).await.ok();
    bob.post("/compute/instances", body.clone()).await.expect_error(403, "-");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 0);
    api.put("/account/users/bobnet/grants", json!({"vpc": [{"id": vid, "permissions": "read_write"}]})).await.ok();
    bob.post("/compute/instances", body).await.ok();
}

#[tokio::test]
async fn concurrent_creates_on_one_subnet_get_distinct_addresses() {
    let s = TestServer::start().await;
    let api = s.api();
    let (vid, sid) = vpc_with_subnet(&api, "net", "10.0.0.0/28").await;
    let mut tasks = Vec::new();
    for i in 0..14 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": format!("cc{i}"), "booted": false, "interfaces": [vpc_iface(sid, json!({}))]});
            api.post("/compute/instances", body).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    // A /28 has 16 addresses, 12 of them usable.
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 12, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 2, "{codes:?}");
    let list = api.get(&format!("/vpcs/{vid}/ips")).await;
    let mut addrs: Vec<String> =
        list.ok()["data"].as_array().unwrap().iter().map(|r| r["address"].as_str().unwrap().to_string()).collect();
    addrs.sort();
    addrs.dedup();
    assert_eq!(addrs.len(), 12);
}

#[tokio::test]
async fn attaching_instances_racing_a_subnet_delete_never_leaves_an_interface_on_a_deleted_subnet() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..4 {
        let (vid, sid) = vpc_with_subnet(&api, &format!("race-{round}"), "10.0.0.0/24").await;
        let mut tasks = Vec::new();
        for i in 0..6 {
            let api = api.clone();
            tasks.push(tokio::spawn(async move {
                let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": format!("r{round}-vm{i}"), "booted": false, "interfaces": [vpc_iface(sid, json!({}))]});
                api.post("/compute/instances", body).await.status
            }));
        }
        let del = {
            let api = api.clone();
            tokio::spawn(async move { api.delete(&format!("/vpcs/{vid}/subnets/{sid}")).await.status })
        };
        let mut attached = 0;
        for t in tasks {
            let c = t.await.unwrap();
            assert!(c == 200 || c == 400, "create answered {c}");
            attached += usize::from(c == 200);
        }
        let deleted = del.await.unwrap();
        assert!(deleted == 200 || deleted == 400, "delete answered {deleted}");
        let sub = api.get(&format!("/vpcs/{vid}/subnets/{sid}")).await;
        if deleted == 200 {
            sub.expect_error(404, "-");
        } else {
            assert!(attached > 0, "the delete was refused although nothing used the subnet");
            assert_eq!(sub.ok()["instances"].as_array().unwrap().len(), attached);
        }
    }
    let dangling = db_scalar(
        &s,
        "SELECT COUNT(*) FROM instance_interfaces WHERE subnet_id IS NOT NULL AND subnet_id NOT IN (SELECT id FROM vpc_subnets)",
    )
    .await;
    assert_eq!(dangling, 0);
}
