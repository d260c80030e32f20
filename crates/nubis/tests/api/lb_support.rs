//! Helpers of the load-balancer tests: a server configuration with address pools no other test
//! server uses (so listeners and back ends of tests running at once never collide), back ends
//! playing "a process inside the instance", a raw HTTP/1.1 client (plain or TLS through rustls)
//! that can bind its source address, and certificates made with rcgen.
//!
//! In loopback mode (the simulated driver) a back end of the instance with private address
//! `192.168.X.Y` listens on this host at `127.168.X.Y`, where the data plane dials it, and every
//! address used is inside 127.0.0.0/8. In netns mode (`NUBIS_RUNTIME_DRIVER=netns`) the data
//! plane dials the real private address inside the instance's network namespace: a back end
//! listens there, on a socket made inside that namespace; the balancers' addresses are in the
//! server's own slice of 198.18.0.0/15 (see `netns_mode.rs`).

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinSet;

use crate::instances::{ROOT_PASS, wait_status};
use crate::support::*;

static N: AtomicU64 = AtomicU64::new(0);

/// A configuration whose region pools and private pool are this server's alone: regions
/// `us-east` and `us-west` (NodeBalancers offered) and `no-lb` (not offered), fast runtime,
/// a short reconcile interval.
pub fn lb_config() -> String {
    let n = (u64::from(std::process::id()) * 7919 + N.fetch_add(1, Ordering::Relaxed) * 104_729) % (140 * 256);
    let (a, b) = (20 + n / 256, n % 256);
    let (x, y) = (n % 4096 / 16, n % 16);
    let region = |id: &str, caps: &str, quarter: u64, v6: u64| {
        format!(
            "[[regions]]\nid = \"{id}\"\nlabel = \"{id}\"\ncountry = \"us\"\ncapabilities = [{caps}]\n\
             public_ipv4 = \"127.{a}.{b}.{}/26\"\npublic_prefix = 26\nipv6_pool = \"2001:db8:{v6:x}::/64\"\n\
             ipv6_ranges = \"2001:db8:{v6:x}00::/40\"\n",
            quarter * 64
        )
    };
    let all = "\"Linodes\", \"NodeBalancers\", \"VPCs\", \"Cloud Firewall\", \"Vlans\"";
    format!(
        "{TEST_CONFIG}\n[network]\nprivate_ipv4 = \"192.168.{x}.{}/28\"\n\n[dataplane]\nreconcile_interval_ms = 200\n\n{}\n{}\n{}",
        y * 16,
        region("us-east", all, 0, 0x10),
        region("us-west", all, 1, 0x11),
        region("no-lb", "\"Linodes\"", 2, 0x12),
    )
}

/// A test server with its own pools (and the data plane running).
pub async fn lb_server() -> TestServer {
    TestServer::start_with(Options { config: lb_config(), ..Default::default() }).await
}

/// Creates an instance (booted false), gives it a private address, boots it; returns
/// (instance id, private address).
pub async fn backend_instance(api: &Api, region: &str) -> (i64, String) {
    let body = json!({"region": region, "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": ROOT_PASS, "booted": false});
    let inst = api.post("/compute/instances/", body).await.ok().clone();
    let id = inst["id"].as_i64().unwrap();
    wait_status(api, id, "offline").await;
    let ip = api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": id})).await;
    let addr = ip.ok()["address"].as_str().unwrap().to_string();
    if netns() {
        lock(&NAMESPACES).insert(addr.parse().unwrap(), instance_netns(api, id));
    }
    api.post_empty(&format!("/compute/instances/{id}/boot")).await.ok();
    (id, addr)
}

/// The network namespace of each back-end instance, by private address (netns mode; the
/// addresses of servers running at once never overlap).
static NAMESPACES: Mutex<BTreeMap<Ipv4Addr, String>> = Mutex::new(BTreeMap::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where "a process inside the instance" listens for the private address `192.168.X.Y`: at
/// `127.168.X.Y` on this host in loopback mode, at the address itself in netns mode (inside
/// the instance's namespace).
pub fn mapped(private: &str, port: u16) -> SocketAddr {
    let ip: Ipv4Addr = private.parse().unwrap();
    let o = ip.octets();
    assert_eq!((o[0], o[1]), (192, 168), "{private} is not a private address");
    if netns() {
        return SocketAddr::new(IpAddr::V4(ip), port);
    }
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 168, o[2], o[3])), port)
}

