//! Framing tests' tools: a raw back end that records what it receives (every byte, and the
//! requests a strict parser finds in them) and answers from a script; a raw client that sends
//! bytes, half-closes and parses every response it gets until the proxy closes.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nubis_dataplane::DataplaneSettings;
use nubis_model::balancer::{CheckKind, NodeMode, NodeSpec, Protocol};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{DEADLINE, Dp, balancer, check, config, connect_from, eventually, test_settings};

/// The default answer: `200`, body `ok`, keep-alive.
pub const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// A balancer with one `http` config whose only node is a recording back end.
pub struct Rig {
    pub dp: Dp,
    pub lb: SocketAddr,
    pub rec: Recorder,
}

pub async fn rig(answers: Vec<Answer>) -> Rig {
    rig_with(test_settings(), answers).await
}

/// As [`rig`], with these settings (proxying always on one worker, so that a back-end connection
/// kept for reuse is found by the next client connection).
pub async fn rig_with(settings: DataplaneSettings, answers: Vec<Answer>) -> Rig {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let rec = Recorder::start("127.168.201.1", answers).await;
    let node = NodeSpec { id: 1, address: rec.node_addr(), weight: 1, mode: NodeMode::Accept };
    let mut c = config(1, 8080, Protocol::Http, vec![node]);
    c.check = check(CheckKind::None);
    let ip = format!("127.21.{}.{}", n / 250, n % 250 + 1);
    let settings = DataplaneSettings { worker_threads: 1, ..settings };
    let dp = Dp::start(settings, vec![balancer(1, &ip, vec![c])]).await;
    let lb = dp.listening(1, 1).await;
    Rig { dp, lb, rec }
}

/// One request as the back end read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// Which accepted connection it came on (0 first).
    pub conn: usize,
    pub method: String,
    pub target: String,
    /// Every field as received (names as sent).
    pub headers: Vec<(String, String)>,
    /// The body, decoded when chunked.
    pub body: Vec<u8>,
    /// Trailer section of a chunked body, as received.
    pub trailers: Vec<u8>,
    /// What makes its framing less than canonical: several framing fields, both, a
    /// `Transfer-Encoding` other than `chunked`, a `Content-Length` with leading zeros.
    pub ambiguities: Vec<String>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn count(&self, name: &str) -> usize {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).count()
    }
    /// `METHOD target` and the body, for comparisons.
    pub fn summary(&self) -> (String, Vec<u8>) {
        (format!("{} {}", self.method, self.target), self.body.clone())
    }
}

/// One scripted answer: the bytes, and whether the back end closes after writing them.
#[derive(Clone)]
pub struct Answer {
    pub bytes: Vec<u8>,
    pub close: bool,
}

#[derive(Default)]
struct State {
    /// Bytes received, per connection.
    bytes: Vec<Vec<u8>>,
    /// Connections the peer (the proxy) closed.
    closed: Vec<bool>,
    requests: Vec<Received>,
    /// Why a connection's bytes could not be parsed.
    errors: Vec<(usize, String)>,
    script: VecDeque<Answer>,
    /// The sending half of each connection.
    writers: Vec<Arc<tokio::sync::Mutex<OwnedWriteHalf>>>,
}

/// A back end on `127.168.X.Y` (its node address is `192.168.X.Y`).
pub struct Recorder {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Recorder {
    /// Answers the next requests with `answers` in turn, then with [`OK`].
    pub async fn start(ip: &str, answers: Vec<Answer>) -> Recorder {
        let l = TcpListener::bind((ip, 0)).await.unwrap();
        let addr = l.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State { script: answers.into(), ..State::default() }));
        let st = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((s, _)) = l.accept().await else { continue };
                let (r, w) = s.into_split();
                let w = Arc::new(tokio::sync::Mutex::new(w));
                let id = {
                    let mut g = st.lock().unwrap();
                    g.bytes.push(Vec::new());
                    g.closed.push(false);
                    g.writers.push(w.clone());
                    g.bytes.len() - 1
                };
                tokio::spawn(serve(r, w, id, st.clone()));
            }
        });
        Recorder { addr, state, task }
    }

    pub fn node_addr(&self) -> std::net::SocketAddrV4 {
        let SocketAddr::V4(a) = self.addr else { panic!("v4 only") };
        let o = a.ip().octets();
        std::net::SocketAddrV4::new(std::net::Ipv4Addr::new(192, 168, o[2], o[3]), a.port())
    }

    pub fn requests(&self) -> Vec<Received> {
        self.state.lock().unwrap().requests.clone()
    }
    /// The requests so far, forgetting them.
    pub fn take_requests(&self) -> Vec<Received> {
        std::mem::take(&mut self.state.lock().unwrap().requests)
    }
    pub fn errors(&self) -> Vec<(usize, String)> {
        self.state.lock().unwrap().errors.clone()
    }
    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().bytes.len()
    }
    pub fn bytes(&self, conn: usize) -> Vec<u8> {
        self.state.lock().unwrap().bytes[conn].clone()
    }
    /// Writes `bytes` on connection `conn`, out of script.
    pub async fn send(&self, conn: usize, bytes: &[u8]) {
        let w = self.state.lock().unwrap().writers[conn].clone();
        w.lock().await.write_all(bytes).await.unwrap();
    }

    /// Waits until the proxy has closed connection `conn`.
    pub async fn wait_closed(&self, conn: usize) {
        eventually(&format!("back-end connection {conn} closed"), async || {
            self.state.lock().unwrap().closed.get(conn).copied().unwrap_or(false).then_some(())
        })
        .await
    }
}

