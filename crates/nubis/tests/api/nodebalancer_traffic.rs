//! Load balancers with real traffic on loopback: tcp proxying, the algorithms, node modes, 503
//! without a node up, listeners that move and stop with their config or balancer, other
//! balancers untouched by a change to one, and traffic counters (`transfer`, stats).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::lb_support::*;
use crate::support::*;

/// A balancer in us-east with one config (extra fields merged) and nodes on `backends`
/// (label, private address, port, extra node fields). Returns (balancer, config id).
async fn balancer_with(api: &Api, config: Value, nodes: &[(&str, &str, u16, Value)]) -> (Value, i64) {
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    let id = nb["id"].as_i64().unwrap();
    let mut body = json!({"check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 1});
    for (k, v) in config.as_object().unwrap() {
        body[k] = v.clone();
    }
    let c = api.post(&format!("/nodebalancers/{id}/configs"), body).await.ok().clone();
    let cid = c["id"].as_i64().unwrap();
    for (label, addr, port, extra) in nodes {
        let mut n = json!({"label": format!("node-{label}"), "address": format!("{addr}:{port}")});
        for (k, v) in extra.as_object().unwrap() {
            n[k] = v.clone();
        }
        api.post(&format!("/nodebalancers/{id}/configs/{cid}/nodes"), n).await.ok();
    }
    (nb, cid)
}

fn nid(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

#[tokio::test]
async fn tcp_configs_proxy_bytes_both_ways() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _echo = Backend::echo("echo", mapped(&p, 7000)).await;
    let (nb, cid) =
        balancer_with(&api, json!({"port": 7001, "protocol": "tcp"}), &[("echo", &p, 7000, json!({}))]).await;
    until_nodes_status(&api, nid(&nb), cid, 1, 0).await;
    let addr = lb_addr(&nb, 7001);
    let mut conn =
        eventually(60, "the tcp listener", || async move { tokio::net::TcpStream::connect(addr).await.ok() }).await;
    let payload: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let (mut rd, mut wr) = conn.split();
    let send = async {
        wr.write_all(&payload).await.unwrap();
    };
    let recv = async {
        let mut got = vec![0u8; payload.len()];
        rd.read_exact(&mut got).await.unwrap();
        got
    };
    let ((), got) = tokio::join!(send, recv);
    assert_eq!(got, payload);
}

#[tokio::test]
async fn roundrobin_honours_weights() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p1) = backend_instance(&api, "us-east").await;
    let (_, p2) = backend_instance(&api, "us-east").await;
    let _a = Backend::http("heavy", mapped(&p1, 8000)).await;
    let _b = Backend::http("light", mapped(&p2, 8000)).await;
    let (nb, cid) = balancer_with(
        &api,
        json!({"port": 8000, "algorithm": "roundrobin"}),
        &[("heavy", &p1, 8000, json!({"weight": 30})), ("light", &p2, 8000, json!({"weight": 10}))],
    )
    .await;
    until_nodes_status(&api, nid(&nb), cid, 2, 0).await;
    let addr = lb_addr(&nb, 8000);
    until_serving(addr).await;
    let got = spread(addr, 40).await;
    let (h, l) = (got.get("heavy").copied().unwrap_or(0), got.get("light").copied().unwrap_or(0));
    assert_eq!(h + l, 40);
    assert!((26..=34).contains(&h) && (6..=14).contains(&l), "3:1 expected, got {got:?}");
}

