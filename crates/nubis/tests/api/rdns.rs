//! Reverse DNS (spec 4.10): a name is set only when its forward DNS resolves to the address,
//! checked through the configured resolver (the static map, or a name server on 127.0.0.1 that
//! the test runs); null on a public IPv4 address restores the default name. Also the removal of
//! an address from an instance.

use serde_json::{Value, json};

use crate::dnsd::FakeDns;
use crate::instances::{create_instance, id, wait_status};
use crate::support::*;

fn with_dns(dns: &str) -> Options {
    Options { config: TEST_CONFIG.replace("[dns]\noffline = true\n", dns), ..Default::default() }
}

fn default_name(address: &str) -> String {
    format!("{}.ip.nubis.test", address.replace('.', "-"))
}

#[tokio::test]
async fn rdns_needs_forward_dns_from_the_static_map_and_null_restores_the_default() {
    let dns = "[dns]\noffline = true\n[dns.static_records]\n\"web.example.com\" = [\"127.10.0.2\"]\n\"elsewhere.example.com\" = [\"127.10.9.9\"]\n";
    let s = TestServer::start_with(with_dns(dns)).await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let (public, private) = (inst["ipv4"][0].as_str().unwrap(), inst["ipv4"][1].as_str().unwrap());
    // The first address of us-east's pool (127.10.0.0/16 unless in netns mode, where the
    // harness moved the pool and the record with it).
    assert_eq!(public, s.public_pool("us-east").0.host(2));
    let url = format!("/networking/ips/{public}");
    assert_eq!(api.get(&url).await.ok()["rdns"], default_name(public));
    let r = api.put(&url, json!({"rdns": "web.example.com"})).await;
    assert_eq!(r.ok()["rdns"], "web.example.com");
    let ev = api.get("/account/events").await;
    let e = &ev.ok()["data"][0];
    assert_eq!(e["action"], "ipaddress_update");
    assert_eq!(e["entity"]["label"], public);
    // A name that resolves elsewhere, or not at all (offline: only the static map), is refused.
    for bad in ["elsewhere.example.com", "unknown.example.com"] {
        let r = api.put(&url, json!({"rdns": bad})).await;
        r.expect_error(400, "rdns");
        assert!(r.text.contains("Forward DNS"), "{}", r.text);
    }
    for bad in ["not a name", "localhost", "-x.example.com"] {
        api.put(&url, json!({"rdns": bad})).await.expect_error(400, "rdns");
    }
    api.put(&url, json!({})).await.expect_error(400, "rdns");
    assert_eq!(api.get(&url).await.ok()["rdns"], "web.example.com", "refusals changed nothing");
    assert_eq!(api.put(&url, json!({"rdns": null})).await.ok()["rdns"], default_name(public));
    // Private addresses have no reverse name.
    api.put(&format!("/networking/ips/{private}"), json!({"rdns": "web.example.com"})).await.expect_error(400, "rdns");
    // The instance path does the same, for the instance's own addresses only.
    let iid = id(&inst);
    let r = api.put(&format!("/compute/instances/{iid}/ips/{public}"), json!({"rdns": "WEB.example.com."})).await;
    assert_eq!(r.ok()["rdns"], "web.example.com");
    let other = create_instance(&api, "us-east", json!({"booted": false})).await;
    api.put(&format!("/compute/instances/{}/ips/{public}", id(&other)), json!({"rdns": null}))
        .await
        .expect_error(404, "-");
}

