//! A crash of `nubis serve` with running instances: after the restart the host matches the
//! database again.

use serde_json::{Value, json};

use crate::common::*;
use crate::support::eventually;

fn addresses(id: i64, dev: &str) -> Vec<String> {
    let (_, out) = in_ns(id, &["ip", "-j", "addr", "show", "dev", dev]);
    let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    let mut a: Vec<String> = v[0]["addr_info"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter(|x| x["family"] == "inet")
                .map(|x| x["local"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    a.sort();
    a
}

#[tokio::test]
async fn after_kill_9_and_a_restart_namespaces_addresses_rules_and_processes_match_the_database() {
    let _sweep = Sweeper::new();
    let mut server = server().await;
    let api = server.api();
    let ud = http_server_user_data(80);
    let a = instance(&api, json!({ "label": "keep-a", "private_ip": true, "metadata": { "user_data": ud } })).await;
    let b = instance(&api, json!({ "label": "keep-b" })).await;
    let (ida, idb) = (a["id"].as_i64().unwrap(), b["id"].as_i64().unwrap());
    api.post(
        "/networking/firewalls",
        json!({ "label": "keep-fw", "devices": { "linodes": [idb] }, "rules": {
            "inbound_policy": "DROP", "outbound_policy": "ACCEPT", "inbound": [] } }),
    )
    .await
    .ok();
    let mut want_a: Vec<String> =
        a["ipv4"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    want_a.sort();
    eventually(10, "addresses of keep-a", || async { (addresses(ida, "eth0") == want_a).then_some(()) }).await;
    eventually(10, "the firewall of keep-b", || async {
        in_ns(idb, &["nft", "list", "ruleset"]).1.contains("chain input").then_some(())
    })
    .await;
    let public = a["ipv4"][0].as_str().unwrap().to_string();
    let url = format!("http://{public}/");
    eventually(30, "keep-a serving", || async { host_get(&url).await.filter(|b| b == "I am keep-a") }).await;

    server.kill9();
    // The host drifts while nubis is down: an address and a rule table lost, a stray namespace.
    let ns_a = ns_of(ida);
    let stray = format!("{}-i999999", ns_a.rsplit_once("-i").unwrap().0);
    assert!(
        std::process::Command::new("ip")
            .args(["-n", &ns_a, "addr", "flush", "dev", "eth0"])
            .status()
            .unwrap()
            .success()
    );
    assert!(in_ns(idb, &["nft", "delete", "table", "inet", "nubis"]).0);
    assert!(std::process::Command::new("ip").args(["netns", "add", &stray]).status().unwrap().success());
    // The instances' processes outlived the server.
    assert_eq!(host_get(&url).await, None, "the address was flushed");

    server.restart();
    eventually(15, "addresses of keep-a again", || async { (addresses(ida, "eth0") == want_a).then_some(()) }).await;
    eventually(15, "the firewall of keep-b again", || async {
        in_ns(idb, &["nft", "list", "ruleset"]).1.contains("chain input").then_some(())
    })
    .await;
    eventually(15, "the stray namespace removed", || async {
        let out = std::process::Command::new("ip").args(["netns", "list"]).output().unwrap();
        (!String::from_utf8_lossy(&out.stdout).contains(&stray)).then_some(())
    })
    .await;
    // The same init still serves: the user data did not run again, its server was never stopped.
    assert_eq!(host_get(&url).await.as_deref(), Some("I am keep-a"));
    let log = console(&server, ida);
    assert_eq!(log.matches("serving on 80").count(), 1, "{log}");
    assert_eq!(api.get(&format!("/linode/instances/{ida}")).await.ok()["status"], "running");
}