#[tokio::test]
async fn leastconn_sends_new_requests_to_the_node_with_fewer_sessions() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p1) = backend_instance(&api, "us-east").await;
    let (_, p2) = backend_instance(&api, "us-east").await;
    let a = Backend::http("a", mapped(&p1, 8000)).await;
    let b = Backend::http("b", mapped(&p2, 8000)).await;
    let (nb, cid) = balancer_with(
        &api,
        json!({"port": 8000, "algorithm": "leastconn"}),
        &[("a", &p1, 8000, json!({})), ("b", &p2, 8000, json!({}))],
    )
    .await;
    until_nodes_status(&api, nid(&nb), cid, 2, 0).await;
    let addr = lb_addr(&nb, 8000);
    until_serving(addr).await;
    let (a0, b0) = (a.count(), b.count());
    // A slow request holds one node busy until released.
    let slow = tokio::spawn(async move { get(addr, "/slow", None).await.unwrap() });
    let busy = eventually(10, "the slow request to arrive", || {
        let (ac, bc) = (Arc::clone(&a.requests), Arc::clone(&b.requests));
        async move {
            let (x, y) = (ac.load(std::sync::atomic::Ordering::SeqCst), bc.load(std::sync::atomic::Ordering::SeqCst));
            if x > a0 {
                Some("a")
            } else if y > b0 {
                Some("b")
            } else {
                None
            }
        }
    })
    .await;
    // One request at a time, each after the last one's session ended: a session ends when the
    // balancer sees its connection close, a moment after the client has its answer, and a
    // request arriving in that moment finds the two nodes with one session each (a tie).
    let mut got = std::collections::HashMap::new();
    for _ in 0..6 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        *got.entry(spread(addr, 1).await.into_keys().next().unwrap()).or_insert(0) += 1;
    }
    let other = if busy == "a" { "b" } else { "a" };
    assert_eq!(got.get(other).copied(), Some(6), "every request while {busy} is busy goes to {other}: {got:?}");
    a.hold.notify_waiters();
    b.hold.notify_waiters();
    assert_eq!(slow.await.unwrap().body, busy);
}

#[tokio::test]
async fn source_sends_each_client_address_to_one_node() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p1) = backend_instance(&api, "us-east").await;
    let (_, p2) = backend_instance(&api, "us-east").await;
    let _a = Backend::http("a", mapped(&p1, 8000)).await;
    let _b = Backend::http("b", mapped(&p2, 8000)).await;
    let (nb, cid) = balancer_with(
        &api,
        json!({"port": 8000, "algorithm": "source"}),
        &[("a", &p1, 8000, json!({})), ("b", &p2, 8000, json!({}))],
    )
    .await;
    until_nodes_status(&api, nid(&nb), cid, 2, 0).await;
    let addr = lb_addr(&nb, 8000);
    until_serving(addr).await;
    let mut used = std::collections::HashSet::new();
    for i in 2..14u8 {
        let from = Ipv4Addr::new(127, 0, 0, i);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..4 {
            let r = get(addr, "/", Some(from)).await.unwrap();
            assert_eq!(r.status, 200);
            seen.insert(r.body);
        }
        assert_eq!(seen.len(), 1, "client {from} went to {seen:?}");
        used.extend(seen);
    }
    assert_eq!(used.len(), 2, "twelve client addresses use both nodes: {used:?}");
}

#[tokio::test]
async fn node_modes_reject_drain_and_backup() {
    let s = lb_server().await;
    let api = s.api();
    let (_, pa) = backend_instance(&api, "us-east").await;
    let (_, pb) = backend_instance(&api, "us-east").await;
    let (_, pc) = backend_instance(&api, "us-east").await;
    let mut a = Backend::http("accept", mapped(&pa, 8000)).await;
    let _b = Backend::http("other", mapped(&pb, 8000)).await;
    let _c = Backend::http("backup", mapped(&pc, 8000)).await;
    let (nb, cid) = balancer_with(
        &api,
        json!({"port": 8000}),
        &[
            ("accept", &pa, 8000, json!({})),
            ("other", &pb, 8000, json!({"mode": "reject"})),
            ("backup", &pc, 8000, json!({"mode": "backup"})),
        ],
    )
    .await;
    let nbid = nid(&nb);
    until_nodes_status(&api, nbid, cid, 3, 0).await;
    let addr = lb_addr(&nb, 8000);
    until_serving(addr).await;
    // reject gets nothing, backup gets nothing while an accept node is up.
    let got = spread(addr, 12).await;
    assert_eq!(got.get("accept").copied(), Some(12), "{got:?}");
    // drain: no new sessions.
    let nodes = api.get(&format!("/nodebalancers/{nbid}/configs/{cid}/nodes")).await.ok()["data"].clone();
    let other = nodes.as_array().unwrap().iter().find(|n| n["label"] == "node-other").unwrap()["id"].clone();
    api.put(&format!("/nodebalancers/{nbid}/configs/{cid}/nodes/{other}"), json!({"mode": "drain"})).await.ok();
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let got = spread(addr, 8).await;
    assert_eq!(got.get("accept").copied(), Some(8), "{got:?}");
    // With the accept node down, the backup node serves.
    a.stop().await;
    until_nodes_status(&api, nbid, cid, 2, 1).await;
    let got = spread(addr, 6).await;
    assert_eq!(got.get("backup").copied(), Some(6), "{got:?}");
}

