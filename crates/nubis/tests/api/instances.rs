//! Compute instances (issue 4, spec 1 steps 3-5): create, read, update, delete, power states
//! through the simulated runtime, the addresses every instance gets, grants and events.

use serde_json::{Value, json};

use crate::support::*;

pub const ROOT_PASS: &str = "aComplexP@ssword";

/// Creates an instance in `region` with extra fields merged into the body, asserting success.
pub async fn create_instance(api: &Api, region: &str, extra: Value) -> Value {
    let mut body = json!({"region": region, "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": ROOT_PASS});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    api.post("/compute/instances", body).await.ok().clone()
}

pub fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

/// Waits until the instance reaches `status`.
pub async fn wait_status(api: &Api, id: i64, status: &str) -> Value {
    eventually(20, &format!("instance {id} to be {status}"), || {
        let api = api.clone();
        let status = status.to_string();
        async move {
            let r = api.get(&format!("/compute/instances/{id}")).await;
            (r.body["status"] == status.as_str()).then(|| r.body.clone())
        }
    })
    .await
}

async fn instance_count(api: &Api) -> u64 {
    api.get("/compute/instances").await.ok()["results"].as_u64().unwrap()
}

#[tokio::test]
async fn walkthrough_create_offline_give_a_private_address_and_boot() {
    let s = TestServer::start().await;
    let api = s.api();
    // Step 3: create with booted false (trailing slash as the walkthrough writes it).
    let body = json!({"region": "us-east", "type": "g6-standard-1", "image": "linode/debian12", "root_pass": ROOT_PASS, "booted": false});
    let r = api.post("/compute/instances/", body).await;
    let inst = r.ok().clone();
    let iid = id(&inst);
    assert_eq!(inst["status"], "provisioning");
    assert!(inst.get("root_pass").is_none() && !r.text.contains(ROOT_PASS), "{}", r.text);
    let inst = wait_status(&api, iid, "offline").await;
    // Stays offline.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["status"], "offline");
    assert_eq!(inst["ipv4"].as_array().unwrap().len(), 1);
    // Step 4: a private IPv4 address.
    let ip = api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": iid})).await;
    let ip = ip.ok().clone();
    let addr = ip["address"].as_str().unwrap().to_string();
    let private = s.private_pool();
    assert!(private.contains(&addr), "{addr} is in the private pool {private}");
    assert_eq!(ip["public"], false);
    assert_eq!(ip["prefix"], private.prefix);
    assert_eq!(ip["subnet_mask"], Pool::mask(private.prefix));
    assert_eq!(ip["gateway"], Value::Null);
    assert_eq!(ip["rdns"], Value::Null);
    assert_eq!(ip["type"], "ipv4");
    assert_eq!(ip["instance_id"], iid);
    assert_eq!(ip["region"], "us-east");
    let ipv4 = api.get(&format!("/compute/instances/{iid}")).await.ok()["ipv4"].clone();
    assert_eq!(ipv4.as_array().unwrap().len(), 2);
    assert_eq!(ipv4[1], addr.as_str());
    // Step 5: boot.
    assert_eq!(api.post_empty(&format!("/compute/instances/{iid}/boot")).await.ok(), &json!({}));
    let st = api.get(&format!("/compute/instances/{iid}")).await.ok()["status"].clone();
    assert!(st == "booting" || st == "running", "{st}");
    wait_status(&api, iid, "running").await;
    let ips = api.get(&format!("/compute/instances/{iid}/ips")).await;
    assert_eq!(ips.ok()["ipv4"]["private"][0]["address"], addr.as_str());
}

#[tokio::test]
async fn create_accepts_the_collection_path_with_and_without_trailing_slash() {
    let s = TestServer::start().await;
    let api = s.api();
    create_instance(&api, "us-east", json!({"label": "no-slash"})).await;
    let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": "with-slash"});
    api.post("/compute/instances/", body).await.ok();
    assert_eq!(instance_count(&api).await, 2);
    assert_eq!(api.get("/compute/instances/").await.ok()["results"], 2);
}

