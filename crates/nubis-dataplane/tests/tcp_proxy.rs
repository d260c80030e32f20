//! `tcp` configs with real traffic on loopback: proxying, leastconn, closing when no node is
//! available, PROXY protocol v1/v2 parsed by the back end, client throttle, balancer firewall.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::*;
use nubis_model::balancer::*;
use nubis_model::firewall::{Action, CompiledRules, FirewallRules, Rule, RuleAddresses, RuleProtocol};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_proxies_bytes_both_ways() {
    let a = backend("127.168.20.1:0", "a", Kind::TcpGreet).await;
    let c = config(1, 9000, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)]);
    let dp = Dp::start(test_settings(), vec![balancer(20, "127.10.20.1", vec![c])]).await;
    let lb = dp.listening(20, 1).await;
    let (mut s, name) = tcp_greeting("127.0.0.1", lb).await.unwrap();
    assert_eq!(name, "a");
    let payload = vec![7u8; 300_000];
    let mut back = vec![0u8; payload.len()];
    let (mut r, mut w) = s.split();
    let (wr, rd) = tokio::join!(w.write_all(&payload), r.read_exact(&mut back));
    wr.unwrap();
    rd.unwrap();
    assert_eq!(back, payload);
    drop(s);
    let stats = eventually("bytes counted", async || {
        let c = dp.snapshot().config(20, 1).cloned()?;
        (c.bytes_in >= 300_000 && c.bytes_out >= 300_002).then_some(c)
    })
    .await;
    assert!(stats.connections >= 1);
    eventually("traffic observed", async || {
        let obs = dp.observations.lock().unwrap();
        let total_in: u64 = obs
            .iter()
            .filter_map(|o| match o {
                Observation::Traffic { balancer_id: 20, config_id: 1, bytes_in, .. } => Some(*bytes_in),
                _ => None,
            })
            .sum();
        (total_in >= 300_000).then_some(())
    })
    .await;
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leastconn_sends_new_connections_to_the_least_busy_node() {
    let a = backend("127.168.21.1:0", "a", Kind::TcpGreet).await;
    let b = backend("127.168.21.2:0", "b", Kind::TcpGreet).await;
    let mut c =
        config(1, 9000, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    c.algorithm = Algorithm::Leastconn;
    let dp = Dp::start(test_settings(), vec![balancer(21, "127.10.21.1", vec![c])]).await;
    let lb = dp.listening(21, 1).await;
    dp.wait_status(21, 1, 1, NodeStatus::Up).await;
    dp.wait_status(21, 1, 2, NodeStatus::Up).await;
    let (s1, n1) = tcp_greeting("127.0.0.1", lb).await.unwrap();
    let mut held = vec![s1];
    // Every new connection goes to the node with fewer open ones.
    let mut counts = std::collections::HashMap::new();
    counts.insert(n1.clone(), 1);
    for _ in 0..5 {
        let (s, n) = tcp_greeting("127.0.0.1", lb).await.unwrap();
        let fewer =
            if counts.get("a").copied().unwrap_or(0) <= counts.get("b").copied().unwrap_or(0) { "a" } else { "b" };
        let tie = counts.get("a").copied().unwrap_or(0) == counts.get("b").copied().unwrap_or(0);
        assert!(tie || n == fewer, "went to {n} with {counts:?}");
        *counts.entry(n).or_insert(0) += 1;
        held.push(s);
    }
    assert_eq!(counts.values().copied().collect::<Vec<_>>().iter().sum::<i32>(), 6);
    assert!(counts.values().all(|&v| v == 3), "{counts:?}");
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_closes_the_connection_when_no_node_is_available() {
    let gone = backend("127.168.22.1:0", "gone", Kind::TcpGreet).await.stop().await;
    let dead = NodeSpec {
        id: 1,
        address: format!("192.168.22.1:{}", gone.port()).parse().unwrap(),
        weight: 1,
        mode: NodeMode::Accept,
    };
    let dp =
        Dp::start(test_settings(), vec![balancer(22, "127.10.22.1", vec![config(1, 9000, Protocol::Tcp, vec![dead])])])
            .await;
    let lb = dp.listening(22, 1).await;
    dp.wait_status(22, 1, 1, NodeStatus::Down).await;
    let mut s = connect_from("127.0.0.1", lb).await.unwrap();
    let mut b = [0u8; 16];
    let n = tokio::time::timeout(DEADLINE, s.read(&mut b)).await.unwrap().unwrap_or(0);
    assert_eq!(n, 0, "closed without data");
    dp.handle.shutdown().await;
}

/// A back end that reads a PROXY header and answers with what it parsed.
async fn proxy_backend(addr: &str) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let l = tokio::net::TcpListener::bind(addr).await.unwrap();
    let local = l.local_addr().unwrap();
    let t = tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut first = [0u8; 12];
                if s.read_exact(&mut first[..5]).await.is_err() {
                    return;
                }
                let parsed = if &first[..5] == b"PROXY" {
                    let mut line = first[..5].to_vec();
                    let mut one = [0u8; 1];
                    while !line.ends_with(b"\r\n") {
                        s.read_exact(&mut one).await.unwrap();
                        line.push(one[0]);
                    }
                    String::from_utf8(line).unwrap().trim_end().to_string()
                } else {
                    s.read_exact(&mut first[5..]).await.unwrap();
                    assert_eq!(first, nubis_dataplane::proxy_protocol::V2_SIGNATURE);
                    let mut hdr = [0u8; 4];
                    s.read_exact(&mut hdr).await.unwrap();
                    let len = u16::from_be_bytes([hdr[2], hdr[3]]) as usize;
                    let mut a = vec![0u8; len];
                    s.read_exact(&mut a).await.unwrap();
                    format!(
                        "V2 cmd={:#x} fam={:#x} {}.{}.{}.{}:{} -> {}.{}.{}.{}:{}",
                        hdr[0],
                        hdr[1],
                        a[0],
                        a[1],
                        a[2],
                        a[3],
                        u16::from_be_bytes([a[8], a[9]]),
                        a[4],
                        a[5],
                        a[6],
                        a[7],
                        u16::from_be_bytes([a[10], a[11]])
                    )
                };
                let _ = s.write_all(format!("{parsed}\n").as_bytes()).await;
                let mut rest = [0u8; 64];
                if let Ok(n) = s.read(&mut rest).await {
                    let _ = s.write_all(&rest[..n]).await;
                }
            });
        }
    });
    (local, t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_protocol_v1_and_v2_carry_the_client_and_balancer_addresses() {
    let (be, _t) = proxy_backend("127.168.23.1:0").await;
    let n = NodeSpec {
        id: 1,
        address: format!("192.168.23.1:{}", be.port()).parse().unwrap(),
        weight: 1,
        mode: NodeMode::Accept,
    };
    let mut v1 = config(1, 9001, Protocol::Tcp, vec![n.clone()]);
    v1.proxy_protocol = ProxyProtocol::V1;
    let mut v2 = config(2, 9002, Protocol::Tcp, vec![n]);
    v2.proxy_protocol = ProxyProtocol::V2;
    let dp = Dp::start(test_settings(), vec![balancer(23, "127.10.23.1", vec![v1, v2])]).await;
    for (cfg, port) in [(1, 9001), (2, 9002)] {
        let lb = dp.listening(23, cfg).await;
        let (mut s, line) = tcp_greeting("127.0.0.2", lb).await.unwrap();
        let client = s.local_addr().unwrap();
        let want = if cfg == 1 {
            format!("PROXY TCP4 127.0.0.2 127.10.23.1 {} {port}", client.port())
        } else {
            format!("V2 cmd=0x21 fam=0x11 127.0.0.2:{} -> 127.10.23.1:{port}", client.port())
        };
        assert_eq!(line, want);
        // Client bytes follow the header untouched.
        s.write_all(b"ping").await.unwrap();
        let mut b = [0u8; 4];
        s.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"ping");
    }
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_conn_throttle_limits_new_connections_per_client_across_the_balancer() {
    let a = backend("127.168.24.1:0", "a", Kind::TcpGreet).await;
    let mut b = balancer(
        24,
        "127.10.24.1",
        vec![
            config(1, 9001, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)]),
            config(2, 9002, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)]),
        ],
    );
    b.client_conn_throttle = 3;
    let mut dp = Dp::start(test_settings(), vec![b.clone()]).await;
    let lb1 = dp.listening(24, 1).await;
    let lb2 = dp.listening(24, 2).await;
    // 12 connections from 127.0.0.2 at once, over both ports: at most 3 per second are accepted
    // (the burst may straddle one second boundary: at most 6).
    let attempts = (0..12).map(|i| tcp_greeting("127.0.0.2", if i % 2 == 0 { lb1 } else { lb2 }));
    let results = futures_util::future::join_all(attempts).await;
    let accepted = results.iter().filter(|r| r.is_some()).count();
    assert!((3..=6).contains(&accepted), "accepted {accepted} of 12");
    drop(results);
    // Another client address has its own budget.
    assert!(tcp_greeting("127.0.0.3", lb1).await.is_some());
    // 0 turns the throttle off.
    b.client_conn_throttle = 0;
    dp.publish(vec![b]);
    eventually("throttle off", async || {
        let mut ok = 0;
        for _ in 0..10 {
            if tcp_greeting("127.0.0.4", lb1).await.is_some() {
                ok += 1;
            }
        }
        (ok == 10).then_some(())
    })
    .await;
    dp.handle.shutdown().await;
}

