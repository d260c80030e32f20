//! Firewall devices (issue 5; spec 2.8, 3.1, 4.9): adding, listing and removing devices, one
//! active firewall per service, read_write on every device, live migration, `firewall_id` on
//! instance create, instance delete, the firewalls of a service, and load-balancer devices.

use nubis_model::firewall::{Action, FirewallRules};
use serde_json::{Value, json};

use crate::firewalls::{create_firewall, fw_path, id, rules_with, tcp_rule};
use crate::instances::create_instance;
use crate::support::*;

pub async fn instance(api: &Api, label: &str) -> Value {
    create_instance(api, "us-east", json!({"label": label, "booted": false})).await
}

pub async fn add_device(api: &Api, f: &Value, kind: &str, entity: i64) -> Resp {
    api.post(&format!("{}/devices", fw_path(f)), json!({"id": entity, "type": kind})).await
}

pub async fn instance_firewall_ids(api: &Api, inst: i64) -> Vec<i64> {
    let r = api.get(&format!("/compute/instances/{inst}/firewalls")).await;
    r.ok()["data"].as_array().unwrap().iter().map(id).collect()
}

async fn device_count(api: &Api, f: &Value) -> u64 {
    api.get(&format!("{}/devices", fw_path(f))).await.ok()["results"].as_u64().unwrap()
}

/// Creates a load balancer in us-east through the API and returns its id.
pub async fn balancer(api: &Api, label: &str) -> i64 {
    id(api.post("/nodebalancers", json!({"region": "us-east", "label": label})).await.ok())
}

/// A second handle on the server's database, for the store functions the data plane uses.
pub async fn store_of(s: &TestServer) -> nubis_store::Store {
    nubis_store::Store::open(&s.database, &Default::default()).await.expect("open the store")
}

fn rules_of(v: &Value) -> FirewallRules {
    serde_json::from_value(v["rules"].clone()).unwrap()
}

#[tokio::test]
async fn devices_are_added_listed_read_and_removed_with_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = instance(&api, "dev-a").await;
    let b = instance(&api, "dev-b").await;
    let f = create_firewall(&api, "devfw", json!({})).await;
    let d = add_device(&api, &f, "instance", id(&a)).await.ok().clone();
    let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["id", "created", "updated", "entity"]);
    assert_eq!(
        d["entity"],
        json!({"id": id(&a), "label": "dev-a", "type": "instance", "url": format!("/v4/compute/instances/{}", id(&a))})
    );
    let actions = event_actions(&api).await;
    assert_eq!(actions[0], "firewall_device_add");
    let ev = api.get("/account/events").await.ok()["data"][0].clone();
    assert_eq!(ev["entity"]["type"], "firewall");
    assert_eq!(ev["entity"]["id"], f["id"]);
    assert_eq!(ev["secondary_entity"]["type"], "instance");
    let d2 = add_device(&api, &f, "instance", id(&b)).await.ok().clone();
    let list = api.get(&format!("{}/devices", fw_path(&f))).await.ok().clone();
    assert_eq!(list["data"], json!([d, d2]));
    assert_eq!(api.get(&format!("{}/devices/{}", fw_path(&f), id(&d))).await.ok(), &d);
    assert_eq!(api.get(&fw_path(&f)).await.ok().get("devices"), None, "the record carries no devices");
    assert_eq!(instance_firewall_ids(&api, id(&a)).await, [id(&f)]);
    // The entity label follows the instance's.
    api.put(&format!("/compute/instances/{}", id(&a)), json!({"label": "dev-a2"})).await.ok();
    let d = api.get(&format!("{}/devices/{}", fw_path(&f), id(&d))).await.ok().clone();
    assert_eq!(d["entity"]["label"], "dev-a2");

    assert_eq!(api.delete(&format!("{}/devices/{}", fw_path(&f), id(&d))).await.ok(), &json!({}));
    assert_eq!(event_actions(&api).await[0], "firewall_device_remove");
    api.get(&format!("{}/devices/{}", fw_path(&f), id(&d))).await.expect_error(404, "-");
    api.delete(&format!("{}/devices/{}", fw_path(&f), id(&d))).await.expect_error(404, "-");
    assert_eq!(api.get(&format!("{}/devices", fw_path(&f))).await.ok()["data"], json!([d2]));
    assert_eq!(instance_firewall_ids(&api, id(&a)).await, Vec::<i64>::new());
    // A device of one firewall is not found under another.
    let g = create_firewall(&api, "otherfw", json!({})).await;
    api.get(&format!("{}/devices/{}", fw_path(&g), id(&d2))).await.expect_error(404, "-");
    api.delete(&format!("{}/devices/{}", fw_path(&g), id(&d2))).await.expect_error(404, "-");
}