#[tokio::test]
async fn http_answers_503_when_no_node_is_up() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    // Nothing listens on the node's address.
    let (nb, cid) = balancer_with(&api, json!({"port": 8000}), &[("down", &p, 8000, json!({}))]).await;
    until_nodes_status(&api, nid(&nb), cid, 0, 1).await;
    let addr = lb_addr(&nb, 8000);
    let r =
        eventually(60, "a 503", || async move { get(addr, "/", None).await.ok().filter(|r| r.status == 503) }).await;
    assert_eq!(r.status, 503);
    // Once a process accepts connections there, the node is up and serves.
    let _be = Backend::http("late", mapped(&p, 8000)).await;
    until_nodes_status(&api, nid(&nb), cid, 1, 0).await;
    until_serving(addr).await;
}

#[tokio::test]
async fn listeners_move_with_the_port_and_stop_with_their_config_or_balancer() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("be", mapped(&p, 8000)).await;
    let (nb, cid) = balancer_with(&api, json!({"port": 8100}), &[("be", &p, 8000, json!({}))]).await;
    let id = nid(&nb);
    let (old, new) = (lb_addr(&nb, 8100), lb_addr(&nb, 8101));
    until_serving(old).await;
    api.put(&format!("/nodebalancers/{id}/configs/{cid}"), json!({"port": 8101})).await.ok();
    until_serving(new).await;
    until_refused(old).await;
    // Deleting the config stops its listener.
    api.delete(&format!("/nodebalancers/{id}/configs/{cid}")).await.ok();
    until_refused(new).await;
    // A second config, then the balancer goes: its listener stops too.
    let c2 =
        api.post(&format!("/nodebalancers/{id}/configs"), json!({"port": 8102, "check": "none"})).await.ok().clone();
    api.post(
        &format!("/nodebalancers/{id}/configs/{}/nodes", c2["id"]),
        json!({"label": "node-be", "address": format!("{p}:8000")}),
    )
    .await
    .ok();
    let third = lb_addr(&nb, 8102);
    until_serving(third).await;
    api.delete(&format!("/nodebalancers/{id}")).await.ok();
    until_refused(third).await;
}

#[tokio::test]
async fn a_change_to_one_balancer_does_not_interrupt_another() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("be", mapped(&p, 8000)).await;
    let (nb1, _) = balancer_with(&api, json!({"port": 8200}), &[("be", &p, 8000, json!({}))]).await;
    let (nb2, c2) = balancer_with(&api, json!({"port": 8300}), &[("be", &p, 8000, json!({}))]).await;
    let a1 = lb_addr(&nb1, 8200);
    until_serving(a1).await;
    until_serving(lb_addr(&nb2, 8300)).await;
    // A keep-alive connection to the first balancer.
    let mut conn = tokio::net::TcpStream::connect(a1).await.unwrap();
    let ask = format!("GET / HTTP/1.1\r\nHost: {a1}\r\n\r\n");
    conn.write_all(ask.as_bytes()).await.unwrap();
    assert!(read_one(&mut conn).await.starts_with("HTTP/1.1 200"));
    // The second balancer changes port, node and protocol settings, and gets a new config.
    let id2 = nid(&nb2);
    api.put(&format!("/nodebalancers/{id2}/configs/{c2}"), json!({"port": 8301, "algorithm": "leastconn"})).await.ok();
    api.post(&format!("/nodebalancers/{id2}/configs"), json!({"port": 8302})).await.ok();
    until_serving(lb_addr(&nb2, 8301)).await;
    // The first balancer's connection is still open and serving.
    conn.write_all(ask.as_bytes()).await.unwrap();
    let again = read_one(&mut conn).await;
    assert!(again.starts_with("HTTP/1.1 200") && again.ends_with("be"), "{again}");
}

