//! The hosted API's names side by side with the spec's (`/v4/linode/instances`, `linode_id`,
//! type `linode`, grant key `linode`), answered from the same records, and a trailing slash on
//! every path.

use reqwest::Method;
use serde_json::{Value, json};

use crate::instances::{ROOT_PASS, create_instance, id, wait_status};
use crate::support::*;

const LINODE: (&str, &str) = ("X-Nubis-Names", "linode");

async fn post_linode(api: &Api, path: &str, body: Value) -> Resp {
    api.send(Method::POST, path, Some(&body), &[LINODE]).await
}

async fn get_linode(api: &Api, path: &str) -> Resp {
    api.send(Method::GET, path, None, &[LINODE]).await
}

#[tokio::test]
async fn instances_answer_under_both_path_families_from_the_same_records() {
    let s = TestServer::start().await;
    let api = s.api();
    let body = json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": ROOT_PASS,
        "booted": false, "label": "via-linode"});
    let made = api.post("/linode/instances", body).await.ok().clone();
    let iid = id(&made);
    assert_eq!(api.get(&format!("/compute/instances/{iid}")).await.ok()["label"], "via-linode");
    let spec = create_instance(&api, "us-east", json!({"label": "via-spec", "booted": false})).await;
    let list = api.get("/linode/instances/").await;
    let labels: Vec<&str> =
        list.ok()["data"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["via-linode", "via-spec"]);
    wait_status(&api, iid, "offline").await;
    api.post_empty(&format!("/linode/instances/{iid}/boot/")).await.ok();
    wait_status(&api, iid, "running").await;
    // Below the family: addresses name their instance `linode_id`.
    let ips = api.get(&format!("/linode/instances/{}/ips", id(&spec))).await;
    assert_eq!(ips.ok()["ipv4"]["public"][0]["linode_id"], id(&spec));
    assert!(ips.body["ipv4"]["public"][0].get("instance_id").is_none());
    // The same record through the spec's family keeps the spec's names.
    let ips = api.get(&format!("/compute/instances/{}/ips", id(&spec))).await;
    assert_eq!(ips.ok()["ipv4"]["public"][0]["instance_id"], id(&spec));
    api.send(Method::DELETE, &format!("/linode/instances/{iid}"), None, &[]).await.ok();
    api.get(&format!("/compute/instances/{iid}")).await.expect_error(404, "-");
}

#[tokio::test]
async fn a_trailing_slash_is_accepted_on_every_path() {
    let s = TestServer::start().await;
    let api = s.api();
    for path in ["/regions/", "/profile/", "/account/events/", "/networking/firewalls/", "/vpcs/", "/nodebalancers/"] {
        let r = api.get(path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    }
}

#[tokio::test]
async fn linode_id_is_a_synonym_of_instance_id_in_the_networking_bodies() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"label": "alpha", "booted": false})).await;
    let b = create_instance(&api, "us-east", json!({"label": "bravo", "booted": false})).await;
    let (a_id, b_id) = (id(&a), id(&b));
    wait_status(&api, a_id, "offline").await;
    // Allocation.
    let private = api.post("/networking/ips", json!({"type": "ipv4", "public": false, "linode_id": a_id})).await;
    assert_eq!(private.ok()["instance_id"], a_id);
    // Assignment (both paths): swap the public addresses, then swap back.
    let (pa, pb) = (a["ipv4"][0].as_str().unwrap().to_string(), b["ipv4"][0].as_str().unwrap().to_string());
    for path in ["/networking/ips/assign", "/networking/ipv4/assign"] {
        let r = api
            .post(path, json!({"region": "us-east", "assignments": [{"address": pa, "linode_id": b_id}, {"address": pb, "linode_id": a_id}]}))
            .await;
        assert_eq!(r.ok(), &json!({}));
        assert_eq!(api.get(&format!("/networking/ips/{pa}")).await.ok()["instance_id"], b_id);
        api.post(path, json!({"region": "us-east", "assignments": [{"address": pa, "linode_id": a_id}, {"address": pb, "linode_id": b_id}]}))
            .await
            .ok();
        assert_eq!(api.get(&format!("/networking/ips/{pa}")).await.ok()["instance_id"], a_id);
    }
    // Sharing.
    api.post("/networking/ips/share", json!({"linode_id": b_id, "ips": [pa]})).await.ok();
    let shared = api.get(&format!("/compute/instances/{b_id}/ips")).await;
    assert_eq!(shared.ok()["ipv4"]["shared"][0]["address"], pa);
    // IPv6 range create.
    let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "linode_id": a_id})).await;
    let range = r.ok()["range"].as_str().unwrap().trim_end_matches("/64").to_string();
    let view = api.get(&format!("/networking/ipv6/ranges/{range}")).await;
    assert_eq!(view.ok()["instances"], json!([a_id]));
    // In the hosted dialect the answers use the hosted names.
    let view = get_linode(&api, &format!("/networking/ipv6/ranges/{range}")).await;
    assert_eq!(view.ok()["linodes"], json!([a_id]));
    let ip = get_linode(&api, &format!("/networking/ips/{pa}")).await;
    assert_eq!(ip.ok()["linode_id"], a_id);
    // A refusal names the field as the client does.
    let r = post_linode(&api, "/networking/ips", json!({"type": "ipv4", "public": false, "linode_id": 999_999})).await;
    // A reference in the body to an instance that does not exist is bad input (400, naming the
    // field); 404 is for a path that names nothing.
    assert_eq!(r.expect_error(400, "linode_id").fields(), ["linode_id"]);
}

