//! Configuration profiles of instances (the hosted API's `configs`) and their interfaces: what an
//! image deployment makes, the profile operations and their checks, the interface operations,
//! which profile a boot uses, and what `active` means with several profiles.

use serde_json::{Value, json};

use crate::instances::{ROOT_PASS, create_instance, id, wait_status};
use crate::support::*;
use crate::vpcs::create_vpc;

fn configs(i: i64) -> String {
    format!("/compute/instances/{i}/configs")
}

async fn first_config(api: &Api, i: i64) -> Value {
    api.get(&configs(i)).await.ok()["data"][0].clone()
}

#[tokio::test]
async fn an_image_deployment_makes_a_disk_a_swap_disk_and_a_profile_booting_them() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "web1", "booted": false})).await;
    let i = id(&inst);
    let disks = api.get(&format!("/compute/instances/{i}/disks")).await;
    let d = &disks.ok()["data"];
    assert_eq!(disks.body["results"], 2);
    assert_eq!((d[0]["label"].as_str(), d[0]["filesystem"].as_str()), (Some("Debian 12 Disk"), Some("ext4")));
    assert_eq!((d[1]["size"].as_i64(), d[1]["filesystem"].as_str()), (Some(512), Some("swap")));
    assert_eq!(d[0]["size"].as_i64().unwrap() + 512, 25600, "the disks fill the plan");
    let c = first_config(&api, i).await;
    assert_eq!(c["label"], "My Debian 12 Disk Profile");
    assert_eq!(c["kernel"], "linode/grub2");
    assert_eq!(c["root_device"], "/dev/sda");
    assert_eq!(c["devices"]["sda"]["disk_id"], d[0]["id"]);
    assert_eq!(c["devices"]["sdb"]["disk_id"], d[1]["id"]);
    assert_eq!(c["devices"]["sdc"], Value::Null);
    assert_eq!(c["interfaces"], json!([]));
    // The hosted names serve the same profile.
    let hosted = api.get(&format!("/linode/instances/{i}/configs/{}", c["id"])).await;
    assert_eq!(hosted.ok()["id"], c["id"]);
    // A swap size and a boot disk size shape the disks; they must fit the plan.
    let sized =
        create_instance(&api, "us-east", json!({"label": "sized", "swap_size": 0, "boot_size": 4000, "booted": false}))
            .await;
    let d = api.get(&format!("/compute/instances/{}/disks", id(&sized))).await;
    assert_eq!(d.ok()["results"], 1);
    assert_eq!(d.body["data"][0]["size"], 4000);
    api.post(
        "/compute/instances",
        json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": ROOT_PASS, "boot_size": 25600}),
    )
    .await
    .expect_error(400, "boot_size");
}

#[tokio::test]
async fn profiles_are_created_read_updated_and_deleted_with_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "cfg", "booted": false})).await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let disk = api.get(&format!("/compute/instances/{i}/disks")).await.ok()["data"][0]["id"].clone();
    let c = api
        .post(
            &configs(i),
            json!({"label": "rescue", "kernel": "linode/latest-64bit", "devices": {"sda": {"disk_id": disk}},
                   "helpers": {"network": false}, "run_level": "single", "comments": "spare", "memory_limit": 512}),
        )
        .await;
    let c = c.ok().clone();
    assert_eq!((c["run_level"].as_str(), c["memory_limit"].as_i64()), (Some("single"), Some(512)));
    assert_eq!(c["helpers"]["network"], false);
    assert_eq!(c["helpers"]["distro"], true, "helpers not named keep their defaults");
    assert_eq!(api.get(&configs(i)).await.ok()["results"], 2);
    // Update: omitted fields stay.
    let u = api.put(&format!("{}/{}", configs(i), c["id"]), json!({"label": "rescue2", "virt_mode": "fullvirt"})).await;
    assert_eq!((u.ok()["label"].as_str(), u.body["run_level"].as_str()), (Some("rescue2"), Some("single")));
    assert_eq!(u.body["devices"]["sda"]["disk_id"], disk);
    // Filtering and paging are the listing's.
    let f = api.get_filtered(&configs(i), r#"{"label": "rescue2"}"#).await;
    assert_eq!(f.ok()["results"], 1);
    api.delete(&format!("{}/{}", configs(i), c["id"])).await.ok();
    api.get(&format!("{}/{}", configs(i), c["id"])).await.expect_error(404, "-");
    let actions = event_actions(&api).await;
    for a in ["instance_config_create", "instance_config_update", "instance_config_delete"] {
        assert!(actions.contains(&a.to_string()), "{a} in {actions:?}");
    }
    // In the hosted dialect the events are linode_config_*.
    let hosted = s.api().send(reqwest::Method::GET, "/account/events", None, &[("X-Nubis-Names", "linode")]).await;
    assert!(hosted.text.contains("linode_config_create"), "{}", hosted.text);
}

