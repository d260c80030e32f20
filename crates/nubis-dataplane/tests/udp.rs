//! `udp` configs with real datagrams on loopback: echo back ends on 127.168.X.Y answer
//! `<name>:<payload>`; clients on 127.0.0.1 send to the balancer's listener.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use nubis_model::balancer::*;
use tokio::net::{TcpListener, UdpSocket};

/// A UDP echo back end on `addr` answering `<name>:<datagram>`; its node address is
/// 192.168.X.Y:port.
async fn echo(addr: &str, name: &'static str) -> (std::net::SocketAddrV4, tokio::task::JoinHandle<()>) {
    let s = UdpSocket::bind(addr).await.expect("bind the echo back end");
    let SocketAddr::V4(a) = s.local_addr().unwrap() else { unreachable!() };
    let o = a.ip().octets();
    let node = std::net::SocketAddrV4::new(std::net::Ipv4Addr::new(192, 168, o[2], o[3]), a.port());
    let task = tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = s.recv_from(&mut buf).await {
            let mut out = format!("{name}:").into_bytes();
            out.extend_from_slice(&buf[..n]);
            let _ = s.send_to(&out, from).await;
        }
    });
    (node, task)
}

/// Sends `msg` from `c` to `to` and returns the reply, or None when none comes within 500 ms.
async fn ask(c: &UdpSocket, to: SocketAddr, msg: &str) -> Option<String> {
    c.send_to(msg.as_bytes(), to).await.unwrap();
    let mut buf = [0u8; 2048];
    match tokio::time::timeout(Duration::from_millis(500), c.recv_from(&mut buf)).await {
        Ok(Ok((n, from))) => {
            assert_eq!(from, to, "replies come from the balancer's address");
            Some(String::from_utf8_lossy(&buf[..n]).into_owned())
        }
        _ => None,
    }
}

/// Like [`ask`], retried until a reply comes (the listener may still be starting).
async fn ask_until(c: &UdpSocket, to: SocketAddr, msg: &str) -> String {
    eventually("a udp reply", async || ask(c, to, msg).await).await
}

async fn client() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").await.unwrap()
}

fn udp_config(id: i64, port: u16, nodes: Vec<NodeSpec>) -> ConfigSpec {
    let mut c = config(id, port, Protocol::Udp, nodes);
    c.check = check(CheckKind::None);
    c.check.passive = false;
    c.stickiness = Stickiness::Session;
    c
}

