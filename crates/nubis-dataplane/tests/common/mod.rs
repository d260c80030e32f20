//! Test harness: tiny back ends on 127.168.X.Y, a raw HTTP/1.1 client, spec builders and a running
//! data plane with its observations collected. All traffic stays on 127.0.0.0/8.
#![allow(dead_code)]

pub mod record;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use nubis_dataplane::{DataplaneHandle, DataplaneSettings, NetworkMode, Snapshot};
use nubis_model::balancer::*;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

pub const DEADLINE: Duration = Duration::from_secs(30);

pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
            .with_test_writer()
            .try_init();
    });
}

/// Polls `f` until it returns Some, or panics after [`DEADLINE`].
pub async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if start.elapsed() > DEADLINE {
            panic!("timed out waiting for: {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// ---------------------------------------------------------------- back ends

/// A back end bound to `127.168.X.Y:port`; its node address is `192.168.X.Y:port`.
pub struct Backend {
    pub name: String,
    pub addr: SocketAddr,
    pub hits: Arc<AtomicUsize>,
    pub accepted: Arc<AtomicUsize>,
    pub peers: Arc<Mutex<Vec<SocketAddr>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Backend {
    pub fn node_addr(&self) -> SocketAddrV4 {
        let SocketAddr::V4(a) = self.addr else { panic!("v4 only") };
        let o = a.ip().octets();
        assert_eq!((o[0], o[1]), (127, 168));
        SocketAddrV4::new(Ipv4Addr::new(192, 168, o[2], o[3]), a.port())
    }

    /// Closes the listener and every open connection.
    pub async fn stop(self) -> SocketAddr {
        self.task.abort();
        let _ = self.task.await;
        self.addr
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn bind_backend(addr: &str) -> TcpListener {
    let addr: SocketAddr = addr.parse().unwrap();
    let s = TcpSocket::new_v4().unwrap();
    s.set_reuseaddr(true).unwrap();
    s.bind(addr).unwrap();
    s.listen(1024).unwrap()
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTTP/1.1 keep-alive; body = "<name>\n<request head>" (status 200, or the status in a
    /// `X-Status` request header); `/health` answers with the `health` status and body.
    Http,
    /// Sends "<name>\n" on connect, then echoes.
    TcpGreet,
    /// Accepts and closes at once without answering.
    Slam,
}

pub struct Opts {
    pub health_status: u16,
    pub health_body: &'static str,
}

pub async fn backend(addr: &str, name: &str, kind: Kind) -> Backend {
    backend_with(addr, name, kind, Opts { health_status: 200, health_body: "all good" }).await
}

pub async fn backend_with(addr: &str, name: &str, kind: Kind, opts: Opts) -> Backend {
    let l = bind_backend(addr).await;
    let local = l.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let accepted = Arc::new(AtomicUsize::new(0));
    let peers = Arc::new(Mutex::new(Vec::new()));
    let (h, a, p, n) = (hits.clone(), accepted.clone(), peers.clone(), name.to_string());
    let opts = Arc::new(opts);
    let task = tokio::spawn(async move {
        let mut set = JoinSet::new();
        loop {
            let Ok((s, peer)) = l.accept().await else {
                continue;
            };
            a.fetch_add(1, Ordering::SeqCst);
            p.lock().unwrap().push(peer);
            let (h, n, opts) = (h.clone(), n.clone(), opts.clone());
            set.spawn(async move {
                match kind {
                    Kind::Http => serve_http(s, &n, &h, &opts).await,
                    Kind::TcpGreet => serve_greet(s, &n, &h).await,
                    Kind::Slam => drop(s),
                }
            });
            while set.try_join_next().is_some() {}
        }
    });
    Backend { name: name.into(), addr: local, hits, accepted, peers, task }
}

async fn serve_greet(mut s: TcpStream, name: &str, hits: &AtomicUsize) {
    hits.fetch_add(1, Ordering::SeqCst);
    if s.write_all(format!("{name}\n").as_bytes()).await.is_err() {
        return;
    }
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if s.write_all(&b[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Decodes a complete chunked body at the start of `b`: (decoded body, bytes used), or None
/// when more bytes are needed.
pub fn dechunk(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let line_end = i + b[i..].windows(2).position(|w| w == b"\r\n")?;
        let size_txt = std::str::from_utf8(&b[i..line_end]).ok()?;
        let size = usize::from_str_radix(size_txt.split(';').next()?.trim(), 16).ok()?;
        i = line_end + 2;
        if size == 0 {
            // No trailers in these tests.
            return (b.len() >= i + 2).then(|| (out, i + 2));
        }
        if b.len() < i + size + 2 {
            return None;
        }
        out.extend_from_slice(&b[i..i + size]);
        i += size + 2;
    }
}

async fn serve_http(mut s: TcpStream, name: &str, hits: &AtomicUsize, opts: &Opts) {
    let mut buf = Vec::new();
    loop {
        let (head_len, head, path, len, chunked, status, chunked_reply, upgrade) = loop {
            let mut hs = [httparse::EMPTY_HEADER; 64];
            let mut r = httparse::Request::new(&mut hs);
            if let Ok(httparse::Status::Complete(n)) = r.parse(&buf) {
                let hv = |name: &str| {
                    r.headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).to_string())
                };
                let len = hv("content-length").map(|v| v.parse::<usize>().unwrap()).unwrap_or(0);
                let chunked = hv("transfer-encoding").is_some_and(|v| v.contains("chunked"));
                let status = hv("x-status").map(|v| v.parse::<u16>().unwrap()).unwrap_or(200);
                let chunked_reply = hv("x-chunked").is_some();
                let upgrade = hv("upgrade").is_some();
                let path = r.path.unwrap().to_string();
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                break (n, head, path, len, chunked, status, chunked_reply, upgrade);
            }
            let mut b = [0u8; 8192];
            match s.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&b[..n]),
            }
        };
        let req_body = loop {
            if chunked {
                if let Some((body, used)) = dechunk(&buf[head_len..]) {
                    buf.drain(..head_len + used);
                    break body;
                }
            } else if buf.len() >= head_len + len {
                let body = buf[head_len..head_len + len].to_vec();
                buf.drain(..head_len + len);
                break body;
            }
            let mut b = [0u8; 8192];
            match s.read(&mut b).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&b[..n]),
            }
        };
        if upgrade {
            let _ =
                s.write_all(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n").await;
            let mut b = [0u8; 4096];
            loop {
                match s.read(&mut b).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        let up: Vec<u8> = b[..n].to_ascii_uppercase();
                        if s.write_all(&up).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
        let (status, body) = if path == "/health" {
            (opts.health_status, opts.health_body.to_string())
        } else {
            hits.fetch_add(1, Ordering::SeqCst);
            (status, format!("{name}\n{head}body-len={}\n", req_body.len()))
        };
        let resp = if chunked_reply {
            let (a, b) = body.split_at(body.len() / 2);
            format!(
                "HTTP/1.1 {status} X\r\nTransfer-Encoding: chunked\r\nX-Backend: {name}\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
        } else {
            format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nX-Backend: {name}\r\n\r\n{body}", body.len())
        };
        if s.write_all(resp.as_bytes()).await.is_err() {
            return;
        }
    }
}

// ---------------------------------------------------------------- client

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// The back end's name (first body line).
    pub fn backend(&self) -> &str {
        self.body.lines().next().unwrap_or("")
    }
}

/// Connects from `from` (a loopback address, port chosen by the system) to `to`.
pub async fn connect_from(from: &str, to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    s.bind(SocketAddr::new(from.parse().unwrap(), 0))?;
    let c = s.connect(to).await?;
    c.set_nodelay(true)?;
    Ok(c)
}

/// Reads one response; None when the connection closed first.
pub async fn read_response<S: AsyncRead + Unpin>(s: &mut S, buf: &mut Vec<u8>) -> Option<Response> {
    loop {
        let mut hs = [httparse::EMPTY_HEADER; 64];
        let mut r = httparse::Response::new(&mut hs);
        if let Ok(httparse::Status::Complete(n)) = r.parse(buf) {
            let headers: Vec<(String, String)> =
                r.headers.iter().map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).to_string())).collect();
            let status = r.code.unwrap();
            if headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked")) {
                loop {
                    if let Some((body, used)) = dechunk(&buf[n..]) {
                        buf.drain(..n + used);
                        let body = String::from_utf8_lossy(&body).to_string();
                        return Some(Response { status, headers, body });
                    }
                    let mut b = [0u8; 8192];
                    match s.read(&mut b).await {
                        Ok(0) | Err(_) => return None,
                        Ok(k) => buf.extend_from_slice(&b[..k]),
                    }
                }
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .map(|(_, v)| v.parse().unwrap())
                .unwrap_or(0);
            while buf.len() < n + len {
                let mut b = [0u8; 8192];
                match s.read(&mut b).await {
                    Ok(0) | Err(_) => return None,
                    Ok(k) => buf.extend_from_slice(&b[..k]),
                }
            }
            let body = String::from_utf8_lossy(&buf[n..n + len]).to_string();
            buf.drain(..n + len);
            return Some(Response { status, headers, body });
        }
        let mut b = [0u8; 8192];
        match s.read(&mut b).await {
            Ok(0) | Err(_) => return None,
            Ok(k) => buf.extend_from_slice(&b[..k]),
        }
    }
}

/// A keep-alive client connection.
pub struct Client<S> {
    pub s: S,
    buf: Vec<u8>,
}

impl Client<TcpStream> {
    pub async fn connect(from: &str, to: SocketAddr) -> std::io::Result<Client<TcpStream>> {
        Ok(Client { s: connect_from(from, to).await?, buf: Vec::new() })
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    pub fn new(s: S) -> Client<S> {
        Client { s, buf: Vec::new() }
    }

    pub async fn get(&mut self, path: &str, extra: &str) -> Option<Response> {
        let req = format!("GET {path} HTTP/1.1\r\nHost: lb.test\r\n{extra}\r\n");
        self.s.write_all(req.as_bytes()).await.ok()?;
        read_response(&mut self.s, &mut self.buf).await
    }

    pub async fn raw(&mut self, bytes: &[u8]) -> Option<Response> {
        self.s.write_all(bytes).await.ok()?;
        read_response(&mut self.s, &mut self.buf).await
    }
}

/// One request on a new connection from `from`.
pub async fn get_from(from: &str, to: SocketAddr, path: &str, extra: &str) -> Option<Response> {
    let mut c = Client::connect(from, to).await.ok()?;
    c.get(path, extra).await
}

pub async fn get(to: SocketAddr, path: &str) -> Option<Response> {
    get_from("127.0.0.1", to, path, "").await
}

/// A tcp client's greeting from a `TcpGreet` back end, or None when the balancer closed.
pub async fn tcp_greeting(from: &str, to: SocketAddr) -> Option<(TcpStream, String)> {
    let mut s = connect_from(from, to).await.ok()?;
    let mut b = Vec::new();
    let mut one = [0u8; 1];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut one)).await {
            Ok(Ok(1)) if one[0] == b'\n' => return Some((s, String::from_utf8(b).unwrap())),
            Ok(Ok(1)) => b.push(one[0]),
            _ => return None,
        }
    }
}