#[tokio::test]
async fn a_created_instance_is_provisioned_then_boots_and_runs_by_default() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({})).await;
    assert_eq!(inst["status"], "provisioning");
    let inst = wait_status(&api, id(&inst), "running").await;
    for f in [
        "id",
        "label",
        "region",
        "type",
        "image",
        "status",
        "group",
        "tags",
        "ipv4",
        "ipv6",
        "specs",
        "alerts",
        "backups",
        "hypervisor",
        "created",
        "updated",
        "watchdog_enabled",
        "host_uuid",
        "has_user_data",
    ] {
        assert!(inst.get(f).is_some(), "instance lacks {f}: {inst}");
    }
    assert_eq!(inst["hypervisor"], "kvm");
    assert_eq!(inst["type"], "g6-nanode-1");
    assert_eq!(inst["image"], "linode/debian12");
    assert_eq!(inst["specs"], json!({"disk": 25600, "memory": 1024, "vcpus": 1, "gpus": 0, "transfer": 1000}));
    assert_eq!(inst["alerts"]["cpu"], 90);
    assert_eq!(inst["backups"]["enabled"], false);
    let ev = api.get("/account/events").await;
    let ev: Vec<(String, String)> = ev.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap().to_string(), e["status"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        ev[..2],
        [("instance_boot".into(), "finished".into()), ("instance_create".into(), "finished".into())],
        "{ev:?}"
    );
}

#[tokio::test]
async fn every_instance_gets_a_public_ipv4_a_slaac_and_a_link_local_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    let public = inst["ipv4"][0].as_str().unwrap();
    // us-east's pool: 127.10.0.0/16 with /24 subnets (simulated), the server's own /24 of
    // 198.18.0.0/15 (netns).
    let (pool, subnets) = s.public_pool("us-east");
    assert_eq!(subnets, 24);
    assert!(pool.contains(public), "us-east's pool is {pool}: {public}");
    let ips = api.get(&format!("/compute/instances/{iid}/ips")).await.ok().clone();
    let p = &ips["ipv4"]["public"][0];
    assert_eq!(p["address"], public);
    assert_eq!(p["gateway"], pool.host(1), "the first host of the first subnet");
    assert_eq!(p["prefix"], 24);
    assert_eq!(p["subnet_mask"], "255.255.255.0");
    assert_eq!(p["public"], true);
    assert_eq!(p["type"], "ipv4");
    assert_eq!(p["rdns"], format!("{}.ip.nubis.test", public.replace('.', "-")));
    assert_eq!(p["vpc_nat_1_1"], Value::Null);
    assert_eq!(ips["ipv4"]["private"], json!([]));
    let slaac = &ips["ipv6"]["slaac"];
    let addr: std::net::Ipv6Addr = slaac["address"].as_str().unwrap().parse().unwrap();
    assert_eq!(addr.segments()[..4], [0x2001, 0xdb8, 0xa, 0], "inside us-east's pool 2001:db8:a::/64");
    assert_eq!(addr.segments()[5] & 0xff, 0xff, "EUI-64: ff:fe in the middle");
    assert_eq!(addr.segments()[6] >> 8, 0xfe);
    assert_eq!(slaac["prefix"], 64);
    assert_eq!(slaac["gateway"], "fe80::1");
    assert_eq!(slaac["subnet_mask"], "ffff:ffff:ffff:ffff::");
    assert_eq!(slaac["type"], "ipv6");
    assert_eq!(slaac["public"], true);
    assert_eq!(inst["ipv6"], format!("{addr}/128"));
    let ll = &ips["ipv6"]["link_local"];
    let ll_addr: std::net::Ipv6Addr = ll["address"].as_str().unwrap().parse().unwrap();
    assert_eq!(ll_addr.segments()[..4], [0xfe80, 0, 0, 0]);
    assert_eq!(ll_addr.segments()[4..], addr.segments()[4..], "the same interface id");
    assert_eq!(ll["public"], false);
    assert_eq!(ips["ipv6"]["global"], json!([]));
    // Another region: its own pools.
    let west = create_instance(&api, "us-west", json!({"booted": false})).await;
    let west_pool = s.public_pool("us-west").0;
    assert!(
        west_pool.contains(west["ipv4"][0].as_str().unwrap()),
        "us-west's pool is {west_pool}: {}",
        west["ipv4"][0]
    );
    assert!(west["ipv6"].as_str().unwrap().starts_with("2001:db8:b:0:"), "{}", west["ipv6"]);
}

#[tokio::test]
async fn private_ip_true_gives_a_private_address_at_creation() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let v4 = inst["ipv4"].as_array().unwrap();
    assert_eq!(v4.len(), 2);
    assert!(s.private_pool().contains(v4[1].as_str().unwrap()), "{v4:?}");
    let again = api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": id(&inst)})).await;
    again.expect_error(400, "public");
}

