//! Firewalls (issue 5; spec 2.7, 3.1, 4.9): create, read, update, delete, rules, status and its
//! events, validation with dotted field paths, grants, paging and filters. Devices are in
//! `firewall_devices.rs`, concurrency in `firewall_concurrency.rs`.

use serde_json::{Value, json};

use crate::support::*;

/// A valid inbound TCP rule.
pub fn tcp_rule(ports: &str) -> Value {
    json!({"action": "ACCEPT", "protocol": "TCP", "ports": ports, "addresses": {"ipv4": ["192.0.2.0/24"]}})
}

/// A rules object with the given inbound rules, inbound policy DROP, outbound ACCEPT.
pub fn rules_with(inbound: Vec<Value>) -> Value {
    json!({"inbound": inbound, "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"})
}

/// Creates a firewall with `extra` merged into the body, asserting success.
pub async fn create_firewall(api: &Api, label: &str, extra: Value) -> Value {
    let mut body = json!({"label": label, "rules": rules_with(vec![tcp_rule("22")])});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    api.post("/networking/firewalls", body).await.ok().clone()
}

pub fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

pub fn fw_path(v: &Value) -> String {
    format!("/networking/firewalls/{}", id(v))
}

async fn firewall_count(api: &Api) -> u64 {
    api.get("/networking/firewalls").await.ok()["results"].as_u64().unwrap()
}

#[tokio::test]
async fn a_firewall_is_created_enabled_with_its_rules_and_read_back() {
    let s = TestServer::start().await;
    let api = s.api();
    let rules = json!({
        "inbound": [{"action": "ACCEPT", "protocol": "TCP", "ports": "22-24, 80, 443",
                     "addresses": {"ipv4": ["192.0.2.0/24", "198.51.100.2/32"], "ipv6": ["2001:DB8::/128"]},
                     "label": "inbound-rule123", "description": "An example inbound rule"}],
        "inbound_policy": "DROP",
        "outbound": [{"action": "DROP", "protocol": "ICMP", "addresses": {"ipv6": ["::/0"]}}],
        "outbound_policy": "ACCEPT",
    });
    let f = api
        .post("/networking/firewalls", json!({"label": "web.fw-1", "rules": rules, "tags": ["prod", "web"]}))
        .await
        .ok()
        .clone();
    let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["id", "label", "created", "updated", "status", "rules", "tags"], "no devices on the record");
    assert_eq!(f["label"], "web.fw-1");
    assert_eq!(f["status"], "enabled", "spec 3.1: enabled when first created");
    assert_eq!(f["tags"], json!(["prod", "web"]));
    assert!(f["created"].is_string() && f["updated"].is_string());
    let r = &f["rules"];
    assert_eq!(r["inbound_policy"], "DROP");
    assert_eq!(r["outbound_policy"], "ACCEPT");
    assert_eq!(r["inbound"][0]["ports"], "22-24, 80, 443");
    assert_eq!(r["inbound"][0]["addresses"], rules["inbound"][0]["addresses"]);
    assert_eq!(r["inbound"][0]["label"], "inbound-rule123");
    assert_eq!(r["outbound"][0]["protocol"], "ICMP");
    assert_eq!(r["outbound"][0]["ports"], Value::Null, "omitted ports: all ports");
    assert_eq!(api.get(&fw_path(&f)).await.ok(), &f);
    assert_eq!(api.get(&format!("{}/rules", fw_path(&f))).await.ok(), r);
    let list = api.get("/networking/firewalls").await;
    assert_eq!(list.ok()["data"], json!([f]));
    assert_eq!(event_actions(&api).await[0], "firewall_create");
}

#[tokio::test]
async fn firewall_label_follows_the_spec_rule_and_is_unique_per_account() {
    let s = TestServer::start().await;
    let api = s.api();
    let rules = rules_with(vec![]);
    for bad in
        ["ab", &"a".repeat(33), "-abc", "abc-", ".abc", "abc_", "a--b", "a__b", "a..b", "a b", "a/b", "héllo", ""]
    {
        api.post("/networking/firewalls", json!({"label": bad, "rules": rules})).await.expect_error(400, "label");
    }
    assert_eq!(firewall_count(&api).await, 0, "nothing was created");
    // The reference's regular expression would refuse these; the spec's rule accepts them.
    for good in ["abc", "a.b-c_d", "1fw", "a-_b", &"z".repeat(32), "Web.Tier.2"] {
        api.post("/networking/firewalls", json!({"label": good, "rules": rules})).await.ok();
    }
    api.post("/networking/firewalls", json!({"label": "abc", "rules": rules})).await.expect_error(400, "label");
    let other = create_firewall(&api, "other", json!({})).await;
    api.put(&fw_path(&other), json!({"label": "abc"})).await.expect_error(400, "label");
    api.put(&fw_path(&other), json!({"label": "a--b"})).await.expect_error(400, "label");
    assert_eq!(api.get(&fw_path(&other)).await.ok()["label"], "other", "nothing changed");
    other_account(&s).post("/networking/firewalls", json!({"label": "abc", "rules": rules})).await.ok();
}