#[tokio::test]
async fn the_devices_list_is_paged() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "many", json!({})).await;
    for i in 0..26 {
        let inst = instance(&api, &format!("many-{i:02}")).await;
        add_device(&api, &f, "instance", id(&inst)).await.ok();
    }
    let p = api.get(&format!("{}/devices?page_size=25&page=2", fw_path(&f))).await.ok().clone();
    assert_eq!((p["results"].as_u64(), p["pages"].as_u64(), p["page"].as_u64()), (Some(26), Some(2), Some(2)));
    assert_eq!(p["data"][0]["entity"]["label"], "many-25");
}

#[tokio::test]
async fn create_assigns_the_firewall_to_its_devices_all_or_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = instance(&api, "cr-a").await;
    let b = instance(&api, "cr-b").await;
    let f = create_firewall(&api, "withdevs", json!({"devices": {"instances": [id(&a), id(&b)]}})).await;
    assert_eq!(f.get("devices"), None);
    let list = api.get(&format!("{}/devices", fw_path(&f))).await.ok().clone();
    let ents: Vec<i64> = list["data"].as_array().unwrap().iter().map(|d| d["entity"]["id"].as_i64().unwrap()).collect();
    assert_eq!(ents, [id(&a), id(&b)]);
    assert_eq!(event_actions(&api).await[..3], ["firewall_device_add", "firewall_device_add", "firewall_create"]);
    // One bad device refuses the whole request, naming it.
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "bad-devs", "rules": rules_with(vec![]), "devices": {"instances": [999999, id(&a), id(&a)]}}),
        )
        .await;
    r.expect_error(400, "devices.instances[0]").expect_error(400, "devices.instances[2]");
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "bad-devs", "rules": rules_with(vec![]), "devices": {"nodebalancers": [1, 2]}}),
        )
        .await;
    r.expect_error(400, "devices.nodebalancers");
    // Device problems are reported with the others.
    let r =
        api.post("/networking/firewalls", json!({"label": "x", "rules": {}, "devices": {"instances": [999999]}})).await;
    r.expect_error(400, "label").expect_error(400, "rules.inbound_policy").expect_error(400, "devices.instances[0]");
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 1, "nothing was created");
}

/// A firewall created with many devices writes them in one statement (up to 500 each), and their
/// events in another: every device and its event is there, in the order given, and one refusal
/// anywhere in the list creates nothing.
#[tokio::test]
async fn a_firewall_created_with_many_devices_has_each_in_its_place_with_its_event() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut ids = Vec::new();
    for i in 0..150 {
        ids.push(id(&instance(&api, &format!("many-{i}")).await));
    }
    let body = |label: &str, instances: &[i64]| json!({"label": label, "rules": rules_with(vec![]), "devices": {"instances": instances}});
    let mut twice = ids.clone();
    twice.push(ids[7]);
    api.post("/networking/firewalls", body("many-bad", &twice)).await.expect_error(400, "devices.instances[150]");
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 0, "nothing was created");
    assert!(!event_actions(&api).await.iter().any(|a| a.starts_with("firewall")));

    let f = api.post("/networking/firewalls", body("many", &ids)).await.ok().clone();
    let mut listed: Vec<(i64, String)> = Vec::new();
    for page in 1..=2 {
        let r = api.get(&format!("{}/devices?page={page}&page_size=100", fw_path(&f))).await.ok().clone();
        let data = r["data"].as_array().unwrap();
        listed.extend(data.iter().map(|d| (id(&d["entity"]), d["entity"]["label"].as_str().unwrap().to_string())));
    }
    let wanted: Vec<(i64, String)> = ids.iter().enumerate().map(|(k, i)| (*i, format!("many-{k}"))).collect();
    assert_eq!(listed, wanted, "every device, in the order given, named by its instance");
    let filter = json!({"action": "firewall_device_add"}).to_string();
    let mut events: Vec<(i64, i64)> = Vec::new();
    for page in 1..=2 {
        let r = api.get_filtered(&format!("/account/events?page={page}&page_size=100"), &filter).await;
        for e in r.ok()["data"].as_array().unwrap() {
            assert_eq!(e["entity"]["id"], f["id"]);
            events.push((id(e), e["secondary_entity"]["id"].as_str().unwrap().parse().unwrap()));
        }
    }
    events.sort();
    assert_eq!(events.into_iter().map(|(_, i)| i).collect::<Vec<_>>(), ids, "one event per device, in order");
}