#[tokio::test]
async fn create_checks_every_field_at_once_and_creates_nothing_on_error() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/compute/instances", json!({})).await;
    r.expect_error(400, "region").expect_error(400, "type");
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "mars", "type": "g0-huge", "image": "linode/temple-os", "root_pass": "short", "label": "a",
                   "firewall_id": 12345, "backup_id": 1, "stackscript_id": 1, "authorized_keys": ["nope"],
                   "authorized_users": ["ghost"], "metadata": {"user_data": "not base64!"}, "tags": ["ab"]}),
        )
        .await;
    for f in [
        "region",
        "type",
        "image",
        "root_pass",
        "label",
        "firewall_id",
        "backup_id",
        "stackscript_id",
        "authorized_keys[0]",
        "authorized_users[0]",
        "metadata.user_data",
        "tags[0]",
    ] {
        r.expect_error(400, f);
    }
    // An image needs a root password.
    api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12"}))
        .await
        .expect_error(400, "root_pass");
    assert_eq!(instance_count(&api).await, 0);
    assert!(!event_actions(&api).await.iter().any(|a| a == "instance_create"));
}

#[tokio::test]
async fn root_pass_must_be_strong_and_is_never_returned_or_stored_in_clear() {
    let s = TestServer::start().await;
    let api = s.api();
    let base = json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12"});
    for bad in
        ["Ab1!x", "alllowercaseletters", "password123", "ALLUPPER-AND-SYMBOLS", &format!("Aa1!{}", "x".repeat(125))]
    {
        let mut b = base.clone();
        b["root_pass"] = json!(bad);
        let r = api.post("/compute/instances", b).await;
        r.expect_error(400, "root_pass");
        assert!(r.text.contains("strength"), "{}", r.text);
    }
    assert_eq!(instance_count(&api).await, 0);
    let secret = "Sup3r-Secret-Root-Pass";
    let mut b = base.clone();
    b["root_pass"] = json!(secret);
    let r = api.post("/compute/instances", b).await;
    let iid = id(r.ok());
    assert!(!r.text.contains(secret));
    let got = api.get(&format!("/compute/instances/{iid}")).await;
    assert!(!got.text.contains(secret) && got.body.get("root_pass").is_none());
    assert!(!api.get("/account/events").await.text.contains(secret));
    let hashed = db_scalar(
        &s,
        &format!("SELECT COUNT(*) FROM instances WHERE id = {iid} AND root_pass_hash LIKE '$argon2id$%' AND root_pass_hash NOT LIKE '%{secret}%'"),
    )
    .await;
    assert_eq!(hashed, 1, "stored as an argon2id hash only");
    assert!(!s.log().contains(secret), "never logged");
}

#[tokio::test]
async fn labels_follow_the_rules_are_unique_and_generated_when_omitted() {
    let s = TestServer::start().await;
    let api = s.api();
    for bad in ["ab", "-web", "web-", "we--b", "we__b", "we..b", "we b", &"x".repeat(65)] {
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": bad}))
            .await
            .expect_error(400, "label");
    }
    let a = create_instance(&api, "us-east", json!({"label": "web.1_a-b"})).await;
    api.post("/compute/instances", json!({"region": "us-west", "type": "g6-nanode-1", "label": "web.1_a-b"}))
        .await
        .expect_error(400, "label");
    let g = create_instance(&api, "us-east", json!({})).await;
    let label = g["label"].as_str().unwrap();
    assert!(label.len() >= 3 && label.chars().next().unwrap().is_ascii_alphanumeric(), "{label}");
    api.put(&format!("/compute/instances/{}", id(&g)), json!({"label": "web.1_a-b"})).await.expect_error(400, "label");
    assert_eq!(api.get(&format!("/compute/instances/{}", id(&g))).await.ok()["label"], label, "nothing changed");
    // Another account may use the label.
    create_instance(&other_account(&s), "us-east", json!({"label": "web.1_a-b"})).await;
    let _ = a;
}

