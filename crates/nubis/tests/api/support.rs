//! The test harness: starts the real `nubis` binary on an ephemeral port with a fresh database
//! (SQLite in a temporary directory, or a fresh PostgreSQL database when `TEST_DATABASE_URL` is
//! set) and talks HTTP and JSON to it as a client would.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

#[path = "netns_mode.rs"]
mod netns_mode;
#[allow(unused_imports)]
pub use netns_mode::{Pool, client_source, instance_netns, netns};

pub const BIN: &str = env!("CARGO_BIN_EXE_nubis");
static COUNTER: AtomicU64 = AtomicU64::new(0);
static INIT: Once = Once::new();

fn init() {
    INIT.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A unique name for this test process and call.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}{}x{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The database URL of a fresh database: SQLite under `dir`, or a new PostgreSQL database
/// created on the server `TEST_DATABASE_URL` points at. Either is a copy of a database that
/// `nubis` migrated once for this test process ([`migrated_template`]): every server still
/// runs its migrations at start (none is left to apply), and a test does not pay for all of
/// them again (0.36 s of PostgreSQL's time a database).
async fn fresh_database(dir: &std::path::Path) -> String {
    let template = TEMPLATE.get_or_init(migrated_template).await;
    match std::env::var("TEST_DATABASE_URL") {
        Ok(base) if !base.is_empty() => {
            use sqlx::Connection;
            let name = unique("nubis_t");
            let mut conn = sqlx::postgres::PgConnection::connect(&base).await.expect("connect to TEST_DATABASE_URL");
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name} TEMPLATE {template}")))
                .execute(&mut conn)
                .await
                .expect("create database");
            let _ = conn.close().await;
            format!("{}/{name}", pg_server(&base))
        }
        _ => {
            let db = dir.join("nubis.db");
            std::fs::copy(template, &db).expect("copy the migrated database");
            format!("sqlite://{}", db.display())
        }
    }
}

/// TEST_DATABASE_URL names a database on the server (postgres://user@host:port/postgres); each
/// test server gets a new database next to it.
fn pg_server(base: &str) -> &str {
    base.rsplit_once('/').expect("TEST_DATABASE_URL must end with a database name").0
}

/// Whether `name` is [`unique`]'s name with `prefix` of a process that is no longer running.
fn of_an_ended_process(name: &str, prefix: &str) -> bool {
    let pid = name.strip_prefix(prefix).and_then(|rest| rest.split_once('x')).map(|(pid, _)| pid);
    pid.and_then(|p| p.parse::<u32>().ok()).is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
}

/// The migrated database every fresh one is copied from: a PostgreSQL database's name, or an
/// SQLite file's path.
static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();

/// Makes an empty database and lets `nubis admin` migrate it (any command opens the store, which
/// applies the migrations), as `nubis serve` would at its first start.
async fn migrated_template() -> String {
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        if of_an_ended_process(&entry.file_name().to_string_lossy(), "nubis-template-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = tmp.join(unique("nubis-template-"));
    std::fs::create_dir_all(&dir).unwrap();
    let (database, template) = match std::env::var("TEST_DATABASE_URL") {
        Ok(base) if !base.is_empty() => {
            use sqlx::Connection;
            let name = unique("nubis_template_");
            let mut conn = sqlx::postgres::PgConnection::connect(&base).await.expect("connect to TEST_DATABASE_URL");
            // The templates of test processes that have ended go (a server that outlives runs).
            let templates: Vec<(String,)> =
                sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE 'nubis\\_template\\_%'")
                    .fetch_all(&mut conn)
                    .await
                    .expect("list the templates");
            for (old,) in templates.iter().filter(|(d,)| of_an_ended_process(d, "nubis_template_")) {
                let sql = format!("DROP DATABASE IF EXISTS {old} WITH (FORCE)");
                let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut conn).await;
            }
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .expect("create the template database");
            let _ = conn.close().await;
            (format!("{}/{name}", pg_server(&base)), name)
        }
        _ => {
            let db = dir.join("nubis.db");
            (format!("sqlite://{}", db.display()), db.display().to_string())
        }
    };
    let out = tokio::process::Command::new(BIN)
        .args(["admin", "--data-dir"])
        .arg(&dir)
        .args(["--database", &database, "account", "list"])
        .output()
        .await
        .expect("run nubis admin");
    assert!(out.status.success(), "nubis admin could not migrate {database}: {}", String::from_utf8_lossy(&out.stderr));
    template
}