#[tokio::test]
async fn device_add_needs_a_valid_type_and_a_service_of_the_account() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = instance(&api, "typed").await;
    let f = create_firewall(&api, "typedfw", json!({})).await;
    let p = format!("{}/devices", fw_path(&f));
    let r = api.post(&p, json!({})).await;
    r.expect_error(400, "id").expect_error(400, "type");
    // (`linode`, the hosted API's name, is accepted as `instance`: tests/api/compat.rs.)
    api.post(&p, json!({"id": id(&a), "type": "server"})).await.expect_error(400, "type");
    api.post(&p, json!({"id": id(&a), "type": "volume"})).await.expect_error(400, "type");
    api.post(&p, json!({"id": "x", "type": "instance"})).await.expect_error(400, "id");
    api.post(&p, json!({"id": 999999, "type": "instance"})).await.expect_error(400, "id");
    api.post(&p, json!({"id": 999999, "type": "nodebalancer"})).await.expect_error(400, "id");
    let theirs = instance(&other_account(&s), "theirs").await;
    api.post(&p, json!({"id": id(&theirs), "type": "instance"})).await.expect_error(400, "id");
    assert_eq!(device_count(&api, &f).await, 0);
    api.post(&p, json!({"id": id(&a), "type": "instance"})).await.ok();
    api.post(&p, json!({"id": id(&a), "type": "instance"})).await.expect_error(400, "id");
    assert_eq!(device_count(&api, &f).await, 1, "assigned once");
}

#[tokio::test]
async fn a_service_has_at_most_one_active_firewall() {
    let s = TestServer::start().await;
    let api = s.api();
    let x = instance(&api, "svc-x").await;
    let f1 = create_firewall(&api, "first", json!({"devices": {"instances": [id(&x)]}})).await;
    let f2 = create_firewall(&api, "second", json!({})).await;
    // Adding an enabled firewall to a service that has one is refused, naming the other.
    let r = add_device(&api, &f2, "instance", id(&x)).await;
    r.expect_error(400, "id");
    assert!(r.text.contains("first"), "{}", r.text);
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "third", "rules": rules_with(vec![]), "devices": {"instances": [id(&x)]}}),
        )
        .await;
    r.expect_error(400, "devices.instances[0]");
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 2, "nothing was created");
    assert_eq!(instance_firewall_ids(&api, id(&x)).await, [id(&f1)]);
    // A disabled firewall may be added...
    api.put(&fw_path(&f2), json!({"status": "disabled"})).await.ok();
    add_device(&api, &f2, "instance", id(&x)).await.ok();
    assert_eq!(instance_firewall_ids(&api, id(&x)).await, [id(&f1), id(&f2)]);
    // ...but not enabled while the other is active; nothing changes.
    let before = event_actions(&api).await;
    let r = api.put(&fw_path(&f2), json!({"status": "enabled", "label": "second-renamed"})).await;
    r.expect_error(400, "status");
    assert!(r.text.contains("svc-x") && r.text.contains("first"), "{}", r.text);
    let now = api.get(&fw_path(&f2)).await.ok().clone();
    assert_eq!((&now["status"], &now["label"]), (&json!("disabled"), &json!("second")));
    assert_eq!(event_actions(&api).await, before, "no event");
    // Once the first is disabled, the second can be enabled, and then the first cannot.
    api.put(&fw_path(&f1), json!({"status": "disabled"})).await.ok();
    api.put(&fw_path(&f2), json!({"status": "enabled"})).await.ok();
    api.put(&fw_path(&f1), json!({"status": "enabled"})).await.expect_error(400, "status");
    assert_eq!(event_actions(&api).await[..2], ["firewall_enable", "firewall_disable"]);
    let store = store_of(&s).await;
    assert_eq!(store.instance_active_firewall_rules(id(&x)).await.unwrap(), Some(rules_of(&f2)));
}