#[tokio::test]
async fn traffic_feeds_transfer_and_stats() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("be", mapped(&p, 8000)).await;
    let (nb, cid) = balancer_with(&api, json!({"port": 8400}), &[("be", &p, 8000, json!({}))]).await;
    let id = nid(&nb);
    assert_eq!(nb["transfer"], json!({"in": 0.0, "out": 0.0, "total": 0.0}));
    until_nodes_status(&api, id, cid, 1, 0).await;
    let addr: SocketAddr = lb_addr(&nb, 8400);
    until_serving(addr).await;
    spread(addr, 20).await;
    let t = eventually(30, "transfer to grow", || {
        let api = api.clone();
        async move {
            let b = api.get(&format!("/nodebalancers/{id}")).await.ok().clone();
            (b["transfer"]["total"].as_f64().unwrap_or(0.0) > 0.0).then(|| b["transfer"].clone())
        }
    })
    .await;
    let (i, o, total) = (t["in"].as_f64().unwrap(), t["out"].as_f64().unwrap(), t["total"].as_f64().unwrap());
    assert!(i > 0.0 && o > 0.0 && (i + o - total).abs() < 1e-9, "{t}");
    let stats = api.get(&format!("/nodebalancers/{id}/stats")).await.ok().clone();
    let conns = stats["data"]["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 288);
    let sum = |a: &Value| a.as_array().unwrap().iter().map(|p| p[1].as_f64().unwrap()).sum::<f64>();
    assert!(sum(&stats["data"]["connections"]) > 0.0, "{stats}");
    assert!(sum(&stats["data"]["traffic"]["in"]) > 0.0 && sum(&stats["data"]["traffic"]["out"]) > 0.0);
    let last_ts = conns.last().unwrap()[0].as_f64().unwrap();
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as f64;
    assert!(last_ts <= now_ms && now_ms - last_ts < 301_000.0, "timestamps are unix milliseconds");
    // More traffic, more transfer.
    spread(addr, 20).await;
    eventually(30, "transfer to grow again", || {
        let api = api.clone();
        async move {
            let b = api.get(&format!("/nodebalancers/{id}")).await.ok().clone();
            (b["transfer"]["total"].as_f64().unwrap_or(0.0) > total).then_some(())
        }
    })
    .await;
}

/// Reads one response (small enough for one read) from a keep-alive connection.
async fn read_one(conn: &mut tokio::net::TcpStream) -> String {
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), conn.read(&mut buf)).await.unwrap().unwrap();
    String::from_utf8_lossy(&buf[..n]).to_string()
}

#[tokio::test]
async fn tcp_closes_the_connection_when_no_node_is_up() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let (nb, cid) =
        balancer_with(&api, json!({"port": 8500, "protocol": "tcp"}), &[("gone", &p, 8000, json!({}))]).await;
    until_nodes_status(&api, nid(&nb), cid, 0, 1).await;
    let addr = lb_addr(&nb, 8500);
    let mut conn =
        eventually(60, "the tcp listener", || async move { tokio::net::TcpStream::connect(addr).await.ok() }).await;
    let _ = conn.write_all(b"hello").await;
    let mut buf = [0u8; 16];
    let n =
        tokio::time::timeout(std::time::Duration::from_secs(10), conn.read(&mut buf)).await.expect("closed in time");
    assert!(matches!(n, Ok(0) | Err(_)), "the balancer closes the connection: {n:?}");
}

