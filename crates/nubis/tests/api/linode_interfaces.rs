//! Linode interfaces (the newer generation, on the instance) and the account setting
//! `interfaces_for_new_linodes`: creation with either generation, the interface operations and
//! their rules, settings, history, firewalls, and the upgrade from profile interfaces.

use serde_json::{Value, json};

use crate::instances::{ROOT_PASS, create_instance, id, wait_status};
use crate::support::*;
use crate::vpcs::create_vpc;

fn path(i: i64, rest: &str) -> String {
    format!("/compute/instances/{i}{rest}")
}

async fn linode_instance(api: &Api, label: &str, interfaces: Value) -> Value {
    create_instance(
        api,
        "us-east",
        json!({"label": label, "booted": false, "interface_generation": "linode", "interfaces": interfaces}),
    )
    .await
}

#[tokio::test]
async fn the_account_setting_decides_which_interfaces_new_instances_get() {
    let s = TestServer::start().await;
    let api = s.api();
    let st = api.get("/account/settings").await;
    assert_eq!(st.ok()["interfaces_for_new_linodes"], "legacy_config_default_but_linode_allowed");
    api.put("/account/settings", json!({"interfaces_for_new_linodes": "sometimes"}))
        .await
        .expect_error(400, "interfaces_for_new_linodes");
    let legacy = create_instance(&api, "us-east", json!({"label": "old-style", "booted": false})).await;
    assert_eq!(legacy["interface_generation"], "legacy_config");
    let u = api.put("/account/settings", json!({"interfaces_for_new_linodes": "linode_only"})).await;
    assert_eq!(u.ok()["interfaces_for_new_linodes"], "linode_only");
    let new = create_instance(&api, "us-east", json!({"label": "new-style", "booted": false})).await;
    assert_eq!(new["interface_generation"], "linode");
    create_instance_err(&api, json!({"interface_generation": "legacy_config"}), "interface_generation").await;
    api.put("/account/settings", json!({"interfaces_for_new_linodes": "legacy_config_only"})).await.ok();
    create_instance_err(&api, json!({"interface_generation": "linode"}), "interface_generation").await;
    // The fields of the other generation are refused.
    api.put("/account/settings", json!({"interfaces_for_new_linodes": "linode_default_but_legacy_config_allowed"}))
        .await
        .ok();
    create_instance_err(&api, json!({"interfaces": [{"purpose": "public"}]}), "interfaces[0].purpose").await;
    create_instance_err(
        &api,
        json!({"interface_generation": "legacy_config", "interfaces": [{"public": {}}]}),
        "interfaces[0].public",
    )
    .await;
}

async fn create_instance_err(api: &Api, extra: Value, field: &str) {
    let mut body =
        json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": ROOT_PASS});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    api.post("/compute/instances", body).await.expect_error(400, field);
}

#[tokio::test]
async fn an_instance_with_linode_interfaces_gets_them_at_creation() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    // Without interfaces: one public interface carrying both default routes.
    let plain = linode_instance(&api, "plain", json!([])).await;
    let list = api.get(&path(id(&plain), "/interfaces")).await.ok()["interfaces"].clone();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let public = &list[0];
    assert_eq!(public["default_route"], json!({"ipv4": true, "ipv6": true}));
    assert_eq!(public["public"]["ipv4"]["addresses"][0]["address"], plain["ipv4"][0]);
    assert_eq!(public["public"]["ipv6"]["slaac"][0]["prefix"], 64);
    assert!(public["vpc"].is_null() && public["vlan"].is_null());
    assert_eq!(public["version"], 1);
    assert_eq!(public["mac_address"].as_str().unwrap().len(), 17);
    // Its profile has no interfaces of its own; profile interface operations are refused.
    let c = api.get(&path(id(&plain), "/configs")).await.ok()["data"][0].clone();
    assert_eq!(c["interfaces"], json!([]));
    api.post(&path(id(&plain), &format!("/configs/{}/interfaces", c["id"])), json!({"purpose": "public"}))
        .await
        .status_is(400);
    // With a VPC and a VLAN interface.
    let both = linode_instance(
        &api,
        "both",
        json!([{"vpc": {"subnet_id": sid, "ipv4": {"addresses": [{"address": "auto", "nat_1_1_address": "auto"}]}}, "default_route": {"ipv4": true}},
               {"vlan": {"vlan_label": "back", "ipam_address": "10.9.0.2/24"}}]),
    )
    .await;
    let list = api.get(&format!("/linode/instances/{}/interfaces", id(&both))).await.ok()["interfaces"].clone();
    let vpc = &list[0]["vpc"];
    assert_eq!((vpc["vpc_id"].as_i64(), vpc["subnet_id"].as_i64()), (Some(id(&v)), Some(sid)));
    assert_eq!(vpc["ipv4"]["addresses"][0]["address"], "10.0.0.2");
    assert_eq!(vpc["ipv4"]["addresses"][0]["nat_1_1_address"], both["ipv4"][0]);
    assert_eq!(list[1]["vlan"], json!({"vlan_label": "back", "ipam_address": "10.9.0.2/24"}));
    // The VPC side sees the interface, without a profile.
    let ips = api.get("/vpcs/ips").await.ok().clone();
    assert_eq!(ips["data"][0]["config_id"], Value::Null);
    // Two public interfaces, or one of no kind, are refused with nothing created.
    let before = api.get("/compute/instances").await.ok()["results"].clone();
    create_instance_err(
        &api,
        json!({"interface_generation": "linode", "interfaces": [{"public": {}}, {"public": {}}]}),
        "interfaces",
    )
    .await;
    create_instance_err(
        &api,
        json!({"interface_generation": "linode", "interfaces": [{"default_route": {"ipv4": true}}]}),
        "interfaces[0]",
    )
    .await;
    create_instance_err(
        &api,
        json!({"interface_generation": "linode", "interfaces": [{"vpc": {"subnet_id": sid, "ipv4": {"ranges": [{"range": "/28"}]}}}]}),
        "interfaces[0].vpc.ipv4.ranges",
    )
    .await;
    assert_eq!(api.get("/compute/instances").await.ok()["results"], before);
}