#[tokio::test]
async fn removing_a_device_takes_that_firewalls_rules_off_and_leaves_the_others() {
    let s = TestServer::start().await;
    let api = s.api();
    let x = instance(&api, "rm-x").await;
    let y = instance(&api, "rm-y").await;
    let f1 = create_firewall(&api, "active-one", json!({"devices": {"instances": [id(&x), id(&y)]}})).await;
    let f2 = api
        .post("/networking/firewalls", json!({"label": "standby", "rules": rules_with(vec![tcp_rule("443")])}))
        .await
        .ok()
        .clone();
    api.put(&fw_path(&f2), json!({"status": "disabled"})).await.ok();
    add_device(&api, &f2, "instance", id(&x)).await.ok();
    let store = store_of(&s).await;
    assert_eq!(store.instance_active_firewall_rules(id(&x)).await.unwrap(), Some(rules_of(&f1)));

    let devices = api.get(&format!("{}/devices", fw_path(&f1))).await.ok().clone();
    let dx = devices["data"].as_array().unwrap().iter().find(|d| d["entity"]["id"] == x["id"]).unwrap().clone();
    api.delete(&format!("{}/devices/{}", fw_path(&f1), id(&dx))).await.ok();
    // x no longer has f1's rules; f2 stays assigned; y keeps f1.
    assert_eq!(instance_firewall_ids(&api, id(&x)).await, [id(&f2)]);
    assert_eq!(instance_firewall_ids(&api, id(&y)).await, [id(&f1)]);
    assert_eq!(store.instance_active_firewall_rules(id(&x)).await.unwrap(), None, "f2 is disabled");
    assert_eq!(store.instance_active_firewall_rules(id(&y)).await.unwrap(), Some(rules_of(&f1)));
    // Now f2 may be enabled on x, and its rules are x's.
    api.put(&fw_path(&f2), json!({"status": "enabled"})).await.ok();
    let x_rules = store.instance_active_firewall_rules(id(&x)).await.unwrap().unwrap();
    assert_eq!(x_rules.inbound[0].ports.as_deref(), Some("443"));
    // Deleting a firewall takes its rules off too.
    api.delete(&fw_path(&f1)).await.ok();
    assert_eq!(store.instance_active_firewall_rules(id(&y)).await.unwrap(), None);
    assert_eq!(instance_firewall_ids(&api, id(&y)).await, Vec::<i64>::new());
}

