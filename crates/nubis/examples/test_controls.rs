//! A recipe for Rust test suites: a private nubis per suite, a clean snapshot restored before
//! each test, injected faults and a moved clock. Copy `Nubis` into your tests (it needs
//! `reqwest`, `serde_json` and `tokio`); run this example with
//! `cargo run -p nubis --example test_controls` (it starts `target/debug/nubis`, or `$NUBIS_BIN`).
//!
//! Each "test" below is what a `#[tokio::test]` of your own would hold.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const BOOTSTRAP: &str = "rust-example-bootstrap-token-0001";
const OPERATOR: &str = "rust-example-operator-token-00001";

/// One private nubis: in-memory database, port chosen by the system, an operator token.
struct Nubis {
    child: Child,
    /// `http://127.0.0.1:PORT`
    base: String,
    http: reqwest::Client,
}

impl Nubis {
    fn start() -> Nubis {
        let bin = std::env::var("NUBIS_BIN")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/debug/nubis").to_string());
        let dir = std::env::temp_dir().join(format!("nubis-rust-example-{}", std::process::id()));
        let mut child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--database", "sqlite::memory:", "--no-dataplane"])
            .args(["--bootstrap-token", BOOTSTRAP, "--operator-token", OPERATOR, "--data-dir"])
            .arg(&dir)
            .env("NUBIS_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start nubis (build it first: cargo build -p nubis)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = loop {
            let line = lines.next().expect("nubis exited").unwrap();
            if let Some(rest) = line.strip_prefix("nubis: listening on ") {
                break rest.trim_end_matches("/v4").to_string();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        // Never through a proxy: nubis is on 127.0.0.1.
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        Nubis { child, base, http }
    }

    async fn call(&self, token: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// The public API as the bootstrap owner.
    async fn api(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call(BOOTSTRAP, method, &format!("/v4{path}"), body).await
    }

    /// The test-control API with the operator token; panics unless it answers 200.
    async fn control(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(OPERATOR, method, &format!("/nubis/v1{path}"), body).await;
        assert_eq!(status, 200, "{path}: {v}");
        v
    }

    /// What each test starts from.
    async fn clean(&self) {
        self.control(reqwest::Method::POST, "/snapshots/clean/restore", None).await;
        for f in self.control(reqwest::Method::GET, "/faults", None).await["data"].as_array().unwrap() {
            self.control(reqwest::Method::DELETE, &format!("/faults/{}", f["id"]), None).await;
        }
        self.control(reqwest::Method::POST, "/clock/reset", None).await;
    }
}

impl Drop for Nubis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    use reqwest::Method;
    let nubis = Nubis::start();
    nubis.control(Method::POST, "/snapshots", Some(json!({"name": "clean"}))).await;

    // Test 1: the code under test creates a VPC.
    nubis.clean().await;
    let (status, _) = nubis.api(Method::POST, "/vpcs", Some(json!({"label": "net", "region": "us-east"}))).await;
    assert_eq!(status, 200);

    // Test 2: starts from the clean state, whatever test 1 left.
    nubis.clean().await;
    let (_, vpcs) = nubis.api(Method::GET, "/vpcs", None).await;
    assert_eq!(vpcs["results"], 0);

    // Test 3: the code under test must cope with a 503 (here it retries once).
    nubis.clean().await;
    nubis.control(Method::POST, "/faults", Some(json!({"route": "GET /v4/vpcs", "status": 503, "count": 1}))).await;
    let (first, _) = nubis.api(Method::GET, "/vpcs", None).await;
    let (second, _) = nubis.api(Method::GET, "/vpcs", None).await;
    assert_eq!((first, second), (503, 200));

    // Test 4: a token that expires in an hour, after the clock moved two.
    nubis.clean().await;
    let clock = nubis.control(Method::GET, "/clock", None).await;
    let now = chrono::NaiveDateTime::parse_from_str(clock["now"].as_str().unwrap(), "%Y-%m-%dT%H:%M:%S").unwrap();
    let expiry = (now + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%S").to_string();
    let (_, t) = nubis.api(Method::POST, "/profile/tokens", Some(json!({"label": "short", "expiry": expiry}))).await;
    let short = t["token"].as_str().unwrap().to_string();
    nubis.control(Method::POST, "/clock/advance", Some(json!({"seconds": 7200}))).await;
    let (status, _) = nubis.call(&short, Method::GET, "/v4/profile", None).await;
    assert_eq!(status, 401);

    println!("test_controls example: 4 tests passed against {}", nubis.base);
}
