//! The hosted API's newer firewall operations (issue 23): rule sets and their use in firewalls,
//! the expanded rules, prefix lists, and an instance's firewalls replaced or applied again; with
//! real traffic through a balancer's firewall whose rules come from a rule set.

use std::net::{Ipv4Addr, SocketAddr};

use serde_json::{Value, json};

use crate::firewall_devices::instance;
use crate::firewalls::{create_firewall, fw_path, id, rules_with, tcp_rule};
use crate::lb_support::*;
use crate::support::*;

const SETS: &str = "/networking/firewalls/rulesets";

fn set_body(label: &str, kind: &str, rules: Vec<Value>) -> Value {
    json!({"label": label, "description": "web sources", "type": kind, "rules": rules})
}

async fn create_set(api: &Api, label: &str, kind: &str, rules: Vec<Value>) -> Value {
    api.post(SETS, set_body(label, kind, rules)).await.ok().clone()
}

fn set_path(v: &Value) -> String {
    format!("{SETS}/{}", id(v))
}

#[tokio::test]
async fn rule_sets_are_created_read_listed_updated_and_deleted() {
    let s = TestServer::start().await;
    let api = s.api();
    let set = create_set(&api, "web-in", "inbound", vec![tcp_rule("80")]).await;
    let keys: Vec<&str> = set.as_object().unwrap().keys().map(String::as_str).collect();
    for k in ["id", "label", "description", "type", "rules", "is_service_defined", "version", "created", "updated"] {
        assert!(keys.contains(&k), "{k} missing from {set}");
    }
    assert_eq!(
        (set["version"].as_i64(), &set["is_service_defined"], &set["deleted"]),
        (Some(1), &json!(false), &Value::Null)
    );
    assert_eq!(set["rules"][0]["ports"], "80");
    assert_eq!(event_actions(&api).await[0], "firewall_ruleset_create");
    assert_eq!(api.get(&set_path(&set)).await.ok(), &set);
    create_set(&api, "web-out", "outbound", vec![]).await;
    let page = api.get_filtered(SETS, r#"{"label": "web-in"}"#).await.ok().clone();
    assert_eq!((page["results"].as_u64(), &page["data"][0]), (Some(1), &set));
    assert_eq!(api.get(SETS).await.ok()["results"], 2);

    // New rules: version 2, event; label alone: same version.
    let r = api.put(&set_path(&set), json!({"rules": [tcp_rule("443")]})).await.ok().clone();
    assert_eq!(
        (r["version"].as_i64(), &r["rules"][0]["ports"], &r["label"]),
        (Some(2), &json!("443"), &json!("web-in"))
    );
    assert_eq!(event_actions(&api).await[0], "firewall_ruleset_update");
    let r = api.put(&set_path(&set), json!({"label": "web-in2", "description": "new"})).await.ok().clone();
    assert_eq!((r["version"].as_i64(), &r["label"], &r["description"]), (Some(2), &json!("web-in2"), &json!("new")));
    // The type is fixed; the same type may be sent back.
    api.put(&set_path(&set), json!({"type": "outbound"})).await.expect_error(400, "type");
    api.put(&set_path(&set), json!({"type": "inbound"})).await.ok();
    api.put(&set_path(&set), json!({"label": "web-out"})).await.expect_error(400, "label");

    assert_eq!(api.delete(&set_path(&set)).await.ok(), &json!({}));
    assert_eq!(event_actions(&api).await[0], "firewall_ruleset_delete");
    api.get(&set_path(&set)).await.expect_error(404, "-");
    api.put(&set_path(&set), json!({"label": "again"})).await.expect_error(404, "-");
    api.delete(&set_path(&set)).await.expect_error(404, "-");
}

#[tokio::test]
async fn rule_set_requests_are_checked_field_by_field() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post(SETS, json!({})).await;
    for f in ["label", "type", "rules"] {
        r.expect_error(400, f);
    }
    api.post(SETS, set_body("a--b", "inbound", vec![])).await.expect_error(400, "label");
    api.post(SETS, set_body("good", "sideways", vec![])).await.expect_error(400, "type");
    let mut long = set_body("good", "inbound", vec![]);
    long["description"] = json!("x".repeat(256));
    api.post(SETS, long).await.expect_error(400, "description");
    let bad_rule = json!({"action": "MAYBE", "protocol": "TCP", "addresses": {"ipv4": ["10.0.0.0/8"]}});
    api.post(SETS, set_body("good", "inbound", vec![tcp_rule("22"), bad_rule]))
        .await
        .expect_error(400, "rules[1].action");
    api.post(SETS, set_body("good", "inbound", vec![json!({"ruleset": 1})]))
        .await
        .expect_error(400, "rules[0].ruleset");
    api.post(SETS, set_body("good", "inbound", vec![tcp_rule("22"); 26])).await.expect_error(400, "rules");
    // An empty ports string means all ports.
    let mut all_ports = tcp_rule("22");
    all_ports["ports"] = json!("");
    let set = create_set(&api, "good", "inbound", vec![all_ports]).await;
    assert_eq!(set["rules"][0]["ports"], Value::Null);
    api.post(SETS, set_body("good", "outbound", vec![])).await.expect_error(400, "label");
    assert_eq!(api.get(SETS).await.ok()["results"], 1, "refused requests create nothing");
    // Another account neither sees nor changes the set.
    let other = other_account(&s);
    other.get(&set_path(&set)).await.expect_error(404, "-");
    other.put(&set_path(&set), json!({"label": "mine"})).await.expect_error(404, "-");
    other.delete(&set_path(&set)).await.expect_error(404, "-");
    assert_eq!(other.get(SETS).await.ok()["results"], 0);
    // Restricted users read rule sets but do not write them.
    let (_, restricted) = user_with_token(&s, "limited", true, "*").await;
    assert_eq!(restricted.get(SETS).await.ok()["results"], 1);
    restricted.get(&set_path(&set)).await.ok();
    restricted.post(SETS, set_body("theirs", "inbound", vec![])).await.status_is(403);
    restricted.put(&set_path(&set), json!({"label": "theirs"})).await.status_is(403);
    restricted.delete(&set_path(&set)).await.status_is(403);
}