fn drop_database(base: &str, name: &str) {
    use sqlx::Connection;
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    rt.block_on(async {
        if let Ok(mut conn) = sqlx::postgres::PgConnection::connect(base).await {
            let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut conn).await;
            let _ = conn.close().await;
        }
    });
}

pub fn on_postgres() -> bool {
    std::env::var("TEST_DATABASE_URL").is_ok_and(|v| !v.is_empty())
}

/// Configuration used by tests unless they give their own: fast simulated instances, and a
/// rate limit high enough not to matter.
pub const TEST_CONFIG: &str = r#"
[limits]
rate_limit_requests = 1000000
rate_limit_window_secs = 60

[runtime]
provision_ms = 20
boot_ms = 30
shutdown_ms = 30
reboot_ms = 40

[dns]
offline = true
"#;

pub struct TestServer {
    pub base: String,
    pub addr: String,
    pub token: String,
    pub dir: PathBuf,
    pub database: String,
    /// The PostgreSQL database this server created and drops when it is dropped.
    owned_pg: Option<(String, String)>,
    /// What the server printed on standard output before it listened.
    pub startup: Vec<String>,
    child: Option<Child>,
    /// The configuration file's text.
    config: String,
    log_level: &'static str,
    extra: Vec<String>,
    /// netns mode: this server's slot of addresses on the host (see `netns_mode`).
    slot: Option<u32>,
}

