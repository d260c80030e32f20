//! UDP load balancing (hosted API): `client_udp_sess_throttle`, `udp` configs and their rules,
//! real datagrams through a balancer on loopback; a balancer's VPC configurations (none) and
//! `PUT /v4/nodebalancers/{id}/firewalls`.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, UdpSocket};

use crate::firewalls::create_firewall;
use crate::lb_support::*;
use crate::support::*;

async fn balancer(api: &Api, extra: Value) -> Value {
    let mut body = json!({"region": "us-east"});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    api.post("/nodebalancers", body).await.ok().clone()
}

#[tokio::test]
async fn the_udp_session_throttle_is_stored_returned_and_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/nodebalancers", json!({"region": "us-east", "client_udp_sess_throttle": 21}))
        .await
        .expect_error(400, "client_udp_sess_throttle");
    api.post("/nodebalancers", json!({"region": "us-east", "client_udp_sess_throttle": -1}))
        .await
        .expect_error(400, "client_udp_sess_throttle");
    let nb = balancer(&api, json!({"client_udp_sess_throttle": 5})).await;
    assert_eq!(nb["client_udp_sess_throttle"], 5);
    let id = nb["id"].as_i64().unwrap();
    assert_eq!(balancer(&api, json!({})).await["client_udp_sess_throttle"], 0, "default 0");
    let r = api.put(&format!("/nodebalancers/{id}"), json!({"client_udp_sess_throttle": 20})).await;
    assert_eq!(r.ok()["client_udp_sess_throttle"], 20);
    assert_eq!(r.ok()["client_conn_throttle"], 0, "the TCP throttle is its own field");
    api.put(&format!("/nodebalancers/{id}"), json!({"client_udp_sess_throttle": 30}))
        .await
        .expect_error(400, "client_udp_sess_throttle");
    assert_eq!(api.get(&format!("/nodebalancers/{id}")).await.ok()["client_udp_sess_throttle"], 20);
}

#[tokio::test]
async fn vpcs_on_create_are_refused_and_a_balancer_has_no_vpc_configurations() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/nodebalancers", json!({"region": "us-east", "vpcs": [{"subnet_id": 1}]})).await;
    r.expect_error(400, "vpcs");
    assert_eq!(api.get("/nodebalancers").await.ok()["results"], 0, "nothing was created");
    let id = balancer(&api, json!({})).await["id"].as_i64().unwrap();
    let list = api.get(&format!("/nodebalancers/{id}/vpcs")).await;
    assert_eq!(list.ok()["results"], 0);
    assert_eq!(list.ok()["data"], json!([]));
    api.get(&format!("/nodebalancers/{id}/vpcs/1")).await.status_is(404);
    api.get("/nodebalancers/999999/vpcs").await.status_is(404);
}

