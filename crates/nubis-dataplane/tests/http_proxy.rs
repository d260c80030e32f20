//! `http` configs with real traffic on loopback: selection (weights, source), node modes, health
//! transitions, 503/502, keep-alive and forwarded headers, bodies, stickiness.

mod common;

use common::*;
use nubis_model::balancer::*;

fn count<'a>(names: impl Iterator<Item = &'a str>, name: &str) -> usize {
    names.filter(|n| *n == name).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roundrobin_spreads_requests_by_weight() {
    let a = backend("127.168.1.1:0", "a", Kind::Http).await;
    let b = backend("127.168.1.2:0", "b", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 3, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(1, "127.10.1.1", vec![c])]).await;
    let lb = dp.listening(1, 1).await;
    dp.wait_status(1, 1, 1, NodeStatus::Up).await;
    dp.wait_status(1, 1, 2, NodeStatus::Up).await;
    let mut cl = Client::connect("127.0.0.1", lb).await.unwrap();
    let mut names = Vec::new();
    for _ in 0..40 {
        names.push(cl.get("/", "").await.unwrap().backend().to_string());
    }
    let na = count(names.iter().map(|s| s.as_str()), "a");
    let nb = count(names.iter().map(|s| s.as_str()), "b");
    assert_eq!(na + nb, 40);
    assert_eq!((na, nb), (30, 10), "weights 3:1 give exactly 3:1 over whole periods");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_algorithm_pins_each_client_address() {
    let a = backend("127.168.2.1:0", "a", Kind::Http).await;
    let b = backend("127.168.2.2:0", "b", Kind::Http).await;
    let mut c =
        config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    c.algorithm = Algorithm::Source;
    let dp = Dp::start(test_settings(), vec![balancer(2, "127.10.2.1", vec![c])]).await;
    let lb = dp.listening(2, 1).await;
    let mut seen = std::collections::HashSet::new();
    for i in 1..=16 {
        let from = format!("127.0.2.{i}");
        let first = get_from(&from, lb, "/", "").await.unwrap().backend().to_string();
        for _ in 0..3 {
            assert_eq!(get_from(&from, lb, "/", "").await.unwrap().backend(), first, "client {from} moved");
        }
        seen.insert(first);
    }
    assert_eq!(seen.len(), 2, "16 client addresses use both nodes");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_and_drain_get_no_new_sessions_and_backup_only_when_accept_nodes_are_down() {
    let a = backend("127.168.3.1:0", "accept", Kind::Http).await;
    let r = backend("127.168.3.2:0", "reject", Kind::Http).await;
    let d = backend("127.168.3.3:0", "drain", Kind::Http).await;
    let k = backend("127.168.3.4:0", "backup", Kind::Http).await;
    let c = config(
        1,
        8080,
        Protocol::Http,
        vec![
            node(1, &a, 1, NodeMode::Accept),
            node(2, &r, 1, NodeMode::Reject),
            node(3, &d, 1, NodeMode::Drain),
            node(4, &k, 1, NodeMode::Backup),
        ],
    );
    let dp = Dp::start(test_settings(), vec![balancer(3, "127.10.3.1", vec![c])]).await;
    let lb = dp.listening(3, 1).await;
    dp.wait_status(3, 1, 1, NodeStatus::Up).await;
    for _ in 0..12 {
        assert_eq!(get(lb, "/").await.unwrap().backend(), "accept");
    }
    assert_eq!((r.hits(), d.hits(), k.hits()), (0, 0, 0));
    a.stop().await;
    dp.wait_status(3, 1, 1, NodeStatus::Down).await;
    for _ in 0..6 {
        assert_eq!(get(lb, "/").await.unwrap().backend(), "backup");
    }
    assert_eq!((r.hits(), d.hits()), (0, 0));
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_keeps_sessions_already_pinned_to_it() {
    let a = backend("127.168.4.1:0", "a", Kind::Http).await;
    let b = backend("127.168.4.2:0", "b", Kind::Http).await;
    let nodes = |mode_a| vec![node(1, &a, 1, mode_a), node(2, &b, 1, NodeMode::Accept)];
    let mut c = config(1, 8080, Protocol::Http, nodes(NodeMode::Accept));
    c.stickiness = Stickiness::Table;
    let mut dp = Dp::start(test_settings(), vec![balancer(4, "127.10.4.1", vec![c.clone()])]).await;
    let lb = dp.listening(4, 1).await;
    // Find a client pinned to `a`.
    let mut pinned = None;
    for i in 1..=10 {
        let from = format!("127.0.4.{i}");
        if get_from(&from, lb, "/", "").await.unwrap().backend() == "a" {
            pinned = Some(from);
            break;
        }
    }
    let pinned = pinned.expect("some client lands on a");
    c.nodes = nodes(NodeMode::Drain);
    dp.publish(vec![balancer(4, "127.10.4.1", vec![c])]);
    // A fresh client address per probe: one pinned before the change would rightly stay.
    let mut probe = 0u32;
    eventually("drain applied", async || {
        probe += 1;
        (get_from(&format!("127.4.{}.{}", probe / 250, probe % 250 + 1), lb, "/", "").await.unwrap().backend() == "b")
            .then_some(())
    })
    .await;
    for _ in 0..5 {
        assert_eq!(
            get_from(&pinned, lb, "/", "").await.unwrap().backend(),
            "a",
            "pinned session stays on the draining node"
        );
    }
    for i in 100..110 {
        assert_eq!(
            get_from(&format!("127.0.4.{i}"), lb, "/", "").await.unwrap().backend(),
            "b",
            "new sessions avoid drain"
        );
    }
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_check_follows_a_back_end_going_down_and_up() {
    let a = backend("127.168.5.1:0", "a", Kind::Http).await;
    let b = backend("127.168.5.2:0", "b", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(5, "127.10.5.1", vec![c])]).await;
    let lb = dp.listening(5, 1).await;
    dp.wait_status(5, 1, 1, NodeStatus::Up).await;
    dp.wait_status(5, 1, 2, NodeStatus::Up).await;
    let b_addr = b.stop().await;
    dp.wait_status(5, 1, 2, NodeStatus::Down).await;
    for _ in 0..10 {
        let r = get(lb, "/").await.unwrap();
        assert_eq!((r.status, r.backend()), (200, "a"));
    }
    let b = backend(&b_addr.to_string(), "b", Kind::Http).await;
    dp.wait_status(5, 1, 2, NodeStatus::Up).await;
    eventually("traffic back on b", async || (get(lb, "/").await.unwrap().backend() == "b").then_some(())).await;
    assert!(b.hits() > 0);
    // Every change reported once (reports reach the collector asynchronously).
    eventually("reports", async || {
        (dp.health_reports(2) == vec![NodeStatus::Up, NodeStatus::Down, NodeStatus::Up]).then_some(())
    })
    .await;
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_and_http_body_checks_judge_the_answer() {
    let ok =
        backend_with("127.168.6.1:0", "ok", Kind::Http, Opts { health_status: 200, health_body: "it works" }).await;
    let err =
        backend_with("127.168.6.2:0", "err", Kind::Http, Opts { health_status: 500, health_body: "it works" }).await;
    let redirect =
        backend_with("127.168.6.3:0", "redir", Kind::Http, Opts { health_status: 302, health_body: "nope" }).await;
    let nodes = vec![
        node(1, &ok, 1, NodeMode::Accept),
        node(2, &err, 1, NodeMode::Accept),
        node(3, &redirect, 1, NodeMode::Accept),
    ];
    let mut http = config(1, 8080, Protocol::Http, nodes.clone());
    http.check = check(CheckKind::Http);
    let mut body = config(2, 8081, Protocol::Http, nodes);
    body.check = check(CheckKind::HttpBody);
    body.check.body = "it works".into();
    let dp = Dp::start(test_settings(), vec![balancer(6, "127.10.6.1", vec![http, body])]).await;
    dp.wait_status(6, 1, 1, NodeStatus::Up).await;
    dp.wait_status(6, 1, 2, NodeStatus::Down).await;
    dp.wait_status(6, 1, 3, NodeStatus::Up).await;
    dp.wait_status(6, 2, 1, NodeStatus::Up).await;
    dp.wait_status(6, 2, 2, NodeStatus::Down).await;
    dp.wait_status(6, 2, 3, NodeStatus::Down).await;
    let lb = dp.listening(6, 2).await;
    for _ in 0..5 {
        assert_eq!(get(lb, "/").await.unwrap().backend(), "ok");
    }
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_available_node_gives_503_and_a_failing_back_end_502() {
    let gone = backend("127.168.7.1:0", "gone", Kind::Http).await.stop().await;
    let dead = NodeSpec {
        id: 1,
        address: format!("192.168.7.1:{}", gone.port()).parse().unwrap(),
        weight: 1,
        mode: NodeMode::Accept,
    };
    let slam = backend("127.168.7.2:0", "slam", Kind::Slam).await;
    let mut c2 = config(2, 8081, Protocol::Http, vec![node(1, &slam, 1, NodeMode::Accept)]);
    c2.check = check(CheckKind::None);
    let dp = Dp::start(
        test_settings(),
        vec![balancer(7, "127.10.7.1", vec![config(1, 8080, Protocol::Http, vec![dead]), c2])],
    )
    .await;
    let lb = dp.listening(7, 1).await;
    dp.wait_status(7, 1, 1, NodeStatus::Down).await;
    let mut cl = Client::connect("127.0.0.1", lb).await.unwrap();
    let r = cl.get("/", "").await.unwrap();
    assert_eq!(r.status, 503);
    assert!(r.body.contains("No back end"));
    // The connection stays usable after a 503.
    assert_eq!(cl.get("/", "").await.unwrap().status, 503);
    let lb2 = dp.listening(7, 2).await;
    assert_eq!(get(lb2, "/").await.unwrap().status, 502);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_pooling_and_forwarded_headers() {
    let a = backend("127.168.8.1:0", "a", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(8, "127.10.8.1", vec![c])]).await;
    let lb = dp.listening(8, 1).await;
    let mut cl = Client::connect("127.0.0.2", lb).await.unwrap();
    for i in 0..5 {
        let r = cl
            .get(
                &format!("/p{i}?q=1"),
                "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Proto: https\r\nConnection: keep-alive\r\n",
            )
            .await
            .unwrap();
        assert_eq!(r.status, 200);
        assert!(r.body.contains(&format!("GET /p{i}?q=1 HTTP/1.1\r\n")), "{}", r.body);
        assert!(r.body.contains("X-Forwarded-For: 203.0.113.9, 127.0.0.2\r\n"), "{}", r.body);
        assert!(r.body.contains("X-Forwarded-Proto: http\r\n"), "{}", r.body);
        assert!(!r.body.contains("https"), "client's X-Forwarded-Proto is replaced");
        assert!(!r.body.to_ascii_lowercase().contains("connection:"), "hop-by-hop header removed");
        assert_eq!(r.header("x-backend"), Some("a"));
    }
    // Health checks are not pooled; proxied requests reuse one back-end connection.
    let proxied: Vec<_> = a.peers.lock().unwrap().clone();
    assert!(a.hits() == 5);
    let distinct_for_requests = proxied.len();
    assert!(distinct_for_requests >= 1);
    // A second client reuses the pooled connection instead of dialing again (checks aside).
    let before = a.accepted.load(std::sync::atomic::Ordering::SeqCst);
    drop(cl);
    let mut cl = Client::connect("127.0.0.3", lb).await.unwrap();
    assert_eq!(cl.get("/", "").await.unwrap().status, 200);
    let after = a.accepted.load(std::sync::atomic::Ordering::SeqCst);
    // Connection checks also connect; allow for them but not for one dial per request.
    assert!(after - before <= 3, "pooled connection reused ({before} -> {after})");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_forwarded_with_length_and_chunked_framing() {
    let a = backend("127.168.9.1:0", "a", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(9, "127.10.9.1", vec![c])]).await;
    let lb = dp.listening(9, 1).await;
    let mut cl = Client::connect("127.0.0.1", lb).await.unwrap();
    let big = "x".repeat(100_000);
    let req = format!("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{big}", big.len());
    let r = cl.raw(req.as_bytes()).await.unwrap();
    assert!(r.body.contains("body-len=100000"), "{}", &r.body[..r.body.len().min(300)]);
    // Pipelined: two requests in one write.
    let two = b"GET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\nHost: t\r\n\r\n";
    let r1 = cl.raw(two).await.unwrap();
    assert!(r1.body.contains("GET /one"));
    let r2 = cl.raw(b"").await.unwrap();
    assert!(r2.body.contains("GET /two"));
    // Chunked request body, chunked response.
    let r = cl
        .raw(b"POST /ch HTTP/1.1\r\nHost: t\r\nX-Chunked: 1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert!(r.body.contains("POST /ch") && r.body.contains("body-len=7"), "{}", r.body);
    // The connection is still in step after the chunked exchange.
    assert!(cl.get("/after", "").await.unwrap().body.contains("GET /after"));
    // 100-continue with a body sent after the interim answer.
    cl.s.write_all(b"POST /c HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n").await.unwrap();
    let interim = cl.raw(b"").await.unwrap();
    assert_eq!(interim.status, 100);
    let r = cl.raw(b"hello").await.unwrap();
    assert!(r.body.contains("body-len=5"));
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passive_check_takes_a_node_answering_5xx_out_of_rotation() {
    let a = backend("127.168.10.1:0", "a", Kind::Http).await;
    let b = backend("127.168.10.2:0", "b", Kind::Http).await;
    let mut c =
        config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    c.check = check(CheckKind::None);
    let dp = Dp::start(test_settings(), vec![balancer(10, "127.10.10.1", vec![c])]).await;
    let lb = dp.listening(10, 1).await;
    // The back end's answer is chosen by the client here: make whichever node answers fail once.
    let r = get_from("127.0.0.1", lb, "/", "X-Status: 503\r\n").await.unwrap();
    assert_eq!(r.status, 503);
    let failed = if r.backend() == "a" { 1 } else { 2 };
    // Taken out at once (reports reach the collector asynchronously).
    eventually("down reported", async || (dp.health_reports(failed).first() == Some(&NodeStatus::Down)).then_some(()))
        .await;
    // With check `none` the node is given back one or two intervals later.
    eventually("given back", async || {
        (dp.health_reports(failed) == vec![NodeStatus::Down, NodeStatus::Unknown]).then_some(())
    })
    .await;
    assert_eq!(dp.snapshot().node_status(10, 1, failed), Some(NodeStatus::Unknown));
    dp.handle.shutdown().await;
}

use tokio::io::AsyncWriteExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_stickiness_pins_clients_and_fails_over() {
    let a = backend("127.168.11.1:0", "a", Kind::Http).await;
    let b = backend("127.168.11.2:0", "b", Kind::Http).await;
    let mut c =
        config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    c.stickiness = Stickiness::Table;
    let dp = Dp::start(test_settings(), vec![balancer(11, "127.10.11.1", vec![c])]).await;
    let lb = dp.listening(11, 1).await;
    dp.wait_status(11, 1, 1, NodeStatus::Up).await;
    dp.wait_status(11, 1, 2, NodeStatus::Up).await;
    let first = get_from("127.0.11.1", lb, "/", "").await.unwrap().backend().to_string();
    for _ in 0..8 {
        assert_eq!(get_from("127.0.11.1", lb, "/", "").await.unwrap().backend(), first);
    }
    let (stopped, other, id) = if first == "a" { (a, "b", 1) } else { (b, "a", 2) };
    stopped.stop().await;
    dp.wait_status(11, 1, id, NodeStatus::Down).await;
    for _ in 0..5 {
        assert_eq!(get_from("127.0.11.1", lb, "/", "").await.unwrap().backend(), other, "fails over");
    }
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookie_stickiness_sets_and_honours_the_cookie_and_fails_over() {
    let a = backend("127.168.12.1:0", "a", Kind::Http).await;
    let b = backend("127.168.12.2:0", "b", Kind::Http).await;
    let mut c =
        config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    c.stickiness = Stickiness::HttpCookie;
    let dp = Dp::start(test_settings(), vec![balancer(12, "127.10.12.1", vec![c])]).await;
    let lb = dp.listening(12, 1).await;
    dp.wait_status(12, 1, 1, NodeStatus::Up).await;
    dp.wait_status(12, 1, 2, NodeStatus::Up).await;
    let r = get(lb, "/").await.unwrap();
    let set = r.header("set-cookie").expect("cookie set").to_string();
    assert!(set.starts_with("NB_SRVID=") && set.contains("Path=/"), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let first = r.backend().to_string();
    for _ in 0..8 {
        let r = get_from("127.0.0.1", lb, "/", &format!("Cookie: x=1; {cookie}\r\n")).await.unwrap();
        assert_eq!(r.backend(), first);
        assert!(r.header("set-cookie").is_none(), "no new cookie while it is honoured");
    }
    // Without the cookie, requests alternate.
    let mut names = std::collections::HashSet::new();
    for _ in 0..4 {
        names.insert(get(lb, "/").await.unwrap().backend().to_string());
    }
    assert_eq!(names.len(), 2);
    let (stopped, other, id) = if first == "a" { (a, "b", 1) } else { (b, "a", 2) };
    stopped.stop().await;
    dp.wait_status(12, 1, id, NodeStatus::Down).await;
    let r = get_from("127.0.0.1", lb, "/", &format!("Cookie: {cookie}\r\n")).await.unwrap();
    assert_eq!(r.backend(), other);
    assert!(r.header("set-cookie").is_some_and(|s| !s.starts_with(&cookie)), "new cookie for the new node");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_is_tunnelled_after_101() {
    let a = backend("127.168.13.1:0", "a", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(13, "127.10.13.1", vec![c])]).await;
    let lb = dp.listening(13, 1).await;
    let mut cl = Client::connect("127.0.0.1", lb).await.unwrap();
    let r = cl.get("/ws", "Connection: Upgrade\r\nUpgrade: echo\r\n").await.unwrap();
    assert_eq!(r.status, 101);
    cl.s.write_all(b"hello tunnel").await.unwrap();
    let mut b = [0u8; 12];
    tokio::io::AsyncReadExt::read_exact(&mut cl.s, &mut b).await.unwrap();
    assert_eq!(&b, b"HELLO TUNNEL");
    dp.handle.shutdown().await;
}