// ---------------------------------------------------------------- specs

pub fn check(kind: CheckKind) -> HealthCheck {
    HealthCheck {
        kind,
        interval_secs: 2,
        timeout_secs: 1,
        attempts: 2,
        path: "/health".into(),
        body: String::new(),
        passive: true,
    }
}

pub fn node(id: i64, b: &Backend, weight: u8, mode: NodeMode) -> NodeSpec {
    NodeSpec { id, address: b.node_addr(), weight, mode }
}

pub fn config(id: i64, port: u16, protocol: Protocol, nodes: Vec<NodeSpec>) -> ConfigSpec {
    ConfigSpec {
        id,
        port,
        protocol,
        algorithm: Algorithm::Roundrobin,
        stickiness: Stickiness::None,
        check: check(CheckKind::Connection),
        proxy_protocol: ProxyProtocol::None,
        cipher_suite: CipherSuite::Recommended,
        tls: None,
        nodes,
        udp_check_port: 80,
        udp_session_timeout_secs: 16,
    }
}

pub fn balancer(id: i64, ipv4: &str, configs: Vec<ConfigSpec>) -> BalancerSpec {
    BalancerSpec {
        id,
        ipv4: ipv4.parse().unwrap(),
        client_conn_throttle: 0,
        client_udp_sess_throttle: 0,
        configs,
        firewall: None,
    }
}