#[tokio::test]
async fn profile_fields_are_checked_all_at_once() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "chk", "booted": false})).await;
    let i = id(&inst);
    let other = create_instance(&api, "us-east", json!({"label": "other", "booted": false})).await;
    let foreign_disk = api.get(&format!("/compute/instances/{}/disks", id(&other))).await.ok()["data"][0]["id"].clone();
    let r = api
        .post(
            &configs(i),
            json!({"kernel": "linode/nope", "run_level": "multi", "virt_mode": "hvm", "memory_limit": 99999,
                   "root_device": "/dev/sd a", "initrd": 3, "devices": {"sda": {"volume_id": 7}}}),
        )
        .await;
    for f in
        ["label", "kernel", "run_level", "virt_mode", "memory_limit", "root_device", "initrd", "devices.sda.volume_id"]
    {
        r.expect_error(400, f);
    }
    // Devices are required on create, may be empty, and must be the instance's own disks.
    api.post(&configs(i), json!({"label": "x"})).await.expect_error(400, "devices");
    api.post(&configs(i), json!({"label": "x", "devices": {"sdb": {"disk_id": foreign_disk}}}))
        .await
        .expect_error(400, "devices.sdb.disk_id");
    api.post(&configs(i), json!({"label": "x", "devices": {"sde": {"disk_id": null}}, "virt_mode": "fullvirt"}))
        .await
        .ok();
    assert_eq!(api.get(&configs(i)).await.ok()["results"], 2, "only the valid profile was made");
}

