//! What the hosted API does with an instance beyond boot and shutdown: the default of `booted`,
//! rebuild, resize, mutate, migrate, clone, root password reset, rescue, transfer and statistics,
//! and delete of a balancer back end.

use serde_json::{Value, json};

use crate::instances::{ROOT_PASS, create_instance, id, wait_status};
use crate::support::*;
use crate::vpcs::create_vpc;

fn path(i: i64, rest: &str) -> String {
    format!("/compute/instances/{i}{rest}")
}

async fn disk_ids(api: &Api, i: i64) -> Vec<i64> {
    api.get(&path(i, "/disks")).await.ok()["data"].as_array().unwrap().iter().map(id).collect()
}

/// How many events of `action` the account has, and the status of the latest.
async fn events_of(api: &Api, action: &str) -> (usize, String) {
    let ev = api.get_filtered("/account/events", &json!({"action": action}).to_string()).await.ok().clone();
    let list = ev["data"].as_array().unwrap().clone();
    (list.len(), list.first().map(|e| e["status"].as_str().unwrap().to_string()).unwrap_or_default())
}

#[tokio::test]
async fn an_instance_boots_by_default_only_when_an_image_is_deployed() {
    let s = TestServer::start().await;
    let api = s.api();
    let bare =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "bare"})).await;
    let b = id(bare.ok());
    let imaged = create_instance(&api, "us-east", json!({"label": "imaged"})).await;
    wait_status(&api, id(&imaged), "running").await;
    wait_status(&api, b, "offline").await;
    let explicit = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "label": "told", "booted": true}),
        )
        .await;
    wait_status(&api, id(explicit.ok()), "running").await;
    assert_eq!(api.get(&path(b, "")).await.ok()["status"], "offline", "nothing booted it");
}

#[tokio::test]
async fn a_rebuild_deploys_the_image_on_new_disks_keeps_the_interfaces_and_boots() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "rebuilt", "interfaces": [{"purpose": "public"}, {"purpose": "vpc", "subnet_id": sid, "ipv4": {"vpc": "10.0.0.7"}}]}),
    )
    .await;
    let i = id(&inst);
    wait_status(&api, i, "running").await;
    let old_disks = disk_ids(&api, i).await;
    let old_config = api.get(&path(i, "/configs")).await.ok()["data"][0].clone();
    // The checks come first, all at once.
    let r = api.post(&path(i, "/rebuild"), json!({"type": "g6-huge", "authorized_keys": ["nope"]})).await;
    r.expect_error(400, "image").expect_error(400, "type").expect_error(400, "authorized_keys[0]");
    api.post(&path(i, "/rebuild"), json!({"image": "linode/debian12"})).await.expect_error(400, "root_pass");
    let r = api.post(&path(i, "/rebuild"), json!({"image": "linode/alpine3.20", "root_pass": ROOT_PASS})).await;
    let rebuilt = r.ok().clone();
    assert_eq!(
        (rebuilt["image"].as_str(), rebuilt["status"].as_str()),
        (Some("linode/alpine3.20"), Some("rebuilding"))
    );
    wait_status(&api, i, "running").await;
    assert_eq!(events_of(&api, "instance_rebuild").await, (1, "finished".to_string()));
    assert_eq!(events_of(&api, "instance_boot").await.0, 2, "it booted at creation and after the rebuild");
    let new_disks = disk_ids(&api, i).await;
    assert_eq!(new_disks.len(), 2);
    assert!(new_disks.iter().all(|d| !old_disks.contains(d)), "{old_disks:?} -> {new_disks:?}");
    let configs = api.get(&path(i, "/configs")).await.ok().clone();
    assert_eq!(configs["results"], 1);
    let c = &configs["data"][0];
    assert_ne!(c["id"], old_config["id"]);
    assert_eq!(c["label"], "My Alpine 3.20 Disk Profile");
    let kept: Vec<(&str, Option<&str>)> = c["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["purpose"].as_str().unwrap(), f["ipv4"]["vpc"].as_str()))
        .collect();
    assert_eq!(kept, [("public", None), ("vpc", Some("10.0.0.7"))], "the new profile took over the interfaces");
    assert_eq!(c["interfaces"][1]["active"], true);
    let actions = event_actions(&api).await;
    assert!(actions.contains(&"instance_rebuild".to_string()), "{actions:?}");
    // booted false leaves it off; the plan can change on the way.
    let r = api
        .post(
            &path(i, "/rebuild"),
            json!({"image": "linode/debian12", "root_pass": ROOT_PASS, "booted": false, "type": "g6-standard-1"}),
        )
        .await;
    r.ok();
    wait_status(&api, i, "offline").await;
    let after = api.get(&path(i, "")).await.ok().clone();
    assert_eq!((after["type"].as_str(), after["specs"]["disk"].as_i64()), (Some("g6-standard-1"), Some(51200)));
    let total: i64 = api.get(&path(i, "/disks")).await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["size"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 51200, "the new disks fill the new plan");
}