#[tokio::test]
async fn label_and_rules_with_both_policies_are_required_on_create() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/networking/firewalls", json!({})).await;
    r.expect_error(400, "label").expect_error(400, "rules");
    let r = api.post("/networking/firewalls", json!({"label": "fw1", "rules": {"inbound": []}})).await;
    r.expect_error(400, "rules.inbound_policy").expect_error(400, "rules.outbound_policy");
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "fw1", "rules": {"inbound_policy": "REJECT", "outbound_policy": "drop"}}),
        )
        .await;
    r.expect_error(400, "rules.inbound_policy").expect_error(400, "rules.outbound_policy");
    api.post("/networking/firewalls", json!({"label": "fw1", "rules": "DROP"})).await.expect_error(400, "rules");
    assert_eq!(firewall_count(&api).await, 0);
    let f = api
        .post(
            "/networking/firewalls",
            json!({"label": "fw1", "rules": {"inbound_policy": "ACCEPT", "outbound_policy": "DROP"}}),
        )
        .await;
    let mut rules = f.ok()["rules"].clone();
    let fingerprint = rules.as_object_mut().unwrap().remove("fingerprint").unwrap();
    assert_eq!(fingerprint.as_str().map(str::len), Some(8));
    assert_eq!(
        rules,
        json!({"inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "DROP", "version": 1})
    );
}

#[tokio::test]
async fn at_most_25_rules_across_inbound_and_outbound() {
    let s = TestServer::start().await;
    let api = s.api();
    let body = |i: usize, o: usize| {
        json!({"inbound": vec![tcp_rule("22"); i], "inbound_policy": "DROP",
               "outbound": vec![tcp_rule("22"); o], "outbound_policy": "ACCEPT"})
    };
    api.post("/networking/firewalls", json!({"label": "big", "rules": body(20, 6)})).await.expect_error(400, "rules");
    assert_eq!(firewall_count(&api).await, 0);
    let f = api.post("/networking/firewalls", json!({"label": "big", "rules": body(20, 5)})).await.ok().clone();
    // PUT .../rules: the body is the rules object, so the limit error has no field.
    api.put(&format!("{}/rules", fw_path(&f)), body(0, 26)).await.expect_error(400, "-");
    let rules = api.get(&format!("{}/rules", fw_path(&f))).await;
    assert_eq!(rules.ok()["inbound"].as_array().unwrap().len(), 20, "nothing changed");
    api.put(&format!("{}/rules", fw_path(&f)), body(0, 25)).await.ok();
}

/// Creates with one inbound rule and asserts a 400 on `field`; nothing is created.
async fn refused_rule(api: &Api, rule: Value, field: &str) {
    let r = api.post("/networking/firewalls", json!({"label": "rulecheck", "rules": rules_with(vec![rule])})).await;
    r.expect_error(400, field);
    assert_eq!(firewall_count(api).await, 0, "{field}: nothing was created");
}

#[tokio::test]
async fn each_rule_needs_action_protocol_and_addresses_in_ip_mask_form() {
    let s = TestServer::start().await;
    let api = s.api();
    let p = "rules.inbound[0]";
    refused_rule(&api, json!({"protocol": "TCP", "addresses": {"ipv4": ["0.0.0.0/0"]}}), &format!("{p}.action")).await;
    refused_rule(
        &api,
        json!({"action": "REJECT", "protocol": "TCP", "addresses": {"ipv4": ["0.0.0.0/0"]}}),
        &format!("{p}.action"),
    )
    .await;
    refused_rule(&api, json!({"action": "ACCEPT", "addresses": {"ipv4": ["0.0.0.0/0"]}}), &format!("{p}.protocol"))
        .await;
    refused_rule(
        &api,
        json!({"action": "ACCEPT", "protocol": "SCTP", "addresses": {"ipv4": ["0.0.0.0/0"]}}),
        &format!("{p}.protocol"),
    )
    .await;
    refused_rule(&api, json!({"action": "ACCEPT", "protocol": "TCP"}), &format!("{p}.addresses")).await;
    refused_rule(&api, json!({"action": "ACCEPT", "protocol": "TCP", "addresses": {}}), &format!("{p}.addresses"))
        .await;
    let addr = |a: Value| json!({"action": "ACCEPT", "protocol": "TCP", "addresses": a});
    refused_rule(&api, addr(json!({"ipv4": []})), &format!("{p}.addresses.ipv4")).await;
    refused_rule(&api, addr(json!({"ipv6": []})), &format!("{p}.addresses.ipv6")).await;
    refused_rule(&api, addr(json!({"ipv4": ["192.0.2.1"]})), &format!("{p}.addresses.ipv4[0]")).await;
    refused_rule(&api, addr(json!({"ipv4": ["10.0.0.0/8", "1.2.3.4/33"]})), &format!("{p}.addresses.ipv4[1]")).await;
    refused_rule(&api, addr(json!({"ipv6": ["fe80::1%eth0/64"]})), &format!("{p}.addresses.ipv6[0]")).await;
    refused_rule(&api, addr(json!({"ipv6": ["10.0.0.0/8"]})), &format!("{p}.addresses.ipv6[0]")).await;
    let v4: Vec<String> = (0..200).map(|i| format!("10.0.{i}.0/24")).collect();
    let v6: Vec<String> = (0..56).map(|i| format!("2001:db8:{i:x}::/48")).collect();
    refused_rule(&api, addr(json!({"ipv4": v4, "ipv6": v6})), &format!("{p}.addresses")).await;
    let mut labelled = tcp_rule("22");
    labelled["label"] = json!("ab");
    refused_rule(&api, labelled.clone(), &format!("{p}.label")).await;
    labelled["label"] = json!("a".repeat(33));
    refused_rule(&api, labelled, &format!("{p}.label")).await;
    let mut described = tcp_rule("22");
    described["description"] = json!("");
    refused_rule(&api, described.clone(), &format!("{p}.description")).await;
    described["description"] = json!("d".repeat(101));
    refused_rule(&api, described, &format!("{p}.description")).await;
    // The limits themselves are accepted.
    let v6: Vec<String> = (0..55).map(|i| format!("2001:db8:{i:x}::/48")).collect();
    let mut ok = addr(json!({"ipv4": (0..200).map(|i| format!("10.0.{i}.0/24")).collect::<Vec<_>>(), "ipv6": v6}));
    ok["label"] = json!("a".repeat(32));
    ok["description"] = json!("d".repeat(100));
    api.post("/networking/firewalls", json!({"label": "limits", "rules": rules_with(vec![ok])})).await.ok();
    for proto in ["TCP", "UDP", "ICMP", "IPENCAP"] {
        let rule = json!({"action": "DROP", "protocol": proto, "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}});
        api.post("/networking/firewalls", json!({"label": format!("p-{proto}"), "rules": rules_with(vec![rule])}))
            .await
            .ok();
    }
}

#[tokio::test]
async fn ports_follow_the_spec_and_are_only_for_tcp_and_udp() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = "rules.inbound[0].ports";
    let fifteen = (1..=15).map(|p| p.to_string()).collect::<Vec<_>>().join(",");
    let sixteen = (1..=16).map(|p| p.to_string()).collect::<Vec<_>>().join(",");
    // 7 ranges and one port are 15 pieces; 8 ranges are 16.
    let ranges = |n: u16| (0..n).map(|i| format!("{}-{}", 100 + 10 * i, 105 + 10 * i)).collect::<Vec<_>>();
    let fifteen_ranged = format!("{}, 22", ranges(7).join(", "));
    for bad in [
        "080",
        "0",
        "65536",
        "22-22",
        "23-22",
        "22,  80",
        "22 ,80",
        " 22",
        "22,",
        "http",
        "",
        &sixteen,
        &ranges(8).join(","),
    ] {
        refused_rule(&api, tcp_rule(bad), f).await;
    }
    for (i, good) in
        ["22", "1", "65535", "1-65535", "22-24, 80, 443", "22,80", &fifteen, &fifteen_ranged].iter().enumerate()
    {
        let mut rule = tcp_rule(good);
        rule["protocol"] = json!(if i % 2 == 0 { "TCP" } else { "UDP" });
        api.post("/networking/firewalls", json!({"label": format!("ports{i}"), "rules": rules_with(vec![rule])}))
            .await
            .ok();
    }
    for proto in ["ICMP", "IPENCAP"] {
        let mut rule = tcp_rule("22");
        rule["protocol"] = json!(proto);
        api.post("/networking/firewalls", json!({"label": "icmp", "rules": rules_with(vec![rule])}))
            .await
            .expect_error(400, f);
    }
    // Null means all ports.
    let mut rule = tcp_rule("22");
    rule["ports"] = Value::Null;
    let r = api.post("/networking/firewalls", json!({"label": "allports", "rules": rules_with(vec![rule])})).await;
    assert_eq!(r.ok()["rules"]["inbound"][0]["ports"], Value::Null);
}

#[tokio::test]
async fn errors_name_every_field_by_its_dotted_path_at_once() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut bad_ports = tcp_rule("080");
    bad_ports["label"] = json!("fine-label");
    let rules = json!({
        "inbound": [tcp_rule("22"), tcp_rule("80"), tcp_rule("443"), bad_ports],
        "inbound_policy": "DROP",
        "outbound": [{"action": "ACCEPT", "protocol": "ICMP", "ports": "1", "addresses": {"ipv4": ["nope"]}}],
        "outbound_policy": "ACCEPT",
    });
    let r = api.post("/networking/firewalls", json!({"label": "x", "rules": rules, "tags": ["ok-tag", "t"]})).await;
    r.expect_error(400, "label")
        .expect_error(400, "rules.inbound[3].ports")
        .expect_error(400, "rules.outbound[0].ports")
        .expect_error(400, "rules.outbound[0].addresses.ipv4[0]")
        .expect_error(400, "tags[1]");
    assert_eq!(r.fields().len(), 5, "{}", r.text);
    // The same rules through PUT .../rules, where the body is the rules object.
    let f = create_firewall(&api, "paths", json!({})).await;
    let r = api.put(&format!("{}/rules", fw_path(&f)), rules).await;
    r.expect_error(400, "inbound[3].ports").expect_error(400, "outbound[0].addresses.ipv4[0]");
    // A value of the wrong JSON type names its field too.
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": "typed", "rules": rules_with(vec![]), "devices": {"instances": "1"}}),
        )
        .await;
    r.expect_error(400, "devices.instances");
}

