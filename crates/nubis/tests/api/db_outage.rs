//! The database lost and back (issue 15): with its PostgreSQL stopped under load, the API
//! answers 503 with the error envelope and `Retry-After` (never a 500, never a hang), `/healthz`
//! says the database is unreachable, balancers keep proxying with the last state known (and keep
//! checking their nodes), and when PostgreSQL is back everything recovers without a restart:
//! every write acknowledged before the outage is there, what the data plane saw meanwhile is
//! recorded, and an instance whose shutdown ended during the outage is recorded offline.
//!
//! The test runs its own PostgreSQL (initdb with the binaries of `$PGBIN`, which
//! `scripts/pg.sh` exports, on a free 127.0.0.1 port) so that it can stop it; it never touches
//! the shared test server. Without `PGBIN` it says so and stops (and fails in CI's PostgreSQL run).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::durability::try_send;
use crate::lb_support::*;
use crate::support::*;

/// The PostgreSQL half of the suite of a CI run (`.ci/run` sets `NUBIS_REQUIRE_POSTGRES=1`; the
/// half on SQLite runs before `PGBIN` is known).
pub fn postgres_required() -> bool {
    on_postgres() && std::env::var("NUBIS_REQUIRE_POSTGRES").is_ok_and(|v| v == "1")
}

/// A private PostgreSQL server in a temporary directory, removed when dropped.
struct PrivatePg {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// Running as root: PostgreSQL refuses to, so it runs as the `postgres` user.
    as_postgres: bool,
}

/// A free port of 127.0.0.1 below the kernel's ephemeral range. The server is stopped and started
/// again on its port; a port of that range could meanwhile be handed to another test's listener
/// bound to port 0 (once an HTTP server answered the restarted database's clients and the
/// database could not start).
fn port_outside_the_ephemeral_range() -> u16 {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let from = low.saturating_sub(8192).max(1024);
    let span = u64::from(low - from).max(1);
    let start = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64
        ^ u64::from(std::process::id());
    (0..512)
        .map(|i| from + ((start + i * 7919) % span) as u16)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port below the ephemeral range")
}