async fn serve(mut r: OwnedReadHalf, w: Arc<tokio::sync::Mutex<OwnedWriteHalf>>, id: usize, st: Arc<Mutex<State>>) {
    let mut buf = Vec::new();
    let mut b = vec![0u8; 64 * 1024];
    // After an answer that closes, the connection is only read (to see the proxy close it).
    let mut writing = true;
    loop {
        let n = r.read(&mut b).await.unwrap_or(0);
        let Some(answers) = ingest(&st, id, &mut buf, &b[..n]) else {
            let _ = w.lock().await.shutdown().await;
            return;
        };
        let mut w = w.lock().await;
        for a in answers {
            if !writing {
                break;
            }
            if w.write_all(&a.bytes).await.is_err() {
                return;
            }
            if a.close {
                let _ = w.shutdown().await;
                writing = false;
            }
        }
    }
}

/// Records `data` from connection `id` and the requests it completes; the answers to send, or
/// None when the connection is over (closed, or unparsable).
fn ingest(st: &Mutex<State>, id: usize, buf: &mut Vec<u8>, data: &[u8]) -> Option<Vec<Answer>> {
    let mut g = st.lock().unwrap();
    if data.is_empty() {
        g.closed[id] = true;
        return None;
    }
    g.bytes[id].extend_from_slice(data);
    buf.extend_from_slice(data);
    let mut answers = Vec::new();
    loop {
        match parse_request(buf) {
            Ok(None) => return Some(answers),
            Ok(Some((mut r, used))) => {
                r.conn = id;
                g.requests.push(r);
                buf.drain(..used);
                answers.push(g.script.pop_front().unwrap_or(Answer { bytes: OK.to_vec(), close: false }));
            }
            Err(e) => {
                g.errors.push((id, e));
                return None;
            }
        }
    }
}

/// A complete request at the start of `b`, with the bytes it used; the framing is read as a
/// strict recipient would, noting what is not canonical.
pub fn parse_request(b: &[u8]) -> Result<Option<(Received, usize)>, String> {
    let mut hs = [httparse::EMPTY_HEADER; 128];
    let mut r = httparse::Request::new(&mut hs);
    let n = match r.parse(b) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("unparsable head: {e}: {:?}", String::from_utf8_lossy(b))),
    };
    let headers: Vec<(String, String)> =
        r.headers.iter().map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned())).collect();
    let mut ambiguities = Vec::new();
    let te: Vec<&str> =
        headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding")).map(|(_, v)| v.as_str()).collect();
    let cl: Vec<&str> =
        headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("content-length")).map(|(_, v)| v.as_str()).collect();
    if !te.is_empty() && !cl.is_empty() {
        ambiguities.push("both Transfer-Encoding and Content-Length".into());
    }
    if te.len() > 1 || cl.len() > 1 {
        ambiguities.push("several framing fields".into());
    }
    if te.iter().any(|v| !v.eq_ignore_ascii_case("chunked")) {
        ambiguities.push(format!("Transfer-Encoding {te:?}"));
    }
    if cl.iter().any(|v| v.len() > 1 && v.starts_with('0') || v.contains(',')) {
        ambiguities.push(format!("Content-Length {cl:?}"));
    }
    let chunked =
        te.last().is_some_and(|v| v.split(',').next_back().is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked")));
    let (body, trailers, used) = if chunked {
        match dechunk_strict(&b[n..])? {
            None => return Ok(None),
            Some((body, trailers, used)) => (body, trailers, n + used),
        }
    } else {
        let len: usize = match cl.first() {
            None => 0,
            Some(v) => v.split(',').next().unwrap().trim().parse().map_err(|_| format!("Content-Length {v:?}"))?,
        };
        if b.len() < n + len {
            return Ok(None);
        }
        (b[n..n + len].to_vec(), Vec::new(), n + len)
    };
    let method = r.method.unwrap().to_string();
    let target = r.path.unwrap().to_string();
    Ok(Some((Received { conn: 0, method, target, headers, body, trailers, ambiguities }, used)))
}