// ---------------------------------------------------------------- data plane

pub fn test_settings() -> DataplaneSettings {
    DataplaneSettings {
        check_interval_override: Some(Duration::from_millis(250)),
        reconcile_interval: Duration::from_millis(200),
        stats_interval: Duration::from_millis(200),
        ..DataplaneSettings::default()
    }
}

pub struct Dp {
    pub handle: DataplaneHandle,
    tx: watch::Sender<Arc<DesiredState>>,
    pub observations: Arc<Mutex<Vec<Observation>>>,
    version: u64,
}

impl Dp {
    pub async fn start(settings: DataplaneSettings, balancers: Vec<BalancerSpec>) -> Dp {
        init();
        let (tx, rx) = watch::channel(Arc::new(DesiredState::default()));
        let (otx, mut orx) = mpsc::channel(1024);
        let observations = Arc::new(Mutex::new(Vec::new()));
        let o2 = observations.clone();
        tokio::spawn(async move {
            while let Some(o) = orx.recv().await {
                o2.lock().unwrap().push(o);
            }
        });
        let handle = nubis_dataplane::start(settings, NetworkMode::Loopback, rx, otx);
        let mut dp = Dp { handle, tx, observations, version: 0 };
        dp.publish(balancers);
        dp
    }

    pub fn publish(&mut self, balancers: Vec<BalancerSpec>) {
        self.version += 1;
        self.tx.send_replace(Arc::new(DesiredState {
            version: self.version,
            balancers: balancers.into_iter().map(Arc::new).collect(),
        }));
    }

    pub fn snapshot(&self) -> Snapshot {
        self.handle.snapshot()
    }

    /// Waits until the config listens, and returns its address.
    pub async fn listening(&self, b: i64, c: i64) -> SocketAddr {
        eventually("listener", async || self.snapshot().config(b, c).and_then(|c| c.listening)).await
    }

    pub async fn wait_status(&self, b: i64, c: i64, n: i64, want: NodeStatus) {
        eventually(&format!("node {n} {want:?}"), async || {
            (self.snapshot().node_status(b, c, n) == Some(want)).then_some(())
        })
        .await
    }

    pub fn health_reports(&self, node: i64) -> Vec<NodeStatus> {
        self.observations
            .lock()
            .unwrap()
            .iter()
            .filter_map(|o| match o {
                Observation::NodeHealth { node_id, status, .. } if *node_id == node => Some(*status),
                _ => None,
            })
            .collect()
    }
}