#[tokio::test]
async fn a_resize_moves_to_the_plan_resizing_the_disk_and_boots_again() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "resized"})).await;
    let i = id(&inst);
    wait_status(&api, i, "running").await;
    let r = api.post(&path(i, "/resize"), json!({"type": "g6-nope", "migration_type": "hot"})).await;
    r.expect_error(400, "type").expect_error(400, "migration_type");
    api.post(&path(i, "/resize"), json!({"type": "g6-nanode-1"})).await.expect_error(400, "type");
    api.post(&path(i, "/resize"), json!({"type": "g6-standard-1"})).await.ok();
    wait_status(&api, i, "running").await;
    assert_eq!(events_of(&api, "instance_resize").await, (1, "finished".to_string()));
    assert_eq!(events_of(&api, "instance_boot").await.0, 2, "it booted again after the resize");
    let now = api.get(&path(i, "")).await.ok().clone();
    assert_eq!((now["type"].as_str(), now["specs"]["memory"].as_i64()), (Some("g6-standard-1"), Some(2048)));
    let sizes: Vec<i64> = api.get(&path(i, "/disks")).await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["size"].as_i64().unwrap())
        .collect();
    assert_eq!(sizes, [51200 - 512, 512], "the disk grew into the new plan");
    let actions = event_actions(&api).await;
    assert!(
        actions.contains(&"instance_resize".to_string()) && actions.contains(&"instance_resize_create".to_string())
    );
    // Down again without resizing disks automatically: they no longer fit.
    api.post(&path(i, "/resize"), json!({"type": "g6-nanode-1", "allow_auto_disk_resize": false}))
        .await
        .expect_error(400, "type");
    // With it, the disk shrinks to fit.
    api.post(&path(i, "/resize"), json!({"type": "g6-nanode-1"})).await.ok();
    wait_status(&api, i, "running").await;
    assert_eq!(disk_ids(&api, i).await.len(), 2);
    let main = api.get(&path(i, "/disks")).await.ok()["data"][0]["size"].clone();
    assert_eq!(main, 25600 - 512);
    // A busy instance is refused; there is no newer generation to mutate to.
    api.post_empty(&path(i, "/reboot")).await.ok();
    api.post(&path(i, "/resize"), json!({"type": "g6-standard-2"})).await.status_is(400);
    wait_status(&api, i, "running").await;
    api.post_empty(&path(i, "/mutate")).await.status_is(400);
}