pub struct Options {
    pub config: String,
    pub extra_args: Vec<String>,
    /// `NUBIS_LOG` of the server (`warn` unless a test reads the access log).
    pub log: &'static str,
    /// Database URL instead of a fresh one.
    pub database: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { config: TEST_CONFIG.to_string(), extra_args: Vec::new(), log: "warn", database: None }
    }
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(Options::default()).await
    }

    pub async fn start_with(opts: Options) -> TestServer {
        init();
        let dir = std::env::temp_dir().join(unique("nubis-test-"));
        std::fs::create_dir_all(&dir).unwrap();
        let fresh = opts.database.is_none();
        let database = match opts.database {
            Some(d) => d,
            None => fresh_database(&dir).await,
        };
        let slot = netns().then(|| netns_mode::take_slot(&database));
        let config = match slot {
            Some(k) => netns_mode::slot_config(&opts.config, k),
            None => opts.config,
        };
        std::fs::write(dir.join("config.toml"), &config).unwrap();
        let owned_pg = match std::env::var("TEST_DATABASE_URL") {
            Ok(base) if fresh && database.starts_with("postgres") => {
                database.rsplit_once('/').map(|(_, name)| (base, name.to_string()))
            }
            _ => None,
        };
        let token = unique("bootstrap-token-");
        let mut s = TestServer {
            base: String::new(),
            addr: String::new(),
            token,
            dir,
            database,
            owned_pg,
            startup: Vec::new(),
            child: None,
            config,
            log_level: opts.log,
            extra: opts.extra_args,
            slot,
        };
        s.spawn("127.0.0.1:0");
        s
    }

    fn spawn(&mut self, listen: &str) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("server.log")).unwrap();
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(["--listen", listen, "--data-dir"])
            .arg(&self.dir)
            .args(["--database", &self.database, "--bootstrap-token", &self.token, "--config"])
            .arg(self.dir.join("config.toml"))
            .args(&self.extra)
            .env("NUBIS_LOG", self.log_level)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start nubis");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        self.startup.clear();
        let addr = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(rest) = l.strip_prefix("nubis: listening on http://") {
                        break rest.trim_end_matches("/v4").to_string();
                    }
                    self.startup.push(l);
                }
                _ => {
                    let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                    panic!("nubis did not start:\n{log}");
                }
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        self.addr = addr.clone();
        self.base = format!("http://{addr}/v4");
        self.child = Some(child);
        if let Some(k) = self.slot {
            netns_mode::remember_tag(&self.base, k);
        }
    }

    /// The API as the bootstrap owner.
    pub fn api(&self) -> Api {
        Api::new(&self.base, &self.token)
    }

    pub fn api_with(&self, token: &str) -> Api {
        Api::new(&self.base, token)
    }

    /// Stops the server with SIGTERM and waits for it; returns whether it exited successfully.
    pub fn stop(&mut self) -> bool {
        match self.child.take() {
            Some(mut c) => {
                let _ = Command::new("kill").arg("-TERM").arg(c.id().to_string()).status();
                c.wait().is_ok_and(|s| s.success())
            }
            None => false,
        }
    }

    /// Kills the server with SIGKILL (no chance to clean up).
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Replaces the configuration file (read at the next [`TestServer::restart`]); in netns mode
    /// with this server's pools and host tag.
    pub fn set_config(&mut self, config: &str) {
        self.config = match self.slot {
            Some(k) => netns_mode::slot_config(config, k),
            None => config.to_string(),
        };
        std::fs::write(self.dir.join("config.toml"), &self.config).unwrap();
    }

    /// Starts the server again on the same database and address.
    pub fn restart(&mut self) {
        let listen = self.addr.clone();
        self.spawn(&listen);
    }

    /// Runs `nubis admin ...` on this server's database; returns (success, stdout, stderr).
    pub fn admin(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(BIN)
            .arg("admin")
            .arg("--data-dir")
            .arg(&self.dir)
            .args(["--database", &self.database, "--config"])
            .arg(self.dir.join("config.toml"))
            .args(args)
            .env("NUBIS_LOG", "warn")
            .output()
            .expect("run nubis admin");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Issues a token for a user through `nubis admin`.
    pub fn token_for(&self, username: &str, scopes: &str) -> String {
        let (ok, out, err) = self.admin(&["token", "create", "--username", username, "--scopes", scopes]);
        assert!(ok, "admin token create failed: {err}");
        out.trim().to_string()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The public IPv4 pool of `region` and the prefix of the subnets carved from it, as this
    /// server was configured (in netns mode, pools of its own in 198.18.0.0/15).
    pub fn public_pool(&self, region: &str) -> (Pool, u8) {
        netns_mode::public_pool(&netns_mode::pools_of(&self.config).0, region)
    }

    /// The private IPv4 pool of this server (in netns mode, its own /24 of 192.168.128.0/17).
    pub fn private_pool(&self) -> Pool {
        netns_mode::pools_of(&self.config).1
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill9();
        // A failing test shows what its server logged last (the log goes with the directory).
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("--- the last {} lines of the server's log ---", tail.len());
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        // A database per test adds up to gigabytes over the suite: drop it with the server.
        if let Some((base, name)) = self.owned_pg.take() {
            let _ = std::thread::spawn(move || drop_database(&base, &name)).join();
        }
        if let Some(k) = self.slot.take() {
            netns_mode::release_slot(k);
        }
    }
}

/// A response: status, headers and the JSON body (Null when empty or not JSON).
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    /// The `field` of every error in the envelope (`"-"` for null).
    pub fn fields(&self) -> Vec<String> {
        self.body["errors"]
            .as_array()
            .map(|a| a.iter().map(|e| e["field"].as_str().unwrap_or("-").to_string()).collect())
            .unwrap_or_default()
    }
    /// Asserts a 4xx with a well-formed envelope, and that `field` is among the error fields.
    #[track_caller]
    pub fn expect_error(&self, status: u16, field: &str) -> &Self {
        assert_eq!(self.status, status, "expected {status} on '{field}', got {}: {}", self.status, self.text);
        self.expect_envelope();
        assert!(self.fields().iter().any(|f| f == field), "expected an error on '{field}', got {}", self.text);
        self
    }
    #[track_caller]
    pub fn expect_envelope(&self) -> &Self {
        let errors = self.body["errors"].as_array().unwrap_or_else(|| panic!("no error envelope: {}", self.text));
        assert!(!errors.is_empty());
        for e in errors {
            assert!(e["reason"].as_str().is_some_and(|r| !r.is_empty()), "error without reason: {}", self.text);
            assert!(e.get("field").is_some(), "error without field key: {}", self.text);
        }
        self
    }
    #[track_caller]
    pub fn ok(&self) -> &Value {
        assert_eq!(self.status, 200, "expected 200, got {}: {}", self.status, self.text);
        &self.body
    }
    #[track_caller]
    pub fn status_is(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "expected {status}, got {}: {}", self.status, self.text);
        self
    }
}

#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub token: Option<String>,
    pub client: reqwest::Client,
}