#[tokio::test]
async fn status_goes_to_disabled_and_back_with_its_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "toggle", json!({})).await;
    let d = api.put(&fw_path(&f), json!({"status": "disabled"})).await;
    assert_eq!(d.ok()["status"], "disabled");
    assert_eq!(api.get(&fw_path(&f)).await.ok()["status"], "disabled");
    assert_eq!(event_actions(&api).await[0], "firewall_disable");
    // The same status again is no transition and no event.
    api.put(&fw_path(&f), json!({"status": "disabled"})).await.ok();
    assert_eq!(event_actions(&api).await[0], "firewall_disable");
    let e = api.put(&fw_path(&f), json!({"status": "enabled"})).await;
    assert_eq!(e.ok()["status"], "enabled");
    let actions = event_actions(&api).await;
    assert_eq!(actions[..3], ["firewall_enable", "firewall_disable", "firewall_create"]);
}

#[tokio::test]
async fn update_refuses_rules_devices_and_the_deleted_status() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "fixed", json!({"tags": ["keep"]})).await;
    let p = fw_path(&f);
    api.put(&p, json!({"status": "deleted"})).await.expect_error(400, "status");
    api.put(&p, json!({"status": "paused"})).await.expect_error(400, "status");
    api.put(&p, json!({"rules": rules_with(vec![])})).await.expect_error(400, "rules");
    api.put(&p, json!({"devices": {"instances": [1]}})).await.expect_error(400, "devices");
    let r = api.put(&p, json!({"label": "renamed", "status": "deleted", "rules": {}})).await;
    r.expect_error(400, "status").expect_error(400, "rules");
    assert_eq!(api.get(&p).await.ok(), &f, "nothing changed");
    assert_eq!(event_actions(&api).await, ["firewall_create"]);
    // The record as read, sent back with its read-only fields but without rules, is accepted.
    let mut back = f.clone();
    back.as_object_mut().unwrap().remove("rules");
    api.put(&p, back).await.ok();
}

