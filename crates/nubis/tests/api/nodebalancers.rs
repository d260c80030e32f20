//! Load balancers, the control plane (issue 6, reference `/nodebalancers`): records, defaults
//! and every field and cross-field rule of balancers, configs and nodes, certificates, rebuild,
//! addresses, grants, events, lists, and the instance hooks (delete blocked while a back end,
//! `GET .../nodebalancers`). Refused requests change nothing: each test reads back to prove it.

use serde_json::{Value, json};

use crate::lb_support::*;
use crate::support::*;

pub(crate) fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

pub(crate) async fn count(s: &TestServer, table: &str) -> i64 {
    db_scalar(s, &format!("SELECT COUNT(*) FROM {table}")).await
}

pub(crate) async fn new_balancer(api: &Api, body: Value) -> Value {
    api.post("/nodebalancers", body).await.ok().clone()
}

#[tokio::test]
async fn a_new_balancer_has_an_address_from_its_region_a_hostname_and_defaults() {
    let s = lb_server().await;
    let api = s.api();
    let nb = new_balancer(&api, json!({"region": "us-east", "label": "web_lb-1", "tags": ["prod"]})).await;
    let ipv4 = nb["ipv4"].as_str().unwrap();
    let pool = s.public_pool("us-east").0;
    assert!(pool.contains(ipv4), "{ipv4} is in us-east's pool {pool}");
    assert_eq!(nb["hostname"], format!("{}.ip.nubis.test", ipv4.replace('.', "-")));
    assert!(nb["ipv6"].as_str().unwrap().starts_with("2001:db8:10:"), "{}", nb["ipv6"]);
    assert_eq!(nb["client_conn_throttle"], 0);
    assert_eq!(nb["transfer"], json!({"in": 0.0, "out": 0.0, "total": 0.0}));
    assert_eq!(nb["tags"], json!(["prod"]));
    assert_eq!(nb["region"], "us-east");
    assert!(nb["created"].as_str().is_some() && nb["updated"].as_str().is_some());
    assert_eq!(api.get(&format!("/nodebalancers/{}", id(&nb))).await.ok(), &nb);
    // Omitted label: generated, valid, unique.
    let a = new_balancer(&api, json!({"region": "us-east"})).await;
    let b = new_balancer(&api, json!({"region": "us-east"})).await;
    let la = a["label"].as_str().unwrap();
    assert!(la.len() >= 3 && la.len() <= 32 && la.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    assert_ne!(a["label"], b["label"]);
    assert_ne!(a["ipv4"], b["ipv4"]);
    assert_ne!(a["ipv6"], b["ipv6"]);
    assert_eq!(event_actions(&api).await.iter().filter(|a| *a == "nodebalancer_create").count(), 3);
}

#[tokio::test]
async fn balancer_fields_are_checked_and_refusals_create_nothing() {
    let s = lb_server().await;
    let api = s.api();
    let cases = [
        (json!({}), "region"),
        (json!({"region": "mars"}), "region"),
        (json!({"region": "no-lb"}), "region"),
        (json!({"region": "us-east", "label": "ab"}), "label"),
        (json!({"region": "us-east", "label": "web.lb"}), "label"),
        (json!({"region": "us-east", "label": "x".repeat(33)}), "label"),
        (json!({"region": "us-east", "client_conn_throttle": 21}), "client_conn_throttle"),
        (json!({"region": "us-east", "client_conn_throttle": -1}), "client_conn_throttle"),
        (json!({"region": "us-east", "tags": ["ab"]}), "tags[0]"),
        (json!({"region": "us-east", "firewall_id": 999}), "firewall_id"),
    ];
    for (body, field) in cases {
        api.post("/nodebalancers", body).await.expect_error(400, field);
    }
    // Every problem at once.
    let r = api.post("/nodebalancers", json!({"region": "mars", "label": "a", "client_conn_throttle": 50})).await;
    assert_eq!(r.fields(), ["region", "label", "client_conn_throttle"]);
    assert_eq!(count(&s, "nodebalancers").await, 0);
    // Labels are unique per account, also on update.
    let a = new_balancer(&api, json!({"region": "us-east", "label": "taken"})).await;
    api.post("/nodebalancers", json!({"region": "us-east", "label": "taken"})).await.expect_error(400, "label");
    let b = new_balancer(&api, json!({"region": "us-east", "label": "other"})).await;
    api.put(&format!("/nodebalancers/{}", id(&b)), json!({"label": "taken"})).await.expect_error(400, "label");
    api.put(&format!("/nodebalancers/{}", id(&b)), json!({"client_conn_throttle": 21}))
        .await
        .expect_error(400, "client_conn_throttle");
    assert_eq!(api.get(&format!("/nodebalancers/{}", id(&b))).await.ok()["label"], "other");
    // Another account may use the same label.
    other_account(&s).post("/nodebalancers", json!({"region": "us-east", "label": "taken"})).await.ok();
    // Update changes label, throttle and tags; read-only fields sent back are ignored.
    let mut sent = a.clone();
    sent["label"] = json!("renamed");
    sent["client_conn_throttle"] = json!(20);
    sent["tags"] = json!(["a-tag"]);
    sent["ipv4"] = json!("127.0.0.99");
    let u = api.put(&format!("/nodebalancers/{}", id(&a)), sent).await.ok().clone();
    assert_eq!((u["label"].as_str(), u["client_conn_throttle"].as_i64()), (Some("renamed"), Some(20)));
    assert_eq!(u["tags"], json!(["a-tag"]));
    assert_eq!(u["ipv4"], a["ipv4"]);
    assert!(event_actions(&api).await.contains(&"nodebalancer_update".to_string()));
}

#[tokio::test]
async fn balancer_and_instance_addresses_never_collide() {
    let s = lb_server().await;
    let api = s.api();
    let nb1 = new_balancer(&api, json!({"region": "us-east"})).await;
    let (iid, _) = backend_instance(&api, "us-east").await;
    let nb2 = new_balancer(&api, json!({"region": "us-east"})).await;
    let inst = api.get(&format!("/compute/instances/{iid}")).await.ok().clone();
    let public = inst["ipv4"][0].as_str().unwrap().to_string();
    let mut all = vec![nb1["ipv4"].as_str().unwrap().to_string(), nb2["ipv4"].as_str().unwrap().to_string(), public];
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 3, "{all:?}");
    // A balancer elsewhere takes its own region's pool.
    let west = new_balancer(&api, json!({"region": "us-west"})).await;
    assert_ne!(west["ipv4"], nb1["ipv4"]);
}