#[tokio::test]
async fn udp_configs_take_the_hosted_defaults_and_rules() {
    let s = TestServer::start().await;
    let api = s.api();
    let id = balancer(&api, json!({})).await["id"].as_i64().unwrap();
    let configs = format!("/nodebalancers/{id}/configs");
    let c = api.post(&configs, json!({"port": 53, "protocol": "udp"})).await.ok().clone();
    assert_eq!(c["protocol"], "udp");
    assert_eq!(c["algorithm"], "roundrobin");
    assert_eq!(c["stickiness"], "session", "udp's default stickiness");
    assert_eq!(c["check_passive"], false, "must be false for udp");
    assert_eq!(c["cipher_suite"], "none", "not applicable to udp");
    assert_eq!(c["proxy_protocol"], "none");
    assert_eq!((c["udp_check_port"].clone(), c["udp_session_timeout"].clone()), (json!(80), json!(16)));
    // A tcp config has the fields too (the check port is used only by udp configs).
    let t = api.post(&configs, json!({"port": 54, "protocol": "tcp", "udp_check_port": 8080})).await.ok().clone();
    assert_eq!((t["udp_check_port"].clone(), t["cipher_suite"].clone()), (json!(8080), json!("recommended")));
    let udp = |extra: Value| {
        let mut b = json!({"port": 60, "protocol": "udp"});
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    for (body, field) in [
        (udp(json!({"algorithm": "source"})), "algorithm"),
        (udp(json!({"stickiness": "table"})), "stickiness"),
        (udp(json!({"stickiness": "http_cookie"})), "stickiness"),
        (udp(json!({"check_passive": true})), "check_passive"),
        (udp(json!({"cipher_suite": "legacy"})), "cipher_suite"),
        (udp(json!({"proxy_protocol": "v2"})), "proxy_protocol"),
        (udp(json!({"udp_check_port": 0})), "udp_check_port"),
        (udp(json!({"udp_check_port": 65536})), "udp_check_port"),
        (udp(json!({"ssl_cert": "-----BEGIN CERTIFICATE-----"})), "ssl_cert"),
        (json!({"port": 61, "protocol": "tcp", "algorithm": "ring_hash"}), "algorithm"),
        (json!({"port": 61, "protocol": "tcp", "stickiness": "session"}), "stickiness"),
        (json!({"port": 61, "protocol": "http", "stickiness": "source_ip"}), "stickiness"),
        (json!({"port": 61, "protocol": "tcp", "cipher_suite": "none"}), "cipher_suite"),
        (json!({"port": 61, "protocol": "sctp"}), "protocol"),
        (json!({"port": 53, "protocol": "tcp"}), "port"),
    ] {
        api.post(&configs, body.clone()).await.expect_error(400, field);
    }
    assert_eq!(api.get(&configs).await.ok()["results"], 2, "nothing refused was created");
    let ok = api
        .post(
            &configs,
            udp(json!({"algorithm": "ring_hash", "stickiness": "source_ip", "check": "http_body",
            "check_path": "/up", "check_body": "ok", "udp_check_port": 8081, "udp_session_timeout": 99,
            "cipher_suite": "none", "check_passive": false})),
        )
        .await;
    let c2 = ok.ok();
    assert_eq!((c2["algorithm"].clone(), c2["stickiness"].clone()), (json!("ring_hash"), json!("source_ip")));
    assert_eq!(c2["udp_check_port"], 8081);
    assert_eq!(c2["udp_session_timeout"], 16, "read-only: the request's value is ignored");
    // Changing the protocol: values the request leaves out take the new protocol's defaults.
    let tcp = format!("{configs}/{}", t["id"]);
    let moved = api.put(&tcp, json!({"protocol": "udp"})).await.ok().clone();
    assert_eq!((moved["stickiness"].clone(), moved["cipher_suite"].clone()), (json!("session"), json!("none")));
    assert_eq!(moved["check_passive"], false);
    let back = api.put(&tcp, json!({"protocol": "tcp"})).await.ok().clone();
    assert_eq!((back["stickiness"].clone(), back["cipher_suite"].clone()), (json!("none"), json!("recommended")));
    assert_eq!(back["check_passive"], true);
    // ... but a value the request names must fit.
    api.put(&tcp, json!({"protocol": "udp", "stickiness": "table"})).await.expect_error(400, "stickiness");
    let cur = format!("{configs}/{}", c2["id"]);
    api.put(&cur, json!({"protocol": "tcp"})).await.ok();
    assert_eq!(api.get(&cur).await.ok()["algorithm"], "roundrobin", "ring_hash left with udp");
}

#[tokio::test]
async fn a_balancers_firewalls_are_replaced_at_once() {
    let s = TestServer::start().await;
    let api = s.api();
    let id = balancer(&api, json!({})).await["id"].as_i64().unwrap();
    let f1 = create_firewall(&api, "fw-one", json!({})).await["id"].as_i64().unwrap();
    let f2 = create_firewall(&api, "fw-two", json!({})).await["id"].as_i64().unwrap();
    let path = format!("/nodebalancers/{id}/firewalls");
    let ids = |v: &Value| v["data"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect::<Vec<_>>();
    let r = api.put(&path, json!({"firewall_ids": [f1]})).await;
    assert_eq!(ids(r.ok()), [f1]);
    assert_eq!(ids(api.get(&path).await.ok()), [f1]);
    // Two enabled firewalls on one service: refused, nothing changes.
    api.put(&path, json!({"firewall_ids": [f1, f2]})).await.expect_error(400, "firewall_ids[1]");
    assert_eq!(ids(api.get(&path).await.ok()), [f1]);
    api.put(&path, json!({"firewall_ids": [f2, f2]})).await.expect_error(400, "firewall_ids[1]");
    api.put(&path, json!({"firewall_ids": [999999]})).await.expect_error(400, "firewall_ids[0]");
    api.put(&path, json!({})).await.expect_error(400, "firewall_ids");
    let r = api.put(&path, json!({"firewall_ids": [f2]})).await;
    assert_eq!(ids(r.ok()), [f2]);
    assert!(api.get(&format!("/networking/firewalls/{f1}/devices")).await.ok()["results"] == 0);
    // A firewall has at most one load balancer.
    let other = balancer(&api, json!({})).await["id"].as_i64().unwrap();
    api.put(&format!("/nodebalancers/{other}/firewalls"), json!({"firewall_ids": [f2]}))
        .await
        .expect_error(400, "firewall_ids[0]");
    let r = api.put(&path, json!({"firewall_ids": []})).await;
    assert_eq!(r.ok()["results"], 0);
    api.put("/nodebalancers/999999/firewalls", json!({"firewall_ids": []})).await.status_is(404);
}

/// A UDP echo "inside the instance" answering `<name>:<datagram>`; returns its port.
async fn udp_echo(private: &str, name: &'static str) -> u16 {
    let s = UdpSocket::bind(mapped(private, 0)).await.unwrap();
    let port = s.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = s.recv_from(&mut buf).await {
            let mut out = format!("{name}:").into_bytes();
            out.extend_from_slice(&buf[..n]);
            let _ = s.send_to(&out, from).await;
        }
    });
    port
}