#[tokio::test]
async fn label_and_tags_change_with_a_firewall_update_event() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "before", json!({"tags": ["one"]})).await;
    let u = api.put(&fw_path(&f), json!({"label": "after", "tags": ["two", "three"]})).await.ok().clone();
    assert_eq!(u["label"], "after");
    assert_eq!(u["tags"], json!(["two", "three"]));
    assert_eq!(u["status"], "enabled");
    assert_eq!(u["rules"], f["rules"]);
    assert_eq!(api.get(&fw_path(&f)).await.ok(), &u);
    assert_eq!(event_actions(&api).await[0], "firewall_update");
    api.put(&fw_path(&f), json!({"tags": ["x"]})).await.expect_error(400, "tags[0]");
}

#[tokio::test]
async fn rules_update_replaces_both_sets_at_once_and_returns_the_new_rules() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "rules", json!({})).await;
    let path = format!("{}/rules", fw_path(&f));
    let new = json!({
        "inbound": [tcp_rule("443"), tcp_rule("80")],
        "inbound_policy": "ACCEPT",
        "outbound": [{"action": "DROP", "protocol": "UDP", "ports": "53", "addresses": {"ipv6": ["::/0"]}}],
        "outbound_policy": "DROP",
    });
    let r = api.put(&path, new.clone()).await.ok().clone();
    assert_eq!(r["inbound"].as_array().unwrap().len(), 2);
    assert_eq!(r["inbound"][0]["ports"], "443");
    assert_eq!(r["outbound"][0]["protocol"], "UDP");
    assert_eq!((&r["inbound_policy"], &r["outbound_policy"]), (&json!("ACCEPT"), &json!("DROP")));
    assert_eq!(api.get(&path).await.ok(), &r);
    assert_eq!(api.get(&fw_path(&f)).await.ok()["rules"], r);
    assert_eq!(event_actions(&api).await[0], "firewall_update");
    // Omitted arrays become empty; omitted policies keep their current values.
    let r = api.put(&path, json!({"outbound": [tcp_rule("8080")]})).await.ok().clone();
    assert_eq!(r["inbound"], json!([]));
    assert_eq!(r["outbound"][0]["ports"], "8080");
    assert_eq!((&r["inbound_policy"], &r["outbound_policy"]), (&json!("ACCEPT"), &json!("DROP")));
    // A bad rule set changes nothing.
    api.put(&path, json!({"inbound": [tcp_rule("0")], "inbound_policy": "DROP"}))
        .await
        .expect_error(400, "inbound[0].ports");
    api.put(&path, json!({"inbound_policy": "MAYBE"})).await.expect_error(400, "inbound_policy");
    assert_eq!(api.get(&path).await.ok(), &r);
}