#[tokio::test]
async fn power_actions_refuse_what_the_state_does_not_allow() {
    // Slow enough transitions to observe the transitional states.
    let slow = TEST_CONFIG
        .replace("provision_ms = 20", "provision_ms = 800")
        .replace("reboot_ms = 40", "reboot_ms = 800")
        .replace("shutdown_ms = 30", "shutdown_ms = 800");
    let s = TestServer::start_with(Options { config: slow, ..Default::default() }).await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    // Busy while provisioning.
    let r = api.post_empty(&format!("/compute/instances/{iid}/boot")).await;
    r.expect_error(400, "-");
    let reason = r.body["errors"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("busy (provisioning)"), "names the status: {reason}");
    assert!(reason.contains("retry once its status is offline"), "says when to retry: {reason}");
    wait_status(&api, iid, "offline").await;
    api.post_empty(&format!("/compute/instances/{iid}/shutdown")).await.expect_error(400, "-");
    api.post_empty(&format!("/compute/instances/{iid}/reboot")).await.expect_error(400, "-");
    api.post(&format!("/compute/instances/{iid}/boot"), json!({})).await.ok();
    wait_status(&api, iid, "running").await;
    api.post_empty(&format!("/compute/instances/{iid}/boot")).await.expect_error(400, "-");
    api.post_empty(&format!("/compute/instances/{iid}/reboot")).await.ok();
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["status"], "rebooting");
    wait_status(&api, iid, "running").await;
    api.post_empty(&format!("/compute/instances/{iid}/shutdown")).await.ok();
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["status"], "shutting_down");
    wait_status(&api, iid, "offline").await;
    let actions = event_actions(&api).await;
    assert_eq!(&actions[..3], ["instance_shutdown", "instance_reboot", "instance_boot"]);
    let ev = api.get("/account/events").await;
    assert!(ev.ok()["data"].as_array().unwrap().iter().all(|e| e["status"] == "finished"));
    api.post_empty("/compute/instances/999999/boot").await.expect_error(404, "-");
}

#[tokio::test]
async fn instances_are_updated_with_an_event_and_bad_input_changes_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "before", "booted": false})).await;
    let url = format!("/compute/instances/{}", id(&inst));
    let r = api
        .put(&url, json!({"label": "after", "tags": ["web", "prod"], "group": "g1", "watchdog_enabled": false, "alerts": {"cpu": 50}}))
        .await;
    let v = r.ok();
    assert_eq!(v["label"], "after");
    assert_eq!(v["tags"], json!(["web", "prod"]));
    assert_eq!(v["group"], "g1");
    assert_eq!(v["watchdog_enabled"], false);
    assert_eq!(v["alerts"]["cpu"], 50);
    assert_eq!(v["alerts"]["io"], 10000);
    assert_eq!(event_actions(&api).await[0], "instance_update");
    let r = api.put(&url, json!({"label": "x", "tags": ["ok-tag", "no"], "alerts": {"transfer_quota": 101}})).await;
    r.expect_error(400, "label").expect_error(400, "tags[1]").expect_error(400, "alerts.transfer_quota");
    let got = api.get(&url).await;
    assert_eq!(got.ok()["label"], "after");
    assert_eq!(got.body["tags"], json!(["web", "prod"]));
    // Read-only fields sent back are ignored.
    let mut whole = got.body.clone();
    whole["label"] = json!("again");
    whole["status"] = json!("running");
    whole["region"] = json!("us-west");
    let r = api.put(&url, whole).await;
    assert_eq!(r.ok()["label"], "again");
    assert_eq!(r.body["region"], "us-east");
    assert_ne!(r.body["status"], "running");
}

#[tokio::test]
async fn deleting_an_instance_frees_its_addresses() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    let (public, private) = (a["ipv4"][0].as_str().unwrap().to_string(), a["ipv4"][1].as_str().unwrap().to_string());
    let slaac = a["ipv6"].as_str().unwrap().trim_end_matches("/128").to_string();
    assert_eq!(api.delete(&format!("/compute/instances/{}", id(&a))).await.ok(), &json!({}));
    api.get(&format!("/compute/instances/{}", id(&a))).await.expect_error(404, "-");
    for addr in [&public, &private, &slaac] {
        api.get(&format!("/networking/ips/{addr}")).await.expect_error(404, "-");
    }
    assert_eq!(event_actions(&api).await[0], "instance_delete");
    // The freed addresses are handed out again.
    let b = create_instance(&api, "us-east", json!({"private_ip": true, "booted": false})).await;
    assert_eq!(b["ipv4"][0], public.as_str());
    assert_eq!(b["ipv4"][1], private.as_str());
    api.delete(&format!("/compute/instances/{}", id(&a))).await.expect_error(404, "-");
}