#[tokio::test]
async fn a_migration_to_another_region_gives_new_public_addresses() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "moved", "booted": false, "private_ip": true})).await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    // Within the region (another host): through migrating, back to offline.
    api.post_empty(&path(i, "/migrate")).await.ok();
    wait_status(&api, i, "offline").await;
    assert_eq!(events_of(&api, "instance_migrate").await, (1, "finished".to_string()));
    assert_eq!(events_of(&api, "instance_boot").await.0, 0, "it was off, and stays off");
    let r = api
        .post(
            &path(i, "/migrate"),
            json!({"region": "mars", "type": "warm", "upgrade": true, "placement_group": {"id": 1}}),
        )
        .await;
    for f in ["region", "upgrade", "placement_group"] {
        r.expect_error(400, f);
    }
    api.post(&path(i, "/migrate"), json!({"region": "us-east"})).await.expect_error(400, "region");
    api.post(&path(i, "/migrate"), json!({"region": "us-west", "type": "warm"})).await.expect_error(400, "type");
    api.post(&path(i, "/migrate"), json!({"region": "us-west"})).await.ok();
    wait_status(&api, i, "offline").await;
    let moved = api.get(&path(i, "")).await.ok().clone();
    assert_eq!(moved["region"], "us-west");
    let public = moved["ipv4"][0].as_str().unwrap();
    assert_ne!(public, inst["ipv4"][0].as_str().unwrap(), "a new public address");
    let west = s.public_pool("us-west").0;
    assert!(west.contains(public), "a us-west address ({west}): {public}");
    assert_eq!(moved["ipv4"][1], inst["ipv4"][1], "the private address stays");
    let ips = api.get(&path(i, "/ips")).await.ok().clone();
    assert_eq!(ips["ipv4"]["public"][0]["region"], "us-west");
    assert!(event_actions(&api).await.contains(&"instance_migrate_datacenter".to_string()));
    // An instance on a VPC, or on a VLAN towards a region without VLANs, stays.
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let on_vpc = create_instance(
        &api,
        "us-east",
        json!({"label": "onvpc", "booted": false, "interfaces": [{"purpose": "vpc", "subnet_id": id(&v["subnets"][0])}]}),
    )
    .await;
    wait_status(&api, id(&on_vpc), "offline").await;
    api.post(&path(id(&on_vpc), "/migrate"), json!({"region": "us-west"})).await.expect_error(400, "region");
    let on_vlan = create_instance(
        &api,
        "us-east",
        json!({"label": "onvlan", "booted": false, "interfaces": [{"purpose": "vlan", "label": "back"}]}),
    )
    .await;
    wait_status(&api, id(&on_vlan), "offline").await;
    api.post(&path(id(&on_vlan), "/migrate"), json!({"region": "ap-south"})).await.expect_error(400, "region");
}

#[tokio::test]
async fn a_clone_copies_profiles_and_disks_to_a_new_or_an_existing_instance() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst =
        create_instance(&api, "us-east", json!({"label": "src", "booted": false, "tags": ["web"], "boot_size": 5000}))
            .await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let r = api.post(&path(i, "/clone"), json!({"region": "us-east"})).await;
    r.expect_error(400, "type");
    let r = api.post(&path(i, "/clone"), json!({"region": "us-west", "type": "g6-standard-1", "label": "copy"})).await;
    let copy = r.ok().clone();
    assert_eq!(
        (copy["label"].as_str(), copy["region"].as_str(), copy["image"].as_str()),
        (Some("copy"), Some("us-west"), Some("linode/debian12"))
    );
    assert_eq!(copy["tags"], json!(["web"]));
    let c = id(&copy);
    wait_status(&api, c, "offline").await;
    let sizes =
        |v: &Value| -> Vec<i64> { v["data"].as_array().unwrap().iter().map(|d| d["size"].as_i64().unwrap()).collect() };
    assert_eq!(sizes(api.get(&path(c, "/disks")).await.ok()), [5000, 512]);
    let cfg = api.get(&path(c, "/configs")).await.ok()["data"][0].clone();
    let disks = disk_ids(&api, c).await;
    assert_eq!(cfg["devices"]["sda"]["disk_id"].as_i64(), Some(disks[0]), "the device map names the copies");
    let ev = api.get("/account/events").await.ok().clone();
    let clone_event = ev["data"].as_array().unwrap().iter().find(|e| e["action"] == "instance_clone").unwrap().clone();
    assert_eq!(clone_event["entity"]["id"].as_i64(), Some(i));
    assert_eq!(clone_event["secondary_entity"]["id"], json!(c.to_string()));
    // To an existing instance: it must have room; fields of a new one are refused.
    let target =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "tgt"})).await;
    let t = id(target.ok());
    wait_status(&api, t, "offline").await;
    api.post(&path(i, "/clone"), json!({"instance_id": t, "region": "us-east"})).await.expect_error(400, "region");
    api.post(&path(i, "/clone"), json!({"instance_id": 999_999})).await.expect_error(400, "instance_id");
    api.post(&path(i, "/clone"), json!({"instance_id": t, "configs": [], "disks": [disk_ids(&api, i).await[1]]}))
        .await
        .ok();
    assert_eq!(sizes(api.get(&path(t, "/disks")).await.ok()), [512]);
    assert_eq!(api.get(&path(t, "/configs")).await.ok()["results"], 0, "no profile was asked for");
    api.post(&path(i, "/clone"), json!({"instance_id": t})).await.ok();
    assert_eq!(api.get(&path(t, "/configs")).await.ok()["results"], 1);
    // A plan too small for the disks.
    let big = create_instance(&api, "us-east", json!({"label": "big", "type": "g6-standard-1", "booted": false})).await;
    wait_status(&api, id(&big), "offline").await;
    api.post(&path(id(&big), "/clone"), json!({"region": "us-east", "type": "g6-nanode-1"}))
        .await
        .expect_error(400, "type");
}

