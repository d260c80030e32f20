//! Load-balancer features set through the API and checked with real traffic on loopback:
//! firewalls on a balancer (created with `firewall_id`, rules changed, disabled, device
//! removed), stickiness (`table`, `http_cookie`) with fail-over, `client_conn_throttle`,
//! `proxy_protocol` v1 and v2, `cipher_suite`, and the account's monthly transfer. Clients bind
//! 127.0.0.2, 127.0.0.3, ...

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::firewalls::{fw_path, id};
use crate::lb_support::*;
use crate::support::*;

/// A balancer in us-east (extra balancer fields merged) with one config and nodes on
/// `(private address, port)`. Returns (balancer, config id).
async fn balancer(api: &Api, extra: Value, config: Value, nodes: &[(&str, u16)]) -> (Value, i64) {
    let mut body = json!({"region": "us-east"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let nb = api.post("/nodebalancers", body).await.ok().clone();
    let nb_id = id(&nb);
    let mut c = json!({"check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 1});
    for (k, v) in config.as_object().unwrap() {
        c[k] = v.clone();
    }
    let cfg = id(api.post(&format!("/nodebalancers/{nb_id}/configs"), c).await.ok());
    for (i, (addr, port)) in nodes.iter().enumerate() {
        let n = json!({"label": format!("node-{i}"), "address": format!("{addr}:{port}")});
        api.post(&format!("/nodebalancers/{nb_id}/configs/{cfg}/nodes"), n).await.ok();
    }
    (nb, cfg)
}

fn from(last: u8) -> Option<Ipv4Addr> {
    Some(Ipv4Addr::new(127, 0, 0, last))
}

/// True when an HTTP request from `src` is answered (a dropped connection is closed unanswered).
async fn served(addr: SocketAddr, src: u8) -> bool {
    get(addr, "/", from(src)).await.is_ok_and(|r| r.status == 200)
}

/// Waits until the clients in `pass` are served and those in `dropped` are not.
async fn until_filtered(addr: SocketAddr, pass: &[u8], dropped: &[u8]) {
    let what = format!("{pass:?} served and {dropped:?} dropped");
    eventually(60, &what, || async move {
        for &p in pass {
            if !served(addr, p).await {
                return None;
            }
        }
        for &d in dropped {
            if served(addr, d).await {
                return None;
            }
        }
        Some(())
    })
    .await
}

/// Rules that accept everything but TCP from the given sources to `port`.
fn dropping(sources: &[&str], port: u16) -> Value {
    json!({
        "inbound": [{"action": "DROP", "protocol": "TCP", "ports": port.to_string(),
                     "addresses": {"ipv4": sources}, "label": "blocked"}],
        "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT"
    })
}

#[tokio::test]
async fn a_balancer_firewall_filters_new_connections_and_follows_every_change() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let be = Backend::http("web", mapped(&p, 8000)).await;
    let fw = api
        .post("/networking/firewalls", json!({"label": "lb-guard", "rules": dropping(&["127.0.0.3/32"], 8000)}))
        .await
        .ok()
        .clone();
    let (nb, cfg) = balancer(&api, json!({"firewall_id": id(&fw)}), json!({"port": 8000}), &[(&p, 8000)]).await;
    let nb_id = id(&nb);
    // The balancer is a device of the firewall, added with an event.
    let fws = api.get(&format!("/nodebalancers/{nb_id}/firewalls")).await.ok().clone();
    assert_eq!(fws["data"][0]["id"], fw["id"]);
    let devices = api.get(&format!("{}/devices", fw_path(&fw))).await.ok().clone();
    assert_eq!(devices["data"][0]["entity"]["id"], nb_id);
    assert_eq!(devices["data"][0]["entity"]["type"], "nodebalancer");
    assert!(event_actions(&api).await.contains(&"firewall_device_add".to_string()));
    until_nodes_status(&api, nb_id, cfg, 1, 0).await;
    let lb = lb_addr(&nb, 8000);
    until_filtered(lb, &[2], &[3]).await;
    // A dropped connection never reaches the back end.
    let before = be.count();
    for _ in 0..5 {
        assert!(!served(lb, 3).await);
    }
    assert_eq!(be.count(), before);
    // New rules: now 127.0.0.2 is dropped and 127.0.0.3 passes.
    api.put(&format!("{}/rules", fw_path(&fw)), dropping(&["127.0.0.2/32"], 8000)).await.ok();
    until_filtered(lb, &[3], &[2]).await;
    // A rule for another port drops nothing here.
    api.put(&format!("{}/rules", fw_path(&fw)), dropping(&["127.0.0.0/8"], 9000)).await.ok();
    until_filtered(lb, &[2, 3, 4], &[]).await;
    // An inbound policy of DROP with one accepted source.
    let only_four = json!({
        "inbound": [{"action": "ACCEPT", "protocol": "TCP", "ports": "8000", "addresses": {"ipv4": ["127.0.0.4/32"]}}],
        "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"
    });
    api.put(&format!("{}/rules", fw_path(&fw)), only_four).await.ok();
    until_filtered(lb, &[4], &[2, 3]).await;
    // Disabled, the firewall filters nothing; enabled again, it does.
    api.put(&fw_path(&fw), json!({"status": "disabled"})).await.ok();
    until_filtered(lb, &[2, 3, 4], &[]).await;
    api.put(&fw_path(&fw), json!({"status": "enabled"})).await.ok();
    until_filtered(lb, &[4], &[2, 3]).await;
    // Removing the device lifts it.
    let device = id(&devices["data"][0]);
    api.delete(&format!("{}/devices/{device}", fw_path(&fw))).await.ok();
    until_filtered(lb, &[2, 3, 4], &[]).await;
    // Added back, then the firewall deleted: filtering, then none.
    api.post(&format!("{}/devices", fw_path(&fw)), json!({"type": "nodebalancer", "id": nb_id})).await.ok();
    until_filtered(lb, &[4], &[2, 3]).await;
    api.delete(&fw_path(&fw)).await.ok();
    until_filtered(lb, &[2, 3], &[]).await;
}

#[tokio::test]
async fn firewall_id_on_balancer_create_is_checked_and_a_refusal_creates_nothing() {
    let s = lb_server().await;
    let api = s.api();
    let fw = api
        .post("/networking/firewalls", json!({"label": "one-lb", "rules": dropping(&["127.0.0.3/32"], 80)}))
        .await
        .ok()
        .clone();
    // Unknown firewall: 400 on firewall_id, nothing created.
    let r = api.post("/nodebalancers", json!({"region": "us-east", "firewall_id": 987654})).await;
    r.expect_error(400, "firewall_id");
    assert_eq!(api.get("/nodebalancers").await.ok()["results"], 0);
    let first = api.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&fw)})).await.ok().clone();
    // A firewall serves at most one balancer: the second create is refused as a whole.
    let r = api.post("/nodebalancers", json!({"region": "us-east", "label": "second", "firewall_id": id(&fw)})).await;
    r.expect_error(400, "firewall_id");
    assert_eq!(api.get("/nodebalancers").await.ok()["results"], 1);
    // Another account's firewall is not found.
    let other = other_account(&s);
    let theirs = other
        .post("/networking/firewalls", json!({"label": "theirs", "rules": dropping(&["127.0.0.3/32"], 80)}))
        .await
        .ok()
        .clone();
    api.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&theirs)}))
        .await
        .expect_error(400, "firewall_id");
    // A restricted user needs read_write on the firewall: none is "not found", read_only 403.
    let (user, bob) = user_with_token(&s, "bob-lb", true, "*").await;
    let username = user["username"].as_str().unwrap().to_string();
    let g = json!({"global": {"add_nodebalancers": true, "add_firewalls": true}});
    api.put(&format!("/account/users/{username}/grants"), g).await.ok();
    let fw2 = api
        .post("/networking/firewalls", json!({"label": "for-bob", "rules": dropping(&["127.0.0.3/32"], 80)}))
        .await
        .ok()
        .clone();
    bob.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&fw2)}))
        .await
        .expect_error(400, "firewall_id");
    let ro = json!({"firewall": [{"id": id(&fw2), "permissions": "read_only"}]});
    api.put(&format!("/account/users/{username}/grants"), ro).await.ok();
    assert_eq!(bob.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&fw2)})).await.status, 403);
    let rw = json!({"firewall": [{"id": id(&fw2), "permissions": "read_write"}]});
    api.put(&format!("/account/users/{username}/grants"), rw).await.ok();
    let mine = bob.post("/nodebalancers", json!({"region": "us-east", "firewall_id": id(&fw2)})).await.ok().clone();
    let listed = bob.get(&format!("/nodebalancers/{}/firewalls", id(&mine))).await.ok().clone();
    assert_eq!(listed["data"][0]["id"], fw2["id"]);
    // Deleting a balancer takes it off its firewall.
    api.delete(&format!("/nodebalancers/{}", id(&first))).await.ok();
    assert_eq!(api.get(&format!("{}/devices", fw_path(&fw))).await.ok()["results"], 0);
}