async fn ask(c: &UdpSocket, to: SocketAddr, msg: &str) -> Option<String> {
    c.send_to(msg.as_bytes(), to).await.unwrap();
    let mut buf = [0u8; 2048];
    match tokio::time::timeout(Duration::from_millis(500), c.recv_from(&mut buf)).await {
        Ok(Ok((n, from))) if from == to => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
        _ => None,
    }
}

async fn client() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datagrams_are_balanced_per_session_through_a_udp_balancer() {
    if netns() {
        return; // the UDP back ends here live on this host's loopback
    }
    let s = lb_server().await;
    let api = s.api();
    let (_, p1) = backend_instance(&api, "us-east").await;
    let (_, p2) = backend_instance(&api, "us-east").await;
    let (port1, port2) = (udp_echo(&p1, "a").await, udp_echo(&p2, "b").await);
    // The check port: a TCP listener at node a's address only.
    let check = TcpListener::bind(mapped(&p1, 0)).await.unwrap();
    let check_port = check.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((c, _)) = check.accept().await {
            drop(c);
        }
    });
    let nodes = json!([{"label": "node-a", "address": format!("{p1}:{port1}")}, {"label": "node-b", "address": format!("{p2}:{port2}")}]);
    let nb = balancer(&api, json!({"configs": [{"port": 5353, "protocol": "udp", "nodes": nodes}]})).await;
    let id = nb["id"].as_i64().unwrap();
    let to = lb_addr(&nb, 5353);
    let (c1, c2) = (client().await, client().await);
    let r1 = eventually(30, "a udp reply", || async { ask(&c1, to, "hi").await }).await;
    let r2 = eventually(30, "a udp reply", || async { ask(&c2, to, "hi").await }).await;
    assert_ne!(r1[..1], r2[..1], "round robin: two sessions, two nodes ({r1}, {r2})");
    for i in 0..4 {
        assert_eq!(ask(&c1, to, &format!("m{i}")).await.unwrap(), format!("{}:m{i}", &r1[..1]), "sticks");
    }
    // Traffic is counted like TCP's.
    eventually(30, "transfer counted", || {
        let api = api.clone();
        async move { (api.get(&format!("/nodebalancers/{id}")).await.body["transfer"]["in"].as_f64()? > 0.0).then_some(()) }
    })
    .await;
    // The session expires after 16 idle seconds; then the next datagram is a new session.
    // (c2 first: the rotation gives it c1's old node, and c1 the other one.)
    tokio::time::sleep(Duration::from_secs(17)).await;
    assert_eq!(ask(&c2, to, "late").await.unwrap()[..1], r1[..1]);
    let again = ask(&c1, to, "late").await.unwrap();
    assert_ne!(again[..1], r1[..1], "a new session takes the next node of the rotation ({r1}, {again})");
    // A check on the udp_check_port: node b has nothing there, goes DOWN and takes no session.
    let cfg = api.get(&format!("/nodebalancers/{id}/configs")).await.ok()["data"][0]["id"].as_i64().unwrap();
    let r = api
        .put(
            &format!("/nodebalancers/{id}/configs/{cfg}"),
            json!({"check": "connection", "udp_check_port": check_port, "check_interval": 2, "check_timeout": 1, "check_attempts": 1}),
        )
        .await;
    r.ok();
    until_nodes_status(&api, id, cfg, 1, 1).await;
    for i in 0..4 {
        let c = client().await;
        let r = eventually(30, "a udp reply", || async { ask(&c, to, &format!("n{i}")).await }).await;
        assert_eq!(r, format!("a:n{i}"), "only the up node takes new sessions");
    }
    // The session throttle drops new sessions above the limit (1 per second per client IP):
    // four new sessions in well under two seconds, at most two admitted.
    api.put(&format!("/nodebalancers/{id}"), json!({"client_udp_sess_throttle": 1})).await.ok();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let clients = [client().await, client().await, client().await, client().await];
    for c in &clients {
        c.send_to(b"t", to).await.unwrap();
    }
    let mut answered = 0;
    for c in &clients {
        let mut buf = [0u8; 64];
        if tokio::time::timeout(Duration::from_millis(300), c.recv_from(&mut buf)).await.is_ok() {
            answered += 1;
        }
    }
    assert!((1..=2).contains(&answered), "{answered} of 4 new sessions answered");
}