#[tokio::test]
async fn configs_take_the_reference_defaults_and_cross_field_rules() {
    let s = lb_server().await;
    let api = s.api();
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let path = format!("/nodebalancers/{nb}/configs");
    let c = api.post(&path, json!({})).await.ok().clone();
    let want = json!({
        "port": 80, "protocol": "http", "algorithm": "roundrobin", "stickiness": "none", "check": "none",
        "check_interval": 31, "check_timeout": 30, "check_attempts": 3, "check_path": "", "check_body": "",
        "check_passive": true, "proxy_protocol": "none", "cipher_suite": "recommended", "nodebalancer_id": nb,
        "ssl_commonname": "", "ssl_fingerprint": "", "ssl_cert": null, "ssl_key": null,
        "nodes_status": {"up": 0, "down": 0}
    });
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&c[k], v, "{k}");
    }
    let cases = [
        (json!({"port": 80}), "port"),
        (json!({"port": 0}), "port"),
        (json!({"port": 65536}), "port"),
        (json!({"port": 81, "protocol": "sctp"}), "protocol"),
        (json!({"port": 81, "algorithm": "random"}), "algorithm"),
        (json!({"port": 81, "stickiness": "sticky"}), "stickiness"),
        (json!({"port": 81, "check": "ping"}), "check"),
        (json!({"port": 81, "check_timeout": 31}), "check_timeout"),
        (json!({"port": 81, "check_timeout": 0}), "check_timeout"),
        (json!({"port": 81, "check_attempts": 0}), "check_attempts"),
        (json!({"port": 81, "check_attempts": 31}), "check_attempts"),
        (json!({"port": 81, "check_interval": 10}), "check_interval"),
        (json!({"port": 81, "check_interval": 5, "check_timeout": 5}), "check_interval"),
        (json!({"port": 81, "check_interval": 1, "check_timeout": 1}), "check_interval"),
        (json!({"port": 81, "check": "http"}), "check_path"),
        (json!({"port": 81, "check": "http", "check_path": "no-slash"}), "check_path"),
        (json!({"port": 81, "check": "http", "check_path": "/a b"}), "check_path"),
        (json!({"port": 81, "check": "http_body", "check_path": "/"}), "check_body"),
        (json!({"port": 81, "protocol": "tcp", "stickiness": "http_cookie"}), "stickiness"),
        (json!({"port": 81, "proxy_protocol": "v1"}), "proxy_protocol"),
        (json!({"port": 81, "protocol": "https", "proxy_protocol": "v2"}), "proxy_protocol"),
        (json!({"port": 81, "proxy_protocol": "v3", "protocol": "tcp"}), "proxy_protocol"),
        (json!({"port": 81, "cipher_suite": "weak"}), "cipher_suite"),
        (json!({"port": 81, "protocol": "https"}), "ssl_cert"),
        (json!({"port": 81, "protocol": "https"}), "ssl_key"),
        (json!({"port": 81, "protocol": "http", "ssl_cert": "x"}), "ssl_cert"),
    ];
    for (body, field) in cases {
        api.post(&path, body).await.expect_error(400, field);
    }
    assert_eq!(api.get(&path).await.ok()["results"], 1);
    // Allowed combinations.
    let ok = [
        json!({"port": 81, "protocol": "tcp", "proxy_protocol": "v2", "algorithm": "source", "stickiness": "table"}),
        json!({"port": 82, "check": "http_body", "check_path": "/health?x=1&y=%20", "check_body": "ok", "stickiness": "http_cookie"}),
        json!({"port": 83, "check_interval": 2, "check_timeout": 1, "check_attempts": 30, "check_passive": false, "cipher_suite": "legacy"}),
    ];
    for body in ok {
        let c = api.post(&path, body.clone()).await.ok().clone();
        for (k, v) in body.as_object().unwrap() {
            assert_eq!(&c[k], v, "{k}");
        }
    }
    // Update keeps what it does not name, and applies the same rules.
    let c83 = api.get(&path).await.ok()["data"][3].clone();
    let cid = id(&c83);
    api.put(&format!("{path}/{cid}"), json!({"port": 81})).await.expect_error(400, "port");
    api.put(&format!("{path}/{cid}"), json!({"check_timeout": 2})).await.expect_error(400, "check_timeout");
    let u = api.put(&format!("{path}/{cid}"), json!({"check_interval": 60, "check_timeout": 10})).await.ok().clone();
    assert_eq!(
        (u["check_interval"].as_i64(), u["check_timeout"].as_i64(), u["port"].as_i64()),
        (Some(60), Some(10), Some(83))
    );
    assert_eq!(u["cipher_suite"], "legacy");
    let actions = event_actions(&api).await;
    assert!(actions.contains(&"nodebalancer_config_create".to_string()));
    assert!(actions.contains(&"nodebalancer_config_update".to_string()));
    api.delete(&format!("{path}/{cid}")).await.ok();
    assert!(event_actions(&api).await.contains(&"nodebalancer_config_delete".to_string()));
    api.get(&format!("{path}/{cid}")).await.status_is(404);
}