#[tokio::test]
async fn instance_scopes_and_grants_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    let theirs = create_instance(&api, "us-east", json!({"label": "owners", "booted": false})).await;
    let tid = id(&theirs);
    let (_, bob) = user_with_token(&s, "bobinst", true, "*").await;
    bob.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1"})).await.expect_error(403, "-");
    assert_eq!(bob.get("/compute/instances").await.ok()["results"], 0);
    for path in ["", "/ips", "/firewalls", "/nodebalancers"] {
        bob.get(&format!("/compute/instances/{tid}{path}")).await.expect_error(404, "-");
    }
    bob.post_empty(&format!("/compute/instances/{tid}/boot")).await.expect_error(404, "-");
    bob.delete(&format!("/compute/instances/{tid}")).await.expect_error(404, "-");
    assert_eq!(bob.get("/networking/ips").await.ok()["results"], 0);
    bob.get(&format!("/networking/ips/{}", theirs["ipv4"][0].as_str().unwrap())).await.expect_error(404, "-");

    api.put(
        "/account/users/bobinst/grants",
        json!({"global": {"add_instances": true}, "instance": [{"id": tid, "permissions": "read_only"}]}),
    )
    .await
    .ok();
    bob.get(&format!("/compute/instances/{tid}")).await.ok();
    bob.get(&format!("/compute/instances/{tid}/ips")).await.ok();
    bob.get(&format!("/networking/ips/{}", theirs["ipv4"][0].as_str().unwrap())).await.ok();
    bob.put(&format!("/compute/instances/{tid}"), json!({"label": "mine-now"})).await.expect_error(403, "-");
    bob.post_empty(&format!("/compute/instances/{tid}/shutdown")).await.expect_error(403, "-");
    bob.delete(&format!("/compute/instances/{tid}")).await.expect_error(403, "-");
    bob.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": tid}))
        .await
        .expect_error(403, "-");
    // Restricted users cannot set tags.
    bob.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "tags": ["abc"]}))
        .await
        .expect_error(403, "-");
    let mine =
        bob.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "bobs"})).await;
    let mid = id(mine.ok());
    let g = api.get("/account/users/bobinst/grants").await;
    let entry = g.ok()["instance"].as_array().unwrap().iter().find(|e| e["id"] == mid).unwrap().clone();
    assert_eq!(entry["permissions"], "read_write");
    assert_eq!(bob.get("/compute/instances").await.ok()["results"], 2);
    bob.put(&format!("/compute/instances/{mid}"), json!({"label": "bobs2"})).await.ok();
    bob.put(&format!("/compute/instances/{mid}"), json!({"tags": ["abc"]})).await.expect_error(403, "-");
    assert_eq!(api.get(&format!("/compute/instances/{tid}")).await.ok()["label"], "owners");
    // Scopes.
    let ro = api.post("/profile/tokens", json!({"scopes": "instances:read_only"})).await;
    let ro = s.api_with(ro.ok()["token"].as_str().unwrap());
    ro.get("/compute/instances").await.ok();
    ro.post_empty(&format!("/compute/instances/{tid}/boot")).await.expect_error(403, "-");
    ro.get("/networking/ips").await.expect_error(403, "-");
    let ips_only = api.post("/profile/tokens", json!({"scopes": "ips:read_write"})).await;
    let ips_only = s.api_with(ips_only.ok()["token"].as_str().unwrap());
    ips_only.get("/networking/ips").await.ok();
    let r = ips_only.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": tid})).await;
    r.expect_error(403, "-");
    assert_eq!(r.header("x-accepted-oauth-scopes"), Some("ips:read_write instances:read_write"));
}

#[tokio::test]
async fn another_accounts_instances_are_not_found() {
    let s = TestServer::start().await;
    let inst = create_instance(&s.api(), "us-east", json!({"booted": false})).await;
    let iid = id(&inst);
    let other = other_account(&s);
    other.get(&format!("/compute/instances/{iid}")).await.expect_error(404, "-");
    other.post_empty(&format!("/compute/instances/{iid}/boot")).await.expect_error(404, "-");
    other.delete(&format!("/compute/instances/{iid}")).await.expect_error(404, "-");
    other.get(&format!("/networking/ips/{}", inst["ipv4"][0].as_str().unwrap())).await.expect_error(404, "-");
    other
        .post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": iid}))
        .await
        .expect_error(400, "instance_id");
    assert_eq!(other.get("/compute/instances").await.ok()["results"], 0);
    assert_eq!(other.get("/networking/ips").await.ok()["results"], 0);
    s.api().get(&format!("/compute/instances/{iid}")).await.ok();
}