#[tokio::test]
async fn firewall_rules_reference_rule_sets_of_their_direction_and_a_referenced_set_stays() {
    let s = TestServer::start().await;
    let api = s.api();
    let inbound = create_set(&api, "in-set", "inbound", vec![tcp_rule("80")]).await;
    let outbound = create_set(&api, "out-set", "outbound", vec![tcp_rule("53")]).await;
    let rules = rules_with(vec![tcp_rule("22"), json!({"ruleset": id(&inbound)})]);
    let fw = create_firewall(&api, "uses-sets", json!({"rules": rules})).await;
    assert_eq!(fw["rules"]["inbound"][1], json!({"ruleset": id(&inbound)}));
    assert_eq!(api.get(&format!("{}/rules", fw_path(&fw))).await.ok()["inbound"][1], json!({"ruleset": id(&inbound)}));
    // The wrong direction, an unknown set and another account's set are refused.
    let mut wrong = rules_with(vec![]);
    wrong["outbound"] = json!([{"ruleset": id(&inbound)}]);
    let body = |label: &str, rules: Value| json!({"label": label, "rules": rules});
    api.post("/networking/firewalls", body("wrong", wrong)).await.expect_error(400, "rules.outbound[0].ruleset");
    let unknown = rules_with(vec![json!({"ruleset": 999999})]);
    api.post("/networking/firewalls", body("unknown", unknown)).await.expect_error(400, "rules.inbound[0].ruleset");
    let other = other_account(&s);
    let theirs = create_set(&other, "their-set", "inbound", vec![]).await;
    let foreign = rules_with(vec![json!({"ruleset": id(&theirs)})]);
    api.post("/networking/firewalls", body("foreign", foreign)).await.expect_error(400, "rules.inbound[0].ruleset");
    let bad = rules_with(vec![json!({"ruleset": "in-set"})]);
    api.post("/networking/firewalls", body("bad", bad)).await.expect_error(400, "rules.inbound[0].ruleset");
    assert_eq!(api.get("/networking/firewalls").await.ok()["results"], 1);
    // PUT .../rules names the field without a prefix.
    let mut both = rules_with(vec![]);
    both["outbound"] = json!([{"ruleset": id(&inbound)}]);
    api.put(&format!("{}/rules", fw_path(&fw)), both).await.expect_error(400, "outbound[0].ruleset");
    // A referenced set is not deleted; once no firewall references it, it is.
    let r = api.delete(&set_path(&inbound)).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("uses-sets"), "{}", r.text);
    let mut swapped = rules_with(vec![tcp_rule("22")]);
    swapped["outbound"] = json!([{"ruleset": id(&outbound)}]);
    api.put(&format!("{}/rules", fw_path(&fw)), swapped).await.ok();
    api.delete(&set_path(&inbound)).await.ok();
    api.delete(&set_path(&outbound)).await.expect_error(400, "-");
    // Deleting the firewall releases its references.
    api.delete(&fw_path(&fw)).await.ok();
    api.delete(&set_path(&outbound)).await.ok();
}

