//! The metadata service (Metadata API v1 at `169.254.169.254:80`) inside every instance.
//!
//! Each instance has a point-to-point link `md0` (169.254.169.253) to the fabric namespace, where
//! the other end `m<id>` carries 169.254.169.254. Each instance gets its own listener there,
//! bound to its link's device (a thread enters the fabric namespace with `setns`, binds, and
//! ends; the socket stays in that namespace). Which listener a request came through says which
//! instance asks: an instance sees only its own data, and a token is valid only at the listener
//! that issued it. Nothing is bound inside the instance, so its own servers may use any port.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use crate::{Error, Result};

/// The metadata address.
pub const ADDRESS: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);
/// The instance's end of its metadata link.
pub const CLIENT: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 253);
/// The instance's end of its metadata link.
pub const LINK: &str = "md0";

/// The fabric's end of instance `id`'s metadata link.
pub fn fabric_link(id: i64) -> String {
    format!("m{id}")
}

/// The documents an instance can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doc {
    Instance,
    Network,
    SshKeys,
    /// The user data as given on create (base64).
    UserData,
}

pub type DocFuture = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send>>;

/// Where the documents come from (the application).
pub trait Source: Send + Sync + 'static {
    /// The document for instance `id` (JSON, or base64 text for the user data); `None` when the
    /// instance is gone.
    fn document(&self, id: i64, doc: Doc) -> DocFuture;
}

/// Longest token lifetime (12 hours), as the hosted service allows.
const MAX_EXPIRY_SECS: u64 = 43_200;

struct Token {
    instance: i64,
    expires: Instant,
}

/// The listeners and the tokens they issued.
pub struct Metadata {
    source: Arc<dyn Source>,
    tokens: Mutex<HashMap<String, Token>>,
    listeners: Mutex<HashMap<i64, tokio::task::AbortHandle>>,
}

type Body = Full<Bytes>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(body.into()))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn error(status: StatusCode, reason: &str) -> Response<Body> {
    let body = serde_json::json!({ "errors": [{ "reason": reason }] }).to_string();
    reply(status, "application/json", body)
}

/// Opens a TCP listener at `addr` (on `device` when given) inside the network namespace at
/// `ns_path`: the socket is made on a short-lived thread that entered the namespace, and stays
/// in that namespace wherever it is used afterwards.
pub fn bind_in_netns(ns_path: &Path, addr: SocketAddr, device: Option<&str>) -> Result<std::net::TcpListener> {
    let path = ns_path.to_path_buf();
    let device = device.map(String::from);
    std::thread::spawn(move || -> Result<std::net::TcpListener> {
        let what = || format!("entering {}", path.display());
        let f = std::fs::File::open(&path).map_err(|e| Error::Io(what(), e))?;
        nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| Error::Io(what(), std::io::Error::from(e)))?;
        let bind = |e| Error::Io(format!("binding {addr} in {}", path.display()), e);
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).map_err(bind)?;
        s.set_reuse_address(true).map_err(bind)?;
        if let Some(d) = &device {
            s.bind_device(Some(d.as_bytes())).map_err(bind)?;
        }
        s.bind(&addr.into()).map_err(bind)?;
        s.listen(128).map_err(bind)?;
        s.set_nonblocking(true).map_err(bind)?;
        Ok(s.into())
    })
    .join()
    .map_err(|_| Error::Command("the thread opening the metadata listener failed".into()))?
}

impl Metadata {
    pub fn new(source: Arc<dyn Source>) -> Arc<Metadata> {
        Arc::new(Metadata { source, tokens: Mutex::new(HashMap::new()), listeners: Mutex::new(HashMap::new()) })
    }

    /// True when instance `id` has a listener.
    pub fn listening(&self, id: i64) -> bool {
        self.listeners.lock().unwrap_or_else(|p| p.into_inner()).get(&id).is_some_and(|h| !h.is_finished())
    }

    /// Opens instance `id`'s listener on its metadata link in the fabric namespace at
    /// `fabric`, unless it has one.
    pub fn ensure(self: &Arc<Self>, id: i64, fabric: &Path) -> Result<()> {
        if self.listening(id) {
            return Ok(());
        }
        let l = bind_in_netns(fabric, SocketAddr::from((ADDRESS, 80)), Some(&fabric_link(id)))?;
        let l = tokio::net::TcpListener::from_std(l).map_err(|e| Error::Io("metadata listener".into(), e))?;
        let me = self.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = l.accept().await else { break };
                let me = me.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let me = me.clone();
                        async move { Ok::<_, Infallible>(me.answer(id, req).await) }
                    });
                    let _ =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        self.listeners.lock().unwrap_or_else(|p| p.into_inner()).insert(id, task.abort_handle());
        Ok(())
    }

    /// Closes instance `id`'s listener and forgets its tokens.
    pub fn forget(&self, id: i64) {
        if let Some(h) = self.listeners.lock().unwrap_or_else(|p| p.into_inner()).remove(&id) {
            h.abort();
        }
        self.tokens.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, t| t.instance != id);
    }

    fn issue(&self, id: i64, secs: u64) -> String {
        use rand::RngExt;
        let bytes: [u8; 32] = rand::rng().random();
        let token = hex::encode(bytes);
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        tokens.retain(|_, t| t.expires > now);
        tokens.insert(token.clone(), Token { instance: id, expires: now + Duration::from_secs(secs) });
        token
    }

    fn valid(&self, id: i64, token: &str) -> bool {
        let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        tokens.get(token).is_some_and(|t| t.instance == id && t.expires > Instant::now())
    }

    async fn answer(&self, id: i64, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path().trim_end_matches('/');
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        if path == "/v1/token" {
            if req.method() != Method::PUT {
                return error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            }
            let secs = match header("metadata-token-expiry-seconds") {
                None => 3600,
                Some(v) => match v.parse::<u64>() {
                    Ok(s) if (1..=MAX_EXPIRY_SECS).contains(&s) => s,
                    _ => {
                        return error(
                            StatusCode::BAD_REQUEST,
                            "Metadata-Token-Expiry-Seconds must be a whole number between 1 and 43200",
                        );
                    }
                },
            };
            return reply(StatusCode::OK, "text/plain", self.issue(id, secs));
        }
        let doc = match path {
            "/v1/instance" => Doc::Instance,
            "/v1/network" => Doc::Network,
            "/v1/ssh-keys" => Doc::SshKeys,
            "/v1/user-data" => Doc::UserData,
            _ => return error(StatusCode::NOT_FOUND, "Not found"),
        };
        if req.method() != Method::GET {
            return error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
        }
        if !header("metadata-token").is_some_and(|t| self.valid(id, t)) {
            return error(StatusCode::UNAUTHORIZED, "Unauthorized");
        }
        match self.source.document(id, doc).await {
            None => error(StatusCode::NOT_FOUND, "Not found"),
            Some(body) if doc == Doc::UserData => reply(StatusCode::OK, "text/plain", body),
            Some(body) => reply(StatusCode::OK, "application/json", body),
        }
    }
}
