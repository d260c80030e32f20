//! The load-balancer walkthrough (spec section 1, steps 1 to 8) literally over HTTP, with real
//! back ends on the instances' mapped addresses and real traffic through the balancer; and a
//! restart of `nubis serve` after which every balancer listens again.

use serde_json::json;

use crate::lb_support::*;
use crate::support::*;

#[tokio::test]
async fn walkthrough_steps_1_to_8_balance_real_traffic_and_serve_https() {
    let s = lb_server().await;
    let api = s.api();
    // Step 1: the balancer.
    let nb = api
        .post("/nodebalancers", json!({"region": "us-east", "label": "walkthrough-lb", "client_conn_throttle": 0}))
        .await
        .ok()
        .clone();
    let nb_id = nb["id"].as_i64().unwrap();
    assert_eq!(nb["label"], "walkthrough-lb");
    // Step 2: a config on port 80 with a connection check (short interval, allowed by the API).
    let cfg = api
        .post(
            &format!("/nodebalancers/{nb_id}/configs"),
            json!({"label": "web", "port": 80, "check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 1}),
        )
        .await
        .ok()
        .clone();
    let cfg_id = cfg["id"].as_i64().unwrap();
    assert_eq!((cfg["port"].as_i64(), cfg["check"].as_str()), (Some(80), Some("connection")));
    assert_eq!(cfg["nodes_status"], json!({"up": 0, "down": 0}));
    // Steps 3 to 5: two instances created powered off, each given a private address, booted.
    let (_, priv_a) = backend_instance(&api, "us-east").await;
    let (_, priv_b) = backend_instance(&api, "us-east").await;
    // Step 6: both as nodes, with the walkthrough's form.
    for (label, addr) in [("node-a", &priv_a), ("node-b", &priv_b)] {
        let n = api
            .post(
                &format!("/nodebalancers/{nb_id}/configs/{cfg_id}"),
                json!({"label": label, "address": format!("{addr}:8080")}),
            )
            .await
            .ok()
            .clone();
        assert_eq!(n["label"], label);
        assert_eq!(n["address"], format!("{addr}:8080"));
        assert_eq!(n["config_id"], cfg_id);
    }
    // Two real HTTP servers inside "the instances".
    let a = Backend::http("backend-a", mapped(&priv_a, 8080)).await;
    let mut b = Backend::http("backend-b", mapped(&priv_b, 8080)).await;
    // Step 7: nodes_status tells the truth.
    until_nodes_status(&api, nb_id, cfg_id, 2, 0).await;
    let nodes = api.get(&format!("/nodebalancers/{nb_id}/configs/{cfg_id}/nodes")).await;
    assert!(nodes.ok()["data"].as_array().unwrap().iter().all(|n| n["status"] == "UP"), "{}", nodes.text);
    let lb = lb_addr(&nb, 80);
    until_serving(lb).await;
    let got = spread(lb, 20).await;
    assert_eq!(got.get("backend-a").copied().unwrap_or(0) + got.get("backend-b").copied().unwrap_or(0), 20);
    assert!(got.get("backend-a").copied().unwrap_or(0) >= 5, "{got:?}");
    assert!(got.get("backend-b").copied().unwrap_or(0) >= 5, "{got:?}");
    assert!(a.count() >= 5 && b.count() >= 5);
    let xff = a.last_headers.lock().unwrap().get("x-forwarded-for").cloned();
    assert_eq!(xff.as_deref(), Some("127.0.0.1"), "X-Forwarded-For reaches the back end");
    // One back end goes away: up 1, down 1, and all traffic on the other.
    b.stop().await;
    until_nodes_status(&api, nb_id, cfg_id, 1, 1).await;
    let before_b = b.count();
    let got = spread(lb, 10).await;
    assert_eq!(got.get("backend-a").copied(), Some(10), "{got:?}");
    assert_eq!(b.count(), before_b);
    // Step 8: HTTPS on 443 with an uploaded certificate and key.
    let name = "walkthrough.nubis.test";
    let (cert, key) = certificate(&[name], false);
    let r = api
        .put(
            &format!("/nodebalancers/{nb_id}/configs/{cfg_id}"),
            json!({"protocol": "https", "port": 443, "ssl_cert": cert, "ssl_key": key}),
        )
        .await;
    let body = r.ok().clone();
    assert_eq!((body["protocol"].as_str(), body["port"].as_i64()), (Some("https"), Some(443)));
    assert_eq!(body["ssl_cert"], "<REDACTED>");
    assert_eq!(body["ssl_key"], "<REDACTED>");
    assert_eq!(body["ssl_commonname"], name);
    assert!(!r.text.contains("PRIVATE KEY"), "the key is never returned: {}", r.text);
    let tls_addr = lb_addr(&nb, 443);
    let reply = eventually(60, "HTTPS through the balancer", || {
        let cert = cert.clone();
        async move { get_tls(tls_addr, &cert, name, "/").await.ok().filter(|r| r.status == 200) }
    })
    .await;
    assert_eq!(reply.body, "backend-a");
    for _ in 0..5 {
        let r = get_tls(tls_addr, &cert, name, "/").await.unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "backend-a"));
    }
    assert_eq!(a.last_headers.lock().unwrap().get("x-forwarded-proto").map(String::as_str), Some("https"));
    // The listener moved: port 80 no longer answers.
    until_refused(lb).await;
    // A certificate with blank subject fields is refused, and nothing changes.
    let (blank, blank_key) = certificate(&[name], true);
    api.put(&format!("/nodebalancers/{nb_id}/configs/{cfg_id}"), json!({"ssl_cert": blank, "ssl_key": blank_key}))
        .await
        .expect_error(400, "ssl_cert");
    let after = api.get(&format!("/nodebalancers/{nb_id}/configs/{cfg_id}")).await;
    assert_eq!(after.ok()["ssl_commonname"], name);
    assert_eq!(get_tls(tls_addr, &cert, name, "/").await.unwrap().status, 200);
    assert!(!s.log().contains("PRIVATE KEY"), "the key never reaches the log");
}