#[tokio::test]
async fn firewall_operations_are_refused_while_an_instance_is_in_live_migration() {
    let s = TestServer::start().await;
    let api = s.api();
    let x = instance(&api, "migrating").await;
    let other = instance(&api, "staying").await;
    let f = create_firewall(&api, "migfw", json!({"devices": {"instances": [id(&x)]}})).await;
    let spare = create_firewall(&api, "spare", json!({})).await;
    api.put(&fw_path(&spare), json!({"status": "disabled"})).await.ok();
    let (ok, _, err) = s.admin(&["instance", "live-migration", &id(&x).to_string(), "--on"]);
    assert!(ok, "{err}");
    let before_events = event_actions(&api).await;
    let p = fw_path(&f);
    let r = api.put(&p, json!({"status": "disabled"})).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("migrating") && r.text.contains("live migration"), "{}", r.text);
    api.put(&p, json!({"label": "renamed"})).await.expect_error(400, "-");
    api.put(&format!("{p}/rules"), rules_with(vec![])).await.expect_error(400, "-");
    add_device(&api, &f, "instance", id(&other)).await.expect_error(400, "-");
    let d = api.get(&format!("{p}/devices")).await.ok()["data"][0].clone();
    api.delete(&format!("{p}/devices/{}", id(&d))).await.expect_error(400, "-");
    api.delete(&p).await.expect_error(400, "-");
    // The migrating instance cannot be given another firewall either.
    add_device(&api, &spare, "instance", id(&x)).await.expect_error(400, "id");
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "newfw", "rules": rules_with(vec![]), "devices": {"instances": [id(&x)]}}),
        )
        .await;
    r.expect_error(400, "devices.instances[0]");
    // Nor can a new instance join a firewall with a migrating instance.
    let r = api
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "label": "joiner", "booted": false, "firewall_id": id(&f)}),
        )
        .await;
    r.expect_error(400, "firewall_id");
    // Nothing changed, reads work.
    assert_eq!(api.get(&p).await.ok(), &f);
    assert_eq!(device_count(&api, &f).await, 1);
    assert_eq!(device_count(&api, &spare).await, 0);
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 2);
    assert_eq!(api.get_filtered("/compute/instances", r#"{"label": "joiner"}"#).await.ok()["results"], 0);
    assert_eq!(event_actions(&api).await, before_events);
    // When the migration is over, the same operations work.
    let (ok, _, err) = s.admin(&["instance", "live-migration", &id(&x).to_string(), "--off"]);
    assert!(ok, "{err}");
    api.put(&p, json!({"status": "disabled"})).await.ok();
    add_device(&api, &f, "instance", id(&other)).await.ok();
    api.delete(&p).await.ok();
}

#[tokio::test]
async fn read_write_on_every_device_is_required() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = instance(&api, "granted").await;
    let (_, bob) = user_with_token(&s, "bobdev", true, "*").await;
    api.put("/account/users/bobdev/grants", json!({"global": {"add_firewalls": true}})).await.ok();
    let f = create_firewall(&bob, "bobs-fw", json!({})).await;
    // No access to the instance: it is "not found".
    add_device(&bob, &f, "instance", id(&a)).await.expect_error(400, "id");
    let r = bob
        .post(
            "/networking/firewalls",
            json!({"label": "bobs-2", "rules": rules_with(vec![]), "devices": {"instances": [id(&a)]}}),
        )
        .await;
    r.expect_error(400, "devices.instances[0]");
    // read_only on the instance: 403.
    api.put("/account/users/bobdev/grants", json!({"instance": [{"id": id(&a), "permissions": "read_only"}]}))
        .await
        .ok();
    add_device(&bob, &f, "instance", id(&a)).await.expect_error(403, "-");
    let r = bob
        .post(
            "/networking/firewalls",
            json!({"label": "bobs-2", "rules": rules_with(vec![]), "devices": {"instances": [id(&a)]}}),
        )
        .await;
    r.expect_error(403, "-");
    assert_eq!(device_count(&api, &f).await, 0);
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 1);
    // read_write: accepted.
    api.put("/account/users/bobdev/grants", json!({"instance": [{"id": id(&a), "permissions": "read_write"}]}))
        .await
        .ok();
    add_device(&bob, &f, "instance", id(&a)).await.ok();
    // A restricted user sees only the firewalls of an instance it has grants on.
    let owners = create_firewall(&api, "owners-disabled", json!({})).await;
    api.put(&fw_path(&owners), json!({"status": "disabled"})).await.ok();
    add_device(&api, &owners, "instance", id(&a)).await.ok();
    assert_eq!(instance_firewall_ids(&bob, id(&a)).await, [id(&f)]);
    assert_eq!(instance_firewall_ids(&api, id(&a)).await, [id(&f), id(&owners)]);
}