#[tokio::test]
async fn the_expansion_puts_each_sets_rules_in_place_and_prefix_lists_as_addresses() {
    let s = TestServer::start().await;
    let api = s.api();
    let set = create_set(&api, "web", "inbound", vec![tcp_rule("80"), tcp_rule("443")]).await;
    let private = json!({"action": "ACCEPT", "protocol": "UDP", "label": "private",
        "addresses": {"ipv4": ["pl:system:private:ipv4", "10.1.0.0/16"]}});
    let fw = create_firewall(
        &api,
        "expanded",
        json!({"rules": rules_with(vec![tcp_rule("22"), json!({"ruleset": id(&set)}), private])}),
    )
    .await;
    let path = format!("{}/rules/expansion", fw_path(&fw));
    let e = api.get(&path).await.ok().clone();
    let ports: Vec<&Value> = e["inbound"].as_array().unwrap().iter().map(|r| &r["ports"]).collect();
    assert_eq!(ports, [&json!("22"), &json!("80"), &json!("443"), &Value::Null]);
    let pool = s.private_pool();
    let private_pool = format!("{}/{}", pool.network, pool.prefix);
    assert_eq!(e["inbound"][3]["addresses"]["ipv4"], json!([private_pool, "10.1.0.0/16"]));
    assert_eq!((&e["inbound_policy"], &e["outbound"]), (&json!("DROP"), &json!([])));
    let rules = api.get(&format!("{}/rules", fw_path(&fw))).await.ok().clone();
    assert_eq!((&e["version"], &e["fingerprint"]), (&rules["version"], &rules["fingerprint"]));
    // A change of the set shows in the expansion, not in the firewall's own rules.
    api.put(&set_path(&set), json!({"rules": [tcp_rule("8080")]})).await.ok();
    let e = api.get(&path).await.ok().clone();
    assert_eq!(e["inbound"].as_array().unwrap().len(), 3);
    assert_eq!(e["inbound"][1]["ports"], "8080");
    assert_eq!(api.get(&format!("{}/rules", fw_path(&fw))).await.ok(), &rules);
    api.get("/networking/firewalls/999999/rules/expansion").await.expect_error(404, "-");
    other_account(&s).get(&path).await.expect_error(404, "-");
}