/// One HTTP/1.1 request with extra header lines, from `src`; returns (status line + headers, body).
async fn get_with(addr: SocketAddr, src: u8, extra: &str) -> (String, String) {
    let mut c = connect(addr, from(src)).await.unwrap();
    let req = format!("GET / HTTP/1.1\r\nHost: lb\r\n{extra}Connection: close\r\n\r\n");
    c.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(10), c.read_to_string(&mut out)).await.unwrap().unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// A balancer in us-east with an http config on port 8000 (roundrobin, the given stickiness) over
/// back ends "a" and "b", both up and serving. Returns (server, balancer, config id, a, b).
async fn sticky_balancer(stickiness: &str) -> (TestServer, Value, i64, Backend, Backend) {
    let s = lb_server().await;
    let api = s.api();
    let (_, p1) = backend_instance(&api, "us-east").await;
    let (_, p2) = backend_instance(&api, "us-east").await;
    let a = Backend::http("a", mapped(&p1, 8000)).await;
    let b = Backend::http("b", mapped(&p2, 8000)).await;
    let config = json!({"port": 8000, "algorithm": "roundrobin", "stickiness": stickiness});
    let (nb, cfg) = balancer(&api, json!({}), config, &[(&p1, 8000), (&p2, 8000)]).await;
    until_nodes_status(&api, id(&nb), cfg, 2, 0).await;
    until_serving(lb_addr(&nb, 8000)).await;
    (s, nb, cfg, a, b)
}