#[tokio::test]
async fn instance_lists_are_paged_and_filtered() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..4 {
        let region = if i % 2 == 0 { "us-east" } else { "us-west" };
        create_instance(&api, region, json!({"label": format!("node-{i}"), "booted": false})).await;
    }
    let west = api.get_filtered("/compute/instances", r#"{"region": "us-west"}"#).await;
    assert_eq!(west.ok()["results"], 2);
    let one = api.get_filtered("/compute/instances", r#"{"label": "node-2"}"#).await;
    assert_eq!(one.ok()["data"][0]["label"], "node-2");
    let p = api.get("/compute/instances?page=2&page_size=25").await;
    assert_eq!(p.ok()["data"], json!([]));
    assert_eq!(p.body["results"], 4);
}

#[tokio::test]
async fn firewalls_and_nodebalancers_of_an_instance_are_empty_pages() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    for path in ["firewalls", "nodebalancers"] {
        let r = api.get(&format!("/compute/instances/{}/{path}", id(&inst))).await;
        assert_eq!(r.ok(), &json!({"data": [], "page": 1, "pages": 1, "results": 0}));
    }
}

#[tokio::test]
async fn a_transition_interrupted_by_a_restart_is_completed() {
    let slow = TEST_CONFIG.replace("provision_ms = 20", "provision_ms = 60000");
    let mut s = TestServer::start_with(Options { config: slow, ..Default::default() }).await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({})).await;
    let iid = id(&inst);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["status"], "provisioning");
    s.kill9();
    s.set_config(TEST_CONFIG);
    s.restart();
    let api = s.api();
    wait_status(&api, iid, "running").await;
    let ev = api.get_filtered("/account/events", r#"{"action": "instance_create"}"#).await;
    assert_eq!(ev.ok()["data"][0]["status"], "finished");
}

#[tokio::test]
async fn concurrent_creates_never_share_an_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut tasks = Vec::new();
    for i in 0..12 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": format!("c{i:02}"), "private_ip": true, "booted": false});
            let r = api.post("/compute/instances", body).await;
            (r.status, r.body)
        }));
    }
    let mut addresses = std::collections::HashSet::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert_eq!(status, 200, "{body}");
        for a in body["ipv4"].as_array().unwrap() {
            assert!(addresses.insert(a.as_str().unwrap().to_string()), "{a} handed out twice");
        }
        assert!(addresses.insert(body["ipv6"].as_str().unwrap().to_string()));
    }
    assert_eq!(addresses.len(), 36);
}

/// A cloud with one region whose public pool holds two addresses (in netns mode the harness
/// moves the pool into the server's own part of 198.18.0.0/15, keeping its size).
fn tiny_pool_config() -> String {
    format!(
        "{TEST_CONFIG}\n[[regions]]\nid = \"tiny\"\nlabel = \"Tiny\"\ncountry = \"us\"\ncapabilities = [\"Linodes\", \"VPCs\", \"Vlans\"]\n\
         public_ipv4 = \"127.20.0.0/29\"\npublic_prefix = 30\nipv6_pool = \"2001:db8:20::/64\"\nipv6_ranges = \"2001:db8:2000::/40\"\n"
    )
}

#[tokio::test]
async fn an_exhausted_pool_answers_400_and_creates_nothing() {
    let s = TestServer::start_with(Options { config: tiny_pool_config(), ..Default::default() }).await;
    let api = s.api();
    create_instance(&api, "tiny", json!({"booted": false})).await;
    create_instance(&api, "tiny", json!({"booted": false})).await;
    let r = api.post("/compute/instances", json!({"region": "tiny", "type": "g6-nanode-1", "label": "third"})).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("No public IPv4 addresses"), "{}", r.text);
    assert_eq!(instance_count(&api).await, 2);
    api.get("/compute/instances?page_size=25").await.ok();
}

#[tokio::test]
async fn concurrent_creates_on_a_small_pool_hand_out_each_address_once() {
    let s = TestServer::start_with(Options { config: tiny_pool_config(), ..Default::default() }).await;
    let api = s.api();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            let r = api
                .post(
                    "/compute/instances",
                    json!({"region": "tiny", "type": "g6-nanode-1", "label": format!("tiny{i}")}),
                )
                .await;
            (r.status, r.body)
        }));
    }
    let mut ok = Vec::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        match status {
            200 => ok.push(body["ipv4"][0].as_str().unwrap().to_string()),
            400 => assert!(body.to_string().contains("No public IPv4"), "{body}"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    ok.sort();
    // The only host of each /30 subnet (the first is the subnet's gateway).
    let pool = s.public_pool("tiny").0;
    assert_eq!(ok, [pool.host(2), pool.host(6)]);
    assert_eq!(instance_count(&api).await, 2);
}