fn rules(drop_from: &str, port: &str) -> Arc<CompiledRules> {
    Arc::new(CompiledRules::compile(&FirewallRules {
        inbound: vec![Rule {
            action: Action::Drop,
            protocol: RuleProtocol::Tcp,
            ports: Some(port.into()),
            addresses: RuleAddresses { ipv4: Some(vec![drop_from.into()]), ipv6: None },
            label: None,
            description: None,
        }],
        inbound_policy: Action::Accept,
        outbound: vec![],
        outbound_policy: Action::Accept,
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firewall_drops_before_any_back_end_is_contacted_and_changes_apply_to_the_next_connection() {
    let a = backend("127.168.25.1:0", "a", Kind::TcpGreet).await;
    let mut c = config(1, 9001, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)]);
    c.check = check(CheckKind::None);
    let mut b = balancer(
        25,
        "127.10.25.1",
        vec![c.clone(), config(2, 9002, Protocol::Tcp, vec![node(1, &a, 1, NodeMode::Accept)])],
    );
    b.configs[1].check = check(CheckKind::None);
    b.firewall = Some(rules("127.0.0.3/32", "9001"));
    let mut dp = Dp::start(test_settings(), vec![b.clone()]).await;
    let lb1 = dp.listening(25, 1).await;
    let lb2 = dp.listening(25, 2).await;
    assert!(tcp_greeting("127.0.0.2", lb1).await.is_some(), "other clients pass");
    let before = a.accepted.load(std::sync::atomic::Ordering::SeqCst);
    for _ in 0..3 {
        assert!(tcp_greeting("127.0.0.3", lb1).await.is_none(), "dropped");
    }
    assert_eq!(
        a.accepted.load(std::sync::atomic::Ordering::SeqCst),
        before,
        "no back-end connection for dropped clients"
    );
    assert!(tcp_greeting("127.0.0.3", lb2).await.is_some(), "the rule names port 9001 only");
    // Removing the firewall applies from the next connection.
    b.firewall = None;
    dp.publish(vec![b.clone()]);
    eventually("firewall removed", async || tcp_greeting("127.0.0.3", lb1).await.map(|_| ())).await;
    // And adding one back too.
    b.firewall = Some(rules("127.0.0.0/24", "1-65535"));
    dp.publish(vec![b]);
    eventually("firewall added", async || tcp_greeting("127.0.0.2", lb2).await.is_none().then_some(())).await;
    assert!(tcp_greeting("127.0.1.5", lb2).await.is_some());
    dp.handle.shutdown().await;
}