#[tokio::test]
async fn table_stickiness_pins_each_client_and_fails_over() {
    let (s, nb, cfg, mut a, mut b) = sticky_balancer("table").await;
    let (api, lb) = (s.api(), lb_addr(&nb, 8000));
    // Round robin alone would alternate; the table keeps each client on its first node.
    let mut first = std::collections::HashMap::new();
    for src in 2..10u8 {
        let pinned = get(lb, "/", from(src)).await.unwrap().body;
        for _ in 0..4 {
            assert_eq!(get(lb, "/", from(src)).await.unwrap().body, pinned, "client 127.0.0.{src}");
        }
        first.insert(src, pinned);
    }
    assert!(first.values().any(|v| v == "a") && first.values().any(|v| v == "b"), "{first:?}");
    // The node a client is pinned to goes down: the client fails over to the other.
    let (src, gone) = first.iter().map(|(k, v)| (*k, v.clone())).next().unwrap();
    if gone == "a" {
        a.stop().await;
    } else {
        b.stop().await;
    }
    until_nodes_status(&api, id(&nb), cfg, 1, 1).await;
    for _ in 0..4 {
        let r = get(lb, "/", from(src)).await.unwrap();
        assert_eq!(r.status, 200);
        assert_ne!(r.body, gone);
    }
}