/// A back end: an HTTP/1.1 server (keep-alive) answering every request with its name, or a
/// TCP echo server. Dropping or [`Backend::stop`]ping it closes its socket and connections.
pub struct Backend {
    pub name: String,
    pub addr: SocketAddr,
    pub requests: Arc<AtomicU64>,
    /// Headers of the last request.
    pub last_headers: Arc<Mutex<HashMap<String, String>>>,
    /// Releases the requests for `/slow` waiting on this back end.
    pub hold: Arc<tokio::sync::Notify>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Backend {
    pub async fn http(name: &str, addr: SocketAddr) -> Backend {
        Self::start(name, addr, false).await
    }

    pub async fn echo(name: &str, addr: SocketAddr) -> Backend {
        Self::start(name, addr, true).await
    }

    async fn start(name: &str, addr: SocketAddr, echo: bool) -> Backend {
        let l = backend_listener(addr).await;
        let requests = Arc::new(AtomicU64::new(0));
        let last_headers = Arc::new(Mutex::new(HashMap::new()));
        let hold = Arc::new(tokio::sync::Notify::new());
        let (n, r, h, g) = (name.to_string(), Arc::clone(&requests), Arc::clone(&last_headers), Arc::clone(&hold));
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                let Ok((s, _)) = l.accept().await else { continue };
                let (n, r, h, g) = (n.clone(), Arc::clone(&r), Arc::clone(&h), Arc::clone(&g));
                if echo {
                    conns.spawn(echo_conn(s));
                } else {
                    conns.spawn(http_conn(s, n, r, h, g));
                }
                while conns.try_join_next().is_some() {}
            }
        });
        Backend { name: name.to_string(), addr, requests, last_headers, hold, task: Some(task) }
    }

    pub fn count(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    pub async fn stop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// A listener for "a process inside the instance" at `addr` (from [`mapped`]).
pub async fn backend_listener(addr: SocketAddr) -> TcpListener {
    if netns() { bind_in_instance(addr).await } else { bind_retrying(addr).await }
}

async fn bind_retrying(addr: SocketAddr) -> TcpListener {
    for _ in 0..100 {
        let s = TcpSocket::new_v4().unwrap();
        s.set_reuseaddr(true).unwrap();
        if s.bind(addr).is_ok() {
            return s.listen(1024).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot bind {addr}");
}

/// A listener on `addr` inside the namespace of the instance holding that private address
/// (made by [`backend_instance`]), retried until the address is there.
async fn bind_in_instance(addr: SocketAddr) -> TcpListener {
    let IpAddr::V4(ip) = addr.ip() else { panic!("{addr} is not IPv4") };
    let ns =
        lock(&NAMESPACES).get(&ip).cloned().unwrap_or_else(|| panic!("no instance made by backend_instance has {ip}"));
    let path = nubis_netns::netns_path(&ns);
    let mut last = None;
    for _ in 0..100 {
        match nubis_netns::metadata::bind_in_netns(&path, addr, None) {
            Ok(l) => return TcpListener::from_std(l).unwrap(),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot bind {addr} in {ns}: {last:?}");
}

async fn echo_conn(mut s: TcpStream) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf).await {
        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Serves requests on one connection: `GET /slow` waits for [`Backend::hold`] (at most 30 s).
async fn http_conn(
    mut s: TcpStream,
    name: String,
    count: Arc<AtomicU64>,
    last: Arc<Mutex<HashMap<String, String>>>,
    hold: Arc<tokio::sync::Notify>,
) {
    let mut buf = Vec::new();
    loop {
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        buf.drain(..end);
        let mut headers = HashMap::new();
        for line in head.lines().skip(1) {
            if let Some((k, v)) = line.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        while buf.len() < len {
            let mut chunk = [0u8; 4096];
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..len);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let is_check = headers.get("user-agent").is_some_and(|u| u.contains("health"));
        if !is_check && path != "/health" {
            count.fetch_add(1, Ordering::SeqCst);
            *last.lock().unwrap() = headers.clone();
        }
        if path == "/slow" {
            let _ = tokio::time::timeout(Duration::from_secs(30), hold.notified()).await;
        }
        let close = headers.get("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"));
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{}\r\n{name}",
            name.len(),
            if close { "Connection: close\r\n" } else { "" }
        );
        if s.write_all(resp.as_bytes()).await.is_err() || close {
            return;
        }
    }
}

/// A response read by [`get`].
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: String,
    pub body: String,
}

async fn roundtrip<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, host: &str, path: &str) -> std::io::Result<Reply> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await?;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) =
        text.split_once("\r\n\r\n").ok_or_else(|| std::io::Error::other(format!("no response: {text:?}")))?;
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok(Reply { status, headers: head.to_string(), body: body.to_string() })
}