fn udp_node(id: i64, address: std::net::SocketAddrV4) -> NodeSpec {
    NodeSpec { id, address, weight: 1, mode: NodeMode::Accept }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_spread_over_nodes_stick_and_count_their_bytes() {
    let (a, _ta) = echo("127.168.61.1:0", "a").await;
    let (b, _tb) = echo("127.168.61.2:0", "b").await;
    let cfg = udp_config(1, 5301, vec![udp_node(1, a), udp_node(2, b)]);
    let dp = Dp::start(test_settings(), vec![balancer(61, "127.10.61.1", vec![cfg])]).await;
    let to = dp.listening(61, 1).await;
    let (c1, c2) = (client().await, client().await);
    let r1 = ask_until(&c1, to, "hello").await;
    let r2 = ask_until(&c2, to, "hello").await;
    let (n1, n2) = (&r1[..1], &r2[..1]);
    assert_eq!(&r1[1..], ":hello");
    assert_ne!(n1, n2, "round robin gives the two clients' sessions different nodes: {r1} {r2}");
    for i in 0..5 {
        assert_eq!(ask(&c1, to, &format!("m{i}")).await.unwrap(), format!("{n1}:m{i}"), "a session sticks");
        assert_eq!(ask(&c2, to, &format!("m{i}")).await.unwrap(), format!("{n2}:m{i}"), "a session sticks");
    }
    let s = dp.snapshot();
    let c = s.config(61, 1).unwrap();
    assert_eq!(c.open_connections, 2, "two live sessions");
    eventually("traffic observed", async || {
        let (mut conns, mut bin, mut bout) = (0, 0, 0);
        for o in dp.observations.lock().unwrap().iter() {
            if let Observation::Traffic { connections, bytes_in, bytes_out, .. } = o {
                conns += connections;
                bin += bytes_in;
                bout += bytes_out;
            }
        }
        // Two sessions; 2 x "hello" + 2 x 5 x "mN" in; each reply is 2 bytes longer.
        (conns == 2 && bin >= 2 * 5 + 2 * 5 * 2 && bout >= bin + 2 * 6 * 2).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_and_the_next_datagram_starts_a_new_one() {
    let (a, _ta) = echo("127.168.62.1:0", "a").await;
    let (b, _tb) = echo("127.168.62.2:0", "b").await;
    let mut cfg = udp_config(1, 5302, vec![udp_node(1, a), udp_node(2, b)]);
    cfg.udp_session_timeout_secs = 1;
    let dp = Dp::start(test_settings(), vec![balancer(62, "127.10.62.1", vec![cfg])]).await;
    let to = dp.listening(62, 1).await;
    let c = client().await;
    let first = ask_until(&c, to, "x").await;
    assert_eq!(ask(&c, to, "y").await.unwrap()[..1], first[..1], "same session, same node");
    eventually("the session expires", async || (dp.snapshot().config(62, 1)?.open_connections == 0).then_some(()))
        .await;
    let next = ask(&c, to, "z").await.unwrap();
    assert_ne!(next[..1], first[..1], "a new session takes the next node in the rotation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_throttle_drops_new_sessions_above_the_limit() {
    let (a, _ta) = echo("127.168.63.1:0", "a").await;
    let cfg = udp_config(1, 5303, vec![udp_node(1, a)]);
    let mut bal = balancer(63, "127.10.63.1", vec![cfg.clone()]);
    let mut dp = Dp::start(test_settings(), vec![bal.clone()]).await;
    let to = dp.listening(63, 1).await;
    let c0 = client().await;
    ask_until(&c0, to, "warm").await;
    bal.client_udp_sess_throttle = 1;
    dp.publish(vec![bal]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Four new sessions from one IP in well under two seconds: at most two one-second windows,
    // so at most two are admitted.
    let clients = [client().await, client().await, client().await, client().await];
    let mut answered = 0;
    for c in &clients {
        c.send_to(b"new", to).await.unwrap();
    }
    for c in &clients {
        let mut buf = [0u8; 64];
        if tokio::time::timeout(Duration::from_millis(300), c.recv_from(&mut buf)).await.is_ok() {
            answered += 1;
        }
    }
    assert!((1..=2).contains(&answered), "{answered} of 4 new sessions answered with a limit of 1 per second");
    // The session already open is not throttled.
    assert_eq!(ask(&c0, to, "still").await.unwrap(), "a:still");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_check_port_is_closed_goes_down_and_gets_no_sessions() {
    let (a, _ta) = echo("127.168.64.1:0", "a").await;
    let (b, _tb) = echo("127.168.64.2:0", "b").await;
    // The check port: a TCP listener on node a's address only; node b has none there.
    let check_port = {
        let l = TcpListener::bind("127.168.64.1:0").await.unwrap();
        let p = l.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((s, _)) = l.accept().await {
                drop(s);
            }
        });
        p
    };
    let mut cfg = udp_config(1, 5304, vec![udp_node(1, a), udp_node(2, b)]);
    cfg.check = check(CheckKind::Connection);
    cfg.check.passive = false;
    cfg.udp_check_port = check_port;
    let dp = Dp::start(test_settings(), vec![balancer(64, "127.10.64.1", vec![cfg])]).await;
    let to = dp.listening(64, 1).await;
    dp.wait_status(64, 1, 1, NodeStatus::Up).await;
    dp.wait_status(64, 1, 2, NodeStatus::Down).await;
    for i in 0..4 {
        let c = client().await;
        assert_eq!(ask_until(&c, to, &format!("s{i}")).await, format!("a:s{i}"), "only the up node takes sessions");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ring_hash_keeps_a_client_address_on_one_node_across_sessions() {
    let (a, _ta) = echo("127.168.65.1:0", "a").await;
    let (b, _tb) = echo("127.168.65.2:0", "b").await;
    let mut cfg = udp_config(1, 5305, vec![udp_node(1, a), udp_node(2, b)]);
    cfg.algorithm = Algorithm::RingHash;
    cfg.udp_session_timeout_secs = 1;
    let dp = Dp::start(test_settings(), vec![balancer(65, "127.10.65.1", vec![cfg])]).await;
    let to = dp.listening(65, 1).await;
    let c = client().await;
    let first = ask_until(&c, to, "x").await;
    eventually("the session expires", async || (dp.snapshot().config(65, 1)?.open_connections == 0).then_some(()))
        .await;
    assert_eq!(ask(&c, to, "y").await.unwrap()[..1], first[..1], "the same address hashes to the same node");
    // Many client addresses use both nodes.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..16 {
        let c = client().await;
        seen.insert(ask_until(&c, to, "h").await[..1].to_string());
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
}