#[tokio::test]
async fn http_cookie_stickiness_sets_and_honours_its_cookie_and_fails_over() {
    let (s, nb, cfg, mut a, mut b) = sticky_balancer("http_cookie").await;
    let (api, lb) = (s.api(), lb_addr(&nb, 8000));
    let (head, body) = get_with(lb, 2, "").await;
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: ").or_else(|| l.strip_prefix("Set-Cookie: ")))
        .unwrap_or_else(|| panic!("no Set-Cookie in {head}"))
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(cookie.starts_with("NB_SRVID="), "{cookie}");
    // With the cookie, every request goes to the same node, from any client address.
    for src in 2..8u8 {
        let (_, got) = get_with(lb, src, &format!("Cookie: theme=dark; {cookie}\r\n")).await;
        assert_eq!(got, body);
    }
    // Without it, round robin spreads requests over both nodes.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..6 {
        seen.insert(get_with(lb, 2, "").await.1);
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    // The cookie's node goes down: the request fails over and a new cookie is set.
    if body == "a" {
        a.stop().await;
    } else {
        b.stop().await;
    }
    until_nodes_status(&api, id(&nb), cfg, 1, 1).await;
    let (head, got) = get_with(lb, 2, &format!("Cookie: {cookie}\r\n")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_ne!(got, body);
    assert!(head.to_ascii_lowercase().contains("set-cookie: nb_srvid="), "{head}");
}

/// Opens a connection from `src` and checks that the echo back end answers through it.
async fn echoed(addr: SocketAddr, src: u8) -> Option<TcpStream> {
    let mut c = connect(addr, from(src)).await.ok()?;
    c.write_all(b"ping").await.ok()?;
    let mut buf = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), c.read_exact(&mut buf)).await.ok()?.ok()?;
    (&buf == b"ping").then_some(c)
}

#[tokio::test]
async fn client_conn_throttle_limits_new_connections_per_client_address() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _echo = Backend::echo("echo", mapped(&p, 7000)).await;
    let (nb, cfg) =
        balancer(&api, json!({"client_conn_throttle": 3}), json!({"port": 7001, "protocol": "tcp"}), &[(&p, 7000)])
            .await;
    let nb_id = id(&nb);
    until_nodes_status(&api, nb_id, cfg, 1, 0).await;
    let lb = lb_addr(&nb, 7001);
    eventually(60, "the listener", || async move { TcpStream::connect(lb).await.ok() }).await;
    // Let the second of the probe above pass, then 12 connections at once from one address: at
    // most 3 per second are accepted (a burst straddling a second boundary: at most 6).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let burst = futures_util::future::join_all((0..12).map(|_| echoed(lb, 2))).await;
    let accepted = burst.iter().filter(|c| c.is_some()).count();
    assert!((3..=6).contains(&accepted), "accepted {accepted} of 12");
    // Another address has its own budget.
    assert!(echoed(lb, 3).await.is_some());
    // 0 turns the throttle off.
    api.put(&format!("/nodebalancers/{nb_id}"), json!({"client_conn_throttle": 0})).await.ok();
    eventually(60, "the throttle to be off", || async move {
        let conns = futures_util::future::join_all((0..12).map(|_| echoed(lb, 4))).await;
        conns.iter().all(|c| c.is_some()).then_some(())
    })
    .await;
}

/// A back end reading a PROXY header (v1 or v2) and answering with what it parsed, one line.
async fn proxy_backend(addr: SocketAddr) -> tokio::task::JoinHandle<()> {
    let l = backend_listener(addr).await;
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else { continue };
            tokio::spawn(async move {
                let mut sig = [0u8; 12];
                if s.read_exact(&mut sig[..5]).await.is_err() {
                    return; // a health check
                }
                let parsed = if &sig[..5] == b"PROXY" {
                    let mut line = b"PROXY".to_vec();
                    let mut one = [0u8; 1];
                    while !line.ends_with(b"\r\n") && s.read_exact(&mut one).await.is_ok() {
                        line.push(one[0]);
                    }
                    String::from_utf8_lossy(&line).trim_end().to_string()
                } else {
                    if s.read_exact(&mut sig[5..]).await.is_err() {
                        return;
                    }
                    let mut hdr = [0u8; 4];
                    let _ = s.read_exact(&mut hdr).await;
                    let mut a = vec![0u8; u16::from_be_bytes([hdr[2], hdr[3]]) as usize];
                    let _ = s.read_exact(&mut a).await;
                    let port = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
                    format!(
                        "v2 signature_ok={} cmd={:#x} fam={:#x} {}:{} -> {}:{}",
                        sig == nubis_dataplane::proxy_protocol::V2_SIGNATURE,
                        hdr[0],
                        hdr[1],
                        Ipv4Addr::new(a[0], a[1], a[2], a[3]),
                        port(8),
                        Ipv4Addr::new(a[4], a[5], a[6], a[7]),
                        port(10)
                    )
                };
                let _ = s.write_all(format!("{parsed}\n").as_bytes()).await;
            });
        }
    })
}