#[tokio::test]
async fn linode_interfaces_change_only_while_the_instance_is_off_and_keep_their_history() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = linode_instance(&api, "ifs", json!([])).await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let added = api
        .post(
            &path(i, "/interfaces"),
            json!({"vpc": {"subnet_id": sid, "ipv4": {"addresses": [{"address": "10.0.0.20"}]}}}),
        )
        .await;
    let vpc = added.ok().clone();
    assert_eq!(vpc["vpc"]["ipv4"]["addresses"][0]["address"], "10.0.0.20");
    api.post(&path(i, "/interfaces"), json!({"vpc": {"subnet_id": sid}})).await.status_is(400);
    api.post(&path(i, "/interfaces"), json!({"public": {}})).await.status_is(400);
    let up = api
        .put(
            &path(i, &format!("/interfaces/{}", id(&vpc))),
            json!({"vpc": {"subnet_id": sid, "ipv4": {"addresses": [{"address": "10.0.0.21"}]}}, "default_route": {"ipv4": true}}),
        )
        .await;
    assert_eq!((up.ok()["version"].as_i64(), up.body["default_route"]["ipv4"].as_bool()), (Some(2), Some(true)));
    api.put(&path(i, &format!("/interfaces/{}", id(&vpc))), json!({"vlan": {"vlan_label": "x"}})).await.status_is(400);
    let settings = api.get(&path(i, "/interfaces/settings")).await.ok().clone();
    assert_eq!(settings["default_route"]["ipv4_interface_id"], vpc["id"], "the route moved to the VPC interface");
    let public_id = settings["default_route"]["ipv6_interface_id"].clone();
    assert_eq!(settings["default_route"]["ipv4_eligible_interface_ids"].as_array().unwrap().len(), 2);
    let s2 =
        api.put(&path(i, "/interfaces/settings"), json!({"default_route": {"ipv4_interface_id": public_id}})).await;
    assert_eq!(s2.ok()["default_route"]["ipv4_interface_id"], public_id);
    api.put(&path(i, "/interfaces/settings"), json!({"default_route": {"ipv6_interface_id": vpc["id"]}}))
        .await
        .expect_error(400, "default_route.ipv6_interface_id");
    api.put(&path(i, "/interfaces/settings"), json!({"network_helper": false})).await.ok();
    let h = api.get(&path(i, "/interfaces/history")).await.ok().clone();
    assert!(h["results"].as_i64().unwrap() >= 3, "{h}");
    let versions: Vec<i64> = h["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["interface_id"] == vpc["id"])
        .map(|x| x["version"].as_i64().unwrap())
        .collect();
    assert_eq!(&versions[..2], [1, 2]);
    let data: Value = serde_json::from_str(h["data"][0]["interface_data"].as_str().unwrap()).unwrap();
    assert!(data["id"].is_i64());
    // In the hosted names, history entries name the linode.
    let hosted = api.get(&format!("/linode/instances/{i}/interfaces/history")).await.ok().clone();
    assert_eq!(hosted["data"][0]["linode_id"], i);
    // Running: no changes.
    api.post_empty(&path(i, "/boot")).await.ok();
    wait_status(&api, i, "running").await;
    api.delete(&path(i, &format!("/interfaces/{}", id(&vpc)))).await.status_is(400);
    api.post(&path(i, "/interfaces"), json!({"vlan": {"vlan_label": "later"}})).await.status_is(400);
    api.post_empty(&path(i, "/shutdown")).await.ok();
    wait_status(&api, i, "offline").await;
    api.delete(&path(i, &format!("/interfaces/{}", id(&vpc)))).await.ok();
    assert_eq!(api.get(&path(i, "/interfaces")).await.ok()["interfaces"].as_array().unwrap().len(), 1);
    let actions = event_actions(&api).await;
    for a in ["interface_create", "interface_update", "interface_delete"] {
        assert!(actions.contains(&a.to_string()), "{a}");
    }
}