impl Api {
    pub fn new(base: &str, token: &str) -> Api {
        init();
        let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).no_proxy().build().unwrap();
        Api { base: base.to_string(), token: Some(token.to_string()), client }
    }

    pub fn anonymous(&self) -> Api {
        Api { token: None, ..self.clone() }
    }

    pub fn with_token(&self, token: &str) -> Api {
        Api { token: Some(token.to_string()), ..self.clone() }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = if path.starts_with("http") { path.to_string() } else { format!("{}{path}", self.base) };
        let mut req = self.client.request(method, url);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let res = req.send().await.expect("request failed");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp { status, headers, body, text }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(reqwest::Method::GET, path, None, &[]).await
    }
    pub async fn get_filtered(&self, path: &str, filter: &str) -> Resp {
        self.send(reqwest::Method::GET, path, None, &[("X-Filter", filter)]).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(reqwest::Method::POST, path, Some(&body), &[]).await
    }
    pub async fn post_empty(&self, path: &str) -> Resp {
        self.send(reqwest::Method::POST, path, None, &[]).await
    }
    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.send(reqwest::Method::PUT, path, Some(&body), &[]).await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.send(reqwest::Method::DELETE, path, None, &[]).await
    }
    /// A raw body with an explicit content type.
    pub async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &'static [u8],
        content_type: Option<&str>,
    ) -> Resp {
        let mut req = self.client.request(method, format!("{}{path}", self.base)).body(body);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let res = req.send().await.expect("request failed");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp { status, headers, body, text }
    }
}

/// Creates a user through the API and returns a token for it (issued by `nubis admin`).
pub async fn user_with_token(server: &TestServer, username: &str, restricted: bool, scopes: &str) -> (Value, Api) {
    let u = server
        .api()
        .post(
            "/account/users",
            json!({"username": username, "email": format!("{username}@example.com"), "restricted": restricted}),
        )
        .await
        .ok()
        .clone();
    let token = server.token_for(username, scopes);
    (u, server.api_with(&token))
}

/// Creates a second, separate account with its own owner and returns the owner's API.
pub fn other_account(server: &TestServer) -> Api {
    let owner = unique("owner");
    let (ok, _, err) =
        server.admin(&["account", "create", "--company", "Other Co", "--username", &owner, "--email", "o@example.com"]);
    assert!(ok, "{err}");
    server.api_with(&server.token_for(&owner, "*"))
}

/// The actions of the account's events, newest first.
pub async fn event_actions(api: &Api) -> Vec<String> {
    let r = api.get("/account/events?page_size=500").await;
    r.ok()["data"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap().to_string()).collect()
}

/// Polls `f` until it returns Some, or panics after `secs`.
pub async fn eventually<T, F, Fut>(secs: u64, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        if std::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One integer from the server's database (for invariants the API cannot show, such as rows
/// left behind). Read-only.
pub async fn db_scalar(server: &TestServer, sql: &str) -> i64 {
    if let Some(path) = server.database.strip_prefix("sqlite://") {
        let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the test database");
        return c.query_row(sql, [], |r| r.get::<_, i64>(0)).expect("query");
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&server.database).await.expect("connect to the test database");
    let v: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_one(&mut conn).await.expect("query");
    let _ = conn.close().await;
    v
}

/// One text column of every row of a read-only statement on the server's database.
pub async fn db_texts(server: &TestServer, sql: &str) -> Vec<String> {
    if let Some(path) = server.database.strip_prefix("sqlite://") {
        let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the test database");
        let mut st = c.prepare(sql).expect("prepare");
        return st.query_map([], |r| r.get::<_, String>(0)).expect("query").map(|r| r.expect("row")).collect();
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&server.database).await.expect("connect to the test database");
    let v: Vec<String> =
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_all(&mut conn).await.expect("query");
    let _ = conn.close().await;
    v
}

/// The plan the server's database makes for a read, one line a step (SQLite's `EXPLAIN QUERY
/// PLAN` details; PostgreSQL's `EXPLAIN` with table scans and sorts disabled, so that a plan on
/// an almost empty table shows which index could serve the read).
pub async fn db_plan(server: &TestServer, sql: &str) -> String {
    if let Some(path) = server.database.strip_prefix("sqlite://") {
        let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the test database");
        let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).expect("prepare");
        let steps = st.query_map([], |r| r.get::<_, String>(3)).expect("query").map(|r| r.expect("row"));
        return steps.collect::<Vec<_>>().join("\n");
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&server.database).await.expect("connect to the test database");
    for off in ["enable_seqscan", "enable_bitmapscan", "enable_sort"] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET {off} = off"))).execute(&mut conn).await.expect("set");
    }
    let v: Vec<String> =
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("EXPLAIN {sql}"))).fetch_all(&mut conn).await.expect("explain");
    let _ = conn.close().await;
    v.join("\n")
}