fn sha1_fingerprint(pem: &str) -> String {
    use rustls_pki_types::pem::PemObject;
    let der = rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    let d = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, der.as_ref());
    d.as_ref().iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":")
}

#[tokio::test]
async fn certificates_are_checked_and_keys_never_returned() {
    let s = lb_server().await;
    let api = s.api();
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let path = format!("/nodebalancers/{nb}/configs");
    let (cert, key) = certificate(&["lb.example.test"], false);
    let (other_cert, other_key) = certificate(&["other.example.test"], false);
    let (blank, blank_key) = certificate(&["blank.example.test"], true);
    let https = |c: &str, k: &str| json!({"port": 443, "protocol": "https", "ssl_cert": c, "ssl_key": k});
    api.post(&path, https("not a certificate", &key)).await.expect_error(400, "ssl_cert");
    let garbled = cert.replace("MII", "!!!");
    api.post(&path, https(&garbled, &key)).await.expect_error(400, "ssl_cert");
    api.post(&path, https(&cert, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
        .await
        .expect_error(400, "ssl_key");
    api.post(&path, https(&cert, &other_key)).await.expect_error(400, "ssl_key");
    let r = api.post(&path, https(&blank, &blank_key)).await;
    r.expect_error(400, "ssl_cert");
    assert!(r.text.contains("blank"), "{}", r.text);
    assert_eq!(api.get(&path).await.ok()["results"], 0);
    // A good pair: the common name and SHA-1 fingerprint come from the certificate.
    let r = api.post(&path, https(&cert, &key)).await;
    let c = r.ok().clone();
    assert_eq!(c["ssl_commonname"], "lb.example.test");
    assert_eq!(c["ssl_fingerprint"], sha1_fingerprint(&cert));
    assert_eq!((c["ssl_cert"].as_str(), c["ssl_key"].as_str()), (Some("<REDACTED>"), Some("<REDACTED>")));
    let cid = id(&c);
    // The record sent back as it was read keeps the certificate; a new pair replaces it.
    let back = api.put(&format!("{path}/{cid}"), c.clone()).await.ok().clone();
    assert_eq!(back["ssl_fingerprint"], c["ssl_fingerprint"]);
    api.put(&format!("{path}/{cid}"), json!({"ssl_cert": other_cert})).await.expect_error(400, "ssl_cert");
    let u = api.put(&format!("{path}/{cid}"), json!({"ssl_cert": other_cert, "ssl_key": other_key})).await.ok().clone();
    assert_eq!(u["ssl_commonname"], "other.example.test");
    // Going back to http drops the certificate.
    let h = api.put(&format!("{path}/{cid}"), json!({"protocol": "http"})).await.ok().clone();
    assert_eq!(
        (h["ssl_cert"].clone(), h["ssl_key"].clone(), h["ssl_commonname"].clone()),
        (Value::Null, Value::Null, json!(""))
    );
    // The private key never appears anywhere a client or an operator reads.
    for p in [path.clone(), format!("{path}/{cid}")] {
        assert!(!api.get(&p).await.text.contains("PRIVATE KEY"));
    }
    assert!(!s.log().contains("PRIVATE KEY"));
}

#[tokio::test]
async fn nodes_need_a_private_address_of_an_instance_in_the_balancers_region() {
    let s = lb_server().await;
    let api = s.api();
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let cid = id(&api.post(&format!("/nodebalancers/{nb}/configs"), json!({})).await.ok().clone());
    let path = format!("/nodebalancers/{nb}/configs/{cid}/nodes");
    let (iid, private) = backend_instance(&api, "us-east").await;
    let public = api.get(&format!("/compute/instances/{iid}")).await.ok()["ipv4"][0].as_str().unwrap().to_string();
    let (_, west) = backend_instance(&api, "us-west").await;
    let other = other_account(&s);
    let (_, theirs) = backend_instance(&other, "us-east").await;
    let node = |label: &str, addr: &str| json!({"label": label, "address": addr});
    let cases = [
        (node("node1", &format!("{public}:80")), "address"),
        (node("node1", &format!("{west}:80")), "address"),
        (node("node1", &format!("{theirs}:80")), "address"),
        (node("node1", "192.168.255.254:80"), "address"),
        (node("node1", &private), "address"),
        (node("node1", &format!("{private}:0")), "address"),
        (node("node1", &format!("{private}:70000")), "address"),
        (node("node1", "nonsense"), "address"),
        (json!({"label": "node1"}), "address"),
        (json!({"address": format!("{private}:80")}), "label"),
        (node("n", &format!("{private}:80")), "label"),
        (node("bad label", &format!("{private}:80")), "label"),
        (json!({"label": "node1", "address": format!("{private}:80"), "weight": 0}), "weight"),
        (json!({"label": "node1", "address": format!("{private}:80"), "weight": 256}), "weight"),
        (json!({"label": "node1", "address": format!("{private}:80"), "mode": "maybe"}), "mode"),
    ];
    for (body, field) in cases {
        api.post(&path, body).await.expect_error(400, field);
    }
    assert_eq!(count(&s, "nodebalancer_nodes").await, 0);
    let n = api.post(&path, node("web.1", &format!("{private}:80"))).await.ok().clone();
    assert_eq!(n["address"], format!("{private}:80"));
    assert_eq!(
        (n["weight"].as_i64(), n["mode"].as_str(), n["status"].as_str()),
        (Some(100), Some("accept"), Some("unknown"))
    );
    assert_eq!((n["config_id"].as_i64(), n["nodebalancer_id"].as_i64()), (Some(cid), Some(nb)));
    // Labels are unique per config; the walkthrough's form creates nodes too.
    api.post(&path, node("web.1", &format!("{private}:81"))).await.expect_error(400, "label");
    let w = api.post(&format!("/nodebalancers/{nb}/configs/{cid}"), node("web.2", &format!("{private}:81"))).await;
    assert_eq!(w.ok()["label"], "web.2");
    assert_eq!(api.get(&path).await.ok()["results"], 2);
    // Update: same rules; a new address is checked again.
    let np = format!("{path}/{}", id(&n));
    api.put(&np, json!({"address": format!("{public}:80")})).await.expect_error(400, "address");
    api.put(&np, json!({"label": "web.2"})).await.expect_error(400, "label");
    let u = api.put(&np, json!({"weight": 255, "mode": "drain"})).await.ok().clone();
    assert_eq!(
        (u["weight"].as_i64(), u["mode"].as_str(), u["label"].as_str()),
        (Some(255), Some("drain"), Some("web.1"))
    );
    api.delete(&np).await.ok();
    api.get(&np).await.status_is(404);
    let actions = event_actions(&api).await;
    for a in ["nodebalancer_node_create", "nodebalancer_node_update", "nodebalancer_node_delete"] {
        assert!(actions.contains(&a.to_string()), "{a}");
    }
}

#[tokio::test]
async fn create_with_configs_and_nodes_is_all_or_nothing() {
    let s = lb_server().await;
    let api = s.api();
    let (_, private) = backend_instance(&api, "us-east").await;
    let good = json!({"label": "node-a", "address": format!("{private}:80")});
    let r = api
        .post(
            "/nodebalancers",
            json!({"region": "us-east", "configs": [
                {"port": 80, "nodes": [good.clone()]},
                {"port": 80, "nodes": []},
                {"port": 443}
            ]}),
        )
        .await;
    assert_eq!(r.fields(), ["configs[1].port", "configs[1].nodes", "configs[2].nodes"], "{}", r.text);
    // A node whose address is no instance's: the whole create is refused.
    api.post(
        "/nodebalancers",
        json!({"region": "us-east", "configs": [
            {"port": 80, "nodes": [good.clone()]},
            {"port": 81, "nodes": [good.clone(), {"label": "node-b", "address": "192.168.250.1:80"}]}
        ]}),
    )
    .await
    .expect_error(400, "configs[1].nodes[1].address");
    assert_eq!(count(&s, "nodebalancers").await, 0);
    assert_eq!(count(&s, "nodebalancer_configs").await, 0);
    let nb = api
        .post(
            "/nodebalancers",
            json!({"region": "us-east", "configs": [
                {"port": 80, "nodes": [good.clone()]},
                {"port": 8080, "protocol": "tcp", "nodes": [{"label": "node-x", "address": format!("{private}:8080"), "weight": 50}]}
            ]}),
        )
        .await
        .ok()
        .clone();
    let configs = api.get(&format!("/nodebalancers/{}/configs", id(&nb))).await.ok().clone();
    assert_eq!(configs["results"], 2);
    let c = configs["data"][1].clone();
    assert_eq!(c["protocol"], "tcp");
    let nodes = api.get(&format!("/nodebalancers/{}/configs/{}/nodes", id(&nb), id(&c))).await.ok().clone();
    assert_eq!(nodes["data"][0]["weight"], 50);
}

#[tokio::test]
async fn rebuild_replaces_the_config_and_its_nodes() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let cid = id(&api.post(&format!("/nodebalancers/{nb}/configs"), json!({"port": 80})).await.ok().clone());
    let nodes = format!("/nodebalancers/{nb}/configs/{cid}/nodes");
    let keep = id(&api.post(&nodes, json!({"label": "keep", "address": format!("{p}:80")})).await.ok().clone());
    let gone = id(&api.post(&nodes, json!({"label": "gone", "address": format!("{p}:81")})).await.ok().clone());
    let rebuild = format!("/nodebalancers/{nb}/configs/{cid}/rebuild");
    // Refusals change nothing.
    api.post(&rebuild, json!({"port": 90})).await.expect_error(400, "nodes");
    api.post(&rebuild, json!({"nodes": [{"id": 999999, "label": "nothing"}]})).await.expect_error(400, "nodes[0].id");
    api.post(&rebuild, json!({"port": 90, "nodes": [{"label": "new", "address": "192.168.250.9:80"}]}))
        .await
        .expect_error(400, "nodes[0].address");
    api.post(
        &rebuild,
        json!({"nodes": [{"id": keep, "label": "dup"}, {"label": "dup", "address": format!("{p}:82")}]}),
    )
    .await
    .expect_error(400, "nodes[1].label");
    assert_eq!(api.get(&format!("/nodebalancers/{nb}/configs/{cid}")).await.ok()["port"], 80);
    assert_eq!(api.get(&nodes).await.ok()["results"], 2);
    // The real thing: port and algorithm change, "keep" is updated, "gone" deleted, "new" created.
    let c = api
        .post(
            &rebuild,
            json!({"port": 90, "algorithm": "leastconn", "nodes": [
                {"id": keep, "label": "kept", "weight": 7},
                {"label": "new", "address": format!("{p}:83"), "mode": "backup"}
            ]}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(
        (c["port"].as_i64(), c["algorithm"].as_str(), c["id"].as_i64()),
        (Some(90), Some("leastconn"), Some(cid))
    );
    let now = api.get(&nodes).await.ok()["data"].clone();
    let now = now.as_array().unwrap();
    assert_eq!(now.len(), 2);
    assert_eq!(
        (now[0]["id"].as_i64(), now[0]["label"].as_str(), now[0]["weight"].as_i64()),
        (Some(keep), Some("kept"), Some(7))
    );
    assert_eq!((now[1]["label"].as_str(), now[1]["mode"].as_str()), (Some("new"), Some("backup")));
    assert!(now.iter().all(|n| n["id"] != gone));
}

/// How many events of `action` the account has.
async fn events_of(api: &Api, action: &str) -> i64 {
    let r = api.get_filtered("/account/events", &json!({"action": action}).to_string()).await;
    r.ok()["results"].as_i64().unwrap()
}

/// Every node of a config, by id, read page by page.
async fn all_nodes(api: &Api, path: &str) -> std::collections::BTreeMap<i64, Value> {
    let mut out = std::collections::BTreeMap::new();
    for page in 1.. {
        let r = api.get(&format!("{path}?page={page}&page_size=500")).await.ok().clone();
        for n in r["data"].as_array().unwrap() {
            out.insert(id(n), n.clone());
        }
        if page >= r["pages"].as_i64().unwrap() {
            break;
        }
    }
    out
}

/// Many nodes in one request are written a few statements at a time (500 nodes each): every
/// node and event is there, in its place, and a refusal anywhere in the list changes nothing.
#[tokio::test]
async fn a_balancer_a_rebuild_and_an_instance_delete_write_many_nodes_at_once() {
    let s = lb_server().await;
    let api = s.api();
    let (iid, p) = backend_instance(&api, "us-east").await;
    let node = |label: String, port: usize| json!({"label": label, "address": format!("{p}:{port}")});
    let first: Vec<Value> = (0..600).map(|i| node(format!("first-{i}"), 1000 + i)).collect();
    let nb = new_balancer(&api, json!({"region": "us-east", "configs": [{"port": 80, "nodes": first}]})).await;
    let nb = id(&nb);
    let cid = id(&api.get(&format!("/nodebalancers/{nb}/configs")).await.ok()["data"][0]);
    let nodes = format!("/nodebalancers/{nb}/configs/{cid}/nodes");
    let before = all_nodes(&api, &nodes).await;
    assert_eq!(before.len(), 600);
    let labels: std::collections::BTreeSet<String> =
        before.values().map(|n| n["label"].as_str().unwrap().to_string()).collect();
    assert_eq!(labels, (0..600).map(|i| format!("first-{i}")).collect());
    assert!(
        before
            .values()
            .all(|n| n["address"]
                == format!("{p}:{}", 1000 + n["label"].as_str().unwrap()[6..].parse::<usize>().unwrap()))
    );
    assert_eq!(events_of(&api, "nodebalancer_node_create").await, 600);

    // The first 300 are kept (every other one renamed and moved to a new port), the last 300
    // deleted, and 700 created.
    let ids: Vec<i64> = before.keys().copied().collect();
    let mut list: Vec<Value> = ids[..300]
        .iter()
        .enumerate()
        .map(|(k, nid)| match k % 2 {
            0 => json!({"id": nid, "label": format!("moved-{k}"), "address": format!("{p}:{}", 5000 + k)}),
            _ => json!({"id": nid}),
        })
        .collect();
    list.extend((0..700).map(|i| node(format!("new-{i}"), 3000 + i)));
    let rebuild = format!("/nodebalancers/{nb}/configs/{cid}/rebuild");
    // One foreign address far down the list refuses the whole rebuild, named by its place.
    let mut bad = list.clone();
    bad[950] = json!({"label": "outside", "address": "192.168.250.9:80"});
    api.post(&rebuild, json!({"nodes": bad})).await.expect_error(400, "nodes[950].address");
    assert_eq!(all_nodes(&api, &nodes).await, before);
    assert_eq!(events_of(&api, "nodebalancer_node_create").await, 600);
    assert_eq!(events_of(&api, "nodebalancer_node_delete").await, 0);

    api.post(&rebuild, json!({"nodes": list})).await.ok();
    let after = all_nodes(&api, &nodes).await;
    assert_eq!(after.len(), 1000);
    for (k, nid) in ids.iter().enumerate() {
        match (k, after.get(nid)) {
            (0..300, Some(n)) if k % 2 == 0 => {
                assert_eq!(
                    (n["label"].as_str(), n["address"].as_str()),
                    (Some(&*format!("moved-{k}")), Some(&*format!("{p}:{}", 5000 + k)))
                )
            }
            (0..300, Some(n)) => assert_eq!(n, &before[nid]),
            (300.., None) => {}
            (_, n) => panic!("node {nid} (#{k}) after the rebuild: {n:?}"),
        }
    }
    let created: std::collections::BTreeSet<String> = after
        .values()
        .filter_map(|n| n["label"].as_str().filter(|l| l.starts_with("new-")).map(str::to_string))
        .collect();
    assert_eq!(created, (0..700).map(|i| format!("new-{i}")).collect());
    assert!(
        after
            .values()
            .filter(|n| n["label"].as_str().unwrap().starts_with("new-"))
            .all(|n| n["address"]
                == format!("{p}:{}", 3000 + n["label"].as_str().unwrap()[4..].parse::<usize>().unwrap()))
    );
    assert_eq!(events_of(&api, "nodebalancer_node_create").await, 1300);
    // Each create event names its node: the id and label of the node as it was created.
    let filter = json!({"action": "nodebalancer_node_create"}).to_string();
    let mut named = 0;
    let mut new_in_order: Vec<(i64, String)> = Vec::new();
    for page in 1..=3 {
        let r = api.get_filtered(&format!("/account/events?page={page}&page_size=500"), &filter).await;
        for e in r.ok()["data"].as_array().unwrap() {
            let nid: i64 = e["secondary_entity"]["id"].as_str().unwrap().parse().unwrap();
            let label = e["secondary_entity"]["label"].as_str().unwrap();
            let now = after.get(&nid).or_else(|| before.get(&nid)).map(|n| n["label"].as_str().unwrap());
            if label.starts_with("new-") || label.starts_with("first-") && now.is_some_and(|l| l.starts_with("first-"))
            {
                assert_eq!(now, Some(label), "event of node {nid}");
                named += 1;
            }
            if label.starts_with("new-") {
                new_in_order.push((id(e), label.to_string()));
            }
        }
    }
    assert_eq!(named, 700 + 300 + 150);
    // The events follow the order of the nodes in the request.
    new_in_order.sort();
    let order: Vec<String> = new_in_order.into_iter().map(|(_, l)| l).collect();
    assert_eq!(order, (0..700).map(|i| format!("new-{i}")).collect::<Vec<_>>());
    assert_eq!(events_of(&api, "nodebalancer_node_delete").await, 300);
    assert_eq!(events_of(&api, "nodebalancer_node_update").await, 150);

    // The instance's delete removes its 1,000 nodes.
    api.delete(&format!("/linode/instances/{iid}")).await.ok();
    assert_eq!(api.get(&nodes).await.ok()["results"], 0);
}

#[tokio::test]
async fn an_instance_that_is_a_back_end_lists_its_balancers_and_its_delete_removes_its_nodes() {
    let s = lb_server().await;
    let api = s.api();
    let (iid, p) = backend_instance(&api, "us-east").await;
    let nb = new_balancer(&api, json!({"region": "us-east", "label": "uses-instance"})).await;
    new_balancer(&api, json!({"region": "us-east", "label": "unrelated"})).await;
    let cid = id(&api.post(&format!("/nodebalancers/{}/configs", id(&nb)), json!({})).await.ok().clone());
    let n = api
        .post(
            &format!("/nodebalancers/{}/configs/{cid}/nodes", id(&nb)),
            json!({"label": "node1", "address": format!("{p}:80")}),
        )
        .await
        .ok()
        .clone();
    let list = api.get(&format!("/compute/instances/{iid}/nodebalancers")).await.ok().clone();
    assert_eq!(list["results"], 1);
    assert_eq!(list["data"][0]["label"], "uses-instance");
    // A balancer with two nodes on the instance is listed once; the list filters and orders.
    let twice = new_balancer(&api, json!({"region": "us-east", "label": "twice"})).await;
    let tc = id(&api.post(&format!("/nodebalancers/{}/configs", id(&twice)), json!({})).await.ok().clone());
    for (label, port) in [("node-a", 80), ("node-b", 81)] {
        let node = json!({"label": label, "address": format!("{p}:{port}")});
        api.post(&format!("/nodebalancers/{}/configs/{tc}/nodes", id(&twice)), node).await.ok();
    }
    let path = format!("/compute/instances/{iid}/nodebalancers");
    let both = api.get_filtered(&path, r#"{"+order_by": "label", "+order": "desc"}"#).await.ok().clone();
    assert_eq!(both["results"], 2);
    let labels: Vec<&str> = both["data"].as_array().unwrap().iter().map(|b| b["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["uses-instance", "twice"]);
    let one = api.get_filtered(&path, r#"{"label": "twice"}"#).await.ok().clone();
    assert_eq!((one["results"].as_i64(), one["data"][0]["id"].as_i64()), (Some(1), Some(id(&twice))));
    let refused = api.get_filtered(&path, r#"{"client_conn_throttle": 0}"#).await;
    refused.status_is(400);
    assert_eq!(refused.body["errors"][0]["field"], "X-Filter");
    api.delete(&format!("/nodebalancers/{}", id(&twice))).await.ok();
    // As the hosted API does, deleting the instance removes it and the nodes that point at it.
    api.delete(&format!("/compute/instances/{iid}")).await.ok();
    api.get(&format!("/compute/instances/{iid}")).await.status_is(404);
    api.get(&format!("/nodebalancers/{}/configs/{cid}/nodes/{}", id(&nb), id(&n))).await.status_is(404);
    assert_eq!(count(&s, "nodebalancer_nodes").await, 0);
    api.get(&format!("/nodebalancers/{}", id(&nb))).await.ok();
}

#[tokio::test]
async fn deleting_a_balancer_deletes_its_configs_and_nodes() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let nb = api
        .post("/nodebalancers", json!({"region": "us-east", "configs": [{"port": 80, "nodes": [{"label": "node1", "address": format!("{p}:80")}]}]}))
        .await
        .ok()
        .clone();
    assert_eq!(count(&s, "nodebalancer_nodes").await, 1);
    api.delete(&format!("/nodebalancers/{}", id(&nb))).await.ok();
    api.get(&format!("/nodebalancers/{}", id(&nb))).await.status_is(404);
    assert_eq!(count(&s, "nodebalancer_configs").await, 0);
    assert_eq!(count(&s, "nodebalancer_nodes").await, 0);
    assert!(event_actions(&api).await.contains(&"nodebalancer_delete".to_string()));
    // Its address can be handed out again.
    let again = new_balancer(&api, json!({"region": "us-east"})).await;
    assert_eq!(again["ipv4"], nb["ipv4"]);
}

#[tokio::test]
async fn lists_page_and_filter() {
    let s = lb_server().await;
    let api = s.api();
    for i in 0..30 {
        new_balancer(
            &api,
            json!({"region": if i % 3 == 0 { "us-west" } else { "us-east" }, "label": format!("lb-{i:02}")}),
        )
        .await;
    }
    let p = api.get("/nodebalancers?page=2&page_size=25").await.ok().clone();
    assert_eq!((p["page"].as_i64(), p["pages"].as_i64(), p["results"].as_i64()), (Some(2), Some(2), Some(30)));
    assert_eq!(p["data"].as_array().unwrap().len(), 5);
    let f = api.get_filtered("/nodebalancers", r#"{"region": "us-west"}"#).await.ok().clone();
    assert_eq!(f["results"], 10);
    let f = api.get_filtered("/nodebalancers", r#"{"label": "lb-07"}"#).await.ok().clone();
    assert_eq!(f["results"], 1);
    api.get_filtered("/nodebalancers", r#"{"hostname": "x"}"#).await.expect_error(400, "X-Filter");
    let stats = api.get(&format!("/nodebalancers/{}/stats", id(&f["data"][0]))).await.ok().clone();
    assert_eq!(stats["title"], format!("lb-07 ({}) - day (5 min avg)", id(&f["data"][0])));
    assert_eq!(stats["data"]["traffic"]["in"].as_array().unwrap().len(), 288);
    let fw = api.get(&format!("/nodebalancers/{}/firewalls", id(&f["data"][0]))).await.ok().clone();
    assert_eq!(fw["results"], 0);
}

#[tokio::test]
async fn restricted_users_see_only_granted_balancers() {
    let s = lb_server().await;
    let api = s.api();
    let nb = new_balancer(&api, json!({"region": "us-east"})).await;
    let nbid = id(&nb);
    let cid = id(&api.post(&format!("/nodebalancers/{nbid}/configs"), json!({})).await.ok().clone());
    let (_, r) = user_with_token(&s, "lb-restricted", true, "*").await;
    // No grants: invisible, and no create.
    assert_eq!(r.get("/nodebalancers").await.ok()["results"], 0);
    r.get(&format!("/nodebalancers/{nbid}")).await.status_is(404);
    r.get(&format!("/nodebalancers/{nbid}/configs/{cid}")).await.status_is(404);
    r.post("/nodebalancers", json!({"region": "us-east"})).await.status_is(403);
    // read_only: reads yes, writes 403.
    api.put(
        "/account/users/lb-restricted/grants",
        json!({"global": {"add_nodebalancers": true}, "nodebalancer": [{"id": nbid, "permissions": "read_only"}]}),
    )
    .await
    .ok();
    assert_eq!(r.get("/nodebalancers").await.ok()["results"], 1);
    let g = api.get("/account/users/lb-restricted/grants").await.ok().clone();
    let entry = g["nodebalancer"].as_array().unwrap().iter().find(|e| e["id"] == nbid).cloned().unwrap();
    assert_eq!((entry["permissions"].as_str(), entry["label"].as_str()), (Some("read_only"), nb["label"].as_str()));
    r.get(&format!("/nodebalancers/{nbid}/configs/{cid}")).await.ok();
    r.put(&format!("/nodebalancers/{nbid}"), json!({"label": "mine"})).await.status_is(403);
    r.post(&format!("/nodebalancers/{nbid}/configs"), json!({"port": 81})).await.status_is(403);
    // With add_nodebalancers the creator gets read_write on what it creates.
    let own = r.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    r.put(&format!("/nodebalancers/{}", id(&own)), json!({"label": "mine"})).await.ok();
    r.delete(&format!("/nodebalancers/{}", id(&own))).await.ok();
    // Scopes: nodebalancers:read_only reads but does not write.
    let t = api.post("/profile/tokens", json!({"scopes": "nodebalancers:read_only"})).await.ok()["token"].clone();
    let ro = s.api_with(t.as_str().unwrap());
    ro.get(&format!("/nodebalancers/{nbid}")).await.ok();
    ro.get(&format!("/nodebalancers/{nbid}/configs/{cid}/nodes")).await.ok();
    ro.put(&format!("/nodebalancers/{nbid}"), json!({})).await.status_is(403);
}