#[tokio::test]
async fn prefix_lists_are_the_pools_nubis_knows_and_rules_may_name_only_those() {
    let s = TestServer::start().await;
    let api = s.api();
    let lists = api.get("/networking/prefixlists").await.ok().clone();
    let names: Vec<&str> = lists["data"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "pl:system:private:ipv4");
    assert!(names.contains(&"pl:system:public:us-east"), "{names:?}");
    let private = &lists["data"][0];
    let pool = s.private_pool();
    assert_eq!(
        (&private["ipv4"], &private["ipv6"]),
        (&json!([format!("{}/{}", pool.network, pool.prefix)]), &json!([]))
    );
    assert_eq!(
        (&private["visibility"], private["version"].as_i64(), &private["deleted"]),
        (&json!("public"), Some(1), &Value::Null)
    );
    let east = lists["data"].as_array().unwrap().iter().find(|l| l["name"] == "pl:system:public:us-east").unwrap();
    let (public, _) = s.public_pool("us-east");
    assert_eq!(east["ipv4"], json!([format!("{}/{}", public.network, public.prefix)]));
    assert_eq!(api.get(&format!("/networking/prefixlists/{}", id(east))).await.ok(), east);
    api.get("/networking/prefixlists/999").await.expect_error(404, "-");
    let one = api.get_filtered("/networking/prefixlists", r#"{"name": "pl:system:public:us-east"}"#).await.ok().clone();
    assert_eq!((one["results"].as_u64(), &one["data"][0]), (Some(1), east));
    // A rule names only a list nubis has, in the list-name form.
    let with =
        |addr: &str| rules_with(vec![json!({"action": "ACCEPT", "protocol": "TCP", "addresses": {"ipv4": [addr]}})]);
    let body = |rules: Value| json!({"label": "named", "rules": rules});
    api.post("/networking/firewalls", body(with("pl:system:public:nowhere")))
        .await
        .expect_error(400, "rules.inbound[0].addresses.ipv4[0]");
    api.post("/networking/firewalls", body(with("pl::vpcs:1234")))
        .await
        .expect_error(400, "rules.inbound[0].addresses.ipv4[0]");
    api.post("/networking/firewalls", body(with("pl:bogus")))
        .await
        .expect_error(400, "rules.inbound[0].addresses.ipv4[0]");
    let bad_set = vec![json!({"action": "ACCEPT", "protocol": "TCP", "addresses": {"ipv6": ["pl::x:y"]}})];
    api.post(SETS, set_body("named", "inbound", bad_set)).await.expect_error(400, "rules[0].addresses.ipv6[0]");
    api.post("/networking/firewalls", body(with("pl:system:public:us-east"))).await.ok();
}

#[tokio::test]
async fn an_instances_firewalls_are_replaced_at_once_under_the_device_rules() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = instance(&api, "fw-put").await;
    let path = format!("/compute/instances/{}/firewalls", id(&inst));
    let f1 = create_firewall(&api, "put-one", json!({})).await;
    let f2 = create_firewall(&api, "put-two", json!({})).await;
    let ids = |v: &Value| v["data"].as_array().unwrap().iter().map(id).collect::<Vec<_>>();
    let r = api.put(&path, json!({"firewall_ids": [id(&f1)]})).await.ok().clone();
    assert_eq!((ids(&r), r["results"].as_u64()), (vec![id(&f1)], Some(1)));
    assert_eq!(event_actions(&api).await[0], "firewall_device_add");
    // Two enabled firewalls on one instance are refused, and nothing changes.
    api.put(&path, json!({"firewall_ids": [id(&f1), id(&f2)]})).await.expect_error(400, "firewall_ids[1]");
    assert_eq!(ids(api.get(&path).await.ok()), [id(&f1)]);
    // Replacing: the one that leaves first, then the new one.
    let r = api.put(&path, json!({"firewall_ids": [id(&f2)]})).await.ok().clone();
    assert_eq!(ids(&r), [id(&f2)]);
    assert_eq!(event_actions(&api).await[..2], ["firewall_device_add", "firewall_device_remove"]);
    api.put(&fw_path(&f1), json!({"status": "disabled"})).await.ok();
    assert_eq!(ids(api.put(&path, json!({"firewall_ids": [id(&f1), id(&f2)]})).await.ok()), [id(&f1), id(&f2)]);
    assert_eq!(api.get(&format!("{}/devices", fw_path(&f1))).await.ok()["results"], 1);
    // Through the hosted API's path too; an empty list removes them all.
    let hosted = format!("/linode/instances/{}/firewalls", id(&inst));
    assert_eq!(api.put(&hosted, json!({"firewall_ids": []})).await.ok()["data"], json!([]));
    assert_eq!(api.get(&format!("{}/devices", fw_path(&f2))).await.ok()["results"], 0);
    // The body is checked.
    api.put(&path, json!({})).await.expect_error(400, "firewall_ids");
    api.put(&path, json!({"firewall_ids": [999999]})).await.expect_error(400, "firewall_ids[0]");
    api.put(&path, json!({"firewall_ids": [id(&f2), id(&f2)]})).await.expect_error(400, "firewall_ids[1]");
    let other = other_account(&s);
    let theirs = create_firewall(&other, "their-fw", json!({})).await;
    api.put(&path, json!({"firewall_ids": [id(&theirs)]})).await.expect_error(400, "firewall_ids[0]");
    other.put(&path, json!({"firewall_ids": []})).await.expect_error(404, "-");
    // A restricted user needs read_write on the instance and on each firewall.
    let (user, restricted) = user_with_token(&s, "fwput", true, "*").await;
    let grants = json!({"instance": [{"id": id(&inst), "permissions": "read_write"}],
                        "firewall": [{"id": id(&f2), "permissions": "read_only"}]});
    api.put(&format!("/account/users/{}/grants", user["username"].as_str().unwrap()), grants).await.ok();
    restricted.put(&path, json!({"firewall_ids": [id(&f2)]})).await.status_is(403);
    assert_eq!(ids(api.get(&path).await.ok()), Vec::<i64>::new());
    // No change while the instance is in live migration.
    let (ok, _, err) = s.admin(&["instance", "live-migration", &id(&inst).to_string(), "--on"]);
    assert!(ok, "{err}");
    api.put(&path, json!({"firewall_ids": [id(&f2)]})).await.expect_error(400, "firewall_ids");
    assert_eq!(ids(api.get(&path).await.ok()), Vec::<i64>::new());
}

#[tokio::test]
async fn applying_an_instances_firewalls_answers_empty_with_an_event() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = instance(&api, "fw-apply").await;
    let path = format!("/compute/instances/{}/firewalls/apply", id(&inst));
    assert_eq!(api.post_empty(&path).await.ok(), &json!({}));
    assert_eq!(event_actions(&api).await[0], "firewall_apply");
    let hosted = format!("/linode/instances/{}/firewalls/apply", id(&inst));
    assert_eq!(api.post(&hosted, json!({})).await.ok(), &json!({}));
    other_account(&s).post_empty(&path).await.expect_error(404, "-");
    api.post_empty("/compute/instances/999999/firewalls/apply").await.expect_error(404, "-");
}

