//! A minimal HTTP/1.1 reverse proxy on hyper 1 and hyper-util's pooled client, built only to
//! measure what the data plane's `http` mode would cost on hyper (`bench/lb/hyper.sh`,
//! docs/decisions.md): per request a node in round robin, `X-Forwarded-For` appended,
//! `X-Forwarded-Proto` set, hop-by-hop fields removed, keep-alive on both sides. Threads are laid
//! out as the data plane's: one single-threaded event loop per thread, each with its own
//! `SO_REUSEPORT` listener and its own client pool, so the comparison is of the HTTP handling.
//!
//! `cargo run --release -p nubis-dataplane --example hyper_proxy -- 127.0.0.5:18085 127.168.77.1:18080 127.168.77.2:18080`
//! (threads: `NT`, default 2). Listens and dials 127.0.0.0/8 only.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

type Body = BoxBody<Bytes, hyper::Error>;

struct Proxy {
    client: Client<HttpConnector, Incoming>,
    nodes: Vec<SocketAddr>,
    /// The round-robin counter, shared by the threads.
    next: Arc<AtomicUsize>,
}

const HOP: [&str; 7] =
    ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"];

async fn proxy(p: Arc<Proxy>, peer: SocketAddr, mut req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let node = p.nodes[p.next.fetch_add(1, Ordering::Relaxed) % p.nodes.len()];
    let path = req.uri().path_and_query().map_or("/", |pq| pq.as_str());
    *req.uri_mut() = format!("http://{node}{path}").parse().expect("uri");
    let h = req.headers_mut();
    for name in HOP {
        h.remove(name);
    }
    let xff = match h.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(v) => format!("{v}, {}", peer.ip()),
        None => peer.ip().to_string(),
    };
    h.insert(HeaderName::from_static("x-forwarded-for"), HeaderValue::from_str(&xff).expect("xff"));
    h.insert(HeaderName::from_static("x-forwarded-proto"), HeaderValue::from_static("http"));
    Ok(match p.client.request(req).await {
        Ok(resp) => resp.map(|b| b.boxed()),
        Err(_) => {
            let mut r = Response::new(
                Full::new(Bytes::from_static(b"The back end has failed\n")).map_err(|e| match e {}).boxed(),
            );
            *r.status_mut() = StatusCode::BAD_GATEWAY;
            r
        }
    })
}

fn main() {
    let args: Vec<SocketAddr> = std::env::args().skip(1).map(|a| a.parse().expect("address")).collect();
    assert!(args.len() >= 2, "usage: hyper_proxy LISTEN NODE...");
    assert!(args.iter().all(|a| a.ip().is_loopback()), "127.0.0.0/8 only");
    let threads = std::env::var("NT").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (args, next) = (args.clone(), next.clone());
            std::thread::spawn(move || worker(args, next))
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().expect("worker"));
}

fn worker(args: Vec<SocketAddr>, next: Arc<AtomicUsize>) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async move {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(512).build(connector);
        let p = Arc::new(Proxy { client, nodes: args[1..].to_vec(), next });
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_reuseport(true).expect("reuseport");
        socket.bind(args[0]).expect("bind");
        let listener = socket.listen(1024).expect("listen");
        loop {
            let Ok((stream, peer)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let p = p.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| proxy(p.clone(), peer, req));
                let _ = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(stream), svc).await;
            });
        }
    });
}