#[tokio::test]
async fn http_and_http_body_checks_judge_the_answer() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _alpha = Backend::http("alpha", mapped(&p, 8001)).await;
    let _beta = Backend::http("beta", mapped(&p, 8002)).await;
    let _echo = Backend::echo("not-http", mapped(&p, 8003)).await;
    let (nb, cid) = balancer_with(
        &api,
        json!({"port": 8600, "check": "http", "check_path": "/health"}),
        &[("alpha", &p, 8001, json!({})), ("beta", &p, 8002, json!({})), ("echo", &p, 8003, json!({}))],
    )
    .await;
    let id = nid(&nb);
    // http: a 2xx answer is up; something that does not answer HTTP is down.
    until_nodes_status(&api, id, cid, 2, 1).await;
    let status_of = |label: &'static str| {
        let api = api.clone();
        async move {
            let nodes = api.get(&format!("/nodebalancers/{id}/configs/{cid}/nodes")).await.ok()["data"].clone();
            nodes.as_array().unwrap().iter().find(|n| n["label"] == format!("node-{label}")).unwrap()["status"].clone()
        }
    };
    assert_eq!(status_of("echo").await, "DOWN");
    // http_body: the body must contain check_body.
    api.put(&format!("/nodebalancers/{id}/configs/{cid}"), json!({"check": "http_body", "check_body": "alph"}))
        .await
        .ok();
    until_nodes_status(&api, id, cid, 1, 2).await;
    assert_eq!(status_of("alpha").await, "UP");
    assert_eq!(status_of("beta").await, "DOWN");
    // Health is checked from the data plane whether or not the listener is reachable yet (with
    // real instances its address is set up on its own): traffic waits for the listener.
    until_serving(lb_addr(&nb, 8600)).await;
    let got = spread(lb_addr(&nb, 8600), 6).await;
    assert_eq!(got.get("alpha").copied(), Some(6), "{got:?}");
}

#[tokio::test]
async fn passive_checks_take_out_a_node_whose_proxied_requests_fail() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _up = Backend::http("up", mapped(&p, 8001)).await;
    // Nothing listens on :8002. No active checks: only proxied requests tell.
    let nodes = [("up", p.as_str(), 8001u16, json!({})), ("dead", p.as_str(), 8002, json!({}))];
    let (nb, passive) =
        balancer_with(&api, json!({"port": 8700, "check": "none", "check_passive": true}), &nodes).await;
    let id = nid(&nb);
    let c = api
        .post(&format!("/nodebalancers/{id}/configs"), json!({"port": 8701, "check": "none", "check_passive": false}))
        .await
        .ok()
        .clone();
    let lax = c["id"].as_i64().unwrap();
    for (label, port) in [("up", 8001), ("dead", 8002)] {
        api.post(
            &format!("/nodebalancers/{id}/configs/{lax}/nodes"),
            json!({"label": format!("node-{label}"), "address": format!("{p}:{port}")}),
        )
        .await
        .ok();
    }
    for port in [8700, 8701] {
        until_serving(lb_addr(&nb, port)).await;
        for _ in 0..6 {
            let _ = get(lb_addr(&nb, port), "/", None).await;
        }
    }
    until_nodes_status(&api, id, passive, 0, 1).await;
    let lax_cfg = api.get(&format!("/nodebalancers/{id}/configs/{lax}")).await.ok().clone();
    assert_eq!(lax_cfg["nodes_status"], json!({"up": 0, "down": 0}), "check_passive false keeps the node in");
    let got = spread(lb_addr(&nb, 8700), 6).await;
    assert_eq!(got.get("up").copied(), Some(6), "{got:?}");
}
