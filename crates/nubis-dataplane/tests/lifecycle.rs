//! The reconcile loop and the protective limits, with real traffic on loopback: listeners move,
//! stop and retry without disturbing others; the loopback guard; idle timeout, header limit,
//! slowloris, connection limit; shutdown.

mod common;

use std::time::{Duration, Instant};

use common::*;
use nubis_model::balancer::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn refused(to: std::net::SocketAddr) -> bool {
    match connect_from("127.0.0.1", to).await {
        Err(_) => true,
        Ok(mut s) => {
            let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
            let mut b = [0u8; 1];
            matches!(tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await, Ok(Ok(0)) | Ok(Err(_)))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_moves_a_listener_and_updates_another_in_place_without_interrupting_it() {
    let a = backend("127.168.40.1:0", "a", Kind::Http).await;
    let b = backend("127.168.40.2:0", "b", Kind::Http).await;
    let c1 = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    let mut c2 = config(2, 8081, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    let mut dp = Dp::start(test_settings(), vec![balancer(40, "127.10.40.1", vec![c1.clone(), c2.clone()])]).await;
    let lb1 = dp.listening(40, 1).await;
    let lb2 = dp.listening(40, 2).await;
    let mut kept = Client::connect("127.0.0.1", lb2).await.unwrap();
    assert_eq!(kept.get("/", "").await.unwrap().backend(), "a");
    // Same state again: nothing moves.
    dp.publish(vec![balancer(40, "127.10.40.1", vec![c1.clone(), c2.clone()])]);
    // Move config 1 to another port; change config 2's nodes in place.
    let mut c1m = c1.clone();
    c1m.port = 8082;
    c2.nodes = vec![node(2, &b, 1, NodeMode::Accept)];
    dp.publish(vec![balancer(40, "127.10.40.1", vec![c1m, c2.clone()])]);
    let moved = eventually("moved", async || dp.snapshot().config(40, 1)?.listening.filter(|a| a.port() == 8082)).await;
    assert_eq!(get(moved, "/").await.unwrap().status, 200);
    assert!(refused(lb1).await, "old port closed");
    // The kept connection survived and sees the new nodes.
    eventually("in-place update", async || (kept.get("/", "").await.unwrap().backend() == "b").then_some(())).await;
    assert_eq!(dp.snapshot().config(40, 2).unwrap().listening, Some(lb2));
    // Protocol change moves the listener too (http -> tcp on the same port).
    let mut c2t = c2.clone();
    c2t.protocol = Protocol::Tcp;
    dp.publish(vec![balancer(40, "127.10.40.1", vec![c2t])]);
    eventually("config 1 gone", async || dp.snapshot().config(40, 1).is_none().then_some(())).await;
    assert!(refused(moved).await, "removed config stops listening");
    eventually("kept connection closed by the protocol change", async || {
        kept.get("/", "").await.is_none().then_some(())
    })
    .await;
    // Removing the balancer stops everything.
    dp.publish(vec![]);
    eventually("balancer gone", async || dp.snapshot().configs.is_empty().then_some(())).await;
    assert!(refused(lb2).await);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_bind_is_retried_until_the_address_is_free() {
    let a = backend("127.168.41.1:0", "a", Kind::Http).await;
    let blocker = std::net::TcpListener::bind("127.10.41.1:8080").unwrap();
    let dp = Dp::start(
        test_settings(),
        vec![balancer(
            41,
            "127.10.41.1",
            vec![config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)])],
        )],
    )
    .await;
    eventually("config known", async || dp.snapshot().config(41, 1).map(|_| ())).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(dp.snapshot().config(41, 1).unwrap().listening, None);
    drop(blocker);
    let lb = dp.listening(41, 1).await;
    assert_eq!(get(lb, "/").await.unwrap().status, 200);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_guard_refuses_non_loopback_nodes_and_balancer_addresses() {
    // No packet leaves 127.0.0.0/8: the fabric refuses these addresses before any dial or bind.
    let outside = NodeSpec { id: 1, address: "10.0.0.1:80".parse().unwrap(), weight: 1, mode: NodeMode::Accept };
    let c = config(1, 8080, Protocol::Http, vec![outside.clone()]);
    let dp = Dp::start(
        test_settings(),
        vec![
            balancer(42, "127.10.42.1", vec![c]),
            balancer(43, "203.0.113.7", vec![config(1, 8080, Protocol::Http, vec![outside])]),
        ],
    )
    .await;
    let lb = dp.listening(42, 1).await;
    dp.wait_status(42, 1, 1, NodeStatus::Down).await;
    assert_eq!(get(lb, "/").await.unwrap().status, 503);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(dp.snapshot().config(43, 1).unwrap().listening, None, "a non-loopback balancer address is never bound");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_clients_are_closed() {
    let a = backend("127.168.44.1:0", "a", Kind::TcpGreet).await;
    let h = backend("127.168.44.2:0", "h", Kind::Http).await;
    let settings =
        nubis_dataplane::DataplaneSettings { client_idle_timeout: Duration::from_millis(300), ..test_settings() };
    let dp = Dp::start(
        settings,
        vec![balancer(
            44,
            "127.10.44.1",
            vec![
                config(1, 9000, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)]),
                config(2, 8080, Protocol::Http, vec![node(1, &h, 1, NodeMode::Accept)]),
            ],
        )],
    )
    .await;
    let tcp = dp.listening(44, 1).await;
    let http = dp.listening(44, 2).await;
    let (mut s, _) = tcp_greeting("127.0.0.1", tcp).await.unwrap();
    let mut b = [0u8; 8];
    let n = tokio::time::timeout(DEADLINE, s.read(&mut b)).await.expect("closed by the balancer").unwrap_or(0);
    assert_eq!(n, 0);
    let mut c = Client::connect("127.0.0.1", http).await.unwrap();
    assert_eq!(c.get("/", "").await.unwrap().status, 200);
    let n = tokio::time::timeout(DEADLINE, c.s.read(&mut b)).await.expect("closed by the balancer").unwrap_or(0);
    assert_eq!(n, 0);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_slowloris_request_heads_are_refused() {
    let h = backend("127.168.45.1:0", "h", Kind::Http).await;
    let settings = nubis_dataplane::DataplaneSettings {
        client_idle_timeout: Duration::from_millis(800),
        max_header_bytes: 2048,
        ..test_settings()
    };
    let dp = Dp::start(
        settings,
        vec![balancer(
            45,
            "127.10.45.1",
            vec![config(1, 8080, Protocol::Http, vec![node(1, &h, 1, NodeMode::Accept)])],
        )],
    )
    .await;
    let lb = dp.listening(45, 1).await;
    let mut c = Client::connect("127.0.0.1", lb).await.unwrap();
    let big = format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "y".repeat(4000));
    assert_eq!(c.raw(big.as_bytes()).await.unwrap().status, 400, "oversized head (HAProxy answers 400 too)");
    // A never-ending head is cut at the limit too.
    let mut c = Client::connect("127.0.0.1", lb).await.unwrap();
    let mut endless = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..200 {
        endless.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    assert_eq!(c.raw(&endless).await.unwrap().status, 400);
    // Slowloris: one byte every 100 ms never completes a head; the balancer gives up.
    let mut s = connect_from("127.0.0.1", lb).await.unwrap();
    let start = Instant::now();
    let mut answer = Vec::new();
    for b in
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter()
    {
        if s.write_all(std::slice::from_ref(b)).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut r = [0u8; 256];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), s.read(&mut r)).await {
            answer.extend_from_slice(&r[..n]);
            break;
        }
    }
    if answer.is_empty() {
        let _ = tokio::time::timeout(DEADLINE, s.read_to_end(&mut answer)).await;
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"), "{:?}", String::from_utf8_lossy(&answer));
    assert!(start.elapsed() < Duration::from_secs(6), "cut off at about the idle timeout");
    assert_eq!(h.hits(), 0);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_listener_limit_are_closed() {
    let a = backend("127.168.46.1:0", "a", Kind::TcpGreet).await;
    let settings = nubis_dataplane::DataplaneSettings { max_connections_per_listener: 2, ..test_settings() };
    let dp = Dp::start(
        settings,
        vec![balancer(46, "127.10.46.1", vec![config(1, 9000, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)])])],
    )
    .await;
    let lb = dp.listening(46, 1).await;
    let one = tcp_greeting("127.0.0.1", lb).await.unwrap();
    let _two = tcp_greeting("127.0.0.1", lb).await.unwrap();
    assert!(tcp_greeting("127.0.0.1", lb).await.is_none(), "third connection refused");
    assert_eq!(dp.snapshot().config(46, 1).unwrap().open_connections, 2);
    drop(one);
    eventually("a slot frees up", async || tcp_greeting("127.0.0.1", lb).await.map(|_| ())).await;
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_every_listener() {
    let a = backend("127.168.47.1:0", "a", Kind::Http).await;
    let dp = Dp::start(
        test_settings(),
        vec![balancer(
            47,
            "127.10.47.1",
            vec![config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)])],
        )],
    )
    .await;
    let lb = dp.listening(47, 1).await;
    let mut c = Client::connect("127.0.0.1", lb).await.unwrap();
    assert_eq!(c.get("/", "").await.unwrap().status, 200);
    dp.handle.shutdown().await;
    assert!(c.get("/", "").await.is_none(), "open connections are closed");
    assert!(connect_from("127.0.0.1", lb).await.is_err(), "nothing listens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_can_run_on_the_callers_runtime() {
    let a = backend("127.168.48.1:0", "a", Kind::Http).await;
    let t = backend("127.168.48.2:0", "t", Kind::TcpGreet).await;
    let settings = nubis_dataplane::DataplaneSettings { worker_threads: 0, ..test_settings() };
    let mut c2 = config(2, 9000, Protocol::Tcp, vec![node(1, &t, 1, NodeMode::Accept)]);
    c2.check = check(CheckKind::None);
    let mut dp = Dp::start(
        settings,
        vec![balancer(
            48,
            "127.10.48.1",
            vec![config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]), c2.clone()],
        )],
    )
    .await;
    let lb = dp.listening(48, 1).await;
    assert_eq!(get(lb, "/").await.unwrap().backend(), "a");
    let tcp = dp.listening(48, 2).await;
    assert_eq!(tcp_greeting("127.0.0.1", tcp).await.unwrap().1, "t");
    c2.port = 9001;
    dp.publish(vec![balancer(48, "127.10.48.1", vec![c2])]);
    let moved = eventually("moved", async || dp.snapshot().config(48, 2)?.listening.filter(|a| a.port() == 9001)).await;
    assert_eq!(tcp_greeting("127.0.0.1", moved).await.unwrap().1, "t");
    assert!(refused(lb).await);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_never_join_a_reuseport_socket_held_by_someone_else() {
    let a = backend("127.168.49.1:0", "a", Kind::Http).await;
    // Another holder of the address that allows port sharing.
    let other = tokio::net::TcpSocket::new_v4().unwrap();
    other.set_reuseaddr(true).unwrap();
    other.set_reuseport(true).unwrap();
    other.bind("127.10.49.1:8080".parse().unwrap()).unwrap();
    let other = other.listen(16).unwrap();
    let settings = nubis_dataplane::DataplaneSettings { worker_threads: 2, ..test_settings() };
    let dp = Dp::start(
        settings,
        vec![balancer(
            49,
            "127.10.49.1",
            vec![config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)])],
        )],
    )
    .await;
    eventually("config known", async || dp.snapshot().config(49, 1).map(|_| ())).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(dp.snapshot().config(49, 1).unwrap().listening, None, "the address is taken");
    drop(other);
    let lb = dp.listening(49, 1).await;
    assert_eq!(get(lb, "/").await.unwrap().status, 200);
    dp.handle.shutdown().await;
}