#[tokio::test]
async fn rdns_asks_the_configured_name_server_for_a_and_aaaa_records() {
    let dnsd = FakeDns::start().await;
    let s = TestServer::start_with(with_dns(&format!("[dns]\nnameservers = [\"{}\"]\n", dnsd.addr))).await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let public = inst["ipv4"][0].as_str().unwrap().to_string();
    let slaac = inst["ipv6"].as_str().unwrap().trim_end_matches("/128").to_string();
    dnsd.set("v4.test.example", &[&public]);
    dnsd.set("v6.test.example", &[&slaac]);
    dnsd.set("wrong.test.example", &["127.10.200.200"]);
    let r = api.put(&format!("/networking/ips/{public}"), json!({"rdns": "v4.test.example"})).await;
    assert_eq!(r.ok()["rdns"], "v4.test.example");
    api.put(&format!("/networking/ips/{public}"), json!({"rdns": "wrong.test.example"}))
        .await
        .expect_error(400, "rdns");
    api.put(&format!("/networking/ips/{public}"), json!({"rdns": "missing.test.example"}))
        .await
        .expect_error(400, "rdns");
    // An IPv4 name does not do for an IPv6 address, an IPv6 one does.
    api.put(&format!("/networking/ips/{slaac}"), json!({"rdns": "v4.test.example"})).await.expect_error(400, "rdns");
    let r = api.put(&format!("/networking/ips/{slaac}"), json!({"rdns": "v6.test.example"})).await;
    assert_eq!(r.ok()["rdns"], "v6.test.example");
    // skip_ipv6_rdns hides it in the list.
    let rdns_of = |list: &Value, kind: &str| {
        list["data"].as_array().unwrap().iter().find(|a| a["type"] == kind).unwrap()["rdns"].clone()
    };
    let shown = api.get("/networking/ips").await.ok().clone();
    assert_eq!(rdns_of(&shown, "ipv6"), "v6.test.example");
    assert_eq!(rdns_of(&shown, "ipv4"), "v4.test.example");
    let skipped = api.get("/networking/ips?skip_ipv6_rdns=true").await.ok().clone();
    assert_eq!(rdns_of(&skipped, "ipv6"), Value::Null);
    assert_eq!(rdns_of(&skipped, "ipv4"), "v4.test.example");
    // Null on IPv6 clears it (no default there).
    assert_eq!(api.put(&format!("/networking/ips/{slaac}"), json!({"rdns": null})).await.ok()["rdns"], Value::Null);
}

#[tokio::test]
async fn the_default_reverse_name_suffix_is_configurable() {
    let s = TestServer::start_with(with_dns("[dns]\noffline = true\ndefault_rdns_suffix = \"members.example.net\"\n"))
        .await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let public = inst["ipv4"][0].as_str().unwrap();
    let r = api.get(&format!("/networking/ips/{public}")).await;
    assert_eq!(r.ok()["rdns"], format!("{}.members.example.net", public.replace('.', "-")));
}

#[tokio::test]
async fn an_address_is_removed_but_never_the_last_public_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let iid = id(&inst);
    let (public, private) = (inst["ipv4"][0].as_str().unwrap(), inst["ipv4"][1].as_str().unwrap());
    let r = api.delete(&format!("/compute/instances/{iid}/ips/{public}")).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("at least one public"), "{}", r.text);
    let slaac = inst["ipv6"].as_str().unwrap().trim_end_matches("/128");
    api.delete(&format!("/compute/instances/{iid}/ips/{slaac}")).await.expect_error(400, "-");
    assert_eq!(api.delete(&format!("/compute/instances/{iid}/ips/{private}")).await.ok(), &json!({}));
    assert_eq!(event_actions(&api).await[0], "instance_deleteip");
    api.get(&format!("/networking/ips/{private}")).await.expect_error(404, "-");
    // With a second public address, one can go.
    let (ok, _, _) = s.admin(&["instance", "allow-extra-ipv4", &iid.to_string()]);
    assert!(ok);
    let extra = api.post(&format!("/compute/instances/{iid}/ips"), json!({"type": "ipv4", "public": true})).await;
    let extra = extra.ok()["address"].as_str().unwrap().to_string();
    api.delete(&format!("/compute/instances/{iid}/ips/{public}")).await.ok();
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["ipv4"], json!([extra]));
}

#[tokio::test]
async fn an_address_in_active_1_1_nat_is_not_removed() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = api
        .post("/vpcs", json!({"label": "nat", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.0/24"}]}))
        .await;
    let sid = v.ok()["subnets"][0]["id"].as_i64().unwrap();
    let inst = create_instance(
        &api,
        "us-east",
        json!({"interfaces": [{"purpose": "vpc", "subnet_id": sid, "ipv4": {"nat_1_1": "any"}}]}),
    )
    .await;
    let iid = id(&inst);
    wait_status(&api, iid, "running").await;
    let (ok, _, _) = s.admin(&["instance", "allow-extra-ipv4", &iid.to_string()]);
    assert!(ok);
    api.post(&format!("/compute/instances/{iid}/ips"), json!({"type": "ipv4", "public": true})).await.ok();
    let nat = inst["ipv4"][0].as_str().unwrap();
    let r = api.delete(&format!("/compute/instances/{iid}/ips/{nat}")).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("1:1 NAT"), "{}", r.text);
    api.get(&format!("/networking/ips/{nat}")).await.ok();
}