#[tokio::test]
async fn proxy_protocol_v1_and_v2_give_the_back_end_the_real_client_address() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = proxy_backend(mapped(&p, 7000)).await;
    let (nb, c1) =
        balancer(&api, json!({}), json!({"port": 9001, "protocol": "tcp", "proxy_protocol": "v1"}), &[(&p, 7000)])
            .await;
    let nb_id = id(&nb);
    let c2 = id(api
        .post(
            &format!("/nodebalancers/{nb_id}/configs"),
            json!({"port": 9002, "protocol": "tcp", "proxy_protocol": "v2", "check": "connection",
                   "check_interval": 2, "check_timeout": 1, "check_attempts": 1}),
        )
        .await
        .ok());
    let addr = format!("{p}:7000");
    api.post(&format!("/nodebalancers/{nb_id}/configs/{c2}/nodes"), json!({"label": "pp2", "address": addr}))
        .await
        .ok();
    until_nodes_status(&api, nb_id, c1, 1, 0).await;
    until_nodes_status(&api, nb_id, c2, 1, 0).await;
    let lb_ip = nb["ipv4"].as_str().unwrap().to_string();
    for (port, v1) in [(9001u16, true), (9002, false)] {
        let lb = lb_addr(&nb, port);
        let line = eventually(60, "a PROXY header", || async move {
            let mut c = connect(lb, from(2)).await.ok()?;
            let local = c.local_addr().ok()?;
            let mut out = String::new();
            tokio::time::timeout(Duration::from_secs(5), c.read_to_string(&mut out)).await.ok()?.ok()?;
            (!out.is_empty()).then(|| (out.trim_end().to_string(), local.port()))
        })
        .await;
        let want = if v1 {
            format!("PROXY TCP4 127.0.0.2 {lb_ip} {} {port}", line.1)
        } else {
            format!("v2 signature_ok=true cmd=0x21 fam=0x11 127.0.0.2:{} -> {lb_ip}:{port}", line.1)
        };
        assert_eq!(line.0, want);
    }
    // proxy_protocol is refused on http configs (it is for tcp only).
    let r = api
        .post(
            &format!("/nodebalancers/{nb_id}/configs"),
            json!({"port": 9003, "protocol": "http", "proxy_protocol": "v1"}),
        )
        .await;
    r.expect_error(400, "proxy_protocol");
}

/// A TLS client trusting `ca_pem`, offering only TLS 1.2 with ChaCha20 (a legacy-only suite).
async fn tls12_chacha(addr: SocketAddr, ca_pem: &str) -> std::io::Result<u16> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.map_err(std::io::Error::other)?).map_err(std::io::Error::other)?;
    }
    let provider = rustls::crypto::CryptoProvider {
        cipher_suites: vec![rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256],
        ..rustls::crypto::ring::default_provider()
    };
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .map_err(std::io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await?;
    let name = rustls_pki_types::ServerName::try_from("lb.test").map_err(std::io::Error::other)?;
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(cfg)).connect(name, tcp).await?;
    tls.write_all(b"GET / HTTP/1.1\r\nHost: lb.test\r\nConnection: close\r\n\r\n").await?;
    let mut out = String::new();
    tls.read_to_string(&mut out).await?;
    Ok(out.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0))
}