#[tokio::test]
async fn linode_interfaces_carry_the_instance_firewalls_and_profile_instances_refuse_them() {
    let s = TestServer::start().await;
    let api = s.api();
    let fw = api
        .post(
            "/networking/firewalls",
            json!({"label": "edge", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"}}),
        )
        .await
        .ok()
        .clone();
    let inst =
        linode_instance(&api, "fwd", json!([{"public": {}, "firewall_id": id(&fw), "default_route": {"ipv4": true}}]))
            .await;
    let i = id(&inst);
    let list = api.get(&path(i, "/interfaces")).await.ok()["interfaces"].clone();
    let f = api.get(&path(i, &format!("/interfaces/{}/firewalls", id(&list[0])))).await;
    assert_eq!(f.ok()["data"][0]["id"], fw["id"]);
    assert_eq!(api.get(&path(i, "/firewalls")).await.ok()["results"], 1);
    let legacy = create_instance(&api, "us-east", json!({"label": "legacy", "booted": false})).await;
    let l = id(&legacy);
    api.get(&path(l, "/interfaces")).await.status_is(400);
    api.get(&path(l, "/interfaces/settings")).await.status_is(400);
    api.post(&path(l, "/interfaces"), json!({"public": {}})).await.status_is(400);
}

#[tokio::test]
async fn profile_interfaces_upgrade_to_linode_interfaces() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "upgraded", "interfaces": [{"purpose": "public"}, {"purpose": "vpc", "subnet_id": sid, "ipv4": {"vpc": "10.0.0.33"}}]}),
    )
    .await;
    let i = id(&inst);
    wait_status(&api, i, "running").await;
    // A dry run (the default) shows what it would make and changes nothing.
    let dry = api.post_empty(&path(i, "/upgrade-interfaces")).await.ok().clone();
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["interfaces"][0]["id"], 0);
    assert_eq!(dry["interfaces"][1]["vpc"]["ipv4"]["addresses"][0]["address"], "10.0.0.33");
    assert_eq!(api.get(&path(i, "")).await.ok()["interface_generation"], "legacy_config");
    // The real one needs the instance off.
    api.post(&path(i, "/upgrade-interfaces"), json!({"dry_run": false})).await.status_is(400);
    api.post_empty(&path(i, "/shutdown")).await.ok();
    wait_status(&api, i, "offline").await;
    let done = api.post(&path(i, "/upgrade-interfaces"), json!({"dry_run": false})).await.ok().clone();
    assert_eq!(done["dry_run"], false);
    assert!(done["interfaces"][0]["id"].as_i64().unwrap() > 0);
    assert_eq!(api.get(&path(i, "")).await.ok()["interface_generation"], "linode");
    let list = api.get(&path(i, "/interfaces")).await.ok()["interfaces"].clone();
    assert_eq!(list[1]["vpc"]["ipv4"]["addresses"][0]["address"], "10.0.0.33", "the VPC address is kept");
    assert_eq!(list[0]["default_route"]["ipv4"], true);
    let c = api.get(&path(i, "/configs")).await.ok()["data"][0].clone();
    assert_eq!(c["interfaces"], json!([]), "the profile's interfaces went");
    api.post(&path(i, "/upgrade-interfaces"), json!({"dry_run": false})).await.status_is(400);
    // An instance with a private address cannot be upgraded.
    let private = create_instance(&api, "us-east", json!({"label": "priv", "private_ip": true, "booted": false})).await;
    wait_status(&api, id(&private), "offline").await;
    api.post(&path(id(&private), "/upgrade-interfaces"), json!({"dry_run": false})).await.status_is(400);
}