/// True when an HTTP request from 127.0.0.`src` is answered (a dropped connection is not).
async fn served(addr: SocketAddr, src: u8) -> bool {
    served_from(addr, Ipv4Addr::new(127, 0, 0, src)).await
}

async fn served_from(addr: SocketAddr, src: Ipv4Addr) -> bool {
    get(addr, "/", Some(src)).await.is_ok_and(|r| r.status == 200)
}

async fn until_filtered(addr: SocketAddr, pass: &[u8], dropped: &[u8]) {
    let what = format!("{pass:?} served and {dropped:?} dropped");
    eventually(60, &what, || async move {
        for &p in pass {
            if !served(addr, p).await {
                return None;
            }
        }
        for &d in dropped {
            if served(addr, d).await {
                return None;
            }
        }
        Some(())
    })
    .await
}

fn drop_from(source: &str) -> Value {
    json!({"action": "DROP", "protocol": "TCP", "ports": "8000", "addresses": {"ipv4": [source]}, "label": "blocked"})
}

#[tokio::test]
async fn a_rule_set_in_a_balancer_firewall_filters_real_traffic_and_follows_the_sets_changes() {
    // No periodic reconcile in this test's time: what the data plane gets after a change of the
    // set is what the change itself republished. (With the netns driver the balancer's
    // namespace is set up by that reconcile, so there it keeps its interval.)
    let config = if netns() {
        lb_config()
    } else {
        let c = lb_config().replace("reconcile_interval_ms = 200", "reconcile_interval_ms = 3600000");
        assert!(c.contains("3600000"));
        c
    };
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("web", mapped(&p, 8000)).await;
    let set = create_set(&api, "lb-set", "inbound", vec![drop_from("127.0.0.3/32")]).await;
    let rules = json!({"inbound": [{"ruleset": id(&set)}], "inbound_policy": "ACCEPT",
                       "outbound": [], "outbound_policy": "ACCEPT"});
    let fw = create_firewall(&api, "lb-with-set", json!({"rules": rules})).await;
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&fw)})).await.ok().clone();
    let nb_id = id(&nb);
    let c = json!({"port": 8000, "check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 1});
    let cfg = id(api.post(&format!("/nodebalancers/{nb_id}/configs"), c).await.ok());
    let node = json!({"label": "node-0", "address": format!("{p}:8000")});
    api.post(&format!("/nodebalancers/{nb_id}/configs/{cfg}/nodes"), node).await.ok();
    until_nodes_status(&api, nb_id, cfg, 1, 0).await;
    let lb = lb_addr(&nb, 8000);
    // The set's rule is in effect: 127.0.0.3 is dropped, 127.0.0.2 passes.
    until_filtered(lb, &[2], &[3]).await;
    // Changing the set changes what passes, with no change to the firewall.
    api.put(&set_path(&set), json!({"rules": [drop_from("127.0.0.2/32")]})).await.ok();
    until_filtered(lb, &[3], &[2]).await;
    // A prefix list in the set: its addresses are what the rule matches. (In loopback mode a
    // client can speak from inside the region's public pool; in netns mode that pool is not
    // this host's to bind, and the step is left out.)
    let (public, _) = s.public_pool("us-east");
    if public.network.octets()[0] == 127 {
        let inside = Ipv4Addr::from(u32::from(public.network) + 60);
        let pl = json!({"action": "DROP", "protocol": "TCP", "addresses": {"ipv4": ["pl:system:public:us-east"]}});
        api.put(&set_path(&set), json!({"rules": [pl]})).await.ok();
        until_filtered(lb, &[2, 3], &[]).await;
        eventually(60, "the pool's client dropped", || async move { (!served_from(lb, inside).await).then_some(()) })
            .await;
    }
    // The reference gone from the firewall's rules, the set no longer applies.
    api.put(&set_path(&set), json!({"rules": [drop_from("127.0.0.4/32")]})).await.ok();
    until_filtered(lb, &[2, 3], &[4]).await;
    let accept_all = json!({"inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT"});
    api.put(&format!("{}/rules", fw_path(&fw)), accept_all).await.ok();
    until_filtered(lb, &[2, 3, 4], &[]).await;
    // Changing the set now changes nothing here.
    api.put(&set_path(&set), json!({"rules": [drop_from("127.0.0.2/32")]})).await.ok();
    until_filtered(lb, &[2, 3, 4], &[]).await;
}
