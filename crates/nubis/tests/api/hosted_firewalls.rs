//! Firewalls as the hosted API serves them beyond the spec: rule versions with their history and
//! fingerprints, the account's default firewalls, and the firewall templates.

use serde_json::{Value, json};

use crate::support::*;

async fn firewall(api: &Api, label: &str) -> i64 {
    let r = api
        .post(
            "/networking/firewalls",
            json!({"label": label, "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"}}),
        )
        .await;
    r.ok()["id"].as_i64().unwrap()
}

fn ssh(port: &str) -> Value {
    json!({"ports": port, "protocol": "TCP", "addresses": {"ipv4": ["198.51.100.0/24"]}, "action": "ACCEPT", "label": "ssh"})
}

#[tokio::test]
async fn rules_carry_a_version_and_fingerprint_and_every_version_stays_readable() {
    let s = TestServer::start().await;
    let api = s.api();
    let id = firewall(&api, "versions").await;
    let fw = api.get(&format!("/networking/firewalls/{id}")).await;
    assert_eq!(fw.ok()["rules"]["version"], 1);
    let fp1 = fw.body["rules"]["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fp1.len(), 8);
    assert!(fp1.bytes().all(|c| c.is_ascii_hexdigit()), "{fp1}");
    // Each change of the rules is a new version; a label change is not.
    let rules = format!("/networking/firewalls/{id}/rules");
    let v2 = api.put(&rules, json!({"inbound": [ssh("22")]})).await;
    assert_eq!(v2.ok()["version"], 2);
    let fp2 = v2.body["fingerprint"].as_str().unwrap().to_string();
    assert_ne!(fp2, fp1);
    api.put(&format!("/networking/firewalls/{id}"), json!({"label": "versions-renamed"})).await.ok();
    // Read rules can be sent back as they are: version and fingerprint are read-only.
    let current = api.get(&rules).await.ok().clone();
    assert_eq!(current["version"], 2);
    let v3 = api.put(&rules, current.clone()).await;
    assert_eq!(v3.ok()["version"], 3);
    assert_eq!(v3.body["fingerprint"], fp2, "the same rules have the same fingerprint");
    api.put(&format!("/networking/firewalls/{id}"), json!({"status": "disabled"})).await.ok();
    api.put(&rules, json!({"inbound": [ssh("2222")]})).await.ok();
    // The history: every version, oldest first, with the firewall's status then.
    let h = api.get(&format!("/networking/firewalls/{id}/history")).await;
    assert_eq!(h.ok()["results"], 4);
    let versions: Vec<(i64, String)> = h.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["rules"]["version"].as_i64().unwrap(), e["status"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(versions, [(1, "enabled".into()), (2, "enabled".into()), (3, "enabled".into()), (4, "disabled".into())]);
    assert!(h.body["data"][0]["updated"].is_string());
    // One version's rules, as they were.
    let old = api.get(&format!("/networking/firewalls/{id}/history/rules/2")).await;
    assert_eq!(old.ok()["inbound"][0], ssh("22"));
    assert_eq!((old.body["version"].clone(), old.body["fingerprint"].clone()), (json!(2), json!(fp2)));
    let first = api.get(&format!("/networking/firewalls/{id}/history/rules/1")).await;
    assert_eq!(first.ok()["inbound"], json!([]));
    assert_eq!(first.body["fingerprint"], fp1);
    api.get(&format!("/networking/firewalls/{id}/history/rules/9")).await.expect_error(404, "-");
    let f = api.get_filtered(&format!("/networking/firewalls/{id}/history"), r#"{"status": "disabled"}"#).await;
    assert_eq!(f.ok()["results"], 1);
    // Another account sees nothing; a deleted firewall has no history.
    other_account(&s).get(&format!("/networking/firewalls/{id}/history")).await.expect_error(404, "-");
    api.delete(&format!("/networking/firewalls/{id}")).await.ok();
    api.get(&format!("/networking/firewalls/{id}/history")).await.expect_error(404, "-");
}

#[tokio::test]
async fn history_needs_the_firewalls_grant() {
    let s = TestServer::start().await;
    let api = s.api();
    let id = firewall(&api, "granted").await;
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    bob.get(&format!("/networking/firewalls/{id}/history")).await.expect_error(404, "-");
    api.put("/account/users/bob/grants", json!({"firewall": [{"id": id, "permissions": "read_only"}]})).await.ok();
    assert_eq!(bob.get(&format!("/networking/firewalls/{id}/history")).await.ok()["results"], 1);
    bob.get(&format!("/networking/firewalls/{id}/history/rules/1")).await.ok();
}

#[tokio::test]
async fn default_firewalls_are_set_checked_and_applied_to_new_services() {
    let s = TestServer::start().await;
    let api = s.api();
    let empty = api.get("/networking/firewalls/settings").await;
    assert_eq!(
        empty.ok(),
        &json!({"default_firewall_ids": {"instance": null, "nodebalancer": null, "public_interface": null, "vpc_interface": null}})
    );
    let a = firewall(&api, "default-a").await;
    let b = firewall(&api, "default-b").await;
    let r = api
        .put("/networking/firewalls/settings", json!({"default_firewall_ids": {"instance": a, "nodebalancer": b}}))
        .await;
    assert_eq!(r.ok()["default_firewall_ids"]["instance"], a);
    assert_eq!(r.body["default_firewall_ids"]["nodebalancer"], b);
    // An omitted key keeps its value; null clears; an unknown firewall or key is refused.
    let r = api.put("/networking/firewalls/settings", json!({"default_firewall_ids": {"vpc_interface": a}})).await;
    assert_eq!(r.ok()["default_firewall_ids"]["instance"], a);
    let r = api.put("/networking/firewalls/settings", json!({"default_firewall_ids": {"vpc_interface": null}})).await;
    assert_eq!(r.ok()["default_firewall_ids"]["vpc_interface"], Value::Null);
    let other_fw = firewall(&other_account(&s), "not-mine").await;
    api.put("/networking/firewalls/settings", json!({"default_firewall_ids": {"public_interface": other_fw}}))
        .await
        .expect_error(400, "default_firewall_ids.public_interface");
    api.put("/networking/firewalls/settings", json!({"default_firewall_ids": {"kubernetes": a}})).await.status_is(400);
    api.put("/networking/firewalls/settings", json!({"default_firewall_ids": [null, null]}))
        .await
        .expect_error(400, "default_firewall_ids");
    // The hosted API's clients say `linode`.
    let hosted = [("user-agent", "linode-cli/5.69.0")];
    let r = api.send(reqwest::Method::GET, "/networking/firewalls/settings", None, &hosted).await;
    assert_eq!(r.ok()["default_firewall_ids"]["linode"], a, "{}", r.text);
    let body = json!({"default_firewall_ids": {"linode": a}});
    api.send(reqwest::Method::PUT, "/networking/firewalls/settings", Some(&body), &hosted).await.ok();
    // Restricted users read them but may not change them.
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    assert_eq!(bob.get("/networking/firewalls/settings").await.ok()["default_firewall_ids"]["instance"], a);
    bob.put("/networking/firewalls/settings", json!({"default_firewall_ids": {"instance": null}})).await.status_is(403);
    // New services without a firewall_id get the defaults.
    let i = api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "booted": false})).await;
    let iid = i.ok()["id"].as_i64().unwrap();
    let fws = api.get(&format!("/compute/instances/{iid}/firewalls")).await;
    assert_eq!(fws.ok()["data"][0]["id"], a);
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await;
    let nid = nb.ok()["id"].as_i64().unwrap();
    let fws = api.get(&format!("/nodebalancers/{nid}/firewalls")).await;
    assert_eq!(fws.ok()["data"][0]["id"], b);
    // A deleted firewall is no longer a default.
    api.delete(&format!("/networking/firewalls/{b}")).await.ok();
    let r = api.get("/networking/firewalls/settings").await;
    assert_eq!(r.ok()["default_firewall_ids"]["nodebalancer"], Value::Null);
    assert_eq!(r.body["default_firewall_ids"]["instance"], a);
}

#[tokio::test]
async fn templates_are_listed_and_read_by_slug() {
    let s = TestServer::start().await;
    let api = s.api();
    let l = api.get("/networking/firewalls/templates").await;
    let slugs: Vec<&str> = l.ok()["data"].as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["public", "vpc"]);
    let t = api.get("/networking/firewalls/templates/public").await;
    assert_eq!(t.ok()["rules"]["inbound_policy"], "DROP");
    assert_eq!(t.body["rules"]["inbound"][0]["ports"], "22");
    api.get("/networking/firewalls/templates/nothing").await.expect_error(404, "-");
    // A template's rules make a firewall as they are.
    let fw = api.post("/networking/firewalls", json!({"label": "from-template", "rules": t.body["rules"]})).await;
    assert_eq!(fw.ok()["rules"]["inbound"], t.body["rules"]["inbound"]);
    api.anonymous().get("/networking/firewalls/templates").await.status_is(401);
}
