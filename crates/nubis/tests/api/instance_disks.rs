//! Disks of instances (the hosted API's `disks`): their operations, the plan they must fit, the
//! profiles that name them, and what a running instance protects.

use serde_json::json;

use crate::instances::{ROOT_PASS, create_instance, id, wait_status};
use crate::support::*;

fn disks(i: i64) -> String {
    format!("/compute/instances/{i}/disks")
}

/// An instance without an image (no disks yet), offline.
async fn empty_instance(api: &Api, label: &str) -> i64 {
    let r = api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": label})).await;
    let i = id(r.ok());
    wait_status(api, i, "offline").await;
    i
}

#[tokio::test]
async fn disks_are_created_relabeled_duplicated_resized_and_deleted() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = empty_instance(&api, "disky").await;
    let d = api.post(&disks(i), json!({"label": "data", "size": 1000, "filesystem": "ext3", "read_only": false})).await;
    let d = d.ok().clone();
    assert_eq!(
        (d["status"].as_str(), d["filesystem"].as_str(), d["size"].as_i64()),
        (Some("ready"), Some("ext3"), Some(1000))
    );
    let deployed = api
        .post(&disks(i), json!({"size": 2000, "image": "linode/debian12", "root_pass": ROOT_PASS}))
        .await
        .ok()
        .clone();
    assert_eq!(deployed["label"], "Debian 12 Disk", "a disk with an image is named after it");
    let u = api.put(&format!("{}/{}", disks(i), id(&d)), json!({"label": "data2"})).await;
    assert_eq!(u.ok()["label"], "data2");
    let copy = api.post_empty(&format!("{}/{}/clone", disks(i), id(&d))).await.ok().clone();
    assert_eq!((copy["size"].as_i64(), copy["filesystem"].as_str()), (Some(1000), Some("ext3")));
    assert_ne!(copy["id"], d["id"]);
    api.post(&format!("{}/{}/resize", disks(i), id(&copy)), json!({"size": 3000})).await.ok();
    assert_eq!(api.get(&format!("{}/{}", disks(i), id(&copy))).await.ok()["size"], 3000);
    api.post(&format!("{}/{}/password", disks(i), id(&deployed)), json!({"password": ROOT_PASS})).await.ok();
    api.post(&format!("{}/{}/password", disks(i), id(&deployed)), json!({"password": "weak"}))
        .await
        .expect_error(400, "password");
    assert_eq!(api.get_filtered(&disks(i), r#"{"filesystem": "ext3"}"#).await.ok()["results"], 2);
    api.delete(&format!("{}/{}", disks(i), id(&copy))).await.ok();
    api.get(&format!("{}/{}", disks(i), id(&copy))).await.expect_error(404, "-");
    let actions = event_actions(&api).await;
    for a in ["disk_create", "disk_update", "disk_duplicate", "disk_resize", "password_reset", "disk_delete"] {
        assert!(actions.contains(&a.to_string()), "{a} in {actions:?}");
    }
}

#[tokio::test]
async fn the_disks_of_an_instance_fit_its_plan() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = empty_instance(&api, "fits").await;
    // g6-nanode-1 has 25600 MB.
    let a = api.post(&disks(i), json!({"label": "a", "size": 25000})).await.ok().clone();
    api.post(&disks(i), json!({"label": "b", "size": 601})).await.expect_error(400, "size");
    let b = api.post(&disks(i), json!({"label": "b", "size": 600})).await.ok().clone();
    api.post_empty(&format!("{}/{}/clone", disks(i), id(&b))).await.expect_error(400, "size");
    api.post(&format!("{}/{}/resize", disks(i), id(&b)), json!({"size": 601})).await.expect_error(400, "size");
    api.post(&format!("{}/{}/resize", disks(i), id(&a)), json!({"size": 0})).await.expect_error(400, "size");
    assert_eq!(api.get(&disks(i)).await.ok()["results"], 2);
    // An image needs room for itself, and a way in for root.
    let j = empty_instance(&api, "fits2").await;
    let r = api.post(&disks(j), json!({"size": 100, "image": "linode/debian12"})).await;
    r.expect_error(400, "size").expect_error(400, "root_pass");
    api.post(&disks(j), json!({"size": 100})).await.expect_error(400, "label");
    api.post(&disks(j), json!({"label": "x", "size": 100, "root_pass": ROOT_PASS}))
        .await
        .expect_error(400, "root_pass");
    let r = api
        .post(
            &disks(j),
            json!({"label": "x", "size": 100, "filesystem": "zfs", "read_only": true, "stackscript_id": 1}),
        )
        .await;
    r.expect_error(400, "filesystem").expect_error(400, "read_only").expect_error(400, "stackscript_id");
}

#[tokio::test]
async fn a_running_instance_keeps_the_disks_of_its_profile_and_profiles_forget_deleted_disks() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "busy", "boot_size": 10000})).await;
    let i = id(&inst);
    wait_status(&api, i, "running").await;
    let list = api.get(&disks(i)).await.ok().clone();
    let main = id(&list["data"][0]);
    api.post(&format!("{}/{main}/resize", disks(i)), json!({"size": 12000})).await.status_is(400);
    api.delete(&format!("{}/{main}", disks(i))).await.status_is(400);
    api.post(&format!("{}/{main}/password", disks(i)), json!({"password": ROOT_PASS})).await.status_is(400);
    // A disk outside the running profile may change.
    let extra = api.post(&disks(i), json!({"label": "extra", "size": 1000})).await.ok().clone();
    api.post(&format!("{}/{}/resize", disks(i), id(&extra)), json!({"size": 2000})).await.ok();
    api.post_empty(&format!("/compute/instances/{i}/shutdown")).await.ok();
    wait_status(&api, i, "offline").await;
    api.post(&format!("{}/{main}/resize", disks(i)), json!({"size": 12000})).await.ok();
    api.delete(&format!("{}/{main}", disks(i))).await.ok();
    let c = api.get(&format!("/compute/instances/{i}/configs")).await.ok()["data"][0].clone();
    assert_eq!(c["devices"]["sda"], serde_json::Value::Null, "the profile forgot the disk");
    assert!(c["devices"]["sdb"]["disk_id"].is_i64(), "the swap disk stays");
}