/// A decoded chunked body: payload, trailer section, bytes used.
type Dechunked = (Vec<u8>, Vec<u8>, usize);

/// Decodes a chunked body (CRLF line ends only).
fn dechunk_strict(b: &[u8]) -> Result<Option<Dechunked>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let Some(end) = b[i..].windows(2).position(|w| w == b"\r\n").map(|p| i + p) else { return Ok(None) };
        let line = std::str::from_utf8(&b[i..end]).map_err(|_| "chunk size line".to_string())?;
        let size_txt = line.split(';').next().unwrap().trim_end_matches([' ', '\t']);
        let size = u64::from_str_radix(size_txt, 16).map_err(|_| format!("chunk size {line:?}"))? as usize;
        i = end + 2;
        if size == 0 {
            let Some(t) = b[i..]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|p| i + p + 4)
                .or_else(|| b[i..].starts_with(b"\r\n").then_some(i + 2))
            else {
                return Ok(None);
            };
            return Ok(Some((out, b[i..t - 2].to_vec(), t)));
        }
        if b.len() < i + size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&b[i..i + size]);
        if &b[i + size..i + size + 2] != b"\r\n" {
            return Err("no CRLF after chunk data".into());
        }
        i += size + 2;
    }
}

/// One response as the client read it.
#[derive(Debug, Clone)]
pub struct Got {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }
}

/// What a client received on one connection.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub responses: Vec<Got>,
    /// Bytes after the last response that do not make a response.
    pub rest: Vec<u8>,
}

impl Exchange {
    pub fn statuses(&self) -> Vec<u16> {
        self.responses.iter().map(|r| r.status).collect()
    }
}

/// Sends `bytes` on a new connection to `to`, then half-closes, and reads until the proxy
/// closes. `head` says the requests are `HEAD` (their responses have no body).
pub async fn exchange(to: SocketAddr, bytes: &[u8], head: bool) -> Exchange {
    let mut s = connect_from("127.0.0.1", to).await.unwrap();
    let _ = s.write_all(bytes).await;
    let _ = s.shutdown().await;
    read_all(&mut s, head).await
}

/// Reads until what arrived ends with `end`, and returns it: a test that must act only after
/// the proxy has forwarded something waits for it here.
pub async fn read_through(s: &mut TcpStream, end: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut b = [0u8; 16384];
    while !got.ends_with(end) {
        match tokio::time::timeout(DEADLINE, s.read(&mut b)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&b[..n]),
            other => panic!(
                "closed or silent ({other:?}) before {:?}: {:?}",
                String::from_utf8_lossy(end),
                String::from_utf8_lossy(&got)
            ),
        }
    }
    got
}

/// Reads until the peer closes (or resets) and parses the responses.
pub async fn read_all(s: &mut TcpStream, head: bool) -> Exchange {
    read_all_after(s, Vec::new(), head).await
}

/// Like [`read_all`], with `got` already read from `s`.
pub async fn read_all_after(s: &mut TcpStream, mut got: Vec<u8>, head: bool) -> Exchange {
    let mut b = [0u8; 16384];
    loop {
        match tokio::time::timeout(DEADLINE, s.read(&mut b)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => got.extend_from_slice(&b[..n]),
            Err(_) => panic!("the proxy neither answered nor closed: {:?}", String::from_utf8_lossy(&got)),
        }
    }
    parse_responses(&got, head)
}

/// Splits `b` into responses: `1xx`, `204`, `304` and responses to `HEAD` have no body; then
/// chunked, `Content-Length`, or until the end.
pub fn parse_responses(mut b: &[u8], head: bool) -> Exchange {
    let mut responses = Vec::new();
    loop {
        let mut hs = [httparse::EMPTY_HEADER; 128];
        let mut r = httparse::Response::new(&mut hs);
        let Ok(httparse::Status::Complete(n)) = r.parse(b) else { break };
        let status = r.code.unwrap();
        let value = |name: &str| r.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value);
        let no_body = head || (100..200).contains(&status) || status == 204 || status == 304;
        let (body, used) = if no_body {
            (Vec::new(), n)
        } else if value("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case(b"chunked")) {
            match dechunk_strict(&b[n..]) {
                Ok(Some((body, _, used))) => (body, n + used),
                _ => break,
            }
        } else if let Some(v) = value("content-length") {
            let len: usize = std::str::from_utf8(v).unwrap().parse().unwrap();
            if b.len() < n + len {
                break;
            }
            (b[n..n + len].to_vec(), n + len)
        } else {
            (b[n..].to_vec(), b.len())
        };
        let head_text = String::from_utf8_lossy(&b[..n]).into_owned();
        responses.push(Got { status, head: head_text, body });
        b = &b[used..];
    }
    Exchange { responses, rest: b.to_vec() }
}