#[tokio::test]
async fn the_root_password_is_reset_only_while_the_instance_is_off() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "password"})).await;
    let i = id(&inst);
    wait_status(&api, i, "running").await;
    api.post(&path(i, "/password"), json!({"root_pass": "another-Passw0rd"})).await.status_is(400);
    api.post_empty(&path(i, "/shutdown")).await.ok();
    wait_status(&api, i, "offline").await;
    api.post(&path(i, "/password"), json!({"root_pass": "weak"})).await.expect_error(400, "root_pass");
    let before = db_scalar(
        &s,
        &format!("SELECT COUNT(*) FROM instance_disks WHERE instance_id = {i} AND root_pass_hash LIKE '$argon2id$%'"),
    )
    .await;
    assert_eq!(before, 1);
    api.post(&path(i, "/password"), json!({"root_pass": "another-Passw0rd"})).await.ok();
    assert!(event_actions(&api).await.contains(&"password_reset".to_string()));
    let clear = db_scalar(&s, "SELECT COUNT(*) FROM instance_disks WHERE root_pass_hash LIKE '%Passw0rd%'").await;
    assert_eq!(clear, 0, "only the hash is kept");
}

#[tokio::test]
async fn rescue_boots_the_instance_with_the_disks_named() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "resc", "booted": false})).await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    let d = disk_ids(&api, i).await;
    api.post(&path(i, "/rescue"), json!({"devices": {"sda": {"disk_id": 999_999}}}))
        .await
        .expect_error(400, "devices.sda.disk_id");
    api.post(&path(i, "/rescue"), json!({"devices": {"sdh": {"disk_id": d[0]}}}))
        .await
        .expect_error(400, "devices.sdh");
    // The document names the slots a rescue takes, `sdh` not among them.
    let doc = api.get("/openapi.json").await;
    let slots: Option<Vec<String>> = doc.ok()["components"]["schemas"]["RescueDevices"]["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect());
    assert_eq!(slots, Some(["sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg"].map(String::from).to_vec()));
    api.post(&path(i, "/rescue"), json!({"devices": {"sda": {"disk_id": d[0]}, "sdb": {"disk_id": d[1]}}})).await.ok();
    wait_status(&api, i, "running").await;
}