/// A TCP connection to `addr`, from the source address `from` when given.
pub async fn connect(addr: SocketAddr, from: Option<Ipv4Addr>) -> std::io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    if let Some(ip) = from.or_else(|| client_source(addr)) {
        s.bind(SocketAddr::new(IpAddr::V4(ip), 0))?;
    }
    tokio::time::timeout(Duration::from_secs(5), s.connect(addr)).await.map_err(std::io::Error::other)?
}

/// One HTTP/1.1 `GET` (Connection: close), optionally from a given source address.
pub async fn get(addr: SocketAddr, path: &str, from: Option<Ipv4Addr>) -> std::io::Result<Reply> {
    let s = connect(addr, from).await?;
    roundtrip(s, &addr.to_string(), path).await
}

/// One HTTPS `GET` through rustls, trusting only `ca_pem`, with SNI `name`.
pub async fn get_tls(addr: SocketAddr, ca_pem: &str, name: &str, path: &str) -> std::io::Result<Reply> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.map_err(std::io::Error::other)?).map_err(std::io::Error::other)?;
    }
    let cfg = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let s = connect(addr, None).await?;
    let server = rustls_pki_types::ServerName::try_from(name.to_string()).map_err(std::io::Error::other)?;
    let tls = connector.connect(server, s).await?;
    roundtrip(tls, name, path).await
}

/// Sends `n` requests and counts the answers by body (back-end name).
pub async fn spread(addr: SocketAddr, n: usize) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for _ in 0..n {
        let r = get(addr, "/", None).await.unwrap_or_else(|e| panic!("request to {addr}: {e}"));
        assert_eq!(r.status, 200, "{r:?}");
        *out.entry(r.body).or_insert(0) += 1;
    }
    out
}

/// Waits until `addr` answers HTTP 200.
pub async fn until_serving(addr: SocketAddr) {
    eventually(60, &format!("{addr} to serve"), || async move {
        get(addr, "/", None).await.ok().filter(|r| r.status == 200).map(|_| ())
    })
    .await
}

/// Waits until nothing accepts connections on `addr`.
pub async fn until_refused(addr: SocketAddr) {
    eventually(60, &format!("{addr} to refuse connections"), || async move {
        connect(addr, None).await.is_err().then_some(())
    })
    .await
}

/// Waits until the config's `nodes_status` is (up, down), in its own record and in the
/// balancer's list of configs alike.
pub async fn until_nodes_status(api: &Api, nb: i64, cfg: i64, up: i64, down: i64) -> Value {
    eventually(60, &format!("nodes_status up {up} down {down}"), || {
        let api = api.clone();
        async move {
            let r = api.get(&format!("/nodebalancers/{nb}/configs/{cfg}")).await;
            let list = api.get(&format!("/nodebalancers/{nb}/configs?page_size=500")).await;
            let listed = list.body["data"].as_array()?.iter().find(|c| c["id"] == cfg)?["nodes_status"].clone();
            let s = &r.body["nodes_status"];
            (s["up"] == up && s["down"] == down && listed == *s).then(|| r.body.clone())
        }
    })
    .await
}

/// The balancer's `ipv4:port`.
pub fn lb_addr(nb: &Value, port: u16) -> SocketAddr {
    SocketAddr::new(nb["ipv4"].as_str().unwrap().parse().unwrap(), port)
}

/// A self-signed certificate (PEM) and its key (PKCS#8 PEM) for `names`, with a full subject
/// (or a blank one).
pub fn certificate(names: &[&str], blank_subject: bool) -> (String, String) {
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    let mut params = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let mut dn = DistinguishedName::new();
    if !blank_subject {
        dn.push(DnType::CommonName, names[0]);
        dn.push(DnType::CountryName, "US");
        dn.push(DnType::OrganizationName, "nubis tests");
    }
    params.distinguished_name = dn;
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), key.serialize_pem())
}
