//! IP addresses (spec 2.9, 4.10): listing, viewing and allocating.

use serde_json::{Value, json};

use crate::instances::{create_instance, id};
use crate::support::*;

async fn addresses(api: &Api) -> Vec<Value> {
    api.get("/networking/ips?page_size=500").await.ok()["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_address_list_shows_public_addresses_and_hides_private_ones() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let list = addresses(&api).await;
    let kinds: Vec<(String, bool)> =
        list.iter().map(|a| (a["type"].as_str().unwrap().to_string(), a["public"].as_bool().unwrap())).collect();
    assert_eq!(kinds, [("ipv4".to_string(), true), ("ipv6".to_string(), true)], "{list:?}");
    assert_eq!(list[0]["address"], inst["ipv4"][0]);
    assert!(!list.iter().any(|a| a["address"] == inst["ipv4"][1]), "the private address is not listed");
    for f in [
        "address",
        "gateway",
        "subnet_mask",
        "prefix",
        "type",
        "public",
        "rdns",
        "instance_id",
        "region",
        "vpc_nat_1_1",
    ] {
        assert!(list[0].get(f).is_some(), "{f} missing: {}", list[0]);
    }
    let only_v6 = api.get_filtered("/networking/ips", r#"{"type": "ipv6"}"#).await;
    assert_eq!(only_v6.ok()["results"], 1);
    assert_eq!(api.get("/networking/ips?skip_ipv6_rdns=true").await.ok()["results"], 2);
    api.get("/networking/ips?skip_ipv6_rdns=maybe").await.expect_error(400, "skip_ipv6_rdns");
}

#[tokio::test]
async fn one_address_is_read_by_any_spelling_and_unknown_ones_are_not_found() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let private = inst["ipv4"][1].as_str().unwrap();
    let r = api.get(&format!("/networking/ips/{private}")).await;
    assert_eq!(r.ok()["public"], false);
    assert_eq!(r.body["instance_id"], id(&inst));
    let slaac: std::net::Ipv6Addr = inst["ipv6"].as_str().unwrap().trim_end_matches("/128").parse().unwrap();
    let long = slaac.segments().iter().map(|x| format!("{x:04X}")).collect::<Vec<_>>().join(":");
    let r = api.get(&format!("/networking/ips/{long}")).await;
    assert_eq!(r.ok()["address"], slaac.to_string());
    api.get("/networking/ips/127.99.0.1").await.expect_error(404, "-");
    api.get("/networking/ips/not-an-address").await.expect_error(404, "-");
    let iid = id(&inst);
    api.get(&format!("/compute/instances/{iid}/ips/{private}")).await.ok();
    let other = create_instance(&api, "us-east", json!({"booted": false})).await;
    api.get(&format!("/compute/instances/{}/ips/{private}", id(&other))).await.expect_error(404, "-");
}

#[tokio::test]
async fn allocation_checks_every_field_and_names_it() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/networking/ips", json!({})).await;
    r.expect_error(400, "type").expect_error(400, "public").expect_error(400, "instance_id");
    api.post("/networking/ips", json!({"type": "ipv6", "public": true, "instance_id": 1}))
        .await
        .expect_error(400, "type");
    api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": 424242}))
        .await
        .expect_error(400, "instance_id");
    api.post("/networking/ips", json!({"type": "ipv4", "public": "yes", "instance_id": 1}))
        .await
        .expect_error(400, "public");
}

#[tokio::test]
async fn a_private_address_is_allocated_only_to_an_instance_without_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    let body = json!({"type": "ipv4", "public": false, "instance_id": iid});
    let a = api.post("/networking/ips", body.clone()).await.ok().clone();
    assert_eq!(event_actions(&api).await[0], "instance_addip");
    api.post("/networking/ips", body).await.expect_error(400, "public");
    api.post(&format!("/compute/instances/{iid}/ips"), json!({"type": "ipv4", "public": false}))
        .await
        .expect_error(400, "public");
    let ips = api.get(&format!("/compute/instances/{iid}/ips")).await;
    assert_eq!(ips.ok()["ipv4"]["private"].as_array().unwrap().len(), 1, "nothing changed");
    assert_eq!(ips.body["ipv4"]["private"][0]["address"], a["address"]);
}

#[tokio::test]
async fn a_public_address_needs_the_instance_to_be_enabled_by_operators() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    let body = json!({"type": "ipv4", "public": true, "instance_id": iid});
    let r = api.post("/networking/ips", body.clone()).await;
    r.expect_error(400, "public");
    assert!(r.text.contains("support request"), "{}", r.text);
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["ipv4"].as_array().unwrap().len(), 1);
    let (ok, out, err) = s.admin(&["instance", "allow-extra-ipv4", &iid.to_string()]);
    assert!(ok, "{out}{err}");
    let a = api.post("/networking/ips", body.clone()).await.ok().clone();
    assert_eq!(a["public"], true);
    assert_eq!(a["gateway"], s.public_pool("us-east").0.host(1));
    let b = api.post(&format!("/compute/instances/{iid}/ips"), json!({"type": "ipv4", "public": true})).await;
    assert_ne!(b.ok()["address"], a["address"]);
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["ipv4"].as_array().unwrap().len(), 3);
    let (ok, _, _) = s.admin(&["instance", "allow-extra-ipv4", &iid.to_string(), "--off"]);
    assert!(ok);
    api.post("/networking/ips", body).await.expect_error(400, "public");
    let (ok, _, err) = s.admin(&["instance", "allow-extra-ipv4", "999999"]);
    assert!(!ok && err.contains("999999"), "{err}");
}

#[tokio::test]
async fn concurrent_private_allocations_give_an_instance_one_private_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": iid})).await.status
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 400).count(), 9, "{codes:?}");
    let ips = api.get(&format!("/compute/instances/{iid}/ips")).await;
    assert_eq!(ips.ok()["ipv4"]["private"].as_array().unwrap().len(), 1);
}