#[tokio::test]
async fn profile_interfaces_are_added_updated_reordered_and_deleted() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(&api, "us-east", json!({"label": "ifs", "booted": false})).await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let c = first_config(&api, i).await;
    let base = format!("{}/{}/interfaces", configs(i), c["id"]);
    let public = api.post(&base, json!({"purpose": "public", "primary": true})).await.ok().clone();
    let vpc = api
        .post(&base, json!({"purpose": "vpc", "subnet_id": sid, "ipv4": {"vpc": "10.0.0.9", "nat_1_1": "any"}}))
        .await
        .ok()
        .clone();
    assert_eq!(vpc["ipv4"]["vpc"], "10.0.0.9");
    assert_eq!(vpc["ipv4"]["nat_1_1"], inst["ipv4"][0], "any: the instance's public address");
    assert_eq!(vpc["vpc_id"], v["id"]);
    let vlan = api.post(&base, json!({"purpose": "vlan", "label": "back", "ipam_address": "10.9.0.1/24"})).await;
    let vlan = vlan.ok().clone();
    // At most three; the fields of one interface are named without an index.
    api.post(&base, json!({"purpose": "public"})).await.status_is(400);
    api.post(&format!("{}/{}/interfaces", configs(i), 999_999), json!({"purpose": "public"})).await.status_is(404);
    let list = api.get(&base).await;
    let ids: Vec<i64> = list.ok().as_array().unwrap().iter().map(id).collect();
    assert_eq!(ids, [id(&public), id(&vpc), id(&vlan)]);
    // A new primary takes over; vlan interfaces cannot be updated.
    let up = api.put(&format!("{base}/{}", id(&vpc)), json!({"primary": true, "ipv4": {"vpc": "10.0.0.10"}})).await;
    assert_eq!((up.ok()["primary"].as_bool(), up.body["ipv4"]["vpc"].as_str()), (Some(true), Some("10.0.0.10")));
    assert_eq!(api.get(&format!("{base}/{}", id(&public))).await.ok()["primary"], false);
    api.put(&format!("{base}/{}", id(&vlan)), json!({"primary": false})).await.status_is(400);
    api.put(&format!("{base}/{}", id(&vpc)), json!({"ip_ranges": ["10.0.0.64/28"]}))
        .await
        .expect_error(400, "ip_ranges");
    // Reorder: every interface, once.
    api.post(&format!("{base}/order"), json!({"ids": [id(&vlan), id(&public)]})).await.expect_error(400, "ids");
    api.post(&format!("{base}/order"), json!({"ids": [id(&vlan), id(&vpc), id(&public)]})).await.ok();
    let ids: Vec<i64> = api.get(&base).await.ok().as_array().unwrap().iter().map(id).collect();
    assert_eq!(ids, [id(&vlan), id(&vpc), id(&public)]);
    let c2 = api.get(&format!("{}/{}", configs(i), c["id"])).await;
    assert_eq!(c2.ok()["interfaces"][0]["purpose"], "vlan", "the profile shows them in the new order");
    // The VPC side sees the interface with its profile.
    let ips = api.get("/vpcs/ips").await;
    assert_eq!(ips.ok()["data"][0]["config_id"], c["id"]);
    api.delete(&format!("{base}/{}", id(&vlan))).await.ok();
    assert_eq!(api.get(&base).await.ok().as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_boot_uses_the_profile_named_the_only_one_or_the_last_booted() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "two", "booted": false, "interfaces": [{"purpose": "vpc", "subnet_id": sid}]}),
    )
    .await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let first = first_config(&api, i).await;
    let second = api
        .post(
            &configs(i),
            json!({"label": "second", "devices": {}, "interfaces": [{"purpose": "vpc", "subnet_id": sid}]}),
        )
        .await
        .ok()
        .clone();
    // A profile that is not the instance's cannot be booted.
    api.post(&format!("/compute/instances/{i}/boot"), json!({"config_id": 999_999}))
        .await
        .expect_error(400, "config_id");
    api.post(&format!("/compute/instances/{i}/boot"), json!({"config_id": second["id"]})).await.ok();
    wait_status(&api, i, "running").await;
    // Only the booted profile's interface is active.
    let active = |c: &Value| c["interfaces"][0]["active"].as_bool().unwrap();
    let c1 = api.get(&format!("{}/{}", configs(i), first["id"])).await.ok().clone();
    let c2 = api.get(&format!("{}/{}", configs(i), second["id"])).await.ok().clone();
    assert!(!active(&c1) && active(&c2), "{c1} {c2}");
    let subnet = api.get(&format!("/vpcs/{}/subnets/{sid}", id(&v))).await.ok().clone();
    let flags: Vec<(i64, bool)> = subnet["instances"][0]["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["config_id"].as_i64().unwrap(), f["active"].as_bool().unwrap()))
        .collect();
    assert_eq!(flags, [(id(&first), false), (id(&second), true)]);
    // The profile it runs with cannot be deleted, nor its active interface; the other can.
    api.delete(&format!("{}/{}", configs(i), second["id"])).await.status_is(400);
    let iface = &c2["interfaces"][0];
    api.delete(&format!("{}/{}/interfaces/{}", configs(i), second["id"], iface["id"])).await.status_is(400);
    api.delete(&format!("{}/{}/interfaces/{}", configs(i), first["id"], c1["interfaces"][0]["id"])).await.ok();
    // Shut down and booted again without naming one: the last booted profile.
    api.post_empty(&format!("/compute/instances/{i}/shutdown")).await.ok();
    wait_status(&api, i, "offline").await;
    api.post_empty(&format!("/compute/instances/{i}/boot")).await.ok();
    wait_status(&api, i, "running").await;
    let c2 = api.get(&format!("{}/{}", configs(i), second["id"])).await.ok().clone();
    assert!(active(&c2));
    // An instance without profiles has nothing to choose from; with several and none booted,
    // one must be named.
    let bare =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "bare"})).await;
    let b = id(bare.ok());
    wait_status(&api, b, "offline").await;
    api.post(&configs(b), json!({"label": "a", "devices": {}})).await.ok();
    api.post(&configs(b), json!({"label": "b", "devices": {}})).await.ok();
    api.post_empty(&format!("/compute/instances/{b}/boot")).await.expect_error(400, "config_id");
}

#[tokio::test]
async fn a_subnet_can_be_deleted_once_the_profile_interfaces_on_it_are() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "on-subnet", "booted": false, "interfaces": [{"purpose": "public"}, {"purpose": "vpc", "subnet_id": sid}]}),
    )
    .await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let subnet = format!("/vpcs/{}/subnets/{sid}", id(&v));
    api.delete(&subnet).await.status_is(400);
    let c = first_config(&api, i).await;
    // Redefining the profile's interfaces replaces them all.
    api.put(&format!("{}/{}", configs(i), c["id"]), json!({"interfaces": [{"purpose": "public"}]})).await.ok();
    api.delete(&subnet).await.ok();
}