#[tokio::test]
async fn cipher_suite_legacy_accepts_a_client_that_recommended_refuses() {
    let s = lb_server().await;
    let api = s.api();
    let (_, p) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("tls-backend", mapped(&p, 8000)).await;
    let (cert, key) = certificate(&["lb.test"], false);
    let https = |port: u16, suite: &str| json!({"port": port, "protocol": "https", "ssl_cert": cert, "ssl_key": key, "cipher_suite": suite});
    let (nb, rec) = balancer(&api, json!({}), https(8443, "recommended"), &[(&p, 8000)]).await;
    let nb_id = id(&nb);
    let mut body = https(8444, "legacy");
    body["check"] = json!("connection");
    let leg = id(api.post(&format!("/nodebalancers/{nb_id}/configs"), body).await.ok());
    let addr = format!("{p}:8000");
    api.post(&format!("/nodebalancers/{nb_id}/configs/{leg}/nodes"), json!({"label": "legacy", "address": addr}))
        .await
        .ok();
    until_nodes_status(&api, nb_id, rec, 1, 0).await;
    until_nodes_status(&api, nb_id, leg, 1, 0).await;
    let (rec_addr, leg_addr) = (lb_addr(&nb, 8443), lb_addr(&nb, 8444));
    // Both serve a modern client.
    for a in [rec_addr, leg_addr] {
        let c = cert.clone();
        eventually(60, "https", || {
            let c = c.clone();
            async move { get_tls(a, &c, "lb.test", "/").await.ok().filter(|r| r.status == 200) }
        })
        .await;
    }
    // Only legacy takes TLS 1.2 ChaCha20.
    let c = cert.clone();
    assert_eq!(
        eventually(60, "legacy to take ChaCha20", || {
            let c = c.clone();
            async move { tls12_chacha(leg_addr, &c).await.ok() }
        })
        .await,
        200
    );
    assert!(tls12_chacha(rec_addr, &cert).await.is_err());
}

#[tokio::test]
async fn account_transfer_counts_balancer_traffic_this_month_and_outlives_the_balancer() {
    let s = lb_server().await;
    let api = s.api();
    let empty = api.get("/account/transfer").await.ok().clone();
    assert_eq!(empty, json!({"billable": 0, "quota": 0, "used": 0, "region_transfers": []}));
    // The quota is the transfer of the account's instances' types.
    let (_, p) = backend_instance(&api, "us-east").await;
    let per_type = api.get("/compute/types/g6-nanode-1").await.ok()["transfer"].as_i64().unwrap();
    assert!(per_type > 0);
    assert_eq!(api.get("/account/transfer").await.ok()["quota"], per_type);
    // Traffic through a balancer counts, a started gigabyte as one.
    let _be = Backend::http("web", mapped(&p, 8000)).await;
    let (nb, cfg) = balancer(&api, json!({}), json!({"port": 8000}), &[(&p, 8000)]).await;
    until_nodes_status(&api, id(&nb), cfg, 1, 0).await;
    until_serving(lb_addr(&nb, 8000)).await;
    let t = eventually(60, "used to count the traffic", || {
        let api = api.clone();
        async move { Some(api.get("/account/transfer").await.body.clone()).filter(|t| t["used"] == 1) }
    })
    .await;
    assert_eq!((t["quota"].as_i64(), t["billable"].as_i64()), (Some(per_type), Some(0)));
    // Deleting the balancer keeps what it carried this month.
    api.delete(&format!("/nodebalancers/{}", id(&nb))).await.ok();
    assert_eq!(api.get("/account/transfer").await.ok()["used"], 1);
    // Another account sees its own figures.
    assert_eq!(other_account(&s).get("/account/transfer").await.ok()["used"], 0);
    // Restricted users need account_access read_only or better.
    let (user, bob) = user_with_token(&s, "bob-transfer", true, "*").await;
    let username = user["username"].as_str().unwrap().to_string();
    assert_eq!(bob.get("/account/transfer").await.status, 403);
    let g = json!({"global": {"account_access": "read_only"}});
    api.put(&format!("/account/users/{username}/grants"), g).await.ok();
    assert_eq!(bob.get("/account/transfer").await.ok()["used"], 1);
    // The scope is account:read_only.
    let (_, events_only) = user_with_token(&s, "ev-transfer", false, "events:read_only").await;
    assert_eq!(events_only.get("/account/transfer").await.status, 403);
}