impl PrivatePg {
    /// Creates and starts one; `None` when `PGBIN` is not set.
    fn start() -> Option<PrivatePg> {
        let bin = PathBuf::from(std::env::var_os("PGBIN").filter(|b| !b.is_empty())?);
        let dir = std::env::temp_dir().join(unique("nubis-outage-pg-"));
        std::fs::create_dir_all(&dir).unwrap();
        let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        if root {
            if !Command::new("id").arg("postgres").output().is_ok_and(|o| o.status.success()) {
                Command::new("useradd").args(["-r", "-M", "postgres"]).status().unwrap();
            }
            assert!(Command::new("chown").arg("postgres").arg(&dir).status().unwrap().success());
        }
        let port = port_outside_the_ephemeral_range();
        let pg = PrivatePg { bin, dir, port, as_postgres: root };
        let data = pg.dir.join("data");
        let out = pg
            .cmd("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"])
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        pg.up();
        Some(pg)
    }

    fn cmd(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Starts the server (again) and waits until it accepts connections. Commits are
    /// synchronous: an immediate stop must not lose an acknowledged write.
    fn up(&self) {
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=100",
            self.port,
            self.dir.display()
        );
        let out = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl start: {}{}", String::from_utf8_lossy(&out.stderr), self.log());
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`).
    fn down(&self) {
        let out = self.cmd("pg_ctl").arg("-D").arg(self.data()).args(["-m", "immediate", "-w", "stop"]).output();
        assert!(out.unwrap().status.success(), "pg_ctl stop");
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = self.cmd("pg_ctl").arg("-D").arg(self.data()).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A balancer with one HTTP config and one node on a loopback back end; waits until it serves.
async fn serving_balancer(api: &Api) -> (SocketAddr, Backend, i64, i64) {
    let (_, private) = backend_instance(api, "us-east").await;
    let backend = Backend::http("kept", mapped(&private, 7100)).await;
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    let id = nb["id"].as_i64().unwrap();
    // Two failed checks mark the node down: one check that a loaded machine delays past its
    // timeout must not take the node out while the test expects it to serve.
    let body = json!({"port": 7101, "protocol": "http", "check": "connection", "check_interval": 3,
                      "check_timeout": 2, "check_attempts": 2});
    let cid = api.post(&format!("/nodebalancers/{id}/configs"), body).await.ok()["id"].as_i64().unwrap();
    let node = json!({"label": "node-kept", "address": format!("{private}:7100")});
    api.post(&format!("/nodebalancers/{id}/configs/{cid}/nodes"), node).await.ok();
    until_nodes_status(api, id, cid, 1, 0).await;
    let addr = lb_addr(&nb, 7101);
    until_serving(addr).await;
    (addr, backend, id, cid)
}

/// Asserts a 503 with the envelope and `Retry-After`.
#[track_caller]
fn expect_unavailable(r: &Resp) {
    assert_eq!(r.status, 503, "expected 503, got {}: {}", r.status, r.text);
    r.expect_envelope();
    let after: u64 = r.header("retry-after").expect("Retry-After").parse().expect("Retry-After in seconds");
    assert!(after > 0);
}

#[tokio::test]
async fn with_postgresql_down_the_api_answers_503_balancers_keep_serving_and_all_recovers() {
    let Some(pg) = PrivatePg::start() else {
        assert!(!postgres_required(), "PGBIN is not set, and CI requires the PostgreSQL half of the suite");
        eprintln!("SKIPPED: PGBIN is not set (scripts/pg.sh exports it; scripts/test.sh and CI set it)");
        return;
    };
    {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&pg.url("postgres")).await.expect("connect to the private server");
        sqlx::raw_sql("CREATE DATABASE nubis").execute(&mut c).await.unwrap();
        let _ = c.close().await;
    }
    // A shutdown takes 2 s: one started just before the outage ends during it.
    let config = lb_config().replace("shutdown_ms = 30", "shutdown_ms = 2000");
    assert!(config.contains("shutdown_ms = 2000"));
    let s = TestServer::start_with(Options { config, database: Some(pg.url("nubis")), ..Default::default() }).await;
    let api = s.api();
    let (lb, mut backend, nb, cid) = serving_balancer(&api).await;
    let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": "outlasts", "booted": true});
    let instance = api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap();
    crate::instances::wait_status(&api, instance, "running").await;

    // Load: writers creating VPCs, recording what was acknowledged and every answer's status.
    let acked = Arc::new(Mutex::new(Vec::<(i64, String)>::new()));
    let answers = Arc::new(Mutex::new(Vec::<(u16, Value, Duration)>::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..3 {
        let (api, acked, answers, stop) = (api.clone(), acked.clone(), answers.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let label = format!("outage-{w}-{i}");
                let t = Instant::now();
                let r = try_send(&api, reqwest::Method::POST, "/vpcs", &json!({"label": label, "region": "us-east"}))
                    .await
                    .expect("the API answers while the database is down");
                if r.0 == 200 {
                    acked.lock().unwrap().push((r.1["id"].as_i64().unwrap(), label));
                } else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                answers.lock().unwrap().push((r.0, r.1, t.elapsed()));
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let before_outage = acked.lock().unwrap().len();
    assert!(before_outage > 0, "writes succeed while the database is up");

    api.post(&format!("/compute/instances/{instance}/shutdown"), json!({})).await.ok();
    pg.down();
    let root = s.base.trim_end_matches("/v4").to_string();
    // Reads and writes: 503, the envelope, Retry-After; within the acquire timeout.
    for _ in 0..2 {
        let t = Instant::now();
        expect_unavailable(&api.get("/vpcs").await);
        expect_unavailable(&api.post("/vpcs", json!({"label": "while-down", "region": "us-east"})).await);
        assert!(t.elapsed() < Duration::from_secs(15), "answers came after {:?}", t.elapsed());
    }
    let h = api.anonymous().get(&format!("{root}/healthz")).await;
    expect_unavailable(&h);
    assert!(h.text.contains("database"), "{}", h.text);
    // The data plane serves the last state it knew, for longer than several reconcile intervals.
    let served_before = backend.count();
    for _ in 0..10 {
        let r = get(lb, "/", None).await.expect("the balancer accepts connections");
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.body, "kept");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(backend.count() >= served_before + 10);
    // The back end fails while the database is down: the data plane's health check sees it
    // (and answers 503 without a node up); the change is recorded once the database is back.
    backend.stop().await;
    eventually(30, "the balancer to see its node down", || async move {
        get(lb, "/", None).await.ok().filter(|r| r.status == 503).map(|_| ())
    })
    .await;
    // The health check marks the node down and its report cannot be written yet.
    eventually(40, "the node's health to be reported while the database is down", || async {
        s.log().contains("recording a node's health failed").then_some(())
    })
    .await;

    pg.up();
    eventually(60, "the API to recover", || {
        let api = api.clone();
        async move { (api.get("/vpcs").await.status == 200).then_some(()) }
    })
    .await;
    eventually(30, "/healthz to recover", || {
        let (api, root) = (api.clone(), root.clone());
        async move { (api.anonymous().get(&format!("{root}/healthz")).await.status == 200).then_some(()) }
    })
    .await;
    // The shutdown ended while the database was down: it is recorded now, with its event.
    crate::instances::wait_status(&api, instance, "offline").await;
    let events = api.get_filtered("/account/events", r#"{"action": "instance_shutdown"}"#).await;
    let shutdown = &events.ok()["data"][0];
    assert_eq!((shutdown["entity"]["id"].as_i64(), &shutdown["status"]), (Some(instance), &json!("finished")));
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    // Every answer was a success or a 503 with Retry-After; none took longer than a short wait.
    for (status, body, took) in answers.lock().unwrap().iter() {
        assert!(matches!(status, 200 | 503), "answered {status}: {body}");
        if *status == 503 {
            assert!(body["errors"][0]["reason"].is_string(), "{body}");
        }
        assert!(*took < Duration::from_secs(15), "an answer took {took:?}");
    }
    assert!(answers.lock().unwrap().iter().any(|(s, _, _)| *s == 503), "the writers saw the outage");
    // Nothing acknowledged is lost; new writes work.
    let acked = acked.lock().unwrap().clone();
    for (id, label) in &acked {
        assert_eq!(api.get(&format!("/vpcs/{id}")).await.ok()["label"], label.as_str(), "VPC {id} lost");
    }
    api.post("/vpcs", json!({"label": "after-outage", "region": "us-east"})).await.ok();
    until_nodes_status(&api, nb, cid, 0, 1).await;
    let answers = answers.lock().unwrap();
    let slowest = answers.iter().map(|a| a.2).max().unwrap_or_default();
    let unavailable = answers.iter().filter(|a| a.0 == 503).count();
    eprintln!(
        "{} writes: {} acknowledged, {unavailable} answered 503; slowest answer {slowest:?}",
        answers.len(),
        acked.len()
    );
}

/// A TCP relay on 127.0.0.1 in front of a PostgreSQL server that can go silent: while frozen it
/// accepts connections and keeps every connection open but forwards nothing, as a network cut
/// without resets does.
struct Relay {
    addr: SocketAddr,
    frozen: Arc<tokio::sync::watch::Sender<bool>>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> Relay {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let frozen = Arc::new(tokio::sync::watch::channel(false).0);
        let f = frozen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = l.accept().await else { continue };
                let f = f.clone();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(upstream).await else { return };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::join!(pump(cr, sw, f.subscribe()), pump(sr, cw, f.subscribe()));
                });
            }
        });
        Relay { addr, frozen, task }
    }

    fn freeze(&self, on: bool) {
        self.frozen.send_replace(on);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies `from` to `to`, holding every chunk while frozen.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frozen: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.wait_for(|f| !*f).await.is_err() {
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

// Multi-threaded: the relay runs in this process and must go on while the harness waits for the
// server to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_silent_is_answered_503_in_bounded_time_and_recovers() {
    if !on_postgres() {
        eprintln!("PostgreSQL only: SQLite has no network to lose");
        return;
    }
    // A database of its own on the shared test server, reached through the relay.
    let base = std::env::var("TEST_DATABASE_URL").unwrap();
    let target = crate::backup::Target::new(&std::env::temp_dir()).await;
    let upstream: SocketAddr = {
        let hostport = base.split('@').nth(1).unwrap().split('/').next().unwrap();
        tokio::net::lookup_host(hostport).await.unwrap().next().unwrap()
    };
    let relay = Relay::start(upstream).await;
    let name = target.url.rsplit_once('/').unwrap().1;
    let url = format!("postgres://postgres@{}/{name}", relay.addr);
    let s = TestServer::start_with(Options { database: Some(url), ..Default::default() }).await;
    let api = s.api();
    let before = crate::vpcs::create_vpc(&api, "before-silence", &[]).await;
    let root = s.base.trim_end_matches("/v4").to_string();

    relay.freeze(true);
    // Connections in the pool wait for an answer that never comes; new ones never finish
    // their handshake. Every answer is still a 503 with Retry-After, within the statement bound.
    let t = Instant::now();
    expect_unavailable(&api.get("/vpcs").await);
    expect_unavailable(&api.post("/vpcs", json!({"label": "while-silent", "region": "us-east"})).await);
    assert!(t.elapsed() < Duration::from_secs(25), "answers came after {:?}", t.elapsed());
    let t = Instant::now();
    expect_unavailable(&api.anonymous().get(&format!("{root}/healthz")).await);
    assert!(t.elapsed() < Duration::from_secs(5), "/healthz answered after {:?}", t.elapsed());

    relay.freeze(false);
    eventually(60, "the API to recover", || {
        let api = api.clone();
        async move { (api.get("/vpcs").await.status == 200).then_some(()) }
    })
    .await;
    assert_eq!(api.get(&format!("/vpcs/{}", before["id"])).await.ok()["label"], "before-silence");
    crate::vpcs::create_vpc(&api, "after-silence", &[]).await;
    drop(s);
}