#[tokio::test]
async fn transfer_and_statistics_cover_the_month_and_the_last_day() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "use", "booted": false})).await;
    let i = id(&inst);
    let t = api.get(&path(i, "/transfer")).await;
    assert_eq!(t.ok(), &json!({"billable": 0, "quota": 1000, "used": 0}));
    let m = api.get(&path(i, "/transfer/2024/1")).await;
    assert_eq!(m.ok(), &json!({"bytes_in": 0, "bytes_out": 0, "bytes_total": 0}));
    api.get(&path(i, "/transfer/2999/1")).await.expect_error(400, "month");
    api.get(&path(i, "/transfer/2024/13")).await.expect_error(400, "month");
    let st = api.get(&path(i, "/stats")).await.ok().clone();
    assert!(st["cpu"].is_array(), "{st}");
    for (k, sub) in [("io", "io"), ("io", "swap"), ("netv4", "in"), ("netv4", "private_out"), ("netv6", "out")] {
        assert!(st[k][sub].is_array(), "{k}.{sub} in {st}");
    }
    assert!(st["title"].as_str().unwrap().contains("use"));
    let now = chrono::Utc::now();
    let month = api
        .get(&path(i, &format!("/stats/{}/{}", now.format("%Y"), now.format("%m").to_string().trim_start_matches('0'))))
        .await;
    assert!(month.ok()["cpu"].is_array());
    // In the hosted names too.
    api.get(&format!("/linode/instances/{i}/stats")).await.ok();
}

#[tokio::test]
async fn hosted_fields_nubis_does_not_offer_are_refused_naming_them() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "disk_encryption": "enabled", "placement_group": {"id": 1},
                   "maintenance_policy": "linode/power_off_on", "ipv4": ["127.10.0.99"], "kernel": "linode/nope"}),
        )
        .await;
    for f in ["disk_encryption", "placement_group", "maintenance_policy", "ipv4", "kernel"] {
        r.expect_error(400, f);
    }
    // The defaults named explicitly are fine; a fetched record can be sent back as it is.
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "plain", "booted": false, "disk_encryption": "disabled",
        "maintenance_policy": "linode/migrate"}),
    )
    .await;
    let i = id(&inst);
    let record = api.get(&path(i, "")).await.ok().clone();
    api.put(&path(i, ""), record.clone()).await.ok();
    let mut changed = record.clone();
    changed["backups"]["schedule"]["day"] = json!("Funday");
    changed["maintenance_policy"] = json!("linode/power_off_on");
    changed["ipv4"] = json!(["127.10.0.250"]);
    let r = api.put(&path(i, ""), changed).await;
    for f in ["backups.schedule.day", "maintenance_policy", "ipv4"] {
        r.expect_error(400, f);
    }
}

#[tokio::test]
async fn a_clone_copies_interfaces_with_new_vpc_addresses_in_the_same_region_only() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = create_vpc(&api, "net", &[("sub", "10.0.0.0/24")]).await;
    let sid = id(&v["subnets"][0]);
    let inst = create_instance(
        &api,
        "us-east",
        json!({"label": "src-vpc", "booted": false,
               "interfaces": [{"purpose": "public"}, {"purpose": "vpc", "subnet_id": sid, "ipv4": {"vpc": "10.0.0.5", "nat_1_1": "any"}}]}),
    )
    .await;
    let i = id(&inst);
    wait_status(&api, i, "offline").await;
    api.post(&path(i, "/clone"), json!({"region": "us-west", "type": "g6-nanode-1"})).await.expect_error(400, "region");
    let copy =
        api.post(&path(i, "/clone"), json!({"region": "us-east", "type": "g6-nanode-1", "label": "dst-vpc"})).await;
    let c = id(copy.ok());
    let cfg = api.get(&path(c, "/configs")).await.ok()["data"][0].clone();
    let f = &cfg["interfaces"][1];
    assert_eq!(f["purpose"], "vpc");
    assert_ne!(f["ipv4"]["vpc"], "10.0.0.5", "a new address in the subnet");
    assert_eq!(f["ipv4"]["nat_1_1"], copy.body["ipv4"][0], "the 1:1 NAT is the copy's own public address");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 2, "the refused clone made nothing");
}