#[tokio::test]
async fn delete_removes_the_firewall_with_a_firewall_delete_event() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "doomed", json!({})).await;
    let keep = create_firewall(&api, "kept", json!({})).await;
    assert_eq!(api.delete(&fw_path(&f)).await.ok(), &json!({}));
    for path in ["", "/rules", "/devices"] {
        api.get(&format!("{}{path}", fw_path(&f))).await.expect_error(404, "-");
    }
    api.put(&fw_path(&f), json!({"status": "enabled"})).await.expect_error(404, "-");
    api.delete(&fw_path(&f)).await.expect_error(404, "-");
    assert_eq!(api.get("/networking/firewalls").await.ok()["data"], json!([keep]));
    assert_eq!(event_actions(&api).await[0], "firewall_delete");
    // The label is free again.
    create_firewall(&api, "doomed", json!({})).await;
}

#[tokio::test]
async fn firewall_lists_are_paged_and_filterable() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..27 {
        let tags = if i % 3 == 0 { json!(["third"]) } else { json!([]) };
        create_firewall(&api, &format!("fw-{i:02}"), json!({"tags": tags})).await;
    }
    let p1 = api.get("/networking/firewalls?page_size=25").await.ok().clone();
    assert_eq!((p1["results"].as_u64(), p1["pages"].as_u64()), (Some(27), Some(2)));
    assert_eq!(p1["data"].as_array().unwrap().len(), 25);
    let p2 = api.get("/networking/firewalls?page_size=25&page=2").await;
    assert_eq!(p2.ok()["data"][1]["label"], "fw-26");
    let one = api.get_filtered("/networking/firewalls", r#"{"label": "fw-07"}"#).await;
    assert_eq!(one.ok()["results"], 1);
    assert_eq!(one.body["data"][0]["label"], "fw-07");
    let tagged = api.get_filtered("/networking/firewalls", r#"{"tags": "third"}"#).await;
    assert_eq!(tagged.ok()["results"], 9);
    let desc = api.get_filtered("/networking/firewalls", r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(desc.ok()["data"][0]["label"], "fw-26");
    api.get_filtered("/networking/firewalls", r#"{"rules": "x"}"#).await.expect_error(400, "X-Filter");
}

#[tokio::test]
async fn firewall_scopes_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    let f = create_firewall(&api, "scoped", json!({})).await;
    let ro = api.post("/profile/tokens", json!({"scopes": "firewall:read_only"})).await;
    let ro = s.api_with(ro.ok()["token"].as_str().unwrap());
    ro.get("/networking/firewalls").await.ok();
    ro.get(&fw_path(&f)).await.ok();
    ro.get(&format!("{}/rules", fw_path(&f))).await.ok();
    ro.get(&format!("{}/devices", fw_path(&f))).await.ok();
    let r = ro.put(&fw_path(&f), json!({"status": "disabled"})).await;
    r.status_is(403);
    assert_eq!(r.header("x-accepted-oauth-scopes"), Some("firewall:read_write"));
    ro.post("/networking/firewalls", json!({"label": "nope", "rules": rules_with(vec![])})).await.status_is(403);
    ro.delete(&fw_path(&f)).await.status_is(403);
    let rw = api.post("/profile/tokens", json!({"scopes": "firewall:read_write"})).await;
    let rw = s.api_with(rw.ok()["token"].as_str().unwrap());
    rw.put(&fw_path(&f), json!({"status": "disabled"})).await.ok();
    create_firewall(&rw, "by-rw-token", json!({})).await;
    let other = api.post("/profile/tokens", json!({"scopes": "instances:read_write"})).await;
    let other = s.api_with(other.ok()["token"].as_str().unwrap());
    other.get("/networking/firewalls").await.status_is(403);
}

#[tokio::test]
async fn restricted_users_need_add_firewalls_and_per_firewall_grants() {
    let s = TestServer::start().await;
    let api = s.api();
    let theirs = create_firewall(&api, "owners", json!({})).await;
    let (_, bob) = user_with_token(&s, "bobfw", true, "*").await;
    bob.post("/networking/firewalls", json!({"label": "bobs", "rules": rules_with(vec![])})).await.status_is(403);
    assert_eq!(bob.get("/networking/firewalls").await.ok()["results"], 0, "sees nothing without grants");
    let p = fw_path(&theirs);
    for path in ["", "/rules", "/devices"] {
        bob.get(&format!("{p}{path}")).await.expect_error(404, "-");
    }
    bob.put(&p, json!({"status": "disabled"})).await.expect_error(404, "-");
    bob.put(&format!("{p}/rules"), rules_with(vec![])).await.expect_error(404, "-");
    bob.post(&format!("{p}/devices"), json!({"id": 1, "type": "instance"})).await.expect_error(404, "-");
    bob.delete(&p).await.expect_error(404, "-");

    // add_firewalls: the creator gets read_write on what it creates.
    api.put("/account/users/bobfw/grants", json!({"global": {"add_firewalls": true}})).await.ok();
    let mine = create_firewall(&bob, "bobs", json!({})).await;
    let g = api.get("/account/users/bobfw/grants").await;
    let grants = g.ok()["firewall"].as_array().unwrap().clone();
    assert!(grants.contains(&json!({"id": id(&mine), "label": "bobs", "permissions": "read_write"})), "{grants:?}");
    assert!(grants.contains(&json!({"id": id(&theirs), "label": "owners", "permissions": null})), "{grants:?}");
    assert_eq!(bob.get("/networking/firewalls").await.ok()["data"], json!([mine]));
    bob.put(&fw_path(&mine), json!({"status": "disabled"})).await.ok();
    // read_only on the owner's firewall: reads work, writes are 403.
    api.put("/account/users/bobfw/grants", json!({"firewall": [{"id": id(&theirs), "permissions": "read_only"}]}))
        .await
        .ok();
    bob.get(&p).await.ok();
    bob.get(&format!("{p}/rules")).await.ok();
    bob.put(&p, json!({"status": "disabled"})).await.expect_error(403, "-");
    bob.put(&format!("{p}/rules"), rules_with(vec![])).await.expect_error(403, "-");
    bob.delete(&p).await.expect_error(403, "-");
    assert_eq!(api.get(&p).await.ok(), &theirs, "nothing changed");
    // Deleting a firewall removes its grants.
    bob.delete(&fw_path(&mine)).await.ok();
    let g = api.get("/account/users/bobfw/grants").await;
    assert!(!g.ok()["firewall"].as_array().unwrap().iter().any(|e| e["id"] == mine["id"]));
}