#[tokio::test]
async fn an_instance_gets_a_firewall_at_creation_through_firewall_id() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "at-create", json!({})).await;
    let i =
        create_instance(&api, "us-east", json!({"label": "born-with", "booted": false, "firewall_id": id(&f)})).await;
    assert_eq!(instance_firewall_ids(&api, id(&i)).await, [id(&f)]);
    let d = api.get(&format!("{}/devices", fw_path(&f))).await.ok()["data"][0].clone();
    assert_eq!(d["entity"]["label"], "born-with");
    assert!(event_actions(&api).await.contains(&"firewall_device_add".to_string()));
    let store = store_of(&s).await;
    assert_eq!(store.instance_active_firewall_rules(id(&i)).await.unwrap(), Some(rules_of(&f)));
    // A disabled firewall is assigned disabled.
    api.put(&fw_path(&f), json!({"status": "disabled"})).await.ok();
    let j =
        create_instance(&api, "us-east", json!({"label": "born-with-2", "booted": false, "firewall_id": id(&f)})).await;
    assert_eq!(instance_firewall_ids(&api, id(&j)).await, [id(&f)]);
    assert_eq!(store.instance_active_firewall_rules(id(&j)).await.unwrap(), None);
    // Unknown, other account's: 400 on firewall_id, with every other problem; nothing created.
    let body = |fw: i64| json!({"region": "us-east", "type": "g6-nanode-1", "label": "never", "booted": false, "firewall_id": fw});
    api.post("/compute/instances", body(999999)).await.expect_error(400, "firewall_id");
    let theirs = create_firewall(&other_account(&s), "theirs", json!({})).await;
    api.post("/compute/instances", body(id(&theirs))).await.expect_error(400, "firewall_id");
    let mut bad = body(999999);
    bad["type"] = json!("g0-none");
    api.post("/compute/instances", bad).await.expect_error(400, "firewall_id").expect_error(400, "type");
    assert_eq!(api.get_filtered("/compute/instances", r#"{"label": "never"}"#).await.ok()["results"], 0);
    // Restricted: no grant is "not found", read_only is 403, read_write works.
    let (_, bob) = user_with_token(&s, "bobcreate", true, "*").await;
    api.put("/account/users/bobcreate/grants", json!({"global": {"add_instances": true}})).await.ok();
    bob.post("/compute/instances", body(id(&f))).await.expect_error(400, "firewall_id");
    api.put("/account/users/bobcreate/grants", json!({"firewall": [{"id": id(&f), "permissions": "read_only"}]}))
        .await
        .ok();
    bob.post("/compute/instances", body(id(&f))).await.expect_error(403, "-");
    api.put("/account/users/bobcreate/grants", json!({"firewall": [{"id": id(&f), "permissions": "read_write"}]}))
        .await
        .ok();
    let k =
        create_instance(&bob, "us-east", json!({"label": "bobs-inst", "booted": false, "firewall_id": id(&f)})).await;
    assert_eq!(instance_firewall_ids(&bob, id(&k)).await, [id(&f)]);
}

#[tokio::test]
async fn deleting_an_instance_removes_it_from_its_firewalls() {
    let s = TestServer::start().await;
    let api = s.api();
    let x = instance(&api, "gone").await;
    let y = instance(&api, "stays").await;
    let f = create_firewall(&api, "keeper", json!({"devices": {"instances": [id(&x), id(&y)]}})).await;
    let g = create_firewall(&api, "standby2", json!({})).await;
    api.put(&fw_path(&g), json!({"status": "disabled"})).await.ok();
    add_device(&api, &g, "instance", id(&x)).await.ok();
    api.delete(&format!("/compute/instances/{}", id(&x))).await.ok();
    let list = api.get(&format!("{}/devices", fw_path(&f))).await.ok().clone();
    assert_eq!(list["results"], 1);
    assert_eq!(list["data"][0]["entity"]["id"], y["id"]);
    assert_eq!(device_count(&api, &g).await, 0);
    assert_eq!(api.get(&fw_path(&f)).await.ok()["status"], "enabled", "the firewall stays");
    assert_eq!(
        db_scalar(&s, &format!("SELECT COUNT(*) FROM firewall_devices WHERE instance_id = {}", id(&x))).await,
        0
    );
}

#[tokio::test]
async fn balancer_devices_are_refused_for_unknown_other_or_second_balancers() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "nbfw", json!({})).await;
    add_device(&api, &f, "nodebalancer", 424242).await.expect_error(400, "id");
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "nb2", "rules": rules_with(vec![]), "devices": {"nodebalancers": [424242]}}),
        )
        .await;
    r.expect_error(400, "devices.nodebalancers[0]");
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "nb2", "rules": rules_with(vec![]), "devices": {"nodebalancers": [1, 2]}}),
        )
        .await;
    r.expect_error(400, "devices.nodebalancers");
    let other = other_account(&s);
    let theirs = balancer(&other, "their-nb").await;
    add_device(&api, &f, "nodebalancer", theirs).await.expect_error(400, "id");
    api.get(&format!("/nodebalancers/{theirs}/firewalls")).await.expect_error(404, "-");
    api.get("/nodebalancers/424242/firewalls").await.expect_error(404, "-");
    assert_eq!(device_count(&api, &f).await, 0);
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 1);
}

