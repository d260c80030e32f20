//! What the netns tests share: a server with the netns driver, the sweeper, commands inside an
//! instance's namespace, HTTP to the host's nubis addresses.

use std::process::Command;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::support::{Api, BIN, Options, TestServer, eventually};

/// The configuration of netns test servers.
pub const NETNS_CONFIG: &str = r#"
[limits]
rate_limit_requests = 1000000
rate_limit_window_secs = 60

[runtime]
driver = "netns"
shutdown_grace_ms = 1000

[dns]
offline = true
"#;

/// Removes everything `nubis*` from the host when made and when dropped (declare it before the
/// server, so that the server is stopped first).
pub struct Sweeper;

impl Sweeper {
    pub fn new() -> Sweeper {
        sweep();
        Sweeper
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        sweep();
    }
}

fn sweep() {
    let dir = std::env::temp_dir().join(crate::support::unique("nubis-sweep-"));
    let out = Command::new(BIN)
        .args(["admin", "--data-dir"])
        .arg(&dir)
        .args(["runtime", "sweep"])
        .env("NUBIS_LOG", "warn")
        .output()
        .expect("run nubis admin runtime sweep");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "sweep failed: {}", String::from_utf8_lossy(&out.stderr));
}

pub async fn server() -> TestServer {
    TestServer::start_with(Options { config: NETNS_CONFIG.into(), ..Default::default() }).await
}

pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// User data that serves `I am <hostname>` over HTTP on `port`.
pub fn http_server_user_data(port: u16) -> String {
    b64(&format!(
        "#!/bin/sh\nmkdir -p /tmp/www && cd /tmp/www && echo \"I am $(hostname)\" > index.html\n\
         nohup python3 -m http.server {port} >/tmp/http.log 2>&1 &\necho serving on {port}\n"
    ))
}

/// Creates an instance (from `linode/debian12` unless `body` names an image) and waits until it
/// is running; its record.
pub async fn instance(api: &Api, body: Value) -> Value {
    let mut body = body;
    let o = body.as_object_mut().unwrap();
    o.entry("region").or_insert(json!("us-east"));
    o.entry("type").or_insert(json!("g6-nanode-1"));
    // Deployed from an image, as users create them (an instance boots by default only then).
    o.entry("image").or_insert(json!("linode/debian12"));
    o.entry("root_pass").or_insert(json!("Netns-Test-Pass-42"));
    let r = api.post("/linode/instances", body).await;
    let id = r.ok()["id"].as_i64().unwrap();
    wait_status(api, id, "running").await
}

pub async fn wait_status(api: &Api, id: i64, status: &str) -> Value {
    eventually(60, &format!("instance {id} {status}"), || async move {
        let r = api.get(&format!("/linode/instances/{id}")).await;
        (r.ok()["status"] == status).then(|| r.ok().clone())
    })
    .await
}

/// The namespace of instance `id` (one server runs at a time).
pub fn ns_of(id: i64) -> String {
    let out = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
    let text = String::from_utf8_lossy(&out.stdout);
    let suffix = format!("-i{id}");
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .find(|n| n.starts_with("nubis") && n.ends_with(&suffix))
        .unwrap_or_else(|| panic!("no namespace for instance {id} in:\n{text}"))
        .to_string()
}

/// Runs a command in instance `id`'s network namespace; (success, stdout).
pub fn in_ns(id: i64, args: &[&str]) -> (bool, String) {
    let out = Command::new("ip").args(["netns", "exec", &ns_of(id)]).args(args).output().expect("ip netns exec");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// An HTTP GET from instance `id`'s namespace: the status code, or None when nothing answered.
pub fn get_from(id: i64, url: &str, headers: &[(&str, &str)]) -> Option<(u16, String)> {
    let hdrs: Vec<String> = headers.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    let script = format!(
        "import urllib.request, urllib.error, sys\n\
         req = urllib.request.Request({url:?}, headers={{{}}})\n\
         try:\n    r = urllib.request.urlopen(req, timeout=2); print(r.status); print(r.read().decode())\n\
         except urllib.error.HTTPError as e:\n    print(e.code); print(e.read().decode())\n\
         except Exception as e:\n    sys.exit(1)\n",
        hdrs.join(", ")
    );
    let (ok, out) = in_ns(id, &["python3", "-c", &script]);
    if !ok {
        return None;
    }
    let (code, body) = out.split_once('\n')?;
    Some((code.trim().parse().ok()?, body.trim().to_string()))
}

/// An HTTP GET from the host to one of nubis's addresses (198.18.0.0/15 or the private pool).
pub async fn host_get(url: &str) -> Option<String> {
    let host = url.trim_start_matches("http://").split(['/', ':']).next().unwrap_or_default();
    let ip: std::net::Ipv4Addr = host.parse().expect("an IPv4 address");
    let o = ip.octets();
    assert!(o[0] == 198 && (o[1] == 18 || o[1] == 19) || o[0] == 192 && o[1] == 168, "not a nubis address: {ip}");
    let c = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(2)).build().unwrap();
    let r = c.get(url).send().await.ok()?;
    r.text().await.ok().map(|t| t.trim().to_string())
}

/// The private IPv4 address of an instance record.
pub fn private_of(inst: &Value) -> String {
    inst["ipv4"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|a| a.starts_with("192.168."))
        .unwrap()
        .into()
}

/// A balancer on port 80 in front of `nodes` (address strings), with a 2 s HTTP check.
pub async fn balancer(api: &Api, nodes: &[String]) -> (i64, i64, String) {
    let nodes: Vec<Value> = nodes
        .iter()
        .enumerate()
        .map(|(i, a)| json!({ "label": format!("node-{i}"), "address": format!("{a}:80") }))
        .collect();
    let r = api
        .post(
            "/nodebalancers",
            json!({ "region": "us-east", "label": crate::support::unique("lb"), "configs": [{
                "port": 80, "protocol": "http", "check": "http", "check_path": "/",
                "check_interval": 2, "check_timeout": 1, "check_attempts": 1, "nodes": nodes,
            }]}),
        )
        .await;
    let b = r.ok().clone();
    let id = b["id"].as_i64().unwrap();
    let configs = api.get(&format!("/nodebalancers/{id}/configs")).await;
    let config = configs.ok()["data"][0]["id"].as_i64().unwrap();
    (id, config, b["ipv4"].as_str().unwrap().to_string())
}

/// Waits until the config's nodes are `up` up and `down` down.
pub async fn wait_nodes(api: &Api, lb: i64, config: i64, up: i64, down: i64) {
    eventually(30, &format!("nodes_status up {up}, down {down}"), || async move {
        let r = api.get(&format!("/nodebalancers/{lb}/configs/{config}")).await;
        let s = &r.ok()["nodes_status"];
        (s["up"] == up && s["down"] == down).then_some(())
    })
    .await
}

/// The console log of an instance.
pub fn console(server: &TestServer, id: i64) -> String {
    let (ok, out, err) = server.admin(&["instance", "console", &id.to_string()]);
    assert!(ok, "admin instance console failed: {err}");
    out
}