#[tokio::test]
async fn firewall_devices_of_type_linode_are_instances() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(&api, "us-east", json!({"label": "alpha", "booted": false})).await;
    let b = create_instance(&api, "us-east", json!({"label": "bravo", "booted": false})).await;
    let rules = json!({"inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT"});
    let fw = api
        .post("/networking/firewalls", json!({"label": "fw-1", "rules": rules, "devices": {"linodes": [id(&a)]}}))
        .await;
    let fw_id = id(fw.ok());
    let dev =
        api.post(&format!("/networking/firewalls/{fw_id}/devices"), json!({"id": id(&b), "type": "linode"})).await;
    assert_eq!(dev.ok()["entity"]["type"], "instance");
    assert_eq!(dev.body["entity"]["url"], format!("/v4/compute/instances/{}", id(&b)));
    let spec: Vec<(String, i64)> = api.get(&format!("/networking/firewalls/{fw_id}/devices")).await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["entity"]["type"].as_str().unwrap().to_string(), d["entity"]["id"].as_i64().unwrap()))
        .collect();
    assert_eq!(spec, [("instance".to_string(), id(&a)), ("instance".to_string(), id(&b))]);
    let linode = get_linode(&api, &format!("/networking/firewalls/{fw_id}/devices")).await;
    let d = &linode.ok()["data"][0]["entity"];
    assert_eq!((d["type"].as_str(), d["id"].as_i64()), (Some("linode"), Some(id(&a))));
    assert_eq!(d["url"], format!("/v4/linode/instances/{}", id(&a)));
    // The firewalls of an instance through the hosted family.
    let fws = api.get(&format!("/linode/instances/{}/firewalls", id(&b))).await;
    assert_eq!(fws.ok()["data"][0]["id"], fw_id);
}

#[tokio::test]
async fn grants_accept_the_key_linode_and_carry_labels() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "granted", "booted": false})).await;
    api.post("/account/users", json!({"username": "dev1", "email": "dev1@example.com", "restricted": true})).await.ok();
    let r = api
        .put(
            "/account/users/dev1/grants",
            json!({"global": {"add_linodes": true}, "linode": [{"id": id(&inst), "permissions": "read_only"}]}),
        )
        .await;
    let g = r.ok();
    assert_eq!(g["global"]["add_instances"], true);
    assert_eq!(g["instance"], json!([{"id": id(&inst), "permissions": "read_only", "label": "granted"}]));
    let g = get_linode(&api, "/account/users/dev1/grants").await;
    assert_eq!(g.ok()["linode"], json!([{"id": id(&inst), "permissions": "read_only", "label": "granted"}]));
    assert_eq!(g.body["global"]["add_linodes"], true);
    assert!(g.body.get("instance").is_none());
}

#[tokio::test]
async fn events_in_the_hosted_dialect_name_instances_linode_and_filters_use_its_names() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "evented", "booted": false})).await;
    let r =
        api.send(Method::GET, "/account/events", None, &[LINODE, ("X-Filter", r#"{"action": "linode_create"}"#)]).await;
    let e = &r.ok()["data"][0];
    assert_eq!(e["action"], "linode_create");
    assert_eq!(e["entity"]["type"], "linode");
    assert_eq!(e["entity"]["id"], id(&inst));
    assert_eq!(e["entity"]["url"], format!("/v4/linode/instances/{}", id(&inst)));
    // The same events in the spec's names (no dialect asked), filtered with the hosted names.
    let r = api.get_filtered("/account/events", r#"{"entity.type": "linode", "action": "linode_create"}"#).await;
    assert_eq!(r.ok()["data"][0]["action"], "instance_create");
    assert_eq!(r.body["data"][0]["entity"]["type"], "instance");
    assert_eq!(r.body["results"], 1);
}

#[tokio::test]
async fn the_official_clients_user_agents_get_the_hosted_names() {
    let s = TestServer::start().await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"label": "agent", "booted": false})).await;
    let addr = inst["ipv4"][0].as_str().unwrap();
    for ua in
        ["python-linode_api4/5.48.0 python-requests/2.32.5", "linode-cli/5.69.0 linode-api-openapi/4.x python/3.11"]
    {
        let r = api.send(Method::GET, &format!("/networking/ips/{addr}"), None, &[("User-Agent", ua)]).await;
        assert_eq!(r.ok()["linode_id"], id(&inst), "{ua}");
    }
    let r = api.get(&format!("/networking/ips/{addr}")).await;
    assert_eq!(r.ok()["instance_id"], id(&inst));
    // The explicit header wins over the client.
    let r = api
        .send(
            Method::GET,
            &format!("/networking/ips/{addr}"),
            None,
            &[("User-Agent", "linode-cli/5"), ("X-Nubis-Names", "spec")],
        )
        .await;
    assert_eq!(r.ok()["instance_id"], id(&inst));
    // The OpenAPI document is never translated.
    let doc = api.send(Method::GET, "/openapi.json", None, &[LINODE]).await;
    assert!(doc.ok()["paths"].get("/v4/compute/instances").is_some());
}

#[tokio::test]
async fn reset_secret_with_an_underscore_is_the_same_operation_as_with_a_hyphen() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = api.post_empty("/account/oauth-clients/abc123/reset-secret").await;
    let b = api.post_empty("/account/oauth-clients/abc123/reset_secret").await;
    assert_eq!((a.status, &a.body), (b.status, &b.body));
}