#[tokio::test]
async fn a_firewall_has_at_most_one_balancer_and_a_balancer_one_active_firewall() {
    let s = TestServer::start().await;
    let api = s.api();
    let b1 = balancer(&api, "nb-one").await;
    let b2 = balancer(&api, "nb-two").await;
    let f = create_firewall(&api, "nbfw", json!({"devices": {"nodebalancers": [b1]}})).await;
    let d = api.get(&format!("{}/devices", fw_path(&f))).await.ok()["data"][0].clone();
    assert_eq!(
        d["entity"],
        json!({"id": b1, "label": "nb-one", "type": "nodebalancer", "url": format!("/v4/nodebalancers/{b1}")})
    );
    // A second balancer on the same firewall is refused; instances are not limited.
    let r = add_device(&api, &f, "nodebalancer", b2).await;
    r.expect_error(400, "id");
    assert!(r.text.contains("at most one load balancer"), "{}", r.text);
    let x = instance(&api, "with-nb").await;
    add_device(&api, &f, "instance", id(&x)).await.ok();
    // The balancer already has an active firewall.
    let g = create_firewall(&api, "nbfw2", json!({})).await;
    add_device(&api, &g, "nodebalancer", b1).await.expect_error(400, "id");
    api.put(&fw_path(&g), json!({"status": "disabled"})).await.ok();
    add_device(&api, &g, "nodebalancer", b1).await.ok();
    api.put(&fw_path(&g), json!({"status": "enabled"})).await.expect_error(400, "status");
    let listed = api.get(&format!("/nodebalancers/{b1}/firewalls")).await.ok().clone();
    let ids: Vec<i64> = listed["data"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(ids, [id(&f), id(&g)]);
    // What the data plane reads: the rules of the enabled firewall, or none.
    let store = store_of(&s).await;
    assert_eq!(store.nodebalancer_active_firewall_rules(b1).await.unwrap(), Some(rules_of(&f)));
    assert_eq!(store.nodebalancer_active_firewall_rules(b2).await.unwrap(), None);
    let all = store.active_balancer_firewalls().await.unwrap();
    assert_eq!(all, vec![(b1, rules_of(&f))]);
    let mut new_rules = rules_with(vec![tcp_rule("8443")]);
    new_rules["inbound_policy"] = json!("ACCEPT");
    api.put(&format!("{}/rules", fw_path(&f)), new_rules).await.ok();
    let r = store.nodebalancer_active_firewall_rules(b1).await.unwrap().unwrap();
    assert_eq!((r.inbound_policy, r.inbound[0].ports.as_deref()), (Action::Accept, Some("8443")));
    api.put(&fw_path(&f), json!({"status": "disabled"})).await.ok();
    assert_eq!(store.nodebalancer_active_firewall_rules(b1).await.unwrap(), None);
    api.put(&fw_path(&g), json!({"status": "enabled"})).await.ok();
    assert_eq!(store.nodebalancer_active_firewall_rules(b1).await.unwrap(), Some(rules_of(&g)));
    // Removing the device takes g's rules off the balancer.
    let gd = api.get(&format!("{}/devices", fw_path(&g))).await.ok()["data"][0].clone();
    api.delete(&format!("{}/devices/{}", fw_path(&g), id(&gd))).await.ok();
    assert_eq!(store.nodebalancer_active_firewall_rules(b1).await.unwrap(), None);
    assert_eq!(api.get(&format!("/nodebalancers/{b1}/firewalls")).await.ok()["results"], 1);
    // Restricted users need a grant on the balancer to list its firewalls.
    let (_, bob) = user_with_token(&s, "bobnb", true, "*").await;
    bob.get(&format!("/nodebalancers/{b1}/firewalls")).await.expect_error(404, "-");
}