#[tokio::test]
async fn after_a_restart_every_balancer_listens_again() {
    let mut s = lb_server().await;
    let api = s.api();
    let (_, private) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("be", mapped(&private, 9000)).await;
    let mut addrs = Vec::new();
    for port in [8081u16, 8082] {
        let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
        let id = nb["id"].as_i64().unwrap();
        let c = api
            .post(
                &format!("/nodebalancers/{id}/configs"),
                json!({"port": port, "nodes": null, "check": "connection", "check_interval": 2, "check_timeout": 1}),
            )
            .await
            .ok()
            .clone();
        api.post(
            &format!("/nodebalancers/{id}/configs/{}/nodes", c["id"]),
            json!({"label": "be-node", "address": format!("{private}:9000")}),
        )
        .await
        .ok();
        addrs.push(lb_addr(&nb, port));
    }
    for a in &addrs {
        until_serving(*a).await;
    }
    assert!(s.stop(), "nubis serve stops cleanly on SIGTERM");
    for a in &addrs {
        until_refused(*a).await;
    }
    s.restart();
    for a in &addrs {
        until_serving(*a).await;
        assert_eq!(get(*a, "/", None).await.unwrap().body, "be");
    }
}

#[tokio::test]
async fn a_change_made_through_another_replica_takes_effect() {
    // Replica A runs the data plane; replica B (same database) only serves the API.
    let a = lb_server().await;
    let config = std::fs::read_to_string(a.dir.join("config.toml")).unwrap();
    let b = TestServer::start_with(Options {
        config,
        database: Some(a.database.clone()),
        extra_args: vec!["--no-dataplane".into()],
        ..Default::default()
    })
    .await;
    let api_b = b.api_with(&a.token);
    let (_, private) = backend_instance(&api_b, "us-east").await;
    let _be = Backend::http("through-b", mapped(&private, 9100)).await;
    let nb = api_b.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    let id = nb["id"].as_i64().unwrap();
    let c = api_b
        .post(
            &format!("/nodebalancers/{id}/configs"),
            json!({"port": 9101, "check": "connection", "check_interval": 2, "check_timeout": 1}),
        )
        .await
        .ok()
        .clone();
    let cid = c["id"].as_i64().unwrap();
    api_b
        .post(
            &format!("/nodebalancers/{id}/configs/{cid}"),
            json!({"label": "node-b", "address": format!("{private}:9100")}),
        )
        .await
        .ok();
    // A's data plane picks the change up from the database and serves it...
    let addr = lb_addr(&nb, 9101);
    until_serving(addr).await;
    assert_eq!(get(addr, "/", None).await.unwrap().body, "through-b");
    // ...and the health it observes is visible through B.
    until_nodes_status(&api_b, id, cid, 1, 0).await;
    // A port change made through B moves A's listener.
    api_b.put(&format!("/nodebalancers/{id}/configs/{cid}"), json!({"port": 9102})).await.ok();
    until_serving(lb_addr(&nb, 9102)).await;
    until_refused(addr).await;
}
